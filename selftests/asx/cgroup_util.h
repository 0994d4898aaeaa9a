/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup_util.h - a cgroup v2 memory cgroup for the selftests that play an
 * unprivileged user (limits_test, random_test): mount the hierarchy if the
 * guest has none, create a child with memory.max, read its counters.
 */
#ifndef ASX_SELFTEST_CGROUP_UTIL_H
#define ASX_SELFTEST_CGROUP_UTIL_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char cg_root[64];
static bool cg_mounted_here;

static inline int write_file(const char *dir, const char *name, const char *val)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		ret = -1;
	close(fd);
	return ret;
}

/* The named counter of a flat-keyed file such as memory.events, or -1. */
static inline long read_key(const char *dir, const char *name, const char *key)
{
	char path[256], k[64];
	long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!key) {
		if (fscanf(f, "%ld", &v) == 1)
			found = v;
	} else {
		while (fscanf(f, "%63s %ld", k, &v) == 2)
			if (!strcmp(k, key))
				found = v;
	}
	fclose(f);
	return found;
}

/* A cgroup v2 hierarchy with the memory controller for children; 0 or -1. */
static inline int cg_setup(void)
{
	struct stat sb;

	snprintf(cg_root, sizeof(cg_root), "/sys/fs/cgroup");
	if (stat("/sys/fs/cgroup/cgroup.controllers", &sb)) {
		snprintf(cg_root, sizeof(cg_root), "/tmp/asx-cg.%d", getpid());
		if (mkdir(cg_root, 0700) || mount("none", cg_root, "cgroup2", 0, NULL))
			return -1;
		cg_mounted_here = true;
	}
	/* fails harmlessly when it is on already */
	write_file(cg_root, "cgroup.subtree_control", "+memory");
	return 0;
}

static inline void cg_teardown(void)
{
	if (cg_mounted_here) {
		umount(cg_root);
		rmdir(cg_root);
	}
}

/* Moves the calling process into the cgroup @cg; 0 or -1. */
static inline int cg_enter(const char *cg)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_file(cg, "cgroup.procs", pid);
}

#endif /* ASX_SELFTEST_CGROUP_UTIL_H */
