/* SPDX-License-Identifier: GPL-2.0 */
/*
 * asx_harness.h - the kernel's kselftest harness, and the little it lacks.
 *
 * The ASX selftests are written against the kernel's own harness,
 * tools/testing/selftests/kselftest_harness.h of Linux 6.1 (TEST, TEST_F,
 * FIXTURE, FIXTURE_VARIANT, ASSERT_xx()/EXPECT_xx() with an optional TH_LOG()
 * after them, SKIP, TEST_HARNESS_MAIN; see the kernel's
 * Documentation/dev-tools/kselftest.rst). The build extracts it and
 * kselftest.h from Debian's linux-source-6.1 into build/kselftest/ (the
 * top Makefile); they are never copied into this tree.
 *
 *	#include "asx_harness.h"
 *
 *	FIXTURE(dev) { int fd; };
 *	FIXTURE_SETUP(dev) { self->fd = open(...); ASSERT_GE(self->fd, 0) TH_LOG("why"); }
 *	FIXTURE_TEARDOWN(dev) { close(self->fd); }
 *	TEST_F(dev, works) { EXPECT_EQ(ioctl(self->fd, ...), 0); }
 *	TEST_TIMEOUT(slow, 120) { ... }
 *
 *	TEST_HARNESS_MAIN
 *
 * Each test runs in its own forked child, so a crash or a hang fails that
 * test only; a test still running after its timeout is killed and fails.
 * An ASSERT_*() or EXPECT_*() expands to two statements: brace it when it
 * is the body of an if, else, for or while.
 *
 * This header adds, without changing kselftest_harness.h:
 *
 * - TEST_TIMEOUT(name, secs): TEST() with its own timeout (6.1 has one only
 *   for fixtures, TEST_F_TIMEOUT()).
 * - $ASX_TEST_TIMEOUT: seconds every test gets at least (default: 30, or
 *   what TEST_TIMEOUT/TEST_F_TIMEOUT gave it, whichever is longer); the
 *   debug kernel's runs set 300. A test reads its own in _metadata->timeout.
 * - Command line: -l lists the tests by the names of their "RUN" lines
 *   (FIXTURE[.VARIANT].TEST, "global.TEST" for TEST()); -t NAME runs only
 *   the tests NAME names: a full name, a test's own name, a fixture, or
 *   FIXTURE.VARIANT (repeatable); -h helps.
 * - Exit status 4 (KSFT_SKIP) when every selected test skipped, so that a
 *   run that tested nothing is never taken for a pass (6.1 exits 0); 1 if a
 *   test failed, 0 otherwise, 2 on a usage error.
 * - SKIP() leaves a test that already failed failed (6.1 turns it into a
 *   pass), and in FIXTURE_SETUP() skips the test without running its body
 *   (6.1 runs the body), as later kernels do.
 *
 * Output is kselftest's TAP 13 on stdout (the TH_LOG and failure lines on
 * stderr). It ends with
 *
 *	# Totals: pass:N fail:N xfail:0 xpass:0 skip:N error:0
 *
 * where pass does not count the skipped tests; selftests/asx/run_all.sh
 * reads that line.
 */
#ifndef ASX_HARNESS_H
#define ASX_HARNESS_H

/*
 * kselftest_harness.h compares its operands as written, so EXPECT_EQ(u64, 0)
 * mixes signedness (its messages print each with its own); TEST() passes a
 * variant it does not use; and it defines non-static functions
 * (FIXTURE_SETUP/TEARDOWN among them), which -Wmissing-prototypes (libasx's
 * flags) would refuse. The kernel builds its selftests without these
 * warnings; so do we, for the test programs only.
 */
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

/* the kernel's test_harness_run() is replaced (below): unused, not an error */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#define TEST_TIMEOUT(test_name, secs)						\
	static struct __test_metadata _##test_name##_object;			\
	static void __attribute__((constructor)) _asx_timeout_##test_name(void)	\
	{									\
		_##test_name##_object.timeout = (secs);				\
	}									\
	TEST(test_name)

#undef SKIP
#define SKIP(statement, fmt, ...) do {						\
	if (_metadata->passed) {						\
		snprintf(_metadata->results->reason,				\
			 sizeof(_metadata->results->reason), fmt, ##__VA_ARGS__); \
		fprintf(TH_LOG_STREAM, "#      SKIP      %s\n",			\
			_metadata->results->reason);				\
		_metadata->skip = 1;						\
	}									\
	_metadata->trigger = 0;							\
	if (!_metadata->setup_completed)					\
		longjmp(_metadata->env, 1);	/* out of FIXTURE_SETUP */	\
	statement;								\
} while (0)

/* FIXTURE[.VARIANT].TEST, as kselftest's "RUN" and "OK" lines name a test */
static inline void asx_test_name(char *buf, size_t size, const struct __fixture_metadata *f,
				 const struct __fixture_variant_metadata *v,
				 const struct __test_metadata *t)
{
	snprintf(buf, size, "%s%s%s.%s", f->name, v->name[0] ? "." : "", v->name, t->name);
}

static inline int asx_test_matches(const char *pat, const struct __fixture_metadata *f,
				   const struct __fixture_variant_metadata *v,
				   const struct __test_metadata *t)
{
	char full[512], fv[256];

	asx_test_name(full, sizeof(full), f, v, t);
	snprintf(fv, sizeof(fv), "%s.%s", f->name, v->name);
	return !strcmp(pat, full) || !strcmp(pat, t->name) || !strcmp(pat, f->name) ||
	       (v->name[0] && !strcmp(pat, fv));
}

/* Whether the test is selected by the -t patterns (all if none), noting which matched. */
static inline int asx_test_selected(char **only, int n_only, int *used,
				    const struct __fixture_metadata *f,
				    const struct __fixture_variant_metadata *v,
				    const struct __test_metadata *t)
{
	int i, hit = !n_only;

	for (i = 0; i < n_only; i++) {
		if (asx_test_matches(only[i], f, v, t)) {
			used[i] = 1;
			hit = 1;
		}
	}
	return hit;
}

static inline void asx_harness_usage(const char *argv0, FILE *out)
{
	fprintf(out, "usage: %s [-l] [-t NAME]... [-h]\n"
		"  -l       list the tests (FIXTURE[.VARIANT].TEST; global.TEST for TEST())\n"
		"  -t NAME  run only NAME: a full name, a test, a fixture or FIXTURE.VARIANT\n"
		"           (repeatable)\n"
		"  ASX_TEST_TIMEOUT=SECS  the least timeout of every test (default 30)\n"
		"exit: 0 passed, 1 a test failed, 4 every test skipped, 2 usage error\n",
		argv0);
}

/* Every test of every variant of every fixture, in kselftest's order. */
#define asx_for_each_test(f, v, t, no_variant)					\
	for (f = __fixture_list; f; f = f->next)				\
		for (v = f->variant ?: &no_variant; v; v = v->next)		\
			for (t = f->tests; t; t = t->next)

/*
 * In place of kselftest's test_harness_run(): the same run (kselftest's
 * __run_test() forks, times, reports each test), plus -l, -t,
 * $ASX_TEST_TIMEOUT and exit status 4 when everything skipped.
 */
static inline int asx_harness_run(int argc, char **argv)
{
	struct __fixture_variant_metadata no_variant = { .name = "", };
	unsigned int n = 0, passed = 0, failed = 0, skipped = 0;
	struct __fixture_variant_metadata *v;
	struct __fixture_metadata *f;
	struct __test_results *results;
	struct __test_metadata *t;
	int n_only = 0, *used, opt, i, list = 0, timeout = 0;
	char name[512], **only;
	const char *env;

	only = calloc(argc + 1, sizeof(*only));
	used = calloc(argc + 1, sizeof(*used));
	if (!only || !used) {
		perror("calloc");
		return 2;
	}
	while ((opt = getopt(argc, argv, "hlt:")) != -1) {
		switch (opt) {
		case 'l':
			list = 1;
			break;
		case 't':
			only[n_only++] = optarg;
			break;
		case 'h':
			asx_harness_usage(argv[0], stdout);
			return 0;
		default:
			asx_harness_usage(argv[0], stderr);
			return 2;
		}
	}
	if (optind != argc) {
		asx_harness_usage(argv[0], stderr);
		return 2;
	}
	env = getenv("ASX_TEST_TIMEOUT");
	if (env && *env) {
		timeout = atoi(env);
		if (timeout <= 0) {
			fprintf(stderr, "%s: ASX_TEST_TIMEOUT=%s: not a number of seconds\n",
				argv[0], env);
			return 2;
		}
	}

	asx_for_each_test(f, v, t, no_variant) {
		if (!asx_test_selected(only, n_only, used, f, v, t))
			continue;
		n++;
		if (list) {
			asx_test_name(name, sizeof(name), f, v, t);
			printf("%s\n", name);
		}
		if (t->timeout < timeout)
			t->timeout = timeout;
	}
	for (i = 0; i < n_only; i++) {
		if (!used[i]) {
			fprintf(stderr, "%s: no test named '%s' (try -l)\n", argv[0], only[i]);
			return 2;
		}
	}
	if (list)
		return 0;

	results = mmap(NULL, sizeof(*results), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (results == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	/* each line as it comes, in order with the tests' stderr */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	ksft_set_plan(n);
	ksft_print_msg("Starting %u tests\n", n);
	asx_for_each_test(f, v, t, no_variant) {
		if (!asx_test_selected(only, n_only, used, f, v, t))
			continue;
		t->results = results;
		__run_test(f, v, t);
		t->results = NULL;
		if (!t->passed)
			failed++;
		else if (t->skip)
			skipped++;
		else
			passed++;
	}
	munmap(results, sizeof(*results));
	free(only);
	free(used);

	ksft_print_msg("%s: %u / %u tests passed, %u skipped.\n", failed ? "FAILED" : "PASSED",
		       passed, n, skipped);
	ksft_print_cnts();
	fflush(stdout);
	if (failed)
		return KSFT_FAIL;
	return skipped == n ? KSFT_SKIP : KSFT_PASS;
}

/* TEST_HARNESS_MAIN (kselftest's) calls test_harness_run(): make it ours. */
#define test_harness_run asx_harness_run

#endif /* ASX_HARNESS_H */
