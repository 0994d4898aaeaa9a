// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: accept on a datagram socket (connectionless: nothing to accept).
 * With -DASX_MUSTFAIL_CONTROL the correct call is made instead and the
 * file compiles, which shows the rejection is the type check.
 */
#include <asx/sock.h>
#include <asx/pipe.h>

int main(void)
{
	struct asx_sock_acceptor acc = { { -1 }, 0 };
	struct asx_sock_dgram d = { { -1 } };
	struct asx_sock_stream s;

	(void)acc;
	(void)d;
#ifdef ASX_MUSTFAIL_CONTROL
	return asx_sock_acceptor_accept(&acc, &s, NULL, NULL);
#else
	return asx_sock_acceptor_accept(&d, &s, NULL, NULL);
#endif
}
