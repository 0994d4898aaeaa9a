/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX internals, layer 5, the top: the /dev/asx device (main.c), its ioctls
 * (ioctl.c), /proc/asx (proc.c), the boot-time self-tests (selftest.c) and
 * the built-in modules main.c registers.
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_MAIN_H
#define _ASX_MAIN_H

#include "asx_api.h"

#include <linux/fs.h>

/* main.c */
extern const struct file_operations asx_fops;

/* ioctl.c; the work of some ioctls, on kernel copies of their arguments, for xsi.c */
long asx_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
long asx_ioc_refused(struct asx_stream *st, bool reaches_down);
long asx_do_getmsg(struct asx_stream *st, struct file *file, struct asx_strmsg *sm, bool peek);

/* I_FDINSERT's value in the control part of a PUTMSG, at byte @off */
struct asx_ctl_token {
	u32 off;
	u32 val;
};

long asx_do_putmsg(struct asx_stream *st, struct file *file, const struct asx_strmsg *sm_in,
		   const struct asx_ctl_token *tok);
long asx_do_flush(struct asx_stream *st, u32 flags, u32 band);
long asx_do_str(struct asx_stream *st, struct asx_strioctl *si);
long asx_do_link(struct asx_stream *st, int fd, u32 *id, bool persist);

/* xsi.c: the XSI STREAMS ioctls (streamio(7): I_PUSH...) on /dev/asx */
bool asx_xsi_cmd(unsigned int cmd);
long asx_xsi_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* proc.c */
int asx_proc_init(void);
void asx_proc_exit(void);

/* selftest.c: boot-time self-tests, only in a debug build (ASX_DEBUG, see Kbuild) */
#ifdef ASX_DEBUG
int asx_selftest(void);
#else
static inline int asx_selftest(void)
{
	return 0;
}
#endif

/* mod_*.c: built against asx_api.h alone, as a module outside asx.ko would be */
extern struct asx_modinfo asx_mod_pass;
extern struct asx_modinfo asx_mod_count;
extern struct asx_modinfo asx_mod_frame;
extern struct asx_modinfo asx_mod_csum;
extern struct asx_modinfo asx_mod_hold;
extern struct asx_modinfo asx_mod_tioctl;

#endif /* _ASX_MAIN_H */
