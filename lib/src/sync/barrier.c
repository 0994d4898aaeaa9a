// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * barrier.c - reusable barrier.
 *
 * Arrivals are counted under @m.  The last arrival resets the count,
 * advances @round with a release store and wakes everyone sleeping on it;
 * the others wait (a short spin, then asx__word_wait(): a user thread
 * parks, its VP runs on) for @round to move past
 * the value they saw on arrival.  Since @arrived is reset before @round
 * moves, a thread released from round r may enter round r + 1 at once.
 */
#include <errno.h>
#include <limits.h>

#include <asx/sync.h>
#include "asc/wait.h"
#include "core/compiler.h"
#include "core/futex.h"
#include "core/probes.h"

#define BARRIER_SPIN 256

int asx_barrier_init(struct asx_barrier *b, unsigned int count)
{
	if (!count)
		return -EINVAL;
	b->count = count;
	b->arrived = 0;
	b->round = 0;
	asx_mutex_init(&b->m);
	return 0;
}

void asx_barrier_destroy(struct asx_barrier *b)
{
	asx_mutex_destroy(&b->m);
}

int asx_barrier_wait(struct asx_barrier *b)
{
	uint32_t round;
	int i;

	asx_mutex_lock(&b->m);
	round = __atomic_load_n(&b->round, __ATOMIC_RELAXED);
	ASX_PROBE3(barrier_wait, b, round, b->arrived);
	if (++b->arrived == b->count) {
		b->arrived = 0;
		__atomic_store_n(&b->round, round + 1, __ATOMIC_RELEASE);
		asx_mutex_unlock(&b->m);
		asx__word_wake(&b->round, INT_MAX);
		return ASX_BARRIER_SERIAL;
	}
	asx_mutex_unlock(&b->m);

	for (i = 0; i < BARRIER_SPIN; i++) {
		if (__atomic_load_n(&b->round, __ATOMIC_ACQUIRE) != round)
			goto out;
		asx_cpu_relax();
	}
	while (__atomic_load_n(&b->round, __ATOMIC_ACQUIRE) == round)
		asx__word_wait(&b->round, round, NULL);
out:
	ASX_PROBE2(barrier_leave, b, round);
	return 0;
}
