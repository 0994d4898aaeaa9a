// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_sa.c - `asx-bench sa-latency`: the time from a VP entering a
 * blocking system call to another user thread running on a spare VP
 * (scheduler activations of asx.ko), beside a futex wake-to-run hand-off
 * between two pthreads, in the same run. Key sa_over_futex (lower is
 * better; target <= 1.5).
 *
 * SA: a VP joins a group and blocks in read() on an empty pipe, having
 * noted the time; the spare, parked in SA_WAIT, returns with BLOCKED and
 * notes the time; then it writes the pipe so the VP goes round again.
 * Futex: one thread notes the time and wakes another parked in FUTEX_WAIT,
 * which notes the time it runs. Medians of the per-round latencies. The
 * contenders alternate in slices. Needs asx.ko with activations, so it runs
 * in the test VM (tools/vm/asx-vm build/bin/asx-bench sa-latency); without
 * them it says it is skipped and reports nothing. It talks to the ioctls
 * directly (linux/asx.h), like `kstream`.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/asx.h>
#include "bench.h"

#define SLICES	8

int bench_asx_has(uint64_t bits)
{
	struct asx_version v;
	int fd = open("/dev/asx", O_RDWR | O_CLOEXEC), ok;

	if (fd < 0)
		return -errno;
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	ok = !ioctl(fd, ASX_IOC_VERSION, &v) && (v.features & bits) == bits;
	close(fd);
	return ok ? 0 : -ENOTTY;
}

static int have_sa(void)
{
	return bench_asx_has(ASX_FEAT_SA);
}

static long futex(int *uaddr, int op, int val)
{
	return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* ---------------------------------------------------------------- SA */

struct sa_ctx {
	int g;
	int pipe[2];
	int rounds;		/* per slice */
	volatile uint64_t t0;
	volatile int stop;
	int err;
};

static void *sa_vp(void *arg)
{
	struct sa_ctx *c = arg;
	struct asx_sa_join j = { .size = sizeof(j) };
	char b;

	if (ioctl(c->g, ASX_IOC_SA_JOIN, &j)) {
		c->err = errno;
		return NULL;
	}
	while (!c->stop) {
		__atomic_store_n(&c->t0, bench_now_ns(), __ATOMIC_RELEASE);
		if (read(c->pipe[0], &b, 1) != 1) {
			c->err = errno ? errno : EIO;
			break;
		}
	}
	ioctl(c->g, ASX_IOC_SA_LEAVE, &j);
	return NULL;
}

/* Waits for the next BLOCKED; returns its latency in ns or -errno. */
static int64_t sa_next_block(struct sa_ctx *c)
{
	struct asx_sa_event ev;
	struct asx_sa_wait w;
	uint64_t t1;
	int n;

	for (;;) {
		memset(&w, 0, sizeof(w));
		w.size = sizeof(w);
		w.deadline_ns = bench_now_ns() + 5000000000ULL;
		w.events = (uintptr_t)&ev;
		w.max = 1;
		n = ioctl(c->g, ASX_IOC_SA_WAIT, &w);
		t1 = bench_now_ns();
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -ETIMEDOUT;
		if (ev.type == ASX_SA_BLOCKED)
			return (int64_t)(t1 - __atomic_load_n(&c->t0, __ATOMIC_ACQUIRE));
	}
}

/* The VP is blocked, its BLOCKED taken, on entry and on return. */
static int sa_slice(struct sa_ctx *c, double *lat, int *k)
{
	int64_t ns;
	int i;

	for (i = 0; i < c->rounds; i++) {
		if (write(c->pipe[1], "x", 1) != 1)
			return -errno;
		ns = sa_next_block(c);
		if (ns < 0)
			return (int)ns;
		lat[(*k)++] = (double)ns;
	}
	return 0;
}

/* ---------------------------------------------------------------- futex */

struct fx_ctx {
	int word;
	int ack;
	int rounds;
	volatile uint64_t t0;
	double *lat;
	int k;
};

static void *fx_waiter(void *arg)
{
	struct fx_ctx *c = arg;
	int i;

	for (i = 0; i < c->rounds; i++) {
		while (!__atomic_load_n(&c->word, __ATOMIC_ACQUIRE))
			futex(&c->word, FUTEX_WAIT_PRIVATE, 0);
		c->lat[c->k++] = (double)(bench_now_ns() - c->t0);
		__atomic_store_n(&c->word, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&c->ack, 1, __ATOMIC_RELEASE);
		futex(&c->ack, FUTEX_WAKE_PRIVATE, 1);
	}
	return NULL;
}

static int fx_slice(struct fx_ctx *c)
{
	pthread_t t;
	int i;

	if (pthread_create(&t, NULL, fx_waiter, c))
		return -EAGAIN;
	for (i = 0; i < c->rounds; i++) {
		/* Let the waiter park first, so each round is a real wake-up. */
		usleep(200);
		c->t0 = bench_now_ns();
		__atomic_store_n(&c->word, 1, __ATOMIC_RELEASE);
		futex(&c->word, FUTEX_WAKE_PRIVATE, 1);
		while (!__atomic_load_n(&c->ack, __ATOMIC_ACQUIRE))
			futex(&c->ack, FUTEX_WAIT_PRIVATE, 0);
		__atomic_store_n(&c->ack, 0, __ATOMIC_RELEASE);
	}
	pthread_join(t, NULL);
	return 0;
}

static int bench_sa(struct bench_ctx *ctx, int argc, char **argv)
{
	struct asx_sa_create cr;
	struct fx_ctx fx = { 0 };
	struct sa_ctx sa = { .g = -1, .pipe = { -1, -1 } };
	int rounds = ctx->quick ? 50 : 500, s, k = 0, dev, ret;
	double *sal = NULL, med_sa, med_fx;
	pthread_t vp;

	(void)argc;
	(void)argv;
	ret = have_sa();
	if (ret) {
		fprintf(stderr, "asx-bench sa-latency: /dev/asx: %s; run it in the test VM "
			"(tools/vm/asx-vm build/bin/asx-bench sa-latency); skipped\n",
			ret == -ENOTTY ? "no scheduler activations" : strerror(-ret));
		return 0;
	}
	sal = calloc((size_t)rounds * SLICES, sizeof(double));
	fx.lat = calloc((size_t)rounds * SLICES, sizeof(double));
	if (!sal || !fx.lat) {
		ret = -ENOMEM;
		goto out;
	}
	dev = open("/dev/asx", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		ret = -errno;
		goto out;
	}
	memset(&cr, 0, sizeof(cr));
	cr.size = sizeof(cr);
	cr.flags = ASX_SA_CLOEXEC;
	cr.max_vps = 4;
	ret = ioctl(dev, ASX_IOC_SA_CREATE, &cr) ? -errno : 0;
	close(dev);
	if (ret || pipe(sa.pipe)) {
		ret = ret ? ret : -errno;
		goto out;
	}
	sa.g = cr.fd;
	sa.rounds = rounds;
	fx.rounds = rounds;
	if (pthread_create(&vp, NULL, sa_vp, &sa)) {
		ret = -EAGAIN;
		goto out;
	}
	bench_say(ctx, "sa-latency: blocking read() of a VP to the spare running, vs a futex "
		  "wake-to-run hand-off; %d slices of %d rounds each\n", SLICES, rounds);
	/* The VP's first block is not a round. */
	if (sa_next_block(&sa) < 0)
		ret = -ETIMEDOUT;
	for (s = 0; s < SLICES && !ret; s++) {
		ret = sa_slice(&sa, sal, &k);
		if (!ret)
			ret = fx_slice(&fx);
	}
	sa.stop = 1;
	if (write(sa.pipe[1], "x", 1) != 1 && !ret)
		ret = -errno;
	pthread_join(vp, NULL);
	if (ret || sa.err) {
		fprintf(stderr, "asx-bench sa-latency: %s\n", strerror(ret ? -ret : sa.err));
		ret = ret ? ret : -sa.err;
		goto out;
	}
	med_sa = bench_median(sal, (size_t)k);
	med_fx = bench_median(fx.lat, (size_t)fx.k);
	bench_say(ctx, "median: activation %.0f ns, futex hand-off %.0f ns, ratio %.2f\n",
		  med_sa, med_fx, med_sa / med_fx);
	bench_figure(ctx, "sa_block_to_spare_ns", med_sa, "ns");
	bench_figure(ctx, "futex_handoff_ns", med_fx, "ns");
	bench_figure(ctx, "sa_over_futex", med_sa / med_fx, "");
out:
	if (sa.g >= 0)
		close(sa.g);
	if (sa.pipe[0] >= 0) {
		close(sa.pipe[0]);
		close(sa.pipe[1]);
	}
	free(sal);
	free(fx.lat);
	return ret;
}

BENCH_COMMAND(sa_latency, "sa-latency",
	      "VP blocks to spare runs (scheduler activations) vs a futex hand-off (in the VM)",
	      NULL, bench_sa)
