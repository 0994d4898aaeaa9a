// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * rr2.c - the two-level round-robin policy of rr2.h.
 *
 * Locking (asx/asc_policy.h): every op runs serialised with the others on
 * the same ASC, inside the scheduler, so the run queues below need no lock
 * of their own; nrunnable may run without it, so the count is read and
 * written with relaxed atomics.  admit touches the thread's slot only.
 */
#include <errno.h>

#include "rr2.h"

/* A thread's links and level, in its policy slot. */
struct rr2_slot {
	struct rr2_slot *next;
	int level;
};
_Static_assert(sizeof(struct rr2_slot) <= ASX_ASC_POLICY_SLOT_SIZE, "policy slot");

struct rr2_state {
	struct rr2_slot *head[2], *tail[2];
	unsigned int count;	/* queued */
	unsigned int fg_run;	/* foreground dispatches since a background one */
};

static struct rr2_slot *slot(struct asx_asc_thread *t)
{
	return asx_asc_thread_slot(t);
}

static int rr2_admit(struct asx_asc *asc, void *st, struct asx_asc_thread *t,
		     const struct asx_qos *qos, bool change)
{
	const struct rr2_qos *q = (const struct rr2_qos *)qos;

	(void)asc;
	(void)st;
	(void)change;
	if (qos->size < sizeof(*q) || q->level < 0 || q->level > 1)
		return -EINVAL;
	slot(t)->level = q->level;
	return 0;
}

static void push(struct rr2_state *s, struct rr2_slot *t)
{
	int l = t->level;

	t->next = NULL;
	if (s->tail[l])
		s->tail[l]->next = t;
	else
		s->head[l] = t;
	s->tail[l] = t;
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

static struct rr2_slot *pop(struct rr2_state *s, int l)
{
	struct rr2_slot *t = s->head[l];

	s->head[l] = t->next;
	if (!s->head[l])
		s->tail[l] = NULL;
	__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
	return t;
}

static void rr2_enqueue(struct asx_asc *asc, void *st, struct asx_asc_thread *t)
{
	(void)asc;
	push(st, slot(t));
}

static struct asx_asc_thread *rr2_pick(struct asx_asc *asc, void *st, struct asx_asc_vp *vp,
				       struct asx_asc_thread *cur)
{
	struct rr2_state *s = st;

	(void)asc;
	(void)vp;
	if (cur) {
		if (!s->count)
			return cur;	/* alone: keep running */
		push(s, slot(cur));
	}
	if (s->head[1] && (!s->head[0] || s->fg_run >= RR2_RATIO)) {
		s->fg_run = 0;
		return asx_asc_slot_thread(pop(s, 1));
	}
	if (!s->head[0])
		return NULL;
	if (s->head[1])
		s->fg_run++;
	else
		s->fg_run = 0;
	return asx_asc_slot_thread(pop(s, 0));
}

static unsigned int rr2_nrunnable(struct asx_asc *asc, void *st)
{
	(void)asc;
	return __atomic_load_n(&((struct rr2_state *)st)->count, __ATOMIC_RELAXED);
}

static const struct asx_asc_policy_ops rr2_ops = {
	.sz = sizeof(rr2_ops),
	.name = RR2_NAME,
	.schema = RR2_SCHEMA,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.state_size = sizeof(struct rr2_state),
	.admit = rr2_admit,
	.enqueue = rr2_enqueue,
	.pick_next = rr2_pick,
	.nrunnable = rr2_nrunnable,
};

int rr2_register(void)
{
	return asx_asc_policy_register(&rr2_ops);
}

/* For the Service Configurator: "dynamic rr2 ASC_Policy * ./rr2.so:rr2_factory()". */
ASX_ASC_POLICY_FACTORY(rr2_factory)(void)
{
	return &rr2_ops;
}
