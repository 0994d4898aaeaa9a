// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_wait_stress.c - one asx_mutex, asx_cond pair and asx_msgq shared by
 * ASC user threads on two VPs and plain pthreads at once.
 *
 * Each scenario runs under both a non-preemptive and a timesliced ASC
 * (a user thread may be preempted while it holds the mutex; the others
 * must park, not spin their VP away).  Invariants:
 *   - counter: every increment under the mutex is kept (no lost update);
 *   - bounded buffer (mutex + two conds) and message queue: every item
 *     arrives exactly once (nothing lost, nothing duplicated), and each
 *     consumer sees each producer's items in increasing order (FIFO kept);
 *   - nothing hangs: each scenario runs under a watchdog (JOINWD_S of
 *     joinwd.h) that fails the program instead.
 * The message queue's high-water mark is a few messages, so producers
 * block on flow control as often as consumers block on an empty queue.
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
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/msg.h>
#include <asx/msgq.h>
#include <asx/sync.h>
#include "joinwd.h"
#include "threadcheck.h"

#if defined(__SANITIZE_THREAD__)
#define ITERS 1500
#else
#define ITERS 20000
#endif

#define NUSER	4		/* user threads per role group, on 2 VPs */
#define NPTH	2		/* pthreads per role group */
#define NPROD	(NUSER / 2 + NPTH / 2)
#define NCONS	NPROD
#define RING	8
#define STOP	0xffffffffU
#define HOLD_SPIN 200

static enum asx_asc_semantic semantic;

/* ---------------------------------------------------------------- workers on both kinds */

struct runner {
	struct asx_asc *asc;
	struct asx_asc_thread *ut[NUSER];
	pthread_t pt[NPTH];
	int nu, np;
};

static void run_start(struct runner *r)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 2, .max_vps = 2,
				  .semantic = semantic, .timeslice_ns = 200000 };

	memset(r, 0, sizeof(*r));
	assert_int_equal(asx_asc_create(&r->asc, &asx_asc_prio, &o), 0);
}

static void run_user(struct runner *r, void *(*fn)(void *), void *arg)
{
	struct asx_prio_qos q = ASX_PRIO_QOS(0);

	assert_true(r->nu < NUSER);
	assert_int_equal(asx_asc_thread_spawn(r->asc, &q.qos, fn, arg, NULL, &r->ut[r->nu++]), 0);
}

static void run_pthread(struct runner *r, void *(*fn)(void *), void *arg)
{
	assert_true(r->np < NPTH);
	assert_int_equal(pthread_create(&r->pt[r->np++], NULL, fn, arg), 0);
}

static void run_join(struct runner *r)
{
	for (int i = 0; i < r->nu; i++)
		assert_int_equal(asx_asc_thread_join(r->ut[i], NULL), 0);
	for (int i = 0; i < r->np; i++)
		assert_int_equal(pthread_join(r->pt[i], NULL), 0);
	assert_int_equal(asx_asc_destroy(r->asc), 0);
}

/*
 * The watchdog: a thread that fails the program (exit 1) unless @body,
 * run on the test's own thread (so CMocka's assertions work), returns
 * within JOINWD_S seconds.  Then the workers' CHECKs are looked at.
 */
static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wd_cond;
static bool wd_done;

static void *watchdog(void *arg)
{
	struct timespec dl;
	bool done;

	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_sec += JOINWD_S;
	pthread_mutex_lock(&wd_lock);
	while (!wd_done && pthread_cond_timedwait(&wd_cond, &wd_lock, &dl) != ETIMEDOUT)
		;
	done = wd_done;
	pthread_mutex_unlock(&wd_lock);
	if (!done) {
		fprintf(stderr, "watchdog: %s did not finish in %d s (deadlock)\n",
			(const char *)arg, JOINWD_S);
		_exit(1);
	}
	return NULL;
}

static void watched(void *(*body)(void *), const char *what)
{
	pthread_condattr_t ca;
	pthread_t th;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&wd_cond, &ca);
	wd_done = false;
	assert_int_equal(pthread_create(&th, NULL, watchdog, (void *)what), 0);
	body(NULL);
	pthread_mutex_lock(&wd_lock);
	wd_done = true;
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_lock);
	pthread_join(th, NULL);
	pthread_cond_destroy(&wd_cond);
	assert_threads_ok();
}

/* The items' books: each (producer, seq) seen once, in order per consumer. */
static uint8_t seen[NPROD][ITERS];

static void books_reset(void)
{
	memset(seen, 0, sizeof(seen));
}

static void books_take(uint32_t item, uint32_t last[NPROD])
{
	uint32_t p = item >> 24, s = item & 0xffffff;

	CHECK(p < NPROD && s < ITERS);
	if (p >= NPROD || s >= ITERS)
		return;
	CHECK(__atomic_fetch_add(&seen[p][s], 1, __ATOMIC_RELAXED) == 0);
	CHECK(last[p] == STOP || s > last[p]);	/* FIFO per producer */
	last[p] = s;
}

static void books_check(void)
{
	for (int p = 0; p < NPROD; p++)
		for (int s = 0; s < ITERS; s++)
			if (seen[p][s] != 1) {
				print_error("item %d/%d seen %d times\n", p, s, seen[p][s]);
				fail();
			}
}

/* ---------------------------------------------------------------- counter */

static struct asx_mutex cmx;
static unsigned long counter;

static void *count_fn(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		asx_mutex_lock(&cmx);
		counter++;
		/* hold it a while: timeslice ticks land inside the section */
		for (volatile int k = 0; k < HOLD_SPIN; k++)
			;
		asx_mutex_unlock(&cmx);
	}
	return NULL;
}

static void *counter_body(void *arg)
{
	struct runner r;

	(void)arg;
	asx_mutex_init(&cmx);
	counter = 0;
	run_start(&r);
	for (int i = 0; i < NUSER; i++)
		run_user(&r, count_fn, NULL);
	for (int i = 0; i < NPTH; i++)
		run_pthread(&r, count_fn, NULL);
	run_join(&r);
	CHECK(counter == (unsigned long)ITERS * (NUSER + NPTH));
	return NULL;
}

static void test_mutex_counter(void **state)
{
	(void)state;
	watched(counter_body, "mutex counter");
}

/* ---------------------------------------------------------------- bounded buffer */

static struct {
	struct asx_mutex m;
	struct asx_cond not_empty, not_full;
	uint32_t ring[RING];
	unsigned int head, count, stops;
} bb;

static void bb_put(uint32_t item)
{
	asx_mutex_lock(&bb.m);
	while (bb.count == RING)
		asx_cond_wait(&bb.not_full, &bb.m);
	bb.ring[(bb.head + bb.count++) % RING] = item;
	asx_cond_signal(&bb.not_empty);
	asx_mutex_unlock(&bb.m);
}

static void *bb_produce(void *arg)
{
	uint32_t p = (uint32_t)(uintptr_t)arg;

	for (uint32_t s = 0; s < ITERS; s++)
		bb_put(p << 24 | s);
	return NULL;
}

static void *bb_consume(void *arg)
{
	uint32_t last[NPROD], item;

	(void)arg;
	memset(last, 0xff, sizeof(last));
	for (;;) {
		asx_mutex_lock(&bb.m);
		while (!bb.count)
			asx_cond_wait(&bb.not_empty, &bb.m);
		item = bb.ring[bb.head];
		bb.head = (bb.head + 1) % RING;
		bb.count--;
		asx_cond_signal(&bb.not_full);
		asx_mutex_unlock(&bb.m);
		if (item == STOP)
			return NULL;
		books_take(item, last);
	}
}

/* Producers and consumers, each half user threads, half pthreads. */
static void spawn_roles(struct runner *r, void *(*prod)(void *), void *(*cons)(void *))
{
	int p = 0;

	for (int i = 0; i < NUSER / 2; i++, p++)
		run_user(r, prod, (void *)(uintptr_t)p);
	for (int i = 0; i < NPTH / 2; i++, p++)
		run_pthread(r, prod, (void *)(uintptr_t)p);
	for (int i = 0; i < NUSER / 2; i++)
		run_user(r, cons, NULL);
	for (int i = 0; i < NPTH / 2; i++)
		run_pthread(r, cons, NULL);
}

/*
 * Join the producers (the first half of each kind), give each consumer a
 * STOP with @stop, join the consumers and destroy the ASC.
 */
static void roles_finish(struct runner *r, void (*stop)(void))
{
	for (int i = 0; i < NUSER / 2; i++)
		assert_int_equal(asx_asc_thread_join(r->ut[i], NULL), 0);
	for (int i = 0; i < NPTH / 2; i++)
		assert_int_equal(pthread_join(r->pt[i], NULL), 0);
	for (int i = 0; i < NCONS; i++)
		stop();
	for (int i = NUSER / 2; i < r->nu; i++)
		assert_int_equal(asx_asc_thread_join(r->ut[i], NULL), 0);
	for (int i = NPTH / 2; i < r->np; i++)
		assert_int_equal(pthread_join(r->pt[i], NULL), 0);
	assert_int_equal(asx_asc_destroy(r->asc), 0);
}

static void bb_stop(void)
{
	bb_put(STOP);
}

static void *bb_body(void *arg)
{
	struct runner r;

	(void)arg;
	memset(&bb, 0, sizeof(bb));
	asx_mutex_init(&bb.m);
	asx_cond_init(&bb.not_empty);
	asx_cond_init(&bb.not_full);
	books_reset();
	run_start(&r);
	spawn_roles(&r, bb_produce, bb_consume);
	roles_finish(&r, bb_stop);
	books_check();
	return NULL;
}

static void test_mutex_cond_buffer(void **state)
{
	(void)state;
	watched(bb_body, "mutex+cond bounded buffer");
}

/* ---------------------------------------------------------------- msgq */

static struct asx_msgq *mq;

static struct asx_msg *item_msg(uint32_t v)
{
	struct asx_msg *m = asx_msg_alloc(sizeof(v), ASX_MSG_DATA);

	if (m)
		asx_msg_append(m, &v, sizeof(v));
	return m;
}

static void *mq_produce(void *arg)
{
	uint32_t p = (uint32_t)(uintptr_t)arg;

	for (uint32_t s = 0; s < ITERS; s++) {
		struct asx_msg *m = item_msg(p << 24 | s);

		CHECK(m && asx_msgq_enqueue(mq, m, 0, NULL) == 0);
	}
	return NULL;
}

static void *mq_consume(void *arg)
{
	uint32_t last[NPROD], item;
	struct asx_msg *m;

	(void)arg;
	memset(last, 0xff, sizeof(last));
	for (;;) {
		m = NULL;
		if (asx_msgq_dequeue(mq, &m, 0, NULL)) {
			CHECK(0);
			return NULL;
		}
		memcpy(&item, m->rd, sizeof(item));
		asx_msg_free(m);
		if (item == STOP)
			return NULL;
		books_take(item, last);
	}
}

static void mq_stop(void)
{
	assert_int_equal(asx_msgq_enqueue(mq, item_msg(STOP), 0, NULL), 0);
}

static void *mq_body(void *arg)
{
	struct runner r;

	(void)arg;
	books_reset();
	/* four 4-byte messages fill it: producers hit flow control all the time */
	assert_int_equal(asx_msgq_create(&mq, 16, 8), 0);
	run_start(&r);
	spawn_roles(&r, mq_produce, mq_consume);
	roles_finish(&r, mq_stop);
	assert_true(asx_msgq_is_empty(mq));
	asx_msgq_destroy(mq);
	books_check();
	return NULL;
}

static void test_msgq_mixed(void **state)
{
	(void)state;
	watched(mq_body, "msgq producers/consumers");
}

/* Each scenario under a non-preemptive and a timesliced ASC. */
#define BOTH(fn)							\
	static void fn##_np(void **state)				\
	{								\
		semantic = ASX_ASC_NONPREEMPTIVE;			\
		fn(state);						\
	}								\
	static void __attribute__((unused)) fn##_ts(void **state)	\
	{								\
		semantic = ASX_ASC_TIMESLICED;				\
		fn(state);						\
	}
BOTH(test_mutex_counter)
BOTH(test_mutex_cond_buffer)
BOTH(test_msgq_mixed)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutex_counter_np),
		cmocka_unit_test(test_mutex_cond_buffer_np),
		cmocka_unit_test(test_msgq_mixed_np),
#if !defined(__SANITIZE_THREAD__)
		/* TSan does not follow preemption (Documentation/asc.rst, Limits):
		 * its build runs the non-preemptive half only */
		cmocka_unit_test(test_mutex_counter_ts),
		cmocka_unit_test(test_mutex_cond_buffer_ts),
		cmocka_unit_test(test_msgq_mixed_ts),
#endif
	};

	if (getenv("ASX_TEST_FILTER"))
		cmocka_set_test_filter(getenv("ASX_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
