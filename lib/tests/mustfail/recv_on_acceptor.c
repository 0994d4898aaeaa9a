// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: recv on an acceptor (a passive endpoint moves no data).
 * With -DASX_MUSTFAIL_CONTROL the correct call is made instead and the
 * file compiles, which shows the rejection is the type check.
 */
#include <asx/sock.h>
#include <asx/pipe.h>

int main(void)
{
	struct asx_sock_acceptor acc = { { -1 }, 0 };
	struct asx_sock_stream s = { { -1 } };
	char buf[4];

	(void)acc;
	(void)s;
#ifdef ASX_MUSTFAIL_CONTROL
	return (int)asx_sock_stream_recv(&s, buf, sizeof(buf), NULL);
#else
	return (int)asx_sock_stream_recv(&acc, buf, sizeof(buf), NULL);
#endif
}
