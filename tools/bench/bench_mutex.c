// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_mutex.c - `asx-bench mutex`: the adaptive asx_mutex against
 * pthread_mutex_t (default attributes) under two-thread contention.
 *
 * Two threads each do N cycles of lock / increment a shared counter /
 * unlock.  Two cases: the bare critical section (worst case, the lock
 * word bounces between the cores all the time) and the same plus about
 * 100 ns of private work outside the lock (closer to real use).  Runs of
 * ASX and of the baseline alternate, and the order flips each run, so
 * drifts in machine load hit both alike; figures are medians.
 * Context switches per operation come from getrusage() deltas.
 *
 * Beside them, the floor: the same cycles with no lock at all, only the one
 * atomic read-modify-write on a word of the lock's cache line that any
 * lock's acquire needs, and the counter's increment.  Its counter may lose
 * updates (nothing excludes); it is not checked.  asx / floor and
 * pthread / floor say how close each lock is to it, and so how much
 * faster than the baseline a lock can be at all in that row.  It bounds
 * the rows with work, where the threads' cycles interleave; in the bare
 * row a thread that keeps both lines in its cache runs many cycles in a
 * row, and a lock that lets it (a spinning one) goes past the "floor".
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <asx/sync.h>
#include "bench.h"

#define MAXT 256

enum impl { IMPL_ASX, IMPL_PTHREAD, IMPL_FLOOR, NIMPL };
static const char *const impl_name[NIMPL] = { "asx", "pthread", "floor" };

struct shared {
	struct asx_mutex am;
	pthread_mutex_t pm;
	uint32_t fl;		/* the floor's word, on the locks' line */
	int go;			/* 1: start, -1: give up */
	long n;			/* cycles per thread */
	int nthreads;
	unsigned int work;	/* work() units outside the lock */
	enum impl impl;
	/* the counter, on its own line away from the locks */
	long counter __attribute__((aligned(64)));
};

static unsigned int work_units_100ns = 1;

/* Private work that the compiler cannot drop: ~work_units_100ns per 100 ns. */
static inline void work(unsigned int units)
{
	unsigned int x = units;

	for (unsigned int i = 0; i < units; i++) {
		x = x * 1103515245u + 12345u;
		__asm__ __volatile__("" : "+r"(x));
	}
}

static void calibrate_work(void)
{
	const unsigned int probe = 1000000;
	uint64_t t0 = bench_now_ns();

	work(probe);
	double ns_per_unit = (double)(bench_now_ns() - t0) / probe;

	if (ns_per_unit <= 0)
		ns_per_unit = 1;
	work_units_100ns = (unsigned int)(100.0 / ns_per_unit);
	if (!work_units_100ns)
		work_units_100ns = 1;
}

static void *worker(void *arg)
{
	struct shared *s = arg;
	long n = s->n;
	unsigned int w = s->work;

	while (!__atomic_load_n(&s->go, __ATOMIC_ACQUIRE))
		sched_yield();
	if (__atomic_load_n(&s->go, __ATOMIC_RELAXED) < 0)
		return NULL;
	if (s->impl == IMPL_ASX) {
		for (long i = 0; i < n; i++) {
			asx_mutex_lock(&s->am);
			s->counter++;
			asx_mutex_unlock(&s->am);
			if (w)
				work(w);
		}
	} else if (s->impl == IMPL_PTHREAD) {
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&s->pm);
			s->counter++;
			pthread_mutex_unlock(&s->pm);
			if (w)
				work(w);
		}
	} else {
		for (long i = 0; i < n; i++) {
			__atomic_fetch_add(&s->fl, 1, __ATOMIC_ACQ_REL);
			__atomic_store_n(&s->counter, __atomic_load_n(&s->counter, __ATOMIC_RELAXED) + 1,
					 __ATOMIC_RELAXED);
			if (w)
				work(w);
		}
	}
	return NULL;
}

static long csw_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

struct sample {
	double ops_per_s;
	double csw_per_op;
};

static int run_once(struct shared *s, enum impl impl, struct sample *out)
{
	pthread_t t[MAXT];
	uint64_t t0, t1;
	long c0, c1;
	int i, err;

	s->impl = impl;
	s->counter = 0;
	s->go = 0;
	asx_mutex_init(&s->am);
	for (i = 0; i < s->nthreads; i++) {
		err = pthread_create(&t[i], NULL, worker, s);
		if (err) {
			__atomic_store_n(&s->go, -1, __ATOMIC_RELEASE);
			while (i--)
				pthread_join(t[i], NULL);
			return -err;
		}
	}
	c0 = csw_now();
	t0 = bench_now_ns();
	__atomic_store_n(&s->go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < s->nthreads; i++)
		pthread_join(t[i], NULL);
	t1 = bench_now_ns();
	c1 = csw_now();
	if (impl != IMPL_FLOOR && s->counter != s->nthreads * s->n)
		return -EPROTO;		/* the lock did not exclude */
	out->ops_per_s = (double)(s->nthreads * s->n) * 1e9 / (double)(t1 - t0);
	out->csw_per_op = (double)(c1 - c0) / (double)(s->nthreads * s->n);
	return 0;
}

struct result {
	double ops_per_s[NIMPL];
	double csw_per_op[NIMPL];
	double ratio_med, ratio_min;	/* of the per-run asx / pthread ratios */
};

static int measure(struct bench_ctx *ctx, struct shared *s, struct result *res)
{
	double *ops[NIMPL], *csw[NIMPL];
	int r, k, ret = 0;

	for (k = 0; k < NIMPL; k++) {
		ops[k] = calloc((size_t)ctx->runs, sizeof(double));
		csw[k] = calloc((size_t)ctx->runs, sizeof(double));
		if (!ops[k] || !csw[k])
			ret = -ENOMEM;
	}
	for (r = 0; r < ctx->runs && !ret; r++) {
		for (int j = 0; j < NIMPL && !ret; j++) {
			/* ASX first on even runs, the baseline first on odd ones */
			enum impl impl = (enum impl)((j + r) % NIMPL);
			struct sample smp = { 0, 0 };

			ret = run_once(s, impl, &smp);
			ops[impl][r] = smp.ops_per_s;
			csw[impl][r] = smp.csw_per_op;
		}
	}
	if (!ret) {
		/* paired ratios first: bench_median() sorts in place */
		double *q = calloc((size_t)ctx->runs, sizeof(double));

		if (q) {
			res->ratio_min = 0;
			for (r = 0; r < ctx->runs; r++) {
				q[r] = ops[IMPL_ASX][r] / ops[IMPL_PTHREAD][r];
				if (!r || q[r] < res->ratio_min)
					res->ratio_min = q[r];
			}
			res->ratio_med = bench_median(q, (size_t)ctx->runs);
			free(q);
		} else {
			ret = -ENOMEM;
		}
	}
	for (k = 0; k < NIMPL; k++) {
		if (!ret) {
			res->ops_per_s[k] = bench_median(ops[k], (size_t)ctx->runs);
			res->csw_per_op[k] = bench_median(csw[k], (size_t)ctx->runs);
		}
		free(ops[k]);
		free(csw[k]);
	}
	return ret;
}

static void say_row(struct bench_ctx *ctx, const char *label, const struct result *res)
{
	char a[32], p[32];

	bench_say(ctx, "  %-26s %10s %10s %7.2f %6.2f %6.2f  %8.4f %8.4f  %6.2f %6.2f\n", label,
		  bench_si(a, sizeof(a), res->ops_per_s[IMPL_ASX]),
		  bench_si(p, sizeof(p), res->ops_per_s[IMPL_PTHREAD]),
		  res->ops_per_s[IMPL_ASX] / res->ops_per_s[IMPL_PTHREAD], res->ratio_med,
		  res->ratio_min, res->csw_per_op[IMPL_ASX], res->csw_per_op[IMPL_PTHREAD],
		  res->ops_per_s[IMPL_ASX] / res->ops_per_s[IMPL_FLOOR],
		  res->ops_per_s[IMPL_PTHREAD] / res->ops_per_s[IMPL_FLOOR]);
}

/* The records of one row (@experiment), @threads contending; @prefix starts their keys. */
static void report(struct bench_ctx *ctx, const char *prefix, const char *experiment,
		   int threads, const struct result *res)
{
	const double *ops = res->ops_per_s;
	char key[64];

#define PUT(im, me, v, un) do {						\
		snprintf(key, sizeof(key), "%s_%s%s%s", prefix, im ? im : "",	\
			 im ? "_" : "", me);					\
		bench_record(ctx, &(struct bench_rec){					\
			.key = key, .experiment = experiment,			\
			.impl = im, .threads = (unsigned int)threads, .metric = me,	\
			.value = v, .unit = un });					\
	} while (0)
	for (int k = 0; k < NIMPL; k++) {
		PUT(impl_name[k], "ops_per_s", ops[k], "ops/s");
		PUT(impl_name[k], "csw_per_op", res->csw_per_op[k], "switches/op");
	}
	PUT(NULL, "ratio_vs_pthread", ops[IMPL_ASX] / ops[IMPL_PTHREAD], "x");
	PUT(NULL, "ratio_paired_med", res->ratio_med, "x");
	PUT(NULL, "ratio_paired_min", res->ratio_min, "x");
	PUT("asx", "over_floor", ops[IMPL_ASX] / ops[IMPL_FLOOR], "x");
	PUT("pthread", "over_floor", ops[IMPL_PTHREAD] / ops[IMPL_FLOOR], "x");
#undef PUT
}

/* @threads share @total cycles; the work case unless @bare */
static int row(struct bench_ctx *ctx, struct shared *s, int threads, long total, bool bare,
	       struct result *res)
{
	s->nthreads = threads;
	s->n = total / threads;
	if (s->n < 1)
		s->n = 1;
	s->work = bare ? 0 : work_units_100ns;
	return measure(ctx, s, res);
}

static int bench_mutex(struct bench_ctx *ctx, int argc, char **argv)
{
	struct shared *s;
	struct result tight, loose, four, over;
	long n = ctx->quick ? 200000 : 2000000, total;
	int ncpu = bench_nproc(), nover, ret;
	char label[64];

	if (argc > 2 && !strcmp(argv[1], "-n")) {
		char *end;

		n = strtol(argv[2], &end, 10);
		if (*end || n < 1)
			return -EINVAL;
	} else if (argc > 1) {
		return -EINVAL;
	}
	total = 2 * n;
	nover = 2 * ncpu > MAXT ? MAXT : 2 * ncpu;

	s = aligned_alloc(64, sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->pm, NULL);
	calibrate_work();

	bench_say(ctx, "mutex: %ld lock/increment/unlock cycles shared by the threads, %d CPUs, "
		  "median of %d runs\n", total, ncpu, ctx->runs);
	bench_say(ctx, "  %-26s %10s %10s %7s %6s %6s  %8s %8s  %6s %6s\n", "case", "asx ops/s",
		  "pth ops/s", "ratio", "r.med", "r.min", "asx csw", "pth csw", "asx/fl", "pth/fl");

	ret = row(ctx, s, 2, total, true, &tight);
	if (!ret) {
		say_row(ctx, "2 threads, bare", &tight);
		ret = row(ctx, s, 2, total, false, &loose);
	}
	if (!ret) {
		say_row(ctx, "2 threads, +100 ns work", &loose);
		ret = row(ctx, s, 4, total, false, &four);
	}
	if (!ret) {
		say_row(ctx, "4 threads, +100 ns work", &four);
		if (nover != 4)
			ret = row(ctx, s, nover, total, false, &over);
		else
			over = four;
	}
	if (!ret) {
		snprintf(label, sizeof(label), "%d (2 x CPUs), +100 ns work", nover);
		if (nover != 4)
			say_row(ctx, label, &over);
		else
			bench_say(ctx, "  (4 threads = 2 x CPUs here: the oversubscribed row)\n");
		report(ctx, "mutex", "bare", 2, &tight);
		report(ctx, "mutex_work", "work", 2, &loose);
		report(ctx, "mutex4_work", "work4", 4, &four);
		report(ctx, "mutex_over_work", "over_work", nover, &over);
	}
	if (!ret && ctx->full) {
		/* the sweep: 1 .. ncpu threads and 2 x ncpu, the work case */
		struct result one, r;
		int tmax = ncpu > MAXT ? MAXT : ncpu;

		bench_say(ctx, "  sweep, +100 ns work: speed-up = ops/s over one thread's\n");
		bench_say(ctx, "  %-8s %10s %10s %7s %6s %6s %9s %9s\n", "threads", "asx ops/s",
			  "pth ops/s", "ratio", "r.med", "r.min", "asx spdup", "pth spdup");
		for (int t = 1; !ret && t <= tmax + 1; t++) {
			int nt = t <= tmax ? t : nover;
			char a[32], p[32], key[64];

			if (t > tmax && nover <= tmax)
				break;
			ret = row(ctx, s, nt, total, false, nt == 1 ? &one : &r);
			if (ret)
				break;
			if (nt == 1)
				r = one;
			bench_say(ctx, "  %-8d %10s %10s %7.2f %6.2f %6.2f %9.2f %9.2f\n", nt,
				  bench_si(a, sizeof(a), r.ops_per_s[IMPL_ASX]),
				  bench_si(p, sizeof(p), r.ops_per_s[IMPL_PTHREAD]),
				  r.ops_per_s[IMPL_ASX] / r.ops_per_s[IMPL_PTHREAD], r.ratio_med,
				  r.ratio_min, r.ops_per_s[IMPL_ASX] / one.ops_per_s[IMPL_ASX],
				  r.ops_per_s[IMPL_PTHREAD] / one.ops_per_s[IMPL_PTHREAD]);
			snprintf(key, sizeof(key), "mutex_t%d_work", nt);
			report(ctx, key, "sweep", nt, &r);
			for (int k = IMPL_ASX; k <= IMPL_PTHREAD; k++) {
				char sk[64];

				snprintf(sk, sizeof(sk), "mutex_t%d_work_%s_speedup", nt,
					 impl_name[k]);
				bench_record(ctx, &(struct bench_rec){
					.key = sk, .experiment = "sweep", .impl = impl_name[k],
					.threads = (unsigned int)nt, .metric = "speedup",
					.value = r.ops_per_s[k] / one.ops_per_s[k], .unit = "x" });
			}
		}
	}
	if (!ret)
		bench_say(ctx, "  (ratio = asx / pthread of the medians, r.med / r.min = median / "
			  "minimum of the per-run ratios; higher is better; csw = context "
			  "switches per op; asx/fl, pth/fl = each over the floor: no lock, one "
			  "atomic add on the lock's line per cycle)\n");
	pthread_mutex_destroy(&s->pm);
	free(s);
	return ret;
}

BENCH_COMMAND(mutex, "mutex",
	      "adaptive asx_mutex vs pthread_mutex_t: 2, 4 and 2 x CPUs threads "
	      "(--full: a sweep)",
	      "[-n CYCLES_PER_THREAD]", bench_mutex)
