// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * rcu.c - lazy liburcu registration and the TSan-visible grace period.
 *
 * A grace-period wait on an ASC user thread does not block its VP: the
 * thread queues a call_rcu callback that completes a word, and parks on
 * the word with the one wait primitive (asc/wait.h) until liburcu's
 * call_rcu thread, after a grace period, sets it and wakes it.  A grace
 * period that starts after the callback was queued has ended when it
 * runs, as one synchronize_rcu() would wait for.  A plain pthread calls
 * synchronize_rcu() as before.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>

#include <asx/asc.h>
#include <asx/common.h>

#include "asc/wait.h"
#include "core/futex.h"
#include "stream/rcu.h"

unsigned int asx__rcu_gp_waiters;
static unsigned int gp_pausers;		/* threads in asx__rcu_gp_pause() */
#if defined(__SANITIZE_THREAD__)
char asx__rcu_tsan_gp;
#endif

static pthread_key_t rcu_key;
static pthread_once_t rcu_once = PTHREAD_ONCE_INIT;

/* Runs at the exit of a registered thread (the key's value is non-NULL). */
static void rcu_thread_exit(void *unused)
{
	(void)unused;
	urcu_memb_unregister_thread();
	asx__rcu_depth = -1;
}

static void rcu_key_init(void)
{
	/* Without the key a thread stays registered until the process ends:
	 * harmless apart from a registry entry, so a failure is ignored. */
	(void)pthread_key_create(&rcu_key, rcu_thread_exit);
}

void asx__rcu_register_self(void)
{
	pthread_once(&rcu_once, rcu_key_init);
	urcu_memb_register_thread();
	(void)pthread_setspecific(rcu_key, (void *)1);
	asx__rcu_depth = 0;
}

/* A grace period is wanted by one more thread (@d 1) or one fewer (-1). */
static void gp_wanted(int d)
{
	__atomic_add_fetch(&asx__rcu_gp_waiters, (unsigned int)d, __ATOMIC_SEQ_CST);
	if (d < 0 && __atomic_load_n(&gp_pausers, __ATOMIC_SEQ_CST))
		asx_futex_wake(&asx__rcu_gp_waiters, INT_MAX);
}

/* A grace-period wait of a user thread: a callback completes @done. */
struct gp_done {
	struct rcu_head head;
	uint32_t done;			/* 1 once the grace period ended */
};

/* @done to 1 and its parked waiter woken.  The waiter may return (and its
 * frame go) once it sees the store: the wake only hashes the address, a
 * stale one is a spurious wake. */
static void done_wake(uint32_t *done)
{
	__atomic_store_n(done, 1, __ATOMIC_RELEASE);
	asx__word_wake(done, 1);
}

/* The calling user thread parks until done_wake(@done). */
static void done_wait(uint32_t *done)
{
	while (!__atomic_load_n(done, __ATOMIC_ACQUIRE))
		(void)asx__word_wait(done, 0, NULL);
}

static void gp_done_cb(struct rcu_head *head)
{
	struct gp_done *d = caa_container_of(head, struct gp_done, head);

	ASX_RCU_TSAN_ACQUIRE();		/* liburcu's hand-off is invisible to TSan */
	done_wake(&d->done);
}

/* The calling user thread parks until a grace period has passed. */
static void gp_wait_parked(void)
{
	struct gp_done d = { .done = 0 };

	if (asx__rcu_depth < 0)
		asx__rcu_register_self();	/* call_rcu wants a registered caller */
	ASX_RCU_TSAN_RELEASE();		/* @d's initialisation, for the callback */
	urcu_memb_call_rcu(&d.head, gp_done_cb);
	done_wait(&d.done);
}

int asx__rcu_synchronize(void)
{
	if (asx__rcu_depth > 0)
		return -EDEADLK;
	gp_wanted(1);
	if (asx_asc_thread_self())
		gp_wait_parked();
	else
		urcu_memb_synchronize_rcu();
	gp_wanted(-1);
	ASX_RCU_TSAN_ACQUIRE();
	return 0;
}

void asx__rcu_gp_pause(uint64_t max_ns)
{
	struct timespec dl;
	unsigned int v;

	__atomic_add_fetch(&gp_pausers, 1, __ATOMIC_SEQ_CST);
	v = __atomic_load_n(&asx__rcu_gp_waiters, __ATOMIC_SEQ_CST);
	if (v)
		(void)asx_futex_wait(&asx__rcu_gp_waiters, v, asx_deadline(&dl, max_ns));
	__atomic_sub_fetch(&gp_pausers, 1, __ATOMIC_RELEASE);
}

void asx__rcu_call(struct rcu_head *head, void (*fn)(struct rcu_head *head))
{
	/* The callback acquires the grace-period object itself (see map.c):
	 * liburcu runs it after a grace period in its own thread; TSan sees
	 * the hand-off through the grace-period object. */
	ASX_RCU_TSAN_RELEASE();
	urcu_memb_call_rcu(head, fn);
}

/* rcu_barrier() on a pthread of its own, for a user thread parked on @done */
static void *barrier_main(void *arg)
{
	uint32_t *done = arg;

	urcu_memb_barrier();
	done_wake(done);
	return NULL;
}

void asx__rcu_barrier(void)
{
	uint32_t done = 0;
	pthread_attr_t at;
	pthread_t th;
	int r = -1;

	gp_wanted(1);
	/*
	 * A user thread does not block its VP: liburcu's barrier has no
	 * callback form, so a short-lived pthread waits for it (destroying an
	 * RCU map is rare); without one, the VP blocks as before.
	 */
	if (asx_asc_thread_self() && !pthread_attr_init(&at)) {
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		r = pthread_create(&th, &at, barrier_main, &done);
		pthread_attr_destroy(&at);
	}
	if (r)
		urcu_memb_barrier();
	else
		done_wait(&done);
	gp_wanted(-1);
	ASX_RCU_TSAN_ACQUIRE();
}
