// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Message queues (Documentation/messages.rst): producers and a consumer
 * through a small bounded queue; every message arrives once, each
 * producer's in order; deactivate ends the consumer with -ESHUTDOWN;
 * NOWAIT and deadlines.
 */
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <asx/msgq.h>
#include "outsider.h"

#define PRODUCERS 4
#define PER 2000

static struct asx_msgq *q;
static unsigned int next_seq[PRODUCERS];
static long received;

static void *producer(void *arg)
{
	unsigned int id = (unsigned int)(size_t)arg;

	for (unsigned int i = 0; i < PER; i++) {
		struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_DATA);
		unsigned int v[2] = { id, i };

		CHECK(m);
		CHECK0(asx_msg_append(m, v, sizeof(v)));
		CHECK0(asx_msgq_enqueue(q, m, 0, NULL));	/* waits while full */
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct asx_msg *m;
	int r;

	while ((r = asx_msgq_dequeue(q, &m, 0, NULL)) == 0) {
		unsigned int v[2];

		CHECK(asx_msg_length(m) == sizeof(v));
		memcpy(v, asx_msg_rd(m), sizeof(v));
		CHECK(v[0] < PRODUCERS);
		CHECK(v[1] == next_seq[v[0]]);			/* order kept, no duplicate */
		next_seq[v[0]]++;
		received++;
		asx_msg_free_chain(m);
	}
	CHECK(r == -ESHUTDOWN);
	return NULL;
}

int main(void)
{
	pthread_t p[PRODUCERS], c;
	struct asx_msg *m;
	struct timespec dl;

	watchdog(60);
	CHECK0(asx_msgq_create(&q, 256, 64));			/* small: flow control happens */
	CHECK(pthread_create(&c, NULL, consumer, NULL) == 0);
	for (size_t i = 0; i < PRODUCERS; i++)
		CHECK(pthread_create(&p[i], NULL, producer, (void *)i) == 0);
	for (size_t i = 0; i < PRODUCERS; i++)
		CHECK(pthread_join(p[i], NULL) == 0);
	while (!asx_msgq_is_empty(q))
		sched_yield();
	asx_msgq_deactivate(q);
	CHECK(pthread_join(c, NULL) == 0);
	CHECK(received == (long)PRODUCERS * PER);
	for (size_t i = 0; i < PRODUCERS; i++)
		CHECK(next_seq[i] == PER);

	/* an inactive queue refuses; reactivated, NOWAIT and a deadline on an empty queue */
	m = asx_msg_alloc(1, ASX_MSG_DATA);
	CHECK(m);
	CHECK(asx_msgq_enqueue(q, m, 0, NULL) == -ESHUTDOWN);
	asx_msg_free(m);					/* still ours on failure */
	asx_msgq_activate(q);
	CHECK(asx_msgq_dequeue(q, &m, ASX_MSGQ_NOWAIT, NULL) == -EWOULDBLOCK);
	CHECK(asx_msgq_dequeue(q, &m, 0, asx_deadline(&dl, 1000000)) == -ETIMEDOUT);
	asx_msgq_destroy(q);
	puts("msgq: ok");
	return 0;
}
