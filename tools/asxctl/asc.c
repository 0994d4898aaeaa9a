// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asc.c - `asxctl asc`: the ASCs of asxd (the user-level schedulers its
 * Streams' "asc N" made), each with its policy, its virtual processors and
 * their state, and its user threads (id, state, the VP running it, name):
 * the resource hierarchy, from protocol version 3 (svcproto.h, svcasc.c).
 * tools/gdb/libasx-gdb.py's "asx ascs" and "asx threads" show the same
 * lists in a debugger.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../asxd/svcproto.h"
#include "asxctl.h"

#define ASC_TIMEOUT_S 30

static void asc_usage(FILE *f)
{
	fputs("usage: asxctl asc [-s SOCKET] [-t SECONDS]\n"
	      "  the ASCs asxd runs: each with its policy, its VPs (kernel thread id, state,\n"
	      "  the thread it runs) and its user threads (id, state, VP, name)\n"
	      "  -s SOCKET, -t SECONDS  as for asxctl svc\n", f);
}

/* Split @line at tabs into at most @n fields (unescaped): how many. */
static int fields(char *line, char **f, int n)
{
	int k = 0;

	while (k < n) {
		char *tab = strchr(line, '\t');

		f[k++] = line;
		if (!tab)
			break;
		*tab = '\0';
		line = tab + 1;
	}
	for (int i = 0; i < k; i++)
		svcp_unescape(f[i]);
	return k;
}

/* Print one data line of the answer; -1 if it is malformed. */
static int print_line(char *line)
{
	char *f[6];
	int k = fields(line, f, 6);

	if (!strcmp(f[0], "asc") && k == 5) {
		printf("ASC %s: policy %s, %s VP%s, %s thread%s\n", f[1], f[2], f[3],
		       strcmp(f[3], "1") ? "s" : "", f[4], strcmp(f[4], "1") ? "s" : "");
	} else if (!strcmp(f[0], "vp") && k == 4) {
		if (strcmp(f[3], "0"))
			printf("  VP %-8s %-8s runs %s\n", f[1], f[2], f[3]);
		else
			printf("  VP %-8s %s\n", f[1], f[2]);
	} else if (!strcmp(f[0], "thread") && k == 5) {
		bool on = strcmp(f[3], "0"), named = *f[4];

		printf("  thread %-18s %s", f[1], f[2]);
		if (on || named)	/* (padded only when something follows) */
			printf("%*s", (int)(8 - (strlen(f[2]) < 8 ? strlen(f[2]) : 8)), "");
		if (on)
			printf(" on VP %s", f[3]);
		if (named)
			printf(" '%s'", f[4]);
		putchar('\n');
	} else {
		return -1;
	}
	return 0;
}

int asxctl_asc(int argc, char **argv)
{
	char buf[256], *resp = NULL, *line, *save = NULL;
	const char *sock = NULL;
	long timeout = ASC_TIMEOUT_S;
	size_t len = 0;
	int i = 1, fd, r, ret = 0, nasc = 0;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		asc_usage(stdout);
		return 0;
	}
	if (asxctl_conn_opts("asc", argc, argv, &i, &sock, &timeout))
		return 2;
	if (i < argc) {
		fprintf(stderr, "asxctl asc: unexpected argument '%s'\n", argv[i]);
		asc_usage(stderr);
		return 2;
	}
	if (!sock)
		sock = svcp_client_socket(buf, sizeof(buf));
	fd = svcp_connect(sock, timeout);
	if (fd < 0) {
		fprintf(stderr, "asxctl asc: cannot reach asxd at %s: %s\n", sock, strerror(-fd));
		return fd == -ENAMETOOLONG ? 2 : 3;
	}
	r = svcp_send_v(fd, SVCP_VERSION_ASC, "asc", "", NULL);
	if (!r)
		r = svcp_recv(fd, &resp, &len);
	close(fd);
	if (r) {
		fprintf(stderr, "asxctl asc: talking to asxd at %s: %s\n", sock, strerror(-r));
		free(resp);
		return r == -ENOMEM ? 1 : 3;
	}
	r = svcp_answer_v(resp, SVCP_VERSION_ASC, &save, &line);
	if (r < 0) {
		fprintf(stderr, "asxctl asc: not an asxd answer: %.80s\n", line ? line : "");
		ret = 1;
	} else if (r) {
		fprintf(stderr, "asxctl asc: %s%s\n", line,
			strstr(line, "unsupported protocol version") ?
			" (this asxd is older than asxctl asc)" : "");
		ret = 1;
	} else {
		while ((line = strtok_r(NULL, "\n", &save)) && strcmp(line, ".")) {
			nasc += !strncmp(line, "asc\t", 4);
			if (print_line(line)) {
				fprintf(stderr, "asxctl asc: a malformed answer line\n");
				ret = 1;
				break;
			}
		}
		if (!ret && !nasc)
			printf("no ASC\n");
	}
	free(resp);
	return ret;
}
