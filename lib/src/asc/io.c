// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * io.c - blocking system calls that do not block the ASC.
 *
 * Two routes.  Readiness-based calls (read, write, recv, send, accept on
 * pipes, sockets, terminals...) first try without blocking (a zero-timeout
 * poll, or MSG_DONTWAIT) and, when the call would block, park the user
 * thread with asx_asc_thread_wait_fd() so the VP runs other threads and the
 * sentinel watches the descriptor.  Everything else (connect on a
 * blocking socket, poll with a timeout, nanosleep, regular files) runs
 * between asx_asc_blocking_begin() and _end(): the VP blocks in the
 * kernel, and the ASC's VP activation policy decides whether an idle VP
 * is woken or a spare made to run the other threads meanwhile, and
 * whether the VP gives its place back afterwards.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "asc/asc_impl.h"
#include "asc/wait.h"

static bool would_block(void)
{
	int e = asx__errno_get();

	return e == EAGAIN || e == EWOULDBLOCK;
}

/* 1 ready, 0 would block; for non-user-thread callers always 1. */
static int ready(int fd, short ev)
{
	struct pollfd p = { .fd = fd, .events = ev };

	if (!asx__self())
		return 1;
	return poll(&p, 1, 0) != 0;
}

static int park(int fd, short ev)
{
	int r = asx_asc_thread_wait_fd(fd, ev, NULL);

	if (r < 0) {
		asx__errno_set(-r);
		return -1;
	}
	return 0;
}

ssize_t asx_asc_read(int fd, void *buf, size_t n)
{
	for (;;) {
		if (!ready(fd, POLLIN) && park(fd, POLLIN))
			return -1;
		ssize_t r = read(fd, buf, n);

		if (r >= 0 || asx__errno_get() != EAGAIN || !asx__self())
			return r;
		/* non-blocking descriptor raced with another reader: wait again */
		if (park(fd, POLLIN))
			return -1;
	}
}

ssize_t asx_asc_write(int fd, const void *buf, size_t n)
{
	for (;;) {
		if (!ready(fd, POLLOUT) && park(fd, POLLOUT))
			return -1;
		ssize_t r = write(fd, buf, n);

		if (r >= 0 || asx__errno_get() != EAGAIN || !asx__self())
			return r;
		if (park(fd, POLLOUT))
			return -1;
	}
}

ssize_t asx_asc_recv(int fd, void *buf, size_t n, int flags)
{
	if (!asx__self() || (flags & MSG_DONTWAIT))
		return recv(fd, buf, n, flags);
	for (;;) {
		ssize_t r = recv(fd, buf, n, flags | MSG_DONTWAIT);

		if (r >= 0 || !would_block())
			return r;
		if (park(fd, POLLIN))
			return -1;
	}
}

ssize_t asx_asc_send(int fd, const void *buf, size_t n, int flags)
{
	if (!asx__self() || (flags & MSG_DONTWAIT))
		return send(fd, buf, n, flags);
	for (;;) {
		ssize_t r = send(fd, buf, n, flags | MSG_DONTWAIT);

		if (r >= 0 || !would_block())
			return r;
		if (park(fd, POLLOUT))
			return -1;
	}
}

int asx_asc_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	for (;;) {
		if (!ready(fd, POLLIN) && park(fd, POLLIN))
			return -1;
		int r = accept4(fd, addr, len, SOCK_CLOEXEC);

		if (r >= 0 || !would_block() || !asx__self())
			return r;
	}
}

/* The deadline a blocking connect of @fd keeps: SO_SNDTIMEO's (NULL: none). */
static struct timespec *connect_deadline(int fd, struct timespec *dl)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);

	if (getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &len) || (!tv.tv_sec && !tv.tv_usec))
		return NULL;
	return asx_deadline(dl, (uint64_t)tv.tv_sec * ASX_NSEC_PER_SEC +
			    (uint64_t)tv.tv_usec * 1000ULL);
}

/*
 * A UNIX-domain connect to a listener whose backlog is full: Linux's
 * non-blocking connect says EAGAIN (where a blocking one sleeps until the
 * listener accepts), and nothing can be polled for that.  Try again after a
 * nap (parked on the timer heap), 50 us doubling to 2 ms, until @dl.
 * Returns 0 or -errno (-EAGAIN once @dl passed); for user threads and
 * pthreads alike.
 */
int asx__connect_retry(int fd, const struct sockaddr *addr, socklen_t len,
		       const struct timespec *dl)
{
	uint64_t nap = 50000, end = dl ? asx_timespec_ns(dl) : UINT64_MAX;

	for (;;) {
		int r = connect(fd, addr, len);
		uint64_t now;
		struct timespec ts;

		if (!r)
			return 0;
		r = -asx__errno_get();
		if (r != -EAGAIN || addr->sa_family != AF_UNIX)
			return r;
		now = asx_now_ns();
		if (now >= end)
			return r;
		now = now + nap < end ? now + nap : end;
		ts.tv_sec = (time_t)(now / ASX_NSEC_PER_SEC);
		ts.tv_nsec = (long)(now % ASX_NSEC_PER_SEC);
		asx_asc_thread_sleep_until(&ts);
		if (nap < 2000000)
			nap *= 2;
	}
}

/*
 * connect(2) on a user thread: a non-blocking connect, then the thread
 * parks until the socket is writable (the sentinel watches it) and reads
 * the result from SO_ERROR; the socket's SO_SNDTIMEO, the deadline of a
 * blocking connect, is kept (EINPROGRESS after it, as the kernel says; a
 * full UNIX-domain backlog: EAGAIN).  The descriptor's own O_NONBLOCK is
 * restored; a descriptor that has it gets connect(2) as it is.
 */
int asx_asc_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct timespec dls, *dl;
	int fl, r, e, err = 0;
	socklen_t elen = sizeof(err);

	if (!asx__self())
		return connect(fd, addr, len);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK))
		return connect(fd, addr, len);
	dl = connect_deadline(fd, &dls);
	if (fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		return -1;
	r = asx__connect_retry(fd, addr, len, dl);
	e = -r;
	if (r)
		r = -1;
	if (r && e == EINPROGRESS) {
		r = asx_asc_thread_wait_fd(fd, POLLOUT, dl);
		if (r == -ETIMEDOUT) {
			r = -1;		/* it goes on in the background, as the kernel's */
		} else if (r < 0) {
			e = -r;
			r = -1;
		} else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen)) {
			e = asx__errno_get();
			r = -1;
		} else {
			e = err;
			r = err ? -1 : 0;
		}
	}
	fcntl(fd, F_SETFL, fl);
	asx__errno_set(e);
	return r;
}

/*
 * nanosleep(2) on a user thread: the thread parks on the sentinel's timer
 * heap until the time is up.  A thread timer of the sleeper interrupts it
 * (-1, EINTR, the rest in @rem), as a signal interrupts nanosleep(2).
 */
int asx_asc_nanosleep(const struct timespec *req, struct timespec *rem)
{
	struct timespec dl;
	uint64_t end, now;

	if (!asx__self())
		return nanosleep(req, rem);
	if (!req || req->tv_sec < 0 || req->tv_nsec < 0 || req->tv_nsec >= (long)ASX_NSEC_PER_SEC) {
		asx__errno_set(EINVAL);
		return -1;
	}
	end = asx_now_ns() + (uint64_t)req->tv_sec * ASX_NSEC_PER_SEC + (uint64_t)req->tv_nsec;
	dl.tv_sec = (time_t)(end / ASX_NSEC_PER_SEC);
	dl.tv_nsec = (long)(end % ASX_NSEC_PER_SEC);
	if (asx_asc_thread_sleep_until(&dl) != -EINTR)
		return 0;
	now = asx_now_ns();
	if (rem) {
		now = end > now ? end - now : 0;
		rem->tv_sec = (time_t)(now / ASX_NSEC_PER_SEC);
		rem->tv_nsec = (long)(now % ASX_NSEC_PER_SEC);
	}
	asx__errno_set(EINTR);
	return -1;
}
