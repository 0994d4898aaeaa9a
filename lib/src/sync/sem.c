// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sem.c - counting semaphore.
 *
 * @value is the count and the futex word: a waiter sleeps while it reads
 * 0.  @waiters counts threads in the sleeping path so that post can skip
 * the wake-up system call.  post increments @value and then reads
 * @waiters; a waiter increments @waiters and then re-reads @value; both
 * are sequentially consistent, so one of them sees the other.  Each post
 * wakes one sleeper, and a woken sleeper always tries to take a unit
 * before it may give up on its deadline, so no wake-up is wasted while a
 * unit is left on the table.  Sleeping is asx__word_wait() (a user
 * thread parks, its VP runs on).
 */
#include <errno.h>
#include <stdbool.h>

#include <asx/sync.h>
#include "asc/wait.h"
#include "core/compiler.h"
#include "core/futex.h"
#include "core/probes.h"

#define SEM_SPIN 64

int asx_sem_init(struct asx_sem *s, unsigned int value)
{
	if (value > ASX_SEM_VALUE_MAX)
		return -EINVAL;
	s->value = value;
	s->waiters = 0;
	return 0;
}

void asx_sem_destroy(struct asx_sem *s)
{
	(void)s;
}

unsigned int asx_sem_value(const struct asx_sem *s)
{
	return __atomic_load_n(&s->value, __ATOMIC_RELAXED);
}

static inline bool sem_take(struct asx_sem *s)
{
	uint32_t v = __atomic_load_n(&s->value, __ATOMIC_SEQ_CST);

	while (v) {
		if (__atomic_compare_exchange_n(&s->value, &v, v - 1, true,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return true;
	}
	return false;
}

int asx_sem_post(struct asx_sem *s)
{
	uint32_t v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);

	do {
		if (v >= ASX_SEM_VALUE_MAX)
			return -EOVERFLOW;
	} while (!__atomic_compare_exchange_n(&s->value, &v, v + 1, true,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	ASX_PROBE2(sem_post, s, v + 1);
	if (__atomic_load_n(&s->waiters, __ATOMIC_SEQ_CST))
		asx__word_wake(&s->value, 1);
	return 0;
}

int asx_sem_trywait(struct asx_sem *s)
{
	if (!sem_take(s))
		return -EAGAIN;
	ASX_PROBE2(sem_acquired, s, 0);
	return 0;
}

int asx_sem_timedwait(struct asx_sem *s, const struct timespec *abstime)
{
	int i, r = 0;

	if (likely(sem_take(s)))
		goto out;
	if (!asx_timespec_valid(abstime))
		return -EINVAL;
	ASX_PROBE1(sem_wait, s);
	for (i = asx__spin_futile() ? SEM_SPIN : 0; i < SEM_SPIN; i++) {
		asx_cpu_relax();
		if (sem_take(s))
			goto out;
	}
	__atomic_fetch_add(&s->waiters, 1, __ATOMIC_SEQ_CST);
	while (!sem_take(s)) {
		if (r == -ETIMEDOUT)
			break;
		r = asx__word_wait(&s->value, 0, abstime);
		if (r != -ETIMEDOUT)
			r = 0;
	}
	__atomic_fetch_sub(&s->waiters, 1, __ATOMIC_RELAXED);
out:
	ASX_PROBE2(sem_acquired, s, r);
	return r;
}

void asx_sem_wait(struct asx_sem *s)
{
	(void)asx_sem_timedwait(s, NULL);
}
