// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_ace.c - `asx-bench ace`: ASX and ACE 7 (Debian's libace-dev) on
 * the same workloads, in one process, alternating which goes first in
 * each run (issue 29, "Ahead of ACE, measured").  The ACE halves are C++
 * in tools/bench/ace/, built only when the Makefile finds ACE; without
 * them the command prints one line saying so and writes no record.
 *
 *   msgq      1 -> 1 and 2 -> 2 threads, 64 B and 4 KB messages through
 *             struct asx_msgq vs ACE_Message_Queue<ACE_MT_SYNCH>, both
 *             with water marks 64 KB / 16 KB; each side allocates with its
 *             own framework (asx_msg_alloc, new ACE_Message_Block).
 *   stream    4 KB messages from one writer down 4 pass Modules into a
 *             counting tail: message-based (arch "mp": the writer's thread
 *             runs every put) and task-based (arch "lp": one service thread
 *             per layer's write side), vs ACE_Stream of ACE_Module/ACE_Task.
 *   echo      100 loopback TCP connections, 64 B, one message outstanding
 *             on each (asx-bench echo's clients): the ASX Reactor on one
 *             pthread vs an ACE_Reactor over ACE_Dev_Poll_Reactor on one
 *             thread; round trips/s and the p99 round trip (echo_p99).
 *   echo_tp   the same clients against two threads of a thread-pool
 *             Reactor: ASX_REACTOR_TP vs ACE_TP_Reactor (shape "tp", the
 *             key echo_tp_over_ace_tp), and, since ACE_TP_Reactor starves
 *             most connections (select(), lowest handle first: the line
 *             prints how many connections had a round trip), vs
 *             ACE_Dev_Poll_Reactor run by two threads, ACE's epoll
 *             leader/followers (shape "devpoll").
 *   svc_cycle load and remove a dynamic service from a svc.conf directive:
 *             asx_svc_apply_text() with the tree's echo.so vs
 *             ACE_Service_Config::process_directive() with ace_echo_svc.so
 *             (tools/bench/ace/ace_echo_svc.cpp: the same socket and thread
 *             at init, stopped at fini).  ASX unloads the library when
 *             the service goes, ACE keeps it mapped: svc_cycle_mapped is
 *             the same cycle with echo.so held open (dlopen) for the run.
 *
 * Every ratio is ASX over ACE (above 1: ASX faster): of the medians (the
 * key, e.g. msgq_over_ace_1to1_64) and the minimum of the per-run ratios
 * (the key with _min).  Messages carry (producer, sequence number), checked
 * where they arrive: a lost, duplicated or reordered message fails the run.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/modules.h>
#include <asx/msgq.h>
#include <asx/stream.h>
#include <asx/svc.h>
#include "bench.h"

/*
 * The one line of a run that measures nothing (no record; exit 0): on
 * stdout, or on stderr with --json, whose stdout is the JSON object.
 */
static int ace_skip(struct bench_ctx *ctx, const char *why)
{
	fprintf(ctx->json ? stderr : stdout, "ace: skipped: %s\n", why);
	return 0;
}

#ifdef ASX_BENCH_ACE
#include "ace/ace_side.h"

#define HIWAT (64 * 1024)
#define LOWAT (16 * 1024)
#define ECHO_CONNS 100

struct stamp {
	uint64_t producer, seq;
};

/* One row: what both sides run, and how the result is compared. */
struct row {
	const char *prefix;	/* "msgq", "stream", "svc_cycle" */
	const char *shape;	/* "1to1_64", ...; NULL: none */
	const char *experiment;
	const char *arch;	/* stream: "mp" or "lp" */
	const char *metric, *unit;
	bool lower_better;	/* a time: the ratio is ACE / ASX */
	unsigned int threads;
	size_t size;
	uint64_t n;
	int (*run)(const struct row *r, bool ace, double *v, double *v2);
	const char *dyn_asx, *dyn_ace;	/* svc_cycle: the directives */
};

/* ---------------------------------------------------------------- ASX msgq */

struct mq_run {
	struct asx_msgq *q;
	unsigned int pairs, id;
	bool consumer;
	uint64_t per;
	size_t size;
	int err;
};

static void mq_produce(struct mq_run *r)
{
	for (uint64_t i = 0; i < r->per; i++) {
		struct asx_msg *m = asx_msg_alloc(r->size, ASX_MSG_DATA);
		struct stamp s = { r->id, i };

		if (!m) {
			r->err = -ENOMEM;
			return;
		}
		memcpy(asx_msg_wr(m), &s, sizeof(s));
		asx_msg_commit(m, r->size);
		if (asx_msgq_enqueue(r->q, m, 0, NULL)) {
			asx_msg_free(m);
			r->err = -EIO;
			return;
		}
	}
}

static void mq_consume(struct mq_run *r)
{
	uint64_t next[BENCH_THREADS_MAX] = { 0 };

	for (uint64_t i = 0; i < r->per; i++) {
		struct asx_msg *m;
		struct stamp s;

		if (asx_msgq_dequeue(r->q, &m, 0, NULL)) {
			r->err = -EIO;
			return;
		}
		memcpy(&s, asx_msg_rd(m), sizeof(s));
		/* one consumer sees each producer's messages in order */
		if (s.producer >= r->pairs || s.seq < next[s.producer])
			r->err = -EPROTO;
		else
			next[s.producer] = s.seq + 1;
		asx_msg_free(m);
	}
}

static void *mq_main(void *arg)
{
	struct mq_run *r = arg;

	if (r->consumer)
		mq_consume(r);
	else
		mq_produce(r);
	return NULL;
}

static int asx_msgq_run(const struct row *row, double *rate)
{
	unsigned int pairs = row->threads, nt = 2 * pairs;
	uint64_t per = row->n / pairs, ns;
	struct mq_run r[BENCH_THREADS_MAX];
	void *args[BENCH_THREADS_MAX];
	struct asx_msg *left;
	struct asx_msgq *q;
	int err;

	if (!pairs || nt > BENCH_THREADS_MAX || !per)
		return -EINVAL;
	err = asx_msgq_create(&q, HIWAT, LOWAT);
	if (err)
		return err;
	for (unsigned int i = 0; i < nt; i++) {
		/* consumers first, as the ACE half starts them */
		r[i] = (struct mq_run){ .q = q, .pairs = pairs, .id = i % pairs,
					.consumer = i < pairs, .per = per, .size = row->size };
		args[i] = &r[i];
	}
	err = bench_run_threads(false, 0, 0, nt, mq_main, args, &ns);
	for (unsigned int i = 0; i < nt && !err; i++)
		err = r[i].err;
	if (!err && !asx_msgq_peek(q, &left))
		err = -EPROTO;	/* a duplicate left over */
	asx_msgq_destroy(q);
	if (err)
		return err;
	*rate = (double)(per * pairs) * 1e9 / (double)ns;
	return 0;
}

/* ---------------------------------------------------------------- ASX stream */

static int asx_stream_run(const struct row *row, double *rate)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_SINK);
	bool task = !strcmp(row->arch, "lp");
	struct asx_stream *s;
	uint64_t t0, t1;
	int err;

	err = asx_stream_open(&s, &o);
	if (err)
		return err;
	for (int i = 0; i < 4 && !err; i++) {
		static const char *const name[] = { "pass1", "pass2", "pass3", "pass4" };
		struct asx_module *m;

		err = asx_mod_pass(&m, name[i]);
		if (err)
			break;
		err = asx_stream_push(s, m, 0, NULL);
		if (err) {
			asx_module_destroy(m);
			break;
		}
		if (task)
			err = asx_task_activate(asx_module_wr(m), 1);
	}
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < row->n && !err; i++) {
		struct asx_msg *m = asx_msg_alloc(row->size, ASX_MSG_DATA);
		struct stamp st = { 0, i };

		if (!m) {
			err = -ENOMEM;
			break;
		}
		memcpy(asx_msg_wr(m), &st, sizeof(st));
		asx_msg_commit(m, row->size);
		err = asx_stream_put(s, m, 0, NULL);
		if (err)
			asx_msg_free_chain(m);
	}
	while (!err && asx_stream_sunk(s) < row->n)
		sched_yield();
	t1 = bench_now_ns();
	asx_stream_close(s);
	if (err)
		return err;
	*rate = (double)row->n * 1e9 / (double)(t1 - t0);
	return 0;
}

/* ---------------------------------------------------------------- ASX svc */

/*
 * ASX unloads a service's library when its last service goes; ACE's
 * ACE_DLL_Manager keeps it mapped.  "svc_cycle_mapped" holds a reference
 * of its own (dlopen) for the run, so that neither side maps and unmaps it.
 */
static int asx_svc_cycle_run(const struct row *row, double *us)
{
	bool mapped = !strcmp(row->prefix, "svc_cycle_mapped");
	struct asx_svc_repo *repo;
	void *keep = NULL;
	char err[256] = "";
	uint64_t t0, t1;
	int ret;

	if (mapped) {
		const char *so = strchr(row->dyn_asx, '/');
		char path[PATH_MAX];

		if (!so || (size_t)(strchr(so, ':') - so) >= sizeof(path))
			return -EINVAL;
		memcpy(path, so, (size_t)(strchr(so, ':') - so));
		path[strchr(so, ':') - so] = '\0';
		keep = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!keep)
			return -ENOENT;
	}
	ret = asx_svc_repo_create(&repo);
	if (ret) {
		if (keep)
			dlclose(keep);
		return ret;
	}
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < row->n && !ret; i++) {
		ret = asx_svc_apply_text(repo, "bench.conf", row->dyn_asx, 0, err, sizeof(err));
		if (!ret)
			ret = asx_svc_apply_text(repo, "bench.conf", "remove Echo\n", 0, err,
						 sizeof(err));
	}
	t1 = bench_now_ns();
	asx_svc_repo_destroy(repo);
	if (keep)
		dlclose(keep);
	if (ret) {
		fprintf(stderr, "asx-bench ace: %s\n", err);
		return ret;
	}
	*us = (double)(t1 - t0) / 1e3 / (double)row->n;
	return 0;
}

/* ---------------------------------------------------------------- both */

static int msgq_run(const struct row *r, bool ace, double *v, double *v2)
{
	(void)v2;
	return ace ? ace_side_msgq(r->threads, r->n, r->size, HIWAT, LOWAT, v) :
		     asx_msgq_run(r, v);
}

static int stream_run(const struct row *r, bool ace, double *v, double *v2)
{
	(void)v2;
	return ace ? ace_side_stream(!strcmp(r->arch, "lp"), r->n, r->size, v) :
		     asx_stream_run(r, v);
}

static int svc_cycle_run(const struct row *r, bool ace, double *v, double *v2)
{
	(void)v2;
	return ace ? ace_side_svc_cycle(r->n, r->dyn_ace, "remove Echo", v) :
		     asx_svc_cycle_run(r, v);
}

/* row->n: milliseconds a run; *@v round trips/s, *@v2 the p99 in us */
static int echo_run(const struct row *r, bool ace, double *v, double *v2)
{
	return bench_echo_served(ECHO_CONNS, (unsigned int)r->n, ace ? ace_side_echo_start : NULL,
				 ace ? ace_side_echo_stop : NULL, v, v2);
}

/*
 * The thread-pool rows: 2 threads each side; *@v, *@v2 as echo_run's.
 * The connections served (with a round trip) in each run, fewest of the
 * row's runs, per side, for the line measure() prints.
 */
#define ECHO_TP_THREADS 2
static unsigned int echo_tp_served[2];

static int echo_tp_run(const struct row *r, bool ace, double *v, double *v2)
{
	unsigned int served = 0;
	int ret = bench_echo_served_tp(ECHO_CONNS, (unsigned int)r->n, ECHO_TP_THREADS,
				       !ace ? NULL : !strcmp(r->shape, "tp") ?
				       ace_side_echo_tp_start : ace_side_echo_devpoll_mt_start,
				       ace_side_echo_stop, v, v2, &served);

	if (served < echo_tp_served[ace])
		echo_tp_served[ace] = served;
	return ret;
}

/* "<dir of asx-bench>/../lib/asx/<rel>" if it exists, else NULL. */
static char *beside_bench(const char *rel)
{
	char exe[PATH_MAX], *slash, *path = NULL;
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len <= 0)
		return NULL;
	exe[len] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	if (asprintf(&path, "%s/../lib/asx/%s", exe, rel) < 0)
		return NULL;
	if (access(path, R_OK)) {
		free(path);
		return NULL;
	}
	return path;
}

static void put(struct bench_ctx *ctx, const struct row *r, const char *impl, const char *what,
		const char *metric, const char *unit, double v, const double *runs,
		size_t nruns)
{
	char key[96];

	if (r->shape)
		snprintf(key, sizeof(key), "%s_%s_%s", r->prefix, what, r->shape);
	else
		snprintf(key, sizeof(key), "%s_%s", r->prefix, what);
	if (strlen(metric) > 4 && !strcmp(metric + strlen(metric) - 4, "_min"))
		strncat(key, "_min", sizeof(key) - strlen(key) - 1);
	bench_record(ctx, &(struct bench_rec){
		.key = key, .metric = metric, .unit = unit, .value = v, .runs = runs,
		.nruns = nruns, .arch = r->arch, .sched = "pthread",
		.experiment = r->experiment, .impl = impl, .threads = r->threads,
		.size = r->size, .conns = !strncmp(r->experiment, "echo", 4) ? ECHO_CONNS : 0 });
}

/*
 * The records and line of one measure of a row: @v[0] ASX's runs, @v[1]
 * ACE's; the ratio's metric is @over ("over_ace"), its minimum's @over_min.
 */
static void record_pair(struct bench_ctx *ctx, const struct row *r, double *const v[2], size_t n,
			const char *over, const char *over_min)
{
	double *ratio = calloc(n, sizeof(double)), med[2], q, rmin = 0;
	char b[2][32], label[48];

	for (size_t i = 0; i < n; i++) {
		q = r->lower_better ? v[1][i] / v[0][i] : v[0][i] / v[1][i];
		if (ratio)
			ratio[i] = q;
		if (!i || q < rmin)
			rmin = q;
	}
	/* the ratios are paired first: the medians sort the runs in place */
	med[0] = bench_median(v[0], n);
	med[1] = bench_median(v[1], n);
	q = r->lower_better ? med[1] / med[0] : med[0] / med[1];
	put(ctx, r, "asx", "asx", r->metric, r->unit, med[0], v[0], n);
	put(ctx, r, "ace", "ace", r->metric, r->unit, med[1], v[1], n);
	put(ctx, r, "asx", "over_ace", over, "x", q, ratio, ratio ? n : 0);
	put(ctx, r, "asx", "over_ace", over_min, "x", rmin, NULL, 0);
	snprintf(label, sizeof(label), "%s %s", r->prefix, r->shape ? r->shape : "");
	if (r->lower_better)
		bench_say(ctx, "%-18s %12.2f %12.2f %9.2f %9.2f  (%s)\n", label, med[0], med[1],
			  q, rmin, r->unit);
	else
		bench_say(ctx, "%-18s %12s %12s %9.2f %9.2f  (%s)\n", label,
			  bench_si(b[0], sizeof(b[0]), med[0]), bench_si(b[1], sizeof(b[1]), med[1]),
			  q, rmin, r->unit);
	free(ratio);
}

/*
 * Both sides of one row, --runs times, alternating; its records and
 * lines.  Echo's runs give a second figure, the p99 round trip, recorded
 * as the row "echo_p99" (lower is better).
 */
static int measure(struct bench_ctx *ctx, const struct row *r)
{
	size_t n = (size_t)ctx->runs;
	double *v[2], *w[2];
	int ret = 0;

	v[0] = calloc(n, sizeof(double));
	v[1] = calloc(n, sizeof(double));
	w[0] = calloc(n, sizeof(double));
	w[1] = calloc(n, sizeof(double));
	if (!v[0] || !v[1] || !w[0] || !w[1]) {
		ret = -ENOMEM;
		goto out;
	}
	echo_tp_served[0] = echo_tp_served[1] = ECHO_CONNS;
	for (size_t i = 0; i < n && !ret; i++) {
		bool first = i & 1;	/* who goes first: ASX in even runs */

		ret = r->run(r, first, &v[first][i], &w[first][i]);
		if (!ret)
			ret = r->run(r, !first, &v[!first][i], &w[!first][i]);
	}
	if (ret)
		goto out;
	record_pair(ctx, r, v, n, "over_ace", "over_ace_min");
	if (!strncmp(r->prefix, "echo", 4)) {
		struct row p99 = *r;
		char pre[32];

		snprintf(pre, sizeof(pre), "%s_p99", r->prefix);
		p99.prefix = pre;
		p99.metric = "p99_rtt";
		p99.unit = "us";
		p99.lower_better = true;
		record_pair(ctx, &p99, w, n, "p99_over_ace", "p99_over_ace_min");
	}
	if (r->run == echo_tp_run)
		bench_say(ctx, "%-18s connections with a round trip (fewest of the runs): "
			  "asx %u, ace %u of %d\n", "", echo_tp_served[0], echo_tp_served[1],
			  ECHO_CONNS);
out:
	for (int k = 0; k < 2; k++) {
		free(v[k]);
		free(w[k]);
	}
	return ret;
}

static int bench_ace(struct bench_ctx *ctx, int argc, char **argv)
{
	/* defaults that keep `make demo` within its 5 minutes; --full longer runs */
	uint64_t nq = ctx->quick ? 10000 : ctx->full ? 400000 : 100000;
	uint64_t ns = ctx->quick ? 5000 : ctx->full ? 100000 : 20000;
	uint64_t nc = ctx->quick ? 50 : 1000, necho = ctx->quick ? 200 : ctx->full ? 3000 : 500;
	char *so_asx = NULL, *so_ace = NULL, *dyn_asx = NULL, *dyn_ace = NULL;
	int opt, ret;

	while ((opt = getopt(argc, argv, "n:s:l:")) != -1) {
		switch (opt) {
		case 'n':
			nq = strtoull(optarg, NULL, 0);
			break;
		case 's':
			ns = strtoull(optarg, NULL, 0);
			break;
		case 'l':
			nc = strtoull(optarg, NULL, 0);
			break;
		default:
			return -EINVAL;
		}
	}
	if (!nq || !ns || !nc)
		return -EINVAL;
	/* the skipped path of a build without ACE, for tools/check.sh to test */
	if (getenv("ASX_BENCH_NO_ACE"))
		return ace_skip(ctx, "ASX_BENCH_NO_ACE is set");
	ret = ace_side_init();
	if (ret)
		return ret;

	struct row rows[] = {
		{ "msgq", "1to1_64", "msgq", NULL, "msg_per_s", "msg/s", false, 1, 64, nq,
		  msgq_run, NULL, NULL },
		{ "msgq", "1to1_4k", "msgq", NULL, "msg_per_s", "msg/s", false, 1, 4096, nq,
		  msgq_run, NULL, NULL },
		{ "msgq", "2to2_64", "msgq", NULL, "msg_per_s", "msg/s", false, 2, 64, nq,
		  msgq_run, NULL, NULL },
		{ "msgq", "2to2_4k", "msgq", NULL, "msg_per_s", "msg/s", false, 2, 4096, nq,
		  msgq_run, NULL, NULL },
		{ "stream", "msg", "stream", "mp", "msg_per_s", "msg/s", false, 1, 4096, ns,
		  stream_run, NULL, NULL },
		{ "stream", "task", "stream", "lp", "msg_per_s", "msg/s", false, 1, 4096, ns,
		  stream_run, NULL, NULL },
		/* n: milliseconds a run, as asx-bench echo's */
		{ "echo", NULL, "echo", NULL, "round_trips_per_s", "1/s", false, 1, 64, necho,
		  echo_run, NULL, NULL },
		/* 2 threads: vs ACE_TP_Reactor, and vs ACE_Dev_Poll_Reactor on 2 threads */
		{ "echo_tp", "tp", "echo_tp", NULL, "round_trips_per_s", "1/s", false,
		  ECHO_TP_THREADS, 64, necho, echo_tp_run, NULL, NULL },
		{ "echo_tp", "devpoll", "echo_tp_devpoll", NULL, "round_trips_per_s", "1/s", false,
		  ECHO_TP_THREADS, 64, necho, echo_tp_run, NULL, NULL },
		{ "svc_cycle", NULL, "svc_cycle", NULL, "us_per_cycle", "us", true, 0, 0, nc,
		  svc_cycle_run, NULL, NULL },
		/* the same with echo.so kept mapped on the ASX side too */
		{ "svc_cycle_mapped", NULL, "svc_cycle_mapped", NULL, "us_per_cycle", "us", true,
		  0, 0, nc, svc_cycle_run, NULL, NULL },
	};
	size_t nrows = sizeof(rows) / sizeof(rows[0]);

	so_asx = beside_bench("services/echo.so");
	so_ace = beside_bench("bench/ace_echo_svc.so");
	if (so_asx && so_ace &&
	    asprintf(&dyn_asx, "dynamic Echo Service_Object * %s:asx_echo_make() "
		     "\"-a 127.0.0.1:0\"\n", so_asx) > 0 &&
	    asprintf(&dyn_ace, "dynamic Echo Service_Object * %s:_make_Bench_Echo() "
		     "\"-a 127.0.0.1:0\"", so_ace) > 0) {
		for (size_t i = nrows - 2; i < nrows; i++) {
			rows[i].dyn_asx = dyn_asx;
			rows[i].dyn_ace = dyn_ace;
		}
	} else {
		bench_say(ctx, "ace: svc_cycle skipped: echo.so or ace_echo_svc.so not found "
			  "beside asx-bench (../lib/asx/); no svc_cycle record\n");
		nrows -= 2;
	}
	bench_say(ctx, "ace: ASX vs ACE 7, same process, alternating, median of %d runs; "
		  "ratio ASX over ACE (above 1: ASX faster), median and minimum of the runs\n",
		  ctx->runs);
	bench_say(ctx, "msgq %llu msgs, water marks %d/%d; stream %llu x 4 KB, 4 pass Modules; "
		  "svc_cycle %llu load+remove\n", (unsigned long long)nq, HIWAT, LOWAT,
		  (unsigned long long)ns, (unsigned long long)nc);
	bench_say(ctx, "%-18s %12s %12s %9s %9s\n", "row", "asx", "ace", "asx/ace", "min");
	ret = 0;
	for (size_t i = 0; i < nrows && !ret; i++)
		ret = measure(ctx, &rows[i]);
	free(so_asx);
	free(so_ace);
	free(dyn_asx);
	free(dyn_ace);
	return ret;
}

#else /* !ASX_BENCH_ACE */

static int bench_ace(struct bench_ctx *ctx, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return ace_skip(ctx, "asx-bench was built without ACE (libace-dev not installed, "
			"or NO_ACE=1)");
}

#endif /* ASX_BENCH_ACE */

BENCH_COMMAND(ace, "ace",
	      "ASX vs ACE 7: msgq, Stream, echo, svc reconfiguration (needs libace-dev)",
	      "[-n MSGQ_MSGS] [-s STREAM_MSGS] [-l SVC_CYCLES]", bench_ace);
