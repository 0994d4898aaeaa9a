// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_uthread.c - libasx's blocking calls on ASC user threads against
 * the same calls on pthreads (issue 28, "one thread model").
 *
 * `asx-bench asc-sync`, three rows, each measured in one run, the
 * contenders alternating who goes first, medians of --runs:
 *   msgq     a 1 -> 1 hand-off through one asx_msgq whose high water mark
 *            is one message (each enqueue waits until the consumer took the
 *            one before): two ASC user threads on one VP against two
 *            pthreads.  Key msgq_asc_over_pthread.
 *   mutex    4 threads contending one asx_mutex (lock, increment, unlock):
 *            4 ASC user threads on 2 VPs against 4 pthreads.  Key
 *            mutex_asc_over_pthread.
 *   uncont   lock + unlock on one thread, nobody else: asx_mutex against
 *            pthread_mutex_t.  Key mutex_uncontended_ratio_vs_pthread.
 *
 * `asx-bench echo`: an echo server of 100 TCP connections on loopback
 * (64-byte messages, one outstanding per connection, a closed loop driven
 * by one client thread over epoll), served three ways:
 *   reactor       one pthread running the Reactor, handlers inline
 *   pool_pthread  the Reactor on a pthread plus a pool of 4 pthreads
 *   pool_asc      the Reactor on an ASC user thread plus a pool of 4 user
 *                 threads of the same ASC (one VP: 004 section 4.1.3's
 *                 Reactor plus thread-pool ASC)
 * Round trips per second and the 99th percentile round-trip time.
 */
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/msgq.h>
#include <asx/reactor.h>
#include <asx/sock.h>
#include <asx/sync.h>
#include "bench.h"

/* ---------------------------------------------------------------- threads */

/* Run @fn(@arg) on @n threads (bench_run_threads(), the ASC capped at
 * @nvps VPs); the elapsed ns, or 0 on failure. */
static uint64_t run_threads(bool asc, unsigned int nvps, unsigned int n,
			    void *(*fn)(void *), void *arg)
{
	void *args[BENCH_THREADS_MAX];
	uint64_t ns;

	for (unsigned int i = 0; i < n && i < BENCH_THREADS_MAX; i++)
		args[i] = arg;
	return bench_run_threads(asc, nvps, nvps, n, fn, args, &ns) ? 0 : ns;
}

/* ---------------------------------------------------------------- msgq hand-off */

struct handoff {
	struct asx_msgq *q;
	uint64_t n;
	int who;		/* atomic: the next thread is the producer (0) */
	int err;
};

static void *handoff_main(void *arg)
{
	struct handoff *h = arg;
	struct asx_msg *m;
	uint64_t i, v;

	if (__atomic_fetch_add(&h->who, 1, __ATOMIC_RELAXED) == 0) {
		for (i = 0; i < h->n; i++) {
			m = asx_msg_alloc(64, ASX_MSG_DATA);
			if (!m)
				abort();
			memcpy(asx_msg_wr(m), &i, sizeof(i));
			asx_msg_commit(m, 64);
			if (asx_msgq_enqueue(h->q, m, 0, NULL))
				abort();
		}
		return NULL;
	}
	for (i = 0; i < h->n; i++) {
		if (asx_msgq_dequeue(h->q, &m, 0, NULL))
			abort();
		memcpy(&v, asx_msg_rd(m), sizeof(v));
		if (v != i)
			h->err = -EPROTO;	/* lost or reordered */
		asx_msg_free(m);
	}
	return NULL;
}

/* Hand-offs per second, or a negative errno. */
static double handoff_once(bool asc, uint64_t n)
{
	struct handoff h = { .n = n };
	uint64_t ns;

	/* full at one message: the producer waits for each to be taken */
	if (asx_msgq_create(&h.q, 1, 1))
		return -ENOMEM;
	ns = run_threads(asc, 1, 2, handoff_main, &h);
	asx_msgq_destroy(h.q);
	if (!ns || h.err)
		return h.err ? h.err : -EIO;
	return (double)n * 1e9 / (double)ns;
}

/* ---------------------------------------------------------------- mutex */

struct contend {
	struct asx_mutex m;
	long n;
	int ready;		/* atomic: threads at the gate */
	long counter;
};

static void *contend_main(void *arg)
{
	struct contend *c = arg;

	/* the gate: all four start together, so they do contend */
	__atomic_add_fetch(&c->ready, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&c->ready, __ATOMIC_ACQUIRE) < 4) {
		if (asx_asc_thread_self())
			asx_asc_thread_yield();
		else
			sched_yield();
	}
	for (long i = 0; i < c->n; i++) {
		asx_mutex_lock(&c->m);
		c->counter++;
		asx_mutex_unlock(&c->m);
	}
	return NULL;
}

/* 4 threads (user threads on 2 VPs, or pthreads): lock cycles per second. */
static double contend_once(bool asc, long n)
{
	struct contend c = { .n = n };
	uint64_t ns;

	asx_mutex_init(&c.m);
	ns = run_threads(asc, 2, 4, contend_main, &c);
	if (!ns || c.counter != 4 * n)
		return -EPROTO;	/* the lock did not exclude */
	return (double)(4 * n) * 1e9 / (double)ns;
}

/* One thread, nobody else: lock + unlock cycles per second. */
static double uncontended_once(bool asx, long n)
{
	static struct asx_mutex am = ASX_MUTEX_INITIALIZER;
	static pthread_mutex_t pm = PTHREAD_MUTEX_INITIALIZER;
	uint64_t t0 = bench_now_ns(), t1;

	if (asx) {
		for (long i = 0; i < n; i++) {
			asx_mutex_lock(&am);
			asx_mutex_unlock(&am);
		}
	} else {
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&pm);
			pthread_mutex_unlock(&pm);
		}
	}
	t1 = bench_now_ns();
	return (double)n * 1e9 / (double)(t1 - t0);
}

/* ---------------------------------------------------------------- asc-sync */

struct row {
	const char *name, *experiment, *metric, *unit, *key_a, *key_b, *key_ratio;
	const char *sched_a, *sched_b;	/* what the threads are (the sched field) */
	const char *impl_a, *impl_b;
	unsigned int threads, pes;
	size_t size;
};

/*
 * Run @once for both contenders @runs times, alternating who goes first;
 * record both medians (with their runs) and the ratio a / b.
 */
static int measure_row(struct bench_ctx *ctx, const struct row *w,
		       double (*once)(bool a, long n), long n)
{
	double *a = calloc((size_t)ctx->runs, sizeof(double));
	double *b = calloc((size_t)ctx->runs, sizeof(double));
	double ma, mb;
	char s1[32], s2[32];
	int i, ret = 0;

	if (!a || !b) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < ctx->runs; i++) {
		bool first = i & 1;

		double x = once(first, n), y = once(!first, n);

		a[i] = first ? x : y;
		b[i] = first ? y : x;
		if (a[i] < 0 || b[i] < 0) {
			ret = (int)(a[i] < 0 ? a[i] : b[i]);
			goto out;
		}
	}
	ma = bench_median(a, (size_t)ctx->runs);
	mb = bench_median(b, (size_t)ctx->runs);
	bench_say(ctx, "  %-34s %12s %12s %8.2f\n", w->name, bench_si(s1, sizeof(s1), ma),
		  bench_si(s2, sizeof(s2), mb), ma / mb);
#define REC(k, sch, im, v, r, u) bench_record(ctx, &(struct bench_rec){			\
		.key = k, .experiment = w->experiment, .sched = sch, .impl = im,	\
		.metric = (r) ? w->metric : "ratio", .value = v, .runs = r,		\
		.nruns = (r) ? (size_t)ctx->runs : 0, .unit = u, .pes = w->pes,		\
		.threads = w->threads, .size = w->size })
	REC(w->key_a, w->sched_a, w->impl_a, ma, a, w->unit);
	REC(w->key_b, w->sched_b, w->impl_b, mb, b, w->unit);
	REC(w->key_ratio, w->sched_a, w->impl_a, ma / mb, NULL, "x");
#undef REC
out:
	free(a);
	free(b);
	return ret;
}

static double handoff_row(bool asc, long n)
{
	return handoff_once(asc, (uint64_t)n);
}

static int bench_asc_sync(struct bench_ctx *ctx, int argc, char **argv)
{
	static const struct row rows[] = {
		{ "msgq 1->1 hand-off, 64 B", "msgq_handoff", "msgs_per_s", "msg/s",
		  "msgq_handoff_asc_msgs_per_s", "msgq_handoff_pthread_msgs_per_s",
		  "msgq_asc_over_pthread", "asc", "pthread", "asx", "asx", 2, 1, 64 },
		{ "asx_mutex, 4 threads contending", "mutex_contended", "ops_per_s", "ops/s",
		  "mutex_contended_asc_ops_per_s", "mutex_contended_pthread_ops_per_s",
		  "mutex_asc_over_pthread", "asc", "pthread", "asx", "asx", 4, 2, 0 },
		{ "lock+unlock, uncontended", "mutex_uncontended", "ops_per_s", "ops/s",
		  "mutex_uncontended_asx_ops_per_s", "mutex_uncontended_pthread_ops_per_s",
		  "mutex_uncontended_ratio_vs_pthread", "pthread", "pthread", "asx", "pthread",
		  1, 1, 0 },
	};
	long n = ctx->quick ? 20000 : ctx->full ? 1000000 : 200000;
	int opt, ret;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n')
			return -EINVAL;
		n = strtol(optarg, NULL, 0);
	}
	if (n < 1)
		return -EINVAL;
	bench_say(ctx, "asc-sync: n = %ld: n / 10 hand-offs, 4 x 20n lock cycles, 50n uncontended; "
		  "median of %d runs "
		  "(a = ASC user threads, or asx_mutex; b = pthreads, or pthread_mutex)\n",
		  n, ctx->runs);
	bench_say(ctx, "  %-34s %12s %12s %8s\n", "row", "a", "b", "a / b");
	/* sizes for about 0.3 s a run on 2 busy CPUs (the pthread hand-off is
	 * a futex wake-up each, ~20 us here) */
	ret = measure_row(ctx, &rows[0], handoff_row, n / 10);
	if (!ret)
		ret = measure_row(ctx, &rows[1], contend_once, 20 * n);
	if (!ret)
		ret = measure_row(ctx, &rows[2], uncontended_once, 50 * n);
	return ret;
}

BENCH_COMMAND(asc_sync, "asc-sync",
	      "msgq hand-off and asx_mutex on ASC user threads vs pthreads; uncontended lock",
	      "[-n OPERATIONS]", bench_asc_sync)

/* ---------------------------------------------------------------- echo */

#define ECHO_MSG 64
#define ECHO_POOL 4
#define ECHO_TP 2		/* threads of the thread-pool Reactor (leader/followers) */

enum echo_kind { ECHO_REACTOR, ECHO_POOL_PTHREAD, ECHO_POOL_ASC, ECHO_TP_PTHREAD, NECHO };
static const char *const echo_name[NECHO] = { "reactor", "pool_pthread", "pool_asc", "tp" };
static const char *const echo_sched[NECHO] = { "pthread", "pthread", "asc", "pthread" };
static const unsigned int echo_threads[NECHO] = { 1, ECHO_POOL, ECHO_POOL, ECHO_TP };

static int echo_input(struct asx_event_handler *eh, int fd)
{
	struct asx_sock_stream s = { .sock.fd = fd };
	char buf[4096];
	ssize_t n;

	(void)eh;
	n = asx_sock_stream_recv(&s, buf, sizeof(buf), NULL);
	if (n <= 0)
		return -1;
	return asx_sock_stream_send_n(&s, buf, (size_t)n, NULL, NULL) == n ? 0 : -1;
}

static const struct asx_event_handler_ops echo_ops = { .handle_input = echo_input };

struct echo_srv {
	struct asx_reactor *r;
	enum echo_kind kind;
	struct asx_asc *asc;
	int rc;
};

static void *echo_dispatch(void *arg)
{
	struct echo_srv *s = arg;

	if (s->kind == ECHO_POOL_ASC) {
		struct asx_prio_qos q = ASX_PRIO_QOS(0);
		ASX_OPTS(struct asx_reactor_pool_opts, o, .nthreads = ECHO_POOL, .asc = s->asc,
			 .qos = &q.qos);

		s->rc = asx_reactor_pool_start(s->r, &o);
	} else if (s->kind == ECHO_POOL_PTHREAD) {
		ASX_OPTS(struct asx_reactor_pool_opts, o, .nthreads = ECHO_POOL);

		s->rc = asx_reactor_pool_start(s->r, &o);
	}
	if (!s->rc) {
		int rc = asx_reactor_run(s->r);	/* ECHO_TP_PTHREAD: by several threads */

		if (rc)
			__atomic_store_n(&s->rc, rc, __ATOMIC_RELAXED);
	}
	if (s->kind == ECHO_POOL_ASC || s->kind == ECHO_POOL_PTHREAD)
		(void)asx_reactor_pool_stop(s->r);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct echo_res {
	double rtps;		/* round trips per second */
	double p99_us;
	unsigned int served;	/* connections with at least one round trip */
};

/* The clients: @nc connections, each one message outstanding, for @ms. */
static int echo_clients(const int *fd, unsigned int nc, unsigned int ms, struct echo_res *res)
{
	struct epoll_event ev, evs[64];
	uint64_t *sent = calloc(nc, sizeof(*sent)), *rtt, nrtt = 0, cap = 1u << 22;
	unsigned int *got = calloc(nc, sizeof(*got)), *trips = calloc(nc, sizeof(*trips));
	char msg[ECHO_MSG] = { 0 }, buf[ECHO_MSG];
	uint64_t t0, end, now;
	int ep = epoll_create1(EPOLL_CLOEXEC), ret = 0;
	unsigned int i;

	rtt = malloc(cap * sizeof(*rtt));
	if (!sent || !got || !trips || !rtt || ep < 0) {
		ret = -ENOMEM;
		goto out;
	}
	t0 = bench_now_ns();
	end = t0 + (uint64_t)ms * 1000000;
	for (i = 0; i < nc; i++) {
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd[i], &ev) ||
		    send(fd[i], msg, ECHO_MSG, MSG_NOSIGNAL) != ECHO_MSG) {
			ret = -errno;
			goto out;
		}
		sent[i] = bench_now_ns();
	}
	for (now = t0; now < end;) {
		int n = epoll_wait(ep, evs, 64, 100), k;

		now = bench_now_ns();
		if (n < 0 && errno != EINTR) {
			ret = -errno;
			goto out;
		}
		for (k = 0; k < n; k++) {
			unsigned int c = evs[k].data.u32;
			ssize_t r = recv(fd[c], buf, ECHO_MSG - got[c], MSG_DONTWAIT);

			if (r <= 0)
				continue;
			got[c] += (unsigned int)r;
			if (got[c] < ECHO_MSG)
				continue;
			got[c] = 0;
			trips[c]++;
			if (nrtt < cap)
				rtt[nrtt++] = now - sent[c];
			sent[c] = now;
			if (send(fd[c], msg, ECHO_MSG, MSG_NOSIGNAL) != ECHO_MSG) {
				ret = -EIO;
				goto out;
			}
		}
	}
	if (!nrtt) {
		ret = -EIO;
		goto out;
	}
	/* the replies still in flight: drain them so the next run starts clean */
	for (i = 0; i < nc; i++) {
		while (got[i] < ECHO_MSG) {
			ssize_t r = recv(fd[i], buf, ECHO_MSG - got[i], 0);

			if (r <= 0)
				break;
			got[i] += (unsigned int)r;
		}
	}
	qsort(rtt, nrtt, sizeof(*rtt), cmp_u64);
	res->served = 0;
	for (i = 0; i < nc; i++)
		res->served += trips[i] > 0;
	res->rtps = (double)nrtt * 1e9 / (double)(now - t0);
	res->p99_us = (double)rtt[nrtt * 99 / 100] / 1000.0;
out:
	if (ep >= 0)
		close(ep);
	free(sent);
	free(got);
	free(trips);
	free(rtt);
	return ret;
}

/* A loopback TCP pair: *@c the client's end, *@s the server's. */
static int tcp_pair(int lfd, const struct sockaddr_in *at, int *c, int *s)
{
	int one = 1;

	*c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*c < 0 || connect(*c, (const struct sockaddr *)at, sizeof(*at)))
		return -errno;
	*s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*s < 0)
		return -errno;
	setsockopt(*c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

/* Bind @lfd to loopback port 0 and listen for @nc; *@at where it listens. */
static int echo_listen(int lfd, unsigned int nc, struct sockaddr_in *at)
{
	socklen_t len = sizeof(*at);

	if (bind(lfd, (struct sockaddr *)at, sizeof(*at)) || listen(lfd, (int)nc) ||
	    getsockname(lfd, (struct sockaddr *)at, &len))
		return -errno;
	return 0;
}

static int echo_once(enum echo_kind kind, unsigned int nc, unsigned int ms, struct echo_res *res)
{
	struct sockaddr_in at = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct echo_srv srv = { .kind = kind };
	struct asx_event_handler *eh = calloc(nc, sizeof(*eh));
	int *cfd = calloc(nc, sizeof(int)), *sfd = calloc(nc, sizeof(int));
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ret;
	struct asx_asc_thread *ut = NULL;
	pthread_t pt[ECHO_TP];
	unsigned int i, made = 0, npt = 0;

	if (!eh || !cfd || !sfd || lfd < 0) {
		ret = -ENOMEM;
		goto out;
	}
	ret = echo_listen(lfd, nc, &at);
	if (ret)
		goto out;
	if (kind == ECHO_TP_PTHREAD) {
		ASX_OPTS(struct asx_reactor_opts, ro, .flags = ASX_REACTOR_TP);

		ret = asx_reactor_create_opts(&srv.r, &ro);
	} else {
		ret = asx_reactor_create(&srv.r);
	}
	for (; !ret && made < nc; made++) {
		ret = tcp_pair(lfd, &at, &cfd[made], &sfd[made]);
		if (ret)
			break;
		asx_event_handler_init(&eh[made], &echo_ops);
		ret = asx_reactor_register_fd(srv.r, sfd[made], &eh[made], ASX_EV_READ);
	}
	if (ret)
		goto out;
	if (kind == ECHO_POOL_ASC) {
		struct asx_prio_qos q = ASX_PRIO_QOS(0);
		ASX_OPTS(struct asx_asc_opts, o, .nvps = 1, .max_vps = 1);

		ret = asx_asc_create(&srv.asc, &asx_asc_prio, &o);
		if (!ret)
			ret = asx_asc_thread_spawn(srv.asc, &q.qos, echo_dispatch, &srv, NULL, &ut);
	} else {
		/* the thread-pool Reactor: ECHO_TP threads run its loop at once */
		unsigned int nt = kind == ECHO_TP_PTHREAD ? ECHO_TP : 1;

		for (; !ret && npt < nt; npt++)
			ret = -pthread_create(&pt[npt], NULL, echo_dispatch, &srv);
		if (ret)
			npt--;
	}
	if (!ret)
		ret = echo_clients(cfd, nc, ms, res);
	asx_reactor_end_loop(srv.r);
	if (ut)
		asx_asc_thread_join(ut, NULL);
	for (i = 0; i < npt; i++)
		pthread_join(pt[i], NULL);
	if (!ret)
		ret = srv.rc;
out:
	for (i = 0; i < made; i++) {
		close(cfd[i]);
		close(sfd[i]);
	}
	if (srv.r)
		asx_reactor_destroy(srv.r);	/* handle_close: none; the fds closed above */
	if (srv.asc)
		asx_asc_destroy(srv.asc);
	if (lfd >= 0)
		close(lfd);
	free(eh);
	free(cfd);
	free(sfd);
	return ret;
}

/* One record of server @k: key echo_<server>_<suffix>; @runs NULL: derived. */
static void echo_rec(struct bench_ctx *ctx, int k, const char *suffix, const char *metric,
		     double v, const double *runs, const char *unit, unsigned int nc)
{
	char key[64];

	snprintf(key, sizeof(key), "echo_%s_%s", echo_name[k], suffix);
	bench_record(ctx, &(struct bench_rec){
		.key = key, .experiment = "echo", .impl = echo_name[k], .sched = echo_sched[k],
		.metric = metric, .value = v, .runs = runs, .nruns = runs ? (size_t)ctx->runs : 0,
		.unit = unit, .conns = nc, .threads = echo_threads[k],
		.pes = k == ECHO_POOL_ASC ? 1 : 0, .size = ECHO_MSG });
}

static int bench_echo(struct bench_ctx *ctx, int argc, char **argv)
{
	unsigned int nc = 100, ms = ctx->quick ? 200 : ctx->full ? 3000 : 700;
	double *rt[NECHO], *p99[NECHO], mrt[NECHO], mp[NECHO];
	char s1[32];
	int opt, k, i, ret = 0;

	while ((opt = getopt(argc, argv, "c:t:")) != -1) {
		if (opt == 'c')
			nc = (unsigned int)strtoul(optarg, NULL, 0);
		else if (opt == 't')
			ms = (unsigned int)strtoul(optarg, NULL, 0);
		else
			return -EINVAL;
	}
	if (!nc || nc > 10000 || !ms)
		return -EINVAL;
	for (k = 0; k < NECHO; k++) {
		rt[k] = calloc((size_t)ctx->runs, sizeof(double));
		p99[k] = calloc((size_t)ctx->runs, sizeof(double));
		if (!rt[k] || !p99[k])
			ret = -ENOMEM;
	}
	bench_say(ctx, "echo: %u TCP loopback connections, %d-byte messages, one outstanding "
		  "each, %u ms a run, median of %d runs; pools of %d threads, ASC on 1 VP; "
		  "tp: the thread-pool Reactor on %d threads\n",
		  nc, ECHO_MSG, ms, ctx->runs, ECHO_POOL, ECHO_TP);
	for (i = 0; !ret && i < ctx->runs; i++) {
		for (k = 0; !ret && k < NECHO; k++) {
			/* rotate the order so drift hits all alike */
			int kk = (k + i) % NECHO;
			struct echo_res r = { 0 };

			ret = echo_once((enum echo_kind)kk, nc, ms, &r);
			rt[kk][i] = r.rtps;
			p99[kk][i] = r.p99_us;
		}
	}
	if (ret)
		goto out;
	bench_say(ctx, "  %-14s %14s %10s\n", "server", "round trips/s", "p99 us");
	for (k = 0; k < NECHO; k++) {
		mrt[k] = bench_median(rt[k], (size_t)ctx->runs);
		mp[k] = bench_median(p99[k], (size_t)ctx->runs);
		bench_say(ctx, "  %-14s %14s %10.1f\n", echo_name[k],
			  bench_si(s1, sizeof(s1), mrt[k]), mp[k]);
		echo_rec(ctx, k, "rt_per_s", "round_trips_per_s", mrt[k], rt[k], "1/s", nc);
		echo_rec(ctx, k, "p99_us", "p99_rtt", mp[k], p99[k], "us", nc);
	}
	bench_say(ctx, "  pool_asc / pool_pthread %.2f, pool_asc / reactor %.2f "
		  "(round trips/s)\n", mrt[ECHO_POOL_ASC] / mrt[ECHO_POOL_PTHREAD],
		  mrt[ECHO_POOL_ASC] / mrt[ECHO_REACTOR]);
	echo_rec(ctx, ECHO_POOL_ASC, "over_pool_pthread", "over_pool_pthread",
		 mrt[ECHO_POOL_ASC] / mrt[ECHO_POOL_PTHREAD], NULL, "x", nc);
	echo_rec(ctx, ECHO_POOL_ASC, "over_reactor", "over_reactor",
		 mrt[ECHO_POOL_ASC] / mrt[ECHO_REACTOR], NULL, "x", nc);
out:
	for (k = 0; k < NECHO; k++) {
		free(rt[k]);
		free(p99[k]);
	}
	return ret;
}

BENCH_COMMAND(echo, "echo",
	      "echo server, 100 connections: Reactor alone, plus a pthread pool, plus an ASC pool, "
	      "thread-pool Reactor",
	      "[-c CONNECTIONS] [-t MS_PER_RUN]", bench_echo)

/*
 * asx-bench ace's echo rows (bench.h): the clients above against a server
 * that @start / @start_n starts on the server ends of @nc loopback pairs
 * and @stop stops; both NULL: @kind's server above.
 */
static int echo_served(enum echo_kind kind, unsigned int nc, unsigned int ms,
		       unsigned int nthreads,
		       int (*start)(const int *sfd, unsigned int nc, void **srv),
		       int (*start_n)(const int *sfd, unsigned int nc, unsigned int nthreads,
				      void **srv),
		       void (*stop)(void *srv), struct echo_res *res)
{
	struct sockaddr_in at = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int *cfd = calloc(nc, sizeof(int)), *sfd = calloc(nc, sizeof(int));
	int lfd = -1, ret = 0;
	unsigned int i, made = 0;
	void *srv = NULL;

	if (!start && !start_n) {
		ret = echo_once(kind, nc, ms, res);
		goto out;
	}
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (!cfd || !sfd || lfd < 0) {
		ret = -ENOMEM;
		goto out;
	}
	ret = echo_listen(lfd, nc, &at);
	if (ret)
		goto out;
	for (; !ret && made < nc; made++) {
		ret = tcp_pair(lfd, &at, &cfd[made], &sfd[made]);
		if (ret)
			break;
	}
	if (!ret)
		ret = start ? start(sfd, nc, &srv) : start_n(sfd, nc, nthreads, &srv);
	if (!ret) {
		ret = echo_clients(cfd, nc, ms, res);
		stop(srv);
	}
out:
	for (i = 0; i < made; i++) {
		close(cfd[i]);
		close(sfd[i]);
	}
	if (lfd >= 0)
		close(lfd);
	free(cfd);
	free(sfd);
	return ret;
}

int bench_echo_served(unsigned int nc, unsigned int ms,
		      int (*start)(const int *sfd, unsigned int nc, void **srv),
		      void (*stop)(void *srv), double *rtps, double *p99_us)
{
	struct echo_res res = { 0 };
	int ret = echo_served(ECHO_REACTOR, nc, ms, 1, start, NULL, stop, &res);

	*rtps = res.rtps;
	*p99_us = res.p99_us;
	return ret;
}

int bench_echo_served_tp(unsigned int nc, unsigned int ms, unsigned int nthreads,
			 int (*start)(const int *sfd, unsigned int nc, unsigned int nthreads,
				      void **srv),
			 void (*stop)(void *srv), double *rtps, double *p99_us,
			 unsigned int *served)
{
	struct echo_res res = { 0 };
	int ret;

	if (!start && nthreads != ECHO_TP)
		return -EINVAL;
	ret = echo_served(ECHO_TP_PTHREAD, nc, ms, nthreads, NULL, start, stop, &res);
	*rtps = res.rtps;
	*p99_us = res.p99_us;
	*served = res.served;
	return ret;
}
