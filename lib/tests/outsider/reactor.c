// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Reactor (Documentation/reactor.rst): I/O on a pipe, a periodic timer,
 * a notification from another thread, message-queue wake-ups, and
 * handle_close once per handler when the reactor goes away.
 */
#include <string.h>
#include <pthread.h>
#include <asx/msgq.h>
#include <asx/reactor.h>
#include "outsider.h"

struct app {
	struct asx_event_handler eh;
	struct asx_reactor *r;
	struct asx_msgq *q;
	int rfd;
	long bytes, ticks, notes, msgs, closes;
};

static void maybe_done(struct app *a)
{
	if (a->bytes == 5 && a->ticks >= 3 && a->notes == 1 && a->msgs == 10)
		asx_reactor_end_loop(a->r);
}

static int on_input(struct asx_event_handler *eh, int fd)
{
	struct app *a = (struct app *)eh;
	struct asx_msg *m;
	char buf[16];

	if (fd >= 0) {					/* the pipe */
		ssize_t n = read(fd, buf, sizeof(buf));

		CHECK(n > 0);
		a->bytes += n;
	} else {					/* the queue's wake-up */
		while (asx_msgq_dequeue(a->q, &m, ASX_MSGQ_NOWAIT, NULL) == 0) {
			a->msgs++;
			asx_msg_free_chain(m);
		}
	}
	maybe_done(a);
	return 0;
}

static int on_output(struct asx_event_handler *eh, int fd)
{
	struct app *a = (struct app *)eh;

	CHECK(fd == -1);				/* a notification */
	a->notes++;
	maybe_done(a);
	return 0;
}

static int on_timeout(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	struct app *a = (struct app *)eh;

	CHECK(arg == &a->ticks);
	a->ticks++;
	maybe_done(a);
	return 0;
}

static int on_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	((struct app *)eh)->closes++;
	return 0;
}

static const struct asx_event_handler_ops ops = {
	.handle_input = on_input,
	.handle_output = on_output,
	.handle_timeout = on_timeout,
	.handle_close = on_close,
};

static void *other_thread(void *arg)
{
	struct app *a = arg;

	CHECK0(asx_reactor_notify(a->r, &a->eh, ASX_EV_WRITE));
	for (int i = 0; i < 10; i++) {
		struct asx_msg *m = asx_msg_alloc(1, ASX_MSG_DATA);

		CHECK(m);
		CHECK0(asx_msgq_enqueue(a->q, m, 0, NULL));
	}
	return NULL;
}

int main(void)
{
	struct app a = { .eh = ASX_EVENT_HANDLER_INIT(&ops) };
	pthread_t t;
	int p[2];

	watchdog(60);
	CHECK(pipe(p) == 0);
	CHECK0(asx_reactor_create(&a.r));
	CHECK0(asx_msgq_create(&a.q, 1 << 20, 1 << 19));
	CHECK0(asx_reactor_register_fd(a.r, p[0], &a.eh, ASX_EV_READ));
	CHECK(asx_reactor_schedule_timer(a.r, &a.eh, &a.ticks, 1000000, 1000000) > 0);
	CHECK0(asx_reactor_notify_msgq(a.r, a.q, &a.eh, ASX_EV_READ));
	CHECK(asx_reactor_fd_count(a.r) == 1 && asx_reactor_timer_count(a.r) == 1);
	CHECK(write(p[1], "hello", 5) == 5);
	CHECK(pthread_create(&t, NULL, other_thread, &a) == 0);
	CHECK0(asx_reactor_run(a.r));
	CHECK(pthread_join(t, NULL) == 0);
	CHECK(a.bytes == 5 && a.ticks >= 3 && a.notes == 1 && a.msgs == 10);

	CHECK0(asx_reactor_remove_msgq(a.r, a.q));
	CHECK0(asx_reactor_destroy(a.r));		/* removes the rest: one handle_close */
	CHECK(a.closes == 1);
	asx_msgq_destroy(a.q);
	close(p[0]);
	close(p[1]);
	puts("reactor: ok");
	return 0;
}
