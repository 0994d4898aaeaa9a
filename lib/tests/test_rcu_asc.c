// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_rcu_asc.c - a grace-period wait of the Stream framework called on
 * an ASC user thread parks that thread, not its VP.
 *
 * A pthread C sits in an RCU read-side section until user thread B has
 * run; user thread A, on the same and only VP, waits for a grace period
 * (asx_map_synchronize and asx_map_unbind of an RCU map: both end in the
 * framework's asx__rcu_synchronize).  The grace period cannot end before C
 * leaves, C leaves only after B ran, so if A blocked the VP nobody would
 * move: the watchdog fails the test instead.  A must also come back only
 * after C left (the wait still is a grace period).  test_barrier_parks
 * does the same for asx_map_destroy's rcu_barrier (a short-lived pthread
 * waits for it while the user thread parks).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/asc.h>
#include <asx/map.h>

#include "joinwd.h"
#include "threadcheck.h"
#include "onevp.h"
#include "stream/rcu.h"

static struct asx_map *map;
static int c_in, c_left;

/* C: a reader that leaves its section once B has run. */
static void *reader(void *arg)
{
	(void)arg;
	asx__rcu_read_lock();
	ST(c_in, 1);
	while (!LD(OV.b_released))
		usleep(200);
	usleep(5000);		/* A must still be waiting */
	ST(c_left, 1);
	asx__rcu_read_unlock();
	return NULL;
}

static void a_synchronize(void)
{
	asx_map_synchronize(map);
	CHECK(LD(c_left));
}

static void a_unbind(void)
{
	int key = 1;
	void *v = NULL;

	CHECK(asx_map_unbind(map, &key, &v) == 0);
	CHECK(v == &c_in);
	CHECK(LD(c_left));
}

static void b_nothing(void)
{
}

static const struct scenario scen[] = {
	{ "asx_map_synchronize (RCU) on a user thread", NULL, a_synchronize, b_nothing },
	{ "asx_map_unbind (RCU) on a user thread", NULL, a_unbind, b_nothing },
};

static void test_grace_period_parks(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scen) / sizeof(scen[0]); i++) {
		int key = 1;
		pthread_t c;

		memset(&OV, 0, sizeof(OV));
		ST(c_in, 0);
		ST(c_left, 0);
		assert_int_equal(asx_map_create(&map, ASX_MAP_RCU, sizeof(int)), 0);
		assert_int_equal(asx_map_bind(map, &key, &c_in), 0);
		assert_int_equal(pthread_create(&c, NULL, reader, NULL), 0);
		while (!LD(c_in))
			usleep(100);
		run_scenario(&scen[i]);
		join_or_die(c, "the reader");
		asx_map_destroy(map);
	}
}

/*
 * asx_map_destroy of an RCU map that deferred a free waits for liburcu's
 * callbacks: asx__rcu_barrier(), called here directly (destroy's grace
 * period would park A first and let B run before the barrier).  One
 * callback queued before it cannot finish until B has run: if A's barrier
 * blocked the VP, nothing would move.  Then the destroy itself.
 */
static struct rcu_head slow_head;
static int slow_done;

static void slow_cb(struct rcu_head *h)
{
	(void)h;
	while (!LD(OV.b_released))
		usleep(200);
	ST(slow_done, 1);
}

static void a_barrier(void)
{
	asx__rcu_barrier();
	CHECK(LD(slow_done));
	asx_map_destroy(map);
	map = NULL;
}

static void test_barrier_parks(void **state)
{
	static const struct scenario s = {
		"asx__rcu_barrier (asx_map_destroy after a deferred free) on a user thread",
		NULL, a_barrier, b_nothing };
	int key = 3;

	(void)state;
	memset(&OV, 0, sizeof(OV));
	ST(slow_done, 0);
	assert_int_equal(asx_map_create(&map, ASX_MAP_RCU, sizeof(int)), 0);
	assert_int_equal(asx_map_bind(map, &key, &c_in), 0);
	/* unbound inside a read-side section: the free is deferred */
	asx__rcu_read_lock();
	assert_int_equal(asx_map_unbind(map, &key, NULL), 0);
	asx__rcu_read_unlock();
	asx__rcu_call(&slow_head, slow_cb);
	run_scenario(&s);
	assert_int_equal(LD(slow_done), 1);
}

/* From a plain pthread the wait is synchronize_rcu(), as before. */
static void test_grace_period_pthread(void **state)
{
	int key = 2;

	(void)state;
	assert_int_equal(asx_map_create(&map, ASX_MAP_RCU, sizeof(int)), 0);
	assert_int_equal(asx_map_bind(map, &key, &c_in), 0);
	assert_int_equal(asx_map_unbind(map, &key, NULL), 0);
	asx_map_synchronize(map);
	asx_map_destroy(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grace_period_parks),
		cmocka_unit_test(test_grace_period_pthread),
		cmocka_unit_test(test_barrier_parks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
