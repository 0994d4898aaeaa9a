// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_svc_react.c - reactive services (asx_svc_reactor()): a service on
 * the repository's Reactor receives events; suspended with connections
 * open, the data sent meanwhile is all served, in order, on resume; and
 * under churn (clients connecting, sending and resetting while the service
 * is suspended, resumed, removed and reloaded) no callback runs during or
 * after its fini, and every instance is finalised (ASan: nothing leaks).
 *
 * The service, R, is an echo server on an Acceptor (ASX_SVC_REACTIVE on
 * its own Reactor) listening on 127.0.0.1 port 0; init publishes the port.
 * Its callbacks count themselves per instance, and an instance's memory is
 * kept (a graveyard) after fini so that a late callback is counted, not a
 * use after free.  Every wait has a deadline and the process an alarm.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>

#include <asx/acceptor.h>
#include <asx/reactor.h>
#include <asx/svc.h>

#include "joinwd.h"

/* ------------------------------------------------------------ the service */

struct inst {
	struct asx_acceptor *acc;
	int port;
	int in_cb;			/* callbacks running now (dispatch thread only) */
	bool fini_done;
	struct inst *grave;		/* the graveyard's link */
};

static struct {
	pthread_mutex_t lock;
	struct inst *graves;
	int live;			/* made, not yet finalised */
	int port;			/* the newest instance's */
	unsigned long callbacks, late, busy_fini;
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void cb_enter(struct inst *in)
{
	__atomic_add_fetch(&g.callbacks, 1, __ATOMIC_RELAXED);
	if (__atomic_load_n(&in->fini_done, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&g.late, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&in->in_cb, 1, __ATOMIC_ACQ_REL);
}

static void cb_leave(struct inst *in)
{
	__atomic_sub_fetch(&in->in_cb, 1, __ATOMIC_ACQ_REL);
}

static int conn_input(struct asx_svc_handler *h)
{
	struct inst *in = h->ctx;
	char buf[4096];
	ssize_t n;
	int r = 0;

	cb_enter(in);
	n = asx_sock_stream_recv(asx_svc_handler_stream(h), buf, sizeof(buf), NULL);
	if (n <= 0 || asx_sock_stream_send_n(asx_svc_handler_stream(h), buf, (size_t)n, NULL,
					     NULL) != n)
		r = -1;
	cb_leave(in);
	return r;
}

static void conn_close(struct asx_svc_handler *h, int why)
{
	(void)why;
	cb_enter(h->ctx);
	cb_leave(h->ctx);
}

static void conn_release(struct asx_svc_handler *h)
{
	free(h);
}

static const struct asx_svc_handler_ops conn_ops = {
	.input = conn_input, .close = conn_close, .release = conn_release,
};

static struct asx_svc_handler *conn_make(void *arg)
{
	struct asx_svc_handler *h = malloc(sizeof(*h));

	cb_enter(arg);
	if (h)
		asx_svc_handler_init(h, &conn_ops, arg);
	cb_leave(arg);
	return h;
}

static int r_init(struct asx_svc *svc, int argc, char **argv)
{
	struct inst *in = asx_svc_priv(svc);
	ASX_OPTS(struct asx_acceptor_opts, o, .strategy.kind = ASX_SVC_REACTIVE, .make = conn_make,
		 .arg = in);
	struct asx_addr a, got;
	int r;

	(void)argc;
	(void)argv;
	r = asx_svc_reactor(svc, &o.strategy.reactor);
	if (r)
		return r;
	r = asx_addr_parse(&a, "127.0.0.1:0", NULL);
	if (!r)
		r = asx_acceptor_create(&in->acc, &a, &o);
	if (!r)
		r = asx_acceptor_local_addr(in->acc, &got);
	if (r)
		return r;
	in->port = ntohs(got.u.in4.sin_port);
	__atomic_store_n(&g.port, in->port, __ATOMIC_RELEASE);
	return 0;
}

static void r_fini(struct asx_svc *svc)
{
	struct inst *in = asx_svc_priv(svc);

	if (__atomic_load_n(&in->in_cb, __ATOMIC_ACQUIRE))
		__atomic_add_fetch(&g.busy_fini, 1, __ATOMIC_RELAXED);
	asx_acceptor_destroy(in->acc);	/* closes the connections: close() runs in here */
	__atomic_store_n(&in->fini_done, true, __ATOMIC_RELEASE);
	pthread_mutex_lock(&g.lock);
	g.live--;
	pthread_mutex_unlock(&g.lock);
}

static const ASX_OPTS(struct asx_svc_ops, r_ops, .init = r_init, .fini = r_fini);

static int r_make(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	struct inst *in = calloc(1, sizeof(*in));

	(void)name;
	if (!in)
		return -ENOMEM;
	pthread_mutex_lock(&g.lock);
	in->grave = g.graves;
	g.graves = in;
	g.live++;
	pthread_mutex_unlock(&g.lock);
	*priv = in;
	*ops = &r_ops;
	return 0;
}

static void bury(void)
{
	while (g.graves) {
		struct inst *in = g.graves;

		g.graves = in->grave;
		free(in);
	}
}

/* ------------------------------------------------------------ harness */

struct rig {
	struct asx_svc_repo *repo;
	struct asx_reactor *rx;
	pthread_t loop;
};

static void *loop_main(void *arg)
{
	struct rig *rig = arg;

	assert_int_equal(asx_reactor_run(rig->rx), 0);
	return NULL;
}

static void rig_start(struct rig *rig, const char *conf)
{
	char err[256];

	assert_int_equal(asx_svc_repo_create(&rig->repo), 0);
	assert_int_equal(asx_svc_register(rig->repo, "R", r_make), 0);
	assert_int_equal(asx_svc_repo_reactor(rig->repo, &rig->rx), 0);
	assert_int_equal(pthread_create(&rig->loop, NULL, loop_main, rig), 0);
	assert_int_equal(asx_svc_apply_text(rig->repo, "t.conf", conf, 0, err, sizeof(err)), 0);
}

static void rig_stop(struct rig *rig)
{
	asx_reactor_end_loop(rig->rx);
	join_or_die(rig->loop, "the repository's Reactor loop");
	asx_svc_repo_destroy(rig->repo);
	assert_int_equal(g.live, 0);
	assert_int_equal(g.late, 0);
	assert_int_equal(g.busy_fini, 0);
	bury();
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read exactly @n bytes within @secs: 0, or -1. */
static int read_n(int fd, char *buf, size_t n, double secs)
{
	double end = now_s() + secs;

	while (n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		double left = end - now_s();
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			return -1;
		got = recv(fd, buf, n, 0);
		if (got <= 0)
			return -1;
		buf += got;
		n -= (size_t)got;
	}
	return 0;
}

/* Is anything readable on @fd within @ms? */
static bool readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) > 0;
}

static void reset_close(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

/* ------------------------------------------------------------ tests */

static void test_events(void **state)
{
	struct rig rig;
	char buf[6];
	int fd;

	(void)state;
	rig_start(&rig, "static R\n");
	fd = dial(g.port);
	assert_true(fd >= 0);
	assert_int_equal(send(fd, "hello", 5, 0), 5);
	assert_int_equal(read_n(fd, buf, 5, 30), 0);
	assert_memory_equal(buf, "hello", 5);
	assert_true(__atomic_load_n(&g.callbacks, __ATOMIC_RELAXED) >= 2);	/* make, input */
	close(fd);
	rig_stop(&rig);
}

#define HELD 8		/* connections open across the suspension */
#define MSGS 50		/* messages each sends while suspended */

static void test_suspend_keeps_order(void **state)
{
	struct rig rig;
	int fd[HELD + 1], late;
	unsigned long before;
	struct asx_svc_info info;

	(void)state;
	rig_start(&rig, "static R\n");
	for (int i = 0; i < HELD; i++) {
		char b[2];

		fd[i] = dial(g.port);
		assert_true(fd[i] >= 0);
		assert_int_equal(send(fd[i], "o\n", 2, 0), 2);
		assert_int_equal(read_n(fd[i], b, 2, 30), 0);	/* served before the suspend */
	}
	assert_int_equal(asx_svc_suspend(rig.repo, "R"), 0);
	assert_int_equal(asx_svc_find(rig.repo, "R", &info), 0);
	assert_int_equal(info.state, ASX_SVC_SUSPENDED);
	before = __atomic_load_n(&g.callbacks, __ATOMIC_RELAXED);
	late = dial(g.port);	/* waits in the listen queue */
	assert_true(late >= 0);
	fd[HELD] = late;
	for (int k = 0; k < MSGS; k++)
		for (int i = 0; i <= HELD; i++) {
			char m[16];
			int n = snprintf(m, sizeof(m), "%03d:%04d;", i, k);

			assert_int_equal(send(fd[i], m, (size_t)n, 0), n);
		}
	for (int i = 0; i <= HELD; i++)
		assert_false(readable(fd[i], i ? 0 : 200));
	/* off the Reactor: not one callback of the service ran while suspended */
	assert_int_equal(__atomic_load_n(&g.callbacks, __ATOMIC_RELAXED), before);
	assert_int_equal(asx_svc_resume(rig.repo, "R"), 0);
	for (int i = 0; i <= HELD; i++) {
		char got[MSGS * 9 + 1], want[MSGS * 9 + 1];
		size_t n = 0;

		for (int k = 0; k < MSGS; k++)
			n += (size_t)snprintf(want + n, sizeof(want) - n, "%03d:%04d;", i, k);
		assert_int_equal(read_n(fd[i], got, n, 30), 0);	/* all of it, in order */
		assert_memory_equal(got, want, n);
		close(fd[i]);
	}
	rig_stop(&rig);
}

/* Churn: clients that connect, send, sometimes wait for the echo, and reset. */
struct churner {
	pthread_t t;
	unsigned int seed;
	unsigned long conns, echoes;
};

static volatile int churn_stop;

static void *churn_main(void *arg)
{
	struct churner *c = arg;

	while (!__atomic_load_n(&churn_stop, __ATOMIC_ACQUIRE)) {
		int fd = dial(__atomic_load_n(&g.port, __ATOMIC_ACQUIRE));
		char b[4];

		if (fd < 0) {
			usleep(1000);
			continue;
		}
		c->conns++;
		if (send(fd, "ping", 4, MSG_NOSIGNAL) == 4 && rand_r(&c->seed) % 2 &&
		    !read_n(fd, b, 4, 0.05))
			c->echoes++;
		if (rand_r(&c->seed) % 2)
			reset_close(fd);
		else
			close(fd);
	}
	return NULL;
}

static void test_churn(void **state)
{
	struct churner c[3] = { { .seed = 1 }, { .seed = 2 }, { .seed = 3 } };
	double secs = getenv("STRESS_S") ? atof(getenv("STRESS_S")) : 2.0, end;
	unsigned long conns = 0, echoes = 0, ops = 0;
	struct rig rig;
	char err[256];

	(void)state;
	rig_start(&rig, "static R\n");
	churn_stop = 0;
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&c[i].t, NULL, churn_main, &c[i]), 0);
	end = now_s() + secs;
	for (unsigned int i = 0; now_s() < end; i++, ops++) {
		char conf[64];

		switch (i % 6) {
		case 0: assert_int_equal(asx_svc_suspend(rig.repo, "R"), 0); break;
		case 1: usleep(2000); assert_int_equal(asx_svc_resume(rig.repo, "R"), 0); break;
		case 2:	/* a reload that replaces it (new parameters: a new instance) */
			snprintf(conf, sizeof(conf), "static R \"gen %u\"\n", i);
			assert_int_equal(asx_svc_apply_text(rig.repo, "t.conf", conf, ASX_SVC_RELOAD,
							    err, sizeof(err)), 0);
			break;
		case 3: assert_int_equal(asx_svc_suspend(rig.repo, "R"), 0); break;
		case 4:	/* removed while suspended, then back */
			assert_int_equal(asx_svc_remove(rig.repo, "R"), 0);
			assert_int_equal(asx_svc_apply_text(rig.repo, "t.conf", "static R\n", 0, err,
							    sizeof(err)), 0);
			break;
		default: usleep(1000); break;
		}
	}
	__atomic_store_n(&churn_stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++) {
		join_or_die(c[i].t, "a churning client");
		conns += c[i].conns;
		echoes += c[i].echoes;
	}
	print_message("churn: %lu reconfigurations, %lu connections, %lu echoes, %lu callbacks in %.1f s\n",
		      ops, conns, echoes, __atomic_load_n(&g.callbacks, __ATOMIC_RELAXED), secs);
	assert_true(conns > 0);
	rig_stop(&rig);
}

/* A service's callback that calls its repository gets -EDEADLK, not a hang. */
static struct asx_svc_repo *self_repo;
static int self_rc = 1;

static int self_timeout(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	(void)eh;
	(void)now;
	(void)arg;
	__atomic_store_n(&self_rc, asx_svc_remove(self_repo, "S"), __ATOMIC_RELEASE);
	return 0;
}

static const struct asx_event_handler_ops self_eh_ops = { .handle_timeout = self_timeout };
static struct asx_event_handler self_eh;

static int s_init(struct asx_svc *svc, int argc, char **argv)
{
	struct asx_reactor *r;
	int rc = asx_svc_reactor(svc, &r);

	(void)argc;
	(void)argv;
	if (rc)
		return rc;
	asx_event_handler_init(&self_eh, &self_eh_ops);
	return asx_reactor_schedule_timer(r, &self_eh, NULL, 1000000, 0) > 0 ? 0 : -EIO;
}

static void s_fini(struct asx_svc *svc)
{
	(void)svc;
}

static const ASX_OPTS(struct asx_svc_ops, s_ops, .init = s_init, .fini = s_fini);

static int s_make(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	*priv = NULL;
	*ops = &s_ops;
	return 0;
}

static void test_callback_calls_repo(void **state)
{
	struct rig rig;
	double end;

	(void)state;
	rig_start(&rig, "");
	self_repo = rig.repo;
	assert_int_equal(asx_svc_register(rig.repo, "S", s_make), 0);
	assert_int_equal(asx_svc_apply_text(rig.repo, "t.conf", "static S\n", 0, NULL, 0), 0);
	end = now_s() + 30;
	while (__atomic_load_n(&self_rc, __ATOMIC_ACQUIRE) == 1 && now_s() < end)
		usleep(1000);
	assert_int_equal(self_rc, -EDEADLK);
	rig_stop(&rig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_suspend_keeps_order),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_callback_calls_repo),
	};

	alarm(300);	/* a hang fails the run */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
