// SPDX-License-Identifier: GPL-2.0
/*
 * modreg_test.c - a second kernel module, kmod/test/asx_rot13.ko, registers
 * the ASX module "rot13" through asx.ko's exported API: load it, push and use
 * "rot13", check that neither module unloads while in use, unload it.
 */
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "asx_util.h"
#include "asx_harness.h"

#define ROT13_KO	"kmod/test/asx_rot13.ko"

/* The tree's top: the binary is <top>/build/selftests/modreg_test. */
static int ko_path(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = 0;
	for (i = 0; i < 3; i++)
		dirname(exe);
	snprintf(out, len, "%s/%s", exe, ROT13_KO);
	return 0;
}

static int proc_has(const char *path, const char *line)
{
	char buf[256];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		if (!strcmp(buf, line))
			found = 1;
	}
	fclose(f);
	return found;
}

FIXTURE(rot13) {
	int fd;
};

FIXTURE_SETUP(rot13)
{
	char path[PATH_MAX + 32];
	int ko;

	self->fd = -1;
	ASSERT_EQ(ko_path(path, sizeof(path)), 0);
	ko = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_GE(ko, 0) TH_LOG("%s: %s (run make kmod)", path, strerror(errno));
	ASSERT_EQ(syscall(SYS_finit_module, ko, "", 0), 0)
		TH_LOG("load %s: %s", path, strerror(errno));
	close(ko);
}

FIXTURE_TEARDOWN(rot13)
{
	if (self->fd >= 0)
		close(self->fd);
	syscall(SYS_delete_module, "asx_rot13", O_NONBLOCK);
}

TEST_F(rot13, registers_pushes_and_unloads)
{
	char buf[32];

	EXPECT_TRUE(proc_has("/proc/asx/modules", "module rot13 asx_rot13"));
	EXPECT_TRUE(proc_has("/proc/asx/modules", "module pass asx"));
	self->fd = asx_open(0);
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(asx_push(self->fd, "rot13"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(write(self->fd, "Hello, World", 12), 12);
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 12);
	EXPECT_EQ(strcmp(buf, "Uryyb, Jbeyq"), 0) TH_LOG("got %s", buf);

	errno = 0;
	EXPECT_EQ(syscall(SYS_delete_module, "asx_rot13", O_NONBLOCK), -1)
		TH_LOG("unloaded while pushed");
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("errno %d", errno);
	errno = 0;
	EXPECT_EQ(syscall(SYS_delete_module, "asx", O_NONBLOCK), -1)
		TH_LOG("asx unloaded under its user");
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("errno %d", errno);

	ASSERT_EQ(asx_pop(self->fd, "rot13"), 0);
	ASSERT_EQ(syscall(SYS_delete_module, "asx_rot13", O_NONBLOCK), 0)
		TH_LOG("%s", strerror(errno));
	EXPECT_FALSE(proc_has("/proc/asx/modules", "module rot13 asx_rot13"));
	errno = 0;
	EXPECT_EQ(asx_push(self->fd, "rot13"), -1);
	EXPECT_EQ(errno, ENOENT);
}

/* Closing a Stream with the module pushed frees it a grace period later. */
TEST_F(rot13, unload_after_close)
{
	int i, ret = -1;

	self->fd = asx_open(0);
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(asx_push(self->fd, "rot13"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_push(self->fd, "pass"), 0);
	ASSERT_EQ(write(self->fd, "abc", 3), 3);
	close(self->fd);
	self->fd = -1;
	for (i = 0; i < 500 && ret; i++) {
		ret = syscall(SYS_delete_module, "asx_rot13", O_NONBLOCK);
		if (ret)
			asx_msleep(10);
	}
	EXPECT_EQ(ret, 0) TH_LOG("asx_rot13 still busy: %s", strerror(errno));
}

TEST_HARNESS_MAIN
