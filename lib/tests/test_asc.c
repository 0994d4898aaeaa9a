// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_asc.c - CMocka tests of the ASC scheduler (asx/asc.h).
 *
 * Each test checks something a broken scheduler would get wrong: the
 * order threads run in, counters updated without atomics inside ASC
 * mutexes (a second VP would lose updates if exclusion failed), a thread
 * that only makes progress when others are not starved, deadlines kept
 * and missed.  Waits are bounded so failures fail rather than hang.
 * Thread counts shrink under TSan (each fiber costs it a lot of memory).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <asx/asc.h>

#if defined(__SANITIZE_THREAD__)
#define NMANY 1000
#else
#define NMANY 10000
#endif

#define MS 1000000ULL

static int thread_failed;
#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			__atomic_store_n(&thread_failed, __LINE__, __ATOMIC_SEQ_CST); \
	} while (0)

static void assert_threads_ok(void)
{
	int line = __atomic_exchange_n(&thread_failed, 0, __ATOMIC_SEQ_CST);

	if (line)
		print_error("CHECK failed at line %d\n", line);
	assert_int_equal(line, 0);
}

static struct asx_asc *mk_asc(const struct asx_asc_policy *p, unsigned int nvps,
			      enum asx_asc_semantic sem)
{
	struct asx_asc_opts at = { .sz = sizeof(at), .nvps = nvps, .semantic = sem };
	struct asx_asc *a = NULL;

	assert_int_equal(asx_asc_create(&a, p, &at), 0);
	return a;
}

static void busy_ns(uint64_t ns)
{
	uint64_t end = asx_now_ns() + ns;

	while (asx_now_ns() < end)
		;
}

/* ---------------------------------------------------------------- basics */

static void *ret_arg(void *arg)
{
	CHECK(asx_asc_thread_self() != NULL);
	asx_asc_thread_yield();
	return arg;
}

static void test_spawn_join(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[8];
	void *r;

	assert_null(asx_asc_thread_self());
	for (int i = 0; i < 8; i++)
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ret_arg, (void *)(intptr_t)(i + 1),
						  NULL, &t[i]), 0);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(asx_asc_thread_join(t[i], &r), 0);
		assert_int_equal((intptr_t)r, i + 1);
	}
	/* wrong schema, missing QoS */
	struct asx_edf_qos e = ASX_EDF_QOS(0, MS, 0, 1);

	assert_int_equal(asx_asc_thread_spawn(a, &e.qos, ret_arg, NULL, NULL, &t[0]), -EINVAL);
	assert_int_equal(asx_asc_thread_spawn(a, NULL, ret_arg, NULL, NULL, &t[0]), -EINVAL);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* Floating-point control state is per thread: MXCSR and x87 CW survive switches. */
static void *fp_thread(void *arg)
{
	int mode = (int)(intptr_t)arg;

	fesetround(mode);
	for (int i = 0; i < 100; i++) {
		asx_asc_thread_yield();
		CHECK(fegetround() == mode);
	}
	return NULL;
}

static void test_fp_state(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[3];
	int modes[3] = { FE_TONEAREST, FE_UPWARD, FE_TOWARDZERO };

	for (int i = 0; i < 3; i++)
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, fp_thread,
						  (void *)(intptr_t)modes[i], NULL, &t[i]), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* Switch counts (asx_asc_switches) and the raw switch floor (asx_asc_raw_switch_ns). */
static int yield_go;

static void *yield_n(void *arg)
{
	while (!__atomic_load_n(&yield_go, __ATOMIC_ACQUIRE))
		asx_asc_thread_yield();
	for (int i = 0; i < (int)(intptr_t)arg; i++)
		asx_asc_thread_yield();
	return NULL;
}

static void test_switch_counts(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[2];
	uint64_t before;
	double raw = -1;

	assert_int_equal(asx_asc_switches(NULL), 0);
	before = asx_asc_switches(a);
	/* two threads of one priority on one VP, both there before either
	 * starts counting: each yield but the last few switches to the other */
	__atomic_store_n(&yield_go, 0, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, yield_n, (void *)(intptr_t)100,
						  NULL, &t[i]), 0);
	__atomic_store_n(&yield_go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_true(asx_asc_switches(a) - before >= 100);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();

	assert_int_equal(asx_asc_raw_switch_ns(1000, &raw), 0);
	assert_true(raw > 0);
	assert_int_equal(asx_asc_raw_switch_ns(0, &raw), -EINVAL);
	assert_int_equal(asx_asc_raw_switch_ns(1000, NULL), -EINVAL);
}

/* ---------------------------------------------------------------- PRIO order */

static char order[64];
static int norder;

struct ord {
	char id;
	int rounds;
};

static void *ord_thread(void *arg)
{
	struct ord *o = arg;

	for (int i = 0; i < o->rounds; i++) {
		order[norder++] = o->id;
		asx_asc_thread_yield();
	}
	return NULL;
}

static struct ord ords[6] = {
	{ 'l', 1 }, { 'h', 1 }, { 'm', 1 }, { 'A', 3 }, { 'B', 3 }, { 'C', 3 },
};

static void *gate(void *arg)
{
	struct asx_asc *a = asx_asc_thread_asc(asx_asc_thread_self());
	struct asx_asc_thread **t = arg;
	int prio[6] = { 1, 5, 3, 2, 2, 2 };

	/* non-preemptive: none of these runs before the gate returns */
	for (int i = 0; i < 6; i++) {
		struct asx_prio_qos q = ASX_PRIO_QOS(prio[i]);

		CHECK(asx_asc_thread_spawn(a, &q.qos, ord_thread, &ords[i], NULL, &t[i]) == 0);
	}
	order[norder++] = 'g';
	return NULL;
}

static void test_prio_order(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(100);
	struct asx_asc_thread *g, *t[6];

	norder = 0;
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, gate, t, NULL, &g), 0);
	assert_int_equal(asx_asc_thread_join(g, NULL), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	order[norder] = 0;
	/* priority order, then round-robin among the three equals */
	assert_string_equal(order, "ghmABCABCABCl");
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

static void *qos_b(void *arg)
{
	struct asx_prio_qos low = ASX_PRIO_QOS(0);

	(void)arg;
	order[norder++] = 'B';
	CHECK(asx_asc_thread_change(NULL, &low.qos) == 0);	/* now below A: A runs */
	order[norder++] = 'b';
	return NULL;
}

static void *qos_a(void *arg)
{
	(void)arg;
	order[norder++] = 'A';
	return NULL;
}

static void *qos_gate(void *arg)
{
	struct asx_asc *a = asx_asc_thread_asc(asx_asc_thread_self());
	struct asx_asc_thread **t = arg;
	struct asx_prio_qos pa = ASX_PRIO_QOS(1), pb = ASX_PRIO_QOS(2);

	CHECK(asx_asc_thread_spawn(a, &pa.qos, qos_a, NULL, NULL, &t[0]) == 0);
	CHECK(asx_asc_thread_spawn(a, &pb.qos, qos_b, NULL, NULL, &t[1]) == 0);
	return NULL;
}

static void test_qos_change(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(100);
	struct asx_asc_thread *g, *t[2];

	norder = 0;
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, qos_gate, t, NULL, &g), 0);
	assert_int_equal(asx_asc_thread_join(g, NULL), 0);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	assert_int_equal(asx_asc_thread_join(t[1], NULL), 0);
	order[norder] = 0;
	assert_string_equal(order, "BAb");
	assert_int_equal(asx_asc_thread_change(NULL, &q.qos), -EPERM);	/* not a user thread */
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* ---------------------------------------------------------------- many threads, mutexes */

#define NLOCKS 8
static struct asx_asc_mutex locks[NLOCKS];
static long counters[NLOCKS];
static int inside[NLOCKS];

static void *locker(void *arg)
{
	int k = (int)((intptr_t)arg % NLOCKS);

	for (int i = 0; i < 3; i++) {
		asx_asc_mutex_lock(&locks[k]);
		CHECK(__atomic_add_fetch(&inside[k], 1, __ATOMIC_RELAXED) == 1);
		long v = counters[k];

		asx_asc_thread_yield();	/* others run, find the lock held, block */
		counters[k] = v + 1;
		__atomic_sub_fetch(&inside[k], 1, __ATOMIC_RELAXED);
		asx_asc_mutex_unlock(&locks[k]);
	}
	return NULL;
}

static void many_threads(unsigned int nvps)
{
	struct asx_asc *a = mk_asc(&asx_asc_prio, nvps, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread **t = calloc(NMANY, sizeof(*t));
	long sum = 0;

	assert_non_null(t);
	for (int i = 0; i < NLOCKS; i++) {
		asx_asc_mutex_init(&locks[i]);
		counters[i] = 0;
	}
	for (int i = 0; i < NMANY; i++)
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, locker, (void *)(intptr_t)i, NULL,
						  &t[i]), 0);
	for (int i = 0; i < NMANY; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	for (int i = 0; i < NLOCKS; i++)
		sum += counters[i];
	assert_int_equal(sum, 3L * NMANY);
	assert_int_equal(asx_asc_destroy(a), 0);
	free(t);
	assert_threads_ok();
}

static void test_many_threads_1vp(void **state)
{
	(void)state;
	many_threads(1);
}

static void test_many_threads_2vp(void **state)
{
	(void)state;
	many_threads(2);
}

/* ---------------------------------------------------------------- cond, sem, barrier */

struct pc {
	struct asx_asc_mutex m;
	struct asx_asc_cond c;
	int items, taken, done;
	struct asx_asc_sem ping, pong;
	struct asx_asc_barrier b;
	int phase[8];
};

static void *producer(void *arg)
{
	struct pc *p = arg;

	for (int i = 0; i < 1000; i++) {
		asx_asc_mutex_lock(&p->m);
		p->items++;
		asx_asc_cond_signal(&p->c);
		asx_asc_mutex_unlock(&p->m);
		if (i % 7 == 0)
			asx_asc_thread_yield();
	}
	asx_asc_mutex_lock(&p->m);
	p->done = 1;
	asx_asc_cond_broadcast(&p->c);
	asx_asc_mutex_unlock(&p->m);
	return NULL;
}

static void *consumer(void *arg)
{
	struct pc *p = arg;

	asx_asc_mutex_lock(&p->m);
	for (;;) {
		while (!p->items && !p->done)
			asx_asc_cond_wait(&p->c, &p->m);
		if (!p->items)
			break;
		p->items--;
		p->taken++;
	}
	asx_asc_mutex_unlock(&p->m);
	return NULL;
}

static void *pinger(void *arg)
{
	struct pc *p = arg;

	for (int i = 0; i < 2000; i++) {
		asx_asc_sem_post(&p->ping);
		asx_asc_sem_wait(&p->pong);
	}
	return NULL;
}

static void *ponger(void *arg)
{
	struct pc *p = arg;

	for (int i = 0; i < 2000; i++) {
		asx_asc_sem_wait(&p->ping);
		asx_asc_sem_post(&p->pong);
	}
	return NULL;
}

static struct pc *bar_pc;
static void *barrier_thread(void *arg)
{
	int id = (int)(intptr_t)arg, leaders = 0;

	for (int r = 0; r < 50; r++) {
		__atomic_store_n(&bar_pc->phase[id], r, __ATOMIC_RELAXED);
		leaders += asx_asc_barrier_wait(&bar_pc->b);
		/* nobody may be a round behind once the barrier opened */
		for (int j = 0; j < 8; j++)
			CHECK(__atomic_load_n(&bar_pc->phase[j], __ATOMIC_RELAXED) >= r);
		asx_asc_barrier_wait(&bar_pc->b);
	}
	return (void *)(intptr_t)leaders;
}

static void sync_objects(unsigned int nvps)
{
	struct asx_asc *a = mk_asc(&asx_asc_prio, nvps, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct pc *p = calloc(1, sizeof(*p));
	struct asx_asc_thread *t[12];
	long leaders = 0;
	void *r;

	assert_non_null(p);
	asx_asc_mutex_init(&p->m);
	asx_asc_cond_init(&p->c);
	asx_asc_sem_init(&p->ping, 0);
	asx_asc_sem_init(&p->pong, 0);
	assert_int_equal(asx_asc_barrier_init(&p->b, 8), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, consumer, p, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, consumer, p, NULL, &t[1]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, producer, p, NULL, &t[2]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, pinger, p, NULL, &t[3]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ponger, p, NULL, &t[4]), 0);
	for (int i = 0; i < 5; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(p->taken, 1000);
	bar_pc = p;
	for (int i = 0; i < 8; i++)
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, barrier_thread, (void *)(intptr_t)i,
						  NULL, &t[i]), 0);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(asx_asc_thread_join(t[i], &r), 0);
		leaders += (intptr_t)r;
	}
	assert_int_equal(leaders, 50);
	/* a timed wait that times out, then a post from a plain pthread */
	struct timespec ts;

	assert_int_equal(asx_asc_sem_timedwait(&p->ping, asx_deadline(&ts, 20 * MS)), -ETIMEDOUT);
	assert_int_equal(asx_asc_destroy(a), 0);
	free(p);
	assert_threads_ok();
}

static void test_sync_1vp(void **state)
{
	(void)state;
	sync_objects(1);
}

static void test_sync_3vp(void **state)
{
	(void)state;
	sync_objects(3);
}

/*
 * Watchdog: a plain pthread that aborts with a diagnostic when the test's
 * progress counter has not moved for @stall_s seconds (x4 under
 * sanitizers), so a scheduler deadlock fails the test instead of hanging.
 */
struct watchdog {
	pthread_t pth;
	const char *what;
	unsigned long *progress;
	struct asx_asc *asc;
	unsigned int stall_s;
	int stop;
};

static void *watchdog_main(void *arg)
{
	struct watchdog *w = arg;
	unsigned long last = (unsigned long)-1;
	uint64_t since = asx_now_ns();

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		unsigned long p = __atomic_load_n(w->progress, __ATOMIC_RELAXED);
		struct timespec ms = { 0, 20 * (long)MS };

		if (p != last) {
			last = p;
			since = asx_now_ns();
		} else if (asx_now_ns() - since > w->stall_s * 1000 * MS) {
			struct asx_asc_stats st = { 0 };

			if (w->asc)
				asx_asc_stats(w->asc, &st);
			fprintf(stderr, "watchdog: %s: no progress for %u s at %lu "
				"(vps %u running %u blocked %u threads %u)\n", w->what,
				w->stall_s, p, st.vps, st.vps_running, st.vps_blocked,
				st.threads);
			abort();
		}
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static void watchdog_start(struct watchdog *w, const char *what, unsigned long *progress,
			   struct asx_asc *asc, unsigned int stall_s)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	stall_s *= 4;
#endif
	*w = (struct watchdog){ .what = what, .progress = progress, .asc = asc,
				.stall_s = stall_s };
	assert_int_equal(pthread_create(&w->pth, NULL, watchdog_main, w), 0);
}

static void watchdog_stop(struct watchdog *w)
{
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
	pthread_join(w->pth, NULL);
}

/*
 * An ASC mutex held across a yield on three VPs (an outside user's
 * report): the unlock hands the mutex to a waiter whose switch-out has
 * not finished; the VP that picks it must not wait for it while its own
 * thread's switch-out is the one the other VP waits for.
 */
#if defined(__SANITIZE_THREAD__)
#define HOLD_THREADS 50
#else
#define HOLD_THREADS 200
#endif

struct hold {
	struct asx_asc_mutex m;
	long sum;
	unsigned long progress;
};

static void *hold_thread(void *arg)
{
	struct hold *h = arg;

	for (int i = 0; i < 10; i++) {
		asx_asc_mutex_lock(&h->m);
		long v = h->sum;

		asx_asc_thread_yield();
		h->sum = v + 1;
		asx_asc_mutex_unlock(&h->m);
		__atomic_add_fetch(&h->progress, 1, __ATOMIC_RELAXED);
		asx_asc_thread_yield();
	}
	return NULL;
}

static void test_mutex_across_yield_3vp(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 3, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[HOLD_THREADS];
	struct hold *h = calloc(1, sizeof(*h));
	struct watchdog wd;
	uint64_t end = asx_now_ns() + 3000 * MS;
	int rounds = 0;

	assert_non_null(h);
	asx_asc_mutex_init(&h->m);
	watchdog_start(&wd, "mutex held across a yield, 3 VPs", &h->progress, a, 10);
	/* the report hung within 6 to 170 rounds; a few seconds' worth */
	while (rounds < 20 || asx_now_ns() < end) {
		for (int i = 0; i < HOLD_THREADS; i++)
			assert_int_equal(asx_asc_thread_spawn(a, &q.qos, hold_thread, h, NULL, &t[i]),
					 0);
		for (int i = 0; i < HOLD_THREADS; i++)
			assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
		rounds++;
		assert_int_equal(h->sum, (long)rounds * HOLD_THREADS * 10);
	}
	watchdog_stop(&wd);
	assert_int_equal(asx_asc_destroy(a), 0);
	free(h);
	assert_threads_ok();
}

/*
 * A plain pthread posts an ASC semaphore a user thread waits on (the
 * external wake path).  The thread first times out on a timed wait (the
 * sentinel's wake).  main posts only once the thread has reported that
 * timeout: the post used to come after a fixed 50 ms, and on a loaded
 * host, where the VP or the sentinel ran more than 40 ms late, it came
 * first, the timed wait took it and the untimed wait after it waited for
 * a second post forever (main in join, the VP idle: it looked like a lost
 * wake-up).  test_asc_wake runs this hand-off in loops.
 */
static struct asx_asc_sem ext_sem;
static unsigned long ext_stage;	/* 1: the timed wait expired; 2: returning */
static void *sem_waiter(void *arg)
{
	struct timespec ts;
	int r;

	(void)arg;
	r = asx_asc_sem_timedwait(&ext_sem, asx_deadline(&ts, 10 * MS));
	CHECK(r == -ETIMEDOUT);
	__atomic_store_n(&ext_stage, 1, __ATOMIC_RELEASE);
	if (r != -ETIMEDOUT)
		return NULL;	/* fail: not wait for a post that is not coming */
	asx_asc_sem_wait(&ext_sem);
	__atomic_store_n(&ext_stage, 2, __ATOMIC_RELEASE);
	return (void *)1;
}

static void test_sem_from_pthread(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t;
	struct watchdog wd;
	void *r = NULL;

	asx_asc_sem_init(&ext_sem, 0);
	ext_stage = 0;
	watchdog_start(&wd, "sem posted from a pthread", &ext_stage, a, 20);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, sem_waiter, NULL, NULL, &t), 0);
	while (!__atomic_load_n(&ext_stage, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(5000);	/* most often the thread waits again by now, its VP idle */
	asx_asc_sem_post(&ext_sem);	/* main is a plain pthread */
	assert_int_equal(asx_asc_thread_join(t, &r), 0);
	watchdog_stop(&wd);
	assert_ptr_equal(r, (void *)1);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* ---------------------------------------------------------------- sleep, timers, fds */

static int ticks;
static void *ticker(void *arg)
{
	int *stop = arg;

	while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
		ticks++;
		asx_asc_thread_yield();
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	int *stop = arg;
	uint64_t t0 = asx_now_ns();
	int before = ticks;

	CHECK(asx_asc_thread_sleep(50 * MS) == 0);
	CHECK(asx_now_ns() - t0 >= 50 * MS);
	CHECK(ticks > before);	/* the VP ran the other thread meanwhile */
	__atomic_store_n(stop, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void test_sleep(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[2];
	int stop = 0;

	ticks = 0;
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, sleeper, &stop, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ticker, &stop, NULL, &t[1]), 0);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	assert_int_equal(asx_asc_thread_join(t[1], NULL), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

static int fired;
static void on_timer(void *arg)
{
	CHECK(asx_asc_thread_self() == arg);	/* runs in the owner */
	fired++;
}

static void *timer_thread(void *arg)
{
	struct timespec ts;
	uint64_t end;

	(void)arg;
	CHECK(asx_asc_thread_timer_set(0, asx_deadline(&ts, 5 * MS), 5 * MS, on_timer,
				   asx_asc_thread_self()) == 0);
	end = asx_now_ns() + 2000 * MS;
	while (fired < 3 && asx_now_ns() < end)
		asx_asc_thread_sleep(100 * MS);	/* a firing timer interrupts it */
	CHECK(fired >= 3);
	CHECK(asx_asc_thread_timer_set(0, NULL, 0, NULL, NULL) == 0);
	return NULL;
}

static void test_thread_timers(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t;

	fired = 0;
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, timer_thread, NULL, NULL, &t), 0);
	assert_int_equal(asx_asc_thread_join(t, NULL), 0);
	assert_true(fired >= 3);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

struct piped {
	int fd[2];
	int progress;
	int progress_at_read;
};

static void *pipe_reader(void *arg)
{
	struct piped *p = arg;
	char c = 0;

	CHECK(asx_asc_read(p->fd[0], &c, 1) == 1);
	CHECK(c == 'x');
	p->progress_at_read = p->progress;
	return NULL;
}

static void *pipe_worker(void *arg)
{
	struct piped *p = arg;

	for (int i = 0; i < 1000; i++) {
		p->progress++;
		asx_asc_thread_yield();
	}
	CHECK(asx_asc_write(p->fd[1], "x", 1) == 1);
	return NULL;
}

static void test_pipe_read(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[2];
	struct piped p = { .progress = 0 };
	struct timespec ts;

	assert_int_equal(pipe(p.fd), 0);
	/* the reader first: it blocks in read before the worker starts */
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, pipe_reader, &p, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, pipe_worker, &p, NULL, &t[1]), 0);
	assert_int_equal(asx_asc_thread_join(t[1], NULL), 0);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	assert_int_equal(p.progress_at_read, 1000);
	/* nothing was spare-VP'd for it: the read parked, it did not block the VP */
	struct asx_asc_stats st;

	assert_int_equal(asx_asc_stats(a, &st), 0);
	assert_int_equal(st.spares_made, 0);
	/* a wait that times out, from a plain pthread */
	assert_int_equal(asx_asc_thread_wait_fd(p.fd[0], POLLIN, asx_deadline(&ts, 10 * MS)),
			 -ETIMEDOUT);
	close(p.fd[0]);
	close(p.fd[1]);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

static void *fd_timeout(void *arg)
{
	int *fd = arg;
	struct timespec ts;
	uint64_t t0 = asx_now_ns();

	CHECK(asx_asc_thread_wait_fd(fd[0], POLLIN, asx_deadline(&ts, 20 * MS)) == -ETIMEDOUT);
	CHECK(asx_now_ns() - t0 >= 20 * MS);
	return NULL;
}

static void test_wait_fd_timeout(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[4];
	int fd[2];

	assert_int_equal(pipe(fd), 0);
	for (int i = 0; i < 4; i++)	/* same fd, four waiters */
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, fd_timeout, fd, NULL, &t[i]), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	close(fd[0]);
	close(fd[1]);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* ---------------------------------------------------------------- blocking calls, spares */

static void *nap(void *arg)
{
	struct timespec req = { 0, 200 * (long)MS };
	int *done = arg, i;

	/*
	 * The other thread can only run while this one sleeps (one VP, and no
	 * yield here): on a spare. A loaded host may need more than one nap.
	 */
	for (i = 0; i < 50 && !__atomic_load_n(done, __ATOMIC_ACQUIRE); i++) {
		/* a VP-blocking call (asx_asc_nanosleep parks the thread) */
		asx_asc_blocking_begin();
		CHECK(nanosleep(&req, NULL) == 0);
		asx_asc_blocking_end();
	}
	CHECK(__atomic_load_n(done, __ATOMIC_ACQUIRE) == 1);	/* the other ran meanwhile */
	return NULL;
}

static void *worker_done(void *arg)
{
	int *done = arg;

	for (int i = 0; i < 100; i++)
		asx_asc_thread_yield();
	__atomic_store_n(done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_blocking_spare(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[2];
	struct asx_asc_stats st;
	int done = 0;

	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, nap, &done, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, worker_done, &done, NULL, &t[1]), 0);
	assert_int_equal(asx_asc_thread_join(t[1], NULL), 0);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	assert_int_equal(asx_asc_stats(a, &st), 0);
	assert_true(st.spares_made >= 1);
	assert_int_equal(st.vps_target, 1);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* ---------------------------------------------------------------- activation */

static int act_flags[2];

static void *act_spinner(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint64_t end = asx_now_ns() + 5000 * MS;

	__atomic_store_n(&act_flags[me], 1, __ATOMIC_RELEASE);
	/* never yields: only a second VP lets the other thread run */
	while (!__atomic_load_n(&act_flags[!me], __ATOMIC_ACQUIRE) && asx_now_ns() < end)
		;
	CHECK(__atomic_load_n(&act_flags[!me], __ATOMIC_ACQUIRE));
	return NULL;
}

static void *act_gate(void *arg)
{
	struct asx_asc_thread **t = arg;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);

	for (int i = 0; i < 2; i++)
		CHECK(asx_asc_thread_spawn(asx_asc_thread_asc(asx_asc_thread_self()), &q.qos, act_spinner,
				       (void *)(intptr_t)i, NULL, &t[i]) == 0);
	return NULL;
}

static void test_activation(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 2, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[2];

	struct asx_asc_thread *g;

	act_flags[0] = act_flags[1] = 0;
	/* spawned from inside, so the activation policy decides (deferred) */
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, act_gate, t, NULL, &g), 0);
	assert_int_equal(asx_asc_thread_join(g, NULL), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* ---------------------------------------------------------------- modes */

static void *yield_some(void *arg)
{
	for (int i = 0; i < 1000; i++)
		asx_asc_thread_yield();
	return arg;
}

static void test_mode_switch(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0), *b;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[4];

	assert_true(asx_asc_single_vp_mode());
	for (int i = 0; i < 2; i++)
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, yield_some, NULL, NULL, &t[i]), 0);
	/* a second ASC while the first is yielding: the locked path at run time */
	b = mk_asc(&asx_asc_prio, 1, 0);
	assert_false(asx_asc_single_vp_mode());
	for (int i = 2; i < 4; i++)
		assert_int_equal(asx_asc_thread_spawn(i == 2 ? a : b, &q.qos, yield_some, NULL, NULL,
						  &t[i]), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(asx_asc_destroy(b), 0);
	assert_true(asx_asc_single_vp_mode());
	assert_int_equal(asx_asc_add_vp(a), 0);
	assert_false(asx_asc_single_vp_mode());
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_true(asx_asc_single_vp_mode());
	assert_threads_ok();
}

/* ---------------------------------------------------------------- preemption */

static void *spinner(void *arg)
{
	int *flag = arg;
	uint64_t end = asx_now_ns() + 20000 * MS;

	/* pure user code: never yields; only preemption lets the setter run */
	while (!__atomic_load_n(flag, __ATOMIC_RELAXED)) {
		static volatile unsigned long x;

		x++;
		if ((x & 0xfffff) == 0 && asx_now_ns() > end)
			break;
	}
	CHECK(__atomic_load_n(flag, __ATOMIC_RELAXED));
	return NULL;
}

static void *setter(void *arg)
{
	__atomic_store_n((int *)arg, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void test_preemption(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, ASX_ASC_TIMESLICED);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[2];
	int flag = 0;

	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, spinner, &flag, NULL, &t[0]), 0);
	usleep(20000);	/* the spinner has the VP */
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, setter, &flag, NULL, &t[1]), 0);
	assert_int_equal(asx_asc_thread_join(t[1], NULL), 0);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	assert_int_equal(flag, 1);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/*
 * A tick never switches threads inside libasx: its code is recognised by
 * address even here, where it is linked statically into the test.
 */
bool asx__preempt_excluded(const void *pc);	/* asc/asc_impl.h */

static void test_preempt_excludes_libasx(void **state)
{
	(void)state;
	assert_true(asx__preempt_excluded((const void *)asx_asc_thread_yield));
	assert_true(asx__preempt_excluded((const void *)asx_asc_create));
	assert_true(asx__preempt_excluded((const void *)asx__preempt_excluded));
	/* libc too; the program's own code is preemptible */
	assert_true(asx__preempt_excluded((const void *)memcpy));
	assert_false(asx__preempt_excluded((const void *)spinner));
	assert_false(asx__preempt_excluded((const void *)test_preempt_excludes_libasx));
}

/* ---------------------------------------------------------------- EDF */

struct job {
	uint64_t work;
	int runs;
};

static void *edf_job(void *arg)
{
	struct job *j = arg;

	CHECK(asx_asc_thread_deadline() != 0);
	busy_ns(j->work);
	j->runs++;
	return NULL;
}

static void test_edf(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_edf, 1, 0);
	/* long periods: a loaded 2-core host may stall a VP for tens of ms */
	struct asx_edf_qos q1 = ASX_EDF_QOS(0, 100 * MS, 10 * MS, 8);
	struct asx_edf_qos q2 = ASX_EDF_QOS(0, 150 * MS, 15 * MS, 6);
	struct asx_edf_qos big = ASX_EDF_QOS(0, 10 * MS, 9 * MS, 1);	/* 0.9 */
	struct job j1 = { 1 * MS, 0 }, j2 = { 2 * MS, 0 };
	struct asx_asc_thread *t[3];
	struct asx_asc_stats st;

	assert_int_equal(asx_asc_thread_spawn(a, &q1.qos, edf_job, &j1, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q2.qos, edf_job, &j2, NULL, &t[1]), 0);
	/* 0.1 + 0.1 + 0.9 > 1: refused, nothing changes */
	assert_int_equal(asx_asc_thread_spawn(a, &big.qos, edf_job, &j1, NULL, &t[2]), -EBUSY);
	assert_int_equal(asx_asc_stats(a, &st), 0);
	assert_true(st.utilisation > 0.19 && st.utilisation < 0.21);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	assert_int_equal(asx_asc_thread_join(t[1], NULL), 0);
	assert_int_equal(j1.runs, 8);
	assert_int_equal(j2.runs, 6);
	assert_int_equal(asx_asc_stats(a, &st), 0);
	assert_int_equal(st.jobs, 14);
	assert_int_equal(st.misses, 0);
	assert_true(st.utilisation < 1e-9);

	/* under-declared budgets: the jobs overrun their deadlines, misses are
	 * counted, and admission then refuses while the miss ratio is high */
	struct asx_edf_qos liar = ASX_EDF_QOS(0, 5 * MS, 1 * MS, 40);
	struct job jl = { 12 * MS, 0 };

	assert_int_equal(asx_asc_thread_spawn(a, &liar.qos, edf_job, &jl, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	assert_int_equal(asx_asc_stats(a, &st), 0);
	assert_true(st.misses >= 30);
	struct asx_edf_qos small = ASX_EDF_QOS(0, 100 * MS, 1 * MS, 1);

	assert_int_equal(asx_asc_thread_spawn(a, &small.qos, edf_job, &j1, NULL, &t[0]), -EBUSY);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* ---------------------------------------------------------------- migration */

static struct asx_asc *mig_prio, *mig_edf;
static int mig_calls;

static void *migrant(void *arg)
{
	(void)arg;
	if (mig_calls++ == 0) {
		struct asx_edf_qos e = ASX_EDF_QOS(7, 10 * MS, 1 * MS, 4);
		struct asx_edf_qos bad = ASX_EDF_QOS(7, 10 * MS, 10 * MS + 1, 4);
		struct asx_edf_qos over = ASX_EDF_QOS(7, 10 * MS, 6 * MS, 4);
		struct asx_prio_qos wrong = ASX_PRIO_QOS(1);

		CHECK(asx_asc_thread_change(mig_edf, &bad.qos) == -EINVAL);	/* budget > deadline */
		CHECK(asx_asc_thread_change(mig_edf, &wrong.qos) == -EINVAL);	/* not EDF's schema */
		/* 0.6 > util_max 0.5: refused by admission, nothing changes */
		CHECK(asx_asc_thread_change(mig_edf, &over.qos) == -EBUSY);
		CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == mig_prio);

		CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == mig_prio);
		CHECK(asx_asc_thread_deadline() == 0);
		CHECK(asx_asc_thread_change(mig_edf, &e.qos) == 0);
		/* the same thread, still running, now under EDF */
		CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == mig_edf);
		CHECK(asx_asc_thread_deadline() != 0);
		return NULL;	/* EDF runs the entry point again each period */
	}
	CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == mig_edf);
	if (mig_calls == 4) {
		struct asx_prio_qos p = ASX_PRIO_QOS(3);

		CHECK(asx_asc_thread_change(mig_prio, &p.qos) == 0);
		CHECK(asx_asc_thread_asc(asx_asc_thread_self()) == mig_prio);
		asx_asc_thread_exit((void *)42);
	}
	return NULL;
}

static void test_migration(void **state)
{
	(void)state;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t;
	struct asx_asc_stats st;
	void *r = NULL;

	struct asx_asc_opts ea = { .sz = sizeof(ea), .util_max = 0.5 };

	mig_prio = mk_asc(&asx_asc_prio, 1, 0);
	assert_int_equal(asx_asc_create(&mig_edf, &asx_asc_edf, &ea), 0);
	mig_calls = 0;
	assert_int_equal(asx_asc_thread_spawn(mig_prio, &q.qos, migrant, NULL, NULL, &t), 0);
	assert_int_equal(asx_asc_thread_join(t, &r), 0);
	assert_ptr_equal(r, (void *)42);
	assert_int_equal(mig_calls, 4);
	assert_int_equal(asx_asc_stats(mig_edf, &st), 0);
	assert_int_equal(st.jobs, 3);
	assert_int_equal(st.threads, 0);
	assert_int_equal(asx_asc_destroy(mig_edf), 0);
	assert_int_equal(asx_asc_destroy(mig_prio), 0);
	assert_threads_ok();
}

/*
 * Migration between two PRIO ASCs at the same priority: the thread must
 * run on the target's VP, not be queued on the level it had in the ASC it
 * left (the stress harness found threads stranded that way).
 */
static struct asx_asc *same_a, *same_b;
static pid_t vp_of_a, vp_of_b;

/* the VP's kernel thread id (pthread_self() is "const": a compiler may
 * keep it across a switch to another VP) */
static pid_t vp_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void *note_vp(void *arg)
{
	*(pid_t *)arg = vp_tid();
	return NULL;
}

static void *same_prio_migrant(void *arg)
{
	struct asx_prio_qos q = ASX_PRIO_QOS(0);

	(void)arg;
	for (int i = 0; i < 20; i++) {
		CHECK(asx_asc_thread_change(same_b, &q.qos) == 0);
		asx_asc_thread_yield();
		CHECK(vp_tid() == vp_of_b);
		CHECK(asx_asc_thread_change(same_a, &q.qos) == 0);
		asx_asc_thread_yield();
		CHECK(vp_tid() == vp_of_a);
	}
	return (void *)7;
}

static void test_migration_same_prio(void **state)
{
	(void)state;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t;
	unsigned long progress = 0;
	struct watchdog wd;
	void *r = NULL;

	same_a = mk_asc(&asx_asc_prio, 1, 0);
	same_b = mk_asc(&asx_asc_prio, 1, 0);
	watchdog_start(&wd, "migration at the same priority", &progress, same_a, 20);
	assert_int_equal(asx_asc_thread_spawn(same_a, &q.qos, note_vp, &vp_of_a, NULL, &t), 0);
	assert_int_equal(asx_asc_thread_join(t, NULL), 0);
	assert_int_equal(asx_asc_thread_spawn(same_b, &q.qos, note_vp, &vp_of_b, NULL, &t), 0);
	assert_int_equal(asx_asc_thread_join(t, NULL), 0);
	assert_int_equal(asx_asc_thread_spawn(same_a, &q.qos, same_prio_migrant, NULL, NULL, &t), 0);
	assert_int_equal(asx_asc_thread_join(t, &r), 0);
	assert_ptr_equal(r, (void *)7);
	watchdog_stop(&wd);
	assert_int_equal(asx_asc_destroy(same_b), 0);
	assert_int_equal(asx_asc_destroy(same_a), 0);
	assert_threads_ok();
}

/*
 * The first timer leaves the heap before it fires (a timed wait woken in
 * time): the timerfd still fires for it, finds nothing due, and must be
 * armed again for the next timer, or a sleeper behind it sleeps for ever
 * (found by the stress harness).
 */
static struct asx_asc_sem top_sem;
static int top_slept, top_wait_ret;

/* The sleeper's and the early waiter's times: the waiter's timer is first. */
#define TOP_SLEEP_MS 200
#define TOP_WAIT_MS 100

static void *long_sleeper(void *arg)
{
	(void)arg;
	asx_asc_thread_sleep(TOP_SLEEP_MS * MS);
	__atomic_store_n(&top_slept, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *early_waiter(void *arg)
{
	struct timespec ts;

	(void)arg;
	/* becomes the first timer (due before the sleeper's), then is
	 * posted before its deadline (or, on a machine too loaded for that,
	 * times out: the attempt is made again) */
	top_wait_ret = asx_asc_sem_timedwait(&top_sem, asx_deadline(&ts, TOP_WAIT_MS * MS));
	return NULL;
}

static void *poster(void *arg)
{
	(void)arg;
	asx_asc_thread_yield();
	asx_asc_sem_post(&top_sem);
	return NULL;
}

static void noop_timer(void *arg)
{
	(void)arg;
}

/* A timer due long ago is the new first one: the timerfd is armed again. */
static void *rescuer(void *arg)
{
	struct timespec past = { 0, 1 };

	(void)arg;
	CHECK(asx_asc_thread_timer_set(0, &past, 0, noop_timer, NULL) == 0);
	asx_asc_thread_sleep(1 * MS);
	CHECK(asx_asc_thread_timer_set(0, NULL, 0, NULL, NULL) == 0);
	return NULL;
}

static void test_timer_top_removed(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[3], *rescue;
	int attempt, posted = 0;
	uint64_t end;
	bool woke = true;

	/* a loaded machine may let the waiter time out first: up to 10 tries */
	for (attempt = 0; attempt < 10 && !posted && woke; attempt++) {
		asx_asc_sem_init(&top_sem, 0);
		top_slept = 0;
		top_wait_ret = 1;
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, long_sleeper, NULL, NULL, &t[0]),
				 0);
		busy_ns(5 * MS);	/* asleep, its timer armed */
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, early_waiter, NULL, NULL, &t[1]),
				 0);
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, poster, NULL, NULL, &t[2]), 0);
		assert_int_equal(asx_asc_thread_join(t[1], NULL), 0);
		assert_int_equal(asx_asc_thread_join(t[2], NULL), 0);
		posted = top_wait_ret == 0;
		if (!posted)
			assert_int_equal(top_wait_ret, -ETIMEDOUT);
		/* the sleep: allow a loaded machine 5 s */
		end = asx_now_ns() + 5000 * MS;
		while (!__atomic_load_n(&top_slept, __ATOMIC_ACQUIRE) && asx_now_ns() < end) {
			struct timespec nap = { 0, 2 * (long)MS };

			nanosleep(&nap, NULL);
		}
		woke = __atomic_load_n(&top_slept, __ATOMIC_ACQUIRE);
		if (!woke) {
			print_error("sleeper not woken 5 s after its %d ms sleep\n", TOP_SLEEP_MS);
			/* let it finish */
			assert_int_equal(asx_asc_thread_spawn(a, &q.qos, rescuer, NULL, NULL,
							      &rescue), 0);
			assert_int_equal(asx_asc_thread_join(rescue, NULL), 0);
		}
		assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	}
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_true(woke);
	assert_true(posted);	/* the first timer left the heap before it fired */
	assert_threads_ok();
}

/* ---------------------------------------------------------------- DIRECT */

static struct asx_asc_barrier dbar;
static void *direct_thread(void *arg)
{
	struct asx_asc_stats st;

	asx_asc_barrier_wait(&dbar);	/* all four exist at once */
	CHECK(asx_asc_stats(arg, &st) == 0);
	CHECK(st.vps == 4);
	asx_asc_barrier_wait(&dbar);
	return NULL;
}

static void test_direct(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_direct, 0, 0);
	struct asx_direct_qos q = ASX_DIRECT_QOS();
	struct asx_asc_thread *t[4];

	assert_int_equal(asx_asc_barrier_init(&dbar, 4), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_spawn(a, i & 1 ? NULL : &q.qos, direct_thread, a,
						  NULL, &t[i]), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* ---------------------------------------------------------------- VP activation */

struct ring {
	int token, n, stop;
	int compute;		/* atomic: compute 100 us between yields */
	unsigned long rounds;
};

struct ring_self {
	struct ring *r;
	int me;
};

static void *ring_thread(void *arg)
{
	struct ring_self *s = arg;
	struct ring *r = s->r;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&r->token, __ATOMIC_ACQUIRE) == s->me) {
			__atomic_store_n(&r->token, (s->me + 1) % r->n, __ATOMIC_RELEASE);
			if (!s->me)
				__atomic_add_fetch(&r->rounds, 1, __ATOMIC_RELAXED);
		}
		if (__atomic_load_n(&r->compute, __ATOMIC_RELAXED))
			busy_ns(100000);
		asx_asc_thread_yield();
	}
	return NULL;
}

struct burst {
	int stop;
};

static void *burst_thread(void *arg)
{
	struct burst *b = arg;

	/* computes 100 us between yields: a VP of its own is worth having */
	while (!__atomic_load_n(&b->stop, __ATOMIC_ACQUIRE)) {
		busy_ns(100000);
		asx_asc_thread_yield();
	}
	return NULL;
}

/* fraction of 1 ms samples over @ms in which @a had @n VPs running */
static double running_share(struct asx_asc *a, unsigned int n, int ms)
{
	struct asx_asc_stats st;
	int hit = 0;

	for (int i = 0; i < ms; i++) {
		assert_int_equal(asx_asc_stats(a, &st), 0);
		hit += st.vps_running == n;
		usleep(1000);
	}
	return (double)hit / ms;
}

/*
 * The best of up to five windows: a loaded host can stall a VP for a whole
 * window, but a policy that never settles on @n VPs scores near 0 in every
 * one. On a quiet host the share is above 0.9; the tests ask for half.
 */
#define SETTLED		0.5

static double settled_share(struct asx_asc *a, unsigned int n, int ms)
{
	double best = 0, s;

	for (int i = 0; i < 5 && best < SETTLED; i++) {
		s = running_share(a, n, ms);
		if (s > best)
			best = s;
	}
	return best;
}

/* Four PRIO threads of @a in ring @r, then 50 ms to settle. */
static void ring_start(struct asx_asc *a, struct ring *r, struct ring_self rs[4],
		       struct asx_asc_thread *t[4])
{
	struct asx_prio_qos q = ASX_PRIO_QOS(0);

	for (int i = 0; i < 4; i++) {
		rs[i].r = r;
		rs[i].me = i;
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ring_thread, &rs[i], NULL, &t[i]), 0);
	}
	usleep(50000);
}

/*
 * A ring of threads that only yield to each other on a 2-VP PRIO ASC:
 * the second VP is surplus (it only adds cross-CPU traffic), and the
 * activation policy gives it back; threads that compute between yields
 * keep both.
 */
static void test_surplus_vp(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 2, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct ring r = { .n = 4 };
	struct ring_self rs[4];
	struct burst b = { 0 };
	struct asx_asc_thread *t[4];
	double share;

	ring_start(a, &r, rs, t);		/* a few windows to settle */
	share = settled_share(a, 1, 200);
	print_message("  yielding ring: 1 VP running in %.0f%% of samples\n", share * 100);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_true(__atomic_load_n(&r.rounds, __ATOMIC_RELAXED) > 0);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
	/* (sanitized switches take microseconds: the threads then look busy) */
	assert_true(share >= SETTLED);
#endif

	for (int i = 0; i < 2; i++)
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, burst_thread, &b, NULL, &t[i]), 0);
	usleep(20000);
	share = settled_share(a, 2, 100);
	print_message("  burst threads: 2 VPs running in %.0f%% of samples\n", share * 100);
	__atomic_store_n(&b.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_true(share >= SETTLED);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/*
 * The same threads first only yield to each other (one VP is enough: the
 * second is given back), then compute 100 us between yields: the second
 * VP must come back, although no thread becomes runnable (the usual
 * reason to look for one) and none is spawned.  Regression: a VP given
 * back as surplus left nothing watching whether the rest kept up, and
 * the ASC ran on one VP for good.
 */
static void test_surplus_vp_comes_back(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 2, 0);
	struct ring r = { .n = 4 };
	struct ring_self rs[4];
	struct asx_asc_thread *t[4];
	double one, two;

	ring_start(a, &r, rs, t);
	one = settled_share(a, 1, 200);
	__atomic_store_n(&r.compute, 1, __ATOMIC_RELAXED);
	usleep(20000);
	two = settled_share(a, 2, 100);
	print_message("  yielding: 1 VP in %.0f%% of samples; computing: 2 VPs in %.0f%%\n",
		      one * 100, two * 100);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_true(two >= SETTLED);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *idle_nap(void *arg)
{
	struct timespec req = { 0, 30 * (long)MS };

	(void)arg;
	asx_asc_blocking_begin();	/* blocks the VP: spares stand in */
	nanosleep(&req, NULL);
	asx_asc_blocking_end();
	return NULL;
}

static void *lone_yielder(void *arg)
{
	uint64_t end = asx_now_ns() + 200 * MS;

	(void)arg;
	while (asx_now_ns() < end)
		asx_asc_thread_yield();
	return NULL;
}

/* Idle VPs, spares included, are parked: they cost no CPU. */
static void test_idle_vps(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 4, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[8];
	struct asx_asc_stats st;
	uint64_t c0, w0, c, w;

	for (int i = 0; i < 8; i++)
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, idle_nap, NULL, NULL, &t[i]), 0);
	for (int i = 0; i < 8; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(asx_asc_stats(a, &st), 0);
	assert_true(st.vps >= 5);	/* spares were made */
	usleep(20000);
	/* nothing to run: the whole process (VPs, spares, sentinel) sleeps */
	c0 = cpu_ns();
	w0 = asx_now_ns();
	usleep(300000);
	c = cpu_ns() - c0;
	w = asx_now_ns() - w0;
	assert_true(c < w / 20 + 5 * MS);
	assert_int_equal(asx_asc_stats(a, &st), 0);
	assert_int_equal(st.vps_running, 0);

	/* one thread yielding alone keeps one CPU busy, and only one */
	c0 = cpu_ns();
	w0 = asx_now_ns();
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, lone_yielder, NULL, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	c = cpu_ns() - c0;
	w = asx_now_ns() - w0;
	assert_true(c < w + w / 4 + 10 * MS);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/* ---------------------------------------------------------------- signals */

struct sigt {
	sigset_t set;
	int got, progress, done;
	siginfo_t info;
	int timeout_r;
	uint64_t timeout_ns;
};

static void *sig_waiter(void *arg)
{
	struct sigt *s = arg;
	struct timespec ts;

	s->got = asx_asc_thread_wait_signal(&s->set, &s->info, asx_deadline(&ts, 5000 * MS));
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *sig_worker(void *arg)
{
	struct sigt *s = arg;

	while (!__atomic_load_n(&s->done, __ATOMIC_ACQUIRE)) {
		__atomic_add_fetch(&s->progress, 1, __ATOMIC_RELAXED);
		asx_asc_thread_yield();
	}
	return NULL;
}

static void *sig_timeout(void *arg)
{
	struct sigt *s = arg;
	struct timespec ts;
	sigset_t two;
	uint64_t t0 = asx_now_ns();

	sigemptyset(&two);
	sigaddset(&two, SIGUSR2);
	s->timeout_r = asx_asc_thread_wait_signal(&two, NULL, asx_deadline(&ts, 30 * MS));
	s->timeout_ns = asx_now_ns() - t0;
	return NULL;
}

/*
 * Activation modes where asx.ko is not loaded (the host): ON fails with the
 * reason, AUTO falls back to the wrapper path, a bad mode or environment
 * value is refused, DIRECT cannot take them.  The module side is
 * selftests/asx/lib/asc_sa_test.c, run in the VM.
 */
static void test_activation_modes(void **state)
{
	struct asx_asc_opts at = { .sz = sizeof(at), .nvps = 1 };
	struct asx_asc_stats st;
	struct asx_asc *a = NULL;

	(void)state;
	if (access("/dev/asx", F_OK) == 0)
		skip();
	unsetenv("ASX_ASC_ACTIVATIONS");
	at.activations = ASX_ASC_ACT_ON;
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), -ENODEV);
	at.activations = (enum asx_asc_activations)(ASX_ASC_ACT_ON + 1);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), -EINVAL);
	at.activations = ASX_ASC_ACT_ON;
	assert_int_equal(asx_asc_create(&a, &asx_asc_direct, &at), -EOPNOTSUPP);

	at.activations = ASX_ASC_ACT_AUTO;
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), 0);
	assert_int_equal(asx_asc_stats(a, &st), 0);
	assert_false(st.activations);
	assert_int_equal(st.vps, 1);	/* no spare pool without activations */
	assert_int_equal(asx_asc_destroy(a), 0);

	/* DEFAULT reads the environment */
	at.activations = ASX_ASC_ACT_DEFAULT;
	setenv("ASX_ASC_ACTIVATIONS", "on", 1);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), -ENODEV);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, NULL), -ENODEV);
	setenv("ASX_ASC_ACTIVATIONS", "sometimes", 1);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), -EINVAL);
	setenv("ASX_ASC_ACTIVATIONS", "auto", 1);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	setenv("ASX_ASC_ACTIVATIONS", "off", 1);
	at.activations = ASX_ASC_ACT_OFF;
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	unsetenv("ASX_ASC_ACTIVATIONS");
	/* an attr from before the field: the default */
	at.sz = offsetof(struct asx_asc_opts, activations);
	at.activations = ASX_ASC_ACT_ON;
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
}

/* Attribute structs are size-checked like the other option structs. */
static void test_attr_size(void **state)
{
	(void)state;
	struct big_attr {
		struct asx_asc_opts at;
		uint64_t future;
	} big = { .at = { .sz = sizeof(big), .nvps = 1 } };
	struct big_tattr {
		struct asx_asc_thread_opts at;
		uint64_t future;
	} tbig = { .at = { .sz = sizeof(tbig) } };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc *a = NULL;
	struct asx_asc_thread *t = NULL;
	void *r;

	ASX_OPTS(struct asx_asc_opts, at, .nvps = 2, .name = "attr");
	ASX_OPTS(struct asx_asc_thread_opts, ta, .name = "named");

	assert_int_equal(at.sz, sizeof(struct asx_asc_opts));
	assert_int_equal(ta.sz, sizeof(struct asx_asc_thread_opts));
	/* a zero tail beyond the known fields is fine, anything else is not */
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &big.at), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	big.future = 1;
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &big.at), -E2BIG);
	big.at.sz = 0;
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &big.at), -EINVAL);
	big.at.sz = sizeof(size_t) - 1;
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &big.at), -EINVAL);

	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &at), 0);
	assert_string_equal(asx_asc_name(a), "attr");
	tbig.future = 2;
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ret_arg, NULL, &tbig.at, &t), -E2BIG);
	tbig.at.sz = 1;
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ret_arg, NULL, &tbig.at, &t), -EINVAL);
	/* an older, shorter struct: the fields it lacks are defaults */
	tbig.at = (struct asx_asc_thread_opts){ .sz = offsetof(struct asx_asc_thread_opts, name),
					    .name = "not read", .detached = true };
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ret_arg, (void *)5, &tbig.at, &t), 0);
	assert_string_equal(asx_asc_thread_name(t), "");
	assert_int_equal(asx_asc_thread_join(t, &r), 0);	/* not detached */
	assert_ptr_equal(r, (void *)5);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, ret_arg, (void *)6, &ta, &t), 0);
	assert_string_equal(asx_asc_thread_name(t), "named");
	assert_int_equal(asx_asc_thread_join(t, &r), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_threads_ok();
}

/*
 * Valgrind's memcheck for the architecture this binary was built for
 * (NULL: valgrind does not run it, e.g. an aarch64 build under qemu-user
 * on an x86-64 host, whose valgrind has only amd64 and x86 tools).
 */
static __attribute__((unused)) const char *valgrind_memcheck_tool(void)
{
#if defined(__x86_64__)
	static const char tool[] = "/usr/libexec/valgrind/memcheck-amd64-linux";
#elif defined(__aarch64__)
	static const char tool[] = "/usr/libexec/valgrind/memcheck-arm64-linux";
#else
	static const char tool[] = "";
#endif
	return tool[0] && !access(tool, X_OK) ? tool : NULL;
}

/*
 * Under valgrind an ASC program is clean: user-thread stacks are known to
 * it (a switch is a stack switch, not a wild stack-pointer move), and the
 * sentinel is joined at exit once every ASC is gone (nothing left in
 * use).  Runs this binary's sync test under valgrind when it is installed
 * for this architecture (skipped otherwise).
 */
static void test_valgrind_clean(void **state)
{
	(void)state;
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
	skip();
#else
	char self[4096], cmd[4300];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int r;

	if (n <= 0 || access("/usr/bin/valgrind", X_OK) || !valgrind_memcheck_tool())
		skip();
	self[n] = 0;
	snprintf(cmd, sizeof(cmd), "ASX_TEST_FILTER=test_sync_3vp valgrind -q --leak-check=full "
		 "--show-leak-kinds=all --errors-for-leak-kinds=all --error-exitcode=9 '%s' "
		 ">/dev/null 2>/tmp/asx_test_asc_valgrind.%d.log", self, (int)getpid());
	r = system(cmd);
	if (r != 0)
		print_error("valgrind: status %d, see /tmp/asx_test_asc_valgrind.%d.log\n", r,
			    (int)getpid());
	else
		snprintf(cmd, sizeof(cmd), "/tmp/asx_test_asc_valgrind.%d.log", (int)getpid()),
		unlink(cmd);
	assert_int_equal(r, 0);
#endif
}

/*
 * A wrapped call that fails leaves its errno in the VP the thread comes
 * back on: blocking_end() may hand the thread to another VP (the one that
 * stood in for the blocked VP), and errno is a VP's (TSan caught the
 * wrapper writing the old VP's errno in the stress harness).
 */
static __attribute__((noipa)) int errno_now(void)
{
	return errno;
}

static int errno_stop;

static void *errno_spinner(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&errno_stop, __ATOMIC_ACQUIRE))
		asx_asc_thread_yield();
	return NULL;
}

static void *errno_caller(void *arg)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int *moved = arg;

	for (int i = 0; i < 300; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		pid_t before = (pid_t)syscall(SYS_gettid);

		CHECK(fd >= 0);
		sin.sin_port = 0;	/* port 0: refused at once */
		errno = 0;
		CHECK(asx_asc_connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1);
		if ((pid_t)syscall(SYS_gettid) != before)
			(*moved)++;
		CHECK(errno_now() != 0);
		close(fd);
		asx_asc_thread_yield();
	}
	__atomic_store_n(&errno_stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_wrapper_errno(void **state)
{
	(void)state;
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[3];
	int moved = 0;

	errno_stop = 0;
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, errno_caller, &moved, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, errno_spinner, NULL, NULL, &t[1]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, errno_spinner, NULL, NULL, &t[2]), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
	print_message("wrapper errno: thread came back on another VP %d times\n", moved);
	assert_threads_ok();
}

static void test_wait_signal(void **state)
{
	(void)state;
	struct sigt s = { 0 };
	sigset_t blk, old, bad;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[3];
	struct timespec ts;
	union sigval v = { .sival_int = 4242 };
	uint64_t t0;

	/* blocked everywhere: before the ASC (its VPs inherit the mask) */
	sigemptyset(&blk);
	sigaddset(&blk, SIGUSR1);
	sigaddset(&blk, SIGUSR2);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &blk, &old), 0);
	struct asx_asc *a = mk_asc(&asx_asc_prio, 1, 0);

	sigemptyset(&s.set);
	sigaddset(&s.set, SIGUSR1);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, sig_waiter, &s, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, sig_worker, &s, NULL, &t[1]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, sig_timeout, &s, NULL, &t[2]), 0);
	/* the waiter does not hold the 1-VP ASC's only VP */
	t0 = asx_now_ns();
	while (__atomic_load_n(&s.progress, __ATOMIC_RELAXED) < 1000 &&
	       asx_now_ns() - t0 < 5000 * MS)
		usleep(1000);
	assert_true(__atomic_load_n(&s.progress, __ATOMIC_RELAXED) >= 1000);
	assert_int_equal(__atomic_load_n(&s.done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(sigqueue(getpid(), SIGUSR1, v), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(s.got, SIGUSR1);
	assert_int_equal(s.info.si_signo, SIGUSR1);
	assert_int_equal(s.info.si_pid, getpid());
	assert_int_equal(s.info.si_code, SI_QUEUE);
	assert_int_equal(s.info.si_value.sival_int, 4242);
	assert_int_equal(s.timeout_r, -ETIMEDOUT);
	assert_true(s.timeout_ns >= 30 * MS);

	/* a signal pending before the wait is taken at once */
	assert_int_equal(kill(getpid(), SIGUSR2), 0);
	sigemptyset(&s.set);
	sigaddset(&s.set, SIGUSR2);
	s.done = 0;
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, sig_waiter, &s, NULL, &t[0]), 0);
	assert_int_equal(asx_asc_thread_join(t[0], NULL), 0);
	assert_int_equal(s.got, SIGUSR2);
	assert_int_equal(s.info.si_code, SI_USER);

	/* refusals; a plain pthread waits in the kernel */
	sigemptyset(&bad);
	assert_int_equal(asx_asc_thread_wait_signal(&bad, NULL, NULL), -EINVAL);
	sigaddset(&bad, SIGKILL);
	assert_int_equal(asx_asc_thread_wait_signal(&bad, NULL, NULL), -EINVAL);
	sigemptyset(&bad);
	sigaddset(&bad, SIGWINCH);	/* not blocked */
	assert_int_equal(asx_asc_thread_wait_signal(&bad, NULL, NULL), -EINVAL);
	assert_int_equal(asx_asc_thread_wait_signal(&s.set, NULL, asx_deadline(&ts, 10 * MS)),
			 -ETIMEDOUT);
	assert_int_equal(kill(getpid(), SIGUSR2), 0);
	assert_int_equal(asx_asc_thread_wait_signal(&s.set, NULL, asx_deadline(&ts, 1000 * MS)),
			 SIGUSR2);

	assert_int_equal(asx_asc_destroy(a), 0);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	assert_threads_ok();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawn_join),
		cmocka_unit_test(test_fp_state),
		cmocka_unit_test(test_switch_counts),
		cmocka_unit_test(test_prio_order),
		cmocka_unit_test(test_qos_change),
		cmocka_unit_test(test_many_threads_1vp),
		cmocka_unit_test(test_many_threads_2vp),
		cmocka_unit_test(test_sync_1vp),
		cmocka_unit_test(test_sync_3vp),
		cmocka_unit_test(test_mutex_across_yield_3vp),
		cmocka_unit_test(test_sem_from_pthread),
		cmocka_unit_test(test_sleep),
		cmocka_unit_test(test_timer_top_removed),
		cmocka_unit_test(test_thread_timers),
		cmocka_unit_test(test_pipe_read),
		cmocka_unit_test(test_wait_fd_timeout),
		cmocka_unit_test(test_blocking_spare),
		cmocka_unit_test(test_activation),
		cmocka_unit_test(test_mode_switch),
		cmocka_unit_test(test_preemption),
		cmocka_unit_test(test_preempt_excludes_libasx),
		cmocka_unit_test(test_edf),
		cmocka_unit_test(test_migration),
		cmocka_unit_test(test_migration_same_prio),
		cmocka_unit_test(test_direct),
		cmocka_unit_test(test_surplus_vp),
		cmocka_unit_test(test_surplus_vp_comes_back),
		cmocka_unit_test(test_idle_vps),
		cmocka_unit_test(test_wait_signal),
		cmocka_unit_test(test_activation_modes),
		cmocka_unit_test(test_attr_size),
		cmocka_unit_test(test_valgrind_clean),
		cmocka_unit_test(test_wrapper_errno),
	};

	if (getenv("ASX_TEST_FILTER"))	/* e.g. ASX_TEST_FILTER='test_edf' */
		cmocka_set_test_filter(getenv("ASX_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
