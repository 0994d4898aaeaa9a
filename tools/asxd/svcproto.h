/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * svcproto.h - asxd's control protocol, version 1, shared by asxd and
 * `asxctl svc` (Documentation/svc.rst, asxd(8)).
 *
 * Over a Unix stream socket the client sends one line,
 *
 *	ASX-SVC 1 COMMAND [NAME]\n
 *
 * COMMAND one of list, suspend, resume, remove, reload; the line is at most
 * SVCP_LINE_MAX bytes.  asxd answers with
 *
 *	ASX-SVC 1 ok\n  DATA-LINE\n ...  .\n
 * or
 *	ASX-SVC 1 error ERRNO MESSAGE\n
 *
 * and closes.  list's data lines are six tab-separated fields: name, state
 * (active or suspended), library ("-" if linked in, "=" for a Stream made
 * by a "stream" directive), factory, parameters and the info line, with tab, newline and backslash written \t, \n, \\.
 * A peer whose uid is neither root's nor asxd's is refused (SO_PEERCRED).
 */
#ifndef ASX_TOOLS_SVCPROTO_H
#define ASX_TOOLS_SVCPROTO_H

#include <stddef.h>

#define SVCP_MAGIC	"ASX-SVC"
#define SVCP_VERSION	1
#define SVCP_LINE_MAX	512

/* Append @s to @out (of @n bytes, at *@len) with \t \n \\ escaped; -1 if it does not fit. */
int svcp_escape(char *out, size_t n, size_t *len, const char *s);
/* Undo svcp_escape() in place. */
void svcp_unescape(char *s);

#endif
