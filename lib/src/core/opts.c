// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* opts.c - the size-first option struct checker (core/opts.h). */
#include <errno.h>
#include <string.h>

#include "core/opts.h"

int asx__opts_copy(void *dst, size_t dst_size, const void *src, size_t src_sz)
{
	const unsigned char *p = src;

	memset(dst, 0, dst_size);
	if (!src)
		return 0;
	if (src_sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = dst_size; i < src_sz; i++)
		if (p[i])
			return -E2BIG;
	memcpy(dst, src, src_sz < dst_size ? src_sz : dst_size);
	*(size_t *)dst = dst_size;	/* every field read from here on is ours */
	return 0;
}
