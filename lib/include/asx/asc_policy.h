/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/asc_policy.h - writing an ASC scheduling policy (Documentation/asc.rst,
 * "Writing a policy").  PRIO, EDF and DIRECT are written on this interface;
 * a policy of your own is registered by name and ASCs are created with it:
 *
 *   static const struct asx_asc_policy_ops my_ops = {
 *           .sz = sizeof(my_ops), .name = "rr2", .schema = MY_SCHEMA,
 *           .state_size = sizeof(struct my_state),
 *           .admit = my_admit, .enqueue = my_enqueue, .pick_next = my_pick,
 *           .nrunnable = my_nrunnable,
 *   };
 *   asx_asc_policy_register(&my_ops);
 *   asx_asc_create_by_name(&asc, "rr2", NULL);
 *
 * ABI: struct asx_asc_policy_ops is size-first (sz = sizeof as compiled);
 * members a later libasx adds are read as zero (absent) from an older
 * policy; a newer policy's struct is refused (-E2BIG) only if it sets a
 * member this library does not know.  A thread handle is opaque but for its first
 * ASX_ASC_POLICY_SLOT_SIZE bytes, the policy slot, which belong to the
 * policy of the ASC the thread is in (asx_asc_thread_slot()).
 *
 * Locking rules (every op but the ones marked otherwise):
 *   - An op runs inside the scheduler: on a VP with preemption off (the
 *     VP's timer tick and every deferred signal wait until it returns),
 *     serialised with every other op on the same ASC: under the ASC's
 *     run-queue lock (a spinlock), or, while the process runs on its one
 *     VP (the lock-free single-VP path), on that VP alone.
 *   - So an op must not block, sleep, wait for another thread or VP, take
 *     a lock a user thread may hold, or call any asx_asc_* function other
 *     than the accessors below (asx_asc_thread_slot, asx_asc_thread_name,
 *     asx_asc_vp_bound, asx_asc_vp_info, asx_asc_policy_state): those
 *     take the ASC's lock or switch, and would deadlock.  enqueue and
 *     pick_next are the hot path (a yield is one pick_next): they should
 *     not allocate; init, admit and job_done may (malloc does not call
 *     back into the scheduler).
 *   - admit and leave run under the ASC's lock, but the single VP runs
 *     enqueue/pick_next without it: admit and leave may touch the thread's
 *     slot and admission state of their own, never the run queue.
 *   - nrunnable may run without the lock (a hint: read the count with a
 *     relaxed atomic load, store it likewise).
 *   - init and fini run in asx_asc_create*() and asx_asc_destroy() on the
 *     caller, with no thread in the ASC: they may block and allocate.
 */
#ifndef ASX_ASC_POLICY_H
#define ASX_ASC_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <asx/asc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The policy slot: the first 96 bytes of every thread handle, 16-aligned. */
#define ASX_ASC_POLICY_SLOT_SIZE	96

/* The policy slot of @t: the policy's own links and QoS for the thread. */
static inline void *asx_asc_thread_slot(struct asx_asc_thread *t)
{
	return (void *)t;
}

/* The thread whose slot @slot is (the inverse of asx_asc_thread_slot()). */
static inline struct asx_asc_thread *asx_asc_slot_thread(void *slot)
{
	return (struct asx_asc_thread *)slot;
}

/* A VP of an ASC, as the ops see it (opaque). */
struct asx_asc_vp;

/* What the VP activation advice (activation op) hears of. */
enum asx_asc_vp_event {
	ASX_ASC_VPEV_RUNNABLE = 0,	/* a thread became runnable */
	ASX_ASC_VPEV_BLOCKED,		/* a VP entered a blocking call */
	ASX_ASC_VPEV_UNBLOCKED,		/* a VP came back from one */
	ASX_ASC_VPEV_JOB,		/* a job ended (job_done ran) */
	/* a dispatch window of at least 200 us ended on the locked path
	 * (asx_asc_vp_info: window_ns, window_dispatches); < 0 gives the
	 * calling VP back (its thread stays queued for the others) */
	ASX_ASC_VPEV_WINDOW,
};

/* activation's answer: one more VP if the running ones do not get round
 * the queued threads within 200 us (the runtime checks later) */
#define ASX_ASC_ACT_LATER	(-1000)

/* Why a thread leaves an ASC (leave op). */
enum asx_asc_leave {
	ASX_ASC_LEAVE_END = 0,		/* it ended */
	ASX_ASC_LEAVE_MIGRATE,		/* asx_asc_thread_change() to another ASC */
	ASX_ASC_LEAVE_UNPUT,		/* asx_asc_thread_put() failed after admit */
};

/* asx_asc_policy_ops.flags */
#define ASX_ASC_POLICY_VP_PER_THREAD	0x1u	/* DIRECT: a VP made per thread */
#define ASX_ASC_POLICY_QOS_OPTIONAL	0x2u	/* a NULL QoS is admitted */

/* QoS schemas 0x1000 and up are for policies outside libasx. */
#define ASX_QOS_USER	0x1000u

struct asx_asc_policy_ops {
	size_t sz;			/* sizeof(struct asx_asc_policy_ops) */
	const char *name;		/* unique among registered policies; < 32 chars */
	uint32_t schema;		/* the QoS schema it admits (asx_qos.schema) */
	uint32_t flags;			/* ASX_ASC_POLICY_* */
	enum asx_asc_semantic semantic;	/* its default concurrency semantic */
	size_t state_size;		/* per-ASC state, zeroed, passed as @st */

	/* Optional.  An ASC is created / destroyed (no threads). */
	int (*init)(struct asx_asc *asc, void *st);
	void (*fini)(struct asx_asc *asc, void *st);
	/*
	 * Admission, thread_put and thread_change: take @t with @qos (NULL
	 * only with QOS_OPTIONAL; its schema checked, qos->size >= 8).
	 * @change: @t is already in @asc (a QoS change).  0, or -errno: @t is
	 * refused (-EBUSY: over capacity) and its slot is restored.  A
	 * thread migrating in is admitted before it leaves the other ASC
	 * (the runtime keeps the two policies' views of the slot apart).
	 */
	int (*admit)(struct asx_asc *asc, void *st, struct asx_asc_thread *t,
		     const struct asx_qos *qos, bool change);
	/* Optional.  @t leaves (it is running, on no run queue). */
	void (*leave)(struct asx_asc *asc, void *st, struct asx_asc_thread *t,
		      enum asx_asc_leave why);
	/* Wake: @t (admitted, not queued) became runnable. */
	void (*enqueue)(struct asx_asc *asc, void *st, struct asx_asc_thread *t);
	/*
	 * Optional.  Block: @t, running, stops being runnable (it waits on a
	 * lock, a condition, a sleep, a join...); pick_next(cur NULL) follows.
	 * Its enqueue is the wake-up.  (A thread ending or migrating out
	 * gets leave instead.)
	 */
	void (*block)(struct asx_asc *asc, void *st, struct asx_asc_thread *t);
	/*
	 * Pick the thread @vp runs next and take it off the run queue.
	 * Yield (and a preemption tick): @cur is the running thread, still
	 * runnable: queue it or return it to keep running.  Block, end,
	 * migration out: @cur is NULL (the thread is not runnable here).
	 * NULL: nothing to run (the VP idles).
	 */
	struct asx_asc_thread *(*pick_next)(struct asx_asc *asc, void *st,
					    struct asx_asc_vp *vp, struct asx_asc_thread *cur);
	/* Threads queued (runnable, not running); may run without the lock. */
	unsigned int (*nrunnable)(struct asx_asc *asc, void *st);
	/*
	 * Optional VP activation advice: > 0 VPs to make running (idle ones
	 * first, then spares), < 0 (not ACT_LATER) the calling VP should
	 * passivate, ASX_ASC_ACT_LATER, 0 nothing.  Absent: one VP per
	 * runnable thread up to the ASC's concurrency level.
	 */
	int (*activation)(struct asx_asc *asc, void *st, enum asx_asc_vp_event ev);
	/*
	 * Optional; present makes the policy periodic: when @t's entry
	 * function returns, a job ended; return the next release
	 * (asx_now_ns() clock) when the entry runs again, or 0 to end @t.
	 */
	uint64_t (*job_done)(struct asx_asc *asc, void *st, struct asx_asc_thread *t);
	/* Optional: the current job's absolute deadline of @t (ns), 0 none
	 * (asx_asc_thread_deadline()). */
	uint64_t (*deadline)(struct asx_asc *asc, void *st, struct asx_asc_thread *t);
	/* Optional: fill the policy's fields of asx_asc_stats (jobs, misses,
	 * utilisation, vps_target); under the lock. */
	void (*stats)(struct asx_asc *asc, void *st, struct asx_asc_stats *out);
};

/* What the activation advice may read of its ASC (asx_asc_vp_info()).
 * Fixed in the ABI: a later member comes with a call of its own. */
struct asx_asc_vp_info {
	unsigned int running;		/* VPs running threads */
	unsigned int target;		/* the concurrency level (asx_asc_opts.nvps) */
	unsigned int vps;		/* VPs of the ASC, every state */
	uint64_t window_ns;		/* VPEV_WINDOW: the window's length */
	uint64_t window_dispatches;	/*   and the dispatches made in it */
	double miss_ratio_max;		/* asx_asc_opts' (defaults applied) */
	double util_max;
};

/* Accessors an op may call (they take no lock). */
ASX_API void asx_asc_vp_info(const struct asx_asc *asc, struct asx_asc_vp_info *out);
/* The thread a VP_PER_THREAD policy's @vp was made for (NULL: none). */
ASX_API struct asx_asc_thread *asx_asc_vp_bound(const struct asx_asc_vp *vp);
/* @asc's per-ASC policy state (the @st every op gets). */
ASX_API void *asx_asc_policy_state(const struct asx_asc *asc);

/*
 * Register @ops (copied, name included: @ops need not outlive the call).
 * -EINVAL: sz too small, no name, a name of 32 chars or more, admit,
 * enqueue, pick_next or nrunnable missing, unknown flags; -E2BIG: a
 * member this library does not know is set; -EEXIST: a policy of that
 * name is registered (prio, edf, direct and stride are).
 */
ASX_API int asx_asc_policy_register(const struct asx_asc_policy_ops *ops);
/* -ENOENT: no such name; -EBUSY: an ASC uses it; -EPERM: a built-in one. */
ASX_API int asx_asc_policy_unregister(const char *name);
/* asx_asc_create() with the registered policy @name (-ENOENT: none). */
ASX_API int asx_asc_create_by_name(struct asx_asc **out, const char *name,
				   const struct asx_asc_opts *opts);
/* The name of @asc's policy. */
ASX_API const char *asx_asc_policy_name(const struct asx_asc *asc);

/*
 * A policy in a shared object, for the Service Configurator (svc.conf's
 * ASX extension "dynamic NAME ASC_Policy * lib.so:fn()", Documentation/
 * svc.rst): the factory returns the policy's ops (static, living as long
 * as the library), or NULL.  Define it with
 *
 *	ASX_ASC_POLICY_FACTORY(make_rr2)(void) { return &rr2_ops; }
 *
 * which also defines make_rr2_asx_svc_policy_abi, the ABI stamp the loader
 * checks (a factory without it, or with another ABI, is refused).  The
 * policy is registered under the directive's NAME (whatever ops->name says).
 */
#define ASX_ASC_POLICY_ABI 1

typedef const struct asx_asc_policy_ops *asx_asc_policy_factory_fn(void);

#define ASX_ASC_POLICY_FACTORY(fn)                                           \
	ASX_API extern const unsigned int fn##_asx_svc_policy_abi;           \
	ASX_API const unsigned int fn##_asx_svc_policy_abi = ASX_ASC_POLICY_ABI; \
	ASX_API asx_asc_policy_factory_fn fn;                                \
	ASX_API const struct asx_asc_policy_ops *fn

#ifdef __cplusplus
}
#endif

#endif /* ASX_ASC_POLICY_H */
