/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * proactor_impl.h - the Proactor's state shared by its front (proactor.c)
 * and its two back ends (uring.c: io_uring; rx.c: the Reactor).
 *
 * Every completion handler in flight is on p->flight (doubly linked
 * through its private area) from its start until its result is known;
 * then it goes, with its result, on a list of done handlers whose
 * callbacks run on the loop's thread.  p->lock guards both lists, every
 * handler's private state and the back end's submission side.
 */
#ifndef ASX_PROACTOR_IMPL_H
#define ASX_PROACTOR_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include <asx/proactor.h>

enum pop_kind {
	POP_NONE, POP_ACCEPT, POP_CONNECT, POP_READ, POP_WRITE, POP_READV, POP_WRITEV,
	POP_RECV, POP_SEND, POP_TIMER, POP_POST,
};

enum pop_state { POP_IDLE = 0, POP_FLIGHT, POP_DONE };

/* A handler's private state, overlaid on asx_completion.asx__priv. */
struct pop {
	struct asx_proactor *p;
	struct asx_completion *prev, *next;	/* p->flight */
	struct asx_completion *qnext;		/* a done list, a descriptor's queue */
	uint8_t kind, state;
	bool cancelled;				/* asx_proactor_cancel() asked */
	uint8_t backlog;			/* io_uring: on u->backlog, for what */
	int fd;
	int flags;				/* recv/send flags */
	void *buf;				/* or the iovec array */
	size_t len;				/* or iovcnt */
	int64_t res;				/* once done */
	uint64_t deadline_ns;			/* timer; connect's timeout (0: none) */
	int64_t timer_id;			/* Reactor back end */
	int64_t ts[2];				/* io_uring: a timeout's timespec until submitted */
	struct sockaddr *addr;			/* connect: a copy */
	socklen_t addrlen;
};

_Static_assert(sizeof(struct pop) <= sizeof(((struct asx_completion *)0)->asx__priv),
	       "struct pop outgrew asx_completion's private area");

static inline struct pop *pop_of(struct asx_completion *c)
{
	return (struct pop *)(void *)&c->asx__priv;
}

struct asx__pdone {
	struct asx_completion *head, *tail;
};

struct asx__pbackend {
	/* open the back end's state in p->be; why: a static sentence */
	int (*open)(struct asx_proactor *p, unsigned int entries, const char **why);
	void (*close)(struct asx_proactor *p);
	/* start c (state set, on p->flight), p->lock held: 0 or -errno (c is unlinked by the caller) */
	int (*start)(struct asx_proactor *p, struct asx_completion *c);
	/* ask c's end, p->lock held, c in flight */
	void (*cancel)(struct asx_proactor *p, struct asx_completion *c);
	/* wait for and run completions until @deadline; the number run or -errno */
	int (*run_once)(struct asx_proactor *p, const struct timespec *deadline);
	/* wake run_once (from any thread) */
	void (*wake)(struct asx_proactor *p);
	/* end every operation in flight (close): they complete, -ECANCELED */
	void (*cancel_all)(struct asx_proactor *p);
};

struct asx_proactor {
	pthread_mutex_t lock;
	const struct asx__pbackend *be_ops;
	enum asx_proactor_backend backend;
	const char *why;
	struct asx_completion *flight;		/* in flight, a doubly linked list */
	unsigned int nflight;			/* on p->flight, plus done not yet run */
	struct asx__pdone done;			/* results known, callbacks to run */
	bool closing;
	bool uring_required;			/* open: no fallback */
	atomic_bool stop;
	atomic_bool wake_pending;
	_Atomic(pthread_t) owner;		/* the thread in run*, or 0 */
	atomic_bool running;
	void *be;				/* the back end's state */
};

/* Is the caller the thread running the loop (or closing)? */
static inline bool asx__pop_on_loop(struct asx_proactor *p)
{
	return atomic_load(&p->running) && pthread_equal(atomic_load(&p->owner), pthread_self());
}

/* proactor.c, for the back ends (p->lock held unless said) */
/* c's result is known: off p->flight, onto @list (p->done if NULL) */
void asx__pop_done(struct asx_proactor *p, struct asx_completion *c, int64_t res,
		   struct asx__pdone *list);
/* Append @c to the end of @l. */
void asx__pop_append(struct asx__pdone *l, struct asx_completion *c);
/* Take p->done and run its callbacks (p->lock not held): how many ran. */
int asx__pop_run_done(struct asx_proactor *p);
/* Run the callbacks of @list (p->lock not held): how many ran. */
int asx__pop_run_list(struct asx_proactor *p, struct asx__pdone *list);

extern const struct asx__pbackend asx__proactor_rx;
#ifdef ASX_HAVE_LIBURING
extern const struct asx__pbackend asx__proactor_uring;
#endif

#endif /* ASX_PROACTOR_IMPL_H */
