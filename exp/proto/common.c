// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * proto/common.c - what the protocol Modules share: the one Module
 * constructor wrapper, header encoding, message helpers, statistics.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/modules.h>

#include "proto/proto.h"

/* ---------------------------------------------------------------- the constructor */

int exp_proto_module_new(struct asx_module **out, const char *stock, const char *name,
			 const struct asx_task_ops *wr, const struct asx_task_ops *rd,
			 void *arg, void (*dtor)(void *arg))
{
	struct asx_module *mod = NULL;
	int r;

	if (!out || !name)
		return -EINVAL;
	*out = NULL;
	if (!stock)
		r = asx_module_create(&mod, name, wr, rd, arg);
	else if (!strcmp(stock, "pass"))
		r = asx_mod_pass(&mod, name);
	else if (!strcmp(stock, "counter"))
		r = asx_mod_counter(&mod, name);
	else if (!strcmp(stock, "loopback"))
		r = asx_mod_loopback(&mod, name);
	else if (!strcmp(stock, "cksum"))
		r = asx_mod_cksum(&mod, name);
	else if (!strcmp(stock, "framer"))
		r = asx_mod_framer(&mod, name);
	else
		return -EINVAL;
	if (r)
		return r;
	if (!stock && dtor)
		asx_module_set_dtor(mod, dtor);
	*out = mod;
	return 0;
}

int exp_proto_open(struct asx_task *t, int argc, char **argv)
{
	struct exp_proto_common *c = exp_proto_of(t);

	(void)argc;
	(void)argv;
	return c->svc_threads > 0 ? asx_task_activate(t, c->svc_threads) : 0;
}

void *exp_proto_arg(struct asx_module *mod, enum exp_proto_kind kind)
{
	struct exp_proto_common *c = mod ? asx_module_arg(mod) : NULL;

	return c && c->magic == EXP_PROTO_MAGIC && c->kind == kind ? c : NULL;
}

/* ---------------------------------------------------------------- statistics */

int exp_proto_stats(struct asx_module *mod, struct exp_proto_stats *out)
{
	struct exp_proto_common *c = mod ? asx_module_arg(mod) : NULL;
	const uint64_t *src;
	uint64_t *dst = (uint64_t *)out;

	if (!c || c->magic != EXP_PROTO_MAGIC || !out)
		return -EINVAL;
	src = (const uint64_t *)&c->st;
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	return 0;
}

uint64_t exp_proto_drops(const struct exp_proto_stats *s)
{
	return s->short_drop + s->bad_version + s->bad_len + s->bad_cksum + s->not_mine +
	       s->no_conn + s->nomem + s->dup + s->ooo_drop + s->out_of_window;
}

/* ---------------------------------------------------------------- encoding */

static void be16(unsigned char *p, uint16_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static void be32(unsigned char *p, uint32_t v)
{
	be16(p, (uint16_t)(v >> 16));
	be16(p + 2, (uint16_t)v);
}

static uint16_t rd16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)rd16(p) << 16 | rd16(p + 2);
}

void exp_proto_put_addr(void *p, struct exp_proto_addr a)
{
	be16(p, a.lport);
	be16((unsigned char *)p + 2, a.rport);
}

struct exp_proto_addr exp_proto_get_addr(const void *p)
{
	return (struct exp_proto_addr){ rd16(p), rd16((const unsigned char *)p + 2) };
}

void exp_proto_eth_put(void *p, const uint8_t dst[6], const uint8_t src[6], uint16_t type)
{
	unsigned char *b = p;

	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	be16(b + 12, type);
}

void exp_proto_ip_put(void *p, const struct exp_proto_ip *h)
{
	unsigned char *b = p;
	uint16_t ck;

	b[0] = 0x45;			/* version 4, IHL 5 words */
	b[1] = h->tos;
	be16(b + 2, h->len);
	be16(b + 4, h->id);
	be16(b + 6, 0x4000);		/* DF, offset 0: no fragments */
	b[8] = h->ttl;
	b[9] = h->proto;
	be16(b + 10, 0);
	be32(b + 12, h->src);
	be32(b + 16, h->dst);
	ck = asx_inet_cksum(b, EXP_PROTO_IP_HLEN);
	memcpy(b + 10, &ck, 2);
}

int exp_proto_ip_parse(const void *p, size_t avail, struct exp_proto_ip *h)
{
	const unsigned char *b = p;

	if (avail < EXP_PROTO_IP_HLEN)
		return -EMSGSIZE;
	if (b[0] != 0x45 || (rd16(b + 6) & 0x3fff))	/* no options, no fragments */
		return -EPROTO;
	h->len = rd16(b + 2);
	if (h->len < EXP_PROTO_IP_HLEN || h->len > avail)
		return -EMSGSIZE;
	if (asx_inet_cksum(b, EXP_PROTO_IP_HLEN) != 0)
		return -EBADMSG;
	h->tos = b[1];
	h->id = rd16(b + 4);
	h->ttl = b[8];
	h->proto = b[9];
	h->src = rd32(b + 12);
	h->dst = rd32(b + 16);
	return 0;
}

void exp_proto_udp_put(void *p, uint16_t sport, uint16_t dport, uint16_t len)
{
	unsigned char *b = p;

	be16(b, sport);
	be16(b + 2, dport);
	be16(b + 4, len);
	be16(b + 6, 0);
}

void exp_proto_tcp_put(void *p, const struct exp_proto_tcp *h)
{
	unsigned char *b = p;

	be16(b, h->sport);
	be16(b + 2, h->dport);
	be32(b + 4, h->seq);
	be32(b + 8, h->ack);
	b[12] = 5 << 4;			/* data offset: 5 words */
	b[13] = h->flags;
	be16(b + 14, h->win);
	be16(b + 16, 0);		/* checksum: the caller's */
	be16(b + 18, 0);
}

void exp_proto_tcp_parse(const void *p, struct exp_proto_tcp *h)
{
	const unsigned char *b = p;

	h->sport = rd16(b);
	h->dport = rd16(b + 2);
	h->seq = rd32(b + 4);
	h->ack = rd32(b + 8);
	h->flags = b[13];
	h->win = rd16(b + 14);
}

/* ---------------------------------------------------------------- messages */

int exp_proto_push_hdr(struct asx_msg **mp, const void *hdr, size_t len)
{
	struct asx_msg *m = *mp, *h;

	if (asx_msg_headroom(m) >= len && !asx_msg_shared(m))
		return asx_msg_prepend(m, hdr, len);
	h = asx_msg_alloc(len + EXP_PROTO_HEADROOM, m->type);
	if (!h)
		return -ENOMEM;
	asx_msg_reserve(h, EXP_PROTO_HEADROOM);
	asx_msg_append(h, hdr, len);
	h->band = m->band;
	h->cont = m;
	*mp = h;
	return 0;
}

unsigned char *exp_proto_pull(struct asx_msg *m, size_t len)
{
	if (asx_msg_block_len(m) < len && asx_msg_pullup(m, len))
		return NULL;
	return m->rd;
}

void exp_proto_trim(struct asx_msg *m, size_t len)
{
	for (; m; m = m->cont) {
		size_t bl = asx_msg_block_len(m);

		if (bl >= len) {
			m->wr = m->rd + len;
			asx_msg_free_chain(m->cont);
			m->cont = NULL;
			return;
		}
		len -= bl;
	}
}

void exp_proto_pop_hdr(struct asx_msg **mp, struct asx_msg *orig, size_t len)
{
	struct asx_msg *h = *mp;

	if (h == orig) {
		orig->rd += len;
		return;
	}
	h->cont = NULL;
	asx_msg_free(h);
	*mp = orig;
}

int exp_proto_send(struct asx_task *t, struct exp_proto_common *c, struct asx_msg *m,
		   const void *hdr, size_t hlen, size_t len, const struct timespec *dl)
{
	struct asx_msg *orig = m;
	int r = exp_proto_push_hdr(&m, hdr, hlen);

	if (r)
		return r;
	r = asx_task_put_next(t, m, dl);
	if (r) {
		exp_proto_pop_hdr(&m, orig, hlen);
		return r;
	}
	EXP_PROTO_COUNT(c, down, 1);
	EXP_PROTO_COUNT(c, down_bytes, len);
	return 0;
}

int exp_proto_replace_hdr(struct asx_msg **mp, size_t hlen, const void *nh, size_t nlen)
{
	struct asx_msg *m = *mp;
	int r;

	m->rd += hlen;
	r = exp_proto_push_hdr(mp, nh, nlen);
	if (r)
		m->rd -= hlen;
	return r;
}

void exp_proto_restore_hdr(struct asx_msg **mp, struct asx_msg *orig, size_t hlen,
			   const void *saved, size_t nlen)
{
	bool inplace = *mp == orig;

	exp_proto_pop_hdr(mp, orig, nlen);
	orig->rd -= hlen;
	if (inplace)		/* the new bytes overwrote part of the old */
		memcpy(orig->rd, saved, hlen);
}
