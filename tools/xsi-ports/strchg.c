// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * strchg.c - Solaris' strchg(1), "change stream configuration", rewritten
 * from its manual page (no code copied).  It works on the Stream that is
 * its standard input:
 *
 *   strchg -h module1[,module2...]  push the modules, in that order (the
 *                                   last named ends on top)
 *   strchg -p                       pop the topmost module
 *   strchg -p -a                    pop every module
 *   strchg -p -u module             pop every module above the named one
 *   strchg -f file                  push and pop to make the Stream's modules
 *                                   those the file names, one a line,
 *                                   topmost first
 *
 * Exit status 0, or 1 for a usage error or a failed call (with a message).
 *
 * XSI calls: ioctl(I_PUSH), ioctl(I_POP), ioctl(I_LOOK), ioctl(I_FIND),
 * ioctl(I_LIST), isastream().
 *
 * THE ONE LINE THAT DIFFERS: none in this file; the Stream is opened by
 * whoever starts it (a shell's "exec 3<>/dev/asx" and "strchg ... <&3").
 * The include is <asx/stropts.h>.  Solaris' strchg also refuses a user who
 * neither owns the Stream's device node nor is the superuser; an asx.ko
 * Stream is its opener's alone (each open of /dev/asx is a new one, the
 * node root's), so that check is left out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/stropts.h>

#define MAXMODS 64

static int usage(void)
{
	fprintf(stderr, "usage: strchg -h module1[,module2...]\n"
			"       strchg -p [-a | -u module]\n"
			"       strchg -f file\n");
	return 1;
}

static int push(const char *name)
{
	if (ioctl(STDIN_FILENO, I_PUSH, name) < 0) {
		fprintf(stderr, "strchg: I_PUSH %s: %s\n", name, strerror(errno));
		return -1;
	}
	return 0;
}

static int pop(void)
{
	if (ioctl(STDIN_FILENO, I_POP, 0) < 0) {
		fprintf(stderr, "strchg: I_POP: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* The Stream's modules, topmost first, into @mods; their number, or -1. */
static int current(struct str_mlist *mods)
{
	struct str_list sl = { MAXMODS + 1, mods };
	int n = ioctl(STDIN_FILENO, I_LIST, &sl);

	if (n < 0) {
		perror("strchg: I_LIST");
		return -1;
	}
	return sl.sl_nmods - 1;	/* the last is the driver */
}

static int push_list(char *list)
{
	char *save, *name;

	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save))
		if (push(name))
			return 1;
	return 0;
}

/* -u: pop until @name is on top. */
static int pop_upto(const char *name)
{
	char top[FMNAMESZ + 1];

	if (ioctl(STDIN_FILENO, I_FIND, name) <= 0) {
		fprintf(stderr, "strchg: %s is not on the stream\n", name);
		return 1;
	}
	while (ioctl(STDIN_FILENO, I_LOOK, top) == 0 && strcmp(top, name))
		if (pop())
			return 1;
	return 0;
}

static int pop_all(void)
{
	char top[FMNAMESZ + 1];

	while (ioctl(STDIN_FILENO, I_LOOK, top) == 0)
		if (pop())
			return 1;
	return 0;
}

/* -f: the file's modules (topmost first) made the Stream's. */
static int from_file(const char *path)
{
	struct str_mlist now[MAXMODS + 1];
	char want[MAXMODS][FMNAMESZ + 1], line[256];
	int nwant = 0, nnow, keep, i;
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "strchg: %s: %s\n", path, strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, " \t\n")] = 0;
		if (!line[0])
			continue;
		if (nwant == MAXMODS || strlen(line) > FMNAMESZ) {
			fprintf(stderr, "strchg: %s: too many modules or name too long\n", path);
			fclose(f);
			return 1;
		}
		strcpy(want[nwant++], line);
	}
	fclose(f);
	nnow = current(now);
	if (nnow < 0)
		return 1;
	/* the modules nearest the driver both lists share stay */
	for (keep = 0; keep < nnow && keep < nwant; keep++)
		if (strcmp(now[nnow - 1 - keep].l_name, want[nwant - 1 - keep]))
			break;
	for (i = 0; i < nnow - keep; i++)
		if (pop())
			return 1;
	for (i = nwant - 1 - keep; i >= 0; i--)
		if (push(want[i]))
			return 1;
	return 0;
}

int main(int argc, char **argv)
{
	int opt, popping = 0, all = 0;
	char *pushes = NULL;
	const char *upto = NULL, *file = NULL;

	while ((opt = getopt(argc, argv, "h:pau:f:")) != -1) {
		switch (opt) {
		case 'h': pushes = optarg; break;
		case 'p': popping = 1; break;
		case 'a': all = 1; break;
		case 'u': upto = optarg; break;
		case 'f': file = optarg; break;
		default: return usage();
		}
	}
	if (optind != argc || (!!pushes + popping + !!file) != 1 ||
	    ((all || upto) && !popping) || (all && upto))
		return usage();
	if (!isastream(STDIN_FILENO)) {
		fprintf(stderr, "strchg: standard input is not a stream\n");
		return 1;
	}
	if (pushes)
		return push_list(pushes);
	if (file)
		return from_file(file);
	if (all)
		return pop_all();
	if (upto)
		return pop_upto(upto);
	return pop() ? 1 : 0;
}
