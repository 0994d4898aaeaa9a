// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_arch.c - `asx-bench arch`: the threading-architecture study of
 * the papers (001 sections 3-5, 000's process-architecture experiment)
 * over the proto Modules: Layer Parallelism (task-based, a thread per
 * layer), Functional Parallelism (task-based, a thread per protocol
 * task), Connectional Parallelism (a thread per connection) and Message
 * Parallelism (a pool of threads at the driver, a thread per message),
 * each on pthreads and on ASC user threads over VPs, over TCP-lite and
 * UDP-lite, with and without the XDR presentation layer.
 *
 * Experiments (Documentation/experiments.rst maps them to the paper):
 *
 *   pes    throughput and speedup at 1..nproc PEs and oversubscribed at
 *          2x and 4x nproc; context switches, ASC switches and lock time
 *          (mutex acquisition and condition waits apart) per message at
 *          every PE count (001 Figures 18-27)
 *   layers LP over TCP-lite at the sweep's largest PE count with 1, 2, 4
 *          threads per layer (001 section 4.3.2)
 *   conns  CP and MP over TCP-lite at nproc PEs against the number of
 *          connections; MP with each connection-map lock strategy
 *   ttcp   000's experiment: one connection of 4 KB messages (10,000
 *          with --full), task-based (LP) against message-based (MP),
 *          connection-oriented (TCP-lite) and connectionless (UDP-lite)
 *
 * The baseline of every figure is measured in the same run: LP for the
 * ratios, one PE for the speedups, pthreads for the ASC variants.
 *
 * Every run first sends a warm-up (001 section 4.4: 10,000 messages
 * before the timed 20,000), not timed: --warmup N messages, by default a
 * tenth of the run's messages (half with --full, the paper's ratio); the
 * context's settings say which (arch_warmup, arch_warmup_fraction).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/map.h>

#include "bench.h"
#include "arch/arch.h"
#include "proto/proto.h"

#define PAYLOAD 4096
#define MAXPES 10

struct opts {
	bool full;
	unsigned int nproc;
	unsigned int npes, pes[MAXPES];
	unsigned int nconns, conns[16];
	uint64_t count;			/* messages per PE-sweep run */
	uint64_t conn_count;		/* per connection-sweep run */
	uint64_t ttcp_count;
	unsigned int pe_conns;		/* connections in the PE sweep */
	int reps;
	double warm_frac;		/* warm-up: this much of a run's count, */
	long long warm_n;		/* or (>= 0) this many messages */
	unsigned int ntpl, tpl[4];	/* LP threads per layer (layers) */
};

/* The warm-up of a run of @count messages. */
static uint64_t warmup(const struct opts *o, uint64_t count)
{
	return o->warm_n >= 0 ? (uint64_t)o->warm_n : (uint64_t)((double)count * o->warm_frac);
}

static const char *const lock_name[] = {
	[ASX_MAP_NONE] = "none", [ASX_MAP_MUTEX] = "mutex", [ASX_MAP_RWLOCK] = "rwlock",
	[ASX_MAP_RCU] = "rcu",
};

/* the throughput of each run of the last measure(), for its records */
static double last_runs[16];
static size_t last_nruns;

/* The median of o->reps runs of @c (by throughput); 0 or an error. */
static int measure(const struct opts *o, const struct exp_arch_cfg *c,
		   struct exp_arch_result *out)
{
	struct exp_arch_result r[16];
	int n = o->reps > 16 ? 16 : o->reps;

	for (int i = 0; i < n; i++) {
		int e = exp_arch_run(c, &r[i]);

		if (e) {
			fprintf(stderr, "arch: %s%s run failed: %s\n", exp_arch_name(c->arch),
				c->asc ? "_asc" : "", strerror(-e));
			return e;
		}
		if (r[i].msgs != r[i].bytes / c->payload || r[i].drops || r[i].failed ||
		    r[i].missing) {
			fprintf(stderr, "arch: %s: %llu messages, %llu drops, %llu failed, "
				"%llu missing\n", exp_arch_name(c->arch),
				(unsigned long long)r[i].msgs, (unsigned long long)r[i].drops,
				(unsigned long long)r[i].failed, (unsigned long long)r[i].missing);
			return -EIO;
		}
		last_runs[i] = r[i].mbps;	/* in the order they ran */
	}
	/* insertion sort by throughput, take the middle */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && r[j].mbps < r[j - 1].mbps; j--) {
			struct exp_arch_result t = r[j];

			r[j] = r[j - 1];
			r[j - 1] = t;
		}
	*out = r[n / 2];
	last_nruns = (size_t)n;
	return 0;
}

static void key(char *buf, size_t len, enum exp_arch a, bool asc, uint8_t proto,
		bool xdr, const char *what)
{
	snprintf(buf, len, "arch_%s%s_%s%s_%s", exp_arch_name(a), asc ? "_asc" : "",
		 proto == EXP_PROTO_IP_TCP ? "tcp" : "udp", xdr ? "_xdr" : "", what);
}

/*
 * @rec (what was measured, its value) with the dimensions of configuration
 * @c filled in, and unless it has one, the flat key that key() makes of
 * them and @what.
 */
static void put(struct bench_ctx *ctx, struct bench_rec rec,
		const struct exp_arch_cfg *c, const char *what)
{
	char k[96];

	if (!rec.key) {
		key(k, sizeof(k), c->arch, c->asc, c->proto, c->xdr, what);
		rec.key = k;
	}
	rec.arch = exp_arch_name(c->arch);
	rec.sched = c->asc ? "asc" : "pthread";
	rec.proto = c->proto == EXP_PROTO_IP_TCP ? "tcp" : "udp";
	rec.xdr = c->xdr;
	rec.pes = c->pes;
	rec.conns = c->nconn;
	rec.size = c->payload;
	bench_record(ctx, &rec);
}

/* The throughput of the last measure(), and its runs. */
#define MBPS(v) .metric = "mbps", .unit = "Mbit/s", .value = (v), .runs = last_runs, \
		.nruns = last_nruns

static double per_msg(uint64_t v, const struct exp_arch_result *r)
{
	return r->msgs ? (double)v / (double)r->msgs : 0;
}

/* mbps at nproc of (arch, asc, proto, xdr) for the ratios */
static double at_nproc[4][2][2][2];

/*
 * The white-box measurements of one point of the PE sweep (001 Figures
 * 18-27), per message: context switches, ASC switches, lock time (all,
 * then mutex acquisition and condition waits apart).  The flat keys end
 * in _pe<N>, except that the five older ones keep their names at nproc.
 */
static void white_box(struct bench_ctx *ctx, const struct opts *o,
		      const struct exp_arch_cfg *c, const struct exp_arch_result *r)
{
	static const struct {
		const char *metric, *lock, *key, *unit;
	} wb[] = {
		{ "csw_per_msg", NULL, "csw_per_msg", "switches/msg" },
		{ "vcsw_per_msg", NULL, "vcsw_per_msg", "switches/msg" },
		{ "icsw_per_msg", NULL, "icsw_per_msg", "switches/msg" },
		{ "uswitch_per_msg", NULL, "uswitch_per_msg", "switches/msg" },
		{ "lock_ns_per_msg", NULL, "lock_ns_per_msg", "ns/msg" },
		{ "lock_ns_per_msg", "mutex", "lock_mutex_ns_per_msg", "ns/msg" },
		{ "lock_ns_per_msg", "cond", "lock_cond_ns_per_msg", "ns/msg" },
	};
	const uint64_t v[] = {
		r->vcsw + r->icsw, r->vcsw, r->icsw, r->uswitch, r->lock_ns + r->wait_ns,
		r->lock_ns, r->wait_ns,
	};
	char what[48];

	for (size_t i = 0; i < sizeof(wb) / sizeof(wb[0]); i++) {
		if (i == 3 && !c->asc)
			continue;
		if (c->pes == o->nproc && !wb[i].lock)
			snprintf(what, sizeof(what), "%s", wb[i].key);
		else
			snprintf(what, sizeof(what), "%s_pe%u", wb[i].key, c->pes);
		put(ctx, (struct bench_rec){ .experiment = "pes", .metric = wb[i].metric,
					     .lock = wb[i].lock, .unit = wb[i].unit,
					     .value = per_msg(v[i], r) }, c, what);
	}
}

static int pe_sweep(struct bench_ctx *ctx, const struct opts *o)
{
	static const uint8_t protos[2] = { EXP_PROTO_IP_TCP, EXP_PROTO_IP_UDP };
	char what[48];

	bench_say(ctx, "PE sweep: %u connections, %zu-byte messages, %llu per run; "
		  "Mbit/s of payload (speedup over 1 PE)\n", o->pe_conns, (size_t)PAYLOAD,
		  (unsigned long long)o->count);
	bench_say(ctx, "%-16s", "architecture");
	for (unsigned int i = 0; i < o->npes; i++)
		bench_say(ctx, "   pe%-2u          ", o->pes[i]);
	bench_say(ctx, " csw/msg vcsw icsw uswitch mutex+cond hold ns/msg (at pe%u)\n", o->nproc);
	for (int x = 0; x < 2; x++)
		for (int p = 0; p < 2; p++)
			for (int asc = 0; asc < 2; asc++)
				for (int a = 0; a < 4; a++) {
	struct exp_arch_cfg c = {
		.arch = (enum exp_arch)a, .asc = asc, .proto = protos[p], .xdr = x,
		.nconn = o->pe_conns, .lock = ASX_MAP_MUTEX, .payload = PAYLOAD,
		.count = o->count, .warmup = warmup(o, o->count),
	};
	struct exp_arch_result r, rn = { 0 };
	double base = 0;
	char name[32];

	snprintf(name, sizeof(name), "%s%s_%s%s", exp_arch_name(c.arch), asc ? "_asc" : "",
		 p ? "udp" : "tcp", x ? "_xdr" : "");
	bench_say(ctx, "%-16s", name);
	for (unsigned int i = 0; i < o->npes; i++) {
		int e;

		c.pes = o->pes[i];
		e = measure(o, &c, &r);
		if (e)
			return e;
		if (i == 0)
			base = r.mbps;
		snprintf(what, sizeof(what), "mbps_pe%u", c.pes);
		put(ctx, (struct bench_rec){ .experiment = "pes", MBPS(r.mbps) }, &c, what);
		snprintf(what, sizeof(what), "speedup_pe%u", c.pes);
		put(ctx, (struct bench_rec){ .experiment = "pes", .metric = "speedup", .unit = "x",
					     .value = base > 0 ? r.mbps / base : 0 }, &c, what);
		bench_say(ctx, " %8.0f (%4.2fx)", r.mbps, base > 0 ? r.mbps / base : 0);
		white_box(ctx, o, &c, &r);
		if (c.pes == o->nproc)
			rn = r;
	}
	at_nproc[a][asc][p][x] = rn.mbps;
	bench_say(ctx, " %7.3f %4.2f %4.2f %7.3f %6.0f+%-6.0f %5.0f\n",
		  per_msg(rn.vcsw + rn.icsw, &rn), per_msg(rn.vcsw, &rn), per_msg(rn.icsw, &rn),
		  per_msg(rn.uswitch, &rn), per_msg(rn.lock_ns, &rn), per_msg(rn.wait_ns, &rn),
		  per_msg(rn.hold_ns, &rn));
				}
	return 0;
}

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* A ratio at nproc PEs over TCP: @metric of @arch (NULL: of two) and @sched. */
static void put_ratio(struct bench_ctx *ctx, const struct opts *o, const char *k,
		      const char *metric, const char *arch, const char *sched, bool xdr,
		      double v)
{
	bench_record(ctx, &(struct bench_rec){
		.key = k, .metric = metric, .unit = "x", .value = v, .experiment = "pes",
		.arch = arch, .sched = sched, .proto = "tcp", .xdr = xdr, .pes = o->nproc,
		.conns = o->pe_conns, .size = PAYLOAD });
}

static void ratios(struct bench_ctx *ctx, const struct opts *o)
{
	static const enum exp_arch over_lp[] = { EXP_ARCH_CP, EXP_ARCH_MP, EXP_ARCH_FP };
	char k[32], metric[16];
	double v;

	bench_say(ctx, "at %s PEs (pthreads):\n", "nproc");
	/* CP, MP and FP over LP, TCP, without and with XDR */
	for (int x = 0; x < 2; x++) {
		for (size_t i = 0; i < sizeof(over_lp) / sizeof(over_lp[0]); i++) {
			const char *a = exp_arch_name(over_lp[i]);

			v = ratio(at_nproc[over_lp[i]][0][0][x], at_nproc[EXP_ARCH_LP][0][0][x]);
			snprintf(k, sizeof(k), "%s_over_lp_tcp%s", a, x ? "_xdr" : "");
			snprintf(metric, sizeof(metric), "%s_over_lp", a);
			put_ratio(ctx, o, k, metric, NULL, "pthread", x, v);
			bench_say(ctx, "  %-22s %5.2f\n", k, v);
		}
	}
	v = ratio(at_nproc[EXP_ARCH_LP][1][0][0], at_nproc[EXP_ARCH_LP][0][0][0]);
	put_ratio(ctx, o, "lp_asc_over_lp_pthread", "asc_over_pthread", "lp", NULL, false, v);
	bench_say(ctx, "  lp_asc_over_lp_pthread %5.2f  (LP on ASC user threads / on pthreads, tcp)\n",
		  v);
}

static int conn_sweep(struct bench_ctx *ctx, const struct opts *o)
{
	char what[48];

	bench_say(ctx, "\nconnection sweep: TCP-lite, %u PEs, %llu messages per run, Mbit/s\n",
		  o->nproc, (unsigned long long)o->conn_count);
	bench_say(ctx, "%-12s", "conns");
	for (unsigned int i = 0; i < o->nconns; i++)
		bench_say(ctx, " %8u", o->conns[i]);
	bench_say(ctx, "\n");
	for (int row = 0; row < 6; row++) {
		/* cp, mp (map mutex), then mp with each map lock strategy */
		enum exp_arch a = row == 0 ? EXP_ARCH_CP : EXP_ARCH_MP;
		enum asx_map_lock lk = row < 2 ? ASX_MAP_MUTEX : (enum asx_map_lock)(row - 2);
		char label[32];

		if (row < 2)
			snprintf(label, sizeof(label), "%s", exp_arch_name(a));
		else
			snprintf(label, sizeof(label), "mp map %s", lock_name[lk]);
		bench_say(ctx, "%-12s", label);
		for (unsigned int i = 0; i < o->nconns; i++) {
			struct exp_arch_cfg c = {
				.arch = a, .proto = EXP_PROTO_IP_TCP, .pes = o->nproc,
				.nconn = o->conns[i], .lock = lk, .payload = PAYLOAD,
				.count = o->conn_count, .warmup = warmup(o, o->conn_count),
			};
			struct exp_arch_result r;
			int e = measure(o, &c, &r);

			if (e)
				return e;
			if (row < 2)
				snprintf(what, sizeof(what), "conn%u_mbps", c.nconn);
			else
				snprintf(what, sizeof(what), "map_%s_conn%u_mbps", lock_name[lk],
					 c.nconn);
			put(ctx, (struct bench_rec){ .experiment = row < 2 ? "conns" : "map",
						     .lock = lock_name[lk], MBPS(r.mbps) }, &c, what);
			bench_say(ctx, " %8.0f", r.mbps);
		}
		bench_say(ctx, "\n");
	}
	return 0;
}

static int ttcp(struct bench_ctx *ctx, const struct opts *o)
{
	char k[64];

	bench_say(ctx, "\nttcp (000): %llu x %d-byte messages, one connection, %u PEs, Mbit/s\n",
		  (unsigned long long)o->ttcp_count, PAYLOAD, o->nproc);
	for (int p = 0; p < 2; p++) {
		const char *pn = p ? "udp" : "tcp";
		double v[2];

		for (int m = 0; m < 2; m++) {
			struct exp_arch_cfg c = {
				.arch = m ? EXP_ARCH_MP : EXP_ARCH_LP,
				.proto = p ? EXP_PROTO_IP_UDP : EXP_PROTO_IP_TCP, .pes = o->nproc,
				.nconn = 1, .lock = ASX_MAP_MUTEX, .payload = PAYLOAD,
				.count = o->ttcp_count, .warmup = warmup(o, o->ttcp_count),
			};
			struct exp_arch_result r;
			int e = measure(o, &c, &r);

			if (e)
				return e;
			v[m] = r.mbps;
			snprintf(k, sizeof(k), "ttcp_%s_%s_mbps", m ? "msg" : "task", pn);
			put(ctx, (struct bench_rec){ .key = k, .experiment = "ttcp",
						     MBPS(r.mbps) }, &c, NULL);
		}
		snprintf(k, sizeof(k), "ttcp_msg_over_task_%s", pn);
		bench_record(ctx, &(struct bench_rec){
			.key = k, .metric = "msg_over_task", .unit = "x", .value = ratio(v[1], v[0]),
			.experiment = "ttcp", .sched = "pthread", .proto = pn, .pes = o->nproc,
			.conns = 1, .size = PAYLOAD });
		bench_say(ctx, "  %s: task-based %8.0f  message-based %8.0f  (%.2fx)\n", pn, v[0],
			  v[1], ratio(v[1], v[0]));
	}
	return 0;
}

/* LP with several threads per layer (001 section 4.3.2), TCP-lite, at the sweep's last PE count. */
static int layer_threads(struct bench_ctx *ctx, const struct opts *o)
{
	struct exp_arch_cfg c = {
		.arch = EXP_ARCH_LP, .proto = EXP_PROTO_IP_TCP, .pes = o->pes[o->npes - 1],
		.nconn = o->pe_conns, .lock = ASX_MAP_MUTEX, .payload = PAYLOAD,
		.count = o->count, .warmup = warmup(o, o->count),
	};
	char what[48];

	bench_say(ctx, "\nLP threads per layer: TCP-lite, %u PEs, %u connections, Mbit/s\n",
		  c.pes, c.nconn);
	for (unsigned int i = 0; i < o->ntpl; i++) {
		struct exp_arch_result r;
		int e;

		c.layer_threads = o->tpl[i];
		e = measure(o, &c, &r);
		if (e)
			return e;
		snprintf(what, sizeof(what), "tpl%u_mbps_pe%u", r.layer_threads, c.pes);
		put(ctx, (struct bench_rec){ .experiment = "layers", .layer_threads = r.layer_threads,
					     MBPS(r.mbps) }, &c, what);
		bench_say(ctx, "  %u per layer (%u threads): %8.0f\n", r.layer_threads, r.threads,
			  r.mbps);
	}
	return 0;
}

static void done(struct bench_ctx *ctx, const char *what, uint64_t t0)
{
	double s = (double)(bench_now_ns() - t0) / 1e9;

	fprintf(stderr, "arch: %s done in %.1f s\n", what, s);
	bench_phase(ctx, what, s);
}

static int bench_arch(struct bench_ctx *ctx, int argc, char **argv)
{
	struct opts o = { .warm_n = -1 };
	uint64_t t;
	int e;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full")) {
			o.full = true;
		} else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) {
			char *end;

			o.warm_n = strtoll(argv[++i], &end, 10);
			if (*end || o.warm_n < 0 || o.warm_n > 10000000) {
				fprintf(stderr, "asx-bench arch: --warmup wants 0..10000000\n");
				return -EINVAL;
			}
		} else {
			fprintf(stderr, "asx-bench arch: unknown option '%s'\n", argv[i]);
			return -EINVAL;
		}
	}
	o.nproc = exp_arch_ncpu();
	if (o.nproc > 64)
		o.nproc = 64;
	for (unsigned int p = 1; p <= o.nproc && o.npes < MAXPES - 3; p++) {
		/* 1..nproc; past 4 CPUs only the powers of two */
		if (p <= 4 || !(p & (p - 1)) || p == o.nproc)
			o.pes[o.npes++] = p;
	}
	o.pes[o.npes++] = 2 * o.nproc;
	o.pes[o.npes++] = 4 * o.nproc;
	if (o.full)
		o.pes[o.npes++] = 8 * o.nproc;
	o.pe_conns = 4 * o.nproc;
	o.warm_frac = o.full ? 0.5 : 0.1;
	o.ntpl = 0;
	for (unsigned int n = 1; n <= 4 && n <= o.pe_conns; n *= 2)
		o.tpl[o.ntpl++] = n;
	if (ctx->quick) {
		o.reps = 1;
		o.count = 200;
		o.conn_count = 200;
		o.ttcp_count = 300;
		o.nconns = 3;
		o.conns[0] = 1, o.conns[1] = 4, o.conns[2] = 16;
	} else if (o.full) {
		o.reps = ctx->runs;
		o.count = 100000;
		o.conn_count = 50000;
		o.ttcp_count = 10000;
		for (unsigned int c = 1; c <= 256; c *= 2)
			o.conns[o.nconns++] = c;
	} else {
		o.reps = ctx->runs < 3 ? ctx->runs : 3;
		o.count = 20000;
		o.conn_count = 20000;
		o.ttcp_count = 5000;
		for (unsigned int c = 1; c <= 32; c *= 2)
			o.conns[o.nconns++] = c;
	}
	bench_record(ctx, &(struct bench_rec){ .key = "arch_nproc", .metric = "nproc",
					       .unit = "CPUs", .value = o.nproc });
	bench_setting(ctx, "warmup", (double)warmup(&o, o.count));
	bench_setting(ctx, "warmup_fraction", o.warm_n >= 0 ? 0 : o.warm_frac);
	bench_say(ctx, "arch: %u CPUs; LP, CP, MP, FP on pthreads and ASC (PRIO, a VP per PE up "
		  "to nproc); %d run(s) per point (median); a warm-up of %llu messages per "
		  "%llu timed\n\n", o.nproc, o.reps, (unsigned long long)warmup(&o, o.count),
		  (unsigned long long)o.count);

	t = bench_now_ns();
	e = pe_sweep(ctx, &o);
	if (e)
		return e;
	ratios(ctx, &o);
	done(ctx, "pes", t);
	t = bench_now_ns();
	e = conn_sweep(ctx, &o);
	if (e)
		return e;
	done(ctx, "conns", t);
	t = bench_now_ns();
	e = ttcp(ctx, &o);
	if (e)
		return e;
	done(ctx, "ttcp", t);
	t = bench_now_ns();
	e = layer_threads(ctx, &o);
	if (e)
		return e;
	done(ctx, "layers", t);
	return 0;
}

BENCH_COMMAND(arch, "arch",
	      "LP vs CP vs MP vs FP over TCP/UDP-lite (+XDR), pthreads and ASC; 000's ttcp experiment",
	      "[--full] [--warmup N]", bench_arch)
