// SPDX-License-Identifier: GPL-2.0
/*
 * ASX scheduler activations: tell a user-level scheduler when one of its
 * virtual processors (VPs) blocks in the kernel and when it runs again.
 *
 * SA_CREATE on /dev/asx makes a group, a file of its own. A VP thread joins
 * it with SA_JOIN, which registers a preempt notifier on the calling thread
 * (a notifier can only be put on current, so a thread can only join itself).
 * The notifier's sched_out runs under the run-queue lock with interrupts
 * off: when the member is going to sleep it writes a BLOCKED event into the
 * group's preallocated ring under a raw spinlock and queues an irq_work that
 * wakes one spare parked in SA_WAIT. Its sched_in writes UNBLOCKED when the
 * member was blocked. SA_WAIT returning with events is the upcall.
 *
 * A group made with ASX_SA_PREEMPT also hears of a member switched out while
 * still runnable (a preemption): sched_out writes PREEMPTED, at most one per
 * member per sa_preempt_min_us (the ones in between are counted in the next
 * one's arg), and sched_in writes RESUMED after it (waking nobody). A switch
 * to a member of the same group is not reported. A group without the flag
 * pays one test of a member field per preemption.
 *
 * Lifetime. A member is freed by exactly one of:
 *  - SA_LEAVE, from the member thread (it unregisters its own notifier);
 *  - the release of its group when the closing thread is the member;
 *  - a later SA_JOIN by the same thread, when its group was closed first;
 *  - the reaper, after the thread died.
 * Closing a group with other members cannot unregister their notifiers (a
 * notifier may only be removed by its task), so release clears each
 * member's group pointer (the notifiers then do nothing), waits for RCU so
 * that no notifier still uses the group, and parks the members on the
 * orphan list, each holding a module reference: the notifier code must
 * outlive them. An orphan is not left to its thread's exit (a thread that
 * lives on would hold off rmmod as long as it likes): release queues a task
 * work on the thread (TWA_SIGNAL, so a sleep is interrupted and, being
 * restartable, restarted), which unregisters the notifier at its next return
 * to user space and hands the member to the reaper. Every member holds a
 * reference on its task. There is no
 * exit hook in preempt_ops, but the last thing a task does is
 * do_task_dead(): its final sched_out sees TASK_DEAD, queues the member on
 * a lock-free list and kicks the reaper (irq_work, then a work item). The
 * reaper frees the member once the task is off its CPU for good (on_cpu is
 * cleared after the sched_out notifiers ran), so its memory outlives every
 * call of the notifier; the dead task's notifier list is never walked again.
 * A task work runs before do_task_dead(), so an orphan whose work was queued
 * never takes that path.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "sa.h"
#include "uarg.h"
#include "trace.h"
#include "compat.h"

#include <linux/anon_inodes.h>
#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/llist.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/poll.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/task_work.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#define SA_BATCH	8	/* events copied to user space per round */

static_assert(sizeof(struct asx_sa_create) == ASX_SA_CREATE_SIZE_VER0);
static_assert(sizeof(struct asx_sa_join) == ASX_SA_JOIN_SIZE_VER0);
static_assert(sizeof(struct asx_sa_wait) == ASX_SA_WAIT_SIZE_VER0);
static_assert(sizeof(struct asx_sa_info) == ASX_SA_INFO_SIZE_VER0);
static_assert(sizeof(struct asx_sa_event) == 32);
static_assert(sizeof(struct asx_sa_post) == ASX_SA_POST_SIZE_VER0);

struct sa_group {
	u64 id;
	struct pid *tgid;		/* the process that made it: only its threads join */
	kuid_t uid;			/* its creator's effective uid */
	u32 max_vps;
	u32 flags;			/* ASX_SA_PREEMPT */
	u32 nr_vps;			/* under asx_sa_lock, like @vps and @members */
	unsigned long *vps;
	struct list_head members;
	struct list_head node;		/* on sa_groups */

	/* The ring: free-running indices, everything under @lock. */
	raw_spinlock_t lock;
	u32 mask;
	u32 head;
	u32 tail;
	u32 lost_pending;		/* lost since the ring was last full, not yet reported */
	u64 lost_seq;			/* seq of the first of them */
	u64 lost_ts;
	u64 seq;
	u64 lost;
	struct asx_sa_event *ring;

	struct irq_work wake;
	wait_queue_head_t wq;
};

struct sa_member {
	struct preempt_notifier pn;
	struct sa_group __rcu *grp;	/* NULL once the group is closed */
	struct sa_group *owner;		/* the same, under asx_sa_lock */
	struct task_struct *task;	/* a reference */
	struct list_head node;		/* on owner->members or sa_orphans */
	struct llist_node dead_node;
	struct callback_head unhook;	/* an orphan's task work */
	u64 exec_id;			/* the task's self_exec_id at JOIN */
	u64 preempt_next;		/* PREEMPTED: none before (mono ns); own notifiers */
	u32 preempt_skipped;		/* preemptions not reported since the last one */
	u32 vp;
	u32 tid;
	bool want_preempt;		/* its group has ASX_SA_PREEMPT (set at JOIN) */
	bool preempted;			/* PREEMPTED written, RESUMED not yet */
	bool orphan;			/* on sa_orphans, holding a module reference */
	bool unhook_queued;		/* @unhook is queued: it frees the member */
	bool unhooked;			/* to the reaper with its notifier off */
	bool blocked;			/* written by its own notifiers only */
	bool parked;			/* in SA_WAIT of its own group: not a blocking VP */
};

/*
 * Groups pin kernel memory (the ring, up to 512 KiB) and the preempt-notifier
 * key: a system-wide and a per-user limit, both writable at run time in
 * /sys/module/asx/parameters/. CAP_SYS_RESOURCE is exempt from the second.
 */
static unsigned int sa_max_groups = ASX_SA_MAX_GROUPS;
module_param(sa_max_groups, uint, 0644);
MODULE_PARM_DESC(sa_max_groups, "activation groups open in the whole system (default 256)");
static unsigned int sa_max_user_groups = 32;
module_param(sa_max_user_groups, uint, 0644);
MODULE_PARM_DESC(sa_max_user_groups,
		 "activation groups one user may have open, CAP_SYS_RESOURCE exempt (default 32)");

/*
 * The shortest time between two PREEMPTED events of one member: a VP
 * time-sliced against a CPU hog would otherwise write one per slice.
 */
static unsigned int sa_preempt_min_us = 1000;
module_param(sa_preempt_min_us, uint, 0644);
MODULE_PARM_DESC(sa_preempt_min_us,
		 "microseconds between two PREEMPTED events of one member (default 1000)");

static DEFINE_MUTEX(asx_sa_lock);	/* groups, membership, orphans */
static LIST_HEAD(sa_groups);
static LIST_HEAD(sa_orphans);
static unsigned int sa_nr_groups;
static atomic_t sa_nr_members = ATOMIC_INIT(0);
static atomic64_t sa_next_id = ATOMIC64_INIT(0);
static LLIST_HEAD(sa_dead);
static bool sa_unhook_used;		/* a task work of ours ever ran */

static struct preempt_ops sa_ops;
static void sa_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(sa_reap_work, sa_reap);

static void sa_reap_kick(struct irq_work *iw)
{
	mod_delayed_work(system_wq, &sa_reap_work, 0);
}

static DEFINE_IRQ_WORK(sa_reap_iw, sa_reap_kick);

/*
 * Appends one event; any context, interrupts may be off (sched_out). @wake:
 * wake a spare for it (else it waits in the ring for the next one).
 */
static void sa_append_ev(struct sa_group *g, u32 type, u32 vp, u32 tid, u32 arg, bool wake)
{
	u64 now = ktime_get_mono_fast_ns();
	struct asx_sa_event *ev;
	unsigned long flags;
	u32 used;

	raw_spin_lock_irqsave(&g->lock, flags);
	used = g->tail - g->head;
	if (g->lost_pending) {
		if (used > g->mask) {
			g->lost_pending++;
			g->lost++;
			g->seq++;
			goto out;
		}
		/* Room again: report the loss in its place before anything newer. */
		ev = &g->ring[g->tail++ & g->mask];
		*ev = (struct asx_sa_event){ .type = ASX_SA_OVERFLOW, .ts_ns = g->lost_ts,
					     .seq = g->lost_seq, .arg = g->lost_pending };
		g->lost_pending = 0;
		used++;
	}
	if (used > g->mask) {
		g->lost_pending = 1;
		g->lost_seq = g->seq++;
		g->lost_ts = now;
		g->lost++;
		goto out;
	}
	ev = &g->ring[g->tail++ & g->mask];
	*ev = (struct asx_sa_event){ .type = type, .vp = vp, .ts_ns = now, .seq = g->seq++,
				     .tid = tid, .arg = arg };
out:
	raw_spin_unlock_irqrestore(&g->lock, flags);
	if (wake)
		irq_work_queue(&g->wake);
}

static void sa_append(struct sa_group *g, u32 type, u32 vp, u32 tid, u32 arg)
{
	sa_append_ev(g, type, vp, tid, arg, true);
}

/* RESUMED wakes nobody: its VP tells its scheduler itself by running. */
static void sa_record(struct sa_group *g, const struct sa_member *m, u32 type)
{
	sa_append_ev(g, type, m->vp, m->tid, 0, type != ASX_SA_RESUMED);
}

/*
 * A member that called execve() runs a program that never joined: its group
 * is told nothing more about it (a setuid program's sleeps would otherwise
 * reach whoever holds the group). It stays a member until it leaves or dies.
 */
static bool sa_execd(const struct sa_member *m)
{
	return READ_ONCE(m->task->self_exec_id) != m->exec_id;
}

/*
 * Under the run-queue lock: is @next, the task about to run, a member of
 * @g? @next is not running, so its notifier list does not change under us.
 */
static bool sa_member_of(struct task_struct *next, const struct sa_group *g)
{
	struct preempt_notifier *pn;

	hlist_for_each_entry(pn, &next->preempt_notifiers, link)
		if (pn->ops == &sa_ops)
			return rcu_access_pointer(container_of(pn, struct sa_member, pn)->grp) == g;
	return false;
}

/*
 * Under the run-queue lock: @m is switched out runnable (preempted, or a
 * sched_yield() that switched) for @next. Rate-limited per member; the
 * preemptions in between are counted in the next PREEMPTED's arg. One in
 * favour of a member of the same group (a spare it woke, another of its
 * VPs) is none the scheduler can do anything about: not reported.
 */
static void sa_preempted(struct sa_member *m, struct task_struct *next)
{
	u64 now = ktime_get_mono_fast_ns();
	struct sa_group *g;

	if (m->preempted)
		return;
	g = rcu_dereference_sched(m->grp);
	if (!g || sa_member_of(next, g))
		return;
	if (now < m->preempt_next) {
		if (m->preempt_skipped != U32_MAX)
			m->preempt_skipped++;
		return;
	}
	m->preempt_next = now + (u64)READ_ONCE(sa_preempt_min_us) * NSEC_PER_USEC;
	m->preempted = true;
	trace_sa_preempt(g->id, m->vp, m->tid);
	sa_append(g, ASX_SA_PREEMPTED, m->vp, m->tid, m->preempt_skipped);
	m->preempt_skipped = 0;
}

/*
 * Runs under the run-queue lock, interrupts off, in the context of the
 * member (it is current until the switch). On 6.1 a task that goes to sleep
 * was dequeued by __schedule() before this: its state is not TASK_RUNNING
 * and on_rq is 0. A preempted task keeps on_rq set (also one preempted
 * between set_current_state() and schedule()), and one with a signal
 * pending was put back to TASK_RUNNING. Kernels with delayed dequeue (EEVDF,
 * 6.12 on) may leave a sleeping task on the run queue (se.sched_delayed):
 * there on_rq alone does not tell a sleep from a preemption, and
 * asx_task_runnable() (compat.h) looks at sched_delayed as well.
 */
static void sa_sched_out(struct preempt_notifier *pn, struct task_struct *next)
{
	struct sa_member *m = container_of(pn, struct sa_member, pn);
	unsigned int state = READ_ONCE(m->task->__state);
	struct sa_group *g;

	if (state == TASK_DEAD) {
		/* Its last switch: report it, then let the reaper free it. */
		g = rcu_dereference_sched(m->grp);
		if (g && !sa_execd(m))
			sa_record(g, m, ASX_SA_EXITED);
		llist_add(&m->dead_node, &sa_dead);
		irq_work_queue(&sa_reap_iw);
		return;
	}
	if (state == TASK_RUNNING || asx_task_runnable(m->task)) {
		if (unlikely(m->want_preempt) && !m->parked && !sa_execd(m))
			sa_preempted(m, next);
		return;
	}
	if (m->parked || sa_execd(m))
		return;
	g = rcu_dereference_sched(m->grp);
	if (!g)
		return;
	m->blocked = true;
	trace_sa_block(g->id, m->vp, m->tid);
	sa_record(g, m, ASX_SA_BLOCKED);
}

/* Preemption disabled, interrupts on, the run-queue lock released. */
static void sa_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct sa_member *m = container_of(pn, struct sa_member, pn);
	struct sa_group *g;
	u32 type;

	if (unlikely(m->preempted)) {
		m->preempted = false;
		type = ASX_SA_RESUMED;
	} else if (m->blocked) {
		m->blocked = false;
		type = ASX_SA_UNBLOCKED;
	} else {
		return;
	}
	g = rcu_dereference_sched(m->grp);
	if (!g)
		return;
	if (type == ASX_SA_RESUMED)
		trace_sa_resume(g->id, m->vp, m->tid);
	else
		trace_sa_unblock(g->id, m->vp, m->tid);
	sa_record(g, m, type);
}

static struct preempt_ops sa_ops = {
	.sched_in	= sa_sched_in,
	.sched_out	= sa_sched_out,
};

static void sa_wake(struct irq_work *iw)
{
	struct sa_group *g = container_of(iw, struct sa_group, wake);

	wake_up(&g->wq);
}

/* The calling thread's member, if asx.ko has a notifier on it. Only current
 * changes its own notifier list.
 */
static struct sa_member *sa_current_member(void)
{
	struct preempt_notifier *pn;

	hlist_for_each_entry(pn, &current->preempt_notifiers, link)
		if (pn->ops == &sa_ops)
			return container_of(pn, struct sa_member, pn);
	return NULL;
}

static void sa_unhook_self(struct sa_member *m)
{
	preempt_disable();
	preempt_notifier_unregister(&m->pn);
	preempt_enable();
}

/* Takes @m off its group or the orphan list. */
static void sa_detach(struct sa_member *m)
{
	struct sa_group *g = m->owner;

	lockdep_assert_held(&asx_sa_lock);
	list_del_init(&m->node);
	if (g) {
		clear_bit(m->vp, g->vps);
		g->nr_vps--;
		m->owner = NULL;
	}
}

/* The calling thread's own @m: no notifier, no group. */
static void sa_drop_self(struct sa_member *m)
{
	lockdep_assert_held(&asx_sa_lock);
	sa_unhook_self(m);
	sa_detach(m);
}

/* @m's notifier is unregistered, or its task is dead and off its CPU. */
static void sa_free_member(struct sa_member *m)
{
	put_task_struct(m->task);
	kfree(m);
	atomic_dec(&sa_nr_members);
}

static bool sa_task_off_cpu(struct task_struct *p)
{
#ifdef CONFIG_SMP
	/* finish_task() clears on_cpu with release after the sched_out notifiers ran. */
	return !smp_load_acquire(&p->on_cpu);
#else
	return true;
#endif
}

static void sa_reap(struct work_struct *work)
{
	struct llist_node *dead = llist_del_all(&sa_dead);
	struct sa_member *m, *tmp;
	unsigned int puts = 0;
	bool again = false;
	LIST_HEAD(gone);

	mutex_lock(&asx_sa_lock);
	llist_for_each_entry_safe(m, tmp, dead, dead_node) {
		if (!m->unhooked && !sa_task_off_cpu(m->task)) {
			llist_add(&m->dead_node, &sa_dead);
			again = true;
			continue;
		}
		sa_detach(m);
		puts += m->orphan;
		list_add(&m->node, &gone);
	}
	mutex_unlock(&asx_sa_lock);
	list_for_each_entry_safe(m, tmp, &gone, node)
		sa_free_member(m);
	if (again)
		mod_delayed_work(system_wq, &sa_reap_work, 1);
	/* asx_sa_exit() waits for this function to return. */
	while (puts--)
		module_put(THIS_MODULE);
}

/*
 * An orphan's task work, in its own thread: on the way back to user space,
 * or in do_exit() before the task is dead. A SA_JOIN by the thread may have
 * unregistered the notifier already (it does not free a member whose work is
 * queued). asx_sa_exit() waits for an RCU-tasks grace period, so no thread
 * is still running the end of this function when the module text goes.
 */
static void sa_orphan_unhook(struct callback_head *cb)
{
	struct sa_member *m = container_of(cb, struct sa_member, unhook);

	mutex_lock(&asx_sa_lock);
	if (sa_current_member() == m)
		sa_unhook_self(m);
	sa_detach(m);
	m->unhook_queued = false;
	m->unhooked = true;
	mutex_unlock(&asx_sa_lock);
	llist_add(&m->dead_node, &sa_dead);
	mod_delayed_work(system_wq, &sa_reap_work, 0);
}

/* Asks the orphan @m's thread to drop its notifier. */
static void sa_queue_unhook(struct sa_member *m)
{
	lockdep_assert_held(&asx_sa_lock);
	init_task_work(&m->unhook, sa_orphan_unhook);
	/* Fails only once the task ran its exit works: it dies without them. */
	if (!task_work_add(m->task, &m->unhook, TWA_SIGNAL)) {
		m->unhook_queued = true;
		WRITE_ONCE(sa_unhook_used, true);
	}
}

static long sa_join(struct sa_group *g, void __user *uarg)
{
	struct sa_member *m, *old;
	struct asx_sa_join j;
	bool orphan = false;
	int ret;

	ret = ASX_COPY_IN(j, uarg, ASX_SA_JOIN_SIZE_VER0);
	if (ret)
		return ret;
	if (j.flags || j.reserved)
		return -EINVAL;
	if (task_tgid(current) != g->tgid)
		return -EPERM;
	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;

	mutex_lock(&asx_sa_lock);
	old = sa_current_member();
	if (old && old->owner && !sa_execd(old)) {
		ret = -EBUSY;
		goto err_unlock;
	}
	if (g->nr_vps >= g->max_vps) {
		ret = -ENOSPC;
		goto err_unlock;
	}
	if (old) {
		/*
		 * Left behind by a closed group, or by the program this thread
		 * ran before an execve: we are its thread, drop it now.
		 */
		sa_drop_self(old);
		orphan = old->orphan;
		/* An orphan's queued task work frees it, with its module reference. */
		if (old->unhook_queued)
			old = NULL;
	}
	m->vp = find_first_zero_bit(g->vps, g->max_vps);
	set_bit(m->vp, g->vps);
	g->nr_vps++;
	m->tid = task_pid_vnr(current);
	m->exec_id = current->self_exec_id;
	m->task = get_task_struct(current);
	m->owner = g;
	m->want_preempt = g->flags & ASX_SA_PREEMPT;
	RCU_INIT_POINTER(m->grp, g);
	preempt_notifier_init(&m->pn, &sa_ops);
	list_add_tail(&m->node, &g->members);
	atomic_inc(&sa_nr_members);
	preempt_disable();
	preempt_notifier_register(&m->pn);
	preempt_enable();
	mutex_unlock(&asx_sa_lock);

	if (old) {
		sa_free_member(old);
		/* An orphan's reference: the group's file pins the module while we run. */
		if (orphan)
			module_put(THIS_MODULE);
	}
	j.vp = m->vp;
	j.tid = m->tid;
	ret = ASX_COPY_OUT(uarg, j);
	if (ret) {
		/* Not told its VP id, the caller is no member: undo. */
		mutex_lock(&asx_sa_lock);
		sa_drop_self(m);
		mutex_unlock(&asx_sa_lock);
		sa_free_member(m);
	}
	return ret;

err_unlock:
	mutex_unlock(&asx_sa_lock);
	kfree(m);
	return ret;
}

static long sa_leave(struct sa_group *g, void __user *uarg)
{
	struct sa_member *m;
	struct asx_sa_join j;
	int ret;

	ret = ASX_COPY_IN(j, uarg, ASX_SA_JOIN_SIZE_VER0);
	if (ret)
		return ret;
	if (j.flags || j.reserved)
		return -EINVAL;
	mutex_lock(&asx_sa_lock);
	m = sa_current_member();
	if (!m || m->owner != g) {
		mutex_unlock(&asx_sa_lock);
		return -ENOENT;
	}
	sa_drop_self(m);
	mutex_unlock(&asx_sa_lock);
	sa_free_member(m);
	return 0;
}

/* Takes up to @n events; *more says whether any are left. */
static u32 sa_take(struct sa_group *g, struct asx_sa_event *buf, u32 n, bool *more)
{
	unsigned long flags;
	u32 got = 0;

	raw_spin_lock_irqsave(&g->lock, flags);
	while (got < n && g->head != g->tail)
		buf[got++] = g->ring[g->head++ & g->mask];
	if (got < n && g->head == g->tail && g->lost_pending) {
		/* The ring drained with losses after its last event. */
		buf[got++] = (struct asx_sa_event){ .type = ASX_SA_OVERFLOW, .ts_ns = g->lost_ts,
						    .seq = g->lost_seq, .arg = g->lost_pending };
		g->lost_pending = 0;
	}
	*more = g->head != g->tail || g->lost_pending;
	raw_spin_unlock_irqrestore(&g->lock, flags);
	return got;
}

static bool sa_pending(struct sa_group *g)
{
	unsigned long flags;
	bool ret;

	raw_spin_lock_irqsave(&g->lock, flags);
	ret = g->head != g->tail || g->lost_pending;
	raw_spin_unlock_irqrestore(&g->lock, flags);
	return ret;
}

/* Events taken but not delivered (EFAULT) are reported as lost. */
/* The events a count stands for: an OVERFLOW marker counts its losses. */
static u32 sa_weight(const struct asx_sa_event *ev)
{
	return ev->type == ASX_SA_OVERFLOW ? ev->arg : 1;
}

/*
 * @n events taken from the ring could not be stored: they are lost. An
 * OVERFLOW marker for them goes back to the head of the ring, in their place,
 * ahead of anything newer. Taking them freed the slot before the head, unless
 * the ring filled up again since: then its newest entry becomes a pending
 * loss (reported after the ring drains, still in order) to make room.
 */
static void sa_lose(struct sa_group *g, const struct asx_sa_event *ev, u32 n)
{
	struct asx_sa_event *last;
	unsigned long flags;
	u32 i, k = 0, fresh = 0;

	/* A marker's own losses were counted in @lost when they happened. */
	for (i = 0; i < n; i++) {
		k += sa_weight(&ev[i]);
		fresh += ev[i].type != ASX_SA_OVERFLOW;
	}
	raw_spin_lock_irqsave(&g->lock, flags);
	if (g->tail - g->head > g->mask) {
		last = &g->ring[--g->tail & g->mask];
		g->lost_seq = last->seq;
		g->lost_ts = last->ts_ns;
		g->lost_pending += sa_weight(last);
		g->lost += last->type != ASX_SA_OVERFLOW;
	}
	g->ring[--g->head & g->mask] = (struct asx_sa_event){ .type = ASX_SA_OVERFLOW,
		.ts_ns = ev[0].ts_ns, .seq = ev[0].seq, .arg = k };
	g->lost += fresh;
	raw_spin_unlock_irqrestore(&g->lock, flags);
}

/* Sleeps until woken, the deadline or a signal: 0, -ETIMEDOUT or -ERESTARTSYS. */
static int sa_sleep(struct sa_group *g, u64 deadline)
{
	ktime_t expires = ns_to_ktime(deadline);
	DEFINE_WAIT(wait);
	int ret = 0;

	prepare_to_wait_exclusive(&g->wq, &wait, TASK_INTERRUPTIBLE);
	if (sa_pending(g))
		goto out;
	if (signal_pending(current)) {
		ret = -ERESTARTSYS;
		goto out;
	}
	if (deadline == ASX_SA_DEADLINE_NONE)
		schedule();
	else if (!schedule_hrtimeout_range(&expires, current->timer_slack_ns, HRTIMER_MODE_ABS))
		ret = -ETIMEDOUT;
out:
	finish_wait(&g->wq, &wait);
	return ret;
}

static long sa_wait(struct sa_group *g, void __user *uarg)
{
	struct asx_sa_event buf[SA_BATCH];
	struct asx_sa_event __user *ubuf;
	struct sa_member *m;
	struct asx_sa_wait w;
	bool more = false;
	u32 done = 0, n;
	int ret;

	ret = ASX_COPY_IN(w, uarg, ASX_SA_WAIT_SIZE_VER0);
	if (ret)
		return ret;
	if (w.flags || w.reserved || w.count || !w.max || w.max > ASX_SA_WAIT_MAX)
		return -EINVAL;
	ubuf = u64_to_user_ptr(w.events);
	if (!access_ok(ubuf, (size_t)w.max * sizeof(*ubuf)))
		return -EFAULT;

	/* A member parked here is a spare, not a VP that blocked. */
	m = sa_current_member();
	if (m && rcu_access_pointer(m->grp) != g)
		m = NULL;
	if (m)
		WRITE_ONCE(m->parked, true);
	for (;;) {
		n = sa_take(g, buf, min_t(u32, SA_BATCH, w.max - done), &more);
		if (n) {
			if (copy_to_user(ubuf + done, buf, n * sizeof(*buf))) {
				sa_lose(g, buf, n);
				more = true;
				ret = -EFAULT;
				break;
			}
			done += n;
			if (done == w.max || !more)
				break;
			continue;
		}
		if (!w.deadline_ns)
			break;
		ret = sa_sleep(g, w.deadline_ns);
		if (ret)
			break;
	}
	if (m)
		WRITE_ONCE(m->parked, false);
	/* An exclusive wake-up must not die here: hand what is left on. */
	if (more || sa_pending(g))
		wake_up(&g->wq);
	if (ret == -EFAULT)
		return ret;
	if (!done && ret != -ETIMEDOUT && ret)
		return ret;
	trace_sa_upcall(g->id, done, task_pid_vnr(current));
	w.count = done;
	ret = ASX_COPY_OUT(uarg, w);
	return ret ? ret : done;
}

static long sa_info(struct sa_group *g, void __user *uarg)
{
	struct asx_sa_info in;
	unsigned long flags;
	int ret;

	ret = ASX_COPY_IN(in, uarg, ASX_SA_INFO_SIZE_VER0);
	if (ret)
		return ret;
	if (in.flags || memchr_inv(in.reserved, 0, sizeof(in.reserved)))
		return -EINVAL;
	in.id = g->id;
	in.max_vps = g->max_vps;
	in.ring_size = g->mask + 1;
	mutex_lock(&asx_sa_lock);
	in.nr_vps = g->nr_vps;
	in.sys_groups = sa_nr_groups;
	mutex_unlock(&asx_sa_lock);
	in.sys_members = atomic_read(&sa_nr_members);
	raw_spin_lock_irqsave(&g->lock, flags);
	in.pending = g->tail - g->head + !!g->lost_pending;
	in.events = g->seq;
	in.lost = g->lost;
	raw_spin_unlock_irqrestore(&g->lock, flags);
	return ASX_COPY_OUT(uarg, in);
}

/* A user event: wakes one spare like any other event (ring full: OVERFLOW). */
static long sa_post(struct sa_group *g, void __user *uarg)
{
	struct asx_sa_post p;
	int ret;

	ret = ASX_COPY_IN(p, uarg, ASX_SA_POST_SIZE_VER0);
	if (ret)
		return ret;
	if (p.flags || p.reserved)
		return -EINVAL;
	sa_append(g, ASX_SA_USER, ASX_SA_NO_VP, task_pid_vnr(current), p.arg);
	return 0;
}

#define SA_IOC_BASE(cmd)	((cmd) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

static long sa_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct sa_group *g = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (SA_IOC_BASE(cmd)) {
	case SA_IOC_BASE(ASX_IOC_SA_JOIN):
		return sa_join(g, uarg);
	case SA_IOC_BASE(ASX_IOC_SA_LEAVE):
		return sa_leave(g, uarg);
	case SA_IOC_BASE(ASX_IOC_SA_WAIT):
		return sa_wait(g, uarg);
	case SA_IOC_BASE(ASX_IOC_SA_INFO):
		return sa_info(g, uarg);
	case SA_IOC_BASE(ASX_IOC_SA_POST):
		return sa_post(g, uarg);
	default:
		return -ENOTTY;
	}
}

static __poll_t sa_poll(struct file *file, poll_table *pt)
{
	struct sa_group *g = file->private_data;

	poll_wait(file, &g->wq, pt);
	return sa_pending(g) ? EPOLLIN | EPOLLRDNORM : 0;
}

static void sa_free_group(struct sa_group *g)
{
	put_pid(g->tgid);
	bitmap_free(g->vps);
	kvfree(g->ring);
	kfree(g);
}

static int sa_release(struct inode *inode, struct file *file)
{
	struct sa_group *g = file->private_data;
	struct sa_member *m, *tmp, *self = NULL;

	mutex_lock(&asx_sa_lock);
	list_del(&g->node);
	sa_nr_groups--;
	list_for_each_entry_safe(m, tmp, &g->members, node) {
		RCU_INIT_POINTER(m->grp, NULL);
		sa_detach(m);
		if (m->task == current) {
			sa_unhook_self(m);
			self = m;
			continue;
		}
		/* Its notifier stays until the thread runs the task work. */
		m->orphan = true;
		__module_get(THIS_MODULE);
		list_add_tail(&m->node, &sa_orphans);
		sa_queue_unhook(m);
	}
	mutex_unlock(&asx_sa_lock);
	/* Notifiers run with interrupts or preemption off: RCU readers. */
	synchronize_rcu();
	irq_work_sync(&g->wake);
	if (self)
		sa_free_member(self);
	sa_free_group(g);
	return 0;
}

static const struct file_operations sa_fops = {
	.owner		= THIS_MODULE,
	.release	= sa_release,
	.poll		= sa_poll,
	.unlocked_ioctl	= sa_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

/*
 * The preempt-notifier static key is taken by the first group and held until
 * unload, not per member: turning it on or off patches the scheduler's text,
 * which per join and leave only adds cost and risk, and a module that never
 * makes a group never patches at all.
 */
static DEFINE_MUTEX(sa_key_lock);
static bool sa_key_taken;

/*
 * A second group made while the first one's caller still patches must not
 * go on before the key is on: preempt_notifier_register() warns otherwise.
 */
static void sa_take_key(void)
{
	/* Pairs with the release below: seen true, the key is on. */
	if (smp_load_acquire(&sa_key_taken))
		return;
	mutex_lock(&sa_key_lock);
	if (!sa_key_taken) {
		preempt_notifier_inc();
		/* Published only once the text is patched. */
		smp_store_release(&sa_key_taken, true);
	}
	mutex_unlock(&sa_key_lock);
}

/* Groups open by @uid; at most sa_max_groups to walk. */
static unsigned int sa_user_groups(kuid_t uid)
{
	struct sa_group *g;
	unsigned int n = 0;

	lockdep_assert_held(&asx_sa_lock);
	list_for_each_entry(g, &sa_groups, node)
		n += uid_eq(g->uid, uid);
	return n;
}

long asx_sa_create(void __user *uarg)
{
	struct asx_sa_create c;
	struct sa_group *g;
	struct file *file;
	int ret, fd;

	ret = ASX_COPY_IN(c, uarg, ASX_SA_CREATE_SIZE_VER0);
	if (ret)
		return ret;
	if ((c.flags & ~(ASX_SA_CLOEXEC | ASX_SA_PREEMPT)) || c.reserved || c.reserved2 || c.fd || c.id)
		return -EINVAL;
	if (!c.max_vps)
		c.max_vps = ASX_SA_DEF_VPS;
	if (!c.ring_size)
		c.ring_size = ASX_SA_DEF_RING;
	if (c.max_vps > ASX_SA_MAX_VPS || !is_power_of_2(c.ring_size) ||
	    c.ring_size < ASX_SA_MIN_RING || c.ring_size > ASX_SA_MAX_RING)
		return -EINVAL;

	sa_take_key();
	g = kzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return -ENOMEM;
	g->ring = kvcalloc(c.ring_size, sizeof(*g->ring), GFP_KERNEL_ACCOUNT);
	g->vps = bitmap_zalloc(c.max_vps, GFP_KERNEL_ACCOUNT);
	if (!g->ring || !g->vps) {
		ret = -ENOMEM;
		goto err_free_group;
	}
	g->max_vps = c.max_vps;
	g->flags = c.flags & ASX_SA_PREEMPT;
	g->mask = c.ring_size - 1;
	g->id = atomic64_inc_return(&sa_next_id);
	g->tgid = get_task_pid(current, PIDTYPE_TGID);
	INIT_LIST_HEAD(&g->members);
	raw_spin_lock_init(&g->lock);
	init_irq_work(&g->wake, sa_wake);
	init_waitqueue_head(&g->wq);

	g->uid = current_euid();

	mutex_lock(&asx_sa_lock);
	if (sa_nr_groups >= READ_ONCE(sa_max_groups) ||
	    (sa_user_groups(g->uid) >= READ_ONCE(sa_max_user_groups) &&
	     !capable(CAP_SYS_RESOURCE))) {
		mutex_unlock(&asx_sa_lock);
		ret = -ENOSPC;
		goto err_free_group;
	}
	sa_nr_groups++;
	list_add_tail(&g->node, &sa_groups);
	mutex_unlock(&asx_sa_lock);

	fd = get_unused_fd_flags(c.flags & ASX_SA_CLOEXEC ? O_CLOEXEC : 0);
	if (fd < 0) {
		ret = fd;
		goto err_unlist;
	}
	file = anon_inode_getfile("[asx-sa]", &sa_fops, g, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto err_put_fd;
	}
	/* From here the file owns @g: fput() releases it. */
	c.fd = fd;
	c.id = g->id;
	ret = ASX_COPY_OUT(uarg, c);
	if (ret) {
		fput(file);
		put_unused_fd(fd);
		return ret;
	}
	fd_install(fd, file);
	return 0;

err_put_fd:
	put_unused_fd(fd);
err_unlist:
	mutex_lock(&asx_sa_lock);
	list_del(&g->node);
	sa_nr_groups--;
	mutex_unlock(&asx_sa_lock);
err_free_group:
	sa_free_group(g);
	return ret;
}

void asx_sa_exit(void)
{
	/* Every member held the module (orphans) or its group's file did. */
	irq_work_sync(&sa_reap_iw);
	cancel_delayed_work_sync(&sa_reap_work);
	/* No thread may still be in sa_orphan_unhook()'s last instructions. */
	if (READ_ONCE(sa_unhook_used))
		synchronize_rcu_tasks();
	WARN_ON(atomic_read(&sa_nr_members) || !list_empty(&sa_orphans));
	if (sa_key_taken)
		preempt_notifier_dec();
}
