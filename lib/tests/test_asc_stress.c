// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_asc_stress.c - a seeded schedule stress harness for the ASC
 * scheduler (asx/asc.h).
 *
 * Each episode makes a home ASC (PRIO or EDF with 1 to 4 VPs, DIRECT,
 * STRIDE, or rr2, the user policy of examples/asc-policy/ registered
 * through asx/asc_policy.h and created by name),
 * non-preemptive, preemptive or timesliced (a short tick, see mk()), and
 * two side ASCs (PRIO and EDF, one VP each, of the same semantic) to
 * migrate through, then
 * runs worker threads that each draw a random mix of operations from
 * their own generator: an ASC mutex held across a yield, a sleep, a
 * wrapped blocking call (asx_asc_nanosleep, asx_asc_read/write on a pipe,
 * a bracketed nanosleep) or a migration PRIO -> EDF -> home and back;
 * timed and try locks; producing items for consumer threads that wait on
 * an ASC condition; a counting semaphore held across the same; sleeps and
 * yields; spawning children (joined, or detached and counted); ending by
 * asx_asc_thread_exit().  Barrier threads run rounds meanwhile.
 *
 * Invariants: the counter updated without atomics inside the mutex equals
 * the critical sections entered, and no two were inside at once; every
 * item produced is consumed (a lost wake-up leaves a consumer waiting and
 * stops progress); the semaphore never has more holders than units;
 * exactly one barrier leader per round and nobody a round behind; every
 * thread finishes with its own return value; every child ran.
 *
 * A watchdog thread fails the test with each ASC's state (VPs, their
 * current threads, run queue length) when progress stops, instead of
 * hanging.
 *
 * Reproducible workload: the seed is printed; ASX_STRESS_SEED=<n> replays
 * it (the interleaving itself depends on the OS).  STRESS_S=<seconds> sets
 * the duration (default 3).  The preemptive and timesliced configurations
 * (ticks every 100-500 us) run too, except under TSan: TSan defers an
 * asynchronous signal to a point of its own choosing and cannot follow a
 * handler that switches to another fiber (it stalls), so there they run
 * only with STRESS_PREEMPT=1; STRESS_PREEMPT=0 leaves them out anywhere.
 * They found four ways a preemption could be taken in the middle of a
 * scheduler operation (Documentation/asc.rst, "Preemption").  Built with -DASX_SCHED_FUZZ (see
 * Documentation/asc.rst) the scheduler also injects random delays at its
 * own decision points, seeded from the same seed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <asx/asc.h>
#include "asc/asc_impl.h"

/* a user policy written on the public interface (examples/asc-policy/) */
#include "../../examples/asc-policy/rr2.c"

#define MS 1000000ULL
#define US 1000ULL

#if defined(__SANITIZE_THREAD__)
#define STRESS_TSAN 1
#else
#define STRESS_TSAN 0
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SAN_SLOW 4
#define MAX_WORKERS 24
#else
#define SAN_SLOW 1
#define MAX_WORKERS 64
#endif
#define MAX_BAR 6
#define NCONS 2
#define SEM_UNITS 2

/* The scheduler's fault injection, when the library was built with it. */
void asx__sched_fuzz_seed(uint64_t seed, unsigned int permille) __attribute__((weak));

static int thread_failed;
static char fail_what[160];
#define CHECK(cond)							\
	do {								\
		if (!(cond) && !__atomic_exchange_n(&thread_failed, __LINE__, \
						    __ATOMIC_SEQ_CST))	\
			snprintf(fail_what, sizeof(fail_what), "%s", #cond); \
	} while (0)

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned int rnd(uint64_t *s, unsigned int n)
{
	return (unsigned int)(splitmix(s) % n);
}

/* ---------------------------------------------------------------- the world */

struct world {
	const struct asx_asc_policy *pol;	/* NULL: a registered one, @pname */
	const char *pname;
	unsigned int nvps;
	enum asx_asc_semantic semantic;
	struct asx_asc *home, *side_prio, *side_edf;
	uint64_t seed;

	/* mutual exclusion */
	struct asx_asc_mutex m;
	long counter;			/* no atomics: the mutex protects it */
	unsigned long cs_entered;	/* atomic */
	int in_cs;			/* atomic */

	/* producer / consumer */
	struct asx_asc_mutex qm;
	struct asx_asc_cond qc;
	long items, produced, consumed;	/* under qm */
	bool done;			/* under qm */

	/* counting semaphore */
	struct asx_asc_sem sem;
	int holders, max_holders;	/* atomic */

	/* barrier */
	struct asx_asc_barrier bar;
	unsigned int nbar, bar_rounds;
	unsigned int phase[MAX_BAR];	/* atomic */

	/* children */
	unsigned long spawned, finished;	/* atomic */

	int pipe[2];
	unsigned long progress;		/* atomic: anything done */
	const char *stage;		/* what the main thread waits for */
	unsigned int nworkers;
	struct worker *workers;
	unsigned int bar_done;		/* atomic: barrier threads finished */
};

struct worker {
	struct world *w;
	unsigned int idx, nops;
	uint64_t rng;
	struct asx_asc_thread *t;
	int op, done;			/* atomic: for the watchdog */
};

static struct world *cur_world;	/* for the watchdog */
static unsigned long progress_all;	/* atomic */

static void tick(struct world *w)
{
	__atomic_add_fetch(&w->progress, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&progress_all, 1, __ATOMIC_RELAXED);
}

static bool is_direct(const struct world *w)
{
	return w->pol == &asx_asc_direct;
}

static unsigned int qos_turn;	/* atomic: varies tickets and levels */

/* The QoS a thread has in its home ASC. */
static const struct asx_qos *home_qos(const struct world *w, void *buf)
{
	unsigned int k = __atomic_fetch_add(&qos_turn, 1, __ATOMIC_RELAXED);

	if (!w->pol) {
		*(struct rr2_qos *)buf = RR2_QOS((int)(k % 2));
	} else if (w->pol == &asx_asc_stride) {
		*(struct asx_stride_qos *)buf = ASX_STRIDE_QOS(1 + k % 4);
	} else if (w->pol == &asx_asc_prio) {
		*(struct asx_prio_qos *)buf = ASX_PRIO_QOS(0);
	} else if (w->pol == &asx_asc_edf) {
		/* one long job: tiny budget so admission never refuses */
		*(struct asx_edf_qos *)buf = ASX_EDF_QOS(0, 100 * MS, 1 * US, 1);
	} else {
		*(struct asx_direct_qos *)buf = ASX_DIRECT_QOS();
	}
	return buf;
}

union qos_buf {
	struct rr2_qos r;
	struct asx_stride_qos s;
	struct asx_prio_qos p;
	struct asx_edf_qos e;
	struct asx_direct_qos d;
};

/* ---------------------------------------------------------------- holding */

/* Migrate PRIO side -> EDF side -> home.  false when not possible. */
static bool migrate_round(struct world *w, uint64_t *rng)
{
	struct asx_prio_qos pq = ASX_PRIO_QOS((int)rnd(rng, 3));
	struct asx_edf_qos eq = ASX_EDF_QOS(0, 50 * MS, 1 * US, 1);
	union qos_buf hb;

	if (is_direct(w))
		return false;
	CHECK(asx_asc_thread_change(w->side_prio, &pq.qos) == 0);
	CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == w->side_prio);
	if (rnd(rng, 2))
		asx_asc_thread_yield();
	CHECK(asx_asc_thread_change(w->side_edf, &eq.qos) == 0);
	CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == w->side_edf);
	if (rnd(rng, 2))
		asx_asc_thread_yield();
	CHECK(asx_asc_thread_change(w->home, home_qos(w, &hb)) == 0);
	CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == w->home);
	return true;
}

/* Something that gives the VP away while a lock or unit is held. */
static void hold_action(struct world *w, uint64_t *rng)
{
	struct timespec ts;
	char c = 'x';

	switch (rnd(rng, 9)) {
	case 0:
	case 1:
	case 2:
		asx_asc_thread_yield();
		break;
	case 3:
		asx_asc_thread_sleep(rnd(rng, 50) * US);
		break;
	case 4:
		/*
		 * -1: EINTR from the preemption tick of a preemptive ASC
		 * (EDF).  errno is not checked: it is the VP's, and the
		 * thread may come back on another VP.
		 */
		ts = (struct timespec){ 0, (long)(rnd(rng, 30) * US) };
		CHECK(asx_asc_nanosleep(&ts, NULL) >= -1);
		break;
	case 5:
		/* a wrapped call on a descriptor the sentinel can watch */
		CHECK(asx_asc_write(w->pipe[1], &c, 1) == 1);
		CHECK(asx_asc_read(w->pipe[0], &c, 1) == 1);
		break;
	case 6:
		asx_asc_blocking_begin();
		ts = (struct timespec){ 0, (long)(rnd(rng, 20) * US) };
		nanosleep(&ts, NULL);
		asx_asc_blocking_end();
		break;
	case 7:
		if (!migrate_round(w, rng))
			asx_asc_thread_yield();
		break;
	default:
		break;
	}
}

static void cs_body(struct world *w, uint64_t *rng)
{
	CHECK(__atomic_exchange_n(&w->in_cs, 1, __ATOMIC_RELAXED) == 0);
	long v = w->counter;

	hold_action(w, rng);
	CHECK(__atomic_load_n(&w->in_cs, __ATOMIC_RELAXED) == 1);
	w->counter = v + 1;
	__atomic_add_fetch(&w->cs_entered, 1, __ATOMIC_RELAXED);
	CHECK(__atomic_exchange_n(&w->in_cs, 0, __ATOMIC_RELAXED) == 1);
}

/* ---------------------------------------------------------------- threads */

static void *child_main(void *arg)
{
	struct world *w = arg;

	asx_asc_thread_yield();
	asx_asc_mutex_lock(&w->m);
	w->counter++;
	__atomic_add_fetch(&w->cs_entered, 1, __ATOMIC_RELAXED);
	asx_asc_mutex_unlock(&w->m);
	__atomic_add_fetch(&w->finished, 1, __ATOMIC_RELEASE);
	tick(w);
	return arg;
}

static void spawn_child(struct world *w, uint64_t *rng)
{
	struct asx_asc_thread_opts ta = { .sz = sizeof(ta), .name = "child" };
	union qos_buf qb;
	struct asx_asc_thread *t = NULL;
	void *r = NULL;

	ta.detached = rnd(rng, 2);
	__atomic_add_fetch(&w->spawned, 1, __ATOMIC_RELAXED);
	if (asx_asc_thread_spawn(w->home, w->pol == &asx_asc_direct ? NULL : home_qos(w, &qb),
			     child_main, w, &ta, &t)) {
		CHECK(!"spawn child");
		__atomic_add_fetch(&w->finished, 1, __ATOMIC_RELAXED);
		return;
	}
	if (!ta.detached) {
		CHECK(asx_asc_thread_join(t, &r) == 0);
		CHECK(r == w);
	}
}

static void *worker_main(void *arg)
{
	struct worker *k = arg;
	struct world *w = k->w;
	uint64_t *rng = &k->rng;
	struct timespec ts;

	for (unsigned int i = 0; i < k->nops; i++) {
		int op = (int)rnd(rng, 12);

		__atomic_store_n(&k->op, op, __ATOMIC_RELAXED);
		switch (op) {
		case 0:
		case 1:
		case 2:
			asx_asc_mutex_lock(&w->m);
			cs_body(w, rng);
			asx_asc_mutex_unlock(&w->m);
			break;
		case 3:
			if (asx_asc_mutex_timedlock(&w->m, asx_deadline(&ts, rnd(rng, 200) * US)))
				break;
			cs_body(w, rng);
			asx_asc_mutex_unlock(&w->m);
			break;
		case 4:
			if (asx_asc_mutex_trylock(&w->m))
				break;
			cs_body(w, rng);
			asx_asc_mutex_unlock(&w->m);
			break;
		case 5:
		case 6:
			asx_asc_mutex_lock(&w->qm);
			w->items++;
			w->produced++;
			if (rnd(rng, 4) == 0)
				asx_asc_thread_yield();	/* the consumer's wake waits for us */
			asx_asc_cond_signal(&w->qc);
			asx_asc_mutex_unlock(&w->qm);
			break;
		case 7: {
			int h;

			if (rnd(rng, 3) == 0) {
				if (asx_asc_sem_timedwait(&w->sem, asx_deadline(&ts, 100 * US)))
					break;
			} else {
				asx_asc_sem_wait(&w->sem);
			}
			h = __atomic_add_fetch(&w->holders, 1, __ATOMIC_RELAXED);
			CHECK(h <= SEM_UNITS);
			hold_action(w, rng);
			__atomic_sub_fetch(&w->holders, 1, __ATOMIC_RELAXED);
			asx_asc_sem_post(&w->sem);
			break;
		}
		case 8:
			asx_asc_thread_sleep(rnd(rng, 100) * US);
			break;
		case 9:
			if (rnd(rng, 4) == 0)
				spawn_child(w, rng);
			else
				asx_asc_thread_yield();
			break;
		case 10:
			if (!migrate_round(w, rng))
				asx_asc_thread_yield();
			break;
		default:
			asx_asc_thread_yield();
			break;
		}
		tick(w);
	}
	CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == w->home);
	__atomic_store_n(&k->done, 1, __ATOMIC_RELAXED);
	if (k->idx & 1)
		asx_asc_thread_exit((void *)(uintptr_t)(k->idx + 1));
	return (void *)(uintptr_t)(k->idx + 1);
}

static void *consumer_main(void *arg)
{
	struct world *w = arg;
	uint64_t rng = w->seed ^ 0xc0ffee;

	asx_asc_mutex_lock(&w->qm);
	for (;;) {
		while (!w->items && !w->done)
			asx_asc_cond_wait(&w->qc, &w->qm);
		if (!w->items)
			break;
		w->items--;
		w->consumed++;
		tick(w);
		if (rnd(&rng, 8) == 0)
			asx_asc_thread_yield();	/* holding qm */
	}
	asx_asc_mutex_unlock(&w->qm);
	return NULL;
}

static void *barrier_main(void *arg)
{
	struct worker *k = arg;
	struct world *w = k->w;
	long leaders = 0;

	for (unsigned int r = 0; r < w->bar_rounds; r++) {
		__atomic_store_n(&w->phase[k->idx], r, __ATOMIC_RELAXED);
		if (rnd(&k->rng, 3) == 0)
			asx_asc_thread_yield();
		else if (rnd(&k->rng, 3) == 0)
			asx_asc_thread_sleep(rnd(&k->rng, 30) * US);
		leaders += asx_asc_barrier_wait(&w->bar);
		for (unsigned int j = 0; j < w->nbar; j++)
			CHECK(__atomic_load_n(&w->phase[j], __ATOMIC_RELAXED) >= r);
		asx_asc_barrier_wait(&w->bar);
		tick(w);
	}
	__atomic_add_fetch(&w->bar_done, 1, __ATOMIC_RELAXED);
	return (void *)leaders;
}

/* ---------------------------------------------------------------- watchdog */

struct watchdog {
	pthread_t pth;
	unsigned int stall_s;
	uint64_t seed;
	int stop;
};

static void *watchdog_main(void *arg)
{
	struct watchdog *wd = arg;
	unsigned long last = (unsigned long)-1;
	uint64_t since = asx_now_ns();

	while (!__atomic_load_n(&wd->stop, __ATOMIC_ACQUIRE)) {
		unsigned long p = __atomic_load_n(&progress_all, __ATOMIC_RELAXED);
		struct timespec nap = { 0, 50 * (long)MS };

		if (p != last) {
			last = p;
			since = asx_now_ns();
		} else if (asx_now_ns() - since > wd->stall_s * 1000 * MS) {
			struct world *w = __atomic_load_n(&cur_world, __ATOMIC_ACQUIRE);

			fprintf(stderr, "watchdog: no progress for %u s (seed %llu)\n",
				wd->stall_s, (unsigned long long)wd->seed);
			if (w) {
				fprintf(stderr, "  world: %s %u VPs (semantic %d), main: %s; %u workers, %u/%u "
					"barrier threads done (%u rounds); cs %lu, produced %ld consumed "
					"%ld items %ld, children %lu/%lu, sem holders %d\n",
					w->pol ? w->pol->name : w->pname, w->nvps, (int)w->semantic,
					__atomic_load_n(&w->stage, __ATOMIC_RELAXED), w->nworkers,
					__atomic_load_n(&w->bar_done, __ATOMIC_RELAXED), w->nbar,
					w->bar_rounds,
					__atomic_load_n(&w->cs_entered, __ATOMIC_RELAXED),
					w->produced, w->consumed, w->items,
					__atomic_load_n(&w->finished, __ATOMIC_RELAXED),
					__atomic_load_n(&w->spawned, __ATOMIC_RELAXED),
					__atomic_load_n(&w->holders, __ATOMIC_RELAXED));
				fprintf(stderr, "  mutex %s owner %p waiters %s; queue mutex %s owner "
					"%p; sem value %u waiters %s\n",
					w->m.locked ? "locked" : "free", w->m.owner,
					w->m.q.head ? "yes" : "no", w->qm.locked ? "locked" : "free",
					w->qm.owner, w->sem.value, w->sem.q.head ? "yes" : "no");
				for (unsigned int i = 0; i < w->nworkers; i++) {
					struct worker *k = &w->workers[i];

					if (!__atomic_load_n(&k->done, __ATOMIC_RELAXED))
						fprintf(stderr, "  worker %u (%p): op %d\n", i,
							(void *)k->t, k->op);
				}
				asx__timer_dump(stderr);
				asx__asc_dump(w->home, stderr);
				asx__asc_dump(w->side_prio, stderr);
				asx__asc_dump(w->side_edf, stderr);
			}
			fflush(stderr);
			if (getenv("STRESS_GDB")) {	/* every thread's stack, for a post-mortem */
				char cmd[128];

				snprintf(cmd, sizeof(cmd), "gdb -p %d -batch -ex 'thread apply all bt' "
					 "1>&2 2>/dev/null", (int)getpid());
				if (system(cmd) < 0)
					perror("gdb");
			}
			abort();
		}
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* ---------------------------------------------------------------- episodes */

/*
 * Tests link libasx statically: a preemption tick that lands in libasx's
 * code must still be recognised (Documentation/asc.rst, "Second level"),
 * or it switches threads inside the scheduler (test_asc.c checks the
 * address ranges).  Preemptive and timesliced ASCs (STRESS_PREEMPT=1) tick
 * every 100 to 500 us here, far more often than the 2 ms default, so that
 * ticks land everywhere.
 */
static struct asx_asc *mk(const struct asx_asc_policy *p, const char *pname, unsigned int nvps,
			  const char *name, enum asx_asc_semantic sem, uint64_t *rng)
{
	struct asx_asc_opts at = { .sz = sizeof(at), .name = name, .nvps = nvps,
				   .semantic = sem, .miss_ratio_max = 1.0, .util_max = 1.0 };
	struct asx_asc *a = NULL;

	if (sem != ASX_ASC_NONPREEMPTIVE)
		at.timeslice_ns = (100 + rnd(rng, 401)) * US;
	if (p)
		assert_int_equal(asx_asc_create(&a, p, &at), 0);
	else
		assert_int_equal(asx_asc_create_by_name(&a, pname, &at), 0);
	return a;
}

static void episode(const struct asx_asc_policy *pol, const char *pname, unsigned int nvps,
		    enum asx_asc_semantic sem, uint64_t seed)
{
	struct world *w = calloc(1, sizeof(*w));
	struct worker *k = calloc(MAX_WORKERS + MAX_BAR, sizeof(*k));
	struct asx_asc_thread *cons[NCONS], *bt[MAX_BAR];
	uint64_t rng = seed;
	unsigned int nw;
	union qos_buf qb;
	long leaders = 0;
	void *r;

	assert_non_null(w);
	assert_non_null(k);
	w->pol = pol;
	w->pname = pname;
	w->nvps = nvps;
	w->semantic = sem;
	w->seed = seed;
	w->home = mk(pol, pname, nvps, "home", sem, &rng);
	w->side_prio = mk(&asx_asc_prio, NULL, 1, "side-prio", sem, &rng);
	w->side_edf = mk(&asx_asc_edf, NULL, 1, "side-edf", sem, &rng);
	asx_asc_mutex_init(&w->m);
	asx_asc_mutex_init(&w->qm);
	asx_asc_cond_init(&w->qc);
	asx_asc_sem_init(&w->sem, SEM_UNITS);
	assert_int_equal(pipe2(w->pipe, O_CLOEXEC), 0);
	w->nbar = 2 + rnd(&rng, MAX_BAR - 1);
	w->bar_rounds = 3 + rnd(&rng, 15);
	assert_int_equal(asx_asc_barrier_init(&w->bar, w->nbar), 0);
	nw = is_direct(w) ? 4 + rnd(&rng, 8) : MAX_WORKERS / 4 + rnd(&rng, MAX_WORKERS * 3 / 4);
	__atomic_store_n(&cur_world, w, __ATOMIC_RELEASE);

	__atomic_store_n(&w->stage, "spawning", __ATOMIC_RELAXED);

	const struct asx_qos *q = pol == &asx_asc_direct ? NULL : home_qos(w, &qb);

	for (int i = 0; i < NCONS; i++)
		assert_int_equal(asx_asc_thread_spawn(w->home, q, consumer_main, w, NULL, &cons[i]), 0);
	for (unsigned int i = 0; i < w->nbar; i++) {
		struct worker *b = &k[MAX_WORKERS + i];

		b->w = w;
		b->idx = i;
		b->rng = splitmix(&rng);
		assert_int_equal(asx_asc_thread_spawn(w->home, q, barrier_main, b, NULL, &bt[i]), 0);
	}
	for (unsigned int i = 0; i < nw; i++) {
		k[i].w = w;
		k[i].idx = i;
		k[i].rng = splitmix(&rng);
		k[i].nops = 10 + rnd(&rng, 40);
		assert_int_equal(asx_asc_thread_spawn(w->home, q, worker_main, &k[i], NULL, &k[i].t), 0);
	}

	w->workers = k;
	__atomic_store_n(&w->nworkers, nw, __ATOMIC_RELEASE);
	/* every thread finishes, with its own value */
	__atomic_store_n(&w->stage, "joining workers", __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < nw; i++) {
		assert_int_equal(asx_asc_thread_join(k[i].t, &r), 0);
		assert_int_equal((uintptr_t)r, i + 1);
	}
	__atomic_store_n(&w->stage, "joining barrier threads", __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < w->nbar; i++) {
		assert_int_equal(asx_asc_thread_join(bt[i], &r), 0);
		leaders += (long)r;
	}
	assert_int_equal(leaders, w->bar_rounds);
	/* detached children end on their own */
	__atomic_store_n(&w->stage, "waiting for children", __ATOMIC_RELAXED);
	while (__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&w->spawned, __ATOMIC_RELAXED)) {
		struct timespec nap = { 0, 1 * (long)MS };

		nanosleep(&nap, NULL);
	}
	__atomic_store_n(&w->stage, "joining consumers", __ATOMIC_RELAXED);
	asx_asc_mutex_lock(&w->qm);
	w->done = true;
	asx_asc_cond_broadcast(&w->qc);
	asx_asc_mutex_unlock(&w->qm);
	for (int i = 0; i < NCONS; i++)
		assert_int_equal(asx_asc_thread_join(cons[i], NULL), 0);

	/* invariants */
	if (thread_failed)
		fprintf(stderr, "stress: line %d: %s\n", thread_failed, fail_what);
	assert_int_equal(thread_failed, 0);
	assert_int_equal(w->counter, (long)w->cs_entered);
	assert_int_equal(w->in_cs, 0);
	assert_int_equal(w->produced, w->consumed);
	assert_int_equal(w->items, 0);
	assert_int_equal(w->holders, 0);
	assert_int_equal(asx_asc_sem_trywait(&w->sem), 0);	/* no unit lost */
	assert_int_equal(asx_asc_sem_trywait(&w->sem), 0);
	assert_int_equal(asx_asc_sem_trywait(&w->sem), -EAGAIN);

	__atomic_store_n(&cur_world, NULL, __ATOMIC_RELEASE);
	/* a detached child's VP may still be leaving it */
	for (int tries = 0; asx_asc_destroy(w->home) == -EBUSY; tries++) {
		struct timespec nap = { 0, 1 * (long)MS };

		assert_true(tries < 10000);
		nanosleep(&nap, NULL);
	}
	assert_int_equal(asx_asc_destroy(w->side_prio), 0);
	assert_int_equal(asx_asc_destroy(w->side_edf), 0);
	close(w->pipe[0]);
	close(w->pipe[1]);
	free(k);
	free(w);
}

struct config {
	const struct asx_asc_policy *pol;	/* NULL: the registered rr2 */
	unsigned int nvps;
	enum asx_asc_semantic sem;
};
#define RR2 NULL

#define NP ASX_ASC_NONPREEMPTIVE
#define PR ASX_ASC_PREEMPTIVE
#define TS ASX_ASC_TIMESLICED
static const struct config configs[] = {
	{ &asx_asc_prio, 1, NP }, { &asx_asc_prio, 2, NP }, { &asx_asc_prio, 3, NP },
	{ &asx_asc_prio, 4, NP }, { &asx_asc_edf, 1, NP },  { &asx_asc_edf, 2, NP },
	{ &asx_asc_edf, 3, NP },  { &asx_asc_edf, 4, NP },  { &asx_asc_direct, 0, NP },
	{ &asx_asc_stride, 1, NP }, { &asx_asc_stride, 3, NP }, { RR2, 1, NP }, { RR2, 2, NP },
	/* from here on: preemptive and timesliced (see the top of the file) */
	{ &asx_asc_prio, 1, PR }, { &asx_asc_prio, 3, PR }, { &asx_asc_prio, 2, TS },
	{ &asx_asc_prio, 4, TS }, { &asx_asc_edf, 1, PR },  { &asx_asc_edf, 2, PR },
	{ &asx_asc_edf, 4, PR },  { &asx_asc_edf, 3, TS },
	{ &asx_asc_stride, 2, TS }, { RR2, 2, PR },
};
#define NCONFIGS_NP 13
static const char sem_tag[] = { [NP] = 'n', [PR] = 'p', [TS] = 't' };
#undef NP
#undef PR
#undef TS

static void test_stress(void **state)
{
	(void)state;
	const char *e = getenv("ASX_STRESS_SEED");
	uint64_t seed = e && *e ? strtoull(e, NULL, 0) : (asx_now_ns() ^ ((uint64_t)getpid() << 32));
	double secs = getenv("STRESS_S") ? atof(getenv("STRESS_S")) : 3.0;
	const char *pe = getenv("STRESS_PREEMPT");
	size_t nconf = (pe && *pe ? atoi(pe) : !STRESS_TSAN) ? ASX_ARRAY_SIZE(configs) : NCONFIGS_NP;
	uint64_t t0 = asx_now_ns(), per, end;
	unsigned long episodes[ASX_ARRAY_SIZE(configs)] = { 0 };
	struct watchdog wd = { .stall_s = 20 * SAN_SLOW, .seed = seed };
	uint64_t rng = seed;
	unsigned long n = 0;

	if (secs <= 0)
		secs = 3.0;
	fprintf(stderr, "stress: seed %llu (replay: ASX_STRESS_SEED=%llu), %.0f s, %zu "
		"configurations (%s)%s\n", (unsigned long long)seed, (unsigned long long)seed, secs,
		nconf, nconf > NCONFIGS_NP ? "preemptive ones too" : "non-preemptive only",
		asx__sched_fuzz_seed ? ", scheduler fuzzing on" : "");
	if (asx__sched_fuzz_seed) {
		const char *f = getenv("ASX_SCHED_FUZZ");

		asx__sched_fuzz_seed(seed, f && *f ? (unsigned int)atoi(f) : 20);
	}
	assert_int_equal(rr2_register(), 0);
	assert_int_equal(pthread_create(&wd.pth, NULL, watchdog_main, &wd), 0);
	per = (uint64_t)(secs * 1e9) / nconf;
	end = t0 + (uint64_t)(secs * 1e9);
	/* every configuration in turn, each for its share of the time, at least once;
	 * then round again while time is left */
	do {
		for (size_t c = 0; c < nconf; c++) {
			uint64_t cend = asx_now_ns() + per;

			do {
				episode(configs[c].pol, RR2_NAME, configs[c].nvps, configs[c].sem,
					splitmix(&rng));
				episodes[c]++;
				n++;
			} while (asx_now_ns() < cend && asx_now_ns() < end);
		}
	} while (asx_now_ns() < end);
	__atomic_store_n(&wd.stop, 1, __ATOMIC_RELEASE);
	pthread_join(wd.pth, NULL);
	fprintf(stderr, "stress: %lu episodes in %.1f s (seed %llu):", n,
		(double)(asx_now_ns() - t0) / 1e9, (unsigned long long)seed);
	for (size_t c = 0; c < nconf; c++)
		fprintf(stderr, " %s/%u%c:%lu", configs[c].pol ? configs[c].pol->name : RR2_NAME,
			configs[c].nvps,
			sem_tag[configs[c].sem], episodes[c]);
	fprintf(stderr, "\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
