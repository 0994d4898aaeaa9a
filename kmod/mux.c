// SPDX-License-Identifier: GPL-2.0
/*
 * ASX multiplexing: the mux driver, and lower Streams linked under a Stream
 * whose driver is mux.
 * Going down, the mux driver routes each message by the struct asx_mux_hdr
 * at the front of its control part and strips it; coming up, the lower's
 * messages get the header of their lower prepended.
 *
 * Both ways are flow controlled: the mux stops sending to a full lower and
 * is restarted when the lower's write side drains; a lower whose messages
 * find the mux's read queue full keeps them at its head, and the mux's
 * service procedure restarts it once there is room.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/ctype.h>
#include <linux/file.h>
#include <linux/hashtable.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#define ASX_MAX_LOWERS	64

static DEFINE_MUTEX(asx_mux_lock);

/*
 * A linked lower lives on after its descriptor is closed: the mux holds its
 * file. As for descriptors in flight in SCM_RIGHTS messages, the files the
 * module holds for one user count against that user's RLIMIT_NOFILE: a LINK
 * past it is ETOOMANYREFS (CAP_SYS_RESOURCE and CAP_SYS_ADMIN exempt).
 * Under asx_mux_lock.
 */
struct mux_user {
	struct hlist_node node;
	kuid_t uid;
	unsigned long lowers;
};

static DEFINE_HASHTABLE(mux_users, 6);

static struct mux_user *mux_user_find(kuid_t uid)
{
	struct mux_user *u;

	lockdep_assert_held(&asx_mux_lock);
	hash_for_each_possible(mux_users, u, node, __kuid_val(uid))
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* Charges one lower to the caller; 0 or a negative errno. */
static int mux_user_charge(kuid_t uid)
{
	struct mux_user *u;

	lockdep_assert_held(&asx_mux_lock);
	u = mux_user_find(uid);
	if (u && u->lowers >= rlimit(RLIMIT_NOFILE) &&
	    !capable(CAP_SYS_RESOURCE) && !capable(CAP_SYS_ADMIN))
		return -ETOOMANYREFS;
	if (!u) {
		u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
		if (!u)
			return -ENOMEM;
		u->uid = uid;
		hash_add(mux_users, &u->node, __kuid_val(uid));
	}
	u->lowers++;
	return 0;
}

static void mux_user_uncharge(kuid_t uid)
{
	struct mux_user *u;

	lockdep_assert_held(&asx_mux_lock);
	u = mux_user_find(uid);
	if (WARN_ON_ONCE(!u))
		return;
	if (!--u->lowers) {
		hash_del(&u->node);
		kfree(u);
	}
}

/*
 * Named muxes and persistent links (I_PLINK). SETDRV "mux.N" makes a mux
 * Stream one of the Streams of unit N, which lives while one of its Streams
 * is open or a lower is persistently linked under it. A persistent lower
 * belongs to the unit, not to the Stream that linked it: it stays linked when
 * every Stream of the unit is closed, and a later open of "mux.N" reaches it
 * again. It sends up the unit's oldest open Stream (with none open, its
 * messages wait at its head, flow controlled, until one opens); any Stream of
 * the unit sends down to it. A unit belongs to the effective uid that made
 * it: another may open it only with CAP_SYS_ADMIN. Under asx_mux_lock; RCU
 * for the routing (a unit is freed a grace period after its last user).
 */
struct asx_mux_unit {
	struct hlist_node node;
	u32 num;
	kuid_t owner;
	struct list_head uppers;	/* its open Streams (mux_unode), oldest first */
	struct list_head plowers;	/* its persistent lowers (mux_node) */
	u32 nplowers;
	u32 next_id;			/* the mux ids of all its lowers */
	struct rcu_head rcu;
};

static DEFINE_HASHTABLE(mux_units, 4);

static struct asx_mux_unit *mux_unit_find(u32 num)
{
	struct asx_mux_unit *u;

	lockdep_assert_held(&asx_mux_lock);
	hash_for_each_possible(mux_units, u, node, num)
		if (u->num == num)
			return u;
	return NULL;
}

static struct asx_mux_unit *mux_unit_of(struct asx_stream *st)
{
	return rcu_dereference_protected(st->mux_unit, lockdep_is_held(&asx_mux_lock));
}

/*
 * The unit of a SETDRV name: "mux.N", N in decimal without a leading zero
 * and below ASX_MUX_UNITS; -ENOENT for any other name.
 */
int asx_mux_unit_number(const char *name)
{
	const char *p = name + 4;
	int n = 0;

	if (strncmp(name, "mux.", 4) || !*p || (*p == '0' && p[1]))
		return -ENOENT;
	for (; *p; p++) {
		if (!isdigit(*p))
			return -ENOENT;
		n = n * 10 + (*p - '0');
		if (n >= ASX_MUX_UNITS)
			return -ENOENT;
	}
	return n;
}

/* May the caller open unit @num?  Its owner, or CAP_SYS_ADMIN. */
static int mux_unit_may_open(struct asx_mux_unit *u)
{
	if (!u || uid_eq(u->owner, current_euid()) || capable(CAP_SYS_ADMIN))
		return 0;
	return -EACCES;
}

int asx_mux_unit_may_open(u32 num)
{
	int ret;

	mutex_lock(&asx_mux_lock);
	ret = mux_unit_may_open(mux_unit_find(num));
	mutex_unlock(&asx_mux_lock);
	return ret;
}

/* The Stream the unit's persistent lowers send up: its oldest open one. */
static struct asx_stream *mux_unit_upper(struct asx_mux_unit *u)
{
	lockdep_assert_held(&asx_mux_lock);
	return list_empty(&u->uppers) ? NULL :
	       list_first_entry(&u->uppers, struct asx_stream, mux_unode);
}

/* Points the unit's persistent lowers at its oldest open Stream, and restarts them. */
static void mux_unit_route(struct asx_mux_unit *u)
{
	struct asx_stream *up = mux_unit_upper(u), *l;

	list_for_each_entry(l, &u->plowers, mux_node) {
		mutex_lock_nested(&l->cfg, SINGLE_DEPTH_NESTING);
		rcu_assign_pointer(l->upper, up);
		mutex_unlock(&l->cfg);
		if (up)
			asx_qenable(&l->hrq);
	}
}

/* Restarts the write side of every open Stream of unit @u (RCU held). */
static void mux_unit_kick_uppers(struct asx_mux_unit *u)
{
	struct asx_stream *x;

	list_for_each_entry_rcu(x, &u->uppers, mux_unode)
		asx_qenable(&x->dwq);
}

/* SETDRV "mux.N": the fresh mux Stream @st joins unit @num, made if need be. */
int asx_mux_join(struct asx_stream *st, u32 num)
{
	struct asx_mux_unit *u;
	int ret;

	mutex_lock(&asx_mux_lock);
	mutex_lock(&st->cfg);
	u = mux_unit_find(num);
	ret = -EBUSY;
	if (st->drv != &asx_drv_mux || mux_unit_of(st) || !list_empty(&st->lowers))
		goto out;
	ret = mux_unit_may_open(u);
	if (ret)
		goto out;
	if (!u) {
		ret = -ENOMEM;
		u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
		if (!u)
			goto out;
		u->num = num;
		u->owner = current_euid();
		INIT_LIST_HEAD(&u->uppers);
		INIT_LIST_HEAD(&u->plowers);
		hash_add(mux_units, &u->node, num);
		ret = 0;
	}
	list_add_tail_rcu(&st->mux_unode, &u->uppers);
	rcu_assign_pointer(st->mux_unit, u);
	mux_unit_route(u);
out:
	mutex_unlock(&st->cfg);
	mutex_unlock(&asx_mux_lock);
	return ret;
}

/* The last close of a Stream of a unit: its persistent lowers turn to the next one. */
static void mux_leave(struct asx_stream *st)
{
	struct asx_mux_unit *u;

	mutex_lock(&asx_mux_lock);
	u = mux_unit_of(st);
	if (u) {
		list_del_rcu(&st->mux_unode);
		RCU_INIT_POINTER(st->mux_unit, NULL);
		mux_unit_route(u);
		if (list_empty(&u->uppers) && list_empty(&u->plowers)) {
			hash_del(&u->node);
			kfree_rcu(u, rcu);
		}
	}
	mutex_unlock(&asx_mux_lock);
}

/* A message at the head of linked lower @l goes up the upper Stream. */
static void mux_up(struct asx_stream *l, struct asx_msg *mp)
{
	struct asx_mux_hdr hdr = { .id = l->mux_id };
	struct asx_stream *u;
	struct asx_msg *h;

	if (mp->type == ASX_M_PASSFP) {
		/* a descriptor sent before the link has no reader any more: closed */
		atomic64_inc(&l->hrq.drops);
		asx_freemsg(mp);
		return;
	}
	rcu_read_lock();
	u = rcu_dereference(l->upper);
	if (!u) {
		rcu_read_unlock();
		asx_putq(&l->hrq, mp);
		wake_up_interruptible_poll(&l->rwait, EPOLLIN);
		return;
	}
	h = asx_ctlmsg(mp->type == ASX_M_PCPROTO ? ASX_M_PCPROTO : ASX_M_PROTO, &hdr,
		       sizeof(hdr), GFP_ATOMIC | __GFP_ACCOUNT);
	if (!h) {
		atomic64_inc(&u->drq.drops);
		asx_freemsg(mp);
	} else {
		h->band = mp->band;
		h->cont = mp;
		asx_put(&u->drq, h);
	}
	rcu_read_unlock();
}

/* May lower @l send a normal message up its mux now? */
static bool mux_can_up(struct asx_stream *l)
{
	struct asx_stream *u;
	bool ok = true;

	rcu_read_lock();
	u = rcu_dereference(l->upper);
	if (u)
		ok = asx_canput(&u->drq);
	rcu_read_unlock();
	return ok;
}

/*
 * The head of a lower: while linked, what reaches it goes up the mux; when
 * the mux is full it waits here and the service procedure sends it later.
 * These procedures are the lower head's from before the lower is published
 * until a grace period after it is unlinked: with no upper they do what the
 * plain head's do.
 */
static void lower_rput(struct asx_queue *q, struct asx_msg *mp)
{
	struct asx_stream *st = q->st;

	if ((mp->type == ASX_M_DATA || mp->type == ASX_M_PROTO || mp->type == ASX_M_PCPROTO) &&
	    rcu_access_pointer(st->upper)) {
		if (asx_hipri(mp) || (asx_queue_idle(q) && mux_can_up(st)))
			mux_up(st, mp);
		else
			asx_putq(q, mp);
		return;
	}
	asx_head_rput(q, mp);
}

static void lower_rsrv(struct asx_queue *q)
{
	struct asx_msg *mp;

	while ((mp = asx_getq(q))) {
		if (!rcu_access_pointer(q->st->upper) ||
		    (!asx_hipri(mp) && !mux_can_up(q->st))) {
			asx_putbq(q, mp);
			break;
		}
		mux_up(q->st, mp);
	}
}

/* The lower drained below its write-side low water mark: wake writers, restart the mux. */
static void lower_wenable(struct asx_queue *q)
{
	struct asx_mux_unit *pu;
	struct asx_stream *u;

	asx_head_wenable(q);
	rcu_read_lock();
	pu = rcu_dereference(q->st->plink_unit);
	u = rcu_dereference(q->st->upper);
	if (pu)
		mux_unit_kick_uppers(pu);	/* any of them may have stopped for it */
	else if (u)
		asx_qenable(&u->dwq);
	rcu_read_unlock();
}

static const struct asx_qinit lower_rinit = { .put = lower_rput, .srv = lower_rsrv };
static const struct asx_qinit lower_winit = { .put = asx_head_wput, .enable = lower_wenable };

/*
 * Links the Stream of @file (an open /dev/asx, the caller checked) under @st;
 * @persist (I_PLINK): under @st's unit, to outlive @st. On success the link
 * holds the caller's reference to @file; on failure the caller still does.
 */
int asx_mux_link(struct asx_stream *st, struct file *file, u32 *id, bool persist)
{
	struct asx_stream *l = file->private_data, *x;
	struct asx_mux_unit *u;
	u32 n = 0, *next;
	int ret;

	if (l == st)
		return -EINVAL;

	mutex_lock(&asx_mux_lock);
	mutex_lock(&st->cfg);
	mutex_lock_nested(&l->cfg, SINGLE_DEPTH_NESTING);
	u = mux_unit_of(st);
	ret = -EINVAL;
	if (st->drv != &asx_drv_mux || l->drv == &asx_drv_mux || (persist && !u))
		goto err_unlock;
	ret = -EBUSY;
	if (asx_stream_in_mux(l))
		goto err_unlock;
	if (persist)
		n = u->nplowers;
	else
		list_for_each_entry(x, &st->lowers, mux_node)
			n++;
	ret = -ENOSR;
	if (n >= ASX_MAX_LOWERS)
		goto err_unlock;
	l->mux_uid = current_uid();
	ret = mux_user_charge(l->mux_uid);
	if (ret)
		goto err_unlock;
	/* the Streams of a unit share its ids: a persistent lower's is everyone's */
	next = u ? &u->next_id : &st->mux_next_id;
	do {
		l->mux_id = ++*next;
	} while (l->mux_id == 0 || l->mux_id == ASX_MUX_ALL);
	l->mux_file = file;
	/* The head takes the lower's procedures before anyone can see it linked. */
	WRITE_ONCE(l->hrq.qi, &lower_rinit);
	WRITE_ONCE(l->hwq.qi, &lower_winit);
	if (persist) {
		list_add_tail_rcu(&l->mux_node, &u->plowers);
		u->nplowers++;
		rcu_assign_pointer(l->plink_unit, u);
		rcu_assign_pointer(l->upper, mux_unit_upper(u));
	} else {
		list_add_tail_rcu(&l->mux_node, &st->lowers);
		rcu_assign_pointer(l->upper, st);
	}
	asx_qenable(&l->hrq);
	*id = l->mux_id;
	mutex_unlock(&l->cfg);
	mutex_unlock(&st->cfg);
	mutex_unlock(&asx_mux_lock);
	return 0;

err_unlock:
	mutex_unlock(&l->cfg);
	mutex_unlock(&st->cfg);
	mutex_unlock(&asx_mux_lock);
	return ret;
}

/*
 * Unlinks lower @id (ASX_MUX_ALL: every one) and drops its file: of @st's own
 * links, or with @persist (I_PUNLINK) of the persistent links of @st's unit.
 */
int asx_mux_unlink(struct asx_stream *st, u32 id, bool persist)
{
	struct asx_stream *l, *tmp, *gone[ASX_MAX_LOWERS];
	struct list_head *lowers;
	struct asx_mux_unit *u;
	unsigned int n = 0, i;

	mutex_lock(&asx_mux_lock);
	mutex_lock(&st->cfg);
	u = mux_unit_of(st);
	if (st->drv != &asx_drv_mux || (persist && !u)) {
		mutex_unlock(&st->cfg);
		mutex_unlock(&asx_mux_lock);
		return -EINVAL;
	}
	lowers = persist ? &u->plowers : &st->lowers;
	list_for_each_entry_safe(l, tmp, lowers, mux_node) {
		if (id != ASX_MUX_ALL && l->mux_id != id)
			continue;
		mutex_lock_nested(&l->cfg, SINGLE_DEPTH_NESTING);
		list_del_rcu(&l->mux_node);
		RCU_INIT_POINTER(l->upper, NULL);
		RCU_INIT_POINTER(l->plink_unit, NULL);
		mutex_unlock(&l->cfg);
		mux_user_uncharge(l->mux_uid);
		gone[n++] = l;
	}
	if (persist)
		u->nplowers -= n;
	mutex_unlock(&st->cfg);
	mutex_unlock(&asx_mux_lock);
	if (!n)
		return id == ASX_MUX_ALL ? 0 : -ENXIO;

	synchronize_rcu();
	for (i = 0; i < n; i++) {
		struct asx_stream *l = gone[i];
		struct file *file;

		/*
		 * Under the lower's cfg: until mux_file is cleared here nobody
		 * links it again (asx_stream_in_mux()), so the file put below
		 * is the reference this unlink took over, not a new link's.
		 */
		mutex_lock(&l->cfg);
		WRITE_ONCE(l->hrq.qi, &asx_head_rinit);
		WRITE_ONCE(l->hwq.qi, &asx_head_winit);
		/* Cleared of a cancelled run: linked again, the lower is served again. */
		asx_queue_cancel(&l->hrq);
		file = l->mux_file;
		l->mux_file = NULL;
		mutex_unlock(&l->cfg);
		wake_up_interruptible_poll(&l->rwait, EPOLLIN);
		wake_up_interruptible_poll(&l->wwait, EPOLLOUT);
		fput(file);
	}
	/*
	 * The write side may have stopped behind a lower that is gone: run it
	 * again, so what it held for that lower is dropped and the other lowers
	 * are served (a persistent lower's: every Stream of the unit, which
	 * lives while @st, one of them, is open).
	 */
	if (persist) {
		rcu_read_lock();
		mux_unit_kick_uppers(u);
		rcu_read_unlock();
	} else {
		asx_qenable(&st->dwq);
	}
	return 0;
}

/* mux: both sides queue, so a chain never recurses from one Stream into another. */
static void mux_wput(struct asx_queue *q, struct asx_msg *mp)
{
	if (asx_drv_ctl(q, mp))
		return;
	asx_putq(q, mp);
}

/* The lower of @st with mux id @id: its own, or a persistent one of its unit (RCU held). */
static struct asx_stream *mux_lower(struct asx_stream *st, u32 id)
{
	struct asx_mux_unit *u;
	struct asx_stream *l;

	list_for_each_entry_rcu(l, &st->lowers, mux_node) {
		if (l->mux_id == id)
			return l;
	}
	u = rcu_dereference(st->mux_unit);
	if (u) {
		list_for_each_entry_rcu(l, &u->plowers, mux_node) {
			if (l->mux_id == id)
				return l;
		}
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
	asx_drv_forward(q, mp);
}

/* The mux's read queue has room again: let the lowers holding messages send. */
static void mux_kick_lowers(struct asx_stream *u)
{
	struct asx_mux_unit *unit;
	struct asx_stream *l;

	rcu_read_lock();
	list_for_each_entry_rcu(l, &u->lowers, mux_node) {
		if (READ_ONCE(l->hrq.nmsgs))
			asx_qenable(&l->hrq);
	}
	unit = rcu_dereference(u->mux_unit);
	if (unit) {
		list_for_each_entry_rcu(l, &unit->plowers, mux_node) {
			if (rcu_access_pointer(l->upper) == u && READ_ONCE(l->hrq.nmsgs))
				asx_qenable(&l->hrq);
		}
	}
	rcu_read_unlock();
}

static void mux_rsrv(struct asx_queue *q)
{
	asx_drv_forward_srv(q);
	if (!(READ_ONCE(q->flags) & ASX_QFULL))
		mux_kick_lowers(q->st);
}

/* The last close: its own links go, its unit's persistent ones stay. */
static void mux_detach(struct asx_stream *st)
{
	asx_mux_unlink(st, ASX_MUX_ALL, false);
	mux_leave(st);
}

const struct asx_driver asx_drv_mux = {
	.name	= "mux",
	.rinit	= { .put = mux_rput, .srv = mux_rsrv },
	.winit	= { .put = mux_wput, .srv = mux_wsrv },
	.detach	= mux_detach,
};
