// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_kstream.c - `asx-bench kstream`: bytes through a kernel Stream of
 * /dev/asx (loop driver) with 0, 1 and 4 `pass` modules pushed, beside a
 * Linux pipe, in the same run.
 *
 * One thread writes a batch of messages (32 KB of 4 KB writes, or 4 KB of
 * 64 B writes: below every high water mark, so nothing blocks), then reads
 * them back with reads of the same size, and again, until the total is
 * moved. The data is checked. The contenders take turns in 16 slices per
 * run, so a change in the machine's load hits them alike (the VM shares
 * its host). Then the mux and peek/poll rows (bench_kstream_mux.c). Needs
 * asx.ko, so it runs in the test VM
 * (tools/vm/asx-vm build/bin/asx-bench kstream); without /dev/asx it says so
 * and reports nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/kstream.h>
#include <asx/stream.h>
#include "bench.h"

#define BATCH_BYTES_4K	(32 * 1024)
#define BATCH_BYTES_64	4096

enum { PIPE_, ASX0, ASX1, ASX4, NCONT };

static const char *const cont_name[NCONT] = { "pipe", "asx0", "asx1", "asx4" };
static const int cont_mods[NCONT] = { 0, 0, 1, 4 };

static int push_pass(struct asx_kstream *ks, int n)
{
	int r = 0;

	while (n-- && !r)
		r = asx_kstream_push(ks, "pass");
	return r;
}

#define SLICES	16

/* Moves @total bytes through wfd -> rfd in @size writes; adds the time to *ns. */
static int pump(int wfd, int rfd, size_t size, uint64_t total, uint64_t *ns)
{
	size_t batch = (size >= 4096 ? BATCH_BYTES_4K : BATCH_BYTES_64) / size, i;
	unsigned char *wbuf, *rbuf;
	uint64_t moved = 0, t0;
	unsigned int seq = 0;
	int ret = 0;

	wbuf = malloc(size);
	rbuf = malloc(size);
	if (!wbuf || !rbuf) {
		ret = -ENOMEM;
		goto out;
	}
	memset(wbuf, 0x5a, size);
	t0 = bench_now_ns();
	while (moved < total) {
		for (i = 0; i < batch; i++) {
			wbuf[0] = (unsigned char)(seq + i);
			if (write(wfd, wbuf, size) != (ssize_t)size) {
				ret = -errno;
				goto out;
			}
		}
		for (i = 0; i < batch; i++) {
			if (read(rfd, rbuf, size) != (ssize_t)size) {
				ret = errno ? -errno : -EIO;
				goto out;
			}
			if (rbuf[0] != (unsigned char)(seq + i) || rbuf[size - 1] != 0x5a) {
				ret = -EBADMSG;
				goto out;
			}
		}
		seq += batch;
		moved += batch * size;
	}
	*ns += bench_now_ns() - t0;
out:
	free(wbuf);
	free(rbuf);
	return ret;
}

/* Opens contender @c: its write and read descriptors. */
static int open_cont(int c, int fds[2])
{
	struct asx_kstream *ks;
	int p[2], ret;

	if (c == PIPE_) {
		if (pipe(p))
			return -errno;
		fds[0] = p[1];
		fds[1] = p[0];
		return 0;
	}
	ret = asx_kstream_open(&ks, NULL, 0);
	if (ret)
		return ret;
	ret = push_pass(ks, cont_mods[c]);
	if (ret) {
		asx_kstream_close(ks);
		return ret;
	}
	fds[0] = fds[1] = asx_kstream_detach(ks);
	return 0;
}

static void close_cont(int fds[2])
{
	close(fds[0]);
	if (fds[1] != fds[0])
		close(fds[1]);
}

/* One run at one write size: every contender, in turns; MB/s in mbps[c]. */
static int run_size(int run, size_t size, uint64_t total, double mbps[NCONT])
{
	int fds[NCONT][2], c, k, j, ret = 0, opened = 0;
	uint64_t ns[NCONT] = { 0 };

	for (c = 0; c < NCONT; c++, opened++) {
		ret = open_cont(c, fds[c]);
		if (ret)
			goto out;
	}
	for (j = 0; j < SLICES && !ret; j++) {
		for (k = 0; k < NCONT && !ret; k++) {
			c = (k + j + run) % NCONT;
			ret = pump(fds[c][0], fds[c][1], size, total / SLICES, &ns[c]);
			if (ret)
				fprintf(stderr, "asx-bench kstream: %s, %zu B: %s\n", cont_name[c],
					size, strerror(-ret));
		}
	}
	for (c = 0; c < NCONT; c++)
		mbps[c] = ns[c] ? (double)(total / SLICES * SLICES) / (ns[c] / 1e3) : 0;
out:
	while (opened--)
		close_cont(fds[opened]);
	return ret;
}

/* ---------------------------------------------------------------- span */

#define SPAN_SIZE	4096

struct span_writer {
	struct asx_stream *s;	/* the spanning Stream, or NULL: the pipe */
	int wfd;
	uint64_t n;
	int ret;
};

static void *span_write(void *arg)
{
	struct span_writer *w = arg;
	static unsigned char buf[SPAN_SIZE];
	struct asx_msg *m;

	for (uint64_t i = 0; i < w->n; i++) {
		if (!w->s) {
			buf[0] = (unsigned char)i;
			if (write(w->wfd, buf, SPAN_SIZE) != SPAN_SIZE) {
				w->ret = -errno;
				return NULL;
			}
			continue;
		}
		m = asx_msg_alloc(SPAN_SIZE, ASX_MSG_DATA);
		if (!m) {
			w->ret = -ENOMEM;
			return NULL;
		}
		asx_msg_append(m, buf, SPAN_SIZE);
		m->rd[0] = (unsigned char)i;
		w->ret = asx_stream_put(w->s, m, 0, NULL);
		if (w->ret) {
			asx_msg_free_chain(m);
			return NULL;
		}
	}
	return NULL;
}

/* Reads @n 4 KB messages (or pipe reads), checking their order. */
static int span_read(struct asx_stream *s, int rfd, uint64_t n)
{
	unsigned char buf[SPAN_SIZE];
	struct timespec dl;
	struct asx_msg *m;
	size_t got;
	ssize_t r;
	int ret;

	for (uint64_t i = 0; i < n; i++) {
		if (!s) {
			for (got = 0; got < SPAN_SIZE; got += (size_t)r) {
				r = read(rfd, buf + got, SPAN_SIZE - got);
				if (r <= 0)
					return r ? -errno : -EPIPE;
			}
			if (buf[0] != (unsigned char)i)
				return -EBADMSG;
			continue;
		}
		ret = asx_stream_get(s, &m, 0, asx_deadline(&dl, 30 * ASX_NSEC_PER_SEC));
		if (ret)
			return ret;
		ret = asx_msg_length(m) != SPAN_SIZE || m->rd[0] != (unsigned char)i ? -EBADMSG : 0;
		asx_msg_free_chain(m);
		if (ret)
			return ret;
	}
	return 0;
}

/* One run of the span row: MB/s of the spanning Stream and of the pipe. */
static int span_run(uint64_t total, double *span_mbps, double *pipe_mbps)
{
	struct span_writer w = { .n = total / SPAN_SIZE };
	struct asx_module *drv = NULL;
	struct asx_kstream *ks;
	pthread_t t;
	uint64_t t0, ns;
	int p[2], ret;

	ret = asx_kstream_open(&ks, NULL, 0);
	if (ret)
		return ret;
	ret = asx_kstream_driver(&drv, NULL, ks, ASX_DRIVER_OWN);
	if (ret) {
		asx_kstream_close(ks);
		return ret;
	}
	{
		ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER, .driver = drv);

		ret = asx_stream_open(&w.s, &o);
	}
	if (ret) {
		asx_module_destroy(drv);
		return ret;
	}
	t0 = bench_now_ns();
	ret = -pthread_create(&t, NULL, span_write, &w);
	if (!ret) {
		ret = span_read(w.s, -1, w.n);
		if (ret)
			asx_stream_shutdown(w.s);
		pthread_join(t, NULL);
		ret = ret ? ret : w.ret;
	}
	ns = bench_now_ns() - t0;
	asx_stream_close(w.s);
	if (ret)
		return ret;
	*span_mbps = (double)(w.n * SPAN_SIZE) / (ns / 1e3);

	if (pipe(p))
		return -errno;
	w.s = NULL;
	w.wfd = p[1];
	w.ret = 0;
	t0 = bench_now_ns();
	ret = -pthread_create(&t, NULL, span_write, &w);
	if (!ret) {
		ret = span_read(NULL, p[0], w.n);
		if (ret)
			close(p[0]);
		pthread_join(t, NULL);
		ret = ret ? ret : w.ret;
	}
	ns = bench_now_ns() - t0;
	close(p[1]);
	if (!ret)
		close(p[0]);
	*pipe_mbps = (double)(w.n * SPAN_SIZE) / (ns / 1e3);
	return ret;
}

static int bench_kstream(struct bench_ctx *ctx, int argc, char **argv)
{
	static const size_t sizes[2] = { 4096, 64 };
	double *res[2][NCONT], med[2][NCONT], mbps[NCONT], *span[2] = { NULL, NULL };
	uint64_t total[2], span_total;
	char key[64];
	int opt, s, c, i, ret = 0;

	total[0] = ctx->quick ? (16ULL << 20) : (256ULL << 20);
	total[1] = ctx->quick ? (1ULL << 20) : (16ULL << 20);
	while ((opt = getopt(argc, argv, "m:")) != -1) {
		switch (opt) {
		case 'm':
			total[0] = strtoull(optarg, NULL, 0) << 20;
			total[1] = total[0] / 16;
			break;
		default:
			return -EINVAL;
		}
	}
	if (!total[1])
		return -EINVAL;
	span_total = total[0] / 4;
	if (access("/dev/asx", R_OK | W_OK)) {
		fprintf(stderr, "asx-bench kstream: /dev/asx: %s; run it in the test VM "
			"(tools/vm/asx-vm build/bin/asx-bench kstream); skipped\n", strerror(errno));
		return 0;
	}
	memset(res, 0, sizeof(res));
	for (s = 0; s < 2; s++)
		for (c = 0; c < NCONT; c++) {
			res[s][c] = calloc((size_t)ctx->runs, sizeof(double));
			if (!res[s][c]) {
				ret = -ENOMEM;
				goto out;
			}
		}
	for (s = 0; s < 2; s++) {
		span[s] = calloc((size_t)ctx->runs, sizeof(double));
		if (!span[s]) {
			ret = -ENOMEM;
			goto out;
		}
	}

	bench_say(ctx, "kstream: write a batch then read it back, one thread; %llu MB in 4 KB "
		  "and %llu MB in 64 B writes; loop Stream with 0/1/4 pass modules vs a pipe; "
		  "%d runs\n", (unsigned long long)(total[0] >> 20),
		  (unsigned long long)(total[1] >> 20), ctx->runs);
	bench_say(ctx, "%4s %6s %12s %12s %12s %12s\n", "run", "write", "pipe MB/s",
		  "asx0 MB/s", "asx1 MB/s", "asx4 MB/s");
	for (i = 0; i < ctx->runs; i++) {
		for (s = 0; s < 2; s++) {
			ret = run_size(i, sizes[s], total[s], mbps);
			if (ret)
				goto out;
			for (c = 0; c < NCONT; c++)
				res[s][c][i] = mbps[c];
			bench_say(ctx, "%4d %6zu %12.1f %12.1f %12.1f %12.1f\n", i + 1, sizes[s],
				  res[s][PIPE_][i], res[s][ASX0][i], res[s][ASX1][i],
				  res[s][ASX4][i]);
		}
	}
	bench_say(ctx, "span: a user-space Stream over a kernel loop Stream (asx_kstream_driver), "
		  "writer thread and reader, %llu MB in 4 KB messages, vs a pipe with the same two "
		  "threads\n", (unsigned long long)(span_total >> 20));
	bench_say(ctx, "%4s %6s %12s %12s\n", "run", "row", "span MB/s", "pipe MB/s");
	for (i = 0; i < ctx->runs; i++) {
		ret = span_run(span_total, &span[0][i], &span[1][i]);
		if (ret) {
			fprintf(stderr, "asx-bench kstream: span: %s\n", strerror(-ret));
			goto out;
		}
		bench_say(ctx, "%4d %6s %12.1f %12.1f\n", i + 1, "span", span[0][i], span[1][i]);
	}
	for (s = 0; s < 2; s++)
		for (c = 0; c < NCONT; c++)
			med[s][c] = bench_median(res[s][c], (size_t)ctx->runs);
	for (s = 0; s < 2; s++) {
		bench_say(ctx, "median %4zu B: pipe %.1f asx0 %.1f asx1 %.1f asx4 %.1f MB/s; "
			  "asx1/pipe %.2f\n", sizes[s], med[s][PIPE_], med[s][ASX0], med[s][ASX1],
			  med[s][ASX4], med[s][ASX1] / med[s][PIPE_]);
		for (c = 0; c < NCONT; c++) {
			snprintf(key, sizeof(key), "%s_mbps_%s", cont_name[c], s ? "64" : "4k");
			bench_record(ctx, &(struct bench_rec){
				.key = key, .impl = cont_name[c], .size = sizes[s], .metric = "mbps",
				.value = med[s][c], .unit = "MB/s", .runs = res[s][c],
				.nruns = (size_t)ctx->runs });
		}
	}
#define RATIO(k, im, s, v) bench_record(ctx, &(struct bench_rec){			\
		.key = k, .impl = im, .size = sizes[s], .metric = "over_pipe", .value = v,	\
		.unit = "x" })
	RATIO("asx1_over_pipe_4k", "asx1", 0, med[0][ASX1] / med[0][PIPE_]);
	RATIO("asx1_over_pipe_64", "asx1", 1, med[1][ASX1] / med[1][PIPE_]);
	RATIO("asx4_over_pipe_4k", "asx4", 0, med[0][ASX4] / med[0][PIPE_]);
#undef RATIO
	{
		double sm = bench_median(span[0], (size_t)ctx->runs);
		double pm = bench_median(span[1], (size_t)ctx->runs);

		bench_say(ctx, "median   span: span %.1f MB/s, pipe %.1f MB/s; span/pipe %.2f\n",
			  sm, pm, sm / pm);
#define SPAN(k, im, m, v, r, u) bench_record(ctx, &(struct bench_rec){		\
		.key = k, .experiment = "span", .impl = im, .size = sizes[0], .metric = m,	\
		.value = v, .runs = r, .nruns = (r) ? (size_t)ctx->runs : 0, .unit = u })
		SPAN("span_mbps_4k", "span", "mbps", sm, span[0], "MB/s");
		SPAN("span_pipe_mbps_4k", "pipe", "mbps", pm, span[1], "MB/s");
		SPAN("span_over_pipe_4k", "span", "over_pipe", sm / pm, NULL, "x");
#undef SPAN
	}
	/* the mux and peek/poll rows: a round trip per 256 bytes of the 64 B size's total */
	ret = bench_kstream_mux(ctx, (long)(total[1] / 256));
out:
	free(span[0]);
	free(span[1]);
	for (s = 0; s < 2; s++)
		for (c = 0; c < NCONT; c++)
			free(res[s][c]);
	return ret;
}

BENCH_COMMAND(kstream, "kstream",
	      "bytes through a /dev/asx loop Stream (0/1/4 pass modules) and a spanning Stream "
	      "vs a pipe (in the VM)",
	      "[-m MEGABYTES]", bench_kstream)
