/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/sa.h - scheduler activations: be told when a VP blocks in the kernel.
 *
 * A thin layer over the activation ioctls of asx.ko (Documentation/sa.rst).
 * A group collects the VP threads of one user-level scheduler.  Each VP
 * thread calls asx_sa_join() from itself; from then on, whenever it goes to
 * sleep in the kernel (a blocking read, a page fault on a file, a futex
 * wait inside another library) the kernel records ASX_SA_BLOCKED for its VP
 * id, and ASX_SA_UNBLOCKED when it runs again.  Spare VPs park in
 * asx_sa_wait(); a new event wakes one of them and its return is the
 * upcall: the spare goes on to run the scheduler's next runnable thread.
 * A member parked in asx_sa_wait() of its own group is a spare, not a VP
 * that blocked: its sleep there is not reported.
 *
 *	struct asx_sa_group *g;
 *	struct asx_sa_event ev[8];
 *	int n = asx_sa_open(&g, NULL);		// -ENODEV / -ENOTTY: no activations
 *	... in each VP thread: asx_sa_join(g) ...
 *	... in a spare:       n = asx_sa_wait(g, ev, 8, &deadline);
 *
 * Events carry a per-group sequence number; a full ring is reported by an
 * ASX_SA_OVERFLOW event in place, its arg the number of events lost.
 *
 * Every call returns 0 (or a non-negative count) or a negative errno.
 * Without /dev/asx asx_sa_open() returns -ENODEV; with a module that lacks
 * activations (or a device that is not asx.ko) -ENOTTY.
 */
#ifndef ASX_SA_H
#define ASX_SA_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <linux/asx.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_sa_group;

/*
 * Options of asx_sa_open(); zero-fill and set @sz (ASX_OPTS() does both).
 * @max_vps:   member limit (0: the module's default, ASX_SA_DEF_VPS)
 * @ring_size: events the kernel ring holds, a power of two (0: default)
 * @flags:     0, or ASX_SA_PREEMPT: also PREEMPTED and RESUMED events
 *             (-EOPNOTSUPP from a module without ASX_FEAT_SA_PREEMPT)
 */
struct asx_sa_opts {
	size_t sz;
	unsigned int max_vps;
	unsigned int ring_size;
	unsigned int flags;
};

/* 0 when /dev/asx offers activations; else -ENODEV, -ENOTTY or -EACCES. */
ASX_API int asx_sa_probe(void);

/* Makes a group (close-on-exec) in *@grp; @opts may be NULL. */
ASX_API int asx_sa_open(struct asx_sa_group **grp, const struct asx_sa_opts *opts);

/*
 * The calling thread joins @grp; returns its VP id (>= 0).  -EBUSY: it is a
 * member of a group already; -ENOSPC: the group is full; -EPERM: @grp was
 * made by another process.
 */
ASX_API int asx_sa_join(struct asx_sa_group *grp);

/* The calling thread leaves @grp; -ENOENT if it is not a member. */
ASX_API int asx_sa_leave(struct asx_sa_group *grp);

/*
 * Waits until @grp has events or @deadline (CLOCK_MONOTONIC, NULL: for
 * ever) passes; stores up to @max (1..ASX_SA_WAIT_MAX) of them.  Returns
 * the number stored, -ETIMEDOUT or -EINTR (a signal handler ran).  With
 * @max 1 every event wakes its own spare.
 */
ASX_API int asx_sa_wait(struct asx_sa_group *grp, struct asx_sa_event *ev, unsigned int max,
			const struct timespec *deadline);

/* Takes up to @max pending events without waiting: 0..@max. */
ASX_API int asx_sa_read(struct asx_sa_group *grp, struct asx_sa_event *ev, unsigned int max);

/*
 * Appends an ASX_SA_USER event carrying @arg to @grp's ring, which wakes one
 * spare parked in asx_sa_wait() (a user-level scheduler hands a spare work,
 * or tells it to leave).  Any thread may post.  -ENOTTY: the module predates
 * ABI 0.3 (no ASX_FEAT_SA_POST).
 */
ASX_API int asx_sa_post(struct asx_sa_group *grp, uint32_t arg);

/* The group's descriptor: readable (EPOLLIN) when events are pending. */
ASX_API int asx_sa_fd(const struct asx_sa_group *grp);

/* Counters of the group and of the module (struct asx_sa_info). */
ASX_API int asx_sa_stats(struct asx_sa_group *grp, struct asx_sa_info *info);

/*
 * Closes the group.  Members should leave first; a member still joined
 * keeps a dormant notifier until it exits or joins a group again.
 */
ASX_API void asx_sa_close(struct asx_sa_group *grp);

#ifdef __cplusplus
}
#endif
#endif /* ASX_SA_H */
