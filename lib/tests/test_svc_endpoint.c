// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_svc_endpoint.c - Streams reachable from outside: "stream NAME
 * listen ADDRESS [raw|framed] { ... }" (lib/src/svc/endpoint.c).
 *
 * Many clients at once through a Stream of pass Modules over the loop-back
 * tail (which echoes): every message comes back exactly once, to the
 * client that sent it, in its order; a connection reset in the middle of
 * a frame; the Stream removed while clients are connected (each sees end
 * of file, the UNIX path goes, nothing leaks under ASan); the endpoint
 * cannot change live; a port in use fails the transaction whole; parse
 * errors with their line and column.  An alarm() watchdog fails a test
 * that would hang.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/addr.h>
#include <asx/modules.h>
#include <asx/msg.h>
#include <asx/stream.h>
#include <asx/svc.h>

#include "svc/endpoint.h"
#include "svc/svc_impl.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CLIENTS 8
#define PER_CLIENT 500
#else
#define CLIENTS 32
#define PER_CLIENT 2000
#endif
#define WINDOW 32		/* requests a client has out at once */

static void watchdog(int sig)
{
	(void)sig;
	static const char m[] = "test_svc_endpoint: watchdog: a test hung\n";
	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

static struct asx_svc_repo *repo_with(const char *text)
{
	struct asx_svc_repo *repo;
	char err[512] = "";

	assert_int_equal(asx_svc_repo_create(&repo), 0);
	/* more pass Modules, for Streams of several */
	assert_int_equal(asx_svc_register_module(repo, "pass2", asx_mod_pass), 0);
	assert_int_equal(asx_svc_register_module(repo, "pass3", asx_mod_pass), 0);
	if (asx_svc_apply_text(repo, "t.conf", text, ASX_SVC_RELOAD, err, sizeof(err))) {
		fprintf(stderr, "apply: %s\n", err);
		fail();
	}
	return repo;
}

static struct asx__svc_ep *ep_of(struct asx_svc_repo *repo, const char *name)
{
	for (struct asx_svc *s = repo->svcs; s; s = s->next)
		if (!strcmp(s->name, name))
			return s->ep;
	return NULL;
}

/* The address a Stream listens on, from its asx_svc_list() line. */
static void bound_addr(struct asx_svc_repo *repo, const char *name, struct asx_addr *a)
{
	struct asx_svc_info in;
	char buf[ASX_ADDR_STRLEN], *p, *sp;

	assert_int_equal(asx_svc_find(repo, name, &in), 0);
	p = strstr(in.desc, "listening on ");
	assert_non_null(p);
	snprintf(buf, sizeof(buf), "%s", p + strlen("listening on "));
	sp = strchr(buf, ' ');
	assert_non_null(sp);
	*sp = '\0';
	assert_int_equal(asx_addr_parse(a, buf, NULL), 0);
}

static int dial(const struct asx_addr *a)
{
	int fd = socket(a->u.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, &a->u.sa, a->len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r <= 0)
			return -1;
		p = (char *)p + r;
		n -= (size_t)r;
	}
	return 0;
}

/* One framed DATA message of @len bytes. */
static void frame(unsigned char *out, const void *data, uint32_t len)
{
	uint32_t be = htonl(len);

	memcpy(out, &be, 4);
	out[4] = ASX_MSG_DATA;
	out[5] = 0;
	out[6] = out[7] = 0;
	memcpy(out + 8, data, len);
}

/* Nothing more to read within @ms? */
static bool quiet(int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	return poll(&pf, 1, ms) == 0;
}

struct client {
	const struct asx_addr *a;
	int id;
	long bad;		/* replies not the next one expected */
	long got;
};

/* Send PER_CLIENT numbered frames, WINDOW ahead of the replies; check each reply. */
static void *client_main(void *arg)
{
	struct client *c = arg;
	int fd = dial(c->a);
	long sent = 0;

	if (fd < 0) {
		c->bad = -1;
		return NULL;
	}
	while (c->got < PER_CLIENT) {
		while (sent < PER_CLIENT && sent - c->got < WINDOW) {
			unsigned char f[8 + 16];
			uint64_t v[2] = { (uint64_t)c->id, (uint64_t)sent };

			frame(f, v, sizeof(v));
			if (write_all(fd, f, sizeof(f)))
				goto out;
			sent++;
		}
		unsigned char f[8 + 16];
		uint64_t v[2];

		if (read_all(fd, f, sizeof(f)))
			goto out;
		memcpy(v, f + 8, sizeof(v));
		if (ntohl(*(uint32_t *)(void *)f) != 16 || f[4] != ASX_MSG_DATA ||
		    v[0] != (uint64_t)c->id || v[1] != (uint64_t)c->got)
			c->bad++;
		c->got++;
	}
	if (!quiet(fd, 200))	/* a duplicate would be here */
		c->bad++;
out:
	close(fd);
	return NULL;
}

static void test_many_clients_exactly_once(void **state)
{
	struct asx_svc_repo *repo = repo_with(
		"stream Echo listen \"127.0.0.1:0\" framed {\n"
		"  static pass\n  static pass2\n  static counter\n  static pass3\n}\n");
	struct client c[CLIENTS];
	pthread_t th[CLIENTS];
	struct asx__svc_ep_stats st;
	struct asx_addr a;
	struct timespec t0, t1;

	bound_addr(repo, "Echo", &a);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < CLIENTS; i++) {
		c[i] = (struct client){ .a = &a, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, client_main, &c[i]), 0);
	}
	for (int i = 0; i < CLIENTS; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(c[i].bad, 0);
		assert_int_equal(c[i].got, PER_CLIENT);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	asx__svc_ep_stats(ep_of(repo, "Echo"), &st);
	assert_int_equal(st.accepted, CLIENTS);
	assert_int_equal(st.down, (uint64_t)CLIENTS * PER_CLIENT);
	assert_int_equal(st.up, (uint64_t)CLIENTS * PER_CLIENT);
	assert_int_equal(st.broadcast, 0);
	assert_int_equal(st.dropped, 0);
	printf("# %d clients x %d messages echoed exactly once, in order, in %.2f s\n",
	       CLIENTS, PER_CLIENT,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	asx_svc_repo_destroy(repo);
}

/* raw bytes over a UNIX path: what is written comes back, byte for byte. */
static void test_raw_unix(void **state)
{
	char path[64], text[256];
	struct asx_svc_repo *repo;
	struct asx_addr a;
	char buf[100000], back[sizeof(buf)];
	int fd;

	snprintf(path, sizeof(path), "/tmp/asx-ep-%d.sock", (int)getpid());
	unlink(path);
	snprintf(text, sizeof(text), "stream Raw listen \"%s\" raw { static pass }\n", path);
	repo = repo_with(text);
	bound_addr(repo, "Raw", &a);
	fd = dial(&a);
	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7 + i / 251);
	assert_int_equal(write_all(fd, buf, sizeof(buf)), 0);
	assert_int_equal(read_all(fd, back, sizeof(back)), 0);
	assert_memory_equal(buf, back, sizeof(buf));
	assert_true(quiet(fd, 100));
	close(fd);
	asx_svc_repo_destroy(repo);
	assert_int_equal(access(path, F_OK), -1);	/* unlinked at stop */
}

/* A client resets its connection in the middle of a frame: nothing of it goes down. */
static void test_reset_mid_message(void **state)
{
	struct asx_svc_repo *repo = repo_with("stream R listen \"127.0.0.1:0\" framed { static pass }\n");
	struct asx__svc_ep *ep = ep_of(repo, "R");
	struct asx__svc_ep_stats st;
	struct linger lg = { 1, 0 };
	unsigned char f[8 + 1000], back[8 + 4];
	char payload[1000] = "first";
	struct asx_addr a;
	int fd, ok;

	bound_addr(repo, "R", &a);
	for (int round = 0; round < 20; round++) {
		fd = dial(&a);
		assert_true(fd >= 0);
		frame(f, payload, sizeof(payload));
		assert_int_equal(write_all(fd, f, 8 + 400), 0);	/* a header and 400 of 1000 */
		assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
		close(fd);	/* RST */
	}
	/* the endpoint goes on serving */
	ok = dial(&a);
	assert_true(ok >= 0);
	frame(f, "ping", 4);
	assert_int_equal(write_all(ok, f, 12), 0);
	assert_int_equal(read_all(ok, back, sizeof(back)), 0);
	assert_memory_equal(back + 8, "ping", 4);
	for (int i = 0; i < 500; i++) {	/* the resets are seen (up to 5 s) */
		asx__svc_ep_stats(ep, &st);
		if (st.open == 1)
			break;
		usleep(10000);
	}
	assert_int_equal(st.open, 1);
	assert_int_equal(st.accepted, 21);
	assert_int_equal(st.down, 1);
	assert_int_equal(st.up, 1);
	close(ok);
	asx_svc_repo_destroy(repo);
}

/* An untagged message (one the program puts at the head's read side... here:
 * one put by the program, which has no connection) goes to every connection. */
static void test_untagged_broadcast(void **state)
{
	struct asx_svc_repo *repo = repo_with("stream B listen \"127.0.0.1:0\" raw { static pass }\n");
	struct asx_stream *s;
	struct asx_addr a;
	struct asx_msg *m;
	int fd[3];
	char back[5];

	bound_addr(repo, "B", &a);
	for (int i = 0; i < 3; i++) {
		fd[i] = dial(&a);
		assert_true(fd[i] >= 0);
	}
	for (int i = 0; i < 500; i++) {
		struct asx__svc_ep_stats st;

		asx__svc_ep_stats(ep_of(repo, "B"), &st);
		if (st.open == 3)
			break;
		usleep(10000);
	}
	assert_int_equal(asx_svc_stream(repo, "B", &s), 0);
	m = asx_msg_alloc(5, ASX_MSG_DATA);
	memcpy(m->wr, "hello", 5);
	m->wr += 5;
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);	/* loops back, untagged */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(read_all(fd[i], back, 5), 0);
		assert_memory_equal(back, "hello", 5);
		close(fd[i]);
	}
	asx_svc_repo_destroy(repo);
}

/* The Stream removed while clients are connected (some mid-frame): each sees end of file. */
static void test_remove_while_connected(void **state)
{
	char path[64], text[256], err[256];
	struct asx_svc_repo *repo;
	struct asx_addr a;
	int fd[16];
	unsigned char f[8 + 16];

	snprintf(path, sizeof(path), "/tmp/asx-ep-rm-%d.sock", (int)getpid());
	unlink(path);
	snprintf(text, sizeof(text), "stream G listen \"%s\" framed { static pass static counter }\n", path);
	repo = repo_with(text);
	bound_addr(repo, "G", &a);
	for (int i = 0; i < 16; i++) {
		fd[i] = dial(&a);
		assert_true(fd[i] >= 0);
		frame(f, "0123456789abcdef", 16);
		if (i % 2)
			assert_int_equal(write_all(fd[i], f, 12), 0);	/* mid-frame */
	}
	assert_int_equal(asx_svc_apply_text(repo, "t.conf", "", ASX_SVC_RELOAD, err, sizeof(err)), 0);
	for (int i = 0; i < 16; i++) {
		char c;
		struct pollfd pf = { .fd = fd[i], .events = POLLIN };

		assert_int_equal(poll(&pf, 1, 10000), 1);
		assert_true(read(fd[i], &c, 1) <= 0);	/* end of file or reset */
		close(fd[i]);
	}
	assert_int_equal(access(path, F_OK), -1);
	assert_true(dial(&a) < 0);
	asx_svc_repo_destroy(repo);
}

static void expect_err(struct asx_svc_repo *repo, const char *text, const char *want)
{
	char err[512] = "";
	int r = asx_svc_apply_text(repo, "t.conf", text, ASX_SVC_RELOAD, err, sizeof(err));

	assert_true(r < 0);
	if (strcmp(err, want)) {
		fprintf(stderr, "got:  %s\nwant: %s\n", err, want);
		fail();
	}
}

static void test_errors(void **state)
{
	struct asx_svc_repo *repo = repo_with("stream L listen \"127.0.0.1:0\" { static pass }\n");
	struct asx_addr a;
	char text[256];
	struct asx_svc_info in;

	bound_addr(repo, "L", &a);
	expect_err(repo, "stream L listen {\n}\n",
		   "t.conf:1:17: expected the endpoint's address in quotes after 'listen' (\"HOST:PORT\", \"[HOST6]:PORT\", \"/PATH\" or \"@NAME\"), found '{'");
	expect_err(repo, "stream L listen 127.0.0.1:0 { }\n",
		   "t.conf:1:17: expected the endpoint's address in quotes after 'listen' (\"HOST:PORT\", \"[HOST6]:PORT\", \"/PATH\" or \"@NAME\"), found '127.0.0.1'");
	expect_err(repo, "stream L\n  listen \"1.2.3.4\" { }\n",
		   "t.conf:2:10: 'listen \"1.2.3.4\"': not an address to listen on: missing ':port' (expected host:port, [v6]:port, /path or @name)");
	expect_err(repo, "stream L listen \"127.0.0.1:0\" json { }\n",
		   "t.conf:1:31: expected '{' and the Stream's modules (or 'kernel' for a Stream over asx.ko), found 'json'");
	expect_err(repo, "stream L asc 1 listen \"127.0.0.1:0\" policy prio { }\n",
		   "t.conf:1:37: expected '{' and the Stream's modules (or 'kernel' for a Stream over asx.ko), found 'policy'");
	/* the endpoint cannot change while the Stream runs */
	expect_err(repo, "stream L listen \"127.0.0.1:0\" framed { static pass }\n",
		   "t.conf:1:1: stream 'L': its endpoint ('listen' and its framing) cannot change while it runs: remove the Stream in one reload and add it back in the next");
	/* a port in use: the whole transaction fails, what ran runs on */
	asx_addr_format(&a, text, sizeof(text));
	{
		char conf[512];

		snprintf(conf, sizeof(conf),
			 "stream L listen \"127.0.0.1:0\" { static pass }\nstream M listen \"%s\" { }\n", text);
		char err[512] = "";

		assert_true(asx_svc_apply_text(repo, "t.conf", conf, ASX_SVC_RELOAD, err,
					       sizeof(err)) == -EADDRINUSE);
		assert_non_null(strstr(err, "t.conf:2:1: stream 'M': its endpoint: cannot listen on"));
		assert_non_null(strstr(err, "Address already in use"));
	}
	assert_int_equal(asx_svc_find(repo, "M", &in), -ENOENT);
	assert_int_equal(asx_svc_find(repo, "L", &in), 0);
	asx_svc_repo_destroy(repo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_many_clients_exactly_once),
		cmocka_unit_test(test_raw_unix),
		cmocka_unit_test(test_reset_mid_message),
		cmocka_unit_test(test_untagged_broadcast),
		cmocka_unit_test(test_remove_while_connected),
		cmocka_unit_test(test_errors),
	};

	signal(SIGALRM, watchdog);
	alarm(300);
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
