/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/msgq.h - message queue with byte-counted flow control.
 *
 * A queue holds messages (asx/msg.h) for any number of producer and
 * consumer threads.  The queue is opaque: create it, share the pointer,
 * destroy it once no thread uses it any more.
 *
 * Order.  By default a message goes in priority order: high-priority
 * types (asx_msg_is_hipri()) ahead of every normal message, normal
 * messages by band (higher band first), FIFO among equals.  ASX_MSGQ_HEAD
 * and ASX_MSGQ_TAIL put it exactly at the head or tail instead.
 * Dequeue always takes the head.
 *
 * Flow control.  The queue counts the bytes of the messages on it
 * (asx_msg_length() of each chain, taken at enqueue).  Once the count
 * reaches the high water mark the queue is "full" and normal enqueues
 * wait; it stays full until the count drops below the low water mark
 * (or to 0), and only then may producers go on:
 *
 *	bytes
 *	  hiwat -----x............x------   x: a producer fills it up
 *	             |  full      |            (waits from here ...)
 *	  lowat -----|-------.----|------
 *	             |        \___|         (... to here: below lowat)
 *	  0    ------+------------+------> time
 *
 * So the byte count stays below hiwat + the largest normal message.
 * High-priority messages and ASX_MSGQ_FORCE are never held back (their
 * bytes still count).
 *
 * Waiting.  Every enqueue and dequeue takes @flags and a @deadline:
 * ASX_MSGQ_NOWAIT returns -EWOULDBLOCK at once; otherwise the call waits
 * until @deadline (absolute CLOCK_MONOTONIC, NULL = for ever) and then
 * returns -ETIMEDOUT.  A waiting thread spins briefly before it sleeps.
 *
 * Errors (negative errno):
 *   -EINVAL       NULL message/pointer, unknown or conflicting flags,
 *                 malformed deadline
 *   -EWOULDBLOCK  ASX_MSGQ_NOWAIT and the call would have to wait
 *   -ETIMEDOUT    the deadline passed
 *   -ESHUTDOWN    the queue is deactivated (also wakes current waiters)
 *   -EINTR        asx_msgq_pulse() woke the waiter before it could proceed
 * A failed enqueue leaves the message with the caller; nothing is freed.
 *
 * Notification.  asx_msgq_set_notify() installs fn(q, arg), called after
 * every successful enqueue, outside the queue's lock, in the enqueuing
 * thread.  fn may call any queue function (including dequeue).  Calls
 * from concurrent producers are not ordered; by the time fn runs the
 * message may already have been taken.  asx_msgq_set_notify() returns
 * only once every call of the hook it replaced has returned, so the old
 * hook's argument may be freed then; called from inside the hook it
 * waits for the other threads' calls but not for its own.
 *
 * USDT probes (provider "asx"):
 *   msgq_enqueue(q, bytes_after, msgs_after)
 *   msgq_dequeue(q, bytes_after, msgs_after)
 *   msgq_block_full(q)    a producer found the queue full and will wait
 *   msgq_block_empty(q)   a consumer found the queue empty and will wait
 */
#ifndef ASX_MSGQ_H
#define ASX_MSGQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <asx/common.h>
#include <asx/msg.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_msgq;

/* Enqueue/dequeue flags. */
#define ASX_MSGQ_NOWAIT	0x1u	/* never wait: -EWOULDBLOCK instead */
#define ASX_MSGQ_HEAD	0x2u	/* enqueue at the head, ignoring priority */
#define ASX_MSGQ_TAIL	0x4u	/* enqueue at the tail, ignoring priority */
#define ASX_MSGQ_FORCE	0x8u	/* enqueue even when full (e.g. putting back) */

#define ASX_MSGQ_DEFAULT_HIWAT	(64 * 1024)
#define ASX_MSGQ_DEFAULT_LOWAT	(16 * 1024)
/* High-priority messages a queue holds at once (as asx.ko's ASX_MAX_HIPRI_QUEUED). */
#define ASX_MSGQ_DEFAULT_HIPRI_MAX	16

typedef void asx_msgq_notify_fn(struct asx_msgq *q, void *arg);

/*
 * A new, empty, active queue in *@out.  @hiwat = @lowat = 0 picks the
 * defaults.  0, or -EINVAL if @hiwat is 0 (with a non-zero @lowat) or
 * @lowat > @hiwat, or -ENOMEM.
 */
ASX_API int asx_msgq_create(struct asx_msgq **out, size_t hiwat, size_t lowat);

/* Free the queue and every message still on it.  No thread may be using it. */
ASX_API void asx_msgq_destroy(struct asx_msgq *q);

/*
 * Put the message chain @m on the queue (ownership passes on success).
 * @flags: ASX_MSGQ_NOWAIT, at most one of ASX_MSGQ_HEAD / ASX_MSGQ_TAIL,
 * ASX_MSGQ_FORCE.  0, -EINVAL, -EWOULDBLOCK, -ETIMEDOUT, -ESHUTDOWN, -EINTR,
 * or -ENOBUFS: @m is high priority (never held back by flow control) and
 * the queue already holds its bound of them (asx_msgq_set_hipri_max(),
 * default ASX_MSGQ_DEFAULT_HIPRI_MAX; counted in stats.hipri_refused).
 * ASX_MSGQ_FORCE is neither held back nor refused.
 */
ASX_API int asx_msgq_enqueue(struct asx_msgq *q, struct asx_msg *m, unsigned int flags,
			     const struct timespec *deadline);

/*
 * Take the head message into *@mp (the caller owns it).  @flags:
 * ASX_MSGQ_NOWAIT.  0, -EINVAL, -EWOULDBLOCK, -ETIMEDOUT, -ESHUTDOWN, -EINTR.
 */
ASX_API int asx_msgq_dequeue(struct asx_msgq *q, struct asx_msg **mp, unsigned int flags,
			     const struct timespec *deadline);

/*
 * The head message without taking it: 0 and *@mp, -EWOULDBLOCK when
 * empty, -ESHUTDOWN.  The queue still owns the message: only use it while
 * no other thread can dequeue it (e.g. the queue's sole consumer).
 */
ASX_API int asx_msgq_peek(struct asx_msgq *q, struct asx_msg **mp);

/* Free every message (asx_msg_free_chain); returns how many. */
ASX_API size_t asx_msgq_flush(struct asx_msgq *q);

/* Free the normal messages of @band (high-priority ones stay); returns how many. */
ASX_API size_t asx_msgq_flush_band(struct asx_msgq *q, uint8_t band);

/*
 * Deactivate: every waiting producer and consumer returns -ESHUTDOWN, and
 * so does every later enqueue, dequeue and peek until asx_msgq_activate().
 * Messages stay on the queue (flush or destroy frees them).
 */
ASX_API void asx_msgq_deactivate(struct asx_msgq *q);
ASX_API void asx_msgq_activate(struct asx_msgq *q);
ASX_API bool asx_msgq_is_active(const struct asx_msgq *q);

/*
 * Wake every thread waiting right now, once, without deactivating.  Each
 * re-checks the queue: if it can proceed it does (and succeeds), otherwise
 * it returns -EINTR.  Threads that start waiting afterwards are unaffected.
 */
ASX_API void asx_msgq_pulse(struct asx_msgq *q);

/* Snapshots; they may be stale by the time the caller looks. */
ASX_API size_t asx_msgq_count(const struct asx_msgq *q);
ASX_API size_t asx_msgq_bytes(const struct asx_msgq *q);
ASX_API bool asx_msgq_is_empty(const struct asx_msgq *q);
/* True while flow-controlled: a normal enqueue would wait. */
ASX_API bool asx_msgq_is_full(const struct asx_msgq *q);

ASX_API size_t asx_msgq_hiwat(const struct asx_msgq *q);
ASX_API size_t asx_msgq_lowat(const struct asx_msgq *q);
/*
 * Change the water marks: 0, or -EINVAL if @hiwat is 0 or @lowat > @hiwat.
 * The full/not-full state is re-evaluated at once (waiters may wake).
 */
ASX_API int asx_msgq_set_water(struct asx_msgq *q, size_t hiwat, size_t lowat);
ASX_API int asx_msgq_set_hiwat(struct asx_msgq *q, size_t hiwat);
ASX_API int asx_msgq_set_lowat(struct asx_msgq *q, size_t lowat);
/*
 * The most high-priority messages the queue holds at once: past it an
 * enqueue of one (without ASX_MSGQ_FORCE; a HANGUP never) fails with
 * -ENOBUFS.  @max >= 1 (SIZE_MAX: no bound); 0 or -EINVAL.  Messages
 * already queued stay.
 */
ASX_API int asx_msgq_set_hipri_max(struct asx_msgq *q, size_t max);
ASX_API size_t asx_msgq_hipri_max(const struct asx_msgq *q);

/* Install (or with NULL remove) the enqueue notification. */
ASX_API void asx_msgq_set_notify(struct asx_msgq *q, asx_msgq_notify_fn *fn, void *arg);

struct asx_msgq_stats {
	uint64_t enqueued;	/* successful enqueues */
	uint64_t dequeued;	/* successful dequeues */
	uint64_t peak_bytes;	/* highest byte count right after an enqueue */
	uint64_t full_waits;	/* enqueues that found the queue full and waited */
	uint64_t empty_waits;	/* dequeues that found the queue empty and waited */
	uint64_t sleeps;	/* times a waiter slept in the kernel */
	uint64_t hipri_refused;	/* high-priority enqueues refused (-ENOBUFS) by the bound */
};

/* Counters since creation. */
ASX_API void asx_msgq_stats(struct asx_msgq *q, struct asx_msgq_stats *st);

#ifdef __cplusplus
}
#endif
#endif /* ASX_MSGQ_H */
