/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * outsider.h - the only helper of the outsider programs: a check macro
 * and a watchdog.  These programs see libasx as a user does: installed
 * headers and `pkg-config --cflags --libs libasx`, nothing from lib/src.
 * They are compiled with -std=gnu11 and with -std=c17 -pedantic, with no
 * -D, so they use only ISO C and what POSIX-only headers (<pthread.h>,
 * <unistd.h>, <sys/socket.h>) declare in every mode.
 */
#ifndef OUTSIDER_H
#define OUTSIDER_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			exit(1);					\
		}							\
	} while (0)

/* 0 expected: print the negative errno a call returned. */
#define CHECK0(call)							\
	do {								\
		long long r_ = (long long)(call);			\
		if (r_ != 0) {						\
			fprintf(stderr, "%s:%d: %s = %lld\n",		\
				__FILE__, __LINE__, #call, r_);		\
			exit(1);					\
		}							\
	} while (0)

/* A hung program is killed (SIGALRM's default action) instead of hanging the check. */
static inline void watchdog(unsigned int seconds)
{
	alarm(seconds);
}

#endif
