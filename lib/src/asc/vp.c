// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * vp.c - the ASC's virtual processors: the VP loop (idle on a futex, or
 * parked in the kernel with activations, upcall.c), making a VP and
 * running what the hot path recorded as owed (a struct vp_todo: a VP to
 * make, posts to spares), the sentinel's deferred activation check,
 * blocking calls on the wrapper path (the activation policy hears of
 * them), and adding or removing a VP.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <asx/sa.h>

#include "asc/sched_impl.h"
#include "core/futex.h"
#include "core/probes.h"

/* ---------------------------------------------------------------- VP loop */

static void vp_idle(struct asx_asc *a, struct asx_vp *vp)
{
	bool gave_back = vp->passivate;

	/* under a->lock */
	vp->state = VP_IDLE;
	vp->act_cpu = 0;	/* its CPU mark is stale once it runs again */
	vp->passivate = 0;
	vp->idle_next = a->idle;
	a->idle = vp;
	a->nidle++;
	/* surplus a moment ago: watch whether the threads left queued turn
	 * CPU-bound (then the VPs still running no longer keep up) */
	if (gave_back)
		asx__act_watch(a);
	__atomic_store_n(&vp->wake, 0, __ATOMIC_RELAXED);
	spin_unlock(&a->lock);
	ASX_PROBE1(asc_vp_idle, vp);
	__atomic_store_n(&vp->resting, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&vp->wake, __ATOMIC_ACQUIRE))
		asx_futex_wait(&vp->wake, 0, NULL);
	/* before the loop reads the mode again (asx__sa_wake_mode()) */
	__atomic_store_n(&vp->resting, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	ASX_PROBE1(asc_vp_active, vp);
}

/*
 * With activations, entered under the lock with nothing to run: park in
 * the kernel as a spare (upcall.c) and run what each batch of events
 * owes.  Returns (unlocked) true to run threads again, false to exit.
 */
static bool vp_park(struct asx_asc *a, struct asx_vp *vp)
{
	bool excess;
	int r;

	if (asx__sa_park_begin(a, vp, &excess))
		return true;
	do {
		struct vp_todo td = { 0 };

		r = asx__sa_park_batch(a, vp, &excess, &td);
		asx__vp_todo_run(a, &td);
	} while (r == SA_PARK_AGAIN);
	if (r == SA_PARK_STOP)
		asx_sa_post(a->sa, SA_STOP);
	return r == SA_PARK_RUN;
}

/*
 * Wait until @t's context is saved.  Only a VP's own loop waits for as
 * long as it takes: it holds no thread whose switch-out another VP may be
 * waiting for.  A thread switching out must not wait there (two VPs, each
 * switching out the thread the other picked, would wait for each other),
 * so it gives @next to its VP's loop instead (asx__vp_handoff()).
 */
static void wait_saved(struct asx_asc_thread *t)
{
	unsigned int spins = 0;

	while (unlikely(!ctx_saved(t))) {
		if (++spins < 256)
			asx_cpu_relax();
		else
			sched_yield();	/* the VP saving it is off the CPU */
	}
}

static void *vp_main(void *arg)
{
	struct asx_vp *vp = arg;
	struct asx_asc *a = vp->asc;

	asx__tls_vp = vp;
	__atomic_store_n(&vp->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
	asx__ctx_init_self(&vp->ctx);
	if (a->semantic == ASX_ASC_PREEMPTIVE || a->semantic == ASX_ASC_TIMESLICED)
		asx__preempt_tick_start(vp);
	if (a->sa) {
		asx__sa_join_self(a, vp);
		/* the pool (made VP_SPARE): parked before it looks for threads */
		spin_lock(&a->lock);
		if (vp->state != VP_SPARE)
			spin_unlock(&a->lock);
		else if (!vp_park(a, vp))
			goto out;
	}
	for (;;) {
		struct asx_asc_thread *t = NULL;
		bool locked;

		/* in_sched before the mode is read (asx__sa_wake_mode()) */
		enter_sched(vp);
		locked = mode_locked();
		if (locked) {
			spin_lock(&a->lock);
			sa_sync(a, vp);
		}
		asx__inbox_drain(a);
		if (!vp->passivate && !__atomic_load_n(&vp->stop, __ATOMIC_ACQUIRE))
			t = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, NULL);
		if (locked) {
			a->ndispatch++;
			spin_unlock(&a->lock);
		}
		if (t) {
			/* run @t, then each thread a switch-out left to us (asx__vp_handoff) */
			do {
				struct asx_asc_thread *prev;

				wait_saved(t);
				note_switch(vp, t->asc);
				__atomic_store_n(&vp->cur, t, __ATOMIC_RELAXED);	/* asx_asc_snapshot() reads it */
				__atomic_store_n(&t->vp, vp, __ATOMIC_RELAXED);	/* asx_asc_signal() reads it */
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
		asx__inbox_drain(a);
		if (!vp->passivate && !__atomic_load_n(&vp->stop, __ATOMIC_RELAXED))
			t = POL_CALL(a, pick_next, (struct asx_asc_vp *)vp, NULL);
		if (t) {
			/* queued while we looked: loop and run it */
			POL_CALL(a, enqueue, t);
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
		if (vp->passivate && POL_CALL(a, nrunnable) && asc_running(a) <= 1) {
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
			if (!vp_park(a, vp))
				break;
			continue;
		}
		vp_idle(a, vp);
	}
out:
	/* touches no run queue from here on */
	__atomic_store_n(&vp->resting, 1, __ATOMIC_RELEASE);
	if (vp->has_tick)
		timer_delete(vp->tick);
	if (vp->sa_id >= 0)
		asx__sa_leave_self(a, vp);
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
/* A new VP for @a (sched_impl.h). */
int asx__vp_spawn(struct asx_asc *a, struct asx_asc_thread *bound, bool spare, bool park)
{
	struct asx_vp *vp = calloc(1, sizeof(*vp));
	pthread_attr_t pa;
	bool sa_pool;
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
	pthread_mutex_lock(&asx__sched.cfg);
	/* a spare of the pool while activations run on one VP: it parks before
	 * it touches anything, the single VP runs on (asx__sa_wake_mode()) */
	sa_pool = park && asx__sched.sa_single;
	if (asx__sched.sa_home != a)	/* VPs of two ASCs: no way back to one VP */
		__atomic_store_n(&asx__sched.sa_home, NULL, __ATOMIC_RELAXED);
	if (!sa_pool)
		asx__mode_before_new_vp();
	lock_np(&a->lock);
	/* with activations every VP must fit in the group (max_vps) */
	r = a->dying ? -ESHUTDOWN : (spare || a->sa) && !vp_room(a) ? -EAGAIN : 0;
	if (r) {
		unlock_np(&a->lock);
		pthread_mutex_unlock(&asx__sched.cfg);
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
	__atomic_add_fetch(&asx__sched.nvps, 1, __ATOMIC_RELAXED);
	if (!sa_pool)
		asx__sched.single = vp;
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
		__atomic_sub_fetch(&asx__sched.nvps, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&asx__sched.cfg);
		np_leave(true);
		return -r;
	}
	pthread_mutex_unlock(&asx__sched.cfg);
	np_leave(true);
	ASX_PROBE2(asc_vp_new, a, vp);
	return 0;
}

uint64_t asx__activation_check(struct asx_asc *a)
{
	struct asx_vp *wk[1];
	int k = 0;
	uint64_t again = 0, now = asx_now_ns();

	spin_lock(&a->lock);
	if (!a->dying && POL_CALL(a, nrunnable) && asc_running(a) < a->target) {
		/*
		 * The running VPs did not get round the queue in ACT_DELAY_NS
		 * (on average over the span since the last check, which
		 * backs off), although they had the CPU: one more.
		 */
		uint64_t span = now - a->act_t, disp = a->ndispatch - a->act_mark;
		bool had = asx__vps_had_cpu(a, now);

		if ((disp * ACT_DELAY_NS < POL_CALL(a, nrunnable) * span && had) ||
		    asc_running(a) == 0)
			k = asx__activate_n(a, 1, NULL, wk, 1, NULL);
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
	asx__wake_list(wk, k);
	return again;
}

/* ---------------------------------------------------------------- what the hot path owes */

/* After the lock: what asx__activate_n() or asx__wake_owed() left in *@td. */
void asx__vp_todo_run(struct asx_asc *a, struct vp_todo *td)
{
	for (; td->post; td->post--)
		asx_sa_post(a->sa, SA_WAKE);
	if (td->refill)
		asx_sa_post(a->sa, SA_REFILL);
	if (td->spawn)
		asx__vp_spawn(a, NULL, true, false);
	if (td->pool)
		asx__vp_spawn(a, NULL, true, true);
	td->spawn = td->pool = td->refill = false;
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
	/*
	 * Not preemptible from here until asx__vp_unblocked(): a preemption
	 * taken on the way would move the thread to another VP and leave
	 * this one counted blocked while it runs other threads, and one
	 * taken while the VP counts as blocked would do the same.
	 */
	np_enter();
	if (mode_get() != MODE_MULTI) {
		/* the only VP: others may need to run while we block, and from
		 * now on pthreads outside may make a spare, so lock */
		pthread_mutex_lock(&asx__sched.cfg);
		mode_locked();
		__atomic_store_n(&asx__sched.mode, MODE_MULTI, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&asx__sched.cfg);
	}
	spin_lock(&a->lock);
	asx__inbox_drain(a);
	vp->state = VP_BLOCKED;
	a->nblocked++;
	k = activate_locked(a, VPEV_BLOCKED, NULL, wk, 2, &td);
	spin_unlock(&a->lock);
	ASX_PROBE2(asc_vp_blocked, a, vp);
	asx__wake_list(wk, k);
	asx__vp_todo_run(a, &td);
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
	/* still not preemptible (asx__vp_blocked()) until the books agree */
	spin_lock(&a->lock);
	vp->state = VP_RUNNING;
	a->nblocked--;
	n = asx__pol_activation(a, VPEV_UNBLOCKED);
	if (n < 0)
		vp->passivate = 1;	/* at our next scheduling point */
	spin_unlock(&a->lock);
	np_leave(true);
	ASX_PROBE2(asc_vp_unblocked, a, vp);
	if (n < 0)
		asx_asc_thread_yield();
}

void asx_asc_blocking_begin(void)
{
	asx__vp_blocked();
}

void asx_asc_blocking_end(void)
{
	asx__vp_unblocked();
}

int asx_asc_add_vp(struct asx_asc *a)
{
	int r;

	if (!a || POL_PER_THREAD(a))
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
	r = asx__vp_spawn(a, NULL, false, false);
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
	if (!a || POL_PER_THREAD(a))
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
