// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * map.c - Map_Manager<EXT_ID, INT_ID, LOCK> in C: one chained hash table
 * for the none / mutex / rwlock strategies, liburcu's lfht for RCU.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/map.h>
#include <asx/sync.h>

#include "core/compiler.h"
#include "core/probes.h"
#include "stream/rcu.h"

#include <urcu/rculfhash.h>

/* A chained-table entry. */
struct hent {
	struct hent *next;
	void *value;
	uint64_t hash;
	unsigned char key[];
};

/* An lfht entry. */
struct rent {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	struct rent *dead;	/* asx_map_destroy's list */
	void *value;
	int pub;		/* set (release) before the entry is added */
	unsigned char key[];
};

struct rkey {
	const void *key;
	size_t size;
};

struct asx_map {
	enum asx_map_lock lock;
	size_t key_size;
	size_t count;			/* atomic for RCU */
	struct asx_mutex mutex;
	struct asx_rwlock rw;
	struct hent **tab;		/* none / mutex / rwlock */
	size_t nbuckets;		/* power of two */
	struct cds_lfht *ht;		/* RCU */
	unsigned long rcu_buckets;	/* RCU: size asked for (under mutex) */
	int deferred;			/* RCU: entries freed by call_rcu, atomic */
};

static uint64_t hash_key(const void *key, size_t n)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 32);
}

static void rd_lock(struct asx_map *m)
{
	if (m->lock == ASX_MAP_MUTEX)
		asx_mutex_lock(&m->mutex);
	else if (m->lock == ASX_MAP_RWLOCK)
		asx_rwlock_rdlock(&m->rw);
}

static void wr_lock(struct asx_map *m)
{
	if (m->lock == ASX_MAP_MUTEX)
		asx_mutex_lock(&m->mutex);
	else if (m->lock == ASX_MAP_RWLOCK)
		asx_rwlock_wrlock(&m->rw);
}

static void unlock(struct asx_map *m)
{
	if (m->lock == ASX_MAP_MUTEX)
		asx_mutex_unlock(&m->mutex);
	else if (m->lock == ASX_MAP_RWLOCK)
		asx_rwlock_unlock(&m->rw);
}

static int rmatch(struct cds_lfht_node *node, const void *arg)
{
	const struct rent *e = caa_container_of(node, struct rent, node);
	const struct rkey *k = arg;

	if (!__atomic_load_n(&e->pub, __ATOMIC_ACQUIRE))
		return 0;
	return !memcmp(e->key, k->key, k->size);
}

static void rent_free(struct rcu_head *head)
{
	ASX_RCU_TSAN_ACQUIRE();
	free(caa_container_of(head, struct rent, rcu));
}

int asx_map_create(struct asx_map **mp, enum asx_map_lock lock, size_t key_size)
{
	struct asx_map *m;

	if (!mp || (unsigned int)lock > ASX_MAP_RCU || !key_size || key_size > ASX_MAP_KEY_MAX)
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->lock = lock;
	m->key_size = key_size;
	asx_mutex_init(&m->mutex);
	asx_rwlock_init(&m->rw);
	if (lock == ASX_MAP_RCU) {
		/*
		 * No CDS_LFHT_AUTO_RESIZE: bind resizes synchronously instead,
		 * so no work is handed to liburcu's worker threads (whose
		 * hand-overs ThreadSanitizer cannot see).
		 */
		m->rcu_buckets = 64;
		m->ht = cds_lfht_new_flavor(64, 64, 0, 0, &urcu_memb_flavor, NULL);
		if (!m->ht)
			goto err_free;
	} else {
		m->nbuckets = 64;
		m->tab = calloc(m->nbuckets, sizeof(*m->tab));
		if (!m->tab)
			goto err_free;
	}
	*mp = m;
	return 0;

err_free:
	free(m);
	return -ENOMEM;
}

void asx_map_destroy(struct asx_map *m)
{
	if (!m)
		return;
	if (m->ht) {
		struct cds_lfht_iter it;
		struct rent *e;

		struct rent *dead = NULL;

		asx__rcu_read_lock();
		cds_lfht_for_each_entry(m->ht, &it, e, node) {
			if (!cds_lfht_del(m->ht, &e->node)) {
				e->dead = dead;
				dead = e;
			}
		}
		asx__rcu_read_unlock();
		(void)asx__rcu_synchronize();
		while (dead) {
			e = dead;
			dead = e->dead;
			free(e);
		}
		if (__atomic_load_n(&m->deferred, __ATOMIC_ACQUIRE))
			asx__rcu_barrier();
		cds_lfht_destroy(m->ht, NULL);
	} else {
		for (size_t i = 0; i < m->nbuckets; i++) {
			struct hent *e, *n;

			for (e = m->tab[i]; e; e = n) {
				n = e->next;
				free(e);
			}
		}
		free(m->tab);
	}
	asx_rwlock_destroy(&m->rw);
	asx_mutex_destroy(&m->mutex);
	free(m);
}

/* Chained table: the slot that points at @key's entry (or at NULL). */
static struct hent **slot_of(struct asx_map *m, const void *key, uint64_t h)
{
	struct hent **pp = &m->tab[h & (m->nbuckets - 1)];

	while (*pp && ((*pp)->hash != h || memcmp((*pp)->key, key, m->key_size)))
		pp = &(*pp)->next;
	return pp;
}

static void grow_locked(struct asx_map *m)
{
	size_t nb = m->nbuckets * 2;
	struct hent **tab = calloc(nb, sizeof(*tab));

	if (!tab)
		return;		/* longer chains, still correct */
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct hent *e, *n;

		for (e = m->tab[i]; e; e = n) {
			n = e->next;
			e->next = tab[e->hash & (nb - 1)];
			tab[e->hash & (nb - 1)] = e;
		}
	}
	free(m->tab);
	m->tab = tab;
	m->nbuckets = nb;
}

static int bind_rcu(struct asx_map *m, const void *key, void *value, uint64_t h)
{
	struct rent *e = malloc(sizeof(*e) + m->key_size);
	struct cds_lfht_node *got;
	struct rkey k = { key, m->key_size };

	if (!e)
		return -ENOMEM;
	cds_lfht_node_init(&e->node);
	memcpy(e->key, key, m->key_size);
	e->value = value;
	__atomic_store_n(&e->pub, 1, __ATOMIC_RELEASE);
	asx__rcu_read_lock();
	got = cds_lfht_add_unique(m->ht, h, rmatch, &k, &e->node);
	asx__rcu_read_unlock();
	if (got != &e->node) {
		free(e);
		return -EEXIST;
	}
	if (__atomic_add_fetch(&m->count, 1, __ATOMIC_RELAXED) >
	    2 * __atomic_load_n(&m->rcu_buckets, __ATOMIC_RELAXED) && !asx__rcu_in_reader()) {
		asx_mutex_lock(&m->mutex);
		if (__atomic_load_n(&m->count, __ATOMIC_RELAXED) > 2 * m->rcu_buckets) {
			__atomic_store_n(&m->rcu_buckets, m->rcu_buckets * 4, __ATOMIC_RELAXED);
			cds_lfht_resize(m->ht, m->rcu_buckets);
		}
		asx_mutex_unlock(&m->mutex);
	}
	return 0;
}

int asx_map_bind(struct asx_map *m, const void *key, void *value)
{
	uint64_t h;
	struct hent **pp, *e;
	int r;

	if (!m || !key || !value)
		return -EINVAL;
	h = hash_key(key, m->key_size);
	if (m->lock == ASX_MAP_RCU) {
		r = bind_rcu(m, key, value, h);
		ASX_PROBE2(map_bind, m, r);
		return r;
	}
	e = malloc(sizeof(*e) + m->key_size);
	if (!e)
		return -ENOMEM;
	e->hash = h;
	e->value = value;
	memcpy(e->key, key, m->key_size);
	wr_lock(m);
	pp = slot_of(m, key, h);
	if (*pp) {
		r = -EEXIST;
	} else {
		e->next = NULL;
		*pp = e;
		e = NULL;
		if (++m->count > m->nbuckets * 2)
			grow_locked(m);
		r = 0;
	}
	unlock(m);
	free(e);
	ASX_PROBE2(map_bind, m, r);
	return r;
}

int asx_map_unbind(struct asx_map *m, const void *key, void **value)
{
	uint64_t h;
	int r = -ENOENT;

	if (!m || !key)
		return -EINVAL;
	h = hash_key(key, m->key_size);
	if (m->lock == ASX_MAP_RCU) {
		struct rkey k = { key, m->key_size };
		struct cds_lfht_iter it;
		struct cds_lfht_node *node;

		struct rent *e = NULL;

		asx__rcu_read_lock();
		cds_lfht_lookup(m->ht, h, rmatch, &k, &it);
		node = cds_lfht_iter_get_node(&it);
		if (node && !cds_lfht_del(m->ht, node)) {
			e = caa_container_of(node, struct rent, node);
			if (value)
				*value = e->value;
			__atomic_fetch_sub(&m->count, 1, __ATOMIC_RELAXED);
			r = 0;
		}
		asx__rcu_read_unlock();
		if (e) {
			/* wait for the readers here; defer only if we are one */
			if (asx__rcu_synchronize() == 0) {
				free(e);
			} else {
				__atomic_store_n(&m->deferred, 1, __ATOMIC_RELEASE);
				asx__rcu_call(&e->rcu, rent_free);
			}
		}
	} else {
		struct hent **pp, *e = NULL;

		wr_lock(m);
		pp = slot_of(m, key, h);
		if (*pp) {
			e = *pp;
			*pp = e->next;
			m->count--;
			if (value)
				*value = e->value;
			r = 0;
		}
		unlock(m);
		free(e);
	}
	ASX_PROBE2(map_unbind, m, r);
	return r;
}

int asx_map_find_apply(struct asx_map *m, const void *key, int (*fn)(void *value, void *arg),
		       void *arg)
{
	uint64_t h;
	int r = -ENOENT;

	if (unlikely(!m || !key || !fn))
		return -EINVAL;
	h = hash_key(key, m->key_size);
	if (m->lock == ASX_MAP_RCU) {
		struct rkey k = { key, m->key_size };
		struct cds_lfht_iter it;
		struct cds_lfht_node *node;

		asx__rcu_read_lock();
		cds_lfht_lookup(m->ht, h, rmatch, &k, &it);
		node = cds_lfht_iter_get_node(&it);
		if (node)
			r = fn(caa_container_of(node, struct rent, node)->value, arg);
		ASX_PROBE2(map_find, m, node != NULL);
		asx__rcu_read_unlock();
	} else {
		struct hent *e;

		rd_lock(m);
		e = *slot_of(m, key, h);
		if (e)
			r = fn(e->value, arg);
		ASX_PROBE2(map_find, m, e != NULL);
		unlock(m);
	}
	return r;
}

static int copy_out(void *value, void *arg)
{
	*(void **)arg = value;
	return 0;
}

int asx_map_find(struct asx_map *m, const void *key, void **value)
{
	void *v;
	int r;

	if (unlikely(!value))
		return -EINVAL;
	r = asx_map_find_apply(m, key, copy_out, &v);
	if (r == 0)
		*value = v;
	return r;
}

void asx_map_synchronize(struct asx_map *m)
{
	if (!m)
		return;
	if (m->lock == ASX_MAP_RCU) {
		(void)asx__rcu_synchronize();
	} else {
		wr_lock(m);
		unlock(m);
	}
}

size_t asx_map_count(struct asx_map *m)
{
	size_t n;

	if (!m)
		return 0;
	if (m->lock == ASX_MAP_RCU)
		return __atomic_load_n(&m->count, __ATOMIC_RELAXED);
	rd_lock(m);
	n = m->count;
	unlock(m);
	return n;
}

enum asx_map_lock asx_map_strategy(const struct asx_map *m)
{
	return m->lock;
}

const char *asx_map_lock_name(enum asx_map_lock lock)
{
	switch (lock) {
	case ASX_MAP_NONE: return "none";
	case ASX_MAP_MUTEX: return "mutex";
	case ASX_MAP_RWLOCK: return "rwlock";
	case ASX_MAP_RCU: return "rcu";
	}
	return "?";
}
