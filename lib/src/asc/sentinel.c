// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sentinel.c - the sentinel: the one thread that is in no ASC.  It sleeps
 * in epoll_wait() on the descriptors user threads wait for
 * (asx_thread_wait_fd), a timerfd armed for the earliest timer (sleeps,
 * timed waits, thread timers, EDF releases) and an eventfd, and wakes
 * the threads whose event came.  When nothing anywhere is runnable it is
 * the only thread of the scheduler that is awake; it is a pthread of its
 * own rather than a borrowed VP so that timers also fire while every VP
 * is busy (the paper's SIGALRM route, without a signal).
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "asc/asc_impl.h"
#include "core/futex.h"
#include "core/probes.h"

static struct {
	pthread_mutex_t lock;		/* the timer heap */
	struct tnode **heap;
	int n, cap;
	int epfd, tfd, efd;
	uint64_t armed;			/* when the timerfd fires; 0: disarmed */
	pthread_once_t once;
	int err;
	uint32_t epoch;			/* batches of events handled */
	int syncers;
} T = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
	.epfd = -1, .tfd = -1, .efd = -1,
};

static void tlock(void)
{
	np_enter();
	pthread_mutex_lock(&T.lock);
}

static void tunlock(void)
{
	pthread_mutex_unlock(&T.lock);
	np_leave(true);
}

/* ---------------------------------------------------------------- heap */

static void hswap(int i, int j)
{
	struct tnode *a = T.heap[i];

	T.heap[i] = T.heap[j];
	T.heap[j] = a;
	T.heap[i]->idx = i;
	T.heap[j]->idx = j;
}

static void hup(int i)
{
	while (i > 0) {
		int p = (i - 1) / 2;

		if (T.heap[p]->when <= T.heap[i]->when)
			break;
		hswap(i, p);
		i = p;
	}
}

static void hdown(int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < T.n && T.heap[l]->when < T.heap[m]->when)
			m = l;
		if (r < T.n && T.heap[r]->when < T.heap[m]->when)
			m = r;
		if (m == i)
			return;
		hswap(i, m);
		i = m;
	}
}

static void hremove(struct tnode *n)
{
	int i = n->idx;

	T.n--;
	if (i != T.n) {
		T.heap[i] = T.heap[T.n];
		T.heap[i]->idx = i;
		hdown(i);
		hup(i);
	}
	n->idx = -1;
}

/* under T.lock: arm the timerfd for the heap's top */
static void rearm(void)
{
	struct itimerspec its;
	uint64_t w = T.n ? T.heap[0]->when : 0;

	if (w == T.armed)
		return;
	memset(&its, 0, sizeof(its));
	if (w) {
		its.it_value.tv_sec = (time_t)(w / ASX_NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(w % ASX_NSEC_PER_SEC);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(T.tfd, TFD_TIMER_ABSTIME, &its, NULL);
	T.armed = w;
}

void asx__timer_add(struct tnode *n)
{
	if (asx__sentinel_start())
		abort();	/* no timerfd/epoll: nothing sensible to do */
	tlock();
	if (n->idx >= 0)
		hremove(n);
	if (T.n == T.cap) {
		int cap = T.cap ? 2 * T.cap : 64;
		struct tnode **h = realloc(T.heap, (size_t)cap * sizeof(*h));

		if (!h)
			abort();
		T.heap = h;
		T.cap = cap;
	}
	n->idx = T.n;
	T.heap[T.n++] = n;
	hup(n->idx);
	if (T.heap[0] == n)
		rearm();
	tunlock();
}

bool asx__timer_del(struct tnode *n)
{
	bool was;

	if (__atomic_load_n(&T.once, __ATOMIC_ACQUIRE) == PTHREAD_ONCE_INIT && n->idx < 0)
		return false;
	tlock();
	was = n->idx >= 0;
	if (was)
		hremove(n);
	tunlock();
	return was;
}

/* ---------------------------------------------------------------- thread */

/* Fire due timers; threads to wake are collected and woken unlocked. */
static void fire_timers(void)
{
	struct asx_thread *wake[64];
	struct asx_waiter *ws[64];
	struct asx_asc *acts[16];
	int nw = 0, nact = 0;
	uint64_t now = asx_now_ns();

	tlock();
	while (T.n && T.heap[0]->when <= now && nw < 64) {
		struct tnode *n = T.heap[0];
		struct asx_thread *t = n->t;

		hremove(n);
		if (n->kind == TN_ACT) {
			/* checked unlocked (lock order: ASC, then timers);
			 * asx_asc_destroy() waits for this batch to end */
			if (nact < 16)
				acts[nact++] = n->asc;
		} else if (n->kind == TN_WAIT) {
			ws[nw] = n->w;
			wake[nw++] = NULL;
		} else {
			struct utimer *u = &t->utimers[n->timer];

			__atomic_or_fetch(&t->utimer_pending, 1u << n->timer, __ATOMIC_RELEASE);
			if (u->period) {
				n->when += u->period;
				if (n->when <= now)
					n->when = now + u->period;
				n->idx = T.n;
				T.heap[T.n++] = n;
				hup(n->idx);
			}
			/* interrupt an asx_thread_sleep() of the owner */
			if (t->sleep_w) {
				ws[nw] = t->sleep_w;
				wake[nw++] = t;
			}
		}
	}
	/* claims are made under the lock: the waiter cannot have returned */
	for (int i = 0; i < nw; i++) {
		uint32_t exp = W_WAITING;

		if (!__atomic_compare_exchange_n(&ws[i]->state, &exp,
						 wake[i] ? W_INTR : W_TIMEDOUT, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			ws[i] = NULL;
		else
			wake[i] = ws[i]->t;
	}
	T.armed = 0;
	rearm();
	tunlock();
	for (int i = 0; i < nw; i++) {
		if (!ws[i])
			continue;
		if (wake[i])
			asx__wake(wake[i]);
		else
			asx_futex_wake(&ws[i]->state, 1);
	}
	for (int i = 0; i < nact; i++) {
		if (asx__activation_check(acts[i])) {
			acts[i]->act.when = asx_now_ns() + ACT_DELAY_NS;
			asx__timer_add(&acts[i]->act);
		}
	}
}

/* Return once the sentinel has finished the batch of events it may be
 * handling now (pointers it got from the heap or epoll are dead after). */
void asx__sentinel_sync(void)
{
	uint32_t e0;
	uint64_t one = 1;

	if (__atomic_load_n(&T.once, __ATOMIC_ACQUIRE) == PTHREAD_ONCE_INIT || T.err)
		return;
	e0 = __atomic_load_n(&T.epoch, __ATOMIC_ACQUIRE);
	__atomic_add_fetch(&T.syncers, 1, __ATOMIC_SEQ_CST);
	if (write(T.efd, &one, sizeof(one)) < 0)
		(void)0;
	while (__atomic_load_n(&T.epoch, __ATOMIC_ACQUIRE) == e0) {
		if (asx__self())
			asx_thread_yield();
		else
			asx_futex_wait(&T.epoch, e0, NULL);
	}
	__atomic_sub_fetch(&T.syncers, 1, __ATOMIC_SEQ_CST);
}

struct fdwait {
	struct asx_waiter w;
	uint32_t revents;
};

static void *sentinel_main(void *arg)
{
	struct epoll_event ev[64];

	(void)arg;
	for (;;) {
		int n = epoll_wait(T.epfd, ev, 64, -1);

		for (int i = 0; i < n; i++) {
			void *p = ev[i].data.ptr;

			if (p == &T.tfd) {
				uint64_t x;

				if (read(T.tfd, &x, sizeof(x)) < 0)
					(void)0;
			} else if (p == &T.efd) {
				uint64_t x;

				if (read(T.efd, &x, sizeof(x)) < 0)
					(void)0;
			} else if (p) {
				struct fdwait *fw = p;

				__atomic_store_n(&fw->revents, ev[i].events, __ATOMIC_RELAXED);
				asx__claim_wake(&fw->w, W_WOKEN);
			}
		}
		/* a timer may have come due without its fd firing yet (rearm races) */
		tlock();
		bool due = T.n && T.heap[0]->when <= asx_now_ns();

		tunlock();
		if (due)
			fire_timers();
		/* no pointer from this batch is used past here */
		__atomic_add_fetch(&T.epoch, 1, __ATOMIC_RELEASE);
		if (__atomic_load_n(&T.syncers, __ATOMIC_ACQUIRE))
			asx_futex_wake(&T.epoch, INT_MAX);
	}
	return NULL;
}

static void sentinel_init(void)
{
	struct epoll_event ev;
	pthread_t th;
	pthread_attr_t pa;

	T.epfd = epoll_create1(EPOLL_CLOEXEC);
	T.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	T.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (T.epfd < 0 || T.tfd < 0 || T.efd < 0) {
		T.err = -errno;
		return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &T.tfd;
	epoll_ctl(T.epfd, EPOLL_CTL_ADD, T.tfd, &ev);
	ev.data.ptr = &T.efd;
	epoll_ctl(T.epfd, EPOLL_CTL_ADD, T.efd, &ev);
	pthread_attr_init(&pa);
	pthread_attr_setdetachstate(&pa, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&pa, 256 * 1024);
	if (pthread_create(&th, &pa, sentinel_main, NULL))
		T.err = -EAGAIN;
	pthread_attr_destroy(&pa);
}

int asx__sentinel_start(void)
{
	pthread_once(&T.once, sentinel_init);
	return T.err;
}

int asx__sentinel_epfd(void)
{
	return asx__sentinel_start() ? -1 : T.epfd;
}

/* ---------------------------------------------------------------- sleep, wait_fd */

int asx_thread_sleep_until(const struct timespec *dl)
{
	struct asx_thread *self = asx__self();
	struct asx_waiter w = { .t = self };
	uint64_t when;

	if (!dl || !asx_timespec_valid(dl))
		return -EINVAL;
	when = asx_timespec_ns(dl);
	if (!self) {
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, dl, NULL) == EINTR)
			;
		return 0;
	}
	if (when <= asx_now_ns()) {
		asx_thread_yield();
		return 0;
	}
	self->sleep.kind = TN_WAIT;
	self->sleep.t = self;
	self->sleep.w = &w;
	self->sleep.when = when;
	__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
	if (asx__sentinel_start())
		abort();
	tlock();
	self->sleep_w = &w;
	tunlock();
	asx__timer_add(&self->sleep);
	asx__block_self(self);
	tlock();
	self->sleep_w = NULL;
	if (self->sleep.idx >= 0)
		hremove(&self->sleep);
	tunlock();
	return __atomic_load_n(&w.state, __ATOMIC_ACQUIRE) == W_INTR ? -EINTR : 0;
}

int asx_thread_sleep(uint64_t ns)
{
	struct timespec ts;

	return asx_thread_sleep_until(asx_deadline(&ts, ns));
}

int asx_thread_wait_fd(int fd, short events, const struct timespec *dl)
{
	struct asx_thread *self = asx__self();
	struct fdwait fw = { .w = { .t = self } };
	struct epoll_event ev;
	int lock = 0, r, xfd = fd;

	if (fd < 0)
		return -EBADF;
	if (!asx_timespec_valid(dl))
		return -EINVAL;
	if (asx__sentinel_start())
		return T.err;
	memset(&ev, 0, sizeof(ev));
	if (events & POLLIN)
		ev.events |= EPOLLIN | EPOLLRDHUP;
	if (events & POLLOUT)
		ev.events |= EPOLLOUT;
	if (events & POLLPRI)
		ev.events |= EPOLLPRI;
	ev.events |= EPOLLONESHOT;
	ev.data.ptr = &fw;
	if (self)
		__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
	lock_np(&lock);
	r = epoll_ctl(T.epfd, EPOLL_CTL_ADD, fd, &ev);
	if (r < 0 && errno == EEXIST) {
		/* someone else waits on @fd: a duplicate is a separate epoll entry */
		xfd = dup(fd);
		r = xfd < 0 ? -1 : epoll_ctl(T.epfd, EPOLL_CTL_ADD, xfd, &ev);
	}
	if (r < 0) {
		r = -errno;
		unlock_np(&lock);
		if (self)
			__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
		if (xfd != fd && xfd >= 0)
			close(xfd);
		return r;
	}
	r = asx__wait(&fw.w, &lock, dl);
	epoll_ctl(T.epfd, EPOLL_CTL_DEL, xfd, NULL);
	if (r == W_TIMEDOUT) {
		/* the sentinel may hold &fw from a batch it got before the DEL:
		 * let it finish that batch before our frame goes */
		asx__sentinel_sync();
	}
	if (xfd != fd)
		close(xfd);
	if (r == W_TIMEDOUT)
		return -ETIMEDOUT;
	r = 0;
	{
		uint32_t e = __atomic_load_n(&fw.revents, __ATOMIC_RELAXED);

		if (e & (EPOLLIN | EPOLLRDHUP))
			r |= POLLIN;
		if (e & EPOLLOUT)
			r |= POLLOUT;
		if (e & EPOLLPRI)
			r |= POLLPRI;
		if (e & EPOLLERR)
			r |= POLLERR;
		if (e & EPOLLHUP)
			r |= POLLHUP;
	}
	return r ? r : POLLIN;
}
