// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * dgram.c - datagram roles: unconnected, connected, multicast, broadcast.
 *
 * All receive paths use recvmsg() so a datagram cut short by a small
 * buffer is reported (-EMSGSIZE) instead of silently truncated.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc/ipc.h"

static int dgram_open(int *out, const struct asx_addr *local, const struct asx_addr *remote,
		      const struct asx_sock_opts *opts, bool bcast)
{
	struct ipc_opts o;
	int fd, r, family;

	*out = -1;
	r = asx__ipc_opts_load(&o, opts);
	if (r)
		return r;
	if (remote && !local)
		local = o.local;
	if (!local && !remote)
		return -EINVAL;
	if ((local && !local->len) || (remote && !remote->len))
		return -EINVAL;
	family = remote ? remote->u.sa.sa_family : local->u.sa.sa_family;
	if (local && remote && local->u.sa.sa_family != family)
		return -EAFNOSUPPORT;
	fd = asx__ipc_socket(family, SOCK_DGRAM | ((o.flags & ASX_SOCK_NONBLOCK) ? SOCK_NONBLOCK : 0),
			&o);
	if (fd < 0)
		return fd;
	if (bcast && (r = asx__ipc_set_int(fd, SOL_SOCKET, SO_BROADCAST, 1)))
		goto err_close;
	if (local && bind(fd, asx_addr_sockaddr(local), local->len))
		goto err_errno;
	if (remote && connect(fd, asx_addr_sockaddr(remote), remote->len))
		goto err_errno;
	*out = fd;
	return 0;

err_errno:
	r = -errno;
err_close:
	close(fd);
	return r;
}

static ssize_t dgram_sendv(int fd, const struct iovec *iov, int iovcnt,
			   const struct asx_addr *to, const struct timespec *deadline)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };

	if (iovcnt < 0)
		return -EINVAL;
	if (to) {
		mh.msg_name = (void *)&to->u.sa;
		mh.msg_namelen = to->len;
	}
	return asx__ipc_sendmsg(fd, &mh, 0, deadline);
}

static ssize_t dgram_recvv(int fd, const struct iovec *iov, int iovcnt,
			   struct asx_addr *from, const struct timespec *deadline)
{
	struct sockaddr_storage ss;
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
	ssize_t n;

	if (iovcnt < 0)
		return -EINVAL;
	if (from) {
		mh.msg_name = &ss;
		mh.msg_namelen = sizeof(ss);
	}
	n = asx__ipc_recvmsg(fd, &mh, 0, deadline);
	if (n < 0)
		return n;
	if (from && asx_addr_from_sockaddr(from, (struct sockaddr *)&ss, mh.msg_namelen))
		memset(from, 0, sizeof(*from));	/* unnamed UNIX sender */
	if (mh.msg_flags & MSG_TRUNC)
		return -EMSGSIZE;
	return n;
}

static ssize_t dgram_send(int fd, const void *buf, size_t len, const struct asx_addr *to,
			  const struct timespec *deadline)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return dgram_sendv(fd, &iov, 1, to, deadline);
}

static ssize_t dgram_recv(int fd, void *buf, size_t len, struct asx_addr *from,
			  const struct timespec *deadline)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return dgram_recvv(fd, &iov, 1, from, deadline);
}

/* ------------------------------------------------------------ dgram */

int asx_sock_dgram_open(struct asx_sock_dgram *d, const struct asx_addr *local,
			const struct asx_sock_opts *opts)
{
	if (!local)
		return d->sock.fd = -1, -EINVAL;
	return dgram_open(&d->sock.fd, local, NULL, opts, false);
}

ssize_t asx_sock_dgram_send(struct asx_sock_dgram *d, const void *buf, size_t len,
			    const struct asx_addr *to, const struct timespec *deadline)
{
	return dgram_send(d->sock.fd, buf, len, to, deadline);
}

ssize_t asx_sock_dgram_recv(struct asx_sock_dgram *d, void *buf, size_t len,
			    struct asx_addr *from, const struct timespec *deadline)
{
	return dgram_recv(d->sock.fd, buf, len, from, deadline);
}

ssize_t asx_sock_dgram_sendv(struct asx_sock_dgram *d, const struct iovec *iov, int iovcnt,
			     const struct asx_addr *to, const struct timespec *deadline)
{
	return dgram_sendv(d->sock.fd, iov, iovcnt, to, deadline);
}

ssize_t asx_sock_dgram_recvv(struct asx_sock_dgram *d, const struct iovec *iov, int iovcnt,
			     struct asx_addr *from, const struct timespec *deadline)
{
	return dgram_recvv(d->sock.fd, iov, iovcnt, from, deadline);
}

int asx_sock_dgram_close(struct asx_sock_dgram *d)
{
	return asx__ipc_close_fd(&d->sock.fd);
}

/* ------------------------------------------------------------ cdgram */

int asx_sock_cdgram_open(struct asx_sock_cdgram *d, const struct asx_addr *remote,
			 const struct asx_sock_opts *opts)
{
	if (!remote)
		return d->sock.fd = -1, -EINVAL;
	return dgram_open(&d->sock.fd, NULL, remote, opts, false);
}

ssize_t asx_sock_cdgram_send(struct asx_sock_cdgram *d, const void *buf, size_t len,
			     const struct timespec *deadline)
{
	return dgram_send(d->sock.fd, buf, len, NULL, deadline);
}

ssize_t asx_sock_cdgram_recv(struct asx_sock_cdgram *d, void *buf, size_t len,
			     const struct timespec *deadline)
{
	return dgram_recv(d->sock.fd, buf, len, NULL, deadline);
}

int asx_sock_cdgram_close(struct asx_sock_cdgram *d)
{
	return asx__ipc_close_fd(&d->sock.fd);
}

/* ------------------------------------------------------------ multicast */

static int mcast_ifindex(const struct asx_sock_mcast *m, const char *ifname)
{
	unsigned int idx;

	if (!ifname)
		return m->ifindex;
	idx = if_nametoindex(ifname);
	return idx ? (int)idx : -ENODEV;
}

static bool is_mcast_group(const struct asx_addr *g)
{
	if (!g || !g->len)
		return false;
	if (g->u.sa.sa_family == AF_INET)
		return IN_MULTICAST(ntohl(g->u.in4.sin_addr.s_addr));
	if (g->u.sa.sa_family == AF_INET6)
		return IN6_IS_ADDR_MULTICAST(&g->u.in6.sin6_addr);
	return false;
}

int asx_sock_mcast_open(struct asx_sock_mcast *m, const struct asx_addr *group,
			const char *ifname, const struct asx_sock_opts *opts)
{
	struct asx_sock_opts o = { .sz = sizeof(o) };
	struct ipc_opts chk;
	struct asx_addr any;
	int r, port;

	m->sock.fd = -1;
	m->ifindex = 0;
	if (!is_mcast_group(group))
		return -EINVAL;
	r = asx__ipc_opts_load(&chk, opts);
	if (r)
		return r;
	o.sndbuf = chk.sndbuf;
	o.rcvbuf = chk.rcvbuf;
	o.flags = chk.flags | ASX_SOCK_REUSEADDR;
	r = mcast_ifindex(m, ifname);
	if (r < 0)
		return r;
	m->ifindex = r;
	port = asx_addr_port(group);
	if (group->u.sa.sa_family == AF_INET)
		r = asx_addr_inet4(&any, INADDR_ANY, (uint16_t)port);
	else
		r = asx_addr_inet6(&any, &in6addr_any, (uint16_t)port, 0);
	if (r)
		return r;
	r = dgram_open(&m->sock.fd, &any, NULL, &o, false);
	if (r)
		return r;
	if (m->ifindex) {
		if (group->u.sa.sa_family == AF_INET) {
			struct ip_mreqn mr = { .imr_ifindex = m->ifindex };

			if (setsockopt(m->sock.fd, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof(mr)))
				r = -errno;
		} else {
			r = asx__ipc_set_int(m->sock.fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, m->ifindex);
		}
	}
	if (!r)
		r = asx_sock_mcast_set_hops(m, 1);
	if (r)
		asx__ipc_close_fd(&m->sock.fd);
	return r;
}

static int mcast_member(struct asx_sock_mcast *m, const struct asx_addr *group,
			const char *ifname, bool join)
{
	int idx;

	if (!is_mcast_group(group))
		return -EINVAL;
	idx = mcast_ifindex(m, ifname);
	if (idx < 0)
		return idx;
	if (group->u.sa.sa_family == AF_INET) {
		struct ip_mreqn mr = {
			.imr_multiaddr = group->u.in4.sin_addr,
			.imr_ifindex = idx,
		};

		if (setsockopt(m->sock.fd, IPPROTO_IP, join ? IP_ADD_MEMBERSHIP : IP_DROP_MEMBERSHIP,
			       &mr, sizeof(mr)))
			return -errno;
	} else {
		struct ipv6_mreq mr = {
			.ipv6mr_multiaddr = group->u.in6.sin6_addr,
			.ipv6mr_interface = (unsigned int)idx,
		};

		if (setsockopt(m->sock.fd, IPPROTO_IPV6, join ? IPV6_JOIN_GROUP : IPV6_LEAVE_GROUP,
			       &mr, sizeof(mr)))
			return -errno;
	}
	return 0;
}

int asx_sock_mcast_join(struct asx_sock_mcast *m, const struct asx_addr *group,
			const char *ifname)
{
	return mcast_member(m, group, ifname, true);
}

int asx_sock_mcast_leave(struct asx_sock_mcast *m, const struct asx_addr *group,
			 const char *ifname)
{
	return mcast_member(m, group, ifname, false);
}

static int mcast_family(const struct asx_sock_mcast *m)
{
	struct asx_addr a;
	int r = asx_sock_local_addr(&m->sock, &a);

	return r ? r : asx_addr_family(&a);
}

int asx_sock_mcast_set_loop(struct asx_sock_mcast *m, bool on)
{
	int f = mcast_family(m);

	if (f < 0)
		return f;
	if (f == AF_INET)
		return asx__ipc_set_int(m->sock.fd, IPPROTO_IP, IP_MULTICAST_LOOP, on);
	return asx__ipc_set_int(m->sock.fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, on);
}

int asx_sock_mcast_set_hops(struct asx_sock_mcast *m, int hops)
{
	int f = mcast_family(m);

	if (hops < 0 || hops > 255)
		return -EINVAL;
	if (f < 0)
		return f;
	if (f == AF_INET)
		return asx__ipc_set_int(m->sock.fd, IPPROTO_IP, IP_MULTICAST_TTL, hops);
	return asx__ipc_set_int(m->sock.fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, hops);
}

ssize_t asx_sock_mcast_send(struct asx_sock_mcast *m, const void *buf, size_t len,
			    const struct asx_addr *group, const struct timespec *deadline)
{
	if (!is_mcast_group(group))
		return -EINVAL;
	return dgram_send(m->sock.fd, buf, len, group, deadline);
}

ssize_t asx_sock_mcast_recv(struct asx_sock_mcast *m, void *buf, size_t len,
			    struct asx_addr *from, const struct timespec *deadline)
{
	return dgram_recv(m->sock.fd, buf, len, from, deadline);
}

int asx_sock_mcast_close(struct asx_sock_mcast *m)
{
	return asx__ipc_close_fd(&m->sock.fd);
}

/* ------------------------------------------------------------ broadcast */

int asx_sock_bcast_open(struct asx_sock_bcast *b, const struct asx_addr *local,
			const struct asx_sock_opts *opts)
{
	b->sock.fd = -1;
	if (!local || local->u.sa.sa_family != AF_INET)
		return -EAFNOSUPPORT;
	return dgram_open(&b->sock.fd, local, NULL, opts, true);
}

ssize_t asx_sock_bcast_send(struct asx_sock_bcast *b, const void *buf, size_t len,
			    const struct asx_addr *bcast_addr, const struct timespec *deadline)
{
	if (!bcast_addr || bcast_addr->u.sa.sa_family != AF_INET)
		return -EINVAL;
	return dgram_send(b->sock.fd, buf, len, bcast_addr, deadline);
}

ssize_t asx_sock_bcast_recv(struct asx_sock_bcast *b, void *buf, size_t len,
			    struct asx_addr *from, const struct timespec *deadline)
{
	return dgram_recv(b->sock.fd, buf, len, from, deadline);
}

int asx_sock_bcast_close(struct asx_sock_bcast *b)
{
	return asx__ipc_close_fd(&b->sock.fd);
}
