// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_asc.c - the ASC paper's two experiments.
 *
 * `asx-bench asc-yield` (the paper's Table 1): two threads yield to each
 * other N times each (1,000,000; --quick 100,000) under PRIO with one VP
 * (the lock-free single-VP path), then the same with an extra idle ASC
 * and VP present (the locked path), against the floor (our raw context
 * switch, no scheduler) and two pthread baselines: a mutex+condvar
 * hand-off and a sched_yield hand-off with both threads pinned to one
 * CPU.  Figures are nanoseconds per switch / hand-off, medians of --runs.
 * With --full, a sweep of 1 .. nproc VPs and 2 x nproc, two yielding
 * threads per VP, reports yields per second and the speed-up over one VP.
 *
 * `asx-bench capsule-block` (the paper's Figure 2): 8 threads; phase 1
 * each blocks 1 s (--quick 0.1 s) in a wrapped nanosleep, a barrier, then
 * phase 2 passes a token round a ring (thread t yields until it holds the
 * token, then hands it to t+1) for R rounds (100,000; --quick 2,000;
 * --rounds N).  Configurations, interleaved run by run: PRIO with
 * 1, 2, 4 and 8 VPs, DIRECT (a VP per thread) and plain pthreads (real
 * nanosleep, pthread barrier, sched_yield).
 *
 * With --user (and with --full) two more columns, the paper's User 1 and
 * User 2 where Linux has an equivalent: 8 co-routines of a process-scoped
 * (N:1) user-level package on one kernel thread (user_run() below), the
 * phases in the paper's order (user2) and reversed (user1).  Off by
 * default: their blocking phase is 8 sleeps in a row.
 *
 * `capsule-block --activations`: the same with the PRIO ASCs on asx.ko's
 * scheduler activations and the sleep of phase 1 a plain, unwrapped
 * nanosleep(); only the kernel tells the ASC that its VP blocked.  Needs
 * the module (run it in the test VM).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include <asx/asc.h>
#include <asx/sa.h>
#include "bench.h"

/* ---------------------------------------------------------------- asc-yield */

struct ping {
	unsigned long n;
	uint64_t t0, t1;
	int started;
};

static void *yielder(void *arg)
{
	struct ping *p = arg;
	unsigned long n = p->n;

	if (__atomic_fetch_add(&p->started, 1, __ATOMIC_RELAXED) == 0)
		p->t0 = bench_now_ns();
	for (unsigned long i = 0; i < n; i++)
		asx_asc_thread_yield();
	__atomic_store_n(&p->t1, bench_now_ns(), __ATOMIC_RELAXED);	/* the last to finish writes last */
	return NULL;
}

/* ns per yield of two PRIO threads; @extra: another ASC with a VP exists;
 * @sa: the ASC on asx.ko's scheduler activations (one VP, spares parked) */
static double prio_yield(unsigned long n, bool extra, bool sa)
{
	struct asx_asc *a = NULL, *b = NULL;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1,
				  .activations = sa ? ASX_ASC_ACT_ON : ASX_ASC_ACT_OFF };
	struct asx_asc_thread *t[2];
	struct ping p = { .n = n };
	double r = -1;

	if (asx_asc_create(&a, &asx_asc_prio, &o))
		return -1;
	if (extra && asx_asc_create(&b, &asx_asc_edf, NULL))
		goto out;
	if (asx_asc_thread_spawn(a, &q.qos, yielder, &p, NULL, &t[0]))
		goto out;
	if (asx_asc_thread_spawn(a, &q.qos, yielder, &p, NULL, &t[1])) {
		asx_asc_thread_join(t[0], NULL);
		goto out;
	}
	asx_asc_thread_join(t[0], NULL);
	asx_asc_thread_join(t[1], NULL);
	r = (double)(p.t1 - p.t0) / (2.0 * (double)n);
out:
	if (b)
		asx_asc_destroy(b);
	asx_asc_destroy(a);
	return r;
}

/*
 * --full: @nvps VPs and 2 x @nvps PRIO threads yielding, @total yields
 * shared out; yields per second, all threads together.
 */
static double prio_yield_sweep(unsigned int nvps, unsigned long total)
{
	struct asx_asc *a = NULL;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = nvps };
	unsigned int nt = 2 * nvps, k;
	struct asx_asc_thread **t = calloc(nt, sizeof(*t));
	struct ping p = { .n = total / nt ? total / nt : 1 };
	double r = -1;

	if (!t)
		return -1;
	if (asx_asc_create(&a, &asx_asc_prio, &o)) {
		free(t);
		return -1;
	}
	for (k = 0; k < nt; k++)
		if (asx_asc_thread_spawn(a, &q.qos, yielder, &p, NULL, &t[k]))
			break;
	for (unsigned int i = 0; i < k; i++)
		asx_asc_thread_join(t[i], NULL);
	if (k == nt)
		r = (double)(p.n * nt) * 1e9 / (double)(p.t1 - p.t0);
	asx_asc_destroy(a);
	free(t);
	return r;
}

/* asc-yield --full: VPs 1 .. nproc and 2 x nproc, two threads per VP */
static int yield_sweep(struct bench_ctx *ctx, unsigned long n)
{
	int ncpu = bench_nproc(), nv = 0, ret = 0;
	unsigned int vps[66];
	double *v, one = 0;

	for (int i = 1; i <= ncpu && nv < 64; i++)
		vps[nv++] = (unsigned int)i;
	vps[nv++] = 2u * (unsigned int)ncpu;
	v = calloc((size_t)ctx->runs, sizeof(double));
	if (!v)
		return -ENOMEM;
	bench_say(ctx, "  sweep: PRIO, V VPs, 2 x V threads yielding, %lu yields in all; "
		  "speed-up = yields/s over one VP's\n", 2 * n);
	bench_say(ctx, "  %-6s %8s %14s %9s\n", "VPs", "threads", "yields/s", "speed-up");
	for (int i = 0; i < nv && !ret; i++) {
		char key[64], b[32];
		double med;

		for (int r = 0; r < ctx->runs && !ret; r++) {
			v[r] = prio_yield_sweep(vps[i], 2 * n);
			if (v[r] < 0)
				ret = -EIO;
		}
		if (ret)
			break;
		med = bench_median(v, (size_t)ctx->runs);
		if (i == 0)
			one = med;
		bench_say(ctx, "  %-6u %8u %14s %9.2f\n", vps[i], 2 * vps[i],
			  bench_si(b, sizeof(b), med), med / one);
		snprintf(key, sizeof(key), "prio_vp%u_yields_per_s", vps[i]);
		bench_record(ctx, &(struct bench_rec){
			.key = key, .experiment = "sweep", .sched = "asc", .pes = vps[i],
			.threads = 2 * vps[i], .metric = "yields_per_s", .value = med,
			.unit = "yields/s", .runs = v, .nruns = (size_t)ctx->runs });
		snprintf(key, sizeof(key), "prio_vp%u_speedup", vps[i]);
		bench_record(ctx, &(struct bench_rec){
			.key = key, .experiment = "sweep", .sched = "asc", .pes = vps[i],
			.threads = 2 * vps[i], .metric = "speedup", .value = med / one,
			.unit = "x" });
	}
	free(v);
	return ret;
}

struct handoff {
	pthread_mutex_t m;
	pthread_cond_t c;
	int turn;
	unsigned long n;
	int cpu;
};

struct hself {
	struct handoff *h;
	int me;
};

static void *cond_thread(void *arg)
{
	struct hself *s = arg;
	struct handoff *h = s->h;

	for (unsigned long i = 0; i < h->n; i++) {
		pthread_mutex_lock(&h->m);
		while (h->turn != s->me)
			pthread_cond_wait(&h->c, &h->m);
		h->turn = !s->me;
		pthread_cond_signal(&h->c);
		pthread_mutex_unlock(&h->m);
	}
	return NULL;
}

static void *yield_thread(void *arg)
{
	struct hself *s = arg;
	struct handoff *h = s->h;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	for (unsigned long i = 0; i < h->n; i++) {
		while (__atomic_load_n(&h->turn, __ATOMIC_ACQUIRE) != s->me)
			sched_yield();
		__atomic_store_n(&h->turn, !s->me, __ATOMIC_RELEASE);
	}
	return NULL;
}

/* ns per hand-off between two pthreads */
static double pthread_handoff(unsigned long n, void *(*fn)(void *))
{
	struct handoff h = { .n = n, .turn = 0 };
	struct hself s[2] = { { &h, 0 }, { &h, 1 } };
	pthread_t t[2];
	uint64_t t0, t1;

	pthread_mutex_init(&h.m, NULL);
	pthread_cond_init(&h.c, NULL);
	h.cpu = sched_getcpu() > 0 ? sched_getcpu() : 0;
	t0 = bench_now_ns();
	if (pthread_create(&t[0], NULL, fn, &s[0]))
		return -1;
	if (pthread_create(&t[1], NULL, fn, &s[1])) {
		h.turn = 0;
		pthread_join(t[0], NULL);
		return -1;
	}
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	t1 = bench_now_ns();
	pthread_cond_destroy(&h.c);
	pthread_mutex_destroy(&h.m);
	return (double)(t1 - t0) / (2.0 * (double)n);
}

enum { Y_PRIO, Y_EXTRA, Y_RAW, Y_COND, Y_YIELD, Y_SA, Y_N };
static const char *const y_key[Y_N] = {
	"prio_1vp_ns", "prio_extra_ns", "raw_switch_ns", "pthread_cond_ns", "pthread_yield_ns",
	"prio_sa_1vp_ns",
};
/* each row's dimensions: what the threads are and which implementation */
static const struct {
	const char *sched, *impl;
	unsigned int pes;	/* VPs (ASC) or kernel threads (pthreads) */
} y_dim[Y_N] = {
	{ "asc", "prio", 1 }, { "asc", "prio_extra", 1 }, { "asc", "raw", 1 },
	{ "pthread", "cond", 2 }, { "pthread", "sched_yield", 2 }, { "asc", "prio_sa", 1 },
};

/* a record of asc-yield's row @k: @metric (ns per switch, or a ratio) */
static void y_put(struct bench_ctx *ctx, const char *key, int k, const char *metric,
		  double value, double *runs, int nruns, const char *unit)
{
	bench_record(ctx, &(struct bench_rec){
		.key = key, .sched = y_dim[k].sched, .impl = y_dim[k].impl, .pes = y_dim[k].pes,
		.threads = 2, .metric = metric, .value = value, .runs = runs,
		.nruns = runs ? (size_t)nruns : 0, .unit = unit });
}

static const char *const y_label[Y_N] = {
	"PRIO threads, single ASC/VP (lock-free path)",
	"PRIO threads, extra ASC/VP (locked path)",
	"raw context switch (floor)",
	"pthreads, mutex+condvar hand-off",
	"pthreads on one CPU, sched_yield hand-off",
	"PRIO threads, one VP on activations",
};

/* median over runs of a[r] / b[r]; the largest in *@worst */
static double y_paired_ratio(const double *a, const double *b, int runs, double *worst)
{
	double *q = calloc((size_t)runs, sizeof(double)), m;

	*worst = 0;
	if (!q)
		return 0;
	for (int r = 0; r < runs; r++) {
		q[r] = b[r] > 0 ? a[r] / b[r] : 0;
		if (q[r] > *worst)
			*worst = q[r];
	}
	m = bench_median(q, (size_t)runs);
	free(q);
	return m;
}

static int cmd_asc_yield(struct bench_ctx *ctx, int argc, char **argv)
{
	unsigned long n = ctx->quick ? 100000 : 1000000;
	unsigned long nk = ctx->quick ? 5000 : 50000;	/* kernel hand-offs are slow */
	double *v[Y_N], med[Y_N], over_raw[Y_EXTRA + 1], worst_raw[Y_EXTRA + 1], sa_over = 0;
	double sa_worst = 0;
	bool sa = asx_sa_probe() == 0;	/* asx.ko loaded: the activations row */
	int ret = 0;

	(void)argc;
	(void)argv;
	for (int k = 0; k < Y_N; k++) {
		v[k] = calloc((size_t)ctx->runs, sizeof(double));
		if (!v[k])
			ret = -ENOMEM;
	}
	for (int r = 0; r < ctx->runs && !ret; r++) {
		v[Y_PRIO][r] = prio_yield(n, false, false);
		v[Y_EXTRA][r] = prio_yield(n, true, false);
		if (sa)
			v[Y_SA][r] = prio_yield(n, false, true);
		if (asx_asc_raw_switch_ns(n, &v[Y_RAW][r]))
			v[Y_RAW][r] = -1;
		v[Y_COND][r] = pthread_handoff(nk, cond_thread);
		v[Y_YIELD][r] = pthread_handoff(nk, yield_thread);
		for (int k = 0; k < Y_N; k++)
			if (v[k][r] < 0 && (k != Y_SA || sa))
				ret = -EIO;
	}
	if (!ret) {
		/* before the medians: bench_median() sorts in place */
		for (int k = Y_PRIO; k <= Y_EXTRA; k++)
			over_raw[k] = y_paired_ratio(v[k], v[Y_RAW], ctx->runs, &worst_raw[k]);
		if (sa)
			sa_over = y_paired_ratio(v[Y_SA], v[Y_PRIO], ctx->runs, &sa_worst);
		bench_say(ctx, "asc-yield: two threads yielding %lu times each (pthreads: %lu "
			  "hand-offs each), median of %d runs\n", n, nk, ctx->runs);
		for (int k = 0; k < Y_N; k++) {
			if (k == Y_SA && !sa)
				continue;
			med[k] = bench_median(v[k], (size_t)ctx->runs);
			bench_say(ctx, "  %-46s %10.1f ns\n", y_label[k], med[k]);
			y_put(ctx, y_key[k], k, "switch_ns", med[k], v[k], ctx->runs, "ns");
		}
		bench_say(ctx, "  extra/single %.2fx   condvar/PRIO %.0fx   sched_yield/PRIO %.0fx\n",
			  med[Y_EXTRA] / med[Y_PRIO], med[Y_COND] / med[Y_PRIO],
			  med[Y_YIELD] / med[Y_PRIO]);
		/*
		 * Over the floor, as the median of the per-run ratios (computed
		 * above): each run measures PRIO and the raw switch a moment
		 * apart, so a slow spell of the machine cancels out.
		 */
		bench_say(ctx, "  over the raw switch (median of per-run ratios, worst): "
			  "single %.2fx (%.2fx)   extra %.2fx (%.2fx)\n", over_raw[Y_PRIO],
			  worst_raw[Y_PRIO], over_raw[Y_EXTRA], worst_raw[Y_EXTRA]);
		if (sa) {
			bench_say(ctx, "  activations / without, one VP (median of per-run ratios, "
				  "worst): %.2fx (%.2fx)\n", sa_over, sa_worst);
			y_put(ctx, "prio_sa_over_1vp", Y_SA, "over_1vp", sa_over, NULL, 0, "x");
		}
		y_put(ctx, "prio_1vp_over_raw", Y_PRIO, "over_raw", over_raw[Y_PRIO], NULL, 0, "x");
		y_put(ctx, "prio_extra_over_raw", Y_EXTRA, "over_raw", over_raw[Y_EXTRA], NULL, 0,
		      "x");
		y_put(ctx, "prio_extra_over_1vp", Y_EXTRA, "over_1vp", med[Y_EXTRA] / med[Y_PRIO],
		      NULL, 0, "x");
		y_put(ctx, "pthread_cond_over_prio", Y_COND, "over_prio", med[Y_COND] / med[Y_PRIO],
		      NULL, 0, "x");
		if (ctx->full)
			ret = yield_sweep(ctx, n);
	}
	for (int k = 0; k < Y_N; k++)
		free(v[k]);
	return ret;
}

BENCH_COMMAND(asc_yield, "asc-yield",
	      "ASC PRIO yield (single VP and locked path) vs raw switch and pthreads "
	      "(--full: a VP-count sweep)",
	      NULL, cmd_asc_yield)

/* ---------------------------------------------------------------- capsule-block */

#define NT 8

struct capsule {
	long sleep_ns;
	unsigned long rounds;
	int token;
	uint64_t t0, t1, t2;
	int finished;
	unsigned long yields;
	int lined;			/* threads waiting to be lined up */
	struct asx_asc_mutex lm;
	struct asx_asc_cond lc[NT];
	struct asx_asc_barrier ab;
	pthread_barrier_t pb;
	bool asc;
	bool lineup;
	bool unwrapped;			/* phase 1: libc's nanosleep on an ASC too */
};

struct cself {
	struct capsule *c;
	int me;
};

static void capsule_body(struct cself *s)
{
	struct capsule *c = s->c;
	struct timespec req = { c->sleep_ns / 1000000000L, c->sleep_ns % 1000000000L };
	unsigned long ny = 0;
	int leader;

	/* phase 1: block the VP (or the pthread) in the kernel */
	if (c->asc && !c->unwrapped) {
		/* a VP-blocking call: asx_asc_nanosleep would park the thread */
		asx_asc_blocking_begin();
		while (nanosleep(&req, &req) && errno == EINTR)
			;
		asx_asc_blocking_end();
	} else
		while (nanosleep(&req, &req) && errno == EINTR)
			;
	if (c->asc)
		leader = asx_asc_barrier_wait(&c->ab);
	else
		leader = pthread_barrier_wait(&c->pb) == PTHREAD_BARRIER_SERIAL_THREAD;
	if (leader)
		__atomic_store_n(&c->t1, bench_now_ns(), __ATOMIC_RELEASE);
	if (c->asc && c->lineup) {
		/*
		 * Line the threads up in ring order: a round-robin run queue
		 * keeps its cyclic order through yields, and the order the
		 * barrier happened to wake them in would otherwise cost up to
		 * NT - 1 extra yields per hand-off, at random from run to run.
		 * Thread 0 wakes the others in index order once all wait.
		 */
		asx_asc_mutex_lock(&c->lm);
		if (s->me) {
			c->lined++;
			asx_asc_cond_wait(&c->lc[s->me], &c->lm);
		} else {
			while (c->lined < NT - 1) {
				asx_asc_mutex_unlock(&c->lm);
				asx_asc_thread_yield();
				asx_asc_mutex_lock(&c->lm);
			}
			for (int i = 1; i < NT; i++)
				asx_asc_cond_signal(&c->lc[i]);
		}
		asx_asc_mutex_unlock(&c->lm);
	}
	/* phase 2: the ring */
	for (unsigned long r = 0; r < c->rounds; r++) {
		while (__atomic_load_n(&c->token, __ATOMIC_ACQUIRE) != s->me) {
			if (c->asc)
				asx_asc_thread_yield();
			else
				sched_yield();
			ny++;
		}
		__atomic_store_n(&c->token, (s->me + 1) % NT, __ATOMIC_RELEASE);
	}
	__atomic_add_fetch(&c->yields, ny, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&c->finished, 1, __ATOMIC_ACQ_REL) == NT)
		__atomic_store_n(&c->t2, bench_now_ns(), __ATOMIC_RELEASE);
}

static void *capsule_thread(void *arg)
{
	capsule_body(arg);
	return NULL;
}

/* @nvps 0: DIRECT, -1: pthreads, NVPS_USER*: N:1 user threads (below) */
static bool no_lineup;
static bool activations;	/* --activations */

/*
 * The paper's User columns where Linux has an equivalent: a process-scoped
 * (N:1) user-level thread package, NT co-routines (makecontext /
 * swapcontext) on the one calling kernel thread, round robin.  An
 * OS-level sleep blocks the whole capsule, as in any N:1 package.
 * User 2 runs the phases in the paper's order (block, then sync), User 1
 * reversed (sync, then block).  SunOS's M:N library, which added a kernel
 * thread per blocked user thread, has no Linux counterpart.
 */
#define NVPS_USER2	(-2)
#define NVPS_USER1	(-3)
#define U_STACK		(64 * 1024)

static struct {
	ucontext_t main, t[NT];
	bool done[NT];
	int cur, arrived, token;
	unsigned long yields;
} un;

/* to the next thread not done, or back to the caller when all are */
static void u_switch(bool finished)
{
	int me = un.cur, next = (me + 1) % NT;

	while (next != me && un.done[next])
		next = (next + 1) % NT;
	if (next == me) {
		if (finished)
			setcontext(&un.main);
		return;
	}
	un.cur = next;
	if (finished)
		setcontext(&un.t[next]);
	else
		swapcontext(&un.t[me], &un.t[next]);
}

static void u_block(long sleep_ns)
{
	struct timespec req = { sleep_ns / 1000000000L, sleep_ns % 1000000000L };

	while (nanosleep(&req, &req) && errno == EINTR)
		;
}

static void u_sync(unsigned long rounds)
{
	for (unsigned long r = 0; r < rounds; r++) {
		while (un.token != un.cur) {
			u_switch(false);
			un.yields++;
		}
		un.token = (un.cur + 1) % NT;
	}
}

static long u_sleep_ns;
static unsigned long u_rounds;
static bool u_sync_first;
static uint64_t u_t[3];

static void u_barrier(int at)
{
	if (++un.arrived % NT == 0)
		u_t[at] = bench_now_ns();
	while (un.arrived < NT * at)
		u_switch(false);
}

static void u_main(void)
{
	if (u_sync_first)
		u_sync(u_rounds);
	else
		u_block(u_sleep_ns);
	u_barrier(1);
	if (u_sync_first)
		u_block(u_sleep_ns);
	else
		u_sync(u_rounds);
	u_barrier(2);
	un.done[un.cur] = true;
	u_switch(true);
}

/* thread @i's context, to start in u_main() on @stack (getcontext returns
 * twice: kept out of the caller's loop) */
static void u_make(int i, char *stack)
{
	getcontext(&un.t[i]);
	un.t[i].uc_stack.ss_sp = stack;
	un.t[i].uc_stack.ss_size = U_STACK;
	un.t[i].uc_link = &un.main;
	makecontext(&un.t[i], u_main, 0);
}

static int user_run(bool sync_first, long sleep_ns, unsigned long rounds, double *block,
		    double *sync, double *ypr)
{
	char *stacks = malloc((size_t)NT * U_STACK);

	if (!stacks)
		return -ENOMEM;
	memset(&un, 0, sizeof(un));
	u_sleep_ns = sleep_ns;
	u_rounds = rounds;
	u_sync_first = sync_first;
	for (int i = 0; i < NT; i++)
		u_make(i, stacks + (size_t)i * U_STACK);
	u_t[0] = bench_now_ns();
	swapcontext(&un.main, &un.t[0]);
	free(stacks);
	for (int i = 0; i < NT; i++)
		if (!un.done[i])
			return -EIO;
	*block = (double)(sync_first ? u_t[2] - u_t[1] : u_t[1] - u_t[0]) / 1e9;
	*sync = (double)(sync_first ? u_t[1] - u_t[0] : u_t[2] - u_t[1]) / 1e9;
	*ypr = (double)un.yields / ((double)rounds * NT);
	return 0;
}

static int capsule_run(int nvps, long sleep_ns, unsigned long rounds, double *block,
		       double *sync, double *ypr)
{
	struct capsule c = { .sleep_ns = sleep_ns, .rounds = rounds, .asc = nvps >= 0,
			     .lineup = !no_lineup, .unwrapped = activations && nvps > 0 };
	struct cself s[NT];
	struct asx_asc *a = NULL;
	struct asx_asc_thread *t[NT];
	pthread_t pt[NT];
	int r = 0, n = 0;

	if (nvps <= NVPS_USER2)
		return user_run(nvps == NVPS_USER1, sleep_ns, rounds, block, sync, ypr);
	asx_asc_barrier_init(&c.ab, NT);
	asx_asc_mutex_init(&c.lm);
	for (int i = 0; i < NT; i++)
		asx_asc_cond_init(&c.lc[i]);
	pthread_barrier_init(&c.pb, NULL, NT);
	if (nvps >= 0) {
		struct asx_asc_opts at = { .sz = sizeof(at), .nvps = nvps ? (unsigned)nvps : 1,
					   .activations = c.unwrapped ? ASX_ASC_ACT_ON :
					   ASX_ASC_ACT_OFF };

		r = asx_asc_create(&a, nvps ? &asx_asc_prio : &asx_asc_direct, &at);
		if (r)
			goto out;
	}
	c.t0 = bench_now_ns();
	for (n = 0; n < NT; n++) {
		s[n].c = &c;
		s[n].me = n;
		if (nvps > 0) {
			struct asx_prio_qos q = ASX_PRIO_QOS(0);

			r = asx_asc_thread_spawn(a, &q.qos, capsule_thread, &s[n], NULL, &t[n]);
		} else if (nvps == 0) {
			r = asx_asc_thread_spawn(a, NULL, capsule_thread, &s[n], NULL, &t[n]);
		} else {
			r = -pthread_create(&pt[n], NULL, capsule_thread, &s[n]);
		}
		if (r)
			break;
	}
	if (r) {
		/* cannot happen short of resource exhaustion; the ring would hang */
		abort();
	}
	for (int i = 0; i < n; i++) {
		if (nvps >= 0)
			asx_asc_thread_join(t[i], NULL);
		else
			pthread_join(pt[i], NULL);
	}
	*block = (double)(c.t1 - c.t0) / 1e9;
	*sync = (double)(c.t2 - c.t1) / 1e9;
	*ypr = (double)c.yields / ((double)rounds * NT);
out:
	if (a)
		asx_asc_destroy(a);
	pthread_barrier_destroy(&c.pb);
	return r;
}

static const struct {
	const char *name;
	int nvps;
} configs[] = {
	{ "prio1", 1 }, { "prio2", 2 }, { "prio4", 4 }, { "prio8", 8 },
	{ "direct", 0 }, { "pthread", -1 },
	{ "user2", NVPS_USER2 }, { "user1", NVPS_USER1 },
};
#define NCFG ((int)(sizeof(configs) / sizeof(configs[0])))

/*
 * A record of configuration @k's @phase ("block" or "sync", the
 * experiment field): sched asc (impl prio, prio_sa on activations, or
 * direct; pes its VPs) or pthread (pes its kernel threads).
 */
static void cb_put(struct bench_ctx *ctx, const char *key, int k, const char *phase,
		   const char *metric, double value, double *runs, int nruns, const char *unit)
{
	int nvps = configs[k].nvps;
	bool un1 = nvps <= NVPS_USER2;	/* N:1 user threads: one kernel thread */

	bench_record(ctx, &(struct bench_rec){
		.key = key, .experiment = phase,
		.sched = nvps >= 0 ? "asc" : un1 ? NULL : "pthread",
		.impl = nvps > 0 ? (activations ? "prio_sa" : "prio") : nvps == 0 ? "direct" :
			un1 ? configs[k].name : NULL,
		.pes = nvps > 0 ? (unsigned int)nvps : un1 ? 1 : NT, .threads = NT, .metric = metric,
		.value = value, .runs = runs, .nruns = runs ? (size_t)nruns : 0, .unit = unit });
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* median of the per-run ratios a[r] / b[r] (paired: measured close in time) */
static double paired_ratio(const double *a, const double *b, int runs)
{
	double *q = calloc((size_t)runs, sizeof(double)), m;

	if (!q)
		return 0;
	for (int r = 0; r < runs; r++)
		q[r] = b[r] > 0 ? a[r] / b[r] : 0;
	qsort(q, (size_t)runs, sizeof(double), cmp_dbl);
	m = runs % 2 ? q[runs / 2] : (q[runs / 2 - 1] + q[runs / 2]) / 2;
	free(q);
	return m;
}

static int cmd_capsule_block(struct bench_ctx *ctx, int argc, char **argv)
{
	long sleep_ns = ctx->quick ? 100000000L : 1000000000L;
	/* enough rounds that the fastest configuration's sync phase lasts tens
	 * of milliseconds, well above scheduling noise on a shared machine */
	unsigned long rounds = ctx->quick ? 2000 : 100000;
	int runs = ctx->quick ? 1 : ctx->runs;
	double *b[NCFG], *s[NCFG], *y[NCFG], med_b[NCFG], med_s[NCFG];
	bool on[NCFG], user = false;
	const char *only = NULL;
	int ret = 0;

	/* --config NAME: one configuration only; --rounds N */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-lineup"))
			no_lineup = true;	/* keep the barrier's order (noisy) */
		else if (!strcmp(argv[i], "--activations"))
			activations = true;
		else if (!strcmp(argv[i], "--user"))
			user = true;	/* the N:1 User columns (--full: too) */
	}
	if (activations) {
		int r = asx_sa_probe();

		if (r) {
			bench_say(ctx, "capsule-block --activations: no activations here "
				  "(%s); load asx.ko (the test VM: see Documentation/testing.rst)\n",
				  strerror(-r));
			return r;
		}
	}
	for (int i = 1; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--config"))
			only = argv[i + 1];
		else if (!strcmp(argv[i], "--rounds"))
			rounds = strtoul(argv[i + 1], NULL, 10);
	}
	if (!rounds)
		return -EINVAL;
	for (int k = 0; k < NCFG; k++) {
		on[k] = only ? !strcmp(only, configs[k].name) :
		       configs[k].nvps > NVPS_USER2 || user || ctx->full;
		b[k] = calloc((size_t)runs, sizeof(double));
		s[k] = calloc((size_t)runs, sizeof(double));
		y[k] = calloc((size_t)runs, sizeof(double));
		if (!b[k] || !s[k] || !y[k])
			ret = -ENOMEM;
	}
	/*
	 * Interleaved: each run measures every configuration once, starting
	 * one further along each time, so a slow spell of the machine is
	 * spread over all of them rather than charged to one.
	 */
	for (int r = 0; r < runs && !ret; r++) {
		for (int j = 0; j < NCFG && !ret; j++) {
			int k = (j + r) % NCFG;

			if (on[k])
				ret = capsule_run(configs[k].nvps, sleep_ns, rounds, &b[k][r],
						  &s[k][r], &y[k][r]);
		}
	}
	if (!ret) {
		char key[64];

		bench_say(ctx, "capsule-block%s: %d threads, %.1f s %s sleep, barrier, "
			  "%lu-round token ring; medians of %d interleaved runs\n",
			  activations ? " --activations" : "", NT, sleep_ns / 1e9,
			  activations ? "unwrapped (PRIO on activations)" : "wrapped", rounds,
			  runs);
		bench_say(ctx, "  %-10s %10s %10s %12s %12s %10s\n", "config", "block s",
			  "sync s", "ns/hand-off", "yields/h-o", "sync/prio1");
		for (int k = 0; k < NCFG; k++) {
			if (!on[k])
				continue;
			med_b[k] = bench_median(b[k], (size_t)runs);
			med_s[k] = bench_median(s[k], (size_t)runs);
			bench_say(ctx, "  %-10s %10.3f %10.4f %12.1f %12.2f", configs[k].name,
				  med_b[k], med_s[k], med_s[k] * 1e9 / ((double)rounds * NT),
				  bench_median(y[k], (size_t)runs));
			if (on[0])
				bench_say(ctx, " %9.2fx", med_s[k] / med_s[0]);
			bench_say(ctx, "\n");
			snprintf(key, sizeof(key), "%s_block_s", configs[k].name);
			cb_put(ctx, key, k, "block", "phase_s", med_b[k], b[k], runs, "s");
			snprintf(key, sizeof(key), "%s_sync_s", configs[k].name);
			cb_put(ctx, key, k, "sync", "phase_s", med_s[k], s[k], runs, "s");
		}
		if (on[0] && on[1]) {
			/* the target: prio2 syncs within 1.3x of prio1 */
			double pr = paired_ratio(s[1], s[0], runs);

			bench_say(ctx, "  prio2/prio1 sync: %.2fx (ratio of medians), %.2fx "
				  "(median of per-run ratios)\n", med_s[1] / med_s[0], pr);
			cb_put(ctx, "prio2_over_prio1_sync", 1, "sync", "over_prio1",
			       med_s[1] / med_s[0], NULL, 0, "x");
		}
		if (on[1]) {
			/* the target with activations: 2 VPs block for about one sleep */
			bench_say(ctx, "  prio2 block / sleep: %.3fx\n", med_b[1] / (sleep_ns / 1e9));
			cb_put(ctx, "prio2_block_over_sleep", 1, "block", "over_sleep",
			       med_b[1] / (sleep_ns / 1e9), NULL, 0, "x");
		}
		if (on[1] && on[5]) {
			bench_say(ctx, "  pthread/prio2 sync: %.1fx\n", med_s[5] / med_s[1]);
			cb_put(ctx, "pthread_over_prio2_sync", 5, "sync", "over_prio2",
			       med_s[5] / med_s[1], NULL, 0, "x");
		}
	}
	for (int k = 0; k < NCFG; k++) {
		free(b[k]);
		free(s[k]);
		free(y[k]);
	}
	return ret;
}

BENCH_COMMAND(capsule_block, "capsule-block",
	      "whole-capsule blocking: wrapped sleep then a yield ring, PRIO 1-8 VPs, "
	      "DIRECT, pthreads",
	      "[--config prio1|prio2|prio4|prio8|direct|pthread|user1|user2] [--rounds N] "
	      "[--no-lineup] [--activations] [--user]",
	      cmd_capsule_block)
