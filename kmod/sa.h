/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX scheduler activations (sa.c): the hooks main.c and ioctl.c call.
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_SA_H
#define _ASX_SA_H

#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/asx.h>

#ifdef CONFIG_PREEMPT_NOTIFIERS
#define ASX_FEAT_SA_BUILT	(ASX_FEAT_SA | ASX_FEAT_SA_POST | ASX_FEAT_SA_PREEMPT)
long asx_sa_create(void __user *uarg);
void asx_sa_exit(void);
#else
#define ASX_FEAT_SA_BUILT	0
static inline long asx_sa_create(void __user *uarg)
{
	return -ENOTTY;
}

static inline void asx_sa_exit(void)
{
}
#endif

#endif /* _ASX_SA_H */
