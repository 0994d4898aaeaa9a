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
 *
 * conf.c is the lowest file of lib/src/svc: it calls no other (the order
 * is in Documentation/svc.rst; tools/svc-calls.sh checks it).  Besides the
 * language it holds what every file above needs of it: the name rule and
 * the "file:line:col: message" of a directive.
 */
#ifndef ASX_SRC_SVC_CONF_H
#define ASX_SRC_SVC_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <asx/asc.h>
#include <asx/svc.h>

#define ASX__SVC_NAME_MAX	ASX_SVC_NAME_MAX	/* a service or module name, with its NUL */
#define ASX__SVC_INCLUDE_DEPTH	16	/* includes nested below the top file */
#define ASX__SVC_FILE_MAX	(1u << 20)	/* bytes in one file */
/* One load (a file and all it includes, repeats counted each time): */
#define ASX__SVC_TOTAL_MAX	(4u << 20)	/* bytes read in all */
#define ASX__SVC_INCLUDES_MAX	1024	/* include directives followed */
#define ASX__SVC_ERR_MAX	512

enum asx__svc_dir {
	ASX__SVC_DYNAMIC = 1,	/* dynamic NAME TYPE * PATH:FACTORY() [state] ["args"] */
	ASX__SVC_STATIC,	/* static NAME [state] ["args"] */
	ASX__SVC_REMOVE,	/* remove NAME */
	ASX__SVC_SUSPEND,	/* suspend NAME, or suspend STREAM/MODULE */
	ASX__SVC_RESUME,	/* resume NAME, or resume STREAM/MODULE */
	ASX__SVC_STREAM,	/* stream NAME [kernel "driver"] [asc N] [listen A] { entries } */
	ASX__SVC_KERNEL,	/* (in a stream) kernel NAME: an asx.ko module */
	ASX__SVC_MUX,		/* mux NAME: a Multiplexor (routing by band); its
				 * links are its mods (dir ASX__SVC_LINK) */
	ASX__SVC_LINK,		/* (of a mux) link MUX STREAM [band N] */
};

#define ASX__SVC_BAND_ANY (-1)	/* a link without "band": every band without its own */

enum asx__svc_type {
	ASX__SVC_T_NONE = 0,
	ASX__SVC_T_OBJECT,	/* Service_Object */
	ASX__SVC_T_MODULE,	/* Module */
	ASX__SVC_T_POLICY,	/* ASC_Policy (an ASX extension: policy.c) */
};

struct asx__svc_loc {
	const char *file;	/* owned by the conf (one copy per file) */
	unsigned int line, col;	/* 1-based; col counts bytes */
};

/* "stream NAME asc N": at most this many VPs */
#define ASX__SVC_ASC_VPS_MAX 64
/* "... qos Q": a PRIO priority from -Q to Q */
#define ASX__SVC_ASC_QOS_MAX 1000000

/* "asc N [policy P] [semantic S] [qos Q]": the ASC of a Stream's Tasks;
 * NAMED: a registered policy by its name (one an "ASC_Policy" loaded) */
enum asx__svc_asc_policy { ASX__SVC_ASC_PRIO, ASX__SVC_ASC_DIRECT, ASX__SVC_ASC_NAMED };

/* a registered ASC policy's name, with its NUL (asx_asc_policy_register()) */
#define ASX__SVC_POLICY_NAME_MAX 32

struct asx__svc_asc {
	int vps;		/* N; 0: no "asc", the Tasks' threads are pthreads */
	int policy;		/* enum asx__svc_asc_policy */
	int semantic;		/* enum asx_asc_semantic; 0: not said (non-preemptive) */
	int prio;		/* PRIO: the threads' priority, their QoS */
	char pname[ASX__SVC_POLICY_NAME_MAX];	/* NAMED: the policy's name */
};

static inline bool asx__svc_asc_same(const struct asx__svc_asc *a, const struct asx__svc_asc *b)
{
	return a->vps == b->vps && a->policy == b->policy && a->semantic == b->semantic &&
	       a->prio == b->prio && !strcmp(a->pname, b->pname);
}

/* "listen ADDRESS [raw|framed]": a Stream's endpoint (endpoint.c) */
enum asx__svc_framing { ASX__SVC_FRAME_RAW = 0, ASX__SVC_FRAME_FD };

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
	struct asx__svc_asc asc;	/* "asc N ...": Task threads on an ASC; vps 0: pthreads */
	char *listen;		/* "listen ADDRESS": the endpoint's address, or NULL */
	int framing;		/* its enum asx__svc_framing */
	int band;		/* a link: its band, or ASX__SVC_BAND_ANY */
	struct asx__svc_ent *mods;	/* in push order: the first is lowest */
	size_t nmods;
	/* ACE's "suspend M", "resume M", "remove M" in the braces: the parser
	 * moves them out as "suspend NAME/M" ... after the Stream (mod set) */
	struct asx__svc_ent *ops;
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

/*
 * How the parser reads files (the top one of asx__svc_parse_file() and
 * every include): the default reads the file system; the fuzzer gives an
 * in-memory one.  open() must not block (a FIFO, a terminal): it only says
 * what the file is; the parser reads only regular files, and only after it
 * has checked their size against the limits.
 */
struct asx__svc_file {
	bool regular;		/* a regular file (nothing else is read) */
	size_t size;		/* its size when opened */
	unsigned long long id[2];	/* identity (device, inode), or 0,0: unknown */
	void *h;		/* the reader's */
};

struct asx__svc_io {
	/* Open @path without blocking: 0 and *f, or -errno. */
	int (*open)(void *ctx, const char *path, struct asx__svc_file *f);
	/*
	 * Read @f (a regular file) whole into @buf, at most @cap bytes: 0 and
	 * *len, -EFBIG if there are more than @cap, or -errno.
	 */
	int (*read)(void *ctx, struct asx__svc_file *f, char *buf, size_t cap, size_t *len);
	void (*close)(void *ctx, struct asx__svc_file *f);
	void *ctx;
};

/* The file system, opened with O_NONBLOCK | O_NOCTTY | O_CLOEXEC. */
extern const struct asx__svc_io asx__svc_io_files;

/* Parse @path (and what it includes).  0 and *out, or -errno and @err. */
int asx__svc_parse_file(const char *path, struct asx__svc_conf **out,
			struct asx__svc_err *err);
/*
 * Parse @len bytes of @text as if read from a file called @name (includes
 * are resolved against @name's directory).
 */
int asx__svc_parse_mem(const char *name, const char *text, size_t len,
		       struct asx__svc_conf **out, struct asx__svc_err *err);
/* The same, with includes (and, for _io_file, @path itself) read through @io. */
int asx__svc_parse_mem_io(const char *name, const char *text, size_t len,
			  const struct asx__svc_io *io, struct asx__svc_conf **out,
			  struct asx__svc_err *err);
int asx__svc_parse_file_io(const char *path, const struct asx__svc_io *io,
			   struct asx__svc_conf **out, struct asx__svc_err *err);
void asx__svc_conf_free(struct asx__svc_conf *conf);

/*
 * A hash index of names, for lookups in constant time: it holds indexes
 * into the caller's array, and name(ctx, i) gives item i's name (so the
 * array may move as it grows).
 */
struct asx__svc_names {
	size_t *slot;		/* index + 1; 0: empty */
	size_t cap, n;
	const char *(*name)(const void *ctx, size_t i);
	const void *ctx;
};

/* Add item @i (whose name is not in @t yet).  0 or -ENOMEM. */
int asx__svc_names_add(struct asx__svc_names *t, size_t i);
/* The index of the item called @name, or SIZE_MAX. */
size_t asx__svc_names_find(const struct asx__svc_names *t, const char *name);
void asx__svc_names_free(struct asx__svc_names *t);

/*
 * Split a directive's parameter string into words as a shell would split
 * plain words and '...' quoted ones (no expansion); argv[0] is @argv0 and
 * argv[argc] is NULL.  Free with free(*argv) (one allocation).  -EINVAL for
 * an unterminated quote.
 */
int asx__svc_split_args(const char *argv0, const char *args, int *argc, char ***argv);

/*
 * The name rule of services, Streams and Modules: is @p[0..n) a letter or
 * '_', then letters, digits, '_', '.' or '-'?  (The length is the caller's
 * to check: it has its own message.)
 */
bool asx__svc_name_ok(const char *p, size_t n);

/*
 * Write "file:line:col: " of @e (if @e) and the message into @err (of
 * @errlen bytes; nothing if NULL); returns @r.
 */
int asx__svc_sayf(char *err, size_t errlen, const struct asx__svc_ent *e, int r,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif /* ASX_SRC_SVC_CONF_H */
