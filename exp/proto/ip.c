// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * proto/ip.c - IP-lite: a real 20-byte IPv4 header (no options, no
 * fragments) with its RFC 1071 header checksum, between one local and one
 * peer address for one transport protocol.
 */
#include <errno.h>
#include <stdlib.h>

#include "proto/proto.h"

struct ip {
	struct exp_proto_common c;
	struct exp_proto_ip_cfg cfg;
	uint32_t id;			/* atomic: next datagram id */
};

static int ip_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct ip *ip = (struct ip *)exp_proto_of(t);
	unsigned char hdr[EXP_PROTO_IP_HLEN];
	struct exp_proto_ip h = { 0 };
	size_t len;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len > 65535 - EXP_PROTO_IP_HLEN)
		return -EMSGSIZE;
	h.len = (uint16_t)(len + EXP_PROTO_IP_HLEN);
	h.id = (uint16_t)__atomic_fetch_add(&ip->id, 1, __ATOMIC_RELAXED);
	h.ttl = ip->cfg.ttl ? ip->cfg.ttl : 64;
	h.proto = ip->cfg.proto;
	h.src = ip->cfg.local;
	h.dst = ip->cfg.peer;
	exp_proto_ip_put(hdr, &h);
	return exp_proto_send(t, &ip->c, m, hdr, sizeof(hdr), len, dl);
}

static int ip_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct ip *ip = (struct ip *)exp_proto_of(t);
	struct exp_proto_ip h;
	const unsigned char *p;
	size_t len;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len < EXP_PROTO_IP_HLEN)
		return EXP_PROTO_DROP(&ip->c, short_drop, m);
	p = exp_proto_pull(m, EXP_PROTO_IP_HLEN);
	if (!p)
		return EXP_PROTO_DROP(&ip->c, nomem, m);
	r = exp_proto_ip_parse(p, len, &h);
	if (r == -EPROTO)
		return EXP_PROTO_DROP(&ip->c, bad_version, m);
	if (r == -EMSGSIZE)
		return EXP_PROTO_DROP(&ip->c, bad_len, m);
	if (r)
		return EXP_PROTO_DROP(&ip->c, bad_cksum, m);
	if (h.dst != ip->cfg.local || h.proto != ip->cfg.proto)
		return EXP_PROTO_DROP(&ip->c, not_mine, m);
	if (len > h.len)		/* link-layer padding */
		exp_proto_trim(m, h.len);
	m->rd += EXP_PROTO_IP_HLEN;
	r = asx_task_put_next(t, m, dl);
	if (r) {
		m->rd -= EXP_PROTO_IP_HLEN;
		return r;
	}
	EXP_PROTO_COUNT(&ip->c, up, 1);
	EXP_PROTO_COUNT(&ip->c, up_bytes, h.len - EXP_PROTO_IP_HLEN);
	return 0;
}

static const struct asx_task_ops ip_wr = { .open = exp_proto_open, .put = ip_wr_put };
static const struct asx_task_ops ip_rd = { .open = exp_proto_open, .put = ip_rd_put };

int exp_proto_ip_create(struct asx_module **out, const char *name,
			const struct exp_proto_ip_cfg *cfg)
{
	struct ip *ip;
	int r;

	if (!cfg || (cfg->proto != EXP_PROTO_IP_TCP && cfg->proto != EXP_PROTO_IP_UDP))
		return -EINVAL;
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		return -ENOMEM;
	ip->c.magic = EXP_PROTO_MAGIC;
	ip->c.kind = EXP_PROTO_IP;
	ip->c.svc_threads = cfg->svc_threads;
	ip->cfg = *cfg;
	r = exp_proto_module_new(out, NULL, name, &ip_wr, &ip_rd, ip, free);
	if (r)
		free(ip);
	return r;
}
