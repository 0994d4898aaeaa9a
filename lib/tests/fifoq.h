/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * fifoq.h - the run queue of the tests' FIFO ASC policies (test_asc_policy,
 * lib/tests/svc/svc_policy.c): a singly linked FIFO through the threads'
 * policy slots, with its length for nrunnable (stored and read relaxed,
 * as <asx/asc_policy.h> asks).  Public headers only.
 */
#ifndef ASX_TESTS_FIFOQ_H
#define ASX_TESTS_FIFOQ_H

#include <stddef.h>

struct fifoq_link {
	struct fifoq_link *next;
};

struct fifoq {
	struct fifoq_link *head, *tail;
	unsigned int count;
};

static inline void fifoq_push(struct fifoq *q, struct fifoq_link *n)
{
	n->next = NULL;
	if (q->tail)
		q->tail->next = n;
	else
		q->head = n;
	q->tail = n;
	__atomic_store_n(&q->count, q->count + 1, __ATOMIC_RELAXED);
}

/* The first queued, taken off; NULL if none. */
static inline struct fifoq_link *fifoq_pop(struct fifoq *q)
{
	struct fifoq_link *n = q->head;

	if (!n)
		return NULL;
	q->head = n->next;
	if (!q->head)
		q->tail = NULL;
	__atomic_store_n(&q->count, q->count - 1, __ATOMIC_RELAXED);
	return n;
}

static inline unsigned int fifoq_count(const struct fifoq *q)
{
	return __atomic_load_n(&q->count, __ATOMIC_RELAXED);
}

#endif
