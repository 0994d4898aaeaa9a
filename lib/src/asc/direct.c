// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * direct.c - DIRECT: one VP per thread, made when the thread is put and
 * ended with it, so users get kernel threads (the paper's 4.1.2).  The
 * run queue is one flag per thread; a VP only ever runs its own thread,
 * and yield hands the CPU to the OS scheduler.
 *
 * Written on the public policy interface (asx/asc_policy.h) only.  The
 * VP per thread is the runtime's (ASX_ASC_POLICY_VP_PER_THREAD): it makes
 * the VP at thread_put, wakes exactly that one, and yields to the OS.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>

#include <asx/asc_policy.h>

/* libasx's own: the registry names it "direct" (asc.c) */
extern const struct asx_asc_policy_ops asx__direct_ops;

struct direct_slot {
	int queued;
};
_Static_assert(sizeof(struct direct_slot) <= ASX_ASC_POLICY_SLOT_SIZE, "policy slot");

struct direct_state {
	unsigned int count;
};

static inline struct direct_slot *slot(struct asx_asc_thread *t)
{
	return asx_asc_thread_slot(t);
}

static int direct_admit(struct asx_asc *a, void *st, struct asx_asc_thread *t,
			const struct asx_qos *q, bool change)
{
	(void)a;
	(void)st;
	if (q && q->size < sizeof(struct asx_direct_qos))
		return -EINVAL;
	if (!change)
		slot(t)->queued = 0;
	return 0;
}

static void direct_enqueue(struct asx_asc *a, void *st, struct asx_asc_thread *t)
{
	struct direct_state *s = st;

	(void)a;
	slot(t)->queued = 1;
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

static struct asx_asc_thread *direct_pick(struct asx_asc *a, void *st, struct asx_asc_vp *vp,
					  struct asx_asc_thread *cur)
{
	struct direct_state *s = st;
	struct asx_asc_thread *t;

	(void)a;
	if (cur)
		return cur;
	t = asx_asc_vp_bound(vp);
	if (t && slot(t)->queued) {
		slot(t)->queued = 0;
		__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
		return t;
	}
	return NULL;
}

static unsigned int direct_nrunnable(struct asx_asc *a, void *st)
{
	(void)a;
	return __atomic_load_n(&((struct direct_state *)st)->count, __ATOMIC_RELAXED);
}

static int direct_activation(struct asx_asc *a, void *st, enum asx_asc_vp_event ev)
{
	/* each thread has its VP: the runtime wakes exactly that one */
	(void)a;
	(void)st;
	(void)ev;
	return 0;
}

const struct asx_asc_policy_ops asx__direct_ops = {
	.sz = sizeof(struct asx_asc_policy_ops),
	.name = "direct",
	.schema = ASX_QOS_DIRECT,
	.flags = ASX_ASC_POLICY_VP_PER_THREAD | ASX_ASC_POLICY_QOS_OPTIONAL,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.state_size = sizeof(struct direct_state),
	.admit = direct_admit,
	.enqueue = direct_enqueue,
	.pick_next = direct_pick,
	.nrunnable = direct_nrunnable,
	.activation = direct_activation,
};
