/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * endpoint.h - a configured Stream reachable from outside (endpoint.c):
 * "stream NAME listen ADDRESS [raw|framed] { ... }" binds the Stream's
 * head to a listening socket.  Each accepted connection's bytes go down
 * the Stream as messages; what reaches the head goes back to the
 * connection it came from (Documentation/svc.rst, "Endpoints").
 *
 * Self-contained: its own two threads (one polls the listening socket and
 * the connections, one takes what reaches the head), behind a start/stop
 * interface, so it can move onto the configurator's Reactor.  Calls no
 * other file of lib/src/svc.
 */
#ifndef ASX_SRC_SVC_ENDPOINT_H
#define ASX_SRC_SVC_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>

struct asx_stream;
struct asx__svc_ep;

#define ASX__SVC_EP_CONNS_MAX	1024	/* connections open at once; more are closed at accept */
#define ASX__SVC_EP_STALL_S	10	/* a client that takes no reply for this long is closed */

/*
 * Listen on @addr (asx_addr_parse() forms) with @framing (enum
 * asx__svc_framing) and serve @s's head.  0 and *@out, or -errno and a
 * reason in @why (@whylen bytes).  The Stream must outlive the endpoint.
 */
int asx__svc_ep_start(struct asx_stream *s, const char *addr, int framing,
		      struct asx__svc_ep **out, char *why, size_t whylen);

/*
 * Stop: no more accepts; every connection closed (a client sees end of
 * file), both threads joined, the socket closed (a UNIX path unlinked).
 * Messages still on their way up stay in the Stream (freed by its close).
 */
void asx__svc_ep_stop(struct asx__svc_ep *ep);

struct asx__svc_ep_stats {
	uint64_t accepted;	/* connections accepted */
	uint64_t refused;	/* closed at accept: ASX__SVC_EP_CONNS_MAX open */
	uint64_t open;		/* open now */
	uint64_t down;		/* messages put down the Stream */
	uint64_t up;		/* messages written to their connection */
	uint64_t broadcast;	/* of those, untagged ones written to every connection */
	uint64_t dropped;	/* reached the head for a connection gone, or not carried */
	uint64_t bad;		/* connections closed for a malformed frame or a stall */
};
void asx__svc_ep_stats(struct asx__svc_ep *ep, struct asx__svc_ep_stats *st);

/* "listening on ADDRESS (framing), N open" into @buf; the length written. */
size_t asx__svc_ep_describe(struct asx__svc_ep *ep, char *buf, size_t len);

#endif /* ASX_SRC_SVC_ENDPOINT_H */
