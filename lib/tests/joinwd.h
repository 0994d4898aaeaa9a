/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * joinwd.h - join a thread under a watchdog: a test whose thread does not
 * return (a deadlock) fails the run instead of hanging it.  The stuck
 * threads cannot be cleaned up, so the whole test program exits 1.
 */
#ifndef ASX_TESTS_JOINWD_H
#define ASX_TESTS_JOINWD_H

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* generous: the host is shared and may be slow */
#define JOINWD_S 60

static inline void join_or_die(pthread_t t, const char *what)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += JOINWD_S;
	if (pthread_timedjoin_np(t, NULL, &dl)) {
		fprintf(stderr, "watchdog: %s did not return in %d s (deadlock)\n", what,
			JOINWD_S);
		_exit(1);
	}
}

#endif /* ASX_TESTS_JOINWD_H */
