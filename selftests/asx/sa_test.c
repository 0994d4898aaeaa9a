// SPDX-License-Identifier: GPL-2.0
/*
 * sa_test.c - scheduler activations: groups, JOIN/LEAVE, BLOCKED/UNBLOCKED
 * events in order, no event for preemption, many VPs at random with every
 * BLOCKED matched, ring overflow, close and thread exit at every stage,
 * limits, another process's threads, exec, rmmod, and the ABI edges.
 */
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "asx_util.h"
#include "asx_harness.h"

static int sa_create(unsigned int max_vps, unsigned int ring)
{
	return asx_sa_group_fd(0, max_vps, ring);
}

/* Returns the VP id or -1. */
static int sa_join(int g)
{
	struct asx_sa_join j = { .size = sizeof(j) };

	return ioctl(g, ASX_IOC_SA_JOIN, &j) ? -1 : (int)j.vp;
}

static int sa_leave(int g)
{
	struct asx_sa_join j = { .size = sizeof(j) };

	return ioctl(g, ASX_IOC_SA_LEAVE, &j);
}

static uint64_t now_ns(void)
{
	return asx_mono_ns();
}

/* Waits up to @ms (0: do not sleep); returns the events or -1. */
static int sa_wait(int g, struct asx_sa_event *ev, unsigned int max, long ms)
{
	struct asx_sa_wait w = { .size = sizeof(w), .events = (uintptr_t)ev, .max = max };

	w.deadline_ns = ms ? now_ns() + ms * 1000000ULL : 0;
	return ioctl(g, ASX_IOC_SA_WAIT, &w);
}

static int sa_info(int g, struct asx_sa_info *in)
{
	memset(in, 0, sizeof(*in));
	in->size = sizeof(*in);
	return ioctl(g, ASX_IOC_SA_INFO, in);
}

static bool have_sa(void)
{
	return asx_has_features(ASX_FEAT_SA);
}

#define NEED_SA() do {								\
	if (!have_sa())								\
		SKIP(return, "asx.ko without scheduler activations");		\
} while (0)

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* A member that joins, blocks in read() on a pipe, then leaves (or not). */
struct blocker {
	int g;
	int rfd;
	bool leave;
	volatile int vp;
	volatile pid_t tid;
	volatile int joined;
	int err;
};

static void *blocker_main(void *arg)
{
	struct blocker *b = arg;
	char c;

	b->tid = gettid_();
	b->vp = sa_join(b->g);
	if (b->vp < 0) {
		b->err = errno;
		__atomic_store_n(&b->joined, -1, __ATOMIC_RELEASE);
		return NULL;
	}
	__atomic_store_n(&b->joined, 1, __ATOMIC_RELEASE);
	if (read(b->rfd, &c, 1) != 1)
		b->err = errno ? errno : EIO;
	if (b->leave && sa_leave(b->g))
		b->err = errno;
	return NULL;
}

static int wait_joined(struct blocker *b)
{
	int i, v = 0;

	for (i = 0; i < 5000 && !(v = __atomic_load_n(&b->joined, __ATOMIC_ACQUIRE)); i++)
		asx_msleep(1);
	return v;
}

TEST(feature_and_abi_edges)
{
	struct asx_sa_create c;
	struct asx_sa_join j;
	struct asx_sa_wait w;
	char big[sizeof(struct asx_sa_create) + 8];
	int dev, g;

	NEED_SA();
	dev = asx_open(0);
	ASSERT_GE(dev, 0);

	memset(&c, 0, sizeof(c));
	c.size = ASX_SA_CREATE_SIZE_VER0 - 4;
	errno = 0;
	EXPECT_EQ(ioctl(dev, ASX_IOC_SA_CREATE, &c), -1) TH_LOG("short size");
	EXPECT_EQ(errno, EINVAL);
	memset(big, 0, sizeof(big));
	((struct asx_sa_create *)big)->size = sizeof(big);
	big[sizeof(big) - 1] = 1;
	errno = 0;
	EXPECT_EQ(ioctl(dev, ASX_IOC_SA_CREATE, big), -1) TH_LOG("non-zero tail");
	EXPECT_EQ(errno, E2BIG);
	big[sizeof(big) - 1] = 0;
	ASSERT_EQ(ioctl(dev, ASX_IOC_SA_CREATE, big), 0) TH_LOG("zero tail: %s", strerror(errno));
	close(((struct asx_sa_create *)big)->fd);
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = 0x80;
	errno = 0;
	EXPECT_EQ(ioctl(dev, ASX_IOC_SA_CREATE, &c), -1) TH_LOG("unknown flag");
	EXPECT_EQ(errno, EINVAL);
	c.flags = 0;
	c.ring_size = 100;
	errno = 0;
	EXPECT_EQ(ioctl(dev, ASX_IOC_SA_CREATE, &c), -1) TH_LOG("ring not a power of two");
	EXPECT_EQ(errno, EINVAL);
	c.ring_size = 0;
	c.max_vps = ASX_SA_MAX_VPS + 1;
	errno = 0;
	EXPECT_EQ(ioctl(dev, ASX_IOC_SA_CREATE, &c), -1) TH_LOG("too many VPs");
	EXPECT_EQ(errno, EINVAL);
	c.max_vps = 0;
	ASSERT_EQ(ioctl(dev, ASX_IOC_SA_CREATE, &c), 0);
	EXPECT_EQ(c.max_vps, ASX_SA_DEF_VPS);
	EXPECT_EQ(c.ring_size, ASX_SA_DEF_RING);
	EXPECT_GT(c.id, 0);
	g = c.fd;
	EXPECT_FALSE(fcntl(g, F_GETFD) & FD_CLOEXEC);

	memset(&j, 0, sizeof(j));
	j.size = 8;
	errno = 0;
	EXPECT_EQ(ioctl(g, ASX_IOC_SA_JOIN, &j), -1);
	EXPECT_EQ(errno, EINVAL);
	j.size = sizeof(j);
	j.flags = 1;
	errno = 0;
	EXPECT_EQ(ioctl(g, ASX_IOC_SA_JOIN, &j), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(ioctl(dev, ASX_IOC_SA_JOIN, &j), -1) TH_LOG("a group ioctl on a Stream");
	EXPECT_EQ(errno, ENOTTY);
	errno = 0;
	EXPECT_EQ(ioctl(g, ASX_IOC_PUSH, &j), -1) TH_LOG("a Stream ioctl on a group");
	EXPECT_EQ(errno, ENOTTY);
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	errno = 0;
	EXPECT_EQ(ioctl(g, ASX_IOC_SA_WAIT, &w), -1) TH_LOG("max 0");
	EXPECT_EQ(errno, EINVAL);
	w.max = 1;
	w.events = 16;
	errno = 0;
	EXPECT_EQ(ioctl(g, ASX_IOC_SA_WAIT, &w), 0) TH_LOG("nothing pending, deadline 0");
	errno = 0;
	EXPECT_EQ(sa_leave(g), -1);
	EXPECT_EQ(errno, ENOENT);
	close(g);
	close(dev);
}

TEST(block_then_wake_in_order)
{
	struct asx_sa_event ev[4];
	struct blocker b = { 0 };
	struct asx_sa_info in;
	int p[2], n;
	pthread_t t;

	NEED_SA();
	b.g = sa_create(4, 0);
	ASSERT_GE(b.g, 0);
	ASSERT_EQ(pipe(p), 0);
	b.rfd = p[0];
	b.leave = true;
	ASSERT_EQ(pthread_create(&t, NULL, blocker_main, &b), 0);
	ASSERT_EQ(wait_joined(&b), 1) TH_LOG("join: %s", strerror(b.err));

	n = sa_wait(b.g, ev, 1, 5000);
	ASSERT_EQ(n, 1) TH_LOG("BLOCKED within 5 s");
	EXPECT_EQ(ev[0].type, ASX_SA_BLOCKED);
	EXPECT_EQ(ev[0].vp, (unsigned int)b.vp);
	EXPECT_EQ(ev[0].tid, (unsigned int)b.tid);
	EXPECT_EQ(ev[0].seq, 0);
	EXPECT_LE(ev[0].ts_ns, now_ns());
	asx_msleep(50);
	EXPECT_EQ(sa_wait(b.g, ev, 4, 0), 0) TH_LOG("still blocked: nothing new");

	ASSERT_EQ(write(p[1], "x", 1), 1);
	n = sa_wait(b.g, ev, 1, 5000);
	ASSERT_EQ(n, 1);
	EXPECT_EQ(ev[0].type, ASX_SA_UNBLOCKED);
	EXPECT_EQ(ev[0].vp, (unsigned int)b.vp);
	EXPECT_EQ(ev[0].seq, 1);
	pthread_join(t, NULL);
	EXPECT_EQ(b.err, 0) TH_LOG("%s", strerror(b.err));
	ASSERT_EQ(sa_info(b.g, &in), 0);
	EXPECT_EQ(in.nr_vps, 0) TH_LOG("left");
	EXPECT_EQ(in.lost, 0);
	close(b.g);
	close(p[0]);
	close(p[1]);
}

struct spinner {
	int g;
	volatile int *stop;
	long nivcsw;
	int err;
};

static void *spin_main(void *arg)
{
	struct spinner *s = arg;
	struct rusage ru;

	if (s->g >= 0 && sa_join(s->g) < 0) {
		s->err = errno;
		return NULL;
	}
	while (!__atomic_load_n(s->stop, __ATOMIC_RELAXED))
		;
	getrusage(RUSAGE_THREAD, &ru);
	s->nivcsw = ru.ru_nivcsw;
	if (s->g >= 0 && sa_leave(s->g))
		s->err = errno;
	return NULL;
}

/* ASX emits no PREEMPTED event: preemption of a member is not reported. */
TEST(no_event_for_preemption)
{
	struct spinner s[2] = { { .g = -1 }, { .g = -1 } };
	struct asx_sa_event ev[8];
	volatile int stop = 0;
	pthread_attr_t attr;
	pthread_t t[2];
	cpu_set_t cpus;
	int g, i, n;

	NEED_SA();
	g = sa_create(4, 0);
	ASSERT_GE(g, 0);
	s[0].g = g;
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	pthread_attr_init(&attr);
	ASSERT_EQ(pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus), 0);
	for (i = 0; i < 2; i++) {
		s[i].stop = &stop;
		ASSERT_EQ(pthread_create(&t[i], &attr, spin_main, &s[i]), 0);
	}
	asx_msleep(400);
	stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(s[0].err, 0);
	n = sa_wait(g, ev, 8, 0);
	for (i = 0; i < n; i++)
		TH_LOG("event type %u vp %u", ev[i].type, ev[i].vp);
	EXPECT_EQ(n, 0)
		TH_LOG("a preempted member is not blocked (%ld involuntary switches)", s[0].nivcsw);
	EXPECT_GT(s[0].nivcsw, 0) TH_LOG("the member was preempted");
	close(g);
}

#define MANY_VPS	1000
#define MANY_SECS	10	/* at least; longer when the VPs sleep long */
#define MANY_BLOCKS	8	/* times each VP blocks, on average, at least */
#define MANY_LOAD_PCT	40	/* of one CPU, spent on the VPs' block/wake rounds */
#define MANY_MIN_US	60000	/* mean sleep of a VP: not shorter ... */
#define MANY_MAX_US	2000000	/* ... nor longer */

/*
 * The load many_vps puts on the machine is scaled to the machine. A
 * ping-pong through one member first measures what one block/wake round
 * costs here, events and the spare's wake-up included; the VPs then sleep
 * long enough that together they take about MANY_LOAD_PCT of one CPU. A
 * fixed rate does not fit every host: under single-threaded TCG on a slow
 * or busy one a round costs several times what it costs on a quiet one,
 * and 1000 VPs at 16,000 sleeps a second saturated the guest. The spares
 * (SCHED_FIFO) then took both CPUs, everything else waited behind RT
 * throttling, and the test neither finished nor lost a wake-up: it ran out
 * of time, or, given more, overran the ring.
 */
struct pingpong {
	int g;
	int in;
	int out;
	volatile int stop;
	int err;
};

static void *pingpong_member(void *arg)
{
	struct pingpong *pp = arg;
	char c;

	/* echoes even when the join failed, so the caller never hangs */
	if (sa_join(pp->g) < 0)
		pp->err = errno;
	while (read(pp->in, &c, 1) == 1 && c == 'p')
		if (write(pp->out, &c, 1) != 1)
			break;
	if (!pp->err && sa_leave(pp->g))
		pp->err = errno;
	return NULL;
}

static void *pingpong_spare(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct pingpong *pp = arg;
	struct asx_sa_event ev[64];

	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	while (!pp->stop)
		if (sa_wait(pp->g, ev, 64, 100) < 0 && errno != EINTR)
			pp->err = errno;
	return NULL;
}

/* Nanoseconds per block/wake round of a member, or -1. */
static long block_round_ns(void)
{
	struct pingpong pp = { 0 };
	int a[2], b[2], rounds;
	pthread_t member, spare;
	uint64_t t0, t = 0;
	char c = 'p';

	pp.g = sa_create(4, 0);
	if (pp.g < 0 || pipe(a) || pipe(b))
		return -1;
	pp.in = a[0];
	pp.out = b[1];
	if (pthread_create(&spare, NULL, pingpong_spare, &pp))
		return -1;
	if (pthread_create(&member, NULL, pingpong_member, &pp)) {
		pp.stop = 1;
		pthread_join(spare, NULL);
		return -1;
	}
	/* a warm-up round, then up to 2,000 rounds or half a second */
	t0 = now_ns();
	for (rounds = -1; rounds < 2000; rounds++) {
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			break;
		t = now_ns();
		if (rounds < 0)
			t0 = t;
		else if (t - t0 > 500000000ULL)
			break;
	}
	c = 'q';
	if (write(a[1], &c, 1) != 1)
		pp.err = errno;
	pthread_join(member, NULL);
	pp.stop = 1;
	pthread_join(spare, NULL);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
	close(pp.g);
	if (pp.err || rounds < 1)
		return -1;
	return (long)((t - t0) / (unsigned int)(rounds + 1));
}

struct many {
	int g;
	volatile int stop;
	volatile int done_vps;
	int err;
	long sleep_us;			/* mean sleep of a VP */
	pthread_mutex_t lock;
	int state[ASX_SA_MAX_VPS];	/* 1 after BLOCKED */
	long blocked[ASX_SA_MAX_VPS];
	long unblocked[ASX_SA_MAX_VPS];
	long bad_order;
	long other;
	unsigned char *seen;		/* by seq: times delivered */
	unsigned char *type;		/* by seq */
	unsigned short *vp;		/* by seq */
	long dup;
	long nseq;
};

static void *many_vp(void *arg)
{
	struct many *m = arg;
	unsigned int seed = (unsigned int)gettid_();
	long us;
	struct timespec ts;

	if (sa_join(m->g) < 0) {
		m->err = errno;
		__atomic_add_fetch(&m->done_vps, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	while (!m->stop) {
		/* uniform in [mean / 2, 3 * mean / 2) */
		us = m->sleep_us / 2 + (long)(rand_r(&seed) % (unsigned int)m->sleep_us);
		ts.tv_sec = us / 1000000;
		ts.tv_nsec = us % 1000000 * 1000;
		nanosleep(&ts, NULL);
		if (rand_r(&seed) % 4 == 0)
			sched_yield();
	}
	if (sa_leave(m->g))
		m->err = errno;
	__atomic_add_fetch(&m->done_vps, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void many_account(struct many *m, const struct asx_sa_event *ev, int n)
{
	int i;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < n; i++) {
		if (ev[i].seq < (uint64_t)m->nseq) {
			if (m->seen[ev[i].seq]++)
				m->dup++;
			m->type[ev[i].seq] = (unsigned char)ev[i].type;
			m->vp[ev[i].seq] = (unsigned short)ev[i].vp;
		}
		if (ev[i].vp >= ASX_SA_MAX_VPS) {
			m->other++;
			continue;
		}
		switch (ev[i].type) {
		case ASX_SA_BLOCKED:
			m->blocked[ev[i].vp]++;
			break;
		case ASX_SA_UNBLOCKED:
			m->unblocked[ev[i].vp]++;
			break;
		default:
			m->other++;
		}
	}
	pthread_mutex_unlock(&m->lock);
}

static void *many_spare(void *arg)
{
	struct many *m = arg;
	struct sched_param sp = { .sched_priority = 1 };
	struct asx_sa_event ev[256];
	int n;

	/* Spares are the scheduler's: let them run before the VPs (root only). */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	for (;;) {
		n = sa_wait(m->g, ev, 256, 100);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			m->err = errno;
			return NULL;
		}
		many_account(m, ev, n);
		if (!n && __atomic_load_n(&m->done_vps, __ATOMIC_ACQUIRE) == MANY_VPS)
			return NULL;
	}
}

TEST_TIMEOUT(many_vps_block_and_wake_at_random, 120)
{
	pthread_t vps[MANY_VPS], spares[2];
	struct asx_sa_info in;
	struct many *m;
	long base, nb = 0, nu = 0, unmatched = 0, missing = 0, round_ns, secs;
	uint64_t t0;
	int i;

	NEED_SA();
	round_ns = block_round_ns();
	ASSERT_GT(round_ns, 0) TH_LOG("measuring a block/wake round");
	base = asx_kmembers();
	m = calloc(1, sizeof(*m));
	ASSERT_NE(m, NULL);
	m->sleep_us = MANY_VPS * (round_ns / 1000 + 1) * 100 / MANY_LOAD_PCT;
	if (m->sleep_us < MANY_MIN_US)
		m->sleep_us = MANY_MIN_US;
	if (m->sleep_us > MANY_MAX_US)
		m->sleep_us = MANY_MAX_US;
	secs = MANY_BLOCKS * m->sleep_us / 1000000 + 1;
	if (secs < MANY_SECS)
		secs = MANY_SECS;
	TH_LOG("a block/wake round takes %ld us: %d VPs sleep %ld ms on average for %ld s",
	       round_ns / 1000, MANY_VPS, m->sleep_us / 1000, secs);
	m->nseq = 1L << 22;
	m->seen = calloc(m->nseq, 1);
	m->type = calloc(m->nseq, 1);
	m->vp = calloc(m->nseq, sizeof(*m->vp));
	ASSERT_TRUE(m->seen && m->type && m->vp);
	pthread_mutex_init(&m->lock, NULL);
	m->g = sa_create(ASX_SA_MAX_VPS, ASX_SA_MAX_RING);
	ASSERT_GE(m->g, 0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(pthread_create(&spares[i], NULL, many_spare, m), 0);
	}
	t0 = now_ns();
	for (i = 0; i < MANY_VPS; i++) {
		ASSERT_EQ(pthread_create(&vps[i], NULL, many_vp, m), 0) TH_LOG("VP %d", i);
	}
	TH_LOG("%d VPs started in %llu ms", MANY_VPS,
	       (unsigned long long)(now_ns() - t0) / 1000000);
	asx_msleep(secs * 1000);
	m->stop = 1;
	t0 = now_ns();
	for (i = 0; i < MANY_VPS; i++)
		pthread_join(vps[i], NULL);
	TH_LOG("%d VPs joined in %llu ms", MANY_VPS,
	       (unsigned long long)(now_ns() - t0) / 1000000);
	for (i = 0; i < 2; i++)
		pthread_join(spares[i], NULL);
	EXPECT_EQ(m->err, 0) TH_LOG("%s", strerror(m->err));
	ASSERT_EQ(sa_info(m->g, &in), 0);
	EXPECT_EQ(in.lost, 0) TH_LOG("ring overflowed");
	EXPECT_EQ(in.nr_vps, 0);
	EXPECT_EQ(in.pending, 0);
	for (i = 0; i < ASX_SA_MAX_VPS; i++) {
		nb += m->blocked[i];
		nu += m->unblocked[i];
		unmatched += m->blocked[i] != m->unblocked[i];
	}
	ASSERT_LT((long)in.events, m->nseq);
	/* In seq order, per VP: BLOCKED, UNBLOCKED, BLOCKED, ... */
	for (i = 0; i < (long)in.events; i++) {
		missing += m->seen[i] != 1;
		if (m->type[i] == ASX_SA_BLOCKED)
			m->bad_order += m->state[m->vp[i]]++ != 0;
		else if (m->type[i] == ASX_SA_UNBLOCKED)
			m->bad_order += m->state[m->vp[i]]-- != 1;
	}
	TH_LOG("%ld BLOCKED, %ld UNBLOCKED, %llu events", nb, nu, (unsigned long long)in.events);
	EXPECT_GT(nb, MANY_VPS);
	EXPECT_EQ(unmatched, 0) TH_LOG("every BLOCKED matched by one UNBLOCKED");
	EXPECT_EQ(m->bad_order, 0) TH_LOG("BLOCKED and UNBLOCKED alternate per VP");
	EXPECT_EQ(m->other, 0);
	EXPECT_EQ(m->dup, 0) TH_LOG("no event delivered twice");
	EXPECT_EQ(missing, 0) TH_LOG("no event lost");
	EXPECT_EQ(nb + nu, (long)in.events);
	close(m->g);
	EXPECT_EQ(asx_settle_kmembers(base), base);
	free(m->seen);
	free(m->type);
	free(m->vp);
	free(m);
}

struct hopper {
	int g;
	int n;
	int err;
};

static void *hop_main(void *arg)
{
	struct hopper *h = arg;
	/* 1 ms: a shorter timer can expire before a slow vCPU gets to sleep. */
	struct timespec ts = { 0, 1000000 };
	int i;

	if (sa_join(h->g) < 0) {
		h->err = errno;
		return NULL;
	}
	for (i = 0; i < h->n; i++)
		nanosleep(&ts, NULL);
	if (sa_leave(h->g))
		h->err = errno;
	return NULL;
}

/* A group with a ring of @ring events, and a member that slept @n times in it; or -1. */
static int hopped_group(struct hopper *h, unsigned int ring)
{
	pthread_t t;

	h->g = sa_create(2, ring);
	if (h->g < 0 || pthread_create(&t, NULL, hop_main, h))
		return -1;
	pthread_join(t, NULL);
	return h->err ? -1 : 0;
}

TEST(overflow_is_reported_in_place)
{
	struct asx_sa_event ev[ASX_SA_MIN_RING + 8];
	struct hopper h = { .n = 200 };
	struct asx_sa_info in;
	uint64_t next = 0, lost = 0;
	int n, i, markers = 0;

	NEED_SA();
	ASSERT_EQ(hopped_group(&h, ASX_SA_MIN_RING), 0)
		TH_LOG("%s", strerror(h.err ? h.err : errno));
	ASSERT_EQ(sa_info(h.g, &in), 0);
	EXPECT_GT(in.lost, 0);
	while ((n = sa_wait(h.g, ev, ASX_SA_MIN_RING + 8, 0)) > 0) {
		for (i = 0; i < n; i++) {
			EXPECT_EQ(ev[i].seq, next) TH_LOG("consecutive");
			if (ev[i].type == ASX_SA_OVERFLOW) {
				markers++;
				lost += ev[i].arg;
				next += ev[i].arg;
			} else {
				next++;
			}
		}
	}
	EXPECT_EQ(n, 0);
	EXPECT_GE(markers, 1);
	EXPECT_EQ(lost, in.lost);
	EXPECT_EQ(next, in.events);
	close(h.g);
}

/*
 * Events a WAIT took but could not store are lost: the OVERFLOW marker that
 * says so comes first, in their place, before the events after them.
 */
TEST(events_lost_to_efault_are_reported_first)
{
	struct asx_sa_event ev[ASX_SA_MIN_RING], *ro;
	struct hopper h = { .n = 3 };
	struct asx_sa_wait w;
	struct asx_sa_info in;
	uint64_t next;
	int n, i;

	NEED_SA();
	ASSERT_EQ(hopped_group(&h, ASX_SA_MIN_RING), 0)
		TH_LOG("%s", strerror(h.err ? h.err : errno));
	ASSERT_EQ(sa_info(h.g, &in), 0);
	ASSERT_GE(in.pending, 4) TH_LOG("three sleeps: six events");
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(ro, MAP_FAILED);
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.events = (uintptr_t)ro;
	w.max = 2;
	errno = 0;
	EXPECT_EQ(ioctl(h.g, ASX_IOC_SA_WAIT, &w), -1) TH_LOG("events to a read-only page");
	EXPECT_EQ(errno, EFAULT);
	munmap(ro, 4096);

	n = sa_wait(h.g, ev, ASX_SA_MIN_RING, 0);
	ASSERT_GE(n, 2);
	EXPECT_EQ(ev[0].type, ASX_SA_OVERFLOW) TH_LOG("the loss first");
	EXPECT_EQ(ev[0].seq, 0);
	EXPECT_EQ(ev[0].arg, 2);
	next = ev[0].type == ASX_SA_OVERFLOW ? ev[0].seq + ev[0].arg : 0;
	for (i = 1; i < n; i++) {
		EXPECT_NE(ev[i].type, ASX_SA_OVERFLOW) TH_LOG("event %d", i);
		EXPECT_EQ(ev[i].seq, next) TH_LOG("consecutive");
		next = ev[i].seq + 1;
	}
	ASSERT_EQ(sa_info(h.g, &in), 0);
	EXPECT_EQ(in.lost, 2);
	EXPECT_EQ(next, in.events);
	close(h.g);
}

TEST(member_exits_without_leaving)
{
	struct asx_sa_event ev[8];
	struct blocker b = { 0 };
	struct asx_sa_info in;
	int p[2], n, i, seen = 0;
	long base;
	pthread_t t;

	NEED_SA();
	base = asx_kmembers();
	b.g = sa_create(4, 0);
	ASSERT_GE(b.g, 0);
	ASSERT_EQ(pipe(p), 0);
	b.rfd = p[0];
	ASSERT_EQ(pthread_create(&t, NULL, blocker_main, &b), 0);
	ASSERT_EQ(wait_joined(&b), 1);
	ASSERT_EQ(sa_wait(b.g, ev, 1, 5000), 1);
	EXPECT_EQ(ev[0].type, ASX_SA_BLOCKED);
	ASSERT_EQ(write(p[1], "x", 1), 1);
	pthread_join(t, NULL);
	while ((n = sa_wait(b.g, ev, 8, 1000)) > 0)
		for (i = 0; i < n; i++)
			if (ev[i].type == ASX_SA_EXITED && ev[i].vp == (unsigned int)b.vp)
				seen++;
	EXPECT_EQ(seen, 1) TH_LOG("one EXITED");
	for (i = 0; i < 500; i++) {
		ASSERT_EQ(sa_info(b.g, &in), 0);
		if (!in.nr_vps)
			break;
		asx_msleep(10);
	}
	EXPECT_EQ(in.nr_vps, 0) TH_LOG("the dead member was reaped");
	close(b.g);
	EXPECT_EQ(asx_settle_kmembers(base), base);
	close(p[0]);
	close(p[1]);
}

struct parked {
	int g;
	int n;
	int err;
};

static void *park_main(void *arg)
{
	struct parked *s = arg;
	struct asx_sa_event ev[16];
	int n;

	do {
		n = sa_wait(s->g, ev, 16, 1500);
		if (n > 0)
			s->n += n;
	} while (n > 0);
	if (n < 0)
		s->err = errno;
	return NULL;
}

TEST(close_with_members_blocked_and_spares_parked)
{
	struct blocker b[4] = { 0 };
	struct parked s = { 0 };
	pthread_t t[4], st;
	int p[2], i, g;
	long base, ref0;

	NEED_SA();
	base = asx_kmembers();
	ref0 = asx_module_refcnt();
	ASSERT_GE(ref0, 0) TH_LOG("/sys/module/asx/refcnt");
	g = sa_create(8, 0);
	ASSERT_GE(g, 0);
	ASSERT_EQ(pipe(p), 0);
	for (i = 0; i < 4; i++) {
		b[i].g = g;
		b[i].rfd = p[0];
		ASSERT_EQ(pthread_create(&t[i], NULL, blocker_main, &b[i]), 0);
		ASSERT_EQ(wait_joined(&b[i]), 1);
	}
	s.g = g;
	ASSERT_EQ(pthread_create(&st, NULL, park_main, &s), 0);
	asx_msleep(200);
	EXPECT_EQ(asx_settle_kmembers(base + 4), base + 4);
	/* The spare's WAIT keeps the file until it returns; then it is released. */
	close(g);
	pthread_join(st, NULL);
	EXPECT_EQ(s.err, 0) TH_LOG("%s", strerror(s.err));
	EXPECT_GE(s.n, 4) TH_LOG("the BLOCKED events");
	/*
	 * The members are orphans now. Their threads still sleep in read(),
	 * but a task work drops each notifier (the read is restarted), so
	 * nothing is left to keep the module loaded.
	 */
	EXPECT_EQ(asx_settle_kmembers(base), base)
		TH_LOG("orphans dropped while their threads live");
	EXPECT_EQ(asx_settle_refcnt(ref0), ref0) TH_LOG("no module reference left by the orphans");
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(__atomic_load_n(&b[i].err, __ATOMIC_RELAXED), 0)
			TH_LOG("thread %d still reading", i);
	}
	ASSERT_EQ(write(p[1], "abcd", 4), 4);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(b[i].err, 0)
			TH_LOG("thread %d: read restarted, not failed: %s", i, strerror(b[i].err));
	}
	EXPECT_EQ(asx_settle_kmembers(base), base);
	close(p[0]);
	close(p[1]);
}

struct closer {
	int g;
	int g2;
	int err;
	long after_close;
	long after_rejoin;
};

static void *closer_main(void *arg)
{
	struct closer *c = arg;

	if (sa_join(c->g) < 0) {
		c->err = errno;
		return NULL;
	}
	close(c->g);
	c->after_close = asx_kmembers();
	if (sa_join(c->g2) < 0) {
		c->err = errno;
		return NULL;
	}
	return NULL;
}

struct joiner {
	int g;
	int g2;
	int err;
	volatile int phase;
};

static void *rejoin_main(void *arg)
{
	struct joiner *j = arg;

	if (sa_join(j->g) < 0) {
		j->err = errno;
		return NULL;
	}
	__atomic_store_n(&j->phase, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&j->phase, __ATOMIC_ACQUIRE) != 2)
		asx_msleep(1);
	/* Its first group was closed: this join drops the old notifier. */
	if (sa_join(j->g2) < 0)
		j->err = errno;
	else if (sa_leave(j->g2))
		j->err = errno;
	__atomic_store_n(&j->phase, 3, __ATOMIC_RELEASE);
	return NULL;
}

TEST(close_by_member_and_rejoin_after_close)
{
	struct closer c = { 0 };
	struct joiner j = { 0 };
	pthread_t t;
	long base;

	NEED_SA();
	base = asx_kmembers();
	c.g = sa_create(2, 0);
	c.g2 = sa_create(2, 0);
	ASSERT_GE(c.g, 0);
	ASSERT_GE(c.g2, 0);
	ASSERT_EQ(pthread_create(&t, NULL, closer_main, &c), 0);
	pthread_join(t, NULL);
	EXPECT_EQ(c.err, 0) TH_LOG("%s", strerror(c.err));
	EXPECT_EQ(c.after_close, base) TH_LOG("closing the group unhooked its own member");
	EXPECT_EQ(asx_settle_kmembers(base), base)
		TH_LOG("the joined thread exited and was reaped");
	close(c.g2);

	j.g = sa_create(2, 0);
	j.g2 = sa_create(2, 0);
	ASSERT_GE(j.g, 0);
	ASSERT_EQ(pthread_create(&t, NULL, rejoin_main, &j), 0);
	while (!__atomic_load_n(&j.phase, __ATOMIC_ACQUIRE) && !j.err)
		asx_msleep(1);
	close(j.g);
	/* An orphan, until its thread's task work drops it (it sleeps 1 ms at a time). */
	EXPECT_EQ(asx_settle_kmembers(base), base)
		TH_LOG("the orphan dropped while its thread lives");
	__atomic_store_n(&j.phase, 2, __ATOMIC_RELEASE);
	while (__atomic_load_n(&j.phase, __ATOMIC_ACQUIRE) != 3 && !j.err)
		asx_msleep(1);
	EXPECT_EQ(j.err, 0) TH_LOG("%s", strerror(j.err));
	EXPECT_EQ(asx_kmembers(), base) TH_LOG("rejoin dropped the orphan, leave the new one");
	pthread_join(t, NULL);
	close(j.g2);
}

struct racer {
	int ga;
	int gb;
	int err;
	int rounds;
	volatile int phase;		/* 0 wait, 1 go (ga, gb set), 2 joined ga, 3 done */
	volatile int stop;
};

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	int ph;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		ph = __atomic_load_n(&r->phase, __ATOMIC_ACQUIRE);
		if (ph != 1) {
			sched_yield();
			continue;
		}
		if (sa_join(r->ga) < 0) {
			r->err = errno;
			break;
		}
		__atomic_store_n(&r->phase, 2, __ATOMIC_RELEASE);
		/*
		 * EBUSY until ga is closed; the close races these joins: the
		 * one that succeeds finds an orphan with its work queued, or
		 * none because the work ran already.
		 */
		while (sa_join(r->gb) < 0 && errno == EBUSY)
			;
		if (!r->err && sa_leave(r->gb)) {
			r->err = errno;
			break;
		}
		r->rounds++;
		__atomic_store_n(&r->phase, 3, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Rejoining while another thread closes the old group: the join may find
 * its orphan with the task work still queued and must leave the member to
 * it. Nothing may be freed twice or kept: members and the module's
 * reference count come back to where they were.
 */
/*
 * Every close of a group waits for an RCU grace period. On PREEMPT_RT,
 * which keeps to normal grace periods after boot, that is ~75 ms in the
 * TCG guest, and 300 rounds (600 closes) took 45 s: the rounds stop at 300
 * or after 15 s, whichever comes first, but not before 50.
 */
TEST(rejoin_races_the_close)
{
	uint64_t until = now_ns() + 15000000000ULL;
	struct racer r = { 0 };
	long base, ref0;
	pthread_t t;
	int i, n = 300;

	NEED_SA();
	base = asx_kmembers();
	ref0 = asx_module_refcnt();
	ASSERT_GE(ref0, 0);
	ASSERT_EQ(pthread_create(&t, NULL, racer_main, &r), 0);
	for (i = 0; i < n && !r.err; i++) {
		if (i >= 50 && now_ns() > until) {
			n = i;	/* the racer has done as many rounds */
			break;
		}
		r.ga = sa_create(2, 0);
		r.gb = sa_create(2, 0);
		ASSERT_GE(r.ga, 0);
		ASSERT_GE(r.gb, 0);
		__atomic_store_n(&r.phase, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&r.phase, __ATOMIC_ACQUIRE) < 2 && !r.err)
			sched_yield();
		close(r.ga);
		while (__atomic_load_n(&r.phase, __ATOMIC_ACQUIRE) != 3 && !r.err)
			sched_yield();
		close(r.gb);
		__atomic_store_n(&r.phase, 0, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	EXPECT_EQ(r.err, 0) TH_LOG("%s", strerror(r.err));
	EXPECT_EQ(r.rounds, n);
	EXPECT_EQ(asx_settle_kmembers(base), base) TH_LOG("no member kept");
	EXPECT_EQ(asx_settle_refcnt(ref0), ref0) TH_LOG("no module reference kept");
}

struct stalled {
	int ga;
	int gb;
	int go[2];
	int tid[2];
	int err;
};

static void *stalled_main(void *arg)
{
	struct stalled *s = arg;
	pid_t tid = gettid_();
	char c;

	if (sa_join(s->ga) < 0 || write(s->tid[1], &tid, sizeof(tid)) != sizeof(tid) ||
	    read(s->go[0], &c, 1) != 1) {
		s->err = errno ? errno : EIO;
		return NULL;
	}
	/* The tracer holds us at this call's entry while ga is closed. */
	if (sa_join(s->gb) < 0 || sa_leave(s->gb))
		s->err = errno;
	return NULL;
}

/* Runs the tracee @tid to the entry of ioctl(SA_JOIN); 0 or -1. */
static int stop_at_join(pid_t tid)
{
	struct __ptrace_syscall_info si;
	int st, i;

	for (i = 0; i < 1000; i++) {
		if (ptrace(PTRACE_SYSCALL, tid, 0, 0) || waitpid(tid, &st, __WALL) != tid ||
		    !WIFSTOPPED(st))
			return -1;
		if (WSTOPSIG(st) != (SIGTRAP | 0x80))
			continue;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) <= 0)
			return -1;
		if (si.op == PTRACE_SYSCALL_INFO_ENTRY && si.entry.nr == SYS_ioctl &&
		    (unsigned int)si.entry.args[1] == ASX_IOC_SA_JOIN)
			return 0;
	}
	return -1;
}

/*
 * The join that finds its thread's old member an orphan whose task work is
 * queued but has not run: a tracer holds the thread at the entry of the
 * ioctl while the old group is closed, so the work cannot run before the
 * join. The join must leave the member to the work (freeing it would be a
 * use after free when the work runs), and both must end with nothing kept.
 */
TEST(join_with_the_orphans_task_work_pending)
{
	int cl[2], done[2], st, i;
	struct stalled s;
	long base, ref0;
	pid_t pid, tid;
	pthread_t t;
	char c;

	NEED_SA();
	base = asx_kmembers();
	ref0 = asx_module_refcnt();
	ASSERT_GE(ref0, 0);
	memset(&s, 0, sizeof(s));
	ASSERT_EQ(pipe(s.go), 0);
	ASSERT_EQ(pipe(s.tid), 0);
	ASSERT_EQ(pipe(cl), 0);
	ASSERT_EQ(pipe(done), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		s.ga = sa_create(2, 0);
		s.gb = sa_create(2, 0);
		if (s.ga < 0 || s.gb < 0 || pthread_create(&t, NULL, stalled_main, &s))
			_exit(2);
		/* Told by the tracer: close ga, an orphan for the stopped thread. */
		if (read(cl[0], &c, 1) != 1 || close(s.ga) || write(done[1], "c", 1) != 1)
			_exit(3);
		pthread_join(t, NULL);
		_exit(s.err ? 10 : 0);
	}
	ASSERT_EQ(read(s.tid[0], &tid, sizeof(tid)), (ssize_t)sizeof(tid));
	ASSERT_EQ(ptrace(PTRACE_SEIZE, tid, 0, PTRACE_O_TRACESYSGOOD), 0)
		TH_LOG("%s", strerror(errno));
	ASSERT_EQ(ptrace(PTRACE_INTERRUPT, tid, 0, 0), 0);
	ASSERT_EQ(waitpid(tid, &st, __WALL), tid);
	ASSERT_EQ(write(s.go[1], "g", 1), 1);
	i = stop_at_join(tid);
	if (i)
		kill(pid, SIGKILL);
	ASSERT_EQ(i, 0) TH_LOG("the thread never reached SA_JOIN");
	ASSERT_EQ(write(cl[1], "c", 1), 1);
	ASSERT_EQ(read(done[0], &c, 1), 1) TH_LOG("the group was closed");
	asx_msleep(50);
	EXPECT_EQ(asx_kmembers(), base + 1) TH_LOG("the orphan waits for its thread");
	ASSERT_EQ(ptrace(PTRACE_DETACH, tid, 0, 0), 0);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("child status %#x", st);
	EXPECT_EQ(asx_settle_kmembers(base), base) TH_LOG("no member kept");
	EXPECT_EQ(asx_settle_refcnt(ref0), ref0) TH_LOG("no module reference kept");
	for (i = 0; i < 2; i++) {
		close(s.go[i]);
		close(s.tid[i]);
		close(cl[i]);
		close(done[i]);
	}
}

TEST(process_killed_with_member_blocked)
{
	int p[2], ready[2], status;
	long base;
	pid_t pid;
	char c;

	NEED_SA();
	base = asx_kmembers();
	ASSERT_EQ(pipe(p), 0);
	ASSERT_EQ(pipe(ready), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct blocker b = { .rfd = p[0] };
		pthread_t t;

		b.g = sa_create(4, 0);
		if (b.g < 0 || pthread_create(&t, NULL, blocker_main, &b) || wait_joined(&b) != 1)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(read(ready[0], &c, 1), 1);
	asx_msleep(100);
	kill(pid, SIGKILL);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(asx_settle_kmembers(base), base) TH_LOG("nothing left registered");
	close(p[0]);
	close(p[1]);
	close(ready[0]);
	close(ready[1]);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = "f", .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))], c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &mh, 0) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* One line to the shell, and its echo back; 0 or -1. */
static int echo_round(int to, int from)
{
	char c;

	if (write(to, "a\n", 2) != 2)
		return -1;
	do {
		if (read(from, &c, 1) != 1)
			return -1;
	} while (c != '\n');
	return 0;
}

#define EXEC_ROUNDS	100

/*
 * A member that execs runs a program that never joined (su, say): whoever
 * holds the group must learn nothing of it, not its sleeps, not its exit.
 * The program is a shell that echoes lines: it blocks in read() once a
 * round. Whatever the way into execve() blocked (reading the binary over
 * 9p, say) is in the ring by the first echo; every round after that is the
 * new program's alone.
 */
TEST(exec_ends_the_reports)
{
	struct asx_sa_event ev[64];
	int sv[2], in[2], out[2], g, n, i, status;
	long before = 0, after = 0, exited = 0, base;
	uint64_t t0;
	pid_t pid;

	NEED_SA();
	base = asx_kmembers();
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ASSERT_EQ(pipe(in), 0);
	ASSERT_EQ(pipe(out), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char c;

		g = sa_create(4, 0);
		if (g < 0 || send_fd(sv[1], g) || sa_join(g) < 0)
			_exit(1);
		if (read(in[0], &c, 1) != 1)	/* blocks: a member's BLOCKED */
			_exit(1);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || close(in[1]) || close(out[0]))
			_exit(1);
		execl("/bin/sh", "sh", "-c", "while read x; do echo \"$x\"; done", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	g = recv_fd(sv[0]);
	ASSERT_GE(g, 0) TH_LOG("the child's group");
	/* Before the exec the child is reported like any member. */
	t0 = now_ns();
	while (!before && now_ns() - t0 < 10000000000ULL) {
		n = sa_wait(g, ev, 64, 1000);
		ASSERT_GE(n, 0);
		for (i = 0; i < n; i++)
			before += ev[i].tid == (unsigned int)pid && ev[i].type == ASX_SA_BLOCKED;
	}
	ASSERT_GT(before, 0) TH_LOG("the member blocked in read() was reported");
	ASSERT_EQ(write(in[1], "g", 1), 1);
	ASSERT_EQ(echo_round(in[1], out[0]), 0) TH_LOG("the shell's first echo");
	while ((n = sa_wait(g, ev, 64, 0)) > 0)
		;
	ASSERT_EQ(n, 0);
	for (i = 1; i < EXEC_ROUNDS; i++) {
		asx_msleep(1);		/* the shell is back in read() */
		ASSERT_EQ(echo_round(in[1], out[0]), 0) TH_LOG("round %d", i);
	}
	close(in[1]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	while ((n = sa_wait(g, ev, 64, 0)) > 0)
		for (i = 0; i < n; i++) {
			if (ev[i].tid != (unsigned int)pid)
				continue;
			after += ev[i].type == ASX_SA_BLOCKED;
			exited += ev[i].type == ASX_SA_EXITED;
		}
	ASSERT_EQ(n, 0);
	EXPECT_EQ(after, 0)
		TH_LOG("%ld BLOCKED from the exec'd shell in %d reads", after, EXEC_ROUNDS - 1);
	EXPECT_EQ(exited, 0) TH_LOG("the exec'd program's exit is not reported");
	close(g);
	EXPECT_EQ(asx_settle_kmembers(base), base) TH_LOG("nothing left registered");
	close(sv[0]);
	close(sv[1]);
	close(out[0]);
}

/*
 * The program a member exec'd may join a group of its own: the old
 * membership must not make that EBUSY. sa_test runs itself for it, and
 * this constructor is that program.
 */
__attribute__((constructor)) static void rejoin_after_exec(void)
{
	int g;

	if (!getenv("ASX_SA_TEST_REJOIN"))
		return;
	g = sa_create(4, 0);
	if (g < 0)
		_exit(2);
	if (sa_join(g) < 0)
		_exit(errno == EBUSY ? 3 : 4);
	if (sa_leave(g))
		_exit(5);
	_exit(0);
}

TEST(join_again_after_exec)
{
	int status;
	long base;
	pid_t pid;

	NEED_SA();
	base = asx_kmembers();
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		int g = sa_create(4, 0);

		/* a descriptor without CLOEXEC keeps the group open across the exec */
		if (g < 0 || sa_join(g) < 0 || dup(g) < 0 || setenv("ASX_SA_TEST_REJOIN", "1", 1))
			_exit(1);
		execl("/proc/self/exe", "sa_test", (char *)NULL);
		_exit(127);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(WEXITSTATUS(status), 0)
		TH_LOG("1: setup, 2: create, 3: JOIN EBUSY, 4: JOIN, 5: LEAVE");
	EXPECT_EQ(asx_settle_kmembers(base), base) TH_LOG("nothing left registered");
}

TEST(limits_and_ownership)
{
	struct blocker b[3] = { 0 };
	int g, i, p[2], fds[ASX_SA_MAX_GROUPS], n = 0, status;
	struct asx_sa_info in;
	pthread_t t[3];
	pid_t pid;

	NEED_SA();
	g = sa_create(2, 0);
	ASSERT_GE(g, 0);
	ASSERT_EQ(pipe(p), 0);
	for (i = 0; i < 3; i++) {
		b[i].g = g;
		b[i].rfd = p[0];
		b[i].leave = true;
		ASSERT_EQ(pthread_create(&t[i], NULL, blocker_main, &b[i]), 0);
		wait_joined(&b[i]);
	}
	EXPECT_EQ(b[2].joined, -1) TH_LOG("third VP of a 2-VP group");
	EXPECT_EQ(b[2].err, ENOSPC);
	pthread_join(t[2], NULL);

	errno = 0;
	EXPECT_EQ(sa_join(g), -1) TH_LOG("full");
	EXPECT_EQ(errno, ENOSPC);
	ASSERT_EQ(sa_info(g, &in), 0);
	EXPECT_EQ(in.nr_vps, 2);

	/* Another process cannot put its threads into our group. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(sa_join(g) < 0 && errno == EPERM ? 0 : 1);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("EPERM in the child");

	ASSERT_EQ(write(p[1], "ab", 2), 2);
	for (i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(b[i].err, 0) TH_LOG("%s", strerror(b[i].err));
	}

	/* The global group limit. */
	ASSERT_EQ(sa_info(g, &in), 0);
	for (i = 0; i < ASX_SA_MAX_GROUPS; i++) {
		fds[i] = sa_create(1, ASX_SA_MIN_RING);
		if (fds[i] < 0)
			break;
		n++;
	}
	EXPECT_EQ(n, ASX_SA_MAX_GROUPS - (int)in.sys_groups);
	EXPECT_EQ(errno, ENOSPC);
	while (n--)
		close(fds[n]);
	close(g);
	close(p[0]);
	close(p[1]);
}

#define USER_GROUPS_PARAM	"/sys/module/asx/parameters/sa_max_user_groups"

static int param_rw(const char *path, char *old, size_t len, const char *new)
{
	int fd = open(path, O_RDWR), ret = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	if (old) {
		n = read(fd, old, len - 1);
		if (n <= 0)
			goto out;
		old[n] = 0;
	}
	if (new && (lseek(fd, 0, SEEK_SET) || write(fd, new, strlen(new)) != (ssize_t)strlen(new)))
		goto out;
	ret = 0;
out:
	close(fd);
	return ret;
}

/* As @uid, opens groups until one fails; returns how many, and errno's. */
static pid_t groups_as(uid_t uid, int ready, int go)
{
	pid_t pid = fork();
	int n = 0;
	char c;

	if (pid)
		return pid;
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
		_exit(200);
	while (n < 100 && sa_create(2, ASX_SA_MIN_RING) >= 0)
		n++;
	c = (char)n;
	if (errno != ENOSPC)
		c = (char)150;
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(201);
	_exit(0);
}

/*
 * One user cannot take every activation group: past sa_max_user_groups a
 * CREATE is ENOSPC for that user alone; another user, and root, still get
 * theirs.
 */
TEST(per_user_group_limit)
{
	int ready[2], go[2], g, status;
	char old[32], n1 = 0, n2 = 0;
	pid_t a, b;

	NEED_SA();
	ASSERT_EQ(param_rw(USER_GROUPS_PARAM, old, sizeof(old), "3"), 0)
		TH_LOG("%s: %s", USER_GROUPS_PARAM, strerror(errno));
	ASSERT_EQ(pipe(ready), 0);
	ASSERT_EQ(pipe(go), 0);
	a = groups_as(65534, ready[1], go[0]);
	if (a > 0 && read(ready[0], &n1, 1) != 1)
		n1 = -1;
	b = groups_as(65533, ready[1], go[0]);
	if (b > 0 && read(ready[0], &n2, 1) != 1)
		n2 = -1;
	g = sa_create(2, ASX_SA_MIN_RING);
	EXPECT_EQ(write(go[1], "gg", 2), 2);
	if (a > 0)
		waitpid(a, &status, 0);
	if (b > 0)
		waitpid(b, &status, 0);
	EXPECT_EQ(param_rw(USER_GROUPS_PARAM, NULL, 0, old), 0);
	EXPECT_EQ(n1, 3) TH_LOG("groups nobody got with a limit of 3 (150: not ENOSPC)");
	EXPECT_EQ(n2, 3) TH_LOG("another user is not held back by the first");
	EXPECT_GE(g, 0) TH_LOG("root is exempt: %s", strerror(errno));
	if (g >= 0)
		close(g);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

/* A JOIN whose answer cannot be written is undone: the thread is no member. */
TEST(join_undone_when_the_answer_cannot_be_written)
{
	struct asx_sa_join *ro;
	long base;
	int g;

	NEED_SA();
	base = asx_kmembers();
	g = sa_create(4, 0);
	ASSERT_GE(g, 0);
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(ro, MAP_FAILED);
	ro->size = sizeof(*ro);
	ASSERT_EQ(mprotect(ro, 4096, PROT_READ), 0);
	errno = 0;
	EXPECT_EQ(ioctl(g, ASX_IOC_SA_JOIN, ro), -1) TH_LOG("the answer lands on a read-only page");
	EXPECT_EQ(errno, EFAULT);
	EXPECT_EQ(asx_kmembers(), base) TH_LOG("no member left behind");
	EXPECT_GE(sa_join(g), 0) TH_LOG("a JOIN after it works (not EBUSY): %s", strerror(errno));
	EXPECT_EQ(sa_leave(g), 0);
	munmap(ro, 4096);
	close(g);
	EXPECT_EQ(asx_settle_kmembers(base), base);
}

TEST(join_twice_is_ebusy)
{
	int g, g2;

	NEED_SA();
	g = sa_create(2, 0);
	g2 = sa_create(2, 0);
	ASSERT_GE(g, 0);
	ASSERT_GE(g2, 0);
	ASSERT_GE(sa_join(g), 0);
	errno = 0;
	EXPECT_EQ(sa_join(g), -1);
	EXPECT_EQ(errno, EBUSY);
	errno = 0;
	EXPECT_EQ(sa_join(g2), -1);
	EXPECT_EQ(errno, EBUSY);
	errno = 0;
	EXPECT_EQ(sa_leave(g2), -1);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_EQ(sa_leave(g), 0);
	close(g);
	close(g2);
}

static void on_usr1(int sig)
{
	(void)sig;
}

static void *kick_main(void *arg __attribute__((unused)))
{
	asx_msleep(100);
	kill(getpid(), SIGUSR1);
	return NULL;
}

TEST(wait_deadline_and_signal)
{
	struct asx_sa_event ev[1];
	struct sigaction sa;
	pthread_t t;
	sigset_t set;
	uint64_t t0;
	int g;

	NEED_SA();
	g = sa_create(1, 0);
	ASSERT_GE(g, 0);
	t0 = now_ns();
	EXPECT_EQ(sa_wait(g, ev, 1, 60), 0) TH_LOG("deadline passes: 0 events");
	EXPECT_GE(now_ns() - t0, 60000000ULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);	/* no SA_RESTART */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	ASSERT_EQ(pthread_create(&t, NULL, kick_main, NULL), 0);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	errno = 0;
	EXPECT_EQ(sa_wait(g, ev, 1, 10000), -1);
	EXPECT_EQ(errno, EINTR);
	pthread_join(t, NULL);
	close(g);
}

static int sa_post(int g, __u32 arg, __u32 flags)
{
	struct asx_sa_post p = { .size = sizeof(p), .flags = flags, .arg = arg };

	return ioctl(g, ASX_IOC_SA_POST, &p);
}

struct spare {
	int g;
	int n;			/* USER events taken: 0 or 1 */
	struct asx_sa_event ev;	/* the USER event */
	int others;		/* siblings' BLOCKED/UNBLOCKED taken meanwhile */
	int err;
};

/*
 * Joins, then waits (max 1) until it takes a USER event. While the threads
 * start, a sibling may really sleep after joining (its first stack fault
 * waits for mmap_lock while main makes the next thread): those events wake
 * a spare too, which counts them and parks again.
 */
static void *spare_main(void *arg)
{
	struct spare *s = arg;
	struct asx_sa_event ev;

	if (sa_join(s->g) < 0) {
		s->err = errno;
		return NULL;
	}
	for (;;) {
		if (sa_wait(s->g, &ev, 1, 10000) != 1) {
			s->err = errno ? errno : ETIMEDOUT;
			break;
		}
		if (ev.type == ASX_SA_USER) {
			s->ev = ev;
			__atomic_store_n(&s->n, 1, __ATOMIC_RELEASE);
			break;
		}
		s->others++;
	}
	if (sa_leave(s->g))
		s->err = errno;
	return NULL;
}

/* Each POST wakes exactly one parked spare with one USER event. */
TEST(post_wakes_one_spare_per_event)
{
	struct spare sp[3] = { 0 };
	struct asx_sa_event ev[16];
	struct asx_sa_post short_post = { .size = 8 };
	struct asx_sa_info in;
	pthread_t t[3];
	int g, i, n, got = 0, args = 0, others = 0, left = 0, parked;

	NEED_SA();
	g = sa_create(4, 0);
	ASSERT_GE(g, 0);
	errno = 0;
	EXPECT_EQ(sa_post(g, 1, 1), -1) TH_LOG("unknown flag");
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(ioctl(g, ASX_IOC_SA_POST, &short_post), -1) TH_LOG("short size");
	EXPECT_EQ(errno, EINVAL);
	ASSERT_EQ(sa_info(g, &in), 0);
	EXPECT_EQ(in.events, 0) TH_LOG("a refused post records nothing");

	for (i = 0; i < 3; i++) {
		sp[i].g = g;
		ASSERT_EQ(pthread_create(&t[i], NULL, spare_main, &sp[i]), 0);
	}
	for (i = 0, parked = 0; i < 500 && parked < 3; i++) {
		ASSERT_EQ(sa_info(g, &in), 0);
		parked = in.nr_vps;
		asx_msleep(10);
	}
	ASSERT_EQ(parked, 3);
	asx_msleep(100);

	ASSERT_EQ(sa_post(g, 7, 0), 0);
	ASSERT_EQ(sa_post(g, 9, 0), 0);
	for (i = 0; i < 500; i++) {
		for (int k = got = 0; k < 3; k++)
			got += __atomic_load_n(&sp[k].n, __ATOMIC_ACQUIRE);
		if (got == 2)
			break;
		asx_msleep(10);
	}
	EXPECT_EQ(got, 2) TH_LOG("two posts, two spares");
	asx_msleep(100);
	for (int k = got = 0; k < 3; k++)
		got += __atomic_load_n(&sp[k].n, __ATOMIC_ACQUIRE);
	EXPECT_EQ(got, 2) TH_LOG("the third spare stays parked");
	ASSERT_EQ(sa_post(g, 11, 0), 0);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(sp[i].err, 0) TH_LOG("%s", strerror(sp[i].err));
		ASSERT_EQ(sp[i].n, 1);
		EXPECT_EQ(sp[i].ev.type, ASX_SA_USER);
		EXPECT_EQ(sp[i].ev.vp, ASX_SA_NO_VP);
		EXPECT_EQ(sp[i].ev.tid, (__u32)gettid_());
		args |= sp[i].ev.arg == 7 ? 1 : sp[i].ev.arg == 9 ? 2 : sp[i].ev.arg == 11 ? 4 : 8;
		others += sp[i].others;
	}
	EXPECT_EQ(args, 7) TH_LOG("7, 9 and 11 each delivered once");
	EXPECT_TRUE(sp[0].ev.seq != sp[1].ev.seq && sp[1].ev.seq != sp[2].ev.seq &&
		    sp[0].ev.seq != sp[2].ev.seq);
	/* a leaving spare may still sleep (the mutex of LEAVE): no USER left */
	while ((n = sa_wait(g, ev, 16, 0)) > 0)
		for (i = 0; i < n; i++, left++) {
			EXPECT_NE(ev[i].type, ASX_SA_USER) TH_LOG("a post delivered twice");
		}
	ASSERT_EQ(sa_info(g, &in), 0);
	TH_LOG("%d sibling events while starting, %d while leaving", others, left);
	EXPECT_EQ(in.events, 3 + others + left) TH_LOG("every event taken once");
	EXPECT_EQ(in.lost, 0);
	EXPECT_EQ(in.nr_vps, 0);
	close(g);
}

TEST(rmmod_refused_while_a_group_is_open)
{
	int g;

	NEED_SA();
	g = sa_create(1, 0);
	ASSERT_GE(g, 0);
	errno = 0;
	EXPECT_EQ(syscall(SYS_delete_module, "asx", O_NONBLOCK), -1);
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("errno %d", errno);
	close(g);
}

TEST_HARNESS_MAIN
