// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * preempt.c - preemption of user threads (PREEMPTIVE and TIMESLICED
 * ASCs): a timer per VP sends it PREEMPT_SIG every timeslice, and the
 * handler yields unless the thread is inside the scheduler, in one of the
 * library's own critical sections (np_enter, asx_asc_lib_enter) or in
 * code never preempted (libasx, libc, ld.so, the sanitiser runtimes);
 * the first two take the preemption when they leave.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "asc/sched_impl.h"
#include "core/probes.h"
#include "core/rcudepth.h"

#define PREEMPT_SIG SIGURG

static struct {
	pthread_once_t sig_once;
	/* executable ranges never preempted (libc, ld.so, libasx, runtimes) */
	struct { uintptr_t lo, hi; } nopreempt[16];
	int nnopreempt;
} P = {
	.sig_once = PTHREAD_ONCE_INIT,
};

/* ---------------------------------------------------------------- preemption */

/*
 * libasx's own code: the Makefile renames every code section of its
 * objects asx_text, and the linker brackets that output section with these
 * two symbols, in libasx.so and in a program linked with libasx.a alike
 * (where dl_iterate_phdr cannot tell libasx from the program).  Hidden, so
 * that libasx.so neither exports them nor binds them to another object's;
 * weak, for a build of the sources without the renaming (the fuzz
 * replayers), which then has only the shared-library test below.
 */
extern const char __start_asx_text[] __attribute__((weak, visibility("hidden")));
extern const char __stop_asx_text[] __attribute__((weak, visibility("hidden")));

static bool pc_nopreempt(uintptr_t pc)
{
	for (int i = 0; i < P.nnopreempt; i++)
		if (pc >= P.nopreempt[i].lo && pc < P.nopreempt[i].hi)
			return true;
	return false;
}

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	static const char *const libs[] = {
		"libc.so", "ld-linux", "libpthread", "libasx", "libasan", "libtsan",
		"libubsan", "libgcc_s", "libstdc++", "libm.so", "libcmocka",
	};
	const char *nm = info->dlpi_name;
	bool hit = false;

	(void)size;
	(void)data;
	if (!nm || !*nm)
		return 0;
	for (size_t i = 0; i < ASX_ARRAY_SIZE(libs); i++)
		if (strstr(nm, libs[i]))
			hit = true;
	if (!hit)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    P.nnopreempt >= (int)ASX_ARRAY_SIZE(P.nopreempt))
			continue;
		P.nopreempt[P.nnopreempt].lo = info->dlpi_addr + ph->p_vaddr;
		P.nopreempt[P.nnopreempt].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		P.nnopreempt++;
	}
	return 0;
}

static void preempt_handler(int sig, siginfo_t *si, void *uc_)
{
	struct asx_vp *vp = asx__tls_vp;
	ucontext_t *uc = uc_;
	uintptr_t pc = 0;
	int saved = errno;

	(void)sig;
	(void)si;
	if (!vp || !vp->cur)
		return;
#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
#endif
	if (asx__rcu_in_reader())
		return;	/* a section never spans a switch: the next tick retries */
	if (__atomic_load_n(&vp->in_sched, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&vp->nolib, __ATOMIC_RELAXED) || !pc || pc_nopreempt(pc)) {
		/* the post-critical-section test takes it later, if it can */
		if (!__atomic_load_n(&vp->in_sched, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&vp->nolib, __ATOMIC_RELAXED))
			return;	/* inside libc: the next tick retries */
		__atomic_store_n(&vp->preempt_pending, 1, __ATOMIC_RELAXED);
		return;
	}
	ASX_PROBE1(asc_preempt, vp->cur);
	asx_asc_thread_yield();
	asx__errno_set(saved);
}

void asx__preempt_check(struct asx_vp *vp)
{
	struct asx_asc_thread *cur = vp->cur;

	/*
	 * Not while the thread is on its way to block (->switching set, it
	 * may be on a wait queue or have a wake-up armed): a yield now
	 * would queue it to run while a waker may queue it again.  The
	 * tick stays pending: the next check after it runs again takes it.
	 */
	if (cur && __atomic_load_n(&cur->switching, __ATOMIC_RELAXED))
		return;
	/* nor inside an RCU read-side section (core/rcudepth.h) */
	if (asx__rcu_in_reader())
		return;
	__atomic_store_n(&vp->preempt_pending, 0, __ATOMIC_RELAXED);
	if (cur && !__atomic_load_n(&vp->nolib, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&vp->in_sched, __ATOMIC_RELAXED))
		asx_asc_thread_yield();
}

static void sig_setup(void)
{
	uintptr_t lo = (uintptr_t)__start_asx_text, hi = (uintptr_t)__stop_asx_text;
	struct sigaction sa;

	if (lo && hi > lo) {
		P.nopreempt[0].lo = lo;
		P.nopreempt[0].hi = hi;
		P.nnopreempt = 1;
	}
	dl_iterate_phdr(phdr_cb, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = preempt_handler;
	/*
	 * NODEFER: the handler switches threads and may not return for a
	 * while; the next thread must stay preemptible.  No SA_ONSTACK: the
	 * handler's frame must be on the preempted thread's own stack, which
	 * it keeps while switched out.  An alternate signal stack (the
	 * sanitisers install one per kernel thread) is the VP's, shared by
	 * every thread it runs: the next thread preempted there would
	 * overwrite the frame.
	 */
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(PREEMPT_SIG, &sa, NULL);
}

bool asx__preempt_excluded(const void *pc)
{
	pthread_once(&P.sig_once, sig_setup);
	return pc_nopreempt((uintptr_t)pc);
}

/* Asks @vp to preempt its thread at the next safe point (ASC signals). */
void asx__vp_kick(struct asx_vp *vp)
{
	pid_t tid = __atomic_load_n(&vp->tid, __ATOMIC_RELAXED);

	pthread_once(&P.sig_once, sig_setup);
	if (tid > 0)
		syscall(SYS_tgkill, getpid(), tid, PREEMPT_SIG);
}

void asx__preempt_tick_start(struct asx_vp *vp)
{
	struct sigevent sev;
	struct itimerspec its;
	timer_t tm;

	pthread_once(&P.sig_once, sig_setup);
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = PREEMPT_SIG;
	sev._sigev_un._tid = vp->tid;
	if (timer_create(CLOCK_MONOTONIC, &sev, &tm))
		return;
	its.it_value.tv_sec = (time_t)(vp->asc->timeslice / ASX_NSEC_PER_SEC);
	its.it_value.tv_nsec = (long)(vp->asc->timeslice % ASX_NSEC_PER_SEC);
	its.it_interval = its.it_value;
	timer_settime(tm, 0, &its, NULL);
	vp->tick = tm;
	vp->has_tick = true;
}

void asx_asc_lib_enter(void)
{
	struct asx_vp *vp = asx__tls_vp;

	if (vp)
		__atomic_store_n(&vp->nolib, vp->nolib + 1, __ATOMIC_RELAXED);
}

void asx_asc_lib_leave(void)
{
	struct asx_vp *vp = asx__tls_vp;

	if (!vp)
		return;
	__atomic_store_n(&vp->nolib, vp->nolib - 1, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!vp->nolib && __atomic_load_n(&vp->preempt_pending, __ATOMIC_RELAXED))
		asx__preempt_check(vp);
}
