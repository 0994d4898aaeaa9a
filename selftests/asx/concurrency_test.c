// SPDX-License-Identifier: GPL-2.0
/*
 * concurrency_test.c - 8 writers x 10,000 messages while another thread
 * pushes and pops; closing a pipe end under blocked readers and writers;
 * closing with messages in flight leaks nothing.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "asx_util.h"
#include "asx_harness.h"

#define NWRITERS	8
#define NMSGS		10000

struct rec {
	__u32 writer;
	__u32 seq;
	__u64 check;
};

struct ctx {
	int fd;
	int id;
	volatile int stop;
	long pushes;
	long errors;
};

static void *writer_fn(void *p)
{
	struct ctx *c = p;
	struct rec r;
	__u32 i;

	for (i = 0; i < NMSGS; i++) {
		r.writer = c->id;
		r.seq = i;
		r.check = (__u64)c->id * 1000003ULL + i;
		if (write(c->fd, &r, sizeof(r)) != sizeof(r))
			c->errors++;
	}
	return NULL;
}

static void *pusher_fn(void *p)
{
	static const char *const mods[] = { "pass", "count", "pass", "pass" };
	struct ctx *c = p;
	unsigned int i = 0;

	while (!c->stop) {
		if (asx_push(c->fd, mods[i % 4]) == 0)
			c->pushes++;
		else if (errno != ENOSR)
			c->errors++;
		if (i % 3 == 2) {
			while (asx_pop(c->fd, NULL) == 0)
				;
		} else if (asx_pop(c->fd, NULL) && errno != EINVAL) {
			c->errors++;
		}
		i++;
	}
	while (asx_pop(c->fd, NULL) == 0)
		;
	return NULL;
}

TEST(writers_readers_push_pop)
{
	static __u32 next[NWRITERS];
	struct ctx w[NWRITERS], pc;
	pthread_t wt[NWRITERS], pt;
	long total = 0, bad = 0;
	struct rec r;
	int fd, i;

	fd = asx_open(0);
	ASSERT_GE(fd, 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_opt(fd, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	memset(&pc, 0, sizeof(pc));
	pc.fd = fd;
	ASSERT_EQ(pthread_create(&pt, NULL, pusher_fn, &pc), 0);
	for (i = 0; i < NWRITERS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].fd = fd;
		w[i].id = i;
		ASSERT_EQ(pthread_create(&wt[i], NULL, writer_fn, &w[i]), 0);
	}
	while (total < (long)NWRITERS * NMSGS) {
		ssize_t n = read(fd, &r, sizeof(r));

		if (n != sizeof(r) || r.writer >= NWRITERS ||
		    r.check != (__u64)r.writer * 1000003ULL + r.seq) {
			bad++;
			if (n <= 0)
				break;
			continue;
		}
		if (r.seq != next[r.writer])
			bad++;
		next[r.writer] = r.seq + 1;
		total++;
	}
	pc.stop = 1;
	for (i = 0; i < NWRITERS; i++) {
		pthread_join(wt[i], NULL);
		EXPECT_EQ(w[i].errors, 0) TH_LOG("writer %d", i);
	}
	pthread_join(pt, NULL);
	EXPECT_EQ(bad, 0) TH_LOG("lost, duplicated, reordered or corrupt messages");
	EXPECT_EQ(total, (long)NWRITERS * NMSGS);
	for (i = 0; i < NWRITERS; i++) {
		EXPECT_EQ(next[i], NMSGS) TH_LOG("writer %d", i);
	}
	EXPECT_EQ(pc.errors, 0);
	EXPECT_GT(pc.pushes, 0);
	TH_LOG("%ld messages, %ld pushes during the run", total, pc.pushes);
	close(fd);
}

struct blocked {
	int fd;
	ssize_t ret;
	int err;
	int write;
};

static void *blocked_fn(void *p)
{
	struct blocked *b = p;
	char buf[4096];

	memset(buf, 0, sizeof(buf));
	for (;;) {
		b->ret = b->write ? write(b->fd, buf, sizeof(buf)) : read(b->fd, buf, sizeof(buf));
		b->err = errno;
		if (!b->write || b->ret <= 0)
			return NULL;
	}
}

TEST(close_under_blocked_reader_and_writer)
{
	struct blocked r = { .write = 0 }, w = { .write = 1 };
	pthread_t rt, wt;
	int a, b;

	signal(SIGPIPE, SIG_IGN);
	a = asx_open(0);
	ASSERT_GE(a, 0);
	b = asx_pipe(a, 0);
	ASSERT_GE(b, 0) TH_LOG("%s", strerror(errno));
	r.fd = a;
	w.fd = a;
	ASSERT_EQ(pthread_create(&rt, NULL, blocked_fn, &r), 0);
	ASSERT_EQ(pthread_create(&wt, NULL, blocked_fn, &w), 0);
	asx_msleep(500);	/* the reader waits for data, the writer for room at b */
	ASSERT_EQ(close(b), 0);
	pthread_join(rt, NULL);
	pthread_join(wt, NULL);
	EXPECT_EQ(r.ret, 0) TH_LOG("the reader sees end of file (%s)", strerror(r.err));
	EXPECT_EQ(w.ret, -1) TH_LOG("the writer fails");
	EXPECT_EQ(w.err, EPIPE);
	close(a);
}

static long settle(const char *what, long want)
{
	long v = -1;
	int i;

	for (i = 0; i < 50; i++) {
		v = asx_objects(what);
		if (v == want)
			break;
		asx_msleep(20);
	}
	return v;
}

TEST(close_with_messages_in_flight)
{
	long msgs0, dblks0, streams0, mods0;
	char buf[3000];
	pid_t pid;
	int st, i;

	ASSERT_EQ(asx_quiesce(), 0) TH_LOG("earlier Streams never freed");
	msgs0 = asx_objects("msgs");
	dblks0 = asx_objects("dblks");
	streams0 = asx_objects("streams");
	mods0 = asx_objects("modules");
	ASSERT_GE(msgs0, 0) TH_LOG("%s: %s", ASX_OBJECTS, strerror(errno));

	/* A child leaves held, queued and half-read messages, blocked threads, and dies. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct blocked w = { .write = 1 };
		pthread_t t;
		int fd = asx_open(0), p1 = asx_open(0), p2;

		memset(buf, 'm', sizeof(buf));
		asx_push(fd, "count");
		asx_push(fd, "hold");
		asx_push(fd, "frame");
		for (i = 0; i < 10; i++)
			if (write(fd, buf, sizeof(buf)) < 0)
				_exit(2);
		p2 = asx_pipe(p1, 0);
		asx_push(p2, "csum");
		for (i = 0; i < 10; i++)
			if (write(p1, buf, sizeof(buf)) < 0)
				_exit(3);
		w.fd = fd;
		pthread_create(&t, NULL, blocked_fn, &w);
		asx_msleep(200);
		kill(getpid(), SIGKILL);
		_exit(4);
	}
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) TH_LOG("child status %#x", st);
	EXPECT_EQ(asx_quiesce(), 0);
	EXPECT_EQ(settle("streams", streams0), streams0);
	EXPECT_EQ(settle("modules", mods0), mods0);
	EXPECT_EQ(settle("msgs", msgs0), msgs0);
	EXPECT_EQ(settle("dblks", dblks0), dblks0);
}

TEST_HARNESS_MAIN
