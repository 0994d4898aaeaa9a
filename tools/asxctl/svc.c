// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svc.c - `asxctl svc`: ask a running asxd to list, suspend, resume or
 * remove its services, or to reload its svc.conf (protocol: svcproto.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
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

static const char *find_socket(char *buf, size_t n)
{
	const char *s = getenv("ASXD_SOCKET"), *d;

	if (s && *s)
		return s;
	if (!access("/run/asx/asxd.sock", F_OK))
		return "/run/asx/asxd.sock";
	d = getenv("XDG_RUNTIME_DIR");
	if (d && (size_t)snprintf(buf, n, "%s/asxd.sock", d) < n)
		return buf;
	return "/run/asx/asxd.sock";
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
	       stream ? "stream" : f[2] && strcmp(f[2], "-") ? f[2] : "(linked in)",
	       f[3] && !stream ? ":" : "", f[3] && !stream ? f[3] : "",
	       f[4] && *f[4] ? " \"" : "", f[4] && *f[4] ? f[4] : "", f[4] && *f[4] ? "\"" : "");
	if (f[5] && *f[5])
		printf("%16s   %s\n", "", f[5]);
}

int asxctl_svc(int argc, char **argv)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char buf[256], req[SVCP_LINE_MAX], *resp = NULL, *line, *save;
	const char *sock = NULL, *cmd, *name = NULL;
	size_t len = 0, cap = 0;
	int i = 1, fd, ret = 0;
	long timeout = SVC_TIMEOUT_S;
	struct timeval tv;

	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		svc_usage(stdout);
		return 0;
	}
	while (i < argc && (!strcmp(argv[i], "-s") || !strcmp(argv[i], "-t"))) {
		char *end;

		if (i + 1 >= argc) {
			fprintf(stderr, "asxctl svc: %s needs an argument (asxctl svc --help)\n",
				argv[i]);
			return 2;
		}
		if (argv[i][1] == 's') {
			sock = argv[i + 1];
		} else {
			errno = 0;
			timeout = strtol(argv[i + 1], &end, 10);
			if (errno || end == argv[i + 1] || *end || timeout <= 0 ||
			    timeout > 86400) {
				fprintf(stderr, "asxctl svc: -t takes seconds (1-86400), not '%s'\n",
					argv[i + 1]);
				return 2;
			}
		}
		i += 2;
	}
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
	if (name && (strlen(name) >= 64 || strpbrk(name, " \t\n"))) {
		fprintf(stderr, "asxctl svc %s: '%s' cannot be a service name\n", cmd, name);
		return 2;
	}
	if (!sock)
		sock = find_socket(buf, sizeof(buf));
	if (strlen(sock) >= sizeof(a.sun_path)) {
		fprintf(stderr, "asxctl svc: socket path too long: %s\n", sock);
		return 2;
	}
	strcpy(a.sun_path, sock);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* a wedged asxd must not wedge its caller: connect (its backlog full),
	 * send and receive are bounded */
	tv.tv_sec = timeout;
	tv.tv_usec = 0;
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "asxctl svc: cannot reach asxd at %s: %s\n", sock, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 3;
	}
	snprintf(req, sizeof(req), "%s %d %s%s%s\n", SVCP_MAGIC, SVCP_VERSION, cmd,
		 name ? " " : "", name ? name : "");
	/* asxd may answer (a refusal) and close before reading: read it anyway */
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) != (ssize_t)strlen(req) && errno != EPIPE) {
		fprintf(stderr, "asxctl svc: sending to %s: %s\n", sock, strerror(errno));
		close(fd);
		return 3;
	}
	for (;;) {
		ssize_t got;

		if (cap - len < 4096) {
			char *grown = realloc(resp, cap + 65536);

			if (!grown) {
				fprintf(stderr, "asxctl svc: out of memory\n");
				free(resp);
				close(fd);
				return 1;
			}
			resp = grown;
			cap += 65536;
		}
		got = recv(fd, resp + len, cap - len - 1, 0);
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			fprintf(stderr, "asxctl svc: no answer from asxd at %s within %ld s "
				"(asxctl svc -t SECONDS to wait longer)\n", sock, timeout);
			free(resp);
			close(fd);
			return 3;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	if (!resp || !len) {
		fprintf(stderr, "asxctl svc: asxd closed the connection without an answer\n");
		free(resp);
		return 1;
	}
	resp[len] = '\0';
	line = strtok_r(resp, "\n", &save);
	snprintf(req, sizeof(req), "%s %d ", SVCP_MAGIC, SVCP_VERSION);
	if (!line || strncmp(line, req, strlen(req))) {
		fprintf(stderr, "asxctl svc: not an asxd answer: %.80s\n", line ? line : "");
		ret = 1;
	} else if (!strncmp(line + strlen(req), "error ", 6)) {
		char *msg = strchr(line + strlen(req) + 6, ' ');

		msg = msg ? msg + 1 : line;
		svcp_unescape(msg);
		fprintf(stderr, "asxctl svc: %s\n", msg);
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
