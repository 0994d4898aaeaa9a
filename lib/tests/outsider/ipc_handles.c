// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Descriptor passing with several descriptors in one message
 * (Documentation/ipc.rst, "Passing descriptors"): a peer that is not
 * libasx sends 2, 16 and 253 (the kernel's SCM_MAX_FD) descriptors with one
 * sendmsg(); asx_lsock_stream_recv_handle() and
 * asx_lsock_dgram_recv_handle() return the first and close the others:
 * the process's descriptor count (/proc/self/fd) goes up by exactly one.
 */
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <asx/pipe.h>
#include <asx/sock.h>
#include "outsider.h"

#define MAXFD 253

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	CHECK(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* one byte with @n descriptors: @first, then dups of @other */
static void send_fds(int sock, int first, int other, int n)
{
	static union {
		char buf[CMSG_SPACE(MAXFD * sizeof(int))];
		struct cmsghdr align;
	} u;
	int fds[MAXFD];
	struct msghdr mh;
	struct iovec iov;
	struct cmsghdr *c;

	CHECK(n >= 1 && n <= MAXFD);
	fds[0] = first;
	for (int i = 1; i < n; i++)
		CHECK((fds[i] = dup(other)) >= 0);
	memset(&mh, 0, sizeof(mh));
	memset(&u, 0, sizeof(u));
	iov.iov_base = "h";
	iov.iov_len = 1;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = u.buf;
	mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(c), fds, n * sizeof(int));
	CHECK(sendmsg(sock, &mh, 0) == 1);
	for (int i = 1; i < n; i++)			/* in flight now: ours are closed */
		close(fds[i]);
}

/*
 * @n descriptors over @tx; @recv_one receives on the other end.  The first
 * is a pipe's read end: the descriptor returned must read what its write
 * end writes.
 */
static void one_case(int tx, int (*recv_one)(void *), void *rx, int n, const char *what)
{
	struct asx_pipe_reader pr;
	struct asx_pipe_writer pw;
	int before, fd;
	char c = 0;

	CHECK0(asx_pipe_open(&pr, &pw));
	before = open_fds();
	send_fds(tx, asx_pipe_reader_handle(&pr), asx_pipe_writer_handle(&pw), n);
	CHECK0(asx_pipe_reader_close(&pr));		/* only the one in flight is left */
	fd = recv_one(rx);
	if (fd < 0)
		fprintf(stderr, "ipc_handles: %s with %d descriptors: %d\n", what, n, fd);
	CHECK(fd >= 0);
	CHECK(asx_pipe_write(&pw, "z", 1, NULL) == 1);
	CHECK(read(fd, &c, 1) == 1 && c == 'z');	/* the first one */
	printf("ipc_handles: %s, %d descriptors: the first, %d open before, %d after\n", what,
	       n, before, open_fds());
	CHECK(open_fds() == before);			/* pr closed, fd received: none other */
	close(fd);
	CHECK0(asx_pipe_writer_close(&pw));
}

static int recv_stream(void *s)
{
	struct timespec dl;

	return asx_lsock_stream_recv_handle(s, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC));
}

static int recv_dgram(void *d)
{
	struct timespec dl;

	return asx_lsock_dgram_recv_handle(d, NULL, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC));
}

int main(void)
{
	static const int counts[] = { 2, 16, MAXFD };
	struct asx_lsock_stream a, b;
	struct asx_lsock_dgram da, db;

	setvbuf(stdout, NULL, _IOLBF, 0);
	watchdog(60);
	CHECK0(asx_lsock_stream_pair(&a, &b));
	CHECK0(asx_lsock_dgram_pair(&da, &db));
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		one_case(asx_handle(&a), recv_stream, &b, counts[i], "stream");
		one_case(asx_handle(&da), recv_dgram, &db, counts[i], "datagram");
	}
	CHECK0(asx_lsock_stream_close(&a));
	CHECK0(asx_lsock_stream_close(&b));
	CHECK0(asx_lsock_dgram_close(&da));
	CHECK0(asx_lsock_dgram_close(&db));
	puts("ipc_handles: ok");
	return 0;
}
