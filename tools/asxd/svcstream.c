// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svcstream.c - asxd's requests of protocol version 2 (svcproto.h): put a
 * test message down a configured Stream, get the next one that reached its
 * head (`asxctl stream put NAME DATA`, `asxctl stream get NAME`).
 *
 * Called from asxd's loop with no job running (the Stream cannot be
 * removed meanwhile: only a job changes the repository).  A Stream with an
 * endpoint ("listen") has its head served there: get is refused (the
 * endpoint takes what arrives), put is allowed (a message asxd puts has
 * no connection, so what comes back of it goes to every client).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <asx/msg.h>
#include <asx/stream.h>
#include <asx/svc.h>

#include "svcproto.h"
#include "svcstream.h"

static void v2_error(int fd, int err, const char *fmt, const char *a, const char *b)
{
	char msg[SVCP_LINE_MAX], line[2 * SVCP_LINE_MAX];
	size_t len;

	snprintf(msg, sizeof(msg), fmt, a, b);
	len = (size_t)snprintf(line, sizeof(line), "%s %d error %d ", SVCP_MAGIC,
			       SVCP_VERSION_STREAM, err);
	if (svcp_escape(line, sizeof(line) - 1, &len, msg))
		len = strlen(line);
	line[len++] = '\n';
	svcp_write_all(fd, line, len);
}

static bool has_endpoint(struct asx_svc_repo *repo, const char *name)
{
	struct asx_svc_info in;

	return !asx_svc_find(repo, name, &in) && strstr(in.desc, "listening on ");
}

static void do_put(int fd, struct asx_stream *s, const char *name, char *data)
{
	size_t n = svcp_unescape_bytes(data);
	struct asx_msg *m = asx_msg_alloc(n, ASX_MSG_DATA);
	struct timespec dl;
	char ok[32];
	int r;

	if (!m) {
		v2_error(fd, ENOMEM, "put %s: %s", name, "out of memory");
		return;
	}
	memcpy(m->wr, data, n);
	m->wr += n;
	r = asx_stream_put(s, m, 0, asx_deadline(&dl, 1000000000ull));
	if (r) {
		asx_msg_free(m);
		v2_error(fd, -r, "put %s: %s", name,
			 r == -ETIMEDOUT ? "the Stream is full (flow-controlled for 1 s)" :
			 strerror(-r));
		return;
	}
	snprintf(ok, sizeof(ok), "%s %d ok\n.\n", SVCP_MAGIC, SVCP_VERSION_STREAM);
	svcp_write_all(fd, ok, strlen(ok));
}

static void do_get(int fd, struct asx_stream *s, const char *name, long ms)
{
	struct timespec dl;
	struct asx_msg *m;
	size_t n, len;
	char *line;
	int r = asx_stream_get(s, &m, 0, asx_deadline(&dl, (uint64_t)ms * 1000000ull));

	if (r) {
		char w[32];

		snprintf(w, sizeof(w), "%ld ms", ms);
		v2_error(fd, -r, r == -ETIMEDOUT ? "get %s: no message reached its head in %s" :
			 "get %s: %s", name, r == -ETIMEDOUT ? w : strerror(-r));
		return;
	}
	n = asx_msg_length(m);
	line = malloc(4 * n + 96);
	if (!line) {
		asx_msg_free_chain(m);
		v2_error(fd, ENOMEM, "get %s: %s", name, "out of memory");
		return;
	}
	len = (size_t)sprintf(line, "%s %d ok\n%u\t%u\t", SVCP_MAGIC, SVCP_VERSION_STREAM,
			      m->type, m->band);
	for (struct asx_msg *b = m; b; b = b->cont)
		(void)svcp_escape_bytes(line, 4 * n + 96, &len, b->rd, (size_t)(b->wr - b->rd));
	memcpy(line + len, "\n.\n", 3);
	svcp_write_all(fd, line, len + 3);
	free(line);
	asx_msg_free_chain(m);
}

void svcd_stream_request(int fd, struct asx_svc_repo *repo, char *line, bool busy)
{
	char cmd[8] = "", name[ASX_SVC_NAME_MAX + 1] = "", *rest;
	int off = 0;
	struct asx_stream *s;
	long ms = SVCP_GET_WAIT_MS;
	int r;

	/* "ASX-SVC 2 CMD NAME[ REST]" */
	if (sscanf(line, SVCP_MAGIC " %*d %7s %64s%n", cmd, name, &off) != 2) {
		v2_error(fd, EINVAL, "%s%s", "version 2 has put NAME DATA and get NAME [MS]", "");
		return;
	}
	rest = line + off;
	if (*rest == ' ')
		rest++;
	if (svcp_name_bad(name) || strchr(name, '/')) {
		v2_error(fd, EINVAL, "'%s' cannot be a Stream's name%s", name, "");
		return;
	}
	if (busy) {
		v2_error(fd, EBUSY, "%s %s: busy: a load or reload of svc.conf is running; try again later",
			 cmd, name);
		return;
	}
	r = asx_svc_stream(repo, name, &s);
	if (r) {
		v2_error(fd, -r, r == -ENOENT ? "%s %s: no such stream" :
			 "%s %s: a service, not a stream", cmd, name);
		return;
	}
	if (!strcmp(cmd, "put")) {
		do_put(fd, s, name, rest);
	} else if (!strcmp(cmd, "get")) {
		char *end;

		if (*rest) {
			ms = strtol(rest, &end, 10);
			if (*end || ms < 0 || ms > SVCP_GET_WAIT_MAX_MS) {
				v2_error(fd, EINVAL, "get %s: the wait is 0 to 5000 ms, not '%s'",
					 name, rest);
				return;
			}
		}
		if (has_endpoint(repo, name))
			v2_error(fd, EBUSY,
				 "get %s: its endpoint serves its head (what arrives goes to its clients: connect there)%s",
				 name, "");
		else
			do_get(fd, s, name, ms);
	} else {
		v2_error(fd, EINVAL, "unknown request '%s': version 2 has put NAME DATA and get NAME [MS]%s",
			 cmd, "");
	}
}
