/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * stream.h - Streams configured in svc.conf (stream.c): opened, reshaped
 * while they run, closed; a transaction step's part for them.  Calls
 * load.c, registry.c and conf.c.
 */
#ifndef ASX_SRC_SVC_STREAM_H
#define ASX_SRC_SVC_STREAM_H

#include "svc/svc_impl.h"

/* Does the running Stream @s have exactly the definition @e? */
bool asx__svc_stream_same(const struct asx_svc *s, const struct asx__svc_ent *e);

/*
 * @st's Stream gets the definition @c (a copy the plan owns): a running
 * Stream that already has it is kept (no definition), one that differs is
 * reshaped.
 */
void asx__svc_stream_redefine(struct asx__svc_step *st, const struct asx__svc_ent *c);

/* Plan "suspend/resume STREAM/MODULE" @e for @st's Stream. */
int asx__svc_stream_mod_state(struct asx__svc_plan *p, struct asx__svc_step *st,
			      const struct asx__svc_ent *e);

/*
 * prepare() for @st: START opens the new Stream (st->fresh), RESHAPE
 * reshapes the running one in place (logged in st->undo); KEEP refuses a
 * state change.  On failure nothing of it is left.
 */
int asx__svc_stream_prepare(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			    struct asx__svc_step *st);

/* Undo what asx__svc_stream_prepare() did for @st. */
void asx__svc_stream_undo(struct asx_svc_repo *repo, struct asx__svc_step *st);

/* commit() for a RESHAPE step: the new module list in place (cannot fail). */
void asx__svc_stream_commit(struct asx__svc_step *st);

/* Close @s's Stream and free @s. */
void asx__svc_stream_stop(struct asx_svc *s);

/* Dry run: can the Stream @e defines be made (asx_svc_check)? */
int asx__svc_stream_check(struct asx_svc_repo *repo, struct asx__svc_plan *p,
			  const struct asx__svc_ent *e);

/* "STREAM/MODULE": suspend (@on) or resume a Module of a running Stream. */
int asx__svc_module_state(struct asx_svc_repo *repo, const char *path, bool on);

#endif /* ASX_SRC_SVC_STREAM_H */
