// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * direct.c - DIRECT: one VP per thread, made when the thread is put and
 * ended with it, so users get kernel threads (the paper's 4.1.2).  The
 * run queue is one flag per thread; a VP only ever runs its own thread,
 * and yield hands the CPU to the OS scheduler.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>

#include "asc/asc_impl.h"

struct direct_state {
	unsigned int count;
};

static int direct_admit(struct asx_asc *a, struct asx_asc_thread *t, const struct asx_qos *q,
			bool change)
{
	(void)a;
	(void)t;
	(void)change;
	if (q && q->size < sizeof(struct asx_direct_qos))
		return -EINVAL;
	return 0;
}

static void direct_leave(struct asx_asc *a, struct asx_asc_thread *t)
{
	(void)a;
	(void)t;
}

static void direct_enqueue(struct asx_asc *a, struct asx_asc_thread *t)
{
	struct direct_state *s = a->pstate;

	t->queued = 1;
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

static struct asx_asc_thread *direct_schedule(struct asx_asc *a, struct asx_vp *vp,
					  struct asx_asc_thread *old)
{
	struct direct_state *s = a->pstate;
	struct asx_asc_thread *t = vp->bound;

	if (old)
		return old;
	if (t && t->queued) {
		t->queued = 0;
		__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
		return t;
	}
	return NULL;
}

static unsigned int direct_nrunnable(struct asx_asc *a)
{
	return __atomic_load_n(&((struct direct_state *)a->pstate)->count, __ATOMIC_RELAXED);
}

static int direct_activation(struct asx_asc *a, enum vp_event ev)
{
	/* each thread has its VP: the runtime wakes exactly that one */
	(void)a;
	(void)ev;
	return 0;
}

const struct asx_asc_policy asx_asc_direct = {
	.name = "direct",
	.schema = ASX_QOS_DIRECT,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.vp_per_thread = true,
	.state_size = sizeof(struct direct_state),
	.admit = direct_admit,
	.leave = direct_leave,
	.enqueue = direct_enqueue,
	.schedule = direct_schedule,
	.nrunnable = direct_nrunnable,
	.activation = direct_activation,
};
