/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/modules.h - reusable Stream Modules.
 *
 * Each factory makes a new Module (asx/stream.h) named @name, ready to
 * push, into *@out and returns 0, or -EINVAL (@out NULL, a bad name) or
 * -ENOMEM, leaving *@out as it was (see below).  The Modules only touch
 * ASX_MSG_DATA messages; every other type passes through unchanged.  They
 * are safe with any number of threads putting on either side at once and
 * run message-based or task-based alike.
 *
 *   pass      passes everything on, both ways.
 *   counter   counts messages and bytes per direction (asx_mod_counter_read):
 *             a message is counted before it is passed on, so whoever has
 *             it next (a Module below, a reader at the head) finds it
 *             counted; one the next Module refuses is taken off again.
 *   framer    write side: prepends a 4-byte big-endian length to each
 *             message; read side (deframer): reassembles frames from a
 *             byte stream cut anywhere, one message per frame, the prefix
 *             removed.  Bad frames (longer than ASX_FRAMER_MAX) reset the
 *             reassembly and count an error.
 *   cksum     write side: prepends the RFC 1071 Internet checksum of the
 *             message (2 bytes); read side: verifies and strips it, drops
 *             and counts messages that do not verify.
 *   loopback  a driver for ASX_STREAM_DRIVER: writes come back up.
 *   xdr       asx_mod_xdr() in asx/xdr.h: native records above, their XDR
 *             encoding below (encodes going down, decodes going up).
 *
 * Prepending uses the first block's headroom when it has 4 (2) free bytes
 * and its data is not shared; otherwise a small block is chained in front.
 */
#ifndef ASX_MODULES_H
#define ASX_MODULES_H

#include <stddef.h>
#include <stdint.h>
#include <asx/common.h>
#include <asx/msg.h>
#include <asx/stream.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ASX_FRAMER_MAX (64u << 20)	/* largest frame payload accepted */

/*
 * Each factory below makes a new Module named @name into *@out and returns
 * 0, or -EINVAL (a bad name) or -ENOMEM; as asx_module_create().
 */

ASX_API int asx_mod_pass(struct asx_module **out, const char *name);

struct asx_counter {
	uint64_t wr_msgs, wr_bytes;	/* went down through the Module */
	uint64_t rd_msgs, rd_bytes;	/* went up */
};
ASX_API int asx_mod_counter(struct asx_module **out, const char *name);
/* 0, or -EINVAL if @mod is not a counter. */
ASX_API int asx_mod_counter_read(struct asx_module *mod, struct asx_counter *c);

ASX_API int asx_mod_framer(struct asx_module **out, const char *name);
ASX_API int asx_mod_cksum(struct asx_module **out, const char *name);
/* Frames or checksums rejected on the read side (0 for other Modules). */
ASX_API uint64_t asx_mod_errors(struct asx_module *mod);

ASX_API int asx_mod_loopback(struct asx_module **out, const char *name);

/*
 * RFC 1071 Internet checksum (the one's complement of the one's
 * complement sum of 16-bit words) of @len bytes, or of a message chain
 * (all blocks, any alignment).  Store the result with memcpy (it is in
 * the order the bytes sum in); a buffer that contains its own checksum
 * sums to 0.
 */
ASX_API uint16_t asx_inet_cksum(const void *buf, size_t len);
ASX_API uint16_t asx_msg_cksum(const struct asx_msg *m);

#ifdef __cplusplus
}
#endif
#endif /* ASX_MODULES_H */
