// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * upcall.c - the consumer of scheduler activations (Documentation/sa.rst):
 * an ASC's activation group, its VPs joining and leaving it, the spares
 * parked in the kernel's wait, and what they do with the events they read
 * (a blocked VP taken over, an unblocked one counted back, the posts that
 * wake a spare or refill the pool).  Without activations (the wrapper
 * path) none of this runs: vp.c's asx__vp_blocked() tells the policy.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <asx/sa.h>

#include "asc/sched_impl.h"
#include "core/probes.h"
#include "sa/group.h"

#define SA_BATCH	16
#define SA_SPARES_DEF	2
/* a spare beyond the target and the pool leaves after this long parked */
#define SA_RETIRE_NS	1000000000ULL

/* ---------------------------------------------------------------- the group */

/* Opens @a's activation group if @mode and the module allow; 0 or -errno. */
int asx__sa_setup(struct asx_asc *a, int mode, const struct asx_asc_opts *attr)
{
	unsigned int spares = attr && attr->spare_vps ?
		attr->spare_vps : SA_SPARES_DEF;
	struct asx_sa_group *g;
	unsigned int cap;
	int r;

	if (mode == ASX_ASC_ACT_OFF || (mode == ASX_ASC_ACT_AUTO && POL_PER_THREAD(a)))
		return 0;
	if (POL_PER_THREAD(a))
		return -EOPNOTSUPP;	/* DIRECT: a VP per thread, nothing to take over */
	/* Every VP joins the group: the first ones and the pool must fit, and
	 * the group's size is the ASC's max_vps from now on. */
	if (a->target + spares > ASX_SA_MAX_VPS)
		return mode == ASX_ASC_ACT_ON ? -EINVAL : 0;
	cap = a->max_vps < a->target + spares ? a->target + spares : a->max_vps;
	if (cap > ASX_SA_MAX_VPS)
		cap = ASX_SA_MAX_VPS;
	ASX_OPTS(struct asx_sa_opts, o, .max_vps = cap);
	if (attr && attr->act_preempted)
		o.flags = ASX_SA_PREEMPT;
	r = asx_sa_open(&g, &o);
	if (r == -EOPNOTSUPP && mode == ASX_ASC_ACT_AUTO) {
		o.flags = 0;	/* activations without PREEMPTED */
		r = asx_sa_open(&g, &o);
	}
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

void asx__sa_teardown(struct asx_asc *a)
{
	if (!a->sa)
		return;
	asx_sa_close(a->sa);
	a->sa = NULL;
	free(a->sa_map);
	a->sa_map = NULL;
}

/* ---------------------------------------------------------------- events */

/* The calling VP joins its ASC's activation group (Documentation/sa.rst). */
void asx__sa_join_self(struct asx_asc *a, struct asx_vp *vp)
{
	int id = asx_sa_join(a->sa);

	/* asx__vp_spawn() held a place for it: only a failing module (-ENOMEM)
	 * leaves it outside, to run unreported as on the wrapper path */
	spin_lock(&a->lock);
	if (id >= 0 && (unsigned int)id < a->sa_nmap) {
		vp->sa_id = id;
		vp->sa_next = 0;
		a->sa_map[id] = vp;
	}
	spin_unlock(&a->lock);
}

void asx__sa_leave_self(struct asx_asc *a, struct asx_vp *vp)
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
	vp_now_running(a, self);
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

/*
 * Under the lock: @v, running, blocked in the kernel (BLOCKED) or was
 * preempted there (PREEMPTED): it no longer runs threads, so the policy
 * may want another VP; spare @self is the first it gets.  With @last_only
 * (PREEMPTED) the policy is asked only when no other VP runs: one that
 * does already serves the queue, and a spare beside it would only be one
 * kernel thread more on CPUs that are taken (asx-bench sa-preempt measured
 * that slower).  True when @self is to run threads.
 */
static bool sa_vp_stalled(struct asx_asc *a, struct asx_vp *self, struct asx_vp *v,
			  bool last_only, bool run, struct asx_vp **wk, int *k, int max,
			  struct vp_todo *td)
{
	int want;

	v->sa_blocked = true;
	v->state = VP_BLOCKED;
	a->nblocked++;
	ASX_PROBE2(asc_vp_blocked, a, v);
	if (last_only && asc_running(a))
		return run;
	want = asx__pol_activation(a, VPEV_BLOCKED);
	if (want > 0 && !run) {
		sa_take_over(a, self, td);
		run = true;
		want--;
	}
	if (want > 0)
		*k += asx__activate_n(a, want, NULL, wk + *k, max - *k, td);
	return run;
}

/* Under the lock: can a VP more run a thread? */
static bool sa_wants_vp(struct asx_asc *a)
{
	return POL_CALL(a, nrunnable) && asc_running(a) < a->target && !a->dying;
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
			a->sa_nblocked++;
			run = sa_vp_stalled(a, self, v, false, run, wk, k, max, td);
			break;
		case ASX_SA_PREEMPTED:
			/*
			 * The kernel took @v's CPU: its thread waits for it,
			 * but the queued ones need not.  Counted out like a
			 * blocked VP (a spare runs them), back at RESUMED or
			 * at its next scheduling point, whichever is first.
			 */
			if (!v || v->state != VP_RUNNING || v->sa_blocked)
				break;
			a->sa_npreempted++;
			run = sa_vp_stalled(a, self, v, true, run, wk, k, max, td);
			break;
		case ASX_SA_UNBLOCKED:
		case ASX_SA_RESUMED:
			if (v && v->sa_blocked)
				asx__sa_unblocked_locked(a, v);
			break;
		case ASX_SA_EXITED:
			if (v && v->sa_blocked)
				asx__sa_unblocked_locked(a, v);
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
					asx__sa_unblocked_locked(a, w);
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
					*k += asx__activate_n(a, 1, NULL, wk + *k, max - *k, td);
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
 * what wakes it.  vp.c's loop calls asx__sa_park_begin(), then
 * asx__sa_park_batch() until it says what next, running after each the
 * vp_todo the batch's events leave owed (a VP to make, posts).
 *
 * asx__sa_park_begin() returns (unlocked) true to run threads at once;
 * false to park, with *@excess set (more VPs parked than the target and
 * the pool need).
 */
bool asx__sa_park_begin(struct asx_asc *a, struct asx_vp *vp, bool *excess)
{
	bool gave_back = vp->passivate;

	vp->act_cpu = 0;
	vp->passivate = 0;
	if (vp->state != VP_SPARE) {
		vp->state = VP_SPARE;
		a->nspare++;
		if (gave_back)
			asx__act_watch(a);	/* as vp_idle() */
		/*
		 * A VP giving its place back (passivate) races with the
		 * BLOCKED of another: if that was acted on while we still
		 * counted as running, nobody took over.  Whoever comes
		 * second sees the other: here, we stay if the policy wants
		 * a VP at once (PRIO: threads queued and none running).
		 */
		if (!a->dying && !__atomic_load_n(&vp->stop, __ATOMIC_RELAXED) &&
		    asx__pol_activation(a, VPEV_RUNNABLE) > 0) {
			vp->state = VP_RUNNING;
			a->nspare--;
			spin_unlock(&a->lock);
			return true;
		}
		asx__sa_try_single(a, vp);
	}
	/*
	 * Resting from here (asx__sa_wake_mode()): what is left under the
	 * lock is the VP bookkeeping, and a WAKE posted once the lock is
	 * dropped may reach a spare before we are in the kernel's wait: it
	 * should take our place, not switch the process to the locked path.
	 */
	__atomic_store_n(&vp->resting, 1, __ATOMIC_RELEASE);
	*excess = sa_excess(a);
	spin_unlock(&a->lock);
	ASX_PROBE1(asc_vp_idle, vp);
	return false;
}

/*
 * One wait in the kernel and the events it read (unlocked on entry and
 * return): SA_PARK_AGAIN to wait again, SA_PARK_RUN to run threads,
 * SA_PARK_EXIT to exit (SA_PARK_STOP: exit, and pass the stop on to a
 * parked spare with an SA_STOP post).  What the events owe is in *@td.
 */
int asx__sa_park_batch(struct asx_asc *a, struct asx_vp *vp, bool *excess, struct vp_todo *td)
{
	struct asx_sa_event ev[SA_BATCH];
	struct asx_vp *wk[4];
	bool run, stop, retire = false;
	unsigned int left = 0;
	struct timespec dl;
	int n, k = 0;

	/* from here to asx__sa_wake_mode(): no scheduler state touched */
	__atomic_store_n(&vp->resting, 1, __ATOMIC_RELEASE);
	if (*excess) {
		uint64_t d = asx_now_ns() + SA_RETIRE_NS;

		dl.tv_sec = (time_t)(d / ASX_NSEC_PER_SEC);
		dl.tv_nsec = (long)(d % ASX_NSEC_PER_SEC);
	}
	n = asx_sa_wait(a->sa, ev, SA_BATCH, *excess ? &dl : NULL);
	if (n < 0 && n != -EINTR && n != -ETIMEDOUT) {
		/* not expected (the group is ours until we leave):
		 * do not spin on it, and keep seeing stop */
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	/* the single VP may run lock-free: take its place or lock it out */
	asx__sa_wake_mode(vp);
	spin_lock(&a->lock);
	if (n > 0)
		a->sa_upcalls++;
	asx__inbox_drain(a);
	run = sa_events(a, vp, ev, n > 0 ? n : 0, wk, &k, (int)ASX_ARRAY_SIZE(wk), td);
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
	*excess = sa_excess(a);
	spin_unlock(&a->lock);
	asx__wake_list(wk, k);
	if (stop)	/* with spares left, pass the word on: one post wakes one */
		return left ? SA_PARK_STOP : SA_PARK_EXIT;
	if (retire)
		return SA_PARK_EXIT;
	if (run) {
		ASX_PROBE1(asc_vp_active, vp);
		return SA_PARK_RUN;
	}
	return SA_PARK_AGAIN;
}
