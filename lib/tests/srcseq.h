/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * srcseq.h - test messages that say who wrote them and in which order: the
 * first 8 bytes are the writer (source) and its sequence number, the rest
 * (seq & 0xff); 16 bytes of headroom for Modules that prepend.  Shared by
 * lib/tests/test_stream.c and test_stream_suspend.c.
 */
#ifndef ASX_TESTS_SRCSEQ_H
#define ASX_TESTS_SRCSEQ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <asx/msg.h>

#define SRCSEQ_HEADROOM 16

/* A message of @len bytes (at least 8) from writer @src, its @seq-th; aborts without memory. */
static inline struct asx_msg *srcseq_make(uint32_t src, uint32_t seq, size_t len,
					  unsigned int type)
{
	size_t n = len < 8 ? 8 : len;
	struct asx_msg *m = asx_msg_alloc(SRCSEQ_HEADROOM + n, type);

	if (!m)
		abort();
	m->rd += SRCSEQ_HEADROOM;
	m->wr = m->rd;
	memset(m->wr, (int)(seq & 0xff), n);
	memcpy(m->wr, &src, 4);
	memcpy(m->wr + 4, &seq, 4);
	m->wr += n;
	return m;
}

/* The writer and sequence number of a message srcseq_make() made. */
static inline void srcseq_ids(const struct asx_msg *m, uint32_t *src, uint32_t *seq)
{
	unsigned char b[8];

	asx_msg_read(m, 0, b, 8);
	memcpy(src, b, 4);
	memcpy(seq, b + 4, 4);
}

#endif /* ASX_TESTS_SRCSEQ_H */
