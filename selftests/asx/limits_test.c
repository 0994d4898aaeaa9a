// SPDX-License-Identifier: GPL-2.0
/*
 * limits_test.c - what one unprivileged user can make asx.ko hold: message
 * memory is charged to the writer's memory cgroup, so a cgroup's
 * memory.max bounds it and the OOM killer (if any) acts inside that cgroup;
 * Streams held by a mux count against the linking user's RLIMIT_NOFILE.
 *
 * Needs cgroup v2 with the memory controller (mounted here if it is not).
 */
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "asx_util.h"
#include "cgroup_util.h"
#include "asx_harness.h"

#define CG_LIMIT_MB	16
#define FLOOD_MB	96	/* Streams of about 1 MB the writer tries to fill */

/*
 * As nobody in @cg: Streams whose head read queue may hold 1 MB (what any
 * user may set), each written to until flow control stops the writer, and
 * nobody reads: about 1.1 MB a Stream.
 */
static void flood(const char *cg)
{
	static char data[4000];
	int fd, i;

	if (cg_enter(cg))
		_exit(20);
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(21);
	for (i = 0; i < FLOOD_MB; i++) {
		fd = asx_open(O_NONBLOCK);
		if (fd < 0)
			_exit(errno == ENOMEM ? 12 : 22);
		if (asx_setwm(fd, 0, ASX_SIDE_READ, 1 << 20, 1 << 18))
			_exit(23);
		while (write(fd, data, sizeof(data)) == sizeof(data))
			;
		if (errno != EAGAIN)
			_exit(errno == ENOMEM ? 12 : 24);
	}
	_exit(0);	/* all of it pinned: the limit did not hold */
}

/*
 * Before message memory was charged, 96 MB of high-priority messages went
 * through a 16 MB cgroup while memory.peak said a few hundred KB.
 */
TEST_TIMEOUT(messages_are_charged_to_the_writers_cgroup, 120)
{
	char cg[128], max[32];
	long peak, ooms, base;
	int status;
	pid_t pid;

	ASSERT_EQ(cg_setup(), 0) TH_LOG("cgroup v2: %s", strerror(errno));
	base = asx_objects("dblks");
	snprintf(cg, sizeof(cg), "%s/asx-limits.%d", cg_root, getpid());
	ASSERT_EQ(mkdir(cg, 0755), 0) TH_LOG("%s: %s (memory controller?)", cg, strerror(errno));
	snprintf(max, sizeof(max), "%dM", CG_LIMIT_MB);
	ASSERT_EQ(write_file(cg, "memory.max", max), 0) TH_LOG("memory.max: %s", strerror(errno));
	write_file(cg, "memory.swap.max", "0");
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		flood(cg);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	peak = read_key(cg, "memory.peak", NULL);
	ooms = read_key(cg, "memory.events", "oom_kill");
	TH_LOG("writer: %s %d; cgroup: memory.peak %ld KB, oom_kill %ld",
	       WIFSIGNALED(status) ? "killed by signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), peak / 1024, ooms);
	EXPECT_TRUE((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) ||
		    (WIFEXITED(status) && WEXITSTATUS(status) == 12))
		TH_LOG("the writer stopped at the limit (killed or ENOMEM), status %#x", status);
	EXPECT_GT(peak, (long)CG_LIMIT_MB * 1024 * 1024 / 2) TH_LOG("the cgroup saw the memory");
	EXPECT_TRUE(!WIFSIGNALED(status) || ooms >= 1)
		TH_LOG("a kill is the cgroup's OOM killer's");
	EXPECT_EQ(rmdir(cg), 0) TH_LOG("%s: %s", cg, strerror(errno));
	asx_quiesce();
	EXPECT_LE(asx_objects("dblks"), base) TH_LOG("the writer's messages went with it");
	cg_teardown();
}

#define HIPRI_SENT	1000

/*
 * High-priority messages skip flow control: a queue keeps the first
 * ASX_MAX_HIPRI_QUEUED and drops (and counts) the rest, so a user cannot
 * pin memory with them. Run as nobody.
 */
TEST(high_priority_messages_are_bounded_per_queue)
{
	struct asx_qstats qs;
	struct asx_strmsg sm;
	char ctl[8], data[4000];
	int fd, i, got = 0, bad = 0;
	long base;

	base = asx_objects("dblks");
	ASSERT_EQ(setgroups(0, NULL) || setgid(65534) || setuid(65534), 0);
	fd = asx_open(O_NONBLOCK);
	ASSERT_GE(fd, 0);
	for (i = 0; i < HIPRI_SENT; i++) {
		memset(data, i & 0xff, sizeof(data));
		ASSERT_EQ(asx_putmsg(fd, &i, sizeof(i), data, sizeof(data), ASX_MSG_HIPRI, 0), 0)
			TH_LOG("PUTMSG %d: %s", i, strerror(errno));
	}
	ASSERT_EQ(asx_qstats(fd, 0, ASX_SIDE_READ, &qs), 0);
	EXPECT_EQ(qs.msgs, ASX_MAX_HIPRI_QUEUED) TH_LOG("queued at the head");
	EXPECT_EQ(qs.drops, HIPRI_SENT - ASX_MAX_HIPRI_QUEUED) TH_LOG("dropped and counted");
	EXPECT_LE(asx_objects("dblks") - base, 2 * ASX_MAX_HIPRI_QUEUED)
		TH_LOG("kernel memory held");
	while (!asx_getmsg(fd, ASX_IOC_GETMSG, &sm, ctl, sizeof(ctl), data, sizeof(data),
			   ASX_MSG_HIPRI, 0)) {
		memcpy(&i, ctl, sizeof(i));
		bad += i != got || (unsigned char)data[0] != (got & 0xff);
		got++;
	}
	EXPECT_EQ(errno, EAGAIN);
	EXPECT_EQ(got, ASX_MAX_HIPRI_QUEUED) TH_LOG("the first ones are kept");
	EXPECT_EQ(bad, 0) TH_LOG("in order");
	close(fd);
}

/*
 * Zero-length messages carry no bytes but cost a message block each: they
 * count toward the water marks, so flow control stops a writer of them.
 * Run as nobody.
 */
TEST(zero_length_messages_are_flow_controlled)
{
	long base = asx_objects("msgs");
	int fd, n = 0;

	ASSERT_EQ(setgroups(0, NULL) || setgid(65534) || setuid(65534), 0);
	fd = asx_open(O_NONBLOCK);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(asx_opt(fd, ASX_IOC_SWROPT, ASX_SNDZERO), 0) TH_LOG("%s", strerror(errno));
	while (n < 100000 && write(fd, "", 0) == 0)
		n++;
	EXPECT_EQ(errno, EAGAIN) TH_LOG("after %d zero-length writes", n);
	TH_LOG("%d zero-length messages queued before the writer was stopped", n);
	EXPECT_LT(n, 2 * ASX_DEF_HIWAT / 256 + 64) TH_LOG("bounded by the water marks");
	EXPECT_LT(asx_objects("msgs") - base, 2 * ASX_DEF_HIWAT / 256 + 64);
	close(fd);
}

#define NOFILE		32
#define LOWERS_TRIED	200

/*
 * As nobody with RLIMIT_NOFILE 32: link lowers under mux uppers, closing
 * each lower's descriptor, a new upper whenever one is full. Exits with the
 * number linked (0-200) or 250 + a setup step.
 */
static void link_and_close(void)
{
	struct rlimit rl = { NOFILE, NOFILE };
	struct asx_link lk;
	int u = -1, l, n = 0, i;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534) ||
	    setrlimit(RLIMIT_NOFILE, &rl))
		_exit(250);
	for (i = 0; i < LOWERS_TRIED; i++) {
		if (u < 0) {
			u = asx_open(0);
			if (u < 0 || asx_setdrv(u, "mux"))
				_exit(251);
		}
		l = asx_open(0);
		if (l < 0)
			_exit(252);
		memset(&lk, 0, sizeof(lk));
		lk.size = sizeof(lk);
		lk.fd = l;
		if (ioctl(u, ASX_IOC_LINK, &lk)) {
			if (errno == ETOOMANYREFS)
				break;
			if (errno != ENOSR)
				_exit(253);
			u = -1;		/* this upper is full: keep it, open another */
			i--;
		} else {
			n++;
		}
		close(l);
	}
	_exit(n);
}

/*
 * Streams linked under a mux outlive their descriptors; they count against
 * the linking user's RLIMIT_NOFILE (8 uppers once kept 520 Streams alive
 * with a limit of 32).
 */
TEST(mux_lowers_count_against_rlimit_nofile)
{
	long base = asx_objects("streams");
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		link_and_close();
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(WEXITSTATUS(status), NOFILE)
		TH_LOG("lowers linked (250+: setup failed; %d: no limit)", LOWERS_TRIED);
	asx_quiesce();
	EXPECT_LE(asx_objects("streams"), base) TH_LOG("every Stream went with its process");
}

#define BUDGET		(4 << 20)
#define PARAMS		"/sys/module/asx/parameters"

/*
 * As nobody, with user_max_bytes at BUDGET: Streams with 1 MB water marks
 * filled until the budget says no, then STR and PUTMSG refused too, then
 * everything closed and the budget there again. Exits 0, or a step.
 */
static void fill_budget(void)
{
	static char data[4000];
	int fds[16], i, k, fd;
	long bytes = 0;
	ssize_t w;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(30);
	for (i = 0; i < 16; i++) {
		fds[i] = asx_open(O_NONBLOCK);
		if (fds[i] < 0)
			_exit(31);
		w = asx_fill_stream(fds[i], 1000);
		if (w < 0)
			_exit(31);
		bytes += w;
		if (errno == ENOBUFS)
			break;
		if (errno != EAGAIN)
			_exit(32);
	}
	if (i == 16)
		_exit(33);	/* 16 MB queued: no budget */
	/* A 4000-byte message costs a page and a header: 4352 bytes. */
	if (bytes > BUDGET || bytes < BUDGET / 4352 * 4000 - 256 * 1024)
		_exit(34);
	/* An STR held after its caller gave up used to escape every bound. */
	if (asx_str(fds[0], 0x1234, data, sizeof(data), 0, NULL) != -1 || errno != ENOBUFS)
		_exit(35);
	/* Where the write was refused (not full: no flow control), as large. */
	if (asx_putmsg(fds[i], data, 8, data, sizeof(data), 0, 0) != -1 || errno != ENOBUFS)
		_exit(36);
	for (k = 0; k <= i; k++)
		close(fds[k]);
	/* Closed Streams free their messages (after a grace period): the budget is back. */
	fd = asx_open(O_NONBLOCK);
	if (fd < 0)
		_exit(37);
	for (k = 0; k < 500 && asx_fill_stream(fd, 1) == 0 && errno == ENOBUFS; k++)
		asx_msleep(10);
	if (asx_fill_stream(fd, 1000) < 0)
		_exit(37);
	_exit(errno == EAGAIN ? 0 : 38);
}

/*
 * One user's messages across all the Streams it opened are bounded by the
 * module parameter user_max_bytes (like pipe-user-pages-hard), whatever
 * its memory cgroup allows; root is exempt.
 */
TEST(messages_count_in_a_per_user_budget)
{
	long old = read_key(PARAMS, "user_max_bytes", NULL);
	char val[32];
	int status, fds[6], i, enobufs = 0;
	pid_t pid;

	ASSERT_GE(old, 0) TH_LOG(PARAMS "/user_max_bytes");
	snprintf(val, sizeof(val), "%d", BUDGET);
	ASSERT_EQ(write_file(PARAMS, "user_max_bytes", val), 0);
	pid = fork();
	if (!pid)
		fill_budget();
	EXPECT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("nobody's run: status %#x (30+: the step that failed)", status);
	/* Root (CAP_SYS_RESOURCE) goes past it. */
	for (i = 0; i < 6; i++) {
		fds[i] = asx_open(O_NONBLOCK);
		EXPECT_GE(fds[i], 0);
		EXPECT_GE(asx_fill_stream(fds[i], 1000), 0);
		enobufs += errno == ENOBUFS;
	}
	EXPECT_EQ(enobufs, 0) TH_LOG("root was refused");
	for (i = 0; i < 6; i++)
		close(fds[i]);
	snprintf(val, sizeof(val), "%ld", old);
	EXPECT_EQ(write_file(PARAMS, "user_max_bytes", val), 0) TH_LOG("restoring user_max_bytes");
}

#define LONG_QUEUE	30000
#define SYSCTL		"/proc/sys/kernel"

/* As nobody: @n one-byte messages on a Stream, waiting on the queue of @level and @side. */
static int long_queue(unsigned int level, unsigned int side, int n)
{
	int fd = asx_open(O_NONBLOCK);

	if (fd < 0)
		_exit(30);
	/* Level 0's read queue: the messages wait there, or it stays full. */
	if (asx_setwm(fd, 0, ASX_SIDE_READ, level == 0 ? ASX_MAX_HIWAT_USER : 1, 0) ||
	    asx_setwm(fd, level, side, ASX_MAX_HIWAT_USER, ASX_MAX_HIWAT_USER / 2))
		_exit(31);
	while (n--)
		if (write(fd, "x", 1) != 1)
			_exit(32);
	return fd;
}

static void flush_long_queues(void)
{
	struct asx_nread nr;
	int fd;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(33);
	/* FLUSHR empties the head's read queue in the ioctl. */
	fd = long_queue(0, ASX_SIDE_READ, LONG_QUEUE);
	if (asx_flush(fd, ASX_FLUSHR, 0) || asx_nread(fd, &nr) || nr.msgs)
		_exit(34);
	close(fd);
	/* FLUSHW reaches the loop driver, whose put procedure empties its write queue. */
	fd = long_queue(ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, LONG_QUEUE);
	if (asx_flush(fd, ASX_FLUSHW, 0))
		_exit(35);
	close(fd);
	_exit(0);
}

/*
 * A FLUSH once freed its whole queue in one go, in a put procedure where
 * nothing may sleep: under the debug kernel (KASAN) the soft lockup detector
 * saw a CPU held for 23 s. With the detector at its quickest (2 s, at
 * watchdog_thresh 1), 30,000 messages trip it there. And what a flush hands
 * on to be freed later is all freed: the message count returns to where it
 * was.
 */
TEST_TIMEOUT(flushing_a_long_queue_does_not_hold_the_cpu, 300)
{
	long thresh = read_key(SYSCTL, "watchdog_thresh", NULL);
	int status, i;
	long base;
	pid_t pid;

	ASSERT_EQ(asx_quiesce(), 0) TH_LOG("Streams of earlier tests still being freed");
	base = asx_objects("msgs");
	if (thresh < 0) {
		TH_LOG("no %s/watchdog_thresh: the soft lockup detector cannot check this",
		       SYSCTL);
	} else {
		ASSERT_EQ(write_file(SYSCTL, "watchdog_thresh", "1"), 0)
			TH_LOG("%s", strerror(errno));
	}
	pid = fork();
	if (!pid)
		flush_long_queues();
	EXPECT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("nobody's run: status %#x (30+: the step that failed)", status);
	if (thresh >= 0) {
		char val[32];

		/* Give the detector the time to see a held CPU, at least one period. */
		asx_msleep(3000);
		snprintf(val, sizeof(val), "%ld", thresh);
		EXPECT_EQ(write_file(SYSCTL, "watchdog_thresh", val), 0) TH_LOG("restoring it");
	}
	/* Freeing is slow under KASAN: allow it a minute. */
	for (i = 0; i < 60 && asx_objects("msgs") != base; i++)
		asx_msleep(1000);
	EXPECT_EQ(asx_objects("msgs"), base) TH_LOG("messages left behind by the flushes");
}

TEST_HARNESS_MAIN
