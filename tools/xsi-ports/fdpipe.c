// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fdpipe.c - the open server's STREAMS pipe helpers, a rewrite from their
 * described behaviour (no code copied) of s_pipe(), send_fd(), send_err()
 * and recv_fd() of Stevens, "Advanced Programming in the UNIX Environment"
 * (Addison-Wesley, 1992), sections 15.2 and 15.3, SVR4 flavour.
 *
 * XSI calls: ioctl(I_SENDFD), ioctl(I_RECVFD), getmsg(), write().
 *
 * The protocol: whatever text precedes, then two bytes, a 0 and a status;
 * status 0 means a descriptor follows (I_SENDFD), anything else that the
 * request failed.  Each write() is one STREAMS message; recv_fd() reads a
 * message at a time with getmsg().
 *
 * THE ONE LINE THAT DIFFERS: s_pipe().  On SVR4 pipe(2) made a STREAMS
 * pipe, so Stevens' s_pipe() was "return pipe(fd);".  Linux's pipe(2) is
 * not a Stream; here a Stream is opened on /dev/asx and made a pipe end
 * (ASX_IOC_PIPE returns the other end), the non-XSI step of
 * Documentation/xsi.rst.  The include is <asx/stropts.h>.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <asx/stropts.h>

#include "fdpipe.h"

int s_pipe(int fd[2])
{
	struct asx_pipe p = { .size = sizeof(p) };

	/* SVR4: return pipe(fd); */
	if ((fd[0] = open("/dev/asx", O_RDWR)) < 0 || ioctl(fd[0], ASX_IOC_PIPE, &p) < 0)
		return -1;
	fd[1] = p.fd;
	return 0;
}

int send_fd(int pipefd, int fd)
{
	unsigned char tail[2] = { 0, 0 };

	if (fd < 0)
		tail[1] = -fd > 255 || -fd == 0 ? 1 : -fd;	/* never 0: that means a descriptor */
	if (write(pipefd, tail, 2) != 2)
		return -1;
	if (fd >= 0 && ioctl(pipefd, I_SENDFD, fd) < 0)
		return -1;
	return 0;
}

int send_err(int pipefd, int status, const char *msg)
{
	size_t len = strlen(msg);

	if (len && write(pipefd, msg, len) != (ssize_t)len)
		return -1;
	return send_fd(pipefd, status < 0 ? status : -1);
}

int recv_fd(int pipefd, ssize_t (*textfn)(int, const void *, size_t))
{
	char buf[MAXLINE];
	struct strbuf data;
	struct strrecvfd rf;
	int flags, status = -1, got_tail = 0, len;

	while (!got_tail) {
		data = (struct strbuf){ .maxlen = sizeof(buf), .len = 0, .buf = buf };
		flags = 0;
		if (getmsg(pipefd, NULL, &data, &flags) < 0)
			return -1;
		len = data.len;
		if (len <= 0) {
			errno = ECONNRESET;	/* the server hung up */
			return -1;
		}
		/* the tail, if in this message, is its last two bytes */
		if (len >= 2 && buf[len - 2] == 0) {
			status = (unsigned char)buf[len - 1];
			got_tail = 1;
			len -= 2;
		}
		if (len > 0 && textfn)
			textfn(STDERR_FILENO, buf, len);
	}
	if (status != 0)
		return -1;
	if (ioctl(pipefd, I_RECVFD, &rf) < 0)
		return -1;
	return rf.fd;
}
