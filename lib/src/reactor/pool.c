// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * pool.c - a Reactor plus a thread pool (the "Reactor plus thread-pool
 * ASC" of the papers): the dispatching thread demultiplexes, and the I/O
 * callbacks run on a pool of ASC user threads (or of pthreads).
 *
 * The dispatcher lends a ready descriptor to the pool: it takes it out of
 * epoll and queues it on r->work (reactor.c's lend()); a pool thread takes
 * it, runs its callbacks (reactor.c's asx__rx_run_lent()) and gives it back
 * to epoll.  So one descriptor's callbacks never run concurrently and run
 * in the order of its events, while different descriptors' run in
 * parallel.  Timers, signals and notifications stay on the dispatcher.
 * The queue and the pool's wake-up are the reactor's lock and an
 * asx_cond, both of which block a user thread, not its VP.
 *
 * File order of reactor/, lowest first: hmap < handler < notify < timer <
 * reactor < pool.  A file calls only its own and lower files
 * (tools/lib-layers.sh checks).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "core/compiler.h"
#include "core/opts.h"
#include "reactor/reactor_impl.h"

#define POOL_DEFAULT_THREADS 4
#define POOL_MAX_THREADS 1024

struct asx__rx_pool {
	struct asx_reactor *r;
	unsigned int n;			/* threads started */
	bool uthreads;
	pthread_t *pth;
	struct asx_asc_thread **uth;
};

/* A pool thread: take lent descriptors until the pool stops. */
static void *pool_main(void *arg)
{
	struct asx_reactor *r = arg;

	asx_mutex_lock(&r->lock);
	for (;;) {
		struct rx_fd *f;
		int fd;
		uint32_t gen, events;

		while (rx_list_empty(&r->work) && !r->pool_stop)
			asx_cond_wait(&r->work_cond, &r->lock);
		if (r->pool_stop)
			break;
		f = container_of(r->work.next, struct rx_fd, work);
		rx_list_del(&f->work);	/* still lent: out of epoll */
		fd = f->fd;
		gen = f->gen;
		events = f->lent_events;
		asx_mutex_unlock(&r->lock);
		(void)asx__rx_run_lent(r, fd, gen, events);
		asx_mutex_lock(&r->lock);
	}
	asx_mutex_unlock(&r->lock);
	return NULL;
}

static void pool_join(struct asx__rx_pool *p)
{
	unsigned int i;

	for (i = 0; i < p->n; i++) {
		if (p->uthreads)
			(void)asx_asc_thread_join(p->uth[i], NULL);
		else
			(void)pthread_join(p->pth[i], NULL);
	}
}

static void pool_free(struct asx__rx_pool *p)
{
	free(p->pth);
	free(p->uth);
	free(p);
}

/* The caller is one of @p's threads (a callback that would join itself). */
static bool in_pool(const struct asx__rx_pool *p)
{
	struct asx_asc_thread *self = asx_asc_thread_self();
	unsigned int i;

	unsigned int n = __atomic_load_n(&p->n, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++)
		if (p->uthreads ? p->uth[i] == self : pthread_equal(p->pth[i], pthread_self()))
			return true;
	return false;
}

/* Stop @p's threads (the first @p->n started), give back what they left. */
static void pool_end(struct asx_reactor *r, struct asx__rx_pool *p)
{
	asx_mutex_lock(&r->lock);
	r->pool_stop = true;
	asx_cond_broadcast(&r->work_cond);
	asx_mutex_unlock(&r->lock);
	pool_join(p);
	asx_mutex_lock(&r->lock);
	asx__rx_unlend_all(r);
	__atomic_store_n(&r->pool, NULL, __ATOMIC_RELEASE);
	r->pool_stop = false;
	asx_mutex_unlock(&r->lock);
	pool_free(p);
}

int asx_reactor_pool_start(struct asx_reactor *r, const struct asx_reactor_pool_opts *opts)
{
	struct asx_reactor_pool_opts o;
	struct asx__rx_pool *p;
	unsigned int i, n;
	int err;

	if (!r)
		return -EINVAL;
	if (r->tp)	/* its own threads dispatch the I/O callbacks already */
		return -EINVAL;
	err = ASX__OPTS_COPY(&o, opts);
	if (err)
		return err;
	n = o.nthreads ? o.nthreads : POOL_DEFAULT_THREADS;
	if (n > POOL_MAX_THREADS)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->r = r;
	p->uthreads = o.asc != NULL;
	if (p->uthreads)
		p->uth = calloc(n, sizeof(*p->uth));
	else
		p->pth = calloc(n, sizeof(*p->pth));
	if (!p->uth && !p->pth) {
		pool_free(p);
		return -ENOMEM;
	}
	asx_mutex_lock(&r->lock);
	if (r->pool || r->destroying) {
		asx_mutex_unlock(&r->lock);
		pool_free(p);
		return r->destroying ? -ESHUTDOWN : -EBUSY;
	}
	__atomic_store_n(&r->pool, p, __ATOMIC_RELEASE);
	asx_mutex_unlock(&r->lock);
	for (i = 0; i < n; i++) {
		if (p->uthreads)
			err = asx_asc_thread_spawn(o.asc, o.qos, pool_main, r, NULL, &p->uth[i]);
		else
			err = -pthread_create(&p->pth[i], NULL, pool_main, r);
		if (err)
			break;
		__atomic_store_n(&p->n, i + 1, __ATOMIC_RELEASE);
	}
	if (err)
		pool_end(r, p);
	return err;
}

int asx_reactor_pool_stop(struct asx_reactor *r)
{
	struct asx__rx_pool *p;

	if (!r)
		return -EINVAL;
	asx_mutex_lock(&r->lock);
	p = r->pool;
	if (!p || r->pool_stop || in_pool(p)) {
		asx_mutex_unlock(&r->lock);
		return !p ? -ENOENT : r->pool_stop ? -EBUSY : -EDEADLK;
	}
	r->pool_stop = true;	/* this caller ends it: a second gets -EBUSY */
	asx_mutex_unlock(&r->lock);
	pool_end(r, p);
	return 0;
}

unsigned int asx_reactor_pool_threads(struct asx_reactor *r)
{
	unsigned int n;

	if (!r)
		return 0;
	asx_mutex_lock(&r->lock);
	n = r->pool ? __atomic_load_n(&r->pool->n, __ATOMIC_ACQUIRE) : 0;
	asx_mutex_unlock(&r->lock);
	return n;
}
