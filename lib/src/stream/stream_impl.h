/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* stream_impl.h - what the Multiplexor needs from the Stream core. */
#ifndef ASX_STREAM_IMPL_H
#define ASX_STREAM_IMPL_H

#include <asx/stream.h>

/*
 * Takes every message that reaches @s's head from below, instead of the
 * head's read queue (a lower stream linked under a Multiplexor).  Same
 * contract as a Task's put: 0 = taken, else still the caller's.
 */
typedef int asx__stream_upcall_fn(void *arg, struct asx_stream *s, struct asx_msg *m,
				  const struct timespec *deadline);

void asx__stream_set_upcall(struct asx_stream *s, asx__stream_upcall_fn *fn, void *arg);
/*
 * Claim @s as one mux's lower stream before setting its upcall: 0, or
 * -EBUSY if another mux has it linked (asx_mux_link across muxes); release
 * it once unlinked.
 */
int asx__stream_claim(struct asx_stream *s);
void asx__stream_release(struct asx_stream *s);

/*
 * Looks at every message delivered to @t (by put_next from the Task
 * before it) before it is queued or put: 0 lets it in, a negative errno
 * refuses it (asx_task_put_next() returns that, the message still the
 * caller's).  Set before @t's Module is linked into a Stream.
 */
typedef int asx__task_admit_fn(struct asx_task *t, const struct asx_msg *m);

void asx__task_set_admit(struct asx_task *t, asx__task_admit_fn *fn);

/*
 * Wait until every message inside @s's Tasks now (queued, or on its way
 * between them) has left through the head or the tail: a grace period,
 * then each task-based Task in path order (write side down, read side up)
 * hands on what it holds.  Messages a driver keeps in its own state are
 * not seen.  0, or -EDEADLK from inside a put().
 */
int asx__stream_quiesce(struct asx_stream *s);

/* The loop-back driver's write side (read side: pass-through). */
extern const struct asx_task_ops asx__loop_wr_ops;

#endif /* ASX_STREAM_IMPL_H */
