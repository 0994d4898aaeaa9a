/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * policy.h - ASC policies loaded from shared objects (policy.c): svc.conf's
 * "dynamic NAME ASC_Policy * lib.so:factory()", an ASX extension.  The
 * policy is registered (asx_asc_policy_register()) under NAME while the
 * service is configured; removing it unregisters it first, and an ASC
 * still using it (-EBUSY) refuses the removal.  Calls load.c and conf.c.
 */
#ifndef ASX_SRC_SVC_POLICY_H
#define ASX_SRC_SVC_POLICY_H

#include "svc/svc_impl.h"

/* Does the running @s have exactly the definition @e (an ASC_Policy)? */
bool asx__svc_policy_same(const struct asx_svc *s, const struct asx__svc_ent *e);

/*
 * Unregister the policy @s, which is to go (@why: the directive, for the
 * message, or NULL): 0, or -EBUSY (an ASC uses it: @s stays registered and
 * loaded) with the message in @p.
 */
int asx__svc_policy_release(struct asx__svc_plan *p, struct asx_svc *s,
			    const struct asx__svc_ent *why);

/* prepare() for @st (START): load, register (st->fresh).  Nothing left on failure. */
int asx__svc_policy_prepare(struct asx__svc_plan *p, struct asx__svc_step *st);

/* Undo asx__svc_policy_prepare() of @st. */
void asx__svc_policy_undo(struct asx__svc_step *st);

/* Undo asx__svc_policy_release() of @st's old policy (st->unregistered). */
void asx__svc_policy_restore(struct asx__svc_step *st);

/*
 * Unregister (if it still is) and free @s; the library is unloaded only if
 * no ASC uses the policy (else it stays mapped for good).
 */
void asx__svc_policy_stop(struct asx_svc *s);

/* Dry run: could @e load, as far as that is known without loading it? */
int asx__svc_policy_check(struct asx__svc_plan *p, const struct asx__svc_ent *e);

#endif /* ASX_SRC_SVC_POLICY_H */
