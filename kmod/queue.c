// SPDX-License-Identifier: GPL-2.0
/*
 * ASX queues: put/putnext, putq/getq with band ordering, water marks,
 * canput and back-enabling, service procedures in a workqueue.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "queue.h"
#include "trace.h"

#include <linux/slab.h>

struct workqueue_struct *asx_wq;

static void srv_work_fn(struct work_struct *work)
{
	struct asx_queue *q = container_of(work, struct asx_queue, srv_work);
	void (*srv)(struct asx_queue *q);

	spin_lock(&q->lock);
	q->flags &= ~ASX_QENAB;
	q->flags |= ASX_QSRVBUSY;
	q->srv_runs++;
	spin_unlock(&q->lock);
	srv = READ_ONCE(q->qi)->srv;
	if (srv) {
		trace_asx_srv(q);
		srv(q);
	}
	spin_lock(&q->lock);
	q->flags &= ~ASX_QSRVBUSY;
	spin_unlock(&q->lock);
}

/**
 * asx_queue_idle() - may a put procedure bypass @q's own queue?
 * @q: the queue
 *
 * True when nothing is queued and the service procedure is not running (it
 * may hold a message it took off the queue), so passing a message on at once
 * cannot overtake an earlier one.
 */
bool asx_queue_idle(struct asx_queue *q)
{
	return __asx_queue_idle(q);
}
EXPORT_SYMBOL_GPL(asx_queue_idle);

void asx_queue_init(struct asx_queue *q, struct asx_stream *st, const struct asx_qinit *qi,
		    const char *name, u8 side, size_t hiwat, size_t lowat)
{
	spin_lock_init(&q->lock);
	INIT_LIST_HEAD(&q->msgs);
	INIT_WORK(&q->srv_work, srv_work_fn);
	q->qi = qi;
	q->st = st;
	q->name = name;
	q->side = side;
	q->hiwat = hiwat ? hiwat : ASX_DEF_HIWAT;
	q->lowat = hiwat ? lowat : ASX_DEF_LOWAT;
}

/* 256 for high priority, else the band: a queue is sorted by rank, FIFO within one. */
static unsigned int rank(const struct asx_msg *mp)
{
	return asx_hipri(mp) ? 256 : mp->band;
}

/*
 * What a queue holds, for its water marks: its data bytes, and for each
 * message with none a message block's size (a user could otherwise queue
 * zero-length messages without end: they count no bytes).
 */
#define ASX_EMPTY_MSG_COST	256

static size_t q_load(const struct asx_queue *q)
{
	return q->count + (size_t)q->nzero * ASX_EMPTY_MSG_COST;
}

/* Band 0's share: high-priority messages count in it too, as in SVR4. */
static size_t q_load0(const struct asx_queue *q)
{
	return q_load(q) - q->bload;
}

static size_t msg_load(size_t n)
{
	return n ? n : ASX_EMPTY_MSG_COST;
}

/*
 * The flow control of @band (> 0) for a message of it, NULL for band 0, a
 * high-priority message, or a band above the array (counted in band 0).
 */
static struct asx_qband *qb_of(struct asx_queue *q, u8 band)
{
	return band && band <= q->nband ? &q->qb[band - 1] : NULL;
}

static size_t qb_hiwat(const struct asx_queue *q, const struct asx_qband *qb)
{
	return qb->hiwat ? qb->hiwat : q->hiwat;
}

static size_t qb_lowat(const struct asx_queue *q, const struct asx_qband *qb)
{
	return qb->hiwat ? qb->lowat : q->lowat;
}

/* The highest band queued: the queue is sorted, high priority first. */
static u8 q_top_band(struct asx_queue *q)
{
	struct asx_msg *pos;

	list_for_each_entry(pos, &q->msgs, list)
		if (!asx_hipri(pos))
			return pos->band;
	return 0;
}

static u8 qb_size(u8 band)
{
	return min_t(unsigned int, round_up(band, ASX_QBAND_STEP), 255);
}

/*
 * Under q->lock: bands 1..@nb_size exist from now on, in @nb (zeroed). Only
 * while no message of a band above the old array is queued (those count in
 * band 0 after an allocation failed, until they are gone). Returns what the
 * caller frees: the old array, or @nb if it was not taken.
 */
static struct asx_qband *qb_install(struct asx_queue *q, struct asx_qband *nb, u8 nb_size)
{
	struct asx_qband *old = q->qb;

	lockdep_assert_held(&q->lock);
	if (!nb || nb_size <= q->nband || q_top_band(q) > q->nband)
		return nb;
	if (old)
		memcpy(nb, old, q->nband * sizeof(*nb));
	q->qb = nb;
	q->nband = nb_size;
	return old;
}

/*
 * May a put procedure pass a message of @band past @q's own queue? True when
 * no message of @band is queued (band 0: none of band 0, of high priority or
 * of a band above the array) and the service procedure is not running (the
 * message it holds may be of @band): passing it on cannot overtake an
 * earlier one of its band. asx_queue_idle() without a lock when it can.
 */
bool asx_queue_band_idle(struct asx_queue *q, u8 band)
{
	struct asx_qband *qb;
	bool idle;

	if (__asx_queue_idle(q))
		return true;
	spin_lock(&q->lock);
	qb = qb_of(q, band);
	idle = !(q->flags & ASX_QSRVBUSY) && !(qb ? qb->load : q_load0(q));
	spin_unlock(&q->lock);
	return idle;
}

/* Frees a quiet queue's band array. */
void asx_queue_free_bands(struct asx_queue *q)
{
	kfree(q->qb);
	q->qb = NULL;
	q->nband = 0;
	q->bload = 0;
}

/* Under q->lock: sets a band full once it reaches its high water mark. */
static void qb_check_full(struct asx_queue *q, struct asx_qband *qb)
{
	if (qb->load >= qb_hiwat(q, qb) && !(qb->flags & ASX_QFULL)) {
		qb->flags |= ASX_QFULL;
		q->flags |= ASX_QBANDFC;
		q->fc_stops++;
		trace_asx_fc_stop(q);
	}
}

static void q_insert(struct asx_queue *q, struct asx_msg *mp, bool front)
{
	struct asx_msg *pos;

	/* High priority goes first: past at most ASX_MAX_HIPRI_QUEUED others. */
	if (asx_hipri(mp)) {
		pos = list_first_entry(&q->msgs, struct asx_msg, list);
		if (!front)
			while (&pos->list != &q->msgs && asx_hipri(pos))
				pos = list_next_entry(pos, list);
		list_add_tail(&mp->list, &pos->list);
		q->nhipri++;
		return;
	}
	if (!front) {
		list_for_each_entry_reverse(pos, &q->msgs, list) {
			if (rank(pos) >= rank(mp)) {
				list_add(&mp->list, &pos->list);
				return;
			}
		}
		list_add(&mp->list, &q->msgs);
		return;
	}
	list_for_each_entry(pos, &q->msgs, list) {
		if (rank(pos) <= rank(mp)) {
			list_add_tail(&mp->list, &pos->list);
			return;
		}
	}
	list_add_tail(&mp->list, &q->msgs);
}

static __always_inline void q_unlink(struct asx_queue *q, struct asx_msg *mp)
{
	size_t n = asx_msg_size(mp);

	lockdep_assert_held(&q->lock);
	struct asx_qband *qb = asx_hipri(mp) ? NULL : qb_of(q, mp->band);

	list_del_init(&mp->list);
	if (qb) {
		qb->load -= msg_load(n);
		q->bload -= msg_load(n);
	}
	q->count -= n;
	q->nzero -= !n;
	q->nmsgs--;
	if (asx_hipri(mp))
		q->nhipri--;
	trace_asx_dequeue(q, mp);
}

/*
 * After a dequeue, for band 0 (@flags, @load, @lowat: the queue's) or one
 * band > 0: clears full below the low water mark; true if a writer waiting
 * on it must be back-enabled.
 */
static bool fc_check_drain(struct asx_queue *q, u32 *flags, size_t load, size_t lowat)
{
	if ((*flags & ASX_QFULL) && (load < lowat || !load))
		*flags &= ~ASX_QFULL;
	if ((*flags & (ASX_QFULL | ASX_QWANTW)) == ASX_QWANTW) {
		*flags &= ~ASX_QWANTW;
		q->fc_starts++;
		trace_asx_fc_start(q);
		return true;
	}
	return false;
}

/*
 * After a dequeue: the flow controls whose waiting writers must be
 * back-enabled, as BIT(ASX_BENAB_*); 0 for none.
 */
static unsigned long q_check_drain(struct asx_queue *q)
{
	unsigned long backen = 0;
	struct asx_qband *qb;
	bool busy = false;

	lockdep_assert_held(&q->lock);
	if (fc_check_drain(q, &q->flags, q_load0(q), q->lowat))
		backen |= BIT(ASX_BENAB_BAND0);
	if (!(q->flags & ASX_QBANDFC))
		return backen;
	for (qb = q->qb; qb && qb < q->qb + q->nband; qb++) {
		if (!(qb->flags & (ASX_QFULL | ASX_QWANTW)))
			continue;
		if (fc_check_drain(q, &qb->flags, qb->load, qb_lowat(q, qb)))
			backen |= BIT(ASX_BENAB_BANDS);
		busy |= qb->flags & (ASX_QFULL | ASX_QWANTW);
	}
	if (!busy)
		q->flags &= ~ASX_QBANDFC;
	return backen;
}

/*
 * Enables the nearest queue behind @q that has a service procedure, telling
 * it which flow controls (@backen, from q_check_drain()) have room again.
 */
static void back_enable(struct asx_queue *q, unsigned long backen)
{
	const struct asx_qinit *qi;
	struct asx_queue *p;

	rcu_read_lock();
	for (p = rcu_dereference(q->prev); p; p = rcu_dereference(p->prev)) {
		qi = READ_ONCE(p->qi);
		if (qi->enable || qi->srv) {
			if (backen & BIT(ASX_BENAB_BAND0))
				set_bit(ASX_BENAB_BAND0, &p->benabled);
			if (backen & BIT(ASX_BENAB_BANDS))
				set_bit(ASX_BENAB_BANDS, &p->benabled);
			asx_qenable(p);
			break;
		}
	}
	rcu_read_unlock();
}

static __always_inline void __putq(struct asx_queue *q, struct asx_msg *mp, bool front)
{
	size_t n = asx_msg_size(mp);
	struct asx_qband *qb = NULL, *nb = NULL;
	bool enable = false;

	/* A band above the array: make room, before the lock and without sleeping. */
	if (unlikely(mp->band > READ_ONCE(q->nband)) && !asx_hipri(mp))
		nb = kcalloc(qb_size(mp->band), sizeof(*nb), GFP_ATOMIC | __GFP_NOWARN);
	spin_lock(&q->lock);
	if (unlikely(nb))
		nb = qb_install(q, nb, qb_size(mp->band));
	/*
	 * High-priority messages skip flow control; as in STREAMS, a queue
	 * takes only a few of them: more are dropped (one put back by a
	 * service procedure is kept).
	 */
	if (asx_hipri(mp) && !front && q->nhipri >= ASX_MAX_HIPRI_QUEUED) {
		spin_unlock(&q->lock);
		kfree(nb);
		atomic64_inc(&q->drops);
		asx_freemsg(mp);
		return;
	}
	enable = list_empty(&q->msgs) || asx_hipri(mp);
	q_insert(q, mp, front);
	q->count += n;
	q->nzero += !n;
	q->nmsgs++;
	trace_asx_enqueue(q, mp);
	if (!front)
		q->enqueued++;
	if (mp->band && !asx_hipri(mp))
		qb = qb_of(q, mp->band);
	if (qb) {
		qb->load += msg_load(n);
		qb->flags |= ASX_QBUSED;
		q->bload += msg_load(n);
		qb_check_full(q, qb);
	} else if (q_load0(q) >= q->hiwat && !(q->flags & ASX_QFULL)) {
		q->flags |= ASX_QFULL;
		q->fc_stops++;
		trace_asx_fc_stop(q);
	}
	/* putbq from a service procedure must not reschedule it. */
	if (front && !asx_hipri(mp))
		enable = false;
	if (enable && READ_ONCE(q->qi)->srv && !(q->flags & (ASX_QENAB | ASX_QCLOSING)))
		q->flags |= ASX_QENAB;
	else
		enable = false;
	spin_unlock(&q->lock);
	kfree(nb);
	if (enable)
		queue_work(asx_wq, &q->srv_work);
}

/**
 * asx_putq() - queue @mp on @q by priority and schedule @q's service procedure
 * @q:  the queue
 * @mp: the message
 *
 * The service procedure is scheduled when the queue was empty or @mp is high
 * priority; after that, only back-enabling or asx_qenable() schedules it.
 */
void asx_putq(struct asx_queue *q, struct asx_msg *mp)
{
	__putq(q, mp, false);
}
EXPORT_SYMBOL_GPL(asx_putq);

/* Puts @mp back at the front of its priority class (service procedures). */
void asx_putbq(struct asx_queue *q, struct asx_msg *mp)
{
	__putq(q, mp, true);
}
EXPORT_SYMBOL_GPL(asx_putbq);

/* Takes the first message, back-enabling the writer behind once below low water. */
struct asx_msg *asx_getq(struct asx_queue *q)
{
	struct asx_msg *mp;
	unsigned long backen;

	spin_lock(&q->lock);
	mp = list_first_entry_or_null(&q->msgs, struct asx_msg, list);
	if (mp)
		q_unlink(q, mp);
	backen = q_check_drain(q);
	spin_unlock(&q->lock);
	if (backen)
		back_enable(q, backen);
	return mp;
}
EXPORT_SYMBOL_GPL(asx_getq);

/* Removes the first message without the flow-control bookkeeping. */
struct asx_msg *asx_rmvq_first(struct asx_queue *q)
{
	struct asx_msg *mp;

	spin_lock(&q->lock);
	mp = list_first_entry_or_null(&q->msgs, struct asx_msg, list);
	if (mp)
		q_unlink(q, mp);
	spin_unlock(&q->lock);
	return mp;
}

/* Does the flow-control bookkeeping a dequeue owes. */
void asx_queue_drained(struct asx_queue *q)
{
	unsigned long backen;

	if (!(READ_ONCE(q->flags) & (ASX_QFULL | ASX_QWANTW | ASX_QBANDFC)))
		return;
	spin_lock(&q->lock);
	backen = q_check_drain(q);
	spin_unlock(&q->lock);
	if (backen)
		back_enable(q, backen);
}

/* Schedules @q's service procedure, or calls its enable hook if it has one. */
void asx_qenable(struct asx_queue *q)
{
	const struct asx_qinit *qi = READ_ONCE(q->qi);
	bool sched = false;

	if (qi->enable) {
		qi->enable(q);
		return;
	}
	if (!qi->srv)
		return;
	spin_lock(&q->lock);
	if (!(q->flags & (ASX_QENAB | ASX_QCLOSING))) {
		q->flags |= ASX_QENAB;
		sched = true;
	}
	spin_unlock(&q->lock);
	if (sched)
		queue_work(asx_wq, &q->srv_work);
}
EXPORT_SYMBOL_GPL(asx_qenable);

/*
 * The queue whose flow control a put on @q meets: the nearest from @q on
 * with a service procedure, or the chain's end. Under RCU.
 */
static struct asx_queue *q_fc_queue(struct asx_queue *q)
{
	struct asx_queue *n;

	while (!READ_ONCE(q->qi)->srv && (n = rcu_dereference(q->next)))
		q = n;
	return q;
}

/*
 * Under q->lock: is band @band (> 0) of @q full? If so, it back-enables the
 * writer once it drains.
 */
static bool qb_full_wanted(struct asx_queue *q, u8 band)
{
	struct asx_qband *qb = qb_of(q, band);

	if (!qb || !(qb->flags & ASX_QFULL))
		return false;	/* a band not made yet holds nothing */
	qb->flags |= ASX_QWANTW;
	q->flags |= ASX_QBANDFC;
	return true;
}

/*
 * Can a message of @band be put on @q? Looks at the flow control of @band
 * in the nearest queue from @q on that has a service procedure (or ends the
 * chain); if it is full, marks it so that it back-enables us once it drains
 * below its low water mark. Under RCU.
 */
static __always_inline bool q_canput(struct asx_queue *q, u8 band)
{
	bool ok = true;

	q = q_fc_queue(q);
	if (band) {
		spin_lock(&q->lock);
		ok = !qb_full_wanted(q, band);
		spin_unlock(&q->lock);
		return ok;
	}
	if (READ_ONCE(q->flags) & ASX_QFULL) {
		spin_lock(&q->lock);
		if (q->flags & ASX_QFULL) {
			q->flags |= ASX_QWANTW;
			ok = false;
		}
		spin_unlock(&q->lock);
	}
	return ok;
}

bool asx_canput(struct asx_queue *q)
{
	bool ok;

	rcu_read_lock();
	ok = q_canput(q, 0);
	rcu_read_unlock();
	return ok;
}
EXPORT_SYMBOL_GPL(asx_canput);

/* Can a message of @band be put on @q? asx_canput() for band 0. */
bool asx_bcanput(struct asx_queue *q, u8 band)
{
	bool ok;

	rcu_read_lock();
	ok = q_canput(q, band);
	rcu_read_unlock();
	return ok;
}
EXPORT_SYMBOL_GPL(asx_bcanput);

/* Can a message of @band be put on the queue after @q? True at the end of a cut chain. */
bool asx_bcanputnext(struct asx_queue *q, u8 band)
{
	struct asx_queue *n;
	bool ok = true;

	rcu_read_lock();
	n = rcu_dereference(q->next);
	if (n)
		ok = q_canput(n, band);
	rcu_read_unlock();
	return ok;
}
EXPORT_SYMBOL_GPL(asx_bcanputnext);

/*
 * POLLWRBAND and S_WRBAND for the queue after @q: true if a band > 0 that
 * has been written to can take a message; while none has, band 0's state
 * (a band never written is empty, and it takes the queue's marks). When
 * false, every full band written to back-enables @q as it drains.
 */
bool asx_canputnext_wrband(struct asx_queue *q)
{
	struct asx_queue *n;
	struct asx_qband *qb;
	bool used = false, ok = false;

	rcu_read_lock();
	n = rcu_dereference(q->next);
	if (!n) {
		rcu_read_unlock();
		return true;
	}
	n = q_fc_queue(n);
	spin_lock(&n->lock);
	for (qb = n->qb; qb && qb < n->qb + n->nband && !ok; qb++) {
		used |= qb->flags & ASX_QBUSED;
		ok = (qb->flags & (ASX_QBUSED | ASX_QFULL)) == ASX_QBUSED;
	}
	if (used && !ok) {
		for (qb = n->qb; qb < n->qb + n->nband; qb++)
			if (qb->flags & ASX_QFULL)
				qb->flags |= ASX_QWANTW;
		n->flags |= ASX_QBANDFC;
	}
	spin_unlock(&n->lock);
	if (!used)
		ok = q_canput(n, 0);
	rcu_read_unlock();
	return ok;
}

/* One RCU section for the step and the walk: this runs for every message. */
bool asx_canputnext(struct asx_queue *q)
{
	struct asx_queue *n;
	bool ok = true;

	rcu_read_lock();
	n = rcu_dereference(q->next);
	if (n)
		ok = q_canput(n, 0);
	rcu_read_unlock();
	return ok;
}
EXPORT_SYMBOL_GPL(asx_canputnext);

static __always_inline void q_put(struct asx_queue *q, struct asx_msg *mp)
{
	/* A statistic: a lost increment under contention is acceptable. */
	WRITE_ONCE(q->puts, q->puts + 1);
	trace_asx_put(q, mp);
	READ_ONCE(q->qi)->put(q, mp);
}

/* Calls @q's put procedure. */
void asx_put(struct asx_queue *q, struct asx_msg *mp)
{
	q_put(q, mp);
}
EXPORT_SYMBOL_GPL(asx_put);

/* Passes @mp to the queue after @q; at the end of a cut chain it is dropped. */
void asx_putnext(struct asx_queue *q, struct asx_msg *mp)
{
	struct asx_queue *n;

	rcu_read_lock();
	n = rcu_dereference(q->next);
	if (likely(n)) {
		q_put(n, mp);
	} else {
		atomic64_inc(&q->drops);
		asx_freemsg(mp);
	}
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(asx_putnext);

/* Sends @mp back the other way, from @q's partner. */
void asx_qreply(struct asx_queue *q, struct asx_msg *mp)
{
	asx_putnext(q->other, mp);
}
EXPORT_SYMBOL_GPL(asx_qreply);

/* Frees the queued messages (of @band only, not high priority, with @band_only). */
void asx_flushq(struct asx_queue *q, bool band_only, u8 band)
{
	struct asx_msg *mp, *tmp;
	LIST_HEAD(dead);
	unsigned long backen;

	spin_lock(&q->lock);
	list_for_each_entry_safe(mp, tmp, &q->msgs, list) {
		if (band_only && (asx_hipri(mp) || mp->band != band))
			continue;
		q_unlink(q, mp);
		list_add_tail(&mp->list, &dead);
	}
	backen = q_check_drain(q);
	spin_unlock(&q->lock);
	asx_freemsg_list(&dead);
	if (backen)
		back_enable(q, backen);
}
EXPORT_SYMBOL_GPL(asx_flushq);

/*
 * The usual handling of M_FLUSH in a module's put procedure: flush @q if the
 * message names its side, then pass it on.
 */
void asx_flush_msg(struct asx_queue *q, struct asx_msg *mp)
{
	u8 flags = asx_blen(mp) ? mp->rptr[0] : 0;
	u8 band = asx_blen(mp) > 1 ? mp->rptr[1] : 0;
	u8 mine = q->side == ASX_SIDE_READ ? ASX_FLUSHR : ASX_FLUSHW;

	if (flags & mine)
		asx_flushq(q, flags & ASX_FLUSHBAND, band);
	asx_putnext(q, mp);
}
EXPORT_SYMBOL_GPL(asx_flush_msg);

static void ioc_answer(struct asx_queue *q, struct asx_msg *mp, u8 type, int error, int rval,
		       struct asx_msg *data)
{
	struct asx_iocblk *ioc = (struct asx_iocblk *)mp->rptr;

	mp->type = type;
	ioc->error = error;
	ioc->rval = rval;
	asx_freemsg(mp->cont);
	mp->cont = data;
	ioc->count = data ? asx_msgdsize(data) : 0;
	asx_qreply(q, mp);
}

/* Acknowledges the M_IOCTL @mp that arrived on write queue @q; @data is the reply. */
void asx_iocack(struct asx_queue *q, struct asx_msg *mp, int rval, struct asx_msg *data)
{
	ioc_answer(q, mp, ASX_M_IOCACK, 0, rval, data);
}
EXPORT_SYMBOL_GPL(asx_iocack);

/* Refuses the M_IOCTL @mp with positive errno @error. */
void asx_iocnak(struct asx_queue *q, struct asx_msg *mp, int error)
{
	ioc_answer(q, mp, ASX_M_IOCNAK, error, -1, NULL);
}
EXPORT_SYMBOL_GPL(asx_iocnak);

void asx_queue_set_wm(struct asx_queue *q, size_t hiwat, size_t lowat)
{
	unsigned long backen;

	spin_lock(&q->lock);
	q->hiwat = hiwat;
	q->lowat = lowat;
	if (q_load0(q) >= q->hiwat && !(q->flags & ASX_QFULL)) {
		q->flags |= ASX_QFULL;
		q->fc_stops++;
	}
	backen = q_check_drain(q);
	spin_unlock(&q->lock);
	if (backen)
		back_enable(q, backen);
}

/*
 * Gives band @band (> 0) of @q its own water marks (0, 0: the queue's
 * again), making the band array if it must (may sleep). -ENOMEM without
 * memory, or while messages of a band above the array wait (they count in
 * band 0 after an allocation failed in a put).
 */
int asx_queue_set_bwm(struct asx_queue *q, u8 band, size_t hiwat, size_t lowat)
{
	struct asx_qband *nb = NULL, *qb;
	unsigned long backen;

	if (band > READ_ONCE(q->nband))
		nb = kcalloc(qb_size(band), sizeof(*nb), GFP_KERNEL_ACCOUNT);
	spin_lock(&q->lock);
	if (nb)
		nb = qb_install(q, nb, qb_size(band));
	qb = qb_of(q, band);
	if (!qb) {
		spin_unlock(&q->lock);
		kfree(nb);
		return -ENOMEM;
	}
	qb->hiwat = hiwat;
	qb->lowat = lowat;
	qb_check_full(q, qb);
	if (qb->flags & ASX_QFULL)	/* let q_check_drain() look at it */
		q->flags |= ASX_QBANDFC;
	backen = q_check_drain(q);
	spin_unlock(&q->lock);
	kfree(nb);
	if (backen)
		back_enable(q, backen);
	return 0;
}

/* The water marks of band @band of @q (the queue's for band 0 or a band without its own). */
void asx_queue_get_bwm(struct asx_queue *q, u8 band, size_t *hiwat, size_t *lowat)
{
	struct asx_qband *qb;

	spin_lock(&q->lock);
	qb = qb_of(q, band);
	*hiwat = qb ? qb_hiwat(q, qb) : q->hiwat;
	*lowat = qb ? qb_lowat(q, qb) : q->lowat;
	spin_unlock(&q->lock);
}

/* Stops @q from being scheduled again; the caller then waits for RCU and the work. */
void asx_queue_close(struct asx_queue *q)
{
	spin_lock(&q->lock);
	q->flags |= ASX_QCLOSING;
	spin_unlock(&q->lock);
}

/*
 * Cancels @q's scheduled service procedure, or waits for the run in
 * progress, for a queue that lives on with other procedures. A run cancelled
 * before it started leaves ASX_QENAB set, which would keep asx_qenable() and
 * asx_putq() from ever scheduling @q again: it is cleared. Returns whether a
 * run was cancelled; the caller enables @q again if it must be served.
 */
bool asx_queue_cancel(struct asx_queue *q)
{
	if (!cancel_work_sync(&q->srv_work))
		return false;
	spin_lock(&q->lock);
	q->flags &= ~ASX_QENAB;
	spin_unlock(&q->lock);
	return true;
}

/* Frees every queued message of a quiet queue. */
void asx_queue_purge(struct asx_queue *q)
{
	struct asx_msg *mp;
	unsigned int n = 0;

	cancel_work_sync(&q->srv_work);
	while ((mp = asx_rmvq_first(q))) {
		asx_freemsg(mp);
		/* A queue may hold tens of thousands of messages. */
		if (!(++n & 255))
			cond_resched();
	}
	asx_queue_free_bands(q);
}

static bool first_matches(const struct asx_msg *mp, u32 flags, u8 band)
{
	if (!mp)
		return false;
	if (flags == ASX_MSG_HIPRI)
		return asx_hipri(mp);
	if (flags == ASX_MSG_BAND)
		return asx_hipri(mp) || mp->band >= band;
	return true;
}

/* Is the first message one GETMSG with @flags and @band takes? */
bool asx_queue_match(struct asx_queue *q, u32 flags, u8 band)
{
	bool ret;

	spin_lock(&q->lock);
	ret = first_matches(list_first_entry_or_null(&q->msgs, struct asx_msg, list),
			    flags, band);
	spin_unlock(&q->lock);
	return ret;
}

/* Removes the first message if GETMSG with @flags and @band takes it. */
struct asx_msg *asx_rmvq_match(struct asx_queue *q, u32 flags, u8 band)
{
	struct asx_msg *mp;

	spin_lock(&q->lock);
	mp = list_first_entry_or_null(&q->msgs, struct asx_msg, list);
	if (first_matches(mp, flags, band))
		q_unlink(q, mp);
	else
		mp = NULL;
	spin_unlock(&q->lock);
	return mp;
}
