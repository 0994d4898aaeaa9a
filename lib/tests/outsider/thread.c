// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Thread Manager (Documentation/threads.rst): groups, cooperative
 * cancellation of one group, suspend/resume at safe points, return values
 * collected by a wait, thread-specific storage with a destructor.
 */
#include <stdint.h>
#include <asx/thread.h>
#include "outsider.h"

static asx_tss_t key;
static int dtor_calls;
static long ticks;

static void dtor(void *v)
{
	__atomic_fetch_add(&dtor_calls, 1, __ATOMIC_RELAXED);
}

static void *looper(void *arg)
{
	CHECK0(asx_tss_set(key, arg));
	while (!asx_thr_testcancel()) {			/* a safe point: parks when suspended */
		__atomic_fetch_add(&ticks, 1, __ATOMIC_RELAXED);
		asx_thr_sleep(100000);
	}
	CHECK(asx_tss_get(key) == arg);
	return arg;
}

static void *quick(void *arg)
{
	CHECK(asx_thr_self_group() == 2);
	return (void *)((uintptr_t)arg * 2);
}

int main(void)
{
	struct asx_thr_mgr *mgr;
	struct asx_thr_status st[8];
	struct timespec dl;
	int ids[3], n;
	long before;
	ASX_OPTS(struct asx_thr_opts, o, .ids = ids);

	watchdog(60);
	CHECK0(asx_tss_create(&key, dtor));
	CHECK0(asx_thr_mgr_create(&mgr));
	CHECK(asx_thr_mgr_spawn_n(mgr, 3, looper, &key, 1, &o) == 3);
	CHECK(ids[0] >= 0 && ids[1] >= 0 && ids[2] >= 0);
	CHECK(asx_thr_mgr_spawn_n(mgr, 2, quick, (void *)21, 2, NULL) == 2);
	CHECK(asx_thr_mgr_wait_group(mgr, 2, st, 8, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC)) == 2);
	CHECK(st[0].group == 2 && (uintptr_t)st[0].ret == 42 && (uintptr_t)st[1].ret == 42);
	CHECK(asx_thr_mgr_count_group(mgr, 1) == 3);

	/* suspended threads stop ticking; resumed, they go on */
	CHECK(asx_thr_mgr_suspend_group(mgr, 1, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC)) >= 0);
	before = __atomic_load_n(&ticks, __ATOMIC_RELAXED);
	asx_thr_sleep(20000000);
	CHECK(__atomic_load_n(&ticks, __ATOMIC_RELAXED) == before);
	CHECK(asx_thr_mgr_resume_group(mgr, 1) >= 0);
	while (__atomic_load_n(&ticks, __ATOMIC_RELAXED) == before)
		asx_thr_sleep(1000000);

	/* a wait that cannot finish times out; cancel the group and it can */
	CHECK(asx_thr_mgr_wait_group(mgr, 1, NULL, 0, asx_deadline(&dl, 1000000)) == -ETIMEDOUT);
	CHECK(asx_thr_mgr_cancel_group(mgr, 1) == 3);
	n = asx_thr_mgr_wait(mgr, st, 8, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC));
	CHECK(n == 3);
	for (int i = 0; i < n; i++)
		CHECK(st[i].group == 1 && st[i].ret == &key);
	CHECK(asx_thr_mgr_count(mgr) == 0);
	CHECK(__atomic_load_n(&dtor_calls, __ATOMIC_RELAXED) == 3);
	CHECK(asx_thr_self() == -ESRCH);			/* main is not managed */
	CHECK0(asx_thr_mgr_destroy(mgr));
	CHECK0(asx_tss_delete(key));
	puts("thread: ok");
	return 0;
}
