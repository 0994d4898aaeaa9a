// SPDX-License-Identifier: GPL-2.0
/*
 * The XSI STREAMS ioctls on /dev/asx: the requests of streamio(7) (I_PUSH,
 * I_STR, ...) with their XSI numbers, arguments, return values and errors,
 * so that a STREAMS program calls ioctl() unchanged.  Each is carried out
 * by the same code as the native size-first ioctl it matches (ioctl.c); this
 * file translates arguments, flag values and errors, and answers the
 * requests that only look at the Stream head, and passes descriptors over
 * pipes (I_SENDFD, I_RECVFD), the close time (I_SETCLTIME) and I_FDINSERT.
 * Persistent links (I_PLINK, I_PUNLINK) are those of a named mux (mux.c).
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"
#include "main.h"
#include "msg.h"
#include "registry.h"

#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/net.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/sock.h>

static_assert(sizeof(struct asx_xsi_strbuf) == 16);
static_assert(sizeof(struct asx_xsi_strpeek) == 40);
static_assert(sizeof(struct asx_xsi_strioctl) == 24);
static_assert(sizeof(struct asx_xsi_str_list) == 16);
static_assert(sizeof(struct asx_xsi_str_mlist) == ASX_XSI_FMNAMESZ + 1);
static_assert(sizeof(struct asx_xsi_bandinfo) == 8);
static_assert(sizeof(struct asx_xsi_strrecvfd) == 20);
static_assert(sizeof(struct asx_xsi_strfdinsert) == 48);

/* ic_timout (seconds) as STR's timeout_ms: the longest is about 24 days */
#define XSI_MAX_TIMOUT	(S32_MAX / MSEC_PER_SEC)

bool asx_xsi_cmd(unsigned int cmd)
{
	return (cmd & ~0xffU) == ASX_XSI_SID;
}

/* A module name from user space: NUL-terminated within ASX_NAME_MAX. */
static int xsi_name(char *name, unsigned long arg)
{
	long n = strncpy_from_user(name, (const char __user *)arg, ASX_NAME_MAX);

	if (n < 0)
		return n;
	if (n == ASX_NAME_MAX || !n)
		return -EINVAL;
	return 0;
}

/* Copies @name out as an XSI module name (FMNAMESZ + 1 bytes with the NUL). */
static int xsi_put_name(char __user *to, const char *name)
{
	char buf[ASX_XSI_FMNAMESZ + 1] = { 0 };

	/* never a truncated name: a program would push or find the wrong one */
	if (strscpy(buf, name, sizeof(buf)) < 0)
		return -ENAMETOOLONG;
	return copy_to_user(to, buf, sizeof(buf)) ? -EFAULT : 0;
}

/* I_NREAD: messages at the head; *arg the data bytes of the first one. */
static long xsi_nread(struct asx_stream *st, unsigned long arg)
{
	struct asx_msg *mp, *b;
	u32 msgs;
	int first = 0;

	spin_lock(&st->hrq.lock);
	msgs = st->hrq.nmsgs;
	mp = list_first_entry_or_null(&st->hrq.msgs, struct asx_msg, list);
	for (b = mp; b; b = b->cont)
		if (b->type == ASX_M_DATA)
			first += asx_blen(b);
	spin_unlock(&st->hrq.lock);
	if (put_user(first, (int __user *)arg))
		return -EFAULT;
	return min_t(u32, msgs, INT_MAX);
}

/* I_LOOK, I_FIND and I_LIST: the modules from the top, then the driver. */
static long xsi_look(struct asx_stream *st, unsigned long arg)
{
	char name[ASX_NAME_MAX];

	if (!asx_stream_names(st, name, 1, NULL))
		return -EINVAL;		/* no module */
	return xsi_put_name((char __user *)arg, name);
}

static long xsi_find(struct asx_stream *st, unsigned long arg)
{
	struct asx_modinfo *mi;
	char name[ASX_NAME_MAX];
	char *names;
	u32 n, i;
	long found = 0;
	int ret;

	ret = xsi_name(name, arg);
	if (ret)
		return ret;
	mi = asx_find_module(name);
	if (!mi)
		return -EINVAL;		/* not a module name */
	asx_put_module(mi);
	names = kcalloc(ASX_MAX_DEPTH, ASX_NAME_MAX, GFP_KERNEL);
	if (!names)
		return -ENOMEM;
	n = asx_stream_names(st, names, ASX_MAX_DEPTH, NULL);
	for (i = 0; i < n && i < ASX_MAX_DEPTH && !found; i++)
		found = !strcmp(names + i * ASX_NAME_MAX, name);
	kfree(names);
	return found;
}

static long xsi_list(struct asx_stream *st, unsigned long arg)
{
	struct asx_xsi_str_mlist __user *to;
	struct asx_xsi_str_list sl;
	char drv[ASX_NAME_MAX];
	char *names;
	u32 n, i;
	int ret = 0;

	if (!arg)
		return asx_stream_names(st, NULL, 0, NULL) + 1;	/* and the driver */
	if (copy_from_user(&sl, (void __user *)arg, sizeof(sl)))
		return -EFAULT;
	if (sl.sl_nmods < 1)
		return -EINVAL;
	names = kcalloc(ASX_MAX_DEPTH + 1, ASX_NAME_MAX, GFP_KERNEL);
	if (!names)
		return -ENOMEM;
	n = min_t(u32, asx_stream_names(st, names, ASX_MAX_DEPTH, drv), ASX_MAX_DEPTH);
	strscpy(names + n * ASX_NAME_MAX, drv, ASX_NAME_MAX);	/* the driver last */
	n = min_t(u32, n + 1, sl.sl_nmods);

	to = u64_to_user_ptr(sl.sl_modlist);
	for (i = 0; i < n && !ret; i++)
		ret = xsi_put_name(to[i].l_name, names + i * ASX_NAME_MAX);
	kfree(names);
	if (ret)
		return ret;
	sl.sl_nmods = n;
	return copy_to_user((void __user *)arg, &sl, sizeof(sl.sl_nmods)) ? -EFAULT : 0;
}

/* I_SRDOPT / I_GRDOPT: the XSI protocol bits sit elsewhere than asx.ko's. */
static long xsi_srdopt(struct asx_stream *st, unsigned int arg)
{
	unsigned int mode = arg & ASX_XSI_RMODEMASK, prot = arg & ASX_XSI_RPROTMASK;

	if ((arg & ~(ASX_XSI_RMODEMASK | ASX_XSI_RPROTMASK)) ||
	    mode == ASX_XSI_RMODEMASK ||
	    (prot != ASX_XSI_RPROTNORM && prot != ASX_XSI_RPROTDAT && prot != ASX_XSI_RPROTDIS))
		return -EINVAL;
	WRITE_ONCE(st->ropt, mode | (prot == ASX_XSI_RPROTDAT ? ASX_RPROTDAT :
				     prot == ASX_XSI_RPROTDIS ? ASX_RPROTDIS : ASX_RPROTNORM));
	return 0;
}

static long xsi_grdopt(struct asx_stream *st, unsigned long arg)
{
	unsigned int o = READ_ONCE(st->ropt), prot = o & ASX_RPROTMASK;
	int v = (o & ASX_RMODEMASK) | (prot == ASX_RPROTDAT ? ASX_XSI_RPROTDAT :
				       prot == ASX_RPROTDIS ? ASX_XSI_RPROTDIS : 0);

	return put_user(v, (int __user *)arg) ? -EFAULT : 0;
}

/*
 * I_STR: ic_timout in seconds (0: the default 15 s, INFTIM: none); the reply
 * replaces the data at ic_dp, up to ASX_MAX_STR bytes, as SVR4 copies it
 * whole; the return value is the module's.
 */
static long xsi_str(struct asx_stream *st, unsigned long arg)
{
	struct asx_xsi_strioctl xs;
	struct asx_strioctl si = { .size = sizeof(si) };
	long ret;

	if (copy_from_user(&xs, (void __user *)arg, sizeof(xs)))
		return -EFAULT;
	if (xs.ic_len < 0 || xs.ic_timout < ASX_XSI_INFTIM || xs.ic_timout > XSI_MAX_TIMOUT)
		return -EINVAL;
	si.cmd = xs.ic_cmd;
	si.timeout_ms = xs.ic_timout <= 0 ? xs.ic_timout : xs.ic_timout * MSEC_PER_SEC;
	si.len = xs.ic_len;
	si.maxlen = ASX_MAX_STR;
	si.data = xs.ic_dp;
	ret = asx_do_str(st, &si);
	if (ret == -ERANGE)
		return -EINVAL;		/* ic_len above the limit */
	if (ret)
		return ret;
	xs.ic_len = si.len;
	if (copy_to_user((void __user *)arg, &xs, sizeof(xs)))
		return -EFAULT;
	return si.rval;
}

/* I_PEEK: 1 and the first message (RS_HIPRI: only a high-priority one), or 0. */
static long xsi_peek(struct asx_stream *st, struct file *file, unsigned long arg)
{
	struct asx_xsi_strpeek sp;
	struct asx_strmsg sm = { .size = sizeof(sm) };
	long ret;

	if (copy_from_user(&sp, (void __user *)arg, sizeof(sp)))
		return -EFAULT;
	if (sp.flags & ~ASX_XSI_RS_HIPRI)
		return -EINVAL;
	sm.flags = sp.flags ? ASX_MSG_HIPRI : ASX_MSG_ANY;
	sm.ctl.maxlen = max(sp.ctlbuf.maxlen, 0);
	sm.ctl.buf = sp.ctlbuf.buf;
	sm.data.maxlen = max(sp.databuf.maxlen, 0);
	sm.data.buf = sp.databuf.buf;
	ret = asx_do_getmsg(st, file, &sm, true);
	if (ret)
		return ret;
	if (!sm.more)
		return 0;
	sp.ctlbuf.len = sm.ctl.len;
	sp.databuf.len = sm.data.len;
	sp.flags = sm.flags == ASX_MSG_HIPRI ? ASX_XSI_RS_HIPRI : 0;
	if (copy_to_user((void __user *)arg, &sp, sizeof(sp)))
		return -EFAULT;
	return 1;
}

/*
 * I_CANPUT: can band @band be written (each band has its own flow control,
 * Documentation/kmod.rst)? ANYBAND: can some band, band 0 or one > 0 that
 * has been written to.
 */
static long xsi_canput(struct asx_stream *st, int band)
{
	if (band == ASX_XSI_ANYBAND)
		return asx_canputnext(&st->hwq) || asx_canputnext_wrband(&st->hwq);
	return asx_bcanputnext(&st->hwq, band);
}

/* I_CKBAND / I_GETBAND: the bands of the messages at the head. */
static long xsi_band(struct asx_stream *st, bool get, unsigned long arg)
{
	struct asx_msg *mp;
	int band = (int)arg;
	long ret = get ? -ENODATA : 0;

	if (!get && (band < 0 || band > 255))
		return -EINVAL;
	spin_lock(&st->hrq.lock);
	list_for_each_entry(mp, &st->hrq.msgs, list) {
		if (get) {
			ret = mp->band;
			break;
		}
		if (!asx_hipri(mp) && mp->band == band) {
			ret = 1;
			break;
		}
	}
	spin_unlock(&st->hrq.lock);
	if (get && ret >= 0)
		ret = put_user((int)ret, (int __user *)arg) ? -EFAULT : 0;
	return ret;
}

static long xsi_flush(struct asx_stream *st, int flag, bool band, u32 pri)
{
	if (flag & ~ASX_XSI_FLUSHRW || !flag)
		return -EINVAL;
	/* the XSI FLUSHR and FLUSHW are asx.ko's ASX_FLUSHR and ASX_FLUSHW */
	return asx_do_flush(st, flag | (band ? ASX_FLUSHBAND : 0), band ? pri : 0);
}

static long xsi_flushband(struct asx_stream *st, unsigned long arg)
{
	struct asx_xsi_bandinfo bi;

	if (copy_from_user(&bi, (void __user *)arg, sizeof(bi)))
		return -EFAULT;
	return xsi_flush(st, bi.bi_flag, true, bi.bi_pri);
}

/*
 * I_LINK, I_UNLINK and, @persist, I_PLINK, I_PUNLINK: a persistent link is
 * one of the named mux's ("mux.N"), on a plain mux EINVAL; neither kind
 * unlinks the other (EINVAL: no such mux id).
 */
static long xsi_link(struct asx_stream *st, bool link, bool persist, unsigned long arg)
{
	long ret;
	u32 id;

	if (link) {
		ret = asx_do_link(st, (int)arg, &id, persist);
		/* XSI: already linked is EINVAL, no memory EAGAIN; a fresh mux id is an int */
		if (ret == -EBUSY)
			return -EINVAL;
		if (ret == -ENOMEM && persist)
			return -EAGAIN;
		return ret ? ret : (long)min_t(u32, id, INT_MAX);
	}
	id = (int)arg == ASX_XSI_MUXID_ALL ? ASX_MUX_ALL : (u32)arg;
	ret = asx_mux_unlink(st, id, persist);
	return ret == -ENXIO ? -EINVAL : ret;	/* no such mux id */
}

/*
 * May @f travel over a pipe?  Not a file that can itself hold descriptors in
 * flight: an asx.ko Stream (a pipe end, or a mux holding its lowers), an
 * AF_UNIX socket, an io_uring.  Sent to its own other end, or round a circle
 * of such files, it would hold itself open once every descriptor to it was
 * closed: a reference cycle nothing would free.
 */
static bool xsi_fd_may_hold_files(struct file *f)
{
	struct socket *sock;

	if (f->f_op == &asx_fops)
		return true;
	sock = sock_from_file(f);
	if (sock && sock->sk && sock->sk->sk_family == AF_UNIX)
		return true;
	/* io_is_uring_fops() is not exported: its anonymous inode's name */
	return !strcmp(f->f_path.dentry->d_name.name, "[io_uring]");
}

/*
 * I_SENDFD: a reference to the file of descriptor @arg, with the caller's
 * effective uid and gid, straight to the head of the pipe's other end.
 */
static long xsi_sendfd(struct asx_stream *st, unsigned long arg)
{
	struct asx_passfp *pf;
	struct asx_stream *p;
	struct asx_msg *mp;
	struct file *f;
	long ret;
	int fdret;

	if (st->drv != &asx_drv_pipe)
		return -EINVAL;		/* not a STREAMS pipe */
	if ((int)arg < 0)
		return -EBADF;
	f = fget((unsigned int)arg);
	if (!f)
		return -EBADF;
	ret = -EINVAL;
	if (xsi_fd_may_hold_files(f))
		goto out;
	ret = -EAGAIN;		/* streamio(7): no message block for the file */
	mp = asx_allocb(sizeof(*pf), GFP_KERNEL_ACCOUNT);
	if (!mp)
		goto out;
	mp->type = ASX_M_PASSFP;
	pf = (struct asx_passfp *)mp->wptr;
	pf->file = NULL;
	pf->uid = current_euid();
	pf->gid = current_egid();
	pf->fdcharged = NULL;
	mp->wptr += sizeof(*pf);
	if (asx_msg_charge(st->budget, mp)) {
		asx_freemsg(mp);
		goto out;
	}
	/* the per-user cap on files in flight (user_max_fds) */
	fdret = asx_budget_fd_charge(st->budget);
	if (!fdret)
		pf->fdcharged = st->budget;
	rcu_read_lock();
	p = rcu_dereference(st->peer);
	if (!p)
		ret = -ENXIO;		/* the other end has closed */
	else if (asx_stream_linked(p))
		ret = -EINVAL;		/* it has no reader: it belongs to a mux */
	else if (fdret)
		ret = fdret;		/* EAGAIN: the user has too many in flight */
	else if (!asx_canput(&p->hrq))
		ret = -EAGAIN;		/* its head's read queue is full */
	else
		ret = 0;
	if (!ret) {
		pf->file = f;
		f = NULL;
		asx_head_putfp(p, mp);
	}
	rcu_read_unlock();
	if (ret)
		asx_freemsg(mp);
out:
	if (f)
		fput(f);
	return ret;
}

/*
 * I_RECVFD: the descriptor first at the head, a new one in the caller's
 * table; EBADMSG if another message is first.
 */
static long xsi_recvfd(struct asx_stream *st, struct file *file, unsigned long arg)
{
	struct asx_xsi_strrecvfd rf = { 0 };
	struct asx_passfp *pf;
	struct asx_msg *mp;
	long ret;
	int fd;

	for (;;) {
		ret = asx_head_lock_readable(st, file->f_flags & O_NONBLOCK);
		if (ret)
			return ret;
		mp = asx_getq(&st->hrq);
		if (mp || test_bit(ASX_ST_HANGUP, &st->flags))
			break;
		mutex_unlock(&st->rlock);
	}
	ret = -ENXIO;		/* hung up, nothing left */
	if (!mp)
		goto out;
	ret = -EBADMSG;
	if (mp->type != ASX_M_PASSFP)
		goto back;
	pf = (struct asx_passfp *)mp->rptr;
	fd = get_unused_fd_flags(0);
	ret = fd;		/* EMFILE */
	if (fd < 0)
		goto back;
	rf.fd = fd;
	rf.uid = from_kuid_munged(current_user_ns(), pf->uid);
	rf.gid = from_kgid_munged(current_user_ns(), pf->gid);
	if (copy_to_user((void __user *)arg, &rf, sizeof(rf))) {
		put_unused_fd(fd);
		ret = -EFAULT;
		goto back;
	}
	fd_install(fd, get_file(pf->file));
	asx_freemsg(mp);
	ret = 0;
	goto out;
back:
	asx_putbq(&st->hrq, mp);
out:
	mutex_unlock(&st->rlock);
	asx_queue_drained(&st->hrq);
	return ret;
}

/*
 * I_FDINSERT: putmsg() with the id of another Stream, that of descriptor
 * fildes, stored in the control part at offset.  streamio(7) has the read
 * queue of that Stream's driver there; asx.ko gives its id (low 32 bits, a
 * t_uscalar_t as XSI's later issues have it), never a kernel pointer: on a
 * loop Stream the message comes back to user space.
 */
static long xsi_fdinsert(struct asx_stream *st, struct file *file, unsigned long arg)
{
	struct asx_strmsg sm = { .size = sizeof(sm), .flags = ASX_MSG_XSI };
	struct asx_xsi_strfdinsert fi;
	struct asx_ctl_token tok;
	struct asx_stream *other;
	struct file *f;

	if (copy_from_user(&fi, (void __user *)arg, sizeof(fi)))
		return -EFAULT;
	if (fi.flags & ~ASX_XSI_RS_HIPRI || fi.offset < 0 || fi.offset % sizeof(u32) ||
	    fi.ctlbuf.len < (s32)sizeof(u32) || fi.offset > fi.ctlbuf.len - (s32)sizeof(u32))
		return -EINVAL;
	if (fi.fildes < 0)
		return -EINVAL;
	f = fget(fi.fildes);
	if (!f)
		return -EINVAL;		/* XSI: not a valid open Stream */
	other = f->f_op == &asx_fops ? f->private_data : NULL;
	if (!other || asx_stream_linked(other)) {
		fput(f);
		return -EINVAL;
	}
	tok.off = fi.offset;
	tok.val = lower_32_bits(other->id);
	fput(f);
	if (fi.flags)
		sm.flags |= ASX_MSG_HIPRI;
	sm.ctl.len = fi.ctlbuf.len;
	sm.ctl.buf = fi.ctlbuf.buf;
	sm.data.len = max(fi.databuf.len, -1);
	sm.data.buf = fi.databuf.buf;
	return asx_do_putmsg(st, file, &sm, &tok);
}

/* I_SETCLTIME: *arg milliseconds, 0 to ASX_XSI_MAX_CLTIME. */
static long xsi_setcltime(struct asx_stream *st, unsigned long arg)
{
	int ms;

	if (get_user(ms, (int __user *)arg))
		return -EFAULT;
	if (ms < 0 || ms > ASX_XSI_MAX_CLTIME)
		return -EINVAL;
	WRITE_ONCE(st->cltime_ms, ms);
	return 0;
}

long asx_xsi_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct asx_stream *st = file->private_data;
	char name[ASX_NAME_MAX];
	u32 events;
	long ret;

	if (in_compat_syscall() &&
	    (cmd == ASX_I_STR || cmd == ASX_I_PEEK || cmd == ASX_I_LIST || cmd == ASX_I_FDINSERT))
		return -ENOTTY;
	switch (cmd) {
	case ASX_I_PUSH:
	case ASX_I_POP:
	case ASX_I_FLUSH:
	case ASX_I_FLUSHBAND:
	case ASX_I_STR:
	case ASX_I_LINK:
	case ASX_I_UNLINK:
	case ASX_I_PLINK:
	case ASX_I_PUNLINK:
	case ASX_I_SENDFD:
	case ASX_I_FDINSERT:
		ret = asx_ioc_refused(st, true);
		break;
	default:
		ret = asx_ioc_refused(st, false);
	}
	if (ret)
		return ret;

	switch (cmd) {
	case ASX_I_NREAD:
		return xsi_nread(st, arg);
	case ASX_I_PUSH:
		ret = xsi_name(name, arg);
		if (!ret)
			ret = asx_stream_push(st, name);
		return ret == -ENOENT ? -EINVAL : ret;	/* XSI: invalid module name */
	case ASX_I_POP:
		return asx_stream_pop(st, "");
	case ASX_I_LOOK:
		return xsi_look(st, arg);
	case ASX_I_FIND:
		return xsi_find(st, arg);
	case ASX_I_LIST:
		return xsi_list(st, arg);
	case ASX_I_FLUSH:
		return xsi_flush(st, (int)arg, false, 0);
	case ASX_I_FLUSHBAND:
		return xsi_flushband(st, arg);
	case ASX_I_SRDOPT:
		return xsi_srdopt(st, (unsigned int)arg);
	case ASX_I_GRDOPT:
		return xsi_grdopt(st, arg);
	case ASX_I_SWROPT:
		/* SNDPIPE is refused: a write to a hung-up pipe end raises SIGPIPE always */
		if ((unsigned int)arg & ~ASX_XSI_SNDZERO)
			return -EINVAL;
		WRITE_ONCE(st->wopt, (unsigned int)arg ? ASX_SNDZERO : 0);
		return 0;
	case ASX_I_GWROPT:
		return put_user(READ_ONCE(st->wopt) & ASX_SNDZERO ? ASX_XSI_SNDZERO : 0,
				(int __user *)arg) ? -EFAULT : 0;
	case ASX_I_STR:
		return xsi_str(st, arg);
	case ASX_I_PEEK:
		return xsi_peek(st, file, arg);
	case ASX_I_LINK:
		return xsi_link(st, true, false, arg);
	case ASX_I_UNLINK:
		return xsi_link(st, false, false, arg);
	case ASX_I_PLINK:
		return xsi_link(st, true, true, arg);
	case ASX_I_PUNLINK:
		return xsi_link(st, false, true, arg);
	case ASX_I_CANPUT:
		if ((int)arg != ASX_XSI_ANYBAND && ((int)arg < 0 || (int)arg > 255))
			return -EINVAL;
		return xsi_canput(st, (int)arg);
	case ASX_I_CKBAND:
		return xsi_band(st, false, arg);
	case ASX_I_GETBAND:
		return xsi_band(st, true, arg);
	case ASX_I_ATMARK:
		if ((int)arg != ASX_XSI_ANYMARK && (int)arg != ASX_XSI_LASTMARK)
			return -EINVAL;
		return 0;	/* no module or driver of asx.ko marks a message */
	case ASX_I_SETSIG:
		return asx_stream_setsig(st, (unsigned int)arg);
	case ASX_I_GETSIG:
		ret = asx_stream_getsig(st, &events);
		if (!ret && put_user(events, (int __user *)arg))
			ret = -EFAULT;
		return ret;
	case ASX_I_SENDFD:
		return xsi_sendfd(st, arg);
	case ASX_I_RECVFD:
		return xsi_recvfd(st, file, arg);
	case ASX_I_SETCLTIME:
		return xsi_setcltime(st, arg);
	case ASX_I_GETCLTIME:
		return put_user((int)READ_ONCE(st->cltime_ms), (int __user *)arg) ? -EFAULT : 0;
	case ASX_I_FDINSERT:
		return xsi_fdinsert(st, file, arg);
	default:
		return -ENOTTY;
	}
}
