// SPDX-License-Identifier: GPL-2.0
/*
 * proc_test.c - the live-Stream listing /proc/asx/streams (who sees which
 * Stream, escaped names), the object counts of /proc/asx/objects, and the
 * asxctl tool that shows them (skipped when build/bin/asxctl is not built;
 * $ASXCTL names another binary).
 */
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "asx_util.h"
#include "asx_harness.h"

static char *slurp(const char *cmd_or_path, int run)
{
	static char buf[1 << 16];
	size_t n;
	FILE *f = run ? popen(cmd_or_path, "r") : fopen(cmd_or_path, "r");

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	if (run) {
		if (pclose(f) != 0)
			return NULL;
	} else {
		fclose(f);
	}
	return buf;
}

TEST(streams_listing)
{
	char want[128], *s, *line;
	int fd, i;

	fd = asx_open(0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(asx_push(fd, "hold"), 0);
	ASSERT_EQ(asx_push(fd, "count"), 0);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(write(fd, "abcd", 4), 4);
	}
	s = slurp("/proc/asx/streams", 0);
	ASSERT_TRUE(s != NULL) TH_LOG("/proc/asx/streams: %s", strerror(errno));
	snprintf(want, sizeof(want), " pid %d comm proc_test driver loop depth 2 modules count hold",
		 getpid());
	line = strstr(s, want);
	EXPECT_TRUE(line != NULL) TH_LOG("no '%s' in:\n%s", want, s);
	if (line) {
		EXPECT_TRUE(strstr(line, "q 2 w hold     count 12 msgs 3 ") != NULL)
			TH_LOG("%s", line);
		EXPECT_TRUE(strstr(line, "q 1 w count    count 0 msgs 0 ") != NULL)
			TH_LOG("%s", line);
	}
	EXPECT_GE(asx_objects("streams"), 1);
	EXPECT_GE(asx_objects("msgs"), 3);
	EXPECT_GE(asx_objects("modules"), 2);
	s = slurp("/proc/asx/modules", 0);
	ASSERT_TRUE(s != NULL);
	EXPECT_TRUE(strstr(s, "module frame asx\n") && strstr(s, "driver mux\n")) TH_LOG("%s", s);
	close(fd);
}

/* Lines of @s that start with "stream ", and whether one has pid @pid. */
static int stream_lines(const char *s, pid_t pid, int *has_pid)
{
	char want[32];
	const char *p;
	int n = 0;

	snprintf(want, sizeof(want), " pid %d ", pid);
	*has_pid = 0;
	for (p = s; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, "stream ", 7))
			continue;
		n++;
		if (strstr(p, want) && strstr(p, want) < strchrnul(p, '\n'))
			*has_pid = 1;
	}
	return n;
}

#define FORGED_COMM	"x\nstream 0 pid"
#define ESCAPED_COMM	"comm x\\012stream\\0400\\040pid driver"

/*
 * A user sees only the Streams they opened (root sees all), and the opener's
 * name is escaped: a process named FORGED_COMM cannot add a line.
 */
TEST(streams_listing_is_per_user_and_escaped)
{
	int fd, ready[2], go[2], status, has, n;
	char c, *s;
	pid_t pid;

	fd = asx_open(0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(pipe(ready), 0);
	ASSERT_EQ(pipe(go), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		int mine;

		if (prctl(PR_SET_NAME, FORGED_COMM) || setgroups(0, NULL) || setgid(65534) ||
		    setuid(65534))
			_exit(10);
		mine = asx_open(0);
		if (mine < 0)
			_exit(11);
		s = slurp("/proc/asx/streams", 0);
		if (!s)
			_exit(12);
		n = stream_lines(s, getppid(), &has);
		if (has)
			_exit(13);	/* root's Stream shown to nobody */
		n = stream_lines(s, getpid(), &has);
		if (n != 1 || !has)
			_exit(14);	/* exactly one line: its own */
		if (!strstr(s, ESCAPED_COMM))
			_exit(15);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(16);
		close(mine);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &c, 1) != 1) {
		waitpid(pid, &status, 0);
		ASSERT_TRUE(0)
			TH_LOG("child status %#x (10 setup, 11 open, 12 read, 13 sees root's, 14 own line, 15 escape)",
			       status);
	}
	s = slurp("/proc/asx/streams", 0);
	ASSERT_TRUE(s != NULL);
	stream_lines(s, pid, &has);
	EXPECT_TRUE(has) TH_LOG("root sees nobody's Stream");
	stream_lines(s, getpid(), &has);
	EXPECT_TRUE(has) TH_LOG("root sees its own");
	EXPECT_TRUE(strstr(s, ESCAPED_COMM) != NULL) TH_LOG("%s", s);
	EXPECT_EQ(write(go[1], "g", 1), 1);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x (10 setup, 11 open, 12 read, 13 sees root's, 14 own line, 15 escape)",
		       status);
	close(fd);
	close(ready[0]);
	close(go[1]);
}

static int asxctl_path(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n;
	int i;

	if (getenv("ASXCTL")) {
		snprintf(out, len, "%s", getenv("ASXCTL"));
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = 0;
	for (i = 0; i < 2; i++)
		dirname(exe);
	snprintf(out, len, "%s/bin/asxctl", exe);
	return 0;
}

TEST(asxctl_shows_streams)
{
	char path[PATH_MAX + 16], cmd[PATH_MAX + 64], *s;
	int fd;

	ASSERT_EQ(asxctl_path(path, sizeof(path)), 0);
	if (access(path, X_OK))
		SKIP(return, "%.400s not built", path);
	fd = asx_open(0);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(asx_push(fd, "pass"), 0);
	snprintf(cmd, sizeof(cmd), "%s streams", path);
	s = slurp(cmd, 1);
	ASSERT_TRUE(s != NULL) TH_LOG("%s failed", cmd);
	EXPECT_TRUE(strstr(s, "modules pass") != NULL) TH_LOG("%s", s);
	snprintf(cmd, sizeof(cmd), "%s stats", path);
	s = slurp(cmd, 1);
	ASSERT_TRUE(s != NULL) TH_LOG("%s failed", cmd);
	EXPECT_TRUE(strstr(s, "streams ") && strstr(s, "fc_stop")) TH_LOG("%s", s);
	snprintf(cmd, sizeof(cmd), "%s push -n 5 count pass", path);
	s = slurp(cmd, 1);
	ASSERT_TRUE(s != NULL) TH_LOG("%s failed", cmd);
	EXPECT_TRUE(strstr(s, "head -> pass -> count -> loop") != NULL) TH_LOG("%s", s);
	EXPECT_TRUE(strstr(s, "5 message(s)") != NULL) TH_LOG("%s", s);
	snprintf(cmd, sizeof(cmd), "%s pop count frame", path);
	s = slurp(cmd, 1);
	ASSERT_TRUE(s != NULL) TH_LOG("%s failed", cmd);
	EXPECT_TRUE(strstr(s, "popped: head -> count -> loop") != NULL) TH_LOG("%s", s);
	EXPECT_TRUE(strstr(s, "popped: head -> loop") != NULL) TH_LOG("%s", s);
	snprintf(cmd, sizeof(cmd), "%s version", path);
	s = slurp(cmd, 1);
	snprintf(path, sizeof(path), "ASX ABI %d.%d.%d", ASX_VERSION_MAJOR, ASX_VERSION_MINOR,
		 ASX_VERSION_PATCH);
	ASSERT_TRUE(s != NULL && strstr(s, path)) TH_LOG("want %s: %s", path, s ? s : "");
	close(fd);
}

#define TRACEFS	"/sys/kernel/tracing"

static int put_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(s, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

TEST(tracepoints)
{
	char buf[1024], *s;
	struct stat st;
	int fd, n = 0;

	if (stat(TRACEFS "/events", &st))
		mount("nodev", TRACEFS, "tracefs", 0, NULL);
	ASSERT_EQ(stat(TRACEFS "/events/asx/asx_put", &st), 0)
		TH_LOG("%s: %s", TRACEFS "/events/asx/asx_put", strerror(errno));
	ASSERT_EQ(stat(TRACEFS "/events/asx/asx_srv", &st), 0);
	ASSERT_EQ(stat(TRACEFS "/events/asx/asx_fc_stop", &st), 0);
	ASSERT_EQ(stat(TRACEFS "/events/asx/asx_fc_start", &st), 0);
	ASSERT_EQ(put_str(TRACEFS "/trace", ""), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(put_str(TRACEFS "/events/asx/enable", "1"), 0) TH_LOG("%s", strerror(errno));

	fd = asx_open(O_NONBLOCK);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(asx_push(fd, "hold"), 0);
	ASSERT_EQ(asx_setwm(fd, 1, ASX_SIDE_WRITE, 2048, 512), 0);
	memset(buf, 'x', sizeof(buf));
	while (write(fd, buf, sizeof(buf)) > 0 && n < 10)
		n++;
	ASSERT_EQ(asx_str(fd, ASX_STR_HOLD_RELEASE, NULL, 0, 0, NULL), 0);
	EXPECT_EQ(asx_poll1(fd, POLLOUT, 2000), POLLOUT);
	close(fd);
	put_str(TRACEFS "/events/asx/enable", "0");

	s = slurp(TRACEFS "/trace", 0);
	ASSERT_TRUE(s != NULL);
	EXPECT_TRUE(strstr(s, "asx_put: stream=") && strstr(s, "queue=hold/w"))
		TH_LOG("%.2000s", s);
	EXPECT_TRUE(strstr(s, "asx_fc_stop: stream=") != NULL) TH_LOG("%.2000s", s);
	EXPECT_TRUE(strstr(s, "asx_fc_start: stream=") != NULL) TH_LOG("%.2000s", s);
	EXPECT_TRUE(strstr(s, "asx_srv: stream=") != NULL) TH_LOG("%.2000s", s);
	put_str(TRACEFS "/trace", "");
}

TEST_HARNESS_MAIN
