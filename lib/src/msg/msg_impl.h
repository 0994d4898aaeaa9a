/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * msg_impl.h - message-block internals the tests look at.
 *
 * The block cache of asx_msg_alloc() (see msg.c) counts the blocks it
 * took from malloc() and has not given back.  Each of them is at any time
 * either held by a message, in some thread's cache or in the shared
 * depot; so once every message is freed and every other thread has
 * exited, blocks == depot + mine, and any difference is blocks lost.
 */
#ifndef ASX_MSG_IMPL_H
#define ASX_MSG_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <asx/msg.h>

/*
 * A message header's private state, in struct asx_msg's opaque asx__priv.
 * Its members are pointers and a size_t, the types asx__priv is declared
 * with (every pointer type aliases void *), so no may_alias is needed and
 * the queue's hot paths compile exactly as with named fields (checked:
 * identical object code for msg.c and msgq.c).
 */
struct asx__msg_priv {
	struct asx_datab *db;	/* data block referenced by rd/wr */
	struct asx_datab *home;	/* block holding this header's memory, or NULL */
	struct asx_msg *next;	/* queue links (struct asx_msgq) */
	struct asx_msg *prev;
	size_t qbytes;		/* bytes counted while on a queue */
};
_Static_assert(sizeof(struct asx__msg_priv) <= sizeof(((struct asx_msg *)0)->asx__priv),
	       "a message's private state outgrows struct asx_msg");

/* asx__flags: a high-priority message counted by the queue it is on (msgq.c) */
#define ASX__MSG_QHIPRI	0x1u

static inline struct asx__msg_priv *asx__msgp(const struct asx_msg *m)
{
	return (struct asx__msg_priv *)(void *)&((struct asx_msg *)m)->asx__priv;
}

struct asx__msg_cache_stats {
	bool on;		/* the cache is in use */
	size_t thread_max;	/* bound of a thread's cache, bytes */
	size_t depot_max;	/* bound of the shared depot, bytes */
	uint64_t blocks;	/* cached-size blocks from malloc() not yet freed */
	uint64_t bytes;		/* their sizes, header included */
	uint64_t depot_blocks;	/* of those, in the shared depot */
	uint64_t depot_bytes;
	uint64_t mine_blocks;	/* of those, in the calling thread's cache */
	uint64_t mine_bytes;
};

/* A snapshot; exact only while no other thread uses messages. */
void asx__msg_cache_stats(struct asx__msg_cache_stats *st);

#endif /* ASX_MSG_IMPL_H */
