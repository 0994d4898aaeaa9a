// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asx-bench - the ASX benchmark driver.  See `asx-bench --help` and
 * Documentation/benchmarks.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <asx/common.h>
#include "bench.h"

static struct bench_cmd *cmds;
static FILE *csv;
static FILE *jsonf;		/* stdout with --json, or the --json-file */
static int nfigures;

void bench_register(struct bench_cmd *cmd)
{
	struct bench_cmd **pp = &cmds;

	/* keep the list sorted by name so --help and `all` are stable */
	while (*pp && strcmp((*pp)->name, cmd->name) < 0)
		pp = &(*pp)->next;
	cmd->next = *pp;
	*pp = cmd;
}

void bench_say(struct bench_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	if (ctx->json)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

void bench_figure(struct bench_ctx *ctx, const char *key, double value, const char *unit)
{
	if (jsonf) {
		if (!isfinite(value))
			fprintf(jsonf, "%s\"%s\": null", nfigures ? ",\n  " : "{\n  ", key);
		else
			fprintf(jsonf, "%s\"%s\": %.6g", nfigures ? ",\n  " : "{\n  ", key,
				value);
	}
	if (csv)
		fprintf(csv, "%s,%s,%.6g,%s\n", ctx->cmd, key, value, unit ? unit : "");
	nfigures++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_nproc(void)
{
	cpu_set_t set;
	int c = 0;

	if (!sched_getaffinity(0, sizeof(set), &set))
		c = CPU_COUNT(&set);
	return c > 0 ? c : 1;
}

uint64_t bench_now_ns(void)
{
	return asx_now_ns();
}

const char *bench_si(char *buf, size_t len, double v)
{
	static const char sfx[] = " kMGT";
	int i = 0;

	while (fabs(v) >= 1000 && i < 4) {
		v /= 1000;
		i++;
	}
	snprintf(buf, len, i ? "%.2f%c" : "%.2f", v, sfx[i]);
	return buf;
}

static void usage(FILE *f)
{
	struct bench_cmd *c;

	fprintf(f,
		"Usage: asx-bench [OPTIONS] COMMAND [COMMAND-OPTIONS]\n"
		"       asx-bench [OPTIONS] all\n"
		"\n"
		"OPTIONS may also come after COMMAND (asx-bench stream --json).\n"
		"\n"
		"Runs ASX's benchmarks.  Every command measures ASX and its baseline\n"
		"side by side in the same run and reports medians of --runs runs.\n"
		"\n"
		"Options:\n"
		"  -j, --json       print one JSON object of figures instead of tables\n"
		"  -J, --json-file FILE\n"
		"                   also write the JSON object to FILE (tables still print)\n"
		"  -c, --csv FILE   append figures to FILE as CSV (command,key,value,unit)\n"
		"  -r, --runs N     repetitions per measurement (default 5, 1..1000)\n"
		"  -q, --quick      smaller workloads (smoke tests; figures are noisier)\n"
		"      --full       the papers' full sweeps where a command has them (long)\n"
		"  -h, --help       this help; COMMAND --help for a command's options\n"
		"  -V, --version    print the libasx version\n"
		"\n"
		"Commands:\n");
	for (c = cmds; c; c = c->next)
		fprintf(f, "  %-14s %s\n", c->name, c->summary);
	fprintf(f, "  %-14s %s\n", "all", "run every command in turn");
}

static struct bench_cmd *find_cmd(const char *name)
{
	struct bench_cmd *c;

	for (c = cmds; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static int run_cmd(struct bench_ctx *ctx, struct bench_cmd *c, int argc, char **argv)
{
	int i, ret;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("Usage: asx-bench [OPTIONS] %s %s\n\n%s\n", c->name,
			       c->usage ? c->usage : "", c->summary);
			return 0;
		}
	}
	ctx->cmd = c->name;
	optind = 1;
	ret = c->run(ctx, argc, argv);
	if (ret == -EINVAL)
		fprintf(stderr, "asx-bench %s: bad arguments (asx-bench %s --help lists them)\n",
			c->name, c->name);
	else if (ret < 0)
		fprintf(stderr, "asx-bench %s: %s\n", c->name, strerror(-ret));
	return ret;
}

/* Applies global option @opt (its argument @arg); 0, or the exit status. */
static int global_opt(struct bench_ctx *ctx, int opt, const char *arg)
{
	char *end;
	long n;

	switch (opt) {
	case 'j':
		ctx->json = true;
		return 0;
	case 'J':
		if (jsonf)
			fclose(jsonf);
		jsonf = fopen(arg, "w");
		if (!jsonf) {
			fprintf(stderr, "asx-bench: cannot open '%s': %s\n", arg, strerror(errno));
			return 1;
		}
		return 0;
	case 'c':
		if (csv)
			fclose(csv);
		csv = fopen(arg, "a");
		if (!csv) {
			fprintf(stderr, "asx-bench: cannot open '%s': %s\n", arg, strerror(errno));
			return 1;
		}
		return 0;
	case 'r':
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || *end || n < 1 || n > 1000) {
			fprintf(stderr, "asx-bench: --runs wants 1..1000, not '%s'\n", arg);
			return 2;
		}
		ctx->runs = (int)n;
		return 0;
	case 'q':
		ctx->quick = true;
		return 0;
	case 'F':
		ctx->full = true;
		return 0;
	}
	return 2;
}

/*
 * The global options are accepted after the command too ("asx-bench stream
 * --json", as one would write it): they are taken out of the command's
 * arguments (up to a "--") before the command parses the rest.
 */
static int take_global_opts(struct bench_ctx *ctx, int *argc, char **argv)
{
	static const struct {
		const char *s, *l;
		char opt;
		bool arg;
	} g[] = {
		{ "-j", "--json", 'j', false }, { "-J", "--json-file", 'J', true },
		{ "-c", "--csv", 'c', true }, { "-r", "--runs", 'r', true },
		{ "-q", "--quick", 'q', false }, { "--full", "--full", 'F', false },
	};
	int i = 1, k, n, ret;
	const char *arg;
	size_t j, len;

	while (i < *argc && strcmp(argv[i], "--")) {
		n = 0;
		arg = NULL;
		for (j = 0; j < sizeof(g) / sizeof(g[0]) && !n; j++) {
			len = strlen(g[j].l);
			if (!strcmp(argv[i], g[j].s) || !strcmp(argv[i], g[j].l)) {
				n = g[j].arg ? 2 : 1;
				if (g[j].arg && i + 1 >= *argc) {
					fprintf(stderr, "asx-bench: %s needs an argument\n", argv[i]);
					return 2;
				}
				arg = g[j].arg ? argv[i + 1] : NULL;
			} else if (g[j].arg && !strncmp(argv[i], g[j].l, len) &&
				   argv[i][len] == '=') {
				n = 1;
				arg = argv[i] + len + 1;
			}
			if (n) {
				ret = global_opt(ctx, g[j].opt, arg);
				if (ret)
					return ret;
			}
		}
		if (!n) {
			i++;
			continue;
		}
		for (k = i; k + n <= *argc; k++)
			argv[k] = argv[k + n];
		*argc -= n;
	}
	return 0;
}

/*
 * `all` prints a progress line per command on stderr.  What is left is
 * estimated from these typical durations (seconds with the default
 * workloads and --runs 3, as `make demo` runs them, on 2 busy CPUs; arch
 * took 25-60 s there, well inside its 150 s budget), scaled by how long
 * the commands run so far took against theirs, so --quick, --full and a
 * faster machine estimate themselves.
 * A command not listed counts as TYPICAL_OTHER_S.
 */
static const struct {
	const char *name;
	double s;
} typical_s[] = {
	{ "arch", 40 }, { "asc-yield", 4 }, { "capsule-block", 80 },
	{ "kstream", 1 }, { "msgq", 2 }, { "mutex", 2 }, { "sa-latency", 1 },
	{ "stream", 5 }, { "svc", 12 }, { "xdr", 5 },
};
#define TYPICAL_OTHER_S 30.0

static double typical(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(typical_s) / sizeof(typical_s[0]); i++)
		if (!strcmp(typical_s[i].name, name))
			return typical_s[i].s;
	return TYPICAL_OTHER_S;
}

static int run_all(struct bench_ctx *ctx)
{
	double done_typ = 0, left_typ = 0, took, elapsed;
	uint64_t t0 = bench_now_ns(), t;
	struct bench_cmd *c;
	int n = 0, i = 0, ret = 0;

	for (c = cmds; c; c = c->next) {
		n++;
		left_typ += typical(c->name);
	}
	for (c = cmds; c; c = c->next) {
		char *sub[] = { (char *)c->name, NULL };

		t = bench_now_ns();
		if (run_cmd(ctx, c, 1, sub) < 0)
			ret = 1;
		took = (bench_now_ns() - t) / 1e9;
		elapsed = (bench_now_ns() - t0) / 1e9;
		done_typ += typical(c->name);
		left_typ -= typical(c->name);
		fprintf(stderr, "[%d/%d] %-14s done in %.0f s, elapsed %.0f s", ++i, n,
			c->name, took, elapsed);
		if (c->next)
			fprintf(stderr, ", about %.0f s left\n", elapsed / done_typ * left_typ);
		else
			fputs("\n", stderr);
	}
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "json-file", required_argument, NULL, 'J' },
		{ "csv", required_argument, NULL, 'c' },
		{ "runs", required_argument, NULL, 'r' },
		{ "quick", no_argument, NULL, 'q' },
		{ "full", no_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct bench_ctx ctx = { .runs = 5 };
	struct bench_cmd *c;
	int opt, ret = 0;

	/* '+': stop at the command name; what follows belongs to it */
	while ((opt = getopt_long(argc, argv, "+jJ:c:r:qhV", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
		case 'J':
		case 'c':
		case 'r':
		case 'q':
		case 'F':
			ret = global_opt(&ctx, opt, optarg);
			if (ret)
				return ret;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("asx-bench (libasx %s)\n", asx_version());
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	argc -= optind;
	argv += optind;
	ret = take_global_opts(&ctx, &argc, argv);
	if (ret)
		return ret;
	if (ctx.quick && ctx.full) {
		fprintf(stderr, "asx-bench: --quick and --full exclude each other\n");
		return 2;
	}
	if (ctx.json)
		jsonf = stdout;

	if (!strcmp(argv[0], "all")) {
		ret = run_all(&ctx);
	} else {
		c = find_cmd(argv[0]);
		if (!c) {
			fprintf(stderr, "asx-bench: unknown command '%s'\n", argv[0]);
			usage(stderr);
			return 2;
		}
		if (run_cmd(&ctx, c, argc, argv) < 0)
			ret = 1;
	}
	if (jsonf) {
		fputs(nfigures ? "\n}\n" : "{}\n", jsonf);
		if (jsonf != stdout && fclose(jsonf)) {
			perror("asx-bench: json");
			ret = 1;
		}
	}
	if (csv && fclose(csv)) {
		perror("asx-bench: csv");
		ret = 1;
	}
	return ret;
}
