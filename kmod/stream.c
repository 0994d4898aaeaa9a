// SPDX-License-Identifier: GPL-2.0
/*
 * ASX Streams: life cycle, push/pop, and the Stream head (read, write, poll).
 *
 * The chain of queues is written under st->cfg and walked under RCU: a put
 * procedure always runs inside rcu_read_lock(), so once a module is unlinked
 * and a grace period has passed, nothing but its own service procedures can
 * reach it.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "registry.h"
#include "stream.h"

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

atomic_long_t asx_nr_streams = ATOMIC_LONG_INIT(0);
atomic_long_t asx_nr_minst = ATOMIC_LONG_INIT(0);
/* Protects asx_streams, the list /proc/asx/streams walks (lock order: stream.h). */
DEFINE_MUTEX(asx_streams_lock);
LIST_HEAD(asx_streams);
static atomic64_t asx_next_id = ATOMIC64_INIT(0);

void asx_head_wput(struct asx_queue *q, struct asx_msg *mp)
{
	asx_putnext(q, mp);
}

/* A process I_SETSIG registered on a Stream, and the events it asked for. */
struct asx_sigreg {
	struct list_head node;
	struct pid *pid;
	u32 events;
};

/*
 * Signals the processes registered for any of @events (XSI I_SETSIG):
 * SIGPOLL, or SIGURG for a band message to one that asked S_BANDURG.  One
 * load when nobody registered; callable wherever a put procedure runs.
 */
static void head_sig(struct asx_stream *st, u32 events)
{
	struct asx_sigreg *r;

	if (!(READ_ONCE(st->sig_events) & events))
		return;
	spin_lock(&st->sig_lock);
	list_for_each_entry(r, &st->sigs, node) {
		if (!(r->events & events))
			continue;
		kill_pid(r->pid, (events & ASX_XSI_S_RDBAND) && (r->events & ASX_XSI_S_BANDURG) ?
			 SIGURG : SIGPOLL, 1);
	}
	spin_unlock(&st->sig_lock);
}

static struct asx_sigreg *find_sigreg(struct asx_stream *st)
{
	struct asx_sigreg *r;

	list_for_each_entry(r, &st->sigs, node)
		if (r->pid == task_tgid(current))
			return r;
	return NULL;
}

static void update_sig_events(struct asx_stream *st)
{
	struct asx_sigreg *r;
	u32 all = 0;

	list_for_each_entry(r, &st->sigs, node)
		all |= r->events;
	WRITE_ONCE(st->sig_events, all);
}

int asx_stream_setsig(struct asx_stream *st, u32 events)
{
	struct asx_sigreg *r, *fresh = NULL;

	if (events & ~ASX_XSI_S_ALL)
		return -EINVAL;
	if (events) {
		fresh = kzalloc(sizeof(*fresh), GFP_KERNEL_ACCOUNT);
		if (!fresh)
			return -ENOMEM;
	}
	spin_lock(&st->sig_lock);
	r = find_sigreg(st);
	if (r && events) {
		r->events = events;
	} else if (r) {
		list_del(&r->node);
	} else if (events) {
		fresh->pid = get_pid(task_tgid(current));
		fresh->events = events;
		list_add_tail(&fresh->node, &st->sigs);
		fresh = NULL;
	}
	update_sig_events(st);
	spin_unlock(&st->sig_lock);
	kfree(fresh);
	if (r && !events) {
		put_pid(r->pid);
		kfree(r);
	}
	/* XSI: 0 unregisters; a process that was not registered is EINVAL */
	return r || events ? 0 : -EINVAL;
}

int asx_stream_getsig(struct asx_stream *st, u32 *events)
{
	struct asx_sigreg *r;

	spin_lock(&st->sig_lock);
	r = find_sigreg(st);
	if (r)
		*events = r->events;
	spin_unlock(&st->sig_lock);
	return r ? 0 : -EINVAL;
}

static void free_sigregs(struct asx_stream *st)
{
	struct asx_sigreg *r, *tmp;

	list_for_each_entry_safe(r, tmp, &st->sigs, node) {
		put_pid(r->pid);
		kfree(r);
	}
}

/*
 * The queue below the head has room again: wake the writers, of band 0
 * (S_OUTPUT) or of a band > 0 (S_WRBAND) as the back-enable says; both when
 * it does not say (asx_qenable() called directly).
 */
void asx_head_wenable(struct asx_queue *q)
{
	unsigned long by = xchg(&q->benabled, 0);
	__poll_t mask = 0;
	u32 events = 0;

	if (!by)
		by = BIT(ASX_BENAB_BAND0) | BIT(ASX_BENAB_BANDS);
	if (by & BIT(ASX_BENAB_BAND0)) {
		mask |= EPOLLOUT | EPOLLWRNORM;
		events |= ASX_XSI_S_OUTPUT;
	}
	if (by & BIT(ASX_BENAB_BANDS)) {
		mask |= EPOLLWRBAND;
		events |= ASX_XSI_S_WRBAND;
	}
	wake_up_interruptible_poll(&q->st->wwait, mask);
	head_sig(q->st, events);
}

const struct asx_qinit asx_head_rinit = { .put = asx_head_rput };
const struct asx_qinit asx_head_winit = { .put = asx_head_wput, .enable = asx_head_wenable };

#define cfg_deref(st, p)	rcu_dereference_protected(p, lockdep_is_held(&(st)->cfg))

static void wake_readers(struct asx_stream *st, __poll_t mask)
{
	if (wq_has_sleeper(&st->rwait))
		wake_up_interruptible_poll(&st->rwait, mask);
}

void asx_head_hangup(struct asx_stream *st)
{
	set_bit(ASX_ST_HANGUP, &st->flags);
	wake_up_interruptible_poll(&st->rwait, EPOLLHUP | EPOLLIN | EPOLLRDNORM);
	wake_up_interruptible_poll(&st->wwait, EPOLLHUP);
	wake_up(&st->iocwait);
	head_sig(st, ASX_XSI_S_HANGUP);
}

static void head_error(struct asx_stream *st, int error)
{
	st->error = error ? error : EIO;
	set_bit(ASX_ST_ERROR, &st->flags);
	wake_up_interruptible_poll(&st->rwait, EPOLLERR);
	wake_up_interruptible_poll(&st->wwait, EPOLLERR);
	wake_up(&st->iocwait);
	head_sig(st, ASX_XSI_S_ERROR);
}

static void head_ioc_answer(struct asx_stream *st, struct asx_msg *mp)
{
	struct asx_iocblk *ioc = (struct asx_iocblk *)mp->rptr;
	bool taken = false;

	if (asx_blen(mp) >= sizeof(*ioc)) {
		spin_lock(&st->hrq.lock);
		if (st->ioc_wait && ioc->id == st->ioc_wait && !st->ioc_resp &&
		    asx_tioc_takes(st, mp)) {
			st->ioc_resp = mp;
			taken = true;
		}
		spin_unlock(&st->hrq.lock);
	}
	if (taken)
		wake_up(&st->iocwait);
	else
		asx_tioc_refuse(st, mp, ECANCELED);
}

/* What arrives at the top of the read side (of a Stream not linked under a mux). */
void asx_head_rput(struct asx_queue *q, struct asx_msg *mp)
{
	struct asx_stream *st = q->st;
	__poll_t mask;
	u32 events;
	u8 flags;

	switch (mp->type) {
	case ASX_M_DATA:
	case ASX_M_PROTO:
	case ASX_M_PCPROTO:
		mask = asx_hipri(mp) ? EPOLLPRI : EPOLLIN | (mp->band ? EPOLLRDBAND : EPOLLRDNORM);
		events = asx_hipri(mp) ? ASX_XSI_S_HIPRI :
			 ASX_XSI_S_INPUT | (mp->band ? ASX_XSI_S_RDBAND : ASX_XSI_S_RDNORM);
		/* Not @mp after this: a full queue drops it, a reader may take it at once. */
		asx_putq(q, mp);
		wake_readers(st, mask);
		head_sig(st, events);
		return;
	case ASX_M_FLUSH:
		flags = asx_blen(mp) ? mp->rptr[0] : 0;
		if (flags & ASX_FLUSHR)
			asx_flushq(q, flags & ASX_FLUSHBAND, asx_blen(mp) > 1 ? mp->rptr[1] : 0);
		if (flags & ASX_FLUSHW) {
			mp->rptr[0] = flags & ~ASX_FLUSHR;
			asx_putnext(&st->hwq, mp);
			return;
		}
		break;
	case ASX_M_IOCACK:
	case ASX_M_IOCNAK:
	case ASX_M_COPYIN:
	case ASX_M_COPYOUT:
		head_ioc_answer(st, mp);
		return;
	case ASX_M_ERROR:
		head_error(st, asx_blen(mp) ? mp->rptr[0] : EIO);
		break;
	case ASX_M_HANGUP:
		asx_head_hangup(st);
		break;
	}
	asx_freemsg(mp);
}

/*
 * I_SENDFD's message, put at @st's head by the other end of the pipe (under
 * rcu_read_lock()): past the modules, as a message of band 0.
 */
void asx_head_putfp(struct asx_stream *st, struct asx_msg *mp)
{
	asx_putq(&st->hrq, mp);
	wake_readers(st, EPOLLIN | EPOLLRDNORM);
	head_sig(st, ASX_XSI_S_INPUT | ASX_XSI_S_RDNORM);
}

static void init_driver(struct asx_stream *st, const struct asx_driver *drv)
{
	st->drv = drv;
	asx_queue_init(&st->drq, st, &drv->rinit, drv->name, ASX_SIDE_READ, 0, 0);
	asx_queue_init(&st->dwq, st, &drv->winit, drv->name, ASX_SIDE_WRITE, 0, 0);
	st->drq.other = &st->dwq;
	st->dwq.other = &st->drq;
}

/* A new Stream, its driver @drv; it takes the opener's ids. */
struct asx_stream *asx_stream_new(const struct asx_driver *drv)
{
	struct asx_stream *st;

	st = kzalloc(sizeof(*st), GFP_KERNEL_ACCOUNT);
	if (!st)
		return NULL;
	st->cltime_ms = ASX_XSI_DEF_CLTIME;
	st->id = atomic64_inc_return(&asx_next_id);
	st->pid = task_tgid_nr(current);
	st->uid = current_euid();
	st->budget = asx_budget_get(st->uid);
	if (!st->budget) {
		kfree(st);
		return NULL;
	}
	get_task_comm(st->comm, current);
	mutex_init(&st->cfg);
	mutex_init(&st->rlock);
	mutex_init(&st->ioclock);
	init_waitqueue_head(&st->rwait);
	init_waitqueue_head(&st->wwait);
	init_waitqueue_head(&st->iocwait);
	spin_lock_init(&st->sig_lock);
	INIT_LIST_HEAD(&st->sigs);
	INIT_LIST_HEAD(&st->mods);
	INIT_LIST_HEAD(&st->lowers);
	INIT_LIST_HEAD(&st->mux_node);

	asx_queue_init(&st->hrq, st, &asx_head_rinit, "head", ASX_SIDE_READ, 0, 0);
	asx_queue_init(&st->hwq, st, &asx_head_winit, "head", ASX_SIDE_WRITE, 0, 0);
	st->hrq.other = &st->hwq;
	st->hwq.other = &st->hrq;
	init_driver(st, drv);

	RCU_INIT_POINTER(st->hwq.next, &st->dwq);
	RCU_INIT_POINTER(st->dwq.prev, &st->hwq);
	RCU_INIT_POINTER(st->drq.next, &st->hrq);
	RCU_INIT_POINTER(st->hrq.prev, &st->drq);
	if (drv->attach)
		drv->attach(st);

	mutex_lock(&asx_streams_lock);
	list_add_tail(&st->all, &asx_streams);
	mutex_unlock(&asx_streams_lock);
	atomic_long_inc(&asx_nr_streams);
	return st;
}

/*
 * Gives @st another driver; the caller (SETDRV) made sure nothing depends on
 * the old one: no module, nothing queued, not joined to another Stream.
 */
void asx_stream_set_driver(struct asx_stream *st, const struct asx_driver *drv)
{
	lockdep_assert_held(&st->cfg);
	/*
	 * The old driver's service procedure may still be scheduled (a pop's
	 * kick, a back-enable): cancel it, or let it finish, so it never runs
	 * as the new one's.
	 */
	asx_queue_cancel(&st->dwq);
	st->drv = drv;
	WRITE_ONCE(st->drq.qi, &drv->rinit);
	WRITE_ONCE(st->dwq.qi, &drv->winit);
	st->drq.name = drv->name;
	st->dwq.name = drv->name;
	rcu_assign_pointer(st->dwq.next, NULL);
	rcu_assign_pointer(st->drq.prev, NULL);
	if (drv->attach)
		drv->attach(st);
	/* A writer that raced the switch may have queued a message since. */
	if (READ_ONCE(st->dwq.nmsgs))
		asx_qenable(&st->dwq);
}

static struct asx_minst *minst_alloc(struct asx_stream *st, struct asx_modinfo *mi)
{
	struct asx_minst *m;

	m = kzalloc(struct_size(m, priv, DIV_ROUND_UP(mi->priv_size, sizeof(long))),
		    GFP_KERNEL_ACCOUNT);
	if (!m)
		return NULL;
	m->mi = mi;
	asx_queue_init(&m->rq, st, &mi->rinit, mi->name, ASX_SIDE_READ, mi->hiwat, mi->lowat);
	asx_queue_init(&m->wq, st, &mi->winit, mi->name, ASX_SIDE_WRITE, mi->hiwat, mi->lowat);
	m->rq.other = &m->wq;
	m->wq.other = &m->rq;
	m->rq.priv = m->priv;
	m->wq.priv = m->priv;
	atomic_long_inc(&asx_nr_minst);
	return m;
}

static void minst_free(struct asx_minst *m)
{
	struct asx_modinfo *mi = m->mi;

	asx_queue_free_bands(&m->rq);
	asx_queue_free_bands(&m->wq);
	kfree(m);
	atomic_long_dec(&asx_nr_minst);
	asx_put_module(mi);
}

/* Wakes everything that may wait on a queue that just left or joined the chain. */
static void kick_all(struct asx_stream *st)
{
	struct asx_minst *m;

	lockdep_assert_held(&st->cfg);
	list_for_each_entry(m, &st->mods, node) {
		asx_qenable(&m->rq);
		asx_qenable(&m->wq);
	}
	asx_qenable(&st->drq);
	asx_qenable(&st->dwq);
	asx_qenable(&st->hwq);
	wake_readers(st, EPOLLIN);
}

int asx_stream_push(struct asx_stream *st, const char *name)
{
	struct asx_queue *below, *feed;
	struct asx_modinfo *mi;
	struct asx_minst *m;
	int ret;

	mi = asx_find_module(name);
	if (!mi)
		return -ENOENT;
	m = minst_alloc(st, mi);
	if (!m) {
		asx_put_module(mi);
		return -ENOMEM;
	}

	ret = mutex_lock_killable(&st->cfg);
	if (ret)
		goto err_free_minst;
	ret = -ENOSR;
	if (st->depth >= ASX_MAX_DEPTH)
		goto err_unlock;
	if (mi->open) {
		ret = mi->open(&m->rq, &m->wq);
		if (ret)
			goto err_unlock;
	}

	below = cfg_deref(st, st->hwq.next);
	feed = cfg_deref(st, st->hrq.prev);
	RCU_INIT_POINTER(m->wq.next, below);
	RCU_INIT_POINTER(m->wq.prev, &st->hwq);
	RCU_INIT_POINTER(m->rq.next, &st->hrq);
	RCU_INIT_POINTER(m->rq.prev, feed);
	rcu_assign_pointer(below->prev, &m->wq);
	rcu_assign_pointer(feed->next, &m->rq);
	rcu_assign_pointer(st->hrq.prev, &m->rq);
	rcu_assign_pointer(st->hwq.next, &m->wq);
	list_add(&m->node, &st->mods);
	st->depth++;
	st->ap_depth = 0;
	mutex_unlock(&st->cfg);
	return 0;

err_unlock:
	mutex_unlock(&st->cfg);
err_free_minst:
	minst_free(m);
	return ret;
}

/*
 * The names of @st's modules, top first, into @names (room for @max names of
 * ASX_NAME_MAX bytes; the others are left out), and its driver's into
 * @driver (ASX_NAME_MAX bytes) if given.  Returns the number of modules.
 */
u32 asx_stream_names(struct asx_stream *st, char *names, u32 max, char *driver)
{
	struct asx_minst *m;
	u32 n = 0;

	mutex_lock(&st->cfg);
	list_for_each_entry(m, &st->mods, node) {
		if (n < max)
			strscpy(names + n * ASX_NAME_MAX, m->mi->name, ASX_NAME_MAX);
		n++;
	}
	if (driver)
		strscpy(driver, st->drv->name, ASX_NAME_MAX);
	mutex_unlock(&st->cfg);
	return n;
}

/*
 * Pushes @drv's autopush list (ASX_IOC_AUTOPUSH) on @st, first to last; if
 * one fails, pops those it pushed and returns the error.  The Stream then
 * counts them as autopushed until a PUSH or POP of its user.
 */
int asx_stream_autopush(struct asx_stream *st, const char *drv)
{
	char mods[ASX_AUTOPUSH_MAX * ASX_NAME_MAX];	/* 256 bytes */
	u32 count, i;
	int ret = 0;

	count = asx_autopush_get(drv, mods);
	for (i = 0; !ret && i < count; i++)
		ret = asx_stream_push(st, mods + i * ASX_NAME_MAX);
	if (ret) {
		while (i-- > 1)
			asx_stream_pop(st, "");
	} else if (count) {
		mutex_lock(&st->cfg);
		st->ap_depth = count;
		mutex_unlock(&st->cfg);
	}
	return ret;
}

/*
 * Pops what autopush pushed, if that is all @st holds (its user pushed and
 * popped nothing since), so that SETDRV and PIPE find the fresh Stream they
 * need and push the new driver's list instead.
 */
int asx_stream_unautopush(struct asx_stream *st)
{
	u32 n;
	int ret = 0;

	mutex_lock(&st->cfg);
	n = st->ap_depth == st->depth ? st->ap_depth : 0;
	mutex_unlock(&st->cfg);
	while (n-- && !ret)
		ret = asx_stream_pop(st, "");
	return ret;
}

/* Unlinks @m; the caller waits for a grace period before finishing it. */
static void unlink_minst(struct asx_stream *st, struct asx_minst *m)
{
	struct asx_queue *wprev = cfg_deref(st, m->wq.prev);
	struct asx_queue *wnext = cfg_deref(st, m->wq.next);
	struct asx_queue *rprev = cfg_deref(st, m->rq.prev);
	struct asx_queue *rnext = cfg_deref(st, m->rq.next);

	lockdep_assert_held(&st->cfg);
	rcu_assign_pointer(wprev->next, wnext);
	rcu_assign_pointer(wnext->prev, wprev);
	rcu_assign_pointer(rprev->next, rnext);
	rcu_assign_pointer(rnext->prev, rprev);
	list_del(&m->node);
	st->depth--;
	asx_queue_close(&m->rq);
	asx_queue_close(&m->wq);
}

/*
 * Pops the top module, or the topmost one called @name. Messages it still
 * holds are passed on in their direction, not lost.
 */
int asx_stream_pop(struct asx_stream *st, const char *name)
{
	struct asx_minst *m, *found = NULL;
	struct asx_msg *mp;
	int ret;

	ret = mutex_lock_killable(&st->cfg);
	if (ret)
		return ret;
	if (list_empty(&st->mods)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	list_for_each_entry(m, &st->mods, node) {
		if (!name[0] || !strcmp(m->mi->name, name)) {
			found = m;
			break;
		}
	}
	if (!found) {
		ret = -ENOENT;
		goto out_unlock;
	}
	m = found;
	st->ap_depth = 0;
	unlink_minst(st, m);
	synchronize_rcu();
	cancel_work_sync(&m->wq.srv_work);
	cancel_work_sync(&m->rq.srv_work);
	while ((mp = asx_rmvq_first(&m->wq)))
		asx_putnext(&m->wq, mp);
	while ((mp = asx_rmvq_first(&m->rq)))
		asx_putnext(&m->rq, mp);
	if (m->mi->close)
		m->mi->close(&m->rq, &m->wq);
	kick_all(st);
	mutex_unlock(&st->cfg);
	minst_free(m);
	return 0;

out_unlock:
	mutex_unlock(&st->cfg);
	return ret;
}

/* The queue at @level (0 head, 1..depth modules, then the driver). */
struct asx_queue *asx_stream_queue(struct asx_stream *st, u32 level, u32 side)
{
	struct asx_minst *m;
	u32 i = 1;

	lockdep_assert_held(&st->cfg);
	if (side > ASX_SIDE_WRITE)
		return NULL;
	if (level == 0)
		return side ? &st->hwq : &st->hrq;
	if (level == ASX_LEVEL_DRIVER || level == st->depth + 1)
		return side ? &st->dwq : &st->drq;
	list_for_each_entry(m, &st->mods, node) {
		if (i++ == level)
			return side ? &m->wq : &m->rq;
	}
	return NULL;
}

/* After a grace period nothing reaches the Stream but its own workers. */
static void stream_free_work(struct work_struct *work)
{
	struct asx_stream *st = container_of(to_rcu_work(work), struct asx_stream, free_work);
	struct asx_minst *m, *tmp;

	cancel_work_sync(&st->dwq.srv_work);
	cancel_work_sync(&st->drq.srv_work);
	list_for_each_entry(m, &st->mods, node) {
		cancel_work_sync(&m->rq.srv_work);
		cancel_work_sync(&m->wq.srv_work);
	}
	list_for_each_entry_safe(m, tmp, &st->mods, node) {
		list_del(&m->node);
		if (m->mi->close)
			m->mi->close(&m->rq, &m->wq);
		asx_queue_purge(&m->rq);
		asx_queue_purge(&m->wq);
		minst_free(m);
	}
	free_sigregs(st);
	asx_queue_purge(&st->dwq);
	asx_queue_purge(&st->drq);
	asx_queue_purge(&st->hwq);
	asx_queue_purge(&st->hrq);
	if (st->ioc_resp)
		asx_freemsg(st->ioc_resp);
	if (st->drv->release)
		st->drv->release(st);
	kfree(st);
	atomic_long_dec(&asx_nr_streams);
}

/*
 * The last close: cut every way in and stop the queues from being scheduled;
 * the rest happens in asx_wq after a grace period, so close() does not wait
 * for one. asx_exit() waits for these (rcu_barrier(), destroy_workqueue()).
 */
void asx_stream_destroy(struct asx_stream *st)
{
	struct asx_minst *m;

	set_bit(ASX_ST_CLOSING, &st->flags);
	mutex_lock(&asx_streams_lock);
	list_del(&st->all);
	mutex_unlock(&asx_streams_lock);

	if (st->drv->detach)
		st->drv->detach(st);

	mutex_lock(&st->cfg);
	asx_queue_close(&st->hrq);
	asx_queue_close(&st->hwq);
	asx_queue_close(&st->drq);
	asx_queue_close(&st->dwq);
	list_for_each_entry(m, &st->mods, node) {
		asx_queue_close(&m->rq);
		asx_queue_close(&m->wq);
	}
	mutex_unlock(&st->cfg);

	INIT_RCU_WORK(&st->free_work, stream_free_work);
	queue_rcu_work(asx_wq, &st->free_work);
}

/* Nothing left on the write side to go down, or nowhere for it to go. */
static bool write_side_drained(struct asx_stream *st)
{
	struct asx_minst *m;
	bool empty;

	if (test_bit(ASX_ST_HANGUP, &st->flags) || test_bit(ASX_ST_ERROR, &st->flags))
		return true;
	mutex_lock(&st->cfg);
	empty = asx_queue_idle(&st->hwq) && asx_queue_idle(&st->dwq);
	list_for_each_entry(m, &st->mods, node)
		empty = empty && asx_queue_idle(&m->wq);
	mutex_unlock(&st->cfg);
	return empty;
}

/*
 * The last close's wait (I_SETCLTIME): up to the close time for the write
 * side to drain, polled every 10 ms; a signal ends it.  The caller decides
 * whether to wait at all (main.c: a pipe end, closed by a blocking file).
 */
void asx_stream_drain(struct asx_stream *st)
{
	unsigned long end = jiffies + msecs_to_jiffies(READ_ONCE(st->cltime_ms));

	while (!write_side_drained(st) && time_before(jiffies, end) && !signal_pending(current))
		msleep_interruptible(10);
}

static bool readable(struct asx_stream *st)
{
	return READ_ONCE(st->hrq.nmsgs) || READ_ONCE(st->flags);
}

/* Waits for a message, a hangup or an error at the head (no lock held). */
int asx_head_wait_readable(struct asx_stream *st, bool nonblock)
{
	if (readable(st))
		return 0;
	if (nonblock)
		return -EAGAIN;
	return wait_event_interruptible(st->rwait, readable(st));
}

/*
 * Waits for something at the head, then takes the reader's lock: 0 with
 * st->rlock held, or the error (the Stream's, EAGAIN, a signal's) without.
 */
int asx_head_lock_readable(struct asx_stream *st, bool nonblock)
{
	int ret = asx_head_wait_readable(st, nonblock);

	if (ret)
		return ret;
	if (mutex_lock_interruptible(&st->rlock))
		return -ERESTARTSYS;
	if (test_bit(ASX_ST_ERROR, &st->flags)) {
		mutex_unlock(&st->rlock);
		return -st->error;
	}
	return 0;
}

static bool writable(struct asx_stream *st, u8 band)
{
	return test_bit(ASX_ST_HANGUP, &st->flags) || test_bit(ASX_ST_ERROR, &st->flags) ||
	       asx_bcanputnext(&st->hwq, band);
}

/*
 * Waits until the first queue below the head takes messages of @band: a
 * writer of one band is not held up by another band's fullness.
 */
int asx_head_wait_writable(struct asx_stream *st, u8 band, bool nonblock, bool sigpipe)
{
	int ret;

	for (;;) {
		if (test_bit(ASX_ST_ERROR, &st->flags))
			return -st->error;
		if (test_bit(ASX_ST_HANGUP, &st->flags)) {
			if (sigpipe)
				send_sig(SIGPIPE, current, 0);
			return -EPIPE;
		}
		if (asx_bcanputnext(&st->hwq, band))
			return 0;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(st->wwait, writable(st, band));
		if (ret)
			return ret;
	}
}

static bool is_ctl(const struct asx_msg *mp)
{
	return mp->type == ASX_M_PROTO || mp->type == ASX_M_PCPROTO;
}

/* Drops the leading control blocks of @mp; returns what is left. */
static struct asx_msg *strip_ctl(struct asx_msg *mp)
{
	struct asx_msg *next;
	u8 band = mp->band;

	while (mp && is_ctl(mp)) {
		next = mp->cont;
		asx_freeb(mp);
		mp = next;
	}
	if (mp)
		mp->band = band;
	return mp;
}

/* Drops empty blocks at the front; NULL if nothing is left. */
static struct asx_msg *trim_front(struct asx_msg *mp)
{
	struct asx_msg *next;

	while (mp && !asx_blen(mp)) {
		next = mp->cont;
		if (next)
			next->band = mp->band;
		asx_freeb(mp);
		mp = next;
	}
	return mp;
}

/*
 * Copies up to @len bytes of @mp to @ubuf; returns what is left of it.
 * *copied gets the byte count, *fault is set if user memory failed.
 */
static struct asx_msg *copy_msg_out(struct asx_msg *mp, char __user *ubuf, size_t len,
				    size_t *copied, bool *fault)
{
	size_t n = 0, k;

	while (mp && n < len) {
		k = min_t(size_t, asx_blen(mp), len - n);
		if (k && copy_to_user(ubuf + n, mp->rptr, k)) {
			*fault = true;
			break;
		}
		mp->rptr += k;
		n += k;
		if (asx_blen(mp))
			break;
		mp = trim_front(mp);
	}
	*copied = n;
	return trim_front(mp);
}

ssize_t asx_stream_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	struct asx_stream *st = file->private_data;
	bool nonblock = file->f_flags & O_NONBLOCK;
	struct asx_queue *q = &st->hrq;
	size_t done = 0, n, size;
	struct asx_msg *mp;
	bool fault = false;
	ssize_t ret = 0;
	u32 ropt;

	if (asx_stream_linked(st))
		return -EINVAL;
again:
	ret = asx_head_lock_readable(st, nonblock);
	if (ret)
		return ret;
	ropt = READ_ONCE(st->ropt);
	for (;;) {
		mp = asx_getq(q);
		if (!mp) {
			if (!done && !test_bit(ASX_ST_HANGUP, &st->flags)) {
				mutex_unlock(&st->rlock);
				goto again;
			}
			break;
		}
		if (mp->type == ASX_M_PASSFP) {
			/* read(2): EBADMSG, a descriptor (I_RECVFD) is first */
			asx_putbq(q, mp);
			if (!done)
				ret = -EBADMSG;
			break;
		}
		if (is_ctl(mp)) {
			if ((ropt & ASX_RPROTMASK) == ASX_RPROTNORM) {
				asx_putbq(q, mp);
				if (!done)
					ret = -EBADMSG;
				break;
			}
			if ((ropt & ASX_RPROTMASK) == ASX_RPROTDIS) {
				mp = strip_ctl(mp);
				if (!mp)
					continue;
			}
		}
		size = asx_msg_size(mp);
		if (!size && done) {
			asx_putbq(q, mp);
			break;
		}
		mp = copy_msg_out(mp, buf + done, count - done, &n, &fault);
		done += n;
		if (mp) {
			if (!fault && (ropt & ASX_RMODEMASK) == ASX_RMSGD)
				asx_freemsg(mp);
			else
				asx_putbq(q, mp);
		}
		if (fault) {
			if (!done)
				ret = -EFAULT;
			break;
		}
		if ((ropt & ASX_RMODEMASK) != ASX_RNORM || !size || done == count)
			break;
	}
	mutex_unlock(&st->rlock);
	return done ? done : ret;
}

ssize_t asx_stream_write(struct file *file, const char __user *buf, size_t count,
			 loff_t *ppos)
{
	struct asx_stream *st = file->private_data;
	bool nonblock = file->f_flags & O_NONBLOCK;
	struct asx_msg *mp;
	size_t done = 0, n;
	ssize_t ret = 0;

	if (asx_stream_linked(st))
		return -EINVAL;
	if (!count && !(READ_ONCE(st->wopt) & ASX_SNDZERO))
		return 0;
	do {
		/* No hangup, no error and room below: the usual case, checked once. */
		if (unlikely(READ_ONCE(st->flags)) || !asx_canputnext(&st->hwq)) {
			ret = asx_head_wait_writable(st, 0, nonblock, true);
			if (ret)
				break;
		}
		n = min_t(size_t, count - done, ASX_MAX_WRITE);
		mp = asx_allocb(n, GFP_KERNEL_ACCOUNT);
		if (!mp) {
			ret = -ENOMEM;
			break;
		}
		if (copy_from_user(mp->wptr, buf + done, n)) {
			asx_freemsg(mp);
			ret = -EFAULT;
			break;
		}
		mp->wptr += n;
		ret = asx_msg_charge(st->budget, mp);
		if (ret) {
			asx_freemsg(mp);
			break;
		}
		asx_putnext(&st->hwq, mp);
		done += n;
	} while (done < count);
	return done ? done : ret;
}

/*
 * POLLOUT/POLLWRNORM: band 0 takes a message; POLLWRBAND: a band > 0 that
 * has been written to does (poll(2) on STREAMS), band 0's state until one is.
 */
static __poll_t asx_head_poll_write(struct asx_stream *st)
{
	__poll_t mask = 0;

	if (asx_canputnext(&st->hwq))
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (asx_canputnext_wrband(&st->hwq))
		mask |= EPOLLWRBAND;
	return mask;
}

__poll_t asx_stream_poll(struct file *file, poll_table *wait)
{
	struct asx_stream *st = file->private_data;
	struct asx_msg *mp;
	__poll_t mask = 0;

	poll_wait(file, &st->rwait, wait);
	poll_wait(file, &st->wwait, wait);
	if (asx_stream_linked(st))
		return EPOLLERR;

	spin_lock(&st->hrq.lock);
	list_for_each_entry(mp, &st->hrq.msgs, list) {
		if (asx_hipri(mp)) {
			mask |= EPOLLPRI;
			continue;
		}
		mask |= EPOLLIN | (mp->band ? EPOLLRDBAND : EPOLLRDNORM);
		break;
	}
	mp = list_last_entry(&st->hrq.msgs, struct asx_msg, list);
	if (!list_empty(&st->hrq.msgs) && !asx_hipri(mp) && !mp->band)
		mask |= EPOLLRDNORM;
	spin_unlock(&st->hrq.lock);

	if (test_bit(ASX_ST_ERROR, &st->flags))
		mask |= EPOLLERR;
	if (test_bit(ASX_ST_HANGUP, &st->flags))
		mask |= EPOLLHUP;
	else
		mask |= asx_head_poll_write(st);
	return mask;
}
