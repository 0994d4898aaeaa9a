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
	struct asx__proto_common c;
	struct asx__proto_ip_cfg cfg;
	uint32_t id;			/* atomic: next datagram id */
};

static int ip_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct ip *ip = (struct ip *)asx__proto_of(t);
	unsigned char hdr[ASX__PROTO_IP_HLEN];
	struct asx__proto_ip h = { 0 };
	size_t len;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len > 65535 - ASX__PROTO_IP_HLEN)
		return -EMSGSIZE;
	h.len = (uint16_t)(len + ASX__PROTO_IP_HLEN);
	h.id = (uint16_t)__atomic_fetch_add(&ip->id, 1, __ATOMIC_RELAXED);
	h.ttl = ip->cfg.ttl ? ip->cfg.ttl : 64;
	h.proto = ip->cfg.proto;
	h.src = ip->cfg.local;
	h.dst = ip->cfg.peer;
	asx__proto_ip_put(hdr, &h);
	return asx__proto_send(t, &ip->c, m, hdr, sizeof(hdr), len, dl);
}

static int ip_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct ip *ip = (struct ip *)asx__proto_of(t);
	struct asx__proto_ip h;
	const unsigned char *p;
	size_t len;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len < ASX__PROTO_IP_HLEN)
		return ASX__PROTO_DROP(&ip->c, short_drop, m);
	p = asx__proto_pull(m, ASX__PROTO_IP_HLEN);
	if (!p)
		return ASX__PROTO_DROP(&ip->c, nomem, m);
	r = asx__proto_ip_parse(p, len, &h);
	if (r == -EPROTO)
		return ASX__PROTO_DROP(&ip->c, bad_version, m);
	if (r == -EMSGSIZE)
		return ASX__PROTO_DROP(&ip->c, bad_len, m);
	if (r)
		return ASX__PROTO_DROP(&ip->c, bad_cksum, m);
	if (h.dst != ip->cfg.local || h.proto != ip->cfg.proto)
		return ASX__PROTO_DROP(&ip->c, not_mine, m);
	if (len > h.len)		/* link-layer padding */
		asx__proto_trim(m, h.len);
	m->rd += ASX__PROTO_IP_HLEN;
	r = asx_task_put_next(t, m, dl);
	if (r) {
		m->rd -= ASX__PROTO_IP_HLEN;
		return r;
	}
	ASX__PROTO_COUNT(&ip->c, up, 1);
	ASX__PROTO_COUNT(&ip->c, up_bytes, h.len - ASX__PROTO_IP_HLEN);
	return 0;
}

static const struct asx_task_ops ip_wr = { .open = asx__proto_open, .put = ip_wr_put };
static const struct asx_task_ops ip_rd = { .open = asx__proto_open, .put = ip_rd_put };

int asx__proto_ip_create(struct asx_module **out, const char *name,
			 const struct asx__proto_ip_cfg *cfg)
{
	struct ip *ip;
	int r;

	if (!cfg || (cfg->proto != ASX__PROTO_IP_TCP && cfg->proto != ASX__PROTO_IP_UDP))
		return -EINVAL;
	ip = calloc(1, sizeof(*ip));
	if (!ip)
		return -ENOMEM;
	ip->c.magic = ASX__PROTO_MAGIC;
	ip->c.kind = ASX__PROTO_IP;
	ip->c.svc_threads = cfg->svc_threads;
	ip->cfg = *cfg;
	r = asx__proto_module_new(out, NULL, name, &ip_wr, &ip_rd, ip, free);
	if (r)
		free(ip);
	return r;
}
