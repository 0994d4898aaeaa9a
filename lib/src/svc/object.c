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
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <asx/reactor.h>
#include <asx/svc.h>

#include "core/compiler.h"
#include "core/opts.h"
#include "svc/load.h"
#include "svc/object.h"
#include "svc/registry.h"

/*
 * A reactive service (asx_svc_reactor()): its own Reactor @sub, whose epoll
 * descriptor is one handle of the repository's Reactor @top.  @lock is held
 * while @sub dispatches, so a suspend or a stop that takes it knows that no
 * callback of the service runs, and, with @on / @dead set, that none will.
 */
struct asx__svc_evh {
	struct asx_event_handler eh;	/* on @top: @sub's descriptor, ASX_EV_READ */
	struct asx_reactor *sub, *top;
	pthread_mutex_t lock;
	bool on;			/* dispatch (active) */
	bool dead;			/* being finalised: never dispatch again */
	bool registered;		/* on @top */
};

/* The service whose callbacks this thread runs now (they may not call the repository). */
static __thread const struct asx__svc_evh *in_callback;

bool asx__svc_in_callback(void)
{
	return in_callback != NULL;
}

static int evh_input(struct asx_event_handler *eh, int fd)
{
	static const struct timespec past;	/* poll: dispatch what is ready, no wait */
	struct asx__svc_evh *v = container_of(eh, struct asx__svc_evh, eh);
	int r = 0;

	(void)fd;
	pthread_mutex_lock(&v->lock);
	if (v->dead) {
		r = -1;
	} else if (v->on) {
		in_callback = v;
		(void)asx_reactor_run_once(v->sub, &past);
		in_callback = NULL;
	}
	pthread_mutex_unlock(&v->lock);
	return r;
}

static void evh_release(struct asx_event_handler *eh)
{
	struct asx__svc_evh *v = container_of(eh, struct asx__svc_evh, eh);

	pthread_mutex_destroy(&v->lock);
	free(v);
}

static const struct asx_event_handler_ops evh_ops = {
	.handle_input = evh_input, .release = evh_release,
};

/* Set @v's dispatching on or off, waiting for a dispatch that runs. */
static void evh_set(struct asx__svc_evh *v, bool on, bool dead)
{
	pthread_mutex_lock(&v->lock);
	v->on = on;
	v->dead = dead;
	pthread_mutex_unlock(&v->lock);
}

/* Init returned: put the service's handle on the repository's Reactor. */
static int evh_start(struct asx_svc *s)
{
	struct asx__svc_evh *v = s->evh;
	int r;

	evh_set(v, s->state == ASX_SVC_ACTIVE, false);
	r = asx_reactor_register_fd(v->top, asx_reactor_handle(v->sub), &v->eh, ASX_EV_READ);
	v->registered = !r;
	if (!r && s->state != ASX_SVC_ACTIVE)
		r = asx_reactor_suspend_handler(v->top, &v->eh);
	return r;
}

/* Take the handle off (@on false: no callback runs when it returns) or put it back. */
static int evh_state(struct asx__svc_evh *v, bool on)
{
	int r;

	if (on) {
		evh_set(v, true, false);
		return asx_reactor_resume_handler(v->top, &v->eh);
	}
	r = asx_reactor_suspend_handler(v->top, &v->eh);
	evh_set(v, false, false);
	return r;
}

int asx__svc_repo_rx(struct asx_svc_repo *repo, struct asx_reactor **out)
{
	int r = 0;

	pthread_mutex_lock(&repo->rx_lock);
	if (!repo->rx)
		r = asx_reactor_create(&repo->rx);
	*out = repo->rx;
	pthread_mutex_unlock(&repo->rx_lock);
	return r;
}

int asx_svc_reactor(struct asx_svc *svc, struct asx_reactor **out)
{
	struct asx__svc_evh *v;
	struct asx_reactor *top;
	int r;

	if (!svc || !out || svc->kind != ASX__SVC_OBJECT)
		return -EINVAL;
	*out = NULL;
	if (svc->evh) {
		*out = svc->evh->sub;
		return 0;
	}
	r = asx__svc_repo_rx(svc->repo, &top);
	if (r)
		return r;
	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	r = asx_reactor_create(&v->sub);
	if (r) {
		free(v);
		return r;
	}
	pthread_mutex_init(&v->lock, NULL);
	asx_event_handler_init(&v->eh, &evh_ops);
	v->top = top;
	svc->evh = v;
	if (svc->started) {	/* asked for after init: on the Reactor now */
		r = evh_start(svc);
		if (r)
			return r;
	}
	*out = v->sub;
	return 0;
}

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
	s->repo = repo;
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
	s->started = true;
	if (s->evh) {
		r = evh_start(s);
		if (r) {
			asx__svc_say(p, e, r, "service '%s': its handle cannot go on the Reactor: %s",
				     e->name, strerror(-r));
			goto fail_fini;
		}
	}
	st->fresh = s;
	return 0;
fail_fini:
	asx__svc_object_stop(s);
	return r;
fail:
	free_svc(s);
	return r;
}

/*
 * The service's own operation and, reactive, its handle: suspended, the
 * handle goes off first (the operation runs with no callback running);
 * resumed, it comes back last.  A failure leaves it as it was.
 */
static int change_state(struct asx_svc *s, enum asx_svc_state want)
{
	bool off = want == ASX_SVC_SUSPENDED;
	int (*op)(struct asx_svc *) = off ? s->ops.suspend : s->ops.resume;
	int r = 0;

	if (off && s->evh)
		r = evh_state(s->evh, false);
	if (!r && op)
		r = op(s);
	if (s->evh && (!off || r))	/* resumed, or a suspend that failed: back on */
		(void)evh_state(s->evh, true);
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
				    s->kind == ASX__SVC_MUXK ? "Mux" :
				    s->kind == ASX__SVC_POLICYK ? "ASC policy" : "Stream", s->name);
	if (want == ASX_SVC_SUSPENDED && !s->ops.suspend && !s->evh)
		return asx__svc_say(p, why, -EOPNOTSUPP, "service '%s' cannot be suspended (it has no suspend operation)",
			   s->name);
	if (want == ASX_SVC_ACTIVE && !s->ops.resume && !s->evh)
		return asx__svc_say(p, why, -EOPNOTSUPP, "service '%s' cannot be resumed (it has no resume operation)",
			   s->name);
	r = change_state(s, want);
	if (r)
		return asx__svc_say(p, why, r < 0 ? r : -EINVAL, "service '%s': %s failed: %s", s->name,
			   want == ASX_SVC_SUSPENDED ? "suspend" : "resume",
			   strerror(r < 0 ? -r : EINVAL));
	s->state = want;
	return 0;
}

void asx__svc_object_stop(struct asx_svc *s)
{
	struct asx__svc_evh *v = s->evh;

	if (v) {
		/* off the Reactor, and no callback runs or will run */
		if (v->registered)
			(void)asx_reactor_remove_handler(v->top, &v->eh);
		evh_set(v, false, true);
	}
	s->ops.fini(s);
	if (v) {
		/* what fini left registered is closed while its code is still loaded */
		(void)asx_reactor_destroy(v->sub);
		asx_event_handler_put(&v->eh);
	}
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
		int r = change_state(st->old, back);

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
