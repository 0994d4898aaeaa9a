/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/msg.h - message blocks.
 *
 * A message is a chain of blocks linked through `cont`.  Each block is a
 * small header (struct asx_msg) that points into a data block: a buffer
 * plus a reference count.  Several headers may share one data block, so
 * duplicating a message copies no data.  Bytes of a block are those
 * between `rd` (next byte to read) and `wr` (next byte to write); the
 * buffer extends before rd (headroom) and after wr (space).
 *
 *	 header          header (dup)
 *	 rd ----.        rd --.
 *	 wr --. |        wr --|-----.
 *	      v v             v     v
 *	[.....#######.........]        data block, refs = 2
 *
 * The header is a public struct so that the hot-path accessors below are
 * inline; fields marked private belong to the library and may change.
 * The data block (struct asx_datab) is opaque.
 *
 * Ownership: whoever holds a header owns it and frees it once, with
 * asx_msg_free() (one block) or asx_msg_free_chain() (the whole chain).
 * Handing a message to a queue transfers ownership; a failed hand-over
 * (negative return) leaves it with the caller.  Writing into a shared data
 * block is visible through every header that shares it (asx_msg_shared()
 * tells whether a block is shared).
 *
 * Errors: int-returning calls give 0 or a negative errno.  Pointer-
 * returning calls give NULL on failure (allocation failure or invalid
 * arguments) and make no promise about errno.
 *
 * Message types follow System V STREAMS.  High-priority types bypass flow
 * control and are queued ahead of every normal message, whatever its band:
 *
 *	normal:        DATA, PROTO, IOCTL, CTL, USER .. PCUSER-1
 *	high priority: PCPROTO, FLUSH, IOCACK, IOCNAK, ERROR, HANGUP,
 *	               PCUSER .. 255
 *
 * The band (0..255) orders normal messages in a queue: higher band first.
 * It is ignored for high-priority messages.
 */
#ifndef ASX_MSG_H
#define ASX_MSG_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum asx_msg_type {
	ASX_MSG_DATA = 0,	/* user data */
	ASX_MSG_PROTO,		/* protocol control */
	ASX_MSG_PCPROTO,	/* protocol control, high priority */
	ASX_MSG_FLUSH,		/* flush queues (high priority) */
	ASX_MSG_IOCTL,		/* control request travelling down a stream */
	ASX_MSG_IOCACK,		/* positive reply to an IOCTL (high priority) */
	ASX_MSG_IOCNAK,		/* negative reply to an IOCTL (high priority) */
	ASX_MSG_ERROR,		/* fatal error report (high priority) */
	ASX_MSG_HANGUP,		/* the far end went away (high priority) */
	ASX_MSG_CTL,		/* control between adjacent modules */
	ASX_MSG_USER = 64,	/* 64..127: application-defined, normal */
	ASX_MSG_PCUSER = 128,	/* 128..255: application-defined, high priority */
	ASX_MSG_TYPE_MAX = 255,
};

struct asx_datab;

struct asx_msg {
	unsigned char *rd;	/* first unread byte */
	unsigned char *wr;	/* first free byte; rd <= wr <= end of buffer */
	struct asx_msg *cont;	/* next block of the same message, or NULL */
	uint8_t type;		/* enum asx_msg_type */
	uint8_t band;		/* priority band of normal messages */
	/* libasx's own from here on: never read or write these */
	uint16_t asx__flags;
	uint32_t asx__resv;
	unsigned char *asx__base; /* start of the buffer (read by the inlines below) */
	unsigned char *asx__lim;  /* end of the buffer */
	union {
		void *asx__p[5];
		size_t asx__z[5];
		uint64_t asx__u[5];
	} asx__priv;		/* data block, queue links (lib/src/msg/msg_impl.h) */
};

/* Types 0..63 that are high priority. */
#define ASX__MSG_HIPRI_MASK						\
	((1ULL << ASX_MSG_PCPROTO) | (1ULL << ASX_MSG_FLUSH) |		\
	 (1ULL << ASX_MSG_IOCACK) | (1ULL << ASX_MSG_IOCNAK) |		\
	 (1ULL << ASX_MSG_ERROR) | (1ULL << ASX_MSG_HANGUP))

/* True for the high-priority types (see the table above). */
static inline bool asx_msg_type_is_hipri(unsigned int type)
{
	if (type < 64)
		return (ASX__MSG_HIPRI_MASK >> type) & 1;
	return type >= ASX_MSG_PCUSER;
}

static inline bool asx_msg_is_hipri(const struct asx_msg *m)
{
	return asx_msg_type_is_hipri(m->type);
}

/*
 * A message of one block with a fresh buffer of @size bytes (0 is
 * allowed), rd = wr = start of the buffer, band 0.  NULL if @type > 255 or
 * memory is short.  Header, data block and buffer are one allocation.
 * To leave room for headers prepended later, include it in @size and call
 * asx_msg_reserve() before writing the data.
 */
ASX_API struct asx_msg *asx_msg_alloc(size_t size, unsigned int type);

/*
 * A DATA message over the caller's buffer @buf of @len bytes, without
 * copying: rd = @buf, wr = @buf + @len.  @free_fn(@buf, @arg) is called
 * exactly once, from whichever thread drops the last reference to the
 * data (free_fn may be NULL).  NULL if memory is short; @free_fn is then
 * not called and the buffer stays the caller's.
 */
ASX_API struct asx_msg *asx_msg_wrap(void *buf, size_t len,
				     void (*free_fn)(void *buf, void *arg), void *arg);

/*
 * A new chain of headers for @m's chain, each sharing its block's data
 * (reference counted, no copy); rd, wr, type and band are copied.  NULL
 * if memory is short (nothing leaks).
 */
ASX_API struct asx_msg *asx_msg_dup(const struct asx_msg *m);

/*
 * A deep copy of @m's chain: new buffers of the same capacities with the
 * same contents, headroom, type and band.  Shares nothing.  NULL if memory
 * is short.
 */
ASX_API struct asx_msg *asx_msg_copy(const struct asx_msg *m);

/* Free the header @m (not its cont chain); drops its data reference. NULL: no-op. */
ASX_API void asx_msg_free(struct asx_msg *m);

/* Free @m and every block after it through cont.  NULL: no-op. */
ASX_API void asx_msg_free_chain(struct asx_msg *m);

/* Bytes rd..wr summed over the whole chain. */
ASX_API size_t asx_msg_length(const struct asx_msg *m);

/* Blocks in the chain. */
ASX_API size_t asx_msg_blocks(const struct asx_msg *m);

#define ASX_MSG_PULLUP_ALL ((size_t)-1)

/*
 * Make the first @len bytes of the message contiguous in its first block
 * (@len = ASX_MSG_PULLUP_ALL: the whole message).  Bytes are moved from
 * the following blocks whatever their type; blocks emptied by the move
 * are freed and unlinked.  @m itself stays the head.  If the first block's
 * buffer is unshared and large enough the bytes move in place, otherwise
 * the block gets a new buffer (its old data reference is dropped).
 * 0 on success; -EINVAL if the message holds fewer than @len bytes;
 * -ENOMEM (message unchanged).
 */
ASX_API int asx_msg_pullup(struct asx_msg *m, size_t len);

/* True if the data block of @m is referenced by more than one header. */
ASX_API bool asx_msg_shared(const struct asx_msg *m);

/*
 * Copy up to @len bytes starting @off bytes into the message (across the
 * chain) to @buf; returns how many were copied.
 */
ASX_API size_t asx_msg_read(const struct asx_msg *m, size_t off, void *buf, size_t len);

/*
 * Append the whole message @tail at the end of @m's chain.  @m takes
 * ownership of @tail.
 */
ASX_API void asx_msg_link(struct asx_msg *m, struct asx_msg *tail);

/* ---- inline accessors for one block ---- */

static inline unsigned char *asx_msg_rd(const struct asx_msg *m) { return m->rd; }
static inline unsigned char *asx_msg_wr(const struct asx_msg *m) { return m->wr; }

/* Unread bytes in this block (wr - rd). */
static inline size_t asx_msg_block_len(const struct asx_msg *m)
{
	return (size_t)(m->wr - m->rd);
}

/* Bytes that can still be written after wr in this block. */
static inline size_t asx_msg_space(const struct asx_msg *m)
{
	return (size_t)(m->asx__lim - m->wr);
}

/* Bytes before rd in this block (room to prepend a header). */
static inline size_t asx_msg_headroom(const struct asx_msg *m)
{
	return (size_t)(m->rd - m->asx__base);
}

/* Capacity of this block's buffer. */
static inline size_t asx_msg_size(const struct asx_msg *m)
{
	return (size_t)(m->asx__lim - m->asx__base);
}

/* Mark @n bytes written at wr as data: 0, or -ENOSPC (nothing changes). */
static inline int asx_msg_commit(struct asx_msg *m, size_t n)
{
	if (n > asx_msg_space(m))
		return -ENOSPC;
	m->wr += n;
	return 0;
}

/* Consume @n bytes at rd: 0, or -EINVAL if fewer are there. */
static inline int asx_msg_consume(struct asx_msg *m, size_t n)
{
	if (n > asx_msg_block_len(m))
		return -EINVAL;
	m->rd += n;
	return 0;
}

/* Copy @len bytes from @data to wr: 0, or -ENOSPC (nothing changes). */
ASX_API int asx_msg_append(struct asx_msg *m, const void *data, size_t len);

/* Copy @len bytes from @data just before rd: 0, or -ENOSPC (no headroom). */
ASX_API int asx_msg_prepend(struct asx_msg *m, const void *data, size_t len);

/*
 * Reserve @n bytes of headroom in a block that holds no data yet: rd and
 * wr both move @n bytes forward, so that lower layers can later prepend
 * their headers in place (asx_msg_prepend()) instead of allocating a block
 * in front.  0; -EINVAL if the block holds data (rd != wr); -ENOSPC if
 * fewer than @n bytes of space are left.  On error nothing changes.
 */
ASX_API int asx_msg_reserve(struct asx_msg *m, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* ASX_MSG_H */
