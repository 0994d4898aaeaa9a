/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * rcudepth.h - how deep the calling thread is in libasx's RCU read-side
 * sections (stream/rcu.h keeps it), below every component that must know:
 * the wait primitive (asc/wait.c) never parks a user thread inside one,
 * since liburcu's reader state belongs to the kernel thread.
 */
#ifndef ASX_CORE_RCUDEPTH_H
#define ASX_CORE_RCUDEPTH_H

#include <stdbool.h>

extern __thread int asx__rcu_depth;	/* -1: not registered with liburcu yet */

static inline bool asx__rcu_in_reader(void)
{
	return asx__rcu_depth > 0;
}

#endif /* ASX_CORE_RCUDEPTH_H */
