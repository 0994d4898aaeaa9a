/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* svcstream.h - asxd's requests of protocol version 2 (svcstream.c). */
#ifndef ASX_TOOLS_SVCSTREAM_H
#define ASX_TOOLS_SVCSTREAM_H

#include <stdbool.h>

struct asx_svc_repo;

/*
 * Answer the request @line ("ASX-SVC 2 put|get NAME ...") on @fd, which the
 * caller closes; @busy: a job runs (the repository may change).
 */
void svcd_stream_request(int fd, struct asx_svc_repo *repo, char *line, bool busy);

#endif
