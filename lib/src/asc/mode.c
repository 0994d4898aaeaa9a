// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * mode.c - the process's scheduling mode with scheduler activations: the
 * single VP that runs threads lock-free while spares are parked in the
 * kernel, a spare back from the kernel taking its place or switching the
 * process to the locked path (MODE_MULTI), the way back to one VP, and
 * the mode change before a VP is added.  Moved out of vp.c so that
 * upcall.c, below vp.c, calls down into it.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "asc/sched_impl.h"
#include "core/futex.h"

/*
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) (asx__membarrier_ready(),
 * sched.c) makes every running thread of the process execute a full memory
 * barrier before it returns: with it, a VP switching the process to
 * MODE_MULTI (a store of the mode, the barrier, a read of the single VP's
 * in_sched and resting) needs nothing from the single VP's lock-free path
 * but its plain store of in_sched before its read of the mode (an
 * asymmetric Dekker pair).  The fast path pays nothing; the switch pays a
 * system call and IPIs, once, when a spare takes over.
 */

/* @vp touches no scheduler state without the lock: out of the scheduler, or resting */
static bool vp_quiet(struct asx_vp *vp)
{
	return !__atomic_load_n(&vp->in_sched, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&vp->resting, __ATOMIC_ACQUIRE);
}

/*
 * asx__sched.cfg held, in MODE_SINGLE with activations: switch to MODE_MULTI
 * and wait until @single (NULL: none to wait for) is out of any lock-free
 * operation it began before it could see the switch.
 */
static void go_multi_locked(struct asx_vp *single)
{
	__atomic_store_n(&asx__sched.going_multi, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&asx__sched.mode, MODE_MULTI, __ATOMIC_SEQ_CST);
	asx__sched.sa_single = false;
	if (single) {
		/* registered when sa_single was set: cannot fail but for a bug */
		if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0))
			abort();
		for (unsigned int i = 0; !vp_quiet(single); i++) {
			/* it blocked inside the scheduler (a page fault): rare */
			if (i < 64) {
				sched_yield();
			} else {
				struct timespec ts = { 0, 20000 };

				nanosleep(&ts, NULL);
			}
		}
	}
	__atomic_store_n(&asx__sched.going_multi, 0, __ATOMIC_RELEASE);
}

void asx__sa_wake_mode(struct asx_vp *self)
{
	struct asx_vp *s;

	if (likely(mode_get() == MODE_MULTI &&
		   !__atomic_load_n(&asx__sched.going_multi, __ATOMIC_ACQUIRE))) {
		__atomic_store_n(&self->resting, 0, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return;
	}
	pthread_mutex_lock(&asx__sched.cfg);
	s = asx__sched.single;
	if (mode_get() == MODE_SINGLE && asx__sched.sa_single) {
		if (!s || s == self || __atomic_load_n(&s->resting, __ATOMIC_ACQUIRE)) {
			/*
			 * The VP that ran threads is parked (or is us): we are
			 * the one that runs them now, lock-free.  It reads
			 * asx__sched.single here when it comes back.
			 */
			asx__sched.single = self;
			__atomic_store_n(&self->resting, 0, __ATOMIC_RELAXED);
			pthread_mutex_unlock(&asx__sched.cfg);
			__atomic_signal_fence(__ATOMIC_SEQ_CST);
			return;
		}
		/* it runs threads: a spare taking over, the locked path from now */
		go_multi_locked(s);
	}
	pthread_mutex_unlock(&asx__sched.cfg);
	while (__atomic_load_n(&asx__sched.going_multi, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_store_n(&self->resting, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void asx__sa_try_single(struct asx_asc *a, struct asx_vp *self)
{
	struct asx_vp *v, *run = NULL;
	int n = 0;

	if (likely(mode_get() != MODE_MULTI) ||
	    __atomic_load_n(&asx__sched.sa_home, __ATOMIC_RELAXED) != a ||
	    a->nblocked || a->dying || asc_running(a) != 1)
		return;
	for (v = a->vps; v; v = v->next) {
		if (v->state == VP_RUNNING) {
			run = v;
			n++;
		}
	}
	if (n != 1 || run == self)
		return;
	/*
	 * The lock order is cfg, then an ASC's: try it only.  The running
	 * VP reads MODE_SINGLE at its next scheduling point and goes
	 * lock-free; whatever it does under the lock meanwhile stays
	 * correct.  Every other VP of @a is parked or gone (and calls
	 * asx__sa_wake_mode() when it comes back), no other ASC has VPs,
	 * and pthreads outside only ever push onto the inbox.
	 */
	if (pthread_mutex_trylock(&asx__sched.cfg))
		return;
	if (asx__sched.sa_home == a && mode_get() == MODE_MULTI &&
	    !__atomic_load_n(&asx__sched.going_multi, __ATOMIC_RELAXED)) {
		asx__sched.single = run;
		asx__sched.sa_single = true;
		__atomic_store_n(&asx__sched.mode, MODE_SINGLE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&asx__sched.cfg);
}

void asx__mode_before_new_vp(void)
{
	/* asx__sched.cfg held */
	if (mode_get() == MODE_MULTI || asx__sched.nvps == 0)
		return;
	if (asx__sched.sa_single) {
		/* the single VP may be parked in the kernel: no handshake */
		go_multi_locked(asx__sched.single == asx__tls_vp ? NULL : asx__sched.single);
		return;
	}
	if (asx__tls_vp) {
		/* we are the single VP, between operations */
		__atomic_store_n(&asx__sched.mode, MODE_MULTI, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&asx__sched.ack, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&asx__sched.mode, MODE_REQUEST, __ATOMIC_RELEASE);
	struct asx_vp *v = asx__sched.single;
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
		asx__vp_wake(v);
	} else {
		spin_unlock(&a->lock);
	}
	while (!__atomic_load_n(&asx__sched.ack, __ATOMIC_ACQUIRE))
		asx_futex_wait(&asx__sched.ack, 0, NULL);
}
