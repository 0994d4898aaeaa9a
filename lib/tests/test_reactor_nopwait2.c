// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_reactor_nopwait2.c - the Reactor on a kernel without epoll_pwait2
 * (before 5.11, or a seccomp policy that refuses it with ENOSYS).
 *
 * This program defines epoll_pwait2() itself, so libasx (linked
 * statically) calls this one instead of the C library's: it counts the
 * calls and fails each with ENOSYS.  epoll_pwait() is wrapped too, counted
 * and passed on.  The reactor must notice ENOSYS once per process and wait
 * with epoll_pwait from then on, in every reactor and thread, never
 * returning before a deadline (the fallback counts whole milliseconds).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>

#include <asx/reactor.h>

#define MS	1000000ULL

static int pwait2_calls, pwait_calls;	/* atomic */

int epoll_pwait2(int epfd, struct epoll_event *events, int maxevents,
		 const struct timespec *timeout, const sigset_t *sigmask)
{
	__atomic_fetch_add(&pwait2_calls, 1, __ATOMIC_RELAXED);
	errno = ENOSYS;
	return -1;
}

int epoll_pwait(int epfd, struct epoll_event *events, int maxevents, int timeout,
		const sigset_t *sigmask)
{
	static int (*real)(int, struct epoll_event *, int, int, const sigset_t *);

	if (!__atomic_load_n(&real, __ATOMIC_ACQUIRE))
		__atomic_store_n(&real, dlsym(RTLD_NEXT, "epoll_pwait"), __ATOMIC_RELEASE);
	__atomic_fetch_add(&pwait_calls, 1, __ATOMIC_RELAXED);
	return real(epfd, events, maxevents, timeout, sigmask);
}

static int fired;
static uint64_t fired_at;

static int on_timeout(struct asx_event_handler *eh, const struct timespec *now, void *arg)
{
	fired++;
	fired_at = asx_now_ns();
	return 0;
}

static const struct asx_event_handler_ops ops = { .handle_timeout = on_timeout };

/* A few deadline waits on a fresh reactor: timers fire, timeouts are on time. */
static void waits(void)
{
	struct asx_event_handler eh = ASX_EVENT_HANDLER_INIT(&ops);
	struct asx_reactor *r = NULL;
	struct timespec ts, at;

	fired = 0;
	assert_int_equal(asx_reactor_create(&r), 0);
	asx_deadline(&at, 20 * MS);
	assert_true(asx_reactor_schedule_timer_at(r, &eh, NULL, &at, 0) > 0);
	assert_int_equal(asx_reactor_run_once(r, asx_deadline(&ts, 10000 * MS)), 1);
	assert_int_equal(fired, 1);
	assert_true(fired_at >= asx_timespec_ns(&at));
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = asx_now_ns();

		/* 3.5 ms: a fallback rounding down would come back early. */
		assert_int_equal(asx_reactor_run_once(r, asx_deadline(&ts, 3500000)), 0);
		assert_true(asx_now_ns() >= asx_timespec_ns(&ts));
		assert_true(asx_now_ns() - t0 >= 3500000);
	}
	assert_int_equal(asx_reactor_destroy(r), 0);
}

static void *waits_thread(void *unused)
{
	waits();
	return NULL;
}

static void test_enosys_remembered(void **state)
{
	pthread_t thr;
	int waited;

	waits();
	/* The first wait found out; the other five and the timer's wait did not ask again. */
	assert_int_equal(__atomic_load_n(&pwait2_calls, __ATOMIC_RELAXED), 1);
	waited = __atomic_load_n(&pwait_calls, __ATOMIC_RELAXED);
	assert_true(waited >= 6);
	print_message("    epoll_pwait2 calls %d, epoll_pwait calls %d\n", pwait2_calls, waited);

	/* Once per process: another reactor, in another thread, does not retry. */
	assert_int_equal(pthread_create(&thr, NULL, waits_thread, NULL), 0);
	assert_int_equal(pthread_join(thr, NULL), 0);
	assert_int_equal(__atomic_load_n(&pwait2_calls, __ATOMIC_RELAXED), 1);
	assert_true(__atomic_load_n(&pwait_calls, __ATOMIC_RELAXED) >= waited + 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enosys_remembered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
