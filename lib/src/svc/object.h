/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * object.h - service objects (object.c): made from a factory, initialised,
 * suspended and resumed, stopped; a transaction step's part for them.
 * Calls load.c, registry.c and conf.c.
 */
#ifndef ASX_SRC_SVC_OBJECT_H
#define ASX_SRC_SVC_OBJECT_H

#include "svc/svc_impl.h"

/* Does the running @s have exactly the definition @e? */
bool asx__svc_object_same(const struct asx_svc *s, const struct asx__svc_ent *e);

/*
 * prepare() for @st: START makes, checks and initialises the new instance
 * (st->fresh), suspended if wanted; KEEP changes the state of the one that
 * runs (st->state_changed).  On failure nothing of it is left.
 */
int asx__svc_object_prepare(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			    struct asx__svc_step *st);

/* Undo what asx__svc_object_prepare() did for @st. */
void asx__svc_object_undo(struct asx__svc_step *st);

/* Dry run: could @e start, as far as that is known without loading it? */
int asx__svc_object_check(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			  const struct asx__svc_ent *e);

/*
 * Suspend or resume @s (to @want); @why is the directive, for the message.
 * A Stream is refused.
 */
int asx__svc_set_state(struct asx__svc_plan *p, struct asx_svc *s, enum asx_svc_state want,
		       const struct asx__svc_ent *why);

/* Is this thread running a reactive service's callback? */
bool asx__svc_in_callback(void);

/* The repository's Reactor, made on first use. */
int asx__svc_repo_rx(struct asx_svc_repo *repo, struct asx_reactor **out);

/* fini, then the library reference. */
void asx__svc_object_stop(struct asx_svc *s);

#endif /* ASX_SRC_SVC_OBJECT_H */
