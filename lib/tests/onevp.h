/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * onevp.h - the one-VP scenario harness of test_wait.c and test_wait_io.c.
 *
 * A scenario runs on an ASC of exactly one VP (nvps = max_vps = 1) under
 * the non-preemptive PRIO policy: user thread A blocks in the call under
 * test, user thread B on the same VP must run and release it.  If the call
 * blocked the VP rather than A, B never runs: the watchdog (joinwd.h) then
 * fails the program instead of letting it hang.  On one non-preemptive VP
 * a thread runs until it blocks or yields, so "B runs after A announced it
 * is about to block" means A is parked.
 *
 * The timed form checks that a timeout keeps its meaning on a user thread:
 * A gets -ETIMEDOUT after the deadline, and the VP ran B meanwhile.
 *
 * Include after <cmocka.h>, "joinwd.h" and "threadcheck.h"; the includer
 * resets OV (memset) before each scenario.
 */
#ifndef ASX_TESTS_ONEVP_H
#define ASX_TESTS_ONEVP_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include <asx/asc.h>

#define MS 1000000ULL
#define TIMEOUT_MS 50

#define LD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define ST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

/* The progress of one scenario. */
static struct {
	int a_waiting;		/* A is about to block */
	int a_done;		/* A came back from the call */
	int b_released;		/* B did what releases A */
	unsigned long b_runs;	/* B's scheduling rounds */
} OV;

/*
 * A scenario: @b_hold (B, before A blocks; NULL: nothing, and A is spawned
 * first), @a_block (A: the blocking call and what it does after), and
 * @b_release (B, once A is parked: what lets A go).
 */
struct scenario {
	const char *what;
	void (*b_hold)(void);
	void (*a_block)(void);
	void (*b_release)(void);
};

static const struct scenario *sc;

static inline struct timespec in_ms(uint64_t ms)
{
	uint64_t t = asx_now_ns() + ms * MS;

	return (struct timespec){ .tv_sec = (time_t)(t / 1000000000ULL),
				  .tv_nsec = (long)(t % 1000000000ULL) };
}

static void *a_thread(void *arg)
{
	(void)arg;
	ST(OV.a_waiting, 1);
	sc->a_block();
	CHECK(LD(OV.b_released));
	ST(OV.a_done, 1);
	return NULL;
}

/* B: wait (yielding, so A may run) until A announced it blocks, then a few
 * more rounds, A still inside the call; then release it. */
static void *b_thread(void *arg)
{
	(void)arg;
	if (sc->b_hold)
		sc->b_hold();
	while (!LD(OV.a_waiting)) {
		OV.b_runs++;
		asx_asc_thread_yield();
	}
	for (int i = 0; i < 3; i++)
		asx_asc_thread_yield();
	CHECK(!LD(OV.a_done));
	ST(OV.b_released, 1);
	sc->b_release();
	return NULL;
}

static void *onevp_drive(void *arg)
{
	void *(**fns)(void *) = arg;
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t1, *t2;
	struct asx_asc *a;

	if (asx_asc_create(&a, &asx_asc_prio, &o))
		return (void *)1;
	if (asx_asc_thread_spawn(a, &q.qos, fns[0], NULL, NULL, &t1) ||
	    asx_asc_thread_spawn(a, &q.qos, fns[1], NULL, NULL, &t2))
		return (void *)2;
	asx_asc_thread_join(t1, NULL);
	asx_asc_thread_join(t2, NULL);
	asx_asc_destroy(a);
	return NULL;
}

/* Spawn @first then @second on a one-VP ASC; fail (exit) if they hang. */
static inline void run_1vp(void *(*first)(void *), void *(*second)(void *), const char *what)
{
	void *(*fns[2])(void *) = { first, second };
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, onevp_drive, fns), 0);
	join_or_die(th, what);
	assert_threads_ok();
	assert_true(LD(OV.a_done));
}

static inline void run_scenario(const struct scenario *s)
{
	sc = s;
	if (s->b_hold)
		run_1vp(b_thread, a_thread, s->what);
	else
		run_1vp(a_thread, b_thread, s->what);
}

/* B, for the timed scenarios: run rounds until A is back. */
static void *b_spin_until_a_done(void *arg)
{
	(void)arg;
	while (!LD(OV.a_done)) {
		__atomic_add_fetch(&OV.b_runs, 1, __ATOMIC_SEQ_CST);
		asx_asc_thread_yield();
	}
	return NULL;
}

static int (*timed_call)(const struct timespec *dl);

/* A: the call must time out after its deadline, the VP running B meanwhile. */
static void *a_timed(void *arg)
{
	struct timespec dl = in_ms(TIMEOUT_MS);
	unsigned long runs0 = LD(OV.b_runs);
	uint64_t t0 = asx_now_ns();

	(void)arg;
	CHECK(timed_call(&dl) == -ETIMEDOUT);
	CHECK(asx_now_ns() - t0 >= TIMEOUT_MS * MS);
	CHECK(LD(OV.b_runs) > runs0);
	ST(OV.a_done, 1);
	return NULL;
}

static inline void run_timed(int (*call)(const struct timespec *dl), const char *what)
{
	timed_call = call;
	run_1vp(a_timed, b_spin_until_a_done, what);
}

#endif /* ASX_TESTS_ONEVP_H */
