// SPDX-License-Identifier: GPL-2.0
/*
 * pipe_test.c - Stream pipes, the frame and csum modules across a pipe, and
 * the mux driver with linked lower Streams.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <sys/mman.h>

#include "asx_util.h"
#include "asx_harness.h"

FIXTURE(pipe) {
	int a;
	int b;
};

FIXTURE_SETUP(pipe)
{
	self->b = -1;
	self->a = asx_open(0);
	ASSERT_GE(self->a, 0) TH_LOG("open %s: %s", ASX_DEV, strerror(errno));
	self->b = asx_pipe(self->a, ASX_PIPE_CLOEXEC);
	ASSERT_GE(self->b, 0) TH_LOG("ASX_IOC_PIPE: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE_TEARDOWN(pipe)
{
	close(self->a);
	if (self->b >= 0)
		close(self->b);
}

TEST_F(pipe, both_ways)
{
	char buf[16], drv[ASX_NAME_MAX];

	EXPECT_TRUE(fcntl(self->b, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(asx_list(self->b, NULL, 0, drv), 0);
	EXPECT_EQ(strcmp(drv, "pipe"), 0);
	ASSERT_EQ(write(self->a, "to b", 4), 4);
	ASSERT_EQ(read(self->b, buf, sizeof(buf)), 4);
	EXPECT_EQ(memcmp(buf, "to b", 4), 0);
	ASSERT_EQ(write(self->b, "to a!", 5), 5);
	ASSERT_EQ(read(self->a, buf, sizeof(buf)), 5);
	EXPECT_EQ(memcmp(buf, "to a!", 5), 0);
	errno = 0;
	EXPECT_EQ(asx_pipe(self->a, 0), -1) TH_LOG("already a pipe");
	EXPECT_EQ(errno, EBUSY);
	errno = 0;
	EXPECT_EQ(asx_pipe(self->a, 4), -1);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(pipe, close_hangs_up_the_other_end)
{
	char buf[8];

	ASSERT_EQ(write(self->b, "last", 4), 4);
	ASSERT_EQ(close(self->b), 0);
	self->b = -1;
	EXPECT_TRUE(asx_poll1(self->a, POLLIN, 1000) & POLLHUP);
	EXPECT_EQ(read(self->a, buf, sizeof(buf)), 4) TH_LOG("queued data is still read");
	EXPECT_EQ(read(self->a, buf, sizeof(buf)), 0) TH_LOG("then end of file");
	errno = 0;
	EXPECT_EQ(write(self->a, "x", 1), -1);
	EXPECT_EQ(errno, EPIPE);
}

/* streamio(7): after a hangup, I_PUSH, I_POP, I_FLUSH, I_STR fail with ENXIO. */
TEST_F(pipe, hung_up_end_refuses_changes_with_enxio)
{
	struct asx_nread nr;
	char buf[8], drv[ASX_NAME_MAX];

	ASSERT_EQ(asx_push(self->a, "pass"), 0);
	ASSERT_EQ(write(self->b, "last", 4), 4);
	ASSERT_EQ(close(self->b), 0);
	self->b = -1;
	ASSERT_TRUE(asx_poll1(self->a, POLLIN, 1000) & POLLHUP);
	errno = 0;
	EXPECT_EQ(asx_push(self->a, "count"), -1);
	EXPECT_EQ(errno, ENXIO) TH_LOG("PUSH: %s", strerror(errno));
	errno = 0;
	EXPECT_EQ(asx_pop(self->a, NULL), -1);
	EXPECT_EQ(errno, ENXIO) TH_LOG("POP: %s", strerror(errno));
	errno = 0;
	EXPECT_EQ(asx_flush(self->a, ASX_FLUSHRW, 0), -1);
	EXPECT_EQ(errno, ENXIO) TH_LOG("FLUSH: %s", strerror(errno));
	errno = 0;
	EXPECT_EQ(asx_str(self->a, ASX_STR_COUNT_GET, NULL, 0, 0, NULL), -1);
	EXPECT_EQ(errno, ENXIO) TH_LOG("STR: %s", strerror(errno));
	/* what only looks still answers, and the queued data is still read */
	EXPECT_EQ(asx_list(self->a, NULL, 0, drv), 1);
	ASSERT_EQ(asx_nread(self->a, &nr), 0);
	EXPECT_EQ(nr.msgs, 1);
	EXPECT_EQ(read(self->a, buf, sizeof(buf)), 4);
	EXPECT_EQ(read(self->a, buf, sizeof(buf)), 0);
}

TEST_F(pipe, flush_write_side_reaches_the_other_end)
{
	struct asx_nread nr;

	ASSERT_EQ(write(self->a, "1", 1), 1);
	ASSERT_EQ(write(self->a, "2", 1), 1);
	ASSERT_EQ(asx_nread(self->b, &nr), 0);
	EXPECT_EQ(nr.msgs, 2);
	ASSERT_EQ(asx_flush(self->a, ASX_FLUSHW, 0), 0);
	ASSERT_EQ(asx_nread(self->b, &nr), 0);
	EXPECT_EQ(nr.msgs, 0);
}

TEST_F(pipe, frame_module)
{
	unsigned char raw[64], rec[3][20], buf[64];
	unsigned int i, off = 0, n;

	ASSERT_EQ(asx_push(self->a, "frame"), 0) TH_LOG("%s", strerror(errno));
	/* Down: a length prefix in front of each message. */
	ASSERT_EQ(write(self->a, "hello", 5), 5);
	ASSERT_EQ(read(self->b, raw, sizeof(raw)), 9);
	EXPECT_EQ(memcmp(raw, "\0\0\0\5hello", 9), 0);

	/* Up: frames split and joined at random are cut back into messages. */
	for (i = 0; i < 3; i++) {
		n = 5 + i * 6;
		raw[off] = 0;
		raw[off + 1] = 0;
		raw[off + 2] = 0;
		raw[off + 3] = n;
		memset(rec[i], 'A' + i, n);
		memcpy(raw + off + 4, rec[i], n);
		off += 4 + n;
	}
	ASSERT_EQ(write(self->b, raw, 3), 3);
	ASSERT_EQ(write(self->b, raw + 3, 10), 10);
	ASSERT_EQ(write(self->b, raw + 13, off - 13), off - 13);
	ASSERT_EQ(asx_opt(self->a, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	for (i = 0; i < 3; i++) {
		n = 5 + i * 6;
		ASSERT_EQ(read(self->a, buf, sizeof(buf)), n) TH_LOG("frame %u", i);
		EXPECT_EQ(memcmp(buf, rec[i], n), 0) TH_LOG("frame %u", i);
	}

	/* A frame longer than the limit fails the Stream with EPROTO. */
	ASSERT_EQ(write(self->b, "\xff\xff\xff\xff", 4), 4);
	EXPECT_TRUE(asx_poll1(self->a, POLLIN, 1000) & POLLERR);
	errno = 0;
	EXPECT_EQ(read(self->a, buf, sizeof(buf)), -1);
	EXPECT_EQ(errno, EPROTO);
}

static unsigned short rfc1071(const unsigned char *p, size_t n)
{
	unsigned long sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += (i & 1) ? p[i] : (unsigned int)p[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

TEST_F(pipe, csum_module)
{
	unsigned char raw[64], buf[64];
	struct asx_csum_stats cs;
	unsigned short sum;

	ASSERT_EQ(asx_push(self->a, "csum"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(write(self->a, "abcde", 5), 5);
	ASSERT_EQ(read(self->b, raw, sizeof(raw)), 7);
	sum = rfc1071((const unsigned char *)"abcde", 5);
	EXPECT_EQ(raw[5], sum >> 8);
	EXPECT_EQ(raw[6], sum & 0xff);

	/* Up: a good checksum is stripped; a bad one is dropped. */
	memcpy(buf, "xyz!", 4);
	sum = rfc1071(buf, 4);
	buf[4] = sum >> 8;
	buf[5] = sum & 0xff;
	ASSERT_EQ(write(self->b, buf, 6), 6);
	buf[5] ^= 1;
	ASSERT_EQ(write(self->b, buf, 6), 6);
	ASSERT_EQ(write(self->b, "q", 1), 1);
	ASSERT_EQ(read(self->a, raw, sizeof(raw)), 4);
	EXPECT_EQ(memcmp(raw, "xyz!", 4), 0);
	ASSERT_EQ(asx_str(self->a, ASX_STR_CSUM_GET, &cs, 0, sizeof(cs), NULL), 0)
		TH_LOG("%s", strerror(errno));
	EXPECT_EQ(cs.computed, 1);
	EXPECT_EQ(cs.good, 1);
	EXPECT_EQ(cs.bad, 2);
	ASSERT_EQ(fcntl(self->a, F_SETFL, O_NONBLOCK), 0);
	errno = 0;
	EXPECT_EQ(read(self->a, raw, sizeof(raw)), -1) TH_LOG("the bad ones never arrive");
	EXPECT_EQ(errno, EAGAIN);
}

FIXTURE(mux) {
	int u;
	int l[2];
};

FIXTURE_SETUP(mux)
{
	self->u = asx_open(0);
	self->l[0] = asx_open(0);
	self->l[1] = asx_open(0);
	ASSERT_GE(self->u, 0);
	ASSERT_GE(self->l[0], 0);
	ASSERT_GE(self->l[1], 0);
}

FIXTURE_TEARDOWN(mux)
{
	close(self->u);
	if (self->l[0] >= 0)
		close(self->l[0]);
	close(self->l[1]);
}

static int link_fd(int u, int fd, __u32 *id)
{
	struct asx_link lk = { .size = sizeof(lk), .fd = fd };
	int ret = ioctl(u, ASX_IOC_LINK, &lk);

	if (!ret && id)
		*id = lk.id;
	return ret;
}

static int unlink_id(int u, __u32 id)
{
	struct asx_link lk = { .size = sizeof(lk), .id = id };

	return ioctl(u, ASX_IOC_UNLINK, &lk);
}

TEST_F(mux, route_by_id)
{
	struct asx_mux_hdr hdr = { 0 }, got;
	unsigned char data[16];
	struct asx_strmsg sm;
	__u32 id[2];
	char c;
	int i;

	errno = 0;
	EXPECT_EQ(link_fd(self->u, self->l[0], NULL), -1) TH_LOG("not a mux yet");
	EXPECT_EQ(errno, EINVAL);
	ASSERT_EQ(asx_setdrv(self->u, "mux"), 0) TH_LOG("%s", strerror(errno));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(link_fd(self->u, self->l[i], &id[i]), 0)
			TH_LOG("link %d: %s", i, strerror(errno));
	}
	EXPECT_NE(id[0], id[1]);
	errno = 0;
	EXPECT_EQ(link_fd(self->u, self->l[0], NULL), -1) TH_LOG("linked twice");
	EXPECT_EQ(errno, EBUSY);
	errno = 0;
	EXPECT_EQ(link_fd(self->u, self->u, NULL), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(link_fd(self->u, 0, NULL), -1) TH_LOG("not an ASX Stream");
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(write(self->l[0], "x", 1), -1) TH_LOG("a linked Stream takes no I/O");
	EXPECT_EQ(errno, EINVAL);

	/* Down to each loop lower and back up, tagged with its id. */
	for (i = 1; i >= 0; i--) {
		hdr.id = id[i];
		ASSERT_EQ(asx_putmsg(self->u, &hdr, sizeof(hdr), i ? "one" : "zero",
				     i ? 3 : 4, 0, 0), 0)
			TH_LOG("%s", strerror(errno));
		memset(data, 0, sizeof(data));
		ASSERT_EQ(asx_getmsg(self->u, ASX_IOC_GETMSG, &sm, &got, sizeof(got), data,
				     sizeof(data), 0, 0), 0)
			TH_LOG("%s", strerror(errno));
		EXPECT_EQ(sm.ctl.len, sizeof(got));
		EXPECT_EQ(got.id, id[i]);
		EXPECT_EQ(strcmp((char *)data, i ? "one" : "zero"), 0);
	}

	/* Unknown id: dropped. */
	hdr.id = 999;
	ASSERT_EQ(asx_putmsg(self->u, &hdr, sizeof(hdr), "lost", 4, 0, 0), 0);
	ASSERT_EQ(fcntl(self->u, F_SETFL, O_NONBLOCK), 0);
	asx_msleep(100);
	errno = 0;
	EXPECT_EQ(asx_getmsg(self->u, ASX_IOC_GETMSG, &sm, &got, sizeof(got), data,
			     sizeof(data), 0, 0), -1);
	EXPECT_EQ(errno, EAGAIN);

	errno = 0;
	EXPECT_EQ(unlink_id(self->u, 999), -1);
	EXPECT_EQ(errno, ENXIO);
	ASSERT_EQ(unlink_id(self->u, id[0]), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(write(self->l[0], "y", 1), 1) TH_LOG("usable again: %s", strerror(errno));
	ASSERT_EQ(read(self->l[0], &c, 1), 1);
	/* Closing a lower's descriptor while linked: the mux keeps it. */
	ASSERT_EQ(close(self->l[0]), 0);
	self->l[0] = -1;
	ASSERT_EQ(unlink_id(self->u, ASX_MUX_ALL), 0);
}

/* A slow reader of the mux stops the whole path, down and up, and loses nothing. */
/* A LINK whose answer cannot be written is undone: the lower is free again. */
/*
 * streamio(7): every Stream ioctl on a Stream linked under a mux fails with
 * EINVAL, before its argument is looked at; the read-only VERSION, GETWM and
 * QSTATS answer.  Unlinked, the Stream is the caller's again.
 */
TEST_F(mux, linked_lower_refuses_stream_ioctls)
{
	struct asx_version v = { .size = sizeof(v) };
	struct asx_qstats qs;
	struct asx_nread nr;
	struct asx_strmsg sm;
	uint64_t hi = 0, lo = 0;
	char drv[ASX_NAME_MAX], buf[8];
	__u32 id = 0;
	int l = self->l[0], other;

	ASSERT_EQ(asx_setdrv(self->u, "mux"), 0);
	ASSERT_EQ(link_fd(self->u, l, &id), 0) TH_LOG("%s", strerror(errno));
#define REFUSED(call) do {							\
		errno = 0;							\
		EXPECT_EQ((call), -1) TH_LOG("%s", #call);			\
		EXPECT_EQ(errno, EINVAL) TH_LOG("%s: %s", #call, strerror(errno)); \
	} while (0)
	REFUSED(asx_push(l, "pass"));
	REFUSED(asx_pop(l, NULL));
	REFUSED(asx_list(l, NULL, 0, drv));
	REFUSED(asx_putmsg(l, NULL, -1, "x", 1, 0, 0));
	REFUSED(asx_getmsg(l, ASX_IOC_GETMSG, &sm, NULL, 0, buf, sizeof(buf), 0, 0));
	REFUSED(asx_getmsg(l, ASX_IOC_PEEK, &sm, NULL, 0, buf, sizeof(buf), 0, 0));
	REFUSED(asx_flush(l, ASX_FLUSHRW, 0));
	REFUSED(asx_opt(l, ASX_IOC_SRDOPT, ASX_RMSGD));
	REFUSED(asx_opt(l, ASX_IOC_GRDOPT, 0));
	REFUSED(asx_opt(l, ASX_IOC_SWROPT, ASX_SNDZERO));
	REFUSED(asx_opt(l, ASX_IOC_GWROPT, 0));
	REFUSED(asx_nread(l, &nr));
	REFUSED(asx_setwm(l, 0, ASX_SIDE_READ, 1000, 100));
	REFUSED(asx_str(l, ASX_STR_COUNT_GET, NULL, 0, 0, NULL));
	REFUSED(link_fd(l, self->l[1], NULL));
	REFUSED(unlink_id(l, 1));
	REFUSED(asx_pipe(l, 0));
	REFUSED(asx_setdrv(l, "null"));
	/* an argument the kernel would refuse otherwise: still EINVAL, not EFAULT */
	errno = 0;
	EXPECT_EQ(ioctl(l, ASX_IOC_PUSH, NULL), -1);
	EXPECT_EQ(errno, EINVAL);
#undef REFUSED
	EXPECT_EQ(ioctl(l, ASX_IOC_VERSION, &v), 0);
	EXPECT_EQ(asx_qstats(l, 0, ASX_SIDE_READ, &qs), 0);
	EXPECT_EQ(ASX_ON_FD(l, asx_kstream_get_water(ks_, 0, ASX_SIDE_READ, &hi, &lo)), 0);
	errno = 0;
	EXPECT_EQ(ioctl(l, _IO(ASX_IOC_MAGIC, 0x7f)), -1);
	EXPECT_EQ(errno, ENOTTY) TH_LOG("an unknown ioctl is still ENOTTY");

	ASSERT_EQ(unlink_id(self->u, id), 0);
	other = -1;
	for (int tries = 0; tries < 200; tries++) {	/* the unlink ends after a grace period */
		other = asx_push(l, "pass");
		if (!other || errno != EINVAL)
			break;
		asx_msleep(10);
	}
	EXPECT_EQ(other, 0) TH_LOG("PUSH after the unlink: %s", strerror(errno));
}

TEST_F(mux, link_undone_when_the_answer_cannot_be_written)
{
	struct asx_link *ro;
	int i, ret = -1;

	ASSERT_EQ(asx_setdrv(self->u, "mux"), 0) TH_LOG("%s", strerror(errno));
	ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(ro, MAP_FAILED);
	ro->size = sizeof(*ro);
	ro->fd = self->l[0];
	ASSERT_EQ(mprotect(ro, 4096, PROT_READ), 0);
	errno = 0;
	EXPECT_EQ(ioctl(self->u, ASX_IOC_LINK, ro), -1)
		TH_LOG("the answer lands on a read-only page");
	EXPECT_EQ(errno, EFAULT);
	/* given back after a grace period: EBUSY until then */
	for (i = 0; i < 500 && ret; i++) {
		ret = link_fd(self->u, self->l[0], NULL);
		if (ret)
			asx_msleep(10);
	}
	EXPECT_EQ(ret, 0) TH_LOG("the lower links again: %s", strerror(errno));
	munmap(ro, 4096);
}

TEST_F(mux, flow_control_both_ways)
{
	struct asx_mux_hdr hdr = { 0 }, got;
	unsigned char data[100];
	struct asx_strmsg sm;
	int sent = 0, recvd = 0, bad = 0, tries = 0;
	__u32 id = 0;

	ASSERT_EQ(asx_setdrv(self->u, "mux"), 0);
	ASSERT_EQ(link_fd(self->u, self->l[0], &id), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_setwm(self->u, 0, ASX_SIDE_READ, 1000, 100), 0);
	ASSERT_EQ(asx_setwm(self->u, ASX_LEVEL_DRIVER, ASX_SIDE_READ, 1000, 100), 0);
	ASSERT_EQ(asx_setwm(self->u, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 1000, 100), 0);
	ASSERT_EQ(fcntl(self->u, F_SETFL, O_NONBLOCK), 0);
	hdr.id = id;
	for (;;) {
		memset(data, sent & 0xff, sizeof(data));
		if (asx_putmsg(self->u, &hdr, sizeof(hdr), data, sizeof(data), 0, 0)) {
			if (errno == EAGAIN && ++tries < 20) {
				asx_msleep(20);	/* let the mux and the lower settle */
				continue;
			}
			break;
		}
		tries = 0;
		sent++;
		if (sent > 100000)
			break;
	}
	EXPECT_EQ(errno, EAGAIN) TH_LOG("the mux writer is stopped");
	EXPECT_LT(sent, 100000);
	TH_LOG("%d messages in flight when the writer stopped", sent);
	while (recvd < sent) {
		if (asx_getmsg(self->u, ASX_IOC_GETMSG, &sm, &got, sizeof(got), data,
			       sizeof(data), 0, 0)) {
			if (errno != EAGAIN || !(asx_poll1(self->u, POLLIN, 2000) & POLLIN))
				break;
			continue;
		}
		if (got.id != id || sm.data.len != sizeof(data) || data[0] != (recvd & 0xff) ||
		    data[99] != (recvd & 0xff))
			bad++;
		recvd++;
	}
	EXPECT_EQ(recvd, sent) TH_LOG("every message comes back");
	EXPECT_EQ(bad, 0) TH_LOG("in order and intact");
}

struct relinker {
	int u;
	int l;
	int rounds;
	long linked;
	long busy;
	long errors;
};

static void *relink_main(void *arg)
{
	struct relinker *r = arg;
	unsigned int seed = (unsigned int)r->u;
	struct timespec ts = { 0, 0 };
	__u32 id;

	for (int i = 0; i < r->rounds; i++) {
		if (link_fd(r->u, r->l, &id)) {
			if (errno == EBUSY)
				r->busy++;
			else
				r->errors++;
			ts.tv_nsec = rand_r(&seed) % 100000;
			nanosleep(&ts, NULL);
			continue;
		}
		r->linked++;
		/* hold it a moment, and let go a moment: the other one tries
		 * all along, during unlinks too */
		ts.tv_nsec = rand_r(&seed) % 200000;
		nanosleep(&ts, NULL);
		if (unlink_id(r->u, id))
			r->errors++;
		ts.tv_nsec = rand_r(&seed) % 200000;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/*
 * Two muxes link and unlink the same lower as fast as they can. An unlink
 * gives back its link's reference to the lower's file after a grace period;
 * the other mux may not link the lower before then, or that unlink would put
 * the new link's reference and the new link's own unlink would find none
 * (it crashed asx.ko once, in random_test).
 */
/*
 * The mux's write side stopped behind a full lower, and that lower is
 * unlinked: what it held for the lower is dropped, and the other lowers get
 * their messages again (the write side used to stay stopped for good).
 */
TEST_F(mux, unlink_restarts_the_write_side)
{
	struct asx_mux_hdr hdr = { 0 }, got;
	unsigned char data[100] = { 0 };
	struct asx_strmsg sm;
	int sent = 0, tries = 0, ret = -1, i;
	__u32 id[2];

	ASSERT_EQ(asx_setdrv(self->u, "mux"), 0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(link_fd(self->u, self->l[i], &id[i]), 0) TH_LOG("%s", strerror(errno));
	}
	ASSERT_EQ(asx_setwm(self->u, 0, ASX_SIDE_READ, 1000, 100), 0);
	ASSERT_EQ(asx_setwm(self->u, ASX_LEVEL_DRIVER, ASX_SIDE_READ, 1000, 100), 0);
	ASSERT_EQ(asx_setwm(self->u, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 1000, 100), 0);
	ASSERT_EQ(fcntl(self->u, F_SETFL, O_NONBLOCK), 0);
	/* to the first lower until everything up to the mux's writer is full */
	hdr.id = id[0];
	while (sent < 100000) {
		if (asx_putmsg(self->u, &hdr, sizeof(hdr), data, sizeof(data), 0, 0)) {
			if (errno == EAGAIN && ++tries < 20) {
				asx_msleep(20);
				continue;
			}
			break;
		}
		tries = 0;
		sent++;
	}
	ASSERT_EQ(errno, EAGAIN) TH_LOG("the mux writer is stopped after %d", sent);
	ASSERT_EQ(unlink_id(self->u, id[0]), 0);
	/* empty the upper's read side of what already came back */
	while (!asx_getmsg(self->u, ASX_IOC_GETMSG, &sm, &got, sizeof(got), data,
			   sizeof(data), 0, 0))
		;
	/* the second lower can be written to again, and answers */
	hdr.id = id[1];
	for (i = 0; i < 500 && ret; i++) {
		ret = asx_putmsg(self->u, &hdr, sizeof(hdr), "x", 1, 0, 0);
		if (ret)
			asx_msleep(10);
	}
	ASSERT_EQ(ret, 0) TH_LOG("a message to the other lower within 5 s: %s", strerror(errno));
	for (i = 0; i < 500; i++) {
		ret = asx_getmsg(self->u, ASX_IOC_GETMSG, &sm, &got, sizeof(got), data,
				 sizeof(data), 0, 0);
		if (!ret && got.id == id[1])
			break;
		if (ret)
			asx_msleep(10);
	}
	EXPECT_EQ(ret, 0) TH_LOG("its answer: %s", strerror(errno));
	EXPECT_EQ(got.id, id[1]);
}

/*
 * A pop kicks the queues left, the loop's write side among them: its service
 * procedure is scheduled. SETDRV right after it cancelled that run and left
 * the queue marked as scheduled, so the mux's write side was never served:
 * what was put on the mux stayed there, and no lower ever saw it. The run
 * is kept from starting by a real-time thread on the CPU its worker is
 * bound to, so every round hits the window.
 */
TEST_F(mux, setdrv_right_after_a_pop)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct asx_link lk = { .size = sizeof(lk) };
	struct asx_mux_hdr hdr = { 0 }, got;
	char data[16];
	struct asx_strmsg sm;
	cpu_set_t cpus;
	int round, u, l;

	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	ASSERT_EQ(sched_setaffinity(0, sizeof(cpus), &cpus), 0) TH_LOG("%s", strerror(errno));
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		SKIP(return, "SCHED_FIFO: %s (run as root)", strerror(errno));
	for (round = 0; round < 20; round++) {
		u = asx_open(0);
		l = asx_open(0);
		ASSERT_GE(u, 0);
		ASSERT_GE(l, 0);
		ASSERT_EQ(asx_push(u, "pass"), 0) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(asx_pop(u, NULL), 0) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(asx_setdrv(u, "mux"), 0) TH_LOG("%s", strerror(errno));
		lk.fd = l;
		lk.id = 0;
		ASSERT_EQ(ioctl(u, ASX_IOC_LINK, &lk), 0) TH_LOG("%s", strerror(errno));
		close(l);
		hdr.id = lk.id;
		ASSERT_EQ(asx_putmsg(u, &hdr, sizeof(hdr), "r", 1, 0, 0), 0)
			TH_LOG("%s", strerror(errno));
		ASSERT_GT(asx_poll1(u, POLLIN, 5000), 0)
			TH_LOG("round %d: nothing back through the mux in 5 s", round);
		ASSERT_EQ(asx_getmsg(u, ASX_IOC_GETMSG, &sm, &got, sizeof(got), data,
				     sizeof(data), 0, 0), 0)
			TH_LOG("%s", strerror(errno));
		EXPECT_EQ(got.id, lk.id);
		EXPECT_EQ(sm.data.len, 1);
		EXPECT_EQ(data[0], 'r');
		close(u);
	}
	sp.sched_priority = 0;
	sched_setscheduler(0, SCHED_OTHER, &sp);
}

TEST_F(mux, relink_while_unlinking)
{
	struct relinker r[2];
	pthread_t t[2];
	long before[2];
	char c;
	int i;

	ASSERT_EQ(asx_quiesce(), 0) TH_LOG("earlier Streams never freed");
	before[0] = asx_objects("streams");
	before[1] = asx_objects("modules");
	ASSERT_EQ(asx_setdrv(self->u, "mux"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_setdrv(self->l[1], "mux"), 0) TH_LOG("%s", strerror(errno));
	for (i = 0; i < 2; i++) {
		r[i] = (struct relinker){ .u = i ? self->l[1] : self->u, .l = self->l[0],
					  .rounds = 1000 };
		ASSERT_EQ(pthread_create(&t[i], NULL, relink_main, &r[i]), 0);
	}
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	TH_LOG("links %ld + %ld, refused as busy %ld + %ld", r[0].linked, r[1].linked,
	       r[0].busy, r[1].busy);
	EXPECT_EQ(r[0].errors + r[1].errors, 0);
	EXPECT_GT(r[0].linked, 0);
	EXPECT_GT(r[1].linked, 0);
	/* unlinked for good: the lower is a plain Stream again */
	ASSERT_EQ(write(self->l[0], "z", 1), 1) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(read(self->l[0], &c, 1), 1) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(c, 'z');
	close(self->l[0]);
	self->l[0] = -1;
	EXPECT_EQ(asx_quiesce(), 0);
	/* the fixture's three Streams are the only ones left, none twice freed */
	EXPECT_EQ(asx_objects("streams"), before[0] - 1);
	EXPECT_EQ(asx_objects("modules"), before[1]);
}

TEST_HARNESS_MAIN
