// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sync.c - ASC-aware mutex, condition, semaphore and barrier.  A caller
 * that must wait queues a waiter (on its own stack) and blocks: a user
 * thread is switched out and its VP runs other threads; a plain pthread
 * sleeps on the waiter's futex word.  Wakers claim a waiter with one CAS
 * (the same claim a timeout makes), so a waiter is woken exactly once.
 * The mutex and the semaphore hand ownership / the unit straight to the
 * waiter they wake (FIFO, no barging, no thundering herd).
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>

#include "asc/sched_impl.h"
#include "core/futex.h"
#include "core/probes.h"

static void wq_push(struct asx__waitq *q, struct asx_waiter *w)
{
	w->next = NULL;
	if (q->tail)
		((struct asx_waiter *)q->tail)->next = w;
	else
		q->head = w;
	q->tail = w;
}

static struct asx_waiter *wq_pop(struct asx__waitq *q)
{
	struct asx_waiter *w = q->head;

	if (w) {
		q->head = w->next;
		if (!q->head)
			q->tail = NULL;
	}
	return w;
}

static void wq_remove(struct asx__waitq *q, struct asx_waiter *w)
{
	struct asx_waiter *p = NULL, *c;

	for (c = q->head; c && c != w; c = c->next)
		p = c;
	if (!c)
		return;
	if (p)
		p->next = c->next;
	else
		q->head = c->next;
	if (q->tail == c)
		q->tail = p;
}

/* Wake the first waiter that can still be claimed; false if none. */
static bool wq_wake_one(struct asx__waitq *q, struct asx_waiter **who)
{
	struct asx_waiter *w;

	while ((w = wq_pop(q))) {
		struct asx_asc_thread *t = w->t;

		if (asx__claim_wake(w, W_WOKEN)) {
			if (who)
				*who = (struct asx_waiter *)t;
			return true;
		}
	}
	return false;
}

/* Block on @q (the caller holds *@lock); timeouts dequeue themselves. */
static int wq_wait(struct asx__waitq *q, int *lock, const struct timespec *abstime)
{
	struct asx_waiter w = { .t = asx__self() };
	int r;

	wq_push(q, &w);
	r = asx__wait(&w, lock, abstime);
	if (r == W_TIMEDOUT) {
		lock_np(lock);
		wq_remove(q, &w);
		unlock_np(lock);
		return -ETIMEDOUT;
	}
	return 0;
}

/* ---------------------------------------------------------------- mutex */

void asx_asc_mutex_init(struct asx_asc_mutex *m)
{
	*m = (struct asx_asc_mutex){ 0 };
}

static int mutex_lock(struct asx_asc_mutex *m, const struct timespec *abstime)
{
	void *self = asx__self();
	int r;

	if (!asx_timespec_valid(abstime))
		return -EINVAL;
	lock_np(&m->lock);
	if (!m->locked) {
		m->locked = 1;
		m->owner = self;
		unlock_np(&m->lock);
		ASX_PROBE3(asc_mutex_acquired, m, self, 0);
		return 0;
	}
	ASX_PROBE2(asc_mutex_block, m, self);
	/* on wake-up the unlocker has made us the owner */
	r = wq_wait(&m->q, &m->lock, abstime);
	ASX_PROBE3(asc_mutex_acquired, m, self, r);
	return r;
}

void asx_asc_mutex_lock(struct asx_asc_mutex *m)
{
	mutex_lock(m, NULL);
}

int asx_asc_mutex_timedlock(struct asx_asc_mutex *m, const struct timespec *abstime)
{
	return mutex_lock(m, abstime);
}

int asx_asc_mutex_trylock(struct asx_asc_mutex *m)
{
	void *self = asx__self();
	int r = -EBUSY;

	lock_np(&m->lock);
	if (!m->locked) {
		m->locked = 1;
		m->owner = self;
		r = 0;
	}
	unlock_np(&m->lock);
	if (!r)
		ASX_PROBE3(asc_mutex_acquired, m, self, 0);
	return r;
}

void asx_asc_mutex_unlock(struct asx_asc_mutex *m)
{
	struct asx_waiter *who;

	ASX_PROBE1(asc_mutex_release, m);
	lock_np(&m->lock);
	if (wq_wake_one(&m->q, &who))
		m->owner = who;		/* handed over: stays locked */
	else
		m->locked = 0, m->owner = NULL;
	SCHED_FUZZ();
	unlock_np(&m->lock);
}

/* ---------------------------------------------------------------- cond */

void asx_asc_cond_init(struct asx_asc_cond *c)
{
	*c = (struct asx_asc_cond){ 0 };
}

int asx_asc_cond_timedwait(struct asx_asc_cond *c, struct asx_asc_mutex *m,
			   const struct timespec *abstime)
{
	int r;

	if (!asx_timespec_valid(abstime))
		return -EINVAL;
	lock_np(&c->lock);
	/* queued before the mutex goes: a signal after our unlock finds us */
	asx_asc_mutex_unlock(m);
	SCHED_FUZZ();
	r = wq_wait(&c->q, &c->lock, abstime);
	asx_asc_mutex_lock(m);
	return r;
}

int asx_asc_cond_wait(struct asx_asc_cond *c, struct asx_asc_mutex *m)
{
	return asx_asc_cond_timedwait(c, m, NULL);
}

void asx_asc_cond_signal(struct asx_asc_cond *c)
{
	lock_np(&c->lock);
	wq_wake_one(&c->q, NULL);
	unlock_np(&c->lock);
}

void asx_asc_cond_broadcast(struct asx_asc_cond *c)
{
	lock_np(&c->lock);
	while (wq_wake_one(&c->q, NULL))
		;
	unlock_np(&c->lock);
}

/* ---------------------------------------------------------------- semaphore */

void asx_asc_sem_init(struct asx_asc_sem *s, unsigned int value)
{
	*s = (struct asx_asc_sem){ 0 };
	s->value = value;
}

int asx_asc_sem_timedwait(struct asx_asc_sem *s, const struct timespec *abstime)
{
	if (!asx_timespec_valid(abstime))
		return -EINVAL;
	lock_np(&s->lock);
	if (s->value) {
		s->value--;
		unlock_np(&s->lock);
		return 0;
	}
	/* a post hands its unit to the waiter it wakes */
	return wq_wait(&s->q, &s->lock, abstime);
}

void asx_asc_sem_wait(struct asx_asc_sem *s)
{
	asx_asc_sem_timedwait(s, NULL);
}

int asx_asc_sem_trywait(struct asx_asc_sem *s)
{
	int r = -EAGAIN;

	lock_np(&s->lock);
	if (s->value) {
		s->value--;
		r = 0;
	}
	unlock_np(&s->lock);
	return r;
}

void asx_asc_sem_post(struct asx_asc_sem *s)
{
	lock_np(&s->lock);
	if (!wq_wake_one(&s->q, NULL))
		s->value++;
	unlock_np(&s->lock);
}

/* ---------------------------------------------------------------- barrier */

int asx_asc_barrier_init(struct asx_asc_barrier *b, unsigned int count)
{
	if (!count)
		return -EINVAL;
	*b = (struct asx_asc_barrier){ 0 };
	b->count = count;
	return 0;
}

int asx_asc_barrier_wait(struct asx_asc_barrier *b)
{
	lock_np(&b->lock);
	if (++b->arrived == b->count) {
		b->arrived = 0;
		b->cycle++;
		while (wq_wake_one(&b->q, NULL))
			;
		unlock_np(&b->lock);
		return 1;
	}
	wq_wait(&b->q, &b->lock, NULL);
	return 0;
}
