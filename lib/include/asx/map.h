/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * asx/map.h - a map from external ids to internal ids with a lock
 * strategy chosen when the map is made (the papers'
 * Map_Manager<EXT_ID, INT_ID, LOCK>).
 *
 * Keys (EXT_ID) are byte strings of a fixed size given at creation (an
 * address, a port, a connection tuple: compared with memcmp, so zero the
 * padding).  Values (INT_ID) are pointers, never NULL.
 *
 * Strategies:
 *   ASX_MAP_NONE    no locking: one thread, or many threads that only find
 *                   (the Layer Parallelism case: serialised by a Task queue)
 *   ASX_MAP_MUTEX   every call under one adaptive mutex
 *   ASX_MAP_RWLOCK  find under a read lock, bind/unbind under a write lock
 *   ASX_MAP_RCU     liburcu's lock-free resizable hash table (urcu-memb):
 *                   find never blocks and never writes shared memory;
 *                   unbind waits for a grace period (it is the slow call)
 * The same calls work with every strategy; code that uses a map does not
 * change when the strategy does.
 *
 * Lifetime of values.  The map never frees a value.  asx_map_find() copies
 * the pointer out; whether the object is still alive afterwards is the
 * caller's business.  asx_map_find_apply() runs a function on the value
 * while the entry is protected: once asx_map_unbind() and then
 * asx_map_synchronize() have returned, no such call for that entry is
 * running or can start, so the value may then be freed.
 *
 * Errors are negative errno values.  USDT probes: map_find(map, hit),
 * map_bind(map, ret), map_unbind(map, ret).
 */
#ifndef ASX_MAP_H
#define ASX_MAP_H

#include <errno.h>
#include <stddef.h>
#include <asx/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum asx_map_lock {
	ASX_MAP_NONE = 0,
	ASX_MAP_MUTEX,
	ASX_MAP_RWLOCK,
	ASX_MAP_RCU,
};

#define ASX_MAP_KEY_MAX 64	/* largest key_size */

struct asx_map;

/* 0 and *@mp, -EINVAL (unknown strategy, key_size 0 or > ASX_MAP_KEY_MAX), -ENOMEM. */
ASX_API int asx_map_create(struct asx_map **mp, enum asx_map_lock lock, size_t key_size);
/* Free the map (not the values).  No other thread may use it. */
ASX_API void asx_map_destroy(struct asx_map *map);

/* Associate @key with @value: 0, -EEXIST (already bound), -EINVAL, -ENOMEM. */
ASX_API int asx_map_bind(struct asx_map *map, const void *key, void *value);
/* Break the association: 0 (old value in *@value if non-NULL), -ENOENT. */
ASX_API int asx_map_unbind(struct asx_map *map, const void *key, void **value);
/* Look @key up: 0 and *@value, -ENOENT. */
ASX_API int asx_map_find(struct asx_map *map, const void *key, void **value);
/*
 * Look @key up and return @fn(value, @arg) with the entry protected
 * (under the map's lock, or in an RCU read-side section: @fn must not
 * call bind/unbind/synchronize on this map).  -ENOENT if absent.
 */
ASX_API int asx_map_find_apply(struct asx_map *map, const void *key,
			       int (*fn)(void *value, void *arg), void *arg);
/* Wait until every find_apply that started before has returned. */
ASX_API void asx_map_synchronize(struct asx_map *map);

ASX_API size_t asx_map_count(struct asx_map *map);
ASX_API enum asx_map_lock asx_map_strategy(const struct asx_map *map);
/* "none", "mutex", "rwlock", "rcu" (or "?"). */
ASX_API const char *asx_map_lock_name(enum asx_map_lock lock);

#ifdef __cplusplus
}
#endif
#endif /* ASX_MAP_H */
