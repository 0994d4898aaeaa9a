// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asx-bench - the ASX benchmark driver.  See `asx-bench --help` and
 * Documentation/benchmarks.rst.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>

#include <asx/asc.h>
#include <asx/common.h>
#include "bench.h"

static struct bench_cmd *cmds;
static FILE *csv;
static FILE *jsonf;		/* stdout with --json, or the --json-file */

void bench_register(struct bench_cmd *cmd)
{
	struct bench_cmd **pp = &cmds;

	/* keep the list sorted by name so --help and `all` are stable */
	while (*pp && strcmp((*pp)->name, cmd->name) < 0)
		pp = &(*pp)->next;
	cmd->next = *pp;
	*pp = cmd;
}

/*
 * The run's records, kept until the end: the JSON object is written once
 * all of them are in (the context's durations come last).
 */
struct stored {
	char *key;
	char *json;		/* the record as one JSON object */
	double value;
};
static struct stored *recs;
static size_t nrecs, recs_cap;
static bool dup_found;		/* a key recorded twice: the run fails */

struct phase {
	char *what;
	double s;
};
static struct phase *phases;
static size_t nphases, phases_cap;

/* A growing string for building JSON text. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3)))
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t room, cap;
	char *p;
	int n;

	while (!b->oom) {
		room = b->cap - b->len;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		cap = (b->cap ? b->cap : 256) * 2 + (n > 0 ? (size_t)n : 0);
		p = n < 0 ? NULL : realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}

/* @s as a JSON string, or null */
static void sb_str(struct sbuf *b, const char *s)
{
	if (!s) {
		sb_printf(b, "null");
		return;
	}
	sb_printf(b, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			sb_printf(b, "\\%c", c);
		else if (c < 0x20)
			sb_printf(b, "\\u%04x", c);
		else
			sb_printf(b, "%c", c);
	}
	sb_printf(b, "\"");
}

/* ", "name": "s"" (or null) */
static void sb_field(struct sbuf *b, const char *name, const char *s)
{
	sb_printf(b, ", \"%s\": ", name);
	sb_str(b, s);
}

static void sb_num(struct sbuf *b, double v)
{
	if (isfinite(v))
		sb_printf(b, "%.6g", v);
	else
		sb_printf(b, "null");
}

static void oom(void)
{
	fputs("asx-bench: out of memory for the records\n", stderr);
	exit(1);
}

/* @p (holding @n of *@cap elements of @size), with room for one more. */
static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	size_t c = *cap ? *cap * 2 : 64;

	if (n < *cap)
		return p;
	p = realloc(p, c * size);
	if (!p)
		oom();
	*cap = c;
	return p;
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

/* 002's ttcp dimensions (api, net, sockbuf) and what the kernel made of sockbuf */
static void record_ttcp_fields(struct sbuf *b, const struct bench_rec *r)
{
	if (r->api)
		sb_field(b, "api", r->api);
	if (r->net)
		sb_field(b, "net", r->net);
	if (r->sockbuf)
		sb_printf(b, ", \"sockbuf\": %u", r->sockbuf);
	if (r->sndbuf_got)
		sb_printf(b, ", \"sndbuf_got\": %u", r->sndbuf_got);
	if (r->rcvbuf_got)
		sb_printf(b, ", \"rcvbuf_got\": %u", r->rcvbuf_got);
}

void bench_record(struct bench_ctx *ctx, const struct bench_rec *r)
{
	const char *unit = r->unit && *r->unit ? r->unit : "x";
	struct sbuf b = { 0 };
	struct stored *st;
	size_t i;

	for (i = 0; i < nrecs; i++) {
		if (!strcmp(recs[i].key, r->key)) {
			fprintf(stderr, "asx-bench %s: %s measured twice\n", ctx->cmd, r->key);
			dup_found = true;
			return;
		}
	}
	sb_printf(&b, "{\"bench\": ");
	sb_str(&b, ctx->cmd);
	if (r->experiment)
		sb_field(&b, "experiment", r->experiment);
	sb_field(&b, "arch", r->arch);
	sb_field(&b, "sched", r->sched);
	sb_field(&b, "proto", r->proto);
	sb_printf(&b, ", \"xdr\": %s", !r->proto ? "null" : r->xdr ? "true" : "false");
	if (r->pes)
		sb_printf(&b, ", \"pes\": %u", r->pes);
	else
		sb_printf(&b, ", \"pes\": null");
	if (r->conns)
		sb_printf(&b, ", \"conns\": %u", r->conns);
	if (r->threads)
		sb_printf(&b, ", \"threads\": %u", r->threads);
	if (r->layer_threads)
		sb_printf(&b, ", \"layer_threads\": %u", r->layer_threads);
	if (r->size)
		sb_printf(&b, ", \"size\": %zu", r->size);
	if (r->lock)
		sb_field(&b, "lock", r->lock);
	if (r->impl)
		sb_field(&b, "impl", r->impl);
	record_ttcp_fields(&b, r);
	sb_field(&b, "metric", r->metric ? r->metric : r->key);
	sb_printf(&b, ", \"value\": ");
	sb_num(&b, r->value);
	sb_field(&b, "unit", unit);
	sb_printf(&b, ", \"runs\": ");
	for (i = 0; r->runs && i < r->nruns; i++) {
		sb_printf(&b, i ? ", " : "[");
		sb_num(&b, r->runs[i]);
	}
	sb_printf(&b, r->runs && r->nruns ? "]" : "null");
	sb_field(&b, "key", r->key);
	sb_printf(&b, "}");
	if (b.oom)
		oom();
	recs = grow(recs, &recs_cap, nrecs, sizeof(*recs));
	st = &recs[nrecs++];
	st->key = strdup(r->key);
	st->json = b.p;
	st->value = r->value;
	if (!st->key)
		oom();
	if (csv)
		fprintf(csv, "%s,%s,%.6g,%s\n", ctx->cmd, r->key, r->value, unit);
}

void bench_figure(struct bench_ctx *ctx, const char *key, double value, const char *unit)
{
	bench_record(ctx, &(struct bench_rec){ .key = key, .value = value, .unit = unit });
}

static void add_phase(const char *what, double seconds)
{
	phases = grow(phases, &phases_cap, nphases, sizeof(*phases));
	phases[nphases].what = strdup(what);
	if (!phases[nphases].what)
		oom();
	phases[nphases++].s = seconds;
}

void bench_phase(struct bench_ctx *ctx, const char *what, double seconds)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "%s: %s", ctx->cmd, what);
	add_phase(buf, seconds);
}

#ifndef ASX_BENCH_CFLAGS
#define ASX_BENCH_CFLAGS NULL
#endif

/* The CPU's model name from /proc/cpuinfo into @buf, or NULL. */
static const char *cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	const char *ret = NULL;
	char line[256], *v;

	if (!f)
		return NULL;
	while (!ret && fgets(line, sizeof(line), f)) {
		v = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !v)
			continue;
		v += strspn(v + 1, " \t") + 1;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		ret = buf;
	}
	fclose(f);
	return ret;
}

/* The commands' settings (bench_setting), in the order they were made. */
static struct setting {
	char *name;
	double value;
} *settings;
static size_t nsettings, settings_cap;

void bench_setting(struct bench_ctx *ctx, const char *name, double value)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "%s_%s", ctx->cmd, name);
	settings = grow(settings, &settings_cap, nsettings, sizeof(*settings));
	settings[nsettings].name = strdup(buf);
	if (!settings[nsettings].name)
		oom();
	settings[nsettings++].value = value;
}

/* The context's "settings" object, if any setting was made. */
static void write_settings(struct sbuf *b)
{
	if (!nsettings)
		return;
	sb_printf(b, ", \"settings\": {");
	for (size_t i = 0; i < nsettings; i++) {
		sb_printf(b, "%s", i ? ", " : "");
		sb_str(b, settings[i].name);
		sb_printf(b, ": ");
		sb_num(b, settings[i].value);
	}
	sb_printf(b, "}");
}

/* The "context" object: the machine and the run. */
static void write_context(struct sbuf *b, const struct bench_ctx *ctx, const char *what,
			  const char *started, double seconds)
{
	char host[256], cpu[256];
	struct utsname u;
	bool un = !uname(&u);
	size_t i;

	if (gethostname(host, sizeof(host)))
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	sb_printf(b, "{\"host\"");
	sb_printf(b, ": ");
	sb_str(b, host);
	sb_field(b, "cpu", cpu_model(cpu, sizeof(cpu)));
	sb_printf(b, ", \"cpus\": %d", bench_nproc());
	sb_field(b, "kernel", un ? u.release : NULL);
	sb_field(b, "machine", un ? u.machine : NULL);
	sb_field(b, "date", started);
	sb_field(b, "libasx", asx_version());
	sb_printf(b, ", \"build\": {\"compiler\": ");
	sb_str(b, "gcc " __VERSION__);
	sb_field(b, "cflags", ASX_BENCH_CFLAGS);
	sb_printf(b, "}");
	sb_field(b, "command", what);
	sb_field(b, "workloads", ctx->quick ? "quick" : ctx->full ? "full" : "default");
	sb_printf(b, ", \"runs\": %d, \"seconds\": ", ctx->runs);
	sb_num(b, seconds);
	sb_printf(b, ", \"durations\": [");
	for (i = 0; i < nphases; i++) {
		sb_printf(b, "%s{\"what\": ", i ? ", " : "");
		sb_str(b, phases[i].what);
		sb_printf(b, ", \"seconds\": ");
		sb_num(b, phases[i].s);
		sb_printf(b, "}");
	}
	sb_printf(b, "]");
	write_settings(b);
	sb_printf(b, "}");
}

/*
 * The JSON object: the context, the records, then the flat view derived
 * from them (each record's key: its value), as asx-bench wrote it before
 * records existed.  0, or -1 when it could not be written.
 */
static int write_json(FILE *f, const struct bench_ctx *ctx, const char *what,
		      const char *started, double seconds)
{
	struct sbuf b = { 0 };
	size_t i;

	write_context(&b, ctx, what, started, seconds);
	if (b.oom)
		oom();
	fprintf(f, "{\n\"context\": %s,\n\"records\": [", b.p);
	free(b.p);
	for (i = 0; i < nrecs; i++)
		fprintf(f, "%s\n  %s", i ? "," : "", recs[i].json);
	fputs(nrecs ? "\n]" : "]", f);
	for (i = 0; i < nrecs; i++) {
		fprintf(f, ",\n\"%s\": ", recs[i].key);
		if (isfinite(recs[i].value))
			fprintf(f, "%.6g", recs[i].value);
		else
			fputs("null", f);
	}
	fputs("\n}\n", f);
	return fflush(f) || ferror(f) ? -1 : 0;
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

int bench_run_threads(bool asc, unsigned int nvps, unsigned int max_vps, unsigned int n,
		      void *(*fn)(void *), void *const *args, uint64_t *ns)
{
	struct asx_asc_thread *ut[BENCH_THREADS_MAX];
	pthread_t pt[BENCH_THREADS_MAX];
	struct asx_asc *a = NULL;
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	ASX_OPTS(struct asx_asc_opts, o, .nvps = nvps, .max_vps = max_vps);
	uint64_t t0;
	unsigned int i;
	int r;

	if (n > BENCH_THREADS_MAX)
		return -E2BIG;
	if (asc) {
		r = asx_asc_create(&a, &asx_asc_prio, &o);
		if (r)
			return r;
	}
	t0 = bench_now_ns();
	for (i = 0; i < n; i++) {
		r = asc ? asx_asc_thread_spawn(a, &q.qos, fn, args[i], NULL, &ut[i]) :
			  pthread_create(&pt[i], NULL, fn, args[i]);
		if (r)
			abort();
	}
	for (i = 0; i < n; i++) {
		if (asc)
			asx_asc_thread_join(ut[i], NULL);
		else
			pthread_join(pt[i], NULL);
	}
	*ns = bench_now_ns() - t0;
	if (a)
		asx_asc_destroy(a);
	return 0;
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
 * arguments (up to a "--") before the command parses the rest.  A short
 * form the command's usage names as its own ("echo [-c CONNECTIONS]",
 * "svc [-r REPLACES_PER_S]") is the command's there; the long form stays
 * global.
 */
static bool cmd_owns_short(const struct bench_cmd *c, const char *opt)
{
	const char *u = c ? c->usage : NULL;
	size_t n = strlen(opt);

	for (; u && (u = strstr(u, opt)); u += n)
		if (u[n] == ' ' || u[n] == ']' || u[n] == '\0')
			return true;
	return false;
}

static int take_global_opts(struct bench_ctx *ctx, const struct bench_cmd *cmd, int *argc,
			    char **argv)
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
			if ((!strcmp(argv[i], g[j].s) && !cmd_owns_short(cmd, g[j].s)) ||
			    !strcmp(argv[i], g[j].l)) {
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
 * took 25-60 s there before FP, the warm-up and the layers experiment,
 * some 1.3 times that since), scaled by how long
 * the commands run so far took against theirs, so --quick, --full and a
 * faster machine estimate themselves.
 * A command not listed counts as TYPICAL_OTHER_S.
 */
static const struct {
	const char *name;
	double s;
} typical_s[] = {
	{ "arch", 52 }, { "asc-yield", 4 }, { "capsule-block", 80 },
	{ "kstream", 1 }, { "msgq", 2 }, { "mutex", 2 }, { "sa-latency", 1 },
	{ "stream", 5 }, { "svc", 12 }, { "xdr", 5 },
	{ "platform", 8 },
	{ "asc-sync", 3 }, { "echo", 7 }, { "ttcp", 12 },
	{ "fls", 2 },
	{ "ace", 16 },
	{ "proactor", 6 },
	{ "stride", 6 },
	{ "sa-preempt", 1 },
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
		add_phase(c->name, took);
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
	char started[32] = "";
	time_t now = time(NULL);
	struct bench_cmd *c;
	uint64_t t0;
	struct tm tm;
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
	ret = take_global_opts(&ctx, find_cmd(argv[0]), &argc, argv);
	if (ret)
		return ret;
	if (ctx.quick && ctx.full) {
		fprintf(stderr, "asx-bench: --quick and --full exclude each other\n");
		return 2;
	}
	if (ctx.json)
		jsonf = stdout;

	if (gmtime_r(&now, &tm))
		strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
	t0 = bench_now_ns();
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
		add_phase(c->name, (bench_now_ns() - t0) / 1e9);
	}
	if (dup_found)
		ret = 1;
	if (jsonf) {
		if (write_json(jsonf, &ctx, argv[0], started[0] ? started : NULL,
			       (bench_now_ns() - t0) / 1e9) ||
		    (jsonf != stdout && fclose(jsonf))) {
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
