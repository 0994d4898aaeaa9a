// SPDX-License-Identifier: GPL-2.0
/*
 * stream_test.c - one Stream: read/write/poll, read options, putmsg/getmsg,
 * bands and priority, flush, nread/peek, push/pop/list, water marks, queue
 * statistics, flow control, signals, STR, the null driver.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "asx_util.h"
#include "asx_harness.h"

FIXTURE(st) {
	int fd;
};

FIXTURE_SETUP(st)
{
	self->fd = asx_open(0);
	ASSERT_GE(self->fd, 0) TH_LOG("open %s: %s: is asx.ko loaded?", ASX_DEV, strerror(errno));
}

FIXTURE_TEARDOWN(st)
{
	if (self->fd >= 0) {
		EXPECT_EQ(close(self->fd), 0) TH_LOG("close: %s", strerror(errno));
	}
}

TEST_F(st, loop_roundtrip)
{
	char buf[64];

	ASSERT_EQ(write(self->fd, "hello", 5), 5) TH_LOG("%s", strerror(errno));
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 5) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(memcmp(buf, "hello", 5), 0);
}

TEST_F(st, empty_nonblock_read_is_eagain)
{
	char c;
	int fl = fcntl(self->fd, F_GETFL);

	ASSERT_EQ(fcntl(self->fd, F_SETFL, fl | O_NONBLOCK), 0);
	errno = 0;
	EXPECT_EQ(read(self->fd, &c, 1), -1);
	EXPECT_EQ(errno, EAGAIN);
}

TEST_F(st, read_modes)
{
	char buf[64];

	EXPECT_EQ(asx_opt(self->fd, ASX_IOC_GRDOPT, 0), ASX_RNORM);
	/* Byte stream: two messages in one read. */
	ASSERT_EQ(write(self->fd, "abc", 3), 3);
	ASSERT_EQ(write(self->fd, "def", 3), 3);
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 6);
	EXPECT_EQ(memcmp(buf, "abcdef", 6), 0);

	/* Message, non-discard: the rest stays. */
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	EXPECT_EQ(asx_opt(self->fd, ASX_IOC_GRDOPT, 0), ASX_RMSGN);
	ASSERT_EQ(write(self->fd, "abcdef", 6), 6);
	ASSERT_EQ(write(self->fd, "gh", 2), 2);
	ASSERT_EQ(read(self->fd, buf, 4), 4);
	EXPECT_EQ(memcmp(buf, "abcd", 4), 0);
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 2);
	EXPECT_EQ(memcmp(buf, "ef", 2), 0);
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 2);
	EXPECT_EQ(memcmp(buf, "gh", 2), 0);

	/* Message, discard: the rest goes. */
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RMSGD), 0);
	ASSERT_EQ(write(self->fd, "abcdef", 6), 6);
	ASSERT_EQ(write(self->fd, "gh", 2), 2);
	ASSERT_EQ(read(self->fd, buf, 4), 4);
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 2);
	EXPECT_EQ(memcmp(buf, "gh", 2), 0);

	errno = 0;
	EXPECT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RMODEMASK), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, 0x100), -1);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(st, sndzero_write_option)
{
	struct asx_nread nr;
	char buf[8];

	EXPECT_EQ(write(self->fd, buf, 0), 0);
	ASSERT_EQ(asx_nread(self->fd, &nr), 0);
	EXPECT_EQ(nr.msgs, 0) TH_LOG("a zero write sends nothing by default");
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SWROPT, ASX_SNDZERO), 0);
	EXPECT_EQ(asx_opt(self->fd, ASX_IOC_GWROPT, 0), ASX_SNDZERO);
	EXPECT_EQ(write(self->fd, buf, 0), 0);
	ASSERT_EQ(write(self->fd, "x", 1), 1);
	ASSERT_EQ(asx_nread(self->fd, &nr), 0);
	EXPECT_EQ(nr.msgs, 2);
	EXPECT_EQ(nr.first, 0);
	EXPECT_EQ(nr.bytes, 1);
	/* The zero-length message reads as 0 (end of a message), then the data. */
	EXPECT_EQ(read(self->fd, buf, sizeof(buf)), 0);
	EXPECT_EQ(read(self->fd, buf, sizeof(buf)), 1);
	errno = 0;
	EXPECT_EQ(asx_opt(self->fd, ASX_IOC_SWROPT, 2), -1);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(st, poll_in_out_pri)
{
	short ev;

	ev = asx_poll1(self->fd, POLLIN | POLLOUT | POLLPRI, 0);
	EXPECT_EQ(ev, POLLOUT);
	ASSERT_EQ(write(self->fd, "x", 1), 1);
	ev = asx_poll1(self->fd, POLLIN | POLLRDNORM | POLLPRI, 0);
	EXPECT_EQ(ev, POLLIN | POLLRDNORM);
	ASSERT_EQ(asx_putmsg(self->fd, "c", 1, NULL, -1, ASX_MSG_HIPRI, 0), 0)
		TH_LOG("%s", strerror(errno));
	ev = asx_poll1(self->fd, POLLIN | POLLPRI | POLLRDBAND, 0);
	EXPECT_EQ(ev, POLLIN | POLLPRI);
	ASSERT_EQ(asx_putmsg(self->fd, NULL, -1, "b", 1, 0, 3), 0) TH_LOG("%s", strerror(errno));
	ev = asx_poll1(self->fd, POLLIN | POLLPRI | POLLRDBAND, 0);
	EXPECT_EQ(ev, POLLIN | POLLPRI | POLLRDBAND);
}

TEST_F(st, putmsg_getmsg_roundtrip)
{
	unsigned char ctl[300], data[5000], c2[300], d2[5000];
	struct asx_strmsg sm;
	unsigned int i;

	for (i = 0; i < sizeof(ctl); i++)
		ctl[i] = i * 7;
	for (i = 0; i < sizeof(data); i++)
		data[i] = i * 13 + 1;
	ASSERT_EQ(asx_putmsg(self->fd, ctl, sizeof(ctl), data, sizeof(data), 0, 0), 0)
		TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, c2, sizeof(c2), d2, sizeof(d2),
			     ASX_MSG_ANY, 0), 0)
		TH_LOG("%s", strerror(errno));
	EXPECT_EQ(sm.ctl.len, sizeof(ctl));
	EXPECT_EQ(sm.data.len, sizeof(data));
	EXPECT_EQ(sm.more, 0);
	EXPECT_EQ(sm.flags, ASX_MSG_BAND);
	EXPECT_EQ(memcmp(c2, ctl, sizeof(ctl)), 0);
	EXPECT_EQ(memcmp(d2, data, sizeof(data)), 0);

	/* Short buffers: the rest stays queued and "more" says which part. */
	ASSERT_EQ(asx_putmsg(self->fd, ctl, 10, data, 20, 0, 0), 0);
	ASSERT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, c2, 4, d2, 8, ASX_MSG_ANY, 0), 0);
	EXPECT_EQ(sm.ctl.len, 4);
	EXPECT_EQ(sm.data.len, 8);
	EXPECT_EQ(sm.more, ASX_MORECTL | ASX_MOREDATA);
	ASSERT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, c2, 100, d2, 100, ASX_MSG_ANY, 0),
		  0);
	EXPECT_EQ(sm.ctl.len, 6);
	EXPECT_EQ(memcmp(c2, ctl + 4, 6), 0);
	EXPECT_EQ(sm.data.len, 12);
	EXPECT_EQ(memcmp(d2, data + 8, 12), 0);
	EXPECT_EQ(sm.more, 0);

	/* Data only: no control part (-1); control only: no data part. */
	ASSERT_EQ(write(self->fd, "zz", 2), 2);
	ASSERT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, c2, 100, d2, 100, ASX_MSG_ANY, 0),
		  0);
	EXPECT_EQ(sm.ctl.len, -1);
	EXPECT_EQ(sm.data.len, 2);
	ASSERT_EQ(asx_putmsg(self->fd, "k", 1, NULL, -1, 0, 0), 0);
	ASSERT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, c2, 100, d2, 100, ASX_MSG_ANY, 0),
		  0);
	EXPECT_EQ(sm.ctl.len, 1);
	EXPECT_EQ(sm.data.len, -1);
}

TEST_F(st, putmsg_errors)
{
	static char big[ASX_MAX_DATA + 1];

	errno = 0;
	EXPECT_EQ(asx_putmsg(self->fd, NULL, -1, "x", 1, ASX_MSG_HIPRI, 0), -1)
		TH_LOG("high priority needs a control part");
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_putmsg(self->fd, "c", 1, NULL, -1, ASX_MSG_HIPRI, 1), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_putmsg(self->fd, NULL, -1, "x", 1, 0, 256), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_putmsg(self->fd, NULL, -1, big, sizeof(big), 0, 0), -1);
	EXPECT_EQ(errno, ERANGE);
	errno = 0;
	EXPECT_EQ(asx_putmsg(self->fd, big, ASX_MAX_CTL + 1, NULL, -1, 0, 0), -1);
	EXPECT_EQ(errno, ERANGE);
	errno = 0;
	EXPECT_EQ(asx_putmsg(self->fd, NULL, -1, (void *)8, 10, 0, 0), -1);
	EXPECT_EQ(errno, EFAULT);
	errno = 0;
	EXPECT_EQ(asx_putmsg(self->fd, NULL, -1, "x", 1, 0x80, 0), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(asx_putmsg(self->fd, NULL, -1, NULL, -1, 0, 0), 0) TH_LOG("nothing to send");
}

TEST_F(st, read_of_control_part)
{
	char buf[16];

	ASSERT_EQ(asx_putmsg(self->fd, "CC", 2, "dd", 2, 0, 0), 0);
	errno = 0;
	EXPECT_EQ(read(self->fd, buf, sizeof(buf)), -1);
	EXPECT_EQ(errno, EBADMSG) TH_LOG("RPROTNORM refuses a control part");
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RPROTDAT), 0);
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 4);
	EXPECT_EQ(memcmp(buf, "CCdd", 4), 0);
	ASSERT_EQ(asx_putmsg(self->fd, "CC", 2, "dd", 2, 0, 0), 0);
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RPROTDIS), 0);
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 2);
	EXPECT_EQ(memcmp(buf, "dd", 2), 0);
}

/* Out of order: high priority first, then bands high to low, FIFO within each. */
static void check_order(struct __test_metadata *_metadata, int fd)
{
	static const struct { const char *data; unsigned int flags, band; } want[] = {
		{ "c1", ASX_MSG_HIPRI, 0 }, { "c2", ASX_MSG_HIPRI, 0 },
		{ "b5", ASX_MSG_BAND, 5 }, { "b5'", ASX_MSG_BAND, 5 },
		{ "d2", ASX_MSG_BAND, 2 }, { "a0", ASX_MSG_BAND, 0 }, { "a0'", ASX_MSG_BAND, 0 },
	};
	char ctl[16], data[16];
	struct asx_strmsg sm;
	unsigned int i;

	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		memset(data, 0, sizeof(data));
		ASSERT_EQ(asx_getmsg(fd, ASX_IOC_GETMSG, &sm, ctl, sizeof(ctl), data,
				     sizeof(data), ASX_MSG_ANY, 0), 0)
			TH_LOG("%s", strerror(errno));
		EXPECT_EQ(sm.flags, want[i].flags) TH_LOG("message %u", i);
		EXPECT_EQ(sm.band, want[i].band) TH_LOG("message %u", i);
		EXPECT_EQ(strcmp(data, want[i].data), 0)
			TH_LOG("message %u: %s, want %s", i, data, want[i].data);
	}
}

static void send_mixed(struct __test_metadata *_metadata, int fd)
{
	ASSERT_EQ(asx_putmsg(fd, NULL, -1, "a0", 2, 0, 0), 0);
	ASSERT_EQ(asx_putmsg(fd, NULL, -1, "b5", 2, 0, 5), 0);
	ASSERT_EQ(asx_putmsg(fd, "h", 1, "c1", 2, ASX_MSG_HIPRI, 0), 0);
	ASSERT_EQ(asx_putmsg(fd, NULL, -1, "d2", 2, 0, 2), 0);
	ASSERT_EQ(asx_putmsg(fd, NULL, -1, "a0'", 3, 0, 0), 0);
	ASSERT_EQ(asx_putmsg(fd, "h", 1, "c2", 2, ASX_MSG_HIPRI, 0), 0);
	ASSERT_EQ(asx_putmsg(fd, NULL, -1, "b5'", 3, 0, 5), 0);
}

TEST_F(st, band_and_priority_order)
{
	send_mixed(_metadata, self->fd);
	check_order(_metadata, self->fd);
}

TEST_F(st, band_order_through_hold)
{
	struct asx_nread nr;

	ASSERT_EQ(asx_push(self->fd, "hold"), 0) TH_LOG("%s", strerror(errno));
	send_mixed(_metadata, self->fd);
	ASSERT_EQ(asx_nread(self->fd, &nr), 0);
	EXPECT_EQ(nr.msgs, 0) TH_LOG("hold keeps them");
	ASSERT_EQ(asx_str(self->fd, ASX_STR_HOLD_RELEASE, NULL, 0, 0, NULL), 0)
		TH_LOG("%s", strerror(errno));
	EXPECT_EQ(asx_poll1(self->fd, POLLPRI, 2000), POLLPRI);
	check_order(_metadata, self->fd);
}

TEST_F(st, getmsg_selects_priority_and_band)
{
	char ctl[8], data[8];
	struct asx_strmsg sm;
	int fl = fcntl(self->fd, F_GETFL);

	ASSERT_EQ(fcntl(self->fd, F_SETFL, fl | O_NONBLOCK), 0);
	ASSERT_EQ(asx_putmsg(self->fd, NULL, -1, "b1", 2, 0, 1), 0);
	errno = 0;
	EXPECT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, ctl, 8, data, 8, ASX_MSG_HIPRI, 0),
		  -1);
	EXPECT_EQ(errno, EAGAIN);
	errno = 0;
	EXPECT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, ctl, 8, data, 8, ASX_MSG_BAND, 2),
		  -1);
	EXPECT_EQ(errno, EAGAIN);
	ASSERT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, ctl, 8, data, 8, ASX_MSG_BAND, 1),
		  0);
	EXPECT_EQ(sm.band, 1);
	errno = 0;
	EXPECT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, ctl, 8, data, 8, 3, 0), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_getmsg(self->fd, ASX_IOC_GETMSG, &sm, ctl, 8, data, 8, ASX_MSG_ANY, 1), -1);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(st, nread_and_peek)
{
	char ctl[8], data[8];
	struct asx_strmsg sm;
	struct asx_nread nr;

	ASSERT_EQ(asx_getmsg(self->fd, ASX_IOC_PEEK, &sm, ctl, 8, data, 8, 0, 0), 0);
	EXPECT_EQ(sm.more, 0) TH_LOG("nothing to peek at");
	ASSERT_EQ(write(self->fd, "12345", 5), 5);
	ASSERT_EQ(write(self->fd, "678", 3), 3);
	ASSERT_EQ(asx_nread(self->fd, &nr), 0);
	EXPECT_EQ(nr.msgs, 2);
	EXPECT_EQ(nr.first, 5);
	EXPECT_EQ(nr.bytes, 8);
	ASSERT_EQ(asx_getmsg(self->fd, ASX_IOC_PEEK, &sm, ctl, 8, data, 8, 0, 0), 0);
	EXPECT_EQ(sm.more, 1);
	EXPECT_EQ(sm.data.len, 5);
	EXPECT_EQ(memcmp(data, "12345", 5), 0);
	ASSERT_EQ(asx_nread(self->fd, &nr), 0);
	EXPECT_EQ(nr.msgs, 2) TH_LOG("peek leaves the message");
	EXPECT_EQ(nr.first, 5);
}

TEST_F(st, flush_and_flush_band)
{
	struct asx_nread nr;
	char buf[8];

	ASSERT_EQ(write(self->fd, "a", 1), 1);
	ASSERT_EQ(write(self->fd, "b", 1), 1);
	ASSERT_EQ(asx_flush(self->fd, ASX_FLUSHR, 0), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_nread(self->fd, &nr), 0);
	EXPECT_EQ(nr.msgs, 0);

	ASSERT_EQ(asx_putmsg(self->fd, NULL, -1, "1", 1, 0, 1), 0);
	ASSERT_EQ(asx_putmsg(self->fd, NULL, -1, "2", 1, 0, 2), 0);
	ASSERT_EQ(asx_putmsg(self->fd, NULL, -1, "0", 1, 0, 0), 0);
	ASSERT_EQ(asx_flush(self->fd, ASX_FLUSHR | ASX_FLUSHBAND, 1), 0)
		TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_nread(self->fd, &nr), 0);
	EXPECT_EQ(nr.msgs, 2);
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	EXPECT_EQ(read(self->fd, buf, 8), 1);
	EXPECT_EQ(buf[0], '2');
	EXPECT_EQ(read(self->fd, buf, 8), 1);
	EXPECT_EQ(buf[0], '0');

	/* Flushing the write side empties a held queue. */
	ASSERT_EQ(asx_push(self->fd, "hold"), 0);
	ASSERT_EQ(write(self->fd, "abc", 3), 3);
	ASSERT_EQ(asx_flush(self->fd, ASX_FLUSHW, 0), 0);
	ASSERT_EQ(asx_str(self->fd, ASX_STR_HOLD_RELEASE, NULL, 0, 0, NULL), 0);
	ASSERT_EQ(write(self->fd, "d", 1), 1);
	EXPECT_EQ(read(self->fd, buf, 8), 1);
	EXPECT_EQ(buf[0], 'd');

	errno = 0;
	EXPECT_EQ(asx_flush(self->fd, 0, 0), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_flush(self->fd, ASX_FLUSHR, 1), -1) TH_LOG("band without FLUSHBAND");
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_flush(self->fd, 0x10 | ASX_FLUSHR, 0), -1);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(st, push_pop_list)
{
	char names[4][ASX_NAME_MAX], drv[ASX_NAME_MAX];
	char buf[8];

	ASSERT_EQ(asx_list(self->fd, names, 4, drv), 0);
	EXPECT_EQ(strcmp(drv, "loop"), 0);
	ASSERT_EQ(asx_push(self->fd, "pass"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_push(self->fd, "count"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_list(self->fd, names, 4, NULL), 2);
	EXPECT_EQ(strcmp(names[0], "count"), 0) TH_LOG("top first");
	EXPECT_EQ(strcmp(names[1], "pass"), 0);
	EXPECT_EQ(asx_list(self->fd, names, 1, NULL), 2) TH_LOG("count says the depth");
	EXPECT_EQ(asx_list(self->fd, NULL, 0, NULL), 2);
	ASSERT_EQ(write(self->fd, "xy", 2), 2);
	EXPECT_EQ(read(self->fd, buf, 8), 2);

	errno = 0;
	EXPECT_EQ(asx_pop(self->fd, "frame"), -1) TH_LOG("not on the Stream");
	EXPECT_EQ(errno, ENOENT);
	ASSERT_EQ(asx_pop(self->fd, "pass"), 0) TH_LOG("pop by name: %s", strerror(errno));
	ASSERT_EQ(asx_list(self->fd, names, 4, NULL), 1);
	EXPECT_EQ(strcmp(names[0], "count"), 0);
	ASSERT_EQ(asx_pop(self->fd, NULL), 0);
	errno = 0;
	EXPECT_EQ(asx_pop(self->fd, NULL), -1) TH_LOG("pop on an empty Stream");
	EXPECT_EQ(errno, EINVAL);
	ASSERT_EQ(write(self->fd, "zz", 2), 2);
	EXPECT_EQ(read(self->fd, buf, 8), 2);
}

TEST_F(st, push_errors_and_depth_limit)
{
	struct asx_modname mn;
	char buf[8];
	int i;

	errno = 0;
	EXPECT_EQ(asx_push(self->fd, "no-such-module"), -1);
	EXPECT_EQ(errno, ENOENT) TH_LOG("unknown name is ENOENT");
	errno = 0;
	EXPECT_EQ(asx_push(self->fd, ""), -1);
	EXPECT_EQ(errno, EINVAL) TH_LOG("empty name is EINVAL");
	memset(&mn, 'a', sizeof(mn));
	mn.size = sizeof(mn);
	mn.flags = 0;
	mn.reserved = 0;
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_PUSH, &mn), -1);
	EXPECT_EQ(errno, EINVAL) TH_LOG("unterminated name is EINVAL");
	memset(&mn, 0, sizeof(mn));
	mn.size = sizeof(mn);
	strcpy(mn.name, "pass");
	mn.flags = 1;
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_PUSH, &mn), -1);
	EXPECT_EQ(errno, EINVAL);

	for (i = 0; i < ASX_MAX_DEPTH; i++) {
		ASSERT_EQ(asx_push(self->fd, "pass"), 0) TH_LOG("push %d: %s", i, strerror(errno));
	}
	errno = 0;
	EXPECT_EQ(asx_push(self->fd, "pass"), -1);
	EXPECT_EQ(errno, ENOSR) TH_LOG("push past ASX_MAX_DEPTH");
	ASSERT_EQ(write(self->fd, "deep", 4), 4);
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	EXPECT_EQ(read(self->fd, buf, 8), 4);
}

TEST_F(st, water_marks)
{
	struct asx_wm wm;

	memset(&wm, 0, sizeof(wm));
	wm.size = sizeof(wm);
	ASSERT_EQ(ioctl(self->fd, ASX_IOC_GETWM, &wm), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(wm.hiwat, ASX_DEF_HIWAT);
	EXPECT_EQ(wm.lowat, ASX_DEF_LOWAT);
	ASSERT_EQ(asx_setwm(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 1000, 10), 0);
	memset(&wm, 0, sizeof(wm));
	wm.size = sizeof(wm);
	wm.level = 1;
	wm.side = ASX_SIDE_WRITE;
	ASSERT_EQ(ioctl(self->fd, ASX_IOC_GETWM, &wm), 0)
		TH_LOG("level 1 is the driver at depth 0");
	EXPECT_EQ(wm.hiwat, 1000);
	EXPECT_EQ(wm.lowat, 10);

	errno = 0;
	EXPECT_EQ(asx_setwm(self->fd, 0, 0, 10, 11), -1) TH_LOG("lowat above hiwat");
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_setwm(self->fd, 0, 0, 0, 0), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_setwm(self->fd, 0, 0, ASX_MAX_HIWAT + 1ULL, 0), -1);
	EXPECT_EQ(errno, EINVAL);
	ASSERT_EQ(asx_setwm(self->fd, 0, 0, ASX_MAX_HIWAT, 0), 0)
		TH_LOG("root may: %s", strerror(errno));
	{
		pid_t pid = fork();
		int status = -1;

		if (pid == 0) {
			if (setresuid(65534, 65534, 65534))
				_exit(2);
			errno = 0;
			if (asx_setwm(self->fd, 0, 0, ASX_MAX_HIWAT_USER, 0) ||
			    asx_setwm(self->fd, 0, 0, ASX_MAX_HIWAT_USER + 1, 0) != -1)
				_exit(3);
			_exit(errno == EPERM ? 0 : 4);
		}
		ASSERT_GT(pid, 0);
		waitpid(pid, &status, 0);
		EXPECT_EQ(status, 0) TH_LOG("an unprivileged user is limited to 1 MB");
	}
	errno = 0;
	EXPECT_EQ(asx_setwm(self->fd, 0, 2, 10, 1), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(asx_setwm(self->fd, 5, 0, 10, 1), -1);
	EXPECT_EQ(errno, ENXIO);
}

TEST_F(st, queue_stats)
{
	struct asx_qstats qs;

	ASSERT_EQ(asx_push(self->fd, "pass"), 0);
	ASSERT_EQ(write(self->fd, "abcd", 4), 4);
	ASSERT_EQ(write(self->fd, "ef", 2), 2);
	ASSERT_EQ(asx_qstats(self->fd, 0, ASX_SIDE_READ, &qs), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(strcmp(qs.name, "head"), 0);
	EXPECT_EQ(qs.count, 6);
	EXPECT_EQ(qs.msgs, 2);
	EXPECT_EQ(qs.enqueued, 2);
	EXPECT_EQ(qs.puts, 2);
	ASSERT_EQ(asx_qstats(self->fd, 1, ASX_SIDE_WRITE, &qs), 0);
	EXPECT_EQ(strcmp(qs.name, "pass"), 0);
	EXPECT_EQ(qs.puts, 2);
	EXPECT_EQ(qs.msgs, 0);
	ASSERT_EQ(asx_qstats(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, &qs), 0);
	EXPECT_EQ(strcmp(qs.name, "loop"), 0);
	EXPECT_TRUE(qs.qflags & ASX_QS_SRV);
	errno = 0;
	EXPECT_EQ(asx_qstats(self->fd, 3, 0, &qs), -1);
	EXPECT_EQ(errno, ENXIO);
}

struct writer_arg {
	int fd;
	size_t len;
	ssize_t ret;
	int err;
	volatile int done;
};

static void *writer(void *p)
{
	struct writer_arg *a = p;
	char buf[4096];

	memset(buf, 'w', sizeof(buf));
	a->ret = write(a->fd, buf, a->len);
	a->err = errno;
	a->done = 1;
	return NULL;
}

TEST_F(st, held_queue_blocks_writers)
{
	struct writer_arg wa = { .fd = self->fd, .len = 1024 };
	struct asx_qstats qs;
	char buf[1024];
	int n = 0, fl;
	pthread_t t;

	ASSERT_EQ(asx_push(self->fd, "hold"), 0);
	ASSERT_EQ(asx_setwm(self->fd, 1, ASX_SIDE_WRITE, 4096, 1024), 0);
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_EQ(fcntl(self->fd, F_SETFL, fl | O_NONBLOCK), 0);
	memset(buf, 'x', sizeof(buf));
	while (write(self->fd, buf, sizeof(buf)) == sizeof(buf) && n < 100)
		n++;
	EXPECT_EQ(errno, EAGAIN) TH_LOG("a non-blocking writer gets EAGAIN");
	EXPECT_EQ(n, 4) TH_LOG("4 KB fill the held queue");
	EXPECT_EQ(asx_poll1(self->fd, POLLOUT, 0), 0) TH_LOG("no POLLOUT while full");
	ASSERT_EQ(fcntl(self->fd, F_SETFL, fl), 0);

	ASSERT_EQ(pthread_create(&t, NULL, writer, &wa), 0);
	asx_msleep(300);
	EXPECT_FALSE(wa.done) TH_LOG("a blocking writer blocks");
	ASSERT_EQ(asx_str(self->fd, ASX_STR_HOLD_RELEASE, NULL, 0, 0, NULL), 0)
		TH_LOG("%s", strerror(errno));
	pthread_join(t, NULL);
	EXPECT_EQ(wa.ret, 1024) TH_LOG("%s", strerror(wa.err));
	EXPECT_EQ(asx_poll1(self->fd, POLLOUT, 2000), POLLOUT);
	ASSERT_EQ(asx_qstats(self->fd, 1, ASX_SIDE_WRITE, &qs), 0);
	EXPECT_GE(qs.fc_stops, 1);
	EXPECT_GE(qs.fc_starts, 1);
	EXPECT_GE(qs.srv_runs, 1);
}

TEST_F(st, pollout_only_below_low_water)
{
	char buf[1024];
	int n = 0, i;

	/* Head read queue and loop write queue: 4 KB high, 1 KB low. */
	ASSERT_EQ(asx_setwm(self->fd, 0, ASX_SIDE_READ, 4096, 1024), 0);
	ASSERT_EQ(asx_setwm(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 4096, 1024), 0);
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	ASSERT_EQ(fcntl(self->fd, F_SETFL, O_NONBLOCK), 0);
	memset(buf, 'x', sizeof(buf));
	while (write(self->fd, buf, sizeof(buf)) == sizeof(buf) && n < 100)
		n++;
	EXPECT_EQ(errno, EAGAIN);
	EXPECT_EQ(n, 8) TH_LOG("4 KB at the head and 4 KB in the loop");
	EXPECT_EQ(asx_poll1(self->fd, POLLOUT, 0), 0);
	/* 3 KB left at the head, still above low water: nothing moves. */
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 1024);
	EXPECT_EQ(asx_poll1(self->fd, POLLOUT, 200), 0) TH_LOG("no POLLOUT above low water");
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 1024);
	}
	/* The head drained: the loop refills it and drains below its low water. */
	EXPECT_EQ(asx_poll1(self->fd, POLLOUT, 2000), POLLOUT);
}

/*
 * Small writes through four pass modules, the path asx-bench kstream times:
 * the head's one-check write and read fast paths and the inlined queue steps
 * must keep every write a message of its own, in order, stop a non-blocking
 * writer at the water marks exactly, and start it again below low water.
 */
TEST_F(st, small_messages_through_pass_modules)
{
	unsigned char buf[64], got[128];
	struct asx_qstats qs;
	int n = 0, i, fl;

	for (i = 0; i < 4; i++)
		ASSERT_EQ(asx_push(self->fd, "pass"), 0) TH_LOG("%s", strerror(errno));
	/* Head read queue and loop write queue: 4 KB high, 1 KB low. */
	ASSERT_EQ(asx_setwm(self->fd, 0, ASX_SIDE_READ, 4096, 1024), 0);
	ASSERT_EQ(asx_setwm(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 4096, 1024), 0);
	ASSERT_EQ(asx_opt(self->fd, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_EQ(fcntl(self->fd, F_SETFL, fl | O_NONBLOCK), 0);
	memset(buf, 0x5a, sizeof(buf));
	for (;;) {
		buf[0] = (unsigned char)n;
		buf[1] = (unsigned char)(n >> 8);
		if (write(self->fd, buf, sizeof(buf)) != sizeof(buf) || ++n > 1000)
			break;
	}
	EXPECT_EQ(errno, EAGAIN) TH_LOG("a non-blocking writer is stopped");
	EXPECT_EQ(n, 128) TH_LOG("4 KB at the head and 4 KB in the loop, 64 B each");
	ASSERT_EQ(asx_qstats(self->fd, 0, ASX_SIDE_READ, &qs), 0);
	EXPECT_EQ(qs.msgs, 64);
	EXPECT_EQ(qs.count, 4096);
	ASSERT_EQ(asx_qstats(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, &qs), 0);
	EXPECT_EQ(qs.msgs, 64);
	EXPECT_GE(qs.fc_stops, 1);

	/* One message per read, boundaries kept, none lost, none reordered. */
	ASSERT_EQ(fcntl(self->fd, F_SETFL, fl), 0) TH_LOG("the loop's refill is asynchronous");
	for (i = 0; i < n; i++) {
		memset(got, 0, sizeof(got));
		ASSERT_EQ(read(self->fd, got, sizeof(got)), 64) TH_LOG("message %d", i);
		EXPECT_EQ(got[0] | got[1] << 8, i);
		EXPECT_EQ(got[63], 0x5a);
	}
	EXPECT_EQ(asx_poll1(self->fd, POLLIN, 200), 0) TH_LOG("nothing left over");
	EXPECT_EQ(asx_poll1(self->fd, POLLOUT, 2000), POLLOUT) TH_LOG("writable again");
	ASSERT_EQ(asx_qstats(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, &qs), 0);
	EXPECT_GE(qs.fc_starts, 1);
	ASSERT_EQ(write(self->fd, buf, sizeof(buf)), sizeof(buf)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(read(self->fd, got, sizeof(got)), 64);
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST_F(st, signal_interrupts_blocked_read)
{
	struct sigaction sa;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	ASSERT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	alarm(1);
	errno = 0;
	EXPECT_EQ(read(self->fd, &c, 1), -1);
	EXPECT_EQ(errno, EINTR) TH_LOG("without SA_RESTART");
}

struct late_arg {
	int fd;
};

static void *late_writer(void *p)
{
	struct late_arg *a = p;

	asx_msleep(1500);
	if (write(a->fd, "L", 1) != 1)
		return (void *)1;
	return NULL;
}

TEST_F(st, signal_restarts_blocked_read)
{
	struct late_arg la = { .fd = self->fd };
	struct sigaction sa;
	pthread_t t;
	char c = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	ASSERT_EQ(pthread_create(&t, NULL, late_writer, &la), 0);
	alarm(1);
	EXPECT_EQ(read(self->fd, &c, 1), 1)
		TH_LOG("restarted after the signal: %s", strerror(errno));
	EXPECT_EQ(c, 'L');
	pthread_join(t, NULL);
}

TEST_F(st, signal_interrupts_blocked_write)
{
	struct sigaction sa;
	char buf[1024];
	int fl = fcntl(self->fd, F_GETFL);

	ASSERT_EQ(asx_push(self->fd, "hold"), 0);
	ASSERT_EQ(asx_setwm(self->fd, 1, ASX_SIDE_WRITE, 1024, 0), 0);
	ASSERT_EQ(fcntl(self->fd, F_SETFL, fl | O_NONBLOCK), 0);
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(write(self->fd, buf, sizeof(buf)), sizeof(buf));
	ASSERT_EQ(fcntl(self->fd, F_SETFL, fl), 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	ASSERT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	alarm(1);
	errno = 0;
	EXPECT_EQ(write(self->fd, buf, sizeof(buf)), -1);
	EXPECT_EQ(errno, EINTR);
}

TEST_F(st, str_ioctls)
{
	struct asx_count_stats cs;
	unsigned int rlen = 0;
	char buf[8];

	errno = 0;
	EXPECT_EQ(asx_str(self->fd, 0x12345678, NULL, 0, 0, NULL), -1);
	EXPECT_EQ(errno, EINVAL) TH_LOG("the driver refuses what no module takes");
	ASSERT_EQ(asx_push(self->fd, "count"), 0);
	ASSERT_EQ(write(self->fd, "abc", 3), 3);
	ASSERT_EQ(read(self->fd, buf, sizeof(buf)), 3);
	memset(&cs, 0xff, sizeof(cs));
	ASSERT_EQ(asx_str(self->fd, ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), &rlen), 0)
		TH_LOG("%s", strerror(errno));
	EXPECT_EQ(rlen, sizeof(cs));
	EXPECT_EQ(cs.wmsgs, 1);
	EXPECT_EQ(cs.wbytes, 3);
	EXPECT_EQ(cs.rmsgs, 1);
	EXPECT_EQ(cs.rbytes, 3);
	ASSERT_EQ(asx_str(self->fd, ASX_STR_COUNT_RESET, NULL, 0, 0, NULL), 0);
	ASSERT_EQ(asx_str(self->fd, ASX_STR_COUNT_GET, &cs, 0, 8, &rlen), 0);
	EXPECT_EQ(rlen, 8) TH_LOG("the reply is cut to maxlen");
	EXPECT_EQ(cs.rmsgs, 0);

	errno = 0;
	EXPECT_EQ(asx_str(self->fd, ASX_STR_COUNT_GET, NULL, ASX_MAX_STR + 1, 0, NULL), -1);
	EXPECT_EQ(errno, ERANGE);
	errno = 0;
	EXPECT_EQ(asx_str(self->fd, ASX_STR_COUNT_GET, (void *)8, 4, 0, NULL), -1);
	EXPECT_EQ(errno, EFAULT);
}

TEST_F(st, str_timeout)
{
	struct asx_strioctl si;
	struct asx_count_stats cs;

	ASSERT_EQ(asx_push(self->fd, "count"), 0);
	ASSERT_EQ(asx_push(self->fd, "hold"), 0);
	memset(&si, 0, sizeof(si));
	si.size = sizeof(si);
	si.cmd = ASX_STR_COUNT_GET;
	si.timeout_ms = 200;
	si.maxlen = sizeof(cs);
	si.data = (uintptr_t)&cs;
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_STR, &si), -1) TH_LOG("held by hold");
	EXPECT_EQ(errno, ETIME);
	si.timeout_ms = -2;
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_IOC_STR, &si), -1);
	EXPECT_EQ(errno, EINVAL);
	/* Released, the late answer to the first one is dropped; a new one works. */
	ASSERT_EQ(asx_str(self->fd, ASX_STR_HOLD_RELEASE, NULL, 0, 0, NULL), 0);
	ASSERT_EQ(asx_str(self->fd, ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), NULL), 0)
		TH_LOG("%s", strerror(errno));
}

TEST_F(st, null_driver)
{
	char c;

	errno = 0;
	EXPECT_EQ(asx_setdrv(self->fd, "nosuch"), -1);
	EXPECT_EQ(errno, ENOENT);
	errno = 0;
	EXPECT_EQ(asx_setdrv(self->fd, "pipe"), -1) TH_LOG("pipes come from ASX_IOC_PIPE");
	EXPECT_EQ(errno, ENOENT);
	ASSERT_EQ(asx_setdrv(self->fd, "null"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(write(self->fd, "gone", 4), 4);
	ASSERT_EQ(fcntl(self->fd, F_SETFL, O_NONBLOCK), 0);
	errno = 0;
	EXPECT_EQ(read(self->fd, &c, 1), -1);
	EXPECT_EQ(errno, EAGAIN);
	errno = 0;
	EXPECT_EQ(asx_str(self->fd, 1, NULL, 0, 0, NULL), -1);
	EXPECT_EQ(errno, EINVAL);
	ASSERT_EQ(asx_push(self->fd, "pass"), 0);
	errno = 0;
	EXPECT_EQ(asx_setdrv(self->fd, "loop"), -1) TH_LOG("not on a used Stream");
	EXPECT_EQ(errno, EBUSY);
}

TEST_F(st, version_features)
{
	struct asx_version v = { .size = sizeof(v) };

	ASSERT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &v), 0);
	EXPECT_EQ(v.size, ASX_VERSION_SIZE_VER1);
	EXPECT_TRUE(v.features & ASX_FEAT_STREAMS);
	EXPECT_TRUE(v.features & ASX_FEAT_PIPE);
	EXPECT_TRUE(v.features & ASX_FEAT_MUX);
	EXPECT_TRUE(v.features & ASX_FEAT_STR);
	EXPECT_EQ(v.max_depth, ASX_MAX_DEPTH);
	EXPECT_EQ(v.max_write, ASX_MAX_WRITE);
}

TEST(rmmod_refused_while_open)
{
	int fd = asx_open(0);

	ASSERT_GE(fd, 0) TH_LOG("%s", strerror(errno));
	errno = 0;
	EXPECT_EQ(syscall(SYS_delete_module, "asx", O_NONBLOCK), -1);
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("errno %d", errno);
	close(fd);
}

TEST_HARNESS_MAIN
