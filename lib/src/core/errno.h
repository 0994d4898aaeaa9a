/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * core/errno.h - errno for code that may resume on another kernel thread.
 *
 * glibc declares __errno_location() const, so within one function the
 * compiler may compute errno's address once and keep it across calls.  A
 * libasx call made on an ASC user thread may park and resume on another
 * VP (another pthread, another errno): an errno read after the park would
 * read the first VP's.  The Makefile compiles every libasx source with
 * this header forced in first (-include), so errno there is a call the
 * compiler cannot see through, made afresh at every read and write; only
 * core/errno.c reaches __errno_location() (tools/lib-layers.sh checks
 * that no other object does).  Errors are the slow path: the call costs
 * nothing that matters.
 */
#ifndef ASX_CORE_ERRNO_H
#define ASX_CORE_ERRNO_H

#include <errno.h>

int *asx__errno_location(void);

#ifndef ASX_CORE_ERRNO_IMPL
#undef errno
#define errno (*asx__errno_location())
#endif

#endif /* ASX_CORE_ERRNO_H */
