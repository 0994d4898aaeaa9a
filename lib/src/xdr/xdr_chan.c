// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * xdr_chan.c - a buffered XDR channel over a stream descriptor (the
 * G/MAX paper's sockbuf), framed with RFC 5531 record marking so that it
 * interoperates with libtirpc's xdrrec.
 *
 * Send side: sbuf holds complete fragments [0, shdr) waiting to be
 * written, then the header slot of the open fragment at shdr, then its
 * bytes up to out.p.  The header is filled in when the fragment closes.
 *
 * Receive side: rbuf holds bytes read but not yet handed out [rpos, rlen).
 * The decoder's window is the run just before rpos; frag_left counts the
 * bytes of the current fragment not yet in a window, so the window never
 * crosses a fragment header.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <asx/xdr.h>
#include "core/compiler.h"
#include "xdr/xdr_internal.h"
#include "core/opts.h"

#define LAST_FRAG	0x80000000u
#define FRAG_MAX	(1u << 30)	/* largest fragment we send */

struct asx_xdr_chan {
	int fd;
	bool is_sock;
	struct asx_xdr out, in;

	unsigned char *sbuf;
	size_t ssize, shdr;

	unsigned char *rbuf;
	size_t rsize, rpos, rlen;
	uint32_t frag_left;
	bool last_frag, in_record;
	int rerr;			/* fatal receive error (framing lost) */
	uint64_t rec_len, max_record;
};

#define chan_of(x) (ASX__XDR_T(x)->chan)

/* ---- send side ---- */

static int write_all(struct asx_xdr_chan *c, struct iovec *iov, int cnt)
{
	while (cnt) {
		ssize_t n;

		if (c->is_sock) {
			struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t)cnt };

			n = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
			if (n < 0 && errno == ENOTSOCK) {
				c->is_sock = false;
				continue;
			}
		} else {
			n = writev(c->fd, iov, cnt);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (cnt && (size_t)n >= iov->iov_len) {
			n -= (ssize_t)iov->iov_len;
			iov++;
			cnt--;
		}
		if (cnt) {
			iov->iov_base = (char *)iov->iov_base + n;
			iov->iov_len -= (size_t)n;
		}
	}
	return 0;
}

static void close_frag(struct asx_xdr_chan *c, size_t extra, bool last)
{
	unsigned char *h = c->sbuf + c->shdr;
	uint32_t len = (uint32_t)((size_t)(c->out.p - h - 4) + extra);
	uint32_t be = asx__be32(len | (last ? LAST_FRAG : 0));

	memcpy(h, &be, 4);
}

/* Start a new, empty fragment at the beginning of sbuf. */
static void reset_send(struct asx_xdr_chan *c)
{
	struct asx_xdr *x = &c->out;

	x->pos_base_ += (uint64_t)(x->p - x->base_);
	c->shdr = 0;
	x->base_ = x->p = c->sbuf + 4;
	x->end = c->sbuf + c->ssize;
}

static int out_next(struct asx_xdr *x, size_t want)
{
	struct asx_xdr_chan *c = chan_of(x);
	struct iovec iov;
	int ret;

	close_frag(c, 0, false);
	iov.iov_base = c->sbuf;
	iov.iov_len = (size_t)(x->p - c->sbuf);
	ret = write_all(c, &iov, 1);
	reset_send(c);
	return ret;
}

static int out_bulk(struct asx_xdr *x, const void *src, size_t n)
{
	struct asx_xdr_chan *c = chan_of(x);
	const unsigned char *s = src;

	while (n) {
		size_t k = n < FRAG_MAX ? n : FRAG_MAX;
		struct iovec iov[2];
		int ret;

		close_frag(c, k, false);
		iov[0].iov_base = c->sbuf;
		iov[0].iov_len = (size_t)(x->p - c->sbuf);
		iov[1].iov_base = (void *)s;
		iov[1].iov_len = k;
		ret = write_all(c, iov, 2);
		reset_send(c);
		if (ret)
			return ret;
		x->pos_base_ += k;
		s += k;
		n -= k;
	}
	return 0;
}

int asx_xdr_chan_end_record(struct asx_xdr_chan *c, bool flush)
{
	struct asx_xdr *x = &c->out;
	int ret = 0;

	if (x->st_ & ASX__XDR_BROKEN)
		return x->err_;
	close_frag(c, 0, true);
	x->pos_base_ += (uint64_t)(x->p - x->base_);
	c->shdr = (size_t)(x->p - c->sbuf);
	if (flush || c->ssize - c->shdr < 8) {
		struct iovec iov = { .iov_base = c->sbuf, .iov_len = c->shdr };

		ret = write_all(c, &iov, 1);
		c->shdr = 0;
	}
	/* the next record's first fragment header goes at shdr */
	x->base_ = x->p = c->sbuf + c->shdr + 4;
	return ret ? asx__xdr_fail(x, ret) : 0;
}

int asx_xdr_chan_flush(struct asx_xdr_chan *c)
{
	struct asx_xdr *x = &c->out;
	unsigned char *data = c->sbuf + c->shdr + 4;
	struct iovec iov;
	int ret;

	if (x->st_ & ASX__XDR_BROKEN)
		return x->err_;
	if (x->p > data) {
		/* a partial record leaves as a non-last fragment */
		close_frag(c, 0, false);
		iov.iov_len = (size_t)(x->p - c->sbuf);
	} else {
		iov.iov_len = c->shdr;
	}
	iov.iov_base = c->sbuf;
	ret = iov.iov_len ? write_all(c, &iov, 1) : 0;
	reset_send(c);
	return ret ? asx__xdr_fail(x, ret) : 0;
}

/* ---- receive side ---- */

/* Read more bytes into rbuf; 0, -EBADMSG at end of file, or -errno. */
static int fill(struct asx_xdr_chan *c)
{
	ssize_t n;

	if (c->rpos == c->rlen) {
		c->rpos = c->rlen = 0;
	} else if (c->rlen == c->rsize) {
		memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
		c->rlen -= c->rpos;
		c->rpos = 0;
	}
	do
		n = read(c->fd, c->rbuf + c->rlen, c->rsize - c->rlen);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ENODATA;
	c->rlen += (size_t)n;
	return 0;
}

static int fatal(struct asx_xdr_chan *c, int err)
{
	if (err == -ENODATA)
		err = -EBADMSG;	/* the stream ended inside a record */
	if (!c->rerr)
		c->rerr = err;
	return err;
}

/* Read the next fragment header; 0, or a fatal error (ENODATA: clean EOF). */
static int read_header(struct asx_xdr_chan *c)
{
	uint32_t h;
	int ret;

	while (c->rlen - c->rpos < 4) {
		bool none = c->rlen == c->rpos;

		ret = fill(c);
		if (ret)
			return ret == -ENODATA && !none ? -EBADMSG : ret;
	}
	memcpy(&h, c->rbuf + c->rpos, 4);
	h = asx__be32(h);
	c->rpos += 4;
	c->frag_left = h & ~LAST_FRAG;
	c->last_frag = h & LAST_FRAG;
	c->rec_len += c->frag_left;
	if (c->rec_len > c->max_record)
		return -EMSGSIZE;
	return 0;
}

static void set_after(struct asx_xdr_chan *c)
{
	c->in.after_ = c->last_frag ? c->frag_left : UINT64_MAX;
}

/* Give back an unused tail of the window (it sits just before rpos). */
static void unwindow(struct asx_xdr_chan *c)
{
	struct asx_xdr *x = &c->in;
	size_t left = (size_t)(x->end - x->p);

	x->pos_base_ += (uint64_t)(x->p - x->base_);
	c->rpos -= left;
	c->frag_left += (uint32_t)left;
	x->base_ = x->end = x->p;
}

static int in_next(struct asx_xdr *x, size_t want)
{
	struct asx_xdr_chan *c = chan_of(x);
	size_t k;
	int ret;

	if (c->rerr)
		return c->rerr;
	if (!c->in_record)
		return -EBADMSG;
	unwindow(c);
	for (;;) {
		if (!c->frag_left) {
			if (c->last_frag)
				return -EBADMSG;	/* read past the end of the record */
			ret = read_header(c);
			if (ret)
				return fatal(c, ret);
			continue;
		}
		if (c->rpos == c->rlen) {
			ret = fill(c);
			if (ret)
				return fatal(c, ret);
		}
		break;
	}
	k = c->rlen - c->rpos;
	if (k > c->frag_left)
		k = c->frag_left;
	x->base_ = x->p = c->rbuf + c->rpos;
	x->end = x->p + k;
	c->rpos += k;
	c->frag_left -= (uint32_t)k;
	set_after(c);
	return 0;
}

static int in_bulk(struct asx_xdr *x, void *dst, size_t n)
{
	struct asx_xdr_chan *c = chan_of(x);
	unsigned char *d = dst;
	int ret;

	while (n) {
		size_t have = (size_t)(x->end - x->p);
		ssize_t r;

		if (have) {
			if (have > n)
				have = n;
			asx__xdr_copy(d, x->p, have);
			x->p += have;
			d += have;
			n -= have;
			continue;
		}
		if (!c->frag_left || c->rpos != c->rlen || n < c->rsize / 2) {
			ret = in_next(x, n);
			if (ret)
				return ret;
			continue;
		}
		/* nothing buffered: read straight into the caller's memory */
		do
			r = read(c->fd, d, n < c->frag_left ? n : c->frag_left);
		while (r < 0 && errno == EINTR);
		if (r <= 0)
			return fatal(c, r < 0 ? -errno : -ENODATA);
		c->frag_left -= (uint32_t)r;
		x->pos_base_ += (uint64_t)r;
		set_after(c);
		d += r;
		n -= (size_t)r;
	}
	return 0;
}

int asx_xdr_chan_next_record(struct asx_xdr_chan *c)
{
	struct asx_xdr *x = &c->in;
	int ret;

	if (c->rerr)
		return c->rerr;
	if (c->in_record) {
		x->p = x->end;
		unwindow(c);
		for (;;) {
			size_t k = c->rlen - c->rpos;

			if (k > c->frag_left)
				k = c->frag_left;
			c->rpos += k;
			c->frag_left -= (uint32_t)k;
			if (c->frag_left) {
				ret = fill(c);
				if (ret)
					return fatal(c, ret);
				continue;
			}
			if (c->last_frag)
				break;
			ret = read_header(c);
			if (ret)
				return fatal(c, ret);
		}
		c->in_record = false;
	}
	c->rec_len = 0;
	ret = read_header(c);
	if (ret == -ENODATA)
		return 0;
	if (ret)
		return fatal(c, ret);
	c->in_record = true;
	x->err_ = 0;
	x->st_ &= ~ASX__XDR_BROKEN;
	x->pos_base_ = 0;
	x->base_ = x->p = x->end = c->rbuf + c->rpos;
	set_after(c);
	return 1;
}

bool asx_xdr_chan_record_done(struct asx_xdr_chan *c)
{
	return c->in_record && c->in.p == c->in.end && !c->frag_left && c->last_frag;
}

/* ---- setup ---- */

static void chan_fini(struct asx_xdr *x)
{
}

static const struct asx_xdr_ops out_ops = {
	.next = out_next, .bulk_put = out_bulk, .fini = chan_fini,
};
static const struct asx_xdr_ops in_ops = {
	.next = in_next, .bulk_get = in_bulk, .fini = chan_fini,
};

int asx_xdr_chan_create(struct asx_xdr_chan **out, int fd, const struct asx_xdr_chan_opts *opts)
{
	struct asx_xdr_chan_opts o;
	struct asx_xdr_chan *c;
	int r;

	if (!out || fd < 0)
		return -EINVAL;
	r = ASX__OPTS_COPY(&o, opts);
	if (r)
		return r;
	if (!o.sendsize)
		o.sendsize = 64 << 10;
	if (!o.recvsize)
		o.recvsize = 64 << 10;
	if (!o.max_record)
		o.max_record = 64 << 20;
	if (o.sendsize < 64 || o.sendsize > FRAG_MAX || o.recvsize < 64 || o.recvsize > FRAG_MAX)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sbuf = malloc(o.sendsize);
	c->rbuf = malloc(o.recvsize);
	if (!c->sbuf || !c->rbuf) {
		free(c->sbuf);
		free(c->rbuf);
		free(c);
		return -ENOMEM;
	}
	c->fd = fd;
	c->is_sock = true;
	c->ssize = o.sendsize;
	c->rsize = o.recvsize;
	c->max_record = o.max_record;
	asx__xdr_init(&c->out, &out_ops, ASX_XDR_ENCODE, c->sbuf + 4, c->sbuf + c->ssize, 0);
	ASX__XDR_T(&c->out)->chan = c;
	asx__xdr_init(&c->in, &in_ops, ASX_XDR_DECODE, c->rbuf, c->rbuf, 0);
	ASX__XDR_T(&c->in)->chan = c;
	c->last_frag = true;
	*out = c;
	return 0;
}

void asx_xdr_chan_destroy(struct asx_xdr_chan *c)
{
	if (!c)
		return;
	free(c->sbuf);
	free(c->rbuf);
	free(c);
}

struct asx_xdr *asx_xdr_chan_out(struct asx_xdr_chan *c)
{
	return &c->out;
}

struct asx_xdr *asx_xdr_chan_in(struct asx_xdr_chan *c)
{
	return &c->in;
}
