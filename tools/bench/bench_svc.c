// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_svc.c - asx-bench svc: reconfiguration under load.  Messages flow
 * through a 4-Module Stream made from svc.conf text (framer, cksum,
 * counter, pass) from one writer to one reader, for a fixed time, twice
 * in each run: once with no reconfiguration (the baseline), once while a
 * third thread replaces a Module (new parameters: a live replace) RATE
 * times a second through asx_svc_apply_text().  Reported: throughput
 * with over without, messages lost (must be 0: every message carries a
 * sequence number), and the p99 and worst latency of the messages that
 * were in the Stream while a replace ran (the stall a replace causes),
 * beside the p99 latency of the baseline.
 *
 * Then the cost of reading a configuration at the 1 MiB file limit: the
 * time asx_svc_check_file() takes to parse one of ~75,000 directives, and
 * asx_svc_check() (`asxd -t`: parse, plan, check) one of ~42,000 Streams
 * (a quadratic parser once took ~80 s for the first).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <asx/msg.h>
#include <asx/stream.h>
#include <asx/svc.h>

#include "bench.h"

#define MAXWIN 4096		/* replace windows remembered per phase */

struct phase {
	struct asx_stream *s;
	uint64_t end_ns;		/* the writer stops then */
	uint64_t sent;			/* atomic: written so far; final when done */
	int done;			/* atomic */
	uint64_t got, lost;
	double *lat;			/* latencies of messages in a replace window (us) */
	size_t nlat, cap;
	double *all;			/* a sample of every message's latency (us) */
	size_t nall, allcap;
	uint64_t win[MAXWIN][2];	/* replace windows [start, end] ns */
	size_t nwin;			/* atomic: windows published */
};

struct payload {
	uint64_t seq, t_put;
};

static void *writer(void *arg)
{
	struct phase *ph = arg;
	uint64_t seq = 0;

	while (bench_now_ns() < ph->end_ns) {
		struct asx_msg *m = asx_msg_alloc(64, ASX_MSG_DATA);
		struct payload p = { seq, bench_now_ns() };

		if (!m || asx_msg_append(m, &p, sizeof(p)) || asx_stream_put(ph->s, m, 0, NULL)) {
			asx_msg_free_chain(m);
			break;
		}
		__atomic_store_n(&ph->sent, ++seq, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&ph->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool in_window(struct phase *ph, uint64_t a, uint64_t b)
{
	size_t n = __atomic_load_n(&ph->nwin, __ATOMIC_ACQUIRE);

	for (size_t i = n; i-- > 0;) {
		if (ph->win[i][1] < a)
			return false;	/* windows are in time order: older ones end earlier */
		if (ph->win[i][0] <= b)
			return true;
	}
	return false;
}

static void push(double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 4096;
		double *g = realloc(*v, c * sizeof(double));

		if (!g)
			return;
		*v = g;
		*cap = c;
	}
	(*v)[(*n)++] = x;
}

static void *reader(void *arg)
{
	struct phase *ph = arg;
	uint64_t next = 0;

	for (;;) {
		struct timespec ts;
		struct asx_msg *m;
		struct payload p;
		uint64_t now;

		if (__atomic_load_n(&ph->done, __ATOMIC_ACQUIRE) &&
		    next >= __atomic_load_n(&ph->sent, __ATOMIC_ACQUIRE))
			break;
		if (asx_stream_get(ph->s, &m, 0, asx_deadline(&ts, 200000000))) {
			if (__atomic_load_n(&ph->done, __ATOMIC_ACQUIRE))
				break;	/* nothing within 200 ms after the end: the rest is lost */
			continue;
		}
		now = bench_now_ns();
		if (asx_msg_read(m, 0, &p, sizeof(p)) == sizeof(p)) {
			if (p.seq != next)
				ph->lost += p.seq > next ? p.seq - next : 1;
			next = p.seq + 1;
			if (in_window(ph, p.t_put, now))
				push(&ph->lat, &ph->nlat, &ph->cap, (double)(now - p.t_put) / 1e3);
			if ((ph->got & 15) == 0)
				push(&ph->all, &ph->nall, &ph->allcap, (double)(now - p.t_put) / 1e3);
		}
		ph->got++;
		asx_msg_free_chain(m);
	}
	ph->lost += __atomic_load_n(&ph->sent, __ATOMIC_ACQUIRE) - (next < ph->sent ? next : ph->sent);
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_d);
	return v[(size_t)(q * (double)(n - 1))];
}

static const char *shape(int i)
{
	static const char *const conf[2] = {
		"stream S { static framer static cksum static counter \"a\" static pass }",
		"stream S { static framer static cksum static counter \"b\" static pass }",
	};

	return conf[i & 1];
}

struct result {
	double rate, lat_p99, pause_p99, pause_max;
	uint64_t lost, replaces;
};

/* One phase: @rate replaces a second (0: none) for @secs seconds. */
static int phase(struct asx_svc_repo *repo, double rate, double secs, struct result *res)
{
	struct phase *ph = calloc(1, sizeof(*ph));
	pthread_t w, r;
	uint64_t start, next_at, replaces = 0;
	char err[256];
	int ret;

	if (!ph)
		return -ENOMEM;
	ret = asx_svc_stream(repo, "S", &ph->s);
	if (ret)
		goto out;
	start = bench_now_ns();
	ph->end_ns = start + (uint64_t)(secs * 1e9);
	if (pthread_create(&r, NULL, reader, ph) || pthread_create(&w, NULL, writer, ph)) {
		ret = -EAGAIN;
		goto out;
	}
	next_at = start;
	while (rate > 0 && bench_now_ns() < ph->end_ns) {
		uint64_t t0;

		while (bench_now_ns() < next_at)
			usleep(200);
		t0 = bench_now_ns();
		ret = asx_svc_apply_text(repo, "bench.conf", shape((int)replaces + 1), 0, err,
					 sizeof(err));
		if (ret) {
			fprintf(stderr, "asx-bench svc: %s\n", err);
			break;
		}
		if (ph->nwin < MAXWIN) {
			ph->win[ph->nwin][0] = t0;
			ph->win[ph->nwin][1] = bench_now_ns();
			__atomic_store_n(&ph->nwin, ph->nwin + 1, __ATOMIC_RELEASE);
		}
		replaces++;
		next_at += (uint64_t)(1e9 / rate);
	}
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	res->rate = (double)ph->got / secs;
	res->lost = ph->lost;
	res->replaces = replaces;
	res->lat_p99 = pct(ph->all, ph->nall, 0.99);
	res->pause_p99 = pct(ph->lat, ph->nlat, 0.99);
	res->pause_max = ph->nlat ? ph->lat[ph->nlat - 1] : 0;
out:
	free(ph->lat);
	free(ph->all);
	free(ph);
	return ret;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Write a file of just under 1 MiB of @fmt lines (numbered); NULL on failure. */
static char *big_conf(const char *fmt, size_t *lines)
{
	char *path = strdup("/tmp/asx-bench-svc-XXXXXX");
	size_t len = 0;
	FILE *f;
	int fd;

	*lines = 0;
	if (!path || (fd = mkstemp(path)) < 0 || !(f = fdopen(fd, "w"))) {
		free(path);
		return NULL;
	}
	while (len + 64 < (1u << 20)) {
		int n = fprintf(f, fmt, *lines);

		if (n < 0)
			break;
		len += (size_t)n;
		++*lines;
	}
	if (fclose(f)) {
		unlink(path);
		free(path);
		return NULL;
	}
	return path;
}

/* Seconds to parse (@check: and plan and check) a 1 MiB svc.conf, median of the runs. */
static int bench_parse(struct bench_ctx *ctx, bool check, double *out)
{
	size_t lines;
	char *path = big_conf(check ? "stream s%zu { static pass }\n" : "static s%zu\n", &lines);
	double *t = calloc((size_t)ctx->runs, sizeof(double));
	struct asx_svc_repo *repo = NULL;
	char err[256];
	int ret = path && t ? asx_svc_repo_create(&repo) : -ENOMEM;

	for (int i = 0; !ret && i < ctx->runs; i++) {
		double t0 = mono();

		ret = check ? asx_svc_check(repo, path, ASX_SVC_RELOAD, err, sizeof(err)) :
		      asx_svc_check_file(path, err, sizeof(err));
		t[i] = mono() - t0;
		if (ret)
			fprintf(stderr, "asx-bench svc: %s\n", err);
	}
	if (!ret) {
		*out = bench_median(t, (size_t)ctx->runs);
		bench_say(ctx, "a 1 MiB svc.conf of %zu %s: %s in %.3f s (median of %d)\n", lines,
			  check ? "Streams" : "directives",
			  check ? "asx_svc_check (asxd -t)" : "asx_svc_check_file", *out, ctx->runs);
	}
	asx_svc_repo_destroy(repo);
	if (path)
		unlink(path);
	free(path);
	free(t);
	return ret;
}

/*
 * A record of @experiment ("none": no reconfiguration, "reconfig": live
 * replaces, "parse" / "check": the svc.conf parser; NULL: the whole run):
 * the median of @runs (sorted in place) and the runs.
 */
static void svc_put(struct bench_ctx *ctx, const char *key, const char *experiment,
		    const char *metric, double *runs, int nruns, const char *unit)
{
	bench_record(ctx, &(struct bench_rec){
		.key = key, .experiment = experiment, .metric = metric,
		.value = bench_median(runs, (size_t)nruns), .runs = runs, .nruns = (size_t)nruns,
		.unit = unit });
}

/* ... of one value, a total or a single measurement (no runs) */
static void svc_one(struct bench_ctx *ctx, const char *key, const char *experiment,
		    const char *metric, double value, const char *unit)
{
	bench_record(ctx, &(struct bench_rec){
		.key = key, .experiment = experiment, .metric = metric, .value = value,
		.unit = unit });
}

static int bench_svc(struct bench_ctx *ctx, int argc, char **argv)
{
	double rate = 10, secs = ctx->quick ? 0.5 : 2.0;
	double *with, *without, *ratio, *p99, *pmax, *l99;
	struct asx_svc_repo *repo = NULL;
	uint64_t lost = 0, replaces = 0;
	char err[256], b1[32], b2[32];
	int opt, ret = 0;

	while ((opt = getopt(argc, argv, "r:t:")) != -1) {
		switch (opt) {
		case 'r':
			rate = strtod(optarg, NULL);
			break;
		case 't':
			secs = strtod(optarg, NULL);
			break;
		default:
			return -EINVAL;
		}
	}
	if (rate <= 0 || rate > 10000 || secs <= 0 || secs > 3600)
		return -EINVAL;
	with = calloc((size_t)ctx->runs, sizeof(double));
	without = calloc((size_t)ctx->runs, sizeof(double));
	ratio = calloc((size_t)ctx->runs, sizeof(double));
	p99 = calloc((size_t)ctx->runs, sizeof(double));
	pmax = calloc((size_t)ctx->runs, sizeof(double));
	l99 = calloc((size_t)ctx->runs, sizeof(double));
	if (!with || !without || !ratio || !p99 || !pmax || !l99) {
		ret = -ENOMEM;
		goto out;
	}
	ret = asx_svc_repo_create(&repo);
	if (!ret)
		ret = asx_svc_apply_text(repo, "bench.conf", shape(0), 0, err, sizeof(err));
	if (ret)
		goto out;
	bench_say(ctx, "svc: 1 writer -> 4-module Stream (framer cksum counter pass) -> 1 reader, "
		  "%.1f s per phase; a live replace %.0f times/s vs none; %d runs\n",
		  secs, rate, ctx->runs);
	bench_say(ctx, "%4s %12s %12s %7s %9s %11s %11s %11s\n", "run", "msg/s none",
		  "msg/s reconf", "ratio", "replaces", "p99 us", "pause p99", "pause max");
	for (int i = 0; i < ctx->runs; i++) {
		struct result a, b;

		/* alternate which goes first, so drift hits both alike */
		ret = phase(repo, (i & 1) ? rate : 0, secs, (i & 1) ? &b : &a);
		if (!ret)
			ret = phase(repo, (i & 1) ? 0 : rate, secs, (i & 1) ? &a : &b);
		if (ret)
			goto out;
		without[i] = a.rate;
		with[i] = b.rate;
		ratio[i] = b.rate / a.rate;
		p99[i] = b.pause_p99;
		pmax[i] = b.pause_max;
		l99[i] = a.lat_p99;
		lost += a.lost + b.lost;
		replaces += b.replaces;
		bench_say(ctx, "%4d %12s %12s %7.3f %9llu %11.1f %11.1f %11.1f\n", i + 1,
			  bench_si(b1, sizeof(b1), a.rate), bench_si(b2, sizeof(b2), b.rate),
			  ratio[i], (unsigned long long)b.replaces, a.lat_p99, b.pause_p99,
			  b.pause_max);
	}
	bench_say(ctx, "median ratio %.3f (target >= 0.9 at 10/s), pause p99 %.1f us "
		  "(baseline p99 %.1f us), %llu messages lost\n",
		  bench_median(ratio, (size_t)ctx->runs), bench_median(p99, (size_t)ctx->runs),
		  bench_median(l99, (size_t)ctx->runs), (unsigned long long)lost);
	svc_put(ctx, "svc_msgs_per_s_none", "none", "msgs_per_s", without, ctx->runs, "msg/s");
	svc_put(ctx, "svc_msgs_per_s_reconfig", "reconfig", "msgs_per_s", with, ctx->runs,
		"msg/s");
	svc_put(ctx, "svc_throughput_ratio", "reconfig", "over_none", ratio, ctx->runs, "x");
	svc_one(ctx, "svc_reconfig_per_s", "reconfig", "replaces_per_s",
		(double)replaces / (secs * ctx->runs), "1/s");
	svc_one(ctx, "svc_lost", NULL, "lost", (double)lost, "msgs");
	svc_put(ctx, "svc_pause_p99_us", "reconfig", "pause_p99", p99, ctx->runs, "us");
	svc_put(ctx, "svc_pause_max_us", "reconfig", "pause_max", pmax, ctx->runs, "us");
	svc_put(ctx, "svc_latency_p99_us_none", "none", "latency_p99", l99, ctx->runs, "us");
	if (lost) {
		fprintf(stderr, "asx-bench svc: %llu messages lost\n", (unsigned long long)lost);
		ret = -EIO;
	}
	if (!ret) {
		double parse = 0, check = 0;

		ret = bench_parse(ctx, false, &parse);
		if (!ret)
			ret = bench_parse(ctx, true, &check);
		svc_one(ctx, "svc_parse_1mib_s", "parse", "s_per_mib", parse, "s");
		svc_one(ctx, "svc_check_1mib_s", "check", "s_per_mib", check, "s");
	}
out:
	asx_svc_repo_destroy(repo);
	free(with);
	free(without);
	free(ratio);
	free(p99);
	free(pmax);
	free(l99);
	return ret;
}

BENCH_COMMAND(svc, "svc",
	      "reconfiguration under load: a live Module replace N/s vs none (Service Configurator)",
	      "[-r REPLACES_PER_S] [-t SECONDS_PER_PHASE]", bench_svc)
