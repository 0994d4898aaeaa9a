// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svc_policy.c - ASC policies for svc.conf's "dynamic NAME ASC_Policy"
 * (test_svc_policy): a FIFO policy that admits threads with no QoS (a
 * Stream's Tasks get none), behind a stamped factory, and factories the
 * loader must refuse: one without a stamp, one stamped for another ABI,
 * one returning NULL, and a service factory's stamp.
 */
#include <errno.h>
#include <stddef.h>

#include <asx/asc_policy.h>
#include <asx/svc.h>

struct fifo_slot {
	struct fifo_slot *next;
};

struct fifo_state {
	struct fifo_slot *head, *tail;
	unsigned int count;
};

static int fifo_admit(struct asx_asc *asc, void *st, struct asx_asc_thread *t,
		      const struct asx_qos *qos, bool change)
{
	(void)asc;
	(void)st;
	(void)qos;
	(void)change;
	((struct fifo_slot *)asx_asc_thread_slot(t))->next = NULL;
	return 0;
}

static void fifo_enqueue(struct asx_asc *asc, void *st, struct asx_asc_thread *t)
{
	struct fifo_state *s = st;
	struct fifo_slot *n = asx_asc_thread_slot(t);

	(void)asc;
	n->next = NULL;
	if (s->tail)
		s->tail->next = n;
	else
		s->head = n;
	s->tail = n;
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

static struct asx_asc_thread *fifo_pick(struct asx_asc *asc, void *st, struct asx_asc_vp *vp,
					struct asx_asc_thread *cur)
{
	struct fifo_state *s = st;
	struct fifo_slot *n;

	(void)vp;
	if (cur)
		fifo_enqueue(asc, st, cur);
	n = s->head;
	if (!n)
		return NULL;
	s->head = n->next;
	if (!s->head)
		s->tail = NULL;
	__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
	return asx_asc_slot_thread(n);
}

static unsigned int fifo_nrunnable(struct asx_asc *asc, void *st)
{
	(void)asc;
	return __atomic_load_n(&((struct fifo_state *)st)->count, __ATOMIC_RELAXED);
}

static const struct asx_asc_policy_ops fifo_ops = {
	.sz = sizeof(fifo_ops),
	.name = "fifo",		/* registered under the directive's NAME */
	.schema = ASX_QOS_USER + 0x77,
	.flags = ASX_ASC_POLICY_QOS_OPTIONAL,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.state_size = sizeof(struct fifo_state),
	.admit = fifo_admit,
	.enqueue = fifo_enqueue,
	.pick_next = fifo_pick,
	.nrunnable = fifo_nrunnable,
};

ASX_ASC_POLICY_FACTORY(make_fifo)(void)
{
	return &fifo_ops;
}

/* no stamp */
const struct asx_asc_policy_ops *make_unstamped(void);
const struct asx_asc_policy_ops *make_unstamped(void)
{
	return &fifo_ops;
}

/* stamped for an ASC policy ABI this libasx does not have */
extern const unsigned int make_future_asx_svc_policy_abi;
const unsigned int make_future_asx_svc_policy_abi = 99;
const struct asx_asc_policy_ops *make_future(void);
const struct asx_asc_policy_ops *make_future(void)
{
	return &fifo_ops;
}

ASX_ASC_POLICY_FACTORY(make_null)(void)
{
	return NULL;
}

/* a service object's factory, named where a policy's is wanted */
ASX_SVC_FACTORY(make_service)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	(void)ops;
	(void)priv;
	return -ENOSYS;		/* never called */
}
