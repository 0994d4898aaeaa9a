// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * rwlock.c - writer-preferring readers/writer lock.
 *
 * @state holds the reader count (low 30 bits), RW_WRITER while a writer
 * holds the lock, and RW_RSLEEP while readers may be asleep on @rseq.
 * @writers_waiting counts writers that want the lock and do not have it
 * yet; while it is non-zero no new reader gets in, which is the writer
 * preference (readers can starve under a steady stream of writers).
 *
 * Every transition of @state is a CAS or RMW on that one word, so mutual
 * exclusion rests on it alone.  The sleeping protocol:
 *  - a writer counts itself into @writers_waiting, then repeatedly samples
 *    @wseq, re-checks @state and sleeps on @wseq;
 *  - a reader sets RW_RSLEEP, samples @rseq, re-checks and sleeps on @rseq;
 *  - whoever frees the lock (last reader out, or the writer) hands it to a
 *    writer first: bump @wseq and wake one writer if any is waiting; the
 *    writer's unlock wakes all sleeping readers only when no writer waits.
 * The store that frees the lock and the load of @writers_waiting (and the
 * waiter's increment and re-check) are sequentially consistent, so either
 * the releaser sees the waiter or the waiter sees the free lock.
 * Sleeping is asx__word_wait() (asc/wait.h): a user thread parks, its VP
 * runs on; a user thread on the only VP does not spin.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>

#include <asx/sync.h>
#include "asc/wait.h"
#include "core/compiler.h"
#include "core/futex.h"
#include "core/probes.h"
#include "sync/lockstat.h"

#define RW_READERS	0x3fffffffU
#define RW_WRITER	0x40000000U
#define RW_RSLEEP	0x80000000U

#define RW_SPIN		128

void asx_rwlock_init(struct asx_rwlock *l)
{
	l->state = 0;
	l->writers_waiting = 0;
	l->rseq = 0;
	l->wseq = 0;
}

void asx_rwlock_destroy(struct asx_rwlock *l)
{
	(void)l;
}

static inline bool rw_read_ok(struct asx_rwlock *l, uint32_t s)
{
	return !(s & RW_WRITER) && (s & RW_READERS) != RW_READERS &&
	       !__atomic_load_n(&l->writers_waiting, __ATOMIC_SEQ_CST);
}

static inline bool rw_try_read(struct asx_rwlock *l)
{
	uint32_t s = __atomic_load_n(&l->state, __ATOMIC_SEQ_CST);

	while (rw_read_ok(l, s)) {
		if (__atomic_compare_exchange_n(&l->state, &s, s + 1, true,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return true;
	}
	return false;
}

static inline bool rw_try_write(struct asx_rwlock *l)
{
	uint32_t s = __atomic_load_n(&l->state, __ATOMIC_SEQ_CST);

	while (!(s & (RW_WRITER | RW_READERS))) {
		if (__atomic_compare_exchange_n(&l->state, &s, s | RW_WRITER, true,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return true;
	}
	return false;
}

/* Every acquisition fires rwlock_acquired (as mutex_acquired, mutex.c). */
int asx_rwlock_tryrdlock(struct asx_rwlock *l)
{
	if (!rw_try_read(l))
		return -EBUSY;
	ASX_PROBE4(rwlock_acquired, l, 0, 0, 0);
	return 0;
}

int asx_rwlock_trywrlock(struct asx_rwlock *l)
{
	if (!rw_try_write(l))
		return -EBUSY;
	ASX_PROBE4(rwlock_acquired, l, 1, 0, 0);
	return 0;
}

void asx_rwlock_rdlock(struct asx_rwlock *l)
{
	unsigned int spins = 0, sleeps = 0, spin_max;
	uint64_t t0;
	uint32_t seq;

	if (likely(rw_try_read(l)))
		goto out;
	ASX_PROBE2(rwlock_contended, l, 0);
	t0 = asx__lockstat_begin();
	spin_max = asx__spin_futile() ? 0 : RW_SPIN;
	for (;;) {
		for (; spins < spin_max; spins++) {
			asx_cpu_relax();
			if (rw_try_read(l))
				goto got;
		}
		__atomic_fetch_or(&l->state, RW_RSLEEP, __ATOMIC_SEQ_CST);
		seq = __atomic_load_n(&l->rseq, __ATOMIC_SEQ_CST);
		if (rw_try_read(l))
			goto got;
		asx__word_wait(&l->rseq, seq, NULL);
		sleeps++;
		if (rw_try_read(l))
			goto got;
	}
got:
	asx__lockstat_add(ASX_LOCKSTAT_ACQUIRE, t0);
out:
	ASX_PROBE4(rwlock_acquired, l, 0, spins, sleeps);
}

void asx_rwlock_wrlock(struct asx_rwlock *l)
{
	unsigned int spins = 0, sleeps = 0, spin_max;
	uint64_t t0;
	uint32_t seq;

	if (likely(rw_try_write(l))) {
		ASX_PROBE4(rwlock_acquired, l, 1, 0, 0);
		return;
	}
	ASX_PROBE2(rwlock_contended, l, 1);
	t0 = asx__lockstat_begin();
	spin_max = asx__spin_futile() ? 0 : RW_SPIN;
	__atomic_fetch_add(&l->writers_waiting, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		for (; spins < spin_max; spins++) {
			asx_cpu_relax();
			if (rw_try_write(l))
				goto out;
		}
		seq = __atomic_load_n(&l->wseq, __ATOMIC_SEQ_CST);
		if (rw_try_write(l))
			goto out;
		asx__word_wait(&l->wseq, seq, NULL);
		sleeps++;
		if (rw_try_write(l))
			goto out;
	}
out:
	/*
	 * Readers that queued behind us stay asleep: we hold the lock now,
	 * and our unlock wakes them if no other writer is waiting by then.
	 */
	asx__lockstat_add(ASX_LOCKSTAT_ACQUIRE, t0);
	__atomic_fetch_sub(&l->writers_waiting, 1, __ATOMIC_SEQ_CST);
	ASX_PROBE4(rwlock_acquired, l, 1, spins, sleeps);
}

static void rw_wake_writer(struct asx_rwlock *l)
{
	__atomic_fetch_add(&l->wseq, 1, __ATOMIC_SEQ_CST);
	asx__word_wake(&l->wseq, 1);
}

void asx_rwlock_unlock(struct asx_rwlock *l)
{
	uint32_t s = __atomic_load_n(&l->state, __ATOMIC_RELAXED);

	if (s & RW_WRITER) {
		ASX_PROBE2(rwlock_release, l, 1);
		s = __atomic_and_fetch(&l->state, ~RW_WRITER, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&l->writers_waiting, __ATOMIC_SEQ_CST)) {
			rw_wake_writer(l);
		} else if (s & RW_RSLEEP) {
			__atomic_fetch_and(&l->state, ~RW_RSLEEP, __ATOMIC_SEQ_CST);
			__atomic_fetch_add(&l->rseq, 1, __ATOMIC_SEQ_CST);
			asx__word_wake(&l->rseq, INT_MAX);
		}
		return;
	}

	ASX_PROBE2(rwlock_release, l, 0);
	s = __atomic_sub_fetch(&l->state, 1, __ATOMIC_SEQ_CST);
	if (!(s & RW_READERS) && __atomic_load_n(&l->writers_waiting, __ATOMIC_SEQ_CST))
		rw_wake_writer(l);
}
