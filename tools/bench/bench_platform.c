// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_platform.c - `asx-bench platform`: the platform costs the papers
 * start from (000 section 3.1, 001 section 4.1), measured side by side.
 *
 * Four rows, each for three kinds of thread and lock where they apply:
 *   pthread  POSIX threads with pthread_mutex_t / pthread_cond_t
 *   asx      POSIX (kernel) threads with libasx's asx_mutex / asx_cond
 *   asc      ASC user threads (PRIO) with asx_asc_mutex / asx_asc_cond
 *
 *   mutex_uncontended  one thread: lock, increment, unlock
 *   mutex_contended    two threads doing the same on one lock (ASC: on two
 *                      VPs); the counter must come out 2N (nothing lost)
 *   cond_handoff       two threads take turns: lock, wait on the condition
 *                      until it is their turn, pass the turn, signal,
 *                      unlock (ASC: one VP); each hand-off is counted and
 *                      the count must come out 2N
 *   switch             two threads take turns by yielding: pthreads pinned
 *                      to one CPU with sched_yield(), ASC threads on one VP
 *                      with asx_asc_thread_yield(); asx has no thread
 *                      switch of its own (its threads are pthreads)
 *
 * Figures are nanoseconds per acquire+release, hand-off or switch, medians
 * of --runs runs; the implementations alternate within each run, the
 * first one turning from run to run, so a slow spell hits all alike.
 * pthread_over: the pthread row's time over this one's, the median of the
 * per-run ratios (above 1: faster than pthreads).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <asx/asc.h>
#include <asx/sync.h>
#include "bench.h"

enum p_impl { P_PTHREAD, P_ASX, P_ASC, P_NIMPL };
static const char *const p_impl_name[P_NIMPL] = { "pthread", "asx", "asc" };

enum p_row { R_UNCONT, R_CONT, R_COND, R_SWITCH, R_NROWS };

static const struct {
	const char *name;	/* the experiment field */
	const char *label;
	int threads;
	unsigned int asc_vps;
	unsigned long n, nquick;	/* per thread */
	bool has_asx;
} p_rows[R_NROWS] = {
	{ "mutex_uncontended", "mutex acquire+release, uncontended", 1, 1, 5000000, 500000,
	  true },
	{ "mutex_contended", "mutex acquire+release, 2 threads contending", 2, 2, 500000,
	  50000, true },
	{ "cond_handoff", "condition signal/wait hand-off", 2, 1, 20000, 2000, true },
	{ "switch", "thread switch (yield hand-off, one CPU)", 2, 1, 20000, 2000, false },
};

struct plat {
	pthread_mutex_t pm;
	pthread_cond_t pc;
	struct asx_mutex am;
	struct asx_cond ac;
	struct asx_asc_mutex sm;
	struct asx_asc_cond sc;
	enum p_impl impl;
	enum p_row row;
	unsigned long n;
	int cpu;			/* switch row, pthreads: the one CPU */
	int turn;
	long counter __attribute__((aligned(64)));
};

struct pself {
	struct plat *p;
	int me;
};

static void p_lock(struct plat *p)
{
	switch (p->impl) {
	case P_PTHREAD: pthread_mutex_lock(&p->pm); break;
	case P_ASX: asx_mutex_lock(&p->am); break;
	default: asx_asc_mutex_lock(&p->sm); break;
	}
}

static void p_unlock(struct plat *p)
{
	switch (p->impl) {
	case P_PTHREAD: pthread_mutex_unlock(&p->pm); break;
	case P_ASX: asx_mutex_unlock(&p->am); break;
	default: asx_asc_mutex_unlock(&p->sm); break;
	}
}

static void p_wait(struct plat *p)
{
	switch (p->impl) {
	case P_PTHREAD: pthread_cond_wait(&p->pc, &p->pm); break;
	case P_ASX: asx_cond_wait(&p->ac, &p->am); break;
	default: asx_asc_cond_wait(&p->sc, &p->sm); break;
	}
}

static void p_signal(struct plat *p)
{
	switch (p->impl) {
	case P_PTHREAD: pthread_cond_signal(&p->pc); break;
	case P_ASX: asx_cond_signal(&p->ac); break;
	default: asx_asc_cond_signal(&p->sc); break;
	}
}

static void *p_thread(void *arg)
{
	struct pself *s = arg;
	struct plat *p = s->p;
	unsigned long i;

	switch (p->row) {
	case R_UNCONT:
	case R_CONT:
		for (i = 0; i < p->n; i++) {
			p_lock(p);
			p->counter++;
			p_unlock(p);
		}
		break;
	case R_COND:
		for (i = 0; i < p->n; i++) {
			p_lock(p);
			while (p->turn != s->me)
				p_wait(p);
			p->turn = !s->me;
			p->counter++;
			p_signal(p);
			p_unlock(p);
		}
		break;
	default:
		if (p->impl != P_ASC) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(p->cpu, &set);
			pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
		}
		for (i = 0; i < p->n; i++) {
			while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) != s->me) {
				if (p->impl == P_ASC)
					asx_asc_thread_yield();
				else
					sched_yield();
			}
			__atomic_add_fetch(&p->counter, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&p->turn, !s->me, __ATOMIC_RELEASE);
		}
		break;
	}
	return NULL;
}

/* Nanoseconds per operation of @impl in @row, or a negative errno. */
static double p_measure(enum p_row row, enum p_impl impl, unsigned long n)
{
	struct plat *p = aligned_alloc(64, sizeof(*p));
	int nt = p_rows[row].threads, r;
	struct pself s[2];
	void *args[2] = { &s[0], &s[1] };
	uint64_t ns;
	double ret;

	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->pm, NULL);
	pthread_cond_init(&p->pc, NULL);
	asx_mutex_init(&p->am);
	asx_cond_init(&p->ac);
	asx_asc_mutex_init(&p->sm);
	asx_asc_cond_init(&p->sc);
	p->impl = impl;
	p->row = row;
	p->n = n;
	p->cpu = sched_getcpu() > 0 ? sched_getcpu() : 0;
	s[0] = (struct pself){ p, 0 };
	s[1] = (struct pself){ p, 1 };
	r = bench_run_threads(impl == P_ASC, p_rows[row].asc_vps, 0, (unsigned int)nt, p_thread,
			      args, &ns);
	/* every acquisition, hand-off or switch counted once: none lost */
	ret = r ? r : p->counter == (long)(n * (unsigned long)nt) ?
	      (double)ns / ((double)n * nt) : -EIO;
	pthread_cond_destroy(&p->pc);
	pthread_mutex_destroy(&p->pm);
	asx_mutex_destroy(&p->am);
	asx_cond_destroy(&p->ac);
	free(p);
	return ret;
}

/* a record of @row and @impl: its pes are the ASC's VPs or the pthreads */
static void p_put(struct bench_ctx *ctx, const char *key, int row, int impl,
		  const char *metric, double value, double *runs, int nruns, const char *unit)
{
	bench_record(ctx, &(struct bench_rec){
		.key = key, .experiment = p_rows[row].name,
		.sched = impl == P_ASC ? "asc" : "pthread", .impl = p_impl_name[impl],
		.pes = impl == P_ASC ? p_rows[row].asc_vps : (unsigned int)p_rows[row].threads,
		.threads = (unsigned int)p_rows[row].threads, .metric = metric, .value = value,
		.runs = runs, .nruns = runs ? (size_t)nruns : 0, .unit = unit });
}

static int cmd_platform(struct bench_ctx *ctx, int argc, char **argv)
{
	int runs = ctx->runs;
	double *v[R_NROWS][P_NIMPL], *q = calloc((size_t)runs, sizeof(double));
	int ret = q ? 0 : -ENOMEM;

	if (argc > 1) {
		fprintf(stderr, "asx-bench platform: no options\n");
		free(q);
		return -EINVAL;
	}
	for (int row = 0; row < R_NROWS; row++)
		for (int i = 0; i < P_NIMPL; i++) {
			v[row][i] = calloc((size_t)runs, sizeof(double));
			if (!v[row][i])
				ret = -ENOMEM;
		}
	for (int r = 0; r < runs && !ret; r++) {
		for (int row = 0; row < R_NROWS && !ret; row++) {
			unsigned long n = ctx->quick ? p_rows[row].nquick : p_rows[row].n;

			for (int j = 0; j < P_NIMPL && !ret; j++) {
				int i = (j + r) % P_NIMPL;

				if (i == P_ASX && !p_rows[row].has_asx)
					continue;
				v[row][i][r] = p_measure((enum p_row)row, (enum p_impl)i, n);
				if (v[row][i][r] < 0) {
					fprintf(stderr, "asx-bench platform: %s, %s: %s\n",
						p_rows[row].name, p_impl_name[i],
						strerror((int)-v[row][i][r]));
					ret = -EIO;
				}
			}
		}
	}
	if (!ret) {
		bench_say(ctx, "platform: ns per operation, medians of %d runs; x pthread = "
			  "pthread's time / this one's (median of per-run ratios)\n", runs);
		bench_say(ctx, "  %-46s %10s %10s %10s %9s %9s\n", "", "pthread", "asx", "asc",
			  "asx x pt", "asc x pt");
	}
	for (int row = 0; row < R_NROWS && !ret; row++) {
		double med[P_NIMPL] = { 0 }, ratio[P_NIMPL] = { 1, 0, 0 };
		char key[80];

		for (int i = 0; i < P_NIMPL; i++) {
			if (i == P_ASX && !p_rows[row].has_asx)
				continue;
			for (int r = 0; r < runs; r++)
				q[r] = v[row][P_PTHREAD][r] / v[row][i][r];
			ratio[i] = bench_median(q, (size_t)runs);
			med[i] = bench_median(v[row][i], (size_t)runs);
			snprintf(key, sizeof(key), "platform_%s_%s_ns", p_rows[row].name,
				 p_impl_name[i]);
			p_put(ctx, key, row, i, "op_ns", med[i], v[row][i], runs, "ns");
			if (i == P_PTHREAD)
				continue;
			snprintf(key, sizeof(key), "platform_%s_%s_over_pthread",
				 p_rows[row].name, p_impl_name[i]);
			p_put(ctx, key, row, i, "pthread_over", ratio[i], NULL, 0, "x");
		}
		if (p_rows[row].has_asx)
			bench_say(ctx, "  %-46s %10.1f %10.1f %10.1f %8.2fx %8.1fx\n",
				  p_rows[row].label, med[P_PTHREAD], med[P_ASX], med[P_ASC],
				  ratio[P_ASX], ratio[P_ASC]);
		else
			bench_say(ctx, "  %-46s %10.1f %10s %10.1f %9s %8.1fx\n",
				  p_rows[row].label, med[P_PTHREAD], "-", med[P_ASC], "-",
				  ratio[P_ASC]);
	}
	for (int row = 0; row < R_NROWS; row++)
		for (int i = 0; i < P_NIMPL; i++)
			free(v[row][i]);
	free(q);
	return ret;
}

BENCH_COMMAND(platform, "platform",
	      "platform costs (000 3.1, 001 4.1): mutex, contended mutex, condition hand-off, "
	      "thread switch; pthreads vs asx vs ASC",
	      NULL, cmd_platform)
