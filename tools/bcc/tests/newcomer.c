// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * newcomer.c - a small libasx program written from Documentation/bcc.rst and
 * the tools' man pages alone, with answers it knows, for asx-lockstat,
 * asx-qlat and asx-ctxsw attached to it at once (test-newcomer.py).
 *
 * Usage: newcomer ROUNDS MESSAGES SLEEPS
 *
 *   contention  two threads and one asx_mutex: each round A takes it, B is
 *               let go and blocks in asx_mutex_lock() (A waits until B's
 *               /proc state is S, so B surely contends), then A lets go:
 *               2 x ROUNDS acquisitions, exactly ROUNDS contended
 *   queue       MESSAGES messages of 100 bytes through an asx_msgq from a
 *               producer to a slower consumer (high water 400 bytes, so the
 *               producer waits on a full queue; 2 ms sleeps every second
 *               message, so that the run spans several of a tool's intervals)
 *   sleeps      a thread sleeping SLEEPS times 2 ms, reading its own
 *               context switches with getrusage(RUSAGE_THREAD)
 *
 * Prints "ready PID", waits for a line on stdin (the tools attach first),
 * runs the three, prints one JSON line with what it knows.
 */
#include <asx/msg.h>
#include <asx/msgq.h>
#include <asx/sync.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MSG_BYTES	100

static long rounds, messages, sleeps;
static struct asx_mutex mx = ASX_MUTEX_INITIALIZER;
static sem_t go_b, b_done;
static atomic_int b_tid, b_locking;
static long acquisitions;

static void die(const char *what)
{
	fprintf(stderr, "newcomer: %s\n", what);
	exit(1);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* The state letter of thread @tid of this process ('S': sleeping). */
static char thread_state(int tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static void *contender(void *arg)
{
	atomic_store(&b_tid, (int)syscall(SYS_gettid));
	for (long i = 0; i < rounds; i++) {
		sem_wait(&go_b);
		atomic_store(&b_locking, 1);
		asx_mutex_lock(&mx);		/* A holds it: contended */
		acquisitions++;
		atomic_store(&b_locking, 0);
		asx_mutex_unlock(&mx);
		sem_post(&b_done);
	}
	return NULL;
}

static void contention(void)
{
	pthread_t t;

	sem_init(&go_b, 0, 0);
	sem_init(&b_done, 0, 0);
	if (pthread_create(&t, NULL, contender, NULL))
		die("pthread_create");
	while (!atomic_load(&b_tid))
		sleep_ms(1);
	for (long i = 0; i < rounds; i++) {
		asx_mutex_lock(&mx);
		acquisitions++;
		sem_post(&go_b);
		/* B has left sem_wait and sleeps: it is inside asx_mutex_lock */
		while (!atomic_load(&b_locking) || thread_state(atomic_load(&b_tid)) != 'S')
			sleep_ms(1);
		sleep_ms(2);
		asx_mutex_unlock(&mx);
		sem_wait(&b_done);
	}
	pthread_join(t, NULL);
}

static struct asx_msgq *q;
static long bytes_sent;

static void *producer(void *arg)
{
	for (long i = 0; i < messages; i++) {
		struct asx_msg *m = asx_msg_alloc(MSG_BYTES, ASX_MSG_DATA);
		unsigned char buf[MSG_BYTES];

		memset(buf, (int)i, MSG_BYTES);
		if (!m || asx_msg_append(m, buf, MSG_BYTES))
			die("asx_msg_alloc");
		if (asx_msgq_enqueue(q, m, 0, NULL))
			die("asx_msgq_enqueue");
		bytes_sent += MSG_BYTES;
	}
	return NULL;
}

static long queue_run(void)
{
	pthread_t t;
	long got = 0;

	if (asx_msgq_create(&q, 4 * MSG_BYTES, 2 * MSG_BYTES))
		die("asx_msgq_create");
	if (pthread_create(&t, NULL, producer, NULL))
		die("pthread_create");
	for (long i = 0; i < messages; i++) {
		struct asx_msg *m;

		if (asx_msgq_dequeue(q, &m, 0, NULL))
			die("asx_msgq_dequeue");
		if (asx_msg_length(m) != MSG_BYTES || m->rd[0] != (unsigned char)i)
			die("a message came out changed or out of order");
		got += (long)asx_msg_length(m);
		asx_msg_free_chain(m);
		if (i % 2 == 0)
			sleep_ms(2);		/* slower than the producer: 4 s or more */
	}
	pthread_join(t, NULL);
	return got;
}

static int sleeper_tid;
static struct rusage sleeper_ru;

static void *sleeper(void *arg)
{
	sleeper_tid = (int)syscall(SYS_gettid);
	for (long i = 0; i < sleeps; i++)
		sleep_ms(2);
	getrusage(RUSAGE_THREAD, &sleeper_ru);
	return NULL;
}

int main(int argc, char **argv)
{
	char line[16];
	pthread_t t;
	long got;

	if (argc != 4)
		die("usage: newcomer ROUNDS MESSAGES SLEEPS");
	rounds = atol(argv[1]);
	messages = atol(argv[2]);
	sleeps = atol(argv[3]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		die("no go");
	contention();
	got = queue_run();
	if (pthread_create(&t, NULL, sleeper, NULL))
		die("pthread_create");
	pthread_join(t, NULL);
	printf("{\"pid\": %d, \"mutex\": \"0x%lx\", \"acq\": %ld, \"cont\": %ld, "
	       "\"msgq\": \"0x%lx\", \"messages\": %ld, \"bytes\": %ld, \"bytes_sent\": %ld, "
	       "\"sleeper_tid\": %d, \"nvcsw\": %ld, \"nivcsw\": %ld, \"sleeps\": %ld}\n",
	       (int)getpid(), (unsigned long)&mx, acquisitions, rounds, (unsigned long)q, messages,
	       got, bytes_sent, sleeper_tid, sleeper_ru.ru_nvcsw, sleeper_ru.ru_nivcsw, sleeps);
	fflush(stdout);
	/* the queue stays alive until the tools have read their maps at exit */
	asx_msgq_destroy(q);
	return 0;
}
