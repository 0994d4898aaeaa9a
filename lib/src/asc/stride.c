// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stride.c - STRIDE: proportional share by tickets (the paper's 3.7,
 * Waldspurger's stride scheduling), non-preemptive by default.
 *
 * Written with the public policy interface (asx/asc_policy.h) and nothing
 * else of libasx: it is the proof that a user can write such a policy.
 * It ships in the library because the paper names proportional share as
 * one of the ASC's policies (svc.conf and asx-bench pick it by name) and
 * because asx-bench measures its share accuracy.
 *
 * QoS schema: struct asx_stride_qos { tickets } (asx/asc.h).  Each thread
 * has a stride, STRIDE1 / tickets, and a pass.  The run queue is sorted
 * by pass (FIFO among equals); the thread with the smallest pass runs.
 * A thread is charged for the CPU time it used, not per dispatch: pass +=
 * stride * ns / 1024, when it yields or wakes (the time up to a block is
 * noted by the block op and charged at the wake-up: a waker on another VP
 * may queue it before its own block op runs, and a queued thread's pass
 * must not change).  So threads that yield after work of different
 * lengths still get CPU time in proportion to their tickets.  The time is
 * the VP's CPU clock (CLOCK_THREAD_CPUTIME_ID, read on the VP that runs
 * the thread), not the wall clock: on a loaded host the OS takes the VP
 * off the CPU for milliseconds, and a wall clock would charge that to
 * whichever thread was running (asx-bench stride on the shared 2-CPU
 * host: errors of 0.015 to 0.32 with the wall clock, 0.002 to 0.004 with
 * this one).  It costs a system call per dispatch.  A thread waking from a block gets no credit for the time
 * it slept: its pass is raised to the virtual time (the pass of the last
 * thread picked) less one stride, so it runs soon but cannot monopolise
 * the VPs to catch up.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <time.h>

#include <asx/asc_policy.h>

/* libasx's own: the registry names it "stride" (asc.c) */
extern const struct asx_asc_policy_ops asx__stride_ops;

#define STRIDE1		(1ULL << 20)
#define TICKETS_MAX	(1u << 20)

/* A thread's policy slot. */
struct sslot {
	struct sslot *next;
	uint64_t stride;	/* STRIDE1 / tickets */
	uint64_t pass;
	uint64_t start;		/* its VP's CPU clock when it was picked */
	const void *on;		/* that VP (vp_tag's address there) */
	uint64_t pending;	/* ns run, not charged yet */
	bool fresh;		/* admitted, not queued yet: joins at the virtual time */
};
_Static_assert(sizeof(struct sslot) <= ASX_ASC_POLICY_SLOT_SIZE, "policy slot");

struct stride_state {
	struct sslot *head;	/* sorted by pass */
	unsigned int count;	/* queued */
	uint64_t vtime;		/* the pass of the last thread picked */
};

static inline struct sslot *slot(struct asx_asc_thread *t)
{
	return asx_asc_thread_slot(t);
}

/* A VP's identity: the address of its own copy.  The ops run on VPs. */
static __thread char vp_tag __attribute__((tls_model("initial-exec")));

/* The calling VP's CPU time (ns). */
static uint64_t cpu_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* @t starts running on the calling VP. */
static inline void started(struct sslot *t)
{
	t->on = &vp_tag;
	t->start = cpu_now();
}

static int stride_admit(struct asx_asc *a, void *st, struct asx_asc_thread *th,
			const struct asx_qos *q, bool change)
{
	const struct asx_stride_qos *sq = (const struct asx_stride_qos *)q;
	struct sslot *t = slot(th);

	(void)a;
	(void)st;
	if (q->size < sizeof(*sq) || !sq->tickets || sq->tickets > TICKETS_MAX)
		return -EINVAL;
	t->stride = STRIDE1 / sq->tickets;
	/*
	 * Not s->vtime here: admit runs under the lock while the single VP
	 * runs the run-queue ops without it; the first enqueue sets the pass.
	 */
	if (!change) {
		t->fresh = true;
		t->pending = 0;
		t->on = NULL;
	}
	return 0;
}

/*
 * @t, running on the calling VP, ran since it was picked (or last
 * noted): note it.  A block op that comes after a waker on another VP
 * queued @t and a third VP picked it reads another VP's clock: not noted.
 */
static inline void note(struct sslot *t)
{
	uint64_t now;

	if (t->on != &vp_tag)
		return;
	now = cpu_now();
	if (now > t->start)
		t->pending += now - t->start;
	t->start = now;
}

/* Charge @t (not queued) for the time noted; the fraction is kept. */
static inline void charge(struct sslot *t)
{
	t->pass += t->stride * (t->pending >> 10);
	t->pending &= 1023;
}

static void insert(struct stride_state *s, struct sslot *t)
{
	struct sslot **pp = &s->head;

	while (*pp && (*pp)->pass <= t->pass)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

static void stride_enqueue(struct asx_asc *a, void *st, struct asx_asc_thread *th)
{
	struct stride_state *s = st;
	struct sslot *t = slot(th);

	(void)a;
	if (t->fresh) {
		t->fresh = false;
		t->pass = s->vtime;	/* joins at the current virtual time */
	}
	charge(t);
	/* no credit for the time it was blocked */
	if (t->pass + t->stride < s->vtime)
		t->pass = s->vtime - t->stride;
	insert(s, t);
}

static void stride_block(struct asx_asc *a, void *st, struct asx_asc_thread *t)
{
	(void)a;
	(void)st;
	note(slot(t));
}

static struct asx_asc_thread *stride_pick(struct asx_asc *a, void *st, struct asx_asc_vp *vp,
					  struct asx_asc_thread *cur)
{
	struct stride_state *s = st;
	struct sslot *t;

	(void)a;
	(void)vp;
	if (cur) {
		t = slot(cur);
		note(t);
		charge(t);
		if (!s->head || s->head->pass > t->pass) {
			if (t->pass > s->vtime)
				s->vtime = t->pass;
			return cur;	/* still the furthest behind */
		}
		insert(s, t);
	}
	t = s->head;
	if (!t)
		return NULL;
	s->head = t->next;
	__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
	if (t->pass > s->vtime)
		s->vtime = t->pass;
	started(t);
	return asx_asc_slot_thread(t);
}

static unsigned int stride_nrunnable(struct asx_asc *a, void *st)
{
	(void)a;
	return __atomic_load_n(&((struct stride_state *)st)->count, __ATOMIC_RELAXED);
}

const struct asx_asc_policy_ops asx__stride_ops = {
	.sz = sizeof(struct asx_asc_policy_ops),
	.name = "stride",
	.schema = ASX_QOS_STRIDE,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.state_size = sizeof(struct stride_state),
	.admit = stride_admit,
	.enqueue = stride_enqueue,
	.pick_next = stride_pick,
	.nrunnable = stride_nrunnable,
	.block = stride_block,
};
