// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: send on a connector (a factory: the stream it makes sends).
 * With -DASX_MUSTFAIL_CONTROL the correct call is made instead and the
 * file compiles, which shows the rejection is the type check.
 */
#include <asx/sock.h>
#include <asx/pipe.h>

int main(void)
{
	struct asx_sock_connector c;
	struct asx_sock_stream s = { { -1 } };

	asx_sock_connector_init(&c, NULL);
	(void)s;
#ifdef ASX_MUSTFAIL_CONTROL
	return (int)asx_sock_stream_send(&s, "x", 1, NULL);
#else
	return (int)asx_sock_stream_send(&c, "x", 1, NULL);
#endif
}
