/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * rcudepth.h - how deep the calling thread is in libasx's RCU read-side
 * sections (stream/rcu.h keeps it), below every component that must know:
 * the wait primitive (asc/wait.c) never parks a user thread inside one,
 * since liburcu's reader state belongs to the kernel thread.
 */
#ifndef ASX_CORE_RCUDEPTH_H
#define ASX_CORE_RCUDEPTH_H

#include <stdbool.h>

/*
 * -1: not registered with liburcu yet.  initial-exec, as asx__tls_vp: every
 * yield reads it, and the default model for a shared object's TLS
 * (general-dynamic) would make that read a call of __tls_get_addr.
 */
extern __thread int asx__rcu_depth __attribute__((tls_model("initial-exec")));

static inline bool asx__rcu_in_reader(void)
{
	return asx__rcu_depth > 0;
}

/*
 * The rule "no wait starts inside a read-side section, and no section
 * spans a user thread's switch" (Documentation/architecture.rst): a queue
 * wait or a user thread's yield calls asx__rcu_check_wait() first.  Inside
 * a section that is a bug of the caller: the debug build (ASX_DEBUG: every
 * SAN= tree, or DEBUG=1) says what and aborts; the plain build counts it in
 * asx__rcu_wait_faults (a USDT probe too) and goes on as before (the wait
 * blocks the VP; the yield does not switch).
 */
extern unsigned long asx__rcu_wait_faults;
void asx__rcu_wait_fault(const char *what);

static inline void asx__rcu_check_wait(const char *what)
{
	if (__builtin_expect(asx__rcu_depth > 0, 0))
		asx__rcu_wait_fault(what);
}

#endif /* ASX_CORE_RCUDEPTH_H */
