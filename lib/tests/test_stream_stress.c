// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_stream_stress.c - seeded stress of Streams and the Multiplexor.
 *
 * Three workloads run at once for STRESS_S seconds (default 3):
 *
 *  "ordered"    a loop-back Stream; 3 writers put sequence-numbered
 *               messages at full speed while a thread pushes, inserts,
 *               replaces, pops and removes Modules, message-based and
 *               task-based with one service thread per side.  Every
 *               message must come out exactly once and in per-writer order.
 *  "any"        the same with Modules of 0-2 service threads per side,
 *               removed in any state: exactly once (order not promised).
 *  "mux"        a Multiplexor (lock strategy from the seed) with 3 upper
 *               Streams, each with a writer and a reader, over two lower
 *               loop-back Streams with task-based Modules; a thread links
 *               and unlinks the lowers (keyed and default) and replaces
 *               their Modules.  Each message comes back up its upper once,
 *               or is counted unroutable; nothing may be left on a lower's
 *               head after its unlink.
 *
 * Every choice comes from the seed (printed; ASX_STRESS_SEED=<n> replays
 * the same choices -- thread interleavings differ from run to run).  A
 * watchdog thread prints the state and aborts when nothing moves for a
 * while instead of letting the test hang (ASX_STRESS_HOLD=<s>: it waits
 * that long first, to attach a debugger).  Helper threads never call
 * cmocka's assert_*; the main thread checks at the end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/modules.h>
#include <asx/mux.h>
#include <asx/stream.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SLOW 4		/* watchdog patience multiplier */
#else
#define SLOW 1
#endif

#define NW 3		/* writers per Stream workload */
#define NU 3		/* upper streams of the mux */
#define NL 2		/* lower streams of the mux */
#define MAXMODS 6	/* Modules between head and tail */
#define STALL_S (20 * SLOW)

static uint64_t seed;
static int stop_all;		/* atomic: reconfiguration and writers stop */
static uint64_t progress;	/* atomic: messages delivered, for the watchdog */

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static uint64_t sub_seed(unsigned int k)
{
	uint64_t s = seed ^ (0x9e3779b97f4a7c15ULL * (k + 1));

	return s ? s : 1;
}

static bool stopping(void)
{
	return __atomic_load_n(&stop_all, __ATOMIC_ACQUIRE);
}

/* ------------------------------------------------------------ bitmaps */

struct seen {
	uint8_t *bits;
	size_t cap;		/* bytes */
};

/* Mark @seq; false when it was already marked (a duplicate). */
static bool seen_mark(struct seen *b, uint32_t seq)
{
	size_t byte = seq / 8;

	if (byte >= b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *p;

		while (cap <= byte)
			cap *= 2;
		p = realloc(b->bits, cap);
		if (!p)
			abort();
		memset(p + b->cap, 0, cap - b->cap);
		b->bits = p;
		b->cap = cap;
	}
	if (b->bits[byte] & (1u << (seq % 8)))
		return false;
	b->bits[byte] |= (uint8_t)(1u << (seq % 8));
	return true;
}

static bool seen_has(const struct seen *b, uint32_t seq)
{
	return seq / 8 < b->cap && (b->bits[seq / 8] & (1u << (seq % 8)));
}

/* ------------------------------------------------------------ a Module */

struct gmod {
	int threads[2];		/* service threads: write, read side */
	int closed;		/* atomic */
	uint64_t *closed_hits;	/* atomic */
};

static int g_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct gmod *g = asx_module_arg(asx_task_module(t));

	if (__atomic_load_n(&g->closed, __ATOMIC_ACQUIRE))
		__atomic_fetch_add(g->closed_hits, 1, __ATOMIC_RELAXED);
	return asx_task_put_next(t, m, dl);
}

static int g_open(struct asx_task *t, int argc, char **argv)
{
	struct gmod *g = asx_module_arg(asx_task_module(t));
	int n = g->threads[asx_task_is_wr(t) ? 0 : 1];

	return n ? asx_task_activate(t, n) : 0;
}

static void g_close(struct asx_task *t, unsigned int flags)
{
	struct gmod *g = asx_module_arg(asx_task_module(t));

	if (!asx_task_is_wr(t))
		__atomic_store_n(&g->closed, 1, __ATOMIC_RELEASE);
}

static const struct asx_task_ops g_ops = { .open = g_open, .close = g_close, .put = g_put };

static struct asx_module *gmod_new(const char *name, int wr_threads, int rd_threads,
				   uint64_t *closed_hits)
{
	struct gmod *g = calloc(1, sizeof(*g));
	struct asx_module *mod;

	if (!g)
		abort();
	g->threads[0] = wr_threads;
	g->threads[1] = rd_threads;
	g->closed_hits = closed_hits;
	if (asx_module_create(&mod, name, &g_ops, &g_ops, g))
		abort();
	asx_module_set_dtor(mod, free);
	return mod;
}

/* ------------------------------------------------------------ Stream workloads */

struct swork;

struct swriter {
	struct swork *w;
	uint32_t src;
	uint32_t written;	/* atomic */
	int err;
};

struct swork {
	const char *name;
	bool ordered;
	struct asx_stream *s;
	struct asx_module *base;
	struct swriter wr[NW];
	/* reconfiguration */
	uint64_t rs;
	uint64_t ops[5];	/* push, insert, replace, pop, remove done */
	uint64_t op_ns[5], op_max_ns[5];
	int rerr;
	char rerr_what[64];
	const char *doing;	/* atomic: the reconfiguration under way */
	uint64_t closed_hits;	/* atomic */
	/* reader */
	struct seen seen[NW];
	uint32_t next[NW];
	uint64_t got, dups, order, bad;	/* got: atomic (the watchdog reads it) */
	int readers_done;	/* atomic */
};

static void *swriter_main(void *arg)
{
	struct swriter *wr = arg;

	for (uint32_t i = 0; !stopping() && i < UINT32_MAX - 1; i++) {
		struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_DATA);
		int r;

		if (!m)
			abort();
		asx_msg_append(m, &wr->src, 4);
		asx_msg_append(m, &i, 4);
		r = asx_stream_put(wr->w->s, m, 0, NULL);
		if (r) {
			asx_msg_free_chain(m);
			wr->err = r;
			break;
		}
		__atomic_store_n(&wr->written, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static uint64_t swork_written(struct swork *w)
{
	uint64_t n = 0;

	for (int i = 0; i < NW; i++)
		n += __atomic_load_n(&w->wr[i].written, __ATOMIC_ACQUIRE);
	return n;
}

static void *sreader_main(void *arg)
{
	struct swork *w = arg;
	struct timespec ts;
	int idle = 0;

	for (;;) {
		struct asx_msg *m;
		uint32_t v[2];

		if (asx_stream_get(w->s, &m, 0, asx_deadline(&ts, 100000000ULL))) {
			/* writers stopped and everything written is in: done */
			if (__atomic_load_n(&w->readers_done, __ATOMIC_ACQUIRE) &&
			    (w->got >= swork_written(w) || ++idle > 50 * SLOW))
				break;
			continue;
		}
		idle = 0;
		if (asx_msg_length(m) != 8) {
			w->bad++;
		} else {
			asx_msg_read(m, 0, v, 8);
			if (v[0] >= NW) {
				w->bad++;
			} else if (!seen_mark(&w->seen[v[0]], v[1])) {
				w->dups++;
			} else {
				if (v[1] != w->next[v[0]])
					w->order++;
				w->next[v[0]] = v[1] + 1;
				__atomic_store_n(&w->got, w->got + 1, __ATOMIC_RELEASE);
				__atomic_fetch_add(&progress, 1, __ATOMIC_RELAXED);
			}
		}
		asx_msg_free_chain(m);
	}
	return NULL;
}

static void swork_fail(struct swork *w, const char *what, int r)
{
	w->rerr = r;
	snprintf(w->rerr_what, sizeof(w->rerr_what), "%s", what);
}

/* Threads for a new Module: ordered: 0 or 1 per side (one thread keeps order). */
static void pick_threads(struct swork *w, int *wt, int *rt)
{
	uint64_t x = rnd(&w->rs);

	if (w->ordered) {
		*wt = (x & 3) == 0;
		*rt = (x & 12) == 0;
	} else {
		*wt = (int)(x % 3);
		*rt = (int)((x >> 8) % 3);
	}
}

static void *sreconf_main(void *arg)
{
	struct swork *w = arg;
	unsigned int serial = 0;

	while (!stopping()) {
		char name[16], names[MAXMODS + 2][ASX_MODULE_NAME_MAX];
		int op = (int)(rnd(&w->rs) % 5), wt, rt, r = 0, k, i;
		uint64_t t0;
		const char *victim;

		k = asx_stream_list(w->s, names, MAXMODS + 2);
		if (k < 2 || k > MAXMODS + 2) {
			swork_fail(w, "list", k);
			break;
		}
		k -= 2;		/* ours: names[1..k], below them "base" and the tail */
		if (k > 0 && !strcmp(names[k], "base"))
			k--;
		if (k >= MAXMODS - 1 && op < 2)
			op = 3;
		if (k == 0 && op >= 2)
			op = (int)(rnd(&w->rs) % 2);
		snprintf(name, sizeof(name), "m%u", serial);
		pick_threads(w, &wt, &rt);
		i = k ? 1 + (int)(rnd(&w->rs) % (uint64_t)k) : 0;
		victim = op == 3 ? names[1] : names[i];
		if (op == 1 && rnd(&w->rs) % 2)
			victim = "head";
		{
			static const char *const what[] = { "push", "insert", "replace", "pop",
							    "remove" };

			__atomic_store_n(&w->doing, what[op], __ATOMIC_RELEASE);
		}
		t0 = asx_now_ns();
		switch (op) {
		case 0:
			r = asx_stream_push(w->s, gmod_new(name, wt, rt, &w->closed_hits), 0, NULL);
			break;
		case 1:
			r = asx_stream_insert(w->s, victim, gmod_new(name, wt, rt, &w->closed_hits),
					      0, NULL);
			break;
		case 2:
			r = asx_stream_replace(w->s, victim, gmod_new(name, wt, rt, &w->closed_hits),
					       0, NULL);
			break;
		case 3:
			r = asx_stream_pop(w->s);
			break;
		default:
			r = asx_stream_remove(w->s, victim);
			break;
		}
		if (r) {
			static const char *const what[] = { "push", "insert", "replace", "pop",
							    "remove" };

			swork_fail(w, what[op], r);
			break;
		}
		__atomic_store_n(&w->doing, "sleep", __ATOMIC_RELEASE);
		t0 = asx_now_ns() - t0;
		w->op_ns[op] += t0;
		if (t0 > w->op_max_ns[op])
			w->op_max_ns[op] = t0;
		w->ops[op]++;
		if (op <= 2)
			serial++;
		if (rnd(&w->rs) % 4 == 0)
			usleep((useconds_t)(rnd(&w->rs) % 2000));
	}
	return NULL;
}

/* ------------------------------------------------------------ Multiplexor workload */

struct mwork {
	enum asx_map_lock lock;
	struct asx_mux *mux;
	struct asx_stream *up[NU], *low[NL];
	bool linked[NL];
	int keyed[NL];			/* -1: default route, else the key */
	uint64_t ls;
	unsigned int serial;
	uint64_t links, unlinks, replaces, stranded;
	int lerr;
	char lerr_what[32];
	const char *doing;		/* atomic: the linker's call under way */
	uint64_t closed_hits;		/* atomic */
	/* writers */
	uint32_t sent[NU];		/* atomic */
	int werr[NU];
	/* readers */
	struct seen seen[NU];
	uint64_t got[NU];		/* atomic */
	uint64_t dups[NU], bad[NU];
	int readers_done;		/* atomic */
};

struct mthr {
	struct mwork *mw;
	uint32_t u;
};

static int mkey_of(const struct asx_msg *m, void *key, void *arg)
{
	(void)arg;
	return asx_msg_read(m, 0, key, 4) == 4 ? 0 : -EBADMSG;
}

static void *mwriter_main(void *arg)
{
	struct mthr *t = arg;
	struct mwork *mw = t->mw;

	for (uint32_t i = 0; !stopping() && i < UINT32_MAX - 1; i++) {
		struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_DATA);
		int r;

		if (!m)
			abort();
		asx_msg_append(m, &t->u, 4);
		asx_msg_append(m, &i, 4);
		r = asx_stream_put(mw->up[t->u], m, 0, NULL);
		if (r) {
			asx_msg_free_chain(m);
			mw->werr[t->u] = r;
			break;
		}
		__atomic_store_n(&mw->sent[t->u], i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *mreader_main(void *arg)
{
	struct mthr *t = arg;
	struct mwork *mw = t->mw;
	struct timespec ts;

	for (;;) {
		struct asx_msg *m;
		uint32_t v[2];
		int r;

		if (__atomic_load_n(&mw->readers_done, __ATOMIC_ACQUIRE))
			r = asx_stream_get(mw->up[t->u], &m, ASX_STREAM_NOWAIT, NULL);
		else
			r = asx_stream_get(mw->up[t->u], &m, 0, asx_deadline(&ts, 100000000ULL));
		if (r) {
			if (r == -EWOULDBLOCK)
				break;	/* after the last unlink: all in */
			continue;
		}
		if (asx_msg_length(m) != 8) {
			mw->bad[t->u]++;
		} else {
			asx_msg_read(m, 0, v, 8);
			if (v[0] != t->u)
				mw->bad[t->u]++;
			else if (!seen_mark(&mw->seen[t->u], v[1]))
				mw->dups[t->u]++;
			else
				__atomic_store_n(&mw->got[t->u], mw->got[t->u] + 1, __ATOMIC_RELEASE);
			__atomic_fetch_add(&progress, 1, __ATOMIC_RELAXED);
		}
		asx_msg_free_chain(m);
	}
	return NULL;
}

static int mw_unlink(struct mwork *mw, int j)
{
	struct asx_msg *m;
	int r = asx_mux_unlink(mw->mux, mw->low[j]);

	if (r)
		return r;
	mw->linked[j] = false;
	mw->unlinks++;
	/* nothing routed down it any more, and what was inside went up */
	while (asx_stream_get(mw->low[j], &m, ASX_STREAM_NOWAIT, NULL) == 0) {
		mw->stranded++;
		asx_msg_free_chain(m);
	}
	return 0;
}

static void *mlinker_main(void *arg)
{
	struct mwork *mw = arg;

	while (!stopping()) {
		int j = (int)(rnd(&mw->ls) % NL), r = 0;
		uint64_t x = rnd(&mw->ls);
		const char *what = "";

		if (x % 5 == 0) {
			/* swap the lower's Module for a new one, linked or not */
			char names[4][ASX_MODULE_NAME_MAX], name[16];
			int wt = (int)((x >> 8) % 2), rt = 1 + (int)((x >> 16) % 2);

			what = "replace";
			__atomic_store_n(&mw->doing, what, __ATOMIC_RELEASE);
			if (asx_stream_list(mw->low[j], names, 4) != 3) {
				r = -EPROTO;	/* head, our Module, tail */
				goto fail;
			}
			snprintf(name, sizeof(name), "l%d.%u", j, mw->serial++);
			r = asx_stream_replace(mw->low[j], names[1],
					       gmod_new(name, wt, rt, &mw->closed_hits), 0, NULL);
			if (!r)
				mw->replaces++;
		} else if (mw->linked[j] && x % 3 == 0) {
			usleep(1000);	/* stay linked a while longer */
			continue;
		} else if (mw->linked[j]) {
			what = "unlink";
			__atomic_store_n(&mw->doing, what, __ATOMIC_RELEASE);
			r = mw_unlink(mw, j);
		} else {
			bool deflt_free = true, key_free[NU] = { true, true, true };
			uint32_t key;

			for (int i = 0; i < NL; i++) {
				if (!mw->linked[i])
					continue;
				if (mw->keyed[i] < 0)
					deflt_free = false;
				else
					key_free[mw->keyed[i]] = false;
			}
			key = (uint32_t)((x >> 8) % NU);
			what = "link";
			__atomic_store_n(&mw->doing, what, __ATOMIC_RELEASE);
			if (deflt_free && (x >> 4) % 2) {
				r = asx_mux_link(mw->mux, mw->low[j], NULL);
				mw->keyed[j] = -1;
			} else if (key_free[key]) {
				r = asx_mux_link(mw->mux, mw->low[j], &key);
				mw->keyed[j] = (int)key;
			} else {
				usleep(1000);
				continue;
			}
			if (!r) {
				mw->linked[j] = true;
				mw->links++;
			}
		}
		__atomic_store_n(&mw->doing, "sleep", __ATOMIC_RELEASE);
		if (r) {
fail:
			mw->lerr = r;
			snprintf(mw->lerr_what, sizeof(mw->lerr_what), "%s", what);
			break;
		}
		usleep((useconds_t)(rnd(&mw->ls) % 3000));
	}
	__atomic_store_n(&mw->doing, "done", __ATOMIC_RELEASE);
	return NULL;
}

/* ------------------------------------------------------------ watchdog */

static struct swork *wd_sw[2];
static struct mwork *wd_mw;
static int wd_done;		/* atomic */
static unsigned int wd_limit_s;

/* Lock-free snapshots only: whatever is stuck may hold any lock. */
static void dump_state(const char *why)
{
	fprintf(stderr, "stress: %s (seed %llu; replay with ASX_STRESS_SEED=%llu)\n", why,
		(unsigned long long)seed, (unsigned long long)seed);
	for (int i = 0; i < 2; i++) {
		struct swork *w = wd_sw[i];
		const char *doing;

		if (!w)
			continue;
		doing = __atomic_load_n(&w->doing, __ATOMIC_ACQUIRE);
		fprintf(stderr, "  %s: written %llu got %llu, head queue %zu; reconfiguration: "
			"%s (error %d %s)\n", w->name, (unsigned long long)swork_written(w),
			(unsigned long long)__atomic_load_n(&w->got, __ATOMIC_ACQUIRE),
			asx_msgq_count(asx_stream_head_queue(w->s)), doing ? doing : "-",
			w->rerr, w->rerr_what);
	}
	if (wd_mw) {
		const char *doing = __atomic_load_n(&wd_mw->doing, __ATOMIC_ACQUIRE);

		for (int u = 0; u < NU; u++)
			fprintf(stderr, "  mux upper %d: sent %u got %llu, head queue %zu\n", u,
				__atomic_load_n(&wd_mw->sent[u], __ATOMIC_ACQUIRE),
				(unsigned long long)__atomic_load_n(&wd_mw->got[u],
								    __ATOMIC_ACQUIRE),
				asx_msgq_count(asx_stream_head_queue(wd_mw->up[u])));
		for (int j = 0; j < NL; j++)
			fprintf(stderr, "  mux lower %d: head queue %zu\n", j,
				asx_msgq_count(asx_stream_head_queue(wd_mw->low[j])));
		fprintf(stderr, "  mux linker: %s (error %d %s)\n", doing ? doing : "-",
			wd_mw->lerr, wd_mw->lerr_what);
	}
}

static void *watchdog_main(void *arg)
{
	uint64_t last = 0, start = asx_now_ns();
	unsigned int still = 0;

	(void)arg;
	while (!__atomic_load_n(&wd_done, __ATOMIC_ACQUIRE)) {
		uint64_t p = __atomic_load_n(&progress, __ATOMIC_RELAXED);

		sleep(1);
		if (__atomic_load_n(&wd_done, __ATOMIC_ACQUIRE))
			break;
		still = p == last ? still + 1 : 0;
		last = p;
		if (still >= STALL_S) {
			dump_state("no message delivered for a while: stuck");
			if (getenv("ASX_STRESS_HOLD"))	/* time to attach a debugger */
				sleep((unsigned int)strtoul(getenv("ASX_STRESS_HOLD"), NULL, 0));
			abort();
		}
		if (asx_now_ns() - start > (uint64_t)wd_limit_s * ASX_NSEC_PER_SEC) {
			dump_state("over the time limit");
			abort();
		}
	}
	return NULL;
}

/* ------------------------------------------------------------ the test */

static void swork_start(struct swork *w, const char *name, bool ordered, unsigned int k,
			pthread_t *th)
{
	*w = (struct swork){ .name = name, .ordered = ordered, .rs = sub_seed(k) };
	assert_int_equal(asx_stream_open(&w->s, NULL), 0);
	assert_int_equal(asx_mod_counter(&w->base, "base"), 0);
	assert_int_equal(asx_stream_push(w->s, w->base, 0, NULL), 0);
	for (int i = 0; i < NW; i++) {
		w->wr[i] = (struct swriter){ .w = w, .src = (uint32_t)i };
		assert_int_equal(pthread_create(&th[i], NULL, swriter_main, &w->wr[i]), 0);
	}
	assert_int_equal(pthread_create(&th[NW], NULL, sreader_main, w), 0);
	assert_int_equal(pthread_create(&th[NW + 1], NULL, sreconf_main, w), 0);
}

static void swork_finish(struct swork *w, pthread_t *th)
{
	uint64_t total;
	struct asx_counter c;
	char names[MAXMODS + 2][ASX_MODULE_NAME_MAX];
	int k;

	for (int i = 0; i < NW; i++)
		pthread_join(th[i], NULL);
	pthread_join(th[NW + 1], NULL);
	__atomic_store_n(&w->readers_done, 1, __ATOMIC_RELEASE);
	pthread_join(th[NW], NULL);
	total = swork_written(w);
	print_message("  %s: %llu messages; push %llu insert %llu replace %llu pop %llu "
		      "remove %llu; dups %llu, out of order %llu\n", w->name,
		      (unsigned long long)w->got, (unsigned long long)w->ops[0],
		      (unsigned long long)w->ops[1], (unsigned long long)w->ops[2],
		      (unsigned long long)w->ops[3], (unsigned long long)w->ops[4],
		      (unsigned long long)w->dups, (unsigned long long)w->order);
	for (int i = 0; i < 5; i++)
		if (w->ops[i])
			print_message("    op %d: mean %.1f ms, max %.1f ms\n", i,
				      (double)w->op_ns[i] / (double)w->ops[i] / 1e6,
				      (double)w->op_max_ns[i] / 1e6);
	if (w->rerr)
		fail_msg("%s: %s failed: %d", w->name, w->rerr_what, w->rerr);
	for (int i = 0; i < NW; i++) {
		assert_int_equal(w->wr[i].err, 0);
		for (uint32_t q = 0; q < w->wr[i].written; q++)
			if (!seen_has(&w->seen[i], q))
				fail_msg("%s: writer %d message %u lost", w->name, i, q);
	}
	assert_int_equal(w->got, total);
	assert_int_equal(w->dups, 0);
	assert_int_equal(w->bad, 0);
	assert_int_equal(__atomic_load_n(&w->closed_hits, __ATOMIC_RELAXED), 0);
	if (w->ordered)
		assert_int_equal(w->order, 0);
	k = asx_stream_list(w->s, names, MAXMODS + 2);
	assert_true(k >= 3 && k <= MAXMODS + 2);
	assert_string_equal(names[k - 2], "base");
	/* every message passed the bottom Module once each way */
	assert_int_equal(asx_mod_counter_read(w->base, &c), 0);
	assert_int_equal(c.wr_msgs, total);
	assert_int_equal(c.rd_msgs, total);
	asx_stream_close(w->s);
	for (int i = 0; i < NW; i++)
		free(w->seen[i].bits);
}

static void mwork_start(struct mwork *mw, pthread_t *th, struct mthr *mt)
{
	static const enum asx_map_lock locks[] = { ASX_MAP_MUTEX, ASX_MAP_RWLOCK, ASX_MAP_RCU };
	uint64_t x;

	*mw = (struct mwork){ .ls = sub_seed(7) };
	x = rnd(&mw->ls);
	mw->lock = locks[x % 3];
	assert_int_equal(asx_mux_create(&mw->mux, mw->lock, 4, mkey_of, NULL), 0);
	for (uint32_t u = 0; u < NU; u++)
		assert_int_equal(asx_mux_open_upper(mw->mux, &u, NULL, &mw->up[u]), 0);
	for (int j = 0; j < NL; j++) {
		char name[16];

		snprintf(name, sizeof(name), "l%d", j);
		assert_int_equal(asx_stream_open(&mw->low[j], NULL), 0);
		assert_int_equal(asx_stream_push(mw->low[j],
						 gmod_new(name, (int)((x >> (8 + j)) % 2), 1 + j,
							  &mw->closed_hits), 0, NULL), 0);
	}
	for (uint32_t u = 0; u < NU; u++) {
		mt[u] = (struct mthr){ .mw = mw, .u = u };
		assert_int_equal(pthread_create(&th[u], NULL, mwriter_main, &mt[u]), 0);
		assert_int_equal(pthread_create(&th[NU + u], NULL, mreader_main, &mt[u]), 0);
	}
	assert_int_equal(pthread_create(&th[2 * NU], NULL, mlinker_main, mw), 0);
}

static void mwork_finish(struct mwork *mw, pthread_t *th)
{
	struct asx_mux_stats st;
	uint64_t sent = 0, got = 0, dups = 0, bad = 0;

	for (uint32_t u = 0; u < NU; u++)
		pthread_join(th[u], NULL);
	pthread_join(th[2 * NU], NULL);
	/* the last unlinks: what is inside the lowers goes up */
	for (int j = 0; j < NL; j++)
		if (mw->linked[j] && !mw->lerr)
			mw->lerr = mw_unlink(mw, j);
	__atomic_store_n(&mw->readers_done, 1, __ATOMIC_RELEASE);
	for (uint32_t u = 0; u < NU; u++)
		pthread_join(th[NU + u], NULL);
	asx_mux_stats(mw->mux, &st);
	for (uint32_t u = 0; u < NU; u++) {
		sent += mw->sent[u];
		got += mw->got[u];
		dups += mw->dups[u];
		bad += mw->bad[u];
		assert_int_equal(mw->werr[u], 0);
	}
	print_message("  mux (lock %d): %llu sent, %llu back up, %llu unroutable; "
		      "%llu links, %llu unlinks, %llu replaces; stranded %llu, dups %llu\n",
		      (int)mw->lock, (unsigned long long)sent, (unsigned long long)got,
		      (unsigned long long)st.unroutable, (unsigned long long)mw->links,
		      (unsigned long long)mw->unlinks, (unsigned long long)mw->replaces,
		      (unsigned long long)mw->stranded, (unsigned long long)dups);
	if (mw->lerr)
		fail_msg("mux: %s failed: %d", mw->lerr_what, mw->lerr);
	assert_int_equal(mw->stranded, 0);
	assert_int_equal(dups, 0);
	assert_int_equal(bad, 0);
	assert_int_equal(got + st.unroutable, sent);
	assert_int_equal(st.up, got);
	assert_int_equal(__atomic_load_n(&mw->closed_hits, __ATOMIC_RELAXED), 0);
	asx_mux_destroy(mw->mux);
	for (int j = 0; j < NL; j++)
		asx_stream_close(mw->low[j]);
	for (uint32_t u = 0; u < NU; u++)
		free(mw->seen[u].bits);
}

static void test_stress(void **state)
{
	static struct swork sw[2];
	static struct mwork mw;
	pthread_t sth[2][NW + 2], mth[2 * NU + 1], wd;
	struct mthr mt[NU];
	const char *e;
	unsigned int secs = 3;
	uint64_t t0;

	(void)state;
	e = getenv("ASX_STRESS_SEED");
	seed = e && *e ? strtoull(e, NULL, 0) : (asx_now_ns() ^ ((uint64_t)getpid() << 32));
	if (!seed)
		seed = 1;
	e = getenv("STRESS_S");
	if (e && *e)
		secs = (unsigned int)strtoul(e, NULL, 0);
	if (!secs)
		secs = 1;
	print_message("  seed %llu, %u s (replay: ASX_STRESS_SEED=%llu STRESS_S=%u)\n",
		      (unsigned long long)seed, secs, (unsigned long long)seed, secs);
	wd_limit_s = secs + 120 * SLOW;
	assert_int_equal(pthread_create(&wd, NULL, watchdog_main, NULL), 0);
	t0 = asx_now_ns();
	swork_start(&sw[0], "ordered", true, 1, sth[0]);
	swork_start(&sw[1], "any", false, 2, sth[1]);
	mwork_start(&mw, mth, mt);
	wd_sw[0] = &sw[0];
	wd_sw[1] = &sw[1];
	wd_mw = &mw;
	while (asx_now_ns() - t0 < (uint64_t)secs * ASX_NSEC_PER_SEC &&
	       !sw[0].rerr && !sw[1].rerr && !mw.lerr)
		usleep(50000);
	__atomic_store_n(&stop_all, 1, __ATOMIC_RELEASE);
	swork_finish(&sw[0], sth[0]);
	swork_finish(&sw[1], sth[1]);
	mwork_finish(&mw, mth);
	__atomic_store_n(&wd_done, 1, __ATOMIC_RELEASE);
	pthread_join(wd, NULL);
	print_message("  seed %llu passed in %.1f s\n", (unsigned long long)seed,
		      (double)(asx_now_ns() - t0) / 1e9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
