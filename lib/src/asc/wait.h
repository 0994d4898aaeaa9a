/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * wait.h - the one wait primitive under libasx's blocking calls (wait.c).
 *
 * A lock or queue that waits for a 32-bit word to change calls
 * asx__word_wait() where it would call asx_futex_wait(), and
 * asx__word_wake() where it would call asx_futex_wake().  The caller
 * decides who waits; the primitive decides how:
 *
 *   - a plain pthread (or a VP's own loop) sleeps on the word with
 *     FUTEX_WAIT, exactly as before;
 *   - an ASC user thread parks: it queues an asx_waiter keyed by the
 *     word's address in a hashed table of parking buckets and switches
 *     out, so its VP runs other user threads (except inside an RCU
 *     read-side section, where it sleeps on the futex like a pthread:
 *     the section must not move to another VP).  A wake claims the waiter
 *     and makes the thread runnable on its ASC, from any context (another
 *     user thread, a pthread, another VP, the sentinel's timer).
 *
 * The protocol is the futex one: a waiter sleeps only if the word still
 * holds @val when it is queued (checked under the bucket's lock after it
 * counted itself in), and a waker changes the word before it wakes.
 * Either the waker sees the waiter counted in, or the waiter sees the new
 * value.  Wakes may be spurious for either kind of waiter; every caller
 * re-checks its condition.  A waker that finds no user thread parked in
 * the word's bucket pays one fence and one load more than a bare
 * FUTEX_WAKE.
 */
#ifndef ASX_ASC_WAIT_H
#define ASX_ASC_WAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

/*
 * Wait while *@word == @val, until woken or @abstime (CLOCK_MONOTONIC,
 * NULL: never).  0 when woken (possibly spuriously), -EAGAIN when the word
 * no longer held @val, -ETIMEDOUT, -EINVAL for a malformed @abstime, and
 * from a pthread -EINTR on a signal (as asx_futex_wait()).
 */
int asx__word_wait(uint32_t *word, uint32_t val, const struct timespec *abstime);

/*
 * Wake up to @n waiters (INT_MAX: all) of @word: user threads parked on it
 * first, then pthreads asleep on its futex.  Returns how many woke.
 */
int asx__word_wake(uint32_t *word, int n);

/*
 * The calling ASC user thread's identity for lock owners: a negative
 * number unique among the process's user threads; 0 on a plain pthread
 * (whose owner id is its kernel tid, positive).
 */
int asx__uthread_id(void);

/*
 * The calling ASC user thread's slot for the Thread Manager's record of
 * it (a VP's thread-local storage is shared by all its user threads, so
 * a per-thread pointer lives in the thread); NULL on a plain pthread.
 * Only the thread itself reads and writes its slot.
 */
void **asx__uthread_slot(void);

/* True when spinning for a lock is pointless: the caller is a user thread
 * and the process has a single VP (the holder cannot run meanwhile). */
bool asx__spin_futile(void);

/*
 * connect(2) of a non-blocking socket that waits out a full UNIX-domain
 * backlog (Linux says EAGAIN there instead of EINPROGRESS): it tries again
 * after naps on the sentinel's timer heap (a pthread sleeps) until @dl
 * (NULL: never).  0 or -errno (-EAGAIN after @dl); io.c.
 */
int asx__connect_retry(int fd, const struct sockaddr *addr, socklen_t len,
		       const struct timespec *dl);

#endif /* ASX_ASC_WAIT_H */
