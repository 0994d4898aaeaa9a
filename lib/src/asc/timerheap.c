// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * timerheap.c - the timers of the scheduler: one heap of deadlines (sleeps,
 * timed waits, thread timers, EDF releases, the deferred activation check)
 * and the timerfd armed for its earliest.  The sentinel (sentinel.c) watches
 * the timerfd and fires what is due; the scheduler arms and disarms timers
 * here, below itself, so that a timed wait does not call up.  The sentinel
 * is started when the first ASC is made (asx_asc_create()), before any
 * timer can be armed: every timer belongs to a user thread or an ASC.
 *
 * One lock guards the heap and, for the sentinel, the signal waiters
 * (asx__timer_lock()); it is taken non-preemptible.
 *
 * File order of asc/, lowest first: switch < io < preempt < stack <
 * timerheap < sched < mode < upcall < vp < sync < sentinel < wait < thread <
 * prio < edf < direct < asc.  A file calls only its own and lower files
 * (tools/lib-layers.sh checks).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "asc/sched_impl.h"

static struct {
	pthread_mutex_t lock;
	struct tnode **heap;
	int n, cap;
	int tfd;
	uint64_t armed;		/* when the timerfd fires; 0: disarmed */
	bool shut;		/* released at unload: no timer from here on */
	bool used;		/* a timer was armed once */
	pthread_once_t once;
} H = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.tfd = -1,
	.once = PTHREAD_ONCE_INIT,
};

void asx__timer_lock(void)
{
	np_enter();
	pthread_mutex_lock(&H.lock);
}

void asx__timer_unlock(void)
{
	pthread_mutex_unlock(&H.lock);
	np_leave(true);
}

static void timerfd_init(void)
{
	H.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (H.tfd < 0)
		H.tfd = -errno;
}

int asx__timer_fd(void)
{
	pthread_once(&H.once, timerfd_init);
	return H.tfd;
}

/* ---------------------------------------------------------------- heap */

static void hswap(int i, int j)
{
	struct tnode *a = H.heap[i];

	H.heap[i] = H.heap[j];
	H.heap[j] = a;
	H.heap[i]->idx = i;
	H.heap[j]->idx = j;
}

static void hup(int i)
{
	while (i > 0) {
		int p = (i - 1) / 2;

		if (H.heap[p]->when <= H.heap[i]->when)
			break;
		hswap(i, p);
		i = p;
	}
}

static void hdown(int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;

		if (l < H.n && H.heap[l]->when < H.heap[m]->when)
			m = l;
		if (r < H.n && H.heap[r]->when < H.heap[m]->when)
			m = r;
		if (m == i)
			return;
		hswap(i, m);
		i = m;
	}
}

bool asx__timer_remove_locked(struct tnode *n)
{
	int i = n->idx;

	if (i < 0)
		return false;
	H.n--;
	if (i != H.n) {
		H.heap[i] = H.heap[H.n];
		H.heap[i]->idx = i;
		hdown(i);
		hup(i);
	}
	n->idx = -1;
	return true;
}

void asx__timer_insert_locked(struct tnode *n)
{
	if (H.shut || H.tfd < 0)
		abort();	/* a timer with no sentinel: it would never fire */
	__atomic_store_n(&H.used, true, __ATOMIC_RELEASE);
	asx__timer_remove_locked(n);
	if (H.n == H.cap) {
		int cap = H.cap ? 2 * H.cap : 64;
		struct tnode **h = realloc(H.heap, (size_t)cap * sizeof(*h));

		if (!h)
			abort();
		H.heap = h;
		H.cap = cap;
	}
	n->idx = H.n;
	H.heap[H.n++] = n;
	hup(n->idx);
}

struct tnode *asx__timer_due_locked(uint64_t now)
{
	return H.n && H.heap[0]->when <= now ? H.heap[0] : NULL;
}

void asx__timer_rearm_locked(bool fired)
{
	struct itimerspec its;
	uint64_t w = H.n ? H.heap[0]->when : 0;

	if (fired)
		H.armed = 0;	/* it expired: disarmed whatever it said */
	if (w == H.armed)
		return;
	memset(&its, 0, sizeof(its));
	if (w) {
		its.it_value.tv_sec = (time_t)(w / ASX_NSEC_PER_SEC);
		its.it_value.tv_nsec = (long)(w % ASX_NSEC_PER_SEC);
		if (!its.it_value.tv_sec && !its.it_value.tv_nsec)
			its.it_value.tv_nsec = 1;
	}
	timerfd_settime(H.tfd, TFD_TIMER_ABSTIME, &its, NULL);
	H.armed = w;
}

void asx__timer_add(struct tnode *n)
{
	asx__timer_lock();
	asx__timer_insert_locked(n);
	if (H.heap[0] == n)
		asx__timer_rearm_locked(false);
	asx__timer_unlock();
}

bool asx__timer_del(struct tnode *n)
{
	bool was;

	if (!__atomic_load_n(&H.used, __ATOMIC_ACQUIRE) && n->idx < 0)
		return false;	/* no timer was ever armed */
	asx__timer_lock();
	was = asx__timer_remove_locked(n);
	asx__timer_unlock();
	return was;
}

void asx__timer_dump(FILE *f)
{
	/* racy on purpose (diagnostics of a stuck process) */
	uint64_t now = asx_now_ns();
	int n = __atomic_load_n(&H.n, __ATOMIC_RELAXED);

	fprintf(f, "timers: %d queued, timerfd armed %s", n, H.armed ? "yes" : "no");
	if (n > 0 && H.heap)
		fprintf(f, ", first due in %lld us", (long long)(H.heap[0]->when - now) / 1000);
	fprintf(f, "\n");
}

void asx__timer_fini(void)
{
	if (H.tfd >= 0)
		close(H.tfd);
	H.tfd = -1;
	free(H.heap);
	H.heap = NULL;
	H.n = H.cap = 0;
	H.armed = 0;
	H.shut = true;
}
