// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * thread.c - the Thread Manager: groups of pthreads and ASC user threads
 * with cooperative cancellation and suspension at safe points.
 *
 * One mutex per manager guards every record.  The manager's mutex and
 * conditions are asx_mutex / asx_cond, which wait through the one wait
 * primitive: a wait, join, suspension park or sleep called on an ASC user
 * thread parks that user thread (its VP runs the others), and on a pthread
 * sleeps on a futex as before.  A user thread finds its record in its own
 * slot (asx__uthread_slot), a pthread in thread-local `cur`: a VP's
 * thread-local storage is shared by every user thread it runs.  Each thread also carries an
 * atomic "attention" word mirroring its cancel flag and whether it has a
 * suspension pending, so a test point with nothing to do is one load.
 *
 * A record is "safe" while its thread cannot be running user code: before
 * its function starts, while parked, while in asx_thr_sleep(), and while
 * blocked in a wait/suspend call on its own manager.  Leaving a safe
 * region always passes through park(), so a suspension that arrived in the
 * meantime is honoured before user code runs again.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/sync.h>
#include <asx/thread.h>
#include "asc/wait.h"
#include "core/compiler.h"
#include "core/probes.h"
#include "core/opts.h"

#define ATTN_CANCEL	1u
#define ATTN_SUSPEND	2u

struct list {
	struct list *next, *prev;
};

struct thr {
	struct list node;		/* mgr->threads, or a reap list */
	struct asx_thr_mgr *mgr;
	asx_thr_fn fn;
	void *arg;
	void *ret;			/* written by the thread itself */
	pthread_t pt;
	struct asx_asc_thread *ut;	/* an ASC user thread (opts->asc), or NULL */
	struct asx_cond cv;		/* wakes the thread: resume, cancel */
	int id;
	int group;
	unsigned int susp;		/* nested suspensions pending */
	bool cancel;
	bool safe;
	bool exited;			/* function returned (or pthread_exit) */
	_Atomic unsigned int attn;	/* ATTN_*, written under mgr->lock */
};

struct group_depth {
	struct group_depth *next;
	int group;
	unsigned int depth;
};

struct asx_thr_mgr {
	struct asx_mutex lock;
	struct asx_cond exit_cv;	/* a thread exited */
	struct asx_cond park_cv;	/* a thread became safe/exited/cancelled */
	struct list threads;		/* unreaped records in spawn order */
	int next_id;
	int live;			/* records not yet exited */
	bool dying;			/* destroy in progress */
	unsigned int all_depth;		/* suspend_all calls in force */
	struct group_depth *groups;	/* suspend_group calls in force */
};

enum sel_kind { SEL_ALL, SEL_GROUP, SEL_ID };

struct sel {
	enum sel_kind kind;
	int v;
};

static __thread struct thr *cur;	/* a managed pthread's record */

/*
 * The caller's record: a managed pthread's `cur` (one load: the test
 * point's fast path), else a user thread's own slot.  A VP is never a
 * managed pthread, so a user thread always finds `cur` NULL.
 */
static inline struct thr *me(void)
{
	struct thr *t = cur;
	void **slot;

	if (likely(t))
		return t;
	slot = asx__uthread_slot();
	return slot ? *slot : NULL;
}

static inline struct thr *node_thr(struct list *n)
{
	return container_of(n, struct thr, node);
}

#define for_each_thr(t, m)						\
	for (struct list *_n = (m)->threads.next;			\
	     _n != &(m)->threads && ((t) = node_thr(_n), 1); _n = _n->next)

static void list_add_tail(struct list *n, struct list *head)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static void list_del(struct list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

static bool sel_match(const struct sel *s, const struct thr *t)
{
	switch (s->kind) {
	case SEL_GROUP:
		return t->group == s->v;
	case SEL_ID:
		return t->id == s->v;
	default:
		return true;
	}
}

/*
 * 0, or ETIMEDOUT once @dl (CLOCK_MONOTONIC) has passed; NULL waits for
 * ever.  Parks a user thread, sleeps a pthread.
 */
static int cv_wait(struct asx_cond *cv, struct asx_mutex *lock,
		   const struct timespec *dl)
{
	if (!dl) {
		asx_cond_wait(cv, lock);
		return 0;
	}
	return asx_cond_timedwait(cv, lock, dl) == -ETIMEDOUT ? ETIMEDOUT : 0;
}

/* The thread that calls, if it belongs to @m. */
static struct thr *self_in(const struct asx_thr_mgr *m)
{
	struct thr *t = me();

	return t && t->mgr == m ? t : NULL;
}

static struct thr *find_id(struct asx_thr_mgr *m, int id)
{
	struct thr *t;

	for_each_thr(t, m)
		if (t->id == id)
			return t;
	return NULL;
}

static void update_attn(struct thr *t)
{
	unsigned int a = (t->cancel ? ATTN_CANCEL : 0) | (t->susp ? ATTN_SUSPEND : 0);

	atomic_store_explicit(&t->attn, a, memory_order_release);
}

/*
 * Called by @t itself with the lock held: stay here while suspended and
 * not cancelled.  Parked counts as safe.
 */
static void park(struct asx_thr_mgr *m, struct thr *t)
{
	bool was_safe = t->safe;

	if (!t->susp || t->cancel)
		return;
	t->safe = true;
	asx_cond_broadcast(&m->park_cv);
	ASX_PROBE1(thr_suspend, t->id);
	while (t->susp && !t->cancel)
		asx_cond_wait(&t->cv, &m->lock);
	ASX_PROBE1(thr_resume, t->id);
	t->safe = was_safe;
}

static void enter_safe(struct asx_thr_mgr *m, struct thr *t)
{
	t->safe = true;
	if (t->susp)
		asx_cond_broadcast(&m->park_cv);
}

static void leave_safe(struct asx_thr_mgr *m, struct thr *t)
{
	park(m, t);
	t->safe = false;
}

static struct group_depth *group_depth(struct asx_thr_mgr *m, int group)
{
	struct group_depth *g;

	for (g = m->groups; g; g = g->next)
		if (g->group == group)
			return g;
	return NULL;
}

/* Suspensions a thread of @group spawned now must start with. */
static unsigned int inherited_susp(struct asx_thr_mgr *m, int group)
{
	struct group_depth *g = group_depth(m, group);

	return m->all_depth + (g ? g->depth : 0);
}

static void group_depth_put(struct asx_thr_mgr *m, int group)
{
	struct group_depth **pp, *g;

	for (pp = &m->groups; (g = *pp); pp = &g->next) {
		if (g->group != group)
			continue;
		if (--g->depth == 0) {
			*pp = g->next;
			free(g);
		}
		return;
	}
}

/* ------------------------------------------------------------ lifetime */

int asx_thr_mgr_create(struct asx_thr_mgr **out)
{
	struct asx_thr_mgr *m;

	if (!out)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	asx_mutex_init(&m->lock);
	asx_cond_init(&m->exit_cv);
	asx_cond_init(&m->park_cv);
	m->threads.next = m->threads.prev = &m->threads;
	*out = m;
	return 0;
}

static int cancel_sel(struct asx_thr_mgr *m, const struct sel *s);
static int wait_sel(struct asx_thr_mgr *m, const struct sel *s,
		    struct asx_thr_status *st, size_t nst, void **ret1,
		    const struct timespec *dl);

int asx_thr_mgr_destroy(struct asx_thr_mgr *m)
{
	static const struct sel all = { SEL_ALL, 0 };
	struct group_depth *g;

	if (!m)
		return 0;
	if (self_in(m))
		return -EDEADLK;
	asx_mutex_lock(&m->lock);
	m->dying = true;		/* late spawns start cancelled */
	asx_mutex_unlock(&m->lock);
	cancel_sel(m, &all);
	wait_sel(m, &all, NULL, 0, NULL, NULL);

	while ((g = m->groups)) {
		m->groups = g->next;
		free(g);
	}
	asx_cond_destroy(&m->park_cv);
	asx_cond_destroy(&m->exit_cv);
	asx_mutex_destroy(&m->lock);
	free(m);
	return 0;
}

/* ------------------------------------------------------------ spawn */

/* Runs in the exiting thread, on return or pthread_exit(). */
static void thr_finish(void *arg)
{
	struct thr *t = arg;
	struct asx_thr_mgr *m = t->mgr;

	asx_mutex_lock(&m->lock);
	ASX_PROBE2(thr_exit, t->id, t->ret);
	t->exited = true;
	t->safe = true;
	m->live--;
	asx_cond_broadcast(&m->exit_cv);
	asx_cond_broadcast(&m->park_cv);
	asx_mutex_unlock(&m->lock);
	if (!t->ut)
		cur = NULL;
}

static void *thr_start(void *arg)
{
	struct thr *t = arg;
	struct asx_thr_mgr *m = t->mgr;
	void *ret;

	cur = t;
	pthread_cleanup_push(thr_finish, t);
	asx_mutex_lock(&m->lock);
	leave_safe(m, t);		/* born suspended: park before running */
	asx_mutex_unlock(&m->lock);
	ret = t->fn(t->arg);
	t->ret = ret;
	pthread_cleanup_pop(1);
	return ret;
}

/*
 * An ASC user thread's body: its record in its own slot (not `cur`: a
 * VP's thread-local storage is shared by every user thread it runs), born
 * suspended as a pthread is (it parks, its VP runs the others), no
 * pthread_exit.
 */
static void *thr_start_user(void *arg)
{
	struct thr *t = arg;
	struct asx_thr_mgr *m = t->mgr;
	void **slot = asx__uthread_slot();
	void *ret;

	*slot = t;
	asx_mutex_lock(&m->lock);
	leave_safe(m, t);
	asx_mutex_unlock(&m->lock);
	ret = t->fn(t->arg);
	t->ret = ret;
	*slot = NULL;
	thr_finish(t);
	return ret;
}

/* Start @t (under m->lock): a pthread, or a user thread of @o->asc. */
static int thr_create(struct thr *t, pthread_attr_t *attr, const struct asx_thr_opts *o)
{
	struct asx_asc_thread_opts uo = { .sz = sizeof(uo), .stack_size = o->stack_size };

	if (!o->asc)
		return -pthread_create(&t->pt, attr, thr_start, t);
	return asx_asc_thread_spawn(o->asc, o->qos, thr_start_user, t, &uo, &t->ut);
}

int asx_thr_mgr_spawn_n(struct asx_thr_mgr *m, int n, asx_thr_fn fn,
			void *arg, int group, const struct asx_thr_opts *opts)
{
	struct asx_thr_opts o;
	size_t stack;
	int *ids;
	pthread_attr_t attr;
	int i, r, err = 0;

	if (!m || n <= 0 || !fn || group < 0)
		return -EINVAL;
	r = ASX__OPTS_COPY(&o, opts);
	if (r)
		return r;
	stack = o.stack_size;
	ids = o.ids;
	if (ids)
		for (i = 0; i < n; i++)
			ids[i] = -1;

	r = pthread_attr_init(&attr);
	if (r)
		return -r;
	if (stack) {
		size_t pg = (size_t)sysconf(_SC_PAGESIZE);

		if (stack < (size_t)PTHREAD_STACK_MIN || stack > SIZE_MAX - pg) {
			err = -EINVAL;
			goto out;
		}
		stack = (stack + pg - 1) / pg * pg;
		r = pthread_attr_setstacksize(&attr, stack);
		if (r) {
			err = -r;
			goto out;
		}
	}

	for (i = 0; i < n; i++) {
		struct thr *t = calloc(1, sizeof(*t));

		if (!t) {
			err = -ENOMEM;
			break;
		}
		asx_cond_init(&t->cv);
		t->mgr = m;
		t->fn = fn;
		t->arg = arg;
		t->group = group;
		t->safe = true;		/* until thr_start leaves it */

		asx_mutex_lock(&m->lock);
		if (m->next_id == INT_MAX) {
			err = -EAGAIN;
		} else {
			t->id = m->next_id;
			t->susp = inherited_susp(m, group);
			t->cancel = m->dying;
			update_attn(t);
			/* Under the lock: nobody sees t->pt half-written. */
			err = thr_create(t, &attr, &o);
		}
		if (err) {
			asx_mutex_unlock(&m->lock);
			asx_cond_destroy(&t->cv);
			free(t);
			break;
		}
		m->next_id++;
		m->live++;
		list_add_tail(&t->node, &m->threads);
		ASX_PROBE2(thr_spawn, t->id, group);
		asx_mutex_unlock(&m->lock);
		if (ids)
			ids[i] = t->id;
	}
out:
	pthread_attr_destroy(&attr);
	return err ? err : n;
}

/* ------------------------------------------------------------ wait */

static bool any_live(struct asx_thr_mgr *m, const struct sel *s)
{
	struct thr *t;

	if (s->kind == SEL_ALL)
		return m->live > 0;
	for_each_thr(t, m)
		if (!t->exited && sel_match(s, t))
			return true;
	return false;
}

static int wait_sel(struct asx_thr_mgr *m, const struct sel *s,
		    struct asx_thr_status *st, size_t nst, void **ret1,
		    const struct timespec *dl)
{
	struct thr *self = self_in(m), *t;
	struct list reap = { &reap, &reap };
	int n = 0, err = 0;

	asx_mutex_lock(&m->lock);
	if (self && sel_match(s, self)) {
		asx_mutex_unlock(&m->lock);
		return -EDEADLK;
	}
	if (s->kind == SEL_ID && !find_id(m, s->v)) {
		asx_mutex_unlock(&m->lock);
		return -ESRCH;
	}
	if (self)
		enter_safe(m, self);
	while (any_live(m, s)) {
		if (cv_wait(&m->exit_cv, &m->lock, dl) == ETIMEDOUT &&
		    any_live(m, s)) {
			err = -ETIMEDOUT;
			break;
		}
	}
	if (self)
		leave_safe(m, self);
	if (!err) {
		struct list *nd, *next;

		for (nd = m->threads.next; nd != &m->threads; nd = next) {
			next = nd->next;
			t = node_thr(nd);
			if (t->exited && sel_match(s, t)) {
				list_del(nd);
				list_add_tail(nd, &reap);
			}
		}
	}
	asx_mutex_unlock(&m->lock);

	while (reap.next != &reap) {
		void *ret = NULL;

		t = node_thr(reap.next);
		list_del(&t->node);
		if (t->ut)
			asx_asc_thread_join(t->ut, &ret);
		else
			pthread_join(t->pt, &ret);
		if (st && (size_t)n < nst) {
			st[n].id = t->id;
			st[n].group = t->group;
			st[n].ret = ret;
		}
		if (ret1)
			*ret1 = ret;
		n++;
		asx_cond_destroy(&t->cv);
		free(t);
	}
	return err ? err : n;
}

int asx_thr_mgr_wait(struct asx_thr_mgr *m, struct asx_thr_status *st,
		     size_t nst, const struct timespec *deadline)
{
	struct sel s = { SEL_ALL, 0 };

	if (!m)
		return -EINVAL;
	return wait_sel(m, &s, st, nst, NULL, deadline);
}

int asx_thr_mgr_wait_group(struct asx_thr_mgr *m, int group,
			   struct asx_thr_status *st, size_t nst,
			   const struct timespec *deadline)
{
	struct sel s = { SEL_GROUP, group };

	if (!m || group < 0)
		return -EINVAL;
	return wait_sel(m, &s, st, nst, NULL, deadline);
}

int asx_thr_mgr_join(struct asx_thr_mgr *m, int id, void **ret,
		     const struct timespec *deadline)
{
	struct sel s = { SEL_ID, id };
	int r;

	if (!m)
		return -EINVAL;
	r = wait_sel(m, &s, NULL, 0, ret, deadline);
	if (r < 0)
		return r;
	return r == 1 ? 0 : -ESRCH;	/* 0: another waiter reaped it */
}

static int count_sel(struct asx_thr_mgr *m, const struct sel *s)
{
	struct thr *t;
	int n = 0;

	asx_mutex_lock(&m->lock);
	for_each_thr(t, m)
		if (!t->exited && sel_match(s, t))
			n++;
	asx_mutex_unlock(&m->lock);
	return n;
}

int asx_thr_mgr_count(struct asx_thr_mgr *m)
{
	struct sel s = { SEL_ALL, 0 };

	return m ? count_sel(m, &s) : -EINVAL;
}

int asx_thr_mgr_count_group(struct asx_thr_mgr *m, int group)
{
	struct sel s = { SEL_GROUP, group };

	return m && group >= 0 ? count_sel(m, &s) : -EINVAL;
}

/* ------------------------------------------------------------ cancel */

static int cancel_sel(struct asx_thr_mgr *m, const struct sel *s)
{
	struct thr *t;
	int n = 0;
	bool found = false;

	asx_mutex_lock(&m->lock);
	for_each_thr(t, m) {
		if (!sel_match(s, t))
			continue;
		found = true;
		if (t->exited || t->cancel)
			continue;
		t->cancel = true;
		update_attn(t);
		asx_cond_signal(&t->cv);
		n++;
	}
	if (n)
		asx_cond_broadcast(&m->park_cv);
	asx_mutex_unlock(&m->lock);
	if (s->kind == SEL_ID)
		return found ? 0 : -ESRCH;
	return n;
}

int asx_thr_mgr_cancel(struct asx_thr_mgr *m, int id)
{
	struct sel s = { SEL_ID, id };

	return m ? cancel_sel(m, &s) : -EINVAL;
}

int asx_thr_mgr_cancel_group(struct asx_thr_mgr *m, int group)
{
	struct sel s = { SEL_GROUP, group };

	return m && group >= 0 ? cancel_sel(m, &s) : -EINVAL;
}

int asx_thr_mgr_cancel_all(struct asx_thr_mgr *m)
{
	struct sel s = { SEL_ALL, 0 };

	return m ? cancel_sel(m, &s) : -EINVAL;
}

/* ------------------------------------------------------------ suspend */

static bool all_parked(struct asx_thr_mgr *m, const struct sel *s,
		       const struct thr *self)
{
	struct thr *t;

	for_each_thr(t, m)
		if (t != self && sel_match(s, t) && t->susp &&
		    !t->safe && !t->cancel && !t->exited)
			return false;
	return true;
}

/* Lower by one the suspension count of the targets of @s (not @self). */
static int unsuspend(struct asx_thr_mgr *m, const struct sel *s,
		     const struct thr *self)
{
	struct thr *t;
	int n = 0;

	if (s->kind == SEL_ALL && m->all_depth)
		m->all_depth--;
	else if (s->kind == SEL_GROUP)
		group_depth_put(m, s->v);
	for_each_thr(t, m) {
		if (t == self || !sel_match(s, t) || !t->susp)
			continue;
		n++;
		if (--t->susp == 0) {
			update_attn(t);
			asx_cond_signal(&t->cv);
		}
	}
	return n;
}

static int suspend_sel(struct asx_thr_mgr *m, const struct sel *s,
		       const struct timespec *dl)
{
	struct thr *self = self_in(m), *t;
	int n = 0, err = 0;

	asx_mutex_lock(&m->lock);
	if (s->kind == SEL_ID) {
		t = find_id(m, s->v);
		if (!t || t->exited) {
			err = -ESRCH;
			goto out;
		}
		if (t == self) {
			err = -EDEADLK;
			goto out;
		}
	} else if (s->kind == SEL_GROUP) {
		struct group_depth *g = group_depth(m, s->v);

		if (!g) {
			g = calloc(1, sizeof(*g));
			if (!g) {
				err = -ENOMEM;
				goto out;
			}
			g->group = s->v;
			g->next = m->groups;
			m->groups = g;
		}
		g->depth++;
	} else {
		m->all_depth++;
	}

	for_each_thr(t, m) {
		if (t == self || t->exited || !sel_match(s, t))
			continue;
		t->susp++;
		update_attn(t);
		n++;
	}

	if (self)
		enter_safe(m, self);
	while (!all_parked(m, s, self)) {
		if (cv_wait(&m->park_cv, &m->lock, dl) == ETIMEDOUT &&
		    !all_parked(m, s, self)) {
			/*
			 * Withdraw: threads present then were raised by one,
			 * threads spawned since inherited it; either way one
			 * count per target is ours.
			 */
			unsuspend(m, s, self);
			err = -ETIMEDOUT;
			break;
		}
	}
	if (self)
		leave_safe(m, self);
out:
	asx_mutex_unlock(&m->lock);
	return err ? err : n;
}

int asx_thr_mgr_suspend_all(struct asx_thr_mgr *m, const struct timespec *deadline)
{
	struct sel s = { SEL_ALL, 0 };

	return m ? suspend_sel(m, &s, deadline) : -EINVAL;
}

int asx_thr_mgr_suspend_group(struct asx_thr_mgr *m, int group,
			      const struct timespec *deadline)
{
	struct sel s = { SEL_GROUP, group };

	return m && group >= 0 ? suspend_sel(m, &s, deadline) : -EINVAL;
}

int asx_thr_mgr_suspend(struct asx_thr_mgr *m, int id,
			const struct timespec *deadline)
{
	struct sel s = { SEL_ID, id };
	int r;

	if (!m)
		return -EINVAL;
	r = suspend_sel(m, &s, deadline);
	return r < 0 ? r : 0;
}

static int resume_sel(struct asx_thr_mgr *m, const struct sel *s)
{
	int n;

	asx_mutex_lock(&m->lock);
	if (s->kind == SEL_ID && !find_id(m, s->v)) {
		asx_mutex_unlock(&m->lock);
		return -ESRCH;
	}
	n = unsuspend(m, s, NULL);
	asx_mutex_unlock(&m->lock);
	return s->kind == SEL_ID ? 0 : n;
}

int asx_thr_mgr_resume_all(struct asx_thr_mgr *m)
{
	struct sel s = { SEL_ALL, 0 };

	return m ? resume_sel(m, &s) : -EINVAL;
}

int asx_thr_mgr_resume_group(struct asx_thr_mgr *m, int group)
{
	struct sel s = { SEL_GROUP, group };

	return m && group >= 0 ? resume_sel(m, &s) : -EINVAL;
}

int asx_thr_mgr_resume(struct asx_thr_mgr *m, int id)
{
	struct sel s = { SEL_ID, id };

	return m ? resume_sel(m, &s) : -EINVAL;
}

/* ------------------------------------------------------------ self */

int asx_thr_self(void)
{
	struct thr *t = me();

	return t ? t->id : -ESRCH;
}

int asx_thr_self_group(void)
{
	struct thr *t = me();

	return t ? t->group : -ESRCH;
}

bool asx_thr_cancelled(void)
{
	struct thr *t = me();

	return t && (atomic_load_explicit(&t->attn, memory_order_acquire) & ATTN_CANCEL);
}

bool asx_thr_testcancel(void)
{
	struct thr *t = me();
	unsigned int a;
	bool c;

	if (!t)
		return false;
	a = atomic_load_explicit(&t->attn, memory_order_acquire);
	if (likely(!a))
		return false;
	if (a & ATTN_CANCEL)
		return true;
	asx_mutex_lock(&t->mgr->lock);
	park(t->mgr, t);
	c = t->cancel;
	asx_mutex_unlock(&t->mgr->lock);
	return c;
}

static void ns_to_deadline(struct timespec *ts, uint64_t ns)
{
	uint64_t now = asx_now_ns(), end = now + ns;

	if (end < now)
		end = UINT64_MAX;
	ts->tv_sec = (time_t)(end / ASX_NSEC_PER_SEC);
	ts->tv_nsec = (long)(end % ASX_NSEC_PER_SEC);
}

int asx_thr_sleep(uint64_t ns)
{
	struct thr *t = me();
	struct asx_thr_mgr *m;
	struct timespec dl;
	int r;

	ns_to_deadline(&dl, ns);
	if (!t && asx_asc_thread_self()) {
		/* an unmanaged user thread: sleep without holding its VP */
		while (asx_asc_thread_sleep_until(&dl) == -EINTR)
			;
		return 0;
	}
	if (!t) {
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &dl, NULL) == EINTR)
			;
		return 0;
	}
	m = t->mgr;
	asx_mutex_lock(&m->lock);
	enter_safe(m, t);
	while (!t->cancel && cv_wait(&t->cv, &m->lock, &dl) != ETIMEDOUT)
		;
	leave_safe(m, t);
	r = t->cancel ? -ECANCELED : 0;
	asx_mutex_unlock(&m->lock);
	return r;
}
