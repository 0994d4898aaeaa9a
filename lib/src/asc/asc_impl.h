/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asc_impl.h - internals of the ASC scheduler shared by the runtime
 * (sched.c and the files sched_impl.h lists), the policies (prio.c,
 * edf.c, direct.c), the ASC-aware synchronisation (sync.c) and the
 * blocking-call wrappers (io.c).
 *
 * Concurrency control (the paper's first level):
 *   - asx__sched.mode == MODE_SINGLE: the process has one VP.  Run queues are
 *     touched by that VP only, without a lock or atomic RMW.  Other
 *     pthreads hand threads over through the ASC's inbox (a lock-free
 *     stack) and kick the VP.
 *   - MODE_MULTI: run queues are under the ASC's lock.
 *   - MODE_REQUEST: a pthread outside the scheduler wants to add a VP;
 *     the single VP acknowledges at its next scheduling point by moving
 *     to MODE_MULTI itself, so it never races with its own lock-free
 *     operation in flight.
 *   - Activations on one VP (asx__sched.sa_single, mode.c): MODE_SINGLE with
 *     spares parked in the kernel.  The single VP marks each lock-free
 *     operation with in_sched (stored before it reads the mode); a VP back
 *     from the kernel's wait either takes the single VP's place (that one
 *     is parked: resting) or stores MODE_MULTI, runs membarrier() and waits
 *     until the single VP is out of the scheduler or resting.  When the
 *     takeover is over (one VP runs, none blocked), a VP parking gives the
 *     single-VP path back to the one running.
 *   Policy state other than the run queue (admission, accounting) and the
 *   ASC's VP bookkeeping are always under the ASC's lock.
 *
 * A thread leaving a VP sets ->switching before it becomes visible to
 * others (on a run queue, a wait queue); whoever resumes the next context
 * clears it once the old one is saved.  A VP that picks a thread whose
 * flag is still set must not run it yet.  Its VP's own loop (holding no
 * unsaved thread) may wait for the flag; a thread switching out may not:
 * the VP saving the picked thread may be waiting, the same way, for the
 * one we are switching out.  So a switch-out that picks such a thread
 * spins briefly, then switches to its VP's loop, which saves it and runs
 * the picked thread when that is saved (vp->handoff).
 */
#ifndef ASX_ASC_IMPL_H
#define ASX_ASC_IMPL_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>

#include <asx/asc.h>
#include <asx/asc_policy.h>
#include "asc/ctx.h"
#include "core/compiler.h"
#include "core/errno.h"

#define TLS_IE __attribute__((tls_model("initial-exec")))

/*
 * errno is the VP's (its kernel thread's), and a user thread may come back
 * from a switch, or from a preemption, on another VP.  Every errno access
 * after a possible switch asks afresh through core/errno.h's
 * asx__errno_location() (never analysed across the call); these name that
 * in asc/, whatever the build forces in.
 */
static inline int asx__errno_get(void)
{
	return *asx__errno_location();
}

static inline void asx__errno_set(int e)
{
	*asx__errno_location() = e;
}

enum { MODE_SINGLE = 0, MODE_MULTI = 1, MODE_REQUEST = 2 };

enum tstate { T_NEW, T_READY, T_RUNNING, T_BLOCKED, T_DEAD };

enum { W_WAITING = 0, W_WOKEN = 1, W_TIMEDOUT = 2, W_INTR = 3 };

/* A blocked caller: a user thread (t) or a plain pthread (t == NULL). */
struct asx_waiter {
	struct asx_waiter *next;
	struct asx_asc_thread *t;
	uint32_t state;		/* W_*; a pthread sleeps on it as a futex */
	uintptr_t data;
};

/* A timer-heap node (sleep deadline, thread timer, wait_fd deadline). */
struct tnode {
	uint64_t when;
	int idx;		/* heap slot, -1 when not queued */
	int kind;
	struct asx_asc_thread *t;
	struct asx_waiter *w;	/* TN_WAIT: claimed on expiry */
	unsigned int timer;	/* TN_UTIMER: index */
	struct asx_asc *asc;	/* TN_ACT */
};
enum { TN_WAIT, TN_UTIMER, TN_ACT };

struct utimer {
	struct tnode node;
	uint64_t period;
	void (*fn)(void *);
	void *arg;
};

struct asx_vp;
struct asx_sa_group;

/* utimer_pending's bit for "ASC signals pending" (signal.c): one test at
 * every scheduling point covers both */
#define ASX__UTIMER_SIGS	(1u << 31)
struct asx__sigs {
	asx_asc_signal_fn fn[ASX_ASC_SIGNALS_MAX];
	void *arg[ASX_ASC_SIGNALS_MAX];
};

/* A context's fiber-local values (fls.c): ASX_ASC_KEYS_MAX slots in
 * chunks of ASX__FLS_CHUNK, each allocated when first needed. */
#define ASX__FLS_CHUNK	32
struct asx__fls {
	struct asx__fls_chunk *c[ASX_ASC_KEYS_MAX / ASX__FLS_CHUNK];
};

struct asx_asc_thread {
	/*
	 * The policy slot (asx/asc_policy.h): the first
	 * ASX_ASC_POLICY_SLOT_SIZE bytes belong to the policy of the ASC the
	 * thread is in; a thread handle is a pointer to it.
	 */
	unsigned char pslot[ASX_ASC_POLICY_SLOT_SIZE] __attribute__((aligned(16)));
	struct asx_ctx ctx;
	struct asx_asc *asc;
	struct asx_vp *vp;		/* the VP running it */
	struct asx_vp *bound;		/* DIRECT: its own VP */
	int state;			/* enum tstate (atomic, informational) */
	bool dead;			/* ended: set before its last switch */
	int switching;			/* atomic: context not yet saved */

	struct asx_asc_thread *inbox_next;

	asx_asc_thread_fn fn;
	void *arg, *ret;
	struct asx_stack *stack;
	char name[24];
	bool detached;

	/* join */
	int jlock;
	int done;
	bool joined;
	struct asx_waiter *joiners;

	/* sleeping, thread timers */
	struct tnode sleep;
	struct asx_waiter *sleep_w;	/* interruptible sleep, under the timer lock */
	struct utimer utimers[ASX_ASC_THREAD_TIMERS];
	uint32_t utimer_pending;	/* atomic bit mask; ASX__UTIMER_SIGS: signals */
	uint32_t sig_pending;		/* atomic bit mask of ASC signals (signal.c) */
	struct asx__sigs *sigs;		/* its handlers, NULL until it sets one */

	/* migration target while switching away (thread_change) */
	struct asx_asc *migrate_to;

	/* lock-owner identity (wait.c, asx__uthread_id): 0 until first asked */
	int uid;

	/* fiber-local storage (fls.c): its chunks, each NULL until a value
	 * of one of its keys is first set */
	struct asx__fls fls;

	/* its ASC's list of every thread put there and not ended, under the
	 * ASC's lock (read by debuggers: tools/gdb/libasx-gdb.py) */
	struct asx_asc_thread *all_next, *all_prev;

	/* the Thread Manager's record of this thread (wait.c, asx__uthread_slot) */
	void *tm;
};

/* VP_SPARE: parked in the kernel's activation wait (activations only) */
enum vpstate { VP_RUNNING, VP_IDLE, VP_BLOCKED, VP_EXITED, VP_SPARE };

struct asx_vp {
	struct asx_ctx ctx;		/* the VP's own loop, on the pthread stack */
	struct asx_asc *asc;
	struct asx_asc_thread *cur;
	struct asx_asc_thread *bound;	/* DIRECT */
	/* picked by a thread switching out on this VP while another VP was
	 * still saving it: the VP's loop runs it (sched.c, asx__vp_handoff) */
	struct asx_asc_thread *handoff;
	pthread_t pth;
	pid_t tid;
	uint32_t wake;			/* futex: idle until 1 */
	int state;			/* enum vpstate, under the ASC lock */
	int in_sched;			/* signal-visible: inside the scheduler */
	/*
	 * Set (release) while the VP's loop waits (idle, parked in the
	 * kernel) or after it exited: it touches no scheduler state then,
	 * although in_sched stays set.  Read by asx__sa_wake_mode().
	 */
	int resting;
	int nolib;			/* signal-visible: second-level counter */
	int preempt_pending;
	int stop;
	int passivate;			/* asked to give its place back */
	bool spare;
	bool has_tick;
	timer_t tick;
	struct asx_vp *idle_next;
	struct asx_vp *next;		/* ASC's list */
	uint64_t nswitch;
	unsigned int nyield;
	uint64_t act_cpu;		/* CPU time at the last deferred check (ASC lock) */
	/* activations, under the ASC lock */
	int sa_id;			/* VP id in the ASC's group, -1: not a member */
	bool sa_blocked;		/* BLOCKED acted on, UNBLOCKED not yet */
	uint64_t sa_next;		/* its events numbered below this are stale */
};

/* The VP activation policy (the policy's activation op, asx/asc_policy.h)
 * is the single place that decides to wake, create or passivate VPs. */
#define VPEV_RUNNABLE	ASX_ASC_VPEV_RUNNABLE
#define VPEV_BLOCKED	ASX_ASC_VPEV_BLOCKED
#define VPEV_UNBLOCKED	ASX_ASC_VPEV_UNBLOCKED
#define VPEV_JOB	ASX_ASC_VPEV_JOB
#define VPEV_WINDOW	ASX_ASC_VPEV_WINDOW

#define ACT_LATER	ASX_ASC_ACT_LATER
#define ACT_DELAY_NS	200000ULL
/* the deferred check backs off to ACT_DELAY_NS << ACT_BACKOFF_MAX while idle */
#define ACT_BACKOFF_MAX	4

/*
 * A policy (asx/asc_policy.h) as the registry holds it: its ops (a
 * built-in one's, or a registered one's copy, zero-extended to this
 * library's struct).  An ASC caches the ops pointer; the runtime calls
 * them through POL_CALL() only.
 */
struct asx_asc_policy {
	const struct asx_asc_policy_ops *ops;
	char name[32];			/* ops->name's copy (gdb reads it) */
	bool dynamic;			/* registered: freed when unregistered */
	unsigned int users;		/* ASCs made with it (the registry's lock) */
	struct asx_asc_policy *next;	/* the registry's list */
	struct asx_asc_policy_ops copy;	/* a registered one's ops */
};

/* The built-in policies' ops (prio.c, edf.c, direct.c). */
extern const struct asx_asc_policy_ops asx__prio_ops, asx__edf_ops, asx__direct_ops,
	asx__stride_ops;

/* The op @op of @a's policy, with @a and its state first. */
#define POL_CALL(a, op, ...)	((a)->ops->op((a), (a)->pstate, ##__VA_ARGS__))
#define POL_HAS(a, op)		((a)->ops->op != NULL)
#define POL_PER_THREAD(a)	(((a)->ops->flags & ASX_ASC_POLICY_VP_PER_THREAD) != 0)

/* The activation advice of @a's policy on @ev (absent: the default). */
int asx__pol_activation(struct asx_asc *a, enum asx_asc_vp_event ev);

struct asx_asc {
	const struct asx_asc_policy_ops *ops;	/* pol->ops */
	void *pstate;
	const struct asx_asc_policy *pol;
	char name[32];
	int lock;			/* 0 free, 1 held, LOCK_BIASED: see below */
	/*
	 * The lock biased to the one VP of a one-VP ASC (sched.c, "the
	 * biased lock"): while @bias is set, @bias_vp runs its locked
	 * sections without touching @lock (which stays LOCK_BIASED),
	 * marking them in @bias_busy; anyone else taking @lock revokes it.
	 */
	struct asx_vp *bias_vp;		/* atomic; under the lock */
	int bias;			/* atomic */
	int bias_busy;			/* atomic, written by @bias_vp only */
	unsigned int bias_count;	/* locked sections before the next bias (lock) */
	unsigned int bias_backoff;	/* bias_count after a revocation (lock) */
	uint64_t bias_revokes;		/* revocations that waited on @bias_vp (lock) */
	struct asx_asc_thread *inbox;	/* atomic LIFO of threads made runnable outside */
	struct asx_vp *vps, *idle;
	unsigned int nvps, nidle, nblocked, nexited;
	unsigned int target, max_vps;
	unsigned int nthreads;
	enum asx_asc_semantic semantic;
	uint64_t timeslice;
	double miss_ratio_max, util_max;
	uint64_t spares_made;
	uint64_t ndispatch;		/* threads dispatched on the locked path */
	uint64_t act_mark;		/* ndispatch when the deferred check was armed */
	unsigned int act_backoff;	/* deferred check interval: ACT_DELAY_NS << it */
	uint64_t act_t;			/* when the VPs' CPU marks were taken */
	uint64_t win_t0, win_d0;	/* current dispatch window: start, ndispatch */
	uint64_t win_ns, win_disp;	/* the window just ended (VPEV_WINDOW) */
	struct tnode act;		/* deferred activation check (sentinel timer) */
	bool act_armed, dying;		/* under the lock */
	struct asx_asc *next;		/* global list */
	struct asx_asc_thread *threads;	/* every thread in it (all_next), under the lock */

	/* scheduler activations (NULL: the wrapper path); under the lock */
	struct asx_sa_group *sa;
	struct asx_vp **sa_map;		/* VP id -> VP */
	unsigned int sa_nmap;
	unsigned int sa_slots;		/* group places held: VPs made, not yet left */
	unsigned int nspare;		/* VPs parked in the kernel (VP_SPARE) */
	unsigned int spare_min;		/* the pool the ASC keeps */
	unsigned int sa_posted;		/* WAKE posts not yet taken by a spare */
	bool sa_refilling;		/* a REFILL post is out */
	uint64_t sa_upcalls, sa_takeovers, sa_nblocked, sa_lost, sa_retired;
	uint64_t sa_npreempted;		/* PREEMPTED events acted on */
};

/* Tests: @a's state and each VP's (current thread, hand-off), read without
 * the lock, for a watchdog that found the ASC stuck. */
void asx__asc_dump(struct asx_asc *a, FILE *f);
void asx__timer_dump(FILE *f);

/* Sentinel: the deferred activation check of @a; returns the delay (ns)
 * after which to check again, 0 for never. */
uint64_t asx__activation_check(struct asx_asc *a);

static inline unsigned int asc_running(const struct asx_asc *a)
{
	return a->nvps - a->nidle - a->nblocked - a->nexited - a->nspare;
}

/* ---------------------------------------------------------------- locks */

/* An ASC's lock word held by its biased owner (struct asx_asc's bias). */
#define LOCK_BIASED	2

/* @o: what the failed exchange found (LOCK_BIASED: revoke the bias). */
void asx__spin_lock_slow(int *l, int o);

static inline void spin_lock(int *l)
{
	int o = __atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE);

	if (likely(!o))
		return;
	asx__spin_lock_slow(l, o);
}

static inline void spin_unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------- runtime */

extern __thread struct asx_vp *asx__tls_vp TLS_IE;
void asx__preempt_check(struct asx_vp *vp);

/*
 * Second-level protection of the library's own critical sections (object
 * spinlocks, the timer and stack-pool locks) against preemption of the
 * user thread holding them: a preempted holder would leave the next
 * thread on its VP spinning or sleeping on a lock nobody can release.
 * No-ops on plain pthreads.
 */
static inline void np_enter(void)
{
	struct asx_vp *vp = asx__tls_vp;

	if (vp)
		__atomic_store_n(&vp->nolib, vp->nolib + 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* @take: honour a preemption that arrived meanwhile */
static inline void np_leave(bool take)
{
	struct asx_vp *vp = asx__tls_vp;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!vp)
		return;
	__atomic_store_n(&vp->nolib, vp->nolib - 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (take && !vp->nolib && __atomic_load_n(&vp->preempt_pending, __ATOMIC_RELAXED))
		asx__preempt_check(vp);
}

static inline void lock_np(int *l)
{
	np_enter();
	spin_lock(l);
}

static inline void unlock_np(int *l)
{
	spin_unlock(l);
	np_leave(true);
}

/*
 * Test builds (-DASX_SCHED_FUZZ): a random delay at a decision point of the
 * scheduler (sched.c); nothing otherwise.
 */
#ifdef ASX_SCHED_FUZZ
void asx__sched_fuzz(void);
#define SCHED_FUZZ() asx__sched_fuzz()
#else
#define SCHED_FUZZ() ((void)0)
#endif

/* Waking a thread: asx__wake() and asx__claim_wake() in sched_impl.h. */
/*
 * Block the calling user thread.  The caller has set self->switching
 * and published self (wait queue, timer) and released its own locks.
 */
void asx__block_self(struct asx_asc_thread *self);
/* The calling user thread or NULL. */
/* Run @self's fiber-local destructors and free its storage (fls.c); on
 * @self, before it ends. */
void asx__fls_exit(struct asx_asc_thread *self);

static inline struct asx_asc_thread *asx__self(void)
{
	struct asx_vp *vp = asx__tls_vp;

	return vp ? vp->cur : NULL;
}

/* Wait on @w (queued by the caller under *@lock, taken with lock_np())
 * until woken or @abstime; returns W_WOKEN or W_TIMEDOUT.  Releases
 * *@lock. */
int asx__wait(struct asx_waiter *w, int *lock, const struct timespec *abstime);

/*
 * Timers (timerheap.c, below the scheduler; the sentinel fires them).  An
 * ASC's creation starts the sentinel, so a timer is armed only with it
 * running.  The _locked calls are the sentinel's, under asx__timer_lock().
 */
void asx__timer_add(struct tnode *n);
bool asx__timer_del(struct tnode *n);	/* true if it was queued */
void asx__timer_lock(void);
void asx__timer_unlock(void);
int asx__timer_fd(void);		/* the timerfd (made once), or -errno */
void asx__timer_insert_locked(struct tnode *n);
bool asx__timer_remove_locked(struct tnode *n);	/* true if it was queued */
struct tnode *asx__timer_due_locked(uint64_t now);	/* the first due, or NULL */
void asx__timer_rearm_locked(bool fired);	/* @fired: the timerfd expired */
void asx__timer_fini(void);		/* at unload, after the sentinel stopped */
int asx__sentinel_start(void);
/* No ASC exists (the sentinel may stop at exit). */
bool asx__asc_none(void);
int asx__sentinel_epfd(void);
void asx__sentinel_sync(void);

/* Second-level flag leave: a preemption that arrived meanwhile is taken. */
void asx__preempt_check(struct asx_vp *vp);
/* Would a preemption tick at @pc wait (libasx, libc, ...)?  For the tests. */
bool asx__preempt_excluded(const void *pc);

/* VP activation: the single entry point (wrappers and upcalls alike). */
void asx__vp_blocked(void);
void asx__vp_unblocked(void);

#endif /* ASX_ASC_IMPL_H */
