/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * bench.h - the asx-bench harness.
 *
 * A benchmark is a subcommand registered with BENCH_COMMAND().  It measures
 * ASX and its baseline in the same run, prints a human-readable table with
 * bench_say() and reports each measurement as one record, with
 * bench_record() (its dimensions as fields) or bench_figure() (a record
 * with no dimensions).  With --json the driver writes one JSON object: the
 * run's "context", the "records", and the flat view derived from them
 * (each record's key: its value); with --csv, CSV rows.  The format is in
 * Documentation/benchmarks.rst, "Records".
 */
#ifndef ASX_BENCH_H
#define ASX_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct bench_ctx {
	bool json;		/* --json: figures only, as one JSON object */
	bool quick;		/* --quick: smaller sizes, for smoke tests */
	bool full;		/* --full: the papers' full sweeps (long) */
	int runs;		/* --runs N: repetitions; report medians */
	const char *cmd;	/* running subcommand */
};

struct bench_cmd {
	const char *name;
	const char *summary;
	const char *usage;	/* subcommand options, or NULL */
	int (*run)(struct bench_ctx *ctx, int argc, char **argv);
	struct bench_cmd *next;
};

void bench_register(struct bench_cmd *cmd);

#define BENCH_COMMAND(id, nm, sum, use, fn)				\
	static struct bench_cmd bench_cmd_##id = {			\
		.name = nm, .summary = sum, .usage = use, .run = fn };	\
	__attribute__((constructor)) static void bench_reg_##id(void)	\
	{								\
		bench_register(&bench_cmd_##id);			\
	}

/* Human-readable output; suppressed with --json. */
__attribute__((format(printf, 2, 3)))
void bench_say(struct bench_ctx *ctx, const char *fmt, ...);

/*
 * One measurement.  NULL or 0 in a dimension: it does not apply (null in
 * the JSON).  xdr is written only with a proto (a presentation layer over
 * a protocol stack).
 */
struct bench_rec {
	const char *key;	/* its name in the flat view: [a-z0-9_], unique in a run */
	const char *metric;	/* what was measured: "mbps", "csw_per_msg", ... */
	const char *unit;	/* one of benchmarks.rst's units; "x" for a ratio */
	double value;		/* the median of the runs, or derived from other records */
	const double *runs;	/* the values of the single runs, or NULL */
	size_t nruns;
	/* the dimensions; the first five are in every record, null where unset */
	const char *arch;	/* "lp", "cp", "mp" (001's architectures) */
	const char *sched;	/* "pthread" or "asc": what the threads are */
	const char *proto;	/* "tcp", "udp" */
	bool xdr;		/* with the XDR presentation layer (with a proto) */
	unsigned int pes;	/* processing elements: threads or VPs */
	/* written only where set */
	const char *experiment;	/* a part of the command: "pes", "conns", ... */
	const char *impl;	/* which implementation: "asx", "pthread", "tirpc", ... */
	const char *lock;	/* a lock strategy: "mutex", "rwlock", "rcu", "none" */
	unsigned int conns;	/* connections */
	unsigned int threads;	/* writer / contending threads */
	unsigned int layer_threads; /* arch lp: threads per layer */
	size_t size;		/* bytes: message or buffer size */
	/* 002's ttcp: written only where set */
	const char *api;	/* "c" (socket calls) or "asx" (the IPC SAP wrappers) */
	const char *net;	/* "loopback" or "netns" (a veth pair between namespaces) */
	unsigned int sockbuf;	/* bytes asked of SO_SNDBUF and SO_RCVBUF */
	unsigned int sndbuf_got; /* what getsockopt then said (Linux doubles it) */
	unsigned int rcvbuf_got;
};

/* Write one record (copied; the pointers need not outlive the call). */
void bench_record(struct bench_ctx *ctx, const struct bench_rec *rec);

/*
 * A record of @metric with no dimensions, whose flat key is @metric too.
 * @unit as in struct bench_rec ("" is taken as "x", a ratio).
 */
void bench_figure(struct bench_ctx *ctx, const char *key, double value, const char *unit);

/* A setting the running command chose: "<command>_@name": @value in the
 * context's "settings" object. */
void bench_setting(struct bench_ctx *ctx, const char *name, double value);

/* How long a part of the running command took (the context's "durations"). */
void bench_phase(struct bench_ctx *ctx, const char *what, double seconds);

/* Median of @n values (sorts @v in place). */
double bench_median(double *v, size_t n);

/* The CPUs this process may run on (its affinity mask), at least 1. */
int bench_nproc(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/*
 * Run @fn on @n threads (at most BENCH_THREADS_MAX), thread i with
 * @args[i]: user threads of a new PRIO ASC of @nvps VPs (at most @max_vps;
 * 0: the ASC's default) when @asc, else pthreads; and wait for them all.
 * 0 and *@ns the time from the first start to the last join, or a negative
 * errno (the ASC not made; @n too large).  A thread that cannot be started
 * aborts: a half-started set could wait for ever.
 */
#define BENCH_THREADS_MAX 8
int bench_run_threads(bool asc, unsigned int nvps, unsigned int max_vps, unsigned int n,
		      void *(*fn)(void *), void *const *args, uint64_t *ns);

/* Print "x.xx" with an SI suffix (k, M, G) into @buf; returns @buf. */
const char *bench_si(char *buf, size_t len, double v);

/* bench_kstream_mux.c: kstream's mux and peek/poll rows, @n round trips each run */
int bench_kstream_mux(struct bench_ctx *ctx, long n);

/*
 * `asx-bench echo`'s clients (bench_uthread.c) against another server, for
 * `asx-bench ace`: @nc loopback TCP pairs, one 64-byte message outstanding
 * on each, for @ms; @start(server ends, @nc, &server) starts the server and
 * @stop(server) stops it; @start NULL: the ASX Reactor on one pthread.
 * 0 and round trips/s and the 99th percentile in us, or a negative errno.
 */
int bench_echo_served(unsigned int nc, unsigned int ms,
		      int (*start)(const int *sfd, unsigned int nc, void **srv),
		      void (*stop)(void *srv), double *rtps, double *p99_us);
/*
 * The same against a server of @nthreads threads: @start NULL, ASX's
 * thread-pool Reactor (ASX_REACTOR_TP; @nthreads must be 2, asx-bench
 * echo's "tp" server).  *@served: the connections that had at least one
 * round trip (a server that starves some shows here).
 */
int bench_echo_served_tp(unsigned int nc, unsigned int ms, unsigned int nthreads,
			 int (*start)(const int *sfd, unsigned int nc, unsigned int nthreads,
				      void **srv),
			 void (*stop)(void *srv), double *rtps, double *p99_us,
			 unsigned int *served);

/* 0 when /dev/asx is asx.ko with every ASX_FEAT_* bit of @bits; -ENOTTY
 * when it lacks one, -errno when it cannot be opened (bench_sa.c). */
int bench_asx_has(uint64_t bits);

#endif /* ASX_BENCH_H */
