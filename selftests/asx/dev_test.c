// SPDX-License-Identifier: GPL-2.0
/*
 * dev_test.c - the /dev/asx device and the edges of ASX_IOC_VERSION.
 *
 * Needs asx.ko loaded (tools/vm/asx-vm does that). Without it the tests fail:
 * a missing device is a broken setup, not a reason to skip.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <linux/asx.h>

#include "asx_harness.h"

#define ASX_DEV	"/dev/asx"

/* A struct asx_version as a newer user space would see it: more fields. */
struct asx_version_next {
	struct asx_version v;
	__u64 future[3];
};

FIXTURE(dev) {
	int fd;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(ASX_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_GE(self->fd, 0) TH_LOG("open %s: %s: is asx.ko loaded?", ASX_DEV, strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	if (self->fd >= 0) {
		EXPECT_EQ(close(self->fd), 0) TH_LOG("close: %s", strerror(errno));
	}
}

TEST(device_node)
{
	struct stat st;

	ASSERT_EQ(stat(ASX_DEV, &st), 0)
		TH_LOG("stat %s: %s: is asx.ko loaded?", ASX_DEV, strerror(errno));
	EXPECT_TRUE(S_ISCHR(st.st_mode)) TH_LOG("%s is not a character device", ASX_DEV);
	EXPECT_EQ(st.st_mode & 0777, 0666);
}

TEST_F(dev, unknown_ioctl_is_enotty)
{
	struct asx_version v = { .size = sizeof(v) };

	errno = 0;
	EXPECT_EQ(ioctl(self->fd, _IOWR(ASX_IOC_MAGIC, 0x7f, struct asx_version), &v), -1);
	EXPECT_EQ(errno, ENOTTY);

	errno = 0;
	EXPECT_EQ(ioctl(self->fd, _IO(ASX_IOC_MAGIC, 0x7e), 0), -1);
	EXPECT_EQ(errno, ENOTTY);

	/* The right number with the wrong direction bits is another command. */
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, _IOR(ASX_IOC_MAGIC, _IOC_NR(ASX_IOC_VERSION),
				       struct asx_version), &v), -1);
	EXPECT_EQ(errno, ENOTTY);
}

TEST_F(dev, version_exact_size)
{
	struct asx_version v;

	memset(&v, 0xff, sizeof(v));
	v.size = sizeof(v);
	v.reserved[0] = 0;
	v.reserved[1] = 0;
	ASSERT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &v), 0)
		TH_LOG("ASX_IOC_VERSION: %s", strerror(errno));
	EXPECT_EQ(v.size, sizeof(v));
	EXPECT_EQ(v.major, ASX_VERSION_MAJOR);
	EXPECT_EQ(v.minor, ASX_VERSION_MINOR);
	EXPECT_EQ(v.patch, ASX_VERSION_PATCH);
	EXPECT_EQ(v.features & ~(__u64)(ASX_FEAT_STREAMS | ASX_FEAT_PIPE | ASX_FEAT_MUX |
					ASX_FEAT_STR | ASX_FEAT_PROCFS | ASX_FEAT_SA |
					ASX_FEAT_SA_POST | ASX_FEAT_XSI | ASX_FEAT_AUTOPUSH |
					ASX_FEAT_DRVREG | ASX_FEAT_XSI_FD | ASX_FEAT_PLINK | ASX_FEAT_QBAND | 
					ASX_FEAT_TRANSPARENT | ASX_FEAT_SA_PREEMPT), 0);
	EXPECT_EQ(v.features & (ASX_FEAT_XSI | ASX_FEAT_AUTOPUSH),
		  ASX_FEAT_XSI | ASX_FEAT_AUTOPUSH);
	EXPECT_TRUE(v.features & ASX_FEAT_DRVREG);
	/* descriptor passing and the close time; persistent links (named muxes) */
	EXPECT_EQ(v.features & ASX_FEAT_XSI_FD, ASX_FEAT_XSI_FD);
	EXPECT_EQ(v.features & ASX_FEAT_PLINK, ASX_FEAT_PLINK);
	EXPECT_EQ(v.features & ASX_FEAT_QBAND, ASX_FEAT_QBAND);
	EXPECT_EQ(v.features & ASX_FEAT_TRANSPARENT, ASX_FEAT_TRANSPARENT);
	/* PREEMPTED events come with activations */
	EXPECT_EQ(!!(v.features & ASX_FEAT_SA_PREEMPT), !!(v.features & ASX_FEAT_SA));
	EXPECT_EQ(v.max_depth, ASX_MAX_DEPTH);
	EXPECT_EQ(v.reserved[0], 0);
	EXPECT_EQ(v.reserved[1], 0);
	TH_LOG("ASX ABI %u.%u.%u features %#llx", v.major, v.minor, v.patch,
	       (unsigned long long)v.features);
}

TEST_F(dev, version_larger_size_zero_tail)
{
	struct asx_version_next n;

	memset(&n, 0, sizeof(n));
	n.v.size = sizeof(n);
	ASSERT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &n), 0)
		TH_LOG("ASX_IOC_VERSION: %s", strerror(errno));
	EXPECT_EQ(n.v.size, sizeof(struct asx_version));
	EXPECT_EQ(n.v.major, ASX_VERSION_MAJOR);
	EXPECT_EQ(n.v.minor, ASX_VERSION_MINOR);
	/* The kernel writes only what it knows. */
	EXPECT_EQ(n.future[0], 0);
	EXPECT_EQ(n.future[2], 0);
}

/* A program built against the first, 40-byte struct gets 40 bytes back. */
TEST_F(dev, version_ver0_size)
{
	struct asx_version v;

	memset(&v, 0xee, sizeof(v));
	v.size = ASX_VERSION_SIZE_VER0;
	v.reserved[0] = 0;
	v.reserved[1] = 0;
	ASSERT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &v), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(v.size, ASX_VERSION_SIZE_VER0);
	EXPECT_EQ(v.minor, ASX_VERSION_MINOR);
	EXPECT_EQ(v.max_depth, 0xeeeeeeee) TH_LOG("nothing written past the caller's size");
}

TEST_F(dev, version_nonzero_tail_is_e2big)
{
	struct asx_version_next n;

	memset(&n, 0, sizeof(n));
	n.v.size = sizeof(n);
	n.future[2] = 1;
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &n), -1);
	EXPECT_EQ(errno, E2BIG);

	/* Absurd sizes are refused the same way. */
	memset(&n, 0, sizeof(n));
	n.v.size = UINT32_MAX;
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &n), -1);
	EXPECT_EQ(errno, E2BIG);
}

TEST_F(dev, version_small_size_is_einval)
{
	struct asx_version v;
	__u32 sizes[] = { 0, 4, ASX_VERSION_SIZE_VER0 - 1 };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&v, 0, sizeof(v));
		v.size = sizes[i];
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &v), -1) TH_LOG("size %u", sizes[i]);
		EXPECT_EQ(errno, EINVAL) TH_LOG("size %u", sizes[i]);
	}
}

TEST_F(dev, version_reserved_is_einval)
{
	struct asx_version v;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		memset(&v, 0, sizeof(v));
		v.size = sizeof(v);
		v.reserved[i] = 1ULL << 63;
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &v), -1) TH_LOG("reserved[%u]", i);
		EXPECT_EQ(errno, EINVAL) TH_LOG("reserved[%u]", i);
	}
}

TEST_F(dev, version_bad_pointer_is_efault)
{
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_VERSION, NULL), -1);
	EXPECT_EQ(errno, EFAULT);
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_VERSION, (void *)8), -1);
	EXPECT_EQ(errno, EFAULT);
}

TEST_F(dev, two_opens_are_independent)
{
	struct asx_version v = { .size = sizeof(v) };
	int fd2;

	fd2 = open(ASX_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd2, 0) TH_LOG("second open %s: %s", ASX_DEV, strerror(errno));
	EXPECT_NE(fd2, self->fd);

	/* Closing one leaves the other usable. */
	ASSERT_EQ(close(fd2), 0) TH_LOG("close: %s", strerror(errno));
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &v), 0) TH_LOG("%s", strerror(errno));

	fd2 = open(ASX_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_GE(fd2, 0) TH_LOG("third open %s: %s", ASX_DEV, strerror(errno));
	ASSERT_EQ(close(self->fd), 0) TH_LOG("close: %s", strerror(errno));
	self->fd = -1;
	v.size = sizeof(v);
	EXPECT_EQ(ioctl(fd2, ASX_IOC_VERSION, &v), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(close(fd2), 0) TH_LOG("close: %s", strerror(errno));
}

TEST_F(dev, close_then_ioctl_is_ebadf)
{
	struct asx_version v = { .size = sizeof(v) };
	int fd = self->fd;

	ASSERT_EQ(close(fd), 0) TH_LOG("close: %s", strerror(errno));
	self->fd = -1;
	errno = 0;
	EXPECT_EQ(ioctl(fd, ASX_IOC_VERSION, &v), -1);
	EXPECT_EQ(errno, EBADF);
}

TEST_HARNESS_MAIN
