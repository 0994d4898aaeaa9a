// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_svc_policy.c - ASC policies loaded by svc.conf ("dynamic NAME
 * ASC_Policy * lib.so:factory()", an ASX extension): registered at apply
 * time, used by a Stream's "asc N policy NAME" and by
 * asx_asc_create_by_name(); a removal or reload refused while an ASC uses
 * the policy, the library unloaded once it goes; a transaction that fails
 * later in the file unregisters it; a name clash, a missing or ill-stamped
 * factory refused with a message.  The policies are lib/tests/svc/
 * svc_policy.c's, built as svc/svc_policy.so beside this binary; the Stream
 * runs svc/ascwork.so's Module of two service threads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/asc.h>
#include <asx/asc_policy.h>
#include <asx/stream.h>
#include <asx/svc.h>

#include "../../examples/asc-policy/rr2.h"

static char so[300];		/* this binary's directory + /svc/svc_policy.so */
static char work[300];		/* ... + /svc/ascwork.so: a Module of two service threads */
static char rr2so[300];		/* ... + /svc/rr2.so: examples/asc-policy's rr2 */
static char err[512];

static int apply(struct asx_svc_repo *r, unsigned int flags, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int apply(struct asx_svc_repo *r, unsigned int flags, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	err[0] = '\0';
	return asx_svc_apply_text(r, "t.conf", text, flags, err, sizeof(err));
}

/* Is svc_policy.so mapped in the process? */
static bool loaded(void)
{
	void *h = dlopen(so, RTLD_LAZY | RTLD_NOLOAD);

	if (h)
		dlclose(h);
	return h != NULL;
}

static bool registered(const char *name)
{
	struct asx_asc *a;
	int r = asx_asc_create_by_name(&a, name, NULL);

	if (!r)
		assert_int_equal(asx_asc_destroy(a), 0);
	return r == 0;
}

/* ---------------------------------------------------------------- a Stream's Tasks */

/* The ASC called @name: its policy and threads, 0 if there is none. */
static size_t asc_threads(const char *name, char *policy, size_t len)
{
	struct asx_asc_snap *s;
	size_t n, k = 0;

	assert_int_equal(asx_asc_snapshot(&s, &n), 0);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s[i].name, name)) {
			snprintf(policy, len, "%s", s[i].policy);
			k = s[i].nthreads;
		}
	free(s);
	return k;
}

static void roundtrip(struct asx_svc_repo *r, const char *stream, uint32_t v)
{
	struct asx_stream *s;
	struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_DATA);
	struct timespec ts;
	uint32_t got = 0;

	assert_int_equal(asx_svc_stream(r, stream, &s), 0);
	assert_non_null(m);
	assert_int_equal(asx_msg_append(m, &v, 4), 0);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
	assert_int_equal(asx_stream_get(s, &m, 0, asx_deadline(&ts, 20 * ASX_NSEC_PER_SEC)), 0);
	assert_int_equal(asx_msg_read(m, 0, &got, 4), 4);
	assert_int_equal(got, v);
	asx_msg_free_chain(m);
}

/* ---------------------------------------------------------------- threads by name */

#define NTHREADS 4
#define ROUNDS 2000

static unsigned int counts[NTHREADS];

static void *spin(void *arg)
{
	unsigned int *c = arg;

	for (int i = 0; i < ROUNDS; i++) {
		__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
		asx_asc_thread_yield();
	}
	return NULL;
}

/* Threads on an ASC made by name with the loaded policy: all run to the end. */
static void run_threads(struct asx_asc *a)
{
	struct asx_asc_thread *t[NTHREADS];

	memset(counts, 0, sizeof(counts));
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(asx_asc_thread_spawn(a, NULL, spin, &counts[i], NULL, &t[i]), 0);
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(counts[i], ROUNDS);
}

/*
 * Loaded, the policy serves a Stream's Tasks and an ASC made by name;
 * removing it is refused (with why) while either ASC exists, and the
 * library stays; once both are gone it goes and the library is unloaded.
 */
static void test_load_use_remove(void **state)
{
	struct asx_svc_repo *r;
	ASX_OPTS(struct asx_asc_opts, ao, .nvps = 2, .max_vps = 2);
	char pname[32] = "";
	struct asx_svc_info in;
	struct asx_asc *a;

	(void)state;
	assert_false(loaded());
	assert_int_equal(asx_svc_repo_create(&r), 0);
	if (apply(r, 0, "dynamic myfifo ASC_Policy * %s:make_fifo() \"\"\n"
		  "stream S asc 2 policy myfifo { dynamic w Module * %s:asx_test_worker() }", so,
		  work))
		fail_msg("%s", err);
	assert_true(loaded());
	assert_int_equal(asx_svc_find(r, "myfifo", &in), 0);
	assert_string_equal(in.library, so);
	assert_string_equal(in.factory, "make_fifo");
	assert_string_equal(in.desc, "ASC policy 'myfifo'");
	assert_int_equal(asx_svc_stream(r, "myfifo", &(struct asx_stream *){ NULL }), -EMEDIUMTYPE);
	roundtrip(r, "S", 42);
	/* the Stream's ASC, named after it, on the policy, with the Module's two threads */
	assert_int_equal(asc_threads("S", pname, sizeof(pname)), 2);
	assert_string_equal(pname, "myfifo");

	assert_int_equal(asx_asc_create_by_name(&a, "myfifo", &ao), 0);
	assert_string_equal(asx_asc_policy_name(a), "myfifo");
	run_threads(a);

	/* in use: refused, the policy and its library stay */
	assert_int_equal(apply(r, 0, "remove myfifo"), -EBUSY);
	assert_string_equal(err, "t.conf:1:1: policy 'myfifo' is in use: an ASC made with it still exists (a stream's 'asc N policy myfifo', or the program's): destroy it first; 'myfifo' stays loaded");
	assert_int_equal(asx_svc_remove(r, "myfifo"), -EBUSY);
	assert_int_equal(asx_svc_suspend(r, "myfifo"), -EOPNOTSUPP);
	assert_true(loaded());
	run_threads(a);
	assert_int_equal(asx_svc_remove(r, "S"), 0);
	assert_int_equal(apply(r, 0, "remove myfifo"), -EBUSY);	/* a still uses it */
	assert_int_equal(asx_asc_destroy(a), 0);

	/* unused: removed, unregistered, unloaded */
	assert_int_equal(apply(r, 0, "remove myfifo"), 0);
	assert_false(registered("myfifo"));
	assert_false(loaded());
	assert_int_equal(asx_svc_find(r, "myfifo", &in), -ENOENT);

	/* and again through asx_svc_remove() */
	if (apply(r, 0, "dynamic myfifo ASC_Policy * %s:make_fifo()", so))
		fail_msg("%s", err);
	assert_true(registered("myfifo"));
	assert_int_equal(asx_svc_remove(r, "myfifo"), 0);
	assert_false(registered("myfifo"));
	assert_false(loaded());
	asx_svc_repo_destroy(r);
}

/*
 * Transactions: a policy registered by a file that fails later is
 * unregistered (and unloaded); a reload that would drop a policy in use is
 * refused whole, everything left as it was; one that keeps it, or replaces
 * an unused one, goes through.
 */
static void test_transactions(void **state)
{
	struct asx_svc_repo *r;
	struct asx_svc_info in;

	(void)state;
	assert_int_equal(asx_svc_repo_create(&r), 0);

	/* a failure later in the file: the policy registered first goes again */
	assert_int_equal(apply(r, 0, "dynamic p1 ASC_Policy * %s:make_fifo()\n"
			       "stream S asc 1 policy p1 { static pass }\n"
			       "stream T asc 1 policy nosuch { static pass }", so), -ENOENT);
	assert_string_equal(err, "t.conf:3:1: stream 'T': no ASC policy 'nosuch' (load it before the stream: 'dynamic nosuch ASC_Policy * LIB.so:FACTORY()')");
	assert_false(registered("p1"));
	assert_false(loaded());
	assert_int_equal(asx_svc_find(r, "S", &in), -ENOENT);

	/* applied; a reload of the same file keeps both */
	if (apply(r, 0, "dynamic p1 ASC_Policy * %s:make_fifo()\n"
		  "stream S asc 1 policy p1 { static pass }", so))
		fail_msg("%s", err);
	if (apply(r, ASX_SVC_RELOAD, "dynamic p1 ASC_Policy * %s:make_fifo()\n"
		  "stream S asc 1 policy p1 { static pass }", so))
		fail_msg("%s", err);
	roundtrip(r, "S", 1);

	/* a reload without the policy (and its Stream): refused whole */
	assert_int_equal(apply(r, ASX_SVC_RELOAD, "stream U { static pass }"), -EBUSY);
	assert_string_equal(err, "policy 'p1' is in use: an ASC made with it still exists (a stream's 'asc N policy p1', or the program's): destroy it first; 'p1' stays loaded");
	assert_true(registered("p1"));
	assert_true(loaded());
	assert_int_equal(asx_svc_find(r, "U", &in), -ENOENT);
	roundtrip(r, "S", 2);

	/* replacing it by another definition while used: refused too */
	assert_int_equal(apply(r, 0, "dynamic p1 ASC_Policy * %s:make_null()", so), -EBUSY);
	assert_true(registered("p1"));

	/* a failure after the unregistering: p1 registered again */
	assert_int_equal(apply(r, 0, "remove S\nremove p1\nstream V asc 1 policy p1 { static pass }"),
			 -EBUSY);
	assert_true(registered("p1"));
	roundtrip(r, "S", 3);

	/* in two steps: the Stream, then the policy */
	if (apply(r, ASX_SVC_RELOAD, "dynamic p1 ASC_Policy * %s:make_fifo()", so))
		fail_msg("%s", err);
	assert_true(registered("p1"));
	if (apply(r, ASX_SVC_RELOAD, "stream U { static pass }"))
		fail_msg("%s", err);
	assert_false(registered("p1"));
	assert_false(loaded());

	/* an unused policy replaced in a reload whose later line fails: the old one back */
	if (apply(r, 0, "dynamic p2 ASC_Policy * %s:make_fifo()", so))
		fail_msg("%s", err);
	assert_int_equal(apply(r, ASX_SVC_RELOAD, "dynamic p2 ASC_Policy * %s:make_null()", so),
			 -EINVAL);
	assert_string_equal(err, "t.conf:1:1: policy 'p2': its factory make_null gave no operations table (NULL)");
	assert_true(registered("p2"));
	assert_int_equal(asx_svc_find(r, "U", &in), 0);
	asx_svc_repo_destroy(r);
	assert_false(registered("p2"));
	assert_false(loaded());
}

/* rr2 threads of each level: each counts its turns */
static void *rr2_thread(void *arg)
{
	unsigned int *c = arg;

	for (int i = 0; i < ROUNDS; i++) {
		__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
		asx_asc_thread_yield();
	}
	return NULL;
}

/*
 * examples/asc-policy's rr2, built as a shared object and loaded by
 * svc.conf: an ASC made by name schedules its two levels to the end;
 * removal refused while the ASC lives, the library unloaded after.
 */
static void test_example_rr2(void **state)
{
	struct rr2_qos fg = RR2_QOS(0), bg = RR2_QOS(1);
	struct asx_asc_thread *t[NTHREADS];
	struct asx_svc_repo *r;
	struct asx_asc *a;
	void *h;

	(void)state;
	assert_int_equal(asx_svc_repo_create(&r), 0);
	if (apply(r, 0, "dynamic rr2 ASC_Policy * %s:rr2_factory()", rr2so))
		fail_msg("%s", err);
	assert_int_equal(asx_asc_create_by_name(&a, "rr2", NULL), 0);
	memset(counts, 0, sizeof(counts));
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(asx_asc_thread_spawn(a, i % 2 ? &bg.qos : &fg.qos, rr2_thread,
						      &counts[i], NULL, &t[i]), 0);
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(counts[i], ROUNDS);
	/* rr2 wants its QoS: a thread put with none is refused */
	assert_int_equal(asx_asc_thread_spawn(a, NULL, rr2_thread, &counts[0], NULL, &t[0]),
			 -EINVAL);
	assert_int_equal(asx_svc_remove(r, "rr2"), -EBUSY);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_int_equal(asx_svc_remove(r, "rr2"), 0);
	h = dlopen(rr2so, RTLD_LAZY | RTLD_NOLOAD);
	assert_null(h);
	asx_svc_repo_destroy(r);
}

/* A repository destroyed under an ASC using its policy leaves the library mapped. */
static void test_destroy_in_use(void **state)
{
	struct asx_svc_repo *r;
	struct asx_asc *a;

	(void)state;
	assert_int_equal(asx_svc_repo_create(&r), 0);
	if (apply(r, 0, "dynamic held ASC_Policy * %s:make_fifo()", so))
		fail_msg("%s", err);
	assert_int_equal(asx_asc_create_by_name(&a, "held", NULL), 0);
	asx_svc_repo_destroy(r);
	assert_true(loaded());		/* the ASC's ops are still there */
	run_threads(a);
	assert_int_equal(asx_asc_destroy(a), 0);
	/* (the policy stays registered: the repository that owned it is gone) */
	assert_int_equal(asx_asc_policy_unregister("held"), 0);
}

/* Refused: a name taken, a factory missing, unstamped, of another ABI or kind. */
static void test_refused(void **state)
{
	static const struct {
		const char *conf;
		int r;
		const char *msg;
	} bad[] = {
		{ "dynamic prio ASC_Policy * %s:make_fifo()", -EEXIST,
		  "t.conf:1:1: policy 'prio': a policy of that name is registered already (the built-in prio, edf, direct and stride, or one the program or another svc.conf line registered)" },
		{ "dynamic X ASC_Policy * %s:make_nothing()", -ENOENT,
		  "t.conf:1:1: policy 'X': %s has no function make_nothing" },
		{ "dynamic X ASC_Policy * %s:make_unstamped()", -ENOEXEC,
		  "t.conf:1:1: policy 'X': make_unstamped in %s has no ABI stamp (define it with ASX_ASC_POLICY_FACTORY())" },
		{ "dynamic X ASC_Policy * %s:make_future()", -ENOEXEC,
		  "t.conf:1:1: policy 'X': %s was built for ASC policy ABI 99, this libasx has ABI 1: rebuild it against this libasx" },
		{ "dynamic X ASC_Policy * %s:make_service()", -ENOEXEC,
		  "t.conf:1:1: policy 'X': make_service in %s is a service factory (ASX_SVC_FACTORY()), not an ASC policy factory: load it as a 'Service_Object', or define it with ASX_ASC_POLICY_FACTORY()" },
		{ "dynamic X Service_Object * %s:make_fifo()", -ENOEXEC,
		  "t.conf:1:1: service 'X': make_fifo in %s is an ASC policy factory (ASX_ASC_POLICY_FACTORY()), not a service factory: load it as an 'ASC_Policy', or define it with ASX_SVC_FACTORY()" },
		{ "dynamic X ASC_Policy * %s:make_fifo() inactive", -EINVAL,
		  "t.conf:1:%d: an ASC policy cannot start suspended: it has no state but registered" },
		{ "dynamic X ASC_Policy * %s:make_fifo() \"-v\"", -EINVAL,
		  "t.conf:1:%d: an ASC policy takes no parameters (its factory has none): write \"\" or nothing" },
		{ "dynamic a_policy_name_of_exactly_32_byte ASC_Policy * %s:make_fifo()", -EINVAL,
		  "t.conf:1:1: an ASC policy's name is at most 31 bytes: 'a_policy_name_of_exactly_32_byte' is 32" },
		{ "dynamic X ASC_Policy * %s:make_fifo()\nstream S asc 1 policy X qos 3 { }", -EINVAL,
		  "t.conf:2:25: 'qos' is a PRIO thread's priority: the threads of policy 'X' are put with no QoS" },
		{ "dynamic X ASC_Policy * %s:make_fifo()\nsuspend X", -EOPNOTSUPP,
		  "t.conf:2:1: ASC policy 'X' cannot be suspended or resumed" },
	};
	struct asx_svc_repo *r;

	(void)state;
	assert_int_equal(asx_svc_repo_create(&r), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[600];
		int col = (int)strlen("dynamic X ASC_Policy * ") + (int)strlen(so) +
			  (int)strlen(":make_fifo() ") + 1;

		if (strstr(bad[i].msg, "%d"))
			snprintf(want, sizeof(want), bad[i].msg, col);
		else
			snprintf(want, sizeof(want), bad[i].msg, so);
		int got = apply(r, 0, bad[i].conf, so);

		if (got != bad[i].r || strcmp(err, want))
			fail_msg("%s:\n got  %d %s\n want %d %s", bad[i].conf, got, err, bad[i].r,
				 want);
		assert_false(registered("X"));
	}
	assert_false(loaded());
	asx_svc_repo_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_use_remove),
		cmocka_unit_test(test_transactions),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_destroy_in_use),
		cmocka_unit_test(test_example_rr2),
	};
	ssize_t n = readlink("/proc/self/exe", so, sizeof(so) - 32);
	char *slash;

	if (n <= 0)
		return 2;
	so[n] = '\0';
	slash = strrchr(so, '/');
	if (!slash)
		return 2;
	strcpy(slash, "/svc/rr2.so");
	strcpy(rr2so, so);
	strcpy(slash, "/svc/ascwork.so");
	strcpy(work, so);
	strcpy(slash, "/svc/svc_policy.so");
	if (access(so, R_OK) || access(rr2so, R_OK) || access(work, R_OK)) {
		fprintf(stderr, "test_svc_policy: %s, %s or %s is missing (make tests builds them)\n",
			so, rr2so, work);
		return 1;	/* not a skip: a missing policy is a failure */
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
