// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * hmap.c - the Reactor's hash map: uint64_t keys to non-NULL pointers.
 *
 * Linear probing in a power-of-two table, at most 3/4 full, halved when
 * it falls below 1/8 full.  Deletion shifts the following entries of the
 * probe run back, so there are no tombstones and lookups stay short.
 * Memory is proportional to the number of entries, whatever the keys.
 *
 * File order of reactor/, lowest first: hmap < handler < notify < timer <
 * reactor < pool.  A file calls only its own and lower files
 * (tools/lib-layers.sh checks).
 */
#include <errno.h>
#include <stdlib.h>

#include "reactor/reactor_impl.h"

#define HMAP_MIN 16

static size_t hmap_slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	key *= 0xc4ceb9fe1a85ec53ULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static int hmap_resize(struct asx__rx_hmap *m, size_t cap)
{
	uint64_t *keys = calloc(cap, sizeof(*keys));
	void **vals = calloc(cap, sizeof(*vals));
	size_t i, j;

	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		if (!m->vals[i])
			continue;
		for (j = hmap_slot(m->keys[i], cap); vals[j]; j = (j + 1) & (cap - 1))
			;
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

void *asx__rx_hmap_get(const struct asx__rx_hmap *m, uint64_t key)
{
	size_t i;

	if (!m->count)
		return NULL;
	for (i = hmap_slot(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return NULL;
}

int asx__rx_hmap_put(struct asx__rx_hmap *m, uint64_t key, void *val)
{
	size_t i;

	if ((m->count + 1) * 4 > m->cap * 3) {
		int err = hmap_resize(m, m->cap ? m->cap * 2 : HMAP_MIN);

		if (err)
			return err;
	}
	for (i = hmap_slot(key, m->cap); m->vals[i]; i = (i + 1) & (m->cap - 1))
		;
	m->keys[i] = key;
	m->vals[i] = val;
	m->count++;
	return 0;
}

void *asx__rx_hmap_del(struct asx__rx_hmap *m, uint64_t key)
{
	size_t i, j, home, mask = m->cap - 1;
	void *val;

	if (!m->count)
		return NULL;
	for (i = hmap_slot(key, m->cap); m->vals[i]; i = (i + 1) & mask)
		if (m->keys[i] == key)
			break;
	if (!m->vals[i])
		return NULL;
	val = m->vals[i];
	/* Shift back every later entry of the run that may move into the hole. */
	for (j = (i + 1) & mask; m->vals[j]; j = (j + 1) & mask) {
		home = hmap_slot(m->keys[j], m->cap);
		/* Keep j if its home lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->vals[i] = NULL;
	m->keys[i] = 0;
	m->count--;
	if (m->cap > HMAP_MIN && m->count * 8 < m->cap)
		(void)hmap_resize(m, m->cap / 2);	/* failure leaves it larger */
	if (!m->count) {
		free(m->keys);
		free(m->vals);
		m->keys = NULL;
		m->vals = NULL;
		m->cap = 0;
	}
	return val;
}

void asx__rx_hmap_free(struct asx__rx_hmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL;
	m->vals = NULL;
	m->cap = 0;
	m->count = 0;
}

size_t asx__rx_hmap_bytes(const struct asx__rx_hmap *m)
{
	return m->cap * (sizeof(*m->keys) + sizeof(*m->vals));
}
