// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_acceptor.c - CMocka tests of asx/acceptor.h: Acceptor, Connector,
 * Svc_Handler.
 *
 * Each strategy (reactive, a pthread per connection, an ASC user thread
 * per connection on one VP) echoes N messages on each of many concurrent
 * connections; the clients check every message comes back once and in
 * order.  Churn resets connections mid-transfer and closes the acceptor
 * with live handlers; every handler made is opened once, closed once and
 * released once.  Asynchronous connects succeed, are refused and time
 * out.  Every wait has a deadline and every join a watchdog, so a lost
 * wake-up fails the test instead of hanging it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include <asx/acceptor.h>
#include <asx/asc.h>

#include "joinwd.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NCONN	16
#define NMSG	100
#else
#define NCONN	48
#define NMSG	300
#endif
#define BATCH	4
#define MS	1000000ULL
#define WAIT_S	30	/* "never happened": the host is shared and slow */

/* ------------------------------------------------------------ counters */

static int n_made, n_open, n_close, n_release, n_bad;
static int last_why;

static void cnt(int *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

static int get(int *c)
{
	return __atomic_load_n(c, __ATOMIC_ACQUIRE);
}

static void reset_counts(void)
{
	n_made = n_open = n_close = n_release = n_bad = 0;
}

/* Wait (bounded) until *@c reaches @want. */
static bool wait_count(int *c, int want)
{
	for (int i = 0; i < WAIT_S * 100; i++) {
		if (get(c) >= want)
			return true;
		usleep(10000);
	}
	return get(c) >= want;
}

/* ------------------------------------------------------------ echo handler */

struct echo {
	struct asx_svc_handler h;
	int opened, closed;	/* each exactly once */
};

static int echo_open(struct asx_svc_handler *h)
{
	struct echo *e = (struct echo *)h;

	if (e->opened++ || e->closed)
		cnt(&n_bad);
	cnt(&n_open);
	return 0;
}

static int echo_input(struct asx_svc_handler *h)
{
	char buf[4096];
	ssize_t n = asx_sock_stream_recv(asx_svc_handler_stream(h), buf, sizeof(buf), NULL);

	if (n <= 0)
		return -1;
	return asx_sock_stream_send_n(asx_svc_handler_stream(h), buf, (size_t)n, NULL, NULL) == n
		? 0 : -1;
}

static void echo_close(struct asx_svc_handler *h, int why)
{
	struct echo *e = (struct echo *)h;

	if (e->closed++)
		cnt(&n_bad);
	__atomic_store_n(&last_why, why, __ATOMIC_RELAXED);
	cnt(&n_close);
}

static void echo_release(struct asx_svc_handler *h)
{
	struct echo *e = (struct echo *)h;

	if (e->closed != 1)
		cnt(&n_bad);
	cnt(&n_release);
	free(e);
}

static const struct asx_svc_handler_ops echo_ops = {
	.open = echo_open, .input = echo_input, .close = echo_close, .release = echo_release,
};

static struct asx_svc_handler *echo_make(void *arg)
{
	struct echo *e = calloc(1, sizeof(*e));

	(void)arg;
	if (!e)
		return NULL;
	asx_svc_handler_init(&e->h, &echo_ops, NULL);
	cnt(&n_made);
	return &e->h;
}

/* ------------------------------------------------------------ strategies */

struct env {
	struct asx_svc_strategy st;
	struct asx_reactor *rx;
	struct asx_asc *asc;
	struct asx_prio_qos q;
	pthread_t loop;
};

static void *loop_main(void *arg)
{
	asx_reactor_run(arg);
	return NULL;
}

static void env_up(struct env *v, enum asx_svc_kind kind)
{
	memset(v, 0, sizeof(*v));
	v->st.kind = kind;
	/* a Reactor in every case: connectors complete async connects on it */
	assert_int_equal(asx_reactor_create(&v->rx), 0);
	v->st.reactor = v->rx;
	assert_int_equal(pthread_create(&v->loop, NULL, loop_main, v->rx), 0);
	if (kind == ASX_SVC_ASC) {
		ASX_OPTS(struct asx_asc_opts, o, .nvps = 1, .name = "acc-test");

		assert_int_equal(asx_asc_create(&v->asc, &asx_asc_prio, &o), 0);
		v->q = ASX_PRIO_QOS(1);
		v->st.asc = v->asc;
		v->st.qos = &v->q.qos;
	}
}

static void env_down(struct env *v)
{
	asx_reactor_end_loop(v->rx);
	join_or_die(v->loop, "reactor loop");
	assert_int_equal(asx_reactor_destroy(v->rx), 0);
	if (v->asc) {
		int r;

		/* detached user threads are freed as they end: a short wait */
		for (int i = 0; (r = asx_asc_destroy(v->asc)) == -EBUSY && i < WAIT_S * 100; i++)
			usleep(10000);
		assert_int_equal(r, 0);
	}
}

static struct asx_acceptor *acc_up(struct env *v, const char *where, struct asx_addr *bound)
{
	ASX_OPTS(struct asx_acceptor_opts, o, .strategy = v->st, .make = echo_make);
	struct asx_acceptor *acc;
	struct asx_addr a;

	assert_int_equal(asx_addr_parse(&a, where, NULL), 0);
	assert_int_equal(asx_acceptor_create(&acc, &a, &o), 0);
	assert_int_equal(asx_acceptor_local_addr(acc, bound), 0);
	return acc;
}

/* ------------------------------------------------------------ clients */

struct client {
	pthread_t t;
	const struct asx_addr *to;
	uint32_t id;
	int nmsg;
	int reset_after;	/* > 0: RST after this many messages */
	bool until_error;	/* echo until the server goes; ok if all in order */
	int ok;			/* 1: all echoed, exactly once, in order */
};

struct wire {
	uint32_t id, seq;
	uint64_t pad;
};

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct asx_sock_connector con;
	struct asx_sock_stream s;
	struct timespec dl;
	uint32_t next = 0;

	c->ok = 0;
	asx_sock_connector_init(&con, NULL);
	if (asx_sock_connector_connect(&con, &s, c->to, asx_deadline(&dl, WAIT_S * 1000 * MS)))
		return NULL;
	for (int i = 0; i < c->nmsg; i += BATCH) {
		struct wire w[BATCH];
		int k = c->nmsg - i < BATCH ? c->nmsg - i : BATCH;

		if (c->reset_after && i >= c->reset_after) {
			struct linger l = { .l_onoff = 1, .l_linger = 0 };

			setsockopt(asx_handle(&s), SOL_SOCKET, SO_LINGER, &l, sizeof(l));
			asx_sock_stream_close(&s);
			c->ok = 1;
			return NULL;
		}
		for (int j = 0; j < k; j++)
			w[j] = (struct wire){ c->id, next + (uint32_t)j, 0x5a5a5a5a5a5a5a5aULL };
		if (asx_sock_stream_send_n(&s, w, k * sizeof(w[0]),
					   asx_deadline(&dl, WAIT_S * 1000 * MS), NULL) !=
		    (ssize_t)(k * sizeof(w[0])))
			goto gone;
		memset(w, 0, sizeof(w));
		if (asx_sock_stream_recv_n(&s, w, k * sizeof(w[0]),
					   asx_deadline(&dl, WAIT_S * 1000 * MS), NULL) !=
		    (ssize_t)(k * sizeof(w[0])))
			goto gone;
		for (int j = 0; j < k; j++)
			if (w[j].id != c->id || w[j].seq != next++ ||
			    w[j].pad != 0x5a5a5a5a5a5a5a5aULL)
				goto out;
		if (c->until_error)
			i = 0;		/* again, until the server goes */
	}
	/* nothing more may come back: the echo is exactly once */
	{
		char x;

		asx_sock_stream_close_writer(&s);
		if (asx_sock_stream_recv(&s, &x, 1, asx_deadline(&dl, WAIT_S * 1000 * MS)) == 0)
			c->ok = 1;
	}
out:
	asx_sock_stream_close(&s);
	return NULL;
gone:
	/* the server went: a pass only when that was the point */
	c->ok = c->until_error && next > 0;
	goto out;
}

static void run_clients(const struct asx_addr *to, int n, int nmsg, int reset_every)
{
	struct client *cs = calloc((size_t)n, sizeof(*cs));

	assert_non_null(cs);
	for (int i = 0; i < n; i++) {
		cs[i] = (struct client){ .to = to, .id = (uint32_t)i + 1, .nmsg = nmsg };
		if (reset_every && i % reset_every == 0)
			cs[i].reset_after = (i % 7 + 1) * BATCH;
		assert_int_equal(pthread_create(&cs[i].t, NULL, client_main, &cs[i]), 0);
	}
	for (int i = 0; i < n; i++)
		join_or_die(cs[i].t, "echo client");
	for (int i = 0; i < n; i++)
		if (!cs[i].ok)
			fail_msg("client %d: echo lost, duplicated or out of order", i);
	free(cs);
}

/* ------------------------------------------------------------ tests */

static void echo_case(enum asx_svc_kind kind, const char *where, int reset_every)
{
	struct env v;
	struct asx_addr bound;
	struct asx_acceptor *acc;
	struct asx_acceptor_stats st;

	reset_counts();
	env_up(&v, kind);
	acc = acc_up(&v, where, &bound);
	run_clients(&bound, NCONN, NMSG, reset_every);
	/* every peer closed: each handler sees it and closes */
	assert_true(wait_count(&n_release, NCONN));
	asx_acceptor_stats(acc, &st);
	assert_int_equal(st.accepted, NCONN);
	assert_int_equal(st.opened, NCONN);
	assert_int_equal(st.closed, NCONN);
	assert_int_equal(st.live, 0);
	assert_int_equal(asx_acceptor_destroy(acc), 0);
	env_down(&v);
	assert_int_equal(get(&n_made), NCONN);
	assert_int_equal(get(&n_open), NCONN);
	assert_int_equal(get(&n_close), NCONN);
	assert_int_equal(get(&n_release), NCONN);
	assert_int_equal(get(&n_bad), 0);
}

static void test_echo_reactive_tcp(void **s)
{
	(void)s;
	echo_case(ASX_SVC_REACTIVE, "127.0.0.1:0", 0);
}

static void test_echo_reactive_unix(void **s)
{
	(void)s;
	echo_case(ASX_SVC_REACTIVE, "@asx-test-acceptor-rx", 0);
}

static void test_echo_thread_tcp(void **s)
{
	(void)s;
	echo_case(ASX_SVC_THREAD, "127.0.0.1:0", 0);
}

static void test_echo_thread_unix(void **s)
{
	(void)s;
	echo_case(ASX_SVC_THREAD, "@asx-test-acceptor-th", 0);
}

static void test_echo_asc_tcp(void **s)
{
	(void)s;
	echo_case(ASX_SVC_ASC, "127.0.0.1:0", 0);
}

static void test_echo_asc_unix(void **s)
{
	(void)s;
	echo_case(ASX_SVC_ASC, "@asx-test-acceptor-asc", 0);
}

/* Connections reset mid-transfer: every third client sends a RST. */
static void test_churn_reset(void **s)
{
	(void)s;
	for (enum asx_svc_kind k = ASX_SVC_REACTIVE; k <= ASX_SVC_ASC; k++)
		echo_case(k, "127.0.0.1:0", 3);
}

/* Close the acceptor while handlers are live (clients idle, connected). */
static void test_close_with_live_handlers(void **s)
{
	(void)s;
	for (enum asx_svc_kind k = ASX_SVC_REACTIVE; k <= ASX_SVC_ASC; k++) {
		enum { N = 12 };
		struct asx_sock_stream cl[N];
		struct asx_sock_connector con;
		struct asx_addr bound;
		struct asx_acceptor *acc;
		struct env v;
		struct timespec dl;

		reset_counts();
		env_up(&v, k);
		acc = acc_up(&v, "127.0.0.1:0", &bound);
		asx_sock_connector_init(&con, NULL);
		for (int i = 0; i < N; i++)
			assert_int_equal(asx_sock_connector_connect(&con, &cl[i], &bound,
					 asx_deadline(&dl, WAIT_S * 1000 * MS)), 0);
		assert_true(wait_count(&n_open, N));
		assert_int_equal(asx_acceptor_destroy(acc), 0);
		/* reactive: closed by the remove, the loop may still finish one */
		assert_true(wait_count(&n_release, N));
		assert_int_equal(get(&n_close), N);
		assert_int_equal(get(&last_why), -ECANCELED);
		for (int i = 0; i < N; i++) {
			char x;

			/* the server side is gone: end of stream or reset */
			assert_true(asx_sock_stream_recv(&cl[i], &x, 1,
					asx_deadline(&dl, WAIT_S * 1000 * MS)) <= 0);
			asx_sock_stream_close(&cl[i]);
		}
		env_down(&v);
		assert_int_equal(get(&n_made), N);
		assert_int_equal(get(&n_open), N);
		assert_int_equal(get(&n_bad), 0);
	}
}

/* Destroy the acceptor while every connection is transferring. */
static void test_destroy_mid_transfer(void **s)
{
	(void)s;
	for (enum asx_svc_kind k = ASX_SVC_REACTIVE; k <= ASX_SVC_ASC; k++) {
		enum { N = 16 };
		struct client cs[N];
		struct asx_addr bound;
		struct asx_acceptor *acc;
		struct env v;

		reset_counts();
		env_up(&v, k);
		acc = acc_up(&v, "127.0.0.1:0", &bound);
		for (int i = 0; i < N; i++) {
			cs[i] = (struct client){ .to = &bound, .id = (uint32_t)i + 1,
						 .nmsg = 1 << 30, .until_error = true };
			assert_int_equal(pthread_create(&cs[i].t, NULL, client_main, &cs[i]), 0);
		}
		assert_true(wait_count(&n_open, N));
		usleep(50000);
		assert_int_equal(asx_acceptor_destroy(acc), 0);
		assert_true(wait_count(&n_release, N));
		for (int i = 0; i < N; i++)
			join_or_die(cs[i].t, "echo client");
		for (int i = 0; i < N; i++)
			if (!cs[i].ok)
				fail_msg("client %d: no echo, or out of order, before the end", i);
		env_down(&v);
		assert_int_equal(get(&n_made), N);
		assert_int_equal(get(&n_open), N);
		assert_int_equal(get(&n_close), N);
		assert_int_equal(get(&n_release), N);
		assert_int_equal(get(&n_bad), 0);
	}
}

/* output(): asked for in open, called once writable, then turned off. */
static int n_output;

static int greet_open(struct asx_svc_handler *h)
{
	cnt(&n_open);
	return asx_svc_handler_want_output(h, true);
}

static int greet_output(struct asx_svc_handler *h)
{
	cnt(&n_output);
	if (asx_sock_stream_send_n(asx_svc_handler_stream(h), "hi", 2, NULL, NULL) != 2)
		return -1;
	return asx_svc_handler_want_output(h, false);
}

static const struct asx_svc_handler_ops greet_ops = {
	.open = greet_open, .input = echo_input, .output = greet_output,
	.close = echo_close, .release = echo_release,
};

static struct asx_svc_handler *greet_make(void *arg)
{
	struct echo *e = calloc(1, sizeof(*e));

	(void)arg;
	if (!e)
		return NULL;
	asx_svc_handler_init(&e->h, &greet_ops, NULL);
	cnt(&n_made);
	return &e->h;
}

static void test_output(void **s)
{
	(void)s;
	for (enum asx_svc_kind k = ASX_SVC_REACTIVE; k <= ASX_SVC_ASC; k++) {
		struct env v;
		struct asx_addr a;
		struct asx_acceptor *acc;
		struct asx_sock_connector con;
		struct asx_sock_stream cl;
		struct timespec dl;
		char buf[8] = { 0 };
		ASX_OPTS(struct asx_acceptor_opts, o, .make = greet_make);

		reset_counts();
		n_output = 0;
		env_up(&v, k);
		o.strategy = v.st;
		assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
		assert_int_equal(asx_acceptor_create(&acc, &a, &o), 0);
		assert_int_equal(asx_acceptor_local_addr(acc, &a), 0);
		asx_sock_connector_init(&con, NULL);
		assert_int_equal(asx_sock_connector_connect(&con, &cl, &a,
				 asx_deadline(&dl, WAIT_S * 1000 * MS)), 0);
		assert_int_equal(asx_sock_stream_recv_n(&cl, buf, 2,
				 asx_deadline(&dl, WAIT_S * 1000 * MS), NULL), 2);
		assert_string_equal(buf, "hi");
		/* output is off now: the handler still echoes */
		assert_int_equal(asx_sock_stream_send_n(&cl, "ok", 2, NULL, NULL), 2);
		assert_int_equal(asx_sock_stream_recv_n(&cl, buf, 2,
				 asx_deadline(&dl, WAIT_S * 1000 * MS), NULL), 2);
		assert_string_equal(buf, "ok");
		assert_int_equal(get(&n_output), 1);
		asx_sock_stream_close(&cl);
		assert_true(wait_count(&n_release, 1));
		assert_int_equal(asx_acceptor_destroy(acc), 0);
		env_down(&v);
		assert_int_equal(get(&n_close), 1);
		assert_int_equal(get(&n_bad), 0);
	}
}

/* max_handlers: a connection above it is closed, counted as refused. */
static void test_max_handlers(void **s)
{
	for (enum asx_svc_kind k = ASX_SVC_REACTIVE; k <= ASX_SVC_ASC; k++) {
		struct env v;
		struct asx_addr a;
		struct asx_acceptor *acc;
		struct asx_acceptor_stats st;
		struct asx_sock_connector con;
		struct asx_sock_stream cl[3];
		struct timespec dl;
		char x;
		ASX_OPTS(struct asx_acceptor_opts, o, .make = echo_make, .max_handlers = 2);

		(void)s;
		reset_counts();
		env_up(&v, k);
		o.strategy = v.st;
		assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
		assert_int_equal(asx_acceptor_create(&acc, &a, &o), 0);
		assert_int_equal(asx_acceptor_local_addr(acc, &a), 0);
		asx_sock_connector_init(&con, NULL);
		for (int i = 0; i < 3; i++) {
			assert_int_equal(asx_sock_connector_connect(&con, &cl[i], &a,
					 asx_deadline(&dl, WAIT_S * 1000 * MS)), 0);
			if (i < 2)
				assert_true(wait_count(&n_open, i + 1));
		}
		/* the third is closed by the server at once, never opened */
		assert_true(asx_sock_stream_recv(&cl[2], &x, 1,
				asx_deadline(&dl, WAIT_S * 1000 * MS)) <= 0);
		assert_int_equal(get(&last_why), -EMFILE);
		asx_acceptor_stats(acc, &st);
		assert_int_equal(st.refused, 1);
		assert_int_equal(st.opened, 2);
		assert_int_equal(st.live, 2);
		for (int i = 0; i < 3; i++)
			asx_sock_stream_close(&cl[i]);
		assert_true(wait_count(&n_release, 3));
		assert_int_equal(asx_acceptor_destroy(acc), 0);
		env_down(&v);
		assert_int_equal(get(&n_open), 2);
		assert_int_equal(get(&n_close), 3);
		assert_int_equal(get(&n_bad), 0);
	}
}

/* A connector under each strategy, synchronous connect, echoes. */
static void test_connector_sync(void **s)
{
	(void)s;
	for (enum asx_svc_kind k = ASX_SVC_REACTIVE; k <= ASX_SVC_ASC; k++) {
		struct env v;
		struct asx_addr bound;
		struct asx_acceptor *acc;
		struct asx_connector *c;
		struct timespec dl;
		struct echo *e = calloc(1, sizeof(*e));
		ASX_OPTS(struct asx_connector_opts, o);

		reset_counts();
		env_up(&v, k);
		o.strategy = v.st;
		acc = acc_up(&v, "127.0.0.1:0", &bound);
		assert_int_equal(asx_connector_create(&c, &o), 0);
		asx_svc_handler_init(&e->h, &echo_ops, NULL);
		assert_int_equal(asx_connector_connect(c, &e->h, &bound,
						       asx_deadline(&dl, WAIT_S * 1000 * MS)), 0);
		/* both ends echo: the connector's handler and the acceptor's */
		assert_true(wait_count(&n_open, 2));
		assert_int_equal(asx_connector_destroy(c), 0);
		assert_int_equal(asx_acceptor_destroy(acc), 0);
		assert_true(wait_count(&n_release, 2));
		env_down(&v);
		assert_int_equal(get(&n_close), 2);
		assert_int_equal(get(&n_bad), 0);
	}
}

struct ahandler {
	struct asx_svc_handler h;
	int opened, closed, why;
};

static int a_open(struct asx_svc_handler *h)
{
	__atomic_add_fetch(&((struct ahandler *)h)->opened, 1, __ATOMIC_RELEASE);
	return 0;
}

static int a_input(struct asx_svc_handler *h)
{
	char b[64];

	return asx_sock_stream_recv(asx_svc_handler_stream(h), b, sizeof(b), NULL) > 0 ? 0 : -1;
}

static void a_close(struct asx_svc_handler *h, int why)
{
	struct ahandler *a = (struct ahandler *)h;

	a->why = why;
	__atomic_add_fetch(&a->closed, 1, __ATOMIC_RELEASE);
}

static const struct asx_svc_handler_ops a_ops = {
	.open = a_open, .input = a_input, .close = a_close,
};

static bool wait_flag(int *f)
{
	for (int i = 0; i < WAIT_S * 100 && !__atomic_load_n(f, __ATOMIC_ACQUIRE); i++)
		usleep(10000);
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

/* Asynchronous connect: success, refused, timeout, cancelled by close. */
static void test_connect_async(void **s)
{
	struct env v;
	struct asx_addr bound, refused, full;
	struct asx_acceptor *acc;
	struct asx_connector *c;
	struct ahandler ok = { 0 }, ref = { 0 }, to = { 0 }, cx = { 0 };
	struct asx_sock_acceptor lsn;
	struct asx_sock_stream fill[4];
	struct asx_sock_connector con;
	ASX_OPTS(struct asx_connector_opts, o);
	ASX_OPTS(struct asx_sock_opts, bl0, .backlog = 1);
	struct timespec t0, t1, dl;
	int nfill = 0;

	(void)s;
	reset_counts();
	env_up(&v, ASX_SVC_REACTIVE);
	o.strategy = v.st;
	acc = acc_up(&v, "127.0.0.1:0", &bound);
	assert_int_equal(asx_connector_create(&c, &o), 0);

	/* success: open, then close when the acceptor side goes */
	asx_svc_handler_init(&ok.h, &a_ops, NULL);
	assert_int_equal(asx_connector_connect_async(c, &ok.h, &bound, 10000 * MS), 0);
	assert_true(wait_flag(&ok.opened));

	/* refused: a port bound a moment ago, now closed */
	{
		struct asx_sock_acceptor tmp;
		struct asx_addr any;

		assert_int_equal(asx_addr_parse(&any, "127.0.0.1:0", NULL), 0);
		assert_int_equal(asx_sock_acceptor_open(&tmp, &any, NULL), 0);
		assert_int_equal(asx_sock_local_addr(ASX_SOCK(&tmp), &refused), 0);
		asx_sock_acceptor_close(&tmp);
	}
	asx_svc_handler_init(&ref.h, &a_ops, NULL);
	assert_int_equal(asx_connector_connect_async(c, &ref.h, &refused, 10000 * MS), 0);
	assert_true(wait_flag(&ref.closed));
	assert_int_equal(ref.why, -ECONNREFUSED);
	assert_int_equal(ref.opened, 0);

	/* timeout: a listener whose accept queue is full drops the SYN */
	{
		struct asx_addr any;

		assert_int_equal(asx_addr_parse(&any, "127.0.0.1:0", NULL), 0);
		assert_int_equal(asx_sock_acceptor_open(&lsn, &any, &bl0), 0);
		assert_int_equal(asx_sock_local_addr(ASX_SOCK(&lsn), &full), 0);
	}
	asx_sock_connector_init(&con, NULL);
	/* fill the queue: connects that complete at once, until one would wait */
	for (; nfill < 4; nfill++)
		if (asx_sock_connector_connect(&con, &fill[nfill], &full,
					       asx_deadline(&dl, 300 * MS)))
			break;
	asx_svc_handler_init(&to.h, &a_ops, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(asx_connector_connect_async(c, &to.h, &full, 200 * MS), 0);
	assert_true(wait_flag(&to.closed));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(to.why, -ETIMEDOUT);
	assert_int_equal(to.opened, 0);
	/* never early */
	assert_true((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec) >=
		    200 * (long long)MS);

	/* a synchronous connect times out too, and leaves the handler alone */
	{
		struct ahandler sy = { 0 };

		asx_svc_handler_init(&sy.h, &a_ops, NULL);
		assert_int_equal(asx_connector_connect(c, &sy.h, &full, asx_deadline(&dl, 200 * MS)),
				 -ETIMEDOUT);
		assert_int_equal(sy.opened + sy.closed, 0);
	}

	/* cancelled: a pending connect when the connector closes */
	asx_svc_handler_init(&cx.h, &a_ops, NULL);
	assert_int_equal(asx_connector_connect_async(c, &cx.h, &full, 0), 0);
	assert_int_equal(asx_connector_destroy(c), 0);
	assert_true(wait_flag(&cx.closed));
	assert_int_equal(cx.why, -ECANCELED);
	assert_int_equal(cx.opened, 0);
	assert_true(wait_flag(&ok.closed));
	assert_int_equal(ok.closed, 1);

	for (int i = 0; i < nfill; i++)
		asx_sock_stream_close(&fill[i]);
	asx_sock_acceptor_close(&lsn);
	assert_int_equal(asx_acceptor_destroy(acc), 0);
	env_down(&v);
	assert_int_equal(ok.opened, 1);
	assert_int_equal(get(&n_bad), 0);
}

/* Bad arguments are refused, nothing leaks. */
static void test_invalid(void **s)
{
	struct asx_acceptor *acc;
	struct asx_connector *c;
	struct asx_addr a;
	ASX_OPTS(struct asx_acceptor_opts, o, .make = echo_make);
	ASX_OPTS(struct asx_connector_opts, co);

	(void)s;
	assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
	/* reactive without a Reactor */
	assert_int_equal(asx_acceptor_create(&acc, &a, &o), -EINVAL);
	o.strategy.kind = ASX_SVC_ASC;
	assert_int_equal(asx_acceptor_create(&acc, &a, &o), -EINVAL);
	o.make = NULL;
	o.strategy.kind = ASX_SVC_THREAD;
	assert_int_equal(asx_acceptor_create(&acc, &a, &o), -EINVAL);
	co.strategy.kind = ASX_SVC_THREAD;
	assert_int_equal(asx_connector_create(&c, &co), 0);
	/* async connect needs a Reactor */
	{
		struct ahandler h;

		asx_svc_handler_init(&h.h, &a_ops, NULL);
		assert_int_equal(asx_connector_connect_async(c, &h.h, &a, 0), -EINVAL);
	}
	assert_int_equal(asx_connector_destroy(c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_invalid),
		cmocka_unit_test(test_echo_reactive_tcp),
		cmocka_unit_test(test_echo_reactive_unix),
		cmocka_unit_test(test_echo_thread_tcp),
		cmocka_unit_test(test_echo_thread_unix),
		cmocka_unit_test(test_echo_asc_tcp),
		cmocka_unit_test(test_echo_asc_unix),
		cmocka_unit_test(test_churn_reset),
		cmocka_unit_test(test_close_with_live_handlers),
		cmocka_unit_test(test_destroy_mid_transfer),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_max_handlers),
		cmocka_unit_test(test_connector_sync),
		cmocka_unit_test(test_connect_async),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
