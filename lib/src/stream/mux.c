// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * mux.c - the Multiplexor: upper streams end in a mux driver, lower
 * streams' heads call up into the mux; two maps (asx/map.h) route by key.
 *
 * Routing takes a pointer out of a map and uses it inside an RCU
 * read-side section; close_upper / unlink unbind first and wait for a
 * grace period before the stream or link record goes away.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/mux.h>
#include <asx/sync.h>

#include "core/compiler.h"
#include "stream/rcu.h"
#include "stream/stream_impl.h"
#include "core/opts.h"

struct upper {
	struct asx_mux *mux;
	struct asx_stream *s;
	struct asx_module *drv;
	struct upper *next;		/* mux->cfg */
	unsigned char key[ASX_MAP_KEY_MAX];
};

struct lower {
	struct asx_mux *mux;
	struct asx_stream *s;
	struct lower *next;		/* mux->cfg */
	bool keyed;
	unsigned char key[ASX_MAP_KEY_MAX];
};

struct asx_mux {
	size_t key_size;
	asx_mux_key_fn *key_of;
	void *arg;
	struct asx_map *up, *down;
	struct lower *deflt;		/* RCU */
	struct asx_mutex cfg;
	struct upper *uppers;
	struct lower *lowers;
	struct asx_mux_stats st;	/* atomic fields */
};

static void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

static int unroutable(struct asx_mux *mux, struct asx_msg *m)
{
	count(&mux->st.unroutable);
	asx_msg_free_chain(m);
	return 0;
}

/* Down: the write side of each upper stream's tail. */
static int mux_down_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct upper *u = asx_module_arg(asx_task_module(t));
	struct asx_mux *mux = u->mux;
	unsigned char key[ASX_MAP_KEY_MAX];
	struct lower *l = NULL;
	void *v;
	int r;

	if (m->type == ASX_MSG_FLUSH) {
		/* a driver's answer: turn it back up when it asks for that */
		if (asx_msg_block_len(m) && (m->rd[0] & ASX_STREAM_FLUSHR)) {
			m->rd[0] &= (unsigned char)~ASX_STREAM_FLUSHW;
			if (asx_task_reply(t, m, dl) == 0)
				return 0;
		}
		asx_msg_free_chain(m);
		return 0;
	}
	if (mux->key_of(m, key, mux->arg))
		return unroutable(mux, m);
	asx__rcu_read_lock();
	if (asx_map_find(mux->down, key, &v) == 0)
		l = v;
	else
		l = asx__rcu_deref(mux->deflt);
	if (!l) {
		asx__rcu_read_unlock();
		return unroutable(mux, m);
	}
	r = asx_stream_put(l->s, m, 0, dl);
	asx__rcu_read_unlock();
	if (r == 0)
		count(&mux->st.down);
	return r;
}

static const struct asx_task_ops mux_down_ops = { .put = mux_down_put };

/* Up: replaces the head's read queue of each linked lower stream. */
static int mux_up(void *arg, struct asx_stream *s, struct asx_msg *m, const struct timespec *dl)
{
	struct lower *l = arg;
	struct asx_mux *mux = l->mux;
	unsigned char key[ASX_MAP_KEY_MAX];
	struct upper *u;
	void *v;
	int r;

	(void)s;
	if (mux->key_of(m, key, mux->arg))
		return unroutable(mux, m);
	asx__rcu_read_lock();
	if (asx_map_find(mux->up, key, &v)) {
		asx__rcu_read_unlock();
		return unroutable(mux, m);
	}
	u = v;
	r = asx_task_put_next(asx_module_rd(u->drv), m, dl);
	asx__rcu_read_unlock();
	if (r == 0)
		count(&mux->st.up);
	return r;
}

int asx_mux_create(struct asx_mux **mp, enum asx_map_lock lock, size_t key_size,
		   asx_mux_key_fn *key_of, void *arg)
{
	struct asx_mux *mux;
	int r;

	if (!mp || !key_of || !key_size || key_size > ASX_MAP_KEY_MAX)
		return -EINVAL;
	mux = calloc(1, sizeof(*mux));
	if (!mux)
		return -ENOMEM;
	mux->key_size = key_size;
	mux->key_of = key_of;
	mux->arg = arg;
	asx_mutex_init(&mux->cfg);
	r = asx_map_create(&mux->up, lock, key_size);
	if (r)
		goto err_free;
	r = asx_map_create(&mux->down, lock, key_size);
	if (r)
		goto err_up;
	*mp = mux;
	return 0;

err_up:
	asx_map_destroy(mux->up);
err_free:
	free(mux);
	return r;
}

int asx_mux_open_upper(struct asx_mux *mux, const void *key, const struct asx_stream_opts *opts,
		       struct asx_stream **sp)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	struct asx_stream_opts in;
	struct upper *u;
	int r;

	if (!mux || !key || !sp)
		return -EINVAL;
	r = ASX__OPTS_COPY(&in, opts);
	if (r)
		return r;
	if (in.tail || in.driver)
		return -EINVAL;
	o.head_hiwat = in.head_hiwat;
	o.head_lowat = in.head_lowat;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->mux = mux;
	memcpy(u->key, key, mux->key_size);
	r = asx_module_create(&u->drv, "mux", &mux_down_ops, NULL, u);
	if (r) {
		free(u);
		return r;
	}
	asx_module_set_dtor(u->drv, free);
	o.driver = u->drv;
	r = asx_stream_open(&u->s, &o);
	if (r) {
		asx_module_destroy(u->drv);
		return r;
	}
	asx_mutex_lock(&mux->cfg);
	r = asx_map_bind(mux->up, key, u);
	if (r == 0) {
		u->next = mux->uppers;
		mux->uppers = u;
	}
	asx_mutex_unlock(&mux->cfg);
	if (r) {
		asx_stream_close(u->s);		/* frees u through the driver */
		return r;
	}
	*sp = u->s;
	return 0;
}

int asx_mux_close_upper(struct asx_mux *mux, struct asx_stream *upper)
{
	struct upper **pp, *u = NULL;

	if (!mux || !upper)
		return -EINVAL;
	asx_mutex_lock(&mux->cfg);
	for (pp = &mux->uppers; *pp; pp = &(*pp)->next) {
		if ((*pp)->s == upper) {
			u = *pp;
			*pp = u->next;
			asx_map_unbind(mux->up, u->key, NULL);
			break;
		}
	}
	asx_mutex_unlock(&mux->cfg);
	if (!u)
		return -ENOENT;
	(void)asx__rcu_synchronize();
	asx_stream_close(upper);
	return 0;
}

/* @key has a value in @map now (mux->cfg held: nobody binds meanwhile) */
static bool bound(struct asx_map *map, const void *key)
{
	void *v;
	int r;

	asx__rcu_read_lock();
	r = asx_map_find(map, key, &v);
	asx__rcu_read_unlock();
	return r == 0;
}

int asx_mux_link(struct asx_mux *mux, struct asx_stream *lower, const void *key)
{
	struct lower *l, *it;
	bool undone = false;
	int r = 0;

	if (!mux || !lower)
		return -EINVAL;
	if (asx__rcu_in_reader())
		return -EDEADLK;	/* a failed bind waits for a grace period */
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->mux = mux;
	l->s = lower;
	asx_mutex_lock(&mux->cfg);
	for (it = mux->lowers; it; it = it->next)
		if (it->s == lower)
			r = -EBUSY;
	if (r == 0 && (key ? bound(mux->down, key) : mux->deflt != NULL))
		r = -EEXIST;
	if (r == 0)
		r = asx__stream_claim(lower);	/* -EBUSY: linked under another mux */
	if (r)
		goto out;
	/*
	 * The head calls up before the first route leads down @lower: a
	 * message routed down as soon as the route is published may come
	 * back up at once, and must not stay in the lower's head queue.
	 */
	asx__stream_set_upcall(lower, mux_up, l);
	if (key) {
		l->keyed = true;
		memcpy(l->key, key, mux->key_size);
		r = asx_map_bind(mux->down, key, l);
		if (r) {
			/* no memory: undone, after a grace period below */
			asx__stream_set_upcall(lower, NULL, NULL);
			asx__stream_release(lower);
			undone = true;
			goto out;
		}
	} else {
		asx__rcu_assign(mux->deflt, l);
	}
	l->next = mux->lowers;
	mux->lowers = l;
out:
	asx_mutex_unlock(&mux->cfg);
	if (undone)
		(void)asx__rcu_synchronize();	/* a head may be calling up with @l */
	if (r)
		free(l);
	return r;
}

int asx_mux_unlink(struct asx_mux *mux, struct asx_stream *lower)
{
	struct lower **pp, *l = NULL;

	if (!mux || !lower)
		return -EINVAL;
	if (asx__rcu_in_reader())
		return -EDEADLK;
	asx_mutex_lock(&mux->cfg);
	for (pp = &mux->lowers; *pp; pp = &(*pp)->next) {
		if ((*pp)->s == lower) {
			l = *pp;
			*pp = l->next;
			if (l->keyed)
				asx_map_unbind(mux->down, l->key, NULL);
			else
				asx__rcu_assign(mux->deflt, NULL);
			break;
		}
	}
	asx_mutex_unlock(&mux->cfg);
	if (!l)
		return -ENOENT;
	/*
	 * Nothing is routed down @lower any more once a grace period has
	 * passed; what is inside it (replies on their way up) still reaches
	 * the head, and is routed up, until the stream has handed it all on.
	 */
	(void)asx__stream_quiesce(lower);
	asx__stream_set_upcall(lower, NULL, NULL);
	(void)asx__rcu_synchronize();
	asx__stream_release(lower);	/* another mux may link it now */
	free(l);
	return 0;
}

void asx_mux_destroy(struct asx_mux *mux)
{
	if (!mux)
		return;
	while (mux->uppers)
		asx_mux_close_upper(mux, mux->uppers->s);
	while (mux->lowers)
		asx_mux_unlink(mux, mux->lowers->s);
	asx_map_destroy(mux->up);
	asx_map_destroy(mux->down);
	asx_mutex_destroy(&mux->cfg);
	free(mux);
}

void asx_mux_stats(struct asx_mux *mux, struct asx_mux_stats *st)
{
	if (!mux || !st)
		return;
	st->down = __atomic_load_n(&mux->st.down, __ATOMIC_RELAXED);
	st->up = __atomic_load_n(&mux->st.up, __ATOMIC_RELAXED);
	st->unroutable = __atomic_load_n(&mux->st.unroutable, __ATOMIC_RELAXED);
}

struct asx_map *asx_mux_upper_map(struct asx_mux *mux)
{
	return mux ? mux->up : NULL;
}
