// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * proto/udp.c - UDP-lite: connectionless.  Going down, the message's
 * address (struct exp_proto_addr) becomes an 8-byte UDP header (source
 * port, destination port, length, RFC 1071 checksum of header and
 * payload; no pseudo-header).  Coming up, the length and checksum are
 * checked and the header becomes the receiver's address again.  Messages
 * are independent: any number of threads, no order kept between them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/modules.h>

#include "proto/proto.h"

struct udp {
	struct exp_proto_common c;
	struct exp_proto_udp_cfg cfg;
};

static int udp_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct udp *u = (struct udp *)exp_proto_of(t);
	unsigned char hdr[EXP_PROTO_UDP_HLEN];
	struct exp_proto_addr a;
	struct asx_msg *orig = m;
	const unsigned char *p;
	bool inplace;
	size_t len;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len < EXP_PROTO_ADDR_LEN)
		return EXP_PROTO_COUNT(&u->c, short_drop, 1), -EINVAL;
	len -= EXP_PROTO_ADDR_LEN;
	if (len > 65535 - EXP_PROTO_UDP_HLEN - EXP_PROTO_IP_HLEN)
		return -EMSGSIZE;
	p = exp_proto_pull(m, EXP_PROTO_ADDR_LEN);
	if (!p)
		return -ENOMEM;
	a = exp_proto_get_addr(p);
	m->rd += EXP_PROTO_ADDR_LEN;
	exp_proto_udp_put(hdr, a.lport, a.rport, (uint16_t)(len + EXP_PROTO_UDP_HLEN));
	r = exp_proto_push_hdr(&m, hdr, sizeof(hdr));
	if (r) {
		m->rd -= EXP_PROTO_ADDR_LEN;
		return r;
	}
	if (!u->cfg.no_cksum) {
		uint16_t ck = asx_msg_cksum(m);

		if (ck == 0)
			ck = 0xffff;	/* 0 means "no checksum" */
		memcpy(m->rd + 6, &ck, 2);
	}
	inplace = m == orig;
	r = asx_task_put_next(t, m, dl);
	if (r) {
		exp_proto_pop_hdr(&m, orig, sizeof(hdr));
		m->rd -= EXP_PROTO_ADDR_LEN;
		if (inplace)	/* the header overwrote the address */
			exp_proto_put_addr(m->rd, a);
		return r;
	}
	EXP_PROTO_COUNT(&u->c, down, 1);
	EXP_PROTO_COUNT(&u->c, down_bytes, len);
	return 0;
}

static int udp_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct udp *u = (struct udp *)exp_proto_of(t);
	unsigned char hdr[EXP_PROTO_UDP_HLEN], addr[EXP_PROTO_ADDR_LEN];
	struct asx_msg *orig = m;
	unsigned char *p;
	size_t len, ulen;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len < EXP_PROTO_UDP_HLEN)
		return EXP_PROTO_DROP(&u->c, short_drop, m);
	p = exp_proto_pull(m, EXP_PROTO_UDP_HLEN);
	if (!p)
		return EXP_PROTO_DROP(&u->c, nomem, m);
	memcpy(hdr, p, sizeof(hdr));
	ulen = (size_t)(hdr[4] << 8 | hdr[5]);
	if (ulen < EXP_PROTO_UDP_HLEN || ulen > len)
		return EXP_PROTO_DROP(&u->c, bad_len, m);
	if (ulen < len)
		exp_proto_trim(m, ulen);
	if (!u->cfg.rx_cksum_done && (hdr[6] | hdr[7]) && asx_msg_cksum(m) != 0)
		return EXP_PROTO_DROP(&u->c, bad_cksum, m);
	/* the header becomes the receiver's address: (dport, sport) */
	exp_proto_put_addr(addr, (struct exp_proto_addr){
		(uint16_t)(hdr[2] << 8 | hdr[3]), (uint16_t)(hdr[0] << 8 | hdr[1]) });
	if (exp_proto_replace_hdr(&m, sizeof(hdr), addr, sizeof(addr)))
		return EXP_PROTO_DROP(&u->c, nomem, m);
	r = asx_task_put_next(t, m, dl);
	if (r) {
		exp_proto_restore_hdr(&m, orig, sizeof(hdr), hdr, sizeof(addr));
		return r;
	}
	EXP_PROTO_COUNT(&u->c, up, 1);
	EXP_PROTO_COUNT(&u->c, up_bytes, ulen - EXP_PROTO_UDP_HLEN);
	return 0;
}

static const struct asx_task_ops udp_wr = { .open = exp_proto_open, .put = udp_wr_put };
static const struct asx_task_ops udp_rd = { .open = exp_proto_open, .put = udp_rd_put };

int exp_proto_udp_create(struct asx_module **out, const char *name,
			 const struct exp_proto_udp_cfg *cfg)
{
	static const struct exp_proto_udp_cfg dflt;
	struct udp *u = calloc(1, sizeof(*u));
	int r;

	if (!u)
		return -ENOMEM;
	u->c.magic = EXP_PROTO_MAGIC;
	u->c.kind = EXP_PROTO_UDP;
	u->cfg = cfg ? *cfg : dflt;
	u->c.svc_threads = u->cfg.svc_threads;
	r = exp_proto_module_new(out, NULL, name, &udp_wr, &udp_rd, u, free);
	if (r)
		free(u);
	return r;
}
