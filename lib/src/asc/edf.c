// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * edf.c - EDF: preemptive, periodic threads, earliest deadline first
 * within a priority (the paper's 4.1.2).
 *
 * QoS schema: struct asx_edf_qos { priority, period, deadline, budget,
 * nperiods }.  Each thread's entry point runs once per period; the job
 * released at r has the deadline r + deadline (default: the period).  A
 * job that finishes after its deadline is a miss.
 *
 * Admission (thread_put and thread_change): refused with -EBUSY when the
 * admitted utilisation sum(budget / period) would exceed util_max times
 * the VPs the ASC may activate, or while the recent miss ratio is above
 * miss_ratio_max.
 *
 * VP activation is driven by the miss ratio over a sliding window of
 * jobs: above miss_ratio_max one more of the ASC's VPs is activated (up
 * to its VP count); below a quarter of it with more than one active, one
 * is given back.  Preemption: each VP ticks every timeslice; the tick
 * yields, and schedule() puts the most urgent job first.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>

#include <asx/asc_policy.h>

/* libasx's own: the registry names it "edf" (asc.c) */
extern const struct asx_asc_policy_ops asx__edf_ops;

#define WINDOW 32

/* A thread's policy slot: its run-queue link, QoS and current job. */
struct eslot {
	struct eslot *next;
	int prio;
	uint64_t period, rel_deadline, budget, nperiods;
	uint64_t release, deadline;	/* current job */
	uint64_t jobs;
};
_Static_assert(sizeof(struct eslot) <= ASX_ASC_POLICY_SLOT_SIZE, "policy slot");

static inline struct eslot *slot(struct asx_asc_thread *t)
{
	return asx_asc_thread_slot(t);
}

struct edf_state {
	struct eslot *head;		/* sorted: priority desc, deadline asc */
	unsigned int count;
	unsigned int active;		/* VPs the activation policy wants running */
	double util;
	uint64_t jobs, misses;		/* totals */
	unsigned int wjobs, wmiss;	/* current window */
	double ratio;			/* miss ratio of the last full window */
};

static int edf_init(struct asx_asc *a, void *st)
{
	struct edf_state *s = st;

	(void)a;
	s->active = 1;
	return 0;
}

static double ratio_now(const struct edf_state *s)
{
	double cur = s->wjobs ? (double)s->wmiss / s->wjobs : 0;

	return s->wjobs >= WINDOW / 2 && cur > s->ratio ? cur : s->ratio;
}

static int edf_admit(struct asx_asc *a, void *st, struct asx_asc_thread *th,
		     const struct asx_qos *q, bool change)
{
	struct edf_state *s = st;
	struct eslot *t = slot(th);
	const struct asx_edf_qos *eq = (const struct asx_edf_qos *)q;
	struct asx_asc_vp_info v;
	uint64_t dl;
	double u, old = 0;

	asx_asc_vp_info(a, &v);
	if (q->size < sizeof(*eq) || !eq->period_ns)
		return -EINVAL;
	dl = eq->deadline_ns ? eq->deadline_ns : eq->period_ns;
	if (eq->budget_ns > dl)
		return -EINVAL;
	u = (double)eq->budget_ns / (double)eq->period_ns;
	if (change && t->period)
		old = (double)t->budget / (double)t->period;
	if (s->util - old + u > v.util_max * (v.target ? v.target : 1) + 1e-9)
		return -EBUSY;
	if (u > old && ratio_now(s) > v.miss_ratio_max)
		return -EBUSY;
	s->util += u - old;
	t->prio = eq->priority;
	t->period = eq->period_ns;
	t->rel_deadline = dl;
	t->budget = eq->budget_ns;
	t->nperiods = eq->nperiods;
	if (!change) {
		t->jobs = 0;
		t->release = asx_now_ns();
	}
	t->deadline = t->release + dl;
	return 0;
}

static void edf_leave(struct asx_asc *a, void *st, struct asx_asc_thread *th,
		      enum asx_asc_leave why)
{
	struct edf_state *s = st;
	struct eslot *t = slot(th);

	(void)a;
	(void)why;
	if (t->period)
		s->util -= (double)t->budget / (double)t->period;
	if (s->util < 1e-12)
		s->util = 0;
	t->period = 0;
}

static inline bool before(const struct eslot *x, const struct eslot *y)
{
	if (x->prio != y->prio)
		return x->prio > y->prio;
	return x->deadline < y->deadline;
}

static void enqueue(struct edf_state *s, struct eslot *t)
{
	struct eslot **pp = &s->head;

	/* after every thread at least as urgent: FIFO among equals */
	while (*pp && !before(t, *pp))
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

static void edf_enqueue(struct asx_asc *a, void *st, struct asx_asc_thread *t)
{
	(void)a;
	enqueue(st, slot(t));
}

static struct asx_asc_thread *edf_pick(struct asx_asc *a, void *st, struct asx_asc_vp *vp,
				       struct asx_asc_thread *cur)
{
	struct edf_state *s = st;
	struct eslot *t;

	(void)a;
	(void)vp;
	if (cur) {
		if (!s->head || !before(s->head, slot(cur)))
			return cur;	/* still the most urgent: keep running */
		enqueue(s, slot(cur));
	}
	t = s->head;
	if (!t)
		return NULL;
	s->head = t->next;
	__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
	return asx_asc_slot_thread(t);
}

static unsigned int edf_nrunnable(struct asx_asc *a, void *st)
{
	(void)a;
	return __atomic_load_n(&((struct edf_state *)st)->count, __ATOMIC_RELAXED);
}

static int edf_activation(struct asx_asc *a, void *st, enum asx_asc_vp_event ev)
{
	struct edf_state *s = st;
	struct asx_asc_vp_info v;
	unsigned int cap;

	asx_asc_vp_info(a, &v);
	cap = v.target ? v.target : 1;
	switch (ev) {
	case ASX_ASC_VPEV_RUNNABLE:
	case ASX_ASC_VPEV_BLOCKED:
		return s->count && v.running < s->active ? 1 : 0;
	case ASX_ASC_VPEV_UNBLOCKED:
		return v.running > s->active ? -1 : 0;
	case ASX_ASC_VPEV_JOB:
		if (ratio_now(s) > v.miss_ratio_max && s->active < cap) {
			s->active++;
			s->wjobs = s->wmiss = 0;	/* judge the new level afresh */
			s->ratio = 0;
			return s->count ? 1 : 0;
		}
		if (s->wjobs == 0 && s->ratio < v.miss_ratio_max / 4 && s->active > 1 &&
		    !s->count) {
			s->active--;
			return v.running > s->active ? -1 : 0;
		}
		return 0;
	case ASX_ASC_VPEV_WINDOW:
		return 0;	/* VPs follow the miss ratio, not the dispatch rate */
	}
	return 0;
}

/* A job of @t ended: account it, set up the next one. */
static uint64_t edf_job_done(struct asx_asc *a, void *st, struct asx_asc_thread *th)
{
	struct edf_state *s = st;
	struct eslot *t = slot(th);
	uint64_t now = asx_now_ns(), next;

	(void)a;
	t->jobs++;
	s->jobs++;
	s->wjobs++;
	if (now > t->deadline) {
		s->misses++;
		s->wmiss++;
	}
	if (s->wjobs >= WINDOW) {
		s->ratio = (double)s->wmiss / s->wjobs;
		s->wjobs = s->wmiss = 0;
	}
	if (t->nperiods && t->jobs >= t->nperiods)
		return 0;
	next = t->release + t->period;
	t->release = next;
	t->deadline = next + t->rel_deadline;
	return next;
}

static uint64_t edf_deadline(struct asx_asc *a, void *st, struct asx_asc_thread *t)
{
	(void)a;
	(void)st;
	return slot(t)->deadline;
}

static void edf_stats(struct asx_asc *a, void *pst, struct asx_asc_stats *st)
{
	struct edf_state *s = pst;

	(void)a;
	st->jobs = s->jobs;
	st->misses = s->misses;
	st->utilisation = s->util;
	st->vps_target = s->active;
}

const struct asx_asc_policy_ops asx__edf_ops = {
	.sz = sizeof(struct asx_asc_policy_ops),
	.name = "edf",
	.schema = ASX_QOS_EDF,
	.semantic = ASX_ASC_PREEMPTIVE,
	.state_size = sizeof(struct edf_state),
	.init = edf_init,
	.admit = edf_admit,
	.leave = edf_leave,
	.enqueue = edf_enqueue,
	.pick_next = edf_pick,
	.nrunnable = edf_nrunnable,
	.activation = edf_activation,
	.job_done = edf_job_done,
	.deadline = edf_deadline,
	.stats = edf_stats,
};
