// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * handler.c - an event handler's lifetime: its reference count (the
 * asx_event_handler_* API) and the helpers every kind of registration
 * uses (handler.h) to tie a handler to one reactor, count its
 * registrations, run handle_close when the last one ends, and bracket
 * its callbacks.
 *
 * File order of reactor/, lowest first: hmap < handler < notify < timer <
 * reactor < pool.  A file calls only its own and lower files
 * (tools/lib-layers.sh checks).
 */
#include <errno.h>
#include <string.h>

#include "reactor/handler.h"
#include "reactor/reactor_impl.h"

void asx_event_handler_init(struct asx_event_handler *eh,
			    const struct asx_event_handler_ops *ops)
{
	memset(eh, 0, sizeof(*eh));	/* one reference, no registration */
	eh->ops = ops;
}

void asx_event_handler_get(struct asx_event_handler *eh)
{
	__atomic_fetch_add(&asx__eh(eh)->refs, 1, __ATOMIC_RELAXED);
}

void asx_event_handler_put(struct asx_event_handler *eh)
{
	/* refs counts those beyond the first: 0 before the drop was the last */
	if (__atomic_fetch_sub(&asx__eh(eh)->refs, 1, __ATOMIC_ACQ_REL) == 0 && eh->ops->release)
		eh->ops->release(eh);
}

unsigned int asx_event_handler_refs(const struct asx_event_handler *eh)
{
	return __atomic_load_n(&asx__eh(eh)->refs, __ATOMIC_ACQUIRE) + 1;
}

int asx__rx_attach(struct asx_reactor *r, struct asx_event_handler *eh)
{
	struct asx_reactor *cur = NULL;

	if (__atomic_compare_exchange_n(&asx__eh(eh)->owner, &cur, r, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE) || cur == r)
		return 0;
	return -EBUSY;
}

void asx__rx_reg_begin(struct asx_reactor *r, struct asx_event_handler *eh)
{
	if (asx__eh(eh)->nreg++ == 0)
		asx_event_handler_get(eh);	/* the lifetime reference */
}

void asx__rx_reg_end(struct asx_reactor *r, struct asx_event_handler *eh, int fd,
		    unsigned int mask)
{
	if (--asx__eh(eh)->nreg == 0) {
		asx__eh(eh)->close_pending++;
		asx__eh(eh)->close_fd = fd;
		asx__eh(eh)->close_mask = mask;
	}
}

void asx__rx_detach_idle(struct asx_reactor *r, struct asx_event_handler *eh)
{
	if (asx__eh(eh)->nreg || asx__eh(eh)->busy || asx__eh(eh)->close_pending)
		return;
	asx__eh(eh)->suspended = 0;
	asx__eh(eh)->fds = NULL;
	__atomic_store_n(&asx__eh(eh)->owner, NULL, __ATOMIC_RELEASE);
}

unsigned int asx__rx_close_run(struct asx_reactor *r, struct asx_event_handler *eh)
{
	unsigned int puts = 0;

	/*
	 * Each ended lifetime still holds its reference, so @eh is alive
	 * here; the references go only after the last handle_close, and
	 * only once the caller has unlocked (notify.c's
	 * asx__rx_unlock_close()): they are what this function leaves owed.
	 */
	while (asx__eh(eh)->close_pending && !asx__eh(eh)->busy) {
		unsigned int i, n = asx__eh(eh)->close_pending;
		int fd = asx__eh(eh)->close_fd;
		unsigned int mask = asx__eh(eh)->close_mask;

		asx__eh(eh)->close_pending = 0;
		asx__eh(eh)->busy++;
		asx_mutex_unlock(&r->lock);
		for (i = 0; i < n; i++)
			if (eh->ops->handle_close)
				eh->ops->handle_close(eh, fd, mask);
		asx_mutex_lock(&r->lock);
		asx__rx_busy_put(r, eh);
		puts += n;
	}
	asx__rx_detach_idle(r, eh);
	return puts;
}

bool asx__rx_dispatch_begin(struct asx_reactor *r, struct asx_event_handler *eh)
{
	if (asx__rx_attach(r, eh))
		return false;
	asx__eh(eh)->busy++;
	asx_event_handler_get(eh);
	return true;
}

void asx__rx_busy_put(struct asx_reactor *r, struct asx_event_handler *eh)
{
	if (--asx__eh(eh)->busy == 0 && r->idle_waiters)
		asx_cond_broadcast(&r->idle_cond);
}

bool asx__rx_wait_idle(struct asx_reactor *r, struct asx_event_handler *eh)
{
	if (!r->tp || !asx__eh(eh)->busy)
		return false;
	/* keep @eh alive: its lifetime may end, and its memory go, meanwhile */
	asx_event_handler_get(eh);
	r->idle_waiters++;
	while (asx__eh(eh)->busy)
		asx_cond_wait(&r->idle_cond, &r->lock);
	r->idle_waiters--;
	asx_mutex_unlock(&r->lock);
	asx_event_handler_put(eh);	/* may be the last: release() runs unlocked */
	asx_mutex_lock(&r->lock);
	return true;
}
