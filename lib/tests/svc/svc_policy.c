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

#include "../fifoq.h"

static int fifo_admit(struct asx_asc *asc, void *st, struct asx_asc_thread *t,
		      const struct asx_qos *qos, bool change)
{
	(void)asc;
	(void)st;
	(void)t;
	(void)qos;
	(void)change;
	return 0;
}

static void fifo_enqueue(struct asx_asc *asc, void *st, struct asx_asc_thread *t)
{
	(void)asc;
	fifoq_push(st, asx_asc_thread_slot(t));	/* the slot is the link */
}

static struct asx_asc_thread *fifo_pick(struct asx_asc *asc, void *st, struct asx_asc_vp *vp,
					struct asx_asc_thread *cur)
{
	struct fifoq_link *n;

	(void)asc;
	(void)vp;
	if (cur)
		fifoq_push(st, asx_asc_thread_slot(cur));
	n = fifoq_pop(st);
	return n ? asx_asc_slot_thread(n) : NULL;
}

static unsigned int fifo_nrunnable(struct asx_asc *asc, void *st)
{
	(void)asc;
	return fifoq_count(st);
}

static const struct asx_asc_policy_ops fifo_ops = {
	.sz = sizeof(fifo_ops),
	.name = "fifo",		/* registered under the directive's NAME */
	.schema = ASX_QOS_USER + 0x77,
	.flags = ASX_ASC_POLICY_QOS_OPTIONAL,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.state_size = sizeof(struct fifoq),
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
