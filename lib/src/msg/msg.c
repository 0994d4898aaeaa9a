// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * msg.c - message blocks and reference-counted data blocks.
 *
 * Memory layout.  asx_msg_alloc() makes one allocation holding the
 * header, the data block and the buffer:
 *
 *	[ struct asx_msg | struct asx_datab | pad | buffer ... ]
 *	  home_ = db_ = the datab that follows
 *
 * The datab's reference count counts the headers that point at it.  The
 * header living inside the allocation holds one reference which covers
 * both its data and its own memory, so the allocation goes away when the
 * last header referring to it does, whichever is freed first.  If that
 * header later moves to another buffer (asx_msg_pullup()), it keeps its
 * reference on home_ (for its memory) and takes one on the new db_.
 * Headers made by asx_msg_dup() are separate allocations (home_ = NULL).
 * asx_msg_wrap() allocates its header separately too, so the caller's
 * free function runs as soon as the last data reference goes.
 *
 * Reference counting: an increment needs no ordering (the caller already
 * holds a reference); the last decrement is acq_rel so every write made
 * through any header happens before the buffer is released.  A holder of
 * the only reference skips the atomic read-modify-write: nobody else can
 * take a reference to a block they cannot reach.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <asx/msg.h>
#include <asx/sync.h>
#include "core/compiler.h"
#include "msg_impl.h"

#define DB_FOREIGN	0x1u	/* buffer belongs to the caller of asx_msg_wrap() */
#define DB_CLASS_SHIFT	8	/* (size class + 1) of a cached allocation, or 0 */

struct asx_datab {
	uint32_t refs;
	uint32_t flags;
	void (*free_fn)(void *buf, void *arg);
	void *arg;
	void *buf;		/* start of the buffer, for free_fn */
	void *mem;		/* the allocation to free() */
};

#define ALIGN16(x)	(((x) + 15) & ~(size_t)15)
#define EMB_HDR		ALIGN16(sizeof(struct asx_msg) + sizeof(struct asx_datab))
#define DB_HDR		ALIGN16(sizeof(struct asx_datab))

/*
 * Block cache.  Allocations of asx_msg_alloc() with a buffer of up to
 * 64 KB come in power-of-two size classes and are recycled: a freed
 * block goes to its thread's cache; a cache that grows past its bound
 * hands a batch of blocks to a shared depot (one lock round trip per
 * batch), and a thread whose cache is empty takes a batch from there
 * before it calls malloc().  So a producer thread that allocates and a
 * consumer thread that frees trade whole batches instead of contending on
 * the C library's arena lock for every message.  A thread's cache goes
 * to the depot when the thread exits, and at process exit the depot and
 * the exiting thread's cache go back to malloc(), so that a leak checker
 * sees every block freed.
 *
 * Bounds, in bytes (headers included): a thread's cache holds at most
 * thread_max bytes in all (ASX_MSG_CACHE_THREAD, default 1 MiB), and at
 * most CACHE_MAX blocks of one class; the depot at most depot_max bytes
 * (ASX_MSG_CACHE_DEPOT, default 8 MiB), of which one class may take a
 * quarter.  A class's batch is half of what a thread may keep of it, so
 * a batch of 64 KB blocks is 7 blocks where one of 4 KB blocks is 32.
 * A block that fits nowhere goes back to malloc(); and each time
 * TRIM_BYTES have gone back that way, malloc_trim() hands the free pages
 * of the C library's heaps back to the system, so that memory a burst of
 * large messages took does not stay resident after they are freed.
 * Both bounds are checked where the cache grows: a free, and a batch
 * taken from the depot (which first makes room by handing other classes
 * on), so a thread's cache never holds more than thread_max bytes.
 *
 * The cache is on unless built with AddressSanitizer, where its default is
 * off so that ASan's quarantine catches use-after-free of a message at
 * its best.  ASX_MSG_CACHE=0 or =1 in the environment overrides the
 * default (read once, at load), so leak checks also run as in production.
 * Under ASan a cached block is poisoned whole, its links unpoisoned only
 * while the cache reads or writes them, and an allocated block is
 * addressable only up to the end of the buffer asked for.
 */
#if defined(__SANITIZE_ADDRESS__)
#define MSG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MSG_ASAN 1
#endif
#endif

#ifdef MSG_ASAN
#include <sanitizer/asan_interface.h>
#define blk_poison(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define blk_unpoison(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define MSG_ASAN 0
#define blk_poison(p, n)	((void)(p), (void)(n))
#define blk_unpoison(p, n)	((void)(p), (void)(n))
#endif

#define CLS_MIN_SHIFT	8		/* 256 bytes */
#define NCLS		9		/* .. 64 KB */
#define CACHE_MAX	64		/* blocks of one class in a thread's cache */
#define BATCH		32		/* blocks in a batch, at most */
#define DEPOT_MAX	32		/* batches per class kept in the depot */
#define THREAD_BYTES	((size_t)1 << 20)
#define DEPOT_BYTES	((size_t)8 << 20)
#define TRIM_BYTES	((size_t)4 << 20)

struct free_blk {
	struct free_blk *next;		/* within a cache or a batch */
	struct free_blk *next_batch;	/* depot: batches of one class */
	uint32_t nblk;			/* depot: blocks in this batch */
};

/*
 * A thread's cache is TC_NEW until it first gets blocks, whether by a free
 * or by a batch from the depot: it then registers the flush that runs at
 * thread exit (TC_LIVE).  After that flush it is TC_DEAD: a message freed
 * or allocated later in the exit (another key's destructor) bypasses it.
 */
enum { TC_NEW, TC_LIVE, TC_DEAD };

struct tcache {
	struct free_blk *head[NCLS];
	uint32_t n[NCLS];
	size_t bytes;			/* in all classes */
	uint8_t state;
};

static __thread struct tcache tcache;
static struct asx_mutex depot_lock = ASX_MUTEX_INITIALIZER;
static struct free_blk *depot[NCLS];
static uint32_t depot_n[NCLS];		/* batches */
static size_t depot_cls_bytes[NCLS];
static size_t depot_bytes;
static pthread_key_t tcache_key;
static pthread_once_t tcache_once = PTHREAD_ONCE_INIT;
static bool tcache_key_ok;
/* written only before main() */
static bool cache_on = !MSG_ASAN;
static size_t thread_max = THREAD_BYTES, depot_max = DEPOT_BYTES;
static uint32_t cls_lim[NCLS];		/* blocks of a class a thread keeps */
static uint32_t cls_batch[NCLS];	/* blocks in a batch of that class */
static uint64_t blk_live[NCLS];		/* blocks from malloc() not yet freed */
static size_t released;			/* bytes back to malloc() since the last trim */

#define CLS_BYTES(c)	(EMB_HDR + ((size_t)1 << (CLS_MIN_SHIFT + (c))))

/* A byte count from the environment: digits, then K, M or G (binary); or @dflt. */
static size_t env_bytes(const char *name, size_t dflt)
{
	const char *s = getenv(name);
	unsigned long long v;
	char *end;
	int shift = 0;

	if (!s || *s < '0' || *s > '9')
		return dflt;
	errno = 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	}
	if (errno || *end || v > (SIZE_MAX >> shift))
		return dflt;
	return (size_t)v << shift;
}

__attribute__((constructor)) static void cache_env(void)
{
	const char *s = getenv("ASX_MSG_CACHE");
	size_t lim;
	int c;

	if (s && (!strcmp(s, "0") || !strcmp(s, "1")))
		cache_on = *s == '1';
	thread_max = env_bytes("ASX_MSG_CACHE_THREAD", THREAD_BYTES);
	depot_max = env_bytes("ASX_MSG_CACHE_DEPOT", DEPOT_BYTES);
	for (c = 0; c < NCLS; c++) {
		lim = thread_max / CLS_BYTES(c);
		cls_lim[c] = lim < CACHE_MAX ? (uint32_t)lim : CACHE_MAX;
		cls_batch[c] = cls_lim[c] / 2 < BATCH ? cls_lim[c] / 2 : BATCH;
		if (!cls_batch[c])
			cls_batch[c] = 1;
	}
}

/* A link of a cached block (poisoned the rest of the time under ASan). */
static struct free_blk *link_load(struct free_blk **l)
{
	struct free_blk *n;

	blk_unpoison(l, sizeof(*l));
	n = *l;
	blk_poison(l, sizeof(*l));
	return n;
}

static void link_store(struct free_blk **l, struct free_blk *n)
{
	blk_unpoison(l, sizeof(*l));
	*l = n;
	blk_poison(l, sizeof(*l));
}

static uint32_t nblk_load(struct free_blk *b)
{
	uint32_t n;

	blk_unpoison(&b->nblk, sizeof(b->nblk));
	n = b->nblk;
	blk_poison(&b->nblk, sizeof(b->nblk));
	return n;
}

static void nblk_store(struct free_blk *b, uint32_t n)
{
	blk_unpoison(&b->nblk, sizeof(b->nblk));
	b->nblk = n;
	blk_poison(&b->nblk, sizeof(b->nblk));
}

/* The C library's free pages back to the system. */
static void trim(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

/*
 * Give the blocks of list @b (class @c) back to malloc(), and the free
 * pages to the system once TRIM_BYTES have gone back so.
 */
static void blk_release_list(int c, struct free_blk *b)
{
	struct free_blk *n;
	size_t bytes = 0;

	for (; b; b = n) {
		n = link_load(&b->next);
		blk_unpoison(b, CLS_BYTES(c));
		free(b);
		__atomic_sub_fetch(&blk_live[c], 1, __ATOMIC_RELAXED);
		bytes += CLS_BYTES(c);
	}
	if (bytes && __atomic_add_fetch(&released, bytes, __ATOMIC_RELAXED) >= TRIM_BYTES &&
	    __atomic_exchange_n(&released, 0, __ATOMIC_RELAXED) >= TRIM_BYTES)
		trim();
}

static int size_class(size_t size)
{
	int c = 0;

	if (!cache_on || size > ((size_t)1 << (CLS_MIN_SHIFT + NCLS - 1)))
		return -1;
	while (((size_t)1 << (CLS_MIN_SHIFT + c)) < size)
		c++;
	return c;
}

/*
 * Give a batch (@b, @nblk blocks linked through next) to the depot if it
 * fits the depot's bounds, else back to malloc.
 */
static void depot_put(int c, struct free_blk *b, uint32_t nblk)
{
	size_t bytes = nblk * CLS_BYTES(c);

	asx_mutex_lock(&depot_lock);
	if (depot_n[c] < DEPOT_MAX && depot_bytes + bytes <= depot_max &&
	    depot_cls_bytes[c] + bytes <= depot_max / 4) {
		link_store(&b->next_batch, depot[c]);
		nblk_store(b, nblk);
		depot[c] = b;
		depot_n[c]++;
		depot_cls_bytes[c] += bytes;
		depot_bytes += bytes;
		b = NULL;
	}
	asx_mutex_unlock(&depot_lock);
	blk_release_list(c, b);
}

/* A batch of class @c and its number of blocks in *@nblk, or NULL. */
static struct free_blk *depot_get(int c, uint32_t *nblk)
{
	struct free_blk *b;
	size_t bytes;

	asx_mutex_lock(&depot_lock);
	b = depot[c];
	if (b) {
		depot[c] = link_load(&b->next_batch);
		*nblk = nblk_load(b);
		bytes = *nblk * CLS_BYTES(c);
		depot_n[c]--;
		depot_cls_bytes[c] -= bytes;
		depot_bytes -= bytes;
	}
	asx_mutex_unlock(&depot_lock);
	return b;
}

/* Hand the @k (at most) most recently freed blocks of class @c to the depot. */
static void tcache_spill(int c, uint32_t k)
{
	struct free_blk *batch = tcache.head[c], *b = batch;
	uint32_t i;

	if (k > tcache.n[c])
		k = tcache.n[c];
	for (i = 1; i < k; i++)
		b = link_load(&b->next);
	tcache.head[c] = link_load(&b->next);
	link_store(&b->next, NULL);
	tcache.n[c] -= k;
	tcache.bytes -= k * CLS_BYTES(c);
	depot_put(c, batch, k);
}

/*
 * Bring the thread's cache within its bounds: class @c to its block limit,
 * then batches of the class holding most bytes (@c last) until the cache
 * holds at most thread_max bytes.
 */
static void tcache_trim(int c)
{
	size_t most, have;
	int i, big;

	if (tcache.n[c] > cls_lim[c])
		tcache_spill(c, cls_batch[c]);
	while (tcache.bytes > thread_max) {
		big = c;
		most = 0;
		for (i = 0; i < NCLS; i++) {
			have = tcache.n[i] * CLS_BYTES(i);
			if (i != c && have > most) {
				most = have;
				big = i;
			}
		}
		tcache_spill(big, cls_batch[big]);
	}
}

/* At thread exit: the cache goes to the depot, and stays unused. */
static void tcache_flush(void *unused)
{
	struct free_blk *b;
	int c;

	(void)unused;
	tcache.state = TC_DEAD;
	for (c = 0; c < NCLS; c++) {
		b = tcache.head[c];
		if (b)
			depot_put(c, b, tcache.n[c]);
		tcache.head[c] = NULL;
		tcache.n[c] = 0;
	}
	tcache.bytes = 0;
}

/*
 * At process exit (or unload): the calling thread's cache and the depot
 * go back to malloc().  Threads still running keep their caches, which
 * stay reachable through their thread-local storage.
 */
__attribute__((destructor)) static void cache_fini(void)
{
	struct free_blk *b, *n;
	int c;

	tcache_flush(NULL);
	for (c = 0; c < NCLS; c++) {
		asx_mutex_lock(&depot_lock);
		b = depot[c];
		depot[c] = NULL;
		depot_n[c] = 0;
		depot_bytes -= depot_cls_bytes[c];
		depot_cls_bytes[c] = 0;
		asx_mutex_unlock(&depot_lock);
		for (; b; b = n) {
			n = link_load(&b->next_batch);
			blk_release_list(c, b);
		}
	}
}

static void tcache_key_init(void)
{
	tcache_key_ok = !pthread_key_create(&tcache_key, tcache_flush);
}

/*
 * Before the cache first holds a block: have tcache_flush() run when the
 * thread exits.  False if it cannot (the caller then bypasses the cache).
 */
static bool tcache_register(void)
{
	if (tcache.state == TC_DEAD)
		return false;
	pthread_once(&tcache_once, tcache_key_init);
	if (!tcache_key_ok || pthread_setspecific(tcache_key, &tcache))
		return false;
	tcache.state = TC_LIVE;
	return true;
}

static void blk_free(void *mem, int c)
{
	struct free_blk *b = mem;

	blk_poison(mem, CLS_BYTES(c));
	if (unlikely(tcache.state != TC_LIVE) && !tcache_register()) {
		link_store(&b->next, NULL);
		blk_release_list(c, b);
		return;
	}
	link_store(&b->next, tcache.head[c]);
	tcache.head[c] = b;
	tcache.bytes += CLS_BYTES(c);
	if (unlikely(++tcache.n[c] > cls_lim[c] || tcache.bytes > thread_max))
		tcache_trim(c);
}

/* A block of class @c; under ASan, poisoned whole (the caller unpoisons). */
static void *blk_alloc(int c)
{
	struct free_blk *b = tcache.head[c];
	uint32_t n = 0;

	if (likely(b)) {
		tcache.head[c] = link_load(&b->next);
		tcache.n[c]--;
		tcache.bytes -= CLS_BYTES(c);
		return b;
	}
	/* the cache gets blocks from here on: it must go back at thread exit */
	b = unlikely(tcache.state != TC_LIVE) && !tcache_register() ? NULL : depot_get(c, &n);
	if (!b) {
		b = malloc(CLS_BYTES(c));
		if (b)
			__atomic_add_fetch(&blk_live[c], 1, __ATOMIC_RELAXED);
		return b;
	}
	/* keep all but the first of the batch */
	tcache.head[c] = link_load(&b->next);
	tcache.n[c] = n - 1;
	tcache.bytes += (n - 1) * CLS_BYTES(c);
	if (tcache.bytes > thread_max)
		tcache_trim(c);
	return b;
}

void asx__msg_cache_stats(struct asx__msg_cache_stats *st)
{
	struct free_blk *b, *p;
	uint64_t n;
	int c;

	memset(st, 0, sizeof(*st));
	st->on = cache_on;
	st->thread_max = thread_max;
	st->depot_max = depot_max;
	for (c = 0; c < NCLS; c++) {
		n = __atomic_load_n(&blk_live[c], __ATOMIC_RELAXED);
		st->blocks += n;
		st->bytes += n * CLS_BYTES(c);
		n = tcache.n[c];
		st->mine_blocks += n;
		st->mine_bytes += n * CLS_BYTES(c);
		n = 0;
		asx_mutex_lock(&depot_lock);
		for (b = depot[c]; b; b = link_load(&b->next_batch))
			for (p = b; p; p = link_load(&p->next))
				n++;
		asx_mutex_unlock(&depot_lock);
		st->depot_blocks += n;
		st->depot_bytes += n * CLS_BYTES(c);
	}
}

static void db_release(struct asx_datab *db)
{
	if (__atomic_load_n(&db->refs, __ATOMIC_ACQUIRE) != 1 &&
	    __atomic_sub_fetch(&db->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (db->free_fn)
		db->free_fn(db->buf, db->arg);
	if (db->flags >> DB_CLASS_SHIFT)
		blk_free(db->mem, (int)(db->flags >> DB_CLASS_SHIFT) - 1);
	else
		free(db->mem);
}

static void hdr_init(struct asx_msg *m, struct asx_datab *db, unsigned char *base,
		     size_t size, unsigned int type)
{
	m->rd = m->wr = m->asx__base = base;
	m->asx__lim = base + size;
	m->cont = NULL;
	m->type = (uint8_t)type;
	m->band = 0;
	m->asx__flags = 0;
	m->asx__resv = 0;
	asx__msgp(m)->db = db;
	asx__msgp(m)->next = asx__msgp(m)->prev = NULL;
	asx__msgp(m)->qbytes = 0;
}

struct asx_msg *asx_msg_alloc(size_t size, unsigned int type)
{
	struct asx_msg *m;
	struct asx_datab *db;

	int c;

	if (type > ASX_MSG_TYPE_MAX || size > SIZE_MAX - EMB_HDR)
		return NULL;
	c = size_class(size);
	m = c < 0 ? malloc(EMB_HDR + size) : blk_alloc(c);
	if (!m)
		return NULL;
	if (c >= 0) {
		/* ASan: the cache's spare bytes past the buffer stay poisoned */
		blk_poison(m, CLS_BYTES(c));
		blk_unpoison(m, EMB_HDR + size);
	}
	db = (struct asx_datab *)(m + 1);
	db->refs = 1;
	db->flags = (uint32_t)(c + 1) << DB_CLASS_SHIFT;
	db->free_fn = NULL;
	db->arg = NULL;
	db->buf = (unsigned char *)m + EMB_HDR;
	db->mem = m;
	hdr_init(m, db, db->buf, size, type);
	asx__msgp(m)->home = db;
	return m;
}

/* A stand-alone data block with a buffer of @size bytes. */
static struct asx_datab *db_alloc(size_t size)
{
	struct asx_datab *db;

	if (size > SIZE_MAX - DB_HDR)
		return NULL;
	db = malloc(DB_HDR + size);
	if (!db)
		return NULL;
	db->refs = 1;
	db->flags = 0;
	db->free_fn = NULL;
	db->arg = NULL;
	db->buf = (unsigned char *)db + DB_HDR;
	db->mem = db;
	return db;
}

struct asx_msg *asx_msg_wrap(void *buf, size_t len,
			     void (*free_fn)(void *buf, void *arg), void *arg)
{
	struct asx_msg *m;
	struct asx_datab *db;

	if (!buf && len)
		return NULL;
	m = malloc(sizeof(*m));
	db = malloc(sizeof(*db));
	if (!m || !db) {
		free(m);
		free(db);
		return NULL;
	}
	db->refs = 1;
	db->flags = DB_FOREIGN;
	db->free_fn = free_fn;
	db->arg = arg;
	db->buf = buf;
	db->mem = db;
	hdr_init(m, db, buf, len, ASX_MSG_DATA);
	m->wr = m->asx__lim;
	asx__msgp(m)->home = NULL;
	return m;
}

void asx_msg_free(struct asx_msg *m)
{
	struct asx_datab *db, *home;

	if (!m)
		return;
	db = asx__msgp(m)->db;
	home = asx__msgp(m)->home;
	if (db != home)
		db_release(db);
	if (home)
		db_release(home);	/* may free the memory holding *m */
	else
		free(m);
}

void asx_msg_free_chain(struct asx_msg *m)
{
	struct asx_msg *next;

	for (; m; m = next) {
		next = m->cont;
		asx_msg_free(m);
	}
}

struct asx_msg *asx_msg_dup(const struct asx_msg *m)
{
	struct asx_msg *head = NULL, **pp = &head, *h;

	for (; m; m = m->cont) {
		h = malloc(sizeof(*h));
		if (!h) {
			asx_msg_free_chain(head);
			return NULL;
		}
		*h = *m;
		h->cont = NULL;
		asx__msgp(h)->home = NULL;
		asx__msgp(h)->next = asx__msgp(h)->prev = NULL;
		asx__msgp(h)->qbytes = 0;
		__atomic_fetch_add(&asx__msgp(m)->db->refs, 1, __ATOMIC_RELAXED);
		*pp = h;
		pp = &h->cont;
	}
	return head;
}

struct asx_msg *asx_msg_copy(const struct asx_msg *m)
{
	struct asx_msg *head = NULL, **pp = &head, *c;

	for (; m; m = m->cont) {
		c = asx_msg_alloc(asx_msg_size(m), m->type);
		if (!c) {
			asx_msg_free_chain(head);
			return NULL;
		}
		c->band = m->band;
		c->rd = c->asx__base + asx_msg_headroom(m);
		memcpy(c->rd, m->rd, asx_msg_block_len(m));
		c->wr = c->rd + asx_msg_block_len(m);
		*pp = c;
		pp = &c->cont;
	}
	return head;
}

size_t asx_msg_length(const struct asx_msg *m)
{
	size_t n = 0;

	for (; m; m = m->cont)
		n += asx_msg_block_len(m);
	return n;
}

size_t asx_msg_blocks(const struct asx_msg *m)
{
	size_t n = 0;

	for (; m; m = m->cont)
		n++;
	return n;
}

bool asx_msg_shared(const struct asx_msg *m)
{
	return __atomic_load_n(&asx__msgp(m)->db->refs, __ATOMIC_ACQUIRE) > 1;
}

int asx_msg_pullup(struct asx_msg *m, size_t len)
{
	size_t have = asx_msg_block_len(m), total, need, take;
	struct asx_datab *db = asx__msgp(m)->db, *ndb;
	struct asx_msg *n;

	if (len <= have)
		return 0;
	total = asx_msg_length(m);
	if (len == ASX_MSG_PULLUP_ALL)
		len = total;
	else if (len > total)
		return -EINVAL;
	if (len <= have)
		return 0;

	if (!(db->flags & DB_FOREIGN) && asx_msg_size(m) >= len &&
	    __atomic_load_n(&db->refs, __ATOMIC_ACQUIRE) == 1) {
		/* our own buffer, big enough: slide the bytes down if needed */
		if ((size_t)(m->asx__lim - m->rd) < len) {
			memmove(m->asx__base, m->rd, have);
			m->rd = m->asx__base;
			m->wr = m->rd + have;
		}
	} else {
		ndb = db_alloc(len);
		if (!ndb)
			return -ENOMEM;
		memcpy(ndb->buf, m->rd, have);
		if (db != asx__msgp(m)->home)
			db_release(db);	/* home_ keeps its reference for the header */
		asx__msgp(m)->db = ndb;
		m->asx__base = m->rd = ndb->buf;
		m->wr = m->rd + have;
		m->asx__lim = m->asx__base + len;
	}

	need = len - have;
	while (need) {
		n = m->cont;
		take = asx_msg_block_len(n);
		if (take > need)
			take = need;
		memcpy(m->wr, n->rd, take);
		m->wr += take;
		n->rd += take;
		need -= take;
		if (n->rd == n->wr) {
			m->cont = n->cont;
			asx_msg_free(n);
		}
	}
	return 0;
}

size_t asx_msg_read(const struct asx_msg *m, size_t off, void *buf, size_t len)
{
	unsigned char *out = buf;
	size_t done = 0, blen, take;

	for (; m && done < len; m = m->cont) {
		blen = asx_msg_block_len(m);
		if (off >= blen) {
			off -= blen;
			continue;
		}
		take = blen - off;
		if (take > len - done)
			take = len - done;
		memcpy(out + done, m->rd + off, take);
		done += take;
		off = 0;
	}
	return done;
}

void asx_msg_link(struct asx_msg *m, struct asx_msg *tail)
{
	while (m->cont)
		m = m->cont;
	m->cont = tail;
}

int asx_msg_append(struct asx_msg *m, const void *data, size_t len)
{
	if (len > asx_msg_space(m))
		return -ENOSPC;
	if (len)
		memcpy(m->wr, data, len);
	m->wr += len;
	return 0;
}

int asx_msg_prepend(struct asx_msg *m, const void *data, size_t len)
{
	if (len > asx_msg_headroom(m))
		return -ENOSPC;
	m->rd -= len;
	if (len)
		memcpy(m->rd, data, len);
	return 0;
}

int asx_msg_reserve(struct asx_msg *m, size_t n)
{
	if (m->rd != m->wr)
		return -EINVAL;
	if (n > asx_msg_space(m))
		return -ENOSPC;
	m->rd += n;
	m->wr = m->rd;
	return 0;
}
