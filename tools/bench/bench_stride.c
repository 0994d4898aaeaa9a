// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_stride.c - `asx-bench stride`: how accurately STRIDE (proportional
 * share by tickets, the paper's 3.7) divides one VP.
 *
 * Three user threads at tickets 1:2:4 in one STRIDE ASC with one VP each
 * do the same unit of work (a fixed loop) over and over, yielding after
 * each; the work each got through is its share of the CPU.  The error of
 * a thread is |observed share - tickets / 7| / (tickets / 7);
 * stride_share_error is the largest of the three (0: exact).
 *
 * The blocking experiment: the 2-ticket thread sleeps after each burst of
 * 64 units for as long as the burst took, so it is runnable about half
 * the time.  STRIDE gives a waking thread no credit for the time it
 * slept, so the others' shares hold between them (1:4):
 * stride_share_error_blocking is the relative error of their ratio, and
 * stride_blocker_share the blocking thread's share over its 2/7.
 *
 * Duration per run and experiment: 1 s, --quick 0.3 s, --full 10 s (the
 * issue's figure); medians of --runs runs.  `make demo` (3 runs): 6 s.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/asc.h>
#include "bench.h"

#define S_THREADS	3
#define S_UNIT		5000	/* loop iterations per unit of work (a few us) */
#define S_BURST		64	/* units between the blocker's sleeps */

static const uint32_t s_tickets[S_THREADS] = { 1, 2, 4 };

struct s_thread {
	uint64_t work;		/* units done */
	bool blocks;
	const int *stop;
};

static void *s_main(void *arg)
{
	struct s_thread *s = arg;
	uint64_t n = 0, t0 = 0;

	while (!__atomic_load_n(s->stop, __ATOMIC_ACQUIRE)) {
		if (s->blocks && n % S_BURST == 0)
			t0 = asx_now_ns();
		for (int i = 0; i < S_UNIT; i++)
			__asm__ volatile("" ::: "memory");
		n++;
		__atomic_store_n(&s->work, n, __ATOMIC_RELAXED);
		if (s->blocks && n % S_BURST == 0)
			asx_asc_thread_sleep(asx_now_ns() - t0);
		else
			asx_asc_thread_yield();
	}
	return NULL;
}

/* One run: @secs seconds; the units each thread did in @work. */
static int s_run(double secs, bool blocking, uint64_t *work)
{
	struct s_thread th[S_THREADS] = { 0 };
	struct asx_asc_thread *t[S_THREADS];
	struct asx_asc *asc;
	int stop = 0, r, n = 0;

	r = asx_asc_create(&asc, &asx_asc_stride, NULL);
	if (r)
		return r;
	for (n = 0; n < S_THREADS; n++) {
		struct asx_stride_qos q = ASX_STRIDE_QOS(s_tickets[n]);

		th[n].stop = &stop;
		th[n].blocks = blocking && s_tickets[n] == 2;
		r = asx_asc_thread_spawn(asc, &q.qos, s_main, &th[n], NULL, &t[n]);
		if (r)
			break;
	}
	if (!r)
		asx_asc_thread_sleep((uint64_t)(secs * 1e9));
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < n; i++)
		asx_asc_thread_join(t[i], NULL);
	asx_asc_destroy(asc);
	for (int i = 0; i < S_THREADS; i++)
		work[i] = th[i].work;
	return r;
}

static double rel_err(double got, double want)
{
	return got > want ? (got - want) / want : (want - got) / want;
}

static int cmd_stride(struct bench_ctx *ctx, int argc, char **argv)
{
	double secs = ctx->quick ? 0.3 : ctx->full ? 10.0 : 1.0;
	int runs = ctx->runs, ret = 0;
	double *e = calloc((size_t)runs, sizeof(double));
	double *eb = calloc((size_t)runs, sizeof(double));
	double *bs = calloc((size_t)runs, sizeof(double));
	double sh[S_THREADS] = { 0 };

	(void)argv;
	if (argc > 1) {
		fprintf(stderr, "asx-bench stride: unknown option %s\n", argv[1]);
		ret = -EINVAL;
	}
	if (!ret && (!e || !eb || !bs))
		ret = -ENOMEM;
	bench_setting(ctx, "stride_seconds", secs);
	for (int r = 0; r < runs && !ret; r++) {
		uint64_t w[S_THREADS], sum = 0;

		ret = s_run(secs, false, w);
		for (int i = 0; i < S_THREADS; i++)
			sum += w[i];
		if (!ret && !sum)
			ret = -EIO;
		for (int i = 0; i < S_THREADS && !ret; i++) {
			double err = rel_err((double)w[i] / (double)sum, s_tickets[i] / 7.0);

			sh[i] = (double)w[i] / (double)sum;
			if (err > e[r])
				e[r] = err;
		}
		if (ret)
			break;
		/* with the 2-ticket thread blocking half the time */
		ret = s_run(secs, true, w);
		if (!ret && (!w[0] || !w[2]))
			ret = -EIO;
		if (ret)
			break;
		sum = w[0] + w[1] + w[2];
		eb[r] = rel_err((double)w[2] / (double)w[0], 4.0);
		bs[r] = ((double)w[1] / (double)sum) / (2.0 / 7.0);
	}
	if (!ret) {
		double me = bench_median(e, (size_t)runs), meb = bench_median(eb, (size_t)runs);
		double mbs = bench_median(bs, (size_t)runs);

		bench_say(ctx, "stride: 3 threads at tickets 1:2:4 on one VP, %.1f s per run, "
			  "medians of %d runs\n", secs, runs);
		bench_say(ctx, "  shares (last run)             %.3f %.3f %.3f (want %.3f %.3f %.3f)\n",
			  sh[0], sh[1], sh[2], 1 / 7.0, 2 / 7.0, 4 / 7.0);
		bench_say(ctx, "  max relative share error      %.3f\n", me);
		bench_say(ctx, "  one thread blocking half the time: the others' 1:4 ratio off by "
			  "%.3f; the blocker got %.2f of its 2/7\n", meb, mbs);
		bench_record(ctx, &(struct bench_rec){
			.key = "stride_share_error", .experiment = "share", .impl = "stride",
			.sched = "asc", .pes = 1, .threads = S_THREADS, .metric = "share_error",
			.value = me, .runs = e, .nruns = (size_t)runs, .unit = "x" });
		bench_record(ctx, &(struct bench_rec){
			.key = "stride_share_error_blocking", .experiment = "share_blocking",
			.impl = "stride", .sched = "asc", .pes = 1, .threads = S_THREADS,
			.metric = "share_error", .value = meb, .runs = eb, .nruns = (size_t)runs,
			.unit = "x" });
		bench_record(ctx, &(struct bench_rec){
			.key = "stride_blocker_share", .experiment = "share_blocking",
			.impl = "stride", .sched = "asc", .pes = 1, .threads = S_THREADS,
			.metric = "blocker_share", .value = mbs, .runs = bs, .nruns = (size_t)runs,
			.unit = "x" });
	} else {
		fprintf(stderr, "asx-bench stride: %s\n", strerror(-ret));
	}
	free(e);
	free(eb);
	free(bs);
	return ret;
}

BENCH_COMMAND(stride, "stride",
	      "STRIDE proportional share: 3 threads at tickets 1:2:4 on one VP, the error "
	      "of the observed shares, also with one thread blocking half the time",
	      "", cmd_stride)
