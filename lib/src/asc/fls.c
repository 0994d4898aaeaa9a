// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * fls.c - fiber-local storage: one pointer per key and execution context,
 * the context being the calling ASC user thread, or the calling pthread
 * when it is not running one.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 *
 * A key is an index into keys[]; its seq is odd while the key exists and
 * is bumped by both create and delete.  A context keeps its values in
 * chunks of FLS_CHUNK slots, allocated the first time a slot of the chunk
 * is set, each slot holding the value and the seq of the key it was set
 * under: a value counts only while that seq is the key's.  So deleting a
 * key (which, as pthread_key_delete, runs no destructor) makes every
 * context's value of it disappear at once, and a key made later in the
 * same slot starts at NULL everywhere, without visiting the contexts.
 *
 * get is a load of the context (asx__self(), or a thread-local pointer on
 * a pthread), the chunk, the slot and the key's seq: no lock, no atomic
 * read-modify-write.  libasx's own code is never preempted (preempt.c), so
 * a user thread cannot move to another VP between reading its VP and the
 * VP's current thread.
 *
 * Destructors run when the context ends: a user thread in its own
 * context before it leaves (asx__fls_exit(), from thread.c), a pthread
 * from the destructor of one pthread key (the first time it sets a value
 * it registers its chunks there).  As POSIX says for pthreads, a
 * destructor's key's value is NULL while it runs, and the rounds repeat
 * while destructors set values again, at most ASX_ASC_KEY_ITERATIONS
 * times.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "asc/asc_impl.h"

#define FLS_CHUNK	ASX__FLS_CHUNK
#define FLS_NCHUNK	(ASX_ASC_KEYS_MAX / FLS_CHUNK)

_Static_assert(ASX_ASC_KEYS_MAX % FLS_CHUNK == 0, "whole chunks");

struct fls_slot {
	void *val;
	unsigned long seq;
};

struct asx__fls_chunk {
	struct fls_slot s[FLS_CHUNK];
};

static struct {
	pthread_mutex_t lock;		/* create and delete */
	unsigned long seq[ASX_ASC_KEYS_MAX];	/* atomic: odd while it exists */
	void (*dtor[ASX_ASC_KEYS_MAX])(void *);
	pthread_once_t pth_once;
	pthread_key_t pth_key;
	int pth_err;
} K = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.pth_once = PTHREAD_ONCE_INIT,
};

/* A pthread's own storage (not a user thread's: that is in its struct);
 * registered with the pthread key (for its destructors) on first use. */
static __thread struct asx__fls pth_fls TLS_IE;
static __thread bool pth_registered TLS_IE;

static bool key_live(asx_asc_key_t key, unsigned long *seq)
{
	if (key >= ASX_ASC_KEYS_MAX)
		return false;
	*seq = __atomic_load_n(&K.seq[key], __ATOMIC_ACQUIRE);
	return *seq & 1;
}

int asx_asc_key_create(asx_asc_key_t *key, void (*dtor)(void *))
{
	int ret = -EAGAIN;

	if (!key)
		return -EINVAL;
	pthread_mutex_lock(&K.lock);
	for (unsigned int k = 0; k < ASX_ASC_KEYS_MAX; k++) {
		if (K.seq[k] & 1)
			continue;
		K.dtor[k] = dtor;
		__atomic_store_n(&K.seq[k], K.seq[k] + 1, __ATOMIC_RELEASE);
		*key = k;
		ret = 0;
		break;
	}
	pthread_mutex_unlock(&K.lock);
	return ret;
}

int asx_asc_key_delete(asx_asc_key_t key)
{
	unsigned long seq;
	int ret = -EINVAL;

	pthread_mutex_lock(&K.lock);
	if (key_live(key, &seq)) {
		__atomic_store_n(&K.seq[key], seq + 1, __ATOMIC_RELEASE);
		ret = 0;
	}
	pthread_mutex_unlock(&K.lock);
	return ret;
}

static struct asx__fls *my_fls(void)
{
	struct asx_asc_thread *self = asx__self();

	return self ? &self->fls : &pth_fls;
}

void *asx_asc_getspecific(asx_asc_key_t key)
{
	struct asx__fls_chunk *c;
	struct fls_slot *s;

	if (key >= ASX_ASC_KEYS_MAX)
		return NULL;
	c = my_fls()->c[key / FLS_CHUNK];
	if (!c)
		return NULL;
	s = &c->s[key % FLS_CHUNK];
	/* a slot holds only odd (live) seqs: equal means the key lives */
	return s->seq == __atomic_load_n(&K.seq[key], __ATOMIC_RELAXED) ? s->val : NULL;
}

static void fls_run_dtors(struct asx__fls *f);

static void fls_free(struct asx__fls *f)
{
	for (int i = 0; i < FLS_NCHUNK; i++) {
		free(f->c[i]);
		f->c[i] = NULL;
	}
}

static void pth_dtor(void *p)
{
	struct asx__fls *f = p;

	pth_registered = false;
	fls_run_dtors(f);
	/* values the last round's destructors set again are dropped (POSIX) */
	fls_free(f);
}

static void pth_key_once(void)
{
	K.pth_err = -pthread_key_create(&K.pth_key, pth_dtor);
}

int asx_asc_setspecific(asx_asc_key_t key, const void *val)
{
	struct asx__fls *f = my_fls();
	struct asx__fls_chunk **cp;
	unsigned long seq;

	if (!key_live(key, &seq))
		return -EINVAL;
	cp = &f->c[key / FLS_CHUNK];
	if (!*cp) {
		if (!val)
			return 0;	/* NULL is what it reads already */
		if (f == &pth_fls && !pth_registered) {
			pthread_once(&K.pth_once, pth_key_once);
			if (K.pth_err)
				return K.pth_err;
			if (pthread_setspecific(K.pth_key, f))
				return -ENOMEM;
			pth_registered = true;
		}
		*cp = calloc(1, sizeof(**cp));
		if (!*cp)
			return -ENOMEM;
	}
	(*cp)->s[key % FLS_CHUNK].val = (void *)val;
	(*cp)->s[key % FLS_CHUNK].seq = seq;
	return 0;
}

static void fls_run_dtors(struct asx__fls *f)
{
	for (int round = 0; round < ASX_ASC_KEY_ITERATIONS; round++) {
		bool ran = false;

		for (unsigned int k = 0; k < ASX_ASC_KEYS_MAX; k++) {
			struct asx__fls_chunk *c = f->c[k / FLS_CHUNK];
			struct fls_slot *s;
			void (*dtor)(void *);
			unsigned long seq;
			void *v;

			if (!c) {
				k += FLS_CHUNK - 1;
				continue;
			}
			s = &c->s[k % FLS_CHUNK];
			if (!s->val || !key_live(k, &seq) || s->seq != seq)
				continue;
			v = s->val;
			s->val = NULL;
			dtor = __atomic_load_n(&K.dtor[k], __ATOMIC_RELAXED);
			if (dtor) {
				dtor(v);
				ran = true;
			}
		}
		if (!ran)
			break;
	}
}

void asx__fls_exit(struct asx_asc_thread *self)
{
	/* on @self: destructors may set values again, into the same chunks */
	fls_run_dtors(&self->fls);
	fls_free(&self->fls);
}
