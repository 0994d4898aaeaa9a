// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cond.c - condition variable over the adaptive mutex.
 *
 * @seq is the futex word: a waiter samples it while it still holds the
 * mutex, then unlocks and sleeps only if @seq has not moved.  signal and
 * broadcast bump @seq before waking, so a wake-up that lands between the
 * waiter's unlock and its futex_wait is not lost: the kernel sees the new
 * value and returns at once.  @waiters lets signal/broadcast skip the
 * system call when nobody is waiting; a waiter counts itself in while it
 * holds the mutex, so a signaller that changed the predicate under the
 * same mutex is guaranteed to see it.  Waits and wakes go through
 * asx__word_wait()/asx__word_wake(): a user thread parks, not its VP.
 */
#include <errno.h>
#include <limits.h>

#include <asx/sync.h>
#include "asc/wait.h"
#include "core/compiler.h"
#include "core/futex.h"
#include "core/probes.h"
#include "sync/lockstat.h"

void asx_cond_init(struct asx_cond *c)
{
	c->seq = 0;
	c->waiters = 0;
}

void asx_cond_destroy(struct asx_cond *c)
{
	(void)c;
}

int asx_cond_timedwait(struct asx_cond *c, struct asx_mutex *m,
		       const struct timespec *abstime)
{
	uint64_t t0;
	uint32_t seq;
	int r;

	if (!asx_timespec_valid(abstime))
		return -EINVAL;
	t0 = asx__lockstat_begin();
	seq = __atomic_load_n(&c->seq, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->waiters, 1, __ATOMIC_SEQ_CST);
	ASX_PROBE2(cond_wait, c, m);
	asx_mutex_unlock(m);

	r = asx__word_wait(&c->seq, seq, abstime);
	ASX_PROBE3(cond_woken, c, m, r);

	__atomic_fetch_sub(&c->waiters, 1, __ATOMIC_RELAXED);
	asx_mutex_lock(m);
	asx__lockstat_add(ASX_LOCKSTAT_WAIT, t0);
	return r == -ETIMEDOUT ? -ETIMEDOUT : 0;
}

void asx_cond_wait(struct asx_cond *c, struct asx_mutex *m)
{
	(void)asx_cond_timedwait(c, m, NULL);
}

static void cond_wake(struct asx_cond *c, int n)
{
	__atomic_fetch_add(&c->seq, 1, __ATOMIC_SEQ_CST);
	ASX_PROBE2(cond_wake, c, n);
	if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST))
		asx__word_wake(&c->seq, n < 0 ? INT_MAX : n);
}

void asx_cond_signal(struct asx_cond *c)
{
	cond_wake(c, 1);
}

void asx_cond_broadcast(struct asx_cond *c)
{
	cond_wake(c, -1);
}
