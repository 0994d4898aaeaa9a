// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * signal.c - ASC signals (asx/asc.h; 004 section 3.4's extensible signal
 * framework): signal types registered by name, a pending mask and a
 * handler table per user thread, handled in the thread at its next
 * scheduling point (sched.c's asx__run_utimers(), behind the same bit of
 * utimer_pending that thread timers use, so the hot path tests one word),
 * and ASX_ASC_SIG_PREEMPT, which asks the VP running a thread to preempt
 * it at its next safe point (preempt.c's tick signal, sent to that VP).
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "asc/sched_impl.h"

static struct {
	pthread_mutex_t lock;		/* registration */
	uint32_t used;			/* atomic: registered ids */
	char names[ASX_ASC_SIGNALS_MAX][ASX_ASC_SIGNAL_NAME_MAX];
} S = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.used = 1u << ASX_ASC_SIG_PREEMPT,
	.names = { [ASX_ASC_SIG_PREEMPT] = "preempt" },
};

int asx_asc_signal_register(const char *name)
{
	int id = -ENOSPC;
	size_t len;

	if (!name)
		return -EINVAL;
	len = strlen(name);
	if (!len || len >= ASX_ASC_SIGNAL_NAME_MAX)
		return -EINVAL;
	pthread_mutex_lock(&S.lock);
	for (int i = 0; i < ASX_ASC_SIGNALS_MAX; i++)
		if ((S.used & (1u << i)) && !strcmp(S.names[i], name)) {
			id = -EEXIST;
			goto out;
		}
	for (int i = 1; i < ASX_ASC_SIGNALS_MAX; i++)
		if (!(S.used & (1u << i))) {
			memcpy(S.names[i], name, len + 1);
			__atomic_or_fetch(&S.used, 1u << i, __ATOMIC_RELEASE);
			id = i;
			break;
		}
out:
	pthread_mutex_unlock(&S.lock);
	return id;
}

static bool sig_known(int sig)
{
	return sig >= 0 && sig < ASX_ASC_SIGNALS_MAX &&
	       (__atomic_load_n(&S.used, __ATOMIC_ACQUIRE) & (1u << sig));
}

int asx_asc_signal_handle(int sig, asx_asc_signal_fn fn, void *arg)
{
	struct asx_asc_thread *self = asx__self();

	if (!self)
		return -EPERM;
	if (!sig_known(sig) || sig == ASX_ASC_SIG_PREEMPT)
		return -EINVAL;
	if (!self->sigs) {
		if (!fn)
			return 0;
		self->sigs = calloc(1, sizeof(*self->sigs));
		if (!self->sigs)
			return -ENOMEM;
	}
	self->sigs->fn[sig] = fn;
	self->sigs->arg[sig] = arg;
	return 0;
}

int asx_asc_signal(struct asx_asc_thread *t, int sig)
{
	struct asx_vp *vp;

	if (!t || !sig_known(sig))
		return -EINVAL;
	if (sig != ASX_ASC_SIG_PREEMPT) {
		__atomic_or_fetch(&t->sig_pending, 1u << sig, __ATOMIC_RELEASE);
		__atomic_or_fetch(&t->utimer_pending, ASX__UTIMER_SIGS, __ATOMIC_RELEASE);
	}
	if (t == asx__self())
		return 0;	/* handled at our own next scheduling point */
	/*
	 * Racy by design: @t may move to another VP, or stop running, while
	 * we look.  The VP it left then takes a preemption check that finds
	 * another thread or none (a yield at a safe point, as on a tick).
	 */
	if (__atomic_load_n(&t->state, __ATOMIC_RELAXED) != T_RUNNING)
		return 0;
	vp = __atomic_load_n(&t->vp, __ATOMIC_RELAXED);
	if (vp)
		asx__vp_kick(vp);
	return 0;
}

void asx__sigs_exit(struct asx_asc_thread *self)
{
	free(self->sigs);
	self->sigs = NULL;
}
