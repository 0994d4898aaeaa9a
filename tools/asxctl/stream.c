// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stream.c - `asxctl stream put NAME DATA` and `asxctl stream get NAME`:
 * a test message down a Stream that asxd runs from its svc.conf, and the
 * next message that reached its head (protocol version 2, svcproto.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../asxd/svcproto.h"
#include "asxctl.h"

#define STREAM_TIMEOUT_S 30

static void stream_usage(FILE *f)
{
	fputs("usage: asxctl stream [-s SOCKET] [-t SECONDS] put NAME DATA | get NAME [-w MS]\n"
	      "  put NAME DATA  send DATA (one argument) down Stream NAME from its head, as one\n"
	      "                 DATA message (at most about 450 bytes)\n"
	      "  get NAME       print the next message that reached NAME's head: a DATA\n"
	      "                 message's bytes and a newline; another type as\n"
	      "                 [type T band B] and its bytes\n"
	      "  -w MS          how long get waits for one (0-5000 ms, default 1000)\n"
	      "  -s SOCKET, -t SECONDS  as for asxctl svc\n", f);
}

int asxctl_stream(int argc, char **argv)
{
	char buf[256], rest[SVCP_LINE_MAX], *resp = NULL, *line, *save = NULL;
	const char *sock = NULL, *cmd, *name, *wait = NULL;
	long timeout = STREAM_TIMEOUT_S;
	size_t len = 0;
	int i = 1, fd, r, ret = 0;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		stream_usage(stdout);
		return 0;
	}
	while (i + 1 < argc && (!strcmp(argv[i], "-s") || !strcmp(argv[i], "-t"))) {
		if (argv[i][1] == 's') {
			sock = argv[i + 1];
		} else {
			char *end;

			timeout = strtol(argv[i + 1], &end, 10);
			if (*end || timeout <= 0 || timeout > 86400) {
				fprintf(stderr, "asxctl stream: -t takes seconds (1-86400), not '%s'\n",
					argv[i + 1]);
				return 2;
			}
		}
		i += 2;
	}
	if (i + 1 >= argc) {
		stream_usage(stderr);
		return 2;
	}
	cmd = argv[i++];
	name = argv[i++];
	rest[0] = '\0';
	if (!strcmp(cmd, "put") && i + 1 == argc) {
		len = 0;
		if (svcp_escape_bytes(rest, SVCP_LINE_MAX - 96, &len, argv[i], strlen(argv[i]))) {
			fprintf(stderr, "asxctl stream put: DATA is too long for one request\n");
			return 2;
		}
		i++;
	} else if (!strcmp(cmd, "get") && i + 2 == argc && !strcmp(argv[i], "-w")) {
		wait = argv[i + 1];
		i += 2;
	} else if (strcmp(cmd, "get") || i != argc) {
		stream_usage(stderr);
		return 2;
	}
	if (svcp_name_bad(name) || strchr(name, '/')) {
		fprintf(stderr, "asxctl stream %s: '%s' cannot be a Stream's name\n", cmd, name);
		return 2;
	}
	if (!sock)
		sock = svcp_client_socket(buf, sizeof(buf));
	fd = svcp_connect(sock, timeout);
	if (fd < 0) {
		fprintf(stderr, "asxctl stream: cannot reach asxd at %s: %s\n", sock, strerror(-fd));
		return 3;
	}
	r = svcp_send_v(fd, SVCP_VERSION_STREAM, cmd, name, !strcmp(cmd, "put") ? rest : wait);
	if (!r)
		r = svcp_recv(fd, &resp, &len);
	close(fd);
	if (r) {
		fprintf(stderr, "asxctl stream: talking to asxd at %s: %s\n", sock, strerror(-r));
		free(resp);
		return 3;
	}
	r = svcp_answer_v(resp, SVCP_VERSION_STREAM, &save, &line);
	if (r < 0) {
		fprintf(stderr, "asxctl stream: not an asxd answer: %.80s\n", line ? line : "");
		ret = 1;
	} else if (r) {
		fprintf(stderr, "asxctl stream: %s\n", line);
		ret = 1;
	} else if (!strcmp(cmd, "get")) {
		/* "TYPE\tBAND\tBYTES" */
		char *data = NULL;
		unsigned int type = 0, band = 0;
		int off = 0;

		line = strtok_r(NULL, "\n", &save);
		if (line && sscanf(line, "%u\t%u\t%n", &type, &band, &off) == 2)
			data = line + off;
		if (!data) {
			fprintf(stderr, "asxctl stream get: a malformed answer\n");
			ret = 1;
		} else {
			size_t n = svcp_unescape_bytes(data);

			if (type != 0)
				printf("[type %u band %u] ", type, band);
			fflush(stdout);
			if (fwrite(data, 1, n, stdout) != n || putchar('\n') == EOF)
				ret = 1;
		}
	}
	free(resp);
	return ret;
}
