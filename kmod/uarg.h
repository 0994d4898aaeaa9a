/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uarg.h - size-first ioctl arguments (see uapi/linux/asx.h).
 *
 * Every ioctl struct starts with a __u32 size.  A caller's struct shorter
 * than the first published version is -EINVAL; a longer one must be zero
 * past what this module knows (-E2BIG otherwise, which
 * copy_struct_from_user() checks), and is capped at a page.  On the way
 * out, the size field says how many bytes the kernel wrote.
 */
#ifndef ASX_UARG_H
#define ASX_UARG_H

#include <linux/minmax.h>
#include <linux/uaccess.h>

static inline int asx_copy_in(void *karg, size_t ksize, size_t ver0, const void __user *uarg)
{
	u32 usize;
	int ret;

	if (get_user(usize, (const u32 __user *)uarg))
		return -EFAULT;
	if (usize < ver0)
		return -EINVAL;
	if (usize > PAGE_SIZE)
		return -E2BIG;
	ret = copy_struct_from_user(karg, ksize, uarg, usize);
	/*
	 * The copy read the size again: another thread may have changed it
	 * since the checks. Only the value checked counts.
	 */
	*(u32 *)karg = usize;
	return ret;
}

static inline int asx_copy_out(void __user *uarg, void *karg, size_t ksize)
{
	u32 *size = karg;

	*size = min_t(u32, *size, ksize);
	return copy_to_user(uarg, karg, *size) ? -EFAULT : 0;
}

#define ASX_COPY_IN(k, u, ver0)	asx_copy_in(&(k), sizeof(k), ver0, u)
#define ASX_COPY_OUT(u, k)	asx_copy_out(u, &(k), sizeof(k))

#endif /* ASX_UARG_H */
