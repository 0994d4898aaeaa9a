/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * msgq_impl.h - message-queue internals other libasx components use.
 *
 * asx_msgq_set_notify() is asx__msgq_swap_notify() followed by
 * asx__msgq_notify_drain().  A caller that must swap the hook while
 * holding a lock its own hook takes (the Reactor) swaps under the lock
 * and drains after releasing it, or the two would wait on each other.
 */
#ifndef ASX_MSGQ_IMPL_H
#define ASX_MSGQ_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <asx/msgq.h>

/*
 * asx_msgq_enqueue() for the same put waiting again after a wait of its
 * own ran out (a sliced wait, stream.c): not counted as a new full wait
 * (stats.full_waits, the msgq_block_full probe).
 */
int asx__msgq_enqueue_again(struct asx_msgq *q, struct asx_msg *m, unsigned int flags,
			    const struct timespec *deadline);

/*
 * Wait (outside any RCU read-side section) until @q is not flow-controlled,
 * without queueing anything: 0 (room now, which another writer may take
 * first), -ETIMEDOUT, -ESHUTDOWN (deactivated), -EINTR (a pulse).  The
 * Stream framework's delivery waits here after it left its section.  A
 * wait counts as a full wait (stats.full_waits, the msgq_block_full probe)
 * unless @again: the same put waiting once more.
 */
int asx__msgq_wait_room(struct asx_msgq *q, const struct timespec *deadline, bool again);

/* Install @fn/@arg; returns the epoch of the calls that took the old hook. */
uint32_t asx__msgq_swap_notify(struct asx_msgq *q, asx_msgq_notify_fn *fn, void *arg);

/* Wait until every hook call of @epoch has returned (not the caller's own). */
void asx__msgq_notify_drain(struct asx_msgq *q, uint32_t epoch);

#endif /* ASX_MSGQ_IMPL_H */
