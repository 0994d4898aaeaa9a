/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/sock.h - IPC SAP: typed socket wrappers (SOCK SAP and LSOCK SAP).
 *
 * Each role is its own struct type, so a call that makes no sense for a
 * role does not compile (recv on an acceptor, accept on a datagram, send
 * on a connector, connect on an acceptor, send_handle on an INET stream):
 *
 *   struct asx_sock_acceptor   passive: socket + bind + listen; accept
 *   struct asx_sock_connector  active connection factory (holds options)
 *   struct asx_sock_stream     a connected byte stream (TCP or UNIX)
 *   struct asx_sock_dgram      unconnected datagrams (sendto / recvfrom)
 *   struct asx_sock_cdgram     connected datagrams (send / recv)
 *   struct asx_sock_mcast      UDP multicast receiver/sender (join/leave)
 *   struct asx_sock_bcast      UDP broadcast sender/receiver
 *   struct asx_lsock_acceptor  UNIX-domain acceptor yielding lsock streams
 *   struct asx_lsock_connector UNIX-domain connector
 *   struct asx_lsock_stream    UNIX stream: a stream plus descriptor passing
 *   struct asx_lsock_dgram     UNIX datagrams plus descriptor passing
 *
 * Every role begins with a struct asx_sock, the IPC SAP root (a handle).
 * ASX_SOCK(p) turns a pointer to any role into a struct asx_sock * for
 * the calls every socket shares (close, options, local address, handle)
 * and rejects anything else at compile time.  An lsock stream contains a
 * sock stream (member .stream), so every stream call applies to it too:
 * asx_sock_stream_send_n(&ls.stream, ...).
 *
 * The structs are small values the caller owns (declare them on the
 * stack or embed them); their fields are private.  A closed or never
 * opened object has handle -1; closing it again is harmless.
 *
 * All descriptors are created close-on-exec.  Sends never raise SIGPIPE
 * (MSG_NOSIGNAL): a closed peer gives -EPIPE.  EINTR is retried inside
 * every call.  Deadlines are absolute CLOCK_MONOTONIC times (NULL: wait
 * for ever) and an expired one gives -ETIMEDOUT; without a deadline the
 * calls are the plain blocking system calls, so the wrappers cost one
 * function call over the raw socket API.
 */
#ifndef ASX_SOCK_H
#define ASX_SOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <asx/common.h>
#include <asx/addr.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ root */

struct asx_sock {
	int fd;				/* private: use asx_sock_handle() */
};

struct asx_sock_acceptor { struct asx_sock sock; unsigned int flags; };
struct asx_sock_connector {
	struct asx_sock sock;		/* unused handle (-1): a factory */
	int sndbuf, rcvbuf;		/* private copies of the options */
	unsigned int flags;
	struct asx_addr local;
};
struct asx_sock_stream { struct asx_sock sock; };
struct asx_sock_dgram { struct asx_sock sock; };
struct asx_sock_cdgram { struct asx_sock sock; };
struct asx_sock_mcast { struct asx_sock sock; int ifindex; };
struct asx_sock_bcast { struct asx_sock sock; };
struct asx_lsock_acceptor { struct asx_sock_acceptor acc; };
struct asx_lsock_connector { struct asx_sock_connector conn; };
struct asx_lsock_stream { struct asx_sock_stream stream; };
struct asx_lsock_dgram { struct asx_sock_dgram dgram; };

#define ASX__SOCK_CAST(T, p) T *: (struct asx_sock *)(void *)(p)
#define ASX__SOCK_CCAST(T, p) const T *: (const struct asx_sock *)(const void *)(p)

/* Any role pointer -> its struct asx_sock root (compile error otherwise). */
#define ASX_SOCK(p) _Generic((p),					\
	ASX__SOCK_CAST(struct asx_sock, p),				\
	ASX__SOCK_CAST(struct asx_sock_acceptor, p),			\
	ASX__SOCK_CAST(struct asx_sock_connector, p),			\
	ASX__SOCK_CAST(struct asx_sock_stream, p),			\
	ASX__SOCK_CAST(struct asx_sock_dgram, p),			\
	ASX__SOCK_CAST(struct asx_sock_cdgram, p),			\
	ASX__SOCK_CAST(struct asx_sock_mcast, p),			\
	ASX__SOCK_CAST(struct asx_sock_bcast, p),			\
	ASX__SOCK_CAST(struct asx_lsock_acceptor, p),			\
	ASX__SOCK_CAST(struct asx_lsock_connector, p),			\
	ASX__SOCK_CAST(struct asx_lsock_stream, p),			\
	ASX__SOCK_CAST(struct asx_lsock_dgram, p),			\
	ASX__SOCK_CCAST(struct asx_sock, p),				\
	ASX__SOCK_CCAST(struct asx_sock_acceptor, p),			\
	ASX__SOCK_CCAST(struct asx_sock_connector, p),			\
	ASX__SOCK_CCAST(struct asx_sock_stream, p),			\
	ASX__SOCK_CCAST(struct asx_sock_dgram, p),			\
	ASX__SOCK_CCAST(struct asx_sock_cdgram, p),			\
	ASX__SOCK_CCAST(struct asx_sock_mcast, p),			\
	ASX__SOCK_CCAST(struct asx_sock_bcast, p),			\
	ASX__SOCK_CCAST(struct asx_lsock_acceptor, p),			\
	ASX__SOCK_CCAST(struct asx_lsock_connector, p),			\
	ASX__SOCK_CCAST(struct asx_lsock_stream, p),			\
	ASX__SOCK_CCAST(struct asx_lsock_dgram, p))

/* The raw descriptor (the papers' get_handle), -1 when closed. */
static inline int asx_sock_handle(const struct asx_sock *s)
{
	return s->fd;
}
#define asx_handle(p) asx_sock_handle(ASX_SOCK(p))

/* Close the handle (an acceptor on a UNIX path also unlinks the path). */
ASX_API int asx_sock_close(struct asx_sock *s);
/* Take over a descriptor the caller opened (the papers' set_handle). */
ASX_API void asx_sock_set_handle(struct asx_sock *s, int fd);
/* The bound local address (getsockname). */
ASX_API int asx_sock_local_addr(const struct asx_sock *s, struct asx_addr *out);

/* Socket options, without raw setsockopt.  Values in bytes. */
ASX_API int asx_sock_set_sndbuf(struct asx_sock *s, int bytes);
ASX_API int asx_sock_set_rcvbuf(struct asx_sock *s, int bytes);
/* What the kernel granted (Linux doubles the request for bookkeeping). */
ASX_API int asx_sock_sndbuf(const struct asx_sock *s);
ASX_API int asx_sock_rcvbuf(const struct asx_sock *s);
ASX_API int asx_sock_set_reuseaddr(struct asx_sock *s, bool on);
ASX_API int asx_sock_set_nonblock(struct asx_sock *s, bool on);

/*
 * Options applied at open time, before bind/listen/connect (buffer sizes
 * must be set then for TCP window scaling to see them).  Declare with
 *   ASX_OPTS(struct asx_sock_opts, o, .sndbuf = 65536, .flags = ASX_SOCK_NODELAY);
 * @sz lets the struct grow: a caller built against a newer header whose
 * extra fields are all zero is accepted, non-zero ones give -E2BIG.
 */
struct asx_sock_opts {
	size_t sz;			/* sizeof(struct asx_sock_opts) */
	int sndbuf;			/* SO_SNDBUF; 0: system default */
	int rcvbuf;			/* SO_RCVBUF; 0: system default */
	int backlog;			/* acceptor listen(2) backlog; 0: SOMAXCONN */
	unsigned int flags;		/* ASX_SOCK_* below */
	const struct asx_addr *local;	/* connector/cdgram: bind here first */
};
#define ASX_SOCK_REUSEADDR	0x01u	/* SO_REUSEADDR */
#define ASX_SOCK_REUSEPORT	0x02u	/* SO_REUSEPORT */
#define ASX_SOCK_NODELAY	0x04u	/* TCP_NODELAY on the resulting streams */
#define ASX_SOCK_V6ONLY		0x08u	/* IPV6_V6ONLY */
#define ASX_SOCK_NONBLOCK	0x10u	/* leave the handle O_NONBLOCK */

/* ------------------------------------------------------------ acceptor */

/* socket + bind + listen in one call (any family, SOCK_STREAM). */
ASX_API int asx_sock_acceptor_open(struct asx_sock_acceptor *acc, const struct asx_addr *local,
				   const struct asx_sock_opts *opts);
/*
 * Accept one connection into @out (close-on-exec, blocking); @peer may be
 * NULL.  Waits until @deadline (NULL: for ever): -ETIMEDOUT.  Streams
 * inherit ASX_SOCK_NODELAY from the acceptor's options.
 */
ASX_API int asx_sock_acceptor_accept(struct asx_sock_acceptor *acc, struct asx_sock_stream *out,
				     struct asx_addr *peer, const struct timespec *deadline);
ASX_API int asx_sock_acceptor_close(struct asx_sock_acceptor *acc);

/* ------------------------------------------------------------ connector */

ASX_API int asx_sock_connector_init(struct asx_sock_connector *c,
				    const struct asx_sock_opts *opts);
/*
 * Connect a new stream to @to.  @deadline NULL: a blocking connect.
 * Otherwise a non-blocking connect waited for until @deadline:
 * -ETIMEDOUT when it passes (the half-open socket is closed).  Errors from
 * the peer: -ECONNREFUSED, -ENETUNREACH, -EHOSTUNREACH, ...
 */
ASX_API int asx_sock_connector_connect(const struct asx_sock_connector *c,
				       struct asx_sock_stream *out, const struct asx_addr *to,
				       const struct timespec *deadline);
/*
 * Split form for event loops: start returns 0 (connected at once) or
 * -EINPROGRESS with @out holding a non-blocking handle to watch for
 * writability; complete waits until @deadline (a past deadline only
 * checks) and returns 0 with @out blocking again, -ETIMEDOUT leaving
 * @out open for a later try, or the connect error with @out closed.
 */
ASX_API int asx_sock_connector_start(const struct asx_sock_connector *c,
				     struct asx_sock_stream *out, const struct asx_addr *to);
ASX_API int asx_sock_connector_complete(const struct asx_sock_connector *c,
					struct asx_sock_stream *out,
					const struct timespec *deadline);

/* ------------------------------------------------------------ stream */

/* One send/recv: the byte count (recv: 0 at end of stream) or -errno. */
ASX_API ssize_t asx_sock_stream_send(struct asx_sock_stream *s, const void *buf, size_t len,
				     const struct timespec *deadline);
ASX_API ssize_t asx_sock_stream_recv(struct asx_sock_stream *s, void *buf, size_t len,
				     const struct timespec *deadline);
/*
 * Loop over short writes/reads and EINTR until all @len bytes moved.
 * Returns @len; recv_n returns less (possibly 0) if the peer closed first;
 * a negative errno on error or -ETIMEDOUT at @deadline.  @done (may be
 * NULL) always receives the number of bytes moved.  On a non-blocking
 * socket (ASX_SOCK_NONBLOCK, or O_NONBLOCK set otherwise) with @deadline
 * NULL nothing waits: a step that would block returns -EAGAIN at once,
 * with *@done what moved before it; pass a deadline to wait for the rest.
 */
ASX_API ssize_t asx_sock_stream_send_n(struct asx_sock_stream *s, const void *buf, size_t len,
				       const struct timespec *deadline, size_t *done);
ASX_API ssize_t asx_sock_stream_recv_n(struct asx_sock_stream *s, void *buf, size_t len,
				       const struct timespec *deadline, size_t *done);
/* Scatter/gather, one call; and the _n forms, which never write to @iov. */
ASX_API ssize_t asx_sock_stream_sendv(struct asx_sock_stream *s, const struct iovec *iov,
				      int iovcnt, const struct timespec *deadline);
ASX_API ssize_t asx_sock_stream_recvv(struct asx_sock_stream *s, const struct iovec *iov,
				      int iovcnt, const struct timespec *deadline);
ASX_API ssize_t asx_sock_stream_sendv_n(struct asx_sock_stream *s, const struct iovec *iov,
					int iovcnt, const struct timespec *deadline,
					size_t *done);
ASX_API ssize_t asx_sock_stream_recvv_n(struct asx_sock_stream *s, const struct iovec *iov,
					int iovcnt, const struct timespec *deadline,
					size_t *done);
/* Half-close: shutdown(SHUT_RD) / shutdown(SHUT_WR). */
ASX_API int asx_sock_stream_close_reader(struct asx_sock_stream *s);
ASX_API int asx_sock_stream_close_writer(struct asx_sock_stream *s);
ASX_API int asx_sock_stream_close(struct asx_sock_stream *s);
ASX_API int asx_sock_stream_peer_addr(const struct asx_sock_stream *s, struct asx_addr *out);
/* TCP_NODELAY (-EOPNOTSUPP on a UNIX stream). */
ASX_API int asx_sock_stream_set_nodelay(struct asx_sock_stream *s, bool on);

/* ------------------------------------------------------------ datagrams */

/* Bind a UDP (or UNIX datagram) socket to @local ("*:0": any port). */
ASX_API int asx_sock_dgram_open(struct asx_sock_dgram *d, const struct asx_addr *local,
				const struct asx_sock_opts *opts);
ASX_API ssize_t asx_sock_dgram_send(struct asx_sock_dgram *d, const void *buf, size_t len,
				    const struct asx_addr *to, const struct timespec *deadline);
/* @from may be NULL.  A datagram longer than @len is truncated: -EMSGSIZE. */
ASX_API ssize_t asx_sock_dgram_recv(struct asx_sock_dgram *d, void *buf, size_t len,
				    struct asx_addr *from, const struct timespec *deadline);
ASX_API ssize_t asx_sock_dgram_sendv(struct asx_sock_dgram *d, const struct iovec *iov,
				     int iovcnt, const struct asx_addr *to,
				     const struct timespec *deadline);
ASX_API ssize_t asx_sock_dgram_recvv(struct asx_sock_dgram *d, const struct iovec *iov,
				     int iovcnt, struct asx_addr *from,
				     const struct timespec *deadline);
ASX_API int asx_sock_dgram_close(struct asx_sock_dgram *d);

/* Connected datagrams: only @remote's datagrams arrive; opts->local binds. */
ASX_API int asx_sock_cdgram_open(struct asx_sock_cdgram *d, const struct asx_addr *remote,
				 const struct asx_sock_opts *opts);
ASX_API ssize_t asx_sock_cdgram_send(struct asx_sock_cdgram *d, const void *buf, size_t len,
				     const struct timespec *deadline);
/* -ECONNREFUSED if an earlier datagram drew an ICMP port unreachable. */
ASX_API ssize_t asx_sock_cdgram_recv(struct asx_sock_cdgram *d, void *buf, size_t len,
				     const struct timespec *deadline);
ASX_API int asx_sock_cdgram_close(struct asx_sock_cdgram *d);

/*
 * Multicast (IPv4 and IPv6).  open binds the group's port (wildcard
 * address, SO_REUSEADDR so several receivers share it) and selects the
 * outgoing interface @ifname (NULL: the kernel's choice).  join/leave
 * take a group and an interface name (NULL: the one given to open).
 * send goes to @group; loop (default on) and hops (default 1; 0 keeps
 * the datagrams on this host) control where it goes.
 */
ASX_API int asx_sock_mcast_open(struct asx_sock_mcast *m, const struct asx_addr *group,
				const char *ifname, const struct asx_sock_opts *opts);
ASX_API int asx_sock_mcast_join(struct asx_sock_mcast *m, const struct asx_addr *group,
				const char *ifname);
ASX_API int asx_sock_mcast_leave(struct asx_sock_mcast *m, const struct asx_addr *group,
				 const char *ifname);
ASX_API int asx_sock_mcast_set_loop(struct asx_sock_mcast *m, bool on);
ASX_API int asx_sock_mcast_set_hops(struct asx_sock_mcast *m, int hops);
ASX_API ssize_t asx_sock_mcast_send(struct asx_sock_mcast *m, const void *buf, size_t len,
				    const struct asx_addr *group, const struct timespec *deadline);
ASX_API ssize_t asx_sock_mcast_recv(struct asx_sock_mcast *m, void *buf, size_t len,
				    struct asx_addr *from, const struct timespec *deadline);
ASX_API int asx_sock_mcast_close(struct asx_sock_mcast *m);

/* Broadcast (IPv4): a UDP socket bound to @local with SO_BROADCAST on. */
ASX_API int asx_sock_bcast_open(struct asx_sock_bcast *b, const struct asx_addr *local,
				const struct asx_sock_opts *opts);
ASX_API ssize_t asx_sock_bcast_send(struct asx_sock_bcast *b, const void *buf, size_t len,
				    const struct asx_addr *bcast_addr,
				    const struct timespec *deadline);
ASX_API ssize_t asx_sock_bcast_recv(struct asx_sock_bcast *b, void *buf, size_t len,
				    struct asx_addr *from, const struct timespec *deadline);
ASX_API int asx_sock_bcast_close(struct asx_sock_bcast *b);

/* ------------------------------------------------------------ LSOCK */

/* UNIX-domain only (-EAFNOSUPPORT otherwise). */
ASX_API int asx_lsock_acceptor_open(struct asx_lsock_acceptor *acc,
				    const struct asx_addr *local,
				    const struct asx_sock_opts *opts);
ASX_API int asx_lsock_acceptor_accept(struct asx_lsock_acceptor *acc,
				      struct asx_lsock_stream *out, struct asx_addr *peer,
				      const struct timespec *deadline);
ASX_API int asx_lsock_acceptor_close(struct asx_lsock_acceptor *acc);
ASX_API int asx_lsock_connector_init(struct asx_lsock_connector *c,
				     const struct asx_sock_opts *opts);
ASX_API int asx_lsock_connector_connect(const struct asx_lsock_connector *c,
					struct asx_lsock_stream *out,
					const struct asx_addr *to,
					const struct timespec *deadline);
/* SPIPE: a connected pair of UNIX streams (bidirectional, passes fds). */
ASX_API int asx_lsock_stream_pair(struct asx_lsock_stream *a, struct asx_lsock_stream *b);
ASX_API int asx_lsock_stream_close(struct asx_lsock_stream *s);
/*
 * Pass an open descriptor to the peer (SCM_RIGHTS with one data byte);
 * the peer gets a new descriptor, close-on-exec, for the same open file.
 * recv_handle returns it (>= 0), -ECONNRESET at end of stream, -EBADMSG
 * if the message carried no descriptor, -ETIMEDOUT at @deadline.  A message
 * with several descriptors (up to the kernel's 253) gives the first; the
 * others are closed, never left open in the receiver.
 */
ASX_API int asx_lsock_stream_send_handle(struct asx_lsock_stream *s, int fd,
					 const struct timespec *deadline);
ASX_API int asx_lsock_stream_recv_handle(struct asx_lsock_stream *s,
					 const struct timespec *deadline);

ASX_API int asx_lsock_dgram_open(struct asx_lsock_dgram *d, const struct asx_addr *local,
				 const struct asx_sock_opts *opts);
/* A connected pair of UNIX datagram sockets. */
ASX_API int asx_lsock_dgram_pair(struct asx_lsock_dgram *a, struct asx_lsock_dgram *b);
/* @to NULL: the connected peer (pairs). */
ASX_API int asx_lsock_dgram_send_handle(struct asx_lsock_dgram *d, int fd,
					const struct asx_addr *to,
					const struct timespec *deadline);
ASX_API int asx_lsock_dgram_recv_handle(struct asx_lsock_dgram *d, struct asx_addr *from,
					const struct timespec *deadline);
ASX_API int asx_lsock_dgram_close(struct asx_lsock_dgram *d);

#ifdef __cplusplus
}
#endif
#endif /* ASX_SOCK_H */
