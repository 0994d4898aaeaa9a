// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svc_a.c - test services, built as lib/tests/svc/svc_a.so: a counter
 * service with every operation, one without suspend/resume, and factories
 * that fail in each way the loader must report.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/svc.h>

#include "svc_test.h"

struct counter {
	int argc;
	char args[128];
};

static int failing(const char *op, struct asx_svc *svc)
{
	const char *f = svc_test_fail();
	char want[96];

	snprintf(want, sizeof(want), "%s:%s", op, asx_svc_name(svc));
	return f && !strcmp(f, want);
}

static int c_init(struct asx_svc *svc, int argc, char **argv)
{
	struct counter *c = asx_svc_priv(svc);
	size_t n = 0;

	if (failing("init", svc))
		return -EADDRINUSE;
	c->argc = argc;
	for (int i = 1; i < argc && n < sizeof(c->args) - 1; i++)
		n += (size_t)snprintf(c->args + n, sizeof(c->args) - n, "%s[%s]", i > 1 ? " " : "",
				      argv[i]);
	svc_test_log("init %s %s", argv[0], c->args);
	return 0;
}

static void c_fini(struct asx_svc *svc)
{
	svc_test_log("fini %s", asx_svc_name(svc));
	free(asx_svc_priv(svc));
}

static int c_suspend(struct asx_svc *svc)
{
	if (failing("suspend", svc))
		return -EBUSY;
	svc_test_log("suspend %s", asx_svc_name(svc));
	return 0;
}

static int c_resume(struct asx_svc *svc)
{
	if (failing("resume", svc))
		return -EBUSY;
	svc_test_log("resume %s", asx_svc_name(svc));
	return 0;
}

static void c_info(struct asx_svc *svc, char *buf, size_t len)
{
	const struct counter *c = asx_svc_priv(svc);

	snprintf(buf, len, "counter with %d words: %s", c->argc - 1, c->args);
}

static const ASX_OPTS(struct asx_svc_ops, counter_ops, .init = c_init, .fini = c_fini,
		      .suspend = c_suspend, .resume = c_resume, .info = c_info);

static const ASX_OPTS(struct asx_svc_ops, plain_ops, .init = c_init, .fini = c_fini);

ASX_SVC_FACTORY(make_counter)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	*priv = calloc(1, sizeof(struct counter));
	if (!*priv)
		return -ENOMEM;
	*ops = &counter_ops;
	return 0;
}

ASX_SVC_FACTORY(make_plain)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	*priv = calloc(1, sizeof(struct counter));
	if (!*priv)
		return -ENOMEM;
	*ops = &plain_ops;
	return 0;
}

ASX_SVC_FACTORY(make_refusing)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	(void)ops;
	(void)priv;
	return -EPERM;
}

static const ASX_OPTS(struct asx_svc_ops, no_fini_ops, .init = c_init);

ASX_SVC_FACTORY(make_no_fini)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	*priv = NULL;
	*ops = &no_fini_ops;
	return 0;
}

/* a table declared without ASX_OPTS(): no size */
static const struct asx_svc_ops unsized_ops = { .init = c_init, .fini = c_fini };

ASX_SVC_FACTORY(make_unsized)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	*priv = NULL;
	*ops = &unsized_ops;
	return 0;
}

/* a factory defined without ASX_SVC_FACTORY: no ABI stamp */
int make_unstamped(const char *name, const struct asx_svc_ops **ops, void **priv);
int make_unstamped(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	return make_counter(name, ops, priv);
}
