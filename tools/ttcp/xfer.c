// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xfer.c - the data phase of ttcp: the transmit and receive loops, their
 * timing and (optionally) a check of every byte.  asx-ttcp (main.c) and
 * `asx-bench ttcp` (tools/bench/bench_ttcp.c) both move their bytes here,
 * through either back end, so the two tools measure one code path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ttcp.h"

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

double ttcp_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cpu_now(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void ttcp_pattern(unsigned char *buf, size_t len)
{
	unsigned char c = 0;

	/* printable bytes, like the original's */
	for (size_t i = 0; i < len; i++) {
		while (c < 040 || c > 0176)
			c++;
		buf[i] = c++;
		if (c > 0176)
			c = 0;
	}
}

/*
 * The byte at stream offset @off when verifying: a hash of the offset, so
 * a lost, repeated or reordered run of bytes (of any length short of
 * 2^56) shows as a wrong byte at a known offset.
 */
static inline unsigned char verify_byte(uint64_t off)
{
	return (unsigned char)((off * 0x9e3779b97f4a7c15ull) >> 56);
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * FNV_PRIME;
	return h;
}

int ttcp_connect_retry(const struct ttcp_ops *ops, const struct ttcp_conf *c,
		       struct ttcp_conn *conn)
{
	struct timespec nap = { 0, 20000000 };
	int r, i;

	for (i = 0; i < 150; i++) {
		r = ops->tcp_connect(c, conn);
		if (r != -ECONNREFUSED)
			break;
		ops->close(conn);
		nanosleep(&nap, NULL);
	}
	if (r)
		fprintf(stderr, "asx-ttcp: connect: %s\n", strerror(-r));
	return r;
}

static void xfer_start(struct ttcp_xfer *x)
{
	cpu_now(&x->user_s, &x->sys_s);
	x->t0 = ttcp_now_s();
}

static void xfer_stop(struct ttcp_xfer *x)
{
	double u, s;

	x->t1 = ttcp_now_s();
	cpu_now(&u, &s);
	x->user_s = u - x->user_s;
	x->sys_s = s - x->sys_s;
}

int ttcp_transmit(const struct ttcp_ops *ops, struct ttcp_conn *conn, unsigned char *buf,
		  struct ttcp_xfer *x)
{
	struct timespec gap = { 0, 2000000 };
	ssize_t n;
	long i;
	int r = 0;

	x->sum = FNV_OFFSET;
	x->bad_at = UINT64_MAX;
	xfer_start(x);
	if (x->udp) {
		nanosleep(&gap, NULL);		/* let the receiver settle */
		ops->send(conn, buf, 4);	/* start sentinel */
		x->t0 = ttcp_now_s();
	}
	for (i = 0; i < x->nbuf; i++) {
		if (x->verify) {
			for (size_t k = 0; k < x->buflen; k++)
				buf[k] = verify_byte(x->bytes + k);
			x->sum = fnv(x->sum, buf, x->buflen);
		}
		if (x->inject == TTCP_INJECT_SHORT && i == x->nbuf - 1) {
			x->bytes += x->buflen;	/* claimed, never sent */
			x->calls++;
			continue;
		}
		if (x->inject == TTCP_INJECT_FLIP && i == x->nbuf / 2)
			buf[x->buflen / 2] ^= 1;
		n = ops->send(conn, buf, x->buflen);
		if (x->inject == TTCP_INJECT_FLIP && i == x->nbuf / 2)
			buf[x->buflen / 2] ^= 1;
		if (n == -ENOBUFS) {		/* UDP: back off, resend */
			nanosleep(&gap, NULL);
			i--;
			continue;
		}
		if (n != (ssize_t)x->buflen) {
			fprintf(stderr, "asx-ttcp: send: %s\n",
				n < 0 ? strerror((int)-n) : "short write");
			r = n < 0 ? (int)n : -EIO;
			break;
		}
		x->bytes += (uint64_t)n;
		x->calls++;
	}
	xfer_stop(x);
	if (x->udp) {
		for (i = 0; i < 4; i++) {	/* end sentinels */
			nanosleep(&gap, NULL);
			ops->send(conn, buf, 4);
		}
	}
	return r;
}

/* Verify: check @n bytes received at the stream's current end. */
static void check_bytes(struct ttcp_xfer *x, const unsigned char *buf, size_t n)
{
	for (size_t k = 0; k < n && x->bad_at == UINT64_MAX; k++)
		if (buf[k] != verify_byte(x->bytes + k))
			x->bad_at = x->bytes + k;
	x->sum = fnv(x->sum, buf, n);
}

int ttcp_receive(const struct ttcp_ops *ops, struct ttcp_conn *conn, unsigned char *buf,
		 struct ttcp_xfer *x)
{
	bool started = !x->udp;
	ssize_t n;
	int r = 0;

	x->sum = FNV_OFFSET;
	x->bad_at = UINT64_MAX;
	xfer_start(x);
	for (;;) {
		n = ops->recv(conn, buf, x->buflen);
		if (n < 0) {
			if (!(x->udp && started && n == -ETIMEDOUT)) {
				fprintf(stderr, "asx-ttcp: recv: %s\n", strerror((int)-n));
				r = (int)n;
			}
			break;
		}
		if (x->udp && n <= 4) {
			if (started)
				break;
			started = true;
			xfer_start(x);
			continue;
		}
		if (n == 0)
			break;
		if (x->verify)
			check_bytes(x, buf, (size_t)n);
		x->bytes += (uint64_t)n;
		x->calls++;
	}
	xfer_stop(x);
	return r;
}

double ttcp_seconds(const struct ttcp_xfer *x)
{
	double s = x->t1 - x->t0;

	return s > 0 ? s : 1e-9;
}
