// SPDX-License-Identifier: GPL-2.0
/*
 * The pipe driver: two Streams (ASX_IOC_PIPE), each one's write side turned
 * up the other's read side. Closing one end hangs the other up.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"

/* Serialises connecting and cutting pipe ends (both ends' peer pointers). */
static DEFINE_MUTEX(asx_pipe_lock);

/* A pipe end's FLUSHW empties what the other end would read. */
static void pipe_wput(struct asx_queue *q, struct asx_msg *mp)
{
	u8 flags = asx_drv_flush_flags(mp);
	struct asx_msg *dup;

	if (mp->type == ASX_M_FLUSH && (flags & ASX_FLUSHW)) {
		asx_flushq(q, flags & ASX_FLUSHBAND, asx_blen(mp) > 1 ? mp->rptr[1] : 0);
		dup = asx_copymsg(mp, GFP_ATOMIC | __GFP_ACCOUNT);
		if (dup) {
			dup->rptr[0] = (flags & ~ASX_FLUSHW) | ASX_FLUSHR;
			asx_putnext(q, dup);
		}
		mp->rptr[0] = flags & ~ASX_FLUSHW;
	}
	if (asx_drv_ctl(q, mp))
		return;
	asx_drv_forward(q, mp);
}

/* Cuts @st from its other end, which is hung up; the caller waits for RCU. */
static void pipe_detach(struct asx_stream *st)
{
	struct asx_stream *p;

	mutex_lock(&asx_pipe_lock);
	p = rcu_dereference_protected(st->peer, lockdep_is_held(&asx_pipe_lock));
	if (p) {
		RCU_INIT_POINTER(p->dwq.next, NULL);
		RCU_INIT_POINTER(p->drq.prev, NULL);
		RCU_INIT_POINTER(p->peer, NULL);
		RCU_INIT_POINTER(st->dwq.next, NULL);
		RCU_INIT_POINTER(st->drq.prev, NULL);
		RCU_INIT_POINTER(st->peer, NULL);
		asx_head_hangup(p);
	}
	mutex_unlock(&asx_pipe_lock);
}

const struct asx_driver asx_drv_pipe = {
	.name	= "pipe",
	.rinit	= { .put = asx_drv_rput },
	.winit	= { .put = pipe_wput, .srv = asx_drv_forward_srv },
	.detach	= pipe_detach,
};

/*
 * Makes @a (a fresh Stream) and @b (a new one, not yet reachable) the two
 * ends of a pipe; -EBUSY if @a is not fresh.
 */
int asx_pipe_connect(struct asx_stream *a, struct asx_stream *b)
{
	mutex_lock(&a->cfg);
	if (!asx_drv_fresh(a)) {
		mutex_unlock(&a->cfg);
		return -EBUSY;
	}
	mutex_lock(&asx_pipe_lock);
	a->drv = &asx_drv_pipe;
	b->drv = &asx_drv_pipe;
	WRITE_ONCE(a->dwq.qi, &asx_drv_pipe.winit);
	WRITE_ONCE(b->dwq.qi, &asx_drv_pipe.winit);
	WRITE_ONCE(a->drq.qi, &asx_drv_pipe.rinit);
	WRITE_ONCE(b->drq.qi, &asx_drv_pipe.rinit);
	a->dwq.name = asx_drv_pipe.name;
	a->drq.name = asx_drv_pipe.name;
	b->dwq.name = asx_drv_pipe.name;
	b->drq.name = asx_drv_pipe.name;
	rcu_assign_pointer(a->dwq.next, &b->drq);
	rcu_assign_pointer(b->dwq.next, &a->drq);
	rcu_assign_pointer(a->drq.prev, &b->dwq);
	rcu_assign_pointer(b->drq.prev, &a->dwq);
	rcu_assign_pointer(a->peer, b);
	rcu_assign_pointer(b->peer, a);
	mutex_unlock(&asx_pipe_lock);
	mutex_unlock(&a->cfg);
	return 0;
}
