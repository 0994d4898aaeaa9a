// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_reactor_stress.c - timer churn: 40,000 timers scheduled, cancelled
 * and reset from the dispatching thread (inside callbacks) and from two
 * other threads, one-shot and periodic, on eight handlers whose lifetimes
 * end and start again all along.
 *
 * Every timer's arg is a record whose ownership is tracked: it is the
 * reactor's while the timer is live and goes to exactly one party when
 * the timer ends (the cancel that returned 0, the one-shot's callback, a
 * periodic callback that returned -1 or cancelled itself).  Detected: an
 * arg handed out twice, a callback run with an arg already handed out, an
 * arg handed out while its callback runs (the canceller frees it under the
 * callback), a cancel that writes *argp and says -ENOENT, a pending
 * deadline inside a periodic callback that is not after its `now`, two
 * callbacks of one timer at once, and an arg never handed out at all.
 *
 * ASX_STRESS_SEED sets the seed (printed); the thread interleaving is not
 * reproducible, the choices each thread makes are.  A watchdog fails the
 * run (abort with the progress counters) instead of letting it hang.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <asx/reactor.h>

#define NTIMERS		40000
#define NCHURN		2
#define NHANDLERS	8
#define WINDOW		1024		/* churn aims at the most recent timers */
#define MAX_LIVE	3000		/* churners pause above this many live timers */
#define US		1000ULL
#define WATCHDOG_S	300		/* a few seconds expected, even under TSan */

enum { ARG_UNUSED, ARG_LIVE, ARG_GONE };
enum { BY_CANCEL, BY_ONESHOT, BY_NEGATIVE, BY_SELF, BY_N };

struct targ {
	int state;		/* atomic: ARG_* */
	int in_cb;		/* atomic: its callback runs */
	int runs;		/* dispatcher only */
	int lifespan;		/* a periodic callback returns -1 at this many runs */
	int idx;
};

struct rng {
	uint64_t s;
};

static struct asx_reactor *r;
static struct targ *args;
static int64_t *ids;		/* atomic: the timer id of args[i], 0 until known */
static int claimed, scheduled, gone, callbacks, stop_dispatch, finished;	/* atomic */
static int by[BY_N];		/* atomic */
static int errors;		/* atomic */
static char first_error[4][160];	/* the first few */
static int running = -1;	/* atomic: the timer whose callback runs */
static int raced[2];		/* atomic: cancels begun during the timer's callback: 0, -ENOENT */
static struct rng disp_rng;	/* the dispatching thread's */
static struct asx_event_handler handlers[NHANDLERS];
static int closes;		/* atomic */

static uint32_t rnd(struct rng *g)
{
	/* xorshift64* */
	g->s ^= g->s >> 12;
	g->s ^= g->s << 25;
	g->s ^= g->s >> 27;
	return (uint32_t)((g->s * 2685821657736338717ULL) >> 32);
}

static int ld(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static int inc(int *p)
{
	return __atomic_fetch_add(p, 1, __ATOMIC_ACQ_REL);
}

static void __attribute__((format(printf, 1, 2))) bad(const char *fmt, ...)
{
	va_list ap;

	int n = inc(&errors);

	if (n >= 4)
		return;
	va_start(ap, fmt);
	vsnprintf(first_error[n], sizeof(first_error[n]), fmt, ap);
	va_end(ap);
}

/* @a's timer ended and its arg is ours now: must happen once. */
static void consume(struct targ *a, int how)
{
	int live = ARG_LIVE;

	if (!__atomic_compare_exchange_n(&a->state, &live, ARG_GONE, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		bad("arg %d handed out twice (way %d, state was %d)", a->idx, how, live);
		return;
	}
	inc(&by[how]);
	inc(&gone);
}

static int64_t id_of(int i)
{
	return __atomic_load_n(&ids[i], __ATOMIC_ACQUIRE);
}

static bool sched_one(struct rng *g)
{
	int i = inc(&claimed);
	struct targ *a;
	uint64_t delay, interval;
	int64_t id;

	if (i >= NTIMERS)
		return false;
	a = &args[i];
	a->idx = i;
	a->lifespan = 1 + (int)(rnd(g) % 6);
	st(&a->state, ARG_LIVE);
	delay = rnd(g) % (3000 * US);
	interval = rnd(g) % 3 ? 0 : 500 * US + rnd(g) % (2500 * US);
	id = asx_reactor_schedule_timer(r, &handlers[rnd(g) % NHANDLERS], a, delay, interval);
	if (id <= 0) {
		bad("schedule: %lld", (long long)id);
		st(&a->state, ARG_GONE);
		inc(&gone);
	} else {
		__atomic_store_n(&ids[i], id, __ATOMIC_RELEASE);
	}
	inc(&scheduled);
	return true;
}

/* A recent timer's index (skipping @self), or -1. */
static int pick(struct rng *g, int self)
{
	int c = ld(&claimed), w, j;

	if (c > NTIMERS)
		c = NTIMERS;
	if (c == 0)
		return -1;
	w = c < WINDOW ? c : WINDOW;
	j = c - 1 - (int)(rnd(g) % (uint32_t)w);
	return j == self || !id_of(j) ? -1 : j;
}

static void cancel_idx(int j)
{
	void *got = (void *)1;
	int was = ld(&args[j].in_cb);
	int rc = asx_reactor_cancel_timer(r, id_of(j), &got);

	if (was && (rc == 0 || rc == -ENOENT))
		inc(&raced[rc != 0]);
	if (rc == 0) {
		if (got != &args[j])
			bad("cancel of %d handed out %p", j, got);
		else if (ld(&args[j].in_cb))
			bad("cancel handed out arg %d while its callback runs", j);
		else
			consume(&args[j], BY_CANCEL);
	} else if (rc != -ENOENT) {
		bad("cancel of %d: %d", j, rc);
	} else if (got != (void *)1) {
		bad("cancel of %d said -ENOENT and wrote *argp", j);
	}
}

/* One random operation on someone else's timer. */
static void churn_other(struct rng *g, int self)
{
	uint32_t x = rnd(g);
	int j = pick(g, self), rc;
	struct timespec ts;

	/* Often the timer whose callback runs now (not from inside it). */
	if (self == -1 && x % 3 == 0 && ld(&running) >= 0)
		j = ld(&running);
	/* a callback can run before its scheduler has published the id */
	if (j < 0 || !id_of(j))
		return;
	switch (x % 4) {
	case 0:
	case 1:
		cancel_idx(j);
		break;
	case 2:
		rc = asx_reactor_reset_timer_interval(r, id_of(j), x & 16 ? 0 :
						      500 * US + rnd(g) % (2500 * US));
		if (rc && rc != -ENOENT)
			bad("reset of %d: %d", j, rc);
		break;
	default:
		rc = asx_reactor_timer_deadline(r, id_of(j), &ts);
		if (rc && rc != -ENOENT)
			bad("deadline of %d: %d", j, rc);
	}
}

static void spin_us(uint64_t us)
{
	uint64_t end = asx_now_ns() + us * US;

	while (asx_now_ns() < end)
		;
}

static int stress_timeout(struct asx_event_handler *eh, const struct timespec *now, void *p)
{
	struct targ *a = p;
	struct timespec ts;
	bool final, mine;
	int how = BY_ONESHOT, rc = 0, drc;
	int64_t id;
	uint32_t x;

	inc(&callbacks);
	if (ld(&a->state) != ARG_LIVE)
		bad("callback of timer %d whose arg was handed out", a->idx);
	if (__atomic_exchange_n(&a->in_cb, 1, __ATOMIC_ACQ_REL))
		bad("two callbacks of timer %d at once", a->idx);
	st(&running, a->idx);
	/* Scheduled by another thread that has not stored the id yet. */
	while (!(id = id_of(a->idx)))
		sched_yield();
	drc = asx_reactor_timer_deadline(r, id, &ts);
	final = drc == -ENOENT;		/* a one-shot's run: the arg is ours */
	if (drc == 0 && asx_timespec_ns(&ts) <= asx_timespec_ns(now))
		bad("timer %d: pending deadline not after now in its callback", a->idx);
	else if (drc && drc != -ENOENT)
		bad("deadline of %d in its callback: %d", a->idx, drc);
	mine = final;
	a->runs++;
	x = rnd(&disp_rng);
	if (final) {
		void *got = (void *)1;

		if (x % 8 == 0 && (asx_reactor_cancel_timer(r, id, &got) != -ENOENT ||
				   got != (void *)1))
			bad("a one-shot's own cancel in its callback did not say -ENOENT");
	} else if (x % 16 == 0) {
		void *got = NULL;

		if (asx_reactor_cancel_timer(r, id, &got) != 0 || got != a) {
			bad("timer %d: own cancel in its callback failed", a->idx);
		} else {
			mine = true;
			how = BY_SELF;
		}
	} else if (x % 16 == 1) {
		if (asx_reactor_reset_timer_interval(r, id, 0))
			bad("timer %d: own reset to 0 failed", a->idx);
	} else if (a->runs >= a->lifespan) {
		rc = -1;
		mine = true;
		how = BY_NEGATIVE;
	}
	/* The dispatching thread churns too. */
	if (x % 3 == 0)
		(void)sched_one(&disp_rng);
	if (x % 5 == 0)
		churn_other(&disp_rng, a->idx);
	if (x % 8 == 7)
		spin_us(30);	/* a wider window for the other threads' cancels */
	if (ld(&a->state) != ARG_LIVE)
		bad("arg %d handed out while its callback ran", a->idx);
	st(&running, -1);
	st(&a->in_cb, 0);
	if (mine)
		consume(a, how);
	return rc;
}

static int stress_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	if (fd != -1 || mask != ASX_EV_TIMER)
		bad("handle_close(%d, %#x)", fd, mask);
	inc(&closes);
	return 0;
}

static const struct asx_event_handler_ops stress_ops = {
	.handle_timeout = stress_timeout,
	.handle_close = stress_close,
};

static void *dispatcher(void *unused)
{
	struct timespec ts;

	while (!ld(&stop_dispatch)) {
		int rc = asx_reactor_run_once(r, asx_deadline(&ts, 20 * 1000 * US));

		if (rc < 0)
			bad("run_once: %d", rc);
	}
	return NULL;
}

static void *churner(void *p)
{
	struct rng g = { *(uint64_t *)p };

	while (ld(&claimed) < NTIMERS && !ld(&errors)) {
		uint32_t x = rnd(&g);

		if (ld(&scheduled) - ld(&gone) > MAX_LIVE) {
			clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 200 * US }, NULL);
			continue;
		}
		if (x % 8 < 3)
			(void)sched_one(&g);
		else
			churn_other(&g, -1);
	}
	return NULL;
}

static void *watchdog(void *unused)
{
	uint64_t end = asx_now_ns() + WATCHDOG_S * 1000000000ULL;

	while (!ld(&finished)) {
		if (asx_now_ns() > end) {
			fprintf(stderr, "watchdog: %d s passed: claimed %d scheduled %d gone %d "
				"callbacks %d timers %u errors %d (%s)\n", WATCHDOG_S, ld(&claimed),
				ld(&scheduled), ld(&gone), ld(&callbacks), asx_reactor_timer_count(r),
				ld(&errors), first_error[0]);
			abort();
		}
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 100 * 1000 * US }, NULL);
	}
	return NULL;
}

static void test_timer_churn(void **state)
{
	const char *env = getenv("ASX_STRESS_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 27;
	uint64_t seeds[NCHURN], t0 = asx_now_ns();
	pthread_t disp, churn[NCHURN], wd;

	print_message("    seed %llu (ASX_STRESS_SEED)\n", (unsigned long long)seed);
	disp_rng.s = seed * 0x9e3779b97f4a7c15ULL + 1;
	args = calloc(NTIMERS, sizeof(*args));
	ids = calloc(NTIMERS, sizeof(*ids));
	assert_non_null(args);
	assert_non_null(ids);
	assert_int_equal(asx_reactor_create(&r), 0);
	for (int i = 0; i < NHANDLERS; i++)
		asx_event_handler_init(&handlers[i], &stress_ops);
	assert_int_equal(pthread_create(&wd, NULL, watchdog, NULL), 0);
	assert_int_equal(pthread_create(&disp, NULL, dispatcher, NULL), 0);
	for (int i = 0; i < NCHURN; i++) {
		seeds[i] = (seed + (uint64_t)i + 1) * 0xbf58476d1ce4e5b9ULL | 1;
		assert_int_equal(pthread_create(&churn[i], NULL, churner, &seeds[i]), 0);
	}
	for (int i = 0; i < NCHURN; i++)
		assert_int_equal(pthread_join(churn[i], NULL), 0);
	while (ld(&scheduled) < NTIMERS && !ld(&errors))	/* the dispatcher's last ones */
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 1000 * US }, NULL);
	/* Sweep: cancel everything from here while the loop runs on. */
	for (int i = 0; i < NTIMERS; i++)
		if (id_of(i))
			cancel_idx(i);
	/* What is left are one-shots and periodic timers near their end. */
	while (ld(&gone) < NTIMERS && !ld(&errors))
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 1000 * US }, NULL);
	st(&stop_dispatch, 1);
	assert_int_equal(pthread_join(disp, NULL), 0);
	st(&finished, 1);
	assert_int_equal(pthread_join(wd, NULL), 0);

	print_message("    %d timers, %d callbacks in %.2f s; args handed out by cancel %d, "
		      "one-shot callback %d, negative return %d, own cancel %d; %d lifetimes; "
		      "cancels from another thread begun during the callback: %d got arg, "
		      "%d -ENOENT\n",
		      NTIMERS, ld(&callbacks), (double)(asx_now_ns() - t0) / 1e9, by[BY_CANCEL],
		      by[BY_ONESHOT], by[BY_NEGATIVE], by[BY_SELF], ld(&closes), raced[0],
		      raced[1]);
	for (int i = 0; i < errors && i < 4; i++)
		print_error("error %d of %d: %s\n", i + 1, errors, first_error[i]);
	assert_int_equal(errors, 0);
	assert_int_equal(by[BY_CANCEL] + by[BY_ONESHOT] + by[BY_NEGATIVE] + by[BY_SELF], NTIMERS);
	for (int i = 0; i < NTIMERS; i++)
		assert_int_equal(args[i].state, ARG_GONE);
	assert_int_equal(asx_reactor_timer_count(r), 0);
	/* Every lifetime ended: only the creator's reference is left. */
	for (int i = 0; i < NHANDLERS; i++)
		assert_int_equal(asx_event_handler_refs(&handlers[i]), 1);
	assert_true(closes >= NHANDLERS);
	/* The ways that need a race all happened. */
	assert_true(by[BY_CANCEL] > 0 && by[BY_ONESHOT] > 0 && by[BY_NEGATIVE] > 0 &&
		    by[BY_SELF] > 0);
	assert_int_equal(asx_reactor_destroy(r), 0);
	free(args);
	free(ids);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timer_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
