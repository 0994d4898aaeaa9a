/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * handler.h - the handler lifetime helpers (handler.c) that every kind of
 * registration uses: descriptors and signals (reactor.c), timers
 * (timer.c), notifications and queue bindings (notify.c).  "Lock" is the
 * reactor's lock, r->lock.
 *
 * attach: lock held; make @r the handler's owner (0) or -EBUSY.
 * reg_begin / reg_end: lock held; count a registration in / out (the first
 *   takes the lifetime reference, the last schedules handle_close).
 * detach_idle: lock held; give the handler up if nothing ties it to @r.
 * unlock_close: lock held on entry, released on return; runs the pending
 *   handle_close calls unless a callback of the handler is running.
 * dispatch_begin: lock held; false if the handler belongs elsewhere.
 * dispatch_end: lock held on entry, released on return.
 * wait_idle: lock held; on a thread-pool reactor, wait out a callback of
 *   the handler running on another thread (one dispatch at a time).
 */
#ifndef ASX_REACTOR_HANDLER_H
#define ASX_REACTOR_HANDLER_H

#include <stdbool.h>

#include <asx/reactor.h>

/*
 * The handler's state in struct asx_event_handler's opaque asx__priv
 * (guarded by the owning reactor's lock, but for refs and owner).
 * All zero (ASX_EVENT_HANDLER_INIT) is the initial state, so @refs counts
 * the references beyond the first.  may_alias: the storage is declared as
 * pointers and integers.
 */
struct __attribute__((may_alias)) asx__eh_priv {
	unsigned int refs;		/* references - 1 */
	unsigned int nreg;
	unsigned int busy;
	unsigned int close_pending;
	int close_fd;			/* valid while close_pending */
	unsigned int close_mask;
	unsigned int suspended;
	struct asx_reactor *owner;
	void *fds;
};
_Static_assert(sizeof(struct asx__eh_priv) <= sizeof(((struct asx_event_handler *)0)->asx__priv),
	       "the handler's state outgrows struct asx_event_handler");

static inline struct asx__eh_priv *asx__eh(const struct asx_event_handler *eh)
{
	return (struct asx__eh_priv *)(void *)&((struct asx_event_handler *)eh)->asx__priv;
}

int asx__rx_attach(struct asx_reactor *r, struct asx_event_handler *eh);
void asx__rx_reg_begin(struct asx_reactor *r, struct asx_event_handler *eh);
void asx__rx_detach_idle(struct asx_reactor *r, struct asx_event_handler *eh);
void asx__rx_reg_end(struct asx_reactor *r, struct asx_event_handler *eh, int fd,
		    unsigned int mask);
/*
 * Lock held, dropped around the callbacks: run @eh's pending handle_close
 * calls, detach it if idle; returns the references the caller owes
 * (asx_event_handler_put() each, unlocked): notify.c's
 * asx__rx_unlock_close() settles them with the unbound queue bindings.
 */
unsigned int asx__rx_close_run(struct asx_reactor *r, struct asx_event_handler *eh);
bool asx__rx_dispatch_begin(struct asx_reactor *r, struct asx_event_handler *eh);
/* Lock held: a callback (or handle_close) of @eh ended; wakes wait_idle. */
void asx__rx_busy_put(struct asx_reactor *r, struct asx_event_handler *eh);
/*
 * Lock held, dropped while waiting: on a thread-pool reactor, while a
 * callback of @eh runs on another thread, wait for it to return.  True if
 * it waited: what the caller looked up under the lock may have changed,
 * and @eh may be gone, so it looks again.  Never called by a thread inside
 * a callback (dispatching threads are not), so it cannot wait for itself.
 */
bool asx__rx_wait_idle(struct asx_reactor *r, struct asx_event_handler *eh);

#endif /* ASX_REACTOR_HANDLER_H */
