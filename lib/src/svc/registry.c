// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * registry.c - the factories a program links in (registry.h).
 *
 * A "static NAME" directive takes its factory from here: a service one
 * the program registered, or, in a stream, a Module one it registered or
 * else one of the stock Modules below (the one table of them: the
 * messages list it).
 *
 * Calls conf.c only (the name rule, messages); called by object.c,
 * stream.c and api.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/modules.h>

#include "svc/registry.h"

static const struct { const char *name; asx_svc_module_fn *fn; } stock[] = {
	{ "pass", asx_mod_pass }, { "counter", asx_mod_counter }, { "framer", asx_mod_framer },
	{ "cksum", asx_mod_cksum },
};

#define NSTOCK (sizeof(stock) / sizeof(stock[0]))

int asx__svc_register(struct asx_svc_repo *repo, const char *name, asx_svc_factory_fn *f,
		      asx_svc_module_fn *m)
{
	struct asx__svc_reg *g;
	int r = 0;

	if (!repo || !name || (!f && !m) || strlen(name) >= ASX_SVC_NAME_MAX ||
	    !asx__svc_name_ok(name, strlen(name)))
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

int asx__svc_reg_factory(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			 const struct asx__svc_ent *e, asx_svc_factory_fn **fn)
{
	for (struct asx__svc_reg *g = repo->regs; g; g = g->next)
		if (g->factory && !strcmp(g->name, e->name)) {
			*fn = g->factory;
			return 0;
		}
	return asx__svc_say(p, e, -ENOENT,
			    "static service '%s': the program registered no factory of that name (asx_svc_register())",
			    e->name);
}

int asx__svc_reg_module(struct asx_svc_repo *repo, struct asx__svc_plan *p, const char *stream,
			const struct asx__svc_ent *d, asx_svc_module_fn **fn)
{
	char names[128];
	size_t n = 0;

	for (struct asx__svc_reg *g = repo->regs; g; g = g->next)
		if (g->module && !strcmp(g->name, d->name)) {
			*fn = g->module;
			return 0;
		}
	for (size_t i = 0; i < NSTOCK; i++)
		if (!strcmp(stock[i].name, d->name)) {
			*fn = stock[i].fn;
			return 0;
		}
	names[0] = '\0';
	for (size_t i = 0; i < NSTOCK && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "",
				      stock[i].name);
	return asx__svc_say(p, d, -ENOENT,
			    "stream '%s': no module '%s' (built in: %s; others with asx_svc_register_module())",
			    stream, d->name, names);
}

void asx__svc_reg_free(struct asx_svc_repo *repo)
{
	while (repo->regs) {
		struct asx__svc_reg *g = repo->regs;

		repo->regs = g->next;
		free(g);
	}
}
