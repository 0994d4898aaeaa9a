// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * conf.c - the svc.conf lexer and recursive-descent parser (see conf.h and
 * the grammar in Documentation/svc.rst).
 *
 * Tokens: words (names, paths, keywords: a run of bytes that are not
 * blank, not a control character and none of  { } ( ) : * " # ),
 * strings in double or single quotes (read as ACE reads them: no escapes,
 * see lex_string()), and the punctuation
 * { } ( ) : *.  A # starts a comment that runs to the end of the line.
 * The first error stops the parse; the partial result is freed.
 *
 * The lowest file of lib/src/svc: it calls no other file of it.
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

#include <asx/addr.h>

#include "svc/conf.h"

enum { T_EOF = 0, T_WORD = 'w', T_STRING = 's' };

struct tok {
	int kind;		/* T_*, or the punctuation character */
	const char *p;		/* the word's bytes in the text */
	size_t n;
	char *str;		/* T_STRING: unescaped, NUL-terminated */
	unsigned int line, col;
};

/* What one load (a file and what it includes) shares. */
struct load {
	struct asx__svc_conf *conf;
	struct asx__svc_err *err;
	const struct asx__svc_io *io;
	struct asx__svc_ent **tail;	/* where the next directive goes */
	/* the definitions (dynamic, static, stream) by name */
	const struct asx__svc_ent **defv;
	size_t ndef, defcap;
	struct asx__svc_names defs;
	size_t bytes;			/* read, all files (ASX__SVC_TOTAL_MAX) */
	unsigned int includes;		/* followed (ASX__SVC_INCLUDES_MAX) */
	struct {			/* the files being read, outermost first */
		const char *name;
		unsigned long long id[2];
	} chain[ASX__SVC_INCLUDE_DEPTH + 1];
};

struct parser {
	struct load *ld;
	const char *file;	/* the name in messages (conf-owned) */
	const char *s;
	size_t len, pos;
	unsigned int line, col;
	struct tok t;		/* the current token */
	int depth;		/* 0: the top file */
};

static int fail(struct parser *ps, unsigned int line, unsigned int col, int err,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int fail(struct parser *ps, unsigned int line, unsigned int col, int err,
		const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->ld->err->err)
		return ps->ld->err->err;	/* the first error is the one reported */
	n = snprintf(ps->ld->err->msg, sizeof(ps->ld->err->msg), "%s:%u:%u: ", ps->file, line, col);
	if (n < 0 || (size_t)n >= sizeof(ps->ld->err->msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(ps->ld->err->msg + n, sizeof(ps->ld->err->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	ps->ld->err->err = err;
	return err;
}

int asx__svc_sayf(char *err, size_t errlen, const struct asx__svc_ent *e, int r,
		  const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err || !errlen)
		return r;
	if (e)
		n = snprintf(err, errlen, "%s:%u:%u: ", e->loc.file, e->loc.line, e->loc.col);
	if (n < 0 || (size_t)n >= errlen)
		n = 0;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return r;
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

/*
 * A string in @q quotes ('"' or '\''), read as ACE reads one: every byte
 * as it is (a backslash is an ordinary byte, so "C:\temp\new.log" is
 * that path), up to the closing quote on the same line; a quote right
 * after a backslash does not close the string and stays in it with the
 * backslash.
 */
static int lex_string(struct parser *ps, int q)
{
	unsigned int line = ps->line, col = ps->col;
	size_t start, n = 0;
	char *out;

	advance(ps);		/* the opening quote */
	start = ps->pos;
	out = malloc(ps->len - start + 1);
	if (!out)
		return fail(ps, line, col, -ENOMEM, "out of memory");
	for (;;) {
		int c = peekc(ps);

		if (c < 0 || c == '\n') {
			free(out);
			return fail(ps, line, col, -EINVAL,
				    "unterminated string (no closing %s on this line)",
				    q == '"' ? "'\"'" : "\"'\"");
		}
		if (c == q) {
			advance(ps);
			break;
		}
		if (c == 0) {
			free(out);
			return fail(ps, ps->line, ps->col, -EINVAL, "a NUL byte in a string");
		}
		if (c == '\\' && ps->pos + 1 < ps->len && ps->s[ps->pos + 1] == q) {
			out[n++] = (char)c;
			advance(ps);
			c = q;
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
	if (c == '"' || c == '\'')
		return lex_string(ps, c);
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

bool asx__svc_name_ok(const char *p, size_t n)
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
	if (!asx__svc_name_ok(p, n))
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

/*
 * dynamic NAME TYPE [*] [PATH] : FACTORY ( ) [active|inactive] ["args"]
 *
 * An empty PATH (ACE's ":_make_Foo()") is a factory in the program
 * itself.  ACE's other forms that ASX cannot mean the same way (an object
 * initializer "lib:object" without "()", a STREAM made by a factory) fail
 * with what to write instead.
 */
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
	} else if (is_word(ps, "ASC_Policy") && !in_stream) {
		e->type = ASX__SVC_T_POLICY;	/* an ASX extension */
		if (strlen(e->name) >= ASX__SVC_POLICY_NAME_MAX)
			return fail(ps, e->loc.line, e->loc.col, -EINVAL,
				    "an ASC policy's name is at most %d bytes: '%s' is %zu",
				    ASX__SVC_POLICY_NAME_MAX - 1, e->name, strlen(e->name));
	} else if (is_word(ps, "Module") && in_stream) {
		e->type = ASX__SVC_T_MODULE;
	} else if (is_word(ps, "Module")) {
		return fail(ps, ps->t.line, ps->t.col, -EINVAL,
			    "a Module runs in a Stream: make '%s' an entry of 'stream NAME { ... }'",
			    e->name);
	} else if (is_word(ps, "STREAM")) {
		return fail(ps, ps->t.line, ps->t.col, -EINVAL,
			    "ASX makes a Stream from its svc.conf entry, not from a factory: write 'stream %s { ... }' with its Modules",
			    e->name);
	} else {
		return expected(ps, in_stream ? "'Module' (a Stream holds Modules)" :
				"the service's type, 'Service_Object' (or ASX's 'ASC_Policy')");
	}
	r = next(ps);
	if (!r && ps->t.kind == '*')
		r = next(ps);
	if (r)
		return r;
	if (ps->t.kind == ':')
		e->path = strdup("");	/* the program's own factory */
	else
		r = take_text(ps, "the shared object's path (as in lib.so:factory())", &e->path);
	if (!r && !e->path)
		r = fail(ps, ps->t.line, ps->t.col, -ENOMEM, "out of memory");
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
	if (ps->t.kind != '(')
		return fail(ps, line, col, -EINVAL,
			    "'%.40s' without '()' is an object initializer (a data symbol); ASX makes a service with a factory function: define %.40s with %s() and write '%.40s()'",
			    e->factory, e->factory,
			    in_stream ? "ASX_SVC_MODULE_FACTORY" :
			    e->type == ASX__SVC_T_POLICY ? "ASX_ASC_POLICY_FACTORY" : "ASX_SVC_FACTORY",
			    e->factory);
	r = take_punct(ps, '(', "'()' after the factory function's name");
	if (!r)
		r = take_punct(ps, ')', "')' (a factory takes no arguments here: its parameters go in a quoted string)");
	if (r)
		return r;
	line = ps->t.line;
	col = ps->t.col;
	r = take_state(ps, e);
	if (!r && e->type == ASX__SVC_T_POLICY && e->inactive)
		return fail(ps, line, col, -EINVAL,
			    "an ASC policy cannot start suspended: it has no state but registered");
	line = ps->t.line;
	col = ps->t.col;
	r = r ? r : take_args(ps, e);
	if (!r && e->type == ASX__SVC_T_POLICY && e->args && *e->args)
		return fail(ps, line, col, -EINVAL,
			    "an ASC policy takes no parameters (its factory has none): write \"\" or nothing");
	return r;
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
	free(e->listen);
	while (e->ops) {
		struct asx__svc_ent *op = e->ops;

		e->ops = op->next;
		free(op);
	}
	free(e);
}

static const char *mod_name(const void *ctx, size_t i)
{
	return ((const struct asx__svc_ent *)ctx)->mods[i].name;
}

static int parse_modules(struct parser *ps, struct asx__svc_ent *s,
			 struct asx__svc_names *names);

/* The current token, one of @words: its @vals entry in *@out, and on. */
static int take_choice(struct parser *ps, const char *const *words, const int *vals, size_t n,
		       int *out, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (is_word(ps, words[i])) {
			*out = vals[i];
			return next(ps);
		}
	return expected(ps, what);
}

/*
 * "policy prio|direct|NAME" (the word "policy" current); NAME: a policy
 * registered when the Stream starts (an "ASC_Policy" loaded before it).
 */
static int take_asc_policy(struct parser *ps, struct asx__svc_asc *a)
{
	static const char *const words[] = { "prio", "direct" };
	static const int vals[] = { ASX__SVC_ASC_PRIO, ASX__SVC_ASC_DIRECT };
	char name[ASX__SVC_NAME_MAX];
	unsigned int col;
	int r = next(ps);

	if (r)
		return r;
	if (is_word(ps, "edf"))
		return fail(ps, ps->t.line, ps->t.col, -EINVAL,
			    "'policy edf': EDF threads are periodic jobs and a Task's service thread is a loop: use 'prio' or 'direct'");
	if (is_word(ps, "prio") || is_word(ps, "direct"))
		return take_choice(ps, words, vals, 2, &a->policy, "");
	col = ps->t.col;
	r = take_name(ps, "a policy after 'policy' ('prio', 'direct' or a loaded ASC_Policy's name)",
		      name);
	if (r)
		return r;
	if (strlen(name) >= sizeof(a->pname))
		return fail(ps, ps->t.line, col, -EINVAL,
			    "an ASC policy's name is at most %zu bytes: '%s' is %zu",
			    sizeof(a->pname) - 1, name, strlen(name));
	a->policy = ASX__SVC_ASC_NAMED;
	strcpy(a->pname, name);
	return 0;
}

/* "semantic nonpreemptive|preemptive|timesliced" (the word "semantic" current) */
static int take_asc_semantic(struct parser *ps, struct asx__svc_asc *a)
{
	static const char *const words[] = { "nonpreemptive", "preemptive", "timesliced" };
	static const int vals[] = { ASX_ASC_NONPREEMPTIVE, ASX_ASC_PREEMPTIVE,
				    ASX_ASC_TIMESLICED };
	int r = next(ps);

	if (r)
		return r;
	return take_choice(ps, words, vals, 3, &a->semantic,
			   "a semantic after 'semantic' ('nonpreemptive', 'preemptive' or 'timesliced')");
}

/*
 * The next token, a word, as a decimal integer from @lo to @hi into *@v,
 * and on.  No word: the error "expected @what".  A word that is no such
 * number: the error @range, a format given the word (cut to "..." beyond
 * 11 bytes), @lo and @hi.
 */
static int take_ranged(struct parser *ps, long lo, long hi, long *v, const char *what,
		       const char *range)
{
	unsigned int col;
	const char *d;
	char b[16];
	size_t n;
	long x;
	int r = next(ps);

	if (r)
		return r;
	if (ps->t.kind != T_WORD)
		return expected(ps, what);
	col = ps->t.col;
	n = ps->t.n < sizeof(b) ? ps->t.n : sizeof(b) - 4;
	memcpy(b, ps->t.p, n);
	strcpy(b + n, ps->t.n < sizeof(b) ? "" : "...");
	d = lo < 0 && b[0] == '-' ? b + 1 : b;
	/* at most 15 digits: strtol cannot overflow */
	x = ps->t.n < sizeof(b) && *d && strspn(d, "0123456789") == strlen(d) ?
	    strtol(b, NULL, 10) : LONG_MAX;
	if (x < lo || x > hi)
		return fail(ps, ps->t.line, col, -EINVAL, range, b, lo, hi);
	*v = x;
	return next(ps);
}

/* "qos Q" (the word "qos" current): a PRIO priority, a decimal integer */
static int take_asc_qos(struct parser *ps, struct asx__svc_asc *a)
{
	long v;
	int r;

	r = take_ranged(ps, -ASX__SVC_ASC_QOS_MAX, ASX__SVC_ASC_QOS_MAX, &v,
			"the threads' priority after 'qos' (an integer)",
			"'qos %s': the priority is an integer from %ld to %ld");
	if (!r)
		a->prio = (int)v;
	return r;
}

/*
 * "asc N [policy P] [semantic S] [qos Q]" (the word "asc" current): the
 * Stream's Task threads on an ASC of N VPs, its policy, concurrency
 * semantic and the threads' QoS, the options in any order, each once.
 */
static int take_asc(struct parser *ps, struct asx__svc_ent *s)
{
	static const char *const opts[] = { "policy", "semantic", "qos" };
	int (*const take[])(struct parser *, struct asx__svc_asc *) = {
		take_asc_policy, take_asc_semantic, take_asc_qos
	};
	unsigned int said = 0, qos_line = 0, qos_col = 0;
	long v;
	int r;

	r = take_ranged(ps, 1, ASX__SVC_ASC_VPS_MAX, &v,
			"the number of the ASC's virtual processors after 'asc' (1..64)",
			"'asc %s': the ASC's virtual processors are a number from %ld to %ld");
	if (r)
		return r;
	s->asc.vps = (int)v;
	while (!r && ps->t.kind == T_WORD && !is_word(ps, "listen")) {
		size_t k;

		for (k = 0; k < 3 && !is_word(ps, opts[k]); k++)
			;
		if (k == 3)
			return expected(ps, "'{', 'listen', or 'policy', 'semantic' or 'qos' after 'asc N'");
		if (said & (1u << k))
			return fail(ps, ps->t.line, ps->t.col, -EINVAL,
				    "'%s' given twice after 'asc N'", opts[k]);
		said |= 1u << k;
		if (k == 2) {
			qos_line = ps->t.line;
			qos_col = ps->t.col;
		}
		r = take[k](ps, &s->asc);
	}
	if (!r && s->asc.policy == ASX__SVC_ASC_DIRECT && (said & 4))
		return fail(ps, qos_line, qos_col, -EINVAL,
			    "'qos' is a PRIO thread's priority: a DIRECT thread has none");
	if (!r && s->asc.policy == ASX__SVC_ASC_NAMED && (said & 4))
		return fail(ps, qos_line, qos_col, -EINVAL,
			    "'qos' is a PRIO thread's priority: the threads of policy '%s' are put with no QoS",
			    s->asc.pname);
	return r;
}

/*
 * "listen \"ADDRESS\" [raw|framed]" (the word "listen" current): the
 * Stream's endpoint.  ADDRESS is a quoted string (it holds a ':', which
 * ends a word) in the forms of asx_addr_parse(): "127.0.0.1:7000",
 * "[::1]:7000", "/run/s.sock", "@abstract"; it is checked here, so a wrong
 * one is an error at its line and column.
 */
static int take_listen(struct parser *ps, struct asx__svc_ent *s)
{
	unsigned int line, col;
	struct asx_addr a;
	const char *why = NULL;
	int r = next(ps);

	line = ps->t.line;
	col = ps->t.col;
	if (!r && ps->t.kind != T_STRING)
		return expected(ps, "the endpoint's address in quotes after 'listen' (\"HOST:PORT\", \"[HOST6]:PORT\", \"/PATH\" or \"@NAME\")");
	if (!r)
		r = take_text(ps, "", &s->listen);
	if (r)
		return r;
	r = asx_addr_parse(&a, s->listen, &why);
	if (r)
		return fail(ps, line, col, -EINVAL, "'listen \"%.60s\"': not an address to listen on: %s",
			    s->listen, why ? why : strerror(-r));
	if (is_word(ps, "raw") || is_word(ps, "framed")) {
		s->framing = is_word(ps, "raw") ? ASX__SVC_FRAME_RAW : ASX__SVC_FRAME_FD;
		r = next(ps);
	}
	return r;
}

/*
 * stream NAME [kernel ["driver"]] [asc N [policy P] [semantic S] [qos Q]]
 *	  [listen ADDRESS [raw|framed]] { entry... }
 */
static int parse_stream(struct parser *ps, struct asx__svc_ent *s)
{
	/* the Stream's modules by name: one lookup per entry, not a walk */
	struct asx__svc_names names = { .name = mod_name, .ctx = s };
	int r;

	s->dir = ASX__SVC_STREAM;
	if (is_word(ps, "dynamic"))
		return fail(ps, ps->t.line, ps->t.col, -EINVAL,
			    "'stream dynamic': ASX makes a Stream itself, not from a factory: write 'stream NAME { ... }' with its Modules");
	if (is_word(ps, "static")) {
		/* ACE's Stream the program provides: here, the one ASX makes */
		r = next(ps);
		if (r)
			return r;
	}
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
	if (is_word(ps, "asc")) {
		r = take_asc(ps, s);
		if (r)
			return r;
	}
	if (is_word(ps, "listen")) {
		r = take_listen(ps, s);
		if (r)
			return r;
	}
	r = take_punct(ps, '{', s->kernel ? "'{' and the Stream's modules" :
		       "'{' and the Stream's modules (or 'kernel' for a Stream over asx.ko)");
	if (r)
		return r;
	r = parse_modules(ps, s, &names);
	asx__svc_names_free(&names);
	return r;
}

/*
 * ACE's "suspend M", "resume M" or "remove M" in Stream @s's braces (the
 * word current): "suspend NAME/M" ... after the Stream, appended at
 * **@tail.
 */
static int take_stream_op(struct parser *ps, struct asx__svc_ent *s,
			  struct asx__svc_ent ***tail)
{
	struct asx__svc_ent *op = calloc(1, sizeof(*op));
	int r;

	if (!op)
		return fail(ps, ps->t.line, ps->t.col, -ENOMEM, "out of memory");
	op->loc = (struct asx__svc_loc){ ps->file, ps->t.line, ps->t.col };
	op->dir = is_word(ps, "suspend") ? ASX__SVC_SUSPEND :
		  is_word(ps, "resume") ? ASX__SVC_RESUME : ASX__SVC_REMOVE;
	strcpy(op->name, s->name);
	r = next(ps);
	if (!r)
		r = take_name(ps, "the name of one of the Stream's modules", op->mod);
	if (r) {
		free(op);
		return r;
	}
	**tail = op;
	*tail = &op->next;
	return 0;
}

static int parse_modules(struct parser *ps, struct asx__svc_ent *s,
			 struct asx__svc_names *names)
{
	size_t user = SIZE_MAX;		/* the first user-space module */
	struct asx__svc_ent **ops = &s->ops;
	size_t cap = 0;
	int r = 0;

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
		} else if (is_word(ps, "suspend") || is_word(ps, "resume") || is_word(ps, "remove")) {
			r = take_stream_op(ps, s, &ops);
			if (r)
				return r;
			continue;
		} else {
			return expected(ps, "a module ('dynamic', 'static' or 'kernel'), 'suspend', 'resume', 'remove' or '}'");
		}
		if (r) {
			free(m.path);
			free(m.factory);
			free(m.args);
			return r;
		}
		size_t dup = asx__svc_names_find(names, m.name);

		if (dup != SIZE_MAX)
			r = fail(ps, m.loc.line, m.loc.col, -EINVAL,
				 "module '%s' is already in Stream '%s' (at line %u)",
				 m.name, s->name, s->mods[dup].loc.line);
		if (!r && m.dir == ASX__SVC_KERNEL && user != SIZE_MAX)
			r = fail(ps, m.loc.line, m.loc.col, -EINVAL,
				 "kernel module '%s' cannot sit above user-space module '%s' (line %u): modules are listed bottom first, kernel ones first",
				 m.name, s->mods[user].name, s->mods[user].loc.line);
		grown = s->mods;
		if (!r && s->nmods == cap) {
			/* doubling: appending stays linear in all */
			grown = realloc(s->mods, (cap ? 2 * cap : 4) * sizeof(*s->mods));
			if (grown)
				cap = cap ? 2 * cap : 4;
		}
		if (r || !grown) {
			free(m.path);
			free(m.factory);
			free(m.args);
			return r ? r : fail(ps, m.loc.line, m.loc.col, -ENOMEM, "out of memory");
		}
		s->mods = grown;
		if (m.dir != ASX__SVC_KERNEL && user == SIZE_MAX)
			user = s->nmods;
		s->mods[s->nmods++] = m;
		if (asx__svc_names_add(names, s->nmods - 1))
			return fail(ps, m.loc.line, m.loc.col, -ENOMEM, "out of memory");
	}
	return next(ps);
}

static int parse_text(struct parser *ps);

/* ------------------------------------------------------------ the files */

static int fs_open(void *ctx, const char *path, struct asx__svc_file *f)
{
	/* never blocks: not on a FIFO without a writer, not on a terminal */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;

	(void)ctx;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int e = errno;

		close(fd);
		return -e;
	}
	f->regular = S_ISREG(st.st_mode);
	f->size = st.st_size < 0 ? 0 : (uintmax_t)st.st_size > SIZE_MAX ? SIZE_MAX :
		  (size_t)st.st_size;
	f->id[0] = (unsigned long long)st.st_dev;
	f->id[1] = (unsigned long long)st.st_ino;
	f->h = (void *)(intptr_t)fd;
	return 0;
}

static int fs_read(void *ctx, struct asx__svc_file *f, char *buf, size_t cap, size_t *len)
{
	int fd = (int)(intptr_t)f->h;
	size_t have = 0;
	char extra;

	(void)ctx;
	/* to the end, not to st_size: the file may change under us */
	for (;;) {
		ssize_t got = read(fd, have < cap ? buf + have : &extra, have < cap ? cap - have : 1);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (!got)
			break;
		if (have >= cap)
			return -EFBIG;
		have += (size_t)got;
	}
	*len = have;
	return 0;
}

static void fs_close(void *ctx, struct asx__svc_file *f)
{
	(void)ctx;
	close((int)(intptr_t)f->h);
}

const struct asx__svc_io asx__svc_io_files = {
	.open = fs_open, .read = fs_read, .close = fs_close,
};

/*
 * Read @path whole through the load's reader, within the limits of one
 * file and of the whole load.  0 and *text (NUL-terminated), *len, *id; or
 * -errno with the reason in @why.
 */
static int read_whole(struct load *ld, const char *path, char **text, size_t *len,
		      unsigned long long id[2], char *why, size_t n)
{
	struct asx__svc_file f = { 0 };
	int r = ld->io->open(ld->io->ctx, path, &f);

	*text = NULL;
	if (r) {
		snprintf(why, n, "%s", strerror(-r));
		return r;
	}
	id[0] = f.id[0];
	id[1] = f.id[1];
	if (!f.regular) {
		snprintf(why, n, "not a regular file");
		r = -EINVAL;
	} else if (f.size > ASX__SVC_FILE_MAX) {
		snprintf(why, n, "%zu bytes, more than the %u a file may have", f.size,
			 ASX__SVC_FILE_MAX);
		r = -EFBIG;
	} else if (f.size > ASX__SVC_TOTAL_MAX - ld->bytes) {
		snprintf(why, n, "its %zu bytes would make the configuration more than the %u bytes one load may read in all",
			 f.size, ASX__SVC_TOTAL_MAX);
		r = -EFBIG;
	} else if (!(*text = malloc(f.size + 1))) {
		snprintf(why, n, "out of memory");
		r = -ENOMEM;
	} else {
		r = ld->io->read(ld->io->ctx, &f, *text, f.size, len);
		if (r == -EFBIG)
			snprintf(why, n, "the file grew while it was read");
		else if (r)
			snprintf(why, n, "%s", strerror(-r));
	}
	ld->io->close(ld->io->ctx, &f);
	if (r) {
		free(*text);
		*text = NULL;
		return r;
	}
	(*text)[*len] = '\0';
	ld->bytes += *len;
	return 0;
}

/* Remember @name as one of the conf's files; returns the conf's copy. */
static const char *keep_file(struct load *ld, const char *name)
{
	char **grown = realloc(ld->conf->files, (ld->conf->nfiles + 1) * sizeof(char *));
	char *copy = strdup(name);

	if (grown)
		ld->conf->files = grown;
	if (!grown || !copy) {
		free(copy);
		return NULL;
	}
	ld->conf->files[ld->conf->nfiles++] = copy;
	return copy;
}

/* Parse @text as the file @name, @depth includes below the top file. */
static int parse_one(struct load *ld, int depth, const char *name, const unsigned long long id[2],
		     const char *text, size_t len)
{
	struct parser sub = {
		.ld = ld, .s = text, .len = len, .line = 1, .col = 1, .depth = depth,
	};
	int r;

	sub.file = keep_file(ld, name);
	if (!sub.file) {
		ld->err->err = -ENOMEM;
		snprintf(ld->err->msg, sizeof(ld->err->msg), "%s: out of memory", name);
		return -ENOMEM;
	}
	ld->chain[depth].name = sub.file;
	ld->chain[depth].id[0] = id[0];
	ld->chain[depth].id[1] = id[1];
	if (len && memchr(text, '\0', len))
		return fail(&sub, 1, 1, -EINVAL, "the file holds a NUL byte (not a text file?)");
	r = next(&sub);
	if (!r)
		r = parse_text(&sub);
	free(sub.t.str);
	return r;
}

/* include "path": relative to the including file's directory */
static int parse_include(struct parser *ps, unsigned int line, unsigned int col)
{
	struct load *ld = ps->ld;
	char *rel = NULL, *path = NULL, *text = NULL, why[160] = "";
	const char *slash = strrchr(ps->file, '/');
	unsigned long long id[2];
	size_t len = 0;
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
	if (ps->depth >= ASX__SVC_INCLUDE_DEPTH) {
		r = fail(ps, line, col, -ELOOP, "includes nest deeper than %d levels",
			 ASX__SVC_INCLUDE_DEPTH);
		goto out;
	}
	if (ld->includes >= ASX__SVC_INCLUDES_MAX) {
		r = fail(ps, line, col, -E2BIG,
			 "more than %d includes in one configuration (repeats count each time)",
			 ASX__SVC_INCLUDES_MAX);
		goto out;
	}
	ld->includes++;
	r = read_whole(ld, path, &text, &len, id, why, sizeof(why));
	/* a cycle, however spelt: the same name, or the same file */
	for (int i = 0; i <= ps->depth && r != -ENOENT; i++)
		if (!strcmp(ld->chain[i].name, path) ||
		    (!r && (id[0] || id[1]) && ld->chain[i].id[0] == id[0] &&
		     ld->chain[i].id[1] == id[1])) {
			r = fail(ps, line, col, -ELOOP,
				 "'%s' includes itself (it is already being read)", rel);
			goto out;
		}
	if (r) {
		r = fail(ps, line, col, r, "cannot include '%s': %s", rel, why);
		goto out;
	}
	r = parse_one(ld, ps->depth + 1, path, id, text, len);
out:
	free(text);
	free(path);
	free(rel);
	return r;
}

static const char *def_name(const void *ctx, size_t i)
{
	return ((const struct load *)ctx)->defv[i]->name;
}

static const struct asx__svc_ent *find_def(const struct load *ld, const char *name)
{
	size_t i = asx__svc_names_find(&ld->defs, name);

	return i == SIZE_MAX ? NULL : ld->defv[i];
}

static int append(struct parser *ps, struct asx__svc_ent *e)
{
	struct load *ld = ps->ld;

	if (e->dir == ASX__SVC_DYNAMIC || e->dir == ASX__SVC_STATIC || e->dir == ASX__SVC_STREAM ||
	    e->dir == ASX__SVC_MUX) {
		if (ld->ndef == ld->defcap) {
			size_t cap = ld->defcap ? 2 * ld->defcap : 16;
			const struct asx__svc_ent **v = realloc(ld->defv, cap * sizeof(*v));

			if (!v)
				return fail(ps, e->loc.line, e->loc.col, -ENOMEM, "out of memory");
			ld->defv = v;
			ld->defcap = cap;
		}
		ld->defv[ld->ndef] = e;
		if (asx__svc_names_add(&ld->defs, ld->ndef))
			return fail(ps, e->loc.line, e->loc.col, -ENOMEM, "out of memory");
		ld->ndef++;
	}
	*ld->tail = e;
	ld->tail = &e->next;
	ld->conf->n++;
	return 0;
}

/* Append the list @op (ACE's operations in a Stream's braces), all of it. */
static int append_ops(struct parser *ps, struct asx__svc_ent *op)
{
	int r = 0;

	while (op) {
		struct asx__svc_ent *nx = op->next;

		op->next = NULL;
		if (!r)
			r = append(ps, op);
		if (r)
			free(op);
		op = nx;
	}
	return r;
}

/*
 * "link MUX STREAM [band N]" (after the word "link"): one more link of the
 * mux an earlier "mux MUX" defined, kept in that definition (a mux and its
 * links are one definition, applied together).
 */
static int parse_link(struct parser *ps, unsigned int line, unsigned int col)
{
	struct asx__svc_ent l = { .dir = ASX__SVC_LINK, .band = ASX__SVC_BAND_ANY,
				  .loc = { ps->file, line, col } };
	char mux[ASX__SVC_NAME_MAX];
	unsigned int mline = ps->t.line, mcol = ps->t.col;
	struct asx__svc_ent *m, *grown;
	int r = take_name(ps, "the name of a mux after 'link'", mux);

	if (!r)
		r = take_name(ps, "the name of a stream to link under the mux", l.name);
	if (!r && is_word(ps, "band")) {
		long v = 0;

		r = take_ranged(ps, 0, 255, &v, "the band (0..255) after 'band'",
				"'band %s': a band is a number from %ld to %ld");
		l.band = (int)v;
	}
	if (r)
		return r;
	m = (struct asx__svc_ent *)find_def(ps->ld, mux);
	if (!m || m->dir != ASX__SVC_MUX)
		return fail(ps, mline, mcol, -EINVAL,
			    "'link %s %s': no mux '%s' defined before this line (write 'mux %s' first: a mux and its links are one definition)",
			    mux, l.name, mux, mux);
	if (!strcmp(l.name, mux))
		return fail(ps, line, col, -EINVAL, "'link %s %s': a mux cannot be linked under itself",
			    mux, l.name);
	for (size_t i = 0; i < m->nmods; i++) {
		if (!strcmp(m->mods[i].name, l.name))
			return fail(ps, line, col, -EINVAL,
				    "'link %s %s': '%s' is already linked under mux '%s' (line %u)",
				    mux, l.name, l.name, mux, m->mods[i].loc.line);
		if (m->mods[i].band == l.band) {
			char b[16];

			snprintf(b, sizeof(b), "band %d", l.band);
			return fail(ps, line, col, -EINVAL,
				    "'link %s %s': %s of mux '%s' already goes to '%s' (line %u)",
				    mux, l.name, l.band < 0 ? "the default route (no band)" : b,
				    mux, m->mods[i].name, m->mods[i].loc.line);
		}
	}
	grown = realloc(m->mods, (m->nmods + 1) * sizeof(*m->mods));
	if (!grown)
		return fail(ps, line, col, -ENOMEM, "out of memory");
	m->mods = grown;
	m->mods[m->nmods++] = l;
	return 0;
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
		if (is_word(ps, "link")) {
			r = next(ps);
			if (!r)
				r = parse_link(ps, line, col);
			continue;
		}
		e = new_ent(ps);
		if (!e)
			return ps->ld->err->err;
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
		} else if (is_word(ps, "mux")) {
			e->dir = ASX__SVC_MUX;
			r = next(ps);
			if (!r)
				r = take_name(ps, "a Multiplexor's name after 'mux'", e->name);
		} else {
			r = expected(ps, "a directive (dynamic, static, remove, suspend, resume, stream, mux, link or include)");
		}
		if (!r && e->dir == ASX__SVC_STREAM && e->ops && !e->nmods) {
			/* ACE's "stream NAME { suspend M ... }": only the
			 * operations on a Stream that is there already */
			r = append_ops(ps, e->ops);
			e->ops = NULL;
			free_ent(e);
			if (r)
				return r;
			continue;
		}
		prev = r ? NULL : find_def(ps->ld, e->name);
		if (prev && e->dir != ASX__SVC_REMOVE && e->dir != ASX__SVC_SUSPEND &&
		    e->dir != ASX__SVC_RESUME)
			r = fail(ps, line, col, -EINVAL, "'%s' is already configured at %s:%u:%u",
				 e->name, prev->loc.file, prev->loc.line, prev->loc.col);
		if (!r)
			r = append(ps, e);
		if (r) {
			free_ent(e);	/* (append() links it only when nothing failed) */
			return r;
		}
		r = append_ops(ps, e->ops);
		e->ops = NULL;
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

/*
 * One load: the top file @name, from @text if @path is NULL, else read
 * from @path through @io (whose errors, about the file as a whole, are
 * reported at its line 1, column 1).
 */
static int load(const char *name, const char *path, const char *text, size_t len,
		const struct asx__svc_io *io, struct asx__svc_conf **out,
		struct asx__svc_err *err)
{
	static const unsigned long long none[2];
	struct asx__svc_err dummy;
	struct load *ld;
	char *owned = NULL, why[160] = "";
	unsigned long long id[2] = { 0, 0 };
	int r;

	if (!err)
		err = &dummy;
	memset(err, 0, sizeof(*err));
	if (!out || !name || (!path && !text && len))
		return -EINVAL;
	*out = NULL;
	ld = calloc(1, sizeof(*ld));
	if (!ld)
		return -ENOMEM;
	ld->conf = calloc(1, sizeof(*ld->conf));
	if (!ld->conf) {
		free(ld);
		return -ENOMEM;
	}
	ld->err = err;
	ld->io = io ? io : &asx__svc_io_files;
	ld->tail = &ld->conf->head;
	ld->defs.name = def_name;
	ld->defs.ctx = ld;
	if (path) {
		r = read_whole(ld, path, &owned, &len, id, why, sizeof(why));
		text = owned;
	} else {
		r = len > ASX__SVC_FILE_MAX ? -EFBIG : 0;
		if (r)
			snprintf(why, sizeof(why), "%zu bytes, more than the %u a file may have", len,
				 ASX__SVC_FILE_MAX);
		else
			ld->bytes = len;
	}
	if (r) {
		err->err = r;
		snprintf(err->msg, sizeof(err->msg), "%s:1:1: %s", name, why);
	} else {
		r = parse_one(ld, 0, name, path ? id : none, text, len);
	}
	free(owned);
	asx__svc_names_free(&ld->defs);
	free(ld->defv);
	if (r)
		asx__svc_conf_free(ld->conf);
	else
		*out = ld->conf;
	free(ld);
	return r;
}

int asx__svc_parse_mem_io(const char *name, const char *text, size_t len,
			  const struct asx__svc_io *io, struct asx__svc_conf **out,
			  struct asx__svc_err *err)
{
	return load(name, NULL, text, len, io, out, err);
}

int asx__svc_parse_mem(const char *name, const char *text, size_t len,
		       struct asx__svc_conf **out, struct asx__svc_err *err)
{
	return load(name, NULL, text, len, NULL, out, err);
}

int asx__svc_parse_file_io(const char *path, const struct asx__svc_io *io,
			   struct asx__svc_conf **out, struct asx__svc_err *err)
{
	if (!path) {
		if (err)
			memset(err, 0, sizeof(*err));
		return -EINVAL;
	}
	return load(path, path, NULL, 0, io, out, err);
}

int asx__svc_parse_file(const char *path, struct asx__svc_conf **out,
			struct asx__svc_err *err)
{
	return asx__svc_parse_file_io(path, NULL, out, err);
}

/* ---------------------------------------------------------------- names */

static size_t name_hash(const char *s)
{
	size_t h = 14695981039346656037ull & SIZE_MAX;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * (size_t)1099511628211ull;
	return h;
}

size_t asx__svc_names_find(const struct asx__svc_names *t, const char *name)
{
	if (!t->cap)
		return SIZE_MAX;
	for (size_t k = name_hash(name) & (t->cap - 1);; k = (k + 1) & (t->cap - 1)) {
		size_t v = t->slot[k];

		if (!v)
			return SIZE_MAX;
		if (!strcmp(t->name(t->ctx, v - 1), name))
			return v - 1;
	}
}

static void names_put(size_t *slot, size_t cap, size_t h, size_t v)
{
	size_t k = h & (cap - 1);

	while (slot[k])
		k = (k + 1) & (cap - 1);
	slot[k] = v;
}

int asx__svc_names_add(struct asx__svc_names *t, size_t i)
{
	if (2 * (t->n + 1) > t->cap) {	/* at most half full */
		size_t cap = t->cap ? 2 * t->cap : 16;
		size_t *slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		for (size_t k = 0; k < t->cap; k++)
			if (t->slot[k])
				names_put(slot, cap, name_hash(t->name(t->ctx, t->slot[k] - 1)),
					  t->slot[k]);
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	names_put(t->slot, t->cap, name_hash(t->name(t->ctx, i)), i + 1);
	t->n++;
	return 0;
}

void asx__svc_names_free(struct asx__svc_names *t)
{
	free(t->slot);
	t->slot = NULL;
	t->cap = t->n = 0;
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
