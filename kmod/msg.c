// SPDX-License-Identifier: GPL-2.0
/*
 * ASX message blocks: refcounted data blocks, cont chains, dup without copy.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "msg.h"

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/hashtable.h>
#include <linux/llist.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/percpu_counter.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

/*
 * A message header, its data block and (for small messages) its data are
 * one object, like the mdbblock of SVR4 STREAMS. The object outlives its
 * header while dups still share its data block: it is freed when the last
 * reference to the block goes.
 */
struct asx_mdb {
	struct asx_msg m;
	struct asx_dblk db;
	struct asx_budget *charged;	/* whose budget the data block counts in */
	unsigned char data[];
};

#define ASX_MDB_SIZE	256
#define ASX_INLINE_MAX	(ASX_MDB_SIZE - sizeof(struct asx_mdb))

static struct kmem_cache *mdb_cache;

/*
 * Data of up to a page lives in a page of its own. Free pages and message
 * objects go to small per-CPU stashes (the pipe's tmp_page idea): a batch of
 * write()s and read()s in steady state reaches neither allocator, nor the
 * zeroing that init_on_alloc kernels do there.
 */
#define ASX_PAGE_STASH	16	/* 64 KB of pages per CPU */
#define ASX_MDB_STASH	64	/* 16 KB of message objects per CPU */

struct stash {
	unsigned int n;
	unsigned int max;
	void *obj[ASX_MDB_STASH];
};

static DEFINE_PER_CPU(struct stash, page_stash);
static DEFINE_PER_CPU(struct stash, mdb_stash);

static __always_inline void *stash_get(struct stash __percpu *pcs)
{
	struct stash *s = get_cpu_ptr(pcs);
	void *p = s->n ? s->obj[--s->n] : NULL;

	put_cpu_ptr(pcs);
	return p;
}

/* Returns @p if the stash is full. */
static __always_inline void *stash_put(struct stash __percpu *pcs, void *p)
{
	struct stash *s = get_cpu_ptr(pcs);

	if (s->n < s->max) {
		s->obj[s->n++] = p;
		p = NULL;
	}
	put_cpu_ptr(pcs);
	return p;
}

static void *data_page_get(gfp_t gfp)
{
	void *p = stash_get(&page_stash);

	return p ? p : (void *)__get_free_page(gfp);
}

static void data_page_put(void *p)
{
	p = stash_put(&page_stash, p);
	if (p)
		free_page((unsigned long)p);
}

static __always_inline struct asx_mdb *mdb_alloc(gfp_t gfp)
{
	struct asx_mdb *o = stash_get(&mdb_stash);

	return o ? o : kmem_cache_alloc(mdb_cache, gfp);
}

static __always_inline void mdb_free(struct asx_mdb *o)
{
	o = stash_put(&mdb_stash, o);
	if (o)
		kmem_cache_free(mdb_cache, o);
}

static void *data_alloc(size_t size, gfp_t gfp)
{
	return size <= PAGE_SIZE ? data_page_get(gfp) : kvmalloc(size, gfp);
}

/*
 * Messages are freed in put procedures, under spinlocks and RCU, where
 * vfree() may not sleep: a vmalloc()ed block goes to a worker instead (the
 * core's vfree_atomic() is not exported). Its first bytes carry the link.
 */
static LLIST_HEAD(vfree_list);

static void vfree_work_fn(struct work_struct *work)
{
	struct llist_node *n, *next;

	llist_for_each_safe(n, next, llist_del_all(&vfree_list))
		vfree(n);
}

static DECLARE_WORK(vfree_work, vfree_work_fn);

static void data_free(void *p, size_t size)
{
	if (size <= PAGE_SIZE) {
		data_page_put(p);
	} else if (is_vmalloc_addr(p)) {
		if (llist_add(p, &vfree_list))
			schedule_work(&vfree_work);
	} else {
		kfree(p);
	}
}

/* Live message headers and data blocks, per CPU: the hot path stays free of atomics. */
static DEFINE_PER_CPU(long, nr_msgs);
static DEFINE_PER_CPU(long, nr_dblks);

static long sum_percpu(long __percpu *v)
{
	long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *per_cpu_ptr(v, cpu);
	return n;
}

long asx_nr_msgs(void)
{
	return sum_percpu(&nr_msgs);
}

long asx_nr_dblks(void)
{
	return sum_percpu(&nr_dblks);
}

/*
 * Per-user budget, in the spirit of pipe-user-pages-hard: the bytes of the
 * messages a user's write(), PUTMSG and STR put into Streams the user opened
 * (data blocks and their headers, while any of them lives, wherever they
 * went), at most user_max_bytes per user; above it those calls fail with
 * ENOBUFS unless the caller has CAP_SYS_RESOURCE. A Stream charges the user
 * who opened it, as a pipe does. One record per user that ever opened a
 * Stream, kept until unload: unprivileged users cannot make new uids.
 */
static unsigned long user_max_bytes = 64UL << 20;
module_param(user_max_bytes, ulong, 0644);
MODULE_PARM_DESC(user_max_bytes,
		 "bytes of messages one user may have in Streams, 0 for no limit, CAP_SYS_RESOURCE exempt (default 64 MiB)");

#define ASX_BUDGET_BATCH	(256 * 1024)	/* per-CPU slack of the counter */

struct asx_budget {
	struct hlist_node node;
	kuid_t uid;
	struct percpu_counter bytes;
	atomic_long_t fds;		/* descriptors in flight (I_SENDFD) */
};

static DEFINE_HASHTABLE(budgets, 6);
static DEFINE_MUTEX(budgets_lock);

/* The budget of @uid, made on first use; NULL if out of memory. */
struct asx_budget *asx_budget_get(kuid_t uid)
{
	struct asx_budget *b;

	mutex_lock(&budgets_lock);
	hash_for_each_possible(budgets, b, node, __kuid_val(uid))
		if (uid_eq(b->uid, uid))
			goto out;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (b && percpu_counter_init(&b->bytes, 0, GFP_KERNEL)) {
		kfree(b);
		b = NULL;
	}
	if (b) {
		b->uid = uid;
		hash_add(budgets, &b->node, __kuid_val(uid));
	}
out:
	mutex_unlock(&budgets_lock);
	return b;
}

/* What a data block costs: its header object and its data outside it. */
static long mdb_cost(const struct asx_mdb *o)
{
	if (o->db.base == o->data)
		return ASX_MDB_SIZE;
	return ASX_MDB_SIZE + max_t(long, o->db.size, PAGE_SIZE);
}

static void mdb_uncharge(struct asx_mdb *o)
{
	percpu_counter_add_batch(&o->charged->bytes, -mdb_cost(o), ASX_BUDGET_BATCH);
	o->charged = NULL;
}

/**
 * asx_msg_charge() - count a message a user made in the user's budget
 * @b:  the budget (of the Stream the message enters)
 * @mp: a message made by the caller, not yet passed on
 *
 * Return: 0, or -ENOBUFS (nothing charged) when the budget is spent and the
 * caller lacks CAP_SYS_RESOURCE. The charge goes with the last block.
 */
int asx_msg_charge(struct asx_budget *b, struct asx_msg *mp)
{
	unsigned long max = READ_ONCE(user_max_bytes);
	struct asx_mdb *o;
	struct asx_msg *p;
	long cost = 0;

	for (p = mp; p; p = p->cont) {
		o = container_of(p->db, struct asx_mdb, db);
		if (o->charged)
			continue;
		o->charged = b;
		cost += mdb_cost(o);
	}
	percpu_counter_add_batch(&b->bytes, cost, ASX_BUDGET_BATCH);
	if (!max || __percpu_counter_compare(&b->bytes, max, ASX_BUDGET_BATCH) <= 0 ||
	    capable(CAP_SYS_RESOURCE))
		return 0;
	for (p = mp; p; p = p->cont) {
		o = container_of(p->db, struct asx_mdb, db);
		if (o->charged == b)
			mdb_uncharge(o);
	}
	return -ENOBUFS;
}

/*
 * Per-user cap on descriptors in flight: files sent with I_SENDFD and not
 * yet received (nor freed with their message), counted for the user who
 * opened the sending pipe end, as its messages' bytes are. Like Linux's cap
 * on SCM_RIGHTS files in flight (RLIMIT_NOFILE per user), it bounds what a
 * user pins in the kernel past the pipes' water marks; unlike it, I_SENDFD
 * fails with EAGAIN, the errno streamio(7) gives it, not ETOOMANYREFS.
 */
static unsigned int user_max_fds = 1024;
module_param(user_max_fds, uint, 0644);
MODULE_PARM_DESC(user_max_fds,
		 "descriptors one user may have in flight over pipes (I_SENDFD), 0 for no limit, CAP_SYS_RESOURCE exempt (default 1024)");

/**
 * asx_budget_fd_charge() - count one more descriptor in flight for @b's user
 * @b: the budget of the sending Stream
 *
 * Return: 0, or -EAGAIN (nothing counted) when the user has user_max_fds in
 * flight and the caller lacks CAP_SYS_RESOURCE. asx_budget_fd_uncharge()
 * gives it back.
 */
int asx_budget_fd_charge(struct asx_budget *b)
{
	unsigned int max = READ_ONCE(user_max_fds);

	if (atomic_long_inc_return(&b->fds) <= max || !max || capable(CAP_SYS_RESOURCE))
		return 0;
	atomic_long_dec(&b->fds);
	return -EAGAIN;
}

void asx_budget_fd_uncharge(struct asx_budget *b)
{
	atomic_long_dec(&b->fds);
}

static void budgets_free(void)
{
	struct hlist_node *tmp;
	struct asx_budget *b;
	int bkt;

	hash_for_each_safe(budgets, bkt, tmp, b, node) {
		WARN_ON(percpu_counter_sum(&b->bytes));
		WARN_ON(atomic_long_read(&b->fds));
		hash_del(&b->node);
		percpu_counter_destroy(&b->bytes);
		kfree(b);
	}
}

static __always_inline struct asx_mdb *mdb_new(gfp_t gfp)
{
	struct asx_mdb *o;

	o = mdb_alloc(gfp);
	if (!o)
		return NULL;
	INIT_LIST_HEAD(&o->m.list);
	o->m.cont = NULL;
	o->m.type = ASX_M_DATA;
	o->m.band = 0;
	this_cpu_inc(nr_msgs);
	return o;
}

/**
 * asx_allocb() - allocate a one-block M_DATA message with room for @size bytes
 * @size: bytes of data room (0 is allowed)
 * @gfp:  allocation flags (GFP_ATOMIC in put procedures)
 *
 * Return: the message, rptr == wptr at the start of the buffer, or NULL.
 */
struct asx_msg *asx_allocb(size_t size, gfp_t gfp)
{
	struct asx_mdb *o;

	if (size > INT_MAX)
		return NULL;
	o = mdb_new(gfp);
	if (!o)
		return NULL;
	if (size <= ASX_INLINE_MAX) {
		o->db.base = o->data;
	} else {
		o->db.base = data_alloc(size, gfp);
		if (!o->db.base) {
			mdb_free(o);
			this_cpu_dec(nr_msgs);
			return NULL;
		}
	}
	refcount_set(&o->db.ref, 1);
	o->db.size = size;
	o->charged = NULL;
	o->m.db = &o->db;
	o->m.rptr = o->db.base;
	o->m.wptr = o->db.base;
	this_cpu_inc(nr_dblks);
	return &o->m;
}
EXPORT_SYMBOL_GPL(asx_allocb);

/* An M_PASSFP message's file reference goes with it (fput() may be called anywhere). */
static void passfp_release(struct asx_msg *mp)
{
	struct asx_passfp *pf = (struct asx_passfp *)mp->db->base;

	if (mp->db->size != sizeof(*pf))
		return;
	if (pf->file)
		fput(pf->file);
	if (pf->fdcharged)
		asx_budget_fd_uncharge(pf->fdcharged);
}

/* Frees one block; the data goes when its last block does. */
void asx_freeb(struct asx_msg *mp)
{
	struct asx_mdb *self = container_of(mp, struct asx_mdb, m);
	struct asx_dblk *db = mp->db;
	struct asx_mdb *owner = container_of(db, struct asx_mdb, db);

	this_cpu_dec(nr_msgs);
	/* Sole holder: nobody else can take a reference, so skip the atomic. */
	if (refcount_read(&db->ref) == 1 || refcount_dec_and_test(&db->ref)) {
		if (unlikely(mp->type == ASX_M_PASSFP))
			passfp_release(mp);
		if (owner->charged)
			mdb_uncharge(owner);
		if (db->base != owner->data)
			data_free(db->base, db->size);
		this_cpu_dec(nr_dblks);
		/* The owner's header is this one, or was freed before. */
		mdb_free(owner);
	}
	if (owner != self)
		mdb_free(self);
}
EXPORT_SYMBOL_GPL(asx_freeb);

void asx_freemsg(struct asx_msg *mp)
{
	struct asx_msg *next;

	for (; mp; mp = next) {
		next = mp->cont;
		asx_freeb(mp);
	}
}
EXPORT_SYMBOL_GPL(asx_freemsg);

/*
 * A flush may free a queue of tens of thousands of messages, in a put
 * procedure where nothing may sleep; under KASAN each free costs tens of
 * microseconds, and one such loop once held a CPU for 23 s. So a list is
 * freed ASX_FREE_INLINE messages at a time at most: the rest goes to a
 * worker that yields as it frees. Memory so deferred stays charged to its
 * writer (cgroup and budget) until the worker has run, a few milliseconds.
 */
#define ASX_FREE_INLINE	512

static DEFINE_SPINLOCK(deferred_lock);
static LIST_HEAD(deferred_msgs);

static void deferred_free_fn(struct work_struct *work)
{
	struct asx_msg *mp, *tmp;
	unsigned int n = 0;
	LIST_HEAD(batch);

	spin_lock_irq(&deferred_lock);
	list_splice_init(&deferred_msgs, &batch);
	spin_unlock_irq(&deferred_lock);
	list_for_each_entry_safe(mp, tmp, &batch, list) {
		asx_freemsg(mp);
		if (!(++n % 256))
			cond_resched();
	}
}

static DECLARE_WORK(deferred_free_work, deferred_free_fn);

/* Frees the messages on @list (linked through their list), emptying it. */
void asx_freemsg_list(struct list_head *list)
{
	struct asx_msg *mp;
	unsigned long flags;
	unsigned int n;

	for (n = 0; n < ASX_FREE_INLINE; n++) {
		mp = list_first_entry_or_null(list, struct asx_msg, list);
		if (!mp)
			return;
		list_del(&mp->list);
		asx_freemsg(mp);
	}
	if (list_empty(list))
		return;
	spin_lock_irqsave(&deferred_lock, flags);
	list_splice_tail_init(list, &deferred_msgs);
	spin_unlock_irqrestore(&deferred_lock, flags);
	queue_work(system_unbound_wq, &deferred_free_work);
}

/* A new block header sharing @mp's data. */
struct asx_msg *asx_dupb(struct asx_msg *mp, gfp_t gfp)
{
	struct asx_mdb *o;
	struct asx_msg *np;

	o = mdb_new(gfp);
	if (!o)
		return NULL;
	np = &o->m;
	np->db = mp->db;
	refcount_inc(&mp->db->ref);
	np->rptr = mp->rptr;
	np->wptr = mp->wptr;
	np->type = mp->type;
	np->band = mp->band;
	return np;
}
EXPORT_SYMBOL_GPL(asx_dupb);

/* Duplicates a whole chain; no data is copied. */
struct asx_msg *asx_dupmsg(struct asx_msg *mp, gfp_t gfp)
{
	struct asx_msg *head = NULL, **tail = &head;

	for (; mp; mp = mp->cont) {
		*tail = asx_dupb(mp, gfp);
		if (!*tail) {
			asx_freemsg(head);
			return NULL;
		}
		tail = &(*tail)->cont;
	}
	return head;
}
EXPORT_SYMBOL_GPL(asx_dupmsg);

/* Copies a whole chain, block for block, data and all. */
struct asx_msg *asx_copymsg(struct asx_msg *mp, gfp_t gfp)
{
	struct asx_msg *head = NULL, **tail = &head;

	for (; mp; mp = mp->cont) {
		/* a second copy of a file pointer would drop a reference it never took */
		*tail = mp->type == ASX_M_PASSFP ? NULL : asx_allocb(asx_blen(mp), gfp);
		if (!*tail) {
			asx_freemsg(head);
			return NULL;
		}
		if (asx_blen(mp))
			memcpy((*tail)->wptr, mp->rptr, asx_blen(mp));
		(*tail)->wptr += asx_blen(mp);
		(*tail)->type = mp->type;
		(*tail)->band = mp->band;
		tail = &(*tail)->cont;
	}
	return head;
}
EXPORT_SYMBOL_GPL(asx_copymsg);

/* Bytes in every block of the chain. */
size_t asx_msgdsize(const struct asx_msg *mp)
{
	size_t n = 0;

	for (; mp; mp = mp->cont)
		n += asx_blen(mp);
	return n;
}
EXPORT_SYMBOL_GPL(asx_msgdsize);

/* Copies up to @len bytes from offset @off of the chain; returns the count. */
size_t asx_msg_copy_out(const struct asx_msg *mp, size_t off, void *buf, size_t len)
{
	size_t done = 0, n;

	for (; mp && done < len; mp = mp->cont) {
		n = asx_blen(mp);
		if (off >= n) {
			off -= n;
			continue;
		}
		n = min(n - off, len - done);
		memcpy(buf + done, mp->rptr + off, n);
		done += n;
		off = 0;
	}
	return done;
}
EXPORT_SYMBOL_GPL(asx_msg_copy_out);

/* Trims @len bytes from the front of the chain (blocks are kept, emptied). */
void asx_msg_adj(struct asx_msg *mp, size_t len)
{
	size_t n;

	for (; mp && len; mp = mp->cont) {
		n = min(len, asx_blen(mp));
		mp->rptr += n;
		len -= n;
	}
}
EXPORT_SYMBOL_GPL(asx_msg_adj);

/* A one-block message of @type holding a copy of @data. */
struct asx_msg *asx_ctlmsg(u8 type, const void *data, size_t len, gfp_t gfp)
{
	struct asx_msg *mp;

	mp = asx_allocb(len, gfp);
	if (!mp)
		return NULL;
	if (len)
		memcpy(mp->wptr, data, len);
	mp->wptr += len;
	mp->type = type;
	return mp;
}
EXPORT_SYMBOL_GPL(asx_ctlmsg);

int asx_msg_init(void)
{
	int cpu;

	BUILD_BUG_ON(sizeof(struct asx_mdb) > ASX_MDB_SIZE / 2);
	/*
	 * A stashed object is not freed as far as KASAN knows: a use after
	 * free would go unseen. Under KASAN every free goes to the allocator.
	 */
	for_each_possible_cpu(cpu) {
		per_cpu_ptr(&page_stash, cpu)->max = IS_ENABLED(CONFIG_KASAN) ? 0 : ASX_PAGE_STASH;
		per_cpu_ptr(&mdb_stash, cpu)->max = IS_ENABLED(CONFIG_KASAN) ? 0 : ASX_MDB_STASH;
	}
	/* Inline data is copied to and from user space: whitelist it for usercopy. */
	mdb_cache = kmem_cache_create_usercopy("asx_mdb", ASX_MDB_SIZE, 0, 0,
					       offsetof(struct asx_mdb, data), ASX_INLINE_MAX,
					       NULL);
	return mdb_cache ? 0 : -ENOMEM;
}

void asx_msg_exit(void)
{
	struct stash *s;
	int cpu;

	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(&page_stash, cpu);
		while (s->n)
			free_page((unsigned long)s->obj[--s->n]);
		s = per_cpu_ptr(&mdb_stash, cpu);
		while (s->n)
			kmem_cache_free(mdb_cache, s->obj[--s->n]);
	}
	flush_work(&deferred_free_work);
	kmem_cache_destroy(mdb_cache);
	flush_work(&vfree_work);
	budgets_free();
}
