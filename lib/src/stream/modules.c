// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * modules.c - the reusable Modules of asx/modules.h and the Internet
 * checksum.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/modules.h>
#include <asx/sync.h>

#include "core/compiler.h"
#include "stream/stream_impl.h"

enum mod_kind { KIND_COUNTER = 0x434e5452, KIND_FRAMER = 0x46524d52, KIND_CKSUM = 0x434b534d };

struct mod_state {
	enum mod_kind kind;
	uint64_t errors;		/* atomic */
	struct asx_counter cnt;		/* atomic fields */
	/* framer: read-side reassembly */
	struct asx_mutex lock;
	struct asx_msg *pend;		/* bytes not yet framed (atomic load for the fast path) */
	size_t pend_len;
};

static struct mod_state *state_of(struct asx_module *mod, enum mod_kind kind)
{
	struct mod_state *st = mod ? asx_module_arg(mod) : NULL;

	return st && st->kind == kind ? st : NULL;
}

static void state_free(void *arg)
{
	struct mod_state *st = arg;

	asx_msg_free_chain(st->pend);
	free(st);
}

static int make(struct asx_module **out, const char *name, const struct asx_task_ops *wr,
		const struct asx_task_ops *rd, enum mod_kind kind)
{
	struct mod_state *st;
	struct asx_module *mod;
	int r;

	if (!out)
		return -EINVAL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->kind = kind;
	asx_mutex_init(&st->lock);
	r = asx_module_create(&mod, name, wr, rd, st);
	if (r) {
		free(st);
		return r;
	}
	asx_module_set_dtor(mod, state_free);
	*out = mod;
	return 0;
}

uint64_t asx_mod_errors(struct asx_module *mod)
{
	struct mod_state *st = mod ? asx_module_arg(mod) : NULL;

	if (!st || (st->kind != KIND_FRAMER && st->kind != KIND_CKSUM))
		return 0;
	return __atomic_load_n(&st->errors, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- pass, loopback */

int asx_mod_pass(struct asx_module **out, const char *name)
{
	return asx_module_create(out, name, NULL, NULL, NULL);
}

int asx_mod_loopback(struct asx_module **out, const char *name)
{
	return asx_module_create(out, name, &asx__loop_wr_ops, NULL, NULL);
}

/* ---------------------------------------------------------------- counter */

/*
 * Counted before it is passed on, so that whoever has the message next
 * (a Module below, the reader at the head) finds it counted; taken back
 * if the next Module refuses it.
 */
static int count_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl,
		     uint64_t *msgs, uint64_t *bytes)
{
	size_t len = asx_msg_length(m);
	int r;

	__atomic_fetch_add(msgs, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(bytes, len, __ATOMIC_RELAXED);
	r = asx_task_put_next(t, m, dl);
	if (r) {
		__atomic_fetch_sub(msgs, 1, __ATOMIC_RELAXED);
		__atomic_fetch_sub(bytes, len, __ATOMIC_RELAXED);
	}
	return r;
}

static int counter_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct mod_state *st = asx_module_arg(asx_task_module(t));

	return count_put(t, m, dl, &st->cnt.wr_msgs, &st->cnt.wr_bytes);
}

static int counter_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct mod_state *st = asx_module_arg(asx_task_module(t));

	return count_put(t, m, dl, &st->cnt.rd_msgs, &st->cnt.rd_bytes);
}

static const struct asx_task_ops counter_wr_ops = { .put = counter_wr_put };
static const struct asx_task_ops counter_rd_ops = { .put = counter_rd_put };

int asx_mod_counter(struct asx_module **out, const char *name)
{
	return make(out, name, &counter_wr_ops, &counter_rd_ops, KIND_COUNTER);
}

int asx_mod_counter_read(struct asx_module *mod, struct asx_counter *c)
{
	struct mod_state *st = state_of(mod, KIND_COUNTER);

	if (!st || !c)
		return -EINVAL;
	c->wr_msgs = __atomic_load_n(&st->cnt.wr_msgs, __ATOMIC_RELAXED);
	c->wr_bytes = __atomic_load_n(&st->cnt.wr_bytes, __ATOMIC_RELAXED);
	c->rd_msgs = __atomic_load_n(&st->cnt.rd_msgs, __ATOMIC_RELAXED);
	c->rd_bytes = __atomic_load_n(&st->cnt.rd_bytes, __ATOMIC_RELAXED);
	return 0;
}

/* ---------------------------------------------------------------- prepend helper */

#define HDR_BLOCK 64	/* a chained header block: room for every layer's prefix */

/*
 * Put @len bytes in front of @m and hand it on; on failure undo it and
 * return the error (@m is then as it came).
 */
static int prepend_and_put(struct asx_task *t, struct asx_msg *m, const void *hdr, size_t len,
			   const struct timespec *dl)
{
	struct asx_msg *h;
	int r;

	if (asx_msg_headroom(m) >= len && !asx_msg_shared(m)) {
		asx_msg_prepend(m, hdr, len);
		r = asx_task_put_next(t, m, dl);
		if (r)
			asx_msg_consume(m, len);
		return r;
	}
	h = asx_msg_alloc(HDR_BLOCK, m->type);
	if (!h)
		return -ENOMEM;
	h->rd += HDR_BLOCK;
	h->wr = h->rd;
	asx_msg_prepend(h, hdr, len);
	h->band = m->band;
	h->cont = m;
	r = asx_task_put_next(t, h, dl);
	if (r) {
		h->cont = NULL;
		asx_msg_free(h);
	}
	return r;
}

/* ---------------------------------------------------------------- framer */

static inline uint32_t be32_get(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int framer_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	size_t len;
	unsigned char hdr[4];

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len > ASX_FRAMER_MAX)
		return -EMSGSIZE;
	hdr[0] = (unsigned char)(len >> 24);
	hdr[1] = (unsigned char)(len >> 16);
	hdr[2] = (unsigned char)(len >> 8);
	hdr[3] = (unsigned char)len;
	return prepend_and_put(t, m, hdr, sizeof(hdr), dl);
}

/* Drop the first @n bytes of the chain *@pp, freeing emptied blocks. */
static void chain_advance(struct asx_msg **pp, size_t n)
{
	while (n && *pp) {
		struct asx_msg *b = *pp;
		size_t bl = asx_msg_block_len(b);

		if (bl > n) {
			b->rd += n;
			return;
		}
		n -= bl;
		*pp = b->cont;
		asx_msg_free(b);
	}
	/* drop empty leading blocks so the fast path sees NULL */
	while (*pp && !asx_msg_block_len(*pp) && (*pp)->cont) {
		struct asx_msg *b = *pp;

		*pp = b->cont;
		asx_msg_free(b);
	}
	if (*pp && !asx_msg_length(*pp)) {
		asx_msg_free_chain(*pp);
		*pp = NULL;
	}
}

static int deframer_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct mod_state *st = asx_module_arg(asx_task_module(t));
	unsigned char hdr[4];
	size_t len;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	/* Fast path: exactly one frame, nothing pending. */
	if (!__atomic_load_n(&st->pend, __ATOMIC_ACQUIRE) && asx_msg_block_len(m) >= 4 &&
	    len == 4 + (size_t)be32_get(m->rd)) {
		m->rd += 4;
		if (!asx_msg_block_len(m) && m->cont) {
			/* the prefix had a block of its own (no headroom): drop it */
			struct asx_msg *rest = m->cont;

			m->cont = NULL;
			r = asx_task_put_next(t, rest, dl);
			if (r) {
				m->cont = rest;
				m->rd -= 4;
				return r;
			}
			asx_msg_free(m);
			return 0;
		}
		r = asx_task_put_next(t, m, dl);
		if (r)
			m->rd -= 4;
		return r;
	}
	asx_mutex_lock(&st->lock);
	if (st->pend)
		asx_msg_link(st->pend, m);
	else
		__atomic_store_n(&st->pend, m, __ATOMIC_RELEASE);
	st->pend_len += len;
	while (st->pend_len >= 4) {
		struct asx_msg *out;
		uint32_t n;

		asx_msg_read(st->pend, 0, hdr, 4);
		n = be32_get(hdr);
		if (n > ASX_FRAMER_MAX) {
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
			asx_msg_free_chain(st->pend);
			__atomic_store_n(&st->pend, NULL, __ATOMIC_RELEASE);
			st->pend_len = 0;
			break;
		}
		if (st->pend_len < 4 + (size_t)n)
			break;
		out = asx_msg_alloc(n, ASX_MSG_DATA);
		if (!out) {
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
		} else {
			asx_msg_read(st->pend, 4, out->wr, n);
			out->wr += n;
			out->band = st->pend->band;
		}
		{
			struct asx_msg *rest = st->pend;

			chain_advance(&rest, 4 + (size_t)n);
			__atomic_store_n(&st->pend, rest, __ATOMIC_RELEASE);
		}
		st->pend_len -= 4 + (size_t)n;
		/* delivered under the lock so that frames keep their order */
		if (out && asx_task_put_next(t, out, dl)) {
			asx_msg_free_chain(out);
			__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
		}
	}
	asx_mutex_unlock(&st->lock);
	return 0;
}

static const struct asx_task_ops framer_wr_ops = { .put = framer_wr_put };
static const struct asx_task_ops deframer_rd_ops = { .put = deframer_rd_put };

int asx_mod_framer(struct asx_module **out, const char *name)
{
	return make(out, name, &framer_wr_ops, &deframer_rd_ops, KIND_FRAMER);
}

/* ---------------------------------------------------------------- checksum */

/* One's complement sum of @len bytes as 16-bit words in memory order, folded to 16 bits. */
static uint32_t sum16(const unsigned char *p, size_t len)
{
	uint64_t a = 0, b = 0, c = 0, d = 0, s;
	uint32_t w0, w1, w2, w3;

	while (len >= 16) {
		memcpy(&w0, p, 4);
		memcpy(&w1, p + 4, 4);
		memcpy(&w2, p + 8, 4);
		memcpy(&w3, p + 12, 4);
		a += w0;
		b += w1;
		c += w2;
		d += w3;
		p += 16;
		len -= 16;
	}
	s = (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32) +
	    (c & 0xffffffffu) + (c >> 32) + (d & 0xffffffffu) + (d >> 32);
	while (len >= 2) {
		uint16_t h;

		memcpy(&h, p, 2);
		s += h;
		p += 2;
		len -= 2;
	}
	if (len) {
		/* the last byte pads with a zero byte after it */
		uint16_t h = 0;

		memcpy(&h, p, 1);
		s += h;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint32_t)s;
}

uint16_t asx_inet_cksum(const void *buf, size_t len)
{
	return (uint16_t)~sum16(buf, len);
}

uint16_t asx_msg_cksum(const struct asx_msg *m)
{
	uint32_t s = 0, part;
	size_t off = 0;

	for (; m; m = m->cont) {
		size_t bl = asx_msg_block_len(m);

		part = sum16(m->rd, bl);
		if (off & 1)	/* this block's bytes sit in the other half of each word */
			part = ((part & 0xff) << 8) | (part >> 8);
		s += part;
		off += bl;
	}
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static int cksum_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	uint16_t ck;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	ck = asx_msg_cksum(m);
	return prepend_and_put(t, m, &ck, sizeof(ck), dl);
}

static int cksum_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct mod_state *st = asx_module_arg(asx_task_module(t));
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	if (asx_msg_length(m) < 2 || asx_msg_cksum(m) != 0 ||
	    (asx_msg_block_len(m) < 2 && asx_msg_pullup(m, 2))) {
		__atomic_fetch_add(&st->errors, 1, __ATOMIC_RELAXED);
		asx_msg_free_chain(m);
		return 0;
	}
	m->rd += 2;
	r = asx_task_put_next(t, m, dl);
	if (r)
		m->rd -= 2;
	return r;
}

static const struct asx_task_ops cksum_wr_ops = { .put = cksum_wr_put };
static const struct asx_task_ops cksum_rd_ops = { .put = cksum_rd_put };

int asx_mod_cksum(struct asx_module **out, const char *name)
{
	return make(out, name, &cksum_wr_ops, &cksum_rd_ops, KIND_CKSUM);
}
