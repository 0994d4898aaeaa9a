// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * tss.c - thread-specific storage over pthread keys, so it works in every
 * thread of the process, managed or not, and destructors run from the
 * C library's thread-exit path.
 */
#include <errno.h>
#include <pthread.h>

#include <asx/thread.h>

_Static_assert(sizeof(pthread_key_t) <= sizeof(asx_tss_t),
	       "asx_tss_t cannot hold a pthread_key_t");

int asx_tss_create(asx_tss_t *key, void (*dtor)(void *))
{
	pthread_key_t k;
	int r;

	if (!key)
		return -EINVAL;
	r = pthread_key_create(&k, dtor);
	if (r)
		return -r;
	*key = (asx_tss_t)k;
	return 0;
}

int asx_tss_delete(asx_tss_t key)
{
	return -pthread_key_delete((pthread_key_t)key);
}

void *asx_tss_get(asx_tss_t key)
{
	return pthread_getspecific((pthread_key_t)key);
}

int asx_tss_set(asx_tss_t key, const void *value)
{
	return -pthread_setspecific((pthread_key_t)key, value);
}
