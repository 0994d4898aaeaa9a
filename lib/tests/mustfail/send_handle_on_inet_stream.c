// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: send_handle on an INET stream (only UNIX-domain lsock streams pass descriptors).
 * With -DASX_MUSTFAIL_CONTROL the correct call is made instead and the
 * file compiles, which shows the rejection is the type check.
 */
#include <asx/sock.h>
#include <asx/pipe.h>

int main(void)
{
	struct asx_sock_stream tcp = { { -1 } };
	struct asx_lsock_stream ls = { { { -1 } } };

	(void)tcp;
	(void)ls;
#ifdef ASX_MUSTFAIL_CONTROL
	return asx_lsock_stream_send_handle(&ls, 0, NULL);
#else
	return asx_lsock_stream_send_handle(&tcp, 0, NULL);
#endif
}
