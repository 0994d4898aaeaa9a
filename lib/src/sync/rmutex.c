// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * rmutex.c - recursive mutex over the adaptive mutex.
 *
 * @owner is the holder's identity: its kernel tid on a plain pthread, and
 * on an ASC user thread the thread's own negative id (asx__uthread_id()),
 * since every user thread of a VP shares the VP's tid and a user thread
 * may move to another VP while it holds the lock.  Only the owner writes @owner
 * and @depth; other threads read @owner merely to learn that it is not
 * theirs, which a stale value cannot change (a thread's own tid is only
 * ever stored there by itself).  Relaxed atomics keep those reads defined.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <asx/sync.h>
#include "asc/wait.h"
#include "core/compiler.h"

static __thread int asx_tid_cache;

static inline int self_tid(void)
{
	int id = asx__uthread_id();

	if (id)
		return id;
	if (unlikely(!asx_tid_cache))
		asx_tid_cache = (int)syscall(SYS_gettid);
	return asx_tid_cache;
}

void asx_rmutex_init(struct asx_rmutex *r)
{
	asx_mutex_init(&r->m);
	r->owner = 0;
	r->depth = 0;
}

void asx_rmutex_destroy(struct asx_rmutex *r)
{
	asx_mutex_destroy(&r->m);
}

static inline int rm_owned(struct asx_rmutex *r, int me)
{
	return __atomic_load_n(&r->owner, __ATOMIC_RELAXED) == me;
}

static inline void rm_take(struct asx_rmutex *r, int me)
{
	__atomic_store_n(&r->owner, me, __ATOMIC_RELAXED);
	r->depth = 1;
}

void asx_rmutex_lock(struct asx_rmutex *r)
{
	int me = self_tid();

	if (rm_owned(r, me)) {
		r->depth++;
		return;
	}
	asx_mutex_lock(&r->m);
	rm_take(r, me);
}

int asx_rmutex_trylock(struct asx_rmutex *r)
{
	int me = self_tid();

	if (rm_owned(r, me)) {
		r->depth++;
		return 0;
	}
	if (asx_mutex_trylock(&r->m))
		return -EBUSY;
	rm_take(r, me);
	return 0;
}

int asx_rmutex_unlock(struct asx_rmutex *r)
{
	if (!rm_owned(r, self_tid()) || !r->depth)
		return -EPERM;
	if (--r->depth)
		return 0;
	__atomic_store_n(&r->owner, 0, __ATOMIC_RELAXED);
	asx_mutex_unlock(&r->m);
	return 0;
}
