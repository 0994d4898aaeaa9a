// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * lockstat.c - opt-in lock statistics (asx_lockstat_*, <asx/sync.h>).
 *
 * Relaxed atomic counters, touched only from slow paths while switched
 * on.  They are process-wide: a benchmark divides them by its messages.
 */
#include <errno.h>

#include "sync/lockstat.h"

int asx__lockstat_on;

static struct asx_lockstat ls;

#define ADD(f, n) __atomic_fetch_add(&ls.f, (n), __ATOMIC_RELAXED)

void asx__lockstat_add(enum asx_lockstat_kind kind, uint64_t t0)
{
	uint64_t d;

	if (!t0)
		return;
	d = asx__lockstat_now() - t0;
	switch (kind) {
	case ASX_LOCKSTAT_ACQUIRE:
		ADD(contended, 1);
		ADD(acquire_ns, d);
		break;
	case ASX_LOCKSTAT_WAIT:
		ADD(waits, 1);
		ADD(wait_ns, d);
		break;
	case ASX_LOCKSTAT_HOLD:
		ADD(holds, 1);
		ADD(hold_ns, d);
		break;
	}
}

uint64_t asx_lockstat_begin(void)
{
	return asx__lockstat_begin();
}

void asx_lockstat_end(enum asx_lockstat_kind kind, uint64_t t0)
{
	asx__lockstat_add(kind, t0);
}

void asx_lockstat_enable(bool on)
{
	__atomic_store_n(&asx__lockstat_on, on ? 1 : 0, __ATOMIC_RELAXED);
}

void asx_lockstat_reset(void)
{
	__atomic_store_n(&ls.contended, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ls.acquire_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ls.waits, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ls.wait_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ls.holds, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ls.hold_ns, 0, __ATOMIC_RELAXED);
}

int asx_lockstat_read(struct asx_lockstat *out)
{
	if (!out)
		return -EINVAL;
	out->contended = __atomic_load_n(&ls.contended, __ATOMIC_RELAXED);
	out->acquire_ns = __atomic_load_n(&ls.acquire_ns, __ATOMIC_RELAXED);
	out->waits = __atomic_load_n(&ls.waits, __ATOMIC_RELAXED);
	out->wait_ns = __atomic_load_n(&ls.wait_ns, __ATOMIC_RELAXED);
	out->holds = __atomic_load_n(&ls.holds, __ATOMIC_RELAXED);
	out->hold_ns = __atomic_load_n(&ls.hold_ns, __ATOMIC_RELAXED);
	return 0;
}
