// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sa.c - the activation ioctls of asx.ko as a small C API (asx/sa.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sa/group.h"
#include "sa/sa_impl.h"
#include "core/opts.h"

/* Opens @path and checks it is asx.ko with activations; the fd or -errno. */
static int open_checked(const char *path, uint64_t *features)
{
	struct asx_version v;
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENXIO || errno == ENODEV ? -ENODEV : -errno;
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	if (ioctl(fd, ASX_IOC_VERSION, &v)) {
		err = errno == ENOTTY || errno == EINVAL ? -ENOTTY : -errno;
		close(fd);
		return err;
	}
	if (!(v.features & ASX_FEAT_SA)) {
		close(fd);
		return -ENOTTY;
	}
	if (features)
		*features = v.features;
	return fd;
}

int asx__sa_probe_dev(const char *path)
{
	int fd = open_checked(path, NULL);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int asx_sa_probe(void)
{
	return asx__sa_probe_dev(ASX_SA_DEV);
}

/* Known options into @o; -EINVAL / -E2BIG on a bad size or unknown bytes. */
static int get_opts(const struct asx_sa_opts *opts, struct asx_sa_opts *o)
{
	int r = ASX__OPTS_COPY(o, opts);

	if (r)
		return r;
	return o->flags & ~(unsigned int)ASX_SA_PREEMPT ? -EINVAL : 0;
}

int asx__sa_open_dev(const char *path, struct asx_sa_group **grp, const struct asx_sa_opts *opts)
{
	struct asx_sa_create c;
	struct asx_sa_opts o;
	struct asx_sa_group *g;
	int dev, ret;

	if (!grp || !path)
		return -EINVAL;
	*grp = NULL;
	ret = get_opts(opts, &o);
	if (ret)
		return ret;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	dev = open_checked(path, &g->features);
	if (dev < 0) {
		free(g);
		return dev;
	}
	if ((o.flags & ASX_SA_PREEMPT) && !(g->features & ASX_FEAT_SA_PREEMPT)) {
		close(dev);
		free(g);
		return -EOPNOTSUPP;
	}
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.flags = ASX_SA_CLOEXEC | (o.flags & ASX_SA_PREEMPT);
	c.max_vps = o.max_vps;
	c.ring_size = o.ring_size;
	ret = ioctl(dev, ASX_IOC_SA_CREATE, &c) ? -errno : 0;
	close(dev);
	if (ret) {
		free(g);
		return ret;
	}
	g->fd = c.fd;
	g->max_vps = c.max_vps;
	g->ring_size = c.ring_size;
	g->id = c.id;
	*grp = g;
	return 0;
}

int asx_sa_open(struct asx_sa_group **grp, const struct asx_sa_opts *opts)
{
	return asx__sa_open_dev(ASX_SA_DEV, grp, opts);
}

int asx_sa_join(struct asx_sa_group *grp)
{
	struct asx_sa_join j;

	if (!grp)
		return -EINVAL;
	memset(&j, 0, sizeof(j));
	j.size = sizeof(j);
	if (ioctl(grp->fd, ASX_IOC_SA_JOIN, &j))
		return -errno;
	return (int)j.vp;
}

int asx_sa_leave(struct asx_sa_group *grp)
{
	struct asx_sa_join j;

	if (!grp)
		return -EINVAL;
	memset(&j, 0, sizeof(j));
	j.size = sizeof(j);
	return ioctl(grp->fd, ASX_IOC_SA_LEAVE, &j) ? -errno : 0;
}

static int sa_wait_ns(struct asx_sa_group *grp, struct asx_sa_event *ev, unsigned int max,
		      uint64_t deadline_ns)
{
	struct asx_sa_wait w;
	int n;

	if (!grp || !ev || !max || max > ASX_SA_WAIT_MAX)
		return -EINVAL;
	memset(&w, 0, sizeof(w));
	w.size = sizeof(w);
	w.deadline_ns = deadline_ns;
	w.events = (uintptr_t)ev;
	w.max = max;
	n = ioctl(grp->fd, ASX_IOC_SA_WAIT, &w);
	return n < 0 ? -errno : n;
}

int asx_sa_wait(struct asx_sa_group *grp, struct asx_sa_event *ev, unsigned int max,
		const struct timespec *deadline)
{
	uint64_t d = ASX_SA_DEADLINE_NONE;
	int n;

	if (deadline) {
		if (deadline->tv_sec < 0 || deadline->tv_nsec < 0 ||
		    deadline->tv_nsec >= (long)ASX_NSEC_PER_SEC)
			return -EINVAL;
		/* 0 would mean "do not wait": a deadline at the epoch has passed anyway. */
		d = asx_timespec_ns(deadline);
		if (!d)
			d = 1;
	}
	n = sa_wait_ns(grp, ev, max, d);
	return n == 0 ? -ETIMEDOUT : n;
}

int asx_sa_read(struct asx_sa_group *grp, struct asx_sa_event *ev, unsigned int max)
{
	return sa_wait_ns(grp, ev, max, 0);
}

int asx_sa_post(struct asx_sa_group *grp, uint32_t arg)
{
	struct asx_sa_post p;

	if (!grp)
		return -EINVAL;
	memset(&p, 0, sizeof(p));
	p.size = sizeof(p);
	p.arg = arg;
	return ioctl(grp->fd, ASX_IOC_SA_POST, &p) ? -errno : 0;
}

int asx_sa_fd(const struct asx_sa_group *grp)
{
	return grp ? grp->fd : -EINVAL;
}

uint64_t asx__sa_features(const struct asx_sa_group *grp)
{
	return grp->features;
}

unsigned int asx__sa_max_vps(const struct asx_sa_group *grp)
{
	return grp->max_vps;
}

int asx_sa_stats(struct asx_sa_group *grp, struct asx_sa_info *info)
{
	if (!grp || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return ioctl(grp->fd, ASX_IOC_SA_INFO, info) ? -errno : 0;
}

void asx_sa_close(struct asx_sa_group *grp)
{
	if (!grp)
		return;
	close(grp->fd);
	free(grp);
}
