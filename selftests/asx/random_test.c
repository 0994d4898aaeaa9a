// SPDX-License-Identifier: GPL-2.0
/*
 * random_test.c - 100,000 random operations from 4 threads on a shared pool
 * of Streams: ioctls with random numbers, sizes and contents, putmsg, getmsg,
 * read, write, poll, push, pop, pipe, link, close. Afterwards every Stream,
 * module instance and message must be gone (/proc/asx/objects), and the VM
 * runner checks the kernel log stays clean. ASX_RANDOM_SEED=N repeats a run.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "asx_util.h"
#include "harness.h"

#define NTHREADS	4
#define NOPS		100000
#define NSLOTS		16
#define SCRATCH		(256 * 1024)

static int slots[NSLOTS];
static const char *const names[] = {
	"pass", "count", "frame", "csum", "hold", "nosuch", "", "loop", "null", "mux",
};

enum { OP_OPEN, OP_CLOSE, OP_PUSH, OP_POP, OP_WRITE, OP_READ, OP_PUTMSG, OP_GETMSG,
       OP_POLL, OP_FLUSH, OP_SETWM, OP_STR, OP_SETDRV, OP_LINK, OP_PIPE, OP_IOCTL, NOPKINDS };

static const char *const op_names[NOPKINDS] = {
	"open", "close", "push", "pop", "write", "read", "putmsg", "getmsg", "poll", "flush",
	"setwm", "str", "setdrv", "link", "pipe", "ioctl",
};

struct worker {
	unsigned int seed;
	unsigned char *scratch;
	long ok[NOPKINDS];
	long total[NOPKINDS];
};

static void count(struct worker *w, int kind, int ret)
{
	w->total[kind]++;
	if (ret >= 0)
		w->ok[kind]++;
}

static unsigned int rnd(struct worker *w, unsigned int n)
{
	return n ? (unsigned int)rand_r(&w->seed) % n : 0;
}

static int pick(struct worker *w)
{
	return __atomic_load_n(&slots[rnd(w, NSLOTS)], __ATOMIC_RELAXED);
}

static void install(struct worker *w, int fd)
{
	int old;

	if (fd < 0)
		return;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	old = __atomic_exchange_n(&slots[rnd(w, NSLOTS)], fd, __ATOMIC_SEQ_CST);
	if (old >= 0)
		close(old);
}

static void random_bytes(struct worker *w, void *p, size_t n)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = rnd(w, 256);
}

/* A random ioctl whose user pointers, if any, point at the scratch buffer. */
static void random_ioctl(struct worker *w, int fd)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	union {
		unsigned char raw[256];
		struct asx_list l;
		struct asx_strmsg sm;
		struct asx_strioctl si;
		struct asx_pipe p;
		struct asx_link lk;
	} u;
	unsigned int nr = rnd(w, 0x18), dir;
	unsigned long cmd;
	int ret;

	random_bytes(w, &u, sizeof(u));
	/* Mostly plausible: small sizes, zero reserved fields. */
	if (rnd(w, 4)) {
		memset(u.raw + 4, 0, sizeof(u.raw) - 4);
		random_bytes(w, u.raw + 4, rnd(w, 24));
	}
	u.l.size = rnd(w, 3) ? rnd(w, 200) : (unsigned int)rand_r(&w->seed);
	switch (nr) {
	case 0x03:
		u.l.names = (uintptr_t)w->scratch;
		u.l.count %= 32;
		break;
	case 0x04: case 0x05: case 0x06:
		u.sm.ctl.buf = (uintptr_t)w->scratch;
		u.sm.data.buf = (uintptr_t)w->scratch + SCRATCH / 2;
		u.sm.ctl.maxlen %= SCRATCH / 2;
		u.sm.data.maxlen %= SCRATCH / 2;
		if (u.sm.ctl.len > 0)
			u.sm.ctl.len %= 5000;
		if (u.sm.data.len > 0)
			u.sm.data.len %= 70000;
		break;
	case 0x10:
		u.si.data = (uintptr_t)w->scratch;
		u.si.len %= 5000;
		u.si.timeout_ms = rnd(w, 100);
		break;
	case 0x11:
		u.lk.fd = pick(w);
		break;
	case 0x13:
		u.p.flags |= ASX_PIPE_NONBLOCK;
		break;
	}
	dir = rnd(w, 8) ? (nr == 0x00 || nr == 0x03 || nr == 0x05 || nr == 0x06 ||
			   nr == 0x09 || nr == 0x0b || nr == 0x0c || nr == 0x0d || nr == 0x0f ||
			   nr == 0x10 || nr == 0x11 || nr == 0x13 ?
			   _IOC_READ | _IOC_WRITE : _IOC_WRITE) : dirs[rnd(w, 4)];
	cmd = _IOC(dir, ASX_IOC_MAGIC, nr, rnd(w, 64));
	ret = ioctl(fd, cmd, &u);
	if (!ret && nr == 0x13 && u.p.fd > 2)
		install(w, u.p.fd);
	count(w, OP_IOCTL, ret);
}

static void one_op(struct worker *w)
{
	unsigned char *buf = w->scratch;
	unsigned int op = rnd(w, 100), n;
	struct asx_strmsg sm;
	int fd = pick(w), old;

	if (op < 2) {
		fd = asx_open(O_NONBLOCK);
		count(w, OP_OPEN, fd);
		install(w, fd);
		return;
	}
	if (op < 4) {
		old = __atomic_exchange_n(&slots[rnd(w, NSLOTS)], -1, __ATOMIC_SEQ_CST);
		if (old >= 0)
			count(w, OP_CLOSE, close(old));
		return;
	}
	if (fd < 0)
		return;
	if (op < 6) {
		count(w, OP_PUSH, asx_push(fd, names[rnd(w, 5)]));
	} else if (op < 8) {
		count(w, OP_POP, asx_pop(fd, rnd(w, 2) ? NULL : names[rnd(w, 5)]));
	} else if (op < 20) {
		n = rnd(w, 4) ? rnd(w, 300) : rnd(w, 40000);
		random_bytes(w, buf, n < 64 ? n : 64);
		count(w, OP_WRITE, write(fd, buf, n));
	} else if (op < 32) {
		count(w, OP_READ, read(fd, buf, rnd(w, 2) ? rnd(w, 100) : SCRATCH));
	} else if (op < 40) {
		count(w, OP_PUTMSG, asx_putmsg(fd, buf, (int)rnd(w, 200) - 1, buf + 1000,
					       (int)rnd(w, 3000) - 1, rnd(w, 10) ? 0 : ASX_MSG_HIPRI,
					       rnd(w, 3) ? 0 : rnd(w, 300)));
	} else if (op < 48) {
		count(w, OP_GETMSG, asx_getmsg(fd, rnd(w, 4) ? ASX_IOC_GETMSG : ASX_IOC_PEEK, &sm,
					       buf, rnd(w, 300), buf + 1000, rnd(w, 5000),
					       rnd(w, 4), rnd(w, 3) ? 0 : rnd(w, 4)));
	} else if (op < 52) {
		count(w, OP_POLL, asx_poll1(fd, POLLIN | POLLOUT | POLLPRI, 0));
	} else if (op < 56) {
		count(w, OP_FLUSH, asx_flush(fd, rnd(w, 8), rnd(w, 3) ? 0 : rnd(w, 3)));
	} else if (op < 60) {
		count(w, OP_SETWM, asx_setwm(fd, rnd(w, 4), rnd(w, 2), 1 + rnd(w, 70000),
					     rnd(w, 20000)));
	} else if (op < 63) {
		count(w, OP_STR, asx_str(fd, rnd(w, 2) ? ASX_STR_HOLD_RELEASE : ASX_STR_HOLD_HOLD,
					 NULL, 0, 0, NULL));
	} else if (op < 65) {
		count(w, OP_SETDRV, asx_setdrv(fd, names[5 + rnd(w, 5)]));
	} else if (op < 67) {
		struct asx_link lk = { .size = sizeof(lk) };

		if (rnd(w, 2)) {
			lk.fd = pick(w);
			count(w, OP_LINK, ioctl(fd, ASX_IOC_LINK, &lk));
		} else {
			lk.id = rnd(w, 4) ? rnd(w, 8) : ASX_MUX_ALL;
			count(w, OP_LINK, ioctl(fd, ASX_IOC_UNLINK, &lk));
		}
	} else if (op < 68) {
		fd = asx_pipe(fd, ASX_PIPE_NONBLOCK | ASX_PIPE_CLOEXEC);
		count(w, OP_PIPE, fd);
		install(w, fd);
	} else {
		random_ioctl(w, fd);
	}
}

static void *worker_fn(void *p)
{
	struct worker *w = p;
	int i;

	for (i = 0; i < NOPS / NTHREADS; i++)
		one_op(w);
	return NULL;
}

static long settle(const char *what, long want)
{
	long v = -1;
	int i;

	for (i = 0; i < 100; i++) {
		v = asx_objects(what);
		if (v == want)
			break;
		asx_msleep(20);
	}
	return v;
}

TEST(random_operations)
{
	static const char *const objs[] = { "streams", "modules", "msgs", "dblks" };
	struct worker w[NTHREADS];
	pthread_t t[NTHREADS];
	unsigned int seed;
	long before[4], ok[NOPKINDS] = { 0 }, total[NOPKINDS] = { 0 };
	int i, k;

	signal(SIGPIPE, SIG_IGN);
	seed = getenv("ASX_RANDOM_SEED") ? atoi(getenv("ASX_RANDOM_SEED")) : time(NULL);
	TH_LOG("seed %u (ASX_RANDOM_SEED=%u repeats this run)", seed, seed);
	ASSERT_EQ(asx_quiesce(), 0, "earlier Streams never freed");
	for (i = 0; i < 4; i++) {
		before[i] = asx_objects(objs[i]);
		ASSERT_GE(before[i], 0, "%s: %s", ASX_OBJECTS, strerror(errno));
	}
	for (i = 0; i < NSLOTS; i++)
		slots[i] = asx_open(O_NONBLOCK);
	for (i = 0; i < NTHREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = seed + i;
		w[i].scratch = malloc(SCRATCH + 4096);
		ASSERT_TRUE(w[i].scratch != NULL);
		ASSERT_EQ(pthread_create(&t[i], NULL, worker_fn, &w[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		for (k = 0; k < NOPKINDS; k++) {
			ok[k] += w[i].ok[k];
			total[k] += w[i].total[k];
		}
		free(w[i].scratch);
	}
	for (i = 0; i < NSLOTS; i++)
		if (slots[i] >= 0)
			close(slots[i]);
	/* Pipe ends that lost their slot to a racing install are closed here. */
	for (i = 3; i < 1024; i++)
		close(i);
	for (k = 0; k < NOPKINDS; k++)
		TH_LOG("%-7s %6ld calls, %6ld succeeded", op_names[k], total[k], ok[k]);
	EXPECT_EQ(asx_quiesce(), 0);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(settle(objs[i], before[i]), before[i], "live %s", objs[i]);
}

TEST_HARNESS_MAIN
