// SPDX-License-Identifier: GPL-2.0
/*
 * abi_test.c - the size-first ABI edges of every ASX ioctl: a size below the
 * first version is EINVAL, non-zero bytes past the struct the kernel knows
 * are E2BIG, zero bytes past it are accepted, a bad pointer is EFAULT, a
 * wrong direction or unknown number is ENOTTY, and reserved fields are EINVAL.
 */
#include <stddef.h>

#include "asx_util.h"
#include "asx_harness.h"

struct ioc {
	const char *name;
	unsigned long cmd;
	unsigned int ver0;
	unsigned int resv;	/* offset of a reserved field, 0 if none */
};

#define IOC(c, s, r)	{ #c, c, s, r }

static const struct ioc iocs[] = {
	IOC(ASX_IOC_VERSION, ASX_VERSION_SIZE_VER0, offsetof(struct asx_version, reserved)),
	IOC(ASX_IOC_PUSH, ASX_MODNAME_SIZE_VER0, offsetof(struct asx_modname, reserved)),
	IOC(ASX_IOC_POP, ASX_MODNAME_SIZE_VER0, offsetof(struct asx_modname, reserved)),
	IOC(ASX_IOC_LIST, ASX_LIST_SIZE_VER0, offsetof(struct asx_list, reserved)),
	IOC(ASX_IOC_PUTMSG, ASX_STRMSG_SIZE_VER0, offsetof(struct asx_strmsg, reserved)),
	IOC(ASX_IOC_GETMSG, ASX_STRMSG_SIZE_VER0, offsetof(struct asx_strmsg, reserved)),
	IOC(ASX_IOC_PEEK, ASX_STRMSG_SIZE_VER0, offsetof(struct asx_strmsg, reserved)),
	IOC(ASX_IOC_FLUSH, ASX_FLUSH_SIZE_VER0, offsetof(struct asx_flush, reserved)),
	IOC(ASX_IOC_SRDOPT, ASX_OPT_SIZE_VER0, offsetof(struct asx_opt, reserved)),
	IOC(ASX_IOC_GRDOPT, ASX_OPT_SIZE_VER0, offsetof(struct asx_opt, reserved)),
	IOC(ASX_IOC_SWROPT, ASX_OPT_SIZE_VER0, offsetof(struct asx_opt, reserved)),
	IOC(ASX_IOC_GWROPT, ASX_OPT_SIZE_VER0, offsetof(struct asx_opt, reserved)),
	IOC(ASX_IOC_NREAD, ASX_NREAD_SIZE_VER0, offsetof(struct asx_nread, reserved)),
	IOC(ASX_IOC_GETWM, ASX_WM_SIZE_VER0, offsetof(struct asx_wm, reserved)),
	IOC(ASX_IOC_SETWM, ASX_WM_SIZE_VER0, offsetof(struct asx_wm, reserved)),
	IOC(ASX_IOC_QSTATS, ASX_QSTATS_SIZE_VER0, offsetof(struct asx_qstats, reserved)),
	IOC(ASX_IOC_STR, ASX_STRIOCTL_SIZE_VER0, offsetof(struct asx_strioctl, reserved)),
	IOC(ASX_IOC_LINK, ASX_LINK_SIZE_VER0, offsetof(struct asx_link, reserved)),
	IOC(ASX_IOC_UNLINK, ASX_LINK_SIZE_VER0, offsetof(struct asx_link, reserved)),
	IOC(ASX_IOC_PIPE, ASX_PIPE_SIZE_VER0, offsetof(struct asx_pipe, reserved)),
	IOC(ASX_IOC_SETDRV, ASX_MODNAME_SIZE_VER0, offsetof(struct asx_modname, reserved)),
};

#define NIOC	(sizeof(iocs) / sizeof(iocs[0]))

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

TEST_F(abi, short_size_is_einval)
{
	unsigned int i;
	__u32 size;

	for (i = 0; i < NIOC; i++) {
		for (size = 0; size < iocs[i].ver0; size += iocs[i].ver0 / 3 + 1) {
			memset(self->buf, 0, sizeof(self->buf));
			memcpy(self->buf, &size, 4);
			errno = 0;
			EXPECT_EQ(ioctl(self->fd, iocs[i].cmd, self->buf), -1)
				TH_LOG("%s size %u", iocs[i].name, size);
			EXPECT_EQ(errno, EINVAL) TH_LOG("%s size %u", iocs[i].name, size);
		}
		size = iocs[i].ver0 - 1;
		memset(self->buf, 0, sizeof(self->buf));
		memcpy(self->buf, &size, 4);
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, iocs[i].cmd, self->buf), -1) TH_LOG("%s", iocs[i].name);
		EXPECT_EQ(errno, EINVAL) TH_LOG("%s size %u", iocs[i].name, size);
	}
}

TEST_F(abi, nonzero_tail_is_e2big)
{
	unsigned int i;
	__u32 size;

	for (i = 0; i < NIOC; i++) {
		/* Past what the kernel knows today (the newest struct of this header). */
		size = 512;
		memset(self->buf, 0, sizeof(self->buf));
		memcpy(self->buf, &size, 4);
		self->buf[400] = 1;
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, iocs[i].cmd, self->buf), -1) TH_LOG("%s", iocs[i].name);
		EXPECT_EQ(errno, E2BIG) TH_LOG("%s", iocs[i].name);

		size = 1 << 20;
		memcpy(self->buf, &size, 4);
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, iocs[i].cmd, self->buf), -1) TH_LOG("%s", iocs[i].name);
		EXPECT_EQ(errno, E2BIG) TH_LOG("%s: sizes above a page", iocs[i].name);
	}
}

TEST_F(abi, reserved_is_einval)
{
	unsigned int i;
	__u32 size;

	for (i = 0; i < NIOC; i++) {
		size = iocs[i].ver0;
		memset(self->buf, 0, sizeof(self->buf));
		memcpy(self->buf, &size, 4);
		self->buf[iocs[i].resv] = 1;
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, iocs[i].cmd, self->buf), -1) TH_LOG("%s", iocs[i].name);
		EXPECT_EQ(errno, EINVAL) TH_LOG("%s", iocs[i].name);
	}
}

TEST_F(abi, bad_pointer_is_efault)
{
	unsigned int i;

	for (i = 0; i < NIOC; i++) {
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, iocs[i].cmd, NULL), -1) TH_LOG("%s", iocs[i].name);
		EXPECT_EQ(errno, EFAULT) TH_LOG("%s", iocs[i].name);
	}
}

TEST_F(abi, wrong_direction_or_number_is_enotty)
{
	unsigned int i, nr;

	for (i = 0; i < NIOC; i++) {
		unsigned long cmd = iocs[i].cmd ^ (_IOC_WRITE << _IOC_DIRSHIFT);

		memset(self->buf, 0, sizeof(self->buf));
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, cmd, self->buf), -1) TH_LOG("%s", iocs[i].name);
		EXPECT_EQ(errno, ENOTTY) TH_LOG("%s with other direction bits", iocs[i].name);
	}
	for (nr = NIOC; nr < 256; nr += 17) {
		errno = 0;
		EXPECT_EQ(ioctl(self->fd, _IOWR(ASX_IOC_MAGIC, nr, struct asx_opt), self->buf),
			  -1);
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
