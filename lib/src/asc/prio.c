// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * prio.c - PRIO: non-preemptive priority round-robin (the paper's 4.1.2).
 *
 * QoS schema: struct asx_prio_qos { priority }.  Run queue: a list of
 * priority levels, highest first, each a FIFO; schedule(old) appends old
 * to its level and takes the head of the highest non-empty one.  Levels
 * are made on first use by the run-queue side (never by admission, which
 * runs under the lock while the single VP walks the queue without one).
 * VP activation: as many VPs as it takes to get round the run queue in
 * ACT_DELAY_NS, up to the concurrency level.  A thread becoming runnable
 * wakes an idle VP at once only when none runs; otherwise the sentinel
 * checks later whether the running VPs got round the queue.  A VP whose
 * threads only switch (short bursts) and that the others do not need is
 * given back (VPEV_WINDOW).  A VP entering a blocking call gets a
 * stand-in if threads are waiting; one coming back to a full ASC gives
 * its place up.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <stdlib.h>

#include "asc/asc_impl.h"

struct level {
	int prio;
	struct asx_asc_thread *head, *tail;
	struct level *next;	/* lower priority */
};

struct prio_state {
	struct level *levels;
	unsigned int count;	/* queued threads */
};

static int prio_admit(struct asx_asc *a, struct asx_asc_thread *t, const struct asx_qos *q,
		      bool change)
{
	const struct asx_prio_qos *pq = (const struct asx_prio_qos *)q;

	(void)a;
	if (q->size < sizeof(*pq))
		return -EINVAL;
	t->prio = pq->priority;
	if (!change)
		t->pq = NULL;	/* a level of the ASC it came from is not ours */
	return 0;
}

static void prio_leave(struct asx_asc *a, struct asx_asc_thread *t)
{
	(void)a;
	/* migrating: its cached level belongs to this ASC's run queue */
	t->pq = NULL;
}

static struct level *level_of(struct prio_state *s, struct asx_asc_thread *t)
{
	struct level *l = t->pq, **pp, *n;

	if (likely(l && l->prio == t->prio))
		return l;
	for (pp = &s->levels; (l = *pp) && l->prio > t->prio; pp = &l->next)
		;
	if (!l || l->prio != t->prio) {
		n = calloc(1, sizeof(*n));
		if (!n)
			abort();
		n->prio = t->prio;
		n->next = l;
		*pp = n;
		l = n;
	}
	t->pq = l;
	return l;
}

static inline void push(struct level *l, struct asx_asc_thread *t)
{
	t->rq_next = NULL;
	if (l->tail)
		l->tail->rq_next = t;
	else
		l->head = t;
	l->tail = t;
}

static void prio_enqueue(struct asx_asc *a, struct asx_asc_thread *t)
{
	struct prio_state *s = a->pstate;

	push(level_of(s, t), t);
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

/* The general case: store @old (may be NULL), take the head of the top level. */
static __attribute__((noinline)) struct asx_asc_thread *
schedule_slow(struct prio_state *s, struct asx_asc_thread *old)
{
	struct level *l;
	struct asx_asc_thread *t;

	if (old) {
		l = level_of(s, old);
		/* old is alone in the run queue */
		if (!s->count)
			return old;
		push(l, old);
		__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
	}
	for (l = s->levels; l; l = l->next) {
		t = l->head;
		if (t) {
			l->head = t->rq_next;
			if (!l->head)
				l->tail = NULL;
			__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
			return t;
		}
	}
	return NULL;
}

static struct asx_asc_thread *prio_schedule(struct asx_asc *a, struct asx_vp *vp,
					struct asx_asc_thread *old)
{
	struct prio_state *s = a->pstate;
	struct level *l;
	struct asx_asc_thread *t;

	(void)vp;
	/*
	 * The yield: old's level is the top one (levels are never freed, so
	 * one above it would be there even empty): rotate it.  The count
	 * does not change, nor does anything else.
	 */
	l = old ? old->pq : NULL;
	if (likely(l && l == s->levels && l->prio == old->prio)) {
		t = l->head;
		if (!t)
			return old;	/* alone at the top */
		l->head = t->rq_next;
		old->rq_next = NULL;
		if (l->head)
			l->tail->rq_next = old;
		else
			l->head = old;
		l->tail = old;
		return t;
	}
	return schedule_slow(s, old);
}

static unsigned int prio_nrunnable(struct asx_asc *a)
{
	return __atomic_load_n(&((struct prio_state *)a->pstate)->count, __ATOMIC_RELAXED);
}

static int prio_activation(struct asx_asc *a, enum vp_event ev)
{
	struct prio_state *s = a->pstate;

	switch (ev) {
	case VPEV_RUNNABLE:
		/*
		 * A running VP may well get round to it: one more VP only if
		 * it does not (a CPU-bound thread holds it).  Threads that
		 * yield to each other then stay on one VP, which is what
		 * they run fastest on.
		 */
		if (!s->count || asc_running(a) >= a->target)
			return 0;
		return asc_running(a) ? ACT_LATER : 1;
	case VPEV_BLOCKED:
		return s->count && asc_running(a) < a->target ? 1 : 0;
	case VPEV_UNBLOCKED:
		return asc_running(a) > a->target ? -1 : 0;
	case VPEV_WINDOW: {
		/*
		 * Surplus VPs: r VPs made d dispatches in the window.  When
		 * the threads ran less than ACT_BURST_NS between scheduling
		 * points on average (they are switching, not computing) and
		 * r - 1 VPs would still get round the queue twice in a window
		 * (so the deferred check above would not bring the VP back),
		 * the extra VP only adds cross-CPU traffic on the run queue:
		 * give one back.
		 */
		uint64_t r = asc_running(a), d = a->win_disp;
		uint64_t q = s->count ? s->count : 1;

		if (r >= 2 && d >= 2 * r * q && d * ACT_BURST_NS >= a->win_ns * r)
			return -1;
		return 0;
	}
	default:
		return 0;
	}
}

static void prio_fini(struct asx_asc *a)
{
	struct prio_state *s = a->pstate;
	struct level *l, *n;

	for (l = s->levels; l; l = n) {
		n = l->next;
		free(l);
	}
}

const struct asx_asc_policy asx_asc_prio = {
	.name = "prio",
	.schema = ASX_QOS_PRIO,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.state_size = sizeof(struct prio_state),
	.fini = prio_fini,
	.admit = prio_admit,
	.leave = prio_leave,
	.enqueue = prio_enqueue,
	.schedule = prio_schedule,
	.nrunnable = prio_nrunnable,
	.activation = prio_activation,
};
