// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * endpoint.c - a configured Stream's head bound to a listening socket
 * ("stream NAME listen ADDRESS [raw|framed]", endpoint.h).
 *
 * Two threads.  The I/O thread polls the listening socket, the
 * connections and a wake pipe: it accepts (up to ASX__SVC_EP_CONNS_MAX
 * open), reads each connection and puts what it read down the Stream, in
 * the order read, each message tagged with its connection's id.  The head
 * thread takes what reaches the Stream's head and writes it to the
 * connection its tag names; an untagged message (one a Module made rather
 * than passed on) goes to every open connection; one whose connection is
 * gone is dropped and counted.
 *
 * The tag is the message header's private word (asx__resv, zeroed by
 * asx_msg_alloc): a Module that passes a message on, or turns it round,
 * keeps it; a new message (asx_msg_alloc, asx_msg_dup) has none.
 *
 * Framing: raw, every read() becomes one DATA message and a message going
 * up is written as its bytes (DATA, PROTO, PCPROTO; other types are
 * dropped); framed, the frame of asx_fd_driver() (<asx/kstream.h>: 8
 * bytes, be32 length of the rest, type, band, be16 control length) both
 * ways, so every type passes and message boundaries are kept.
 *
 * A connection is shared by the two threads (one reads, one writes) and
 * freed by the last of them to let go (a reference count under the
 * endpoint's lock).  Writes wait in poll() in 100 ms slices, so stopping
 * is noticed; a client that takes nothing for ASX__SVC_EP_STALL_S seconds
 * is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <asx/addr.h>
#include <asx/common.h>
#include <asx/kstream.h>
#include <asx/msg.h>
#include <asx/stream.h>

#include "svc/conf.h"
#include "svc/endpoint.h"

#define HDR		8		/* the fd driver's frame header */
#define CHUNK		65536		/* bytes read at once */
#define SLICE_NS	100000000ull	/* waits are cut in slices to notice a stop */

struct conn {
	int fd;
	uint32_t id;
	int refs;			/* the table's, and the head thread's while writing */
	bool gone;			/* out of the table: the I/O thread let go */
	unsigned char *rbuf;		/* framed: the bytes of a frame not yet whole */
	size_t rlen, rcap;
	struct conn *next;
};

struct asx__svc_ep {
	struct asx_stream *s;
	int framing;
	int lfd;
	int wake[2];
	struct asx_addr addr;		/* as bound (the port a :0 got) */
	pthread_t io, head;
	bool io_started, head_started;
	bool bound;			/* a UNIX path of ours to unlink at stop */
	pthread_mutex_t lock;		/* conns, nconns, stats, stop */
	struct conn *conns;
	size_t nconns;
	uint32_t next_id;
	bool stop;
	struct asx__svc_ep_stats st;
};

static void say(char *why, size_t len, const char *fmt, const char *a, int err)
{
	if (why && len)
		snprintf(why, len, fmt, a, strerror(err));
}

static bool stopping(struct asx__svc_ep *ep)
{
	bool s;

	pthread_mutex_lock(&ep->lock);
	s = ep->stop;
	pthread_mutex_unlock(&ep->lock);
	return s;
}

/* Drop a reference taken under ep->lock; the last one closes and frees. */
static void conn_put(struct asx__svc_ep *ep, struct conn *c)
{
	bool last;

	pthread_mutex_lock(&ep->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&ep->lock);
	if (!last)
		return;
	close(c->fd);
	free(c->rbuf);
	free(c);
}

/* Out of the table (I/O thread, or stop): nothing more is read or routed to it. */
static void conn_drop(struct asx__svc_ep *ep, struct conn *c, bool bad)
{
	pthread_mutex_lock(&ep->lock);
	for (struct conn **pp = &ep->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			ep->nconns--;
			break;
		}
	c->gone = true;
	if (bad)
		ep->st.bad++;
	pthread_mutex_unlock(&ep->lock);
	shutdown(c->fd, SHUT_RDWR);	/* a writer waiting on it wakes */
	conn_put(ep, c);
}

/* Put @m down the Stream, waiting in slices while it is flow-controlled. */
static int put_down(struct asx__svc_ep *ep, struct asx_msg *m)
{
	for (;;) {
		struct timespec dl;
		int r = asx_stream_put(ep->s, m, 0, asx_deadline(&dl, SLICE_NS));

		if (r == -ETIMEDOUT && !stopping(ep))
			continue;
		if (r) {
			asx_msg_free_chain(m);
			return r;
		}
		pthread_mutex_lock(&ep->lock);
		ep->st.down++;
		pthread_mutex_unlock(&ep->lock);
		return 0;
	}
}

static struct asx_msg *msg_of(const unsigned char *p, size_t n, unsigned int type, uint32_t id)
{
	struct asx_msg *m = asx_msg_alloc(n, type);

	if (!m)
		return NULL;
	memcpy(m->wr, p, n);
	m->wr += n;
	m->asx__resv = id;
	return m;
}

/* Framed: the whole frames at the front of c->rbuf, down; -EPROTO for a bad one. */
static int frames_down(struct asx__svc_ep *ep, struct conn *c)
{
	size_t off = 0;
	int r = 0;

	while (!r && c->rlen - off >= HDR) {
		const unsigned char *h = c->rbuf + off;
		uint32_t len = (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
		unsigned int ctl = (unsigned int)h[6] << 8 | h[7];
		struct asx_msg *m, *d = NULL;

		if (len > ASX_FD_FRAME_MAX || ctl > len || (ctl && h[4] != ASX_MSG_PROTO &&
							    h[4] != ASX_MSG_PCPROTO))
			return -EPROTO;
		if (c->rlen - off - HDR < len)
			break;
		m = msg_of(h + HDR, ctl ? ctl : len, h[4], c->id);
		if (m && ctl && len > ctl) {
			d = msg_of(h + HDR + ctl, len - ctl, ASX_MSG_DATA, 0);
			if (d)
				asx_msg_link(m, d);
		}
		if (!m || (ctl && len > ctl && !d)) {
			asx_msg_free_chain(m);
			return -ENOMEM;
		}
		if (!asx_msg_type_is_hipri(m->type))
			m->band = h[5];
		r = put_down(ep, m);
		off += HDR + len;
	}
	memmove(c->rbuf, c->rbuf + off, c->rlen - off);
	c->rlen -= off;
	return r;
}

/* Read what @c has; 0, or <0: the connection ends (end of file, reset, bad frame). */
static int conn_read(struct asx__svc_ep *ep, struct conn *c)
{
	unsigned char buf[CHUNK];
	ssize_t n = read(c->fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ENOTCONN;
	if (ep->framing == ASX__SVC_FRAME_RAW) {
		struct asx_msg *m = msg_of(buf, (size_t)n, ASX_MSG_DATA, c->id);

		return m ? put_down(ep, m) : -ENOMEM;
	}
	if (c->rcap - c->rlen < (size_t)n) {
		size_t cap = c->rcap ? c->rcap : CHUNK;
		unsigned char *p;

		while (cap - c->rlen < (size_t)n)
			cap *= 2;
		if (cap > ASX_FD_FRAME_MAX + HDR + CHUNK)
			return -EPROTO;
		p = realloc(c->rbuf, cap);
		if (!p)
			return -ENOMEM;
		c->rbuf = p;
		c->rcap = cap;
	}
	memcpy(c->rbuf + c->rlen, buf, (size_t)n);
	c->rlen += (size_t)n;
	return frames_down(ep, c);
}

static void accept_one(struct asx__svc_ep *ep)
{
	int fd = accept4(ep->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct conn *c;

	if (fd < 0)
		return;
	c = calloc(1, sizeof(*c));
	pthread_mutex_lock(&ep->lock);
	if (!c || ep->nconns >= ASX__SVC_EP_CONNS_MAX) {
		ep->st.refused++;
		pthread_mutex_unlock(&ep->lock);
		free(c);
		close(fd);
		return;
	}
	c->fd = fd;
	c->refs = 1;
	if (!++ep->next_id)	/* 0 is "no connection" */
		ep->next_id = 1;
	c->id = ep->next_id;
	c->next = ep->conns;
	ep->conns = c;
	ep->nconns++;
	ep->st.accepted++;
	pthread_mutex_unlock(&ep->lock);
}

static void *io_main(void *arg)
{
	struct asx__svc_ep *ep = arg;
	struct pollfd *pf = calloc(ASX__SVC_EP_CONNS_MAX + 2, sizeof(*pf));
	struct conn **cv = calloc(ASX__SVC_EP_CONNS_MAX, sizeof(*cv));

	while (pf && cv && !stopping(ep)) {
		size_t n = 0;

		pf[0] = (struct pollfd){ .fd = ep->wake[0], .events = POLLIN };
		pf[1] = (struct pollfd){ .fd = ep->lfd, .events = POLLIN };
		pthread_mutex_lock(&ep->lock);
		for (struct conn *c = ep->conns; c; c = c->next) {
			cv[n] = c;	/* only this thread takes a connection out */
			pf[2 + n++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		}
		pthread_mutex_unlock(&ep->lock);
		if (poll(pf, n + 2, -1) < 0)
			continue;
		if (pf[0].revents)
			break;
		for (size_t i = 0; i < n; i++) {
			int r;

			if (!pf[2 + i].revents)
				continue;
			r = conn_read(ep, cv[i]);
			if (r == -ESHUTDOWN)
				goto out;
			if (r)
				conn_drop(ep, cv[i], r == -EPROTO);
		}
		if (pf[1].revents & POLLIN)
			accept_one(ep);
	}
out:
	free(pf);
	free(cv);
	return NULL;
}

/* Write @len bytes of @iov to @c, waiting in slices; 0 or -errno. */
static int conn_write(struct asx__svc_ep *ep, struct conn *c, struct iovec *iov, int niov)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (niov) {
		struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)niov };
		ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (w < 0) {
			struct pollfd pf = { .fd = c->fd, .events = POLLOUT };

			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - start.tv_sec >= ASX__SVC_EP_STALL_S)
				return -ETIMEDOUT;
			if (stopping(ep))
				return -ESHUTDOWN;
			(void)poll(&pf, 1, (int)(SLICE_NS / 1000000));
			continue;
		}
		while (niov && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			niov--;
		}
		if (niov) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

#define IOV_MAX_EP 64

/* @m as this endpoint writes it: its iovecs (a frame header in @hdr); -1: not carried. */
static int gather(const struct asx__svc_ep *ep, const struct asx_msg *m, unsigned char *hdr,
		  struct iovec *iov)
{
	int n = 0;

	if (ep->framing == ASX__SVC_FRAME_FD) {
		size_t len = asx_msg_length(m);
		size_t ctl = (m->type == ASX_MSG_PROTO || m->type == ASX_MSG_PCPROTO) && m->cont ?
			     (size_t)(m->wr - m->rd) : 0;

		if (len > ASX_FD_FRAME_MAX || ctl > ASX_FD_CTL_MAX)
			return -1;
		hdr[0] = (unsigned char)(len >> 24);
		hdr[1] = (unsigned char)(len >> 16);
		hdr[2] = (unsigned char)(len >> 8);
		hdr[3] = (unsigned char)len;
		hdr[4] = m->type;
		hdr[5] = asx_msg_type_is_hipri(m->type) ? 0 : m->band;
		hdr[6] = (unsigned char)(ctl >> 8);
		hdr[7] = (unsigned char)ctl;
		iov[n++] = (struct iovec){ hdr, HDR };
	} else if (m->type != ASX_MSG_DATA && m->type != ASX_MSG_PROTO &&
		   m->type != ASX_MSG_PCPROTO) {
		return -1;
	}
	for (const struct asx_msg *b = m; b; b = b->cont) {
		if (n == IOV_MAX_EP)
			return -1;
		if (b->wr > b->rd)
			iov[n++] = (struct iovec){ b->rd, (size_t)(b->wr - b->rd) };
	}
	return n;
}

/* Write @m to @c (a reference held); a failure closes the connection. */
static void send_to(struct asx__svc_ep *ep, struct conn *c, const struct iovec *tmpl, int n)
{
	struct iovec iov[IOV_MAX_EP + 1];
	int r;

	memcpy(iov, tmpl, (size_t)n * sizeof(*iov));
	r = conn_write(ep, c, iov, n);
	if (r && r != -ESHUTDOWN) {
		pthread_mutex_lock(&ep->lock);
		if (r == -ETIMEDOUT)
			ep->st.bad++;
		pthread_mutex_unlock(&ep->lock);
		shutdown(c->fd, SHUT_RDWR);	/* the I/O thread sees it and drops it */
	}
}

static void route_up(struct asx__svc_ep *ep, struct asx_msg *m)
{
	unsigned char hdr[HDR];
	struct iovec iov[IOV_MAX_EP + 1];
	int n = gather(ep, m, hdr, iov);
	uint32_t id = m->asx__resv;
	struct conn **to = NULL;
	size_t nto = 0;

	pthread_mutex_lock(&ep->lock);
	if (n >= 0)
		to = calloc(id ? 1 : ep->nconns + 1, sizeof(*to));
	for (struct conn *c = ep->conns; to && c; c = c->next)
		if (!id || c->id == id) {
			c->refs++;
			to[nto++] = c;
			if (id)
				break;
		}
	if (!nto)
		ep->st.dropped++;
	else
		ep->st.up++;
	if (nto && !id)
		ep->st.broadcast++;
	pthread_mutex_unlock(&ep->lock);
	for (size_t i = 0; i < nto; i++) {
		send_to(ep, to[i], iov, n);
		conn_put(ep, to[i]);
	}
	free(to);
	asx_msg_free_chain(m);
}

static void *head_main(void *arg)
{
	struct asx__svc_ep *ep = arg;

	while (!stopping(ep)) {
		struct timespec dl;
		struct asx_msg *m;
		int r = asx_stream_get(ep->s, &m, 0, asx_deadline(&dl, SLICE_NS));

		if (r == -ESHUTDOWN)
			break;
		if (!r)
			route_up(ep, m);
	}
	return NULL;
}

static int listen_on(struct asx__svc_ep *ep, const char *addr, char *why, size_t whylen)
{
	const char *reason = NULL;
	socklen_t len;
	int one = 1, r;

	r = asx_addr_parse(&ep->addr, addr, &reason);
	if (r) {
		if (why && whylen)
			snprintf(why, whylen, "'%s': %s", addr, reason ? reason : strerror(-r));
		return r;
	}
	ep->lfd = socket(ep->addr.u.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (ep->lfd < 0)
		goto fail;
	if (ep->addr.u.sa.sa_family != AF_UNIX)
		(void)setsockopt(ep->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ep->lfd, &ep->addr.u.sa, ep->addr.len))
		goto fail;
	ep->bound = true;
	if (listen(ep->lfd, SOMAXCONN))
		goto fail;
	len = sizeof(ep->addr.u);
	if (!getsockname(ep->lfd, &ep->addr.u.sa, &len) && ep->addr.u.sa.sa_family != AF_UNIX)
		ep->addr.len = len;
	return 0;
fail:
	r = -errno;
	say(why, whylen, "cannot listen on '%s': %s", addr, -r);
	return r;
}

int asx__svc_ep_start(struct asx_stream *s, const char *addr, int framing,
		      struct asx__svc_ep **out, char *why, size_t whylen)
{
	struct asx__svc_ep *ep = calloc(1, sizeof(*ep));
	int r;

	*out = NULL;
	if (!ep)
		return -ENOMEM;
	ep->s = s;
	ep->framing = framing;
	ep->lfd = ep->wake[0] = ep->wake[1] = -1;
	pthread_mutex_init(&ep->lock, NULL);
	r = listen_on(ep, addr, why, whylen);
	if (!r && pipe2(ep->wake, O_CLOEXEC | O_NONBLOCK)) {
		r = -errno;
		say(why, whylen, "'%s': %s", addr, -r);
	}
	if (!r) {
		r = -pthread_create(&ep->io, NULL, io_main, ep);
		ep->io_started = !r;
	}
	if (!r) {
		r = -pthread_create(&ep->head, NULL, head_main, ep);
		ep->head_started = !r;
	}
	if (r) {
		if (why && whylen && !why[0])
			say(why, whylen, "'%s': cannot start its threads: %s", addr, -r);
		asx__svc_ep_stop(ep);
		return r;
	}
	*out = ep;
	return 0;
}

void asx__svc_ep_stop(struct asx__svc_ep *ep)
{
	if (!ep)
		return;
	pthread_mutex_lock(&ep->lock);
	ep->stop = true;
	pthread_mutex_unlock(&ep->lock);
	if (ep->wake[1] >= 0)
		(void)!write(ep->wake[1], "", 1);
	if (ep->io_started)
		pthread_join(ep->io, NULL);
	if (ep->head_started)
		pthread_join(ep->head, NULL);
	while (ep->conns)
		conn_drop(ep, ep->conns, false);
	if (ep->lfd >= 0) {
		close(ep->lfd);
		if (ep->bound && ep->addr.u.sa.sa_family == AF_UNIX &&
		    !asx_addr_is_abstract(&ep->addr))
			(void)unlink(ep->addr.u.un.sun_path);
	}
	if (ep->wake[0] >= 0) {
		close(ep->wake[0]);
		close(ep->wake[1]);
	}
	pthread_mutex_destroy(&ep->lock);
	free(ep);
}

void asx__svc_ep_stats(struct asx__svc_ep *ep, struct asx__svc_ep_stats *st)
{
	pthread_mutex_lock(&ep->lock);
	*st = ep->st;
	st->open = ep->nconns;
	pthread_mutex_unlock(&ep->lock);
}

size_t asx__svc_ep_describe(struct asx__svc_ep *ep, char *buf, size_t len)
{
	char a[ASX_ADDR_STRLEN];
	size_t open;
	int n;

	if (asx_addr_format(&ep->addr, a, sizeof(a)) < 0)
		strcpy(a, "?");
	pthread_mutex_lock(&ep->lock);
	open = ep->nconns;
	pthread_mutex_unlock(&ep->lock);
	n = snprintf(buf, len, "listening on %s (%s), %zu open", a,
		     ep->framing == ASX__SVC_FRAME_FD ? "framed" : "raw", open);
	return n < 0 ? 0 : (size_t)n;
}
