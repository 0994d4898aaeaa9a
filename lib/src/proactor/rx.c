// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * rx.c - the Proactor's Reactor back end: the fallback where io_uring is
 * missing or forbidden, and what ASX_PROACTOR=reactor chooses.
 *
 * A descriptor with operations in flight has an entry (struct fdent: an
 * event handler of the proactor's own asx_reactor) with two FIFO queues,
 * the read side (accept, read, readv, recv) and the write side (write,
 * writev, send, connect); a side is registered with the reactor while its
 * queue is not empty.  When the descriptor is ready the queue's head is
 * tried with the nonblocking system call until one says EAGAIN; each that
 * ends moves to the done list.  Timers (and a connect's timeout) are the
 * reactor's timers.  The reactor's callbacks only move handlers to the
 * done list; the completions run after asx_reactor_run_once() returns.
 * The descriptors are put in O_NONBLOCK mode (recv and send use
 * MSG_DONTWAIT and leave the mode alone); a regular file, which epoll
 * refuses, is read or written at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <asx/reactor.h>

#include "core/compiler.h"
#include "proactor/proactor_impl.h"

#define FD_BUCKETS 256

struct fdent {
	struct asx_event_handler eh;
	struct asx_proactor *p;
	int fd;
	unsigned int mask;		/* sides registered with the reactor */
	bool nonblock;			/* O_NONBLOCK set */
	bool dead;			/* off the table: its callbacks do nothing */
	struct asx__pdone q[2];		/* [0] read side, [1] write side */
	struct fdent *hnext;
};

struct rx {
	struct asx_reactor *r;
	struct asx_event_handler post_eh;	/* wake-ups */
	struct asx_event_handler timer_eh;	/* timers and connect timeouts */
	struct fdent *tab[FD_BUCKETS];
};

static struct rx *rx_of(struct asx_proactor *p)
{
	return p->be;
}

static int side_of(const struct pop *o)
{
	switch (o->kind) {
	case POP_WRITE:
	case POP_WRITEV:
	case POP_SEND:
	case POP_CONNECT:
		return 1;
	default:
		return 0;
	}
}

static unsigned int side_bit(int side)
{
	return side ? ASX_EV_WRITE : ASX_EV_READ;
}

static struct fdent **slot(struct rx *x, int fd)
{
	struct fdent **pp = &x->tab[(unsigned int)fd % FD_BUCKETS];

	while (*pp && (*pp)->fd != fd)
		pp = &(*pp)->hnext;
	return pp;
}

static int fe_ready(struct fdent *fe, int side);

static int fe_input(struct asx_event_handler *eh, int fd)
{
	return fe_ready(container_of(eh, struct fdent, eh), 0);
}

static int fe_output(struct asx_event_handler *eh, int fd)
{
	return fe_ready(container_of(eh, struct fdent, eh), 1);
}

static int fe_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	return 0;
}

static void fe_release(struct asx_event_handler *eh)
{
	free(container_of(eh, struct fdent, eh));
}

static const struct asx_event_handler_ops fe_ops = {
	.handle_input = fe_input,
	.handle_output = fe_output,
	.handle_close = fe_close,
	.release = fe_release,
};

/* Unregister the empty sides; an entry with none left goes. */
static void fe_update(struct rx *x, struct fdent *fe)
{
	for (int side = 0; side < 2; side++)
		if (!fe->q[side].head && (fe->mask & side_bit(side))) {
			fe->mask &= ~side_bit(side);
			asx_reactor_remove_fd(x->r, fe->fd, side_bit(side));
		}
	if (!fe->q[0].head && !fe->q[1].head && !fe->dead) {
		*slot(x, fe->fd) = fe->hnext;
		fe->dead = true;
		asx_event_handler_put(&fe->eh);	/* the table's reference */
	}
}

static bool q_remove(struct asx__pdone *q, struct asx_completion *c)
{
	struct asx_completion *prev = NULL, *e;

	for (e = q->head; e && e != c; e = pop_of(e)->qnext)
		prev = e;
	if (!e)
		return false;
	if (prev)
		pop_of(prev)->qnext = pop_of(c)->qnext;
	else
		q->head = pop_of(c)->qnext;
	if (q->tail == c)
		q->tail = prev;
	return true;
}

static int errno_res(ssize_t r)
{
	if (r >= 0)
		return 0;
	return errno == EWOULDBLOCK ? -EAGAIN : -errno;
}

static void set_nonblock(int fd, bool *done)
{
	int fl;

	if (*done)
		return;
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && !(fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	*done = true;
}

/* Try @c's system call once: its result, or -EAGAIN (not ready). */
static int64_t try_op(struct pop *o, bool *nonblock)
{
	ssize_t r;

	if (o->kind != POP_RECV && o->kind != POP_SEND && o->kind != POP_CONNECT)
		set_nonblock(o->fd, nonblock);
	do {
		switch (o->kind) {
		case POP_ACCEPT:
			r = accept4(o->fd, NULL, NULL, SOCK_CLOEXEC);
			break;
		case POP_READ:
			r = read(o->fd, o->buf, o->len);
			break;
		case POP_WRITE:
			r = write(o->fd, o->buf, o->len);
			break;
		case POP_READV:
			r = readv(o->fd, o->buf, (int)o->len);
			break;
		case POP_WRITEV:
			r = writev(o->fd, o->buf, (int)o->len);
			break;
		case POP_RECV:
			r = recv(o->fd, o->buf, o->len, o->flags | MSG_DONTWAIT);
			break;
		case POP_SEND:
			r = send(o->fd, o->buf, o->len, o->flags | MSG_DONTWAIT);
			break;
		case POP_CONNECT: {
			int err = 0;
			socklen_t l = sizeof(err);

			if (getsockopt(o->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
				return -errno;
			return -err;
		}
		default:
			return -EINVAL;
		}
	} while (r < 0 && errno == EINTR);
	return r >= 0 ? r : errno_res(r);
}

static int fe_ready(struct fdent *fe, int side)
{
	struct asx_proactor *p = fe->p;
	struct rx *x = rx_of(p);
	struct asx_completion *c;

	pthread_mutex_lock(&p->lock);
	while (!fe->dead && (c = fe->q[side].head)) {
		struct pop *o = pop_of(c);
		int64_t res = try_op(o, &fe->nonblock);

		if (res == -EAGAIN && o->kind != POP_CONNECT)
			break;
		q_remove(&fe->q[side], c);
		if (o->timer_id > 0)
			asx_reactor_cancel_timer(x->r, o->timer_id, NULL);
		asx__pop_done(p, c, res, NULL);
	}
	if (!fe->dead)
		fe_update(x, fe);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static int post_input(struct asx_event_handler *eh, int fd)
{
	struct rx *x = container_of(eh, struct rx, post_eh);

	(void)x;
	return 0;
}

/* A timer's or a connect timeout's expiry (c is still in flight: see cancel). */
static int timer_fired(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	struct asx_completion *c = arg;
	struct pop *o = pop_of(c);
	struct asx_proactor *p = o->p;
	struct rx *x = rx_of(p);

	pthread_mutex_lock(&p->lock);
	if (o->state == POP_FLIGHT) {
		o->timer_id = 0;
		if (o->kind == POP_TIMER) {
			asx__pop_done(p, c, 0, NULL);
		} else {
			struct fdent *fe = *slot(x, o->fd);

			if (fe && q_remove(&fe->q[1], c))
				fe_update(x, fe);
			asx__pop_done(p, c, -ETIMEDOUT, NULL);
		}
	}
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static int nop_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	return 0;
}

static const struct asx_event_handler_ops post_ops = {
	.handle_input = post_input,
	.handle_close = nop_close,
};

static const struct asx_event_handler_ops timer_ops = {
	.handle_timeout = timer_fired,
	.handle_close = nop_close,
};

static int rx_open(struct asx_proactor *p, unsigned int entries, const char **why)
{
	struct rx *x = calloc(1, sizeof(*x));
	int ret;

	if (!x)
		return -ENOMEM;
	ret = asx_reactor_create(&x->r);
	if (ret) {
		*why = "Reactor back end: asx_reactor_create failed";
		free(x);
		return ret;
	}
	asx_event_handler_init(&x->post_eh, &post_ops);
	asx_event_handler_init(&x->timer_eh, &timer_ops);
	p->be = x;
	return 0;
}

static void rx_close(struct asx_proactor *p)
{
	struct rx *x = rx_of(p);

	asx_reactor_destroy(x->r);
	free(x);
}

static void rx_wake(struct asx_proactor *p)
{
	if (!atomic_exchange(&p->wake_pending, true))
		if (asx_reactor_notify(rx_of(p)->r, &rx_of(p)->post_eh, ASX_EV_READ))
			atomic_store(&p->wake_pending, false);
}

static void ns_to_ts(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / ASX_NSEC_PER_SEC);
	ts->tv_nsec = (long)(ns % ASX_NSEC_PER_SEC);
}

static int64_t arm_timer(struct rx *x, struct asx_completion *c, uint64_t deadline_ns)
{
	struct timespec ts;

	ns_to_ts(deadline_ns, &ts);
	return asx_reactor_schedule_timer_at(x->r, &x->timer_eh, c, &ts, 0);
}

/* Queue @c on its descriptor's side, registering the side if needed. */
static int enqueue(struct asx_proactor *p, struct asx_completion *c)
{
	struct rx *x = rx_of(p);
	struct pop *o = pop_of(c);
	struct fdent **pp = slot(x, o->fd), *fe = *pp;
	int side = side_of(o), ret = 0;

	/*
	 * A write with none queued before it: try it now (a socket is nearly
	 * always writable), saving the wait for readiness and two epoll_ctl.
	 * The callback still runs from the loop, never from here.
	 */
	if (side == 1 && o->kind != POP_CONNECT && (!fe || !fe->q[1].head)) {
		int64_t res = try_op(o, fe ? &fe->nonblock : &(bool){ false });

		if (res != -EAGAIN) {
			asx__pop_done(p, c, res, NULL);
			return 0;
		}
	}
	if (!fe) {
		fe = calloc(1, sizeof(*fe));
		if (!fe)
			return -ENOMEM;
		asx_event_handler_init(&fe->eh, &fe_ops);
		fe->p = p;
		fe->fd = o->fd;
		*pp = fe;
	}
	asx__pop_append(&fe->q[side], c);
	if (!(fe->mask & side_bit(side))) {
		ret = asx_reactor_register_fd(x->r, o->fd, &fe->eh, side_bit(side));
		if (!ret)
			fe->mask |= side_bit(side);
	}
	if (ret) {
		q_remove(&fe->q[side], c);
		fe_update(x, fe);
		if (ret == -EPERM && o->kind != POP_ACCEPT && o->kind != POP_CONNECT) {
			/* a regular file: epoll refuses it, and it never waits */
			asx__pop_done(p, c, try_op(o, &(bool){ true }), NULL);
			ret = 0;
		}
	}
	return ret;
}

static int rx_start(struct asx_proactor *p, struct asx_completion *c)
{
	struct rx *x = rx_of(p);
	struct pop *o = pop_of(c);
	int64_t id;
	int ret;

	if (o->kind == POP_TIMER) {
		id = arm_timer(x, c, o->deadline_ns);
		if (id < 0)
			return (int)id;
		o->timer_id = id;
		return 0;
	}
	if (o->kind == POP_CONNECT) {
		int fl = fcntl(o->fd, F_GETFL);

		if (fl < 0)
			return -errno;
		if (!(fl & O_NONBLOCK))
			fcntl(o->fd, F_SETFL, fl | O_NONBLOCK);
		ret = connect(o->fd, o->addr, o->addrlen) ? -errno : 0;
		if (ret != -EINPROGRESS) {
			/* at once: connected, refused, or a UNIX listener's full backlog (-EAGAIN) */
			asx__pop_done(p, c, ret, NULL);
			rx_wake(p);
			return 0;
		}
		if (o->deadline_ns) {
			id = arm_timer(x, c, o->deadline_ns);
			if (id < 0)
				return (int)id;
			o->timer_id = id;
		}
	}
	ret = enqueue(p, c);
	if (ret && o->timer_id > 0)
		asx_reactor_cancel_timer(x->r, o->timer_id, NULL);
	else if (!ret && o->state == POP_DONE && !asx__pop_on_loop(p))
		rx_wake(p);	/* done at once: the loop runs p->done before it waits */
	return ret;
}

static void rx_cancel(struct asx_proactor *p, struct asx_completion *c)
{
	struct rx *x = rx_of(p);
	struct pop *o = pop_of(c);

	if (o->timer_id > 0 && asx_reactor_cancel_timer(x->r, o->timer_id, NULL) < 0)
		return;	/* its expiry runs: it completes the handler */
	o->timer_id = 0;
	if (o->kind != POP_TIMER) {
		struct fdent *fe = *slot(x, o->fd);

		if (fe && q_remove(&fe->q[side_of(o)], c))
			fe_update(x, fe);
	}
	asx__pop_done(p, c, -ECANCELED, NULL);
	rx_wake(p);
}

static int rx_run_once(struct asx_proactor *p, const struct timespec *deadline)
{
	int ret, n;

	for (;;) {
		ret = asx_reactor_run_once(rx_of(p)->r, deadline);
		if (ret < 0)
			return ret;
		atomic_store(&p->wake_pending, false);
		n = asx__pop_run_done(p);
		if (n || !ret || atomic_load(&p->stop))
			return n;
	}
}

static void rx_cancel_all(struct asx_proactor *p)
{
	struct asx_completion *c, *next;

	pthread_mutex_lock(&p->lock);
	for (c = p->flight; c; c = next) {
		next = pop_of(c)->next;
		pop_of(c)->cancelled = true;
		rx_cancel(p, c);
	}
	pthread_mutex_unlock(&p->lock);
	/* callbacks may post; nothing else can start (closing) */
	while (asx__pop_run_done(p))
		;
}

const struct asx__pbackend asx__proactor_rx = {
	.open = rx_open,
	.close = rx_close,
	.start = rx_start,
	.cancel = rx_cancel,
	.run_once = rx_run_once,
	.wake = rx_wake,
	.cancel_all = rx_cancel_all,
};
