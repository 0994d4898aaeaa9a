/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * sync/lockstat.h - opt-in lock statistics (internal).
 *
 * Off by default: the lock paths then pay one relaxed load in their slow
 * paths only (never on an uncontended acquisition).  Switched on (by
 * asx-bench arch, the tests), the slow paths of asx_mutex, asx_rwlock and
 * asx_cond, and whoever else calls asx__lockstat_add(), add what they
 * waited to process-wide counters:
 *
 *   contended / acquire_ns   acquisitions that did not succeed at once,
 *                            and the time from the first failed attempt
 *                            until the lock was held (spinning + sleeping)
 *   waits / wait_ns          condition waits (and queue waits that count
 *                            themselves here), from going to sleep to
 *                            having the mutex back
 *   holds / hold_ns          critical sections that time themselves with
 *                            asx__lockstat_begin() after taking their lock
 *                            and ASX__LOCKSTAT_HOLD before releasing it
 *                            (TCP-lite's connection blocks)
 *
 * Uncontended acquisitions are not timed (they cost a few ns and timing
 * them would cost more than they do); the hold time of the generic locks
 * is not measured (their structs have no room for a time stamp).
 */
#ifndef ASX_SYNC_LOCKSTAT_H
#define ASX_SYNC_LOCKSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct asx__lockstat {
	uint64_t contended, acquire_ns;
	uint64_t waits, wait_ns;
	uint64_t holds, hold_ns;
};

enum asx__lockstat_kind { ASX__LOCKSTAT_ACQUIRE, ASX__LOCKSTAT_WAIT, ASX__LOCKSTAT_HOLD };

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
void asx__lockstat_add(enum asx__lockstat_kind kind, uint64_t t0);

/* Switch on or off (counters keep their values). */
void asx__lockstat_enable(bool on);
void asx__lockstat_reset(void);
void asx__lockstat_read(struct asx__lockstat *out);

#endif /* ASX_SYNC_LOCKSTAT_H */
