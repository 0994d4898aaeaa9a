// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * conf.c - the svc.conf lexer and recursive-descent parser (see conf.h and
 * the grammar in Documentation/svc.rst).
 *
 * Tokens: words (names, paths, keywords: a run of bytes that are not
 * blank, not a control character and none of  { } ( ) : * " # ),
 * double-quoted strings (escapes \\ \" \n \t), and the punctuation
 * { } ( ) : *.  A # starts a comment that runs to the end of the line.
 * The first error stops the parse; the partial result is freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "svc/conf.h"

enum { T_EOF = 0, T_WORD = 'w', T_STRING = 's' };

struct tok {
	int kind;		/* T_*, or the punctuation character */
	const char *p;		/* the word's bytes in the text */
	size_t n;
	char *str;		/* T_STRING: unescaped, NUL-terminated */
	unsigned int line, col;
};

struct parser {
	struct asx__svc_conf *conf;
	struct asx__svc_err *err;
	const char *file;	/* the name in messages (conf-owned) */
	const char *s;
	size_t len, pos;
	unsigned int line, col;
	struct tok t;		/* the current token */
	int depth;
	const char **chain;	/* the files being read, outermost first */
};

static int fail(struct parser *ps, unsigned int line, unsigned int col, int err,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail(struct parser *ps, unsigned int line, unsigned int col, int err,
		const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->err->err)
		return ps->err->err;	/* the first error is the one reported */
	n = snprintf(ps->err->msg, sizeof(ps->err->msg), "%s:%u:%u: ", ps->file, line, col);
	if (n < 0 || (size_t)n >= sizeof(ps->err->msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(ps->err->msg + n, sizeof(ps->err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	ps->err->err = err;
	return err;
}

/* ---------------------------------------------------------------- lexer */

static bool word_byte(unsigned char c)
{
	return c > ' ' && c != 0x7f && !strchr("{}():*\"#", c);
}

static int peekc(const struct parser *ps)
{
	return ps->pos < ps->len ? (unsigned char)ps->s[ps->pos] : -1;
}

static void advance(struct parser *ps)
{
	if (ps->s[ps->pos++] == '\n') {
		ps->line++;
		ps->col = 1;
	} else {
		ps->col++;
	}
}

static int lex_string(struct parser *ps)
{
	unsigned int line = ps->line, col = ps->col;
	size_t start, n = 0;
	char *out;

	advance(ps);		/* the opening quote */
	start = ps->pos;
	/* the unescaped string is never longer than the quoted one */
	out = malloc(ps->len - start + 1);
	if (!out)
		return fail(ps, line, col, -ENOMEM, "out of memory");
	for (;;) {
		int c = peekc(ps);

		if (c < 0 || c == '\n') {
			free(out);
			return fail(ps, line, col, -EINVAL,
				    "unterminated string (no closing '\"' on this line)");
		}
		if (c == '"') {
			advance(ps);
			break;
		}
		if (c == '\\') {
			unsigned int el = ps->line, ec = ps->col;

			advance(ps);
			c = peekc(ps);
			switch (c) {
			case '\\': case '"': break;
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			default:
				free(out);
				if (c < 0 || c == '\n')
					return fail(ps, line, col, -EINVAL,
						    "unterminated string (no closing '\"' on this line)");
				return fail(ps, el, ec, -EINVAL,
					    "unknown escape '\\%c' in a string (known: \\\\ \\\" \\n \\t)",
					    c >= ' ' && c < 0x7f ? c : '?');
			}
		} else if (c == 0) {
			free(out);
			return fail(ps, ps->line, ps->col, -EINVAL, "a NUL byte in a string");
		}
		out[n++] = (char)c;
		advance(ps);
	}
	out[n] = '\0';
	ps->t.kind = T_STRING;
	ps->t.str = out;
	ps->t.p = ps->s + start - 1;
	ps->t.n = ps->pos - start + 1;
	ps->t.line = line;
	ps->t.col = col;
	return 0;
}

/* Move to the next token (freeing the current one's string). */
static int next(struct parser *ps)
{
	int c;

	free(ps->t.str);
	ps->t.str = NULL;
	for (;;) {
		c = peekc(ps);
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
			advance(ps);
		} else if (c == '#') {
			while (peekc(ps) >= 0 && peekc(ps) != '\n')
				advance(ps);
		} else {
			break;
		}
	}
	ps->t.line = ps->line;
	ps->t.col = ps->col;
	ps->t.p = ps->s + ps->pos;
	ps->t.n = 0;
	if (c < 0) {
		ps->t.kind = T_EOF;
		return 0;
	}
	if (c == '"')
		return lex_string(ps);
	if (strchr("{}():*", c)) {
		ps->t.kind = c;
		ps->t.n = 1;
		advance(ps);
		return 0;
	}
	if (!word_byte((unsigned char)c))
		return fail(ps, ps->line, ps->col, -EINVAL,
			    "unexpected character 0x%02x", (unsigned int)c);
	while (peekc(ps) >= 0 && word_byte((unsigned char)peekc(ps)))
		advance(ps);
	ps->t.kind = T_WORD;
	ps->t.n = (size_t)(ps->s + ps->pos - ps->t.p);
	return 0;
}

/* How the current token reads in a message ("'{'", "end of file", ...). */
static const char *what(const struct parser *ps, char *buf, size_t n)
{
	switch (ps->t.kind) {
	case T_EOF:
		return "the end of the file";
	case T_STRING:
		return "a quoted string";
	case T_WORD:
		if (ps->t.n > 40)
			snprintf(buf, n, "'%.37s...'", ps->t.p);
		else
			snprintf(buf, n, "'%.*s'", (int)ps->t.n, ps->t.p);
		return buf;
	default:
		snprintf(buf, n, "'%c'", ps->t.kind);
		return buf;
	}
}

static int expected(struct parser *ps, const char *thing)
{
	char b[48];

	return fail(ps, ps->t.line, ps->t.col, -EINVAL, "expected %s, found %s", thing,
		    what(ps, b, sizeof(b)));
}

static bool is_word(const struct parser *ps, const char *w)
{
	return ps->t.kind == T_WORD && ps->t.n == strlen(w) && !memcmp(ps->t.p, w, ps->t.n);
}

/* ---------------------------------------------------------------- parser */

/* Is @p[0..n) a name: a letter or '_', then letters, digits, '_', '.' or '-'? */
static bool valid_name(const char *p, size_t n)
{
	if (!n || !((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_'))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = p[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

/* Check @n bytes at @p as a name (reported at @col) and copy them to @out. */
static int copy_name(struct parser *ps, const char *p, size_t n, unsigned int col, char *out)
{
	if (!valid_name(p, n))
		return fail(ps, ps->t.line, col, -EINVAL,
			    "'%.*s' is not a valid name (a letter or '_', then letters, digits, '_', '.' or '-')",
			    (int)(n > 40 ? 40 : n), p);
	if (n >= ASX__SVC_NAME_MAX)
		return fail(ps, ps->t.line, col, -EINVAL,
			    "the name '%.20s...' is %zu bytes long; at most %d are allowed",
			    p, n, ASX__SVC_NAME_MAX - 1);
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

static int take_name(struct parser *ps, const char *thing, char *out)
{
	int r;

	if (ps->t.kind != T_WORD)
		return expected(ps, thing);
	r = copy_name(ps, ps->t.p, ps->t.n, ps->t.col, out);
	return r ? r : next(ps);
}

/*
 * The target of suspend/resume: a service NAME, or STREAM/MODULE, one
 * Module of a Stream (@mod gets the Module's name, "" for a service).
 */
static int take_target(struct parser *ps, char *name, char *mod)
{
	const char *slash = ps->t.kind == T_WORD ? memchr(ps->t.p, '/', ps->t.n) : NULL;
	size_t n;
	int r;

	mod[0] = '\0';
	if (!slash)
		return take_name(ps, "the name of a service, or STREAM/MODULE", name);
	n = (size_t)(slash - ps->t.p);
	if (!n || n + 1 == ps->t.n)
		return expected(ps, "STREAM/MODULE (a stream's name, '/', the name of one of its modules)");
	r = copy_name(ps, ps->t.p, n, ps->t.col, name);
	if (!r)
		r = copy_name(ps, slash + 1, ps->t.n - n - 1, ps->t.col + (unsigned int)n + 1, mod);
	return r ? r : next(ps);
}

/* A word or a quoted string, copied. */
static int take_text(struct parser *ps, const char *thing, char **out)
{
	if (ps->t.kind == T_STRING) {
		*out = ps->t.str;
		ps->t.str = NULL;
	} else if (ps->t.kind == T_WORD) {
		*out = strndup(ps->t.p, ps->t.n);
	} else {
		return expected(ps, thing);
	}
	if (!*out)
		return fail(ps, ps->t.line, ps->t.col, -ENOMEM, "out of memory");
	return next(ps);
}

static int take_punct(struct parser *ps, int c, const char *thing)
{
	if (ps->t.kind != c)
		return expected(ps, thing);
	return next(ps);
}

/* An optional quoted parameter string. */
static int take_args(struct parser *ps, struct asx__svc_ent *e)
{
	if (ps->t.kind != T_STRING)
		return 0;
	e->args = ps->t.str;
	ps->t.str = NULL;
	return next(ps);
}

/* An optional "active" or "inactive" (starts suspended). */
static int take_state(struct parser *ps, struct asx__svc_ent *e)
{
	if (!is_word(ps, "active") && !is_word(ps, "inactive"))
		return 0;
	e->inactive = is_word(ps, "inactive");
	return next(ps);
}

static bool c_identifier(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* dynamic NAME TYPE [*] PATH : FACTORY ( ) [active|inactive] ["args"] */
static int parse_dynamic(struct parser *ps, struct asx__svc_ent *e, bool in_stream)
{
	unsigned int line, col;
	int r;

	e->dir = ASX__SVC_DYNAMIC;
	r = take_name(ps, "a service name after 'dynamic'", e->name);
	if (r)
		return r;
	if (is_word(ps, "Service_Object") && !in_stream) {
		e->type = ASX__SVC_T_OBJECT;
	} else if (is_word(ps, "Module") && in_stream) {
		e->type = ASX__SVC_T_MODULE;
	} else if (is_word(ps, "Module")) {
		return fail(ps, ps->t.line, ps->t.col, -EINVAL,
			    "a Module runs in a Stream: make '%s' an entry of 'stream NAME { ... }'",
			    e->name);
	} else {
		return expected(ps, in_stream ? "'Module' (a Stream holds Modules)" :
				"the service's type, 'Service_Object'");
	}
	r = next(ps);
	if (!r && ps->t.kind == '*')
		r = next(ps);
	if (!r)
		r = take_text(ps, "the shared object's path (as in lib.so:factory())", &e->path);
	if (!r)
		r = take_punct(ps, ':', "':' and the factory function after the shared object's path");
	if (r)
		return r;
	line = ps->t.line;
	col = ps->t.col;
	r = take_text(ps, "the factory function's name after ':'", &e->factory);
	if (r)
		return r;
	if (!c_identifier(e->factory))
		return fail(ps, line, col, -EINVAL,
			    "the factory '%.40s' is not a C identifier", e->factory);
	r = take_punct(ps, '(', "'()' after the factory function's name");
	if (!r)
		r = take_punct(ps, ')', "')' (a factory takes no arguments here: its parameters go in a quoted string)");
	if (r)
		return r;
	r = take_state(ps, e);
	return r ? r : take_args(ps, e);
}

static struct asx__svc_ent *new_ent(struct parser *ps)
{
	struct asx__svc_ent *e = calloc(1, sizeof(*e));

	if (!e) {
		fail(ps, ps->t.line, ps->t.col, -ENOMEM, "out of memory");
		return NULL;
	}
	e->loc.file = ps->file;
	e->loc.line = ps->t.line;
	e->loc.col = ps->t.col;
	return e;
}

static void free_ent(struct asx__svc_ent *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nmods; i++) {
		free(e->mods[i].path);
		free(e->mods[i].factory);
		free(e->mods[i].args);
	}
	free(e->mods);
	free(e->path);
	free(e->factory);
	free(e->args);
	free(e->driver);
	free(e);
}

/* stream NAME [kernel ["driver"]] { entry... } */
static int parse_stream(struct parser *ps, struct asx__svc_ent *s)
{
	size_t user = SIZE_MAX;		/* the first user-space module */
	int r;

	s->dir = ASX__SVC_STREAM;
	r = take_name(ps, "a Stream name after 'stream'", s->name);
	if (r)
		return r;
	if (is_word(ps, "kernel")) {
		s->kernel = true;
		r = next(ps);
		if (!r && ps->t.kind == T_STRING)
			r = take_text(ps, "", &s->driver);
		if (r)
			return r;
	}
	r = take_punct(ps, '{', s->kernel ? "'{' and the Stream's modules" :
		       "'{' and the Stream's modules (or 'kernel' for a Stream over asx.ko)");
	if (r)
		return r;
	while (ps->t.kind != '}') {
		struct asx__svc_ent m = { .loc = { ps->file, ps->t.line, ps->t.col } };
		struct asx__svc_ent *grown;

		if (ps->t.kind == T_EOF)
			return fail(ps, s->loc.line, s->loc.col, -EINVAL,
				    "Stream '%s' has no closing '}'", s->name);

		if (is_word(ps, "dynamic")) {
			r = next(ps);
			if (!r)
				r = parse_dynamic(ps, &m, true);
		} else if (is_word(ps, "static") || is_word(ps, "kernel")) {
			m.dir = is_word(ps, "static") ? ASX__SVC_STATIC : ASX__SVC_KERNEL;
			if (m.dir == ASX__SVC_KERNEL && !s->kernel)
				return fail(ps, m.loc.line, m.loc.col, -EINVAL,
					    "a 'kernel' module needs a kernel Stream: write 'stream %s kernel { ... }'",
					    s->name);
			r = next(ps);
			if (!r)
				r = take_name(ps, m.dir == ASX__SVC_KERNEL ?
					      "an asx.ko module's name after 'kernel'" :
					      "a module name after 'static'", m.name);
			if (!r && m.dir == ASX__SVC_KERNEL &&
			    (is_word(ps, "active") || is_word(ps, "inactive")))
				r = fail(ps, ps->t.line, ps->t.col, -EINVAL,
					 "asx.ko module '%s' cannot be suspended: only user-space modules can be 'inactive'",
					 m.name);
			if (!r && m.dir == ASX__SVC_KERNEL && ps->t.kind == T_STRING)
				r = fail(ps, ps->t.line, ps->t.col, -EINVAL,
					 "asx.ko module '%s' takes no parameters (a kernel Stream's modules are pushed as they are)",
					 m.name);
			if (!r)
				r = take_state(ps, &m);
			if (!r)
				r = take_args(ps, &m);
		} else {
			return expected(ps, "a module ('dynamic', 'static' or 'kernel') or '}'");
		}
		if (r) {
			free(m.path);
			free(m.factory);
			free(m.args);
			return r;
		}
		for (size_t i = 0; i < s->nmods; i++)
			if (!strcmp(s->mods[i].name, m.name))
				r = fail(ps, m.loc.line, m.loc.col, -EINVAL,
					 "module '%s' is already in Stream '%s' (at line %u)",
					 m.name, s->name, s->mods[i].loc.line);
		if (!r && m.dir == ASX__SVC_KERNEL && user != SIZE_MAX)
			r = fail(ps, m.loc.line, m.loc.col, -EINVAL,
				 "kernel module '%s' cannot sit above user-space module '%s' (line %u): modules are listed bottom first, kernel ones first",
				 m.name, s->mods[user].name, s->mods[user].loc.line);
		grown = r ? NULL : realloc(s->mods, (s->nmods + 1) * sizeof(*s->mods));
		if (!grown) {
			free(m.path);
			free(m.factory);
			free(m.args);
			return r ? r : fail(ps, m.loc.line, m.loc.col, -ENOMEM, "out of memory");
		}
		s->mods = grown;
		if (m.dir != ASX__SVC_KERNEL && user == SIZE_MAX)
			user = s->nmods;
		s->mods[s->nmods++] = m;
	}
	return next(ps);
}

static int parse_text(struct parser *ps);

static int read_whole(const char *path, char **text, size_t *len, char *why, size_t n)
{
	struct stat st;
	ssize_t got;
	size_t have = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st)) {
		snprintf(why, n, "%s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, n, "not a regular file");
		close(fd);
		return -EINVAL;
	}
	if ((uintmax_t)st.st_size > ASX__SVC_FILE_MAX) {
		snprintf(why, n, "%jd bytes, more than the %u a file may have",
			 (intmax_t)st.st_size, ASX__SVC_FILE_MAX);
		close(fd);
		return -EFBIG;
	}
	*text = malloc((size_t)st.st_size + 1);
	if (!*text) {
		close(fd);
		snprintf(why, n, "out of memory");
		return -ENOMEM;
	}
	/* read to the end, not to st_size: the file may change under us */
	while ((got = read(fd, *text + have, (size_t)st.st_size + 1 - have)) > 0) {
		have += (size_t)got;
		if (have > (size_t)st.st_size) {
			snprintf(why, n, "the file grew while it was read");
			got = -1;
			errno = EAGAIN;
			break;
		}
	}
	close(fd);
	if (got < 0) {
		int e = errno;

		if (e != EAGAIN)
			snprintf(why, n, "%s", strerror(e));
		free(*text);
		return -e;
	}
	*len = have;
	return 0;
}

/* Remember @name as one of the conf's files; returns the conf's copy. */
static const char *keep_file(struct parser *ps, const char *name)
{
	char **grown = realloc(ps->conf->files, (ps->conf->nfiles + 1) * sizeof(char *));
	char *copy = strdup(name);

	if (grown)
		ps->conf->files = grown;
	if (!grown || !copy) {
		free(copy);
		return NULL;
	}
	ps->conf->files[ps->conf->nfiles++] = copy;
	return copy;
}

static int parse_one(struct parser *ps, const char *name, const char *text, size_t len)
{
	struct parser sub = {
		.conf = ps->conf, .err = ps->err, .s = text, .len = len, .line = 1, .col = 1,
		.depth = ps->depth + 1, .chain = ps->chain,
	};
	int r;

	sub.file = keep_file(ps, name);
	if (!sub.file)
		return fail(ps, ps->t.line, ps->t.col, -ENOMEM, "out of memory");
	ps->chain[sub.depth] = sub.file;
	r = next(&sub);
	if (!r)
		r = parse_text(&sub);
	free(sub.t.str);
	return r;
}

/* include "path": relative to the including file's directory */
static int parse_include(struct parser *ps, unsigned int line, unsigned int col)
{
	char *rel = NULL, *path = NULL, *text = NULL, why[160] = "";
	const char *slash = strrchr(ps->file, '/');
	size_t len;
	int r;

	r = take_text(ps, "the file to include, in quotes", &rel);
	if (r)
		goto out;	/* rel may be set: the next token was bad */
	if (rel[0] == '/' || !slash)
		path = strdup(rel);
	else if (asprintf(&path, "%.*s/%s", (int)(slash - ps->file), ps->file, rel) < 0)
		path = NULL;
	if (!path) {
		r = fail(ps, line, col, -ENOMEM, "out of memory");
		goto out;
	}
	if (ps->depth + 1 >= ASX__SVC_INCLUDE_DEPTH) {
		r = fail(ps, line, col, -ELOOP, "includes nest deeper than %d files",
			 ASX__SVC_INCLUDE_DEPTH);
		goto out;
	}
	for (int i = 0; i <= ps->depth; i++) {
		char a[PATH_MAX], b[PATH_MAX];

		if (!strcmp(ps->chain[i], path) ||
		    (realpath(ps->chain[i], a) && realpath(path, b) && !strcmp(a, b))) {
			r = fail(ps, line, col, -ELOOP,
				 "'%s' includes itself (it is already being read)", rel);
			goto out;
		}
	}
	r = read_whole(path, &text, &len, why, sizeof(why));
	if (r) {
		r = fail(ps, line, col, r, "cannot include '%s': %s", rel, why);
		goto out;
	}
	r = parse_one(ps, path, text, len);
out:
	free(text);
	free(path);
	free(rel);
	return r;
}

static const struct asx__svc_ent *find_def(const struct asx__svc_conf *c, const char *name)
{
	for (const struct asx__svc_ent *e = c->head; e; e = e->next)
		if ((e->dir == ASX__SVC_DYNAMIC || e->dir == ASX__SVC_STATIC ||
		     e->dir == ASX__SVC_STREAM) && !strcmp(e->name, name))
			return e;
	return NULL;
}

static void append(struct asx__svc_conf *c, struct asx__svc_ent *e)
{
	struct asx__svc_ent **pp = &c->head;

	while (*pp)
		pp = &(*pp)->next;
	*pp = e;
	c->n++;
}

static int parse_text(struct parser *ps)
{
	int r = 0;

	while (!r && ps->t.kind != T_EOF) {
		unsigned int line = ps->t.line, col = ps->t.col;
		struct asx__svc_ent *e;
		const struct asx__svc_ent *prev;

		if (is_word(ps, "include")) {
			r = next(ps);
			if (!r)
				r = parse_include(ps, line, col);
			continue;
		}
		e = new_ent(ps);
		if (!e)
			return ps->err->err;
		if (is_word(ps, "dynamic")) {
			r = next(ps);
			if (!r)
				r = parse_dynamic(ps, e, false);
		} else if (is_word(ps, "static")) {
			e->dir = ASX__SVC_STATIC;
			r = next(ps);
			if (!r)
				r = take_name(ps, "a service name after 'static'", e->name);
			if (!r)
				r = take_state(ps, e);
			if (!r)
				r = take_args(ps, e);
		} else if (is_word(ps, "remove")) {
			e->dir = ASX__SVC_REMOVE;
			r = next(ps);
			if (!r && ps->t.kind == T_WORD && memchr(ps->t.p, '/', ps->t.n))
				r = fail(ps, ps->t.line, ps->t.col, -EINVAL,
					 "'remove' takes the name of a service, not a module: to take a module out of a stream, define the stream without it");
			if (!r)
				r = take_name(ps, "the name of a service", e->name);
		} else if (is_word(ps, "suspend") || is_word(ps, "resume")) {
			e->dir = is_word(ps, "suspend") ? ASX__SVC_SUSPEND : ASX__SVC_RESUME;
			r = next(ps);
			if (!r)
				r = take_target(ps, e->name, e->mod);
		} else if (is_word(ps, "stream")) {
			r = next(ps);
			if (!r)
				r = parse_stream(ps, e);
		} else {
			r = expected(ps, "a directive (dynamic, static, remove, suspend, resume, stream or include)");
		}
		prev = r ? NULL : find_def(ps->conf, e->name);
		if (prev && e->dir != ASX__SVC_REMOVE && e->dir != ASX__SVC_SUSPEND &&
		    e->dir != ASX__SVC_RESUME)
			r = fail(ps, line, col, -EINVAL, "'%s' is already configured at %s:%u:%u",
				 e->name, prev->loc.file, prev->loc.line, prev->loc.col);
		if (r) {
			free_ent(e);
			return r;
		}
		append(ps->conf, e);
	}
	return r;
}

void asx__svc_conf_free(struct asx__svc_conf *conf)
{
	if (!conf)
		return;
	while (conf->head) {
		struct asx__svc_ent *e = conf->head;

		conf->head = e->next;
		free_ent(e);
	}
	for (size_t i = 0; i < conf->nfiles; i++)
		free(conf->files[i]);
	free(conf->files);
	free(conf);
}

int asx__svc_parse_mem(const char *name, const char *text, size_t len,
		       struct asx__svc_conf **out, struct asx__svc_err *err)
{
	const char *chain[ASX__SVC_INCLUDE_DEPTH];
	struct asx__svc_err dummy;
	struct parser top = { .file = name, .depth = -1, .chain = chain };
	int r;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	if (!out || !name || (!text && len))
		return -EINVAL;
	*out = NULL;
	top.err = err;
	top.conf = calloc(1, sizeof(*top.conf));
	if (!top.conf)
		return -ENOMEM;
	if (len > ASX__SVC_FILE_MAX)
		r = fail(&top, 1, 1, -EFBIG, "%zu bytes, more than the %u a file may have",
			 len, ASX__SVC_FILE_MAX);
	else if (len && memchr(text, '\0', len))
		r = fail(&top, 1, 1, -EINVAL, "the file holds a NUL byte (not a text file?)");
	else
		r = parse_one(&top, name, text, len);
	if (r) {
		asx__svc_conf_free(top.conf);
		return r;
	}
	*out = top.conf;
	return 0;
}

int asx__svc_parse_file(const char *path, struct asx__svc_conf **out,
			struct asx__svc_err *err)
{
	struct asx__svc_err dummy;
	char *text = NULL, why[160] = "";
	size_t len = 0;
	int r;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	if (!out || !path)
		return -EINVAL;
	*out = NULL;
	r = read_whole(path, &text, &len, why, sizeof(why));
	if (r) {
		snprintf(err->msg, sizeof(err->msg), "%s: %s", path, why);
		err->err = r;
		return r;
	}
	r = asx__svc_parse_mem(path, text, len, out, err);
	free(text);
	return r;
}

int asx__svc_split_args(const char *argv0, const char *args, int *argc, char ***argv)
{
	size_t n = args ? strlen(args) : 0, words = 1, a0 = strlen(argv0);
	char **v, *buf, *o;
	const char *p;
	int i = 0;

	/* at most one word per two bytes, plus argv0 and the NULL */
	words += n / 2 + 2;
	v = malloc(words * sizeof(char *) + a0 + 1 + n + 1);
	if (!v)
		return -ENOMEM;
	buf = (char *)(v + words);
	memcpy(buf, argv0, a0 + 1);
	v[i++] = buf;
	o = buf + a0 + 1;
	for (p = args; p && *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		v[i++] = o;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			if (*p == '\'') {
				const char *end = strchr(p + 1, '\'');

				if (!end) {
					free(v);
					return -EINVAL;
				}
				memcpy(o, p + 1, (size_t)(end - p - 1));
				o += end - p - 1;
				p = end + 1;
			} else {
				*o++ = *p++;
			}
		}
		*o++ = '\0';
	}
	v[i] = NULL;
	*argc = i;
	*argv = v;
	return 0;
}
