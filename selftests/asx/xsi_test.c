// SPDX-License-Identifier: GPL-2.0
/*
 * xsi_test.c - the XSI STREAMS interface on /dev/asx, checked against the
 * specification (streamio(7), getmsg(2), putmsg(2), isastream(3) of XSI /
 * SUSv3): the streamio requests asx.ko takes with their XSI numbers, and
 * <asx/stropts.h>'s getmsg/getpmsg/putmsg/putpmsg/isastream, each with the
 * return values and the error cases the specification lists.  The program
 * uses the XSI names only (plus asx_util.h to make a mux or a pipe, the one
 * step XSI leaves to the implementation).
 */
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <asx/stropts.h>

#include "asx_util.h"
#include "asx_harness.h"

FIXTURE(xsi) {
	int fd;
};

FIXTURE_SETUP(xsi)
{
	self->fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(self->fd, 0) TH_LOG("open %s: %s", ASX_DEV, strerror(errno));
}

FIXTURE_TEARDOWN(xsi)
{
	close(self->fd);
}

/*
 * The error cases of the specification checked (FAILS, FD_FAILS), counted
 * across the tests, which the harness forks, in shared memory: the last
 * line of the output gives the total, and how many of them failed.
 */
static struct xsi_cases {
	long checked;
	long failed;
} *xsi_cases;
static pid_t xsi_main;

static void __attribute__((constructor)) xsi_cases_init(void)
{
	void *p = mmap(NULL, sizeof(*xsi_cases), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	xsi_cases = p == MAP_FAILED ? NULL : p;
	xsi_main = getpid();
}

static void __attribute__((destructor)) xsi_cases_report(void)
{
	if (xsi_cases && getpid() == xsi_main)
		printf("# XSI error cases checked: %ld, failed: %ld\n",
		       xsi_cases->checked, xsi_cases->failed);
}

static void xsi_case(bool ok)
{
	if (!xsi_cases)
		return;
	__atomic_add_fetch(&xsi_cases->checked, 1, __ATOMIC_RELAXED);
	if (!ok)
		__atomic_add_fetch(&xsi_cases->failed, 1, __ATOMIC_RELAXED);
}

/* @call fails with errno @err: one error case of the specification. */
#define FAILS(call, err) do {							\
		long r_;							\
		int e_;								\
		errno = 0;							\
		r_ = (long)(call);						\
		e_ = errno;							\
		xsi_case(r_ == -1 && e_ == (err));				\
		EXPECT_EQ(r_, -1) TH_LOG("%s", #call);				\
		EXPECT_EQ(e_, (err)) TH_LOG("%s: %s", #call, strerror(e_));	\
	} while (0)

static int put(int fd, const char *ctl, const char *data, int flags)
{
	struct strbuf c = { 0, ctl ? (int)strlen(ctl) : -1, (char *)ctl };
	struct strbuf d = { 0, data ? (int)strlen(data) : -1, (char *)data };

	return putmsg(fd, ctl ? &c : NULL, data ? &d : NULL, flags);
}

static int putb(int fd, const char *data, int band)
{
	struct strbuf d = { 0, (int)strlen(data), (char *)data };

	return putpmsg(fd, NULL, &d, band, MSG_BAND);
}

TEST_F(xsi, isastream)
{
	int p[2];

	EXPECT_EQ(isastream(self->fd), 1);
	ASSERT_EQ(pipe(p), 0);
	errno = 0;
	EXPECT_EQ(isastream(p[0]), 0);
	EXPECT_EQ(errno, 0) TH_LOG("isastream() of another file leaves errno alone");
	close(p[0]);
	close(p[1]);
	FAILS(isastream(p[0]), EBADF);
	FAILS(fattach(self->fd, "/tmp/asx-xsi-fattach"), ENOSYS);
	FAILS(fdetach("/tmp/asx-xsi-fattach"), ENOSYS);
}

TEST_F(xsi, push_look_find_pop)
{
	char name[FMNAMESZ + 1];
	char longname[64];

	FAILS(ioctl(self->fd, I_LOOK, name), EINVAL);	/* no module */
	FAILS(ioctl(self->fd, I_POP, 0), EINVAL);
	ASSERT_EQ(ioctl(self->fd, I_PUSH, "pass"), 0);
	ASSERT_EQ(ioctl(self->fd, I_PUSH, "count"), 0);
	ASSERT_EQ(ioctl(self->fd, I_LOOK, name), 0);
	EXPECT_STREQ(name, "count");
	EXPECT_EQ(ioctl(self->fd, I_FIND, "pass"), 1);
	EXPECT_EQ(ioctl(self->fd, I_FIND, "hold"), 0);
	FAILS(ioctl(self->fd, I_FIND, "no-such-module"), EINVAL);
	FAILS(ioctl(self->fd, I_PUSH, "no-such-module"), EINVAL);
	memset(longname, 'm', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	FAILS(ioctl(self->fd, I_PUSH, longname), EINVAL);
	FAILS(ioctl(self->fd, I_PUSH, ""), EINVAL);
	FAILS(ioctl(self->fd, I_PUSH, NULL), EFAULT);
	FAILS(ioctl(self->fd, I_LOOK, NULL), EFAULT);
	ASSERT_EQ(ioctl(self->fd, I_POP, 0), 0);
	ASSERT_EQ(ioctl(self->fd, I_LOOK, name), 0);
	EXPECT_STREQ(name, "pass");
	EXPECT_EQ(ioctl(self->fd, I_FIND, "count"), 0);
	ASSERT_EQ(ioctl(self->fd, I_POP, 0), 0);
	FAILS(ioctl(self->fd, I_POP, 0), EINVAL);
}

TEST_F(xsi, list)
{
	struct str_mlist ml[4];
	struct str_list sl = { 4, ml };

	EXPECT_EQ(ioctl(self->fd, I_LIST, NULL), 1) TH_LOG("the driver alone");
	ASSERT_EQ(ioctl(self->fd, I_PUSH, "pass"), 0);
	ASSERT_EQ(ioctl(self->fd, I_PUSH, "count"), 0);
	EXPECT_EQ(ioctl(self->fd, I_LIST, NULL), 3);
	memset(ml, 0x5a, sizeof(ml));
	ASSERT_EQ(ioctl(self->fd, I_LIST, &sl), 0);
	EXPECT_EQ(sl.sl_nmods, 3);
	EXPECT_STREQ(ml[0].l_name, "count");
	EXPECT_STREQ(ml[1].l_name, "pass");
	EXPECT_STREQ(ml[2].l_name, "loop");
	EXPECT_EQ((unsigned char)ml[3].l_name[0], 0x5a) TH_LOG("nothing past sl_nmods");
	sl.sl_nmods = 1;
	ASSERT_EQ(ioctl(self->fd, I_LIST, &sl), 0);
	EXPECT_EQ(sl.sl_nmods, 1);
	EXPECT_STREQ(ml[0].l_name, "count");
	sl.sl_nmods = 0;
	FAILS(ioctl(self->fd, I_LIST, &sl), EINVAL);
	sl.sl_nmods = 4;
	sl.sl_modlist = NULL;
	FAILS(ioctl(self->fd, I_LIST, &sl), EFAULT);
}

TEST_F(xsi, putmsg_getmsg_round_trip)
{
	char cbuf[16], dbuf[16];
	struct strbuf c = { sizeof(cbuf), -2, cbuf }, d = { sizeof(dbuf), -2, dbuf };
	int flags = 0;

	ASSERT_EQ(put(self->fd, "hdr", "body", 0), 0);
	ASSERT_EQ(getmsg(self->fd, &c, &d, &flags), 0);
	EXPECT_EQ(flags, 0);
	ASSERT_EQ(c.len, 3);
	ASSERT_EQ(d.len, 4);
	EXPECT_EQ(memcmp(cbuf, "hdr", 3), 0);
	EXPECT_EQ(memcmp(dbuf, "body", 4), 0);
	/* a data-only message: no control part is len -1 */
	ASSERT_EQ(put(self->fd, NULL, "x", 0), 0);
	ASSERT_EQ(getmsg(self->fd, &c, &d, &flags), 0);
	EXPECT_EQ(c.len, -1);
	EXPECT_EQ(d.len, 1);
	/* nothing to send: no message, 0 */
	EXPECT_EQ(put(self->fd, NULL, NULL, 0), 0);
	EXPECT_EQ(ioctl(self->fd, I_NREAD, &flags), 0);
}

TEST_F(xsi, putmsg_errors)
{
	struct strbuf c = { 0, 3, "abc" };

	FAILS(put(self->fd, NULL, "data", RS_HIPRI), EINVAL);	/* HIPRI needs a control part */
	FAILS(put(self->fd, "c", "d", 7), EINVAL);
	FAILS(putpmsg(self->fd, &c, NULL, 1, MSG_HIPRI), EINVAL);
	FAILS(putpmsg(self->fd, &c, NULL, 256, MSG_BAND), EINVAL);
	FAILS(putpmsg(self->fd, &c, NULL, 0, MSG_ANY), EINVAL);
	c.len = ASX_MAX_CTL + 1;
	FAILS(putmsg(self->fd, &c, NULL, 0), ERANGE);
	c.len = 3;
	c.buf = NULL;
	FAILS(putmsg(self->fd, &c, NULL, 0), EFAULT);
}

TEST_F(xsi, high_priority_first)
{
	char cbuf[8];
	struct strbuf c = { sizeof(cbuf), 0, cbuf };
	int flags = 0;

	ASSERT_EQ(put(self->fd, "norm", NULL, 0), 0);
	ASSERT_EQ(put(self->fd, "hi", NULL, RS_HIPRI), 0);
	ASSERT_EQ(getmsg(self->fd, &c, NULL, &flags), 0);
	EXPECT_EQ(flags, RS_HIPRI);
	EXPECT_EQ(c.len, 2);
	/* RS_HIPRI with only a normal message queued: none, would block */
	ASSERT_EQ(fcntl(self->fd, F_SETFL, O_NONBLOCK), 0);
	flags = RS_HIPRI;
	FAILS(getmsg(self->fd, &c, NULL, &flags), EAGAIN);
	flags = 0;
	ASSERT_EQ(getmsg(self->fd, &c, NULL, &flags), 0);
	EXPECT_EQ(c.len, 4);
	FAILS(getmsg(self->fd, &c, NULL, &flags), EAGAIN);
	flags = 3;
	FAILS(getmsg(self->fd, &c, NULL, &flags), EINVAL);
	FAILS(getmsg(self->fd, &c, NULL, NULL), EINVAL);
}

TEST_F(xsi, partial_reads_leave_the_rest)
{
	char cbuf[8], dbuf[8];
	struct strbuf c = { 2, 0, cbuf }, d = { 4, 0, dbuf };
	int flags = 0, n = 0;

	ASSERT_EQ(put(self->fd, "ctl", "0123456789", 0), 0);
	EXPECT_EQ(getmsg(self->fd, &c, &d, &flags), MORECTL | MOREDATA);
	EXPECT_EQ(c.len, 2);
	EXPECT_EQ(d.len, 4);
	c.maxlen = sizeof(cbuf);
	d.maxlen = sizeof(dbuf);
	EXPECT_EQ(getmsg(self->fd, &c, &d, &flags), 0) TH_LOG("the rest of both parts");
	EXPECT_EQ(c.len, 1);
	EXPECT_EQ(cbuf[0], 'l');
	EXPECT_EQ(d.len, 6);
	EXPECT_EQ(memcmp(dbuf, "456789", 6), 0);
	/* maxlen -1: the data part is not processed and stays queued */
	ASSERT_EQ(put(self->fd, NULL, "kept", 0), 0);
	d.maxlen = -1;
	d.len = 77;
	EXPECT_GE(getmsg(self->fd, NULL, &d, &flags), 0);
	EXPECT_EQ(d.len, 77) TH_LOG("len untouched");
	EXPECT_EQ(ioctl(self->fd, I_NREAD, &n), 1);
	EXPECT_EQ(n, 4);
	d.maxlen = sizeof(dbuf);
	ASSERT_EQ(getmsg(self->fd, NULL, &d, &flags), 0);
	EXPECT_EQ(d.len, 4);
}

TEST_F(xsi, bands)
{
	char dbuf[8];
	struct strbuf d = { sizeof(dbuf), 0, dbuf };
	int band, flags, b = -1;

	FAILS(ioctl(self->fd, I_GETBAND, &b), ENODATA);
	ASSERT_EQ(putb(self->fd, "one", 1), 0);
	ASSERT_EQ(putb(self->fd, "three", 3), 0);
	ASSERT_EQ(putb(self->fd, "zero", 0), 0);
	EXPECT_EQ(ioctl(self->fd, I_GETBAND, &b), 0);
	EXPECT_EQ(b, 3) TH_LOG("the higher band is queued first");
	EXPECT_EQ(ioctl(self->fd, I_CKBAND, 1), 1);
	EXPECT_EQ(ioctl(self->fd, I_CKBAND, 2), 0);
	EXPECT_EQ(ioctl(self->fd, I_CKBAND, 0), 1);
	FAILS(ioctl(self->fd, I_CKBAND, 256), EINVAL);
	FAILS(ioctl(self->fd, I_CKBAND, -1), EINVAL);
	/* getpmsg MSG_BAND: the first message of band 2 or above */
	band = 2;
	flags = MSG_BAND;
	ASSERT_EQ(getpmsg(self->fd, NULL, &d, &band, &flags), 0);
	EXPECT_EQ(flags, MSG_BAND);
	EXPECT_EQ(band, 3);
	EXPECT_EQ(d.len, 5);
	band = 0;
	flags = MSG_ANY;
	ASSERT_EQ(getpmsg(self->fd, NULL, &d, &band, &flags), 0);
	EXPECT_EQ(band, 1);
	EXPECT_EQ(flags, MSG_BAND);
	band = 1;
	flags = MSG_ANY;
	FAILS(getpmsg(self->fd, NULL, &d, &band, &flags), EINVAL);	/* band with MSG_ANY */
	band = 0;
	flags = 0;
	FAILS(getpmsg(self->fd, NULL, &d, &band, &flags), EINVAL);
	flags = MSG_BAND;
	FAILS(getpmsg(self->fd, NULL, &d, NULL, &flags), EINVAL);
	ASSERT_EQ(getpmsg(self->fd, NULL, &d, &band, &flags), 0);
	EXPECT_EQ(band, 0);
	EXPECT_EQ(d.len, 4);
}

TEST_F(xsi, nread_counts_data_bytes_of_the_first_message)
{
	int n = -1;

	EXPECT_EQ(ioctl(self->fd, I_NREAD, &n), 0);
	EXPECT_EQ(n, 0);
	ASSERT_EQ(put(self->fd, "ctl", "12345", 0), 0);
	ASSERT_EQ(put(self->fd, NULL, "12", 0), 0);
	EXPECT_EQ(ioctl(self->fd, I_NREAD, &n), 2);
	EXPECT_EQ(n, 5) TH_LOG("control bytes are not counted");
	FAILS(ioctl(self->fd, I_NREAD, NULL), EFAULT);
}

TEST_F(xsi, flush_and_flushband)
{
	struct bandinfo bi = { 2, FLUSHR };
	int n;

	ASSERT_EQ(putb(self->fd, "b2", 2), 0);
	ASSERT_EQ(putb(self->fd, "b0", 0), 0);
	ASSERT_EQ(ioctl(self->fd, I_FLUSHBAND, &bi), 0);
	EXPECT_EQ(ioctl(self->fd, I_NREAD, &n), 1);
	EXPECT_EQ(ioctl(self->fd, I_GETBAND, &n), 0);
	EXPECT_EQ(n, 0) TH_LOG("band 0 stays");
	bi.bi_flag = 0;
	FAILS(ioctl(self->fd, I_FLUSHBAND, &bi), EINVAL);
	FAILS(ioctl(self->fd, I_FLUSHBAND, NULL), EFAULT);
	ASSERT_EQ(ioctl(self->fd, I_FLUSH, FLUSHRW), 0);
	EXPECT_EQ(ioctl(self->fd, I_NREAD, &n), 0);
	FAILS(ioctl(self->fd, I_FLUSH, 0), EINVAL);
	FAILS(ioctl(self->fd, I_FLUSH, 8), EINVAL);
}

TEST_F(xsi, read_and_write_options)
{
	char buf[16];
	int opt = -1;

	EXPECT_EQ(ioctl(self->fd, I_GRDOPT, &opt), 0);
	EXPECT_EQ(opt, RNORM | RPROTNORM);
	ASSERT_EQ(ioctl(self->fd, I_SRDOPT, RMSGD | RPROTDAT), 0);
	EXPECT_EQ(ioctl(self->fd, I_GRDOPT, &opt), 0);
	EXPECT_EQ(opt, RMSGD | RPROTDAT);
	/* RPROTDAT: the control part is read as data */
	ASSERT_EQ(put(self->fd, "ab", "cd", 0), 0);
	EXPECT_EQ(read(self->fd, buf, sizeof(buf)), 4);
	EXPECT_EQ(memcmp(buf, "abcd", 4), 0);
	ASSERT_EQ(ioctl(self->fd, I_SRDOPT, RNORM | RPROTDIS), 0);
	ASSERT_EQ(put(self->fd, "ab", "cd", 0), 0);
	EXPECT_EQ(read(self->fd, buf, sizeof(buf)), 2) TH_LOG("RPROTDIS drops the control part");
	ASSERT_EQ(ioctl(self->fd, I_SRDOPT, RNORM), 0);
	ASSERT_EQ(put(self->fd, "ab", "cd", 0), 0);
	FAILS(read(self->fd, buf, sizeof(buf)), EBADMSG);
	FAILS(ioctl(self->fd, I_SRDOPT, RMSGD | RMSGN), EINVAL);
	FAILS(ioctl(self->fd, I_SRDOPT, RPROTDAT | RPROTDIS), EINVAL);
	FAILS(ioctl(self->fd, I_SRDOPT, 0x100), EINVAL);
	FAILS(ioctl(self->fd, I_GRDOPT, NULL), EFAULT);

	EXPECT_EQ(ioctl(self->fd, I_GWROPT, &opt), 0);
	EXPECT_EQ(opt, 0);
	ASSERT_EQ(ioctl(self->fd, I_FLUSH, FLUSHRW), 0);
	ASSERT_EQ(ioctl(self->fd, I_SWROPT, SNDZERO), 0);
	EXPECT_EQ(ioctl(self->fd, I_GWROPT, &opt), 0);
	EXPECT_EQ(opt, SNDZERO);
	EXPECT_EQ(write(self->fd, "", 0), 0);
	EXPECT_EQ(ioctl(self->fd, I_NREAD, &opt), 1) TH_LOG("SNDZERO sent a zero-length message");
	FAILS(ioctl(self->fd, I_SWROPT, SNDPIPE), EINVAL);	/* Documentation/xsi.rst */
	FAILS(ioctl(self->fd, I_SWROPT, 4), EINVAL);
}

TEST_F(xsi, str)
{
	struct asx_count_stats cs;
	struct strioctl si = { ASX_STR_COUNT_GET, 0, 0, (char *)&cs };
	int i;

	FAILS(ioctl(self->fd, I_STR, &si), EINVAL);	/* the driver refuses what no module takes */
	ASSERT_EQ(ioctl(self->fd, I_PUSH, "count"), 0);
	ASSERT_EQ(put(self->fd, NULL, "12345", 0), 0);
	memset(&cs, 0, sizeof(cs));
	EXPECT_EQ(ioctl(self->fd, I_STR, &si), 0);
	EXPECT_EQ(si.ic_len, (int)sizeof(cs));
	EXPECT_EQ(cs.wmsgs, 1);
	EXPECT_EQ(cs.wbytes, 5);
	si.ic_len = -1;
	FAILS(ioctl(self->fd, I_STR, &si), EINVAL);
	si.ic_len = ASX_MAX_STR + 1;
	FAILS(ioctl(self->fd, I_STR, &si), EINVAL);
	si.ic_len = 0;
	si.ic_timout = -2;
	FAILS(ioctl(self->fd, I_STR, &si), EINVAL);
	FAILS(ioctl(self->fd, I_STR, NULL), EFAULT);

	/* the return value is the module's: hold acknowledges with the messages it held */
	ASSERT_EQ(ioctl(self->fd, I_PUSH, "hold"), 0);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(put(self->fd, NULL, "held", 0), 0);
	si = (struct strioctl){ ASX_STR_HOLD_RELEASE, INFTIM, 0, NULL };
	EXPECT_EQ(ioctl(self->fd, I_STR, &si), 3);
	EXPECT_EQ(si.ic_len, 0);
}

TEST_TIMEOUT(str_times_out_in_seconds, 60)
{
	struct strioctl si = { ASX_STR_COUNT_GET, 1, 0, NULL };
	struct timespec t0, t1;
	int fd = open(ASX_DEV, O_RDWR);
	double s;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(ioctl(fd, I_PUSH, "count"), 0);
	ASSERT_EQ(ioctl(fd, I_PUSH, "hold"), 0);	/* holds the M_IOCTL for count */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	FAILS(ioctl(fd, I_STR, &si), ETIME);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	EXPECT_GE(s, 0.9) TH_LOG("ic_timout is in seconds: %.2f s", s);
	close(fd);
}

TEST_F(xsi, peek)
{
	char cbuf[8], dbuf[8];
	struct strpeek sp = { { sizeof(cbuf), 0, cbuf }, { sizeof(dbuf), 0, dbuf }, 0 };
	int n;

	EXPECT_EQ(ioctl(self->fd, I_PEEK, &sp), 0);
	ASSERT_EQ(put(self->fd, "ctl", "data", 0), 0);
	EXPECT_EQ(ioctl(self->fd, I_PEEK, &sp), 1);
	EXPECT_EQ(sp.ctlbuf.len, 3);
	EXPECT_EQ(sp.databuf.len, 4);
	EXPECT_EQ(sp.flags, 0u);
	EXPECT_EQ(memcmp(dbuf, "data", 4), 0);
	EXPECT_EQ(ioctl(self->fd, I_NREAD, &n), 1) TH_LOG("the message stays");
	sp.flags = RS_HIPRI;
	EXPECT_EQ(ioctl(self->fd, I_PEEK, &sp), 0) TH_LOG("no high-priority message");
	ASSERT_EQ(put(self->fd, "hi", NULL, RS_HIPRI), 0);
	EXPECT_EQ(ioctl(self->fd, I_PEEK, &sp), 1);
	EXPECT_EQ(sp.flags, (unsigned int)RS_HIPRI);
	EXPECT_EQ(sp.ctlbuf.len, 2);
	EXPECT_EQ(sp.databuf.len, -1);
	sp.flags = 2;
	FAILS(ioctl(self->fd, I_PEEK, &sp), EINVAL);
	FAILS(ioctl(self->fd, I_PEEK, NULL), EFAULT);
}

TEST_F(xsi, canput_and_atmark)
{
	int n = 0;

	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 0), 1);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, ANYBAND), 1);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 255), 1);
	FAILS(ioctl(self->fd, I_CANPUT, 256), EINVAL);
	FAILS(ioctl(self->fd, I_CANPUT, -2), EINVAL);
	/* a full Stream: hold keeps every message on its write queue */
	ASSERT_EQ(ioctl(self->fd, I_PUSH, "hold"), 0);
	ASSERT_EQ(asx_setwm(self->fd, 1, ASX_SIDE_WRITE, 1000, 100), 0);
	ASSERT_EQ(fcntl(self->fd, F_SETFL, O_NONBLOCK), 0);
	while (put(self->fd, NULL, "0123456789012345678901234567890123456789", 0) == 0 &&
	       n < 1000)
		n++;
	EXPECT_EQ(errno, EAGAIN);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 0), 0) TH_LOG("%d messages held", n);
	EXPECT_EQ(ioctl(self->fd, I_ATMARK, ANYMARK), 0);
	EXPECT_EQ(ioctl(self->fd, I_ATMARK, LASTMARK), 0);
	FAILS(ioctl(self->fd, I_ATMARK, 4), EINVAL);
	FAILS(ioctl(self->fd, I_ATMARK, 0), EINVAL);
}

/* Waits up to @ms for @sig (blocked by the caller); 1 if it came, else 0. */
static void block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGPOLL);
	sigaddset(&set, SIGURG);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

TEST_F(xsi, setsig_registration)
{
	int ev = -1;

	FAILS(ioctl(self->fd, I_GETSIG, &ev), EINVAL);	/* not registered */
	FAILS(ioctl(self->fd, I_SETSIG, 0), EINVAL);
	FAILS(ioctl(self->fd, I_SETSIG, 0x10000), EINVAL);
	ASSERT_EQ(ioctl(self->fd, I_SETSIG, S_RDNORM | S_HIPRI), 0);
	ASSERT_EQ(ioctl(self->fd, I_GETSIG, &ev), 0);
	EXPECT_EQ(ev, S_RDNORM | S_HIPRI);
	ASSERT_EQ(ioctl(self->fd, I_SETSIG, S_INPUT), 0);	/* replaces */
	ASSERT_EQ(ioctl(self->fd, I_GETSIG, &ev), 0);
	EXPECT_EQ(ev, S_INPUT);
	FAILS(ioctl(self->fd, I_GETSIG, NULL), EFAULT);
	ASSERT_EQ(ioctl(self->fd, I_SETSIG, 0), 0);	/* unregisters */
	FAILS(ioctl(self->fd, I_GETSIG, &ev), EINVAL);
}

TEST_TIMEOUT(setsig_signals_each_event, 120)
{
	struct strioctl si = { ASX_STR_HOLD_RELEASE, INFTIM, 0, NULL };
	int fd, a, b, n = 0;

	block_signals();
	fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(fd, 0);
	/* band 0 and band > 0 arrivals */
	ASSERT_EQ(ioctl(fd, I_SETSIG, S_RDBAND), 0);
	ASSERT_EQ(putb(fd, "zero", 0), 0);
	EXPECT_FALSE(asx_got_signal(SIGPOLL, 300)) TH_LOG("S_RDBAND: no signal for band 0");
	ASSERT_EQ(putb(fd, "one", 1), 0);
	EXPECT_TRUE(asx_got_signal(SIGPOLL, 10000)) TH_LOG("S_RDBAND: band 1");
	ASSERT_EQ(ioctl(fd, I_SETSIG, S_RDBAND | S_BANDURG), 0);
	ASSERT_EQ(putb(fd, "two", 2), 0);
	EXPECT_TRUE(asx_got_signal(SIGURG, 10000)) TH_LOG("S_BANDURG: SIGURG");
	ASSERT_EQ(ioctl(fd, I_SETSIG, S_RDNORM), 0);
	ASSERT_EQ(putb(fd, "zero", 0), 0);
	EXPECT_TRUE(asx_got_signal(SIGPOLL, 10000)) TH_LOG("S_RDNORM");
	ASSERT_EQ(ioctl(fd, I_SETSIG, S_INPUT), 0);
	ASSERT_EQ(putb(fd, "three", 3), 0);
	EXPECT_TRUE(asx_got_signal(SIGPOLL, 10000)) TH_LOG("S_INPUT");
	ASSERT_EQ(put(fd, "hi", NULL, RS_HIPRI), 0);
	EXPECT_FALSE(asx_got_signal(SIGPOLL, 300)) TH_LOG("S_INPUT: not for a high-priority one");
	ASSERT_EQ(ioctl(fd, I_SETSIG, S_HIPRI), 0);
	ASSERT_EQ(put(fd, "hi", NULL, RS_HIPRI), 0);
	EXPECT_TRUE(asx_got_signal(SIGPOLL, 10000)) TH_LOG("S_HIPRI");

	/* S_OUTPUT: a full write side that drains */
	ASSERT_EQ(ioctl(fd, I_FLUSH, FLUSHRW), 0);
	ASSERT_EQ(ioctl(fd, I_PUSH, "hold"), 0);
	ASSERT_EQ(asx_setwm(fd, 1, ASX_SIDE_WRITE, 1000, 100), 0);
	ASSERT_EQ(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	while (put(fd, NULL, "0123456789012345678901234567890123456789", 0) == 0 && n < 1000)
		n++;
	ASSERT_EQ(errno, EAGAIN);
	ASSERT_EQ(ioctl(fd, I_SETSIG, S_OUTPUT), 0);
	EXPECT_FALSE(asx_got_signal(SIGPOLL, 300)) TH_LOG("still full");
	EXPECT_EQ(ioctl(fd, I_STR, &si), n) TH_LOG("hold let %d messages go", n);
	EXPECT_TRUE(asx_got_signal(SIGPOLL, 10000)) TH_LOG("S_OUTPUT");
	EXPECT_EQ(ioctl(fd, I_CANPUT, 0), 1);

	/* unregistered: nothing */
	ASSERT_EQ(ioctl(fd, I_SETSIG, 0), 0);
	ASSERT_EQ(ioctl(fd, I_POP, 0), 0);
	ASSERT_EQ(putb(fd, "quiet", 0), 0);
	EXPECT_FALSE(asx_got_signal(SIGPOLL, 300));
	close(fd);

	/* S_HANGUP: the other end of a pipe closes */
	a = open(ASX_DEV, O_RDWR);
	ASSERT_GE(a, 0);
	b = asx_pipe(a, ASX_PIPE_CLOEXEC);
	ASSERT_GE(b, 0);
	ASSERT_EQ(ioctl(a, I_SETSIG, S_HANGUP), 0);
	close(b);
	EXPECT_TRUE(asx_got_signal(SIGPOLL, 10000)) TH_LOG("S_HANGUP");
	close(a);
}

/* A registration is the process's: another process registers apart. */
TEST_TIMEOUT(setsig_is_per_process, 60)
{
	int fd, ev = 0, status;
	pid_t child;

	block_signals();
	fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(ioctl(fd, I_SETSIG, S_RDNORM), 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		/* not registered here; then registered for S_HIPRI alone */
		if (ioctl(fd, I_GETSIG, &ev) != -1 || errno != EINVAL)
			_exit(1);
		if (ioctl(fd, I_SETSIG, S_HIPRI))
			_exit(2);
		if (putb(fd, "x", 0))
			_exit(3);
		if (asx_got_signal(SIGPOLL, 300))
			_exit(4);	/* the parent's event, not ours */
		if (put(fd, "hi", NULL, RS_HIPRI))
			_exit(5);
		_exit(asx_got_signal(SIGPOLL, 10000) ? 0 : 6);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
	EXPECT_TRUE(asx_got_signal(SIGPOLL, 10000)) TH_LOG("the parent's S_RDNORM");
	ASSERT_EQ(ioctl(fd, I_GETSIG, &ev), 0);
	EXPECT_EQ(ev, S_RDNORM);
	close(fd);
}

/* Every XSI request is there (I_PLINK and I_PUNLINK: plink_test.c); an unknown one is ENOTTY. */
TEST_F(xsi, unknown_request)
{
	FAILS(ioctl(self->fd, ASX_XSI_SID | 99, 0), ENOTTY);
}

/* More error cases of streamio(7), getmsg(2) and putmsg(2) on one Stream. */
TEST_F(xsi, more_error_cases)
{
	static char big[ASX_MAX_DATA + 2];
	struct strbuf c = { 8, 0, (char *)big }, d = { ASX_MAX_DATA + 1, 0, big };
	struct bandinfo bi = { 0, 4 };
	int flags = 0, band = 0, fd, n;
	struct strbuf bad = { 8, 0, (char *)8 };

	/* putmsg(2): ERANGE for a data part above the maximum */
	d.len = ASX_MAX_DATA + 1;
	FAILS(putmsg(self->fd, NULL, &d, 0), ERANGE);
	/* getpmsg(2): EINVAL for bands and flags that do not fit */
	FAILS(getpmsg(self->fd, &c, NULL, NULL, &flags), EINVAL);
	flags = MSG_BAND;
	band = 256;
	FAILS(getpmsg(self->fd, &c, NULL, &band, &flags), EINVAL);
	band = -1;
	FAILS(getpmsg(self->fd, &c, NULL, &band, &flags), EINVAL);
	flags = MSG_ANY;
	band = 1;
	FAILS(getpmsg(self->fd, &c, NULL, &band, &flags), EINVAL);
	flags = MSG_HIPRI | MSG_BAND;
	band = 0;
	FAILS(getpmsg(self->fd, &c, NULL, &band, &flags), EINVAL);
	/* getmsg(2): EFAULT for a buffer it cannot write (the message stays) */
	ASSERT_EQ(put(self->fd, "ctl", NULL, 0), 0);
	flags = 0;
	FAILS(getmsg(self->fd, &bad, NULL, &flags), EFAULT);
	EXPECT_EQ(ioctl(self->fd, I_NREAD, &n), 1);
	/* streamio(7): EFAULT for each request's bad pointer */
	FAILS(ioctl(self->fd, I_GWROPT, NULL), EFAULT);
	FAILS(ioctl(self->fd, I_FIND, NULL), EFAULT);
	FAILS(ioctl(self->fd, I_GETBAND, NULL), EFAULT);
	FAILS(ioctl(self->fd, I_LIST, (void *)8), EFAULT);
	FAILS(ioctl(self->fd, I_RECVFD, NULL), EBADMSG);	/* a message, not a descriptor */
	/* EINVAL for arguments out of range */
	FAILS(ioctl(self->fd, I_FLUSH, 4), EINVAL);
	FAILS(ioctl(self->fd, I_FLUSHBAND, &bi), EINVAL);
	bi.bi_flag = 0;
	FAILS(ioctl(self->fd, I_FLUSHBAND, &bi), EINVAL);
	FAILS(ioctl(self->fd, I_SWROPT, SNDPIPE), EINVAL);
	FAILS(ioctl(self->fd, I_SRDOPT, RMSGD | RMSGN), EINVAL);
	/* EBADF: no Stream behind the descriptor at all */
	fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(fd, 0);
	close(fd);
	FAILS(ioctl(fd, I_PUSH, "pass"), EBADF);
	FAILS(putmsg(fd, &c, NULL, 0), EBADF);
	flags = 0;
	FAILS(getmsg(fd, &c, NULL, &flags), EBADF);
	FAILS(ioctl(fd, I_SENDFD, 0), EBADF);
	FAILS(ioctl(fd, I_RECVFD, NULL), EBADF);
}

/* getmsg(2), putmsg(2): ENOSTR for a descriptor that is not a Stream. */
TEST(msg_calls_on_other_files)
{
	struct strbuf c = { 4, 4, "abcd" };
	int p[2], flags = 0, band = 0;

	ASSERT_EQ(pipe(p), 0);
	FAILS(putmsg(p[1], &c, NULL, 0), ENOSTR);
	FAILS(putpmsg(p[1], &c, NULL, 0, MSG_BAND), ENOSTR);
	FAILS(getmsg(p[0], &c, NULL, &flags), ENOSTR);
	flags = MSG_ANY;
	FAILS(getpmsg(p[0], &c, NULL, &band, &flags), ENOSTR);
	close(p[0]);
	close(p[1]);
}

/* ------------------------------------------------ I_SENDFD and I_RECVFD */

/*
 * Whether every reference to the write end of the pipe(2) read at @rfd has
 * gone within @ms: its reader sees end of file.
 */
static bool write_end_gone(int rfd, int ms)
{
	struct pollfd pfd = { .fd = rfd, .events = POLLIN };
	char c;

	return poll(&pfd, 1, ms) == 1 && read(rfd, &c, 1) == 0;
}

/* The call fails with @err, or the run stops with step @step. */
#define FD_FAILS(call, err, step) do {				\
		bool ok_;					\
		errno = 0;					\
		ok_ = (call) == -1 && errno == (err);		\
		xsi_case(ok_);					\
		if (!ok_)					\
			return (step);				\
	} while (0)
#define FD_OK(cond, step) do {					\
		if (!(cond))					\
			return (step);				\
	} while (0)

/*
 * streamio(7)'s I_SENDFD and I_RECVFD over a pipe, as whoever calls it: 0,
 * or the number of the step that failed (exit status of a child run).
 */
static int fd_passing(void)
{
	int sp[2], p[2], u[2], lo, n, flags = 0;
	struct strrecvfd rf;
	char c = 0, buf[8];
	struct strbuf d = { sizeof(buf), 0, buf };
	struct strpeek pk = { { 0, 0, NULL }, { sizeof(buf), 0, buf }, 0 };
	struct rlimit rl;

	FD_OK(!asx_pipe_pair(sp) && !pipe(p) && !socketpair(AF_UNIX, SOCK_STREAM, 0, u), 1);
	lo = open(ASX_DEV, O_RDWR);
	FD_OK(lo >= 0, 2);
	/* a descriptor goes over, with the sender's ids; the file is the same */
	FD_OK(ioctl(sp[0], I_SENDFD, p[1]) == 0, 3);
	FD_OK(ioctl(sp[1], I_NREAD, &n) == 1 && n == 0, 4);
	FD_FAILS(getmsg(sp[1], NULL, &d, &flags), EBADMSG, 5);
	FD_FAILS(read(sp[1], buf, sizeof(buf)), EBADMSG, 6);
	FD_FAILS(ioctl(sp[1], I_PEEK, &pk), EBADMSG, 7);
	memset(&rf, 0x5a, sizeof(rf));
	FD_OK(ioctl(sp[1], I_RECVFD, &rf) == 0, 8);
	FD_OK(rf.fd > 2 && rf.fd != p[1], 9);
	FD_OK(rf.uid == geteuid() && rf.gid == getegid(), 10);
	FD_OK(write(rf.fd, "z", 1) == 1 && read(p[0], &c, 1) == 1 && c == 'z', 11);
	FD_OK(close(rf.fd) == 0, 12);
	/* in order with the messages: a data message first is EBADMSG */
	FD_OK(put(sp[0], NULL, "d1", 0) == 0, 13);
	FD_OK(ioctl(sp[0], I_SENDFD, p[1]) == 0, 14);
	FD_FAILS(ioctl(sp[1], I_RECVFD, &rf), EBADMSG, 15);
	FD_OK(getmsg(sp[1], NULL, &d, &flags) == 0 && d.len == 2, 16);
	/* a bad pointer: EFAULT, and the descriptor stays first */
	FD_FAILS(ioctl(sp[1], I_RECVFD, NULL), EFAULT, 17);
	FD_OK(ioctl(sp[1], I_NREAD, &n) == 1, 18);
	/* no descriptor left for it: EMFILE, and it stays first */
	n = dup(0);
	FD_OK(n >= 0 && !close(n) && !getrlimit(RLIMIT_NOFILE, &rl), 19);
	FD_OK(!setrlimit(RLIMIT_NOFILE, &(struct rlimit){ n, rl.rlim_max }), 20);
	errno = 0;
	n = ioctl(sp[1], I_RECVFD, &rf);
	FD_OK(!setrlimit(RLIMIT_NOFILE, &rl), 21);
	FD_OK(n == -1 && errno == EMFILE, 22);
	FD_OK(ioctl(sp[1], I_RECVFD, &rf) == 0 && close(rf.fd) == 0, 23);
	/* nothing there: EAGAIN with O_NONBLOCK */
	FD_OK(fcntl(sp[1], F_SETFL, O_NONBLOCK) == 0, 24);
	FD_FAILS(ioctl(sp[1], I_RECVFD, &rf), EAGAIN, 25);
	/* what I_SENDFD refuses */
	FD_FAILS(ioctl(lo, I_SENDFD, p[1]), EINVAL, 26);	/* not a pipe */
	FD_FAILS(ioctl(sp[0], I_SENDFD, -1), EBADF, 27);
	FD_FAILS(ioctl(sp[0], I_SENDFD, 1000000), EBADF, 28);
	FD_FAILS(ioctl(sp[0], I_SENDFD, sp[0]), EINVAL, 29);	/* itself: a cycle */
	FD_FAILS(ioctl(sp[0], I_SENDFD, sp[1]), EINVAL, 30);
	FD_FAILS(ioctl(sp[0], I_SENDFD, lo), EINVAL, 31);	/* any Stream */
	FD_FAILS(ioctl(sp[0], I_SENDFD, u[0]), EINVAL, 32);	/* AF_UNIX */
	FD_OK(ioctl(sp[1], I_NREAD, &n) == 0, 33);
	/* the read queue of the other end full: EAGAIN */
	FD_OK(fcntl(sp[0], F_SETFL, O_NONBLOCK) == 0, 34);
	for (n = 0; n < 100000 && write(sp[0], buf, sizeof(buf)) > 0; n++)
		;
	FD_OK(errno == EAGAIN, 35);
	FD_FAILS(ioctl(sp[0], I_SENDFD, p[1]), EAGAIN, 36);
	/* what the pipe holds goes: the writer's side, then the reader's head */
	FD_OK(ioctl(sp[0], I_FLUSH, FLUSHW) == 0 && ioctl(sp[1], I_FLUSH, FLUSHR) == 0, 37);
	FD_OK(ioctl(sp[0], I_SENDFD, p[1]) == 0, 38);
	/* hung up: what is queued still comes, then ENXIO */
	FD_OK(close(sp[0]) == 0, 39);
	FD_OK(ioctl(sp[1], I_RECVFD, &rf) == 0 && close(rf.fd) == 0, 40);
	FD_FAILS(ioctl(sp[1], I_RECVFD, &rf), ENXIO, 41);
	FD_FAILS(ioctl(sp[1], I_SENDFD, p[1]), ENXIO, 42);
	close(sp[1]);
	close(p[0]);
	close(p[1]);
	close(u[0]);
	close(u[1]);
	close(lo);
	return 0;
}

TEST(sendfd_recvfd)
{
	int step = fd_passing();

	EXPECT_EQ(step, 0) TH_LOG("step %d failed: %s", step, strerror(errno));
}

TEST(sendfd_recvfd_unprivileged)
{
	int status;
	pid_t child;

	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		_exit(fd_passing());
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(WEXITSTATUS(status), 0) TH_LOG("as nobody: step %d failed",
						 WEXITSTATUS(status));
}

/*
 * A descriptor at the head of a pipe end that is then linked under a mux has
 * no reader: it is closed.  Sending to a linked end is EINVAL.
 */
TEST(sendfd_to_an_end_linked_under_a_mux)
{
	int sp[2], p[2], u, q[2];

	ASSERT_EQ(asx_pipe_pair(sp), 0);
	ASSERT_EQ(pipe(p), 0);
	ASSERT_EQ(pipe(q), 0);
	ASSERT_EQ(ioctl(sp[0], I_SENDFD, p[1]), 0);
	ASSERT_EQ(close(p[1]), 0);
	u = open(ASX_DEV, O_RDWR);
	ASSERT_GE(u, 0);
	ASSERT_EQ(asx_setdrv(u, "mux"), 0);
	ASSERT_GE(ioctl(u, I_LINK, sp[1]), 0) TH_LOG("I_LINK: %s", strerror(errno));
	FAILS(ioctl(sp[0], I_SENDFD, q[1]), EINVAL);
	EXPECT_TRUE(write_end_gone(p[0], _metadata->timeout * 1000 / 2))
		TH_LOG("the descriptor at the linked end's head is still open");
	close(u);
	close(sp[0]);
	close(sp[1]);
	close(p[0]);
	close(q[0]);
	close(q[1]);
}

/* The sender's ids as the reader's user namespace sees them. */
TEST(recvfd_ids_in_reader_namespace)
{
	int sp[2], p[2], status;
	struct strrecvfd rf;
	pid_t child;

	ASSERT_EQ(asx_pipe_pair(sp), 0);
	ASSERT_EQ(pipe(p), 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		/* as nobody, so that the ids differ from the reader's */
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		_exit(ioctl(sp[0], I_SENDFD, p[1]) ? 101 : 0);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	ASSERT_EQ(ioctl(sp[0], I_SENDFD, p[1]), 0);	/* and one from us */
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		/* a new user namespace maps nobody, we map only ourselves */
		char map[64];
		int fd, uid = (int)geteuid(), gid = (int)getegid();

		if (unshare(CLONE_NEWUSER))
			_exit(errno == EINVAL ? 99 : 102);	/* 99: no CONFIG_USER_NS */
		fd = open("/proc/self/setgroups", O_WRONLY);
		if (fd < 0 || write(fd, "deny", 4) != 4 || close(fd))
			_exit(103);
		snprintf(map, sizeof(map), "7 %d 1\n", uid);
		fd = open("/proc/self/uid_map", O_WRONLY);
		if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map) || close(fd))
			_exit(104);
		snprintf(map, sizeof(map), "8 %d 1\n", gid);
		fd = open("/proc/self/gid_map", O_WRONLY);
		if (fd < 0 || write(fd, map, strlen(map)) != (ssize_t)strlen(map) || close(fd))
			_exit(105);
		/* nobody's ids are not mapped here: the overflow ids (65534) */
		if (ioctl(sp[1], I_RECVFD, &rf) || rf.uid != 65534 || rf.gid != 65534)
			_exit(106);
		close(rf.fd);
		/* ours are 7 and 8 here */
		if (ioctl(sp[1], I_RECVFD, &rf) || rf.uid != 7 || rf.gid != 8)
			_exit(107);
		_exit(0);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	if (WEXITSTATUS(status) == 99)
		SKIP(return, "the kernel has no user namespaces (CONFIG_USER_NS)");
	EXPECT_EQ(WEXITSTATUS(status), 0) TH_LOG("in a user namespace: step %d failed",
						 WEXITSTATUS(status));
	close(sp[0]);
	close(sp[1]);
	close(p[0]);
	close(p[1]);
}

/*
 * Closing both ends of a pipe with descriptors queued at each end frees
 * them: the write end of a pipe(2), sent both ways then closed here, goes
 * with the Streams, and its reader sees end of file.
 */
TEST(sendfd_queued_at_close_are_freed)
{
	int sp[2], p[2], i;

	ASSERT_EQ(asx_pipe_pair(sp), 0);
	ASSERT_EQ(pipe(p), 0);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(ioctl(sp[i & 1], I_SENDFD, p[1]), 0);
	}
	ASSERT_EQ(close(p[1]), 0);
	ASSERT_EQ(close(sp[0]), 0);
	ASSERT_EQ(close(sp[1]), 0);
	/* the Streams go after a grace period: within the test's timeout */
	EXPECT_TRUE(write_end_gone(p[0], _metadata->timeout * 1000 / 2))
		TH_LOG("the write end is still open: a descriptor in flight leaked");
	close(p[0]);
}

/* ------------------------------------------------ I_FDINSERT */

/* I_FDINSERT on @fd: @ctl (its length) with the token of @other at @off, "dd" as data. */
static int fdinsert(int fd, char *ctl, int clen, int other, int off, int flags)
{
	struct strfdinsert fi = {
		{ 0, clen, ctl }, { 0, 2, "dd" }, (t_uscalar_t)flags, other, off,
	};

	return ioctl(fd, I_FDINSERT, &fi);
}

TEST_F(xsi, fdinsert)
{
	char ctl[16], got[16], data[8];
	struct strbuf c = { sizeof(got), 0, got }, d = { sizeof(data), 0, data };
	unsigned int tok[2];
	int other, other2, flags, i, p[2], u, l, sp[2];

	other = open(ASX_DEV, O_RDWR);
	other2 = open(ASX_DEV, O_RDWR);
	ASSERT_GE(other, 0);
	ASSERT_GE(other2, 0);
	/* the control part comes back with the other Stream's token at offset */
	for (i = 0; i < 2; i++) {
		memset(ctl, 'c', sizeof(ctl));
		ASSERT_EQ(fdinsert(self->fd, ctl, 12, i ? other2 : other, 4, 0), 0)
			TH_LOG("I_FDINSERT: %s", strerror(errno));
		flags = 0;
		c.len = d.len = -2;
		ASSERT_EQ(getmsg(self->fd, &c, &d, &flags), 0);
		ASSERT_EQ(c.len, 12);
		EXPECT_EQ(d.len, 2);
		EXPECT_EQ(memcmp(data, "dd", 2), 0);
		EXPECT_EQ(memcmp(got, "cccc", 4), 0) TH_LOG("before the token: unchanged");
		EXPECT_EQ(memcmp(got + 8, "cccc", 4), 0) TH_LOG("after it: unchanged");
		memcpy(&tok[i], got + 4, sizeof(tok[i]));
	}
	EXPECT_NE(tok[0], tok[1]) TH_LOG("a token per Stream");
	EXPECT_NE(tok[0], 0x63636363u) TH_LOG("the token was stored");
	/* the same Stream, the same token; RS_HIPRI makes it high priority */
	memset(ctl, 'c', sizeof(ctl));
	ASSERT_EQ(fdinsert(self->fd, ctl, 4, other, 0, RS_HIPRI), 0);
	flags = 0;
	ASSERT_EQ(getmsg(self->fd, &c, &d, &flags), 0);
	EXPECT_EQ(flags, RS_HIPRI);
	ASSERT_EQ(c.len, 4);
	EXPECT_EQ(memcmp(got, &tok[0], 4), 0);
	/* streamio(7)'s EINVAL cases */
	FAILS(fdinsert(self->fd, ctl, 12, other, 2, 0), EINVAL);	/* not aligned */
	FAILS(fdinsert(self->fd, ctl, 12, other, 12, 0), EINVAL);	/* past ctlbuf.len */
	FAILS(fdinsert(self->fd, ctl, 12, other, -4, 0), EINVAL);
	FAILS(fdinsert(self->fd, ctl, 2, other, 0, 0), EINVAL);	/* no room at all */
	FAILS(fdinsert(self->fd, ctl, -1, other, 0, 0), EINVAL);	/* no control part */
	FAILS(fdinsert(self->fd, ctl, 12, other, 0, 2), EINVAL);	/* flags */
	FAILS(fdinsert(self->fd, ctl, 12, -1, 0, 0), EINVAL);		/* fildes */
	ASSERT_EQ(pipe(p), 0);
	FAILS(fdinsert(self->fd, ctl, 12, p[0], 0, 0), EINVAL);	/* not a Stream */
	close(p[0]);
	close(p[1]);
	FAILS(fdinsert(self->fd, ctl, 12, p[0], 0, 0), EINVAL);	/* closed */
	u = open(ASX_DEV, O_RDWR);
	l = open(ASX_DEV, O_RDWR);
	ASSERT_GE(u, 0);
	ASSERT_GE(l, 0);
	ASSERT_EQ(asx_setdrv(u, "mux"), 0);
	ASSERT_GE(ioctl(u, I_LINK, l), 0);
	FAILS(fdinsert(self->fd, ctl, 12, l, 0, 0), EINVAL);	/* linked under a mux */
	FAILS(fdinsert(l, ctl, 12, other, 0, 0), EINVAL);		/* on a linked one */
	close(u);
	close(l);
	FAILS(ioctl(self->fd, I_FDINSERT, NULL), EFAULT);
	/* ERANGE: a part above the maximum */
	{
		static char big[ASX_MAX_CTL + 8];
		struct strfdinsert fi = { { 0, ASX_MAX_CTL + 4, big }, { 0, -1, NULL }, 0, other, 0 };

		FAILS(ioctl(self->fd, I_FDINSERT, &fi), ERANGE);
	}
	/* EAGAIN: flow-controlled with O_NONBLOCK (a high-priority one still goes) */
	ASSERT_EQ(fcntl(self->fd, F_SETFL, O_NONBLOCK), 0);
	for (i = 0; i < 100000 && !fdinsert(self->fd, ctl, 12, other, 0, 0); i++)
		;
	EXPECT_EQ(errno, EAGAIN) TH_LOG("after %d messages: %s", i, strerror(errno));
	EXPECT_EQ(fdinsert(self->fd, ctl, 12, other, 0, RS_HIPRI), 0);
	/* ENXIO: hung up */
	ASSERT_EQ(asx_pipe_pair(sp), 0);
	close(sp[1]);
	FAILS(fdinsert(sp[0], ctl, 12, other, 0, 0), ENXIO);
	close(sp[0]);
	close(other);
	close(other2);
}

/* ------------------------------------------------ I_SETCLTIME and I_GETCLTIME */

TEST_F(xsi, cltime_set_get)
{
	int ms = -1;

	ASSERT_EQ(ioctl(self->fd, I_GETCLTIME, &ms), 0);
	EXPECT_EQ(ms, 15000) TH_LOG("the default close time: SVR4's 15 s");
	ms = 250;
	ASSERT_EQ(ioctl(self->fd, I_SETCLTIME, &ms), 0);
	ms = -1;
	ASSERT_EQ(ioctl(self->fd, I_GETCLTIME, &ms), 0);
	EXPECT_EQ(ms, 250);
	ms = -1;
	FAILS(ioctl(self->fd, I_SETCLTIME, &ms), EINVAL);
	ms = ASX_XSI_MAX_CLTIME + 1;
	FAILS(ioctl(self->fd, I_SETCLTIME, &ms), EINVAL);
	FAILS(ioctl(self->fd, I_SETCLTIME, NULL), EFAULT);
	FAILS(ioctl(self->fd, I_GETCLTIME, NULL), EFAULT);
	ms = 0;
	ASSERT_EQ(ioctl(self->fd, I_SETCLTIME, &ms), 0);
	ASSERT_EQ(ioctl(self->fd, I_GETCLTIME, &ms), 0);
	EXPECT_EQ(ms, 0);
}

/* Fills pipe end @fd's way to the other end; the bytes written. */
static long fill_pipe(int fd)
{
	char buf[1024];
	long n = 0;
	ssize_t w;

	memset(buf, 'f', sizeof(buf));
	if (fcntl(fd, F_SETFL, O_NONBLOCK))
		return -1;
	while ((w = write(fd, buf, sizeof(buf))) > 0)
		n += w;
	if (errno != EAGAIN || fcntl(fd, F_SETFL, 0))
		return -1;
	return n;
}

/* Reads @fd to end of file; the bytes read. */
static long drain_fd(int fd)
{
	char buf[4096];
	long n = 0;
	ssize_t r;

	while ((r = read(fd, buf, sizeof(buf))) > 0)
		n += r;
	return r < 0 ? -1 : n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A blocking close of a pipe end waits, up to its close time, for what its
 * write side holds to reach the other end: a reader that comes late gets
 * every byte.
 */
TEST(close_drains_the_write_side)
{
	int sp[2], res[2], go[2], ms = 60000;
	long sent, got = -1;
	double t;
	pid_t child;
	char c;

	ASSERT_EQ(asx_pipe_pair(sp), 0);
	ASSERT_EQ(pipe(res), 0);
	ASSERT_EQ(pipe(go), 0);
	sent = fill_pipe(sp[0]);
	ASSERT_GT(sent, 0);
	ASSERT_EQ(ioctl(sp[0], I_SETCLTIME, &ms), 0);
	child = fork();
	ASSERT_GE(child, 0);
	if (!child) {
		/* not the last close of the writer's end: the parent's is */
		close(sp[0]);
		if (write(go[1], "g", 1) != 1)
			_exit(2);
		usleep(300 * 1000);	/* the close has started waiting */
		got = drain_fd(sp[1]);
		_exit(write(res[1], &got, sizeof(got)) == sizeof(got) ? 0 : 1);
	}
	close(sp[1]);
	ASSERT_EQ(read(go[0], &c, 1), 1);
	t = now_s();
	ASSERT_EQ(close(sp[0]), 0);
	t = now_s() - t;
	ASSERT_EQ(read(res[0], &got, sizeof(got)), (ssize_t)sizeof(got));
	EXPECT_EQ(got, sent) TH_LOG("the reader got %ld of %ld bytes (close took %.2f s)",
				    got, sent, t);
	EXPECT_LT(t, ms / 1000.0) TH_LOG("the close ended when the write side drained");
	waitpid(child, NULL, 0);
	close(res[0]);
	close(res[1]);
	close(go[0]);
	close(go[1]);
}

/* With nobody reading, the close gives up after the close time, not before. */
TEST(close_time_bounds_the_wait)
{
	int sp[2], ms = 400, n;
	long sent, got;
	double t;

	ASSERT_EQ(asx_pipe_pair(sp), 0);
	sent = fill_pipe(sp[0]);
	ASSERT_GT(sent, 0);
	ASSERT_EQ(ioctl(sp[0], I_SETCLTIME, &ms), 0);
	t = now_s();
	ASSERT_EQ(close(sp[0]), 0);
	t = now_s() - t;
	EXPECT_GE(t, 0.35) TH_LOG("close took %.3f s, the close time is %d ms", t, ms);
	EXPECT_LT(t, 0.4 + _metadata->timeout / 3.0);
	got = drain_fd(sp[1]);
	EXPECT_GT(got, 0);
	EXPECT_LT(got, sent) TH_LOG("what the writer's side held went with it");
	close(sp[1]);

	/* O_NONBLOCK: no wait at all, whatever the close time */
	ASSERT_EQ(asx_pipe_pair(sp), 0);
	ASSERT_GT(fill_pipe(sp[0]), 0);
	ms = ASX_XSI_MAX_CLTIME;
	ASSERT_EQ(ioctl(sp[0], I_SETCLTIME, &ms), 0);
	ASSERT_EQ(fcntl(sp[0], F_SETFL, O_NONBLOCK), 0);
	t = now_s();
	ASSERT_EQ(close(sp[0]), 0);
	t = now_s() - t;
	EXPECT_LT(t, _metadata->timeout / 3.0) TH_LOG("close took %.3f s", t);
	n = 0;
	EXPECT_EQ(ioctl(sp[1], I_NREAD, &n) > 0, 1);
	close(sp[1]);
}

/*
 * A process killed by a signal does not wait out its close time: its last
 * close of a blocking pipe end with undrained writes returns at once, as
 * the signal would have ended the wait in a close(2).  A process that
 * exits normally still drains.
 */
TEST(killed_process_does_not_wait_close_time)
{
	int sp[2], ms, status;
	pid_t pid;
	double t;

	for (int killed = 1; killed >= 0; killed--) {
		int go[2];
		char c = 0;

		ASSERT_EQ(asx_pipe_pair(sp), 0);
		ASSERT_GT(fill_pipe(sp[0]), 0);
		ASSERT_EQ(pipe(go), 0);
		ms = killed ? 10000 : 400;
		ASSERT_EQ(ioctl(sp[0], I_SETCLTIME, &ms), 0);
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			close(sp[1]);
			close(go[1]);
			if (killed)
				pause();
			/* exit only once the parent's sp[0] is gone, so that the
			 * last close of sp[0] is surely the exit's */
			if (read(go[0], &c, 1) < 0)
				_exit(2);
			_exit(0);
		}
		close(go[0]);
		close(sp[0]);		/* not the last: the child holds it */
		t = now_s();
		ASSERT_EQ(write(go[1], &c, 1), 1);
		close(go[1]);
		if (killed)
			ASSERT_EQ(kill(pid, SIGKILL), 0);
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
		t = now_s() - t;
		if (killed) {
			EXPECT_TRUE(WIFSIGNALED(status));
			EXPECT_LT(t, 5.0) TH_LOG("a killed process lingered %.3f s in its close", t);
		} else {
			EXPECT_TRUE(WIFEXITED(status));
			EXPECT_GE(t, 0.35) TH_LOG("exit() drained for %.3f s, the close time is 400 ms",
						  t);
		}
		close(sp[1]);
	}
}

static volatile sig_atomic_t sigpipes;

static void on_sigpipe(int sig)
{
	(void)sig;
	sigpipes++;
}

TEST(hung_up_stream)
{
	char dbuf[8], cbuf[8];
	struct strbuf c = { sizeof(cbuf), 9, cbuf }, d = { sizeof(dbuf), 9, dbuf };
	struct strioctl si = { ASX_STR_COUNT_GET, 0, 0, NULL };
	struct bandinfo bi = { 0, FLUSHR };
	int a, b, flags = 0, n;

	signal(SIGPIPE, on_sigpipe);
	a = open(ASX_DEV, O_RDWR);
	ASSERT_GE(a, 0);
	b = asx_pipe(a, ASX_PIPE_CLOEXEC);
	ASSERT_GE(b, 0);
	ASSERT_EQ(put(b, NULL, "last", 0), 0);
	ASSERT_EQ(close(b), 0);
	FAILS(ioctl(a, I_PUSH, "pass"), ENXIO);
	FAILS(ioctl(a, I_POP, 0), ENXIO);
	FAILS(ioctl(a, I_FLUSH, FLUSHR), ENXIO);
	FAILS(ioctl(a, I_FLUSHBAND, &bi), ENXIO);
	FAILS(ioctl(a, I_STR, &si), ENXIO);
	FAILS(ioctl(a, I_LINK, 0), ENXIO);
	FAILS(ioctl(a, I_UNLINK, 0), ENXIO);
	FAILS(put(a, NULL, "x", 0), ENXIO);
	FAILS(put(a, "x", NULL, RS_HIPRI), ENXIO);
	EXPECT_EQ(sigpipes, 0) TH_LOG("putmsg raises no SIGPIPE");
	/* what was queued is still read, then end of file: both lengths 0 */
	EXPECT_EQ(ioctl(a, I_NREAD, &n), 1);
	ASSERT_EQ(getmsg(a, &c, &d, &flags), 0);
	EXPECT_EQ(d.len, 4);
	EXPECT_EQ(c.len, -1);
	c.len = d.len = 9;
	ASSERT_EQ(getmsg(a, &c, &d, &flags), 0);
	EXPECT_EQ(c.len, 0);
	EXPECT_EQ(d.len, 0);
	close(a);
}

TEST(mux_link_unlink)
{
	int u, l[2], p[2], id[2], n;
	char name[FMNAMESZ + 1];
	struct strbuf d = { 0, 1, "x" };

	u = open(ASX_DEV, O_RDWR);
	l[0] = open(ASX_DEV, O_RDWR);
	l[1] = open(ASX_DEV, O_RDWR);
	ASSERT_GE(u, 0);
	ASSERT_GE(l[0], 0);
	ASSERT_GE(l[1], 0);
	FAILS(ioctl(u, I_LINK, l[0]), EINVAL);	/* the loop driver is no multiplexor */
	ASSERT_EQ(asx_setdrv(u, "mux"), 0);
	id[0] = ioctl(u, I_LINK, l[0]);
	ASSERT_GE(id[0], 0) TH_LOG("I_LINK: %s", strerror(errno));
	id[1] = ioctl(u, I_LINK, l[1]);
	ASSERT_GE(id[1], 0);
	EXPECT_NE(id[0], id[1]);
	FAILS(ioctl(u, I_LINK, l[0]), EINVAL);	/* already linked */
	ASSERT_EQ(pipe(p), 0);
	FAILS(ioctl(u, I_LINK, p[0]), EINVAL);	/* not a Stream */
	close(p[0]);
	close(p[1]);
	FAILS(ioctl(u, I_LINK, p[0]), EBADF);
	/* a linked Stream: every request fails with EINVAL */
	FAILS(ioctl(l[0], I_PUSH, "pass"), EINVAL);
	FAILS(ioctl(l[0], I_NREAD, &n), EINVAL);
	FAILS(ioctl(l[0], I_SRDOPT, RNORM), EINVAL);
	FAILS(ioctl(l[0], I_LOOK, name), EINVAL);
	FAILS(ioctl(l[0], I_CANPUT, 0), EINVAL);
	FAILS(putmsg(l[0], NULL, &d, 0), EINVAL);
	FAILS(ioctl(u, I_UNLINK, 999), EINVAL);	/* no such mux id */
	ASSERT_EQ(ioctl(u, I_UNLINK, id[0]), 0);
	ASSERT_EQ(ioctl(u, I_UNLINK, MUXID_ALL), 0);
	FAILS(ioctl(u, I_UNLINK, id[1]), EINVAL);
	/* unlinked (after a grace period), each is its owner's again */
	for (n = 0; n < 200 && ioctl(l[1], I_PUSH, "pass"); n++)
		asx_msleep(10);
	EXPECT_EQ(ioctl(l[1], I_FIND, "pass"), 1);
	close(l[0]);
	close(l[1]);
	close(u);
}

TEST_HARNESS_MAIN
