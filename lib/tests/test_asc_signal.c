// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_asc_signal.c - ASC signals (asx_asc_signal_register, _handle,
 * asx_asc_signal): the registration rules, the calls refused off a user
 * thread, delivery in the target thread (never in the sender) at its next
 * scheduling point, a signal without a handler dropped, the cross-VP
 * preemption (ASX_ASC_SIG_PREEMPT) that frees a VP from a thread that
 * never yields, and a stress run of threads on two timesliced VPs
 * signalling each other: after the last send, every target's handler saw
 * the last count sent to it (nothing lost).  The user-thread parts run
 * under a watchdog (joinwd.h): a hang fails the program.
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
#include "joinwd.h"
#include "threadcheck.h"

static const struct asx_prio_qos prio0 = ASX_PRIO_QOS(0);
static int sig_ping, sig_pong;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A watchdog's deadline: generous, a loaded host is slow. */
#define DEADLINE_NS	(20ULL * 1000000000ULL)

/* ---------------------------------------------------------------- rules */

static void test_register_rules(void **state)
{
	char name[ASX_ASC_SIGNAL_NAME_MAX + 1];
	int ids = 0, r;

	(void)state;
	assert_int_equal(asx_asc_signal_register(NULL), -EINVAL);
	assert_int_equal(asx_asc_signal_register(""), -EINVAL);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(asx_asc_signal_register(name), -EINVAL);	/* one too long */
	assert_int_equal(asx_asc_signal_register("preempt"), -EEXIST);
	assert_int_equal(asx_asc_signal_register("ping"), -EEXIST);
	/* the ids left, each once, then ENOSPC */
	for (int i = 0; i < ASX_ASC_SIGNALS_MAX; i++) {
		snprintf(name, sizeof(name), "fill%d", i);
		r = asx_asc_signal_register(name);
		if (r == -ENOSPC)
			break;
		assert_true(r > 0 && r < ASX_ASC_SIGNALS_MAX);
		assert_true(r != sig_ping && r != sig_pong);
		ids++;
	}
	assert_int_equal(ids, ASX_ASC_SIGNALS_MAX - 3);	/* preempt, ping, pong */
	assert_int_equal(asx_asc_signal_register("one-more"), -ENOSPC);
}

static void test_off_user_thread(void **state)
{
	(void)state;
	assert_int_equal(asx_asc_signal_handle(sig_ping, NULL, NULL), -EPERM);
	assert_int_equal(asx_asc_signal(NULL, sig_ping), -EINVAL);
}

/* ---------------------------------------------------------------- delivery */

#define ROUNDS 200

static struct asx_asc_thread *target;
static int handled, in_other, bad_args, refused;
static int all_sent;

static void ping_handler(int sig, void *arg)
{
	if (sig != sig_ping || arg != &handled)
		__atomic_add_fetch(&bad_args, 1, __ATOMIC_SEQ_CST);
	if (asx_asc_thread_self() != target)
		__atomic_add_fetch(&in_other, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&handled, 1, __ATOMIC_SEQ_CST);
}

static void *receiver(void *arg)
{
	uint64_t end = mono_ns() + DEADLINE_NS;

	(void)arg;
	if (asx_asc_signal_handle(ASX_ASC_SIG_PREEMPT, ping_handler, NULL) != -EINVAL ||
	    asx_asc_signal_handle(ASX_ASC_SIGNALS_MAX, ping_handler, NULL) != -EINVAL)
		__atomic_add_fetch(&refused, 1, __ATOMIC_SEQ_CST);
	CHECK(asx_asc_signal_handle(sig_ping, ping_handler, &handled) == 0);
	while (!__atomic_load_n(&all_sent, __ATOMIC_ACQUIRE) && mono_ns() < end)
		asx_asc_thread_yield();
	return NULL;
}

static void *sender(void *arg)
{
	uint64_t end = mono_ns() + DEADLINE_NS;

	(void)arg;
	for (int k = 1; k <= ROUNDS; k++) {
		CHECK(asx_asc_signal(target, sig_ping) == 0);
		/* no handler for pong: dropped */
		CHECK(asx_asc_signal(target, sig_pong) == 0);
		while (__atomic_load_n(&handled, __ATOMIC_SEQ_CST) < k && mono_ns() < end)
			asx_asc_thread_yield();
	}
	__atomic_store_n(&all_sent, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *run_delivery(void *arg)
{
	struct asx_asc *asc;
	struct asx_asc_thread *s;

	(void)arg;
	CHECK(asx_asc_create(&asc, &asx_asc_prio, NULL) == 0);
	CHECK(asx_asc_thread_create(&target, receiver, NULL, NULL) == 0);
	CHECK(asx_asc_thread_create(&s, sender, NULL, NULL) == 0);
	CHECK(asx_asc_thread_put(asc, target, &prio0.qos) == 0);
	CHECK(asx_asc_thread_put(asc, s, &prio0.qos) == 0);
	CHECK(asx_asc_thread_join(s, NULL) == 0);
	CHECK(asx_asc_thread_join(target, NULL) == 0);
	CHECK(asx_asc_destroy(asc) == 0);
	return NULL;
}

static void test_delivery(void **state)
{
	pthread_t t;

	(void)state;
	handled = in_other = bad_args = refused = 0;
	__atomic_store_n(&all_sent, 0, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&t, NULL, run_delivery, NULL), 0);
	join_or_die(t, "delivery");
	assert_threads_ok();
	assert_int_equal(handled, ROUNDS);	/* one each: the sender waited */
	assert_int_equal(in_other, 0);
	assert_int_equal(bad_args, 0);
	assert_int_equal(refused, 0);
}

/* ---------------------------------------------------------------- cross-VP preemption */

static struct asx_asc_thread *spinner_t;
static int spinner_on, queued_ran, spinner_timed_out;

static void *spinner(void *arg)
{
	uint64_t end = mono_ns() + DEADLINE_NS;
	unsigned long n = 0;

	(void)arg;
	__atomic_store_n(&spinner_on, 1, __ATOMIC_RELEASE);
	/* never a scheduling point; the clock only now and then (libc is
	 * never preempted: most of the time we are in this file) */
	while (!__atomic_load_n(&queued_ran, __ATOMIC_ACQUIRE))
		if (!(++n & 0xfffff) && mono_ns() > end) {
			__atomic_store_n(&spinner_timed_out, 1, __ATOMIC_RELAXED);
			break;
		}
	return NULL;
}

static void *preempter(void *arg)
{
	uint64_t end = mono_ns() + DEADLINE_NS;
	struct timespec ms = { 0, 1000000 };

	(void)arg;
	while (!__atomic_load_n(&spinner_on, __ATOMIC_ACQUIRE) && mono_ns() < end)
		;
	/* asks the spinner's VP again and again: a tick may land in libc */
	while (!__atomic_load_n(&queued_ran, __ATOMIC_ACQUIRE) && mono_ns() < end) {
		CHECK(asx_asc_signal(spinner_t, ASX_ASC_SIG_PREEMPT) == 0);
		nanosleep(&ms, NULL);	/* holds our VP: no scheduling point */
	}
	return NULL;
}

static void *queued(void *arg)
{
	(void)arg;
	__atomic_store_n(&queued_ran, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *run_preempt(void *arg)
{
	ASX_OPTS(struct asx_asc_opts, o, .nvps = 2, .semantic = ASX_ASC_NONPREEMPTIVE);
	struct asx_asc_thread *p, *q;
	struct asx_asc *asc;

	(void)arg;
	CHECK(asx_asc_create(&asc, &asx_asc_prio, &o) == 0);
	CHECK(asx_asc_thread_create(&spinner_t, spinner, NULL, NULL) == 0);
	CHECK(asx_asc_thread_create(&p, preempter, NULL, NULL) == 0);
	CHECK(asx_asc_thread_create(&q, queued, NULL, NULL) == 0);
	CHECK(asx_asc_thread_put(asc, spinner_t, &prio0.qos) == 0);
	CHECK(asx_asc_thread_put(asc, p, &prio0.qos) == 0);
	CHECK(asx_asc_thread_put(asc, q, &prio0.qos) == 0);
	/* the preempter first: it signals the spinner, which must not end
	 * (be freed by its join) while a call on it may be under way */
	CHECK(asx_asc_thread_join(p, NULL) == 0);
	CHECK(asx_asc_thread_join(q, NULL) == 0);
	CHECK(asx_asc_thread_join(spinner_t, NULL) == 0);
	CHECK(asx_asc_destroy(asc) == 0);
	return NULL;
}

/*
 * Two VPs, both held by threads that never reach a scheduling point on
 * their own: the queued thread runs only if the preempter's signal makes
 * the spinner's VP preempt it.
 */
static void test_cross_vp_preempt(void **state)
{
	pthread_t t;

	(void)state;
	spinner_on = queued_ran = spinner_timed_out = 0;
	assert_int_equal(pthread_create(&t, NULL, run_preempt, NULL), 0);
	join_or_die(t, "cross-VP preemption");
	assert_threads_ok();
	assert_int_equal(spinner_timed_out, 0);
	assert_int_equal(queued_ran, 1);
}

/* ---------------------------------------------------------------- stress */

#define SN	6
#define SENDS	3000

static struct asx_asc_thread *st[SN];
static int sent[SN];		/* atomic: last count sent to each */
static int seen[SN];		/* the largest count a handler of each saw */
static int senders_done, s_bad;

static void stress_handler(int sig, void *arg)
{
	int me = (int)(intptr_t)arg, s = __atomic_load_n(&sent[me], __ATOMIC_ACQUIRE);

	if (sig != sig_ping || asx_asc_thread_self() != st[me])
		__atomic_add_fetch(&s_bad, 1, __ATOMIC_SEQ_CST);
	if (s > seen[me])
		seen[me] = s;
}

static void *stress_thread(void *arg)
{
	int me = (int)(intptr_t)arg;
	unsigned int seed = (unsigned int)me * 7919u + 1;
	uint64_t end = mono_ns() + DEADLINE_NS;

	CHECK(asx_asc_signal_handle(sig_ping, stress_handler, arg) == 0);
	for (int i = 0; i < SENDS; i++) {
		int to = (int)(rand_r(&seed) % SN);

		/* the count first, then the signal: a handler that runs
		 * after it sees at least this count */
		__atomic_add_fetch(&sent[to], 1, __ATOMIC_RELEASE);
		CHECK(asx_asc_signal(st[to], sig_ping) == 0);
		if (!(i & 7))
			asx_asc_thread_yield();
	}
	__atomic_add_fetch(&senders_done, 1, __ATOMIC_SEQ_CST);
	/* after the last send to us, our handler must see its count */
	while ((__atomic_load_n(&senders_done, __ATOMIC_SEQ_CST) < SN ||
		seen[me] != __atomic_load_n(&sent[me], __ATOMIC_ACQUIRE)) && mono_ns() < end)
		asx_asc_thread_yield();
	return NULL;
}

static void *run_stress(void *arg)
{
	ASX_OPTS(struct asx_asc_opts, o, .nvps = 2, .semantic = ASX_ASC_TIMESLICED,
		 .timeslice_ns = 500000);
	struct asx_asc *asc;

	(void)arg;
	CHECK(asx_asc_create(&asc, &asx_asc_prio, &o) == 0);
	for (int i = 0; i < SN; i++)
		CHECK(asx_asc_thread_create(&st[i], stress_thread, (void *)(intptr_t)i, NULL) == 0);
	for (int i = 0; i < SN; i++)
		CHECK(asx_asc_thread_put(asc, st[i], &prio0.qos) == 0);
	for (int i = 0; i < SN; i++)
		CHECK(asx_asc_thread_join(st[i], NULL) == 0);
	CHECK(asx_asc_destroy(asc) == 0);
	return NULL;
}

static void test_stress(void **state)
{
	pthread_t t;
	int total = 0;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, run_stress, NULL), 0);
	join_or_die(t, "signal stress");
	assert_threads_ok();
	assert_int_equal(s_bad, 0);
	for (int i = 0; i < SN; i++) {
		assert_int_equal(seen[i], sent[i]);	/* the last one was handled */
		total += sent[i];
	}
	assert_int_equal(total, SN * SENDS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_off_user_thread),
		cmocka_unit_test(test_delivery),
		cmocka_unit_test(test_cross_vp_preempt),
		cmocka_unit_test(test_stress),
		cmocka_unit_test(test_register_rules),	/* last: takes every id left */
	};

	sig_ping = asx_asc_signal_register("ping");
	sig_pong = asx_asc_signal_register("pong");
	if (sig_ping <= 0 || sig_pong <= 0 || sig_ping == sig_pong)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
