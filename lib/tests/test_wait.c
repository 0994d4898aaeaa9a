// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_wait.c - libasx's blocking calls from ASC user threads.
 *
 * One scenario per blocking call, each on an ASC of exactly one VP
 * (nvps = max_vps = 1): user thread A blocks in the call and user thread B,
 * on the same VP, must run to release it.  If the call blocked the VP
 * rather than A, B never runs: a watchdog (joinwd.h) then fails the program
 * instead of letting it hang.  The timed variants check that a timeout
 * keeps its meaning on a user thread (A gets -ETIMEDOUT after the
 * deadline) and that the VP ran B meanwhile.
 *
 * On one VP under the non-preemptive PRIO policy, a thread runs until it
 * blocks or yields, so "B runs after A announced it is about to block"
 * means A is parked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <asx/asc.h>
#include <asx/msg.h>
#include <asx/msgq.h>
#include <asx/sync.h>
#include "joinwd.h"
#include "stream/rcu.h"

#define MS 1000000ULL
#define TIMEOUT_MS 50

static int failed_line;
#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			__atomic_store_n(&failed_line, __LINE__, __ATOMIC_SEQ_CST); \
	} while (0)

/* The objects and the progress flags of one scenario. */
static struct {
	struct asx_mutex m;
	struct asx_cond c;
	struct asx_sem s;
	struct asx_rwlock rw;
	struct asx_rmutex rm;
	struct asx_barrier bar;
	struct asx_msgq *q;
	int a_waiting;		/* A is about to block */
	int a_done;		/* A came back from the call */
	int b_released;		/* B did what releases A */
	int flag;
	unsigned long b_runs;	/* B's scheduling rounds */
} S;

#define LD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define ST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

static void reset(void)
{
	memset(&S, 0, sizeof(S));
	asx_mutex_init(&S.m);
	asx_cond_init(&S.c);
	assert_int_equal(asx_sem_init(&S.s, 0), 0);
	asx_rwlock_init(&S.rw);
	asx_rmutex_init(&S.rm);
	assert_int_equal(asx_barrier_init(&S.bar, 2), 0);
}

static struct timespec in_ms(uint64_t ms)
{
	uint64_t t = asx_now_ns() + ms * MS;

	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000ULL),
				  .tv_nsec = (long)(t % 1000000000ULL) };
}

/* B: wait (yielding, so A may run) until A announced it blocks, then a few
 * more rounds; A must still be inside the call. */
static void b_wait_for_a(void)
{
	while (!LD(S.a_waiting)) {
		S.b_runs++;
		asx_asc_thread_yield();
	}
	for (int i = 0; i < 3; i++)
		asx_asc_thread_yield();
	CHECK(!LD(S.a_done));
}

/* B, for the timed scenarios: run rounds until A is back. */
static void *b_spin_until_a_done(void *arg)
{
	(void)arg;
	while (!LD(S.a_done)) {
		__atomic_add_fetch(&S.b_runs, 1, __ATOMIC_SEQ_CST);
		asx_asc_thread_yield();
	}
	return NULL;
}

/* A, for the timed scenarios: @r from a call that started at @t0 with a
 * TIMEOUT_MS deadline, while B's round count was @runs0. */
static void a_check_timeout(int r, uint64_t t0, unsigned long runs0)
{
	CHECK(r == -ETIMEDOUT);
	CHECK(asx_now_ns() - t0 >= TIMEOUT_MS * MS);
	/* the VP ran B while A waited */
	CHECK(LD(S.b_runs) > runs0);
	ST(S.a_done, 1);
}

struct driver {
	void *(*first)(void *);
	void *(*second)(void *);
};

static void *drive(void *arg)
{
	struct driver *d = arg;
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t1, *t2;
	struct asx_asc *a;

	if (asx_asc_create(&a, &asx_asc_prio, &o))
		return (void *)1;
	if (asx_asc_thread_spawn(a, &q.qos, d->first, NULL, NULL, &t1) ||
	    asx_asc_thread_spawn(a, &q.qos, d->second, NULL, NULL, &t2))
		return (void *)2;
	asx_asc_thread_join(t1, NULL);
	asx_asc_thread_join(t2, NULL);
	asx_asc_destroy(a);
	return NULL;
}

/* Spawn @first then @second on a one-VP ASC; fail (exit) if they hang. */
static void run_1vp(void *(*first)(void *), void *(*second)(void *), const char *what)
{
	struct driver d = { first, second };
	pthread_t th;
	int line;

	assert_int_equal(pthread_create(&th, NULL, drive, &d), 0);
	join_or_die(th, what);
	line = __atomic_exchange_n(&failed_line, 0, __ATOMIC_SEQ_CST);
	if (line)
		print_error("CHECK failed at line %d\n", line);
	assert_int_equal(line, 0);
	assert_true(LD(S.a_done));
}

/* ---------------------------------------------------------------- mutex */

static void *mx_holder(void *arg)
{
	(void)arg;
	asx_mutex_lock(&S.m);
	b_wait_for_a();
	ST(S.b_released, 1);
	asx_mutex_unlock(&S.m);
	return NULL;
}

static void *mx_a(void *arg)
{
	(void)arg;
	ST(S.a_waiting, 1);
	asx_mutex_lock(&S.m);
	CHECK(LD(S.b_released));
	asx_mutex_unlock(&S.m);
	ST(S.a_done, 1);
	return NULL;
}

static void test_mutex_lock(void **state)
{
	(void)state;
	reset();
	run_1vp(mx_holder, mx_a, "asx_mutex_lock");
}

static void *mx_holder_timed(void *arg)
{
	asx_mutex_lock(&S.m);
	b_spin_until_a_done(arg);
	asx_mutex_unlock(&S.m);
	return NULL;
}

static void *mx_a_timed(void *arg)
{
	struct timespec dl = in_ms(TIMEOUT_MS);
	unsigned long runs0 = LD(S.b_runs);
	uint64_t t0 = asx_now_ns();

	(void)arg;
	a_check_timeout(asx_mutex_timedlock(&S.m, &dl), t0, runs0);
	return NULL;
}

static void test_mutex_timedlock(void **state)
{
	(void)state;
	reset();
	run_1vp(mx_holder_timed, mx_a_timed, "asx_mutex_timedlock");
}

/* ---------------------------------------------------------------- cond */

static void *cv_a(void *arg)
{
	(void)arg;
	asx_mutex_lock(&S.m);
	ST(S.a_waiting, 1);
	while (!S.flag)
		asx_cond_wait(&S.c, &S.m);
	asx_mutex_unlock(&S.m);
	ST(S.a_done, 1);
	return NULL;
}

static void *cv_b(void *arg)
{
	(void)arg;
	b_wait_for_a();
	asx_mutex_lock(&S.m);
	S.flag = 1;
	asx_cond_signal(&S.c);
	asx_mutex_unlock(&S.m);
	return NULL;
}

static void test_cond_wait(void **state)
{
	(void)state;
	reset();
	run_1vp(cv_a, cv_b, "asx_cond_wait");
}

static void *cv_a_timed(void *arg)
{
	struct timespec dl = in_ms(TIMEOUT_MS);
	unsigned long runs0;
	uint64_t t0;
	int r;

	(void)arg;
	asx_mutex_lock(&S.m);
	runs0 = LD(S.b_runs);
	t0 = asx_now_ns();
	do
		r = asx_cond_timedwait(&S.c, &S.m, &dl);
	while (!r);
	asx_mutex_unlock(&S.m);
	a_check_timeout(r, t0, runs0);
	return NULL;
}

static void test_cond_timedwait(void **state)
{
	(void)state;
	reset();
	run_1vp(cv_a_timed, b_spin_until_a_done, "asx_cond_timedwait");
}

/* ---------------------------------------------------------------- semaphore */

static void *sem_a(void *arg)
{
	(void)arg;
	ST(S.a_waiting, 1);
	asx_sem_wait(&S.s);
	CHECK(LD(S.b_released));
	ST(S.a_done, 1);
	return NULL;
}

static void *sem_b(void *arg)
{
	(void)arg;
	b_wait_for_a();
	ST(S.b_released, 1);
	CHECK(asx_sem_post(&S.s) == 0);
	return NULL;
}

static void test_sem_wait(void **state)
{
	(void)state;
	reset();
	run_1vp(sem_a, sem_b, "asx_sem_wait");
}

static void *sem_a_timed(void *arg)
{
	struct timespec dl = in_ms(TIMEOUT_MS);
	unsigned long runs0 = LD(S.b_runs);
	uint64_t t0 = asx_now_ns();

	(void)arg;
	a_check_timeout(asx_sem_timedwait(&S.s, &dl), t0, runs0);
	return NULL;
}

static void test_sem_timedwait(void **state)
{
	(void)state;
	reset();
	run_1vp(sem_a_timed, b_spin_until_a_done, "asx_sem_timedwait");
}

/* ---------------------------------------------------------------- rwlock */

static void *rw_writer_holds(void *arg)
{
	(void)arg;
	asx_rwlock_wrlock(&S.rw);
	b_wait_for_a();
	ST(S.b_released, 1);
	asx_rwlock_unlock(&S.rw);
	return NULL;
}

static void *rw_a_reads(void *arg)
{
	(void)arg;
	ST(S.a_waiting, 1);
	asx_rwlock_rdlock(&S.rw);
	CHECK(LD(S.b_released));
	asx_rwlock_unlock(&S.rw);
	ST(S.a_done, 1);
	return NULL;
}

static void test_rwlock_rdlock(void **state)
{
	(void)state;
	reset();
	run_1vp(rw_writer_holds, rw_a_reads, "asx_rwlock_rdlock");
}

static void *rw_reader_holds(void *arg)
{
	(void)arg;
	asx_rwlock_rdlock(&S.rw);
	b_wait_for_a();
	ST(S.b_released, 1);
	asx_rwlock_unlock(&S.rw);
	return NULL;
}

static void *rw_a_writes(void *arg)
{
	(void)arg;
	ST(S.a_waiting, 1);
	asx_rwlock_wrlock(&S.rw);
	CHECK(LD(S.b_released));
	asx_rwlock_unlock(&S.rw);
	ST(S.a_done, 1);
	return NULL;
}

static void test_rwlock_wrlock(void **state)
{
	(void)state;
	reset();
	run_1vp(rw_reader_holds, rw_a_writes, "asx_rwlock_wrlock");
}

/* ---------------------------------------------------------------- rmutex */

/* Both threads share the VP's kernel thread: ownership must still be theirs. */
static void *rm_holder(void *arg)
{
	(void)arg;
	asx_rmutex_lock(&S.rm);
	asx_rmutex_lock(&S.rm);
	b_wait_for_a();
	ST(S.b_released, 1);
	CHECK(asx_rmutex_unlock(&S.rm) == 0);
	CHECK(asx_rmutex_unlock(&S.rm) == 0);
	CHECK(asx_rmutex_unlock(&S.rm) == -EPERM);
	return NULL;
}

static void *rm_a(void *arg)
{
	(void)arg;
	CHECK(asx_rmutex_trylock(&S.rm) == -EBUSY);
	CHECK(asx_rmutex_unlock(&S.rm) == -EPERM);
	ST(S.a_waiting, 1);
	asx_rmutex_lock(&S.rm);
	CHECK(LD(S.b_released));
	CHECK(asx_rmutex_trylock(&S.rm) == 0);	/* ours now: recursion */
	CHECK(asx_rmutex_unlock(&S.rm) == 0);
	CHECK(asx_rmutex_unlock(&S.rm) == 0);
	ST(S.a_done, 1);
	return NULL;
}

static void test_rmutex(void **state)
{
	(void)state;
	reset();
	run_1vp(rm_holder, rm_a, "asx_rmutex_lock");
}

/* ---------------------------------------------------------------- barrier */

static void *bar_a(void *arg)
{
	(void)arg;
	ST(S.a_waiting, 1);
	asx_barrier_wait(&S.bar);
	CHECK(LD(S.b_released));
	ST(S.a_done, 1);
	return NULL;
}

static void *bar_b(void *arg)
{
	(void)arg;
	b_wait_for_a();
	ST(S.b_released, 1);
	asx_barrier_wait(&S.bar);
	return NULL;
}

static void test_barrier(void **state)
{
	(void)state;
	reset();
	run_1vp(bar_a, bar_b, "asx_barrier_wait");
}

/* ---------------------------------------------------------------- msgq */

static struct asx_msg *mk_msg(uint32_t v)
{
	struct asx_msg *m = asx_msg_alloc(sizeof(v), ASX_MSG_DATA);

	if (m)
		asx_msg_append(m, &v, sizeof(v));
	return m;
}

static uint32_t msg_val(struct asx_msg *m)
{
	uint32_t v;

	memcpy(&v, m->rd, sizeof(v));
	asx_msg_free(m);
	return v;
}

static void *mq_a_dequeue(void *arg)
{
	struct asx_msg *m = NULL;

	(void)arg;
	ST(S.a_waiting, 1);
	CHECK(asx_msgq_dequeue(S.q, &m, 0, NULL) == 0);
	CHECK(LD(S.b_released));
	if (m)
		CHECK(msg_val(m) == 42);
	ST(S.a_done, 1);
	return NULL;
}

static void *mq_b_enqueue(void *arg)
{
	(void)arg;
	b_wait_for_a();
	ST(S.b_released, 1);
	CHECK(asx_msgq_enqueue(S.q, mk_msg(42), 0, NULL) == 0);
	return NULL;
}

static void test_msgq_dequeue(void **state)
{
	(void)state;
	reset();
	assert_int_equal(asx_msgq_create(&S.q, 1024, 512), 0);
	run_1vp(mq_a_dequeue, mq_b_enqueue, "asx_msgq_dequeue");
	asx_msgq_destroy(S.q);
}

/* The queue is full (hiwat 4 bytes, one message in it): A's enqueue waits. */
static void *mq_a_enqueue(void *arg)
{
	(void)arg;
	ST(S.a_waiting, 1);
	CHECK(asx_msgq_enqueue(S.q, mk_msg(2), 0, NULL) == 0);
	CHECK(LD(S.b_released));
	ST(S.a_done, 1);
	return NULL;
}

static void *mq_b_dequeue(void *arg)
{
	struct asx_msg *m = NULL;

	(void)arg;
	b_wait_for_a();
	ST(S.b_released, 1);
	CHECK(asx_msgq_dequeue(S.q, &m, 0, NULL) == 0);
	if (m)
		CHECK(msg_val(m) == 1);
	m = NULL;
	CHECK(asx_msgq_dequeue(S.q, &m, 0, NULL) == 0);	/* A's, once A ran */
	if (m)
		CHECK(msg_val(m) == 2);
	return NULL;
}

static void test_msgq_enqueue(void **state)
{
	(void)state;
	reset();
	assert_int_equal(asx_msgq_create(&S.q, 4, 0), 0);
	assert_int_equal(asx_msgq_enqueue(S.q, mk_msg(1), 0, NULL), 0);
	assert_true(asx_msgq_is_full(S.q));
	run_1vp(mq_a_enqueue, mq_b_dequeue, "asx_msgq_enqueue");
	asx_msgq_destroy(S.q);
}

static void *mq_a_timed(void *arg)
{
	struct timespec dl = in_ms(TIMEOUT_MS);
	unsigned long runs0 = LD(S.b_runs);
	uint64_t t0 = asx_now_ns();
	struct asx_msg *m = NULL;

	(void)arg;
	a_check_timeout(asx_msgq_dequeue(S.q, &m, 0, &dl), t0, runs0);
	CHECK(!m);
	return NULL;
}

static void test_msgq_timed(void **state)
{
	(void)state;
	reset();
	assert_int_equal(asx_msgq_create(&S.q, 1024, 512), 0);
	run_1vp(mq_a_timed, b_spin_until_a_done, "asx_msgq_dequeue (timed)");
	asx_msgq_destroy(S.q);
}

/* ---------------------------------------------------------------- RCU reader */

/*
 * Inside an RCU read-side section a user thread must not switch (liburcu's
 * reader state is its VP's kernel thread's): the wait blocks the VP, so B
 * does not run while A waits.
 */
static void *rcu_a(void *arg)
{
	struct timespec dl = in_ms(TIMEOUT_MS);
	unsigned long runs0 = LD(S.b_runs);

	(void)arg;
	asx__rcu_read_lock();
	CHECK(asx_sem_timedwait(&S.s, &dl) == -ETIMEDOUT);
	CHECK(LD(S.b_runs) == runs0);
	asx__rcu_read_unlock();
	ST(S.a_done, 1);
	return NULL;
}

static void test_rcu_reader_blocks_vp(void **state)
{
	(void)state;
	reset();
	run_1vp(rcu_a, b_spin_until_a_done, "asx_sem_timedwait in an RCU reader");
}

/* ---------------------------------------------------------------- pthread waker */

/* A user thread parked on a mutex is woken by a plain pthread's unlock. */
static void *ext_a(void *arg)
{
	(void)arg;
	ST(S.a_waiting, 1);
	asx_mutex_lock(&S.m);
	CHECK(LD(S.b_released));
	asx_mutex_unlock(&S.m);
	ST(S.a_done, 1);
	return NULL;
}

static void *ext_b(void *arg)
{
	(void)arg;
	/* runs only if A parked rather than blocking the VP */
	ST(S.flag, 1);
	return NULL;
}

static void test_pthread_wakes_user_thread(void **state)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t1, *t2;
	struct asx_asc *a;
	uint64_t end;

	(void)state;
	reset();
	asx_mutex_lock(&S.m);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &o), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ext_a, NULL, NULL, &t1), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ext_b, NULL, NULL, &t2), 0);
	end = asx_now_ns() + (uint64_t)JOINWD_S * 1000 * MS;
	while (!LD(S.flag) && asx_now_ns() < end)
		usleep(1000);
	assert_true(LD(S.flag));	/* B ran: A did not hold the VP */
	ST(S.b_released, 1);
	asx_mutex_unlock(&S.m);
	assert_int_equal(asx_asc_thread_join(t1, NULL), 0);
	assert_int_equal(asx_asc_thread_join(t2, NULL), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_int_equal(__atomic_exchange_n(&failed_line, 0, __ATOMIC_SEQ_CST), 0);
	assert_true(LD(S.a_done));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutex_lock),
		cmocka_unit_test(test_mutex_timedlock),
		cmocka_unit_test(test_cond_wait),
		cmocka_unit_test(test_cond_timedwait),
		cmocka_unit_test(test_sem_wait),
		cmocka_unit_test(test_sem_timedwait),
		cmocka_unit_test(test_rwlock_rdlock),
		cmocka_unit_test(test_rwlock_wrlock),
		cmocka_unit_test(test_rmutex),
		cmocka_unit_test(test_barrier),
		cmocka_unit_test(test_msgq_dequeue),
		cmocka_unit_test(test_msgq_enqueue),
		cmocka_unit_test(test_msgq_timed),
		cmocka_unit_test(test_pthread_wakes_user_thread),
		cmocka_unit_test(test_rcu_reader_blocks_vp),
	};

	if (getenv("ASX_TEST_FILTER"))	/* e.g. ASX_TEST_FILTER='test_msgq*' */
		cmocka_set_test_filter(getenv("ASX_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
