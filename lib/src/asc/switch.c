// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * switch.c - the context switch of the ASC scheduler.
 *
 * x86-64 (the default): asx__ctx_swap() pushes the System V callee-saved
 * registers (rbp, rbx, r12-r15) and the floating-point control state
 * (MXCSR, x87 control word: both callee-saved by the ABI) onto the
 * running stack, stores the stack pointer, loads the other one and pops
 * the same frame in reverse.  A third argument travels in rdx and comes
 * out as the return value in the resumed context, so whoever resumes a
 * context can tell it what happened meanwhile (the scheduler passes the
 * thread it switched away from).
 *
 * A fresh context gets a frame that "returns" into asx__ctx_tramp, which
 * moves the transferred value and the entry parameter into the argument
 * registers and calls the entry function on a 16-byte aligned stack.
 *
 * Anything else, or -DASX_ASC_UCONTEXT: getcontext/makecontext/
 * swapcontext (portable, about ten times slower: swapcontext changes
 * the signal mask with a system call every time).
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "asc/asc_impl.h"
#include "asc/ctx.h"
#include "core/compiler.h"

/*
 * The VP the calling pthread runs as (NULL: none).  Defined here, in the
 * lowest file of asc/, because every file above reads it.
 */
__thread struct asx_vp *asx__tls_vp TLS_IE;

#if !defined(__x86_64__) && !defined(ASX_ASC_UCONTEXT)
#define ASX_ASC_UCONTEXT 1
#endif

#ifdef ASX_ASC_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#ifdef ASX_ASC_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/* What both switch implementations record about a new context. */
static void ctx_init_common(struct asx_ctx *c, void *stack_lo, size_t size)
{
	c->stack_lo = stack_lo;
	c->stack_size = size;
#ifdef ASX_ASC_ASAN
	c->fake_stack = NULL;
#endif
#ifdef ASX_ASC_TSAN
	c->fiber = __tsan_create_fiber(0);
	c->own_fiber = 1;
#endif
}

#ifndef ASX_ASC_UCONTEXT
/*
 * void *asx__ctx_swap(void **save_sp, void *load_sp, void *arg)
 *
 * Frame saved at *save_sp (low to high): MXCSR (4 bytes), x87 CW (2, +2
 * pad), r15, r14, r13, r12, rbx, rbp, return address.
 */
void *asx__ctx_swap(void **save_sp, void *load_sp, void *arg);
void asx__ctx_tramp(void);

__asm__(
	".text\n"
	".globl asx__ctx_swap\n"
	".hidden asx__ctx_swap\n"
	".type asx__ctx_swap,@function\n"
	".p2align 4\n"
	"asx__ctx_swap:\n"
	"	.cfi_startproc\n"
	"	pushq %rbp\n"
	"	pushq %rbx\n"
	"	pushq %r12\n"
	"	pushq %r13\n"
	"	pushq %r14\n"
	"	pushq %r15\n"
	"	subq $8, %rsp\n"
	"	stmxcsr (%rsp)\n"
	"	fnstcw 4(%rsp)\n"
	"	movq %rsp, (%rdi)\n"
	"	movq %rsi, %rsp\n"
	"	ldmxcsr (%rsp)\n"
	"	fldcw 4(%rsp)\n"
	"	addq $8, %rsp\n"
	"	popq %r15\n"
	"	popq %r14\n"
	"	popq %r13\n"
	"	popq %r12\n"
	"	popq %rbx\n"
	"	popq %rbp\n"
	"	movq %rdx, %rax\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size asx__ctx_swap, .-asx__ctx_swap\n"

	/* entered by the ret above with rsp 16-byte aligned; r12 = entry, r13 = param */
	".globl asx__ctx_tramp\n"
	".hidden asx__ctx_tramp\n"
	".type asx__ctx_tramp,@function\n"
	".p2align 4\n"
	"asx__ctx_tramp:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined rip\n"
	"	movq %rax, %rdi\n"
	"	movq %r13, %rsi\n"
	"	xorl %ebp, %ebp\n"
	"	callq *%r12\n"
	"	ud2\n"
	"	.cfi_endproc\n"
	".size asx__ctx_tramp, .-asx__ctx_tramp\n");

struct init_frame {
	uint32_t mxcsr;
	uint16_t fpucw;
	uint16_t pad;
	uint64_t r15, r14, r13, r12, rbx, rbp;
	uint64_t ret;		/* -> asx__ctx_tramp */
	uint64_t align[2];	/* rsp % 16 == 0 in the trampoline: f + 64 */
};

void asx__ctx_make(struct asx_ctx *c, void *stack_lo, size_t size,
		   void (*entry)(void *, void *), void *param)
{
	uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
	struct init_frame *f = (struct init_frame *)(top - sizeof(*f));

	_Static_assert(sizeof(struct init_frame) % 16 == 0, "frame keeps alignment");
	memset(f, 0, sizeof(*f));
	__asm__ __volatile__("stmxcsr %0" : "=m"(f->mxcsr));
	__asm__ __volatile__("fnstcw %0" : "=m"(f->fpucw));
	f->r12 = (uint64_t)(uintptr_t)entry;
	f->r13 = (uint64_t)(uintptr_t)param;
	f->ret = (uint64_t)(uintptr_t)asx__ctx_tramp;
	c->sp = f;
	ctx_init_common(c, stack_lo, size);
}

static inline void *raw_switch(struct asx_ctx *from, struct asx_ctx *to, void *arg)
{
	return asx__ctx_swap(&from->sp, to->sp, arg);
}

#else /* ASX_ASC_UCONTEXT */

static void uc_tramp(unsigned int hi, unsigned int lo)
{
	struct asx_ctx *c = (struct asx_ctx *)(((uintptr_t)hi << 32) | (uintptr_t)lo);

	c->entry(c->xfer, c->param);
	__builtin_trap();
}

void asx__ctx_make(struct asx_ctx *c, void *stack_lo, size_t size,
		   void (*entry)(void *, void *), void *param)
{
	uintptr_t p = (uintptr_t)c;

	getcontext(&c->uc);
	c->uc.uc_stack.ss_sp = stack_lo;
	c->uc.uc_stack.ss_size = size;
	c->uc.uc_link = NULL;
	c->entry = entry;
	c->param = param;
	c->xfer = NULL;
	makecontext(&c->uc, (void (*)(void))uc_tramp, 2,
		    (unsigned int)(p >> 32), (unsigned int)(p & 0xffffffffu));
	ctx_init_common(c, stack_lo, size);
}

static inline void *raw_switch(struct asx_ctx *from, struct asx_ctx *to, void *arg)
{
	to->xfer = arg;
	swapcontext(&from->uc, &to->uc);
	return from->xfer;
}
#endif /* ASX_ASC_UCONTEXT */

void asx__ctx_init_self(struct asx_ctx *c)
{
	pthread_attr_t a;
	void *lo = NULL;
	size_t sz = 0;

	memset(c, 0, sizeof(*c));
	if (!pthread_getattr_np(pthread_self(), &a)) {
		pthread_attr_getstack(&a, &lo, &sz);
		pthread_attr_destroy(&a);
	}
	c->stack_lo = lo;
	c->stack_size = sz;
#ifdef ASX_ASC_TSAN
	c->fiber = __tsan_get_current_fiber();
	c->own_fiber = 0;
#endif
}

void asx__ctx_release(struct asx_ctx *c)
{
#ifdef ASX_ASC_TSAN
	if (c->own_fiber && c->fiber)
		__tsan_destroy_fiber(c->fiber);
	c->fiber = NULL;
#endif
	(void)c;
}

void *asx__ctx_switch(struct asx_ctx *from, struct asx_ctx *to, void *arg)
{
	void *r;

#ifdef ASX_ASC_ASAN
	__sanitizer_start_switch_fiber(&from->fake_stack, to->stack_lo, to->stack_size);
#endif
#ifdef ASX_ASC_TSAN
	__tsan_switch_to_fiber(to->fiber, 0);
#endif
	r = raw_switch(from, to, arg);
#ifdef ASX_ASC_ASAN
	__sanitizer_finish_switch_fiber(from->fake_stack, NULL, NULL);
#endif
	return r;
}

void asx__ctx_exit_to(struct asx_ctx *from, struct asx_ctx *to, void *arg)
{
#ifdef ASX_ASC_ASAN
	/* NULL: this stack's fake frames are dropped, it never resumes */
	__sanitizer_start_switch_fiber(NULL, to->stack_lo, to->stack_size);
#endif
#ifdef ASX_ASC_TSAN
	__tsan_switch_to_fiber(to->fiber, 0);
#endif
	raw_switch(from, to, arg);
	__builtin_trap();
}

void asx__ctx_started(void)
{
#ifdef ASX_ASC_ASAN
	__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif
}
