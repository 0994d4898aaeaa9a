// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * net_asx.c - asx-ttcp back end written with the libasx IPC SAP wrappers:
 * an acceptor (socket + bind + listen in one call), a connector, a
 * stream with send_n/recv, and datagram objects for -u.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <asx/addr.h>
#include <asx/sock.h>

#include "ttcp.h"

struct asx_conn {
	struct asx_sock_stream stream;
	struct asx_sock_dgram dgram;		/* -u receiver */
	struct asx_sock_cdgram cdgram;		/* -u transmitter */
	enum { K_STREAM, K_DGRAM, K_CDGRAM } kind;
};

static int report(const char *what, int r)
{
	fprintf(stderr, "asx-ttcp: %s: %s\n", what, strerror(-r));
	return r;
}

static struct asx_conn *conn_new(struct ttcp_conn *conn, int kind)
{
	struct asx_conn *a = calloc(1, sizeof(*a));

	if (a) {
		a->stream.sock.fd = a->dgram.sock.fd = a->cdgram.sock.fd = -1;
		a->kind = kind;
	}
	conn->priv = a;
	return a;
}

static void fill_opts(const struct ttcp_conf *c, struct asx_sock_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->sndbuf = c->sockbuf;
	o->rcvbuf = c->sockbuf;
	o->backlog = 1;
	if (c->nodelay)
		o->flags |= ASX_SOCK_NODELAY;
	if (!c->transmit)
		o->flags |= ASX_SOCK_REUSEADDR;
}

static int local_any(const struct ttcp_conf *c, struct asx_addr *a)
{
	struct in6_addr any6 = IN6ADDR_ANY_INIT;

	if (c->ipv6)
		return asx_addr_inet6(a, &any6, (uint16_t)c->port, 0);
	return asx_addr_inet4(a, 0, (uint16_t)c->port);
}

static int peer_addr(const struct ttcp_conf *c, struct asx_addr *a)
{
	char text[300];
	const char *why = NULL;
	int r;

	if (strchr(c->host, ':'))
		snprintf(text, sizeof(text), "[%s]:%d", c->host, c->port);
	else
		snprintf(text, sizeof(text), "%s:%d", c->host, c->port);
	r = asx_addr_resolve(a, text, AF_UNSPEC, &why);
	if (r)
		fprintf(stderr, "asx-ttcp: %s: %s\n", c->host, why ? why : strerror(-r));
	return r;
}

static int asx_tcp_accept(const struct ttcp_conf *c, struct ttcp_conn *conn)
{
	struct asx_sock_acceptor acc;
	struct asx_sock_opts o;
	struct asx_addr local;
	struct timespec dl;
	struct asx_conn *a = conn_new(conn, K_STREAM);
	int r;

	if (!a)
		return -ENOMEM;
	fill_opts(c, &o);
	r = local_any(c, &local);
	if (!r)
		r = asx_sock_acceptor_open(&acc, &local, &o);
	if (r)
		return report("listen", r);
	r = asx_sock_acceptor_accept(&acc, &a->stream, NULL,
				     asx_deadline(&dl, (uint64_t)c->accept_timeout_ms * 1000000));
	asx_sock_acceptor_close(&acc);
	if (r == -ETIMEDOUT)
		fprintf(stderr, "asx-ttcp: no transmitter within %d ms\n", c->accept_timeout_ms);
	else if (r)
		report("accept", r);
	return r;
}

static int asx_tcp_connect(const struct ttcp_conf *c, struct ttcp_conn *conn)
{
	struct asx_sock_connector con;
	struct asx_sock_opts o;
	struct asx_addr to;
	struct asx_conn *a = conn_new(conn, K_STREAM);
	int r;

	if (!a)
		return -ENOMEM;
	fill_opts(c, &o);
	r = peer_addr(c, &to);
	if (r)
		return r;
	r = asx_sock_connector_init(&con, &o);
	if (r)
		return report("connector", r);
	return asx_sock_connector_connect(&con, &a->stream, &to, NULL);
}

static int asx_udp_open(const struct ttcp_conf *c, struct ttcp_conn *conn)
{
	struct asx_sock_opts o;
	struct asx_addr addr;
	struct asx_conn *a = conn_new(conn, c->transmit ? K_CDGRAM : K_DGRAM);
	int r;

	if (!a)
		return -ENOMEM;
	fill_opts(c, &o);
	if (c->transmit) {
		r = peer_addr(c, &addr);
		if (r)
			return r;
		r = asx_sock_cdgram_open(&a->cdgram, &addr, &o);
	} else {
		r = local_any(c, &addr);
		if (!r)
			r = asx_sock_dgram_open(&a->dgram, &addr, &o);
	}
	return r ? report("udp socket", r) : 0;
}

static ssize_t asx_send(struct ttcp_conn *conn, const void *buf, size_t len)
{
	struct asx_conn *a = conn->priv;

	if (a->kind == K_STREAM)
		return asx_sock_stream_send_n(&a->stream, buf, len, NULL, NULL);
	return asx_sock_cdgram_send(&a->cdgram, buf, len, NULL);
}

static ssize_t asx_recv(struct ttcp_conn *conn, void *buf, size_t len)
{
	struct asx_conn *a = conn->priv;
	struct timespec dl;
	ssize_t n;

	if (a->kind == K_STREAM)
		return asx_sock_stream_recv(&a->stream, buf, len, NULL);
	n = asx_sock_dgram_recv(&a->dgram, buf, len, NULL,
				asx_deadline(&dl, (uint64_t)TTCP_UDP_IDLE_MS * 1000000));
	if (n == -EMSGSIZE) {
		/* received, cut to @len: count it and go on, as ttcp does */
		conn->truncated++;
		n = (ssize_t)len;
	}
	return n;
}

static void asx_close(struct ttcp_conn *conn)
{
	struct asx_conn *a = conn->priv;

	if (!a)
		return;
	asx_sock_stream_close(&a->stream);
	asx_sock_dgram_close(&a->dgram);
	asx_sock_cdgram_close(&a->cdgram);
	free(a);
	conn->priv = NULL;
}

static int asx_conn_handle(struct ttcp_conn *conn)
{
	struct asx_conn *a = conn->priv;

	if (!a)
		return -1;
	if (a->kind == K_STREAM)
		return asx_sock_handle(&a->stream.sock);
	return asx_sock_handle(a->kind == K_DGRAM ? &a->dgram.sock : &a->cdgram.sock);
}

const struct ttcp_ops ttcp_asx_ops = {
	.name = "asx",
	.tcp_accept = asx_tcp_accept,
	.tcp_connect = asx_tcp_connect,
	.udp_open = asx_udp_open,
	.send = asx_send,
	.recv = asx_recv,
	.close = asx_close,
	.handle = asx_conn_handle,
};
