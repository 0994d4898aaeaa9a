// SPDX-License-Identifier: GPL-2.0
/*
 * ASX module "pass": passes every message on, in both directions.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "asx_api.h"

static void pass_put(struct asx_queue *q, struct asx_msg *mp)
{
	if (mp->type == ASX_M_FLUSH)
		asx_flush_msg(q, mp);
	else
		asx_putnext(q, mp);
}

struct asx_modinfo asx_mod_pass = {
	.name	= "pass",
	.owner	= THIS_MODULE,
	.rinit	= { .put = pass_put },
	.winit	= { .put = pass_put },
};
