// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * thread.c - the ASC's user threads: creating one and putting it in an
 * ASC, its entry and end (periodic jobs included), reaping and joining,
 * moving to another ASC or QoS (asx_asc_thread_change), and the per-thread
 * timers that run at its next return from the scheduler.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asc/sched_impl.h"
#include "core/opts.h"
#include "core/probes.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DEFAULT_STACK (512u * 1024u)
#else
#define DEFAULT_STACK (128u * 1024u)
#endif

/* ---------------------------------------------------------------- threads */

static void thread_main(void *xfer, void *param);

int asx_asc_thread_create(struct asx_asc_thread **out, asx_asc_thread_fn fn, void *arg,
		      const struct asx_asc_thread_opts *uattr)
{
	const struct asx_asc_thread_opts *attr = NULL;
	struct asx_asc_thread_opts at;
	struct asx_asc_thread *t;
	size_t ss = DEFAULT_STACK;

	if (!out || !fn)
		return -EINVAL;
	if (uattr) {
		int r = ASX__OPTS_COPY(&at, uattr);

		if (r)
			return r;
		attr = &at;
	}
	if (attr && attr->stack_size)
		ss = attr->stack_size;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->stack = asx__stack_get(ss + 4096);	/* the descriptor's page */
	if (!t->stack) {
		free(t);
		return -ENOMEM;
	}
	asx__ctx_make(&t->ctx, t->stack->lo, t->stack->size, thread_main, t);
	t->fn = fn;
	t->arg = arg;
	__atomic_store_n(&t->state, T_NEW, __ATOMIC_RELAXED);
	t->sleep.idx = -1;
	for (int i = 0; i < ASX_ASC_THREAD_TIMERS; i++)
		t->utimers[i].node.idx = -1;
	if (attr && attr->name)
		snprintf(t->name, sizeof(t->name), "%s", attr->name);
	t->detached = attr && attr->detached;
	*out = t;
	return 0;
}

void asx_asc_thread_release(struct asx_asc_thread *t)
{
	if (!t || __atomic_load_n(&t->state, __ATOMIC_RELAXED) != T_NEW)
		return;
	asx__ctx_release(&t->ctx);
	asx__stack_put(t->stack);
	free(t);
}

/* @a's policy's admit op, under @a's lock: refused, @t's slot is as before. */
static int pol_admit(struct asx_asc *a, struct asx_asc_thread *t, const struct asx_qos *q,
		     bool change)
{
	unsigned char keep[ASX_ASC_POLICY_SLOT_SIZE];
	int r;

	memcpy(keep, t->pslot, sizeof(keep));
	r = POL_CALL(a, admit, t, q, change);
	if (r)
		memcpy(t->pslot, keep, sizeof(keep));
	return r;
}

/* @a's policy's leave op (optional); under @a's lock. */
static void pol_leave(struct asx_asc *a, struct asx_asc_thread *t, enum asx_asc_leave why)
{
	if (POL_HAS(a, leave))
		POL_CALL(a, leave, t, why);
}

static int check_qos(const struct asx_asc *a, const struct asx_qos *q)
{
	if (!q)
		return a->ops->flags & ASX_ASC_POLICY_QOS_OPTIONAL ? 0 : -EINVAL;
	if (q->schema != a->ops->schema || q->size < sizeof(*q))
		return -EINVAL;
	return 0;
}

/* @a's list of its threads (for debuggers); under @a's lock.  A thread is
 * on one list at a time: all_next/all_prev are its only links. */
static void thr_list_add(struct asx_asc *a, struct asx_asc_thread *t)
{
	t->all_prev = NULL;
	t->all_next = a->threads;
	if (a->threads)
		a->threads->all_prev = t;
	a->threads = t;
}

static void thr_list_del(struct asx_asc *a, struct asx_asc_thread *t)
{
	if (t->all_prev)
		t->all_prev->all_next = t->all_next;
	else
		a->threads = t->all_next;
	if (t->all_next)
		t->all_next->all_prev = t->all_prev;
	t->all_next = t->all_prev = NULL;
}

/* A thread joins or leaves @a: its count and its list; under @a's lock. */
static void thr_link(struct asx_asc *a, struct asx_asc_thread *t)
{
	a->nthreads++;
	thr_list_add(a, t);
}

static void thr_unlink(struct asx_asc *a, struct asx_asc_thread *t)
{
	a->nthreads--;
	thr_list_del(a, t);
}

int asx_asc_thread_put(struct asx_asc *a, struct asx_asc_thread *t,
		       const struct asx_qos *qos)
{
	int r;

	if (!a || !t || __atomic_load_n(&t->state, __ATOMIC_RELAXED) != T_NEW)
		return -EINVAL;
	r = check_qos(a, qos);
	if (r)
		return r;
	lock_np(&a->lock);
	r = pol_admit(a, t, qos, false);
	if (!r) {
		thr_link(a, t);
		t->asc = a;
	}
	unlock_np(&a->lock);
	if (r)
		return r;
	ASX_PROBE2(asc_thread_put, a, t);
	if (POL_PER_THREAD(a)) {
		r = asx__vp_spawn(a, t, false, false);
		if (r) {
			lock_np(&a->lock);
			pol_leave(a, t, ASX_ASC_LEAVE_UNPUT);
			thr_unlink(a, t);
			unlock_np(&a->lock);
			t->asc = NULL;
			return r;
		}
	}
	__atomic_store_n(&t->state, T_BLOCKED, __ATOMIC_RELAXED);
	asx__wake(t);
	return 0;
}

int asx_asc_thread_spawn(struct asx_asc *a, const struct asx_qos *qos, asx_asc_thread_fn fn,
			 void *arg, const struct asx_asc_thread_opts *attr,
			 struct asx_asc_thread **out)
{
	struct asx_asc_thread *t;
	int r = asx_asc_thread_create(&t, fn, arg, attr);
	bool det;

	if (r)
		return r;
	det = t->detached;	/* read through the size check */
	if (out && !det)
		*out = t;
	r = asx_asc_thread_put(a, t, qos);
	if (r) {
		asx_asc_thread_release(t);
		if (out && !det)
			*out = NULL;
	}
	return r;
}

struct asx_asc_thread *asx_asc_thread_self(void)
{
	return asx__self();
}

struct asx_asc *asx_asc_thread_asc(const struct asx_asc_thread *t)
{
	return t ? t->asc : NULL;
}

const char *asx_asc_thread_name(const struct asx_asc_thread *t)
{
	return t ? t->name : NULL;
}

static void thread_end(struct asx_asc_thread *self) __attribute__((noreturn));

static void thread_main(void *xfer, void *param)
{
	struct asx_asc_thread *self = param;

	asx__ctx_started();
	finish_switch(xfer);
	leave_sched(self);
	for (;;) {
		self->ret = self->fn(self->arg);
		if (!POL_HAS(self->asc, job_done))
			break;
		/* periodic: wait for the next release, then run the entry again */
		struct asx_asc *a = self->asc;
		struct asx_vp *wk[2];
		uint64_t rel;
		int k, n;

		enter_sched(self->vp);
		spin_lock(&a->lock);
		rel = POL_CALL(a, job_done, self);
		n = asx__pol_activation(a, VPEV_JOB);
		k = n > 0 ? asx__activate_n(a, n, NULL, wk, 2, NULL) : 0;
		if (n < 0)
			self->vp->passivate = 1;
		spin_unlock(&a->lock);
		asx__wake_list(wk, k);
		leave_sched(self);
		if (!rel)
			break;
		if (rel > asx_now_ns()) {
			struct timespec ts = { (time_t)(rel / ASX_NSEC_PER_SEC),
					       (long)(rel % ASX_NSEC_PER_SEC) };

			while (asx_asc_thread_sleep_until(&ts) == -EINTR)
				;
		}
	}
	thread_end(self);
}

void asx_asc_thread_exit(void *ret)
{
	struct asx_asc_thread *self = asx__self();

	if (!self)
		pthread_exit(ret);
	self->ret = ret;
	thread_end(self);
}

static void thread_end(struct asx_asc_thread *self)
{
	struct asx_asc *a = self->asc;
	struct asx_vp *vp;
	struct asx_asc_thread *next = NULL;
	bool locked;

	/* still an ordinary user thread here: destructors may wait */
	asx__fls_exit(self);
	asx__sigs_exit(self);
	for (int i = 0; i < ASX_ASC_THREAD_TIMERS; i++)
		asx__timer_del(&self->utimers[i].node);
	/* after the last point that may take a preemption (and move us) */
	vp = self->vp;
	enter_sched(vp);
	spin_lock(&a->lock);
	pol_leave(a, self, ASX_ASC_LEAVE_END);
	thr_unlink(a, self);
	spin_unlock(&a->lock);
	ASX_PROBE2(asc_thread_end, a, self);
	__atomic_store_n(&self->state, T_DEAD, __ATOMIC_RELAXED);
	self->dead = true;	/* read by finish_switch on this VP only */
	SCHED_FUZZ();
	locked = mode_locked();
	if (locked)
		spin_lock(&a->lock);
	asx__inbox_drain(a);
	if (!vp->passivate && !vp->bound)
		next = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, NULL);
	if (locked)
		spin_unlock(&a->lock);
	__atomic_store_n(&vp->nswitch, vp->nswitch + 1, __ATOMIC_RELAXED);	/* read by asx_asc_switches */
	if (next && !ctx_saved(next))
		next = asx__vp_handoff(vp, next);
	if (next) {
		__atomic_store_n(&vp->cur, next, __ATOMIC_RELAXED);	/* asx_asc_snapshot() reads it */
		__atomic_store_n(&next->vp, vp, __ATOMIC_RELAXED);	/* asx_asc_signal() reads it */
		__atomic_store_n(&next->state, T_RUNNING, __ATOMIC_RELAXED);
		asx__ctx_exit_to(&self->ctx, &next->ctx, self);
	}
	__atomic_store_n(&vp->cur, NULL, __ATOMIC_RELAXED);	/* asx_asc_snapshot */
	asx__ctx_exit_to(&self->ctx, &vp->ctx, self);
}

static void thread_free(struct asx_asc_thread *t)
{
	free(t);
}

int asx_asc_thread_join(struct asx_asc_thread *t, void **ret)
{
	struct asx_waiter w = { .t = asx__self() };

	if (!t || t == w.t)
		return -EINVAL;
	lock_np(&t->jlock);
	if (t->detached || t->joined) {
		unlock_np(&t->jlock);
		return -EINVAL;
	}
	t->joined = true;
	if (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
		w.next = t->joiners;
		t->joiners = &w;
		asx__wait(&w, &t->jlock, NULL);
	} else {
		unlock_np(&t->jlock);
	}
	/* asx__reap() released jlock after setting done; take it once more so its
	 * last touch of @t is ordered before the free */
	lock_np(&t->jlock);
	unlock_np(&t->jlock);
	if (ret)
		*ret = t->ret;
	thread_free(t);
	return 0;
}

/* ---------------------------------------------------------------- thread_change */

int asx_asc_thread_change(struct asx_asc *to, const struct asx_qos *qos)
{
	struct asx_asc_thread *self = asx__self();
	unsigned char slot_from[ASX_ASC_POLICY_SLOT_SIZE], slot_to[ASX_ASC_POLICY_SLOT_SIZE];
	struct asx_asc *from;
	int r;

	if (!self)
		return -EPERM;
	from = self->asc;
	if (!to)
		to = from;
	r = check_qos(to, qos);
	if (r)
		return r;
	if (to == from) {
		lock_np(&from->lock);
		r = pol_admit(from, self, qos, true);
		unlock_np(&from->lock);
		if (!r)
			asx_asc_thread_yield();	/* the new QoS takes effect */
		return r;
	}
	if (POL_PER_THREAD(to) || POL_PER_THREAD(from))
		return -EOPNOTSUPP;
	/*
	 * Not preemptible until we are off this VP: a preemption between
	 * leaving @from and the switch would queue us in @from again (PRIO
	 * would cache one of its levels in us), then we would be queued in
	 * @to as well.
	 */
	np_enter();
	memcpy(slot_from, self->pslot, sizeof(slot_from));
	spin_lock(&to->lock);
	r = pol_admit(to, self, qos, false);
	if (!r)
		to->nthreads++;
	spin_unlock(&to->lock);
	if (r) {
		np_leave(true);
		return r;
	}
	/*
	 * The slot is @to's now; @from's policy sees its own view of it as
	 * it leaves (the thread runs, on no run queue: nobody else reads it).
	 */
	memcpy(slot_to, self->pslot, sizeof(slot_to));
	memcpy(self->pslot, slot_from, sizeof(slot_from));
	spin_lock(&from->lock);
	pol_leave(from, self, ASX_ASC_LEAVE_MIGRATE);
	thr_list_del(from, self);
	from->nthreads--;
	memcpy(self->pslot, slot_to, sizeof(slot_to));
	spin_unlock(&from->lock);
	/* on @to's list only once off @from's: the two share the links */
	spin_lock(&to->lock);
	thr_list_add(to, self);
	spin_unlock(&to->lock);
	ASX_PROBE3(asc_migrate, from, to, self);
	/* leave this VP and become runnable in @to: like blocking, and the
	 * wake-up is ours to give */
	__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
	struct asx_vp *vp = self->vp;
	struct asx_asc_thread *next;
	bool locked;

	enter_sched(vp);
	np_leave(false);	/* in_sched holds preemption off from here */
	__atomic_store_n(&self->state, T_BLOCKED, __ATOMIC_RELAXED);
	locked = mode_locked();
	if (locked)
		spin_lock(&from->lock);
	asx__inbox_drain(from);
	next = vp->passivate ? NULL : POL_CALL(from, pick_next, (struct asx_asc_vp *)vp, NULL);
	if (locked)
		spin_unlock(&from->lock);
	self->asc = to;
	SCHED_FUZZ();
	asx__wake(self);	/* queued in @to; runs once our context is saved */
	switch_to(vp, self, next);
	leave_sched(self);
	return 0;
}

/* ---------------------------------------------------------------- thread timers */

int asx_asc_thread_timer_set(unsigned int idx, const struct timespec *first, uint64_t period,
			 void (*fn)(void *), void *arg)
{
	struct asx_asc_thread *self = asx__self();
	struct utimer *u;

	if (!self)
		return -EPERM;
	if (idx >= ASX_ASC_THREAD_TIMERS || (first && !fn))
		return -EINVAL;
	u = &self->utimers[idx];
	asx__timer_del(&u->node);
	__atomic_and_fetch(&self->utimer_pending, ~(1u << idx), __ATOMIC_RELAXED);
	if (!first)
		return 0;
	u->fn = fn;
	u->arg = arg;
	u->period = period;
	u->node.kind = TN_UTIMER;
	u->node.t = self;
	u->node.timer = idx;
	u->node.when = asx_timespec_ns(first);
	asx__timer_add(&u->node);
	return 0;
}

uint64_t asx_asc_thread_deadline(void)
{
	struct asx_asc_thread *self = asx__self();

	struct asx_asc *a;
	uint64_t d;

	if (!self)
		return 0;
	/* the policy's op runs inside the scheduler (asx/asc_policy.h) */
	a = self->asc;
	if (!POL_HAS(a, deadline))
		return 0;
	lock_np(&a->lock);
	d = POL_CALL(a, deadline, self);
	unlock_np(&a->lock);
	return d;
}
