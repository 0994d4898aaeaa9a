// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: stream recv on a datagram socket (datagram reads say who sent).
 * With -DASX_MUSTFAIL_CONTROL the correct call is made instead and the
 * file compiles, which shows the rejection is the type check.
 */
#include <asx/sock.h>
#include <asx/pipe.h>

int main(void)
{
	struct asx_sock_dgram d = { { -1 } };
	struct asx_sock_stream s = { { -1 } };
	char buf[4];

	(void)d;
	(void)s;
#ifdef ASX_MUSTFAIL_CONTROL
	return (int)asx_sock_dgram_recv(&d, buf, sizeof(buf), NULL, NULL);
#else
	return (int)asx_sock_stream_recv(&d, buf, sizeof(buf), NULL);
#endif
}
