/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asc/counters.h - ASC counters for other parts of libasx (internal).
 */
#ifndef ASX_ASC_COUNTERS_H
#define ASX_ASC_COUNTERS_H

#include <stdint.h>

struct asx_asc;

/*
 * User-level context switches made so far on @asc's VPs (a thread
 * switched out for another or for its VP's loop), summed over every VP
 * it ever had.  0 for NULL.
 */
uint64_t asx__asc_switches(struct asx_asc *asc);

#endif /* ASX_ASC_COUNTERS_H */
