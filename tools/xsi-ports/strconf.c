// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * strconf.c - Solaris' strconf(1), "query stream configuration", rewritten
 * from its manual page (no code copied).  It works on the Stream that is
 * its standard input:
 *
 *   strconf            the modules, topmost first, then the driver, one a line
 *   strconf -t         the topmost module only (nothing if there is none)
 *   strconf -m module  "yes" (exit 0) if the module is on the Stream, else
 *                      "no" (exit 2)
 *
 * Exit status 1 for a usage error or a failed call.
 *
 * XSI calls: ioctl(I_LIST) (with NULL for the count, then the names),
 * ioctl(I_LOOK), ioctl(I_FIND), isastream().
 *
 * THE ONE LINE THAT DIFFERS: none in this file; the Stream is opened by
 * whoever starts it (a shell's "exec 3<>/dev/asx" and "strconf <&3" where
 * Solaris had a terminal or a device node).  The include is <asx/stropts.h>.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/stropts.h>

static int usage(void)
{
	fprintf(stderr, "usage: strconf [-t | -m module]\n");
	return 1;
}

static int list_all(void)
{
	struct str_list sl;
	int n, i;

	n = ioctl(STDIN_FILENO, I_LIST, NULL);	/* modules and the driver */
	if (n < 0) {
		perror("strconf: I_LIST");
		return 1;
	}
	sl.sl_nmods = n;
	sl.sl_modlist = calloc(n, sizeof(*sl.sl_modlist));
	if (!sl.sl_modlist) {
		perror("strconf");
		return 1;
	}
	if (ioctl(STDIN_FILENO, I_LIST, &sl) < 0) {
		perror("strconf: I_LIST");
		free(sl.sl_modlist);
		return 1;
	}
	for (i = 0; i < sl.sl_nmods; i++)
		printf("%s\n", sl.sl_modlist[i].l_name);
	free(sl.sl_modlist);
	return 0;
}

int main(int argc, char **argv)
{
	char top[FMNAMESZ + 1];
	int opt, topmost = 0, r;
	const char *module = NULL;

	while ((opt = getopt(argc, argv, "tm:")) != -1) {
		if (opt == 't')
			topmost = 1;
		else if (opt == 'm')
			module = optarg;
		else
			return usage();
	}
	if (optind != argc || (topmost && module))
		return usage();
	if (!isastream(STDIN_FILENO)) {
		fprintf(stderr, "strconf: standard input is not a stream\n");
		return 1;
	}
	if (module) {
		r = ioctl(STDIN_FILENO, I_FIND, module);
		if (r < 0) {
			perror("strconf: I_FIND");
			return 1;
		}
		printf("%s\n", r ? "yes" : "no");
		return r ? 0 : 2;
	}
	if (topmost) {
		if (ioctl(STDIN_FILENO, I_LOOK, top) < 0) {
			if (errno == EINVAL)
				return 0;	/* no module: nothing to print */
			perror("strconf: I_LOOK");
			return 1;
		}
		printf("%s\n", top);
		return 0;
	}
	return list_all();
}
