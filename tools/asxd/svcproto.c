// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svcproto.c - the field escaping of asxd's control protocol (svcproto.h).
 */
#include <string.h>

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
