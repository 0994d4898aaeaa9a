/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * svc_test.h - what the test services (lib/tests/svc/, built as shared
 * objects) call back in test_svc, which is linked with -rdynamic.
 */
#ifndef ASX_TESTS_SVC_TEST_H
#define ASX_TESTS_SVC_TEST_H

/* Record an event: "init NAME args...", "fini NAME", "suspend NAME", ... */
void svc_test_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Which operation of which service should fail next ("init:Bad"), or NULL. */
const char *svc_test_fail(void);

#endif
