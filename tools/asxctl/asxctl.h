/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* asxctl.h - the commands asxctl.c dispatches to other files. */
#ifndef ASX_TOOLS_ASXCTL_H
#define ASX_TOOLS_ASXCTL_H

/* asxctl svc ... (svc.c): argv[0] is "svc". */
int asxctl_svc(int argc, char **argv);

/* asxctl stream put|get ... (stream.c): argv[0] is "stream". */
int asxctl_stream(int argc, char **argv);

#endif
