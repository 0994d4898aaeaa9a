// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * object.c - service objects (object.h): a factory's table copied and
 * checked, init with the directive's parameters split as a shell would,
 * suspend and resume, fini.  Each service holds its own dlopen() handle, so
 * a library is unloaded when the last service made from it is removed.
 *
 * Calls load.c, registry.c and conf.c; called by plan.c and api.c.  It
 * does not call stream.c (a Stream is plan.c's to tell apart).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <asx/svc.h>

#include "core/opts.h"
#include "svc/load.h"
#include "svc/object.h"
#include "svc/registry.h"

static void free_svc(struct asx_svc *s)
{
	if (s->dl)
		dlclose(s->dl);
	free(s->library);
	free(s->factory);
	free(s->args);
	free(s);
}

bool asx__svc_object_same(const struct asx_svc *s, const struct asx__svc_ent *e)
{
	if (s->kind != ASX__SVC_OBJECT || strcmp(s->args, asx__svc_args(e)))
		return false;
	if (e->dir == ASX__SVC_STATIC)
		return s->linked_in;
	return !s->linked_in && !strcmp(s->factory, e->factory) && s->library &&
	       !strcmp(s->library, e->path);
}

static int check_ops(struct asx__svc_plan *p, const struct asx__svc_ent *e, const struct asx_svc_ops *in,
		     struct asx_svc_ops *out)
{
	/* the rules of every size-first struct: older tables shorter, newer ones zero-tailed */
	int r = in ? ASX__OPTS_COPY(out, in) : -EINVAL;

	if (r == -E2BIG)
		return asx__svc_say(p, e, r,
				    "service '%s': its operations table is from a newer libasx and uses what this one does not know",
				    e->name);
	if (r)
		return asx__svc_say(p, e, -EINVAL,
				    "service '%s': its factory gave no operations table, or one without its size (declare it with ASX_OPTS())",
				    e->name);
	if (!out->init || !out->fini)
		return asx__svc_say(p, e, -EINVAL, "service '%s': its operations have no %s", e->name,
				    out->init ? "fini" : "init");
	return 0;
}

static int load_factory(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			const struct asx__svc_ent *e, struct asx_svc *s, asx_svc_factory_fn **fn)
{
	void *sym = NULL;
	int r;

	if (e->dir == ASX__SVC_STATIC) {
		r = asx__svc_reg_factory(repo, p, e, fn);
		s->linked_in = !r;
		return r;
	}
	r = asx__svc_load(p, e, &s->dl, &sym);
	if (r)
		return r;
	/* a data pointer to a function pointer, as dlsym() requires of POSIX */
	memcpy(fn, &sym, sizeof(*fn));
	return 0;
}

/* Make, check and initialise @st's new instance. */
static int start_one(struct asx_svc_repo *repo, struct asx__svc_plan *p, struct asx__svc_step *st)
{
	const struct asx__svc_ent *e = st->def;
	const struct asx_svc_ops *ops = NULL;
	asx_svc_factory_fn *fn = NULL;
	struct asx_svc *s;
	char **argv;
	int argc, r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	strcpy(s->name, e->name);
	s->kind = ASX__SVC_OBJECT;
	s->args = strdup(asx__svc_args(e));
	s->factory = strdup(e->dir == ASX__SVC_STATIC ? e->name : e->factory);
	if (e->dir == ASX__SVC_DYNAMIC)
		s->library = strdup(e->path);
	if (!s->args || !s->factory || (e->dir == ASX__SVC_DYNAMIC && !s->library)) {
		r = asx__svc_say(p, e, -ENOMEM, "out of memory");
		goto fail;
	}
	r = load_factory(repo, p, e, s, &fn);
	if (r)
		goto fail;
	r = fn(e->name, &ops, &s->priv);
	if (r) {
		asx__svc_say(p, e, r, "service '%s': its factory failed: %s", e->name, strerror(-r));
		goto fail;
	}
	r = check_ops(p, e, ops, &s->ops);
	if (r)
		goto fail;
	/* from here on fini is owed, whatever happens: it frees what the factory made */
	r = asx__svc_split_args(e->name, e->args, &argc, &argv);
	if (r) {
		asx__svc_say(p, e, r, "service '%s': a quote in its parameters is not closed", e->name);
		goto fail_fini;
	}
	r = s->ops.init(s, argc, argv);
	free(argv);
	if (r) {
		asx__svc_say(p, e, r < 0 ? r : -EINVAL, "service '%s': init failed: %s", e->name,
		    strerror(r < 0 ? -r : EINVAL));
		r = r < 0 ? r : -EINVAL;
		goto fail_fini;
	}
	s->state = ASX_SVC_ACTIVE;
	st->fresh = s;
	return 0;
fail_fini:
	asx__svc_object_stop(s);
	return r;
fail:
	free_svc(s);
	return r;
}

int asx__svc_set_state(struct asx__svc_plan *p, struct asx_svc *s, enum asx_svc_state want,
		       const struct asx__svc_ent *why)
{
	int r;

	if (s->state == want)
		return 0;
	if (s->kind != ASX__SVC_OBJECT)
		return asx__svc_say(p, why, -EOPNOTSUPP, "%s '%s' cannot be suspended or resumed",
				    s->kind == ASX__SVC_MUXK ? "Mux" : "Stream", s->name);
	if (want == ASX_SVC_SUSPENDED && !s->ops.suspend)
		return asx__svc_say(p, why, -EOPNOTSUPP, "service '%s' cannot be suspended (it has no suspend operation)",
			   s->name);
	if (want == ASX_SVC_ACTIVE && !s->ops.resume)
		return asx__svc_say(p, why, -EOPNOTSUPP, "service '%s' cannot be resumed (it has no resume operation)",
			   s->name);
	r = want == ASX_SVC_SUSPENDED ? s->ops.suspend(s) : s->ops.resume(s);
	if (r)
		return asx__svc_say(p, why, r < 0 ? r : -EINVAL, "service '%s': %s failed: %s", s->name,
			   want == ASX_SVC_SUSPENDED ? "suspend" : "resume",
			   strerror(r < 0 ? -r : EINVAL));
	s->state = want;
	return 0;
}

void asx__svc_object_stop(struct asx_svc *s)
{
	s->ops.fini(s);
	free_svc(s);
}

int asx__svc_object_prepare(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			    struct asx__svc_step *st)
{
	int r = 0;

	if (st->act == START) {
		r = start_one(repo, p, st);
		if (!r && st->want == ASX_SVC_SUSPENDED)
			r = asx__svc_set_state(p, st->fresh, st->want, st->why);
		if (r && st->fresh) {
			asx__svc_object_stop(st->fresh);
			st->fresh = NULL;
		}
	} else if (st->act == KEEP && st->old->state != st->want) {
		r = asx__svc_set_state(p, st->old, st->want, st->why);
		st->state_changed = !r;
	}
	return r;
}

void asx__svc_object_undo(struct asx__svc_step *st)
{
	if (st->fresh) {
		asx__svc_object_stop(st->fresh);
		st->fresh = NULL;
	}
	if (st->state_changed) {
		enum asx_svc_state back = st->old->state == ASX_SVC_ACTIVE ?
					  ASX_SVC_SUSPENDED : ASX_SVC_ACTIVE;
		int r = back == ASX_SVC_ACTIVE ? st->old->ops.resume(st->old) :
			st->old->ops.suspend(st->old);

		/* a service that cannot go back stays as it is, and says so */
		if (!r)
			st->old->state = back;
		st->state_changed = false;
	}
}

int asx__svc_object_check(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			  const struct asx__svc_ent *e)
{
	asx_svc_factory_fn *fn;

	if (e->dir == ASX__SVC_DYNAMIC)
		return asx__svc_check_lib(p, e);
	return asx__svc_reg_factory(repo, p, e, &fn);
}
