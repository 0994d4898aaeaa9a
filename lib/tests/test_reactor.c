// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_reactor.c - CMocka tests of asx/reactor.h.
 *
 * Every test checks something a broken reactor would get wrong: a callback
 * for a handler removed earlier in the same epoll batch, handle_close
 * called twice or never, a timer that fires early or out of order, a loop
 * that does not wake for work posted from another thread, memory that
 * scales with RLIMIT_NOFILE.  Waits are bounded by deadlines, so a missing
 * wake-up fails the test instead of hanging it.  Timing bounds are strict
 * where the rule is strict (never early) and generous where the machine
 * is (lateness), since the test hosts are small and shared.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <asx/msgq.h>
#include <asx/reactor.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
/* From the sanitizer runtime (its header is not always installed). */
size_t __sanitizer_get_current_allocated_bytes(void);
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

#define MS		1000000ULL
#define LATE_LIMIT	(1000 * MS)	/* generous: shared 2-core machines */
#define WAIT_LIMIT	(10000 * MS)	/* "never happened" bound */

/* ------------------------------------------------------------ a test handler */

struct th {
	struct asx_event_handler eh;
	int rfd, wfd;
	int inputs, outputs, excepts, timeouts, signals, closes, releases;
	int close_fd;
	unsigned int close_mask;
	int last_input_fd;
	int out_rc;	/* handle_output's return value */
	/* What handle_input does besides counting (NULL: drain one byte). */
	int (*on_input)(struct th *t, int fd);
	int (*on_timeout)(struct th *t, const struct timespec *now, void *arg);
	int signo;
	struct signalfd_siginfo si;
	pid_t input_tid;
	void *ctx;
	bool heap;	/* free on release */
};

static struct th *th_of(struct asx_event_handler *eh)
{
	return (struct th *)((char *)eh - offsetof(struct th, eh));
}

static int drain_byte(int fd)
{
	char c;

	return read(fd, &c, 1) == 1 ? 0 : -1;
}

static int th_input(struct asx_event_handler *eh, int fd)
{
	struct th *t = th_of(eh);

	t->inputs++;
	t->last_input_fd = fd;
	t->input_tid = (pid_t)syscall(SYS_gettid);
	if (t->on_input)
		return t->on_input(t, fd);
	if (fd >= 0)
		(void)drain_byte(fd);
	return 0;
}

static int th_output(struct asx_event_handler *eh, int fd)
{
	th_of(eh)->outputs++;
	return th_of(eh)->out_rc;
}

static int th_except(struct asx_event_handler *eh, int fd)
{
	th_of(eh)->excepts++;
	return 0;
}

static int th_timeout(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	struct th *t = th_of(eh);

	t->timeouts++;
	if (t->on_timeout)
		return t->on_timeout(t, now, arg);
	return 0;
}

static int th_signal(struct asx_event_handler *eh, int signo, const struct signalfd_siginfo *si)
{
	struct th *t = th_of(eh);

	t->signals++;
	t->signo = signo;
	t->si = *si;
	return 0;
}

static int th_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	struct th *t = th_of(eh);

	t->closes++;
	t->close_fd = fd;
	t->close_mask = mask;
	return 0;
}

static int released;	/* handlers freed by th_release (loop thread only) */

static void th_release(struct asx_event_handler *eh)
{
	struct th *t = th_of(eh);

	t->releases++;
	if (t->heap) {
		__atomic_fetch_add(&released, 1, __ATOMIC_RELAXED);
		memset(t, 0x5a, sizeof(*t));	/* a later touch shows under ASan anyway */
		free(t);
	}
}

static const struct asx_event_handler_ops th_ops = {
	.handle_input = th_input,
	.handle_output = th_output,
	.handle_exception = th_except,
	.handle_timeout = th_timeout,
	.handle_signal = th_signal,
	.handle_close = th_close,
	.release = th_release,
};

static void th_init(struct th *t)
{
	memset(t, 0, sizeof(*t));
	asx_event_handler_init(&t->eh, &th_ops);
	t->rfd = t->wfd = -1;
	t->close_fd = -2;
}

static void th_pipe(struct th *t)
{
	int p[2];

	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	t->rfd = p[0];
	t->wfd = p[1];
}

static void th_poke(struct th *t)
{
	assert_int_equal(write(t->wfd, "x", 1), 1);
}

static void th_close_fds(struct th *t)
{
	if (t->rfd >= 0)
		close(t->rfd);
	if (t->wfd >= 0)
		close(t->wfd);
	t->rfd = t->wfd = -1;
}

static struct timespec *in_ms(struct timespec *ts, uint64_t ms)
{
	return asx_deadline(ts, ms * MS);
}

/* Run until @done(ctx) or the bound passes; fail on a loop error. */
static void run_until(struct asx_reactor *r, bool (*done)(void *), void *ctx)
{
	uint64_t end = asx_now_ns() + WAIT_LIMIT;
	struct timespec ts;

	while (!done(ctx)) {
		assert_true(asx_now_ns() < end);
		assert_true(asx_reactor_run_once(r, in_ms(&ts, 100)) >= 0);
	}
}

/* ------------------------------------------------------------ basics */

static void test_io_basic(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct timespec ts;
	struct th t;

	assert_non_null(r);
	th_init(&t);
	th_pipe(&t);
	assert_int_equal(asx_reactor_register_fd(r, t.rfd, &t.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_event_handler_refs(&t.eh), 2);	/* creator + lifetime */
	assert_int_equal(asx_reactor_fd_count(r), 1);

	/* Nothing ready: times out, never early. */
	uint64_t t0 = asx_now_ns();
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 30)), 0);
	assert_true(asx_now_ns() - t0 >= 30 * MS);

	th_poke(&t);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 5000)), 1);
	assert_int_equal(t.inputs, 1);
	assert_int_equal(t.last_input_fd, t.rfd);

	/* Bad arguments. */
	assert_int_equal(asx_reactor_register_fd(r, -1, &t.eh, ASX_EV_READ), -EINVAL);
	assert_int_equal(asx_reactor_register_fd(r, t.wfd, &t.eh, 0), -EINVAL);
	assert_int_equal(asx_reactor_register_fd(r, t.wfd, &t.eh, ASX_EV_TIMER), -EINVAL);
	assert_int_equal(asx_reactor_remove_fd(r, t.wfd, ASX_EV_READ), -ENOENT);

	/* Same fd, another handler: refused. */
	struct th u;

	th_init(&u);
	assert_int_equal(asx_reactor_register_fd(r, t.rfd, &u.eh, ASX_EV_READ), -EEXIST);
	assert_int_equal(asx_event_handler_refs(&u.eh), 1);

	/* A handler belongs to one reactor at a time. */
	struct asx_reactor *r2 = NULL;
	assert_int_equal(asx_reactor_create(&r2), 0);

	assert_non_null(r2);
	assert_int_equal(asx_reactor_register_fd(r2, t.wfd, &t.eh, ASX_EV_WRITE), -EBUSY);
	assert_int_equal(asx_reactor_destroy(r2), 0);

	assert_int_equal(asx_reactor_remove_fd(r, t.rfd, ASX_EV_IO), 0);
	assert_int_equal(t.closes, 1);
	assert_int_equal(t.close_fd, t.rfd);
	assert_int_equal(t.close_mask, ASX_EV_READ);
	assert_int_equal(asx_event_handler_refs(&t.eh), 1);
	assert_int_equal(asx_reactor_fd_count(r), 0);

	/* Now free to join another reactor. */
	assert_int_equal(asx_reactor_create(&r2), 0);
	assert_int_equal(asx_reactor_register_fd(r2, t.wfd, &t.eh, ASX_EV_WRITE), 0);
	assert_int_equal(asx_reactor_run_once(r2, in_ms(&ts, 5000)), 1);
	assert_int_equal(t.outputs, 1);
	assert_int_equal(asx_reactor_destroy(r2), 0);
	assert_int_equal(t.closes, 2);
	assert_int_equal(t.close_mask, ASX_EV_WRITE);
	assert_int_equal(asx_reactor_destroy(r), 0);
	th_close_fds(&t);
	assert_int_equal(t.releases, 0);
}

/* One handler, several descriptors and masks; handle_close only at the end. */
static void test_masks_and_close_once(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct th t, a, b;
	struct timespec ts;
	int sv[2];

	th_init(&t);
	th_init(&a);
	th_init(&b);
	th_pipe(&a);
	th_pipe(&b);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);

	assert_int_equal(asx_reactor_register_fd(r, a.rfd, &t.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_register_fd(r, b.rfd, &t.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_register_fd(r, sv[0], &t.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_register_fd(r, sv[0], &t.eh, ASX_EV_WRITE), 0);
	int64_t id = asx_reactor_schedule_timer(r, &t.eh, NULL, 3600 * 1000 * MS, 0);

	assert_true(id > 0);
	assert_int_equal(asx_event_handler_refs(&t.eh), 2);

	/* sv[0] is writable: only handle_output, READ is not ready. */
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 5000)), 1);
	assert_int_equal(t.outputs, 1);
	assert_int_equal(t.inputs, 0);
	assert_int_equal(asx_reactor_remove_fd(r, sv[0], ASX_EV_WRITE), 0);
	assert_int_equal(t.closes, 0);

	/* Both pipes in one batch: two dispatches. */
	th_poke(&a);
	th_poke(&b);
	int n = 0;

	while (n < 2)
		n += asx_reactor_run_once(r, in_ms(&ts, 5000));
	assert_int_equal(t.inputs, 2);

	assert_int_equal(asx_reactor_remove_fd(r, a.rfd, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_cancel_timer(r, id, NULL), 0);
	assert_int_equal(asx_reactor_cancel_timer(r, id, NULL), -ENOENT);
	assert_int_equal(t.closes, 0);
	/* Removing everything ends the lifetime: exactly one handle_close. */
	assert_int_equal(asx_reactor_remove_handler(r, &t.eh), 0);
	assert_int_equal(t.closes, 1);
	assert_int_equal(asx_reactor_remove_handler(r, &t.eh), -ENOENT);
	assert_int_equal(t.closes, 1);
	assert_int_equal(asx_event_handler_refs(&t.eh), 1);
	assert_int_equal(asx_reactor_fd_count(r), 0);

	/* A negative return removes that registration; the last one closes. */
	t.out_rc = -1;
	assert_int_equal(asx_reactor_register_fd(r, sv[0], &t.eh, ASX_EV_WRITE), 0);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 5000)), 1);
	assert_int_equal(t.outputs, 2);
	assert_int_equal(t.closes, 2);
	assert_int_equal(t.close_fd, sv[0]);
	assert_int_equal(t.close_mask, ASX_EV_WRITE);
	assert_int_equal(asx_reactor_fd_count(r), 0);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 20)), 0);
	assert_int_equal(t.outputs, 2);
	assert_int_equal(asx_reactor_destroy(r), 0);
	assert_int_equal(t.closes, 2);
	th_close_fds(&a);
	th_close_fds(&b);
	close(sv[0]);
	close(sv[1]);
}

/* ------------------------------------------------------------ removal during dispatch */

struct pair_ctx {
	struct asx_reactor *r;
	struct th *other;
	int dispatched;
};

static int remove_other(struct th *t, int fd)
{
	struct pair_ctx *c = t->ctx;

	(void)drain_byte(fd);
	c->dispatched++;
	assert_int_equal(asx_reactor_remove_fd(c->r, c->other->rfd, ASX_EV_READ), 0);
	return -1;	/* and itself */
}

static void test_remove_other_in_batch(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct pair_ctx c = { .r = r };
	struct timespec ts;
	struct th a, b;

	for (int round = 0; round < 20; round++) {
		th_init(&a);
		th_init(&b);
		th_pipe(&a);
		th_pipe(&b);
		a.on_input = b.on_input = remove_other;
		a.ctx = b.ctx = &c;
		c.dispatched = 0;
		assert_int_equal(asx_reactor_register_fd(r, a.rfd, &a.eh, ASX_EV_READ), 0);
		assert_int_equal(asx_reactor_register_fd(r, b.rfd, &b.eh, ASX_EV_READ), 0);
		/* Both ready before the wait: one epoll batch holds both. */
		th_poke(&a);
		th_poke(&b);
		/* Whichever runs first removes the other: only one dispatch. */
		c.other = &b;
		a.ctx = &c;
		struct pair_ctx cb = { .r = r, .other = &a };

		b.ctx = &cb;
		int n = asx_reactor_run_once(r, in_ms(&ts, 5000));

		assert_int_equal(n, 1);
		assert_int_equal(c.dispatched + cb.dispatched, 1);
		assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 20)), 0);
		assert_int_equal(a.inputs + b.inputs, 1);
		assert_int_equal(a.closes, 1);
		assert_int_equal(b.closes, 1);
		assert_int_equal(asx_event_handler_refs(&a.eh), 1);
		assert_int_equal(asx_event_handler_refs(&b.eh), 1);
		assert_int_equal(asx_reactor_fd_count(r), 0);
		th_close_fds(&a);
		th_close_fds(&b);
	}
	assert_int_equal(asx_reactor_destroy(r), 0);
}

/*
 * The first callback removes and closes the other descriptor, then opens a
 * new pipe that gets the same number and registers a third handler on it.
 * The stale event in the batch must not reach the third handler.
 */
struct reuse_ctx {
	struct asx_reactor *r;
	struct th *a, *b, *c;
	int newfd[2];
	bool done;
};

static int reuse_input(struct th *t, int fd)
{
	struct reuse_ctx *x = t->ctx;
	struct th *other = t == x->a ? x->b : x->a;
	int p[2], victim = other->rfd;

	(void)drain_byte(fd);
	if (x->done)
		return 0;
	x->done = true;
	assert_int_equal(asx_reactor_remove_fd(x->r, victim, ASX_EV_READ), 0);
	close(victim);
	other->rfd = -1;
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	if (p[0] != victim) {	/* lowest free number: normally the victim's */
		int d = dup2(p[0], victim);

		assert_int_equal(d, victim);
		close(p[0]);
		p[0] = victim;
	}
	x->newfd[0] = p[0];
	x->newfd[1] = p[1];
	assert_int_equal(asx_reactor_register_fd(x->r, p[0], &x->c->eh, ASX_EV_READ), 0);
	return 0;
}

static void test_fd_reuse_in_batch(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct th a, b, c;
	struct reuse_ctx x = { .r = r, .a = &a, .b = &b, .c = &c };
	struct timespec ts;

	th_init(&a);
	th_init(&b);
	th_init(&c);
	th_pipe(&a);
	th_pipe(&b);
	a.on_input = b.on_input = reuse_input;
	a.ctx = b.ctx = &x;
	assert_int_equal(asx_reactor_register_fd(r, a.rfd, &a.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_register_fd(r, b.rfd, &b.eh, ASX_EV_READ), 0);
	th_poke(&a);
	th_poke(&b);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 5000)), 1);
	/* The new pipe is empty: its handler must not have been called. */
	assert_int_equal(c.inputs, 0);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 20)), 0);
	assert_int_equal(c.inputs, 0);
	assert_int_equal(asx_reactor_destroy(r), 0);
	assert_int_equal(a.closes + b.closes + c.closes, 3);
	th_close_fds(&a);
	th_close_fds(&b);
	close(x.newfd[0]);
	close(x.newfd[1]);
}

/* A heap handler that removes itself and drops the creator's reference. */
static int self_destruct(struct th *t, int fd)
{
	(void)drain_byte(fd);
	close(t->wfd);
	t->wfd = -1;
	asx_event_handler_put(&t->eh);	/* creator's reference */
	/* Still valid: the dispatch reference. */
	assert_true(asx_event_handler_refs(&t->eh) >= 1);
	return -1;
}

static void test_self_delete(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct timespec ts;
	struct th *t = malloc(sizeof(*t));
	int rfd;

	th_init(t);
	t->heap = true;
	th_pipe(t);
	t->on_input = self_destruct;
	rfd = t->rfd;
	released = 0;
	assert_int_equal(asx_reactor_register_fd(r, t->rfd, &t->eh, ASX_EV_READ), 0);
	th_poke(t);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 5000)), 1);
	/* handle_close ran, then the last reference freed it (ASan checks the rest). */
	assert_int_equal(released, 1);
	assert_int_equal(asx_reactor_fd_count(r), 0);
	close(rfd);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

/* handle_close is deferred while the handler is in a callback. */
struct defer_ctx {
	struct asx_reactor *r;
	int closes_seen_inside;
};

static int remove_self_inside(struct th *t, int fd)
{
	struct defer_ctx *d = t->ctx;

	(void)drain_byte(fd);
	assert_int_equal(asx_reactor_remove_handler(d->r, &t->eh), 0);
	d->closes_seen_inside = t->closes;
	return 0;
}

static void test_close_deferred(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct defer_ctx d = { .r = r, .closes_seen_inside = -1 };
	struct timespec ts;
	struct th t;

	th_init(&t);
	th_pipe(&t);
	t.on_input = remove_self_inside;
	t.ctx = &d;
	assert_int_equal(asx_reactor_register_fd(r, t.rfd, &t.eh, ASX_EV_READ), 0);
	assert_true(asx_reactor_schedule_timer(r, &t.eh, NULL, 3600 * 1000 * MS, 0) > 0);
	th_poke(&t);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 5000)), 1);
	assert_int_equal(d.closes_seen_inside, 0);	/* not nested in handle_input */
	assert_int_equal(t.closes, 1);			/* but right after it */
	assert_int_equal(asx_reactor_timer_count(r), 0);
	assert_int_equal(asx_event_handler_refs(&t.eh), 1);
	assert_int_equal(asx_reactor_destroy(r), 0);
	assert_int_equal(t.closes, 1);
	th_close_fds(&t);
}

/* ------------------------------------------------------------ many handlers, threads */

#define NPIPES	200
#define NREGTHR	4

struct many {
	struct asx_reactor *r;
	struct th h[NPIPES];
	int total_inputs;	/* loop thread */
	int timers_fired;	/* loop thread */
	int early;		/* loop thread */
	uint64_t max_late;
};

static int many_input(struct th *t, int fd)
{
	struct many *m = t->ctx;

	(void)drain_byte(fd);
	m->total_inputs++;
	return 0;
}

static int many_timeout(struct th *t, const struct timespec *now, void *arg)
{
	struct many *m = t->ctx;
	uint64_t due = (uint64_t)(uintptr_t)arg, n = asx_now_ns();

	if (asx_timespec_ns(now) < due || n < due)
		m->early++;
	else if (n - due > m->max_late)
		m->max_late = n - due;
	m->timers_fired++;
	return 0;
}

static struct many *many_g;
static int many_idx;

static void *many_thread(void *arg)
{
	struct many *m = many_g;
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	for (;;) {
		int i = __atomic_fetch_add(&many_idx, 1, __ATOMIC_RELAXED);

		if (i >= NPIPES)
			break;
		struct th *t = &m->h[i];

		th_init(t);
		th_pipe(t);
		t->on_input = many_input;
		t->on_timeout = many_timeout;
		t->ctx = m;
		assert_int_equal(asx_reactor_register_fd(m->r, t->rfd, &t->eh, ASX_EV_READ), 0);
		/* A timer from this thread too, with a random delay up to 100 ms. */
		uint64_t delay = (uint64_t)(rand_r(&seed) % 100) * MS;
		uint64_t due = asx_now_ns() + delay;

		assert_true(asx_reactor_schedule_timer(m->r, &t->eh,
						       (void *)(uintptr_t)due, delay, 0) > 0);
		th_poke(t);
	}
	return NULL;
}

static bool many_done(void *ctx)
{
	struct many *m = ctx;

	return m->total_inputs == NPIPES && m->timers_fired == NPIPES;
}

static void test_many_handlers_threads(void **state)
{
	struct many *m = calloc(1, sizeof(*m));
	pthread_t thr[NREGTHR];

	assert_int_equal(asx_reactor_create(&m->r), 0);
	many_g = m;
	many_idx = 0;
	/* The loop runs while the threads register: every call must wake it. */
	for (int i = 0; i < NREGTHR; i++)
		assert_int_equal(pthread_create(&thr[i], NULL, many_thread,
						(void *)(uintptr_t)(i + 1)), 0);
	run_until(m->r, many_done, m);
	for (int i = 0; i < NREGTHR; i++)
		assert_int_equal(pthread_join(thr[i], NULL), 0);
	assert_int_equal(m->total_inputs, NPIPES);
	assert_int_equal(m->timers_fired, NPIPES);
	assert_int_equal(m->early, 0);
	assert_true(m->max_late < LATE_LIMIT);
	assert_int_equal(asx_reactor_fd_count(m->r), NPIPES);
	assert_int_equal(asx_reactor_timer_count(m->r), 0);
	/* One-shot timers expired, descriptors remain: nobody closed yet. */
	for (int i = 0; i < NPIPES; i++)
		assert_int_equal(m->h[i].closes, 0);
	/* Remove half by handler, destroy closes the rest: once each. */
	for (int i = 0; i < NPIPES; i += 2)
		assert_int_equal(asx_reactor_remove_handler(m->r, &m->h[i].eh), 0);
	assert_int_equal(asx_reactor_fd_count(m->r), NPIPES / 2);
	assert_int_equal(asx_reactor_destroy(m->r), 0);
	for (int i = 0; i < NPIPES; i++) {
		assert_int_equal(m->h[i].closes, 1);
		assert_int_equal(asx_event_handler_refs(&m->h[i].eh), 1);
		th_close_fds(&m->h[i]);
	}
	free(m);
}

/* Registration from another thread while the loop is blocked with no deadline. */
struct late_reg {
	struct asx_reactor *r;
	struct th t;
};

static void *late_register(void *arg)
{
	struct late_reg *l = arg;

	clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 50 * MS }, NULL);
	assert_int_equal(asx_reactor_register_fd(l->r, l->t.rfd, &l->t.eh, ASX_EV_READ), 0);
	return NULL;
}

static void test_register_wakes_loop(void **state)
{
	struct late_reg l;
	pthread_t thr;

	assert_int_equal(asx_reactor_create(&l.r), 0);
	th_init(&l.t);
	th_pipe(&l.t);
	th_poke(&l.t);	/* already readable: ready as soon as it is registered */
	assert_int_equal(pthread_create(&thr, NULL, late_register, &l), 0);
	uint64_t t0 = asx_now_ns();

	assert_int_equal(asx_reactor_run_once(l.r, NULL), 1);
	assert_true(asx_now_ns() - t0 < WAIT_LIMIT);
	assert_int_equal(l.t.inputs, 1);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(asx_reactor_destroy(l.r), 0);
	th_close_fds(&l.t);
}

/* ------------------------------------------------------------ timers */

#define NORDER 20

struct order_ctx {
	int fired[NORDER];
	int n;
	uint64_t due[NORDER];
	int early;
	uint64_t max_late;
};

static int order_timeout(struct th *t, const struct timespec *now, void *arg)
{
	struct order_ctx *o = t->ctx;
	int k = (int)(intptr_t)arg;
	uint64_t n = asx_now_ns();

	if (asx_timespec_ns(now) < o->due[k] || n < o->due[k])
		o->early++;
	else if (n - o->due[k] > o->max_late)
		o->max_late = n - o->due[k];
	o->fired[o->n++] = k;
	return 0;
}

static bool order_done(void *ctx)
{
	return ((struct order_ctx *)ctx)->n == NORDER;
}

static void test_timer_order_accuracy(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct order_ctx o = { .n = 0 };
	struct timespec ts;
	struct th t;
	int perm[NORDER];

	th_init(&t);
	t.on_timeout = order_timeout;
	t.ctx = &o;
	for (int i = 0; i < NORDER; i++)
		perm[i] = i;
	srand(42);
	for (int i = NORDER - 1; i > 0; i--) {
		int j = rand() % (i + 1), x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	/* Scheduled in shuffled order; k fires at (k + 1) * 10 ms. */
	for (int i = 0; i < NORDER; i++) {
		int k = perm[i];
		int64_t id = asx_reactor_schedule_timer(r, &t.eh, (void *)(intptr_t)k,
							(uint64_t)(k + 1) * 10 * MS, 0);

		assert_true(id > 0);
		assert_int_equal(asx_reactor_timer_deadline(r, id, &ts), 0);
		o.due[k] = asx_timespec_ns(&ts);
	}
	run_until(r, order_done, &o);
	for (int i = 0; i < NORDER; i++)
		assert_int_equal(o.fired[i], i);
	assert_int_equal(o.early, 0);
	assert_true(o.max_late < LATE_LIMIT);
	/* All one-shot: the lifetime ended with the last one. */
	assert_int_equal(t.closes, 1);
	assert_int_equal(t.close_mask, ASX_EV_TIMER);
	assert_int_equal(t.close_fd, -1);

	/* Equal deadlines fire in scheduling order. */
	memset(&o, 0, sizeof(o));
	in_ms(&ts, 20);
	for (int k = 0; k < NORDER; k++) {
		o.due[k] = asx_timespec_ns(&ts);
		assert_true(asx_reactor_schedule_timer_at(r, &t.eh, (void *)(intptr_t)k, &ts, 0) > 0);
	}
	run_until(r, order_done, &o);
	for (int i = 0; i < NORDER; i++)
		assert_int_equal(o.fired[i], i);
	assert_int_equal(o.early, 0);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

struct ival_ctx {
	struct asx_reactor *r;
	int64_t id;
	uint64_t stamp[16];
	int n;
	int stop_at;
};

static int ival_timeout(struct th *t, const struct timespec *now, void *arg)
{
	struct ival_ctx *v = t->ctx;

	v->stamp[v->n++] = asx_timespec_ns(now);
	if (v->n == 3)	/* 20 ms -> 60 ms after the pending expiry (the 4th) */
		assert_int_equal(asx_reactor_reset_timer_interval(v->r, v->id, 60 * MS), 0);
	if (v->n == v->stop_at)	/* cancel from inside its own callback */
		assert_int_equal(asx_reactor_cancel_timer(v->r, v->id, NULL), 0);
	return 0;
}

static bool ival_done(void *ctx)
{
	struct ival_ctx *v = ctx;

	return v->n >= v->stop_at;
}

static void test_timer_interval_reset_cancel(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct ival_ctx v = { .r = r, .stop_at = 6 };
	struct timespec ts;
	struct th t;

	th_init(&t);
	t.on_timeout = ival_timeout;
	t.ctx = &v;
	uint64_t t0 = asx_now_ns();

	v.id = asx_reactor_schedule_timer(r, &t.eh, NULL, 20 * MS, 20 * MS);
	assert_true(v.id > 0);
	run_until(r, ival_done, &v);
	/* No more expiries after the cancel. */
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 200)), 0);
	assert_int_equal(v.n, 6);
	assert_int_equal(t.closes, 1);
	assert_int_equal(asx_reactor_cancel_timer(r, v.id, NULL), -ENOENT);

	/*
	 * Phase is kept: expiry k (from 0) is due at t0 + 20 ms * (k + 1) for
	 * k <= 3 (the reset in expiry 2's callback does not move the pending
	 * expiry 3), then every 60 ms.  `due` is a lower bound of each expiry's
	 * deadline: had the reset not taken effect, expiry 4 would come at
	 * t0 + 100 ms, below its bound of t0 + 140 ms.  Lateness is only
	 * bounded generously.
	 */
	uint64_t due = t0 + 20 * MS;

	for (int k = 0; k < v.n; k++) {
		assert_true(v.stamp[k] >= due);
		assert_true(v.stamp[k] - due < LATE_LIMIT);
		if (v.stamp[k] - due < 20 * MS)	/* skipped periods keep the phase */
			due += k < 3 ? 20 * MS : 60 * MS;
		else
			due = v.stamp[k] + 1;	/* late machine: only "never early" holds */
	}
	assert_int_equal(asx_reactor_destroy(r), 0);
}

/* A timer callback cancels another timer due at the same instant. */
struct cancel_ctx {
	struct asx_reactor *r;
	int64_t first, second;
	int which[4];
	int n;
};

static int cancel_other_timeout(struct th *t, const struct timespec *now, void *arg)
{
	struct cancel_ctx *c = t->ctx;
	void *a = NULL;

	c->which[c->n++] = (int)(intptr_t)arg;
	if ((intptr_t)arg == 1) {
		assert_int_equal(asx_reactor_cancel_timer(c->r, c->second, &a), 0);
		assert_ptr_equal(a, (void *)2);
	}
	return 0;
}

static int neg_after_two(struct th *t, const struct timespec *now, void *arg)
{
	return t->timeouts >= 2 ? -1 : 0;
}

struct xcancel {
	struct asx_reactor *r;
	int64_t id;
	int rc;
};

static void *cancel_from_thread(void *arg)
{
	struct xcancel *x = arg;

	x->rc = asx_reactor_cancel_timer(x->r, x->id, NULL);
	return NULL;
}

static void test_timer_cancel(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct cancel_ctx c = { .r = r };
	struct timespec ts, at;
	struct th t, u;
	pthread_t thr;

	th_init(&t);
	t.on_timeout = cancel_other_timeout;
	t.ctx = &c;
	in_ms(&at, 20);
	c.first = asx_reactor_schedule_timer_at(r, &t.eh, (void *)1, &at, 0);
	c.second = asx_reactor_schedule_timer_at(r, &t.eh, (void *)2, &at, 0);
	assert_true(c.first > 0 && c.second > c.first);
	uint64_t end = asx_now_ns() + 300 * MS;

	while (asx_now_ns() < end)
		(void)asx_reactor_run_once(r, in_ms(&ts, 50));
	assert_int_equal(c.n, 1);
	assert_int_equal(c.which[0], 1);
	assert_int_equal(t.closes, 1);

	/* Cancel from another thread. */
	th_init(&u);
	struct xcancel x = { .r = r, .rc = 1 };

	x.id = asx_reactor_schedule_timer(r, &u.eh, NULL, 100 * MS, 0);
	assert_int_equal(pthread_create(&thr, NULL, cancel_from_thread, &x), 0);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(x.rc, 0);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 300)), 0);
	assert_int_equal(u.timeouts, 0);
	assert_int_equal(u.closes, 1);

	/* A negative return ends an interval timer. */
	th_init(&u);
	u.on_timeout = neg_after_two;
	assert_true(asx_reactor_schedule_timer(r, &u.eh, NULL, 5 * MS, 5 * MS) > 0);
	end = asx_now_ns() + 300 * MS;
	while (asx_now_ns() < end)
		(void)asx_reactor_run_once(r, in_ms(&ts, 50));
	assert_int_equal(u.timeouts, 2);
	assert_int_equal(u.closes, 1);
	assert_int_equal(asx_reactor_timer_count(r), 0);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

/*
 * Cancelling a timer whose callback runs.  A one-shot timer has fired once
 * its callback starts: its callback owns arg, so a cancel from the callback
 * or from another thread is -ENOENT and leaves *argp alone.  A periodic
 * timer's cancel from another thread waits for the running callback, then
 * hands arg out (the callback does not run again); if that callback ended
 * the timer itself (a negative return, its own cancel), the waiting cancel
 * is -ENOENT.
 */
enum { RUN_ONESHOT, RUN_PERIODIC, RUN_NEGATIVE, RUN_SELF_CANCEL };

struct run_ctx {
	struct asx_reactor *r;
	int64_t id;
	int mode;
	int entered, calling, left;	/* atomic: callback began, cancel called, callback ends */
	int go;				/* atomic: the other thread's cancel returned */
	int self_rc, dl_rc, reset_rc;
	void *self_arg;
	int x_rc, x_left;		/* the other thread's cancel, and `left` when it returned */
	void *x_arg;
	int waited_out;
};

static bool wait_flag(int *flag, uint64_t limit_ns)
{
	uint64_t end = asx_now_ns() + limit_ns;

	while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
		if (asx_now_ns() > end)
			return false;
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 1 * MS }, NULL);
	}
	return true;
}

static int running_timeout(struct th *t, const struct timespec *now, void *arg)
{
	struct run_ctx *c = t->ctx;
	struct timespec ts;
	int rc = 0;

	if (t->timeouts > 1)	/* a periodic timer's later expiries: nothing to do */
		return 0;
	c->self_arg = (void *)-1;
	__atomic_store_n(&c->entered, 1, __ATOMIC_RELEASE);
	if (c->mode == RUN_ONESHOT) {
		/* Until the other thread's cancel is back: it must not wait for us. */
		if (!wait_flag(&c->go, WAIT_LIMIT))
			c->waited_out = 1;
		/* Then from inside: the timer is gone. */
		c->self_rc = asx_reactor_cancel_timer(c->r, c->id, &c->self_arg);
		c->dl_rc = asx_reactor_timer_deadline(c->r, c->id, &ts);
		c->reset_rc = asx_reactor_reset_timer_interval(c->r, c->id, 10 * MS);
	} else {
		/* Hold on past the other thread's call: its cancel must wait for us. */
		if (!wait_flag(&c->calling, WAIT_LIMIT))
			c->waited_out = 1;
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 50 * MS }, NULL);
		if (c->mode == RUN_SELF_CANCEL)
			c->self_rc = asx_reactor_cancel_timer(c->r, c->id, &c->self_arg);
		if (c->mode == RUN_NEGATIVE)
			rc = -1;
	}
	__atomic_store_n(&c->left, 1, __ATOMIC_RELEASE);
	return rc;
}

static void *cancel_running(void *arg)
{
	struct run_ctx *c = arg;

	c->x_arg = (void *)-1;
	if (!wait_flag(&c->entered, WAIT_LIMIT)) {
		c->x_rc = 1;
	} else {
		__atomic_store_n(&c->calling, 1, __ATOMIC_RELEASE);
		c->x_rc = asx_reactor_cancel_timer(c->r, c->id, &c->x_arg);
		c->x_left = __atomic_load_n(&c->left, __ATOMIC_ACQUIRE);
	}
	__atomic_store_n(&c->go, 1, __ATOMIC_RELEASE);
	return NULL;
}

static bool run_ctx_back(void *ctx)
{
	return __atomic_load_n(&((struct run_ctx *)ctx)->go, __ATOMIC_ACQUIRE);
}

/* Schedule a timer of @mode, cancel it from another thread while it runs. */
static void cancel_while_running(struct asx_reactor *r, struct th *t, struct run_ctx *c,
				 int mode)
{
	struct timespec ts;
	pthread_t thr;

	memset(c, 0, sizeof(*c));
	c->r = r;
	c->mode = mode;
	th_init(t);
	t->on_timeout = running_timeout;
	t->ctx = c;
	c->id = asx_reactor_schedule_timer(r, &t->eh, (void *)0x5eed, 10 * MS,
					   mode == RUN_ONESHOT ? 0 : 20 * MS);
	assert_true(c->id > 0);
	assert_int_equal(pthread_create(&thr, NULL, cancel_running, c), 0);
	run_until(r, run_ctx_back, c);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(c->waited_out, 0);
	/* Whatever the outcome, the timer is over: no expiry after the cancel. */
	int before = t->timeouts;

	(void)asx_reactor_run_once(r, in_ms(&ts, 150));
	(void)asx_reactor_run_once(r, in_ms(&ts, 50));
	assert_int_equal(t->timeouts, before);
	assert_int_equal(t->closes, 1);
	assert_int_equal(asx_reactor_timer_count(r), 0);
}

static void test_timer_cancel_running(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct run_ctx c;
	struct th t;

	/* One-shot: fired, so -ENOENT from elsewhere and from its callback. */
	cancel_while_running(r, &t, &c, RUN_ONESHOT);
	assert_int_equal(c.x_rc, -ENOENT);
	assert_ptr_equal(c.x_arg, (void *)-1);
	assert_int_equal(c.self_rc, -ENOENT);
	assert_ptr_equal(c.self_arg, (void *)-1);
	assert_int_equal(c.dl_rc, -ENOENT);
	assert_int_equal(c.reset_rc, -ENOENT);
	assert_int_equal(t.timeouts, 1);

	/* Periodic: the cancel waits for the callback, then arg is the caller's. */
	cancel_while_running(r, &t, &c, RUN_PERIODIC);
	assert_int_equal(c.x_rc, 0);
	assert_ptr_equal(c.x_arg, (void *)0x5eed);
	assert_int_equal(c.x_left, 1);

	/* Periodic, the callback ends it by returning -1: the callback's arg. */
	cancel_while_running(r, &t, &c, RUN_NEGATIVE);
	assert_int_equal(c.x_rc, -ENOENT);
	assert_ptr_equal(c.x_arg, (void *)-1);
	assert_int_equal(c.x_left, 1);

	/* Periodic, the callback cancels itself: arg goes to it, once. */
	cancel_while_running(r, &t, &c, RUN_SELF_CANCEL);
	assert_int_equal(c.self_rc, 0);
	assert_ptr_equal(c.self_arg, (void *)0x5eed);
	assert_int_equal(c.x_rc, -ENOENT);
	assert_ptr_equal(c.x_arg, (void *)-1);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

/*
 * In its own callback a periodic timer's pending expiry is the next one:
 * asx_reactor_timer_deadline() returns it, and
 * asx_reactor_reset_timer_interval(id, 0) lets it fire once more, there.
 * In the last callback of a one-shot the timer is gone (-ENOENT).
 */
struct pend_ctx {
	struct asx_reactor *r;
	int64_t id;
	uint64_t first, pending, stamp[4];
	int dl_rc[4], reset_rc, last_cancel, last_reset;
};

static int pend_timeout(struct th *t, const struct timespec *now, void *arg)
{
	struct pend_ctx *p = t->ctx;
	int k = t->timeouts - 1;
	struct timespec ts = { 0, 0 };

	if (k >= 4)
		return -1;
	p->stamp[k] = asx_timespec_ns(now);
	p->dl_rc[k] = asx_reactor_timer_deadline(p->r, p->id, &ts);
	if (k == 0) {
		p->pending = asx_timespec_ns(&ts);
		p->reset_rc = asx_reactor_reset_timer_interval(p->r, p->id, 0);
	} else {
		p->last_cancel = asx_reactor_cancel_timer(p->r, p->id, NULL);
		p->last_reset = asx_reactor_reset_timer_interval(p->r, p->id, 30 * MS);
	}
	return 0;
}

static bool th_closed(void *ctx)
{
	return ((struct th *)ctx)->closes > 0;
}

static void test_timer_pending_in_callback(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct pend_ctx p = { .r = r };
	struct timespec ts;
	struct th t;

	th_init(&t);
	t.on_timeout = pend_timeout;
	t.ctx = &p;
	p.id = asx_reactor_schedule_timer(r, &t.eh, NULL, 20 * MS, 30 * MS);
	assert_true(p.id > 0);
	assert_int_equal(asx_reactor_timer_deadline(r, p.id, &ts), 0);
	p.first = asx_timespec_ns(&ts);
	run_until(r, th_closed, &t);
	/* No third expiry either. */
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 100)), 0);

	/* First expiry: the pending one is the next period, after now. */
	assert_int_equal(p.dl_rc[0], 0);
	assert_true(p.pending > p.stamp[0]);
	assert_true(p.pending >= p.first + 30 * MS);
	assert_int_equal((p.pending - p.first) % (30 * MS), 0);	/* the phase is kept */
	assert_int_equal(p.reset_rc, 0);
	/* One more expiry, at that deadline, and it is the last. */
	assert_int_equal(t.timeouts, 2);
	assert_true(p.stamp[1] >= p.pending);
	assert_int_equal(p.dl_rc[1], -ENOENT);
	assert_int_equal(p.last_cancel, -ENOENT);
	assert_int_equal(p.last_reset, -ENOENT);
	assert_int_equal(t.closes, 1);
	assert_int_equal(t.close_mask, ASX_EV_TIMER);
	assert_int_equal(asx_reactor_timer_count(r), 0);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

/* A timer scheduled from another thread, earlier than the current wait. */
struct xsched {
	struct asx_reactor *r;
	struct th *t;
	uint64_t due;
};

static void *schedule_from_thread(void *arg)
{
	struct xsched *x = arg;

	clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 30 * MS }, NULL);
	x->due = asx_now_ns() + 20 * MS;
	assert_true(asx_reactor_schedule_timer(x->r, &x->t->eh, NULL, 20 * MS, 0) > 0);
	return NULL;
}

static void test_timer_from_thread_wakes(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct timespec ts;
	struct th t, far;
	struct xsched x = { .r = r, .t = &t };
	pthread_t thr;

	th_init(&t);
	th_init(&far);
	/* The loop sleeps towards a timer an hour away. */
	assert_true(asx_reactor_schedule_timer(r, &far.eh, NULL, 3600 * 1000 * MS, 0) > 0);
	assert_int_equal(pthread_create(&thr, NULL, schedule_from_thread, &x), 0);
	uint64_t t0 = asx_now_ns();

	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 10000)), 1);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(t.timeouts, 1);
	assert_true(asx_now_ns() >= x.due);
	assert_true(asx_now_ns() - t0 < 5000 * MS);
	assert_int_equal(asx_reactor_destroy(r), 0);
	assert_int_equal(far.closes, 1);
}

/*
 * CLOCK_MONOTONIC throughout: the deadline of a timer is "monotonic now +
 * delay", not anything on CLOCK_REALTIME, and the reactor's timerfd is a
 * CLOCK_MONOTONIC one (/proc/self/fdinfo shows clockid 1).  We cannot move
 * the wall clock on a shared host; this pins down what would be affected.
 */
static void test_timer_monotonic(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct timespec ts, rt;
	struct th t;
	int timerfds = 0;

	th_init(&t);
	uint64_t before = asx_now_ns();
	int64_t id = asx_reactor_schedule_timer(r, &t.eh, NULL, 5000 * MS, 0);
	uint64_t after = asx_now_ns();

	assert_true(id > 0);
	assert_int_equal(asx_reactor_timer_deadline(r, id, &ts), 0);
	assert_true(asx_timespec_ns(&ts) >= before + 5000 * MS);
	assert_true(asx_timespec_ns(&ts) <= after + 5000 * MS);
	clock_gettime(CLOCK_REALTIME, &rt);
	/* Distinguishable only if the two clocks differ; they do by decades here. */
	if (asx_timespec_ns(&rt) > after + 3600 * 1000 * MS)
		assert_true(asx_timespec_ns(&ts) + 3600 * 1000 * MS < asx_timespec_ns(&rt));

	DIR *d = opendir("/proc/self/fdinfo");

	assert_non_null(d);
	for (struct dirent *e; (e = readdir(d));) {
		char path[300], line[128];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%s", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			int clk;

			if (sscanf(line, "clockid: %d", &clk) == 1) {
				assert_int_equal(clk, CLOCK_MONOTONIC);
				timerfds++;
			}
		}
		fclose(f);
	}
	closedir(d);
	assert_true(timerfds >= 1);
	assert_int_equal(asx_reactor_destroy(r), 0);
}

/* ------------------------------------------------------------ signals */

static int raise_input(struct th *t, int fd)
{
	(void)drain_byte(fd);
	raise(SIGUSR1);	/* directed at this, the dispatching, thread */
	return 0;
}

static bool got_signal(void *ctx)
{
	return ((struct th *)ctx)->signals > 0;
}

struct xkill {
	union sigval v;
};

static void *queue_signal(void *arg)
{
	struct xkill *k = arg;

	assert_int_equal(sigqueue(getpid(), SIGUSR2, k->v), 0);
	return NULL;
}

static void test_signals(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct th t, s, io;
	struct timespec ts;
	pthread_t thr;

	th_init(&t);
	th_init(&s);
	th_init(&io);
	th_pipe(&io);
	io.on_input = raise_input;
	assert_int_equal(asx_reactor_register_signal(r, SIGKILL, &t.eh), -EINVAL);
	assert_int_equal(asx_reactor_register_signal(r, SIGUSR1, &t.eh), 0);
	assert_int_equal(asx_reactor_register_signal(r, SIGUSR1, &s.eh), -EEXIST);
	assert_int_equal(asx_reactor_register_signal(r, SIGUSR2, &s.eh), 0);

	/* raise() from a callback: a thread-directed signal to the loop's thread. */
	assert_int_equal(asx_reactor_register_fd(r, io.rfd, &io.eh, ASX_EV_READ), 0);
	th_poke(&io);
	run_until(r, got_signal, &t);
	assert_int_equal(t.signals, 1);
	assert_int_equal(t.signo, SIGUSR1);
	assert_int_equal(t.si.ssi_signo, SIGUSR1);
	assert_int_equal(t.si.ssi_pid, getpid());

	/* A process-directed signal with a value, sent from another thread. */
	struct xkill k = { .v.sival_int = 4242 };

	assert_int_equal(pthread_create(&thr, NULL, queue_signal, &k), 0);
	run_until(r, got_signal, &s);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(s.signo, SIGUSR2);
	assert_int_equal(s.si.ssi_code, SI_QUEUE);
	assert_int_equal(s.si.ssi_int, 4242);

	assert_int_equal(asx_reactor_remove_signal(r, SIGUSR1), 0);
	assert_int_equal(t.closes, 1);
	assert_int_equal(t.close_fd, SIGUSR1);
	assert_int_equal(t.close_mask, ASX_EV_SIGNAL);
	assert_int_equal(asx_reactor_remove_signal(r, SIGUSR1), -ENOENT);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 10)), 0);
	assert_int_equal(asx_reactor_destroy(r), 0);
	assert_int_equal(s.closes, 1);
	assert_int_equal(io.closes, 1);
	th_close_fds(&io);
}

/* ------------------------------------------------------------ loop control */

struct ender {
	struct asx_reactor *r;
	int busy_rc;
};

static void *end_later(void *arg)
{
	struct ender *e = arg;
	struct timespec ts;

	clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 50 * MS }, NULL);
	/* Once the main thread dispatches, a second dispatcher is refused. */
	for (int i = 0; i < 1000; i++) {
		e->busy_rc = asx_reactor_run_once(e->r, in_ms(&ts, 0));
		if (e->busy_rc == -EBUSY)
			break;
		clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){ 0, 10 * MS }, NULL);
	}
	asx_reactor_end_loop(e->r);
	return NULL;
}

static int nested_input(struct th *t, int fd)
{
	struct asx_reactor *r = t->ctx;
	struct timespec ts;

	(void)drain_byte(fd);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 0)), -EDEADLK);
	asx_reactor_end_loop(r);	/* from a callback */
	return 0;
}

static void test_end_loop(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct ender e = { .r = r };
	struct timespec ts;
	pthread_t thr;
	struct th t;

	/* From another thread, while run() blocks with nothing registered. */
	uint64_t t0 = asx_now_ns();

	assert_int_equal(pthread_create(&thr, NULL, end_later, &e), 0);

	assert_int_equal(asx_reactor_run(r), 0);
	assert_true(asx_now_ns() - t0 >= 50 * MS);
	assert_true(asx_now_ns() - t0 < WAIT_LIMIT);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(e.busy_rc, -EBUSY);
	/* Sticky until reset. */
	assert_true(asx_reactor_loop_done(r));
	assert_int_equal(asx_reactor_run(r), 0);
	asx_reactor_reset_loop(r);
	assert_false(asx_reactor_loop_done(r));

	/* From a callback; and run_once nested in a callback is refused. */
	th_init(&t);
	th_pipe(&t);
	t.on_input = nested_input;
	t.ctx = r;
	assert_int_equal(asx_reactor_register_fd(r, t.rfd, &t.eh, ASX_EV_READ), 0);
	th_poke(&t);
	assert_int_equal(asx_reactor_run(r), 0);
	assert_int_equal(t.inputs, 1);
	asx_reactor_reset_loop(r);

	/* A wake-up alone makes run_once return early. */
	assert_int_equal(asx_reactor_notify(r, NULL, 0), 0);
	t0 = asx_now_ns();
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 5000)), 0);
	assert_true(asx_now_ns() - t0 < 4000 * MS);
	assert_int_equal(asx_reactor_destroy(r), 0);
	th_close_fds(&t);
}

static void test_suspend_resume(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct timespec ts;
	struct th t, b;

	th_init(&t);
	th_init(&b);
	th_pipe(&t);
	th_pipe(&b);
	assert_int_equal(asx_reactor_suspend_handler(r, &t.eh), -ENOENT);
	assert_int_equal(asx_reactor_register_fd(r, t.rfd, &t.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_suspend_handler(r, &t.eh), 0);
	/* Registered while suspended: stays quiet too. */
	assert_int_equal(asx_reactor_register_fd(r, b.rfd, &t.eh, ASX_EV_READ), 0);
	th_poke(&t);
	th_poke(&b);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 50)), 0);
	assert_int_equal(t.inputs, 0);
	/* A peer hang-up must not wake a suspended handler either. */
	close(b.wfd);
	b.wfd = -1;
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 50)), 0);
	assert_int_equal(asx_reactor_resume_handler(r, &t.eh), 0);
	int n = 0;

	while (t.inputs < 2 && n < 100) {
		assert_true(asx_reactor_run_once(r, in_ms(&ts, 1000)) > 0);
		n++;
	}
	assert_true(t.inputs >= 2);
	assert_int_equal(asx_reactor_destroy(r), 0);
	assert_int_equal(t.closes, 1);
	th_close_fds(&t);
	th_close_fds(&b);
}

/* ------------------------------------------------------------ notifications */

struct note_ctx {
	struct asx_reactor *r;
	struct th *t;
	int posts;
};

static void *post_notes(void *arg)
{
	struct note_ctx *n = arg;

	for (int i = 0; i < n->posts; i++)
		assert_int_equal(asx_reactor_notify(n->r, &n->t->eh, ASX_EV_READ), 0);
	return NULL;
}

static bool notes_done(void *ctx)
{
	struct note_ctx *n = ctx;

	return n->t->inputs == n->posts * 2;
}

static void test_notify_threads(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct th t;
	struct note_ctx n = { .r = r, .t = &t, .posts = 500 };
	pthread_t thr[2];
	struct timespec ts;

	th_init(&t);
	assert_int_equal(asx_reactor_notify(r, &t.eh, ASX_EV_TIMER), -EINVAL);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&thr[i], NULL, post_notes, &n), 0);
	run_until(r, notes_done, &n);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(thr[i], NULL), 0);
	assert_int_equal(t.inputs, 1000);	/* no coalescing for plain notifications */
	assert_int_equal(t.last_input_fd, -1);
	assert_int_equal(t.input_tid, (pid_t)syscall(SYS_gettid));
	assert_int_equal(asx_event_handler_refs(&t.eh), 1);
	/* Not registered: no lifetime, no handle_close. */
	assert_int_equal(t.closes, 0);

	/* Purge drops queued ones and their references. */
	assert_int_equal(asx_reactor_notify(r, &t.eh, ASX_EV_READ | ASX_EV_WRITE), 0);
	assert_int_equal(asx_event_handler_refs(&t.eh), 3);
	assert_int_equal(asx_reactor_purge_notifications(r, &t.eh), 2);
	assert_int_equal(asx_event_handler_refs(&t.eh), 1);
	/* Destroy frees what is still queued. */
	assert_int_equal(asx_reactor_notify(r, &t.eh, ASX_EV_WRITE), 0);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 1000)), 1);
	assert_int_equal(t.outputs, 1);
	assert_int_equal(asx_reactor_notify(r, &t.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_destroy(r), 0);
	assert_int_equal(asx_event_handler_refs(&t.eh), 1);
}

struct mq_ctx {
	struct asx_msgq *q;
	int got;
	int calls;
	int producers_left;
};

static int mq_drain(struct th *t, int fd)
{
	struct mq_ctx *c = t->ctx;
	struct asx_msg *m;

	c->calls++;
	while (asx_msgq_dequeue(c->q, &m, ASX_MSGQ_NOWAIT, NULL) == 0) {
		c->got++;
		asx_msg_free_chain(m);
	}
	return 0;
}

#define MQ_PRODUCERS	3
#define MQ_MSGS		2000

static void *mq_produce(void *arg)
{
	struct mq_ctx *c = arg;

	for (int i = 0; i < MQ_MSGS; i++) {
		struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_DATA);

		assert_non_null(m);
		assert_int_equal(asx_msgq_enqueue(c->q, m, ASX_MSGQ_FORCE, NULL), 0);
	}
	return NULL;
}

static bool mq_done(void *ctx)
{
	struct mq_ctx *c = ctx;

	return c->got == MQ_PRODUCERS * MQ_MSGS;
}

static void test_msgq_notify(void **state)
{
	struct asx_reactor *r = NULL;
	assert_int_equal(asx_reactor_create(&r), 0);
	struct mq_ctx c = { .got = 0 };
	struct timespec ts;
	pthread_t thr[MQ_PRODUCERS];
	struct th t;

	assert_int_equal(asx_msgq_create(&c.q, 0, 0), 0);
	assert_non_null(c.q);
	th_init(&t);
	t.on_input = mq_drain;
	t.ctx = &c;

	/* Messages waiting at bind time: one call at once. */
	for (int i = 0; i < 10; i++)
		assert_int_equal(asx_msgq_enqueue(c.q, asx_msg_alloc(8, ASX_MSG_DATA), 0, NULL), 0);
	assert_int_equal(asx_reactor_notify_msgq(r, c.q, &t.eh, ASX_EV_RW), -EINVAL);
	assert_int_equal(asx_reactor_notify_msgq(r, c.q, &t.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_notify_msgq(r, c.q, &t.eh, ASX_EV_READ), -EEXIST);
	/* More while nobody dispatches: coalesced into that same call. */
	for (int i = 0; i < 10; i++)
		assert_int_equal(asx_msgq_enqueue(c.q, asx_msg_alloc(8, ASX_MSG_DATA), 0, NULL), 0);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 1000)), 1);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.got, 20);
	assert_int_equal(t.last_input_fd, -1);
	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 20)), 0);

	/* Producers in other threads wake the loop; nothing is lost. */
	c.got = 0;
	c.calls = 0;
	for (int i = 0; i < MQ_PRODUCERS; i++)
		assert_int_equal(pthread_create(&thr[i], NULL, mq_produce, &c), 0);
	run_until(r, mq_done, &c);
	for (int i = 0; i < MQ_PRODUCERS; i++)
		assert_int_equal(pthread_join(thr[i], NULL), 0);
	assert_int_equal(c.got, MQ_PRODUCERS * MQ_MSGS);
	assert_true(c.calls >= 1 && c.calls <= MQ_PRODUCERS * MQ_MSGS);
	/* A trailing coalesced call may find the queue already empty; let it run. */
	while (asx_reactor_run_once(r, in_ms(&ts, 20)) > 0)
		;
	assert_int_equal(c.got, MQ_PRODUCERS * MQ_MSGS);

	/* Unbinding ends the lifetime; enqueues no longer reach the reactor. */
	assert_int_equal(asx_reactor_remove_msgq(r, c.q), 0);
	assert_int_equal(t.closes, 1);
	assert_int_equal(t.close_mask, ASX_EV_MSGQ);
	assert_int_equal(asx_reactor_remove_msgq(r, c.q), -ENOENT);
	assert_int_equal(asx_msgq_enqueue(c.q, asx_msg_alloc(8, ASX_MSG_DATA), 0, NULL), 0);
	int calls = c.calls;

	assert_int_equal(asx_reactor_run_once(r, in_ms(&ts, 30)), 0);
	assert_int_equal(c.calls, calls);
	assert_int_equal(asx_event_handler_refs(&t.eh), 1);

	/* Bound again and left to destroy. */
	assert_int_equal(asx_reactor_notify_msgq(r, c.q, &t.eh, ASX_EV_READ), 0);
	assert_int_equal(asx_reactor_destroy(r), 0);
	assert_int_equal(t.closes, 2);
	asx_msgq_destroy(c.q);
}

/* ------------------------------------------------------------ memory */

static size_t heap_in_use(void)
{
#if SANITIZED
	return __sanitizer_get_current_allocated_bytes();
#else
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
#endif
}

/*
 * With RLIMIT_NOFILE at its hard maximum and a descriptor numbered just
 * below it, the reactor's memory must stay small: a table indexed by
 * descriptor would need (limit x pointer) bytes at least.
 */
static void test_memory_independent_of_rlimit(void **state)
{
	struct rlimit old, rl;
	struct th t[64];
	struct asx_reactor *r;
	int p[2], hi;

	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	rl = old;
	rl.rlim_cur = rl.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	hi = (int)(rl.rlim_cur > 1 << 24 ? 1 << 24 : rl.rlim_cur) - 1;
	assert_int_equal(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	assert_int_equal(dup2(p[0], hi), hi);

	size_t base = heap_in_use();

	assert_int_equal(asx_reactor_create(&r), 0);
	assert_non_null(r);
	th_init(&t[0]);
	assert_int_equal(asx_reactor_register_fd(r, hi, &t[0].eh, ASX_EV_READ), 0);
	size_t one = heap_in_use() - base;

	print_message("    reactor + 1 handle at fd %d: %zu bytes (limit %lu)\n", hi, one,
		      (unsigned long)rl.rlim_cur);
	assert_true(one < 16 * 1024);
	assert_true(one < (size_t)rl.rlim_cur * sizeof(void *) / 4);

	/* Grows with registrations, and gives the memory back. */
	int fds[63];

	for (int i = 0; i < 63; i++) {
		fds[i] = dup(p[0]);
		assert_true(fds[i] >= 0);
		th_init(&t[i + 1]);
		assert_int_equal(asx_reactor_register_fd(r, fds[i], &t[i + 1].eh, ASX_EV_READ), 0);
	}
	size_t many = heap_in_use() - base;

	assert_true(many > one);
	assert_true(many < one + 64 * 256);
	for (int i = 0; i < 63; i++) {
		assert_int_equal(asx_reactor_remove_fd(r, fds[i], ASX_EV_READ), 0);
		close(fds[i]);
	}
	print_message("    64 handles: %zu bytes, back to 1: %zu bytes\n", many, heap_in_use() - base);
#if SANITIZED
	assert_true(heap_in_use() - base <= one + 512);	/* exact accounting */
#else
	/* glibc counts chunks parked in its per-thread cache as in use. */
	assert_true(heap_in_use() - base < many);
#endif
	assert_int_equal(asx_reactor_destroy(r), 0);
	close(hi);
	close(p[0]);
	close(p[1]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_io_basic),
		cmocka_unit_test(test_masks_and_close_once),
		cmocka_unit_test(test_remove_other_in_batch),
		cmocka_unit_test(test_fd_reuse_in_batch),
		cmocka_unit_test(test_self_delete),
		cmocka_unit_test(test_close_deferred),
		cmocka_unit_test(test_many_handlers_threads),
		cmocka_unit_test(test_register_wakes_loop),
		cmocka_unit_test(test_timer_order_accuracy),
		cmocka_unit_test(test_timer_interval_reset_cancel),
		cmocka_unit_test(test_timer_cancel),
		cmocka_unit_test(test_timer_cancel_running),
		cmocka_unit_test(test_timer_pending_in_callback),
		cmocka_unit_test(test_timer_from_thread_wakes),
		cmocka_unit_test(test_timer_monotonic),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_end_loop),
		cmocka_unit_test(test_suspend_resume),
		cmocka_unit_test(test_notify_threads),
		cmocka_unit_test(test_msgq_notify),
		cmocka_unit_test(test_memory_independent_of_rlimit),
	};
	sigset_t set;

	/* Signals the reactor reads must be blocked in every thread: do it first. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
