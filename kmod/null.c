// SPDX-License-Identifier: GPL-2.0
/*
 * The null driver: a sink for what is written; nothing comes up.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"

static void null_wput(struct asx_queue *q, struct asx_msg *mp)
{
	if (asx_drv_ctl(q, mp))
		return;
	asx_freemsg(mp);
}

const struct asx_driver asx_drv_null = {
	.name	= "null",
	.rinit	= { .put = asx_drv_rput },
	.winit	= { .put = null_wput },
};
