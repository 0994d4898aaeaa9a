/* SPDX-License-Identifier: GPL-2.0 */
/*
 * harness.h - a small kselftest-shaped test harness for the ASX selftests.
 *
 *	#include "harness.h"
 *
 *	TEST(simple) { ASSERT_EQ(1 + 1, 2); }
 *
 *	FIXTURE(dev) { int fd; };
 *	FIXTURE_SETUP(dev) { self->fd = open(...); ASSERT_GE(self->fd, 0, "why"); }
 *	FIXTURE_TEARDOWN(dev) { close(self->fd); }
 *	TEST_F(dev, works) { EXPECT_EQ(ioctl(self->fd, ...), 0); }
 *
 *	TEST_HARNESS_MAIN
 *
 * Every test runs in its own forked child, so a crash (signal) or a hang
 * fails that test only. A test hanging longer than the timeout (30 s, or
 * $ASX_TEST_TIMEOUT seconds, or for TEST_TIMEOUT(name, secs) @secs if that
 * is longer) is killed and fails.
 *
 * ASSERT_*() stop the test (the fixture teardown still runs); EXPECT_*() mark
 * it failed and go on. Every comparison takes an optional printf-style
 * message: ASSERT_GE(fd, 0, "open %s", path). SKIP(statement, fmt, ...)
 * marks the test skipped (unless it already failed) and runs statement,
 * normally `return`.
 *
 * Output is TAP version 13 on stdout. The last two lines are
 *
 *	N passed, N failed
 *	# N passed, N failed, N skipped
 *
 * Command line: -l lists the tests, -t NAME runs only NAME (repeatable; a
 * fixture test is named FIXTURE.NAME), -h helps.
 *
 * Exit status: 0 if no test failed and at least one ran; 1 if any test failed;
 * 4 (kselftest's KSFT_SKIP) if every selected test was skipped, so that a run
 * that tested nothing is never mistaken for a pass; 2 on a usage error.
 */
#ifndef ASX_SELFTEST_HARNESS_H
#define ASX_SELFTEST_HARNESS_H

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define ASX_HARNESS_TIMEOUT	30
#define ASX_EXIT_SKIP		4

enum asx_result {
	ASX_PASS,
	ASX_FAIL,
	ASX_SKIP,
};

struct asx_test {
	const char *name;
	void (*fn)(struct asx_test *_metadata);
	struct asx_test *next;
	int timeout;		/* seconds; 0: the default */

	/* Child side: where a failed ASSERT jumps to. */
	jmp_buf env;
};

/* Shared between the child running a test and the parent reporting it. */
struct asx_shared {
	int done;
	int result;
	char reason[512];
};

static struct asx_test *asx_tests_head;
static struct asx_test **asx_tests_tail = &asx_tests_head;
static struct asx_shared *asx_shared;

#define __ASX_UNUSED	__attribute__((unused))

static inline void asx_register(struct asx_test *t)
{
	*asx_tests_tail = t;
	asx_tests_tail = &t->next;
}

static inline void __attribute__((format(printf, 1, 2)))
asx_log(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	printf("# %s\n", buf);
	fflush(stdout);
}

#define TH_LOG(fmt, ...)	asx_log(fmt, ##__VA_ARGS__)

/* The message after a comparison always starts with " ", so it is never "". */
static inline void __attribute__((format(printf, 7, 8)))
asx_fail(struct asx_test *t, int stop, const char *file, int line, const char *what,
	 const char *vals, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	printf("# %s:%d: %s failed%s%s%s%s%s\n", file, line, what,
	       vals[0] ? " (" : "", vals, vals[0] ? ")" : "",
	       msg[1] ? ":" : "", msg[1] ? msg : "");
	fflush(stdout);
	asx_shared->result = ASX_FAIL;
	if (stop)
		longjmp(t->env, 1);
}

/*
 * Each operand is evaluated once. Mixed-signedness comparisons follow C's
 * usual conversions (as if written inline), so -Wsign-compare, which would
 * fire on every EXPECT_EQ(u64_field, 0), is silenced here.
 */
#define __ASX_CMP(stop, name, a, op, b, ...) do {				\
	__typeof__(a) __asx_a = (a);						\
	__typeof__(b) __asx_b = (b);						\
	_Pragma("GCC diagnostic push")						\
	_Pragma("GCC diagnostic ignored \"-Wsign-compare\"")			\
	int __asx_ok = __asx_a op __asx_b;					\
	_Pragma("GCC diagnostic pop")						\
	if (!__asx_ok) {							\
		char __asx_v[128];						\
		snprintf(__asx_v, sizeof(__asx_v), "%lld vs %lld",		\
			 (long long)__asx_a, (long long)__asx_b);		\
		asx_fail(_metadata, stop, __FILE__, __LINE__,			\
			 name "(" #a ", " #b ")", __asx_v, " " __VA_ARGS__);	\
	}									\
} while (0)

#define __ASX_BOOL(stop, name, want, x, ...) do {				\
	if ((!!(x)) != (want))						\
		asx_fail(_metadata, stop, __FILE__, __LINE__,			\
			 name "(" #x ")", "", " " __VA_ARGS__);			\
} while (0)

#define ASSERT_EQ(a, b, ...)	__ASX_CMP(1, "ASSERT_EQ", a, ==, b, __VA_ARGS__)
#define ASSERT_NE(a, b, ...)	__ASX_CMP(1, "ASSERT_NE", a, !=, b, __VA_ARGS__)
#define ASSERT_LT(a, b, ...)	__ASX_CMP(1, "ASSERT_LT", a, <, b, __VA_ARGS__)
#define ASSERT_LE(a, b, ...)	__ASX_CMP(1, "ASSERT_LE", a, <=, b, __VA_ARGS__)
#define ASSERT_GT(a, b, ...)	__ASX_CMP(1, "ASSERT_GT", a, >, b, __VA_ARGS__)
#define ASSERT_GE(a, b, ...)	__ASX_CMP(1, "ASSERT_GE", a, >=, b, __VA_ARGS__)
#define ASSERT_TRUE(x, ...)	__ASX_BOOL(1, "ASSERT_TRUE", 1, x, __VA_ARGS__)
#define ASSERT_FALSE(x, ...)	__ASX_BOOL(1, "ASSERT_FALSE", 0, x, __VA_ARGS__)

#define EXPECT_EQ(a, b, ...)	__ASX_CMP(0, "EXPECT_EQ", a, ==, b, __VA_ARGS__)
#define EXPECT_NE(a, b, ...)	__ASX_CMP(0, "EXPECT_NE", a, !=, b, __VA_ARGS__)
#define EXPECT_LT(a, b, ...)	__ASX_CMP(0, "EXPECT_LT", a, <, b, __VA_ARGS__)
#define EXPECT_LE(a, b, ...)	__ASX_CMP(0, "EXPECT_LE", a, <=, b, __VA_ARGS__)
#define EXPECT_GT(a, b, ...)	__ASX_CMP(0, "EXPECT_GT", a, >, b, __VA_ARGS__)
#define EXPECT_GE(a, b, ...)	__ASX_CMP(0, "EXPECT_GE", a, >=, b, __VA_ARGS__)
#define EXPECT_TRUE(x, ...)	__ASX_BOOL(0, "EXPECT_TRUE", 1, x, __VA_ARGS__)
#define EXPECT_FALSE(x, ...)	__ASX_BOOL(0, "EXPECT_FALSE", 0, x, __VA_ARGS__)

#define SKIP(statement, fmt, ...) do {						\
	if (asx_shared->result != ASX_FAIL) {					\
		asx_shared->result = ASX_SKIP;					\
		snprintf(asx_shared->reason, sizeof(asx_shared->reason),	\
			 fmt, ##__VA_ARGS__);					\
	}									\
	statement;								\
} while (0)

#define __ASX_REGISTER(id, str, secs)					\
	static struct asx_test __asx_test_##id = {				\
		.name = str,							\
		.fn = __asx_run_##id,						\
		.timeout = secs,						\
	};									\
	static void __attribute__((constructor)) __asx_ctor_##id(void)		\
	{									\
		asx_register(&__asx_test_##id);					\
	}

#define TEST(name)	TEST_TIMEOUT(name, 0)

/* A test that needs longer than the default timeout (@secs, if larger). */
#define TEST_TIMEOUT(name, secs)						\
	static void __asx_run_##name(struct asx_test *_metadata __ASX_UNUSED);		\
	__ASX_REGISTER(name, #name, secs)					\
	static void __asx_run_##name(struct asx_test *_metadata __ASX_UNUSED)

#define FIXTURE(name)		struct __asx_fixture_##name
#define FIXTURE_DATA(name)	struct __asx_fixture_##name

#define FIXTURE_SETUP(name)							\
	static void __asx_setup_##name(struct asx_test *_metadata __ASX_UNUSED,	\
				       FIXTURE_DATA(name) *self __ASX_UNUSED)

#define FIXTURE_TEARDOWN(name)							\
	static void __asx_teardown_##name(struct asx_test *_metadata __ASX_UNUSED, \
					  FIXTURE_DATA(name) *self __ASX_UNUSED)

/*
 * The fixture data is static: each test runs in its own child, and static
 * storage keeps its value across the longjmp() of a failed ASSERT.
 */
#define TEST_F(fixture, name)							\
	static void __asx_body_##fixture##_##name(				\
		struct asx_test *_metadata __ASX_UNUSED,			\
		FIXTURE_DATA(fixture) *self __ASX_UNUSED);			\
	static void __asx_run_##fixture##_##name(struct asx_test *_metadata)	\
	{									\
		static FIXTURE_DATA(fixture) self;				\
		static volatile int setup_done;					\
										\
		memset(&self, 0, sizeof(self));					\
		if (!setjmp(_metadata->env)) {					\
			__asx_setup_##fixture(_metadata, &self);		\
			setup_done = 1;						\
			if (asx_shared->result == ASX_PASS)			\
				__asx_body_##fixture##_##name(_metadata, &self);\
		}								\
		if (setup_done && !setjmp(_metadata->env))			\
			__asx_teardown_##fixture(_metadata, &self);		\
	}									\
	__ASX_REGISTER(fixture##_##name, #fixture "." #name, 0)		\
	static void __asx_body_##fixture##_##name(				\
		struct asx_test *_metadata __ASX_UNUSED,			\
		FIXTURE_DATA(fixture) *self __ASX_UNUSED)

static volatile sig_atomic_t asx_alarm_fired;

static inline void asx_on_alarm(int sig)
{
	(void)sig;
	asx_alarm_fired = 1;
}

static inline int asx_timeout(void)
{
	const char *s = getenv("ASX_TEST_TIMEOUT");
	int v = s ? atoi(s) : 0;

	return v > 0 ? v : ASX_HARNESS_TIMEOUT;
}

/* Runs one test in a child; returns ASX_PASS/FAIL/SKIP, reason in asx_shared. */
static inline int asx_run_one(struct asx_test *t)
{
	struct sigaction sa;
	int status, timeout = asx_timeout();
	pid_t pid, w;

	if (t->timeout > timeout)
		timeout = t->timeout;

	memset(asx_shared, 0, sizeof(*asx_shared));
	fflush(stdout);
	fflush(stderr);

	pid = fork();
	if (pid < 0) {
		snprintf(asx_shared->reason, sizeof(asx_shared->reason),
			 "fork: %s", strerror(errno));
		return ASX_FAIL;
	}
	if (pid == 0) {
		if (!setjmp(t->env))
			t->fn(t);
		asx_shared->done = 1;
		fflush(stdout);
		fflush(stderr);
		_exit(0);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = asx_on_alarm;	/* no SA_RESTART: waitpid() returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	asx_alarm_fired = 0;
	alarm(timeout);
	do {
		w = waitpid(pid, &status, 0);
		if (w < 0 && errno == EINTR && asx_alarm_fired) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			alarm(0);
			printf("# %s: timed out after %d s\n", t->name, timeout);
			return ASX_FAIL;
		}
	} while (w < 0 && errno == EINTR);
	alarm(0);

	if (w < 0) {
		printf("# %s: waitpid: %s\n", t->name, strerror(errno));
		return ASX_FAIL;
	}
	if (WIFSIGNALED(status)) {
		printf("# %s: killed by signal %d (%s)\n", t->name, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
		return ASX_FAIL;
	}
	if (!asx_shared->done || WEXITSTATUS(status) != 0) {
		printf("# %s: exited early with status %d\n", t->name,
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return ASX_FAIL;
	}
	return asx_shared->result;
}

static inline int asx_selected(const char *name, char **only, int n_only, int *used)
{
	int i, hit = 0;

	if (!n_only)
		return 1;
	for (i = 0; i < n_only; i++) {
		if (!strcmp(name, only[i])) {
			used[i] = 1;
			hit = 1;
		}
	}
	return hit;
}

static inline void asx_usage(const char *argv0, FILE *f)
{
	fprintf(f, "usage: %s [-l] [-t NAME]... [-h]\n"
		"  -l       list the tests\n"
		"  -t NAME  run only NAME (repeatable; fixture tests are FIXTURE.NAME)\n"
		"exit: 0 all passed, 1 a test failed, 4 all skipped, 2 usage error\n",
		argv0);
}

static inline int asx_main(int argc, char **argv)
{
	int n_only = 0, *used, opt, i, n = 0, num = 0;
	int passed = 0, failed = 0, skipped = 0;
	struct asx_test *t;
	char **only;

	only = calloc(argc + 1, sizeof(*only));
	used = calloc(argc + 1, sizeof(*used));
	if (!only || !used) {
		perror("calloc");
		return 2;
	}

	while ((opt = getopt(argc, argv, "hlt:")) != -1) {
		switch (opt) {
		case 'l':
			for (t = asx_tests_head; t; t = t->next)
				printf("%s\n", t->name);
			return 0;
		case 't':
			only[n_only++] = optarg;
			break;
		case 'h':
			asx_usage(argv[0], stdout);
			return 0;
		default:
			asx_usage(argv[0], stderr);
			return 2;
		}
	}
	if (optind != argc) {
		asx_usage(argv[0], stderr);
		return 2;
	}

	for (t = asx_tests_head; t; t = t->next)
		n += asx_selected(t->name, only, n_only, used);
	for (i = 0; i < n_only; i++) {
		if (!used[i]) {
			fprintf(stderr, "%s: no test named '%s' (try -l)\n", argv[0], only[i]);
			return 2;
		}
	}

	asx_shared = mmap(NULL, sizeof(*asx_shared), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (asx_shared == MAP_FAILED) {
		perror("mmap");
		return 2;
	}

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..%d\n", n);
	for (t = asx_tests_head; t; t = t->next) {
		if (!asx_selected(t->name, only, n_only, used))
			continue;
		num++;
		printf("# RUN %s\n", t->name);
		switch (asx_run_one(t)) {
		case ASX_PASS:
			passed++;
			printf("ok %d %s\n", num, t->name);
			break;
		case ASX_SKIP:
			skipped++;
			printf("ok %d %s # SKIP %s\n", num, t->name,
			       asx_shared->reason[0] ? asx_shared->reason : "(no reason given)");
			break;
		default:
			failed++;
			printf("not ok %d %s\n", num, t->name);
			break;
		}
	}

	printf("%d passed, %d failed\n", passed, failed);
	printf("# %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	fflush(stdout);
	free(only);
	free(used);

	if (failed)
		return 1;
	if (skipped == n)
		return ASX_EXIT_SKIP;
	return 0;
}

#define TEST_HARNESS_MAIN							\
	int main(int argc, char **argv)						\
	{									\
		return asx_main(argc, argv);					\
	}

#endif /* ASX_SELFTEST_HARNESS_H */
