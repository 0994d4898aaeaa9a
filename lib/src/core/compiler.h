/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* compiler.h - small internal helpers shared by libasx's sources. */
#ifndef ASX_COMPILER_H
#define ASX_COMPILER_H

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define ASX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

/*
 * Atomic loads and stores of a naturally aligned scalar, named by their
 * memory order (the C11 orders of __atomic_*):
 *   ASX_LOAD_RLX / ASX_STORE_RLX  relaxed: no ordering, only no tearing
 *                                 (statistics, hints, a value re-checked
 *                                 under a lock);
 *   ASX_LOAD_ACQ                  acquire: what the releasing thread wrote
 *                                 before its ASX_STORE_REL is visible after;
 *   ASX_STORE_REL                 release: publishes everything written
 *                                 before it to an ASX_LOAD_ACQ of the value.
 */
#define ASX_LOAD_RLX(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define ASX_LOAD_ACQ(p)		__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ASX_STORE_RLX(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ASX_STORE_REL(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

static inline void asx_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* ASX_COMPILER_H */
