/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/mux.h - the Multiplexor: routes messages between many upper
 * streams and lower streams by an external id.
 *
 *	  upper "A"    upper "B"    upper "C"       asx_mux_open_upper(key)
 *	      |  ^         |  ^         |  ^
 *	    [ mux driver: the tail of each upper stream ]
 *	      |  ^ key_of(msg) -> map -> stream      (asx/map.h, any lock)
 *	   lower 1     lower 2                      asx_mux_link(stream, key)
 *
 * Down: a message reaching the tail of an upper stream goes down the
 * lower stream bound to its key (key_of(msg)), or the default lower
 * stream (linked with a NULL key).  Up: a message reaching the head of a
 * lower stream goes up the upper stream bound to its key.  Messages
 * without a route are freed and counted (asx_mux_stats).  Both maps use
 * the lock strategy given at creation.
 *
 * key_of(msg, key, arg) writes the message's key_size-byte external id
 * into @key and returns 0, or a negative errno (the message is then
 * unroutable).  It may look at any part of the message but not change it.
 *
 * Lifetime.  Routing runs inside the put chain's RCU read-side section;
 * asx_mux_close_upper() and asx_mux_unlink() unbind, wait for a grace
 * period, and only then let go of the stream, so no message is routed to
 * a stream being closed.  asx_mux_unlink() also lets every message that
 * is already inside the lower stream (queued in its Tasks or between
 * them, e.g. replies on their way up) reach its head and be routed up
 * before the lower's head queues again.  A linked lower stream belongs to the caller
 * (close it after asx_mux_unlink()); upper streams belong to the mux.
 */
#ifndef ASX_MUX_H
#define ASX_MUX_H

#include <stdint.h>
#include <asx/common.h>
#include <asx/map.h>
#include <asx/msg.h>
#include <asx/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_mux;

typedef int asx_mux_key_fn(const struct asx_msg *m, void *key, void *arg);

/* 0 and *@mp, -EINVAL, -ENOMEM. */
ASX_API int asx_mux_create(struct asx_mux **mp, enum asx_map_lock lock, size_t key_size,
			   asx_mux_key_fn *key_of, void *arg);
/* Close every upper stream, unlink every lower one, free the mux. */
ASX_API void asx_mux_destroy(struct asx_mux *mux);

/*
 * A new upper stream for external id @key, its tail the Multiplexor.
 * @opts: head water marks only (tail/driver must be zero), may be NULL.
 * 0 and *@sp, -EEXIST (key taken), -EINVAL, -ENOMEM.
 */
ASX_API int asx_mux_open_upper(struct asx_mux *mux, const void *key,
			       const struct asx_stream_opts *opts, struct asx_stream **sp);
/* Unbind and close an upper stream.  0, -ENOENT. */
ASX_API int asx_mux_close_upper(struct asx_mux *mux, struct asx_stream *upper);

/*
 * Link @lower under the mux: what reaches its head from below is routed
 * up; messages with @key (NULL: every key without its own lower stream)
 * are routed down it.  The head calls up before the first message can be
 * routed down, so nothing that comes straight back stays in @lower's head
 * queue.  0, -EEXIST, -EBUSY (already linked, under this mux or another), -EINVAL, -ENOMEM, -EDEADLK
 * (called from inside a put()).
 */
ASX_API int asx_mux_link(struct asx_mux *mux, struct asx_stream *lower, const void *key);
/*
 * Undo asx_mux_link.  Nothing is routed down @lower any more; messages
 * already inside it (in its Tasks' queues or being passed between them)
 * are still routed up (or counted unroutable) before this returns: it
 * waits for the lower's service threads to hand them on, and for the
 * upper streams to take them (an upper head queue that nobody reads
 * holds it up).  Messages a driver keeps in its own state are not seen.
 * After it returns the lower's head queues again (asx_stream_get).
 * 0, -ENOENT, -EDEADLK (called from inside a put()).
 */
ASX_API int asx_mux_unlink(struct asx_mux *mux, struct asx_stream *lower);

struct asx_mux_stats {
	uint64_t down;		/* routed down */
	uint64_t up;		/* routed up */
	uint64_t unroutable;	/* freed: no key or no stream for it */
};
ASX_API void asx_mux_stats(struct asx_mux *mux, struct asx_mux_stats *st);
/* The map used for upward routing (key -> upper stream), e.g. to inspect it. */
ASX_API struct asx_map *asx_mux_upper_map(struct asx_mux *mux);

#ifdef __cplusplus
}
#endif
#endif /* ASX_MUX_H */
