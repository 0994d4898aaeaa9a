// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Reactor timers, as Documentation/reactor.rst ("Timers") says they behave
 * while their callback runs:
 *  1. a one-shot timer has fired once its handle_timeout starts: cancel
 *     (from that callback, or from another thread meanwhile), reset and
 *     timer_deadline give -ENOENT and leave *argp alone -- the callback
 *     owns arg;
 *  2. a cancel from another thread of a periodic timer whose callback runs
 *     returns (0 and arg) only once that callback has returned, so the
 *     caller may free arg;
 *  3. inside a periodic timer's own callback, asx_reactor_timer_deadline()
 *     is the pending (next) expiry, after the callback's now, and
 *     asx_reactor_reset_timer_interval(id, 0) makes it fire once more, at
 *     that deadline (never before), and then end.
 */
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <asx/reactor.h>
#include "outsider.h"

#define MS 1000000ULL

struct tm_test {
	struct asx_event_handler eh;
	struct asx_reactor *r;
	int64_t id;
	int part;
	int fires;			/* callbacks run */
	/* 1 */
	int cancel_r, reset_r, deadline_r;
	void *got;
	/* 1, 2: the callback and another thread (atomics) */
	int running, other_done, cb_done;
	/* 3 */
	struct timespec now[3], pending;
	int deadline_in_cb, reset_in_cb, deadline_in_second;
};

static int sentinel, token;

static void nap(int ms)
{
	poll(NULL, 0, ms);
}

static uint64_t ns(const struct timespec *ts)
{
	return asx_timespec_ns(ts);
}

/* wait (bounded) for an atomic flag; 1 if it came */
static int wait_flag(int *flag, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE))
			return 1;
		nap(1);
	}
	return __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}

static int on_timeout(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	struct tm_test *t = (struct tm_test *)eh;
	struct timespec ts;

	CHECK(arg == &token);
	if (t->fires < 3)
		t->now[t->fires] = *now;
	t->fires++;
	switch (t->part) {
	case 1:				/* a one-shot cancelling itself */
		t->got = &sentinel;
		t->cancel_r = asx_reactor_cancel_timer(t->r, t->id, &t->got);
		t->reset_r = asx_reactor_reset_timer_interval(t->r, t->id, 5 * MS);
		t->deadline_r = asx_reactor_timer_deadline(t->r, t->id, &ts);
		break;
	case 11:			/* a one-shot another thread cancels */
	case 2:				/* a periodic one another thread cancels */
		__atomic_store_n(&t->running, 1, __ATOMIC_RELEASE);
		/* part 11: the cancel must not wait for us; part 2: it must */
		if (t->part == 11)
			CHECK(wait_flag(&t->other_done, 10000));
		else
			nap(200);
		__atomic_store_n(&t->cb_done, 1, __ATOMIC_RELEASE);
		break;
	case 3:				/* periodic; reset to 0 in its first callback */
		if (t->fires == 1) {
			t->deadline_in_cb = asx_reactor_timer_deadline(t->r, t->id, &t->pending);
			t->reset_in_cb = asx_reactor_reset_timer_interval(t->r, t->id, 0);
		} else if (t->fires == 2) {
			t->deadline_in_second = asx_reactor_timer_deadline(t->r, t->id, &ts);
		}
		break;
	}
	return 0;
}

static const struct asx_event_handler_ops ops = { .handle_timeout = on_timeout };

/* run the reactor until *@flag (atomic) or @ms passed */
static void run_until(struct tm_test *t, int *flag, uint64_t ms)
{
	uint64_t end = asx_now_ns() + ms * MS;

	while ((!flag || !__atomic_load_n(flag, __ATOMIC_ACQUIRE)) && asx_now_ns() < end) {
		struct timespec dl;
		int r = asx_reactor_run_once(t->r, asx_deadline(&dl, 20 * MS));

		CHECK(r >= 0 || r == -ETIMEDOUT);
	}
}

static void *canceller(void *arg)
{
	struct tm_test *t = arg;

	CHECK(wait_flag(&t->running, 20000));
	t->got = &sentinel;
	t->cancel_r = asx_reactor_cancel_timer(t->r, t->id, &t->got);
	__atomic_store_n(&t->other_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void setup(struct tm_test *t, int part)
{
	memset(t, 0, sizeof(*t));
	asx_event_handler_init(&t->eh, &ops);
	t->part = part;
	CHECK0(asx_reactor_create(&t->r));
}

static void one_shot_cancelled_in_callback(void)
{
	struct tm_test t;

	setup(&t, 1);
	t.id = asx_reactor_schedule_timer(t.r, &t.eh, &token, 5 * MS, 0);
	CHECK(t.id > 0);
	run_until(&t, &t.fires, 20000);		/* its one expiry, however late */
	run_until(&t, NULL, 100);
	CHECK(t.fires == 1);
	if (t.cancel_r != -ENOENT || t.got != &sentinel)
		fprintf(stderr, "reactor_timers: a one-shot cancelled in its own callback: %d, "
			"arg %s\n", t.cancel_r, t.got == &sentinel ? "untouched" : "handed out");
	CHECK(t.cancel_r == -ENOENT && t.got == &sentinel);
	CHECK(t.reset_r == -ENOENT && t.deadline_r == -ENOENT);
	CHECK(asx_reactor_timer_count(t.r) == 0);
	CHECK0(asx_reactor_destroy(t.r));
	puts("reactor_timers: a one-shot cancelled in its callback: -ENOENT, arg left alone");
}

static void one_shot_cancelled_by_other_thread(void)
{
	struct tm_test t;
	pthread_t th;

	setup(&t, 11);
	t.id = asx_reactor_schedule_timer(t.r, &t.eh, &token, 5 * MS, 0);
	CHECK(t.id > 0);
	CHECK(pthread_create(&th, NULL, canceller, &t) == 0);
	run_until(&t, &t.cb_done, 20000);
	CHECK(pthread_join(th, NULL) == 0);
	CHECK(t.fires == 1);
	if (t.cancel_r != -ENOENT || t.got != &sentinel)
		fprintf(stderr, "reactor_timers: a running one-shot cancelled by another thread: %d, "
			"arg %s\n", t.cancel_r, t.got == &sentinel ? "untouched" : "handed out");
	CHECK(t.cancel_r == -ENOENT && t.got == &sentinel);
	CHECK0(asx_reactor_destroy(t.r));
	puts("reactor_timers: a running one-shot cancelled by another thread: -ENOENT, arg left alone");
}

static void periodic_cancel_waits(void)
{
	struct tm_test t;
	pthread_t th;
	int done_at_return;

	setup(&t, 2);
	/* a period no slow host reaches: the one expiry is the one cancelled */
	t.id = asx_reactor_schedule_timer(t.r, &t.eh, &token, 5 * MS, 10000 * MS);
	CHECK(t.id > 0);
	CHECK(pthread_create(&th, NULL, canceller, &t) == 0);
	run_until(&t, &t.other_done, 20000);
	CHECK(pthread_join(th, NULL) == 0);
	/* cb_done was stored before the callback returned; the cancel returned after */
	done_at_return = t.cb_done;
	if (!done_at_return)
		fprintf(stderr, "reactor_timers: the cancel of a running periodic timer returned "
			"before its callback did\n");
	CHECK(t.cancel_r == 0 && t.got == &token && done_at_return);
	run_until(&t, NULL, 200);
	CHECK(t.fires == 1);				/* never again */
	CHECK(asx_reactor_timer_count(t.r) == 0);
	CHECK0(asx_reactor_destroy(t.r));
	puts("reactor_timers: a running periodic timer's cancel returned after its callback");
}

static void periodic_reset_to_zero_in_callback(void)
{
	struct tm_test t;
	uint64_t end;

	setup(&t, 3);
	t.id = asx_reactor_schedule_timer(t.r, &t.eh, &token, 10 * MS, 100 * MS);
	CHECK(t.id > 0);
	/* until the second expiry has run and 300 ms more, or 5 s at most */
	end = asx_now_ns() + 5000 * MS;
	while (asx_now_ns() < end) {
		if (t.fires >= 2 && asx_now_ns() > ns(&t.now[1]) + 300 * MS)
			break;
		if (t.fires == 1 && asx_now_ns() > ns(&t.now[0]) + 2000 * MS)
			break;				/* the second expiry is 1.9 s late */
		run_until(&t, NULL, 20);
	}
	if (t.deadline_in_cb != 0 || ns(&t.pending) <= ns(&t.now[0]))
		fprintf(stderr, "reactor_timers: timer_deadline in the callback: %d, %lld ns after "
			"its now (the pending expiry must come after it)\n", t.deadline_in_cb,
			(long long)(ns(&t.pending) - ns(&t.now[0])));
	if (t.fires != 2)
		fprintf(stderr, "reactor_timers: reset_timer_interval(id, 0) in the callback: "
			"%d callbacks in all, 2 expected\n", t.fires);
	CHECK(t.deadline_in_cb == 0 && ns(&t.pending) > ns(&t.now[0]));
	CHECK(t.reset_in_cb == 0);
	CHECK(t.fires == 2);
	CHECK(ns(&t.now[1]) >= ns(&t.pending));		/* at its deadline, never early */
	CHECK(t.deadline_in_second == -ENOENT);		/* a one-shot now: gone in its callback */
	CHECK(asx_reactor_timer_count(t.r) == 0);
	CHECK0(asx_reactor_destroy(t.r));
	printf("reactor_timers: reset to 0 in the callback: one more expiry, %.1f ms after the "
	       "first, then none\n", (double)(ns(&t.now[1]) - ns(&t.now[0])) / 1e6);
}

/* No argument: every part; "1", "1b", "2" or "3" (or several): those parts alone. */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "1b23";

	setvbuf(stdout, NULL, _IOLBF, 0);
	watchdog(60);
	if (strchr(only, '1'))
		one_shot_cancelled_in_callback();
	if (strchr(only, 'b'))
		one_shot_cancelled_by_other_thread();
	if (strchr(only, '2'))
		periodic_cancel_waits();
	if (strchr(only, '3'))
		periodic_reset_to_zero_in_callback();
	puts("reactor_timers: ok");
	return 0;
}
