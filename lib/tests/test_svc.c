// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_svc.c - the Service Repository: static and dynamic services, their
 * operations and parameters, every way loading fails (with its message),
 * transactions that leave nothing half-installed, replacement, reload, and
 * libraries unloaded with their last service.  The dynamic services are
 * in lib/tests/svc/, built as shared objects beside this binary.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/modules.h>
#include <asx/stream.h>
#include <asx/asc.h>
#include <asx/svc.h>
#include <asx/xdr.h>

#include "asc/asc_impl.h"
#include "svc/svc_test.h"
#include "../../tools/asxd/services/codec.h"

static char journal[4096];
static const char *fail_next;
static char sodir[256];	/* this binary's directory + /svc */

void svc_test_log(const char *fmt, ...)
{
	size_t n = strlen(journal);
	va_list ap;

	if (n + 3 >= sizeof(journal))
		return;		/* full (the load test): the others compare short journals */
	if (n)
		n += (size_t)snprintf(journal + n, sizeof(journal) - n, "; ");
	va_start(ap, fmt);
	vsnprintf(journal + n, sizeof(journal) - n, fmt, ap);
	va_end(ap);
}

const char *svc_test_fail(void)
{
	return fail_next;
}

/* The journal since the last call, emptied. */
static const char *events(void)
{
	static char copy[sizeof(journal)];

	strcpy(copy, journal);
	journal[0] = '\0';
	return copy;
}

/* A static service: the same counter, linked in. */
struct st {
	int n;
};

static int st_init(struct asx_svc *svc, int argc, char **argv)
{
	(void)svc;
	svc_test_log("init %s argc=%d%s%s", argv[0], argc, argc > 1 ? " " : "",
		     argc > 1 ? argv[1] : "");
	return 0;
}

static void st_fini(struct asx_svc *svc)
{
	svc_test_log("fini %s", asx_svc_name(svc));
}

static int st_suspend(struct asx_svc *svc)
{
	svc_test_log("suspend %s", asx_svc_name(svc));
	return 0;
}

static int st_resume(struct asx_svc *svc)
{
	svc_test_log("resume %s", asx_svc_name(svc));
	return 0;
}

static const ASX_OPTS(struct asx_svc_ops, st_ops, .init = st_init, .fini = st_fini,
		      .suspend = st_suspend, .resume = st_resume);

static int make_st(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	(void)name;
	*ops = &st_ops;
	*priv = NULL;
	return 0;
}

static struct asx_svc_repo *repo_with_statics(void)
{
	struct asx_svc_repo *r;

	assert_int_equal(asx_svc_repo_create(&r), 0);
	assert_int_equal(asx_svc_register(r, "Mgr", make_st), 0);
	assert_int_equal(asx_svc_register(r, "Other", make_st), 0);
	return r;
}

static int apply(struct asx_svc_repo *r, const char *text, unsigned int flags, char *err)
{
	return asx_svc_apply_text(r, "t.conf", text, flags, err, 256);
}

/* The running services as "name:state name:state ...". */
static const char *running(struct asx_svc_repo *r)
{
	static char out[512];
	struct asx_svc_info in[16];
	int n = asx_svc_list(r, in, 16);
	size_t k = 0;

	assert_true(n >= 0 && n <= 16);
	out[0] = '\0';
	for (int i = 0; i < n; i++)
		k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%s:%c", i ? " " : "", in[i].name,
				      in[i].state == ASX_SVC_ACTIVE ? 'a' : 's');
	return out;
}

static void test_static_services(void **state)
{
	struct asx_svc_repo *r = repo_with_statics();
	struct asx_svc_info in;
	char err[256];

	(void)state;
	assert_int_equal(asx_svc_register(r, "Mgr", make_st), -EEXIST);
	assert_int_equal(asx_svc_register(r, "9bad", make_st), -EINVAL);
	assert_int_equal(apply(r, "static Mgr \"-d 'a b'\"\nstatic Other inactive inactive", 0, err),
			 -EINVAL);
	assert_string_equal(err, "t.conf:2:23: expected a directive (dynamic, static, remove, suspend, resume, stream, mux, link or include), found 'inactive'");
	assert_string_equal(events(), "");
	assert_int_equal(apply(r, "static Mgr \"-d 'a b'\"\nstatic Other\nsuspend Other", 0, err), 0);
	assert_string_equal(events(), "init Mgr argc=3 -d; init Other argc=1; suspend Other");
	assert_string_equal(running(r), "Mgr:a Other:s");
	assert_int_equal(asx_svc_find(r, "Mgr", &in), 0);
	assert_string_equal(in.args, "-d 'a b'");
	assert_null(in.library);
	assert_string_equal(in.factory, "Mgr");
	assert_string_equal(in.desc, "");
	assert_int_equal(asx_svc_find(r, "None", &in), -ENOENT);
	assert_int_equal(asx_svc_resume(r, "Other"), 0);
	assert_int_equal(asx_svc_resume(r, "Other"), 0);	/* already active: nothing */
	assert_int_equal(asx_svc_suspend(r, "Nope"), -ENOENT);
	assert_string_equal(events(), "resume Other");
	/* a static service the program did not register */
	assert_int_equal(apply(r, "static Unknown", 0, err), -ENOENT);
	assert_string_equal(err, "t.conf:1:1: static service 'Unknown': the program registered no factory of that name (asx_svc_register())");
	assert_int_equal(asx_svc_remove(r, "Mgr"), 0);
	assert_int_equal(asx_svc_remove(r, "Mgr"), -ENOENT);
	assert_string_equal(events(), "fini Mgr");
	asx_svc_repo_destroy(r);
	assert_string_equal(events(), "fini Other");
}

static void so(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", sodir, name);
}

/* ACE's ":_make_Foo()": a factory in the program (linked -rdynamic) */
ASX_SVC_FACTORY(ace_make_in_program)(const char *name, const struct asx_svc_ops **ops,
				     void **priv)
{
	return make_st(name, ops, priv);
}

/*
 * ACE's forms that need loading or a running Stream: a short library
 * name (no "lib", no ".so"), a factory in the program itself, and
 * "suspend M", "resume M", "remove M" in a Stream's braces (a clean error
 * when the Stream is not there: ACE crashes on that one).
 */
static void test_ace_forms(void **state)
{
	struct asx_svc_repo *r;
	char conf[1024], err[256], want[1024];
	struct asx_svc_info in;
	FILE *f;

	(void)state;
	assert_int_equal(asx_svc_repo_create(&r), 0);
	/* "svc_a" loads as svc_a.so, after "svc_a" and "libsvc_a.so" */
	snprintf(conf, sizeof(conf),
		 "dynamic A Service_Object * %s/svc_a:make_counter() '-n 1'\n"
		 "dynamic P Service_Object * :ace_make_in_program() 'x'\n", sodir);
	/* the dry run finds the short name too */
	f = fopen("/tmp/asx-ace-forms.conf", "w");
	assert_non_null(f);
	fputs(conf, f);
	fclose(f);
	err[0] = '\0';
	assert_int_equal(asx_svc_check(r, "/tmp/asx-ace-forms.conf", 0, err, sizeof(err)), 0);
	unlink("/tmp/asx-ace-forms.conf");
	if (apply(r, conf, 0, err))
		fail_msg("%s", err);
	assert_string_equal(events(), "init A [-n] [1]; init P argc=2 x");
	assert_string_equal(running(r), "A:a P:a");
	/* a short name that is nowhere: the name as given is reported */
	snprintf(conf, sizeof(conf), "dynamic B Service_Object * %s/nothere:make_counter()", sodir);
	assert_int_equal(apply(r, conf, 0, err), -ENOENT);
	snprintf(want, sizeof(want), "t.conf:1:1: service 'B': cannot load %s/nothere: %s/nothere: cannot open shared object file: No such file or directory",
		 sodir, sodir);
	assert_string_equal(err, want);
	assert_int_equal(apply(r, "dynamic Q Service_Object * :ace_not_in_program()", 0, err),
			 -ENOENT);
	assert_string_equal(err, "t.conf:1:1: service 'Q': the program exports no function ace_not_in_program (link it with -rdynamic, or name its library before the ':')");
	/* suspend M, resume M, remove M in the braces act on the running Stream */
	assert_int_equal(apply(r, "stream S { static pass static counter static framer }", 0, err), 0);
	assert_int_equal(apply(r, "stream S { suspend counter }", 0, err), 0);
	assert_int_equal(asx_svc_find(r, "S", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: pass counter(suspended) framer");
	assert_int_equal(apply(r, "stream S { resume counter remove pass }", 0, err), 0);
	assert_int_equal(asx_svc_find(r, "S", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: counter framer");
	/* ... and remove M from a Stream defined earlier in the same file */
	assert_int_equal(apply(r, "stream T { static pass static framer }\nstream T { remove pass }", 0, err), 0);
	assert_int_equal(asx_svc_find(r, "T", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: framer");
	/* what is not there is a clean error, never a crash (ACE crashes on the first) */
	assert_int_equal(apply(r, "stream Ghost { remove M }", 0, err), -ENOENT);
	assert_string_equal(err, "t.conf:1:16: cannot remove 'Ghost/M': no stream 'Ghost'");
	assert_int_equal(apply(r, "stream S { remove pass }", 0, err), -ENOENT);
	assert_string_equal(err, "t.conf:1:12: cannot remove 'S/pass': stream 'S' has no module 'pass'");
	assert_int_equal(apply(r, "stream A { remove pass }", 0, err), -EMEDIUMTYPE);
	assert_string_equal(err, "t.conf:1:12: cannot remove 'A/pass': 'A' is a service, not a stream");
	assert_string_equal(running(r), "A:a P:a S:a T:a");
	asx_svc_repo_destroy(r);
	events();
}

static void test_dynamic_services(void **state)
{
	struct asx_svc_repo *r;
	struct asx_svc_info in[4];
	char conf[2048], lib[512], err[256];
	void *h;

	(void)state;
	so(lib, sizeof(lib), "svc_a.so");
	assert_int_equal(asx_svc_repo_create(&r), 0);
	snprintf(conf, sizeof(conf),
		 "dynamic A Service_Object * %s:make_counter() \"-p 2010 -n 'x y'\"\n"
		 "dynamic B Service_Object %s:make_counter() inactive\n", lib, lib);
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_string_equal(events(), "init A [-p] [2010] [-n] [x y]; init B ; suspend B");
	assert_int_equal(asx_svc_list(r, in, 4), 2);
	assert_string_equal(in[0].desc, "counter with 4 words: [-p] [2010] [-n] [x y]");
	assert_string_equal(in[0].library, lib);
	assert_string_equal(in[0].factory, "make_counter");
	assert_int_equal(in[1].state, ASX_SVC_SUSPENDED);
	/* the library stays while a service made from it runs */
	assert_int_equal(asx_svc_remove(r, "A"), 0);
	h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(h);
	dlclose(h);
	assert_int_equal(asx_svc_remove(r, "B"), 0);
	assert_string_equal(events(), "fini A; fini B");
	assert_null(dlopen(lib, RTLD_NOW | RTLD_NOLOAD));
	assert_int_equal(asx_svc_list(r, NULL, 0), 0);
	asx_svc_repo_destroy(r);
}

/* Each way a dynamic service fails: the message, and nothing installed. */
static void test_load_failures(void **state)
{
	static const struct {
		const char *def;
		int err;
		const char *msg;	/* after "t.conf:2:1: " */
	} cases[] = {
		{ "dynamic X Service_Object * %s/none.so:make_counter()", -ENOENT,
		  "service 'X': cannot load %s/none.so: %s/none.so: cannot open shared object file: No such file or directory" },
		{ "dynamic X Service_Object * %s/svc_a.so:make_nothing()", -ENOENT,
		  "service 'X': %s/svc_a.so has no function make_nothing" },
		{ "dynamic X Service_Object * %s/svc_a.so:make_unstamped()", -ENOEXEC,
		  "service 'X': make_unstamped in %s/svc_a.so has no ABI stamp (define it with ASX_SVC_FACTORY())" },
		{ "dynamic X Service_Object * %s/svc_oldabi.so:make_old()", -ENOEXEC,
		  "service 'X': %s/svc_oldabi.so was built for service ABI 99, this libasx has ABI 1: rebuild it against this libasx" },
		{ "dynamic X Service_Object * %s/svc_a.so:make_refusing()", -EPERM,
		  "service 'X': its factory failed: Operation not permitted" },
		{ "dynamic X Service_Object * %s/svc_a.so:make_no_fini()", -EINVAL,
		  "service 'X': its operations have no fini" },
		{ "dynamic X Service_Object * %s/svc_a.so:make_unsized()", -EINVAL,
		  "service 'X': its factory gave no operations table, or one without its size (declare it with ASX_OPTS())" },
		{ "dynamic X Service_Object * %s/svc_a.so:make_counter() \"'open\"", -EINVAL,
		  "service 'X': a quote in its parameters is not closed" },
		{ "dynamic X Service_Object * %s/svc_a.so:make_plain() inactive", -EOPNOTSUPP,
		  "service 'X' cannot be suspended (it has no suspend operation)" },
		{ "dynamic X Module * %s/svc_a.so:make_counter()", -EINVAL,
		  "a Module runs in a Stream: make 'X' an entry of 'stream NAME { ... }'" },
		{ "stream S { dynamic M Module * %s/svc_a.so:make_counter() }", -ENOEXEC,
		  "module 'M': make_counter in %s/svc_a.so is a service factory (ASX_SVC_FACTORY()), not a Module factory: load it as a 'Service_Object', or define it with ASX_SVC_MODULE_FACTORY()" },
		{ "stream S { dynamic M Module * %s/svc_a.so:make_unstamped() }", -ENOEXEC,
		  "module 'M': make_unstamped in %s/svc_a.so has no ABI stamp (define it with ASX_SVC_MODULE_FACTORY())" },
		{ "dynamic X Service_Object * %s/svc_mod.so:make_pass()", -ENOEXEC,
		  "service 'X': make_pass in %s/svc_mod.so is a Module factory (ASX_SVC_MODULE_FACTORY()), not a service factory: load it as a 'Module' in a stream, or define it with ASX_SVC_FACTORY()" },
		{ "stream S kernel \"nodriver\" { kernel pass }", -ENOENT,
		  "stream 'S': cannot open a kernel Stream with driver 'nodriver' on /dev/asx (is asx.ko loaded?): No such file or directory" },
		{ "stream S { static nosuch }", -ENOENT,
		  "stream 'S': no module 'nosuch' (built in: pass, counter, framer, cksum; others with asx_svc_register_module())" },
		{ "remove Nobody", -ENOENT, "no service 'Nobody' to remove" },
		{ "suspend Nobody", -ENOENT, "no service 'Nobody' to suspend" },
	};
	struct asx_svc_repo *r = repo_with_statics();
	char conf[2048], want[1024], err[256];

	(void)state;
	assert_int_equal(apply(r, "static Mgr", 0, err), 0);
	assert_string_equal(events(), "init Mgr argc=1");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char def[768], msg[768];

		snprintf(def, sizeof(def), cases[i].def, sodir);
		snprintf(msg, sizeof(msg), cases[i].msg, sodir, sodir);
		/* a good service before the bad one: started, then finalised again */
		snprintf(conf, sizeof(conf), "dynamic Good Service_Object * %s/svc_a.so:make_counter()\n%s\n",
			 sodir, def);
		assert_int_equal(apply(r, conf, 0, err), cases[i].err);
		snprintf(want, sizeof(want), "t.conf:2:%d: %s",
			 strstr(def, "{ dynamic") || strstr(def, "nosuch") ? 12 :
			 strstr(def, "X Module") ? 11 : 1, msg);
		if (strcmp(err, want))
			fail_msg("case %zu:\nwanted: %s\n   got: %s", i, want, err);
		if (!strncmp(def, "remove", 6) || !strncmp(def, "suspend", 7) ||
		    strstr(def, "X Module"))
			assert_string_equal(events(), "");	/* refused before anything ran */
		else if (strstr(def, "'open") || strstr(def, "inactive"))
			assert_true(strncmp(events(), "init Good ; ", 12) == 0);
		else
			assert_string_equal(events(), "init Good ; fini Good");
		assert_string_equal(running(r), "Mgr:a");
	}
	asx_svc_repo_destroy(r);
	events();
}

/* A failure late in a file undoes what came before it, state changes too. */
static void test_transaction(void **state)
{
	struct asx_svc_repo *r = repo_with_statics();
	char conf[2048], err[256];

	(void)state;
	snprintf(conf, sizeof(conf),
		 "static Mgr\ndynamic A Service_Object * %s/svc_a.so:make_counter() \"1\"\n", sodir);
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_string_equal(events(), "init Mgr argc=1; init A [1]");
	/* suspend Mgr, start B, replace A, then C's init fails */
	snprintf(conf, sizeof(conf),
		 "suspend Mgr\n"
		 "dynamic B Service_Object * %s/svc_a.so:make_counter()\n"
		 "dynamic A Service_Object * %s/svc_a.so:make_counter() \"2\"\n"
		 "dynamic C Service_Object * %s/svc_a.so:make_counter()\n", sodir, sodir, sodir);
	fail_next = "init:C";
	assert_int_equal(apply(r, conf, 0, err), -EADDRINUSE);
	fail_next = NULL;
	assert_string_equal(err, "t.conf:4:1: service 'C': init failed: Address already in use");
	assert_string_equal(events(),
			    "suspend Mgr; init B ; init A [2]; fini C; fini A; fini B; resume Mgr");
	assert_string_equal(running(r), "Mgr:a A:a");
	/* the same file, now succeeding: A replaced in place, its old one stopped after */
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_string_equal(events(), "suspend Mgr; init B ; init A [2]; init C ; fini A");
	assert_string_equal(running(r), "Mgr:s A:a B:a C:a");
	/* applying it again changes nothing but states the file gives */
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_string_equal(events(), "");
	/* a suspend failing at commit time of the states: undone too */
	fail_next = "suspend:C";
	assert_int_equal(apply(r, "suspend B\nsuspend C", 0, err), -EBUSY);
	fail_next = NULL;
	assert_string_equal(err, "t.conf:2:1: service 'C': suspend failed: Device or resource busy");
	assert_string_equal(events(), "suspend B; resume B");
	assert_string_equal(running(r), "Mgr:s A:a B:a C:a");
	asx_svc_repo_destroy(r);
	assert_string_equal(events(), "fini C; fini B; fini A; fini Mgr");
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Reload from a file: the file is the whole configuration. */
static void test_reload_file(void **state)
{
	char dir[] = "/tmp/asx-svc-XXXXXX", path[64], link[64], lib[512];
	char text[1024], err[256];
	struct asx_svc_repo *r = repo_with_statics();

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/lib", dir);
	assert_int_equal(mkdir(path, 0700), 0);
	so(lib, sizeof(lib), "svc_a.so");
	snprintf(link, sizeof(link), "%s/lib/svc_a.so", dir);
	assert_int_equal(symlink(lib, link), 0);
	snprintf(path, sizeof(path), "%s/svc.conf", dir);
	/* a relative library path is taken from the file's directory */
	put(path, "static Mgr\ndynamic A Service_Object * lib/svc_a.so:make_counter()\n"
		  "dynamic B Service_Object * lib/svc_a.so:make_counter() inactive\n");
	assert_int_equal(asx_svc_apply_file(r, path, ASX_SVC_RELOAD, err, sizeof(err)), 0);
	assert_string_equal(events(), "init Mgr argc=1; init A ; init B ; suspend B");
	/* resumed by hand: the reload puts B back to what the file says */
	assert_int_equal(asx_svc_resume(r, "B"), 0);
	/* B gone from the file, A's parameters changed, Other new */
	put(path, "static Mgr\ndynamic A Service_Object * lib/svc_a.so:make_counter() \"v2\"\n"
		  "static Other\n");
	events();
	assert_int_equal(asx_svc_apply_file(r, path, ASX_SVC_RELOAD, err, sizeof(err)), 0);
	assert_string_equal(events(), "init A [v2]; init Other argc=1; fini B; fini A");
	assert_string_equal(running(r), "Mgr:a A:a Other:a");
	/* a bad file: nothing changes, and the message says where */
	put(path, "static Mgr\nstatic Other\nstatik A\n");
	assert_int_equal(asx_svc_apply_file(r, path, ASX_SVC_RELOAD, err, sizeof(err)), -EINVAL);
	snprintf(text, sizeof(text), "%s:3:1: expected a directive (dynamic, static, remove, suspend, resume, stream, mux, link or include), found 'statik'", path);
	assert_string_equal(err, text);
	assert_string_equal(events(), "");
	assert_string_equal(running(r), "Mgr:a A:a Other:a");
	/* an empty file stops everything, the latest started first */
	put(path, "# nothing\n");
	assert_int_equal(asx_svc_apply_file(r, path, ASX_SVC_RELOAD, err, sizeof(err)), 0);
	assert_string_equal(events(), "fini Other; fini A; fini Mgr");
	assert_string_equal(running(r), "");
	/* the flags are checked */
	assert_int_equal(asx_svc_apply_file(r, path, 0x80, err, sizeof(err)), -EINVAL);
	assert_int_equal(asx_svc_apply_file(r, "/nonexistent/svc.conf", 0, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/svc.conf:1:1: No such file or directory");

	/*
	 * asx_svc_check: a dry run.  A good file is planned and checked, and
	 * nothing is loaded, started or changed.
	 */
	put(path, "static Mgr\ndynamic A Service_Object * lib/svc_a.so:make_counter()\n"
		  "stream S { static counter }\nsuspend Mgr\n");
	assert_int_equal(asx_svc_check(r, path, ASX_SVC_RELOAD, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_string_equal(events(), "");
	assert_string_equal(running(r), "");
	/* what the plan finds: naming what is not there */
	put(path, "static Mgr\nremove A\n");
	assert_int_equal(asx_svc_check(r, path, ASX_SVC_RELOAD, err, sizeof(err)), -ENOENT);
	snprintf(text, sizeof(text), "%s:2:1: no service 'A' to remove", path);
	assert_string_equal(err, text);
	/* a static service nobody registered, an unknown Module, a missing library */
	put(path, "static Mgr\nstatic Nobody\n");
	assert_int_equal(asx_svc_check(r, path, ASX_SVC_RELOAD, err, sizeof(err)), -ENOENT);
	snprintf(text, sizeof(text),
		 "%s:2:1: static service 'Nobody': the program registered no factory of that name (asx_svc_register())",
		 path);
	assert_string_equal(err, text);
	put(path, "stream S { static counter static nomod }\n");
	assert_int_equal(asx_svc_check(r, path, ASX_SVC_RELOAD, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, ":1:27: stream 'S': no module 'nomod'"));
	put(path, "dynamic A Service_Object * lib/none.so:make_counter()\n");
	assert_int_equal(asx_svc_check(r, path, ASX_SVC_RELOAD, err, sizeof(err)), -ENOENT);
	snprintf(text, sizeof(text), "%s:1:1: service 'A': cannot load lib/none.so: No such file or directory",
		 path);
	assert_string_equal(err, text);
	/* and the syntax, as asx_svc_check_file() */
	put(path, "statik A\n");
	assert_int_equal(asx_svc_check(r, path, ASX_SVC_RELOAD, err, sizeof(err)), -EINVAL);
	assert_int_equal(asx_svc_check(r, path, 0x80, err, sizeof(err)), -EINVAL);
	assert_string_equal(events(), "");
	asx_svc_repo_destroy(r);
	snprintf(text, sizeof(text), "rm -rf %s", dir);
	assert_int_equal(system(text), 0);
}

static int make_mine(struct asx_module **out, const char *name)
{
	return asx_mod_counter(out, name);
}

/* The Stream's modules, top down, as "a b c". */
static const char *chain(struct asx_stream *s)
{
	static char out[256];
	char names[16][ASX_MODULE_NAME_MAX];
	int n = asx_stream_list(s, names, 16);
	size_t k = 0;

	out[0] = '\0';
	for (int i = 0; i < n && i < 16; i++)
		k += (size_t)snprintf(out + k, sizeof(out) - k, "%s%s", i ? " " : "", names[i]);
	return out;
}

/* Put a message carrying @v through @s. */
static void put_u32(struct asx_stream *s, uint32_t v)
{
	struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_DATA);

	assert_non_null(m);
	assert_int_equal(asx_msg_append(m, &v, 4), 0);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
}

/* The next message @s gives back carries @v. */
static void get_u32(struct asx_stream *s, uint32_t v)
{
	struct asx_msg *m;
	struct timespec ts;
	uint32_t got = 0;

	assert_int_equal(asx_stream_get(s, &m, 0, asx_deadline(&ts, 10 * ASX_NSEC_PER_SEC)), 0);
	assert_int_equal(asx_msg_read(m, 0, &got, 4), 4);
	assert_int_equal(got, v);
	asx_msg_free_chain(m);
}

static void roundtrip(struct asx_stream *s, uint32_t v)
{
	put_u32(s, v);
	get_u32(s, v);
}

/* A message put through @s waits in the suspended Module @path until its resume. */
static void held_then_resumed(struct asx_stream *s, struct asx_svc_repo *r, const char *path,
			      uint32_t v)
{
	struct asx_msg *m;

	put_u32(s, v);
	usleep(20000);
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	assert_int_equal(asx_svc_resume(r, path), 0);
	get_u32(s, v);
}

/* The Modules of S, bottom first, as asx_svc_find() describes them. */
static const char *mods_of(struct asx_svc_repo *r, const char *name)
{
	static struct asx_svc_info in;

	assert_int_equal(asx_svc_find(r, name, &in), 0);
	return in.desc;
}

/* "suspend STREAM/MODULE" and "resume STREAM/MODULE" in a configuration */
static void test_module_directives(void **state)
{
	struct asx_svc_repo *r = repo_with_statics();
	struct asx_stream *s, *s2;
	char err[256];

	(void)state;
	/* after the Stream's definition: the Module starts suspended */
	assert_int_equal(apply(r, "static Mgr\nstream S { static pass static counter }\n"
			       "suspend S/counter\n", 0, err), 0);
	assert_string_equal(mods_of(r, "S"), "Stream, modules bottom first: pass counter(suspended)");
	assert_int_equal(asx_svc_stream(r, "S", &s), 0);
	held_then_resumed(s, r, "S/counter", 1);
	/* alone, on a running Stream: in place, in the file's order */
	assert_int_equal(apply(r, "suspend S/pass\nsuspend S/counter\nresume S/pass", 0, err), 0);
	assert_string_equal(events(), "init Mgr argc=1");
	assert_string_equal(mods_of(r, "S"), "Stream, modules bottom first: pass counter(suspended)");
	assert_int_equal(asx_svc_stream(r, "S", &s2), 0);
	assert_ptr_equal(s2, s);
	held_then_resumed(s, r, "S/counter", 2);
	/* undone with the rest of a transaction that fails */
	assert_int_equal(apply(r, "suspend S/pass\nsuspend Mgr\nstatic Unknown", 0, err), -ENOENT);
	assert_string_equal(err, "t.conf:3:1: static service 'Unknown': the program registered no factory of that name (asx_svc_register())");
	assert_string_equal(mods_of(r, "S"), "Stream, modules bottom first: pass counter");
	assert_string_equal(events(), "suspend Mgr; resume Mgr");
	roundtrip(s, 3);
	/* a reload: the Stream as its entry says, then as the directive after it says */
	assert_int_equal(apply(r, "static Mgr\nstream S { static pass static counter inactive }\n"
			       "resume S/counter\nsuspend S/pass", ASX_SVC_RELOAD, err), 0);
	assert_string_equal(mods_of(r, "S"), "Stream, modules bottom first: pass(suspended) counter");
	held_then_resumed(s, r, "S/pass", 4);
	/* a later definition overrides an earlier directive */
	assert_int_equal(apply(r, "suspend S/counter\nstream S { static pass static counter }",
			       0, err), 0);
	assert_string_equal(mods_of(r, "S"), "Stream, modules bottom first: pass counter");
	roundtrip(s, 5);
	/* a new Stream with a module suspended by a directive */
	assert_int_equal(apply(r, "stream N { static counter }\nsuspend N/counter", 0, err), 0);
	assert_string_equal(mods_of(r, "N"), "Stream, modules bottom first: counter(suspended)");
	/* errors: said where, and nothing changes */
	assert_int_equal(apply(r, "resume N/counter\nsuspend S/nope", 0, err), -ENOENT);
	assert_string_equal(err, "t.conf:2:1: cannot suspend 'S/nope': stream 'S' has no module 'nope'");
	assert_string_equal(mods_of(r, "N"), "Stream, modules bottom first: counter(suspended)");
	assert_int_equal(apply(r, "resume T/counter", 0, err), -ENOENT);
	assert_string_equal(err, "t.conf:1:1: cannot resume 'T/counter': no stream 'T'");
	assert_int_equal(apply(r, "suspend Mgr/counter", 0, err), -EMEDIUMTYPE);
	assert_string_equal(err, "t.conf:1:1: cannot suspend 'Mgr/counter': 'Mgr' is a service, not a stream");
	assert_int_equal(apply(r, "static Other\nsuspend Other/x", 0, err), -EMEDIUMTYPE);
	assert_string_equal(err, "t.conf:2:1: cannot suspend 'Other/x': 'Other' is a service, not a stream");
	assert_int_equal(apply(r, "suspend N/counter", ASX_SVC_RELOAD, err), -ENOENT);
	assert_string_equal(err, "t.conf:1:1: cannot suspend 'N/counter': no stream 'N'");
	/* an asx.ko module: refused before anything is opened */
	assert_int_equal(apply(r, "stream K kernel { kernel pass static counter }\nsuspend K/pass",
			       0, err), -EOPNOTSUPP);
	assert_string_equal(err, "t.conf:2:1: cannot suspend 'K/pass': it is an asx.ko module; only user-space modules can be suspended");
	assert_string_equal(running(r), "Mgr:a S:a N:a");
	assert_string_equal(events(), "");
	/* a static service may start suspended, too */
	assert_int_equal(apply(r, "static Other inactive \"-v\"", 0, err), 0);
	assert_string_equal(events(), "init Other argc=2 -v; suspend Other");
	assert_string_equal(running(r), "Mgr:a S:a N:a Other:s");
	asx_svc_repo_destroy(r);
	assert_string_equal(events(), "fini Other; fini Mgr");
}

static void test_streams(void **state)
{
	struct asx_svc_repo *r;
	struct asx_svc_info in;
	struct asx_stream *s, *s2;
	char conf[2048], err[256];

	(void)state;
	assert_int_equal(asx_svc_repo_create(&r), 0);
	assert_int_equal(asx_svc_register(r, "Mgr", make_st), 0);
	snprintf(conf, sizeof(conf),
		 "static Mgr\n"
		 "stream S {\n"
		 "  static framer\n"
		 "  dynamic P Module * %s/svc_mod.so:make_pass() \"v1\"\n"
		 "  static counter\n"
		 "}\n", sodir);
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_string_equal(events(), "init Mgr argc=1; open P v1");
	assert_int_equal(asx_svc_stream(r, "S", &s), 0);
	assert_int_equal(asx_svc_stream(r, "Mgr", &s2), -EMEDIUMTYPE);
	assert_int_equal(asx_svc_stream(r, "None", &s2), -ENOENT);
	assert_string_equal(chain(s), "head counter P framer loop");
	assert_int_equal(asx_svc_find(r, "S", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: framer P counter");
	assert_string_equal(in.factory, "stream");
	roundtrip(s, 1);
	/* the same again: nothing happens */
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_string_equal(events(), "");
	/* reshape: framer removed, P replaced (new parameters), pass inserted on top */
	snprintf(conf, sizeof(conf),
		 "stream S { dynamic P Module * %s/svc_mod.so:make_pass() \"v2\" static counter"
		 " static pass }\n", sodir);
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_string_equal(events(), "open P v2; close P");
	assert_int_equal(asx_svc_stream(r, "S", &s2), 0);
	assert_ptr_equal(s2, s);		/* the same Stream, reshaped live */
	assert_string_equal(chain(s), "head pass counter P loop");
	roundtrip(s, 2);
	/* a failure in the middle undoes the earlier steps of the same Stream */
	snprintf(conf, sizeof(conf),
		 "stream S { static framer dynamic P Module * %s/svc_mod.so:make_pass() \"-fail\""
		 " static counter static cksum }\n", sodir);
	assert_int_equal(apply(r, conf, 0, err), -EADDRNOTAVAIL);
	assert_string_equal(err, "t.conf:1:26: stream 'S': module 'P': replace failed: Cannot assign requested address");
	assert_string_equal(chain(s), "head pass counter P loop");
	assert_string_equal(events(), "");
	snprintf(conf, sizeof(conf),
		 "stream S { dynamic Q Module * %s/svc_mod.so:make_pass() \"q\" "
		 "dynamic P Module * %s/svc_mod.so:make_pass() \"v3\" static counter static pass "
		 "dynamic B Module * %s/svc_mod.so:make_broken() }\n", sodir, sodir, sodir);
	assert_int_equal(apply(r, conf, 0, err), -ENOTRECOVERABLE);
	assert_non_null(strstr(err, "stream 'S': module 'B': its factory failed: State not recoverable"));
	assert_string_equal(chain(s), "head pass counter P loop");
	assert_string_equal(events(), "");	/* B failed first, top down: nothing was done */
	snprintf(conf, sizeof(conf),
		 "stream S { dynamic Q Module * %s/svc_mod.so:make_broken() "
		 "dynamic P Module * %s/svc_mod.so:make_pass() \"v3\" static counter static pass }\n",
		 sodir, sodir);
	assert_int_equal(apply(r, conf, 0, err), -ENOTRECOVERABLE);
	/* P was replaced by v3, then Q failed: P is back, a fresh one of v2 */
	assert_string_equal(events(), "open P v3; close P; open P v2; close P");
	assert_string_equal(chain(s), "head pass counter P loop");
	roundtrip(s, 3);
	/* kept modules may not change places */
	assert_int_equal(apply(r, "stream S { static counter static pass static P }", 0, err),
			 -EOPNOTSUPP);
	assert_string_equal(err, "t.conf:1:27: stream 'S': module 'pass' would move past 'P': a running Stream keeps its modules' order (remove it in one reload, add it back in the next)");
	/* streams cannot be suspended */
	assert_int_equal(apply(r, "suspend S", 0, err), -EOPNOTSUPP);
	assert_string_equal(err, "t.conf:1:1: Stream 'S' cannot be suspended or resumed");
	/* their user-space Modules can: they hold what comes to them */
	assert_int_equal(asx_svc_suspend(r, "S/counter"), 0);
	assert_int_equal(asx_svc_find(r, "S", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: P counter(suspended) pass");
	held_then_resumed(s, r, "S/counter", 5);
	assert_int_equal(asx_svc_suspend(r, "S/nope"), -ENOENT);
	assert_int_equal(asx_svc_suspend(r, "T/counter"), -ENOENT);
	assert_int_equal(asx_svc_suspend(r, "Mgr/counter"), -EMEDIUMTYPE);
	assert_int_equal(asx_svc_remove(r, "S/counter"), -EOPNOTSUPP);
	/* ... and a reload says which are: "inactive" suspends, its absence resumes */
	assert_int_equal(apply(r, "stream S { static P \"v3\" static counter inactive static pass }",
			       0, err), -ENOENT);	/* P is dynamic: a changed definition */
	assert_int_equal(asx_svc_find(r, "S", &in), 0);	/* the counter's suspend undone */
	assert_string_equal(in.desc, "Stream, modules bottom first: P counter pass");
	roundtrip(s, 5);
	snprintf(conf, sizeof(conf),
		 "stream S { dynamic P Module * %s/svc_mod.so:make_pass() \"v2\" static counter inactive"
		 " static pass }\n", sodir);
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_string_equal(events(), "");	/* no Module replaced: only a state changed */
	assert_int_equal(asx_svc_find(r, "S", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: P counter(suspended) pass");
	held_then_resumed(s, r, "S/counter", 6);
	snprintf(conf, sizeof(conf),
		 "stream S { dynamic P Module * %s/svc_mod.so:make_pass() \"v2\" static counter"
		 " static pass }\n", sodir);
	assert_int_equal(apply(r, conf, 0, err), 0);
	assert_int_equal(asx_svc_find(r, "S", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: P counter pass");
	roundtrip(s, 7);
	/* a service object may replace a Stream of the same name, and back */
	assert_int_equal(asx_svc_register(r, "S", make_st), 0);
	assert_int_equal(apply(r, "static S", 0, err), 0);
	assert_string_equal(events(), "init S argc=1; close P");
	assert_int_equal(asx_svc_stream(r, "S", &s2), -EMEDIUMTYPE);
	assert_int_equal(apply(r, "stream S { static pass }", 0, err), 0);
	assert_string_equal(events(), "fini S");
	/* the last Module from svc_mod.so went with the Stream's replacement */
	{
		char lib[512];
		void *h;

		so(lib, sizeof(lib), "svc_mod.so");
		assert_null(dlopen(lib, RTLD_NOW | RTLD_NOLOAD));
		/* a program's own Module factory, under a name of its own */
		assert_int_equal(asx_svc_register_module(r, "mine", make_mine), 0);
		assert_int_equal(asx_svc_register_module(r, "mine", make_mine), -EEXIST);
		snprintf(conf, sizeof(conf), "stream S { static mine static pass "
			 "dynamic P Module * %s/svc_mod.so:make_pass() }", sodir);
		assert_int_equal(apply(r, conf, 0, err), 0);
		assert_int_equal(asx_svc_stream(r, "S", &s), 0);
		assert_string_equal(chain(s), "head P pass mine loop");
		assert_string_equal(events(), "open P");
		h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
		assert_non_null(h);
		dlclose(h);
		roundtrip(s, 4);
	}
	asx_svc_repo_destroy(r);
	assert_string_equal(events(), "close P; fini Mgr");
}

/*
 * Reconfiguration under load: writers put numbered messages through a
 * Stream from svc.conf while the configuration cycles through four
 * shapes (remove, replace, insert, suspend, resume) RECONFIGS times.
 * Every message must come back exactly once, each writer's in order.
 */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RECONFIGS 300
#define PER_WRITER 3000
#else
#define RECONFIGS 1000
#define PER_WRITER 20000
#endif
#define WRITERS 4

struct load {
	struct asx_stream *s;
	int reconfigured;		/* atomic: the reconfigurations are done */
	uint64_t total;			/* atomic: what the writers sent, once known */
	uint64_t got, dup_or_gap;
	uint32_t next[WRITERS];
};

struct writer {
	struct load *l;
	uint32_t id, sent;
	int err;
};

/* At least PER_WRITER messages, and on until the reconfigurations are done. */
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct timespec ts;

	for (uint32_t i = 0;
	     i < PER_WRITER || !__atomic_load_n(&w->l->reconfigured, __ATOMIC_ACQUIRE); i++) {
		struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_DATA);
		uint32_t v[2] = { w->id, i };
		int r;

		if (!m || asx_msg_append(m, v, 8)) {
			__atomic_store_n(&w->err, -ENOMEM, __ATOMIC_RELEASE);
			return NULL;
		}
		r = asx_stream_put(w->l->s, m, 0, asx_deadline(&ts, 60 * ASX_NSEC_PER_SEC));
		if (r) {
			asx_msg_free_chain(m);
			__atomic_store_n(&w->err, r, __ATOMIC_RELEASE);
			return NULL;
		}
		__atomic_store_n(&w->sent, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *reader_main(void *arg)
{
	struct load *l = arg;
	struct timespec ts;

	while (l->got < __atomic_load_n(&l->total, __ATOMIC_ACQUIRE)) {
		struct asx_msg *m;
		uint32_t v[2];

		/* the watchdog: a lost message fails here instead of hanging */
		if (asx_stream_get(l->s, &m, 0, asx_deadline(&ts, 60 * ASX_NSEC_PER_SEC)))
			break;
		if (asx_msg_read(m, 0, v, 8) == 8 && v[0] < WRITERS && v[1] == l->next[v[0]])
			l->next[v[0]]++;
		else
			l->dup_or_gap++;
		l->got++;
		asx_msg_free_chain(m);
	}
	return NULL;
}

static void test_stream_reconfig_under_load(void **state)
{
	struct asx_svc_repo *r;
	struct load l = { .total = UINT64_MAX };
	struct writer w[WRITERS];
	pthread_t wt[WRITERS], rt;
	char shapes[4][1024], err[256];
	int applied = 0;

	(void)state;
	snprintf(shapes[0], sizeof(shapes[0]),
		 "stream S { static counter dynamic P Module * %s/svc_mod.so:make_pass() \"a\" }",
		 sodir);
	snprintf(shapes[1], sizeof(shapes[1]),
		 "stream S { dynamic P Module * %s/svc_mod.so:make_pass() \"b\" }", sodir);
	snprintf(shapes[2], sizeof(shapes[2]),
		 "stream S { static counter static pass dynamic P Module * %s/svc_mod.so:make_pass() \"c\" }",
		 sodir);
	/* from shape 2: counter suspended (kept), pass removed, P replaced by a suspended one;
	 * then shape 0 resumes both (P kept) */
	snprintf(shapes[3], sizeof(shapes[3]),
		 "stream S { static counter inactive dynamic P Module * %s/svc_mod.so:make_pass() inactive \"a\" }",
		 sodir);
	assert_int_equal(asx_svc_repo_create(&r), 0);
	assert_int_equal(apply(r, shapes[0], 0, err), 0);
	assert_int_equal(asx_svc_stream(r, "S", &l.s), 0);
	assert_int_equal(pthread_create(&rt, NULL, reader_main, &l), 0);
	for (uint32_t i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .l = &l, .id = i };
		assert_int_equal(pthread_create(&wt[i], NULL, writer_main, &w[i]), 0);
	}
	/* RECONFIGS changes while the writers write (they go on until these are done) */
	for (int i = 1; i <= RECONFIGS; i++) {
		int e;

		/* messages flow between any two changes, however the threads are scheduled */
		for (;;) {
			uint32_t sent = 0;
			int failed = 0;

			for (int k = 0; k < WRITERS; k++) {
				sent += __atomic_load_n(&w[k].sent, __ATOMIC_ACQUIRE);
				failed |= __atomic_load_n(&w[k].err, __ATOMIC_ACQUIRE);
			}
			/* (after shape 3 they may wait for shape 0's resume) */
			if (sent >= (uint32_t)i * 8 || failed || i % 4 == 0)
				break;
			usleep(50);
		}
		e = apply(r, shapes[i % 4], 0, err);

		if (e)
			fail_msg("reconfiguration %d: %s", i, err);
		applied++;
	}
	__atomic_store_n(&l.reconfigured, 1, __ATOMIC_RELEASE);
	{
		uint64_t total = 0;

		for (int i = 0; i < WRITERS; i++) {
			pthread_join(wt[i], NULL);
			assert_int_equal(w[i].err, 0);
			total += w[i].sent;
		}
		__atomic_store_n(&l.total, total, __ATOMIC_RELEASE);
	}
	pthread_join(rt, NULL);
	events();
	print_message("%d reconfigurations, %llu messages, %llu out of order or duplicated\n",
		      applied, (unsigned long long)l.got, (unsigned long long)l.dup_or_gap);
	assert_int_equal(l.dup_or_gap, 0);
	for (int i = 0; i < WRITERS; i++) {
		assert_true(w[i].sent >= PER_WRITER);
		assert_int_equal(l.next[i], w[i].sent);	/* every one, once, in order */
	}
	assert_int_equal(l.got, __atomic_load_n(&l.total, __ATOMIC_ACQUIRE));
	asx_svc_repo_destroy(r);
	events();
}

/*
 * The example Stream shipped with asxd: framer, checksum and the XDR
 * Module of codec.so.  Records go down encoded, checksummed and framed,
 * come back up through the loop and are checked field for field, while
 * the checksum Module is suspended and resumed by "STREAM/MODULE".
 */
/* codec.so takes asx_mod_xdr from this program (linked with libasx.a, -rdynamic) */
__attribute__((used)) static void *const keep_mod_xdr = (void *)&asx_mod_xdr;

static void test_codec_stream(void **state)
{
	enum { N = 64, PER = 3 };
	struct asx_svc_repo *r;
	struct asx_svc_info in;
	struct asx_stream *s;
	struct timespec ts;
	char conf[1024], err[256];
	uint32_t want = 0;

	(void)state;
	assert_int_equal(asx_svc_repo_create(&r), 0);
	snprintf(conf, sizeof(conf),
		 "stream Codec {\n  static framer\n  static cksum\n"
		 "  dynamic Xdr Module * %s/codec.so:asx_codec_xdr()\n}\n", sodir);
	if (apply(r, conf, 0, err))
		fail_msg("%s", err);
	assert_int_equal(asx_svc_find(r, "Codec", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: framer cksum Xdr");
	assert_int_equal(asx_svc_stream(r, "Codec", &s), 0);
	for (uint32_t i = 0; i < N; i++) {
		struct asx_codec_rec v[PER];
		struct asx_msg *m = asx_msg_alloc(sizeof(v), ASX_MSG_DATA);

		for (uint32_t k = 0; k < PER; k++)
			codec_fill(&v[k], i * PER + k);
		assert_non_null(m);
		assert_int_equal(asx_msg_append(m, v, sizeof(v)), 0);
		if (i == N / 2)
			assert_int_equal(asx_svc_suspend(r, "Codec/cksum"), 0);
		assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
	}
	usleep(20000);
	assert_int_equal(asx_svc_find(r, "Codec", &in), 0);
	assert_string_equal(in.desc, "Stream, modules bottom first: framer cksum(suspended) Xdr");
	/* the first half came back; the second waits in the checksum Module */
	for (int pass = 0; pass < 2; pass++) {
		struct asx_msg *m;

		while (asx_stream_get(s, &m, pass ? 0 : ASX_STREAM_NOWAIT,
				      pass ? asx_deadline(&ts, 10 * ASX_NSEC_PER_SEC) : NULL) == 0) {
			struct asx_codec_rec v[PER];

			assert_int_equal(m->type, ASX_MSG_DATA);
			assert_int_equal(asx_msg_length(m), sizeof(v));
			assert_int_equal(asx_msg_read(m, 0, v, sizeof(v)), sizeof(v));
			asx_msg_free_chain(m);
			for (uint32_t k = 0; k < PER; k++, want++)
				assert_true(codec_ok(&v[k], want));
			if (want == N * PER)
				break;
		}
		if (!pass) {
			assert_int_equal(want, N / 2 * PER);
			assert_int_equal(asx_svc_resume(r, "Codec/cksum"), 0);
		}
	}
	assert_int_equal(want, N * PER);
	asx_svc_repo_destroy(r);
}

static void test_arguments(void **state)
{
	struct asx_svc_repo *r;

	(void)state;
	assert_int_equal(asx_svc_repo_create(NULL), -EINVAL);
	assert_int_equal(asx_svc_repo_create(&r), 0);
	assert_int_equal(asx_svc_apply_text(NULL, "t", "", 0, NULL, 0), -EINVAL);
	assert_int_equal(asx_svc_apply_text(r, "t", NULL, 0, NULL, 0), -EINVAL);
	assert_int_equal(asx_svc_apply_text(r, "t", "", 0, NULL, 0), 0);
	assert_int_equal(asx_svc_apply_text(r, "t", "remove x", 0, NULL, 0), -ENOENT);
	assert_int_equal(asx_svc_register(r, "x", NULL), -EINVAL);
	assert_int_equal(asx_svc_list(r, NULL, 1), -EINVAL);
	assert_null(asx_svc_priv(NULL));
	assert_null(asx_svc_name(NULL));
	asx_svc_repo_destroy(r);
	asx_svc_repo_destroy(NULL);
}

/* ---------------------------------------------------------------- stream NAME asc N */

static int asc_svc_ran;		/* service threads that ran as ASC user threads */
static int pthread_svc_ran;	/* ... and as pthreads */

static int where_svc(struct asx_task *t)
{
	struct asx_msg *m;
	int r;

	__atomic_add_fetch(asx_asc_thread_self() ? &asc_svc_ran : &pthread_svc_ran, 1,
			   __ATOMIC_SEQ_CST);
	while ((r = asx_task_getq(t, &m, NULL)) == 0)
		if (asx_task_put_next(t, m, NULL))
			asx_msg_free_chain(m);
	return r == -ESHUTDOWN ? 0 : r;
}

static int where_open(struct asx_task *t, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return asx_task_activate(t, 1);
}

static const struct asx_task_ops where_ops = { .open = where_open, .svc = where_svc };

static int make_where(struct asx_module **out, const char *name)
{
	return asx_module_create(out, name, &where_ops, NULL, NULL);
}

/*
 * "stream NAME asc N": the Stream's Modules' asx_task_activate() runs their
 * service threads as user threads of an ASC of N VPs made for the Stream;
 * without it, pthreads.  N out of range is a syntax error; a running
 * Stream cannot change it.
 */
static void test_stream_asc(void **state)
{
	struct asx_svc_repo *r;
	struct asx_stream *s;
	char err[256];

	(void)state;
	asc_svc_ran = pthread_svc_ran = 0;
	assert_int_equal(asx_svc_repo_create(&r), 0);
	assert_int_equal(asx_svc_register_module(r, "where", make_where), 0);
	if (apply(r, "stream A asc 1 { static where }\nstream P { static where }", 0, err))
		fail_msg("%s", err);
	assert_int_equal(asx_svc_stream(r, "A", &s), 0);
	roundtrip(s, 7);
	assert_int_equal(asx_svc_stream(r, "P", &s), 0);
	roundtrip(s, 8);
	assert_int_equal(__atomic_load_n(&asc_svc_ran, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(__atomic_load_n(&pthread_svc_ran, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(apply(r, "stream A asc 2 { static where }\nstream P { static where }",
			       0, err), -EOPNOTSUPP);
	assert_string_equal(err, "t.conf:1:1: stream 'A': its Tasks' threads (pthreads, or 'asc N' and its options) cannot change while it runs: remove the Stream in one reload and add it back in the next");
	assert_int_equal(apply(r, "stream B asc 0 { static where }", 0, err), -EINVAL);
	assert_string_equal(err, "t.conf:1:14: 'asc 0': the ASC's virtual processors are a number from 1 to 64");
	assert_int_equal(apply(r, "stream B asc { static where }", 0, err), -EINVAL);
	asx_svc_repo_destroy(r);
}

/* ------------------------------------ stream NAME asc N policy/semantic/qos */

/* What the last "how" service thread saw of its own scheduling. */
static struct {
	const void *policy;		/* its ASC's policy (asc_impl.h) */
	int semantic;
	int prio;
	int ran;			/* atomic */
} how;

static int how_svc(struct asx_task *t)
{
	struct asx_asc_thread *self = asx_asc_thread_self();

	if (self) {
		how.policy = self->asc->pol;
		how.semantic = (int)self->asc->semantic;
		/* PRIO's slot (prio.c's struct pslot): link, level, priority */
		how.prio = ((const struct { void *next, *level; int prio; } *)
			    asx_asc_thread_slot(self))->prio;
		__atomic_add_fetch(&how.ran, 1, __ATOMIC_SEQ_CST);
	}
	return where_svc(t);
}

static const struct asx_task_ops how_ops = { .open = where_open, .svc = how_svc };

static int make_how(struct asx_module **out, const char *name)
{
	return asx_module_create(out, name, &how_ops, NULL, NULL);
}

/* Apply @text (one Stream A), check that its service thread ran with
 * @policy, @semantic and @prio, and remove it. */
static void asc_runs_with(struct asx_svc_repo *r, const char *text, const void *policy,
			  int semantic, int prio)
{
	struct asx_stream *s;
	char err[256];

	memset(&how, 0, sizeof(how));
	if (apply(r, text, 0, err))
		fail_msg("%s: %s", text, err);
	assert_int_equal(asx_svc_stream(r, "A", &s), 0);
	roundtrip(s, 9);
	assert_int_equal(__atomic_load_n(&how.ran, __ATOMIC_SEQ_CST), 1);
	assert_ptr_equal(how.policy, policy);
	assert_int_equal(how.semantic, semantic);
	assert_int_equal(how.prio, prio);
	assert_int_equal(apply(r, "remove A", 0, err), 0);
}

/* A bad "asc" clause: -EINVAL and exactly @msg. */
static void asc_refused(struct asx_svc_repo *r, const char *text, const char *msg)
{
	char err[256];

	assert_int_equal(apply(r, text, 0, err), -EINVAL);
	assert_string_equal(err, msg);
}

/*
 * "stream NAME asc N policy P semantic S qos Q": the service threads run
 * on an ASC of that policy and concurrency semantic with priority Q (seen
 * from inside the thread); the options in any order, each once; bad ones
 * refused with a message; a change of any of them is refused while the
 * Stream runs.
 */
static void test_stream_asc_policy(void **state)
{
	struct asx_svc_repo *r;
	char err[256];

	(void)state;
	assert_int_equal(asx_svc_repo_create(&r), 0);
	assert_int_equal(asx_svc_register_module(r, "how", make_how), 0);
	asc_runs_with(r, "stream A asc 1 { static how }", &asx_asc_prio, ASX_ASC_NONPREEMPTIVE,
		      0);
	asc_runs_with(r, "stream A asc 1 policy prio qos 7 semantic preemptive { static how }",
		      &asx_asc_prio, ASX_ASC_PREEMPTIVE, 7);
	asc_runs_with(r, "stream A asc 2 qos -3 semantic timesliced policy prio { static how }",
		      &asx_asc_prio, ASX_ASC_TIMESLICED, -3);
	asc_runs_with(r, "stream A asc 1 policy direct { static how }", &asx_asc_direct,
		      ASX_ASC_NONPREEMPTIVE, 0);

	/* the same clause again changes nothing; another one is refused */
	if (apply(r, "stream A asc 1 qos 5 { static how }", 0, err))
		fail_msg("%s", err);
	assert_int_equal(apply(r, "stream A asc 1 qos 5 { static how }", 0, err), 0);
	assert_int_equal(apply(r, "stream A asc 1 qos 6 { static how }", 0, err), -EOPNOTSUPP);
	assert_string_equal(err, "t.conf:1:1: stream 'A': its Tasks' threads (pthreads, or 'asc N' and its options) cannot change while it runs: remove the Stream in one reload and add it back in the next");
	assert_int_equal(apply(r, "remove A", 0, err), 0);

	asc_refused(r, "stream B asc 1 policy edf { static how }",
		    "t.conf:1:23: 'policy edf': EDF threads are periodic jobs and a Task's service thread is a loop: use 'prio' or 'direct'");
	/* another word names a registered policy (test_svc_policy loads them) */
	assert_int_equal(apply(r, "stream B asc 1 policy fifo { static how }", 0, err), -ENOENT);
	assert_string_equal(err, "t.conf:1:1: stream 'B': no ASC policy 'fifo' (load it before the stream: 'dynamic fifo ASC_Policy * LIB.so:FACTORY()')");
	asc_refused(r, "stream B asc 1 policy { static how }",
		    "t.conf:1:23: expected a policy after 'policy' ('prio', 'direct' or a loaded ASC_Policy's name), found '{'");
	asc_refused(r, "stream B asc 1 semantic eager { static how }",
		    "t.conf:1:25: expected a semantic after 'semantic' ('nonpreemptive', 'preemptive' or 'timesliced'), found 'eager'");
	asc_refused(r, "stream B asc 1 qos high { static how }",
		    "t.conf:1:20: 'qos high': the priority is an integer from -1000000 to 1000000");
	asc_refused(r, "stream B asc 1 qos 1000001 { static how }",
		    "t.conf:1:20: 'qos 1000001': the priority is an integer from -1000000 to 1000000");
	asc_refused(r, "stream B asc 1 qos 99999999999999999999 { static how }",
		    "t.conf:1:20: 'qos 999999999999...': the priority is an integer from -1000000 to 1000000");
	asc_refused(r, "stream B asc 123456789 { static how }",
		    "t.conf:1:14: 'asc 123456789': the ASC's virtual processors are a number from 1 to 64");
	asc_refused(r, "stream B asc 1 qos - { static how }",
		    "t.conf:1:20: 'qos -': the priority is an integer from -1000000 to 1000000");
	asc_refused(r, "stream B asc 1 qos { static how }",
		    "t.conf:1:20: expected the threads' priority after 'qos' (an integer), found '{'");
	asc_refused(r, "stream B asc 1 qos 1 qos 2 { static how }",
		    "t.conf:1:22: 'qos' given twice after 'asc N'");
	asc_refused(r, "stream B asc 1 policy direct qos 2 { static how }",
		    "t.conf:1:30: 'qos' is a PRIO thread's priority: a DIRECT thread has none");
	asc_refused(r, "stream B asc 1 speed 3 { static how }",
		    "t.conf:1:16: expected '{', 'listen', or 'policy', 'semantic' or 'qos' after 'asc N', found 'speed'");
	asc_refused(r, "stream B policy prio { static how }",
		    "t.conf:1:10: expected '{' and the Stream's modules (or 'kernel' for a Stream over asx.ko), found 'policy'");
	assert_int_equal(asx_svc_stream(r, "B", &(struct asx_stream *){ NULL }), -ENOENT);
	asx_svc_repo_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_static_services),
		cmocka_unit_test(test_dynamic_services),
		cmocka_unit_test(test_load_failures),
		cmocka_unit_test(test_transaction),
		cmocka_unit_test(test_reload_file),
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_stream_asc),
		cmocka_unit_test(test_stream_asc_policy),
		cmocka_unit_test(test_module_directives),
		cmocka_unit_test(test_stream_reconfig_under_load),
		cmocka_unit_test(test_codec_stream),
		cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_ace_forms),
	};
	ssize_t n = readlink("/proc/self/exe", sodir, sizeof(sodir) - 8);

	/* (a longer path: the test says so rather than cut it) */

	if (n <= 0)
		return 2;
	sodir[n] = '\0';
	strcpy(strrchr(sodir, '/'), "/svc");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
