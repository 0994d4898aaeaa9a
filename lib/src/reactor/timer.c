// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * timer.c - the Reactor's timers: a binary min-heap of CLOCK_MONOTONIC
 * deadlines (ties broken by scheduling order) and one timerfd, also on
 * CLOCK_MONOTONIC with absolute expiry, armed for the earliest deadline.
 * Nothing here reads the wall clock, so setting it neither fires nor
 * delays a timer.
 *
 * A timer is out of the heap while its callback runs (r->firing), and its
 * deadline is already the next one, so calls from the callback see the
 * pending expiry.  Who gets arg: a one-shot's callback, once it started
 * (the timer left r->timers: cancel says -ENOENT); a cancel from inside
 * the callback (the loop drops the timer when it returns); a cancel from
 * another thread of a periodic timer waits for the callback and acts as
 * if made right after it, so it never hands out an arg in use.
 *
 * File order of reactor/, lowest first: hmap < handler < notify < timer <
 * reactor < pool.  A file calls only its own and lower files
 * (tools/lib-layers.sh checks).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/timerfd.h>

#include "core/compiler.h"
#include "core/probes.h"
#include "reactor/handler.h"
#include "reactor/reactor_impl.h"

static inline bool t_before(const struct rx_timer *a, const struct rx_timer *b)
{
	return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static inline void heap_set(struct asx_reactor *r, size_t i, struct rx_timer *t)
{
	r->heap[i] = t;
	t->heap_idx = i;
}

static void sift_up(struct asx_reactor *r, size_t i)
{
	struct rx_timer *t = r->heap[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!t_before(t, r->heap[p]))
			break;
		heap_set(r, i, r->heap[p]);
		i = p;
	}
	heap_set(r, i, t);
}

static void sift_down(struct asx_reactor *r, size_t i)
{
	struct rx_timer *t = r->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= r->heap_len)
			break;
		if (c + 1 < r->heap_len && t_before(r->heap[c + 1], r->heap[c]))
			c++;
		if (!t_before(r->heap[c], t))
			break;
		heap_set(r, i, r->heap[c]);
		i = c;
	}
	heap_set(r, i, t);
}

static int heap_push(struct asx_reactor *r, struct rx_timer *t)
{
	if (r->heap_len == r->heap_cap) {
		size_t cap = r->heap_cap ? r->heap_cap * 2 : 16;
		struct rx_timer **h = realloc(r->heap, cap * sizeof(*h));

		if (!h)
			return -ENOMEM;
		r->heap = h;
		r->heap_cap = cap;
	}
	heap_set(r, r->heap_len++, t);
	sift_up(r, t->heap_idx);
	return 0;
}

static void heap_remove(struct asx_reactor *r, struct rx_timer *t)
{
	size_t i = t->heap_idx;
	struct rx_timer *last = r->heap[--r->heap_len];

	t->heap_idx = RX_NOT_IN_HEAP;
	if (last != t) {
		heap_set(r, i, last);
		sift_up(r, i);
		sift_down(r, last->heap_idx);
	}
	/* Give memory back once the heap is mostly empty. */
	if (r->heap_cap > 16 && r->heap_len * 4 < r->heap_cap) {
		struct rx_timer **h = realloc(r->heap, r->heap_cap / 2 * sizeof(*h));

		if (h) {
			r->heap = h;
			r->heap_cap /= 2;
		}
	}
}

/* Lock held: program the timerfd for the earliest deadline (or disarm it). */
static void rearm(struct asx_reactor *r)
{
	uint64_t want = r->heap_len ? r->heap[0]->deadline : 0;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (want == r->armed)
		return;
	if (want) {
		its.it_value.tv_sec = (time_t)(want / ASX_NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(want % ASX_NSEC_PER_SEC);
	}
	if (timerfd_settime(r->timerfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		r->armed = want;
}

static int64_t schedule(struct asx_reactor *r, struct asx_event_handler *eh, void *arg,
			uint64_t deadline, uint64_t interval)
{
	struct rx_timer *t;
	int64_t id;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (!deadline)
		deadline = 1;	/* 0 would disarm the timerfd */
	asx_mutex_lock(&r->lock);
	if (r->destroying) {
		err = -ESHUTDOWN;
		goto err_unlock;
	}
	err = asx__rx_attach(r, eh);
	if (err)
		goto err_unlock;
	id = ++r->next_timer_id;
	t->id = id;
	t->deadline = deadline;
	t->seq = ++r->timer_seq;
	t->interval = interval;
	t->eh = eh;
	t->arg = arg;
	err = asx__rx_hmap_put(&r->timers, (uint64_t)id, t);
	if (err)
		goto err_detach;
	err = heap_push(r, t);
	if (err) {
		asx__rx_hmap_del(&r->timers, (uint64_t)id);
		goto err_detach;
	}
	asx__rx_reg_begin(r, eh);
	rearm(r);
	asx_mutex_unlock(&r->lock);
	return id;

err_detach:
	asx__rx_detach_idle(r, eh);
err_unlock:
	asx_mutex_unlock(&r->lock);
	free(t);
	return err;
}

/* Periods longer than this are refused, so deadline arithmetic cannot wrap. */
#define RX_MAX_NS (UINT64_MAX / 4)

int64_t asx_reactor_schedule_timer(struct asx_reactor *r, struct asx_event_handler *eh,
				   void *arg, uint64_t delay_ns, uint64_t interval_ns)
{
	if (!r || !eh || !eh->ops || !eh->ops->handle_timeout || delay_ns > RX_MAX_NS ||
	    interval_ns > RX_MAX_NS)
		return -EINVAL;
	return schedule(r, eh, arg, asx_now_ns() + delay_ns, interval_ns);
}

int64_t asx_reactor_schedule_timer_at(struct asx_reactor *r, struct asx_event_handler *eh,
				      void *arg, const struct timespec *deadline,
				      uint64_t interval_ns)
{
	if (!r || !eh || !eh->ops || !eh->ops->handle_timeout || !deadline ||
	    deadline->tv_sec < 0 || deadline->tv_nsec < 0 || deadline->tv_nsec >= 1000000000L ||
	    asx_timespec_ns(deadline) > RX_MAX_NS || interval_ns > RX_MAX_NS)
		return -EINVAL;
	return schedule(r, eh, arg, asx_timespec_ns(deadline), interval_ns);
}

/* Lock held: forget a timer that is not firing; its registration ends. */
static void timer_drop(struct asx_reactor *r, struct rx_timer *t)
{
	struct asx_event_handler *eh = t->eh;

	if (t->heap_idx != RX_NOT_IN_HEAP)
		heap_remove(r, t);
	if (!t->final)	/* a final run left the map when it began */
		asx__rx_hmap_del(&r->timers, (uint64_t)t->id);
	free(t);
	asx__rx_reg_end(r, eh, -1, ASX_EV_TIMER);
}

/* Lock held: the caller runs the firing timer's callback (so is inside it). */
static bool in_dispatcher(struct asx_reactor *r)
{
	return r->firing && asx__rx_self_is(&r->firing_by);
}

int asx_reactor_cancel_timer(struct asx_reactor *r, int64_t id, void **argp)
{
	struct asx_event_handler *eh;
	struct rx_cancel_wait w = { 0 };
	struct rx_timer *t;

	if (!r || id <= 0)
		return -EINVAL;
	asx_mutex_lock(&r->lock);
	t = asx__rx_hmap_get(&r->timers, (uint64_t)id);
	/* Not found: no such timer, or a one-shot whose callback started. */
	if (!t || t->cancelled || (t->firing && t->waiter && !in_dispatcher(r))) {
		asx_mutex_unlock(&r->lock);
		return -ENOENT;
	}
	if (t->firing && in_dispatcher(r)) {
		/* From inside its callback: the loop drops it when that returns. */
		t->cancelled = true;
		if (argp)
			*argp = t->arg;
		asx_mutex_unlock(&r->lock);
		return 0;
	}
	if (t->firing) {
		/* Another thread: wait for the callback, which may end the timer. */
		t->waiter = &w;
		while (!w.done)
			asx_cond_wait(&r->timer_done, &r->lock);
		asx_mutex_unlock(&r->lock);
		if (!w.rc && argp)
			*argp = w.arg;
		return w.rc;
	}
	if (argp)
		*argp = t->arg;
	eh = t->eh;
	timer_drop(r, t);
	rearm(r);
	asx__rx_unlock_close(r, eh);
	return 0;
}

int asx_reactor_reset_timer_interval(struct asx_reactor *r, int64_t id, uint64_t interval_ns)
{
	struct rx_timer *t;
	int err = 0;

	if (!r || id <= 0 || interval_ns > RX_MAX_NS)
		return -EINVAL;
	asx_mutex_lock(&r->lock);
	t = asx__rx_hmap_get(&r->timers, (uint64_t)id);
	if (!t || t->cancelled)
		err = -ENOENT;
	else
		t->interval = interval_ns;
	asx_mutex_unlock(&r->lock);
	return err;
}

int asx_reactor_timer_deadline(struct asx_reactor *r, int64_t id, struct timespec *ts)
{
	struct rx_timer *t;
	int err = 0;

	if (!r || id <= 0 || !ts)
		return -EINVAL;
	asx_mutex_lock(&r->lock);
	t = asx__rx_hmap_get(&r->timers, (uint64_t)id);
	if (!t || t->cancelled) {
		err = -ENOENT;
	} else {
		ts->tv_sec = (time_t)(t->deadline / ASX_NSEC_PER_SEC);
		ts->tv_nsec = (long)(t->deadline % ASX_NSEC_PER_SEC);
	}
	asx_mutex_unlock(&r->lock);
	return err;
}

unsigned int asx_reactor_timer_count(struct asx_reactor *r)
{
	unsigned int n;

	if (!r)
		return 0;
	asx_mutex_lock(&r->lock);
	n = (unsigned int)r->timers.count;
	asx_mutex_unlock(&r->lock);
	return n;
}

/* Lock held: the expiry after @t's current one, past @now, in phase. */
static uint64_t next_expiry(const struct rx_timer *t, uint64_t now)
{
	uint64_t next = t->deadline + t->interval;

	if (next <= now)	/* skip missed periods, keep the phase */
		next += ((now - next) / t->interval + 1) * t->interval;
	return next;
}

/* Lock held: @t's callback returned @rc; end the timer or queue it again. */
static void timer_fired(struct asx_reactor *r, struct rx_timer *t, int rc)
{
	bool end = rc < 0 || t->cancelled || t->final;

	t->firing = false;
	r->firing = NULL;
	if (t->waiter) {
		/* The waiting cancel gets arg unless the callback ended the timer. */
		t->waiter->rc = end ? -ENOENT : 0;
		t->waiter->arg = t->arg;
		t->waiter->done = true;
		t->waiter = NULL;
		asx_cond_broadcast(&r->timer_done);
		end = true;
	}
	if (!end) {
		t->seq = ++r->timer_seq;
		end = heap_push(r, t) != 0;
	}
	if (end)
		timer_drop(r, t);
}

int asx__rx_timers_expire(struct asx_reactor *r)
{
	uint64_t now;
	int count = 0;

	asx_mutex_lock(&r->lock);
	/*
	 * One thread at a time (several run the loop on a thread-pool
	 * reactor): one timer fires at a time, in deadline order.  A second
	 * thread leaves the timers it was woken for to the first.
	 */
	if (!asx__rx_solo(&r->expiring, &r->expire_again)) {
		asx_mutex_unlock(&r->lock);
		return 0;
	}
again:
	r->expire_again = false;
	now = asx_now_ns();
	/*
	 * Only timers due at @now: an interval timer goes back with a deadline
	 * after @now, so a short period cannot keep this loop going.
	 */
	while (r->heap_len && r->heap[0]->deadline <= now) {
		struct rx_timer *t = r->heap[0];
		struct asx_event_handler *eh = t->eh;
		struct timespec ts;
		uint64_t t_now;
		int rc;

		if (asx__rx_wait_idle(r, eh))
			continue;	/* the heap may have changed */
		heap_remove(r, t);
		if (!asx__rx_dispatch_begin(r, eh)) {	/* cannot happen: eh is ours */
			timer_drop(r, t);
			continue;
		}
		t->firing = true;
		r->firing = t;
		asx__rx_self_get(&r->firing_by);
		t_now = asx_now_ns();
		if (t->interval) {
			t->deadline = next_expiry(t, t_now);
		} else {
			/* This run is its last: gone for cancel, reset and deadline. */
			t->final = true;
			asx__rx_hmap_del(&r->timers, (uint64_t)t->id);
		}
		asx_mutex_unlock(&r->lock);

		ts.tv_sec = (time_t)(t_now / ASX_NSEC_PER_SEC);
		ts.tv_nsec = (long)(t_now % ASX_NSEC_PER_SEC);
		ASX_PROBE1(reactor_timer, t->id);
		rc = eh->ops->handle_timeout(eh, &ts, t->arg);
		count++;

		asx_mutex_lock(&r->lock);
		timer_fired(r, t, rc);
		rearm(r);
		asx__rx_dispatch_end(r, eh);
		asx_mutex_lock(&r->lock);
	}
	if (r->expire_again)
		goto again;
	r->expiring = false;
	rearm(r);
	asx_mutex_unlock(&r->lock);
	return count;
}

unsigned int asx__rx_timers_remove(struct asx_reactor *r, struct asx_event_handler *eh)
{
	unsigned int n = 0;
	size_t i;

	/*
	 * Walk down.  Removing index i moves entries already seen (above i) or
	 * exactly one unseen entry (a parent sifted down) into i, so look at i
	 * again before going on.
	 */
	for (i = r->heap_len; i-- > 0;) {
		while (i < r->heap_len && (!eh || r->heap[i]->eh == eh)) {
			timer_drop(r, r->heap[i]);
			n++;
		}
	}
	if (r->firing && (!eh || r->firing->eh == eh) && !r->firing->cancelled &&
	    !r->firing->final) {
		r->firing->cancelled = true;
		n++;
	}
	rearm(r);
	return n;
}

void asx__rx_timers_free(struct asx_reactor *r)
{
	asx__rx_hmap_free(&r->timers);
	free(r->heap);
	r->heap = NULL;
	r->heap_len = r->heap_cap = 0;
}
