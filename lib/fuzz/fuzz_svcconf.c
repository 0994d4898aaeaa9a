// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fuzz_svcconf.c - libFuzzer target for the svc.conf parser, includes and
 * all.
 *
 * The input is a set of files in memory.  Up to the first line "--- NAME"
 * it is fuzz.conf, the file parsed; each "--- NAME" line starts the file
 * NAME, which fuzz.conf and the others may include ("--- NAME !" makes NAME
 * something that is not a regular file, a FIFO say).  Includes go through
 * an in-memory reader (asx__svc_parse_mem_io), which checks what the parser
 * does with it: every load stays within the documented bounds (at most
 * ASX__SVC_INCLUDES_MAX includes, ASX__SVC_TOTAL_MAX bytes read, nesting
 * at most ASX__SVC_INCLUDE_DEPTH below the top file), every file opened is
 * closed, and nothing that is not a regular file is ever read (a read of a
 * FIFO is what wedged asxd).  So an include bomb or a FIFO is the kind of
 * input this target finds.
 *
 * Then either the text parses, and every directive must be well formed (a
 * valid name, a factory and a path for each dynamic entry, kernel modules
 * only at the bottom of kernel Streams) and every parameter string must
 * split; or it fails with a message that names a file and a position.
 * Sanitizers catch any read outside the input.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "svc/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILES_MAX 64

struct mfile {
	char name[128];
	const char *text;
	size_t len;
	bool regular;
};

struct mfs {
	struct mfile f[FILES_MAX];
	size_t n;
	size_t opens, open_now, bytes;
};

static int m_open(void *ctx, const char *path, struct asx__svc_file *f)
{
	struct mfs *fs = ctx;

	for (size_t i = 0; i < fs->n; i++)
		if (!strcmp(fs->f[i].name, path)) {
			f->regular = fs->f[i].regular;
			f->size = fs->f[i].len;
			f->id[0] = 1;
			f->id[1] = i + 1;
			f->h = &fs->f[i];
			fs->opens++;
			fs->open_now++;
			/* each include opens once, and the top file is not opened here */
			if (fs->opens > ASX__SVC_INCLUDES_MAX)
				abort();
			return 0;
		}
	return -ENOENT;
}

static int m_read(void *ctx, struct asx__svc_file *f, char *buf, size_t cap, size_t *len)
{
	struct mfs *fs = ctx;
	const struct mfile *m = f->h;

	if (!m->regular)
		abort();	/* a FIFO's read blocks: the parser must not read one */
	if (m->len > cap)
		return -EFBIG;
	memcpy(buf, m->text, m->len);
	*len = m->len;
	fs->bytes += m->len;
	if (fs->bytes > ASX__SVC_TOTAL_MAX)
		abort();
	return 0;
}

static void m_close(void *ctx, struct asx__svc_file *f)
{
	struct mfs *fs = ctx;

	(void)f;
	if (!fs->open_now--)
		abort();
}

/* Split @d into fuzz.conf (its length is returned) and the files after it. */
static size_t split(const char *d, size_t size, struct mfs *fs)
{
	struct mfile *cur = NULL;
	size_t top = size, pos = 0;

	while (pos < size) {
		const char *nl = memchr(d + pos, '\n', size - pos);
		size_t end = nl ? (size_t)(nl - d) : size;	/* the line is [pos, end) */

		if (end - pos >= 4 && !memcmp(d + pos, "--- ", 4) && fs->n < FILES_MAX) {
			size_t body_end = pos ? pos - 1 : 0;	/* (the '\n' before the marker) */
			size_t n = end - pos - 4;

			if (!cur)
				top = body_end;
			else
				cur->len = body_end > (size_t)(cur->text - d) ?
					   body_end - (size_t)(cur->text - d) : 0;
			cur = &fs->f[fs->n++];
			cur->regular = !(n >= 2 && !memcmp(d + end - 2, " !", 2));
			if (!cur->regular)
				n -= 2;
			if (n >= sizeof(cur->name))
				n = sizeof(cur->name) - 1;
			memcpy(cur->name, d + pos + 4, n);
			cur->name[n] = '\0';
			cur->text = d + (nl ? end + 1 : size);
		}
		pos = end + 1;
	}
	if (cur)
		cur->len = size - (size_t)(cur->text - d);
	return top;
}

static void check_ent(const struct asx__svc_ent *e, bool kernel_ok)
{
	char **v;
	int n;

	if (!e->name[0] || strlen(e->name) >= ASX__SVC_NAME_MAX)
		abort();
	if (e->dir == ASX__SVC_DYNAMIC && (!e->path || !e->factory || !e->factory[0]))
		abort();
	if (e->dir == ASX__SVC_KERNEL && !kernel_ok)
		abort();
	if (e->loc.line < 1 || e->loc.col < 1 || !e->loc.file)
		abort();
	if (asx__svc_split_args(e->name, e->args, &n, &v) == 0) {
		if (n < 1 || v[n] || strcmp(v[0], e->name))
			abort();
		free(v);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mfs fs;
	struct asx__svc_io io = { .open = m_open, .read = m_read, .close = m_close, .ctx = &fs };
	struct asx__svc_conf *c;
	struct asx__svc_err err;
	size_t n = 0, top;
	int r;

	memset(&fs, 0, sizeof(fs));
	top = split((const char *)data, size, &fs);
	r = asx__svc_parse_mem_io("fuzz.conf", (const char *)data, top, &io, &c, &err);
	if (fs.open_now)
		abort();	/* a file left open */
	if (r) {
		if (c || !err.err || err.err != r || !strchr(err.msg, ':'))
			abort();
		return 0;
	}
	/* the top file, then one per include: nesting within bounds */
	if (c->nfiles != fs.opens + 1)
		abort();
	for (const struct asx__svc_ent *e = c->head; e; e = e->next, n++) {
		bool below = true;

		check_ent(e, false);
		for (size_t i = 0; i < e->nmods; i++) {
			check_ent(&e->mods[i], e->kernel && below);
			below = e->mods[i].dir == ASX__SVC_KERNEL;
		}
	}
	if (n != c->n)
		abort();
	asx__svc_conf_free(c);
	return 0;
}
