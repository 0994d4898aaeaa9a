// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_sync.c - CMocka tests of asx/sync.h.
 *
 * Each test checks an observable property that a broken or missing
 * primitive would violate: plain (non-atomic) counters that come out
 * short, a writer seeing a reader inside, a waiter that is never woken
 * (bounded by a deadline so the test fails rather than hangs), a barrier
 * round passed early.  Iteration counts shrink under the sanitizers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#else
#define RUNNING_ON_VALGRIND 0
#endif

#include <asx/sync.h>

#if defined(__SANITIZE_THREAD__)
#define SCALE 4
#elif defined(__SANITIZE_ADDRESS__)
#define SCALE 1
#else
#define SCALE 1
#endif

#define NTHREADS	4
#define ITERS		(100000 / SCALE)
#define MS		1000000ULL
#define WAIT_LIMIT	(10000 * MS)	/* "never woken" bound */

/* -------------------------------------------------------------- helpers */

static void spawn(pthread_t *t, int n, void *(*fn)(void *), void *arg)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_create(&t[i], NULL, fn, arg), 0);
}

static void join(pthread_t *t, int n)
{
	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
}

/*
 * CMocka's asserts long-jump back into the test and must not be used in
 * the threads a test spawns: those record failures here instead, and the
 * test asserts the flag is still clear after joining them.
 */
static int thread_failed;
#define THREAD_CHECK(cond)						\
	do {								\
		if (!(cond))						\
			__atomic_store_n(&thread_failed, __LINE__, __ATOMIC_SEQ_CST); \
	} while (0)

static void join(pthread_t *t, int n);

static void join_checked(pthread_t *t, int n)
{
	join(t, n);
	assert_int_equal(__atomic_exchange_n(&thread_failed, 0, __ATOMIC_SEQ_CST), 0);
}

static void sleep_ms(unsigned int ms)
{
	usleep(ms * 1000);
}

/* Busy for about @ns nanoseconds, without touching shared memory. */
static void busy_ns(uint64_t ns)
{
	uint64_t end = asx_now_ns() + ns;

	while (asx_now_ns() < end)
		;
}

/* ------------------------------------------------------------ mutex */

static struct asx_mutex mx = ASX_MUTEX_INITIALIZER;
static long mx_counter;

static void *mutex_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		asx_mutex_lock(&mx);
		mx_counter++;
		/* now and then hold it long enough to force the futex path */
		if ((i & 4095) == 0)
			busy_ns(20000);
		asx_mutex_unlock(&mx);
	}
	return NULL;
}

static void test_mutex_exclusion(void **state)
{
	pthread_t t[NTHREADS];

	(void)state;
	asx_mutex_init(&mx);
	mx_counter = 0;
	spawn(t, NTHREADS, mutex_worker, NULL);
	join(t, NTHREADS);
	assert_int_equal(mx_counter, (long)NTHREADS * ITERS);
	assert_int_equal(asx_mutex_trylock(&mx), 0);
	asx_mutex_unlock(&mx);
	asx_mutex_destroy(&mx);
}

static void *trylock_other(void *arg)
{
	return (void *)(intptr_t)asx_mutex_trylock(arg);
}

static void test_mutex_trylock(void **state)
{
	struct asx_mutex m = ASX_MUTEX_INITIALIZER;
	pthread_t t;
	void *ret;

	(void)state;
	assert_int_equal(asx_mutex_trylock(&m), 0);
	assert_int_equal(asx_mutex_trylock(&m), -EBUSY);	/* not recursive */
	assert_int_equal(pthread_create(&t, NULL, trylock_other, &m), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_int_equal((intptr_t)ret, -EBUSY);
	asx_mutex_unlock(&m);
	assert_int_equal(pthread_create(&t, NULL, trylock_other, &m), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	assert_int_equal((intptr_t)ret, 0);
	assert_int_equal(asx_mutex_trylock(&m), -EBUSY);	/* the thread kept it */
}

struct timed_arg {
	struct asx_mutex *m;
	uint64_t rel_ns;
	uint64_t elapsed;
	uint64_t done_at;	/* when the call returned */
	int ret;
};

static void *timedlock_thread(void *p)
{
	struct timed_arg *a = p;
	struct timespec dl;
	uint64_t t0 = asx_now_ns();

	a->ret = asx_mutex_timedlock(a->m, asx_deadline(&dl, a->rel_ns));
	a->done_at = asx_now_ns();
	a->elapsed = a->done_at - t0;
	if (!a->ret)
		asx_mutex_unlock(a->m);
	return NULL;
}

static void test_mutex_timedlock(void **state)
{
	struct asx_mutex m = ASX_MUTEX_INITIALIZER;
	struct timed_arg a = { .m = &m, .rel_ns = 50 * MS };
	struct timespec bad = { .tv_sec = 0, .tv_nsec = 1000000000L };
	uint64_t released;
	pthread_t t;

	(void)state;
	/* free lock: taken whatever the deadline, even a past one */
	assert_int_equal(asx_mutex_timedlock(&m, asx_deadline(&(struct timespec){ 0 }, 0)), 0);

	/* held: times out, and not before the deadline */
	assert_int_equal(pthread_create(&t, NULL, timedlock_thread, &a), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(a.ret, -ETIMEDOUT);
	assert_true(a.elapsed >= 50 * MS);
	assert_int_equal(asx_mutex_timedlock(&m, &bad), -EINVAL);

	/* held, then released before the deadline: taken */
	a.rel_ns = WAIT_LIMIT;
	assert_int_equal(pthread_create(&t, NULL, timedlock_thread, &a), 0);
	sleep_ms(30);
	released = asx_now_ns();
	asx_mutex_unlock(&m);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(a.ret, 0);
	/* taken once released, not before (the thread may start late on a
	 * loaded host, so its own elapsed time proves nothing) */
	assert_true(a.done_at >= released);
	assert_int_equal(asx_mutex_trylock(&m), 0);
	asx_mutex_unlock(&m);
}

/* ------------------------------------------------------------ cond */

static struct asx_mutex cv_m = ASX_MUTEX_INITIALIZER;
static struct asx_cond cv = ASX_COND_INITIALIZER;
static struct asx_cond cv_main = ASX_COND_INITIALIZER;
static int cv_ready, cv_go, cv_woken, cv_timeouts;

static void *cond_waiter(void *arg)
{
	struct timespec dl;

	(void)arg;
	asx_deadline(&dl, WAIT_LIMIT);
	asx_mutex_lock(&cv_m);
	cv_ready++;
	asx_cond_signal(&cv_main);
	while (!cv_go) {
		if (asx_cond_timedwait(&cv, &cv_m, &dl) == -ETIMEDOUT) {
			cv_timeouts++;
			break;
		}
	}
	if (cv_go)
		cv_woken++;
	asx_mutex_unlock(&cv_m);
	return NULL;
}

static void cond_run(int nwaiters, bool broadcast)
{
	pthread_t t[8];
	struct timespec dl;

	cv_ready = cv_go = cv_woken = cv_timeouts = 0;
	spawn(t, nwaiters, cond_waiter, NULL);
	asx_deadline(&dl, WAIT_LIMIT);
	asx_mutex_lock(&cv_m);
	while (cv_ready < nwaiters)
		assert_int_equal(asx_cond_timedwait(&cv_main, &cv_m, &dl), 0);
	/* every waiter is now inside asx_cond_wait or about to re-check */
	cv_go = 1;
	if (broadcast)
		asx_cond_broadcast(&cv);
	else
		asx_cond_signal(&cv);
	asx_mutex_unlock(&cv_m);
	join(t, nwaiters);
	assert_int_equal(cv_timeouts, 0);
	assert_int_equal(cv_woken, nwaiters);
}

static void test_cond_signal(void **state)
{
	(void)state;
	for (int i = 0; i < 20; i++)
		cond_run(1, false);
}

static void test_cond_broadcast(void **state)
{
	(void)state;
	for (int i = 0; i < 10; i++)
		cond_run(6, true);
}

/* ping-pong: each side must be woken by the other's signal */
static int pp_turn, pp_rounds;

static void *pingpong(void *arg)
{
	int me = (int)(intptr_t)arg;

	asx_mutex_lock(&cv_m);
	for (int i = 0; i < pp_rounds; i++) {
		while (pp_turn != me)
			asx_cond_wait(&cv, &cv_m);
		pp_turn = !me;
		asx_cond_signal(&cv);
	}
	asx_mutex_unlock(&cv_m);
	return NULL;
}

static void test_cond_pingpong(void **state)
{
	pthread_t a, b;

	(void)state;
	pp_turn = 0;
	pp_rounds = 20000 / SCALE;
	assert_int_equal(pthread_create(&a, NULL, pingpong, (void *)0), 0);
	assert_int_equal(pthread_create(&b, NULL, pingpong, (void *)1), 0);
	assert_int_equal(pthread_join(a, NULL), 0);
	assert_int_equal(pthread_join(b, NULL), 0);
	assert_int_equal(pp_turn, 0);
}

static void test_cond_timedwait(void **state)
{
	struct asx_mutex m = ASX_MUTEX_INITIALIZER;
	struct asx_cond c = ASX_COND_INITIALIZER;
	struct timespec dl, bad = { .tv_sec = 0, .tv_nsec = -1 };
	uint64_t t0;

	(void)state;
	asx_mutex_lock(&m);
	t0 = asx_now_ns();
	assert_int_equal(asx_cond_timedwait(&c, &m, asx_deadline(&dl, 50 * MS)), -ETIMEDOUT);
	assert_true(asx_now_ns() - t0 >= 50 * MS);
	assert_int_equal(asx_mutex_trylock(&m), -EBUSY);	/* held again */
	assert_int_equal(asx_cond_timedwait(&c, &m, &bad), -EINVAL);
	assert_int_equal(asx_mutex_trylock(&m), -EBUSY);
	asx_mutex_unlock(&m);
}

/* ------------------------------------------------------------ rwlock */

static struct asx_rwlock rw = ASX_RWLOCK_INITIALIZER;
static int rw_readers, rw_writers, rw_max_readers, rw_bad;
static long rw_a, rw_b;
static int rw_stop;

static void *rw_overlap_reader(void *arg)
{
	uint64_t end = asx_now_ns() + 2000 * MS;
	int n;

	(void)arg;
	asx_rwlock_rdlock(&rw);
	n = __atomic_add_fetch(&rw_readers, 1, __ATOMIC_SEQ_CST);
	/* stay inside until another reader joins (or give up) */
	while (__atomic_load_n(&rw_readers, __ATOMIC_SEQ_CST) < 2 && asx_now_ns() < end)
		sleep_ms(1);
	n = __atomic_load_n(&rw_readers, __ATOMIC_SEQ_CST);
	if (n > __atomic_load_n(&rw_max_readers, __ATOMIC_SEQ_CST))
		__atomic_store_n(&rw_max_readers, n, __ATOMIC_SEQ_CST);
	sleep_ms(5);
	__atomic_sub_fetch(&rw_readers, 1, __ATOMIC_SEQ_CST);
	asx_rwlock_unlock(&rw);
	return NULL;
}

static void test_rwlock_shared_readers(void **state)
{
	pthread_t t[NTHREADS];

	(void)state;
	asx_rwlock_init(&rw);
	rw_readers = rw_max_readers = 0;
	spawn(t, NTHREADS, rw_overlap_reader, NULL);
	join(t, NTHREADS);
	assert_true(rw_max_readers > 1);
	/* and a reader does not block another reader's try */
	assert_int_equal(asx_rwlock_tryrdlock(&rw), 0);
	assert_int_equal(asx_rwlock_tryrdlock(&rw), 0);
	assert_int_equal(asx_rwlock_trywrlock(&rw), -EBUSY);
	asx_rwlock_unlock(&rw);
	asx_rwlock_unlock(&rw);
	assert_int_equal(asx_rwlock_trywrlock(&rw), 0);
	assert_int_equal(asx_rwlock_tryrdlock(&rw), -EBUSY);
	assert_int_equal(asx_rwlock_trywrlock(&rw), -EBUSY);
	asx_rwlock_unlock(&rw);
	asx_rwlock_destroy(&rw);
}

static void *rw_writer(void *arg)
{
	(void)arg;
	for (long i = 1; i <= ITERS / 4; i++) {
		asx_rwlock_wrlock(&rw);
		if (__atomic_add_fetch(&rw_writers, 1, __ATOMIC_SEQ_CST) != 1 ||
		    __atomic_load_n(&rw_readers, __ATOMIC_SEQ_CST))
			__atomic_store_n(&rw_bad, 1, __ATOMIC_SEQ_CST);
		rw_a = i;
		rw_b = i;
		__atomic_sub_fetch(&rw_writers, 1, __ATOMIC_SEQ_CST);
		asx_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *rw_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&rw_stop, __ATOMIC_SEQ_CST)) {
		asx_rwlock_rdlock(&rw);
		__atomic_add_fetch(&rw_readers, 1, __ATOMIC_SEQ_CST);
		if (rw_a != rw_b || __atomic_load_n(&rw_writers, __ATOMIC_SEQ_CST))
			__atomic_store_n(&rw_bad, 1, __ATOMIC_SEQ_CST);
		__atomic_sub_fetch(&rw_readers, 1, __ATOMIC_SEQ_CST);
		asx_rwlock_unlock(&rw);
	}
	return NULL;
}

static void test_rwlock_exclusion(void **state)
{
	pthread_t w[2], r[3];

	(void)state;
	rw_readers = rw_writers = rw_bad = rw_stop = 0;
	rw_a = rw_b = 0;
	spawn(r, 3, rw_reader, NULL);
	spawn(w, 2, rw_writer, NULL);
	join(w, 2);
	__atomic_store_n(&rw_stop, 1, __ATOMIC_SEQ_CST);
	join(r, 3);
	assert_int_equal(rw_bad, 0);
	assert_int_equal(rw_a, rw_b);
}

static void *rw_blocking_writer(void *arg)
{
	(void)arg;
	asx_rwlock_wrlock(&rw);
	__atomic_store_n(&rw_writers, 1, __ATOMIC_SEQ_CST);
	asx_rwlock_unlock(&rw);
	return NULL;
}

static void test_rwlock_writer_preference(void **state)
{
	uint64_t end = asx_now_ns() + WAIT_LIMIT;
	pthread_t t;

	(void)state;
	asx_rwlock_init(&rw);
	rw_writers = 0;
	asx_rwlock_rdlock(&rw);
	assert_int_equal(pthread_create(&t, NULL, rw_blocking_writer, NULL), 0);
	/* white-box: wait until the writer has queued */
	while (!__atomic_load_n(&rw.writers_waiting, __ATOMIC_SEQ_CST) && asx_now_ns() < end)
		sleep_ms(1);
	assert_int_not_equal(__atomic_load_n(&rw.writers_waiting, __ATOMIC_SEQ_CST), 0);
	/* a queued writer keeps new readers out... */
	assert_int_equal(asx_rwlock_tryrdlock(&rw), -EBUSY);
	assert_int_equal(__atomic_load_n(&rw_writers, __ATOMIC_SEQ_CST), 0);
	/* ...and gets the lock as soon as the last reader leaves */
	asx_rwlock_unlock(&rw);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(rw_writers, 1);
	assert_int_equal(asx_rwlock_tryrdlock(&rw), 0);
	asx_rwlock_unlock(&rw);
}

/* Overlapping readers keep the lock read-held all the time; writers must still get in. */
static void *rw_hog_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&rw_stop, __ATOMIC_SEQ_CST)) {
		asx_rwlock_rdlock(&rw);
		busy_ns(200000);
		asx_rwlock_unlock(&rw);
	}
	return NULL;
}

static void test_rwlock_writer_not_starved(void **state)
{
	pthread_t r[3];
	uint64_t t0, end;
	int got = 0, want;

	(void)state;
	asx_rwlock_init(&rw);
	rw_stop = 0;
	spawn(r, 3, rw_hog_reader, NULL);
	sleep_ms(20);
	t0 = asx_now_ns();
	/*
	 * A starved writer never gets the lock. valgrind runs one thread at a
	 * time in long slices, so there the readers hold it most of the time:
	 * one write proves the writer is not shut out.
	 */
	want = RUNNING_ON_VALGRIND ? 1 : 20;
	end = t0 + 20000 * MS;
	while (got < want && asx_now_ns() < end) {
		asx_rwlock_wrlock(&rw);
		got++;
		asx_rwlock_unlock(&rw);
		sleep_ms(1);
	}
	__atomic_store_n(&rw_stop, 1, __ATOMIC_SEQ_CST);
	join(r, 3);
	assert_int_equal(got, want);
}

/* ------------------------------------------------------------ rmutex */

static struct asx_rmutex rm = ASX_RMUTEX_INITIALIZER;
static long rm_counter;

static void *rmutex_other(void *arg)
{
	intptr_t what = (intptr_t)arg;

	if (what == 0)
		return (void *)(intptr_t)asx_rmutex_trylock(&rm);
	return (void *)(intptr_t)asx_rmutex_unlock(&rm);
}

static intptr_t rmutex_in_thread(intptr_t what)
{
	pthread_t t;
	void *ret;

	assert_int_equal(pthread_create(&t, NULL, rmutex_other, (void *)what), 0);
	assert_int_equal(pthread_join(t, &ret), 0);
	return (intptr_t)ret;
}

static void test_rmutex_depth(void **state)
{
	(void)state;
	asx_rmutex_init(&rm);
	assert_int_equal(asx_rmutex_unlock(&rm), -EPERM);	/* not held */
	asx_rmutex_lock(&rm);
	asx_rmutex_lock(&rm);
	assert_int_equal(asx_rmutex_trylock(&rm), 0);
	assert_int_equal(rmutex_in_thread(0), -EBUSY);
	assert_int_equal(rmutex_in_thread(1), -EPERM);		/* non-owner */
	assert_int_equal(asx_rmutex_unlock(&rm), 0);
	assert_int_equal(asx_rmutex_unlock(&rm), 0);
	assert_int_equal(rmutex_in_thread(0), -EBUSY);		/* depth 1 left */
	assert_int_equal(asx_rmutex_unlock(&rm), 0);
	assert_int_equal(asx_rmutex_unlock(&rm), -EPERM);	/* one too many */
	/* free now: another thread takes it (and keeps it) */
	assert_int_equal(rmutex_in_thread(0), 0);
	assert_int_equal(asx_rmutex_trylock(&rm), -EBUSY);
	assert_int_equal(asx_rmutex_unlock(&rm), -EPERM);
}

static void *rmutex_worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS / 4; i++) {
		asx_rmutex_lock(&rm);
		asx_rmutex_lock(&rm);
		rm_counter++;
		THREAD_CHECK(asx_rmutex_unlock(&rm) == 0);
		rm_counter++;
		THREAD_CHECK(asx_rmutex_unlock(&rm) == 0);
	}
	return NULL;
}

static void test_rmutex_exclusion(void **state)
{
	pthread_t t[NTHREADS];

	(void)state;
	asx_rmutex_init(&rm);
	rm_counter = 0;
	spawn(t, NTHREADS, rmutex_worker, NULL);
	join_checked(t, NTHREADS);
	assert_int_equal(rm_counter, 2L * NTHREADS * (ITERS / 4));
	asx_rmutex_destroy(&rm);
}

/* ------------------------------------------------------------ sem */

#define RING 16
static struct asx_sem sem_full, sem_empty;
static struct asx_mutex ring_m = ASX_MUTEX_INITIALIZER;
static long ring[RING];
static unsigned int ring_head, ring_tail;
static long sem_consumed_sum, sem_consumed_n;

static void *sem_producer(void *arg)
{
	(void)arg;
	for (long i = 1; i <= ITERS / 4; i++) {
		asx_sem_wait(&sem_empty);
		asx_mutex_lock(&ring_m);
		ring[ring_head++ % RING] = i;
		asx_mutex_unlock(&ring_m);
		THREAD_CHECK(asx_sem_post(&sem_full) == 0);
	}
	return NULL;
}

static void *sem_consumer(void *arg)
{
	long sum = 0;

	(void)arg;
	for (long i = 0; i < ITERS / 4; i++) {
		long v;

		asx_sem_wait(&sem_full);
		asx_mutex_lock(&ring_m);
		v = ring[ring_tail++ % RING];
		asx_mutex_unlock(&ring_m);
		THREAD_CHECK(asx_sem_post(&sem_empty) == 0);
		sum += v;
	}
	asx_mutex_lock(&ring_m);
	sem_consumed_sum += sum;
	sem_consumed_n += ITERS / 4;
	asx_mutex_unlock(&ring_m);
	return NULL;
}

static void test_sem_producer_consumer(void **state)
{
	pthread_t p[2], c[2];
	long n = ITERS / 4;

	(void)state;
	assert_int_equal(asx_sem_init(&sem_full, 0), 0);
	assert_int_equal(asx_sem_init(&sem_empty, RING), 0);
	ring_head = ring_tail = 0;
	sem_consumed_sum = sem_consumed_n = 0;
	spawn(c, 2, sem_consumer, NULL);
	spawn(p, 2, sem_producer, NULL);
	join_checked(p, 2);
	join_checked(c, 2);
	assert_int_equal(sem_consumed_n, 2 * n);
	assert_int_equal(sem_consumed_sum, 2 * (n * (n + 1) / 2));
	assert_int_equal(asx_sem_value(&sem_full), 0);
	assert_int_equal(asx_sem_value(&sem_empty), RING);
}

static void test_sem_limits(void **state)
{
	struct asx_sem s;
	struct timespec dl, bad = { .tv_sec = -1, .tv_nsec = 0 };
	uint64_t t0;

	(void)state;
	assert_int_equal(asx_sem_init(&s, ASX_SEM_VALUE_MAX + 1U), -EINVAL);
	assert_int_equal(asx_sem_init(&s, 2), 0);
	assert_int_equal(asx_sem_trywait(&s), 0);
	assert_int_equal(asx_sem_trywait(&s), 0);
	assert_int_equal(asx_sem_trywait(&s), -EAGAIN);
	assert_int_equal(asx_sem_value(&s), 0);

	t0 = asx_now_ns();
	assert_int_equal(asx_sem_timedwait(&s, asx_deadline(&dl, 50 * MS)), -ETIMEDOUT);
	assert_true(asx_now_ns() - t0 >= 50 * MS);
	assert_int_equal(asx_sem_timedwait(&s, &bad), -EINVAL);

	assert_int_equal(asx_sem_post(&s), 0);
	assert_int_equal(asx_sem_timedwait(&s, asx_deadline(&dl, 50 * MS)), 0);

	assert_int_equal(asx_sem_init(&s, ASX_SEM_VALUE_MAX), 0);
	assert_int_equal(asx_sem_post(&s), -EOVERFLOW);
	assert_int_equal(asx_sem_value(&s), ASX_SEM_VALUE_MAX);
	assert_int_equal(asx_sem_trywait(&s), 0);
	assert_int_equal(asx_sem_post(&s), 0);
	asx_sem_destroy(&s);
}

static struct asx_sem sem_wake;
static int sem_woken;

static void *sem_sleeper(void *arg)
{
	struct timespec dl;

	(void)arg;
	if (asx_sem_timedwait(&sem_wake, asx_deadline(&dl, WAIT_LIMIT)) == 0)
		__atomic_add_fetch(&sem_woken, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* posts made while waiters sleep wake exactly as many of them */
static void test_sem_wakeups(void **state)
{
	pthread_t t[4];

	(void)state;
	assert_int_equal(asx_sem_init(&sem_wake, 0), 0);
	sem_woken = 0;
	spawn(t, 4, sem_sleeper, NULL);
	sleep_ms(30);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_sem_post(&sem_wake), 0);
	join(t, 4);
	assert_int_equal(sem_woken, 4);
	assert_int_equal(asx_sem_value(&sem_wake), 0);
}

/* ------------------------------------------------------------ barrier */

#define BAR_THREADS 4
#define BAR_ROUNDS (4000 / SCALE)
static struct asx_barrier bar;
static int bar_arrived[BAR_ROUNDS], bar_serial[BAR_ROUNDS], bar_early;

static void *barrier_worker(void *arg)
{
	(void)arg;
	for (int r = 0; r < BAR_ROUNDS; r++) {
		__atomic_add_fetch(&bar_arrived[r], 1, __ATOMIC_RELAXED);
		int ret = asx_barrier_wait(&bar);

		THREAD_CHECK(ret == 0 || ret == ASX_BARRIER_SERIAL);
		if (ret == ASX_BARRIER_SERIAL)
			__atomic_add_fetch(&bar_serial[r], 1, __ATOMIC_RELAXED);
		/* everyone arrived before anyone is let through */
		if (__atomic_load_n(&bar_arrived[r], __ATOMIC_RELAXED) != BAR_THREADS)
			__atomic_store_n(&bar_early, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_barrier_rounds(void **state)
{
	pthread_t t[BAR_THREADS];
	struct asx_barrier one;

	(void)state;
	assert_int_equal(asx_barrier_init(&bar, 0), -EINVAL);
	assert_int_equal(asx_barrier_init(&one, 1), 0);
	assert_int_equal(asx_barrier_wait(&one), ASX_BARRIER_SERIAL);
	assert_int_equal(asx_barrier_wait(&one), ASX_BARRIER_SERIAL);
	asx_barrier_destroy(&one);

	memset(bar_arrived, 0, sizeof(bar_arrived));
	memset(bar_serial, 0, sizeof(bar_serial));
	bar_early = 0;
	assert_int_equal(asx_barrier_init(&bar, BAR_THREADS), 0);
	spawn(t, BAR_THREADS, barrier_worker, NULL);
	join_checked(t, BAR_THREADS);
	assert_int_equal(bar_early, 0);
	for (int r = 0; r < BAR_ROUNDS; r++)
		assert_int_equal(bar_serial[r], 1);
	asx_barrier_destroy(&bar);
}

/* ------------------------------------------------------------ guards */

static int guarded_return(struct asx_mutex *m, int x)
{
	ASX_GUARD(m);
	if (x > 0)
		return x;
	return -x;
}

static int guarded_goto(struct asx_mutex *m)
{
	int n = 0;

again:
	{
		ASX_GUARD(m);
		if (++n < 3)
			goto again;
	}
	return n;
}

static void test_guard_mutex(void **state)
{
	struct asx_mutex m = ASX_MUTEX_INITIALIZER;

	(void)state;
	assert_int_equal(guarded_return(&m, 5), 5);
	assert_int_equal(asx_mutex_trylock(&m), 0);
	asx_mutex_unlock(&m);
	assert_int_equal(guarded_return(&m, -7), 7);
	assert_int_equal(asx_mutex_trylock(&m), 0);
	asx_mutex_unlock(&m);

	for (int i = 0; i < 10; i++) {
		ASX_GUARD(&m);
		assert_int_equal(asx_mutex_trylock(&m), -EBUSY);	/* held inside */
		if (i == 3)
			break;
	}
	assert_int_equal(asx_mutex_trylock(&m), 0);
	asx_mutex_unlock(&m);

	assert_int_equal(guarded_goto(&m), 3);
	assert_int_equal(asx_mutex_trylock(&m), 0);
	asx_mutex_unlock(&m);

	{
		ASX_GUARD(&m);
		ASX_GUARD(&mx);		/* two guards in one scope */
		assert_int_equal(asx_mutex_trylock(&mx), -EBUSY);
	}
	assert_int_equal(asx_mutex_trylock(&m), 0);
	assert_int_equal(asx_mutex_trylock(&mx), 0);
	asx_mutex_unlock(&m);
	asx_mutex_unlock(&mx);
}

static int guarded_rmutex(struct asx_rmutex *r, int depth)
{
	ASX_GUARD(r);
	return depth ? guarded_rmutex(r, depth - 1) + 1 : 0;
}

static int guarded_read(struct asx_rwlock *l)
{
	ASX_GUARD_READ(l);
	return asx_rwlock_trywrlock(l);
}

static int guarded_write(struct asx_rwlock *l)
{
	ASX_GUARD_WRITE(l);
	return asx_rwlock_tryrdlock(l);
}

static void test_guard_rmutex_rwlock(void **state)
{
	struct asx_rwlock l = ASX_RWLOCK_INITIALIZER;

	(void)state;
	asx_rmutex_init(&rm);
	assert_int_equal(guarded_rmutex(&rm, 4), 4);
	assert_int_equal(rmutex_in_thread(0), 0);	/* fully released; thread keeps it */
	asx_rmutex_init(&rm);

	assert_int_equal(guarded_read(&l), -EBUSY);
	assert_int_equal(guarded_write(&l), -EBUSY);
	assert_int_equal(asx_rwlock_trywrlock(&l), 0);
	asx_rwlock_unlock(&l);
}

/* The lock-strategy idea: one body, the lock type chosen at compile time. */
#define DEFINE_COUNTER(name, lock_type)				\
	struct name { lock_type lock; long n; };		\
	static long name##_bump(struct name *c)			\
	{							\
		ASX_GUARD(&c->lock);				\
		return ++c->n;					\
	}
DEFINE_COUNTER(counter_nl, struct asx_null_lock)
DEFINE_COUNTER(counter_mx, struct asx_mutex)

static void test_guard_null_lock(void **state)
{
	struct counter_nl a = { ASX_NULL_LOCK_INITIALIZER, 0 };
	struct counter_mx b = { ASX_MUTEX_INITIALIZER, 0 };
	struct asx_null_lock nl;

	(void)state;
	asx_null_lock_init(&nl);
	for (int i = 0; i < 5; i++) {
		ASX_GUARD(&nl);
		if (i == 2)
			break;
	}
	assert_int_equal(asx_null_lock_trylock(&nl), 0);
	asx_null_lock_unlock(&nl);
	assert_int_equal(counter_nl_bump(&a), 1);
	assert_int_equal(counter_nl_bump(&a), 2);
	assert_int_equal(counter_mx_bump(&b), 1);
	assert_int_equal(asx_mutex_trylock(&b.lock), 0);
	asx_mutex_unlock(&b.lock);
}

/* The opt-in lock statistics themselves: a holder that sleeps, known waits. */
struct held {
	struct asx_mutex m;
	struct asx_rwlock rw;
	struct asx_cond c;
	int flag;
};

static void *contend_mutex(void *arg)
{
	struct held *h = arg;

	asx_mutex_lock(&h->m);
	asx_mutex_unlock(&h->m);
	asx_rwlock_rdlock(&h->rw);
	asx_rwlock_unlock(&h->rw);
	asx_mutex_lock(&h->m);
	h->flag = 1;
	asx_cond_signal(&h->c);
	asx_mutex_unlock(&h->m);
	return NULL;
}

static void test_lockstat(void **state)
{
	struct asx_lockstat ls, before;
	struct held h;
	uint64_t t0;
	pthread_t th;

	(void)state;
	asx_mutex_init(&h.m);
	asx_rwlock_init(&h.rw);
	asx_cond_init(&h.c);
	h.flag = 0;
	/* off: nothing is counted */
	asx_lockstat_enable(false);
	asx_lockstat_reset();
	asx_mutex_lock(&h.m);
	assert_int_equal(pthread_create(&th, NULL, contend_mutex, &h), 0);
	usleep(20000);
	asx_mutex_unlock(&h.m);
	assert_int_equal(pthread_join(th, NULL), 0);
	asx_lockstat_read(&ls);
	assert_int_equal(ls.contended, 0);
	assert_int_equal(ls.waits, 0);

	/* on: the mutex and the rwlock are held 20 ms while the thread
	 * wants them, and the main thread waits on the condition; the 20 ms
	 * on the mutex start once the thread sleeps on it (word 2: a slow
	 * start on a loaded host must not find it free) */
	h.flag = 0;
	asx_lockstat_enable(true);
	asx_mutex_lock(&h.m);
	asx_rwlock_wrlock(&h.rw);
	assert_int_equal(pthread_create(&th, NULL, contend_mutex, &h), 0);
	for (int i = 0; __atomic_load_n(&h.m.word, __ATOMIC_RELAXED) != 2; i++) {
		assert_true(i < 60000);		/* a minute */
		usleep(1000);
	}
	usleep(20000);
	asx_mutex_unlock(&h.m);
	usleep(20000);
	asx_rwlock_unlock(&h.rw);
	asx_mutex_lock(&h.m);
	while (!h.flag)
		asx_cond_wait(&h.c, &h.m);
	asx_mutex_unlock(&h.m);
	assert_int_equal(pthread_join(th, NULL), 0);
	asx_lockstat_enable(false);
	asx_lockstat_read(&ls);
	assert_true(ls.contended >= 1);
	assert_true(ls.acquire_ns >= 10000000ull);
	if (ls.waits)
		assert_true(ls.wait_ns > 0);
	assert_int_equal(ls.holds, 0);		/* libasx's locks never time holds */

	/* a program's own critical sections and waits, the same counters */
	asx_lockstat_enable(true);
	t0 = asx_lockstat_begin();
	assert_true(t0 > 0);
	usleep(2000);
	asx_lockstat_end(ASX_LOCKSTAT_HOLD, t0);
	asx_lockstat_end(ASX_LOCKSTAT_WAIT, asx_lockstat_begin());
	asx_lockstat_end(ASX_LOCKSTAT_HOLD, 0);	/* begun while off: not counted */
	asx_lockstat_enable(false);
	assert_int_equal(asx_lockstat_begin(), 0);
	before = ls;
	assert_int_equal(asx_lockstat_read(&ls), 0);
	assert_int_equal(ls.holds, 1);
	assert_true(ls.hold_ns >= 1000000ull);
	assert_int_equal(ls.waits, before.waits + 1);
	assert_int_equal(ls.contended, before.contended);

	asx_lockstat_reset();
	asx_lockstat_read(&ls);
	assert_int_equal(ls.contended + ls.acquire_ns + ls.waits + ls.wait_ns + ls.holds +
			 ls.hold_ns, 0);
	assert_int_equal(asx_lockstat_read(NULL), -EINVAL);
	asx_cond_destroy(&h.c);
	asx_rwlock_destroy(&h.rw);
	asx_mutex_destroy(&h.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutex_exclusion),
		cmocka_unit_test(test_mutex_trylock),
		cmocka_unit_test(test_mutex_timedlock),
		cmocka_unit_test(test_cond_signal),
		cmocka_unit_test(test_cond_broadcast),
		cmocka_unit_test(test_cond_pingpong),
		cmocka_unit_test(test_cond_timedwait),
		cmocka_unit_test(test_rwlock_shared_readers),
		cmocka_unit_test(test_rwlock_exclusion),
		cmocka_unit_test(test_rwlock_writer_preference),
		cmocka_unit_test(test_rwlock_writer_not_starved),
		cmocka_unit_test(test_rmutex_depth),
		cmocka_unit_test(test_rmutex_exclusion),
		cmocka_unit_test(test_sem_producer_consumer),
		cmocka_unit_test(test_sem_limits),
		cmocka_unit_test(test_sem_wakeups),
		cmocka_unit_test(test_barrier_rounds),
		cmocka_unit_test(test_guard_mutex),
		cmocka_unit_test(test_guard_rmutex_rwlock),
		cmocka_unit_test(test_guard_null_lock),
		cmocka_unit_test(test_lockstat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
