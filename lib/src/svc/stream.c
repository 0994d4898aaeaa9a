// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stream.c - Streams configured in svc.conf ("stream NAME { modules }"),
 * the second half of applying a configuration (repo.c is the first).
 *
 * A new Stream is opened and its Modules pushed bottom first.  A running
 * one whose module list changed is reshaped in place, while messages flow,
 * with the Stream's own live operations: in prepare(), top down, a Module
 * whose definition changed is replaced (asx_stream_replace: nothing lost,
 * order kept) and a new one inserted below the one above it; each step is
 * logged so that a failure later in the transaction can undo it (an
 * inserted Module removed, a replaced one replaced back by a fresh Module
 * of its old definition).  Modules the new list drops are removed only at
 * commit, when nothing can fail any more.  Kept Modules must stay in the
 * same order: a list that moves one is refused.
 *
 * "stream NAME kernel" puts the Stream over a kernel Stream on /dev/asx
 * (asx_kstream_driver(), <asx/kstream.h>): its "kernel" entries, which
 * come first, are pushed there, bottom first, before the user-space
 * Modules go above.  That lower part is fixed while the Stream runs: a
 * configuration that changes its driver or its asx.ko modules is refused.
 *
 * Calls load.c, registry.c and conf.c; called by plan.c and api.c.  It
 * does not call object.c.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/kstream.h>
#include <asx/asc.h>
#include <asx/asc_policy.h>
#include <asx/stream.h>

#include "svc/endpoint.h"
#include "svc/load.h"
#include "svc/registry.h"
#include "svc/stream.h"

static void mods_free(struct asx__svc_mod *mods, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(mods[i].library);
		free(mods[i].factory);
		free(mods[i].args);
	}
	free(mods);
}

/* Close the handles of @mods (after the Stream let go of their Modules). */
static void mods_unload(struct asx__svc_mod *mods, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (mods[i].dl) {
			dlclose(mods[i].dl);
			mods[i].dl = NULL;
		}
}

static bool same_mod(const struct asx__svc_mod *m, const struct asx__svc_ent *e)
{
	if (strcmp(m->name, e->name) || strcmp(m->args, asx__svc_args(e)))
		return false;
	if (e->dir == ASX__SVC_KERNEL)
		return m->kernel;
	if (e->dir == ASX__SVC_STATIC)
		return !m->dynamic && !m->kernel;
	return m->dynamic && !strcmp(m->factory, e->factory) && !strcmp(m->library, e->path);
}

static const char *driver_of(const struct asx__svc_ent *e)
{
	return e->driver ? e->driver : "loop";
}

/* Are the kernel Stream under @s and the one @e asks for the same? */
static bool same_lower(const struct asx_svc *s, const struct asx__svc_ent *e)
{
	size_t k = 0;

	if (s->kernel != e->kernel || (e->kernel && strcmp(s->driver, driver_of(e))))
		return false;
	for (size_t i = 0; i < e->nmods; i++) {
		if (e->mods[i].dir != ASX__SVC_KERNEL)
			break;
		if (k >= s->nmods || !same_mod(&s->mods[k], &e->mods[i]))
			return false;
		k++;
	}
	return k == s->nmods || !s->mods[k].kernel;
}

/* Does the running Stream @s have the endpoint @e asks for (or neither has one)? */
static bool same_listen(const struct asx_svc *s, const struct asx__svc_ent *e)
{
	if (!s->listen || !e->listen)
		return !s->listen && !e->listen;
	return !strcmp(s->listen, e->listen) && s->framing == e->framing;
}

bool asx__svc_stream_same(const struct asx_svc *s, const struct asx__svc_ent *e)
{
	if (s->kind != ASX__SVC_STREAMK || s->nmods != e->nmods || !same_lower(s, e) ||
	    !asx__svc_asc_same(&s->asc_cfg, &e->asc) || !same_listen(s, e))
		return false;
	for (size_t i = 0; i < e->nmods; i++)
		if (!same_mod(&s->mods[i], &e->mods[i]) || s->mods[i].inactive != e->mods[i].inactive)
			return false;
	return true;
}

/* The definitions of @e's modules, copied (library handles not yet open). */
static int copy_mods(struct asx__svc_plan *p, const struct asx__svc_ent *e,
		     struct asx__svc_mod **out)
{
	struct asx__svc_mod *m = calloc(e->nmods + 1, sizeof(*m));

	*out = m;
	if (!m)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	for (size_t i = 0; i < e->nmods; i++) {
		const struct asx__svc_ent *d = &e->mods[i];

		strcpy(m[i].name, d->name);
		m[i].dynamic = d->dir == ASX__SVC_DYNAMIC;
		m[i].kernel = d->dir == ASX__SVC_KERNEL;
		m[i].inactive = d->inactive;
		m[i].args = strdup(asx__svc_args(d));
		m[i].factory = strdup(m[i].dynamic ? d->factory : d->name);
		m[i].library = m[i].dynamic ? strdup(d->path) : NULL;
		if (!m[i].args || !m[i].factory || (m[i].dynamic && !m[i].library))
			return asx__svc_say(p, e, -ENOMEM, "out of memory");
	}
	return 0;
}

/* The definition a running Module came from (@d borrows @m's strings). */
static void def_of_mod(const struct asx__svc_mod *m, struct asx__svc_ent *d)
{
	*d = (struct asx__svc_ent){
		.dir = m->kernel ? ASX__SVC_KERNEL : m->dynamic ? ASX__SVC_DYNAMIC : ASX__SVC_STATIC,
		.type = ASX__SVC_T_MODULE, .path = m->library, .factory = m->factory,
		.args = m->args, .inactive = m->inactive,
	};
	strcpy(d->name, m->name);
}

/*
 * "suspend STREAM/MODULE" (@e) in a configuration: @st's Stream is to have
 * that Module suspended (resumed), the rest as it is defined so far in the
 * file, or as it runs.  The plan makes that definition (borrowing strings
 * from the one it copies) and owns it; the step then starts, keeps or
 * reshapes the Stream as for any definition, a state change being done in
 * place and undone with the rest of a failed transaction.
 */
int asx__svc_stream_mod_state(struct asx__svc_plan *p, struct asx__svc_step *st,
			      const struct asx__svc_ent *e)
{
	const struct asx__svc_ent *d = st->def;
	const struct asx_svc *s = st->old;
	const char *what = e->dir == ASX__SVC_SUSPEND ? "suspend" : "resume";
	struct asx__svc_ent *c;
	size_t n = d ? d->nmods : s->nmods;
	long k = -1;

	if (d ? d->dir != ASX__SVC_STREAM : s->kind != ASX__SVC_STREAMK)
		return asx__svc_say(p, e, -EMEDIUMTYPE,
				    "cannot %s '%s/%s': '%s' is a service, not a stream", what,
				    e->name, e->mod, e->name);
	c = calloc(1, sizeof(*c));
	if (c)
		c->mods = calloc(n + 1, sizeof(*c->mods));
	if (!c || !c->mods) {
		free(c);
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	}
	if (d) {
		*c = (struct asx__svc_ent){ .dir = d->dir, .kernel = d->kernel,
					    .driver = d->driver, .asc = d->asc,
					    .listen = d->listen, .framing = d->framing,
					    .mods = c->mods };
		memcpy(c->mods, d->mods, n * sizeof(*c->mods));
	} else {
		*c = (struct asx__svc_ent){ .dir = ASX__SVC_STREAM, .kernel = s->kernel,
					    .driver = s->driver, .asc = s->asc_cfg,
					    .listen = s->listen, .framing = s->framing,
					    .mods = c->mods };
		for (size_t i = 0; i < n; i++) {
			def_of_mod(&s->mods[i], &c->mods[i]);
			c->mods[i].loc = e->loc;
		}
	}
	strcpy(c->name, e->name);
	c->nmods = n;
	c->loc = d ? d->loc : e->loc;
	c->next = p->owned;
	p->owned = c;
	for (size_t i = 0; i < n && k < 0; i++)
		if (!strcmp(c->mods[i].name, e->mod))
			k = (long)i;
	if (k < 0)
		return asx__svc_say(p, e, -ENOENT, "cannot %s '%s/%s': stream '%s' has no module '%s'",
				    what, e->name, e->mod, e->name, e->mod);
	if (c->mods[k].dir == ASX__SVC_KERNEL)
		return asx__svc_say(p, e, -EOPNOTSUPP,
				    "cannot %s '%s/%s': it is an asx.ko module; only user-space modules can be suspended",
				    what, e->name, e->mod);
	c->mods[k].inactive = e->dir == ASX__SVC_SUSPEND;
	asx__svc_stream_redefine(st, c);
	return 0;
}

void asx__svc_stream_redefine(struct asx__svc_step *st, const struct asx__svc_ent *c)
{
	const struct asx_svc *s = st->old;

	st->def = c;
	if (s && s->kind == ASX__SVC_STREAMK)
		st->act = asx__svc_stream_same(s, c) ? KEEP : RESHAPE;
	if (st->act == KEEP)
		st->def = NULL;
}

int asx__svc_stream_check(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			  const struct asx__svc_ent *e)
{
	int r = 0;

	if (e->kernel && access(ASX_KSTREAM_DEV, R_OK | W_OK)) {
		r = -errno;
		return asx__svc_say(p, e, r,
				    "stream '%s': cannot open a kernel Stream with driver '%s' on "
				    ASX_KSTREAM_DEV " (is asx.ko loaded?): %s",
				    e->name, driver_of(e), strerror(-r));
	}
	for (size_t i = 0; !r && i < e->nmods; i++) {
		const struct asx__svc_ent *d = &e->mods[i];

		asx_svc_module_fn *fn;

		if (d->dir == ASX__SVC_STATIC)
			r = asx__svc_reg_module(repo, p, e->name, d, &fn);
		else if (d->dir == ASX__SVC_DYNAMIC)
			r = asx__svc_check_lib(p, d);
	}
	return r;
}

/* Make the Module @d defines; a dynamic one's library handle goes to *dl. */
static int make_mod(struct asx_svc_repo *repo, struct asx__svc_plan *p, const char *stream,
		    const struct asx__svc_ent *d, void **dl, struct asx_module **out)
{
	asx_svc_module_fn *fn = NULL;
	void *sym = NULL;
	int r;

	*out = NULL;
	*dl = NULL;
	if (d->dir == ASX__SVC_STATIC) {
		r = asx__svc_reg_module(repo, p, stream, d, &fn);
		if (r)
			return r;
	} else {
		r = asx__svc_load(p, d, dl, &sym);
		if (r)
			goto unload;
		memcpy(&fn, &sym, sizeof(fn));
	}
	r = fn(out, d->name);
	if (!r && !*out)
		r = -ENOMEM;
	if (r) {
		asx__svc_say(p, d, r, "stream '%s': module '%s': its factory failed: %s", stream,
			     d->name, strerror(-r));
		goto unload;
	}
	return 0;
unload:
	if (*dl)
		dlclose(*dl);
	*dl = NULL;
	*out = NULL;
	return r;
}

/*
 * Put @mod into the Stream: replace @old_name, insert below @above, or
 * push (both NULL); with @d's parameters.  The Stream takes @mod on success.
 */
static int place(struct asx__svc_plan *p, struct asx_stream *s, const char *stream,
		 const struct asx__svc_ent *d, struct asx_module *mod, const char *old_name,
		 const char *above)
{
	char **argv;
	int argc, r;

	if (d->inactive)
		(void)asx_module_suspend(mod);	/* not in a Stream yet: cannot fail */
	r = asx__svc_split_args(d->name, d->args, &argc, &argv);
	if (r) {
		asx_module_destroy(mod);
		return asx__svc_say(p, d, r, "stream '%s': module '%s': a quote in its parameters is not closed",
				    stream, d->name);
	}
	if (old_name)
		r = asx_stream_replace(s, old_name, mod, argc, argv);
	else if (above)
		r = asx_stream_insert(s, above, mod, argc, argv);
	else
		r = asx_stream_push(s, mod, argc, argv);
	free(argv);
	if (r) {
		asx_module_destroy(mod);
		return asx__svc_say(p, d, r, "stream '%s': module '%s': %s failed: %s", stream, d->name,
				    old_name ? "replace" : "open", strerror(-r));
	}
	return 0;
}

/*
 * Open @s's Stream: a plain one, or one over a new kernel Stream with @e's
 * kernel modules pushed on it, bottom first.
 */
/*
 * "asc N [policy P] [semantic S] [qos Q]": the ASC whose user threads
 * serve the Stream's Tasks, PRIO (priority Q) or DIRECT, non-preemptive
 * unless said otherwise.  The QoS lives in the record: the Stream keeps
 * the pointer for every Task it activates later.
 */
static int open_asc(struct asx__svc_plan *p, const struct asx__svc_ent *e, struct asx_svc *s,
		    struct asx_stream_opts *o)
{
	const struct asx__svc_asc *c = &e->asc;
	bool direct = c->policy == ASX__SVC_ASC_DIRECT;
	ASX_OPTS(struct asx_asc_opts, ao, .nvps = (unsigned int)c->vps,
		 .max_vps = (unsigned int)c->vps, .name = e->name,	/* (cut to 31 bytes) */
		 .semantic = c->semantic ? (enum asx_asc_semantic)c->semantic :
					   ASX_ASC_NONPREEMPTIVE);
	int r;

	s->asc_cfg = *c;
	if (!c->vps)
		return 0;
	if (c->policy == ASX__SVC_ASC_NAMED) {
		/* a registered policy (policy.c loads them): its threads get no QoS */
		r = asx_asc_create_by_name(&s->asc, c->pname, &ao);
		if (r == -ENOENT)
			return asx__svc_say(p, e, r,
					    "stream '%s': no ASC policy '%s' (load it before the stream: 'dynamic %s ASC_Policy * LIB.so:FACTORY()')",
					    e->name, c->pname, c->pname);
	} else {
		r = asx_asc_create(&s->asc, direct ? &asx_asc_direct : &asx_asc_prio, &ao);
	}
	if (r)
		return asx__svc_say(p, e, r, "stream '%s': cannot create its ASC of %d VPs: %s",
				    e->name, c->vps, strerror(-r));
	o->asc = s->asc;
	if (c->policy == ASX__SVC_ASC_NAMED) {
		o->asc_qos = NULL;
	} else if (direct) {
		s->asc_qos.direct = ASX_DIRECT_QOS();
		o->asc_qos = &s->asc_qos.direct.qos;
	} else {
		s->asc_qos.prio = ASX_PRIO_QOS(c->prio);
		o->asc_qos = &s->asc_qos.prio.qos;
	}
	return 0;
}

static int open_stream(struct asx__svc_plan *p, const struct asx__svc_ent *e, struct asx_svc *s)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	ASX_OPTS(struct asx_stream_opts, plain, .tail = ASX_STREAM_LOOP);
	struct asx_kstream *ks = NULL;
	int r;

	r = open_asc(p, e, s, e->kernel ? &o : &plain);
	if (r)
		return r;
	if (!e->kernel) {
		r = asx_stream_open(&s->stream, &plain);
		if (r)
			asx__svc_say(p, e, r, "stream '%s': cannot open it: %s", e->name, strerror(-r));
		return r;
	}
	s->kernel = true;
	s->driver = strdup(driver_of(e));
	if (!s->driver)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	r = asx_kstream_open(&ks, s->driver, 0);
	if (r)
		return asx__svc_say(p, e, r,
				    "stream '%s': cannot open a kernel Stream with driver '%s' on "
				    ASX_KSTREAM_DEV " (is asx.ko loaded?): %s",
				    e->name, s->driver, strerror(-r));
	for (size_t i = 0; !r && i < e->nmods && e->mods[i].dir == ASX__SVC_KERNEL; i++) {
		const struct asx__svc_ent *d = &e->mods[i];

		/* (parameters on a kernel entry do not parse) */
		if ((r = asx_kstream_push(ks, d->name)))
			asx__svc_say(p, d, r, "stream '%s': cannot push asx.ko module '%s': %s",
				     e->name, d->name, strerror(-r));
	}
	if (!r)
		r = asx_kstream_driver(&o.driver, NULL, ks, ASX_DRIVER_OWN);
	if (r) {
		asx_kstream_close(ks);
		return p->err && p->err[0] ? r :
		       asx__svc_say(p, e, r, "stream '%s': %s", e->name, strerror(-r));
	}
	/* the driver owns the kernel Stream now, and the Stream the driver */
	r = asx_stream_open(&s->stream, &o);
	if (r) {
		asx_module_destroy(o.driver);
		asx__svc_say(p, e, r, "stream '%s': cannot open it: %s", e->name, strerror(-r));
	}
	return r;
}

/* "listen ADDRESS": the Stream's head served on a socket, once its Modules are in. */
static int start_endpoint(struct asx__svc_plan *p, const struct asx__svc_ent *e,
			  struct asx_svc *s)
{
	char why[256] = "";
	int r;

	s->framing = e->framing;
	s->listen = strdup(e->listen);
	if (!s->listen)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	r = asx__svc_ep_start(s->stream, s->listen, s->framing, &s->ep, why, sizeof(why));
	if (r)
		asx__svc_say(p, e, r, "stream '%s': its endpoint: %s", e->name,
			     why[0] ? why : strerror(-r));
	return r;
}

static int stream_start(struct asx_svc_repo *repo, struct asx__svc_plan *p, struct asx__svc_step *st)
{
	const struct asx__svc_ent *e = st->def;
	struct asx_svc *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	strcpy(s->name, e->name);
	s->kind = ASX__SVC_STREAMK;
	s->state = ASX_SVC_ACTIVE;
	s->nmods = e->nmods;
	r = copy_mods(p, e, &s->mods);
	if (!r)
		r = open_stream(p, e, s);
	for (size_t i = 0; !r && i < e->nmods; i++) {
		struct asx_module *mod;

		if (e->mods[i].dir == ASX__SVC_KERNEL)
			continue;	/* pushed on the kernel Stream by open_stream() */
		r = make_mod(repo, p, e->name, &e->mods[i], &s->mods[i].dl, &mod);
		if (!r)
			r = place(p, s->stream, e->name, &e->mods[i], mod, NULL, NULL);
	}
	if (!r && e->listen)
		r = start_endpoint(p, e, s);
	if (r) {
		asx__svc_stream_stop(s);
		return r;
	}
	st->fresh = s;
	return 0;
}

/* Suspend (@inactive) or resume the Module @name of @stream. */
static int mod_state(struct asx_stream *stream, const char *name, bool inactive)
{
	return inactive ? asx_stream_suspend(stream, name) : asx_stream_resume(stream, name);
}

/* Index of module @name in @mods, or -1. */
static long find_mod(const struct asx__svc_mod *mods, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(mods[i].name, name))
			return (long)i;
	return -1;
}

static void log_undo(struct asx__svc_step *st, int what, size_t old, const char *name, void *dl)
{
	struct asx__svc_undo *u = &st->undo[st->nundo++];	/* sized by reshape */

	u->what = what;
	u->old = old;
	strcpy(u->name, name);
	u->dl = dl;
}

static void unshape(struct asx_svc_repo *repo, struct asx__svc_step *st);

static int reshape(struct asx_svc_repo *repo, struct asx__svc_plan *p, struct asx__svc_step *st)
{
	const struct asx__svc_ent *e = st->def;
	struct asx_svc *s = st->old;
	long last = (long)s->nmods;
	int r;

	if (!asx__svc_asc_same(&s->asc_cfg, &e->asc))
		return asx__svc_say(p, e, -EOPNOTSUPP,
				    "stream '%s': its Tasks' threads (pthreads, or 'asc N' and its options) cannot change while it runs: remove the Stream in one reload and add it back in the next",
				    e->name);
	if (!same_listen(s, e))
		return asx__svc_say(p, e, -EOPNOTSUPP,
				    "stream '%s': its endpoint ('listen' and its framing) cannot change while it runs: remove the Stream in one reload and add it back in the next",
				    e->name);
	if (!same_lower(s, e))
		return asx__svc_say(p, e, -EOPNOTSUPP,
				    "stream '%s': the kernel Stream below it (its driver or its asx.ko modules) cannot change while it runs: remove the Stream in one reload and add it back in the next",
				    e->name);
	/* kept modules must keep their order: top down, their old indexes fall */
	for (size_t i = e->nmods; i-- > 0;) {
		long k = find_mod(s->mods, s->nmods, e->mods[i].name);

		if (k < 0)
			continue;
		if (k > last)
			return asx__svc_say(p, &e->mods[i], -EOPNOTSUPP,
					    "stream '%s': module '%s' would move past '%s': a running Stream keeps its modules' order (remove it in one reload, add it back in the next)",
					    e->name, e->mods[i].name, s->mods[last].name);
		last = k;
	}
	r = copy_mods(p, e, &st->mods);
	st->nmods = e->nmods;
	/* one entry per module at most: logging cannot fail once a Module is in */
	st->undo = calloc(e->nmods + 1, sizeof(*st->undo));
	if (!r && !st->undo)
		r = asx__svc_say(p, e, -ENOMEM, "out of memory");
	/* top down: each module's upper neighbour is in place when it comes */
	for (size_t i = e->nmods; !r && i-- > 0;) {
		const struct asx__svc_ent *d = &e->mods[i];
		long k = find_mod(s->mods, s->nmods, d->name);
		struct asx_module *mod;
		void *dl;

		if (k >= 0 && same_mod(&s->mods[k], d)) {	/* kernel ones always */
			st->mods[i].dl = s->mods[k].dl;	/* borrowed: the Module stays */
			st->mods[i].kept = true;
			if (s->mods[k].inactive == d->inactive)
				continue;
			r = mod_state(s->stream, d->name, d->inactive);
			if (r) {
				asx__svc_say(p, d, r, "stream '%s': module '%s': %s failed: %s",
					     e->name, d->name, d->inactive ? "suspend" : "resume",
					     strerror(-r));
				break;
			}
			log_undo(st, UNDO_STATE, (size_t)k, d->name, NULL);
			continue;
		}
		r = make_mod(repo, p, e->name, d, &dl, &mod);
		if (r)
			break;
		r = place(p, s->stream, e->name, d, mod, k >= 0 ? d->name : NULL,
			  i + 1 < e->nmods ? e->mods[i + 1].name : "head");
		if (r) {
			if (dl)
				dlclose(dl);
			break;
		}
		log_undo(st, k >= 0 ? UNDO_REPLACED : UNDO_INSERTED, (size_t)k, d->name, dl);
		st->mods[i].dl = dl;
	}
	if (r)
		unshape(repo, st);
	return r;
}

static void unshape(struct asx_svc_repo *repo, struct asx__svc_step *st)
{
	struct asx_svc *s = st->old;
	struct asx__svc_plan quiet = { 0 };

	for (size_t i = st->nundo; i-- > 0;) {
		struct asx__svc_undo *u = &st->undo[i];

		if (u->what == UNDO_INSERTED) {
			(void)asx_stream_remove(s->stream, u->name);
		} else if (u->what == UNDO_STATE) {
			(void)mod_state(s->stream, u->name, s->mods[u->old].inactive);
		} else {
			/* a fresh Module of the old definition takes its place again */
			const struct asx__svc_mod *m = &s->mods[u->old];
			struct asx__svc_ent d;
			struct asx_module *mod;
			void *dl;

			def_of_mod(m, &d);
			if (!make_mod(repo, &quiet, s->name, &d, &dl, &mod))
				(void)place(&quiet, s->stream, s->name, &d, mod, m->name, NULL);
			/* the old list still holds its own reference to the library */
			if (dl)
				dlclose(dl);
		}
		if (u->dl)	/* the new Module is gone: its library may go */
			dlclose(u->dl);
	}
	free(st->undo);
	st->undo = NULL;
	st->nundo = 0;
	/* the new list's handles were closed above or are borrowed */
	mods_free(st->mods, st->nmods);
	st->mods = NULL;
	st->nmods = 0;
}

void asx__svc_stream_commit(struct asx__svc_step *st)
{
	struct asx_svc *s = st->old;

	/* what the new list drops leaves now; replaced Modules' old handles go */
	for (size_t i = 0; i < s->nmods; i++) {
		long k = find_mod(st->mods, st->nmods, s->mods[i].name);

		if (k < 0)
			(void)asx_stream_remove(s->stream, s->mods[i].name);
		if ((k < 0 || !st->mods[k].kept) && s->mods[i].dl)
			dlclose(s->mods[i].dl);
	}
	for (size_t i = 0; i < st->nmods; i++)
		st->mods[i].kept = false;
	mods_free(s->mods, s->nmods);
	s->mods = st->mods;
	s->nmods = st->nmods;
	st->mods = NULL;
	st->nmods = 0;
	free(st->undo);
	st->undo = NULL;
	st->nundo = 0;
}

void asx__svc_stream_stop(struct asx_svc *s)
{
	asx__svc_ep_stop(s->ep);	/* no client reaches the Stream from here on */
	free(s->listen);
	if (s->stream)
		asx_stream_close(s->stream);	/* closes and frees its Modules */
	if (s->asc)
		asx_asc_destroy(s->asc);	/* its threads were joined by the close */
	mods_unload(s->mods, s->nmods);
	mods_free(s->mods, s->nmods);
	free(s->driver);
	free(s);
}

int asx__svc_module_state(struct asx_svc_repo *repo, const char *path, bool on)
{
	const char *slash = strchr(path, '/');
	size_t len = (size_t)(slash - path);
	struct asx_svc *s;
	long k = -1;
	int r = -ENOENT;

	pthread_mutex_lock(&repo->lock);
	for (s = repo->svcs; s; s = s->next)
		if (strlen(s->name) == len && !memcmp(s->name, path, len))
			break;
	if (s && s->kind == ASX__SVC_STREAMK)
		k = find_mod(s->mods, s->nmods, slash + 1);
	if (s && s->kind != ASX__SVC_STREAMK)
		r = -EMEDIUMTYPE;
	else if (k >= 0 && s->mods[k].kernel)
		r = -EOPNOTSUPP;	/* an asx.ko module */
	else if (k >= 0)
		r = mod_state(s->stream, slash + 1, on);
	if (!r)
		s->mods[k].inactive = on;
	pthread_mutex_unlock(&repo->lock);
	return r;
}

int asx__svc_stream_prepare(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			    struct asx__svc_step *st)
{
	if (st->act == START)
		return stream_start(repo, p, st);
	if (st->act == RESHAPE)
		return reshape(repo, p, st);
	if (st->act == KEEP && st->old->state != st->want)
		return asx__svc_say(p, st->why, -EOPNOTSUPP, "Stream '%s' cannot be suspended or resumed",
				    st->old->name);
	return 0;
}

void asx__svc_stream_undo(struct asx_svc_repo *repo, struct asx__svc_step *st)
{
	if (st->act == RESHAPE && st->mods)
		unshape(repo, st);
	if (st->fresh) {
		asx__svc_stream_stop(st->fresh);
		st->fresh = NULL;
	}
}
