// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sched.c - the ASC run-time: VPs, yield, blocking and waking, thread
 * lifecycle, ASC creation, the single-VP / multi-VP mode switch, the VP
 * activation policy hook, and preemption by per-VP timer signals.
 */
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <asx/sa.h>

#include "asc/asc_impl.h"
#include "core/futex.h"
#include "core/probes.h"
#include "sa/group.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DEFAULT_STACK (512u * 1024u)
#else
#define DEFAULT_STACK (128u * 1024u)
#endif

#define PREEMPT_SIG SIGURG

__thread struct asx_vp *asx__tls_vp TLS_IE;

static struct {
	int mode;			/* MODE_*, atomic */
	pthread_mutex_t cfg;		/* ASC list, VP creation, mode changes */
	struct asx_asc *ascs;
	int nvps;			/* VPs in the process (atomic) */
	struct asx_vp *single;		/* the VP when nvps == 1 */
	uint32_t ack;			/* futex: MODE_REQUEST acknowledged */
	int need_act;			/* an ASC may lack a running VP */
	pthread_once_t sig_once;
	/* executable ranges never preempted (libc, ld.so, libasx, runtimes) */
	struct { uintptr_t lo, hi; } nopreempt[16];
	int nnopreempt;
} S = {
	.cfg = PTHREAD_MUTEX_INITIALIZER,
	.sig_once = PTHREAD_ONCE_INIT,
};

static void *vp_main(void *arg);

/* Scheduler activations: what an ASX_SA_USER event asks of the spare it wakes. */
enum { SA_WAKE = 1, SA_REFILL = 2, SA_STOP = 3 };
#define SA_BATCH	16
#define SA_SPARES_DEF	2
/* a spare beyond the target and the pool leaves after this long parked */
#define SA_RETIRE_NS	1000000000ULL

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

/* Work the activation policy left for after the ASC lock is released. */
struct vp_todo {
	bool spawn;		/* make a VP */
	bool pool;		/* make a VP that starts parked in the kernel */
	bool refill;		/* an SA_REFILL post: a parked spare makes one */
	unsigned int post;	/* SA_WAKE posts for spares parked in the kernel */
};

/* ---------------------------------------------------------------- fuzzing */

#ifdef ASX_SCHED_FUZZ
/*
 * Test builds only (-DASX_SCHED_FUZZ, Documentation/asc.rst): at the
 * scheduler's own decision points, with probability rate/1000, give the
 * CPU away (sched_yield) or spin a while, to widen the windows between
 * publishing a thread and switching away from it.  The rate comes from
 * ASX_SCHED_FUZZ (per mille, default 20) or asx__sched_fuzz_seed().
 */
static struct {
	uint64_t seed;
	int rate;		/* -1: not read from the environment yet */
} F = { 0x9e3779b97f4a7c15ULL, -1 };
static __thread uint64_t fuzz_rng TLS_IE;

void asx__sched_fuzz_seed(uint64_t seed, unsigned int permille);
void asx__sched_fuzz_seed(uint64_t seed, unsigned int permille)
{
	__atomic_store_n(&F.seed, seed | 1, __ATOMIC_RELAXED);
	__atomic_store_n(&F.rate, (int)(permille > 1000 ? 1000 : permille), __ATOMIC_RELAXED);
}

static uint64_t fuzz_next(void)
{
	if (!fuzz_rng)
		fuzz_rng = (__atomic_load_n(&F.seed, __ATOMIC_RELAXED) ^
			    ((uint64_t)syscall(SYS_gettid) * 0xbf58476d1ce4e5b9ULL)) | 1;
	fuzz_rng ^= fuzz_rng << 13;
	fuzz_rng ^= fuzz_rng >> 7;
	fuzz_rng ^= fuzz_rng << 17;
	return fuzz_rng;
}

void asx__sched_fuzz(void)
{
	int rate = __atomic_load_n(&F.rate, __ATOMIC_RELAXED);
	uint64_t r;

	if (rate < 0) {
		const char *e = getenv("ASX_SCHED_FUZZ");

		rate = e && *e ? atoi(e) : 20;
		__atomic_store_n(&F.rate, rate, __ATOMIC_RELAXED);
	}
	r = fuzz_next();
	if ((int)(r % 1000) >= rate)
		return;
	if (r & (1ULL << 20)) {
		sched_yield();
	} else {
		for (unsigned int i = (unsigned int)(r >> 32) % 2000; i; i--)
			asx_cpu_relax();
	}
}
#endif

/* ---------------------------------------------------------------- locks */

void asx__spin_lock_slow(int *l)
{
	unsigned int spins = 0;

	do {
		while (__atomic_load_n(l, __ATOMIC_RELAXED)) {
			if (++spins < 128)
				asx_cpu_relax();
			else
				sched_yield();	/* the holder may be preempted by the OS */
		}
	} while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE));
}

static inline int mode_get(void)
{
	return __atomic_load_n(&S.mode, __ATOMIC_ACQUIRE);
}

bool asx_asc_single_vp_mode(void)
{
	return mode_get() != MODE_MULTI;
}

/*
 * At a scheduling point outside any lock-free operation: take a pending
 * request for the locked path.  Returns true when operations must lock.
 */
static bool mode_locked(void)
{
	int m = mode_get();

	if (likely(m != MODE_REQUEST))
		return m == MODE_MULTI;
	__atomic_store_n(&S.mode, MODE_MULTI, __ATOMIC_RELEASE);
	__atomic_store_n(&S.ack, 1, __ATOMIC_RELEASE);
	asx_futex_wake(&S.ack, INT_MAX);
	return true;
}

/* ---------------------------------------------------------------- inbox */

static void inbox_push(struct asx_asc *a, struct asx_thread *t)
{
	struct asx_thread *h = __atomic_load_n(&a->inbox, __ATOMIC_RELAXED);

	do {
		t->inbox_next = h;
	} while (!__atomic_compare_exchange_n(&a->inbox, &h, t, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

static void inbox_activate(struct asx_asc *a);

/* Move the inbox to the run queue (oldest first).  Returns how many.
 * Lock-free on the single VP; under the lock otherwise. */
static unsigned int inbox_drain(struct asx_asc *a)
{
	struct asx_thread *t, *rev = NULL, *n;
	unsigned int k = 0;

	if (likely(!__atomic_load_n(&a->inbox, __ATOMIC_RELAXED)))
		return 0;
	t = __atomic_exchange_n(&a->inbox, NULL, __ATOMIC_ACQUIRE);
	for (; t; t = n) {
		n = t->inbox_next;
		t->inbox_next = rev;
		rev = t;
	}
	for (t = rev; t; t = n) {
		n = t->inbox_next;
		__atomic_store_n(&t->state, T_READY, __ATOMIC_RELAXED);
		a->pol->enqueue(a, t);
		k++;
	}
	if (mode_get() == MODE_MULTI && !a->pol->vp_per_thread)
		inbox_activate(a);
	return k;
}

/* ---------------------------------------------------------------- VPs */

static void vp_wake(struct asx_vp *vp)
{
	__atomic_store_n(&vp->wake, 1, __ATOMIC_RELEASE);
	asx_futex_wake(&vp->wake, 1);
}

/* Under @a's lock: take an idle VP (@bound, a DIRECT thread's VP, if not NULL). */
static struct asx_vp *idle_take(struct asx_asc *a, struct asx_vp *bound)
{
	struct asx_vp **pp, *v;

	for (pp = &a->idle; (v = *pp); pp = &v->idle_next) {
		if (bound && v != bound)
			continue;
		*pp = v->idle_next;
		a->nidle--;
		v->state = VP_RUNNING;
		return v;
	}
	return NULL;
}

static int vp_spawn(struct asx_asc *a, struct asx_thread *bound, bool spare, bool park);

/*
 * Carry out the activation policy's answer for @ev (under @a's lock);
 * VPs to wake are returned in @wk (up to @max), the rest to do in *@td.
 */
static bool vps_had_cpu(struct asx_asc *a, uint64_t now);

static int activate_n(struct asx_asc *a, int n, struct asx_thread *t,
		      struct asx_vp **wk, int max, struct vp_todo *td)
{
	int k = 0;

	if (n == ACT_LATER) {
		if (!a->act_armed && (a->nidle || a->nspare) && !a->dying) {
			a->act_armed = true;
			a->act_mark = a->ndispatch;
			a->act_backoff = 0;
			vps_had_cpu(a, asx_now_ns());	/* CPU marks */
			a->act.when = asx_now_ns() + ACT_DELAY_NS;
			asx__timer_add(&a->act);	/* lock order: ASC, then timers */
		}
		n = 0;
	}

	if (t && t->bound) {
		/* DIRECT: the thread's own VP, whatever the count says */
		struct asx_vp *v = idle_take(a, t->bound);

		if (v)
			wk[k++] = v;
		return k;
	}
	while (n > 0 && k < max) {
		struct asx_vp *v = idle_take(a, NULL);

		if (!v)
			break;
		wk[k++] = v;
		n--;
	}
	/* spares parked in the kernel: a WAKE post each */
	for (; n > 0 && sa_claim_spare(a); n--) {
		if (td)
			td->post++;
		else
			asx_sa_post(a->sa, SA_WAKE);	/* under the lock: a rare path */
	}
	if (n > 0 && td && vp_room(a))
		td->spawn = true;	/* one at a time; the spare re-evaluates */
	else if (n > 0)
		__atomic_store_n(&S.need_act, 1, __ATOMIC_RELAXED);
	return k;
}

static void vp_todo_run(struct asx_asc *a, struct vp_todo *td)
{
	for (; td->post; td->post--)
		asx_sa_post(a->sa, SA_WAKE);
	if (td->refill)
		asx_sa_post(a->sa, SA_REFILL);
	if (td->spawn)
		vp_spawn(a, NULL, true, false);
	if (td->pool)
		vp_spawn(a, NULL, true, true);
	td->spawn = td->pool = td->refill = false;
}

static int activate_locked(struct asx_asc *a, enum vp_event ev, struct asx_thread *t,
			   struct asx_vp **wk, int max, struct vp_todo *td)
{
	return activate_n(a, a->pol->activation(a, ev), t, wk, max, td);
}

static void wake_list(struct asx_vp **wk, int k)
{
	for (int i = 0; i < k; i++)
		vp_wake(wk[i]);
}

/* Under the lock, after draining the inbox: idle VPs the policy wants. */
static void inbox_activate(struct asx_asc *a)
{
	struct asx_vp *wk[2];
	int k = activate_locked(a, VPEV_RUNNABLE, NULL, wk, 2, NULL);

	wake_list(wk, k);	/* a futex wake under the spinlock: rare path */
}

/*
 * Activations, under @a's lock: @vp runs again.  A spare calls it for
 * @vp's UNBLOCKED; @vp itself at a scheduling point (sa_sync) if that
 * comes first: it runs scheduler code, so it is not blocked, whatever the
 * events not yet read say.  An UNBLOCKED read later finds it running and
 * does nothing; a BLOCKED read later is followed by its own UNBLOCKED.
 */
static __attribute__((noinline)) void sa_unblocked_locked(struct asx_asc *a, struct asx_vp *vp)
{
	vp->sa_blocked = false;
	vp->state = VP_RUNNING;
	a->nblocked--;
	/* the woken VP runs its thread to its next scheduling point, then
	 * gives its place back if the ASC has more running than it wants */
	if (a->pol->activation(a, VPEV_UNBLOCKED) < 0)
		__atomic_store_n(&vp->passivate, 1, __ATOMIC_RELAXED);	/* maybe another VP's */
	ASX_PROBE2(asc_vp_unblocked, a, vp);
}

static inline void sa_sync(struct asx_asc *a, struct asx_vp *vp)
{
	if (unlikely(vp->sa_blocked))
		sa_unblocked_locked(a, vp);
}

/* ---------------------------------------------------------------- waking */

void asx__wake(struct asx_thread *t)
{
	struct asx_vp *vp = asx__tls_vp, *wk[2], *bound = t->bound;
	struct asx_asc *a = t->asc;
	struct vp_todo td = { 0 };
	int k;

	if (vp && mode_get() == MODE_SINGLE && !t->bound) {
		/* the only VP: it is us */
		__atomic_store_n(&t->state, T_READY, __ATOMIC_RELAXED);
		a->pol->enqueue(a, t);
		return;
	}
	if (vp && mode_get() == MODE_MULTI) {
		lock_np(&a->lock);
		__atomic_store_n(&t->state, T_READY, __ATOMIC_RELAXED);
		a->pol->enqueue(a, t);
		k = activate_locked(a, VPEV_RUNNABLE, t, wk, 2, &td);
		unlock_np(&a->lock);
		SCHED_FUZZ();
		wake_list(wk, k);
		vp_todo_run(a, &td);
		return;
	}
	/*
	 * A pthread outside the scheduler (or the single VP before its ack):
	 * the run queue is not ours to touch, nor the policy state read with
	 * it.  Wake the thread's own VP (DIRECT), or an idle VP when fewer
	 * than the concurrency level run; the VP that drains the inbox asks
	 * the activation policy for more.  With every VP blocked in a call,
	 * make a spare.
	 */
	inbox_push(a, t);
	/* @t may run, end and be freed from here on: not touched again */
	SCHED_FUZZ();
	lock_np(&a->lock);
	k = 0;
	if (bound || asc_running(a) < a->target) {
		struct asx_vp *v = idle_take(a, bound);

		if (v) {
			wk[k++] = v;
		} else if (!bound && sa_claim_spare(a)) {
			td.post = 1;
		} else if (!bound && asc_running(a) == 0 && a->nblocked && vp_room(a) &&
			   mode_get() == MODE_MULTI) {
			td.spawn = true;
		}
	}
	unlock_np(&a->lock);
	wake_list(wk, k);
	vp_todo_run(a, &td);
}

bool asx__claim_wake(struct asx_waiter *w, uint32_t how)
{
	uint32_t exp = W_WAITING;
	struct asx_thread *t = w->t;

	if (!__atomic_compare_exchange_n(&w->state, &exp, how, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return false;
	if (t)
		asx__wake(t);
	else
		asx_futex_wake(&w->state, 1);
	return true;
}

/* ---------------------------------------------------------------- switching */

static void reap(struct asx_thread *t);

static inline void finish_switch(struct asx_thread *prev)
{
	if (!prev)
		return;
	if (unlikely(prev->dead)) {
		reap(prev);
		return;
	}
	SCHED_FUZZ();
	__atomic_store_n(&prev->switching, 0, __ATOMIC_RELEASE);
}

static inline bool ctx_saved(struct asx_thread *t)
{
	return !__atomic_load_n(&t->switching, __ATOMIC_ACQUIRE);
}

/*
 * Wait until @t's context is saved.  Only a VP's own loop waits for as
 * long as it takes: it holds no thread whose switch-out another VP may be
 * waiting for.  A thread switching out must not wait there (two VPs, each
 * switching out the thread the other picked, would wait for each other),
 * so it gives @next to its VP's loop instead (vp_handoff()).
 */
static void wait_saved(struct asx_thread *t)
{
	unsigned int spins = 0;

	while (unlikely(!ctx_saved(t))) {
		if (++spins < 256)
			asx_cpu_relax();
		else
			sched_yield();	/* the VP saving it is off the CPU */
	}
}

/*
 * @next was picked while another VP is still switching it out: spin a
 * little (the window is a few instructions long), then leave it to the
 * VP's loop, which runs it once our own context is saved.  Returns @next
 * to switch to it directly, NULL to switch to the VP's loop.
 */
static __attribute__((noinline)) struct asx_thread *vp_handoff(struct asx_vp *vp,
							       struct asx_thread *next)
{
	for (unsigned int i = 0; i < 64; i++) {
		asx_cpu_relax();
		if (ctx_saved(next))
			return next;
	}
	vp->handoff = next;
	return NULL;
}

static void run_utimers(struct asx_thread *self);

/* After returning to a thread's own code from the scheduler. */
static inline void leave_sched(struct asx_thread *self)
{
	struct asx_vp *vp = self->vp;

	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&vp->in_sched, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (unlikely(__atomic_load_n(&self->utimer_pending, __ATOMIC_RELAXED)))
		run_utimers(self);
	if (unlikely(__atomic_load_n(&vp->preempt_pending, __ATOMIC_RELAXED)))
		asx__preempt_check(vp);
}

static inline void enter_sched(struct asx_vp *vp)
{
	__atomic_store_n(&vp->in_sched, 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Switch from @self to @next (NULL: the VP's loop) on @vp. */
static inline void switch_to(struct asx_vp *vp, struct asx_thread *self,
			     struct asx_thread *next)
{
	struct asx_thread *prev;

	SCHED_FUZZ();
	vp->nswitch++;
	if (unlikely(next && !ctx_saved(next)))
		next = vp_handoff(vp, next);
	if (next) {
		vp->cur = next;
		next->vp = vp;
		__atomic_store_n(&next->state, T_RUNNING, __ATOMIC_RELAXED);
		prev = asx__ctx_switch(&self->ctx, &next->ctx, self);
	} else {
		vp->cur = NULL;
		prev = asx__ctx_switch(&self->ctx, &vp->ctx, self);
	}
	finish_switch(prev);
}

static void sweep_activation(void);

/* CPUs this process may run on (cached). */
static unsigned int ncpus(void)
{
	static unsigned int n;

	if (unlikely(!__atomic_load_n(&n, __ATOMIC_RELAXED))) {
		cpu_set_t set;
		int c = 1;

		if (!sched_getaffinity(0, sizeof(set), &set))
			c = CPU_COUNT(&set);
		__atomic_store_n(&n, c > 0 ? (unsigned int)c : 1u, __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&n, __ATOMIC_RELAXED);
}

/*
 * Under @a's lock, every 64 dispatches on the locked path: if the current
 * dispatch window is ACT_DELAY_NS old, close it and ask the activation
 * policy (VPEV_WINDOW) whether a VP is surplus.  True: the caller's VP
 * gives its place back.
 */
static __attribute__((noinline)) bool window_end(struct asx_asc *a)
{
	uint64_t now = asx_now_ns();
	int n;

	if (now - a->win_t0 < ACT_DELAY_NS)
		return false;
	a->win_ns = now - a->win_t0;
	a->win_disp = a->ndispatch - a->win_d0;
	a->win_t0 = now;
	a->win_d0 = a->ndispatch;
	if (asc_running(a) < 2)
		return false;
	n = a->pol->activation(a, VPEV_WINDOW);
	return n < 0;
}

static __attribute__((noinline)) void yield_slow(struct asx_vp *vp, struct asx_thread *self)
{
	struct asx_asc *a = self->asc;
	struct asx_thread *next;

	if (!mode_locked()) {
		inbox_drain(a);
		next = a->pol->schedule(a, vp, self);
	} else {
		if (__atomic_load_n(&S.need_act, __ATOMIC_RELAXED))
			sweep_activation();
		__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
		spin_lock(&a->lock);
		sa_sync(a, vp);
		inbox_drain(a);
		__atomic_store_n(&self->state, T_READY, __ATOMIC_RELAXED);
		if (unlikely(vp->passivate)) {
			/* give the VP back: self is queued for the others */
			a->pol->enqueue(a, self);
			next = NULL;
		} else {
			next = a->pol->schedule(a, vp, self);
		}
		spin_unlock(&a->lock);
		if (next == self) {
			__atomic_store_n(&self->state, T_RUNNING, __ATOMIC_RELAXED);
			__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
			return;
		}
	}
	if (next != self)
		switch_to(vp, self, next);
}

void asx_thread_yield(void)
{
	struct asx_vp *vp = asx__tls_vp;
	struct asx_thread *self, *next;
	struct asx_asc *a;

	if (unlikely(!vp || !vp->cur)) {
		sched_yield();
		return;
	}
	self = vp->cur;
	a = self->asc;
	enter_sched(vp);
	if (unlikely(a->pol->vp_per_thread)) {
		/* DIRECT: the thread owns its VP; yield it to the OS */
		mode_locked();
		sched_yield();
	} else if (likely(mode_get() == MODE_SINGLE &&
			  !__atomic_load_n(&a->inbox, __ATOMIC_RELAXED))) {
		/* the paper's single-VP fast path: no lock, no atomic RMW */
		next = a->pol->schedule(a, vp, self);
		if (next != self) {
			vp->cur = next;
			next->vp = vp;
			struct asx_thread *prev = asx__ctx_switch(&self->ctx, &next->ctx, self);

			finish_switch(prev);
		}
	} else if (likely(mode_get() == MODE_MULTI &&
			  !__atomic_load_n(&vp->passivate, __ATOMIC_RELAXED) &&
			  !__atomic_load_n(&S.need_act, __ATOMIC_RELAXED))) {
		/* the locked path: one spinlock round trip */
		if (!a->pol->nrunnable(a) && !__atomic_load_n(&a->inbox, __ATOMIC_RELAXED)) {
			/* nothing else to run here: let the OS run other VPs */
			sched_yield();
			leave_sched(self);
			return;
		}
		bool crowded;

		__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
		spin_lock(&a->lock);
		sa_sync(a, vp);
		if (unlikely(__atomic_load_n(&a->inbox, __ATOMIC_RELAXED)))
			inbox_drain(a);
		if (unlikely((++a->ndispatch & 63) == 0) && window_end(a)) {
			/* a surplus VP: give it back, self is queued for the others */
			vp->passivate = 1;
			__atomic_store_n(&self->state, T_READY, __ATOMIC_RELAXED);
			a->pol->enqueue(a, self);
			next = NULL;
		} else {
			next = a->pol->schedule(a, vp, self);
		}
		crowded = asc_running(a) > ncpus();
		spin_unlock(&a->lock);
		if (next == self)
			__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
		else
			switch_to(vp, self, next);
		/*
		 * With more running VPs than CPUs, a VP whose thread others
		 * wait for may be off the CPU while ours spin through
		 * user-level switches for a whole OS timeslice: every few
		 * yields let the OS run the other VPs.
		 */
		if (unlikely(crowded) && (++self->vp->nyield & 3) == 0)
			sched_yield();
	} else {
		yield_slow(vp, self);
	}
	leave_sched(self);
}

void asx__block_self(struct asx_thread *self)
{
	struct asx_vp *vp = self->vp;
	struct asx_asc *a = self->asc;
	struct asx_thread *next;

	enter_sched(vp);
	__atomic_store_n(&self->state, T_BLOCKED, __ATOMIC_RELAXED);
	SCHED_FUZZ();
	if (!mode_locked()) {
		inbox_drain(a);
		next = a->pol->schedule(a, vp, NULL);
	} else {
		spin_lock(&a->lock);
		sa_sync(a, vp);
		inbox_drain(a);
		next = vp->passivate ? NULL : a->pol->schedule(a, vp, NULL);
		a->ndispatch++;
		spin_unlock(&a->lock);
	}
	if (next == self) {
		/* woken before we got away */
		__atomic_store_n(&self->state, T_RUNNING, __ATOMIC_RELAXED);
		__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
	} else {
		switch_to(vp, self, next);
	}
	leave_sched(self);
}

/* ---------------------------------------------------------------- waiting */

int asx__wait(struct asx_waiter *w, int *lock, const struct timespec *abstime)
{
	struct asx_thread *self = w->t;

	if (!self) {
		/* a plain pthread */
		unlock_np(lock);
		for (;;) {
			uint32_t s = __atomic_load_n(&w->state, __ATOMIC_ACQUIRE);
			int r;

			if (s != W_WAITING)
				return (int)s;
			r = asx_futex_wait(&w->state, W_WAITING, abstime);
			if (r == -ETIMEDOUT) {
				spin_lock(lock);
				asx__claim_wake(w, W_TIMEDOUT);	/* loses if woken meanwhile */
				spin_unlock(lock);
			}
		}
	}
	/* set while we still hold the lock the waker needs */
	__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
	spin_unlock(lock);
	np_leave(false);	/* we are queued: no yield now, blocking switches anyway */
	if (abstime) {
		self->sleep.kind = TN_WAIT;
		self->sleep.t = self;
		self->sleep.w = w;
		self->sleep.when = asx_timespec_ns(abstime);
		asx__timer_add(&self->sleep);
	}
	asx__block_self(self);
	if (abstime)
		asx__timer_del(&self->sleep);
	return (int)__atomic_load_n(&w->state, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------- threads */

static void thread_main(void *xfer, void *param);

static int attr_copy(const void *in, size_t sz, void *o, size_t osz);

int asx_thread_create(struct asx_thread **out, asx_thread_fn fn, void *arg,
		      const struct asx_thread_attr *uattr)
{
	const struct asx_thread_attr *attr = NULL;
	struct asx_thread_attr at;
	struct asx_thread *t;
	size_t ss = DEFAULT_STACK;

	if (!out || !fn)
		return -EINVAL;
	if (uattr) {
		int r = attr_copy(uattr, uattr->sz, &at, sizeof(at));

		if (r)
			return r;
		attr = &at;
	}
	if (attr && attr->stack_size)
		ss = attr->stack_size;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->stack = asx__stack_get(ss + 4096);	/* the descriptor's page */
	if (!t->stack) {
		free(t);
		return -ENOMEM;
	}
	asx__ctx_make(&t->ctx, t->stack->lo, t->stack->size, thread_main, t);
	t->fn = fn;
	t->arg = arg;
	__atomic_store_n(&t->state, T_NEW, __ATOMIC_RELAXED);
	t->sleep.idx = -1;
	for (int i = 0; i < ASX_THREAD_TIMERS; i++)
		t->utimers[i].node.idx = -1;
	if (attr && attr->name)
		snprintf(t->name, sizeof(t->name), "%s", attr->name);
	t->detached = attr && attr->detached;
	*out = t;
	return 0;
}

void asx_thread_release(struct asx_thread *t)
{
	if (!t || __atomic_load_n(&t->state, __ATOMIC_RELAXED) != T_NEW)
		return;
	asx__ctx_release(&t->ctx);
	asx__stack_put(t->stack);
	free(t);
}

static int check_qos(const struct asx_asc *a, const struct asx_qos *q)
{
	if (!q)
		return a->pol->schema == ASX_QOS_DIRECT ? 0 : -EINVAL;
	if (q->schema != a->pol->schema || q->size < sizeof(*q))
		return -EINVAL;
	return 0;
}

int asx_thread_put(struct asx_asc *a, struct asx_thread *t, const struct asx_qos *qos)
{
	int r;

	if (!a || !t || __atomic_load_n(&t->state, __ATOMIC_RELAXED) != T_NEW)
		return -EINVAL;
	r = check_qos(a, qos);
	if (r)
		return r;
	lock_np(&a->lock);
	r = a->pol->admit(a, t, qos, false);
	if (!r) {
		a->nthreads++;
		t->asc = a;
	}
	unlock_np(&a->lock);
	if (r)
		return r;
	ASX_PROBE2(asc_thread_put, a, t);
	if (a->pol->vp_per_thread) {
		r = vp_spawn(a, t, false, false);
		if (r) {
			lock_np(&a->lock);
			a->pol->leave(a, t);
			a->nthreads--;
			unlock_np(&a->lock);
			t->asc = NULL;
			return r;
		}
	}
	__atomic_store_n(&t->state, T_BLOCKED, __ATOMIC_RELAXED);
	asx__wake(t);
	return 0;
}

int asx_thread_spawn(struct asx_asc *a, const struct asx_qos *qos, asx_thread_fn fn, void *arg,
		     const struct asx_thread_attr *attr, struct asx_thread **out)
{
	struct asx_thread *t;
	int r = asx_thread_create(&t, fn, arg, attr);
	bool det;

	if (r)
		return r;
	det = t->detached;	/* read through the size check */
	if (out && !det)
		*out = t;
	r = asx_thread_put(a, t, qos);
	if (r) {
		asx_thread_release(t);
		if (out && !det)
			*out = NULL;
	}
	return r;
}

struct asx_thread *asx_thread_self(void)
{
	return asx__self();
}

struct asx_asc *asx_thread_asc(const struct asx_thread *t)
{
	return t ? t->asc : NULL;
}

const char *asx_thread_name(const struct asx_thread *t)
{
	return t ? t->name : NULL;
}

static void thread_end(struct asx_thread *self) __attribute__((noreturn));

static void thread_main(void *xfer, void *param)
{
	struct asx_thread *self = param;

	asx__ctx_started();
	finish_switch(xfer);
	leave_sched(self);
	for (;;) {
		self->ret = self->fn(self->arg);
		if (!self->asc->pol->job_done)
			break;
		/* periodic: wait for the next release, then run the entry again */
		struct asx_asc *a = self->asc;
		struct asx_vp *wk[2];
		uint64_t rel;
		int k, n;

		enter_sched(self->vp);
		spin_lock(&a->lock);
		rel = a->pol->job_done(a, self);
		n = a->pol->activation(a, VPEV_JOB);
		k = n > 0 ? activate_n(a, n, NULL, wk, 2, NULL) : 0;
		if (n < 0)
			self->vp->passivate = 1;
		spin_unlock(&a->lock);
		wake_list(wk, k);
		leave_sched(self);
		if (!rel)
			break;
		if (rel > asx_now_ns()) {
			struct timespec ts = { (time_t)(rel / ASX_NSEC_PER_SEC),
					       (long)(rel % ASX_NSEC_PER_SEC) };

			while (asx_thread_sleep_until(&ts) == -EINTR)
				;
		}
	}
	thread_end(self);
}

void asx_thread_exit(void *ret)
{
	struct asx_thread *self = asx__self();

	if (!self)
		pthread_exit(ret);
	self->ret = ret;
	thread_end(self);
}

static void thread_end(struct asx_thread *self)
{
	struct asx_asc *a = self->asc;
	struct asx_vp *vp = self->vp;
	struct asx_thread *next = NULL;
	bool locked;

	for (int i = 0; i < ASX_THREAD_TIMERS; i++)
		asx__timer_del(&self->utimers[i].node);
	enter_sched(vp);
	spin_lock(&a->lock);
	a->pol->leave(a, self);
	a->nthreads--;
	spin_unlock(&a->lock);
	ASX_PROBE2(asc_thread_end, a, self);
	__atomic_store_n(&self->state, T_DEAD, __ATOMIC_RELAXED);
	self->dead = true;	/* read by finish_switch on this VP only */
	SCHED_FUZZ();
	locked = mode_locked();
	if (locked)
		spin_lock(&a->lock);
	inbox_drain(a);
	if (!vp->passivate && !vp->bound)
		next = a->pol->schedule(a, vp, NULL);
	if (locked)
		spin_unlock(&a->lock);
	vp->nswitch++;
	if (next && !ctx_saved(next))
		next = vp_handoff(vp, next);
	if (next) {
		vp->cur = next;
		next->vp = vp;
		__atomic_store_n(&next->state, T_RUNNING, __ATOMIC_RELAXED);
		asx__ctx_exit_to(&self->ctx, &next->ctx, self);
	}
	vp->cur = NULL;
	asx__ctx_exit_to(&self->ctx, &vp->ctx, self);
}

static void thread_free(struct asx_thread *t)
{
	free(t);
}

/* A dead thread's context is no longer in use: release it, tell joiners. */
static void reap(struct asx_thread *t)
{
	struct asx_waiter *w, *n;
	bool det;

	asx__ctx_release(&t->ctx);
	asx__stack_put(t->stack);
	t->stack = NULL;
	if (t->bound) {
		/* DIRECT: the VP ends with its thread (destroy may set it too) */
		__atomic_store_n(&t->bound->stop, 1, __ATOMIC_RELEASE);
		t->bound->bound = NULL;
	}
	spin_lock(&t->jlock);
	det = t->detached;
	w = t->joiners;
	t->joiners = NULL;
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	spin_unlock(&t->jlock);
	if (det) {
		thread_free(t);
		return;
	}
	for (; w; w = n) {
		n = w->next;
		asx__claim_wake(w, W_WOKEN);
	}
}

int asx_thread_join(struct asx_thread *t, void **ret)
{
	struct asx_waiter w = { .t = asx__self() };

	if (!t || t == w.t)
		return -EINVAL;
	lock_np(&t->jlock);
	if (t->detached || t->joined) {
		unlock_np(&t->jlock);
		return -EINVAL;
	}
	t->joined = true;
	if (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
		w.next = t->joiners;
		t->joiners = &w;
		asx__wait(&w, &t->jlock, NULL);
	} else {
		unlock_np(&t->jlock);
	}
	/* reap() released jlock after setting done; take it once more so its
	 * last touch of @t is ordered before the free */
	lock_np(&t->jlock);
	unlock_np(&t->jlock);
	if (ret)
		*ret = t->ret;
	thread_free(t);
	return 0;
}

/* ---------------------------------------------------------------- thread_change */

int asx_thread_change(struct asx_asc *to, const struct asx_qos *qos)
{
	struct asx_thread *self = asx__self();
	struct asx_asc *from;
	int r;

	if (!self)
		return -EPERM;
	from = self->asc;
	if (!to)
		to = from;
	r = check_qos(to, qos);
	if (r)
		return r;
	if (to == from) {
		lock_np(&from->lock);
		r = from->pol->admit(from, self, qos, true);
		unlock_np(&from->lock);
		if (!r)
			asx_thread_yield();	/* the new QoS takes effect */
		return r;
	}
	if (to->pol->vp_per_thread || from->pol->vp_per_thread)
		return -EOPNOTSUPP;
	lock_np(&to->lock);
	r = to->pol->admit(to, self, qos, false);
	if (!r)
		to->nthreads++;
	unlock_np(&to->lock);
	if (r)
		return r;
	lock_np(&from->lock);
	from->pol->leave(from, self);
	from->nthreads--;
	unlock_np(&from->lock);
	ASX_PROBE3(asc_migrate, from, to, self);
	/* leave this VP and become runnable in @to: like blocking, and the
	 * wake-up is ours to give */
	__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
	struct asx_vp *vp = self->vp;
	struct asx_thread *next;
	bool locked;

	enter_sched(vp);
	__atomic_store_n(&self->state, T_BLOCKED, __ATOMIC_RELAXED);
	locked = mode_locked();
	if (locked)
		spin_lock(&from->lock);
	inbox_drain(from);
	next = vp->passivate ? NULL : from->pol->schedule(from, vp, NULL);
	if (locked)
		spin_unlock(&from->lock);
	self->asc = to;
	SCHED_FUZZ();
	asx__wake(self);	/* queued in @to; runs once our context is saved */
	switch_to(vp, self, next);
	leave_sched(self);
	return 0;
}

/* ---------------------------------------------------------------- VP loop */

static void vp_idle(struct asx_asc *a, struct asx_vp *vp)
{
	/* under a->lock */
	vp->state = VP_IDLE;
	vp->act_cpu = 0;	/* its CPU mark is stale once it runs again */
	vp->passivate = 0;
	vp->idle_next = a->idle;
	a->idle = vp;
	a->nidle++;
	__atomic_store_n(&vp->wake, 0, __ATOMIC_RELAXED);
	spin_unlock(&a->lock);
	ASX_PROBE1(asc_vp_idle, vp);
	while (!__atomic_load_n(&vp->wake, __ATOMIC_ACQUIRE))
		asx_futex_wait(&vp->wake, 0, NULL);
	ASX_PROBE1(asc_vp_active, vp);
}

/* ---------------------------------------------------------------- activations */

/* The calling VP joins its ASC's activation group (Documentation/sa.rst). */
static void sa_join_self(struct asx_asc *a, struct asx_vp *vp)
{
	int id = asx_sa_join(a->sa);

	/* vp_spawn() held a place for it: only a failing module (-ENOMEM)
	 * leaves it outside, to run unreported as on the wrapper path */
	spin_lock(&a->lock);
	if (id >= 0 && (unsigned int)id < a->sa_nmap) {
		vp->sa_id = id;
		vp->sa_next = 0;
		a->sa_map[id] = vp;
	}
	spin_unlock(&a->lock);
}

static void sa_leave_self(struct asx_asc *a, struct asx_vp *vp)
{
	spin_lock(&a->lock);
	a->sa_map[vp->sa_id] = NULL;
	vp->sa_id = -1;
	spin_unlock(&a->lock);
	asx_sa_leave(a->sa);
}

/* Under the lock: spare @self becomes a running VP. */
static void sa_take_over(struct asx_asc *a, struct asx_vp *self, struct vp_todo *td)
{
	self->state = VP_RUNNING;
	a->nspare--;
	a->sa_takeovers++;
	if (a->nspare >= a->spare_min)
		return;
	/* keep the pool: a parked spare makes the new one, off this path */
	if (a->nspare && !a->sa_refilling) {
		a->sa_refilling = true;
		td->refill = true;
	} else if (!a->nspare && vp_room(a)) {
		td->pool = true;	/* none left to do it */
	}
}

/* Under the lock: can a VP more run a thread? */
static bool sa_wants_vp(struct asx_asc *a)
{
	return a->pol->nrunnable(a) && asc_running(a) < a->target && !a->dying;
}

/*
 * Under the lock: spare @self acts on @n events.  True when it is to run
 * threads (it took over for a blocked VP, or was woken for work).
 */
static bool sa_events(struct asx_asc *a, struct asx_vp *self, const struct asx_sa_event *ev,
		      int n, struct asx_vp **wk, int *k, int max, struct vp_todo *td)
{
	bool run = false;

	for (int i = 0; i < n; i++) {
		const struct asx_sa_event *e = &ev[i];
		struct asx_vp *v = NULL;
		int want;

		if (e->type != ASX_SA_USER && e->vp < a->sa_nmap) {
			v = a->sa_map[e->vp];
			/*
			 * A VP id is reused after a leave: match the thread.
			 * Two spares may take consecutive batches and act in
			 * either order: per VP, act in sequence order only,
			 * so a BLOCKED never lands after its own UNBLOCKED.
			 */
			if (v && ((uint32_t)v->tid != e->tid || e->seq < v->sa_next))
				v = NULL;
			if (v)
				v->sa_next = e->seq + 1;
		}
		switch (e->type) {
		case ASX_SA_BLOCKED:
			if (!v || v->state != VP_RUNNING || v->sa_blocked)
				break;
			v->sa_blocked = true;
			v->state = VP_BLOCKED;
			a->nblocked++;
			a->sa_nblocked++;
			ASX_PROBE2(asc_vp_blocked, a, v);
			want = a->pol->activation(a, VPEV_BLOCKED);
			if (want > 0 && !run) {
				sa_take_over(a, self, td);
				run = true;
				want--;
			}
			if (want > 0)
				*k += activate_n(a, want, NULL, wk + *k, max - *k, td);
			break;
		case ASX_SA_UNBLOCKED:
			if (v && v->sa_blocked)
				sa_unblocked_locked(a, v);
			break;
		case ASX_SA_EXITED:
			if (v && v->sa_blocked)
				sa_unblocked_locked(a, v);
			if (v) {
				a->sa_map[e->vp] = NULL;
				v->sa_id = -1;
			}
			break;
		case ASX_SA_OVERFLOW:
			/* the books are no longer exact: count every VP as
			 * running; scheduling points bring the count back */
			a->sa_lost += e->arg;
			a->sa_posted = 0;	/* lost posts are never taken */
			for (struct asx_vp *w = a->vps; w; w = w->next)
				if (w->sa_blocked)
					sa_unblocked_locked(a, w);
			break;
		case ASX_SA_USER:
			if (e->arg == SA_WAKE && a->sa_posted)
				a->sa_posted--;
			if (e->arg == SA_REFILL) {
				a->sa_refilling = false;
				if (a->nspare < a->spare_min && vp_room(a))
					td->pool = true;
			}
			if (e->arg == SA_WAKE && sa_wants_vp(a)) {
				if (!run) {
					sa_take_over(a, self, td);
					run = true;
				} else {
					*k += activate_n(a, 1, NULL, wk + *k, max - *k, td);
				}
			}
			break;
		default:
			break;
		}
	}
	return run;
}

/* Under the lock: more VPs parked than the target and the pool need. */
static bool sa_excess(const struct asx_asc *a)
{
	return a->nspare > a->spare_min + a->target;
}

/*
 * The idle loop of a VP of an ASC with activations, entered under the
 * lock with nothing to run: park in the kernel's wait as a spare, act on
 * what wakes it.  Returns (unlocked) true to run threads again, false to
 * exit (the ASC is being destroyed, or the VP is surplus: more parked than
 * the target and the pool, for SA_RETIRE_NS).
 */
static bool sa_park(struct asx_asc *a, struct asx_vp *vp)
{
	struct asx_sa_event ev[SA_BATCH];
	bool excess;

	vp->act_cpu = 0;
	vp->passivate = 0;
	if (vp->state != VP_SPARE) {
		vp->state = VP_SPARE;
		a->nspare++;
		/*
		 * A VP giving its place back (passivate) races with the
		 * BLOCKED of another: if that was acted on while we still
		 * counted as running, nobody took over.  Whoever comes
		 * second sees the other: here, we stay if the policy wants
		 * a VP at once (PRIO: threads queued and none running).
		 */
		if (!a->dying && !__atomic_load_n(&vp->stop, __ATOMIC_RELAXED) &&
		    a->pol->activation(a, VPEV_RUNNABLE) > 0) {
			vp->state = VP_RUNNING;
			a->nspare--;
			spin_unlock(&a->lock);
			return true;
		}
	}
	excess = sa_excess(a);
	spin_unlock(&a->lock);
	ASX_PROBE1(asc_vp_idle, vp);
	for (;;) {
		struct vp_todo td = { 0 };
		struct asx_vp *wk[4];
		bool run, stop, retire = false;
		unsigned int left = 0;
		struct timespec dl;
		int n, k = 0;

		if (excess) {
			uint64_t d = asx_now_ns() + SA_RETIRE_NS;

			dl.tv_sec = (time_t)(d / ASX_NSEC_PER_SEC);
			dl.tv_nsec = (long)(d % ASX_NSEC_PER_SEC);
		}
		n = asx_sa_wait(a->sa, ev, SA_BATCH, excess ? &dl : NULL);
		if (n < 0 && n != -EINTR && n != -ETIMEDOUT) {
			/* not expected (the group is ours until we leave):
			 * do not spin on it, and keep seeing stop */
			struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
		}
		spin_lock(&a->lock);
		if (n > 0)
			a->sa_upcalls++;
		inbox_drain(a);
		run = sa_events(a, vp, ev, n > 0 ? n : 0, wk, &k, (int)ASX_ARRAY_SIZE(wk), &td);
		stop = __atomic_load_n(&vp->stop, __ATOMIC_ACQUIRE);
		/* parked a whole SA_RETIRE_NS while surplus: give the thread back */
		retire = !stop && !run && n == -ETIMEDOUT && sa_excess(a);
		if (stop || retire) {
			if (vp->state == VP_SPARE)
				a->nspare--;
			vp->state = VP_EXITED;
			a->nexited++;
			left = a->nspare;
			if (retire)
				a->sa_retired++;
		}
		excess = sa_excess(a);
		spin_unlock(&a->lock);
		wake_list(wk, k);
		vp_todo_run(a, &td);
		if (stop) {
			if (left)	/* pass the word on: one post wakes one spare */
				asx_sa_post(a->sa, SA_STOP);
			return false;
		}
		if (retire)
			return false;
		if (run) {
			ASX_PROBE1(asc_vp_active, vp);
			return true;
		}
	}
}

static void setup_tick(struct asx_vp *vp);

static void *vp_main(void *arg)
{
	struct asx_vp *vp = arg;
	struct asx_asc *a = vp->asc;

	asx__tls_vp = vp;
	__atomic_store_n(&vp->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
	asx__ctx_init_self(&vp->ctx);
	if (a->semantic == ASX_ASC_PREEMPTIVE || a->semantic == ASX_ASC_TIMESLICED)
		setup_tick(vp);
	if (a->sa) {
		sa_join_self(a, vp);
		/* the pool (made VP_SPARE): parked before it looks for threads */
		spin_lock(&a->lock);
		if (vp->state != VP_SPARE)
			spin_unlock(&a->lock);
		else if (!sa_park(a, vp))
			goto out;
	}
	for (;;) {
		struct asx_thread *t = NULL;
		bool locked = mode_locked();

		enter_sched(vp);
		if (locked) {
			spin_lock(&a->lock);
			sa_sync(a, vp);
		}
		inbox_drain(a);
		if (!vp->passivate && !__atomic_load_n(&vp->stop, __ATOMIC_ACQUIRE))
			t = a->pol->schedule(a, vp, NULL);
		if (locked) {
			a->ndispatch++;
			spin_unlock(&a->lock);
		}
		if (t) {
			/* run @t, then each thread a switch-out left to us (vp_handoff) */
			do {
				struct asx_thread *prev;

				wait_saved(t);
				vp->cur = t;
				t->vp = vp;
				__atomic_store_n(&t->state, T_RUNNING, __ATOMIC_RELAXED);
				prev = asx__ctx_switch(&vp->ctx, &t->ctx, NULL);
				finish_switch(prev);
				t = vp->handoff;
				vp->handoff = NULL;
			} while (t);
			continue;
		}
		SCHED_FUZZ();
		spin_lock(&a->lock);
		inbox_drain(a);
		if (!vp->passivate && !__atomic_load_n(&vp->stop, __ATOMIC_RELAXED))
			t = a->pol->schedule(a, vp, NULL);
		if (t) {
			/* queued while we looked: loop and run it */
			a->pol->enqueue(a, t);
			spin_unlock(&a->lock);
			continue;
		}
		if (mode_get() == MODE_REQUEST) {
			/* the requester saw us running: acknowledge before sleeping */
			spin_unlock(&a->lock);
			continue;
		}
		if (__atomic_load_n(&vp->stop, __ATOMIC_ACQUIRE)) {
			vp->state = VP_EXITED;
			a->nexited++;
			spin_unlock(&a->lock);
			break;
		}
		if (vp->passivate && a->pol->nrunnable(a) && asc_running(a) <= 1) {
			/*
			 * Asked to give our place back while others ran, but
			 * they have gone idle meanwhile and threads are
			 * queued (a thread that yielded to passivate us among
			 * them): the last running VP stays.
			 */
			vp->passivate = 0;
			spin_unlock(&a->lock);
			continue;
		}
		if (a->sa) {
			/* activations: park in the kernel as a spare */
			if (!sa_park(a, vp))
				break;
			continue;
		}
		vp_idle(a, vp);
	}
out:
	if (vp->has_tick)
		timer_delete(vp->tick);
	if (vp->sa_id >= 0)
		sa_leave_self(a, vp);
	if (a->sa) {
		spin_lock(&a->lock);
		a->sa_slots--;
		spin_unlock(&a->lock);
	}
	asx__tls_vp = NULL;
	return NULL;
}

/* Add @n VPs to the process; from outside the scheduler this may need the
 * single VP to acknowledge the locked path first. */
static void mode_before_new_vp(void)
{
	/* S.cfg held */
	if (mode_get() == MODE_MULTI || S.nvps == 0)
		return;
	if (asx__tls_vp) {
		/* we are the single VP, between operations */
		__atomic_store_n(&S.mode, MODE_MULTI, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&S.ack, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&S.mode, MODE_REQUEST, __ATOMIC_RELEASE);
	struct asx_vp *v = S.single;
	struct asx_asc *a = v->asc;

	spin_lock(&a->lock);
	if (v->state == VP_IDLE) {
		struct asx_vp **pp;

		for (pp = &a->idle; *pp != v; pp = &(*pp)->idle_next)
			;
		*pp = v->idle_next;
		a->nidle--;
		v->state = VP_RUNNING;
		spin_unlock(&a->lock);
		vp_wake(v);
	} else {
		spin_unlock(&a->lock);
	}
	while (!__atomic_load_n(&S.ack, __ATOMIC_ACQUIRE))
		asx_futex_wait(&S.ack, 0, NULL);
}

/*
 * A new VP for @a: @bound's own (DIRECT), a @spare beyond the target (the
 * activation policy's; refused past max_vps), and with activations one that
 * starts parked in the kernel (@park: the spare pool).
 */
static int vp_spawn(struct asx_asc *a, struct asx_thread *bound, bool spare, bool park)
{
	struct asx_vp *vp = calloc(1, sizeof(*vp));
	pthread_attr_t pa;
	int r;

	if (!vp)
		return -ENOMEM;
	vp->asc = a;
	vp->spare = spare;
	vp->bound = bound;
	vp->sa_id = -1;
	vp->state = VP_RUNNING;
	if (bound)
		bound->bound = vp;
	np_enter();
	pthread_mutex_lock(&S.cfg);
	mode_before_new_vp();
	lock_np(&a->lock);
	/* with activations every VP must fit in the group (max_vps) */
	r = a->dying ? -ESHUTDOWN : (spare || a->sa) && !vp_room(a) ? -EAGAIN : 0;
	if (r) {
		unlock_np(&a->lock);
		pthread_mutex_unlock(&S.cfg);
		np_leave(true);
		free(vp);
		return r;
	}
	vp->next = a->vps;
	a->vps = vp;
	a->nvps++;
	if (a->sa)
		a->sa_slots++;
	if (spare)
		a->spares_made++;
	if (park) {
		/* counted as parked from now: posts wait for it in the ring */
		vp->state = VP_SPARE;
		a->nspare++;
	}
	unlock_np(&a->lock);
	__atomic_add_fetch(&S.nvps, 1, __ATOMIC_RELAXED);
	S.single = vp;
	pthread_attr_init(&pa);
	/* VPs run on user stacks nearly all the time; their own can be small */
	pthread_attr_setstacksize(&pa, 256 * 1024);
	r = pthread_create(&vp->pth, &pa, vp_main, vp);
	pthread_attr_destroy(&pa);
	if (r) {
		lock_np(&a->lock);
		if (vp->state == VP_SPARE)
			a->nspare--;
		vp->state = VP_EXITED;
		a->nexited++;
		if (a->sa)
			a->sa_slots--;
		vp->pth = 0;
		unlock_np(&a->lock);
		__atomic_sub_fetch(&S.nvps, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&S.cfg);
		np_leave(true);
		return -r;
	}
	pthread_mutex_unlock(&S.cfg);
	np_leave(true);
	ASX_PROBE2(asc_vp_new, a, vp);
	return 0;
}

/* CPU time (ns) the VP with kernel thread id @tid has used; 0 if unknown. */
static uint64_t vp_cputime(pid_t tid)
{
	/* the kernel's per-thread CPU clock id (MAKE_THREAD_CPUCLOCK(tid, SCHED)) */
	clockid_t id = (clockid_t)((~(unsigned int)tid) << 3) | 6;
	struct timespec ts;

	if (tid <= 0 || clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * ASX_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/*
 * Under @a's lock: did a running VP have the CPU for most of the time
 * since the last check (it runs a thread that does not yield), rather
 * than being off it (the OS runs something else: another VP would only
 * compete for the same CPUs)?  Re-bases every running VP's mark.
 */
static bool vps_had_cpu(struct asx_asc *a, uint64_t now)
{
	uint64_t span = now - a->act_t;
	bool busy = false;

	for (struct asx_vp *v = a->vps; v; v = v->next) {
		uint64_t c;

		if (v->state != VP_RUNNING)
			continue;
		c = vp_cputime(__atomic_load_n(&v->tid, __ATOMIC_RELAXED));
		/* no mark yet (it started running since): judged next time */
		if (!c || (v->act_cpu && c - v->act_cpu >= span / 4))
			busy = true;
		v->act_cpu = c;
	}
	a->act_t = now;
	return busy;
}

uint64_t asx__activation_check(struct asx_asc *a)
{
	struct asx_vp *wk[1];
	int k = 0;
	uint64_t again = 0, now = asx_now_ns();

	spin_lock(&a->lock);
	if (!a->dying && a->pol->nrunnable(a) && asc_running(a) < a->target) {
		/* the running VPs did not get round the queue, although they
		 * had the CPU: one more */
		bool had = vps_had_cpu(a, now);

		if ((a->ndispatch - a->act_mark < a->pol->nrunnable(a) && had) ||
		    asc_running(a) == 0)
			k = activate_n(a, 1, NULL, wk, 1, NULL);
		/*
		 * Keep watching (a thread may turn CPU-bound later), less
		 * often while the running VPs keep up: a ring of yielding
		 * threads on one VP costs the sentinel a few wake-ups a
		 * second, not 5,000.
		 */
		if (k)
			a->act_backoff = 0;
		else if (a->act_backoff < ACT_BACKOFF_MAX)
			a->act_backoff++;
		if (a->nidle > 0 || a->nspare > 0)
			again = ACT_DELAY_NS << a->act_backoff;
		a->act_mark = a->ndispatch;
	}
	a->act_armed = again != 0;
	spin_unlock(&a->lock);
	wake_list(wk, k);
	return again;
}

/* Make sure each ASC with runnable threads has a running VP (paper 3.3). */
static void sweep_activation(void)
{
	struct asx_asc *a;

	__atomic_store_n(&S.need_act, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&S.cfg);
	for (a = S.ascs; a; a = a->next) {
		struct asx_vp *v = NULL;
		bool post = false;

		spin_lock(&a->lock);
		if (!a->pol->vp_per_thread && a->pol->nrunnable(a) && asc_running(a) == 0) {
			v = idle_take(a, NULL);
			if (!v)
				post = sa_claim_spare(a);
		}
		spin_unlock(&a->lock);
		if (v)
			vp_wake(v);
		if (post)
			asx_sa_post(a->sa, SA_WAKE);
	}
	pthread_mutex_unlock(&S.cfg);
}

/* ---------------------------------------------------------------- blocking calls */

void asx__vp_blocked(void)
{
	struct asx_vp *vp = asx__tls_vp, *wk[2];
	struct vp_todo td = { 0 };
	struct asx_asc *a;
	int k;

	if (!vp || !vp->cur)
		return;
	a = vp->asc;
	if (a->sa)
		return;	/* asx.ko reports the sleep if there is one */
	if (mode_get() != MODE_MULTI) {
		/* the only VP: others may need to run while we block, and from
		 * now on pthreads outside may make a spare, so lock */
		np_enter();
		pthread_mutex_lock(&S.cfg);
		mode_locked();
		__atomic_store_n(&S.mode, MODE_MULTI, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&S.cfg);
		np_leave(true);
	}
	lock_np(&a->lock);
	inbox_drain(a);
	vp->state = VP_BLOCKED;
	a->nblocked++;
	k = activate_locked(a, VPEV_BLOCKED, NULL, wk, 2, &td);
	unlock_np(&a->lock);
	ASX_PROBE2(asc_vp_blocked, a, vp);
	wake_list(wk, k);
	vp_todo_run(a, &td);
	__atomic_store_n(&vp->nolib, vp->nolib + 1, __ATOMIC_RELAXED);
}

void asx__vp_unblocked(void)
{
	struct asx_vp *vp = asx__tls_vp;
	struct asx_asc *a;
	int n;

	if (!vp || !vp->cur)
		return;
	a = vp->asc;
	if (a->sa)
		return;
	__atomic_store_n(&vp->nolib, vp->nolib - 1, __ATOMIC_RELAXED);
	lock_np(&a->lock);
	vp->state = VP_RUNNING;
	a->nblocked--;
	n = a->pol->activation(a, VPEV_UNBLOCKED);
	if (n < 0)
		vp->passivate = 1;	/* at our next scheduling point */
	unlock_np(&a->lock);
	ASX_PROBE2(asc_vp_unblocked, a, vp);
	if (n < 0)
		asx_thread_yield();
}

void asx_asc_blocking_begin(void)
{
	asx__vp_blocked();
}

void asx_asc_blocking_end(void)
{
	asx__vp_unblocked();
}

/* ---------------------------------------------------------------- ASCs */

/* The activation mode @attr asks for, the environment's if it says DEFAULT. */
static int act_mode(const struct asx_asc_attr *attr)
{
	enum asx_asc_activations m = ASX_ASC_ACT_DEFAULT;
	const char *e;

	if (attr && ASX_SZ_HAS(attr, activations))
		m = attr->activations;
	if (m > ASX_ASC_ACT_ON)
		return -EINVAL;
	if (m != ASX_ASC_ACT_DEFAULT)
		return (int)m;
	e = getenv("ASX_ASC_ACTIVATIONS");
	if (!e || !*e || !strcmp(e, "off") || !strcmp(e, "0"))
		return ASX_ASC_ACT_OFF;
	if (!strcmp(e, "auto"))
		return ASX_ASC_ACT_AUTO;
	if (!strcmp(e, "on") || !strcmp(e, "1"))
		return ASX_ASC_ACT_ON;
	return -EINVAL;
}

/* Opens @a's activation group if @mode and the module allow; 0 or -errno. */
static int sa_setup(struct asx_asc *a, int mode, const struct asx_asc_attr *attr)
{
	unsigned int spares = attr && ASX_SZ_HAS(attr, spare_vps) && attr->spare_vps ?
		attr->spare_vps : SA_SPARES_DEF;
	struct asx_sa_group *g;
	unsigned int cap;
	int r;

	if (mode == ASX_ASC_ACT_OFF || (mode == ASX_ASC_ACT_AUTO && a->pol->vp_per_thread))
		return 0;
	if (a->pol->vp_per_thread)
		return -EOPNOTSUPP;	/* DIRECT: a VP per thread, nothing to take over */
	/* Every VP joins the group: the first ones and the pool must fit, and
	 * the group's size is the ASC's max_vps from now on. */
	if (a->target + spares > ASX_SA_MAX_VPS)
		return mode == ASX_ASC_ACT_ON ? -EINVAL : 0;
	cap = a->max_vps < a->target + spares ? a->target + spares : a->max_vps;
	if (cap > ASX_SA_MAX_VPS)
		cap = ASX_SA_MAX_VPS;
	ASX_SA_OPTS(o, .max_vps = cap);
	r = asx_sa_open(&g, &o);
	if (!r && !(asx__sa_features(g) & ASX_FEAT_SA_POST)) {
		asx_sa_close(g);
		r = -ENOTTY;
	}
	if (r)
		return mode == ASX_ASC_ACT_ON ? r : 0;
	a->sa_map = calloc(asx__sa_max_vps(g), sizeof(*a->sa_map));
	if (!a->sa_map) {
		asx_sa_close(g);
		return -ENOMEM;
	}
	a->sa = g;
	a->sa_nmap = asx__sa_max_vps(g);
	a->max_vps = a->sa_nmap;
	a->spare_min = spares;
	return 0;
}

static void sa_teardown(struct asx_asc *a)
{
	if (!a->sa)
		return;
	asx_sa_close(a->sa);
	a->sa = NULL;
	free(a->sa_map);
	a->sa_map = NULL;
}

/*
 * A caller's size-first attribute struct (@sz bytes at @in) into @o
 * (@osz bytes; zero beyond what the caller has): -EINVAL when @sz is too
 * small to hold itself, -E2BIG when a newer caller set fields this
 * library does not know.  As the other option structs (asx/sa.h, ...).
 */
static int attr_copy(const void *in, size_t sz, void *o, size_t osz)
{
	const unsigned char *p = in;

	memset(o, 0, osz);
	if (sz < sizeof(size_t))
		return -EINVAL;
	memcpy(o, in, sz < osz ? sz : osz);
	for (size_t i = osz; i < sz; i++)
		if (p[i])
			return -E2BIG;
	*(size_t *)o = osz;	/* every field read from here on is ours */
	return 0;
}

int asx_asc_create(struct asx_asc **out, const struct asx_asc_policy *pol,
		   const struct asx_asc_attr *uattr)
{
	const struct asx_asc_attr *attr = NULL;
	struct asx_asc_attr at;
	struct asx_asc *a;
	unsigned int n, extra;
	int r, act;

	if (!out || !pol)
		return -EINVAL;
	if (uattr) {
		r = attr_copy(uattr, uattr->sz, &at, sizeof(at));
		if (r)
			return r;
		attr = &at;
	}
	act = act_mode(attr);
	if (act < 0)
		return act;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->pol = pol;
	snprintf(a->name, sizeof(a->name), "%s", attr && attr->name ? attr->name : pol->name);
	n = attr && attr->nvps ? attr->nvps : 1;
	a->target = pol->vp_per_thread ? 0 : n;
	a->max_vps = attr && attr->max_vps ? attr->max_vps : n + 64;
	if (a->max_vps < n)
		a->max_vps = n;
	a->semantic = attr && attr->semantic ? attr->semantic : pol->semantic;
	a->act.idx = -1;
	a->act.kind = TN_ACT;
	a->act.asc = a;
	a->timeslice = attr && attr->timeslice_ns ? attr->timeslice_ns : 2000000;
	a->miss_ratio_max = attr && attr->miss_ratio_max > 0 ? attr->miss_ratio_max : 0.05;
	a->util_max = attr && attr->util_max > 0 ? attr->util_max : 1.0;
	if (pol->state_size) {
		a->pstate = calloc(1, pol->state_size);
		if (!a->pstate) {
			free(a);
			return -ENOMEM;
		}
	}
	r = pol->init ? pol->init(a) : 0;
	if (!r) {
		r = sa_setup(a, act, attr);
		if (r && pol->fini)
			pol->fini(a);
	}
	if (r) {
		free(a->pstate);
		free(a);
		return r;
	}
	pthread_mutex_lock(&S.cfg);
	a->next = S.ascs;
	S.ascs = a;
	if (pol->vp_per_thread || a->sa) {
		/* VPs come and go with threads (DIRECT), or a spare takes over
		 * for a blocked VP at any time (activations): the locked path */
		mode_before_new_vp();
		__atomic_store_n(&S.mode, MODE_MULTI, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&S.cfg);
	extra = a->sa ? a->spare_min : 0;	/* the spare pool: parks at once */
	for (unsigned int i = 0; !pol->vp_per_thread && i < n + extra; i++) {
		r = vp_spawn(a, NULL, false, i >= n);
		if (r) {
			a->target = i < n ? i : n;
			asx_asc_destroy(a);
			return r;
		}
	}
	*out = a;
	return 0;
}

int asx_asc_destroy(struct asx_asc *a)
{
	struct asx_asc **pp;
	struct asx_vp *v, *n;
	unsigned int parked;

	if (!a)
		return -EINVAL;
	spin_lock(&a->lock);
	if (a->nthreads || __atomic_load_n(&a->inbox, __ATOMIC_RELAXED)) {
		spin_unlock(&a->lock);
		return -EBUSY;
	}
	/* no VP made from now on (a spare refilling the pool would be missed
	 * by the joins below), no more deferred checks */
	a->dying = true;
	for (v = a->vps; v; v = v->next)
		__atomic_store_n(&v->stop, 1, __ATOMIC_RELEASE);
	while ((v = idle_take(a, NULL)))
		vp_wake(v);
	parked = a->nspare;
	spin_unlock(&a->lock);
	/* one post wakes one spare; each passes it on as it leaves */
	if (parked)
		asx_sa_post(a->sa, SA_STOP);
	/* a vp_spawn() that listed its VP before dying has its pthread id
	 * written: it holds S.cfg from listing to pthread_create() */
	pthread_mutex_lock(&S.cfg);
	pthread_mutex_unlock(&S.cfg);
	for (v = a->vps; v; v = v->next)
		if (v->pth)
			pthread_join(v->pth, NULL);
	/* one deferred check in flight finishes before we free */
	asx__timer_del(&a->act);
	asx__sentinel_sync();
	/* a check that ran before it saw dying may have re-armed meanwhile */
	asx__timer_del(&a->act);
	pthread_mutex_lock(&S.cfg);
	for (pp = &S.ascs; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	for (v = a->vps; v; v = v->next)
		if (v->pth)
			__atomic_sub_fetch(&S.nvps, 1, __ATOMIC_RELAXED);
	if (S.nvps <= 1) {
		/* the VPs left are joined: one VP can go lock-free again */
		struct asx_asc *b;
		bool direct = false;

		S.single = NULL;
		for (b = S.ascs; b; b = b->next) {
			direct |= b->pol->vp_per_thread || b->sa;
			spin_lock(&b->lock);
			for (v = b->vps; v; v = v->next)
				if (v->pth && v->state != VP_EXITED)
					S.single = v;
			spin_unlock(&b->lock);
		}
		if (!direct && (S.nvps == 0 || S.single))
			__atomic_store_n(&S.mode, MODE_SINGLE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&S.cfg);
	for (v = a->vps; v; v = n) {
		n = v->next;
		free(v);
	}
	sa_teardown(a);
	if (a->pol->fini)
		a->pol->fini(a);
	free(a->pstate);
	free(a);
	return 0;
}

int asx_asc_add_vp(struct asx_asc *a)
{
	int r;

	if (!a || a->pol->vp_per_thread)
		return -EINVAL;
	lock_np(&a->lock);
	if (a->sa && (a->target >= a->max_vps || !vp_room(a))) {
		/* the activation group is full: a VP more would run unreported */
		unlock_np(&a->lock);
		return -ENOSPC;
	}
	__atomic_store_n(&a->target, a->target + 1, __ATOMIC_RELAXED);
	if (a->max_vps < a->target)
		a->max_vps = a->target;
	unlock_np(&a->lock);
	r = vp_spawn(a, NULL, false, false);
	if (r == -EAGAIN && a->sa) {
		/* filled up meanwhile (a spare was made) */
		lock_np(&a->lock);
		__atomic_store_n(&a->target, a->target - 1, __ATOMIC_RELAXED);
		unlock_np(&a->lock);
		r = -ENOSPC;
	}
	return r;
}

int asx_asc_remove_vp(struct asx_asc *a)
{
	if (!a || a->pol->vp_per_thread)
		return -EINVAL;
	lock_np(&a->lock);
	if (a->target <= 1) {
		unlock_np(&a->lock);
		return -EBUSY;
	}
	/* the VP stays, idle: a running one passivates at its next yield */
	__atomic_store_n(&a->target, a->target - 1, __ATOMIC_RELAXED);
	for (struct asx_vp *v = a->vps; v; v = v->next) {
		if (v->state == VP_RUNNING && asc_running(a) > a->target) {
			__atomic_store_n(&v->passivate, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	unlock_np(&a->lock);
	return 0;
}

int asx_asc_stats(struct asx_asc *a, struct asx_asc_stats *st)
{
	if (!a || !st)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	lock_np(&a->lock);
	st->vps = a->nvps - a->nexited;
	st->vps_running = asc_running(a);
	st->vps_blocked = a->nblocked;
	st->vps_target = a->target;
	st->threads = a->nthreads;
	st->spares_made = a->spares_made;
	st->activations = a->sa != NULL;
	st->vps_spare = a->nspare;
	st->upcalls = a->sa_upcalls;
	st->takeovers = a->sa_takeovers;
	st->sa_blocked = a->sa_nblocked;
	st->sa_lost = a->sa_lost;
	st->retired = a->sa_retired;
	if (a->pol->stats)
		a->pol->stats(a, st);
	unlock_np(&a->lock);
	return 0;
}

static const char *const vpstate_name[] = {
	[VP_RUNNING] = "running", [VP_IDLE] = "idle", [VP_BLOCKED] = "blocked",
	[VP_EXITED] = "exited", [VP_SPARE] = "spare",
};
static const char *const tstate_name[] = {
	[T_NEW] = "new", [T_READY] = "ready", [T_RUNNING] = "running",
	[T_BLOCKED] = "blocked", [T_DEAD] = "dead",
};

void asx__asc_dump(struct asx_asc *a, FILE *f)
{
	/* racy on purpose: a hung VP may hold the lock */
	fprintf(f, "asc %s (%s): lock %s, vps %u idle %u blocked %u exited %u spare %u "
		"target %u, threads %u, runnable %u, inbox %s, dispatched %llu, mode %d\n",
		a->name, a->pol->name, __atomic_load_n(&a->lock, __ATOMIC_RELAXED) ? "held" : "free",
		a->nvps, a->nidle, a->nblocked, a->nexited, a->nspare, a->target, a->nthreads,
		a->pol->nrunnable(a), __atomic_load_n(&a->inbox, __ATOMIC_RELAXED) ? "non-empty" : "empty",
		(unsigned long long)a->ndispatch, mode_get());
	for (struct asx_vp *v = a->vps; v; v = v->next) {
		struct asx_thread *c = __atomic_load_n(&v->cur, __ATOMIC_RELAXED);
		struct asx_thread *h = __atomic_load_n(&v->handoff, __ATOMIC_RELAXED);
		int st = __atomic_load_n(&v->state, __ATOMIC_RELAXED);

		fprintf(f, "  vp tid %d %s%s%s%s switches %llu in_sched %d\n",
			(int)v->tid, st >= 0 && st <= VP_SPARE ? vpstate_name[st] : "?",
			v->spare ? " (spare)" : "", v->passivate ? " passivate" : "",
			v->stop ? " stop" : "", (unsigned long long)v->nswitch, v->in_sched);
		for (int i = 0; i < 2; i++) {
			struct asx_thread *t = i ? h : c;
			int ts;

			if (!t)
				continue;
			ts = __atomic_load_n(&t->state, __ATOMIC_RELAXED);
			fprintf(f, "    %s thread %p '%s' %s switching %d\n", i ? "handoff" : "current",
				(void *)t, t->name, ts >= 0 && ts <= T_DEAD ? tstate_name[ts] : "?",
				__atomic_load_n(&t->switching, __ATOMIC_RELAXED));
		}
	}
}

bool asx__asc_none(void)
{
	bool none;

	pthread_mutex_lock(&S.cfg);
	none = !S.ascs;
	pthread_mutex_unlock(&S.cfg);
	return none;
}

const char *asx_asc_name(const struct asx_asc *a)
{
	return a ? a->name : NULL;
}

/* ---------------------------------------------------------------- thread timers */

static void run_utimers(struct asx_thread *self)
{
	uint32_t m = __atomic_exchange_n(&self->utimer_pending, 0, __ATOMIC_ACQ_REL);

	for (unsigned int i = 0; i < ASX_THREAD_TIMERS; i++)
		if ((m & (1u << i)) && self->utimers[i].fn)
			self->utimers[i].fn(self->utimers[i].arg);
}

int asx_thread_timer_set(unsigned int idx, const struct timespec *first, uint64_t period,
			 void (*fn)(void *), void *arg)
{
	struct asx_thread *self = asx__self();
	struct utimer *u;

	if (!self)
		return -EPERM;
	if (idx >= ASX_THREAD_TIMERS || (first && !fn))
		return -EINVAL;
	u = &self->utimers[idx];
	asx__timer_del(&u->node);
	__atomic_and_fetch(&self->utimer_pending, ~(1u << idx), __ATOMIC_RELAXED);
	if (!first)
		return 0;
	u->fn = fn;
	u->arg = arg;
	u->period = period;
	u->node.kind = TN_UTIMER;
	u->node.t = self;
	u->node.timer = idx;
	u->node.when = asx_timespec_ns(first);
	asx__timer_add(&u->node);
	return 0;
}

uint64_t asx_thread_deadline(void)
{
	struct asx_thread *self = asx__self();

	return self && self->asc->pol->schema == ASX_QOS_EDF ? self->deadline : 0;
}

/* ---------------------------------------------------------------- preemption */

/*
 * libasx's own code: the Makefile renames every code section of its
 * objects asx_text, and the linker brackets that output section with these
 * two symbols, in libasx.so and in a program linked with libasx.a alike
 * (where dl_iterate_phdr cannot tell libasx from the program).  Hidden, so
 * that libasx.so neither exports them nor binds them to another object's;
 * weak, for a build of the sources without the renaming (the fuzz
 * replayers), which then has only the shared-library test below.
 */
extern const char __start_asx_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_asx_text[] __attribute__((weak, visibility("hidden")));

static bool pc_nopreempt(uintptr_t pc)
{
	for (int i = 0; i < S.nnopreempt; i++)
		if (pc >= S.nopreempt[i].lo && pc < S.nopreempt[i].hi)
			return true;
	return false;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	static const char *const libs[] = {
		"libc.so", "ld-linux", "libpthread", "libasx", "libasan", "libtsan",
		"libubsan", "libgcc_s", "libstdc++", "libm.so", "libcmocka",
	};
	const char *nm = info->dlpi_name;
	bool hit = false;

	(void)size;
	(void)data;
	if (!nm || !*nm)
		return 0;
	for (size_t i = 0; i < ASX_ARRAY_SIZE(libs); i++)
		if (strstr(nm, libs[i]))
			hit = true;
	if (!hit)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    S.nnopreempt >= (int)ASX_ARRAY_SIZE(S.nopreempt))
			continue;
		S.nopreempt[S.nnopreempt].lo = info->dlpi_addr + ph->p_vaddr;
		S.nopreempt[S.nnopreempt].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		S.nnopreempt++;
	}
	return 0;
}

static void preempt_handler(int sig, siginfo_t *si, void *uc_)
{
	struct asx_vp *vp = asx__tls_vp;
	ucontext_t *uc = uc_;
	uintptr_t pc = 0;
	int saved = errno;

	(void)sig;
	(void)si;
	if (!vp || !vp->cur)
		return;
#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
#endif
	if (__atomic_load_n(&vp->in_sched, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&vp->nolib, __ATOMIC_RELAXED) || !pc || pc_nopreempt(pc)) {
		/* the post-critical-section test takes it later, if it can */
		if (!__atomic_load_n(&vp->in_sched, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&vp->nolib, __ATOMIC_RELAXED))
			return;	/* inside libc: the next tick retries */
		__atomic_store_n(&vp->preempt_pending, 1, __ATOMIC_RELAXED);
		return;
	}
	ASX_PROBE1(asc_preempt, vp->cur);
	asx_thread_yield();
	errno = saved;
}

void asx__preempt_check(struct asx_vp *vp)
{
	__atomic_store_n(&vp->preempt_pending, 0, __ATOMIC_RELAXED);
	if (vp->cur && !__atomic_load_n(&vp->nolib, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&vp->in_sched, __ATOMIC_RELAXED))
		asx_thread_yield();
}

static void sig_setup(void)
{
	uintptr_t lo = (uintptr_t)__start_asx_text, hi = (uintptr_t)__stop_asx_text;
	struct sigaction sa;

	if (lo && hi > lo) {
		S.nopreempt[0].lo = lo;
		S.nopreempt[0].hi = hi;
		S.nnopreempt = 1;
	}
	dl_iterate_phdr(phdr_cb, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = preempt_handler;
	/* NODEFER: the handler switches threads and may not return for a
	 * while; the next thread must stay preemptible */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(PREEMPT_SIG, &sa, NULL);
}

bool asx__preempt_excluded(const void *pc)
{
	pthread_once(&S.sig_once, sig_setup);
	return pc_nopreempt((uintptr_t)pc);
}

static void setup_tick(struct asx_vp *vp)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t tm;

	pthread_once(&S.sig_once, sig_setup);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = PREEMPT_SIG;
	sev._sigev_un._tid = vp->tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm))
		return;
	its.it_value.tv_sec = (time_t)(vp->asc->timeslice / ASX_NSEC_PER_SEC);
	its.it_value.tv_nsec = (long)(vp->asc->timeslice % ASX_NSEC_PER_SEC);
	its.it_interval = its.it_value;
	timer_settime(tm, 0, &its, NULL);
	vp->tick = tm;
	vp->has_tick = true;
}

void asx_asc_lib_enter(void)
{
	struct asx_vp *vp = asx__tls_vp;

	if (vp)
		__atomic_store_n(&vp->nolib, vp->nolib + 1, __ATOMIC_RELAXED);
}

void asx_asc_lib_leave(void)
{
	struct asx_vp *vp = asx__tls_vp;

	if (!vp)
		return;
	__atomic_store_n(&vp->nolib, vp->nolib - 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!vp->nolib && __atomic_load_n(&vp->preempt_pending, __ATOMIC_RELAXED))
		asx__preempt_check(vp);
}

/* ---------------------------------------------------------------- diagnostics */

struct raw_bench {
	struct asx_ctx main, other;
	unsigned long n;
};

/* Both sides switch from this one call site, as two threads yielding do. */
static __attribute__((noinline)) void raw_loop(struct asx_ctx *me, struct asx_ctx *peer,
						unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		asx__ctx_switch(me, peer, NULL);
}

static void raw_entry(void *xfer, void *param)
{
	struct raw_bench *b = param;

	(void)xfer;
	asx__ctx_started();
	raw_loop(&b->other, &b->main, b->n);
	for (;;)
		asx__ctx_switch(&b->other, &b->main, NULL);
}

double asx_asc_raw_switch_ns(unsigned long n)
{
	struct raw_bench b;
	struct asx_stack *s = asx__stack_get(64 * 1024);
	uint64_t t0, t1;

	if (!s || !n)
		return -1;
	b.n = n;
	asx__ctx_init_self(&b.main);
	asx__ctx_make(&b.other, s->lo, s->size, raw_entry, &b);
	asx__ctx_switch(&b.main, &b.other, NULL);	/* start it: it switches straight back */
	t0 = asx_now_ns();
	raw_loop(&b.main, &b.other, n);
	t1 = asx_now_ns();
	asx__ctx_switch(&b.main, &b.other, NULL);	/* let it leave its loop */
	asx__ctx_release(&b.other);
	asx__stack_put(s);
	/* n round trips, two switches each */
	return (double)(t1 - t0) / (2.0 * (double)n);
}
