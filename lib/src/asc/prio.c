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

#include <asx/asc_policy.h>

/* libasx's own: the registry names it "prio" (asc.c) */
extern const struct asx_asc_policy_ops asx__prio_ops;

#ifndef likely
#define likely(x)	__builtin_expect(!!(x), 1)
#endif

/* A thread's policy slot: its run-queue link, its level, its priority. */
struct pslot {
	struct pslot *next;
	struct level *level;	/* cached: the level of prio in this ASC */
	int prio;
};
_Static_assert(sizeof(struct pslot) <= ASX_ASC_POLICY_SLOT_SIZE, "policy slot");

static inline struct pslot *slot(struct asx_asc_thread *t)
{
	return asx_asc_thread_slot(t);
}

struct level {
	int prio;
	struct pslot *head, *tail;
	struct level *next;	/* lower priority */
};

/* threads running shorter than this between scheduling points are
 * switching, not computing (the surplus-VP rule, ASX_ASC_VPEV_WINDOW) */
#define BURST_NS	1000ULL

struct prio_state {
	struct level *levels;
	unsigned int count;	/* queued threads */
};

static int prio_admit(struct asx_asc *a, void *st, struct asx_asc_thread *t,
		      const struct asx_qos *q, bool change)
{
	const struct asx_prio_qos *pq = (const struct asx_prio_qos *)q;

	(void)a;
	(void)st;
	if (q->size < sizeof(*pq))
		return -EINVAL;
	slot(t)->prio = pq->priority;
	if (!change)
		slot(t)->level = NULL;	/* the slot was another policy's */
	return 0;
}

static struct level *level_of(struct prio_state *s, struct pslot *t)
{
	struct level *l = t->level, **pp, *n;

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
	t->level = l;
	return l;
}

static inline void push(struct level *l, struct pslot *t)
{
	t->next = NULL;
	if (l->tail)
		l->tail->next = t;
	else
		l->head = t;
	l->tail = t;
}

static void prio_enqueue(struct asx_asc *a, void *st, struct asx_asc_thread *th)
{
	struct prio_state *s = st;
	struct pslot *t = slot(th);

	(void)a;
	push(level_of(s, t), t);
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

/* The general case: store @old (may be NULL), take the head of the top level. */
static __attribute__((noinline)) struct pslot *schedule_slow(struct prio_state *s,
							     struct pslot *old)
{
	struct level *l;
	struct pslot *t;

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
			l->head = t->next;
			if (!l->head)
				l->tail = NULL;
			__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
			return t;
		}
	}
	return NULL;
}

static struct asx_asc_thread *prio_pick(struct asx_asc *a, void *st, struct asx_asc_vp *vp,
				       struct asx_asc_thread *cur)
{
	struct prio_state *s = st;
	struct pslot *old = cur ? slot(cur) : NULL, *t;
	struct level *l;

	(void)a;
	(void)vp;
	/*
	 * The yield: old's level is the top one (levels are never freed, so
	 * one above it would be there even empty): rotate it.  The count
	 * does not change, nor does anything else.
	 */
	l = old ? old->level : NULL;
	if (likely(l && l == s->levels && l->prio == old->prio)) {
		t = l->head;
		if (!t)
			return cur;	/* alone at the top */
		l->head = t->next;
		old->next = NULL;
		if (l->head)
			l->tail->next = old;
		else
			l->head = old;
		l->tail = old;
		return asx_asc_slot_thread(t);
	}
	t = schedule_slow(s, old);
	return t ? asx_asc_slot_thread(t) : NULL;
}

static unsigned int prio_nrunnable(struct asx_asc *a, void *st)
{
	(void)a;
	return __atomic_load_n(&((struct prio_state *)st)->count, __ATOMIC_RELAXED);
}

static int prio_activation(struct asx_asc *a, void *st, enum asx_asc_vp_event ev)
{
	struct prio_state *s = st;
	struct asx_asc_vp_info v;

	asx_asc_vp_info(a, &v);
	switch (ev) {
	case ASX_ASC_VPEV_RUNNABLE:
		/*
		 * A running VP may well get round to it: one more VP only if
		 * it does not (a CPU-bound thread holds it).  Threads that
		 * yield to each other then stay on one VP, which is what
		 * they run fastest on.
		 */
		if (!s->count || v.running >= v.target)
			return 0;
		return v.running ? ASX_ASC_ACT_LATER : 1;
	case ASX_ASC_VPEV_BLOCKED:
		return s->count && v.running < v.target ? 1 : 0;
	case ASX_ASC_VPEV_UNBLOCKED:
		return v.running > v.target ? -1 : 0;
	case ASX_ASC_VPEV_WINDOW: {
		/*
		 * Surplus VPs: r VPs made d dispatches in the window.  When
		 * the threads ran less than BURST_NS between scheduling
		 * points on average (they are switching, not computing) and
		 * r - 1 VPs would still get round the queue twice in a window
		 * (so the deferred check above would not bring the VP back),
		 * the extra VP only adds cross-CPU traffic on the run queue:
		 * give one back.
		 */
		uint64_t r = v.running, d = v.window_dispatches;
		uint64_t q = s->count ? s->count : 1;

		if (r >= 2 && d >= 2 * r * q && d * BURST_NS >= v.window_ns * r)
			return -1;
		return 0;
	}
	default:
		return 0;
	}
}

static void prio_fini(struct asx_asc *a, void *st)
{
	struct prio_state *s = st;
	struct level *l, *n;

	for (l = s->levels; l; l = n) {
		n = l->next;
		free(l);
	}
}

const struct asx_asc_policy_ops asx__prio_ops = {
	.sz = sizeof(struct asx_asc_policy_ops),
	.name = "prio",
	.schema = ASX_QOS_PRIO,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.state_size = sizeof(struct prio_state),
	.fini = prio_fini,
	.admit = prio_admit,
	.enqueue = prio_enqueue,
	.pick_next = prio_pick,
	.nrunnable = prio_nrunnable,
	.activation = prio_activation,
};
