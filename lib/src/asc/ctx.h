/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * ctx.h - execution contexts for the ASC scheduler: the machine-level
 * context switch and the stacks user threads run on.
 *
 * A context is a saved stack pointer (x86-64: the callee-saved registers,
 * MXCSR and the x87 control word are pushed on the context's own stack
 * before the switch; aarch64: x19-x30, d8-d15 and FPCR) or, on other
 * architectures or built with -DASX_ASC_UCONTEXT, a ucontext_t.
 *
 * asx__ctx_switch(from, to, arg) saves the running context into @from,
 * resumes @to, and returns (in @from, once something switches back to it)
 * the @arg passed by that later switch.  A context made by asx__ctx_make()
 * starts in @entry(arg_of_first_switch, @param) and must never return.
 *
 * Sanitizers: under ASan every switch is bracketed by
 * __sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber; under
 * TSan each context is a TSan fiber and the switch calls
 * __tsan_switch_to_fiber.  asx__ctx_switch() does both; a context's first
 * run calls asx__ctx_started() itself (the trampoline does).
 */
#ifndef ASX_ASC_CTX_H
#define ASX_ASC_CTX_H

#include <stddef.h>
#include <stdint.h>

/* a hand-written switch on x86-64 and aarch64 (switch.c), ucontext elsewhere */
#if !defined(__x86_64__) && !defined(__aarch64__) && !defined(ASX_ASC_UCONTEXT)
#define ASX_ASC_UCONTEXT 1
#endif

#ifdef ASX_ASC_UCONTEXT
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define ASX_ASC_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define ASX_ASC_TSAN 1
#endif

struct asx_ctx {
#ifdef ASX_ASC_UCONTEXT
	ucontext_t uc;
	void *xfer;			/* @arg of the switch that resumed us */
	void (*entry)(void *, void *);
	void *param;
#else
	void *sp;			/* saved stack pointer */
#endif
	/* the stack the context runs on (for the sanitizers) */
	void *stack_lo;
	size_t stack_size;
#ifdef ASX_ASC_ASAN
	void *fake_stack;
#endif
#ifdef ASX_ASC_TSAN
	void *fiber;
	int own_fiber;			/* created by us: destroy with the context */
#endif
};

/* Describe the running pthread's own context (a VP's scheduler loop). */
void asx__ctx_init_self(struct asx_ctx *c);

/* A new context on [@stack_lo, @stack_lo + @size) that starts in @entry. */
void asx__ctx_make(struct asx_ctx *c, void *stack_lo, size_t size,
		   void (*entry)(void *xfer, void *param), void *param);

/* First call in a new context's entry function (sanitizer bookkeeping). */
void asx__ctx_started(void);

/* Release sanitizer state of a context that will never run again. */
void asx__ctx_release(struct asx_ctx *c);

/* Switch from the running context (saved into @from) to @to. */
void *asx__ctx_switch(struct asx_ctx *from, struct asx_ctx *to, void *arg);

/* The last switch away from a context that ends: its state is discarded. */
__attribute__((noreturn))
void asx__ctx_exit_to(struct asx_ctx *from, struct asx_ctx *to, void *arg);

/* ---------------------------------------------------------------- stacks */

struct asx_stack {
	void *lo;		/* lowest usable byte (just above the guard page) */
	size_t size;		/* usable bytes */
	struct asx_stack *next;	/* pool link */
	unsigned int vg_id;	/* valgrind's id for it (stack.c) */
};

/*
 * A stack of at least @size usable bytes with a PROT_NONE guard page
 * below it, from the pool when one of that size is cached.  NULL on
 * failure (errno from mmap).
 */
struct asx_stack *asx__stack_get(size_t size);
/* Back to the pool (bounded), or unmapped. */
void asx__stack_put(struct asx_stack *s);
/* Unmap every cached stack (tests, to check for leaks). */
void asx__stack_pool_drain(void);
/* Number of stacks currently cached. */
unsigned int asx__stack_pool_count(void);

#endif /* ASX_ASC_CTX_H */
