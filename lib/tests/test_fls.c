// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_fls.c - fiber-local storage (asx_asc_key_*, asx_asc_[gs]etspecific).
 *
 * The key rules (create, delete, the ASX_ASC_KEYS_MAX bound, a deleted
 * key's values gone, a key made again starting at NULL) on a pthread; one
 * value per context (user threads of one VP, user threads moved between
 * VPs by a timesliced ASC, the pthread beside them); destructors at the
 * end of a user thread and of a pthread, once per value, with the
 * repeated rounds bounded by ASX_ASC_KEY_ITERATIONS; and a stress run of
 * user threads on two timesliced VPs made and ended in waves, every
 * destructor call counted.  The user-thread parts run under a watchdog
 * (joinwd.h): a hang fails the program.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <asx/asc.h>
#include "joinwd.h"
#include "threadcheck.h"

static const struct asx_prio_qos prio0 = ASX_PRIO_QOS(0);

/* ---------------------------------------------------------------- keys */

static void test_key_rules(void **state)
{
	asx_asc_key_t k, k2;
	int x, y;

	(void)state;
	assert_int_equal(asx_asc_key_create(NULL, NULL), -EINVAL);
	assert_int_equal(asx_asc_key_create(&k, NULL), 0);
	assert_null(asx_asc_getspecific(k));
	assert_int_equal(asx_asc_setspecific(k, &x), 0);
	assert_ptr_equal(asx_asc_getspecific(k), &x);
	assert_int_equal(asx_asc_setspecific(k, &y), 0);
	assert_ptr_equal(asx_asc_getspecific(k), &y);
	assert_int_equal(asx_asc_setspecific(k, NULL), 0);
	assert_null(asx_asc_getspecific(k));
	assert_int_equal(asx_asc_setspecific(k, &x), 0);

	/* deleted: its value is gone, set and delete refuse it */
	assert_int_equal(asx_asc_key_delete(k), 0);
	assert_null(asx_asc_getspecific(k));
	assert_int_equal(asx_asc_setspecific(k, &x), -EINVAL);
	assert_int_equal(asx_asc_key_delete(k), -EINVAL);

	/* the lowest free slot again, and it starts at NULL */
	assert_int_equal(asx_asc_key_create(&k2, NULL), 0);
	assert_int_equal(k2, k);
	assert_null(asx_asc_getspecific(k2));
	assert_int_equal(asx_asc_key_delete(k2), 0);

	/* out of range */
	assert_null(asx_asc_getspecific(ASX_ASC_KEYS_MAX));
	assert_int_equal(asx_asc_setspecific(ASX_ASC_KEYS_MAX, &x), -EINVAL);
	assert_int_equal(asx_asc_key_delete(ASX_ASC_KEYS_MAX), -EINVAL);
}

static void test_key_bound(void **state)
{
	asx_asc_key_t k[ASX_ASC_KEYS_MAX], extra;
	int v[ASX_ASC_KEYS_MAX];

	(void)state;
	for (int i = 0; i < ASX_ASC_KEYS_MAX; i++) {
		assert_int_equal(asx_asc_key_create(&k[i], NULL), 0);
		assert_int_equal(asx_asc_setspecific(k[i], &v[i]), 0);
	}
	assert_int_equal(asx_asc_key_create(&extra, NULL), -EAGAIN);
	/* every slot of every chunk kept its own value */
	for (int i = 0; i < ASX_ASC_KEYS_MAX; i++)
		assert_ptr_equal(asx_asc_getspecific(k[i]), &v[i]);
	for (int i = 0; i < ASX_ASC_KEYS_MAX; i++)
		assert_int_equal(asx_asc_key_delete(k[i]), 0);
	for (int i = 0; i < ASX_ASC_KEYS_MAX; i++)
		assert_null(asx_asc_getspecific(k[i]));
}

/* ---------------------------------------------------------------- destructors */

static int dtor_calls, dtor_bad, reset_rounds;
static asx_asc_key_t dk, rk;

static void count_dtor(void *v)
{
	/* the value is NULL while its destructor runs */
	if (asx_asc_getspecific(dk) != NULL)
		__atomic_add_fetch(&dtor_bad, 1, __ATOMIC_SEQ_CST);
	if (*(int *)v != 42)
		__atomic_add_fetch(&dtor_bad, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&dtor_calls, 1, __ATOMIC_SEQ_CST);
}

static int reset_val = 7;

/* sets its value again every time: the rounds must stop */
static void reset_dtor(void *v)
{
	(void)v;
	__atomic_add_fetch(&reset_rounds, 1, __ATOMIC_SEQ_CST);
	if (asx_asc_setspecific(rk, &reset_val))
		__atomic_add_fetch(&dtor_bad, 1, __ATOMIC_SEQ_CST);
}

static int forty_two = 42;

static void *sets_values(void *arg)
{
	(void)arg;
	CHECK(asx_asc_setspecific(dk, &forty_two) == 0);
	CHECK(asx_asc_setspecific(rk, &reset_val) == 0);
	return NULL;
}

static void *exits_with_values(void *arg)
{
	sets_values(arg);
	asx_asc_thread_exit(NULL);
}

static void dtor_setup(void)
{
	dtor_calls = dtor_bad = reset_rounds = 0;
	assert_int_equal(asx_asc_key_create(&dk, count_dtor), 0);
	assert_int_equal(asx_asc_key_create(&rk, reset_dtor), 0);
}

static void dtor_check(int contexts)
{
	assert_int_equal(dtor_bad, 0);
	assert_int_equal(dtor_calls, contexts);
	assert_int_equal(reset_rounds, contexts * ASX_ASC_KEY_ITERATIONS);
	assert_int_equal(asx_asc_key_delete(dk), 0);
	assert_int_equal(asx_asc_key_delete(rk), 0);
}

static void *run_user_threads(void *arg)
{
	struct asx_asc *asc;
	struct asx_asc_thread *t[2];

	(void)arg;
	CHECK(asx_asc_create(&asc, &asx_asc_prio, NULL) == 0);
	CHECK(asx_asc_thread_create(&t[0], sets_values, NULL, NULL) == 0);
	CHECK(asx_asc_thread_create(&t[1], exits_with_values, NULL, NULL) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(asx_asc_thread_put(asc, t[i], &prio0.qos) == 0);
		CHECK(asx_asc_thread_join(t[i], NULL) == 0);
	}
	CHECK(asx_asc_destroy(asc) == 0);
	return NULL;
}

static void test_dtor_user_thread(void **state)
{
	pthread_t p;

	(void)state;
	dtor_setup();
	assert_int_equal(pthread_create(&p, NULL, run_user_threads, NULL), 0);
	join_or_die(p, "user threads with destructors");
	assert_threads_ok();
	/* returning and asx_asc_thread_exit() alike */
	dtor_check(2);
}

static void test_dtor_pthread(void **state)
{
	pthread_t p;

	(void)state;
	dtor_setup();
	assert_int_equal(pthread_create(&p, NULL, sets_values, NULL), 0);
	join_or_die(p, "pthread with destructors");
	assert_threads_ok();
	dtor_check(1);
}

static void *sets_deleted(void *arg)
{
	(void)arg;
	CHECK(asx_asc_setspecific(dk, &forty_two) == -EINVAL);
	CHECK(asx_asc_setspecific(rk, &reset_val) == -EINVAL);
	return NULL;
}

/* A deleted key's destructor does not run. */
static void test_dtor_deleted_key(void **state)
{
	pthread_t p;

	(void)state;
	dtor_setup();
	assert_int_equal(pthread_create(&p, NULL, sets_values, NULL), 0);
	join_or_die(p, "pthread with destructors");
	assert_int_equal(dtor_calls, 1);
	assert_int_equal(asx_asc_key_delete(dk), 0);
	assert_int_equal(asx_asc_key_delete(rk), 0);
	dtor_calls = reset_rounds = 0;
	assert_int_equal(asx_asc_key_create(&dk, count_dtor), 0);
	assert_int_equal(asx_asc_key_create(&rk, reset_dtor), 0);
	assert_int_equal(asx_asc_setspecific(dk, &forty_two), 0);
	assert_int_equal(asx_asc_key_delete(dk), 0);
	assert_int_equal(asx_asc_key_delete(rk), 0);
	assert_int_equal(pthread_create(&p, NULL, sets_deleted, NULL), 0);
	join_or_die(p, "pthread setting deleted keys");
	assert_threads_ok();
	assert_int_equal(dtor_calls, 0);
	assert_int_equal(reset_rounds, 0);
	assert_int_equal(asx_asc_setspecific(dk, NULL), -EINVAL);
}

/* ---------------------------------------------------------------- one value per context */

#define NTHR	16
#define ROUNDS	2000

static asx_asc_key_t ck;
static int mine[NTHR];
static int spins;		/* atomic: user-thread rounds done */

static void *own_value(void *arg)
{
	int *me = arg;

	CHECK(asx_asc_getspecific(ck) == NULL);
	CHECK(asx_asc_setspecific(ck, me) == 0);
	for (int r = 0; r < ROUNDS; r++) {
		CHECK(asx_asc_getspecific(ck) == me);
		if (r % 4 == 0)
			asx_asc_thread_yield();
		else
			for (volatile int i = 0; i < 200; i++)
				;
		__atomic_add_fetch(&spins, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void *run_isolation(void *arg)
{
	const struct asx_asc_opts *o = arg;
	struct asx_asc *asc;
	struct asx_asc_thread *t[NTHR];

	CHECK(asx_asc_create(&asc, &asx_asc_prio, o) == 0);
	for (int i = 0; i < NTHR; i++) {
		CHECK(asx_asc_thread_create(&t[i], own_value, &mine[i], NULL) == 0);
		CHECK(asx_asc_thread_put(asc, t[i], &prio0.qos) == 0);
	}
	for (int i = 0; i < NTHR; i++)
		CHECK(asx_asc_thread_join(t[i], NULL) == 0);
	CHECK(asx_asc_destroy(asc) == 0);
	return NULL;
}

static void isolation(const struct asx_asc_opts *o)
{
	int outer;
	pthread_t p;

	spins = 0;
	assert_int_equal(asx_asc_key_create(&ck, NULL), 0);
	/* the test's own pthread has a value the user threads must not see */
	assert_int_equal(asx_asc_setspecific(ck, &outer), 0);
	assert_int_equal(pthread_create(&p, NULL, run_isolation, (void *)o), 0);
	join_or_die(p, "user threads each with its own value");
	assert_threads_ok();
	assert_int_equal(spins, NTHR * ROUNDS);
	assert_ptr_equal(asx_asc_getspecific(ck), &outer);
	assert_int_equal(asx_asc_key_delete(ck), 0);
}

static void test_isolation_one_vp(void **state)
{
	(void)state;
	isolation(NULL);
}

/* two VPs, a 200 us timeslice: threads move between VPs mid-loop */
static void test_isolation_timesliced(void **state)
{
	ASX_OPTS(struct asx_asc_opts, o, .nvps = 2, .semantic = ASX_ASC_TIMESLICED,
		 .timeslice_ns = 200000);

	(void)state;
	isolation(&o);
}

/* ---------------------------------------------------------------- stress */

#define WAVES	20
#define PERWAVE	24
#define SKEYS	40	/* crosses a chunk boundary */

static asx_asc_key_t sk[SKEYS];
static unsigned long sdtor;	/* atomic */

struct sval {
	unsigned int thread, key;
	bool freed;
};

static void stress_dtor(void *v)
{
	struct sval *s = v;

	CHECK(!s->freed);
	s->freed = true;
	__atomic_add_fetch(&sdtor, 1, __ATOMIC_RELAXED);
}

static void *stress_thread(void *arg)
{
	struct sval *vals = arg;

	for (unsigned int k = 0; k < SKEYS; k++) {
		CHECK(asx_asc_setspecific(sk[k], &vals[k]) == 0);
		if (k % 8 == 0)
			asx_asc_thread_yield();
	}
	for (unsigned int k = 0; k < SKEYS; k++) {
		struct sval *s = asx_asc_getspecific(sk[k]);

		CHECK(s == &vals[k] && s->key == k && s->thread == vals[0].thread);
	}
	return NULL;
}

static void *run_stress(void *arg)
{
	ASX_OPTS(struct asx_asc_opts, o, .nvps = 2, .semantic = ASX_ASC_TIMESLICED,
		 .timeslice_ns = 200000);
	struct sval *vals = arg;
	struct asx_asc *asc;
	struct asx_asc_thread *t[PERWAVE];

	CHECK(asx_asc_create(&asc, &asx_asc_prio, &o) == 0);
	for (int w = 0; w < WAVES; w++) {
		for (int i = 0; i < PERWAVE; i++) {
			struct sval *v = &vals[(w * PERWAVE + i) * SKEYS];

			CHECK(asx_asc_thread_create(&t[i], stress_thread, v, NULL) == 0);
			CHECK(asx_asc_thread_put(asc, t[i], &prio0.qos) == 0);
		}
		for (int i = 0; i < PERWAVE; i++)
			CHECK(asx_asc_thread_join(t[i], NULL) == 0);
	}
	CHECK(asx_asc_destroy(asc) == 0);
	return NULL;
}

static void test_stress(void **state)
{
	size_t n = (size_t)WAVES * PERWAVE * SKEYS;
	struct sval *vals = calloc(n, sizeof(*vals));
	pthread_t p;

	(void)state;
	assert_non_null(vals);
	for (size_t i = 0; i < n; i++)
		vals[i] = (struct sval){ .thread = (unsigned int)(i / SKEYS),
					 .key = (unsigned int)(i % SKEYS) };
	sdtor = 0;
	for (int k = 0; k < SKEYS; k++)
		assert_int_equal(asx_asc_key_create(&sk[k], stress_dtor), 0);
	assert_int_equal(pthread_create(&p, NULL, run_stress, vals), 0);
	join_or_die(p, "the stress waves");
	assert_threads_ok();
	/* every value destroyed exactly once */
	assert_int_equal(sdtor, n);
	for (size_t i = 0; i < n; i++)
		assert_true(vals[i].freed);
	for (int k = 0; k < SKEYS; k++)
		assert_int_equal(asx_asc_key_delete(sk[k]), 0);
	free(vals);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_rules),
		cmocka_unit_test(test_key_bound),
		cmocka_unit_test(test_dtor_user_thread),
		cmocka_unit_test(test_dtor_pthread),
		cmocka_unit_test(test_dtor_deleted_key),
		cmocka_unit_test(test_isolation_one_vp),
		cmocka_unit_test(test_isolation_timesliced),
		cmocka_unit_test(test_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
