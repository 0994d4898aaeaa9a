// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * pipe.c - pipes and FIFOs with typed read and write ends.
 *
 * Pipes cannot take MSG_DONTWAIT, so a read or write with a deadline
 * first polls and then does the system call with RWF_NOWAIT (preadv2,
 * pwritev2; a write with a deadline moves at most PIPE_BUF bytes a call):
 * the ends are opened O_NONBLOCK-free for their other users, and a call
 * after a positive poll that finds the pipe emptied (or filled) by another
 * thread meanwhile waits again instead of sleeping in the kernel past the
 * deadline.  On an ASC user thread a call without deadline takes the same
 * route (the wait parks the user thread, not its VP), a write a page at a
 * time.  A kernel without RWF_NOWAIT on pipes (Linux 6.1) reads and writes
 * through a non-blocking twin of the pipe opened via /proc/self/fd (two
 * more system calls); without /proc, read(2) and write(2) after the poll
 * (the race above comes back there).  Writes that
 * would raise SIGPIPE are avoided by blocking the signal for the calling
 * thread around the write and consuming any SIGPIPE it generated.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <asx/pipe.h>
#include "ipc/ipc.h"

int asx_pipe_open(struct asx_pipe_reader *r, struct asx_pipe_writer *w)
{
	int fds[2];

	r->fd = w->fd = -1;
	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	r->fd = fds[0];
	w->fd = fds[1];
	return 0;
}

/* Set once preadv2/pwritev2 said EOPNOTSUPP for RWF_NOWAIT on a pipe (Linux 6.1). */
static int no_rwf_nowait;

/*
 * A kernel without RWF_NOWAIT on pipes: the same pipe opened again through
 * /proc/self/fd (a FIFO open: a new file description of its own) with
 * O_NONBLOCK, so the descriptor the caller shares keeps its flags.  -1 when
 * that cannot be done (no /proc): the caller's descriptor is used as it is.
 */
static int nonblock_twin(int fd, int acc)
{
	char path[40];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, acc | O_NONBLOCK | O_CLOEXEC);
}

/*
 * readv(2) (@out: writev) that does not sleep: -1 and EAGAIN when the pipe
 * is empty (full).  RWF_NOWAIT, or the non-blocking twin without it.
 */
static ssize_t rw_nowait(int fd, const struct iovec *iov, int cnt, bool out)
{
	ssize_t n;
	int twin, e;

	if (!__atomic_load_n(&no_rwf_nowait, __ATOMIC_RELAXED)) {
		n = out ? pwritev2(fd, iov, cnt, -1, RWF_NOWAIT) :
			  preadv2(fd, iov, cnt, -1, RWF_NOWAIT);
		if (n >= 0 || errno != EOPNOTSUPP)
			return n;
		__atomic_store_n(&no_rwf_nowait, 1, __ATOMIC_RELAXED);
	}
	twin = nonblock_twin(fd, out ? O_WRONLY : O_RDONLY);
	if (twin >= 0)
		fd = twin;
	n = out ? writev(fd, iov, cnt) : readv(fd, iov, cnt);
	e = errno;
	if (twin >= 0)
		close(twin);
	errno = e;
	return n;
}

ssize_t asx_pipe_read(struct asx_pipe_reader *r, void *buf, size_t len,
		      const struct timespec *deadline)
{
	bool polled = deadline || asx__ipc_uthread();
	ssize_t n;
	int e;

	for (;;) {
		if (polled) {
			e = asx__ipc_wait(r->fd, POLLIN, deadline);
			if (e)
				return e;
		}
		n = polled ? rw_nowait(r->fd, &(struct iovec){ buf, len }, 1, false) :
			     read(r->fd, buf, len);
		if (n >= 0)
			return n;
		/* EAGAIN: another reader emptied the pipe after our poll */
		if (errno != EINTR && !(polled && errno == EAGAIN))
			return -errno;
	}
}

static void sigpipe_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGPIPE);
}

int asx__ipc_sigpipe_block(void)
{
	sigset_t set;

	sigpipe_set(&set);
	return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

void asx__ipc_sigpipe_take(void)
{
	static const struct timespec zero;
	sigset_t set;

	sigpipe_set(&set);
	while (sigtimedwait(&set, NULL, &zero) < 0 && errno == EINTR)
		;
}

ssize_t asx__ipc_writev_nosig(int fd, const struct iovec *iov, int cnt, unsigned int how)
{
	sigset_t set, old;
	bool pending_before = false;
	ssize_t n;
	int err;

	if (how & ASX__NOSIG_SOCK) {
		struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)cnt };

		do {
			n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		} while (n < 0 && errno == EINTR);
		return n < 0 ? -errno : n;
	}
	if (!(how & ASX__NOSIG_BLOCKED)) {
		sigset_t pend;

		sigpipe_set(&set);
		if (pthread_sigmask(SIG_BLOCK, &set, &old))
			return -EINVAL;
		sigpending(&pend);
		pending_before = sigismember(&pend, SIGPIPE);
	}
	do {
		if (how & ASX__NOSIG_NOWAIT) {
			n = rw_nowait(fd, iov, cnt, true);
		} else {
			n = writev(fd, iov, cnt);
		}
	} while (n < 0 && errno == EINTR);
	err = errno;
	/* take the SIGPIPE we caused, so it is not delivered on unblock */
	if (n < 0 && err == EPIPE && !pending_before)
		asx__ipc_sigpipe_take();
	if (!(how & ASX__NOSIG_BLOCKED))
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	return n < 0 ? -err : n;
}

/*
 * A blocking write from an ASC user thread: all of @len, a page at a time,
 * each once the pipe has room, so the VP never sleeps in write(2).
 */
static ssize_t uthread_write(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;
	int e;

	do {
		e = asx__ipc_wait(fd, POLLOUT, NULL);
		if (e)
			return done ? (ssize_t)done : e;
		n = asx__ipc_writev_nosig(fd, &(struct iovec){ (char *)buf + done,
				len - done > PIPE_BUF ? PIPE_BUF : len - done }, 1,
				ASX__NOSIG_NOWAIT);
		if (n == -EAGAIN)
			continue;	/* another writer filled it after our poll */
		if (n < 0)
			return done ? (ssize_t)done : n;
		done += (size_t)n;
	} while (done < len);
	return (ssize_t)done;
}

ssize_t asx_pipe_write(struct asx_pipe_writer *w, const void *buf, size_t len,
		       const struct timespec *deadline)
{
	ssize_t n;
	int e;

	if (!deadline && asx__ipc_uthread())
		return uthread_write(w->fd, buf, len);
	if (!deadline)
		return asx__ipc_writev_nosig(w->fd, &(struct iovec){ (void *)buf, len }, 1, 0);
	/*
	 * POLLOUT promises one free page, not room for @len: a larger
	 * write would wait for the reader past the deadline.  At most
	 * PIPE_BUF bytes fit the free page; write_n loops.
	 */
	if (len > PIPE_BUF)
		len = PIPE_BUF;
	do {
		e = asx__ipc_wait(w->fd, POLLOUT, deadline);
		if (e)
			return e;
		n = asx__ipc_writev_nosig(w->fd, &(struct iovec){ (void *)buf, len }, 1,
					  ASX__NOSIG_NOWAIT);
	} while (n == -EAGAIN);		/* another writer filled it after our poll */
	return n;
}

static ssize_t read_step(void *r, void *buf, size_t len, const struct timespec *deadline)
{
	return asx_pipe_read(r, buf, len, deadline);
}

ssize_t asx_pipe_read_n(struct asx_pipe_reader *r, void *buf, size_t len,
			const struct timespec *deadline, size_t *done)
{
	return asx__ipc_loop_n(read_step, r, buf, len, deadline, done);
}

static ssize_t write_step(void *w, void *buf, size_t len, const struct timespec *deadline)
{
	return asx_pipe_write(w, buf, len, deadline);
}

ssize_t asx_pipe_write_n(struct asx_pipe_writer *w, const void *buf, size_t len,
			 const struct timespec *deadline, size_t *done)
{
	/* the step only reads through the pointer */
	return asx__ipc_loop_n(write_step, w, (void *)buf, len, deadline, done);
}

int asx_pipe_reader_close(struct asx_pipe_reader *r)
{
	return asx__ipc_close_fd(&r->fd);
}

int asx_pipe_writer_close(struct asx_pipe_writer *w)
{
	return asx__ipc_close_fd(&w->fd);
}

int asx_fifo_make(const char *path, unsigned int mode)
{
	struct stat st;

	if (!path || !*path)
		return -EINVAL;
	if (mkfifo(path, (mode_t)mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(path, &st))
		return -errno;
	return S_ISFIFO(st.st_mode) ? 0 : -EEXIST;
}

int asx_fifo_open_reader(struct asx_pipe_reader *r, const char *path)
{
	int fd, e;

	r->fd = -1;
	if (!path)
		return -EINVAL;
	/* O_NONBLOCK so the open does not wait for a writer; reads block after */
	do {
		fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	} while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return -errno;
	e = asx__ipc_set_nonblock(fd, false);
	if (e) {
		close(fd);
		return e;
	}
	r->fd = fd;
	return 0;
}

int asx_fifo_open_writer(struct asx_pipe_writer *w, const char *path,
			 const struct timespec *deadline)
{
	struct timespec nap = { 0, 1000000 };	/* 1 ms, doubling up to 16 ms */
	int fd, e;

	w->fd = -1;
	if (!path)
		return -EINVAL;
	if (!deadline) {
		do {
			fd = open(path, O_WRONLY | O_CLOEXEC);
		} while (fd < 0 && errno == EINTR);
		if (fd < 0)
			return -errno;
		w->fd = fd;
		return 0;
	}
	/* Linux cannot wait for a FIFO reader with a timeout: probe until the deadline */
	for (;;) {
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0)
			break;
		if (errno != ENXIO && errno != EINTR)
			return -errno;
		if (asx_now_ns() >= asx_timespec_ns(deadline))
			return -ETIMEDOUT;
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 16000000)
			nap.tv_nsec *= 2;
	}
	e = asx__ipc_set_nonblock(fd, false);
	if (e) {
		close(fd);
		return e;
	}
	w->fd = fd;
	return 0;
}
