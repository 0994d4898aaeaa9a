// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * stack.c - user-thread stacks: mmap'd, a PROT_NONE guard page below,
 * and a bounded pool so creating and ending threads at a high rate does
 * not cost two system calls each time.
 *
 * Layout of one mapping (addresses grow upwards):
 *   [guard page][usable stack ........][struct asx_stack]
 * The descriptor lives in the mapping's top bytes, so a pooled stack
 * costs no separate allocation.
 *
 * Where <valgrind/valgrind.h> exists, each stack is registered with
 * valgrind from mapping to unmapping, so a switch to a user thread is
 * seen as a stack switch, not as a huge frame (no false errors); outside
 * valgrind the request is a few instructions, once per new stack.
 *
 * asc/'s files are layered, lowest first, in the order tools/lib-layers.sh
 * lists (and checks): a file calls only its own and lower files.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "asc/asc_impl.h"
#include "asc/ctx.h"
#include "core/compiler.h"

#ifdef ASX_ASC_ASAN
#include <sanitizer/asan_interface.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define ASX_ASC_VALGRIND 1
#endif
#endif

#define POOL_MAX 256u

static struct {
	int lock;
	unsigned int count;
	struct asx_stack *head;
} pool;

static void pool_lock(void)
{
	np_enter();
	while (__atomic_exchange_n(&pool.lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&pool.lock, __ATOMIC_RELAXED))
			asx_cpu_relax();
}

static void pool_unlock(void)
{
	__atomic_store_n(&pool.lock, 0, __ATOMIC_RELEASE);
	np_leave(true);
}

static size_t page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

static size_t round_size(size_t size)
{
	size_t ps = page_size();

	if (size < 4 * ps)
		size = 4 * ps;
	return (size + ps - 1) & ~(ps - 1);
}

static void unmap(struct asx_stack *s)
{
	size_t ps = page_size();

#ifdef ASX_ASC_VALGRIND
	VALGRIND_STACK_DEREGISTER(s->vg_id);
#endif
	munmap((char *)s->lo - ps, s->size + ps);
}

struct asx_stack *asx__stack_get(size_t size)
{
	size_t ps = page_size();
	struct asx_stack *s, **pp;
	char *base;

	size = round_size(size);
	pool_lock();
	for (pp = &pool.head; (s = *pp); pp = &s->next) {
		if (s->size == size - ps) {
			*pp = s->next;
			pool.count--;
			break;
		}
	}
	pool_unlock();
	if (s) {
#ifdef ASX_ASC_ASAN
		/* a thread that ended by switching away left its frames poisoned */
		__asan_unpoison_memory_region(s->lo, s->size);
#endif
		return s;
	}
	/* one extra page for the guard; the descriptor takes the top of the stack */
	base = mmap(NULL, size + ps, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mprotect(base, ps, PROT_NONE)) {
		int e = errno;

		munmap(base, size + ps);
		errno = e;
		return NULL;
	}
	s = (struct asx_stack *)(base + ps + size - ps);
	s->lo = base + ps;
	s->size = size - ps;	/* the descriptor's page is not handed out */
	s->next = NULL;
	s->vg_id = 0;
#ifdef ASX_ASC_VALGRIND
	s->vg_id = VALGRIND_STACK_REGISTER(s->lo, (char *)s->lo + s->size);
#endif
	return s;
}

void asx__stack_put(struct asx_stack *s)
{
	if (!s)
		return;
	pool_lock();
	if (pool.count < POOL_MAX) {
		s->next = pool.head;
		pool.head = s;
		pool.count++;
		s = NULL;
	}
	pool_unlock();
	if (s)
		unmap(s);
}

void asx__stack_pool_drain(void)
{
	struct asx_stack *s, *n;

	pool_lock();
	s = pool.head;
	pool.head = NULL;
	pool.count = 0;
	pool_unlock();
	for (; s; s = n) {
		n = s->next;
		unmap(s);
	}
}

unsigned int asx__stack_pool_count(void)
{
	return __atomic_load_n(&pool.count, __ATOMIC_RELAXED);
}
