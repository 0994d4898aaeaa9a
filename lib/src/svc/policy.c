// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * policy.c - ASC policies from shared objects (policy.h).
 *
 * "dynamic NAME ASC_Policy * lib.so:fn()" loads lib.so, checks fn's ABI
 * stamp (ASX_ASC_POLICY_FACTORY, <asx/asc_policy.h>), calls fn for the
 * policy's ops and registers them under NAME.  The ops' functions live in
 * the library, so it is unloaded only after the policy was unregistered,
 * which fails while an ASC uses it: a removal or a reload that would
 * unload a policy in use is refused (the transaction unregisters first,
 * before anything else, and undoes that on failure), and a repository
 * destroyed under a live ASC leaves the library mapped.
 *
 * Calls load.c and conf.c; called by plan.c and api.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <asx/asc_policy.h>

#include "core/opts.h"
#include "svc/load.h"
#include "svc/policy.h"

bool asx__svc_policy_same(const struct asx_svc *s, const struct asx__svc_ent *e)
{
	return s->kind == ASX__SVC_POLICYK && e->dir == ASX__SVC_DYNAMIC &&
	       e->type == ASX__SVC_T_POLICY && !strcmp(s->factory, e->factory) &&
	       !strcmp(s->library, e->path);
}

static void free_policy(struct asx_svc *s)
{
	/* never unload the ops of a policy still registered */
	if (s->dl && !s->registered)
		dlclose(s->dl);
	free(s->library);
	free(s->factory);
	free(s->args);
	free(s);
}

int asx__svc_policy_release(struct asx__svc_plan *p, struct asx_svc *s,
			    const struct asx__svc_ent *why)
{
	int r;

	if (!s->registered)
		return 0;
	r = asx_asc_policy_unregister(s->name);
	if (r == -EBUSY)
		return p ? asx__svc_say(p, why, r,
					"policy '%s' is in use: an ASC made with it still exists (a stream's 'asc N policy %s', or the program's): destroy it first; '%s' stays loaded",
					s->name, s->name, s->name) : r;
	/* -ENOENT: the program unregistered it itself; gone all the same */
	s->registered = false;
	return 0;
}

/* Register @ops under @s's name (a copy with its name: ops->name may differ). */
static int register_as(struct asx__svc_plan *p, const struct asx__svc_ent *e, struct asx_svc *s,
		       const struct asx_asc_policy_ops *ops)
{
	struct asx_asc_policy_ops o;
	/* the size-first rules, as asx_asc_policy_register() applies them */
	int r = ops ? ASX__OPTS_COPY(&o, ops) : -EINVAL;

	if (r == -E2BIG)
		return asx__svc_say(p, e, r,
				    "policy '%s': its operations table is from a newer libasx and uses what this one does not know",
				    s->name);
	if (r)
		return asx__svc_say(p, e, -EINVAL, "policy '%s': its factory %s gave %s", s->name,
				    s->factory,
				    ops ? "an operations table without its size (set .sz = sizeof(ops))" :
				    "no operations table (NULL)");
	o.name = s->name;
	r = asx_asc_policy_register(&o);
	if (r == -EEXIST)
		return asx__svc_say(p, e, r,
				    "policy '%s': a policy of that name is registered already (the built-in prio, edf, direct and stride, or one the program or another svc.conf line registered)",
				    s->name);
	if (r)
		return asx__svc_say(p, e, r,
				    "policy '%s': asx_asc_policy_register() refused its operations: %s (admit, enqueue, pick_next and nrunnable are required; see asc_policy.h)",
				    s->name, strerror(-r));
	s->registered = true;
	return 0;
}

int asx__svc_policy_prepare(struct asx__svc_plan *p, struct asx__svc_step *st)
{
	const struct asx__svc_ent *e = st->def;
	asx_asc_policy_factory_fn *fn;
	struct asx_svc *s;
	void *sym = NULL;
	int r;

	if (st->want != ASX_SVC_ACTIVE)
		return asx__svc_say(p, st->why, -EOPNOTSUPP,
				    "ASC policy '%s' cannot be suspended or resumed", st->name);
	if (st->act != START)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	strcpy(s->name, e->name);
	s->kind = ASX__SVC_POLICYK;
	s->state = ASX_SVC_ACTIVE;
	s->library = strdup(e->path);
	s->factory = strdup(e->factory);
	s->args = strdup("");
	if (!s->library || !s->factory || !s->args) {
		r = asx__svc_say(p, e, -ENOMEM, "out of memory");
		goto fail;
	}
	r = asx__svc_load(p, e, &s->dl, &sym);
	if (r)
		goto fail;
	/* a data pointer to a function pointer, as dlsym() requires of POSIX */
	memcpy(&fn, &sym, sizeof(fn));
	r = register_as(p, e, s, fn());
	if (r)
		goto fail;
	st->fresh = s;
	return 0;
fail:
	free_policy(s);
	return r;
}

void asx__svc_policy_undo(struct asx__svc_step *st)
{
	if (st->fresh) {
		asx__svc_policy_stop(st->fresh);
		st->fresh = NULL;
	}
}

void asx__svc_policy_restore(struct asx__svc_step *st)
{
	if (st->unregistered) {
		/* its library is still loaded: the ops are valid; its name
		 * was free until now (the file's own is unregistered above) */
		struct asx_svc *s = st->old;
		asx_asc_policy_factory_fn *fn;
		void *sym = dlsym(s->dl, s->factory);

		memcpy(&fn, &sym, sizeof(fn));
		if (sym && !register_as(&(struct asx__svc_plan){ 0 }, NULL, s, fn()))
			s->registered = true;
		st->unregistered = false;
	}
}

void asx__svc_policy_stop(struct asx_svc *s)
{
	(void)asx__svc_policy_release(NULL, s, NULL);
	free_policy(s);
}

int asx__svc_policy_check(struct asx__svc_plan *p, const struct asx__svc_ent *e)
{
	return asx__svc_check_lib(p, e);
}
