/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* svcasc.h - asxd's request of protocol version 3 (svcasc.c). */
#ifndef ASX_TOOLS_SVCASC_H
#define ASX_TOOLS_SVCASC_H

/* Answer the request @line ("ASX-SVC 3 asc") on @fd, which the caller closes. */
void svcd_asc_request(int fd, const char *line);

#endif
