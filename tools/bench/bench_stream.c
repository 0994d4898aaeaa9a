// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_stream.c - `asx-bench stream`: 4 KB messages down a Stream of 4
 * layers (framer, checksum, pass, pass) into a sink driver.
 *
 *   mp   message-based: the writer's thread runs every layer's put()
 *        (the papers' Message Parallelism); 1 and 2 writer threads.
 *   lp   task-based: every layer's write side has its own service
 *        thread(s) and a queue between layers (Layer Parallelism); 1 and
 *        2 service threads per layer, one writer.
 *   touch_once  the baseline, measured in the same run: one Internet
 *        checksum pass over a 4 KB buffer, the most a stack that touches
 *        every byte once can do.
 *
 * Each message is allocated by the writer (64 bytes of headroom so the
 * framer and the checksum prepend in place) and freed by the sink; its
 * 4096 payload bytes are checksummed by the checksum layer, which is the
 * one pass over the data.  GB/s counts payload bytes (10^9 bytes/s).
 * mp_over_limit = mp (1 thread) / touch_once.
 *   task_asc  the task-based stack, one service thread per layer, its
 *        service threads and writer ASC user threads on one VP;
 *        task_asc_over_task_pthread = task_asc / lp x1.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/modules.h>
#include <asx/stream.h>
#include "bench.h"

#define PAYLOAD 4096
#define HEADROOM 64

/* Set by run_stack_asc(): the service threads are user threads of this ASC. */
static struct asx_asc *stack_asc;
static const struct asx_qos *stack_qos;

static int make_stack(struct asx_stream **sp, int svc_threads)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_SINK);
	struct asx_module *mods[4] = { NULL };
	int r;

	r = asx_stream_open(sp, &o);
	if (r)
		return r;
	/* pushed bottom first: head framer cksum pass1 pass2 sink */
	for (int i = 0; i < 4; i++) {
		r = i < 2 ? asx_mod_pass(&mods[i], i ? "pass1" : "pass2") :
		    i == 2 ? asx_mod_cksum(&mods[i], "cksum") : asx_mod_framer(&mods[i], "framer");
		if (r)
			break;
		r = asx_stream_push(*sp, mods[i], 0, NULL);
		if (r)
			break;
		/* task-based: the write side of each layer gets its own threads */
		if (svc_threads)
			r = asx_task_activate_asc(asx_module_wr(mods[i]), svc_threads,
						  stack_asc, stack_qos);
		mods[i] = NULL;
		if (r)
			break;
	}
	for (int i = 0; i < 4; i++)
		asx_module_destroy(mods[i]);	/* those not pushed */
	if (r)
		asx_stream_close(*sp);
	return r;
}

struct writer {
	struct asx_stream *s;
	uint64_t n;
	int err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (uint64_t i = 0; i < w->n; i++) {
		struct asx_msg *m = asx_msg_alloc(HEADROOM + PAYLOAD, ASX_MSG_DATA);
		int r;

		if (!m) {
			w->err = -ENOMEM;
			return NULL;
		}
		m->rd += HEADROOM;
		m->wr = m->rd + PAYLOAD;
		r = asx_stream_put(w->s, m, 0, NULL);
		if (r) {
			asx_msg_free_chain(m);
			w->err = r;
			return NULL;
		}
	}
	return NULL;
}

/* One measurement: GB/s of payload through the stack, or a negative errno. */
#define MAX_WRITERS 64

static double run_stack(uint64_t n, int writers, int svc_threads, int *err)
{
	struct asx_stream *s;
	struct writer w[MAX_WRITERS];
	pthread_t th[MAX_WRITERS];
	uint64_t t0, t1;
	int r;

	*err = 0;
	r = make_stack(&s, svc_threads);
	if (r) {
		*err = r;
		return 0;
	}
	t0 = bench_now_ns();
	for (int i = 0; i < writers; i++) {
		w[i] = (struct writer){ .s = s, .n = n / (uint64_t)writers };
		pthread_create(&th[i], NULL, writer_main, &w[i]);
	}
	for (int i = 0; i < writers; i++) {
		pthread_join(th[i], NULL);
		if (w[i].err)
			*err = w[i].err;
	}
	while (asx_stream_sunk(s) < n && !*err)
		sched_yield();
	t1 = bench_now_ns();
	asx_stream_close(s);
	return (double)n * PAYLOAD / (double)(t1 - t0);
}

static double touch_once(uint64_t n)
{
	unsigned char *buf = malloc(PAYLOAD);
	volatile uint16_t sink = 0;
	uint64_t t0, t1;

	if (!buf)
		return 0;
	for (size_t i = 0; i < PAYLOAD; i++)
		buf[i] = (unsigned char)i;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < n; i++) {
		buf[i & (PAYLOAD - 1)] ^= 1;	/* keep the compiler from hoisting it */
		sink = (uint16_t)(sink + asx_inet_cksum(buf, PAYLOAD));
	}
	t1 = bench_now_ns();
	free(buf);
	return (double)n * PAYLOAD / (double)(t1 - t0);
}

/*
 * A record: "mp" is the message-based Stream (@threads writers carry their
 * messages through every layer), "lp" the task-based one (@threads service
 * threads per layer); @what an experiment ("sweep") or an implementation
 * ("touch_once": the checksum's floor).
 */
static void put(struct bench_ctx *ctx, const char *key, const char *metric, double v,
		const char *unit, const double *runs, size_t nruns, const char *arch,
		unsigned int threads, const char *what)
{
	bench_record(ctx, &(struct bench_rec){
		.key = key, .metric = metric, .value = v, .unit = unit, .runs = runs,
		.nruns = nruns, .arch = arch, .sched = "pthread", .threads = threads, .size = PAYLOAD,
		.experiment = what && !strcmp(what, "sweep") ? what : NULL,
		.impl = what && strcmp(what, "sweep") ? what : NULL });
}

/*
 * --full: the message-based stack with 1..nproc writers and 2x nproc
 * (every writer carries its messages through every layer), and the
 * task-based one with 1..nproc service threads per layer and 2x nproc,
 * each against its own one-thread figure: the speed-up.
 */
static int sweep(struct bench_ctx *ctx, uint64_t n)
{
	int top = bench_nproc(), pts[MAX_WRITERS], npts = 0;

	if (2 * top > MAX_WRITERS)
		top = MAX_WRITERS / 2;
	for (int t = 1; t <= top; t++)
		pts[npts++] = t;
	pts[npts++] = 2 * top;
	bench_say(ctx, "\nscaling (--full): GB/s, median of %d runs, and speed-up over 1 thread\n",
		  ctx->runs);
	bench_say(ctx, "%8s %11s %9s %11s %9s\n", "threads", "mp writers", "speed-up",
		  "lp svc/layer", "speed-up");
	for (int kind = 0; kind < 2; kind++) {
		double base = 0;

		for (int p = 0; p < npts; p++) {
			double v[64], med;
			int runs = ctx->runs < 64 ? ctx->runs : 64, err = 0;
			char key[64];

			for (int i = 0; i < runs && !err; i++)
				v[i] = kind ? run_stack(n, 1, pts[p], &err) :
				       run_stack(n, pts[p], 0, &err);
			if (err)
				return err;
			med = bench_median(v, (size_t)runs);
			if (p == 0)
				base = med;
			snprintf(key, sizeof(key), "%s_t%d_gbps", kind ? "lp" : "mp", pts[p]);
			put(ctx, key, "gbps", med, "GB/s", v, (size_t)runs, kind ? "lp" : "mp",
			    (unsigned int)pts[p], "sweep");
			snprintf(key, sizeof(key), "%s_speedup_t%d", kind ? "lp" : "mp", pts[p]);
			put(ctx, key, "speedup", base > 0 ? med / base : 0, "x", NULL, 0,
			    kind ? "lp" : "mp", (unsigned int)pts[p], "sweep");
			if (kind)
				bench_say(ctx, "%8d %21s %11.2f %9.2f\n", pts[p], "", med,
					  base > 0 ? med / base : 0);
			else
				bench_say(ctx, "%8d %11.2f %9.2f\n", pts[p], med,
					  base > 0 ? med / base : 0);
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- Tasks on ASC threads */

/*
 * task_asc: the task-based stack (one service thread per layer) with the
 * service threads and the writer as user threads of one ASC of @nvps VPs
 * (non-preemptive PRIO), against lp x1 (the same on pthreads) measured in
 * the same run: task_asc_over_task_pthread.  A hand-off between layers is
 * then a user-level switch, not a futex wake-up.
 */
struct asc_writer {
	struct writer w;
	struct asx_asc_thread *t;
};

static double run_stack_asc(uint64_t n, int nvps, int *err)
{
	ASX_OPTS(struct asx_asc_opts, ao, .nvps = nvps, .max_vps = nvps,
		 .semantic = ASX_ASC_NONPREEMPTIVE);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asc_writer aw = { .t = NULL };
	struct asx_asc *a;
	uint64_t t0, t1;
	int r;

	*err = asx_asc_create(&a, &asx_asc_prio, &ao);
	if (*err)
		return 0;
	stack_asc = a;
	stack_qos = &q.qos;
	r = make_stack(&aw.w.s, 1);
	stack_asc = NULL;
	if (r) {
		*err = r;
		asx_asc_destroy(a);
		return 0;
	}
	aw.w.n = n;
	t0 = bench_now_ns();
	r = asx_asc_thread_spawn(a, &q.qos, writer_main, &aw.w, NULL, &aw.t);
	if (!r)
		r = asx_asc_thread_join(aw.t, NULL);
	*err = r ? r : aw.w.err;
	while (asx_stream_sunk(aw.w.s) < n && !*err)
		sched_yield();
	t1 = bench_now_ns();
	asx_stream_close(aw.w.s);
	asx_asc_destroy(a);
	return (double)n * PAYLOAD / (double)(t1 - t0);
}

static void put_asc(struct bench_ctx *ctx, const char *key, const char *metric, double v,
		    const char *unit, const double *runs, size_t nruns, int nvps)
{
	bench_record(ctx, &(struct bench_rec){
		.key = key, .metric = metric, .value = v, .unit = unit, .runs = runs,
		.nruns = nruns, .arch = "lp", .sched = "asc", .pes = (unsigned int)nvps,
		.threads = 1, .size = PAYLOAD, .experiment = "sched", .impl = "task_asc" });
}

static int asc_figures(struct bench_ctx *ctx, uint64_t n, double lp1)
{
	double v[64], med;
	int runs = ctx->runs < 64 ? ctx->runs : 64, err = 0;

	for (int i = 0; i < runs && !err; i++)
		v[i] = run_stack_asc(n, 1, &err);
	if (err)
		return err;
	med = bench_median(v, (size_t)runs);
	bench_say(ctx, "  task-based x1 on ASC user threads (1 VP): %.2f GB/s, %.2f x on "
		  "pthreads\n", med, lp1 > 0 ? med / lp1 : 0);
	put_asc(ctx, "task_asc_gbps", "gbps", med, "GB/s", v, (size_t)runs, 1);
	put_asc(ctx, "task_asc_over_task_pthread", "task_asc_over_task_pthread",
		lp1 > 0 ? med / lp1 : 0, "x", NULL, 0, 1);
	return 0;
}

static int bench_stream(struct bench_ctx *ctx, int argc, char **argv)
{
	enum { TO, MP1, MP2, LP1, LP2, NFIG };
	static const char *const label[NFIG] = {
		"touch-once", "message-based x1", "message-based x2",
		"task-based x1", "task-based x2",
	};
	uint64_t n = ctx->quick ? 20000 : 200000;
	double *v[NFIG], med[NFIG];
	int opt, ret = 0;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n')
			return -EINVAL;
		n = strtoull(optarg, NULL, 0);
	}
	if (n < 2)
		return -EINVAL;
	for (int f = 0; f < NFIG; f++) {
		v[f] = calloc((size_t)ctx->runs, sizeof(double));
		if (!v[f])
			ret = -ENOMEM;
	}
	if (ret)
		goto out;
	bench_say(ctx, "stream: %llu messages of %d bytes through framer, cksum, pass, pass "
		  "into a sink; %d runs\n", (unsigned long long)n, PAYLOAD, ctx->runs);
	bench_say(ctx, "%4s %11s %11s %11s %11s %11s   (GB/s)\n", "run", "touch-once", "mp x1",
		  "mp x2", "lp x1", "lp x2");
	for (int i = 0; i < ctx->runs; i++) {
		int err = 0;

		v[TO][i] = touch_once(n);
		v[MP1][i] = run_stack(n, 1, 0, &err);
		if (!err)
			v[MP2][i] = run_stack(n, 2, 0, &err);
		if (!err)
			v[LP1][i] = run_stack(n, 1, 1, &err);
		if (!err)
			v[LP2][i] = run_stack(n, 1, 2, &err);
		if (err) {
			ret = err;
			goto out;
		}
		bench_say(ctx, "%4d %11.2f %11.2f %11.2f %11.2f %11.2f\n", i + 1, v[TO][i],
			  v[MP1][i], v[MP2][i], v[LP1][i], v[LP2][i]);
	}
	for (int f = 0; f < NFIG; f++)
		med[f] = bench_median(v[f], (size_t)ctx->runs);
	bench_say(ctx, "median %9.2f %11.2f %11.2f %11.2f %11.2f\n", med[TO], med[MP1], med[MP2],
		  med[LP1], med[LP2]);
	for (int f = 1; f < NFIG; f++)
		bench_say(ctx, "  %-18s %5.2f of touch-once\n", label[f], med[f] / med[TO]);
	put(ctx, "touch_once_gbps", "gbps", med[TO], "GB/s", v[TO], (size_t)ctx->runs, NULL, 0,
	    "touch_once");
	put(ctx, "mp_gbps", "gbps", med[MP1], "GB/s", v[MP1], (size_t)ctx->runs, "mp", 1, NULL);
	put(ctx, "mp2_gbps", "gbps", med[MP2], "GB/s", v[MP2], (size_t)ctx->runs, "mp", 2, NULL);
	put(ctx, "lp_gbps", "gbps", med[LP1], "GB/s", v[LP1], (size_t)ctx->runs, "lp", 1, NULL);
	put(ctx, "lp2_gbps", "gbps", med[LP2], "GB/s", v[LP2], (size_t)ctx->runs, "lp", 2, NULL);
	put(ctx, "mp_over_limit", "over_touch_once", med[MP1] / med[TO], "x", NULL, 0, "mp", 1,
	    NULL);
	put(ctx, "mp_over_lp", "mp_over_lp", med[MP1] / med[LP1], "x", NULL, 0, NULL, 1, NULL);
	ret = asc_figures(ctx, n, med[LP1]);
	if (!ret && ctx->full)
		ret = sweep(ctx, n);
out:
	for (int f = 0; f < NFIG; f++)
		free(v[f]);
	return ret;
}

BENCH_COMMAND(stream, "stream",
	      "4 KB messages through 4 layers: message-based vs task-based vs touch-once",
	      "[-n MESSAGES]", bench_stream)
