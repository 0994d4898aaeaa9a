// SPDX-License-Identifier: GPL-2.0
/*
 * ASX module "tioc": the example of a transparent ioctl whose argument is a
 * struct holding a pointer (ASX_TIOC_XFORM, uapi/linux/asx.h). Its exchange
 * with the Stream head, one step per M_IOCDATA:
 *
 *	M_IOCTL		-> M_COPYIN  the struct at the argument
 *	M_IOCDATA(v)	-> M_COPYIN  the v.len bytes at v.buf
 *	M_IOCDATA(b)	-> M_COPYOUT b XORed with v.key, to v.buf
 *	M_IOCDATA	-> M_COPYOUT v with v.sum, to the argument
 *	M_IOCDATA	-> M_IOCACK  rval v.len
 *
 * An M_IOCDATA with an error (the head ended the ioctl) ends the exchange:
 * the state is freed and nothing is sent. ASX_TIOC_STALL holds the exchange
 * after its first M_IOCDATA until a data message comes down; ASX_TIOC_NAK
 * refuses with its argument. Everything else passes.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "asx_api.h"

#include <linux/slab.h>

enum tioc_step { TIOC_VEC, TIOC_BUF, TIOC_BUF_OUT, TIOC_VEC_OUT };

/* The state of one exchange, the M_COPYIN/M_COPYOUT's private */
struct tioc_xfer {
	enum tioc_step step;
	bool ilp32;
	bool stall;
	u64 arg;
	struct asx_tioc_vec v;
};

/* A 32-bit caller's struct asx_tioc_vec */
struct tioc_vec32 {
	u32 buf;
	u32 len;
	u32 key;
	u32 sum;
};

struct tioc_priv {
	spinlock_t lock;		/* @stalled, @peak */
	struct asx_msg *stalled;	/* ASX_TIOC_STALL's M_IOCDATA, held */
	u64 peak;
	atomic64_t ioctls, copyins, copyouts, acks, naks, aborted, open;
};

static void tioc_copyin(struct asx_queue *q, struct asx_msg *mp, struct tioc_xfer *x,
			u64 addr, u32 size)
{
	struct tioc_priv *t = q->priv;

	atomic64_inc(&t->copyins);
	asx_mcopyin(q, mp, x, addr, size);
}

static void tioc_copyout(struct asx_queue *q, struct asx_msg *mp, struct tioc_xfer *x,
			 u64 addr, struct asx_msg *data)
{
	struct tioc_priv *t = q->priv;

	atomic64_inc(&t->copyouts);
	asx_mcopyout(q, mp, x, addr, data);
}

/* Ends the exchange @x: NAK with @error, or ACK with @rval when @error is 0. */
static void tioc_finish(struct asx_queue *q, struct asx_msg *mp, struct tioc_xfer *x, int error,
			int rval)
{
	struct tioc_priv *t = q->priv;

	kfree(x);
	atomic64_dec(&t->open);
	if (error) {
		atomic64_inc(&t->naks);
		asx_iocnak(q, mp, error);
	} else {
		atomic64_inc(&t->acks);
		asx_iocack(q, mp, rval, NULL);
	}
}

/* The struct the caller passed, in its own layout, as a message. */
static struct asx_msg *tioc_vec_msg(const struct tioc_xfer *x)
{
	struct tioc_vec32 v32 = {
		.buf = x->v.buf, .len = x->v.len, .key = x->v.key, .sum = x->v.sum,
	};

	if (x->ilp32)
		return asx_ctlmsg(ASX_M_DATA, &v32, sizeof(v32), GFP_ATOMIC);
	return asx_ctlmsg(ASX_M_DATA, &x->v, sizeof(x->v), GFP_ATOMIC);
}

static size_t tioc_vec_size(const struct tioc_xfer *x)
{
	return x->ilp32 ? sizeof(struct tioc_vec32) : sizeof(struct asx_tioc_vec);
}

/* The struct copied in: into x->v; then the bytes it points to. */
static void tioc_got_vec(struct asx_queue *q, struct asx_msg *mp, struct tioc_xfer *x)
{
	struct tioc_vec32 v32;

	if (x->ilp32) {
		asx_msg_copy_out(mp->cont, 0, &v32, sizeof(v32));
		x->v.buf = v32.buf;
		x->v.len = v32.len;
		x->v.key = v32.key;
	} else {
		asx_msg_copy_out(mp->cont, 0, &x->v, sizeof(x->v));
	}
	x->v.sum = 0;
	x->step = TIOC_BUF;
	tioc_copyin(q, mp, x, x->v.buf, x->v.len);
}

/* The bytes copied in: XORed, summed and copied back out. */
static void tioc_got_buf(struct asx_queue *q, struct asx_msg *mp, struct tioc_xfer *x)
{
	const struct asx_msg *b;
	struct asx_msg *out;
	u32 i;

	out = asx_allocb(x->v.len, GFP_ATOMIC);
	if (!out) {
		tioc_finish(q, mp, x, ENOMEM, 0);
		return;
	}
	for (b = mp->cont; b; b = b->cont)
		for (i = 0; i < asx_blen(b); i++) {
			x->v.sum += b->rptr[i];
			*out->wptr++ = b->rptr[i] ^ (u8)x->v.key;
		}
	x->step = TIOC_BUF_OUT;
	tioc_copyout(q, mp, x, x->v.buf, out);
}

static void tioc_step(struct asx_queue *q, struct asx_msg *mp, struct tioc_xfer *x)
{
	struct asx_msg *out;

	switch (x->step) {
	case TIOC_VEC:
		if (asx_msgdsize(mp->cont) < tioc_vec_size(x)) {
			tioc_finish(q, mp, x, EPROTO, 0);
			return;
		}
		tioc_got_vec(q, mp, x);
		return;
	case TIOC_BUF:
		tioc_got_buf(q, mp, x);
		return;
	case TIOC_BUF_OUT:
		out = tioc_vec_msg(x);
		if (!out) {
			tioc_finish(q, mp, x, ENOMEM, 0);
			return;
		}
		x->step = TIOC_VEC_OUT;
		tioc_copyout(q, mp, x, x->arg, out);
		return;
	case TIOC_VEC_OUT:
		tioc_finish(q, mp, x, 0, x->v.len);
		return;
	}
}

/* An M_IOCDATA of one of our exchanges. */
static void tioc_iocdata(struct asx_queue *q, struct asx_msg *mp)
{
	struct asx_copyresp *cp = (struct asx_copyresp *)mp->rptr;
	struct tioc_xfer *x = cp->private;
	struct tioc_priv *t = q->priv;

	if (cp->rval) {
		/* the head ended the ioctl: free the state, answer nothing */
		kfree(x);
		atomic64_dec(&t->open);
		atomic64_inc(&t->aborted);
		asx_freemsg(mp);
		return;
	}
	if (x->stall && x->step == TIOC_VEC) {
		x->stall = false;
		spin_lock(&t->lock);
		if (!t->stalled) {
			t->stalled = mp;
			mp = NULL;
		}
		spin_unlock(&t->lock);
		if (!mp)
			return;
	}
	tioc_step(q, mp, x);
}

/* A transparent M_IOCTL: ours starts an exchange. */
static bool tioc_ioctl(struct asx_queue *q, struct asx_msg *mp)
{
	const struct asx_iocblk *ioc = (const struct asx_iocblk *)mp->rptr;
	struct tioc_priv *t = q->priv;
	struct tioc_xfer *x;
	u64 arg, open;

	if (!asx_ioc_transparent(mp))
		return false;
	arg = asx_ioc_arg(mp);
	switch (ioc->cmd) {
	case ASX_TIOC_XFORM:
	case ASX_TIOC_STALL:
		break;
	case ASX_TIOC_NAK:
		atomic64_inc(&t->ioctls);
		atomic64_inc(&t->naks);
		asx_iocnak(q, mp, arg > 0 && arg < MAX_ERRNO ? arg : EINVAL);
		return true;
	default:
		return false;
	}
	atomic64_inc(&t->ioctls);
	x = kzalloc(sizeof(*x), GFP_ATOMIC);
	if (!x) {
		atomic64_inc(&t->naks);
		asx_iocnak(q, mp, ENOMEM);
		return true;
	}
	open = atomic64_inc_return(&t->open);
	spin_lock(&t->lock);
	t->peak = max_t(u64, t->peak, open);
	spin_unlock(&t->lock);
	x->step = TIOC_VEC;
	x->ilp32 = ioc->flag & ASX_IOC_ILP32;
	x->stall = ioc->cmd == ASX_TIOC_STALL;
	x->arg = arg;
	tioc_copyin(q, mp, x, arg, tioc_vec_size(x));
	return true;
}

/* ASX_STR_TIOC_STATS, an STR. */
static bool tioc_stats(struct asx_queue *q, struct asx_msg *mp)
{
	const struct asx_iocblk *ioc = (const struct asx_iocblk *)mp->rptr;
	struct tioc_priv *t = q->priv;
	struct asx_tioc_stats s;
	struct asx_msg *data;

	if (asx_blen(mp) < sizeof(*ioc) || ioc->count == ASX_TRANSPARENT ||
	    ioc->cmd != ASX_STR_TIOC_STATS)
		return false;
	s.ioctls = atomic64_read(&t->ioctls);
	s.copyins = atomic64_read(&t->copyins);
	s.copyouts = atomic64_read(&t->copyouts);
	s.acks = atomic64_read(&t->acks);
	s.naks = atomic64_read(&t->naks);
	s.aborted = atomic64_read(&t->aborted);
	s.open = atomic64_read(&t->open);
	spin_lock(&t->lock);
	s.peak = t->peak;
	spin_unlock(&t->lock);
	data = asx_ctlmsg(ASX_M_DATA, &s, sizeof(s), GFP_ATOMIC | __GFP_ACCOUNT);
	if (data)
		asx_iocack(q, mp, 0, data);
	else
		asx_iocnak(q, mp, ENOMEM);
	return true;
}

/* A data message comes down: a stalled exchange goes on. */
static void tioc_resume(struct asx_queue *q)
{
	struct tioc_priv *t = q->priv;
	struct asx_copyresp *cp;
	struct asx_msg *mp;

	spin_lock(&t->lock);
	mp = t->stalled;
	t->stalled = NULL;
	spin_unlock(&t->lock);
	if (!mp)
		return;
	cp = (struct asx_copyresp *)mp->rptr;
	tioc_step(q, mp, cp->private);
}

static void tioc_wput(struct asx_queue *q, struct asx_msg *mp)
{
	switch (mp->type) {
	case ASX_M_FLUSH:
		asx_flush_msg(q, mp);
		return;
	case ASX_M_IOCTL:
		if (tioc_ioctl(q, mp) || tioc_stats(q, mp))
			return;
		break;
	case ASX_M_IOCDATA:
		if (asx_blen(mp) >= sizeof(struct asx_copyresp)) {
			tioc_iocdata(q, mp);
			return;
		}
		break;
	case ASX_M_DATA:
	case ASX_M_PROTO:
		tioc_resume(q);
		break;
	}
	asx_putnext(q, mp);
}

static void tioc_rput(struct asx_queue *q, struct asx_msg *mp)
{
	if (mp->type == ASX_M_FLUSH)
		asx_flush_msg(q, mp);
	else
		asx_putnext(q, mp);
}

static int tioc_open(struct asx_queue *rq, struct asx_queue *wq)
{
	struct tioc_priv *t = wq->priv;

	spin_lock_init(&t->lock);
	return 0;
}

/* The queues are quiet: a stalled exchange is freed with its message. */
static void tioc_close(struct asx_queue *rq, struct asx_queue *wq)
{
	struct tioc_priv *t = wq->priv;
	struct asx_copyresp *cp;

	if (!t->stalled)
		return;
	cp = (struct asx_copyresp *)t->stalled->rptr;
	kfree(cp->private);
	asx_freemsg(t->stalled);
	t->stalled = NULL;
}

struct asx_modinfo asx_mod_tioctl = {
	.name		= "tioc",
	.owner		= THIS_MODULE,
	.rinit		= { .put = tioc_rput },
	.winit		= { .put = tioc_wput },
	.priv_size	= sizeof(struct tioc_priv),
	.open		= tioc_open,
	.close		= tioc_close,
};
