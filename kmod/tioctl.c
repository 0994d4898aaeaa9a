// SPDX-License-Identifier: GPL-2.0
/*
 * Transparent ioctls, as SVR4 STREAMS has them: an ioctl(2) request the
 * Stream head does not know goes down as M_IOCTL with count ASX_TRANSPARENT
 * and the caller's argument; a module answers with M_COPYIN (an address and a
 * length) or M_COPYOUT (an address and the data), the head copies from or to
 * the caller's memory and sends the result down as M_IOCDATA, and so on
 * until M_IOCACK or M_IOCNAK ends the exchange. One ioctl at a time per
 * Stream (st->ioclock, shared with STR); each wait for the module is bounded
 * by ASX_TIOC_TIMEOUT. An exchange the head ends (signal, timeout, error,
 * hangup, a failed copy) leaves the module an M_IOCDATA with the error, so
 * that it frees its state: at once if the module was waiting for one, or
 * when its late M_COPYIN/M_COPYOUT arrives.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "stream.h"

#include <linux/compat.h>
#include <linux/uaccess.h>

#define ASX_TIOC_TIMEOUT	(15 * HZ)

static_assert(sizeof(struct asx_copyreq) == sizeof(struct asx_copyresp));
static_assert(offsetof(struct asx_copyreq, private) == offsetof(struct asx_copyresp, private));
static_assert(offsetof(struct asx_copyreq, flag) == offsetof(struct asx_copyresp, flag));

/*
 * The requests that go down as transparent ioctls: every one the head does
 * not know, except those of ASX's own type (0xA6) and of the XSI type 'S',
 * which stay ENOTTY.
 */
bool asx_tioc_cmd(unsigned int cmd)
{
	return _IOC_TYPE(cmd) != ASX_IOC_MAGIC && _IOC_TYPE(cmd) != 'S';
}

static bool is_copy(const struct asx_msg *mp)
{
	return mp->type == ASX_M_COPYIN || mp->type == ASX_M_COPYOUT;
}

/* A module's M_COPYIN/M_COPYOUT with room for its struct asx_copyreq. */
static bool copy_ok(const struct asx_msg *mp)
{
	return is_copy(mp) && asx_blen(mp) >= sizeof(struct asx_copyreq);
}

/* Turns the copy request @mp into an M_IOCDATA with @err (0 or positive errno). */
static void to_iocdata(struct asx_msg *mp, int err, struct asx_msg *data)
{
	struct asx_copyresp *cp = (struct asx_copyresp *)mp->rptr;

	mp->type = ASX_M_IOCDATA;
	cp->rval = err;
	cp->unused = 0;
	asx_freemsg(mp->cont);
	mp->cont = data;
}

/*
 * An answer of the module that no ioctl waits for (or whose ioctl ended,
 * with @err): a copy request is answered with a failed M_IOCDATA so that
 * the module frees its state; anything else is freed.
 */
void asx_tioc_refuse(struct asx_stream *st, struct asx_msg *mp, int err)
{
	if (!copy_ok(mp)) {
		asx_freemsg(mp);
		return;
	}
	to_iocdata(mp, err, NULL);
	asx_putnext(&st->hwq, mp);
}

/* Whether the answer @mp may be taken by the ioctl under way (hrq.lock held). */
bool asx_tioc_takes(struct asx_stream *st, const struct asx_msg *mp)
{
	return !is_copy(mp) || (st->ioc_tr && copy_ok(mp));
}

/* The M_IOCTL of a transparent @cmd with argument @arg, ids still unset. */
static struct asx_msg *tioc_msg(unsigned int cmd, unsigned long arg)
{
	struct asx_iocblk *ioc;
	struct asx_msg *mp;
	u64 val = arg;

	mp = asx_allocb(ASX_IOC_BLKSZ, GFP_KERNEL_ACCOUNT);
	if (!mp)
		return NULL;
	mp->cont = asx_ctlmsg(ASX_M_DATA, &val, sizeof(val), GFP_KERNEL_ACCOUNT);
	if (!mp->cont) {
		asx_freemsg(mp);
		return NULL;
	}
	mp->type = ASX_M_IOCTL;
	ioc = (struct asx_iocblk *)mp->rptr;
	memset(ioc, 0, ASX_IOC_BLKSZ);
	ioc->cmd = cmd;
	ioc->count = ASX_TRANSPARENT;
	ioc->flag = in_compat_syscall() ? ASX_IOC_ILP32 : 0;
	mp->wptr += ASX_IOC_BLKSZ;
	return mp;
}

static bool tioc_done(struct asx_stream *st)
{
	return READ_ONCE(st->ioc_resp) || test_bit(ASX_ST_ERROR, &st->flags) ||
	       test_bit(ASX_ST_HANGUP, &st->flags);
}

/* Waits for the module's next answer: 0 and it in *@resp, or why none came. */
static int tioc_wait(struct asx_stream *st, struct asx_msg **resp)
{
	long left;

	left = wait_event_interruptible_timeout(st->iocwait, tioc_done(st), ASX_TIOC_TIMEOUT);
	spin_lock(&st->hrq.lock);
	*resp = st->ioc_resp;
	st->ioc_resp = NULL;
	spin_unlock(&st->hrq.lock);
	if (*resp)
		return 0;
	if (left < 0)
		return -EINTR;
	if (test_bit(ASX_ST_ERROR, &st->flags))
		return -st->error;
	if (test_bit(ASX_ST_HANGUP, &st->flags))
		return -ENXIO;
	return -ETIME;
}

/* Copies the data of M_COPYOUT @mp to @addr: 0 or -errno. */
static int tioc_copyout(const struct asx_msg *mp, u64 addr, u32 size)
{
	const struct asx_msg *b;
	u32 done = 0, k;

	if (asx_msgdsize(mp->cont) < size)
		return -EPROTO;
	for (b = mp->cont; b && done < size; b = b->cont) {
		k = min_t(size_t, asx_blen(b), size - done);
		if (k && copy_to_user(u64_to_user_ptr(addr) + done, b->rptr, k))
			return -EFAULT;
		done += k;
	}
	return 0;
}

/* Copies @size bytes at @addr into a new message *@data: 0 or -errno. */
static int tioc_copyin(struct asx_stream *st, u64 addr, u32 size, struct asx_msg **data)
{
	struct asx_msg *d;

	d = asx_allocb(size, GFP_KERNEL_ACCOUNT);
	if (!d)
		return -ENOMEM;
	if (size && copy_from_user(d->wptr, u64_to_user_ptr(addr), size)) {
		asx_freemsg(d);
		return -EFAULT;
	}
	d->wptr += size;
	if (asx_msg_charge(st->budget, d)) {
		asx_freemsg(d);
		return -ENOBUFS;
	}
	*data = d;
	return 0;
}

/*
 * Does the copy the module asked for with @mp and turns @mp into the
 * M_IOCDATA that answers it: 0, or the negative errno that ends the ioctl
 * (@mp then carries it to the module).
 */
static int tioc_copy(struct asx_stream *st, struct asx_msg *mp)
{
	const struct asx_copyreq *cq = (const struct asx_copyreq *)mp->rptr;
	struct asx_msg *data = NULL;
	int err;

	if (cq->size > ASX_MAX_TCOPY)
		err = -ERANGE;
	else if (mp->type == ASX_M_COPYIN)
		err = tioc_copyin(st, cq->addr, cq->size, &data);
	else
		err = tioc_copyout(mp, cq->addr, cq->size);
	to_iocdata(mp, -err, data);
	return err;
}

/* The end of an exchange: the ioctl's result from M_IOCACK or M_IOCNAK @mp. */
static long tioc_result(struct asx_msg *mp)
{
	const struct asx_iocblk *ioc = (const struct asx_iocblk *)mp->rptr;
	long ret;

	if (ioc->error)
		ret = ioc->error > 0 && ioc->error < MAX_ERRNO ? -ioc->error : -EINVAL;
	else if (mp->type == ASX_M_IOCNAK)
		ret = -EINVAL;
	else
		ret = ioc->rval >= 0 ? ioc->rval : -EPROTO;
	asx_freemsg(mp);
	return ret;
}

/*
 * The ioctl under way is over (with @ret): an answer that came after its
 * last wait is refused, and the next ioctl may start.
 */
static void tioc_end(struct asx_stream *st, long ret)
{
	struct asx_msg *late;

	spin_lock(&st->hrq.lock);
	late = st->ioc_resp;
	st->ioc_resp = NULL;
	st->ioc_wait = 0;
	st->ioc_tr = false;
	spin_unlock(&st->hrq.lock);
	if (late)
		asx_tioc_refuse(st, late, ret < 0 && -ret < MAX_ERRNO ? -ret : ECANCELED);
	mutex_unlock(&st->ioclock);
}

/*
 * A transparent ioctl @cmd with argument @arg on @st (which the caller found
 * neither linked nor hung up): the exchange of messages with the module that
 * takes it. Returns the module's value or -errno.
 */
long asx_tioctl(struct asx_stream *st, unsigned int cmd, unsigned long arg)
{
	struct asx_msg *mp, *resp;
	long ret;

	mp = tioc_msg(cmd, arg);
	if (!mp)
		return -ENOMEM;
	ret = asx_msg_charge(st->budget, mp);
	if (ret)
		goto err_free;
	ret = -EINTR;
	if (mutex_lock_interruptible(&st->ioclock))
		goto err_free;
	if (test_bit(ASX_ST_ERROR, &st->flags)) {
		ret = -st->error;
		mutex_unlock(&st->ioclock);
		goto err_free;
	}
	spin_lock(&st->hrq.lock);
	if (!++st->ioc_id)
		++st->ioc_id;
	st->ioc_wait = st->ioc_id;
	st->ioc_tr = true;
	((struct asx_iocblk *)mp->rptr)->id = st->ioc_id;
	spin_unlock(&st->hrq.lock);

	for (;;) {
		asx_putnext(&st->hwq, mp);
		ret = tioc_wait(st, &resp);
		if (ret)
			break;
		if (!is_copy(resp)) {
			ret = tioc_result(resp);
			break;
		}
		mp = resp;
		ret = tioc_copy(st, mp);
		if (ret) {
			asx_putnext(&st->hwq, mp);
			break;
		}
	}
	tioc_end(st, ret);
	return ret;

err_free:
	asx_freemsg(mp);
	return ret;
}

/* Sends the copy request @type for M_IOCTL or M_IOCDATA @mp up from @q. */
static void tioc_request(struct asx_queue *q, struct asx_msg *mp, u8 type, void *priv,
			 u64 addr, u32 size, struct asx_msg *data)
{
	struct asx_copyreq *cq = (struct asx_copyreq *)mp->rptr;
	u32 flag = mp->type == ASX_M_IOCTL ? ((struct asx_iocblk *)mp->rptr)->flag : cq->flag;

	/* the head's M_IOCTL and M_IOCDATA have the room (ASX_IOC_BLKSZ) */
	if (WARN_ON_ONCE(mp->db->size - (mp->rptr - mp->db->base) < sizeof(*cq))) {
		asx_freemsg(data);
		asx_iocnak(q, mp, EINVAL);
		return;
	}
	mp->type = type;
	mp->wptr = mp->rptr + sizeof(*cq);
	cq->size = size;
	cq->flag = flag;
	cq->addr = addr;
	cq->private = priv;
	asx_freemsg(mp->cont);
	mp->cont = data;
	asx_qreply(q, mp);
}

/**
 * asx_mcopyin() - ask the Stream head to copy in from the ioctl's caller
 * @q:    the write queue the M_IOCTL or M_IOCDATA @mp arrived on
 * @mp:   the transparent M_IOCTL, or an M_IOCDATA of its exchange; reused
 * @priv: the module's state of the exchange, given back in the M_IOCDATA
 * @addr: the caller's address
 * @size: bytes to copy (at most ASX_MAX_TCOPY, else the ioctl fails ERANGE)
 *
 * The answer is an M_IOCDATA whose cont chain holds the bytes, or, when the
 * copy failed, whose asx_copyresp.rval is the error: the ioctl has then
 * failed, and the module frees @priv and the message and sends nothing.
 */
void asx_mcopyin(struct asx_queue *q, struct asx_msg *mp, void *priv, u64 addr, u32 size)
{
	tioc_request(q, mp, ASX_M_COPYIN, priv, addr, size, NULL);
}
EXPORT_SYMBOL_GPL(asx_mcopyin);

/**
 * asx_mcopyout() - ask the Stream head to copy out to the ioctl's caller
 * @q:    as asx_mcopyin()
 * @mp:   as asx_mcopyin()
 * @priv: as asx_mcopyin()
 * @addr: the caller's address
 * @data: the bytes to copy (at most ASX_MAX_TCOPY); the message takes them
 *
 * The answer is an M_IOCDATA with no data, rval 0 or the error.
 */
void asx_mcopyout(struct asx_queue *q, struct asx_msg *mp, void *priv, u64 addr,
		  struct asx_msg *data)
{
	tioc_request(q, mp, ASX_M_COPYOUT, priv, addr, asx_msgdsize(data), data);
}
EXPORT_SYMBOL_GPL(asx_mcopyout);
