/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * ttcp.h - asx-ttcp: the transport back ends behind one driver.
 *
 * main.c owns the options and the output, xfer.c the data loops and
 * their timing (shared with `asx-bench ttcp`); a back end (net_raw.c: plain socket calls, net_asx.c: the libasx IPC
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
	/* The connected socket's descriptor (for getsockopt), -1 if none. */
	int (*handle)(struct ttcp_conn *conn);
};

extern const struct ttcp_ops ttcp_raw_ops;
extern const struct ttcp_ops ttcp_asx_ops;

#define TTCP_UDP_IDLE_MS 5000

/* Faults a transmitter makes on purpose (asx-bench ttcp --inject) */
enum {
	TTCP_INJECT_NONE,
	TTCP_INJECT_SHORT,	/* the last buffer is counted but not sent */
	TTCP_INJECT_FLIP,	/* one bit of the middle buffer flips after it is summed */
};

/* One data phase (xfer.c): what to move, and what was moved. */
struct ttcp_xfer {
	size_t buflen;		/* bytes per send / the most per recv */
	long nbuf;		/* transmitter: buffers to send */
	bool udp;		/* sentinels frame the data (see main.c) */
	bool verify;		/* TCP: stamp (transmit) or check (receive) every byte */
	int inject;		/* transmitter, to test the checks: TTCP_INJECT_* */
	uint64_t bytes;		/* moved */
	uint64_t calls;		/* I/O calls that moved data */
	uint64_t sum;		/* verify: FNV-1a 64 of the bytes, in stream order */
	uint64_t bad_at;	/* verify: offset of the first wrong byte, else UINT64_MAX */
	double t0, t1;		/* CLOCK_MONOTONIC seconds around the data */
	double user_s, sys_s;	/* this process's CPU time over the same span */
};

/* @buf holds @x->buflen bytes (ttcp_pattern()ed unless verifying). */
int ttcp_transmit(const struct ttcp_ops *ops, struct ttcp_conn *conn, unsigned char *buf,
		  struct ttcp_xfer *x);
/* Reads until end of stream (TCP) or the end sentinel / idle timeout (UDP). */
int ttcp_receive(const struct ttcp_ops *ops, struct ttcp_conn *conn, unsigned char *buf,
		 struct ttcp_xfer *x);
/* tcp_connect, retrying a refused connection for 3 s. */
int ttcp_connect_retry(const struct ttcp_ops *ops, const struct ttcp_conf *c,
		       struct ttcp_conn *conn);
void ttcp_pattern(unsigned char *buf, size_t len);
double ttcp_now_s(void);
/* t1 - t0, never 0 */
double ttcp_seconds(const struct ttcp_xfer *x);

#endif /* ASX_TTCP_H */
