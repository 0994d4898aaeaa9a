// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * proto/dlp.c - the data-link Module: a 14-byte Ethernet header
 * (destination, source, ethertype 0x0800) added going down, checked and
 * stripped coming up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

struct dlp {
	struct exp_proto_common c;
	struct exp_proto_dlp_cfg cfg;
};

static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

static int dlp_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct dlp *d = (struct dlp *)exp_proto_of(t);
	unsigned char hdr[EXP_PROTO_ETH_HLEN];
	size_t len;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	exp_proto_eth_put(hdr, d->cfg.peer, d->cfg.mac, EXP_PROTO_ETH_IP);
	return exp_proto_send(t, &d->c, m, hdr, sizeof(hdr), len, dl);
}

static int dlp_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct dlp *d = (struct dlp *)exp_proto_of(t);
	const unsigned char *h;
	size_t len;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len < EXP_PROTO_ETH_HLEN)
		return EXP_PROTO_DROP(&d->c, short_drop, m);
	h = exp_proto_pull(m, EXP_PROTO_ETH_HLEN);
	if (!h)
		return EXP_PROTO_DROP(&d->c, nomem, m);
	if (memcmp(h, d->cfg.mac, 6) && memcmp(h, bcast, 6))
		return EXP_PROTO_DROP(&d->c, not_mine, m);
	if (h[12] != EXP_PROTO_ETH_IP >> 8 || h[13] != (EXP_PROTO_ETH_IP & 0xff))
		return EXP_PROTO_DROP(&d->c, bad_version, m);
	m->rd += EXP_PROTO_ETH_HLEN;
	r = asx_task_put_next(t, m, dl);
	if (r) {
		m->rd -= EXP_PROTO_ETH_HLEN;
		return r;
	}
	EXP_PROTO_COUNT(&d->c, up, 1);
	EXP_PROTO_COUNT(&d->c, up_bytes, len - EXP_PROTO_ETH_HLEN);
	return 0;
}

static const struct asx_task_ops dlp_wr = { .open = exp_proto_open, .put = dlp_wr_put };
static const struct asx_task_ops dlp_rd = { .open = exp_proto_open, .put = dlp_rd_put };

int exp_proto_dlp_create(struct asx_module **out, const char *name,
			 const struct exp_proto_dlp_cfg *cfg)
{
	struct dlp *d;
	int r;

	if (!cfg)
		return -EINVAL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->c.magic = EXP_PROTO_MAGIC;
	d->c.kind = EXP_PROTO_DLP;
	d->c.svc_threads = cfg->svc_threads;
	d->cfg = *cfg;
	r = exp_proto_module_new(out, NULL, name, &dlp_wr, &dlp_rd, d, free);
	if (r)
		free(d);
	return r;
}
