// SPDX-License-Identifier: GPL-2.0
/*
 * autopush_test.c - ASX_IOC_AUTOPUSH: a driver's list of modules pushed on
 * every Stream that gets the driver (at open for loop, at SETDRV, on both
 * ends of a new pipe); set and cleared by CAP_SYS_ADMIN alone, read by
 * anyone; SETDRV and PIPE replace what autopush pushed but never what the
 * user pushed.
 */
#include <sys/wait.h>

#include "asx_util.h"
#include "asx_harness.h"

static const char *const drivers[] = { "loop", "null", "pipe", "mux" };

static int ap(unsigned int cmd, const char *drv, unsigned int count, const char *const *mods,
	      struct asx_autopush *out)
{
	struct asx_autopush a = { .size = sizeof(a), .cmd = cmd };
	int fd, r, e;
	unsigned int i;

	snprintf(a.driver, sizeof(a.driver), "%s", drv);
	a.count = count;
	for (i = 0; i < count && i < ASX_AUTOPUSH_MAX; i++)
		snprintf(a.modules[i], sizeof(a.modules[i]), "%s", mods[i]);
	fd = open(ASX_DEV, O_RDWR);
	if (fd < 0)
		return -1;
	r = ioctl(fd, ASX_IOC_AUTOPUSH, &a);
	e = errno;
	close(fd);
	if (out)
		*out = a;
	errno = e;
	return r;
}

static void clear_all(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++)
		ap(ASX_AP_CLEAR, drivers[i], 0, NULL, NULL);
}

/* The modules of @fd's Stream, top first, as "a,b,c" (driver last). */
static void modules_of(int fd, char *buf, size_t len)
{
	char names[ASX_MAX_DEPTH][ASX_NAME_MAX], drv[ASX_NAME_MAX];
	int n = asx_list(fd, names, ASX_MAX_DEPTH, drv), i;

	buf[0] = 0;
	for (i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s,", names[i]);
	snprintf(buf + strlen(buf), len - strlen(buf), "%s", n < 0 ? "?" : drv);
}

FIXTURE(ap) {
	char buf[256];
};

FIXTURE_SETUP(ap)
{
	clear_all();
}

FIXTURE_TEARDOWN(ap)
{
	clear_all();
}

TEST_F(ap, set_get_clear)
{
	static const char *const two[] = { "pass", "count" };
	struct asx_autopush got;
	FILE *f;
	int seen = 0;

	errno = 0;
	EXPECT_EQ(ap(ASX_AP_GET, "loop", 0, NULL, &got), -1);
	EXPECT_EQ(errno, ENOENT);
	ASSERT_EQ(ap(ASX_AP_SET, "loop", 2, two, NULL), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(ap(ASX_AP_GET, "loop", 0, NULL, &got), 0);
	EXPECT_EQ(got.count, 2u);
	EXPECT_STREQ(got.modules[0], "pass");
	EXPECT_STREQ(got.modules[1], "count");
	f = fopen("/proc/asx/modules", "r");
	ASSERT_NE(f, NULL);
	while (fgets(self->buf, sizeof(self->buf), f))
		seen |= !strcmp(self->buf, "autopush loop pass count\n");
	fclose(f);
	EXPECT_TRUE(seen) TH_LOG("/proc/asx/modules lists the autopush");
	ASSERT_EQ(ap(ASX_AP_CLEAR, "loop", 0, NULL, NULL), 0);
	errno = 0;
	EXPECT_EQ(ap(ASX_AP_GET, "loop", 0, NULL, &got), -1);
	EXPECT_EQ(errno, ENOENT);
	errno = 0;
	EXPECT_EQ(ap(ASX_AP_CLEAR, "loop", 0, NULL, NULL), -1) TH_LOG("nothing to clear");
	EXPECT_EQ(errno, ENOENT);
}

TEST_F(ap, errors)
{
	static const char *const bad[] = { "pass", "no-such-module" };
	static const char *const nine[] = { "pass", "pass", "pass", "pass", "pass", "pass",
					    "pass", "pass", "pass" };
	struct asx_autopush a = { .size = sizeof(a), .cmd = ASX_AP_SET, .driver = "loop",
				  .count = 1 };
	int fd;

	errno = 0;
	EXPECT_EQ(ap(ASX_AP_SET, "loop", 2, bad, NULL), -1);
	EXPECT_EQ(errno, ENOENT) TH_LOG("an unregistered module");
	errno = 0;
	EXPECT_EQ(ap(ASX_AP_SET, "no-such-driver", 1, bad, NULL), -1);
	EXPECT_EQ(errno, ENOENT);
	errno = 0;
	EXPECT_EQ(ap(ASX_AP_SET, "loop", 0, NULL, NULL), -1);
	EXPECT_EQ(errno, EINVAL) TH_LOG("an empty list is CLEAR");
	errno = 0;
	EXPECT_EQ(ap(ASX_AP_SET, "loop", 9, nine, NULL), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(ap(7, "loop", 1, bad, NULL), -1);
	EXPECT_EQ(errno, EINVAL);
	fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(fd, 0);
	memset(a.modules[0], 'x', ASX_NAME_MAX);	/* no NUL */
	errno = 0;
	EXPECT_EQ(ioctl(fd, ASX_IOC_AUTOPUSH, &a), -1);
	EXPECT_EQ(errno, EINVAL);
	strcpy(a.modules[0], "pass");
	a.reserved = 1;
	errno = 0;
	EXPECT_EQ(ioctl(fd, ASX_IOC_AUTOPUSH, &a), -1);
	EXPECT_EQ(errno, EINVAL);
	close(fd);
}

TEST_F(ap, open_setdrv_and_pipe_get_their_lists)
{
	static const char *const lp[] = { "pass", "count" };
	static const char *const nl[] = { "csum" };
	static const char *const pp[] = { "count" };
	char buf[8];
	int fd, b;

	ASSERT_EQ(ap(ASX_AP_SET, "loop", 2, lp, NULL), 0);
	ASSERT_EQ(ap(ASX_AP_SET, "null", 1, nl, NULL), 0);
	ASSERT_EQ(ap(ASX_AP_SET, "pipe", 1, pp, NULL), 0);
	fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(fd, 0);
	modules_of(fd, self->buf, sizeof(self->buf));
	EXPECT_STREQ(self->buf, "count,pass,loop") TH_LOG("pushed first to last");
	ASSERT_EQ(write(fd, "ping", 4), 4);
	EXPECT_EQ(read(fd, buf, sizeof(buf)), 4) TH_LOG("the Stream works");
	/* SETDRV: loop's list gives way to null's */
	ASSERT_EQ(asx_setdrv(fd, "null"), 0) TH_LOG("%s", strerror(errno));
	modules_of(fd, self->buf, sizeof(self->buf));
	EXPECT_STREQ(self->buf, "csum,null");
	close(fd);

	/* what the user pushed is never popped for it */
	fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(asx_push(fd, "hold"), 0);
	errno = 0;
	EXPECT_EQ(asx_setdrv(fd, "null"), -1);
	EXPECT_EQ(errno, EBUSY);
	modules_of(fd, self->buf, sizeof(self->buf));
	EXPECT_STREQ(self->buf, "hold,count,pass,loop");
	close(fd);

	/* a pipe: both ends get pipe's list, not loop's */
	fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(fd, 0);
	b = asx_pipe(fd, ASX_PIPE_CLOEXEC);
	ASSERT_GE(b, 0) TH_LOG("%s", strerror(errno));
	modules_of(fd, self->buf, sizeof(self->buf));
	EXPECT_STREQ(self->buf, "count,pipe");
	modules_of(b, self->buf, sizeof(self->buf));
	EXPECT_STREQ(self->buf, "count,pipe");
	ASSERT_EQ(write(fd, "to b", 4), 4);
	EXPECT_EQ(read(b, buf, sizeof(buf)), 4);
	close(b);
	close(fd);

	/* cleared: a plain Stream again */
	clear_all();
	fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(fd, 0);
	modules_of(fd, self->buf, sizeof(self->buf));
	EXPECT_STREQ(self->buf, "loop");
	close(fd);
}

/* Setting and clearing need CAP_SYS_ADMIN; reading does not. */
TEST_F(ap, unprivileged_user_reads_only)
{
	static const char *const one[] = { "pass" };
	pid_t pid;
	int status;

	ASSERT_EQ(ap(ASX_AP_SET, "mux", 1, one, NULL), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		struct asx_autopush got;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (ap(ASX_AP_SET, "loop", 1, one, NULL) != -1 || errno != EPERM)
			_exit(1);
		if (ap(ASX_AP_CLEAR, "mux", 0, NULL, NULL) != -1 || errno != EPERM)
			_exit(2);
		if (ap(ASX_AP_GET, "mux", 0, NULL, &got) || got.count != 1)
			_exit(3);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("nobody: exit %d", WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
