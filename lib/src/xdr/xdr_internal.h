/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* xdr_internal.h - what the XDR targets share. */
#ifndef ASX_XDR_INTERNAL_H
#define ASX_XDR_INTERNAL_H

#include <asx/xdr.h>

/*
 * A target's hooks.  next() is called when the window [p, end) is
 * exhausted (p == end is not required: a target must cope with a few
 * bytes left over): an encoder makes room, a decoder brings data.  It
 * returns 0 with a non-empty window, or a negative errno.  @want is how
 * many bytes the caller still has to move (a hint).  bulk_put/bulk_get
 * (optional) move a large opaque body without going through the window;
 * they are called with an empty or partly used window.
 */
struct asx_xdr_ops {
	int (*next)(struct asx_xdr *x, size_t want);
	int (*bulk_put)(struct asx_xdr *x, const void *src, size_t n);
	int (*bulk_get)(struct asx_xdr *x, void *dst, size_t n);
	void (*fini)(struct asx_xdr *x);
};

/* Reset the common state of @x for a target. */
void asx__xdr_init(struct asx_xdr *x, const struct asx_xdr_ops *ops, enum asx_xdr_op op,
		   unsigned char *base, unsigned char *end, uint64_t after);

/* Check that @x is usable for @st (op|mode); 0 or the sticky error. */
int asx__xdr_check(struct asx_xdr *x, unsigned int st);

/* Byte-swap @n 32-bit (64-bit) words from @s to @d (unaligned, may be equal). */
extern void (*asx__xdr_bswap32)(void *d, const void *s, size_t n);
extern void (*asx__xdr_bswap64)(void *d, const void *s, size_t n);
void asx__xdr_bswap32_scalar(void *d, const void *s, size_t n);
void asx__xdr_bswap64_scalar(void *d, const void *s, size_t n);

static inline size_t asx__xdr_pad(size_t n)
{
	return (4 - (n & 3)) & 3;
}

static inline uint64_t asx__xdr_remaining(const struct asx_xdr *x)
{
	uint64_t w = (uint64_t)(x->end - x->p);

	return x->after_ == UINT64_MAX ? UINT64_MAX : w + x->after_;
}

/*
 * Each target's state, in struct asx_xdr's fixed asx__target storage.
 * may_alias: that storage is declared as pointers and integers.
 */
union __attribute__((may_alias)) asx__xdr_target {
	struct {
		unsigned char *buf;
		size_t cap, max;
		bool owned;
	} mem;
	struct {
		struct asx_msg *head, *cur;
		size_t block;
	} msg;
	struct asx_xdr_chan *chan;
};
_Static_assert(sizeof(union asx__xdr_target) <= sizeof(((struct asx_xdr *)0)->asx__target),
	       "a target's state outgrows struct asx_xdr's asx__target");
_Static_assert(_Alignof(union asx__xdr_target) <= _Alignof(struct asx_xdr),
	       "a target's state needs more alignment than struct asx_xdr has");
#define ASX__XDR_T(x)	((union asx__xdr_target *)(void *)&(x)->asx__target)

#endif /* ASX_XDR_INTERNAL_H */
