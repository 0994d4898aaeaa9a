/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/proactor.h - the Proactor: asynchronous operations and completion
 * handlers, on io_uring (Debian's liburing) or, where io_uring is missing
 * or forbidden, on the Reactor.
 *
 * A program starts an operation (accept, connect, read, write, ...) with
 * a completion handler, a struct asx_completion it owns (usually embedded
 * in its per-connection object) holding a callback and a user pointer;
 * the proactor performs the operation and, from the thread running
 * asx_proactor_run(), calls fn(c, res, user) with the operation's result:
 * a count or a descriptor (>= 0) or a negative errno.
 *
 * Lifetime of a completion handler (Documentation/reactor.rst, "Proactor"):
 *   - A start call that returns 0 owes exactly one callback: the operation
 *     completes, fails, is cancelled (-ECANCELED), times out (-ETIMEDOUT)
 *     or the proactor is closed (-ECANCELED), and fn runs once.  A start
 *     call that returns a negative value starts nothing: no callback.
 *   - From the start until fn is called, @c, the buffers and the iovec
 *     array belong to the proactor: do not touch, reuse or free them.
 *     Starting an operation on a handler in flight is -EBUSY.
 *   - Inside fn, @c is the caller's again: it may be reused at once
 *     (start the next operation) or freed.
 *   - fn is never called from inside a start, cancel or post call; it runs
 *     on the thread in asx_proactor_run()/run_once() or asx_proactor_close().
 *
 * Threads.  Every call may be made from any thread, and from inside a
 * callback, but asx_proactor_run*() by one thread at a time (another gets
 * -EBUSY, a callback -EDEADLK).  asx_proactor_post() is the way to hand
 * work to the loop from another thread.
 *
 * Back ends.  ASX_PROACTOR_URING submits each operation to an io_uring;
 * ASX_PROACTOR_REACTOR waits for readiness with a struct asx_reactor
 * (epoll) and makes the nonblocking system call (the descriptors it is
 * given are put in O_NONBLOCK mode).  Results are the same; a program
 * runs unchanged on either.  asx_proactor_open() picks io_uring when the
 * kernel allows it and falls back to the Reactor otherwise, saying why
 * (asx_proactor_why()); the environment variable ASX_PROACTOR=reactor or
 * =uring, or opts->backend, chooses instead.
 *
 * Errors are negative errno values (asx/common.h).
 * Full reference: Documentation/reactor.rst, "Proactor".
 */
#ifndef ASX_PROACTOR_H
#define ASX_PROACTOR_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_proactor;
struct asx_completion;

/*
 * @res: the operation's result (bytes moved, a new descriptor, 0) or a
 * negative errno; @user: c->user.
 */
typedef void (*asx_completion_fn)(struct asx_completion *c, int64_t res, void *user);

struct asx_completion {
	asx_completion_fn fn;
	void *user;
	/* libasx's state of the operation in flight, opaque. */
	union {
		void *asx__p[24];
		uint64_t asx__u[24];
	} asx__priv;
};

/* A handler not in flight: ASX_COMPLETION_INIT(fn, user) or asx_completion_init(). */
#define ASX_COMPLETION_INIT(f, u) { .fn = (f), .user = (u) }

static inline void asx_completion_init(struct asx_completion *c, asx_completion_fn fn,
				       void *user)
{
	unsigned int i;

	c->fn = fn;
	c->user = user;
	for (i = 0; i < sizeof(c->asx__priv.asx__u) / sizeof(c->asx__priv.asx__u[0]); i++)
		c->asx__priv.asx__u[i] = 0;
}

enum asx_proactor_backend {
	ASX_PROACTOR_AUTO = 0,	/* io_uring if allowed, else the Reactor */
	ASX_PROACTOR_URING,	/* io_uring or fail (-ENOSYS, -EPERM, ...) */
	ASX_PROACTOR_REACTOR,	/* the Reactor back end */
};

/* Declare with ASX_OPTS(struct asx_proactor_opts, o, .backend = ...). */
struct asx_proactor_opts {
	size_t sz;			/* sizeof(struct asx_proactor_opts) */
	enum asx_proactor_backend backend; /* AUTO: $ASX_PROACTOR, else io_uring if allowed */
	unsigned int entries;		/* io_uring submission queue size; 0: 256 */
};

/*
 * A new proactor in *@out.  0, or: -ENOSYS (io_uring asked for, but this
 * libasx was built without liburing, the kernel has no io_uring, or lacks
 * an operation this proactor uses), -EPERM (io_uring forbidden: sysctl
 * kernel.io_uring_disabled, a seccomp filter), -ENOMEM, -EMFILE, -EINVAL.
 * With AUTO, those io_uring errors are not returned: the Reactor back end
 * is opened instead.  Either way *@why (if not NULL) gets a static,
 * human-readable sentence saying which back end runs and why (or why the
 * open failed); asx_proactor_why() returns it later.
 */
ASX_API int asx_proactor_open(struct asx_proactor **out, const struct asx_proactor_opts *opts,
			      const char **why);
/*
 * Complete every operation in flight with -ECANCELED (their callbacks run
 * in the calling thread, before this returns; an accept or a read that
 * finished meanwhile completes with its result), then free the proactor.
 * 0, or -EBUSY (nothing done) while a thread runs the loop.  NULL: no-op.
 */
ASX_API int asx_proactor_close(struct asx_proactor *p);

/* ASX_PROACTOR_URING or ASX_PROACTOR_REACTOR. */
ASX_API enum asx_proactor_backend asx_proactor_backend(const struct asx_proactor *p);
/* The open's sentence (static storage). */
ASX_API const char *asx_proactor_why(const struct asx_proactor *p);

/*
 * Operations.  Each returns 0 (started: one callback owed) or -EBUSY (@c
 * in flight), -EINVAL, -ENOMEM; the operation's own errors come as the
 * callback's result.
 *
 * accept: res = the new connected descriptor (SOCK_CLOEXEC), which the
 * callback owns (a completion during close still carries one: close it).
 */
ASX_API int asx_proactor_accept(struct asx_proactor *p, struct asx_completion *c, int lfd);
/*
 * connect @fd (a socket not yet connected) to @addr (copied); res 0, or
 * the connect's error, or -ETIMEDOUT after @timeout_ns (0: no limit).
 */
ASX_API int asx_proactor_connect(struct asx_proactor *p, struct asx_completion *c, int fd,
				 const struct sockaddr *addr, socklen_t addrlen,
				 uint64_t timeout_ns);
/* read(2)/write(2) at the current position: res = bytes (0: end of file). */
ASX_API int asx_proactor_read(struct asx_proactor *p, struct asx_completion *c, int fd,
			      void *buf, size_t len);
ASX_API int asx_proactor_write(struct asx_proactor *p, struct asx_completion *c, int fd,
			       const void *buf, size_t len);
/* readv/writev; @iov (at most IOV_MAX entries) stays the proactor's until the callback. */
ASX_API int asx_proactor_readv(struct asx_proactor *p, struct asx_completion *c, int fd,
			       const struct iovec *iov, int iovcnt);
ASX_API int asx_proactor_writev(struct asx_proactor *p, struct asx_completion *c, int fd,
				const struct iovec *iov, int iovcnt);
/*
 * recv(2)/send(2) on a socket with @flags; send always adds MSG_NOSIGNAL
 * (a reset peer is -EPIPE or -ECONNRESET, never SIGPIPE).  A write may be
 * short: res is what was sent.
 */
ASX_API int asx_proactor_recv(struct asx_proactor *p, struct asx_completion *c, int fd,
			      void *buf, size_t len, int flags);
ASX_API int asx_proactor_send(struct asx_proactor *p, struct asx_completion *c, int fd,
			      const void *buf, size_t len, int flags);
/*
 * A timer: res 0 once @delay_ns (CLOCK_MONOTONIC) passed; timers complete
 * in deadline order.  One-shot: start it again in the callback to repeat.
 */
ASX_API int asx_proactor_timer(struct asx_proactor *p, struct asx_completion *c,
			       uint64_t delay_ns);

/*
 * Ask that @c's operation end: it completes with -ECANCELED, or with its
 * result if it finished first (the callback comes either way, once).
 * 0 (asked), -ENOENT (@c not in flight here: never started, or its
 * callback already ran or is running).
 */
ASX_API int asx_proactor_cancel(struct asx_proactor *p, struct asx_completion *c);

/*
 * Complete @c with @res on the loop's thread: from any thread, to hand
 * work to the loop.  0 or -EBUSY (@c in flight).
 */
ASX_API int asx_proactor_post(struct asx_proactor *p, struct asx_completion *c, int64_t res);

/*
 * The loop.  run_once waits until at least one completion ran or
 * @deadline (absolute CLOCK_MONOTONIC; NULL: no limit) passed, and returns
 * how many ran (0: timeout, or woken by stop), -EBUSY (another thread runs
 * the loop), -EDEADLK (from a callback), or a system error.  run runs
 * completions until asx_proactor_stop() and returns 0; stop is sticky
 * until run returns (a stop before run makes it return at once).
 */
ASX_API int asx_proactor_run_once(struct asx_proactor *p, const struct timespec *deadline);
ASX_API int asx_proactor_run(struct asx_proactor *p);
ASX_API void asx_proactor_stop(struct asx_proactor *p);

/* Operations in flight (a snapshot, for tests and assertions). */
ASX_API unsigned int asx_proactor_pending(struct asx_proactor *p);

#ifdef __cplusplus
}
#endif
#endif /* ASX_PROACTOR_H */
