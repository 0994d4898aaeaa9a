// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * open.c - the client of the open server, version 1, of Stevens, "Advanced
 * Programming in the UNIX Environment" (1992), section 15.5: reads
 * pathnames from standard input, one a line; for each, csopen() asks the
 * server (./opend, forked and exec'd on first use with one end of a STREAMS
 * pipe as its standard input and output) to open it, receives the
 * descriptor, and copies the file to standard output.  The server's error
 * text goes to standard error.  Rewritten from the book's description, no
 * code copied.
 *
 * XSI calls: getmsg() and ioctl(I_RECVFD) (fdpipe.c's recv_fd()), writev()
 * of a request as one STREAMS message.  Differs from the original in the
 * include (<asx/stropts.h>, in fdpipe.c) and in fdpipe.c's s_pipe(), the
 * open of the pipe: the one line that differs.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fdpipe.h"

#define BUFFSIZE 8192

/* Opens @name with @oflag through the server; the descriptor, or -1. */
static int csopen(const char *name, int oflag)
{
	static int fd[2] = { -1, -1 };
	char flagbuf[16];
	struct iovec iov[3];
	size_t len;
	pid_t pid;

	if (fd[0] < 0) {	/* the first time: start the server */
		if (s_pipe(fd) < 0) {
			perror("s_pipe");
			return -1;
		}
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return -1;
		}
		if (pid == 0) {
			close(fd[0]);
			if (dup2(fd[1], STDIN_FILENO) != STDIN_FILENO ||
			    dup2(fd[1], STDOUT_FILENO) != STDOUT_FILENO) {
				perror("dup2");
				_exit(127);
			}
			close(fd[1]);
			execl("./opend", "opend", (char *)NULL);
			perror("execl ./opend");
			_exit(127);
		}
		close(fd[1]);
	}
	/* "open <pathname> <oflag>\0", one write, one message */
	snprintf(flagbuf, sizeof(flagbuf), " %d", oflag);
	iov[0] = (struct iovec){ "open ", 5 };
	iov[1] = (struct iovec){ (void *)name, strlen(name) };
	iov[2] = (struct iovec){ flagbuf, strlen(flagbuf) + 1 };
	len = iov[0].iov_len + iov[1].iov_len + iov[2].iov_len;
	if (writev(fd[0], iov, 3) != (ssize_t)len) {
		perror("writev to the server");
		return -1;
	}
	return recv_fd(fd[0], write);
}

int main(void)
{
	char line[MAXLINE], buf[BUFFSIZE];
	int fd, bad = 0;
	ssize_t n;

	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		fd = csopen(line, O_RDONLY);
		if (fd < 0) {	/* the server said why, on standard error */
			bad = 1;
			continue;
		}
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (write(STDOUT_FILENO, buf, n) != n) {
				perror("write");
				return 1;
			}
		if (n < 0) {
			perror("read");
			return 1;
		}
		close(fd);
	}
	return bad;
}
