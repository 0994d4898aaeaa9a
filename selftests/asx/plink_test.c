// SPDX-License-Identifier: GPL-2.0
/*
 * plink_test.c - persistent links (streamio(7)'s I_PLINK and I_PUNLINK) on
 * the named muxes of asx.ko: a Stream opened on "mux.N" (SETDRV, the one
 * non-XSI step) is one of unit N's Streams; a lower linked with I_PLINK is
 * the unit's, outlives the Stream and the process that linked it, and a
 * later open of "mux.N" reaches it again.  Checked: the data path both ways
 * across closes and processes, every error case of the specification that
 * applies, who may open a unit and undo its links (as nobody), that the
 * Streams come back to their count once the links are undone, and a stress
 * run (4 lowers, Streams of the unit opened and closed meanwhile): nothing
 * lost, nothing duplicated, order kept.
 */
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <asx/stropts.h>

#include "asx_util.h"
#include "asx_harness.h"

#define MAX_LOWERS	64	/* lowers of one mux or unit (kmod/mux.c's ASX_MAX_LOWERS) */

/* Each test its own units, so that a failed one leaves no link in another's way. */
enum { UNIT_PATH = 200, UNIT_ERR, UNIT_ROOT, UNIT_NOBODY, UNIT_STRESS };

static int mux_open(int unit)
{
	char name[ASX_NAME_MAX];
	int fd = open(ASX_DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	snprintf(name, sizeof(name), "mux.%d", unit);
	if (asx_setdrv(fd, name)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Sends @len bytes down the mux @fd to lower @id. */
static int mux_send(int fd, int id, const void *data, int len)
{
	struct asx_mux_hdr h = { .id = (__u32)id };
	struct strbuf c = { 0, sizeof(h), (char *)&h };
	struct strbuf d = { 0, len, (char *)data };

	return putmsg(fd, &c, &d, 0);
}

/* One message up the mux @fd: its length (the lower's id in *@id), or -1. */
static int mux_recv(int fd, int *id, void *data, int max)
{
	struct asx_mux_hdr h = { 0 };
	struct strbuf c = { sizeof(h), 0, (char *)&h };
	struct strbuf d = { max, 0, data };
	int flags = 0;

	if (getmsg(fd, &c, &d, &flags) < 0)
		return -1;
	if (c.len != (int)sizeof(h))
		return -1;
	*id = (int)h.id;
	return d.len;
}

/* Whether a message is readable at @fd within @ms. */
static bool readable(int fd, int ms)
{
	return asx_poll1(fd, POLLIN, ms) & POLLIN;
}

/* The far end @fd of a pipe whose other end has gone: end of file. */
static bool hung_up(int fd, int ms)
{
	char c;
	int i;

	for (i = 0; i < ms / 10; i++) {
		if ((asx_poll1(fd, POLLIN, 10) & (POLLIN | POLLHUP)) && read(fd, &c, 1) == 0)
			return true;
	}
	return false;
}

/* Waits (up to 10 s) for /proc/asx/objects to count @want Streams. */
static long settle_streams(long want)
{
	long n = -1;
	int i;

	for (i = 0; i < 1000; i++) {
		n = asx_objects("streams");
		if (n == want)
			break;
		asx_msleep(10);
	}
	return n;
}

/*
 * The data path across closes: linked by one process, which then exits; the
 * lower's messages wait while no Stream of the unit is open, and reach the
 * next one; a later process sends down and undoes the link; the Streams come
 * back to their count.
 */
TEST_TIMEOUT(plink_outlives_the_control_stream_and_the_process, 60)
{
	int p[2], u, id, got, st;
	char buf[64];
	long base;
	pid_t child;

	ASSERT_EQ(asx_quiesce(), 0);
	base = asx_objects("streams");
	ASSERT_GE(base, 0);
	ASSERT_EQ(asx_pipe_pair(p), 0);

	/* a child links p[1] persistently and exits: nothing of it stays open */
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		int m = mux_open(UNIT_PATH);

		if (m < 0)
			_exit(1);
		id = ioctl(m, I_PLINK, p[1]);
		_exit(id == 1 ? 0 : 2);	/* a fresh unit's first id */
	}
	ASSERT_EQ(waitpid(child, &st, 0), child);
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(WEXITSTATUS(st), 0) TH_LOG("the linking child failed");
	close(p[1]);
	/* p[0], and p[1] held by the link */
	EXPECT_EQ(settle_streams(base + 2), base + 2);

	/* no Stream of the unit open: the lower keeps what it is sent */
	ASSERT_EQ(write(p[0], "up1", 3), 3);
	ASSERT_EQ(write(p[0], "up2", 3), 3);
	asx_msleep(50);
	EXPECT_EQ(hung_up(p[0], 20), false);

	u = mux_open(UNIT_PATH);
	ASSERT_GE(u, 0) TH_LOG("mux.%d: %s", UNIT_PATH, strerror(errno));
	ASSERT_TRUE(readable(u, 5000));
	got = mux_recv(u, &id, buf, sizeof(buf));
	ASSERT_EQ(got, 3);
	EXPECT_EQ(id, 1);
	EXPECT_EQ(memcmp(buf, "up1", 3), 0);
	ASSERT_TRUE(readable(u, 5000));
	ASSERT_EQ(mux_recv(u, &id, buf, sizeof(buf)), 3);
	EXPECT_EQ(memcmp(buf, "up2", 3), 0);

	/* down, from this Stream, which did not link it */
	ASSERT_EQ(mux_send(u, 1, "down", 4), 0);
	ASSERT_TRUE(readable(p[0], 5000));
	ASSERT_EQ(read(p[0], buf, sizeof(buf)), 4);
	EXPECT_EQ(memcmp(buf, "down", 4), 0);

	/* I_UNLINK does not reach a persistent link, and closing keeps it */
	EXPECT_EQ(ioctl(u, I_UNLINK, 1), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(u, I_UNLINK, MUXID_ALL), 0);
	close(u);
	u = mux_open(UNIT_PATH);
	ASSERT_GE(u, 0);
	ASSERT_EQ(mux_send(u, 1, "again", 5), 0);
	ASSERT_TRUE(readable(p[0], 5000));
	ASSERT_EQ(read(p[0], buf, sizeof(buf)), 5);

	/* undone: the lower's file is dropped, its pipe hangs up, the count is back */
	EXPECT_EQ(ioctl(u, I_PUNLINK, MUXID_ALL), 0);
	EXPECT_TRUE(hung_up(p[0], 5000));
	EXPECT_EQ(ioctl(u, I_PUNLINK, 1), -1);
	EXPECT_EQ(errno, EINVAL);
	close(u);
	close(p[0]);
	EXPECT_EQ(settle_streams(base), base);
}

/* The error cases of streamio(7) for I_PLINK and I_PUNLINK that apply. */
TEST_TIMEOUT(plink_punlink_errors, 60)
{
	int plain, u, l[MAX_LOWERS + 1], a[2], p[2], pid, lid, i, n;
	struct strbuf d = { 0, 1, "x" };

	plain = open(ASX_DEV, O_RDWR);
	ASSERT_GE(plain, 0);
	l[0] = open(ASX_DEV, O_RDWR);
	ASSERT_GE(l[0], 0);
	/* not a multiplexor: the loop driver, and a mux that has no unit */
	EXPECT_EQ(ioctl(plain, I_PLINK, l[0]), -1);
	EXPECT_EQ(errno, EINVAL);
	ASSERT_EQ(asx_setdrv(plain, "mux"), 0);
	EXPECT_EQ(ioctl(plain, I_PLINK, l[0]), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(plain, I_PUNLINK, MUXID_ALL), -1);
	EXPECT_EQ(errno, EINVAL);

	u = mux_open(UNIT_ERR);
	ASSERT_GE(u, 0);
	/* not an open descriptor; not a Stream; the mux itself; another mux */
	EXPECT_EQ(ioctl(u, I_PLINK, 1000), -1);
	EXPECT_EQ(errno, EBADF);
	ASSERT_EQ(pipe(p), 0);
	EXPECT_EQ(ioctl(u, I_PLINK, p[0]), -1);
	EXPECT_EQ(errno, EINVAL);
	close(p[0]);
	close(p[1]);
	EXPECT_EQ(ioctl(u, I_PLINK, u), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(u, I_PLINK, plain), -1);
	EXPECT_EQ(errno, EINVAL);

	pid = ioctl(u, I_PLINK, l[0]);
	ASSERT_GT(pid, 0) TH_LOG("I_PLINK: %s", strerror(errno));
	/* already linked, persistently or not */
	EXPECT_EQ(ioctl(u, I_PLINK, l[0]), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(u, I_LINK, l[0]), -1);
	EXPECT_EQ(errno, EINVAL);
	l[1] = open(ASX_DEV, O_RDWR);
	ASSERT_GE(l[1], 0);
	lid = ioctl(u, I_LINK, l[1]);
	ASSERT_GT(lid, 0);
	EXPECT_NE(lid, pid);
	EXPECT_EQ(ioctl(u, I_PLINK, l[1]), -1);
	EXPECT_EQ(errno, EINVAL);
	/* a persistently linked Stream refuses the requests as a linked one does */
	EXPECT_EQ(ioctl(l[0], I_PUSH, "pass"), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(l[0], I_PLINK, l[1]), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(putmsg(l[0], NULL, &d, 0), -1);
	EXPECT_EQ(errno, EINVAL);
	/* neither kind unlinks the other; a bad id is EINVAL */
	EXPECT_EQ(ioctl(u, I_UNLINK, pid), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(u, I_PUNLINK, lid), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(u, I_PUNLINK, 999999), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(u, I_PUNLINK, MUXID_ALL), 0);
	EXPECT_EQ(ioctl(u, I_UNLINK, lid), 0);
	EXPECT_EQ(ioctl(u, I_PUNLINK, pid), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(ioctl(u, I_PUNLINK, MUXID_ALL), 0);	/* none left: not an error */

	/* storage: MAX_LOWERS persistent lowers, then ENOSR (l[0] to l[MAX_LOWERS]) */
	for (i = 2; i <= MAX_LOWERS; i++) {
		l[i] = open(ASX_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_GE(l[i], 0);
	}
	for (i = 0, n = 0; i <= MAX_LOWERS; i++) {
		int r;

		/* unlinked a grace period ago, l[0] and l[1] may still be the mux's */
		while ((r = ioctl(u, I_PLINK, l[i])) < 0 && errno == EINVAL && n++ < 500)
			asx_msleep(10);
		if (i < MAX_LOWERS) {
			ASSERT_GT(r, 0) TH_LOG("I_PLINK %d: %s", i, strerror(errno));
		} else {
			EXPECT_EQ(r, -1);
		}
	}
	EXPECT_EQ(errno, ENOSR);
	EXPECT_EQ(ioctl(u, I_PUNLINK, MUXID_ALL), 0);

	/* a hung-up Stream: ENXIO, before the argument is looked at */
	ASSERT_EQ(asx_pipe_pair(a), 0);
	close(a[1]);
	EXPECT_EQ(ioctl(a[0], I_PLINK, l[0]), -1);
	EXPECT_EQ(errno, ENXIO);
	EXPECT_EQ(ioctl(a[0], I_PUNLINK, MUXID_ALL), -1);
	EXPECT_EQ(errno, ENXIO);
	close(a[0]);
	for (i = 0; i <= MAX_LOWERS; i++)
		close(l[i]);
	close(u);
	close(plain);
}

/* SETDRV names: "mux.N" for N below ASX_MUX_UNITS, written without a leading zero. */
TEST(named_mux_names)
{
	static const char *const bad[] = { "mux.", "mux.01", "mux.256", "mux.1x", "mux.-1",
					   "mux.+1", "mux. 1", "mux.99999999999" };
	char name[ASX_NAME_MAX];
	unsigned int i;
	int fd;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = open(ASX_DEV, O_RDWR);
		ASSERT_GE(fd, 0);
		EXPECT_EQ(asx_setdrv(fd, bad[i]), -1) TH_LOG("%s", bad[i]);
		EXPECT_EQ(errno, ENOENT) TH_LOG("%s", bad[i]);
		close(fd);
	}
	fd = mux_open(ASX_MUX_UNITS - 1);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(asx_list(fd, NULL, 0, name), 0);
	EXPECT_STREQ(name, "mux");
	/* only a fresh Stream gets a driver */
	EXPECT_EQ(asx_setdrv(fd, "mux.3"), -1);
	EXPECT_EQ(errno, EBUSY);
	close(fd);
}

/* nobody: root's unit is not theirs to open. */
static int nobody_opens_root_unit(void)
{
	if (mux_open(UNIT_ROOT) >= 0)
		return 1;
	return errno == EACCES ? 0 : 2;
}

/* nobody makes a unit of their own and links under it persistently. */
static int nobody_plinks(void)
{
	int u = mux_open(UNIT_NOBODY), l = open(ASX_DEV, O_RDWR);

	if (u < 0 || l < 0)
		return 1;
	if (ioctl(u, I_PLINK, l) <= 0)
		return 2;
	return 0;
}

/* nobody again, in a new process: their unit and its link are still there to undo. */
static int nobody_punlinks(void)
{
	int u = mux_open(UNIT_NOBODY);

	if (u < 0)
		return 1;
	if (ioctl(u, I_PUNLINK, 1) != 0)
		return 2;
	return 0;
}

/*
 * Who may: a unit is its maker's (effective uid); another user may neither
 * open it nor so reach its links, CAP_SYS_ADMIN may.  The lowers count
 * against their linker's RLIMIT_NOFILE as I_LINK's do.
 */
TEST_TIMEOUT(permissions_as_nobody, 60)
{
	int u, l, r, cap;
	long base;

	if (geteuid())
		SKIP(return, "needs root to become nobody");
	ASSERT_EQ(asx_quiesce(), 0);
	base = asx_objects("streams");
	u = mux_open(UNIT_ROOT);
	ASSERT_GE(u, 0);
	l = open(ASX_DEV, O_RDWR);
	ASSERT_GE(l, 0);
	ASSERT_GT(ioctl(u, I_PLINK, l), 0);
	close(l);
	EXPECT_EQ(asx_as_nobody(nobody_opens_root_unit), 0);
	/* nobody's link outlives nobody's process */
	r = asx_as_nobody(nobody_plinks);
	EXPECT_EQ(r, 0) TH_LOG("nobody_plinks: step %d", r);
	/* root (CAP_SYS_ADMIN) opens nobody's unit and sees the link */
	cap = mux_open(UNIT_NOBODY);
	ASSERT_GE(cap, 0) TH_LOG("mux.%d: %s", UNIT_NOBODY, strerror(errno));
	close(cap);
	r = asx_as_nobody(nobody_punlinks);
	EXPECT_EQ(r, 0) TH_LOG("nobody_punlinks: step %d", r);
	EXPECT_EQ(ioctl(u, I_PUNLINK, MUXID_ALL), 0);
	close(u);
	EXPECT_EQ(settle_streams(base), base);
}

/* root undoes a link nobody left behind: the way to free a unit before unloading. */
TEST_TIMEOUT(admin_undoes_another_users_links, 60)
{
	int cap, r;
	long base;

	if (geteuid())
		SKIP(return, "needs root to become nobody");
	ASSERT_EQ(asx_quiesce(), 0);
	base = asx_objects("streams");
	r = asx_as_nobody(nobody_plinks);
	ASSERT_EQ(r, 0) TH_LOG("nobody_plinks: step %d", r);
	EXPECT_EQ(settle_streams(base + 1), base + 1);
	cap = mux_open(UNIT_NOBODY);
	ASSERT_GE(cap, 0);
	EXPECT_EQ(ioctl(cap, I_PUNLINK, MUXID_ALL), 0);
	close(cap);
	EXPECT_EQ(settle_streams(base), base);
}

/*
 * Stress: 4 persistent lowers (pipe ends); down, a writer sends a numbered
 * sequence to each lower through the unit's first Stream; up, a writer at
 * each far end sends a numbered sequence, which comes up the unit's oldest
 * Stream; meanwhile another thread opens and closes Streams of the unit
 * (which route the lowers anew each time) and links and undoes a fifth
 * lower.  Every sequence arrives whole, once, in order.
 */
#define NLOW	4

struct stress {
	int u;
	int far[NLOW];
	int id[NLOW];
	long n;
	volatile int stop;
	int churns;
	int err;
};

/* A numbered sequence to each lower: down the mux, or up from the far ends. */
static void *seq_writer(struct stress *s, bool down)
{
	long i;
	int k;

	for (i = 0; i < s->n; i++)
		for (k = 0; k < NLOW; k++)
			if (down ? mux_send(s->u, s->id[k], &i, sizeof(i)) :
			    write(s->far[k], &i, sizeof(i)) != sizeof(i)) {
				s->err = errno ? errno : down ? -1 : -2;
				return NULL;
			}
	return NULL;
}

static void *down_writer(void *arg)
{
	return seq_writer(arg, true);
}

static void *up_writer(void *arg)
{
	return seq_writer(arg, false);
}

static void *churner(void *arg)
{
	struct stress *s = arg;

	while (!s->stop) {
		int m = mux_open(UNIT_STRESS), l = open(ASX_DEV, O_RDWR);
		int id;

		if (m < 0 || l < 0) {
			s->err = -3;
			break;
		}
		id = ioctl(m, I_PLINK, l);
		if (id > 0 && ioctl(m, I_PUNLINK, id)) {
			s->err = -4;
		}
		close(l);
		close(m);
		s->churns++;
	}
	return NULL;
}

TEST_TIMEOUT(stress_four_lowers_while_streams_come_and_go, 300)
{
	struct stress s = { .n = 4000 };
	pthread_t dw, uw, ch;
	long want_down[NLOW] = { 0 }, want_up[NLOW] = { 0 }, v, left;
	int p[NLOW][2], k, id, r;
	long base;

	ASSERT_EQ(asx_quiesce(), 0);
	base = asx_objects("streams");
	s.u = mux_open(UNIT_STRESS);
	ASSERT_GE(s.u, 0);
	for (k = 0; k < NLOW; k++) {
		ASSERT_EQ(asx_pipe_pair(p[k]), 0);
		s.far[k] = p[k][0];
		s.id[k] = ioctl(s.u, I_PLINK, p[k][1]);
		ASSERT_GT(s.id[k], 0);
		close(p[k][1]);
	}
	ASSERT_EQ(pthread_create(&dw, NULL, down_writer, &s), 0);
	ASSERT_EQ(pthread_create(&uw, NULL, up_writer, &s), 0);
	ASSERT_EQ(pthread_create(&ch, NULL, churner, &s), 0);

	/* read both ways until every sequence is whole; the timeout is the watchdog */
	for (left = 2 * NLOW * s.n; left > 0 && !s.err;) {
		struct pollfd pf[NLOW + 1];

		for (k = 0; k < NLOW; k++)
			pf[k] = (struct pollfd){ .fd = s.far[k], .events = POLLIN };
		pf[NLOW] = (struct pollfd){ .fd = s.u, .events = POLLIN };
		ASSERT_GE(poll(pf, NLOW + 1, 1000), 0);
		for (k = 0; k < NLOW; k++) {
			if (!(pf[k].revents & POLLIN))
				continue;
			ASSERT_EQ(read(s.far[k], &v, sizeof(v)), (ssize_t)sizeof(v));
			ASSERT_EQ(v, want_down[k]) TH_LOG("down %d: %ld, not %ld", k, v, want_down[k]);
			want_down[k]++;
			left--;
		}
		if (pf[NLOW].revents & POLLIN) {
			r = mux_recv(s.u, &id, &v, sizeof(v));
			ASSERT_EQ(r, (int)sizeof(v));
			for (k = 0; k < NLOW && s.id[k] != id; k++)
				;
			ASSERT_LT(k, NLOW) TH_LOG("up from unknown id %d", id);
			ASSERT_EQ(v, want_up[k]) TH_LOG("up %d: %ld, not %ld", k, v, want_up[k]);
			want_up[k]++;
			left--;
		}
	}
	s.stop = 1;
	pthread_join(dw, NULL);
	pthread_join(uw, NULL);
	pthread_join(ch, NULL);
	EXPECT_EQ(s.err, 0);
	EXPECT_GT(s.churns, 0);
	TH_LOG("%ld messages each way through %d persistent lowers, %d opens of the unit meanwhile",
	       NLOW * s.n, NLOW, s.churns);
	/* nothing more than the sequences */
	for (k = 0; k < NLOW; k++)
		EXPECT_FALSE(readable(s.far[k], 0));
	EXPECT_FALSE(readable(s.u, 0));
	EXPECT_EQ(ioctl(s.u, I_PUNLINK, MUXID_ALL), 0);
	close(s.u);
	for (k = 0; k < NLOW; k++)
		close(s.far[k]);
	EXPECT_EQ(settle_streams(base), base);
}

TEST_HARNESS_MAIN
