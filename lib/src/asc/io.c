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

/* asc_impl.h says why; gcc's noipa also keeps LTO from seeing through them */
#if defined(__clang__)
#define ASX__NOIPA __attribute__((noinline))
#else
#define ASX__NOIPA __attribute__((noipa))
#endif

ASX__NOIPA int asx__errno_get(void)
{
	return errno;
}

ASX__NOIPA void asx__errno_set(int e)
{
	errno = e;
}

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

int asx_asc_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	int r, e;

	asx_asc_blocking_begin();
	r = connect(fd, addr, len);
	e = asx__errno_get();
	asx_asc_blocking_end();
	asx__errno_set(e);
	return r;
}

int asx_asc_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	int r, e;

	if (!timeout_ms || !asx__self())
		return poll(fds, n, timeout_ms);
	r = poll(fds, n, 0);
	if (r)
		return r;
	asx_asc_blocking_begin();
	r = poll(fds, n, timeout_ms);
	e = asx__errno_get();
	asx_asc_blocking_end();
	asx__errno_set(e);
	return r;
}

int asx_asc_nanosleep(const struct timespec *req, struct timespec *rem)
{
	int r, e;

	asx_asc_blocking_begin();
	r = nanosleep(req, rem);
	e = asx__errno_get();
	asx_asc_blocking_end();
	asx__errno_set(e);
	return r;
}
