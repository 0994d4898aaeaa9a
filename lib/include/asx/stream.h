/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/stream.h - Streams, Modules and Tasks in user space.
 *
 * A Stream is a stack of Modules between a Stream head (the application's
 * put/get interface) and a Stream tail (a driver).  Each Module is a pair
 * of Tasks: the write-side Task handles messages going down (head to
 * tail), the read-side Task messages going up (tail to head).
 *
 *	application   asx_stream_put()        asx_stream_get()
 *	                    |                        ^
 *	            +-------v------------------------+------+
 *	head        |  wr  (pass)          |  rd  (queue)   |
 *	            +-------+------------------------^------+
 *	module "a"  |  wr   v              |  rd     |      |
 *	            +-------+------------------------^------+
 *	tail "loop" |  wr   '--- turned back up ---> rd     |
 *	            +---------------------------------------+
 *
 * A Task is described by an ops struct (the papers' four pure virtual
 * methods) and owns a message queue (asx/msgq.h) with water marks.
 *
 * Delivery.  asx_task_put_next(t, m, deadline) hands @m to the next Task
 * in @t's direction.  If that Task has service threads (asx_task_activate:
 * task-based, "Layer Parallelism") the message goes on its queue, waiting
 * while the queue is full, and a service thread takes it from there;
 * otherwise its put() runs at once in the caller's thread (message-based,
 * "Message/Connectional Parallelism").  The default svc (ops->svc == NULL)
 * takes each message off the queue and calls ops->put on it, so a Module
 * written with put() alone runs either way unchanged.
 *
 * Ownership.  put(), put_next(), putq(), reply() return 0 when they took
 * the message and a negative errno when they did not: the message is
 * then still the caller's, as it was handed over.  A put() that changed a
 * message (e.g. prepended a header) and then fails to pass it on must undo
 * the change or free the message and return 0 (counting the drop).
 *
 * Order.  Messages from one thread stay in order through message-based
 * Tasks and through Tasks with one service thread.  Tasks with several
 * service threads may reorder.
 *
 * Flow control.  A normal message put on a full queue waits until the
 * queue drains below its low water mark or @deadline passes (-ETIMEDOUT).
 * High-priority messages (asx_msg_is_hipri) never wait and go ahead of
 * normal ones.  A slow Task therefore stops the threads feeding it,
 * layer by layer, back to the writers at the head.
 *
 * Flush.  An ASX_MSG_FLUSH message carries one byte of ASX_STREAM_FLUSH*
 * flags (and the band in a second byte with ASX_STREAM_FLUSHBAND).  On its
 * way it clears the queue of every write-side Task it reaches
 * (ASX_STREAM_FLUSHW) or read-side Task (ASX_STREAM_FLUSHR); the tail
 * turns it back up when ASX_STREAM_FLUSHR
 * is set, the head turns it back down when ASX_STREAM_FLUSHW is set, as in
 * System V STREAMS.  asx_stream_flush() starts one.
 *
 * Reconfiguration while messages flow (push, pop, insert, replace,
 * remove).  The rule, enforced with RCU (liburcu, urcu-memb flavour):
 *  - every walk from one Task to the next (put_next, reply, the head's put)
 *    runs inside an RCU read-side section that lasts until the next
 *    Task's put (or enqueue) returns;
 *  - a Module is linked in only after both its Tasks' open() succeeded;
 *    it is unlinked first, then the call waits for a grace period (so no
 *    thread is inside or about to enter its put), then lets its service
 *    threads finish every message already queued (they get -ESHUTDOWN from
 *    asx_task_getq once the queue is empty and must return), then passes on
 *    whatever is still queued unprocessed, and only then calls close().
 *  Hence no message is lost or duplicated and none reaches a closed Task.
 *  Messages from one thread keep their order across every change (as far
 *  as the Tasks they pass keep it, see "Order").  A replace links the new
 *  Module in "held" -- what reaches it is queued (beyond its water marks:
 *  nothing waits on it) and its service threads wait -- until the old
 *  one has handed on everything it had; then it takes its queue in order
 *  (a message-based one in the first put to reach it, or in the replace
 *  call).  Removing a task-based Module (remove, pop) first replaces it
 *  so with a pass-through stand-in, which then leaves.
 *  Consequences: reconfiguration calls wait for every put in progress (a
 *  put blocked on flow control does not hold them up: from the outermost
 *  step it waits for room outside its read section and delivers anew,
 *  looking up the next Task again; nested in a put() it queues one
 *  message past the high water mark and waits after, outside), are
 *  serialised per stream,
 *  and must not be called from inside a put() (-EDEADLK); they may be
 *  called from svc threads of other Modules and from any other thread.
 *  A removed Module is closed and freed by the call.
 *
 * Threads.  Any thread may call these functions; libasx registers it
 * with liburcu on first use and unregisters it at thread exit.  From an
 * ASC user thread a put or get that must wait parks the user thread, not
 * its VP; service threads may be ASC user threads (asx_task_activate_asc,
 * asx_stream_opts.asc).
 *
 * USDT probes (provider "asx"):
 *   stream_put_entry(task, module_name, msg)    a Task's put() starts
 *   stream_put_exit(task, module_name, ret)     ... and returned ret
 *   stream_svc_entry(task, module_name)         a service thread starts svc()
 *   stream_svc_exit(task, module_name, ret)     ... svc() returned ret
 *   stream_enqueue(task, module_name, side, bytes_after)   putq / ungetq
 *   stream_dequeue(task, module_name, side, bytes_after)   getq
 * side is 'w' or 'r'; with module_name it names the queue.  Timing
 * put_entry..put_exit per module attributes time to layers (nested puts
 * include the layers below: subtract them).
 *
 * Full reference and a worked example: Documentation/streams.rst.
 */
#ifndef ASX_STREAM_H
#define ASX_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <asx/common.h>
#include <asx/msg.h>
#include <asx/msgq.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_stream;
struct asx_module;
struct asx_task;
struct asx_asc;
struct asx_qos;

/*
 * Flags in the first data byte of an ASX_MSG_FLUSH message: the library's
 * own, so this header does not pull in the kernel ABI (<linux/asx.h>)
 * and its GETMSG flags.  A kernel Stream's flush bits are mapped to and
 * from these by <asx/kstream.h> (asx_kstream_flush_to_kernel()).
 */
#define ASX_STREAM_FLUSHR	0x1u	/* the read-side queues */
#define ASX_STREAM_FLUSHW	0x2u	/* the write-side queues */
#define ASX_STREAM_FLUSHRW	(ASX_STREAM_FLUSHR | ASX_STREAM_FLUSHW)
#define ASX_STREAM_FLUSHBAND	0x4u	/* only the band in the second data byte */

/* asx_task_ops.close @flags */
#define ASX_TASK_CLOSE_REMOVED	0x1u	/* removed from a running stream */
#define ASX_TASK_CLOSE_STREAM	0x2u	/* the stream is closing */

#define ASX_MODULE_NAME_MAX 32		/* including the terminating NUL */

/*
 * What a Task does.  Every member may be NULL:
 *   open   called when the Module is pushed, before it is linked in, with
 *          the argc/argv given to the push; may call asx_task_activate().
 *          0 or a negative errno (the push fails, nothing is linked).
 *   close  called once, after the Task is unlinked and its service
 *          threads have returned; nothing can reach it any more.
 *   put    a message for this Task (see "Ownership" and "Delivery").
 *          NULL: pass it on (asx_task_put_next).
 *   svc    body of each service thread; loops on asx_task_getq() and
 *          returns when that gives -ESHUTDOWN.  NULL: the default loop
 *          calling put (or put_next) on each message.
 */
struct asx_task_ops {
	int (*open)(struct asx_task *t, int argc, char **argv);
	void (*close)(struct asx_task *t, unsigned int flags);
	int (*put)(struct asx_task *t, struct asx_msg *m, const struct timespec *deadline);
	int (*svc)(struct asx_task *t);
};

/* ---------------------------------------------------------------- modules */

/*
 * A new Module @name (1..31 bytes, copied) with write-side ops @wr and
 * read-side ops @rd (the structs are referenced, not copied; NULL: pass
 * everything on) and an argument for the ops, asx_module_arg().  Each Task
 * gets a queue with the default water marks.  0 and *@out, or -EINVAL
 * (bad arguments) or -ENOMEM.  The Module belongs to the caller until a
 * push succeeds.
 */
ASX_API int asx_module_create(struct asx_module **out, const char *name,
			      const struct asx_task_ops *wr,
			      const struct asx_task_ops *rd, void *arg);
/* Free a Module that is not in a stream (never pushed, or a failed push). */
ASX_API void asx_module_destroy(struct asx_module *mod);
/* Call @dtor(arg) when the Module is freed (by destroy, pop, remove, close). */
ASX_API void asx_module_set_dtor(struct asx_module *mod, void (*dtor)(void *arg));

ASX_API const char *asx_module_name(const struct asx_module *mod);
ASX_API void *asx_module_arg(const struct asx_module *mod);
ASX_API struct asx_task *asx_module_wr(struct asx_module *mod);
ASX_API struct asx_task *asx_module_rd(struct asx_module *mod);

/* ---------------------------------------------------------------- tasks */

ASX_API struct asx_module *asx_task_module(const struct asx_task *t);
/* The stream the Task's Module is in (NULL before the push). */
ASX_API struct asx_stream *asx_task_stream(const struct asx_task *t);
/* The other Task of the same Module. */
ASX_API struct asx_task *asx_task_sibling(const struct asx_task *t);
ASX_API bool asx_task_is_wr(const struct asx_task *t);
ASX_API void *asx_task_priv(const struct asx_task *t);
ASX_API void asx_task_set_priv(struct asx_task *t, void *priv);
/* The Task's queue (for stats and water marks; do not destroy it). */
ASX_API struct asx_msgq *asx_task_queue(struct asx_task *t);
/* asx_msgq_set_water() on the Task's queue. */
ASX_API int asx_task_set_water(struct asx_task *t, size_t hiwat, size_t lowat);

/*
 * Hand @m to the next Task in @t's direction (see "Delivery").  0, or
 * -EPIPE (@t is the end of its side: the head's read side or the tail's
 * write side), -ETIMEDOUT, -ESHUTDOWN (queues shut down) or what the next
 * put returned; on error @m is still the caller's.
 */
ASX_API int asx_task_put_next(struct asx_task *t, struct asx_msg *m,
			      const struct timespec *deadline);
/* Send @m back the other way from this layer: put_next of the sibling. */
ASX_API int asx_task_reply(struct asx_task *t, struct asx_msg *m,
			   const struct timespec *deadline);
/*
 * Enqueue @m on @t's own queue, in priority order, waiting while it is
 * full (normal messages only) until @deadline.  0, -ETIMEDOUT, -ESHUTDOWN.
 */
ASX_API int asx_task_putq(struct asx_task *t, struct asx_msg *m,
			  const struct timespec *deadline);
/*
 * Take the next message off @t's queue, waiting until @deadline.  0,
 * -ETIMEDOUT, or -ESHUTDOWN when the Task is being removed (or the stream
 * closed) and nothing is left for it: svc() must then return.
 */
ASX_API int asx_task_getq(struct asx_task *t, struct asx_msg **mp,
			  const struct timespec *deadline);
/* Put @m back at the head of @t's queue (never waits).  0, -ESHUTDOWN. */
ASX_API int asx_task_ungetq(struct asx_task *t, struct asx_msg *m);
/* Whether a normal message handed to put_next would go through without
 * waiting for flow control right now (a snapshot). */
ASX_API bool asx_task_canput_next(struct asx_task *t);
/*
 * Start @n more service threads running svc (task-based).  Usually called
 * from open().  0, -EINVAL (n <= 0, or the Module is not being pushed or
 * in a stream), or the thread manager's error.
 */
ASX_API int asx_task_activate(struct asx_task *t, int n);
/*
 * asx_task_activate() with the service threads as user threads of ASC
 * @asc (asx/asc.h), with @qos in its schema (NULL for DIRECT): the
 * "kernel or user threads" parameter of a task-based Module.  A service
 * thread blocked in getq or on flow control parks, and its VP runs other
 * user threads (Documentation/asc.rst, "Calling libasx from user
 * threads").  @asc must outlive the Stream (or the Module's removal).
 * @asc NULL: pthreads (asx_task_activate() takes the Stream's
 * asx_stream_opts.asc, and pthreads when that is NULL).  Same returns, and the ASC's
 * (-EINVAL for a wrong schema, -EBUSY from admission).
 */
ASX_API int asx_task_activate_asc(struct asx_task *t, int n, struct asx_asc *asc,
				  const struct asx_qos *qos);
/* Service threads started on @t. */
ASX_API int asx_task_threads(const struct asx_task *t);

/* ---------------------------------------------------------------- streams */

enum asx_stream_tail {
	ASX_STREAM_LOOP = 0,	/* write side turned back up the read side */
	ASX_STREAM_SINK,	/* messages are counted and freed */
	ASX_STREAM_DRIVER,	/* opts.driver: a Module the caller made */
};

/*
 * Options for asx_stream_open() (extensible: declare with
 * ASX_OPTS() so sz is set and the rest zeroed; unknown non-zero
 * bytes give -E2BIG).  NULL: a loop-back stream with default water marks.
 */
struct asx_stream_opts {
	size_t sz;
	enum asx_stream_tail tail;
	struct asx_module *driver;	/* ASX_STREAM_DRIVER: the tail; its write
					 * put() is the device's output, its
					 * own threads feed the read side with
					 * asx_task_put_next(asx_module_rd(driver)) */
	int argc;			/* passed to the driver's open() */
	char **argv;
	size_t head_hiwat;		/* the head's read queue (0: defaults) */
	size_t head_lowat;
	size_t head_hipri_max;		/* high-priority messages the head's read
					 * queue holds unread; more get -ENOBUFS
					 * (0: ASX_MSGQ_DEFAULT_HIPRI_MAX, 16;
					 * SIZE_MAX: no bound) */
	struct asx_asc *asc;		/* non-NULL: asx_task_activate() on this
					 * Stream's Tasks runs the service
					 * threads as user threads of @asc
					 * (as asx_task_activate_asc); it must
					 * outlive the Stream */
	const struct asx_qos *asc_qos;	/* their QoS in @asc's schema (NULL for
					 * DIRECT); must outlive the Stream */
};

/* 0 and *@sp, or -EINVAL, -E2BIG, -ENOMEM, or the driver's open() error. */
ASX_API int asx_stream_open(struct asx_stream **sp, const struct asx_stream_opts *opts);

/*
 * Shut the stream down and free it: every queue is deactivated (blocked
 * puts and gets return -ESHUTDOWN), service threads are waited for,
 * queued messages are freed, every Task is closed top down and every
 * Module freed, the driver included.  No other thread may use the stream
 * once this is called (stop them, e.g. after asx_stream_shutdown()).
 */
ASX_API void asx_stream_close(struct asx_stream *s);
/* Deactivate every queue: blocked and later puts/gets get -ESHUTDOWN. */
ASX_API void asx_stream_shutdown(struct asx_stream *s);

/* asx_stream_put / asx_stream_get @flags */
#define ASX_STREAM_NOWAIT 0x1u	/* -EWOULDBLOCK instead of waiting */

/*
 * Send @m (data or control, any type) down the stream from the head, in
 * the caller's thread as far as the first task-based Task (or the tail).
 * 0, -EINVAL, -EWOULDBLOCK (NOWAIT and flow-controlled), -ETIMEDOUT,
 * -ESHUTDOWN, -ENOBUFS (@m is high priority and a queue on its way holds
 * its bound of them unread: see asx_msgq_set_hipri_max()); on error @m is
 * still the caller's.
 */
ASX_API int asx_stream_put(struct asx_stream *s, struct asx_msg *m, unsigned int flags,
			   const struct timespec *deadline);
/* Take the next message that reached the head.  0, -EWOULDBLOCK, -ETIMEDOUT, -ESHUTDOWN. */
ASX_API int asx_stream_get(struct asx_stream *s, struct asx_msg **mp, unsigned int flags,
			   const struct timespec *deadline);
/* The head's read queue (what asx_stream_get takes from). */
ASX_API struct asx_msgq *asx_stream_head_queue(struct asx_stream *s);

/*
 * Send a FLUSH with @flags (ASX_STREAM_FLUSHR/W, ASX_STREAM_FLUSHBAND with
 * @band): the head's read queue is cleared at once for ASX_STREAM_FLUSHR.  0, -EINVAL, -ENOMEM.
 */
ASX_API int asx_stream_flush(struct asx_stream *s, unsigned int flags, uint8_t band);

/*
 * Reconfiguration (see the rule above).  The stream takes @mod when the
 * call succeeds; on failure it stays the caller's.  @argc/@argv go to
 * both Tasks' open().
 *   push     just below the head
 *   insert   just below the Module named @after ("head": same as push)
 *   replace  swap the Module named @name for @mod in one step: nothing
 *            written after the swap overtakes what the old Module still
 *            held (see the rule above); returns once the old one is gone
 *   pop      remove the Module just below the head
 *   remove   remove the Module named @name
 * 0, -EINVAL, -ENOENT (no such name; the head and tail cannot be
 * removed), -EEXIST (a Module of that name is already there), -EDEADLK
 * (called from inside a put), or open()'s error.
 */
ASX_API int asx_stream_push(struct asx_stream *s, struct asx_module *mod, int argc, char **argv);
ASX_API int asx_stream_insert(struct asx_stream *s, const char *after, struct asx_module *mod,
			      int argc, char **argv);
ASX_API int asx_stream_replace(struct asx_stream *s, const char *name, struct asx_module *mod,
			       int argc, char **argv);
ASX_API int asx_stream_pop(struct asx_stream *s);
ASX_API int asx_stream_remove(struct asx_stream *s, const char *name);

/*
 * Suspend and resume a Module: while suspended, it holds the messages that
 * come to it on either side in its Tasks' queues, in order, with flow
 * control (a put into a full queue waits, up to its deadline); resume
 * passes them through its put (or its service threads) before anything
 * newer.  Nothing is dropped.  A put already running in the Module when it
 * is suspended finishes.  A suspended Module that is removed or replaced
 * first passes on what it holds, through itself; one that is closed with
 * its Stream frees it.  While a reconfiguration (anywhere in the process)
 * waits for a grace period, a suspended Module's queue may go over its
 * high water mark rather than hold that wait up.
 *   asx_stream_suspend/resume  the Module named @name in @s
 *   asx_module_suspend/resume  @mod, in a Stream or not yet: a Module
 *                              suspended before its push starts suspended
 * 0 (also when already in that state), -EINVAL, -ENOENT (no such Module;
 * the head and tail cannot be suspended), -EDEADLK (from inside a put).
 */
ASX_API int asx_stream_suspend(struct asx_stream *s, const char *name);
ASX_API int asx_stream_resume(struct asx_stream *s, const char *name);
ASX_API int asx_module_suspend(struct asx_module *mod);
ASX_API int asx_module_resume(struct asx_module *mod);
ASX_API bool asx_module_suspended(const struct asx_module *mod);

/*
 * Names of the Modules from the head down to the tail, head and tail
 * included, copied into @names (each ASX_MODULE_NAME_MAX bytes).  Returns
 * the number of Modules (may exceed @n: only @n are copied).
 */
ASX_API int asx_stream_list(struct asx_stream *s, char (*names)[ASX_MODULE_NAME_MAX], int n);
/* The head and tail Modules (live as long as the stream). */
ASX_API struct asx_module *asx_stream_head(struct asx_stream *s);
ASX_API struct asx_module *asx_stream_tail(struct asx_stream *s);
/* Messages freed by the sink tail so far (0 for other tails). */
ASX_API uint64_t asx_stream_sunk(struct asx_stream *s);

#ifdef __cplusplus
}
#endif
#endif /* ASX_STREAM_H */
