/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * opts.h - the one checker of libasx's size-first option structs.
 *
 * Every public function taking a `const struct asx_*_opts *` reads it
 * through ASX__OPTS_COPY() into a local copy, and only reads the copy.
 */
#ifndef ASX_CORE_OPTS_H
#define ASX_CORE_OPTS_H

#include <stddef.h>

/*
 * Copy the caller's option struct @src (@src_sz bytes, its ->sz) into
 * @dst (@dst_size bytes, this library's struct):
 *   - @src NULL: @dst all defaults (zero bytes), 0;
 *   - @src_sz < sizeof(size_t) (0 included): -EINVAL;
 *   - @src_sz <= @dst_size (an older or the same caller): its bytes, the
 *     fields it does not know zero (their defaults), 0;
 *   - @src_sz > @dst_size (a newer caller): -E2BIG if any byte past
 *     @dst_size is non-zero (an option this library cannot honour),
 *     else its first @dst_size bytes, 0.
 * On success @dst->sz is @dst_size.  On failure @dst is all zero.
 * Every option field is documented so that 0 means its default.
 */
int asx__opts_copy(void *dst, size_t dst_size, const void *src, size_t src_sz);

/* ASX__OPTS_COPY(&local, caller_opts): the same, sizes taken from the types. */
#define ASX__OPTS_COPY(dst, src)						\
	((void)sizeof((dst) == (src)),	/* the same struct type */		\
	 asx__opts_copy((dst), sizeof(*(dst)), (src), (src) ? (src)->sz : 0))

#endif /* ASX_CORE_OPTS_H */
