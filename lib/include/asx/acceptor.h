/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/acceptor.h - Acceptor, Connector and Svc_Handler: the connection
 * frameworks over IPC SAP streams.
 *
 * A service handler (struct asx_svc_handler, embedded in the
 * application's per-connection object) owns one connected stream and has
 * four callbacks.  An acceptor listens on an address (TCP, UNIX: any
 * address IPC SAP takes), accepts, asks its factory for a new handler per
 * connection and runs it under the concurrency strategy it was given; a
 * connector connects (synchronously, or asynchronously with the completion
 * dispatched by a Reactor) and runs the handler the same way.
 *
 * Strategies (struct asx_svc_strategy):
 *   ASX_SVC_REACTIVE  the handler's stream is registered with a Reactor:
 *                     open, input, output and close run on its
 *                     dispatching thread (or pool threads);
 *   ASX_SVC_THREAD    a pthread per connection;
 *   ASX_SVC_ASC       an ASC user thread per connection (in @asc with
 *                     @qos); its IPC SAP calls park the user thread.
 * In the thread strategies the framework waits (poll, parking a user
 * thread) for the stream to be readable (or writable, when asked for) and
 * calls input / output; they may also block on the stream themselves.
 *
 * Lifetime of a handler given to the framework:
 *   - open(h) runs once, first, with h's stream connected; a negative
 *     value closes the handler at once;
 *   - input(h) / output(h) run while it lives, never two at once for one
 *     handler; a negative value closes it; 0 goes on;
 *   - close(h, why) runs exactly once, last (why: 0 for a peer close or a
 *     negative callback value, -ECANCELED when its acceptor or connector
 *     was closed, an errno of a failed connect, in which case open never
 *     ran); the stream is closed right after it returns, then release(h)
 *     is called (free the object there; may be NULL).
 *
 * Errors are negative errno values (asx/common.h).
 * Full reference: Documentation/frameworks.rst.
 */
#ifndef ASX_ACCEPTOR_H
#define ASX_ACCEPTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <asx/common.h>
#include <asx/addr.h>
#include <asx/reactor.h>
#include <asx/sock.h>

#ifdef __cplusplus
extern "C" {
#endif

struct asx_svc_handler;
struct asx_acceptor;
struct asx_connector;
struct asx_asc;
struct asx_qos;

struct asx_svc_handler_ops {
	int (*open)(struct asx_svc_handler *h);
	int (*input)(struct asx_svc_handler *h);
	int (*output)(struct asx_svc_handler *h);	/* NULL: never asked */
	void (*close)(struct asx_svc_handler *h, int why);
	void (*release)(struct asx_svc_handler *h);
};

struct asx_svc_handler {
	const struct asx_svc_handler_ops *ops;
	void *ctx;			/* the application's, untouched */
	struct asx_sock_stream stream;	/* owned by the framework */
	/* libasx's own state, opaque */
	struct asx_event_handler asx__eh;
	void *asx__owner;
	void *asx__link[2];
	unsigned int asx__flags;
	int asx__why;
	int64_t asx__timer;
};

/* Set @ops and @ctx, clear the rest: call before handing @h over. */
ASX_API void asx_svc_handler_init(struct asx_svc_handler *h,
				  const struct asx_svc_handler_ops *ops, void *ctx);
/* The handler's stream (for asx_sock_stream_recv/send ...). */
static inline struct asx_sock_stream *asx_svc_handler_stream(struct asx_svc_handler *h)
{
	return &h->stream;
}
/*
 * Ask for output() calls while the stream is writable (@on) or stop.
 * Call from the handler's own callbacks.  0, -EINVAL (no output callback).
 */
ASX_API int asx_svc_handler_want_output(struct asx_svc_handler *h, bool on);

enum asx_svc_kind {
	ASX_SVC_REACTIVE = 0,
	ASX_SVC_THREAD,
	ASX_SVC_ASC,
};

struct asx_svc_strategy {
	enum asx_svc_kind kind;
	struct asx_reactor *reactor;	/* REACTIVE; connectors: async completion */
	struct asx_asc *asc;		/* ASC */
	const struct asx_qos *qos;	/* ASC: in @asc's schema (NULL: DIRECT only) */
};

/*
 * The acceptor's factory: a new handler for a connection (its stream not
 * yet set), or NULL to refuse it (the connection is closed).
 */
typedef struct asx_svc_handler *(*asx_svc_make_fn)(void *arg);

/* Size-first: ASX_OPTS(struct asx_acceptor_opts, o, .make = f, ...). */
struct asx_acceptor_opts {
	size_t sz;
	struct asx_svc_strategy strategy;
	asx_svc_make_fn make;		/* required */
	void *arg;			/* passed to make */
	const struct asx_sock_opts *sock;	/* listen options (NULL: REUSEADDR) */
	unsigned int max_handlers;	/* 0: no limit; above it, refused */
};

/*
 * Listen on @local and accept under @opts->strategy: REACTIVE accepts on
 * the Reactor's dispatching thread; THREAD and ASC run an accept thread of
 * the same kind.  0, -EINVAL, or IPC SAP's / the strategy's error.
 */
ASX_API int asx_acceptor_create(struct asx_acceptor **out, const struct asx_addr *local,
				const struct asx_acceptor_opts *opts);
/* The bound address (a port 0 resolved). */
ASX_API int asx_acceptor_local_addr(struct asx_acceptor *acc, struct asx_addr *out);
/*
 * Stop accepting (new connections wait in the listen queue) / go on.
 * 0, or the Reactor's error.
 */
ASX_API int asx_acceptor_suspend(struct asx_acceptor *acc);
ASX_API int asx_acceptor_resume(struct asx_acceptor *acc);
struct asx_acceptor_stats {
	uint64_t accepted, opened, closed, refused;
	unsigned int live;
};
ASX_API void asx_acceptor_stats(struct asx_acceptor *acc, struct asx_acceptor_stats *st);
/*
 * Stop listening and close every live handler (close(h, -ECANCELED)).
 * THREAD and ASC: returns once every handler thread and the accept thread
 * ended.  REACTIVE: handlers not in a callback are closed before it
 * returns, one in a callback (of another thread) when that returns; the
 * acceptor's memory goes with the last of them.  Call it once; in the
 * thread strategies never from one of its own handlers (it would wait for
 * its own thread).  Always 0.
 */
ASX_API int asx_acceptor_destroy(struct asx_acceptor *acc);

/* Size-first: ASX_OPTS(struct asx_connector_opts, o, ...). */
struct asx_connector_opts {
	size_t sz;
	struct asx_svc_strategy strategy;
	const struct asx_sock_opts *sock;	/* connect options */
};
ASX_API int asx_connector_create(struct asx_connector **out,
				 const struct asx_connector_opts *opts);
/*
 * Connect @h to @to, waiting until @deadline (NULL: for ever), then run
 * it under the strategy (open() has been called or queued when it
 * returns 0).  On failure (-ETIMEDOUT, -ECONNREFUSED, ...) @h is not
 * taken: no callback runs and the caller still owns it.
 */
ASX_API int asx_connector_connect(struct asx_connector *c, struct asx_svc_handler *h,
				  const struct asx_addr *to, const struct timespec *deadline);
/*
 * Asynchronous connect: start it and return 0 (@h taken) or an error (@h
 * not taken).  The strategy's Reactor (required) completes it: on success
 * @h runs as with connect(); on failure or after @timeout_ns (0: none)
 * close(h, -ECONNREFUSED / -ETIMEDOUT / ...) is called on the Reactor's
 * dispatching thread (-ECANCELED: on the thread that destroys the
 * connector), without open().
 */
ASX_API int asx_connector_connect_async(struct asx_connector *c, struct asx_svc_handler *h,
					const struct asx_addr *to, uint64_t timeout_ns);
/*
 * Close every handler it runs (close(h, -ECANCELED)), pending connects
 * included, as asx_acceptor_destroy(), and free it.
 */
ASX_API int asx_connector_destroy(struct asx_connector *c);

#ifdef __cplusplus
}
#endif
#endif /* ASX_ACCEPTOR_H */
