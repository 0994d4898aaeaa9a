// SPDX-License-Identifier: GPL-2.0
/*
 * tioctl_test.c - transparent ioctls: a request the Stream head does not
 * know goes down as M_IOCTL, the "tioc" module (kmod/mod_tioctl.c) copies
 * the caller's struct in with M_COPYIN, then the buffer it points to, copies
 * both back out with M_COPYOUT and acknowledges. Round trips of every size
 * up to ASX_MAX_TCOPY, bad user addresses (EFAULT, and the module frees its
 * state), a copy too long (ERANGE), the module's NAK (its errno), the
 * unknown requests that stay ENOTTY, a signal mid-exchange (EINTR; the
 * module gets an M_IOCDATA with an error when it goes on), an answer that
 * comes after the caller left, a hung-up Stream (ENXIO, before and during),
 * the timeout, concurrent callers on one Stream (one exchange at a time,
 * nothing lost or applied twice), all as nobody too; and after each test
 * every Stream, module instance and message is freed (/proc/asx/objects).
 */
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>

#include "asx_util.h"
#include "asx_harness.h"

#define NTHREADS	4
#define NCALLS		200

static void on_signal(int sig)
{
	(void)sig;
}

/* SIGUSR1 interrupts system calls (no SA_RESTART). */
static void install_sigusr1(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

/* A Stream (loop driver) with "tioc" pushed, or -1. */
static int tioc_stream(void)
{
	int fd = asx_open(0);

	if (fd >= 0 && asx_push(fd, "tioc")) {
		close(fd);
		return -1;
	}
	return fd;
}

static int tioc_stats(int fd, struct asx_tioc_stats *s)
{
	unsigned int len = 0;
	int r;

	memset(s, 0, sizeof(*s));
	r = asx_str(fd, ASX_STR_TIOC_STATS, s, 0, sizeof(*s), &len);
	if (!r && len != sizeof(*s)) {
		errno = EPROTO;
		return -1;
	}
	return r;
}

/* ASX_TIOC_XFORM of @len bytes at @buf with @key; the ioctl's result. */
static int xform(int fd, unsigned long req, void *buf, unsigned int len, unsigned int key,
		 struct asx_tioc_vec *v)
{
	memset(v, 0, sizeof(*v));
	v->buf = (uintptr_t)buf;
	v->len = len;
	v->key = key;
	v->sum = 0xdeadbeef;
	return ioctl(fd, req, v);
}

static unsigned int byte_sum(const unsigned char *p, size_t n)
{
	unsigned int s = 0;

	while (n--)
		s += *p++;
	return s;
}

/* The object counts a test must leave as it found them. */
struct objects {
	long streams, modules, msgs, dblks;
};

static int objects_now(struct objects *o)
{
	if (asx_quiesce())
		return -1;
	o->streams = asx_objects("streams");
	o->modules = asx_objects("modules");
	o->msgs = asx_objects("msgs");
	o->dblks = asx_objects("dblks");
	return o->msgs < 0 ? -1 : 0;
}

/* Waits (up to 5 s) for the counts to come back to @o: 0, or -1. */
static int objects_back(const struct objects *o)
{
	struct objects n = { 0 };
	int i;

	for (i = 0; i < 500; i++) {
		if (!objects_now(&n) && !memcmp(&n, o, sizeof(n)))
			return 0;
		asx_msleep(10);
	}
	fprintf(stderr, "# objects: streams %ld/%ld modules %ld/%ld msgs %ld/%ld dblks %ld/%ld\n",
		n.streams, o->streams, n.modules, o->modules, n.msgs, o->msgs, n.dblks, o->dblks);
	return -1;
}

FIXTURE(t) {
	int fd;
	struct objects before;
};

FIXTURE_SETUP(t)
{
	struct asx_version v = { .size = sizeof(v) };
	int fd;

	self->fd = -1;
	fd = asx_open(0);

	ASSERT_GE(fd, 0) TH_LOG("open %s: %s", ASX_DEV, strerror(errno));
	ASSERT_EQ(ioctl(fd, ASX_IOC_VERSION, &v), 0);
	close(fd);
	if (!(v.features & ASX_FEAT_TRANSPARENT))
		SKIP(return, "asx.ko without transparent ioctls");
	ASSERT_EQ(objects_now(&self->before), 0) TH_LOG("earlier Streams never freed");
	install_sigusr1();
	self->fd = tioc_stream();
	ASSERT_GE(self->fd, 0) TH_LOG("push tioc: %s", strerror(errno));
}

FIXTURE_TEARDOWN(t)
{
	if (self->fd < 0)
		return;
	close(self->fd);
	EXPECT_EQ(objects_back(&self->before), 0) TH_LOG("objects leaked");
}

/* Round trips; the struct's pointer followed; every size to ASX_MAX_TCOPY. */
static int round_trips(int fd)
{
	static const unsigned int sizes[] = { 0, 1, 7, 100, 4096, 4097, 65535, ASX_MAX_TCOPY };
	unsigned char *buf = malloc(ASX_MAX_TCOPY), *want = malloc(ASX_MAX_TCOPY);
	struct asx_tioc_vec v;
	unsigned int i, j, key;
	int r, bad = 0;

	if (!buf || !want)
		return -ENOMEM;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		key = 0x11 * (i + 1);
		for (j = 0; j < sizes[i]; j++)
			buf[j] = want[j] = (unsigned char)(j * 7 + i);
		r = xform(fd, ASX_TIOC_XFORM, buf, sizes[i], key, &v);
		if (r != (int)sizes[i] || v.sum != byte_sum(want, sizes[i]) || v.len != sizes[i]) {
			fprintf(stderr, "# size %u: ret %d (%s) sum %u want %u\n", sizes[i], r,
				strerror(errno), v.sum, byte_sum(want, sizes[i]));
			bad = -1;
			continue;
		}
		for (j = 0; j < sizes[i]; j++)
			if (buf[j] != (unsigned char)(want[j] ^ key)) {
				fprintf(stderr, "# size %u: byte %u\n", sizes[i], j);
				bad = -1;
				break;
			}
	}
	free(buf);
	free(want);
	return bad;
}

TEST_F(t, round_trip_with_a_pointer_in_the_struct)
{
	struct asx_tioc_stats s;

	ASSERT_EQ(round_trips(self->fd), 0);
	ASSERT_EQ(tioc_stats(self->fd, &s), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(s.ioctls, 8);
	EXPECT_EQ(s.copyins, 16);	/* the struct, then the buffer */
	EXPECT_EQ(s.copyouts, 16);	/* the buffer, then the struct */
	EXPECT_EQ(s.acks, 8);
	EXPECT_EQ(s.aborted, 0);
	EXPECT_EQ(s.open, 0);
}

/* What no module takes stays ioctl(2)'s unknown request. */
TEST_F(t, unknown_requests_are_enotty)
{
	struct termios tio;
	struct asx_tioc_vec v;
	char c = 0;
	int fd = asx_open(0);

	ASSERT_GE(fd, 0);
	/* no module: the driver refuses it as ENOTTY */
	errno = 0;
	EXPECT_EQ(xform(fd, ASX_TIOC_XFORM, &c, 1, 1, &v), -1);
	EXPECT_EQ(errno, ENOTTY);
	EXPECT_EQ(v.sum, 0xdeadbeef);
	errno = 0;
	EXPECT_EQ(tcgetattr(fd, &tio), -1);
	EXPECT_EQ(errno, ENOTTY);
	EXPECT_EQ(isatty(fd), 0);
	/* ASX's own type and the XSI 'S' type never go down */
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, _IO(ASX_IOC_MAGIC, 0x7f), 0), -1);
	EXPECT_EQ(errno, ENOTTY);
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, _IOWR('S', 0x7f, int), &c), -1);
	EXPECT_EQ(errno, ENOTTY);
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_XSI_SID | 0xff, 0), -1);
	EXPECT_EQ(errno, ENOTTY);
	/* the module passes what it does not know */
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, _IO(ASX_TIOC_MAGIC, 0x7f), 0), -1);
	EXPECT_EQ(errno, ENOTTY);
	/* the built-in modules' STR numbers are not their transparent ioctls */
	ASSERT_EQ(asx_push(fd, "count"), 0);
	ASSERT_EQ(asx_push(fd, "csum"), 0);
	ASSERT_EQ(asx_push(fd, "hold"), 0);
	ASSERT_EQ(asx_str(fd, ASX_STR_HOLD_RELEASE, NULL, 0, 0, NULL), 0);
	errno = 0;
	EXPECT_EQ(ioctl(fd, ASX_STR_HOLD_HOLD, 0), -1);
	EXPECT_EQ(errno, ENOTTY);
	errno = 0;
	EXPECT_EQ(ioctl(fd, ASX_STR_COUNT_RESET, 0), -1);
	EXPECT_EQ(errno, ENOTTY);
	errno = 0;
	EXPECT_EQ(ioctl(fd, ASX_STR_CSUM_GET, 0), -1);
	EXPECT_EQ(errno, ENOTTY);
	close(fd);
}

TEST_F(t, module_nak_is_its_errno)
{
	struct asx_tioc_stats s;

	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_TIOC_NAK, EPERM), -1);
	EXPECT_EQ(errno, EPERM);
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_TIOC_NAK, ENOSPC), -1);
	EXPECT_EQ(errno, ENOSPC);
	errno = 0;
	EXPECT_EQ(ioctl(self->fd, ASX_TIOC_NAK, 0), -1);	/* no errno: EINVAL */
	EXPECT_EQ(errno, EINVAL);
	ASSERT_EQ(tioc_stats(self->fd, &s), 0);
	EXPECT_EQ(s.naks, 3);
	EXPECT_EQ(s.open, 0);
}

/* Bad addresses: EFAULT at each step, the module told, its state freed. */
static int bad_addresses(int fd)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *ro, *buf = malloc(64);
	struct asx_tioc_vec v, *rov;
	int bad = 0;

	ro = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || !buf)
		return -1;
	memset(ro, 'r', pg);
	memset(buf, 'b', 64);
	/* the struct's address */
	errno = 0;
	if (ioctl(fd, ASX_TIOC_XFORM, NULL) != -1 || errno != EFAULT)
		bad = -1, fprintf(stderr, "# NULL arg: %s\n", strerror(errno));
	errno = 0;
	if (ioctl(fd, ASX_TIOC_XFORM, (void *)(uintptr_t)-4096L) != -1 || errno != EFAULT)
		bad = -2, fprintf(stderr, "# kernel arg: %s\n", strerror(errno));
	/* the pointer in it */
	errno = 0;
	if (xform(fd, ASX_TIOC_XFORM, (void *)8, 16, 1, &v) != -1 || errno != EFAULT)
		bad = -3, fprintf(stderr, "# bad buf: %s\n", strerror(errno));
	/* a buffer it can read but not write: copy-in works, copy-out faults */
	rov = (struct asx_tioc_vec *)(ro + pg);
	mprotect(ro, pg, PROT_READ);
	errno = 0;
	if (xform(fd, ASX_TIOC_XFORM, ro, 16, 1, &v) != -1 || errno != EFAULT || ro[0] != 'r')
		bad = -4, fprintf(stderr, "# ro buf: %s\n", strerror(errno));
	/* a struct it can read but not write back: the buffer is done, the struct faults */
	memset(rov, 0, sizeof(*rov));
	rov->buf = (uintptr_t)buf;
	rov->len = 64;
	rov->key = 1;
	mprotect(ro + pg, pg, PROT_READ);
	errno = 0;
	if (ioctl(fd, ASX_TIOC_XFORM, rov) != -1 || errno != EFAULT || buf[0] != ('b' ^ 1))
		bad = -5, fprintf(stderr, "# ro struct: %s\n", strerror(errno));
	munmap(ro, 2 * pg);
	free(buf);
	return bad;
}

TEST_F(t, bad_user_addresses_are_efault)
{
	struct asx_tioc_stats s;

	ASSERT_EQ(bad_addresses(self->fd), 0);
	ASSERT_EQ(tioc_stats(self->fd, &s), 0);
	EXPECT_EQ(s.ioctls, 5);
	EXPECT_EQ(s.aborted, 5);	/* each told by an M_IOCDATA with the error */
	EXPECT_EQ(s.acks, 0);
	EXPECT_EQ(s.open, 0);
	/* and the Stream still works */
	EXPECT_EQ(round_trips(self->fd), 0);
}

TEST_F(t, copy_longer_than_the_limit_is_erange)
{
	unsigned char *buf = calloc(1, ASX_MAX_TCOPY + 1);
	struct asx_tioc_stats s;
	struct asx_tioc_vec v;

	ASSERT_NE(buf, NULL);
	errno = 0;
	EXPECT_EQ(xform(self->fd, ASX_TIOC_XFORM, buf, ASX_MAX_TCOPY + 1, 1, &v), -1);
	EXPECT_EQ(errno, ERANGE);
	EXPECT_EQ(buf[0], 0);
	EXPECT_EQ(xform(self->fd, ASX_TIOC_XFORM, buf, ASX_MAX_TCOPY, 1, &v), ASX_MAX_TCOPY);
	EXPECT_EQ(buf[0], 1);
	ASSERT_EQ(tioc_stats(self->fd, &s), 0);
	EXPECT_EQ(s.aborted, 1);
	EXPECT_EQ(s.open, 0);
	free(buf);
}

struct caller {
	int fd;
	unsigned long req;
	unsigned char buf[32];
	struct asx_tioc_vec v;
	int ret, err;
	volatile int done;
};

static void *caller_fn(void *p)
{
	struct caller *c = p;

	c->ret = xform(c->fd, c->req, c->buf, sizeof(c->buf), 0x5a, &c->v);
	c->err = errno;
	__atomic_store_n(&c->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * @c's call in a thread of its own, signalled every 100 ms from 200 ms on
 * until it returns (a signal that comes before the call is lost): 0 when it
 * failed with EINTR.
 */
static int interrupted_call(struct caller *c)
{
	pthread_t t;
	int i;

	if (pthread_create(&t, NULL, caller_fn, c))
		return -1;
	asx_msleep(200);
	for (i = 0; i < 600 && !__atomic_load_n(&c->done, __ATOMIC_SEQ_CST); i++) {
		pthread_kill(t, SIGUSR1);
		asx_msleep(100);
	}
	pthread_join(t, NULL);
	if (c->ret != -1 || c->err != EINTR) {
		fprintf(stderr, "# call: %d (%s), not EINTR\n", c->ret, strerror(c->err));
		return -1;
	}
	return 0;
}

/* The module holds the exchange until data passes it: the stall, undone. */
TEST_F(t, stalled_exchange_goes_on_when_data_passes)
{
	struct caller c = { .fd = self->fd, .req = ASX_TIOC_STALL };
	struct asx_tioc_stats s;
	pthread_t t;
	char x = 'x';

	memset(c.buf, 1, sizeof(c.buf));
	ASSERT_EQ(pthread_create(&t, NULL, caller_fn, &c), 0);
	asx_msleep(300);
	EXPECT_EQ(c.done, 0);
	EXPECT_EQ(write(self->fd, &x, 1), 1);
	pthread_join(t, NULL);
	EXPECT_EQ(c.ret, (int)sizeof(c.buf)) TH_LOG("%s", strerror(c.err));
	EXPECT_EQ(c.buf[0], 1 ^ 0x5a);
	EXPECT_EQ(c.v.sum, sizeof(c.buf));
	ASSERT_EQ(tioc_stats(self->fd, &s), 0);
	EXPECT_EQ(s.acks, 1);
	EXPECT_EQ(s.open, 0);
}

/*
 * A signal while the module holds the exchange: EINTR at once; when the
 * module goes on, its M_COPYIN finds no caller and is answered with an
 * M_IOCDATA with the error, and it frees its state. The buffer is untouched.
 */
TEST_F(t, signal_mid_exchange)
{
	struct caller c = { .fd = self->fd, .req = ASX_TIOC_STALL };
	struct asx_tioc_stats s;
	char x = 'x';
	int i;

	memset(c.buf, 1, sizeof(c.buf));
	ASSERT_EQ(interrupted_call(&c), 0);
	ASSERT_EQ(tioc_stats(self->fd, &s), 0);
	EXPECT_EQ(s.open, 1);		/* held by the module */
	EXPECT_EQ(write(self->fd, &x, 1), 1);
	for (i = 0; i < 100 && !tioc_stats(self->fd, &s) && s.open; i++)
		asx_msleep(10);
	EXPECT_EQ(s.open, 0);
	EXPECT_EQ(s.aborted, 1);
	EXPECT_EQ(s.acks, 0);
	EXPECT_EQ(c.buf[0], 1);
	EXPECT_EQ(round_trips(self->fd), 0);
}

/*
 * The caller leaves (a signal) before the module sees the ioctl ("hold"
 * above it holds it); when hold lets it through the module's M_COPYIN is
 * refused with an M_IOCDATA error, and the next STR is not confused by it.
 */
TEST_F(t, answer_after_the_caller_left)
{
	struct caller c = { .fd = self->fd, .req = ASX_TIOC_XFORM };
	struct asx_tioc_stats s;
	int i;

	ASSERT_EQ(asx_push(self->fd, "hold"), 0);
	ASSERT_EQ(interrupted_call(&c), 0);
	ASSERT_EQ(asx_str(self->fd, ASX_STR_HOLD_RELEASE, NULL, 0, 0, NULL), 0)
		TH_LOG("%s", strerror(errno));
	for (i = 0; i < 100 && !tioc_stats(self->fd, &s) && s.aborted != 1; i++)
		asx_msleep(10);
	EXPECT_EQ(s.ioctls, 1);
	EXPECT_EQ(s.aborted, 1);
	EXPECT_EQ(s.open, 0);
	EXPECT_EQ(round_trips(self->fd), 0);
}

/* No answer within ASX_TIOC_TIMEOUT (15 s): ETIME. */
TEST_F_TIMEOUT(t, timeout, 60)
{
	struct asx_tioc_vec v;
	char b = 0;

	ASSERT_EQ(asx_push(self->fd, "hold"), 0);
	errno = 0;
	EXPECT_EQ(xform(self->fd, ASX_TIOC_XFORM, &b, 1, 1, &v), -1);
	EXPECT_EQ(errno, ETIME);
}

/* A hung-up Stream: ENXIO before the exchange, and during it. */
TEST_F(t, hung_up)
{
	struct caller c = { .req = ASX_TIOC_STALL };
	struct asx_tioc_vec v;
	pthread_t t;
	char b = 0;
	int a, z;

	a = asx_open(0);
	ASSERT_GE(a, 0);
	z = asx_pipe(a, 0);
	ASSERT_GE(z, 0);
	ASSERT_EQ(asx_push(a, "tioc"), 0);
	EXPECT_EQ(xform(a, ASX_TIOC_XFORM, &b, 1, 1, &v), 1);
	c.fd = a;
	ASSERT_EQ(pthread_create(&t, NULL, caller_fn, &c), 0);
	asx_msleep(300);
	close(z);
	pthread_join(t, NULL);
	EXPECT_EQ(c.ret, -1);
	EXPECT_EQ(c.err, ENXIO);
	errno = 0;
	EXPECT_EQ(xform(a, ASX_TIOC_XFORM, &b, 1, 1, &v), -1);
	EXPECT_EQ(errno, ENXIO);
	close(a);	/* the module frees what it held */
}

struct racer {
	int fd, id, bad;
	long acks;
};

static void *racer_fn(void *p)
{
	struct racer *r = p;
	unsigned char buf[200], want[200];
	struct asx_tioc_vec v;
	unsigned int j, len, key;
	int i;

	for (i = 0; i < NCALLS; i++) {
		len = 1 + (unsigned int)(i * 37 + r->id * 11) % sizeof(buf);
		key = (unsigned int)(r->id * 16 + i) & 0xff;
		for (j = 0; j < len; j++)
			buf[j] = want[j] = (unsigned char)(r->id + i + j);
		if (xform(r->fd, ASX_TIOC_XFORM, buf, len, key, &v) != (int)len ||
		    v.sum != byte_sum(want, len)) {
			r->bad++;
			continue;
		}
		for (j = 0; j < len; j++)
			if (buf[j] != (want[j] ^ key)) {
				r->bad++;
				break;
			}
		r->acks++;
	}
	return NULL;
}

/* Callers on one Stream: one exchange at a time, each applied exactly once. */
static int race(int fd, long *acks)
{
	struct racer r[NTHREADS];
	pthread_t t[NTHREADS];
	int i, bad = 0;

	*acks = 0;
	for (i = 0; i < NTHREADS; i++) {
		r[i] = (struct racer){ .fd = fd, .id = i };
		if (pthread_create(&t[i], NULL, racer_fn, &r[i]))
			return -1;
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		bad += r[i].bad;
		*acks += r[i].acks;
	}
	return bad;
}

TEST_F_TIMEOUT(t, concurrent_callers_serialised, 120)
{
	struct asx_tioc_stats s;
	long acks;

	EXPECT_EQ(race(self->fd, &acks), 0);
	EXPECT_EQ(acks, NTHREADS * NCALLS);
	ASSERT_EQ(tioc_stats(self->fd, &s), 0);
	EXPECT_EQ(s.ioctls, NTHREADS * NCALLS);
	EXPECT_EQ(s.acks, NTHREADS * NCALLS);
	EXPECT_EQ(s.peak, 1);		/* never two exchanges at once */
	EXPECT_EQ(s.open, 0);
}

/* The same as nobody: nothing here needs a privilege. */
TEST_F_TIMEOUT(t, as_nobody, 120)
{
	int status, fd, code = 0;
	long acks;
	pid_t pid;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(10);
		fd = tioc_stream();
		if (fd < 0)
			_exit(11);
		if (round_trips(fd))
			code = 12;
		else if (bad_addresses(fd))
			code = 13;
		else if (ioctl(fd, ASX_TIOC_NAK, EACCES) != -1 || errno != EACCES)
			code = 14;
		else if (race(fd, &acks) || acks != NTHREADS * NCALLS)
			code = 15;
		close(fd);
		_exit(code);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("nobody: status %#x (10+: the step that failed)", status);
}

TEST_HARNESS_MAIN
