// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svcproto.c - the field escaping of asxd's control protocol (svcproto.h).
 */
#include "svcproto.h"

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
