// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_asc_snapshot.c - asx_asc_snapshot(), the resource hierarchy asxctl
 * asc prints: every ASC with its policy, VPs and threads (names, states,
 * the VP running each), taken while the threads run, block and end; and
 * while ASCs come and go in another pthread (no torn or freed reads:
 * ASan, TSan).
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/asc.h>

static int stop;	/* atomic */

static void *spinner(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		asx_asc_thread_yield();
	return NULL;
}

static void *sleeper(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		asx_asc_thread_sleep(1000000);
	return NULL;
}

static const struct asx_asc_snap *find(const struct asx_asc_snap *s, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

static const struct asx_asc_snap_thread *thread_named(const struct asx_asc_snap *a,
						      const char *name)
{
	for (size_t i = 0; i < a->nthreads; i++)
		if (!strcmp(a->threads[i].name, name))
			return &a->threads[i];
	return NULL;
}

static bool one_of(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return true;
	return false;
}

/* Two ASCs, named threads: each listed with its policy, its VPs and its threads. */
static void test_hierarchy(void **state)
{
	static const char *const vpst[] = { "running", "idle", "blocked", "exited", "spare", NULL };
	static const char *const tst[] = { "new", "ready", "running", "blocked", NULL };
	ASX_OPTS(struct asx_asc_opts, o2, .nvps = 2, .max_vps = 2, .name = "snapA");
	ASX_OPTS(struct asx_asc_opts, o1, .nvps = 1, .max_vps = 1, .name = "snapB");
	ASX_OPTS(struct asx_asc_thread_opts, ta, .name = "spin-a");
	ASX_OPTS(struct asx_asc_thread_opts, tb, .name = "spin-b");
	ASX_OPTS(struct asx_asc_thread_opts, tc, .name = "sleepy");
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc *a, *b;
	struct asx_asc_thread *t[3];
	struct asx_asc_snap *s;
	const struct asx_asc_snap *sa, *sb;
	const struct asx_asc_snap_thread *x;
	size_t n;
	bool saw_sleeping = false;

	(void)state;
	assert_int_equal(asx_asc_snapshot(NULL, &n), -EINVAL);
	__atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &o2), 0);
	assert_int_equal(asx_asc_create(&b, &asx_asc_prio, &o1), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, spinner, NULL, &ta, &t[0]), 0);
	assert_int_equal(asx_asc_thread_spawn(a, &q.qos, spinner, NULL, &tb, &t[1]), 0);
	assert_int_equal(asx_asc_thread_spawn(b, &q.qos, sleeper, NULL, &tc, &t[2]), 0);

	/* the sleeper is seen blocked sooner or later (a loaded host: many tries) */
	for (int i = 0; i < 2000 && !saw_sleeping; i++) {
		assert_int_equal(asx_asc_snapshot(&s, &n), 0);
		assert_true(n >= 2);
		sa = find(s, n, "snapA");
		sb = find(s, n, "snapB");
		assert_non_null(sa);
		assert_non_null(sb);
		assert_string_equal(sa->policy, "prio");
		assert_int_equal(sa->nvps, 2);
		assert_int_equal(sa->nthreads, 2);
		assert_int_equal(sb->nthreads, 1);
		for (size_t k = 0; k < sa->nvps; k++) {
			assert_true(one_of(sa->vps[k].state, vpst));
			assert_true(sa->vps[k].tid >= 0);
		}
		x = thread_named(sa, "spin-a");
		assert_non_null(x);
		assert_int_equal(x->id, (uint64_t)(uintptr_t)t[0]);
		assert_true(one_of(x->state, tst));
		/* a thread shown on a VP is that VP's current one */
		if (x->vp) {
			bool found = false;

			for (size_t k = 0; k < sa->nvps; k++)
				found |= sa->vps[k].tid == x->vp && sa->vps[k].cur == x->id;
			assert_true(found);
		}
		assert_non_null(thread_named(sa, "spin-b"));
		x = thread_named(sb, "sleepy");
		assert_non_null(x);
		saw_sleeping = !strcmp(x->state, "blocked") && !x->vp;
		free(s);
		if (!saw_sleeping)
			usleep(1000);
	}
	assert_true(saw_sleeping);

	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(asx_asc_snapshot(&s, &n), 0);
	sa = find(s, n, "snapA");
	assert_non_null(sa);
	assert_int_equal(sa->nthreads, 0);	/* joined: gone from the list */
	free(s);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_int_equal(asx_asc_destroy(b), 0);
	assert_int_equal(asx_asc_snapshot(&s, &n), 0);
	assert_null(find(s, n, "snapA"));
	free(s);
}

/* Snapshots while ASCs and threads come and go in another pthread. */
static void *churn(void *arg)
{
	int rounds = *(int *)arg;

	for (int i = 0; i < rounds; i++) {
		ASX_OPTS(struct asx_asc_opts, o, .nvps = 1 + (unsigned int)(i % 2),
			 .max_vps = 2, .name = "churn");
		struct asx_prio_qos q = ASX_PRIO_QOS(0);
		struct asx_asc_thread *t[4];
		struct asx_asc *a;

		assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &o), 0);
		__atomic_store_n(&stop, 0, __ATOMIC_RELEASE);
		for (int k = 0; k < 4; k++)
			assert_int_equal(asx_asc_thread_spawn(a, &q.qos, spinner, NULL, NULL, &t[k]), 0);
		usleep(200);
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		for (int k = 0; k < 4; k++)
			assert_int_equal(asx_asc_thread_join(t[k], NULL), 0);
		assert_int_equal(asx_asc_destroy(a), 0);
	}
	return NULL;
}

static void test_churn(void **state)
{
	int rounds = 100, snaps = 0;
	pthread_t p;
	int done = 0;

	(void)state;
	assert_int_equal(pthread_create(&p, NULL, churn, &rounds), 0);
	while (!done) {
		struct asx_asc_snap *s;
		size_t n;

		assert_int_equal(asx_asc_snapshot(&s, &n), 0);
		for (size_t i = 0; i < n; i++) {
			assert_true(s[i].nthreads <= 4);
			assert_true(s[i].nvps <= 2 + 8);	/* spares included */
			for (size_t k = 0; k < s[i].nthreads; k++)
				assert_non_null(s[i].threads[k].state);
		}
		free(s);
		snaps++;
		usleep(100);	/* (the churn gets the CPU too) */
		done = pthread_tryjoin_np(p, NULL) == 0;
	}
	printf("%d snapshots over %d ASC lifetimes\n", snaps, rounds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hierarchy),
		cmocka_unit_test(test_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
