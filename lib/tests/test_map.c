// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_map.c - the Map_Manager-style map under each lock strategy:
 * bind/unbind/find semantics, growth, and concurrent finds while another
 * thread binds and unbinds (mutex, rwlock, RCU): a key that is always
 * bound is always found with its own value, a churned key is either
 * absent or has its own value.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <pthread.h>
#include <cmocka.h>

#include <asx/map.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ROUNDS 20	/* sanitizers: fewer churn rounds */
#else
#define ROUNDS 200
#endif
#define NKEYS 1024

static void *val(uint32_t k)
{
	return (void *)(uintptr_t)(0x1000 + k);
}

static void basics(enum asx_map_lock lk)
{
	struct asx_map *m;
	void *v;
	uint32_t k;

	assert_int_equal(asx_map_create(&m, lk, sizeof(k)), 0);
	assert_int_equal(asx_map_strategy(m), lk);
	k = 1;
	assert_int_equal(asx_map_find(m, &k, &v), -ENOENT);
	assert_int_equal(asx_map_bind(m, &k, NULL), -EINVAL);
	assert_int_equal(asx_map_bind(m, &k, val(1)), 0);
	assert_int_equal(asx_map_bind(m, &k, val(2)), -EEXIST);
	assert_int_equal(asx_map_find(m, &k, &v), 0);
	assert_ptr_equal(v, val(1));
	for (k = 2; k < 5000; k++)
		assert_int_equal(asx_map_bind(m, &k, val(k)), 0);
	assert_int_equal(asx_map_count(m), 4999);
	for (k = 1; k < 5000; k++) {
		assert_int_equal(asx_map_find(m, &k, &v), 0);
		assert_ptr_equal(v, val(k));
	}
	k = 77;
	assert_int_equal(asx_map_unbind(m, &k, &v), 0);
	assert_ptr_equal(v, val(77));
	assert_int_equal(asx_map_unbind(m, &k, &v), -ENOENT);
	assert_int_equal(asx_map_find(m, &k, &v), -ENOENT);
	assert_int_equal(asx_map_count(m), 4998);
	asx_map_synchronize(m);
	asx_map_destroy(m);	/* frees the entries left (ASan checks) */
}

static void test_basics(void **state)
{
	struct asx_map *m;

	(void)state;
	assert_int_equal(asx_map_create(&m, (enum asx_map_lock)9, 4), -EINVAL);
	assert_int_equal(asx_map_create(&m, ASX_MAP_MUTEX, 0), -EINVAL);
	assert_int_equal(asx_map_create(&m, ASX_MAP_MUTEX, ASX_MAP_KEY_MAX + 1), -EINVAL);
	for (int lk = ASX_MAP_NONE; lk <= ASX_MAP_RCU; lk++)
		basics((enum asx_map_lock)lk);
	assert_string_equal(asx_map_lock_name(ASX_MAP_RCU), "rcu");
}

struct ctx {
	struct asx_map *m;
	int stop;		/* atomic */
	uint64_t misses, wrong, finds;
	int passes;		/* atomic: full passes over the keys */
};

static int check_apply(void *value, void *arg)
{
	return value == arg ? 0 : -EBADMSG;
}

static void *finder(void *arg)
{
	struct ctx *c = arg;
	uint64_t misses = 0, wrong = 0, finds = 0;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		for (uint32_t k = 0; k < NKEYS; k++) {
			void *v;
			int r = asx_map_find(c->m, &k, &v);

			finds++;
			if (r == 0 && v != val(k))
				wrong++;
			else if (r && k < NKEYS / 2)
				misses++;	/* always bound: must be found */
			r = asx_map_find_apply(c->m, &k, check_apply, val(k));
			if (r == -EBADMSG || (r && k < NKEYS / 2))
				wrong++;
		}
		__atomic_fetch_add(&c->passes, 1, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&c->misses, misses, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->wrong, wrong, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->finds, finds, __ATOMIC_RELAXED);
	return NULL;
}

static void churn(enum asx_map_lock lk)
{
	struct ctx c = { 0 };
	pthread_t th[2];

	assert_int_equal(asx_map_create(&c.m, lk, sizeof(uint32_t)), 0);
	for (uint32_t k = 0; k < NKEYS / 2; k++)
		assert_int_equal(asx_map_bind(c.m, &k, val(k)), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, finder, &c), 0);
	/* at least ROUNDS, and until each finder made a few passes meanwhile */
	for (int r = 0; r < ROUNDS || __atomic_load_n(&c.passes, __ATOMIC_ACQUIRE) < 8; r++) {
		for (uint32_t k = NKEYS / 2; k < NKEYS; k++)
			assert_int_equal(asx_map_bind(c.m, &k, val(k)), 0);
		for (uint32_t k = NKEYS / 2; k < NKEYS; k++) {
			void *v;

			assert_int_equal(asx_map_unbind(c.m, &k, &v), 0);
			assert_ptr_equal(v, val(k));
		}
	}
	__atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	assert_true(c.finds > 0);
	assert_int_equal(c.misses, 0);
	assert_int_equal(c.wrong, 0);
	assert_int_equal(asx_map_count(c.m), NKEYS / 2);
	asx_map_destroy(c.m);
}

static void test_churn_mutex(void **state) { (void)state; churn(ASX_MAP_MUTEX); }
static void test_churn_rwlock(void **state) { (void)state; churn(ASX_MAP_RWLOCK); }
static void test_churn_rcu(void **state) { (void)state; churn(ASX_MAP_RCU); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basics),
		cmocka_unit_test(test_churn_mutex),
		cmocka_unit_test(test_churn_rwlock),
		cmocka_unit_test(test_churn_rcu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
