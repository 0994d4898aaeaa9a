// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * driver.c - library messages in and out of a kernel Stream
 * (asx_kstream_put/get), and the spanning drivers: a user-space Stream's
 * tail whose lower end is a kernel Stream (asx_kstream_driver) or a pair
 * of descriptors (asx_fd_driver).
 *
 * Down: the driver's write Task has one service thread; it takes each
 * message off the Task's queue and sends it (PUTMSG, or a framed writev),
 * waiting in poll() slices while the lower end is full.  Meanwhile the
 * Task's queue fills to its high water mark and the Stream's writers wait:
 * the kernel's flow control reaches them.
 *
 * Up: a reader thread takes each message from the lower end (GETMSG, or a
 * framed read) and hands it to the Stream above with put_next, waiting in
 * slices while the Stream cannot take it; meanwhile it reads nothing, so
 * the kernel Stream (or the descriptor) fills and its writers wait.
 *
 * Slices are SLICE_NS long so that close() is noticed: the write side
 * stops when its queue is deactivated (asx_stream_shutdown/close), the
 * reader when the read Task is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <asx/kstream.h>
#include <asx/msgq.h>
#include "core/compiler.h"
#include "ipc/ipc.h"
#include "stream/stream_impl.h"
#include "kstream_impl.h"

#define SLICE_MS	100
#define SLICE_NS	(SLICE_MS * 1000000ULL)
#define FRAME_HDR	8		/* be32 length, type, band, be16 control length */
#define FRAME_MAX	ASX_FD_FRAME_MAX	/* longest framed message accepted */
#define FRAME_CTL_MAX	ASX_FD_CTL_MAX		/* longest control part */
#define RBUF_SIZE	(256u << 10)
#define IOV_MAX_	64

/* ---------------------------------------------------------------- messages */

/* Bytes of @m's chain into @buf (@len of them, already counted). */
static void gather(const struct asx_msg *m, unsigned char *buf)
{
	for (; m; m = m->cont) {
		size_t n = asx_msg_block_len(m);

		memcpy(buf, m->rd, n);
		buf += n;
	}
}

/*
 * PUTMSG @m (not FLUSH) on @ks, staging a data part of several blocks in
 * @stage (ASX_MAX_DATA bytes; NULL: allocated for the call).  0 (@m freed)
 * or a negative errno (@m kept).
 */
static int put_msg(struct asx_kstream *ks, struct asx_msg *m, unsigned char *stage)
{
	struct asx_kstream_part ctl, data, *pc = NULL;
	enum asx__kcarry carry = asx__kstream_carry(m->type);
	const struct asx_msg *d = m;
	unsigned char *tmp = NULL;
	size_t dlen;
	int r;

	if (carry == ASX__KC_NONE || carry == ASX__KC_FLUSH)
		return -EOPNOTSUPP;
	if (carry != ASX__KC_DATA) {
		if (asx_msg_block_len(m) > ASX_MAX_CTL)
			return -ERANGE;
		ctl.buf = m->rd;
		ctl.len = (int32_t)asx_msg_block_len(m);
		ctl.maxlen = 0;
		pc = &ctl;
		d = m->cont;
	}
	dlen = d ? asx_msg_length(d) : 0;
	if (dlen > ASX_MAX_DATA)
		return -ERANGE;
	data.maxlen = 0;
	data.len = (int32_t)dlen;
	if (!d || !d->cont) {
		data.buf = d ? d->rd : NULL;
	} else {
		if (!stage) {
			stage = tmp = malloc(dlen);
			if (!tmp)
				return -ENOMEM;
		}
		gather(d, stage);
		data.buf = stage;
	}
	r = asx_kstream_putmsg(ks, pc, (pc && !d) ? NULL : &data,
			       carry == ASX__KC_CTL_HIPRI ? ASX_MSG_HIPRI : 0,
			       carry == ASX__KC_CTL_HIPRI ? 0 : m->band);
	free(tmp);
	if (r == 0)
		asx_msg_free_chain(m);
	return r;
}

/* The library flush bits and band of a FLUSH message; -EINVAL if it has none. */
static int flush_bits(const struct asx_msg *m, unsigned int *band)
{
	size_t n = asx_msg_block_len(m);

	*band = n > 1 ? m->rd[1] : 0;
	return n ? m->rd[0] : -EINVAL;
}

int asx_kstream_put(struct asx_kstream *ks, struct asx_msg *m)
{
	unsigned int band;
	int f, r;

	if (!ks || !m)
		return -EINVAL;
	if (m->type != ASX_MSG_FLUSH)
		return put_msg(ks, m, NULL);
	f = flush_bits(m, &band);
	if (f < 0)
		return f;
	r = asx_kstream_flush(ks, (unsigned int)f, band);
	if (r == 0)
		asx_msg_free_chain(m);
	return r;
}

/*
 * GETMSG into @cbuf (ASX_MAX_CTL) and @dbuf (ASX_MAX_DATA), then a library
 * message of the right size.  -EPIPE: the Stream hung up.
 */
static int get_msg(struct asx_kstream *ks, struct asx_msg **mp, unsigned char *cbuf,
		   unsigned char *dbuf)
{
	struct asx_kstream_part ctl = { cbuf, ASX_MAX_CTL, -1 };
	struct asx_kstream_part data = { dbuf, ASX_MAX_DATA, -1 };
	unsigned int flags = ASX_MSG_ANY, band = 0;
	struct asx_msg *m, *d;
	int r;

	r = asx_kstream_getmsg(ks, &ctl, &data, &flags, &band);
	if (r < 0)
		return r;
	if (r)		/* the buffers are the kernel's limits: cannot happen */
		return -EMSGSIZE;
	if (ctl.len < 0 && data.len < 0)
		return -EPIPE;
	if (ctl.len >= 0) {
		m = asx_msg_alloc((size_t)ctl.len, (flags & ASX_MSG_HIPRI) ? ASX_MSG_PCPROTO
									  : ASX_MSG_PROTO);
		if (!m)
			return -ENOMEM;
		asx_msg_append(m, cbuf, (size_t)ctl.len);
		if (data.len >= 0) {
			d = asx_msg_alloc((size_t)data.len, ASX_MSG_DATA);
			if (!d) {
				asx_msg_free(m);
				return -ENOMEM;
			}
			asx_msg_append(d, dbuf, (size_t)data.len);
			m->cont = d;
		}
	} else {
		m = asx_msg_alloc((size_t)data.len, ASX_MSG_DATA);
		if (!m)
			return -ENOMEM;
		asx_msg_append(m, dbuf, (size_t)data.len);
	}
	m->band = asx_msg_is_hipri(m) ? 0 : (uint8_t)band;
	*mp = m;
	return 0;
}

int asx_kstream_get(struct asx_kstream *ks, struct asx_msg **mp)
{
	unsigned char *cbuf, *dbuf;
	int r;

	if (!ks || !mp)
		return -EINVAL;
	cbuf = malloc(ASX_MAX_CTL + ASX_MAX_DATA);
	if (!cbuf)
		return -ENOMEM;
	dbuf = cbuf + ASX_MAX_CTL;
	r = get_msg(ks, mp, cbuf, dbuf);
	free(cbuf);
	return r;
}

/* ---------------------------------------------------------------- the drivers */

enum span_kind { SPAN_KSTREAM, SPAN_FD };

#define SPAN_MAGIC	0x5350414eu	/* "SPAN" */

struct span {
	uint32_t magic;
	enum span_kind kind;
	struct asx_kstream *ks;
	int rfd, wfd;
	bool own;
	bool wsock;			/* fd: wfd is a socket */
	int hung;			/* atomic: the HANGUP went up */
	struct asx_task *rd;		/* the read Task, once opened */
	pthread_t reader;
	bool reader_on;
	int stop;			/* the reader must return */
	unsigned char *stage;		/* kstream: ASX_MAX_DATA (down) */
	unsigned char *rbuf;		/* kstream: ASX_MAX_CTL + DATA; fd: RBUF_SIZE */
	size_t roff, rlen;		/* fd: bytes of rbuf not yet parsed */
	struct asx_driver_stats st;	/* atomically updated */
};

#define BUMP(sp, field) __atomic_fetch_add(&(sp)->st.field, 1, __ATOMIC_RELAXED)
#define UNBUMP(sp, field) __atomic_fetch_sub(&(sp)->st.field, 1, __ATOMIC_RELAXED)

static int wait_fd(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r = poll(&p, 1, SLICE_MS);

	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	return r ? p.revents : 0;
}

/* The kernel Stream or descriptor refused @m for good: count and free it. */
static void drop(struct span *sp, struct asx_msg *m)
{
	BUMP(sp, drops);
	asx_msg_free_chain(m);
}

/* A FLUSH reaching the tail: flush the kernel Stream too, then as any tail. */
static void span_flush(struct span *sp, struct asx_task *t, struct asx_msg *m)
{
	unsigned int band;
	int f = flush_bits(m, &band);

	if (f < 0) {
		drop(sp, m);
		return;
	}
	if (sp->kind == SPAN_KSTREAM)
		(void)asx_kstream_flush(sp->ks, (unsigned int)f, band);
	if (f & ASX_STREAM_FLUSHR) {
		m->rd[0] &= (unsigned char)~ASX_STREAM_FLUSHW;
		if (asx_task_reply(t, m, NULL) == 0)
			return;
	}
	asx_msg_free_chain(m);
}

/* SIGPIPE is blocked in this thread for good (the write Task's service thread). */
static __thread bool sigpipe_blocked;

/* Framed writev of @m to sp->wfd, from byte @done of the frame on. */
static ssize_t frame_write(struct span *sp, const unsigned char *hdr, const struct asx_msg *m,
			   size_t done)
{
	struct iovec iov[IOV_MAX_];
	int n = 0;
	size_t skip = done;
	ssize_t w;

	if (skip < FRAME_HDR) {
		iov[n].iov_base = (void *)(hdr + skip);
		iov[n++].iov_len = FRAME_HDR - skip;
		skip = 0;
	} else {
		skip -= FRAME_HDR;
	}
	for (; m && n < IOV_MAX_; m = m->cont) {
		size_t len = asx_msg_block_len(m);

		if (skip >= len) {
			skip -= len;
			continue;
		}
		iov[n].iov_base = m->rd + skip;
		iov[n++].iov_len = len - skip;
		skip = 0;
	}
	if (!n)
		return 0;
	w = asx__ipc_writev_nosig(sp->wfd, iov, n, (sp->wsock ? ASX__NOSIG_SOCK : 0) |
				  (sigpipe_blocked ? ASX__NOSIG_BLOCKED : 0));
	return w;
}

/* fd: the control part of @m (the first block of a PROTO or PCPROTO), in bytes. */
static size_t frame_ctl(const struct asx_msg *m)
{
	return m->type == ASX_MSG_PROTO || m->type == ASX_MSG_PCPROTO ? asx_msg_block_len(m) : 0;
}

/*
 * What the lower end can never carry is refused when it is put (the
 * message still the caller's), not dropped by the service thread later.
 */
static int span_admit(struct asx_task *t, const struct asx_msg *m)
{
	struct span *sp = asx_module_arg(asx_task_module(t));
	enum asx__kcarry carry;

	if (m->type == ASX_MSG_FLUSH)
		return 0;
	if (sp->kind == SPAN_FD)
		return asx_msg_length(m) > FRAME_MAX || frame_ctl(m) > FRAME_CTL_MAX ? -EMSGSIZE
										: 0;
	carry = asx__kstream_carry(m->type);
	if (carry == ASX__KC_DATA)
		return asx_msg_length(m) > ASX_MAX_DATA ? -EMSGSIZE : 0;
	if (carry == ASX__KC_CTL || carry == ASX__KC_CTL_HIPRI)
		return asx_msg_block_len(m) > ASX_MAX_CTL ||
		       (m->cont ? asx_msg_length(m->cont) : 0) > ASX_MAX_DATA ? -EMSGSIZE : 0;
	return 0;
}

static void hangup(struct span *sp);

/*
 * Send @m down, waiting in slices while the lower end is full.  Returns 0
 * (sent or dropped), or -ESHUTDOWN when @t's queue was deactivated while
 * waiting (@m freed).
 */
static int span_send(struct span *sp, struct asx_task *t, struct asx_msg *m)
{
	int fd = sp->kind == SPAN_KSTREAM ? asx_kstream_fd(sp->ks) : sp->wfd;
	unsigned char hdr[FRAME_HDR];
	size_t total = 0, done = 0, ctl = 0;
	bool waited = false, woke = false;
	short wait_ev = POLLOUT;
	int r;

	/*
	 * Each band of a kernel Stream has its own flow control: a message of
	 * a band above 0 waits for POLLWRBAND, which says only that some band
	 * written to has room, perhaps not this one; woken and refused again,
	 * the wait sleeps a millisecond first, so it never spins.
	 */
	if (sp->kind == SPAN_KSTREAM && !asx_msg_is_hipri(m) && m->band)
		wait_ev = POLLWRBAND;
	if (m->type == ASX_MSG_FLUSH) {
		span_flush(sp, t, m);
		return 0;
	}
	if (sp->kind == SPAN_FD) {
		uint32_t be;
		uint16_t be16;

		total = asx_msg_length(m);
		ctl = frame_ctl(m);
		if (total > FRAME_MAX || ctl > FRAME_CTL_MAX) {
			/* refused at put time (span_admit): cannot happen */
			drop(sp, m);
			return 0;
		}
		be = htonl((uint32_t)total);
		be16 = htons((uint16_t)ctl);
		memcpy(hdr, &be, 4);
		hdr[4] = m->type;
		hdr[5] = asx_msg_is_hipri(m) ? 0 : m->band;
		memcpy(hdr + 6, &be16, 2);
		total += FRAME_HDR;
	}
	/*
	 * Counted before it is sent: the far end may hold it before the call
	 * returns, and whoever reads the counters once it arrived must see it.
	 */
	BUMP(sp, down_msgs);
	for (;;) {
		if (sp->kind == SPAN_KSTREAM) {
			r = put_msg(sp->ks, m, sp->stage);
			if (r == 0)
				break;
		} else {
			ssize_t w = frame_write(sp, hdr, m, done);

			if (w >= 0) {
				done += (size_t)w;
				if (done == total) {
					asx_msg_free_chain(m);
					break;
				}
				continue;
			}
			r = (int)w;
		}
		if (r == -EINTR)
			continue;
		if (r != -EAGAIN) {
			UNBUMP(sp, down_msgs);
			drop(sp, m);
			if (r == -EPIPE || r == -ECONNRESET) {
				/* the far end is gone (a kernel Stream that hung
				 * up raised a SIGPIPE this thread blocks) */
				if (sp->kind == SPAN_KSTREAM && sigpipe_blocked)
					asx__ipc_sigpipe_take();
				hangup(sp);
			}
			return 0;
		}
		if (!waited) {
			waited = true;
			BUMP(sp, down_waits);
		}
		do {
			if (!asx_msgq_is_active(asx_task_queue(t))) {
				UNBUMP(sp, down_msgs);
				asx_msg_free_chain(m);
				return -ESHUTDOWN;
			}
			if (woke)
				(void)poll(NULL, 0, 1);
			r = wait_fd(fd, wait_ev);
		} while (r == 0);
		woke = true;
		/* POLLERR, POLLHUP: the next write says what went wrong */
		if (r < 0 || (r & POLLNVAL)) {
			UNBUMP(sp, down_msgs);
			drop(sp, m);
			return 0;
		}
	}
	return 0;
}

static int span_wr_open(struct asx_task *t, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return asx_task_activate(t, 1);
}

/* Without a service thread (never, but put may be called): send here. */
static int span_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	(void)dl;
	span_send(asx_module_arg(asx_task_module(t)), t, m);
	return 0;
}

static int span_wr_svc(struct asx_task *t)
{
	struct span *sp = asx_module_arg(asx_task_module(t));
	struct asx_msg *m;
	int r;

	/* a peer gone away is -EPIPE and a HANGUP, never a SIGPIPE */
	sigpipe_blocked = asx__ipc_sigpipe_block() == 0;
	for (;;) {
		r = asx_task_getq(t, &m, NULL);
		if (r == -ESHUTDOWN)
			return 0;
		if (r)
			continue;
		span_send(sp, t, m);
	}
}

/* Hand @m up, waiting in slices.  0, or -ESHUTDOWN (stop: @m freed). */
static int deliver(struct span *sp, struct asx_msg *m)
{
	struct timespec dl;
	int r;

	if (!asx_msg_is_hipri(m) && !asx_task_canput_next(sp->rd))
		BUMP(sp, up_waits);
	BUMP(sp, up_msgs);	/* before: the reader above may have it at once */
	for (;;) {
		r = asx_task_put_next(sp->rd, m, asx_deadline(&dl, SLICE_NS));
		if (r == 0)
			return 0;
		if (r == -ESHUTDOWN || ASX_LOAD_ACQ(&sp->stop)) {
			UNBUMP(sp, up_msgs);
			asx_msg_free_chain(m);
			return -ESHUTDOWN;
		}
		if (r != -ETIMEDOUT) {
			/* refused above (a Module's error): not ours to retry */
			UNBUMP(sp, up_msgs);
			drop(sp, m);
			return 0;
		}
	}
}

/* One HANGUP up the Stream: the first of the reader (end of file) and the writer (EPIPE). */
static void hangup(struct span *sp)
{
	struct asx_msg *m;

	if (__atomic_exchange_n(&sp->hung, 1, __ATOMIC_ACQ_REL))
		return;
	m = asx_msg_alloc(0, ASX_MSG_HANGUP);
	if (m)
		(void)deliver(sp, m);
}

/* fd: the next whole frame of sp->rbuf as a message; 0 when incomplete. */
static int parse_frame(struct span *sp, struct asx_msg **mp)
{
	unsigned char *p = sp->rbuf + sp->roff;
	uint32_t len;
	uint16_t ctl;
	struct asx_msg *m, *d;

	if (sp->rlen < FRAME_HDR)
		return 0;
	memcpy(&len, p, 4);
	memcpy(&ctl, p + 6, 2);
	len = ntohl(len);
	ctl = ntohs(ctl);
	if (len > FRAME_MAX || ctl > len)
		return -EPROTO;
	if (sp->rlen < FRAME_HDR + (size_t)len)
		return 0;
	m = asx_msg_alloc(len, p[4]);
	if (!m)
		return -ENOMEM;
	asx_msg_append(m, p + FRAME_HDR, len);
	m->band = p[5];
	if (ctl < len && (m->type == ASX_MSG_PROTO || m->type == ASX_MSG_PCPROTO)) {
		d = asx_msg_dup(m);
		if (!d) {
			asx_msg_free(m);
			return -ENOMEM;
		}
		m->wr = m->rd + ctl;
		d->rd += ctl;
		d->type = ASX_MSG_DATA;
		m->cont = d;
	}
	sp->roff += FRAME_HDR + len;
	sp->rlen -= FRAME_HDR + len;
	*mp = m;
	return 1;
}

/* fd: the next message, reading more as needed.  -EPIPE at end of file. */
static int fd_get(struct span *sp, struct asx_msg **mp)
{
	uint32_t len;
	ssize_t n;
	int r;

	for (;;) {
		r = parse_frame(sp, mp);
		if (r)
			return r < 0 ? r : 0;
		if (sp->rlen >= FRAME_HDR) {
			memcpy(&len, sp->rbuf + sp->roff, 4);
			len = ntohl(len);
			if (FRAME_HDR + (size_t)len > RBUF_SIZE) {
				/* a frame longer than the buffer: grow it */
				unsigned char *nb = malloc(FRAME_HDR + (size_t)len);

				if (!nb)
					return -ENOMEM;
				memcpy(nb, sp->rbuf + sp->roff, sp->rlen);
				free(sp->rbuf);
				sp->rbuf = nb;
				sp->roff = 0;
			}
		}
		if (sp->roff && sp->roff + sp->rlen > RBUF_SIZE / 2) {
			memmove(sp->rbuf, sp->rbuf + sp->roff, sp->rlen);
			sp->roff = 0;
		}
		{
			size_t cap = RBUF_SIZE;

			if (sp->rlen >= FRAME_HDR) {
				memcpy(&len, sp->rbuf + sp->roff, 4);
				if (FRAME_HDR + (size_t)ntohl(len) > cap)
					cap = FRAME_HDR + (size_t)ntohl(len);
			}
			n = read(sp->rfd, sp->rbuf + sp->roff + sp->rlen,
				 cap - sp->roff - sp->rlen);
		}
		if (n > 0) {
			sp->rlen += (size_t)n;
			continue;
		}
		if (n == 0)
			return -EPIPE;
		return -errno;
	}
}

static void *reader_main(void *arg)
{
	struct span *sp = arg;
	int fd = sp->kind == SPAN_KSTREAM ? asx_kstream_fd(sp->ks) : sp->rfd;
	struct asx_msg *m;
	int r;

	while (!ASX_LOAD_ACQ(&sp->stop)) {
		if (sp->kind == SPAN_KSTREAM)
			r = get_msg(sp->ks, &m, sp->rbuf, sp->rbuf + ASX_MAX_CTL);
		else
			r = fd_get(sp, &m);
		if (r == 0) {
			if (deliver(sp, m))
				break;
			continue;
		}
		if (r == -EINTR || r == -ENOMEM)
			continue;
		if (r != -EAGAIN) {
			hangup(sp);
			break;
		}
		r = wait_fd(fd, POLLIN | POLLPRI);
		if (r < 0 || (r & POLLNVAL)) {
			hangup(sp);
			break;
		}
		/* POLLHUP with nothing left: the next get says -EPIPE */
	}
	return NULL;
}

static int span_rd_open(struct asx_task *t, int argc, char **argv)
{
	struct span *sp = asx_module_arg(asx_task_module(t));
	int r;

	(void)argc;
	(void)argv;
	sp->rd = t;
	ASX_STORE_REL(&sp->stop, 0);
	r = pthread_create(&sp->reader, NULL, reader_main, sp);
	if (r)
		return -r;
	sp->reader_on = true;
	return 0;
}

static void stop_reader(struct span *sp)
{
	if (!sp->reader_on)
		return;
	ASX_STORE_REL(&sp->stop, 1);
	pthread_join(sp->reader, NULL);
	sp->reader_on = false;
}

static void span_rd_close(struct asx_task *t, unsigned int flags)
{
	(void)flags;
	stop_reader(asx_module_arg(asx_task_module(t)));
}

static const struct asx_task_ops span_wr_ops = {
	.open = span_wr_open, .put = span_wr_put, .svc = span_wr_svc,
};
static const struct asx_task_ops span_rd_ops = {
	.open = span_rd_open, .close = span_rd_close,
};

static void span_free(void *arg)
{
	struct span *sp = arg;

	stop_reader(sp);
	sp->magic = 0;
	if (sp->own) {
		if (sp->kind == SPAN_KSTREAM) {
			asx_kstream_close(sp->ks);
		} else {
			close(sp->rfd);
			if (sp->wfd != sp->rfd)
				close(sp->wfd);
		}
	}
	free(sp->stage);
	free(sp->rbuf);
	free(sp);
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

static int make(struct asx_module **out, const char *name, struct span *sp)
{
	struct asx_module *mod;
	int r;

	struct stat st;

	r = set_nonblock(sp->rfd);
	if (!r && sp->wfd != sp->rfd)
		r = set_nonblock(sp->wfd);
	if (r)
		goto err;
	sp->wsock = sp->kind == SPAN_FD && fstat(sp->wfd, &st) == 0 && S_ISSOCK(st.st_mode);
	r = -ENOMEM;
	if (sp->kind == SPAN_KSTREAM) {
		sp->stage = malloc(ASX_MAX_DATA);
		sp->rbuf = malloc(ASX_MAX_CTL + ASX_MAX_DATA);
	} else {
		sp->stage = NULL;
		sp->rbuf = malloc(RBUF_SIZE);
	}
	if ((sp->kind == SPAN_KSTREAM && !sp->stage) || !sp->rbuf)
		goto err;
	r = asx_module_create(&mod, name, &span_wr_ops, &span_rd_ops, sp);
	if (r)
		goto err;
	asx_module_set_dtor(mod, span_free);
	asx__task_set_admit(asx_module_wr(mod), span_admit);
	sp->magic = SPAN_MAGIC;
	*out = mod;
	return 0;
err:
	free(sp->stage);
	free(sp->rbuf);
	free(sp);
	return r;
}

int asx_kstream_driver(struct asx_module **out, const char *name, struct asx_kstream *ks,
		       unsigned int flags)
{
	struct span *sp;

	if (!out || !ks || (flags & ~ASX_DRIVER_OWN))
		return -EINVAL;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->kind = SPAN_KSTREAM;
	sp->ks = ks;
	sp->rfd = sp->wfd = asx_kstream_fd(ks);
	sp->own = flags & ASX_DRIVER_OWN;
	return make(out, name ? name : "kstream", sp);
}

int asx_fd_driver(struct asx_module **out, const char *name, int rfd, int wfd,
		  unsigned int flags)
{
	struct span *sp;

	if (!out || (flags & ~ASX_DRIVER_OWN))
		return -EINVAL;
	if (rfd < 0 || wfd < 0)
		return -EBADF;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->kind = SPAN_FD;
	sp->rfd = rfd;
	sp->wfd = wfd;
	sp->own = flags & ASX_DRIVER_OWN;
	return make(out, name ? name : "fd", sp);
}

int asx_driver_stats(struct asx_module *drv, struct asx_driver_stats *st)
{
	struct span *sp;

	if (!drv || !st)
		return -EINVAL;
	sp = asx_module_arg(drv);
	if (!sp || sp->magic != SPAN_MAGIC)
		return -EINVAL;
	st->down_msgs = ASX_LOAD_RLX(&sp->st.down_msgs);
	st->up_msgs = ASX_LOAD_RLX(&sp->st.up_msgs);
	st->down_waits = ASX_LOAD_RLX(&sp->st.down_waits);
	st->up_waits = ASX_LOAD_RLX(&sp->st.up_waits);
	st->drops = ASX_LOAD_RLX(&sp->st.drops);
	return 0;
}
