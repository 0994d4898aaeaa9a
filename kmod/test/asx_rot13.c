// SPDX-License-Identifier: GPL-2.0
/*
 * asx_rot13: registers the ASX module "rot13", which applies ROT13 to the
 * letters of every M_DATA message going down. An example of the exported
 * registration API and the module the selftests load to test it.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "asx_api.h"

#include <linux/init.h>
#include <linux/module.h>

static u8 rot13(u8 c)
{
	if ((c >= 'a' && c <= 'm') || (c >= 'A' && c <= 'M'))
		return c + 13;
	if ((c >= 'n' && c <= 'z') || (c >= 'N' && c <= 'Z'))
		return c - 13;
	return c;
}

static void rot13_wput(struct asx_queue *q, struct asx_msg *mp)
{
	struct asx_msg *b, *copy;
	unsigned char *p;

	if (mp->type == ASX_M_FLUSH) {
		asx_flush_msg(q, mp);
		return;
	}
	if (mp->type == ASX_M_DATA) {
		/* The data may be shared with a dup: change a private copy. */
		copy = asx_copymsg(mp, GFP_ATOMIC);
		asx_freemsg(mp);
		if (!copy)
			return;
		mp = copy;
		for (b = mp; b; b = b->cont)
			for (p = b->rptr; p < b->wptr; p++)
				*p = rot13(*p);
	}
	asx_putnext(q, mp);
}

static void rot13_rput(struct asx_queue *q, struct asx_msg *mp)
{
	if (mp->type == ASX_M_FLUSH)
		asx_flush_msg(q, mp);
	else
		asx_putnext(q, mp);
}

static struct asx_modinfo rot13_mod = {
	.name	= "rot13",
	.owner	= THIS_MODULE,
	.rinit	= { .put = rot13_rput },
	.winit	= { .put = rot13_wput },
};

static int __init rot13_init(void)
{
	return asx_register_module(&rot13_mod);
}

static void __exit rot13_exit(void)
{
	asx_unregister_module(&rot13_mod);
}

module_init(rot13_init);
module_exit(rot13_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("ASX developers");
MODULE_DESCRIPTION("ASX example module: ROT13 on the write side");
