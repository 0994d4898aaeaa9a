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
 *
 * svcproto.c has what both halves share (the escaping); svcclient.c the
 * client half (the socket path, connect, request, answer), which asxd
 * uses too.  Both are linked into asxd and asxctl.
 */
#ifndef ASX_TOOLS_SVCPROTO_H
#define ASX_TOOLS_SVCPROTO_H

#include <stddef.h>

#define SVCP_MAGIC	"ASX-SVC"
#define SVCP_VERSION	1
/*
 * Version 2 has the requests on a configured Stream (svcstream.c), and
 * only them:
 *
 *	ASX-SVC 2 put NAME DATA\n	DATA: the rest of the line, escaped
 *	ASX-SVC 2 get NAME [MS]\n	wait up to MS ms (default 1000, at most 5000)
 *
 * put sends one DATA message of DATA's bytes down the Stream from its head;
 * get takes the next message that reached the head, one data line "TYPE
 * BAND BYTES" (tab-separated, BYTES escaped) before the ".".  Answers carry
 * the request's version.  An asxd of version 1 only refuses a version-2
 * request ("unsupported protocol version"), so asxctl says what it needs.
 */
#define SVCP_VERSION_STREAM	2
/*
 * Version 3 has one request, the ASCs of asxd with their VPs and threads
 * (svcasc.c has the data lines; `asxctl asc`):
 *
 *	ASX-SVC 3 asc\n
 *
 * Answered as versions 1 and 2 are, in version 3.  An older asxd refuses
 * it as "unsupported protocol version".
 */
#define SVCP_VERSION_ASC	3
#define SVCP_GET_WAIT_MS	1000
#define SVCP_GET_WAIT_MAX_MS	5000
#define SVCP_LINE_MAX	512
#define SVCP_SOCKET_NAME	"asxd.sock"	/* in the directories below */
#define SVCP_SYSTEM_DIR	"/run/asx"	/* root's asxd, and systemd's */

/*
 * NULL if @name can be a request's NAME: a service (shorter than
 * ASX_SVC_NAME_MAX) or STREAM/MODULE (a Stream's name as a service's, a
 * module's shorter than ASX_MODULE_NAME_MAX), with no white space; else
 * why not, in words.  asxctl checks it before it sends, asxd when it reads.
 */
const char *svcp_name_bad(const char *name);

/* Append @s to @out (of @n bytes, at *@len) with \t \n \\ escaped; -1 if it does not fit. */
int svcp_escape(char *out, size_t n, size_t *len, const char *s);
/* Undo svcp_escape() in place. */
void svcp_unescape(char *s);

/*
 * Send all @n bytes of @s on @fd (no SIGPIPE): 0, or at the first failure
 * (a send timeout: EAGAIN) -errno, with @fd shut down so that the rest of
 * an answer fails at once.
 */
int svcp_write_all(int fd, const char *s, size_t n);

/*
 * Bytes, any of them: svcp_escape()'s three, and \xNN for a byte that is
 * not printable ASCII.  -1 if it does not fit.
 */
int svcp_escape_bytes(char *out, size_t n, size_t *len, const void *p, size_t plen);
/* Undo svcp_escape_bytes() in place: the number of bytes. */
size_t svcp_unescape_bytes(char *s);

/* ---------------------------------------------------------------- svcclient.c */

/* @dir/asxd.sock into @buf (of @n bytes): 0, or -ENAMETOOLONG. */
int svcp_socket_in(char *buf, size_t n, const char *dir);

/*
 * Where asxd makes its socket unless told: $RUNTIME_DIRECTORY (systemd's
 * RuntimeDirectory=), else /run/asx for root, else $XDG_RUNTIME_DIR; NULL
 * if none of these.
 */
const char *svcp_server_dir(void);

/*
 * Where a client looks for asxd unless told: $ASXD_SOCKET, else
 * /run/asx/asxd.sock if it exists, else $XDG_RUNTIME_DIR/asxd.sock (in
 * @buf), else /run/asx/asxd.sock.
 */
const char *svcp_client_socket(char *buf, size_t n);

/*
 * Connect to asxd's socket @path; with @timeout_s > 0, connecting (a full
 * backlog), sending and receiving give up after that many seconds.  The
 * socket, or -errno.
 */
int svcp_connect(const char *path, long timeout_s);

/* Send the request "ASX-SVC 1 @cmd [@name]".  0 or -errno. */
int svcp_send(int fd, const char *cmd, const char *name);

/*
 * Read the answer until asxd closes: 0 and *out (malloc'd, NUL-terminated,
 * *outlen bytes), -ETIMEDOUT when the socket's receive timeout passed
 * first, -ENOMEM.
 */
int svcp_recv(int fd, char **out, size_t *outlen);

/*
 * Read the status line of the answer @resp (strtok_r() on "\n" with @save:
 * the data lines follow with strtok_r(NULL, "\n", save) up to "."): 0 for
 * "ok"; 1 for "error", *msg the message unescaped; -EPROTO if it is not an
 * answer of this protocol, *msg the first line (or NULL).
 */
int svcp_answer(char *resp, char **save, char **msg);

/* The same for a request and its answer of protocol version @version (svcstream). */
int svcp_send_v(int fd, int version, const char *cmd, const char *name, const char *rest);
int svcp_answer_v(char *resp, int version, char **save, char **msg);

#endif
