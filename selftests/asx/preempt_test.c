// SPDX-License-Identifier: GPL-2.0
/*
 * preempt_test.c - the PREEMPTED upcall (Documentation/sa.rst): a member
 * spinning beside a CPU hog pinned on its CPU gives PREEMPTED events, each
 * followed by its RESUMED; a group made without ASX_SA_PREEMPT gives none;
 * the per-member rate limit (sa_preempt_min_us) holds and the preemptions
 * it holds back are counted in the next event's arg; a member that sleeps
 * (a voluntary switch) is never reported preempted, nor is one that gives
 * its CPU to another member of its group.
 *
 * Invariant of every case: a PREEMPTED event stands for 1 + arg
 * involuntary switches of its member, so their sum never exceeds the
 * member's ru_nivcsw over its membership.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "asx_util.h"
#include "asx_harness.h"

#define PARAM	"/sys/module/asx/parameters/sa_preempt_min_us"
#define NEV	4096

#define NEED_PREEMPT() do {							\
	if (!asx_has_features(ASX_FEAT_SA_PREEMPT))							\
		SKIP(return, "asx.ko without ASX_FEAT_SA_PREEMPT");		\
} while (0)

static int group(__u32 flags)
{
	return asx_sa_group_fd(flags, 4, 0);
}

static int join_leave(int g, unsigned long cmd)
{
	struct asx_sa_join j = { .size = sizeof(j) };

	if (ioctl(g, cmd, &j))
		return -1;
	return (int)j.vp;
}

/* Every pending event, without waiting. */
static int drain(int g, struct asx_sa_event *ev, int max)
{
	int n = 0;

	while (n < max) {
		struct asx_sa_wait w = { .size = sizeof(w), .events = (uintptr_t)(ev + n),
					 .max = max - n > ASX_SA_WAIT_MAX ?
						ASX_SA_WAIT_MAX : (unsigned int)(max - n) };
		int k = ioctl(g, ASX_IOC_SA_WAIT, &w);

		if (k <= 0)
			break;
		n += k;
	}
	return n;
}

static long rd_param(void)
{
	char buf[32] = "";
	int fd = open(PARAM, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static int wr_param(long us)
{
	char buf[32];
	int fd = open(PARAM, O_WRONLY), n, ret;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld\n", us);
	ret = write(fd, buf, n) == n ? 0 : -1;
	close(fd);
	return ret;
}

/* A member: spins (or sleeps) on CPU 0 until told to stop. */
struct member {
	int g;			/* -1: a plain hog */
	bool sleeper;		/* sleeps 1 ms at a time instead of spinning */
	volatile int *stop;
	int vp;
	pid_t tid;
	long nivcsw, nvcsw;	/* over its membership */
	int err;
};

static void *member_main(void *arg)
{
	struct member *m = arg;
	struct rusage r0, r1;
	struct timespec ms = { 0, 1000000 };

	m->tid = (pid_t)syscall(SYS_gettid);
	/* the counts span JOIN and LEAVE: their own sleeps are counted */
	getrusage(RUSAGE_THREAD, &r0);
	if (m->g >= 0) {
		m->vp = join_leave(m->g, ASX_IOC_SA_JOIN);
		if (m->vp < 0) {
			m->err = errno;
			return NULL;
		}
	}
	while (!__atomic_load_n(m->stop, __ATOMIC_RELAXED))
		if (m->sleeper)
			nanosleep(&ms, NULL);
	if (m->g >= 0 && join_leave(m->g, ASX_IOC_SA_LEAVE) < 0)
		m->err = errno;
	getrusage(RUSAGE_THREAD, &r1);
	m->nivcsw = r1.ru_nivcsw - r0.ru_nivcsw;
	m->nvcsw = r1.ru_nvcsw - r0.ru_nvcsw;
	return NULL;
}

/*
 * Runs member @m (and a hog when @hog: a plain thread, or a member of
 * @hog_group when that is >= 0) pinned on CPU 0 for @ms.
 */
static int run_on_cpu0_with(struct member *m, bool hog, int hog_group, long ms,
			    struct member *hog_out)
{
	struct member h = { .g = hog_group, .vp = -1 };
	volatile int stop = 0;
	pthread_attr_t attr;
	pthread_t t[2];
	cpu_set_t cpus;
	int n = 0, i;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	pthread_attr_init(&attr);
	if (pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus))
		return -1;
	m->stop = &stop;
	h.stop = &stop;
	if (pthread_create(&t[n], &attr, member_main, m))
		return -1;
	n++;
	if (hog && !pthread_create(&t[n], &attr, member_main, &h))
		n++;
	asx_msleep(ms);
	stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_attr_destroy(&attr);
	if (hog_out)
		*hog_out = h;
	if (h.err)
		return -1;
	return n == 1 + hog ? 0 : -1;
}

static int run_on_cpu0(struct member *m, bool hog, long ms)
{
	return run_on_cpu0_with(m, hog, -1, ms, NULL);
}

/* What the events of one member say, checked against the rules. */
struct tally {
	int preempted, resumed, blocked, unblocked, other;
	long switches;		/* sum of 1 + arg over PREEMPTED */
	uint64_t min_gap;	/* shortest time between two PREEMPTED */
	bool order_ok;		/* PREEMPTED and RESUMED alternate, seq consecutive */
	long max_arg;
};

static void tally(const struct asx_sa_event *ev, int n, const struct member *m,
		  struct tally *t)
{
	uint64_t last = 0;
	bool in = false;

	memset(t, 0, sizeof(*t));
	t->min_gap = UINT64_MAX;
	t->order_ok = true;
	for (int i = 0; i < n; i++) {
		const struct asx_sa_event *e = &ev[i];

		if (i && e->seq != ev[i - 1].seq + 1)
			t->order_ok = false;
		if (e->vp != (unsigned int)m->vp || e->tid != (unsigned int)m->tid) {
			t->other++;
			continue;
		}
		switch (e->type) {
		case ASX_SA_PREEMPTED:
			if (in)
				t->order_ok = false;
			in = true;
			t->preempted++;
			t->switches += 1 + (long)e->arg;
			if ((long)e->arg > t->max_arg)
				t->max_arg = e->arg;
			if (last && e->ts_ns - last < t->min_gap)
				t->min_gap = e->ts_ns - last;
			last = e->ts_ns;
			break;
		case ASX_SA_RESUMED:
			if (!in)
				t->order_ok = false;
			in = false;
			t->resumed++;
			break;
		case ASX_SA_BLOCKED:
			t->blocked++;
			break;
		case ASX_SA_UNBLOCKED:
			t->unblocked++;
			break;
		default:
			t->other++;
			break;
		}
	}
	/* the member left running: its last PREEMPTED has its RESUMED */
	if (in)
		t->order_ok = false;
}

TEST(hog_beside_a_member_gives_preempted)
{
	struct member m = { .vp = -1 };
	struct asx_sa_event *ev = calloc(NEV, sizeof(*ev));
	struct tally t;
	int n;

	NEED_PREEMPT();
	ASSERT_NE(ev, NULL);
	m.g = group(ASX_SA_PREEMPT);
	ASSERT_GE(m.g, 0) TH_LOG("SA_CREATE with ASX_SA_PREEMPT: %s", strerror(errno));
	ASSERT_EQ(run_on_cpu0(&m, true, 600), 0);
	ASSERT_EQ(m.err, 0) TH_LOG("%s", strerror(m.err));
	n = drain(m.g, ev, NEV);
	tally(ev, n, &m, &t);
	TH_LOG("%d PREEMPTED (%ld switches, max arg %ld), %ld involuntary switches",
	       t.preempted, t.switches, t.max_arg, m.nivcsw);
	EXPECT_GT(m.nivcsw, 0) TH_LOG("the hog preempted the member");
	EXPECT_GT(t.preempted, 0);
	EXPECT_EQ(t.resumed, t.preempted);
	EXPECT_TRUE(t.order_ok) TH_LOG("PREEMPTED/RESUMED alternate, seq consecutive");
	EXPECT_EQ(t.blocked, 0) TH_LOG("a preempted member is not blocked");
	EXPECT_EQ(t.other, 0);
	EXPECT_LE(t.switches, m.nivcsw);
	free(ev);
	close(m.g);
}

TEST(no_preempted_without_the_flag)
{
	struct member m = { .vp = -1 };
	struct asx_sa_event ev[64];
	int n;

	NEED_PREEMPT();
	m.g = group(0);
	ASSERT_GE(m.g, 0);
	ASSERT_EQ(run_on_cpu0(&m, true, 400), 0);
	ASSERT_EQ(m.err, 0);
	n = drain(m.g, ev, 64);
	for (int i = 0; i < n; i++)
		TH_LOG("event type %u vp %u", ev[i].type, ev[i].vp);
	EXPECT_EQ(n, 0);
	EXPECT_GT(m.nivcsw, 0) TH_LOG("the member was preempted");
	close(m.g);
}

static bool is_rt(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, "PREEMPT_RT");
}

/*
 * Two members of one group take turns on a CPU: the switches between them
 * are not reported; other tasks (kernel threads) preempting either still
 * are, so the events are compared with the switches, not with 0.
 */
TEST(a_switch_to_a_member_of_the_group_is_not_reported)
{
	struct member m = { .vp = -1 }, h;
	struct asx_sa_event *ev = calloc(NEV, sizeof(*ev));
	struct tally tm, th;
	long old;
	int n;

	NEED_PREEMPT();
	ASSERT_NE(ev, NULL);
	m.g = group(ASX_SA_PREEMPT);
	ASSERT_GE(m.g, 0);
	old = rd_param();
	if (old < 0 || wr_param(0))
		SKIP(goto out, "cannot set %s (not root?)", PARAM);
	ASSERT_EQ(run_on_cpu0_with(&m, true, m.g, 1000, &h), 0);
	EXPECT_EQ(wr_param(old), 0);
	ASSERT_EQ(m.err, 0);
	n = drain(m.g, ev, NEV);
	tally(ev, n, &m, &tm);
	tally(ev, n, &h, &th);
	TH_LOG("PREEMPTED %d and %d; involuntary switches %ld and %ld",
	       tm.preempted, th.preempted, m.nivcsw, h.nivcsw);
	EXPECT_GT(m.nivcsw + h.nivcsw, 10) TH_LOG("the members took turns");
	EXPECT_LE(tm.switches + th.switches, m.nivcsw + h.nivcsw);
	/*
	 * Most switches are to each other: unreported. Not on PREEMPT_RT,
	 * where nearly every preemption is reported (most likely a kernel
	 * thread doing softirq or timer work comes in between: see
	 * Documentation/sa.rst, "Preemption").
	 */
	if (!is_rt())
		EXPECT_LT(2 * (tm.switches + th.switches), m.nivcsw + h.nivcsw);
out:
	free(ev);
	close(m.g);
}

TEST(unknown_create_flag_refused)
{
	struct asx_sa_create c = { .size = sizeof(c), .flags = 0x4 };
	int dev;

	NEED_PREEMPT();
	dev = asx_open(0);
	ASSERT_GE(dev, 0);
	EXPECT_EQ(ioctl(dev, ASX_IOC_SA_CREATE, &c), -1);
	EXPECT_EQ(errno, EINVAL);
	close(dev);
}

#define RATE_US		50000	/* the limit set for the test */
#define RATE_MS		1500	/* how long the member runs under it */

TEST_TIMEOUT(rate_limit_holds, 60)
{
	struct member m = { .vp = -1 };
	struct asx_sa_event *ev = calloc(NEV, sizeof(*ev));
	long old = rd_param();
	uint64_t t0;
	long el_ms;
	struct tally t;
	int n;

	NEED_PREEMPT();
	ASSERT_NE(ev, NULL);
	if (old < 0 || wr_param(RATE_US))
		SKIP(goto out, "cannot set %s (not root?)", PARAM);
	m.g = group(ASX_SA_PREEMPT);
	ASSERT_GE(m.g, 0);
	t0 = asx_mono_ns();
	ASSERT_EQ(run_on_cpu0(&m, true, RATE_MS), 0);
	el_ms = (long)((asx_mono_ns() - t0) / 1000000);
	EXPECT_EQ(wr_param(old), 0);
	ASSERT_EQ(m.err, 0);
	n = drain(m.g, ev, NEV);
	tally(ev, n, &m, &t);
	TH_LOG("%d PREEMPTED in %ld ms (limit %d us), %ld switches reported, %ld involuntary, "
	       "shortest gap %llu us", t.preempted, el_ms, RATE_US, t.switches, m.nivcsw,
	       (unsigned long long)(t.min_gap / 1000));
	EXPECT_GT(t.preempted, 0);
	EXPECT_LE(t.preempted, el_ms * 1000 / RATE_US + 1);
	if (t.preempted > 1)
		EXPECT_GE(t.min_gap, (uint64_t)RATE_US * 1000);
	EXPECT_TRUE(t.order_ok);
	EXPECT_EQ(t.resumed, t.preempted);
	EXPECT_LE(t.switches, m.nivcsw);
	/* more preemptions than events: those held back are counted in arg */
	if (m.nivcsw > t.preempted + 1)
		EXPECT_GT(t.max_arg, 0);
	close(m.g);
out:
	free(ev);
}

TEST(a_sleep_is_not_a_preemption)
{
	struct member m = { .vp = -1, .sleeper = true };
	struct asx_sa_event *ev = calloc(NEV, sizeof(*ev));
	struct tally t;
	int n;

	NEED_PREEMPT();
	ASSERT_NE(ev, NULL);
	m.g = group(ASX_SA_PREEMPT);
	ASSERT_GE(m.g, 0);
	ASSERT_EQ(run_on_cpu0(&m, false, 300), 0);
	ASSERT_EQ(m.err, 0);
	n = drain(m.g, ev, NEV);
	tally(ev, n, &m, &t);
	TH_LOG("%d BLOCKED, %d PREEMPTED; %ld voluntary, %ld involuntary switches",
	       t.blocked, t.preempted, m.nvcsw, m.nivcsw);
	EXPECT_GT(t.blocked, 10);
	EXPECT_EQ(t.blocked, t.unblocked);
	/* each sleep is a voluntary switch: none of them is reported preempted */
	EXPECT_LE(t.switches, m.nivcsw);
	EXPECT_LE(t.blocked, m.nvcsw);
	EXPECT_TRUE(t.order_ok);
	free(ev);
	close(m.g);
}

TEST_HARNESS_MAIN
