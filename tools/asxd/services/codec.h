/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * codec.h - the record codec.so's XDR Module carries (codec.c), and the
 * test pattern the programs that check it send: record @seq holds
 * codec_len(@seq) bytes of (@seq & 0xff).
 */
#ifndef ASX_SERVICES_CODEC_H
#define ASX_SERVICES_CODEC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct asx_codec_rec {
	uint32_t seq;
	uint32_t len;			/* bytes used in data */
	uint8_t data[256];
};

static inline uint32_t codec_len(uint32_t seq)
{
	return (seq * 13u) % 256u;
}

static inline void codec_fill(struct asx_codec_rec *v, uint32_t seq)
{
	memset(v, 0, sizeof(*v));
	v->seq = seq;
	v->len = codec_len(seq);
	memset(v->data, (int)(seq & 0xff), v->len);
}

/* Is @v record @seq of the pattern, byte for byte? */
static inline bool codec_ok(const struct asx_codec_rec *v, uint32_t seq)
{
	if (v->seq != seq || v->len != codec_len(seq))
		return false;
	for (uint32_t b = 0; b < v->len; b++)
		if (v->data[b] != (uint8_t)(seq & 0xff))
			return false;
	return true;
}

#endif /* ASX_SERVICES_CODEC_H */
