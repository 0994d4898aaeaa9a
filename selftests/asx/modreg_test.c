// SPDX-License-Identifier: GPL-2.0
/*
 * modreg_test.c - a second kernel module, kmod/test/asx_rot13.ko, registers
 * the ASX module "rot13" through asx.ko's exported API: load it, push and use
 * "rot13", check that neither module unloads while in use, unload it.
 */
#include "asx_util.h"
#include "asx_harness.h"
#include "ko_util.h"

#define ROT13_KO	"asx_rot13.ko"

FIXTURE(rot13) {
	int fd;
};

FIXTURE_SETUP(rot13)
{
	self->fd = -1;
	ASSERT_EQ(asx_ko_load(ROT13_KO, ""), 0)
		TH_LOG("load %s: %s (run make kmod)", ROT13_KO, strerror(errno));
}

FIXTURE_TEARDOWN(rot13)
{
	if (self->fd >= 0)
		close(self->fd);
	asx_ko_unload("asx_rot13");
}

TEST_F(rot13, registers_pushes_and_unloads)
{
	char buf[32];

	EXPECT_TRUE(asx_proc_has("/proc/asx/modules", "module rot13 asx_rot13"));
	EXPECT_TRUE(asx_proc_has("/proc/asx/modules", "module pass asx"));
	self->fd = asx_open(0);
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(asx_push(self->fd, "rot13"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(write(self->fd, "Hello, World", 12), 12);
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 12);
	EXPECT_EQ(strcmp(buf, "Uryyb, Jbeyq"), 0) TH_LOG("got %s", buf);

	errno = 0;
	EXPECT_EQ(asx_ko_unload("asx_rot13"), -1)
		TH_LOG("unloaded while pushed");
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("errno %d", errno);
	errno = 0;
	EXPECT_EQ(asx_ko_unload("asx"), -1)
		TH_LOG("asx unloaded under its user");
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("errno %d", errno);

	ASSERT_EQ(asx_pop(self->fd, "rot13"), 0);
	ASSERT_EQ(asx_ko_unload("asx_rot13"), 0)
		TH_LOG("%s", strerror(errno));
	EXPECT_FALSE(asx_proc_has("/proc/asx/modules", "module rot13 asx_rot13"));
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
		ret = asx_ko_unload("asx_rot13");
		if (ret)
			asx_msleep(10);
	}
	EXPECT_EQ(ret, 0) TH_LOG("asx_rot13 still busy: %s", strerror(errno));
}

TEST_HARNESS_MAIN
