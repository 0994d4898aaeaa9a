// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svc_mod.c - test Modules for Streams in svc.conf, built as svc_mod.so:
 * a pass-through Module whose open() records its parameters (and fails on
 * "-fail"), a factory that fails, and an old-ABI one.
 */
#include <stdio.h>
#include <string.h>

#include <asx/stream.h>
#include <asx/svc.h>

#include "svc_test.h"

static int p_open(struct asx_task *t, int argc, char **argv)
{
	if (!asx_task_is_wr(t))
		return 0;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-fail"))
			return -EADDRNOTAVAIL;
	svc_test_log("open %s%s%s", argv[0], argc > 1 ? " " : "", argc > 1 ? argv[1] : "");
	return 0;
}

static void p_close(struct asx_task *t, unsigned int flags)
{
	(void)flags;
	if (asx_task_is_wr(t))
		svc_test_log("close %s", asx_module_name(asx_task_module(t)));
}

static const struct asx_task_ops pass_ops = { .open = p_open, .close = p_close };

ASX_SVC_MODULE_FACTORY(make_pass)(struct asx_module **out, const char *name)
{
	return asx_module_create(out, name, &pass_ops, &pass_ops, NULL);
}

ASX_SVC_MODULE_FACTORY(make_broken)(struct asx_module **out, const char *name)
{
	(void)name;
	*out = NULL;
	return -ENOTRECOVERABLE;
}
