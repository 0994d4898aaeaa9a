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
#include "threadcheck.h"

#include "onevp.h"

/* The objects of one scenario. */
static struct {
	struct asx_mutex m;
	struct asx_cond c;
	struct asx_sem s;
	struct asx_rwlock rw;
	struct asx_rmutex rm;
	struct asx_barrier bar;
	struct asx_msgq *q;
	int flag;
} S;

static void reset(void)
{
	memset(&S, 0, sizeof(S));
	memset(&OV, 0, sizeof(OV));
	asx_mutex_init(&S.m);
	asx_cond_init(&S.c);
	assert_int_equal(asx_sem_init(&S.s, 0), 0);
	asx_rwlock_init(&S.rw);
	asx_rmutex_init(&S.rm);
	assert_int_equal(asx_barrier_init(&S.bar, 2), 0);
}

/* ---------------------------------------------------------------- mutex */

static void mx_lock(void)
{
	asx_mutex_lock(&S.m);
}

static void mx_lock_unlock(void)
{
	asx_mutex_lock(&S.m);
	asx_mutex_unlock(&S.m);
}

static void mx_unlock(void)
{
	asx_mutex_unlock(&S.m);
}

static void test_mutex_lock(void **state)
{
	static const struct scenario s = { "asx_mutex_lock", mx_lock, mx_lock_unlock, mx_unlock };

	(void)state;
	reset();
	run_scenario(&s);
}

/* Held by B, which keeps running: A's timed lock must give up. */
static void *mx_holder_timed(void *arg)
{
	asx_mutex_lock(&S.m);
	b_spin_until_a_done(arg);
	asx_mutex_unlock(&S.m);
	return NULL;
}

static int mx_timedlock(const struct timespec *dl)
{
	return asx_mutex_timedlock(&S.m, dl);
}

static void test_mutex_timedlock(void **state)
{
	(void)state;
	reset();
	timed_call = mx_timedlock;
	run_1vp(mx_holder_timed, a_timed, "asx_mutex_timedlock");
}

/* ---------------------------------------------------------------- cond */

static void cv_wait(void)
{
	asx_mutex_lock(&S.m);
	while (!S.flag)
		asx_cond_wait(&S.c, &S.m);
	asx_mutex_unlock(&S.m);
}

static void cv_signal(void)
{
	asx_mutex_lock(&S.m);
	S.flag = 1;
	asx_cond_signal(&S.c);
	asx_mutex_unlock(&S.m);
}

static void test_cond_wait(void **state)
{
	static const struct scenario s = { "asx_cond_wait", NULL, cv_wait, cv_signal };

	(void)state;
	reset();
	run_scenario(&s);
}

static int cv_timedwait(const struct timespec *dl)
{
	int r;

	asx_mutex_lock(&S.m);
	do
		r = asx_cond_timedwait(&S.c, &S.m, dl);
	while (!r);
	asx_mutex_unlock(&S.m);
	return r;
}

static void test_cond_timedwait(void **state)
{
	(void)state;
	reset();
	run_timed(cv_timedwait, "asx_cond_timedwait");
}

/* ---------------------------------------------------------------- semaphore */

static void sem_wait_(void)
{
	asx_sem_wait(&S.s);
}

static void sem_post_(void)
{
	CHECK(asx_sem_post(&S.s) == 0);
}

static void test_sem_wait(void **state)
{
	static const struct scenario s = { "asx_sem_wait", NULL, sem_wait_, sem_post_ };

	(void)state;
	reset();
	run_scenario(&s);
}

static int sem_timedwait_(const struct timespec *dl)
{
	return asx_sem_timedwait(&S.s, dl);
}

static void test_sem_timedwait(void **state)
{
	(void)state;
	reset();
	run_timed(sem_timedwait_, "asx_sem_timedwait");
}

/* ---------------------------------------------------------------- rwlock */

static void rw_rdlock(void)
{
	asx_rwlock_rdlock(&S.rw);
}

static void rw_wrlock(void)
{
	asx_rwlock_wrlock(&S.rw);
}

static void rw_unlock(void)
{
	asx_rwlock_unlock(&S.rw);
}

static void rw_rdlock_unlock(void)
{
	rw_rdlock();
	rw_unlock();
}

static void rw_wrlock_unlock(void)
{
	rw_wrlock();
	rw_unlock();
}

static void test_rwlock_rdlock(void **state)
{
	static const struct scenario s = { "asx_rwlock_rdlock", rw_wrlock, rw_rdlock_unlock,
					   rw_unlock };

	(void)state;
	reset();
	run_scenario(&s);
}

static void test_rwlock_wrlock(void **state)
{
	static const struct scenario s = { "asx_rwlock_wrlock", rw_rdlock, rw_wrlock_unlock,
					   rw_unlock };

	(void)state;
	reset();
	run_scenario(&s);
}

/* ---------------------------------------------------------------- rmutex */

/* Both threads share the VP's kernel thread: ownership must still be theirs. */
static void rm_hold(void)
{
	asx_rmutex_lock(&S.rm);
	asx_rmutex_lock(&S.rm);
}

static void rm_block(void)
{
	CHECK(asx_rmutex_trylock(&S.rm) == -EBUSY);
	CHECK(asx_rmutex_unlock(&S.rm) == -EPERM);
	asx_rmutex_lock(&S.rm);
	CHECK(asx_rmutex_trylock(&S.rm) == 0);	/* ours now: recursion */
	CHECK(asx_rmutex_unlock(&S.rm) == 0);
	CHECK(asx_rmutex_unlock(&S.rm) == 0);
}

static void rm_release(void)
{
	CHECK(asx_rmutex_unlock(&S.rm) == 0);
	CHECK(asx_rmutex_unlock(&S.rm) == 0);
	CHECK(asx_rmutex_unlock(&S.rm) == -EPERM);
}

static void test_rmutex(void **state)
{
	static const struct scenario s = { "asx_rmutex_lock", rm_hold, rm_block, rm_release };

	(void)state;
	reset();
	run_scenario(&s);
}

/* ---------------------------------------------------------------- barrier */

static void bar_wait(void)
{
	asx_barrier_wait(&S.bar);
}

static void test_barrier(void **state)
{
	static const struct scenario s = { "asx_barrier_wait", NULL, bar_wait, bar_wait };

	(void)state;
	reset();
	run_scenario(&s);
}

/* ---------------------------------------------------------------- msgq */

static struct asx_msg *mk_msg(uint32_t v)
{
	struct asx_msg *m = asx_msg_alloc(sizeof(v), ASX_MSG_DATA);

	if (m)
		asx_msg_append(m, &v, sizeof(v));
	return m;
}

/* Dequeue (waiting) and check the value. */
static void mq_get(uint32_t want)
{
	struct asx_msg *m = NULL;
	uint32_t v = ~want;

	CHECK(asx_msgq_dequeue(S.q, &m, 0, NULL) == 0);
	if (m) {
		memcpy(&v, m->rd, sizeof(v));
		asx_msg_free(m);
	}
	CHECK(v == want);
}

static void mq_get_42(void)
{
	mq_get(42);
}

static void mq_put_42(void)
{
	CHECK(asx_msgq_enqueue(S.q, mk_msg(42), 0, NULL) == 0);
}

static void test_msgq_dequeue(void **state)
{
	static const struct scenario s = { "asx_msgq_dequeue", NULL, mq_get_42, mq_put_42 };

	(void)state;
	reset();
	assert_int_equal(asx_msgq_create(&S.q, 1024, 512), 0);
	run_scenario(&s);
	asx_msgq_destroy(S.q);
}

/* The queue is full (hiwat 4 bytes, message 1 in it): A's enqueue waits. */
static void mq_put_2(void)
{
	CHECK(asx_msgq_enqueue(S.q, mk_msg(2), 0, NULL) == 0);
}

static void mq_get_1_2(void)
{
	mq_get(1);
	mq_get(2);	/* A's, once A ran */
}

static void test_msgq_enqueue(void **state)
{
	static const struct scenario s = { "asx_msgq_enqueue", NULL, mq_put_2, mq_get_1_2 };

	(void)state;
	reset();
	assert_int_equal(asx_msgq_create(&S.q, 4, 0), 0);
	assert_int_equal(asx_msgq_enqueue(S.q, mk_msg(1), 0, NULL), 0);
	assert_true(asx_msgq_is_full(S.q));
	run_scenario(&s);
	asx_msgq_destroy(S.q);
}

static int mq_timed(const struct timespec *dl)
{
	struct asx_msg *m = NULL;
	int r = asx_msgq_dequeue(S.q, &m, 0, dl);

	CHECK(!m);
	return r;
}

static void test_msgq_timed(void **state)
{
	(void)state;
	reset();
	assert_int_equal(asx_msgq_create(&S.q, 1024, 512), 0);
	run_timed(mq_timed, "asx_msgq_dequeue (timed)");
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
	unsigned long runs0 = LD(OV.b_runs);

	(void)arg;
	asx__rcu_read_lock();
	CHECK(asx_sem_timedwait(&S.s, &dl) == -ETIMEDOUT);
	CHECK(LD(OV.b_runs) == runs0);
	asx__rcu_read_unlock();
	ST(OV.a_done, 1);
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
static void *ext_b(void *arg)
{
	(void)arg;
	/* runs only if A parked rather than blocking the VP */
	ST(S.flag, 1);
	return NULL;
}

static void test_pthread_wakes_user_thread(void **state)
{
	static const struct scenario s = { "pthread unlock", NULL, mx_lock_unlock, NULL };
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t1, *t2;
	struct asx_asc *a;
	uint64_t end;

	(void)state;
	reset();
	sc = &s;
	asx_mutex_lock(&S.m);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &o), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, a_thread, NULL, NULL, &t1), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ext_b, NULL, NULL, &t2), 0);
	end = asx_now_ns() + (uint64_t)JOINWD_S * 1000 * MS;
	while (!LD(S.flag) && asx_now_ns() < end)
		usleep(1000);
	assert_true(LD(S.flag));	/* B ran: A did not hold the VP */
	ST(OV.b_released, 1);
	asx_mutex_unlock(&S.m);
	assert_int_equal(asx_asc_thread_join(t1, NULL), 0);
	assert_int_equal(asx_asc_thread_join(t2, NULL), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
	assert_true(LD(OV.a_done));
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
