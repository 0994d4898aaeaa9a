// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * msgq.c - the message queue.
 *
 * One asx_mutex guards the list, the counts and the wait bookkeeping; it
 * is held only for a few pointer updates.  Waiting is done on two futex
 * words of our own (consumers wait for "not empty", producers for "not
 * full") rather than on a condition variable, so that a wake-up costs a
 * system call only when somebody is really asleep:
 *
 *   - A waiter first drops the lock and spins for a short while watching
 *     the state it waits for (a lock-free read of a flag or count).  In a
 *     producer/consumer pair on two CPUs the other side usually acts
 *     within that time, and neither thread sleeps.
 *   - If the spin fails it registers (nwait++) and reads the sequence
 *     word under the lock, drops the lock and sleeps on that word.
 *   - A waker decides under the lock: if nwait > pending (someone is
 *     registered who has not been woken yet), it bumps the sequence word
 *     and pending, and calls FUTEX_WAKE after dropping the lock.  With
 *     nobody registered it does nothing: no system call.
 *   - A woken waiter (or one that timed out) re-takes the lock, leaves
 *     the books (nwait--, pending-- if set) and re-checks everything.
 *
 * Because the sequence word changes under the lock that the waiter held
 * when it read it, a wake between the waiter's unlock and its FUTEX_WAIT
 * makes the wait return at once (-EAGAIN): no wake-up is lost.  Each wake
 * makes at least one registered waiter return and decrement pending, so
 * pending cannot stick above the number of outstanding wake-ups; if a
 * time-out consumes a pending count meant for another waiter, the worst
 * case is one extra wake-up later.
 *
 * Consumers are woken one per enqueued message; producers are all woken
 * when flow control lifts (any of them may proceed until the queue is
 * full again).  Deactivate and pulse wake everybody.
 *
 * Sleeping and waking go through asx__word_wait()/asx__word_wake()
 * (asc/wait.h): an ASC user thread parks and its VP runs other threads
 * (the queue's lock, an asx_mutex, does the same), and a user thread on
 * the only VP skips the spin (nobody else can run meanwhile).
 *
 * Fields that the spinning phase reads without the lock (count, full,
 * active, pulse) are written with atomic stores under the lock.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include <asx/msgq.h>
#include <asx/sync.h>
#include "core/compiler.h"
#include "msg/msg_impl.h"
#include "asc/wait.h"
#include "core/futex.h"
#include "core/probes.h"
#include "core/rcudepth.h"
#include "msg/msgq_impl.h"

/*
 * CPU-relax rounds a waiter spins before it sleeps: about half a
 * microsecond.  Measured with asx-bench msgq on a loaded 2-CPU machine:
 * 0-30 rounds give 1.4-1.5x the pthread baseline, 100 rounds or more
 * lose to it (a long spin burns the time slice the other side needs).
 */
#ifndef MSGQ_SPIN
#define MSGQ_SPIN	32
#endif

#define MSGQ_FLAGS	(ASX_MSGQ_NOWAIT | ASX_MSGQ_HEAD | ASX_MSGQ_TAIL | ASX_MSGQ_FORCE)

struct waitq {
	uint32_t seq;		/* futex word */
	uint32_t nwait;		/* registered waiters */
	uint32_t pending;	/* woken, not yet back under the lock */
};

struct asx_msgq {
	struct asx_mutex lock;
	struct asx_msg *head, *tail;
	struct asx_msg *last_hipri;	/* end of the high-priority run, or NULL */
	size_t bytes;
	size_t count;
	size_t hipri;			/* high-priority messages queued */
	size_t hipri_max;		/* more are refused (ASX_MSGQ_FORCE aside) */
	size_t hiwat, lowat;
	uint32_t full;			/* flow-controlled */
	uint32_t active;
	uint32_t pulse;			/* bumped by asx_msgq_pulse() */
	asx_msgq_notify_fn *notify;
	void *notify_arg;
	/*
	 * Hook calls in flight, by epoch.  An enqueue takes the hook and
	 * counts itself in busy[epoch] under the lock; set_notify flips the
	 * epoch under the lock and waits for the old epoch's count to drain,
	 * so after it returns no thread still runs the hook it replaced.
	 */
	uint32_t notify_epoch;
	uint32_t notify_busy[2];	/* futex words */
	struct asx_msgq_stats st;
	struct waitq cons __attribute__((aligned(64)));
	struct waitq prod __attribute__((aligned(64)));
};

/* The hook this thread is running, so set_notify from inside it does not wait for itself. */
static __thread struct asx_msgq *hook_q;
static __thread uint32_t hook_epoch;

static void run_hook(struct asx_msgq *q, asx_msgq_notify_fn *fn, void *arg, uint32_t e)
{
	struct asx_msgq *saved_q = hook_q;
	uint32_t saved_e = hook_epoch;

	hook_q = q;
	hook_epoch = e;
	fn(q, arg);
	hook_q = saved_q;
	hook_epoch = saved_e;
	if (__atomic_sub_fetch(&q->notify_busy[e], 1, __ATOMIC_RELEASE) == 0)
		asx__word_wake(&q->notify_busy[e], INT_MAX);
}

int asx_msgq_create(struct asx_msgq **out, size_t hiwat, size_t lowat)
{
	struct asx_msgq *q;

	if (!out)
		return -EINVAL;
	if (!hiwat && !lowat) {
		hiwat = ASX_MSGQ_DEFAULT_HIWAT;
		lowat = ASX_MSGQ_DEFAULT_LOWAT;
	}
	if (!hiwat || lowat > hiwat)
		return -EINVAL;
	if (posix_memalign((void **)&q, 64, sizeof(*q)))
		return -ENOMEM;
	*q = (struct asx_msgq){ .hiwat = hiwat, .lowat = lowat, .active = 1,
				.hipri_max = ASX_MSGQ_DEFAULT_HIPRI_MAX };
	asx_mutex_init(&q->lock);
	*out = q;
	return 0;
}

void asx_msgq_destroy(struct asx_msgq *q)
{
	struct asx_msg *m, *next;

	if (!q)
		return;
	for (m = q->head; m; m = next) {
		next = asx__msgp(m)->next;
		asx__msgp(m)->next = asx__msgp(m)->prev = NULL;
		asx_msg_free_chain(m);
	}
	asx_mutex_destroy(&q->lock);
	free(q);
}

/* ---- wait bookkeeping (lock held) ---- */

/* Wake one registered waiter if none is already on its way; 1 to FUTEX_WAKE. */
static int kick_one(struct waitq *w)
{
	if (w->nwait <= w->pending)
		return 0;
	w->pending++;
	__atomic_store_n(&w->seq, w->seq + 1, __ATOMIC_RELAXED);
	return 1;
}

static int kick_all(struct waitq *w)
{
	if (w->nwait <= w->pending)
		return 0;
	w->pending = w->nwait;
	__atomic_store_n(&w->seq, w->seq + 1, __ATOMIC_RELAXED);
	return INT_MAX;
}

static inline void wake(struct waitq *w, int n)
{
	if (n)
		asx__word_wake(&w->seq, n);
}

/* Sleep on @w; returns with the lock held again.  -ETIMEDOUT or 0. */
static int sleep_on(struct asx_msgq *q, struct waitq *w, const struct timespec *deadline)
{
	uint32_t seq = w->seq;
	int r;

	w->nwait++;
	q->st.sleeps++;
	asx_mutex_unlock(&q->lock);
	r = asx__word_wait(&w->seq, seq, deadline);
	asx_mutex_lock(&q->lock);
	w->nwait--;
	if (w->pending)
		w->pending--;
	return r == -ETIMEDOUT ? r : 0;
}

/* Drop the lock and spin until @ok says go (or the budget runs out); relock. */
static void spin_for(struct asx_msgq *q, bool (*ok)(const struct asx_msgq *q, uint32_t gen),
		     uint32_t gen)
{
	int i;

	asx_mutex_unlock(&q->lock);
	for (i = 0; i < MSGQ_SPIN; i++) {
		if (ok(q, gen))
			break;
		asx_cpu_relax();
	}
	asx_mutex_lock(&q->lock);
}

static bool can_put(const struct asx_msgq *q, uint32_t gen)
{
	return !ASX_LOAD_RLX(&q->full) || !ASX_LOAD_RLX(&q->active) || ASX_LOAD_RLX(&q->pulse) != gen;
}

static bool can_get(const struct asx_msgq *q, uint32_t gen)
{
	return ASX_LOAD_RLX(&q->count) || !ASX_LOAD_RLX(&q->active) || ASX_LOAD_RLX(&q->pulse) != gen;
}

/*
 * Wait (lock held) until @ok holds under the lock.  0 when it does;
 * -ESHUTDOWN, -EINTR or -ETIMEDOUT otherwise.  wait_until() counts it as
 * a wait in the lock statistics (<asx/sync.h>), spin and sleep, while
 * they are on.
 */
static int wait_until_1(struct asx_msgq *q, struct waitq *w,
			bool (*ok)(const struct asx_msgq *q, uint32_t gen),
			const struct timespec *deadline)
{
	uint32_t gen = q->pulse;
	bool spun = false;
	int r = 0;

	for (;;) {
		if (!spun) {
			if (!asx__spin_futile())
				spin_for(q, ok, gen);
			spun = true;
		} else {
			r = sleep_on(q, w, deadline);
		}
		if (!q->active)
			return -ESHUTDOWN;
		if (w == &q->cons ? q->head != NULL : !q->full)
			return 0;
		if (q->pulse != gen)
			return -EINTR;
		if (r == -ETIMEDOUT)
			return r;
	}
}

static int wait_until(struct asx_msgq *q, struct waitq *w,
		      bool (*ok)(const struct asx_msgq *q, uint32_t gen),
		      const struct timespec *deadline)
{
	uint64_t t0 = asx_lockstat_begin();	/* 0 while off */
	int r;

	asx__rcu_check_wait("a message queue wait");
	r = wait_until_1(q, w, ok, deadline);
	if (t0)
		asx_lockstat_end(ASX_LOCKSTAT_WAIT, t0);
	return r;
}

/* ---- list (lock held) ---- */

static void insert_after(struct asx_msgq *q, struct asx_msg *p, struct asx_msg *m)
{
	asx__msgp(m)->prev = p;
	asx__msgp(m)->next = p ? asx__msgp(p)->next : q->head;
	if (asx__msgp(m)->next)
		asx__msgp(asx__msgp(m)->next)->prev = m;
	else
		q->tail = m;
	if (p)
		asx__msgp(p)->next = m;
	else
		q->head = m;
}

static void unlink_msg(struct asx_msgq *q, struct asx_msg *m)
{
	if (asx__msgp(m)->prev)
		asx__msgp(asx__msgp(m)->prev)->next = asx__msgp(m)->next;
	else
		q->head = asx__msgp(m)->next;
	if (asx__msgp(m)->next)
		asx__msgp(asx__msgp(m)->next)->prev = asx__msgp(m)->prev;
	else
		q->tail = asx__msgp(m)->prev;
	if (q->last_hipri == m)
		q->last_hipri = NULL;
	if (m->asx__flags & ASX__MSG_QHIPRI) {
		m->asx__flags &= (uint16_t)~ASX__MSG_QHIPRI;
		q->hipri--;
	}
	asx__msgp(m)->next = asx__msgp(m)->prev = NULL;
	ASX_STORE_RLX(&q->bytes, q->bytes - asx__msgp(m)->qbytes);
	ASX_STORE_RLX(&q->count, q->count - 1);
}

static void insert(struct asx_msgq *q, struct asx_msg *m, unsigned int flags)
{
	bool hipri = asx_msg_is_hipri(m);
	struct asx_msg *p;

	/* counted as queued until unlinked, whatever its type is by then */
	if (hipri) {
		m->asx__flags |= ASX__MSG_QHIPRI;
		q->hipri++;
	} else {
		m->asx__flags &= (uint16_t)~ASX__MSG_QHIPRI;
	}

	if (flags & ASX_MSGQ_HEAD) {
		insert_after(q, NULL, m);
		if (hipri && !q->last_hipri)
			q->last_hipri = m;
	} else if (flags & ASX_MSGQ_TAIL) {
		p = q->tail;
		insert_after(q, p, m);
		if (hipri && p == q->last_hipri)
			q->last_hipri = m;
	} else if (hipri) {
		insert_after(q, q->last_hipri, m);
		q->last_hipri = m;
	} else {
		/* common case: same band as the tail, no scan */
		for (p = q->tail; p && !asx_msg_is_hipri(p) && p->band < m->band; p = asx__msgp(p)->prev)
			;
		insert_after(q, p, m);
	}
}

/* Lift flow control if the count has drained; returns what to wake. */
static int maybe_unblock(struct asx_msgq *q)
{
	if (q->full && (q->bytes < q->lowat || !q->bytes)) {
		ASX_STORE_RLX(&q->full, 0);
		return kick_all(&q->prod);
	}
	return 0;
}

/* ---- public ---- */

static int enqueue(struct asx_msgq *q, struct asx_msg *m, unsigned int flags,
		   const struct timespec *deadline, bool again)
{
	asx_msgq_notify_fn *fn;
	uint32_t e = 0;
	void *arg;
	size_t len;
	int r, wk;

	if (unlikely(!q || !m || (flags & ~MSGQ_FLAGS) ||
		     (flags & (ASX_MSGQ_HEAD | ASX_MSGQ_TAIL)) ==
			     (ASX_MSGQ_HEAD | ASX_MSGQ_TAIL) ||
		     !asx_timespec_valid(deadline)))
		return -EINVAL;
	len = asx_msg_length(m);

	asx_mutex_lock(&q->lock);
	if (unlikely(!q->active)) {
		r = -ESHUTDOWN;
		goto out_unlock;
	}
	if (q->full && !(flags & ASX_MSGQ_FORCE) && !asx_msg_is_hipri(m)) {
		if (flags & ASX_MSGQ_NOWAIT) {
			r = -EWOULDBLOCK;
			goto out_unlock;
		}
		if (!again) {
			q->st.full_waits++;
			ASX_PROBE1(msgq_block_full, q);
		}
		r = wait_until(q, &q->prod, can_put, deadline);
		if (r)
			goto out_unlock;
	} else if (unlikely(q->hipri >= q->hipri_max) && !(flags & ASX_MSGQ_FORCE) &&
		   asx_msg_is_hipri(m) && m->type != ASX_MSG_HANGUP) {
		/*
		 * flow control does not hold these back: a bound does (as in
		 * asx.ko); a HANGUP, a driver's last word, is never refused
		 */
		q->st.hipri_refused++;
		r = -ENOBUFS;
		goto out_unlock;
	}

	asx__msgp(m)->qbytes = len;
	insert(q, m, flags);
	ASX_STORE_RLX(&q->bytes, q->bytes + len);
	ASX_STORE_RLX(&q->count, q->count + 1);
	if (q->bytes >= q->hiwat)
		ASX_STORE_RLX(&q->full, 1);
	q->st.enqueued++;
	if (q->bytes > q->st.peak_bytes)
		q->st.peak_bytes = q->bytes;
	ASX_PROBE4(msgq_enqueue, q, q->bytes, q->count, m);
	wk = kick_one(&q->cons);
	fn = q->notify;
	arg = q->notify_arg;
	if (fn) {
		e = q->notify_epoch;
		__atomic_add_fetch(&q->notify_busy[e], 1, __ATOMIC_RELAXED);
	}
	asx_mutex_unlock(&q->lock);

	wake(&q->cons, wk);
	if (fn)
		run_hook(q, fn, arg, e);
	return 0;

out_unlock:
	asx_mutex_unlock(&q->lock);
	return r;
}

int asx_msgq_enqueue(struct asx_msgq *q, struct asx_msg *m, unsigned int flags,
		     const struct timespec *deadline)
{
	return enqueue(q, m, flags, deadline, false);
}

int asx__msgq_enqueue_again(struct asx_msgq *q, struct asx_msg *m, unsigned int flags,
			    const struct timespec *deadline)
{
	return enqueue(q, m, flags, deadline, true);
}

int asx__msgq_wait_room(struct asx_msgq *q, const struct timespec *deadline, bool again)
{
	int r = 0;

	if (!asx_timespec_valid(deadline))
		return -EINVAL;
	asx_mutex_lock(&q->lock);
	if (!q->active) {
		r = -ESHUTDOWN;
	} else if (q->full) {
		if (!again) {
			q->st.full_waits++;
			ASX_PROBE1(msgq_block_full, q);
		}
		r = wait_until(q, &q->prod, can_put, deadline);
	}
	asx_mutex_unlock(&q->lock);
	return r;
}

int asx_msgq_dequeue(struct asx_msgq *q, struct asx_msg **mp, unsigned int flags,
		     const struct timespec *deadline)
{
	struct asx_msg *m;
	int r, wk;

	if (unlikely(!q || !mp || (flags & ~ASX_MSGQ_NOWAIT) ||
		     !asx_timespec_valid(deadline)))
		return -EINVAL;

	asx_mutex_lock(&q->lock);
	if (unlikely(!q->active)) {
		r = -ESHUTDOWN;
		goto out_unlock;
	}
	if (!q->head) {
		if (flags & ASX_MSGQ_NOWAIT) {
			r = -EWOULDBLOCK;
			goto out_unlock;
		}
		q->st.empty_waits++;
		ASX_PROBE1(msgq_block_empty, q);
		r = wait_until(q, &q->cons, can_get, deadline);
		if (r)
			goto out_unlock;
	}

	m = q->head;
	unlink_msg(q, m);
	wk = maybe_unblock(q);
	q->st.dequeued++;
	ASX_PROBE4(msgq_dequeue, q, q->bytes, q->count, m);
	asx_mutex_unlock(&q->lock);

	wake(&q->prod, wk);
	*mp = m;
	return 0;

out_unlock:
	asx_mutex_unlock(&q->lock);
	return r;
}

int asx_msgq_peek(struct asx_msgq *q, struct asx_msg **mp)
{
	int r = 0;

	if (!q || !mp)
		return -EINVAL;
	asx_mutex_lock(&q->lock);
	if (!q->active)
		r = -ESHUTDOWN;
	else if (!q->head)
		r = -EWOULDBLOCK;
	else
		*mp = q->head;
	asx_mutex_unlock(&q->lock);
	return r;
}

/* Take the messages @all or of normal band @band off the queue; free them unlocked. */
static size_t flush(struct asx_msgq *q, bool all, uint8_t band)
{
	struct asx_msg *m, *next, *dead = NULL;
	size_t n = 0;
	int wk;

	asx_mutex_lock(&q->lock);
	for (m = q->head; m; m = next) {
		next = asx__msgp(m)->next;
		if (!all && (asx_msg_is_hipri(m) || m->band != band))
			continue;
		unlink_msg(q, m);
		asx__msgp(m)->next = dead;
		dead = m;
		n++;
	}
	wk = maybe_unblock(q);
	asx_mutex_unlock(&q->lock);
	wake(&q->prod, wk);

	for (m = dead; m; m = next) {
		next = asx__msgp(m)->next;
		asx__msgp(m)->next = NULL;
		asx_msg_free_chain(m);
	}
	return n;
}

size_t asx_msgq_flush(struct asx_msgq *q)
{
	return flush(q, true, 0);
}

size_t asx_msgq_flush_band(struct asx_msgq *q, uint8_t band)
{
	return flush(q, false, band);
}

static void wake_everybody(struct asx_msgq *q, bool deactivate, bool activate, bool pulse)
{
	int wc = 0, wp = 0;

	asx_mutex_lock(&q->lock);
	if (deactivate)
		ASX_STORE_RLX(&q->active, 0);
	if (activate)
		ASX_STORE_RLX(&q->active, 1);
	if (pulse)
		ASX_STORE_RLX(&q->pulse, q->pulse + 1);
	if (deactivate || pulse) {
		wc = kick_all(&q->cons);
		wp = kick_all(&q->prod);
	}
	asx_mutex_unlock(&q->lock);
	wake(&q->cons, wc);
	wake(&q->prod, wp);
}

void asx_msgq_deactivate(struct asx_msgq *q)
{
	wake_everybody(q, true, false, false);
}

void asx_msgq_activate(struct asx_msgq *q)
{
	wake_everybody(q, false, true, false);
}

void asx_msgq_pulse(struct asx_msgq *q)
{
	wake_everybody(q, false, false, true);
}

bool asx_msgq_is_active(const struct asx_msgq *q)
{
	return ASX_LOAD_RLX(&q->active);
}

size_t asx_msgq_count(const struct asx_msgq *q)
{
	return ASX_LOAD_RLX(&q->count);
}

size_t asx_msgq_bytes(const struct asx_msgq *q)
{
	return ASX_LOAD_RLX(&q->bytes);
}

bool asx_msgq_is_empty(const struct asx_msgq *q)
{
	return !ASX_LOAD_RLX(&q->count);
}

bool asx_msgq_is_full(const struct asx_msgq *q)
{
	return ASX_LOAD_RLX(&q->full);
}

size_t asx_msgq_hiwat(const struct asx_msgq *q)
{
	return ASX_LOAD_RLX(&q->hiwat);
}

size_t asx_msgq_lowat(const struct asx_msgq *q)
{
	return ASX_LOAD_RLX(&q->lowat);
}

/* Set either mark; (size_t)-1 keeps the current value. */
static int set_water(struct asx_msgq *q, size_t hiwat, size_t lowat)
{
	int wk;

	asx_mutex_lock(&q->lock);
	if (hiwat == (size_t)-1)
		hiwat = q->hiwat;
	if (lowat == (size_t)-1)
		lowat = q->lowat;
	if (!hiwat || lowat > hiwat) {
		asx_mutex_unlock(&q->lock);
		return -EINVAL;
	}
	ASX_STORE_RLX(&q->hiwat, hiwat);
	ASX_STORE_RLX(&q->lowat, lowat);
	if (q->bytes >= hiwat)
		ASX_STORE_RLX(&q->full, 1);
	wk = maybe_unblock(q);
	asx_mutex_unlock(&q->lock);
	wake(&q->prod, wk);
	return 0;
}

int asx_msgq_set_water(struct asx_msgq *q, size_t hiwat, size_t lowat)
{
	if (hiwat == (size_t)-1 || lowat == (size_t)-1)
		return -EINVAL;
	return set_water(q, hiwat, lowat);
}

int asx_msgq_set_hiwat(struct asx_msgq *q, size_t hiwat)
{
	if (hiwat == (size_t)-1)
		return -EINVAL;
	return set_water(q, hiwat, (size_t)-1);
}

int asx_msgq_set_lowat(struct asx_msgq *q, size_t lowat)
{
	if (lowat == (size_t)-1)
		return -EINVAL;
	return set_water(q, (size_t)-1, lowat);
}

int asx_msgq_set_hipri_max(struct asx_msgq *q, size_t max)
{
	if (!q || !max)
		return -EINVAL;
	asx_mutex_lock(&q->lock);
	ASX_STORE_RLX(&q->hipri_max, max);
	asx_mutex_unlock(&q->lock);
	return 0;
}

size_t asx_msgq_hipri_max(const struct asx_msgq *q)
{
	return ASX_LOAD_RLX(&q->hipri_max);
}

uint32_t asx__msgq_swap_notify(struct asx_msgq *q, asx_msgq_notify_fn *fn, void *arg)
{
	uint32_t old;

	asx_mutex_lock(&q->lock);
	q->notify = fn;
	q->notify_arg = arg;
	old = q->notify_epoch;
	q->notify_epoch = old ^ 1;
	asx_mutex_unlock(&q->lock);
	return old;
}

void asx__msgq_notify_drain(struct asx_msgq *q, uint32_t epoch)
{
	uint32_t self = hook_q == q && hook_epoch == epoch;
	uint32_t v;

	/* Wait for the calls that took the old hook; never for our own. */
	while ((v = __atomic_load_n(&q->notify_busy[epoch], __ATOMIC_ACQUIRE)) > self)
		asx__word_wait(&q->notify_busy[epoch], v, NULL);
}

void asx_msgq_set_notify(struct asx_msgq *q, asx_msgq_notify_fn *fn, void *arg)
{
	asx__msgq_notify_drain(q, asx__msgq_swap_notify(q, fn, arg));
}

void asx_msgq_stats(struct asx_msgq *q, struct asx_msgq_stats *st)
{
	asx_mutex_lock(&q->lock);
	*st = q->st;
	asx_mutex_unlock(&q->lock);
}
