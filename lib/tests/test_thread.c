// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* test_thread.c - the Thread Manager and thread-specific storage. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <asx/asc.h>
#include <asx/sync.h>
#include <asx/thread.h>

#define MS	1000000ULL

/* A gate threads block on without reaching any test point. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	bool open;
};

static void gate_init(struct gate *g)
{
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->open = false;
}

static void gate_pass(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->cv, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_open(struct gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->lock);
}

static void gate_fini(struct gate *g)
{
	pthread_cond_destroy(&g->cv);
	pthread_mutex_destroy(&g->lock);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / ASX_NSEC_PER_SEC), (long)(ns % ASX_NSEC_PER_SEC) };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static struct timespec *in_ms(struct timespec *ts, uint64_t ms)
{
	return asx_deadline(ts, ms * MS);
}

/* ------------------------------------------------------------ spawn */

#define NSPAWN 16

struct spawn_ctx {
	atomic_int runs;
	atomic_int slot;
	int self_ids[NSPAWN];
	int groups[NSPAWN];
};

static void *spawn_fn(void *arg)
{
	struct spawn_ctx *c = arg;
	int i = atomic_fetch_add(&c->slot, 1);

	c->self_ids[i] = asx_thr_self();
	c->groups[i] = asx_thr_self_group();
	atomic_fetch_add(&c->runs, 1);
	return NULL;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static void test_spawn_n_runs_once(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct spawn_ctx c = { 0 };
	int ids[NSPAWN], i;
	ASX_OPTS(struct asx_thr_opts, opts, .ids = ids, .stack_size = 256 * 1024);

	assert_non_null(m);
	assert_int_equal(asx_thr_self(), -ESRCH);
	assert_int_equal(asx_thr_mgr_spawn_n(m, NSPAWN, spawn_fn, &c, 7, &opts), NSPAWN);
	assert_int_equal(asx_thr_mgr_wait(m, NULL, 0, NULL), NSPAWN);
	assert_int_equal(atomic_load(&c.runs), NSPAWN);
	assert_int_equal(asx_thr_mgr_count(m), 0);

	qsort(ids, NSPAWN, sizeof(int), cmp_int);
	qsort(c.self_ids, NSPAWN, sizeof(int), cmp_int);
	for (i = 0; i < NSPAWN; i++) {
		assert_true(ids[i] >= 0 && ids[i] < NSPAWN);	/* small */
		if (i)
			assert_true(ids[i] > ids[i - 1]);	/* unique */
		assert_int_equal(ids[i], c.self_ids[i]);	/* self agrees */
		assert_int_equal(c.groups[i], 7);
	}
	/* Nothing left: wait returns at once with 0. */
	assert_int_equal(asx_thr_mgr_wait(m, NULL, 0, NULL), 0);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

static void test_spawn_bad_args(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct spawn_ctx c = { 0 };
	ASX_OPTS(struct asx_thr_opts, tiny, .stack_size = 16);
	struct {
		struct asx_thr_opts o;
		long future;
	} big = { .o = { .sz = sizeof(big) }, .future = 1 };

	assert_int_equal(asx_thr_mgr_spawn_n(m, 0, spawn_fn, &c, 0, NULL), -EINVAL);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, NULL, &c, 0, NULL), -EINVAL);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, spawn_fn, &c, -1, NULL), -EINVAL);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, spawn_fn, &c, 0, &tiny), -EINVAL);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, spawn_fn, &c, 0, &big.o), -E2BIG);
	big.future = 0;
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, spawn_fn, &c, 0, &big.o), 1);
	assert_int_equal(asx_thr_mgr_wait(m, NULL, 0, NULL), 1);
	assert_int_equal(atomic_load(&c.runs), 1);
	assert_int_equal(asx_thr_mgr_cancel(m, 12345), -ESRCH);
	assert_int_equal(asx_thr_mgr_join(m, 12345, NULL, NULL), -ESRCH);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

/* ------------------------------------------------------------ wait */

struct gated {
	struct gate gate;
	atomic_int entered;
	atomic_int done;
};

static void *gated_fn(void *arg)
{
	struct gated *g = arg;

	atomic_fetch_add(&g->entered, 1);
	gate_pass(&g->gate);
	atomic_fetch_add(&g->done, 1);
	return NULL;
}

static void *quick_fn(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
	return NULL;
}

static void test_wait_group_only_that_group(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct gated g = { .done = 0 };
	atomic_int quick = 0;
	struct timespec dl;

	gate_init(&g.gate);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 2, gated_fn, &g, 2, NULL), 2);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 3, quick_fn, &quick, 1, NULL), 3);
	/* Would time out if it waited for group 2 too. */
	assert_int_equal(asx_thr_mgr_wait_group(m, 1, NULL, 0, in_ms(&dl, 5000)), 3);
	assert_int_equal(atomic_load(&quick), 3);
	assert_int_equal(atomic_load(&g.done), 0);
	assert_int_equal(asx_thr_mgr_count_group(m, 2), 2);
	assert_int_equal(asx_thr_mgr_count_group(m, 1), 0);
	assert_int_equal(asx_thr_mgr_count(m), 2);

	gate_open(&g.gate);
	assert_int_equal(asx_thr_mgr_wait_group(m, 2, NULL, 0, NULL), 2);
	assert_int_equal(atomic_load(&g.done), 2);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
	gate_fini(&g.gate);
}

static void test_wait_deadline(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct gated g = { .done = 0 };
	struct timespec dl;
	uint64_t t0;

	gate_init(&g.gate);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 3, gated_fn, &g, 0, NULL), 3);
	t0 = asx_now_ns();
	assert_int_equal(asx_thr_mgr_wait(m, NULL, 0, in_ms(&dl, 50)), -ETIMEDOUT);
	assert_true(asx_now_ns() - t0 >= 50 * MS);
	assert_int_equal(asx_thr_mgr_wait_group(m, 0, NULL, 0, in_ms(&dl, 20)), -ETIMEDOUT);
	assert_int_equal(asx_thr_mgr_count(m), 3);
	gate_open(&g.gate);
	assert_int_equal(asx_thr_mgr_wait(m, NULL, 0, in_ms(&dl, 5000)), 3);
	assert_int_equal(atomic_load(&g.done), 3);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
	gate_fini(&g.gate);
}

static void *retval_fn(void *arg)
{
	return (void *)(intptr_t)(asx_thr_self() * 10 + 7);
}

static void test_return_values(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct asx_thr_status st[8];
	int ids[2], seen = 0, i;
	ASX_OPTS(struct asx_thr_opts, opts, .ids = ids);
	void *ret = NULL;

	assert_int_equal(asx_thr_mgr_spawn_n(m, 6, retval_fn, NULL, 3, NULL), 6);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 2, retval_fn, NULL, 4, &opts), 2);
	assert_int_equal(asx_thr_mgr_join(m, ids[1], &ret, NULL), 0);
	assert_int_equal((intptr_t)ret, ids[1] * 10 + 7);
	assert_int_equal(asx_thr_mgr_join(m, ids[1], &ret, NULL), -ESRCH);

	memset(st, 0xff, sizeof(st));
	assert_int_equal(asx_thr_mgr_wait(m, st, 8, NULL), 7);
	for (i = 0; i < 7; i++) {
		assert_int_equal((intptr_t)st[i].ret, st[i].id * 10 + 7);
		assert_int_equal(st[i].group, st[i].id == ids[0] ? 4 : 3);
		seen |= 1 << st[i].id;
	}
	assert_int_equal(seen, 0xff & ~(1 << ids[1]));
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

/* A managed thread may not wait for itself or destroy its manager. */
static void *self_wait_fn(void *arg)
{
	struct asx_thr_mgr *m = arg;
	intptr_t bad = 0;

	bad |= asx_thr_mgr_wait(m, NULL, 0, NULL) != -EDEADLK;
	bad |= (asx_thr_mgr_wait_group(m, asx_thr_self_group(), NULL, 0, NULL) != -EDEADLK) << 1;
	bad |= (asx_thr_mgr_join(m, asx_thr_self(), NULL, NULL) != -EDEADLK) << 2;
	bad |= (asx_thr_mgr_destroy(m) != -EDEADLK) << 3;
	bad |= (asx_thr_mgr_suspend(m, asx_thr_self(), NULL) != -EDEADLK) << 4;
	return (void *)bad;
}

static void test_self_deadlock(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct asx_thr_status st;

	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, self_wait_fn, m, 0, NULL), 1);
	assert_int_equal(asx_thr_mgr_wait(m, &st, 1, NULL), 1);
	assert_int_equal((intptr_t)st.ret, 0);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

/* ------------------------------------------------------------ cancel */

struct loop_ctx {
	atomic_ulong count[16];
	atomic_int exited;
	atomic_int slot;
};

/* Counts in its own slot and stops only through the test point. */
static void *loop_fn(void *arg)
{
	struct loop_ctx *c = arg;
	int i = atomic_fetch_add(&c->slot, 1);

	while (!asx_thr_testcancel()) {
		atomic_fetch_add_explicit(&c->count[i], 1, memory_order_relaxed);
		sched_yield();
	}
	if (asx_thr_cancelled())	/* (no cmocka asserts off the main thread) */
		atomic_fetch_add(&c->exited, 1);
	return (void *)(intptr_t)i;
}

static unsigned long total(struct loop_ctx *c, int from, int to)
{
	unsigned long s = 0;

	for (int i = from; i < to; i++)
		s += atomic_load(&c->count[i]);
	return s;
}

/* Wait (bounded) until every slot in [from, to) has counted past @base. */
static bool all_move(struct loop_ctx *c, int from, int to, const unsigned long *base)
{
	uint64_t end = asx_now_ns() + 5000 * MS;

	while (asx_now_ns() < end) {
		int i;

		for (i = from; i < to; i++)
			if (atomic_load(&c->count[i]) <= (base ? base[i] : 0))
				break;
		if (i == to)
			return true;
		sleep_ns(MS);
	}
	return false;
}

static void test_cancel_group(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct loop_ctx a = { .exited = 0 }, b = { .exited = 0 };
	struct timespec dl;
	unsigned long before;

	assert_int_equal(asx_thr_mgr_spawn_n(m, 3, loop_fn, &a, 1, NULL), 3);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 3, loop_fn, &b, 2, NULL), 3);
	assert_true(all_move(&a, 0, 3, NULL));
	assert_true(all_move(&b, 0, 3, NULL));

	assert_int_equal(asx_thr_mgr_cancel_group(m, 1), 3);
	assert_int_equal(asx_thr_mgr_wait_group(m, 1, NULL, 0, in_ms(&dl, 5000)), 3);
	assert_int_equal(atomic_load(&a.exited), 3);
	assert_int_equal(atomic_load(&b.exited), 0);
	assert_int_equal(asx_thr_mgr_count_group(m, 2), 3);
	before = total(&b, 0, 3);
	sleep_ns(20 * MS);
	assert_true(total(&b, 0, 3) > before);		/* group 2 still runs */

	assert_int_equal(asx_thr_mgr_cancel_all(m), 3);
	assert_int_equal(asx_thr_mgr_wait(m, NULL, 0, in_ms(&dl, 5000)), 3);
	assert_int_equal(atomic_load(&b.exited), 3);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

struct sleep_ctx {
	uint64_t ns;
	int ret;
	uint64_t elapsed;
};

static void *sleeper_fn(void *arg)
{
	struct sleep_ctx *s = arg;
	uint64_t t0 = asx_now_ns();

	s->ret = asx_thr_sleep(s->ns);
	s->elapsed = asx_now_ns() - t0;
	return NULL;
}

static void test_sleep_cancel(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct sleep_ctx longs = { .ns = 10000 * MS }, shorts = { .ns = 20 * MS };
	int id;
	ASX_OPTS(struct asx_thr_opts, opts, .ids = &id);
	uint64_t t0;

	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, sleeper_fn, &longs, 0, &opts), 1);
	sleep_ns(50 * MS);
	assert_int_equal(asx_thr_mgr_cancel(m, id), 0);
	assert_int_equal(asx_thr_mgr_join(m, id, NULL, NULL), 0);
	assert_int_equal(longs.ret, -ECANCELED);
	assert_true(longs.elapsed < 2000 * MS);

	/* Uncancelled: the full time, 0. */
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, sleeper_fn, &shorts, 0, &opts), 1);
	assert_int_equal(asx_thr_mgr_join(m, id, NULL, NULL), 0);
	assert_int_equal(shorts.ret, 0);
	assert_true(shorts.elapsed >= 20 * MS);

	/* Unmanaged caller: a plain sleep. */
	t0 = asx_now_ns();
	assert_int_equal(asx_thr_sleep(10 * MS), 0);
	assert_true(asx_now_ns() - t0 >= 10 * MS);
	assert_false(asx_thr_testcancel());
	assert_false(asx_thr_cancelled());
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

/* ------------------------------------------------------------ suspend */

static void snapshot(struct loop_ctx *c, int n, unsigned long *out)
{
	for (int i = 0; i < n; i++)
		out[i] = atomic_load(&c->count[i]);
}

static void test_suspend_all_freezes(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct loop_ctx c = { .exited = 0 };
	unsigned long s1[4], s2[4];
	struct timespec dl;

	assert_int_equal(asx_thr_mgr_spawn_n(m, 4, loop_fn, &c, 0, NULL), 4);
	assert_true(all_move(&c, 0, 4, NULL));

	assert_int_equal(asx_thr_mgr_suspend_all(m, in_ms(&dl, 5000)), 4);
	snapshot(&c, 4, s1);
	sleep_ns(100 * MS);
	snapshot(&c, 4, s2);
	assert_memory_equal(s1, s2, sizeof(s1));

	assert_int_equal(asx_thr_mgr_resume_all(m), 4);
	assert_true(all_move(&c, 0, 4, s2));

	/* Per group as well: group 0 frozen, nothing else to check. */
	assert_int_equal(asx_thr_mgr_suspend_group(m, 0, in_ms(&dl, 5000)), 4);
	snapshot(&c, 4, s1);
	sleep_ns(20 * MS);
	snapshot(&c, 4, s2);
	assert_memory_equal(s1, s2, sizeof(s1));
	/* Cancel overrides the suspension. */
	assert_int_equal(asx_thr_mgr_cancel_all(m), 4);
	assert_int_equal(asx_thr_mgr_wait(m, NULL, 0, in_ms(&dl, 5000)), 4);
	assert_int_equal(asx_thr_mgr_resume_group(m, 0), 0);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

struct opener {
	struct gate *gate;
	uint64_t after;
};

static void *opener_fn(void *arg)
{
	struct opener *o = arg;

	sleep_ns(o->after);
	gate_open(o->gate);
	return NULL;
}

static void test_suspend_exiting_thread(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct loop_ctx c = { .exited = 0 };
	struct gated g = { .done = 0 };
	struct opener o = { &g.gate, 50 * MS };
	unsigned long s1[3], s2[3];
	struct timespec dl;
	pthread_t op;

	gate_init(&g.gate);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 3, loop_fn, &c, 0, NULL), 3);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, gated_fn, &g, 1, NULL), 1);
	assert_true(all_move(&c, 0, 3, NULL));
	while (!atomic_load(&g.entered))	/* past its start, a safe point */
		sleep_ns(MS);

	/* The gated thread never reaches a test point: a short deadline
	 * fails and the request is withdrawn. */
	assert_int_equal(asx_thr_mgr_suspend_all(m, in_ms(&dl, 30)), -ETIMEDOUT);
	snapshot(&c, 3, s1);
	assert_true(all_move(&c, 0, 3, s1));	/* nothing left suspended */

	/* It exits (no test point) while the suspension is pending. */
	assert_int_equal(pthread_create(&op, NULL, opener_fn, &o), 0);
	assert_int_equal(asx_thr_mgr_suspend_all(m, in_ms(&dl, 10000)), 4);
	assert_int_equal(atomic_load(&g.done), 1);
	snapshot(&c, 3, s1);
	sleep_ns(20 * MS);
	snapshot(&c, 3, s2);
	assert_memory_equal(s1, s2, sizeof(s1));
	assert_int_equal(asx_thr_mgr_resume_all(m), 4);
	pthread_join(op, NULL);

	assert_int_equal(asx_thr_mgr_destroy(m), 0);
	assert_int_equal(atomic_load(&c.exited), 3);
	gate_fini(&g.gate);
}

/* A managed thread suspending its own manager excludes itself. */
struct self_susp {
	struct asx_thr_mgr *m;
	struct loop_ctx *c;
	int result;
	bool frozen;
};

static void *self_suspender_fn(void *arg)
{
	struct self_susp *s = arg;
	unsigned long s1[3], s2[3];
	struct timespec dl;

	s->result = asx_thr_mgr_suspend_all(s->m, in_ms(&dl, 5000));
	if (asx_thr_testcancel())	/* must neither park itself nor stop */
		s->result = -1;
	snapshot(s->c, 3, s1);
	sleep_ns(20 * MS);
	snapshot(s->c, 3, s2);
	s->frozen = !memcmp(s1, s2, sizeof(s1));
	asx_thr_mgr_resume_all(s->m);
	return NULL;
}

static void test_suspend_from_managed_thread(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct loop_ctx c = { .exited = 0 };
	struct self_susp s = { m, &c, 0, false };
	struct timespec dl;

	assert_int_equal(asx_thr_mgr_spawn_n(m, 3, loop_fn, &c, 0, NULL), 3);
	assert_true(all_move(&c, 0, 3, NULL));
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, self_suspender_fn, &s, 1, NULL), 1);
	assert_int_equal(asx_thr_mgr_wait_group(m, 1, NULL, 0, in_ms(&dl, 10000)), 1);
	assert_int_equal(s.result, 3);
	assert_true(s.frozen);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

static void test_suspend_stress(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct loop_ctx c = { .exited = 0 };
	unsigned long s1[8], s2[8], start[8];
	struct timespec dl;
	int cycle, cycles = 400;

	assert_int_equal(asx_thr_mgr_spawn_n(m, 8, loop_fn, &c, 0, NULL), 8);
	assert_true(all_move(&c, 0, 8, NULL));
	snapshot(&c, 8, start);
	for (cycle = 0; cycle < cycles; cycle++) {
		assert_int_equal(asx_thr_mgr_suspend_all(m, in_ms(&dl, 10000)), 8);
		snapshot(&c, 8, s1);
		sched_yield();
		sleep_ns(100000);
		snapshot(&c, 8, s2);
		assert_memory_equal(s1, s2, sizeof(s1));
		assert_int_equal(asx_thr_mgr_resume_all(m), 8);
		if (cycle % 4 == 0)
			sleep_ns(100000);
	}
	assert_true(all_move(&c, 0, 8, start));
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
	assert_int_equal(atomic_load(&c.exited), 8);
}

/* ------------------------------------------------------------ TSS */

static asx_tss_t key;
static atomic_int dtor_calls;
static atomic_int dtor_sum;

static void tss_dtor(void *v)
{
	atomic_fetch_add(&dtor_calls, 1);
	atomic_fetch_add(&dtor_sum, *(int *)v);
	free(v);
}

static pthread_barrier_t tss_barrier;

static void *tss_fn(void *arg)
{
	int want = (int)(intptr_t)arg;
	intptr_t bad = 0;

	bad |= asx_tss_get(key) != NULL;
	if (want) {
		int *v = malloc(sizeof(*v));

		*v = want;
		bad |= asx_tss_set(key, v) != 0;
	}
	pthread_barrier_wait(&tss_barrier);	/* all have set theirs */
	if (want)
		bad |= *(int *)asx_tss_get(key) != want;
	else
		bad |= asx_tss_get(key) != NULL;
	pthread_barrier_wait(&tss_barrier);
	return (void *)bad;
}

static void test_tss(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct asx_thr_status st[8];
	pthread_t um;
	void *ret;
	int local = 42, i;

	atomic_store(&dtor_calls, 0);
	atomic_store(&dtor_sum, 0);
	assert_int_equal(asx_tss_create(&key, tss_dtor), 0);
	assert_int_equal(pthread_barrier_init(&tss_barrier, NULL, 6), 0);

	/* 3 managed setters (1, 2, 4), 2 managed that never set, 1 unmanaged (8). */
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, tss_fn, (void *)1, 0, NULL), 1);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, tss_fn, (void *)2, 0, NULL), 1);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, tss_fn, (void *)4, 0, NULL), 1);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 2, tss_fn, (void *)0, 0, NULL), 2);
	assert_int_equal(pthread_create(&um, NULL, tss_fn, (void *)8), 0);

	assert_int_equal(asx_thr_mgr_wait(m, st, 8, NULL), 5);
	for (i = 0; i < 5; i++)
		assert_null(st[i].ret);
	assert_int_equal(pthread_join(um, &ret), 0);
	assert_null(ret);
	/* Once per thread that set a non-NULL value, each with its own. */
	assert_int_equal(atomic_load(&dtor_calls), 4);
	assert_int_equal(atomic_load(&dtor_sum), 1 + 2 + 4 + 8);

	/* The main thread's value is its own too. */
	assert_null(asx_tss_get(key));
	assert_int_equal(asx_tss_set(key, &local), 0);
	assert_ptr_equal(asx_tss_get(key), &local);
	assert_int_equal(asx_tss_set(key, NULL), 0);
	assert_int_equal(asx_tss_delete(key), 0);
	assert_int_equal(asx_tss_create(NULL, NULL), -EINVAL);

	pthread_barrier_destroy(&tss_barrier);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
}

/* ------------------------------------------------------------ destroy */

static void *long_sleeper_fn(void *arg)
{
	atomic_int *exited = arg;

	asx_thr_sleep(60000 * MS);
	atomic_fetch_add(exited, 1);
	return NULL;
}

static void test_destroy_running(void **state)
{
	struct asx_thr_mgr *m = NULL;
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	struct loop_ctx c = { .exited = 0 }, parked = { .exited = 0 };
	atomic_int sleepers = 0;
	struct timespec dl;
	uint64_t t0;

	assert_int_equal(asx_thr_mgr_spawn_n(m, 4, loop_fn, &c, 0, NULL), 4);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 2, long_sleeper_fn, &sleepers, 1, NULL), 2);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 2, loop_fn, &parked, 2, NULL), 2);
	assert_true(all_move(&c, 0, 4, NULL));
	assert_true(all_move(&parked, 0, 2, NULL));
	assert_int_equal(asx_thr_mgr_suspend_group(m, 2, in_ms(&dl, 5000)), 2);
	/* A thread spawned into a suspended group starts parked. */
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, loop_fn, &parked, 2, NULL), 1);
	sleep_ns(20 * MS);
	assert_int_equal(atomic_load(&parked.count[2]), 0);
	assert_int_equal(asx_thr_mgr_count(m), 9);

	t0 = asx_now_ns();
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
	assert_true(asx_now_ns() - t0 < 5000 * MS);
	assert_int_equal(atomic_load(&c.exited), 4);
	assert_int_equal(atomic_load(&sleepers), 2);
	assert_int_equal(atomic_load(&parked.exited), 3);
}

/* ---------------------------------------------------------------- ASC groups */

static int asc_ran;
static struct asx_sem asc_go;

static void *asc_member(void *arg)
{
	intptr_t k = (intptr_t)arg;

	if (asx_asc_thread_self()) {
		__atomic_add_fetch(&asc_ran, 1, __ATOMIC_SEQ_CST);
		asx_sem_wait(&asc_go);	/* parks: the others run on the one VP */
	}
	return (void *)(k + 1);
}

/*
 * A group of ASC user threads (asx_thr_opts.asc) beside a group of
 * pthreads: spawned, counted, waited for by group with their return
 * values; one parked outside any safe point cannot be suspended (the
 * request times out and is withdrawn), as a pthread could not.
 */
static void test_asc_group(void **state)
{
	struct asx_asc_opts ao = { .sz = sizeof(ao), .nvps = 1, .max_vps = 1 };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_thr_mgr *m = NULL;
	struct asx_thr_status st[8];
	struct timespec soon;
	struct asx_asc *a;
	int ids[4];

	(void)state;
	asc_ran = 0;
	assert_int_equal(asx_sem_init(&asc_go, 0), 0);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &ao), 0);
	ASX_OPTS(struct asx_thr_opts, opts, .ids = ids, .asc = a, .qos = &q.qos);
	ASX_OPTS(struct asx_thr_opts, bad, .asc = a);	/* PRIO wants a QoS */
	assert_int_equal(asx_thr_mgr_create(&m), 0);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 1, asc_member, NULL, 1, &bad), -EINVAL);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 4, asc_member, (void *)41, 1, &opts), 4);
	assert_int_equal(asx_thr_mgr_spawn_n(m, 2, asc_member, (void *)1, 2, NULL), 2);
	/* parked in a semaphore, not at a safe point: no suspension (a
	 * member not started yet would count as parked: wait for all four) */
	while (__atomic_load_n(&asc_ran, __ATOMIC_SEQ_CST) < 4)
		sched_yield();
	assert_int_equal(asx_thr_mgr_suspend(m, ids[0], in_ms(&soon, 20)), -ETIMEDOUT);
	assert_int_equal(asx_thr_mgr_count_group(m, 1), 4);
	for (int i = 0; i < 4; i++)
		asx_sem_post(&asc_go);
	assert_int_equal(asx_thr_mgr_wait_group(m, 1, st, 8, NULL), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(st[i].group, 1);
		assert_int_equal((intptr_t)st[i].ret, 42);
	}
	assert_int_equal(__atomic_load_n(&asc_ran, __ATOMIC_SEQ_CST), 4);
	assert_int_equal(asx_thr_mgr_count_group(m, 1), 0);
	assert_int_equal(asx_thr_mgr_wait(m, st, 8, NULL), 2);
	assert_int_equal(asx_thr_mgr_destroy(m), 0);
	assert_int_equal(asx_asc_destroy(a), 0);
}


int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spawn_n_runs_once),
		cmocka_unit_test(test_spawn_bad_args),
		cmocka_unit_test(test_wait_group_only_that_group),
		cmocka_unit_test(test_wait_deadline),
		cmocka_unit_test(test_return_values),
		cmocka_unit_test(test_self_deadlock),
		cmocka_unit_test(test_cancel_group),
		cmocka_unit_test(test_sleep_cancel),
		cmocka_unit_test(test_suspend_all_freezes),
		cmocka_unit_test(test_suspend_exiting_thread),
		cmocka_unit_test(test_suspend_from_managed_thread),
		cmocka_unit_test(test_suspend_stress),
		cmocka_unit_test(test_tss),
		cmocka_unit_test(test_destroy_running),
		cmocka_unit_test(test_asc_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
