/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * plan.h - applying a parsed configuration to a repository as one
 * transaction, or checking it without applying (plan.c).  Calls object.c,
 * stream.c and conf.c.
 */
#ifndef ASX_SRC_SVC_PLAN_H
#define ASX_SRC_SVC_PLAN_H

#include "svc/svc_impl.h"

/*
 * Apply @c (read from @name: relative library paths are taken from its
 * directory) to @repo with @flags (ASX_SVC_RELOAD); all or nothing.  0, or
 * -errno and the message in @err.  Takes repo->lock.
 */
int asx__svc_apply(struct asx_svc_repo *repo, const struct asx__svc_conf *c, const char *name,
		   unsigned int flags, char *err, size_t errlen);

/* The same without changing anything: what can be known without loading (asx_svc_check). */
int asx__svc_dry_run(struct asx_svc_repo *repo, const struct asx__svc_conf *c, const char *name,
		     unsigned int flags, char *err, size_t errlen);

/* Stop a started service or Stream and free it. */
void asx__svc_stop(struct asx_svc *s);

#endif /* ASX_SRC_SVC_PLAN_H */
