// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * typemap.c - the one table between the library's message types and flush
 * bits (<asx/msg.h>, <asx/stream.h>) and the kernel's (asx.ko's ASX_M_* in
 * kmod/asx_api.h, ASX_FLUSH* in <linux/asx.h>).  Every crossing of the
 * boundary (asx_kstream_put/get, the spanning drivers) goes through it.
 */
#include <asx/kstream.h>
#include "kstream_impl.h"

/* asx.ko's message types (kmod/asx_api.h, enum asx_mtype): not in the uapi. */
enum {
	KM_DATA = 0x00, KM_PROTO = 0x01, KM_IOCTL = 0x02, KM_CTL = 0x03,
	KM_PCPROTO = 0x80, KM_FLUSH = 0x81, KM_IOCACK = 0x82, KM_IOCNAK = 0x83,
	KM_ERROR = 0x84, KM_HANGUP = 0x85,
};

static const struct {
	unsigned char lib;	/* enum asx_msg_type */
	unsigned char kern;	/* asx.ko's ASX_M_* */
	unsigned char carry;	/* enum asx__kcarry: how PUTMSG carries it */
} typemap[] = {
	{ ASX_MSG_DATA,    KM_DATA,    ASX__KC_DATA },
	{ ASX_MSG_PROTO,   KM_PROTO,   ASX__KC_CTL },
	{ ASX_MSG_PCPROTO, KM_PCPROTO, ASX__KC_CTL_HIPRI },
	{ ASX_MSG_FLUSH,   KM_FLUSH,   ASX__KC_FLUSH },
	{ ASX_MSG_IOCTL,   KM_IOCTL,   ASX__KC_NONE },
	{ ASX_MSG_IOCACK,  KM_IOCACK,  ASX__KC_NONE },
	{ ASX_MSG_IOCNAK,  KM_IOCNAK,  ASX__KC_NONE },
	{ ASX_MSG_ERROR,   KM_ERROR,   ASX__KC_NONE },
	{ ASX_MSG_HANGUP,  KM_HANGUP,  ASX__KC_NONE },
	{ ASX_MSG_CTL,     KM_CTL,     ASX__KC_NONE },
};

#define NTYPES (sizeof(typemap) / sizeof(typemap[0]))

/* Flush bits: library, kernel. */
static const struct {
	unsigned int lib, kern;
} flushmap[] = {
	{ ASX_STREAM_FLUSHR,    ASX_FLUSHR },
	{ ASX_STREAM_FLUSHW,    ASX_FLUSHW },
	{ ASX_STREAM_FLUSHBAND, ASX_FLUSHBAND },
};

#define NFLUSH (sizeof(flushmap) / sizeof(flushmap[0]))

int asx_kstream_type_to_kernel(unsigned int lib_type)
{
	for (unsigned int i = 0; i < NTYPES; i++)
		if (typemap[i].lib == lib_type)
			return typemap[i].kern;
	return -EINVAL;
}

int asx_kstream_type_from_kernel(unsigned int kernel_type)
{
	for (unsigned int i = 0; i < NTYPES; i++)
		if (typemap[i].kern == kernel_type)
			return typemap[i].lib;
	return -EINVAL;
}

enum asx__kcarry asx__kstream_carry(unsigned int lib_type)
{
	for (unsigned int i = 0; i < NTYPES; i++)
		if (typemap[i].lib == lib_type)
			return (enum asx__kcarry)typemap[i].carry;
	return ASX__KC_NONE;
}

int asx_kstream_flush_to_kernel(unsigned int lib_flags)
{
	unsigned int out = 0;

	for (unsigned int i = 0; i < NFLUSH; i++)
		if (lib_flags & flushmap[i].lib) {
			out |= flushmap[i].kern;
			lib_flags &= ~flushmap[i].lib;
		}
	return lib_flags ? -EINVAL : (int)out;
}

int asx_kstream_flush_from_kernel(unsigned int kernel_flags)
{
	unsigned int out = 0;

	for (unsigned int i = 0; i < NFLUSH; i++)
		if (kernel_flags & flushmap[i].kern) {
			out |= flushmap[i].lib;
			kernel_flags &= ~flushmap[i].kern;
		}
	return kernel_flags ? -EINVAL : (int)out;
}
