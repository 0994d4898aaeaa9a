// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_thread_asc.c - the Thread Manager on ASC user threads: its waits and
 * joins park a calling user thread (one-VP scenarios under a watchdog),
 * groups mixing user threads and pthreads are suspended, resumed,
 * cancelled and waited for, and many groups spawn and join on two VPs
 * with exact counts.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <asx/asc.h>
#include <asx/sync.h>
#include <asx/thread.h>

#include "joinwd.h"
#include "threadcheck.h"
#include "onevp.h"

/* ------------------------------------------------ one VP: A waits, B runs */

static struct asx_thr_mgr *ov_m;
static struct asx_sem ov_go;
static int ov_join_id;

/* A member that waits (parked if a user thread) until B posts ov_go. */
static void *gated(void *arg)
{
	asx_sem_wait(&ov_go);
	return (void *)((intptr_t)arg + 1);
}

static void release_one(void)
{
	asx_sem_post(&ov_go);
}

static void release_two(void)
{
	asx_sem_post(&ov_go);
	asx_sem_post(&ov_go);
}

static void a_wait_group(void)
{
	struct asx_thr_status st[2];

	CHECK(asx_thr_mgr_wait_group(ov_m, 1, st, 2, NULL) == 1);
	CHECK(st[0].ret == (void *)8);
}

static void a_join(void)
{
	void *ret = NULL;

	CHECK(asx_thr_mgr_join(ov_m, ov_join_id, &ret, NULL) == 0);
	CHECK(ret == (void *)8);
}

static void a_wait_all(void)
{
	CHECK(asx_thr_mgr_wait(ov_m, NULL, 0, NULL) == 1);
}

/* An unmanaged user thread's asx_thr_sleep() sleeps without its VP. */
static void a_sleep(void)
{
	CHECK(asx_thr_sleep(30 * MS) == 0);
	CHECK(LD(OV.b_released));	/* B ran while A slept */
	CHECK(asx_thr_mgr_wait(ov_m, NULL, 0, NULL) == 1);
}

/* A adds a user thread of its own ASC (one VP) to group 1, then waits
 * for the mixed group: the member parks in the semaphore, A in the wait. */
static void a_wait_mixed_group(void)
{
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_thr_status st[4];
	int n;

	ASX_OPTS(struct asx_thr_opts, o, .asc = asx_asc_thread_asc(asx_asc_thread_self()),
		 .qos = &q.qos);
	CHECK(asx_thr_mgr_spawn_n(ov_m, 1, gated, (void *)7, 1, &o) == 1);
	n = asx_thr_mgr_wait_group(ov_m, 1, st, 4, NULL);
	CHECK(n == 2);
	for (int i = 0; i < n && i < 4; i++)
		CHECK(st[i].ret == (void *)8 && st[i].group == 1);
}

/* The wait must time out after its deadline, the VP running B meanwhile. */
static int timed_wait_group(const struct timespec *dl)
{
	return asx_thr_mgr_wait_group(ov_m, 1, NULL, 0, dl);
}

static int timed_join(const struct timespec *dl)
{
	return asx_thr_mgr_join(ov_m, ov_join_id, NULL, dl);
}

static const struct scenario scen[] = {
	{ "wait_group from a user thread", NULL, a_wait_group, release_one },
	{ "join from a user thread", NULL, a_join, release_one },
	{ "wait (all) from a user thread", NULL, a_wait_all, release_one },
	{ "wait_group of a mixed group", NULL, a_wait_mixed_group, release_two },
	{ "asx_thr_sleep on an unmanaged user thread", NULL, a_sleep, release_one },
};

/* A fresh manager with one gated pthread in group 1. */
static void ov_setup(void)
{
	int id;

	memset(&OV, 0, sizeof(OV));
	assert_int_equal(asx_sem_init(&ov_go, 0), 0);
	assert_int_equal(asx_thr_mgr_create(&ov_m), 0);
	ASX_OPTS(struct asx_thr_opts, o, .ids = &id);
	assert_int_equal(asx_thr_mgr_spawn_n(ov_m, 1, gated, (void *)7, 1, &o), 1);
	ov_join_id = id;
}

static void ov_teardown(void)
{
	asx_sem_post(&ov_go);	/* a timed scenario left the member waiting */
	assert_int_equal(asx_thr_mgr_destroy(ov_m), 0);
	asx_sem_destroy(&ov_go);
}

static void test_waits_park_user_thread(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scen) / sizeof(scen[0]); i++) {
		ov_setup();
		run_scenario(&scen[i]);
		assert_int_equal(asx_thr_mgr_count(ov_m), 0);
		ov_teardown();
	}
	ov_setup();
	run_timed(timed_wait_group, "timed wait_group from a user thread");
	ov_teardown();
	ov_setup();
	run_timed(timed_join, "timed join from a user thread");
	ov_teardown();
}

/* ------------------------------------------ a mixed group: suspend etc. */

struct worker {
	unsigned long n;	/* rounds (atomic) */
	int self_group;		/* asx_thr_self_group() seen by the worker */
	int self_id;
};

#define NW 7

static struct worker wk[NW];

/* Count rounds, each through a test point, until cancelled. */
static void *worker(void *arg)
{
	struct worker *w = arg;
	bool user = asx_asc_thread_self() != NULL;

	ST(w->self_group, asx_thr_self_group());
	ST(w->self_id, asx_thr_self());
	while (!asx_thr_testcancel()) {
		__atomic_add_fetch(&w->n, 1, __ATOMIC_SEQ_CST);
		if (user)
			asx_asc_thread_yield();
		else
			sched_yield();
	}
	return (void *)(w - wk + 100);
}

static void snap(unsigned long *out)
{
	for (int i = 0; i < NW; i++)
		out[i] = LD(wk[i].n);
}

/* Wait (bounded) until each worker in [lo, hi) has run past @base. */
static void all_advance(const unsigned long *base, int lo, int hi)
{
	uint64_t end = asx_now_ns() + 20000 * MS;

	for (int i = lo; i < hi; i++)
		while (LD(wk[i].n) <= base[i]) {
			assert_true(asx_now_ns() < end);
			usleep(1000);
		}
}

static struct timespec dl_s(int s)
{
	return in_ms((uint64_t)s * 1000);
}

/*
 * Group 1 holds two pthreads (wk 0, 1) and two user threads (wk 2, 3) of a
 * one-VP ASC; group 2 one more user thread (wk 4) of that VP.  While group
 * 1 is suspended its members stay still and wk 4 keeps running (the parked
 * user threads do not hold the VP); a user thread spawned into group 1
 * meanwhile (wk 5) starts parked; a single user thread can be suspended
 * alone; cancel_group and wait_group reap the mixed group.
 */
static void test_asc_group_suspend_cancel(void **state)
{
	struct asx_asc_opts ao = { .sz = sizeof(ao), .nvps = 1, .max_vps = 1,
				   .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	unsigned long s0[NW], s1[NW];
	struct asx_thr_status st[8];
	struct asx_thr_mgr *m;
	struct timespec dl;
	struct asx_asc *a;
	int id5, n;

	(void)state;
	memset(wk, 0, sizeof(wk));
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &ao), 0);
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	ASX_OPTS(struct asx_thr_opts, uo, .asc = a, .qos = &q.qos);
	ASX_OPTS(struct asx_thr_opts, uo5, .asc = a, .qos = &q.qos, .ids = &id5);
	for (int i = 0; i < 2; i++)
		assert_int_equal(asx_thr_mgr_spawn_n(m, 1, worker, &wk[i], 1, NULL), 1);
	for (int i = 2; i < 4; i++)
		assert_int_equal(asx_thr_mgr_spawn_n(m, 1, worker, &wk[i], 1, &uo), 1);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, worker, &wk[4], 2, &uo), 1);
	memset(s0, 0, sizeof(s0));
	all_advance(s0, 0, 5);
	for (int i = 0; i < 4; i++)
		assert_int_equal(LD(wk[i].self_group), 1);
	assert_int_equal(LD(wk[4].self_group), 2);
	assert_int_equal(LD(wk[2].self_id), 2);

	dl = dl_s(20);
	assert_int_equal(asx_thr_mgr_suspend_group(m, 1, &dl), 4);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, worker, &wk[5], 1, &uo5), 1);
	snap(s0);
	all_advance(s0, 4, 5);		/* the VP runs group 2 */
	usleep(30000);
	snap(s1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(s1[i], s0[i]);
	assert_int_equal(s1[5], 0);	/* born suspended: parked before fn */
	assert_true(s1[4] > s0[4]);

	assert_int_equal(asx_thr_mgr_resume_group(m, 1), 5);
	all_advance(s1, 0, 6);

	/* one user thread alone */
	dl = dl_s(20);
	assert_int_equal(asx_thr_mgr_suspend(m, id5, &dl), 0);
	snap(s0);
	all_advance(s0, 2, 5);
	assert_int_equal(LD(wk[5].n), s0[5]);
	assert_int_equal(asx_thr_mgr_resume(m, id5), 0);
	all_advance(s0, 5, 6);

	/* cancellation overrides a suspension of the mixed group */
	dl = dl_s(20);
	assert_int_equal(asx_thr_mgr_suspend_group(m, 1, &dl), 5);
	assert_int_equal(asx_thr_mgr_cancel_group(m, 1), 5);
	dl = dl_s(20);
	n = asx_thr_mgr_wait_group(m, 1, st, 8, &dl);
	assert_int_equal(n, 5);
	for (int i = 0; i < n; i++) {
		assert_int_equal(st[i].group, 1);
		assert_true((intptr_t)st[i].ret >= 100 && (intptr_t)st[i].ret <= 105 &&
			    (intptr_t)st[i].ret != 104);
	}
	assert_int_equal(asx_thr_mgr_count_group(m, 2), 1);
	assert_int_equal(asx_thr_mgr_resume_group(m, 1), 0);	/* nobody left */
	assert_int_equal(asx_thr_mgr_destroy(m), 0);	/* cancels wk 4 */
	assert_int_equal(asx_asc_destroy(a), 0);
}

/* ------------------------- one VP: a user thread suspends its neighbour */

static struct asx_thr_mgr *sv_m;

/*
 * A (a user thread) suspends group 2, whose one member W (wk 6) is a user
 * thread of the same and only VP: the suspension must park A until W
 * reaches its test point, so W must run meanwhile.  While suspended W
 * stays still across A's yields; after the resume it runs again; then A
 * cancels and waits for it.
 */
static void *suspender(void *arg)
{
	unsigned long n0;

	(void)arg;
	while (!LD(wk[6].n))
		asx_asc_thread_yield();
	CHECK(asx_thr_mgr_suspend_group(sv_m, 2, NULL) == 1);
	n0 = LD(wk[6].n);
	for (int i = 0; i < 50; i++)
		asx_asc_thread_yield();
	CHECK(LD(wk[6].n) == n0);
	CHECK(asx_thr_mgr_resume_group(sv_m, 2) == 1);
	while (LD(wk[6].n) == n0)
		asx_asc_thread_yield();
	CHECK(asx_thr_mgr_cancel_group(sv_m, 2) == 1);
	CHECK(asx_thr_mgr_wait_group(sv_m, 2, NULL, 0, NULL) == 1);
	return NULL;
}

static void *suspend_drive(void *arg)
{
	struct asx_asc *a = arg;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);

	ASX_OPTS(struct asx_thr_opts, o, .asc = a, .qos = &q.qos);
	CHECK(asx_thr_mgr_spawn_n(sv_m, 1, worker, &wk[6], 2, &o) == 1);
	CHECK(asx_thr_mgr_spawn_n(sv_m, 1, suspender, NULL, 1, &o) == 1);
	CHECK(asx_thr_mgr_wait(sv_m, NULL, 0, NULL) == 1);	/* W was reaped by A */
	return NULL;
}

static void test_user_thread_suspends_neighbour(void **state)
{
	struct asx_asc_opts ao = { .sz = sizeof(ao), .nvps = 1, .max_vps = 1,
				   .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_asc *a;
	pthread_t th;

	(void)state;
	memset(wk, 0, sizeof(wk));
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &ao), 0);
	assert_int_equal(asx_thr_mgr_create(&sv_m), 0);
	assert_int_equal(pthread_create(&th, NULL, suspend_drive, a), 0);
	join_or_die(th, "a user thread suspending its neighbour on one VP");
	assert_threads_ok();
	assert_int_equal(asx_thr_mgr_destroy(sv_m), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
}

/* --------------------------------------- many groups on two VPs: stress */

#define LEADERS 8
#ifdef __SANITIZE_THREAD__
#define ROUNDS 6
#else
#define ROUNDS 16
#endif
#define KIDS 6			/* per round: 4 user threads, 2 pthreads */

static struct {
	struct asx_thr_mgr *m;
	struct asx_asc *asc;
	unsigned long spawned, ran;	/* atomic */
} sx;

static void *kid(void *arg)
{
	__atomic_add_fetch(&sx.ran, 1, __ATOMIC_SEQ_CST);
	if (asx_asc_thread_self())
		asx_asc_thread_yield();
	(void)asx_thr_sleep(1000);	/* a safe point, parked or asleep */
	return arg;
}

/*
 * A leader (a user thread, group g) spawns KIDS children into group 100+g
 * per round, values round*KIDS+i+1, and collects them by wait_group (even
 * rounds) or join one by one (odd): each value exactly once.
 */
static void *leader(void *arg)
{
	int g = (int)(intptr_t)arg;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);

	CHECK(asx_thr_self_group() == g);
	for (int r = 0; r < ROUNDS; r++) {
		struct asx_thr_status st[KIDS];
		unsigned int seen = 0;
		int ids[KIDS];

		for (int i = 0; i < KIDS; i++) {
			ASX_OPTS(struct asx_thr_opts, o, .ids = &ids[i]);
			void *v = (void *)(intptr_t)(r * KIDS + i + 1);

			if (i < 4) {
				o.asc = sx.asc;
				o.qos = &q.qos;
			}
			CHECK(asx_thr_mgr_spawn_n(sx.m, 1, kid, v, 100 + g, &o) == 1);
			__atomic_add_fetch(&sx.spawned, 1, __ATOMIC_SEQ_CST);
		}
		if (r % 2 == 0) {
			CHECK(asx_thr_mgr_wait_group(sx.m, 100 + g, st, KIDS, NULL) == KIDS);
		} else {
			for (int i = 0; i < KIDS; i++) {
				st[i].ret = NULL;
				CHECK(asx_thr_mgr_join(sx.m, ids[i], &st[i].ret, NULL) == 0);
			}
		}
		for (int i = 0; i < KIDS; i++) {
			intptr_t v = (intptr_t)st[i].ret - r * KIDS - 1;

			CHECK(v >= 0 && v < KIDS && !(seen & (1u << v)));
			if (v >= 0 && v < KIDS)
				seen |= 1u << v;
		}
		CHECK(seen == (1u << KIDS) - 1);
		CHECK(asx_thr_mgr_count_group(sx.m, 100 + g) == 0);
	}
	return arg;
}

static void *stress_drive(void *arg)
{
	struct asx_thr_status st[LEADERS];
	unsigned int seen = 0;

	(void)arg;
	CHECK(asx_thr_mgr_wait(sx.m, st, LEADERS, NULL) == LEADERS);
	for (int i = 0; i < LEADERS; i++) {
		intptr_t g = (intptr_t)st[i].ret;

		CHECK(g >= 0 && g < LEADERS && !(seen & (1u << g)));
		seen |= 1u << g;
	}
	CHECK(seen == (1u << LEADERS) - 1);
	return NULL;
}

static void test_asc_groups_stress(void **state)
{
	struct asx_asc_opts ao = { .sz = sizeof(ao), .nvps = 2, .max_vps = 2 };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	pthread_t th;

	(void)state;
	memset(&sx, 0, sizeof(sx));
	assert_int_equal(asx_asc_create(&sx.asc, &asx_asc_prio, &ao), 0);
	assert_int_equal(asx_thr_mgr_create(&sx.m), 0);
	ASX_OPTS(struct asx_thr_opts, o, .asc = sx.asc, .qos = &q.qos);
	for (int g = 0; g < LEADERS; g++)
		assert_int_equal(asx_thr_mgr_spawn_n(sx.m, 1, leader, (void *)(intptr_t)g, g, &o),
				 1);
	assert_int_equal(pthread_create(&th, NULL, stress_drive, NULL), 0);
	join_or_die(th, "groups of ASC threads spawning and joining on two VPs");
	assert_threads_ok();
	assert_int_equal(LD(sx.spawned), LEADERS * ROUNDS * KIDS);
	assert_int_equal(LD(sx.ran), LEADERS * ROUNDS * KIDS);
	assert_int_equal(asx_thr_mgr_count(sx.m), 0);
	assert_int_equal(asx_thr_mgr_destroy(sx.m), 0);
	assert_int_equal(asx_asc_destroy(sx.asc), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waits_park_user_thread),
		cmocka_unit_test(test_asc_group_suspend_cancel),
		cmocka_unit_test(test_user_thread_suspends_neighbour),
		cmocka_unit_test(test_asc_groups_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
