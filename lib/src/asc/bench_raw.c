// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_raw.c - the floor of a user-level switch: two contexts switching
 * to each other from one call site, with no scheduler in between
 * (asx_asc_raw_switch_ns(), <asx/asc.h>; asx-bench asc-yield's
 * raw_switch_ns).
 */
#include <errno.h>
#include <stddef.h>

#include <asx/asc.h>
#include "asc/ctx.h"

struct raw_bench {
	struct asx_ctx main, other;
	unsigned long n;
};

/* Both sides switch from this one call site, as two threads yielding do. */
static __attribute__((noinline)) void raw_loop(struct asx_ctx *me, struct asx_ctx *peer,
						unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		asx__ctx_switch(me, peer, NULL);
}

static void raw_entry(void *xfer, void *param)
{
	struct raw_bench *b = param;

	(void)xfer;
	asx__ctx_started();
	raw_loop(&b->other, &b->main, b->n);
	for (;;)
		asx__ctx_switch(&b->other, &b->main, NULL);
}

int asx_asc_raw_switch_ns(unsigned long n, double *ns)
{
	struct raw_bench b;
	struct asx_stack *s;
	uint64_t t0, t1;

	if (!n || !ns)
		return -EINVAL;
	s = asx__stack_get(64 * 1024);
	if (!s)
		return -ENOMEM;
	b.n = n;
	asx__ctx_init_self(&b.main);
	asx__ctx_make(&b.other, s->lo, s->size, raw_entry, &b);
	asx__ctx_switch(&b.main, &b.other, NULL);	/* start it: it switches straight back */
	t0 = asx_now_ns();
	raw_loop(&b.main, &b.other, n);
	t1 = asx_now_ns();
	asx__ctx_switch(&b.main, &b.other, NULL);	/* let it leave its loop */
	asx__ctx_release(&b.other);
	asx__stack_put(s);
	/* n round trips, two switches each */
	*ns = (double)(t1 - t0) / (2.0 * (double)n);
	return 0;
}
