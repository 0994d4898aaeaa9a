// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * rcudepth.c - the calling thread's RCU read-side depth (core/rcudepth.h)
 * and the check that no wait or switch starts inside a section.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/probes.h"
#include "core/rcudepth.h"

__thread int asx__rcu_depth = -1;
unsigned long asx__rcu_wait_faults;

void asx__rcu_wait_fault(const char *what)
{
	__atomic_add_fetch(&asx__rcu_wait_faults, 1, __ATOMIC_RELAXED);
	ASX_PROBE1(rcu_wait_fault, what);
#ifdef ASX_DEBUG
	fprintf(stderr, "libasx: %s started inside an RCU read-side section (depth %d)\n", what,
		asx__rcu_depth);
	abort();
#endif
}
