// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * opend.c - the open server, version 1, of Stevens, "Advanced Programming
 * in the UNIX Environment" (1992), section 15.5: started by its client with
 * one end of a STREAMS pipe as standard input and output, it reads
 * requests "open <pathname> <oflag>", opens the file and passes the
 * descriptor back with I_SENDFD, or sends the error text and status.  It
 * exits when the client closes its end.  Rewritten from the book's
 * description, no code copied.
 *
 * XSI calls: ioctl(I_SENDFD) (in fdpipe.c's send_fd()), read() and write()
 * on a STREAMS pipe.  Differs from the original in nothing but the include
 * (<asx/stropts.h>) and s_pipe() of fdpipe.c, which this side does not call.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdpipe.h"

#define MAXARGS 50

/* Splits @buf at blanks into @argv (at most MAXARGS); their number, or -1. */
static int split_args(char *buf, char **argv)
{
	int argc = 0;
	char *save, *tok;

	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		if (argc == MAXARGS)
			return -1;
		argv[argc++] = tok;
	}
	argv[argc] = NULL;
	return argc;
}

/* One request of @len bytes in @buf, answered on @clifd. */
static void request(char *buf, ssize_t len, int clifd)
{
	char *argv[MAXARGS + 1], errmsg[MAXLINE];
	int argc, fd;
	char *end;
	long oflag;

	if (buf[len - 1] != 0) {
		snprintf(errmsg, sizeof(errmsg), "request not null terminated: %.*s\n",
			 (int)len, buf);
		send_err(clifd, -1, errmsg);
		return;
	}
	argc = split_args(buf, argv);
	if (argc != 3 || strcmp(argv[0], "open")) {
		snprintf(errmsg, sizeof(errmsg), "usage: open <pathname> <oflag>\n");
		send_err(clifd, -1, errmsg);
		return;
	}
	oflag = strtol(argv[2], &end, 10);
	if (*end) {
		snprintf(errmsg, sizeof(errmsg), "bad oflag: %s\n", argv[2]);
		send_err(clifd, -1, errmsg);
		return;
	}
	fd = open(argv[1], (int)oflag);
	if (fd < 0) {
		snprintf(errmsg, sizeof(errmsg), "can't open %s: %s\n", argv[1], strerror(errno));
		send_err(clifd, -1, errmsg);
		return;
	}
	if (send_fd(clifd, fd) < 0) {
		perror("opend: send_fd");
		exit(1);
	}
	close(fd);	/* the client has its own now */
}

int main(void)
{
	char buf[MAXLINE + 1];
	ssize_t n;

	for (;;) {
		n = read(STDIN_FILENO, buf, MAXLINE);
		if (n < 0) {
			perror("opend: read");
			return 1;
		}
		if (n == 0)
			return 0;	/* the client closed its end */
		request(buf, n, STDOUT_FILENO);
	}
}
