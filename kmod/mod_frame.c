// SPDX-License-Identifier: GPL-2.0
/*
 * ASX module "frame": length-prefix framing. Going down, each M_DATA
 * message gets a 4-byte big-endian length in front. Coming up, the byte
 * stream is cut back into one M_DATA message per frame, however it was split;
 * a length above ASX_FRAME_MAX fails the Stream with EPROTO.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "asx_api.h"
#include "compat.h"


#define ASX_FRAME_MAX	BIT(20)

struct frame_priv {
	spinlock_t lock;	/* the reassembly state of the read side */
	struct asx_msg *pend;
	struct asx_msg *tail;
	size_t bytes;
	bool delivering;	/* one caller sends frames up, in order */
};

static void frame_wput(struct asx_queue *q, struct asx_msg *mp)
{
	struct asx_msg *h;

	if (mp->type == ASX_M_FLUSH) {
		asx_flush_msg(q, mp);
		return;
	}
	if (mp->type != ASX_M_DATA) {
		asx_putnext(q, mp);
		return;
	}
	h = asx_allocb(4, GFP_ATOMIC | __GFP_ACCOUNT);
	if (!h) {
		atomic64_inc(&q->drops);
		asx_freemsg(mp);
		return;
	}
	put_unaligned_be32(asx_msgdsize(mp), h->wptr);
	h->wptr += 4;
	h->band = mp->band;
	h->cont = mp;
	asx_putnext(q, h);
}

static void frame_reset(struct frame_priv *f)
{
	asx_freemsg(f->pend);
	f->pend = NULL;
	f->tail = NULL;
	f->bytes = 0;
}

static struct asx_msg *trim(struct asx_msg *mp)
{
	struct asx_msg *next;

	while (mp && !asx_blen(mp)) {
		next = mp->cont;
		asx_freeb(mp);
		mp = next;
	}
	return mp;
}

/*
 * Cuts the next whole frame off the pending bytes, or returns NULL; on a
 * length past ASX_FRAME_MAX returns an M_ERROR that fails the Stream.
 */
static struct asx_msg *frame_cut(struct asx_queue *q, struct frame_priv *f)
{
	struct asx_msg *out;
	u8 hdr[4];
	u8 err = EPROTO;
	u32 len;

	lockdep_assert_held(&f->lock);
	if (f->bytes < sizeof(hdr))
		return NULL;
	asx_msg_copy_out(f->pend, 0, hdr, sizeof(hdr));
	len = get_unaligned_be32(hdr);
	if (len > ASX_FRAME_MAX) {
		frame_reset(f);
		atomic64_inc(&q->drops);
		return asx_ctlmsg(ASX_M_ERROR, &err, 1, GFP_ATOMIC | __GFP_ACCOUNT);
	}
	if (f->bytes < sizeof(hdr) + len)
		return NULL;
	out = asx_allocb(len, GFP_ATOMIC | __GFP_ACCOUNT);
	if (!out) {
		frame_reset(f);
		atomic64_inc(&q->drops);
		return NULL;
	}
	asx_msg_copy_out(f->pend, sizeof(hdr), out->wptr, len);
	out->wptr += len;
	asx_msg_adj(f->pend, sizeof(hdr) + len);
	f->pend = trim(f->pend);
	if (!f->pend)
		f->tail = NULL;
	f->bytes -= sizeof(hdr) + len;
	return out;
}

/*
 * Sends whole frames up. The lock is not held across asx_putnext(): the next
 * module up may be another frame instance. One caller at a time delivers
 * (the others only append), so frames leave in the order they were cut.
 * Called with f->lock; returns with it released.
 */
static void frame_deliver(struct asx_queue *q, struct frame_priv *f)
	__releases(&f->lock)
{
	struct asx_msg *out;

	lockdep_assert_held(&f->lock);
	if (f->delivering) {
		spin_unlock(&f->lock);
		return;
	}
	f->delivering = true;
	while ((out = frame_cut(q, f))) {
		spin_unlock(&f->lock);
		asx_putnext(q, out);
		spin_lock(&f->lock);
	}
	f->delivering = false;
	spin_unlock(&f->lock);
}

static void frame_rput(struct asx_queue *q, struct asx_msg *mp)
{
	struct frame_priv *f = q->priv;
	struct asx_msg *last;

	if (mp->type == ASX_M_FLUSH) {
		if (asx_blen(mp) && (mp->rptr[0] & ASX_FLUSHR)) {
			spin_lock(&f->lock);
			frame_reset(f);
			spin_unlock(&f->lock);
		}
		asx_flush_msg(q, mp);
		return;
	}
	if (mp->type != ASX_M_DATA) {
		asx_putnext(q, mp);
		return;
	}
	for (last = mp; last->cont; last = last->cont)
		;
	spin_lock(&f->lock);
	if (f->tail)
		f->tail->cont = mp;
	else
		f->pend = mp;
	f->tail = last;
	f->bytes += asx_msgdsize(mp);
	frame_deliver(q, f);
}

static int frame_open(struct asx_queue *rq, struct asx_queue *wq)
{
	struct frame_priv *f = rq->priv;

	spin_lock_init(&f->lock);
	return 0;
}

static void frame_close(struct asx_queue *rq, struct asx_queue *wq)
{
	struct frame_priv *f = rq->priv;

	frame_reset(f);
}

struct asx_modinfo asx_mod_frame = {
	.name		= "frame",
	.owner		= THIS_MODULE,
	.rinit		= { .put = frame_rput },
	.winit		= { .put = frame_wput },
	.priv_size	= sizeof(struct frame_priv),
	.open		= frame_open,
	.close		= frame_close,
};
