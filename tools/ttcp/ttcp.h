/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * ttcp.h - asx-ttcp: the transport back ends behind one driver.
 *
 * main.c owns the options, the data loops, the timing and the output;
 * a back end (net_raw.c: plain socket calls, net_asx.c: the libasx IPC
 * SAP wrappers) only sets connections up and moves bytes.  Both are
 * reached through the same table of function pointers, so the only
 * difference between the two measurements is the code inside them.
 */
#ifndef ASX_TTCP_H
#define ASX_TTCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ttcp_conf {
	bool transmit;		/* -t (else -r) */
	bool udp;		/* -u */
	bool nodelay;		/* -D */
	bool ipv6;		/* -6: the receiver listens on [::] */
	int sockbuf;		/* -b, 0: system default */
	int port;		/* -p */
	size_t buflen;		/* -l */
	long nbuf;		/* -n */
	const char *host;	/* -t: the receiver */
	int accept_timeout_ms;	/* receiver: give up waiting for a peer */
};

/* A back end's connection; only the back end looks inside. */
struct ttcp_conn {
	int fd;			/* raw back end */
	void *priv;		/* asx back end: its typed objects */
	uint64_t truncated;	/* UDP: datagrams longer than -l, cut to it */
};

struct ttcp_ops {
	const char *name;
	/* TCP: receiver listens and accepts one peer; transmitter connects. */
	int (*tcp_accept)(const struct ttcp_conf *c, struct ttcp_conn *conn);
	int (*tcp_connect)(const struct ttcp_conf *c, struct ttcp_conn *conn);
	/* UDP: receiver binds the port; transmitter targets the host. */
	int (*udp_open)(const struct ttcp_conf *c, struct ttcp_conn *conn);
	/* Move one buffer: TCP send writes all of it (looping over short writes). */
	ssize_t (*send)(struct ttcp_conn *conn, const void *buf, size_t len);
	/* One read; 0 at end of stream.  UDP reads give up after an idle period. */
	ssize_t (*recv)(struct ttcp_conn *conn, void *buf, size_t len);
	void (*close)(struct ttcp_conn *conn);
};

extern const struct ttcp_ops ttcp_raw_ops;
extern const struct ttcp_ops ttcp_asx_ops;

#define TTCP_UDP_IDLE_MS 5000

#endif /* ASX_TTCP_H */
