// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_svc_ace.c - ACE's svc.conf, read by ASX: every file of
 * lib/tests/svc/ace/ is a form ACE 7 accepts, and says on its first lines
 * what ASX must make of it:
 *
 *	# expect: ok: PLAN	it parses, and its directives render as PLAN
 *	# expect: error: MSG	it does not parse, with exactly MSG
 *	# apply: ok | MSG	(optional) asx_svc_check() on an empty
 *				repository passes, or fails with exactly MSG
 *
 * PLAN is the directives in order, " | " between them (render() below).
 * A missing directory or a file without "# expect:" fails the test.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/svc.h>

#include "svc/conf.h"

struct out {
	char s[2048];
	size_t n;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(o->s + o->n, sizeof(o->s) - o->n, fmt, ap);
	va_end(ap);
	assert_true(k >= 0 && (size_t)k < sizeof(o->s) - o->n);
	o->n += (size_t)k;
}

/* One directive (or one module of a Stream) as PLAN spells it. */
static void render_one(struct out *o, const struct asx__svc_ent *e)
{
	switch (e->dir) {
	case ASX__SVC_DYNAMIC:
		put(o, "dynamic %s %s %s:%s()", e->name,
		    e->type == ASX__SVC_T_MODULE ? "module" : "object", e->path, e->factory);
		break;
	case ASX__SVC_STATIC:
		put(o, "static %s", e->name);
		break;
	case ASX__SVC_KERNEL:
		put(o, "kernel %s", e->name);
		break;
	case ASX__SVC_REMOVE:
	case ASX__SVC_SUSPEND:
	case ASX__SVC_RESUME:
		put(o, "%s %s%s%s", e->dir == ASX__SVC_REMOVE ? "remove" :
		    e->dir == ASX__SVC_SUSPEND ? "suspend" : "resume", e->name,
		    e->mod[0] ? "/" : "", e->mod);
		return;
	case ASX__SVC_STREAM:
		put(o, "stream %s%s {", e->name, e->kernel ? " kernel" : "");
		for (size_t i = 0; i < e->nmods; i++) {
			put(o, i ? " ; " : " ");
			render_one(o, &e->mods[i]);
		}
		put(o, " }");
		return;
	case ASX__SVC_MUX:
	case ASX__SVC_LINK:	/* ASX's own: no ACE file has them */
		put(o, "%s %s", e->dir == ASX__SVC_MUX ? "mux" : "link", e->name);
		return;
	}
	if (e->inactive)
		put(o, " inactive");
	if (e->args)
		put(o, " args=[%s]", e->args);
}

static void render(struct out *o, const struct asx__svc_conf *c)
{
	for (const struct asx__svc_ent *e = c->head; e; e = e->next) {
		if (e != c->head)
			put(o, " | ");
		render_one(o, e);
	}
}

/* The text after "# @key: " on one of the file's first lines, or NULL. */
static char *header(const char *text, const char *key)
{
	char tag[32];
	const char *p, *end;

	snprintf(tag, sizeof(tag), "# %s: ", key);
	p = strstr(text, tag);
	if (!p)
		return NULL;
	p += strlen(tag);
	end = strchr(p, '\n');
	return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 16);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 16) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static const char *ace_dir(char *buf, size_t n)
{
	const char *env = getenv("ASX_ACE_CONF_DIR");
	const char *slash = strrchr(__FILE__, '/');

	if (env)
		return env;
	snprintf(buf, n, "%.*s/svc/ace", slash ? (int)(slash - __FILE__) : 1,
		 slash ? __FILE__ : ".");
	return buf;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_conf(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && !strcmp(d->d_name + n - 5, ".conf");
}

/* Check one file: 0 if it is as it says, else 1 (with what differed). */
static int check_file(const char *dir, const char *name)
{
	char path[PATH_MAX * 4], err[ASX__SVC_ERR_MAX + 64];
	struct asx__svc_conf *c = NULL;
	struct asx__svc_err e;
	struct out o = { .n = 0 };
	char *text, *want, *apply;
	int r, bad = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = slurp(path);
	want = header(text, "expect");
	apply = header(text, "apply");
	if (!want) {
		print_error("%s: no '# expect:' line\n", name);
		bad = 1;
		goto out;
	}
	/* messages name the file as it was given: parse it by its own name */
	r = asx__svc_parse_mem(name, text, strlen(text), &c, &e);
	if (r) {
		put(&o, "error: %s", e.msg);
	} else {
		put(&o, "ok: ");
		render(&o, c);
	}
	asx__svc_conf_free(c);
	if (strcmp(o.s, want)) {
		print_error("%s:\n  wanted %s\n     got %s\n", name, want, o.s);
		bad = 1;
	}
	if (apply) {
		struct asx_svc_repo *repo;
		char tmp[] = "/tmp/asx-ace-XXXXXX", file[PATH_MAX * 2];
		FILE *f;

		/* a copy under the file's own name: the message is "NAME:line:col" */
		assert_non_null(mkdtemp(tmp));
		snprintf(file, sizeof(file), "%s/%s", tmp, name);
		f = fopen(file, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
		assert_int_equal(asx_svc_repo_create(&repo), 0);
		assert_int_equal(chdir(tmp), 0);
		err[0] = '\0';
		r = asx_svc_check(repo, name, 0, err, sizeof(err));
		asx_svc_repo_destroy(repo);
		unlink(file);
		rmdir(tmp);
		if (strcmp(r ? err : "ok", apply)) {
			print_error("%s (applied):\n  wanted %s\n     got %s (%d)\n", name, apply,
				    r ? err : "ok", r);
			bad = 1;
		}
	}
out:
	free(apply);
	free(want);
	free(text);
	return bad;
}

static void test_ace_corpus(void **state)
{
	char buf[PATH_MAX], cwd[PATH_MAX];
	const char *dir = ace_dir(buf, sizeof(buf));
	struct dirent **names;
	int n, failed = 0;

	(void)state;
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	if (dir[0] != '/') {
		static char abs[PATH_MAX * 2];

		snprintf(abs, sizeof(abs), "%s/%s", cwd, dir);
		dir = abs;
	}
	n = scandir(dir, &names, is_conf, by_name);
	if (n < 0)
		fail_msg("cannot read %s: %s (run from the source tree, or set ASX_ACE_CONF_DIR)",
			 dir, strerror(errno));
	/* ACE 7's forms: at least the 22 of the issue */
	assert_true(n >= 22);
	for (int i = 0; i < n; i++) {
		failed += check_file(dir, names[i]->d_name);
		assert_int_equal(chdir(cwd), 0);
		free(names[i]);
	}
	free(names);
	if (failed)
		fail_msg("%d of %d ACE-form files are not read as they say", failed, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ace_corpus),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
