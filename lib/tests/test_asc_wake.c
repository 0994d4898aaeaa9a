// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_asc_wake.c - waking a user thread of a one-VP ASC from a plain
 * pthread, many thousand times: test_asc's test_sem_from_pthread in a loop.
 *
 * A user thread waits; its VP, with nothing else to run, goes idle.  A
 * plain pthread wakes it (the external wake path: the thread goes to the
 * ASC's inbox and an idle VP is kicked) and then sleeps, as a plain
 * pthread, on a semaphore until the user thread answers.  The wake races
 * the VP on its way to sleep: a lost kick leaves the VP asleep with the
 * thread in the inbox, and the rounds stop.
 *
 *   test_sem_handoff   the thread waits on an ASC semaphore (sync.c); one
 *                      round in 16 it first times out on a short timed
 *                      wait (the sentinel's wake) before the post.
 *   test_word_handoff  the thread parks on a word (asx__word_wait(), under
 *                      libasx's mutex, condition, semaphore and queue),
 *                      the pthread changes it and calls asx__word_wake().
 *   test_episodes      the whole of test_sem_from_pthread each round: a
 *                      new ASC and thread, a wait, the post, join, destroy.
 *   test_biased_lock   the lock of a one-VP ASC biased to its VP
 *                      (sched.c) while two threads yield there on the
 *                      locked path, revoked over and over: a thread on
 *                      another ASC's VP wakes a third thread of it (its
 *                      run queue from outside, under the lock), a plain
 *                      pthread a fourth (the inbox).  Every post is taken,
 *                      every thread joins (a queue broken by a revoker
 *                      that did not wait loses threads), and the bias was
 *                      both taken and revoked.
 *
 * Before each wake the pthread does nothing, a sched_yield() or a random
 * spin of up to 10 us; in half the rounds it spins for the answer rather
 * than sleeping on it, so that the next wake follows the answer by the
 * jitter alone and lands in the VP's way to sleep.  For the second half of
 * each run a CPU hog competes with the VP, so that it is preempted at
 * random points of that way.
 *
 * Invariants: every round is answered, in order (the answer carries the
 * round number); nothing is left on the semaphores.  A watchdog fails the
 * run with the ASC's state when no round completes for STALL_S seconds,
 * instead of hanging.  STRESS_S=<seconds> sets each test's duration
 * (default 2).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <asx/asc.h>
#include "asc/sched_impl.h"
#include "asc/wait.h"

#define MS 1000000ULL
#define US 1000ULL

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SAN_SLOW 4
#else
#define SAN_SLOW 1
#endif
#define STALL_S (10 * SAN_SLOW)

enum kind { K_SEM, K_WORD, K_EPISODE };

static struct asx_asc_sem go, back;
static uint32_t word;			/* K_WORD: the round the pthread released */
static unsigned long answer;		/* atomic: the last round the thread saw */
static unsigned long rounds_done;	/* atomic: the watchdog's progress mark */
static unsigned long timeouts;		/* atomic: timed waits that expired */
static int quit, stop_hog, stop_wd;
static struct asx_asc *home;		/* atomic: for the watchdog's dump */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* K_SEM: the thread times out first in round r when r % 16 == 7 */
static bool timed_round(unsigned long r)
{
	return r % 16 == 7;
}

static struct timespec *in_us(struct timespec *ts, long us)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += us * (long)US;
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
	return ts;
}

static void answer_round(unsigned long r)
{
	__atomic_store_n(&answer, r, __ATOMIC_RELAXED);
	asx_asc_sem_post(&back);	/* wakes a plain pthread */
}

static void *sem_thread(void *arg)
{
	(void)arg;
	for (unsigned long r = 1;; r++) {
		struct timespec ts;
		int e = -ETIMEDOUT;

		/* the pthread posts after this expired (or, loaded, before: then it is this round's) */
		if (timed_round(r))
			e = asx_asc_sem_timedwait(&go, in_us(&ts, 200));
		if (e == -ETIMEDOUT) {
			if (timed_round(r))
				__atomic_add_fetch(&timeouts, 1, __ATOMIC_RELAXED);
			asx_asc_sem_wait(&go);
		} else if (e) {
			return NULL;
		}
		if (__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			return (void *)1;
		answer_round(r);
	}
}

static void *word_thread(void *arg)
{
	(void)arg;
	for (uint32_t r = 1;; r++) {
		/* parks while the word still holds the previous round */
		while (__atomic_load_n(&word, __ATOMIC_ACQUIRE) == r - 1)
			asx__word_wait(&word, r - 1, NULL);
		if (__atomic_load_n(&quit, __ATOMIC_ACQUIRE))
			return (void *)1;
		answer_round(r);
	}
}

/* the single episode's thread: test_sem_from_pthread's, with a shorter timeout */
static void *episode_thread(void *arg)
{
	struct timespec ts;
	int e = asx_asc_sem_timedwait(&go, in_us(&ts, (long)(uintptr_t)arg));

	if (e == -ETIMEDOUT) {
		__atomic_add_fetch(&timeouts, 1, __ATOMIC_RELAXED);
		asx_asc_sem_wait(&go);
	} else if (e) {
		return NULL;
	}
	return (void *)1;
}

static void *hog(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop_hog, __ATOMIC_RELAXED))
		;
	return NULL;
}

static void *watchdog(void *arg)
{
	unsigned long last = ULONG_MAX;
	uint64_t since = now_ns();

	(void)arg;
	while (!__atomic_load_n(&stop_wd, __ATOMIC_ACQUIRE)) {
		unsigned long d = __atomic_load_n(&rounds_done, __ATOMIC_RELAXED);
		struct timespec nap = { 0, 50 * (long)MS };

		if (d != last) {
			last = d;
			since = now_ns();
		} else if (now_ns() - since > STALL_S * 1000000000ULL) {
			struct asx_asc *a = __atomic_load_n(&home, __ATOMIC_ACQUIRE);

			fprintf(stderr, "watchdog: no round completed in %d s after %lu rounds "
				"(a lost wake-up)\n", STALL_S, d);
			if (a)
				asx__asc_dump(a, stderr);
			_exit(1);
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

static struct asx_asc *one_vp_asc(void)
{
	struct asx_asc_opts at = { .sz = sizeof(at), .nvps = 1, .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_asc *a = NULL;

	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), 0);
	return a;
}

/* What the pthread does before a wake: nothing, yield, or spin up to 10 us. */
static void jitter(uint64_t *rng)
{
	uint64_t until;

	switch (xorshift(rng) % 4) {
	case 0:
		break;
	case 1:
		sched_yield();
		break;
	default:
		until = now_ns() + xorshift(rng) % (10 * US);
		while (now_ns() < until)
			;
		break;
	}
}

static void run(enum kind k)
{
	static const char *const names[] = { "sem", "word", "episodes" };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	const char *e = getenv("STRESS_S");
	double secs = e && *e ? atof(e) : 2.0;
	uint64_t rng = now_ns() | 1, t0 = now_ns(), end;
	struct asx_asc_thread *t = NULL;
	unsigned long r;
	pthread_t wd, h;
	bool hogging = false, acts = false;
	void *res = NULL;

	if (secs <= 0)
		secs = 2.0;
	end = t0 + (uint64_t)(secs * 1e9);
	asx_asc_sem_init(&go, 0);
	asx_asc_sem_init(&back, 0);
	word = 0;
	__atomic_store_n(&answer, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rounds_done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&timeouts, 0, __ATOMIC_RELAXED);
	quit = stop_hog = stop_wd = 0;
	if (k != K_EPISODE) {
		__atomic_store_n(&home, one_vp_asc(), __ATOMIC_RELEASE);
		assert_int_equal(asx_asc_thread_spawn(home, &q.qos,
						      k == K_SEM ? sem_thread : word_thread,
						      NULL, NULL, &t), 0);
	}
	if (home) {
		struct asx_asc_stats st = { 0 };

		assert_int_equal(asx_asc_stats(home, &st), 0);
		acts = st.activations;	/* under asx.ko: spares parked in the kernel */
	}
	assert_int_equal(pthread_create(&wd, NULL, watchdog, NULL), 0);
	for (r = 1; now_ns() < end; r++) {
		if (!hogging && now_ns() > t0 + (end - t0) / 2) {
			assert_int_equal(pthread_create(&h, NULL, hog, NULL), 0);
			hogging = true;
		}
		if (k == K_EPISODE) {
			/* the thread's timeout: in the first rounds of 4, expired before the post */
			uintptr_t us = r % 4 ? 100 : 50000;

			__atomic_store_n(&home, one_vp_asc(), __ATOMIC_RELEASE);
			assert_int_equal(asx_asc_thread_spawn(home, &q.qos, episode_thread,
							      (void *)us, NULL, &t), 0);
			if (us < 1000) {
				struct timespec nap = { 0, 500 * (long)US };

				nanosleep(&nap, NULL);
			}
			jitter(&rng);
			asx_asc_sem_post(&go);	/* main is a plain pthread */
			assert_int_equal(asx_asc_thread_join(t, &res), 0);
			assert_ptr_equal(res, (void *)1);
			assert_int_equal(asx_asc_destroy(home), 0);
			__atomic_store_n(&rounds_done, r, __ATOMIC_RELAXED);
			continue;
		}
		jitter(&rng);
		if (k == K_SEM) {
			if (timed_round(r)) {
				/* let the thread's timed wait expire first */
				struct timespec nap = { 0, 1 * (long)MS };

				nanosleep(&nap, NULL);
			}
			asx_asc_sem_post(&go);
		} else {
			__atomic_store_n(&word, (uint32_t)r, __ATOMIC_RELEASE);
			asx__word_wake(&word, 1);
		}
		if (xorshift(&rng) & 1) {
			/*
			 * Spin for the answer (up to 200 us) rather than sleep:
			 * the next wake then follows it by the jitter alone and
			 * lands in the VP's way to sleep, not after it.
			 */
			uint64_t until = now_ns() + 200 * US;

			while (__atomic_load_n(&answer, __ATOMIC_ACQUIRE) != r && now_ns() < until)
				;
		}
		asx_asc_sem_wait(&back);
		/* in order, none lost or repeated */
		assert_int_equal(__atomic_load_n(&answer, __ATOMIC_RELAXED), r);
		__atomic_store_n(&rounds_done, r, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&stop_hog, 1, __ATOMIC_RELAXED);
	if (hogging)
		pthread_join(h, NULL);
	if (k != K_EPISODE) {
		/* the last hand-off: the thread sees quit and returns */
		__atomic_store_n(&quit, 1, __ATOMIC_RELEASE);
		if (k == K_SEM) {
			asx_asc_sem_post(&go);
		} else {
			__atomic_store_n(&word, (uint32_t)r, __ATOMIC_RELEASE);
			asx__word_wake(&word, 1);
		}
		assert_int_equal(asx_asc_thread_join(t, &res), 0);
		assert_ptr_equal(res, (void *)1);
		assert_int_equal(asx_asc_destroy(home), 0);
	}
	__atomic_store_n(&stop_wd, 1, __ATOMIC_RELEASE);
	pthread_join(wd, NULL);
	__atomic_store_n(&home, NULL, __ATOMIC_RELEASE);
	fprintf(stderr, "wake/%s: %lu rounds (%lu timed out first) in %.1f s%s\n", names[k],
		r - 1, __atomic_load_n(&timeouts, __ATOMIC_RELAXED), (double)(now_ns() - t0) / 1e9,
		acts ? ", activations" : "");
	assert_true(r - 1 >= 20);	/* a run that did nothing proves nothing */
	assert_int_equal(asx_asc_sem_trywait(&go), -EAGAIN);	/* nothing left over */
	assert_int_equal(asx_asc_sem_trywait(&back), -EAGAIN);
}

static void test_sem_handoff(void **state)
{
	(void)state;
	run(K_SEM);
}

static void test_word_handoff(void **state)
{
	(void)state;
	run(K_WORD);
}

static void test_episodes(void **state)
{
	(void)state;
	run(K_EPISODE);
}

/* ---------------------------------------------------------------- the biased lock */

struct bias_run {
	struct asx_asc_sem side_sem, ext_sem;
	unsigned long posts;		/* per semaphore */
	unsigned long got_side, got_ext;	/* the waiters' counts */
	unsigned long yields;		/* the yielders' (plain: one VP) */
	int waiters_left;		/* atomic */
};

static void *bias_yielder(void *arg)
{
	struct bias_run *b = arg;

	while (__atomic_load_n(&b->waiters_left, __ATOMIC_ACQUIRE)) {
		b->yields++;
		asx_asc_thread_yield();
	}
	return (void *)1;
}

/* one waiter's semaphore and count */
struct bias_waiter {
	struct bias_run *b;
	struct asx_asc_sem *sem;
	unsigned long *got;
};

static void *bias_waiter(void *arg)
{
	struct bias_waiter *w = arg;

	for (unsigned long i = 0; i < w->b->posts; i++) {
		asx_asc_sem_wait(w->sem);
		(*w->got)++;
		__atomic_add_fetch(&rounds_done, 1, __ATOMIC_RELAXED);
	}
	__atomic_sub_fetch(&w->b->waiters_left, 1, __ATOMIC_RELEASE);
	return (void *)1;
}

/* a random spin of up to @max_us, then the post */
static void bias_post(struct asx_asc_sem *s, uint64_t *rng, unsigned int max_us)
{
	uint64_t until = now_ns() + xorshift(rng) % (max_us * US);

	while (now_ns() < until)
		;
	asx_asc_sem_post(s);
}

/* on the other ASC's VP: its wakes take the biased lock from outside */
static void *bias_side_poster(void *arg)
{
	struct bias_run *b = arg;
	uint64_t rng = 0x2545f4914f6cdd1dULL;

	for (unsigned long i = 0; i < b->posts; i++)
		bias_post(&b->side_sem, &rng, 50);
	return (void *)1;
}

static void *bias_ext_poster(void *arg)
{
	struct bias_run *b = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;

	for (unsigned long i = 0; i < b->posts; i++)
		bias_post(&b->ext_sem, &rng, 50);
	return NULL;
}

static void test_biased_lock(void **state)
{
	struct bias_run b = { .posts = 3000 / SAN_SLOW, .waiters_left = 2 };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1 };
	struct asx_asc *a = NULL, *side = NULL;
	struct bias_waiter ws = { &b, &b.side_sem, &b.got_side }, we = { &b, &b.ext_sem, &b.got_ext };
	struct asx_asc_thread *t[5];
	pthread_t ext, wd;
	void *r;

	(void)state;
	asx_asc_sem_init(&b.side_sem, 0);
	asx_asc_sem_init(&b.ext_sem, 0);
	/* two ASCs with a VP each: the process is on the locked path */
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &o), 0);
	assert_int_equal(asx_asc_create(&side, &asx_asc_prio, &o), 0);
	assert_false(asx_asc_single_vp_mode());
	__atomic_store_n(&home, a, __ATOMIC_RELEASE);
	__atomic_store_n(&stop_wd, 0, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&wd, NULL, watchdog, NULL), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, bias_yielder, &b, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, bias_yielder, &b, NULL, &t[1]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, bias_waiter, &ws, NULL, &t[2]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, bias_waiter, &we, NULL, &t[3]), 0);
	assert_int_equal(asx_asc_thread_spawn(side, &q.qos, bias_side_poster, &b, NULL, &t[4]), 0);
	assert_int_equal(pthread_create(&ext, NULL, bias_ext_poster, &b), 0);
	pthread_join(ext, NULL);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(asx_asc_thread_join(t[i], &r), 0);
		assert_ptr_equal(r, (void *)1);
	}
	__atomic_store_n(&stop_wd, 1, __ATOMIC_RELEASE);
	pthread_join(wd, NULL);
	__atomic_store_n(&home, NULL, __ATOMIC_RELEASE);
	fprintf(stderr, "biased lock: %lu yields, %lu + %lu posts taken, %llu revocations%s\n",
		b.yields, b.got_side, b.got_ext, (unsigned long long)a->bias_revokes,
		a->bias_vp ? ", biased at the end" : "");
	assert_int_equal(b.got_side, b.posts);
	assert_int_equal(b.got_ext, b.posts);
	assert_int_equal(asx_asc_sem_trywait(&b.side_sem), -EAGAIN);
	assert_int_equal(asx_asc_sem_trywait(&b.ext_sem), -EAGAIN);
	/* the bias was taken, and taken away by the side VP's wakes; without
	 * membarrier() (qemu-user, old kernels) the lock is never biased */
	if (asx__membarrier_ready())
		assert_true(a->bias_revokes >= 1);
	else
		fprintf(stderr, "biased lock: no membarrier(), never biased\n");
	asx_asc_destroy(side);
	asx_asc_destroy(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sem_handoff),
		cmocka_unit_test(test_word_handoff),
		cmocka_unit_test(test_episodes),
		cmocka_unit_test(test_biased_lock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
