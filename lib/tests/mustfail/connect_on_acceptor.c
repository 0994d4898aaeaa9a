// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: connect on an acceptor (passive and active roles are distinct).
 * With -DASX_MUSTFAIL_CONTROL the correct call is made instead and the
 * file compiles, which shows the rejection is the type check.
 */
#include <asx/sock.h>
#include <asx/pipe.h>

int main(void)
{
	struct asx_sock_acceptor acc = { { -1 }, 0 };
	struct asx_sock_connector c;
	struct asx_sock_stream s;
	struct asx_addr to;

	asx_sock_connector_init(&c, NULL);
	asx_addr_parse(&to, "127.0.0.1:9", NULL);
	(void)acc;
#ifdef ASX_MUSTFAIL_CONTROL
	return asx_sock_connector_connect(&c, &s, &to, NULL);
#else
	return asx_sock_connector_connect(&acc, &s, &to, NULL);
#endif
}
