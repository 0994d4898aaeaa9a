/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* kstream_impl.h - what the files of lib/src/kstream share. */
#ifndef ASX_KSTREAM_IMPL_H
#define ASX_KSTREAM_IMPL_H

#include <stdbool.h>
#include <asx/kstream.h>

struct asx_kstream {
	int fd;
	bool own;
};

/* How a library message type crosses into a kernel Stream. */
enum asx__kcarry {
	ASX__KC_NONE = 0,	/* cannot be carried by PUTMSG */
	ASX__KC_DATA,		/* data part only */
	ASX__KC_CTL,		/* first block the control part, the rest data */
	ASX__KC_CTL_HIPRI,	/* the same, ASX_MSG_HIPRI */
	ASX__KC_FLUSH,		/* the flush ioctl */
};

/* typemap.c: how @lib_type is carried down a kernel Stream. */
enum asx__kcarry asx__kstream_carry(unsigned int lib_type);

#endif /* ASX_KSTREAM_IMPL_H */
