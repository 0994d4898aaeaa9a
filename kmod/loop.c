// SPDX-License-Identifier: GPL-2.0
/*
 * The loop driver, every new Stream's: its write side turned back up its
 * read side.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"

static void loop_wput(struct asx_queue *q, struct asx_msg *mp)
{
	if (asx_drv_ctl(q, mp))
		return;
	asx_drv_forward(q, mp);
}

/* The write queue's next is the read queue of the same end. */
void asx_drv_loop_attach(struct asx_stream *st)
{
	rcu_assign_pointer(st->dwq.next, &st->drq);
	rcu_assign_pointer(st->drq.prev, &st->dwq);
}

const struct asx_driver asx_drv_loop = {
	.name	= "loop",
	.rinit	= { .put = asx_drv_rput },
	.winit	= { .put = loop_wput, .srv = asx_drv_forward_srv },
	.attach	= asx_drv_loop_attach,
};
