// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdr_module.c - the XDR Module for Streams (asx_mod_xdr, asx/xdr.h).
 *
 * Write side: a DATA message holding a C array of native records becomes
 * their XDR encoding, written straight into new message blocks by the
 * message-chain encoder (whole, aligned records are coded in place from
 * the input blocks; only a record that straddles two blocks, or sits at a
 * misaligned address, is first copied to an aligned bounce buffer).
 * Read side: a DATA message of XDR bytes is decoded across its blocks
 * (no pullup) into one contiguous, aligned, zero-filled array of records.
 *
 * The Module's state is set at creation and never written afterwards
 * except the statistics (atomic), so any number of threads may put on
 * either side at once.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include <asx/msg.h>
#include <asx/stream.h>
#include <asx/xdr.h>

#include "core/compiler.h"
#include "core/opts.h"

#define XDRMOD_MAGIC	0x58445231u	/* "XDR1" */
#define XDRMOD_HEADROOM	64		/* room for the prefixes of the layers below */
#define XDRMOD_BLOCK_MAX (1u << 20)	/* largest block the encoder allocates at once */
#define XDRMOD_BOUNCE	256		/* records up to this size bounce on the stack */
#define XDRMOD_DEPTH	32		/* nesting depth for the wire-size analysis */
#define OUT_ALIGN	alignof(max_align_t)

struct xdrmod {
	uint32_t magic;
	const struct asx_xdr_record *rec;
	size_t size;		/* rec->size */
	size_t align;		/* alignment a native record needs to be coded in place */
	size_t wire_min;	/* a lower bound of one record's encoding (0: unknown) */
	size_t wire_fixed;	/* every record encodes to exactly this, or 0 */
	size_t limit;		/* the codec's per-item limit */
	size_t max_msg;		/* largest native message made on the read side */
	struct asx_xdr_mod_stats stats;	/* atomic fields */
};

/* ---------------------------------------------------------------- wire size analysis */

static size_t scalar_wire(unsigned int t)
{
	switch (t) {
	case ASX_XDR_HYPER: case ASX_XDR_UHYPER: case ASX_XDR_DOUBLE:
		return 8;
	case ASX_XDR_INT: case ASX_XDR_UINT: case ASX_XDR_FLOAT: case ASX_XDR_ENUM:
	case ASX_XDR_BOOL: case ASX_XDR_CHAR: case ASX_XDR_UCHAR: case ASX_XDR_SHORT:
	case ASX_XDR_USHORT: case ASX_XDR_LONG: case ASX_XDR_ULONG:
		return 4;
	}
	return 0;
}

/*
 * A lower bound of the wire size of @rec (*@min) and whether every value
 * of it encodes to the same number of bytes (return true: *@min is exact).
 */
static bool record_wire(const struct asx_xdr_record *rec, size_t *min, int depth)
{
	bool fixed = true;
	size_t i, w = 0;

	if (!rec || depth > XDRMOD_DEPTH) {
		*min = 0;
		return false;
	}
	for (i = 0; i < rec->nfields; i++) {
		const struct asx_xdr_field *f = &rec->fields[i];
		size_t sub;

		if (f->flags) {			/* optional, variable array: a word first */
			w += 4;
			fixed = false;
			continue;
		}
		switch (f->type) {
		case ASX_XDR_OPAQUE:
			w += ((size_t)f->count + 3) & ~(size_t)3;
			break;
		case ASX_XDR_VOPAQUE: case ASX_XDR_STRING: case ASX_XDR_UNION:
			w += 4;			/* a length or discriminant word */
			fixed = false;
			break;
		case ASX_XDR_STRUCT:
			if (!record_wire(f->sub.rec, &sub, depth + 1))
				fixed = false;
			w += sub * f->count;
			break;
		case ASX_XDR_CUSTOM:
			fixed = false;		/* unknown */
			break;
		default:
			sub = scalar_wire(f->type);
			if (!sub)
				fixed = false;
			w += sub * f->count;
			break;
		}
	}
	*min = w;
	return fixed;
}

/* ---------------------------------------------------------------- state */

static const struct asx_task_ops xdr_wr_ops, xdr_rd_ops;

/*
 * The state of an XDR Module, or NULL.  The write Task's priv marks the
 * Module as ours before its arg is looked at: another Module's arg may be
 * anything, even too small to hold a magic number.
 */
static struct xdrmod *xdrmod_of(struct asx_module *mod)
{
	struct xdrmod *st;

	if (!mod || asx_task_priv(asx_module_wr(mod)) != (const void *)&xdr_wr_ops)
		return NULL;
	st = asx_module_arg(mod);
	return st && st->magic == XDRMOD_MAGIC ? st : NULL;
}

static void xdrmod_free(void *arg)
{
	free(arg);
}

static void stat_add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- write side: encode */

/* Copy @n bytes from the chain position (*@bp, *@offp) to @dst and advance it. */
static void chain_take(const struct asx_msg **bp, size_t *offp, void *dst, size_t n)
{
	unsigned char *d = dst;
	const struct asx_msg *b = *bp;
	size_t off = *offp;

	while (n) {
		size_t have = asx_msg_block_len(b) - off, k = have < n ? have : n;

		memcpy(d, b->rd + off, k);
		d += k;
		n -= k;
		off += k;
		if (off == asx_msg_block_len(b) && n) {
			b = b->cont;
			off = 0;
		}
	}
	*bp = b;
	*offp = off;
}

/*
 * Encode the @n records held by the chain @m into a new chain (*@out):
 * 0, or the codec's error (nothing allocated is left).
 */
static int encode(const struct xdrmod *st, const struct asx_msg *m, size_t n,
		  struct asx_msg **out)
{
	union {
		max_align_t a;
		unsigned char b[XDRMOD_BOUNCE];
	} stack_bounce;
	unsigned char *bounce = NULL;
	const struct asx_msg *b = m;
	size_t off = 0, first;
	struct asx_msg *head;
	struct asx_xdr x;
	int r = 0;

	first = st->wire_fixed ? st->wire_fixed * n : st->size * n;
	if (first > XDRMOD_BLOCK_MAX)
		first = XDRMOD_BLOCK_MAX;
	if (first < 64)
		first = 64;
	head = asx_msg_alloc(XDRMOD_HEADROOM + first, ASX_MSG_DATA);
	if (!head)
		return -ENOMEM;
	head->rd += XDRMOD_HEADROOM;
	head->wr = head->rd;
	r = asx_xdr_msg_encoder(&x, head, first);
	if (r) {
		asx_msg_free(head);
		return r;
	}
	asx_xdr_set_limit(&x, st->limit);
	while (n && !r) {
		const unsigned char *p;
		size_t avail;

		while (off == asx_msg_block_len(b)) {	/* n > 0: a block with data follows */
			b = b->cont;
			off = 0;
		}
		p = b->rd + off;
		avail = asx_msg_block_len(b) - off;
		if (avail >= st->size && ((uintptr_t)p & (st->align - 1)) == 0) {
			size_t k = avail / st->size;

			if (k > n)
				k = n;
			/* encoding only reads the records */
			r = asx_xdr_records(&x, st->rec, (void *)(uintptr_t)p, k);
			off += k * st->size;
			n -= k;
			continue;
		}
		if (!bounce) {
			bounce = st->size <= sizeof(stack_bounce) ? stack_bounce.b
								  : malloc(st->size);
			if (!bounce) {
				r = -ENOMEM;
				break;
			}
		}
		chain_take(&b, &off, bounce, st->size);
		r = asx_xdr_records(&x, st->rec, bounce, 1);
		n--;
	}
	if (bounce && bounce != stack_bounce.b)
		free(bounce);
	if (r) {
		asx_xdr_fini(&x);		/* leaves the caller's chain (head) alone */
		asx_msg_free_chain(head);
		return r;
	}
	*out = asx_xdr_msg_finish(&x);
	return 0;
}

static int xdr_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct xdrmod *st = asx_module_arg(asx_task_module(t));
	struct asx_msg *out = NULL;
	size_t len, n;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len == 0) {				/* zero records encode to zero bytes */
		r = asx_task_put_next(t, m, dl);
		if (!r)
			stat_add(&st->stats.enc_msgs, 1);
		return r;
	}
	if (len % st->size) {
		stat_add(&st->stats.enc_errors, 1);
		return -EINVAL;
	}
	n = len / st->size;
	r = encode(st, m, n, &out);
	if (r) {
		stat_add(&st->stats.enc_errors, 1);
		return r;
	}
	out->band = m->band;
	len = asx_msg_length(out);
	r = asx_task_put_next(t, out, dl);
	if (r) {
		asx_msg_free_chain(out);	/* @m is untouched: still the caller's */
		return r;
	}
	asx_msg_free_chain(m);
	stat_add(&st->stats.enc_msgs, 1);
	stat_add(&st->stats.enc_records, n);
	stat_add(&st->stats.enc_bytes, len);
	return 0;
}

/* ---------------------------------------------------------------- read side: decode */

/* A DATA message with room for @bytes at an address aligned for any record. */
static struct asx_msg *out_alloc(size_t bytes)
{
	struct asx_msg *o;
	uintptr_t a;

	if (bytes > SIZE_MAX - OUT_ALIGN)
		return NULL;
	o = asx_msg_alloc(bytes + OUT_ALIGN - 1, ASX_MSG_DATA);
	if (!o)
		return NULL;
	a = ((uintptr_t)o->rd + OUT_ALIGN - 1) & ~(uintptr_t)(OUT_ALIGN - 1);
	o->rd = o->wr = (unsigned char *)a;
	return o;
}

/* Records that fit in @max_msg bytes, at most @cap. */
static size_t cap_records(const struct xdrmod *st, size_t cap)
{
	size_t most = st->max_msg / st->size;

	return cap < most ? cap : most;
}

/*
 * Decode the XDR bytes of @m (@total of them) into a new message of
 * native records (*@out, *@n records).  0; -EBADMSG / -EMSGSIZE (and
 * -EINVAL for a table the codec rejects): bad input; -ENOMEM.
 */
static int decode(const struct xdrmod *st, const struct asx_msg *m, size_t total,
		  struct asx_msg **out, size_t *n)
{
	struct asx_msg *o = NULL;
	struct asx_xdr x;
	size_t cap, i = 0;
	int r;

	asx_xdr_msg_decoder(&x, m);
	asx_xdr_set_limit(&x, st->limit);

	if (st->wire_fixed) {
		/* every record is wire_fixed bytes: the count is known up front */
		if (total % st->wire_fixed)
			return -EBADMSG;
		cap = total / st->wire_fixed;
		if (cap_records(st, cap) < cap)
			return -EMSGSIZE;
		o = out_alloc(cap * st->size);
		if (!o)
			return -ENOMEM;
		memset(o->rd, 0, cap * st->size);
		r = asx_xdr_records(&x, st->rec, o->rd, cap);
		if (!r && asx_xdr_pos(&x) != total)
			r = -EBADMSG;
		if (r) {
			asx_msg_free(o);
			return r;
		}
		o->wr = o->rd + cap * st->size;
		*out = o;
		*n = cap;
		return 0;
	}

	/*
	 * Variable records: decode until the input is used up, doubling the
	 * array as needed.  The first guess assumes the smallest encoding but
	 * stays small, so a short message cannot make a large allocation.
	 */
	cap = total / (st->wire_min ? st->wire_min : 4) + 1;
	if (cap > (64u << 10) / st->size + 1)
		cap = (64u << 10) / st->size + 1;
	cap = cap_records(st, cap);
	if (!cap)
		return -EMSGSIZE;
	o = out_alloc(cap * st->size);
	if (!o)
		return -ENOMEM;
	r = 0;
	while (asx_xdr_pos(&x) < total) {
		unsigned char *slot;
		uint64_t before;

		if (i == cap) {
			size_t ncap = cap_records(st, cap > SIZE_MAX / 2 ? SIZE_MAX : cap * 2);
			struct asx_msg *g;

			if (ncap <= cap) {
				r = -EMSGSIZE;
				break;
			}
			g = out_alloc(ncap * st->size);
			if (!g) {
				r = -ENOMEM;
				break;
			}
			memcpy(g->rd, o->rd, i * st->size);
			asx_msg_free(o);
			o = g;
			cap = ncap;
		}
		slot = o->rd + i * st->size;
		memset(slot, 0, st->size);
		before = asx_xdr_pos(&x);
		r = asx_xdr_records(&x, st->rec, slot, 1);
		if (r)
			break;
		if (asx_xdr_pos(&x) == before) {	/* no progress: cannot find the end */
			r = -EBADMSG;
			break;
		}
		i++;
	}
	if (r) {
		asx_msg_free(o);
		return r;
	}
	o->wr = o->rd + i * st->size;
	*out = o;
	*n = i;
	return 0;
}

/*
 * Report a decode failure upstream as STREAMS does: an ERROR message of
 * two bytes, the read-side errno and the write-side errno (0: none).
 */
static int send_error(struct asx_task *t, int err, const struct timespec *dl)
{
	struct asx_msg *e = asx_msg_alloc(2, ASX_MSG_ERROR);
	int r;

	if (!e)
		return -ENOMEM;
	e->wr[0] = (unsigned char)(-err);
	e->wr[1] = 0;
	e->wr += 2;
	r = asx_task_put_next(t, e, dl);
	if (r)
		asx_msg_free(e);
	return r;
}

static int xdr_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct xdrmod *st = asx_module_arg(asx_task_module(t));
	struct asx_msg *out = NULL;
	size_t total, n = 0;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	total = asx_msg_length(m);
	if (total == 0) {
		r = asx_task_put_next(t, m, dl);
		if (!r)
			stat_add(&st->stats.dec_msgs, 1);
		return r;
	}
	r = decode(st, m, total, &out, &n);
	if (r == -ENOMEM)
		return r;			/* not the input's fault: still the caller's */
	if (r) {
		stat_add(&st->stats.dec_errors, 1);
		if (r != -EBADMSG && r != -EMSGSIZE)
			r = -EBADMSG;
		r = send_error(t, r, dl);
		if (r)
			return r;		/* nothing went up: @m is still the caller's */
		asx_msg_free_chain(m);
		return 0;
	}
	out->band = m->band;
	r = asx_task_put_next(t, out, dl);
	if (r) {
		asx_msg_free(out);
		return r;
	}
	asx_msg_free_chain(m);
	stat_add(&st->stats.dec_msgs, 1);
	stat_add(&st->stats.dec_records, n);
	return 0;
}

static const struct asx_task_ops xdr_wr_ops = { .put = xdr_wr_put };
static const struct asx_task_ops xdr_rd_ops = { .put = xdr_rd_put };

/* ---------------------------------------------------------------- API */

int asx_mod_xdr(struct asx_module **out, const char *name, const struct asx_xdr_record *rec,
		const struct asx_xdr_mod_opts *opts)
{
	struct asx_xdr_mod_opts o;
	struct asx_module *mod;
	struct xdrmod *st;
	size_t lowbit;
	int r;

	if (!out || !rec || !rec->size || (rec->nfields && !rec->fields))
		return -EINVAL;
	r = ASX__OPTS_COPY(&o, opts);
	if (r)
		return r;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->magic = XDRMOD_MAGIC;
	st->rec = rec;
	st->size = rec->size;
	/* alignof(S) divides sizeof(S): its lowest set bit bounds the alignment */
	lowbit = rec->size & -rec->size;
	st->align = lowbit < OUT_ALIGN ? lowbit : OUT_ALIGN;
	if (record_wire(rec, &st->wire_min, 0) && st->wire_min)
		st->wire_fixed = st->wire_min;
	st->limit = o.limit ? o.limit : ASX_XDR_DEFAULT_LIMIT;
	st->max_msg = o.max_msg ? o.max_msg : ASX_XDR_MOD_MAX_MSG;
	r = asx_module_create(&mod, name, &xdr_wr_ops, &xdr_rd_ops, st);
	if (r) {
		free(st);
		return r;
	}
	asx_module_set_dtor(mod, xdrmod_free);
	asx_task_set_priv(asx_module_wr(mod), (void *)(uintptr_t)&xdr_wr_ops);
	*out = mod;
	return 0;
}

int asx_mod_xdr_stats(struct asx_module *mod, struct asx_xdr_mod_stats *s)
{
	struct xdrmod *st = xdrmod_of(mod);

	if (!st || !s)
		return -EINVAL;
	s->enc_msgs = __atomic_load_n(&st->stats.enc_msgs, __ATOMIC_RELAXED);
	s->enc_records = __atomic_load_n(&st->stats.enc_records, __ATOMIC_RELAXED);
	s->enc_bytes = __atomic_load_n(&st->stats.enc_bytes, __ATOMIC_RELAXED);
	s->enc_errors = __atomic_load_n(&st->stats.enc_errors, __ATOMIC_RELAXED);
	s->dec_msgs = __atomic_load_n(&st->stats.dec_msgs, __ATOMIC_RELAXED);
	s->dec_records = __atomic_load_n(&st->stats.dec_records, __ATOMIC_RELAXED);
	s->dec_errors = __atomic_load_n(&st->stats.dec_errors, __ATOMIC_RELAXED);
	return 0;
}
