// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * sched.c - the ASC run-time's hot path: the spinlock's slow half and the
 * single-VP / multi-VP mode, the inbox of threads made runnable from
 * outside, the activation policy's answers (waking idle VPs; what needs
 * vp.c, making a VP, is recorded in a struct vp_todo for the caller), the
 * sweep, waking a thread, switching and reaping, yield, blocking and
 * waiting.  The rest of the run-time is in the files sched_impl.h lists,
 * above this one; the yield path's inline helpers are in sched_impl.h.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <limits.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <asx/sa.h>

#include "asc/sched_impl.h"
#include "core/rcudepth.h"
#include "core/futex.h"
#include "core/probes.h"

struct sched_state asx__sched = {
	.cfg = PTHREAD_MUTEX_INITIALIZER,
};

bool asx__asc_none(void)
{
	bool none;

	pthread_mutex_lock(&asx__sched.cfg);
	none = !asx__sched.ascs;
	pthread_mutex_unlock(&asx__sched.cfg);
	return none;
}

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

/* ---------------------------------------------------------------- locks, the mode */

/*
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) makes every running thread of
 * the process execute a full memory barrier before it returns: the
 * asymmetric fence of the biased lock below and of mode.c's single VP.
 */
static int mb_state;	/* 0 unknown, 1 registered, -1 unavailable */

bool asx__membarrier_ready(void)
{
	int s = __atomic_load_n(&mb_state, __ATOMIC_ACQUIRE);

	if (!s) {
		long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

		s = -1;
		if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
		    !syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0))
			s = 1;
		__atomic_store_n(&mb_state, s, __ATOMIC_RELEASE);
	}
	return s > 0;
}

/*
 * The biased lock.  On the locked path (the process has more than one
 * VP) an ASC with one VP still takes its lock at every yield, although
 * nobody else wants it for long stretches: a locked exchange per yield.
 * After BIAS_FIRST uncontended sections that VP keeps the lock: it stores
 * LOCK_BIASED in the word instead of 0 and sets a->bias; from then on its
 * sections (bias_enter) store a->bias_busy, read a->bias and, still set,
 * go on without touching the word: plain stores and loads only.
 *
 * Anyone else's spin_lock() finds LOCK_BIASED in the word (its exchange
 * left 1 there: it holds the lock from now on), clears a->bias, runs
 * membarrier() and waits until a->bias_busy is 0 (asx__bias_revoke).  The
 * asymmetric Dekker pair: either the owner's store of bias_busy is seen
 * after the barrier, or the owner's read of a->bias comes after it and
 * finds it clear, and the owner takes the word like anyone (where the
 * revoker holds it).  A revocation costs a system call and an IPI per
 * CPU running the process, so the next bias waits twice as many sections,
 * up to BIAS_MAX.  TSan builds, which do not see membarrier(), use a
 * sequentially consistent pair instead.
 */
#define BIAS_FIRST	1024u
#define BIAS_MAX	(1u << 20)

#ifdef ASX_ASC_TSAN
#define BIAS_MO		__ATOMIC_SEQ_CST
#else
#define BIAS_MO		__ATOMIC_RELAXED
#endif

/* @vp, on @a's locked path: run this section biased?  Then no lock word. */
static inline bool bias_enter(struct asx_asc *a, struct asx_vp *vp)
{
	if (__atomic_load_n(&a->bias_vp, __ATOMIC_RELAXED) != vp)
		return false;
	__atomic_store_n(&a->bias_busy, 1, BIAS_MO);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (likely(__atomic_load_n(&a->bias, BIAS_MO)))
		return true;
	__atomic_store_n(&a->bias_busy, 0, __ATOMIC_RELAXED);
	return false;
}

/* Take @a's lock on @vp's locked path; true: biased (asc_unlock's @biased). */
static inline bool asc_lock(struct asx_asc *a, struct asx_vp *vp)
{
	if (bias_enter(a, vp))
		return true;
	spin_lock(&a->lock);
	return false;
}

/* Under the lock: may @vp have it biased?  Counts down to it. */
static inline bool bias_due(struct asx_asc *a, struct asx_vp *vp)
{
	if (likely(a->bias_count)) {
		a->bias_count--;
		return false;
	}
	if (a->nvps - a->nexited != 1 || a->sa || a->dying || vp->asc != a ||
	    POL_PER_THREAD(a) || !asx__membarrier_ready()) {
		a->bias_count = BIAS_FIRST;
		return false;
	}
	return true;
}

static inline void asc_unlock(struct asx_asc *a, struct asx_vp *vp, bool biased)
{
	if (biased) {
		__atomic_store_n(&a->bias_busy, 0, __ATOMIC_RELEASE);
		return;
	}
	if (unlikely(bias_due(a, vp))) {
		__atomic_store_n(&a->bias_vp, vp, __ATOMIC_RELAXED);
		__atomic_store_n(&a->bias, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&a->lock, LOCK_BIASED, __ATOMIC_RELEASE);
		return;
	}
	spin_unlock(&a->lock);
}

/* The word was LOCK_BIASED, now 1: ours once the owner is out of its section. */
static __attribute__((noinline, cold)) void bias_revoke(struct asx_asc *a)
{
	struct asx_vp *owner = __atomic_load_n(&a->bias_vp, __ATOMIC_RELAXED);

	__atomic_store_n(&a->bias, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&a->bias_vp, NULL, __ATOMIC_RELAXED);
	if (owner == asx__tls_vp) {
		/* the owner itself, outside any biased section */
		a->bias_count = a->bias_backoff ? a->bias_backoff : BIAS_FIRST;
		return;
	}
#ifndef ASX_ASC_TSAN
	/* registered before the bias was set: cannot fail but for a bug */
	if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
		abort();
#endif
	for (unsigned int i = 0; __atomic_load_n(&a->bias_busy, __ATOMIC_ACQUIRE); i++) {
		if (i < 128)
			asx_cpu_relax();
		else
			sched_yield();	/* the owner may be preempted by the OS */
	}
	a->bias_revokes++;
	a->bias_backoff = a->bias_backoff ? a->bias_backoff * 2 : 2 * BIAS_FIRST;
	if (a->bias_backoff > BIAS_MAX)
		a->bias_backoff = BIAS_MAX;
	a->bias_count = a->bias_backoff;
}

void asx__spin_lock_slow(int *l, int o)
{
	unsigned int spins = 0;

	for (;;) {
		if (o == LOCK_BIASED) {
			/* only an ASC's lock is ever biased */
			bias_revoke(container_of(l, struct asx_asc, lock));
			return;
		}
		while ((o = __atomic_load_n(l, __ATOMIC_RELAXED)) == 1) {
			if (++spins < 128)
				asx_cpu_relax();
			else
				sched_yield();	/* the holder may be preempted by the OS */
		}
		o = __atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE);
		if (!o)
			return;
	}
}

bool asx_asc_single_vp_mode(void)
{
	return mode_get() != MODE_MULTI;
}

bool asx__mode_ack(void)
{
	__atomic_store_n(&asx__sched.mode, MODE_MULTI, __ATOMIC_RELEASE);
	__atomic_store_n(&asx__sched.ack, 1, __ATOMIC_RELEASE);
	asx_futex_wake(&asx__sched.ack, INT_MAX);
	return true;
}

/* ---------------------------------------------------------------- inbox */

static void inbox_push(struct asx_asc *a, struct asx_asc_thread *t)
{
	struct asx_asc_thread *h = __atomic_load_n(&a->inbox, __ATOMIC_RELAXED);

	do {
		t->inbox_next = h;
	} while (!__atomic_compare_exchange_n(&a->inbox, &h, t, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

static void inbox_activate(struct asx_asc *a);

unsigned int asx__inbox_drain(struct asx_asc *a)
{
	struct asx_asc_thread *t, *rev = NULL, *n;
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
		POL_CALL(a, enqueue, t);
		k++;
	}
	if (mode_get() == MODE_MULTI && !POL_PER_THREAD(a))
		inbox_activate(a);
	return k;
}

/* ---------------------------------------------------------------- policy accessors */

/* asx/asc_policy.h: what a policy's ops may read (below the policies' files) */
void *asx_asc_policy_state(const struct asx_asc *a)
{
	return a->pstate;
}

void asx_asc_vp_info(const struct asx_asc *a, struct asx_asc_vp_info *v)
{
	v->running = asc_running(a);
	v->target = a->target;
	v->vps = a->nvps - a->nexited;
	v->window_ns = a->win_ns;
	v->window_dispatches = a->win_disp;
	v->miss_ratio_max = a->miss_ratio_max;
	v->util_max = a->util_max;
}

struct asx_asc_thread *asx_asc_vp_bound(const struct asx_asc_vp *vp)
{
	return ((const struct asx_vp *)vp)->bound;
}

/* ---------------------------------------------------------------- activating VPs */

int asx__pol_activation(struct asx_asc *a, enum asx_asc_vp_event ev)
{
	if (likely(POL_HAS(a, activation)))
		return POL_CALL(a, activation, ev);
	/* no advice: one VP per runnable thread up to the concurrency level */
	switch (ev) {
	case VPEV_RUNNABLE:
	case VPEV_BLOCKED:
		return POL_CALL(a, nrunnable) && asc_running(a) < a->target ? 1 : 0;
	case VPEV_UNBLOCKED:
		return asc_running(a) > a->target ? -1 : 0;
	default:
		return 0;
	}
}

void asx__vp_wake(struct asx_vp *vp)
{
	__atomic_store_n(&vp->wake, 1, __ATOMIC_RELEASE);
	asx_futex_wake(&vp->wake, 1);
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
bool asx__vps_had_cpu(struct asx_asc *a, uint64_t now)
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

/*
 * Under @a's lock: arm the deferred activation check (asx__activation_check)
 * unless it is armed, when threads are queued and a VP could be added (one
 * is idle or parked).
 */
void asx__act_watch(struct asx_asc *a)
{
	uint64_t now;

	if (a->act_armed || !(a->nidle || a->nspare) || a->dying || !POL_CALL(a, nrunnable))
		return;
	now = asx_now_ns();
	a->act_armed = true;
	a->act_mark = a->ndispatch;
	a->act_backoff = 0;
	asx__vps_had_cpu(a, now);	/* CPU marks */
	a->act.when = now + ACT_DELAY_NS;
	asx__timer_add(&a->act);	/* lock order: ASC, then timers */
}

int asx__activate_n(struct asx_asc *a, int n, struct asx_asc_thread *t,
		    struct asx_vp **wk, int max, struct vp_todo *td)
{
	int k = 0;

	if (n == ACT_LATER) {
		asx__act_watch(a);
		return 0;
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
		__atomic_store_n(&asx__sched.need_act, 1, __ATOMIC_RELAXED);
	return k;
}

void asx__wake_list(struct asx_vp **wk, int k)
{
	for (int i = 0; i < k; i++)
		asx__vp_wake(wk[i]);
}

/* Under the lock, after draining the inbox: idle VPs the policy wants. */
static void inbox_activate(struct asx_asc *a)
{
	struct asx_vp *wk[2];
	int k = activate_locked(a, VPEV_RUNNABLE, NULL, wk, 2, NULL);

	asx__wake_list(wk, k);	/* a futex wake under the spinlock: rare path */
}

/* Make sure each ASC with runnable threads has a running VP (paper 3.3). */
void asx__sweep_activation(void)
{
	struct asx_asc *a;

	__atomic_store_n(&asx__sched.need_act, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&asx__sched.cfg);
	for (a = asx__sched.ascs; a; a = a->next) {
		struct asx_vp *v = NULL;
		bool post = false;

		spin_lock(&a->lock);
		if (!POL_PER_THREAD(a) && POL_CALL(a, nrunnable) && asc_running(a) == 0) {
			v = idle_take(a, NULL);
			if (!v)
				post = sa_claim_spare(a);
		}
		spin_unlock(&a->lock);
		if (v)
			asx__vp_wake(v);
		if (post)
			asx_sa_post(a->sa, SA_WAKE);
	}
	pthread_mutex_unlock(&asx__sched.cfg);
}

/*
 * Activations, under @a's lock: @vp runs again.  A spare calls it for
 * @vp's UNBLOCKED; @vp itself at a scheduling point (sa_sync) if that
 * comes first: it runs scheduler code, so it is not blocked, whatever the
 * events not yet read say.  An UNBLOCKED read later finds it running and
 * does nothing; a BLOCKED read later is followed by its own UNBLOCKED.
 */
__attribute__((noinline)) void asx__sa_unblocked_locked(struct asx_asc *a, struct asx_vp *vp)
{
	vp->sa_blocked = false;
	vp->state = VP_RUNNING;
	a->nblocked--;
	/* the woken VP runs its thread to its next scheduling point, then
	 * gives its place back if the ASC has more running than it wants */
	if (asx__pol_activation(a, VPEV_UNBLOCKED) < 0)
		__atomic_store_n(&vp->passivate, 1, __ATOMIC_RELAXED);	/* maybe another VP's */
	ASX_PROBE2(asc_vp_unblocked, a, vp);
}

/* ---------------------------------------------------------------- waking */

void asx__wake_owed(struct asx_asc_thread *t, struct vp_todo *td)
{
	struct asx_vp *vp = asx__tls_vp, *wk[2], *bound = t->bound;
	struct asx_asc *a = t->asc;
	int k;

	if (vp && !t->bound) {
		/*
		 * In single-VP mode the run queue is ours without a lock.
		 * in_sched marks the operation for a spare switching the
		 * process to the locked path (asx__sa_wake_mode()): set
		 * before the mode is read, cleared once the queue is left.
		 * A preemption deferred meanwhile waits for the next check.
		 */
		int was = __atomic_load_n(&vp->in_sched, __ATOMIC_RELAXED);
		bool done = false;

		if (!was)
			enter_sched(vp);
		if (mode_get() == MODE_SINGLE) {
			__atomic_store_n(&t->state, T_READY, __ATOMIC_RELAXED);
			POL_CALL(a, enqueue, t);
			done = true;
		}
		if (!was) {
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			__atomic_store_n(&vp->in_sched, 0, __ATOMIC_RELEASE);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
		}
		if (done)
			return;
	}
	if (vp && mode_get() == MODE_MULTI) {
		bool biased;

		np_enter();
		biased = asc_lock(a, vp);
		__atomic_store_n(&t->state, T_READY, __ATOMIC_RELAXED);
		POL_CALL(a, enqueue, t);
		k = activate_locked(a, VPEV_RUNNABLE, t, wk, 2, td);
		asc_unlock(a, vp, biased);
		np_leave(true);
		SCHED_FUZZ();
		asx__wake_list(wk, k);
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
			if (td)
				td->post++;
			else
				asx_sa_post(a->sa, SA_WAKE);	/* under the lock: a rare path */
		} else if (!bound && asc_running(a) == 0 && a->nblocked && vp_room(a) &&
			   mode_get() == MODE_MULTI) {
			if (td)
				td->spawn = true;
			else
				__atomic_store_n(&asx__sched.need_act, 1, __ATOMIC_RELAXED);
		}
	}
	unlock_np(&a->lock);
	asx__wake_list(wk, k);
}

bool asx__claim_wake_owed(struct asx_waiter *w, uint32_t how, struct vp_todo *td)
{
	uint32_t exp = W_WAITING;
	struct asx_asc_thread *t = w->t;

	if (!__atomic_compare_exchange_n(&w->state, &exp, how, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return false;
	if (t)
		asx__wake_owed(t, td);
	else
		asx_futex_wake(&w->state, 1);
	return true;
}

/* ---------------------------------------------------------------- switching */

/* A dead thread's context is no longer in use: release it, tell joiners. */
void asx__reap(struct asx_asc_thread *t)
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
		free(t);	/* as thread.c's thread_free() */
		return;
	}
	for (; w; w = n) {
		n = w->next;
		asx__claim_wake_owed(w, W_WOKEN, NULL);	/* a VP to make: left to the activation check */
	}
}

/* Run the thread timers that fired while @self was away (leave_sched()). */
void asx__run_utimers(struct asx_asc_thread *self)
{
	uint32_t m = __atomic_exchange_n(&self->utimer_pending, 0, __ATOMIC_ACQ_REL);

	for (unsigned int i = 0; i < ASX_ASC_THREAD_TIMERS; i++)
		if ((m & (1u << i)) && self->utimers[i].fn)
			self->utimers[i].fn(self->utimers[i].arg);
	if (m & ASX__UTIMER_SIGS) {
		/* ASC signals (signal.c): the handlers are @self's own */
		uint32_t s = __atomic_exchange_n(&self->sig_pending, 0, __ATOMIC_ACQ_REL);

		for (int i = 1; i < ASX_ASC_SIGNALS_MAX; i++)
			if ((s & (1u << i)) && self->sigs && self->sigs->fn[i])
				self->sigs->fn[i](i, self->sigs->arg[i]);
	}
}

/*
 * @next was picked while another VP is still switching it out: spin a
 * little (the window is a few instructions long), then leave it to the
 * VP's loop, which runs it once our own context is saved.  Returns @next
 * to switch to it directly, NULL to switch to the VP's loop.
 */
__attribute__((noinline)) struct asx_asc_thread *asx__vp_handoff(struct asx_vp *vp,
							     struct asx_asc_thread *next)
{
	for (unsigned int i = 0; i < 64; i++) {
		asx_cpu_relax();
		if (ctx_saved(next))
			return next;
	}
	vp->handoff = next;
	return NULL;
}

/* CPUs this process may run on: ncpus() reads it, the first call fills it. */
static unsigned int ncpus_cache;

static __attribute__((noinline, cold)) unsigned int ncpus_fill(void)
{
	cpu_set_t set;
	int c = 1;

	if (!sched_getaffinity(0, sizeof(set), &set))
		c = CPU_COUNT(&set);
	__atomic_store_n(&ncpus_cache, c > 0 ? (unsigned int)c : 1u, __ATOMIC_RELAXED);
	return __atomic_load_n(&ncpus_cache, __ATOMIC_RELAXED);
}

static inline unsigned int ncpus(void)
{
	unsigned int n = __atomic_load_n(&ncpus_cache, __ATOMIC_RELAXED);

	return likely(n) ? n : ncpus_fill();
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
	n = asx__pol_activation(a, VPEV_WINDOW);
	return n < 0;
}

static __attribute__((noinline)) void yield_slow(struct asx_vp *vp, struct asx_asc_thread *self)
{
	struct asx_asc *a = self->asc;
	struct asx_asc_thread *next;

	if (!mode_locked()) {
		asx__inbox_drain(a);
		next = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, self);
	} else {
		if (__atomic_load_n(&asx__sched.need_act, __ATOMIC_RELAXED))
			asx__sweep_activation();
		__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
		spin_lock(&a->lock);
		sa_sync(a, vp);
		asx__inbox_drain(a);
		__atomic_store_n(&self->state, T_READY, __ATOMIC_RELAXED);
		if (unlikely(vp->passivate)) {
			/* give the VP back: self is queued for the others */
			POL_CALL(a, enqueue, self);
			next = NULL;
		} else {
			next = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, self);
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

/*
 * Everything but the single-VP fast path: DIRECT, the locked path and the
 * slow one.  Out of line so that the fast path keeps a small frame (this
 * half needs every callee-saved register).  Entered with in_sched set;
 * leaves the scheduler itself.
 */
static __attribute__((noinline)) void yield_other(struct asx_vp *vp,
						  struct asx_asc_thread *self)
{
	struct asx_asc *a = self->asc;
	struct asx_asc_thread *next;

	if (unlikely(POL_PER_THREAD(a))) {
		/* DIRECT: the thread owns its VP; yield it to the OS */
		mode_locked();
		sched_yield();
	} else if (likely(mode_get() == MODE_MULTI &&
			  !__atomic_load_n(&vp->passivate, __ATOMIC_RELAXED) &&
			  !__atomic_load_n(&asx__sched.need_act, __ATOMIC_RELAXED))) {
		/* the locked path: one spinlock round trip (none when biased) */
		bool crowded, biased;

		__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
		biased = asc_lock(a, vp);
		sa_sync(a, vp);
		if (unlikely(__atomic_load_n(&a->inbox, __ATOMIC_RELAXED)))
			asx__inbox_drain(a);
		if (unlikely((++a->ndispatch & 63) == 0) && window_end(a)) {
			/* a surplus VP: give it back, self is queued for the others */
			vp->passivate = 1;
			__atomic_store_n(&self->state, T_READY, __ATOMIC_RELAXED);
			POL_CALL(a, enqueue, self);
			next = NULL;
		} else {
			next = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, self);
		}
		/*
		 * With more running VPs than CPUs, a VP whose thread others
		 * wait for may be off the CPU while ours spin through
		 * user-level switches for a whole OS timeslice: every few
		 * yields let the OS run the other VPs.  Nothing else to run
		 * here: let the OS run other VPs at once.
		 */
		crowded = next == self ? !POL_CALL(a, nrunnable) :
			  (++vp->nyield & 3) == 0 && asc_running(a) > ncpus();
		asc_unlock(a, vp, biased);
		if (next == self)
			__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
		else
			switch_to(vp, self, next);
		if (unlikely(crowded))
			sched_yield();
	} else {
		yield_slow(vp, self);
	}
	leave_sched(self);
}

/*
 * The locked path of a VP that holds its ASC's lock biased (bias_enter):
 * the same steps as yield_other()'s, less what a one-VP ASC without
 * activations does not need (sa_sync: no activations; the crowding check:
 * its one VP is never more than the CPUs), out of line with a small frame.
 * Every 64th dispatch (the window check), and a section no longer biased,
 * go to yield_other().
 */
static __attribute__((noinline)) void yield_biased(struct asx_vp *vp,
						   struct asx_asc_thread *self)
{
	struct asx_asc *a = self->asc;
	struct asx_asc_thread *next;

	if (unlikely(__atomic_load_n(&vp->passivate, __ATOMIC_RELAXED) ||
		     __atomic_load_n(&asx__sched.need_act, __ATOMIC_RELAXED) ||
		     ((a->ndispatch + 1) & 63) == 0))
		goto other;
	__atomic_store_n(&self->switching, 1, __ATOMIC_RELAXED);
	if (unlikely(!bias_enter(a, vp)))
		goto other;
	if (unlikely(__atomic_load_n(&a->inbox, __ATOMIC_RELAXED)))
		asx__inbox_drain(a);
	a->ndispatch++;
	next = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, self);
	if (unlikely(next == self)) {
		bool idle = !POL_CALL(a, nrunnable);

		asc_unlock(a, vp, true);
		__atomic_store_n(&self->switching, 0, __ATOMIC_RELAXED);
		if (idle)
			sched_yield();	/* as yield_other(): let the OS run other VPs */
	} else {
		asc_unlock(a, vp, true);
		switch_to(vp, self, next);
	}
	leave_sched(self);
	return;
other:
	yield_other(vp, self);
}

/*
 * The paper's single-VP fast path: no lock, no atomic RMW, and (the rest
 * being in yield_other()) a frame of one saved register.  The policy's
 * schedule() is one indirect call; PRIO's answers a yield with one
 * rotation of its top level.
 */
void asx_asc_thread_yield(void)
{
	struct asx_vp *vp = asx__tls_vp;
	struct asx_asc_thread *self, *next, *prev;
	struct asx_asc *a;

	if (unlikely(!vp || !(self = vp->cur))) {
		sched_yield();
		return;
	}
	if (unlikely(asx__rcu_in_reader())) {
		/* a section never spans a switch (core/rcudepth.h) */
		asx__rcu_wait_fault("asx_asc_thread_yield");
		return;
	}
	a = self->asc;
	enter_sched(vp);
	if (unlikely(mode_get() != MODE_SINGLE || ASX_LOAD_RLX(&a->inbox) ||
		     POL_PER_THREAD(a))) {
		if (__atomic_load_n(&a->bias_vp, __ATOMIC_RELAXED) == vp)
			yield_biased(vp, self);
		else
			yield_other(vp, self);
		return;
	}
	next = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, self);
	if (likely(next != self)) {
		__atomic_store_n(&vp->nswitch, vp->nswitch + 1, __ATOMIC_RELAXED);	/* asx_asc_switches */
		note_switch(vp, a);
		__atomic_store_n(&vp->cur, next, __ATOMIC_RELAXED);	/* asx_asc_snapshot() reads it */
		__atomic_store_n(&next->vp, vp, __ATOMIC_RELAXED);	/* asx_asc_signal() reads it */
		prev = asx__ctx_switch(&self->ctx, &next->ctx, self);
		finish_switch(prev);
	}
	leave_sched(self);
}

void asx__block_self(struct asx_asc_thread *self)
{
	struct asx_vp *vp = self->vp;
	struct asx_asc *a = self->asc;
	struct asx_asc_thread *next;

	enter_sched(vp);
	__atomic_store_n(&self->state, T_BLOCKED, __ATOMIC_RELAXED);
	SCHED_FUZZ();
	if (!mode_locked()) {
		if (POL_HAS(a, block))
			POL_CALL(a, block, self);
		asx__inbox_drain(a);
		next = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, NULL);
	} else {
		bool biased = asc_lock(a, vp);

		sa_sync(a, vp);
		if (POL_HAS(a, block))
			POL_CALL(a, block, self);
		asx__inbox_drain(a);
		next = vp->passivate ? NULL : POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, NULL);
		a->ndispatch++;
		asc_unlock(a, vp, biased);
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
	struct asx_asc_thread *self = w->t;

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
				asx__claim_wake_owed(w, W_TIMEDOUT, NULL);	/* loses if woken meanwhile */
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
