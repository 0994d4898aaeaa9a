// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * slow.c - a service for tools/asxd/test-asxd.sh whose init takes as many
 * seconds as its first parameter says ("30": init sleeps 30 s), a
 * legitimately slow reload: asxd must keep answering and SIGTERM must
 * still end it within --stop-timeout.  Not installed.
 */
#include <stdlib.h>
#include <time.h>

#include <asx/svc.h>

static int slow_init(struct asx_svc *svc, int argc, char **argv)
{
	struct timespec ts = { .tv_sec = argc > 1 ? atoi(argv[1]) : 0 };

	(void)svc;
	while (nanosleep(&ts, &ts))
		;
	return 0;
}

static void slow_fini(struct asx_svc *svc)
{
	(void)svc;
}

static const ASX_OPTS(struct asx_svc_ops, slow_ops, .init = slow_init, .fini = slow_fini);

ASX_SVC_FACTORY(asx_test_slow)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	*ops = &slow_ops;
	*priv = NULL;
	return 0;
}
