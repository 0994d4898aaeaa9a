// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asc.c - an ASC's lifecycle: its attributes, creating it (the policy,
 * the activation group, the first VPs), destroying it (stopping and
 * joining its VPs, going back to the single-VP mode when one VP is
 * left), its statistics and name, and the dump the tests' watchdog reads.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/sa.h>

#include "asc/sched_impl.h"
#include "core/opts.h"

/* ---------------------------------------------------------------- ASCs */

/* The activation mode @attr asks for, the environment's if it says DEFAULT. */
static int act_mode(const struct asx_asc_opts *attr)
{
	enum asx_asc_activations m = ASX_ASC_ACT_DEFAULT;
	const char *e;

	if (attr)
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

static int asc_destroy(struct asx_asc *a);

static int asc_create(struct asx_asc **out, const struct asx_asc_policy *pol,
		      const struct asx_asc_opts *uattr)
{
	const struct asx_asc_opts *attr = NULL;
	struct asx_asc_opts at;
	struct asx_asc *a;
	unsigned int n, extra;
	int r, act;

	if (!out || !pol)
		return -EINVAL;
	if (uattr) {
		r = ASX__OPTS_COPY(&at, uattr);
		if (r)
			return r;
		attr = &at;
	}
	act = act_mode(attr);
	if (act < 0)
		return act;
	/* the sentinel fires this ASC's timers: it runs before any is armed */
	r = asx__sentinel_start();
	if (r)
		return r;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->pol = pol;
	a->ops = pol->ops;
	snprintf(a->name, sizeof(a->name), "%s", attr && attr->name ? attr->name : pol->name);
	n = attr && attr->nvps ? attr->nvps : 1;
	a->target = POL_PER_THREAD(a) ? 0 : n;
	a->max_vps = attr && attr->max_vps ? attr->max_vps : n + 64;
	if (a->max_vps < n)
		a->max_vps = n;
	a->semantic = attr && attr->semantic ? attr->semantic : pol->ops->semantic;
	a->act.idx = -1;
	a->act.kind = TN_ACT;
	a->act.asc = a;
	a->timeslice = attr && attr->timeslice_ns ? attr->timeslice_ns : 2000000;
	a->miss_ratio_max = attr && attr->miss_ratio_max > 0 ? attr->miss_ratio_max : 0.05;
	a->util_max = attr && attr->util_max > 0 ? attr->util_max : 1.0;
	if (pol->ops->state_size) {
		a->pstate = calloc(1, pol->ops->state_size);
		if (!a->pstate) {
			free(a);
			return -ENOMEM;
		}
	}
	r = POL_HAS(a, init) ? POL_CALL(a, init) : 0;
	if (!r) {
		r = asx__sa_setup(a, act, attr);
		if (r && POL_HAS(a, fini))
			POL_CALL(a, fini);
	}
	if (r) {
		free(a->pstate);
		free(a);
		return r;
	}
	pthread_mutex_lock(&asx__sched.cfg);
	a->next = asx__sched.ascs;
	asx__sched.ascs = a;
	if (a->sa && !POL_PER_THREAD(a) && a->target == 1 && !asx__sched.nvps &&
	    mode_get() == MODE_SINGLE && a->semantic == ASX_ASC_NONPREEMPTIVE &&
	    asx__membarrier_ready()) {
		/*
		 * Activations on one VP, the only one in the process: its
		 * spares park in the kernel at once, and the one that takes
		 * over for it switches to the locked path then, with an
		 * asymmetric fence (vp.c, asx__sa_wake_mode()).  Until then
		 * the VP keeps the lock-free single-VP path.
		 */
		asx__sched.sa_single = true;
		__atomic_store_n(&asx__sched.sa_home, a, __ATOMIC_RELAXED);
	} else if (POL_PER_THREAD(a) || a->sa) {
		/* VPs come and go with threads (DIRECT), or a spare takes over
		 * for a blocked VP at any time (activations): the locked path */
		asx__mode_before_new_vp();
		__atomic_store_n(&asx__sched.mode, MODE_MULTI, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&asx__sched.cfg);
	extra = a->sa ? a->spare_min : 0;	/* the spare pool: parks at once */
	for (unsigned int i = 0; !POL_PER_THREAD(a) && i < n + extra; i++) {
		r = asx__vp_spawn(a, NULL, false, i >= n);
		if (r) {
			a->target = i < n ? i : n;
			asc_destroy(a);
			return r;
		}
	}
	*out = a;
	return 0;
}

static int asc_destroy(struct asx_asc *a)
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
		asx__vp_wake(v);
	parked = a->nspare;
	spin_unlock(&a->lock);
	/* one post wakes one spare; each passes it on as it leaves */
	if (parked)
		asx_sa_post(a->sa, SA_STOP);
	/* an asx__vp_spawn() that listed its VP before dying has its pthread id
	 * written: it holds asx__sched.cfg from listing to pthread_create() */
	pthread_mutex_lock(&asx__sched.cfg);
	pthread_mutex_unlock(&asx__sched.cfg);
	for (v = a->vps; v; v = v->next)
		if (v->pth)
			pthread_join(v->pth, NULL);
	/* one deferred check in flight finishes before we free */
	asx__timer_del(&a->act);
	asx__sentinel_sync();
	/* a check that ran before it saw dying may have re-armed meanwhile */
	asx__timer_del(&a->act);
	pthread_mutex_lock(&asx__sched.cfg);
	for (pp = &asx__sched.ascs; *pp; pp = &(*pp)->next) {
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	}
	for (v = a->vps; v; v = v->next)
		if (v->pth)
			__atomic_sub_fetch(&asx__sched.nvps, 1, __ATOMIC_RELAXED);
	if (asx__sched.nvps <= 1) {
		/* the VPs left are joined: one VP can go lock-free again */
		struct asx_asc *b;
		bool direct = false;

		asx__sched.single = NULL;
		asx__sched.sa_single = false;
		__atomic_store_n(&asx__sched.sa_home, NULL, __ATOMIC_RELAXED);
		for (b = asx__sched.ascs; b; b = b->next) {
			direct |= POL_PER_THREAD(b) || b->sa;
			spin_lock(&b->lock);
			for (v = b->vps; v; v = v->next)
				if (v->pth && v->state != VP_EXITED)
					asx__sched.single = v;
			spin_unlock(&b->lock);
		}
		if (!direct && (asx__sched.nvps == 0 || asx__sched.single))
			__atomic_store_n(&asx__sched.mode, MODE_SINGLE, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&asx__sched.cfg);
	for (v = a->vps; v; v = n) {
		n = v->next;
		free(v);
	}
	asx__sa_teardown(a);
	if (POL_HAS(a, fini))
		POL_CALL(a, fini);
	free(a->pstate);
	free(a);
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
	st->sa_preempted = a->sa_npreempted;
	if (POL_HAS(a, stats))
		POL_CALL(a, stats, st);
	unlock_np(&a->lock);
	return 0;
}

uint64_t asx_asc_switches(struct asx_asc *a)
{
	uint64_t n = 0;

	if (!a)
		return 0;
	lock_np(&a->lock);
	for (struct asx_vp *v = a->vps; v; v = v->next)
		n += __atomic_load_n(&v->nswitch, __ATOMIC_RELAXED);
	unlock_np(&a->lock);
	return n;
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
		POL_CALL(a, nrunnable), __atomic_load_n(&a->inbox, __ATOMIC_RELAXED) ? "non-empty" : "empty",
		(unsigned long long)a->ndispatch, mode_get());
	for (struct asx_vp *v = a->vps; v; v = v->next) {
		struct asx_asc_thread *c = __atomic_load_n(&v->cur, __ATOMIC_RELAXED);
		struct asx_asc_thread *h = __atomic_load_n(&v->handoff, __ATOMIC_RELAXED);
		int st = __atomic_load_n(&v->state, __ATOMIC_RELAXED);

		fprintf(f, "  vp tid %d %s%s%s%s switches %llu in_sched %d\n",
			(int)v->tid, st >= 0 && st <= VP_SPARE ? vpstate_name[st] : "?",
			v->spare ? " (spare)" : "", v->passivate ? " passivate" : "",
			v->stop ? " stop" : "", (unsigned long long)v->nswitch, v->in_sched);
		for (int i = 0; i < 2; i++) {
			struct asx_asc_thread *t = i ? h : c;
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

/* ---------------------------------------------------------------- snapshot */

static const char *state_of(const char *const *names, int n, int st)
{
	return st >= 0 && st < n ? names[st] : "?";
}

/* Copy @a (locked) into @o, its VPs and threads from *@vp and *@th, at most
 * @room of each; the counts are the ASC's (the caller checks they fit). */
static void snap_one(struct asx_asc *a, struct asx_asc_snap *o, struct asx_asc_snap_vp *vp,
		     struct asx_asc_snap_thread *th, size_t room_vp, size_t room_th)
{
	const int nv = (int)(sizeof(vpstate_name) / sizeof(vpstate_name[0]));
	const int nt = (int)(sizeof(tstate_name) / sizeof(tstate_name[0]));

	snprintf(o->name, sizeof(o->name), "%s", a->name);
	snprintf(o->policy, sizeof(o->policy), "%s", a->pol->name);
	o->vps = vp;
	o->threads = th;
	o->nvps = o->nthreads = 0;
	for (struct asx_vp *v = a->vps; v; v = v->next, o->nvps++) {
		struct asx_asc_thread *c = __atomic_load_n(&v->cur, __ATOMIC_RELAXED);

		if (o->nvps >= room_vp)
			continue;
		vp[o->nvps].tid = __atomic_load_n(&v->tid, __ATOMIC_RELAXED);
		vp[o->nvps].state = state_of(vpstate_name, nv,
					     __atomic_load_n(&v->state, __ATOMIC_RELAXED));
		vp[o->nvps].cur = (uint64_t)(uintptr_t)c;
	}
	for (struct asx_asc_thread *t = a->threads; t; t = t->all_next, o->nthreads++) {
		struct asx_asc_snap_thread *x;

		if (o->nthreads >= room_th)
			continue;
		x = &th[o->nthreads];
		x->id = (uint64_t)(uintptr_t)t;
		x->state = state_of(tstate_name, nt, __atomic_load_n(&t->state, __ATOMIC_RELAXED));
		snprintf(x->name, sizeof(x->name), "%s", t->name);
		x->vp = 0;
		for (size_t i = 0; i < o->nvps && i < room_vp; i++)
			if (vp[i].cur == x->id)
				x->vp = vp[i].tid;
	}
}

int asx_asc_snapshot(struct asx_asc_snap **out, size_t *n)
{
	size_t nasc = 0, nvp = 0, nth = 0;

	if (!out || !n)
		return -EINVAL;
	*out = NULL;
	*n = 0;
	for (int tries = 0;; tries++) {
		/* sized with room to spare, filled, tried again if it grew past it */
		size_t ca = nasc + 4, cv = nvp + 16, ct = nth + 64;
		size_t sz = ca * sizeof(struct asx_asc_snap) + cv * sizeof(struct asx_asc_snap_vp) +
			    ct * sizeof(struct asx_asc_snap_thread);
		struct asx_asc_snap *s = tries ? malloc(sz) : NULL;
		struct asx_asc_snap_vp *vp = s ? (void *)(s + ca) : NULL;
		struct asx_asc_snap_thread *th = s ? (void *)(vp + cv) : NULL;
		size_t ua = 0, uv = 0, ut = 0;
		bool fits = true;

		if (tries && !s)
			return -ENOMEM;
		pthread_mutex_lock(&asx__sched.cfg);
		for (struct asx_asc *a = asx__sched.ascs; a; a = a->next, ua++) {
			struct asx_asc_snap tmp;

			lock_np(&a->lock);
			if (s && ua < ca) {
				snap_one(a, &s[ua], vp + uv, th + ut, uv < cv ? cv - uv : 0,
					 ut < ct ? ct - ut : 0);
				tmp = s[ua];
			} else {	/* (the first pass only counts) */
				tmp.nvps = tmp.nthreads = 0;
				for (struct asx_vp *v = a->vps; v; v = v->next)
					tmp.nvps++;
				for (struct asx_asc_thread *t = a->threads; t; t = t->all_next)
					tmp.nthreads++;
			}
			unlock_np(&a->lock);
			uv += tmp.nvps;
			ut += tmp.nthreads;
		}
		pthread_mutex_unlock(&asx__sched.cfg);
		fits = s && ua <= ca && uv <= cv && ut <= ct;
		if (fits) {
			*out = ua ? s : NULL;
			*n = ua;
			if (!ua)
				free(s);
			return 0;
		}
		free(s);
		nasc = ua;
		nvp = uv;
		nth = ut;
	}
}

/* ---------------------------------------------------------------- policies */

/*
 * The registry of policies by name (asx/asc_policy.h): the built-in ones,
 * then the ones registered, each with the count of ASCs made with it.
 * The lock is a leaf: nothing else is taken under it.
 */
const struct asx_asc_policy asx_asc_prio = { .ops = &asx__prio_ops, .name = "prio" };
const struct asx_asc_policy asx_asc_edf = { .ops = &asx__edf_ops, .name = "edf" };
const struct asx_asc_policy asx_asc_direct = { .ops = &asx__direct_ops, .name = "direct" };
const struct asx_asc_policy asx_asc_stride = { .ops = &asx__stride_ops, .name = "stride" };

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct asx_asc_policy *reg_list;
static const struct asx_asc_policy *const reg_builtin[] = {
	&asx_asc_prio, &asx_asc_edf, &asx_asc_direct, &asx_asc_stride,
};

/* Under reg_lock: the policy named @name, NULL if none. */
static const struct asx_asc_policy *reg_find(const char *name)
{
	for (size_t i = 0; i < sizeof(reg_builtin) / sizeof(reg_builtin[0]); i++)
		if (!strcmp(reg_builtin[i]->name, name))
			return reg_builtin[i];
	for (struct asx_asc_policy *p = reg_list; p; p = p->next)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

/* One more (@d 1) or one less (-1) ASC made with @pol; built-in ones are
 * not counted. */
static void pol_users(const struct asx_asc_policy *pol, int d)
{
	if (!pol->dynamic)
		return;
	pthread_mutex_lock(&reg_lock);
	((struct asx_asc_policy *)pol)->users += (unsigned int)d;	/* a malloc'd one */
	pthread_mutex_unlock(&reg_lock);
}

int asx_asc_policy_register(const struct asx_asc_policy_ops *ops)
{
	struct asx_asc_policy_ops *o;
	struct asx_asc_policy *p;
	int r;

	if (!ops)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	o = &p->copy;
	r = ASX__OPTS_COPY(o, ops);
	if (!r && (!o->name || !*o->name || strlen(o->name) >= sizeof(p->name) ||
		   !o->admit || !o->enqueue || !o->pick_next || !o->nrunnable ||
		   (o->flags & ~(ASX_ASC_POLICY_VP_PER_THREAD | ASX_ASC_POLICY_QOS_OPTIONAL)) ||
		   o->semantic > ASX_ASC_TIMESLICED))
		r = -EINVAL;
	if (r) {
		free(p);
		return r;
	}
	strcpy(p->name, o->name);
	o->name = p->name;
	p->ops = o;
	p->dynamic = true;
	pthread_mutex_lock(&reg_lock);
	if (reg_find(p->name)) {
		r = -EEXIST;
	} else {
		p->next = reg_list;
		reg_list = p;
	}
	pthread_mutex_unlock(&reg_lock);
	if (r)
		free(p);
	return r;
}

int asx_asc_policy_unregister(const char *name)
{
	struct asx_asc_policy **pp, *p = NULL;
	int r = -ENOENT;

	if (!name)
		return -EINVAL;
	pthread_mutex_lock(&reg_lock);
	for (pp = &reg_list; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, name))
			continue;
		p = *pp;
		if (p->users) {
			r = -EBUSY;
			p = NULL;
		} else {
			*pp = p->next;
			r = 0;
		}
		break;
	}
	if (r == -ENOENT && reg_find(name))
		r = -EPERM;	/* a built-in one */
	pthread_mutex_unlock(&reg_lock);
	free(p);
	return r;
}

int asx_asc_create(struct asx_asc **out, const struct asx_asc_policy *pol,
		   const struct asx_asc_opts *opts)
{
	int r;

	if (!out || !pol)
		return -EINVAL;
	pol_users(pol, 1);
	r = asc_create(out, pol, opts);
	if (r)
		pol_users(pol, -1);
	return r;
}

int asx_asc_create_by_name(struct asx_asc **out, const char *name,
			   const struct asx_asc_opts *opts)
{
	const struct asx_asc_policy *pol;
	int r;

	if (!out || !name)
		return -EINVAL;
	/* held by this call until the ASC holds it: no unregister between */
	pthread_mutex_lock(&reg_lock);
	pol = reg_find(name);
	if (pol && pol->dynamic)
		((struct asx_asc_policy *)pol)->users++;
	pthread_mutex_unlock(&reg_lock);
	if (!pol)
		return -ENOENT;
	r = asx_asc_create(out, pol, opts);
	pol_users(pol, -1);
	return r;
}

int asx_asc_destroy(struct asx_asc *a)
{
	const struct asx_asc_policy *pol;
	int r;

	if (!a)
		return -EINVAL;
	pol = a->pol;
	r = asc_destroy(a);
	if (!r)
		pol_users(pol, -1);
	return r;
}

const char *asx_asc_policy_name(const struct asx_asc *a)
{
	return a ? a->pol->name : NULL;
}

const char *asx_asc_name(const struct asx_asc *a)
{
	return a ? a->name : NULL;
}
