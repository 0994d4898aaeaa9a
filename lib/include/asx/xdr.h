/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/xdr.h - XDR (RFC 4506) encoding and decoding over memory, message
 * chains and buffered file descriptors.
 *
 * A struct asx_xdr is a cursor over a "window" of bytes [p, end).  The
 * primitives below are inline: while the window has room they store or
 * load big-endian words directly; when it runs out they call the target
 * (memory, message chain, fd channel), which flushes, grows, moves to the
 * next block or reads more.  Items may straddle windows.
 *
 * Errors are negative errno values and are sticky: the first failure is
 * remembered (asx_xdr_error()) and every later call on the stream returns
 * it, so a codec may run a sequence of calls and check once at the end.
 *
 *   -EMSGSIZE    encode: a bounded target is full, or a growing one hit its
 *                maximum; decode: a length exceeds the caller's capacity or
 *                the stream's limit (asx_xdr_set_limit()).
 *   -EBADMSG     decode: the input is truncated (record or buffer ends
 *                inside an item), a length is larger than what is left, or
 *                a value is invalid for its type (bool not 0/1, short out of
 *                range, union discriminant without an arm).
 *   -EPROTOTYPE  the call does not match the stream's encoding mode: an
 *                XDR primitive on a stream switched to raw mode
 *                (asx_xdr_off()), or asx_raw_put()/asx_raw_get() on a stream
 *                in XDR mode.
 *   -EINVAL      an encode call on a decoder or the reverse, bad arguments.
 *   -ERANGE      encode: a value does not fit its XDR type (a long outside
 *                32 bits, see ASX_XDR_LONG).
 *   -ENOMEM, and I/O errors of the fd channel (-EPIPE, -ECONNRESET, ...).
 *
 * Streams are not thread safe: one thread uses a stream at a time.
 */
#ifndef ASX_XDR_H
#define ASX_XDR_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_msg;
struct asx_xdr_chan;

enum asx_xdr_op {
	ASX_XDR_ENCODE = 0,
	ASX_XDR_DECODE = 1,
};

enum asx_xdr_mode {
	ASX_XDR_MODE_XDR = 0,	/* RFC 4506 big-endian, 4-byte units */
	ASX_XDR_MODE_RAW = 2,	/* native bytes, no conversion, no padding */
};

/* Default limit on one variable-length item (bytes or elements). */
#define ASX_XDR_DEFAULT_LIMIT	(64u << 20)

struct asx_xdr_ops;

struct asx_xdr {
	unsigned char *p;	/* cursor */
	unsigned char *end;	/* end of the current window */
	/* private: */
	uint8_t st_;		/* op | mode; ASX__XDR_BROKEN once err_ is set */
	uint8_t pad0_[3];
	int err_;		/* sticky error, 0 if none */
	size_t limit_;		/* max bytes/elements of one variable item */
	unsigned char *base_;	/* start of the current window */
	uint64_t pos_base_;	/* stream position of base_ */
	uint64_t after_;	/* known bytes beyond the window (decode), or UINT64_MAX */
	const struct asx_xdr_ops *ops_;
	/*
	 * The target's own state (buffer, message chain, channel), opaque
	 * and of a fixed size, so that a new target never changes
	 * sizeof(struct asx_xdr) (lib/src/xdr/xdr_internal.h).
	 */
	union {
		void *asx__p[4];
		uint64_t asx__u[4];
	} asx__target;
};

#define ASX__XDR_BROKEN	0x80
#define ASX__XDR_ENC	(ASX_XDR_ENCODE | ASX_XDR_MODE_XDR)
#define ASX__XDR_DEC	(ASX_XDR_DECODE | ASX_XDR_MODE_XDR)

/* ---- targets ---- */

/* Encode into (or decode from) the caller's buffer of @len bytes. */
ASX_API void asx_xdr_mem_encoder(struct asx_xdr *x, void *buf, size_t len);
ASX_API void asx_xdr_mem_decoder(struct asx_xdr *x, const void *buf, size_t len);

/*
 * Encode into a heap buffer that starts at @initial bytes and doubles as
 * needed up to @max bytes (then -EMSGSIZE).  0 or -ENOMEM.  Take the bytes
 * with asx_xdr_mem_data() or asx_xdr_mem_detach(); asx_xdr_fini() frees.
 */
ASX_API int asx_xdr_mem_grow_encoder(struct asx_xdr *x, size_t initial, size_t max);

/* Start of a memory stream's buffer; *@len (if not NULL) = bytes encoded. */
ASX_API void *asx_xdr_mem_data(const struct asx_xdr *x, size_t *len);

/* Hand a growing buffer to the caller (free() it); the stream is finished. */
ASX_API void *asx_xdr_mem_detach(struct asx_xdr *x, size_t *len);

/*
 * Encode into a message-block chain.  @m: append after the data of the
 * chain @m (its last block is filled first if it is unshared), or NULL
 * for a new message.  New blocks of at least @block bytes are allocated
 * and linked through cont as needed.  asx_xdr_msg_finish() returns the
 * chain (the caller owns it); until then the stream owns a new chain.
 * 0 or -ENOMEM.
 */
ASX_API int asx_xdr_msg_encoder(struct asx_xdr *x, struct asx_msg *m, size_t block);
ASX_API struct asx_msg *asx_xdr_msg_finish(struct asx_xdr *x);

/*
 * Decode the bytes rd..wr of every block of @m in turn.  The message is
 * not modified and must outlive the stream.
 */
ASX_API void asx_xdr_msg_decoder(struct asx_xdr *x, const struct asx_msg *m);

/* Release what the stream owns (growing buffer, unfinished chain). */
ASX_API void asx_xdr_fini(struct asx_xdr *x);

/* ---- state ---- */

static inline int asx_xdr_error(const struct asx_xdr *x) { return x->err_; }

static inline enum asx_xdr_op asx_xdr_op(const struct asx_xdr *x)
{
	return (enum asx_xdr_op)(x->st_ & 1);
}

/* Bytes encoded or decoded since the stream (or channel record) began. */
static inline uint64_t asx_xdr_pos(const struct asx_xdr *x)
{
	return x->pos_base_ + (uint64_t)(x->p - x->base_);
}

/* Largest variable-length item (bytes, or array elements) accepted. */
static inline void asx_xdr_set_limit(struct asx_xdr *x, size_t limit) { x->limit_ = limit; }

/* Set the encoding; returns the previous one.  Encoder and decoder must agree. */
ASX_API enum asx_xdr_mode asx_xdr_set_mode(struct asx_xdr *x, enum asx_xdr_mode mode);
static inline enum asx_xdr_mode asx_xdr_mode(const struct asx_xdr *x)
{
	return (enum asx_xdr_mode)(x->st_ & ASX_XDR_MODE_RAW);
}
/* The paper's manipulators: XDR on (the default) and off (raw native bytes). */
#define asx_xdr_on(x)	asx_xdr_set_mode((x), ASX_XDR_MODE_XDR)
#define asx_xdr_off(x)	asx_xdr_set_mode((x), ASX_XDR_MODE_RAW)

/* ---- out-of-line slow paths (private) ---- */

ASX_API int asx__xdr_put_slow(struct asx_xdr *x, const void *src, size_t n, unsigned int st);
ASX_API int asx__xdr_get_slow(struct asx_xdr *x, void *dst, size_t n, unsigned int st);
ASX_API int asx__xdr_fail(struct asx_xdr *x, int err);

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define asx__be32(v) __builtin_bswap32(v)
#define asx__be64(v) __builtin_bswap64(v)
#else
#define asx__be32(v) ((uint32_t)(v))
#define asx__be64(v) ((uint64_t)(v))
#endif

/* ---- XDR primitives, encode side ---- */

static inline int asx_xdr_put_u32(struct asx_xdr *x, uint32_t v)
{
	uint32_t be = asx__be32(v);

	if (__builtin_expect(x->st_ == ASX__XDR_ENC && x->end - x->p >= 4, 1)) {
		memcpy(x->p, &be, 4);
		x->p += 4;
		return 0;
	}
	return asx__xdr_put_slow(x, &be, 4, ASX__XDR_ENC);
}

static inline int asx_xdr_put_u64(struct asx_xdr *x, uint64_t v)
{
	uint64_t be = asx__be64(v);

	if (__builtin_expect(x->st_ == ASX__XDR_ENC && x->end - x->p >= 8, 1)) {
		memcpy(x->p, &be, 8);
		x->p += 8;
		return 0;
	}
	return asx__xdr_put_slow(x, &be, 8, ASX__XDR_ENC);
}

static inline int asx_xdr_put_i32(struct asx_xdr *x, int32_t v) { return asx_xdr_put_u32(x, (uint32_t)v); }
static inline int asx_xdr_put_i64(struct asx_xdr *x, int64_t v) { return asx_xdr_put_u64(x, (uint64_t)v); }
static inline int asx_xdr_put_bool(struct asx_xdr *x, bool v) { return asx_xdr_put_u32(x, v ? 1 : 0); }
static inline int asx_xdr_put_enum(struct asx_xdr *x, int v) { return asx_xdr_put_u32(x, (uint32_t)v); }

static inline int asx_xdr_put_float(struct asx_xdr *x, float v)
{
	uint32_t u;

	memcpy(&u, &v, 4);
	return asx_xdr_put_u32(x, u);
}

static inline int asx_xdr_put_double(struct asx_xdr *x, double v)
{
	uint64_t u;

	memcpy(&u, &v, 8);
	return asx_xdr_put_u64(x, u);
}

/* Fixed-length opaque: @len bytes then zero padding to a multiple of 4. */
ASX_API int asx_xdr_put_opaque(struct asx_xdr *x, const void *src, size_t len);
/* Variable-length opaque: a length word, the bytes, padding. */
ASX_API int asx_xdr_put_bytes(struct asx_xdr *x, const void *src, size_t len);
/* String: like bytes, without the terminating NUL. */
ASX_API int asx_xdr_put_string(struct asx_xdr *x, const char *s);

/* Fixed arrays of homogeneous elements: bulk byte-swap, no count word. */
ASX_API int asx_xdr_put_u32_array(struct asx_xdr *x, const uint32_t *v, size_t n);
ASX_API int asx_xdr_put_u64_array(struct asx_xdr *x, const uint64_t *v, size_t n);
#define asx_xdr_put_i32_array(x, v, n)    asx_xdr_put_u32_array((x), (const uint32_t *)(const int32_t *)(v), (n))
#define asx_xdr_put_i64_array(x, v, n)    asx_xdr_put_u64_array((x), (const uint64_t *)(const int64_t *)(v), (n))
#define asx_xdr_put_float_array(x, v, n)  asx_xdr_put_u32_array((x), (const uint32_t *)(const float *)(v), (n))
#define asx_xdr_put_double_array(x, v, n) asx_xdr_put_u64_array((x), (const uint64_t *)(const double *)(v), (n))

/* ---- XDR primitives, decode side ---- */

static inline int asx_xdr_get_u32(struct asx_xdr *x, uint32_t *v)
{
	uint32_t be;
	int ret = 0;

	if (__builtin_expect(x->st_ == ASX__XDR_DEC && x->end - x->p >= 4, 1)) {
		memcpy(&be, x->p, 4);
		x->p += 4;
	} else {
		ret = asx__xdr_get_slow(x, &be, 4, ASX__XDR_DEC);
		if (ret)
			return ret;
	}
	*v = asx__be32(be);
	return ret;
}

static inline int asx_xdr_get_u64(struct asx_xdr *x, uint64_t *v)
{
	uint64_t be;
	int ret = 0;

	if (__builtin_expect(x->st_ == ASX__XDR_DEC && x->end - x->p >= 8, 1)) {
		memcpy(&be, x->p, 8);
		x->p += 8;
	} else {
		ret = asx__xdr_get_slow(x, &be, 8, ASX__XDR_DEC);
		if (ret)
			return ret;
	}
	*v = asx__be64(be);
	return ret;
}

static inline int asx_xdr_get_i32(struct asx_xdr *x, int32_t *v) { return asx_xdr_get_u32(x, (uint32_t *)v); }
static inline int asx_xdr_get_i64(struct asx_xdr *x, int64_t *v) { return asx_xdr_get_u64(x, (uint64_t *)v); }
static inline int asx_xdr_get_enum(struct asx_xdr *x, int *v)
{
	int32_t t;
	int ret = asx_xdr_get_i32(x, &t);

	if (!ret)
		*v = t;
	return ret;
}

/* A bool must be 0 or 1 on the wire: anything else is -EBADMSG. */
static inline int asx_xdr_get_bool(struct asx_xdr *x, bool *v)
{
	uint32_t t;
	int ret = asx_xdr_get_u32(x, &t);

	if (ret)
		return ret;
	if (t > 1)
		return asx__xdr_fail(x, -EBADMSG);
	*v = t;
	return 0;
}

static inline int asx_xdr_get_float(struct asx_xdr *x, float *v)
{
	uint32_t u;
	int ret = asx_xdr_get_u32(x, &u);

	if (!ret)
		memcpy(v, &u, 4);
	return ret;
}

static inline int asx_xdr_get_double(struct asx_xdr *x, double *v)
{
	uint64_t u;
	int ret = asx_xdr_get_u64(x, &u);

	if (!ret)
		memcpy(v, &u, 8);
	return ret;
}

ASX_API int asx_xdr_get_opaque(struct asx_xdr *x, void *dst, size_t len);
/* Variable opaque into @dst of @cap bytes; *@len = its length. */
ASX_API int asx_xdr_get_bytes(struct asx_xdr *x, void *dst, size_t cap, uint32_t *len);
/* String into @dst of @cap bytes (room for the NUL included). */
ASX_API int asx_xdr_get_string(struct asx_xdr *x, char *dst, size_t cap);
ASX_API int asx_xdr_get_u32_array(struct asx_xdr *x, uint32_t *v, size_t n);
ASX_API int asx_xdr_get_u64_array(struct asx_xdr *x, uint64_t *v, size_t n);
#define asx_xdr_get_i32_array(x, v, n)    asx_xdr_get_u32_array((x), (uint32_t *)(int32_t *)(v), (n))
#define asx_xdr_get_i64_array(x, v, n)    asx_xdr_get_u64_array((x), (uint64_t *)(int64_t *)(v), (n))
#define asx_xdr_get_float_array(x, v, n)  asx_xdr_get_u32_array((x), (uint32_t *)(float *)(v), (n))
#define asx_xdr_get_double_array(x, v, n) asx_xdr_get_u64_array((x), (uint64_t *)(double *)(v), (n))

/*
 * Read a count or length word for an item of @unit wire bytes per element
 * and check it: > @max or > the stream's limit -> -EMSGSIZE; more bytes
 * than the input can still hold -> -EBADMSG.
 */
ASX_API int asx_xdr_get_count(struct asx_xdr *x, uint32_t *n, size_t max, size_t unit);

/*
 * Bulk byte swapping uses AVX2 when the CPU has it (checked at load time;
 * ASX_XDR_SIMD=0 in the environment disables it).  Select SIMD (1) or the
 * portable loop (0) for the whole process; returns 1 if SIMD is now used.
 * Not thread safe against concurrent coding: call it before starting.
 */
ASX_API int asx_xdr_set_simd(int on);

/* ---- raw (native) mode ---- */

/* Copy @n native bytes; only in raw mode (else -EPROTOTYPE). */
ASX_API int asx_raw_put(struct asx_xdr *x, const void *src, size_t n);
ASX_API int asx_raw_get(struct asx_xdr *x, void *dst, size_t n);

/* ---- bidirectional forms (libtirpc style: direction from the stream) ---- */

#define ASX__XDR_BIDI(name, type, put, get)				\
static inline int asx_xdr_##name(struct asx_xdr *x, type *v)		\
{									\
	return asx_xdr_op(x) == ASX_XDR_ENCODE ? put(x, *v) : get(x, v); \
}
ASX__XDR_BIDI(int, int32_t, asx_xdr_put_i32, asx_xdr_get_i32)
ASX__XDR_BIDI(uint, uint32_t, asx_xdr_put_u32, asx_xdr_get_u32)
ASX__XDR_BIDI(hyper, int64_t, asx_xdr_put_i64, asx_xdr_get_i64)
ASX__XDR_BIDI(uhyper, uint64_t, asx_xdr_put_u64, asx_xdr_get_u64)
ASX__XDR_BIDI(float, float, asx_xdr_put_float, asx_xdr_get_float)
ASX__XDR_BIDI(double, double, asx_xdr_put_double, asx_xdr_get_double)
ASX__XDR_BIDI(bool, bool, asx_xdr_put_bool, asx_xdr_get_bool)
ASX__XDR_BIDI(enum, int, asx_xdr_put_enum, asx_xdr_get_enum)
#undef ASX__XDR_BIDI

static inline int asx_xdr_opaque(struct asx_xdr *x, void *v, size_t len)
{
	return asx_xdr_op(x) == ASX_XDR_ENCODE ? asx_xdr_put_opaque(x, v, len)
					       : asx_xdr_get_opaque(x, v, len);
}

/* Variable opaque of at most @max bytes; *@len in/out. */
static inline int asx_xdr_bytes(struct asx_xdr *x, void *v, uint32_t *len, uint32_t max)
{
	if (asx_xdr_op(x) == ASX_XDR_DECODE)
		return asx_xdr_get_bytes(x, v, max, len);
	if (*len > max)
		return asx__xdr_fail(x, -EMSGSIZE);
	return asx_xdr_put_bytes(x, v, *len);
}

/* String in @s of @cap bytes (NUL included). */
static inline int asx_xdr_string(struct asx_xdr *x, char *s, size_t cap)
{
	if (asx_xdr_op(x) == ASX_XDR_DECODE)
		return asx_xdr_get_string(x, s, cap);
	if (!memchr(s, '\0', cap))	/* no NUL in @cap bytes (strnlen is POSIX) */
		return asx__xdr_fail(x, -EMSGSIZE);
	return asx_xdr_put_string(x, s);
}

/* Optional data ("*" in XDR): the presence flag; then code the item if true. */
static inline int asx_xdr_optional(struct asx_xdr *x, bool *present)
{
	return asx_xdr_bool(x, present);
}

/*
 * An element codec for arrays (and ASX_XDR_FIELD_CUSTOM): code the object at
 * @obj in the stream's direction (asx_xdr_op()); 0 or a negative errno.
 */
typedef int (*asx_xdr_fn)(struct asx_xdr *x, void *obj);

/* Fixed array of @n elements of @size bytes, each coded by @fn. */
ASX_API int asx_xdr_vector(struct asx_xdr *x, void *base, size_t n, size_t size, asx_xdr_fn fn);
/* Variable array: count word (*@n in/out, at most @max) then elements. */
ASX_API int asx_xdr_array(struct asx_xdr *x, void *base, uint32_t *n, uint32_t max,
			  size_t size, asx_xdr_fn fn);

/* ---- declared records: a field table used in both directions ---- */

enum asx_xdr_type {
	ASX_XDR_INT = 1,	/* int32_t */
	ASX_XDR_UINT,		/* uint32_t */
	ASX_XDR_HYPER,		/* int64_t */
	ASX_XDR_UHYPER,		/* uint64_t */
	ASX_XDR_FLOAT,		/* float */
	ASX_XDR_DOUBLE,		/* double */
	ASX_XDR_BOOL,		/* bool (C99) */
	ASX_XDR_ENUM,		/* int-sized C enum */
	ASX_XDR_CHAR,		/* char as an XDR int (libtirpc's xdr_char) */
	ASX_XDR_UCHAR,		/* unsigned char as an XDR unsigned int */
	ASX_XDR_SHORT,		/* short as an XDR int */
	ASX_XDR_USHORT,
	ASX_XDR_LONG,		/* long as an XDR int (4 bytes; -ERANGE if it does not fit) */
	ASX_XDR_ULONG,
	ASX_XDR_OPAQUE,		/* unsigned char[count], fixed opaque */
	ASX_XDR_VOPAQUE,	/* unsigned char[count] + uint32_t length at aux */
	ASX_XDR_STRING,		/* char[count], NUL-terminated, at most count-1 chars */
	ASX_XDR_STRUCT,		/* a nested record: .sub.rec */
	ASX_XDR_UNION,		/* discriminated union: int32_t discriminant at aux, .sub.un */
	ASX_XDR_CUSTOM,		/* hand-written codec .sub.fn on the field */
	ASX_XDR_TYPE_MAX_
};

#define ASX_XDR_F_VAR	 0x1	/* variable array: uint32_t count at aux, capacity count */
#define ASX_XDR_F_OPT	 0x2	/* optional: bool at aux says whether present */
#define ASX_XDR_F_PTR	 0x4	/* optional by pointer: the member is a pointer to the item */

/* Pointer fields nested deeper than this (a chain of them) fail with -EMSGSIZE. */
#define ASX_XDR_PTR_DEPTH_MAX 64

struct asx_xdr_record;
struct asx_xdr_union;

struct asx_xdr_field {
	uint32_t offset;	/* of the member in the C struct */
	uint16_t type;		/* enum asx_xdr_type */
	uint16_t flags;		/* ASX_XDR_F_* */
	uint32_t count;		/* elements (fixed), capacity (VAR, VOPAQUE, STRING), bytes (OPAQUE) */
	uint32_t aux;		/* offset of the count/length/presence/discriminant member */
	union {
		const struct asx_xdr_record *rec;
		const struct asx_xdr_union *un;
		asx_xdr_fn fn;
	} sub;
};

struct asx_xdr_record {
	const char *name;
	size_t size;		/* sizeof the C struct */
	size_t nfields;
	const struct asx_xdr_field *fields;
};

struct asx_xdr_arm {
	int32_t value;		/* discriminant value */
	struct asx_xdr_field field; /* what follows; type 0 = void */
};

struct asx_xdr_union {
	size_t narms;
	const struct asx_xdr_arm *arms;
	const struct asx_xdr_field *dflt;	/* NULL: unknown discriminant -> -EBADMSG */
};

#define ASX__XDR_MEMBER_COUNT(S, m) (sizeof(((S *)0)->m) / sizeof(((S *)0)->m[0]))

/* A scalar member (or, for an array member, every element: bulk path). */
#define ASX_XDR_FIELD(S, m, t)						\
	{ .offset = offsetof(S, m), .type = (t), .count = 1 }
#define ASX_XDR_FIELD_ARRAY(S, m, t)					\
	{ .offset = offsetof(S, m), .type = (t), .count = ASX__XDR_MEMBER_COUNT(S, m) }
/* Variable array member m[] with its uint32_t count in member n. */
#define ASX_XDR_FIELD_VARRAY(S, m, t, n)				\
	{ .offset = offsetof(S, m), .type = (t), .flags = ASX_XDR_F_VAR, \
	  .count = ASX__XDR_MEMBER_COUNT(S, m), .aux = offsetof(S, n) }
#define ASX_XDR_FIELD_OPAQUE(S, m)					\
	{ .offset = offsetof(S, m), .type = ASX_XDR_OPAQUE, .count = sizeof(((S *)0)->m) }
#define ASX_XDR_FIELD_BYTES(S, m, n)					\
	{ .offset = offsetof(S, m), .type = ASX_XDR_VOPAQUE,		\
	  .count = sizeof(((S *)0)->m), .aux = offsetof(S, n) }
#define ASX_XDR_FIELD_STRING(S, m)					\
	{ .offset = offsetof(S, m), .type = ASX_XDR_STRING, .count = sizeof(((S *)0)->m) }
#define ASX_XDR_FIELD_STRUCT(S, m, r)					\
	{ .offset = offsetof(S, m), .type = ASX_XDR_STRUCT, .count = 1, .sub.rec = &(r) }
/* Arrays of records of type r: fixed (every element of m[]), and variable with count n. */
#define ASX_XDR_FIELD_STRUCT_ARRAY(S, m, r)				\
	{ .offset = offsetof(S, m), .type = ASX_XDR_STRUCT,		\
	  .count = ASX__XDR_MEMBER_COUNT(S, m), .sub.rec = &(r) }
#define ASX_XDR_FIELD_STRUCT_VARRAY(S, m, r, n)				\
	{ .offset = offsetof(S, m), .type = ASX_XDR_STRUCT, .flags = ASX_XDR_F_VAR, \
	  .count = ASX__XDR_MEMBER_COUNT(S, m), .aux = offsetof(S, n), .sub.rec = &(r) }
/* Optional member m (inline storage) present when the bool member p is true. */
#define ASX_XDR_FIELD_OPTIONAL(S, m, r, p)				\
	{ .offset = offsetof(S, m), .type = ASX_XDR_STRUCT, .flags = ASX_XDR_F_OPT, \
	  .count = 1, .aux = offsetof(S, p), .sub.rec = &(r) }
/*
 * Optional data by pointer (RFC 4506 section 4.19, "T *m"): member m is a
 * pointer to one record of type r, NULL when absent.  On the wire, a bool
 * (0: absent; 1: present, then the record).  Encode: present when m is not
 * NULL.  Decode, which never allocates: a 0 sets m to NULL; a 1 decodes the
 * record into the storage m points to, which the caller sets up before
 * decoding (a NULL m then fails with -EMSGSIZE, like a capacity of 0); any
 * other discriminant is -EBADMSG.  r may be the record being declared (a
 * linked list) up to ASX_XDR_PTR_DEPTH_MAX pointers deep.  Raw mode cannot
 * carry a pointer: records with one give -EINVAL there.
 */
#define ASX_XDR_FIELD_POINTER(S, m, r)					\
	{ .offset = offsetof(S, m), .type = ASX_XDR_STRUCT, .flags = ASX_XDR_F_PTR, \
	  .count = 1, .sub.rec = &(r) }
#define ASX_XDR_FIELD_UNION(S, m, d, u)					\
	{ .offset = offsetof(S, m), .type = ASX_XDR_UNION, .count = 1,	\
	  .aux = offsetof(S, d), .sub.un = &(u) }
/*
 * A hand-written codec for member m: f(x, p) is called once per record,
 * in both directions, with p = &obj->m, a pointer to the member itself (not
 * to the enclosing struct; in a union arm, the union member plus the arm's
 * offset).  It reads *p when asx_xdr_op(x) is ASX_XDR_ENCODE and fills *p
 * when it is ASX_XDR_DECODE, using the stream primitives, and returns 0 or
 * a negative errno, which becomes the stream's sticky error.  It is not
 * called in raw mode, where the struct's native bytes move instead.
 */
#define ASX_XDR_FIELD_CUSTOM(S, m, f)					\
	{ .offset = offsetof(S, m), .type = ASX_XDR_CUSTOM, .count = 1, .sub.fn = (f) }

/*
 * Define `const struct asx_xdr_record var` for struct type S from the
 * field list (external linkage: declare it `extern const struct
 * asx_xdr_record var;` in a header to share it); ASX_XDR_RECORD_STATIC
 * makes it static.
 */
#define ASX__XDR_RECORD(cls, var, S, ...)				\
	static const struct asx_xdr_field var##_fields_[] = { __VA_ARGS__ }; \
	cls const struct asx_xdr_record var = {				\
		.name = #S, .size = sizeof(S),				\
		.nfields = sizeof(var##_fields_) / sizeof(var##_fields_[0]), \
		.fields = var##_fields_ }
#define ASX_XDR_RECORD(var, S, ...)	   ASX__XDR_RECORD(, var, S, __VA_ARGS__)
#define ASX_XDR_RECORD_STATIC(var, S, ...) ASX__XDR_RECORD(static, var, S, __VA_ARGS__)

/*
 * The same declaration as a field list macro, which also generates
 * straight-line inline codecs (no per-field dispatch) for records made of
 * scalar and fixed-opaque members:
 *
 *	#define FOO_FIELDS(X) X(LONG, l) X(SHORT, s) X(CHAR, c) \
 *			      X(FLOAT, f) X(DOUBLE, d) X(OPAQUE, buf)
 *	ASX_XDR_DEFINE(foo, struct foo, FOO_FIELDS)
 *
 * defines foo_xdr_record() (the field table, for asx_xdr_records() and
 * nesting), foo_xdr_encode(x, const struct foo *v, n) and
 * foo_xdr_decode(x, struct foo *v, n).  Kinds: INT UINT HYPER UHYPER FLOAT
 * DOUBLE BOOL ENUM CHAR UCHAR SHORT USHORT LONG ULONG OPAQUE (a fixed
 * unsigned char array).  A record the window cannot hold whole, a value
 * out of range, raw mode and errors all go through the table codec, so
 * the results are identical.
 */
#define ASX__XDR_TAB(K, m)	ASX__XDR_TAB_##K(m),
#define ASX__XDR_TAB_OPAQUE(m)	ASX_XDR_FIELD_OPAQUE(asx__xdr_s, m)
#define ASX__XDR_TAB_INT(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_INT)
#define ASX__XDR_TAB_UINT(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_UINT)
#define ASX__XDR_TAB_HYPER(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_HYPER)
#define ASX__XDR_TAB_UHYPER(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_UHYPER)
#define ASX__XDR_TAB_FLOAT(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_FLOAT)
#define ASX__XDR_TAB_DOUBLE(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_DOUBLE)
#define ASX__XDR_TAB_BOOL(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_BOOL)
#define ASX__XDR_TAB_ENUM(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_ENUM)
#define ASX__XDR_TAB_CHAR(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_CHAR)
#define ASX__XDR_TAB_UCHAR(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_UCHAR)
#define ASX__XDR_TAB_SHORT(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_SHORT)
#define ASX__XDR_TAB_USHORT(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_USHORT)
#define ASX__XDR_TAB_LONG(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_LONG)
#define ASX__XDR_TAB_ULONG(m)	ASX_XDR_FIELD(asx__xdr_s, m, ASX_XDR_ULONG)

#define ASX__XDR_W4(m)		4
#define ASX__XDR_W8(m)		8
#define ASX__XDR_WIRE(K, m)	+ ASX__XDR_WIRE_##K(m)
#define ASX__XDR_WIRE_OPAQUE(m)	((sizeof(v->m) + 3u) & ~(size_t)3)
#define ASX__XDR_WIRE_INT	ASX__XDR_W4
#define ASX__XDR_WIRE_UINT	ASX__XDR_W4
#define ASX__XDR_WIRE_FLOAT	ASX__XDR_W4
#define ASX__XDR_WIRE_BOOL	ASX__XDR_W4
#define ASX__XDR_WIRE_ENUM	ASX__XDR_W4
#define ASX__XDR_WIRE_CHAR	ASX__XDR_W4
#define ASX__XDR_WIRE_UCHAR	ASX__XDR_W4
#define ASX__XDR_WIRE_SHORT	ASX__XDR_W4
#define ASX__XDR_WIRE_USHORT	ASX__XDR_W4
#define ASX__XDR_WIRE_LONG	ASX__XDR_W4
#define ASX__XDR_WIRE_ULONG	ASX__XDR_W4
#define ASX__XDR_WIRE_HYPER	ASX__XDR_W8
#define ASX__XDR_WIRE_UHYPER	ASX__XDR_W8
#define ASX__XDR_WIRE_DOUBLE	ASX__XDR_W8

/* encode: values that do not fit their XDR type take the checked path */
#define ASX__XDR_EOK(K, m)	ASX__XDR_EOK_##K(m)
#define ASX__XDR_EOK_LONG(m)	&& v->m == (int32_t)v->m
#define ASX__XDR_EOK_ULONG(m)	&& v->m <= UINT32_MAX
#define ASX__XDR_EOK_INT(m)
#define ASX__XDR_EOK_UINT(m)
#define ASX__XDR_EOK_HYPER(m)
#define ASX__XDR_EOK_UHYPER(m)
#define ASX__XDR_EOK_FLOAT(m)
#define ASX__XDR_EOK_DOUBLE(m)
#define ASX__XDR_EOK_BOOL(m)
#define ASX__XDR_EOK_ENUM(m)
#define ASX__XDR_EOK_CHAR(m)
#define ASX__XDR_EOK_UCHAR(m)
#define ASX__XDR_EOK_SHORT(m)
#define ASX__XDR_EOK_USHORT(m)
#define ASX__XDR_EOK_OPAQUE(m)

/*
 * Opaque bodies (private; the library uses the same copy).  Short ones are
 * plain memcpy, expanded inline for a constant size.  From ASX__XDR_BIG
 * bytes on: 64-byte blocks, 16-byte aligned stores, and the destination
 * prefetched ASX__XDR_PREFETCH bytes ahead, so that a run of records copies
 * about as fast as one memcpy of the whole array (a per-record `rep movsq`,
 * the compiler's expansion, or a libc call was ~10 % slower for 4 KiB
 * bodies).  No non-temporal stores: the bytes stay in the cache, as with
 * memcpy.  @d and @s must not overlap.
 */
#define ASX__XDR_BIG		512
#define ASX__XDR_PREFETCH	512

static inline void asx__xdr_copy_big(void *dst, const void *src, size_t n)
{
	unsigned char *d = (unsigned char *)dst;
	const unsigned char *s = (const unsigned char *)src;
	unsigned char *const de = d + n - 64;
	const unsigned char *const se = s + n - 64;
	size_t a = (size_t)(-(uintptr_t)d & 15);

	memcpy(d, s, 64);
	d += a;
	s += a;
	for (; d < de; d += 64, s += 64) {
		__builtin_prefetch(d + ASX__XDR_PREFETCH, 1, 3);
		memcpy(d, s, 64);
	}
	memcpy(de, se, 64);
}

static inline void asx__xdr_copy(void *d, const void *s, size_t n)
{
	if (n >= ASX__XDR_BIG)
		asx__xdr_copy_big(d, s, n);
	else
		memcpy(d, s, n);
}

#define ASX__XDR_PUT32(e)	do { uint32_t t_ = asx__be32((uint32_t)(e)); memcpy(p_, &t_, 4); p_ += 4; } while (0);
#define ASX__XDR_PUTM32(m)	do { uint32_t t_; memcpy(&t_, &v->m, 4); t_ = asx__be32(t_); memcpy(p_, &t_, 4); p_ += 4; } while (0);
#define ASX__XDR_PUTM64(m)	do { uint64_t t_; memcpy(&t_, &v->m, 8); t_ = asx__be64(t_); memcpy(p_, &t_, 8); p_ += 8; } while (0);
#define ASX__XDR_XENC(K, m)	ASX__XDR_ENC_##K(m)
#define ASX__XDR_ENC_INT	ASX__XDR_PUTM32
#define ASX__XDR_ENC_UINT	ASX__XDR_PUTM32
#define ASX__XDR_ENC_FLOAT	ASX__XDR_PUTM32
#define ASX__XDR_ENC_HYPER	ASX__XDR_PUTM64
#define ASX__XDR_ENC_UHYPER	ASX__XDR_PUTM64
#define ASX__XDR_ENC_DOUBLE	ASX__XDR_PUTM64
#define ASX__XDR_ENC_BOOL(m)	ASX__XDR_PUT32(v->m ? 1 : 0)
#define ASX__XDR_ENC_ENUM(m)	ASX__XDR_PUT32((int32_t)v->m)
#define ASX__XDR_ENC_CHAR(m)	ASX__XDR_PUT32((int32_t)v->m)
#define ASX__XDR_ENC_SHORT(m)	ASX__XDR_PUT32((int32_t)v->m)
#define ASX__XDR_ENC_LONG(m)	ASX__XDR_PUT32((int32_t)v->m)
#define ASX__XDR_ENC_UCHAR(m)	ASX__XDR_PUT32(v->m)
#define ASX__XDR_ENC_USHORT(m)	ASX__XDR_PUT32(v->m)
#define ASX__XDR_ENC_ULONG(m)	ASX__XDR_PUT32(v->m)
#define ASX__XDR_ENC_OPAQUE(m)						\
	do {								\
		const size_t l_ = sizeof(v->m), w_ = (l_ + 3u) & ~(size_t)3; \
		if (w_ != l_)						\
			memset(p_ + w_ - 4, 0, 4);			\
		asx__xdr_copy(p_, v->m, l_);				\
		p_ += w_;						\
	} while (0);

/* The next big-endian word at *@pp, advancing it (a function: no GNU statement expression). */
static inline uint32_t asx__xdr_ld32(const unsigned char **pp)
{
	uint32_t u;

	memcpy(&u, *pp, 4);
	*pp += 4;
	return asx__be32(u);
}
#define ASX__XDR_GET32()	asx__xdr_ld32(&p_)
#define ASX__XDR_GETM32(m)	do { uint32_t t_ = ASX__XDR_GET32(); memcpy(&v->m, &t_, 4); } while (0);
#define ASX__XDR_GETM64(m)	do { uint64_t t_; memcpy(&t_, p_, 8); p_ += 8; t_ = asx__be64(t_); memcpy(&v->m, &t_, 8); } while (0);
#define ASX__XDR_GETN(m, lo, hi)					\
	do { int64_t t_ = (int32_t)ASX__XDR_GET32(); bad_ |= t_ < (lo) || t_ > (hi); \
	     v->m = (__typeof__(v->m))t_; } while (0);
#define ASX__XDR_GETU(m, hi)						\
	do { uint32_t t_ = ASX__XDR_GET32(); bad_ |= t_ > (hi); v->m = (__typeof__(v->m))t_; } while (0);
#define ASX__XDR_XDEC(K, m)	ASX__XDR_DEC_##K(m)
#define ASX__XDR_DEC_INT	ASX__XDR_GETM32
#define ASX__XDR_DEC_UINT	ASX__XDR_GETM32
#define ASX__XDR_DEC_FLOAT	ASX__XDR_GETM32
#define ASX__XDR_DEC_HYPER	ASX__XDR_GETM64
#define ASX__XDR_DEC_UHYPER	ASX__XDR_GETM64
#define ASX__XDR_DEC_DOUBLE	ASX__XDR_GETM64
#define ASX__XDR_DEC_ENUM(m)	ASX__XDR_GETN(m, INT32_MIN, INT32_MAX)
#define ASX__XDR_DEC_LONG(m)	ASX__XDR_GETN(m, INT32_MIN, INT32_MAX)
#define ASX__XDR_DEC_CHAR(m)	ASX__XDR_GETN(m, CHAR_MIN, CHAR_MAX)
#define ASX__XDR_DEC_SHORT(m)	ASX__XDR_GETN(m, SHRT_MIN, SHRT_MAX)
#define ASX__XDR_DEC_BOOL(m)	ASX__XDR_GETU(m, 1)
#define ASX__XDR_DEC_UCHAR(m)	ASX__XDR_GETU(m, UCHAR_MAX)
#define ASX__XDR_DEC_USHORT(m)	ASX__XDR_GETU(m, USHRT_MAX)
#define ASX__XDR_DEC_ULONG(m)	ASX__XDR_GETU(m, UINT32_MAX)
#define ASX__XDR_DEC_OPAQUE(m)						\
	do {								\
		const size_t l_ = sizeof(v->m);				\
		asx__xdr_copy(v->m, p_, l_);				\
		p_ += (l_ + 3u) & ~(size_t)3;				\
	} while (0);

#define ASX_XDR_DEFINE(name, S, FIELDS)					\
static inline const struct asx_xdr_record *name##_xdr_record(void)	\
{									\
	typedef S asx__xdr_s;						\
	static const struct asx_xdr_field f_[] = { FIELDS(ASX__XDR_TAB) }; \
	static const struct asx_xdr_record r_ = {			\
		#S, sizeof(S), sizeof(f_) / sizeof(f_[0]), f_ };	\
	return &r_;							\
}									\
static inline int name##_xdr_encode(struct asx_xdr *x, const S *v, size_t n) \
{									\
	for (; n; n--, v++) {						\
		const size_t wire_ = 0 FIELDS(ASX__XDR_WIRE);		\
		unsigned char *p_ = x->p;				\
		if (__builtin_expect(x->st_ != ASX__XDR_ENC ||		\
				     (size_t)(x->end - p_) < wire_ ||	\
				     !(1 FIELDS(ASX__XDR_EOK)), 0)) {	\
			int r_ = asx_xdr_records(x, name##_xdr_record(), (void *)v, 1); \
			if (r_)						\
				return r_;				\
			continue;					\
		}							\
		FIELDS(ASX__XDR_XENC)					\
		x->p = p_;						\
	}								\
	return 0;							\
}									\
static inline int name##_xdr_decode(struct asx_xdr *x, S *v, size_t n)	\
{									\
	for (; n; n--, v++) {						\
		const size_t wire_ = 0 FIELDS(ASX__XDR_WIRE);		\
		const unsigned char *p_ = x->p;				\
		bool bad_ = false;					\
		if (__builtin_expect(x->st_ == ASX__XDR_DEC &&		\
				     (size_t)(x->end - p_) >= wire_, 1)) { \
			FIELDS(ASX__XDR_XDEC)				\
			if (__builtin_expect(!bad_, 1)) {		\
				x->p = (unsigned char *)p_;		\
				continue;				\
			}						\
		}							\
		{							\
			int r_ = asx_xdr_records(x, name##_xdr_record(), v, 1); \
			if (r_)						\
				return r_;				\
		}							\
	}								\
	return 0;							\
}

/*
 * Code @n records of type @rec stored contiguously at @objs, in the
 * stream's direction.  In XDR mode field by field (bulk paths for arrays
 * and opaque); in raw mode the structs' native bytes (rec->size each), or
 * -EINVAL for a record with an ASX_XDR_FIELD_POINTER at any depth.
 */
ASX_API int asx_xdr_records(struct asx_xdr *x, const struct asx_xdr_record *rec,
			    void *objs, size_t n);
static inline int asx_xdr_record(struct asx_xdr *x, const struct asx_xdr_record *rec, void *obj)
{
	return asx_xdr_records(x, rec, obj, 1);
}
/* Code one field of the object at @obj (fields in unions, custom tables). */
ASX_API int asx_xdr_field(struct asx_xdr *x, const struct asx_xdr_field *f, void *obj);

/* ---- buffered channel over a file descriptor (record marking) ---- */

/*
 * A channel over a connected, blocking stream descriptor (a TCP or UNIX
 * socket, a pipe).  Records are framed with RFC 5531 record marking (a
 * 4-byte header per fragment, top bit = last fragment), byte-compatible
 * with libtirpc's xdrrec.  Encoded bytes are buffered; a fragment leaves
 * when the buffer fills, at asx_xdr_chan_flush(), or at the end of a
 * record when asked; opaque items of at least ASX_XDR_CHAN_GATHER bytes
 * are not copied but sent from the caller's memory with writev().  On the
 * read side records may arrive in any pieces; large opaque items are read
 * straight into the caller's buffer.  The channel does not own @fd.
 */
#define ASX_XDR_CHAN_GATHER	2048

struct asx_xdr_chan_opts {
	size_t sz;		/* sizeof(struct asx_xdr_chan_opts) */
	size_t sendsize;	/* send buffer (default 64 KiB, 64..1 GiB) */
	size_t recvsize;	/* receive buffer (default 64 KiB) */
	size_t max_record;	/* largest record accepted (default 64 MiB) */
};

/* 0 and *@out, or -EINVAL (bad @fd or options), -E2BIG, -ENOMEM.  @opts may be NULL. */
ASX_API int asx_xdr_chan_create(struct asx_xdr_chan **out, int fd,
				const struct asx_xdr_chan_opts *opts);
ASX_API void asx_xdr_chan_destroy(struct asx_xdr_chan *c);

/* The channel's encoder and decoder streams (owned by the channel). */
ASX_API struct asx_xdr *asx_xdr_chan_out(struct asx_xdr_chan *c);
ASX_API struct asx_xdr *asx_xdr_chan_in(struct asx_xdr_chan *c);

/* End the record being encoded; @flush: write everything buffered now. */
ASX_API int asx_xdr_chan_end_record(struct asx_xdr_chan *c, bool flush);
/* Write out what is buffered (a partial record goes as a non-last fragment). */
ASX_API int asx_xdr_chan_flush(struct asx_xdr_chan *c);
/*
 * Skip what is left of the current input record and start the next:
 * 1 when a record begins, 0 at end of file between records, or a negative
 * errno (-EBADMSG: the connection ended inside a record).
 */
ASX_API int asx_xdr_chan_next_record(struct asx_xdr_chan *c);
/* True when the current input record has been decoded to its end. */
ASX_API bool asx_xdr_chan_record_done(struct asx_xdr_chan *c);

/* ---- the XDR Module for Streams (asx/stream.h) ---- */

/*
 * asx_mod_xdr(&mod, name, rec, opts): a Module (ready to push, like asx_mod_framer)
 * that presents records of type @rec in XDR below it and natively above.
 *
 * Write side (going down): a DATA message holds a C array of native
 * records, `struct S v[count]`, with count = length / rec->size; the
 * bytes may be split over any number of blocks, anywhere.  It is replaced
 * by a DATA message (same band) holding exactly what
 * asx_xdr_records(x, rec, v, count) writes: the records' XDR encodings
 * back to back, with no count or header (the message boundary delimits
 * them).  The encoding is written into new message blocks by the chain
 * encoder, coded straight from the input blocks (only a record that
 * straddles two blocks or is misaligned for S is copied first); the
 * first block keeps 64 bytes of headroom for the layers below.  A length
 * that is not a multiple of rec->size gives -EINVAL; an encode error
 * (-ERANGE, -EMSGSIZE, -EINVAL) or -ENOMEM is returned as is.  Either way
 * the message is refused unchanged (still the caller's: asx_stream_put
 * returns the error; a task-based Task's default service loop drops it).
 *
 * Read side (going up): a DATA message of XDR bytes is decoded across its
 * blocks (no pullup) record after record until its end, into a new
 * one-block DATA message (same band) holding `struct S v[count]` at an
 * address aligned for any type; bytes not written by the decoder (struct
 * padding, unused capacity of strings and arrays) are zero.  A message
 * that does not decode -- truncated, trailing bytes that are not a whole
 * record, an invalid value (-EBADMSG), a length over a capacity or the
 * limit, or more than max_msg bytes of records (-EMSGSIZE) -- is freed,
 * counted (dec_errors), and replaced by an ASX_MSG_ERROR message sent up
 * in its place, as a STREAMS module does with M_ERROR: two data bytes,
 * [0] = the read-side errno (EBADMSG or EMSGSIZE, positive), [1] = the
 * write-side errno (always 0: the write side is unaffected).  The Module
 * does not latch the error: the next message is decoded normally; the
 * application decides what an ERROR means.  -ENOMEM, or a failure to pass
 * the ERROR up, returns the error with the message still the caller's.
 *
 * Both sides: a DATA message of length 0 (zero records) passes through
 * as it is, and every other message type passes through untouched.
 * Records whose encoding can be empty (only CUSTOM fields writing
 * nothing) cannot be counted on the read side (-EBADMSG).  Stateless
 * apart from the statistics: any number of threads may put on either
 * side at once, message-based or task-based.  0 and *@out, or -EINVAL
 * (a bad name, a NULL or empty @rec, bad @opts), -E2BIG (@opts from a
 * newer header with fields set this library lacks) or -ENOMEM.  @rec must
 * outlive the Module.
 */
struct asx_module;

#define ASX_XDR_MOD_MAX_MSG	(64u << 20)	/* default largest decoded message */

struct asx_xdr_mod_opts {
	size_t sz;		/* sizeof(struct asx_xdr_mod_opts) */
	size_t limit;		/* the codec's item limit, asx_xdr_set_limit()
				 * (0: ASX_XDR_DEFAULT_LIMIT) */
	size_t max_msg;		/* largest native message the read side makes,
				 * bytes (0: ASX_XDR_MOD_MAX_MSG) */
};

ASX_API int asx_mod_xdr(struct asx_module **out, const char *name,
			const struct asx_xdr_record *rec, const struct asx_xdr_mod_opts *opts);

struct asx_xdr_mod_stats {
	uint64_t enc_msgs;	/* write side: DATA messages encoded and passed on */
	uint64_t enc_records;
	uint64_t enc_bytes;	/* XDR bytes passed on */
	uint64_t enc_errors;	/* refused (bad length, encode error, no memory) */
	uint64_t dec_msgs;	/* read side: DATA messages decoded and passed on */
	uint64_t dec_records;
	uint64_t dec_errors;	/* did not decode (an ERROR went up) */
};
/*
 * A snapshot of an XDR Module's counters: 0, or -EINVAL (not an XDR
 * Module).  A message is counted once the next Task took it, so a
 * message may reach the head a moment before it is counted.
 */
ASX_API int asx_mod_xdr_stats(struct asx_module *mod, struct asx_xdr_mod_stats *s);

#ifdef __cplusplus
}
#endif
#endif /* ASX_XDR_H */
