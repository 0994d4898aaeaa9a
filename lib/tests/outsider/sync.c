// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Synchronisation (Documentation/sync.rst): a guarded counter under
 * contention, a condition-variable hand-off, the readers/writer lock,
 * the recursive mutex, a semaphore, a reused barrier, deadlines.
 */
#include <pthread.h>
#include <asx/sync.h>
#include "outsider.h"

#define THREADS 4
#define ROUNDS 20000

static struct asx_mutex m = ASX_MUTEX_INITIALIZER;
static struct asx_cond c = ASX_COND_INITIALIZER;
static struct asx_rwlock rw = ASX_RWLOCK_INITIALIZER;
static struct asx_barrier bar;
static struct asx_sem sem;
static long counter, shared_a, shared_b;
static int serial, items;

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		if (i % 64 == 0) {
			ASX_GUARD_WRITE(&rw);
			shared_a++;
			shared_b++;
		} else {
			ASX_GUARD_READ(&rw);
			CHECK(shared_a == shared_b);		/* a writer never half-done */
		}
		{
			ASX_GUARD(&m);
			counter++;
		}
	}
	for (int round = 0; round < 3; round++) {
		int r = asx_barrier_wait(&bar);

		CHECK(r == 0 || r == ASX_BARRIER_SERIAL);
		if (r == ASX_BARRIER_SERIAL) {
			ASX_GUARD(&m);
			serial++;
		}
	}
	asx_mutex_lock(&m);
	items++;
	asx_cond_broadcast(&c);
	asx_mutex_unlock(&m);
	CHECK0(asx_sem_post(&sem));
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	struct asx_rmutex r = ASX_RMUTEX_INITIALIZER;
	struct timespec dl;
	int rc;

	watchdog(60);
	CHECK0(asx_barrier_init(&bar, THREADS));
	CHECK0(asx_sem_init(&sem, 0));
	for (int i = 0; i < THREADS; i++)
		CHECK(pthread_create(&t[i], NULL, worker, NULL) == 0);

	asx_mutex_lock(&m);
	while (items < THREADS)
		asx_cond_wait(&c, &m);
	asx_mutex_unlock(&m);
	for (int i = 0; i < THREADS; i++)
		asx_sem_wait(&sem);
	CHECK(asx_sem_trywait(&sem) == -EAGAIN);
	for (int i = 0; i < THREADS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	CHECK(counter == (long)THREADS * ROUNDS);
	CHECK(shared_a == shared_b && shared_a == (long)THREADS * (ROUNDS / 64 + (ROUNDS % 64 != 0)));
	CHECK(serial == 3);					/* one per round */

	/* trylock and deadlines */
	asx_mutex_lock(&m);
	CHECK(asx_mutex_trylock(&m) == -EBUSY);
	rc = asx_cond_timedwait(&c, &m, asx_deadline(&dl, 1000000));
	CHECK(rc == -ETIMEDOUT || rc == 0);			/* 0: a spurious wake-up */
	asx_mutex_unlock(&m);
	CHECK(asx_sem_timedwait(&sem, asx_deadline(&dl, 1000000)) == -ETIMEDOUT);
	CHECK0(asx_rwlock_tryrdlock(&rw));
	CHECK(asx_rwlock_trywrlock(&rw) == -EBUSY);
	asx_rwlock_unlock(&rw);

	/* the recursive mutex counts depth; a free one cannot be unlocked */
	asx_rmutex_lock(&r);
	CHECK0(asx_rmutex_trylock(&r));
	CHECK0(asx_rmutex_unlock(&r));
	CHECK0(asx_rmutex_unlock(&r));
	CHECK(asx_rmutex_unlock(&r) == -EPERM);
	asx_barrier_destroy(&bar);
	asx_sem_destroy(&sem);
	puts("sync: ok");
	return 0;
}
