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
 * aarch64: the same design with AAPCS64's callee-saved state: x19-x28,
 * the frame pointer x29 and the link register x30, the low halves d8-d15
 * of v8-v15, and FPCR (its rounding and trap controls: written back only
 * when they differ, since a write of FPCR may stall the pipeline).  The
 * third argument comes out in x0; a fresh context "returns" through x30
 * into the trampoline with the entry in x19 and its parameter in x20.
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
 * The hand-written switches (one per architecture below) share this
 * interface: asx__ctx_swap() saves the callee-saved state on the running
 * stack, stores the stack pointer at *@save_sp, resumes the frame at
 * @load_sp and returns @arg there; a new context's first frame "returns"
 * into asx__ctx_tramp().
 */
void *asx__ctx_swap(void **save_sp, void *load_sp, void *arg);
void asx__ctx_tramp(void);

/* A new context's zeroed first frame, @frame bytes at its stack's 16-byte aligned top. */
static void *ctx_first_frame(struct asx_ctx *c, void *stack_lo, size_t size, size_t frame)
{
	uintptr_t top = ((uintptr_t)stack_lo + size) & ~(uintptr_t)15;
	void *f = (void *)(top - frame);

	memset(f, 0, frame);
	c->sp = f;
	ctx_init_common(c, stack_lo, size);
	return f;
}

static inline void *raw_switch(struct asx_ctx *from, struct asx_ctx *to, void *arg)
{
	return asx__ctx_swap(&from->sp, to->sp, arg);
}
#endif

#if !defined(ASX_ASC_UCONTEXT) && defined(__x86_64__)
/*
 * void *asx__ctx_swap(void **save_sp, void *load_sp, void *arg)
 *
 * Frame saved at *save_sp (low to high): MXCSR (4 bytes), x87 CW (2, +2
 * pad), r15, r14, r13, r12, rbx, rbp, return address.
 */

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
	struct init_frame *f = ctx_first_frame(c, stack_lo, size, sizeof(*f));

	_Static_assert(sizeof(struct init_frame) % 16 == 0, "frame keeps alignment");
	__asm__ __volatile__("stmxcsr %0" : "=m"(f->mxcsr));
	__asm__ __volatile__("fnstcw %0" : "=m"(f->fpucw));
	f->r12 = (uint64_t)(uintptr_t)entry;
	f->r13 = (uint64_t)(uintptr_t)param;
	f->ret = (uint64_t)(uintptr_t)asx__ctx_tramp;
}

#elif !defined(ASX_ASC_UCONTEXT) && defined(__aarch64__)
/*
 * void *asx__ctx_swap(void **save_sp, void *load_sp, void *arg)
 *
 * Frame saved at *save_sp (low to high, 176 bytes, sp 16-byte aligned):
 * x19..x28, x29, x30 (the return address), d8..d15, FPCR, pad.
 */

__asm__(
	".text\n"
	".globl asx__ctx_swap\n"
	".hidden asx__ctx_swap\n"
	".type asx__ctx_swap,%function\n"
	".p2align 4\n"
	"asx__ctx_swap:\n"
	"	.cfi_startproc\n"
	"	sub sp, sp, #176\n"
	"	.cfi_adjust_cfa_offset 176\n"
	"	stp x19, x20, [sp, #0]\n"
	"	stp x21, x22, [sp, #16]\n"
	"	stp x23, x24, [sp, #32]\n"
	"	stp x25, x26, [sp, #48]\n"
	"	stp x27, x28, [sp, #64]\n"
	"	stp x29, x30, [sp, #80]\n"
	"	stp d8, d9, [sp, #96]\n"
	"	stp d10, d11, [sp, #112]\n"
	"	stp d12, d13, [sp, #128]\n"
	"	stp d14, d15, [sp, #144]\n"
	"	mrs x9, fpcr\n"
	"	str x9, [sp, #160]\n"
	"	mov x10, sp\n"
	"	str x10, [x0]\n"
	"	mov sp, x1\n"
	"	ldr x10, [sp, #160]\n"
	"	cmp x9, x10\n"
	"	b.eq 1f\n"
	"	msr fpcr, x10\n"
	"1:\n"
	"	ldp x19, x20, [sp, #0]\n"
	"	ldp x21, x22, [sp, #16]\n"
	"	ldp x23, x24, [sp, #32]\n"
	"	ldp x25, x26, [sp, #48]\n"
	"	ldp x27, x28, [sp, #64]\n"
	"	ldp x29, x30, [sp, #80]\n"
	"	ldp d8, d9, [sp, #96]\n"
	"	ldp d10, d11, [sp, #112]\n"
	"	ldp d12, d13, [sp, #128]\n"
	"	ldp d14, d15, [sp, #144]\n"
	"	add sp, sp, #176\n"
	"	.cfi_adjust_cfa_offset -176\n"
	"	mov x0, x2\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size asx__ctx_swap, .-asx__ctx_swap\n"

	/* entered by the ret above: x0 = the transferred value, x19 = entry,
	 * x20 = param, x29 = 0 (the end of the frame chain) */
	".globl asx__ctx_tramp\n"
	".hidden asx__ctx_tramp\n"
	".type asx__ctx_tramp,%function\n"
	".p2align 4\n"
	"asx__ctx_tramp:\n"
	"	.cfi_startproc\n"
	"	.cfi_undefined x30\n"
	"	mov x1, x20\n"
	"	blr x19\n"
	"	brk #0\n"
	"	.cfi_endproc\n"
	".size asx__ctx_tramp, .-asx__ctx_tramp\n");

struct init_frame {
	uint64_t x19, x20, x21_28[8], x29, x30;
	uint64_t d8_15[8];
	uint64_t fpcr, pad;
};

void asx__ctx_make(struct asx_ctx *c, void *stack_lo, size_t size,
		   void (*entry)(void *, void *), void *param)
{
	struct init_frame *f = ctx_first_frame(c, stack_lo, size, sizeof(*f));
	uint64_t fpcr;

	_Static_assert(sizeof(struct init_frame) == 176, "the frame asx__ctx_swap pops");
	__asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
	f->fpcr = fpcr;
	f->x19 = (uint64_t)(uintptr_t)entry;
	f->x20 = (uint64_t)(uintptr_t)param;
	f->x30 = (uint64_t)(uintptr_t)asx__ctx_tramp;
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
