// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_fls.c - `asx-bench fls`: what a thread-local value costs to read,
 * fiber-local storage against the thread-local storage under it.
 *
 *   tls          a __thread variable of this program (the floor: one
 *                load through the thread pointer, here through a call,
 *                as the others are)
 *   pthread      pthread_getspecific() on a pthread
 *   fls_pthread  asx_asc_getspecific() on a pthread
 *   fls          asx_asc_getspecific() on an ASC user thread (PRIO, one VP)
 *
 * Each reads its value --n times in a loop (the default 20 M, --quick
 * 2 M) and adds what it read, which must come out as expected (nothing
 * optimised away).  Figures are nanoseconds per read, medians of --runs
 * runs; the four alternate within each run, the first turning from run
 * to run.  fls_get_over_pthread_getspecific: fls's time over pthread's,
 * the median of the per-run ratios (below 1: cheaper than
 * pthread_getspecific()).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <asx/asc.h>
#include "bench.h"

enum f_impl { F_TLS, F_PTHREAD, F_FLS_PTHREAD, F_FLS, F_NIMPL };

static const struct {
	const char *name;	/* the impl field */
	const char *key;	/* its record's key */
	const char *label;
} f_impl[F_NIMPL] = {
	{ "tls", "tls_get_ns", "__thread variable" },
	{ "pthread", "pthread_getspecific_ns", "pthread_getspecific, pthread" },
	{ "fls_pthread", "fls_get_pthread_ns", "asx_asc_getspecific, pthread" },
	{ "fls", "fls_get_ns", "asx_asc_getspecific, ASC user thread" },
};

static __thread uintptr_t f_tls;

struct fjob {
	enum f_impl impl;
	unsigned long n;
	pthread_key_t pk;
	asx_asc_key_t ak;
	uintptr_t sum;
	int err;
};

/* out of line, as the library calls are */
static __attribute__((noipa)) uintptr_t tls_get(void)
{
	uintptr_t v = f_tls;

	__asm__ volatile("" : "+r"(v));	/* a read per call, not one hoisted */
	return v;
}

static void *f_thread(void *arg)
{
	struct fjob *j = arg;
	uintptr_t sum = 0, mine = 0x10;
	unsigned long i;

	switch (j->impl) {
	case F_TLS:
		f_tls = mine;
		for (i = 0; i < j->n; i++)
			sum += tls_get();
		break;
	case F_PTHREAD:
		j->err = pthread_setspecific(j->pk, (void *)mine);
		for (i = 0; i < j->n && !j->err; i++)
			sum += (uintptr_t)pthread_getspecific(j->pk);
		break;
	default:
		j->err = -asx_asc_setspecific(j->ak, (void *)mine);
		for (i = 0; i < j->n && !j->err; i++)
			sum += (uintptr_t)asx_asc_getspecific(j->ak);
		break;
	}
	j->sum = sum;
	return NULL;
}

/* Nanoseconds per read of @impl, or a negative errno. */
static double f_measure(enum f_impl impl, unsigned long n, pthread_key_t pk, asx_asc_key_t ak)
{
	struct fjob j = { .impl = impl, .n = n, .pk = pk, .ak = ak };
	void *args[1] = { &j };
	uint64_t ns;
	int r;

	r = bench_run_threads(impl == F_FLS, 1, 1, 1, f_thread, args, &ns);
	if (r)
		return r;
	if (j.err)
		return -j.err;
	/* every read saw the thread's own value */
	if (j.sum != (uintptr_t)0x10 * n)
		return -EIO;
	return (double)ns / (double)n;
}

static int cmd_fls(struct bench_ctx *ctx, int argc, char **argv)
{
	unsigned long n = ctx->quick ? 2000000 : 20000000;
	int runs = ctx->runs, ret = 0;
	double *v[F_NIMPL], *q = calloc((size_t)runs, sizeof(double));
	pthread_key_t pk;
	asx_asc_key_t ak;
	bool keys = false;
	char *end;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc) {
			n = strtoul(argv[++i], &end, 10);
			if (*end || !n) {
				fprintf(stderr, "asx-bench fls: --n wants a count above 0\n");
				free(q);
				return -EINVAL;
			}
		} else {
			fprintf(stderr, "asx-bench fls: unknown option %s\n", argv[i]);
			free(q);
			return -EINVAL;
		}
	}
	if (!q)
		return -ENOMEM;
	for (int i = 0; i < F_NIMPL; i++) {
		v[i] = calloc((size_t)runs, sizeof(double));
		if (!v[i])
			ret = -ENOMEM;
	}
	if (!ret && pthread_key_create(&pk, NULL))
		ret = -EAGAIN;
	if (!ret && asx_asc_key_create(&ak, NULL)) {
		pthread_key_delete(pk);
		ret = -EAGAIN;
	}
	keys = !ret;
	for (int r = 0; r < runs && !ret; r++)
		for (int k = 0; k < F_NIMPL && !ret; k++) {
			int i = (k + r) % F_NIMPL;

			v[i][r] = f_measure((enum f_impl)i, n, pk, ak);
			if (v[i][r] < 0) {
				fprintf(stderr, "asx-bench fls: %s: %s\n", f_impl[i].name,
					strerror((int)-v[i][r]));
				ret = -EIO;
			}
		}
	if (!ret) {
		double med[F_NIMPL];

		for (int r = 0; r < runs; r++)
			q[r] = v[F_FLS][r] / v[F_PTHREAD][r];
		bench_say(ctx, "fls: ns per read of a thread-local value, medians of %d runs "
			  "of %lu reads\n", runs, n);
		for (int i = 0; i < F_NIMPL; i++) {
			med[i] = bench_median(v[i], (size_t)runs);
			bench_record(ctx, &(struct bench_rec){
				.key = f_impl[i].key, .experiment = "get", .impl = f_impl[i].name,
				.sched = i == F_FLS ? "asc" : "pthread", .pes = 1, .threads = 1,
				.metric = "get_ns", .value = med[i], .runs = v[i],
				.nruns = (size_t)runs, .unit = "ns" });
			bench_say(ctx, "  %-40s %8.2f\n", f_impl[i].label, med[i]);
		}
		bench_record(ctx, &(struct bench_rec){
			.key = "fls_get_over_pthread_getspecific", .experiment = "get",
			.impl = "fls", .sched = "asc", .pes = 1, .threads = 1,
			.metric = "over_pthread_getspecific", .value = bench_median(q, (size_t)runs),
			.unit = "x" });
		bench_say(ctx, "  fls over pthread_getspecific: %.2fx (median of per-run ratios)\n",
			  bench_median(q, (size_t)runs));
	}
	if (keys) {
		pthread_key_delete(pk);
		asx_asc_key_delete(ak);
	}
	for (int i = 0; i < F_NIMPL; i++)
		free(v[i]);
	free(q);
	return ret;
}

BENCH_COMMAND(fls, "fls",
	      "fiber-local storage: asx_asc_getspecific on a user thread and on a pthread "
	      "against pthread_getspecific and a __thread variable",
	      "[--n READS]", cmd_fls)
