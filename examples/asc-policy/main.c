// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * main.c - registers the rr2 policy, runs two foreground and two
 * background threads on one VP that log each turn they get, and checks
 * that rr2 scheduled them as it promises (rr2.h): each level round robin,
 * RR2_RATIO foreground turns between background ones.  Exits 0 when it
 * did, 1 (with the log) when not.
 *
 * Build against the installed library:
 *   cc -o asc-policy main.c rr2.c $(pkg-config --cflags --libs libasx)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <asx/asc.h>
#include <asx/asc_policy.h>

#include "rr2.h"

#define NLOG	400

static char turns[NLOG];
static unsigned int nturns;	/* one VP: no other thread runs meanwhile */
static int go;			/* set once every thread is in the ASC */

static void *worker(void *arg)
{
	char id = *(const char *)arg;

	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		asx_asc_thread_yield();
	while (nturns < NLOG) {
		turns[nturns++] = id;
		asx_asc_thread_yield();
	}
	return NULL;
}

static int fail(const char *what, unsigned int at)
{
	fprintf(stderr, "asc-policy: %s at turn %u: %.*s\n", what, at, NLOG, turns);
	return 1;
}

int main(void)
{
	static const char ids[] = "ABxy";	/* A, B foreground; x, y background */
	struct asx_asc_thread *t[4];
	struct asx_asc *asc;
	unsigned int fg = 0, last_bg = 0;
	char prev_fg = 0, prev_bg = 0;
	int r;

	r = rr2_register();
	if (r) {
		fprintf(stderr, "asc-policy: register: %s\n", strerror(-r));
		return 1;
	}
	if (rr2_register() != -EEXIST)
		return fail("a second registration was not refused", 0);
	r = asx_asc_create_by_name(&asc, RR2_NAME, NULL);
	if (r) {
		fprintf(stderr, "asc-policy: create: %s\n", strerror(-r));
		return 1;
	}
	if (strcmp(asx_asc_policy_name(asc), RR2_NAME))
		return fail("wrong policy name", 0);
	for (int i = 0; i < 4; i++) {
		struct rr2_qos q = RR2_QOS(i < 2 ? 0 : 1);

		r = asx_asc_thread_spawn(asc, &q.qos, worker, (void *)&ids[i], NULL, &t[i]);
		if (r) {
			fprintf(stderr, "asc-policy: spawn: %s\n", strerror(-r));
			return 1;
		}
	}
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		asx_asc_thread_join(t[i], NULL);
	if (asx_asc_policy_unregister(RR2_NAME) != -EBUSY)
		return fail("unregistered while an ASC uses it", 0);

	/* the schedule: from the first background turn on, RR2_RATIO
	 * foreground turns between background ones; each level alternates */
	for (unsigned int i = 0; i < NLOG; i++) {
		char c = turns[i];

		if (c == 'A' || c == 'B') {
			if (c == prev_fg)
				return fail("foreground not round robin", i);
			prev_fg = c;
			fg++;
		} else {
			if (c == prev_bg)
				return fail("background not round robin", i);
			if (prev_bg && fg != RR2_RATIO)
				return fail("background turn not after RR2_RATIO foreground ones", i);
			prev_bg = c;
			fg = 0;
			last_bg = i;
		}
	}
	if (!prev_bg || last_bg + RR2_RATIO + 1 < NLOG)
		return fail("background starved", last_bg);
	asx_asc_destroy(asc);
	if (asx_asc_policy_unregister(RR2_NAME))
		return fail("unregister refused with no ASC", 0);
	printf("asc-policy: rr2 scheduled %u turns as promised: %.24s...\n", NLOG, turns);
	return 0;
}
