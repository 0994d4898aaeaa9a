// SPDX-License-Identifier: GPL-2.0
/*
 * drvreg_test.c - drivers registered by other kernel modules: the example
 * module kmod/test/asx_upper.ko registers the driver "upper" (an echo that
 * upper-cases) through asx_register_driver(). Load it, choose it by name
 * with SETDRV (as root and as nobody), put data through it and get it back
 * in order, see it in /proc/asx/modules, autopush onto it; check that the
 * module does not unload and the driver does not unregister while a Stream
 * has it, that both do once it is closed, that a taken name is refused, and
 * that loading and unloading many times leaves no reference or object.
 */
#include <grp.h>
#include <pthread.h>
#include <sys/wait.h>

#include "asx_util.h"
#include "asx_harness.h"
#include "ko_util.h"

#define UPPER_KO	"asx_upper.ko"
#define UPPER		"asx_upper"
#define UPPER_PARAMS	"/sys/module/asx_upper/parameters/"
#define UPPER_GETCOUNT	(('U' << 8) | 1)	/* asx_upper.c's STR command */
#define MODULES		"/proc/asx/modules"

/* Writes @val to asx_upper's parameter @param: 0, or -1 with errno. */
static int set_param(const char *param, const char *val)
{
	char path[128];
	int fd, r, e;

	snprintf(path, sizeof(path), UPPER_PARAMS "%s", param);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
	e = errno;
	close(fd);
	errno = e;
	return r;
}

/* "registered" = 0, retried for up to 30 s while closed Streams are freed. */
static int unregister_settled(void)
{
	int i;

	for (i = 0; i < 3000; i++) {
		if (!set_param("registered", "0"))
			return 0;
		if (errno != EBUSY)
			return -1;
		asx_msleep(10);
	}
	return -1;
}

static int loaded(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return !access(path, F_OK);
}

/* The driver of @fd's Stream into @drv, its module count returned (-1: error). */
static int driver_of(int fd, char *drv)
{
	char names[ASX_MAX_DEPTH][ASX_NAME_MAX];

	return asx_list(fd, names, ASX_MAX_DEPTH, drv);
}

/* The STR UPPER_GETCOUNT answer: the bytes the driver echoed on @fd's Stream. */
static int echoed(int fd)
{
	struct asx_strioctl s = { .size = sizeof(s), .cmd = UPPER_GETCOUNT };

	if (ioctl(fd, ASX_IOC_STR, &s))
		return -1;
	return s.rval;
}

/* Writes @in to @fd and reads it back; 0 if it came back as @want. */
static int echo(int fd, const char *in, const char *want)
{
	char buf[256] = "";
	size_t n = strlen(in);

	if (write(fd, in, n) != (ssize_t)n)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) != (ssize_t)strlen(want))
		return -1;
	return strcmp(buf, want) ? -1 : 0;
}

/* An upper Stream: open, SETDRV "upper"; the fd, or -1. */
static int open_upper(int flags)
{
	int fd = asx_open(flags);

	if (fd >= 0 && asx_setdrv(fd, "upper")) {
		close(fd);
		return -1;
	}
	return fd;
}

/* SETDRV @name on a new Stream: 0, or its errno (-1: no Stream). */
static int setdrv_errno(const char *name)
{
	int fd = asx_open(0), e = 0;

	if (fd < 0)
		return -1;
	if (asx_setdrv(fd, name))
		e = errno;
	close(fd);
	return e;
}

static int autopush(unsigned int cmd, const char *drv, unsigned int count,
		    const char *const *mods)
{
	struct asx_autopush a = { .size = sizeof(a), .cmd = cmd, .count = count };
	unsigned int i;
	int fd, r, e;

	snprintf(a.driver, sizeof(a.driver), "%s", drv);
	for (i = 0; i < count; i++)
		snprintf(a.modules[i], sizeof(a.modules[i]), "%s", mods[i]);
	fd = asx_open(0);
	if (fd < 0)
		return -1;
	r = ioctl(fd, ASX_IOC_AUTOPUSH, &a);
	e = errno;
	close(fd);
	errno = e;
	return r;
}

FIXTURE(upper) {
	int fd;
};

FIXTURE_SETUP(upper)
{
	self->fd = -1;
	ASSERT_EQ(asx_quiesce(), 0);
	if (loaded(UPPER))	/* a failed test's */
		ASSERT_EQ(asx_ko_unload_settled(UPPER), 0);
	ASSERT_EQ(asx_ko_load(UPPER_KO, ""), 0)
		TH_LOG("load %s: %s (run make kmod)", UPPER_KO, strerror(errno));
}

FIXTURE_TEARDOWN(upper)
{
	if (self->fd >= 0)
		close(self->fd);
	autopush(ASX_AP_CLEAR, "upper", 0, NULL);
	if (loaded(UPPER))
		EXPECT_EQ(asx_ko_unload_settled(UPPER), 0) TH_LOG("%s", strerror(errno));
}

TEST_F(upper, listed_chosen_by_name_and_echoes)
{
	struct asx_version v = { .size = sizeof(v) };
	char drv[ASX_NAME_MAX];

	EXPECT_TRUE(asx_proc_has(MODULES, "driver upper asx_upper 0"));
	EXPECT_TRUE(asx_proc_has(MODULES, "driver loop"));
	self->fd = asx_open(0);
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(ioctl(self->fd, ASX_IOC_VERSION, &v), 0);
	EXPECT_TRUE(v.features & ASX_FEAT_DRVREG);
	ASSERT_EQ(asx_setdrv(self->fd, "upper"), 0) TH_LOG("%s", strerror(errno));
	EXPECT_TRUE(asx_proc_has(MODULES, "driver upper asx_upper 1"));
	ASSERT_EQ(driver_of(self->fd, drv), 0);
	EXPECT_STREQ(drv, "upper");
	EXPECT_EQ(echo(self->fd, "Hello, World", "HELLO, WORLD"), 0);
	EXPECT_EQ(echoed(self->fd), 12);
	/* a Stream with a driver is given no other */
	errno = 0;
	EXPECT_EQ(asx_setdrv(self->fd, "null"), -1);
	EXPECT_EQ(errno, EBUSY);
	EXPECT_EQ(asx_setdrv(self->fd, "upper"), -1);
	/* modules above it work as above any driver */
	ASSERT_EQ(asx_push(self->fd, "pass"), 0);
	EXPECT_EQ(echo(self->fd, "abc", "ABC"), 0);
	EXPECT_EQ(echoed(self->fd), 15) TH_LOG("through pass");
	ASSERT_EQ(asx_pop(self->fd, "pass"), 0);
	/* an unknown name is still ENOENT */
	EXPECT_EQ(setdrv_errno("uppe"), ENOENT);
}

/* Flow control through the driver: nothing lost, nothing duplicated, in order. */
TEST_F(upper, flow_control_keeps_order)
{
	char msg[1000], buf[1000];
	long wrote = 0, got = 0, i, n;
	ssize_t r;

	self->fd = open_upper(O_NONBLOCK);
	ASSERT_GE(self->fd, 0) TH_LOG("%s", strerror(errno));
	for (n = 0; n < 100000; n++) {
		memset(msg, 'a' + n % 26, sizeof(msg));
		if (write(self->fd, msg, sizeof(msg)) != sizeof(msg))
			break;
		wrote++;
	}
	EXPECT_EQ(errno, EAGAIN);
	ASSERT_GT(wrote, 64) TH_LOG("the head's 64 KiB and the driver's queue");
	ASSERT_LT(wrote, 100000) TH_LOG("no flow control");
	while (got < wrote) {
		r = read(self->fd, buf, sizeof(buf));
		if (r < 0 && errno == EAGAIN) {
			ASSERT_NE(asx_poll1(self->fd, POLLIN, 20000), 0)
				TH_LOG("stuck after %ld of %ld: no back-enable", got, wrote);
			continue;
		}
		ASSERT_EQ(r, (ssize_t)sizeof(buf));
		for (i = 0; i < r; i++)
			ASSERT_EQ(buf[i], 'A' + got % 26) TH_LOG("message %ld", got);
		got++;
	}
	EXPECT_EQ(read(self->fd, buf, sizeof(buf)), -1);
	EXPECT_EQ(echoed(self->fd), wrote * 1000);
}

TEST_F(upper, unload_refused_while_open_then_after_close)
{
	long asx_refs = asx_module_refcnt();

	self->fd = open_upper(0);
	ASSERT_GE(self->fd, 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(asx_refcnt_of(UPPER), 1);
	errno = 0;
	EXPECT_EQ(asx_ko_unload(UPPER), -1) TH_LOG("unloaded under an open Stream");
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY) TH_LOG("errno %d", errno);
	EXPECT_EQ(echo(self->fd, "still here", "STILL HERE"), 0);
	ASSERT_EQ(write(self->fd, "left queued", 11), 11);
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(asx_ko_unload_settled(UPPER), 0) TH_LOG("still busy: %s", strerror(errno));
	EXPECT_FALSE(asx_proc_has(MODULES, "driver upper asx_upper 0"));
	EXPECT_EQ(asx_settle_refcnt(asx_refs - 1), asx_refs - 1) TH_LOG("asx.ko's references");
	EXPECT_EQ(setdrv_errno("upper"), ENOENT);
}

/* asx_unregister_driver() refuses with EBUSY while a Stream has the driver. */
TEST_F(upper, unregister_refused_while_open)
{
	int other;

	self->fd = open_upper(0);
	ASSERT_GE(self->fd, 0) TH_LOG("%s", strerror(errno));
	errno = 0;
	EXPECT_EQ(set_param("registered", "0"), -1);
	EXPECT_EQ(errno, EBUSY);
	EXPECT_TRUE(asx_proc_has(MODULES, "driver upper asx_upper 1"));
	other = open_upper(0);
	EXPECT_GE(other, 0) TH_LOG("the name is still registered");
	if (other >= 0)
		close(other);
	EXPECT_EQ(echo(self->fd, "x", "X"), 0);
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(unregister_settled(), 0) TH_LOG("%s", strerror(errno));
	EXPECT_FALSE(asx_proc_has(MODULES, "driver upper asx_upper 0"));
	EXPECT_EQ(setdrv_errno("upper"), ENOENT);
	ASSERT_EQ(set_param("registered", "1"), 0) TH_LOG("%s", strerror(errno));
	self->fd = open_upper(0);
	ASSERT_GE(self->fd, 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(echo(self->fd, "back", "BACK"), 0);
}

/* A failed open leaves the Stream a loop and the driver unpinned. */
TEST_F(upper, open_refused_leaves_a_loop)
{
	char drv[ASX_NAME_MAX];

	ASSERT_EQ(set_param("refuse_open", "1"), 0);
	self->fd = asx_open(0);
	ASSERT_GE(self->fd, 0);
	errno = 0;
	EXPECT_EQ(asx_setdrv(self->fd, "upper"), -1);
	EXPECT_EQ(errno, ENXIO);
	ASSERT_EQ(driver_of(self->fd, drv), 0);
	EXPECT_STREQ(drv, "loop");
	EXPECT_EQ(echo(self->fd, "as is", "as is"), 0);
	EXPECT_EQ(asx_refcnt_of(UPPER), 0);
	EXPECT_TRUE(asx_proc_has(MODULES, "driver upper asx_upper 0"));
	ASSERT_EQ(set_param("refuse_open", "0"), 0);
	close(self->fd);
	self->fd = open_upper(0);
	EXPECT_GE(self->fd, 0) TH_LOG("%s", strerror(errno));
}

/* Root sets an autopush list for "upper"; nobody's Streams get it at SETDRV. */
TEST_F(upper, autopush_onto_it_as_nobody)
{
	static const char *const mods[] = { "count", "pass" };
	pid_t pid;
	int status;

	ASSERT_EQ(autopush(ASX_AP_SET, "upper", 2, mods), 0) TH_LOG("%s", strerror(errno));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char names[ASX_MAX_DEPTH][ASX_NAME_MAX], drv[ASX_NAME_MAX];
		int fd;

		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(10);
		fd = open_upper(0);
		if (fd < 0)
			_exit(1);
		/* pushed first to last: listed top first */
		if (asx_list(fd, names, ASX_MAX_DEPTH, drv) != 2 || strcmp(names[0], "pass") ||
		    strcmp(names[1], "count") || strcmp(drv, "upper"))
			_exit(2);
		if (echo(fd, "nobody", "NOBODY"))
			_exit(3);
		/* nobody may not unregister it, nor unload it */
		if (set_param("registered", "0") != -1 || errno != EACCES)
			_exit(4);
		if (asx_ko_unload(UPPER) != -1 || errno != EPERM)
			_exit(5);
		if (autopush(ASX_AP_CLEAR, "upper", 0, NULL) != -1 || errno != EPERM)
			_exit(6);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("nobody: exit %d", WEXITSTATUS(status));
	ASSERT_EQ(autopush(ASX_AP_CLEAR, "upper", 0, NULL), 0);
	/* no list for a name no driver has */
	ASSERT_EQ(unregister_settled(), 0);
	errno = 0;
	EXPECT_EQ(autopush(ASX_AP_SET, "upper", 2, mods), -1);
	EXPECT_EQ(errno, ENOENT);
	ASSERT_EQ(set_param("registered", "1"), 0);
}

/* One namespace with the built-in drivers and the mux's units, and no name twice. */
TEST_F(upper, taken_names_refused)
{
	/* mux.7: a unit of the mux driver (persistent links) */
	static const char *const taken[] = { "name=loop", "name=null", "name=mux", "name=pipe",
					     "name=mux.7", "twice=1" };
	char params[64];
	unsigned int i;

	ASSERT_EQ(asx_ko_unload_settled(UPPER), 0);
	for (i = 0; i < sizeof(taken) / sizeof(taken[0]); i++) {
		ASSERT_FALSE(loaded(UPPER));
		errno = 0;
		EXPECT_EQ(asx_ko_load(UPPER_KO, taken[i]), -1) TH_LOG("%s loaded", taken[i]);
		EXPECT_EQ(errno, EEXIST) TH_LOG("%s", taken[i]);
	}
	snprintf(params, sizeof(params), "name=%0*d", ASX_NAME_MAX, 0);
	errno = 0;
	EXPECT_EQ(asx_ko_load(UPPER_KO, params), -1);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_TRUE(asx_proc_has(MODULES, "driver loop"));
	EXPECT_FALSE(asx_proc_has(MODULES, "driver loop asx_upper 0"));
	ASSERT_EQ(asx_ko_load(UPPER_KO, "name=shout"), 0) TH_LOG("%s", strerror(errno));
	EXPECT_TRUE(asx_proc_has(MODULES, "driver shout asx_upper 0"));
	self->fd = asx_open(0);
	ASSERT_GE(self->fd, 0);
	EXPECT_EQ(asx_setdrv(self->fd, "shout"), 0) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(echo(self->fd, "hey", "HEY"), 0);
}

/* Load, use, close, unload, many times: no reference, Stream or message left. */
TEST_F(upper, load_unload_loop)
{
	long asx_refs, streams, msgs, dblks;
	int i, a, b;

	ASSERT_EQ(asx_ko_unload_settled(UPPER), 0);
	ASSERT_EQ(asx_quiesce(), 0);
	asx_refs = asx_module_refcnt();
	streams = asx_objects("streams");
	msgs = asx_objects("msgs");
	dblks = asx_objects("dblks");
	for (i = 0; i < 40; i++) {
		ASSERT_EQ(asx_ko_load(UPPER_KO, ""), 0) TH_LOG("round %d: %s", i, strerror(errno));
		a = open_upper(0);
		b = open_upper(O_NONBLOCK);
		ASSERT_GE(a, 0);
		ASSERT_GE(b, 0);
		EXPECT_EQ(asx_refcnt_of(UPPER), 2);
		EXPECT_EQ(echo(a, "round", "ROUND"), 0);
		/* b's message is still queued at its head when it closes */
		ASSERT_EQ(write(b, "unread", 6), 6);
		close(a);
		close(b);
		ASSERT_EQ(asx_ko_unload_settled(UPPER), 0) TH_LOG("round %d: %s", i, strerror(errno));
	}
	EXPECT_EQ(asx_settle_refcnt(asx_refs), asx_refs);
	ASSERT_EQ(asx_quiesce(), 0);
	EXPECT_EQ(asx_objects("streams"), streams);
	EXPECT_EQ(asx_objects("msgs"), msgs);
	EXPECT_EQ(asx_objects("dblks"), dblks);
}

struct racer {
	int stop;
	long opened, refused, bad;
};

/* Opens upper Streams and echoes through each until told to stop. */
static void *racer_fn(void *arg)
{
	struct racer *r = arg;
	int fd;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		fd = asx_open(0);
		if (fd < 0) {
			r->bad++;
			continue;
		}
		if (!asx_setdrv(fd, "upper")) {
			r->opened++;
			/* what got the driver keeps it whatever the unregisterer does */
			if (echo(fd, "race", "RACE"))
				r->bad++;
		} else if (errno == ENOENT) {
			r->refused++;
		} else {
			r->bad++;
		}
		close(fd);
	}
	return NULL;
}

/*
 * SETDRV from 3 threads against unregistering and registering the driver
 * in a loop: each SETDRV gets a working driver or ENOENT, an unregistering
 * is refused (EBUSY) or takes the name away, and nothing is left over.
 */
TEST_F(upper, setdrv_races_unregister)
{
	struct racer r[3] = { 0 };
	pthread_t t[3];
	long flips = 0, busy = 0, opened = 0, refused = 0;
	int i, k;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, racer_fn, &r[i]), 0);
	for (k = 0; k < 400; k++) {
		if (!set_param("registered", "0")) {
			flips++;
			asx_msleep(1);	/* a window for ENOENT */
			ASSERT_EQ(set_param("registered", "1"), 0) TH_LOG("%s", strerror(errno));
		} else {
			EXPECT_EQ(errno, EBUSY);
			busy++;
		}
	}
	for (i = 0; i < 3; i++) {
		__atomic_store_n(&r[i].stop, 1, __ATOMIC_RELEASE);
		pthread_join(t[i], NULL);
		EXPECT_EQ(r[i].bad, 0) TH_LOG("thread %d", i);
		opened += r[i].opened;
		refused += r[i].refused;
	}
	TH_LOG("%ld unregistered, %ld refused busy; %ld SETDRV got it, %ld ENOENT", flips, busy,
	       opened, refused);
	EXPECT_GT(opened, 0);
	EXPECT_GT(flips + busy, 0);
	EXPECT_EQ(unregister_settled(), 0) TH_LOG("users left: %s", strerror(errno));
	EXPECT_EQ(set_param("registered", "1"), 0);
	EXPECT_TRUE(asx_proc_has(MODULES, "driver upper asx_upper 0"));
}

TEST_HARNESS_MAIN
