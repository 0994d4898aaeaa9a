// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * lockload.c - a lock workload with a known answer, for asx-lockstat's test.
 *
 * Usage: lockload KIND ROUNDS HOLD_US
 *        lockload bench ROUNDS 0
 *
 * KIND is mutex, rdlock, wrlock, asc_mutex, cond, sem or barrier. Two threads
 * (ASC user threads on one VP for asc_mutex) play ROUNDS rounds: A takes the
 * object and keeps it HOLD_US microseconds (sleeping, or spinning on the
 * clock where sleeping would let the other run: asc_mutex) while B waits on
 * it; then B gets it. The handshakes between A and B use POSIX semaphores,
 * which the tool does not see.
 *
 * It prints "ready <pid>" and waits for a line on stdin (so the tool can
 * attach first), then plays, then prints one JSON line of what it measured
 * itself: the object's address, the acquisitions it made, how long B waited
 * (sum and max, nanoseconds), and how long each acquisition was held.
 *
 * "bench" is the overhead benchmark: one thread locks and unlocks an
 * uncontended asx_mutex ROUNDS times and prints the nanoseconds per pair,
 * to be compared with and without asx-lockstat attached.
 */
#include <asx/asc.h>
#include <asx/sync.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *kind;
static long rounds;
static uint64_t hold_ns;

static struct asx_mutex mx = ASX_MUTEX_INITIALIZER;
static struct asx_rwlock rw = ASX_RWLOCK_INITIALIZER;
static struct asx_cond cv;
static struct asx_sem sm;
static struct asx_barrier br;
static struct asx_asc_mutex am;
static int cv_flag;

static sem_t a_has_it, b_done;

/* what the workload measured itself */
static uint64_t wait_sum, wait_max, hold_sum, hold_max;
static long acquisitions;

static uint64_t now(void)
{
	return asx_now_ns();
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000), (long)(ns % 1000000000) };

	while (nanosleep(&ts, &ts))
		;
}

static void note_wait(uint64_t ns)
{
	wait_sum += ns;
	if (ns > wait_max)
		wait_max = ns;
}

static void note_hold(uint64_t ns)
{
	__atomic_fetch_add(&hold_sum, ns, __ATOMIC_RELAXED);
	if (ns > hold_max)
		hold_max = ns;
	__atomic_fetch_add(&acquisitions, 1, __ATOMIC_RELAXED);
}

static void *thread_a(void *arg)
{
	uint64_t t;
	long i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		if (!strcmp(kind, "mutex")) {
			asx_mutex_lock(&mx);
			t = now();
			sem_post(&a_has_it);
			sleep_ns(hold_ns);
			note_hold(now() - t);
			asx_mutex_unlock(&mx);
		} else if (!strcmp(kind, "rdlock") || !strcmp(kind, "wrlock")) {
			/* A writes; B reads (rdlock) or writes (wrlock) */
			asx_rwlock_wrlock(&rw);
			t = now();
			sem_post(&a_has_it);
			sleep_ns(hold_ns);
			if (!strcmp(kind, "wrlock"))
				note_hold(now() - t);
			asx_rwlock_unlock(&rw);
		} else if (!strcmp(kind, "cond")) {
			sem_post(&a_has_it);
			sleep_ns(hold_ns);
			asx_mutex_lock(&mx);
			cv_flag = 1;
			asx_cond_signal(&cv);
			asx_mutex_unlock(&mx);
		} else if (!strcmp(kind, "sem")) {
			sem_post(&a_has_it);
			sleep_ns(hold_ns);
			asx_sem_post(&sm);
		} else if (!strcmp(kind, "barrier")) {
			sem_post(&a_has_it);
			sleep_ns(hold_ns);
			asx_barrier_wait(&br);
		}
		sem_wait(&b_done);
	}
	return NULL;
}

static void *thread_b(void *arg)
{
	uint64_t t0, t1;
	long i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		sem_wait(&a_has_it);
		t0 = now();
		if (!strcmp(kind, "mutex")) {
			asx_mutex_lock(&mx);
			t1 = now();
			note_wait(t1 - t0);
			note_hold(now() - t1);
			asx_mutex_unlock(&mx);
		} else if (!strcmp(kind, "rdlock")) {
			asx_rwlock_rdlock(&rw);
			t1 = now();
			note_wait(t1 - t0);
			note_hold(now() - t1);
			asx_rwlock_unlock(&rw);
		} else if (!strcmp(kind, "wrlock")) {
			asx_rwlock_wrlock(&rw);
			t1 = now();
			note_wait(t1 - t0);
			note_hold(now() - t1);
			asx_rwlock_unlock(&rw);
		} else if (!strcmp(kind, "cond")) {
			asx_mutex_lock(&mx);
			t0 = now();
			/* A may have signalled already (B came late): no wait then */
			while (!cv_flag) {
				asx_cond_wait(&cv, &mx);
				acquisitions++;	/* one wake-up */
			}
			note_wait(now() - t0);
			cv_flag = 0;
			asx_mutex_unlock(&mx);
		} else if (!strcmp(kind, "sem")) {
			asx_sem_wait(&sm);
			note_wait(now() - t0);
			acquisitions++;
		} else if (!strcmp(kind, "barrier")) {
			asx_barrier_wait(&br);
			note_wait(now() - t0);
			acquisitions += 2;	/* both arrivals */
		}
		sem_post(&b_done);
	}
	return NULL;
}

/* asc_mutex: two user threads on one VP; A spins (a sleep would run B) */
static void *asc_a(void *arg)
{
	uint64_t t, end;
	long i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		asx_asc_mutex_lock(&am);
		t = now();
		asx_asc_thread_yield();	/* B runs and blocks on the mutex */
		end = t + hold_ns;
		while (now() < end)
			;
		note_hold(now() - t);
		asx_asc_mutex_unlock(&am);
		asx_asc_thread_yield();	/* B takes it, drops it */
	}
	return NULL;
}

static void *asc_b(void *arg)
{
	uint64_t t0, t1;
	long i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		t0 = now();
		asx_asc_mutex_lock(&am);
		t1 = now();
		note_wait(t1 - t0);
		note_hold(now() - t1);
		asx_asc_mutex_unlock(&am);
		asx_asc_thread_yield();
	}
	return NULL;
}

static int run_asc(void)
{
	struct asx_prio_qos qa = ASX_PRIO_QOS(5), qb = ASX_PRIO_QOS(5);
	struct asx_asc_thread *a, *b;
	struct asx_asc *asc;
	int r;

	asx_asc_mutex_init(&am);
	r = asx_asc_create(&asc, &asx_asc_prio, NULL);
	if (r)
		return r;
	r = asx_asc_thread_spawn(asc, &qa.qos, asc_a, NULL, NULL, &a);
	if (!r)
		r = asx_asc_thread_spawn(asc, &qb.qos, asc_b, NULL, NULL, &b);
	if (r)
		return r;
	asx_asc_thread_join(a, NULL);
	asx_asc_thread_join(b, NULL);
	return asx_asc_destroy(asc);
}

static const void *object(void)
{
	if (!strcmp(kind, "mutex"))
		return &mx;
	if (!strcmp(kind, "rdlock") || !strcmp(kind, "wrlock"))
		return &rw;
	if (!strcmp(kind, "cond"))
		return &cv;
	if (!strcmp(kind, "sem"))
		return &sm;
	if (!strcmp(kind, "barrier"))
		return &br;
	return &am;
}

int main(int argc, char **argv)
{
	static const char *const kinds[] = { "mutex", "rdlock", "wrlock", "asc_mutex",
					     "cond", "sem", "barrier", "bench" };
	pthread_t a, b;
	char line[16];
	bool known = false;
	size_t i;
	int r = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s KIND ROUNDS HOLD_US\n", argv[0]);
		return 2;
	}
	kind = argv[1];
	rounds = atol(argv[2]);
	hold_ns = strtoull(argv[3], NULL, 10) * 1000;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		known |= !strcmp(kind, kinds[i]);
	if (!known || rounds <= 0) {
		fprintf(stderr, "%s: unknown kind '%s' or bad ROUNDS\n", argv[0], kind);
		return 2;
	}
	asx_cond_init(&cv);
	asx_sem_init(&sm, 0);
	asx_barrier_init(&br, 2);
	sem_init(&a_has_it, 0, 0);
	sem_init(&b_done, 0, 0);

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 3;
	if (!strcmp(kind, "bench")) {
		uint64_t t0 = now();

		for (i = 0; i < (size_t)rounds; i++) {
			asx_mutex_lock(&mx);
			asx_mutex_unlock(&mx);
		}
		printf("{\"kind\": \"bench\", \"rounds\": %ld, \"ns_per_pair\": %.1f}\n", rounds,
		       (double)(now() - t0) / (double)rounds);
		return 0;
	}
	if (!strcmp(kind, "asc_mutex")) {
		r = run_asc();
	} else {
		pthread_create(&a, NULL, thread_a, NULL);
		pthread_create(&b, NULL, thread_b, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	}
	if (r) {
		fprintf(stderr, "%s: %s\n", argv[0], strerror(-r));
		return 1;
	}
	printf("{\"kind\": \"%s\", \"object\": \"%p\", \"rounds\": %ld, \"acquisitions\": %ld, "
	       "\"wait_sum\": %" PRIu64 ", \"wait_max\": %" PRIu64 ", \"hold_sum\": %" PRIu64
	       ", \"hold_max\": %" PRIu64 "}\n", kind, object(), rounds, acquisitions,
	       wait_sum, wait_max, hold_sum, hold_max);
	return 0;
}
