// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ASC scheduler (Documentation/asc.rst): user threads of two priorities
 * over two VPs share an ASC-aware mutex and a semaphore hand-off; one
 * blocks in a wrapped read() that a plain pthread satisfies while the
 * others keep running; return values come back through join; an ASC
 * with threads refuses destruction.
 */
#include <stdint.h>
#include <pthread.h>
#include <asx/asc.h>
#include "outsider.h"

#define WORKERS 6
#define ROUNDS 2000

static struct asx_asc_mutex mu;
static struct asx_asc_sem ping, pong;
static long counter;
static int pipefd[2];

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		asx_asc_mutex_lock(&mu);
		counter++;
		asx_asc_mutex_unlock(&mu);
		if (i % 100 == 0)
			asx_asc_thread_yield();
	}
	return arg;
}

static void *pinger(void *arg)
{
	for (int i = 0; i < 500; i++) {
		asx_asc_sem_post(&ping);
		asx_asc_sem_wait(&pong);
	}
	return NULL;
}

static void *ponger(void *arg)
{
	for (int i = 0; i < 500; i++) {
		asx_asc_sem_wait(&ping);
		asx_asc_sem_post(&pong);
	}
	return NULL;
}

static void *reader(void *arg)
{
	char c = 0;

	/* blocks in the kernel without holding the VP */
	if (asx_asc_read(pipefd[0], &c, 1) != 1)
		return NULL;
	return (void *)(uintptr_t)c;
}

static void *late_writer(void *arg)
{
	struct asx_asc_thread *const *workers = arg;

	for (int i = 0; i < WORKERS; i++)		/* everyone else finished first */
		CHECK0(asx_asc_thread_join(workers[i], NULL));
	CHECK(write(pipefd[1], "R", 1) == 1);
	return NULL;
}

int main(void)
{
	struct asx_asc_opts attr = { .sz = sizeof(attr), .name = "outsider", .nvps = 2 };
	struct asx_prio_qos hi = ASX_PRIO_QOS(10), lo = ASX_PRIO_QOS(1);
	struct asx_asc_thread *w[WORKERS], *pi, *po, *rd;
	struct asx_asc *asc;
	pthread_t plain;
	void *ret;

	watchdog(60);
	CHECK(pipe(pipefd) == 0);
	asx_asc_mutex_init(&mu);
	asx_asc_sem_init(&ping, 0);
	asx_asc_sem_init(&pong, 0);
	CHECK0(asx_asc_create(&asc, &asx_asc_prio, &attr));
	CHECK0(asx_asc_thread_spawn(asc, &hi.qos, reader, NULL, NULL, &rd));
	for (size_t i = 0; i < WORKERS; i++)
		CHECK0(asx_asc_thread_spawn(asc, i % 2 ? &hi.qos : &lo.qos, worker, (void *)(i + 1),
					NULL, &w[i]));
	CHECK0(asx_asc_thread_spawn(asc, &lo.qos, pinger, NULL, NULL, &pi));
	CHECK0(asx_asc_thread_spawn(asc, &lo.qos, ponger, NULL, NULL, &po));
	CHECK(asx_asc_destroy(asc) == -EBUSY);

	/* the worker threads are joined by a plain pthread, which then wakes the reader */
	CHECK(pthread_create(&plain, NULL, late_writer, w) == 0);
	CHECK(pthread_join(plain, NULL) == 0);
	CHECK0(asx_asc_thread_join(rd, &ret));
	CHECK((uintptr_t)ret == 'R');
	CHECK0(asx_asc_thread_join(pi, NULL));
	CHECK0(asx_asc_thread_join(po, NULL));
	CHECK(counter == (long)WORKERS * ROUNDS);
	CHECK0(asx_asc_destroy(asc));
	close(pipefd[0]);
	close(pipefd[1]);
	puts("asc: ok");
	return 0;
}
