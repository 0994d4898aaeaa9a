// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_proactor.c - CMocka tests of asx/proactor.h, each on both back ends
 * (io_uring and the Reactor fallback).
 *
 * Echo over TCP and UNIX with many connections and many operations in
 * flight at once (every message comes back once, in order); a peer that
 * resets mid-transfer (SO_LINGER 0) ends the pending operations with
 * -ECONNRESET / -EPIPE; cancel in flight (recv, accept, timer, connect);
 * close with operations in flight; timers complete in deadline order and
 * never early; completions posted from other threads are neither lost nor
 * duplicated.  Where io_uring cannot be used on this host the io_uring
 * cases are SKIPPED, with the reason, never passed.  Every loop has a
 * deadline, the whole program an alarm: a lost completion fails, never hangs.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <asx/proactor.h>

#include "joinwd.h"
#include "threadcheck.h"

/* generous: the host is shared and may be slow (sanitisers too) */
#define LOOP_S 60

static const enum asx_proactor_backend be_uring = ASX_PROACTOR_URING;
static const enum asx_proactor_backend be_reactor = ASX_PROACTOR_REACTOR;

/*
 * Open a proactor on @state's back end with an io_uring queue of @entries
 * (0: the default); io_uring missing: SKIP, saying why.
 */
static struct asx_proactor *open_be_n(void **state, unsigned int entries)
{
	enum asx_proactor_backend b = *(const enum asx_proactor_backend *)*state;
	ASX_OPTS(struct asx_proactor_opts, o, .backend = b, .entries = entries);
	struct asx_proactor *p = NULL;
	const char *why = NULL;
	int ret = asx_proactor_open(&p, &o, &why);

	if (ret && b == ASX_PROACTOR_URING) {
		assert_non_null(why);
		print_message("SKIP io_uring back end: %s (%d)\n", why, ret);
		skip();
	}
	assert_int_equal(ret, 0);
	assert_int_equal(asx_proactor_backend(p), b);
	assert_non_null(asx_proactor_why(p));
	return p;
}

static struct asx_proactor *open_be(void **state)
{
	return open_be_n(state, 0);
}

/* Run completions until *@flag, failing after LOOP_S seconds. */
static void run_until(struct asx_proactor *p, const bool *flag)
{
	uint64_t end = asx_now_ns() + LOOP_S * ASX_NSEC_PER_SEC;
	struct timespec dl;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		int ret = asx_proactor_run_once(p, asx_deadline(&dl, 100000000));

		assert_true(ret >= 0);
		if (asx_now_ns() > end)
			fail_msg("watchdog: no completion for the condition in %d s", LOOP_S);
	}
}

/* ------------------------------------------------------------ open */

static void test_open(void **state)
{
	ASX_OPTS(struct asx_proactor_opts, o, .backend = ASX_PROACTOR_REACTOR);
	struct asx_proactor_opts bad = { .sz = 0 };
	struct asx_proactor *p = NULL;
	const char *why = NULL;

	(void)state;
	assert_int_equal(asx_proactor_open(NULL, NULL, NULL), -EINVAL);
	{
		struct asx_completion c = ASX_COMPLETION_INIT(NULL, NULL);
		struct iovec v = { 0 };

		assert_int_equal(asx_proactor_open(&p, &o, NULL), 0);
		assert_int_equal(asx_proactor_readv(p, &c, 0, &v, IOV_MAX + 1), -EINVAL);
		assert_int_equal(asx_proactor_recv(p, &c, 0, NULL, 1, 0), -EINVAL);
		assert_int_equal(asx_proactor_timer(p, &c, 1), -EINVAL);	/* no fn */
		assert_int_equal(asx_proactor_close(p), 0);
	}
	assert_int_equal(asx_proactor_open(&p, &bad, NULL), -EINVAL);
	assert_int_equal(asx_proactor_open(&p, &o, &why), 0);
	assert_int_equal(asx_proactor_backend(p), ASX_PROACTOR_REACTOR);
	assert_string_equal(why, asx_proactor_why(p));
	assert_int_equal(asx_proactor_close(p), 0);

	/* the environment forces the fallback */
	setenv("ASX_PROACTOR", "reactor", 1);
	assert_int_equal(asx_proactor_open(&p, NULL, &why), 0);
	unsetenv("ASX_PROACTOR");
	assert_int_equal(asx_proactor_backend(p), ASX_PROACTOR_REACTOR);
	assert_non_null(strstr(why, "ASX_PROACTOR=reactor"));
	assert_int_equal(asx_proactor_close(p), 0);

	/* AUTO: io_uring or, saying why, the Reactor; never a failure */
	assert_int_equal(asx_proactor_open(&p, NULL, &why), 0);
	print_message("AUTO: %s\n", why);
	if (asx_proactor_backend(p) == ASX_PROACTOR_REACTOR)
		assert_non_null(strstr(why, "io_uring not used"));
	assert_int_equal(asx_proactor_close(p), 0);
	assert_int_equal(asx_proactor_close(NULL), 0);
}

/*
 * io_uring forbidden: a child installs a seccomp filter that fails
 * io_uring_setup with @err, then opens: AUTO falls back to the Reactor and
 * says why, URING fails with @err and says why, and the fallback works.
 * The child's exit status is the line of its first failed check (0: all
 * held).
 */
struct rec {
	int64_t res;
	int calls;
	uint64_t at;
};

static void record(struct asx_completion *c, int64_t res, void *user)
{
	struct rec *r = user;

	r->res = res;
	r->at = asx_now_ns();
	__atomic_add_fetch(&r->calls, 1, __ATOMIC_ACQ_REL);
}

#define CHILD_CHECK(cond)						\
	do {								\
		if (!(cond))						\
			_exit(__LINE__ & 0xff ? __LINE__ & 0xff : 1);	\
	} while (0)

static void forbidden_child(int err, const char *word)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned int)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = (unsigned short)(sizeof(f) / sizeof(f[0])), .filter = f };
	ASX_OPTS(struct asx_proactor_opts, o, .backend = ASX_PROACTOR_URING);
	struct rec r = { 0 };
	struct asx_completion c = ASX_COMPLETION_INIT(record, &r);
	struct asx_proactor *p = NULL;
	const char *why = NULL;

	CHILD_CHECK(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0);
	CHILD_CHECK(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0);
	CHILD_CHECK(asx_proactor_open(&p, &o, &why) == -err);
	CHILD_CHECK(why && strstr(why, word) && !strstr(why, "Reactor"));
	why = NULL;
	CHILD_CHECK(asx_proactor_open(&p, NULL, &why) == 0);
	CHILD_CHECK(asx_proactor_backend(p) == ASX_PROACTOR_REACTOR);
	CHILD_CHECK(why && strstr(why, word) && strstr(why, "Reactor back end"));
	/* and it runs: a timer completes */
	CHILD_CHECK(asx_proactor_timer(p, &c, 1000000) == 0);
	for (int i = 0; i < 100 && !r.calls; i++)
		CHILD_CHECK(asx_proactor_run_once(p, asx_deadline(&(struct timespec){ 0 },
								 100000000)) >= 0);
	CHILD_CHECK(r.calls == 1 && r.res == 0);
	CHILD_CHECK(asx_proactor_close(p) == 0);
	_exit(0);
}

static void test_forbidden(void **state)
{
	static const struct {
		int err;
		const char *word;
	} cases[] = { { EPERM, "EPERM" }, { ENOSYS, "ENOSYS" } };
	ASX_OPTS(struct asx_proactor_opts, o, .backend = ASX_PROACTOR_URING);
	struct asx_proactor *p;
	const char *why = NULL;

	(void)state;
	if (asx_proactor_open(&p, &o, &why)) {
		/* the seccomp filter would not be what makes io_uring fail */
		print_message("SKIP io_uring forbidden by seccomp: io_uring already unusable: %s\n",
			      why);
		skip();
	}
	assert_int_equal(asx_proactor_close(p), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int st = 0;
		pid_t pid = fork();

		assert_true(pid >= 0);
		if (pid == 0)
			forbidden_child(cases[i].err, cases[i].word);
		assert_int_equal(waitpid(pid, &st, 0), pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			print_error("%s case: child status %#x (exit: line & 0xff)\n", cases[i].word,
				    st);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

/* ------------------------------------------------------------ echo */

#define MSG 64

struct echo;

struct conn {
	struct echo *e;
	int fd;
	int id;
	bool client;
	struct asx_completion rc, wc;
	unsigned char out[MSG], in[MSG];
	size_t have, sent;
	unsigned int seq;
};

struct echo {
	struct asx_proactor *p;
	int lfd;
	int nclients, nmsgs;
	struct asx_completion ac;
	struct conn *srv, *cli;
	int accepted, clients_done, servers_done;
	int errors;
	bool done;
};

static void fill(unsigned char *b, int id, unsigned int seq)
{
	for (int i = 0; i < MSG; i++)
		b[i] = (unsigned char)(id * 31 + seq * 7 + (unsigned int)i);
	memcpy(b, &id, sizeof(id));
	memcpy(b + sizeof(id), &seq, sizeof(seq));
}

static void check_done(struct echo *e)
{
	if (e->clients_done == e->nclients && e->servers_done == e->nclients)
		e->done = true;
}

static void srv_recvd(struct asx_completion *c, int64_t res, void *user);

/* server side: send back in[0..have) */
static void srv_sent(struct asx_completion *c, int64_t res, void *user)
{
	struct conn *k = user;

	if (res <= 0) {
		k->e->errors++;
		return;
	}
	k->sent += (size_t)res;
	if (k->sent < k->have)
		assert_int_equal(asx_proactor_send(k->e->p, &k->wc, k->fd, k->in + k->sent,
						   k->have - k->sent, 0), 0);
	else
		assert_int_equal(asx_proactor_recv(k->e->p, &k->rc, k->fd, k->in, MSG, 0), 0);
}

static void srv_recvd(struct asx_completion *c, int64_t res, void *user)
{
	struct conn *k = user;

	if (res <= 0) {
		if (res < 0)
			k->e->errors++;
		close(k->fd);
		k->e->servers_done++;
		check_done(k->e);
		return;
	}
	k->have = (size_t)res;
	k->sent = 0;
	assert_int_equal(asx_proactor_send(k->e->p, &k->wc, k->fd, k->in, k->have, 0), 0);
}

static void accepted(struct asx_completion *c, int64_t res, void *user)
{
	struct echo *e = user;
	struct conn *k;

	assert_true(res >= 0);
	assert_true(e->accepted < e->nclients);
	k = &e->srv[e->accepted++];
	k->e = e;
	k->fd = (int)res;
	asx_completion_init(&k->rc, srv_recvd, k);
	asx_completion_init(&k->wc, srv_sent, k);
	assert_int_equal(asx_proactor_recv(e->p, &k->rc, k->fd, k->in, MSG, 0), 0);
	if (e->accepted < e->nclients)
		assert_int_equal(asx_proactor_accept(e->p, &e->ac, e->lfd), 0);
}

static void cli_next(struct conn *k);

static void cli_recvd(struct asx_completion *c, int64_t res, void *user)
{
	struct conn *k = user;

	assert_true(res > 0);
	k->have += (size_t)res;
	if (k->have < MSG) {
		assert_int_equal(asx_proactor_recv(k->e->p, &k->rc, k->fd, k->in + k->have,
						   MSG - k->have, 0), 0);
		return;
	}
	/* the echo of message seq, whole, once, in order */
	assert_memory_equal(k->in, k->out, MSG);
	k->seq++;
	cli_next(k);
}

static void cli_sent(struct asx_completion *c, int64_t res, void *user)
{
	struct conn *k = user;

	assert_true(res > 0);
	k->sent += (size_t)res;
	if (k->sent < MSG)
		assert_int_equal(asx_proactor_send(k->e->p, &k->wc, k->fd, k->out + k->sent,
						   MSG - k->sent, 0), 0);
}

static void cli_next(struct conn *k)
{
	if (k->seq == (unsigned int)k->e->nmsgs) {
		close(k->fd);
		k->e->clients_done++;
		check_done(k->e);
		return;
	}
	fill(k->out, k->id, k->seq);
	k->have = k->sent = 0;
	/* the reply's recv is in flight before the request goes */
	assert_int_equal(asx_proactor_recv(k->e->p, &k->rc, k->fd, k->in, MSG, 0), 0);
	assert_int_equal(asx_proactor_send(k->e->p, &k->wc, k->fd, k->out, MSG, 0), 0);
}

static void connected(struct asx_completion *c, int64_t res, void *user)
{
	struct conn *k = user;

	assert_int_equal(res, 0);
	asx_completion_init(&k->rc, cli_recvd, k);
	asx_completion_init(&k->wc, cli_sent, k);
	cli_next(k);
}

/* A listener of @family; its address in @sa, @len. */
static int listener(int family, struct sockaddr_storage *sa, socklen_t *len)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(sa, 0, sizeof(*sa));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)sa;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*in);
	} else {
		struct sockaddr_un *un = (struct sockaddr_un *)sa;
		static int n;

		un->sun_family = AF_UNIX;
		/* abstract: nothing to unlink */
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
				   (size_t)snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1,
						    "asx-proactor-%d-%d", getpid(), n++));
	}
	assert_int_equal(bind(fd, (struct sockaddr *)sa, *len), 0);
	assert_int_equal(listen(fd, 256), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)sa, len), 0);
	return fd;
}

static void echo(void **state, int family, int nclients, int nmsgs)
{
	struct echo e = { .nclients = nclients, .nmsgs = nmsgs };
	struct sockaddr_storage sa;
	socklen_t len;

	e.p = open_be(state);
	e.srv = calloc((size_t)nclients, sizeof(*e.srv));
	e.cli = calloc((size_t)nclients, sizeof(*e.cli));
	assert_non_null(e.srv);
	assert_non_null(e.cli);
	e.lfd = listener(family, &sa, &len);
	asx_completion_init(&e.ac, accepted, &e);
	assert_int_equal(asx_proactor_accept(e.p, &e.ac, e.lfd), 0);
	for (int i = 0; i < nclients; i++) {
		struct conn *k = &e.cli[i];

		k->e = &e;
		k->id = i;
		k->client = true;
		k->fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		assert_true(k->fd >= 0);
		asx_completion_init(&k->rc, connected, k);
		assert_int_equal(asx_proactor_connect(e.p, &k->rc, k->fd, (struct sockaddr *)&sa,
						      len, 30 * ASX_NSEC_PER_SEC), 0);
	}
	run_until(e.p, &e.done);
	assert_int_equal(e.errors, 0);
	assert_int_equal(e.accepted, nclients);
	for (int i = 0; i < nclients; i++)
		assert_int_equal(e.cli[i].seq, (unsigned int)nmsgs);
	assert_int_equal(asx_proactor_pending(e.p), 0);
	assert_int_equal(asx_proactor_close(e.p), 0);
	close(e.lfd);
	free(e.srv);
	free(e.cli);
}

static void test_echo_tcp(void **state)
{
	echo(state, AF_INET, 64, 100);
}

static void test_echo_unix(void **state)
{
	echo(state, AF_UNIX, 64, 100);
}

/* ------------------------------------------------------------ reset */

struct reset {
	struct asx_proactor *p;
	int fd;
	int64_t send_res, recv_res;
	int sends, recvs;
	bool send_ended, recv_ended;
	char *big;
	char small[256];
	struct asx_completion sc, rc;
};

#define BIG (1 << 20)

static void reset_sent(struct asx_completion *c, int64_t res, void *user)
{
	struct reset *r = user;

	r->sends++;
	if (res > 0) {
		/* keep sending until the peer's reset ends it */
		assert_int_equal(asx_proactor_send(r->p, c, r->fd, r->big, BIG, 0), 0);
		return;
	}
	r->send_res = res;
	__atomic_store_n(&r->send_ended, true, __ATOMIC_RELEASE);
}

static void reset_recvd(struct asx_completion *c, int64_t res, void *user)
{
	struct reset *r = user;

	r->recvs++;
	if (res > 0) {
		assert_int_equal(asx_proactor_recv(r->p, c, r->fd, r->small, sizeof(r->small), 0),
				 0);
		return;
	}
	r->recv_res = res;
	__atomic_store_n(&r->recv_ended, true, __ATOMIC_RELEASE);
}

static void test_reset(void **state)
{
	struct reset r = { 0 };
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sockaddr_storage sa;
	socklen_t len;
	int lfd, cfd;
	bool both = false;

	r.p = open_be(state);
	r.big = calloc(1, BIG);
	assert_non_null(r.big);
	lfd = listener(AF_INET, &sa, &len);
	cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(cfd, (struct sockaddr *)&sa, len), 0);
	r.fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	assert_true(r.fd >= 0);
	asx_completion_init(&r.sc, reset_sent, &r);
	asx_completion_init(&r.rc, reset_recvd, &r);
	assert_int_equal(asx_proactor_recv(r.p, &r.rc, r.fd, r.small, sizeof(r.small), 0), 0);
	assert_int_equal(asx_proactor_send(r.p, &r.sc, r.fd, r.big, BIG, 0), 0);
	/* the peer sends a little, reads nothing, and resets mid-transfer */
	assert_int_equal(write(cfd, "hello", 5), 5);
	for (int i = 0; i < 5; i++)
		asx_proactor_run_once(r.p, asx_deadline(&(struct timespec){ 0 }, 20000000));
	assert_int_equal(setsockopt(cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(cfd);
	while (!both) {
		run_until(r.p, &r.send_ended);
		run_until(r.p, &r.recv_ended);
		both = r.send_ended && r.recv_ended;
	}
	print_message("reset: send %lld after %d, recv %lld after %d\n", (long long)r.send_res,
		      r.sends, (long long)r.recv_res, r.recvs);
	assert_true(r.send_res == -ECONNRESET || r.send_res == -EPIPE);
	assert_true(r.recv_res == -ECONNRESET || r.recv_res == 0);
	assert_true(r.recvs >= 1);
	assert_int_equal(asx_proactor_pending(r.p), 0);
	assert_int_equal(asx_proactor_close(r.p), 0);
	close(r.fd);
	close(lfd);
	free(r.big);
}

/* ------------------------------------------------------------ cancel */

static void run_calls(struct asx_proactor *p, struct rec *r, int n)
{
	uint64_t end = asx_now_ns() + LOOP_S * ASX_NSEC_PER_SEC;
	struct timespec dl;

	while (__atomic_load_n(&r->calls, __ATOMIC_ACQUIRE) < n) {
		assert_true(asx_proactor_run_once(p, asx_deadline(&dl, 100000000)) >= 0);
		if (asx_now_ns() > end)
			fail_msg("watchdog: %d of %d completions in %d s", r->calls, n, LOOP_S);
	}
}

static void test_cancel(void **state)
{
	struct asx_proactor *p = open_be(state);
	struct rec rr = { 0 }, ra = { 0 }, rt = { 0 }, rw = { 0 };
	struct asx_completion cr = ASX_COMPLETION_INIT(record, &rr);
	struct asx_completion ca = ASX_COMPLETION_INIT(record, &ra);
	struct asx_completion ct = ASX_COMPLETION_INIT(record, &rt);
	struct asx_completion cw = ASX_COMPLETION_INIT(record, &rw);
	struct sockaddr_storage sa;
	socklen_t len;
	char buf[16];
	int sv[2], lfd;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	lfd = listener(AF_INET, &sa, &len);
	assert_int_equal(asx_proactor_cancel(p, &cr), -ENOENT);
	assert_int_equal(asx_proactor_recv(p, &cr, sv[0], buf, sizeof(buf), 0), 0);
	assert_int_equal(asx_proactor_recv(p, &cr, sv[0], buf, sizeof(buf), 0), -EBUSY);
	assert_int_equal(asx_proactor_accept(p, &ca, lfd), 0);
	assert_int_equal(asx_proactor_timer(p, &ct, 3600 * ASX_NSEC_PER_SEC), 0);
	assert_int_equal(asx_proactor_read(p, &cw, sv[1], buf, sizeof(buf)), 0);
	assert_int_equal(asx_proactor_pending(p), 4);
	/* let them reach the kernel, then cancel each */
	asx_proactor_run_once(p, ASX_DEADLINE_NOW);
	assert_int_equal(asx_proactor_cancel(p, &cr), 0);
	assert_int_equal(asx_proactor_cancel(p, &ca), 0);
	assert_int_equal(asx_proactor_cancel(p, &ct), 0);
	assert_int_equal(asx_proactor_cancel(p, &cw), 0);
	assert_int_equal(asx_proactor_cancel(p, &cw), 0);	/* asked twice: one callback */
	run_calls(p, &rr, 1);
	run_calls(p, &ra, 1);
	run_calls(p, &rt, 1);
	run_calls(p, &rw, 1);
	assert_int_equal(rr.res, -ECANCELED);
	assert_int_equal(ra.res, -ECANCELED);
	assert_int_equal(rt.res, -ECANCELED);
	assert_int_equal(rw.res, -ECANCELED);
	/* nothing more comes */
	asx_proactor_run_once(p, asx_deadline(&(struct timespec){ 0 }, 50000000));
	assert_int_equal(rr.calls + ra.calls + rt.calls + rw.calls, 4);
	assert_int_equal(asx_proactor_cancel(p, &cr), -ENOENT);
	assert_int_equal(asx_proactor_pending(p), 0);

	/* the handler is reusable: a recv that completes normally */
	assert_int_equal(asx_proactor_recv(p, &cr, sv[0], buf, sizeof(buf), 0), 0);
	assert_int_equal(write(sv[1], "abc", 3), 3);
	run_calls(p, &rr, 2);
	assert_int_equal(rr.res, 3);
	assert_memory_equal(buf, "abc", 3);

	/* close with operations in flight: each completes, -ECANCELED, in close */
	assert_int_equal(asx_proactor_recv(p, &cr, sv[0], buf, sizeof(buf), 0), 0);
	assert_int_equal(asx_proactor_accept(p, &ca, lfd), 0);
	assert_int_equal(asx_proactor_timer(p, &ct, 3600 * ASX_NSEC_PER_SEC), 0);
	asx_proactor_run_once(p, ASX_DEADLINE_NOW);
	assert_int_equal(asx_proactor_close(p), 0);
	assert_int_equal(rr.calls, 3);
	assert_int_equal(ra.calls, 2);
	assert_int_equal(rt.calls, 2);
	assert_int_equal(rr.res, -ECANCELED);
	assert_int_equal(ra.res, -ECANCELED);
	assert_int_equal(rt.res, -ECANCELED);
	close(sv[0]);
	close(sv[1]);
	close(lfd);
}

/*
 * A connect that cannot finish: refused; timed out against a listener
 * whose accept queue is full (the kernel drops the SYNs); cancelled.
 */
static void test_connect(void **state)
{
	struct asx_proactor *p = open_be(state);
	struct rec r = { 0 };
	struct asx_completion c = ASX_COMPLETION_INIT(record, &r);
	struct sockaddr_storage sa;
	socklen_t len;
	int lfd, fd, fill[2];
	uint64_t t0;

	/* refused: a port nobody listens on any more */
	lfd = listener(AF_INET, &sa, &len);
	close(lfd);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(asx_proactor_connect(p, &c, fd, (struct sockaddr *)&sa, len,
					      10 * ASX_NSEC_PER_SEC), 0);
	run_calls(p, &r, 1);
	assert_int_equal(r.res, -ECONNREFUSED);
	close(fd);

	/* a full accept queue: backlog 0, two connections nobody accepts */
	lfd = listener(AF_INET, &sa, &len);
	assert_int_equal(listen(lfd, 0), 0);
	for (int i = 0; i < 2; i++) {
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		connect(fill[i], (struct sockaddr *)&sa, len);
	}
	usleep(100000);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	t0 = asx_now_ns();
	assert_int_equal(asx_proactor_connect(p, &c, fd, (struct sockaddr *)&sa, len,
					      200000000), 0);
	run_calls(p, &r, 2);
	print_message("connect to a full queue: %lld after %llu ms\n", (long long)r.res,
		      (unsigned long long)((r.at - t0) / 1000000));
	assert_int_equal(r.res, -ETIMEDOUT);
	assert_true(r.at - t0 >= 200000000);
	close(fd);

	/* a cancelled connect is -ECANCELED, not -ETIMEDOUT */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(asx_proactor_connect(p, &c, fd, (struct sockaddr *)&sa, len,
					      30 * ASX_NSEC_PER_SEC), 0);
	asx_proactor_run_once(p, asx_deadline(&(struct timespec){ 0 }, 20000000));
	assert_int_equal(asx_proactor_cancel(p, &c), 0);
	run_calls(p, &r, 3);
	assert_int_equal(r.res, -ECANCELED);
	close(fd);
	close(fill[0]);
	close(fill[1]);
	close(lfd);
	assert_int_equal(asx_proactor_pending(p), 0);
	assert_int_equal(asx_proactor_close(p), 0);
}

/* ------------------------------------------------------------ timers */

#define NTIMERS 64

struct ptimer {
	struct asx_completion c;
	uint64_t deadline;
	int order;
	int64_t res;
	int *next;
	uint64_t at;
};

static void timer_done(struct asx_completion *c, int64_t res, void *user)
{
	struct ptimer *t = user;

	t->res = res;
	t->at = asx_now_ns();
	t->order = (*t->next)++;
}

static void test_timers(void **state)
{
	struct asx_proactor *p = open_be(state);
	struct ptimer t[NTIMERS];
	int next = 0, n;
	uint64_t start = asx_now_ns();
	struct timespec dl;
	uint64_t end;

	/* distinct delays, 2 ms apart, started in a shuffled order */
	for (int i = 0; i < NTIMERS; i++) {
		int k = (i * 37) % NTIMERS;
		uint64_t d = 20000000 + (uint64_t)k * 2000000;

		t[i] = (struct ptimer){ .next = &next, .order = -1, .deadline = start + d };
		asx_completion_init(&t[i].c, timer_done, &t[i]);
		assert_int_equal(asx_proactor_timer(p, &t[i].c, d - (asx_now_ns() - start)), 0);
	}
	end = asx_now_ns() + LOOP_S * ASX_NSEC_PER_SEC;
	while (next < NTIMERS) {
		n = asx_proactor_run_once(p, asx_deadline(&dl, 100000000));
		assert_true(n >= 0);
		assert_true(asx_now_ns() < end);
	}
	for (int i = 0; i < NTIMERS; i++) {
		assert_int_equal(t[i].res, 0);
		assert_true(t[i].at >= t[i].deadline);	/* never early */
		for (int j = 0; j < NTIMERS; j++)
			if (t[j].deadline < t[i].deadline)
				assert_true(t[j].order < t[i].order);
	}
	assert_int_equal(asx_proactor_pending(p), 0);
	assert_int_equal(asx_proactor_close(p), 0);
}

/* ------------------------------------------------------------ post */

#define POSTERS 4
#define POSTS 2000

struct posted {
	struct asx_completion c[POSTERS * POSTS];
	int seen[POSTERS * POSTS];
	int total;
	struct asx_proactor *p;
	struct asx_completion stop;
};

static void post_done(struct asx_completion *c, int64_t res, void *user)
{
	struct posted *ps = user;

	CHECK(res >= 0 && res < POSTERS * POSTS);
	CHECK(c == &ps->c[res]);
	ps->seen[res]++;
	if (++ps->total == POSTERS * POSTS)
		asx_proactor_stop(ps->p);
}

struct poster {
	struct posted *ps;
	int id;
};

static void *poster_main(void *arg)
{
	struct poster *pt = arg;

	for (int i = 0; i < POSTS; i++) {
		int k = pt->id * POSTS + i;

		CHECK(asx_proactor_post(pt->ps->p, &pt->ps->c[k], k) == 0);
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

static void *runner_main(void *arg)
{
	struct posted *ps = arg;

	CHECK(asx_proactor_run(ps->p) == 0);
	return NULL;
}

static void test_post(void **state)
{
	struct posted *ps = calloc(1, sizeof(*ps));
	struct poster pt[POSTERS];
	pthread_t th[POSTERS], run;

	assert_non_null(ps);
	ps->p = open_be(state);
	for (int i = 0; i < POSTERS * POSTS; i++)
		asx_completion_init(&ps->c[i], post_done, ps);
	assert_int_equal(pthread_create(&run, NULL, runner_main, ps), 0);
	for (int i = 0; i < POSTERS; i++) {
		pt[i] = (struct poster){ .ps = ps, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, poster_main, &pt[i]), 0);
	}
	for (int i = 0; i < POSTERS; i++)
		join_or_die(th[i], "a poster");
	join_or_die(run, "the loop (asx_proactor_run)");
	assert_threads_ok();
	/* every post ran once */
	assert_int_equal(ps->total, POSTERS * POSTS);
	for (int i = 0; i < POSTERS * POSTS; i++)
		assert_int_equal(ps->seen[i], 1);
	/* a busy handler is refused; run from a callback is -EDEADLK */
	assert_int_equal(asx_proactor_pending(ps->p), 0);
	/* stop before run: run returns at once */
	asx_proactor_stop(ps->p);
	assert_int_equal(asx_proactor_run(ps->p), 0);
	assert_int_equal(asx_proactor_close(ps->p), 0);
	free(ps);
}

/* ------------------------------------------------------------ race */

/*
 * Other threads start timers and recvs and cancel them while the loop
 * runs and bytes arrive: every start gets one callback (0, a byte, or
 * -ECANCELED), and every byte written is received once or still unread.
 */
#define RACERS 2
#define RACE_OPS 3000

struct race {
	struct asx_proactor *p;
	struct asx_completion c[RACERS][RACE_OPS];
	int seen[RACERS][RACE_OPS];
	int64_t res[RACERS][RACE_OPS];
	char buf[RACERS][RACE_OPS];
	int sv[RACERS][2];
	int written[RACERS];
	int total;
};

struct racer {
	struct race *r;
	int id;
};

static void race_done(struct asx_completion *c, int64_t res, void *user)
{
	struct race *r = user;
	size_t k = (size_t)(c - &r->c[0][0]);

	CHECK(k < RACERS * RACE_OPS);
	r->seen[k / RACE_OPS][k % RACE_OPS]++;
	r->res[k / RACE_OPS][k % RACE_OPS] = res;
	__atomic_add_fetch(&r->total, 1, __ATOMIC_RELEASE);
}

static void *racer_main(void *arg)
{
	struct racer *rc = arg;
	struct race *r = rc->r;
	int i = rc->id, ret;

	for (int k = 0; k < RACE_OPS; k++) {
		struct asx_completion *c = &r->c[i][k];

		if (k % 2 == 0)
			ret = asx_proactor_timer(r->p, c, (uint64_t)(k % 7) * 20000);
		else
			ret = asx_proactor_recv(r->p, c, r->sv[i][0], &r->buf[i][k], 1, 0);
		CHECK(ret == 0);
		if (k % 3 == 0) {
			ret = asx_proactor_cancel(r->p, c);
			CHECK(ret == 0 || ret == -ENOENT);
		}
		if (k % 4 == 1) {
			CHECK(write(r->sv[i][1], "x", 1) == 1);
			r->written[i]++;
		}
	}
	/* the recvs no byte will reach */
	for (int k = 1; k < RACE_OPS; k += 2) {
		ret = asx_proactor_cancel(r->p, &r->c[i][k]);
		CHECK(ret == 0 || ret == -ENOENT);
	}
	return NULL;
}

static void *race_loop(void *arg)
{
	struct race *r = arg;

	CHECK(asx_proactor_run(r->p) == 0);
	return NULL;
}

static void race(void **state, unsigned int entries)
{
	struct race *r = calloc(1, sizeof(*r));
	struct racer rc[RACERS];
	pthread_t th[RACERS], loop;
	uint64_t end;

	assert_non_null(r);
	r->p = open_be_n(state, entries);
	for (int i = 0; i < RACERS; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r->sv[i]), 0);
		for (int k = 0; k < RACE_OPS; k++)
			asx_completion_init(&r->c[i][k], race_done, r);
	}
	assert_int_equal(pthread_create(&loop, NULL, race_loop, r), 0);
	for (int i = 0; i < RACERS; i++) {
		rc[i] = (struct racer){ .r = r, .id = i };
		assert_int_equal(pthread_create(&th[i], NULL, racer_main, &rc[i]), 0);
	}
	for (int i = 0; i < RACERS; i++)
		join_or_die(th[i], "a racer");
	end = asx_now_ns() + LOOP_S * ASX_NSEC_PER_SEC;
	while (__atomic_load_n(&r->total, __ATOMIC_ACQUIRE) < RACERS * RACE_OPS &&
	       asx_now_ns() < end)
		usleep(1000);
	asx_proactor_stop(r->p);
	join_or_die(loop, "the loop");
	assert_threads_ok();
	assert_int_equal(r->total, RACERS * RACE_OPS);
	for (int i = 0; i < RACERS; i++) {
		int got = 0, left = 0, cancelled = 0;
		char b[RACE_OPS];
		ssize_t n;

		for (int k = 0; k < RACE_OPS; k++) {
			assert_int_equal(r->seen[i][k], 1);
			if (r->res[i][k] == -ECANCELED)
				cancelled++;
			else if (k % 2)
				assert_int_equal(r->res[i][k], 1), got++;
			else
				assert_int_equal(r->res[i][k], 0);
		}
		n = recv(r->sv[i][0], b, sizeof(b), MSG_DONTWAIT);
		left = n > 0 ? (int)n : 0;
		/* every byte once: received, or still in the socket */
		assert_int_equal(got + left, r->written[i]);
		assert_true(cancelled > 0);
		close(r->sv[i][0]);
		close(r->sv[i][1]);
	}
	assert_int_equal(asx_proactor_pending(r->p), 0);
	assert_int_equal(asx_proactor_close(r->p), 0);
	free(r);
}

static void test_race(void **state)
{
	race(state, 0);
}

/* a queue the racers fill: their starts and cancels wait for the loop */
static void test_race_small(void **state)
{
	race(state, 8);
}

/*
 * A small ring, filled by threads that are not the loop and then exit:
 * their starts and cancels wait for the loop (a request submitted by a
 * thread that exits may never complete nor be cancelled), and every
 * start still gets its one callback; every byte is received once.
 */
#define BL_OPS 96

struct backlog {
	struct asx_proactor *p;
	struct asx_completion c[BL_OPS];
	char buf[BL_OPS];
	int64_t res[BL_OPS];
	int seen[BL_OPS];
	int sv[2];
	int total;
	bool all;
};

static void bl_done(struct asx_completion *c, int64_t res, void *user)
{
	struct backlog *b = user;
	size_t k = (size_t)(c - b->c);

	CHECK(k < BL_OPS);
	b->seen[k]++;
	b->res[k] = res;
	if (++b->total == BL_OPS)
		__atomic_store_n(&b->all, true, __ATOMIC_RELEASE);
}

static void *bl_starter(void *arg)
{
	struct backlog *b = arg;

	for (int k = 0; k < BL_OPS; k++)
		CHECK(asx_proactor_recv(b->p, &b->c[k], b->sv[0], &b->buf[k], 1, 0) == 0);
	return NULL;
}

static void *bl_canceller(void *arg)
{
	struct backlog *b = arg;

	/* the odd ones, from the end: some still wait, some are queued */
	for (int k = BL_OPS - 1; k >= 0; k -= 2)
		CHECK(asx_proactor_cancel(b->p, &b->c[k]) == 0);
	return NULL;
}

static void test_backlog(void **state)
{
	struct backlog *b = calloc(1, sizeof(*b));
	int got = 0, cancelled = 0, left;
	pthread_t th;
	char rest[BL_OPS];

	assert_non_null(b);
	b->p = open_be_n(state, 4);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b->sv), 0);
	for (int k = 0; k < BL_OPS; k++)
		asx_completion_init(&b->c[k], bl_done, b);
	assert_int_equal(pthread_create(&th, NULL, bl_starter, b), 0);
	join_or_die(th, "the starter");
	assert_int_equal(asx_proactor_pending(b->p), BL_OPS);
	/* a third as many bytes as recvs: some recvs get one, others wait */
	for (int k = 0; k < BL_OPS / 3; k++)
		assert_int_equal(write(b->sv[1], "y", 1), 1);
	assert_int_equal(pthread_create(&th, NULL, bl_canceller, b), 0);
	join_or_die(th, "the canceller");
	/* the rest from this thread, before the loop ever ran */
	for (int k = 0; k < BL_OPS; k += 2)
		assert_int_equal(asx_proactor_cancel(b->p, &b->c[k]), 0);
	run_until(b->p, &b->all);
	for (int k = 0; k < BL_OPS; k++) {
		assert_int_equal(b->seen[k], 1);
		if (b->res[k] == -ECANCELED)
			cancelled++;
		else
			assert_int_equal(b->res[k], 1), got++;
	}
	left = (int)recv(b->sv[0], rest, sizeof(rest), MSG_DONTWAIT);
	left = left > 0 ? left : 0;
	assert_int_equal(got + left, BL_OPS / 3);
	assert_true(cancelled > 0);
	assert_threads_ok();
	assert_int_equal(asx_proactor_pending(b->p), 0);
	assert_int_equal(asx_proactor_close(b->p), 0);
	close(b->sv[0]);
	close(b->sv[1]);
	free(b);
}

/* ------------------------------------------------------------ misc */

struct nest {
	struct asx_proactor *p;
	int run_ret, post_ret;
	bool done;
};

static void nested(struct asx_completion *c, int64_t res, void *user)
{
	struct nest *n = user;

	if (res != 1)
		return;
	n->run_ret = asx_proactor_run_once(n->p, ASX_DEADLINE_NOW);
	n->post_ret = asx_proactor_post(n->p, c, 0);	/* c is the caller's again */
	n->done = true;
}

static void test_nested_and_reuse(void **state)
{
	struct nest n = { 0 };
	struct asx_completion c = ASX_COMPLETION_INIT(nested, &n);

	n.p = open_be(state);
	assert_int_equal(asx_proactor_post(n.p, &c, 1), 0);
	assert_int_equal(asx_proactor_post(n.p, &c, 1), -EBUSY);
	run_until(n.p, &n.done);
	assert_int_equal(n.run_ret, -EDEADLK);
	assert_int_equal(n.post_ret, 0);
	/* the re-post completes too (res 0) */
	assert_int_equal(asx_proactor_pending(n.p), 1);
	assert_int_equal(asx_proactor_run_once(n.p, ASX_DEADLINE_NOW), 1);
	assert_int_equal(asx_proactor_pending(n.p), 0);
	assert_int_equal(asx_proactor_close(n.p), 0);
}

/* readv/writev and read/write on a pipe and a regular file */
static void test_vectors(void **state)
{
	struct asx_proactor *p = open_be(state);
	struct rec r = { 0 };
	struct asx_completion c = ASX_COMPLETION_INIT(record, &r);
	char a[4], b[6], path[] = "/tmp/asx-proactor-XXXXXX";
	struct iovec wv[2] = { { "abcd", 4 }, { "efghij", 6 } };
	struct iovec rv[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	int pfd[2], ffd;

	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	assert_int_equal(asx_proactor_readv(p, &c, pfd[0], rv, 2), 0);
	assert_int_equal(asx_proactor_readv(p, &c, pfd[0], rv, 2), -EBUSY);
	asx_proactor_run_once(p, ASX_DEADLINE_NOW);
	assert_int_equal(r.calls, 0);
	assert_int_equal(write(pfd[1], "abcdefghij", 10), 10);
	run_calls(p, &r, 1);
	assert_int_equal(r.res, 10);
	assert_memory_equal(a, "abcd", 4);
	assert_memory_equal(b, "efghij", 6);
	assert_int_equal(asx_proactor_writev(p, &c, pfd[1], wv, 2), 0);
	run_calls(p, &r, 2);
	assert_int_equal(r.res, 10);
	assert_int_equal(read(pfd[0], a, 4), 4);
	assert_memory_equal(a, "abcd", 4);
	close(pfd[0]);
	close(pfd[1]);

	ffd = mkostemp(path, O_CLOEXEC);
	assert_true(ffd >= 0);
	unlink(path);
	assert_int_equal(asx_proactor_write(p, &c, ffd, "0123456789", 10), 0);
	run_calls(p, &r, 3);
	assert_int_equal(r.res, 10);
	assert_int_equal(lseek(ffd, 2, SEEK_SET), 2);
	assert_int_equal(asx_proactor_read(p, &c, ffd, a, sizeof(a)), 0);
	run_calls(p, &r, 4);
	assert_int_equal(r.res, 4);
	assert_memory_equal(a, "2345", 4);
	close(ffd);
	assert_int_equal(asx_proactor_close(p), 0);
}

static void watchdog(int sig)
{
	static const char m[] = "test_proactor: watchdog: the program ran too long\n";

	(void)sig;
	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

#define BOTH(t)								\
	cmocka_unit_test_prestate(t, (void *)&be_uring),		\
	cmocka_unit_test_prestate(t, (void *)&be_reactor)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open),
		cmocka_unit_test(test_forbidden),
		BOTH(test_echo_tcp),
		BOTH(test_echo_unix),
		BOTH(test_reset),
		BOTH(test_cancel),
		BOTH(test_connect),
		BOTH(test_timers),
		BOTH(test_post),
		BOTH(test_race),
		BOTH(test_race_small),
		BOTH(test_backlog),
		BOTH(test_nested_and_reuse),
		BOTH(test_vectors),
	};

	signal(SIGALRM, watchdog);
	alarm(600);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
