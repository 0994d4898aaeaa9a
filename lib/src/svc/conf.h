/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * conf.h - the svc.conf language: a hand-written lexer and recursive-descent
 * parser producing an ordered list of directives, each with the file, line
 * and column it came from.  The grammar is in Documentation/svc.rst.
 *
 * The parser only reads: it resolves includes, checks what can be checked
 * from the text alone (names, duplicate definitions, module order in a
 * Stream), and reports the first error as "file:line:column: message".  A
 * file with an error yields no configuration at all, so whoever applies one
 * never sees half of a bad file.
 */
#ifndef ASX_SRC_SVC_CONF_H
#define ASX_SRC_SVC_CONF_H

#include <stdbool.h>
#include <stddef.h>

#define ASX__SVC_NAME_MAX	64	/* a service or module name, with its NUL */
#define ASX__SVC_INCLUDE_DEPTH	16	/* nested includes */
#define ASX__SVC_FILE_MAX	(1u << 20)	/* bytes in one file */
#define ASX__SVC_ERR_MAX	512

enum asx__svc_dir {
	ASX__SVC_DYNAMIC = 1,	/* dynamic NAME TYPE * PATH:FACTORY() [state] ["args"] */
	ASX__SVC_STATIC,	/* static NAME [state] ["args"] */
	ASX__SVC_REMOVE,	/* remove NAME */
	ASX__SVC_SUSPEND,	/* suspend NAME, or suspend STREAM/MODULE */
	ASX__SVC_RESUME,	/* resume NAME, or resume STREAM/MODULE */
	ASX__SVC_STREAM,	/* stream NAME [kernel "driver"] { entries } */
	ASX__SVC_KERNEL,	/* (in a stream) kernel NAME: an asx.ko module */
};

enum asx__svc_type {
	ASX__SVC_T_NONE = 0,
	ASX__SVC_T_OBJECT,	/* Service_Object */
	ASX__SVC_T_MODULE,	/* Module */
};

struct asx__svc_loc {
	const char *file;	/* owned by the conf (one copy per file) */
	unsigned int line, col;	/* 1-based; col counts bytes */
};

struct asx__svc_ent {
	enum asx__svc_dir dir;
	enum asx__svc_type type;	/* dynamic only */
	char name[ASX__SVC_NAME_MAX];
	char mod[ASX__SVC_NAME_MAX];	/* suspend/resume STREAM/MODULE: the
					 * Module (name is the Stream); else "" */
	char *path;		/* dynamic: the shared object */
	char *factory;		/* dynamic: its factory symbol */
	char *args;		/* the quoted parameters, or NULL */
	bool inactive;		/* "inactive": starts suspended (a service,
				 * or a user-space module of a Stream) */
	struct asx__svc_loc loc;	/* of the directive's first word */
	/* stream: */
	bool kernel;		/* the Stream's driver end is a kernel Stream */
	char *driver;		/* kernel: the asx.ko driver ("loop" if not said) */
	struct asx__svc_ent *mods;	/* in push order: the first is lowest */
	size_t nmods;
	struct asx__svc_ent *next;
};

struct asx__svc_conf {
	struct asx__svc_ent *head;	/* the directives, in order */
	size_t n;
	char **files;		/* every file read, for the locs */
	size_t nfiles;
};

struct asx__svc_err {
	char msg[ASX__SVC_ERR_MAX];	/* "file:line:col: what was wrong" */
	int err;			/* -EINVAL (syntax), -ENOENT, -ELOOP, ... */
};

/* Parse @path (and what it includes).  0 and *out, or -errno and @err. */
int asx__svc_parse_file(const char *path, struct asx__svc_conf **out,
			struct asx__svc_err *err);
/*
 * Parse @len bytes of @text as if read from a file called @name (includes
 * are resolved against @name's directory).
 */
int asx__svc_parse_mem(const char *name, const char *text, size_t len,
		       struct asx__svc_conf **out, struct asx__svc_err *err);
void asx__svc_conf_free(struct asx__svc_conf *conf);

/*
 * Split a directive's parameter string into words as a shell would split
 * plain words and '...' quoted ones (no expansion); argv[0] is @argv0 and
 * argv[argc] is NULL.  Free with free(*argv) (one allocation).  -EINVAL for
 * an unterminated quote.
 */
int asx__svc_split_args(const char *argv0, const char *args, int *argc, char ***argv);

#endif /* ASX_SRC_SVC_CONF_H */
