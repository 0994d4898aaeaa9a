/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/common.h - conventions shared by every libasx header.
 *
 * Errors: functions that can fail return 0 (or a non-negative count) on
 * success and a negative errno value on failure.  libasx never sets or
 * reads a global error state; errno is left as the C library left it.
 *
 * Time: every timeout is an absolute deadline on CLOCK_MONOTONIC given as
 * a `const struct timespec *`; NULL means "wait for ever".  A wall-clock
 * jump never shortens or lengthens a wait.  asx_deadline() builds one from
 * a relative number of nanoseconds; ASX_DEADLINE_NOW is a deadline
 * already passed ("do not wait": try once, then -ETIMEDOUT).
 *
 * Options: a function with options takes `const struct asx_X_opts *opts`,
 * NULL meaning every default.  The struct is size-first (`size_t sz` is
 * its first field) so it can grow without breaking callers; declare one
 * with ASX_OPTS() below, which sets sz and zeroes every other byte, and
 * set the fields you want (0 is always a field's default).  Every such
 * function checks it the same way: sz below sizeof(size_t) (0 included) is
 * -EINVAL; a smaller sz (a program built against an older header) gets
 * the defaults for the fields it does not know; a larger sz (a newer
 * header) is accepted when the bytes this library does not know are all
 * zero, else -E2BIG.
 *
 * Constructors: `int asx_X_create(struct asx_X **out, ...)` stores the new
 * object in *out and returns 0, or returns a negative errno and leaves
 * *out alone; its counterpart is asx_X_destroy().  The exceptions return
 * the object or NULL, where NULL means -ENOMEM (or, for asx_msg_alloc(), a
 * type above 255): the message-block allocators of the hot path, asx_msg_alloc(),
 * asx_msg_wrap(), asx_msg_dup(), asx_msg_copy() and asx_xdr_msg_finish().
 * Accessors returning a pointer to an existing object (asx_module_rd(),
 * asx_xdr_chan_out(), ...) are not constructors.
 *
 * Names: public ones start asx_ (ASX_ for macros); names starting asx__
 * (ASX__) are the library's own, visible only because an inline function
 * or a macro of a public header needs them: never call them.
 */
#ifndef ASX_COMMON_H
#define ASX_COMMON_H

#include <errno.h>	/* every call's failure is a negative E* value */
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The headers work in any mode, -std=c11 as well as -std=gnu11, with or
 * without feature-test macros, in any include order.  In strict ISO C
 * (-std=c11 and no _POSIX_C_SOURCE) <time.h> hides POSIX's clock, which
 * the inline helpers below read: declare it as POSIX does (clockid_t is
 * an int on Linux, CLOCK_MONOTONIC is 1).
 */
#ifdef CLOCK_MONOTONIC
#define ASX__CLOCK_MONOTONIC CLOCK_MONOTONIC
#else
#define ASX__CLOCK_MONOTONIC 1
extern int clock_gettime(int, struct timespec *);
#endif

/* Marks a symbol exported from libasx.so; everything else is hidden. */
#ifndef ASX_API
#define ASX_API __attribute__((visibility("default")))
#endif

/*
 * Declare @name, an option struct of @type (`struct asx_X_opts`), with sz
 * set, the fields given as designated initialisers, every other byte zero:
 *   ASX_OPTS(struct asx_sock_opts, o, .sndbuf = 65536, .flags = ASX_SOCK_NODELAY);
 */
#define ASX_OPTS(type, name, ...)					\
	type name = { .sz = sizeof(type), __VA_ARGS__ }

/* The library version (the kernel ABI version is ASX_VERSION_* in <linux/asx.h>). */
#define ASX_LIB_VERSION_MAJOR 0
#define ASX_LIB_VERSION_MINOR 1
#define ASX_LIB_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH". */
ASX_API const char *asx_version(void);

#define ASX_NSEC_PER_SEC 1000000000ULL

/* Nanoseconds on CLOCK_MONOTONIC. */
static inline uint64_t asx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(ASX__CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * ASX_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Fill @ts with the CLOCK_MONOTONIC deadline @rel_ns from now; returns @ts. */
static inline struct timespec *asx_deadline(struct timespec *ts, uint64_t rel_ns)
{
	uint64_t t = asx_now_ns() + rel_ns;

	ts->tv_sec = (time_t)(t / ASX_NSEC_PER_SEC);
	ts->tv_nsec = (long)(t % ASX_NSEC_PER_SEC);
	return ts;
}

/* A deadline already passed: "do not wait" (any call taking a deadline). */
static const struct timespec asx__deadline_now __attribute__((unused)) = { 0, 0 };
#define ASX_DEADLINE_NOW (&asx__deadline_now)

static inline uint64_t asx_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * ASX_NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

#ifdef __cplusplus
}
#endif
#endif /* ASX_COMMON_H */
