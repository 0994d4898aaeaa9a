/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/thread.h - the Thread Manager and thread-specific storage.
 *
 * A manager (struct asx_thr_mgr) owns groups of POSIX threads and ASC
 * user threads (asx_thr_opts.asc), mixed as one likes.  Each managed
 * thread has a small integer id (0, 1, 2, ... in spawn order, never reused
 * within one manager) and an integer group (>= 0).  The manager spawns them,
 * waits for them and collects their return values, asks them to stop
 * (cooperative cancellation, never pthread_cancel) and suspends/resumes
 * them at safe points.
 *
 * Safe points.  A managed thread is only ever stopped at a place it chose:
 * asx_thr_testcancel(), asx_thr_sleep(), its own start (before its
 * function runs), and while it is blocked inside a wait or suspend call on
 * its own manager.  asx_thr_mgr_suspend_all() asks every other managed
 * thread to stop at its next safe point and returns once each one has
 * stopped, has exited or has been cancelled; from then until the matching
 * resume, none of them runs code past a safe point.  A thread that never
 * reaches a safe point cannot be suspended (use a deadline).
 *
 * Cancellation.  asx_thr_mgr_cancel*() set a sticky per-thread flag and wake
 * the thread if it sleeps in asx_thr_sleep() or is parked by a suspension.
 * The thread notices it through asx_thr_testcancel() / asx_thr_cancelled()
 * / -ECANCELED and returns from its function.  Cancellation overrides
 * suspension: a cancelled thread is released from a park so it can clean
 * up and exit, even while a suspension is in force.
 *
 * Every blocking call here parks a calling ASC user thread (its VP runs
 * the others) and sleeps a calling pthread.
 *
 * Errors are negative errno values; deadlines are absolute CLOCK_MONOTONIC
 * times (NULL: wait for ever), see asx/common.h.
 *
 * USDT probes (provider "asx"):
 *   thr_spawn(id, group)   a thread was started
 *   thr_exit(id, ret)      a thread's function returned (ret: its value)
 *   thr_suspend(id)        a thread parked because it is suspended
 *   thr_resume(id)         a parked thread was released
 *
 * Full reference: Documentation/threads.rst.
 */
#ifndef ASX_THREAD_H
#define ASX_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_thr_mgr;
struct asx_asc;
struct asx_qos;

/* A managed thread's function; its return value is collected by a wait. */
typedef void *(*asx_thr_fn)(void *arg);

/*
 * Options for asx_thr_mgr_spawn_n().  Extensible: declare with
 * ASX_OPTS() so that sz is set and every other byte is zero; a library
 * that knows fewer fields rejects non-zero bytes it does not know (-E2BIG).
 */
struct asx_thr_opts {
	size_t sz;		/* sizeof(struct asx_thr_opts) */
	size_t stack_size;	/* 0: the default; else >= PTHREAD_STACK_MIN,
				 * rounded up to the page size */
	int *ids;		/* NULL, or n entries: the id of each thread
				 * started, -1 for the ones that were not */
	struct asx_asc *asc;	/* NULL: POSIX threads; else the threads are
				 * user threads of this ASC (asx/asc.h), with
				 * @qos in its schema (NULL for DIRECT); they
				 * are waited for, joined, cancelled and
				 * suspended (at their safe points, parked
				 * without holding their VP) as the others */
	const struct asx_qos *qos;
};

/* What a wait reports for each thread it reaped. */
struct asx_thr_status {
	int id;
	int group;
	void *ret;		/* the function's return value */
};

/* A new manager in *@out: 0, or -ENOMEM (or another pthread error). */
ASX_API int asx_thr_mgr_create(struct asx_thr_mgr **out);

/*
 * Cancel every live managed thread (resuming suspended ones), wait for all
 * of them and free the manager.  Blocks as long as a thread does not reach
 * a test point.  0, or -EDEADLK (nothing done) when called from one of the
 * manager's own threads.  NULL is a no-op.
 */
ASX_API int asx_thr_mgr_destroy(struct asx_thr_mgr *mgr);

/*
 * Start @n threads running @fn(@arg) in @group (>= 0).  Returns @n, or a
 * negative errno: -EINVAL (n <= 0, group < 0, fn NULL, bad stack size),
 * -E2BIG (unknown option bytes), -EAGAIN / -ENOMEM (out of resources).  On a
 * failure after some threads started, those threads stay managed (wait for
 * them as usual; opts->ids tells which) and the error is returned.
 * A thread spawned while a suspend_all / suspend_group covering it is in
 * force starts suspended (parked before @fn runs).  @opts may be NULL.
 */
ASX_API int asx_thr_mgr_spawn_n(struct asx_thr_mgr *mgr, int n, asx_thr_fn fn,
				void *arg, int group,
				const struct asx_thr_opts *opts);

/*
 * Wait until no thread of the manager (wait) or of @group (wait_group) is
 * running, then reap the ones that have finished: up to @nst of them are
 * described in @st (may be NULL), the rest are reaped silently.  Returns
 * the number reaped (0 when there was nothing to wait for), -ETIMEDOUT
 * when @deadline passed first (nothing reaped: a later wait collects
 * them), or -EDEADLK when the caller is itself one of the threads waited
 * for.  TSS destructors of a reaped thread have finished when this returns.
 */
ASX_API int asx_thr_mgr_wait(struct asx_thr_mgr *mgr, struct asx_thr_status *st,
			     size_t nst, const struct timespec *deadline);
ASX_API int asx_thr_mgr_wait_group(struct asx_thr_mgr *mgr, int group,
				   struct asx_thr_status *st, size_t nst,
				   const struct timespec *deadline);
/* Wait for the one thread @id: 0 (its value in *@ret if @ret), -ESRCH
 * (no such thread, or already reaped), -ETIMEDOUT, -EDEADLK (itself). */
ASX_API int asx_thr_mgr_join(struct asx_thr_mgr *mgr, int id, void **ret,
			     const struct timespec *deadline);

/* Live threads (started, function not yet returned), all or of @group. */
ASX_API int asx_thr_mgr_count(struct asx_thr_mgr *mgr);
ASX_API int asx_thr_mgr_count_group(struct asx_thr_mgr *mgr, int group);

/*
 * Ask threads to stop (cooperative).  cancel: 0 or -ESRCH (unknown id or
 * already reaped); cancel_group / cancel_all: the number of live threads
 * asked.  Non-blocking; follow with a wait.
 */
ASX_API int asx_thr_mgr_cancel(struct asx_thr_mgr *mgr, int id);
ASX_API int asx_thr_mgr_cancel_group(struct asx_thr_mgr *mgr, int group);
ASX_API int asx_thr_mgr_cancel_all(struct asx_thr_mgr *mgr);

/*
 * Suspend at safe points (see above) and wait until every target thread
 * is parked, exited or cancelled.  The calling thread is never a target.
 * Returns the number of threads asked (the single-thread form: 0),
 * -ETIMEDOUT (the request is withdrawn: nothing stays suspended by this
 * call), -ENOMEM, and for the single-thread form -ESRCH (unknown or
 * exited) or -EDEADLK (itself).
 * Suspensions nest: each successful suspend needs its matching resume.
 */
ASX_API int asx_thr_mgr_suspend_all(struct asx_thr_mgr *mgr,
				    const struct timespec *deadline);
ASX_API int asx_thr_mgr_suspend_group(struct asx_thr_mgr *mgr, int group,
				      const struct timespec *deadline);
ASX_API int asx_thr_mgr_suspend(struct asx_thr_mgr *mgr, int id,
				const struct timespec *deadline);
/* Undo one suspension; returns how many threads' counts were lowered
 * (resume: 0 or -ESRCH). */
ASX_API int asx_thr_mgr_resume_all(struct asx_thr_mgr *mgr);
ASX_API int asx_thr_mgr_resume_group(struct asx_thr_mgr *mgr, int group);
ASX_API int asx_thr_mgr_resume(struct asx_thr_mgr *mgr, int id);

/* Calls made by a thread about itself. */

/* The caller's id in its manager, or -ESRCH for an unmanaged thread. */
ASX_API int asx_thr_self(void);
/* The caller's group, or -ESRCH for an unmanaged thread. */
ASX_API int asx_thr_self_group(void);

/*
 * The test point: parks here while the caller is suspended, then returns
 * true when it has been asked to stop.  Cheap (one atomic load) when
 * nothing is pending.  false for an unmanaged thread.
 */
ASX_API bool asx_thr_testcancel(void);
/* Whether the caller has been asked to stop; never parks (usable while
 * holding locks). */
ASX_API bool asx_thr_cancelled(void);
/*
 * Sleep @ns nanoseconds (a safe point for its whole length).  0, or
 * -ECANCELED as soon as the caller is cancelled (also when already
 * cancelled on entry).  A suspended sleeper stays parked after its time
 * is up until resumed.  In an unmanaged thread: a plain sleep, 0.
 */
ASX_API int asx_thr_sleep(uint64_t ns);

/*
 * Thread-specific storage, for any thread (managed or not).  Built on
 * pthread keys: at most PTHREAD_KEYS_MAX (1024 with glibc) keys exist in
 * the process at once, shared with everything else that uses
 * pthread_key_create (-EAGAIN beyond).  At thread exit, for each key with a
 * non-NULL value, the value is reset to NULL and @dtor(value) is called
 * (up to PTHREAD_DESTRUCTOR_ITERATIONS rounds if destructors set values
 * again).  Destructors do not run for the main thread returning from
 * main() or calling exit(), nor on asx_tss_delete().
 */
typedef unsigned int asx_tss_t;

ASX_API int asx_tss_create(asx_tss_t *key, void (*dtor)(void *));
/* Frees the key; stored values are not destroyed.  0 or -EINVAL. */
ASX_API int asx_tss_delete(asx_tss_t key);
/* The caller's value (NULL if never set or key invalid). */
ASX_API void *asx_tss_get(asx_tss_t key);
/* 0, -EINVAL (bad key), -ENOMEM. */
ASX_API int asx_tss_set(asx_tss_t key, const void *value);

#ifdef __cplusplus
}
#endif
#endif /* ASX_THREAD_H */
