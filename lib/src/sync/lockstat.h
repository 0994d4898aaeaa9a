/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * sync/lockstat.h - the lock statistics of <asx/sync.h> (asx_lockstat_*)
 * as libasx's own slow paths use them (internal).
 *
 * The slow paths of asx_mutex, asx_rwlock and asx_cond call
 * asx__lockstat_begin() (inline: one relaxed load while statistics are
 * off) and asx__lockstat_add(); programs use the exported
 * asx_lockstat_begin() and asx_lockstat_end(), the same counters.
 */
#ifndef ASX_SYNC_LOCKSTAT_H
#define ASX_SYNC_LOCKSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <asx/sync.h>

extern int asx__lockstat_on;	/* atomic */

static inline bool asx__lockstat_enabled(void)
{
	return __atomic_load_n(&asx__lockstat_on, __ATOMIC_RELAXED) != 0;
}

static inline uint64_t asx__lockstat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Start of a slow path: a timestamp, or 0 when statistics are off. */
static inline uint64_t asx__lockstat_begin(void)
{
	return asx__lockstat_enabled() ? asx__lockstat_now() : 0;
}

/* End of a slow path begun at @t0 (0: not counted). */
void asx__lockstat_add(enum asx_lockstat_kind kind, uint64_t t0);

#endif /* ASX_SYNC_LOCKSTAT_H */
