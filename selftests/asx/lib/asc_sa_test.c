// SPDX-License-Identifier: GPL-2.0
/*
 * asc_sa_test.c - the ASC scheduler on asx.ko's scheduler activations:
 * a VP that blocks in a call the library never sees (a plain read(), a
 * futex wait inside libc's pthread_cond_wait, a page fault that waits for
 * its page: userfaultfd) no longer stops its capsule,
 * the running VPs come back to the target afterwards, many threads
 * blocking at random lose and duplicate nothing, and destroying an ASC
 * with spares parked in the kernel leaves no member behind.
 *
 * Each of these deadlocks on the wrapper path: with one VP (or two), the
 * thread that would release the blocked one never runs. A watchdog in the
 * test's main thread releases it after a few seconds and fails the test.
 */
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/sa.h>

#include "asx_util.h"
#include "asx_harness.h"

#define NEED_SA() do {								\
	int _r = asx_sa_probe();						\
	if (_r)									\
		SKIP(return, "no activations: %s", strerror(-_r));		\
} while (0)

static struct asx_asc *make_asc(unsigned int nvps, unsigned int max_vps)
{
	struct asx_asc_opts at = { .sz = sizeof(at), .nvps = nvps, .max_vps = max_vps,
				   .activations = ASX_ASC_ACT_ON };

	return asx_prio_asc(&at);
}

#define spawn asx_spawn_prio0

/* ---------------------------------------------------------------- one blocker */

enum how { BY_PIPE, BY_COND, BY_FAULT };

struct pair {
	int p[2];
	int uffd;		/* BY_FAULT: the page is missing until a UFFDIO_COPY */
	char *page;
	long pagesz;
	int started;		/* the blocker is about to block */
	int other_ran;		/* the releaser ran while the blocker was blocked */
	int done;
	pthread_mutex_t m;
	pthread_cond_t c;
	int flag;
};

static void *pipe_reader(void *arg)
{
	struct pair *pr = arg;
	char c;

	__atomic_store_n(&pr->started, 1, __ATOMIC_RELEASE);
	if (read(pr->p[0], &c, 1) == 1)	/* not asx_asc_read(): unwrapped */
		__atomic_store_n(&pr->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* A page fault the kernel resolves only when another thread supplies the
 * page (userfaultfd): the VP sleeps in the fault handler. */
static void *faulter(void *arg)
{
	struct pair *pr = arg;

	__atomic_store_n(&pr->started, 1, __ATOMIC_RELEASE);
	if (*(volatile char *)pr->page == 'Z')
		__atomic_store_n(&pr->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *cond_waiter(void *arg)
{
	struct pair *pr = arg;

	pthread_mutex_lock(&pr->m);
	__atomic_store_n(&pr->started, 1, __ATOMIC_RELEASE);
	while (!pr->flag)
		pthread_cond_wait(&pr->c, &pr->m);	/* a futex wait inside libc */
	pthread_mutex_unlock(&pr->m);
	__atomic_store_n(&pr->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wakes the blocker, whichever way it waits; false if the pipe write failed. */
static bool release(struct pair *pr, const char *c)
{
	if (pr->p[1] >= 0 && write(pr->p[1], c, 1) != 1)
		return false;
	if (pr->uffd >= 0) {
		char src[pr->pagesz];
		struct uffdio_copy cp = { .dst = (uintptr_t)pr->page, .src = (uintptr_t)src,
					  .len = (uint64_t)pr->pagesz };

		memset(src, 'Z', sizeof(src));
		/* EEXIST: the other side supplied it first */
		if (ioctl(pr->uffd, UFFDIO_COPY, &cp) && errno != EEXIST)
			return false;
	}
	pthread_mutex_lock(&pr->m);
	pr->flag = 1;
	pthread_cond_signal(&pr->c);
	pthread_mutex_unlock(&pr->m);
	return true;
}

/* Waits (yielding) until the blocker started, gives it time to block, then
 * releases it. On one VP it runs only if a spare took over. */
static void *releaser(void *arg)
{
	struct pair *pr = arg;
	uint64_t t;

	while (!__atomic_load_n(&pr->started, __ATOMIC_ACQUIRE))
		asx_asc_thread_yield();
	for (t = asx_now_ns(); asx_now_ns() - t < 20000000ULL;)
		asx_asc_thread_yield();
	__atomic_store_n(&pr->other_ran, 1, __ATOMIC_RELEASE);
	release(pr, "x");
	return NULL;
}

/* Main thread: up to 5 s for the pair to finish, else release it and fail. */
static bool watch(struct pair *pr, struct asx_asc *a)
{
	struct asx_asc_stats st;

	for (int i = 0; i < 500; i++) {
		if (__atomic_load_n(&pr->done, __ATOMIC_ACQUIRE))
			return true;
		asx_msleep(10);
	}
	asx_asc_stats(a, &st);
	fprintf(stderr, "# stuck: started %d other_ran %d; vps %u running %u blocked %u "
		"spare %u upcalls %llu takeovers %llu blocked-events %llu\n",
		pr->started, pr->other_ran, st.vps, st.vps_running, st.vps_blocked, st.vps_spare,
		(unsigned long long)st.upcalls, (unsigned long long)st.takeovers,
		(unsigned long long)st.sa_blocked);
	release(pr, "y");
	return false;
}

/* A userfaultfd region of one page, nothing in it yet; false if refused. */
static bool uffd_setup(struct pair *pr)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };

	pr->pagesz = sysconf(_SC_PAGESIZE);
	pr->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (pr->uffd < 0)
		return false;
	pr->page = mmap(NULL, (size_t)pr->pagesz, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (uintptr_t)pr->page;
	reg.range.len = (uint64_t)pr->pagesz;
	return pr->page != MAP_FAILED && !ioctl(pr->uffd, UFFDIO_API, &api) &&
	       !ioctl(pr->uffd, UFFDIO_REGISTER, &reg);
}

static void one_blocker(struct __test_metadata *_metadata, enum how how)
{
	static void *(*const blocker[])(void *) = { pipe_reader, cond_waiter, faulter };
	struct pair pr = { .m = PTHREAD_MUTEX_INITIALIZER, .c = PTHREAD_COND_INITIALIZER };
	struct asx_asc_thread *b, *r;
	struct asx_asc_stats st;
	struct asx_asc *a;
	bool ok;

	pr.p[0] = pr.p[1] = -1;
	pr.uffd = -1;
	if (how == BY_PIPE) {
		ASSERT_EQ(pipe(pr.p), 0);
	}
	if (how == BY_FAULT) {
		ASSERT_TRUE(uffd_setup(&pr)) TH_LOG("userfaultfd: %s", strerror(errno));
	}
	a = make_asc(1, 8);
	ASSERT_TRUE(a != NULL);
	ASSERT_EQ(asx_asc_stats(a, &st), 0);
	EXPECT_TRUE(st.activations);
	/* every VP parked (nothing to run yet): the pool and the one */
	for (int i = 0; i < 500 && st.vps_spare < st.vps; i++) {
		asx_msleep(10);
		ASSERT_EQ(asx_asc_stats(a, &st), 0);
	}
	ASSERT_EQ(st.vps_spare, 3);
	b = spawn(a, blocker[how], &pr);
	ASSERT_TRUE(b != NULL);
	r = spawn(a, releaser, &pr);
	ASSERT_TRUE(r != NULL);
	ok = watch(&pr, a);
	EXPECT_TRUE(ok) TH_LOG("the blocked VP's capsule stopped: nobody released it");
	EXPECT_TRUE(__atomic_load_n(&pr.other_ran, __ATOMIC_ACQUIRE));
	ASSERT_EQ(asx_asc_thread_join(b, NULL), 0);
	ASSERT_EQ(asx_asc_thread_join(r, NULL), 0);
	ASSERT_EQ(asx_asc_stats(a, &st), 0);
	TH_LOG("upcalls %llu takeovers %llu blocked %llu spares %u vps %u",
	       (unsigned long long)st.upcalls, (unsigned long long)st.takeovers,
	       (unsigned long long)st.sa_blocked, st.vps_spare, st.vps);
	EXPECT_GE(st.sa_blocked, 1);
	EXPECT_GE(st.takeovers, 1);
	EXPECT_EQ(st.sa_lost, 0);
	EXPECT_EQ(asx_asc_destroy(a), 0);
	if (how == BY_PIPE) {
		close(pr.p[0]);
		close(pr.p[1]);
	}
	if (how == BY_FAULT) {
		munmap(pr.page, (size_t)pr.pagesz);
		close(pr.uffd);
	}
}

/* a yielder for the single-VP path test */
static void *yield_some(void *arg)
{
	for (long i = 0; i < (long)(uintptr_t)arg; i++)
		asx_asc_thread_yield();
	return NULL;
}

/*
 * One VP on activations, the process's only one: the lock-free single-VP
 * path until a spare takes over (an asymmetric fence, Documentation/asc.rst),
 * then the locked path; the ASC keeps running throughout, and once the VPs
 * are parked again (the takeover over) the threads still yield.
 */
TEST(one_vp_keeps_the_single_vp_path_until_a_takeover)
{
	struct asx_asc_thread *t[2];
	struct asx_asc_stats st;
	struct asx_asc *a;
	bool single;

	NEED_SA();
	a = make_asc(1, 8);
	ASSERT_TRUE(a != NULL);
	/*
	 * The mode first, then the counts: a VP that blocks in the kernel
	 * while it starts (a page fault, a sanitizer's own lock) brings a
	 * parked one back with the news (an upcall), which locks it out (a
	 * takeover if there is a thread to run), and then the locked path is
	 * right.  The spare switches the mode before it counts the upcall
	 * under the ASC's lock: give the count a moment to appear.  Without
	 * either, it must still be the single-VP path.
	 */
	single = asx_asc_single_vp_mode();
	ASSERT_EQ(asx_asc_stats(a, &st), 0);
	for (int i = 0; i < 200 && !single && !st.upcalls && !st.takeovers; i++) {
		asx_msleep(10);
		ASSERT_EQ(asx_asc_stats(a, &st), 0);
	}
	EXPECT_TRUE(single || st.upcalls > 0 || st.takeovers > 0)
		TH_LOG("one VP on activations took the locked path with no upcall");
	if (!single)
		TH_LOG("the locked path from the start: %llu upcalls, %llu takeovers while the VPs started",
		       (unsigned long long)st.upcalls, (unsigned long long)st.takeovers);
	for (int i = 0; i < 2; i++) {
		t[i] = spawn(a, yield_some, (void *)(uintptr_t)20000);
		ASSERT_TRUE(t[i] != NULL);
	}
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(asx_asc_thread_join(t[i], NULL), 0);
	TH_LOG("after 40000 yields: single-VP mode %d", asx_asc_single_vp_mode());
	EXPECT_EQ(asx_asc_destroy(a), 0);
	/* a blocked VP from the single-VP path: a spare takes over */
	one_blocker(_metadata, BY_PIPE);
	one_blocker(_metadata, BY_FAULT);
}

TEST(unwrapped_read_keeps_the_capsule_running)
{
	NEED_SA();
	one_blocker(_metadata, BY_PIPE);
}

TEST(futex_wait_inside_libc_keeps_the_capsule_running)
{
	NEED_SA();
	one_blocker(_metadata, BY_COND);
}

/* The page fault waits in the kernel until the releaser supplies the page. */
TEST(page_fault_keeps_the_capsule_running)
{
	NEED_SA();
	one_blocker(_metadata, BY_FAULT);
}

/* ---------------------------------------------------------------- back to target */

struct spin {
	int stop;
	unsigned long n;
};

static void *yielder(void *arg)
{
	struct spin *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		asx_asc_thread_yield();
		s->n++;
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	asx_msleep(100);	/* nanosleep through libc: unwrapped */
	return NULL;
}

/*
 * Two VPs, a yielding thread and three that block at once: spares take over
 * while they sleep; when they wake, the surplus VPs park again at their next
 * scheduling point, so the running count comes back to the target.
 */
TEST(running_vps_come_back_to_the_target)
{
	struct asx_asc_thread *y[2], *s[3];
	struct spin sp[2] = { { 0 }, { 0 } };
	struct asx_asc_stats st;
	unsigned int peak = 0;
	struct asx_asc *a;
	int i;

	NEED_SA();
	a = make_asc(2, 16);
	ASSERT_TRUE(a != NULL);
	for (i = 0; i < 2; i++) {
		ASSERT_TRUE((y[i] = spawn(a, yielder, &sp[i])) != NULL);
	}
	for (i = 0; i < 3; i++) {
		ASSERT_TRUE((s[i] = spawn(a, sleeper, NULL)) != NULL);
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(asx_asc_thread_join(s[i], NULL), 0);
	}
	/* the yielders keep going: scheduling points for the woken VPs */
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(asx_asc_stats(a, &st), 0);
		if (st.vps_running > peak)
			peak = st.vps_running;
		/* A spare takes the last events when it next waits: on a slow kernel, later. */
		if (st.vps_running <= st.vps_target && !st.vps_blocked && st.sa_blocked >= 3)
			break;
		asx_msleep(10);
	}
	TH_LOG("running %u (peak seen %u) target %u blocked %u spare %u vps %u takeovers %llu",
	       st.vps_running, peak, st.vps_target, st.vps_blocked, st.vps_spare, st.vps,
	       (unsigned long long)st.takeovers);
	EXPECT_LE(st.vps_running, st.vps_target);
	EXPECT_EQ(st.vps_blocked, 0);
	EXPECT_GE(st.sa_blocked, 3) TH_LOG("three sleeps reported");
	for (i = 0; i < 2; i++)
		__atomic_store_n(&sp[i].stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(asx_asc_thread_join(y[i], NULL), 0);
		EXPECT_GT(sp[i].n, 0);
	}
	EXPECT_EQ(asx_asc_destroy(a), 0);
}

/* ---------------------------------------------------------------- stress */

#define NPAIRS	12
#define ROUNDS	150

struct chan {
	int p[2];
	int fail;
	unsigned long moved;
};

struct end {
	struct chan *ch;
	bool writer;
	unsigned int seed;
};

/*
 * Pairs of threads on two VPs pass ROUNDS numbered bytes through a pipe with
 * plain read() and write(). A reader blocks its VP until its writer runs;
 * with 12 readers blocked at once, only spares taking over keep the writers
 * running. Every byte arrives once, in order.
 */
static void *chan_end(void *arg)
{
	struct end *e = arg;
	struct chan *ch = e->ch;

	for (unsigned int i = 0; i < ROUNDS; i++) {
		unsigned char c = (unsigned char)i, got;

		if (e->writer) {
			unsigned int y = rand_r(&e->seed) % 8;

			while (y--)
				asx_asc_thread_yield();
			if (rand_r(&e->seed) % 4 == 0) {
				struct timespec ts = { 0, (long)(rand_r(&e->seed) % 200000) };

				nanosleep(&ts, NULL);	/* another unwrapped block */
			}
			if (write(ch->p[1], &c, 1) != 1)
				ch->fail++;
		} else {
			if (read(ch->p[0], &got, 1) != 1 || got != c)
				ch->fail++;
			else
				ch->moved++;
		}
	}
	return NULL;
}

TEST_TIMEOUT(many_threads_blocking_at_random_lose_nothing, 120)
{
	struct chan ch[NPAIRS];
	struct end e[2 * NPAIRS];
	struct asx_asc_thread *t[2 * NPAIRS];
	struct asx_asc_stats st;
	struct asx_asc *a;
	unsigned long moved = 0;
	int i, fails = 0;

	NEED_SA();
	a = make_asc(2, 64);
	ASSERT_TRUE(a != NULL);
	for (i = 0; i < NPAIRS; i++) {
		ASSERT_EQ(pipe(ch[i].p), 0);
		ch[i].fail = 0;
		ch[i].moved = 0;
	}
	/* readers first: they block the VPs before any writer is queued */
	for (i = 0; i < 2 * NPAIRS; i++) {
		e[i].ch = &ch[i % NPAIRS];
		e[i].writer = i >= NPAIRS;
		e[i].seed = (unsigned int)i * 7919u + 1;
		t[i] = spawn(a, chan_end, &e[i]);
		ASSERT_TRUE(t[i] != NULL);
	}
	for (i = 0; i < 2 * NPAIRS; i++) {
		ASSERT_EQ(asx_asc_thread_join(t[i], NULL), 0);
	}
	for (i = 0; i < NPAIRS; i++) {
		fails += ch[i].fail;
		moved += ch[i].moved;
		close(ch[i].p[0]);
		close(ch[i].p[1]);
	}
	EXPECT_EQ(fails, 0) TH_LOG("bytes lost, duplicated or out of order");
	EXPECT_EQ(moved, (unsigned long)NPAIRS * ROUNDS);
	for (i = 0; i < 300; i++) {
		ASSERT_EQ(asx_asc_stats(a, &st), 0);
		if (!st.vps_blocked && st.vps_running <= st.vps_target)
			break;
		asx_msleep(10);
	}
	TH_LOG("vps %u spare %u upcalls %llu takeovers %llu blocked %llu lost %llu",
	       st.vps, st.vps_spare, (unsigned long long)st.upcalls,
	       (unsigned long long)st.takeovers, (unsigned long long)st.sa_blocked,
	       (unsigned long long)st.sa_lost);
	EXPECT_EQ(st.vps_blocked, 0);
	EXPECT_LE(st.vps_running, st.vps_target);
	EXPECT_GE(st.takeovers, 1);
	EXPECT_EQ(st.threads, 0);
	/* the surplus spares leave after a second parked: target + pool stay */
	for (i = 0; i < 500 && st.vps > st.vps_target + 2; i++) {
		asx_msleep(10);
		ASSERT_EQ(asx_asc_stats(a, &st), 0);
	}
	TH_LOG("after the run: vps %u spare %u retired %llu", st.vps, st.vps_spare,
	       (unsigned long long)st.retired);
	EXPECT_EQ(st.vps, st.vps_target + 2);
	EXPECT_EQ(st.vps_spare, st.vps);
	EXPECT_GT(st.retired, 0);
	EXPECT_EQ(asx_asc_destroy(a), 0);
}

/* ---------------------------------------------------------------- teardown */

/* Destroy wakes every spare parked in the kernel; all of them leave. */
TEST(destroy_with_spares_parked_leaves_no_member)
{
	long before;

	NEED_SA();
	before = asx_kmembers();
	ASSERT_GE(before, 0);
	for (int i = 0; i < 20; i++) {
		struct asx_asc_opts at = { .sz = sizeof(at), .nvps = 1 + i % 3,
					   .activations = ASX_ASC_ACT_ON,
					   .spare_vps = 1 + i % 4 };
		struct asx_asc_stats st;
		struct asx_asc *a;
		uint64_t t0;

		ASSERT_EQ(asx_asc_create(&a, &asx_asc_prio, &at), 0);
		/* let the spares park (or not: destroy must cope either way) */
		if (i % 2)
			asx_msleep(20);
		ASSERT_EQ(asx_asc_stats(a, &st), 0);
		EXPECT_EQ(st.vps, at.nvps + at.spare_vps);
		t0 = asx_now_ns();
		ASSERT_EQ(asx_asc_destroy(a), 0);
		EXPECT_LT(asx_now_ns() - t0, 2000000000ULL)
			TH_LOG("destroy took %.3f s", (asx_now_ns() - t0) / 1e9);
	}
	EXPECT_EQ(asx_settle_kmembers(before), before) TH_LOG("members left behind");
}

static void *nap(void *arg)
{
	struct timespec ts = { 0, 100000 };

	(void)arg;
	nanosleep(&ts, NULL);	/* unwrapped: BLOCKED, a takeover, a refill */
	return NULL;
}

static void *busy(void *arg)
{
	(void)arg;
	for (int i = 0; i < 50; i++)
		asx_asc_thread_yield();
	return NULL;
}

/*
 * Destroy right after a takeover: a parked spare refills the pool while
 * destroy stops and joins the VPs.  A VP made then must be joined too, or
 * it outlives its ASC (TSan: thread leak; it runs on freed memory).
 */
TEST(destroy_during_a_pool_refill_joins_every_vp)
{
	struct asx_asc_opts at = { .sz = sizeof(at), .nvps = 1,
				   .activations = ASX_ASC_ACT_ON, .spare_vps = 2 };
	long before;

	NEED_SA();
	before = asx_kmembers();
	ASSERT_GE(before, 0);
	for (int i = 0; i < 100; i++) {
		struct asx_asc_thread *t[2];
		struct asx_asc *a;

		ASSERT_EQ(asx_asc_create(&a, &asx_asc_prio, &at), 0);
		t[0] = spawn(a, nap, NULL);
		t[1] = spawn(a, busy, NULL);
		ASSERT_TRUE(t[0] && t[1]);
		ASSERT_EQ(asx_asc_thread_join(t[0], NULL), 0);
		ASSERT_EQ(asx_asc_thread_join(t[1], NULL), 0);
		ASSERT_EQ(asx_asc_destroy(a), 0);
	}
	EXPECT_EQ(asx_settle_kmembers(before), before) TH_LOG("members left behind");
}

/* Every VP joins the group: the first VPs and the pool widen a small
 * max_vps, and asx_asc_add_vp() refuses the VP that would not fit. */
TEST(every_vp_fits_in_the_group)
{
	struct asx_asc_opts at = { .sz = sizeof(at), .nvps = 2, .max_vps = 2,
				   .activations = ASX_ASC_ACT_ON, .spare_vps = 2 };
	struct asx_asc_stats st;
	struct asx_asc *a, *b, *c = NULL;
	long before;
	int i, r;

	NEED_SA();
	before = asx_kmembers();
	ASSERT_GE(before, 0);
	ASSERT_EQ(asx_asc_create(&a, &asx_asc_prio, &at), 0);
	ASSERT_EQ(asx_asc_stats(a, &st), 0);
	EXPECT_EQ(st.vps, 4);
	EXPECT_EQ(asx_settle_kmembers(before + 4), before + 4) TH_LOG("a VP runs unreported");
	EXPECT_EQ(asx_asc_add_vp(a), -ENOSPC);

	at.nvps = 1;
	at.max_vps = 8;
	at.spare_vps = 1;
	ASSERT_EQ(asx_asc_create(&b, &asx_asc_prio, &at), 0);
	for (i = 0; i < 6; i++) {
		ASSERT_EQ(asx_asc_add_vp(b), 0) TH_LOG("VP %d", i);
	}
	r = asx_asc_add_vp(b);
	EXPECT_EQ(r, -ENOSPC) TH_LOG("%s", strerror(-r));
	ASSERT_EQ(asx_asc_stats(b, &st), 0);
	EXPECT_EQ(st.vps, 8);
	EXPECT_EQ(asx_settle_kmembers(before + 12), before + 12) TH_LOG("a VP runs unreported");

	/* more first VPs than a group can hold: refused, not half reported */
	at.nvps = ASX_SA_MAX_VPS;
	at.max_vps = 0;
	at.spare_vps = 1;
	EXPECT_EQ(asx_asc_create(&c, &asx_asc_prio, &at), -EINVAL);
	if (c)
		asx_asc_destroy(c);
	ASSERT_EQ(asx_asc_destroy(b), 0);
	ASSERT_EQ(asx_asc_destroy(a), 0);
	EXPECT_EQ(asx_settle_kmembers(before), before) TH_LOG("members left behind");
}

TEST_HARNESS_MAIN
