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
 *
 * `asx-bench capsule-block` (the paper's Figure 2): 8 threads; phase 1
 * each blocks 1 s (--quick 0.1 s) in a wrapped nanosleep, a barrier, then
 * phase 2 passes a token round a ring (thread t yields until it holds the
 * token, then hands it to t+1) for R rounds.  Configurations: PRIO with
 * 1, 2, 4 and 8 VPs, DIRECT (a VP per thread) and plain pthreads (real
 * nanosleep, pthread barrier, sched_yield).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <asx/asc.h>
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
		asx_thread_yield();
	p->t1 = bench_now_ns();		/* the last to finish writes last */
	return NULL;
}

/* ns per yield of two PRIO threads; @extra: another ASC with a VP exists */
static double prio_yield(unsigned long n, bool extra)
{
	struct asx_asc *a = NULL, *b = NULL;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_thread *t[2];
	struct ping p = { .n = n };
	double r = -1;

	if (asx_asc_create(&a, &asx_asc_prio, NULL))
		return -1;
	if (extra && asx_asc_create(&b, &asx_asc_edf, NULL))
		goto out;
	if (asx_thread_spawn(a, &q.qos, yielder, &p, NULL, &t[0]))
		goto out;
	if (asx_thread_spawn(a, &q.qos, yielder, &p, NULL, &t[1])) {
		asx_thread_join(t[0], NULL);
		goto out;
	}
	asx_thread_join(t[0], NULL);
	asx_thread_join(t[1], NULL);
	r = (double)(p.t1 - p.t0) / (2.0 * (double)n);
out:
	if (b)
		asx_asc_destroy(b);
	asx_asc_destroy(a);
	return r;
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

enum { Y_PRIO, Y_EXTRA, Y_RAW, Y_COND, Y_YIELD, Y_N };
static const char *const y_key[Y_N] = {
	"prio_1vp_ns", "prio_extra_ns", "raw_switch_ns", "pthread_cond_ns", "pthread_yield_ns",
};
static const char *const y_label[Y_N] = {
	"PRIO threads, single ASC/VP (lock-free path)",
	"PRIO threads, extra ASC/VP (locked path)",
	"raw context switch (floor)",
	"pthreads, mutex+condvar hand-off",
	"pthreads on one CPU, sched_yield hand-off",
};

static int cmd_asc_yield(struct bench_ctx *ctx, int argc, char **argv)
{
	unsigned long n = ctx->quick ? 100000 : 1000000;
	unsigned long nk = ctx->quick ? 5000 : 50000;	/* kernel hand-offs are slow */
	double *v[Y_N], med[Y_N];
	int ret = 0;

	(void)argc;
	(void)argv;
	for (int k = 0; k < Y_N; k++) {
		v[k] = calloc((size_t)ctx->runs, sizeof(double));
		if (!v[k])
			ret = -ENOMEM;
	}
	for (int r = 0; r < ctx->runs && !ret; r++) {
		v[Y_PRIO][r] = prio_yield(n, false);
		v[Y_EXTRA][r] = prio_yield(n, true);
		v[Y_RAW][r] = asx_asc_raw_switch_ns(n);
		v[Y_COND][r] = pthread_handoff(nk, cond_thread);
		v[Y_YIELD][r] = pthread_handoff(nk, yield_thread);
		for (int k = 0; k < Y_N; k++)
			if (v[k][r] < 0)
				ret = -EIO;
	}
	if (!ret) {
		bench_say(ctx, "asc-yield: two threads yielding %lu times each (pthreads: %lu "
			  "hand-offs each), median of %d runs\n", n, nk, ctx->runs);
		for (int k = 0; k < Y_N; k++) {
			med[k] = bench_median(v[k], (size_t)ctx->runs);
			bench_say(ctx, "  %-46s %10.1f ns\n", y_label[k], med[k]);
			bench_figure(ctx, y_key[k], med[k], "ns");
		}
		bench_say(ctx, "  extra/single %.2fx   condvar/PRIO %.0fx   sched_yield/PRIO %.0fx\n",
			  med[Y_EXTRA] / med[Y_PRIO], med[Y_COND] / med[Y_PRIO],
			  med[Y_YIELD] / med[Y_PRIO]);
		bench_figure(ctx, "prio_extra_over_1vp", med[Y_EXTRA] / med[Y_PRIO], "");
		bench_figure(ctx, "pthread_cond_over_prio", med[Y_COND] / med[Y_PRIO], "");
	}
	for (int k = 0; k < Y_N; k++)
		free(v[k]);
	return ret;
}

BENCH_COMMAND(asc_yield, "asc-yield",
	      "ASC PRIO yield (single VP and locked path) vs raw switch and pthreads",
	      NULL, cmd_asc_yield)

/* ---------------------------------------------------------------- capsule-block */

#define NT 8

struct capsule {
	long sleep_ns;
	unsigned long rounds;
	int token;
	uint64_t t0, t1, t2;
	int finished;
	struct asx_asc_barrier ab;
	pthread_barrier_t pb;
	bool asc;
};

struct cself {
	struct capsule *c;
	int me;
};

static void capsule_body(struct cself *s)
{
	struct capsule *c = s->c;
	struct timespec req = { c->sleep_ns / 1000000000L, c->sleep_ns % 1000000000L };
	int leader;

	/* phase 1: block the VP (or the pthread) in the kernel */
	if (c->asc)
		asx_asc_nanosleep(&req, NULL);
	else
		while (nanosleep(&req, &req) && errno == EINTR)
			;
	if (c->asc)
		leader = asx_asc_barrier_wait(&c->ab);
	else
		leader = pthread_barrier_wait(&c->pb) == PTHREAD_BARRIER_SERIAL_THREAD;
	if (leader)
		__atomic_store_n(&c->t1, bench_now_ns(), __ATOMIC_RELEASE);
	/* everyone sees t1 set before the ring starts moving past thread 0 */
	/* phase 2: the ring */
	for (unsigned long r = 0; r < c->rounds; r++) {
		while (__atomic_load_n(&c->token, __ATOMIC_ACQUIRE) != s->me) {
			if (c->asc)
				asx_thread_yield();
			else
				sched_yield();
		}
		__atomic_store_n(&c->token, (s->me + 1) % NT, __ATOMIC_RELEASE);
	}
	if (__atomic_add_fetch(&c->finished, 1, __ATOMIC_ACQ_REL) == NT)
		__atomic_store_n(&c->t2, bench_now_ns(), __ATOMIC_RELEASE);
}

static void *capsule_thread(void *arg)
{
	capsule_body(arg);
	return NULL;
}

/* @nvps 0: DIRECT, -1: pthreads */
static int capsule_run(int nvps, long sleep_ns, unsigned long rounds, double *block,
		       double *sync)
{
	struct capsule c = { .sleep_ns = sleep_ns, .rounds = rounds, .asc = nvps >= 0 };
	struct cself s[NT];
	struct asx_asc *a = NULL;
	struct asx_thread *t[NT];
	pthread_t pt[NT];
	int r = 0, n = 0;

	asx_asc_barrier_init(&c.ab, NT);
	pthread_barrier_init(&c.pb, NULL, NT);
	if (nvps >= 0) {
		struct asx_asc_attr at = { .sz = sizeof(at), .nvps = nvps ? (unsigned)nvps : 1 };

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

			r = asx_thread_spawn(a, &q.qos, capsule_thread, &s[n], NULL, &t[n]);
		} else if (nvps == 0) {
			r = asx_thread_spawn(a, NULL, capsule_thread, &s[n], NULL, &t[n]);
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
			asx_thread_join(t[i], NULL);
		else
			pthread_join(pt[i], NULL);
	}
	*block = (double)(c.t1 - c.t0) / 1e9;
	*sync = (double)(c.t2 - c.t1) / 1e9;
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
};
#define NCFG ((int)(sizeof(configs) / sizeof(configs[0])))

static int cmd_capsule_block(struct bench_ctx *ctx, int argc, char **argv)
{
	long sleep_ns = ctx->quick ? 100000000L : 1000000000L;
	unsigned long rounds = ctx->quick ? 200 : 20000;
	int runs = ctx->quick ? 1 : ctx->runs;
	double *b[NCFG], *s[NCFG];
	const char *only = NULL;
	int ret = 0;

	/* --config NAME: one configuration only */
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--config"))
			only = argv[i + 1];
	for (int k = 0; k < NCFG; k++) {
		b[k] = calloc((size_t)runs, sizeof(double));
		s[k] = calloc((size_t)runs, sizeof(double));
		if (!b[k] || !s[k])
			ret = -ENOMEM;
	}
	for (int r = 0; r < runs && !ret; r++)
		for (int k = 0; k < NCFG && !ret; k++)
			if (!only || !strcmp(only, configs[k].name))
				ret = capsule_run(configs[k].nvps, sleep_ns, rounds, &b[k][r], &s[k][r]);
	if (!ret) {
		char key[64];
		double s1 = 0;

		bench_say(ctx, "capsule-block: %d threads, %.1f s wrapped sleep, barrier, "
			  "%lu-round token ring; median of %d runs\n", NT, sleep_ns / 1e9,
			  rounds, runs);
		bench_say(ctx, "  %-10s %10s %10s\n", "config", "block s", "sync s");
		for (int k = 0; k < NCFG; k++) {
			if (only && strcmp(only, configs[k].name))
				continue;
			double mb = bench_median(b[k], (size_t)runs);
			double ms = bench_median(s[k], (size_t)runs);

			if (k == 0)
				s1 = ms;
			bench_say(ctx, "  %-10s %10.3f %10.4f  (sync x%.2f of prio1)\n",
				  configs[k].name, mb, ms, s1 > 0 ? ms / s1 : 0);
			snprintf(key, sizeof(key), "%s_block_s", configs[k].name);
			bench_figure(ctx, key, mb, "s");
			snprintf(key, sizeof(key), "%s_sync_s", configs[k].name);
			bench_figure(ctx, key, ms, "s");
		}
	}
	for (int k = 0; k < NCFG; k++) {
		free(b[k]);
		free(s[k]);
	}
	return ret;
}

BENCH_COMMAND(capsule_block, "capsule-block",
	      "whole-capsule blocking: wrapped sleep then a yield ring, PRIO 1-8 VPs, "
	      "DIRECT, pthreads", "[--config prio1|prio2|prio4|prio8|direct|pthread]",
	      cmd_capsule_block)
