/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/asc.h - Application Scheduler Contexts: user threads multiplexed
 * over virtual processors (VPs, which are pthreads), with a scheduling
 * policy, a concurrency semantic, a VP activation policy and a QoS schema
 * per context.  Documentation/asc.rst has the model; in short:
 *
 *   struct asx_asc *asc;
 *   asx_asc_create(&asc, &asx_asc_prio, NULL);          // one VP
 *   struct asx_prio_qos q = ASX_PRIO_QOS(5);
 *   asx_asc_thread_spawn(asc, &q.qos, fn, arg, NULL, &t);    // create + thread_put
 *   asx_asc_thread_join(t, &ret);
 *   asx_asc_destroy(asc);
 *
 * Every call may be made from a user thread or from an ordinary pthread
 * (which is then simply blocked where a user thread would be switched
 * out), unless it says otherwise.  Errors are negative errno values.
 */
#ifndef ASX_ASC_H
#define ASX_ASC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#if !defined(SI_USER) && defined(__GLIBC__)
/* strict ISO C (-std=c11, no _POSIX_C_SOURCE): <signal.h> hides POSIX's sigset_t
 * and siginfo_t, which asx_asc_thread_wait_signal() takes; <sys/select.h> always
 * defines sigset_t, glibc's siginfo_t comes from its own header. */
#include <sys/select.h>
#include <bits/types/siginfo_t.h>
#endif
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_asc;
struct asx_asc_thread;
struct asx_asc_policy;

/* ------------------------------------------------------------ policies */

/* PRIO: non-preemptive priority round-robin; QoS struct asx_prio_qos. */
ASX_API extern const struct asx_asc_policy asx_asc_prio;
/* EDF: preemptive, periodic threads, earliest deadline first within a
 * priority, deadline-miss accounting, admission test; struct asx_edf_qos. */
ASX_API extern const struct asx_asc_policy asx_asc_edf;
/* DIRECT: one VP per thread (kernel threads); QoS NULL or asx_direct_qos. */
ASX_API extern const struct asx_asc_policy asx_asc_direct;
/* STRIDE: proportional share by tickets (stride scheduling, charged by
 * CPU time); struct asx_stride_qos.  Policies of your own: asx/asc_policy.h. */
ASX_API extern const struct asx_asc_policy asx_asc_stride;

/* ------------------------------------------------------------ QoS */

/* Each policy defines a QoS schema; a QoS struct starts with this header. */
enum asx_qos_schema {
	ASX_QOS_PRIO = 1,
	ASX_QOS_EDF = 2,
	ASX_QOS_DIRECT = 3,
	ASX_QOS_STRIDE = 4,
};

struct asx_qos {
	uint32_t schema;	/* enum asx_qos_schema */
	uint32_t size;		/* sizeof the whole QoS struct */
};

struct asx_prio_qos {
	struct asx_qos qos;
	int priority;		/* larger runs first */
};
#define ASX_PRIO_QOS(p) \
	((struct asx_prio_qos){ { ASX_QOS_PRIO, sizeof(struct asx_prio_qos) }, (p) })

struct asx_edf_qos {
	struct asx_qos qos;
	int priority;		/* larger first; EDF among equal priorities */
	uint64_t period_ns;	/* the entry point runs once per period */
	uint64_t deadline_ns;	/* relative to each release; 0: the period */
	uint64_t budget_ns;	/* worst-case run time per period (admission) */
	uint64_t nperiods;	/* 0: until asx_asc_thread_exit() */
};
#define ASX_EDF_QOS(prio, period, budget, n) \
	((struct asx_edf_qos){ { ASX_QOS_EDF, sizeof(struct asx_edf_qos) }, \
			       (prio), (period), 0, (budget), (n) })

struct asx_direct_qos {
	struct asx_qos qos;
};
#define ASX_DIRECT_QOS() \
	((struct asx_direct_qos){ { ASX_QOS_DIRECT, sizeof(struct asx_direct_qos) } })

struct asx_stride_qos {
	struct asx_qos qos;
	uint32_t tickets;	/* its share: tickets / the sum of the runnable ones' (1..2^20) */
};
#define ASX_STRIDE_QOS(n) \
	((struct asx_stride_qos){ { ASX_QOS_STRIDE, sizeof(struct asx_stride_qos) }, (n) })

/* ------------------------------------------------------------ ASCs */

enum asx_asc_semantic {
	ASX_ASC_DEFAULT = 0,		/* the policy's own */
	ASX_ASC_NONPREEMPTIVE,		/* switches only in yield / blocking calls */
	ASX_ASC_PREEMPTIVE,		/* also when a more urgent thread wakes */
	ASX_ASC_TIMESLICED,		/* also every timeslice */
};

/*
 * How an ASC learns that one of its VPs blocked in the kernel.  The wrapper
 * path (asx_asc_read(), asx_asc_nanosleep(), ... and asx_asc_blocking_begin()
 * and _end() around anything else) always works.  With activations, asx.ko
 * reports every sleep of a VP, wrapped or not: a page fault on a mapped
 * file, a read() made through libc, a futex wait inside another library.
 * A spare VP parked in the kernel takes over at once, and the wrappers of
 * blocking calls leave the accounting to the kernel.  An ASC with
 * activations keeps the process on the locked (multi-VP) path.
 */
enum asx_asc_activations {
	ASX_ASC_ACT_DEFAULT = 0,	/* the environment's ASX_ASC_ACTIVATIONS
					 * (off, auto or on), else off */
	ASX_ASC_ACT_OFF,		/* the wrapper path only */
	ASX_ASC_ACT_AUTO,		/* activations when /dev/asx offers them */
	ASX_ASC_ACT_ON,			/* activations or asx_asc_create() fails:
					 * -ENODEV no /dev/asx, -ENOTTY a module
					 * without them (ABI < 0.3) */
};

/*
 * Size-first, like every option struct (asx/common.h): declare with
 *   ASX_OPTS(struct asx_asc_opts, o, .nvps = 3);
 * and leave the rest zero for the defaults.
 */
struct asx_asc_opts {
	size_t sz;			/* sizeof(struct asx_asc_opts) */
	const char *name;
	unsigned int nvps;		/* running VPs (concurrency); 0: 1 */
	unsigned int max_vps;		/* cap with spare VPs for blocked calls; 0: nvps + 64;
					 * activations: >= nvps + spare_vps, <= 1024 */
	enum asx_asc_semantic semantic;
	uint64_t timeslice_ns;		/* tick of PREEMPTIVE/TIMESLICED; 0: 2 ms */
	double miss_ratio_max;		/* EDF: refuse admission above it; 0: 0.05 */
	double util_max;		/* EDF: utilisation bound per VP; 0: 1.0 */
	/* scheduler activations of asx.ko (Documentation/asc.rst) */
	enum asx_asc_activations activations;
	unsigned int spare_vps;		/* activations: VPs kept parked in the kernel; 0: 2 */
	/*
	 * activations: also hear when the kernel preempts a VP (asx.ko's
	 * PREEMPTED, ASX_FEAT_SA_PREEMPT) and let a spare run the queued
	 * threads meanwhile.  A module without it: ignored under
	 * ASX_ASC_ACT_AUTO, asx_asc_create() fails with -EOPNOTSUPP under _ON.
	 */
	bool act_preempted;
};

/*
 * Create an ASC with @opts->nvps VPs (NULL: defaults).  Adding the
 * process's second VP (here or anywhere) switches the scheduler from the
 * lock-free single-VP path to the locked path; made from outside the
 * ASCs, that waits until the single running VP reaches a scheduling point.
 */
ASX_API int asx_asc_create(struct asx_asc **out, const struct asx_asc_policy *policy,
			   const struct asx_asc_opts *opts);
/* -EBUSY while it has threads; otherwise stops and joins its VPs. */
ASX_API int asx_asc_destroy(struct asx_asc *asc);
/* Add or remove a running VP (changes the concurrency level).  With
 * activations add fails with -ENOSPC when max_vps VPs exist (every VP must
 * fit in the activation group). */
ASX_API int asx_asc_add_vp(struct asx_asc *asc);
ASX_API int asx_asc_remove_vp(struct asx_asc *asc);

struct asx_asc_stats {
	unsigned int vps;		/* pthreads of this ASC (running, idle, blocked) */
	unsigned int vps_running;
	unsigned int vps_blocked;	/* in a blocking call */
	unsigned int vps_target;	/* concurrency level */
	unsigned int threads;
	uint64_t jobs;			/* EDF: jobs (periods) completed */
	uint64_t misses;		/* EDF: of which finished after their deadline */
	double utilisation;		/* EDF: admitted sum of budget/period */
	uint64_t spares_made;		/* VPs created for blocked calls */
	bool activations;		/* the ASC uses asx.ko's activations */
	unsigned int vps_spare;		/* activations: VPs parked in the kernel */
	uint64_t upcalls;		/* activations: returns from the kernel wait */
	uint64_t takeovers;		/* activations: a spare ran a thread for a blocked VP */
	uint64_t sa_blocked;		/* activations: BLOCKED events acted on */
	uint64_t sa_lost;		/* activations: events lost to a full ring */
	uint64_t retired;		/* activations: surplus spares that exited */
	uint64_t sa_preempted;		/* activations: PREEMPTED events acted on */
};
ASX_API int asx_asc_stats(struct asx_asc *asc, struct asx_asc_stats *st);
ASX_API const char *asx_asc_name(const struct asx_asc *asc);
/* True when the whole process runs on the lock-free single-VP path. */
ASX_API bool asx_asc_single_vp_mode(void);
/*
 * User-level context switches made so far on @asc's VPs (a thread
 * switched out for another or for its VP's loop), summed over every VP
 * it ever had; 0 for NULL.  Read it before and after a run: the
 * difference is what the run cost in switches.
 */
ASX_API uint64_t asx_asc_switches(struct asx_asc *asc);

/*
 * The resource hierarchy (asxctl asc, tools/gdb/libasx-gdb.py's "asx
 * ascs" read the same lists): every ASC of the process with its policy,
 * its VPs and its user threads, taken under each ASC's lock (a consistent
 * picture of each ASC, not of the process at one instant).  The structs
 * are fixed in the ABI: what a later libasx adds comes with a call of its
 * own.  States are static strings: a VP is "running", "idle", "blocked",
 * "exited" or "spare"; a thread "new", "ready", "running", "blocked" or
 * "dead".
 */
struct asx_asc_snap_vp {
	int tid;			/* its kernel thread id (0: not started yet) */
	const char *state;
	uint64_t cur;			/* the id of the thread it runs, 0: none */
};

struct asx_asc_snap_thread {
	uint64_t id;			/* the thread's handle, as a number (gdb's address) */
	const char *state;
	char name[24];			/* asx_asc_thread_opts.name, "" if none */
	int vp;				/* the tid of the VP running it, 0: none */
};

struct asx_asc_snap {
	char name[32];			/* asx_asc_name() */
	char policy[32];		/* asx_asc_policy_name() */
	size_t nvps, nthreads;
	struct asx_asc_snap_vp *vps;	/* in the ASC's list order */
	struct asx_asc_snap_thread *threads;	/* newest first */
};

/*
 * 0, *out (one malloc'd block: free(*out) frees it all, the arrays
 * included) and *n ASCs, newest first; *out NULL when there is none.
 * -EINVAL, -ENOMEM.
 */
ASX_API int asx_asc_snapshot(struct asx_asc_snap **out, size_t *n);
/*
 * The floor under a user-level switch: two contexts switching to each
 * other from one call site, @rounds round trips, with no scheduler, queue
 * or lock in between (asx-bench asc-yield's raw_switch_ns).  0 and the
 * nanoseconds per switch in *@ns; -EINVAL (@rounds 0, @ns NULL), -ENOMEM
 * (no stack).  It runs on the calling thread, which needs no ASC.
 */
ASX_API int asx_asc_raw_switch_ns(unsigned long rounds, double *ns);

/* ------------------------------------------------------------ threads */

/* Size-first as struct asx_asc_opts (same checks). */
struct asx_asc_thread_opts {
	size_t sz;			/* sizeof(struct asx_asc_thread_opts) */
	size_t stack_size;		/* 0: 128 KiB (x4 under sanitizers) */
	const char *name;
	bool detached;			/* no join: freed when it ends */
};

typedef void *(*asx_asc_thread_fn)(void *arg);

/* A thread that is in no ASC yet; start it with asx_asc_thread_put(). */
ASX_API int asx_asc_thread_create(struct asx_asc_thread **out, asx_asc_thread_fn fn, void *arg,
			      const struct asx_asc_thread_opts *opts);
/*
 * The paper's thread_put: insert @t (made by asx_asc_thread_create) into @asc
 * with @qos in @asc's schema.  -EINVAL for a wrong schema, -EBUSY when the
 * admission test refuses (the thread stays unstarted and may be put
 * elsewhere or released with asx_asc_thread_release()).
 */
ASX_API int asx_asc_thread_put(struct asx_asc *asc, struct asx_asc_thread *t,
			       const struct asx_qos *qos);
/* Free a thread that was never put. */
ASX_API void asx_asc_thread_release(struct asx_asc_thread *t);
/* create + put. */
ASX_API int asx_asc_thread_spawn(struct asx_asc *asc, const struct asx_qos *qos,
				 asx_asc_thread_fn fn, void *arg,
				 const struct asx_asc_thread_opts *opts,
				 struct asx_asc_thread **out);
/*
 * The paper's thread_change, for the calling user thread: @asc NULL or
 * its own ASC changes its QoS there; another ASC migrates it (any policy;
 * @qos in the target's schema).  On return the caller runs in the target
 * with the new QoS.  -EBUSY: refused by admission (nothing changed);
 * -EPERM from a pthread that is not a user thread.
 */
ASX_API int asx_asc_thread_change(struct asx_asc *asc, const struct asx_qos *qos);

ASX_API void asx_asc_thread_yield(void);
/* The calling user thread, or NULL on an ordinary pthread. */
ASX_API struct asx_asc_thread *asx_asc_thread_self(void);
ASX_API struct asx_asc *asx_asc_thread_asc(const struct asx_asc_thread *t);
ASX_API const char *asx_asc_thread_name(const struct asx_asc_thread *t);
/*
 * Fiber-local storage: a key names one pointer in every execution context,
 * an ASC user thread or (when the caller is not one) a plain pthread, as
 * pthread_key_create() does for pthreads.  A user thread keeps its values
 * when it moves to another VP; its VP's pthread has values of its own.
 *
 * asx_asc_key_create: 0 and *@key, or -EAGAIN when ASX_ASC_KEYS_MAX keys
 * exist.  @dtor, if not NULL, is called with a context's non-NULL value
 * when that context ends (a user thread returning or calling
 * asx_asc_thread_exit(), on that thread; a pthread exiting), with the
 * value already NULL; the rounds repeat while destructors set values,
 * at most ASX_ASC_KEY_ITERATIONS times.  asx_asc_key_delete: 0, or -EINVAL
 * for a key that does not exist; no destructor runs, and every context's
 * value of the key is gone (a key made again later starts at NULL).
 * asx_asc_getspecific: the caller's value, NULL if never set or the key
 * does not exist; lock-free, a few loads.  asx_asc_setspecific: 0,
 * -EINVAL for a key that does not exist, -ENOMEM.
 */
#define ASX_ASC_KEYS_MAX	128
#define ASX_ASC_KEY_ITERATIONS	4
typedef unsigned int asx_asc_key_t;
ASX_API int asx_asc_key_create(asx_asc_key_t *key, void (*dtor)(void *));
ASX_API int asx_asc_key_delete(asx_asc_key_t key);
ASX_API void *asx_asc_getspecific(asx_asc_key_t key);
ASX_API int asx_asc_setspecific(asx_asc_key_t key, const void *value);

/* Wait for @t to end (0) and free it; -EINVAL if detached or joined already. */
ASX_API int asx_asc_thread_join(struct asx_asc_thread *t, void **ret);
ASX_API void asx_asc_thread_exit(void *ret) __attribute__((noreturn));
/* Sleep without holding the VP.  0, or -EINTR when a thread timer fired. */
ASX_API int asx_asc_thread_sleep_until(const struct timespec *deadline);
ASX_API int asx_asc_thread_sleep(uint64_t ns);

/*
 * Per-thread timers: ASX_ASC_THREAD_TIMERS independent timers per thread.
 * @fn(@arg) runs in the owning thread when it is next dispatched after
 * the timer fired (a sleeping owner is woken for it), once, or every
 * @period_ns when non-zero.  @first NULL cancels the timer.  Only the
 * owner may set its timers.
 */
#define ASX_ASC_THREAD_TIMERS 4
ASX_API int asx_asc_thread_timer_set(unsigned int idx, const struct timespec *first,
				 uint64_t period_ns, void (*fn)(void *), void *arg);

/*
 * ASC signals (004 section 3.4): signal types registered by name, sent to
 * a user thread, handled in that thread at its next scheduling point (its
 * return from a yield, a block or a preemption), by the handler the thread
 * set for it.  Like POSIX signals of one type, signals sent before the
 * thread handles them are handled once; one with no handler is dropped.
 *
 * asx_asc_signal_register(): a new type; its id (1..ASX_ASC_SIGNALS_MAX-1),
 *   -EEXIST (the name is taken), -ENOSPC (all taken), -EINVAL (empty or
 *   longer than ASX_ASC_SIGNAL_NAME_MAX - 1).
 * asx_asc_signal_handle(): the calling user thread's handler for @sig
 *   (NULL: none); -EPERM off a user thread, -EINVAL an unregistered id.
 * asx_asc_signal(): sends @sig to @t (a thread that has not ended).  With
 *   ASX_ASC_SIG_PREEMPT (the type "preempt", registered from the start):
 *   the VP running @t is asked to preempt it at its next safe point, as the
 *   timeslice tick does (not inside the scheduler, libasx's own critical
 *   sections or libc: there it is taken at the section's end, or dropped);
 *   a thread not running is left alone.  Any other signal of a running @t
 *   does the same, so that its handler runs soon.  0 or -EINVAL.
 */
#define ASX_ASC_SIGNALS_MAX		32
#define ASX_ASC_SIGNAL_NAME_MAX		24
#define ASX_ASC_SIG_PREEMPT		0
typedef void (*asx_asc_signal_fn)(int sig, void *arg);
ASX_API int asx_asc_signal_register(const char *name);
ASX_API int asx_asc_signal_handle(int sig, asx_asc_signal_fn fn, void *arg);
ASX_API int asx_asc_signal(struct asx_asc_thread *t, int sig);

/* EDF: the current job's absolute deadline (CLOCK_MONOTONIC ns), 0 elsewhere. */
ASX_API uint64_t asx_asc_thread_deadline(void);

/* ------------------------------------------------------------ sync */

/*
 * ASC-aware mutex, condition, semaphore and barrier: they block the user
 * thread, not the VP (on an ordinary pthread they block the pthread).
 * Plain structs: zero-fill or *_init(); the fields are private.
 */
struct asx__waitq {
	void *head, *tail;
};

struct asx_asc_mutex {
	int lock;
	int locked;
	void *owner;
	struct asx__waitq q;
};
ASX_API void asx_asc_mutex_init(struct asx_asc_mutex *m);
ASX_API void asx_asc_mutex_lock(struct asx_asc_mutex *m);
ASX_API int asx_asc_mutex_trylock(struct asx_asc_mutex *m);	/* 0 or -EBUSY */
ASX_API int asx_asc_mutex_timedlock(struct asx_asc_mutex *m, const struct timespec *abstime);
ASX_API void asx_asc_mutex_unlock(struct asx_asc_mutex *m);

struct asx_asc_cond {
	int lock;
	struct asx__waitq q;
};
ASX_API void asx_asc_cond_init(struct asx_asc_cond *c);
ASX_API int asx_asc_cond_wait(struct asx_asc_cond *c, struct asx_asc_mutex *m);
/* 0, or -ETIMEDOUT (the mutex is held again either way). */
ASX_API int asx_asc_cond_timedwait(struct asx_asc_cond *c, struct asx_asc_mutex *m,
				   const struct timespec *abstime);
ASX_API void asx_asc_cond_signal(struct asx_asc_cond *c);
ASX_API void asx_asc_cond_broadcast(struct asx_asc_cond *c);

struct asx_asc_sem {
	int lock;
	unsigned int value;
	struct asx__waitq q;
};
ASX_API void asx_asc_sem_init(struct asx_asc_sem *s, unsigned int value);
ASX_API void asx_asc_sem_wait(struct asx_asc_sem *s);
ASX_API int asx_asc_sem_trywait(struct asx_asc_sem *s);		/* 0 or -EAGAIN */
ASX_API int asx_asc_sem_timedwait(struct asx_asc_sem *s, const struct timespec *abstime);
ASX_API void asx_asc_sem_post(struct asx_asc_sem *s);

struct asx_asc_barrier {
	int lock;
	unsigned int count, arrived;
	uint64_t cycle;
	struct asx__waitq q;
};
ASX_API int asx_asc_barrier_init(struct asx_asc_barrier *b, unsigned int count);
/* 1 in exactly one thread per round (the last to arrive), 0 in the others. */
ASX_API int asx_asc_barrier_wait(struct asx_asc_barrier *b);

/* ------------------------------------------------------------ blocking calls */

/*
 * Wait without holding the VP until @fd is ready for @events (POLLIN,
 * POLLOUT, ...): the sentinel watches it in epoll.  Returns the ready
 * events (> 0), -ETIMEDOUT at @deadline, or a negative errno.
 */
ASX_API int asx_asc_thread_wait_fd(int fd, short events, const struct timespec *deadline);

/*
 * Wait without holding the VP until one of the signals in @set is
 * pending for the process, and accept it (like sigtimedwait): the
 * sentinel reads it from a signalfd in its epoll set.  Returns the signal
 * number, with its details in @info (may be NULL); -ETIMEDOUT at
 * @deadline (NULL: none); -EINVAL for an empty set, SIGKILL or SIGSTOP,
 * or a signal that is not blocked in the calling thread.  The signals
 * must be blocked in every thread of the process (block them before
 * creating ASCs: VPs inherit the creator's mask), or the kernel delivers
 * them to some thread instead.  Process-directed signals only (kill,
 * sigqueue); each is given to one waiter, the longest waiting for it.
 * From a plain pthread this is sigtimedwait().
 */
ASX_API int asx_asc_thread_wait_signal(const sigset_t *set, siginfo_t *info,
				   const struct timespec *deadline);

/*
 * Wrapped system calls.  Descriptors the kernel can report readiness for
 * (pipes, sockets, ...) are waited for with asx_asc_thread_wait_fd() when the
 * call would block; anything else runs between asx_asc_blocking_begin()
 * and _end(), which hand the VP to the ASC's other threads for the
 * duration (waking or creating a spare VP as its activation policy says)
 * and give it back afterwards.  Return values as the C library's, with
 * errno set on failure.
 */
ASX_API ssize_t asx_asc_read(int fd, void *buf, size_t n);
ASX_API ssize_t asx_asc_write(int fd, const void *buf, size_t n);
ASX_API ssize_t asx_asc_recv(int fd, void *buf, size_t n, int flags);
ASX_API ssize_t asx_asc_send(int fd, const void *buf, size_t n, int flags);
ASX_API int asx_asc_accept(int fd, struct sockaddr *addr, socklen_t *len);
ASX_API int asx_asc_connect(int fd, const struct sockaddr *addr, socklen_t len);
ASX_API int asx_asc_poll(struct pollfd *fds, nfds_t n, int timeout_ms);
ASX_API int asx_asc_nanosleep(const struct timespec *req, struct timespec *rem);

/* Bracket any other call that may block the pthread. */
ASX_API void asx_asc_blocking_begin(void);
ASX_API void asx_asc_blocking_end(void);

/*
 * Second-level concurrency control: a preemptive ASC never switches a
 * thread while it is between asx_asc_lib_enter() and _leave() (nestable).
 * Calls into libc, libasx and the dynamic loader are recognised by their
 * address and are never preempted either; use these around other
 * libraries that take internal locks.
 */
ASX_API void asx_asc_lib_enter(void);
ASX_API void asx_asc_lib_leave(void);

#ifdef __cplusplus
}
#endif
#endif /* ASX_ASC_H */
