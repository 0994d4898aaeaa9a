// SPDX-License-Identifier: GPL-2.0
/*
 * ASX ioctls. Every argument is a size-first struct (see uapi/linux/asx.h):
 * copy_in() checks the size and the unknown tail, copy_out() writes back no
 * more than both sides know.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"
#include "main.h"
#include "registry.h"
#include "sa.h"
#include "uarg.h"

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#define ASX_FEATURES	(ASX_FEAT_STREAMS | ASX_FEAT_PIPE | ASX_FEAT_MUX | ASX_FEAT_STR | \
			 ASX_FEAT_PROCFS | ASX_FEAT_SA_BUILT | ASX_FEAT_XSI | ASX_FEAT_AUTOPUSH | \
			 ASX_FEAT_DRVREG | ASX_FEAT_XSI_FD | ASX_FEAT_PLINK | ASX_FEAT_QBAND | \
			 ASX_FEAT_TRANSPARENT)
#define ASX_STR_TIMEOUT	(15 * HZ)

static_assert(sizeof(struct asx_version) == ASX_VERSION_SIZE_VER1);
static_assert(sizeof(struct asx_modname) == ASX_MODNAME_SIZE_VER0);
static_assert(sizeof(struct asx_list) == ASX_LIST_SIZE_VER0);
static_assert(sizeof(struct asx_strmsg) == ASX_STRMSG_SIZE_VER0);
static_assert(sizeof(struct asx_flush) == ASX_FLUSH_SIZE_VER0);
static_assert(sizeof(struct asx_opt) == ASX_OPT_SIZE_VER0);
static_assert(sizeof(struct asx_nread) == ASX_NREAD_SIZE_VER0);
static_assert(sizeof(struct asx_wm) == ASX_WM_SIZE_VER0);
static_assert(sizeof(struct asx_qstats) == ASX_QSTATS_SIZE_VER0);
static_assert(sizeof(struct asx_strioctl) == ASX_STRIOCTL_SIZE_VER0);
static_assert(sizeof(struct asx_link) == ASX_LINK_SIZE_VER0);
static_assert(sizeof(struct asx_pipe) == ASX_PIPE_SIZE_VER0);
static_assert(sizeof(struct asx_autopush) == ASX_AUTOPUSH_SIZE_VER0);

/*
 * The size encoded in an ioctl command is the size of the struct when the
 * command was published; the real size travels in the struct's size field, so
 * commands are matched with their size bits masked out.
 */
#define ASX_IOC_BASE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

#define NONZERO(x)		(!!memchr_inv(&(x), 0, sizeof(x)))

static long ioc_version(void __user *uarg)
{
	struct asx_version v;
	int ret;

	ret = ASX_COPY_IN(v, uarg, ASX_VERSION_SIZE_VER0);
	if (ret)
		return ret;
	if (NONZERO(v.reserved))
		return -EINVAL;
	v.major = ASX_VERSION_MAJOR;
	v.minor = ASX_VERSION_MINOR;
	v.patch = ASX_VERSION_PATCH;
	v.features = ASX_FEATURES;
	v.max_depth = ASX_MAX_DEPTH;
	v.max_write = ASX_MAX_WRITE;
	return ASX_COPY_OUT(uarg, v);
}

/* A module or driver name: NUL-terminated inside the field, flags and reserved 0. */
static int get_modname(struct asx_modname *mn, void __user *uarg, bool may_be_empty)
{
	int ret;

	ret = ASX_COPY_IN(*mn, uarg, ASX_MODNAME_SIZE_VER0);
	if (ret)
		return ret;
	if (mn->flags || mn->reserved || !memchr(mn->name, 0, sizeof(mn->name)))
		return -EINVAL;
	if (!may_be_empty && !mn->name[0])
		return -EINVAL;
	return 0;
}

static long ioc_push(struct asx_stream *st, void __user *uarg)
{
	struct asx_modname mn;
	int ret;

	ret = get_modname(&mn, uarg, false);
	return ret ? ret : asx_stream_push(st, mn.name);
}

static long ioc_pop(struct asx_stream *st, void __user *uarg)
{
	struct asx_modname mn;
	int ret;

	ret = get_modname(&mn, uarg, true);
	return ret ? ret : asx_stream_pop(st, mn.name);
}

static long ioc_setdrv(struct asx_stream *st, void __user *uarg)
{
	const struct asx_driver *drv;
	struct asx_modname mn;
	int ret, unit;

	ret = get_modname(&mn, uarg, false);
	if (ret)
		return ret;
	drv = asx_find_driver(mn.name);
	/* a named mux, "mux.N" (mux.c): the mux driver, and unit N */
	unit = drv ? -ENOENT : asx_mux_unit_number(mn.name);
	if (unit >= 0) {
		ret = asx_mux_unit_may_open(unit);
		if (ret)
			return ret;
		drv = &asx_drv_mux;
	}
	if (!drv)
		return -ENOENT;
	/* what the loop driver's autopush pushed gives way to @drv's list */
	ret = asx_stream_unautopush(st);
	if (!ret)
		ret = asx_drv_set(st, drv);
	if (ret) {
		asx_put_driver(drv);	/* a registered one's pin, if not kept */
		return ret;
	}
	if (unit >= 0) {
		ret = asx_mux_join(st, unit);
		if (ret)
			return ret;
	}
	return asx_stream_autopush(st, drv->name);
}

static long ioc_autopush(void __user *uarg)
{
	struct asx_autopush *ap;
	u32 i;
	int ret;

	ap = kzalloc(sizeof(*ap), GFP_KERNEL);
	if (!ap)
		return -ENOMEM;
	ret = ASX_COPY_IN(*ap, uarg, ASX_AUTOPUSH_SIZE_VER0);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (ap->reserved || !memchr(ap->driver, 0, sizeof(ap->driver)))
		goto out;
	ret = -ENOENT;	/* the drivers SETDRV chooses, registered ones too, and pipe ends */
	if (!asx_driver_known(ap->driver))
		goto out;
	switch (ap->cmd) {
	case ASX_AP_SET:
		ret = -EINVAL;
		if (!ap->count || ap->count > ASX_AUTOPUSH_MAX)
			goto out;
		for (i = 0; i < ap->count; i++)
			if (!memchr(ap->modules[i], 0, ASX_NAME_MAX) || !ap->modules[i][0])
				goto out;
		fallthrough;
	case ASX_AP_CLEAR:
		ret = -EPERM;
		if (!capable(CAP_SYS_ADMIN))
			goto out;
		if (ap->cmd == ASX_AP_CLEAR && (ap->count || NONZERO(ap->modules))) {
			ret = -EINVAL;
			goto out;
		}
		ret = asx_autopush_set(ap->driver, ap->cmd == ASX_AP_SET ? ap->count : 0,
				       &ap->modules[0][0]);
		break;
	case ASX_AP_GET:
		ret = -EINVAL;
		if (ap->count || NONZERO(ap->modules))
			goto out;
		ap->count = asx_autopush_get(ap->driver, &ap->modules[0][0]);
		ret = ap->count ? ASX_COPY_OUT(uarg, *ap) : -ENOENT;
		break;
	default:
		ret = -EINVAL;
	}
out:
	kfree(ap);
	return ret;
}

static long ioc_list(struct asx_stream *st, void __user *uarg)
{
	struct asx_list l;
	char *names = NULL;
	u32 n;
	int ret;

	ret = ASX_COPY_IN(l, uarg, ASX_LIST_SIZE_VER0);
	if (ret)
		return ret;
	if (l.reserved)
		return -EINVAL;
	if (l.count) {
		names = kcalloc(min_t(u32, l.count, ASX_MAX_DEPTH), ASX_NAME_MAX, GFP_KERNEL);
		if (!names)
			return -ENOMEM;
	}
	memset(l.driver, 0, sizeof(l.driver));
	n = asx_stream_names(st, names, min_t(u32, l.count, ASX_MAX_DEPTH), l.driver);

	ret = 0;
	if (min(n, l.count) &&
	    copy_to_user(u64_to_user_ptr(l.names), names, min(n, l.count) * ASX_NAME_MAX))
		ret = -EFAULT;
	kfree(names);
	if (ret)
		return ret;
	l.count = n;
	return ASX_COPY_OUT(uarg, l);
}

static int user_block(struct asx_msg **mp, u8 type, u64 ubuf, u32 len)
{
	*mp = asx_allocb(len, GFP_KERNEL_ACCOUNT);
	if (!*mp)
		return -ENOMEM;
	(*mp)->type = type;
	if (len && copy_from_user((*mp)->wptr, u64_to_user_ptr(ubuf), len)) {
		asx_freemsg(*mp);
		*mp = NULL;
		return -EFAULT;
	}
	(*mp)->wptr += len;
	return 0;
}

static long ioc_putmsg(struct asx_stream *st, struct file *file, void __user *uarg)
{
	struct asx_strmsg sm;
	int ret;

	ret = ASX_COPY_IN(sm, uarg, ASX_STRMSG_SIZE_VER0);
	if (ret)
		return ret;
	return asx_do_putmsg(st, file, &sm, NULL);
}

/*
 * PUTMSG with @sm in kernel memory (its parts' buffers user pointers); @tok,
 * if not NULL, is written into the control part at tok->off (I_FDINSERT,
 * which has checked that it fits).
 */
long asx_do_putmsg(struct asx_stream *st, struct file *file, const struct asx_strmsg *sm_in,
		   const struct asx_ctl_token *tok)
{
	struct asx_msg *ctl = NULL, *data = NULL, *mp;
	struct asx_strmsg sm = *sm_in;
	bool hipri, xsi;
	int ret;

	hipri = sm.flags & ASX_MSG_HIPRI;
	xsi = sm.flags & ASX_MSG_XSI;
	if (NONZERO(sm.reserved) || (sm.flags & ~(ASX_MSG_HIPRI | ASX_MSG_XSI)) || sm.band > 255 ||
	    sm.more ||
	    sm.ctl.len < -1 || sm.data.len < -1 || (hipri && (sm.band || sm.ctl.len < 0)))
		return -EINVAL;
	if (sm.ctl.len > ASX_MAX_CTL || sm.data.len > ASX_MAX_DATA)
		return -ERANGE;
	if (sm.ctl.len < 0 && sm.data.len < 0)
		return 0;

	if (hipri) {
		if (test_bit(ASX_ST_ERROR, &st->flags))
			return -st->error;
		if (test_bit(ASX_ST_HANGUP, &st->flags)) {
			if (!xsi)
				send_sig(SIGPIPE, current, 0);
			ret = -EPIPE;
		}
	} else {
		ret = asx_head_wait_writable(st, sm.band, file->f_flags & O_NONBLOCK, !xsi);
	}
	if (ret)
		return ret == -EPIPE && xsi ? -ENXIO : ret;	/* putmsg(2): no SIGPIPE */
	if (sm.ctl.len >= 0) {
		ret = user_block(&ctl, hipri ? ASX_M_PCPROTO : ASX_M_PROTO, sm.ctl.buf, sm.ctl.len);
		if (ret)
			return ret;
		if (tok)
			memcpy(ctl->rptr + tok->off, &tok->val, sizeof(tok->val));
	}
	if (sm.data.len >= 0) {
		ret = user_block(&data, ASX_M_DATA, sm.data.buf, sm.data.len);
		if (ret) {
			if (ctl)
				asx_freemsg(ctl);
			return ret;
		}
	}
	if (ctl) {
		ctl->cont = data;
		mp = ctl;
	} else {
		mp = data;
	}
	mp->band = sm.band;
	ret = asx_msg_charge(st->budget, mp);
	if (ret) {
		asx_freemsg(mp);
		return ret;
	}
	asx_putnext(&st->hwq, mp);
	return 0;
}

static bool is_ctl(const struct asx_msg *mp)
{
	return mp->type == ASX_M_PROTO || mp->type == ASX_M_PCPROTO;
}

/*
 * Copies one part of a message (the control blocks at its front, or the data
 * blocks after them) to user space without changing it. Returns the bytes
 * stored in *len (-1 if there is no such part) and whether any was left over.
 */
static int copy_part(const struct asx_msg *mp, bool ctl, u64 ubuf, u32 maxlen, s32 *len,
		     bool *more)
{
	u32 n = 0, k;
	bool any = false;

	*more = false;
	for (; mp; mp = mp->cont) {
		if (is_ctl(mp) != ctl) {
			if (ctl)
				break;
			continue;
		}
		any = true;
		k = min_t(size_t, asx_blen(mp), maxlen - n);
		if (k && copy_to_user(u64_to_user_ptr(ubuf) + n, mp->rptr, k))
			return -EFAULT;
		n += k;
		if (k < asx_blen(mp))
			*more = true;
	}
	*len = any ? n : -1;
	return 0;
}

/* Consumes @n bytes of the control (or data) blocks of @mp; returns what is left. */
static struct asx_msg *consume_part(struct asx_msg *mp, bool ctl, size_t n)
{
	struct asx_msg *head = mp, **link = &head, *b;
	u8 band = mp->band;
	size_t k;

	while ((b = *link)) {
		if (is_ctl(b) != ctl) {
			if (ctl)
				break;
			link = &b->cont;
			continue;
		}
		k = min(n, asx_blen(b));
		b->rptr += k;
		n -= k;
		if (!asx_blen(b)) {
			*link = b->cont;
			asx_freeb(b);
			continue;
		}
		link = &b->cont;
	}
	if (head)
		head->band = band;
	return head;
}

/*
 * GETMSG or PEEK with @sm (its flags, band and parts checked by the caller)
 * in kernel memory; the parts' buffers are user pointers.
 */
long asx_do_getmsg(struct asx_stream *st, struct file *file, struct asx_strmsg *sm, bool peek)
{
	bool nonblock = file->f_flags & O_NONBLOCK;
	struct asx_queue *q = &st->hrq;
	bool more_ctl = false, more_data = false;
	struct asx_msg *mp;
	int ret = 0;

	for (;;) {
		if (mutex_lock_interruptible(&st->rlock))
			return -ERESTARTSYS;
		if (test_bit(ASX_ST_ERROR, &st->flags)) {
			mutex_unlock(&st->rlock);
			return -st->error;
		}
		mp = asx_rmvq_match(q, sm->flags, sm->band);
		if (mp || peek || test_bit(ASX_ST_HANGUP, &st->flags))
			break;
		mutex_unlock(&st->rlock);
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(st->rwait, asx_queue_match(q, sm->flags, sm->band) ||
					       st->flags);
		if (ret)
			return ret;
	}

	sm->more = 0;
	sm->ctl.len = -1;
	sm->data.len = -1;
	if (mp && mp->type == ASX_M_PASSFP) {
		/* getmsg(2): EBADMSG while a descriptor (I_RECVFD) is first */
		asx_putbq(q, mp);
		mp = NULL;
		ret = -EBADMSG;
	}
	if (mp) {
		sm->flags = asx_hipri(mp) ? ASX_MSG_HIPRI : ASX_MSG_BAND;
		sm->band = mp->band;
		ret = copy_part(mp, true, sm->ctl.buf, sm->ctl.maxlen, &sm->ctl.len, &more_ctl);
		if (!ret)
			ret = copy_part(mp, false, sm->data.buf, sm->data.maxlen, &sm->data.len,
					&more_data);
		if (peek || ret) {
			asx_putbq(q, mp);
		} else {
			mp = consume_part(mp, true, max(sm->ctl.len, 0));
			if (mp)
				mp = consume_part(mp, false, max(sm->data.len, 0));
			if (mp)
				asx_putbq(q, mp);
		}
		sm->more = peek ? 1 : (more_ctl ? ASX_MORECTL : 0) | (more_data ? ASX_MOREDATA : 0);
	}
	mutex_unlock(&st->rlock);
	asx_queue_drained(q);
	return ret;
}

static long ioc_getmsg(struct asx_stream *st, struct file *file, void __user *uarg, bool peek)
{
	struct asx_strmsg sm;
	int ret;

	ret = ASX_COPY_IN(sm, uarg, ASX_STRMSG_SIZE_VER0);
	if (ret)
		return ret;
	if (NONZERO(sm.reserved) || sm.flags > ASX_MSG_BAND || sm.band > 255 ||
	    (sm.flags != ASX_MSG_BAND && sm.band))
		return -EINVAL;
	ret = asx_do_getmsg(st, file, &sm, peek);
	return ret ? ret : ASX_COPY_OUT(uarg, sm);
}

/* FLUSH: ASX_FLUSHR and/or ASX_FLUSHW, with ASX_FLUSHBAND only @band. */
long asx_do_flush(struct asx_stream *st, u32 flags, u32 band)
{
	struct asx_msg *mp;
	u8 buf[2];

	if ((flags & ~(ASX_FLUSHRW | ASX_FLUSHBAND)) || !(flags & ASX_FLUSHRW) || band > 255 ||
	    (band && !(flags & ASX_FLUSHBAND)))
		return -EINVAL;
	buf[0] = flags;
	buf[1] = band;
	mp = asx_ctlmsg(ASX_M_FLUSH, buf, sizeof(buf), GFP_KERNEL_ACCOUNT);
	if (!mp)
		return -ENOMEM;
	if (flags & ASX_FLUSHR)
		asx_flushq(&st->hrq, flags & ASX_FLUSHBAND, band);
	asx_putnext(&st->hwq, mp);
	return 0;
}

static long ioc_flush(struct asx_stream *st, void __user *uarg)
{
	struct asx_flush fl;
	int ret;

	ret = ASX_COPY_IN(fl, uarg, ASX_FLUSH_SIZE_VER0);
	if (ret)
		return ret;
	if (fl.reserved)
		return -EINVAL;
	return asx_do_flush(st, fl.flags, fl.band);
}

static long ioc_opt(struct asx_stream *st, unsigned int cmd, void __user *uarg)
{
	struct asx_opt o;
	int ret;

	ret = ASX_COPY_IN(o, uarg, ASX_OPT_SIZE_VER0);
	if (ret)
		return ret;
	if (o.reserved)
		return -EINVAL;
	switch (cmd) {
	case ASX_IOC_BASE(ASX_IOC_SRDOPT):
		if ((o.opt & ~(ASX_RMODEMASK | ASX_RPROTMASK)) ||
		    (o.opt & ASX_RMODEMASK) == ASX_RMODEMASK ||
		    (o.opt & ASX_RPROTMASK) == ASX_RPROTMASK)
			return -EINVAL;
		WRITE_ONCE(st->ropt, o.opt);
		return 0;
	case ASX_IOC_BASE(ASX_IOC_SWROPT):
		if (o.opt & ~ASX_SNDZERO)
			return -EINVAL;
		WRITE_ONCE(st->wopt, o.opt);
		return 0;
	case ASX_IOC_BASE(ASX_IOC_GRDOPT):
		if (o.opt)
			return -EINVAL;
		o.opt = READ_ONCE(st->ropt);
		break;
	default:
		if (o.opt)
			return -EINVAL;
		o.opt = READ_ONCE(st->wopt);
		break;
	}
	return ASX_COPY_OUT(uarg, o);
}

static long ioc_nread(struct asx_stream *st, void __user *uarg)
{
	struct asx_nread nr;
	struct asx_msg *mp;
	int ret;

	ret = ASX_COPY_IN(nr, uarg, ASX_NREAD_SIZE_VER0);
	if (ret)
		return ret;
	if (nr.reserved)
		return -EINVAL;
	spin_lock(&st->hrq.lock);
	nr.msgs = st->hrq.nmsgs;
	nr.bytes = st->hrq.count;
	mp = list_first_entry_or_null(&st->hrq.msgs, struct asx_msg, list);
	nr.first = mp ? asx_msgdsize(mp) : 0;
	spin_unlock(&st->hrq.lock);
	return ASX_COPY_OUT(uarg, nr);
}

/* GETWM/SETWM on @q, of band 0 or of band wm->band (the marks are read back). */
static int ioc_wm_queue(struct asx_queue *q, bool set, struct asx_wm *wm)
{
	size_t hiwat, lowat;
	int ret = 0;

	if (set && !wm->band)
		asx_queue_set_wm(q, wm->hiwat, wm->lowat);
	else if (set)
		ret = asx_queue_set_bwm(q, wm->band, wm->hiwat, wm->lowat);
	asx_queue_get_bwm(q, wm->band, &hiwat, &lowat);
	wm->hiwat = hiwat;
	wm->lowat = lowat;
	return ret;
}

static long ioc_wm(struct asx_stream *st, bool set, void __user *uarg)
{
	struct asx_queue *q;
	struct asx_wm wm;
	int ret;

	ret = ASX_COPY_IN(wm, uarg, ASX_WM_SIZE_VER0);
	if (ret)
		return ret;
	if (wm.flags || wm.reserved || wm.side > ASX_SIDE_WRITE || wm.band > 255)
		return -EINVAL;
	if (set && (!wm.hiwat || wm.hiwat > ASX_MAX_HIWAT || wm.lowat > wm.hiwat))
		return -EINVAL;
	if (!set && (wm.hiwat || wm.lowat))
		return -EINVAL;
	/* Like pipe-max-size: big queues pin kernel memory. */
	if (set && wm.hiwat > ASX_MAX_HIWAT_USER && !capable(CAP_SYS_RESOURCE))
		return -EPERM;
	mutex_lock(&st->cfg);
	q = asx_stream_queue(st, wm.level, wm.side);
	ret = q ? ioc_wm_queue(q, set, &wm) : -ENXIO;
	mutex_unlock(&st->cfg);
	if (ret)
		return ret;
	return set ? 0 : ASX_COPY_OUT(uarg, wm);
}

static long ioc_qstats(struct asx_stream *st, void __user *uarg)
{
	struct asx_qstats qs;
	struct asx_queue *q;
	int ret;

	ret = ASX_COPY_IN(qs, uarg, ASX_QSTATS_SIZE_VER0);
	if (ret)
		return ret;
	if (NONZERO(qs.reserved) || qs.side > ASX_SIDE_WRITE)
		return -EINVAL;
	mutex_lock(&st->cfg);
	q = asx_stream_queue(st, qs.level, qs.side);
	if (!q) {
		mutex_unlock(&st->cfg);
		return -ENXIO;
	}
	memset(qs.name, 0, sizeof(qs.name));
	strscpy(qs.name, q->name, sizeof(qs.name));
	spin_lock(&q->lock);
	qs.qflags = (q->flags & ASX_QFULL ? ASX_QS_FULL : 0) |
		    (q->flags & ASX_QWANTW ? ASX_QS_WANTW : 0) |
		    (q->flags & ASX_QENAB ? ASX_QS_ENABLED : 0) |
		    (q->qi->srv ? ASX_QS_SRV : 0);
	qs.count = q->count;
	qs.msgs = q->nmsgs;
	qs.hiwat = q->hiwat;
	qs.lowat = q->lowat;
	qs.srv_runs = q->srv_runs;
	qs.enqueued = q->enqueued;
	qs.fc_stops = q->fc_stops;
	qs.fc_starts = q->fc_starts;
	spin_unlock(&q->lock);
	qs.puts = READ_ONCE(q->puts);
	qs.drops = atomic64_read(&q->drops);
	mutex_unlock(&st->cfg);
	return ASX_COPY_OUT(uarg, qs);
}

static bool ioc_done(struct asx_stream *st)
{
	return READ_ONCE(st->ioc_resp) || test_bit(ASX_ST_ERROR, &st->flags);
}

/*
 * STR with @si in kernel memory (its data a user pointer): on 0, si->len is
 * the reply's length and si->rval the module's value.
 */
long asx_do_str(struct asx_stream *st, struct asx_strioctl *si)
{
	struct asx_msg *mp, *data, *resp;
	struct asx_iocblk *ioc;
	size_t n, copied = 0;
	long timeout, left;
	void *buf;
	int ret;

	if (si->timeout_ms < -1)
		return -EINVAL;
	if (si->len > ASX_MAX_STR)
		return -ERANGE;
	timeout = si->timeout_ms == 0 ? ASX_STR_TIMEOUT :
		  si->timeout_ms < 0 ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(si->timeout_ms);

	mp = asx_allocb(ASX_IOC_BLKSZ, GFP_KERNEL_ACCOUNT);
	if (!mp)
		return -ENOMEM;
	ret = user_block(&data, ASX_M_DATA, si->data, si->len);
	if (ret)
		goto err_free_mp;
	mp->type = ASX_M_IOCTL;
	mp->cont = data;
	ioc = (struct asx_iocblk *)mp->wptr;
	memset(ioc, 0, sizeof(*ioc));
	ioc->cmd = si->cmd;
	ioc->count = si->len;
	mp->wptr += sizeof(*ioc);
	/* Held after the caller gave up, an M_IOCTL still counts. */
	ret = asx_msg_charge(st->budget, mp);
	if (ret)
		goto err_free_mp;

	if (mutex_lock_interruptible(&st->ioclock)) {
		ret = -EINTR;
		goto err_free_mp;
	}
	if (test_bit(ASX_ST_ERROR, &st->flags)) {
		ret = -st->error;
		goto err_unlock;
	}
	spin_lock(&st->hrq.lock);
	if (!++st->ioc_id)
		++st->ioc_id;
	st->ioc_wait = st->ioc_id;
	ioc->id = st->ioc_id;
	spin_unlock(&st->hrq.lock);
	asx_putnext(&st->hwq, mp);

	left = wait_event_interruptible_timeout(st->iocwait, ioc_done(st), timeout);
	spin_lock(&st->hrq.lock);
	resp = st->ioc_resp;
	st->ioc_resp = NULL;
	st->ioc_wait = 0;
	spin_unlock(&st->hrq.lock);
	mutex_unlock(&st->ioclock);

	if (!resp) {
		if (left < 0)
			return -EINTR;
		if (test_bit(ASX_ST_ERROR, &st->flags))
			return -st->error;
		return -ETIME;
	}
	ioc = (struct asx_iocblk *)resp->rptr;
	if (resp->type == ASX_M_IOCNAK) {
		ret = ioc->error > 0 && ioc->error < MAX_ERRNO ? -ioc->error : -EINVAL;
		asx_freemsg(resp);
		return ret;
	}
	si->rval = ioc->rval;
	n = min_t(size_t, asx_msgdsize(resp->cont), min_t(u32, si->maxlen, ASX_MAX_STR));
	ret = 0;
	if (n) {
		buf = kmalloc(n, GFP_KERNEL);
		if (buf) {
			copied = asx_msg_copy_out(resp->cont, 0, buf, n);
			if (copy_to_user(u64_to_user_ptr(si->data), buf, copied))
				ret = -EFAULT;
			kfree(buf);
		} else {
			ret = -ENOMEM;
		}
	}
	asx_freemsg(resp);
	if (!ret)
		si->len = copied;
	return ret;

err_unlock:
	mutex_unlock(&st->ioclock);
err_free_mp:
	asx_freemsg(mp);
	return ret;
}

static long ioc_str(struct asx_stream *st, void __user *uarg)
{
	struct asx_strioctl si;
	int ret;

	ret = ASX_COPY_IN(si, uarg, ASX_STRIOCTL_SIZE_VER0);
	if (ret)
		return ret;
	if (NONZERO(si.reserved) || si.rval)
		return -EINVAL;
	ret = asx_do_str(st, &si);
	return ret ? ret : ASX_COPY_OUT(uarg, si);
}

/* LINK (@persist: I_PLINK) the Stream of descriptor @fd under the mux @st; its id in *@id. */
long asx_do_link(struct asx_stream *st, int fd, u32 *id, bool persist)
{
	struct file *file;
	int ret;

	file = fget(fd);
	if (!file)
		return -EBADF;
	ret = file->f_op == &asx_fops ? asx_mux_link(st, file, id, persist) : -EINVAL;
	if (ret)
		fput(file);
	return ret;
}

static long ioc_link(struct asx_stream *st, bool link, void __user *uarg)
{
	struct asx_link lk;
	int ret;

	ret = ASX_COPY_IN(lk, uarg, ASX_LINK_SIZE_VER0);
	if (ret)
		return ret;
	if (lk.reserved || (link && lk.id) || (!link && lk.fd))
		return -EINVAL;
	if (!link)
		return asx_mux_unlink(st, lk.id, false);
	ret = asx_do_link(st, lk.fd, &lk.id, false);
	if (ret)
		return ret;
	ret = ASX_COPY_OUT(uarg, lk);
	if (ret)
		asx_mux_unlink(st, lk.id, false);	/* the caller never learnt the id */
	return ret;
}

static long ioc_pipe(struct asx_stream *st, void __user *uarg)
{
	struct asx_stream *peer;
	struct asx_pipe p;
	struct file *file;
	int ret, fd;

	ret = ASX_COPY_IN(p, uarg, ASX_PIPE_SIZE_VER0);
	if (ret)
		return ret;
	if (p.reserved || p.fd || (p.flags & ~(ASX_PIPE_CLOEXEC | ASX_PIPE_NONBLOCK)))
		return -EINVAL;

	/* Before cfg: asx_stream_new() takes asx_streams_lock (lock order: stream.h). */
	peer = asx_stream_new(&asx_drv_loop);
	if (!peer)
		return -ENOMEM;
	fd = get_unused_fd_flags(p.flags & ASX_PIPE_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0) {
		ret = fd;
		goto err_destroy_peer;
	}
	file = anon_inode_getfile("[asx]", &asx_fops, peer,
				  O_RDWR | (p.flags & ASX_PIPE_NONBLOCK ? O_NONBLOCK : 0));
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_put_fd;
	}
	file->f_mode &= ~(FMODE_LSEEK | FMODE_PREAD | FMODE_PWRITE);
	/* From here the file owns @peer: fput() destroys it. */
	p.fd = fd;
	ret = ASX_COPY_OUT(uarg, p);
	if (ret)
		goto err_fput;

	ret = asx_stream_unautopush(st);
	if (!ret)
		ret = asx_pipe_connect(st, peer);
	if (!ret)
		ret = asx_stream_autopush(st, asx_drv_pipe.name);
	if (!ret)
		ret = asx_stream_autopush(peer, asx_drv_pipe.name);
	if (ret)
		goto err_fput;
	fd_install(fd, file);
	return 0;

err_fput:
	fput(file);
	put_unused_fd(fd);
	return ret;
err_put_fd:
	put_unused_fd(fd);
err_destroy_peer:
	asx_stream_destroy(peer);
	return ret;
}

/*
 * streamio(7)'s refusals of a Stream ioctl, before its argument is read:
 * EINVAL on a Stream linked under a mux, ENXIO on a hung-up one for a call
 * that changes the Stream or reaches down it (@reaches_down).  The native
 * ioctls and the XSI requests (xsi.c) are refused by this one test.
 */
long asx_ioc_refused(struct asx_stream *st, bool reaches_down)
{
	if (asx_stream_linked(st))
		return -EINVAL;
	if (reaches_down && test_bit(ASX_ST_HANGUP, &st->flags))
		return -ENXIO;
	return 0;
}

/*
 * The refusals streamio(7) makes before looking at an ioctl's argument: every
 * Stream ioctl fails with EINVAL on a Stream linked under a mux (the lower
 * belongs to the mux until it is unlinked; only the read-only VERSION, GETWM
 * and QSTATS still answer), and those that change the Stream or reach down it
 * fail with ENXIO once it has hung up.  A hangup that comes after this check
 * is the same race as one that comes just after the call.
 */
static long ioc_refused(struct asx_stream *st, unsigned int base)
{
	switch (base) {
	case ASX_IOC_BASE(ASX_IOC_PUSH):
	case ASX_IOC_BASE(ASX_IOC_POP):
	case ASX_IOC_BASE(ASX_IOC_LIST):
	case ASX_IOC_BASE(ASX_IOC_PUTMSG):
	case ASX_IOC_BASE(ASX_IOC_GETMSG):
	case ASX_IOC_BASE(ASX_IOC_PEEK):
	case ASX_IOC_BASE(ASX_IOC_FLUSH):
	case ASX_IOC_BASE(ASX_IOC_SRDOPT):
	case ASX_IOC_BASE(ASX_IOC_GRDOPT):
	case ASX_IOC_BASE(ASX_IOC_SWROPT):
	case ASX_IOC_BASE(ASX_IOC_GWROPT):
	case ASX_IOC_BASE(ASX_IOC_NREAD):
	case ASX_IOC_BASE(ASX_IOC_SETWM):
	case ASX_IOC_BASE(ASX_IOC_STR):
	case ASX_IOC_BASE(ASX_IOC_LINK):
	case ASX_IOC_BASE(ASX_IOC_UNLINK):
	case ASX_IOC_BASE(ASX_IOC_PIPE):
	case ASX_IOC_BASE(ASX_IOC_SETDRV):
		break;
	default:	/* VERSION, GETWM, QSTATS, AUTOPUSH, SA_CREATE; unknown ones: ENOTTY */
		return 0;
	}
	switch (base) {
	case ASX_IOC_BASE(ASX_IOC_PUSH):
	case ASX_IOC_BASE(ASX_IOC_POP):
	case ASX_IOC_BASE(ASX_IOC_FLUSH):
	case ASX_IOC_BASE(ASX_IOC_STR):
	case ASX_IOC_BASE(ASX_IOC_LINK):
	case ASX_IOC_BASE(ASX_IOC_UNLINK):
		return asx_ioc_refused(st, true);
	}
	return asx_ioc_refused(st, false);
}

long asx_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct asx_stream *st = file->private_data;
	void __user *uarg = (void __user *)arg;
	unsigned int base = ASX_IOC_BASE(cmd);
	long ret;

	if (asx_xsi_cmd(cmd))
		return asx_xsi_ioctl(file, cmd, arg);
	ret = ioc_refused(st, base);
	if (ret)
		return ret;
	switch (base) {
	case ASX_IOC_BASE(ASX_IOC_VERSION):
		return ioc_version(uarg);
	case ASX_IOC_BASE(ASX_IOC_PUSH):
		return ioc_push(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_POP):
		return ioc_pop(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_LIST):
		return ioc_list(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_PUTMSG):
		return ioc_putmsg(st, file, uarg);
	case ASX_IOC_BASE(ASX_IOC_GETMSG):
		return ioc_getmsg(st, file, uarg, false);
	case ASX_IOC_BASE(ASX_IOC_PEEK):
		return ioc_getmsg(st, file, uarg, true);
	case ASX_IOC_BASE(ASX_IOC_FLUSH):
		return ioc_flush(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_SRDOPT):
	case ASX_IOC_BASE(ASX_IOC_GRDOPT):
	case ASX_IOC_BASE(ASX_IOC_SWROPT):
	case ASX_IOC_BASE(ASX_IOC_GWROPT):
		return ioc_opt(st, base, uarg);
	case ASX_IOC_BASE(ASX_IOC_NREAD):
		return ioc_nread(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_GETWM):
		return ioc_wm(st, false, uarg);
	case ASX_IOC_BASE(ASX_IOC_SETWM):
		return ioc_wm(st, true, uarg);
	case ASX_IOC_BASE(ASX_IOC_QSTATS):
		return ioc_qstats(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_STR):
		return ioc_str(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_LINK):
		return ioc_link(st, true, uarg);
	case ASX_IOC_BASE(ASX_IOC_UNLINK):
		return ioc_link(st, false, uarg);
	case ASX_IOC_BASE(ASX_IOC_PIPE):
		return ioc_pipe(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_SETDRV):
		return ioc_setdrv(st, uarg);
	case ASX_IOC_BASE(ASX_IOC_AUTOPUSH):
		return ioc_autopush(uarg);
	case ASX_IOC_BASE(ASX_IOC_SA_CREATE):
		return asx_sa_create(uarg);
	default:
		if (!asx_tioc_cmd(cmd))
			return -ENOTTY;
		ret = asx_ioc_refused(st, true);
		return ret ? ret : asx_tioctl(st, cmd, arg);
	}
}
