/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ko_util.h - the selftests' helpers for the example kernel modules of
 * kmod/test/ (asx_rot13.ko, asx_upper.ko) that register with asx.ko: where
 * a built one is, loading and unloading it, and the lines of a /proc file.
 */
#ifndef ASX_SELFTEST_KO_UTIL_H
#define ASX_SELFTEST_KO_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * <top>/kmod/test/@ko into @out, the tree's top found from the binary:
 * <top>/build/selftests/NAME (or build/asan/selftests/NAME: one more level).
 */
static inline int asx_ko_path(const char *ko, char *out, size_t len)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -1;
	exe[n] = 0;
	for (i = 0; i < 3; i++)
		dirname(exe);
	snprintf(probe, sizeof(probe), "%s/kmod/test/%s", exe, ko);
	if (access(probe, R_OK))
		dirname(exe);
	snprintf(out, len, "%s/kmod/test/%s", exe, ko);
	return 0;
}

/* finit_module(2) of kmod/test/@ko with @params: 0, or -1 with errno. */
static inline int asx_ko_load(const char *ko, const char *params)
{
	char path[PATH_MAX + 64];
	int fd, r, e;

	if (asx_ko_path(ko, path, sizeof(path)))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = (int)syscall(SYS_finit_module, fd, params, 0);
	e = errno;
	close(fd);
	errno = e;
	return r;
}

/* delete_module(2) without waiting: 0, or -1 with errno (EWOULDBLOCK: in use). */
static inline int asx_ko_unload(const char *name)
{
	return (int)syscall(SYS_delete_module, name, O_NONBLOCK);
}

/*
 * Unloads @name, waiting up to 30 s for what still holds it (closed Streams
 * are freed a grace period later, in a worker): 0, or -1 with errno.
 */
static inline int asx_ko_unload_settled(const char *name)
{
	struct timespec ts = { 0, 10 * 1000000L };
	int i;

	for (i = 0; i < 3000; i++) {
		if (!asx_ko_unload(name))
			return 0;
		if (errno != EWOULDBLOCK && errno != EBUSY && errno != EAGAIN)
			return -1;
		nanosleep(&ts, NULL);
	}
	return -1;
}

/* Whether the file @path has the line @line. */
static inline int asx_proc_has(const char *path, const char *line)
{
	char buf[256];
	FILE *f = fopen(path, "re");
	int found = 0;

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		if (!strcmp(buf, line))
			found = 1;
	}
	fclose(f);
	return found;
}

#endif /* ASX_SELFTEST_KO_UTIL_H */
