/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * registry.h - the factories a program links in (registry.c): services
 * and Modules it registered (asx_svc_register(), asx_svc_register_module())
 * and the stock Modules of <asx/modules.h>.  Calls conf.c only.
 */
#ifndef ASX_SRC_SVC_REGISTRY_H
#define ASX_SRC_SVC_REGISTRY_H

#include "svc/svc_impl.h"

/* Register a service (@f) or Module (@m) factory under @name. */
int asx__svc_register(struct asx_svc_repo *repo, const char *name, asx_svc_factory_fn *f,
		      asx_svc_module_fn *m);

/*
 * The service factory "static @e->name" names: 0 and *fn, or -ENOENT said
 * in @p.  The caller holds repo->lock.
 */
int asx__svc_reg_factory(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			 const struct asx__svc_ent *e, asx_svc_factory_fn **fn);

/*
 * The Module factory "static @d->name" names in Stream @stream: one the
 * program registered, else a stock Module; 0 and *fn, or -ENOENT said in @p.
 * The caller holds repo->lock.
 */
int asx__svc_reg_module(struct asx_svc_repo *repo, struct asx__svc_plan *p, const char *stream,
			const struct asx__svc_ent *d, asx_svc_module_fn **fn);

/* Forget every registration (the repository is being destroyed). */
void asx__svc_reg_free(struct asx_svc_repo *repo);

#endif /* ASX_SRC_SVC_REGISTRY_H */
