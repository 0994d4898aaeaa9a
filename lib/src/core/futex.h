/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * futex.h - thin wrappers over futex(2) for libasx's locks.
 *
 * Every futex here is process-private (FUTEX_PRIVATE_FLAG).  Waits use
 * FUTEX_WAIT_BITSET without FUTEX_CLOCK_REALTIME, so @abstime is an
 * absolute CLOCK_MONOTONIC deadline, which is the library's convention.
 *
 * The wrappers return 0 or a negative errno and leave errno untouched.
 * ThreadSanitizer does not see through futex(2): the callers' atomics on
 * the futex word must carry all the ordering.
 */
#ifndef ASX_FUTEX_H
#define ASX_FUTEX_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#if !defined(SYS_futex) && defined(SYS_futex_time64)
#define SYS_futex SYS_futex_time64
#endif

static inline long asx__futex(uint32_t *uaddr, int op, uint32_t val,
			      const struct timespec *ts, uint32_t val3)
{
	int saved = errno;
	long r = syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val, ts, NULL, val3);

	if (r < 0) {
		r = -errno;
		errno = saved;
	}
	return r;
}

/*
 * Sleep while *@uaddr == @val, until woken or @abstime (CLOCK_MONOTONIC,
 * NULL: never).  0 when woken (possibly spuriously), -EAGAIN when the
 * word no longer held @val, -EINTR on a signal, -ETIMEDOUT, -EINVAL for
 * a malformed @abstime.
 */
static inline int asx_futex_wait(uint32_t *uaddr, uint32_t val,
				 const struct timespec *abstime)
{
	return (int)asx__futex(uaddr, FUTEX_WAIT_BITSET, val, abstime,
			       FUTEX_BITSET_MATCH_ANY);
}

/* Wake up to @n sleepers on @uaddr (INT_MAX: all); returns how many woke. */
static inline int asx_futex_wake(uint32_t *uaddr, int n)
{
	return (int)asx__futex(uaddr, FUTEX_WAKE, (uint32_t)n, NULL, 0);
}

/* True when @ts is a valid timespec for futex(2). */
static inline int asx_timespec_valid(const struct timespec *ts)
{
	return !ts || (ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L);
}

#endif /* ASX_FUTEX_H */
