// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include <asx/common.h>

#define ASX_STR_(x) #x
#define ASX_STR(x) ASX_STR_(x)

const char *asx_version(void)
{
	return ASX_STR(ASX_LIB_VERSION_MAJOR) "." ASX_STR(ASX_LIB_VERSION_MINOR) "."
	       ASX_STR(ASX_LIB_VERSION_PATCH);
}
