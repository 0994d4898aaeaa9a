// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kstream.c - the ioctls of a kernel Stream (/dev/asx), each written once:
 * a size-first struct filled, the call made, -errno returned (errno is
 * read right after the failed call; libasx never sets it).  A call a signal
 * interrupts is not retried here: the kernel restarts it when the handler
 * has SA_RESTART, and -EINTR reaches the caller otherwise, as getmsg(2)
 * says it must.
 *
 * On an ASC user thread a call that may sleep in the kernel (GETMSG, and
 * PUTMSG of a normal message under flow control) first looks whether the
 * Stream is ready for it and, when not, parks the user thread until it is
 * (the sentinel watches the descriptor: POLLIN/POLLPRI, POLLOUT), so the
 * VP runs the ASC's other threads meanwhile.  A descriptor opened
 * O_NONBLOCK keeps its -EAGAIN.  The ioctl after the wait can still sleep
 * if another reader (or writer) of the same Stream took the message (the
 * room) in between: give each Stream one reader and one writer on user
 * threads, or open it ASX_KSTREAM_NONBLOCK.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/kstream.h>
#include "kstream_impl.h"

static int xioctl(struct asx_kstream *ks, unsigned long cmd, void *arg)
{
	int r;

	if (!ks)
		return -EINVAL;
	r = ioctl(ks->fd, cmd, arg);
	return r < 0 ? -errno : r;
}

/* A user thread's wait until @ks is ready for @events: 0 or -errno. */
static int uthread_ready(struct asx_kstream *ks, short events)
{
	struct pollfd p = { .fd = ks->fd, .events = events };
	int fl, r;

	if (!asx_asc_thread_self())
		return 0;
	fl = fcntl(ks->fd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK) || poll(&p, 1, 0) != 0)
		return 0;	/* the call reports what is wrong, or does not wait */
	r = asx_asc_thread_wait_fd(ks->fd, events, NULL);
	return r < 0 ? r : 0;
}

/* ---------------------------------------------------------------- life cycle */

int asx_kstream_attach(struct asx_kstream **out, int fd, bool own)
{
	struct asx_kstream *ks;

	if (!out)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	ks->fd = fd;
	ks->own = own;
	*out = ks;
	return 0;
}

int asx_kstream_open(struct asx_kstream **out, const char *driver, unsigned int flags)
{
	struct asx_kstream *ks;
	int fd, r;

	if (!out || (flags & ~ASX_KSTREAM_NONBLOCK))
		return -EINVAL;
	fd = open(ASX_KSTREAM_DEV, O_RDWR | O_CLOEXEC |
		  ((flags & ASX_KSTREAM_NONBLOCK) ? O_NONBLOCK : 0));
	if (fd < 0)
		return -errno;
	r = asx_kstream_attach(&ks, fd, true);
	if (r) {
		close(fd);
		return r;
	}
	if (driver && *driver) {
		r = asx_kstream_set_driver(ks, driver);
		if (r) {
			asx_kstream_close(ks);
			return r;
		}
	}
	*out = ks;
	return 0;
}

int asx_kstream_detach(struct asx_kstream *ks)
{
	int fd;

	if (!ks)
		return -EINVAL;
	fd = ks->fd;
	free(ks);
	return fd;
}

void asx_kstream_close(struct asx_kstream *ks)
{
	if (!ks)
		return;
	if (ks->own)
		close(ks->fd);
	free(ks);
}

int asx_kstream_fd(const struct asx_kstream *ks)
{
	return ks ? ks->fd : -EINVAL;
}

int asx_kstream_version(struct asx_kstream *ks, struct asx_version *v)
{
	if (!v)
		return -EINVAL;
	memset(v, 0, sizeof(*v));
	v->size = sizeof(*v);
	return xioctl(ks, ASX_IOC_VERSION, v);
}

/* ---------------------------------------------------------------- configuration */

static int modcall(struct asx_kstream *ks, unsigned long cmd, const char *name)
{
	struct asx_modname mn;

	memset(&mn, 0, sizeof(mn));
	mn.size = sizeof(mn);
	if (name) {
		if (strlen(name) >= sizeof(mn.name))
			return -ENAMETOOLONG;
		strcpy(mn.name, name);
	}
	return xioctl(ks, cmd, &mn);
}

int asx_kstream_push(struct asx_kstream *ks, const char *name)
{
	if (!name)
		return -EINVAL;
	return modcall(ks, ASX_IOC_PUSH, name);
}

int asx_kstream_pop(struct asx_kstream *ks, const char *name)
{
	return modcall(ks, ASX_IOC_POP, name);
}

int asx_kstream_set_driver(struct asx_kstream *ks, const char *name)
{
	if (!name)
		return -EINVAL;
	return modcall(ks, ASX_IOC_SETDRV, name);
}

int asx_kstream_list(struct asx_kstream *ks, char (*names)[ASX_KSTREAM_NAME_MAX],
		     unsigned int n, char *driver)
{
	struct asx_list l;
	int r;

	if (n && !names)
		return -EINVAL;
	memset(&l, 0, sizeof(l));
	l.size = sizeof(l);
	l.count = n;
	l.names = (uintptr_t)names;
	r = xioctl(ks, ASX_IOC_LIST, &l);
	if (r)
		return r;
	if (driver)
		memcpy(driver, l.driver, ASX_NAME_MAX);
	return (int)l.count;
}

/* ---------------------------------------------------------------- raw messages */

static void fill_buf(struct asx_strbuf *sb, const struct asx_kstream_part *p, bool in)
{
	if (!p) {
		sb->len = -1;
		sb->maxlen = 0;
		sb->buf = 0;
		return;
	}
	sb->buf = (uintptr_t)p->buf;
	sb->maxlen = p->maxlen;
	sb->len = in ? p->len : 0;
}

int asx_kstream_putmsg(struct asx_kstream *ks, const struct asx_kstream_part *ctl,
		       const struct asx_kstream_part *data, unsigned int flags, unsigned int band)
{
	struct asx_strmsg sm;

	memset(&sm, 0, sizeof(sm));
	sm.size = sizeof(sm);
	sm.flags = flags;
	sm.band = band;
	fill_buf(&sm.ctl, ctl, true);
	fill_buf(&sm.data, data, true);
	if (ks && !(flags & ASX_MSG_HIPRI)) {
		int r = uthread_ready(ks, POLLOUT);

		if (r)
			return r;
	}
	return xioctl(ks, ASX_IOC_PUTMSG, &sm);
}

static int getmsg(struct asx_kstream *ks, unsigned long cmd, struct asx_kstream_part *ctl,
		  struct asx_kstream_part *data, unsigned int *flags, unsigned int *band)
{
	struct asx_strmsg sm;
	int r;

	memset(&sm, 0, sizeof(sm));
	sm.size = sizeof(sm);
	sm.flags = flags ? *flags : ASX_MSG_ANY;
	sm.band = band ? *band : 0;
	fill_buf(&sm.ctl, ctl, false);
	fill_buf(&sm.data, data, false);
	if (!ctl)
		sm.ctl.len = 0;
	if (!data)
		sm.data.len = 0;
	if (ks && cmd == ASX_IOC_GETMSG) {
		r = uthread_ready(ks, sm.flags == ASX_MSG_HIPRI ? POLLPRI : POLLIN | POLLPRI);
		if (r)
			return r;
	}
	r = xioctl(ks, cmd, &sm);
	if (r < 0)
		return r;
	if (ctl)
		ctl->len = sm.ctl.len;
	if (data)
		data->len = sm.data.len;
	if (flags)
		*flags = sm.flags;
	if (band)
		*band = sm.band;
	return (int)sm.more;
}

int asx_kstream_getmsg(struct asx_kstream *ks, struct asx_kstream_part *ctl,
		       struct asx_kstream_part *data, unsigned int *flags, unsigned int *band)
{
	return getmsg(ks, ASX_IOC_GETMSG, ctl, data, flags, band);
}

int asx_kstream_peek(struct asx_kstream *ks, struct asx_kstream_part *ctl,
		     struct asx_kstream_part *data, unsigned int *flags, unsigned int *band)
{
	return getmsg(ks, ASX_IOC_PEEK, ctl, data, flags, band);
}

/* ---------------------------------------------------------------- control */

int asx_kstream_flush(struct asx_kstream *ks, unsigned int flags, unsigned int band)
{
	struct asx_flush fl = { .size = sizeof(fl), .band = band };
	int kf = asx_kstream_flush_to_kernel(flags);

	if (kf < 0)
		return kf;
	fl.flags = (unsigned int)kf;
	return xioctl(ks, ASX_IOC_FLUSH, &fl);
}

static int setopt(struct asx_kstream *ks, unsigned long cmd, unsigned int opt)
{
	struct asx_opt o = { .size = sizeof(o), .opt = opt };

	return xioctl(ks, cmd, &o);
}

static int getopt_(struct asx_kstream *ks, unsigned long cmd)
{
	struct asx_opt o = { .size = sizeof(o) };
	int r = xioctl(ks, cmd, &o);

	return r ? r : (int)o.opt;
}

int asx_kstream_set_rdopt(struct asx_kstream *ks, unsigned int opt)
{
	return setopt(ks, ASX_IOC_SRDOPT, opt);
}

int asx_kstream_get_rdopt(struct asx_kstream *ks)
{
	return getopt_(ks, ASX_IOC_GRDOPT);
}

int asx_kstream_set_wropt(struct asx_kstream *ks, unsigned int opt)
{
	return setopt(ks, ASX_IOC_SWROPT, opt);
}

int asx_kstream_get_wropt(struct asx_kstream *ks)
{
	return getopt_(ks, ASX_IOC_GWROPT);
}

int asx_kstream_nread(struct asx_kstream *ks, uint32_t *msgs, uint64_t *first, uint64_t *bytes)
{
	struct asx_nread nr;
	int r;

	memset(&nr, 0, sizeof(nr));
	nr.size = sizeof(nr);
	r = xioctl(ks, ASX_IOC_NREAD, &nr);
	if (r)
		return r;
	if (msgs)
		*msgs = nr.msgs;
	if (first)
		*first = nr.first;
	if (bytes)
		*bytes = nr.bytes;
	return 0;
}

int asx_kstream_set_band_water(struct asx_kstream *ks, unsigned int level, unsigned int side,
			       unsigned int band, uint64_t hiwat, uint64_t lowat)
{
	struct asx_wm wm = { .size = sizeof(wm), .level = level, .side = side,
			     .hiwat = hiwat, .lowat = lowat, .band = band };

	return xioctl(ks, ASX_IOC_SETWM, &wm);
}

int asx_kstream_set_water(struct asx_kstream *ks, unsigned int level, unsigned int side,
			  uint64_t hiwat, uint64_t lowat)
{
	return asx_kstream_set_band_water(ks, level, side, 0, hiwat, lowat);
}

int asx_kstream_get_water(struct asx_kstream *ks, unsigned int level, unsigned int side,
			  uint64_t *hiwat, uint64_t *lowat)
{
	return asx_kstream_get_band_water(ks, level, side, 0, hiwat, lowat);
}

int asx_kstream_get_band_water(struct asx_kstream *ks, unsigned int level, unsigned int side,
			       unsigned int band, uint64_t *hiwat, uint64_t *lowat)
{
	struct asx_wm wm = { .size = sizeof(wm), .level = level, .side = side, .band = band };
	int r = xioctl(ks, ASX_IOC_GETWM, &wm);

	if (r)
		return r;
	if (hiwat)
		*hiwat = wm.hiwat;
	if (lowat)
		*lowat = wm.lowat;
	return 0;
}

int asx_kstream_qstats(struct asx_kstream *ks, unsigned int level, unsigned int side,
		       struct asx_qstats *qs)
{
	if (!qs)
		return -EINVAL;
	memset(qs, 0, sizeof(*qs));
	qs->size = sizeof(*qs);
	qs->level = level;
	qs->side = side;
	return xioctl(ks, ASX_IOC_QSTATS, qs);
}

int asx_kstream_strioctl(struct asx_kstream *ks, struct asx_strioctl *si)
{
	if (!si)
		return -EINVAL;
	si->size = sizeof(*si);
	return xioctl(ks, ASX_IOC_STR, si);
}

int asx_kstream_autopush(struct asx_kstream *ks, struct asx_autopush *ap)
{
	if (!ap)
		return -EINVAL;
	ap->size = sizeof(*ap);
	return xioctl(ks, ASX_IOC_AUTOPUSH, ap);
}

int asx_kstream_str(struct asx_kstream *ks, unsigned int cmd, void *data, uint32_t len,
		    uint32_t maxlen, int timeout_ms)
{
	struct asx_strioctl si;
	int r;

	memset(&si, 0, sizeof(si));
	si.cmd = cmd;
	si.timeout_ms = timeout_ms;
	si.len = len;
	si.maxlen = maxlen;
	si.data = (uintptr_t)data;
	r = asx_kstream_strioctl(ks, &si);
	return r ? r : (int)si.len;
}

/* ---------------------------------------------------------------- mux, pipes */

int asx_kstream_link(struct asx_kstream *ks, struct asx_kstream *lower, uint32_t *id)
{
	struct asx_link l = { .size = sizeof(l) };
	int r;

	if (!lower)
		return -EINVAL;
	l.fd = lower->fd;
	r = xioctl(ks, ASX_IOC_LINK, &l);
	if (!r && id)
		*id = l.id;
	return r;
}

int asx_kstream_unlink(struct asx_kstream *ks, uint32_t id)
{
	struct asx_link l = { .size = sizeof(l), .id = id };

	return xioctl(ks, ASX_IOC_UNLINK, &l);
}

int asx_kstream_pipe(struct asx_kstream *ks, struct asx_kstream **other, unsigned int flags)
{
	struct asx_pipe p = { .size = sizeof(p), .flags = ASX_PIPE_CLOEXEC };
	int r;

	if (!other || (flags & ~ASX_KSTREAM_NONBLOCK))
		return -EINVAL;
	if (flags & ASX_KSTREAM_NONBLOCK)
		p.flags |= ASX_PIPE_NONBLOCK;
	r = xioctl(ks, ASX_IOC_PIPE, &p);
	if (r)
		return r;
	r = asx_kstream_attach(other, p.fd, true);
	if (r)
		close(p.fd);
	return r;
}

int asx_kstream_pipe_open(struct asx_kstream **a, struct asx_kstream **b, unsigned int flags)
{
	struct asx_kstream *ks;
	int r;

	if (!a || !b)
		return -EINVAL;
	r = asx_kstream_open(&ks, NULL, flags);
	if (r)
		return r;
	r = asx_kstream_pipe(ks, b, flags);
	if (r) {
		asx_kstream_close(ks);
		return r;
	}
	*a = ks;
	return 0;
}
