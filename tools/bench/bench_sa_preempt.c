// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_sa_preempt.c - `asx-bench sa-preempt`: what asx.ko's PREEMPTED
 * events gain an ASC that shares a CPU with a CPU hog.  A PRIO ASC of 2
 * VPs (activations on) runs --threads compute threads, each a fixed amount
 * of work in ~100 us chunks with a yield between, while a plain pthread
 * spins pinned on CPU 0.  The time until every thread is done is taken
 * with asx_asc_opts.act_preempted on (a VP the hog preempts is counted out
 * and a spare runs the queued threads) and off (they wait for the VPs the
 * kernel runs), the two alternating; preempted_gain is the median of the
 * per-run ratios off / on (above 1: the events help).  Needs asx.ko with
 * ASX_FEAT_SA_PREEMPT, so it runs in the test VM; without it it says it is
 * skipped and reports nothing.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <asx/asc.h>
#include <linux/asx.h>
#include "bench.h"

#define P_RUNS_MIN	5	/* medians of at least this many (not --quick) */
#define P_CHUNK_NS	100000ULL
#define P_MAX_THREADS	64

static volatile int p_hog_stop;

static void *p_hog(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&p_hog_stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* Work no compiler removes: @n rounds of a dependent chain. */
static unsigned long p_spin(unsigned long n)
{
	volatile unsigned long x = 1;

	for (unsigned long i = 0; i < n; i++)
		x = x * 2862933555777941757UL + 3037000493UL;
	return x;
}

struct p_thread {
	unsigned long iters;	/* per chunk */
	unsigned int chunks;
	unsigned int done;
};

static void *p_compute(void *arg)
{
	struct p_thread *p = arg;

	for (unsigned int c = 0; c < p->chunks; c++) {
		p_spin(p->iters);
		p->done++;
		asx_asc_thread_yield();
	}
	return NULL;
}

/* Loop rounds that take about P_CHUNK_NS here. */
static unsigned long p_calibrate(void)
{
	unsigned long n = 1000;

	for (;;) {
		uint64_t t0 = bench_now_ns(), dt;

		p_spin(n);
		dt = bench_now_ns() - t0;
		if (dt >= 5 * P_CHUNK_NS || n > (1UL << 40))
			return (unsigned long)((double)n * (double)P_CHUNK_NS / (double)dt) + 1;
		n *= 2;
	}
}

struct p_out {
	double secs;		/* until every thread was done */
	double events;		/* PREEMPTED acted on */
	double cpus;		/* CPU time of the process (the hog's too) over @secs */
	double takeovers, upcalls;
};

static double p_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

/* One run of @n threads, with or without PREEMPTED handled. */
static int p_run(bool preempted, unsigned int n, unsigned long iters, unsigned int chunks,
		 struct p_out *out)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 2,
				  .activations = ASX_ASC_ACT_ON, .act_preempted = preempted };
	struct p_thread pt[P_MAX_THREADS];
	struct asx_asc_thread *t[P_MAX_THREADS];
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_stats st;
	struct asx_asc *a = NULL;
	pthread_attr_t attr;
	pthread_t hog;
	cpu_set_t cpus;
	uint64_t t0;
	double c0;
	int ret;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	p_hog_stop = 0;
	ret = pthread_create(&hog, &attr, p_hog, NULL) ? -EAGAIN : 0;
	pthread_attr_destroy(&attr);
	if (ret)
		return ret;
	ret = asx_asc_create(&a, &asx_asc_prio, &o);
	t0 = bench_now_ns();
	c0 = p_cpu_s();
	for (unsigned int i = 0; i < n && !ret; i++) {
		pt[i] = (struct p_thread){ .iters = iters, .chunks = chunks };
		if (asx_asc_thread_spawn(a, &q.qos, p_compute, &pt[i], NULL, &t[i]))
			abort();	/* a half-started set: bench.h's rule */
	}
	for (unsigned int i = 0; i < n && !ret; i++)
		asx_asc_thread_join(t[i], NULL);
	out->secs = (double)(bench_now_ns() - t0) / 1e9;
	out->cpus = (p_cpu_s() - c0) / out->secs;
	if (!ret) {
		asx_asc_stats(a, &st);
		out->events = (double)st.sa_preempted;
		out->takeovers = (double)st.takeovers;
		out->upcalls = (double)st.upcalls;
		for (unsigned int i = 0; i < n; i++)
			if (pt[i].done != chunks)
				ret = -EIO;
		asx_asc_destroy(a);
	}
	p_hog_stop = 1;
	pthread_join(hog, NULL);
	return ret;
}

static int cmd_sa_preempt(struct bench_ctx *ctx, int argc, char **argv)
{
	unsigned int n = 4, work_ms = ctx->quick ? 200 : ctx->full ? 3000 : 1000, chunks;
	int runs = ctx->quick ? 1 : ctx->runs < P_RUNS_MIN ? P_RUNS_MIN : ctx->runs, ret = 0;
	double *on = calloc((size_t)runs, sizeof(double)), *off = calloc((size_t)runs, sizeof(double));
	double *gain = calloc((size_t)runs, sizeof(double)), *ev = calloc((size_t)runs, sizeof(double));
	double *cpu_on = calloc((size_t)runs, sizeof(double));
	double *cpu_off = calloc((size_t)runs, sizeof(double));
	double ev_off = 0, m_on, m_off, m_gain, tk = 0, up = 0;
	unsigned long iters;
	char *end;

	for (int i = 1; i < argc && !ret; i++) {
		if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
			n = (unsigned int)strtoul(argv[++i], &end, 10);
			if (*end || !n || n > P_MAX_THREADS)
				ret = -EINVAL;
		} else if (!strcmp(argv[i], "--work-ms") && i + 1 < argc) {
			work_ms = (unsigned int)strtoul(argv[++i], &end, 10);
			if (*end || !work_ms)
				ret = -EINVAL;
		} else {
			ret = -EINVAL;
		}
	}
	if (ret)
		fprintf(stderr, "asx-bench sa-preempt: bad option (--threads 1..%d, --work-ms MS)\n",
			P_MAX_THREADS);
	if (!ret && (!on || !off || !gain || !ev || !cpu_on || !cpu_off))
		ret = -ENOMEM;
	if (!ret && bench_asx_has(ASX_FEAT_SA_PREEMPT)) {
		fprintf(stderr, "asx-bench sa-preempt: no asx.ko with PREEMPTED events; run it in "
			"the test VM (tools/vm/asx-vm build/bin/asx-bench sa-preempt); skipped\n");
		goto out;
	}
	if (ret)
		goto out;
	iters = p_calibrate();
	/* the total work is work_ms of one CPU, shared among the threads */
	chunks = (unsigned int)((uint64_t)work_ms * 1000000ULL / P_CHUNK_NS / n);
	if (!chunks)
		chunks = 1;
	bench_say(ctx, "sa-preempt: %u compute threads on a 2-VP ASC beside a hog on CPU 0, "
		  "%u chunks of ~100 us each; PREEMPTED handling on vs off, %d runs\n",
		  n, chunks, runs);
	for (int r = 0; r < runs && !ret; r++)
		for (int k = 0; k < 2 && !ret; k++) {
			bool pre = (k + r) % 2;	/* the first turns from run to run */
			struct p_out o = { 0 };

			ret = p_run(pre, n, iters, chunks, &o);
			if (pre) {
				on[r] = o.secs;
				cpu_on[r] = o.cpus;
				ev[r] = o.events / o.secs;
				tk += o.takeovers;
				up += o.upcalls;
			} else {
				off[r] = o.secs;
				cpu_off[r] = o.cpus;
				ev_off += o.events;
			}
		}
	if (ret) {
		fprintf(stderr, "asx-bench sa-preempt: %s\n", strerror(-ret));
		goto out;
	}
	if (ev_off)
		fprintf(stderr, "asx-bench sa-preempt: PREEMPTED acted on with the option off\n");
	for (int r = 0; r < runs; r++)
		gain[r] = off[r] / on[r];
	m_gain = bench_median(gain, (size_t)runs);
	m_on = bench_median(on, (size_t)runs);
	m_off = bench_median(off, (size_t)runs);
	bench_say(ctx, "  completion: on %.3f s, off %.3f s; gain (off/on) %.2f; "
		  "PREEMPTED acted on %.0f/s (takeovers %.0f, upcalls %.0f a run)\n",
		  m_on, m_off, m_gain, bench_median(ev, (size_t)runs), tk / runs, up / runs);
	bench_say(ctx, "  CPUs busy (ASC and hog): on %.2f, off %.2f\n",
		  bench_median(cpu_on, (size_t)runs), bench_median(cpu_off, (size_t)runs));
	bench_record(ctx, &(struct bench_rec){
		.key = "sa_preempt_on_s", .experiment = "hog", .impl = "preempted_on",
		.sched = "asc", .pes = 2, .threads = n, .metric = "completion_s",
		.value = m_on, .runs = on, .nruns = (size_t)runs, .unit = "s" });
	bench_record(ctx, &(struct bench_rec){
		.key = "sa_preempt_off_s", .experiment = "hog", .impl = "preempted_off",
		.sched = "asc", .pes = 2, .threads = n, .metric = "completion_s",
		.value = m_off, .runs = off, .nruns = (size_t)runs, .unit = "s" });
	bench_record(ctx, &(struct bench_rec){
		.key = "sa_preempt_events_per_s", .experiment = "hog", .impl = "preempted_on",
		.sched = "asc", .pes = 2, .threads = n, .metric = "preempted_per_s",
		.value = bench_median(ev, (size_t)runs), .runs = ev, .nruns = (size_t)runs,
		.unit = "1/s" });
	bench_record(ctx, &(struct bench_rec){
		.key = "sa_preempt_on_cpus", .experiment = "hog", .impl = "preempted_on",
		.sched = "asc", .pes = 2, .threads = n, .metric = "cpus_busy",
		.value = bench_median(cpu_on, (size_t)runs), .runs = cpu_on,
		.nruns = (size_t)runs, .unit = "CPUs" });
	bench_record(ctx, &(struct bench_rec){
		.key = "sa_preempt_off_cpus", .experiment = "hog", .impl = "preempted_off",
		.sched = "asc", .pes = 2, .threads = n, .metric = "cpus_busy",
		.value = bench_median(cpu_off, (size_t)runs), .runs = cpu_off,
		.nruns = (size_t)runs, .unit = "CPUs" });
	bench_record(ctx, &(struct bench_rec){
		.key = "preempted_gain", .experiment = "hog", .impl = "preempted_on",
		.sched = "asc", .pes = 2, .threads = n, .metric = "off_over_on",
		.value = m_gain, .runs = gain, .nruns = (size_t)runs, .unit = "x" });
out:
	free(on);
	free(off);
	free(gain);
	free(ev);
	free(cpu_on);
	free(cpu_off);
	return ret;
}

BENCH_COMMAND(sa_preempt, "sa-preempt",
	      "ASC beside a CPU hog: PREEMPTED events handled vs not (in the VM)",
	      "[--threads N] [--work-ms MS]", cmd_sa_preempt)
