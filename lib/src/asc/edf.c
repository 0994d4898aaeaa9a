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

#include "asc/asc_impl.h"

#define WINDOW 32

struct edf_state {
	struct asx_asc_thread *head;	/* sorted: priority desc, deadline asc */
	unsigned int count;
	unsigned int active;		/* VPs the activation policy wants running */
	double util;
	uint64_t jobs, misses;		/* totals */
	unsigned int wjobs, wmiss;	/* current window */
	double ratio;			/* miss ratio of the last full window */
};

static int edf_init(struct asx_asc *a)
{
	struct edf_state *s = a->pstate;

	s->active = 1;
	return 0;
}

static double ratio_now(const struct edf_state *s)
{
	double cur = s->wjobs ? (double)s->wmiss / s->wjobs : 0;

	return s->wjobs >= WINDOW / 2 && cur > s->ratio ? cur : s->ratio;
}

static int edf_admit(struct asx_asc *a, struct asx_asc_thread *t, const struct asx_qos *q,
		     bool change)
{
	struct edf_state *s = a->pstate;
	const struct asx_edf_qos *eq = (const struct asx_edf_qos *)q;
	uint64_t dl;
	double u, old = 0;

	if (q->size < sizeof(*eq) || !eq->period_ns)
		return -EINVAL;
	dl = eq->deadline_ns ? eq->deadline_ns : eq->period_ns;
	if (eq->budget_ns > dl)
		return -EINVAL;
	u = (double)eq->budget_ns / (double)eq->period_ns;
	if (change && t->period)
		old = (double)t->budget / (double)t->period;
	if (s->util - old + u > a->util_max * (a->target ? a->target : 1) + 1e-9)
		return -EBUSY;
	if (u > old && ratio_now(s) > a->miss_ratio_max)
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

static void edf_leave(struct asx_asc *a, struct asx_asc_thread *t)
{
	struct edf_state *s = a->pstate;

	if (t->period)
		s->util -= (double)t->budget / (double)t->period;
	if (s->util < 1e-12)
		s->util = 0;
	t->period = 0;
}

static inline bool before(const struct asx_asc_thread *x, const struct asx_asc_thread *y)
{
	if (x->prio != y->prio)
		return x->prio > y->prio;
	return x->deadline < y->deadline;
}

static void edf_enqueue(struct asx_asc *a, struct asx_asc_thread *t)
{
	struct edf_state *s = a->pstate;
	struct asx_asc_thread **pp = &s->head;

	/* after every thread at least as urgent: FIFO among equals */
	while (*pp && !before(t, *pp))
		pp = &(*pp)->rq_next;
	t->rq_next = *pp;
	*pp = t;
	__atomic_store_n(&s->count, s->count + 1, __ATOMIC_RELAXED);
}

static struct asx_asc_thread *edf_schedule(struct asx_asc *a, struct asx_vp *vp,
				       struct asx_asc_thread *old)
{
	struct edf_state *s = a->pstate;
	struct asx_asc_thread *t;

	(void)vp;
	if (old) {
		if (!s->head || !before(s->head, old))
			return old;	/* still the most urgent: keep running */
		edf_enqueue(a, old);
	}
	t = s->head;
	if (t) {
		s->head = t->rq_next;
		__atomic_store_n(&s->count, s->count - 1, __ATOMIC_RELAXED);
	}
	return t;
}

static unsigned int edf_nrunnable(struct asx_asc *a)
{
	return __atomic_load_n(&((struct edf_state *)a->pstate)->count, __ATOMIC_RELAXED);
}

static int edf_activation(struct asx_asc *a, enum vp_event ev)
{
	struct edf_state *s = a->pstate;
	unsigned int cap = a->target ? a->target : 1;

	switch (ev) {
	case VPEV_RUNNABLE:
	case VPEV_BLOCKED:
		return s->count && asc_running(a) < s->active ? 1 : 0;
	case VPEV_UNBLOCKED:
		return asc_running(a) > s->active ? -1 : 0;
	case VPEV_JOB:
		if (ratio_now(s) > a->miss_ratio_max && s->active < cap) {
			s->active++;
			s->wjobs = s->wmiss = 0;	/* judge the new level afresh */
			s->ratio = 0;
			return s->count ? 1 : 0;
		}
		if (s->wjobs == 0 && s->ratio < a->miss_ratio_max / 4 && s->active > 1 &&
		    !s->count) {
			s->active--;
			return asc_running(a) > s->active ? -1 : 0;
		}
		return 0;
	case VPEV_WINDOW:
		return 0;	/* VPs follow the miss ratio, not the dispatch rate */
	}
	return 0;
}

/* A job of @t ended: account it, set up the next one. */
static uint64_t edf_job_done(struct asx_asc *a, struct asx_asc_thread *t)
{
	struct edf_state *s = a->pstate;
	uint64_t now = asx_now_ns(), next;

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

static bool edf_more_urgent(const struct asx_asc_thread *x, const struct asx_asc_thread *y)
{
	return before(x, y);
}

static void edf_stats(struct asx_asc *a, struct asx_asc_stats *st)
{
	struct edf_state *s = a->pstate;

	st->jobs = s->jobs;
	st->misses = s->misses;
	st->utilisation = s->util;
	st->vps_target = s->active;
}

const struct asx_asc_policy asx_asc_edf = {
	.name = "edf",
	.schema = ASX_QOS_EDF,
	.semantic = ASX_ASC_PREEMPTIVE,
	.state_size = sizeof(struct edf_state),
	.init = edf_init,
	.admit = edf_admit,
	.leave = edf_leave,
	.enqueue = edf_enqueue,
	.schedule = edf_schedule,
	.nrunnable = edf_nrunnable,
	.activation = edf_activation,
	.job_done = edf_job_done,
	.more_urgent = edf_more_urgent,
	.stats = edf_stats,
};
