// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * proactor.c - the Proactor's front: open (choosing the back end), the
 * start calls, cancel, post, the loop and the completion handlers' state.
 *
 * A handler goes IDLE -> FLIGHT (a start: on p->flight) -> DONE (its
 * result known: on a done list) -> IDLE (just before its callback runs),
 * each step under p->lock; so a callback runs once per start, and the
 * handler is the caller's again inside it.  The back ends (uring.c, rx.c)
 * move handlers from FLIGHT to DONE; this file runs the callbacks.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/compiler.h"
#include "core/opts.h"
#include "proactor/proactor_impl.h"

static void flight_unlink(struct asx_proactor *p, struct asx_completion *c)
{
	struct pop *o = pop_of(c);

	if (o->prev)
		pop_of(o->prev)->next = o->next;
	else
		p->flight = o->next;
	if (o->next)
		pop_of(o->next)->prev = o->prev;
	o->prev = o->next = NULL;
}

void asx__pop_append(struct asx__pdone *l, struct asx_completion *c)
{
	pop_of(c)->qnext = NULL;
	if (l->tail)
		pop_of(l->tail)->qnext = c;
	else
		l->head = c;
	l->tail = c;
}

void asx__pop_done(struct asx_proactor *p, struct asx_completion *c, int64_t res,
		   struct asx__pdone *list)
{
	struct pop *o = pop_of(c);

	if (o->state != POP_FLIGHT)
		return;
	flight_unlink(p, c);
	free(o->addr);
	o->addr = NULL;
	o->state = POP_DONE;
	o->res = res;
	asx__pop_append(list ? list : &p->done, c);
}

int asx__pop_run_list(struct asx_proactor *p, struct asx__pdone *list)
{
	struct asx_completion *c, *next;
	int n = 0;

	for (c = list->head; c; c = next) {
		struct pop *o = pop_of(c);
		int64_t res;

		pthread_mutex_lock(&p->lock);
		next = o->qnext;
		res = o->res;
		o->state = POP_IDLE;
		o->kind = POP_NONE;
		o->cancelled = false;
		p->nflight--;
		pthread_mutex_unlock(&p->lock);
		/* c is the caller's from here: it may be reused or freed */
		c->fn(c, res, c->user);
		n++;
	}
	list->head = list->tail = NULL;
	return n;
}

int asx__pop_run_done(struct asx_proactor *p)
{
	struct asx__pdone l;

	pthread_mutex_lock(&p->lock);
	l = p->done;
	p->done.head = p->done.tail = NULL;
	pthread_mutex_unlock(&p->lock);
	return asx__pop_run_list(p, &l);
}

/* The back end asked for: opts, else $ASX_PROACTOR, else AUTO. */
static enum asx_proactor_backend wanted_backend(enum asx_proactor_backend b)
{
	const char *e;

	if (b != ASX_PROACTOR_AUTO)
		return b;
	e = secure_getenv("ASX_PROACTOR");
	if (e && !strcmp(e, "reactor"))
		return ASX_PROACTOR_REACTOR;
	if (e && !strcmp(e, "uring"))
		return ASX_PROACTOR_URING;
	return ASX_PROACTOR_AUTO;
}

int asx_proactor_open(struct asx_proactor **out, const struct asx_proactor_opts *opts,
		      const char **why)
{
	struct asx_proactor_opts o;
	struct asx_proactor *p;
	const char *uwhy = NULL, *w = NULL;
	enum asx_proactor_backend want;
	int ret;

	if (!out)
		return -EINVAL;
	ret = ASX__OPTS_COPY(&o, opts);
	if (ret)
		return ret;
	if (o.backend > ASX_PROACTOR_REACTOR || o.entries > 32768)
		return -EINVAL;
	want = wanted_backend(o.backend);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);

	ret = -ENOSYS;
	p->uring_required = want == ASX_PROACTOR_URING;
	if (want != ASX_PROACTOR_REACTOR) {
#ifdef ASX_HAVE_LIBURING
		p->be_ops = &asx__proactor_uring;
		p->backend = ASX_PROACTOR_URING;
		ret = p->be_ops->open(p, o.entries ? o.entries : 256, &uwhy);
#else
		uwhy = p->uring_required ?
		       "io_uring: this libasx was built without liburing (liburing-dev)" :
		       "io_uring not used, this libasx was built without liburing (liburing-dev); "
		       "the Reactor back end (epoll) runs instead";
#endif
		if (!ret) {
			w = uwhy;
		} else if (p->uring_required) {
			/* asked for io_uring: say why and fail */
			if (why)
				*why = uwhy;
			pthread_mutex_destroy(&p->lock);
			free(p);
			return ret;
		}
	}
	if (ret) {
		p->be_ops = &asx__proactor_rx;
		p->backend = ASX_PROACTOR_REACTOR;
		ret = p->be_ops->open(p, 0, &w);
		if (ret) {
			if (why)
				*why = w;
			pthread_mutex_destroy(&p->lock);
			free(p);
			return ret;
		}
		if (want == ASX_PROACTOR_REACTOR)
			w = "Reactor back end (epoll), as asked (opts or ASX_PROACTOR=reactor)";
		else
			w = uwhy;	/* why io_uring is not used: the fallback runs */
	}
	p->why = w;
	if (why)
		*why = w;
	*out = p;
	return 0;
}

int asx_proactor_close(struct asx_proactor *p)
{
	if (!p)
		return 0;
	if (atomic_exchange(&p->running, true))
		return -EBUSY;
	atomic_store(&p->owner, pthread_self());
	pthread_mutex_lock(&p->lock);
	p->closing = true;
	pthread_mutex_unlock(&p->lock);
	/* cancel_all returns when every handler went through a callback */
	p->be_ops->cancel_all(p);
	asx__pop_run_done(p);
	p->be_ops->close(p);
	pthread_mutex_destroy(&p->lock);
	free(p);
	return 0;
}

enum asx_proactor_backend asx_proactor_backend(const struct asx_proactor *p)
{
	return p->backend;
}

const char *asx_proactor_why(const struct asx_proactor *p)
{
	return p->why;
}

/* Start @c as described by @tmpl (kind and arguments). */
/* Check @c can start: 0 with p->lock held, or -EINVAL, -EBUSY (@c in flight). */
static int lock_idle(struct asx_proactor *p, struct asx_completion *c)
{
	if (!p || !c || !c->fn)
		return -EINVAL;
	pthread_mutex_lock(&p->lock);
	if (pop_of(c)->state != POP_IDLE) {
		pthread_mutex_unlock(&p->lock);
		return -EBUSY;
	}
	return 0;
}

static int start(struct asx_proactor *p, struct asx_completion *c, const struct pop *tmpl)
{
	struct pop *o = pop_of(c);
	int ret = lock_idle(p, c);

	if (ret)
		return ret;
	if (p->closing) {
		pthread_mutex_unlock(&p->lock);
		return -ECANCELED;
	}
	*o = *tmpl;
	o->p = p;
	o->state = POP_FLIGHT;
	o->prev = NULL;
	o->next = p->flight;
	if (p->flight)
		pop_of(p->flight)->prev = c;
	p->flight = c;
	p->nflight++;
	ret = p->be_ops->start(p, c);
	if (ret) {
		flight_unlink(p, c);	/* the caller frees o->addr */
		memset(o, 0, sizeof(*o));
		p->nflight--;
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int asx_proactor_accept(struct asx_proactor *p, struct asx_completion *c, int lfd)
{
	if (lfd < 0)
		return -EINVAL;
	return start(p, c, &(struct pop){ .kind = POP_ACCEPT, .fd = lfd });
}

int asx_proactor_connect(struct asx_proactor *p, struct asx_completion *c, int fd,
			 const struct sockaddr *addr, socklen_t addrlen, uint64_t timeout_ns)
{
	struct sockaddr *copy;
	int ret;

	if (fd < 0 || !addr || addrlen == 0 || addrlen > sizeof(struct sockaddr_storage))
		return -EINVAL;
	copy = malloc(addrlen);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, addr, addrlen);
	ret = start(p, c, &(struct pop){ .kind = POP_CONNECT, .fd = fd, .addr = copy,
			   .addrlen = addrlen,
			   .deadline_ns = timeout_ns ? asx_now_ns() + timeout_ns : 0 });
	if (ret)
		free(copy);
	return ret;
}

static int start_io(struct asx_proactor *p, struct asx_completion *c, enum pop_kind k, int fd,
		    const void *buf, size_t len, int flags)
{
	if (fd < 0 || (!buf && len))
		return -EINVAL;
	return start(p, c, &(struct pop){ .kind = k, .fd = fd, .buf = (void *)buf, .len = len,
			    .flags = flags });
}

int asx_proactor_read(struct asx_proactor *p, struct asx_completion *c, int fd, void *buf,
		      size_t len)
{
	return start_io(p, c, POP_READ, fd, buf, len, 0);
}

int asx_proactor_write(struct asx_proactor *p, struct asx_completion *c, int fd,
		       const void *buf, size_t len)
{
	return start_io(p, c, POP_WRITE, fd, buf, len, 0);
}

int asx_proactor_recv(struct asx_proactor *p, struct asx_completion *c, int fd, void *buf,
		      size_t len, int flags)
{
	return start_io(p, c, POP_RECV, fd, buf, len, flags);
}

int asx_proactor_send(struct asx_proactor *p, struct asx_completion *c, int fd,
		      const void *buf, size_t len, int flags)
{
	return start_io(p, c, POP_SEND, fd, buf, len, flags | MSG_NOSIGNAL);
}

int asx_proactor_readv(struct asx_proactor *p, struct asx_completion *c, int fd,
		       const struct iovec *iov, int iovcnt)
{
	if (iovcnt < 0 || iovcnt > IOV_MAX)
		return -EINVAL;
	return start_io(p, c, POP_READV, fd, iov, (size_t)iovcnt, 0);
}

int asx_proactor_writev(struct asx_proactor *p, struct asx_completion *c, int fd,
			const struct iovec *iov, int iovcnt)
{
	if (iovcnt < 0 || iovcnt > IOV_MAX)
		return -EINVAL;
	return start_io(p, c, POP_WRITEV, fd, iov, (size_t)iovcnt, 0);
}

int asx_proactor_timer(struct asx_proactor *p, struct asx_completion *c, uint64_t delay_ns)
{
	return start(p, c, &(struct pop){ .kind = POP_TIMER,
			   .deadline_ns = asx_now_ns() + delay_ns });
}

int asx_proactor_cancel(struct asx_proactor *p, struct asx_completion *c)
{
	struct pop *o;
	int ret = 0;

	if (!p || !c)
		return -EINVAL;
	o = pop_of(c);
	pthread_mutex_lock(&p->lock);
	if (o->state == POP_IDLE || o->p != p) {
		ret = -ENOENT;
	} else if (o->state == POP_FLIGHT && !o->cancelled) {
		o->cancelled = true;
		p->be_ops->cancel(p, c);
	}
	pthread_mutex_unlock(&p->lock);
	return ret;
}

int asx_proactor_post(struct asx_proactor *p, struct asx_completion *c, int64_t res)
{
	struct pop *o = pop_of(c);
	int ret = lock_idle(p, c);

	if (ret)
		return ret;
	memset(o, 0, sizeof(*o));
	o->p = p;
	o->kind = POP_POST;
	o->state = POP_DONE;
	o->res = res;
	p->nflight++;
	asx__pop_append(&p->done, c);
	pthread_mutex_unlock(&p->lock);
	p->be_ops->wake(p);
	return 0;
}

static int enter_loop(struct asx_proactor *p)
{
	if (!p)
		return -EINVAL;
	if (asx__pop_on_loop(p))
		return -EDEADLK;
	if (atomic_exchange(&p->running, true))
		return -EBUSY;
	atomic_store(&p->owner, pthread_self());
	return 0;
}

static void leave_loop(struct asx_proactor *p)
{
	atomic_store(&p->owner, (pthread_t)0);
	atomic_store(&p->running, false);
}

int asx_proactor_run_once(struct asx_proactor *p, const struct timespec *deadline)
{
	int ret = enter_loop(p);

	if (ret)
		return ret;
	ret = asx__pop_run_done(p);
	if (!ret)
		ret = p->be_ops->run_once(p, deadline);
	leave_loop(p);
	return ret;
}

int asx_proactor_run(struct asx_proactor *p)
{
	int ret = enter_loop(p);

	if (ret)
		return ret;
	while (!atomic_load(&p->stop)) {
		asx__pop_run_done(p);
		if (atomic_load(&p->stop))
			break;
		ret = p->be_ops->run_once(p, NULL);
		if (ret < 0 && ret != -EINTR)
			break;
		ret = 0;
	}
	atomic_store(&p->stop, false);
	leave_loop(p);
	return ret;
}

void asx_proactor_stop(struct asx_proactor *p)
{
	atomic_store(&p->stop, true);
	p->be_ops->wake(p);
}

unsigned int asx_proactor_pending(struct asx_proactor *p)
{
	unsigned int n;

	pthread_mutex_lock(&p->lock);
	n = p->nflight;
	pthread_mutex_unlock(&p->lock);
	return n;
}
