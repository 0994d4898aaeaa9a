// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * reactor.c - the Reactor: descriptors, signals and the event loop.
 * Handler lifetimes are in handler.c, timers in timer.c, notifications
 * and queue bindings in notify.c.
 *
 * Every epoll registration carries a 64-bit tag: for a descriptor, its
 * number and a generation (so an event for a descriptor removed, closed
 * and reused within one epoll batch is recognised as stale); for the
 * reactor's own descriptors, RX_TAG_INTERNAL | kind.  Each event is looked
 * up again under the lock just before its callback, so a handler removed by
 * an earlier callback of the same batch is never called.
 *
 * A thread-pool reactor (ASX_REACTOR_TP) is run by many threads at once,
 * leader/followers (tp_loop_once): every descriptor's entry is one-shot,
 * the leader takes one event, claims it (a descriptor is lent to the
 * leader itself, as to a pool thread) and hands leadership on before it
 * runs the callbacks; handler.c's wait_idle keeps one handler's callbacks
 * one at a time, asx__rx_solo the timers and notifications.
 *
 * File order of reactor/, lowest first: hmap < handler < notify < timer <
 * reactor < pool.  A file calls only its own and lower files
 * (tools/lib-layers.sh checks).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <poll.h>

#include "core/compiler.h"
#include "core/opts.h"
#include "core/probes.h"
#include "reactor/handler.h"
#include "reactor/reactor_impl.h"

#define RX_TAG_INTERNAL	(1ULL << 63)
#define RX_TAG_WAKE	(RX_TAG_INTERNAL | 1)
#define RX_TAG_TIMER	(RX_TAG_INTERNAL | 2)
#define RX_TAG_SIGNAL	(RX_TAG_INTERNAL | 3)

static inline void rx_lock(struct asx_reactor *r)
{
	asx_mutex_lock(&r->lock);
}

static inline void rx_unlock(struct asx_reactor *r)
{
	asx_mutex_unlock(&r->lock);
}

/* ------------------------------------------------------------ reactor */

int asx_reactor_create(struct asx_reactor **out)
{
	return asx_reactor_create_opts(out, NULL);
}

int asx_reactor_create_opts(struct asx_reactor **out, const struct asx_reactor_opts *opts)
{
	struct asx_reactor_opts o;
	struct asx_reactor *r;
	struct epoll_event ev = { .events = EPOLLIN };
	int err;

	if (!out)
		return -EINVAL;
	err = ASX__OPTS_COPY(&o, opts);
	if (err)
		return err;
	if (o.flags & ~ASX_REACTOR_TP)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->tp = o.flags & ASX_REACTOR_TP;
	asx_mutex_init(&r->lock);
	asx_cond_init(&r->timer_done);
	asx_cond_init(&r->lf_cond);
	asx_cond_init(&r->idle_cond);
	r->wakefd = r->timerfd = r->sigfd = -1;
	rx_list_init(&r->fd_list);
	rx_list_init(&r->mq_list);
	rx_list_init(&r->mq_dead);
	rx_list_init(&r->notifs);
	rx_list_init(&r->work);
	asx_cond_init(&r->work_cond);
	sigemptyset(&r->sigmask);
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0)
		goto err_free;
	r->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (r->wakefd < 0)
		goto err_close_epoll;
	r->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (r->timerfd < 0)
		goto err_close_wake;
	ev.data.u64 = RX_TAG_WAKE;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->wakefd, &ev))
		goto err_close_timer;
	ev.data.u64 = RX_TAG_TIMER;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, r->timerfd, &ev))
		goto err_close_timer;
	*out = r;
	return 0;

err_close_timer:
	err = -errno;
	close(r->timerfd);
	goto err_wake;
err_close_wake:
	err = -errno;
err_wake:
	close(r->wakefd);
	goto err_epoll;
err_close_epoll:
	err = -errno;
err_epoll:
	close(r->epfd);
	goto err_out;
err_free:
	err = -errno;
err_out:
	free(r);
	return err;
}

static void fd_unlink(struct asx_reactor *r, struct rx_fd *f);

int asx_reactor_destroy(struct asx_reactor *r)
{
	struct asx__rx_link notifs;
	int signo;

	if (!r)
		return 0;
	rx_lock(r);
	if (r->runners || r->pool) {
		rx_unlock(r);
		return -EBUSY;
	}
	r->destroying = true;
	while (!rx_list_empty(&r->fd_list)) {
		struct rx_fd *f = container_of(r->fd_list.next, struct rx_fd, all);
		struct asx_event_handler *eh = f->eh;
		int fd = f->fd;
		unsigned int mask = f->mask;

		fd_unlink(r, f);
		asx__rx_reg_end(r, eh, fd, mask);
		asx__rx_unlock_close(r, eh);
		rx_lock(r);
	}
	while (r->heap_len) {
		struct asx_event_handler *eh = r->heap[r->heap_len - 1]->eh;

		asx__rx_timers_remove(r, eh);
		asx__rx_unlock_close(r, eh);
		rx_lock(r);
	}
	for (signo = 1; signo < RX_NSIG; signo++) {
		struct asx_event_handler *eh = r->sig[signo];

		if (!eh)
			continue;
		r->sig[signo] = NULL;
		asx__rx_reg_end(r, eh, signo, ASX_EV_SIGNAL);
		asx__rx_unlock_close(r, eh);
		rx_lock(r);
	}
	while (!rx_list_empty(&r->mq_list)) {
		struct rx_mqbind *b = container_of(r->mq_list.next, struct rx_mqbind, all);
		struct asx_event_handler *eh = b->eh;

		asx__rx_mq_remove(r, eh);
		asx__rx_unlock_close(r, eh);
		rx_lock(r);
	}
	rx_list_init(&notifs);
	asx__rx_notifs_take(r, NULL, &notifs);
	rx_unlock(r);
	asx__rx_notifs_free(&notifs);

	asx__rx_timers_free(r);
	asx__rx_hmap_free(&r->fds);
	asx__rx_hmap_free(&r->mqs);
	if (r->sigfd >= 0)
		close(r->sigfd);
	close(r->timerfd);
	close(r->wakefd);
	close(r->epfd);
	asx_cond_destroy(&r->timer_done);
	asx_cond_destroy(&r->work_cond);
	asx_cond_destroy(&r->lf_cond);
	asx_cond_destroy(&r->idle_cond);
	asx_mutex_destroy(&r->lock);
	free(r);
	return 0;
}

/* ------------------------------------------------------------ descriptors */

static uint32_t io_events(unsigned int mask)
{
	uint32_t ev = 0;

	if (mask & ASX_EV_READ)
		ev |= EPOLLIN | EPOLLRDHUP;
	if (mask & ASX_EV_WRITE)
		ev |= EPOLLOUT;
	if (mask & ASX_EV_EXCEPT)
		ev |= EPOLLPRI;
	return ev;
}

static int fd_epoll(struct asx_reactor *r, struct rx_fd *f, int op)
{
	struct epoll_event ev = {
		.events = io_events(f->mask) | (f->oneshot ? EPOLLONESHOT : 0),
		.data.u64 = (uint64_t)(uint32_t)f->fd | (uint64_t)f->gen << 32,
	};

	if (epoll_ctl(r->epfd, op, f->fd, &ev) == 0)
		return 0;
	/* A registered descriptor closed and reused: the kernel forgot it. */
	if (op == EPOLL_CTL_MOD && errno == ENOENT &&
	    epoll_ctl(r->epfd, EPOLL_CTL_ADD, f->fd, &ev) == 0)
		return 0;
	return -errno;
}

static bool has_callbacks(const struct asx_event_handler_ops *ops, unsigned int mask)
{
	return !((mask & ASX_EV_READ) && !ops->handle_input) &&
	       !((mask & ASX_EV_WRITE) && !ops->handle_output) &&
	       !((mask & ASX_EV_EXCEPT) && !ops->handle_exception);
}

static void fd_link_handler(struct asx_event_handler *eh, struct rx_fd *f)
{
	f->hprev = NULL;
	f->hnext = asx__eh(eh)->fds;
	if (f->hnext)
		f->hnext->hprev = f;
	asx__eh(eh)->fds = f;
}

/* Lock held: forget @f entirely (epoll, maps, lists) and free it. */
static void fd_unlink(struct asx_reactor *r, struct rx_fd *f)
{
	struct asx_event_handler *eh = f->eh;

	if (f->in_epoll || f->oneshot)
		(void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, f->fd, NULL);	/* may be closed */
	if (f->lent)
		rx_list_del(&f->work);	/* a pool thread not yet at it: never is */
	asx__rx_hmap_del(&r->fds, (uint64_t)f->fd);
	rx_list_del(&f->all);
	if (f->hprev)
		f->hprev->hnext = f->hnext;
	else
		asx__eh(eh)->fds = f->hnext;
	if (f->hnext)
		f->hnext->hprev = f->hprev;
	free(f);
}

int asx_reactor_register_fd(struct asx_reactor *r, int fd, struct asx_event_handler *eh,
			    unsigned int mask)
{
	struct rx_fd *f, *nf;
	int err;

	if (!r || !eh || !eh->ops || fd < 0 || !(mask & ASX_EV_IO) || (mask & ~ASX_EV_IO) ||
	    !has_callbacks(eh->ops, mask))
		return -EINVAL;
	nf = calloc(1, sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	rx_lock(r);
	if (r->destroying) {
		err = -ESHUTDOWN;
		goto out_unlock;
	}
	err = asx__rx_attach(r, eh);
	if (err)
		goto out_unlock;
	f = asx__rx_hmap_get(&r->fds, (uint64_t)fd);
	if (f) {
		unsigned int old = f->mask;

		if (f->eh != eh) {
			err = -EEXIST;
			goto out_detach;
		}
		f->mask |= mask;
		if (f->in_epoll && f->mask != old) {
			err = fd_epoll(r, f, EPOLL_CTL_MOD);
			if (err)
				f->mask = old;
		}
		goto out_detach;
	}
	f = nf;
	nf = NULL;
	f->fd = fd;
	f->gen = ++r->fd_gen & 0x7fffffffU;
	f->mask = mask;
	f->eh = eh;
	rx_list_init(&f->work);
	f->oneshot = r->tp;	/* disarmed by each event until its callbacks ran */
	err = asx__rx_hmap_put(&r->fds, (uint64_t)fd, f);
	if (err) {
		free(f);
		goto out_detach;
	}
	if (!asx__eh(eh)->suspended) {
		err = fd_epoll(r, f, EPOLL_CTL_ADD);
		if (err) {
			asx__rx_hmap_del(&r->fds, (uint64_t)fd);
			free(f);
			goto out_detach;
		}
		f->in_epoll = true;
	}
	rx_list_add_tail(&r->fd_list, &f->all);
	fd_link_handler(eh, f);
	asx__rx_reg_begin(r, eh);
out_detach:
	asx__rx_detach_idle(r, eh);
out_unlock:
	rx_unlock(r);
	free(nf);
	return err;
}

/*
 * Lock held on entry, released on return: drop the @mask bits of @fd if it
 * is still generation @gen (any generation when @gen is UINT32_MAX).
 */
static int fd_remove_unlock(struct asx_reactor *r, int fd, uint32_t gen, unsigned int mask)
{
	struct rx_fd *f = asx__rx_hmap_get(&r->fds, (uint64_t)fd);
	struct asx_event_handler *eh;
	unsigned int bits, old;

	if (!f || (gen != UINT32_MAX && f->gen != gen) || !(f->mask & mask)) {
		rx_unlock(r);
		return -ENOENT;
	}
	eh = f->eh;
	bits = f->mask & mask;
	old = f->mask;
	f->mask &= ~bits;
	if (f->mask) {
		if (f->in_epoll && fd_epoll(r, f, EPOLL_CTL_MOD)) {
			/* Cannot narrow the interest: drop the descriptor altogether. */
			bits = old;
			f->mask = 0;
		}
	}
	if (!f->mask) {
		fd_unlink(r, f);
		asx__rx_reg_end(r, eh, fd, bits);
	}
	asx__rx_unlock_close(r, eh);
	return 0;
}

int asx_reactor_remove_fd(struct asx_reactor *r, int fd, unsigned int mask)
{
	if (!r || fd < 0 || !(mask & ASX_EV_IO))
		return -EINVAL;
	rx_lock(r);
	return fd_remove_unlock(r, fd, UINT32_MAX, mask & ASX_EV_IO);
}

static bool owned_here(struct asx_reactor *r, struct asx_event_handler *eh)
{
	return __atomic_load_n(&asx__eh(eh)->owner, __ATOMIC_ACQUIRE) == r && asx__eh(eh)->nreg;
}

int asx_reactor_remove_handler(struct asx_reactor *r, struct asx_event_handler *eh)
{
	int signo;

	if (!r || !eh)
		return -EINVAL;
	rx_lock(r);
	if (!owned_here(r, eh)) {
		rx_unlock(r);
		return -ENOENT;
	}
	while (asx__eh(eh)->fds) {
		struct rx_fd *f = asx__eh(eh)->fds;
		int fd = f->fd;
		unsigned int mask = f->mask;

		fd_unlink(r, f);
		asx__rx_reg_end(r, eh, fd, mask);
	}
	asx__rx_timers_remove(r, eh);
	for (signo = 1; signo < RX_NSIG && asx__eh(eh)->nreg; signo++) {
		if (r->sig[signo] != eh)
			continue;
		r->sig[signo] = NULL;
		sigdelset(&r->sigmask, signo);
		(void)signalfd(r->sigfd, &r->sigmask, 0);
		asx__rx_reg_end(r, eh, signo, ASX_EV_SIGNAL);
	}
	asx__rx_mq_remove(r, eh);
	asx__rx_unlock_close(r, eh);
	return 0;
}

static int set_suspended(struct asx_reactor *r, struct asx_event_handler *eh, bool on)
{
	struct rx_fd *f;
	int err = 0;

	if (!r || !eh)
		return -EINVAL;
	rx_lock(r);
	if (!owned_here(r, eh)) {
		rx_unlock(r);
		return -ENOENT;
	}
	asx__eh(eh)->suspended = on;
	for (f = asx__eh(eh)->fds; f; f = f->hnext) {
		if (f->in_epoll == !on || f->lent)	/* a lent one returns by itself */
			continue;
		if (on) {
			(void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, f->fd, NULL);
			f->in_epoll = false;
			f->oneshot = false;
		} else {
			int e;

			f->oneshot = r->tp;
			e = fd_epoll(r, f, EPOLL_CTL_ADD);
			if (e && !err)
				err = e;
			f->in_epoll = !e;
			if (e)
				f->oneshot = false;
		}
	}
	rx_unlock(r);
	return err;
}

int asx_reactor_suspend_handler(struct asx_reactor *r, struct asx_event_handler *eh)
{
	return set_suspended(r, eh, true);
}

int asx_reactor_resume_handler(struct asx_reactor *r, struct asx_event_handler *eh)
{
	return set_suspended(r, eh, false);
}

/* ------------------------------------------------------------ signals */

int asx_reactor_register_signal(struct asx_reactor *r, int signo, struct asx_event_handler *eh)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = RX_TAG_SIGNAL };
	sigset_t set;
	int err = 0;

	if (!r || !eh || !eh->ops || !eh->ops->handle_signal || signo <= 0 ||
	    signo >= RX_NSIG || signo == SIGKILL || signo == SIGSTOP)
		return -EINVAL;
	rx_lock(r);
	if (r->destroying) {
		err = -ESHUTDOWN;
		goto out_unlock;
	}
	if (r->sig[signo]) {
		err = -EEXIST;
		goto out_unlock;
	}
	err = asx__rx_attach(r, eh);
	if (err)
		goto out_unlock;
	set = r->sigmask;
	sigaddset(&set, signo);
	if (r->sigfd < 0) {
		int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);

		if (fd < 0) {
			err = -errno;
			goto out_detach;
		}
		if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			err = -errno;
			close(fd);
			goto out_detach;
		}
		r->sigfd = fd;
	} else if (signalfd(r->sigfd, &set, 0) < 0) {
		err = -errno;
		goto out_detach;
	}
	r->sigmask = set;
	r->sig[signo] = eh;
	asx__rx_reg_begin(r, eh);
out_detach:
	asx__rx_detach_idle(r, eh);
out_unlock:
	rx_unlock(r);
	return err;
}

/* Lock held on entry, released on return. */
static int signal_remove_unlock(struct asx_reactor *r, int signo, struct asx_event_handler *only)
{
	struct asx_event_handler *eh = r->sig[signo];

	if (!eh || (only && eh != only)) {
		rx_unlock(r);
		return -ENOENT;
	}
	r->sig[signo] = NULL;
	sigdelset(&r->sigmask, signo);
	(void)signalfd(r->sigfd, &r->sigmask, 0);
	asx__rx_reg_end(r, eh, signo, ASX_EV_SIGNAL);
	asx__rx_unlock_close(r, eh);
	return 0;
}

int asx_reactor_remove_signal(struct asx_reactor *r, int signo)
{
	if (!r || signo <= 0 || signo >= RX_NSIG)
		return -EINVAL;
	rx_lock(r);
	return signal_remove_unlock(r, signo, NULL);
}

static int dispatch_signals(struct asx_reactor *r)
{
	struct signalfd_siginfo si;
	int i, count = 0;

	/* Bounded, so a signal storm cannot starve the other sources. */
	for (i = 0; i < RX_EVENTS; i++) {
		struct asx_event_handler *eh;
		ssize_t n = read(r->sigfd, &si, sizeof(si));
		int signo, rc;

		if (n != (ssize_t)sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		signo = (int)si.ssi_signo;
		if (signo <= 0 || signo >= RX_NSIG)
			continue;
		rx_lock(r);
		while ((eh = r->sig[signo]) && asx__rx_wait_idle(r, eh))
			;
		if (!eh || !asx__rx_dispatch_begin(r, eh)) {
			rx_unlock(r);
			continue;
		}
		rx_unlock(r);
		ASX_PROBE2(reactor_signal, eh, signo);
		rc = eh->ops->handle_signal(eh, signo, &si);
		count++;
		rx_lock(r);
		if (rc < 0 && r->sig[signo] == eh) {
			r->sig[signo] = NULL;
			sigdelset(&r->sigmask, signo);
			(void)signalfd(r->sigfd, &r->sigmask, 0);
			asx__rx_reg_end(r, eh, signo, ASX_EV_SIGNAL);
		}
		asx__rx_dispatch_end(r, eh);
	}
	return count;
}

/* ------------------------------------------------------------ the loop */

static unsigned int ready_bits(uint32_t events)
{
	unsigned int bits = 0;

	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		bits |= ASX_EV_READ;
	if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		bits |= ASX_EV_WRITE;
	if (events & EPOLLPRI)
		bits |= ASX_EV_EXCEPT;
	return bits;
}

/*
 * The callbacks of @fd (generation @gen) for @events, in order READ,
 * WRITE, EXCEPT, each looked up again under the lock.  @lent: called on a
 * pool thread for a descriptor lent to it (out of epoll meanwhile).
 */
static int dispatch_fd(struct asx_reactor *r, int fd, uint32_t gen, uint32_t events, bool lent)
{
	static const unsigned int order[] = { ASX_EV_READ, ASX_EV_WRITE, ASX_EV_EXCEPT };
	unsigned int ready = ready_bits(events);
	bool failed = events & (EPOLLHUP | EPOLLERR);
	int count = 0;
	size_t i;

	for (i = 0; i < ASX_ARRAY_SIZE(order); i++) {
		unsigned int bit = order[i];
		struct asx_event_handler *eh;
		struct rx_fd *f;
		int rc;

		rx_lock(r);
retry:
		f = asx__rx_hmap_get(&r->fds, (uint64_t)fd);
		/* Gone, reused, suspended, or no longer interested since the wait. */
		if (!f || f->gen != gen || !(f->mask & bit) ||
		    (lent ? asx__eh(f->eh)->suspended : !f->in_epoll)) {
			rx_unlock(r);
			continue;
		}
		/* Error or hang-up on a descriptor watched only for EXCEPT. */
		if (!(ready & bit) && !(bit == ASX_EV_EXCEPT && failed && !(f->mask & ASX_EV_RW))) {
			rx_unlock(r);
			continue;
		}
		eh = f->eh;
		if (asx__rx_wait_idle(r, eh))
			goto retry;
		if (!asx__rx_dispatch_begin(r, eh)) {
			rx_unlock(r);
			continue;
		}
		rx_unlock(r);
		ASX_PROBE3(reactor_dispatch, eh, fd, bit);
		if (bit == ASX_EV_READ)
			rc = eh->ops->handle_input(eh, fd);
		else if (bit == ASX_EV_WRITE)
			rc = eh->ops->handle_output(eh, fd);
		else
			rc = eh->ops->handle_exception(eh, fd);
		count++;
		rx_lock(r);
		if (rc < 0) {
			(void)fd_remove_unlock(r, fd, gen, bit);
			rx_lock(r);
		}
		asx__rx_dispatch_end(r, eh);
	}
	return count;
}

/*
 * Lock held: hand @f to the pool for @events; it is not watched meanwhile.
 * A one-shot entry was disarmed by the event itself: no system call.  A
 * descriptor's first lending takes its level-triggered entry out; it comes
 * back one-shot, and from then on each lending costs one EPOLL_CTL_MOD
 * (the re-arm in unlend()) where a DEL and an ADD were.
 */
static void lend(struct asx_reactor *r, struct rx_fd *f, uint32_t events)
{
	if (!f->oneshot)
		(void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, f->fd, NULL);
	f->in_epoll = false;
	f->lent = true;
	f->lent_events = events;
	rx_list_add_tail(&r->work, &f->work);
	asx_cond_signal(&r->work_cond);
}

/* Lock held: take @f back from the pool, re-armed (one-shot) unless suspended. */
static void unlend(struct asx_reactor *r, struct rx_fd *f)
{
	rx_list_del(&f->work);
	f->lent = false;
	if (asx__eh(f->eh)->suspended) {
		if (f->oneshot)
			(void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, f->fd, NULL);
		f->oneshot = false;
		return;
	}
	if (f->oneshot) {
		f->in_epoll = !fd_epoll(r, f, EPOLL_CTL_MOD);
	} else {
		f->oneshot = true;
		f->in_epoll = !fd_epoll(r, f, EPOLL_CTL_ADD);
	}
	if (!f->in_epoll)
		f->oneshot = false;
}

/* Lock held: a one-shot entry @f, armed, back to level-triggered. */
static void fd_level(struct asx_reactor *r, struct rx_fd *f)
{
	f->oneshot = false;
	if (f->in_epoll)
		f->in_epoll = !fd_epoll(r, f, EPOLL_CTL_MOD);
}

void asx__rx_unlend_all(struct asx_reactor *r)
{
	struct asx__rx_link *l;

	while (!rx_list_empty(&r->work))
		unlend(r, container_of(r->work.next, struct rx_fd, work));
	/* without a pool nobody re-arms a one-shot entry after its event */
	for (l = r->fd_list.next; l != &r->fd_list; l = l->next) {
		struct rx_fd *f = container_of(l, struct rx_fd, all);

		if (f->oneshot)
			fd_level(r, f);
	}
}

int asx__rx_run_lent(struct asx_reactor *r, int fd, uint32_t gen, uint32_t events)
{
	struct rx_fd *f;
	int n = dispatch_fd(r, fd, gen, events, true);

	rx_lock(r);
	f = asx__rx_hmap_get(&r->fds, (uint64_t)fd);
	if (f && f->gen == gen && f->lent)
		unlend(r, f);
	rx_unlock(r);
	return n;
}

static int dispatch_io(struct asx_reactor *r, const struct epoll_event *ev)
{
	int fd = (int)(uint32_t)ev->data.u64;
	uint32_t gen = (uint32_t)(ev->data.u64 >> 32);
	struct rx_fd *f;

	if (!__atomic_load_n(&r->pool, __ATOMIC_ACQUIRE))
		return dispatch_fd(r, fd, gen, ev->events, false);
	rx_lock(r);
	if (!r->pool || r->pool_stop) {	/* stopped since */
		int n;

		f = asx__rx_hmap_get(&r->fds, (uint64_t)fd);
		/* an event of a one-shot entry disarmed it: level-triggered again */
		if (f && f->gen == gen && f->oneshot && !f->lent)
			fd_level(r, f);
		rx_unlock(r);
		n = dispatch_fd(r, fd, gen, ev->events, false);
		return n;
	}
	f = asx__rx_hmap_get(&r->fds, (uint64_t)fd);
	if (!f || f->gen != gen || !f->in_epoll) {
		rx_unlock(r);
		return 0;
	}
	lend(r, f, ev->events);
	rx_unlock(r);
	return 1;
}

static void drain(int fd)
{
	uint64_t v;

	while (read(fd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}

/*
 * Set (atomically, once per process) when epoll_pwait2 failed with ENOSYS:
 * a kernel before 5.11, or a seccomp policy that refuses it.  Every wait
 * after that uses epoll_pwait without asking again.
 */
static int no_pwait2;

/*
 * On an ASC user thread the loop must not sleep in epoll_wait (its VP
 * would stop): it looks without waiting, and when nothing is ready parks
 * the user thread until the reactor's epoll descriptor is readable, which
 * the ASC's sentinel watches in its own epoll.  0 events at @deadline.
 */
static int wait_events_uthread(struct asx_reactor *r, struct epoll_event *evs, int max,
			       const struct timespec *deadline)
{
	for (;;) {
		int n = epoll_wait(r->epfd, evs, max, 0);

		if (n != 0)
			return n;
		n = asx_asc_thread_wait_fd(r->epfd, POLLIN, deadline);
		if (n == -ETIMEDOUT)
			return 0;
		if (n < 0) {
			errno = -n;
			return -1;
		}
	}
}

static int wait_events(struct asx_reactor *r, struct epoll_event *evs, int max,
		       const struct timespec *deadline)
{
	struct timespec rel;
	uint64_t now, end;
	int n, ms;

	if (asx_asc_thread_self())
		return wait_events_uthread(r, evs, max, deadline);
	if (!deadline)
		return epoll_wait(r->epfd, evs, max, -1);
	now = asx_now_ns();
	end = asx_timespec_ns(deadline);
	rel.tv_sec = 0;
	rel.tv_nsec = 0;
	if (end > now) {
		rel.tv_sec = (time_t)((end - now) / ASX_NSEC_PER_SEC);
		rel.tv_nsec = (long)((end - now) % ASX_NSEC_PER_SEC);
	}
	if (!__atomic_load_n(&no_pwait2, __ATOMIC_RELAXED)) {
		n = epoll_pwait2(r->epfd, evs, max, &rel, NULL);
		if (n >= 0 || errno != ENOSYS)
			return n;
		__atomic_store_n(&no_pwait2, 1, __ATOMIC_RELAXED);
	}
	/* Milliseconds, rounded up so we never return early. */
	if (end <= now)
		ms = 0;
	else if ((end - now) / 1000000 >= INT_MAX)
		ms = INT_MAX;
	else
		ms = (int)((end - now + 999999) / 1000000);
	return epoll_pwait(r->epfd, evs, max, ms, NULL);
}

/*
 * The end of a round of the loop: true if run_once returns, with *@rc:
 * callbacks ran, or the loop was woken explicitly, or @deadline passed.
 */
static bool round_end(struct asx_reactor *r, int total, const struct timespec *deadline, int *rc)
{
	bool woken;

	rx_lock(r);
	woken = r->woken;
	r->woken = false;
	rx_unlock(r);
	*rc = total;
	if (total > 0 || woken)
		return true;
	*rc = 0;
	return deadline && asx_now_ns() >= asx_timespec_ns(deadline);
}

static int loop_once(struct asx_reactor *r, const struct timespec *deadline)
{
	struct epoll_event evs[RX_EVENTS];
	int total = 0;

	for (;;) {
		bool wake = false, sig = false;
		int i, rc, n = wait_events(r, evs, RX_EVENTS, deadline);

		if (n < 0) {
			if (errno != EINTR)
				return -errno;
			n = 0;
		}
		for (i = 0; i < n; i++) {
			switch (evs[i].data.u64) {
			case RX_TAG_WAKE:
				wake = true;
				break;
			case RX_TAG_TIMER:
				drain(r->timerfd);
				break;
			case RX_TAG_SIGNAL:
				sig = true;
				break;
			default:
				total += dispatch_io(r, &evs[i]);
			}
		}
		if (sig)
			total += dispatch_signals(r);
		total += asx__rx_timers_expire(r);
		if (wake) {
			drain(r->wakefd);
			total += asx__rx_notify_dispatch(r);
		}
		if (round_end(r, total, deadline, &rc))
			return rc;
	}
}

/*
 * Lock held: the leader took @ev; before it hands leadership on, make sure
 * no follower can take the same thing.  The wake-up and timer descriptors
 * are level-triggered: drain them.  A descriptor's one-shot entry was
 * disarmed by the event: claim it for the caller (lent, as to a pool
 * thread), so that nothing re-arms it before its callbacks ran.  False if
 * the event is stale (the descriptor went, was suspended, or another
 * thread claimed it after a re-arm).
 */
static bool tp_claim(struct asx_reactor *r, const struct epoll_event *ev)
{
	int fd = (int)(uint32_t)ev->data.u64;
	uint32_t gen = (uint32_t)(ev->data.u64 >> 32);
	struct rx_fd *f;

	switch (ev->data.u64) {
	case RX_TAG_WAKE:
		drain(r->wakefd);
		return true;
	case RX_TAG_TIMER:
		drain(r->timerfd);
		return true;
	case RX_TAG_SIGNAL:
		return true;
	}
	f = asx__rx_hmap_get(&r->fds, (uint64_t)fd);
	if (!f || f->gen != gen || !f->in_epoll || f->lent)
		return false;
	f->in_epoll = false;
	f->lent = true;
	return true;
}

/* The claimed event's callbacks, run after leadership went on. */
static int tp_dispatch(struct asx_reactor *r, const struct epoll_event *ev)
{
	switch (ev->data.u64) {
	case RX_TAG_WAKE:
		return asx__rx_notify_dispatch(r);
	case RX_TAG_TIMER:
		return asx__rx_timers_expire(r);
	case RX_TAG_SIGNAL:
		return dispatch_signals(r);
	}
	return asx__rx_run_lent(r, (int)(uint32_t)ev->data.u64, (uint32_t)(ev->data.u64 >> 32),
				ev->events);
}

/*
 * Leader/followers (ASX_REACTOR_TP).  Followers wait on r->lf_cond; the
 * leader waits in epoll for one event, claims it (tp_claim), gives
 * leadership to a follower, runs the event's callbacks and goes round as
 * a follower.  The same return rules as loop_once, and it returns once
 * the loop was ended (end_loop writes the eventfd for the leader and
 * wakes the followers).
 */
static int tp_loop_once(struct asx_reactor *r, const struct timespec *deadline)
{
	int total = 0;

	for (;;) {
		struct epoll_event ev;
		bool claimed = false;
		int n, rc, err = 0;

		rx_lock(r);
		while (r->leader && !asx_reactor_loop_done(r)) {
			if (!deadline) {
				asx_cond_wait(&r->lf_cond, &r->lock);
			} else if (asx_cond_timedwait(&r->lf_cond, &r->lock, deadline)) {
				rx_unlock(r);
				return total;
			}
		}
		if (asx_reactor_loop_done(r)) {
			rx_unlock(r);
			return total;
		}
		r->leader = true;
		rx_unlock(r);

		n = wait_events(r, &ev, 1, deadline);
		if (n < 0)
			err = errno;
		rx_lock(r);
		if (n == 1)
			claimed = tp_claim(r, &ev);
		r->leader = false;
		asx_cond_signal(&r->lf_cond);	/* promote a follower */
		rx_unlock(r);
		if (n < 0 && err != EINTR)
			return -err;
		if (claimed)
			total += tp_dispatch(r, &ev);

		if (round_end(r, total, deadline, &rc))
			return rc;
	}
}

int asx_reactor_run_once(struct asx_reactor *r, const struct timespec *deadline)
{
	struct rx_runner self, **pp;
	int rc;

	if (!r || (deadline && (deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000L ||
				deadline->tv_sec < 0)))
		return -EINVAL;
	rx_lock(r);
	if (asx__rx_is_dispatcher(r) || (r->runners && !r->tp)) {
		rc = asx__rx_is_dispatcher(r) ? -EDEADLK : -EBUSY;
		rx_unlock(r);
		return rc;
	}
	asx__rx_self_get(&self.self);
	self.next = r->runners;
	r->runners = &self;
	rx_unlock(r);

	rc = r->tp ? tp_loop_once(r, deadline) : loop_once(r, deadline);

	rx_lock(r);
	for (pp = &r->runners; *pp != &self; pp = &(*pp)->next)
		;
	*pp = self.next;
	rx_unlock(r);
	return rc;
}

int asx_reactor_run(struct asx_reactor *r)
{
	if (!r)
		return -EINVAL;
	while (!asx_reactor_loop_done(r)) {
		int rc = asx_reactor_run_once(r, NULL);

		if (rc < 0)
			return rc;
	}
	return 0;
}

void asx_reactor_end_loop(struct asx_reactor *r)
{
	bool need;

	if (!r)
		return;
	__atomic_store_n(&r->ended, 1, __ATOMIC_RELEASE);
	rx_lock(r);
	r->woken = true;
	/*
	 * A thread-pool reactor's leader may be one promoted after the last
	 * write was drained (wake_pending still set): write for it anyway.
	 */
	need = !r->wake_pending || r->tp;
	r->wake_pending = true;
	if (r->tp)
		asx_cond_broadcast(&r->lf_cond);
	rx_unlock(r);
	if (need)
		asx__rx_wake(r);
}

void asx_reactor_reset_loop(struct asx_reactor *r)
{
	if (r)
		__atomic_store_n(&r->ended, 0, __ATOMIC_RELEASE);
}

bool asx_reactor_is_tp(const struct asx_reactor *r)
{
	return r && r->tp;
}

bool asx_reactor_loop_done(const struct asx_reactor *r)
{
	return r && __atomic_load_n(&r->ended, __ATOMIC_ACQUIRE);
}

int asx_reactor_handle(struct asx_reactor *r)
{
	return r ? r->epfd : -EINVAL;
}

unsigned int asx_reactor_fd_count(struct asx_reactor *r)
{
	unsigned int n;

	if (!r)
		return 0;
	rx_lock(r);
	n = (unsigned int)r->fds.count;
	rx_unlock(r);
	return n;
}
