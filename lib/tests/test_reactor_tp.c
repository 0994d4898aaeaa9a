// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_reactor_tp.c - the thread-pool Reactor (ASX_REACTOR_TP, leader/
 * followers): many threads run one reactor's loop at once.
 *
 * The stress case: 128 handlers, each holding two socketpairs (256 in
 * all), fed numbered 8-byte records by two writer threads; 4 and 8
 * threads run the loop.  Checked: each handler's callbacks never overlap
 * (an in-callback counter per handler, shared by its I/O, timer and
 * notification callbacks), each channel's records arrive in order, once,
 * all of them; handlers are removed from inside callbacks (a negative
 * return) and from another thread, and added again from callbacks and
 * from that thread, all along; no callback runs after the handle_close of
 * the lifetime it belongs to, and each lifetime has exactly one
 * handle_close; one-shot timers each fire once; notifications each arrive
 * once; end_loop makes every thread return, and the reactor is destroyed
 * with every handler back to its creator's reference.  A watchdog fails
 * the run (abort with the progress counters) instead of letting it hang.
 * The loop threads are pthreads, or ASC user threads on two VPs (the
 * leader parks on the epoll descriptor, followers on an asx_cond).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <asx/asc.h>
#include <asx/reactor.h>
#include <asx/sync.h>

#include "joinwd.h"

#define NHANDLERS	128
#define NCHAN		(2 * NHANDLERS)
#define NRECS		200		/* records per channel */
#define NTIMERS		2000
#define NTHANDLERS	8		/* handlers of the timers and notifications */
#define NNOTIFS		2000
#define MAXTHREADS	8
#define WATCHDOG_S	300		/* seconds expected, even under TSan on a loaded host */
#define US		1000ULL

enum { ST_REG, ST_CLOSING, ST_CLOSED };

struct chan {
	int rfd, wfd;
	uint32_t next;			/* the next record expected (under the handler's serialisation) */
	unsigned char part[8];		/* a partial record */
	size_t npart;
};

struct h {
	struct asx_event_handler eh;
	int idx;
	int in_cb;			/* atomic: callbacks running */
	int state;			/* atomic: ST_* */
	int lifetimes;			/* atomic: registrations begun */
	int closes;			/* atomic: handle_close calls */
	int releases;			/* atomic */
	struct chan ch[2];
	uint32_t rnd;			/* under the handler's serialisation */
	/*
	 * The test's own: held around a revival (two registrations) and a
	 * removal, so that the test's count of lifetimes is the reactor's (a
	 * removal between the two registrations would end one the test has
	 * not seen begin).  The reactor never waits for it.
	 */
	struct asx_mutex life;	/* an asx_mutex: a user thread parks, its VP runs on */
};

static struct asx_reactor *r;
static struct h hs[NHANDLERS];
static struct h ths[NTHANDLERS];	/* timers and notifications */
static int fired[NTIMERS];		/* atomic */
static int received, timers_fired, notifs_got, callbacks;	/* atomic */
static int self_removed, out_removed, revived_in, revived_out;	/* atomic */
static int stop_churn, finished;	/* atomic */
static int errors;			/* atomic */
static char first_error[4][160];

static int ld(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static int inc(int *p)
{
	return __atomic_add_fetch(p, 1, __ATOMIC_ACQ_REL);
}

static void error(const char *fmt, ...)
{
	int n = inc(&errors) - 1;
	va_list ap;

	if (n >= 4)
		return;
	va_start(ap, fmt);
	vsnprintf(first_error[n], sizeof(first_error[n]), fmt, ap);
	va_end(ap);
}

static uint32_t rnd32(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void cb_enter(struct h *h, const char *what)
{
	if (__atomic_fetch_add(&h->in_cb, 1, __ATOMIC_ACQ_REL))
		error("handler %d: %s while another of its callbacks runs", h->idx, what);
	if (ld(&h->state) == ST_CLOSED)
		error("handler %d: %s after its handle_close", h->idx, what);
	inc(&callbacks);
	if ((rnd32(&h->rnd) & 15) == 0)
		sched_yield();	/* widen the window for an overlap */
}

static void cb_leave(struct h *h)
{
	__atomic_fetch_sub(&h->in_cb, 1, __ATOMIC_ACQ_REL);
}

static int reg(struct h *h)
{
	int err = asx_reactor_register_fd(r, h->ch[0].rfd, &h->eh, ASX_EV_READ);

	if (!err)
		err = asx_reactor_register_fd(r, h->ch[1].rfd, &h->eh, ASX_EV_READ);
	return err;
}

/* Bring a closed handler back (from a callback or the churn thread). */
static bool revive(int i, int *count)
{
	struct h *h = &hs[i];
	int want = ST_CLOSED;
	int err;

	asx_mutex_lock(&h->life);
	if (!__atomic_compare_exchange_n(&h->state, &want, ST_REG, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		asx_mutex_unlock(&h->life);
		return false;
	}
	inc(&h->lifetimes);
	err = reg(h);
	asx_mutex_unlock(&h->life);
	if (err)
		error("handler %d: register again: %d", i, err);
	inc(count);
	return true;
}

/* Whole records from @c's bytes; checks the numbering. */
static void take(struct h *h, struct chan *c, int ci, const unsigned char *p, size_t n)
{
	while (n) {
		size_t k = sizeof(c->part) - c->npart;

		if (k > n)
			k = n;
		memcpy(c->part + c->npart, p, k);
		c->npart += k;
		p += k;
		n -= k;
		if (c->npart == sizeof(c->part)) {
			uint32_t who, seq;

			memcpy(&who, c->part, 4);
			memcpy(&seq, c->part + 4, 4);
			if (who != (uint32_t)(2 * h->idx + ci) || seq != c->next)
				error("channel %d: record %u of channel %u, expected %u", 2 * h->idx + ci,
				      seq, who, c->next);
			c->next = seq + 1;
			c->npart = 0;
			inc(&received);
		}
	}
}

static int io_input(struct asx_event_handler *eh, int fd)
{
	struct h *h = (struct h *)eh;
	unsigned char buf[64];	/* a few records per call: many dispatches */
	int ci = fd == h->ch[0].rfd ? 0 : 1;
	ssize_t n;
	int rc = 0;

	cb_enter(h, "handle_input");
	if (fd != h->ch[ci].rfd)
		error("handler %d: input on fd %d, not its own", h->idx, fd);
	n = read(fd, buf, sizeof(buf));
	if (n > 0)
		take(h, &h->ch[ci], ci, buf, (size_t)n);
	else if (n < 0 && errno != EAGAIN)
		error("handler %d: read: %d", h->idx, errno);
	switch (rnd32(&h->rnd) % 64) {
	case 0:	/* remove the other descriptor, and this one by the return value */
		asx_mutex_lock(&h->life);
		(void)asx_reactor_remove_fd(r, h->ch[1 - ci].rfd, ASX_EV_READ);
		asx_mutex_unlock(&h->life);
		inc(&self_removed);
		rc = -1;
		break;
	case 1:	/* remove the whole handler from inside */
		asx_mutex_lock(&h->life);
		if (asx_reactor_remove_handler(r, eh) == 0)
			inc(&self_removed);
		asx_mutex_unlock(&h->life);
		break;
	case 2:	/* bring another back from inside */
		(void)revive((int)(rnd32(&h->rnd) % NHANDLERS), &revived_in);
		break;
	}
	cb_leave(h);
	return rc;
}

static int io_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	struct h *h = (struct h *)eh;

	(void)fd;
	(void)mask;
	if (ld(&h->in_cb))
		error("handler %d: handle_close while a callback runs", h->idx);
	if (inc(&h->closes) != ld(&h->lifetimes))
		error("handler %d: handle_close %d for %d lifetimes", h->idx, ld(&h->closes),
		      ld(&h->lifetimes));
	st(&h->state, ST_CLOSED);
	return 0;
}

static void h_release(struct asx_event_handler *eh)
{
	inc(&((struct h *)eh)->releases);
}

static const struct asx_event_handler_ops io_ops = {
	.handle_input = io_input,
	.handle_close = io_close,
	.release = h_release,
};

static int t_timeout(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	struct h *h = (struct h *)eh;
	int i = (int)(intptr_t)arg;

	(void)now;
	cb_enter(h, "handle_timeout");
	if (inc(&fired[i]) != 1)
		error("timer %d fired %d times", i, ld(&fired[i]));
	inc(&timers_fired);
	cb_leave(h);
	return 0;
}

static int t_input(struct asx_event_handler *eh, int fd)
{
	struct h *h = (struct h *)eh;

	cb_enter(h, "notification");
	if (fd != -1)
		error("notification with fd %d", fd);
	inc(&notifs_got);
	cb_leave(h);
	return 0;
}

static const struct asx_event_handler_ops t_ops = {
	.handle_input = t_input,
	.handle_timeout = t_timeout,
	.release = h_release,
};

struct runner {
	pthread_t t;
	struct asx_asc_thread *ut;	/* a user thread instead */
	int rc;
};

static void *run_main(void *arg)
{
	struct runner *ru = arg;

	do	/* -EBUSY: test_tp_api's own probe was in the loop of a plain reactor */
		ru->rc = asx_reactor_run(r);
	while (ru->rc == -EBUSY);
	return NULL;
}

static void *writer(void *arg)
{
	int w = (int)(intptr_t)arg;
	uint32_t s = 0x9e3779b9u * (uint32_t)(w + 1);
	uint32_t sent[NCHAN / 2] = { 0 };
	int left = NCHAN / 2 * NRECS;

	while (left) {
		int k = (int)(rnd32(&s) % (NCHAN / 2)), c = 2 * k + w;
		unsigned char rec[8];
		uint32_t who = (uint32_t)c;

		if (sent[k] == NRECS)
			continue;
		memcpy(rec, &who, 4);
		memcpy(rec + 4, &sent[k], 4);
		if (write(hs[c / 2].ch[c % 2].wfd, rec, sizeof(rec)) != (ssize_t)sizeof(rec)) {
			error("write on channel %d: %d", c, errno);
			return NULL;
		}
		sent[k]++;
		left--;
	}
	return NULL;
}

/* Removes handlers from outside, brings closed ones back, schedules timers, posts. */
static void *churner(void *unused)
{
	uint32_t s = 12345;
	int nt = 0, nn = 0;

	(void)unused;
	while (!ld(&stop_churn) || nt < NTIMERS || nn < NNOTIFS) {
		int i = (int)(rnd32(&s) % NHANDLERS);

		if (!ld(&stop_churn)) {
			if (rnd32(&s) % 2) {
				asx_mutex_lock(&hs[i].life);
				if (ld(&hs[i].state) == ST_REG &&
				    asx_reactor_remove_handler(r, &hs[i].eh) == 0)
					inc(&out_removed);
				asx_mutex_unlock(&hs[i].life);
			}
			(void)revive((int)(rnd32(&s) % NHANDLERS), &revived_out);
		}
		if (nt < NTIMERS) {
			struct h *th = &ths[nt % NTHANDLERS];
			int64_t id = asx_reactor_schedule_timer(r, &th->eh, (void *)(intptr_t)nt,
								(rnd32(&s) % 2000) * US, 0);

			if (id <= 0)
				error("schedule_timer: %lld", (long long)id);
			nt++;
		}
		if (nn < NNOTIFS) {
			int err = asx_reactor_notify(r, &ths[nn % NTHANDLERS].eh, ASX_EV_READ);

			if (err)
				error("notify: %d", err);
			nn++;
		}
		if ((rnd32(&s) & 7) == 0)
			clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 50 * US }, NULL);
	}
	return NULL;
}

static void *watchdog(void *unused)
{
	uint64_t end = asx_now_ns() + WATCHDOG_S * 1000000000ULL;

	(void)unused;
	while (!ld(&finished)) {
		if (asx_now_ns() > end) {
			fprintf(stderr, "watchdog: %d s passed: received %d of %d, timers %d of %d, "
				"notifications %d of %d, callbacks %d, errors %d (%s)\n", WATCHDOG_S,
				ld(&received), NCHAN * NRECS, ld(&timers_fired), NTIMERS,
				ld(&notifs_got), NNOTIFS, ld(&callbacks), ld(&errors), first_error[0]);
			abort();
		}
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 100 * 1000 * US }, NULL);
	}
	return NULL;
}

static void wait_for(const int *what, int want)
{
	while (ld(what) < want)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 1000 * US }, NULL);
}

static void reset_state(void)
{
	memset(hs, 0, sizeof(hs));
	memset(ths, 0, sizeof(ths));
	memset(fired, 0, sizeof(fired));
	received = timers_fired = notifs_got = callbacks = 0;
	self_removed = out_removed = revived_in = revived_out = 0;
	stop_churn = finished = errors = 0;
}

/* @nthreads threads run the loop: pthreads, or user threads of a 2-VP ASC (@asc). */
static void stress(int nthreads, bool asc)
{
	ASX_OPTS(struct asx_reactor_opts, o, .flags = ASX_REACTOR_TP);
	ASX_OPTS(struct asx_asc_opts, ao, .nvps = 2);
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc *a = NULL;
	struct runner ru[MAXTHREADS];
	pthread_t wr[2], ch, wd;
	uint64_t t0 = asx_now_ns();

	reset_state();
	assert_int_equal(asx_reactor_create_opts(&r, &o), 0);
	assert_true(asx_reactor_is_tp(r));
	for (int i = 0; i < NHANDLERS; i++) {
		struct h *h = &hs[i];

		asx_event_handler_init(&h->eh, &io_ops);
		h->idx = i;
		asx_mutex_init(&h->life);
		h->rnd = 0x2545f491u * (uint32_t)(i + 1);
		for (int c = 0; c < 2; c++) {
			int sv[2];

			assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
			assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
			h->ch[c].rfd = sv[0];
			h->ch[c].wfd = sv[1];
		}
		h->lifetimes = 1;
		assert_int_equal(reg(h), 0);
	}
	for (int i = 0; i < NTHANDLERS; i++) {
		asx_event_handler_init(&ths[i].eh, &t_ops);
		ths[i].idx = 1000 + i;
		ths[i].rnd = 77u * (uint32_t)(i + 1);
	}
	assert_int_equal(pthread_create(&wd, NULL, watchdog, NULL), 0);
	if (asc)
		assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &ao), 0);
	for (int i = 0; i < nthreads; i++) {
		if (asc)
			assert_int_equal(asx_asc_thread_spawn(a, &q.qos, run_main, &ru[i], NULL,
							      &ru[i].ut), 0);
		else
			assert_int_equal(pthread_create(&ru[i].t, NULL, run_main, &ru[i]), 0);
	}
	for (int w = 0; w < 2; w++)
		assert_int_equal(pthread_create(&wr[w], NULL, writer, (void *)(intptr_t)w), 0);
	assert_int_equal(pthread_create(&ch, NULL, churner, NULL), 0);

	for (int w = 0; w < 2; w++)
		join_or_die(wr[w], "a writer");
	/* churn until most records are in, then bring every handler back */
	wait_for(&received, NCHAN * NRECS * 9 / 10);
	st(&stop_churn, 1);
	join_or_die(ch, "the churn thread");
	/* a lifetime may end (handle_close deferred) after a pass: go round */
	while (ld(&received) < NCHAN * NRECS) {
		for (int i = 0; i < NHANDLERS; i++)
			(void)revive(i, &revived_out);
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 1000 * US }, NULL);
	}
	wait_for(&timers_fired, NTIMERS);
	wait_for(&notifs_got, NNOTIFS);

	asx_reactor_end_loop(r);
	for (int i = 0; i < nthreads; i++) {
		if (asc)	/* the watchdog guards this join */
			assert_int_equal(asx_asc_thread_join(ru[i].ut, NULL), 0);
		else
			join_or_die(ru[i].t, "a loop thread after end_loop");
		assert_int_equal(ru[i].rc, 0);
	}
	if (asc)
		assert_int_equal(asx_asc_destroy(a), 0);
	st(&finished, 1);
	join_or_die(wd, "the watchdog");

	print_message("    %d %s: %d records, %d callbacks in %.2f s; removed %d from inside, "
		      "%d from outside; added again %d from inside, %d from outside\n", nthreads,
		      asc ? "user threads on 2 VPs" : "pthreads",
		      ld(&received), ld(&callbacks), (double)(asx_now_ns() - t0) / 1e9,
		      self_removed, out_removed, revived_in, revived_out);
	for (int i = 0; i < errors && i < 4; i++)
		print_error("error %d of %d: %s\n", i + 1, errors, first_error[i]);
	assert_int_equal(errors, 0);
	assert_int_equal(received, NCHAN * NRECS);
	for (int i = 0; i < NTIMERS; i++)
		assert_int_equal(fired[i], 1);
	assert_int_equal(notifs_got, NNOTIFS);
	assert_int_equal(asx_reactor_timer_count(r), 0);
	assert_true(self_removed > 0 && out_removed > 0 && revived_in > 0);

	assert_int_equal(asx_reactor_destroy(r), 0);
	for (int i = 0; i < NHANDLERS; i++) {
		struct h *h = &hs[i];

		assert_int_equal(h->closes, h->lifetimes);
		assert_int_equal(asx_event_handler_refs(&h->eh), 1);
		assert_int_equal(h->releases, 0);
		asx_event_handler_put(&h->eh);
		assert_int_equal(h->releases, 1);
		asx_mutex_destroy(&h->life);
		for (int c = 0; c < 2; c++) {
			close(h->ch[c].rfd);
			close(h->ch[c].wfd);
			assert_int_equal(h->ch[c].next, NRECS);
		}
	}
	for (int i = 0; i < NTHANDLERS; i++)
		assert_int_equal(asx_event_handler_refs(&ths[i].eh), 1);
}

static void test_tp_4_threads(void **state)
{
	(void)state;
	stress(4, false);
}

static void test_tp_8_threads(void **state)
{
	(void)state;
	stress(8, false);
}

static void test_tp_asc_4_threads(void **state)
{
	(void)state;
	stress(4, true);
}

/* ------------------------------------------------------------ order */

#define NORD 400
#define NORDH 8

struct oh {
	struct asx_event_handler eh;
	int k;
};

static struct oh ohs[NORDH];
static int ord_next, ord_bad, ord_in;	/* atomic */
static int ord_seen[NORD];		/* the handler of the i-th callback */

static void ord_note(struct oh *h, const char *what)
{
	int i;

	if (__atomic_fetch_add(&ord_in, 1, __ATOMIC_ACQ_REL))
		error("order: two %s callbacks at once", what);
	i = inc(&ord_next) - 1;
	if (i < NORD)
		ord_seen[i] = h->k;
	else
		inc(&ord_bad);
	if (i % 3 == 0)
		sched_yield();	/* let another thread try to overtake */
	__atomic_fetch_sub(&ord_in, 1, __ATOMIC_ACQ_REL);
}

static int ord_timeout(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	(void)now;
	(void)arg;
	ord_note((struct oh *)eh, "timer");
	return 0;
}

static int ord_input(struct asx_event_handler *eh, int fd)
{
	(void)fd;
	ord_note((struct oh *)eh, "notification");
	return 0;
}

static const struct asx_event_handler_ops ord_ops = {
	.handle_input = ord_input,
	.handle_timeout = ord_timeout,
};

/*
 * Timers fire in deadline order and notifications run in the order they
 * were posted, one at a time, though four threads run the loop: NORD of
 * each, over NORDH handlers in turn; the timers all due before the loop
 * starts, the notifications posted while it runs (so several threads are
 * woken for them).
 */
static void order_case(bool timers)
{
	ASX_OPTS(struct asx_reactor_opts, o, .flags = ASX_REACTOR_TP);
	struct runner ru[4];
	struct timespec past;
	uint64_t t0 = asx_now_ns();

	errors = ord_next = ord_bad = ord_in = 0;
	assert_int_equal(asx_reactor_create_opts(&r, &o), 0);
	for (int k = 0; k < NORDH; k++) {
		asx_event_handler_init(&ohs[k].eh, &ord_ops);
		ohs[k].k = k;
	}
	/* distinct past deadlines, scheduled out of order, before the loop starts */
	for (int i = 0; timers && i < NORD; i++) {
		int j = (i * 7) % NORD;

		past.tv_sec = 1;
		past.tv_nsec = 1000L * j;
		assert_true(asx_reactor_schedule_timer_at(r, &ohs[j % NORDH].eh, NULL, &past,
							  0) > 0);
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&ru[i].t, NULL, run_main, &ru[i]), 0);
	/* posted while the threads run: each wake-up may reach another thread */
	for (int i = 0; !timers && i < NORD; i++) {
		assert_int_equal(asx_reactor_notify(r, &ohs[(i * 5) % NORDH].eh, ASX_EV_READ), 0);
		if (i % 4 == 0)
			sched_yield();
	}
	while (ld(&ord_next) < NORD && asx_now_ns() - t0 < JOINWD_S * 1000000000ULL)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 1000 * US }, NULL);
	asx_reactor_end_loop(r);
	for (int i = 0; i < 4; i++)
		join_or_die(ru[i].t, "a loop thread after end_loop");
	for (int i = 0; i < errors && i < 4; i++)
		print_error("error %d of %d: %s\n", i + 1, errors, first_error[i]);
	assert_int_equal(errors, 0);
	assert_int_equal(ord_next, NORD);
	assert_int_equal(ord_bad, 0);
	for (int i = 0; i < NORD; i++)
		assert_int_equal(ord_seen[i], timers ? i % NORDH : (i * 5) % NORDH);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

static void test_tp_timer_order(void **state)
{
	(void)state;
	order_case(true);
}

static void test_tp_notify_order(void **state)
{
	(void)state;
	order_case(false);
}

/* ------------------------------------------------------------ the API */

static int deadlk_rc = 1;	/* atomic */

static int nest_input(struct asx_event_handler *eh, int fd)
{
	char c;

	(void)eh;
	(void)read(fd, &c, 1);
	st(&deadlk_rc, asx_reactor_run_once(r, &(struct timespec){ 0, 0 }));
	return 0;
}

static const struct asx_event_handler_ops nest_ops = { .handle_input = nest_input };

/*
 * Options, refusals, and a second thread in the loop: on a reactor made
 * without ASX_REACTOR_TP it gets -EBUSY; with it, it waits as a follower
 * and returns at its deadline.
 */
static void test_tp_api(void **state)
{
	ASX_OPTS(struct asx_reactor_opts, bad, .flags = 0x80);
	ASX_OPTS(struct asx_reactor_opts, o, .flags = ASX_REACTOR_TP);
	ASX_OPTS(struct asx_reactor_pool_opts, po, .nthreads = 2);
	struct asx_event_handler eh = ASX_EVENT_HANDLER_INIT(&nest_ops);
	struct runner ru;
	struct timespec dl;
	uint64_t t0;
	int rc, sv[2];

	(void)state;
	assert_int_equal(asx_reactor_create_opts(&r, &bad), -EINVAL);
	assert_int_equal(asx_reactor_create_opts(&r, NULL), 0);
	assert_false(asx_reactor_is_tp(r));
	assert_int_equal(pthread_create(&ru.t, NULL, run_main, &ru), 0);
	t0 = asx_now_ns();
	while ((rc = asx_reactor_run_once(r, &(struct timespec){ 0, 0 })) == 0 &&
	       asx_now_ns() - t0 < JOINWD_S * 1000000000ULL)
		sched_yield();	/* until the thread dispatches */
	assert_int_equal(rc, -EBUSY);
	asx_reactor_end_loop(r);
	join_or_die(ru.t, "run");
	assert_int_equal(ru.rc, 0);
	assert_int_equal(asx_reactor_destroy(r), 0);

	assert_int_equal(asx_reactor_create_opts(&r, &o), 0);
	assert_int_equal(asx_reactor_pool_start(r, &po), -EINVAL);
	assert_int_equal(pthread_create(&ru.t, NULL, run_main, &ru), 0);

	/* a callback's run_once: -EDEADLK (and the thread is in the loop) */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	assert_int_equal(asx_reactor_register_fd(r, sv[0], &eh, ASX_EV_READ), 0);
	assert_int_equal(write(sv[1], "x", 1), 1);
	while (ld(&deadlk_rc) == 1)
		sched_yield();
	assert_int_equal(deadlk_rc, -EDEADLK);
	assert_int_equal(asx_reactor_remove_fd(r, sv[0], ASX_EV_READ), 0);
	close(sv[0]);
	close(sv[1]);

	/* a second thread in the loop: no -EBUSY, 0 at its deadline */
	clock_gettime(CLOCK_MONOTONIC, &dl);
	dl.tv_nsec += 100 * 1000 * 1000;
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	assert_int_equal(asx_reactor_run_once(r, &dl), 0);

	/* end_loop ends every thread; run_once then returns at once, until reset_loop */
	asx_reactor_end_loop(r);
	join_or_die(ru.t, "run");
	assert_int_equal(ru.rc, 0);
	assert_int_equal(asx_reactor_run_once(r, NULL), 0);
	asx_reactor_reset_loop(r);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tp_api),
		cmocka_unit_test(test_tp_timer_order),
		cmocka_unit_test(test_tp_notify_order),
		cmocka_unit_test(test_tp_4_threads),
		cmocka_unit_test(test_tp_8_threads),
		cmocka_unit_test(test_tp_asc_4_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
