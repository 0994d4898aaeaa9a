/* SPDX-License-Identifier: GPL-2.0 */
/*
 * asx_util.h - helpers shared by the ASX Stream selftests: opening Streams,
 * the size-first ioctls (over libasx's asx_kstream_* wrappers), the
 * live-object counts of /proc/asx/objects, and the system-wide count of
 * activation members.
 */
#ifndef ASX_SELFTEST_UTIL_H
#define ASX_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/asx.h>
#include <asx/kstream.h>

#define ASX_DEV		ASX_KSTREAM_DEV
#define ASX_OBJECTS	"/proc/asx/objects"

/*
 * The helpers below keep the selftests' convention (-1 and errno, as the
 * ioctls they test) over libasx's asx_kstream_* wrappers (0 or -errno):
 * the ioctls are written once, in lib/src/kstream/kstream.c.
 */

/* A libasx result as a system call's: -1 and errno for -errno. */
static inline int asx_sysret(int r)
{
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}

/*
 * Runs EXPR with ks_ a borrowed handle for @fd (left open); the result as
 * a system call's.
 */
#define ASX_ON_FD(fd, EXPR) ({							\
	struct asx_kstream *ks_;						\
	int r_ = asx_kstream_attach(&ks_, (fd), false);				\
	if (!r_) {								\
		r_ = (EXPR);							\
		asx_kstream_detach(ks_);					\
	}									\
	asx_sysret(r_);								\
})

/* A new Stream's descriptor (O_NONBLOCK the only flag), or -1. */
static inline int asx_open(int flags)
{
	struct asx_kstream *ks;
	int r = asx_kstream_open(&ks, NULL, (flags & O_NONBLOCK) ? ASX_KSTREAM_NONBLOCK : 0);

	return asx_sysret(r ? r : asx_kstream_detach(ks));
}

static inline int asx_push(int fd, const char *name)
{
	return ASX_ON_FD(fd, asx_kstream_push(ks_, name));
}

static inline int asx_pop(int fd, const char *name)
{
	return ASX_ON_FD(fd, asx_kstream_pop(ks_, name));
}

static inline int asx_setdrv(int fd, const char *name)
{
	return ASX_ON_FD(fd, asx_kstream_set_driver(ks_, name));
}

/* Fills names (count entries); returns the depth or -1. */
static inline int asx_list(int fd, char (*names)[ASX_NAME_MAX], unsigned int count, char *driver)
{
	return ASX_ON_FD(fd, asx_kstream_list(ks_, names, count, driver));
}

static inline int asx_putmsg(int fd, const void *ctl, int clen, const void *data, int dlen,
			     unsigned int flags, unsigned int band)
{
	struct asx_kstream_part c = { (void *)ctl, 0, clen }, d = { (void *)data, 0, dlen };

	return ASX_ON_FD(fd, asx_kstream_putmsg(ks_, &c, &d, flags, band));
}

/* GETMSG (or PEEK) into the buffers; the result is in *sm. */
static inline int asx_getmsg(int fd, unsigned long cmd, struct asx_strmsg *sm, void *ctl,
			     unsigned int cmax, void *data, unsigned int dmax, unsigned int flags,
			     unsigned int band)
{
	struct asx_kstream_part c = { ctl, cmax, -1 }, d = { data, dmax, -1 };
	int r;

	memset(sm, 0, sizeof(*sm));
	sm->size = sizeof(*sm);
	r = ASX_ON_FD(fd, cmd == ASX_IOC_PEEK ? asx_kstream_peek(ks_, &c, &d, &flags, &band)
					       : asx_kstream_getmsg(ks_, &c, &d, &flags, &band));
	if (r < 0)
		return r;
	sm->flags = flags;
	sm->band = band;
	sm->more = (unsigned int)r;
	sm->ctl.maxlen = cmax;
	sm->ctl.len = c.len;
	sm->ctl.buf = (uintptr_t)ctl;
	sm->data.maxlen = dmax;
	sm->data.len = d.len;
	sm->data.buf = (uintptr_t)data;
	return 0;
}

/* SRDOPT/SWROPT: 0; GRDOPT/GWROPT: the options; or -1. */
static inline int asx_opt(int fd, unsigned long cmd, unsigned int opt)
{
	switch (cmd) {
	case ASX_IOC_SRDOPT:
		return ASX_ON_FD(fd, asx_kstream_set_rdopt(ks_, opt));
	case ASX_IOC_SWROPT:
		return ASX_ON_FD(fd, asx_kstream_set_wropt(ks_, opt));
	case ASX_IOC_GRDOPT:
		return ASX_ON_FD(fd, asx_kstream_get_rdopt(ks_));
	default:
		return ASX_ON_FD(fd, asx_kstream_get_wropt(ks_));
	}
}

static inline int asx_setwm(int fd, unsigned int level, unsigned int side, uint64_t hi,
			    uint64_t lo)
{
	return ASX_ON_FD(fd, asx_kstream_set_water(ks_, level, side, hi, lo));
}

static inline int asx_qstats(int fd, unsigned int level, unsigned int side,
			     struct asx_qstats *qs)
{
	return ASX_ON_FD(fd, asx_kstream_qstats(ks_, level, side, qs));
}

/* ASX_IOC_STR; returns 0 or -1 with errno, reply length in *rlen if given. */
static inline int asx_str(int fd, unsigned int cmd, void *data, unsigned int len,
			  unsigned int maxlen, unsigned int *rlen)
{
	int r = ASX_ON_FD(fd, asx_kstream_str(ks_, cmd, data, len, maxlen, 0));

	if (r < 0)
		return r;
	if (rlen)
		*rlen = (unsigned int)r;
	return 0;
}

/*
 * FLUSH with the kernel's ASX_FLUSH* @flags.  Flags the library does not
 * know go to the kernel as they are, so that its own check is tested.
 */
static inline int asx_flush(int fd, unsigned int flags, unsigned int band)
{
	int lf = asx_kstream_flush_from_kernel(flags);
	struct asx_flush fl = { .size = sizeof(fl), .flags = flags, .band = band };

	if (lf < 0)
		return ioctl(fd, ASX_IOC_FLUSH, &fl);
	return ASX_ON_FD(fd, asx_kstream_flush(ks_, (unsigned int)lf, band));
}

static inline int asx_nread(int fd, struct asx_nread *nr)
{
	uint32_t msgs = 0;
	uint64_t first = 0, bytes = 0;
	int r = ASX_ON_FD(fd, asx_kstream_nread(ks_, &msgs, &first, &bytes));

	memset(nr, 0, sizeof(*nr));
	nr->size = sizeof(*nr);
	nr->msgs = msgs;
	nr->first = first;
	nr->bytes = bytes;
	return r;
}

/*
 * Makes @fd a pipe end; returns the other end's descriptor or -1.  The raw
 * ioctl: the tests choose ASX_PIPE_CLOEXEC both ways (asx_kstream_pipe
 * always sets it) and pass bad flags.
 */
static inline int asx_pipe(int fd, unsigned int flags)
{
	struct asx_pipe p = { .size = sizeof(p), .flags = flags };

	if (ioctl(fd, ASX_IOC_PIPE, &p))
		return -1;
	return p.fd;
}

/* A pipe of asx.ko in p[0], p[1] (close-on-exec both); 0, or -1 (none open). */
static inline int asx_pipe_pair(int p[2])
{
	p[0] = open(ASX_DEV, O_RDWR | O_CLOEXEC);
	if (p[0] < 0)
		return -1;
	p[1] = asx_pipe(p[0], ASX_PIPE_CLOEXEC);
	if (p[1] < 0) {
		close(p[0]);
		return -1;
	}
	return 0;
}

/* Waits up to @ms for the blocked signal @sig; true if it came. */
static inline bool asx_got_signal(int sig, int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	return sigtimedwait(&set, NULL, &ts) == sig;
}

/*
 * Runs @fn in a child as nobody (uid and gid 65534, no supplementary
 * groups): its exit status (0: passed, else the step that failed), 100 if
 * the child could not drop to nobody, -1 if it could not run or died.
 */
static inline int asx_as_nobody(int (*fn)(void))
{
	int status;
	pid_t child = fork();

	if (child < 0)
		return -1;
	if (!child) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		_exit(fn());
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static inline short asx_poll1(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (poll(&p, 1, timeout_ms) < 0)
		return -1;
	return p.revents;
}

/* One count from /proc/asx/objects ("streams", "modules", "msgs", "dblks"). */
static inline long asx_objects(const char *what)
{
	char key[32];
	long val, ret = -1;
	FILE *f;

	f = fopen(ASX_OBJECTS, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%31s %ld", key, &val) == 2) {
		if (!strcmp(key, what))
			ret = val;
	}
	fclose(f);
	return ret;
}

/* CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t asx_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Whether the loaded asx.ko has every ASX_FEAT_* bit of @bits. */
static inline bool asx_has_features(__u64 bits)
{
	struct asx_version v = { .size = sizeof(v) };
	int fd = asx_open(0);
	bool ok;

	if (fd < 0)
		return false;
	ok = !ioctl(fd, ASX_IOC_VERSION, &v) && (v.features & bits) == bits;
	close(fd);
	return ok;
}

/* A new activation group's descriptor (close-on-exec, and @flags), or -1. */
static inline int asx_sa_group_fd(__u32 flags, unsigned int max_vps, unsigned int ring)
{
	struct asx_sa_create c = { .size = sizeof(c), .flags = ASX_SA_CLOEXEC | flags,
				   .max_vps = max_vps, .ring_size = ring };
	int dev = asx_open(0), ret;

	if (dev < 0)
		return -1;
	ret = ioctl(dev, ASX_IOC_SA_CREATE, &c);
	close(dev);
	return ret ? -1 : c.fd;
}

#ifdef ASX_ASC_H
/* A PRIO ASC made with @o, or NULL (the error on stderr). */
static inline struct asx_asc *asx_prio_asc(const struct asx_asc_opts *o)
{
	struct asx_asc *a = NULL;
	int r = asx_asc_create(&a, &asx_asc_prio, o);

	if (r) {
		fprintf(stderr, "# asx_asc_create: %s\n", strerror(-r));
		return NULL;
	}
	return a;
}

/* A user thread of priority 0 on @a running @fn(@arg), or NULL. */
static inline struct asx_asc_thread *asx_spawn_prio0(struct asx_asc *a, asx_asc_thread_fn fn,
						     void *arg)
{
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t = NULL;

	if (asx_asc_thread_spawn(a, &q.qos, fn, arg, NULL, &t))
		return NULL;
	return t;
}
#endif

static inline void asx_msleep(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Streams listed in /proc/asx/streams (closed ones leave it at once). */
static inline long asx_listed_streams(void)
{
	char line[512];
	long n = 0;
	FILE *f = fopen("/proc/asx/streams", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "stream ", 7);
	fclose(f);
	return n;
}

/*
 * Closed Streams are freed after an RCU grace period, in a worker. Waits (up
 * to 10 s) until every Stream counted in /proc/asx/objects is a listed, live
 * one, so the counts are a stable baseline. Returns 0, or -1 on timeout.
 */
static inline int asx_quiesce(void)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (asx_objects("streams") == asx_listed_streams())
			return 0;
		asx_msleep(10);
	}
	return -1;
}

/*
 * Threads with an asx.ko activation notifier in the whole system, or -1: a
 * throw-away group's SA_INFO.
 */
static inline long asx_kmembers(void)
{
	struct asx_sa_create c = { .size = sizeof(c), .flags = ASX_SA_CLOEXEC, .max_vps = 1 };
	struct asx_sa_info in = { .size = sizeof(in) };
	int dev = asx_open(0), g;
	long n = -1;

	if (dev < 0)
		return -1;
	g = ioctl(dev, ASX_IOC_SA_CREATE, &c) ? -1 : c.fd;
	close(dev);
	if (g < 0)
		return -1;
	if (!ioctl(g, ASX_IOC_SA_INFO, &in))
		n = in.sys_members;
	close(g);
	return n;
}

/*
 * Raises the head read queue of @fd to a 1 MB high-water mark (what any user
 * may set) and writes 4000-byte messages until a write fails or @max were
 * written. Returns the bytes written; errno is the failed write's, or 0.
 */
static inline long asx_fill_stream(int fd, unsigned int max)
{
	static const char data[4000];
	unsigned int i;
	long bytes = 0;
	ssize_t w;

	if (asx_setwm(fd, 0, ASX_SIDE_READ, 1 << 20, 1 << 18))
		return -1;
	errno = 0;
	for (i = 0; i < max && (w = write(fd, data, sizeof(data))) > 0; i++)
		bytes += w;
	if (i == max)
		errno = 0;
	return bytes;
}

/* Waits (up to 5 s) for @read() to return @want; returns the last value. */
static inline long asx_settle(long (*read)(void), long want)
{
	long n = -1;
	int i;

	for (i = 0; i < 500; i++) {
		n = read();
		if (n == want)
			break;
		asx_msleep(10);
	}
	return n;
}

/* Waits (up to 5 s) for asx_kmembers() to be @want; returns the last count. */
static inline long asx_settle_kmembers(long want)
{
	return asx_settle(asx_kmembers, want);
}

/* A kernel module's reference count (/sys/module/NAME/refcnt), or -1. */
static inline long asx_refcnt_of(const char *name)
{
	char path[128];
	long n = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* asx.ko's module reference count, or -1. */
static inline long asx_module_refcnt(void)
{
	return asx_refcnt_of("asx");
}

/* Waits (up to 5 s) for asx_module_refcnt() to be @want; returns the last. */
static inline long asx_settle_refcnt(long want)
{
	return asx_settle(asx_module_refcnt, want);
}

#endif /* ASX_SELFTEST_UTIL_H */
