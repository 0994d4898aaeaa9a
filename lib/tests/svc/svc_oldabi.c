// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svc_oldabi.c - a service as a libasx with another service ABI would have
 * built it: its stamp says 99.  The loader must refuse it.
 */
#include <asx/svc.h>

extern const unsigned int make_old_asx_svc_abi;
const unsigned int make_old_asx_svc_abi = 99;

int make_old(const char *name, const struct asx_svc_ops **ops, void **priv);
int make_old(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	(void)ops;
	(void)priv;
	return -ENOSYS;		/* never called */
}
