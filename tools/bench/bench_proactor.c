// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_proactor.c - asx-bench proactor: the echo workload of asx-bench
 * echo (100 loopback TCP connections, 64-byte messages, one outstanding
 * on each; bench_echo_served()) served three ways on one thread: the
 * Reactor (readiness, then the call), the Proactor on io_uring, and the
 * Proactor on its Reactor back end (the fallback).  Round trips/s and p99
 * per server, median of --runs, the servers alternating within each run;
 * ratios proactor / reactor.  Documentation/benchmarks.rst, "proactor".
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/proactor.h>

#include "bench.h"

#define PX_MSG 64
#define PX_CONNS 100

enum { PX_REACTOR, PX_URING, PX_FALLBACK, NPX };
static const char *const px_name[NPX] = { "reactor", "proactor_uring", "proactor_reactor" };

struct px_conn {
	struct px_srv *s;
	int fd;
	struct asx_completion rc, wc;
	char buf[PX_MSG * 4];
	size_t have, sent;
};

struct px_srv {
	struct asx_proactor *p;
	struct px_conn *c;
	unsigned int nc;
	pthread_t th;
	int rc;
};

static void px_recvd(struct asx_completion *c, int64_t res, void *user);

static void px_sent(struct asx_completion *c, int64_t res, void *user)
{
	struct px_conn *k = user;

	if (res <= 0)
		return;		/* the run ended (-ECANCELED) or the peer went */
	k->sent += (size_t)res;
	if (k->sent < k->have)
		asx_proactor_send(k->s->p, &k->wc, k->fd, k->buf + k->sent, k->have - k->sent, 0);
	else
		asx_proactor_recv(k->s->p, &k->rc, k->fd, k->buf, sizeof(k->buf), 0);
}

static void px_recvd(struct asx_completion *c, int64_t res, void *user)
{
	struct px_conn *k = user;

	if (res <= 0)
		return;
	k->have = (size_t)res;
	k->sent = 0;
	asx_proactor_send(k->s->p, &k->wc, k->fd, k->buf, k->have, 0);
}

static void *px_loop(void *arg)
{
	struct px_srv *s = arg;

	s->rc = asx_proactor_run(s->p);
	return NULL;
}

static int px_start(const int *sfd, unsigned int nc, void **srv, enum asx_proactor_backend b)
{
	ASX_OPTS(struct asx_proactor_opts, o, .backend = b);
	struct px_srv *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return -ENOMEM;
	s->c = calloc(nc, sizeof(*s->c));
	ret = s->c ? asx_proactor_open(&s->p, &o, NULL) : -ENOMEM;
	for (unsigned int i = 0; !ret && i < nc; i++) {
		struct px_conn *k = &s->c[i];

		k->s = s;
		k->fd = sfd[i];
		asx_completion_init(&k->rc, px_recvd, k);
		asx_completion_init(&k->wc, px_sent, k);
		ret = asx_proactor_recv(s->p, &k->rc, k->fd, k->buf, sizeof(k->buf), 0);
	}
	if (!ret)
		ret = -pthread_create(&s->th, NULL, px_loop, s);
	if (ret) {
		asx_proactor_close(s->p);
		free(s->c);
		free(s);
		return ret;
	}
	s->nc = nc;
	*srv = s;
	return 0;
}

static int px_start_uring(const int *sfd, unsigned int nc, void **srv)
{
	return px_start(sfd, nc, srv, ASX_PROACTOR_URING);
}

static int px_start_fallback(const int *sfd, unsigned int nc, void **srv)
{
	return px_start(sfd, nc, srv, ASX_PROACTOR_REACTOR);
}

static void px_stop(void *srv)
{
	struct px_srv *s = srv;

	asx_proactor_stop(s->p);
	pthread_join(s->th, NULL);
	asx_proactor_close(s->p);	/* the pending recvs: -ECANCELED */
	free(s->c);
	free(s);
}

static void px_rec(struct bench_ctx *ctx, int k, const char *suffix, const char *metric,
		   double v, const double *runs, const char *unit)
{
	char key[64];

	snprintf(key, sizeof(key), "proactor_echo_%s_%s", px_name[k], suffix);
	bench_record(ctx, &(struct bench_rec){
		.key = key, .experiment = "echo", .impl = px_name[k], .sched = "pthread",
		.proto = "tcp", .pes = 1, .threads = 1, .metric = metric, .value = v,
		.runs = runs, .nruns = runs ? (size_t)ctx->runs : 0, .unit = unit,
		.conns = PX_CONNS, .size = PX_MSG });
}

static int bench_proactor(struct bench_ctx *ctx, int argc, char **argv)
{
	unsigned int ms = ctx->quick ? 200 : ctx->full ? 3000 : 500;
	double *rt[NPX], *p99[NPX], mrt[NPX], mp[NPX];
	struct asx_proactor *p;
	const char *why = NULL;
	bool uring;
	char s1[32];
	int k, i, ret = 0;

	(void)argc;
	(void)argv;
	ASX_OPTS(struct asx_proactor_opts, o, .backend = ASX_PROACTOR_URING);
	uring = asx_proactor_open(&p, &o, &why) == 0;
	if (uring)
		asx_proactor_close(p);
	else
		bench_say(ctx, "proactor: io_uring skipped: %s\n", why);
	for (k = 0; k < NPX; k++) {
		rt[k] = calloc((size_t)ctx->runs, sizeof(double));
		p99[k] = calloc((size_t)ctx->runs, sizeof(double));
		if (!rt[k] || !p99[k])
			ret = -ENOMEM;
	}
	bench_say(ctx, "proactor: echo, %u TCP loopback connections, %d-byte messages, one "
		  "outstanding each, one server thread, %u ms a run, median of %d runs\n",
		  PX_CONNS, PX_MSG, ms, ctx->runs);
	for (i = 0; !ret && i < ctx->runs; i++) {
		for (k = 0; !ret && k < NPX; k++) {
			int kk = (k + i) % NPX;	/* rotate: drift hits all alike */

			if (kk == PX_URING && !uring)
				continue;
			ret = bench_echo_served(PX_CONNS, ms,
						kk == PX_REACTOR ? NULL :
						kk == PX_URING ? px_start_uring : px_start_fallback,
						px_stop, &rt[kk][i], &p99[kk][i]);
		}
	}
	if (ret)
		goto out;
	bench_say(ctx, "  %-18s %14s %10s\n", "server", "round trips/s", "p99 us");
	for (k = 0; k < NPX; k++) {
		if (k == PX_URING && !uring)
			continue;
		mrt[k] = bench_median(rt[k], (size_t)ctx->runs);
		mp[k] = bench_median(p99[k], (size_t)ctx->runs);
		bench_say(ctx, "  %-18s %14s %10.1f\n", px_name[k],
			  bench_si(s1, sizeof(s1), mrt[k]), mp[k]);
		px_rec(ctx, k, "rt_per_s", "round_trips_per_s", mrt[k], rt[k], "1/s");
		px_rec(ctx, k, "p99_us", "p99_rtt", mp[k], p99[k], "us");
	}
	if (uring) {
		bench_say(ctx, "  proactor_uring / reactor %.2f (round trips/s)\n",
			  mrt[PX_URING] / mrt[PX_REACTOR]);
		px_rec(ctx, PX_URING, "over_reactor", "over_reactor",
		       mrt[PX_URING] / mrt[PX_REACTOR], NULL, "x");
	}
	bench_say(ctx, "  proactor_reactor / reactor %.2f (round trips/s)\n",
		  mrt[PX_FALLBACK] / mrt[PX_REACTOR]);
	px_rec(ctx, PX_FALLBACK, "over_reactor", "over_reactor",
	       mrt[PX_FALLBACK] / mrt[PX_REACTOR], NULL, "x");
out:
	for (k = 0; k < NPX; k++) {
		free(rt[k]);
		free(p99[k]);
	}
	return ret;
}

BENCH_COMMAND(proactor, "proactor",
	      "echo, 100 connections, one thread: Reactor vs Proactor (io_uring, and its Reactor fallback)",
	      NULL, bench_proactor)
