// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: compare a library message's type with ASX_MSG_HIPRI,
 * a GETMSG flag of the kernel ABI (0x1, which is also ASX_MSG_PROTO).
 * <asx/stream.h> keeps the library's names apart from <linux/asx.h>, so
 * the kernel's flag is not declared here.  With -DASX_MUSTFAIL_CONTROL
 * the library's own test of a high-priority message is made instead.
 */
#include <asx/stream.h>

int main(void)
{
	struct asx_msg *m = asx_msg_alloc(0, ASX_MSG_PCPROTO);
	int hipri;

	if (!m)
		return 1;
#ifdef ASX_MUSTFAIL_CONTROL
	hipri = asx_msg_is_hipri(m);
#else
	hipri = m->type == ASX_MSG_HIPRI;
#endif
	asx_msg_free(m);
	return !hipri;
}
