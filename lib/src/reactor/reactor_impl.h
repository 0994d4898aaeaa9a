/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * reactor_impl.h - the Reactor's internals, shared by the files of lib/src/reactor/.
 *
 * One lock (r->lock) guards every table below and the private fields of
 * the handlers the reactor owns.  Callbacks always run with it released.
 */
#ifndef ASX_REACTOR_IMPL_H
#define ASX_REACTOR_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>

#include <asx/asc.h>
#include <asx/reactor.h>
#include <asx/sync.h>

/* Open-addressing hash map, uint64_t -> non-NULL pointer; grows and shrinks. */
struct asx__rx_hmap {
	uint64_t *keys;
	void **vals;
	size_t cap;		/* 0 or a power of two */
	size_t count;
};

void *asx__rx_hmap_get(const struct asx__rx_hmap *m, uint64_t key);
/* Insert a key that is not present: 0 or -ENOMEM. */
int asx__rx_hmap_put(struct asx__rx_hmap *m, uint64_t key, void *val);
/* Remove and return the value, or NULL. */
void *asx__rx_hmap_del(struct asx__rx_hmap *m, uint64_t key);
void asx__rx_hmap_free(struct asx__rx_hmap *m);
size_t asx__rx_hmap_bytes(const struct asx__rx_hmap *m);

/* Intrusive doubly-linked list. */
struct asx__rx_link {
	struct asx__rx_link *prev, *next;
};

static inline void rx_list_init(struct asx__rx_link *h)
{
	h->prev = h->next = h;
}

static inline bool rx_list_empty(const struct asx__rx_link *h)
{
	return h->next == h;
}

static inline void rx_list_add_tail(struct asx__rx_link *h, struct asx__rx_link *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void rx_list_del(struct asx__rx_link *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

/* A registered descriptor. */
struct rx_fd {
	int fd;
	uint32_t gen;		/* tells a reused descriptor number from the old one */
	unsigned int mask;	/* ASX_EV_IO bits */
	bool in_epoll;		/* false while its handler is suspended or it is lent */
	bool lent;		/* handed to the pool: out of epoll until its callbacks ran */
	bool oneshot;		/* its epoll entry is EPOLLONESHOT (a pool's): the entry
				 * stays, disarmed, while lent, and is re-armed with
				 * EPOLL_CTL_MOD when it comes back */
	uint32_t lent_events;	/* the epoll events it was lent for */
	struct asx__rx_link work;	/* r->work while lent and not yet taken */
	struct asx_event_handler *eh;
	struct rx_fd *hnext, *hprev;	/* the handler's descriptors (its fds) */
	struct asx__rx_link all;		/* r->fd_list */
};

/* A cancel from another thread waiting for the timer's running callback. */
struct rx_cancel_wait {
	int rc;			/* 0: arg is the canceller's; -ENOENT */
	void *arg;
	bool done;
};

/*
 * A timer.  While its callback runs (firing), @deadline is already the
 * pending expiry; a one-shot's run is its last (final): it left r->timers
 * then, so cancel, reset and deadline calls see no such timer.  cancelled:
 * it ends when the callback returns (cancelled from inside it, or its
 * handler removed), and arg went to that cancel if any.
 */
struct rx_timer {
	int64_t id;
	uint64_t deadline;	/* CLOCK_MONOTONIC ns */
	uint64_t seq;		/* tie-break: scheduling order */
	uint64_t interval;
	struct asx_event_handler *eh;
	void *arg;
	size_t heap_idx;	/* RX_NOT_IN_HEAP while firing */
	struct rx_cancel_wait *waiter;	/* while firing: a cancel waits */
	bool firing, final, cancelled;
};
#define RX_NOT_IN_HEAP SIZE_MAX

/* A queued notification; embedded in a queue binding or allocated. */
struct rx_notif {
	struct asx__rx_link link;
	struct asx_event_handler *eh;
	unsigned int mask;
	struct rx_mqbind *bind;	/* NULL: a plain asx_reactor_notify() */
	bool queued;
};

struct rx_mqbind {
	struct asx__rx_link all;		/* r->mq_list */
	uint64_t id;
	struct asx_msgq *q;
	struct asx_event_handler *eh;
	unsigned int mask;
	uint32_t epoch;			/* the queue's hook epoch when unbound */
	struct rx_notif node;
};

/* A thread: a user thread by its ASC thread, else by pthread_self(). */
struct rx_self {
	pthread_t pt;
	struct asx_asc_thread *ut;
};

/* A thread inside asx_reactor_run_once(), on the reactor's list. */
struct rx_runner {
	struct rx_self self;
	struct rx_runner *next;
};

static inline void asx__rx_self_get(struct rx_self *s)
{
	s->ut = asx_asc_thread_self();
	s->pt = pthread_self();
}

/*
 * Is the caller @s?  A user thread is told by its ASC thread, not by
 * pthread_self(), which every user thread of a VP shares (and which
 * changes when the thread moves to another VP).
 */
static inline bool asx__rx_self_is(const struct rx_self *s)
{
	struct asx_asc_thread *self = asx_asc_thread_self();

	if (self || s->ut)
		return self == s->ut;
	return pthread_equal(s->pt, pthread_self());
}

#define RX_NSIG 65
#define RX_EVENTS 64

struct asx_reactor {
	struct asx_mutex lock;
	int epfd, wakefd, timerfd, sigfd;
	struct asx__rx_hmap fds;		/* fd -> struct rx_fd */
	struct asx__rx_hmap timers;	/* id -> struct rx_timer */
	struct asx__rx_hmap mqs;		/* queue address -> struct rx_mqbind */
	struct rx_timer **heap;
	size_t heap_len, heap_cap;
	uint64_t armed;			/* deadline in the timerfd, 0: none */
	int64_t next_timer_id;
	uint64_t timer_seq;
	uint32_t fd_gen;
	struct asx_event_handler *sig[RX_NSIG];
	sigset_t sigmask;
	struct asx__rx_link fd_list;	/* struct rx_fd */
	struct asx__rx_link mq_list;	/* struct rx_mqbind */
	struct asx__rx_link mq_dead;	/* unbound, hook calls not yet drained */
	uint64_t mq_id;
	struct rx_timer *firing;	/* the timer whose callback runs */
	struct asx_cond timer_done;	/* a firing timer's callback returned */
	struct asx__rx_link notifs;	/* struct rx_notif, FIFO */
	size_t nnotifs;
	bool destroying;
	bool wake_pending;
	bool woken;			/* an explicit wake-up since the last wait */
	struct rx_runner *runners;	/* the threads in run_once (one unless tp) */
	struct rx_self firing_by;	/* the thread running r->firing's callback */
	int ended;			/* atomic */
	/* the thread-pool (leader/followers) mode: ASX_REACTOR_TP */
	bool tp;
	bool leader;			/* a thread waits in epoll */
	struct asx_cond lf_cond;	/* followers wait here for leadership */
	bool expiring, expire_again;	/* a thread runs the timers; look again */
	bool notifying, notify_again;	/* a thread runs the notifications; again */
	unsigned int idle_waiters;	/* threads waiting for a handler's callback */
	struct asx_cond idle_cond;	/* a handler's callback returned (tp) */
	/* the pool (pool.c): lent descriptors, FIFO, and its threads' wake-up */
	struct asx__rx_link work;	/* struct rx_fd, by ->work */
	struct asx_cond work_cond;
	struct asx__rx_pool *pool;	/* NULL: every callback on the dispatcher */
	bool pool_stop;
};

/*
 * Lock held: take a job one thread at a time does (*@busy: the timers,
 * the notifications), or, when another thread holds it, ask that one to
 * look again (*@again) and say false.
 */
static inline bool asx__rx_solo(bool *busy, bool *again)
{
	if (*busy) {
		*again = true;
		return false;
	}
	*busy = true;
	return true;
}

/* Lock held: is the caller one of the dispatching threads? */
static inline bool asx__rx_is_dispatcher(const struct asx_reactor *r)
{
	const struct rx_runner *n;

	for (n = r->runners; n; n = n->next)
		if (asx__rx_self_is(&n->self))
			return true;
	return false;
}

/* reactor.c */
/*
 * Run the callbacks of lent descriptor @fd (generation @gen) for @events
 * on the calling pool thread, then give it back to epoll.  Returns the
 * callbacks run.
 */
int asx__rx_run_lent(struct asx_reactor *r, int fd, uint32_t gen, uint32_t events);
/* Lock held, the pool's threads gone: give every lent descriptor still
 * queued back to epoll, and make every one-shot entry level-triggered. */
void asx__rx_unlend_all(struct asx_reactor *r);

/* timer.c */
int asx__rx_timers_expire(struct asx_reactor *r);
/* Lock held: remove every timer of @eh (or all with NULL); returns how many. */
unsigned int asx__rx_timers_remove(struct asx_reactor *r, struct asx_event_handler *eh);
void asx__rx_timers_free(struct asx_reactor *r);

/* notify.c */
/* Wake the loop (the eventfd); the caller set r->wake_pending. */
void asx__rx_wake(struct asx_reactor *r);
/*
 * Lock held on entry, released on return: run @eh's pending handle_close
 * calls (handler.c), then settle what they leave owed: the unbound queue
 * bindings drained and the ended lifetimes' references put, unlocked.
 */
void asx__rx_unlock_close(struct asx_reactor *r, struct asx_event_handler *eh);
/* The end of a callback that asx__rx_dispatch_begin() began; unlocks. */
void asx__rx_dispatch_end(struct asx_reactor *r, struct asx_event_handler *eh);
int asx__rx_notify_dispatch(struct asx_reactor *r);
/* Lock held: drop the bindings of @eh (NULL: all); returns how many. */
unsigned int asx__rx_mq_remove(struct asx_reactor *r, struct asx_event_handler *eh);
/* Lock held: unlink every queued notification (of @eh, or all) onto @out. */
void asx__rx_notifs_take(struct asx_reactor *r, struct asx_event_handler *eh,
			struct asx__rx_link *out);
/* Lock NOT held: free a list filled by asx__rx_notifs_take(); returns how many. */
int asx__rx_notifs_free(struct asx__rx_link *list);

#endif /* ASX_REACTOR_IMPL_H */
