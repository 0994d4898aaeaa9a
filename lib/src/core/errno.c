// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * errno.c - the one way libasx reaches errno (core/errno.h says why).
 */
#define ASX_CORE_ERRNO_IMPL 1
#include "core/errno.h"

/* noipa: no caller may learn that it returns the same address each time */
#if defined(__clang__)
__attribute__((noinline))
#else
__attribute__((noipa))
#endif
int *asx__errno_location(void)
{
	return __errno_location();
}
