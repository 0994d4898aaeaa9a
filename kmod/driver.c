// SPDX-License-Identifier: GPL-2.0
/*
 * ASX drivers, the tail of a Stream: loop (the write side turned back up the
 * read side), null (a sink), pipe (the write side turned up the other end's
 * read side) and mux (messages routed to linked lower Streams by id).
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
static void drv_flush(struct asx_queue *q, struct asx_msg *mp)
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

/* What every driver does with FLUSH and IOCTL; true when it took @mp. */
static bool drv_ctl(struct asx_queue *q, struct asx_msg *mp)
{
	switch (mp->type) {
	case ASX_M_FLUSH:
		drv_flush(q, mp);
		return true;
	case ASX_M_IOCTL:
		asx_iocnak(q, mp, EINVAL);
		return true;
	}
	return false;
}

/* loop and pipe: the write queue's next is the read queue of this or the other end. */
static void loop_wput(struct asx_queue *q, struct asx_msg *mp)
{
	if (drv_ctl(q, mp))
		return;
	if (asx_hipri(mp) || (asx_queue_idle(q) && asx_canputnext(q)))
		asx_putnext(q, mp);
	else
		asx_putq(q, mp);
}

static void loop_wsrv(struct asx_queue *q)
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
	if (drv_ctl(q, mp))
		return;
	asx_freemsg(mp);
}

/* mux: both sides queue, so a chain never recurses from one Stream into another. */
static void mux_wput(struct asx_queue *q, struct asx_msg *mp)
{
	if (drv_ctl(q, mp))
		return;
	asx_putq(q, mp);
}

static struct asx_stream *mux_lower(struct asx_stream *st, u32 id)
{
	struct asx_stream *l;

	list_for_each_entry_rcu(l, &st->lowers, mux_node) {
		if (l->mux_id == id)
			return l;
	}
	return NULL;
}

static void mux_wsrv(struct asx_queue *q)
{
	struct asx_mux_hdr hdr;
	struct asx_stream *l;
	struct asx_msg *mp;

	while ((mp = asx_getq(q))) {
		if ((mp->type != ASX_M_PROTO && mp->type != ASX_M_PCPROTO) ||
		    asx_blen(mp) < sizeof(hdr)) {
			atomic64_inc(&q->drops);
			asx_freemsg(mp);
			continue;
		}
		memcpy(&hdr, mp->rptr, sizeof(hdr));
		rcu_read_lock();
		l = mux_lower(q->st, hdr.id);
		if (!l) {
			rcu_read_unlock();
			atomic64_inc(&q->drops);
			asx_freemsg(mp);
			continue;
		}
		if (!asx_hipri(mp) && !asx_canputnext(&l->hwq)) {
			rcu_read_unlock();
			asx_putbq(q, mp);
			break;
		}
		mp->rptr += sizeof(hdr);
		if (!asx_blen(mp) && mp->cont) {
			struct asx_msg *rest = mp->cont;

			rest->band = mp->band;
			asx_freeb(mp);
			mp = rest;
		} else if (!asx_blen(mp)) {
			mp->type = ASX_M_DATA;
		}
		asx_putnext(&l->hwq, mp);
		rcu_read_unlock();
	}
}

static void mux_rput(struct asx_queue *q, struct asx_msg *mp)
{
	if (asx_hipri(mp) || (asx_queue_idle(q) && asx_canputnext(q)))
		asx_putnext(q, mp);
	else
		asx_putq(q, mp);
}

static void mux_rsrv(struct asx_queue *q)
{
	loop_wsrv(q);
	if (!(READ_ONCE(q->flags) & ASX_QFULL))
		asx_mux_kick_lowers(q->st);
}

const struct asx_driver asx_drv_loop = {
	.name	= "loop",
	.rinit	= { .put = drv_rput },
	.winit	= { .put = loop_wput, .srv = loop_wsrv },
};

const struct asx_driver asx_drv_null = {
	.name	= "null",
	.rinit	= { .put = drv_rput },
	.winit	= { .put = null_wput },
};

const struct asx_driver asx_drv_pipe = {
	.name	= "pipe",
	.rinit	= { .put = drv_rput },
	.winit	= { .put = pipe_wput, .srv = loop_wsrv },
};

const struct asx_driver asx_drv_mux = {
	.name	= "mux",
	.rinit	= { .put = mux_rput, .srv = mux_rsrv },
	.winit	= { .put = mux_wput, .srv = mux_wsrv },
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
