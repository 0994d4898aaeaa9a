// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stream.c - Stream, Module and Task: delivery, service threads, the head,
 * the built-in tails, and reconfiguration under RCU.
 *
 * Locking.  s->cfg serialises reconfiguration and guards the up/down list
 * of Modules.  The put path takes no lock of ours: it follows task->next
 * pointers inside an RCU read-side section.  A Module is unlinked, then a
 * grace period passes, then it is stopped and closed (see asx/stream.h).
 * A replacing Module is held (HELD_*) until the old one has drained, so
 * the order holds across a replace.  asx__stream_quiesce() (the mux's
 * unlink) walks the path and meets each Task's service threads at a
 * marker, so that what was inside the stream has left it.
 *
 * One file past the ~900 lines the rest of lib/src keeps to, on purpose:
 * the held-Task protocol (HELD_*, held_users, the catch-up lock) is read
 * by delivery and by the service threads and written by reconfiguration,
 * and its invariants are argued across the three; split, they would share
 * struct asx_task's insides and that protocol through a header.  What is
 * not part of it lives elsewhere: the Multiplexor (mux.c), the map
 * (map.c), RCU (rcu.c), the built-in Modules (modules.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/stream.h>
#include <asx/sync.h>
#include <asx/thread.h>

#include "asc/wait.h"
#include "core/compiler.h"
#include "core/futex.h"
#include "core/probes.h"
#include "msg/msgq_impl.h"
#include "stream/rcu.h"
#include "stream/stream_impl.h"
#include "core/opts.h"

struct asx_task {
	struct asx_task *next;		/* RCU: next Task in this direction */
	const struct asx_task_ops *ops;	/* never NULL */
	struct asx_module *mod;
	struct asx_msgq *q;
	void *priv;
	struct asx_msg *stop_msg;	/* the "no more messages" marker, atomic */
	int nthreads;			/* service threads started, atomic */
	int group;			/* thread-manager group, -1: none yet */
	uint32_t held;			/* atomic, futex word: HELD_* */
	uint32_t held_users;		/* atomic: deliveries queueing while held */
	struct asx_mutex catchup;	/* HELD_CATCHUP: one thread catches up */
	struct asx_msg *bar_msg;	/* atomic: the quiesce marker, while queued */
	uint32_t bar_in;		/* atomic: service threads parked at it */
	uint32_t bar_gen;		/* atomic, futex word: bumped to let them go */
	asx__task_admit_fn *admit;	/* set before it is linked, or NULL */
	char side;			/* 'w' or 'r' */
};

/*
 * A Task that replaces another one is "held" until the old one has passed
 * on everything it had (asx_stream_replace), so that nothing overtakes
 * those older messages.  While held, every message for it goes on its
 * queue and its service threads wait in getq:
 *   HELD_FORCE    while the replace waits for its grace period: queued
 *                 even when full (a put waiting there, or anything it
 *                 backs up, would hold the grace period up for good);
 *   HELD_PACED    while the old Task drains (no grace period is waited
 *                 for then): queued without waiting up to HELD_SLACK
 *                 times the high water mark (enough for the old Task's
 *                 queue to drain meanwhile, usually); beyond that a put
 *                 queues anyway and then waits (outside its section) at
 *                 most HELD_PACE_NS for room, so writers slow down
 *                 rather than fill memory, and the old
 *                 Task's own draining, which may come back into this one
 *                 (loop-back, replies), still moves;
 *   HELD_CATCHUP  being released (message-based Tasks): whoever delivers
 *                 to it takes the catchup lock, under which the release
 *                 runs put() on what was queued, in order.
 * A suspended Module (asx_stream_suspend) holds its messages the same way:
 *   HELD_SUSPEND  queued with flow control: a put into a full queue waits
 *                 for room (its deadline) outside its read section (see
 *                 DELIVER_AGAIN), so it holds no grace period up while
 *                 the Module stays suspended; during a reconfiguration
 *                 of its Stream it is paced as HELD_PACED; resume
 *                 releases the Tasks as above.
 * held_users counts deliveries between reading the state and queueing, so
 * that the release knows when the last of them has queued.
 */
enum { HELD_NO = 0, HELD_FORCE, HELD_PACED, HELD_CATCHUP, HELD_SUSPEND };
#define HELD_SLACK	8
#define HELD_PACE_NS	(1000 * 1000ULL)
/*
 * No wait starts inside a read-side section (Documentation/
 * architecture.rst, "No wait inside a read-side section"): a delivery that
 * finds the next Task's queue full pins that Task's Module and either
 *  - from the outermost section, returns DELIVER_AGAIN: the outermost
 *    asx_task_put_next() leaves its section, waits for room outside,
 *    unpins, enters again and looks up the next Task anew (the message
 *    still its caller's); or
 *  - nested inside a put() (whose Module the section keeps alive, so it
 *    cannot leave), on a pthread or an ASC user thread alike, queues the
 *    message anyway and owes the wait: the outermost asx_task_put_next()
 *    waits for room after it left, before it returns.  At most one
 *    message per nested delivery past the high water mark, and the writer
 *    is held back as before.  No exception: a grace period nobody
 *    announces (the application's own, through liburcu) ends too.
 * The wait itself is asx__msgq_wait_room(), outside any section, so it
 * parks an ASC user thread and holds no grace period up.  A pin keeps the
 * Module (and its queue) from being freed meanwhile: asx_module_destroy()
 * wakes the waiters (deactivates the queues) and waits for the pins to go.
 * The per-thread records (owed, gave_way) are safe on a user thread: a
 * section never spans a switch, and they are read and cleared right after
 * the section, before the wait (which may resume on another VP).
 */
#define DELIVER_AGAIN		1
#define WAIT_LEAVE		1u	/* full_in_reader() may say DELIVER_AGAIN */
static __thread bool gave_way;		/* DELIVER_AGAIN is ours, not a put()'s */
static __thread struct {
	struct asx_module *mod;		/* pinned, NULL: nothing owed */
	struct asx_msgq *q;
	uint64_t max_ns;		/* wait at most this long, 0: to the deadline */
} owed;

struct asx_module {
	struct asx_task wr, rd;
	struct asx_module *up, *down;	/* s->cfg */
	struct asx_stream *stream;
	void *arg;
	void (*dtor)(void *arg);
	bool suspended;			/* s->cfg once linked: holds its messages */
	uint32_t pins;			/* atomic, word: room waits outside a section */
	char name[ASX_MODULE_NAME_MAX];
};

struct asx_stream {
	struct asx_mutex cfg;
	uint32_t cfg_busy;		/* atomic: cfg is held */
	struct asx_module *head, *tail;
	struct asx_thr_mgr *mgr;
	int groups;			/* next thread group, atomic */
	uint64_t sunk;			/* sink tail, atomic */
	struct asx_asc *asc;		/* asx_task_activate()'s threads, or NULL */
	const struct asx_qos *asc_qos;
	asx__stream_upcall_fn *upcall;	/* atomic */
	void *upcall_arg;		/* atomic */
	uint32_t claimed;		/* atomic: linked under a mux (asx__stream_claim) */
};

static const struct asx_task_ops pass_ops;
static void release_held(struct asx_task *t);

/*
 * Reconfiguration runs with s->cfg held and waits for messages to move (a
 * release's catch-up, a retired Task's leftovers, its service threads'
 * last puts): into a suspended Module's full queue those are queued
 * without waiting for long, since the resume that would make room needs
 * s->cfg (see enqueue_suspended).  s->cfg_busy says that s->cfg is held.
 */
static __thread int cfg_held;		/* this thread holds some s->cfg */

static void cfg_lock(struct asx_stream *s)
{
	asx_mutex_lock(&s->cfg);
	__atomic_add_fetch(&s->cfg_busy, 1, __ATOMIC_SEQ_CST);
	cfg_held++;
}

static void cfg_unlock(struct asx_stream *s)
{
	cfg_held--;
	__atomic_sub_fetch(&s->cfg_busy, 1, __ATOMIC_RELEASE);
	asx_mutex_unlock(&s->cfg);
}

/* ---------------------------------------------------------------- delivery */

static int call_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	int r;

	ASX_PROBE3(stream_put_entry, t, t->mod->name, m);
	if (t->ops->put)
		r = t->ops->put(t, m, dl);
	else
		r = asx_task_put_next(t, m, dl);
	ASX_PROBE3(stream_put_exit, t, t->mod->name, r);
	return r;
}

/* A FLUSH clears the queue of each Task of its side that it reaches. */
static void flush_on_way(struct asx_task *t, const struct asx_msg *m)
{
	size_t len = asx_msg_block_len(m);
	unsigned int f = len ? m->rd[0] : 0;

	if (!(f & (t->side == 'w' ? ASX_STREAM_FLUSHW : ASX_STREAM_FLUSHR)))
		return;
	if (f & ASX_STREAM_FLUSHBAND)
		asx_msgq_flush_band(t->q, len > 1 ? m->rd[1] : 0);
	else
		asx_msgq_flush(t->q);
}

/* put() on what a message-based Task held, in order (its catchup lock held). */
static void catch_up(struct asx_task *t)
{
	struct asx_msg *m;

	while (asx_msgq_dequeue(t->q, &m, ASX_MSGQ_NOWAIT, NULL) == 0)
		if (call_put(t, m, NULL))
			asx_msg_free_chain(m);	/* nobody downstream takes it any more */
}

static bool is_held(uint32_t h)
{
	return h == HELD_FORCE || h == HELD_PACED;
}

/* @r from queueing a message on @t: the probe says so when it went in. */
static int queued(struct asx_task *t, int r)
{
	if (r == 0)
		ASX_PROBE4(stream_enqueue, t, t->mod->name, t->side, asx_msgq_bytes(t->q));
	return r;
}

/*
 * Pin @n's Module and owe a wait for room in @n's queue (see DELIVER_AGAIN),
 * at most @max_ns (0: up to the put's deadline).  One wait is owed at a
 * time: a second full queue met in the same put is only queued into.
 */
static void owe_room(struct asx_task *n, uint64_t max_ns)
{
	if (owed.mod)
		return;
	__atomic_add_fetch(&n->mod->pins, 1, __ATOMIC_ACQ_REL);
	owed.mod = n->mod;
	owed.q = n->q;
	owed.max_ns = max_ns;
}

/*
 * Outside any section: wait for the room owed (up to @dl or the owed
 * bound), then unpin.  The result of the wait: 0 (room), -ETIMEDOUT,
 * -ESHUTDOWN, -EINTR; the caller looks again in any case.
 */
static int pay_owed(const struct timespec *dl, bool again)
{
	struct asx_module *mod = owed.mod;
	struct asx_msgq *q = owed.q;
	struct timespec lim;
	const struct timespec *until = dl;
	int r;

	/* cleared before the wait, which may switch VPs (see DELIVER_AGAIN) */
	owed.mod = NULL;
	if (owed.max_ns) {
		asx_deadline(&lim, owed.max_ns);
		if (!dl || asx_timespec_ns(&lim) < asx_timespec_ns(dl))
			until = &lim;
	}
	r = asx__msgq_wait_room(q, until, again);
	if (__atomic_sub_fetch(&mod->pins, 1, __ATOMIC_ACQ_REL) == 0)
		asx__word_wake(&mod->pins, INT_MAX);
	return r;
}

/*
 * @n's queue was found full inside a read section (@how WAIT_LEAVE: the
 * caller may be the outermost put_next's delivery): leave and wait outside;
 * nested (where no wait may start), queue anyway and owe the wait; a
 * deadline already past is -ETIMEDOUT, the message still the caller's.
 * @max_ns: a paced wait (a held or suspended Task under reconfiguration),
 * queued anyway.
 */
static int full_in_reader(struct asx_task *n, struct asx_msg *m, const struct timespec *dl,
			  uint64_t max_ns, unsigned int how)
{
	if ((how & WAIT_LEAVE) && asx__rcu_outermost() && !owed.mod) {
		owe_room(n, max_ns);
		gave_way = true;
		return DELIVER_AGAIN;
	}
	if (!max_ns && dl && asx_timespec_ns(dl) <= asx_now_ns())
		return -ETIMEDOUT;
	owe_room(n, max_ns);
	return queued(n, asx_msgq_enqueue(n->q, m, ASX_MSGQ_FORCE, NULL));
}

/*
 * Queue @m on suspended @n (see HELD_SUSPEND), but not for long while its
 * Stream is being reconfigured: up to HELD_SLACK times the high water mark
 * it queues at once, beyond that with a wait of HELD_PACE_NS owed, as a
 * held Task does; and at once from the reconfiguring thread itself (a
 * catch-up into a suspended Module: what it passes on was held, so
 * bounded, by the Task it releases).  Otherwise a full queue is waited on
 * outside the section until the resume drains it.
 */
static int enqueue_suspended(struct asx_task *n, struct asx_msg *m, const struct timespec *dl,
			     unsigned int how)
{
	struct asx_stream *s = n->mod->stream;
	bool busy = s && ASX_LOAD_ACQ(&s->cfg_busy);
	int r;

	if (busy && (cfg_held || asx_msgq_bytes(n->q) < HELD_SLACK * asx_msgq_hiwat(n->q)))
		return asx_msgq_enqueue(n->q, m, ASX_MSGQ_FORCE, NULL);
	r = asx_msgq_enqueue(n->q, m, ASX_MSGQ_NOWAIT, NULL);
	if (r != -EWOULDBLOCK)
		return r;
	return full_in_reader(n, m, dl, busy ? HELD_PACE_NS : 0, busy ? 0 : how);
}

static int deliver_held(struct asx_task *n, struct asx_msg *m, const struct timespec *dl,
			unsigned int how)
{
	uint32_t h;
	int r;

again:
	__atomic_add_fetch(&n->held_users, 1, __ATOMIC_SEQ_CST);
	h = __atomic_load_n(&n->held, __ATOMIC_SEQ_CST);
	if (h == HELD_SUSPEND) {
		r = enqueue_suspended(n, m, dl, how);
		__atomic_sub_fetch(&n->held_users, 1, __ATOMIC_RELEASE);
		return r == DELIVER_AGAIN ? r : queued(n, r);
	}
	if (is_held(h)) {
		if (h == HELD_FORCE ||
		    asx_msgq_bytes(n->q) < HELD_SLACK * asx_msgq_hiwat(n->q)) {
			r = asx_msgq_enqueue(n->q, m, ASX_MSGQ_FORCE, NULL);
		} else {
			/* queued anyway: the writer slows down by a pace */
			r = asx_msgq_enqueue(n->q, m, ASX_MSGQ_FORCE, NULL);
			if (r == 0)
				owe_room(n, HELD_PACE_NS);
		}
		__atomic_sub_fetch(&n->held_users, 1, __ATOMIC_RELEASE);
		return queued(n, r);
	}
	__atomic_sub_fetch(&n->held_users, 1, __ATOMIC_RELEASE);
	if (h == HELD_NO) {
		/* released meanwhile */
		if (ASX_LOAD_ACQ(&n->nthreads) > 0) {
			r = asx_msgq_enqueue(n->q, m, ASX_MSGQ_NOWAIT, NULL);
			return r == -EWOULDBLOCK ? full_in_reader(n, m, dl, 0, how)
						 : queued(n, r);
		}
		return call_put(n, m, dl);
	}
	/*
	 * HELD_CATCHUP when read: the release holds the lock until it is done.
	 * Under the lock, the state is HELD_NO again, or HELD_SUSPEND if the
	 * Module was suspended since (set_suspended takes the lock too): then
	 * this message is held with the rest, not put through a catch-up.
	 */
	asx_mutex_lock(&n->catchup);
	if (__atomic_load_n(&n->held, __ATOMIC_SEQ_CST) == HELD_SUSPEND) {
		asx_mutex_unlock(&n->catchup);
		goto again;
	}
	catch_up(n);
	r = call_put(n, m, dl);
	asx_mutex_unlock(&n->catchup);
	return r;
}

static int deliver(struct asx_task *n, struct asx_msg *m, const struct timespec *dl)
{
	int r;

	if (unlikely(m->type == ASX_MSG_FLUSH))
		flush_on_way(n, m);
	if (unlikely(n->admit) && (r = n->admit(n, m)))
		return r;
	if (unlikely(ASX_LOAD_ACQ(&n->held)))
		return deliver_held(n, m, dl, WAIT_LEAVE);
	if (ASX_LOAD_ACQ(&n->nthreads) > 0) {
		r = asx_msgq_enqueue(n->q, m, ASX_MSGQ_NOWAIT, NULL);
		return r == -EWOULDBLOCK ? full_in_reader(n, m, dl, 0, WAIT_LEAVE)
					 : queued(n, r);
	}
	return call_put(n, m, dl);
}

int asx_task_put_next(struct asx_task *t, struct asx_msg *m, const struct timespec *deadline)
{
	struct asx_task *n;
	bool again = false, redo;
	int r, w;

	if (unlikely(!t || !m))
		return -EINVAL;
	for (;; again = true) {
		asx__rcu_read_lock();
		n = asx__rcu_deref(t->next);
		r = n ? deliver(n, m, deadline) : -EPIPE;
		asx__rcu_read_unlock();
		if (likely(!owed.mod) || asx__rcu_in_reader())
			return r;
		/* read the thread's records before the wait: a user thread
		 * may come back on another VP (other thread-local storage) */
		redo = r == DELIVER_AGAIN && gave_way;
		gave_way = false;
		w = pay_owed(deadline, again);
		if (!redo)
			return r;	/* delivered: the wait was the writer's pace */
		/* @m is still the caller's, @t too; what follows @t is looked
		 * up again */
		if (w == -ETIMEDOUT && deadline && asx_timespec_ns(deadline) <= asx_now_ns())
			return -ETIMEDOUT;
	}
}

int asx_task_reply(struct asx_task *t, struct asx_msg *m, const struct timespec *deadline)
{
	if (unlikely(!t))
		return -EINVAL;
	return asx_task_put_next(asx_task_sibling(t), m, deadline);
}

/* putq, which from the head's put() (@how WAIT_LEAVE) may say DELIVER_AGAIN */
static int putq(struct asx_task *t, struct asx_msg *m, const struct timespec *dl,
		unsigned int how)
{
	int r;

	if (!asx__rcu_in_reader())
		return queued(t, asx_msgq_enqueue(t->q, m, 0, dl));
	r = asx_msgq_enqueue(t->q, m, ASX_MSGQ_NOWAIT, NULL);
	return r == -EWOULDBLOCK ? full_in_reader(t, m, dl, 0, how) : queued(t, r);
}

int asx_task_putq(struct asx_task *t, struct asx_msg *m, const struct timespec *deadline)
{
	if (unlikely(!t || !m))
		return -EINVAL;
	return putq(t, m, deadline, 0);
}

int asx_task_ungetq(struct asx_task *t, struct asx_msg *m)
{
	if (unlikely(!t || !m))
		return -EINVAL;
	return queued(t, asx_msgq_enqueue(t->q, m, ASX_MSGQ_HEAD | ASX_MSGQ_FORCE, NULL));
}

/*
 * A service thread took the quiesce marker @m: every message queued before
 * it has been taken, and this thread is done with the one it took before.
 * Hand the marker back to quiesce_task() and wait until it lets the
 * threads go.  False if the marker was not ours to take after all.
 */
static bool park_at_marker(struct asx_task *t, struct asx_msg *m)
{
	uint32_t gen = ASX_LOAD_ACQ(&t->bar_gen);

	if (!__atomic_compare_exchange_n(&t->bar_msg, &m, NULL, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return false;
	__atomic_add_fetch(&t->bar_in, 1, __ATOMIC_ACQ_REL);
	while (ASX_LOAD_ACQ(&t->bar_gen) == gen)
		asx__word_wait(&t->bar_gen, gen, NULL);
	return true;
}

int asx_task_getq(struct asx_task *t, struct asx_msg **mp, const struct timespec *deadline)
{
	struct asx_msg *m, *stop;
	int r;

	if (unlikely(!t || !mp))
		return -EINVAL;
	for (;;) {
		uint32_t h = ASX_LOAD_ACQ(&t->held);

		if (unlikely(is_held(h) || h == HELD_SUSPEND)) {
			/* replacing another Task (wait until it has drained)
			 * or suspended (until resumed) */
			if (asx__word_wait(&t->held, h, deadline) == -ETIMEDOUT)
				return -ETIMEDOUT;
			continue;
		}
		r = asx_msgq_dequeue(t->q, &m, 0, deadline);
		if (r == -EINTR)
			continue;
		if (r)
			return r;
		if (unlikely(m == ASX_LOAD_ACQ(&t->bar_msg)) && park_at_marker(t, m))
			continue;
		stop = ASX_LOAD_ACQ(&t->stop_msg);
		if (unlikely(m == stop)) {
			/* Everything queued before the marker has been taken:
			 * let every service thread of this Task go. */
			asx_msgq_deactivate(t->q);
			if (__atomic_compare_exchange_n(&t->stop_msg, &stop, NULL, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				asx_msg_free(m);
			return -ESHUTDOWN;
		}
		if (unlikely(ASX_LOAD_ACQ(&t->held) == HELD_SUSPEND)) {
			/* suspended while this thread waited in the queue:
			 * the message goes back, first, and the thread waits */
			if (asx_msgq_enqueue(t->q, m, ASX_MSGQ_HEAD | ASX_MSGQ_FORCE, NULL) == 0)
				continue;
		}
		ASX_PROBE4(stream_dequeue, t, t->mod->name, t->side, asx_msgq_bytes(t->q));
		*mp = m;
		return 0;
	}
}

bool asx_task_canput_next(struct asx_task *t)
{
	struct asx_task *n;
	bool ok = true;

	if (!t)
		return false;
	asx__rcu_read_lock();
	for (n = asx__rcu_deref(t->next); n; n = asx__rcu_deref(n->next)) {
		struct asx_task *after = asx__rcu_deref(n->next);

		if (ASX_LOAD_ACQ(&n->nthreads) > 0 || !after ||
		    ASX_LOAD_ACQ(&n->held) == HELD_SUSPEND) {
			ok = !asx_msgq_is_full(n->q);
			break;
		}
	}
	asx__rcu_read_unlock();
	return ok;
}

/* ---------------------------------------------------------------- service threads */

static int default_svc(struct asx_task *t)
{
	struct asx_msg *m;
	int r;

	for (;;) {
		r = asx_task_getq(t, &m, NULL);
		if (r == -ESHUTDOWN)
			return 0;
		if (r)
			return r;
		if (call_put(t, m, NULL))
			asx_msg_free_chain(m);	/* nobody downstream takes it any more */
	}
}

static void *svc_main(void *arg)
{
	struct asx_task *t = arg;
	int r;

	ASX_PROBE2(stream_svc_entry, t, t->mod->name);
	r = t->ops->svc ? t->ops->svc(t) : default_svc(t);
	ASX_PROBE3(stream_svc_exit, t, t->mod->name, r);
	return (void *)(intptr_t)r;
}

int asx_task_activate(struct asx_task *t, int n)
{
	struct asx_stream *s = t ? t->mod->stream : NULL;

	return asx_task_activate_asc(t, n, s ? s->asc : NULL, s ? s->asc_qos : NULL);
}

int asx_task_activate_asc(struct asx_task *t, int n, struct asx_asc *asc,
			  const struct asx_qos *qos)
{
	struct asx_thr_opts o = { .sz = sizeof(o), .asc = asc, .qos = qos };
	struct asx_stream *s;
	int r;

	if (!t || n <= 0 || !(s = t->mod->stream))
		return -EINVAL;
	if (t->group < 0)
		t->group = __atomic_fetch_add(&s->groups, 1, __ATOMIC_RELAXED);
	/* Count first: delivery must queue for these threads from now on. */
	__atomic_fetch_add(&t->nthreads, n, __ATOMIC_ACQ_REL);
	r = asx_thr_mgr_spawn_n(s->mgr, n, svc_main, t, t->group, &o);
	if (r < 0) {
		int started = asx_thr_mgr_count_group(s->mgr, t->group);

		/* threads that did start stay counted; the rest are not */
		__atomic_store_n(&t->nthreads, started > 0 ? started : 0, __ATOMIC_RELEASE);
		return r;
	}
	return 0;
}

int asx_task_threads(const struct asx_task *t)
{
	return t ? ASX_LOAD_ACQ(&t->nthreads) : 0;
}

enum stop_mode { STOP_DRAIN, STOP_DISCARD };

/*
 * Stop @t (already unreachable, or the stream is closing): its service
 * threads take what is queued and return, then whatever is left is passed
 * on (DRAIN) or left for asx_module_destroy() to free (DISCARD).
 */
static void stop_task(struct asx_stream *s, struct asx_task *t, enum stop_mode mode)
{
	bool was_active = asx_msgq_is_active(t->q);
	struct asx_msg *m, *stop;

	if (mode == STOP_DRAIN && ASX_LOAD_ACQ(&t->held) == HELD_SUSPEND) {
		/* what it held goes through it, as if it had been resumed */
		t->mod->suspended = false;
		release_held(t);
	}
	if (ASX_LOAD_ACQ(&t->held)) {
		ASX_STORE_REL(&t->held, HELD_NO);
		asx__word_wake(&t->held, INT_MAX);
	}
	if (ASX_LOAD_ACQ(&t->nthreads) > 0) {
		stop = asx_msg_alloc(0, ASX_MSG_DATA);
		if (stop) {
			ASX_STORE_REL(&t->stop_msg, stop);
			if (asx_msgq_enqueue(t->q, stop, ASX_MSGQ_TAIL | ASX_MSGQ_FORCE, NULL)) {
				ASX_STORE_REL(&t->stop_msg, NULL);
				asx_msg_free(stop);
				asx_msgq_deactivate(t->q);
			}
		} else {
			/* no memory for the marker: messages still queued
			 * are passed on unprocessed below */
			asx_msgq_deactivate(t->q);
		}
		asx_thr_mgr_wait_group(s->mgr, t->group, NULL, 0, NULL);
		ASX_STORE_REL(&t->nthreads, 0);
		if (mode == STOP_DRAIN && was_active)
			asx_msgq_activate(t->q);
	}
	stop = __atomic_exchange_n(&t->stop_msg, NULL, __ATOMIC_ACQ_REL);
	if (mode != STOP_DRAIN || !asx_msgq_is_active(t->q)) {
		if (stop)
			asx_msgq_flush(t->q);	/* the marker with it */
		return;
	}
	while (asx_msgq_dequeue(t->q, &m, ASX_MSGQ_NOWAIT, NULL) == 0) {
		if (m == stop) {
			asx_msg_free(m);
			stop = NULL;
			continue;
		}
		if (asx_task_put_next(t, m, NULL))
			asx_msg_free_chain(m);
	}
	if (stop)
		asx_msg_free(stop);	/* never reached the queue's head: cannot happen */
}

/*
 * Wait until @t's service threads have handed on every message queued on
 * @t now: a marker goes at the tail of the queue, and each thread that
 * takes it parks (so it is done with what it took before); the marker is
 * queued again until every live thread is parked, then they all go on.
 */
static void quiesce_task(struct asx_stream *s, struct asx_task *t)
{
	struct asx_msg *mk = asx_msg_alloc(0, ASX_MSG_DATA);
	unsigned int pause = 20;
	int live;

	/* a suspended Task's threads take nothing: what it holds stays in it */
	if (!mk || ASX_LOAD_ACQ(&t->nthreads) <= 0 || ASX_LOAD_ACQ(&t->held) == HELD_SUSPEND) {
		asx_msg_free(mk);
		return;
	}
	for (;;) {
		live = asx_thr_mgr_count_group(s->mgr, t->group);
		if (live <= 0 || (int)ASX_LOAD_ACQ(&t->bar_in) >= live)
			break;
		if (!ASX_LOAD_ACQ(&t->bar_msg)) {
			/* first round, or taken by a thread now parked */
			ASX_STORE_REL(&t->bar_msg, mk);
			if (asx_msgq_enqueue(t->q, mk, ASX_MSGQ_TAIL | ASX_MSGQ_FORCE, NULL)) {
				ASX_STORE_REL(&t->bar_msg, NULL);
				break;		/* shut down: nothing will move */
			}
		}
		usleep(pause);
		if (pause < 1000)
			pause *= 2;
	}
	if (ASX_LOAD_ACQ(&t->bar_msg)) {
		/*
		 * Still queued (a service thread returned meanwhile, or the
		 * queue was shut down): every other thread is parked, so take
		 * it out here, putting the messages ahead of it back in order.
		 */
		struct asx_msg *m, **ahead = NULL, **more;
		size_t n = 0, cap = 0;
		bool found = false;

		ASX_STORE_REL(&t->bar_msg, NULL);
		while (asx_msgq_dequeue(t->q, &m, ASX_MSGQ_NOWAIT, NULL) == 0) {
			if (m == mk) {
				found = true;
				break;
			}
			if (n == cap) {
				more = realloc(ahead, (cap ? 2 * cap : 64) * sizeof(*ahead));
				if (!more) {
					/* no memory: it goes on ahead of the rest */
					if (asx_task_put_next(t, m, NULL))
						asx_msg_free_chain(m);
					continue;
				}
				ahead = more;
				cap = cap ? 2 * cap : 64;
			}
			ahead[n++] = m;
		}
		while (n--)
			if (asx_msgq_enqueue(t->q, ahead[n], ASX_MSGQ_HEAD | ASX_MSGQ_FORCE, NULL))
				asx_msg_free_chain(ahead[n]);	/* shut down: freed as on close */
		free(ahead);
		if (!found)
			mk = NULL;	/* the queue was shut down with it: freed with the queue */
	}
	asx_msg_free(mk);
	ASX_STORE_REL(&t->bar_in, 0);
	__atomic_add_fetch(&t->bar_gen, 1, __ATOMIC_ACQ_REL);
	asx__word_wake(&t->bar_gen, INT_MAX);
}

int asx__stream_quiesce(struct asx_stream *s)
{
	struct asx_module *mod;

	if (asx__rcu_in_reader())
		return -EDEADLK;
	cfg_lock(s);
	/* every walk already started has queued its message or delivered it */
	(void)asx__rcu_synchronize();
	/* then along the path: down the write side, up the read side */
	for (mod = s->head; mod; mod = mod->down)
		quiesce_task(s, &mod->wr);
	for (mod = s->tail; mod; mod = mod->up)
		quiesce_task(s, &mod->rd);
	cfg_unlock(s);
	return 0;
}

/* ---------------------------------------------------------------- modules */

static int task_init(struct asx_task *t, struct asx_module *mod, const struct asx_task_ops *ops,
		     char side)
{
	t->ops = ops ? ops : &pass_ops;
	t->mod = mod;
	t->group = -1;
	t->side = side;
	asx_mutex_init(&t->catchup);
	return asx_msgq_create(&t->q, 0, 0);
}

int asx_module_create(struct asx_module **out, const char *name, const struct asx_task_ops *wr,
		      const struct asx_task_ops *rd, void *arg)
{
	struct asx_module *mod;
	size_t len;
	int r;

	if (!out || !name || !(len = strlen(name)) || len >= ASX_MODULE_NAME_MAX)
		return -EINVAL;
	mod = calloc(1, sizeof(*mod));
	if (!mod)
		return -ENOMEM;
	memcpy(mod->name, name, len + 1);
	mod->arg = arg;
	r = task_init(&mod->wr, mod, wr, 'w');
	if (!r)
		r = task_init(&mod->rd, mod, rd, 'r');
	if (r) {
		asx_msgq_destroy(mod->wr.q);
		asx_msgq_destroy(mod->rd.q);
		asx_mutex_destroy(&mod->wr.catchup);
		asx_mutex_destroy(&mod->rd.catchup);
		free(mod);
		return r;
	}
	*out = mod;
	return 0;
}

/* Wake the room waits pinning @mod (see DELIVER_AGAIN) and wait them out. */
static void unpin_all(struct asx_module *mod)
{
	uint32_t p = ASX_LOAD_ACQ(&mod->pins);

	if (!p)
		return;
	asx_msgq_deactivate(mod->wr.q);
	asx_msgq_deactivate(mod->rd.q);
	while ((p = ASX_LOAD_ACQ(&mod->pins)))
		asx__word_wait(&mod->pins, p, NULL);
}

void asx_module_destroy(struct asx_module *mod)
{
	if (!mod || mod->stream)
		return;
	unpin_all(mod);
	asx_msgq_destroy(mod->wr.q);
	asx_msgq_destroy(mod->rd.q);
	asx_mutex_destroy(&mod->wr.catchup);
	asx_mutex_destroy(&mod->rd.catchup);
	if (mod->dtor)
		mod->dtor(mod->arg);
	free(mod);
}

void asx_module_set_dtor(struct asx_module *mod, void (*dtor)(void *arg))
{
	if (mod)
		mod->dtor = dtor;
}

const char *asx_module_name(const struct asx_module *mod) { return mod ? mod->name : NULL; }
void *asx_module_arg(const struct asx_module *mod) { return mod ? mod->arg : NULL; }
struct asx_task *asx_module_wr(struct asx_module *mod) { return mod ? &mod->wr : NULL; }
struct asx_task *asx_module_rd(struct asx_module *mod) { return mod ? &mod->rd : NULL; }

struct asx_module *asx_task_module(const struct asx_task *t) { return t ? t->mod : NULL; }
struct asx_stream *asx_task_stream(const struct asx_task *t) { return t ? t->mod->stream : NULL; }
bool asx_task_is_wr(const struct asx_task *t) { return t && t->side == 'w'; }
void *asx_task_priv(const struct asx_task *t) { return t ? t->priv : NULL; }
void asx_task_set_priv(struct asx_task *t, void *priv) { if (t) t->priv = priv; }
struct asx_msgq *asx_task_queue(struct asx_task *t) { return t ? t->q : NULL; }

struct asx_task *asx_task_sibling(const struct asx_task *t)
{
	if (!t)
		return NULL;
	return t->side == 'w' ? &t->mod->rd : &t->mod->wr;
}

int asx_task_set_water(struct asx_task *t, size_t hiwat, size_t lowat)
{
	return t ? asx_msgq_set_water(t->q, hiwat, lowat) : -EINVAL;
}

static void close_task(struct asx_task *t, unsigned int flags)
{
	if (t->ops->close)
		t->ops->close(t, flags);
}

/* open() both Tasks of @mod (mod->stream set).  On failure nothing is left running. */
static int open_module(struct asx_stream *s, struct asx_module *mod, int argc, char **argv)
{
	int r = 0;

	if (mod->wr.ops->open)
		r = mod->wr.ops->open(&mod->wr, argc, argv);
	if (r)
		goto err_wr;
	if (mod->rd.ops->open)
		r = mod->rd.ops->open(&mod->rd, argc, argv);
	if (r)
		goto err_rd;
	return 0;

err_rd:
	stop_task(s, &mod->rd, STOP_DISCARD);
	stop_task(s, &mod->wr, STOP_DISCARD);
	close_task(&mod->wr, ASX_TASK_CLOSE_REMOVED);
	return r;
err_wr:
	stop_task(s, &mod->wr, STOP_DISCARD);
	return r;
}

/* Stop and close an unlinked Module after a grace period, then free it. */
static void retire_module(struct asx_stream *s, struct asx_module *mod)
{
	stop_task(s, &mod->wr, STOP_DRAIN);
	stop_task(s, &mod->rd, STOP_DRAIN);
	close_task(&mod->wr, ASX_TASK_CLOSE_REMOVED);
	close_task(&mod->rd, ASX_TASK_CLOSE_REMOVED);
	mod->stream = NULL;
	asx_module_destroy(mod);
}

/* ---------------------------------------------------------------- head and tails */

static int head_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct asx_stream *s = t->mod->stream;
	asx__stream_upcall_fn *up;

	if (m->type == ASX_MSG_FLUSH) {
		/* our queue was flushed on the way in (ASX_STREAM_FLUSHR) */
		if (asx_msg_block_len(m) && (m->rd[0] & ASX_STREAM_FLUSHW)) {
			m->rd[0] &= (unsigned char)~ASX_STREAM_FLUSHR;
			if (asx_task_reply(t, m, dl) == 0)
				return 0;
		}
		asx_msg_free_chain(m);
		return 0;
	}
	up = ASX_LOAD_ACQ(&s->upcall);
	if (up)
		return up(ASX_LOAD_ACQ(&s->upcall_arg), s, m, dl);
	/*
	 * The head is never held (no catch-up calls this put) and has no
	 * service threads: from the outermost read section @m is that
	 * asx_task_put_next()'s, which delivers it again on DELIVER_AGAIN.
	 */
	return putq(t, m, dl, WAIT_LEAVE);
}

static const struct asx_task_ops head_rd_ops = { .put = head_rd_put };

/* The tail's handling of a FLUSH: turn it up when it asks for ASX_STREAM_FLUSHR. */
static int tail_flush(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	if (asx_msg_block_len(m) && (m->rd[0] & ASX_STREAM_FLUSHR)) {
		m->rd[0] &= (unsigned char)~ASX_STREAM_FLUSHW;
		if (asx_task_reply(t, m, dl) == 0)
			return 0;
	}
	asx_msg_free_chain(m);
	return 0;
}

static int loop_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	if (m->type == ASX_MSG_FLUSH)
		return tail_flush(t, m, dl);
	return asx_task_reply(t, m, dl);
}

static int sink_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	if (m->type == ASX_MSG_FLUSH)
		return tail_flush(t, m, dl);
	asx_msg_free_chain(m);
	__atomic_fetch_add(&t->mod->stream->sunk, 1, __ATOMIC_RELAXED);
	return 0;
}

const struct asx_task_ops asx__loop_wr_ops = { .put = loop_wr_put };
static const struct asx_task_ops sink_wr_ops = { .put = sink_wr_put };

/* ---------------------------------------------------------------- streams */

static int check_opts(const struct asx_stream_opts *in, struct asx_stream_opts *out)
{
	return ASX__OPTS_COPY(out, in);
}

int asx_stream_open(struct asx_stream **sp, const struct asx_stream_opts *opts)
{
	struct asx_stream_opts o;
	struct asx_stream *s;
	struct asx_module *tail;
	int r;

	if (!sp)
		return -EINVAL;
	r = check_opts(opts, &o);
	if (r)
		return r;
	if ((o.tail == ASX_STREAM_DRIVER) != (o.driver != NULL) ||
	    (unsigned int)o.tail > ASX_STREAM_DRIVER || (o.driver && o.driver->stream))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->asc = o.asc;
	s->asc_qos = o.asc_qos;
	asx_mutex_init(&s->cfg);
	r = asx_thr_mgr_create(&s->mgr);
	if (r)
		goto err_free;
	r = asx_module_create(&s->head, "head", NULL, &head_rd_ops, NULL);
	if (r)
		goto err_mgr;
	if ((o.head_hiwat || o.head_lowat) &&
	    (r = asx_msgq_set_water(s->head->rd.q, o.head_hiwat, o.head_lowat)))
		goto err_head;
	if (o.head_hipri_max && (r = asx_msgq_set_hipri_max(s->head->rd.q, o.head_hipri_max)))
		goto err_head;
	switch (o.tail) {
	case ASX_STREAM_LOOP:
		r = asx_module_create(&tail, "loop", &asx__loop_wr_ops, NULL, NULL);
		break;
	case ASX_STREAM_SINK:
		r = asx_module_create(&tail, "sink", &sink_wr_ops, NULL, NULL);
		break;
	default:
		tail = o.driver;
		break;
	}
	if (r)
		goto err_head;
	s->head->stream = s;
	tail->stream = s;
	s->head->down = tail;
	tail->up = s->head;
	/* The driver may feed its read side from open() on. */
	asx__rcu_assign(tail->rd.next, &s->head->rd);
	r = open_module(s, tail, o.argc, o.argv);
	if (r)
		goto err_tail;
	asx__rcu_assign(s->head->wr.next, &tail->wr);
	s->tail = tail;
	*sp = s;
	return 0;

err_tail:
	tail->stream = NULL;
	tail->up = NULL;
	tail->rd.next = NULL;
	if (tail != o.driver)
		asx_module_destroy(tail);
err_head:
	s->head->stream = NULL;
	asx_module_destroy(s->head);
err_mgr:
	asx_thr_mgr_destroy(s->mgr);
err_free:
	free(s);
	return r;
}

void asx_stream_shutdown(struct asx_stream *s)
{
	struct asx_module *mod;

	if (!s)
		return;
	cfg_lock(s);
	for (mod = s->head; mod; mod = mod->down) {
		asx_msgq_deactivate(mod->wr.q);
		asx_msgq_deactivate(mod->rd.q);
	}
	cfg_unlock(s);
}

void asx_stream_close(struct asx_stream *s)
{
	struct asx_module *mod, *down;

	if (!s)
		return;
	asx_stream_shutdown(s);
	cfg_lock(s);
	(void)asx__rcu_synchronize();
	for (mod = s->head; mod; mod = mod->down) {
		stop_task(s, &mod->wr, STOP_DISCARD);
		stop_task(s, &mod->rd, STOP_DISCARD);
	}
	/* The driver first, so that its own threads stop feeding the stream. */
	close_task(&s->tail->wr, ASX_TASK_CLOSE_STREAM);
	close_task(&s->tail->rd, ASX_TASK_CLOSE_STREAM);
	for (mod = s->head; mod != s->tail; mod = mod->down) {
		close_task(&mod->wr, ASX_TASK_CLOSE_STREAM);
		close_task(&mod->rd, ASX_TASK_CLOSE_STREAM);
	}
	(void)asx__rcu_synchronize();
	for (mod = s->head; mod; mod = down) {
		down = mod->down;
		mod->stream = NULL;
		asx_module_destroy(mod);
	}
	cfg_unlock(s);
	asx_thr_mgr_destroy(s->mgr);
	asx_mutex_destroy(&s->cfg);
	free(s);
}

int asx_stream_put(struct asx_stream *s, struct asx_msg *m, unsigned int flags,
		   const struct timespec *deadline)
{
	int r;

	if (unlikely(!s || !m || (flags & ~ASX_STREAM_NOWAIT)))
		return -EINVAL;
	if (flags & ASX_STREAM_NOWAIT)
		deadline = ASX_DEADLINE_NOW;
	r = asx_task_put_next(&s->head->wr, m, deadline);
	if (r == -ETIMEDOUT && (flags & ASX_STREAM_NOWAIT))
		r = -EWOULDBLOCK;
	return r;
}

int asx_stream_get(struct asx_stream *s, struct asx_msg **mp, unsigned int flags,
		   const struct timespec *deadline)
{
	struct asx_task *t;
	int r;

	if (unlikely(!s || !mp || (flags & ~ASX_STREAM_NOWAIT)))
		return -EINVAL;
	t = &s->head->rd;
	do {
		r = asx_msgq_dequeue(t->q, mp, (flags & ASX_STREAM_NOWAIT) ? ASX_MSGQ_NOWAIT : 0,
				     deadline);
	} while (r == -EINTR);
	if (r == 0)
		ASX_PROBE4(stream_dequeue, t, t->mod->name, t->side, asx_msgq_bytes(t->q));
	return r;
}

struct asx_msgq *asx_stream_head_queue(struct asx_stream *s)
{
	return s ? s->head->rd.q : NULL;
}

int asx_stream_flush(struct asx_stream *s, unsigned int flags, uint8_t band)
{
	struct asx_msg *m;
	unsigned char b[2];

	if (!s || !(flags & ASX_STREAM_FLUSHRW) ||
	    (flags & ~(ASX_STREAM_FLUSHRW | ASX_STREAM_FLUSHBAND)))
		return -EINVAL;
	if (flags & ASX_STREAM_FLUSHR) {
		if (flags & ASX_STREAM_FLUSHBAND)
			asx_msgq_flush_band(s->head->rd.q, band);
		else
			asx_msgq_flush(s->head->rd.q);
	}
	if (!(flags & ASX_STREAM_FLUSHW))
		return 0;
	m = asx_msg_alloc(2, ASX_MSG_FLUSH);
	if (!m)
		return -ENOMEM;
	b[0] = (unsigned char)flags;
	b[1] = band;
	asx_msg_append(m, b, 2);
	if (asx_task_put_next(&s->head->wr, m, NULL))
		asx_msg_free_chain(m);
	return 0;
}

/* ---------------------------------------------------------------- reconfiguration */

static struct asx_module *find_locked(struct asx_stream *s, const char *name)
{
	struct asx_module *mod;

	for (mod = s->head; mod; mod = mod->down)
		if (!strcmp(mod->name, name))
			return mod;
	return NULL;
}

/* Link @mod just below @above; @old (or NULL) is taken out in the same step. */
static int link_locked(struct asx_stream *s, struct asx_module *above, struct asx_module *mod,
		       struct asx_module *old, int argc, char **argv)
{
	struct asx_module *below, *same;
	int r;

	if (mod->stream)
		return -EINVAL;
	same = find_locked(s, mod->name);
	if (same && same != old)
		return -EEXIST;
	mod->stream = s;
	if (old) {
		/* before open(): its service threads must not start taking */
		ASX_STORE_REL(&mod->wr.held, HELD_FORCE);
		ASX_STORE_REL(&mod->rd.held, HELD_FORCE);
	} else if (mod->suspended) {
		ASX_STORE_REL(&mod->wr.held, HELD_SUSPEND);
		ASX_STORE_REL(&mod->rd.held, HELD_SUSPEND);
	}
	r = open_module(s, mod, argc, argv);
	if (r) {
		ASX_STORE_REL(&mod->wr.held, HELD_NO);
		ASX_STORE_REL(&mod->rd.held, HELD_NO);
		mod->stream = NULL;
		return r;
	}
	below = old ? old->down : above->down;
	asx__rcu_assign(mod->wr.next, &below->wr);
	asx__rcu_assign(mod->rd.next, &above->rd);
	asx__rcu_assign(above->wr.next, &mod->wr);
	asx__rcu_assign(below->rd.next, &mod->rd);
	mod->up = above;
	mod->down = below;
	above->down = mod;
	below->up = mod;
	return 0;
}

/*
 * @t, which took the place of another Task, may go on now that the other
 * one has passed on everything: with service threads it takes its queue
 * in order; message-based, it catches up in the first delivery (or here).
 */
static void release_held(struct asx_task *t)
{
	if (t->mod->suspended) {
		/* it goes on holding, now as a suspended Module */
		__atomic_store_n(&t->held, HELD_SUSPEND, __ATOMIC_SEQ_CST);
		asx__word_wake(&t->held, INT_MAX);
		return;
	}
	if (ASX_LOAD_ACQ(&t->nthreads) > 0) {
		ASX_STORE_REL(&t->held, HELD_NO);
		asx__word_wake(&t->held, INT_MAX);
		return;
	}
	asx_mutex_lock(&t->catchup);
	__atomic_store_n(&t->held, HELD_CATCHUP, __ATOMIC_SEQ_CST);
	/* every delivery that saw it held has queued its message (none
	 * waits longer than HELD_PACE_NS) */
	while (__atomic_load_n(&t->held_users, __ATOMIC_SEQ_CST))
		usleep(50);
	catch_up(t);
	ASX_STORE_REL(&t->held, HELD_NO);
	asx_mutex_unlock(&t->catchup);
}

/* The grace period after the swap has passed: flow control, within bounds. */
static void hold_paced(struct asx_module *mod)
{
	__atomic_store_n(&mod->wr.held, HELD_PACED, __ATOMIC_SEQ_CST);
	__atomic_store_n(&mod->rd.held, HELD_PACED, __ATOMIC_SEQ_CST);
}

/*
 * Retire @old (unlinked, a grace period passed), which @mod replaced, and
 * release @mod's Tasks side by side: the read side first, because what
 * the old write side still passes down may come back up (a loop-back, a
 * reply) into @mod's read side, which must not be held then.
 */
static void retire_replaced(struct asx_stream *s, struct asx_module *old, struct asx_module *mod)
{
	stop_task(s, &old->rd, STOP_DRAIN);
	release_held(&mod->rd);
	stop_task(s, &old->wr, STOP_DRAIN);
	release_held(&mod->wr);
	close_task(&old->wr, ASX_TASK_CLOSE_REMOVED);
	close_task(&old->rd, ASX_TASK_CLOSE_REMOVED);
	old->stream = NULL;
	asx_module_destroy(old);
}

static void unlink_locked(struct asx_module *mod)
{
	struct asx_module *above = mod->up, *below = mod->down;

	asx__rcu_assign(above->wr.next, &below->wr);
	asx__rcu_assign(below->rd.next, &above->rd);
	above->down = below;
	below->up = above;
}

int asx_stream_insert(struct asx_stream *s, const char *after, struct asx_module *mod,
		      int argc, char **argv)
{
	struct asx_module *above;
	int r;

	if (!s || !after || !mod)
		return -EINVAL;
	if (asx__rcu_in_reader())
		return -EDEADLK;
	cfg_lock(s);
	above = find_locked(s, after);
	if (!above || above == s->tail)
		r = -ENOENT;
	else
		r = link_locked(s, above, mod, NULL, argc, argv);
	cfg_unlock(s);
	return r;
}

int asx_stream_push(struct asx_stream *s, struct asx_module *mod, int argc, char **argv)
{
	return asx_stream_insert(s, "head", mod, argc, argv);
}

int asx_stream_replace(struct asx_stream *s, const char *name, struct asx_module *mod,
		       int argc, char **argv)
{
	struct asx_module *old;
	int r;

	if (!s || !name || !mod)
		return -EINVAL;
	if (asx__rcu_in_reader())
		return -EDEADLK;
	cfg_lock(s);
	old = find_locked(s, name);
	if (!old || old == s->head || old == s->tail) {
		r = -ENOENT;
	} else {
		r = link_locked(s, old->up, mod, old, argc, argv);
		if (r == 0) {
			(void)asx__rcu_synchronize();
			hold_paced(mod);
			retire_replaced(s, old, mod);
		}
	}
	cfg_unlock(s);
	return r;
}

static int remove_locked(struct asx_stream *s, struct asx_module *mod)
{
	if (!mod || mod == s->head || mod == s->tail)
		return -ENOENT;
	if (ASX_LOAD_ACQ(&mod->wr.nthreads) > 0 || ASX_LOAD_ACQ(&mod->rd.nthreads) > 0 ||
	    mod->suspended) {
		/*
		 * What it still has queued (a task-based Module's queue, or
		 * what a suspended one holds) must not be overtaken by what no
		 * longer passes through it: a pass-through stand-in replaces
		 * it (held until it has drained, see replace) and then leaves
		 * (nothing queued there once released).  Without memory for
		 * the stand-in it leaves directly, order not kept.
		 */
		struct asx_module *pass = NULL;

		if (!asx_module_create(&pass, mod->name, NULL, NULL, NULL) &&
		    link_locked(s, mod->up, pass, mod, 0, NULL) == 0) {
			(void)asx__rcu_synchronize();
			hold_paced(pass);
			retire_replaced(s, mod, pass);
			mod = pass;
		} else {
			asx_module_destroy(pass);
		}
	}
	unlink_locked(mod);
	(void)asx__rcu_synchronize();
	retire_module(s, mod);
	return 0;
}

int asx_stream_remove(struct asx_stream *s, const char *name)
{
	int r;

	if (!s || !name)
		return -EINVAL;
	if (asx__rcu_in_reader())
		return -EDEADLK;
	cfg_lock(s);
	r = remove_locked(s, find_locked(s, name));
	cfg_unlock(s);
	return r;
}

int asx_stream_pop(struct asx_stream *s)
{
	int r;

	if (!s)
		return -EINVAL;
	if (asx__rcu_in_reader())
		return -EDEADLK;
	cfg_lock(s);
	r = remove_locked(s, s->head->down);
	cfg_unlock(s);
	return r;
}

/*
 * Suspend or resume @mod, in @s (s->cfg held) or in no Stream yet.  Resume
 * releases the read side first, as retire_replaced() does: what the write
 * side then passes down may come back up.
 */
static int set_suspended(struct asx_stream *s, struct asx_module *mod, bool on)
{
	if (s && (mod == s->head || mod == s->tail))
		return -EINVAL;
	if (mod->suspended == on)
		return 0;
	mod->suspended = on;
	if (!s)
		return 0;
	if (on) {
		/* under the catch-up locks: no catch-up runs on past it */
		asx_mutex_lock(&mod->rd.catchup);
		__atomic_store_n(&mod->rd.held, HELD_SUSPEND, __ATOMIC_SEQ_CST);
		asx_mutex_unlock(&mod->rd.catchup);
		asx_mutex_lock(&mod->wr.catchup);
		__atomic_store_n(&mod->wr.held, HELD_SUSPEND, __ATOMIC_SEQ_CST);
		asx_mutex_unlock(&mod->wr.catchup);
	} else {
		release_held(&mod->rd);
		release_held(&mod->wr);
	}
	return 0;
}

static int stream_set_suspended(struct asx_stream *s, const char *name, bool on)
{
	struct asx_module *mod;
	int r;

	if (!s || !name)
		return -EINVAL;
	if (asx__rcu_in_reader())
		return -EDEADLK;
	cfg_lock(s);
	mod = find_locked(s, name);
	r = mod && mod != s->head && mod != s->tail ? set_suspended(s, mod, on) : -ENOENT;
	cfg_unlock(s);
	return r;
}

int asx_stream_suspend(struct asx_stream *s, const char *name)
{
	return stream_set_suspended(s, name, true);
}

int asx_stream_resume(struct asx_stream *s, const char *name)
{
	return stream_set_suspended(s, name, false);
}

static int module_set_suspended(struct asx_module *mod, bool on)
{
	struct asx_stream *s;
	int r;

	if (!mod)
		return -EINVAL;
	s = mod->stream;
	if (!s)
		return set_suspended(NULL, mod, on);
	if (asx__rcu_in_reader())
		return -EDEADLK;
	cfg_lock(s);
	r = set_suspended(s, mod, on);
	cfg_unlock(s);
	return r;
}

int asx_module_suspend(struct asx_module *mod)
{
	return module_set_suspended(mod, true);
}

int asx_module_resume(struct asx_module *mod)
{
	return module_set_suspended(mod, false);
}

bool asx_module_suspended(const struct asx_module *mod)
{
	return mod && ASX_LOAD_RLX(&mod->suspended);
}

int asx_stream_list(struct asx_stream *s, char (*names)[ASX_MODULE_NAME_MAX], int n)
{
	struct asx_module *mod;
	int i = 0;

	if (!s || n < 0 || (n && !names))
		return -EINVAL;
	cfg_lock(s);
	for (mod = s->head; mod; mod = mod->down, i++)
		if (i < n)
			memcpy(names[i], mod->name, ASX_MODULE_NAME_MAX);
	cfg_unlock(s);
	return i;
}

struct asx_module *asx_stream_head(struct asx_stream *s) { return s ? s->head : NULL; }
struct asx_module *asx_stream_tail(struct asx_stream *s) { return s ? s->tail : NULL; }

uint64_t asx_stream_sunk(struct asx_stream *s)
{
	return s ? __atomic_load_n(&s->sunk, __ATOMIC_RELAXED) : 0;
}

void asx__task_set_admit(struct asx_task *t, asx__task_admit_fn *fn)
{
	t->admit = fn;
}

int asx__stream_claim(struct asx_stream *s)
{
	uint32_t free_ = 0;

	return __atomic_compare_exchange_n(&s->claimed, &free_, 1, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE) ? 0 : -EBUSY;
}

void asx__stream_release(struct asx_stream *s)
{
	__atomic_store_n(&s->claimed, 0, __ATOMIC_RELEASE);
}

void asx__stream_set_upcall(struct asx_stream *s, asx__stream_upcall_fn *fn, void *arg)
{
	ASX_STORE_REL(&s->upcall_arg, arg);
	ASX_STORE_REL(&s->upcall, fn);
}
