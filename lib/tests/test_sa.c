// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_sa.c - the activation API where asx.ko is not loaded (the host): it
 * reports the feature absent cleanly and checks its arguments. Everything
 * that needs the module is in selftests/asx/sa_test.c (run in the VM).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/sa.h>
#include "sa/sa_impl.h"

static void test_absent_device(void **state)
{
	struct asx_sa_group *g = (struct asx_sa_group *)&g;

	(void)state;
	assert_int_equal(asx__sa_probe_dev("/nonexistent/asx"), -ENODEV);
	assert_int_equal(asx__sa_open_dev("/nonexistent/asx", &g, NULL), -ENODEV);
	assert_null(g);
	if (access(ASX_SA_DEV, F_OK) == 0)
		skip();
	assert_int_equal(asx_sa_probe(), -ENODEV);
	assert_int_equal(asx_sa_open(&g, NULL), -ENODEV);
	assert_null(g);
}

static void test_not_asx_is_enotty(void **state)
{
	struct asx_sa_group *g;

	(void)state;
	assert_int_equal(asx__sa_probe_dev("/dev/null"), -ENOTTY);
	assert_int_equal(asx__sa_open_dev("/dev/null", &g, NULL), -ENOTTY);
	assert_null(g);
}

static void test_bad_options(void **state)
{
	unsigned char big[sizeof(struct asx_sa_opts) + 8];
	struct asx_sa_opts o;
	struct asx_sa_group *g;

	(void)state;
	assert_int_equal(asx_sa_open(NULL, NULL), -EINVAL);
	memset(&o, 0, sizeof(o));
	assert_int_equal(asx_sa_open(&g, &o), -EINVAL);	/* sz 0 */
	{
		ASX_OPTS(struct asx_sa_opts, f, .flags = 1);

		assert_int_equal(asx_sa_open(&g, &f), -EINVAL);
	}
	{
		/* ASX_SA_PREEMPT is the one flag: it reaches the device check */
		ASX_OPTS(struct asx_sa_opts, f, .flags = ASX_SA_PREEMPT);
		ASX_OPTS(struct asx_sa_opts, h, .flags = ASX_SA_PREEMPT << 1);

		assert_int_equal(asx__sa_open_dev("/nonexistent/asx", &g, &f), -ENODEV);
		assert_int_equal(asx_sa_open(&g, &h), -EINVAL);
	}
	memset(big, 0, sizeof(big));
	((struct asx_sa_opts *)big)->sz = sizeof(big);
	big[sizeof(big) - 1] = 1;
	assert_int_equal(asx_sa_open(&g, (struct asx_sa_opts *)big), -E2BIG);
	/* Valid options reach the device check. */
	big[sizeof(big) - 1] = 0;
	assert_int_equal(asx__sa_open_dev("/nonexistent/asx", &g, (struct asx_sa_opts *)big),
			 -ENODEV);
}

static void test_null_group(void **state)
{
	struct asx_sa_event ev[1];
	struct asx_sa_info in;
	struct timespec ts = { 0, 0 };

	(void)state;
	assert_int_equal(asx_sa_join(NULL), -EINVAL);
	assert_int_equal(asx_sa_leave(NULL), -EINVAL);
	assert_int_equal(asx_sa_wait(NULL, ev, 1, &ts), -EINVAL);
	assert_int_equal(asx_sa_read(NULL, ev, 1), -EINVAL);
	assert_int_equal(asx_sa_fd(NULL), -EINVAL);
	assert_int_equal(asx_sa_stats(NULL, &in), -EINVAL);
	asx_sa_close(NULL);
}

static void test_bad_wait_arguments(void **state)
{
	struct asx_sa_group g = { .fd = -1 };
	struct asx_sa_event ev[1];
	struct timespec bad = { 0, 1000000000L };

	(void)state;
	assert_int_equal(asx_sa_wait(&g, ev, 0, NULL), -EINVAL);
	assert_int_equal(asx_sa_wait(&g, ev, ASX_SA_WAIT_MAX + 1, NULL), -EINVAL);
	assert_int_equal(asx_sa_wait(&g, NULL, 1, NULL), -EINVAL);
	assert_int_equal(asx_sa_wait(&g, ev, 1, &bad), -EINVAL);
	assert_int_equal(asx_sa_read(&g, ev, 1), -EBADF);
	assert_int_equal(asx_sa_join(&g), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_absent_device),
		cmocka_unit_test(test_not_asx_is_enotty),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_null_group),
		cmocka_unit_test(test_bad_wait_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
