// SPDX-License-Identifier: GPL-2.0
/*
 * fdcap_test.c - the per-user cap on descriptors in flight over STREAMS
 * pipes (asx.ko's module parameter user_max_fds): I_SENDFD fails with
 * EAGAIN once the sending user has that many sent and not yet received,
 * across all of the user's pipes; a descriptor received, flushed or freed
 * with its pipe gives its place back; CAP_SYS_RESOURCE is exempt.  Run as
 * root: each test lowers the cap (restored after) and checks it as nobody.
 */
#include <grp.h>
#include <sys/wait.h>

#include <asx/stropts.h>

#include "asx_util.h"
#include "asx_harness.h"

#define PARAM	"/sys/module/asx/parameters/user_max_fds"
#define CAP	8	/* the cap the tests set */
#define NPIPES	3	/* the user's descriptors spread over this many pipes */

static long read_param(void)
{
	FILE *f = fopen(PARAM, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_param(long v)
{
	FILE *f = fopen(PARAM, "w");
	int r;

	if (!f)
		return -1;
	r = fprintf(f, "%ld\n", v) > 0 ? 0 : -1;
	return fclose(f) || r ? -1 : 0;
}

static void close_pipes(int sp[][2], int n)
{
	for (int i = 0; i < n; i++) {
		close(sp[i][0]);
		close(sp[i][1]);
	}
}

/* The call fails with EAGAIN, or the run stops with step @step. */
#define CAPPED(call, step) do {						\
		errno = 0;						\
		if ((call) != -1 || errno != EAGAIN)			\
			return (step);					\
	} while (0)
#define OK(cond, step) do {						\
		if (!(cond))						\
			return (step);					\
	} while (0)

/* Sends @n descriptors of @fd round the pipes' first ends: 0, or -1. */
static int send_n(int sp[][2], int npipes, int fd, int n)
{
	for (int i = 0; i < n; i++)
		if (ioctl(sp[i % npipes][0], I_SENDFD, fd))
			return -1;
	return 0;
}

/*
 * I_SENDFD of @fd on @end, retried while EAGAIN for up to 30 s (what a
 * close or flush frees may be freed by a worker a little later): 0, or -1.
 */
static int send_within(int end, int fd)
{
	for (int tries = 0; tries < 1500; tries++) {
		if (!ioctl(end, I_SENDFD, fd))
			return 0;
		if (errno != EAGAIN)
			return -1;
		usleep(20000);
	}
	return -1;
}

/*
 * Opens NPIPES pipes in @sp and sends a whole cap's worth of @fd round them,
 * retried for up to 30 s (a loaded TCG guest) while what earlier runs left
 * in flight is still being freed: 0 with the pipes open, or -1.
 */
static int fill_cap(int sp[][2], int fd)
{
	for (int tries = 0; tries < 1500; tries++) {
		for (int i = 0; i < NPIPES; i++)
			if (asx_pipe_pair(sp[i]))
				return -1;
		if (!send_n(sp, NPIPES, fd, CAP))
			return 0;
		close_pipes(sp, NPIPES);
		usleep(20000);
	}
	return -1;
}

/*
 * As nobody: the cap is reached over several pipes and holds on all of
 * them, a new one included; receiving, flushing and closing a reader each
 * give places back.  0, or the step that failed.
 */
static int hit_and_recover(void)
{
	int sp[NPIPES][2], extra[2], p[2], i;
	struct strrecvfd rf;

	OK(!pipe(p), 1);
	OK(!fill_cap(sp, p[1]), 3);
	for (i = 0; i < NPIPES; i++)
		CAPPED(ioctl(sp[i][0], I_SENDFD, p[1]), 4);
	OK(!asx_pipe_pair(extra), 5);
	CAPPED(ioctl(extra[0], I_SENDFD, p[1]), 6);	/* per user, not per pipe */
	CAPPED(ioctl(extra[1], I_SENDFD, p[1]), 7);	/* either way */
	/* received: one place back, and only one */
	OK(ioctl(sp[0][1], I_RECVFD, &rf) == 0 && rf.uid == 65534, 8);
	OK(close(rf.fd) == 0, 9);
	OK(ioctl(extra[0], I_SENDFD, p[1]) == 0, 10);
	CAPPED(ioctl(sp[1][0], I_SENDFD, p[1]), 11);
	/* the counts: pipe 0 holds 2, pipe 1 3, pipe 2 2, extra 1 */
	/* flushed at the reader's head: closed, their places back */
	OK(ioctl(sp[1][1], I_FLUSH, FLUSHR) == 0, 12);	/* it held 3 of the 8 */
	OK(!send_within(sp[2][0], p[1]), 13);
	OK(!send_n(sp, 1, p[1], 2), 14);		/* pipe 0: 4 */
	CAPPED(ioctl(sp[2][0], I_SENDFD, p[1]), 15);
	/* one pipe closes, its reader holding 1: that place comes back */
	OK(close(extra[1]) == 0 && close(extra[0]) == 0, 16);
	OK(!send_within(sp[2][0], p[1]), 17);
	CAPPED(ioctl(sp[2][0], I_SENDFD, p[1]), 18);
	/* pipe 0's reader closes, holding 4; a send there is refused and
	 * counts nothing: 4 places come back, no more */
	OK(close(sp[0][1]) == 0, 19);
	errno = 0;
	OK(ioctl(sp[0][0], I_SENDFD, p[1]) == -1 && errno == ENXIO, 20);
	for (i = 0; i < 4; i++)
		OK(!send_within(sp[2][0], p[1]), 21);
	CAPPED(ioctl(sp[2][0], I_SENDFD, p[1]), 22);
	sp[0][1] = -1;
	close_pipes(sp, NPIPES);
	close(p[0]);
	close(p[1]);
	return 0;
}

/*
 * As nobody: the cap's worth of descriptors queued on pipes that then close
 * with them, three times: each time the count returns to zero (the frees
 * may run in a worker a little later), so a whole cap's worth goes again
 * and no more.  0, or the step that failed.
 */
static int count_back_to_zero(void)
{
	int sp[NPIPES][2], p[2];

	OK(!pipe(p), 1);
	for (int round = 0; round < 3; round++) {
		OK(!fill_cap(sp, p[1]), 3);
		CAPPED(ioctl(sp[0][0], I_SENDFD, p[1]), 4);
		/* both ends close, the descriptors still queued */
		close_pipes(sp, NPIPES);
	}
	OK(!fill_cap(sp, p[1]), 5);
	close_pipes(sp, NPIPES);
	close(p[0]);
	close(p[1]);
	return 0;
}

FIXTURE(fdcap) {
	long saved;
};

FIXTURE_SETUP(fdcap)
{
	ASSERT_EQ(geteuid(), 0) TH_LOG("run as root: the tests set " PARAM);
	self->saved = read_param();
	ASSERT_GE(self->saved, 0) TH_LOG("no %s: asx.ko without the cap", PARAM);
	ASSERT_EQ(write_param(CAP), 0);
}

FIXTURE_TEARDOWN(fdcap)
{
	if (self->saved >= 0)
		EXPECT_EQ(write_param(self->saved), 0);
}

TEST_F(fdcap, hit_and_recover_as_nobody)
{
	int step = asx_as_nobody(hit_and_recover);

	EXPECT_EQ(step, 0) TH_LOG("as nobody: step %d failed", step);
}

TEST_F(fdcap, count_returns_to_zero_as_nobody)
{
	int step = asx_as_nobody(count_back_to_zero);

	EXPECT_EQ(step, 0) TH_LOG("as nobody: step %d failed", step);
}

/* CAP_SYS_RESOURCE (root) is exempt; 0 lifts the cap for everyone. */
TEST_F(fdcap, exempt_and_unlimited)
{
	int sp[2], p[2];

	ASSERT_EQ(pipe(p), 0);
	ASSERT_EQ(asx_pipe_pair(sp), 0);
	EXPECT_EQ(send_n(&sp, 1, p[1], 2 * CAP), 0) TH_LOG("root: %s", strerror(errno));
	close(sp[0]);
	close(sp[1]);
	ASSERT_EQ(write_param(0), 0);
	EXPECT_EQ(asx_as_nobody(count_back_to_zero), 4) TH_LOG("no cap: the (CAP+1)th must go");
	close(p[0]);
	close(p[1]);
}

TEST_HARNESS_MAIN
