// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * api.c - the Service Repository's public API (<asx/svc.h>): a repository
 * made and destroyed, a configuration parsed and handed to plan.c, a
 * service or a Stream's Module changed by name, the services listed.
 *
 * The top file of lib/src/svc: it calls plan.c, object.c, stream.c,
 * registry.c and conf.c, and nothing calls it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/reactor.h>
#include <asx/svc.h>

#include "svc/endpoint.h"
#include "svc/link.h"
#include "svc/object.h"
#include "svc/plan.h"
#include "svc/policy.h"
#include "svc/registry.h"
#include "svc/stream.h"

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
	pthread_mutex_init(&r->rx_lock, NULL);
	*out = r;
	return 0;
}

void asx_svc_repo_destroy(struct asx_svc_repo *repo)
{
	if (!repo)
		return;
	/* the muxes first: no Stream goes while linked under one */
	for (struct asx_svc **pp = &repo->svcs; *pp;) {
		struct asx_svc *s = *pp;

		if (s->kind == ASX__SVC_MUXK) {
			*pp = s->next;
			asx__svc_stop(s);
		} else {
			pp = &s->next;
		}
	}
	/* the reverse of the start order: later services may use earlier ones */
	while (repo->svcs) {
		struct asx_svc **pp = &repo->svcs, *s;

		while ((*pp)->next)
			pp = &(*pp)->next;
		s = *pp;
		*pp = NULL;
		asx__svc_stop(s);
	}
	asx__svc_reg_free(repo);
	(void)asx_reactor_destroy(repo->rx);
	pthread_mutex_destroy(&repo->rx_lock);
	pthread_mutex_destroy(&repo->lock);
	free(repo);
}

int asx_svc_repo_reactor(struct asx_svc_repo *repo, struct asx_reactor **out)
{
	if (!repo || !out)
		return -EINVAL;
	return asx__svc_repo_rx(repo, out);
}

int asx_svc_register(struct asx_svc_repo *repo, const char *name, asx_svc_factory_fn *factory)
{
	return factory ? asx__svc_register(repo, name, factory, NULL) : -EINVAL;
}

int asx_svc_register_module(struct asx_svc_repo *repo, const char *name, asx_svc_module_fn *factory)
{
	return asx__svc_register(repo, name, NULL, factory);
}

static struct asx_svc *find_locked(struct asx_svc_repo *repo, const char *name)
{
	for (struct asx_svc *s = repo->svcs; s; s = s->next)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* Apply (or with @dry only check) what the parser gave: @r and @pe are its result. */
static int parsed(struct asx_svc_repo *repo, struct asx__svc_conf *c, int r,
		  const struct asx__svc_err *pe, const char *name, unsigned int flags,
		  char *err, size_t errlen, bool dry)
{
	if (r) {
		if (err && errlen)
			snprintf(err, errlen, "%s", pe->msg);
		return r;
	}
	if (!dry && asx__svc_in_callback()) {
		asx__svc_conf_free(c);
		return -EDEADLK;	/* a reactive service's callback: its stop would wait for itself */
	}
	r = dry ? asx__svc_dry_run(repo, c, name, flags, err, errlen) :
		  asx__svc_apply(repo, c, name, flags, err, errlen);
	asx__svc_conf_free(c);
	return r;
}

/* asx_svc_apply_file(), or with @dry asx_svc_check(). */
static int from_file(struct asx_svc_repo *repo, const char *path, unsigned int flags,
		     char *err, size_t errlen, bool dry)
{
	struct asx__svc_conf *c = NULL;
	struct asx__svc_err pe;
	int r;

	if (err && errlen)
		err[0] = '\0';
	if (!repo || !path || (flags & ~ASX_SVC_RELOAD))
		return -EINVAL;
	/* parsed first: the order a call's arguments are evaluated in is the
	 * compiler's (aarch64 GCC read c before the parse had set it) */
	r = asx__svc_parse_file(path, &c, &pe);
	return parsed(repo, c, r, &pe, path, flags, err, errlen, dry);
}

int asx_svc_apply_file(struct asx_svc_repo *repo, const char *path, unsigned int flags,
		       char *err, size_t errlen)
{
	return from_file(repo, path, flags, err, errlen, false);
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
	return parsed(repo, c, r, &pe, name, flags, err, errlen, false);
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

int asx_svc_check(struct asx_svc_repo *repo, const char *path, unsigned int flags,
		  char *err, size_t errlen)
{
	return from_file(repo, path, flags, err, errlen, true);
}

/* ---------------------------------------------------------------- by name */

static int by_name(struct asx_svc_repo *repo, const char *name, int what)
{
	struct asx__svc_plan p = { 0 };
	struct asx_svc *s, **pp;
	int r = 0;

	if (!repo || !name)
		return -EINVAL;
	if (asx__svc_in_callback())
		return -EDEADLK;	/* a reactive service's callback: see asx_svc_reactor() */
	if (strchr(name, '/'))		/* STREAM/MODULE */
		return what == ASX__SVC_REMOVE ? -EOPNOTSUPP :
		       asx__svc_module_state(repo, name, what == ASX__SVC_SUSPEND);
	pthread_mutex_lock(&repo->lock);
	s = find_locked(repo, name);
	if (!s) {
		r = -ENOENT;
	} else if (what == ASX__SVC_REMOVE && s->kind == ASX__SVC_STREAMK &&
		   asx__svc_mux_holding(repo, s->stream)) {
		r = -EBUSY;	/* linked under a mux: unlink it first */
	} else if (what == ASX__SVC_REMOVE && s->kind == ASX__SVC_POLICYK &&
		   (r = asx__svc_policy_release(NULL, s, NULL))) {
		/* -EBUSY: an ASC uses the policy; it stays, loaded */
	} else if (what == ASX__SVC_REMOVE) {
		for (pp = &repo->svcs; *pp != s; pp = &(*pp)->next)
			;
		*pp = s->next;
		asx__svc_stop(s);
	} else {
		r = asx__svc_set_state(&p, s, what == ASX__SVC_SUSPEND ? ASX_SVC_SUSPENDED : ASX_SVC_ACTIVE,
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
	if (s->kind == ASX__SVC_MUXK) {
		in->factory = "mux";
		in->args = "";
		if (asx__svc_mux_describe(s, in->desc, sizeof(in->desc)) >= sizeof(in->desc))
			memcpy(in->desc + sizeof(in->desc) - 4, "...", 4);
	} else if (s->kind == ASX__SVC_STREAMK) {
		size_t n;

		if (s->kernel)
			n = (size_t)snprintf(in->desc, sizeof(in->desc), "Stream over asx.ko '%s', ",
					     s->driver);
		else
			n = (size_t)snprintf(in->desc, sizeof(in->desc), "Stream, ");
		if (s->ep) {	/* first: where to reach it is what a reader wants */
			n += asx__svc_ep_describe(s->ep, in->desc + n, sizeof(in->desc) - n);
			if (n < sizeof(in->desc))
				n += (size_t)snprintf(in->desc + n, sizeof(in->desc) - n, "; ");
		}
		if (n < sizeof(in->desc))
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
	} else if (s->kind == ASX__SVC_POLICYK) {
		snprintf(in->desc, sizeof(in->desc), "ASC policy '%s'", s->name);
		in->args = "";
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

int asx_svc_stream(struct asx_svc_repo *repo, const char *name, struct asx_stream **out)
{
	int r = -ENOENT;

	if (!repo || !name || !out)
		return -EINVAL;
	*out = NULL;
	pthread_mutex_lock(&repo->lock);
	for (struct asx_svc *s = repo->svcs; s; s = s->next)
		if (!strcmp(s->name, name)) {
			/* a mux: its upper; a service object or a policy: none */
			r = s->kind == ASX__SVC_OBJECT || s->kind == ASX__SVC_POLICYK ? -EMEDIUMTYPE : 0;
			if (!r)
				*out = s->stream;
			break;
		}
	pthread_mutex_unlock(&repo->lock);
	return r;
}
