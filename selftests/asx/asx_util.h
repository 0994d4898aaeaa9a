/* SPDX-License-Identifier: GPL-2.0 */
/*
 * asx_util.h - helpers shared by the ASX Stream selftests: opening Streams,
 * the size-first ioctls, the live-object counts of /proc/asx/objects, and
 * the system-wide count of activation members.
 */
#ifndef ASX_SELFTEST_UTIL_H
#define ASX_SELFTEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/asx.h>

#define ASX_DEV		"/dev/asx"
#define ASX_OBJECTS	"/proc/asx/objects"

static inline int asx_open(int flags)
{
	return open(ASX_DEV, O_RDWR | O_CLOEXEC | flags);
}

static inline int asx_modcall(int fd, unsigned long cmd, const char *name)
{
	struct asx_modname mn;

	memset(&mn, 0, sizeof(mn));
	mn.size = sizeof(mn);
	if (name)
		strncpy(mn.name, name, sizeof(mn.name) - 1);
	return ioctl(fd, cmd, &mn);
}

static inline int asx_push(int fd, const char *name)
{
	return asx_modcall(fd, ASX_IOC_PUSH, name);
}

static inline int asx_pop(int fd, const char *name)
{
	return asx_modcall(fd, ASX_IOC_POP, name);
}

static inline int asx_setdrv(int fd, const char *name)
{
	return asx_modcall(fd, ASX_IOC_SETDRV, name);
}

/* Fills names (count entries); returns the depth or -1. */
static inline int asx_list(int fd, char (*names)[ASX_NAME_MAX], unsigned int count, char *driver)
{
	struct asx_list l;

	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	l.count = count;
	l.names = (uintptr_t)names;
	if (ioctl(fd, ASX_IOC_LIST, &l))
		return -1;
	if (driver)
		memcpy(driver, l.driver, ASX_NAME_MAX);
	return l.count;
}

static inline int asx_putmsg(int fd, const void *ctl, int clen, const void *data, int dlen,
			     unsigned int flags, unsigned int band)
{
	struct asx_strmsg sm;

	memset(&sm, 0, sizeof(sm));
	sm.size = sizeof(sm);
	sm.flags = flags;
	sm.band = band;
	sm.ctl.len = clen;
	sm.ctl.buf = (uintptr_t)ctl;
	sm.data.len = dlen;
	sm.data.buf = (uintptr_t)data;
	return ioctl(fd, ASX_IOC_PUTMSG, &sm);
}

/* GETMSG (or PEEK) into the buffers; the result is in *sm. */
static inline int asx_getmsg(int fd, unsigned long cmd, struct asx_strmsg *sm, void *ctl,
			     unsigned int cmax, void *data, unsigned int dmax, unsigned int flags,
			     unsigned int band)
{
	memset(sm, 0, sizeof(*sm));
	sm->size = sizeof(*sm);
	sm->flags = flags;
	sm->band = band;
	sm->ctl.maxlen = cmax;
	sm->ctl.buf = (uintptr_t)ctl;
	sm->data.maxlen = dmax;
	sm->data.buf = (uintptr_t)data;
	return ioctl(fd, cmd, sm);
}

static inline int asx_opt(int fd, unsigned long cmd, unsigned int opt)
{
	struct asx_opt o = { .size = sizeof(o), .opt = opt };

	if (ioctl(fd, cmd, &o))
		return -1;
	if (cmd == ASX_IOC_SRDOPT || cmd == ASX_IOC_SWROPT)
		return 0;
	return o.opt;
}

static inline int asx_setwm(int fd, unsigned int level, unsigned int side, uint64_t hi,
			    uint64_t lo)
{
	struct asx_wm wm = { .size = sizeof(wm), .level = level, .side = side,
			     .hiwat = hi, .lowat = lo };

	return ioctl(fd, ASX_IOC_SETWM, &wm);
}

static inline int asx_qstats(int fd, unsigned int level, unsigned int side,
			     struct asx_qstats *qs)
{
	memset(qs, 0, sizeof(*qs));
	qs->size = sizeof(*qs);
	qs->level = level;
	qs->side = side;
	return ioctl(fd, ASX_IOC_QSTATS, qs);
}

/* ASX_IOC_STR; returns 0 or -1 with errno, reply length in *rlen if given. */
static inline int asx_str(int fd, unsigned int cmd, void *data, unsigned int len,
			  unsigned int maxlen, unsigned int *rlen)
{
	struct asx_strioctl si;
	int ret;

	memset(&si, 0, sizeof(si));
	si.size = sizeof(si);
	si.cmd = cmd;
	si.len = len;
	si.maxlen = maxlen;
	si.data = (uintptr_t)data;
	ret = ioctl(fd, ASX_IOC_STR, &si);
	if (!ret && rlen)
		*rlen = si.len;
	return ret;
}

static inline int asx_flush(int fd, unsigned int flags, unsigned int band)
{
	struct asx_flush fl = { .size = sizeof(fl), .flags = flags, .band = band };

	return ioctl(fd, ASX_IOC_FLUSH, &fl);
}

static inline int asx_nread(int fd, struct asx_nread *nr)
{
	memset(nr, 0, sizeof(*nr));
	nr->size = sizeof(*nr);
	return ioctl(fd, ASX_IOC_NREAD, nr);
}

/* Makes @fd a pipe end; returns the other end's descriptor or -1. */
static inline int asx_pipe(int fd, unsigned int flags)
{
	struct asx_pipe p = { .size = sizeof(p), .flags = flags };

	if (ioctl(fd, ASX_IOC_PIPE, &p))
		return -1;
	return p.fd;
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

/* asx.ko's module reference count (/sys/module/asx/refcnt), or -1. */
static inline long asx_module_refcnt(void)
{
	FILE *f = fopen("/sys/module/asx/refcnt", "re");
	long n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* Waits (up to 5 s) for asx_module_refcnt() to be @want; returns the last. */
static inline long asx_settle_refcnt(long want)
{
	return asx_settle(asx_module_refcnt, want);
}

#endif /* ASX_SELFTEST_UTIL_H */
