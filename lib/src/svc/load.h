/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * load.h - loading a service's or a Module's library (load.c): dlopen()
 * relative to the configuration's directory, the factory found and its ABI
 * stamp checked.  Calls conf.c only.
 */
#ifndef ASX_SRC_SVC_LOAD_H
#define ASX_SRC_SVC_LOAD_H

#include "svc/svc_impl.h"

/* dlopen @e's library (relative to the plan's directory) and find @e's factory, checked. */
int asx__svc_load(struct asx__svc_plan *p, const struct asx__svc_ent *e, void **dl, void **fn);

/* Without loading it: is @e's library (if its path has a '/') a readable regular file? */
int asx__svc_check_lib(struct asx__svc_plan *p, const struct asx__svc_ent *e);

#endif /* ASX_SRC_SVC_LOAD_H */
