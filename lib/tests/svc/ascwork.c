// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ascwork.c - a task-based Module for test_svc_policy and
 * tools/asxd/test-asxd-asc.sh: its open activates two service threads
 * (user threads of the Stream's ASC under "stream NAME asc N"), which pass
 * every message on.  Not installed.
 */
#include <errno.h>

#include <asx/stream.h>
#include <asx/svc.h>

static int work_svc(struct asx_task *t)
{
	struct asx_msg *m;
	int r;

	while ((r = asx_task_getq(t, &m, NULL)) == 0)
		if (asx_task_put_next(t, m, NULL))
			asx_msg_free_chain(m);
	return r == -ESHUTDOWN ? 0 : r;
}

static int work_open(struct asx_task *t, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return asx_task_activate(t, 2);
}

static const struct asx_task_ops work_ops = { .open = work_open, .svc = work_svc };

ASX_SVC_MODULE_FACTORY(asx_test_worker)(struct asx_module **out, const char *name)
{
	return asx_module_create(out, name, &work_ops, NULL, NULL);
}
