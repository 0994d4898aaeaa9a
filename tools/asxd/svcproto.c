// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svcproto.c - the field escaping of asxd's control protocol (svcproto.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <asx/stream.h>
#include <asx/svc.h>

#include "svcproto.h"

/* the words below say these bounds */
_Static_assert(ASX_SVC_NAME_MAX == 64 && ASX_MODULE_NAME_MAX == 32, "svcp_name_bad()'s words");

const char *svcp_name_bad(const char *name)
{
	const char *slash = strchr(name, '/');
	size_t n = strlen(name);

	if (!n)
		return "an empty name";
	if (strpbrk(name, " \t\n\r\v\f"))
		return "white space in a name";
	if (!slash)
		return n < ASX_SVC_NAME_MAX ? NULL : "a service name is at most 63 bytes";
	if (strchr(slash + 1, '/'))
		return "more than one '/' (STREAM/MODULE)";
	if (slash == name || !slash[1])
		return "STREAM/MODULE with an empty part";
	if ((size_t)(slash - name) >= ASX_SVC_NAME_MAX)
		return "a Stream's name is at most 63 bytes";
	if (strlen(slash + 1) >= ASX_MODULE_NAME_MAX)
		return "a module's name is at most 31 bytes";
	return NULL;
}

int svcp_escape(char *out, size_t n, size_t *len, const char *s)
{
	for (; s && *s; s++) {
		const char *e = *s == '\t' ? "\\t" : *s == '\n' ? "\\n" : *s == '\\' ? "\\\\" : NULL;
		size_t k = e ? 2 : 1;

		if (*len + k >= n)
			return -1;
		if (e) {
			out[(*len)++] = e[0];
			out[(*len)++] = e[1];
		} else {
			out[(*len)++] = *s;
		}
	}
	out[*len] = '\0';
	return 0;
}

void svcp_unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

int svcp_escape_bytes(char *out, size_t n, size_t *len, const void *p, size_t plen)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = p;

	for (size_t i = 0; i < plen; i++) {
		unsigned char c = b[i];
		char e[4];
		size_t k = 0;

		if (c == '\t' || c == '\n' || c == '\\') {
			e[k++] = '\\';
			e[k++] = c == '\t' ? 't' : c == '\n' ? 'n' : '\\';
		} else if (c < 0x20 || c > 0x7e) {
			e[k++] = '\\';
			e[k++] = 'x';
			e[k++] = hex[c >> 4];
			e[k++] = hex[c & 15];
		} else {
			e[k++] = (char)c;
		}
		if (*len + k >= n)
			return -1;
		memcpy(out + *len, e, k);
		*len += k;
	}
	out[*len] = '\0';
	return 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

size_t svcp_unescape_bytes(char *s)
{
	char *o = s, *start = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1] == 'x' && s[2] && s[3] && hexval(s[2]) >= 0 &&
		    hexval(s[3]) >= 0) {
			*o++ = (char)(hexval(s[2]) << 4 | hexval(s[3]));
			s += 3;
		} else if (*s == '\\' && s[1]) {
			s++;
			*o++ = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	return (size_t)(o - start);
}

int svcp_write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int err = w < 0 ? errno : EPIPE;

			/* the rest of the answer fails at once, not after a timeout each */
			shutdown(fd, SHUT_RDWR);
			return -err;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}
