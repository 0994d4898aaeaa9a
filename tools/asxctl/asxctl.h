/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* asxctl.h - the commands asxctl.c dispatches to other files. */
#ifndef ASX_TOOLS_ASXCTL_H
#define ASX_TOOLS_ASXCTL_H

/* asxctl svc ... (svc.c): argv[0] is "svc". */
int asxctl_svc(int argc, char **argv);

/* asxctl stream put|get ... (stream.c): argv[0] is "stream". */
int asxctl_stream(int argc, char **argv);

/* asxctl asc (asc.c): argv[0] is "asc". */
int asxctl_asc(int argc, char **argv);

/*
 * The options -s SOCKET and -t SECONDS from argv[*i] on (svc.c): *i past
 * them; 0, or 2 (a usage error, said on stderr as "asxctl @who: ...").
 */
int asxctl_conn_opts(const char *who, int argc, char **argv, int *i, const char **sock,
		     long *timeout);

#endif
