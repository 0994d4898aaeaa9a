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
 * its host). Needs asx.ko, so it runs in the test VM
 * (tools/vm/asx-vm build/bin/asx-bench kstream); without /dev/asx it says so
 * and reports nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/asx.h>
#include "bench.h"

#define BATCH_BYTES_4K	(32 * 1024)
#define BATCH_BYTES_64	4096

enum { PIPE_, ASX0, ASX1, ASX4, NCONT };

static const char *const cont_name[NCONT] = { "pipe", "asx0", "asx1", "asx4" };
static const int cont_mods[NCONT] = { 0, 0, 1, 4 };

static int push_pass(int fd, int n)
{
	struct asx_modname mn;

	while (n--) {
		memset(&mn, 0, sizeof(mn));
		mn.size = sizeof(mn);
		strcpy(mn.name, "pass");
		if (ioctl(fd, ASX_IOC_PUSH, &mn))
			return -errno;
	}
	return 0;
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
	int p[2], ret;

	if (c == PIPE_) {
		if (pipe(p))
			return -errno;
		fds[0] = p[1];
		fds[1] = p[0];
		return 0;
	}
	fds[0] = open("/dev/asx", O_RDWR | O_CLOEXEC);
	if (fds[0] < 0)
		return -errno;
	fds[1] = fds[0];
	ret = push_pass(fds[0], cont_mods[c]);
	if (ret)
		close(fds[0]);
	return ret;
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

static int bench_kstream(struct bench_ctx *ctx, int argc, char **argv)
{
	static const size_t sizes[2] = { 4096, 64 };
	double *res[2][NCONT], med[2][NCONT], mbps[NCONT];
	uint64_t total[2];
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
	for (s = 0; s < 2; s++)
		for (c = 0; c < NCONT; c++)
			med[s][c] = bench_median(res[s][c], (size_t)ctx->runs);
	for (s = 0; s < 2; s++) {
		bench_say(ctx, "median %4zu B: pipe %.1f asx0 %.1f asx1 %.1f asx4 %.1f MB/s; "
			  "asx1/pipe %.2f\n", sizes[s], med[s][PIPE_], med[s][ASX0], med[s][ASX1],
			  med[s][ASX4], med[s][ASX1] / med[s][PIPE_]);
		for (c = 0; c < NCONT; c++) {
			snprintf(key, sizeof(key), "%s_mbps_%s", cont_name[c], s ? "64" : "4k");
			bench_figure(ctx, key, med[s][c], "MB/s");
		}
	}
	bench_figure(ctx, "asx1_over_pipe_4k", med[0][ASX1] / med[0][PIPE_], "");
	bench_figure(ctx, "asx1_over_pipe_64", med[1][ASX1] / med[1][PIPE_], "");
	bench_figure(ctx, "asx4_over_pipe_4k", med[0][ASX4] / med[0][PIPE_], "");
out:
	for (s = 0; s < 2; s++)
		for (c = 0; c < NCONT; c++)
			free(res[s][c]);
	return ret;
}

BENCH_COMMAND(kstream, "kstream",
	      "bytes through a /dev/asx loop Stream (0/1/4 pass modules) vs a pipe (in the VM)",
	      "[-m MEGABYTES]", bench_kstream)
