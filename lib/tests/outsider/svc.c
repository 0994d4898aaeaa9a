// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The Service Configurator (Documentation/svc.rst): a service linked in,
 * registered by name, started from svc.conf text with parameters,
 * suspended, resumed, listed and removed; a bad text changes nothing and
 * says where it is wrong.
 */
#include <string.h>
#include <asx/svc.h>
#include "outsider.h"

static int inits, finis, suspended;
static char first_arg[32];

static int e_init(struct asx_svc *svc, int argc, char **argv)
{
	(void)svc;
	inits++;
	if (argc > 1)
		strncpy(first_arg, argv[1], sizeof(first_arg) - 1);
	return 0;
}

static void e_fini(struct asx_svc *svc)
{
	(void)svc;
	finis++;
}

static int e_suspend(struct asx_svc *svc)
{
	(void)svc;
	suspended = 1;
	return 0;
}

static int e_resume(struct asx_svc *svc)
{
	(void)svc;
	suspended = 0;
	return 0;
}

static void e_info(struct asx_svc *svc, char *buf, size_t len)
{
	snprintf(buf, len, "%s: echo on port %s", asx_svc_name(svc), first_arg);
}

static const ASX_OPTS(struct asx_svc_ops, echo_ops, .init = e_init, .fini = e_fini,
		      .suspend = e_suspend, .resume = e_resume, .info = e_info);

static int make_echo(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	*ops = &echo_ops;
	*priv = NULL;
	return 0;
}

int main(void)
{
	struct asx_svc_repo *repo;
	struct asx_svc_info info[2];
	char err[256];

	CHECK0(asx_svc_repo_create(&repo));
	CHECK0(asx_svc_register(repo, "Echo", make_echo));
	CHECK0(asx_svc_apply_text(repo, "inline.conf", "static Echo \"7777 -v\"\n", 0,
				  err, sizeof(err)));
	CHECK(inits == 1 && !strcmp(first_arg, "7777"));
	CHECK(asx_svc_list(repo, info, 2) == 1);
	CHECK(!strcmp(info[0].desc, "Echo: echo on port 7777"));
	CHECK(info[0].state == ASX_SVC_ACTIVE);
	CHECK0(asx_svc_apply_text(repo, "inline.conf", "suspend Echo", 0, err, sizeof(err)));
	CHECK(suspended);
	CHECK0(asx_svc_resume(repo, "Echo"));
	CHECK(!suspended);
	CHECK(asx_svc_apply_text(repo, "inline.conf", "static Echo\nremove\n", 0, err,
				 sizeof(err)) == -EINVAL);
	CHECK(!strcmp(err, "inline.conf:3:1: expected the name of a service, found the end of the file"));
	CHECK(inits == 1 && finis == 0);
	CHECK0(asx_svc_remove(repo, "Echo"));
	CHECK(finis == 1);
	CHECK(asx_svc_list(repo, NULL, 0) == 0);
	asx_svc_repo_destroy(repo);
	return 0;
}
