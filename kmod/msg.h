/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX internals, layer 1: message blocks (msg.c) beyond the exported API:
 * the caches, the live counts and the per-user budget. stream.h lists the
 * layers.
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_MSG_H
#define _ASX_MSG_H

#include "asx_api.h"

#include <linux/uidgid.h>

int asx_msg_init(void);
void asx_msg_exit(void);

/* Live message headers and data blocks, for /proc/asx/objects and the leak tests. */
long asx_nr_msgs(void);
long asx_nr_dblks(void);

/*
 * The data of an ASX_M_PASSFP message: a file in flight (its reference is the
 * message's, dropped when the message is freed) and who sent it. Such a
 * message is made by I_SENDFD, put straight on the other pipe end's head
 * and never dup'ed or copied: no module sees it.
 */
struct asx_passfp {
	struct file *file;
	kuid_t uid;
	kgid_t gid;
	struct asx_budget *fdcharged;	/* counts it in flight (user_max_fds) */
};

struct asx_budget;
struct asx_budget *asx_budget_get(kuid_t uid);
int asx_msg_charge(struct asx_budget *b, struct asx_msg *mp);
int asx_budget_fd_charge(struct asx_budget *b);
void asx_budget_fd_uncharge(struct asx_budget *b);

void asx_freemsg_list(struct list_head *list);

/* asx_msgdsize() without the call for the usual one-block message. */
static inline size_t asx_msg_size(const struct asx_msg *mp)
{
	return likely(!mp->cont) ? asx_blen(mp) : asx_msgdsize(mp);
}

#endif /* _ASX_MSG_H */
