// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * notify.c - cross-thread notifications and the message-queue strategy.
 *
 * Notifications wait in one FIFO (r->notifs).  Posting one writes the
 * eventfd only when no wake-up is pending yet, so a burst of posts costs
 * one write and one read.  A queue binding embeds its notification node:
 * while the node is queued, further enqueues change nothing (coalescing);
 * the node leaves the FIFO just before the callback runs, so a message
 * enqueued during the callback queues it again.
 *
 * File order of reactor/, lowest first: hmap < handler < notify < timer <
 * reactor < pool.  A file calls only its own and lower files
 * (tools/lib-layers.sh checks).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <asx/msgq.h>
#include "core/compiler.h"
#include "core/probes.h"
#include "msg/msgq_impl.h"
#include "reactor/handler.h"
#include "reactor/reactor_impl.h"

void asx__rx_wake(struct asx_reactor *r)
{
	uint64_t one = 1;
	ssize_t n;

	do
		n = write(r->wakefd, &one, sizeof(one));
	while (n < 0 && errno == EINTR);
	/* EAGAIN: the counter is saturated, the loop is awake anyway. */
}

static bool one_bit(unsigned int mask)
{
	return mask == ASX_EV_READ || mask == ASX_EV_WRITE || mask == ASX_EV_EXCEPT;
}

static bool has_callback(const struct asx_event_handler *eh, unsigned int bit)
{
	return (bit == ASX_EV_READ && eh->ops->handle_input) ||
	       (bit == ASX_EV_WRITE && eh->ops->handle_output) ||
	       (bit == ASX_EV_EXCEPT && eh->ops->handle_exception);
}

/* Lock held: queue @n; true if the caller must write the eventfd. */
static bool enqueue(struct asx_reactor *r, struct rx_notif *n)
{
	bool need = !r->wake_pending;

	rx_list_add_tail(&r->notifs, &n->link);
	n->queued = true;
	r->nnotifs++;
	r->wake_pending = true;
	return need;
}

static void dequeue(struct asx_reactor *r, struct rx_notif *n)
{
	rx_list_del(&n->link);
	n->queued = false;
	r->nnotifs--;
}

int asx_reactor_notify(struct asx_reactor *r, struct asx_event_handler *eh, unsigned int mask)
{
	static const unsigned int bits[] = { ASX_EV_READ, ASX_EV_WRITE, ASX_EV_EXCEPT };
	struct rx_notif *n[3] = { NULL, NULL, NULL };
	bool need = false;
	size_t i, k = 0;

	if (!r)
		return -EINVAL;
	if (!eh) {
		asx_mutex_lock(&r->lock);
		r->woken = true;
		need = !r->wake_pending;
		r->wake_pending = true;
		asx_mutex_unlock(&r->lock);
		if (need)
			asx__rx_wake(r);
		return 0;
	}
	if (!eh->ops || !(mask & ASX_EV_IO) || (mask & ~ASX_EV_IO))
		return -EINVAL;
	for (i = 0; i < ASX_ARRAY_SIZE(bits); i++)
		if ((mask & bits[i]) && !has_callback(eh, bits[i]))
			return -EINVAL;
	for (i = 0; i < ASX_ARRAY_SIZE(bits); i++) {
		if (!(mask & bits[i]))
			continue;
		n[k] = calloc(1, sizeof(*n[k]));
		if (!n[k]) {
			while (k--)
				free(n[k]);
			return -ENOMEM;
		}
		n[k]->eh = eh;
		n[k]->mask = bits[i];
		k++;
	}
	asx_mutex_lock(&r->lock);
	for (i = 0; i < k; i++) {
		asx_event_handler_get(eh);	/* held by the queued notification */
		need |= enqueue(r, n[i]);
	}
	asx_mutex_unlock(&r->lock);
	if (need)
		asx__rx_wake(r);
	return 0;
}

void asx__rx_notifs_take(struct asx_reactor *r, struct asx_event_handler *eh,
			struct asx__rx_link *out)
{
	struct asx__rx_link *l, *next;

	for (l = r->notifs.next; l != &r->notifs; l = next) {
		struct rx_notif *n = container_of(l, struct rx_notif, link);

		next = l->next;
		if (n->bind || (eh && n->eh != eh))
			continue;
		dequeue(r, n);
		rx_list_add_tail(out, &n->link);
	}
}

int asx__rx_notifs_free(struct asx__rx_link *list)
{
	int count = 0;

	while (!rx_list_empty(list)) {
		struct rx_notif *n = container_of(list->next, struct rx_notif, link);
		struct asx_event_handler *eh = n->eh;

		rx_list_del(&n->link);
		free(n);
		asx_event_handler_put(eh);
		count++;
	}
	return count;
}

int asx_reactor_purge_notifications(struct asx_reactor *r, struct asx_event_handler *eh)
{
	struct asx__rx_link list;

	if (!r || !eh)
		return -EINVAL;
	rx_list_init(&list);
	asx_mutex_lock(&r->lock);
	asx__rx_notifs_take(r, eh, &list);
	asx_mutex_unlock(&r->lock);
	return asx__rx_notifs_free(&list);
}

static int call(struct asx_event_handler *eh, unsigned int bit)
{
	ASX_PROBE3(reactor_dispatch, eh, -1, bit);
	if (bit == ASX_EV_READ)
		return eh->ops->handle_input(eh, -1);
	if (bit == ASX_EV_WRITE)
		return eh->ops->handle_output(eh, -1);
	return eh->ops->handle_exception(eh, -1);
}

/*
 * Lock held: end binding @b.  The hook is swapped out but not drained:
 * @b waits on r->mq_dead until asx__rx_unlock_close() drains it unlocked.
 */
static void mq_unbind(struct asx_reactor *r, struct rx_mqbind *b)
{
	asx__rx_hmap_del(&r->mqs, (uintptr_t)b->q);
	b->epoch = asx__msgq_swap_notify(b->q, NULL, NULL);
	if (b->node.queued)
		dequeue(r, &b->node);
	rx_list_del(&b->all);
	rx_list_add_tail(&r->mq_dead, &b->all);
	asx__rx_reg_end(r, b->eh, -1, ASX_EV_MSGQ);
}

/* Lock held on entry, released on return: end binding @b. */
static void bind_remove_unlock(struct asx_reactor *r, struct rx_mqbind *b)
{
	struct asx_event_handler *eh = b->eh;

	mq_unbind(r, b);
	asx__rx_unlock_close(r, eh);
}

int asx__rx_notify_dispatch(struct asx_reactor *r)
{
	size_t budget;
	int count = 0;

	asx_mutex_lock(&r->lock);
	r->wake_pending = false;
	/*
	 * One thread at a time (several run the loop on a thread-pool
	 * reactor), so the FIFO's order is the callbacks' order: a second
	 * thread leaves what it was woken for to the first.
	 */
	if (!asx__rx_solo(&r->notifying, &r->notify_again)) {
		asx_mutex_unlock(&r->lock);
		return 0;
	}
again:
	r->notify_again = false;
	/* Only what is queued now: notifications posted by callbacks wait a round. */
	budget = r->nnotifs;
	while (budget && !rx_list_empty(&r->notifs)) {
		struct rx_notif *n = container_of(r->notifs.next, struct rx_notif, link);
		struct asx_event_handler *eh = n->eh;
		struct rx_mqbind *b = n->bind;
		struct asx_msgq *q = b ? b->q : NULL;
		uint64_t bid = b ? b->id : 0;
		unsigned int bit = n->mask;
		bool ok;
		int rc;

		if (asx__rx_wait_idle(r, eh))
			continue;	/* the head may have changed */
		budget--;
		dequeue(r, n);
		ok = asx__rx_dispatch_begin(r, eh);
		asx_mutex_unlock(&r->lock);
		if (!b) {
			/* The notification's own reference; dispatch holds another. */
			free(n);
			asx_event_handler_put(eh);
		}
		if (!ok) {
			asx_mutex_lock(&r->lock);
			continue;
		}
		rc = call(eh, bit);
		count++;
		asx_mutex_lock(&r->lock);
		if (rc < 0 && b) {
			b = asx__rx_hmap_get(&r->mqs, (uintptr_t)q);
			if (b && b->id == bid) {
				bind_remove_unlock(r, b);
				asx_mutex_lock(&r->lock);
			}
		}
		asx__rx_dispatch_end(r, eh);
		asx_mutex_lock(&r->lock);
	}
	if (r->notify_again)
		goto again;
	r->notifying = false;
	asx_mutex_unlock(&r->lock);
	return count;
}

/* The queue's hook: runs in the enqueuing thread, outside the queue's lock. */
static void mq_hook(struct asx_msgq *q, void *arg)
{
	struct asx_reactor *r = arg;
	struct rx_mqbind *b;
	bool need = false;

	asx_mutex_lock(&r->lock);
	b = asx__rx_hmap_get(&r->mqs, (uintptr_t)q);
	if (b && !b->node.queued)
		need = enqueue(r, &b->node);
	asx_mutex_unlock(&r->lock);
	if (need)
		asx__rx_wake(r);
}

int asx_reactor_notify_msgq(struct asx_reactor *r, struct asx_msgq *q,
			    struct asx_event_handler *eh, unsigned int mask)
{
	struct rx_mqbind *b;
	bool need = false;
	int err;

	if (!r || !q || !eh || !eh->ops || !one_bit(mask) || !has_callback(eh, mask))
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	asx_mutex_lock(&r->lock);
	if (r->destroying) {
		err = -ESHUTDOWN;
		goto err_unlock;
	}
	if (asx__rx_hmap_get(&r->mqs, (uintptr_t)q)) {
		err = -EEXIST;
		goto err_unlock;
	}
	err = asx__rx_attach(r, eh);
	if (err)
		goto err_unlock;
	b->id = ++r->mq_id;
	b->q = q;
	b->eh = eh;
	b->mask = mask;
	b->node.eh = eh;
	b->node.mask = mask;
	b->node.bind = b;
	err = asx__rx_hmap_put(&r->mqs, (uintptr_t)q, b);
	if (err)
		goto err_detach;
	rx_list_add_tail(&r->mq_list, &b->all);
	asx__rx_reg_begin(r, eh);
	/*
	 * No drain here: we hold r->lock, which an earlier binding's hook
	 * call may be waiting for.  Unbinding drains, after unlocking.
	 */
	(void)asx__msgq_swap_notify(q, mq_hook, r);
	if (!asx_msgq_is_empty(q))
		need = enqueue(r, &b->node);
	asx_mutex_unlock(&r->lock);
	if (need)
		asx__rx_wake(r);
	return 0;

err_detach:
	asx__rx_detach_idle(r, eh);
err_unlock:
	asx_mutex_unlock(&r->lock);
	free(b);
	return err;
}

/* Lock held: take the unbound bindings, to pass to mq_drain() unlocked. */
static void mq_take_dead(struct asx_reactor *r, struct asx__rx_link *dead)
{
	rx_list_init(dead);
	while (!rx_list_empty(&r->mq_dead)) {
		struct asx__rx_link *l = r->mq_dead.next;

		rx_list_del(l);
		rx_list_add_tail(dead, l);
	}
}

/* Lock not held: wait out their queues' in-flight hook calls, then free them. */
static void mq_drain(struct asx__rx_link *dead)
{
	while (!rx_list_empty(dead)) {
		struct rx_mqbind *b = container_of(dead->next, struct rx_mqbind, all);

		rx_list_del(&b->all);
		asx__msgq_notify_drain(b->q, b->epoch);
		free(b);
	}
}

void asx__rx_unlock_close(struct asx_reactor *r, struct asx_event_handler *eh)
{
	struct asx__rx_link dead;
	unsigned int puts = asx__rx_close_run(r, eh);

	mq_take_dead(r, &dead);
	asx_mutex_unlock(&r->lock);
	/* a queue hook call may still be inside the reactor: wait before returning */
	mq_drain(&dead);
	while (puts--)
		asx_event_handler_put(eh);
}

void asx__rx_dispatch_end(struct asx_reactor *r, struct asx_event_handler *eh)
{
	asx__rx_busy_put(r, eh);
	asx__rx_unlock_close(r, eh);
	asx_event_handler_put(eh);
}

int asx_reactor_remove_msgq(struct asx_reactor *r, struct asx_msgq *q)
{
	struct rx_mqbind *b;

	if (!r || !q)
		return -EINVAL;
	asx_mutex_lock(&r->lock);
	b = asx__rx_hmap_get(&r->mqs, (uintptr_t)q);
	if (!b) {
		asx_mutex_unlock(&r->lock);
		return -ENOENT;
	}
	bind_remove_unlock(r, b);
	return 0;
}

unsigned int asx__rx_mq_remove(struct asx_reactor *r, struct asx_event_handler *eh)
{
	struct asx__rx_link *l, *next;
	unsigned int n = 0;

	for (l = r->mq_list.next; l != &r->mq_list; l = next) {
		struct rx_mqbind *b = container_of(l, struct rx_mqbind, all);

		next = l->next;
		if (eh && b->eh != eh)
			continue;
		mq_unbind(r, b);
		n++;
	}
	return n;
}
