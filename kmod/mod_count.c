// SPDX-License-Identifier: GPL-2.0
/*
 * ASX module "count": counts the messages and bytes going each way.
 * ASX_STR_COUNT_GET answers with a struct asx_count_stats,
 * ASX_STR_COUNT_RESET zeroes the counters.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "asx_api.h"

struct count_priv {
	atomic64_t msgs[2];
	atomic64_t bytes[2];
};

static bool counted(const struct asx_msg *mp)
{
	return mp->type == ASX_M_DATA || mp->type == ASX_M_PROTO || mp->type == ASX_M_PCPROTO;
}

static void count_ioctl(struct asx_queue *q, struct asx_msg *mp)
{
	const struct asx_iocblk *ioc = (const struct asx_iocblk *)mp->rptr;
	struct count_priv *c = q->priv;
	struct asx_count_stats cs;
	struct asx_msg *data;
	int i;

	switch (ioc->cmd) {
	case ASX_STR_COUNT_GET:
		cs.rmsgs = atomic64_read(&c->msgs[ASX_SIDE_READ]);
		cs.rbytes = atomic64_read(&c->bytes[ASX_SIDE_READ]);
		cs.wmsgs = atomic64_read(&c->msgs[ASX_SIDE_WRITE]);
		cs.wbytes = atomic64_read(&c->bytes[ASX_SIDE_WRITE]);
		data = asx_ctlmsg(ASX_M_DATA, &cs, sizeof(cs), GFP_ATOMIC | __GFP_ACCOUNT);
		if (!data) {
			asx_iocnak(q, mp, ENOMEM);
			return;
		}
		asx_iocack(q, mp, 0, data);
		return;
	case ASX_STR_COUNT_RESET:
		for (i = 0; i < 2; i++) {
			atomic64_set(&c->msgs[i], 0);
			atomic64_set(&c->bytes[i], 0);
		}
		asx_iocack(q, mp, 0, NULL);
		return;
	}
	asx_putnext(q, mp);
}

static void count_put(struct asx_queue *q, struct asx_msg *mp)
{
	struct count_priv *c = q->priv;

	if (counted(mp)) {
		atomic64_inc(&c->msgs[q->side]);
		atomic64_add(asx_msgdsize(mp), &c->bytes[q->side]);
	} else if (mp->type == ASX_M_FLUSH) {
		asx_flush_msg(q, mp);
		return;
	} else if (mp->type == ASX_M_IOCTL && q->side == ASX_SIDE_WRITE &&
		   asx_blen(mp) >= sizeof(struct asx_iocblk) && !asx_ioc_transparent(mp)) {
		count_ioctl(q, mp);
		return;
	}
	asx_putnext(q, mp);
}

struct asx_modinfo asx_mod_count = {
	.name		= "count",
	.owner		= THIS_MODULE,
	.rinit		= { .put = count_put },
	.winit		= { .put = count_put },
	.priv_size	= sizeof(struct count_priv),
};
