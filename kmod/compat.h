/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where asx.ko adapts to differences between kernel versions.
 *
 * Each difference is detected by feature, not by version: kmod/Kbuild looks
 * in the headers of the kernel being built for and passes ASX_HAVE_* for
 * what it finds, so no other file of kmod/ names a kernel version. The
 * kernels built and tested are listed in Documentation/kmod.rst, "Kernels".
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_COMPAT_H
#define _ASX_COMPAT_H

/* 6.12 moved the unaligned accessors from <asm/unaligned.h> */
#ifdef ASX_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * Since 6.10, __assign_str() takes the destination only and copies from
 * the source that __string() named; before, it took both.
 */
#ifdef ASX_HAVE_ASSIGN_STR_DST_ONLY
#define asx_assign_str(dst, src)	__assign_str(dst)
#else
#define asx_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * Whether a task that is switched out stays runnable (preempted) rather than
 * going to sleep. With delayed dequeue (EEVDF, 6.12 on) a task that sleeps
 * may stay on its run queue, on_rq set, until it would have been picked
 * (se.sched_delayed): the kernel's task_is_runnable() tells the two apart.
 * Before, a task going to sleep was dequeued before the switch, so on_rq
 * alone says it.
 */
#ifdef ASX_HAVE_TASK_IS_RUNNABLE
#define asx_task_runnable(t)	task_is_runnable(t)
#else
#define asx_task_runnable(t)	(READ_ONCE((t)->on_rq) != 0)
#endif

#endif /* _ASX_COMPAT_H */
