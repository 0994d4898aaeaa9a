/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * ipc.h - internal helpers shared by the IPC SAP sources: deadline waits,
 * the send/recv loops, option handling.  Nothing here is exported.
 */
#ifndef ASX_IPC_INTERNAL_H
#define ASX_IPC_INTERNAL_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <asx/asc.h>
#include <asx/sock.h>

/* A validated, zero-extended copy of the caller's struct asx_sock_opts. */
struct ipc_opts {
	int sndbuf, rcvbuf, backlog;
	unsigned int flags;
	const struct asx_addr *local;
};

#define IPC_KNOWN_FLAGS (ASX_SOCK_REUSEADDR | ASX_SOCK_REUSEPORT | ASX_SOCK_NODELAY | \
			 ASX_SOCK_V6ONLY | ASX_SOCK_NONBLOCK)

int asx__ipc_opts_load(struct ipc_opts *o, const struct asx_sock_opts *in);
/* socket(@family, @type | SOCK_CLOEXEC) with the options that precede bind applied. */
int asx__ipc_socket(int family, int type, const struct ipc_opts *o);
int asx__ipc_set_int(int fd, int level, int name, int val);
int asx__ipc_set_nonblock(int fd, bool on);
int asx__ipc_close_fd(int *fd);

/*
 * True on an ASC user thread: there a call must not sleep in the kernel
 * (that would stop its VP), so even a call without a deadline transfers
 * with MSG_DONTWAIT and waits in asx__ipc_wait(), which parks the user
 * thread while the ASC's sentinel watches the descriptor.
 */
static inline bool asx__ipc_uthread(void)
{
	return asx_asc_thread_self() != NULL;
}

/*
 * Wait for @events on @fd until @deadline (NULL: for ever).  0 when the
 * handle is ready (or in error: the next system call reports it),
 * -ETIMEDOUT, or another negative errno.  On an ASC user thread only that
 * thread waits (asx_asc_thread_wait_fd()); the VP runs the others.
 */
int asx__ipc_wait(int fd, short events, const struct timespec *deadline);

/*
 * After a transfer's system call failed (errno set): 0 to retry it (EINTR,
 * or EAGAIN under a deadline once @fd is ready for @events; or EAGAIN on a
 * user thread without deadline, the handle not O_NONBLOCK, once ready),
 * otherwise the negative errno to return (-ETIMEDOUT when the deadline
 * passed).
 */
int asx__ipc_retry(int fd, short events, const struct timespec *deadline);

/* One transfer of at most @len bytes on @obj: bytes moved, 0 at end of file, or -errno. */
typedef ssize_t ipc_step_fn(void *obj, void *buf, size_t len, const struct timespec *deadline);

/*
 * Repeat @step until @len bytes moved, end of file or an error; *@done (if
 * not NULL) gets the bytes moved.  Returns them, or the error.
 */
ssize_t asx__ipc_loop_n(ipc_step_fn *step, void *obj, void *buf, size_t len,
		   const struct timespec *deadline, size_t *done);

/*
 * The one-shot and looping transfer primitives.  With @deadline NULL on a
 * pthread they are the plain blocking calls; otherwise (a deadline, or an
 * ASC user thread) MSG_DONTWAIT plus asx__ipc_wait().
 */
ssize_t asx__ipc_sendmsg(int fd, struct msghdr *mh, int flags, const struct timespec *deadline);
ssize_t asx__ipc_recvmsg(int fd, struct msghdr *mh, int flags, const struct timespec *deadline);
ssize_t asx__ipc_send(int fd, const void *buf, size_t len, const struct timespec *deadline);
ssize_t asx__ipc_recv(int fd, void *buf, size_t len, const struct timespec *deadline);
ssize_t asx__ipc_send_n(int fd, const void *buf, size_t len, const struct timespec *deadline,
		   size_t *done);
ssize_t asx__ipc_recv_n(int fd, void *buf, size_t len, const struct timespec *deadline,
		   size_t *done);
ssize_t asx__ipc_sendv_n(int fd, const struct iovec *iov, int iovcnt,
		    const struct timespec *deadline, size_t *done);
ssize_t asx__ipc_recvv_n(int fd, const struct iovec *iov, int iovcnt,
		    const struct timespec *deadline, size_t *done);

/*
 * writev(2) that raises no SIGPIPE: -EPIPE instead (a pipe without
 * reader, a socket whose peer is gone).  @how ASX__NOSIG_SOCK: @fd is a
 * socket, sendmsg(MSG_NOSIGNAL).  Otherwise SIGPIPE is blocked in the
 * calling thread for the call, or already (ASX__NOSIG_BLOCKED: the
 * thread keeps it blocked, asx__ipc_sigpipe_block()), and the one the
 * write raised is taken with sigtimedwait().  Bytes written or -errno.
 */
#define ASX__NOSIG_SOCK		1u
#define ASX__NOSIG_BLOCKED	2u
#define ASX__NOSIG_NOWAIT	4u	/* a pipe: never sleep in the kernel (RWF_NOWAIT) */
ssize_t asx__ipc_writev_nosig(int fd, const struct iovec *iov, int cnt, unsigned int how);
/* Block SIGPIPE in the calling thread for good (a library thread): 0 or -errno. */
int asx__ipc_sigpipe_block(void);
/* Take a SIGPIPE pending on the calling thread (which blocks it), if any. */
void asx__ipc_sigpipe_take(void);

/* Accept on a (non-blocking) listening handle; returns the new fd or -errno. */
int asx__ipc_accept(int lfd, unsigned int flags, struct asx_addr *peer,
	       const struct timespec *deadline);
/* The stream connector core: returns the connected fd or -errno. */
int asx__ipc_connect(const struct asx_sock_connector *c, const struct asx_addr *to,
		const struct timespec *deadline);
int asx__ipc_connect_finish(int fd, unsigned int flags, const struct timespec *deadline);

/* Descriptor passing over a UNIX socket. */
int asx__ipc_send_fd(int sock, int fd, const struct asx_addr *to, const struct timespec *deadline);
int asx__ipc_recv_fd(int sock, struct asx_addr *from, const struct timespec *deadline);

#endif /* ASX_IPC_INTERNAL_H */
