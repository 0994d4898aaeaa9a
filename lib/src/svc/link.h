/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * link.h - Multiplexors configured in svc.conf (link.c): "mux NAME" makes
 * one (its upper Stream is NAME), "link NAME STREAM [band N]" links a
 * configured Stream under it.  A transaction step's part for them.  Calls
 * conf.c only.
 */
#ifndef ASX_SRC_SVC_LINK_H
#define ASX_SRC_SVC_LINK_H

#include "svc/svc_impl.h"

/*
 * prepare() for a mux step @st (after every other step's prepare): START
 * makes the mux and links its Streams (st->fresh); for a running mux the
 * links are brought to what the definition (or, with none, the running
 * one) says, each naming the Stream the transaction leaves under that
 * name (p->resolve): a link whose Stream changed or went is taken off, a
 * new one made.  On failure nothing of it is left.
 */
int asx__svc_mux_prepare(struct asx__svc_plan *p, struct asx__svc_step *st);
/* Undo what asx__svc_mux_prepare() did for @st. */
void asx__svc_mux_undo(struct asx__svc_step *st);
/* commit() for a running mux: its new link list in place (cannot fail). */
void asx__svc_mux_commit(struct asx__svc_step *st);
/* Unlink everything, close the upper Stream, free @s. */
void asx__svc_mux_stop(struct asx_svc *s);
/* Dry run: do the links of @st name Streams the transaction leaves? */
int asx__svc_mux_check(struct asx__svc_plan *p, const struct asx__svc_step *st);
/* The mux of @repo that has @s linked under it, or NULL (repo->lock held). */
struct asx_svc *asx__svc_mux_holding(struct asx_svc_repo *repo, const struct asx_stream *s);
/* "Multiplexor by band; links: A(any) B(band 1)" into @buf; the length. */
size_t asx__svc_mux_describe(const struct asx_svc *s, char *buf, size_t len);

#endif /* ASX_SRC_SVC_LINK_H */
