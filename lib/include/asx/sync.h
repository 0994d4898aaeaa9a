/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/sync.h - synchronisation primitives.
 *
 * All objects are plain structs so they can be embedded and statically
 * initialised; their fields are private.  None needs a destroy call unless
 * stated, but asx_*_destroy() exist for symmetry and for debug checks.
 *
 * Timeouts are absolute CLOCK_MONOTONIC deadlines (NULL: no timeout); a
 * timed call returns -ETIMEDOUT when the deadline passes.
 *
 * USDT probes (provider "asx"), for bpftrace/bcc:
 *   mutex_contended(lock)   a lock attempt found the mutex held
 *   mutex_acquired(lock, spins, sleeps)  got it after mutex_contended
 *   mutex_release(lock)
 *   cond_wait(cond, mutex)  about to block on a condition
 *   cond_wake(cond, n)      signal (n = 1) or broadcast (n = -1)
 *   rwlock_contended, rwlock_acquired, rwlock_release, sem_wait, sem_post,
 *   barrier_wait likewise (arguments in Documentation/sync.rst).
 *
 * Timed calls also return -EINVAL for a malformed @abstime (tv_nsec
 * outside [0, 1e9) or tv_sec < 0) when they would have to wait.
 */
#ifndef ASX_SYNC_H
#define ASX_SYNC_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Adaptive mutex: spins briefly (bounded, with a CPU relax hint) when the
 * lock is held, then sleeps on a futex.  Not recursive; unlock must come
 * from the owning thread.
 */
struct asx_mutex {
	uint32_t word;		/* 0 free, 1 locked, 2 locked with waiters */
	uint32_t spin;		/* adaptive spin budget */
};
#define ASX_MUTEX_INITIALIZER { 0, 0 }

ASX_API void asx_mutex_init(struct asx_mutex *m);
ASX_API void asx_mutex_destroy(struct asx_mutex *m);
ASX_API void asx_mutex_lock(struct asx_mutex *m);
/* 0 when taken, -EBUSY when held by someone. */
ASX_API int asx_mutex_trylock(struct asx_mutex *m);
/* 0, or -ETIMEDOUT once @abstime (CLOCK_MONOTONIC) has passed; -EINVAL. */
ASX_API int asx_mutex_timedlock(struct asx_mutex *m, const struct timespec *abstime);
ASX_API void asx_mutex_unlock(struct asx_mutex *m);

/* Condition variable used with struct asx_mutex. */
struct asx_cond {
	uint32_t seq;
	uint32_t waiters;
};
#define ASX_COND_INITIALIZER { 0, 0 }

ASX_API void asx_cond_init(struct asx_cond *c);
ASX_API void asx_cond_destroy(struct asx_cond *c);
/* Spurious wake-ups are possible: callers re-check their predicate. */
ASX_API void asx_cond_wait(struct asx_cond *c, struct asx_mutex *m);
/* 0 on wake-up, -ETIMEDOUT at @abstime, -EINVAL; @m is held on return. */
ASX_API int asx_cond_timedwait(struct asx_cond *c, struct asx_mutex *m,
			       const struct timespec *abstime);
ASX_API void asx_cond_signal(struct asx_cond *c);
ASX_API void asx_cond_broadcast(struct asx_cond *c);

/*
 * Readers/writer lock, writer-preferring (a waiting writer stops new
 * readers, so a thread must not take the read lock recursively).
 */
struct asx_rwlock {
	uint32_t state;		/* private */
	uint32_t writers_waiting;
	uint32_t rseq;
	uint32_t wseq;
};
#define ASX_RWLOCK_INITIALIZER { 0, 0, 0, 0 }

ASX_API void asx_rwlock_init(struct asx_rwlock *l);
ASX_API void asx_rwlock_destroy(struct asx_rwlock *l);
ASX_API void asx_rwlock_rdlock(struct asx_rwlock *l);
ASX_API int asx_rwlock_tryrdlock(struct asx_rwlock *l);	/* 0 / -EBUSY */
ASX_API void asx_rwlock_wrlock(struct asx_rwlock *l);
ASX_API int asx_rwlock_trywrlock(struct asx_rwlock *l);	/* 0 / -EBUSY */
/* Releases whichever mode the caller holds. */
ASX_API void asx_rwlock_unlock(struct asx_rwlock *l);

/* Recursive mutex: the owner may lock again; unlock as many times. */
struct asx_rmutex {
	struct asx_mutex m;
	int owner;		/* kernel tid of the owner, 0 when free */
	uint32_t depth;
};
#define ASX_RMUTEX_INITIALIZER { ASX_MUTEX_INITIALIZER, 0, 0 }

ASX_API void asx_rmutex_init(struct asx_rmutex *r);
ASX_API void asx_rmutex_destroy(struct asx_rmutex *r);
ASX_API void asx_rmutex_lock(struct asx_rmutex *r);
ASX_API int asx_rmutex_trylock(struct asx_rmutex *r);		/* 0 / -EBUSY */
/* -EPERM if the caller does not own it. */
ASX_API int asx_rmutex_unlock(struct asx_rmutex *r);

/* Counting semaphore. */
struct asx_sem {
	uint32_t value;
	uint32_t waiters;
};

/* -EINVAL if @value exceeds ASX_SEM_VALUE_MAX. */
#define ASX_SEM_VALUE_MAX 0x7fffffffU
ASX_API int asx_sem_init(struct asx_sem *s, unsigned int value);
ASX_API void asx_sem_destroy(struct asx_sem *s);
ASX_API int asx_sem_post(struct asx_sem *s);			/* 0 / -EOVERFLOW */
ASX_API void asx_sem_wait(struct asx_sem *s);
ASX_API int asx_sem_trywait(struct asx_sem *s);			/* 0 / -EAGAIN */
/* 0, -ETIMEDOUT at @abstime, -EINVAL. */
ASX_API int asx_sem_timedwait(struct asx_sem *s, const struct timespec *abstime);
ASX_API unsigned int asx_sem_value(const struct asx_sem *s);

/* Barrier for a fixed number of threads; reusable across rounds. */
struct asx_barrier {
	uint32_t count;
	uint32_t arrived;
	uint32_t round;
	struct asx_mutex m;
};
#define ASX_BARRIER_SERIAL 1
/* -EINVAL if @count is 0. */
ASX_API int asx_barrier_init(struct asx_barrier *b, unsigned int count);
ASX_API void asx_barrier_destroy(struct asx_barrier *b);
/* ASX_BARRIER_SERIAL in exactly one thread per round, 0 in the others. */
ASX_API int asx_barrier_wait(struct asx_barrier *b);

/*
 * Lock statistics: opt-in, process-wide counters of time lost to locks.
 * Off by default (the slow paths then pay one relaxed load; an
 * uncontended acquisition pays nothing).  While switched on, the slow
 * paths of asx_mutex, asx_rwlock and asx_cond add:
 *
 *   contended / acquire_ns  acquisitions that did not succeed at once, and
 *                           the time from the first failed attempt until
 *                           the lock was held (spinning + sleeping)
 *   waits / wait_ns         condition waits, from going to sleep to having
 *                           the mutex back; message-queue waits (asx_msgq,
 *                           so Task queues: getq, flow control), spin and
 *                           sleep
 *   holds / hold_ns         critical sections that time themselves (no lock
 *                           of libasx does: its structs have no room for a
 *                           time stamp)
 *
 * A program's own locks, queues and critical sections add to the same
 * counters with asx_lockstat_begin() and asx_lockstat_end(), so that one
 * read covers them all.  Uncontended acquisitions are not timed.  Each
 * counter is read atomically, the six together are not a snapshot; the
 * counters are a measurement aid for benchmarks (asx-bench arch), not a
 * per-lock profile (asx-lockstat(8) is, from the USDT probes above).
 */
struct asx_lockstat {
	uint64_t contended, acquire_ns;
	uint64_t waits, wait_ns;
	uint64_t holds, hold_ns;
};
enum asx_lockstat_kind { ASX_LOCKSTAT_ACQUIRE, ASX_LOCKSTAT_WAIT, ASX_LOCKSTAT_HOLD };
/* Switch counting on or off; the counters keep their values. */
ASX_API void asx_lockstat_enable(bool on);
ASX_API void asx_lockstat_reset(void);
/* 0 and the counters in *@out; -EINVAL for NULL. */
ASX_API int asx_lockstat_read(struct asx_lockstat *out);
/* The start of a slow path or critical section: a time stamp to hand to
 * asx_lockstat_end(), or 0 while statistics are off. */
ASX_API uint64_t asx_lockstat_begin(void);
/* Its end: one of @kind, lasting since @t0, is counted (nothing if @t0
 * is 0 or @kind unknown). */
ASX_API void asx_lockstat_end(enum asx_lockstat_kind kind, uint64_t t0);

/*
 * Null lock: the "no locking" strategy.  Same shape as a mutex so code
 * parameterised by lock type compiles with it; every call is a no-op.
 */
struct asx_null_lock {
	char unused;
};
#define ASX_NULL_LOCK_INITIALIZER { 0 }
static inline void asx_null_lock_init(struct asx_null_lock *l) { (void)l; }
static inline void asx_null_lock_lock(struct asx_null_lock *l) { (void)l; }
static inline int asx_null_lock_trylock(struct asx_null_lock *l) { (void)l; return 0; }
static inline void asx_null_lock_unlock(struct asx_null_lock *l) { (void)l; }

/*
 * Scoped guards (the papers' Guard): the lock is released when the
 * enclosing block is left, by any path (return, break, goto).
 *
 *	{
 *		ASX_GUARD(&q->lock);		// asx_mutex, asx_rmutex or asx_null_lock
 *		...
 *	}
 *	ASX_GUARD_READ(&map->rw);  ASX_GUARD_WRITE(&map->rw);
 */
struct asx__guard {
	void *lock;
	void (*unlock)(void *lock);
};

static inline void asx__guard_leave(struct asx__guard *g)
{
	g->unlock(g->lock);
}

static inline void asx__unlock_mutex(void *l) { asx_mutex_unlock((struct asx_mutex *)l); }
static inline void asx__unlock_rmutex(void *l) { (void)asx_rmutex_unlock((struct asx_rmutex *)l); }
static inline void asx__unlock_rwlock(void *l) { asx_rwlock_unlock((struct asx_rwlock *)l); }
static inline void asx__unlock_null(void *l) { (void)l; }

static inline struct asx__guard asx__guard_mutex(struct asx_mutex *m)
{
	asx_mutex_lock(m);
	return (struct asx__guard){ m, asx__unlock_mutex };
}

static inline struct asx__guard asx__guard_rmutex(struct asx_rmutex *r)
{
	asx_rmutex_lock(r);
	return (struct asx__guard){ r, asx__unlock_rmutex };
}

static inline struct asx__guard asx__guard_null(struct asx_null_lock *l)
{
	return (struct asx__guard){ l, asx__unlock_null };
}

static inline struct asx__guard asx__guard_rd(struct asx_rwlock *l)
{
	asx_rwlock_rdlock(l);
	return (struct asx__guard){ l, asx__unlock_rwlock };
}

static inline struct asx__guard asx__guard_wr(struct asx_rwlock *l)
{
	asx_rwlock_wrlock(l);
	return (struct asx__guard){ l, asx__unlock_rwlock };
}

#define ASX__CAT_(a, b) a##b
#define ASX__CAT(a, b) ASX__CAT_(a, b)
#define ASX__GUARD_VAR ASX__CAT(asx__guard_, __COUNTER__)
#define ASX__GUARD_DECL struct asx__guard __attribute__((cleanup(asx__guard_leave), unused))

#define ASX_GUARD(lk)							\
	ASX__GUARD_DECL ASX__GUARD_VAR = _Generic((lk),			\
		struct asx_mutex *: asx__guard_mutex,			\
		struct asx_rmutex *: asx__guard_rmutex,			\
		struct asx_null_lock *: asx__guard_null)(lk)
#define ASX_GUARD_READ(l)  ASX__GUARD_DECL ASX__GUARD_VAR = asx__guard_rd(l)
#define ASX_GUARD_WRITE(l) ASX__GUARD_DECL ASX__GUARD_VAR = asx__guard_wr(l)

#ifdef __cplusplus
}
#endif
#endif /* ASX_SYNC_H */
