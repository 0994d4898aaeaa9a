// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * plan.c - applying svc.conf to the Service Repository (plan.h).
 *
 * Applying is a transaction in three phases.  plan() walks the directives
 * over a copy of the repository's state (which service runs, which
 * definition it has, which state it should end in) and says what to do:
 * start a new instance, keep, suspend, resume, or stop each service; a
 * directive naming a service that is not there fails it here.  Each kind
 * of directive has its function: plan_service() (dynamic, static),
 * plan_target() (remove, suspend, resume), plan_stream() (stream).
 * prepare() does everything that can fail, step by step in the file's
 * order, through the step's kind (object.c for a service object,
 * stream.c for a Stream): it makes and initialises every new instance
 * (loading its library, checking its ABI stamp) and changes the states of
 * the services that stay; undo() takes all of it back on the first
 * failure.  commit() cannot fail: it puts the new instances in place and
 * stops the services they replace or that were removed.
 *
 * Calls object.c, stream.c and conf.c; called by api.c only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <asx/svc.h>

#include "svc/link.h"
#include "svc/object.h"
#include "svc/plan.h"
#include "svc/policy.h"
#include "svc/stream.h"

void asx__svc_stop(struct asx_svc *s)
{
	if (s->kind == ASX__SVC_STREAMK)
		asx__svc_stream_stop(s);
	else if (s->kind == ASX__SVC_MUXK)
		asx__svc_mux_stop(s);
	else if (s->kind == ASX__SVC_POLICYK)
		asx__svc_policy_stop(s);
	else
		asx__svc_object_stop(s);
}

/* ---------------------------------------------------------------- plan */

static const char *step_name(const void *ctx, size_t i)
{
	return ((const struct asx__svc_plan *)ctx)->v[i].name;
}

/* The step of @name (a lookup, not a walk: a plan is linear in its file). */
static struct asx__svc_step *step_of(struct asx__svc_plan *p, const char *name)
{
	size_t i = asx__svc_names_find(&p->names, name);

	return i == SIZE_MAX ? NULL : &p->v[i];
}

/* A new step for @name, indexed; NULL if out of memory. */
static struct asx__svc_step *new_step(struct asx__svc_plan *p, const char *name)
{
	struct asx__svc_step *st = &p->v[p->n];

	strcpy(st->name, name);
	if (asx__svc_names_add(&p->names, p->n))
		return NULL;
	p->n++;
	return st;
}

/* @st, or a new step for @e's name: NULL if out of memory. */
static struct asx__svc_step *step_for(struct asx__svc_plan *p, struct asx__svc_step *st,
				      const struct asx__svc_ent *e)
{
	return st ? st : new_step(p, e->name);
}

static int by_seq(const void *a, const void *b)
{
	const struct asx__svc_step *x = *(struct asx__svc_step *const *)a, *y = *(struct asx__svc_step *const *)b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x < y ? -1 : x > y;	/* stable: the array's order */
}

/* "dynamic" or "static" @e for @st (NULL: the name is new). */
static int plan_service(struct asx__svc_plan *p, struct asx__svc_step *st,
			const struct asx__svc_ent *e)
{
	/* (a Module outside a stream does not parse) */
	if (!(st = step_for(p, st, e)))
		return asx__svc_say(p, NULL, -ENOMEM, "out of memory");
	st->def = e;
	if (e->type == ASX__SVC_T_POLICY)
		st->act = st->old && asx__svc_policy_same(st->old, e) ? KEEP : START;
	else
		st->act = st->old && asx__svc_object_same(st->old, e) ? KEEP : START;
	if (st->act == KEEP)
		st->def = NULL;
	st->want = e->inactive ? ASX_SVC_SUSPENDED : ASX_SVC_ACTIVE;
	st->why = e;
	return 0;
}

/*
 * ACE's "stream NAME { remove M }" (@e, "remove NAME/M" here) for @st, a
 * step that runs or is defined: the Stream as defined so far in the file,
 * or as it runs, without Module M.  The copy is made as for "suspend
 * NAME/M" (asx__svc_stream_mod_state(); the plan owns it), then M is
 * taken out of it; the step starts, keeps or reshapes the Stream.  An
 * asx.ko module cannot go: a Stream's kernel part is fixed while it runs.
 */
static int plan_remove_mod(struct asx__svc_plan *p, struct asx__svc_step *st,
			   const struct asx__svc_ent *e)
{
	const struct asx__svc_ent *d = st->def;
	const struct asx_svc *s = st->old;
	struct asx__svc_ent shadow = *e, *c;
	size_t n, k;
	int r;

	if (d ? d->dir != ASX__SVC_STREAM : s->kind != ASX__SVC_STREAMK)
		return asx__svc_say(p, e, -EMEDIUMTYPE,
				    "cannot remove '%s/%s': '%s' is a service, not a stream",
				    e->name, e->mod, e->name);
	n = d ? d->nmods : s->nmods;
	for (k = 0; k < n && strcmp(d ? d->mods[k].name : s->mods[k].name, e->mod); k++)
		;
	if (k == n)
		return asx__svc_say(p, e, -ENOENT,
				    "cannot remove '%s/%s': stream '%s' has no module '%s'",
				    e->name, e->mod, e->name, e->mod);
	if (d ? d->mods[k].dir == ASX__SVC_KERNEL : s->mods[k].kernel)
		return asx__svc_say(p, e, -EOPNOTSUPP,
				    "cannot remove '%s/%s': it is an asx.ko module, fixed while the Stream runs: define 'stream %s kernel { ... }' without it",
				    e->name, e->mod, e->name);
	shadow.dir = ASX__SVC_SUSPEND;
	r = asx__svc_stream_mod_state(p, st, &shadow);
	if (r)
		return r;
	c = p->owned;		/* the copy just made */
	memmove(&c->mods[k], &c->mods[k + 1], (c->nmods - k - 1) * sizeof(*c->mods));
	c->nmods--;
	asx__svc_stream_redefine(st, c);
	return 0;
}

/* "remove", "suspend" or "resume" @e of @st (NULL: nothing of that name). */
static int plan_target(struct asx__svc_plan *p, struct asx__svc_step *st,
		       const struct asx__svc_ent *e)
{
	const char *verb = e->dir == ASX__SVC_REMOVE ? "remove" :
			   e->dir == ASX__SVC_SUSPEND ? "suspend" : "resume";

	if (e->mod[0] && (!st || st->act == STOP))
		return asx__svc_say(p, e, -ENOENT, "cannot %s '%s/%s': no stream '%s'", verb,
				    e->name, e->mod, e->name);
	if (!st || st->act == STOP)
		return asx__svc_say(p, e, -ENOENT, "no service '%s' to %s", e->name, verb);
	if (e->mod[0]) {
		/* (remove: ACE's "stream NAME { remove M }") */
		int r = e->dir == ASX__SVC_REMOVE ? plan_remove_mod(p, st, e) :
			asx__svc_stream_mod_state(p, st, e);

		if (r)
			return r;
		st->why = e;
	} else if (e->dir == ASX__SVC_REMOVE) {
		st->act = STOP;
		st->def = NULL;
		st->why = e;	/* (for a policy in use: policy.c's message) */
	} else {
		st->want = e->dir == ASX__SVC_SUSPEND ? ASX_SVC_SUSPENDED : ASX_SVC_ACTIVE;
		st->why = e;
	}
	return 0;
}

/* "stream" @e for @st (NULL: the name is new). */
static int plan_stream(struct asx__svc_plan *p, struct asx__svc_step *st,
		       const struct asx__svc_ent *e)
{
	if (!(st = step_for(p, st, e)))
		return asx__svc_say(p, NULL, -ENOMEM, "out of memory");
	st->def = e;
	if (!st->old || st->old->kind != ASX__SVC_STREAMK)
		st->act = START;
	else if (asx__svc_stream_same(st->old, e))
		st->act = KEEP;
	else
		st->act = RESHAPE;
	if (st->act == KEEP)
		st->def = NULL;
	st->want = ASX_SVC_ACTIVE;
	st->why = e;
	return 0;
}

/* "mux" @e for @st (NULL: the name is new): its links are made in prepare(). */
static int plan_mux(struct asx__svc_plan *p, struct asx__svc_step *st,
		    const struct asx__svc_ent *e)
{
	if (!(st = step_for(p, st, e)))
		return asx__svc_say(p, NULL, -ENOMEM, "out of memory");
	st->def = e;
	st->act = st->old && st->old->kind == ASX__SVC_MUXK ? RESHAPE : START;
	st->want = ASX_SVC_ACTIVE;
	st->why = e;
	return 0;
}

/* Is @st about a mux (what it becomes, else what runs)? */
static bool is_mux(const struct asx__svc_step *st)
{
	if (st->def)
		return st->def->dir == ASX__SVC_MUX;
	return st->old && st->old->kind == ASX__SVC_MUXK;
}

static bool is_stream(const struct asx__svc_step *st);

/* p->resolve: the Stream called @name as the transaction leaves it. */
static int resolve(struct asx__svc_plan *p, const char *name, struct asx_stream **out)
{
	struct asx__svc_step *st = step_of(p, name);

	*out = NULL;
	if (!st || st->act == STOP)
		return -ENOENT;
	if (!is_stream(st))
		return -EMEDIUMTYPE;
	*out = st->fresh ? st->fresh->stream : st->old ? st->old->stream : NULL;
	return 0;
}

static int plan(struct asx_svc_repo *repo, const struct asx__svc_conf *c, unsigned int flags,
		struct asx__svc_plan *p)
{
	unsigned int seq = 0;
	size_t nsvc = 0;

	for (struct asx_svc *s = repo->svcs; s; s = s->next)
		nsvc++;
	/* at most one step per running service and per directive */
	p->v = calloc(nsvc + c->n + 1, sizeof(*p->v));
	if (!p->v)
		return asx__svc_say(p, NULL, -ENOMEM, "out of memory");
	p->names.name = step_name;
	p->names.ctx = p;
	for (struct asx_svc *s = repo->svcs; s; s = s->next) {
		struct asx__svc_step *st = new_step(p, s->name);

		if (!st)
			return asx__svc_say(p, NULL, -ENOMEM, "out of memory");
		st->old = s;
		st->act = (flags & ASX_SVC_RELOAD) ? STOP : KEEP;
		st->want = s->state;
	}
	for (const struct asx__svc_ent *e = c->head; e; e = e->next) {
		int r;

		switch (e->dir) {
		case ASX__SVC_DYNAMIC:
		case ASX__SVC_STATIC:
			r = plan_service(p, step_of(p, e->name), e);
			break;
		case ASX__SVC_REMOVE:
		case ASX__SVC_SUSPEND:
		case ASX__SVC_RESUME:
			r = plan_target(p, step_of(p, e->name), e);
			break;
		case ASX__SVC_STREAM:
			r = plan_stream(p, step_of(p, e->name), e);
			break;
		case ASX__SVC_MUX:
			r = plan_mux(p, step_of(p, e->name), e);
			break;
		default:
			r = asx__svc_say(p, e, -EINVAL, "unexpected directive");
		}
		if (r)
			return r;
		step_of(p, e->name)->seq = ++seq;
	}
	/* a mux that stays checks its links against what the file leaves */
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].act == KEEP && p->v[i].old->kind == ASX__SVC_MUXK)
			p->v[i].act = RESHAPE;
	p->resolve = resolve;
	/* prepare() works in the order the directives came */
	p->order = calloc(p->n + 1, sizeof(*p->order));
	if (!p->order)
		return asx__svc_say(p, NULL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n; i++)
		p->order[i] = &p->v[i];
	qsort(p->order, p->n, sizeof(*p->order), by_seq);
	return 0;
}

static void plan_free(struct asx__svc_plan *p)
{
	while (p->owned) {
		struct asx__svc_ent *made = p->owned;

		p->owned = made->next;
		free(made->mods);
		free(made);
	}
	free(p->order);
	free(p->v);
	asx__svc_names_free(&p->names);
}

/* ---------------------------------------------------------------- prepare, undo */

/* Is @st about a Stream (what it becomes, else what runs)? */
static bool is_stream(const struct asx__svc_step *st)
{
	if (st->def)
		return st->def->dir == ASX__SVC_STREAM;
	return st->old && st->old->kind == ASX__SVC_STREAMK;
}

/* Is @st about an ASC policy (what it becomes, else what runs)? */
static bool is_policy(const struct asx__svc_step *st)
{
	if (st->def)
		return st->def->dir == ASX__SVC_DYNAMIC && st->def->type == ASX__SVC_T_POLICY;
	return st->old && st->old->kind == ASX__SVC_POLICYK;
}

/* The policies the plan unregistered (release_policies()) registered again. */
static void restore_policies(struct asx__svc_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		asx__svc_policy_restore(&p->v[i]);
}

/*
 * Before anything else, the ASC policies that go (removed, or replaced by
 * another definition) are unregistered: one an ASC uses (-EBUSY) fails the
 * whole transaction, its library kept.
 */
static int release_policies(struct asx__svc_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct asx__svc_step *st = p->order[i];
		int r;

		if (!st->old || st->old->kind != ASX__SVC_POLICYK || st->act == KEEP)
			continue;
		r = asx__svc_policy_release(p, st->old, st->why);
		if (r) {
			restore_policies(p);
			return r;
		}
		st->unregistered = true;
	}
	return 0;
}

static void undo(struct asx_svc_repo *repo, struct asx__svc_plan *p, size_t upto)
{
	for (size_t i = upto; i-- > 0;) {
		struct asx__svc_step *st = p->order[i];

		if (is_mux(st))
			continue;	/* undone first, by prepare() */
		if (is_stream(st))
			asx__svc_stream_undo(repo, st);
		else if (is_policy(st))
			asx__svc_policy_undo(st);
		else
			asx__svc_object_undo(st);
	}
	restore_policies(p);
}

static int prepare(struct asx_svc_repo *repo, struct asx__svc_plan *p)
{
	int r0 = release_policies(p);

	if (r0)
		return r0;
	for (size_t i = 0; i < p->n; i++) {
		struct asx__svc_step *st = p->order[i];
		int r;

		if (st->act == STOP || is_mux(st))
			continue;
		r = is_stream(st) ? asx__svc_stream_prepare(repo, p, st) :
		    is_policy(st) ? asx__svc_policy_prepare(p, st) :
				    asx__svc_object_prepare(repo, p, st);
		if (r) {
			undo(repo, p, i);
			return r;
		}
	}
	/* the muxes last: their links name the Streams as they now are */
	for (size_t i = 0; i < p->n; i++) {
		struct asx__svc_step *st = p->order[i];
		int r;

		if (st->act == STOP || !is_mux(st))
			continue;
		r = asx__svc_mux_prepare(p, st);
		if (r) {
			asx__svc_mux_undo(st);
			while (i-- > 0)
				if (p->order[i]->act != STOP && is_mux(p->order[i]))
					asx__svc_mux_undo(p->order[i]);
			undo(repo, p, p->n);
			return r;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- commit */

static void commit(struct asx_svc_repo *repo, struct asx__svc_plan *p)
{
	struct asx_svc **pp;

	/* the new instances in place: a replacement where its predecessor was */
	for (size_t i = 0; i < p->n; i++) {
		struct asx__svc_step *st = &p->v[i];

		if (is_mux(st) && st->act != STOP)
			asx__svc_mux_commit(st);
		else if (st->act == RESHAPE)
			asx__svc_stream_commit(st);
		if (st->act == KEEP || st->act == RESHAPE || (!st->old && !st->fresh))
			continue;
		if (st->old) {
			for (pp = &repo->svcs; *pp != st->old; pp = &(*pp)->next)
				;
			if (st->fresh) {
				st->fresh->next = st->old->next;
				*pp = st->fresh;
			} else {
				*pp = st->old->next;
			}
		} else {
			for (pp = &repo->svcs; *pp; pp = &(*pp)->next)
				;
			*pp = st->fresh;
		}
	}
	/* then what they replace and what was removed, latest started first;
	 * the muxes before all else, so no Stream goes while linked */
	for (size_t i = p->n; i-- > 0;)
		if (p->v[i].act != KEEP && p->v[i].act != RESHAPE && p->v[i].old &&
		    p->v[i].old->kind == ASX__SVC_MUXK) {
			asx__svc_stop(p->v[i].old);
			p->v[i].old = NULL;	/* (gone: the loop below skips it) */
		}
	for (size_t i = p->n; i-- > 0;)
		if (p->v[i].act != KEEP && p->v[i].act != RESHAPE && p->v[i].old)
			asx__svc_stop(p->v[i].old);
}

/* ---------------------------------------------------------------- dry run */

/* Could the plan's steps start, as far as that is known without loading? */
static int dry_run(struct asx_svc_repo *repo, struct asx__svc_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct asx__svc_step *st = p->order[i];
		const struct asx__svc_ent *e = st->def;
		int r;

		if (st->act != STOP && is_mux(st)) {
			r = asx__svc_mux_check(p, st);
			if (r)
				return r;
			continue;
		}
		if ((st->act != START && st->act != RESHAPE) || !e)
			continue;
		if (e->dir == ASX__SVC_STREAM)
			r = asx__svc_stream_check(repo, p, e);
		else if (is_policy(st))
			r = asx__svc_policy_check(p, e);
		else
			r = asx__svc_object_check(repo, p, e);
		if (r)
			return r;
	}
	return 0;
}

/* Plan @c for @repo, then apply it (prepare, commit) or only check it (@dry). */
static int run(struct asx_svc_repo *repo, const struct asx__svc_conf *c, const char *name,
	       unsigned int flags, char *err, size_t errlen, bool dry)
{
	struct asx__svc_plan p = { .err = err, .errlen = errlen };
	const char *slash = strrchr(name, '/');
	char *dir = slash ? strndup(name, (size_t)(slash - name)) : NULL;
	int r;

	if (slash && !dir)
		return -ENOMEM;
	p.confdir = dir;
	pthread_mutex_lock(&repo->lock);
	r = plan(repo, c, flags, &p);
	if (!r && dry)
		r = dry_run(repo, &p);
	if (!r && !dry)
		r = prepare(repo, &p);
	if (!r && !dry)
		commit(repo, &p);
	pthread_mutex_unlock(&repo->lock);
	plan_free(&p);
	free(dir);
	return r;
}

int asx__svc_apply(struct asx_svc_repo *repo, const struct asx__svc_conf *c, const char *name,
		   unsigned int flags, char *err, size_t errlen)
{
	return run(repo, c, name, flags, err, errlen, false);
}

int asx__svc_dry_run(struct asx_svc_repo *repo, const struct asx__svc_conf *c, const char *name,
		     unsigned int flags, char *err, size_t errlen)
{
	return run(repo, c, name, flags, err, errlen, true);
}
