// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * net_raw.c - asx-ttcp back end written with plain C socket calls, the
 * way the classic ttcp does it: socket/setsockopt/bind/listen/accept,
 * connect, write and read.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ttcp.h"

static int fail(const char *what)
{
	int e = errno;

	fprintf(stderr, "asx-ttcp: %s: %s\n", what, strerror(e));
	return -e;
}

/* Socket with the options ttcp applies before bind/connect. */
static int raw_socket(const struct ttcp_conf *c, int family, int type)
{
	int fd = socket(family, type | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return fail("socket");
	if (c->sockbuf &&
	    (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &c->sockbuf, sizeof(c->sockbuf)) ||
	     setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &c->sockbuf, sizeof(c->sockbuf)))) {
		fail("setsockopt SO_SNDBUF/SO_RCVBUF");
		close(fd);
		return -1;
	}
	if (type == SOCK_STREAM && c->nodelay &&
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		fail("setsockopt TCP_NODELAY");
		close(fd);
		return -1;
	}
	if (!c->transmit && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		fail("setsockopt SO_REUSEADDR");
		close(fd);
		return -1;
	}
	return fd;
}

static int raw_bind_any(const struct ttcp_conf *c, int fd)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	int r;

	if (c->ipv6) {
		memset(&s6, 0, sizeof(s6));
		s6.sin6_family = AF_INET6;
		s6.sin6_port = htons((uint16_t)c->port);
		s6.sin6_addr = in6addr_any;
		r = bind(fd, (struct sockaddr *)&s6, sizeof(s6));
	} else {
		memset(&s4, 0, sizeof(s4));
		s4.sin_family = AF_INET;
		s4.sin_port = htons((uint16_t)c->port);
		s4.sin_addr.s_addr = htonl(INADDR_ANY);
		r = bind(fd, (struct sockaddr *)&s4, sizeof(s4));
	}
	return r ? fail("bind") : 0;
}

static int raw_resolve(const struct ttcp_conf *c, int type, struct sockaddr_storage *ss,
		       socklen_t *len)
{
	struct addrinfo hints, *res;
	char port[16];
	int r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = type;
	snprintf(port, sizeof(port), "%d", c->port);
	r = getaddrinfo(c->host, port, &hints, &res);
	if (r) {
		fprintf(stderr, "asx-ttcp: %s: %s\n", c->host, gai_strerror(r));
		return -ENOENT;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int raw_tcp_accept(const struct ttcp_conf *c, struct ttcp_conn *conn)
{
	struct pollfd p;
	int lfd, fd, r;

	lfd = raw_socket(c, c->ipv6 ? AF_INET6 : AF_INET, SOCK_STREAM);
	if (lfd < 0)
		return lfd;
	if (raw_bind_any(c, lfd) || listen(lfd, 1)) {
		r = errno ? -errno : -EINVAL;
		close(lfd);
		return r;
	}
	p.fd = lfd;
	p.events = POLLIN;
	r = poll(&p, 1, c->accept_timeout_ms);
	if (r <= 0) {
		fprintf(stderr, "asx-ttcp: no transmitter within %d ms\n", c->accept_timeout_ms);
		close(lfd);
		return -ETIMEDOUT;
	}
	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	r = fd < 0 ? fail("accept") : 0;
	close(lfd);
	conn->fd = fd;
	return r;
}

static int raw_tcp_connect(const struct ttcp_conf *c, struct ttcp_conn *conn)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, r;

	r = raw_resolve(c, SOCK_STREAM, &ss, &len);
	if (r)
		return r;
	fd = raw_socket(c, ss.ss_family, SOCK_STREAM);
	if (fd < 0)
		return fd;
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		r = -errno;
		close(fd);
		return r;
	}
	conn->fd = fd;
	return 0;
}

static int raw_udp_open(const struct ttcp_conf *c, struct ttcp_conn *conn)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, r;

	if (c->transmit) {
		r = raw_resolve(c, SOCK_DGRAM, &ss, &len);
		if (r)
			return r;
		fd = raw_socket(c, ss.ss_family, SOCK_DGRAM);
		if (fd < 0)
			return fd;
		if (connect(fd, (struct sockaddr *)&ss, len)) {
			r = fail("connect");
			close(fd);
			return r;
		}
	} else {
		struct timeval tv = {
			.tv_sec = TTCP_UDP_IDLE_MS / 1000,
			.tv_usec = (TTCP_UDP_IDLE_MS % 1000) * 1000,
		};

		fd = raw_socket(c, c->ipv6 ? AF_INET6 : AF_INET, SOCK_DGRAM);
		if (fd < 0)
			return fd;
		if (raw_bind_any(c, fd) ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv))) {
			close(fd);
			return -EINVAL;
		}
	}
	conn->fd = fd;
	return 0;
}

static ssize_t raw_send(struct ttcp_conn *conn, const void *buf, size_t len)
{
	const char *p = buf;
	size_t left = len;
	ssize_t n;

	while (left) {
		n = write(conn->fd, p, left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		left -= (size_t)n;
	}
	return (ssize_t)len;
}

/* A datagram longer than @len is cut to it, as read() does, and counted. */
static ssize_t raw_recv(struct ttcp_conn *conn, void *buf, size_t len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	do {
		n = recvmsg(conn->fd, &mh, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? -ETIMEDOUT : -errno;
	if (mh.msg_flags & MSG_TRUNC)
		conn->truncated++;
	return n;
}

static void raw_close(struct ttcp_conn *conn)
{
	if (conn->fd >= 0)
		close(conn->fd);
	conn->fd = -1;
}

static int raw_handle(struct ttcp_conn *conn)
{
	return conn->fd;
}

const struct ttcp_ops ttcp_raw_ops = {
	.name = "raw",
	.tcp_accept = raw_tcp_accept,
	.tcp_connect = raw_tcp_connect,
	.udp_open = raw_udp_open,
	.send = raw_send,
	.recv = raw_recv,
	.close = raw_close,
	.handle = raw_handle,
};
