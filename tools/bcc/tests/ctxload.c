// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ctxload.c - context switches with a known answer, for asx-ctxsw's test.
 *
 * Usage: ctxload SLEEPS YIELDS MESSAGES
 *
 * Prints "ready <pid>" and waits for a line on stdin (the tool attaches),
 * then, one after the other:
 *   - a pthread sleeps SLEEPS times (50 us each: one voluntary switch each)
 *     and reads its own switch counts with getrusage(RUSAGE_THREAD) before
 *     and after;
 *   - an ASC with one VP runs two user threads that yield YIELDS times each
 *     (YIELDS * 2 user-level switches on that VP, and a few to start and end
 *     them);
 *   - a producer and a consumer thread pass MESSAGES messages through an
 *     asx_msgq.
 * Then prints one JSON line: the sleeper's tid and switch counts, the VP's
 * tid, the yields and the messages.
 */
#include <asx/asc.h>
#include <asx/msg.h>
#include <asx/msgq.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long sleeps, yields, messages;
static long sleeper_tid, vp_tid, nvcsw, nivcsw;

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 50000 };
	struct rusage a, b;
	long i;

	(void)arg;
	sleeper_tid = gettid();
	getrusage(RUSAGE_THREAD, &a);
	for (i = 0; i < sleeps; i++)
		nanosleep(&ts, NULL);
	getrusage(RUSAGE_THREAD, &b);
	nvcsw = b.ru_nvcsw - a.ru_nvcsw;
	nivcsw = b.ru_nivcsw - a.ru_nivcsw;
	return NULL;
}

static int started;	/* yielders running, atomic */

static void *yielder(void *arg)
{
	long i;

	(void)arg;
	vp_tid = gettid();
	/*
	 * Both first: on a slow host (the VM) the first could otherwise make
	 * all its yields alone, to itself (no switch), before the second is
	 * spawned.  A yield with nobody else to run switches nothing.
	 */
	__atomic_add_fetch(&started, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&started, __ATOMIC_RELAXED) < 2)
		asx_asc_thread_yield();
	for (i = 0; i < yields; i++)
		asx_asc_thread_yield();
	return NULL;
}

static void *producer(void *arg)
{
	struct asx_msgq *q = arg;
	struct asx_msg *m;
	long i;

	for (i = 0; i < messages; i++) {
		m = asx_msg_alloc(64, ASX_MSG_DATA);
		if (!m || asx_msgq_enqueue(q, m, 0, NULL))
			exit(4);
	}
	return NULL;
}

static int run_asc(void)
{
	struct asx_prio_qos q = ASX_PRIO_QOS(5);
	struct asx_asc_thread *t1, *t2;
	struct asx_asc *asc;
	int r;

	r = asx_asc_create(&asc, &asx_asc_prio, NULL);
	if (!r)
		r = asx_asc_thread_spawn(asc, &q.qos, yielder, NULL, NULL, &t1);
	if (!r)
		r = asx_asc_thread_spawn(asc, &q.qos, yielder, NULL, NULL, &t2);
	if (r)
		return r;
	asx_asc_thread_join(t1, NULL);
	asx_asc_thread_join(t2, NULL);
	return asx_asc_destroy(asc);
}

int main(int argc, char **argv)
{
	struct asx_msgq *q;
	struct asx_msg *m;
	pthread_t t;
	char line[16];
	long i;
	int r;

	if (argc != 4) {
		fprintf(stderr, "usage: %s SLEEPS YIELDS MESSAGES\n", argv[0]);
		return 2;
	}
	sleeps = atol(argv[1]);
	yields = atol(argv[2]);
	messages = atol(argv[3]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 3;

	pthread_create(&t, NULL, sleeper, NULL);
	pthread_join(t, NULL);
	r = run_asc();
	if (r) {
		fprintf(stderr, "ctxload: asc: %s\n", strerror(-r));
		return 1;
	}
	if (asx_msgq_create(&q, 4096, 1024)) {
		fprintf(stderr, "ctxload: no msgq\n");
		return 1;
	}
	pthread_create(&t, NULL, producer, q);
	for (i = 0; i < messages; i++) {
		if (asx_msgq_dequeue(q, &m, 0, NULL))
			return 5;
		asx_msg_free(m);
	}
	pthread_join(t, NULL);
	asx_msgq_destroy(q);
	printf("{\"pid\": %d, \"sleeper_tid\": %ld, \"nvcsw\": %ld, \"nivcsw\": %ld, "
	       "\"sleeps\": %ld, \"vp_tid\": %ld, \"yields\": %ld, \"messages\": %ld}\n",
	       (int)getpid(), sleeper_tid, nvcsw, nivcsw, sleeps, vp_tid, yields, messages);
	return 0;
}
