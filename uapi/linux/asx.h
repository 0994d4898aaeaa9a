/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ASX: kernel Streams and scheduler activations, reached through /dev/asx.
 *
 * Every ioctl argument is a struct whose first field is __u32 size, set by
 * the caller to sizeof() the struct as it was compiled. The kernel accepts:
 *
 *   size <  the first published size of the struct      -> EINVAL
 *   size == the size the kernel knows                   -> used as is
 *   size <  the size the kernel knows (older caller)    -> missing fields are 0
 *   size >  the size the kernel knows (newer caller)    -> the bytes the kernel
 *                                                          does not know must
 *                                                          be 0, else E2BIG
 *
 * Reserved fields and unknown flag bits must be 0 (EINVAL otherwise). Output
 * is written back for min(size, size the kernel knows) bytes.
 *
 * Errors common to every ioctl:
 *
 *   ENOTTY  unknown ioctl command
 *   EINVAL  size too small, reserved field or unknown flag set
 *   E2BIG   size larger than the kernel knows and the extra bytes not all 0
 *   EFAULT  the argument pointer (or a pointer inside it) is not accessible
 */
#ifndef _UAPI_LINUX_ASX_H
#define _UAPI_LINUX_ASX_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Free in Documentation/userspace-api/ioctl/ioctl-number.rst (Linux 6.1). */
#define ASX_IOC_MAGIC		0xA6

/* The ABI version reported by ASX_IOC_VERSION. */
#define ASX_VERSION_MAJOR	0
#define ASX_VERSION_MINOR	1
#define ASX_VERSION_PATCH	0

/*
 * Bits of asx_version.features, one per optional capability of the module.
 * None are defined yet: later features (streams, activations, ...) add
 * ASX_FEAT_* bits here and user space tests them before relying on them.
 */
enum asx_feature {
	ASX_FEAT_NONE = 0,
};

/**
 * struct asx_version - ASX_IOC_VERSION argument
 * @size:     in: sizeof(struct asx_version) as the caller knows it
 * @major:    out: ABI major version (incompatible changes)
 * @minor:    out: ABI minor version (compatible additions)
 * @patch:    out: patch level
 * @features: out: ASX_FEAT_* bits supported by the running module
 * @reserved: in: must be 0; out: 0
 */
struct asx_version {
	__u32 size;
	__u32 major;
	__u32 minor;
	__u32 patch;
	__aligned_u64 features;
	__u64 reserved[2];
};

#define ASX_VERSION_SIZE_VER0	40	/* sizeof the first published struct asx_version */

#define ASX_IOC_VERSION		_IOWR(ASX_IOC_MAGIC, 0x00, struct asx_version)

#endif /* _UAPI_LINUX_ASX_H */
