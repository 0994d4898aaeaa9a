// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * lsock.c - LSOCK SAP: descriptor passing over UNIX-domain sockets, stream
 * pipes (socketpair) and UNIX datagrams.
 *
 * A descriptor travels as SCM_RIGHTS ancillary data on a one-byte message.
 * The receiver asks for MSG_CMSG_CLOEXEC so the new descriptor is never
 * leaked across an exec in another thread, and room for as many rights as
 * one message can carry: if a peer sends more than one descriptor the
 * first is kept and the extras are closed rather than leaked, and a
 * truncated control part (MSG_CTRUNC: another control message beside
 * them) is an error, every descriptor that came closed.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/ipc.h"
#include "core/probes.h"

/* Linux's SCM_MAX_FD: the most descriptors one message can carry. */
#define MAX_RIGHTS 253

int asx__ipc_send_fd(int sock, int fd, const struct asx_addr *to, const struct timespec *deadline)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	if (fd < 0)
		return -EBADF;
	if (to) {
		mh.msg_name = (void *)&to->u.sa;
		mh.msg_namelen = to->len;
	}
	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	n = asx__ipc_sendmsg(sock, &mh, 0, deadline);
	if (n < 0)
		return (int)n;
	ASX_PROBE2(ipc_send_handle, sock, fd);
	return n == 1 ? 0 : -EIO;
}

int asx__ipc_recv_fd(int sock, struct asx_addr *from, const struct timespec *deadline)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * MAX_RIGHTS)];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_storage ss;
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *cm;
	int fd = -1;
	ssize_t n;

	if (from) {
		mh.msg_name = &ss;
		mh.msg_namelen = sizeof(ss);
	}
	n = asx__ipc_recvmsg(sock, &mh, MSG_CMSG_CLOEXEC, deadline);
	if (n < 0)
		return (int)n;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t i, cnt;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < cnt; i++) {
			int got;

			memcpy(&got, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = got;
			else
				close(got);
		}
	}
	if (mh.msg_flags & MSG_CTRUNC) {
		if (fd >= 0)
			close(fd);
		return -EBADMSG;
	}
	if (fd < 0)
		return n == 0 ? -ECONNRESET : -EBADMSG;
	if (from && asx_addr_from_sockaddr(from, (struct sockaddr *)&ss, mh.msg_namelen))
		memset(from, 0, sizeof(*from));
	ASX_PROBE2(ipc_recv_handle, sock, fd);
	return fd;
}

int asx_lsock_stream_send_handle(struct asx_lsock_stream *s, int fd,
				 const struct timespec *deadline)
{
	return asx__ipc_send_fd(s->stream.sock.fd, fd, NULL, deadline);
}

int asx_lsock_stream_recv_handle(struct asx_lsock_stream *s, const struct timespec *deadline)
{
	return asx__ipc_recv_fd(s->stream.sock.fd, NULL, deadline);
}

static int pair(int type, int *a, int *b)
{
	int sv[2];

	*a = *b = -1;
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv))
		return -errno;
	*a = sv[0];
	*b = sv[1];
	return 0;
}

int asx_lsock_stream_pair(struct asx_lsock_stream *a, struct asx_lsock_stream *b)
{
	return pair(SOCK_STREAM, &a->stream.sock.fd, &b->stream.sock.fd);
}

int asx_lsock_dgram_pair(struct asx_lsock_dgram *a, struct asx_lsock_dgram *b)
{
	return pair(SOCK_DGRAM, &a->dgram.sock.fd, &b->dgram.sock.fd);
}

int asx_lsock_dgram_open(struct asx_lsock_dgram *d, const struct asx_addr *local,
			 const struct asx_sock_opts *opts)
{
	d->dgram.sock.fd = -1;
	if (!local || local->u.sa.sa_family != AF_UNIX)
		return -EAFNOSUPPORT;
	return asx_sock_dgram_open(&d->dgram, local, opts);
}

int asx_lsock_dgram_send_handle(struct asx_lsock_dgram *d, int fd, const struct asx_addr *to,
				const struct timespec *deadline)
{
	return asx__ipc_send_fd(d->dgram.sock.fd, fd, to, deadline);
}

int asx_lsock_dgram_recv_handle(struct asx_lsock_dgram *d, struct asx_addr *from,
				const struct timespec *deadline)
{
	return asx__ipc_recv_fd(d->dgram.sock.fd, from, deadline);
}

int asx_lsock_dgram_close(struct asx_lsock_dgram *d)
{
	return asx_sock_dgram_close(&d->dgram);
}
