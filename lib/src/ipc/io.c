// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * io.c - the transfer loops behind every IPC SAP send and receive.
 *
 * Without a deadline a call is the blocking system call itself, retried
 * on EINTR, so the common path costs nothing over the raw API.  With a
 * deadline the call is made with MSG_DONTWAIT and, on EAGAIN, the handle
 * is polled until it is ready or the deadline passes.  On an ASC user
 * thread every call takes the second route, deadline or not, and the wait
 * parks the user thread on the sentinel's epoll instead of polling, so
 * the VP runs the ASC's other threads meanwhile; the descriptor's
 * own O_NONBLOCK flag is never touched, so other threads sharing it see
 * no change.  The vector loops copy a window of the caller's iovec array
 * into a local array and advance through it by index and offset: the
 * caller's array is only ever read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include "core/compiler.h"

#define IOV_WINDOW 64

/* A user thread's wait: look once (an expired deadline still sees a ready
 * handle), then park until ready or @deadline. */
static int uthread_wait(struct pollfd *p, const struct timespec *deadline)
{
	int r = poll(p, 1, 0);

	if (r > 0)
		return 0;
	r = asx_asc_thread_wait_fd(p->fd, p->events, deadline);
	return r > 0 ? 0 : r;
}

int asx__ipc_wait(int fd, short events, const struct timespec *deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	struct timespec rel, *relp;
	int r;

	if (asx__ipc_uthread())
		return uthread_wait(&p, deadline);
	for (;;) {
		relp = NULL;
		if (deadline) {
			uint64_t now = asx_now_ns(), end = asx_timespec_ns(deadline);
			uint64_t left = end > now ? end - now : 0;

			rel.tv_sec = (time_t)(left / ASX_NSEC_PER_SEC);
			rel.tv_nsec = (long)(left % ASX_NSEC_PER_SEC);
			relp = &rel;
		}
		r = ppoll(&p, 1, relp, NULL);
		if (r > 0)
			return 0;
		if (r == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

int asx__ipc_set_int(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val)) ? -errno : 0;
}

int asx__ipc_set_nonblock(int fd, bool on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	fl = on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, fl) ? -errno : 0;
}

int asx__ipc_close_fd(int *fd)
{
	int r = 0;

	if (*fd >= 0) {
		/* Linux releases the descriptor even when close reports EINTR. */
		if (close(*fd) && errno != EINTR)
			r = -errno;
		*fd = -1;
	}
	return r;
}

/* True when @fd itself is O_NONBLOCK (its owner asked for EAGAIN). */
static bool fd_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl >= 0 && (fl & O_NONBLOCK);
}

int asx__ipc_retry(int fd, short events, const struct timespec *deadline)
{
	int e = errno;

	if (e == EINTR)
		return 0;
	if (e != EAGAIN && e != EWOULDBLOCK)
		return -e;
	if (deadline)
		return asx__ipc_wait(fd, events, deadline);
	/* a user thread's call without deadline was made MSG_DONTWAIT */
	if (asx__ipc_uthread() && !fd_nonblocking(fd))
		return asx__ipc_wait(fd, events, NULL);
	return -e;
}

/* MSG_DONTWAIT when the call must not sleep in the kernel (see the top). */
static inline int dontwait(const struct timespec *deadline)
{
	return deadline || asx__ipc_uthread() ? MSG_DONTWAIT : 0;
}

ssize_t asx__ipc_sendmsg(int fd, struct msghdr *mh, int flags, const struct timespec *deadline)
{
	ssize_t n;
	int r;

	flags |= MSG_NOSIGNAL | dontwait(deadline);
	while (unlikely((n = sendmsg(fd, mh, flags)) < 0))
		if ((r = asx__ipc_retry(fd, POLLOUT, deadline)))
			return r;
	return n;
}

ssize_t asx__ipc_recvmsg(int fd, struct msghdr *mh, int flags, const struct timespec *deadline)
{
	ssize_t n;
	int r;

	flags |= dontwait(deadline);
	while (unlikely((n = recvmsg(fd, mh, flags)) < 0))
		if ((r = asx__ipc_retry(fd, POLLIN, deadline)))
			return r;
	return n;
}

ssize_t asx__ipc_send(int fd, const void *buf, size_t len, const struct timespec *deadline)
{
	int flags = MSG_NOSIGNAL | dontwait(deadline);
	ssize_t n;
	int r;

	while (unlikely((n = send(fd, buf, len, flags)) < 0))
		if ((r = asx__ipc_retry(fd, POLLOUT, deadline)))
			return r;
	return n;
}

ssize_t asx__ipc_recv(int fd, void *buf, size_t len, const struct timespec *deadline)
{
	int flags = dontwait(deadline);
	ssize_t n;
	int r;

	while (unlikely((n = recv(fd, buf, len, flags)) < 0))
		if ((r = asx__ipc_retry(fd, POLLIN, deadline)))
			return r;
	return n;
}

ssize_t asx__ipc_loop_n(ipc_step_fn *step, void *obj, void *buf, size_t len,
		   const struct timespec *deadline, size_t *done)
{
	char *p = buf;
	size_t moved = 0;
	ssize_t n = 0;

	if (len > SSIZE_MAX)
		return -EINVAL;
	while (moved < len) {
		n = step(obj, p + moved, len - moved, deadline);
		if (n <= 0)
			break;
		moved += (size_t)n;
	}
	if (done)
		*done = moved;
	return n < 0 ? n : (ssize_t)moved;
}

static ssize_t send_step(void *fd, void *buf, size_t len, const struct timespec *deadline)
{
	return asx__ipc_send(*(int *)fd, buf, len, deadline);
}

static ssize_t recv_step(void *fd, void *buf, size_t len, const struct timespec *deadline)
{
	return asx__ipc_recv(*(int *)fd, buf, len, deadline);
}

ssize_t asx__ipc_send_n(int fd, const void *buf, size_t len, const struct timespec *deadline,
		   size_t *done)
{
	/* the step only reads through the pointer */
	return asx__ipc_loop_n(send_step, &fd, (void *)buf, len, deadline, done);
}

ssize_t asx__ipc_recv_n(int fd, void *buf, size_t len, const struct timespec *deadline,
		   size_t *done)
{
	return asx__ipc_loop_n(recv_step, &fd, buf, len, deadline, done);
}

/* Total length of @iov, or -EINVAL if @iovcnt is negative or it overflows ssize_t. */
static ssize_t iov_total(const struct iovec *iov, int iovcnt)
{
	size_t total = 0;
	int i;

	if (iovcnt < 0 || (iovcnt > 0 && !iov))
		return -EINVAL;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > (size_t)SSIZE_MAX - total)
			return -EINVAL;
		total += iov[i].iov_len;
	}
	return (ssize_t)total;
}

/*
 * Fill @w with the part of @iov still to move, starting @off bytes into
 * entry @i; returns the number of window entries.
 */
static int iov_window(struct iovec *w, const struct iovec *iov, int iovcnt, int i, size_t off)
{
	int k = 0;

	for (; i < iovcnt && k < IOV_WINDOW; i++, off = 0) {
		if (iov[i].iov_len == off)
			continue;
		w[k].iov_base = (char *)iov[i].iov_base + off;
		w[k].iov_len = iov[i].iov_len - off;
		k++;
	}
	return k;
}

/* Advance the (i, off) cursor by @n bytes. */
static void iov_advance(const struct iovec *iov, int iovcnt, int *i, size_t *off, size_t n)
{
	while (*i < iovcnt) {
		size_t left = iov[*i].iov_len - *off;

		if (n < left) {
			*off += n;
			return;
		}
		n -= left;
		(*i)++;
		*off = 0;
	}
}

static ssize_t iov_loop(int fd, const struct iovec *iov, int iovcnt,
			const struct timespec *deadline, size_t *done, bool out)
{
	struct iovec w[IOV_WINDOW];
	struct msghdr mh;
	ssize_t total = iov_total(iov, iovcnt), n = 0;
	size_t moved = 0, off = 0;
	int i = 0;

	if (total < 0) {
		if (done)
			*done = 0;
		return total;
	}
	while (moved < (size_t)total) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = w;
		mh.msg_iovlen = (size_t)iov_window(w, iov, iovcnt, i, off);
		n = out ? asx__ipc_sendmsg(fd, &mh, 0, deadline) : asx__ipc_recvmsg(fd, &mh, 0, deadline);
		if (n <= 0)
			break;
		moved += (size_t)n;
		iov_advance(iov, iovcnt, &i, &off, (size_t)n);
	}
	if (done)
		*done = moved;
	return n < 0 ? n : (ssize_t)moved;
}

ssize_t asx__ipc_sendv_n(int fd, const struct iovec *iov, int iovcnt,
		    const struct timespec *deadline, size_t *done)
{
	return iov_loop(fd, iov, iovcnt, deadline, done, true);
}

ssize_t asx__ipc_recvv_n(int fd, const struct iovec *iov, int iovcnt,
		    const struct timespec *deadline, size_t *done)
{
	return iov_loop(fd, iov, iovcnt, deadline, done, false);
}
