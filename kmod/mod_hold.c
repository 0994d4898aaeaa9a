// SPDX-License-Identifier: GPL-2.0
/*
 * ASX module "hold", for tests: its write side holds every message from the
 * moment it is pushed until ASX_STR_HOLD_RELEASE, and again after
 * ASX_STR_HOLD_HOLD. Held messages fill its queue, so the flow control above
 * it can be driven deterministically. M_IOCTLs for other modules are held
 * too (so an STR times out). The read side passes messages on.
 * ASX_STR_HOLD_RELEASE acknowledges with the number of messages it held
 * (the STR's rval).
 *
 * Copyright (C) 2026 ASX developers
 */

#include "asx_api.h"

struct hold_priv {
	bool released;
};

static void hold_wput(struct asx_queue *q, struct asx_msg *mp)
{
	const struct asx_iocblk *ioc = (const struct asx_iocblk *)mp->rptr;
	struct hold_priv *h = q->priv;
	u32 held;

	switch (mp->type) {
	case ASX_M_FLUSH:
		asx_flush_msg(q, mp);
		return;
	case ASX_M_IOCTL:
		if (asx_blen(mp) < sizeof(*ioc))
			break;
		/* STR commands only: a transparent ioctl's number is the caller's */
		if (ioc->cmd == ASX_STR_HOLD_RELEASE && !asx_ioc_transparent(mp)) {
			spin_lock(&q->lock);
			held = q->nmsgs;
			spin_unlock(&q->lock);
			WRITE_ONCE(h->released, true);
			asx_iocack(q, mp, held, NULL);
			asx_qenable(q);
			return;
		}
		if (ioc->cmd == ASX_STR_HOLD_HOLD && !asx_ioc_transparent(mp)) {
			WRITE_ONCE(h->released, false);
			asx_iocack(q, mp, 0, NULL);
			return;
		}
		fallthrough;
	default:
		if (!READ_ONCE(h->released) || !asx_queue_idle(q) ||
		    !(asx_hipri(mp) || asx_bcanputnext(q, mp->band))) {
			asx_putq(q, mp);
			return;
		}
	}
	asx_putnext(q, mp);
}

static void hold_wsrv(struct asx_queue *q)
{
	struct hold_priv *h = q->priv;
	struct asx_msg *mp;

	while (READ_ONCE(h->released) && (mp = asx_getq(q))) {
		if (!asx_hipri(mp) && !asx_bcanputnext(q, mp->band)) {
			asx_putbq(q, mp);
			break;
		}
		asx_putnext(q, mp);
	}
}

static void hold_rput(struct asx_queue *q, struct asx_msg *mp)
{
	if (mp->type == ASX_M_FLUSH)
		asx_flush_msg(q, mp);
	else
		asx_putnext(q, mp);
}

struct asx_modinfo asx_mod_hold = {
	.name		= "hold",
	.owner		= THIS_MODULE,
	.rinit		= { .put = hold_rput },
	.winit		= { .put = hold_wput, .srv = hold_wsrv },
	.priv_size	= sizeof(struct hold_priv),
};
