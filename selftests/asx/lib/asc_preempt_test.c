// SPDX-License-Identifier: GPL-2.0
/*
 * asc_preempt_test.c - the ASC on asx.ko's PREEMPTED events
 * (asx_asc_opts.act_preempted, Documentation/sa.rst): the process is
 * pinned on CPU 0 beside a CPU hog, and an ASC of one VP runs a thread
 * that spins, never yielding, until a second, queued thread has run.
 *
 * With PREEMPTED handled, the hog's preemption of the VP lets a spare run
 * the queued thread, and the spinner ends. Without it (the second case,
 * the same program with the option off) the queued thread waits for the
 * spinner's VP for as long as the spinner spins: the case checks that it
 * did not run in the spinner's second, which is what the first case would
 * see without the kernel's events or the ASC's use of them.
 *
 * A third case runs compute threads that yield now and then beside the hog,
 * with PREEMPTED handled: each does its whole work exactly once.
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/sa.h>

#include "asx_util.h"
#include "asx_harness.h"

#define NEED_PREEMPT() do {							\
	if (!asx_has_features(ASX_FEAT_SA_PREEMPT))							\
		SKIP(return, "asx.ko without ASX_FEAT_SA_PREEMPT");		\
} while (0)

static int hog_stop;

static void *hog_main(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&hog_stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* Pins the process (and the VPs it makes from now on) and a hog on CPU 0. */
static int pin_with_hog(pthread_t *hog)
{
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		return -1;
	__atomic_store_n(&hog_stop, 0, __ATOMIC_RELAXED);
	return pthread_create(hog, NULL, hog_main, NULL) ? -1 : 0;
}

static void hog_end(pthread_t hog)
{
	__atomic_store_n(&hog_stop, 1, __ATOMIC_RELEASE);
	pthread_join(hog, NULL);
}

static struct asx_asc *make_asc(unsigned int nvps, bool preempted)
{
	struct asx_asc_opts at = { .sz = sizeof(at), .nvps = nvps,
				   .activations = ASX_ASC_ACT_ON,
				   .act_preempted = preempted };

	return asx_prio_asc(&at);
}

#define spawn asx_spawn_prio0

/* ---------------------------------------------------------------- spinner */

struct spin {
	uint64_t limit_ns;	/* the spinner gives up after this */
	int other_ran;		/* set by the queued thread */
	int spinner_saw;	/* the spinner ended because it ran */
};

static void *spinner(void *arg)
{
	struct spin *s = arg;
	uint64_t end = asx_mono_ns() + s->limit_ns;

	/* never a scheduling point: only another VP can run the other */
	while (!__atomic_load_n(&s->other_ran, __ATOMIC_ACQUIRE))
		if (asx_mono_ns() > end)
			return NULL;
	s->spinner_saw = 1;
	return NULL;
}

static void *other(void *arg)
{
	struct spin *s = arg;

	__atomic_store_n(&s->other_ran, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* One spinner and one queued thread on a one-VP ASC beside the hog. */
static int spin_case(struct __test_metadata *_metadata, bool preempted, uint64_t limit_ns,
		     struct spin *s, struct asx_asc_stats *st)
{
	struct asx_asc_thread *t1, *t2;
	struct asx_asc *a;
	pthread_t hog;

	memset(s, 0, sizeof(*s));
	s->limit_ns = limit_ns;
	if (pin_with_hog(&hog))
		return -1;
	a = make_asc(1, preempted);
	if (!a) {
		hog_end(hog);
		return -1;
	}
	t1 = spawn(a, spinner, s);
	t2 = t1 ? spawn(a, other, s) : NULL;
	EXPECT_NE(t1, NULL);
	EXPECT_NE(t2, NULL);
	if (t1)
		EXPECT_EQ(asx_asc_thread_join(t1, NULL), 0);
	if (t2)
		EXPECT_EQ(asx_asc_thread_join(t2, NULL), 0);
	EXPECT_EQ(asx_asc_stats(a, st), 0);
	hog_end(hog);
	EXPECT_EQ(asx_asc_destroy(a), 0);
	return 0;
}

TEST_TIMEOUT(preempted_vp_lets_the_queued_thread_run, 120)
{
	struct asx_asc_stats st;
	struct spin s;

	NEED_PREEMPT();
	/*
	 * A generous limit: a preemption comes within a few time slices. The
	 * spinning VP may also block in the kernel first (a page fault; under
	 * TSan its runtime's own calls): a BLOCKED takeover then runs the
	 * queued thread, and PREEMPTED had nothing to do. Such an attempt is
	 * made again, up to 5 times, for one that shows PREEMPTED acted on.
	 */
	for (int attempt = 0; attempt < 5; attempt++) {
		ASSERT_EQ(spin_case(_metadata, true, 30 * 1000000000ULL, &s, &st), 0);
		TH_LOG("PREEMPTED acted on %llu, BLOCKED %llu, takeovers %llu",
		       (unsigned long long)st.sa_preempted, (unsigned long long)st.sa_blocked,
		       (unsigned long long)st.takeovers);
		if (!s.spinner_saw || st.sa_preempted || !st.sa_blocked)
			break;
	}
	EXPECT_TRUE(s.spinner_saw) TH_LOG("the queued thread ran while the spinner spun");
	EXPECT_GT(st.sa_preempted, 0);
	EXPECT_GT(st.takeovers, 0);
}

TEST_TIMEOUT(without_preempted_the_queued_thread_waits, 60)
{
	struct asx_asc_stats st;
	struct spin s;

	NEED_PREEMPT();
	ASSERT_EQ(spin_case(_metadata, false, 1000000000ULL, &s, &st), 0);
	EXPECT_FALSE(s.spinner_saw) TH_LOG("nothing ran the queued thread in the spin");
	EXPECT_TRUE(s.other_ran) TH_LOG("it ran once the spinner ended");
	EXPECT_EQ(st.sa_preempted, 0);
}

/* ---------------------------------------------------------------- compute */

#define NCOMP	6
#define ROUNDS	200
#define SPIN_NS	200000ULL	/* between two yields */

struct comp {
	int id;
	int rounds;		/* done by this thread */
	int *seen;		/* per round: times done (shared, [NCOMP][ROUNDS]) */
};

static void *compute(void *arg)
{
	struct comp *c = arg;

	for (int r = 0; r < ROUNDS; r++) {
		uint64_t end = asx_mono_ns() + SPIN_NS;

		while (asx_mono_ns() < end)
			;
		__atomic_add_fetch(&c->seen[c->id * ROUNDS + r], 1, __ATOMIC_RELAXED);
		c->rounds++;
		asx_asc_thread_yield();
	}
	return NULL;
}

TEST_TIMEOUT(compute_beside_a_hog_loses_nothing, 180)
{
	struct asx_asc_thread *t[NCOMP];
	struct comp c[NCOMP];
	struct asx_asc_stats st;
	int *seen = calloc(NCOMP * ROUNDS, sizeof(*seen));
	struct asx_asc *a;
	pthread_t hog;
	int i, bad = 0;

	NEED_PREEMPT();
	ASSERT_NE(seen, NULL);
	ASSERT_EQ(pin_with_hog(&hog), 0);
	a = make_asc(2, true);
	ASSERT_NE(a, NULL);
	for (i = 0; i < NCOMP; i++) {
		c[i] = (struct comp){ .id = i, .seen = seen };
		t[i] = spawn(a, compute, &c[i]);
		ASSERT_NE(t[i], NULL);
	}
	for (i = 0; i < NCOMP; i++)
		EXPECT_EQ(asx_asc_thread_join(t[i], NULL), 0);
	EXPECT_EQ(asx_asc_stats(a, &st), 0);
	hog_end(hog);
	for (i = 0; i < NCOMP; i++)
		EXPECT_EQ(c[i].rounds, ROUNDS);
	for (i = 0; i < NCOMP * ROUNDS; i++)
		bad += seen[i] != 1;
	EXPECT_EQ(bad, 0) TH_LOG("every round of every thread done exactly once");
	TH_LOG("PREEMPTED acted on %llu, takeovers %llu, upcalls %llu",
	       (unsigned long long)st.sa_preempted, (unsigned long long)st.takeovers,
	       (unsigned long long)st.upcalls);
	EXPECT_GT(st.sa_preempted, 0);
	EXPECT_EQ(asx_asc_destroy(a), 0);
	free(seen);
}

TEST_HARNESS_MAIN
