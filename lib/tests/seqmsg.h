/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * seqmsg.h - numbered test messages whose type, band, length and bytes
 * follow from their sequence number, so a reader can check every one it
 * gets: shared by lib/tests/test_kstream.c (host, CMocka) and
 * selftests/asx/lib/kstream_test.c (VM, kselftest harness).
 *
 * Define before including (or take the defaults):
 *   SEQMSG_NBANDS      bands used, seq % NBANDS                  (3)
 *   SEQMSG_PROTO_EVERY every Nth message is a PROTO with a
 *                      control part (4 bytes: the seq) in front (5)
 *   SEQMSG_LEN(seq)    data bytes: the seq, then (seq & 0xff) (64 + seq % 1000)
 */
#ifndef ASX_TESTS_SEQMSG_H
#define ASX_TESTS_SEQMSG_H

#include <stdint.h>
#include <string.h>

#include <asx/msg.h>

#ifndef SEQMSG_NBANDS
#define SEQMSG_NBANDS 3
#endif
#ifndef SEQMSG_PROTO_EVERY
#define SEQMSG_PROTO_EVERY 5
#endif
#ifndef SEQMSG_LEN
#define SEQMSG_LEN(seq) (64 + (seq) % 1000)
#endif

static inline unsigned int seqmsg_type(uint32_t seq)
{
	return seq % SEQMSG_PROTO_EVERY == 0 ? ASX_MSG_PROTO : ASX_MSG_DATA;
}

static inline uint8_t seqmsg_band(uint32_t seq)
{
	return (uint8_t)(seq % SEQMSG_NBANDS);
}

/* Message @seq, or NULL (out of memory). */
static inline struct asx_msg *seqmsg_make(uint32_t seq)
{
	size_t len = SEQMSG_LEN(seq);
	struct asx_msg *m = asx_msg_alloc(len, ASX_MSG_DATA), *c;

	if (!m)
		return NULL;
	memset(m->wr, (int)(seq & 0xff), len);
	memcpy(m->wr, &seq, 4);
	m->wr += len;
	m->band = seqmsg_band(seq);
	if (seqmsg_type(seq) == ASX_MSG_PROTO) {
		c = asx_msg_alloc(4, ASX_MSG_PROTO);
		if (!c) {
			asx_msg_free(m);
			return NULL;
		}
		asx_msg_append(c, &seq, 4);
		c->band = m->band;
		c->cont = m;
		m = c;
	}
	return m;
}

/* The seq of a message that arrived intact (type, band, parts, bytes), or -1. */
static inline long seqmsg_check(struct asx_msg *m)
{
	struct asx_msg *d = m;
	uint32_t seq, cseq = 0;
	size_t len;

	if (m->type == ASX_MSG_PROTO) {
		if (asx_msg_block_len(m) != 4)
			return -1;
		memcpy(&cseq, m->rd, 4);
		d = m->cont;
		if (!d || d->type != ASX_MSG_DATA)
			return -1;
	} else if (m->type != ASX_MSG_DATA) {
		return -1;
	}
	len = asx_msg_length(d);
	if (len < 4 || asx_msg_pullup(d, len))
		return -1;
	memcpy(&seq, d->rd, 4);
	if (len != SEQMSG_LEN(seq) || seqmsg_type(seq) != m->type || seqmsg_band(seq) != m->band ||
	    (m->type == ASX_MSG_PROTO && cseq != seq))
		return -1;
	for (size_t i = 4; i < len; i++)
		if (d->rd[i] != (unsigned char)(seq & 0xff))
			return -1;
	return seq;
}

#endif /* ASX_TESTS_SEQMSG_H */
