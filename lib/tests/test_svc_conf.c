// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_svc_conf.c - the svc.conf parser: every directive, every error with
 * its file:line:column message, includes (relative, nested, cycles, depth),
 * limits, and the parameter splitter.  Inputs that once wedged a reader
 * (a FIFO, an include bomb) and the parser's cost (linear: a file at the
 * 1 MiB limit parses in milliseconds) run under an alarm() watchdog, so a
 * regression fails instead of hanging.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "svc/conf.h"

static struct asx__svc_conf *ok(const char *text)
{
	struct asx__svc_conf *c = NULL;
	struct asx__svc_err e;
	int r = asx__svc_parse_mem("t.conf", text, strlen(text), &c, &e);

	if (r)
		fail_msg("unexpected error %d: %s", r, e.msg);
	assert_non_null(c);
	return c;
}

/* The parse must fail with exactly @msg. */
static void bad(const char *text, const char *msg)
{
	struct asx__svc_conf *c = (void *)1;
	struct asx__svc_err e;
	int r = asx__svc_parse_mem("t.conf", text, strlen(text), &c, &e);

	if (!r)
		fail_msg("for:\n%s\nwanted: %s\n   got: no error", text, msg);
	assert_int_equal(r, e.err);
	assert_null(c);
	if (strcmp(e.msg, msg))
		fail_msg("for:\n%s\nwanted: %s\n   got: %s", text, msg, e.msg);
}

static void test_every_directive(void **state)
{
	struct asx__svc_conf *c;
	const struct asx__svc_ent *e;

	(void)state;
	c = ok("# a comment\n"
	       "dynamic Logger Service_Object * ./liblog.so:make_logger() \"-p 2010\"\n"
	       "dynamic Quiet Service_Object liblog.so:make_quiet() inactive # no star, no args\n"
	       "dynamic Spaced Service_Object * \"/opt/my libs/x.so\" : make_x ( ) active \"a\"\n"
	       "static Svc_Manager \"-d -p 4911\"\n"
	       "static Bare\n"
	       "remove Old_Service\n"
	       "suspend Logger\n"
	       "resume Logger\n"
	       "stream Net {\n"
	       "  static framer inactive \"-m 4096\"\n"
	       "  dynamic Xdr Module * libxdrmod.so:make_xdr()\n"
	       "}\n"
	       "stream K kernel \"pipe\" { kernel pass kernel count static cksum \"-v\" }\n"
	       "stream K2 kernel { }\n");
	assert_int_equal(c->n, 11);
	assert_int_equal(c->nfiles, 1);
	e = c->head;
	assert_int_equal(e->dir, ASX__SVC_DYNAMIC);
	assert_int_equal(e->type, ASX__SVC_T_OBJECT);
	assert_string_equal(e->name, "Logger");
	assert_string_equal(e->path, "./liblog.so");
	assert_string_equal(e->factory, "make_logger");
	assert_string_equal(e->args, "-p 2010");
	assert_false(e->inactive);
	assert_string_equal(e->loc.file, "t.conf");
	assert_int_equal(e->loc.line, 2);
	assert_int_equal(e->loc.col, 1);
	e = e->next;
	assert_int_equal(e->type, ASX__SVC_T_OBJECT);
	assert_string_equal(e->path, "liblog.so");
	assert_true(e->inactive);
	assert_null(e->args);
	e = e->next;
	assert_string_equal(e->path, "/opt/my libs/x.so");
	assert_string_equal(e->factory, "make_x");
	assert_false(e->inactive);
	assert_string_equal(e->args, "a");
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_STATIC);
	assert_string_equal(e->name, "Svc_Manager");
	assert_string_equal(e->args, "-d -p 4911");
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_STATIC);
	assert_null(e->args);
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_REMOVE);
	assert_string_equal(e->name, "Old_Service");
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_SUSPEND);
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_RESUME);
	assert_string_equal(e->name, "Logger");
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_STREAM);
	assert_false(e->kernel);
	assert_int_equal(e->nmods, 2);
	assert_int_equal(e->mods[0].dir, ASX__SVC_STATIC);
	assert_string_equal(e->mods[0].name, "framer");
	assert_string_equal(e->mods[0].args, "-m 4096");
	assert_true(e->mods[0].inactive);
	assert_false(e->mods[1].inactive);
	assert_int_equal(e->mods[0].loc.line, 11);
	assert_int_equal(e->mods[0].loc.col, 3);
	assert_int_equal(e->mods[1].dir, ASX__SVC_DYNAMIC);
	assert_int_equal(e->mods[1].type, ASX__SVC_T_MODULE);
	assert_string_equal(e->mods[1].factory, "make_xdr");
	e = e->next;
	assert_true(e->kernel);
	assert_string_equal(e->driver, "pipe");
	assert_int_equal(e->nmods, 3);
	assert_int_equal(e->mods[0].dir, ASX__SVC_KERNEL);
	assert_string_equal(e->mods[0].name, "pass");
	assert_null(e->mods[1].args);
	assert_string_equal(e->mods[2].args, "-v");
	assert_int_equal(e->mods[2].dir, ASX__SVC_STATIC);
	e = e->next;
	assert_true(e->kernel);
	assert_null(e->driver);
	assert_int_equal(e->nmods, 0);
	assert_null(e->next);
	asx__svc_conf_free(c);

	/* an empty file, only comments, and strings read as ACE reads them:
	 * a backslash is a byte like any other, \" does not end the string */
	asx__svc_conf_free(ok(""));
	asx__svc_conf_free(ok("# nothing\n   \t\n#"));
	c = ok("static s \"a\\\"b\\\\c\\nd\\te\\q\"");
	assert_string_equal(c->head->args, "a\\\"b\\\\c\\nd\\te\\q");
	asx__svc_conf_free(c);
	c = ok("static s 'C:\\temp\\new.log \"x\" \\'y'");
	assert_string_equal(c->head->args, "C:\\temp\\new.log \"x\" \\'y");
	asx__svc_conf_free(c);
}

static void test_errors(void **state)
{
	(void)state;
	bad("dynamic", "t.conf:1:8: expected a service name after 'dynamic', found the end of the file");
	bad("\n  dynamic {", "t.conf:2:11: expected a service name after 'dynamic', found '{'");
	bad("dynamic 9x Module a.so:f()",
	    "t.conf:1:9: '9x' is not a valid name (a letter or '_', then letters, digits, '_', '.' or '-')");
	bad("dynamic x Thing a.so:f()",
	    "t.conf:1:11: expected the service's type, 'Service_Object' (or ASX's 'ASC_Policy'), found 'Thing'");
	bad("\ndynamic Tap Module * a.so:f()",
	    "t.conf:2:13: a Module runs in a Stream: make 'Tap' an entry of 'stream NAME { ... }'");
	bad("dynamic x Service_Object * \"\" f()",
	    "t.conf:1:31: expected ':' and the factory function after the shared object's path, found 'f'");
	bad("dynamic x Service_Object * a.so f()",
	    "t.conf:1:33: expected ':' and the factory function after the shared object's path, found 'f'");
	bad("dynamic x Service_Object * a.so:()",
	    "t.conf:1:33: expected the factory function's name after ':', found '('");
	bad("dynamic x Service_Object * a.so:1f()", "t.conf:1:33: the factory '1f' is not a C identifier");
	bad("dynamic x Service_Object * a.so:f",
	    "t.conf:1:33: 'f' without '()' is an object initializer (a data symbol); ASX makes a service with a factory function: define f with ASX_SVC_FACTORY() and write 'f()'");
	bad("dynamic x Service_Object * a.so:f(",
	    "t.conf:1:35: expected ')' (a factory takes no arguments here: its parameters go in a quoted string), found the end of the file");
	bad("dynamic x Service_Object * a.so:f(\"-a\")",
	    "t.conf:1:35: expected ')' (a factory takes no arguments here: its parameters go in a quoted string), found a quoted string");
	bad("static", "t.conf:1:7: expected a service name after 'static', found the end of the file");
	bad("remove \"x\"", "t.conf:1:8: expected the name of a service, found a quoted string");
	bad("Dynamic x", "t.conf:1:1: expected a directive (dynamic, static, remove, suspend, resume, stream, mux, link or include), found 'Dynamic'");
	bad("static a\n}", "t.conf:2:1: expected a directive (dynamic, static, remove, suspend, resume, stream, mux, link or include), found '}'");
	bad("static a \"unterminated\n\"", "t.conf:1:10: unterminated string (no closing '\"' on this line)");
	bad("static a 'single\n'", "t.conf:1:10: unterminated string (no closing \"'\" on this line)");
	bad("static a \"ends in \\", "t.conf:1:10: unterminated string (no closing '\"' on this line)");
	bad("static a\x01", "t.conf:1:9: unexpected character 0x01");
	bad("stream s", "t.conf:1:9: expected '{' and the Stream's modules (or 'kernel' for a Stream over asx.ko), found the end of the file");
	bad("stream s kernel (", "t.conf:1:17: expected '{' and the Stream's modules, found '('");
	bad("stream s {\n static a\n", "t.conf:1:1: Stream 's' has no closing '}'");
	bad("stream s { remove }", "t.conf:1:19: expected the name of one of the Stream's modules, found '}'");
	bad("stream s { suspend a/b }",
	    "t.conf:1:20: 'a/b' is not a valid name (a letter or '_', then letters, digits, '_', '.' or '-')");
	bad("stream s { static a } stream s { static b }", "t.conf:1:23: 's' is already configured at t.conf:1:1");
	bad("stream dynamic s STREAM * a.so:f() { }",
	    "t.conf:1:8: 'stream dynamic': ASX makes a Stream itself, not from a factory: write 'stream NAME { ... }' with its Modules");
	bad("stream s { dynamic a Service_Object * x.so:f() }",
	    "t.conf:1:22: expected 'Module' (a Stream holds Modules), found 'Service_Object'");
	bad("stream s { kernel pass }",
	    "t.conf:1:12: a 'kernel' module needs a kernel Stream: write 'stream s kernel { ... }'");
	bad("stream s kernel {\n static up\n kernel pass\n}",
	    "t.conf:3:2: kernel module 'pass' cannot sit above user-space module 'up' (line 2): modules are listed bottom first, kernel ones first");
	bad("stream s { static a static a }", "t.conf:1:21: module 'a' is already in Stream 's' (at line 1)");
	bad("stream s { kernel }", "t.conf:1:12: a 'kernel' module needs a kernel Stream: write 'stream s kernel { ... }'");
	bad("stream s kernel { kernel }", "t.conf:1:26: expected an asx.ko module's name after 'kernel', found '}'");
	bad("stream s kernel { kernel pass inactive }",
	    "t.conf:1:31: asx.ko module 'pass' cannot be suspended: only user-space modules can be 'inactive'");
	bad("stream s kernel { kernel pass \"-v\" }",
	    "t.conf:1:31: asx.ko module 'pass' takes no parameters (a kernel Stream's modules are pushed as they are)");
	bad("stream s { static up inactive inactive }",
	    "t.conf:1:31: expected a module ('dynamic', 'static' or 'kernel'), 'suspend', 'resume', 'remove' or '}', found 'inactive'");
	bad("static a\ndynamic a Service_Object x.so:f()", "t.conf:2:1: 'a' is already configured at t.conf:1:1");
	bad("stream a { }\nstatic a", "t.conf:2:1: 'a' is already configured at t.conf:1:1");
	bad("static aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	    "t.conf:1:8: the name 'aaaaaaaaaaaaaaaaaaaa...' is 64 bytes long; at most 63 are allowed");
	bad("include", "t.conf:1:8: expected the file to include, in quotes, found the end of the file");
	bad("include \"/nonexistent/x.conf\"",
	    "t.conf:1:1: cannot include '/nonexistent/x.conf': No such file or directory");
	bad("include \"/\"", "t.conf:1:1: cannot include '/': not a regular file");
	{
		const char nul[] = "static a\0";
		struct asx__svc_conf *c;
		struct asx__svc_err e;

		assert_int_equal(asx__svc_parse_mem("t.conf", nul, sizeof(nul) - 1, &c, &e), -EINVAL);
		assert_string_equal(e.msg, "t.conf:1:1: the file holds a NUL byte (not a text file?)");
	}
	bad("suspend \"S\"", "t.conf:1:9: expected the name of a service, or STREAM/MODULE, found a quoted string");
	bad("suspend S/", "t.conf:1:9: expected STREAM/MODULE (a stream's name, '/', the name of one of its modules), found 'S/'");
	bad("resume /m", "t.conf:1:8: expected STREAM/MODULE (a stream's name, '/', the name of one of its modules), found '/m'");
	bad("suspend 9S/m",
	    "t.conf:1:9: '9S' is not a valid name (a letter or '_', then letters, digits, '_', '.' or '-')");
	bad("resume S/a/b",
	    "t.conf:1:10: 'a/b' is not a valid name (a letter or '_', then letters, digits, '_', '.' or '-')");
	bad("remove S/m",
	    "t.conf:1:8: 'remove' takes the name of a service, not a module: to take a module out of a stream, define the stream without it");
	bad("static a inactive active", "t.conf:1:19: expected a directive (dynamic, static, remove, suspend, resume, stream, mux, link or include), found 'active'");
	/* remove / suspend / resume may name what is configured */
	asx__svc_conf_free(ok("static a\nsuspend a\nresume a\nremove a"));
	/* a 63-byte name is fine */
	asx__svc_conf_free(ok("static aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

/* suspend/resume STREAM/MODULE, and a static service started suspended */
static void test_module_targets(void **state)
{
	struct asx__svc_conf *c;
	const struct asx__svc_ent *e;

	(void)state;
	c = ok("stream S { static a }\nsuspend S/a\n  resume S.x/b-2\nsuspend T\n"
	       "static U inactive \"-x\"\nstatic V active\n");
	e = c->head;
	assert_string_equal(e->mod, "");
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_SUSPEND);
	assert_string_equal(e->name, "S");
	assert_string_equal(e->mod, "a");
	assert_int_equal(e->loc.line, 2);
	assert_int_equal(e->loc.col, 1);
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_RESUME);
	assert_string_equal(e->name, "S.x");
	assert_string_equal(e->mod, "b-2");
	assert_int_equal(e->loc.col, 3);
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_SUSPEND);
	assert_string_equal(e->name, "T");
	assert_string_equal(e->mod, "");
	e = e->next;
	assert_int_equal(e->dir, ASX__SVC_STATIC);
	assert_true(e->inactive);
	assert_string_equal(e->args, "-x");
	e = e->next;
	assert_false(e->inactive);
	assert_null(e->args);
	assert_null(e->next);
	asx__svc_conf_free(c);
}

static char dir[] = "/tmp/asx-svc-conf-XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void test_includes(void **state)
{
	struct asx__svc_conf *c;
	struct asx__svc_err e;
	char path[256], want[512];

	(void)state;
	strcpy(dir, "/tmp/asx-svc-conf-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(mkdir(strcat(strcpy(path, dir), "/sub"), 0700), 0);
	put("main.conf", "static first\ninclude \"sub/a.conf\"\nstatic last\n");
	put("sub/a.conf", "# relative to sub/\ninclude \"b.conf\"\nstatic a\n");
	put("sub/b.conf", "static b\n");
	snprintf(path, sizeof(path), "%s/main.conf", dir);
	assert_int_equal(asx__svc_parse_file(path, &c, &e), 0);
	assert_int_equal(c->n, 4);
	assert_string_equal(c->head->name, "first");
	assert_string_equal(c->head->next->name, "b");
	assert_int_equal(c->head->next->loc.line, 1);
	assert_non_null(strstr(c->head->next->loc.file, "sub/b.conf"));
	assert_string_equal(c->head->next->next->name, "a");
	assert_int_equal(c->head->next->next->loc.line, 3);
	assert_string_equal(c->head->next->next->next->name, "last");
	assert_int_equal(c->nfiles, 3);
	asx__svc_conf_free(c);

	/* an error in an included file is reported there */
	put("sub/b.conf", "static b\nstatic {\n");
	assert_int_equal(asx__svc_parse_file(path, &c, &e), -EINVAL);
	assert_null(c);
	snprintf(want, sizeof(want),
		 "%s/sub/b.conf:2:8: expected a service name after 'static', found '{'", dir);
	assert_string_equal(e.msg, want);

	/* a definition in an include clashing with one before it */
	put("sub/b.conf", "static first\n");
	assert_int_equal(asx__svc_parse_file(path, &c, &e), -EINVAL);
	snprintf(want, sizeof(want), "%s/sub/b.conf:1:1: 'first' is already configured at %s:1:1",
		 dir, path);
	assert_string_equal(e.msg, want);

	/* a cycle, through a different spelling of the same file */
	put("sub/b.conf", "include \"../main.conf\"\n");
	assert_int_equal(asx__svc_parse_file(path, &c, &e), -ELOOP);
	snprintf(want, sizeof(want),
		 "%s/sub/b.conf:1:1: '../main.conf' includes itself (it is already being read)", dir);
	assert_string_equal(e.msg, want);

	/*
	 * depth: a file including itself under another name each time.  The
	 * top file and ASX__SVC_INCLUDE_DEPTH nested includes are fine...
	 */
	for (int i = 0; i < ASX__SVC_INCLUDE_DEPTH + 2; i++) {
		char name[32], text[64];

		snprintf(name, sizeof(name), "d%d.conf", i);
		if (i == ASX__SVC_INCLUDE_DEPTH)
			snprintf(text, sizeof(text), "static deepest\n");
		else
			snprintf(text, sizeof(text), "include \"d%d.conf\"\n", i + 1);
		put(name, text);
	}
	snprintf(path, sizeof(path), "%s/d0.conf", dir);
	assert_int_equal(asx__svc_parse_file(path, &c, &e), 0);
	assert_int_equal(c->nfiles, ASX__SVC_INCLUDE_DEPTH + 1);
	assert_string_equal(c->head->name, "deepest");
	asx__svc_conf_free(c);
	/* ... one more is not */
	snprintf(want, sizeof(want), "include \"d%d.conf\"\n", ASX__SVC_INCLUDE_DEPTH + 1);
	snprintf(path, sizeof(path), "d%d.conf", ASX__SVC_INCLUDE_DEPTH);
	put(path, want);
	snprintf(path, sizeof(path), "%s/d0.conf", dir);
	assert_int_equal(asx__svc_parse_file(path, &c, &e), -ELOOP);
	snprintf(want, sizeof(want), "%s/d%d.conf:1:1: includes nest deeper than %d levels", dir,
		 ASX__SVC_INCLUDE_DEPTH, ASX__SVC_INCLUDE_DEPTH);
	assert_string_equal(e.msg, want);

	/* the top file missing: file:line:column too */
	snprintf(path, sizeof(path), "%s/none.conf", dir);
	assert_int_equal(asx__svc_parse_file(path, &c, &e), -ENOENT);
	snprintf(want, sizeof(want), "%s:1:1: No such file or directory", path);
	assert_string_equal(e.msg, want);

	/* too large: the top file, and an included one */
	{
		FILE *f;

		snprintf(path, sizeof(path), "%s/big.conf", dir);
		f = fopen(path, "w");
		assert_non_null(f);
		for (unsigned int i = 0; i <= ASX__SVC_FILE_MAX / 16; i++)
			fputs("# padding line.\n", f);	/* 16 bytes */
		fclose(f);
		assert_int_equal(asx__svc_parse_file(path, &c, &e), -EFBIG);
		snprintf(want, sizeof(want), "%s:1:1: %u bytes, more than the 1048576 a file may have",
			 path, ASX__SVC_FILE_MAX + 16);
		assert_string_equal(e.msg, want);
		put("inc-big.conf", "static x\n  include \"big.conf\"\n");
		snprintf(path, sizeof(path), "%s/inc-big.conf", dir);
		assert_int_equal(asx__svc_parse_file(path, &c, &e), -EFBIG);
		snprintf(want, sizeof(want),
			 "%s:2:3: cannot include 'big.conf': %u bytes, more than the 1048576 a file may have",
			 path, ASX__SVC_FILE_MAX + 16);
		assert_string_equal(e.msg, want);
	}
	assert_int_equal(system(strcat(strcpy(want, "rm -rf "), dir)), 0);
}

static void test_split_args(void **state)
{
	char **v;
	int n;

	(void)state;
	assert_int_equal(asx__svc_split_args("svc", "  -p 2010\t-n 'a b' x'y z'w ''  ", &n, &v), 0);
	assert_int_equal(n, 7);
	assert_string_equal(v[0], "svc");
	assert_string_equal(v[1], "-p");
	assert_string_equal(v[2], "2010");
	assert_string_equal(v[3], "-n");
	assert_string_equal(v[4], "a b");
	assert_string_equal(v[5], "xy zw");
	assert_string_equal(v[6], "");
	assert_null(v[7]);
	free(v);
	assert_int_equal(asx__svc_split_args("svc", NULL, &n, &v), 0);
	assert_int_equal(n, 1);
	assert_null(v[1]);
	free(v);
	assert_int_equal(asx__svc_split_args("svc", "a b c d e f g", &n, &v), 0);
	assert_int_equal(n, 8);
	free(v);
	assert_int_equal(asx__svc_split_args("svc", "a 'b", &n, &v), -EINVAL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A FIFO, as the top file or included: refused at once, never opened blocking. */
static void test_not_regular(void **state)
{
	struct asx__svc_conf *c;
	struct asx__svc_err e;
	char path[256], want[512];

	(void)state;
	alarm(30);	/* the watchdog: the blocking open of a FIFO never returned */
	strcpy(dir, "/tmp/asx-svc-conf-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/p.fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(asx__svc_parse_file(path, &c, &e), -EINVAL);
	snprintf(want, sizeof(want), "%s:1:1: not a regular file", path);
	assert_string_equal(e.msg, want);
	put("main.conf", "static a\ninclude \"p.fifo\"\n");
	snprintf(path, sizeof(path), "%s/main.conf", dir);
	assert_int_equal(asx__svc_parse_file(path, &c, &e), -EINVAL);
	snprintf(want, sizeof(want), "%s:2:1: cannot include 'p.fifo': not a regular file", path);
	assert_string_equal(e.msg, want);
	/* a directory, a character device */
	assert_int_equal(asx__svc_parse_file(dir, &c, &e), -EINVAL);
	assert_int_equal(asx__svc_parse_file("/dev/null", &c, &e), -EINVAL);
	assert_string_equal(e.msg, "/dev/null:1:1: not a regular file");
	alarm(0);
	assert_int_equal(system(strcat(strcpy(want, "rm -rf "), dir)), 0);
}

/*
 * The include bomb: 5 small files, each including the next 64 times (16.7
 * million reads unbounded).  The whole load is bounded: at most
 * ASX__SVC_INCLUDES_MAX includes, ASX__SVC_TOTAL_MAX bytes.
 */
static void test_bounds(void **state)
{
	struct asx__svc_conf *c;
	struct asx__svc_err e;
	char path[256], want[512], *text;
	double t0;

	(void)state;
	alarm(60);
	strcpy(dir, "/tmp/asx-svc-conf-XXXXXX");
	assert_non_null(mkdtemp(dir));
	text = malloc(64 * 32 + 1);
	assert_non_null(text);
	for (int f = 0; f < 5; f++) {
		char name[16];

		text[0] = '\0';
		for (int i = 0; i < 64; i++)
			snprintf(text + strlen(text), 32, f < 4 ? "include \"b%d.conf\"\n" : "# %d\n",
				 f + 1);
		snprintf(name, sizeof(name), "b%d.conf", f & 7);
		put(name, text);
	}
	free(text);
	snprintf(path, sizeof(path), "%s/b0.conf", dir);
	t0 = now();
	assert_int_equal(asx__svc_parse_file(path, &c, &e), -E2BIG);
	print_message("include bomb refused in %.3f s: %s\n", now() - t0, e.msg);
	/*
	 * Include 1025: after b0->b1 and b1->b2, groups of 65 (b2->b3, then
	 * b3->b4 64 times): 1023 = 15 * 65 + 48, the 47th include of b3's 16th
	 * reading.
	 */
	snprintf(want, sizeof(want),
		 "%s/b3.conf:47:1: more than %d includes in one configuration (repeats count each time)",
		 dir, ASX__SVC_INCLUDES_MAX);
	assert_string_equal(e.msg, want);

	/* ASX__SVC_INCLUDES_MAX distinct includes are fine, one more is not */
	{
		size_t n = ASX__SVC_INCLUDES_MAX;
		char *big = malloc(n * 24 + 32);
		size_t len = 0;

		assert_non_null(big);
		put("leaf.conf", "# nothing\n");
		for (size_t i = 0; i < n; i++)
			len += (size_t)sprintf(big + len, "include \"leaf.conf\"\n");
		put("many.conf", big);
		snprintf(path, sizeof(path), "%s/many.conf", dir);
		assert_int_equal(asx__svc_parse_file(path, &c, &e), 0);
		assert_int_equal(c->nfiles, n + 1);
		asx__svc_conf_free(c);
		strcpy(big + len, "static x include \"leaf.conf\"\n");
		put("many.conf", big);
		assert_int_equal(asx__svc_parse_file(path, &c, &e), -E2BIG);
		snprintf(want, sizeof(want),
			 "%s:%zu:10: more than %d includes in one configuration (repeats count each time)",
			 path, n + 1, ASX__SVC_INCLUDES_MAX);
		assert_string_equal(e.msg, want);
		free(big);
	}

	/* bytes: files of almost 1 MiB each, until the load has read 4 MiB */
	{
		FILE *f;

		snprintf(path, sizeof(path), "%s/mb.conf", dir);
		f = fopen(path, "w");
		assert_non_null(f);
		for (unsigned int i = 0; i < ASX__SVC_FILE_MAX / 16 - 1; i++)
			fputs("# padding line.\n", f);	/* 16 bytes */
		fclose(f);
		put("four.conf", "include \"mb.conf\"\ninclude \"mb.conf\"\ninclude \"mb.conf\"\n"
		    "include \"mb.conf\"\n");
		snprintf(path, sizeof(path), "%s/four.conf", dir);
		assert_int_equal(asx__svc_parse_file(path, &c, &e), -EFBIG);
		snprintf(want, sizeof(want),
			 "%s:4:1: cannot include 'mb.conf': its %u bytes would make the configuration more than the %u bytes one load may read in all",
			 path, ASX__SVC_FILE_MAX - 16, ASX__SVC_TOTAL_MAX);
		assert_string_equal(e.msg, want);
	}
	alarm(0);
	assert_int_equal(system(strcat(strcpy(want, "rm -rf "), dir)), 0);
}

/*
 * Linear: a file at the 1 MiB limit, ~75,000 directives (21 s for 40,000
 * when every directive walked the list), and one Stream of ~80,000 Modules.
 * The bound is generous for a loaded machine or a sanitizer; a quadratic
 * parser takes minutes.
 */
static void test_linear(void **state)
{
	size_t cap = ASX__SVC_FILE_MAX, len = 0, n = 0;
	char *text = malloc(cap + 64);
	struct asx__svc_conf *c;
	struct asx__svc_err e;
	double t0, t;

	(void)state;
	assert_non_null(text);
	alarm(120);
	while (len + 16 < cap)
		len += (size_t)sprintf(text + len, "static s%zu\n", n++);
	t0 = now();
	assert_int_equal(asx__svc_parse_mem("big.conf", text, len, &c, &e), 0);
	t = now() - t0;
	assert_int_equal(c->n, n);
	asx__svc_conf_free(c);
	print_message("%zu directives (%zu bytes) parsed in %.3f s\n", n, len, t);
	assert_true(t < 10.0);

	len = (size_t)sprintf(text, "stream S {\n");
	n = 0;
	while (len + 20 < cap)
		len += (size_t)sprintf(text + len, "static m%zu\n", n++);
	len += (size_t)sprintf(text + len, "}\n");
	t0 = now();
	assert_int_equal(asx__svc_parse_mem("big.conf", text, len, &c, &e), 0);
	t = now() - t0;
	assert_int_equal(c->head->nmods, n);
	asx__svc_conf_free(c);
	print_message("a Stream of %zu modules parsed in %.3f s\n", n, t);
	assert_true(t < 10.0);
	/* a duplicate at the end is still found, with the first one's line */
	len -= 2;
	len += (size_t)sprintf(text + len, "static m7\n}\n");
	assert_int_equal(asx__svc_parse_mem("big.conf", text, len, &c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "module 'm7' is already in Stream 'S' (at line 9)"));
	alarm(0);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_directive),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_module_targets),
		cmocka_unit_test(test_includes),
		cmocka_unit_test(test_split_args),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_linear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
