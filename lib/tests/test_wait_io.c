// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_wait_io.c - the Reactor and IPC SAP's blocking calls from ASC user
 * threads.
 *
 * As test_wait.c does for the locks and queues: one scenario per call, on
 * an ASC of exactly one VP (nvps = max_vps = 1) under the non-preemptive
 * PRIO policy.  User thread A blocks in the call; user thread B, on the
 * same VP, must run and release it.  Had the call blocked the VP, B could
 * never run: the watchdog (joinwd.h) then fails the program instead of
 * letting it hang.  The timed forms check that a deadline keeps its
 * meaning (A gets its timeout after the deadline, B ran meanwhile).
 *
 * Then the Reactor plus a pool of user threads on that one VP (the
 * dispatcher a user thread too), and a stress run mixing pool handlers on
 * two VPs, ASC user-thread clients and pthread clients: every client's
 * numbered messages come back once each and in order.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>

#include <asx/addr.h>
#include <asx/asc.h>
#include <asx/kstream.h>
#include <asx/pipe.h>
#include <asx/reactor.h>
#include <asx/sock.h>
#include "joinwd.h"
#include "threadcheck.h"

#include "onevp.h"

static struct {
	struct asx_sock_acceptor acc;
	struct asx_addr at;		/* the acceptor's address */
	struct asx_lsock_stream s0, s1;	/* a connected pair: A uses s0 */
	struct asx_pipe_reader pr;
	struct asx_pipe_writer pw;
	struct asx_reactor *r;
	int handled;
} S;

/* ---------------------------------------------------------------- fixtures */

static int setup_sock(void **state)
{
	(void)state;
	memset(&S, 0, sizeof(S));
	memset(&OV, 0, sizeof(OV));
	assert_int_equal(asx_addr_parse(&S.at, "127.0.0.1:0", NULL), 0);
	assert_int_equal(asx_sock_acceptor_open(&S.acc, &S.at, NULL), 0);
	assert_int_equal(asx_sock_local_addr(&S.acc.sock, &S.at), 0);
	assert_int_equal(asx_lsock_stream_pair(&S.s0, &S.s1), 0);
	assert_int_equal(asx_pipe_open(&S.pr, &S.pw), 0);
	return 0;
}

static int teardown_sock(void **state)
{
	(void)state;
	asx_sock_acceptor_close(&S.acc);
	asx_lsock_stream_close(&S.s0);
	asx_lsock_stream_close(&S.s1);
	asx_pipe_reader_close(&S.pr);
	asx_pipe_writer_close(&S.pw);
	if (S.r)
		assert_int_equal(asx_reactor_destroy(S.r), 0);
	S.r = NULL;
	return 0;
}

/* ---------------------------------------------------------------- IPC SAP */

static void acc_accept(void)
{
	struct asx_sock_stream s;

	CHECK(asx_sock_acceptor_accept(&S.acc, &s, NULL, NULL) == 0);
	CHECK(asx_sock_stream_recv_n(&s, &(char){ 0 }, 1, NULL, NULL) == 1);
	asx_sock_stream_close(&s);
}

/* B connects (a user thread's connect) and says one byte. */
static void b_connect(void)
{
	struct asx_sock_connector c;
	struct asx_sock_stream s;

	CHECK(asx_sock_connector_init(&c, NULL) == 0);
	CHECK(asx_sock_connector_connect(&c, &s, &S.at, NULL) == 0);
	CHECK(asx_sock_stream_send_n(&s, "x", 1, NULL, NULL) == 1);
	asx_sock_stream_close(&s);
}

static void test_accept(void **state)
{
	static const struct scenario s = { "asx_sock_acceptor_accept", NULL, acc_accept,
					   b_connect };

	(void)state;
	run_scenario(&s);
}

static void a_recv(void)
{
	char c = 0;

	CHECK(asx_sock_stream_recv(&S.s0.stream, &c, 1, NULL) == 1);
	CHECK(c == 'r');
}

static void b_send(void)
{
	CHECK(asx_sock_stream_send(&S.s1.stream, "r", 1, NULL) == 1);
}

static void test_recv(void **state)
{
	static const struct scenario s = { "asx_sock_stream_recv", NULL, a_recv, b_send };

	(void)state;
	run_scenario(&s);
}

static void a_recv_n(void)
{
	char buf[8];

	CHECK(asx_sock_stream_recv_n(&S.s0.stream, buf, 8, NULL, NULL) == 8);
	CHECK(!memcmp(buf, "abcdefgh", 8));
}

/* half, a few rounds (A parks again between), the rest */
static void b_send_halves(void)
{
	CHECK(asx_sock_stream_send_n(&S.s1.stream, "abcd", 4, NULL, NULL) == 4);
	for (int i = 0; i < 3; i++)
		asx_asc_thread_yield();
	CHECK(!LD(OV.a_done));
	CHECK(asx_sock_stream_send_n(&S.s1.stream, "efgh", 4, NULL, NULL) == 4);
}

static void test_recv_n(void **state)
{
	static const struct scenario s = { "asx_sock_stream_recv_n", NULL, a_recv_n,
					   b_send_halves };

	(void)state;
	run_scenario(&s);
}

#define BIG (4u << 20)	/* far beyond a socket's buffers */

static unsigned char *big_pattern(void)
{
	unsigned char *p = malloc(BIG);

	for (size_t i = 0; p && i < BIG; i++)
		p[i] = (unsigned char)(i * 7 + (i >> 12));
	return p;
}

/* A's send_n fills the socket and parks; B's recv_n drains it, parking in
 * turn: the two alternate on the one VP until all of it crossed. */
static void a_send_n(void)
{
	unsigned char *p = big_pattern();
	size_t done = 0;

	CHECK(p);
	CHECK(asx_sock_stream_send_n(&S.s0.stream, p, BIG, NULL, &done) == (ssize_t)BIG);
	CHECK(done == BIG);
	free(p);
}

static void b_recv_n(void)
{
	unsigned char *p = big_pattern(), *got = malloc(BIG);

	CHECK(p && got);
	CHECK(asx_sock_stream_recv_n(&S.s1.stream, got, BIG, NULL, NULL) == (ssize_t)BIG);
	CHECK(!memcmp(p, got, BIG));
	free(p);
	free(got);
}

static void test_send_n(void **state)
{
	static const struct scenario s = { "asx_sock_stream_send_n", NULL, a_send_n, b_recv_n };

	(void)state;
	/* small buffers: A surely fills them */
	assert_int_equal(asx_sock_set_sndbuf(&S.s0.stream.sock, 4096), 0);
	assert_int_equal(asx_sock_set_rcvbuf(&S.s1.stream.sock, 4096), 0);
	run_scenario(&s);
}

/*
 * A listener whose accept queue is full (backlog 1, filled by connects
 * made beforehand): the kernel drops a new SYN, so a connect to it waits
 * until room is made and the SYN is sent again (after about 1 s).
 */
#define FULL_PRE 4

static struct {
	struct asx_sock_acceptor acc;
	struct asx_addr at;
	int pre[FULL_PRE];
} F;

static void full_listener(void)
{
	ASX_OPTS(struct asx_sock_opts, o, .backlog = 1);

	assert_int_equal(asx_addr_parse(&F.at, "127.0.0.1:0", NULL), 0);
	assert_int_equal(asx_sock_acceptor_open(&F.acc, &F.at, &o), 0);
	assert_int_equal(asx_sock_local_addr(&F.acc.sock, &F.at), 0);
	for (int i = 0; i < FULL_PRE; i++) {
		F.pre[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		assert_true(F.pre[i] >= 0);
		(void)connect(F.pre[i], asx_addr_sockaddr(&F.at), F.at.len);
	}
	usleep(50000);	/* the handshakes that can complete did */
}

static void full_listener_close(void)
{
	for (int i = 0; i < FULL_PRE; i++)
		close(F.pre[i]);
	asx_sock_acceptor_close(&F.acc);
}

static void a_connect(void)
{
	struct asx_sock_connector c;
	struct asx_sock_stream s;

	CHECK(asx_sock_connector_init(&c, NULL) == 0);
	CHECK(asx_sock_connector_connect(&c, &s, &F.at, NULL) == 0);
	asx_sock_stream_close(&s);
}

/* B empties the accept queue until A got through (the SYNs come again). */
static void b_accept_until_a_done(void)
{
	while (!LD(OV.a_done)) {
		int fd;

		while ((fd = accept4(F.acc.sock.fd, NULL, NULL, SOCK_NONBLOCK)) >= 0)
			close(fd);
		asx_asc_thread_sleep(5 * MS);
	}
}

static void test_connect(void **state)
{
	static const struct scenario s = { "asx_sock_connector_connect", NULL, a_connect,
					   b_accept_until_a_done };

	(void)state;
	full_listener();
	run_scenario(&s);
	full_listener_close();
}

/* A connector's connect to @at until @dl; the connection is closed. */
static int connect_to(const struct asx_addr *at, const struct timespec *dl)
{
	struct asx_sock_connector c;
	struct asx_sock_stream s;
	int r;

	if (asx_sock_connector_init(&c, NULL))
		return -EIO;
	r = asx_sock_connector_connect(&c, &s, at, dl);
	if (!r)
		asx_sock_stream_close(&s);
	return r;
}

static int connect_timed(const struct timespec *dl)
{
	return connect_to(&F.at, dl);
}

static void test_connect_timed(void **state)
{
	(void)state;
	full_listener();
	run_timed(connect_timed, "asx_sock_connector_connect, timed");
	full_listener_close();
}

static int recv_timed(const struct timespec *dl)
{
	char c;

	return (int)asx_sock_stream_recv(&S.s0.stream, &c, 1, dl);
}

static int recv_n_timed(const struct timespec *dl)
{
	char c[2];

	return (int)asx_sock_stream_recv_n(&S.s0.stream, c, 2, dl, NULL);
}

static int accept_timed(const struct timespec *dl)
{
	struct asx_sock_stream s;

	return asx_sock_acceptor_accept(&S.acc, &s, NULL, dl);
}

static void test_recv_timed(void **state)
{
	(void)state;
	run_timed(recv_timed, "asx_sock_stream_recv, timed");
}

static void test_recv_n_timed(void **state)
{
	(void)state;
	run_timed(recv_n_timed, "asx_sock_stream_recv_n, timed");
}

static void test_accept_timed(void **state)
{
	(void)state;
	run_timed(accept_timed, "asx_sock_acceptor_accept, timed");
}

/* ---------------------------------------------------------------- wrapped calls */

/* asx_asc_connect: a blocking socket's connect to the full listener parks A. */
static void a_asc_connect(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	CHECK(asx_asc_connect(fd, asx_addr_sockaddr(&F.at), F.at.len) == 0);
	CHECK(!(fcntl(fd, F_GETFL) & O_NONBLOCK));	/* its own flags are back */
	close(fd);
}

static void test_asc_connect(void **state)
{
	static const struct scenario s = { "asx_asc_connect", NULL, a_asc_connect,
					   b_accept_until_a_done };

	(void)state;
	full_listener();
	run_scenario(&s);
	full_listener_close();
}

/* SO_SNDTIMEO is a blocking connect's deadline: EINPROGRESS after it. */
static int asc_connect_timed(const struct timespec *dl)
{
	uint64_t left = asx_timespec_ns(dl) - asx_now_ns();
	struct timeval tv = { .tv_sec = 0, .tv_usec = (suseconds_t)(left / 1000) + 1 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r, e;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		return -EIO;
	r = asx_asc_connect(fd, asx_addr_sockaddr(&F.at), F.at.len);
	e = errno;
	close(fd);
	return r == -1 && e == EINPROGRESS ? -ETIMEDOUT : -EIO;
}

static void test_asc_connect_timed(void **state)
{
	(void)state;
	full_listener();
	run_timed(asc_connect_timed, "asx_asc_connect, SO_SNDTIMEO");
	full_listener_close();
}

/* The result comes from SO_ERROR: a refused connect says so. */
static void *a_refused(void *arg)
{
	struct asx_addr to;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r, e;

	(void)arg;
	CHECK(fd >= 0);
	CHECK(asx_addr_parse(&to, "127.0.0.1:1", NULL) == 0);	/* nobody listens */
	r = asx_asc_connect(fd, asx_addr_sockaddr(&to), to.len);
	e = errno;
	CHECK(r == -1 && e == ECONNREFUSED);
	close(fd);
	ST(OV.a_done, 1);
	return NULL;
}

static void test_asc_connect_refused(void **state)
{
	(void)state;
	run_1vp(a_refused, b_spin_until_a_done, "asx_asc_connect, refused");
}

/* asx_asc_poll: A polls three descriptors; B makes the second one readable. */
static int PP[2];

static void a_asc_poll(void)
{
	struct pollfd p[3] = {
		{ .fd = S.pr.fd, .events = POLLIN },
		{ .fd = PP[0], .events = POLLIN },
		{ .fd = S.s0.stream.sock.fd, .events = POLLIN },
	};

	CHECK(asx_asc_poll(p, 3, -1) == 1);
	CHECK(p[0].revents == 0 && p[1].revents == POLLIN && p[2].revents == 0);
}

static void b_asc_poll(void)
{
	CHECK(write(PP[1], "p", 1) == 1);
}

static void test_asc_poll(void **state)
{
	static const struct scenario s = { "asx_asc_poll", NULL, a_asc_poll, b_asc_poll };

	(void)state;
	assert_int_equal(pipe2(PP, O_CLOEXEC), 0);
	run_scenario(&s);
	close(PP[0]);
	close(PP[1]);
}

static int ms_left(const struct timespec *dl)
{
	uint64_t now = asx_now_ns(), end = asx_timespec_ns(dl);

	return end > now ? (int)((end - now + 999999) / 1000000) : 0;
}

static int asc_poll_timed(const struct timespec *dl)
{
	struct pollfd p[2] = {
		{ .fd = S.pr.fd, .events = POLLIN },
		{ .fd = S.s0.stream.sock.fd, .events = POLLIN },
	};

	return asx_asc_poll(p, 2, ms_left(dl)) == 0 ? -ETIMEDOUT : -EIO;
}

static void test_asc_poll_timed(void **state)
{
	(void)state;
	run_timed(asc_poll_timed, "asx_asc_poll, timed");
}

/* asx_asc_nanosleep: the time passes, and B runs meanwhile (a_timed checks both). */
static int asc_nanosleep_timed(const struct timespec *dl)
{
	uint64_t left = asx_timespec_ns(dl) - asx_now_ns();
	struct timespec req = { .tv_sec = (time_t)(left / 1000000000ULL),
				.tv_nsec = (long)(left % 1000000000ULL) };

	return asx_asc_nanosleep(&req, NULL) == 0 ? -ETIMEDOUT : -EIO;
}

static void test_asc_nanosleep(void **state)
{
	(void)state;
	run_timed(asc_nanosleep_timed, "asx_asc_nanosleep");
}

/*
 * A UNIX-domain listener whose backlog is full: Linux's non-blocking
 * connect says EAGAIN, a blocking one waits until the listener accepts.
 * A user thread's connect (parked) and a timed one must wait too.
 */
#define UF_PRE 8

static struct {
	struct asx_sock_acceptor acc;
	struct asx_addr at;
	int pre[UF_PRE];
	int npre;
} U;

static void unix_full_listener(void)
{
	ASX_OPTS(struct asx_sock_opts, o, .backlog = 1);
	char name[64];

	snprintf(name, sizeof(name), "@asx-test-wait-io-%d", (int)getpid());
	assert_int_equal(asx_addr_parse(&U.at, name, NULL), 0);
	assert_int_equal(asx_sock_acceptor_open(&U.acc, &U.at, &o), 0);
	for (U.npre = 0; U.npre < UF_PRE; U.npre++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		assert_true(fd >= 0);
		if (connect(fd, asx_addr_sockaddr(&U.at), U.at.len)) {
			assert_int_equal(errno, EAGAIN);	/* full */
			close(fd);
			break;
		}
		U.pre[U.npre] = fd;
	}
	assert_true(U.npre < UF_PRE);
}

static void unix_full_listener_close(void)
{
	for (int i = 0; i < U.npre; i++)
		close(U.pre[i]);
	asx_sock_acceptor_close(&U.acc);
}

static void a_unix_connect(void)
{
	CHECK(connect_to(&U.at, NULL) == 0);
}

static void a_unix_asc_connect(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	CHECK(asx_asc_connect(fd, asx_addr_sockaddr(&U.at), U.at.len) == 0);
	close(fd);
}

/* B: once A waits, make room (one accept) until A got through. */
static void b_unix_accept_until_a_done(void)
{
	while (!LD(OV.a_done)) {
		int fd = accept4(U.acc.sock.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0)
			close(fd);
		asx_asc_thread_sleep(5 * MS);
	}
}

static void test_unix_connect_full(void **state)
{
	static const struct scenario s = { "asx_sock_connector_connect, UNIX backlog full",
					   NULL, a_unix_connect, b_unix_accept_until_a_done };

	(void)state;
	unix_full_listener();
	run_scenario(&s);
	unix_full_listener_close();
}

static void test_unix_asc_connect_full(void **state)
{
	static const struct scenario s = { "asx_asc_connect, UNIX backlog full",
					   NULL, a_unix_asc_connect, b_unix_accept_until_a_done };

	(void)state;
	unix_full_listener();
	run_scenario(&s);
	unix_full_listener_close();
}

static int unix_connect_timed(const struct timespec *dl)
{
	return connect_to(&U.at, dl);
}

static void test_unix_connect_full_timed(void **state)
{
	(void)state;
	unix_full_listener();
	run_timed(unix_connect_timed, "asx_sock_connector_connect, UNIX backlog full, timed");
	unix_full_listener_close();
}

/* A pthread's connect with a deadline waits out a full backlog the same way. */
static void *pthread_unix_connect(void *arg)
{
	struct timespec dl;

	(void)arg;
	CHECK(connect_to(&U.at, asx_deadline(&dl, 30000 * MS)) == 0);
	ST(OV.a_done, 1);
	return NULL;
}

static void test_unix_connect_full_pthread(void **state)
{
	pthread_t th;

	(void)state;
	unix_full_listener();
	assert_int_equal(pthread_create(&th, NULL, pthread_unix_connect, NULL), 0);
	usleep(20000);
	assert_false(LD(OV.a_done));
	while (!LD(OV.a_done)) {
		int fd = accept4(U.acc.sock.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd >= 0)
			close(fd);
		usleep(5000);
	}
	join_or_die(th, "a pthread's timed connect to a full UNIX backlog");
	assert_threads_ok();
	unix_full_listener_close();
}

/* A non-blocking socket keeps its meaning on a user thread: -EAGAIN at once. */
static void a_recv_nonblock(void)
{
	char c;

	CHECK(asx_sock_set_nonblock(&S.s0.stream.sock, true) == 0);
	CHECK(asx_sock_stream_recv(&S.s0.stream, &c, 1, NULL) == -EAGAIN);
	CHECK(asx_sock_set_nonblock(&S.s0.stream.sock, false) == 0);
	ST(OV.b_released, 1);	/* nothing to release */
}

static void nothing(void)
{
}

static void test_recv_nonblock(void **state)
{
	static const struct scenario s = { "asx_sock_stream_recv, O_NONBLOCK", NULL,
					   a_recv_nonblock, nothing };

	(void)state;
	sc = &s;
	run_1vp(a_thread, b_spin_until_a_done, s.what);
}

static void a_pipe_read(void)
{
	char buf[4];

	CHECK(asx_pipe_read_n(&S.pr, buf, 4, NULL, NULL) == 4);
	CHECK(!memcmp(buf, "pipe", 4));
}

static void b_pipe_write(void)
{
	CHECK(asx_pipe_write_n(&S.pw, "pipe", 4, NULL, NULL) == 4);
}

static void test_pipe_read(void **state)
{
	static const struct scenario s = { "asx_pipe_read", NULL, a_pipe_read, b_pipe_write };

	(void)state;
	run_scenario(&s);
}

/*
 * One pipe, many readers: a writer user thread and two reader user threads
 * on one VP, and a reader pthread.  A user thread woken because the pipe
 * became readable may find it emptied by another reader; its read must
 * then park again, not sleep in read(2) (that would stop the VP, and with
 * it the writer: a hang).  Every record comes out once, each reader's in
 * increasing order.
 */
#define PS_RECS 20000

static struct {
	struct asx_pipe_reader r;
	struct asx_pipe_writer w;
	uint32_t seen[PS_RECS];
	unsigned long got[3];
} PS;

static void ps_read_all(int who)
{
	uint64_t rec, last = 0;
	bool first = true;

	for (;;) {
		ssize_t n = asx_pipe_read_n(&PS.r, &rec, sizeof(rec), NULL, NULL);

		if (n == 0)
			break;
		CHECK(n == (ssize_t)sizeof(rec));
		if (n != (ssize_t)sizeof(rec) || rec >= PS_RECS)
			break;
		CHECK(first || rec > last);
		first = false;
		last = rec;
		__atomic_add_fetch(&PS.seen[rec], 1, __ATOMIC_RELAXED);
		PS.got[who]++;
		if (who < 2 && !(rec % 7))
			asx_asc_thread_yield();
	}
}

static void *ps_uread(void *arg)
{
	ps_read_all((int)(intptr_t)arg);
	return NULL;
}

static void *ps_writer(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < PS_RECS; i++) {
		CHECK(asx_pipe_write_n(&PS.w, &i, sizeof(i), NULL, NULL) == (ssize_t)sizeof(i));
		if (!(i % 64))
			asx_asc_thread_yield();
	}
	CHECK(asx_pipe_writer_close(&PS.w) == 0);
	return NULL;
}

static void *ps_pread(void *arg)
{
	(void)arg;
	ps_read_all(2);
	return NULL;
}

static void *ps_drive(void *arg)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[3];
	struct asx_asc *a;

	(void)arg;
	if (asx_asc_create(&a, &asx_asc_prio, &o))
		return (void *)1;
	if (asx_asc_thread_spawn(a, &q.qos, ps_uread, (void *)0, NULL, &t[0]) ||
	    asx_asc_thread_spawn(a, &q.qos, ps_uread, (void *)1, NULL, &t[1]) ||
	    asx_asc_thread_spawn(a, &q.qos, ps_writer, NULL, NULL, &t[2]))
		return (void *)2;
	for (int i = 0; i < 3; i++)
		asx_asc_thread_join(t[i], NULL);
	asx_asc_destroy(a);
	return NULL;
}

static void test_pipe_readers_stress(void **state)
{
	pthread_t drv, pr;
	unsigned long total = 0;

	(void)state;
	memset(&PS, 0, sizeof(PS));
	assert_int_equal(asx_pipe_open(&PS.r, &PS.w), 0);
	assert_int_equal(pthread_create(&pr, NULL, ps_pread, NULL), 0);
	assert_int_equal(pthread_create(&drv, NULL, ps_drive, NULL), 0);
	join_or_die(drv, "pipe readers on one VP and a pthread");
	join_or_die(pr, "the pthread reader");
	assert_threads_ok();
	for (int i = 0; i < PS_RECS; i++)
		assert_int_equal(PS.seen[i], 1);
	for (int i = 0; i < 3; i++)
		total += PS.got[i];
	assert_int_equal(total, PS_RECS);
	asx_pipe_reader_close(&PS.r);
}

/*
 * asx_kstream_getmsg on a user thread waits for the Stream to be readable
 * parked (the sentinel watches the descriptor), not in the ioctl.  Without
 * asx.ko on the host, a pipe stands in: A parks until B writes, then the
 * ioctl says -ENOTTY (a pipe is no Stream); selftests/asx/lib/kstream_test.c
 * does it on a real Stream in the VM.
 */
static struct asx_kstream *KS;

static void a_kstream_getmsg(void)
{
	char buf[8];
	struct asx_kstream_part d = { .buf = buf, .maxlen = sizeof(buf) };

	CHECK(asx_kstream_getmsg(KS, NULL, &d, NULL, NULL) == -ENOTTY);
}

static void test_kstream_getmsg_parks(void **state)
{
	static const struct scenario s = { "asx_kstream_getmsg", NULL, a_kstream_getmsg,
					   b_pipe_write };

	(void)state;
	assert_int_equal(asx_kstream_attach(&KS, S.pr.fd, false), 0);
	run_scenario(&s);
	asx_kstream_close(KS);
}

/* ---------------------------------------------------------------- Reactor */

static int on_input(struct asx_event_handler *eh, int fd)
{
	char c;

	(void)eh;
	CHECK(read(fd, &c, 1) == 1);
	ST(S.handled, LD(S.handled) + 1);
	return 0;
}

static const struct asx_event_handler_ops input_ops = { .handle_input = on_input };
static struct asx_event_handler input_eh;

static void reactor_with_pipe(void)
{
	assert_int_equal(asx_reactor_create(&S.r), 0);
	asx_event_handler_init(&input_eh, &input_ops);
	assert_int_equal(asx_reactor_register_fd(S.r, S.pr.fd, &input_eh, ASX_EV_READ), 0);
}

static void a_run_once(void)
{
	CHECK(asx_reactor_run_once(S.r, NULL) == 1);
	CHECK(LD(S.handled) == 1);
}

static void b_write_pipe(void)
{
	CHECK(write(S.pw.fd, "!", 1) == 1);
}

static void test_reactor_run_once(void **state)
{
	static const struct scenario s = { "asx_reactor_run_once", NULL, a_run_once, b_write_pipe };

	(void)state;
	reactor_with_pipe();
	run_scenario(&s);
}

static void a_run(void)
{
	CHECK(asx_reactor_run(S.r) == 0);
}

/*
 * B, a user thread on A's VP (the same pthread): it is not the dispatcher,
 * so its run_once is -EBUSY, not -EDEADLK; then a handler call, then the
 * end of A's loop.
 */
static void b_busy_then_end(void)
{
	struct timespec now = in_ms(0);

	CHECK(asx_reactor_run_once(S.r, &now) == -EBUSY);
	CHECK(write(S.pw.fd, "!", 1) == 1);
	while (LD(S.handled) < 1)
		asx_asc_thread_yield();
	asx_reactor_end_loop(S.r);
}

static void test_reactor_run(void **state)
{
	static const struct scenario s = { "asx_reactor_run", NULL, a_run, b_busy_then_end };

	(void)state;
	reactor_with_pipe();
	run_scenario(&s);
}

static int run_once_timed(const struct timespec *dl)
{
	int r = asx_reactor_run_once(S.r, dl);

	return r == 0 ? -ETIMEDOUT : r;
}

static void test_reactor_run_once_timed(void **state)
{
	(void)state;
	reactor_with_pipe();
	run_timed(run_once_timed, "asx_reactor_run_once, timed");
}

/* ---------------------------------------------------------------- pool */

/*
 * An echo handler: each readable event moves one 8-byte message back
 * with the _n calls (on a pool thread they park that thread only).  It
 * counts the calls made on a user thread other than the dispatcher.
 */
static struct asx_asc_thread *dispatcher;
static unsigned long pooled, echoed;

static int echo_input(struct asx_event_handler *eh, int fd)
{
	struct asx_sock_stream s = { .sock.fd = fd };
	uint64_t v;
	ssize_t n;

	(void)eh;
	n = asx_sock_stream_recv_n(&s, &v, sizeof(v), NULL, NULL);
	if (n != (ssize_t)sizeof(v))
		return -1;	/* the client closed: unregister */
	if (asx_asc_thread_self() && asx_asc_thread_self() != LD(dispatcher))
		__atomic_add_fetch(&pooled, 1, __ATOMIC_RELAXED);
	CHECK(asx_sock_stream_send_n(&s, &v, sizeof(v), NULL, NULL) == sizeof(v));
	__atomic_add_fetch(&echoed, 1, __ATOMIC_RELAXED);
	return 0;
}

static const struct asx_event_handler_ops echo_ops = { .handle_input = echo_input };

/* One client: @n numbered messages, each round trip checked in order. */
struct client {
	struct asx_lsock_stream s;
	unsigned int id, n;
	int fail;
};

static void *client_main(void *arg)
{
	struct client *c = arg;

	for (uint64_t i = 0; i < c->n; i++) {
		uint64_t v = (uint64_t)c->id << 32 | i, back = 0;

		if (asx_sock_stream_send_n(&c->s.stream, &v, sizeof(v), NULL, NULL) != sizeof(v) ||
		    asx_sock_stream_recv_n(&c->s.stream, &back, sizeof(back), NULL, NULL) !=
			    sizeof(back) || back != v) {
			c->fail = 1;	/* lost, duplicated or out of order */
			break;
		}
	}
	asx_sock_stream_close_writer(&c->s.stream);
	return NULL;
}

#define POOL_CLIENTS 8

static struct {
	struct asx_reactor *r;
	struct asx_asc *asc;
	struct asx_lsock_stream srv[2 * POOL_CLIENTS];
	struct asx_event_handler eh[2 * POOL_CLIENTS];
	struct client cl[2 * POOL_CLIENTS];
	unsigned int nuclients, npclients, nthreads;
	int rc;
} P;

/* The dispatcher, a user thread: start the pool, run, stop it. */
static void *pool_dispatcher(void *arg)
{
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	ASX_OPTS(struct asx_reactor_pool_opts, o, .nthreads = P.nthreads, .asc = P.asc,
		 .qos = &q.qos);

	(void)arg;
	ST(dispatcher, asx_asc_thread_self());
	P.rc = asx_reactor_pool_start(P.r, &o);
	if (P.rc)
		return NULL;
	CHECK(asx_reactor_pool_threads(P.r) == P.nthreads);
	P.rc = asx_reactor_run(P.r);
	CHECK(asx_reactor_pool_stop(P.r) == 0);
	return NULL;
}

/*
 * @nvps VPs; @nuclients clients on user threads of the same ASC and
 * @npclients on pthreads, @n messages each; @nthreads pool threads.
 */
static void run_pool(unsigned int nvps, unsigned int nuclients, unsigned int npclients,
		     unsigned int n, unsigned int nthreads)
{
	ASX_OPTS(struct asx_asc_opts, ao, .nvps = nvps, .max_vps = nvps,
		 .semantic = ASX_ASC_NONPREEMPTIVE);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *disp, *ut[2 * POOL_CLIENTS];
	pthread_t pt[2 * POOL_CLIENTS];
	unsigned int i, total = nuclients + npclients;

	memset(&P, 0, sizeof(P));
	pooled = echoed = 0;
	P.nthreads = nthreads;
	assert_true(total <= 2 * POOL_CLIENTS);
	assert_int_equal(asx_reactor_create(&P.r), 0);
	assert_int_equal(asx_asc_create(&P.asc, &asx_asc_prio, &ao), 0);
	for (i = 0; i < total; i++) {
		assert_int_equal(asx_lsock_stream_pair(&P.srv[i], &P.cl[i].s), 0);
		P.cl[i].id = i;
		P.cl[i].n = n;
		asx_event_handler_init(&P.eh[i], &echo_ops);
		assert_int_equal(asx_reactor_register_fd(P.r, P.srv[i].stream.sock.fd, &P.eh[i],
							 ASX_EV_READ), 0);
	}
	assert_int_equal(asx_asc_thread_spawn(P.asc, &q.qos, pool_dispatcher, NULL, NULL, &disp),
			 0);
	for (i = 0; i < nuclients; i++)
		assert_int_equal(asx_asc_thread_spawn(P.asc, &q.qos, client_main, &P.cl[i], NULL,
						      &ut[i]), 0);
	for (i = 0; i < npclients; i++)
		assert_int_equal(pthread_create(&pt[i], NULL, client_main, &P.cl[nuclients + i]),
				 0);
	for (i = 0; i < npclients; i++)
		join_or_die(pt[i], "a pthread client of the pool");
	for (i = 0; i < nuclients; i++)
		assert_int_equal(asx_asc_thread_join(ut[i], NULL), 0);
	/* every client saw its n echoes; the handlers unregister at EOF */
	while (asx_reactor_fd_count(P.r))
		usleep(1000);
	asx_reactor_end_loop(P.r);
	assert_int_equal(asx_asc_thread_join(disp, NULL), 0);
	assert_int_equal(P.rc, 0);
	assert_threads_ok();
	for (i = 0; i < total; i++) {
		assert_int_equal(P.cl[i].fail, 0);
		asx_lsock_stream_close(&P.srv[i]);
		asx_lsock_stream_close(&P.cl[i].s);
	}
	assert_int_equal(LD(echoed), (unsigned long)total * n);
	assert_true(LD(pooled) > 0);
	assert_int_equal(asx_reactor_destroy(P.r), 0);
	assert_int_equal(asx_asc_destroy(P.asc), 0);
}

struct pool_args {
	unsigned int nvps, nuclients, npclients, n, nthreads;
};

static void *pool_driver(void *arg)
{
	const struct pool_args *a = arg;

	run_pool(a->nvps, a->nuclients, a->npclients, a->n, a->nthreads);
	return NULL;
}

/* The whole run under the watchdog (asx_asc_thread_join cannot time out). */
static void run_pool_wd(const struct pool_args *a, const char *what)
{
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, pool_driver, (void *)a), 0);
	join_or_die(th, what);
}

/* All on one VP: dispatcher, 3 pool threads and 4 clients, user threads. */
static void test_pool_1vp(void **state)
{
	static const struct pool_args a = { 1, 4, 0, 200, 3 };

	(void)state;
	run_pool_wd(&a, "Reactor plus pool on one VP");
}

/* The stress mix: two VPs, user-thread and pthread clients. */
static void test_pool_mixed_stress(void **state)
{
	static const struct pool_args a = { 2, POOL_CLIENTS, POOL_CLIENTS, 2000, 4 };

	(void)state;
	run_pool_wd(&a, "Reactor plus pool, mixed clients");
}

/* A pool of pthreads behind a pthread dispatcher: the same contract. */
static void *pthread_dispatcher(void *arg)
{
	(void)arg;
	P.rc = asx_reactor_run(P.r);
	return NULL;
}

static void test_pool_pthreads(void **state)
{
	ASX_OPTS(struct asx_reactor_pool_opts, o, .nthreads = 3);
	struct asx_reactor *r;
	struct asx_lsock_stream a, b;
	struct asx_event_handler eh;
	pthread_t d;
	uint64_t v, back;

	(void)state;
	memset(&P, 0, sizeof(P));
	echoed = 0;
	assert_int_equal(asx_reactor_create(&r), 0);
	P.r = r;
	assert_int_equal(asx_reactor_pool_start(r, &o), 0);
	assert_int_equal(asx_reactor_pool_start(r, &o), -EBUSY);
	assert_int_equal(asx_reactor_destroy(r), -EBUSY);
	assert_int_equal(asx_lsock_stream_pair(&a, &b), 0);
	asx_event_handler_init(&eh, &echo_ops);
	assert_int_equal(asx_reactor_register_fd(r, a.stream.sock.fd, &eh, ASX_EV_READ), 0);
	assert_int_equal(pthread_create(&d, NULL, pthread_dispatcher, NULL), 0);
	for (v = 0; v < 500; v++) {
		assert_int_equal(asx_sock_stream_send_n(&b.stream, &v, 8, NULL, NULL), 8);
		assert_int_equal(asx_sock_stream_recv_n(&b.stream, &back, 8, NULL, NULL), 8);
		assert_int_equal(back, v);
	}
	asx_reactor_end_loop(r);
	join_or_die(d, "pthread dispatcher");
	assert_int_equal(asx_reactor_pool_stop(r), 0);
	assert_int_equal(asx_reactor_pool_stop(r), -ENOENT);
	assert_int_equal(asx_reactor_pool_threads(r), 0);
	assert_int_equal(LD(echoed), 500);
	asx_lsock_stream_close(&a);
	asx_lsock_stream_close(&b);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

/* @n round trips through @b, each within 10 s (a lost re-arm fails, not hangs). */
static void round_trips(struct asx_lsock_stream *b, uint64_t from, uint64_t n)
{
	for (uint64_t v = from; v < from + n; v++) {
		struct timespec dl;
		uint64_t back = 0;

		assert_int_equal(asx_sock_stream_send_n(&b->stream, &v, 8, NULL, NULL), 8);
		assert_int_equal(asx_sock_stream_recv_n(&b->stream, &back, 8,
							asx_deadline(&dl, 10000 * MS), NULL), 8);
		assert_int_equal(back, v);
	}
}

/*
 * The pool re-arms a descriptor's one-shot epoll entry after each
 * lending; a handler suspended and resumed meanwhile, and the dispatcher
 * alone once the pool stopped (the entries level-triggered again), and a
 * second pool, still see every event.
 */
static void test_pool_rearm(void **state)
{
	ASX_OPTS(struct asx_reactor_pool_opts, o, .nthreads = 2);
	struct asx_reactor *r;
	struct asx_lsock_stream a, b;
	struct asx_event_handler eh;
	pthread_t d;

	(void)state;
	memset(&P, 0, sizeof(P));
	echoed = 0;
	assert_int_equal(asx_reactor_create(&r), 0);
	P.r = r;
	assert_int_equal(asx_lsock_stream_pair(&a, &b), 0);
	asx_event_handler_init(&eh, &echo_ops);
	assert_int_equal(asx_reactor_register_fd(r, a.stream.sock.fd, &eh, ASX_EV_READ), 0);
	assert_int_equal(pthread_create(&d, NULL, pthread_dispatcher, NULL), 0);
	round_trips(&b, 0, 100);			/* the dispatcher alone */
	assert_int_equal(asx_reactor_pool_start(r, &o), 0);
	round_trips(&b, 100, 300);			/* lent, re-armed */
	assert_int_equal(asx_reactor_suspend_handler(r, &eh), 0);
	assert_int_equal(asx_reactor_resume_handler(r, &eh), 0);
	round_trips(&b, 400, 100);
	assert_int_equal(asx_reactor_pool_stop(r), 0);
	round_trips(&b, 500, 300);			/* level-triggered again */
	assert_int_equal(asx_reactor_pool_start(r, &o), 0);
	round_trips(&b, 800, 200);
	asx_reactor_end_loop(r);
	join_or_die(d, "pthread dispatcher");
	assert_int_equal(asx_reactor_pool_stop(r), 0);
	assert_int_equal(LD(echoed), 1000);
	asx_lsock_stream_close(&a);
	asx_lsock_stream_close(&b);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_accept, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_accept_timed, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_connect, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_connect_timed, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_recv, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_recv_timed, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_recv_n, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_recv_n_timed, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_send_n, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_recv_nonblock, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_asc_connect, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_asc_connect_timed, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_asc_connect_refused, setup_sock,
						teardown_sock),
		cmocka_unit_test_setup_teardown(test_asc_poll, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_asc_poll_timed, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_asc_nanosleep, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_unix_connect_full, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_unix_asc_connect_full, setup_sock,
						teardown_sock),
		cmocka_unit_test_setup_teardown(test_unix_connect_full_timed, setup_sock,
						teardown_sock),
		cmocka_unit_test_setup_teardown(test_unix_connect_full_pthread, setup_sock,
						teardown_sock),
		cmocka_unit_test_setup_teardown(test_pipe_read, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_kstream_getmsg_parks, setup_sock,
						teardown_sock),
		cmocka_unit_test(test_pipe_readers_stress),
		cmocka_unit_test_setup_teardown(test_reactor_run_once, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_reactor_run, setup_sock, teardown_sock),
		cmocka_unit_test_setup_teardown(test_reactor_run_once_timed, setup_sock,
						teardown_sock),
		cmocka_unit_test(test_pool_pthreads),
		cmocka_unit_test(test_pool_rearm),
		cmocka_unit_test(test_pool_1vp),
		cmocka_unit_test(test_pool_mixed_stress),
	};

	if (getenv("ASX_TEST_FILTER"))
		cmocka_set_test_filter(getenv("ASX_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
