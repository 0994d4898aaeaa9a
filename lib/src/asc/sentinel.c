// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sentinel.c - the sentinel: the one thread that is in no ASC.  It sleeps
 * in epoll_wait() on the descriptors user threads wait for
 * (asx_asc_thread_wait_fd), a timerfd armed for the earliest timer (sleeps,
 * timed waits, thread timers, EDF releases) and an eventfd, and wakes
 * the threads whose event came.  When nothing anywhere is runnable it is
 * the only thread of the scheduler that is awake; it is a pthread of its
 * own rather than a borrowed VP so that timers also fire while every VP
 * is busy (the paper's SIGALRM route, without a signal).
 *
 * The timer heap and its timerfd are below the scheduler, in timerheap.c;
 * the sentinel fires what is due.  It starts with the first ASC.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "asc/sched_impl.h"
#include "core/futex.h"
#include "core/probes.h"

static struct {
	int epfd, tfd, efd;		/* tfd: timerheap.c's */
	pthread_once_t once;
	pthread_t th;			/* the sentinel, joined at unload (sentinel_fini) */
	int stop;
	int err;
	uint32_t epoch;			/* batches of events handled */
	int syncers;
	/* signals (under the timer lock): a signalfd whose mask is the union of the
	 * sets user threads wait for, the waiters in arrival order, and
	 * signals read that no waiter could take any more (timed out) */
	int sfd;
	struct sigwait *sw_head, **sw_tail;
	unsigned int sw_cnt[_NSIG];
	struct signalfd_siginfo stash[32];
	int nstash;
} T = {
	.once = PTHREAD_ONCE_INIT,
	.epfd = -1, .tfd = -1, .efd = -1, .sfd = -1,
	.sw_tail = &T.sw_head,
};

struct sigwait {
	struct asx_waiter w;
	sigset_t set;
	struct signalfd_siginfo si;
	struct sigwait *next;
	bool listed;
};

static void sig_deliver(void);

/* the signal waiters share the timer heap's lock (timerheap.c) */
static void tlock(void)
{
	asx__timer_lock();
}

static void tunlock(void)
{
	asx__timer_unlock();
}

/* ---------------------------------------------------------------- thread */

/* Fire due timers; threads to wake are collected and woken unlocked. */
static void fire_timers(void)
{
	struct asx_asc_thread *wake[64];
	struct asx_waiter *ws[64];
	struct asx_asc *acts[16];
	int nw = 0, nact = 0;
	uint64_t now = asx_now_ns();

	struct tnode *n;

	tlock();
	while (nw < 64 && (n = asx__timer_due_locked(now))) {
		struct asx_asc_thread *t = n->t;

		if (n->kind == TN_ACT && nact == 16)
			break;		/* the rest in the next batch, at once */
		asx__timer_remove_locked(n);
		if (n->kind == TN_ACT) {
			/* checked unlocked (lock order: ASC, then timers);
			 * asx_asc_destroy() waits for this batch to end */
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
				asx__timer_insert_locked(n);
			}
			/* interrupt an asx_asc_thread_sleep() of the owner */
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
	asx__timer_rearm_locked(true);
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
		uint64_t again = asx__activation_check(acts[i]);

		if (again) {
			acts[i]->act.when = asx_now_ns() + again;
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
			asx_asc_thread_yield();
		else
			asx_futex_wait(&T.epoch, e0, NULL);
	}
	__atomic_sub_fetch(&T.syncers, 1, __ATOMIC_SEQ_CST);
}

/* One descriptor a user thread waits for; several may share one waiter
 * (asx_asc_poll).  The sentinel's epoll entry points at it. */
struct fdwait {
	struct asx_waiter *w;
	uint32_t revents;
};

static void *sentinel_main(void *arg)
{
	struct epoll_event ev[64];

	(void)arg;
	for (;;) {
		int n = epoll_wait(T.epfd, ev, 64, -1);
		bool fired = false;

		for (int i = 0; i < n; i++) {
			void *p = ev[i].data.ptr;

			if (p == &T.tfd) {
				uint64_t x;

				if (read(T.tfd, &x, sizeof(x)) == sizeof(x))
					fired = true;
			} else if (p == &T.sfd) {
				sig_deliver();
			} else if (p == &T.efd) {
				uint64_t x;

				if (read(T.efd, &x, sizeof(x)) < 0)
					(void)0;
			} else if (p) {
				struct fdwait *fw = p;

				__atomic_store_n(&fw->revents, ev[i].events, __ATOMIC_RELAXED);
				asx__claim_wake(fw->w, W_WOKEN);
			}
		}
		/* a timer may have come due without its fd firing yet (rearm races) */
		tlock();
		bool due = asx__timer_due_locked(asx_now_ns());

		if (fired && !due) {
			/*
			 * The timer we armed expired with nothing due: its
			 * node left the heap early (a wait woken in time, a
			 * cancelled timer).  The timerfd is disarmed now;
			 * arm it for the heap's new first node.
			 */
			asx__timer_rearm_locked(true);
		}
		tunlock();
		if (due)
			fire_timers();
		/* no pointer from this batch is used past here */
		__atomic_add_fetch(&T.epoch, 1, __ATOMIC_RELEASE);
		if (__atomic_load_n(&T.syncers, __ATOMIC_ACQUIRE))
			asx_futex_wake(&T.epoch, INT_MAX);
		if (__atomic_load_n(&T.stop, __ATOMIC_ACQUIRE))
			break;
	}
	return NULL;
}

static void sentinel_init(void)
{
	struct epoll_event ev;
	pthread_t th;
	pthread_attr_t pa;

	T.epfd = epoll_create1(EPOLL_CLOEXEC);
	T.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (T.epfd < 0 || T.efd < 0) {
		T.err = -errno;
		return;
	}
	T.tfd = asx__timer_fd();
	if (T.tfd < 0) {
		T.err = T.tfd;
		return;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &T.tfd;
	epoll_ctl(T.epfd, EPOLL_CTL_ADD, T.tfd, &ev);
	ev.data.ptr = &T.efd;
	epoll_ctl(T.epfd, EPOLL_CTL_ADD, T.efd, &ev);
	pthread_attr_init(&pa);
	pthread_attr_setstacksize(&pa, 256 * 1024);
	/*
	 * The sentinel runs no user code: it takes no asynchronous signal
	 * (a signal user threads wait for stays pending for its signalfd
	 * rather than being delivered to it).  It inherits this mask.
	 */
	sigset_t all, old;

	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&th, &pa, sentinel_main, NULL))
		T.err = -EAGAIN;
	else
		T.th = th;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&pa);
}

/*
 * At exit (or when libasx.so is unloaded), once every ASC is destroyed:
 * stop and join the sentinel and release what it holds, so leak checkers
 * see nothing of it.  With an ASC still alive its threads may still use
 * the sentinel: it is left running.
 */
__attribute__((destructor)) static void sentinel_fini(void)
{
	uint64_t one = 1;

	if (__atomic_load_n(&T.once, __ATOMIC_ACQUIRE) == PTHREAD_ONCE_INIT || T.err ||
	    !asx__asc_none())
		return;
	__atomic_store_n(&T.stop, 1, __ATOMIC_RELEASE);
	if (write(T.efd, &one, sizeof(one)) < 0)
		return;		/* cannot wake it: leave it */
	pthread_join(T.th, NULL);
	if (T.sfd >= 0)
		close(T.sfd);
	close(T.epfd);
	close(T.efd);
	T.sfd = T.epfd = T.tfd = T.efd = -1;
	asx__timer_fini();
	T.err = -ESHUTDOWN;	/* no timer from here on */
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

int asx_asc_thread_sleep_until(const struct timespec *dl)
{
	struct asx_asc_thread *self = asx__self();
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
		asx_asc_thread_yield();
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
	asx__timer_remove_locked(&self->sleep);
	tunlock();
	return __atomic_load_n(&w.state, __ATOMIC_ACQUIRE) == W_INTR ? -EINTR : 0;
}

int asx_asc_thread_sleep(uint64_t ns)
{
	struct timespec ts;

	return asx_asc_thread_sleep_until(asx_deadline(&ts, ns));
}

/* poll(2) events as the sentinel's one-shot epoll events */
static uint32_t epoll_events(short events)
{
	uint32_t e = EPOLLONESHOT;

	if (events & POLLIN)
		e |= EPOLLIN | EPOLLRDHUP;
	if (events & POLLOUT)
		e |= EPOLLOUT;
	if (events & POLLPRI)
		e |= EPOLLPRI;
	if (events & POLLRDHUP)
		e |= EPOLLRDHUP;
	return e;
}

/*
 * Park the caller (w->t; NULL: a pthread sleeps) until one of the @n
 * descriptors of @p is ready for its events (fd < 0: skipped, as poll(2)
 * does) or @dl passes.  Each descriptor gets an epoll entry of its own
 * pointing at fw[i], all sharing the one waiter @w; one already in the
 * sentinel's set (another waiter's) is watched through a duplicate, xfd[i].
 * Returns W_WOKEN or W_TIMEDOUT, or -errno when no descriptor could be
 * watched (nothing waited).  A descriptor that cannot be watched after
 * others were is reported the same way once the wait, cut short, is over.
 */
static int wait_fds(struct asx_waiter *w, struct fdwait *fw, int *xfd,
		    const struct pollfd *p, nfds_t n, const struct timespec *dl)
{
	struct asx_asc_thread *self = w->t;
	struct epoll_event ev;
	struct timespec now;
	int lock = 0, err = 0, r;
	nfds_t added = 0;

	if (self)
		__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
	lock_np(&lock);
	for (nfds_t i = 0; i < n; i++) {
		xfd[i] = -1;
		if (p[i].fd < 0 || err)
			continue;
		memset(&ev, 0, sizeof(ev));
		ev.events = epoll_events(p[i].events);
		ev.data.ptr = &fw[i];
		fw[i].w = w;
		fw[i].revents = 0;
		xfd[i] = p[i].fd;
		r = epoll_ctl(T.epfd, EPOLL_CTL_ADD, xfd[i], &ev);
		if (r < 0 && errno == EEXIST) {
			/* someone else waits on it: a duplicate is a separate epoll entry */
			xfd[i] = dup(p[i].fd);
			r = xfd[i] < 0 ? -1 : epoll_ctl(T.epfd, EPOLL_CTL_ADD, xfd[i], &ev);
		}
		if (r < 0) {
			err = -errno;
			if (xfd[i] != p[i].fd && xfd[i] >= 0)
				close(xfd[i]);
			xfd[i] = -1;
			continue;
		}
		added++;
	}
	if (err && !added) {
		unlock_np(&lock);
		if (self)
			__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
		return err;
	}
	/* on an error the sentinel may have claimed @w already: an expired
	 * deadline takes that wake-up, or ends the wait at once */
	r = asx__wait(w, &lock, err ? asx_deadline(&now, 0) : dl);
	for (nfds_t i = 0; i < n; i++) {
		if (xfd[i] < 0)
			continue;
		epoll_ctl(T.epfd, EPOLL_CTL_DEL, xfd[i], NULL);
	}
	/*
	 * The sentinel may hold our entries from a batch it got before the
	 * DELs (a timed-out wait's, or the others of several): let it finish
	 * that batch before our frame goes.
	 */
	if (r == W_TIMEDOUT || added > 1)
		asx__sentinel_sync();
	for (nfds_t i = 0; i < n; i++)
		if (xfd[i] >= 0 && xfd[i] != p[i].fd)
			close(xfd[i]);
	return err ? err : r;
}

int asx_asc_thread_wait_fd(int fd, short events, const struct timespec *dl)
{
	struct asx_waiter w = { .t = asx__self() };
	struct pollfd p = { .fd = fd, .events = events };
	struct fdwait fw;
	int r, xfd;

	if (fd < 0)
		return -EBADF;
	if (!asx_timespec_valid(dl))
		return -EINVAL;
	if (asx__sentinel_start())
		return T.err;
	r = wait_fds(&w, &fw, &xfd, &p, 1, dl);
	if (r < 0)
		return r;
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

/* The rest of a poll(2) after @dl could not be watched: block the VP. */
static int poll_blocking(struct pollfd *fds, nfds_t n, const struct timespec *dl)
{
	int r, e, ms = -1;

	if (dl) {
		uint64_t now = asx_now_ns(), end = asx_timespec_ns(dl);

		ms = end > now ? (int)((end - now + 999999) / 1000000) : 0;
	}
	asx_asc_blocking_begin();
	r = poll(fds, n, ms);
	e = asx__errno_get();
	asx_asc_blocking_end();
	asx__errno_set(e);
	return r;
}

/*
 * poll(2) on a user thread: look once; when nothing is ready, park until
 * one of the descriptors is (the sentinel watches them all) or the timeout
 * passes, and look again (another thread may have taken the event).
 */
int asx_asc_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	struct asx_waiter w = { .t = asx__self() };
	struct fdwait fw_small[8], *fw = fw_small;
	int xfd_small[8], *xfd = xfd_small;
	struct timespec dls, *dl = NULL;
	int r;

	if (!timeout_ms || !w.t)
		return poll(fds, n, timeout_ms);
	if (timeout_ms > 0)
		dl = asx_deadline(&dls, (uint64_t)timeout_ms * 1000000ULL);
	r = poll(fds, n, 0);
	if (r)
		return r;
	if (asx__sentinel_start())
		return poll_blocking(fds, n, dl);
	if (n > ASX_ARRAY_SIZE(fw_small)) {
		fw = calloc(n, sizeof(*fw));
		xfd = calloc(n, sizeof(*xfd));
		if (!fw || !xfd) {
			free(fw);
			free(xfd);
			asx__errno_set(ENOMEM);
			return -1;
		}
	}
	for (;;) {
		int k = wait_fds(&w, fw, xfd, fds, n, dl);

		if (k < 0) {
			/* a descriptor epoll cannot watch: the kernel's poll */
			r = poll_blocking(fds, n, dl);
			break;
		}
		r = poll(fds, n, 0);
		if (r || k == W_TIMEDOUT)
			break;
		w.state = W_WAITING;
	}
	if (fw != fw_small) {
		free(fw);
		free(xfd);
	}
	return r;
}

/* ---------------------------------------------------------------- signals */

/* Under T.lock: the signalfd's mask = the union of the waited sets. */
static int sig_update_mask(void)
{
	sigset_t m;

	sigemptyset(&m);
	for (int i = 1; i < _NSIG; i++)
		if (T.sw_cnt[i])
			sigaddset(&m, i);
	if (T.sfd >= 0)
		return signalfd(T.sfd, &m, 0) < 0 ? -errno : 0;
	T.sfd = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
	if (T.sfd < 0)
		return -errno;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &T.sfd };

	if (epoll_ctl(T.epfd, EPOLL_CTL_ADD, T.sfd, &ev) < 0) {
		int e = -errno;

		close(T.sfd);
		T.sfd = -1;
		return e;
	}
	return 0;
}

/* Under T.lock. */
static void sig_unlist(struct sigwait *sw)
{
	struct sigwait **pp;

	for (pp = &T.sw_head; *pp != sw; pp = &(*pp)->next)
		;
	*pp = sw->next;
	if (T.sw_tail == &sw->next)
		T.sw_tail = pp;
	sw->listed = false;
	for (int i = 1; i < _NSIG; i++)
		if (sigismember(&sw->set, i))
			T.sw_cnt[i]--;
}

/* Under T.lock: take a stashed signal in @set into @si. */
static bool sig_unstash(const sigset_t *set, struct signalfd_siginfo *si)
{
	for (int i = 0; i < T.nstash; i++) {
		if (!sigismember(set, (int)T.stash[i].ssi_signo))
			continue;
		*si = T.stash[i];
		memmove(&T.stash[i], &T.stash[i + 1],
			(size_t)(T.nstash - i - 1) * sizeof(T.stash[0]));
		T.nstash--;
		return true;
	}
	return false;
}

/* The sentinel: the signalfd is readable.  Hand each signal to the first
 * waiter for it; one nobody can take any more is stashed for the next. */
static void sig_deliver(void)
{
	struct asx_asc_thread *wake[64];
	int nw = 0;
	struct signalfd_siginfo si;

	tlock();
	while (nw < 64 && T.sfd >= 0 && read(T.sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		struct sigwait *sw;
		bool taken = false;

		for (sw = T.sw_head; sw && !taken; sw = sw->next) {
			uint32_t exp = W_WAITING;

			if (!sigismember(&sw->set, (int)si.ssi_signo))
				continue;
			if (!__atomic_compare_exchange_n(&sw->w.state, &exp, W_WOKEN, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
				continue;	/* timed out: it unlists itself */
			sw->si = si;
			wake[nw++] = sw->w.t;
			sig_unlist(sw);
			taken = true;
		}
		if (!taken) {
			if (T.nstash == (int)ASX_ARRAY_SIZE(T.stash))
				memmove(&T.stash[0], &T.stash[1], sizeof(T.stash) - sizeof(T.stash[0]));
			else
				T.nstash++;
			T.stash[T.nstash - 1] = si;
		}
	}
	sig_update_mask();
	tunlock();
	/* a claimed waiter stays blocked until woken: its frame is alive */
	for (int i = 0; i < nw; i++)
		asx__wake(wake[i]);
}

static void si_fill(siginfo_t *info, const struct signalfd_siginfo *si)
{
	memset(info, 0, sizeof(*info));
	info->si_signo = (int)si->ssi_signo;
	info->si_errno = si->ssi_errno;
	info->si_code = si->ssi_code;
	info->si_pid = (pid_t)si->ssi_pid;
	info->si_uid = (uid_t)si->ssi_uid;
	info->si_status = si->ssi_status;
	info->si_value.sival_ptr = (void *)(uintptr_t)si->ssi_ptr;
}

int asx_asc_thread_wait_signal(const sigset_t *set, siginfo_t *info, const struct timespec *dl)
{
	struct asx_asc_thread *self = asx__self();
	struct sigwait sw = { .w = { .t = self } };
	sigset_t cur;
	int lock = 0, r, n = 0;

	if (!set || !asx_timespec_valid(dl) || sigismember(set, SIGKILL) ||
	    sigismember(set, SIGSTOP))
		return -EINVAL;
	/* signals that are not blocked would be delivered, not waited for */
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur))
		return -EINVAL;
	for (int i = 1; i < _NSIG; i++) {
		if (!sigismember(set, i))
			continue;
		if (!sigismember(&cur, i))
			return -EINVAL;
		n++;
	}
	if (!n)
		return -EINVAL;
	if (!self) {
		/* a plain pthread: the kernel's own wait */
		siginfo_t tmp;
		struct timespec rel;

		for (;;) {
			if (dl) {
				uint64_t now = asx_now_ns(), d = asx_timespec_ns(dl);

				d = d > now ? d - now : 0;
				rel.tv_sec = (time_t)(d / ASX_NSEC_PER_SEC);
				rel.tv_nsec = (long)(d % ASX_NSEC_PER_SEC);
			}
			r = sigtimedwait(set, info ? info : &tmp, dl ? &rel : NULL);
			if (r > 0)
				return r;
			if (errno == EAGAIN)
				return -ETIMEDOUT;
			if (errno != EINTR)
				return -errno;
		}
	}
	if (asx__sentinel_start())
		return T.err;
	sw.set = *set;
	__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
	lock_np(&lock);
	tlock();
	if (sig_unstash(set, &sw.si)) {
		tunlock();
		unlock_np(&lock);
		__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
		goto got;
	}
	for (int i = 1; i < _NSIG; i++)
		if (sigismember(set, i))
			T.sw_cnt[i]++;
	sw.listed = true;
	*T.sw_tail = &sw;
	T.sw_tail = &sw.next;
	/* a signal pending already makes the signalfd readable at once */
	r = sig_update_mask();
	if (r) {
		sig_unlist(&sw);
		sig_update_mask();
		tunlock();
		unlock_np(&lock);
		__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
		return r;
	}
	tunlock();
	r = asx__wait(&sw.w, &lock, dl);
	if (r != W_WOKEN) {
		bool got;

		tlock();
		if (sw.listed) {
			sig_unlist(&sw);
			sig_update_mask();
		}
		/* one read for us after we timed out was stashed */
		got = sig_unstash(set, &sw.si);
		tunlock();
		if (!got)
			return -ETIMEDOUT;
	}
got:
	if (info)
		si_fill(info, &sw.si);
	return (int)sw.si.ssi_signo;
}
