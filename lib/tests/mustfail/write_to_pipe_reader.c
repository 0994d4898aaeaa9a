// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Must not compile: write to the read end of a pipe.
 * With -DASX_MUSTFAIL_CONTROL the correct call is made instead and the
 * file compiles, which shows the rejection is the type check.
 */
#include <asx/sock.h>
#include <asx/pipe.h>

int main(void)
{
	struct asx_pipe_reader r = { -1 };
	struct asx_pipe_writer w = { -1 };

	(void)r;
	(void)w;
#ifdef ASX_MUSTFAIL_CONTROL
	return (int)asx_pipe_write(&w, "x", 1, NULL);
#else
	return (int)asx_pipe_write(&r, "x", 1, NULL);
#endif
}
