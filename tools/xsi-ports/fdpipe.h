/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * fdpipe.h - the STREAMS pipe helpers of the open server (Stevens, "Advanced
 * Programming in the UNIX Environment", 1992, chapter 15: s_pipe(),
 * send_fd(), send_err(), recv_fd()), rewritten from their described
 * behaviour for tools/xsi-ports (see fdpipe.c).
 */
#ifndef XSI_PORTS_FDPIPE_H
#define XSI_PORTS_FDPIPE_H

#include <stddef.h>
#include <sys/types.h>

#define MAXLINE 4096	/* the longest request or error text */

/* A STREAMS pipe: two descriptors, each end both readable and writable. */
int s_pipe(int fd[2]);
/* Passes descriptor @fd to the other end, or (fd < 0) the status -fd. */
int send_fd(int pipefd, int fd);
/* Sends the text @msg, then the error status @status (-1 if not below 0). */
int send_err(int pipefd, int status, const char *msg);
/*
 * Waits for what send_fd() or send_err() sent: returns the descriptor, or
 * -1 for an error status, the text before it handed to @textfn (to write
 * it to standard error, say).
 */
int recv_fd(int pipefd, ssize_t (*textfn)(int, const void *, size_t));

#endif
