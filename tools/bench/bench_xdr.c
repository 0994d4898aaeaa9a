// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_xdr.c - `asx-bench xdr`: the G/MAX paper's presentation-layer
 * experiment.
 *
 * Records { long; short; char; float; double; opaque[N]; } (24 + N bytes
 * of XDR) for N = 16, 64, 256, 1024, 4096; arrays of up to 1024 records
 * (at most 1 MiB encoded) are encoded into and decoded from a 1 MiB buffer
 * by libasx (the record declared once as a field table), by libtirpc's
 * xdrmem (an rpcgen-style codec: xdr_long, xdr_short, ...), and copied
 * with memcpy (the same number of bytes, buffer to buffer).  Rates are MB/s
 * of encoded bytes (10^6).  Every decode is compared with the source
 * records, and libasx's encoding with libtirpc's, so nothing is skipped.
 *
 * Figures (medians over --runs runs of per-run ratios):
 *   over_tirpc_N   round-trip ratio (libtirpc encode + decode time) /
 *                  (libasx encode + decode time) for the same records
 *   over_memcpy_N  (2 x memcpy time) / (libasx encode + decode time)
 * Then end to end over loopback TCP (the paper's Figure 8), for every N:
 * 8 records per RFC 5531 record, sent at each end of record, libasx's
 * buffered channel against libtirpc's xdrrec, and the paper's raw case:
 * the same 8 C structs written as they are in memory, one write per 8, no
 * presentation at all (e2e_raw_mbs_N).  Every rate is records delivered
 * and checked per second times 24 + N bytes, so the three compare as
 * records; e2e_over_tirpc_N and e2e_over_raw_N are ratios of throughputs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rpc/xdr.h>

#include <asx/xdr.h>
#include "bench.h"

#define BUF_BYTES	(1u << 20)
#define MAX_RECS	1024

/* the paper's class foo, declared once */
#define FOO_FIELDS(X) X(LONG, l) X(SHORT, s) X(CHAR, c) X(FLOAT, f) X(DOUBLE, d) X(OPAQUE, buf)

#define DEFINE_FOO(N)							\
struct foo##N {								\
	long l;								\
	short s;							\
	char c;								\
	float f;							\
	double d;							\
	unsigned char buf[N];						\
};									\
ASX_XDR_DEFINE(foo##N, struct foo##N, FOO_FIELDS)			\
static int enc##N(struct asx_xdr *x, const void *v, size_t n)		\
{									\
	return foo##N##_xdr_encode(x, v, n);				\
}									\
static int dec##N(struct asx_xdr *x, void *v, size_t n)			\
{									\
	return foo##N##_xdr_decode(x, v, n);				\
}									\
static bool_t tirpc_foo##N(XDR *x, struct foo##N *v)			\
{									\
	return xdr_long(x, &v->l) && xdr_short(x, &v->s) &&		\
	       xdr_char(x, &v->c) && xdr_float(x, &v->f) &&		\
	       xdr_double(x, &v->d) && xdr_opaque(x, (char *)v->buf, N); \
}									\
static bool tirpc_loop##N(XDR *x, void *recs, size_t n)			\
{									\
	struct foo##N *r = recs;					\
	size_t i;							\
									\
	for (i = 0; i < n; i++)						\
		if (!tirpc_foo##N(x, &r[i]))				\
			return false;					\
	return true;							\
}

DEFINE_FOO(16)
DEFINE_FOO(64)
DEFINE_FOO(256)
DEFINE_FOO(1024)
DEFINE_FOO(4096)

struct variant {
	size_t n;		/* opaque bytes */
	size_t size;		/* sizeof the C struct */
	const struct asx_xdr_record *(*rec)(void);
	int (*enc)(struct asx_xdr *x, const void *v, size_t n);
	int (*dec)(struct asx_xdr *x, void *v, size_t n);
	bool (*tirpc)(XDR *x, void *recs, size_t n);
	bool_t (*tirpc_one)(XDR *x, void *rec);
};

#define VARIANT(N) { N, sizeof(struct foo##N), foo##N##_xdr_record, enc##N, dec##N, tirpc_loop##N, \
		     (bool_t (*)(XDR *, void *))tirpc_foo##N }

static const struct variant variants[] = {
	VARIANT(16), VARIANT(64), VARIANT(256), VARIANT(1024), VARIANT(4096),
};

/* The leading fields of every foo##N are laid out alike. */
struct foo_head {
	long l;
	short s;
	char c;
	float f;
	double d;
	unsigned char buf[];
};

static void fill_records(const struct variant *v, void *recs, size_t n, unsigned int seed)
{
	size_t i, k;

	memset(recs, 0, v->size * n);	/* struct padding compares equal */
	for (i = 0; i < n; i++) {
		struct foo_head *h = (struct foo_head *)((char *)recs + i * v->size);

		/* non-negative: libtirpc's xdr_long zero-extends on decode (LP64) */
		h->l = (long)((0x9e3779b9u * (uint32_t)(i + seed)) >> 1);
		h->s = (short)(i * 7 - 3000);
		h->c = (char)(i * 13);
		h->f = (float)i * 0.5f - 100.0f;
		h->d = (double)i * -1.25e10 + seed;
		for (k = 0; k < v->n; k++)
			h->buf[k] = (unsigned char)(i * 31 + k + seed);
	}
}

static unsigned char *buf_a, *buf_b;
static void *src_recs, *dst_recs;
static volatile unsigned char sink;

enum { OURS_ENC, TIRPC_ENC, MEMCPY, OURS_DEC, TIRPC_DEC, TAB_ENC, TAB_DEC, NOPS };

/* @table: the interpreted field table (asx_xdr_records) instead of the
 * generated inline codec */
static size_t ours_enc(const struct variant *v, size_t n, bool table)
{
	struct asx_xdr x;

	asx_xdr_mem_encoder(&x, buf_a, BUF_BYTES);
	if (table ? asx_xdr_records(&x, v->rec(), src_recs, n) : v->enc(&x, src_recs, n))
		return 0;
	return (size_t)asx_xdr_pos(&x);
}

static size_t ours_dec(const struct variant *v, size_t n, size_t bytes, bool table)
{
	struct asx_xdr x;

	asx_xdr_mem_decoder(&x, buf_a, bytes);
	if (table ? asx_xdr_records(&x, v->rec(), dst_recs, n) : v->dec(&x, dst_recs, n))
		return 0;
	return (size_t)asx_xdr_pos(&x);
}

static size_t tirpc_run(const struct variant *v, size_t n, enum xdr_op op, void *recs,
			unsigned char *buf)
{
	XDR x;
	size_t pos;

	xdrmem_create(&x, (char *)buf, BUF_BYTES, op);
	if (!v->tirpc(&x, recs, n))
		return 0;
	pos = xdr_getpos(&x);
	xdr_destroy(&x);
	return pos;
}

/* Run op @k times; nanoseconds; 0 if a result was wrong. */
static uint64_t timed(int op, const struct variant *v, size_t n, size_t bytes, unsigned long k)
{
	uint64_t t0 = bench_now_ns();
	unsigned long i;
	size_t got = 0;

	for (i = 0; i < k; i++) {
		switch (op) {
		case OURS_ENC: got = ours_enc(v, n, false); break;
		case TAB_ENC: got = ours_enc(v, n, true); break;
		case TAB_DEC: got = ours_dec(v, n, bytes, true); break;
		case TIRPC_ENC: got = tirpc_run(v, n, XDR_ENCODE, src_recs, buf_b); break;
		case MEMCPY: memcpy(buf_b, buf_a, bytes); got = bytes; break;
		case OURS_DEC: got = ours_dec(v, n, bytes, false); break;
		case TIRPC_DEC: got = tirpc_run(v, n, XDR_DECODE, dst_recs, buf_b); break;
		}
		if (got != bytes)
			return 0;
	}
	t0 = bench_now_ns() - t0;
	sink = buf_b[bytes - 1];
	return t0 ? t0 : 1;
}

static bool decoded_ok(const struct variant *v, size_t n)
{
	bool ok = !memcmp(src_recs, dst_recs, v->size * n);

	memset(dst_recs, 0, v->size * n);
	return ok;
}

/*
 * A record of @experiment ("memory", "bulk", "e2e"): @metric of @impl
 * ("ours", "table", "tirpc", "memcpy", "simd", "scalar"; NULL for a
 * ratio) at foo's opaque of @n bytes (0: none), over the @nruns runs.
 */
static void put(struct bench_ctx *ctx, const char *key, const char *experiment,
		const char *impl, const char *metric, size_t n, double *runs, size_t nruns,
		const char *unit)
{
	bench_record(ctx, &(struct bench_rec){
		.key = key, .experiment = experiment, .impl = impl, .metric = metric, .size = n,
		.value = bench_median(runs, nruns), .runs = runs, .nruns = nruns,
		.unit = unit });
}

static int run_memory(struct bench_ctx *ctx)
{
	static const char *names[NOPS] = { "ours enc", "tirpc enc", "memcpy", "ours dec",
					   "tirpc dec", "table enc", "table dec" };
	int runs = ctx->runs, r, op;
	unsigned int vi;
	char key[64];

	bench_say(ctx, "XDR memory codec: records {long,short,char,float,double,opaque[N]}, "
		  "<=1024 per array in a 1 MiB buffer\n");
	bench_say(ctx, "MB/s of encoded bytes, medians of %d runs; ratios are medians of per-run\n"
		  "round-trip ratios: tirpc = (tirpc enc+dec time)/(ours enc+dec time),\n"
		  "memcpy = (2 x memcpy time)/(ours enc+dec time).  Bulk swap: %s\n\n",
		  runs, asx_xdr_set_simd(1) ? "AVX2" : "scalar");
	bench_say(ctx, "ours = ASX_XDR_DEFINE inline codec; table = the same declaration's field\n"
		  "table interpreted by asx_xdr_records() (x table-tirpc: its round-trip ratio)\n\n");
	bench_say(ctx, "%6s %5s %9s %9s %9s %9s %9s %9s %9s | %7s %8s %7s\n", "N", "recs",
		  "ours-enc", "ours-dec", "table-enc", "table-dec", "tirpc-enc", "tirpc-dec",
		  "memcpy", "x tirpc", "x memcpy", "x table");
	for (vi = 0; vi < sizeof(variants) / sizeof(variants[0]); vi++) {
		const struct variant *v = &variants[vi];
		size_t wire = 24 + v->n, n = BUF_BYTES / wire, bytes;
		double rate[NOPS][1000], rt[1000], rm[1000], rtab[1000], med[NOPS];
		uint64_t target = ctx->quick ? 2000000 : 20000000;
		unsigned long k;

		if (n > MAX_RECS)
			n = MAX_RECS;
		bytes = n * wire;
		fill_records(v, src_recs, n, vi + 1);
		memset(dst_recs, 0, v->size * n);
		/* correctness: same bytes as libtirpc, decode gives the source back */
		if (ours_enc(v, n, true) != bytes || tirpc_run(v, n, XDR_ENCODE, src_recs, buf_b) != bytes ||
		    memcmp(buf_a, buf_b, bytes) || ours_enc(v, n, false) != bytes ||
		    memcmp(buf_a, buf_b, bytes)) {
			fprintf(stderr, "asx-bench xdr: N=%zu: encodings differ from libtirpc\n", v->n);
			return 1;
		}
		if (ours_dec(v, n, bytes, false) != bytes || !decoded_ok(v, n) ||
		    ours_dec(v, n, bytes, true) != bytes || !decoded_ok(v, n) ||
		    tirpc_run(v, n, XDR_DECODE, dst_recs, buf_b) != bytes || !decoded_ok(v, n)) {
			fprintf(stderr, "asx-bench xdr: N=%zu: decode mismatch\n", v->n);
			return 1;
		}
		/* calibrate on the slowest (libtirpc encode) */
		for (k = 1;; k *= 2) {
			uint64_t t = timed(TIRPC_ENC, v, n, bytes, k);

			if (t >= target / 4 || k > (1ul << 24))
				break;
		}
		for (r = 0; r < runs; r++) {
			uint64_t t[NOPS];

			for (op = 0; op < NOPS; op++) {
				t[op] = timed(op, v, n, bytes, k);
				if (!t[op]) {
					fprintf(stderr, "asx-bench xdr: N=%zu: %s failed\n", v->n,
						names[op]);
					return 1;
				}
				if ((op == OURS_DEC || op == TIRPC_DEC || op == TAB_DEC) &&
				    !decoded_ok(v, n)) {
					fprintf(stderr, "asx-bench xdr: N=%zu: %s output differs\n",
						v->n, names[op]);
					return 1;
				}
				rate[op][r] = (double)bytes * k / (double)t[op] * 1e3;
			}
			rt[r] = (double)(t[TIRPC_ENC] + t[TIRPC_DEC]) / (double)(t[OURS_ENC] + t[OURS_DEC]);
			rm[r] = 2.0 * (double)t[MEMCPY] / (double)(t[OURS_ENC] + t[OURS_DEC]);
			rtab[r] = (double)(t[TIRPC_ENC] + t[TIRPC_DEC]) / (double)(t[TAB_ENC] + t[TAB_DEC]);
		}
		for (op = 0; op < NOPS; op++)
			med[op] = bench_median(rate[op], (size_t)runs);
		bench_say(ctx, "%6zu %5zu %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f | %7.2f %8.2f %7.2f\n",
			  v->n, n, med[OURS_ENC], med[OURS_DEC], med[TAB_ENC], med[TAB_DEC],
			  med[TIRPC_ENC], med[TIRPC_DEC], med[MEMCPY], bench_median(rt, (size_t)runs),
			  bench_median(rm, (size_t)runs), bench_median(rtab, (size_t)runs));
#define PUT(k, impl, metric, r, unit) do {					\
		snprintf(key, sizeof(key), k "_%zu", v->n);				\
		put(ctx, key, "memory", impl, metric, v->n, r, (size_t)runs, unit);	\
	} while (0)
		PUT("table_over_tirpc", "table", "over_tirpc", rtab, "x");
		PUT("ours_enc_mbs", "ours", "enc_mbs", rate[OURS_ENC], "MB/s");
		PUT("ours_dec_mbs", "ours", "dec_mbs", rate[OURS_DEC], "MB/s");
		PUT("tirpc_enc_mbs", "tirpc", "enc_mbs", rate[TIRPC_ENC], "MB/s");
		PUT("tirpc_dec_mbs", "tirpc", "dec_mbs", rate[TIRPC_DEC], "MB/s");
		PUT("memcpy_mbs", "memcpy", "mbs", rate[MEMCPY], "MB/s");
		PUT("over_tirpc", "ours", "over_tirpc", rt, "x");
		PUT("over_memcpy", "ours", "over_memcpy", rm, "x");
#undef PUT
	}
	return 0;
}

/* ---- bulk arrays: int32 vector, AVX2 vs scalar vs libtirpc xdr_vector ---- */

static int run_bulk(struct bench_ctx *ctx)
{
	const size_t n = 64 * 1024;	/* 256 KiB */
	unsigned long k = ctx->quick ? 20 : 200, i;
	double simd[1000], scal[1000], tir[1000];
	int32_t *src = (int32_t *)src_recs, *dst = (int32_t *)dst_recs;
	int r, had = asx_xdr_set_simd(1);

	for (i = 0; i < n; i++)
		src[i] = (int32_t)(i * 2654435761u);
	for (r = 0; r < ctx->runs; r++) {
		int mode;

		for (mode = 0; mode < 3; mode++) {
			uint64_t t0 = bench_now_ns();
			unsigned long j;

			if (mode < 2)
				asx_xdr_set_simd(mode == 0);
			for (j = 0; j < k; j++) {
				struct asx_xdr x;
				XDR tx;

				if (mode < 2) {
					asx_xdr_mem_encoder(&x, buf_a, BUF_BYTES);
					asx_xdr_put_i32_array(&x, src, n);
					asx_xdr_mem_decoder(&x, buf_a, n * 4);
					if (asx_xdr_get_i32_array(&x, dst, n))
						return 1;
				} else {
					xdrmem_create(&tx, (char *)buf_a, BUF_BYTES, XDR_ENCODE);
					xdr_vector(&tx, (char *)src, (u_int)n, sizeof(int), (xdrproc_t)xdr_int);
					xdrmem_create(&tx, (char *)buf_a, BUF_BYTES, XDR_DECODE);
					if (!xdr_vector(&tx, (char *)dst, (u_int)n, sizeof(int),
							(xdrproc_t)xdr_int))
						return 1;
				}
			}
			t0 = bench_now_ns() - t0;
			if (memcmp(src, dst, n * 4)) {
				fprintf(stderr, "asx-bench xdr: bulk array mismatch\n");
				return 1;
			}
			memset(dst, 0, n * 4);
			(mode == 0 ? simd : mode == 1 ? scal : tir)[r] =
				2.0 * (double)(n * 4) * k / (double)t0 * 1e3;
		}
	}
	asx_xdr_set_simd(had);
	bench_say(ctx, "\nBulk int32 array (256 KiB, encode+decode, MB/s): AVX2 %.0f, scalar %.0f, "
		  "libtirpc xdr_vector %.0f%s\n", bench_median(simd, (size_t)ctx->runs),
		  bench_median(scal, (size_t)ctx->runs), bench_median(tir, (size_t)ctx->runs),
		  had ? "" : " (no AVX2: both rows scalar)");
	put(ctx, "bulk_i32_simd_mbs", "bulk", "simd", "i32_mbs", 0, simd, (size_t)ctx->runs,
	    "MB/s");
	put(ctx, "bulk_i32_scalar_mbs", "bulk", "scalar", "i32_mbs", 0, scal, (size_t)ctx->runs,
	    "MB/s");
	put(ctx, "bulk_i32_tirpc_mbs", "bulk", "tirpc", "i32_mbs", 0, tir, (size_t)ctx->runs,
	    "MB/s");
	return 0;
}

/* ---- end to end over loopback TCP ---- */

#define BATCH 8

enum e2e_impl { E2E_OURS, E2E_TIRPC, E2E_RAW };

struct e2e {
	const struct variant *v;
	int fd;
	enum e2e_impl impl;
	size_t batches;
	int err;
};

static int rec_write(void *h, void *buf, int n)
{
	const char *p = buf;
	int left = n;

	while (left > 0) {
		ssize_t w = write(*(int *)h, p, (size_t)left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		left -= (int)w;
	}
	return n;
}

static int rec_read(void *h, void *buf, int n)
{
	ssize_t r;

	do
		r = read(*(int *)h, buf, (size_t)n);
	while (r < 0 && errno == EINTR);
	return r <= 0 ? -1 : (int)r;
}

static void *e2e_sender(void *arg)
{
	struct e2e *e = arg;
	const struct variant *v = e->v;
	size_t b;

	if (e->impl == E2E_RAW) {
		for (b = 0; b < e->batches; b++) {
			void *recs = (char *)src_recs + (b % (MAX_RECS / BATCH)) * BATCH * v->size;

			if (rec_write(&e->fd, recs, (int)(BATCH * v->size)) < 0) {
				e->err = 1;
				break;
			}
		}
	} else if (e->impl == E2E_OURS) {
		struct asx_xdr_chan *c = NULL;

		(void)asx_xdr_chan_create(&c, e->fd, NULL);

		for (b = 0; c && b < e->batches; b++) {
			void *recs = (char *)src_recs + (b % (MAX_RECS / BATCH)) * BATCH * v->size;

			if (v->enc(asx_xdr_chan_out(c), recs, BATCH) ||
			    asx_xdr_chan_end_record(c, true)) {
				e->err = 1;
				break;
			}
		}
		if (!c)
			e->err = 1;
		asx_xdr_chan_destroy(c);
	} else {
		XDR x;

		xdrrec_create(&x, 65536, 65536, (char *)&e->fd, rec_read, rec_write);
		x.x_op = XDR_ENCODE;
		for (b = 0; b < e->batches; b++) {
			void *recs = (char *)src_recs + (b % (MAX_RECS / BATCH)) * BATCH * v->size;

			if (!v->tirpc(&x, recs, BATCH) || !xdrrec_endofrecord(&x, TRUE)) {
				e->err = 1;
				break;
			}
		}
		xdr_destroy(&x);
	}
	shutdown(e->fd, SHUT_WR);
	return NULL;
}

/* Read exactly @n bytes into @buf: true, or false at EOF or an error. */
static bool read_n(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		int r = rec_read(&fd, p, n > 65536 ? 65536 : (int)n);

		if (r < 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

/* Receive and check; returns MB/s or 0 on failure. */
static double e2e_run(const struct variant *v, enum e2e_impl impl, size_t batches, int lfd)
{
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	struct e2e e = { .v = v, .impl = impl, .batches = batches };
	pthread_t th;
	uint64_t t0;
	size_t b, got = 0;
	int cfd, one = 1;
	bool ok = true;

	getsockname(lfd, (struct sockaddr *)&a, &al);
	e.fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(e.fd, (struct sockaddr *)&a, al))
		return 0;
	cfd = accept(lfd, NULL, NULL);
	if (cfd < 0)
		return 0;
	setsockopt(e.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	t0 = bench_now_ns();
	pthread_create(&th, NULL, e2e_sender, &e);
	if (impl == E2E_RAW) {
		char end;

		for (b = 0; ok && b < batches; b++) {
			void *recs = (char *)src_recs + (b % (MAX_RECS / BATCH)) * BATCH * v->size;

			ok = read_n(cfd, dst_recs, BATCH * v->size) &&
			     !memcmp(dst_recs, recs, BATCH * v->size);
			got++;
		}
		ok = ok && rec_read(&cfd, &end, 1) < 0;	/* nothing more: EOF */
	} else if (impl == E2E_OURS) {
		struct asx_xdr_chan *c = NULL;

		(void)asx_xdr_chan_create(&c, cfd, NULL);

		for (b = 0; ok && b < batches; b++) {
			void *recs = (char *)src_recs + (b % (MAX_RECS / BATCH)) * BATCH * v->size;

			ok = asx_xdr_chan_next_record(c) == 1 &&
			     !v->dec(asx_xdr_chan_in(c), dst_recs, BATCH) &&
			     !memcmp(dst_recs, recs, BATCH * v->size);
			got++;
		}
		ok = ok && asx_xdr_chan_next_record(c) == 0;
		asx_xdr_chan_destroy(c);
	} else {
		XDR x;

		xdrrec_create(&x, 65536, 65536, (char *)&cfd, rec_read, rec_write);
		x.x_op = XDR_DECODE;
		for (b = 0; ok && b < batches; b++) {
			void *recs = (char *)src_recs + (b % (MAX_RECS / BATCH)) * BATCH * v->size;

			ok = xdrrec_skiprecord(&x) && v->tirpc(&x, dst_recs, BATCH) &&
			     !memcmp(dst_recs, recs, BATCH * v->size);
			got++;
		}
		xdr_destroy(&x);
	}
	close(cfd);	/* a failed receiver must not leave the sender blocked */
	pthread_join(th, NULL);
	t0 = bench_now_ns() - t0;
	close(e.fd);
	if (!ok || e.err || got != batches)
		return 0;
	return (double)(batches * BATCH * (24 + v->n)) / (double)t0 * 1e3;
}

static int run_e2e(struct bench_ctx *ctx)
{
	static const char *const impl_name[] = { "ours", "tirpc", "raw" };
	struct sockaddr_in a = { .sin_family = AF_INET };
	/* bytes of records per run and implementation */
	size_t total = ctx->quick ? (2u << 20) : ctx->full ? (64u << 20) : (16u << 20);
	int lfd, r, k;
	unsigned int i;
	char key[64];

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 4)) {
		fprintf(stderr, "asx-bench xdr: loopback socket: %s\n", strerror(errno));
		return 1;
	}
	bench_say(ctx, "\nEnd to end over loopback TCP: %d records per RFC 5531 record, each "
		  "record sent at once (TCP_NODELAY); raw: the %d C structs written as they are,\n"
		  "no presentation.  MB/s of records (records/s x (24 + N)), medians of %d runs, "
		  "%zu MiB each\n", BATCH, BATCH, ctx->runs, total >> 20);
	bench_say(ctx, "%6s %12s %12s %10s %8s %8s\n", "N", "asx chan", "tirpc xdrrec", "raw",
		  "x tirpc", "x raw");
	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		const struct variant *v = &variants[i];
		size_t batches = total / (BATCH * (24 + v->n));
		double rate[3][1000], ratio[1000], of_raw[1000], med[3];

		fill_records(v, src_recs, MAX_RECS, 7);
		/* struct padding is never decoded: start from the same zeros */
		memset(dst_recs, 0, MAX_RECS * sizeof(struct foo4096));
		for (r = 0; r < ctx->runs; r++) {
			/* the order turns each run: a slow spell hits each alike */
			for (k = 0; k < 3; k++) {
				int m = (k + r) % 3;

				rate[m][r] = e2e_run(v, (enum e2e_impl)m, batches, lfd);
				if (rate[m][r] == 0) {
					fprintf(stderr, "asx-bench xdr: end-to-end N=%zu failed (%s)\n",
						v->n, impl_name[m]);
					close(lfd);
					return 1;
				}
			}
			ratio[r] = rate[E2E_OURS][r] / rate[E2E_TIRPC][r];
			of_raw[r] = rate[E2E_OURS][r] / rate[E2E_RAW][r];
		}
		/* the runs stay in their order (the records' runs); medians of copies */
		for (k = 0; k < 3; k++) {
			double tmp[1000];

			memcpy(tmp, rate[k], sizeof(double) * (size_t)ctx->runs);
			med[k] = bench_median(tmp, (size_t)ctx->runs);
		}
		bench_say(ctx, "%6zu %12.0f %12.0f %10.0f %8.2f %8.2f\n", v->n, med[E2E_OURS],
			  med[E2E_TIRPC], med[E2E_RAW], bench_median(ratio, (size_t)ctx->runs),
			  bench_median(of_raw, (size_t)ctx->runs));
		for (k = 0; k < 3; k++) {
			snprintf(key, sizeof(key), "e2e_%s_mbs_%zu", impl_name[k], v->n);
			put(ctx, key, "e2e", impl_name[k], "mbs", v->n, rate[k], (size_t)ctx->runs,
			    "MB/s");
		}
		snprintf(key, sizeof(key), "e2e_over_tirpc_%zu", v->n);
		put(ctx, key, "e2e", "ours", "over_tirpc", v->n, ratio, (size_t)ctx->runs, "x");
		snprintf(key, sizeof(key), "e2e_over_raw_%zu", v->n);
		put(ctx, key, "e2e", "ours", "over_raw", v->n, of_raw, (size_t)ctx->runs, "x");
	}
	close(lfd);
	return 0;
}

static int bench_xdr(struct bench_ctx *ctx, int argc, char **argv)
{
	int ret = 1;

	if (argc > 1) {
		fprintf(stderr, "asx-bench xdr: no options\n");
		return 2;
	}
	if (ctx->runs > 1000)
		ctx->runs = 1000;
	buf_a = aligned_alloc(64, BUF_BYTES);
	buf_b = aligned_alloc(64, BUF_BYTES);
	/* 1024 records of the largest type */
	src_recs = aligned_alloc(64, MAX_RECS * sizeof(struct foo4096));
	dst_recs = aligned_alloc(64, MAX_RECS * sizeof(struct foo4096));
	if (!buf_a || !buf_b || !src_recs || !dst_recs) {
		fprintf(stderr, "asx-bench xdr: out of memory\n");
		goto out;
	}
	memset(buf_a, 0, BUF_BYTES);
	memset(buf_b, 0, BUF_BYTES);
	ret = run_memory(ctx);
	if (!ret)
		ret = run_bulk(ctx);
	if (!ret)
		ret = run_e2e(ctx);
out:
	free(buf_a);
	free(buf_b);
	free(src_recs);
	free(dst_recs);
	return ret;
}

BENCH_COMMAND(xdr, "xdr", "XDR codec vs libtirpc and memcpy; buffered channel vs xdrrec (G/MAX)",
	      NULL, bench_xdr)
