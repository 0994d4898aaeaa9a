/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * threadcheck.h - CHECK() for code running on threads other than the
 * test's own (user threads, pthreads), where a CMocka assertion cannot
 * unwind: a failed CHECK records its line, and the test's thread asserts
 * afterwards with assert_threads_ok().  Include after <cmocka.h>.
 */
#ifndef ASX_TESTS_THREADCHECK_H
#define ASX_TESTS_THREADCHECK_H

static int threadcheck_line;

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			__atomic_store_n(&threadcheck_line, __LINE__, __ATOMIC_SEQ_CST); \
	} while (0)

static inline void assert_threads_ok(void)
{
	int line = __atomic_exchange_n(&threadcheck_line, 0, __ATOMIC_SEQ_CST);

	if (line)
		print_error("CHECK failed at line %d\n", line);
	assert_int_equal(line, 0);
}

#endif /* ASX_TESTS_THREADCHECK_H */
