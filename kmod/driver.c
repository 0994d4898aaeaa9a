// SPDX-License-Identifier: GPL-2.0
/*
 * ASX drivers, the tail of a Stream: loop (the write side turned back up the
 * read side), null (a sink) and pipe (the write side turned up the other
 * end's read side); what every driver shares. The mux is in mux.c.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "stream.h"

/* Serialises connecting and cutting pipe ends (both ends' peer pointers). */
DEFINE_MUTEX(asx_pipe_lock);

static u8 flush_flags(const struct asx_msg *mp)
{
	return asx_blen(mp) ? mp->rptr[0] : 0;
}

/* Read side of every driver but mux: pass up. */
static void drv_rput(struct asx_queue *q, struct asx_msg *mp)
{
	asx_putnext(q, mp);
}

/* A driver's answer to M_FLUSH: flush its write queue, turn FLUSHR upwards. */
void asx_drv_flush(struct asx_queue *q, struct asx_msg *mp)
{
	u8 flags = flush_flags(mp);

	if (flags & ASX_FLUSHW)
		asx_flushq(q, flags & ASX_FLUSHBAND, asx_blen(mp) > 1 ? mp->rptr[1] : 0);
	if (flags & ASX_FLUSHR) {
		mp->rptr[0] = flags & ~ASX_FLUSHW;
		asx_qreply(q, mp);
	} else {
		asx_freemsg(mp);
	}
}

/* loop and pipe: the write queue's next is the read queue of this or the other end. */
static void loop_wput(struct asx_queue *q, struct asx_msg *mp)
{
	if (asx_drv_ctl(q, mp))
		return;
	asx_drv_forward(q, mp);
}

/* Sends the queued messages on while the queue ahead takes them. */
void asx_drv_forward_srv(struct asx_queue *q)
{
	struct asx_msg *mp;

	while ((mp = asx_getq(q))) {
		if (!asx_hipri(mp) && !asx_canputnext(q)) {
			asx_putbq(q, mp);
			break;
		}
		asx_putnext(q, mp);
	}
}

/* A pipe end's FLUSHW empties what the other end would read. */
static void pipe_wput(struct asx_queue *q, struct asx_msg *mp)
{
	u8 flags = flush_flags(mp);
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
	loop_wput(q, mp);
}

static void null_wput(struct asx_queue *q, struct asx_msg *mp)
{
	if (asx_drv_ctl(q, mp))
		return;
	asx_freemsg(mp);
}

const struct asx_driver asx_drv_loop = {
	.name	= "loop",
	.rinit	= { .put = drv_rput },
	.winit	= { .put = loop_wput, .srv = asx_drv_forward_srv },
};

const struct asx_driver asx_drv_null = {
	.name	= "null",
	.rinit	= { .put = drv_rput },
	.winit	= { .put = null_wput },
};

const struct asx_driver asx_drv_pipe = {
	.name	= "pipe",
	.rinit	= { .put = drv_rput },
	.winit	= { .put = pipe_wput, .srv = asx_drv_forward_srv },
};


/* Makes @a (a fresh loop Stream, cfg held) and @b (new) the two ends of a pipe. */
int asx_pipe_connect(struct asx_stream *a, struct asx_stream *b)
{
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
	return 0;
}

/* Cuts @st from its other end, which is hung up; the caller waits for RCU. */
void asx_pipe_disconnect(struct asx_stream *st)
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
