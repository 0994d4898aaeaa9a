// SPDX-License-Identifier: GPL-2.0
/*
 * abi_test.c - the size-first ABI edges of every ASX ioctl: a size below the
 * first version is EINVAL, non-zero bytes past the struct the kernel knows
 * are E2BIG, zero bytes past it are accepted, a bad pointer is EFAULT, a
 * wrong direction or unknown number is ENOTTY, and reserved fields are EINVAL.
 *
 * Each edge of each ioctl is a test of its own, ioc.<ioctl>.<edge> (a
 * variant of the ioc fixture per ioctl): one TAP line each.
 */
#include <stddef.h>

#include "asx_util.h"
#include "asx_harness.h"

FIXTURE(ioc) {
	int fd;
	unsigned char buf[4096];
};

/* The ioctls: every TEST_F(ioc, ...) runs once for each. */
FIXTURE_VARIANT(ioc) {
	unsigned long cmd;
	unsigned int ver0;	/* the size of the first version */
	unsigned int resv;	/* offset of a reserved field */
};

#define IOC(v, c, s, type)							\
	FIXTURE_VARIANT_ADD(ioc, v) {						\
		.cmd = c,							\
		.ver0 = s,							\
		.resv = offsetof(struct type, reserved),			\
	}

IOC(version, ASX_IOC_VERSION, ASX_VERSION_SIZE_VER0, asx_version);
IOC(push, ASX_IOC_PUSH, ASX_MODNAME_SIZE_VER0, asx_modname);
IOC(pop, ASX_IOC_POP, ASX_MODNAME_SIZE_VER0, asx_modname);
IOC(list, ASX_IOC_LIST, ASX_LIST_SIZE_VER0, asx_list);
IOC(putmsg, ASX_IOC_PUTMSG, ASX_STRMSG_SIZE_VER0, asx_strmsg);
IOC(getmsg, ASX_IOC_GETMSG, ASX_STRMSG_SIZE_VER0, asx_strmsg);
IOC(peek, ASX_IOC_PEEK, ASX_STRMSG_SIZE_VER0, asx_strmsg);
IOC(flush, ASX_IOC_FLUSH, ASX_FLUSH_SIZE_VER0, asx_flush);
IOC(srdopt, ASX_IOC_SRDOPT, ASX_OPT_SIZE_VER0, asx_opt);
IOC(grdopt, ASX_IOC_GRDOPT, ASX_OPT_SIZE_VER0, asx_opt);
IOC(swropt, ASX_IOC_SWROPT, ASX_OPT_SIZE_VER0, asx_opt);
IOC(gwropt, ASX_IOC_GWROPT, ASX_OPT_SIZE_VER0, asx_opt);
IOC(nread, ASX_IOC_NREAD, ASX_NREAD_SIZE_VER0, asx_nread);
IOC(getwm, ASX_IOC_GETWM, ASX_WM_SIZE_VER0, asx_wm);
IOC(setwm, ASX_IOC_SETWM, ASX_WM_SIZE_VER0, asx_wm);
IOC(qstats, ASX_IOC_QSTATS, ASX_QSTATS_SIZE_VER0, asx_qstats);
IOC(str, ASX_IOC_STR, ASX_STRIOCTL_SIZE_VER0, asx_strioctl);
IOC(link, ASX_IOC_LINK, ASX_LINK_SIZE_VER0, asx_link);
IOC(unlink, ASX_IOC_UNLINK, ASX_LINK_SIZE_VER0, asx_link);
IOC(pipe, ASX_IOC_PIPE, ASX_PIPE_SIZE_VER0, asx_pipe);
IOC(setdrv, ASX_IOC_SETDRV, ASX_MODNAME_SIZE_VER0, asx_modname);
IOC(autopush, ASX_IOC_AUTOPUSH, ASX_AUTOPUSH_SIZE_VER0, asx_autopush);

FIXTURE_SETUP(ioc)
{
	self->fd = asx_open(O_NONBLOCK);
	ASSERT_GE(self->fd, 0) TH_LOG("open %s: %s", ASX_DEV, strerror(errno));
}

FIXTURE_TEARDOWN(ioc)
{
	close(self->fd);
}

/* Zeroes the argument buffer but for its size field, @size. */
static void ioc_buf(FIXTURE_DATA(ioc) *self, __u32 size)
{
	memset(self->buf, 0, sizeof(self->buf));
	memcpy(self->buf, &size, 4);
	errno = 0;
}

TEST_F(ioc, short_size_is_einval)
{
	__u32 size;

	for (size = 0; size < variant->ver0; size += variant->ver0 / 3 + 1) {
		ioc_buf(self, size);
		EXPECT_EQ(ioctl(self->fd, variant->cmd, self->buf), -1) TH_LOG("size %u", size);
		EXPECT_EQ(errno, EINVAL) TH_LOG("size %u", size);
	}
	size = variant->ver0 - 1;
	ioc_buf(self, size);
	EXPECT_EQ(ioctl(self->fd, variant->cmd, self->buf), -1) TH_LOG("size %u", size);
	EXPECT_EQ(errno, EINVAL) TH_LOG("size %u", size);
}

TEST_F(ioc, nonzero_tail_is_e2big)
{
	__u32 size = 1 << 20;

	/* Past what the kernel knows today (the newest struct of this header). */
	ioc_buf(self, 512);
	self->buf[400] = 1;
	EXPECT_EQ(ioctl(self->fd, variant->cmd, self->buf), -1);
	EXPECT_EQ(errno, E2BIG);

	memcpy(self->buf, &size, 4);
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, variant->cmd, self->buf), -1);
	EXPECT_EQ(errno, E2BIG) TH_LOG("sizes above a page");
}

TEST_F(ioc, reserved_is_einval)
{
	ioc_buf(self, variant->ver0);
	self->buf[variant->resv] = 1;
	EXPECT_EQ(ioctl(self->fd, variant->cmd, self->buf), -1);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(ioc, bad_pointer_is_efault)
{
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, variant->cmd, NULL), -1);
	EXPECT_EQ(errno, EFAULT);
}

TEST_F(ioc, wrong_direction_is_enotty)
{
	ioc_buf(self, 0);
	EXPECT_EQ(ioctl(self->fd, variant->cmd ^ (_IOC_WRITE << _IOC_DIRSHIFT), self->buf), -1);
	EXPECT_EQ(errno, ENOTTY) TH_LOG("with other direction bits");
}

/* What is not one ioctl's. */
FIXTURE(abi) {
	int fd;
	unsigned char buf[4096];
};

FIXTURE_SETUP(abi)
{
	self->fd = asx_open(O_NONBLOCK);
	ASSERT_GE(self->fd, 0) TH_LOG("open %s: %s", ASX_DEV, strerror(errno));
}

FIXTURE_TEARDOWN(abi)
{
	close(self->fd);
}

TEST_F(abi, unknown_number_is_enotty)
{
	unsigned int nr;

	/* from the number after the last Stream ioctl's */
	for (nr = _IOC_NR(ASX_IOC_AUTOPUSH) + 1; nr < 256; nr += 17) {
		memset(self->buf, 0, sizeof(self->buf));
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, _IOWR(ASX_IOC_MAGIC, nr, struct asx_opt), self->buf),
			  -1) TH_LOG("number %#x", nr);
		EXPECT_EQ(errno, ENOTTY) TH_LOG("number %#x", nr);
	}
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, _IOWR('T', 1, struct asx_opt), self->buf), -1);
	EXPECT_EQ(errno, ENOTTY);
}

/* Zero bytes past the struct, and a size encoded in the command that differs. */
TEST_F(abi, larger_zero_tail_is_accepted)
{
	struct {
		struct asx_nread nr;
		__u64 future[4];
	} big;
	struct asx_opt o;

	memset(&big, 0, sizeof(big));
	big.nr.size = sizeof(big);
	ASSERT_EQ(ioctl(self->fd, ASX_IOC_NREAD, &big), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(big.nr.size, sizeof(struct asx_nread));
	EXPECT_EQ(big.future[3], 0);

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	ASSERT_EQ(ioctl(self->fd, _IOWR(ASX_IOC_MAGIC, 0x09, struct asx_nread), &o), 0)
		TH_LOG("the size bits of the command are ignored: %s", strerror(errno));
}

TEST_HARNESS_MAIN
