// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdr_mem.c - XDR streams over memory: a caller's bounded buffer, a
 * growing heap buffer, and message-block chains (asx/msg.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/msg.h>
#include <asx/xdr.h>
#include "core/compiler.h"
#include "xdr/xdr_internal.h"

/* ---- bounded buffer ---- */

static int mem_enc_next(struct asx_xdr *x, size_t want)
{
	return -EMSGSIZE;
}

static int mem_dec_next(struct asx_xdr *x, size_t want)
{
	return -EBADMSG;
}

static const struct asx_xdr_ops mem_enc_ops = { .next = mem_enc_next };
static const struct asx_xdr_ops mem_dec_ops = { .next = mem_dec_next };

void asx_xdr_mem_encoder(struct asx_xdr *x, void *buf, size_t len)
{
	unsigned char *b = buf;

	asx__xdr_init(x, &mem_enc_ops, ASX_XDR_ENCODE, b, b + len, 0);
	ASX__XDR_T(x)->mem.buf = b;
	ASX__XDR_T(x)->mem.cap = len;
}

void asx_xdr_mem_decoder(struct asx_xdr *x, const void *buf, size_t len)
{
	unsigned char *b = (unsigned char *)buf;

	asx__xdr_init(x, &mem_dec_ops, ASX_XDR_DECODE, b, b + len, 0);
	ASX__XDR_T(x)->mem.buf = b;
	ASX__XDR_T(x)->mem.cap = len;
}

/* ---- growing buffer ---- */

static int grow_next(struct asx_xdr *x, size_t want)
{
	size_t used = (size_t)(x->p - ASX__XDR_T(x)->mem.buf);
	size_t cap = ASX__XDR_T(x)->mem.cap, max = ASX__XDR_T(x)->mem.max;
	unsigned char *nb;

	if (cap >= max || want > max - used)
		return -EMSGSIZE;
	cap = cap > max / 2 ? max : cap * 2;
	if (cap < used + want)
		cap = used + want;
	nb = realloc(ASX__XDR_T(x)->mem.buf, cap);
	if (!nb)
		return -ENOMEM;
	ASX__XDR_T(x)->mem.buf = nb;
	ASX__XDR_T(x)->mem.cap = cap;
	x->base_ = nb;
	x->p = nb + used;
	x->end = nb + cap;
	return 0;
}

static void grow_fini(struct asx_xdr *x)
{
	if (ASX__XDR_T(x)->mem.owned)
		free(ASX__XDR_T(x)->mem.buf);
	ASX__XDR_T(x)->mem.buf = NULL;
	ASX__XDR_T(x)->mem.owned = false;
}

static const struct asx_xdr_ops grow_ops = { .next = grow_next, .fini = grow_fini };

int asx_xdr_mem_grow_encoder(struct asx_xdr *x, size_t initial, size_t max)
{
	unsigned char *b;

	if (!initial)
		initial = 256;
	if (initial > max)
		max = initial;
	b = malloc(initial);
	if (!b) {
		asx__xdr_init(x, NULL, ASX_XDR_ENCODE, NULL, NULL, 0);
		asx__xdr_fail(x, -ENOMEM);
		return -ENOMEM;
	}
	asx__xdr_init(x, &grow_ops, ASX_XDR_ENCODE, b, b + initial, 0);
	ASX__XDR_T(x)->mem.buf = b;
	ASX__XDR_T(x)->mem.cap = initial;
	ASX__XDR_T(x)->mem.max = max;
	ASX__XDR_T(x)->mem.owned = true;
	return 0;
}

void *asx_xdr_mem_data(const struct asx_xdr *x, size_t *len)
{
	if (len)
		*len = ASX__XDR_T(x)->mem.buf ? (size_t)(x->p - ASX__XDR_T(x)->mem.buf) : 0;
	return ASX__XDR_T(x)->mem.buf;
}

void *asx_xdr_mem_detach(struct asx_xdr *x, size_t *len)
{
	void *b = asx_xdr_mem_data(x, len);

	ASX__XDR_T(x)->mem.owned = false;
	ASX__XDR_T(x)->mem.buf = NULL;
	asx_xdr_fini(x);
	return b;
}

/* ---- message-block chains ---- */

static void msg_window(struct asx_xdr *x, struct asx_msg *m, bool enc)
{
	ASX__XDR_T(x)->msg.cur = m;
	x->base_ = x->p = enc ? m->wr : m->rd;
	x->end = enc ? m->wr + asx_msg_space(m) : m->wr;
}

static void msg_commit(struct asx_xdr *x)
{
	struct asx_msg *m = ASX__XDR_T(x)->msg.cur;

	if (m && x->p > m->wr)
		m->wr = x->p;
}

static int msg_enc_next(struct asx_xdr *x, size_t want)
{
	size_t size = ASX__XDR_T(x)->msg.block;
	struct asx_msg *nb;

	msg_commit(x);
	if (want > size && want <= (1u << 20))
		size = want;
	nb = asx_msg_alloc(size, ASX_MSG_DATA);
	if (!nb)
		return -ENOMEM;
	x->pos_base_ += (uint64_t)(x->p - x->base_);
	ASX__XDR_T(x)->msg.cur->cont = nb;
	msg_window(x, nb, true);
	return 0;
}

static void msg_enc_fini(struct asx_xdr *x)
{
	msg_commit(x);
	/* an unfinished chain the stream started is freed; a caller's stays */
	if (x->pad0_[0])
		asx_msg_free_chain(ASX__XDR_T(x)->msg.head);
	ASX__XDR_T(x)->msg.head = ASX__XDR_T(x)->msg.cur = NULL;
}

static const struct asx_xdr_ops msg_enc_ops = { .next = msg_enc_next, .fini = msg_enc_fini };

int asx_xdr_msg_encoder(struct asx_xdr *x, struct asx_msg *m, size_t block)
{
	struct asx_msg *last;
	bool owned = false;

	if (block < 64)
		block = 64;
	asx__xdr_init(x, &msg_enc_ops, ASX_XDR_ENCODE, NULL, NULL, 0);
	if (!m) {
		m = asx_msg_alloc(block, ASX_MSG_DATA);
		if (!m) {
			x->ops_ = NULL;
			return asx__xdr_fail(x, -ENOMEM);
		}
		owned = true;
	}
	for (last = m; last->cont; last = last->cont)
		;
	ASX__XDR_T(x)->msg.head = m;
	ASX__XDR_T(x)->msg.block = block;
	ASX__XDR_T(x)->msg.cur = last;
	if (asx_msg_shared(last)) {
		/* never write into bytes another header can see */
		x->p = x->end = x->base_ = last->wr;
	} else {
		msg_window(x, last, true);
	}
	/* .msg shares storage with .mem: keep the ownership flag apart */
	x->pad0_[0] = owned;
	return 0;
}

struct asx_msg *asx_xdr_msg_finish(struct asx_xdr *x)
{
	struct asx_msg *head;

	if (x->ops_ != &msg_enc_ops)
		return NULL;
	msg_commit(x);
	head = ASX__XDR_T(x)->msg.head;
	ASX__XDR_T(x)->msg.head = ASX__XDR_T(x)->msg.cur = NULL;
	x->ops_ = NULL;
	x->p = x->end = x->base_;
	asx__xdr_fail(x, -EINVAL);
	return head;
}

static int msg_dec_next(struct asx_xdr *x, size_t want)
{
	struct asx_msg *m = ASX__XDR_T(x)->msg.cur;

	x->pos_base_ += (uint64_t)(x->p - x->base_);
	do {
		m = m ? m->cont : NULL;
		if (!m) {
			x->p = x->end;
			return -EBADMSG;
		}
	} while (m->wr == m->rd);
	msg_window(x, m, false);
	x->after_ -= asx_msg_block_len(m);
	return 0;
}

static const struct asx_xdr_ops msg_dec_ops = { .next = msg_dec_next };

void asx_xdr_msg_decoder(struct asx_xdr *x, const struct asx_msg *m)
{
	size_t total = m ? asx_msg_length(m) : 0;

	asx__xdr_init(x, &msg_dec_ops, ASX_XDR_DECODE, NULL, NULL, 0);
	if (!m)
		return;
	msg_window(x, (struct asx_msg *)m, false);
	x->after_ = total - asx_msg_block_len(m);
}
