// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_xdr.c - CMocka tests of asx/xdr.h.
 *
 * Every XDR type is encoded by libasx and by libtirpc (the reference) and
 * the bytes compared; round trips run through every target (bounded and
 * growing memory, message chains with tiny blocks so items straddle
 * blocks, the fd channel over a socketpair with records arriving in
 * pieces); hostile inputs (every truncation, lying lengths, bad values)
 * must fail with the documented errno and never read out of bounds
 * (the ASan build checks the latter).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/xdr.h>

#include <asx/msg.h>
#include <asx/xdr.h>
#include "xdr/xdr_internal.h"

/* ------------------------------------------------------------ helpers */

/* Encode with libtirpc: run @stmt on XDR *t over buf; the length in *len. */
#define TIRPC_ENC(buf, len, stmt)					\
	do {								\
		XDR tx_;						\
		XDR *t = &tx_;						\
		xdrmem_create(t, (char *)(buf), sizeof(buf), XDR_ENCODE); \
		assert_true(stmt);					\
		(len) = xdr_getpos(t);					\
		xdr_destroy(t);						\
	} while (0)

#define ASX_ENC(buf, len, stmt)						\
	do {								\
		struct asx_xdr ax_;					\
		struct asx_xdr *a = &ax_;				\
		asx_xdr_mem_encoder(a, (buf), sizeof(buf));		\
		assert_int_equal((stmt), 0);				\
		assert_int_equal(asx_xdr_error(a), 0);			\
		(len) = (size_t)asx_xdr_pos(a);				\
	} while (0)

static void same_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
	assert_int_equal(alen, blen);
	assert_memory_equal(a, b, alen);
}

static float f_bits(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static double d_bits(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

/* ------------------------------------------------- scalars vs libtirpc */

static void test_scalars_match_tirpc(void **state)
{
	static const int32_t ints[] = { 0, 1, -1, INT32_MIN, INT32_MAX, 0x12345678 };
	static const uint32_t uints[] = { 0, 1, UINT32_MAX, 0x80000000u, 0xdeadbeef };
	static const int64_t hypers[] = { 0, -1, INT64_MIN, INT64_MAX, 0x0102030405060708LL };
	static const uint64_t uhypers[] = { 0, UINT64_MAX, 0x8000000000000000ULL, 0xfedcba9876543210ULL };
	static const uint32_t fbits[] = { 0x7fc00000, 0x7f800001, 0xffc00001, 0x7f800000, 0xff800000,
					  0x80000000, 0x00000001, 0x3f800000 };
	static const uint64_t dbits[] = { 0x7ff8000000000000ULL, 0x7ff0000000000001ULL,
					  0xfff8000000000123ULL, 0x7ff0000000000000ULL,
					  0xfff0000000000000ULL, 0x8000000000000000ULL,
					  0x0000000000000001ULL, 0x3ff0000000000000ULL };
	unsigned char tb[64], ab[64];
	size_t tl, al;
	unsigned int i;

	for (i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		int v = ints[i];
		int32_t w = ints[i];

		TIRPC_ENC(tb, tl, xdr_int(t, &v));
		ASX_ENC(ab, al, asx_xdr_put_i32(a, ints[i]));
		same_bytes(tb, tl, ab, al);
		ASX_ENC(ab, al, asx_xdr_int(a, &w));
		same_bytes(tb, tl, ab, al);
		ASX_ENC(ab, al, asx_xdr_put_enum(a, ints[i]));
		same_bytes(tb, tl, ab, al);
	}
	for (i = 0; i < sizeof(uints) / sizeof(uints[0]); i++) {
		unsigned int v = uints[i];

		TIRPC_ENC(tb, tl, xdr_u_int(t, &v));
		ASX_ENC(ab, al, asx_xdr_put_u32(a, uints[i]));
		same_bytes(tb, tl, ab, al);
	}
	for (i = 0; i < sizeof(hypers) / sizeof(hypers[0]); i++) {
		quad_t v = hypers[i];

		TIRPC_ENC(tb, tl, xdr_hyper(t, &v));
		ASX_ENC(ab, al, asx_xdr_put_i64(a, hypers[i]));
		same_bytes(tb, tl, ab, al);
	}
	for (i = 0; i < sizeof(uhypers) / sizeof(uhypers[0]); i++) {
		u_quad_t v = uhypers[i];

		TIRPC_ENC(tb, tl, xdr_u_hyper(t, &v));
		ASX_ENC(ab, al, asx_xdr_put_u64(a, uhypers[i]));
		same_bytes(tb, tl, ab, al);
	}
	for (i = 0; i < sizeof(fbits) / sizeof(fbits[0]); i++) {
		float v = f_bits(fbits[i]), back;
		struct asx_xdr d;

		TIRPC_ENC(tb, tl, xdr_float(t, &v));
		ASX_ENC(ab, al, asx_xdr_put_float(a, v));
		same_bytes(tb, tl, ab, al);
		asx_xdr_mem_decoder(&d, ab, al);
		assert_int_equal(asx_xdr_get_float(&d, &back), 0);
		assert_memory_equal(&back, &v, 4);	/* NaN payloads survive */
	}
	for (i = 0; i < sizeof(dbits) / sizeof(dbits[0]); i++) {
		double v = d_bits(dbits[i]), back;
		struct asx_xdr d;

		TIRPC_ENC(tb, tl, xdr_double(t, &v));
		ASX_ENC(ab, al, asx_xdr_put_double(a, v));
		same_bytes(tb, tl, ab, al);
		asx_xdr_mem_decoder(&d, ab, al);
		assert_int_equal(asx_xdr_get_double(&d, &back), 0);
		assert_memory_equal(&back, &v, 8);
	}
	for (i = 0; i < 2; i++) {
		bool_t v = (bool_t)i;

		TIRPC_ENC(tb, tl, xdr_bool(t, &v));
		ASX_ENC(ab, al, asx_xdr_put_bool(a, i));
		same_bytes(tb, tl, ab, al);
	}
}

/* The narrow C types of a declared record vs xdr_char/short/long/... */
struct narrow {
	char c;
	unsigned char uc;
	short s;
	unsigned short us;
	long l;
	unsigned long ul;
	bool b;
	int e;
};

ASX_XDR_RECORD_STATIC(narrow_rec, struct narrow,
	ASX_XDR_FIELD(struct narrow, c, ASX_XDR_CHAR),
	ASX_XDR_FIELD(struct narrow, uc, ASX_XDR_UCHAR),
	ASX_XDR_FIELD(struct narrow, s, ASX_XDR_SHORT),
	ASX_XDR_FIELD(struct narrow, us, ASX_XDR_USHORT),
	ASX_XDR_FIELD(struct narrow, l, ASX_XDR_LONG),
	ASX_XDR_FIELD(struct narrow, ul, ASX_XDR_ULONG),
	ASX_XDR_FIELD(struct narrow, b, ASX_XDR_BOOL),
	ASX_XDR_FIELD(struct narrow, e, ASX_XDR_ENUM));

static bool_t tirpc_narrow(XDR *t, struct narrow *n)
{
	bool_t b = n->b;
	enum_t e = n->e;

	return xdr_char(t, &n->c) && xdr_u_char(t, &n->uc) && xdr_short(t, &n->s) &&
	       xdr_u_short(t, &n->us) && xdr_long(t, &n->l) && xdr_u_long(t, &n->ul) &&
	       xdr_bool(t, &b) && xdr_enum(t, &e);
}

static void test_narrow_types_match_tirpc(void **state)
{
	struct narrow v[] = {
		{ CHAR_MIN, 0, SHRT_MIN, 0, INT32_MIN, 0, false, INT_MIN },
		{ CHAR_MAX, UCHAR_MAX, SHRT_MAX, USHRT_MAX, INT32_MAX, UINT32_MAX, true, INT_MAX },
		{ -1, 1, -1, 1, -1, 1, true, -1 },
	};
	unsigned char tb[256], ab[256];
	size_t tl, al;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		struct narrow back;
		struct asx_xdr d;

		TIRPC_ENC(tb, tl, tirpc_narrow(t, &v[i]));
		ASX_ENC(ab, al, asx_xdr_record(a, &narrow_rec, &v[i]));
		same_bytes(tb, tl, ab, al);
		/* both the inline fast path and the field path (array of 1) */
		memset(&back, 0x55, sizeof(back));
		asx_xdr_mem_decoder(&d, ab, al);
		assert_int_equal(asx_xdr_record(&d, &narrow_rec, &back), 0);
		assert_int_equal(back.c, v[i].c);
		assert_int_equal(back.uc, v[i].uc);
		assert_int_equal(back.s, v[i].s);
		assert_int_equal(back.us, v[i].us);
		assert_true(back.l == v[i].l);
		assert_true(back.ul == v[i].ul);
		assert_int_equal(back.b, v[i].b);
		assert_int_equal(back.e, v[i].e);
	}
}

static void test_narrow_range_errors(void **state)
{
	struct narrow n = { 0 }, back;
	unsigned char b[64];
	struct asx_xdr x;
	size_t len;
	unsigned int fld;

	/* a long that does not fit 32 bits cannot be encoded */
	n.l = (long)INT32_MAX + 1;
	asx_xdr_mem_encoder(&x, b, sizeof(b));
	assert_int_equal(asx_xdr_record(&x, &narrow_rec, &n), -ERANGE);
	assert_int_equal(asx_xdr_error(&x), -ERANGE);
	n.l = 0;
	n.ul = (unsigned long)UINT32_MAX + 1;
	asx_xdr_mem_encoder(&x, b, sizeof(b));
	assert_int_equal(asx_xdr_record(&x, &narrow_rec, &n), -ERANGE);
	n.ul = 0;

	/*
	 * out-of-range words for char, uchar, short, ushort, bool -> -EBADMSG;
	 * char is signed on x86-64 (0x80 is out of range) and unsigned on
	 * aarch64 (0x80 is 128, in range; 0x100 is not)
	 */
	for (fld = 0; fld < 7; fld++) {
		static const uint32_t bad[7] = { CHAR_MIN < 0 ? 0x80 : 0x100, 0x100, 0x8000,
						 0x10000, 0, 0, 2 };

		if (fld == 4 || fld == 5)
			continue;
		asx_xdr_mem_encoder(&x, b, sizeof(b));
		assert_int_equal(asx_xdr_record(&x, &narrow_rec, &n), 0);
		len = (size_t)asx_xdr_pos(&x);
		b[fld * 4 + 0] = (unsigned char)(bad[fld] >> 24);
		b[fld * 4 + 1] = (unsigned char)(bad[fld] >> 16);
		b[fld * 4 + 2] = (unsigned char)(bad[fld] >> 8);
		b[fld * 4 + 3] = (unsigned char)bad[fld];
		asx_xdr_mem_decoder(&x, b, len);
		assert_int_equal(asx_xdr_record(&x, &narrow_rec, &back), -EBADMSG);
	}
}

/* -------------------------------------------- opaque, strings, arrays */

static void test_opaque_string_padding(void **state)
{
	unsigned char src[16], tb[64], ab[64], back[16];
	char str[16], sback[16];
	size_t tl, al, n;

	for (n = 0; n < sizeof(src); n++)
		src[n] = (unsigned char)(0xa0 + n);
	for (n = 0; n <= 9; n++) {
		unsigned int tlen = (unsigned int)n;
		char *sp = str;
		uint32_t blen;
		struct asx_xdr d;

		TIRPC_ENC(tb, tl, xdr_opaque(t, (char *)src, (u_int)n));
		ASX_ENC(ab, al, asx_xdr_put_opaque(a, src, n));
		same_bytes(tb, tl, ab, al);
		asx_xdr_mem_decoder(&d, ab, al);
		assert_int_equal(asx_xdr_get_opaque(&d, back, n), 0);
		assert_memory_equal(back, src, n);
		assert_int_equal(asx_xdr_pos(&d), al);

		{
			char *bp = (char *)src;

			TIRPC_ENC(tb, tl, xdr_bytes(t, &bp, &tlen, 16));
		}
		ASX_ENC(ab, al, asx_xdr_put_bytes(a, src, n));
		same_bytes(tb, tl, ab, al);
		asx_xdr_mem_decoder(&d, ab, al);
		assert_int_equal(asx_xdr_get_bytes(&d, back, sizeof(back), &blen), 0);
		assert_int_equal(blen, n);
		assert_memory_equal(back, src, n);

		memset(str, 0, sizeof(str));
		memset(str, 'a' + (int)n, n);
		TIRPC_ENC(tb, tl, xdr_string(t, &sp, 16));
		ASX_ENC(ab, al, asx_xdr_put_string(a, str));
		same_bytes(tb, tl, ab, al);
		asx_xdr_mem_decoder(&d, ab, al);
		assert_int_equal(asx_xdr_get_string(&d, sback, sizeof(sback)), 0);
		assert_string_equal(sback, str);
	}
}

static void test_arrays_match_tirpc(void **state)
{
	static int32_t iv[80], iback[80];
	static double dv[40], dback[40];
	unsigned char tb[1024], ab[1024];
	size_t tl, al, n;
	int simd;

	for (n = 0; n < 80; n++)
		iv[n] = (int32_t)(n * 0x01020304u + 0x80000000u);
	for (n = 0; n < 40; n++)
		dv[n] = (double)n * -1.5e300 + 0.25;
	for (simd = 0; simd < 2; simd++) {
		asx_xdr_set_simd(simd);
		for (n = 0; n <= 70; n++) {
			struct asx_xdr d;

			TIRPC_ENC(tb, tl, xdr_vector(t, (char *)iv, (u_int)n, sizeof(int),
						     (xdrproc_t)xdr_int));
			ASX_ENC(ab, al, asx_xdr_put_i32_array(a, iv, n));
			same_bytes(tb, tl, ab, al);
			memset(iback, 0, sizeof(iback));
			asx_xdr_mem_decoder(&d, ab, al);
			assert_int_equal(asx_xdr_get_i32_array(&d, iback, n), 0);
			assert_memory_equal(iback, iv, n * 4);
		}
		for (n = 0; n <= 40; n++) {
			struct asx_xdr d;

			TIRPC_ENC(tb, tl, xdr_vector(t, (char *)dv, (u_int)n, sizeof(double),
						     (xdrproc_t)xdr_double));
			ASX_ENC(ab, al, asx_xdr_put_double_array(a, dv, n));
			same_bytes(tb, tl, ab, al);
			asx_xdr_mem_decoder(&d, ab, al);
			assert_int_equal(asx_xdr_get_double_array(&d, dback, n), 0);
			assert_memory_equal(dback, dv, n * 8);
		}
	}
	asx_xdr_set_simd(1);
	/* in place (d == s), both implementations */
	for (simd = 0; simd < 2; simd++) {
		uint32_t w[37];

		asx_xdr_set_simd(simd);
		for (n = 0; n < 37; n++)
			w[n] = (uint32_t)n * 0x01010101u;
		asx__xdr_bswap32(w, w, 37);
		for (n = 0; n < 37; n++)
			assert_int_equal(w[n], __builtin_bswap32((uint32_t)n * 0x01010101u));
	}
	asx_xdr_set_simd(1);
}

static int code_int(struct asx_xdr *x, void *obj)
{
	return asx_xdr_int(x, obj);
}

static void test_var_array_match_tirpc(void **state)
{
	int32_t v[10] = { 5, -5, INT32_MIN, 7, 8, 9, 10, 11, 12, 13 }, back[10];
	unsigned char tb[256], ab[256];
	size_t tl, al;
	uint32_t n = 6, bn = 0;
	struct asx_xdr d;

	{
		char *vp = (char *)v;
		u_int tn = 6;

		TIRPC_ENC(tb, tl, xdr_array(t, &vp, &tn, 10, sizeof(int), (xdrproc_t)xdr_int));
	}
	ASX_ENC(ab, al, asx_xdr_array(a, v, &n, 10, sizeof(int32_t), code_int));
	same_bytes(tb, tl, ab, al);
	asx_xdr_mem_decoder(&d, ab, al);
	assert_int_equal(asx_xdr_array(&d, back, &bn, 10, sizeof(int32_t), code_int), 0);
	assert_int_equal(bn, 6);
	assert_memory_equal(back, v, 6 * 4);
	/* more elements than the caller's maximum */
	asx_xdr_mem_decoder(&d, ab, al);
	assert_int_equal(asx_xdr_array(&d, back, &bn, 5, sizeof(int32_t), code_int), -EMSGSIZE);
	/* encode with a count above the maximum */
	n = 11;
	asx_xdr_mem_encoder(&d, ab, sizeof(ab));
	assert_int_equal(asx_xdr_array(&d, v, &n, 10, sizeof(int32_t), code_int), -EMSGSIZE);
}

/* ------------------------------------ declared records: every feature */

struct point {
	int32_t x, y;
};

ASX_XDR_RECORD_STATIC(point_rec, struct point,
	ASX_XDR_FIELD(struct point, x, ASX_XDR_INT),
	ASX_XDR_FIELD(struct point, y, ASX_XDR_INT));

/* union shape switch (kind) { case 1: point p; case 2: double r; case 3: void; } */
struct shape {
	int32_t kind;
	union {
		struct point p;
		double r;
	} u;
};

static const struct asx_xdr_arm shape_arms[] = {
	{ 1, { .offset = 0, .type = ASX_XDR_STRUCT, .count = 1, .sub.rec = &point_rec } },
	{ 2, { .offset = 0, .type = ASX_XDR_DOUBLE, .count = 1 } },
	{ 3, { .type = 0 } },
};
static const struct asx_xdr_union shape_un = { .narms = 3, .arms = shape_arms };

struct big {
	uint64_t id;
	float f[5];
	double d[3];
	int32_t vals[8];
	uint32_t nvals;
	unsigned char blob[7];
	unsigned char data[20];
	uint32_t ndata;
	char name[12];
	bool has_origin;
	struct point origin;
	struct shape shape;
	struct point pts[3];
};

ASX_XDR_RECORD_STATIC(big_rec, struct big,
	ASX_XDR_FIELD(struct big, id, ASX_XDR_UHYPER),
	ASX_XDR_FIELD_ARRAY(struct big, f, ASX_XDR_FLOAT),
	ASX_XDR_FIELD_ARRAY(struct big, d, ASX_XDR_DOUBLE),
	ASX_XDR_FIELD_VARRAY(struct big, vals, ASX_XDR_INT, nvals),
	ASX_XDR_FIELD_OPAQUE(struct big, blob),
	ASX_XDR_FIELD_BYTES(struct big, data, ndata),
	ASX_XDR_FIELD_STRING(struct big, name),
	ASX_XDR_FIELD_OPTIONAL(struct big, origin, point_rec, has_origin),
	ASX_XDR_FIELD_UNION(struct big, shape.u, shape.kind, shape_un),
	ASX_XDR_FIELD_STRUCT_ARRAY(struct big, pts, point_rec));

/* Arrays of records by macro, byte-exact with libtirpc's xdr_vector and xdr_array. */
struct poly {
	struct point box[2];
	uint32_t npts;
	struct point pts[4];
};

ASX_XDR_RECORD_STATIC(poly_rec, struct poly,
	ASX_XDR_FIELD_STRUCT_ARRAY(struct poly, box, point_rec),
	ASX_XDR_FIELD_STRUCT_VARRAY(struct poly, pts, point_rec, npts));

static bool_t tirpc_point(XDR *t, struct point *p);

static void test_record_arrays_of_records(void **state)
{
	struct poly in = { { { 1, -2 }, { 3, 4 } }, 3, { { 5, 6 }, { -7, 8 }, { 9, 10 } } };
	struct poly out;
	unsigned char a[128], b[128];
	char *pp = (char *)in.pts;
	u_int n = in.npts;
	struct asx_xdr x;
	XDR t;
	size_t len;

	(void)state;
	asx_xdr_mem_encoder(&x, a, sizeof(a));
	assert_int_equal(asx_xdr_record(&x, &poly_rec, &in), 0);
	len = (size_t)asx_xdr_pos(&x);
	assert_int_equal(len, 4 * (4 + 1 + 6));
	xdrmem_create(&t, (char *)b, sizeof(b), XDR_ENCODE);
	assert_true(xdr_vector(&t, (char *)in.box, 2, sizeof(struct point), (xdrproc_t)tirpc_point));
	assert_true(xdr_array(&t, &pp, &n, 4, sizeof(struct point), (xdrproc_t)tirpc_point));
	assert_int_equal(xdr_getpos(&t), len);
	xdr_destroy(&t);
	assert_memory_equal(a, b, len);

	memset(&out, 0xa5, sizeof(out));
	asx_xdr_mem_decoder(&x, a, len);
	assert_int_equal(asx_xdr_record(&x, &poly_rec, &out), 0);
	assert_int_equal(out.npts, 3);
	assert_memory_equal(out.box, in.box, sizeof(in.box));
	assert_memory_equal(out.pts, in.pts, 3 * sizeof(struct point));

	/* a count above the capacity (4) is refused both ways */
	a[16 + 3] = 5;
	asx_xdr_mem_decoder(&x, a, sizeof(a));
	assert_int_equal(asx_xdr_record(&x, &poly_rec, &out), -EMSGSIZE);
	in.npts = 5;
	asx_xdr_mem_encoder(&x, a, sizeof(a));
	assert_int_equal(asx_xdr_record(&x, &poly_rec, &in), -EMSGSIZE);
}

static bool_t tirpc_point(XDR *t, struct point *p)
{
	return xdr_int(t, &p->x) && xdr_int(t, &p->y);
}

static bool_t tirpc_void(XDR *t, void *p)
{
	return TRUE;
}

static bool_t tirpc_shape(XDR *t, struct shape *s)
{
	static const struct xdr_discrim arms[] = {
		{ 1, (xdrproc_t)tirpc_point },
		{ 2, (xdrproc_t)xdr_double },
		{ 3, (xdrproc_t)tirpc_void },
		{ __dontcare__, NULL },
	};

	return xdr_union(t, (enum_t *)&s->kind, (char *)&s->u, arms, NULL);
}

static bool_t tirpc_big(XDR *t, struct big *b)
{
	u_quad_t id = b->id;
	char *vp = (char *)b->vals, *dp = (char *)b->data, *np = b->name;
	struct point *op = b->has_origin ? &b->origin : NULL;
	u_int nv = b->nvals, nd = b->ndata;

	return xdr_u_hyper(t, &id) &&
	       xdr_vector(t, (char *)b->f, 5, sizeof(float), (xdrproc_t)xdr_float) &&
	       xdr_vector(t, (char *)b->d, 3, sizeof(double), (xdrproc_t)xdr_double) &&
	       xdr_array(t, &vp, &nv, 8, sizeof(int), (xdrproc_t)xdr_int) &&
	       xdr_opaque(t, (char *)b->blob, 7) &&
	       xdr_bytes(t, &dp, &nd, 20) &&
	       xdr_string(t, &np, 11) &&
	       xdr_pointer(t, (char **)&op, sizeof(struct point), (xdrproc_t)tirpc_point) &&
	       tirpc_shape(t, &b->shape) &&
	       xdr_vector(t, (char *)b->pts, 3, sizeof(struct point), (xdrproc_t)tirpc_point);
}

static void make_big(struct big *b, int i)
{
	int k;

	memset(b, 0, sizeof(*b));
	b->id = 0x1122334455667788ULL + (uint64_t)i;
	for (k = 0; k < 5; k++)
		b->f[k] = (float)(i * 10 + k) / 3.0f;
	for (k = 0; k < 3; k++)
		b->d[k] = -(double)(i + k) * 1e-3;
	b->nvals = (uint32_t)(i % 9);
	for (k = 0; k < (int)b->nvals; k++)
		b->vals[k] = i * 1000 - k;
	memcpy(b->blob, "\x01\x02\x03\x04\x05\x06\x07", 7);
	b->ndata = (uint32_t)(i % 21);
	for (k = 0; k < (int)b->ndata; k++)
		b->data[k] = (unsigned char)(i + k);
	memset(b->name, 'n', (size_t)(i % 12));
	b->has_origin = i & 1;
	if (b->has_origin) {
		b->origin.x = i;
		b->origin.y = -i;
	}
	b->shape.kind = 1 + i % 3;
	if (b->shape.kind == 1) {
		b->shape.u.p.x = 7 * i;
		b->shape.u.p.y = 9;
	} else if (b->shape.kind == 2) {
		b->shape.u.r = 2.5 * i;
	}
	for (k = 0; k < 3; k++) {
		b->pts[k].x = k;
		b->pts[k].y = i;
	}
}

/* Compare what XDR carries (unused tails of arrays are not carried). */
static void same_big(const struct big *a, const struct big *b)
{
	assert_true(a->id == b->id);
	assert_memory_equal(a->f, b->f, sizeof(a->f));
	assert_memory_equal(a->d, b->d, sizeof(a->d));
	assert_int_equal(a->nvals, b->nvals);
	assert_memory_equal(a->vals, b->vals, a->nvals * 4);
	assert_memory_equal(a->blob, b->blob, 7);
	assert_int_equal(a->ndata, b->ndata);
	assert_memory_equal(a->data, b->data, a->ndata);
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->has_origin, b->has_origin);
	if (a->has_origin)
		assert_memory_equal(&a->origin, &b->origin, sizeof(a->origin));
	assert_int_equal(a->shape.kind, b->shape.kind);
	if (a->shape.kind == 1)
		assert_memory_equal(&a->shape.u.p, &b->shape.u.p, sizeof(struct point));
	if (a->shape.kind == 2)
		assert_true(a->shape.u.r == b->shape.u.r);
	assert_memory_equal(a->pts, b->pts, sizeof(a->pts));
}

#define NBIG 24

static unsigned char big_ref[NBIG * 512];
static size_t big_ref_len;
static struct big bigs[NBIG];

/* libtirpc's encoding of bigs[], the reference for every target. */
static void big_reference(void)
{
	XDR t;
	int i;

	for (i = 0; i < NBIG; i++)
		make_big(&bigs[i], i);
	xdrmem_create(&t, (char *)big_ref, sizeof(big_ref), XDR_ENCODE);
	for (i = 0; i < NBIG; i++)
		assert_true(tirpc_big(&t, &bigs[i]));
	big_ref_len = xdr_getpos(&t);
	xdr_destroy(&t);
}

static void decode_bigs_check(struct asx_xdr *d)
{
	static struct big back[NBIG];
	int i;

	memset(back, 0xee, sizeof(back));
	assert_int_equal(asx_xdr_records(d, &big_rec, back, NBIG), 0);
	for (i = 0; i < NBIG; i++)
		same_big(&bigs[i], &back[i]);
}

static void test_record_mem_bounded(void **state)
{
	static unsigned char buf[NBIG * 512];
	struct asx_xdr x;
	int i;

	big_reference();
	asx_xdr_mem_encoder(&x, buf, sizeof(buf));
	assert_int_equal(asx_xdr_records(&x, &big_rec, bigs, NBIG), 0);
	same_bytes(big_ref, big_ref_len, buf, (size_t)asx_xdr_pos(&x));
	/* one by one gives the same bytes */
	asx_xdr_mem_encoder(&x, buf, sizeof(buf));
	for (i = 0; i < NBIG; i++)
		assert_int_equal(asx_xdr_record(&x, &big_rec, &bigs[i]), 0);
	same_bytes(big_ref, big_ref_len, buf, (size_t)asx_xdr_pos(&x));
	asx_xdr_mem_decoder(&x, big_ref, big_ref_len);
	decode_bigs_check(&x);
	assert_int_equal(asx_xdr_pos(&x), big_ref_len);
	/* a bounded buffer one byte short fails with -EMSGSIZE */
	asx_xdr_mem_encoder(&x, buf, big_ref_len - 1);
	assert_int_equal(asx_xdr_records(&x, &big_rec, bigs, NBIG), -EMSGSIZE);
	assert_int_equal(asx_xdr_put_u32(&x, 1), -EMSGSIZE);	/* sticky */
}

static void test_record_mem_growing(void **state)
{
	struct asx_xdr x;
	size_t len;
	void *p;

	big_reference();
	assert_int_equal(asx_xdr_mem_grow_encoder(&x, 1, 1 << 20), 0);
	assert_int_equal(asx_xdr_records(&x, &big_rec, bigs, NBIG), 0);
	p = asx_xdr_mem_data(&x, &len);
	same_bytes(big_ref, big_ref_len, p, len);
	p = asx_xdr_mem_detach(&x, &len);
	assert_non_null(p);
	free(p);
	/* the maximum is enforced */
	assert_int_equal(asx_xdr_mem_grow_encoder(&x, 16, big_ref_len - 4), 0);
	assert_int_equal(asx_xdr_records(&x, &big_rec, bigs, NBIG), -EMSGSIZE);
	asx_xdr_fini(&x);
	/* exactly enough */
	assert_int_equal(asx_xdr_mem_grow_encoder(&x, 16, big_ref_len), 0);
	assert_int_equal(asx_xdr_records(&x, &big_rec, bigs, NBIG), 0);
	asx_xdr_fini(&x);
}

/* ------------------------------------------------- optional data by pointer */

/* struct located { int32 id; point *at; int32 tail; }: RFC 4506 "point *at" */
struct located {
	int32_t id;
	struct point *at;
	int32_t tail;
};

ASX_XDR_RECORD_STATIC(located_rec, struct located,
	ASX_XDR_FIELD(struct located, id, ASX_XDR_INT),
	ASX_XDR_FIELD_POINTER(struct located, at, point_rec),
	ASX_XDR_FIELD(struct located, tail, ASX_XDR_INT));

static bool_t tirpc_located(XDR *t, struct located *l)
{
	return xdr_int(t, &l->id) &&
	       xdr_pointer(t, (char **)&l->at, sizeof(struct point), (xdrproc_t)tirpc_point) &&
	       xdr_int(t, &l->tail);
}

static void test_pointer_round_trip(void **state)
{
	struct point p = { -7, 9 }, store = { 0, 0 };
	struct located v[2] = { { 1, &p, 2 }, { 3, NULL, 4 } }, w[2];
	unsigned char ref[64], buf[64];
	size_t ref_len = 0, len = 0;
	struct asx_xdr x;

	/* the bytes libtirpc's xdr_pointer makes, for present and absent */
	TIRPC_ENC(ref, ref_len, tirpc_located(t, &v[0]) && tirpc_located(t, &v[1]));
	ASX_ENC(buf, len, asx_xdr_records(a, &located_rec, v, 2));
	same_bytes(ref, ref_len, buf, len);
	assert_int_equal(len, 4 + 4 + 8 + 4 + 4 + 4 + 4);

	/* decode: into the caller's storage, or NULL */
	w[0].at = &store;
	w[1].at = &store;		/* absent on the wire: becomes NULL */
	asx_xdr_mem_decoder(&x, buf, len);
	assert_int_equal(asx_xdr_records(&x, &located_rec, w, 2), 0);
	assert_int_equal(asx_xdr_pos(&x), len);
	assert_int_equal(w[0].id, 1);
	assert_ptr_equal(w[0].at, &store);
	assert_int_equal(store.x, -7);
	assert_int_equal(store.y, 9);
	assert_int_equal(w[0].tail, 2);
	assert_int_equal(w[1].id, 3);
	assert_null(w[1].at);
	assert_int_equal(w[1].tail, 4);
}

static void test_pointer_bad_input(void **state)
{
	struct point store;
	struct located w = { 0, &store, 0 };
	unsigned char buf[64];
	struct asx_xdr x;

	/* a discriminant that is neither FALSE nor TRUE */
	memcpy(buf, (const unsigned char[]){ 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 5 }, 12);
	asx_xdr_mem_decoder(&x, buf, 12);
	assert_int_equal(asx_xdr_record(&x, &located_rec, &w), -EBADMSG);
	assert_int_equal(asx_xdr_error(&x), -EBADMSG);
	assert_ptr_equal(w.at, &store);			/* left as it was */
	/* present, but no storage to decode into */
	memcpy(buf, (const unsigned char[]){ 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 5,
					     0, 0, 0, 6, 0, 0, 0, 7 }, 20);
	w.at = NULL;
	asx_xdr_mem_decoder(&x, buf, 20);
	assert_int_equal(asx_xdr_record(&x, &located_rec, &w), -EMSGSIZE);
	/* truncated after the discriminant */
	w.at = &store;
	asx_xdr_mem_decoder(&x, buf, 12);
	assert_int_equal(asx_xdr_record(&x, &located_rec, &w), -EBADMSG);
	/* raw mode cannot carry a pointer */
	asx_xdr_mem_encoder(&x, buf, sizeof(buf));
	asx_xdr_off(&x);
	assert_int_equal(asx_xdr_record(&x, &located_rec, &w), -EINVAL);
}

/* A linked list, the record pointing to its own type. */
struct node {
	int32_t v;
	struct node *next;
};
static const struct asx_xdr_record node_rec;
ASX_XDR_RECORD_STATIC(node_rec, struct node,
	ASX_XDR_FIELD(struct node, v, ASX_XDR_INT),
	ASX_XDR_FIELD_POINTER(struct node, next, node_rec));

static bool_t tirpc_node(XDR *t, struct node *n)
{
	return xdr_int(t, &n->v) &&
	       xdr_pointer(t, (char **)&n->next, sizeof(struct node), (xdrproc_t)tirpc_node);
}

static void test_pointer_list(void **state)
{
	enum { N = ASX_XDR_PTR_DEPTH_MAX + 2 };
	static struct node list[N], out[N];
	static unsigned char ref[N * 12], buf[N * 12];
	size_t ref_len = 0, len = 0;
	struct asx_xdr x;
	int i;

	/* ASX_XDR_PTR_DEPTH_MAX pointers: the longest chain */
	for (i = 0; i < N - 1; i++) {
		list[i].v = i * 3 - 50;
		list[i].next = i + 1 < N - 1 ? &list[i + 1] : NULL;
		out[i].next = &out[i + 1];	/* storage for the decoder */
	}
	TIRPC_ENC(ref, ref_len, tirpc_node(t, &list[0]));
	ASX_ENC(buf, len, asx_xdr_record(a, &node_rec, &list[0]));
	same_bytes(ref, ref_len, buf, len);
	asx_xdr_mem_decoder(&x, buf, len);
	assert_int_equal(asx_xdr_record(&x, &node_rec, &out[0]), 0);
	for (i = 0; i < N - 1; i++) {
		assert_int_equal(out[i].v, i * 3 - 50);
		if (i + 1 < N - 1)
			assert_ptr_equal(out[i].next, &out[i + 1]);
	}
	assert_null(out[N - 2].next);
	/* one more is refused, and so is a cycle (instead of a stack overflow) */
	list[N - 2].next = &list[N - 1];
	asx_xdr_mem_encoder(&x, buf, sizeof(buf));
	assert_int_equal(asx_xdr_record(&x, &node_rec, &list[0]), -EMSGSIZE);
	list[N - 2].next = &list[0];
	asx_xdr_mem_encoder(&x, buf, sizeof(buf));
	assert_int_equal(asx_xdr_record(&x, &node_rec, &list[0]), -EMSGSIZE);
	/* the depth count was unwound: a short list codes again */
	list[1].next = NULL;
	asx_xdr_mem_encoder(&x, buf, sizeof(buf));
	assert_int_equal(asx_xdr_record(&x, &node_rec, &list[0]), 0);
	assert_int_equal(asx_xdr_pos(&x), 2 * 8);		/* v, TRUE, v, FALSE */
}

static void test_record_msg_chain(void **state)
{
	static const size_t blocks[] = { 64, 65, 100, 4096 };
	unsigned int i;

	big_reference();
	for (i = 0; i < sizeof(blocks) / sizeof(blocks[0]); i++) {
		struct asx_xdr x;
		struct asx_msg *m, *pre;
		unsigned char *flat;

		assert_int_equal(asx_xdr_msg_encoder(&x, NULL, blocks[i]), 0);
		assert_int_equal(asx_xdr_records(&x, &big_rec, bigs, NBIG), 0);
		m = asx_xdr_msg_finish(&x);
		assert_non_null(m);
		assert_int_equal(asx_msg_length(m), big_ref_len);
		if (blocks[i] < 100)
			assert_true(asx_msg_blocks(m) > 10);
		flat = malloc(big_ref_len);
		assert_int_equal(asx_msg_read(m, 0, flat, big_ref_len), big_ref_len);
		same_bytes(big_ref, big_ref_len, flat, big_ref_len);
		free(flat);
		asx_xdr_msg_decoder(&x, m);
		decode_bigs_check(&x);
		/* nothing left: one more word is a truncation */
		{
			uint32_t w;

			assert_int_equal(asx_xdr_get_u32(&x, &w), -EBADMSG);
		}
		asx_msg_free_chain(m);

		/* appending after existing data of a caller's message */
		pre = asx_msg_alloc(32, ASX_MSG_DATA);
		assert_non_null(pre);
		assert_int_equal(asx_msg_append(pre, "HDR!", 4), 0);
		assert_int_equal(asx_xdr_msg_encoder(&x, pre, blocks[i]), 0);
		assert_int_equal(asx_xdr_records(&x, &big_rec, bigs, 3), 0);
		assert_ptr_equal(asx_xdr_msg_finish(&x), pre);
		assert_int_equal(asx_msg_consume(pre, 4), 0);
		asx_xdr_msg_decoder(&x, pre);
		{
			static struct big back[3];

			assert_int_equal(asx_xdr_records(&x, &big_rec, back, 3), 0);
			same_big(&bigs[2], &back[2]);
		}
		asx_msg_free_chain(pre);
	}
	/* an unfinished chain is freed by fini (ASan checks the leak) */
	{
		struct asx_xdr x;

		assert_int_equal(asx_xdr_msg_encoder(&x, NULL, 64), 0);
		assert_int_equal(asx_xdr_records(&x, &big_rec, bigs, 4), 0);
		asx_xdr_fini(&x);
	}
}

/* Every strict prefix of a valid encoding is a truncation: -EBADMSG. */
static void test_truncated_inputs(void **state)
{
	size_t cut;

	big_reference();
	for (cut = 0; cut < 600 && cut < big_ref_len; cut++) {
		static struct big back[NBIG];
		unsigned char *copy = malloc(cut ? cut : 1);
		struct asx_xdr x;
		int ret;

		memcpy(copy, big_ref, cut);
		asx_xdr_mem_decoder(&x, copy, cut);
		ret = asx_xdr_records(&x, &big_rec, back, NBIG);
		assert_int_equal(ret, -EBADMSG);
		free(copy);
	}
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static void test_lying_lengths(void **state)
{
	unsigned char b[64], dst[64];
	struct asx_xdr x;
	uint32_t len;
	char s[8];

	memset(b, 0, sizeof(b));
	/* a length larger than the input */
	put_be32(b, 40);
	asx_xdr_mem_decoder(&x, b, 16);
	assert_int_equal(asx_xdr_get_bytes(&x, dst, sizeof(dst), &len), -EBADMSG);
	/* a length larger than the caller's capacity */
	put_be32(b, 20);
	asx_xdr_mem_decoder(&x, b, 64);
	assert_int_equal(asx_xdr_get_bytes(&x, dst, 16, &len), -EMSGSIZE);
	/* a length larger than the stream's limit */
	asx_xdr_mem_decoder(&x, b, 64);
	asx_xdr_set_limit(&x, 8);
	assert_int_equal(asx_xdr_get_bytes(&x, dst, 64, &len), -EMSGSIZE);
	/* a huge length (sign bit) */
	put_be32(b, 0xfffffffcu);
	asx_xdr_mem_decoder(&x, b, 64);
	assert_int_equal(asx_xdr_get_bytes(&x, dst, SIZE_MAX, &len), -EMSGSIZE);
	asx_xdr_mem_decoder(&x, b, 64);
	asx_xdr_set_limit(&x, SIZE_MAX);
	assert_int_equal(asx_xdr_get_bytes(&x, dst, SIZE_MAX, &len), -EBADMSG);
	/* strings: room for the NUL is needed */
	put_be32(b, 8);
	memset(b + 4, 'x', 8);
	asx_xdr_mem_decoder(&x, b, 64);
	assert_int_equal(asx_xdr_get_string(&x, s, 8), -EMSGSIZE);
	/* a count of elements that cannot fit in what is left */
	put_be32(b, 1000);
	asx_xdr_mem_decoder(&x, b, 64);
	asx_xdr_set_limit(&x, SIZE_MAX);
	assert_int_equal(asx_xdr_get_count(&x, &len, SIZE_MAX, 4), -EBADMSG);
	/* var array in a record: count above capacity, count beyond input */
	{
		static struct big one, back;
		unsigned char enc[512];

		big_reference();
		one = bigs[5];
		asx_xdr_mem_encoder(&x, enc, sizeof(enc));
		assert_int_equal(asx_xdr_record(&x, &big_rec, &one), 0);
		/* nvals sits after id (8), f (20), d (24) */
		put_be32(enc + 52, 9);
		asx_xdr_mem_decoder(&x, enc, sizeof(enc));
		assert_int_equal(asx_xdr_record(&x, &big_rec, &back), -EMSGSIZE);
		/* union discriminant without an arm */
		asx_xdr_mem_encoder(&x, enc, sizeof(enc));
		one.shape.kind = 9;
		assert_int_equal(asx_xdr_record(&x, &big_rec, &one), -EINVAL);
	}
	/* a bool that is neither 0 nor 1 */
	{
		bool bv;

		put_be32(b, 2);
		asx_xdr_mem_decoder(&x, b, 4);
		assert_int_equal(asx_xdr_get_bool(&x, &bv), -EBADMSG);
	}
}

static void test_mode_switch(void **state)
{
	unsigned char b[256];
	struct asx_xdr x;
	struct point p = { 1, -2 }, back[2];
	uint32_t w;
	size_t len;

	asx_xdr_mem_encoder(&x, b, sizeof(b));
	assert_int_equal(asx_xdr_put_u32(&x, 7), 0);
	assert_int_equal(asx_xdr_off(&x), ASX_XDR_MODE_XDR);
	assert_int_equal(asx_raw_put(&x, "raw!", 4), 0);
	assert_int_equal(asx_xdr_record(&x, &point_rec, &p), 0);	/* native bytes */
	assert_int_equal(asx_xdr_on(&x), ASX_XDR_MODE_RAW);
	assert_int_equal(asx_xdr_record(&x, &point_rec, &p), 0);	/* XDR */
	len = (size_t)asx_xdr_pos(&x);
	assert_int_equal(len, 4 + 4 + sizeof(p) + 8);
	assert_memory_equal(b + 8, &p, sizeof(p));

	asx_xdr_mem_decoder(&x, b, len);
	assert_int_equal(asx_xdr_get_u32(&x, &w), 0);
	assert_int_equal(w, 7);
	/* the raw part read in XDR mode: the clear, distinct error */
	{
		struct asx_xdr y = x;
		char r[4];

		assert_int_equal(asx_raw_get(&y, r, 4), -EPROTOTYPE);
		assert_int_equal(asx_xdr_error(&y), -EPROTOTYPE);
	}
	asx_xdr_off(&x);
	{
		struct asx_xdr y = x;

		assert_int_equal(asx_xdr_get_u32(&y, &w), -EPROTOTYPE);
		y = x;
		assert_int_equal(asx_xdr_get_bool(&y, &(bool){ 0 }), -EPROTOTYPE);
		y = x;
		assert_int_equal(asx_xdr_get_opaque(&y, b, 1), -EPROTOTYPE);
	}
	{
		char r[4];

		assert_int_equal(asx_raw_get(&x, r, 4), 0);
		assert_memory_equal(r, "raw!", 4);
	}
	assert_int_equal(asx_xdr_record(&x, &point_rec, &back[0]), 0);
	asx_xdr_on(&x);
	assert_int_equal(asx_xdr_record(&x, &point_rec, &back[1]), 0);
	assert_memory_equal(&back[0], &p, sizeof(p));
	assert_memory_equal(&back[1], &p, sizeof(p));

	/* direction errors */
	asx_xdr_mem_decoder(&x, b, len);
	assert_int_equal(asx_xdr_put_u32(&x, 1), -EINVAL);
	asx_xdr_mem_encoder(&x, b, sizeof(b));
	assert_int_equal(asx_xdr_get_u32(&x, &w), -EINVAL);
}


/* ------------------------------- ASX_XDR_DEFINE: generated inline codecs */

struct gfoo {
	long l;
	short s;
	char c;
	unsigned char uc;
	unsigned short us;
	bool b;
	int e;
	float f;
	double d;
	int64_t h;
	uint64_t uh;
	uint32_t u;
	int32_t i;
	unsigned long ul;
	unsigned char buf[13];
};

#define GFOO_FIELDS(X) X(LONG, l) X(SHORT, s) X(CHAR, c) X(UCHAR, uc) X(USHORT, us) \
	X(BOOL, b) X(ENUM, e) X(FLOAT, f) X(DOUBLE, d) X(HYPER, h) X(UHYPER, uh) \
	X(UINT, u) X(INT, i) X(ULONG, ul) X(OPAQUE, buf)
ASX_XDR_DEFINE(gfoo, struct gfoo, GFOO_FIELDS)

static bool_t tirpc_gfoo(XDR *t, struct gfoo *g)
{
	bool_t b = g->b;
	enum_t e = g->e;
	quad_t h = g->h;
	u_quad_t uh = g->uh;

	return xdr_long(t, &g->l) && xdr_short(t, &g->s) && xdr_char(t, &g->c) &&
	       xdr_u_char(t, &g->uc) && xdr_u_short(t, &g->us) && xdr_bool(t, &b) &&
	       xdr_enum(t, &e) && xdr_float(t, &g->f) && xdr_double(t, &g->d) &&
	       xdr_hyper(t, &h) && xdr_u_hyper(t, &uh) && xdr_u_int(t, &g->u) &&
	       xdr_int(t, &g->i) && xdr_u_long(t, &g->ul) && xdr_opaque(t, (char *)g->buf, 13);
}

static void make_gfoo(struct gfoo *g, int i)
{
	memset(g, 0, sizeof(*g));
	g->l = i & 1 ? INT32_MIN + i : INT32_MAX - i;
	g->s = (short)(i & 1 ? SHRT_MIN + i : SHRT_MAX - i);
	g->c = (char)(i & 1 ? CHAR_MIN : CHAR_MAX);
	g->uc = (unsigned char)(255 - i);
	g->us = (unsigned short)(65535 - i);
	g->b = i & 1;
	g->e = -i;
	g->f = f_bits(0x7fc00000u + (uint32_t)i);
	g->d = d_bits(0xfff0000000000000ULL + (uint64_t)i);
	g->h = INT64_MIN + i;
	g->uh = UINT64_MAX - (uint64_t)i;
	g->u = UINT32_MAX - (uint32_t)i;
	g->i = INT32_MIN + i;
	g->ul = UINT32_MAX - (unsigned long)i;
	memset(g->buf, i, 13);
}

static void test_define_codec(void **state)
{
	static struct gfoo g[20], back[20];
	static unsigned char tb[4096], ab[4096];
	size_t tl, al;
	struct asx_xdr d;
	struct asx_msg *m;
	int i;

	for (i = 0; i < 20; i++)
		make_gfoo(&g[i], i);
	{
		XDR tx;

		xdrmem_create(&tx, (char *)tb, sizeof(tb), XDR_ENCODE);
		for (i = 0; i < 20; i++)
			assert_true(tirpc_gfoo(&tx, &g[i]));
		tl = xdr_getpos(&tx);
	}
	ASX_ENC(ab, al, gfoo_xdr_encode(a, g, 20));
	same_bytes(tb, tl, ab, al);
	ASX_ENC(ab, al, asx_xdr_records(a, gfoo_xdr_record(), g, 20));
	same_bytes(tb, tl, ab, al);
	memset(back, 0, sizeof(back));
	asx_xdr_mem_decoder(&d, ab, al);
	assert_int_equal(gfoo_xdr_decode(&d, back, 20), 0);
	assert_memory_equal(back, g, sizeof(g));
	/* through 64-byte message blocks: records straddle, the table path takes over */
	assert_int_equal(asx_xdr_msg_encoder(&d, NULL, 64), 0);
	assert_int_equal(gfoo_xdr_encode(&d, g, 20), 0);
	m = asx_xdr_msg_finish(&d);
	assert_int_equal(asx_msg_length(m), tl);
	memset(back, 0, sizeof(back));
	asx_xdr_msg_decoder(&d, m);
	assert_int_equal(gfoo_xdr_decode(&d, back, 20), 0);
	assert_memory_equal(back, g, sizeof(g));
	asx_msg_free_chain(m);
	/* every truncation fails */
	for (i = 0; i < (int)tl; i += 7) {
		asx_xdr_mem_decoder(&d, ab, (size_t)i);
		assert_int_equal(gfoo_xdr_decode(&d, back, 20), -EBADMSG);
	}
	/* an out-of-range short on the wire; a long that does not fit */
	put_be32(ab + 4, 0x00010000u);
	asx_xdr_mem_decoder(&d, ab, al);
	assert_int_equal(gfoo_xdr_decode(&d, back, 20), -EBADMSG);
	g[3].l = (long)INT32_MAX + 1;
	asx_xdr_mem_encoder(&d, ab, sizeof(ab));
	assert_int_equal(gfoo_xdr_encode(&d, g, 20), -ERANGE);
	/* raw mode goes through the table codec's native copy */
	make_gfoo(&g[3], 3);
	asx_xdr_mem_encoder(&d, ab, sizeof(ab));
	asx_xdr_off(&d);
	assert_int_equal(gfoo_xdr_encode(&d, g, 2), 0);
	assert_int_equal(asx_xdr_pos(&d), 2 * sizeof(struct gfoo));
}

/* Large opaque members: the prefetching block copy (asx__xdr_copy). */

#define BIGOP_DEFINE(N)							\
struct bigop##N {							\
	char c;								\
	unsigned char buf[N];						\
	short s;							\
};									\
ASX_XDR_DEFINE(bigop##N, struct bigop##N, BIGOP##N##_FIELDS)		\
static bool_t tirpc_bigop##N(XDR *t, struct bigop##N *b)		\
{									\
	return xdr_char(t, &b->c) && xdr_opaque(t, (char *)b->buf, N) &&	\
	       xdr_short(t, &b->s);					\
}
#define BIGOP511_FIELDS(X) X(CHAR, c) X(OPAQUE, buf) X(SHORT, s)
#define BIGOP512_FIELDS(X) X(CHAR, c) X(OPAQUE, buf) X(SHORT, s)
#define BIGOP1001_FIELDS(X) X(CHAR, c) X(OPAQUE, buf) X(SHORT, s)
#define BIGOP4099_FIELDS(X) X(CHAR, c) X(OPAQUE, buf) X(SHORT, s)
BIGOP_DEFINE(511)
BIGOP_DEFINE(512)
BIGOP_DEFINE(1001)
BIGOP_DEFINE(4099)

#define BIGOP_CHECK(N)							\
	do {								\
		static struct bigop##N v[5], back[5];			\
		size_t tl, al;						\
		struct asx_xdr d;					\
		XDR tx;							\
									\
		memset(v, 0, sizeof(v));				\
		for (i = 0; i < 5; i++) {				\
			v[i].c = (char)(i + 1);				\
			v[i].s = (short)(-i);				\
			for (k = 0; k < N; k++)				\
				v[i].buf[k] = (unsigned char)(k * 7 + i); \
		}							\
		xdrmem_create(&tx, (char *)tb, sizeof(tb), XDR_ENCODE); \
		for (i = 0; i < 5; i++)					\
			assert_true(tirpc_bigop##N(&tx, &v[i]));	\
		tl = xdr_getpos(&tx);					\
		memset(ab, 0xa5, sizeof(ab));				\
		ASX_ENC(ab, al, bigop##N##_xdr_encode(a, v, 5));	\
		same_bytes(tb, tl, ab, al);				\
		memset(ab, 0xa5, sizeof(ab));				\
		ASX_ENC(ab, al, asx_xdr_records(a, bigop##N##_xdr_record(), v, 5)); \
		same_bytes(tb, tl, ab, al);				\
		memset(back, 0, sizeof(back));				\
		asx_xdr_mem_decoder(&d, ab, al);			\
		assert_int_equal(bigop##N##_xdr_decode(&d, back, 5), 0); \
		assert_memory_equal(back, v, sizeof(v));		\
		memset(back, 0, sizeof(back));				\
		asx_xdr_mem_decoder(&d, ab, al);			\
		assert_int_equal(asx_xdr_records(&d, bigop##N##_xdr_record(), back, 5), 0); \
		assert_memory_equal(back, v, sizeof(v));		\
	} while (0)

static void test_define_big_opaque(void **state)
{
	static unsigned char tb[32768], ab[32768], src[8192], dst[8192];
	size_t n, so, doff, k;
	int i;

	BIGOP_CHECK(511);
	BIGOP_CHECK(512);
	BIGOP_CHECK(1001);
	BIGOP_CHECK(4099);
	/* the copy itself: every alignment of both ends, sizes around the threshold */
	for (k = 0; k < sizeof(src); k++)
		src[k] = (unsigned char)(k * 131 + 17);
	for (n = ASX__XDR_BIG - 1; n <= 4200; n += n < 700 ? 1 : 97) {
		for (so = 0; so < 64; so += 7) {
			for (doff = 0; doff < 64; doff += 5) {
				memset(dst, 0x5a, sizeof(dst));
				asx__xdr_copy(dst + doff, src + so, n);
				assert_memory_equal(dst + doff, src + so, n);
				for (k = 0; k < doff; k++)
					assert_int_equal(dst[k], 0x5a);
				for (k = doff + n; k < sizeof(dst); k++)
					assert_int_equal(dst[k], 0x5a);
			}
		}
	}
}

/* ----------------------------------------------------- the fd channel */

struct feeder {
	int fd;
	const unsigned char *data;
	size_t len, piece;
};

/* Write @data in pieces of @piece bytes, then close. */
static void *feed(void *arg)
{
	struct feeder *f = arg;
	size_t off = 0;

	while (off < f->len) {
		size_t k = f->len - off < f->piece ? f->len - off : f->piece;
		ssize_t n = write(f->fd, f->data + off, k);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(f->fd);
	return NULL;
}

static unsigned char *slurp(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	unsigned char *b = malloc(cap);
	ssize_t r;

	while ((r = read(fd, b + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	*len = n;
	return b;
}

/* Our channel's output for the reference records, one record per 5 bigs. */
static unsigned char *chan_stream(size_t sendsize, size_t *len)
{
	ASX_OPTS(struct asx_xdr_chan_opts, o, .sendsize = sendsize);
	struct asx_xdr_chan *c;
	int sv[2], i;
	unsigned char *out;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(asx_xdr_chan_create(&c, sv[0], &o), 0);
	assert_non_null(c);
	for (i = 0; i < NBIG; i++) {
		assert_int_equal(asx_xdr_record(asx_xdr_chan_out(c), &big_rec, &bigs[i]), 0);
		if (i % 5 == 4)
			assert_int_equal(asx_xdr_chan_end_record(c, false), 0);
	}
	assert_int_equal(asx_xdr_chan_end_record(c, true), 0);
	asx_xdr_chan_destroy(c);
	close(sv[0]);
	out = slurp(sv[1], len);
	close(sv[1]);
	return out;
}

/* Decode the stream @data fed in @piece-byte pieces through our channel. */
static void chan_decode(const unsigned char *data, size_t len, size_t piece, size_t recvsize)
{
	ASX_OPTS(struct asx_xdr_chan_opts, o, .recvsize = recvsize);
	struct feeder f = { .data = data, .len = len, .piece = piece };
	static struct big back[NBIG];
	struct asx_xdr_chan *c;
	pthread_t th;
	int sv[2], i = 0, recs = 0;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	f.fd = sv[1];
	assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
	assert_int_equal(asx_xdr_chan_create(&c, sv[0], &o), 0);
	assert_non_null(c);
	while (asx_xdr_chan_next_record(c) == 1) {
		int k = (i + 5 <= NBIG - 1) ? 5 : NBIG - i;

		recs++;
		assert_int_equal(asx_xdr_records(asx_xdr_chan_in(c), &big_rec, back + i, (size_t)k), 0);
		assert_true(asx_xdr_chan_record_done(c));
		i += k;
	}
	assert_int_equal(asx_xdr_chan_next_record(c), 0);	/* clean end of file */
	assert_int_equal(i, NBIG);
	assert_int_equal(recs, (NBIG + 4) / 5);
	for (i = 0; i < NBIG; i++)
		same_big(&bigs[i], &back[i]);
	asx_xdr_chan_destroy(c);
	pthread_join(th, NULL);
	close(sv[0]);
}

static void test_chan_pieces(void **state)
{
	static const size_t pieces[] = { 1, 3, 7, 64, 1000, 1 << 20 };
	static const size_t sends[] = { 64, 100, 4096, 1 << 16 };
	unsigned int i, j;

	big_reference();
	for (j = 0; j < sizeof(sends) / sizeof(sends[0]); j++) {
		size_t len;
		unsigned char *s = chan_stream(sends[j], &len);

		for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
			chan_decode(s, len, pieces[i], 64);
			chan_decode(s, len, pieces[i], 1 << 16);
		}
		free(s);
	}
}

/* libtirpc xdrrec output decodes through our channel, and the reverse. */
static int rec_write(void *h, void *buf, int n)
{
	return (int)write(*(int *)h, buf, (size_t)n);
}

static int rec_read(void *h, void *buf, int n)
{
	ssize_t r = read(*(int *)h, buf, (size_t)n);

	return r <= 0 ? -1 : (int)r;
}

static void test_chan_interop_xdrrec(void **state)
{
	unsigned char *s;
	size_t len;
	int sv[2], i, recs;
	XDR t;

	big_reference();
	/* tirpc writes, we read */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	xdrrec_create(&t, 100, 100, (char *)&sv[0], rec_read, rec_write);
	t.x_op = XDR_ENCODE;
	for (i = 0; i < NBIG; i++) {
		assert_true(tirpc_big(&t, &bigs[i]));
		if (i % 5 == 4 || i == NBIG - 1)
			assert_true(xdrrec_endofrecord(&t, i == NBIG - 1));
	}
	xdr_destroy(&t);
	close(sv[0]);
	s = slurp(sv[1], &len);
	close(sv[1]);
	chan_decode(s, len, 13, 64);
	free(s);

	/* we write, tirpc reads */
	s = chan_stream(128, &len);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(write(sv[1], s, len), (ssize_t)len);
	close(sv[1]);
	free(s);
	xdrrec_create(&t, 100, 100, (char *)&sv[0], rec_read, rec_write);
	t.x_op = XDR_DECODE;
	recs = 0;
	for (i = 0; i < NBIG; i++) {
		static struct big b;
		char *vp = (char *)b.vals, *dp = (char *)b.data, *np = b.name;
		struct point *op = &b.origin;
		u_quad_t id;
		u_int nv, nd;

		if (i % 5 == 0) {
			assert_true(xdrrec_skiprecord(&t));
			recs++;
		}
		memset(&b, 0, sizeof(b));
		assert_true(xdr_u_hyper(&t, &id));
		b.id = id;
		assert_true(xdr_vector(&t, (char *)b.f, 5, sizeof(float), (xdrproc_t)xdr_float));
		assert_true(xdr_vector(&t, (char *)b.d, 3, sizeof(double), (xdrproc_t)xdr_double));
		assert_true(xdr_array(&t, &vp, &nv, 8, sizeof(int), (xdrproc_t)xdr_int));
		b.nvals = nv;
		assert_true(xdr_opaque(&t, (char *)b.blob, 7));
		assert_true(xdr_bytes(&t, &dp, &nd, 20));
		b.ndata = nd;
		assert_true(xdr_string(&t, &np, 12));
		assert_true(xdr_pointer(&t, (char **)&op, sizeof(struct point),
					(xdrproc_t)tirpc_point));
		b.has_origin = op != NULL;
		assert_true(tirpc_shape(&t, &b.shape));
		assert_true(xdr_vector(&t, (char *)b.pts, 3, sizeof(struct point),
				       (xdrproc_t)tirpc_point));
		same_big(&bigs[i], &b);
	}
	assert_true(xdrrec_eof(&t));
	xdr_destroy(&t);
	close(sv[0]);
	assert_int_equal(recs, 5);
}

/* Large opaque moves by writev / direct read; records bigger than the buffers. */
static void test_chan_large_opaque(void **state)
{
	ASX_OPTS(struct asx_xdr_chan_opts, o, .sendsize = 256, .recvsize = 256);
	size_t sizes[] = { 2047, 2048, 5000, 70001 };
	unsigned char *src, *dst;
	struct feeder f;
	struct asx_xdr_chan *c;
	unsigned char *s;
	size_t len, i;
	int sv[2];
	pthread_t th;

	src = malloc(70004);
	dst = malloc(70004);
	for (i = 0; i < 70004; i++)
		src[i] = (unsigned char)(i * 7);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(asx_xdr_chan_create(&c, sv[0], &o), 0);
	for (i = 0; i < 4; i++) {
		struct asx_xdr *x = asx_xdr_chan_out(c);

		assert_int_equal(asx_xdr_put_u32(x, (uint32_t)i), 0);
		assert_int_equal(asx_xdr_put_bytes(x, src, sizes[i]), 0);
		assert_int_equal(asx_xdr_put_u32(x, 0xabcdef01u), 0);
		assert_int_equal(asx_xdr_chan_end_record(c, false), 0);
	}
	assert_int_equal(asx_xdr_chan_flush(c), 0);
	asx_xdr_chan_destroy(c);
	close(sv[0]);
	s = slurp(sv[1], &len);
	close(sv[1]);

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	f = (struct feeder){ .fd = sv[1], .data = s, .len = len, .piece = 1000 };
	assert_int_equal(pthread_create(&th, NULL, feed, &f), 0);
	assert_int_equal(asx_xdr_chan_create(&c, sv[0], &o), 0);
	for (i = 0; i < 4; i++) {
		struct asx_xdr *x = asx_xdr_chan_in(c);
		uint32_t w, n;

		assert_int_equal(asx_xdr_chan_next_record(c), 1);
		assert_int_equal(asx_xdr_get_u32(x, &w), 0);
		assert_int_equal(w, i);
		assert_int_equal(asx_xdr_get_bytes(x, dst, 70004, &n), 0);
		assert_int_equal(n, sizes[i]);
		assert_memory_equal(dst, src, n);
		assert_int_equal(asx_xdr_get_u32(x, &w), 0);
		assert_int_equal(w, 0xabcdef01u);
		/* reading past the end of the record */
		assert_int_equal(asx_xdr_get_u32(x, &w), -EBADMSG);
	}
	assert_int_equal(asx_xdr_chan_next_record(c), 0);
	asx_xdr_chan_destroy(c);
	pthread_join(th, NULL);
	close(sv[0]);
	free(s);
	free(src);
	free(dst);
}

/* Hostile framing: oversize record, EOF in a record, short record recovery. */
static void test_chan_hostile(void **state)
{
	ASX_OPTS(struct asx_xdr_chan_opts, o, .max_record = 100);
	unsigned char b[64];
	struct asx_xdr_chan *c;
	uint32_t w;
	int sv[2];

	/* a fragment longer than max_record */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	put_be32(b, 0x80000000u | 101);
	assert_int_equal(write(sv[1], b, 4), 4);
	close(sv[1]);
	assert_int_equal(asx_xdr_chan_create(&c, sv[0], &o), 0);
	assert_int_equal(asx_xdr_chan_next_record(c), -EMSGSIZE);
	assert_int_equal(asx_xdr_chan_next_record(c), -EMSGSIZE);	/* stays broken */
	asx_xdr_chan_destroy(c);
	close(sv[0]);

	/* a record whose fragments add up past max_record */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	put_be32(b, 60);
	memset(b + 4, 0, 60);
	assert_int_equal(write(sv[1], b, 64), 64);
	put_be32(b, 0x80000000u | 60);
	assert_int_equal(write(sv[1], b, 64), 64);
	close(sv[1]);
	assert_int_equal(asx_xdr_chan_create(&c, sv[0], &o), 0);
	assert_int_equal(asx_xdr_chan_next_record(c), 1);
	{
		unsigned char d[120];

		assert_int_equal(asx_xdr_get_opaque(asx_xdr_chan_in(c), d, 120), -EMSGSIZE);
	}
	asx_xdr_chan_destroy(c);
	close(sv[0]);

	/* end of file inside a record; a short record, then a good one */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	put_be32(b, 0x80000000u | 4);
	put_be32(b + 4, 42);
	put_be32(b + 8, 0x80000000u | 8);
	put_be32(b + 12, 1);
	put_be32(b + 16, 2);
	put_be32(b + 20, 0x80000000u | 8);	/* promises 8, gives 2 */
	b[24] = b[25] = 0;
	assert_int_equal(write(sv[1], b, 26), 26);
	close(sv[1]);
	assert_int_equal(asx_xdr_chan_create(&c, sv[0], NULL), 0);
	assert_int_equal(asx_xdr_get_u32(asx_xdr_chan_in(c), &w), -EBADMSG);	/* no record yet */
	assert_int_equal(asx_xdr_chan_next_record(c), 1);
	assert_int_equal(asx_xdr_get_u32(asx_xdr_chan_in(c), &w), 0);
	assert_int_equal(w, 42);
	{
		uint64_t h;

		assert_int_equal(asx_xdr_get_u64(asx_xdr_chan_in(c), &h), -EBADMSG);
	}
	assert_int_equal(asx_xdr_chan_next_record(c), 1);	/* recovers */
	assert_int_equal(asx_xdr_get_u32(asx_xdr_chan_in(c), &w), 0);
	assert_int_equal(w, 1);
	assert_int_equal(asx_xdr_chan_next_record(c), 1);	/* skips the rest */
	assert_int_equal(asx_xdr_get_u32(asx_xdr_chan_in(c), &w), -EBADMSG);
	assert_int_equal(asx_xdr_chan_next_record(c), -EBADMSG);
	asx_xdr_chan_destroy(c);
	close(sv[0]);

	/* bad options */
	{
		ASX_OPTS(struct asx_xdr_chan_opts, bad, .sendsize = 8);
		struct {
			struct asx_xdr_chan_opts o;
			uint64_t future;
		} big = { .o = { .sz = sizeof(big) }, .future = 1 };
		struct asx_xdr_chan_opts old = { .sz = offsetof(struct asx_xdr_chan_opts, recvsize),
						 .sendsize = 4096, .recvsize = 8 /* not read */ };

		c = NULL;
		assert_int_equal(asx_xdr_chan_create(&c, 0, &bad), -EINVAL);
		assert_int_equal(asx_xdr_chan_create(&c, -1, NULL), -EINVAL);
		assert_int_equal(asx_xdr_chan_create(NULL, 0, NULL), -EINVAL);
		assert_int_equal(asx_xdr_chan_create(&c, 0, &big.o), -E2BIG);
		big.o.sz = 0;
		assert_int_equal(asx_xdr_chan_create(&c, 0, &big.o), -EINVAL);
		assert_null(c);
		/* an older caller's struct: the fields it lacks are defaults */
		assert_int_equal(asx_xdr_chan_create(&c, 0, &old), 0);
		asx_xdr_chan_destroy(c);
		big.o.sz = sizeof(big);
		big.future = 0;
		assert_int_equal(asx_xdr_chan_create(&c, 0, &big.o), 0);
		asx_xdr_chan_destroy(c);
	}
}

/* The channel's raw mode and record in XDR mode over one connection. */
static void test_chan_mode_switch(void **state)
{
	struct asx_xdr_chan *w, *r;
	struct point p = { 3, 4 }, back;
	int sv[2];

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(asx_xdr_chan_create(&w, sv[0], NULL), 0);
	assert_int_equal(asx_xdr_chan_create(&r, sv[1], NULL), 0);
	asx_xdr_off(asx_xdr_chan_out(w));
	assert_int_equal(asx_xdr_record(asx_xdr_chan_out(w), &point_rec, &p), 0);
	assert_int_equal(asx_xdr_chan_end_record(w, false), 0);
	assert_int_equal(asx_xdr_record(asx_xdr_chan_out(w), &point_rec, &p), 0);
	assert_int_equal(asx_xdr_chan_end_record(w, false), 0);
	asx_xdr_on(asx_xdr_chan_out(w));
	assert_int_equal(asx_xdr_record(asx_xdr_chan_out(w), &point_rec, &p), 0);
	assert_int_equal(asx_xdr_chan_end_record(w, true), 0);

	assert_int_equal(asx_xdr_chan_next_record(r), 1);
	asx_xdr_off(asx_xdr_chan_in(r));
	assert_int_equal(asx_xdr_get_u32(asx_xdr_chan_in(r), &(uint32_t){ 0 }), -EPROTOTYPE);
	assert_int_equal(asx_xdr_chan_next_record(r), 1);	/* error cleared per record */
	assert_int_equal(asx_xdr_record(asx_xdr_chan_in(r), &point_rec, &back), 0);
	assert_memory_equal(&back, &p, sizeof(p));
	asx_xdr_on(asx_xdr_chan_in(r));
	assert_int_equal(asx_xdr_chan_next_record(r), 1);
	assert_int_equal(asx_xdr_record(asx_xdr_chan_in(r), &point_rec, &back), 0);
	assert_memory_equal(&back, &p, sizeof(p));
	asx_xdr_chan_destroy(w);
	asx_xdr_chan_destroy(r);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars_match_tirpc),
		cmocka_unit_test(test_narrow_types_match_tirpc),
		cmocka_unit_test(test_narrow_range_errors),
		cmocka_unit_test(test_opaque_string_padding),
		cmocka_unit_test(test_arrays_match_tirpc),
		cmocka_unit_test(test_var_array_match_tirpc),
		cmocka_unit_test(test_record_mem_bounded),
		cmocka_unit_test(test_record_mem_growing),
		cmocka_unit_test(test_record_arrays_of_records),
		cmocka_unit_test(test_pointer_round_trip),
		cmocka_unit_test(test_pointer_bad_input),
		cmocka_unit_test(test_pointer_list),
		cmocka_unit_test(test_record_msg_chain),
		cmocka_unit_test(test_truncated_inputs),
		cmocka_unit_test(test_lying_lengths),
		cmocka_unit_test(test_mode_switch),
		cmocka_unit_test(test_define_codec),
		cmocka_unit_test(test_define_big_opaque),
		cmocka_unit_test(test_chan_pieces),
		cmocka_unit_test(test_chan_interop_xdrrec),
		cmocka_unit_test(test_chan_large_opaque),
		cmocka_unit_test(test_chan_hostile),
		cmocka_unit_test(test_chan_mode_switch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
