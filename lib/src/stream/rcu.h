/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * rcu.h - the RCU layer under the Stream framework and the RCU map.
 *
 * A thin wrapper around liburcu's urcu-memb flavour (membarrier based, no
 * signals) that
 *  - registers any thread with liburcu the first time it reads (and
 *    unregisters it when it exits), so callers of the public API need no
 *    registration call;
 *  - counts the calling thread's read-side nesting, so that an update
 *    that would wait for itself (synchronize from inside a read section)
 *    is refused with -EDEADLK instead of hanging;
 *  - tells ThreadSanitizer about the ordering a grace period gives: the
 *    end of each read section "releases" one sync object and the end of
 *    each grace period "acquires" it.  liburcu itself is not built with
 *    TSan, so without this TSan would report every free after a grace
 *    period as a race with the readers it waited for.
 *
 * Pointers published to readers use asx__rcu_assign / asx__rcu_deref
 * (C11 release store / acquire load), which TSan understands.
 */
#ifndef ASX_STREAM_RCU_H
#define ASX_STREAM_RCU_H

#include <stdbool.h>
#include <stdint.h>

#include <urcu/urcu-memb.h>

#include "core/rcudepth.h"

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
extern char asx__rcu_tsan_gp;
#define ASX_RCU_TSAN_RELEASE() __tsan_release(&asx__rcu_tsan_gp)
#define ASX_RCU_TSAN_ACQUIRE() __tsan_acquire(&asx__rcu_tsan_gp)
#else
#define ASX_RCU_TSAN_RELEASE() do { } while (0)
#define ASX_RCU_TSAN_ACQUIRE() do { } while (0)
#endif

void asx__rcu_register_self(void);

static inline void asx__rcu_read_lock(void)
{
	if (__builtin_expect(asx__rcu_depth < 0, 0))
		asx__rcu_register_self();
	if (asx__rcu_depth++ == 0)
		urcu_memb_read_lock();
}

static inline void asx__rcu_read_unlock(void)
{
	if (--asx__rcu_depth == 0) {
		ASX_RCU_TSAN_RELEASE();
		urcu_memb_read_unlock();
	}
}

/* In one read section, not nested: leaving it leaves every one. */
static inline bool asx__rcu_outermost(void)
{
	return asx__rcu_depth == 1;
}

/* Wait for a grace period: 0, or -EDEADLK from inside a read section. */
int asx__rcu_synchronize(void);

/*
 * Threads waiting in asx__rcu_synchronize() or asx__rcu_barrier() now.
 * No wait starts inside a read section and goes on for long: a reader
 * that waits for room in a queue (a put into a full queue, a suspended
 * Module's) looks at it between slices to stop holding a grace period up.
 */
extern unsigned int asx__rcu_gp_waiters;
static inline bool asx__rcu_gp_wanted(void)
{
	return __atomic_load_n(&asx__rcu_gp_waiters, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Outside any read section: sleep while a grace period is wanted, at most
 * @max_ns (a reader that left its section to let one pass, before it
 * enters again; the grace period may also wait for others).
 */
void asx__rcu_gp_pause(uint64_t max_ns);

/* Run @fn(@head) after a grace period, in liburcu's call_rcu thread. */
void asx__rcu_call(struct rcu_head *head, void (*fn)(struct rcu_head *head));

/* Wait until every asx__rcu_call() callback queued so far has run. */
void asx__rcu_barrier(void);

#define asx__rcu_assign(p, v)	__atomic_store_n(&(p), (v), __ATOMIC_RELEASE)
#define asx__rcu_deref(p)	__atomic_load_n(&(p), __ATOMIC_ACQUIRE)

#endif /* ASX_STREAM_RCU_H */
