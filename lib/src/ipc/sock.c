// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sock.c - the IPC SAP root (handle, close, options) and the connection
 * roles: acceptor, connector, stream.
 *
 * The listening handle of an acceptor is always O_NONBLOCK inside: accept
 * first polls, then accept4()s, and a connection that vanished between
 * the two (a reset in the backlog) sends it back to polling instead of
 * blocking past the deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include "asc/wait.h"
#include "core/compiler.h"
#include "core/probes.h"
#include "core/opts.h"

/* ------------------------------------------------------------ options */

int asx__ipc_opts_load(struct ipc_opts *o, const struct asx_sock_opts *in)
{
	struct asx_sock_opts c;
	int r;

	memset(o, 0, sizeof(*o));
	r = ASX__OPTS_COPY(&c, in);
	if (r)
		return r;
	if ((c.flags & ~IPC_KNOWN_FLAGS) || c.sndbuf < 0 || c.rcvbuf < 0 || c.backlog < 0)
		return -EINVAL;
	o->sndbuf = c.sndbuf;
	o->rcvbuf = c.rcvbuf;
	o->backlog = c.backlog;
	o->flags = c.flags;
	o->local = c.local;
	return 0;
}

static bool is_inet(int family)
{
	return family == AF_INET || family == AF_INET6;
}

int asx__ipc_socket(int family, int type, const struct ipc_opts *o)
{
	int fd, r = 0;

	fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (o->sndbuf)
		r = asx__ipc_set_int(fd, SOL_SOCKET, SO_SNDBUF, o->sndbuf);
	if (!r && o->rcvbuf)
		r = asx__ipc_set_int(fd, SOL_SOCKET, SO_RCVBUF, o->rcvbuf);
	if (!r && (o->flags & ASX_SOCK_REUSEADDR))
		r = asx__ipc_set_int(fd, SOL_SOCKET, SO_REUSEADDR, 1);
	if (!r && (o->flags & ASX_SOCK_REUSEPORT))
		r = asx__ipc_set_int(fd, SOL_SOCKET, SO_REUSEPORT, 1);
	if (!r && family == AF_INET6 && (o->flags & ASX_SOCK_V6ONLY))
		r = asx__ipc_set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1);
	if (!r && type == SOCK_STREAM && is_inet(family) && (o->flags & ASX_SOCK_NODELAY))
		r = asx__ipc_set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
	if (r) {
		close(fd);
		return r;
	}
	return fd;
}

/* ------------------------------------------------------------ root */

int asx_sock_close(struct asx_sock *s)
{
	return asx__ipc_close_fd(&s->fd);
}

void asx_sock_set_handle(struct asx_sock *s, int fd)
{
	s->fd = fd;
}

int asx_sock_local_addr(const struct asx_sock *s, struct asx_addr *out)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(s->fd, (struct sockaddr *)&ss, &len))
		return -errno;
	return asx_addr_from_sockaddr(out, (struct sockaddr *)&ss, len);
}

int asx_sock_set_sndbuf(struct asx_sock *s, int bytes)
{
	return bytes < 0 ? -EINVAL : asx__ipc_set_int(s->fd, SOL_SOCKET, SO_SNDBUF, bytes);
}

int asx_sock_set_rcvbuf(struct asx_sock *s, int bytes)
{
	return bytes < 0 ? -EINVAL : asx__ipc_set_int(s->fd, SOL_SOCKET, SO_RCVBUF, bytes);
}

static int get_int(int fd, int level, int name)
{
	int v = 0;
	socklen_t len = sizeof(v);

	return getsockopt(fd, level, name, &v, &len) ? -errno : v;
}

int asx_sock_sndbuf(const struct asx_sock *s)
{
	return get_int(s->fd, SOL_SOCKET, SO_SNDBUF);
}

int asx_sock_rcvbuf(const struct asx_sock *s)
{
	return get_int(s->fd, SOL_SOCKET, SO_RCVBUF);
}

int asx_sock_set_reuseaddr(struct asx_sock *s, bool on)
{
	return asx__ipc_set_int(s->fd, SOL_SOCKET, SO_REUSEADDR, on);
}

int asx_sock_set_nonblock(struct asx_sock *s, bool on)
{
	return asx__ipc_set_nonblock(s->fd, on);
}

/* ------------------------------------------------------------ acceptor */

static int acceptor_open(struct asx_sock_acceptor *acc, const struct asx_addr *local,
			 const struct asx_sock_opts *opts, bool unix_only)
{
	struct ipc_opts o;
	int fd, r, family;

	acc->sock.fd = -1;
	acc->flags = 0;
	r = asx__ipc_opts_load(&o, opts);
	if (r)
		return r;
	if (!local || !local->len)
		return -EINVAL;
	family = local->u.sa.sa_family;
	if (unix_only && family != AF_UNIX)
		return -EAFNOSUPPORT;
	fd = asx__ipc_socket(family, SOCK_STREAM | SOCK_NONBLOCK, &o);
	if (fd < 0)
		return fd;
	if (bind(fd, asx_addr_sockaddr(local), local->len) ||
	    listen(fd, o.backlog ? o.backlog : SOMAXCONN)) {
		r = -errno;
		close(fd);
		return r;
	}
	acc->sock.fd = fd;
	acc->flags = o.flags;
	ASX_PROBE2(ipc_listen, fd, family);
	return 0;
}

int asx_sock_acceptor_open(struct asx_sock_acceptor *acc, const struct asx_addr *local,
			   const struct asx_sock_opts *opts)
{
	return acceptor_open(acc, local, opts, false);
}

int asx__ipc_accept(int lfd, unsigned int flags, struct asx_addr *peer,
	       const struct timespec *deadline)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, r;

	for (;;) {
		len = sizeof(ss);
		fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_CLOEXEC |
			     ((flags & ASX_SOCK_NONBLOCK) ? SOCK_NONBLOCK : 0));
		if (fd >= 0)
			break;
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		/* a non-blocking acceptor without a deadline does not wait */
		if ((flags & ASX_SOCK_NONBLOCK) && !deadline)
			return -EAGAIN;
		r = asx__ipc_wait(lfd, POLLIN, deadline);
		if (r)
			return r;
	}
	if (peer) {
		r = asx_addr_from_sockaddr(peer, (struct sockaddr *)&ss, len);
		if (r) {
			/* an unbound UNIX peer has no name: report an empty address */
			memset(peer, 0, sizeof(*peer));
		}
	}
	ASX_PROBE2(ipc_accept, lfd, fd);
	return fd;
}

int asx_sock_acceptor_accept(struct asx_sock_acceptor *acc, struct asx_sock_stream *out,
			     struct asx_addr *peer, const struct timespec *deadline)
{
	int fd = asx__ipc_accept(acc->sock.fd, acc->flags, peer, deadline);

	out->sock.fd = fd < 0 ? -1 : fd;
	return fd < 0 ? fd : 0;
}

int asx_sock_acceptor_close(struct asx_sock_acceptor *acc)
{
	struct asx_addr a;

	if (acc->sock.fd >= 0 && !asx_sock_local_addr(&acc->sock, &a) &&
	    a.u.sa.sa_family == AF_UNIX && !asx_addr_is_abstract(&a) &&
	    a.len > offsetof(struct sockaddr_un, sun_path) && a.u.un.sun_path[0])
		unlink(a.u.un.sun_path);
	return asx__ipc_close_fd(&acc->sock.fd);
}

/* ------------------------------------------------------------ connector */

int asx_sock_connector_init(struct asx_sock_connector *c, const struct asx_sock_opts *opts)
{
	struct ipc_opts o;
	int r;

	memset(c, 0, sizeof(*c));
	c->sock.fd = -1;
	r = asx__ipc_opts_load(&o, opts);
	if (r)
		return r;
	c->sndbuf = o.sndbuf;
	c->rcvbuf = o.rcvbuf;
	c->flags = o.flags;
	if (o.local)
		c->local = *o.local;
	return 0;
}

/* Wait for a non-blocking connect to finish; 0 or -errno (fd left open). */
int asx__ipc_connect_finish(int fd, unsigned int flags, const struct timespec *deadline)
{
	struct timespec now;
	int r, err = 0;
	socklen_t len = sizeof(err);

	if (!deadline) {
		/* a blocking connect interrupted by a signal goes on in the background */
		r = asx__ipc_wait(fd, POLLOUT, NULL);
	} else if (asx_timespec_ns(deadline) <= asx_now_ns()) {
		/* an expired deadline: look once, do not wait */
		r = asx__ipc_wait(fd, POLLOUT, asx_deadline(&now, 0));
	} else {
		r = asx__ipc_wait(fd, POLLOUT, deadline);
	}
	if (r)
		return r;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -errno;
	if (err)
		return -err;
	if (!(flags & ASX_SOCK_NONBLOCK))
		return asx__ipc_set_nonblock(fd, false);
	return 0;
}

/*
 * Create, configure, bind and start connecting; the fd (>= 0) or -errno.
 * @wait: a full UNIX-domain backlog (EAGAIN from a non-blocking connect)
 * is waited out until @deadline, as a blocking connect would.
 */
static int connect_start(const struct asx_sock_connector *c, const struct asx_addr *to,
			 bool nonblock, int *in_progress, bool wait,
			 const struct timespec *deadline)
{
	struct ipc_opts o = {
		.sndbuf = c->sndbuf, .rcvbuf = c->rcvbuf, .flags = c->flags,
	};
	int fd, r;

	*in_progress = 0;
	if (!to || !to->len)
		return -EINVAL;
	fd = asx__ipc_socket(to->u.sa.sa_family, SOCK_STREAM | (nonblock ? SOCK_NONBLOCK : 0), &o);
	if (fd < 0)
		return fd;
	if (c->local.len && bind(fd, asx_addr_sockaddr(&c->local), c->local.len)) {
		r = -errno;
		close(fd);
		return r;
	}
	if (wait && nonblock)
		r = asx__connect_retry(fd, asx_addr_sockaddr(to), to->len, deadline);
	else
		r = connect(fd, asx_addr_sockaddr(to), to->len) ? -errno : 0;
	if (!r)
		return fd;
	if (r == -EINPROGRESS || r == -EINTR) {
		*in_progress = 1;
		return fd;
	}
	if (r == -EAGAIN && wait)
		r = -ETIMEDOUT;		/* the backlog stayed full until the deadline */
	close(fd);
	return r;
}

int asx__ipc_connect(const struct asx_sock_connector *c, const struct asx_addr *to,
		const struct timespec *deadline)
{
	int fd, r, pending;

	/* a user thread connects without blocking and parks for the result */
	bool waits_here = deadline || asx__ipc_uthread();

	fd = connect_start(c, to, waits_here || (c->flags & ASX_SOCK_NONBLOCK), &pending,
			   true, deadline);
	if (fd < 0)
		return fd;
	if (pending) {
		r = asx__ipc_connect_finish(fd, c->flags, deadline);
	} else {
		r = (waits_here && !(c->flags & ASX_SOCK_NONBLOCK)) ?
			asx__ipc_set_nonblock(fd, false) : 0;
	}
	if (r) {
		close(fd);
		return r;
	}
	ASX_PROBE2(ipc_connect, fd, to->u.sa.sa_family);
	return fd;
}

int asx_sock_connector_connect(const struct asx_sock_connector *c, struct asx_sock_stream *out,
			       const struct asx_addr *to, const struct timespec *deadline)
{
	int fd = asx__ipc_connect(c, to, deadline);

	out->sock.fd = fd < 0 ? -1 : fd;
	return fd < 0 ? fd : 0;
}

int asx_sock_connector_start(const struct asx_sock_connector *c, struct asx_sock_stream *out,
			     const struct asx_addr *to)
{
	int pending, fd = connect_start(c, to, true, &pending, false, NULL);

	out->sock.fd = fd < 0 ? -1 : fd;
	if (fd < 0)
		return fd;
	if (pending)
		return -EINPROGRESS;
	return (c->flags & ASX_SOCK_NONBLOCK) ? 0 : asx__ipc_set_nonblock(fd, false);
}

int asx_sock_connector_complete(const struct asx_sock_connector *c,
				struct asx_sock_stream *out, const struct timespec *deadline)
{
	struct timespec now;
	int r;

	if (out->sock.fd < 0)
		return -EBADF;
	/* complete never blocks for ever: NULL means "just look" */
	r = asx__ipc_connect_finish(out->sock.fd, c->flags, deadline ? deadline :
			       asx_deadline(&now, 0));
	if (r && r != -ETIMEDOUT)
		asx__ipc_close_fd(&out->sock.fd);
	return r;
}

/* ------------------------------------------------------------ stream */

ssize_t asx_sock_stream_send(struct asx_sock_stream *s, const void *buf, size_t len,
			     const struct timespec *deadline)
{
	return asx__ipc_send(s->sock.fd, buf, len, deadline);
}

ssize_t asx_sock_stream_recv(struct asx_sock_stream *s, void *buf, size_t len,
			     const struct timespec *deadline)
{
	return asx__ipc_recv(s->sock.fd, buf, len, deadline);
}

ssize_t asx_sock_stream_send_n(struct asx_sock_stream *s, const void *buf, size_t len,
			       const struct timespec *deadline, size_t *done)
{
	return asx__ipc_send_n(s->sock.fd, buf, len, deadline, done);
}

ssize_t asx_sock_stream_recv_n(struct asx_sock_stream *s, void *buf, size_t len,
			       const struct timespec *deadline, size_t *done)
{
	return asx__ipc_recv_n(s->sock.fd, buf, len, deadline, done);
}

ssize_t asx_sock_stream_sendv(struct asx_sock_stream *s, const struct iovec *iov, int iovcnt,
			      const struct timespec *deadline)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };

	if (iovcnt < 0)
		return -EINVAL;
	return asx__ipc_sendmsg(s->sock.fd, &mh, 0, deadline);
}

ssize_t asx_sock_stream_recvv(struct asx_sock_stream *s, const struct iovec *iov, int iovcnt,
			      const struct timespec *deadline)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };

	if (iovcnt < 0)
		return -EINVAL;
	return asx__ipc_recvmsg(s->sock.fd, &mh, 0, deadline);
}

ssize_t asx_sock_stream_sendv_n(struct asx_sock_stream *s, const struct iovec *iov, int iovcnt,
				const struct timespec *deadline, size_t *done)
{
	return asx__ipc_sendv_n(s->sock.fd, iov, iovcnt, deadline, done);
}

ssize_t asx_sock_stream_recvv_n(struct asx_sock_stream *s, const struct iovec *iov, int iovcnt,
				const struct timespec *deadline, size_t *done)
{
	return asx__ipc_recvv_n(s->sock.fd, iov, iovcnt, deadline, done);
}

int asx_sock_stream_close_reader(struct asx_sock_stream *s)
{
	return shutdown(s->sock.fd, SHUT_RD) ? -errno : 0;
}

int asx_sock_stream_close_writer(struct asx_sock_stream *s)
{
	return shutdown(s->sock.fd, SHUT_WR) ? -errno : 0;
}

int asx_sock_stream_close(struct asx_sock_stream *s)
{
	return asx__ipc_close_fd(&s->sock.fd);
}

int asx_sock_stream_peer_addr(const struct asx_sock_stream *s, struct asx_addr *out)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getpeername(s->sock.fd, (struct sockaddr *)&ss, &len))
		return -errno;
	return asx_addr_from_sockaddr(out, (struct sockaddr *)&ss, len);
}

int asx_sock_stream_set_nodelay(struct asx_sock_stream *s, bool on)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(s->sock.fd, (struct sockaddr *)&ss, &len))
		return -errno;
	if (!is_inet(ss.ss_family))
		return -EOPNOTSUPP;
	return asx__ipc_set_int(s->sock.fd, IPPROTO_TCP, TCP_NODELAY, on);
}

/* ------------------------------------------------------------ LSOCK streams */

int asx_lsock_acceptor_open(struct asx_lsock_acceptor *acc, const struct asx_addr *local,
			    const struct asx_sock_opts *opts)
{
	return acceptor_open(&acc->acc, local, opts, true);
}

int asx_lsock_acceptor_accept(struct asx_lsock_acceptor *acc, struct asx_lsock_stream *out,
			      struct asx_addr *peer, const struct timespec *deadline)
{
	return asx_sock_acceptor_accept(&acc->acc, &out->stream, peer, deadline);
}

int asx_lsock_acceptor_close(struct asx_lsock_acceptor *acc)
{
	return asx_sock_acceptor_close(&acc->acc);
}

int asx_lsock_connector_init(struct asx_lsock_connector *c, const struct asx_sock_opts *opts)
{
	return asx_sock_connector_init(&c->conn, opts);
}

int asx_lsock_connector_connect(const struct asx_lsock_connector *c,
				struct asx_lsock_stream *out, const struct asx_addr *to,
				const struct timespec *deadline)
{
	out->stream.sock.fd = -1;
	if (!to || to->u.sa.sa_family != AF_UNIX)
		return -EAFNOSUPPORT;
	return asx_sock_connector_connect(&c->conn, &out->stream, to, deadline);
}

int asx_lsock_stream_close(struct asx_lsock_stream *s)
{
	return asx__ipc_close_fd(&s->stream.sock.fd);
}
