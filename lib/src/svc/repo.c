// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * repo.c - the Service Repository and applying svc.conf to it.
 *
 * Applying is a transaction in three phases.  plan() walks the directives
 * over a copy of the repository's state (which service runs, which
 * definition it has, which state it should end in) and says what to do:
 * start a new instance, keep, suspend, resume, or stop each service; a
 * directive naming a service that is not there fails it here.  prepare()
 * does everything that can fail: it makes and initialises every new
 * instance (loading its library, checking its ABI stamp) and changes the
 * states of the services that stay, undoing all of it on the first
 * failure.  commit() cannot fail: it puts the new instances in place and
 * finalises the services they replace or that were removed.
 *
 * Libraries are reference-counted by the dynamic linker itself: each
 * service holds its own dlopen() handle, so a library is unloaded when the
 * last service made from it is removed.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <asx/svc.h>

#include "core/opts.h"
#include "svc/svc_impl.h"

void *asx_svc_priv(const struct asx_svc *svc) { return svc ? svc->priv : NULL; }
const char *asx_svc_name(const struct asx_svc *svc) { return svc ? svc->name : NULL; }

int asx_svc_repo_create(struct asx_svc_repo **out)
{
	struct asx_svc_repo *r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	*out = r;
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

/* Stop a started service: fini (a Stream: close), then its library reference. */
static void stop_svc(struct asx_svc *s)
{
	if (s->kind == ASX__SVC_STREAMK) {
		asx__svc_stream_stop(s);
		return;
	}
	s->ops.fini((struct asx_svc *)s);
	free_svc(s);
}

void asx_svc_repo_destroy(struct asx_svc_repo *repo)
{
	if (!repo)
		return;
	/* the reverse of the start order: later services may use earlier ones */
	while (repo->svcs) {
		struct asx_svc **pp = &repo->svcs, *s;

		while ((*pp)->next)
			pp = &(*pp)->next;
		s = *pp;
		*pp = NULL;
		stop_svc(s);
	}
	while (repo->regs) {
		struct asx__svc_reg *g = repo->regs;

		repo->regs = g->next;
		free(g);
	}
	pthread_mutex_destroy(&repo->lock);
	free(repo);
}

static bool valid_name(const char *n)
{
	size_t len = strlen(n);

	if (!len || len >= ASX_SVC_NAME_MAX ||
	    !((*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z') || *n == '_'))
		return false;
	for (; *n; n++)
		if (!((*n >= 'A' && *n <= 'Z') || (*n >= 'a' && *n <= 'z') ||
		      (*n >= '0' && *n <= '9') || strchr("_.-", *n)))
			return false;
	return true;
}

int asx__svc_register(struct asx_svc_repo *repo, const char *name, asx_svc_factory_fn *f,
		      asx_svc_module_fn *m)
{
	struct asx__svc_reg *g;
	int r = 0;

	if (!repo || !name || (!f && !m) || !valid_name(name))
		return -EINVAL;
	pthread_mutex_lock(&repo->lock);
	for (g = repo->regs; g; g = g->next)
		if (!strcmp(g->name, name) && (f ? !!g->factory : !!g->module))
			r = -EEXIST;
	if (!r) {
		g = calloc(1, sizeof(*g));
		if (g) {
			strcpy(g->name, name);
			g->factory = f;
			g->module = m;
			g->next = repo->regs;
			repo->regs = g;
		} else {
			r = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&repo->lock);
	return r;
}

int asx_svc_register(struct asx_svc_repo *repo, const char *name, asx_svc_factory_fn *factory)
{
	return factory ? asx__svc_register(repo, name, factory, NULL) : -EINVAL;
}

static struct asx_svc *find_locked(struct asx_svc_repo *repo, const char *name)
{
	for (struct asx_svc *s = repo->svcs; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* ---------------------------------------------------------------- planning */

int asx__svc_say(struct asx__svc_plan *p, const struct asx__svc_ent *e, int r,
		 const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!p->err || !p->errlen)
		return r;
	if (e)
		n = snprintf(p->err, p->errlen, "%s:%u:%u: ", e->loc.file, e->loc.line, e->loc.col);
	if (n < 0 || (size_t)n >= p->errlen)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return r;
}

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

/* Does the running @s have exactly the definition @e? */
static bool same_def(const struct asx_svc *s, const struct asx__svc_ent *e)
{
	if (s->kind != ASX__SVC_OBJECT || strcmp(s->args, asx__svc_args(e)))
		return false;
	if (e->dir == ASX__SVC_STATIC)
		return s->linked_in;
	return !s->linked_in && !strcmp(s->factory, e->factory) && s->library &&
	       !strcmp(s->library, e->path);
}

static int by_seq(const void *a, const void *b)
{
	const struct asx__svc_step *x = *(struct asx__svc_step *const *)a, *y = *(struct asx__svc_step *const *)b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x < y ? -1 : x > y;	/* stable: the array's order */
}

static int plan(struct asx_svc_repo *repo, const struct asx__svc_conf *c, unsigned int flags,
		struct asx__svc_plan *p)
{
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
	unsigned int seq = 0;

	for (const struct asx__svc_ent *e = c->head; e; e = e->next) {
		struct asx__svc_step *st = step_of(p, e->name);

		switch (e->dir) {
		case ASX__SVC_DYNAMIC:
		case ASX__SVC_STATIC:
			/* (a Module outside a stream does not parse) */
			if (!st && !(st = new_step(p, e->name)))
				return asx__svc_say(p, NULL, -ENOMEM, "out of memory");
			st->def = e;
			st->act = st->old && same_def(st->old, e) ? KEEP : START;
			if (st->act == KEEP)
				st->def = NULL;
			st->want = e->inactive ? ASX_SVC_SUSPENDED : ASX_SVC_ACTIVE;
			st->why = e;
			st->seq = ++seq;
			break;
		case ASX__SVC_REMOVE:
		case ASX__SVC_SUSPEND:
		case ASX__SVC_RESUME:
			if (e->mod[0] && (!st || st->act == STOP))
				return asx__svc_say(p, e, -ENOENT, "cannot %s '%s/%s': no stream '%s'",
					   e->dir == ASX__SVC_SUSPEND ? "suspend" : "resume",
					   e->name, e->mod, e->name);
			if (!st || st->act == STOP)
				return asx__svc_say(p, e, -ENOENT, "no service '%s' to %s", e->name,
					   e->dir == ASX__SVC_REMOVE ? "remove" :
					   e->dir == ASX__SVC_SUSPEND ? "suspend" : "resume");
			if (e->mod[0]) {
				int r = asx__svc_stream_mod_state(p, st, e);

				if (r)
					return r;
				st->why = e;
			} else if (e->dir == ASX__SVC_REMOVE) {
				st->act = STOP;
				st->def = NULL;
			} else {
				st->want = e->dir == ASX__SVC_SUSPEND ? ASX_SVC_SUSPENDED :
					   ASX_SVC_ACTIVE;
				st->why = e;
			}
			st->seq = ++seq;
			break;
		case ASX__SVC_STREAM:
			if (!st && !(st = new_step(p, e->name)))
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
			st->seq = ++seq;
			break;
		default:
			return asx__svc_say(p, e, -EINVAL, "unexpected directive");
		}
	}
	/* prepare() works in the order the directives came */
	p->order = calloc(p->n + 1, sizeof(*p->order));
	if (!p->order)
		return asx__svc_say(p, NULL, -ENOMEM, "out of memory");
	for (size_t i = 0; i < p->n; i++)
		p->order[i] = &p->v[i];
	qsort(p->order, p->n, sizeof(*p->order), by_seq);
	return 0;
}

/* ---------------------------------------------------------------- prepare */

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

/* The library path as dlopen() should see it. */
static char *lib_path(struct asx__svc_plan *p, const char *path)
{
	char *s = NULL;

	if (path[0] == '/' || !strchr(path, '/') || !p->confdir)
		return strdup(path);
	if (asprintf(&s, "%s/%s", p->confdir, path) < 0)
		return NULL;
	return s;
}

/*
 * The ABI stamp of @factory in @dl as a Module (@module) or a service
 * factory defines it (ASX_SVC_MODULE_FACTORY, ASX_SVC_FACTORY): *abi, NULL
 * if there is none.  -ENOMEM or 0.
 */
static int stamp_of(void *dl, const char *factory, bool module, const unsigned int **abi)
{
	char *stamp = NULL;

	*abi = NULL;
	if (asprintf(&stamp, "%s_asx_svc%s_abi", factory, module ? "_module" : "") < 0)
		return -ENOMEM;
	*abi = dlsym(dl, stamp);
	free(stamp);
	return 0;
}

int asx__svc_check_lib(struct asx__svc_plan *p, const struct asx__svc_ent *e)
{
	const char *what = e->type == ASX__SVC_T_MODULE ? "module" : "service";
	char *path;
	struct stat st;
	int fd, r = 0;

	if (!strchr(e->path, '/'))
		return 0;	/* searched as dlopen() searches: found only by loading */
	path = lib_path(p, e->path);
	if (!path)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		r = -errno;
	else if (!S_ISREG(st.st_mode))
		r = -EINVAL;
	if (fd >= 0)
		close(fd);
	free(path);
	if (r)
		return asx__svc_say(p, e, r == -EINVAL ? -ENOENT : r, "%s '%s': cannot load %s: %s",
				    what, e->name, e->path,
				    r == -EINVAL ? "not a regular file" : strerror(-r));
	return 0;
}

int asx__svc_load(struct asx__svc_plan *p, const struct asx__svc_ent *e, void **dl, void **fn)
{
	const char *what = e->type == ASX__SVC_T_MODULE ? "module" : "service";
	bool module = e->type == ASX__SVC_T_MODULE;
	const char *macro = module ? "ASX_SVC_MODULE_FACTORY" : "ASX_SVC_FACTORY";
	const unsigned int *abi, *other;
	const char *why;
	char *path;

	path = lib_path(p, e->path);
	if (!path)
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	*dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	free(path);
	if (!*dl) {
		why = dlerror();
		return asx__svc_say(p, e, -ENOENT, "%s '%s': cannot load %s: %s", what, e->name,
				    e->path, why ? why : "unknown error");
	}
	dlerror();
	*fn = dlsym(*dl, e->factory);
	if (!*fn)
		return asx__svc_say(p, e, -ENOENT, "%s '%s': %s has no function %s", what, e->name,
				    e->path, e->factory);
	if (stamp_of(*dl, e->factory, module, &abi))
		return asx__svc_say(p, e, -ENOMEM, "out of memory");
	if (!abi && !stamp_of(*dl, e->factory, !module, &other) && other)
		return asx__svc_say(p, e, -ENOEXEC,
				    "%s '%s': %s in %s is a %s factory (%s()), not a %s factory: load it as %s, or define it with %s()",
				    what, e->name, e->factory, e->path, module ? "service" : "Module",
				    module ? "ASX_SVC_FACTORY" : "ASX_SVC_MODULE_FACTORY",
				    module ? "Module" : "service",
				    module ? "a 'Service_Object'" : "a 'Module' in a stream", macro);
	if (!abi)
		return asx__svc_say(p, e, -ENOEXEC,
				    "%s '%s': %s in %s has no ABI stamp (define it with %s())",
				    what, e->name, e->factory, e->path, macro);
	if (*abi != ASX_SVC_ABI)
		return asx__svc_say(p, e, -ENOEXEC,
				    "%s '%s': %s was built for service ABI %u, this libasx has ABI %u: rebuild it against this libasx",
				    what, e->name, e->path, *abi, ASX_SVC_ABI);
	return 0;
}

static int load_factory(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			const struct asx__svc_ent *e, struct asx_svc *s, asx_svc_factory_fn **fn)
{
	void *sym = NULL;
	int r;

	if (e->dir == ASX__SVC_STATIC) {
		for (struct asx__svc_reg *g = repo->regs; g; g = g->next)
			if (g->factory && !strcmp(g->name, e->name)) {
				*fn = g->factory;
				s->linked_in = true;
				return 0;
			}
		return asx__svc_say(p, e, -ENOENT,
			   "static service '%s': the program registered no factory of that name (asx_svc_register())",
			   e->name);
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
	stop_svc(s);
	return r;
fail:
	free_svc(s);
	return r;
}

static int set_state(struct asx__svc_plan *p, struct asx_svc *s, enum asx_svc_state want,
		     const struct asx__svc_ent *why)
{
	int r;

	if (s->state == want)
		return 0;
	if (s->kind == ASX__SVC_STREAMK)
		return asx__svc_say(p, why, -EOPNOTSUPP, "Stream '%s' cannot be suspended or resumed",
				    s->name);
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

static void undo(struct asx_svc_repo *repo, struct asx__svc_plan *p, size_t upto)
{
	for (size_t i = upto; i-- > 0;) {
		struct asx__svc_step *st = p->order[i];

		if (st->act == RESHAPE && st->mods)
			asx__svc_stream_unshape(repo, st);
		if (st->fresh) {
			stop_svc(st->fresh);
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
}

static int prepare(struct asx_svc_repo *repo, struct asx__svc_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct asx__svc_step *st = p->order[i];
		int r = 0;

		if (st->act == START && st->def->dir == ASX__SVC_STREAM) {
			r = asx__svc_stream_start(repo, p, st);
		} else if (st->act == RESHAPE) {
			r = asx__svc_stream_reshape(repo, p, st);
		} else if (st->act == START) {
			r = start_one(repo, p, st);
			if (!r && st->want == ASX_SVC_SUSPENDED)
				r = set_state(p, st->fresh, st->want, st->why);
			if (r && st->fresh) {
				stop_svc(st->fresh);
				st->fresh = NULL;
			}
		} else if (st->act == KEEP && st->old->state != st->want) {
			r = set_state(p, st->old, st->want, st->why);
			st->state_changed = !r;
		}
		if (r) {
			undo(repo, p, i);
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

		if (st->act == RESHAPE)
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
	/* then what they replace and what was removed, latest started first */
	for (size_t i = p->n; i-- > 0;)
		if (p->v[i].act != KEEP && p->v[i].act != RESHAPE && p->v[i].old)
			stop_svc(p->v[i].old);
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

static int apply(struct asx_svc_repo *repo, const struct asx__svc_conf *c, const char *name,
		 unsigned int flags, char *err, size_t errlen)
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
	if (!r)
		r = prepare(repo, &p);
	if (!r)
		commit(repo, &p);
	pthread_mutex_unlock(&repo->lock);
	plan_free(&p);
	free(dir);
	return r;
}

static int parsed(struct asx_svc_repo *repo, struct asx__svc_conf *c, int r,
		  const struct asx__svc_err *pe, const char *name, unsigned int flags,
		  char *err, size_t errlen)
{
	if (r) {
		if (err && errlen)
			snprintf(err, errlen, "%s", pe->msg);
		return r;
	}
	r = apply(repo, c, name, flags, err, errlen);
	asx__svc_conf_free(c);
	return r;
}

int asx_svc_apply_file(struct asx_svc_repo *repo, const char *path, unsigned int flags,
		       char *err, size_t errlen)
{
	struct asx__svc_conf *c = NULL;
	struct asx__svc_err pe;

	if (err && errlen)
		err[0] = '\0';
	if (!repo || !path || (flags & ~ASX_SVC_RELOAD))
		return -EINVAL;
	return parsed(repo, c, asx__svc_parse_file(path, &c, &pe), &pe, path, flags, err, errlen);
}

int asx_svc_apply_text(struct asx_svc_repo *repo, const char *name, const char *text,
		       unsigned int flags, char *err, size_t errlen)
{
	struct asx__svc_conf *c = NULL;
	struct asx__svc_err pe;
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!repo || !name || !text || (flags & ~ASX_SVC_RELOAD))
		return -EINVAL;
	r = asx__svc_parse_mem(name, text, strlen(text), &c, &pe);
	return parsed(repo, c, r, &pe, name, flags, err, errlen);
}

int asx_svc_check_file(const char *path, char *err, size_t errlen)
{
	struct asx__svc_conf *c = NULL;
	struct asx__svc_err pe;
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!path)
		return -EINVAL;
	r = asx__svc_parse_file(path, &c, &pe);
	if (r && err && errlen)
		snprintf(err, errlen, "%s", pe.msg);
	asx__svc_conf_free(c);
	return r;
}

/* Dry run: could the plan's steps start, as far as that is known without loading? */
static int dry_run(struct asx_svc_repo *repo, struct asx__svc_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		const struct asx__svc_step *st = p->order[i];
		const struct asx__svc_ent *e = st->def;
		asx_svc_factory_fn *fn = NULL;
		int r = 0;

		if ((st->act != START && st->act != RESHAPE) || !e)
			continue;
		if (e->dir == ASX__SVC_STREAM) {
			r = asx__svc_stream_check(repo, p, e);
		} else if (e->dir == ASX__SVC_DYNAMIC) {
			r = asx__svc_check_lib(p, e);
		} else {
			for (struct asx__svc_reg *g = repo->regs; g && !fn; g = g->next)
				if (g->factory && !strcmp(g->name, e->name))
					fn = g->factory;
			if (!fn)
				r = asx__svc_say(p, e, -ENOENT,
						 "static service '%s': the program registered no factory of that name (asx_svc_register())",
						 e->name);
		}
		if (r)
			return r;
	}
	return 0;
}

int asx_svc_check(struct asx_svc_repo *repo, const char *path, unsigned int flags,
		  char *err, size_t errlen)
{
	struct asx__svc_plan p = { .err = err, .errlen = errlen };
	struct asx__svc_conf *c = NULL;
	struct asx__svc_err pe;
	const char *slash;
	char *dir = NULL;
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!repo || !path || (flags & ~ASX_SVC_RELOAD))
		return -EINVAL;
	r = asx__svc_parse_file(path, &c, &pe);
	if (r) {
		if (err && errlen)
			snprintf(err, errlen, "%s", pe.msg);
		return r;
	}
	slash = strrchr(path, '/');
	if (slash && !(dir = strndup(path, (size_t)(slash - path)))) {
		asx__svc_conf_free(c);
		return -ENOMEM;
	}
	p.confdir = dir;
	pthread_mutex_lock(&repo->lock);
	r = plan(repo, c, flags, &p);
	if (!r)
		r = dry_run(repo, &p);
	pthread_mutex_unlock(&repo->lock);
	plan_free(&p);
	free(dir);
	asx__svc_conf_free(c);
	return r;
}

/* ---------------------------------------------------------------- by name */

static int by_name(struct asx_svc_repo *repo, const char *name, int what)
{
	struct asx__svc_plan p = { 0 };
	struct asx_svc *s, **pp;
	int r = 0;

	if (!repo || !name)
		return -EINVAL;
	if (strchr(name, '/'))		/* STREAM/MODULE */
		return what == ASX__SVC_REMOVE ? -EOPNOTSUPP :
		       asx__svc_module_state(repo, name, what == ASX__SVC_SUSPEND);
	pthread_mutex_lock(&repo->lock);
	s = find_locked(repo, name);
	if (!s) {
		r = -ENOENT;
	} else if (what == ASX__SVC_REMOVE) {
		for (pp = &repo->svcs; *pp != s; pp = &(*pp)->next)
			;
		*pp = s->next;
		stop_svc(s);
	} else {
		r = set_state(&p, s, what == ASX__SVC_SUSPEND ? ASX_SVC_SUSPENDED : ASX_SVC_ACTIVE,
			      NULL);
	}
	pthread_mutex_unlock(&repo->lock);
	return r;
}

int asx_svc_suspend(struct asx_svc_repo *repo, const char *name)
{
	return by_name(repo, name, ASX__SVC_SUSPEND);
}

int asx_svc_resume(struct asx_svc_repo *repo, const char *name)
{
	return by_name(repo, name, ASX__SVC_RESUME);
}

int asx_svc_remove(struct asx_svc_repo *repo, const char *name)
{
	return by_name(repo, name, ASX__SVC_REMOVE);
}

static void describe(struct asx_svc *s, struct asx_svc_info *in)
{
	memset(in, 0, sizeof(*in));
	strcpy(in->name, s->name);
	in->state = s->state;
	in->library = s->library;
	in->factory = s->factory;
	in->args = s->args;
	if (s->kind == ASX__SVC_STREAMK) {
		size_t n;

		if (s->kernel)
			n = (size_t)snprintf(in->desc, sizeof(in->desc), "Stream over asx.ko '%s', ",
					     s->driver);
		else
			n = (size_t)snprintf(in->desc, sizeof(in->desc), "Stream, ");
		n += (size_t)snprintf(in->desc + n, sizeof(in->desc) - n,
				      s->nmods ? "modules bottom first:" : "no modules");
		in->factory = "stream";
		in->args = "";
		for (size_t i = 0; i < s->nmods && n < sizeof(in->desc); i++)
			n += (size_t)snprintf(in->desc + n, sizeof(in->desc) - n, " %s%s",
					      s->mods[i].name, s->mods[i].kernel ? "(asx.ko)" :
					      s->mods[i].inactive ? "(suspended)" : "");
		if (n >= sizeof(in->desc))	/* said, not silently cut */
			memcpy(in->desc + sizeof(in->desc) - 4, "...", 4);
	} else if (s->ops.info) {
		s->ops.info(s, in->desc, sizeof(in->desc));
		in->desc[sizeof(in->desc) - 1] = '\0';
	}
}

int asx_svc_list(struct asx_svc_repo *repo, struct asx_svc_info *out, size_t n)
{
	size_t i = 0;

	if (!repo || (n && !out))
		return -EINVAL;
	pthread_mutex_lock(&repo->lock);
	for (struct asx_svc *s = repo->svcs; s; s = s->next, i++)
		if (i < n)
			describe(s, &out[i]);
	pthread_mutex_unlock(&repo->lock);
	return i > (size_t)INT32_MAX ? INT32_MAX : (int)i;
}

int asx_svc_find(struct asx_svc_repo *repo, const char *name, struct asx_svc_info *info)
{
	struct asx_svc *s;

	if (!repo || !name || !info)
		return -EINVAL;
	pthread_mutex_lock(&repo->lock);
	s = find_locked(repo, name);
	if (s)
		describe(s, info);
	pthread_mutex_unlock(&repo->lock);
	return s ? 0 : -ENOENT;
}
