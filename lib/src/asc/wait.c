// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * wait.c - the one wait primitive under libasx's blocking calls (see
 * wait.h for the contract).
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 *
 * The waiter is the scheduler's struct asx_waiter: a user thread, or a
 * plain pthread sleeping on the waiter's state word.  A user thread that
 * waits on a lock's word parks in the bucket of the word's address; its
 * waiter (on its own stack) records the address in ->data.  A bucket
 * holds the waiters of every word that hashes to it, in arrival order,
 * and counts them in @nwait, which is what lets a waker skip the bucket
 * (and its lock) when no user thread waits there: the plain-pthread path
 * then costs one fence and one load beside its FUTEX_WAKE.
 *
 * Ordering.  A parker takes the bucket lock, increments @nwait (seq_cst),
 * then reads the word (seq_cst) and queues itself if it still holds the
 * value it was given.  A waker has changed the word before it calls
 * asx__word_wake(), which issues a seq_cst fence and then reads @nwait:
 * either the fence comes first in the single total order, and the
 * parker's read sees the new word and does not sleep, or the parker's
 * increment comes first and the waker sees it, takes the bucket lock
 * (which the parker holds until it is queued) and finds it.
 *
 * Claiming.  A waker unlinks a waiter under the bucket lock, then claims
 * it (W_WAITING -> W_WOKEN); the sentinel's timer claims it W_TIMEDOUT.
 * Whoever wins wakes the thread; a waiter that timed out unlinks itself
 * if no waker did, so @nwait counts exactly the linked waiters.
 *
 * A user thread inside an RCU read-side section of the Stream framework
 * does not park: liburcu's reader state belongs to the VP's kernel
 * thread, and a parked thread may resume on another VP.  It sleeps on the
 * futex and blocks its VP, as every wait did before.
 *
 * The bucket lock is taken with lock_np(): a user thread holding it is
 * not preempted (the next thread on its VP could spin on it forever).
 */
#include <errno.h>

#include "asc/sched_impl.h"
#include "asc/wait.h"
#include "core/futex.h"
#include "core/rcudepth.h"

#define WB_BITS	8

struct wbucket {
	int lock;
	uint32_t nwait;			/* linked waiters (atomic) */
	struct asx_waiter *head, *tail;
} __attribute__((aligned(64)));

static struct wbucket wtab[1U << WB_BITS];

static inline struct wbucket *bucket_of(const uint32_t *word)
{
	uint64_t a = (uint64_t)(uintptr_t)word >> 2;

	return &wtab[(a * 0x9e3779b97f4a7c15ULL) >> (64 - WB_BITS)];
}

/* Under the lock: unlink @w (after @prev, NULL: the head). */
static void wb_unlink(struct wbucket *b, struct asx_waiter *prev, struct asx_waiter *w)
{
	if (prev)
		prev->next = w->next;
	else
		b->head = w->next;
	if (b->tail == w)
		b->tail = prev;
	__atomic_sub_fetch(&b->nwait, 1, __ATOMIC_RELAXED);
}

/* Under the lock: unlink @w if a waker has not; a timed-out waiter's exit. */
static void wb_remove(struct wbucket *b, struct asx_waiter *w)
{
	struct asx_waiter *p = NULL, *c;

	for (c = b->head; c && c != w; c = c->next)
		p = c;
	if (c)
		wb_unlink(b, p, c);
}

static int park(struct asx_asc_thread *self, uint32_t *word, uint32_t val,
		const struct timespec *abstime)
{
	struct wbucket *b = bucket_of(word);
	struct asx_waiter w = { .t = self, .data = (uintptr_t)word };
	int r;

	if (!asx_timespec_valid(abstime))
		return -EINVAL;
	lock_np(&b->lock);
	__atomic_fetch_add(&b->nwait, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(word, __ATOMIC_SEQ_CST) != val) {
		__atomic_sub_fetch(&b->nwait, 1, __ATOMIC_RELAXED);
		unlock_np(&b->lock);
		return -EAGAIN;
	}
	w.next = NULL;
	if (b->tail)
		b->tail->next = &w;
	else
		b->head = &w;
	b->tail = &w;
	ASX_PROBE2(wait_park, word, self);
	r = asx__wait(&w, &b->lock, abstime);	/* releases the bucket lock */
	if (r == W_TIMEDOUT) {
		lock_np(&b->lock);
		wb_remove(b, &w);
		unlock_np(&b->lock);
		return -ETIMEDOUT;
	}
	return 0;
}

int asx__word_wait(uint32_t *word, uint32_t val, const struct timespec *abstime)
{
	struct asx_asc_thread *self = asx__self();

	/*
	 * Inside an RCU read-side section the reader state is the VP's
	 * kernel thread's: a user thread must not switch (it could come
	 * back on another VP), so it blocks the VP, as before.
	 */
	if (likely(!self) || asx__rcu_in_reader())
		return asx_futex_wait(word, val, abstime);
	return park(self, word, val, abstime);
}

/* Wake up to @n user threads parked on @word; returns how many. */
static int unpark(struct wbucket *b, uint32_t *word, int n)
{
	struct asx_waiter *w, *prev = NULL, *next;
	int woke = 0;

	lock_np(&b->lock);
	for (w = b->head; w && woke < n; w = next) {
		next = w->next;
		if (w->data != (uintptr_t)word) {
			prev = w;
			continue;
		}
		wb_unlink(b, prev, w);
		/* @w may be gone once claimed: not touched after */
		if (asx__claim_wake(w, W_WOKEN))
			woke++;
	}
	unlock_np(&b->lock);
	return woke;
}

/*
 * The waker's half of the ordering (see the top): the word was changed
 * before this call.  ThreadSanitizer does not model fences (gcc refuses
 * them under -Werror), so its build reads @nwait with a seq_cst RMW, a
 * full barrier on x86 as the fence is.
 */
static inline uint32_t parked(struct wbucket *b)
{
#if defined(__SANITIZE_THREAD__)
	return __atomic_fetch_add(&b->nwait, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&b->nwait, __ATOMIC_RELAXED);
#endif
}

int asx__word_wake(uint32_t *word, int n)
{
	struct wbucket *b = bucket_of(word);
	int woke = 0;

	if (unlikely(parked(b))) {
		woke = unpark(b, word, n);
		if (woke >= n)
			return woke;
	}
	return woke + asx_futex_wake(word, n == INT_MAX ? INT_MAX : n - woke);
}

int asx__uthread_id(void)
{
	static int next_id;
	struct asx_asc_thread *self = asx__self();

	if (!self)
		return 0;
	/* written by the thread itself only, on first use (0: none yet) */
	if (!self->uid)
		self->uid = -1 - (__atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED) & INT_MAX);
	return self->uid;
}

void **asx__uthread_slot(void)
{
	struct asx_asc_thread *self = asx__self();

	return self ? &self->tm : NULL;
}

bool asx__spin_futile(void)
{
	return asx__self() && mode_get() == MODE_SINGLE;
}
