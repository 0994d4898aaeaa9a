/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/reactor.h - the Reactor: event demultiplexing and handler dispatching.
 *
 * A reactor waits (epoll) for I/O readiness on descriptors, for timers
 * (one timerfd on CLOCK_MONOTONIC over a heap of deadlines), for signals
 * (signalfd) and for notifications posted from other threads (eventfd),
 * and calls the matching method of the event handler registered for each.
 *
 * Handlers.  An event handler is a struct asx_event_handler, usually
 * embedded in the application's own object, whose ops table holds the
 * callbacks; any may be NULL except those the handler is registered for.
 * I/O callbacks get the descriptor; notifications pass -1.
 *
 * Return values of callbacks: 0 keeps the registration; a negative value
 * removes the registration that was dispatched (the mask bit on that
 * descriptor, the timer, the signal, the queue binding) as if the matching
 * asx_reactor_remove_*() call had been made.  handle_close's value is ignored.
 *
 * Ownership (see Documentation/reactor.rst for the full rule):
 *  - A handler carries a reference count.  ASX_EVENT_HANDLER_INIT() /
 *    asx_event_handler_init() give it one reference, the creator's.
 *    When the count drops to 0, ops->release() is called (if not NULL) and
 *    the reactor never touches the handler again.
 *  - A handler's *lifetime* in a reactor starts with its first registration
 *    (descriptor, timer, signal or message-queue binding) and ends when its
 *    last registration goes, by whatever path (remove call, negative
 *    callback return, one-shot timer expiry, asx_reactor_destroy()).  For
 *    the whole lifetime the reactor holds one reference.  handle_close()
 *    is called exactly once per lifetime, after the lifetime ended, and the
 *    reactor's reference is dropped right after it returns.
 *  - While a callback runs, the reactor holds another reference, so a
 *    handler that removes itself (and drops the creator's reference) stays
 *    valid until the callback has returned.
 *  - handle_close() never runs while another callback of the same handler
 *    runs: if the lifetime ends during a callback (from inside it or from
 *    another thread), handle_close() is called by the dispatching thread as
 *    soon as that callback returns.  Otherwise it is called by the thread
 *    that removed the last registration, before the remove call returns.
 *  - A handler belongs to at most one reactor at a time (-EBUSY otherwise).
 *
 * Threads.  Every call may be made from any thread, including from inside
 * callbacks.  One thread at a time dispatches (asx_reactor_run*: another
 * thread gets -EBUSY, a nested call from a callback -EDEADLK), except on a
 * thread-pool reactor (ASX_REACTOR_TP below), where any number do.  The
 * dispatcher may be an ASC user thread: its wait then parks that user
 * thread (the ASC's sentinel watches the reactor's epoll descriptor) and
 * the VP runs the ASC's other threads; it is told apart by user thread,
 * not by pthread_self().  With a pool (asx_reactor_pool_start) the I/O
 * callbacks run on the pool's threads instead.  Calls made
 * while the loop is blocked take effect at once: registrations and timer
 * changes update the kernel's epoll and timerfd state, which wakes the
 * waiting thread as needed; asx_reactor_notify() and asx_reactor_end_loop()
 * write the reactor's eventfd.  Removal from another thread does not wait
 * for a callback that is already running; only a cancel of a periodic
 * timer whose callback runs waits for it (see asx_reactor_cancel_timer).
 *
 * Signals.  The reactor reads signals with a signalfd and never changes a
 * signal mask: the application must block every signal it registers in
 * every thread of the process (pthread_sigmask() in main() before creating
 * threads), or the signal is delivered the ordinary way.  Only process-
 * directed signals (kill(), sigqueue()) and signals directed at the
 * dispatching thread reach the reactor; raise() from another thread does not.
 *
 * Time.  Timer deadlines are CLOCK_MONOTONIC; setting the wall clock never
 * fires or delays a timer.  A timer never fires before its deadline.
 *
 * Memory grows with the number of registrations, never with RLIMIT_NOFILE
 * or with the value of a descriptor (descriptors are kept in a hash map).
 *
 * Errors are negative errno values (asx/common.h).
 *
 * USDT probes (provider "asx"):
 *   reactor_dispatch(handler, fd, mask)  an I/O or notification callback
 *                                        is about to run (fd -1: notification)
 *   reactor_timer(timer_id)              a timer's handle_timeout is about to run
 *   reactor_signal(handler, signo)       a handle_signal is about to run
 *
 * Full reference: Documentation/reactor.rst.
 */
#ifndef ASX_REACTOR_H
#define ASX_REACTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/signalfd.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_reactor;
struct asx_event_handler;
struct asx_msgq;

/* Event masks: registration, dispatch and handle_close(). */
#define ASX_EV_READ	0x01u	/* readable, EOF, error, hang-up: handle_input */
#define ASX_EV_WRITE	0x02u	/* writable, error: handle_output */
#define ASX_EV_EXCEPT	0x04u	/* urgent/priority data (EPOLLPRI): handle_exception */
#define ASX_EV_RW	(ASX_EV_READ | ASX_EV_WRITE)
#define ASX_EV_IO	(ASX_EV_READ | ASX_EV_WRITE | ASX_EV_EXCEPT)
/* Only in handle_close()'s mask: what the last registration was. */
#define ASX_EV_TIMER	0x10u
#define ASX_EV_SIGNAL	0x20u
#define ASX_EV_MSGQ	0x40u

struct asx_event_handler_ops {
	int (*handle_input)(struct asx_event_handler *eh, int fd);
	int (*handle_output)(struct asx_event_handler *eh, int fd);
	int (*handle_exception)(struct asx_event_handler *eh, int fd);
	/* @now: the CLOCK_MONOTONIC time of the expiry check, >= the deadline. */
	int (*handle_timeout)(struct asx_event_handler *eh, const struct timespec *now,
			      void *arg);
	int (*handle_signal)(struct asx_event_handler *eh, int signo,
			     const struct signalfd_siginfo *si);
	/*
	 * The handler's lifetime in the reactor ended.  @fd and @mask describe
	 * the registration that went last: (fd, ASX_EV_* bits) for I/O,
	 * (-1, ASX_EV_TIMER), (signo, ASX_EV_SIGNAL), (-1, ASX_EV_MSGQ).
	 */
	int (*handle_close)(struct asx_event_handler *eh, int fd, unsigned int mask);
	/* The last reference went: free the object.  May be NULL. */
	void (*release)(struct asx_event_handler *eh);
};

struct asx_event_handler {
	const struct asx_event_handler_ops *ops;
	/*
	 * libasx's own state of the handler (references, registrations, the
	 * owning reactor), opaque; all zero is a handler with one reference
	 * and no registration.
	 */
	union {
		void *asx__p[6];
		uint64_t asx__u[6];
	} asx__priv;
};

#define ASX_EVENT_HANDLER_INIT(o) { .ops = (o) }

/* One reference (the caller's), no registration. */
ASX_API void asx_event_handler_init(struct asx_event_handler *eh,
				    const struct asx_event_handler_ops *ops);
ASX_API void asx_event_handler_get(struct asx_event_handler *eh);
/* Drop a reference; the last one calls ops->release(). */
ASX_API void asx_event_handler_put(struct asx_event_handler *eh);
/* The current count (a snapshot, for tests and assertions). */
ASX_API unsigned int asx_event_handler_refs(const struct asx_event_handler *eh);

/* A new reactor in *@out: 0, or -ENOMEM, -EMFILE, ... */
ASX_API int asx_reactor_create(struct asx_reactor **out);

/*
 * A reactor with options (NULL: as asx_reactor_create).  Declare with
 *   ASX_OPTS(struct asx_reactor_opts, o, .flags = ASX_REACTOR_TP);
 *
 * ASX_REACTOR_TP: a thread-pool Reactor (leader/followers, as
 * ACE_TP_Reactor).  Any number of threads (pthreads or ASC user threads)
 * call asx_reactor_run() / asx_reactor_run_once() on it at once: one of
 * them, the leader, waits in epoll and takes one event; a descriptor's
 * epoll entry is one-shot, so the descriptor stays disarmed while its
 * callbacks run; the leader hands leadership to a waiting follower, runs
 * the callbacks, re-arms the descriptor and becomes a follower.  Timers,
 * signals and notifications are dispatched the same way (timers and
 * notifications by one thread at a time, in their order).  One handler's
 * callbacks never overlap, whatever their source: a thread about to
 * dispatch a handler whose callback runs on another thread waits for it.
 * On such a reactor run_once also returns once asx_reactor_end_loop()
 * was called, and asx_reactor_pool_start() is refused (-EINVAL).
 */
#define ASX_REACTOR_TP	0x1u
struct asx_reactor_opts {
	size_t sz;		/* sizeof(struct asx_reactor_opts) */
	unsigned int flags;	/* ASX_REACTOR_* */
};
ASX_API int asx_reactor_create_opts(struct asx_reactor **out,
				    const struct asx_reactor_opts *opts);
/* Whether @r was created with ASX_REACTOR_TP. */
ASX_API bool asx_reactor_is_tp(const struct asx_reactor *r);

/*
 * Remove every registration (each handler's handle_close() is called once),
 * drop pending notifications, unbind queues, close the reactor's
 * descriptors and free it.  0, or -EBUSY (nothing done) while a thread is
 * dispatching.  NULL is a no-op.
 */
ASX_API int asx_reactor_destroy(struct asx_reactor *r);

/*
 * I/O.  Register @eh for the ASX_EV_IO bits of @mask on @fd (level-
 * triggered).  A descriptor has one handler; registering it again with the
 * same handler adds bits; one handler may hold any number of descriptors.
 * 0, -EINVAL (bad fd or mask, handler lacks the callback), -EEXIST (@fd
 * belongs to another handler), -EBUSY (@eh belongs to another reactor),
 * -ENOMEM, or epoll_ctl's error (-EBADF, -EPERM for regular files, ...).
 * Remove a descriptor before closing it.
 */
ASX_API int asx_reactor_register_fd(struct asx_reactor *r, int fd,
				    struct asx_event_handler *eh, unsigned int mask);
/* Remove the @mask bits of @fd (all bits: the descriptor).  0, -ENOENT. */
ASX_API int asx_reactor_remove_fd(struct asx_reactor *r, int fd, unsigned int mask);
/*
 * Remove every registration of @eh: descriptors, timers, signals, queue
 * bindings.  0, -ENOENT (@eh has none here).
 */
ASX_API int asx_reactor_remove_handler(struct asx_reactor *r, struct asx_event_handler *eh);
/*
 * Stop / restart I/O dispatching to @eh on all its descriptors (also those
 * registered while suspended).  Timers, signals and notifications are not
 * affected.  Events that arrive meanwhile are dispatched after resume
 * (level-triggered).  0, -ENOENT (not registered here), or epoll's error.
 */
ASX_API int asx_reactor_suspend_handler(struct asx_reactor *r, struct asx_event_handler *eh);
ASX_API int asx_reactor_resume_handler(struct asx_reactor *r, struct asx_event_handler *eh);

/*
 * Timers.  Call @eh's handle_timeout(now, @arg) once @delay_ns has passed,
 * then every @interval_ns (0: once).  Missed periods are skipped, not
 * replayed, and the phase is kept.  Timers due at the same time fire in
 * deadline order, ties in scheduling order.  Returns the timer id (> 0,
 * never reused by this reactor) or -EINVAL, -EBUSY, -ENOMEM.
 */
ASX_API int64_t asx_reactor_schedule_timer(struct asx_reactor *r, struct asx_event_handler *eh,
					   void *arg, uint64_t delay_ns, uint64_t interval_ns);
/* The same with an absolute CLOCK_MONOTONIC deadline. */
ASX_API int64_t asx_reactor_schedule_timer_at(struct asx_reactor *r,
					      struct asx_event_handler *eh, void *arg,
					      const struct timespec *deadline,
					      uint64_t interval_ns);
/*
 * Cancel a timer: 0, its arg in *@argp (if not NULL), and handle_timeout is
 * not called for it again; or -ENOENT (no such timer, or a one-shot timer
 * whose handle_timeout has started: that call owns arg), *@argp untouched.
 * From any thread and from inside the timer's own handle_timeout.  While a
 * periodic timer's handle_timeout runs in the dispatching thread, a cancel
 * from another thread waits for it to return, then acts as if made just
 * after it: once it returns 0, no callback uses arg any more (so the caller
 * must not hold anything that callback waits for).  If that callback ended
 * the timer (negative return, its own cancel), it is -ENOENT.
 */
ASX_API int asx_reactor_cancel_timer(struct asx_reactor *r, int64_t id, void **argp);
/*
 * Change the period after the pending expiry (which does not move); 0
 * makes the timer fire once more, at the pending expiry, and end.  Inside
 * a periodic timer's handle_timeout the pending expiry is its next one.
 * 0, -ENOENT (as for cancel).
 */
ASX_API int asx_reactor_reset_timer_interval(struct asx_reactor *r, int64_t id,
					     uint64_t interval_ns);
/*
 * The pending expiry of timer @id (CLOCK_MONOTONIC) into *@ts: inside its
 * handle_timeout, the next one, after that call's @now.  0, -ENOENT (as for
 * cancel: in a one-shot's callback the timer is gone).
 */
ASX_API int asx_reactor_timer_deadline(struct asx_reactor *r, int64_t id, struct timespec *ts);

/*
 * Signals.  Dispatch @signo to @eh's handle_signal (one handler per
 * signal per reactor).  The signal must be blocked in every thread (see
 * above).  0, -EINVAL, -EEXIST, -EBUSY, or signalfd's error.
 */
ASX_API int asx_reactor_register_signal(struct asx_reactor *r, int signo,
					struct asx_event_handler *eh);
/* 0, -ENOENT.  A signal already pending stays pending (and blocked). */
ASX_API int asx_reactor_remove_signal(struct asx_reactor *r, int signo);

/*
 * Notifications.  Queue a call of @eh's handle_input (ASX_EV_READ),
 * handle_output (ASX_EV_WRITE) or handle_exception (ASX_EV_EXCEPT) with
 * fd -1, made by the dispatching thread; several bits make several calls.
 * Each call is one dispatch (no coalescing).  The queued notification holds
 * a reference to @eh; @eh need not be registered, but a notification for a
 * handler that belongs to another reactor when it is dispatched is dropped.
 * With @eh NULL, only wake the loop: asx_reactor_run_once() returns.
 * 0, -EINVAL, -ENOMEM.
 */
ASX_API int asx_reactor_notify(struct asx_reactor *r, struct asx_event_handler *eh,
			       unsigned int mask);
/* Drop @eh's queued notifications (not queue bindings'); returns how many. */
ASX_API int asx_reactor_purge_notifications(struct asx_reactor *r,
					    struct asx_event_handler *eh);

/*
 * Message-queue notification strategy.  Install @q's notify hook so that
 * an enqueue, from any thread, makes the dispatching thread call @eh's
 * handle_input / handle_output / handle_exception (one bit of @mask;
 * fd -1).  Wake-ups coalesce: at most one call is pending per binding, and
 * a message enqueued while the callback runs causes one more call.  The
 * callback should dequeue (ASX_MSGQ_NOWAIT) until the queue is empty.  If
 * @q holds messages already, a call is queued at once.  The binding is a
 * registration of @eh (ends with asx_reactor_remove_msgq(), a negative
 * return, remove_handler or destroy).  It replaces any hook @q had.
 * 0, -EINVAL, -EEXIST (@q already bound here), -EBUSY, -ENOMEM.
 *
 * The reactor must outlive every enqueue on @q that started before the
 * binding was removed (asx_msgq_set_notify() does not wait for a running
 * hook): stop the producers or destroy @q before destroying the reactor.
 */
ASX_API int asx_reactor_notify_msgq(struct asx_reactor *r, struct asx_msgq *q,
				    struct asx_event_handler *eh, unsigned int mask);
/* Uninstall the hook and end the binding.  0, -ENOENT. */
ASX_API int asx_reactor_remove_msgq(struct asx_reactor *r, struct asx_msgq *q);

/*
 * The event loop.  run_once waits until at least one callback has run, the
 * loop was woken explicitly (end_loop, notify with a NULL handler), or
 * @deadline (absolute CLOCK_MONOTONIC; NULL: no limit; a past deadline
 * polls) passed; it returns the number of callbacks run (handle_close and
 * release not counted), 0 on timeout, or -EBUSY (another thread is
 * dispatching), -EDEADLK (called from a callback), or a system error.
 */
ASX_API int asx_reactor_run_once(struct asx_reactor *r, const struct timespec *deadline);
/* Dispatch until asx_reactor_end_loop(): 0, or run_once's error. */
ASX_API int asx_reactor_run(struct asx_reactor *r);
/*
 * Make run() return (from any thread or a callback).  Sticky: run()
 * returns at once until asx_reactor_reset_loop().
 */
ASX_API void asx_reactor_end_loop(struct asx_reactor *r);
ASX_API void asx_reactor_reset_loop(struct asx_reactor *r);
ASX_API bool asx_reactor_loop_done(const struct asx_reactor *r);

/*
 * A Reactor plus a thread pool (004 section 4.1.3): the dispatching thread
 * demultiplexes and lends each ready descriptor to one of @nthreads pool
 * threads, which runs its I/O callbacks; the descriptor is out of epoll
 * until they return, so one descriptor's callbacks never overlap and keep
 * its events' order, while different descriptors' run in parallel.
 * Timers, signals and notifications still run on the dispatcher.  The
 * threads are ASC user threads of @asc (spawned with @qos, in @asc's
 * schema) or, @asc NULL, pthreads.  Declare with
 *   ASX_OPTS(struct asx_reactor_pool_opts, o, .asc = a, .qos = &q.qos);
 */
struct asx_asc;
struct asx_qos;
struct asx_reactor_pool_opts {
	size_t sz;			/* sizeof(struct asx_reactor_pool_opts) */
	unsigned int nthreads;		/* 0: 4; at most 1024 */
	struct asx_asc *asc;		/* the threads' ASC; NULL: pthreads */
	const struct asx_qos *qos;	/* their QoS (NULL: only for a DIRECT ASC) */
};
/* Start @r's pool: 0, -EBUSY (one already), -EINVAL, or a spawn's error. */
ASX_API int asx_reactor_pool_start(struct asx_reactor *r,
				   const struct asx_reactor_pool_opts *opts);
/*
 * Stop and join the pool; the descriptors it held go back to the
 * dispatcher.  0, -ENOENT (none), -EBUSY (another stop runs), -EDEADLK
 * (called on a pool thread).  asx_reactor_destroy() refuses (-EBUSY)
 * while a pool runs.
 */
ASX_API int asx_reactor_pool_stop(struct asx_reactor *r);
/* The pool's threads, 0 without a pool. */
ASX_API unsigned int asx_reactor_pool_threads(struct asx_reactor *r);

/*
 * The reactor's own descriptor (its epoll set): readable while it has an
 * event to dispatch (I/O, an expired timer, a signal, a notification).  A
 * reactor nests in another through it: register it for ASX_EV_READ and
 * call asx_reactor_run_once(@r, past deadline) from handle_input (what the
 * Service Configurator does for a reactive service, asx/svc.h).  Do not
 * read, change or close it.  The descriptor, or -EINVAL for NULL.
 */
ASX_API int asx_reactor_handle(struct asx_reactor *r);

/* Snapshots: registered descriptors, armed timers. */
ASX_API unsigned int asx_reactor_fd_count(struct asx_reactor *r);
ASX_API unsigned int asx_reactor_timer_count(struct asx_reactor *r);

#ifdef __cplusplus
}
#endif
#endif /* ASX_REACTOR_H */
