// SPDX-License-Identifier: GPL-2.0
/*
 * band_test.c - per-band flow control (SVR4's qband): each band 1..255 in
 * use on a queue has its own count, water marks, full flag and back-enable;
 * band 0 is the queue's own.  Checked through the XSI interface on a loop
 * Stream (what is written comes back up its read side) and on pipes:
 * a full band blocks only its own writers; I_CANPUT answers for the band
 * asked; POLLWRBAND and S_WRBAND follow the bands > 0 written to (poll(2),
 * streamio(7)); ASX_IOC_SETWM/GETWM with a band; hung-up and linked
 * Streams; writers on several bands with one reader, nothing lost and the
 * order of each band kept.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include <asx/stropts.h>

#include "asx_util.h"
#include "asx_harness.h"

#define BAND_HI		1000
#define BAND_LO		100
#define MSG_LEN		100

static int band_wm(int fd, unsigned int level, unsigned int side, unsigned int band,
		   uint64_t hi, uint64_t lo)
{
	struct asx_wm wm = { .size = sizeof(wm), .level = level, .side = side,
			     .hiwat = hi, .lowat = lo, .band = band };

	return ioctl(fd, ASX_IOC_SETWM, &wm);
}

static int band_getwm(int fd, unsigned int level, unsigned int side, unsigned int band,
		      uint64_t *hi, uint64_t *lo)
{
	struct asx_wm wm = { .size = sizeof(wm), .level = level, .side = side, .band = band };
	int r = ioctl(fd, ASX_IOC_GETWM, &wm);

	*hi = wm.hiwat;
	*lo = wm.lowat;
	return r;
}

/* Small marks for @band on the two queues a loop Stream's writes meet. */
static int small_marks(int fd, unsigned int band)
{
	if (band_wm(fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, band, BAND_HI, BAND_LO))
		return -1;
	return band_wm(fd, 0, ASX_SIDE_READ, band, BAND_HI, BAND_LO);
}

static int putb(int fd, int band, const void *data, int len)
{
	struct strbuf d = { 0, len, (char *)data };

	return putpmsg(fd, NULL, &d, band, MSG_BAND);
}

/* Writes @band without blocking until it is full; returns the messages written. */
static int fill_band(int fd, int band)
{
	char buf[MSG_LEN] = { 0 };
	int fl = fcntl(fd, F_GETFL), n = 0;

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (n < 10000 && putb(fd, band, buf, sizeof(buf)) == 0)
		n++;
	if (errno != EAGAIN)
		n = -1;
	fcntl(fd, F_SETFL, fl);
	return n;
}

/* Reads every message of band >= @band waiting at the head; returns how many. */
static int drain_band(int fd, int band)
{
	char buf[4096];
	struct strbuf d = { sizeof(buf), 0, buf };
	int fl = fcntl(fd, F_GETFL), n = 0, b, flags;

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	for (;;) {
		b = band;
		flags = MSG_BAND;
		if (getpmsg(fd, NULL, &d, &b, &flags) != 0)
			break;
		n++;
	}
	fcntl(fd, F_SETFL, fl);
	return n;
}

/*
 * Reads until @want messages came (those a driver queue still held follow
 * from its service procedure) or 20 s passed; returns how many.
 */
static int drain_until(int fd, int want)
{
	int n = 0, i;

	for (i = 0; i < 400 && n < want; i++) {
		n += drain_band(fd, 0);
		if (n < want)
			asx_msleep(50);
	}
	return n;
}

FIXTURE(band) {
	int fd;
};

FIXTURE_SETUP(band)
{
	self->fd = open(ASX_DEV, O_RDWR);
	ASSERT_GE(self->fd, 0) TH_LOG("open %s: %s", ASX_DEV, strerror(errno));
	ASSERT_EQ(small_marks(self->fd, 1), 0) TH_LOG("SETWM band 1: %s", strerror(errno));
}

FIXTURE_TEARDOWN(band)
{
	close(self->fd);
}

TEST_F(band, full_band_1_blocks_neither_band_0_nor_band_2)
{
	char buf[MSG_LEN] = { 0 };
	int n, st;
	pid_t pid;

	n = fill_band(self->fd, 1);
	ASSERT_GT(n, 0);
	EXPECT_LT(n, 40) TH_LOG("band 1 took %d messages of %d bytes under marks %d", n,
				MSG_LEN, BAND_HI);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 1), 0);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 0), 1);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 2), 1);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, ANYBAND), 1);
	/* blocking writers of bands 0 and 2 go through (a child: a hang fails) */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		alarm(20);
		_exit(putb(self->fd, 0, buf, sizeof(buf)) || putb(self->fd, 2, buf, sizeof(buf)) ||
		      write(self->fd, buf, sizeof(buf)) != sizeof(buf));
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("status %#x", st);
	EXPECT_EQ(ioctl(self->fd, I_CKBAND, 2), 1);
	EXPECT_EQ(ioctl(self->fd, I_CKBAND, 0), 1);
	EXPECT_EQ(ioctl(self->fd, I_CKBAND, 1), 1);
	EXPECT_EQ(ioctl(self->fd, I_CKBAND, 3), 0);
	/* band 1 still full; after the drain it takes messages again */
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 1), 0);
	EXPECT_EQ(drain_until(self->fd, n + 3), n + 3);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 1), 1);
	EXPECT_EQ(ioctl(self->fd, I_CKBAND, 1), 0);
}

TEST_F(band, blocked_band_1_writer_wakes_when_band_1_drains)
{
	char buf[MSG_LEN] = { 0 };
	int st, r;
	pid_t pid;

	ASSERT_GT(fill_band(self->fd, 1), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		alarm(30);
		_exit(putb(self->fd, 1, buf, sizeof(buf)) != 0);
	}
	asx_msleep(300);
	r = waitpid(pid, &st, WNOHANG);
	EXPECT_EQ(r, 0) TH_LOG("the band 1 writer did not block");
	/* band 0 traffic does not wake it into success: band 1 is still full */
	ASSERT_EQ(putb(self->fd, 0, buf, sizeof(buf)), 0);
	ASSERT_EQ(drain_band(self->fd, 0) > 0, 1);
	if (!r)
		ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("status %#x", st);
}

/* The conformance case of issue 31: POLLWRBAND reported band 0's state. */
TEST_F(band, pollwrband_false_while_the_only_band_in_use_is_full)
{
	short ev;

	ev = asx_poll1(self->fd, POLLOUT | POLLWRBAND, 0);
	EXPECT_EQ(ev & (POLLOUT | POLLWRBAND), POLLOUT | POLLWRBAND)
		TH_LOG("no band written: band 0's state");
	ASSERT_GT(fill_band(self->fd, 1), 0);
	ev = asx_poll1(self->fd, POLLOUT | POLLWRNORM | POLLWRBAND, 0);
	EXPECT_EQ(ev & POLLWRBAND, 0) TH_LOG("revents %#x", ev);
	EXPECT_EQ(ev & (POLLOUT | POLLWRNORM), POLLOUT | POLLWRNORM) TH_LOG("revents %#x", ev);
	EXPECT_GT(drain_band(self->fd, 0), 0);
	/* the back-enable may run after the read returns (a service procedure
	 * scheduled, a threaded one on PREEMPT_RT): wait for it, boundedly */
	ev = asx_poll1(self->fd, POLLWRBAND, 5000);
	EXPECT_EQ(ev & POLLWRBAND, POLLWRBAND) TH_LOG("revents %#x", ev);
}

TEST_F(band, poll_for_pollwrband_wakes_on_the_band_drain)
{
	pid_t pid;
	short ev;
	int st;

	ASSERT_GT(fill_band(self->fd, 1), 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		asx_msleep(300);
		_exit(drain_band(self->fd, 0) <= 0);
	}
	ev = asx_poll1(self->fd, POLLWRBAND, 20000);
	EXPECT_EQ(ev & POLLWRBAND, POLLWRBAND) TH_LOG("revents %#x", ev);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_EQ(st, 0);
}

TEST_F(band, s_wrband_on_back_enable_of_a_band)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGPOLL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ASSERT_GT(fill_band(self->fd, 1), 0);
	ASSERT_EQ(ioctl(self->fd, I_SETSIG, S_WRBAND), 0);
	EXPECT_FALSE(asx_got_signal(SIGPOLL, 300)) TH_LOG("still full");
	EXPECT_GT(drain_band(self->fd, 0), 0);
	EXPECT_TRUE(asx_got_signal(SIGPOLL, 10000)) TH_LOG("S_WRBAND");
	/* S_OUTPUT alone: a band > 0 draining is not band 0 having room again */
	ASSERT_EQ(ioctl(self->fd, I_SETSIG, S_OUTPUT), 0);
	ASSERT_GT(fill_band(self->fd, 1), 0);
	EXPECT_GT(drain_band(self->fd, 0), 0);
	EXPECT_FALSE(asx_got_signal(SIGPOLL, 500)) TH_LOG("S_OUTPUT for a band > 0");
}

TEST_F(band, water_marks_per_band)
{
	uint64_t hi, lo, hi0, lo0;
	int n1, n3;

	ASSERT_EQ(band_getwm(self->fd, 0, ASX_SIDE_READ, 1, &hi, &lo), 0);
	EXPECT_EQ(hi, BAND_HI);
	EXPECT_EQ(lo, BAND_LO);
	/* libasx's wrapper says the same */
	hi = lo = 0;
	ASSERT_EQ(ASX_ON_FD(self->fd, asx_kstream_get_band_water(ks_, 0, ASX_SIDE_READ, 1, &hi,
								  &lo)), 0);
	EXPECT_EQ(hi, BAND_HI);
	EXPECT_EQ(lo, BAND_LO);
	ASSERT_EQ(band_getwm(self->fd, 0, ASX_SIDE_READ, 0, &hi0, &lo0), 0);
	EXPECT_EQ(hi0, ASX_DEF_HIWAT) TH_LOG("band 0 keeps the queue's marks");
	ASSERT_EQ(band_getwm(self->fd, 0, ASX_SIDE_READ, 200, &hi, &lo), 0);
	EXPECT_EQ(hi, hi0) TH_LOG("a band without marks has the queue's");
	EXPECT_EQ(lo, lo0);
	/* band 3 three times band 1's: it holds about three times as much */
	ASSERT_EQ(band_wm(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 3, 3 * BAND_HI, BAND_LO),
		  0);
	ASSERT_EQ(band_wm(self->fd, 0, ASX_SIDE_READ, 3, 3 * BAND_HI, BAND_LO), 0);
	n1 = fill_band(self->fd, 1);
	n3 = fill_band(self->fd, 3);
	EXPECT_GT(n3, 2 * n1) TH_LOG("band 1 took %d, band 3 %d", n1, n3);
	/* limits */
	errno = 0;
	EXPECT_EQ(band_wm(self->fd, 0, ASX_SIDE_READ, 256, BAND_HI, BAND_LO), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(band_wm(self->fd, 0, ASX_SIDE_READ, 2, BAND_LO, BAND_HI), -1);
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	if (geteuid()) {
		EXPECT_EQ(band_wm(self->fd, 0, ASX_SIDE_READ, 2, ASX_MAX_HIWAT_USER + 1, 1), -1);
		EXPECT_EQ(errno, EPERM);
	} else {
		EXPECT_EQ(band_wm(self->fd, 0, ASX_SIDE_READ, 2, ASX_MAX_HIWAT_USER + 1, 1), 0);
	}
	EXPECT_EQ(band_wm(self->fd, 0, ASX_SIDE_READ, 255, BAND_HI, BAND_LO), 0)
		TH_LOG("the highest band: %s", strerror(errno));
}

TEST_F(band, lowering_a_band_mark_fills_it_and_raising_it_back_enables)
{
	char buf[MSG_LEN] = { 0 };
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(putb(self->fd, 1, buf, sizeof(buf)), 0);
	ASSERT_EQ(band_wm(self->fd, 0, ASX_SIDE_READ, 1, 200, 50), 0);
	ASSERT_EQ(band_wm(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 1, 200, 50), 0);
	EXPECT_GT(fill_band(self->fd, 1), -1);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 1), 0);
	ASSERT_EQ(band_wm(self->fd, 0, ASX_SIDE_READ, 1, 100000, 50000), 0);
	ASSERT_EQ(band_wm(self->fd, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 1, 100000, 50000), 0);
	for (i = 0; i < 100 && ioctl(self->fd, I_CANPUT, 1) != 1; i++)
		asx_msleep(50);
	EXPECT_EQ(ioctl(self->fd, I_CANPUT, 1), 1);
}

TEST(hung_up_pipe_end)
{
	int a, b;
	short ev;

	a = open(ASX_DEV, O_RDWR);
	ASSERT_GE(a, 0);
	b = asx_pipe(a, 0);
	ASSERT_GE(b, 0);
	ASSERT_EQ(band_wm(b, 0, ASX_SIDE_READ, 1, BAND_HI, BAND_LO), 0);
	ASSERT_EQ(band_wm(a, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 1, BAND_HI, BAND_LO), 0);
	ASSERT_GT(fill_band(a, 1), 0);
	EXPECT_EQ(ioctl(a, I_CANPUT, 1), 0);
	EXPECT_EQ(ioctl(a, I_CANPUT, 0), 1);
	ev = asx_poll1(a, POLLWRBAND, 0);
	EXPECT_EQ(ev & POLLWRBAND, 0);
	close(b);
	ev = asx_poll1(a, POLLOUT | POLLWRBAND, 0);
	EXPECT_EQ(ev & (POLLHUP | POLLOUT | POLLWRBAND), POLLHUP) TH_LOG("revents %#x", ev);
	errno = 0;
	EXPECT_EQ(putb(a, 1, "x", 1), -1);
	EXPECT_EQ(errno, ENXIO);
	EXPECT_EQ(putb(a, 2, "x", 1), -1);
	EXPECT_EQ(errno, ENXIO);
	close(a);
}

TEST(linked_lower)
{
	int u, l;
	short ev;

	u = open(ASX_DEV, O_RDWR);
	l = open(ASX_DEV, O_RDWR);
	ASSERT_GE(u, 0);
	ASSERT_GE(l, 0);
	ASSERT_EQ(asx_setdrv(u, "mux"), 0);
	ASSERT_GE(ioctl(u, I_LINK, l), 0) TH_LOG("I_LINK: %s", strerror(errno));
	errno = 0;
	EXPECT_EQ(ioctl(l, I_CANPUT, 1), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(putb(l, 1, "x", 1), -1);
	EXPECT_EQ(errno, EINVAL);
	ev = asx_poll1(l, POLLWRBAND, 0);
	EXPECT_EQ(ev & (POLLERR | POLLWRBAND), POLLERR) TH_LOG("revents %#x", ev);
	/* band marks are still readable on the lower, as GETWM is */
	close(u);
	close(l);
}

/*
 * Writers on bands 0, 1, 2 and 7 of one pipe end, one reader at the other,
 * small marks on every band: each message carries its band and sequence
 * number; nothing is lost, nothing duplicated, each band's order kept.
 */
#define CW_BANDS	4
#define CW_MSGS		3000

static const int cw_band[CW_BANDS] = { 0, 1, 2, 7 };

struct cw_writer {
	int fd;
	int band;
	int err;
};

static void *cw_write(void *arg)
{
	struct cw_writer *w = arg;
	unsigned int msg[8];
	int i;

	for (i = 0; i < CW_MSGS; i++) {
		msg[0] = (unsigned int)w->band;
		msg[1] = (unsigned int)i;
		if (putb(w->fd, w->band, msg, sizeof(msg))) {
			w->err = errno;
			break;
		}
	}
	return NULL;
}

TEST_TIMEOUT(writers_on_several_bands_one_reader, 240)
{
	struct cw_writer w[CW_BANDS];
	pthread_t t[CW_BANDS];
	unsigned int next[256] = { 0 }, msg[8];
	struct strbuf d = { sizeof(msg), 0, (char *)msg };
	long got = 0, bad = 0;
	int a, b, i, band, flags;

	a = open(ASX_DEV, O_RDWR);
	ASSERT_GE(a, 0);
	b = asx_pipe(a, 0);
	ASSERT_GE(b, 0);
	for (i = 0; i < CW_BANDS; i++) {
		ASSERT_EQ(band_wm(b, 0, ASX_SIDE_READ, cw_band[i], 512, 128), 0);
		ASSERT_EQ(band_wm(a, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, cw_band[i], 512, 128), 0);
	}
	for (i = 0; i < CW_BANDS; i++) {
		w[i] = (struct cw_writer){ .fd = a, .band = cw_band[i] };
		ASSERT_EQ(pthread_create(&t[i], NULL, cw_write, &w[i]), 0);
	}
	while (got < (long)CW_BANDS * CW_MSGS) {
		band = 0;
		flags = MSG_ANY;
		if (getpmsg(b, NULL, &d, &band, &flags) != 0)
			break;
		got++;
		if (d.len != sizeof(msg) || msg[0] != (unsigned int)band || band > 255 ||
		    msg[1] != next[band]) {
			if (!bad++)
				TH_LOG("band %d: message %u, expected %u (len %d)", band,
				       msg[1], next[band], d.len);
			continue;
		}
		next[band]++;
	}
	for (i = 0; i < CW_BANDS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(w[i].err, 0);
		EXPECT_EQ(next[cw_band[i]], CW_MSGS) TH_LOG("band %d", cw_band[i]);
	}
	EXPECT_EQ(got, (long)CW_BANDS * CW_MSGS);
	EXPECT_EQ(bad, 0);
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
