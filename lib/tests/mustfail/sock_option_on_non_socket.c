// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: a socket option through ASX_SOCK() on something that is not an IPC SAP socket.
 * With -DASX_MUSTFAIL_CONTROL the correct call is made instead and the
 * file compiles, which shows the rejection is the type check.
 */
#include <asx/sock.h>
#include <asx/pipe.h>

int main(void)
{
	struct asx_sock_stream s = { { -1 } };
	struct asx_pipe_writer w = { -1 };

	(void)s;
	(void)w;
#ifdef ASX_MUSTFAIL_CONTROL
	return asx_sock_set_sndbuf(ASX_SOCK(&s), 4096);
#else
	return asx_sock_set_sndbuf(ASX_SOCK(&w), 4096);
#endif
}
