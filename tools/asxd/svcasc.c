// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svcasc.c - asxd's request of protocol version 3 (svcproto.h): the ASCs
 * of the daemon (those its Streams' "asc N" made, and any other), each with
 * its policy, its VPs and its user threads (`asxctl asc`), from
 * asx_asc_snapshot().  It reads no repository state, so it is answered at
 * once, a job running or not.  The data lines (tab-separated, escaped as
 * svcp_escape() does), each VP and thread after its ASC:
 *
 *	asc	NAME	POLICY	NVPS	NTHREADS
 *	vp	TID	STATE	CUR		(CUR: the id of its thread, 0 none)
 *	thread	ID	STATE	VP	NAME	(VP: the tid running it, 0 none)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/asc.h>

#include "svcasc.h"
#include "svcproto.h"

static void v3_error(int fd, int err, const char *msg)
{
	char line[SVCP_LINE_MAX];
	size_t len = (size_t)snprintf(line, sizeof(line), "%s %d error %d ", SVCP_MAGIC,
				      SVCP_VERSION_ASC, err);

	if (svcp_escape(line, sizeof(line) - 1, &len, msg))
		len = strlen(line);
	line[len++] = '\n';
	svcp_write_all(fd, line, len);
}

/* One data line: the fields in @fmt, then @esc escaped (NULL: none). */
static void data_line(int fd, const char *esc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void data_line(int fd, const char *esc, const char *fmt, ...)
{
	char line[2 * SVCP_LINE_MAX];
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	len = (size_t)vsnprintf(line, sizeof(line) - 2, fmt, ap);
	va_end(ap);
	if (len > sizeof(line) - 2)
		len = sizeof(line) - 2;
	if (esc && svcp_escape(line, sizeof(line) - 1, &len, esc))
		len = strlen(line);
	line[len++] = '\n';
	svcp_write_all(fd, line, len);
}

void svcd_asc_request(int fd, const char *line)
{
	char cmd[16] = "", extra[2];
	struct asx_asc_snap *s;
	size_t n;
	int ver, k, r;

	k = sscanf(line, SVCP_MAGIC " %d %15s %1s", &ver, cmd, extra);
	if (k != 2 || strcmp(cmd, "asc")) {
		v3_error(fd, EINVAL, "unknown request of version 3: asc");
		return;
	}
	r = asx_asc_snapshot(&s, &n);
	if (r) {
		v3_error(fd, -r, strerror(-r));
		return;
	}
	data_line(fd, NULL, "%s %d ok", SVCP_MAGIC, SVCP_VERSION_ASC);
	for (size_t i = 0; i < n; i++) {
		const struct asx_asc_snap *a = &s[i];

		char name[2 * sizeof(a->name)], pol[2 * sizeof(a->policy)];
		size_t ln = 0, lp = 0;

		(void)svcp_escape(name, sizeof(name), &ln, a->name);	/* fits: at most doubled */
		(void)svcp_escape(pol, sizeof(pol), &lp, a->policy);
		data_line(fd, NULL, "asc\t%s\t%s\t%zu\t%zu", name, pol, a->nvps, a->nthreads);
		for (size_t v = 0; v < a->nvps; v++)
			data_line(fd, NULL, "vp\t%d\t%s\t%#" PRIx64, a->vps[v].tid, a->vps[v].state,
				  a->vps[v].cur);
		for (size_t t = 0; t < a->nthreads; t++)
			data_line(fd, a->threads[t].name, "thread\t%#" PRIx64 "\t%s\t%d\t",
				  a->threads[t].id, a->threads[t].state, a->threads[t].vp);
	}
	svcp_write_all(fd, ".\n", 2);
	free(s);
}
