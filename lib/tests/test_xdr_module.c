// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_xdr_module.c - the XDR Module (asx_mod_xdr) in a Stream:
 *
 *	head -> [xdr] -> [tap] -> loop
 *
 * The loop-back tail turns the write side into the read side, so records
 * written at the head are encoded going down and decoded coming up.  The
 * "tap" Module between xdr and the tail records the wire bytes (compared
 * with asx_xdr_records() into memory) and can rewrite the wire message
 * (cut it into tiny blocks, truncate it, corrupt it) before the read side
 * sees it.
 *
 * Helper threads never call cmocka's assert_* (it longjmps); they record
 * what they saw and the main thread asserts.
 */
#include <stdarg.h>
#include <stdalign.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/modules.h>
#include <asx/msg.h>
#include <asx/stream.h>
#include <asx/sync.h>
#include <asx/xdr.h>

#if defined(__SANITIZE_THREAD__)
#define THR_MSGS 300
#elif defined(__SANITIZE_ADDRESS__)
#define THR_MSGS 1500
#else
#define THR_MSGS 5000
#endif
#define THR_N 4
#define THR_RECS 7

/* ---------------------------------------------------------------- records */

/* The paper's record: fixed wire size (ASX_XDR_DEFINE). */
struct foo {
	long l;
	short s;
	char c;
	float f;
	double d;
	unsigned char buf[13];
};
#define FOO_FIELDS(X) X(LONG, l) X(SHORT, s) X(CHAR, c) X(FLOAT, f) X(DOUBLE, d) X(OPAQUE, buf)
ASX_XDR_DEFINE(foo, struct foo, FOO_FIELDS)

/* A record with variable parts (field table). */
struct pt {
	int32_t x, y;
};
ASX_XDR_RECORD_STATIC(pt_rec, struct pt,
	ASX_XDR_FIELD(struct pt, x, ASX_XDR_INT),
	ASX_XDR_FIELD(struct pt, y, ASX_XDR_INT));

struct var {
	uint64_t id;
	int32_t vals[8];
	uint32_t nvals;
	unsigned char data[20];
	uint32_t ndata;
	char name[16];
	bool has_origin;
	struct pt origin;
	double w[2];
};
ASX_XDR_RECORD_STATIC(var_rec, struct var,
	ASX_XDR_FIELD(struct var, id, ASX_XDR_UHYPER),
	ASX_XDR_FIELD_VARRAY(struct var, vals, ASX_XDR_INT, nvals),
	ASX_XDR_FIELD_BYTES(struct var, data, ndata),
	ASX_XDR_FIELD_STRING(struct var, name),
	ASX_XDR_FIELD_OPTIONAL(struct var, origin, pt_rec, has_origin),
	ASX_XDR_FIELD_ARRAY(struct var, w, ASX_XDR_DOUBLE));

/* A small fixed record with a bool (to corrupt). */
struct flagrec {
	int32_t a;
	bool b;
};
#define FLAG_FIELDS(X) X(INT, a) X(BOOL, b)
ASX_XDR_DEFINE(flagrec, struct flagrec, FLAG_FIELDS)

static void foo_fill(struct foo *v, size_t n, uint32_t salt)
{
	memset(v, 0, n * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i].l = (long)(i * 7919 + salt) * ((i & 1) ? -1 : 1);
		v[i].s = (short)(i * 31 - 1000);
		v[i].c = (char)('a' + (i + salt) % 26);
		v[i].f = (float)i * 0.5f + (float)salt;
		v[i].d = (double)i * 1e-3 - (double)salt;
		for (size_t k = 0; k < sizeof(v[i].buf); k++)
			v[i].buf[k] = (unsigned char)(i + k + salt);
	}
}

static void var_fill(struct var *v, size_t n)
{
	memset(v, 0, n * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i].id = 0x0102030405060708ULL + i;
		v[i].nvals = (uint32_t)(i % 9);
		for (uint32_t k = 0; k < v[i].nvals; k++)
			v[i].vals[k] = (int32_t)(k * 1000 - i);
		v[i].ndata = (uint32_t)(i * 3 % 21);
		for (uint32_t k = 0; k < v[i].ndata; k++)
			v[i].data[k] = (unsigned char)(0xa0 + k);
		snprintf(v[i].name, sizeof(v[i].name), "rec-%zu", i * 1111);
		v[i].has_origin = i % 3 == 0;
		if (v[i].has_origin) {
			v[i].origin.x = (int32_t)i;
			v[i].origin.y = -(int32_t)i;
		}
		v[i].w[0] = 1.0 / (double)(i + 1);
		v[i].w[1] = -(double)i;
	}
}

/* The reference: the same records with asx_xdr_records() into memory (free() it). */
static unsigned char *mem_encode(const struct asx_xdr_record *rec, const void *v, size_t n,
				 size_t *len)
{
	struct asx_xdr x;
	void *p;

	assert_int_equal(asx_xdr_mem_grow_encoder(&x, 64, 1u << 24), 0);
	assert_int_equal(asx_xdr_records(&x, rec, (void *)(uintptr_t)v, n), 0);
	p = asx_xdr_mem_detach(&x, len);
	assert_non_null(p);
	return p;
}

/*
 * A DATA message holding @len bytes of @src cut into blocks at @cuts
 * (sizes; the rest in a last block), each block's data starting @skew
 * bytes into its buffer (an odd skew misaligns the records).
 */
static struct asx_msg *mk_chain(const void *src, size_t len, const size_t *cuts, size_t ncuts,
				size_t skew)
{
	const unsigned char *s = src;
	struct asx_msg *head = NULL;

	for (size_t i = 0; i <= ncuts && (len || !head); i++) {
		size_t k = i < ncuts ? cuts[i] : len;
		struct asx_msg *b;

		if (k > len)
			k = len;
		b = asx_msg_alloc(skew + k, ASX_MSG_DATA);
		assert_non_null(b);
		b->rd += skew;
		b->wr = b->rd;
		memcpy(b->wr, s, k);
		b->wr += k;
		s += k;
		len -= k;
		if (head)
			asx_msg_link(head, b);
		else
			head = b;
	}
	return head;
}

/* ---------------------------------------------------------------- the tap */

typedef struct asx_msg *(*xform_fn)(struct asx_msg *m);

struct tap {
	pthread_mutex_t lock;
	bool capture;
	unsigned char *buf;		/* DATA bytes seen going down, concatenated */
	size_t len, cap;
	size_t msgs;			/* DATA messages seen */
	size_t min_headroom;
	size_t other;			/* non-DATA messages seen */
	unsigned char other_bytes[64];
	size_t other_len;
	xform_fn xform;			/* rewrites DATA going down, or NULL */
};

static int tap_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct tap *tp = asx_module_arg(asx_task_module(t));
	int r;

	pthread_mutex_lock(&tp->lock);
	if (tp->capture && m->type == ASX_MSG_DATA) {
		size_t l = asx_msg_length(m);

		if (tp->len + l > tp->cap) {
			tp->cap = (tp->len + l) * 2 + 64;
			tp->buf = realloc(tp->buf, tp->cap);
			if (!tp->buf)
				abort();
		}
		asx_msg_read(m, 0, tp->buf + tp->len, l);
		tp->len += l;
		tp->msgs++;
		if (l && asx_msg_headroom(m) < tp->min_headroom)
			tp->min_headroom = asx_msg_headroom(m);
	} else if (tp->capture) {
		tp->other++;
		tp->other_len = asx_msg_read(m, 0, tp->other_bytes, sizeof(tp->other_bytes));
	}
	pthread_mutex_unlock(&tp->lock);
	if (tp->xform && m->type == ASX_MSG_DATA)
		m = tp->xform(m);
	r = asx_task_put_next(t, m, dl);
	if (r)
		asx_msg_free_chain(m);
	return 0;
}

static const struct asx_task_ops tap_wr_ops = { .put = tap_wr_put };

static void tap_reset(struct tap *tp)
{
	tp->len = 0;
	tp->msgs = 0;
	tp->other = 0;
	tp->other_len = 0;
	tp->min_headroom = SIZE_MAX;
}

/* A loop-back stream: head, xdr (records @rec), tap, loop.  *@xmod: the xdr Module. */
static struct asx_stream *open_xdr(const struct asx_xdr_record *rec,
				   const struct asx_xdr_mod_opts *opts, struct tap *tp,
				   struct asx_module **xmod)
{
	struct asx_stream *s;
	struct asx_module *t, *x;

	memset(tp, 0, sizeof(*tp));
	pthread_mutex_init(&tp->lock, NULL);
	tp->capture = true;
	tap_reset(tp);
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&t, "tap", &tap_wr_ops, NULL, tp), 0);
	assert_non_null(t);
	assert_int_equal(asx_stream_push(s, t, 0, NULL), 0);
	assert_int_equal(asx_mod_xdr(&x, "xdr", rec, opts), 0);
	assert_non_null(x);
	assert_int_equal(asx_stream_push(s, x, 0, NULL), 0);
	*xmod = x;
	return s;
}

static void close_xdr(struct asx_stream *s, struct tap *tp)
{
	asx_stream_close(s);
	free(tp->buf);
	pthread_mutex_destroy(&tp->lock);
}

static struct asx_msg *get_now(struct asx_stream *s)
{
	struct asx_msg *m = NULL;

	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);
	assert_non_null(m);
	return m;
}

static void assert_head_empty(struct asx_stream *s)
{
	struct asx_msg *m = NULL;

	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
}

/* ---------------------------------------------------------------- round trips */

static void test_foo_roundtrip_and_wire(void **state)
{
	enum { N = 37 };
	struct foo in[N], back[N];
	struct asx_xdr_mod_stats st;
	struct asx_module *xm;
	struct asx_stream *s;
	struct asx_msg *m;
	unsigned char *ref;
	size_t reflen;
	struct tap tp;

	(void)state;
	s = open_xdr(foo_xdr_record(), NULL, &tp, &xm);
	foo_fill(in, N, 5);
	m = mk_chain(in, sizeof(in), NULL, 0, 0);
	m->band = 3;
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);

	/* the wire: exactly asx_xdr_records() into memory, with headroom kept */
	ref = mem_encode(foo_xdr_record(), in, N, &reflen);
	assert_int_equal(reflen, N * 40);
	assert_int_equal(tp.msgs, 1);
	assert_int_equal(tp.len, reflen);
	assert_memory_equal(tp.buf, ref, reflen);
	assert_true(tp.min_headroom >= 64);
	free(ref);

	/* back at the head: one block, aligned, identical records, same band */
	m = get_now(s);
	assert_int_equal(m->type, ASX_MSG_DATA);
	assert_int_equal(m->band, 3);
	assert_null(m->cont);
	assert_int_equal(asx_msg_length(m), sizeof(in));
	assert_int_equal((uintptr_t)m->rd % alignof(max_align_t), 0);
	memcpy(back, m->rd, sizeof(back));
	assert_memory_equal(back, in, sizeof(in));
	asx_msg_free_chain(m);
	assert_head_empty(s);

	assert_int_equal(asx_mod_xdr_stats(xm, &st), 0);
	assert_int_equal(st.enc_msgs, 1);
	assert_int_equal(st.enc_records, N);
	assert_int_equal(st.enc_bytes, N * 40);
	assert_int_equal(st.dec_msgs, 1);
	assert_int_equal(st.dec_records, N);
	assert_int_equal(st.enc_errors + st.dec_errors, 0);
	close_xdr(s, &tp);
}

static void test_var_roundtrip_and_wire(void **state)
{
	enum { N = 29 };
	struct var *in = calloc(N, sizeof(*in));
	struct asx_module *xm;
	struct asx_stream *s;
	struct asx_msg *m;
	unsigned char *ref;
	size_t reflen;
	struct tap tp;

	(void)state;
	assert_non_null(in);
	s = open_xdr(&var_rec, NULL, &tp, &xm);
	var_fill(in, N);
	m = mk_chain(in, N * sizeof(*in), NULL, 0, 0);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);

	ref = mem_encode(&var_rec, in, N, &reflen);
	assert_int_equal(tp.len, reflen);
	assert_memory_equal(tp.buf, ref, reflen);
	free(ref);

	m = get_now(s);
	assert_int_equal(m->type, ASX_MSG_DATA);
	assert_null(m->cont);
	assert_int_equal(asx_msg_length(m), N * sizeof(*in));
	assert_memory_equal(m->rd, in, N * sizeof(*in));
	asx_msg_free_chain(m);
	assert_head_empty(s);
	close_xdr(s, &tp);
	free(in);
}

/* Records cut across blocks at odd places and misaligned: same wire, same records. */
static void test_chained_misaligned_input(void **state)
{
	enum { N = 23 };
	static const size_t cuts[] = { 7, 33, 1, 80, 40, 3, 200 };
	struct var *vin = calloc(N, sizeof(*vin));
	struct foo fin[N];
	struct asx_module *xm;
	struct asx_stream *s;
	struct asx_msg *m;
	unsigned char *ref;
	size_t reflen;
	struct tap tp;

	(void)state;
	assert_non_null(vin);
	var_fill(vin, N);
	foo_fill(fin, N, 77);

	for (size_t skew = 0; skew < 3; skew++) {
		s = open_xdr(&var_rec, NULL, &tp, &xm);
		m = mk_chain(vin, N * sizeof(*vin), cuts, sizeof(cuts) / sizeof(cuts[0]), skew);
		assert_true(asx_msg_blocks(m) > 5);
		assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
		ref = mem_encode(&var_rec, vin, N, &reflen);
		assert_int_equal(tp.len, reflen);
		assert_memory_equal(tp.buf, ref, reflen);
		free(ref);
		m = get_now(s);
		assert_int_equal(asx_msg_length(m), N * sizeof(*vin));
		assert_memory_equal(m->rd, vin, N * sizeof(*vin));
		asx_msg_free_chain(m);
		close_xdr(s, &tp);

		s = open_xdr(foo_xdr_record(), NULL, &tp, &xm);
		m = mk_chain(fin, sizeof(fin), cuts, sizeof(cuts) / sizeof(cuts[0]), skew);
		assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
		ref = mem_encode(foo_xdr_record(), fin, N, &reflen);
		assert_int_equal(tp.len, reflen);
		assert_memory_equal(tp.buf, ref, reflen);
		free(ref);
		m = get_now(s);
		assert_int_equal(asx_msg_length(m), sizeof(fin));
		assert_memory_equal(m->rd, fin, sizeof(fin));
		asx_msg_free_chain(m);
		close_xdr(s, &tp);
	}
	free(vin);
}

/* The wire message cut into 3-byte blocks: the read side decodes across them. */
static struct asx_msg *split3(struct asx_msg *m)
{
	size_t len = asx_msg_length(m);
	unsigned char *b = malloc(len ? len : 1);
	struct asx_msg *out;
	size_t cuts[512];
	size_t n = 0;

	if (!b)
		abort();
	asx_msg_read(m, 0, b, len);
	for (size_t off = 0; off + 3 < len && n < 512; off += 3)
		cuts[n++] = 3;
	out = mk_chain(b, len, cuts, n, 1);
	out->band = m->band;
	free(b);
	asx_msg_free_chain(m);
	return out;
}

static void test_read_side_chained_wire(void **state)
{
	enum { N = 11 };
	struct var vin[N];
	struct foo fin[N];
	struct asx_module *xm;
	struct asx_stream *s;
	struct asx_msg *m;
	struct tap tp;

	(void)state;
	var_fill(vin, N);
	foo_fill(fin, N, 9);

	s = open_xdr(&var_rec, NULL, &tp, &xm);
	tp.xform = split3;
	assert_int_equal(asx_stream_put(s, mk_chain(vin, sizeof(vin), NULL, 0, 0), 0, NULL), 0);
	m = get_now(s);
	assert_int_equal(m->type, ASX_MSG_DATA);
	assert_int_equal(asx_msg_length(m), sizeof(vin));
	assert_memory_equal(m->rd, vin, sizeof(vin));
	asx_msg_free_chain(m);
	close_xdr(s, &tp);

	s = open_xdr(foo_xdr_record(), NULL, &tp, &xm);
	tp.xform = split3;
	assert_int_equal(asx_stream_put(s, mk_chain(fin, sizeof(fin), NULL, 0, 0), 0, NULL), 0);
	m = get_now(s);
	assert_int_equal(asx_msg_length(m), sizeof(fin));
	assert_memory_equal(m->rd, fin, sizeof(fin));
	asx_msg_free_chain(m);
	close_xdr(s, &tp);
}

/* ---------------------------------------------------------------- pass-through, contract */

static void test_passthrough_and_write_errors(void **state)
{
	struct asx_xdr_mod_stats st;
	struct asx_module *xm, *p;
	struct asx_stream *s;
	struct asx_msg *m;
	struct foo f[2];
	struct tap tp;

	(void)state;
	s = open_xdr(foo_xdr_record(), NULL, &tp, &xm);

	/* non-DATA: untouched both ways */
	m = asx_msg_alloc(16, ASX_MSG_PROTO);
	assert_non_null(m);
	assert_int_equal(asx_msg_append(m, "hello, xdr", 10), 0);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
	assert_int_equal(tp.other, 1);
	assert_int_equal(tp.other_len, 10);
	assert_memory_equal(tp.other_bytes, "hello, xdr", 10);
	m = get_now(s);
	assert_int_equal(m->type, ASX_MSG_PROTO);
	assert_int_equal(asx_msg_length(m), 10);
	assert_memory_equal(m->rd, "hello, xdr", 10);
	asx_msg_free_chain(m);

	/* an empty DATA message: zero records both ways */
	m = asx_msg_alloc(0, ASX_MSG_DATA);
	assert_non_null(m);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
	m = get_now(s);
	assert_int_equal(m->type, ASX_MSG_DATA);
	assert_int_equal(asx_msg_length(m), 0);
	asx_msg_free_chain(m);

	/* not a whole number of records: refused, still ours, unchanged */
	foo_fill(f, 2, 1);
	m = mk_chain(f, sizeof(f) - 1, NULL, 0, 0);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), -EINVAL);
	assert_int_equal(asx_msg_length(m), sizeof(f) - 1);
	assert_memory_equal(m->rd, f, sizeof(f) - 1);
	asx_msg_free_chain(m);

	/* a long that does not fit XDR's 32 bits: the codec's -ERANGE */
	if (sizeof(long) > 4) {
		f[1].l = (long)INT32_MAX + 1;
		m = mk_chain(f, sizeof(f), NULL, 0, 0);
		assert_int_equal(asx_stream_put(s, m, 0, NULL), -ERANGE);
		assert_memory_equal(m->rd, f, sizeof(f));
		asx_msg_free_chain(m);
	}
	assert_head_empty(s);
	assert_int_equal(tp.msgs, 1);	/* only the empty one reached the wire */

	assert_int_equal(asx_mod_xdr_stats(xm, &st), 0);
	assert_int_equal(st.enc_errors, sizeof(long) > 4 ? 2 : 1);
	assert_int_equal(st.dec_errors, 0);

	/* the API's own checks */
	assert_int_equal(asx_mod_pass(&p, "p"), 0);
	assert_non_null(p);
	assert_int_equal(asx_mod_xdr_stats(p, &st), -EINVAL);
	asx_module_destroy(p);
	assert_int_equal(asx_mod_xdr_stats(NULL, &st), -EINVAL);
	p = NULL;
	assert_int_equal(asx_mod_xdr(&p, "x", NULL, NULL), -EINVAL);
	{
		struct asx_xdr_mod_opts bad = { .sz = 1 };

		assert_int_equal(asx_mod_xdr(&p, "x", &var_rec, &bad), -EINVAL);
	}
	assert_int_equal(asx_mod_xdr(&p, "", &var_rec, NULL), -EINVAL);
	assert_int_equal(asx_mod_xdr(NULL, "x", &var_rec, NULL), -EINVAL);
	assert_null(p);
	close_xdr(s, &tp);
}

/* ---------------------------------------------------------------- read-side errors */

static struct asx_msg *truncate4(struct asx_msg *m)
{
	struct asx_msg *last = m;

	while (last->cont)
		last = last->cont;
	/* the test messages' last block holds at least 4 bytes */
	last->wr -= 4;
	return m;
}

static struct asx_msg *bool7(struct asx_msg *m)
{
	/* flagrec: { int a; bool b; } -> the second word of the first record */
	unsigned char w[4] = { 0, 0, 0, 7 };
	struct asx_msg *c = asx_msg_copy(m);

	if (!c || asx_msg_pullup(c, ASX_MSG_PULLUP_ALL))
		abort();
	memcpy(c->rd + 4, w, 4);
	asx_msg_free_chain(m);
	return c;
}

/* The first var record's vals count word (after the 8-byte id) says 9 > capacity 8. */
static struct asx_msg *count9(struct asx_msg *m)
{
	unsigned char w[4] = { 0, 0, 0, 9 };
	struct asx_msg *c = asx_msg_copy(m);

	if (!c || asx_msg_pullup(c, ASX_MSG_PULLUP_ALL))
		abort();
	memcpy(c->rd + 8, w, 4);
	asx_msg_free_chain(m);
	return c;
}

/* Appends 4 stray bytes: not a whole record. */
static struct asx_msg *trailing4(struct asx_msg *m)
{
	struct asx_msg *t = asx_msg_alloc(4, ASX_MSG_DATA);

	if (!t)
		abort();
	memset(t->wr, 0, 4);
	t->wr += 4;
	asx_msg_link(m, t);
	return m;
}

static void expect_error(struct asx_stream *s, int err)
{
	struct asx_msg *m = get_now(s);

	assert_int_equal(m->type, ASX_MSG_ERROR);
	assert_int_equal(asx_msg_length(m), 2);
	assert_int_equal(m->rd[0], err);
	assert_int_equal(m->rd[1], 0);
	asx_msg_free_chain(m);
	assert_head_empty(s);
}

static void send_foo(struct asx_stream *s, size_t n)
{
	struct foo *f = calloc(n, sizeof(*f));

	assert_non_null(f);
	foo_fill(f, n, 3);
	assert_int_equal(asx_stream_put(s, mk_chain(f, n * sizeof(*f), NULL, 0, 0), 0, NULL), 0);
	free(f);
}

/* @n var records; the first with @nvals values and @ndata bytes of data. */
static void send_var(struct asx_stream *s, size_t n, uint32_t nvals, uint32_t ndata)
{
	struct var *v = calloc(n, sizeof(*v));

	assert_non_null(v);
	var_fill(v, n);
	v[0].nvals = nvals;
	v[0].ndata = ndata;
	assert_int_equal(asx_stream_put(s, mk_chain(v, n * sizeof(*v), NULL, 0, 0), 0, NULL), 0);
	free(v);
}

static void expect_records(struct asx_stream *s, size_t bytes)
{
	struct asx_msg *m = get_now(s);

	assert_int_equal(m->type, ASX_MSG_DATA);
	assert_int_equal(asx_msg_length(m), bytes);
	asx_msg_free_chain(m);
}

static void test_read_errors(void **state)
{
	struct asx_xdr_mod_stats st;
	struct asx_module *xm;
	struct asx_stream *s;
	struct flagrec fr[3];
	struct tap tp;

	(void)state;
	memset(fr, 0, sizeof(fr));	/* padding too: compared with memcmp */
	for (int i = 0; i < 3; i++) {
		fr[i].a = i + 1;
		fr[i].b = i != 1;
	}
	/* truncated, fixed records: EBADMSG; then the stream goes on */
	s = open_xdr(foo_xdr_record(), NULL, &tp, &xm);
	tp.xform = truncate4;
	send_foo(s, 5);
	expect_error(s, EBADMSG);
	tp.xform = trailing4;
	send_foo(s, 5);
	expect_error(s, EBADMSG);
	tp.xform = NULL;
	send_foo(s, 5);
	expect_records(s, 5 * sizeof(struct foo));
	assert_int_equal(asx_mod_xdr_stats(xm, &st), 0);
	assert_int_equal(st.dec_errors, 2);
	assert_int_equal(st.dec_msgs, 1);
	close_xdr(s, &tp);

	/* truncated and trailing bytes, variable records */
	s = open_xdr(&var_rec, NULL, &tp, &xm);
	tp.xform = truncate4;
	send_var(s, 4, 3, 5);
	expect_error(s, EBADMSG);
	tp.xform = trailing4;
	send_var(s, 4, 3, 5);
	expect_error(s, EBADMSG);
	/* a count over the member's capacity: EMSGSIZE */
	tp.xform = count9;
	send_var(s, 4, 3, 5);
	expect_error(s, EMSGSIZE);
	tp.xform = NULL;
	send_var(s, 4, 3, 5);
	expect_records(s, 4 * sizeof(struct var));
	close_xdr(s, &tp);

	/* an invalid bool: EBADMSG */
	s = open_xdr(flagrec_xdr_record(), NULL, &tp, &xm);
	tp.xform = bool7;
	assert_int_equal(asx_stream_put(s, mk_chain(fr, sizeof(fr), NULL, 0, 0), 0, NULL), 0);
	expect_error(s, EBADMSG);
	tp.xform = NULL;
	assert_int_equal(asx_stream_put(s, mk_chain(fr, sizeof(fr), NULL, 0, 0), 0, NULL), 0);
	{
		struct asx_msg *m = get_now(s);

		assert_int_equal(asx_msg_length(m), sizeof(fr));
		assert_memory_equal(m->rd, fr, sizeof(fr));
		asx_msg_free_chain(m);
	}
	close_xdr(s, &tp);
}

/* The codec's item limit and the Module's message limit: EMSGSIZE. */
static void test_limits(void **state)
{
	struct asx_module *xm;
	struct asx_stream *s;
	struct tap tp;

	(void)state;
	{
		/* record 1: 1 value, 3 bytes, name "rec-1111" (8 chars) */
		ASX_OPTS(struct asx_xdr_mod_opts, o, .limit = 8);

		s = open_xdr(&var_rec, &o, &tp, &xm);
		send_var(s, 2, 8, 8);		/* every item within 8 */
		expect_records(s, 2 * sizeof(struct var));
		send_var(s, 2, 8, 9);		/* 9 bytes of data > limit 8 (capacity 20) */
		expect_error(s, EMSGSIZE);
		send_var(s, 2, 2, 0);
		expect_records(s, 2 * sizeof(struct var));
		close_xdr(s, &tp);
	}
	{
		ASX_OPTS(struct asx_xdr_mod_opts, o, .max_msg = 4 * sizeof(struct foo));

		s = open_xdr(foo_xdr_record(), &o, &tp, &xm);
		send_foo(s, 4);
		expect_records(s, 4 * sizeof(struct foo));
		send_foo(s, 5);
		expect_error(s, EMSGSIZE);
		close_xdr(s, &tp);
	}
	{
		ASX_OPTS(struct asx_xdr_mod_opts, o, .max_msg = 3 * sizeof(struct var));

		s = open_xdr(&var_rec, &o, &tp, &xm);
		send_var(s, 3, 1, 1);
		expect_records(s, 3 * sizeof(struct var));
		send_var(s, 40, 1, 1);
		expect_error(s, EMSGSIZE);
		close_xdr(s, &tp);
	}
}

/* ---------------------------------------------------------------- threads */

struct trec {
	uint32_t tid;
	uint32_t seq;
	int32_t k;
	double v;
	unsigned char tag[6];
};
#define TREC_FIELDS(X) X(UINT, tid) X(UINT, seq) X(INT, k) X(DOUBLE, v) X(OPAQUE, tag)
ASX_XDR_DEFINE(trec, struct trec, TREC_FIELDS)

static void trec_fill(struct trec *r, uint32_t tid, uint32_t seq)
{
	memset(r, 0, THR_RECS * sizeof(*r));
	for (int j = 0; j < THR_RECS; j++) {
		r[j].tid = tid;
		r[j].seq = seq;
		r[j].k = j - 3;
		r[j].v = (double)seq * 0.25 + j;
		memcpy(r[j].tag, "abcdef", 6);
		r[j].tag[0] = (unsigned char)(tid + j);
	}
}

struct writer {
	struct asx_stream *s;
	uint32_t tid;
	int err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct trec r[THR_RECS];

	for (uint32_t seq = 0; seq < THR_MSGS; seq++) {
		struct asx_msg *m;
		int ret;

		trec_fill(r, w->tid, seq);
		/* every other message cut in two, to run the bounce path too */
		if (seq & 1) {
			size_t cut = 3 * sizeof(r[0]) + 5;

			m = mk_chain(r, sizeof(r), &cut, 1, 0);
		} else {
			m = asx_msg_alloc(sizeof(r), ASX_MSG_DATA);
			if (m) {
				memcpy(m->wr, r, sizeof(r));
				m->wr += sizeof(r);
			}
		}
		if (!m) {
			w->err = -ENOMEM;
			return NULL;
		}
		ret = asx_stream_put(w->s, m, 0, NULL);
		if (ret) {
			asx_msg_free_chain(m);
			w->err = ret;
			return NULL;
		}
	}
	return NULL;
}

static void run_threads(bool task_based)
{
	struct writer w[THR_N];
	pthread_t th[THR_N];
	uint8_t *seen = calloc((size_t)THR_N * THR_MSGS, 1);
	struct asx_xdr_mod_stats st;
	struct asx_module *xm;
	struct asx_stream *s;
	size_t got = 0, bad = 0;
	struct trec r[THR_RECS];

	assert_non_null(seen);
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_xdr(&xm, "xdr", trec_xdr_record(), NULL), 0);
	assert_non_null(xm);
	assert_int_equal(asx_stream_push(s, xm, 0, NULL), 0);
	if (task_based) {
		assert_int_equal(asx_task_activate(asx_module_wr(xm), 2), 0);
		assert_int_equal(asx_task_activate(asx_module_rd(xm), 2), 0);
	}
	for (int i = 0; i < THR_N; i++) {
		w[i] = (struct writer){ .s = s, .tid = (uint32_t)i };
		assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
	}
	while (got < (size_t)THR_N * THR_MSGS) {
		struct asx_msg *m = NULL;
		struct timespec ts;
		int ret = asx_stream_get(s, &m, 0, asx_deadline(&ts, 20ULL * 1000000000ULL));
		uint32_t tid, seq;

		if (ret)
			break;
		got++;
		if (m->type != ASX_MSG_DATA || asx_msg_length(m) != sizeof(r) || m->cont) {
			bad++;
			asx_msg_free_chain(m);
			continue;
		}
		memcpy(&tid, m->rd, 4);
		memcpy(&seq, m->rd + 4, 4);
		if (tid >= THR_N || seq >= THR_MSGS || seen[tid * THR_MSGS + seq]) {
			bad++;
		} else {
			seen[tid * THR_MSGS + seq] = 1;
			trec_fill(r, tid, seq);
			if (memcmp(m->rd, r, sizeof(r)))
				bad++;
		}
		asx_msg_free_chain(m);
	}
	for (int i = 0; i < THR_N; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < THR_N; i++)
		assert_int_equal(w[i].err, 0);
	assert_int_equal(got, (size_t)THR_N * THR_MSGS);
	assert_int_equal(bad, 0);
	assert_head_empty(s);
	/*
	 * A counter moves once put_next has returned, which may be after the
	 * message reached the head (a service thread is still on its way back).
	 */
	for (int tries = 0; tries < 2000; tries++) {
		assert_int_equal(asx_mod_xdr_stats(xm, &st), 0);
		if (st.enc_msgs == (uint64_t)THR_N * THR_MSGS &&
		    st.dec_msgs == (uint64_t)THR_N * THR_MSGS)
			break;
		usleep(5000);
	}
	assert_int_equal(st.enc_msgs, (uint64_t)THR_N * THR_MSGS);
	assert_int_equal(st.dec_msgs, (uint64_t)THR_N * THR_MSGS);
	assert_int_equal(st.dec_records, (uint64_t)THR_N * THR_MSGS * THR_RECS);
	assert_int_equal(st.enc_bytes, (uint64_t)THR_N * THR_MSGS * THR_RECS * 28);
	assert_int_equal(st.enc_errors + st.dec_errors, 0);
	asx_stream_close(s);
	free(seen);
}

static void test_threads_message_based(void **state)
{
	(void)state;
	run_threads(false);
}

static void test_threads_task_based(void **state)
{
	(void)state;
	run_threads(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_foo_roundtrip_and_wire),
		cmocka_unit_test(test_var_roundtrip_and_wire),
		cmocka_unit_test(test_chained_misaligned_input),
		cmocka_unit_test(test_read_side_chained_wire),
		cmocka_unit_test(test_passthrough_and_write_errors),
		cmocka_unit_test(test_read_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_threads_message_based),
		cmocka_unit_test(test_threads_task_based),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
