// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdr.c - the target-independent part of the XDR streams: slow paths of
 * the inline primitives, opaque/string/array coding, bulk byte swapping,
 * the raw mode.
 *
 * The inline fast paths compare one byte, st_ (direction | mode, with
 * ASX__XDR_BROKEN set after an error), against the state they need, so a
 * wrong direction, a wrong mode and a failed stream all land here, where
 * they are told apart.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/xdr.h>
#include "core/compiler.h"
#include "xdr/xdr_internal.h"

_Static_assert(sizeof(int) == 4, "ASX_XDR_ENUM assumes a 4-byte int");
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE 754 float/double");

static const unsigned char zeros[4];

void asx__xdr_init(struct asx_xdr *x, const struct asx_xdr_ops *ops, enum asx_xdr_op op,
		   unsigned char *base, unsigned char *end, uint64_t after)
{
	memset(x, 0, sizeof(*x));
	x->p = base;
	x->end = end;
	x->base_ = base;
	x->st_ = (uint8_t)op | ASX_XDR_MODE_XDR;
	x->limit_ = ASX_XDR_DEFAULT_LIMIT;
	x->after_ = after;
	x->ops_ = ops;
}

int asx__xdr_fail(struct asx_xdr *x, int err)
{
	if (!x->err_)
		x->err_ = err;
	x->st_ |= ASX__XDR_BROKEN;
	return x->err_;
}

int asx__xdr_check(struct asx_xdr *x, unsigned int st)
{
	if (likely(x->st_ == st))
		return 0;
	if (x->st_ & ASX__XDR_BROKEN)
		return x->err_ ? x->err_ : -EINVAL;
	if ((x->st_ ^ st) & 1)
		return asx__xdr_fail(x, -EINVAL);
	return asx__xdr_fail(x, -EPROTOTYPE);
}

enum asx_xdr_mode asx_xdr_set_mode(struct asx_xdr *x, enum asx_xdr_mode mode)
{
	enum asx_xdr_mode old = asx_xdr_mode(x);

	x->st_ = (uint8_t)((x->st_ & ~ASX_XDR_MODE_RAW) | (mode & ASX_XDR_MODE_RAW));
	return old;
}

void asx_xdr_fini(struct asx_xdr *x)
{
	if (x->ops_ && x->ops_->fini)
		x->ops_->fini(x);
	x->ops_ = NULL;
	x->p = x->end = x->base_ = NULL;
	x->st_ |= ASX__XDR_BROKEN;
	if (!x->err_)
		x->err_ = -EINVAL;
}

static int next_window(struct asx_xdr *x, size_t want)
{
	int ret;

	if (!x->ops_)
		return asx__xdr_fail(x, -EINVAL);
	ret = x->ops_->next(x, want);
	if (ret)
		return asx__xdr_fail(x, ret);
	return 0;
}

static int put_bytes_raw(struct asx_xdr *x, const unsigned char *s, size_t n)
{
	while (n) {
		size_t room = (size_t)(x->end - x->p);
		int ret;

		if (!room) {
			ret = next_window(x, n);
			if (ret)
				return ret;
			continue;
		}
		if (room > n)
			room = n;
		asx__xdr_copy(x->p, s, room);
		x->p += room;
		s += room;
		n -= room;
	}
	return 0;
}

static int get_bytes_raw(struct asx_xdr *x, unsigned char *d, size_t n)
{
	while (n) {
		size_t have = (size_t)(x->end - x->p);
		int ret;

		if (!have) {
			ret = next_window(x, n);
			if (ret)
				return ret;
			continue;
		}
		if (have > n)
			have = n;
		if (d) {
			asx__xdr_copy(d, x->p, have);
			d += have;
		}
		x->p += have;
		n -= have;
	}
	return 0;
}

int asx__xdr_put_slow(struct asx_xdr *x, const void *src, size_t n, unsigned int st)
{
	int ret = asx__xdr_check(x, st);

	return ret ? ret : put_bytes_raw(x, src, n);
}

int asx__xdr_get_slow(struct asx_xdr *x, void *dst, size_t n, unsigned int st)
{
	int ret = asx__xdr_check(x, st);

	if (ret)
		return ret;
	if (unlikely(n > asx__xdr_remaining(x)))
		return asx__xdr_fail(x, -EBADMSG);
	return get_bytes_raw(x, dst, n);
}

/* ---- opaque, strings ---- */

static int put_body(struct asx_xdr *x, const void *src, size_t len)
{
	size_t pad = asx__xdr_pad(len);

	if (likely((size_t)(x->end - x->p) >= len + pad)) {
		asx__xdr_copy(x->p, src, len);
		x->p += len;
		/* up to 3 zero bytes; a 4-byte store would overrun a full window */
		for (; pad; pad--)
			*x->p++ = 0;
		return 0;
	}
	if (len >= ASX_XDR_CHAN_GATHER && x->ops_ && x->ops_->bulk_put) {
		int ret = x->ops_->bulk_put(x, src, len);

		if (ret)
			return asx__xdr_fail(x, ret);
	} else {
		int ret = put_bytes_raw(x, src, len);

		if (ret)
			return ret;
	}
	return put_bytes_raw(x, zeros, pad);
}

int asx_xdr_put_opaque(struct asx_xdr *x, const void *src, size_t len)
{
	int ret = asx__xdr_check(x, ASX__XDR_ENC);

	if (ret)
		return ret;
	if (unlikely(len > UINT32_MAX - 3))
		return asx__xdr_fail(x, -EMSGSIZE);
	return put_body(x, src, len);
}

int asx_xdr_put_bytes(struct asx_xdr *x, const void *src, size_t len)
{
	int ret;

	if (unlikely(len > UINT32_MAX - 3))
		return asx__xdr_fail(x, -EMSGSIZE);
	ret = asx_xdr_put_u32(x, (uint32_t)len);
	return ret ? ret : put_body(x, src, len);
}

int asx_xdr_put_string(struct asx_xdr *x, const char *s)
{
	return asx_xdr_put_bytes(x, s, strlen(s));
}

static int get_body(struct asx_xdr *x, void *dst, size_t len)
{
	size_t pad = asx__xdr_pad(len);
	size_t have = (size_t)(x->end - x->p);

	if (likely(have >= len + pad)) {
		asx__xdr_copy(dst, x->p, len);
		x->p += len + pad;
		return 0;
	}
	if (unlikely((uint64_t)len + pad > asx__xdr_remaining(x)))
		return asx__xdr_fail(x, -EBADMSG);
	if (len >= ASX_XDR_CHAN_GATHER && x->ops_ && x->ops_->bulk_get) {
		int ret = x->ops_->bulk_get(x, dst, len);

		if (ret)
			return asx__xdr_fail(x, ret);
	} else {
		int ret = get_bytes_raw(x, dst, len);

		if (ret)
			return ret;
	}
	return get_bytes_raw(x, NULL, pad);
}

int asx_xdr_get_opaque(struct asx_xdr *x, void *dst, size_t len)
{
	int ret = asx__xdr_check(x, ASX__XDR_DEC);

	if (ret)
		return ret;
	if (unlikely(len > UINT32_MAX - 3))
		return asx__xdr_fail(x, -EMSGSIZE);
	return get_body(x, dst, len);
}

int asx_xdr_get_count(struct asx_xdr *x, uint32_t *n, size_t max, size_t unit)
{
	uint32_t v;
	int ret = asx_xdr_get_u32(x, &v);

	if (ret)
		return ret;
	if (v > max || v > x->limit_)
		return asx__xdr_fail(x, -EMSGSIZE);
	if (unit && (uint64_t)v * unit > asx__xdr_remaining(x))
		return asx__xdr_fail(x, -EBADMSG);
	*n = v;
	return 0;
}

int asx_xdr_get_bytes(struct asx_xdr *x, void *dst, size_t cap, uint32_t *len)
{
	uint32_t n;
	int ret = asx_xdr_get_count(x, &n, cap, 1);

	if (ret)
		return ret;
	ret = get_body(x, dst, n);
	if (!ret)
		*len = n;
	return ret;
}

int asx_xdr_get_string(struct asx_xdr *x, char *dst, size_t cap)
{
	uint32_t n;
	int ret;

	if (unlikely(!cap))
		return asx__xdr_fail(x, -EINVAL);
	ret = asx_xdr_get_count(x, &n, cap - 1, 1);
	if (ret)
		return ret;
	ret = get_body(x, dst, n);
	if (ret)
		return ret;
	dst[n] = '\0';
	return 0;
}

/* ---- homogeneous arrays ---- */

void asx__xdr_bswap32_scalar(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t v;

		memcpy(&v, sp + 4 * i, 4);
		v = asx__be32(v);
		memcpy(dp + 4 * i, &v, 4);
	}
}

void asx__xdr_bswap64_scalar(void *d, const void *s, size_t n)
{
	unsigned char *dp = d;
	const unsigned char *sp = s;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t v;

		memcpy(&v, sp + 8 * i, 8);
		v = asx__be64(v);
		memcpy(dp + 8 * i, &v, 8);
	}
}

#if defined(__x86_64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

static AVX2 void bswap_avx2(unsigned char *d, const unsigned char *s, size_t bytes,
			    __m256i shuf, size_t w)
{
	size_t i = 0;

	for (; i + 64 <= bytes; i += 64) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
		__m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 32));

		_mm256_storeu_si256((__m256i *)(d + i), _mm256_shuffle_epi8(a, shuf));
		_mm256_storeu_si256((__m256i *)(d + i + 32), _mm256_shuffle_epi8(b, shuf));
	}
	for (; i + 32 <= bytes; i += 32) {
		__m256i a = _mm256_loadu_si256((const __m256i *)(s + i));

		_mm256_storeu_si256((__m256i *)(d + i), _mm256_shuffle_epi8(a, shuf));
	}
	if (i < bytes) {
		/* the tail: a last full vector ending at the end, unless the
		 * buffers overlap in place (then word by word) */
		if (bytes >= 32 && d != s) {
			__m256i a = _mm256_loadu_si256((const __m256i *)(s + bytes - 32));

			_mm256_storeu_si256((__m256i *)(d + bytes - 32), _mm256_shuffle_epi8(a, shuf));
		} else {
			if (w == 4)
				asx__xdr_bswap32_scalar(d + i, s + i, (bytes - i) / 4);
			else
				asx__xdr_bswap64_scalar(d + i, s + i, (bytes - i) / 8);
		}
	}
}

static AVX2 void bswap32_avx2(void *d, const void *s, size_t n)
{
	const __m256i shuf = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12,
					      3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);

	if (n < 8) {
		asx__xdr_bswap32_scalar(d, s, n);
		return;
	}
	bswap_avx2(d, s, n * 4, shuf, 4);
}

static AVX2 void bswap64_avx2(void *d, const void *s, size_t n)
{
	const __m256i shuf = _mm256_setr_epi8(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8,
					      7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);

	if (n < 4) {
		asx__xdr_bswap64_scalar(d, s, n);
		return;
	}
	bswap_avx2(d, s, n * 8, shuf, 8);
}
#endif

void (*asx__xdr_bswap32)(void *d, const void *s, size_t n) = asx__xdr_bswap32_scalar;
void (*asx__xdr_bswap64)(void *d, const void *s, size_t n) = asx__xdr_bswap64_scalar;

int asx_xdr_set_simd(int on)
{
#if defined(__x86_64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	__builtin_cpu_init();
	if (on && __builtin_cpu_supports("avx2")) {
		asx__xdr_bswap32 = bswap32_avx2;
		asx__xdr_bswap64 = bswap64_avx2;
		return 1;
	}
#endif
	asx__xdr_bswap32 = asx__xdr_bswap32_scalar;
	asx__xdr_bswap64 = asx__xdr_bswap64_scalar;
	return 0;
}

/*
 * Pick the byte swap once, before main() (so no thread can see the pointer
 * change).  ASX_XDR_SIMD=0 in the environment keeps the scalar loop.
 */
__attribute__((constructor)) static void xdr_pick_bswap(void)
{
	const char *e = getenv("ASX_XDR_SIMD");

	asx_xdr_set_simd(!(e && e[0] == '0'));
}

typedef void (*bswap_fn)(void *d, const void *s, size_t n);

static int put_array(struct asx_xdr *x, const unsigned char *v, size_t n, size_t w,
		     bswap_fn fn)
{
	int ret = asx__xdr_check(x, ASX__XDR_ENC);

	if (ret)
		return ret;
	while (n) {
		size_t k = (size_t)(x->end - x->p) / w;

		if (!k) {
			/* a word straddles the window end */
			unsigned char t[8];

			fn(t, v, 1);
			ret = put_bytes_raw(x, t, w);
			if (ret)
				return ret;
			v += w;
			n--;
			continue;
		}
		if (k > n)
			k = n;
		fn(x->p, v, k);
		x->p += k * w;
		v += k * w;
		n -= k;
	}
	return 0;
}

static int get_array(struct asx_xdr *x, unsigned char *v, size_t n, size_t w, bswap_fn fn)
{
	int ret = asx__xdr_check(x, ASX__XDR_DEC);

	if (ret)
		return ret;
	if (unlikely((uint64_t)n * w > asx__xdr_remaining(x) || n > SIZE_MAX / w))
		return asx__xdr_fail(x, -EBADMSG);
	while (n) {
		size_t k = (size_t)(x->end - x->p) / w;

		if (!k) {
			unsigned char t[8];

			ret = get_bytes_raw(x, t, w);
			if (ret)
				return ret;
			fn(v, t, 1);
			v += w;
			n--;
			continue;
		}
		if (k > n)
			k = n;
		fn(v, x->p, k);
		x->p += k * w;
		v += k * w;
		n -= k;
	}
	return 0;
}

int asx_xdr_put_u32_array(struct asx_xdr *x, const uint32_t *v, size_t n)
{
	return put_array(x, (const unsigned char *)v, n, 4, asx__xdr_bswap32);
}

int asx_xdr_put_u64_array(struct asx_xdr *x, const uint64_t *v, size_t n)
{
	return put_array(x, (const unsigned char *)v, n, 8, asx__xdr_bswap64);
}

int asx_xdr_get_u32_array(struct asx_xdr *x, uint32_t *v, size_t n)
{
	return get_array(x, (unsigned char *)v, n, 4, asx__xdr_bswap32);
}

int asx_xdr_get_u64_array(struct asx_xdr *x, uint64_t *v, size_t n)
{
	return get_array(x, (unsigned char *)v, n, 8, asx__xdr_bswap64);
}

int asx_xdr_vector(struct asx_xdr *x, void *base, size_t n, size_t size, asx_xdr_fn fn)
{
	unsigned char *b = base;
	size_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = fn(x, b + i * size);
		if (ret)
			return asx__xdr_fail(x, ret);
	}
	return x->err_;
}

int asx_xdr_array(struct asx_xdr *x, void *base, uint32_t *n, uint32_t max,
		  size_t size, asx_xdr_fn fn)
{
	int ret;

	if (asx_xdr_op(x) == ASX_XDR_ENCODE) {
		if (*n > max)
			return asx__xdr_fail(x, -EMSGSIZE);
		ret = asx_xdr_put_u32(x, *n);
	} else {
		/* every XDR element takes at least 4 bytes on the wire */
		ret = asx_xdr_get_count(x, n, max, 4);
	}
	return ret ? ret : asx_xdr_vector(x, base, *n, size, fn);
}

/* ---- raw mode ---- */

int asx_raw_put(struct asx_xdr *x, const void *src, size_t n)
{
	int ret = asx__xdr_check(x, ASX_XDR_ENCODE | ASX_XDR_MODE_RAW);

	if (ret)
		return ret;
	if (likely((size_t)(x->end - x->p) >= n)) {
		asx__xdr_copy(x->p, src, n);
		x->p += n;
		return 0;
	}
	if (n >= ASX_XDR_CHAN_GATHER && x->ops_ && x->ops_->bulk_put) {
		ret = x->ops_->bulk_put(x, src, n);
		return ret ? asx__xdr_fail(x, ret) : 0;
	}
	return put_bytes_raw(x, src, n);
}

int asx_raw_get(struct asx_xdr *x, void *dst, size_t n)
{
	int ret = asx__xdr_check(x, ASX_XDR_DECODE | ASX_XDR_MODE_RAW);

	if (ret)
		return ret;
	if (likely((size_t)(x->end - x->p) >= n)) {
		asx__xdr_copy(dst, x->p, n);
		x->p += n;
		return 0;
	}
	if (unlikely(n > asx__xdr_remaining(x)))
		return asx__xdr_fail(x, -EBADMSG);
	if (n >= ASX_XDR_CHAN_GATHER && x->ops_ && x->ops_->bulk_get) {
		ret = x->ops_->bulk_get(x, dst, n);
		return ret ? asx__xdr_fail(x, ret) : 0;
	}
	return get_bytes_raw(x, dst, n);
}
