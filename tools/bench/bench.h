/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * bench.h - the asx-bench harness.
 *
 * A benchmark is a subcommand registered with BENCH_COMMAND().  It measures
 * ASX and its baseline in the same run, prints a human-readable table with
 * bench_say() and reports each figure with bench_figure().  The driver
 * turns figures into one flat JSON object (--json) and/or CSV rows (--csv).
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
 * Record a figure.  @key is the JSON key (lower case, [a-z0-9_]); @unit is
 * free text for the CSV and may be "" for ratios.
 */
void bench_figure(struct bench_ctx *ctx, const char *key, double value, const char *unit);

/* Median of @n values (sorts @v in place). */
double bench_median(double *v, size_t n);

/* The CPUs this process may run on (its affinity mask), at least 1. */
int bench_nproc(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t bench_now_ns(void);

/* Print "x.xx" with an SI suffix (k, M, G) into @buf; returns @buf. */
const char *bench_si(char *buf, size_t len, double v);

#endif /* ASX_BENCH_H */
