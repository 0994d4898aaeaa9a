// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svc.c - `asxctl svc`: ask a running asxd to list, suspend, resume or
 * remove its services, or to reload its svc.conf (protocol: svcproto.h; its
 * client half, svcclient.c, does the talking).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../asxd/svcproto.h"
#include "asxctl.h"

/* How long to wait for asxd's answer unless -t says otherwise. */
#define SVC_TIMEOUT_S	30

static void svc_usage(FILE *f)
{
	fputs("usage: asxctl svc [-s SOCKET] [-t SECONDS] list | reload | suspend NAME | resume NAME |\n"
	      "                  remove NAME\n"
	      "  -s SOCKET   asxd's control socket (default: $ASXD_SOCKET, else\n"
	      "              /run/asx/asxd.sock if it exists, else $XDG_RUNTIME_DIR/asxd.sock)\n"
	      "  -t SECONDS  give up when asxd has not answered in that time (default 30)\n", f);
}

/* Print one list line as a row: the six fields unescaped. */
static void print_row(char *line)
{
	char *f[6] = { 0 };
	int k = 0;

	for (char *p = line; k < 6; k++) {
		f[k] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = '\0';
	}
	for (int i = 0; i < 6; i++)
		if (f[i])
			svcp_unescape(f[i]);
	bool stream = f[2] && !strcmp(f[2], "=");

	printf("%-16s %-9s %s%s%s%s%s%s\n", f[0], f[1] ? f[1] : "?",
	       stream ? (f[3] && *f[3] ? f[3] : "stream") :	/* "stream" or "mux" */
	       f[2] && strcmp(f[2], "-") ? f[2] : "(linked in)",
	       f[3] && !stream ? ":" : "", f[3] && !stream ? f[3] : "",
	       f[4] && *f[4] ? " \"" : "", f[4] && *f[4] ? f[4] : "", f[4] && *f[4] ? "\"" : "");
	if (f[5] && *f[5])
		printf("%16s   %s\n", "", f[5]);
}

int asxctl_conn_opts(const char *who, int argc, char **argv, int *i, const char **sock,
		     long *timeout)
{
	while (*i < argc && (!strcmp(argv[*i], "-s") || !strcmp(argv[*i], "-t"))) {
		char *end;

		if (*i + 1 >= argc) {
			fprintf(stderr, "asxctl %s: %s needs an argument (asxctl %s --help)\n", who,
				argv[*i], who);
			return 2;
		}
		if (argv[*i][1] == 's') {
			*sock = argv[*i + 1];
		} else {
			errno = 0;
			*timeout = strtol(argv[*i + 1], &end, 10);
			if (errno || end == argv[*i + 1] || *end || *timeout <= 0 ||
			    *timeout > 86400) {
				fprintf(stderr, "asxctl %s: -t takes seconds (1-86400), not '%s'\n",
					who, argv[*i + 1]);
				return 2;
			}
		}
		*i += 2;
	}
	return 0;
}

int asxctl_svc(int argc, char **argv)
{
	char buf[256], *resp = NULL, *line, *save = NULL;
	const char *sock = NULL, *cmd, *name = NULL;
	size_t len = 0;
	int i = 1, fd, r, ret = 0;
	long timeout = SVC_TIMEOUT_S;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		svc_usage(stdout);
		return 0;
	}
	if (asxctl_conn_opts("svc", argc, argv, &i, &sock, &timeout))
		return 2;
	if (i >= argc) {
		svc_usage(stderr);
		return 2;
	}
	cmd = argv[i++];
	if (!strcmp(cmd, "suspend") || !strcmp(cmd, "resume") || !strcmp(cmd, "remove")) {
		if (i >= argc) {
			fprintf(stderr, "asxctl svc %s: which service? (asxctl svc %s NAME)\n", cmd, cmd);
			return 2;
		}
		name = argv[i++];
	} else if (strcmp(cmd, "list") && strcmp(cmd, "reload")) {
		fprintf(stderr, "asxctl svc: unknown command '%s' (list, reload, suspend, resume, remove)\n",
			cmd);
		return 2;
	}
	if (i < argc) {
		fprintf(stderr, "asxctl svc %s: unexpected argument '%s'\n", cmd, argv[i]);
		return 2;
	}
	if (name && svcp_name_bad(name)) {
		fprintf(stderr, "asxctl svc %s: '%s' cannot be a service name: %s\n", cmd, name,
			svcp_name_bad(name));
		return 2;
	}
	if (!sock)
		sock = svcp_client_socket(buf, sizeof(buf));
	fd = svcp_connect(sock, timeout);
	if (fd == -ENAMETOOLONG) {
		fprintf(stderr, "asxctl svc: socket path too long: %s\n", sock);
		return 2;
	}
	if (fd < 0) {
		fprintf(stderr, "asxctl svc: cannot reach asxd at %s: %s\n", sock, strerror(-fd));
		return 3;
	}
	r = svcp_send(fd, cmd, name);
	if (r) {
		fprintf(stderr, "asxctl svc: sending to %s: %s\n", sock, strerror(-r));
		close(fd);
		return 3;
	}
	r = svcp_recv(fd, &resp, &len);
	close(fd);
	if (r == -ENOMEM) {
		fprintf(stderr, "asxctl svc: out of memory\n");
		return 1;
	}
	if (r) {
		fprintf(stderr, "asxctl svc: no answer from asxd at %s within %ld s "
			"(asxctl svc -t SECONDS to wait longer)\n", sock, timeout);
		return 3;
	}
	if (!len) {
		fprintf(stderr, "asxctl svc: asxd closed the connection without an answer\n");
		free(resp);
		return 1;
	}
	r = svcp_answer(resp, &save, &line);
	if (r < 0) {
		fprintf(stderr, "asxctl svc: not an asxd answer: %.80s\n", line ? line : "");
		ret = 1;
	} else if (r) {
		fprintf(stderr, "asxctl svc: %s\n", line);
		ret = 1;
	} else {
		while ((line = strtok_r(NULL, "\n", &save)) && strcmp(line, "."))
			print_row(line);
		if (!strcmp(cmd, "reload"))
			printf("reloaded\n");
	}
	free(resp);
	return ret;
}
