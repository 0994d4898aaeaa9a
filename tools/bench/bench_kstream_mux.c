// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_kstream_mux.c - the mux and peek/poll rows of `asx-bench kstream`
 * (bench_kstream.c calls bench_kstream_mux() after its own rows).
 *
 * mux: 64-byte messages through a mux to 4 lower Streams and back, one
 * thread: a batch of 16 is put down the mux (round robin over the lowers,
 * each lower a pipe end whose far end the bench holds), read at the far
 * ends, written back there and got up the mux.  Three contenders take turns
 * in 8 slices per run, each slice led by another: a named mux ("mux.250")
 * with the lowers persistently linked (I_PLINK), a plain mux with I_LINK,
 * and one asx pipe without a mux (the same puts, reads, writes and gets, no
 * header).  A message counts once per pass through the mux: a round trip is
 * two.
 *
 * peek: per 64-byte message on one loop Stream, putmsg then poll(POLLIN),
 * I_PEEK and getmsg, against putmsg then getmsg alone, in turns.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/kstream.h>
#include <asx/stropts.h>
#include "bench.h"

#define MUX_UNIT	"mux.250"
#define NLOWERS		4
#define MUX_BATCH	16
#define MUX_SIZE	64
#define MUX_SLICES	8

enum { M_PLINK, M_LINK, M_DIRECT, NMUX };

static const char *const mux_name[NMUX] = { "plink", "link", "direct" };

struct mux_cont {
	int up;			/* the mux (direct: one pipe end) */
	int far[NLOWERS];	/* the lowers' far ends (direct: the other end, four times) */
	int id[NLOWERS];
};

static int mux_open_fd(const char *driver)
{
	struct asx_kstream *ks;
	int r = asx_kstream_open(&ks, driver, 0);

	return r ? r : asx_kstream_detach(ks);
}

/* A pipe of asx.ko: *@near and *@far, or a negative errno. */
static int mux_pipe(int *near, int *far)
{
	struct asx_kstream *a, *b;
	int r = asx_kstream_pipe_open(&a, &b, 0);

	if (r)
		return r;
	*near = asx_kstream_detach(a);
	*far = asx_kstream_detach(b);
	return 0;
}

static void mux_close(struct mux_cont *m, int c)
{
	int k;

	if (m->up >= 0 && c == M_PLINK)
		ioctl(m->up, I_PUNLINK, MUXID_ALL);
	if (m->up >= 0)
		close(m->up);
	for (k = 0; k < NLOWERS; k++)
		if (m->far[k] >= 0 && (c != M_DIRECT || !k))
			close(m->far[k]);
}

static int mux_setup(struct mux_cont *m, int c)
{
	int k, r, near;

	m->up = -1;
	for (k = 0; k < NLOWERS; k++)
		m->far[k] = -1;
	if (c == M_DIRECT) {
		r = mux_pipe(&m->up, &m->far[0]);
		for (k = 1; k < NLOWERS && !r; k++)
			m->far[k] = m->far[0];
		return r;
	}
	m->up = mux_open_fd(c == M_PLINK ? MUX_UNIT : "mux");
	if (m->up < 0)
		return m->up;
	for (k = 0; k < NLOWERS; k++) {
		r = mux_pipe(&near, &m->far[k]);
		if (r)
			return r;
		m->id[k] = ioctl(m->up, c == M_PLINK ? I_PLINK : I_LINK, near);
		r = m->id[k] < 0 ? -errno : 0;
		close(near);	/* the link holds it */
		if (r)
			return r;
	}
	return 0;
}

/* @n round trips of @m in batches; the time added to *ns. */
static int mux_pump(struct mux_cont *m, int c, long n, uint64_t *ns)
{
	unsigned char buf[MUX_SIZE], in[MUX_SIZE];
	struct asx_mux_hdr h = { 0 }, hin;
	struct strbuf ctl = { 0, sizeof(h), (char *)&h }, dat = { 0, MUX_SIZE, (char *)buf };
	struct strbuf cin = { sizeof(hin), 0, (char *)&hin }, din = { MUX_SIZE, 0, (char *)in };
	uint64_t t0 = bench_now_ns();
	long done, j;
	int k, flags;

	memset(buf, 0x5a, sizeof(buf));
	for (done = 0; done < n; done += MUX_BATCH) {
		for (j = 0; j < MUX_BATCH; j++) {
			h.id = (unsigned int)m->id[j % NLOWERS];
			buf[0] = (unsigned char)j;
			if (putmsg(m->up, c == M_DIRECT ? NULL : &ctl, &dat, 0))
				return -errno;
		}
		for (j = 0; j < MUX_BATCH; j++) {
			k = (int)(j % NLOWERS);
			if (read(m->far[k], in, sizeof(in)) != MUX_SIZE || in[0] != (unsigned char)j)
				return errno ? -errno : -EBADMSG;
		}
		for (j = 0; j < MUX_BATCH; j++)
			if (write(m->far[j % NLOWERS], buf, sizeof(buf)) != MUX_SIZE)
				return -errno;
		for (j = 0; j < MUX_BATCH; j++) {
			flags = 0;
			if (getmsg(m->up, &cin, &din, &flags) < 0)
				return -errno;
			if (din.len != MUX_SIZE || (c != M_DIRECT && cin.len != (int)sizeof(hin)))
				return -EBADMSG;
		}
	}
	*ns += bench_now_ns() - t0;
	return 0;
}

/* One message put and got on @fd, with (@peek) poll and I_PEEK between. */
static int peek_one(int fd, bool peek, unsigned char *buf)
{
	struct strbuf d = { MUX_SIZE, MUX_SIZE, (char *)buf };
	struct strpeek sp = { { 0, 0, NULL }, { MUX_SIZE, 0, (char *)buf }, 0 };
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int flags = 0;

	if (putmsg(fd, NULL, &d, 0))
		return -errno;
	if (peek && (poll(&pf, 1, -1) != 1 || ioctl(fd, I_PEEK, &sp) != 1 ||
		     sp.databuf.len != MUX_SIZE))
		return errno ? -errno : -EBADMSG;
	if (getmsg(fd, NULL, &d, &flags) < 0 || d.len != MUX_SIZE)
		return errno ? -errno : -EBADMSG;
	return 0;
}

static int peek_pump(int fd, bool peek, long n, uint64_t *ns)
{
	unsigned char buf[MUX_SIZE];
	uint64_t t0 = bench_now_ns();
	long i;
	int r;

	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < n; i++) {
		r = peek_one(fd, peek, buf);
		if (r)
			return r;
	}
	*ns += bench_now_ns() - t0;
	return 0;
}

/* One run: every contender of both rows in turns; messages per second in rate[]. */
static int mux_run(long n, double rate[NMUX], double prate[2])
{
	struct mux_cont m[NMUX];
	uint64_t ns[NMUX] = { 0 }, pns[2] = { 0 };
	int c, s, i, r = 0, fd;

	for (c = 0; c < NMUX; c++)
		m[c].up = -1;
	for (c = 0; c < NMUX && !r; c++)
		r = mux_setup(&m[c], c);
	fd = mux_open_fd(NULL);
	if (fd < 0 && !r)
		r = fd;
	/* each slice starts with another contender: none always follows the same one */
	for (s = 0; s < MUX_SLICES && !r; s++) {
		for (i = 0; i < NMUX && !r; i++) {
			c = (s + i) % NMUX;
			r = mux_pump(&m[c], c, n / MUX_SLICES, &ns[c]);
		}
		for (i = 0; i < 2 && !r; i++) {
			c = (s + i) % 2;
			r = peek_pump(fd, c == 0, n / MUX_SLICES, &pns[c]);
		}
	}
	for (c = 0; c < NMUX; c++) {
		mux_close(&m[c], c);
		rate[c] = ns[c] ? 2.0 * (double)(n / MUX_SLICES * MUX_SLICES) / (ns[c] / 1e9) : 0;
	}
	for (c = 0; c < 2; c++)
		prate[c] = pns[c] ? (double)(n / MUX_SLICES * MUX_SLICES) / (pns[c] / 1e9) : 0;
	if (fd >= 0)
		close(fd);
	return r;
}

int bench_kstream_mux(struct bench_ctx *ctx, long n)
{
	static const char *const pname[2] = { "peek_poll", "getmsg" };
	double *res[NMUX + 2] = { NULL }, rate[NMUX], prate[2], med[NMUX + 2];
	char key[64];
	int i, c, ret = 0;

	n = n / (MUX_SLICES * MUX_BATCH) * (MUX_SLICES * MUX_BATCH);
	if (n <= 0)
		return -EINVAL;
	for (c = 0; c < NMUX + 2; c++) {
		res[c] = calloc((size_t)ctx->runs, sizeof(double));
		if (!res[c]) {
			ret = -ENOMEM;
			goto out;
		}
	}
	bench_say(ctx, "mux: %ld round trips of %d B messages, batches of %d, through a mux to %d "
		  "lowers and back (plink: %s with I_PLINK; link: mux with I_LINK; direct: one "
		  "pipe, no mux); peek: %ld messages, putmsg+poll+I_PEEK+getmsg vs putmsg+getmsg; "
		  "%d runs\n", n, MUX_SIZE, MUX_BATCH, NLOWERS, MUX_UNIT, n, ctx->runs);
	bench_say(ctx, "%4s %12s %12s %12s %12s %12s\n", "run", "plink msg/s", "link msg/s",
		  "direct msg/s", "peek msg/s", "getmsg msg/s");
	for (i = 0; i < ctx->runs; i++) {
		ret = mux_run(n, rate, prate);
		if (ret) {
			fprintf(stderr, "asx-bench kstream: mux: %s\n", strerror(-ret));
			goto out;
		}
		for (c = 0; c < NMUX; c++)
			res[c][i] = rate[c];
		res[NMUX][i] = prate[0];
		res[NMUX + 1][i] = prate[1];
		bench_say(ctx, "%4d %12.0f %12.0f %12.0f %12.0f %12.0f\n", i + 1, rate[M_PLINK],
			  rate[M_LINK], rate[M_DIRECT], prate[0], prate[1]);
	}
	for (c = 0; c < NMUX + 2; c++)
		med[c] = bench_median(res[c], (size_t)ctx->runs);
	bench_say(ctx, "median mux: plink %.0f link %.0f direct %.0f msg/s; plink/link %.2f "
		  "plink/direct %.2f; peek: %.0f vs %.0f msg/s, %.2f\n", med[M_PLINK], med[M_LINK],
		  med[M_DIRECT], med[M_PLINK] / med[M_LINK], med[M_PLINK] / med[M_DIRECT],
		  med[NMUX], med[NMUX + 1], med[NMUX] / med[NMUX + 1]);
	for (c = 0; c < NMUX + 2; c++) {
		bool mux = c < NMUX;

		snprintf(key, sizeof(key), "%s_%s_msgs", mux ? "mux" : "peek",
			 mux ? mux_name[c] : pname[c - NMUX]);
		bench_record(ctx, &(struct bench_rec){
			.key = key, .experiment = mux ? "mux" : "peek",
			.impl = mux ? mux_name[c] : pname[c - NMUX], .size = MUX_SIZE,
			.metric = "msg_rate", .value = med[c], .unit = "msg/s", .runs = res[c],
			.nruns = (size_t)ctx->runs });
	}
#define RATIO(k, ex, im, m, v) bench_record(ctx, &(struct bench_rec){			\
		.key = k, .experiment = ex, .impl = im, .size = MUX_SIZE, .metric = m,	\
		.value = v, .unit = "x" })
	RATIO("mux_plink_over_link", "mux", "plink", "over_link", med[M_PLINK] / med[M_LINK]);
	RATIO("mux_plink_over_direct", "mux", "plink", "over_direct",
	      med[M_PLINK] / med[M_DIRECT]);
	RATIO("peek_poll_over_getmsg", "peek", "peek_poll", "over_getmsg",
	      med[NMUX] / med[NMUX + 1]);
#undef RATIO
out:
	for (c = 0; c < NMUX + 2; c++)
		free(res[c]);
	return ret;
}
