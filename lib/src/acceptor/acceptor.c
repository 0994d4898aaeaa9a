// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * acceptor.c - Acceptor, Connector and Svc_Handler (asx/acceptor.h).
 *
 * Both an acceptor and a connector are a "frame": the strategy, the list
 * of live handlers, and a reference count (the creator's, one per linked
 * handler, pending connect, running thread and listen registration), so
 * that whatever ends last frees it.  A handler runs under one of three
 * strategies; each ends in finish(), which unlinks it, calls close, closes
 * the stream and releases it.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asx/acceptor.h>
#include <asx/asc.h>
#include <asx/sync.h>

#include "core/opts.h"

#define H_WANT_OUT	0x1u
#define H_REG_OUT	0x2u
#define H_REGISTERED	0x4u

struct frame {
	struct asx_svc_strategy st;
	struct asx_sock_opts sock;
	bool has_sock;
	struct asx_mutex lock;
	struct asx_cond cond;
	struct asx_svc_handler *head;	/* live handlers */
	struct pending *pend;		/* async connects */
	unsigned int live, threads, max;
	int refs;			/* atomic */
	bool closing;
	int wake_close;			/* eventfd, written once at close, never read */
	uint64_t accepted, opened, closed, refused;
};

struct asx_acceptor {
	struct frame f;
	struct asx_sock_acceptor lsn;
	struct asx_event_handler eh;	/* REACTIVE: the listen registration */
	asx_svc_make_fn make;
	void *arg;
	bool suspended;
	int wake_acc;			/* accept thread: suspend/resume/close */
};

struct asx_connector {
	struct frame f;
	struct asx_sock_connector conn;
};

struct pending {
	struct asx_event_handler eh;
	struct frame *f;
	struct asx_connector *c;
	struct asx_svc_handler *h;
	struct asx_sock_stream s;
	struct pending *prev, *next;
	int result;			/* 1: undecided */
};

/* ------------------------------------------------------------ frame */

static int frame_init(struct frame *f, const struct asx_svc_strategy *st)
{
	f->refs = 1;
	asx_mutex_init(&f->lock);
	asx_cond_init(&f->cond);
	if (st->kind > ASX_SVC_ASC || (st->kind == ASX_SVC_REACTIVE && !st->reactor) ||
	    (st->kind == ASX_SVC_ASC && !st->asc))
		return -EINVAL;
	f->st = *st;
	f->wake_close = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	return f->wake_close < 0 ? -errno : 0;
}

static void frame_get(struct frame *f)
{
	__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

/* The frame is the first member of an acceptor and of a connector. */
static void frame_put(struct frame *f)
{
	if (__atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL))
		return;
	if (f->wake_close >= 0)
		close(f->wake_close);
	asx_cond_destroy(&f->cond);
	asx_mutex_destroy(&f->lock);
	free(f);
}

static void thread_done(struct frame *f)
{
	asx_mutex_lock(&f->lock);
	if (!--f->threads)
		asx_cond_broadcast(&f->cond);
	asx_mutex_unlock(&f->lock);
	frame_put(f);
}

/*
 * Run @fn(@arg) on a new thread of the strategy's kind.  The caller
 * counted it (f->threads++ under the lock, in the same section that saw
 * the frame not closing, so frame_close() waits for it) and took a frame
 * reference for it; on failure both are given back here.
 */
static int spawn(struct frame *f, void *(*fn)(void *), void *arg)
{
	int r;

	if (f->st.kind == ASX_SVC_THREAD) {
		pthread_attr_t at;
		pthread_t t;

		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		r = -pthread_create(&t, &at, fn, arg);
		pthread_attr_destroy(&at);
	} else {
		ASX_OPTS(struct asx_asc_thread_opts, o, .detached = true, .name = "asx-svc");
		r = asx_asc_thread_spawn(f->st.asc, f->st.qos, fn, arg, &o, NULL);
	}
	if (r)
		thread_done(f);
	return r;
}

static void link_h(struct frame *f, struct asx_svc_handler *h)
{
	h->asx__link[0] = NULL;
	h->asx__link[1] = f->head;
	if (f->head)
		f->head->asx__link[0] = h;
	f->head = h;
	f->live++;
}

static void unlink_h(struct frame *f, struct asx_svc_handler *h)
{
	struct asx_svc_handler *p = h->asx__link[0], *n = h->asx__link[1];

	if (p)
		p->asx__link[1] = n;
	else
		f->head = n;
	if (n)
		n->asx__link[0] = p;
	f->live--;
	f->closed++;
}

/* ------------------------------------------------------------ handlers */

void asx_svc_handler_init(struct asx_svc_handler *h, const struct asx_svc_handler_ops *ops,
			  void *ctx)
{
	memset(h, 0, sizeof(*h));
	h->ops = ops;
	h->ctx = ctx;
	h->stream.sock.fd = -1;
}

/* The end of every handler that was linked: close, stream, release. */
static void finish(struct asx_svc_handler *h, bool release)
{
	struct frame *f = h->asx__owner;

	asx_mutex_lock(&f->lock);
	unlink_h(f, h);
	if (!f->live)
		asx_cond_broadcast(&f->cond);
	asx_mutex_unlock(&f->lock);
	h->ops->close(h, h->asx__why);
	asx_sock_stream_close(&h->stream);
	if (release && h->ops->release)
		h->ops->release(h);
	if (release)
		frame_put(f);
}

static struct asx_svc_handler *eh_h(struct asx_event_handler *eh)
{
	return (struct asx_svc_handler *)((char *)eh - offsetof(struct asx_svc_handler, asx__eh));
}

static int rx_input(struct asx_event_handler *eh, int fd)
{
	struct asx_svc_handler *h = eh_h(eh);
	struct frame *f = h->asx__owner;

	(void)fd;
	if (h->ops->input(h) < 0)
		asx_reactor_remove_handler(f->st.reactor, eh);
	return 0;
}

static void rx_sync_out(struct asx_svc_handler *h)
{
	struct frame *f = h->asx__owner;
	int fd = asx_handle(&h->stream);

	if ((h->asx__flags & H_WANT_OUT) && !(h->asx__flags & H_REG_OUT)) {
		if (!asx_reactor_register_fd(f->st.reactor, fd, &h->asx__eh, ASX_EV_WRITE))
			h->asx__flags |= H_REG_OUT;
	} else if (!(h->asx__flags & H_WANT_OUT) && (h->asx__flags & H_REG_OUT)) {
		asx_reactor_remove_fd(f->st.reactor, fd, ASX_EV_WRITE);
		h->asx__flags &= ~H_REG_OUT;
	}
}

static int rx_output(struct asx_event_handler *eh, int fd)
{
	struct asx_svc_handler *h = eh_h(eh);
	struct frame *f = h->asx__owner;

	(void)fd;
	if (h->ops->output(h) < 0)
		asx_reactor_remove_handler(f->st.reactor, eh);
	else
		rx_sync_out(h);
	return 0;
}

static int rx_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	(void)fd;
	(void)mask;
	finish(eh_h(eh), false);
	asx_event_handler_put(eh);	/* the framework's reference */
	return 0;
}

static void rx_release(struct asx_event_handler *eh)
{
	struct asx_svc_handler *h = eh_h(eh);
	struct frame *f = h->asx__owner;

	if (h->ops->release)
		h->ops->release(h);
	frame_put(f);
}

static const struct asx_event_handler_ops rx_ops = {
	.handle_input = rx_input,
	.handle_output = rx_output,
	.handle_close = rx_close,
	.release = rx_release,
};

int asx_svc_handler_want_output(struct asx_svc_handler *h, bool on)
{
	struct frame *f = h->asx__owner;

	if (!h->ops->output)
		return -EINVAL;
	if (on)
		h->asx__flags |= H_WANT_OUT;
	else
		h->asx__flags &= ~H_WANT_OUT;
	/* inside a reactive callback: change the registration now */
	if (f && f->st.kind == ASX_SVC_REACTIVE && (h->asx__flags & H_REGISTERED))
		rx_sync_out(h);
	return 0;
}

/* A handler thread: open, then input/output as the stream is ready. */
static void *thread_main(void *arg)
{
	struct asx_svc_handler *h = arg;
	struct frame *f = h->asx__owner;
	int r = h->ops->open ? h->ops->open(h) : 0;

	while (r >= 0) {
		struct pollfd p[2] = {
			{ .fd = asx_handle(&h->stream), .events = POLLIN },
			{ .fd = f->wake_close, .events = POLLIN },
		};

		if (h->asx__flags & H_WANT_OUT)
			p[0].events |= POLLOUT;
		if (asx_asc_poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			h->asx__why = -errno;
			break;
		}
		if (p[1].revents)
			break;		/* closing: why is -ECANCELED */
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			r = h->ops->input(h);
		if (r >= 0 && (p[0].revents & POLLOUT) && h->ops->output)
			r = h->ops->output(h);
	}
	finish(h, true);
	thread_done(f);
	return NULL;
}

/*
 * Run @h (its stream connected) under @f's strategy.  On return @h
 * belongs to the framework, whatever happened.
 */
static void start(struct frame *f, struct asx_svc_handler *h)
{
	bool cancel, full, rx = f->st.kind == ASX_SVC_REACTIVE;
	int r;

	h->asx__owner = f;
	/* before linking: frame_close() may take a reference from then on */
	if (rx)
		asx_event_handler_init(&h->asx__eh, &rx_ops);
	frame_get(f);
	asx_mutex_lock(&f->lock);
	cancel = f->closing;
	full = f->max && f->live >= f->max;
	link_h(f, h);
	if (!cancel && !full)
		f->opened++;
	else
		f->refused++;
	if (!cancel && !full && !rx) {
		f->threads++;		/* the handler's thread: see spawn() */
		frame_get(f);
	}
	asx_mutex_unlock(&f->lock);
	if (cancel || full) {
		h->asx__why = cancel ? -ECANCELED : -EMFILE;
		r = -1;
	} else if (!rx) {
		r = spawn(f, thread_main, h);
		if (r)
			h->asx__why = r;
	} else {
		r = h->ops->open ? h->ops->open(h) : 0;
		if (r >= 0) {
			unsigned int m = ASX_EV_READ;

			if (h->asx__flags & H_WANT_OUT) {
				h->asx__flags |= H_REG_OUT;
				m |= ASX_EV_WRITE;
			}
			r = asx_reactor_register_fd(f->st.reactor, asx_handle(&h->stream),
						    &h->asx__eh, m);
			if (r)
				h->asx__why = r;
			else
				h->asx__flags |= H_REGISTERED;
		}
	}
	if (r < 0) {
		finish(h, !rx);
		if (rx)
			asx_event_handler_put(&h->asx__eh);	/* the last: rx_release */
		return;
	}
	if (!rx)
		return;
	/* a close that ran between link and register missed it: catch it */
	asx_mutex_lock(&f->lock);
	cancel = f->closing;
	asx_mutex_unlock(&f->lock);
	if (cancel) {
		h->asx__why = -ECANCELED;
		asx_reactor_remove_handler(f->st.reactor, &h->asx__eh);
	}
}

/*
 * Close every live handler and pending connect of @f (after closing was
 * set), and in the thread strategies wait until their threads ended.
 */
static void frame_close(struct frame *f)
{
	struct asx_event_handler **ehs = NULL;
	size_t n = 0, i;
	uint64_t one = 1;

	asx_mutex_lock(&f->lock);
	f->closing = true;
	if (write(f->wake_close, &one, sizeof(one)) < 0)
		abort();	/* an eventfd of ours: cannot fail */
	for (struct asx_svc_handler *h = f->head; h; h = h->asx__link[1]) {
		h->asx__why = -ECANCELED;
		/* a thread blocked in its own recv wakes with end of stream */
		if (f->st.kind != ASX_SVC_REACTIVE)
			shutdown(asx_handle(&h->stream), SHUT_RDWR);
		n++;
	}
	for (struct pending *p = f->pend; p; p = p->next)
		n++;
	if (f->st.kind == ASX_SVC_REACTIVE || f->pend)
		ehs = calloc(n ? n : 1, sizeof(*ehs));
	n = 0;
	if (ehs) {
		for (struct asx_svc_handler *h = f->head; h; h = h->asx__link[1]) {
			if (f->st.kind != ASX_SVC_REACTIVE)
				continue;	/* threads: woken by wake_close */
			asx_event_handler_get(&h->asx__eh);
			ehs[n++] = &h->asx__eh;
		}
		for (struct pending *p = f->pend; p; p = p->next) {
			if (p->result == 1)
				p->result = -ECANCELED;
			asx_event_handler_get(&p->eh);
			ehs[n++] = &p->eh;
		}
	}
	asx_mutex_unlock(&f->lock);
	for (i = 0; i < n; i++) {
		asx_reactor_remove_handler(f->st.reactor, ehs[i]);
		asx_event_handler_put(ehs[i]);
	}
	free(ehs);
	if (f->st.kind != ASX_SVC_REACTIVE) {
		asx_mutex_lock(&f->lock);
		while (f->threads)
			asx_cond_wait(&f->cond, &f->lock);
		asx_mutex_unlock(&f->lock);
	}
}

/* ------------------------------------------------------------ acceptor */

/* Accept one connection and start a handler on it. */
static void accept_one(struct asx_acceptor *a)
{
	struct asx_sock_stream s;
	struct asx_svc_handler *h;

	if (asx_sock_acceptor_accept(&a->lsn, &s, NULL, ASX_DEADLINE_NOW))
		return;
	asx_mutex_lock(&a->f.lock);
	a->f.accepted++;
	asx_mutex_unlock(&a->f.lock);
	h = a->make(a->arg);
	if (!h) {
		asx_mutex_lock(&a->f.lock);
		a->f.refused++;
		asx_mutex_unlock(&a->f.lock);
		asx_sock_stream_close(&s);
		return;
	}
	h->stream = s;
	start(&a->f, h);
}

static struct asx_acceptor *eh_acc(struct asx_event_handler *eh)
{
	return (struct asx_acceptor *)((char *)eh - offsetof(struct asx_acceptor, eh));
}

static int lsn_input(struct asx_event_handler *eh, int fd)
{
	(void)fd;
	accept_one(eh_acc(eh));
	return 0;
}

static int lsn_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	(void)fd;
	(void)mask;
	asx_sock_acceptor_close(&eh_acc(eh)->lsn);
	return 0;
}

static void lsn_release(struct asx_event_handler *eh)
{
	frame_put(&eh_acc(eh)->f);
}

static const struct asx_event_handler_ops lsn_ops = {
	.handle_input = lsn_input,
	.handle_close = lsn_close,
	.release = lsn_release,
};

static void *accept_main(void *arg)
{
	struct asx_acceptor *a = arg;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = a->wake_acc, .events = POLLIN },
			{ .fd = asx_handle(&a->lsn), .events = POLLIN },
		};
		bool closing, suspended;
		uint64_t v;

		asx_mutex_lock(&a->f.lock);
		closing = a->f.closing;
		suspended = a->suspended;
		asx_mutex_unlock(&a->f.lock);
		if (closing)
			break;
		if (asx_asc_poll(p, suspended ? 1 : 2, -1) < 0)
			continue;
		if (p[0].revents && read(a->wake_acc, &v, sizeof(v)) < 0)
			v = 0;
		if (!suspended && (p[1].revents & POLLIN))
			accept_one(a);
	}
	asx_sock_acceptor_close(&a->lsn);
	thread_done(&a->f);
	return NULL;
}

static void poke(int efd)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) < 0)
		abort();	/* an eventfd of ours: cannot fail */
}

int asx_acceptor_create(struct asx_acceptor **out, const struct asx_addr *local,
			const struct asx_acceptor_opts *opts)
{
	struct asx_acceptor_opts o;
	ASX_OPTS(struct asx_sock_opts, dso, .flags = ASX_SOCK_REUSEADDR);
	struct asx_acceptor *a;
	int r;

	r = ASX__OPTS_COPY(&o, opts);
	if (r)
		return r;
	if (!out || !local || !o.make)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->wake_acc = -1;
	a->f.wake_close = -1;
	r = frame_init(&a->f, &o.strategy);
	if (r)
		goto fail;
	a->make = o.make;
	a->arg = o.arg;
	a->f.max = o.max_handlers;
	r = asx_sock_acceptor_open(&a->lsn, local, o.sock ? o.sock : &dso);
	if (r)
		goto fail;
	if (o.strategy.kind == ASX_SVC_REACTIVE) {
		asx_event_handler_init(&a->eh, &lsn_ops);
		frame_get(&a->f);
		r = asx_reactor_register_fd(o.strategy.reactor, asx_handle(&a->lsn), &a->eh,
					    ASX_EV_READ);
		asx_event_handler_put(&a->eh);	/* the reactor holds it now */
		if (r)
			goto fail_lsn;		/* released: the frame's ref went */
	} else {
		a->wake_acc = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (a->wake_acc < 0) {
			r = -errno;
			goto fail_lsn;
		}
		a->f.threads++;		/* not shared yet: no lock needed */
		frame_get(&a->f);
		r = spawn(&a->f, accept_main, a);
		if (r)
			goto fail_lsn;
	}
	*out = a;
	return 0;
fail_lsn:
	asx_sock_acceptor_close(&a->lsn);
fail:
	if (a->wake_acc >= 0)
		close(a->wake_acc);
	frame_put(&a->f);
	return r;
}

int asx_acceptor_local_addr(struct asx_acceptor *acc, struct asx_addr *out)
{
	return asx_sock_local_addr(ASX_SOCK(&acc->lsn), out);
}

static int acc_suspend(struct asx_acceptor *a, bool on)
{
	if (a->f.st.kind == ASX_SVC_REACTIVE)
		return on ? asx_reactor_suspend_handler(a->f.st.reactor, &a->eh)
			  : asx_reactor_resume_handler(a->f.st.reactor, &a->eh);
	asx_mutex_lock(&a->f.lock);
	a->suspended = on;
	asx_mutex_unlock(&a->f.lock);
	poke(a->wake_acc);
	return 0;
}

int asx_acceptor_suspend(struct asx_acceptor *acc)
{
	return acc_suspend(acc, true);
}

int asx_acceptor_resume(struct asx_acceptor *acc)
{
	return acc_suspend(acc, false);
}

void asx_acceptor_stats(struct asx_acceptor *acc, struct asx_acceptor_stats *st)
{
	asx_mutex_lock(&acc->f.lock);
	st->accepted = acc->f.accepted;
	st->opened = acc->f.opened;
	st->closed = acc->f.closed;
	st->refused = acc->f.refused;
	st->live = acc->f.live;
	asx_mutex_unlock(&acc->f.lock);
}

int asx_acceptor_destroy(struct asx_acceptor *acc)
{
	if (!acc)
		return 0;
	if (acc->f.st.kind == ASX_SVC_REACTIVE) {
		asx_reactor_remove_handler(acc->f.st.reactor, &acc->eh);
	} else {
		asx_mutex_lock(&acc->f.lock);
		acc->f.closing = true;
		asx_mutex_unlock(&acc->f.lock);
		poke(acc->wake_acc);
	}
	frame_close(&acc->f);
	if (acc->wake_acc >= 0)
		close(acc->wake_acc);
	frame_put(&acc->f);
	return 0;
}

/* ------------------------------------------------------------ connector */

int asx_connector_create(struct asx_connector **out, const struct asx_connector_opts *opts)
{
	struct asx_connector_opts o;
	struct asx_connector *c;
	int r;

	r = ASX__OPTS_COPY(&o, opts);
	if (r)
		return r;
	if (!out)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->f.wake_close = -1;
	/* a connector with only a Reactor for async connects may use threads */
	r = frame_init(&c->f, &o.strategy);
	if (!r)
		r = asx_sock_connector_init(&c->conn, o.sock);
	if (r) {
		frame_put(&c->f);
		return r;
	}
	*out = c;
	return 0;
}

int asx_connector_connect(struct asx_connector *c, struct asx_svc_handler *h,
			  const struct asx_addr *to, const struct timespec *deadline)
{
	struct asx_sock_stream s;
	int r;

	if (!c || !h || !h->ops || !h->ops->input || !h->ops->close || !to)
		return -EINVAL;
	r = asx_sock_connector_connect(&c->conn, &s, to, deadline);
	if (r)
		return r;
	h->stream = s;
	start(&c->f, h);
	return 0;
}

static struct pending *eh_p(struct asx_event_handler *eh)
{
	return (struct pending *)((char *)eh - offsetof(struct pending, eh));
}

static void pend_decide(struct pending *p, int result)
{
	asx_mutex_lock(&p->f->lock);
	if (p->result == 1)
		p->result = result;
	asx_mutex_unlock(&p->f->lock);
	asx_reactor_remove_handler(p->f->st.reactor, &p->eh);
}

static int pend_output(struct asx_event_handler *eh, int fd)
{
	struct pending *p = eh_p(eh);
	int r;

	(void)fd;
	r = asx_sock_connector_complete(&p->c->conn, &p->s, ASX_DEADLINE_NOW);
	if (r == -ETIMEDOUT)
		return 0;	/* not yet */
	pend_decide(p, r);
	return 0;
}

static int pend_timeout(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	(void)now;
	(void)arg;
	pend_decide(eh_p(eh), -ETIMEDOUT);
	return 0;
}

static int pend_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	struct pending *p = eh_p(eh);
	struct frame *f = p->f;
	struct asx_svc_handler *h = p->h;
	int result;

	(void)fd;
	(void)mask;
	asx_mutex_lock(&f->lock);
	if (p->prev)
		p->prev->next = p->next;
	else
		f->pend = p->next;
	if (p->next)
		p->next->prev = p->prev;
	result = p->result == 1 ? -ECANCELED : p->result;
	asx_mutex_unlock(&f->lock);
	if (!result) {
		h->stream = p->s;
		start(f, h);
		return 0;
	}
	asx_sock_stream_close(&p->s);	/* -1 after a failed complete */
	h->ops->close(h, result);
	if (h->ops->release)
		h->ops->release(h);
	return 0;
}

static void pend_release(struct asx_event_handler *eh)
{
	struct pending *p = eh_p(eh);
	struct frame *f = p->f;

	free(p);
	frame_put(f);
}

static const struct asx_event_handler_ops pend_ops = {
	.handle_output = pend_output,
	.handle_timeout = pend_timeout,
	.handle_close = pend_close,
	.release = pend_release,
};

int asx_connector_connect_async(struct asx_connector *c, struct asx_svc_handler *h,
				const struct asx_addr *to, uint64_t timeout_ns)
{
	struct asx_reactor *rx = c ? c->f.st.reactor : NULL;
	struct pending *p;
	int r;

	if (!rx || !h || !h->ops || !h->ops->input || !h->ops->close || !to)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	asx_event_handler_init(&p->eh, &pend_ops);
	p->f = &c->f;
	p->c = c;
	p->h = h;
	p->result = 1;
	frame_get(&c->f);
	r = asx_sock_connector_start(&c->conn, &p->s, to);
	if (r && r != -EINPROGRESS) {
		asx_event_handler_put(&p->eh);
		return r;
	}
	asx_mutex_lock(&c->f.lock);
	if (c->f.closing) {
		asx_mutex_unlock(&c->f.lock);
		asx_sock_stream_close(&p->s);
		asx_event_handler_put(&p->eh);
		return -ECANCELED;
	}
	p->next = c->f.pend;
	if (p->next)
		p->next->prev = p;
	c->f.pend = p;
	asx_mutex_unlock(&c->f.lock);
	/* from here on @h is taken: every outcome goes through pend_close */
	r = asx_reactor_register_fd(rx, asx_handle(&p->s), &p->eh, ASX_EV_WRITE);
	if (!r && timeout_ns && asx_reactor_schedule_timer(rx, &p->eh, NULL, timeout_ns, 0) < 0)
		r = -ENOMEM;
	if (r) {
		asx_mutex_lock(&c->f.lock);
		if (p->result == 1)
			p->result = r;
		asx_mutex_unlock(&c->f.lock);
		if (asx_reactor_remove_handler(rx, &p->eh) == -ENOENT)
			pend_close(&p->eh, -1, 0);
	}
	asx_event_handler_put(&p->eh);
	return 0;
}

int asx_connector_destroy(struct asx_connector *c)
{
	if (!c)
		return 0;
	frame_close(&c->f);
	frame_put(&c->f);
	return 0;
}
