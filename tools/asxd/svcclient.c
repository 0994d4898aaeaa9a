// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svcclient.c - the client half of asxd's control protocol (svcproto.h):
 * where asxd's socket is, connecting to it, sending a request, reading and
 * reading back the answer.  `asxctl svc` is a client; asxd uses the socket
 * path, and connects to find out whether another asxd serves its socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "svcproto.h"

int svcp_socket_in(char *buf, size_t n, const char *dir)
{
	return (size_t)snprintf(buf, n, "%s/%s", dir, SVCP_SOCKET_NAME) < n ? 0 : -ENAMETOOLONG;
}

const char *svcp_server_dir(void)
{
	const char *d = getenv("RUNTIME_DIRECTORY");	/* systemd's RuntimeDirectory= */

	if (!d && geteuid() == 0)
		d = SVCP_SYSTEM_DIR;
	if (!d)
		d = getenv("XDG_RUNTIME_DIR");
	return d;
}

const char *svcp_client_socket(char *buf, size_t n)
{
	const char *s = getenv("ASXD_SOCKET"), *d;

	if (s && *s)
		return s;
	if (!access(SVCP_SYSTEM_DIR "/" SVCP_SOCKET_NAME, F_OK))
		return SVCP_SYSTEM_DIR "/" SVCP_SOCKET_NAME;
	d = getenv("XDG_RUNTIME_DIR");
	if (d && !svcp_socket_in(buf, n, d))
		return buf;
	return SVCP_SYSTEM_DIR "/" SVCP_SOCKET_NAME;
}

int svcp_connect(const char *path, long timeout_s)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = timeout_s };
	int fd, e;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a wedged asxd must not wedge its caller: connect (its backlog full),
	 * send and receive are bounded */
	if (timeout_s > 0) {
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int svcp_send(int fd, const char *cmd, const char *name)
{
	char req[SVCP_LINE_MAX];
	int n = snprintf(req, sizeof(req), "%s %d %s%s%s\n", SVCP_MAGIC, SVCP_VERSION, cmd,
			 name ? " " : "", name ? name : "");

	if (n < 0 || (size_t)n >= sizeof(req))
		return -EMSGSIZE;
	/* asxd may answer (a refusal) and close before reading: read it anyway */
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n && errno != EPIPE)
		return -errno;
	return 0;
}

int svcp_recv(int fd, char **out, size_t *outlen)
{
	size_t len = 0, cap = 0;
	char *resp = NULL;

	*out = NULL;
	*outlen = 0;
	for (;;) {
		ssize_t got;

		if (cap - len < 4096) {
			char *grown = realloc(resp, cap + 65536);

			if (!grown) {
				free(resp);
				return -ENOMEM;
			}
			resp = grown;
			cap += 65536;
		}
		got = recv(fd, resp + len, cap - len - 1, 0);
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			free(resp);
			return -ETIMEDOUT;
		}
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	resp[len] = '\0';
	*out = resp;
	*outlen = len;
	return 0;
}

int svcp_answer(char *resp, char **save, char **msg)
{
	char head[32], *line = strtok_r(resp, "\n", save);
	size_t n = (size_t)snprintf(head, sizeof(head), "%s %d ", SVCP_MAGIC, SVCP_VERSION);

	*msg = line;
	if (!line || strncmp(line, head, n))
		return -EPROTO;
	if (strncmp(line + n, "error ", 6))
		return 0;
	*msg = strchr(line + n + 6, ' ');
	*msg = *msg ? *msg + 1 : line;
	svcp_unescape(*msg);
	return 1;
}

int svcp_send_v(int fd, int version, const char *cmd, const char *name, const char *rest)
{
	char req[SVCP_LINE_MAX + 1];
	int n = snprintf(req, sizeof(req), "%s %d %s %s%s%s\n", SVCP_MAGIC, version, cmd, name,
			 rest ? " " : "", rest ? rest : "");

	if (n < 0 || (size_t)n > SVCP_LINE_MAX)
		return -EMSGSIZE;
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n && errno != EPIPE)
		return -errno;
	return 0;
}

int svcp_answer_v(char *resp, int version, char **save, char **msg)
{
	char head[32], *line = strtok_r(resp, "\n", save);
	size_t n = (size_t)snprintf(head, sizeof(head), "%s %d ", SVCP_MAGIC, version);

	*msg = line;
	if (!line)
		return -EPROTO;
	if (strncmp(line, head, n)) {
		/* an asxd of version 1 refuses a request of a later version in its own */
		static const char v1err[] = SVCP_MAGIC " 1 error ";

		if (strncmp(line, v1err, sizeof(v1err) - 1))
			return -EPROTO;
		n = sizeof(v1err) - 1 - strlen("error ");
	}
	if (strncmp(line + n, "error ", 6))
		return 0;
	*msg = strchr(line + n + 6, ' ');
	*msg = *msg ? *msg + 1 : line;
	svcp_unescape(*msg);
	return 1;
}
