/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * sched_impl.h - internals of the ASC run-time shared by its files:
 *
 * The files, lowest first; a file calls only its own and lower ones
 * (tools/lib-layers.sh checks it from the objects; the exceptions still
 * owed are listed there):
 *
 *   switch.c   the context switch; asx__tls_vp, the VP a pthread runs as
 *   io.c       blocking-call wrappers
 *   preempt.c  preemption by per-VP timer signals
 *   stack.c    thread stacks
 *   sched.c    the hot path: locks, the inbox, the activation policy's
 *              answers (what they owe vp.c is recorded in a struct
 *              vp_todo for the caller), waking, switching and reaping,
 *              yield, blocking and waiting
 *   mode.c     the single-VP lock-free mode with activations and the
 *              changes of mode
 *   upcall.c   scheduler activations: the group, the spares parked in
 *              the kernel and the events they read
 *   vp.c       VPs: the VP loop, making VPs (and running what a struct
 *              vp_todo owes), the deferred activation check, blocking
 *              calls on the wrapper path, add/remove
 *   sync.c     ASC-aware locks
 *   sentinel.c the timers and the sentinel thread
 *   thread.c   user threads: create, put, end, join, thread_change,
 *              thread timers
 *   prio.c, edf.c, direct.c, stride.c  the policies, written on the
 *              public asx/asc_policy.h (called through their ops)
 *   asc.c      ASC lifecycle: create, destroy, stats, dump
 *
 * The static inline helpers below are the ones the yield and switch path
 * inlines: they live here so that every file gets them inlined, as when
 * the run-time was one file.  Functions of the run-time called from
 * another of its files are asx__*, hidden like every internal symbol.
 */
#ifndef ASX_SCHED_IMPL_H
#define ASX_SCHED_IMPL_H

#include <limits.h>

#include "asc/asc_impl.h"
#include "core/futex.h"
#include "core/probes.h"

/* The process's scheduler state (sched.c). */
struct sched_state {
	int mode;			/* MODE_*, atomic */
	pthread_mutex_t cfg;		/* ASC list, VP creation, mode changes */
	struct asx_asc *ascs;
	int nvps;			/* VPs in the process (atomic) */
	struct asx_vp *single;		/* the VP when nvps == 1 */
	uint32_t ack;			/* futex: MODE_REQUEST acknowledged */
	int need_act;			/* an ASC may lack a running VP */
	/*
	 * Activations on the single-VP path (mode.c): MODE_SINGLE although
	 * spares exist, parked in the kernel; @single is the VP that runs
	 * threads.  A VP back from the kernel's wait calls asx__sa_wake_mode()
	 * first.  going_multi: a switch to MODE_MULTI is waiting for @single
	 * to leave a lock-free operation.
	 */
	bool sa_single;
	int going_multi;
	struct asx_asc *sa_home;	/* the ASC that may have it back; NULL: none (atomic) */
};
extern struct sched_state asx__sched __attribute__((visibility("hidden")));

/* Scheduler activations: what an ASX_SA_USER event asks of the spare it wakes. */
enum { SA_WAKE = 1, SA_REFILL = 2, SA_STOP = 3 };

/* Work the activation policy left for after the ASC lock is released. */
struct vp_todo {
	bool spawn;		/* make a VP */
	bool pool;		/* make a VP that starts parked in the kernel */
	bool refill;		/* an SA_REFILL post: a parked spare makes one */
	unsigned int post;	/* SA_WAKE posts for spares parked in the kernel */
};

/* ---------------------------------------------------------------- the mode */

static inline int mode_get(void)
{
	return __atomic_load_n(&asx__sched.mode, __ATOMIC_ACQUIRE);
}

/* mode_locked()'s rare half: acknowledge MODE_REQUEST.  Returns true. */
bool asx__mode_ack(void);

/*
 * At a scheduling point outside any lock-free operation: take a pending
 * request for the locked path.  Returns true when operations must lock.
 */
static inline bool mode_locked(void)
{
	int m = mode_get();

	if (likely(m != MODE_REQUEST))
		return m == MODE_MULTI;
	return asx__mode_ack();
}

/* ---------------------------------------------------------------- VPs (sched.c) */

/* Under the lock: may @a have another VP (max_vps)?  With activations a
 * VP that exited keeps its place in the group until it has left it. */
static inline bool vp_room(const struct asx_asc *a)
{
	return a->nvps - a->nexited < a->max_vps && (!a->sa || a->sa_slots < a->sa_nmap);
}

/* Under the lock: a spare parked in the kernel that no WAKE post is
 * already on its way to?  Claims it (the caller posts, SA_WAKE). */
static inline bool sa_claim_spare(struct asx_asc *a)
{
	if (!a->sa || a->nspare <= a->sa_posted)
		return false;
	a->sa_posted++;
	return true;
}

/*
 * Under @a's lock: one more VP runs.  The dispatch window starts again:
 * it measures how r running VPs keep up (VPEV_WINDOW), and dispatches made
 * by fewer VPs before it would make a VP just woken look surplus.
 */
static inline void vp_now_running(struct asx_asc *a, struct asx_vp *v)
{
	v->state = VP_RUNNING;
	a->win_t0 = asx_now_ns();
	a->win_d0 = a->ndispatch;
}

/* Under @a's lock: take an idle VP (@bound, a DIRECT thread's VP, if not NULL). */
static inline struct asx_vp *idle_take(struct asx_asc *a, struct asx_vp *bound)
{
	struct asx_vp **pp, *v;

	for (pp = &a->idle; (v = *pp); pp = &v->idle_next) {
		if (bound && v != bound)
			continue;
		*pp = v->idle_next;
		a->nidle--;
		vp_now_running(a, v);
		return v;
	}
	return NULL;
}

/* Move the inbox to the run queue (oldest first).  Returns how many.
 * Lock-free on the single VP; under the lock otherwise. */
unsigned int asx__inbox_drain(struct asx_asc *a);
void asx__vp_wake(struct asx_vp *vp);
void asx__wake_list(struct asx_vp **wk, int k);
/*
 * Carry out the activation policy's answer @n (under @a's lock); VPs to
 * wake are returned in @wk (up to @max), the rest to do in *@td (NULL:
 * done here, or left to a sweep).
 */
void asx__act_watch(struct asx_asc *a);
int asx__activate_n(struct asx_asc *a, int n, struct asx_asc_thread *t,
		    struct asx_vp **wk, int max, struct vp_todo *td);
/* vp.c, after the lock: what asx__activate_n() or asx__wake_owed() left in *@td. */
void asx__vp_todo_run(struct asx_asc *a, struct vp_todo *td);

static inline bool vp_todo_owed(const struct vp_todo *td)
{
	return td->post || td->refill || td->spawn || td->pool;
}

/*
 * Make @t (blocked; claimed by the caller) runnable again.  What only the
 * files above sched.c can do (make a VP: vp.c) is recorded in *@td for
 * the caller to run with asx__vp_todo_run() once unlocked; with @td NULL
 * it is left to the activation check (need_act), as asx__activate_n()
 * does.  sched.c calls no file above it.
 */
void asx__wake_owed(struct asx_asc_thread *t, struct vp_todo *td);
/* Claim @w (W_WAITING -> @how) and wake its owner; false if already claimed. */
bool asx__claim_wake_owed(struct asx_waiter *w, uint32_t how, struct vp_todo *td);

/* For the files above vp.c: wake @t and settle what is owed at once. */
static inline void asx__wake(struct asx_asc_thread *t)
{
	struct asx_asc *a = t->asc;	/* @t may be gone once woken; @a is not */
	struct vp_todo td = { 0 };

	asx__wake_owed(t, &td);
	if (unlikely(vp_todo_owed(&td)))
		asx__vp_todo_run(a, &td);
}

static inline bool asx__claim_wake(struct asx_waiter *w, uint32_t how)
{
	struct asx_asc_thread *t = w->t;
	struct asx_asc *a = t ? t->asc : NULL;
	struct vp_todo td = { 0 };

	if (!asx__claim_wake_owed(w, how, &td))
		return false;
	if (unlikely(vp_todo_owed(&td)))
		asx__vp_todo_run(a, &td);
	return true;
}

static inline int activate_locked(struct asx_asc *a, enum asx_asc_vp_event ev, struct asx_asc_thread *t,
				  struct asx_vp **wk, int max, struct vp_todo *td)
{
	return asx__activate_n(a, asx__pol_activation(a, ev), t, wk, max, td);
}

/* ---------------------------------------------------------------- VPs (sched.c) */

/* Under @a's lock: did a running VP have the CPU for most of the time
 * since the last check?  Re-bases every running VP's mark. */
bool asx__vps_had_cpu(struct asx_asc *a, uint64_t now);
/* Make sure each ASC with runnable threads has a running VP (paper 3.3). */
void asx__sweep_activation(void);

/* ---------------------------------------------------------------- VPs (vp.c) */

/*
 * A new VP for @a: @bound's own (DIRECT), a @spare beyond the target (the
 * activation policy's; refused past max_vps), and with activations one that
 * starts parked in the kernel (@park: the spare pool).
 */
int asx__vp_spawn(struct asx_asc *a, struct asx_asc_thread *bound, bool spare, bool park);

/* ---------------------------------------------------------------- the mode (mode.c) */

/* asx__sched.cfg held: before a VP is added, leave the single-VP lock-free mode. */
void asx__mode_before_new_vp(void);
/* Registers the process for membarrier(PRIVATE_EXPEDITED); true if it can use it. */
bool asx__membarrier_ready(void);
/* A VP of an ASC with activations back from the kernel's wait, before it
 * touches any scheduler state: run on as the single VP, or switch the
 * process to MODE_MULTI (an asymmetric fence against the single VP). */
void asx__sa_wake_mode(struct asx_vp *self);
/* Under @a's lock, @self parking: the takeover over, give the one VP of @a
 * that runs the single-VP path back. */
void asx__sa_try_single(struct asx_asc *a, struct asx_vp *self);

/* ---------------------------------------------------------------- activations */

/* Under @a's lock: @vp, blocked, runs again (sched.c). */
void asx__sa_unblocked_locked(struct asx_asc *a, struct asx_vp *vp);

static inline void sa_sync(struct asx_asc *a, struct asx_vp *vp)
{
	if (unlikely(vp->sa_blocked))
		asx__sa_unblocked_locked(a, vp);
}

/* upcall.c */
void asx__sa_join_self(struct asx_asc *a, struct asx_vp *vp);
void asx__sa_leave_self(struct asx_asc *a, struct asx_vp *vp);
/* Parking a VP of an ASC with activations (vp.c's loop drives it). */
enum { SA_PARK_AGAIN, SA_PARK_RUN, SA_PARK_EXIT, SA_PARK_STOP };
/* Entered under the lock with nothing to run; returns (unlocked) true to
 * run threads at once, false to park (*@excess: a surplus VP). */
bool asx__sa_park_begin(struct asx_asc *a, struct asx_vp *vp, bool *excess);
/* One wait in the kernel and its events; unlocked; what they owe in *@td. */
int asx__sa_park_batch(struct asx_asc *a, struct asx_vp *vp, bool *excess, struct vp_todo *td);
/* Opens @a's activation group if @mode and the module allow; 0 or -errno. */
int asx__sa_setup(struct asx_asc *a, int mode, const struct asx_asc_opts *attr);
void asx__sa_teardown(struct asx_asc *a);

/* ---------------------------------------------------------------- reaping (sched.c) */

/* A dead thread's context is no longer in use: release it, tell joiners. */
void asx__reap(struct asx_asc_thread *t);
void asx__run_utimers(struct asx_asc_thread *self);

/* ---------------------------------------------------------------- the rest */

/* asc.c: a caller's size-first attribute struct into @o (@osz bytes). */
/* preempt.c: the calling VP's preemption tick (its ASC's timeslice). */
void asx__preempt_tick_start(struct asx_vp *vp);
/* Asks @vp to preempt its thread at the next safe point (signal.c). */
void asx__vp_kick(struct asx_vp *vp);
/* Frees @self's signal handlers, on @self before it ends (signal.c). */
void asx__sigs_exit(struct asx_asc_thread *self);

/* ---------------------------------------------------------------- switching */

static inline void finish_switch(struct asx_asc_thread *prev)
{
	if (!prev)
		return;
	if (unlikely(prev->dead)) {
		asx__reap(prev);
		return;
	}
	SCHED_FUZZ();
	__atomic_store_n(&prev->switching, 0, __ATOMIC_RELEASE);
}

static inline bool ctx_saved(struct asx_asc_thread *t)
{
	return !__atomic_load_n(&t->switching, __ATOMIC_ACQUIRE);
}

/*
 * @next was picked while another VP is still switching it out: returns
 * @next to switch to it directly, NULL to switch to the VP's loop.
 */
struct asx_asc_thread *asx__vp_handoff(struct asx_vp *vp, struct asx_asc_thread *next);

/* After returning to a thread's own code from the scheduler. */
static inline void leave_sched(struct asx_asc_thread *self)
{
	struct asx_vp *vp = self->vp;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* release: asx__sa_wake_mode() may read it to see us out of the scheduler */
	__atomic_store_n(&vp->in_sched, 0, __ATOMIC_RELEASE);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (unlikely(__atomic_load_n(&self->utimer_pending, __ATOMIC_RELAXED)))
		asx__run_utimers(self);
	if (unlikely(__atomic_load_n(&vp->preempt_pending, __ATOMIC_RELAXED)))
		asx__preempt_check(vp);
}

static inline void enter_sched(struct asx_vp *vp)
{
	__atomic_store_n(&vp->in_sched, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * The asc_switch probe (arg0 the VP, arg1 its ASC) fires at every switch of
 * stacks on a VP: thread to thread, thread to the VP's loop, loop to thread.
 * asx-ctxsw counts them beside the kernel's context switches.
 */
#define note_switch(vp, asc)	ASX_PROBE2(asc_switch, vp, asc)

/* Switch from @self to @next (NULL: the VP's loop) on @vp.  Inlined even
 * into the locked yield path, where a call would cost a frame of its own. */
static inline __attribute__((always_inline)) void switch_to(struct asx_vp *vp, struct asx_asc_thread *self,
			     struct asx_asc_thread *next)
{
	struct asx_asc_thread *prev;

	SCHED_FUZZ();
	__atomic_store_n(&vp->nswitch, vp->nswitch + 1, __ATOMIC_RELAXED);	/* read by asx_asc_switches */
	note_switch(vp, self->asc);
	if (unlikely(next && !ctx_saved(next)))
		next = asx__vp_handoff(vp, next);
	if (next) {
		__atomic_store_n(&vp->cur, next, __ATOMIC_RELAXED);	/* asx_asc_snapshot() reads it */
		__atomic_store_n(&next->vp, vp, __ATOMIC_RELAXED);	/* asx_asc_signal() reads it */
		__atomic_store_n(&next->state, T_RUNNING, __ATOMIC_RELAXED);
		prev = asx__ctx_switch(&self->ctx, &next->ctx, self);
	} else {
		__atomic_store_n(&vp->cur, NULL, __ATOMIC_RELAXED);	/* asx_asc_snapshot */
		prev = asx__ctx_switch(&self->ctx, &vp->ctx, self);
	}
	finish_switch(prev);
}

#endif /* ASX_SCHED_IMPL_H */
