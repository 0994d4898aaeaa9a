// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_asc_policy.c - the public policy interface (asx/asc_policy.h):
 * registration rules (name clash, unregister while used, built-in ones,
 * size-first ops), a user policy scheduling as it promises (the rr2
 * example, examples/asc-policy/), admission refusal restoring the slot,
 * migration keeping each policy's view of the slot, the block op, and
 * STRIDE's shares.  Uses only public headers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/asc.h>
#include <asx/asc_policy.h>

#include "../../examples/asc-policy/rr2.c"
#include "fifoq.h"

/* ---------------------------------------------------------------- a test policy */

/* FIFO, with a magic word in the slot that leave checks, and counters. */
#define MAGIC 0x5a5a1234u
#define T_SCHEMA (ASX_QOS_USER + 7)

struct tslot {
	struct fifoq_link link;		/* first: the slot is the link */
	uint32_t magic;
	int refuse;
};

struct tstate {
	struct fifoq q;
};

static int n_block, n_leave, n_leave_bad, n_init, n_fini;

static int t_init(struct asx_asc *a, void *st)
{
	(void)a;
	(void)st;
	n_init++;
	return 0;
}

static void t_fini(struct asx_asc *a, void *st)
{
	(void)a;
	(void)st;
	n_fini++;
}

static int t_admit(struct asx_asc *a, void *st, struct asx_asc_thread *t, const struct asx_qos *q,
		   bool change)
{
	struct tslot *s = asx_asc_thread_slot(t);

	(void)a;
	(void)st;
	(void)change;
	(void)q;
	s->magic = MAGIC;
	return 0;
}

static int t_admit_refuse(struct asx_asc *a, void *st, struct asx_asc_thread *t,
			  const struct asx_qos *q, bool change)
{
	memset(asx_asc_thread_slot(t), 0xee, ASX_ASC_POLICY_SLOT_SIZE);	/* scribbles, then refuses */
	(void)a;
	(void)st;
	(void)q;
	(void)change;
	return -EBUSY;
}

static void t_leave(struct asx_asc *a, void *st, struct asx_asc_thread *t, enum asx_asc_leave why)
{
	struct tslot *s = asx_asc_thread_slot(t);

	(void)a;
	(void)st;
	(void)why;
	__atomic_add_fetch(&n_leave, 1, __ATOMIC_RELAXED);
	if (s->magic != MAGIC)
		__atomic_add_fetch(&n_leave_bad, 1, __ATOMIC_RELAXED);
}

static void t_enqueue(struct asx_asc *a, void *st, struct asx_asc_thread *t)
{
	struct tslot *n = asx_asc_thread_slot(t);

	(void)a;
	fifoq_push(&((struct tstate *)st)->q, &n->link);
}

static void t_block(struct asx_asc *a, void *st, struct asx_asc_thread *t)
{
	(void)a;
	(void)st;
	(void)t;
	__atomic_add_fetch(&n_block, 1, __ATOMIC_RELAXED);
}

static struct asx_asc_thread *t_pick(struct asx_asc *a, void *st, struct asx_asc_vp *vp,
				     struct asx_asc_thread *cur)
{
	struct tstate *s = st;
	struct fifoq_link *n;

	(void)vp;
	if (cur) {
		if (!s->q.head)
			return cur;
		t_enqueue(a, st, cur);
	}
	n = fifoq_pop(&s->q);
	return n ? asx_asc_slot_thread(n) : NULL;
}

static unsigned int t_nrunnable(struct asx_asc *a, void *st)
{
	(void)a;
	return fifoq_count(&((struct tstate *)st)->q);
}

static const struct asx_asc_policy_ops t_ops = {
	.sz = sizeof(t_ops),
	.name = "test-fifo",
	.schema = T_SCHEMA,
	.flags = ASX_ASC_POLICY_QOS_OPTIONAL,
	.semantic = ASX_ASC_NONPREEMPTIVE,
	.state_size = sizeof(struct tstate),
	.init = t_init,
	.fini = t_fini,
	.admit = t_admit,
	.leave = t_leave,
	.enqueue = t_enqueue,
	.block = t_block,
	.pick_next = t_pick,
	.nrunnable = t_nrunnable,
};

/* ---------------------------------------------------------------- registration */

static void test_register_rules(void **state)
{
	struct asx_asc_policy_ops o = t_ops;
	struct asx_asc *a = NULL;
	char name[40];

	(void)state;
	assert_int_equal(asx_asc_policy_register(NULL), -EINVAL);
	o.sz = 0;
	assert_int_equal(asx_asc_policy_register(&o), -EINVAL);
	o = t_ops;
	o.pick_next = NULL;
	assert_int_equal(asx_asc_policy_register(&o), -EINVAL);
	o = t_ops;
	o.name = NULL;
	assert_int_equal(asx_asc_policy_register(&o), -EINVAL);
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	o.name = name;
	assert_int_equal(asx_asc_policy_register(&o), -EINVAL);	/* 39 chars */
	o = t_ops;
	o.flags = 0x80;
	assert_int_equal(asx_asc_policy_register(&o), -EINVAL);
	/* built-in names are taken */
	o = t_ops;
	o.name = "prio";
	assert_int_equal(asx_asc_policy_register(&o), -EEXIST);
	o.name = "stride";
	assert_int_equal(asx_asc_policy_register(&o), -EEXIST);

	/* a newer caller's larger struct: refused only if it sets what we do not know */
	struct {
		struct asx_asc_policy_ops ops;
		void *future;
	} big = { .ops = t_ops };
	big.ops.sz = sizeof(big);
	big.ops.name = "test-big";
	big.future = (void *)1;
	assert_int_equal(asx_asc_policy_register(&big.ops), -E2BIG);
	big.future = NULL;
	assert_int_equal(asx_asc_policy_register(&big.ops), 0);
	assert_int_equal(asx_asc_policy_unregister("test-big"), 0);

	/* copied: the caller's struct and name need not outlive the call */
	o = t_ops;
	snprintf(name, sizeof(name), "test-fifo");
	o.name = name;
	assert_int_equal(asx_asc_policy_register(&o), 0);
	assert_int_equal(asx_asc_policy_register(&o), -EEXIST);
	memset(&o, 0, sizeof(o));
	memset(name, 0, sizeof(name));

	assert_int_equal(asx_asc_create_by_name(&a, "no-such", NULL), -ENOENT);
	assert_int_equal(asx_asc_create_by_name(&a, "test-fifo", NULL), 0);
	assert_string_equal(asx_asc_policy_name(a), "test-fifo");
	assert_int_equal(n_init, 1);
	/* in use */
	assert_int_equal(asx_asc_policy_unregister("test-fifo"), -EBUSY);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_int_equal(n_fini, 1);
	assert_int_equal(asx_asc_policy_unregister("test-fifo"), 0);
	assert_int_equal(asx_asc_policy_unregister("test-fifo"), -ENOENT);
	assert_int_equal(asx_asc_policy_unregister("prio"), -EPERM);
	assert_int_equal(asx_asc_policy_unregister("edf"), -EPERM);
	assert_int_equal(asx_asc_policy_unregister(NULL), -EINVAL);
	/* built-in ones by name */
	assert_int_equal(asx_asc_create_by_name(&a, "prio", NULL), 0);
	assert_string_equal(asx_asc_policy_name(a), "prio");
	assert_int_equal(asx_asc_destroy(a), 0);
	/* after unregistering, the name is free again */
	assert_int_equal(asx_asc_policy_register(&t_ops), 0);
	assert_int_equal(asx_asc_policy_unregister("test-fifo"), 0);
}

/* ---------------------------------------------------------------- rr2 */

static char turns[400];
static unsigned int nturns;
static int go;

static void *rr2_worker(void *arg)
{
	char id = *(const char *)arg;

	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		asx_asc_thread_yield();
	while (nturns < sizeof(turns)) {
		turns[nturns++] = id;
		asx_asc_thread_yield();
	}
	return NULL;
}

/* The example's promise: each level round robin, RR2_RATIO foreground
 * turns between background ones (one VP: a deterministic log). */
static void test_rr2_order(void **state)
{
	static const char ids[] = "ABxy";
	struct asx_asc_thread *t[4];
	struct asx_asc *a;
	unsigned int fg = 0, nbg = 0;
	char pf = 0, pb = 0;

	(void)state;
	assert_int_equal(rr2_register(), 0);
	assert_int_equal(asx_asc_create_by_name(&a, RR2_NAME, NULL), 0);
	for (int i = 0; i < 4; i++) {
		struct rr2_qos q = RR2_QOS(i < 2 ? 0 : 1);

		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, rr2_worker, (void *)&ids[i], NULL,
						      &t[i]), 0);
	}
	/* a wrong schema is refused by the runtime, a bad level by the policy */
	struct asx_prio_qos pq = ASX_PRIO_QOS(1);
	struct rr2_qos bad = RR2_QOS(5);
	struct asx_asc_thread *x;

	assert_int_equal(asx_asc_thread_spawn(a, &pq.qos, rr2_worker, "z", NULL, &x), -EINVAL);
	assert_int_equal(asx_asc_thread_spawn(a, &bad.qos, rr2_worker, "z", NULL, &x), -EINVAL);
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	for (unsigned int i = 0; i < sizeof(turns); i++) {
		char c = turns[i];

		if (c == 'A' || c == 'B') {
			assert_int_not_equal(c, pf);
			pf = c;
			fg++;
		} else {
			assert_true(c == 'x' || c == 'y');
			assert_int_not_equal(c, pb);
			if (pb)
				assert_int_equal(fg, RR2_RATIO);
			pb = c;
			fg = 0;
			nbg++;
		}
	}
	assert_true(nbg >= sizeof(turns) / (RR2_RATIO + 1) - 1);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_int_equal(asx_asc_policy_unregister(RR2_NAME), 0);
}

/* ---------------------------------------------------------------- slots */

static void test_admit_refused_restores_slot(void **state)
{
	struct asx_asc_policy_ops o = t_ops;
	unsigned char before[ASX_ASC_POLICY_SLOT_SIZE];
	struct asx_asc_thread *t;
	struct asx_asc *a;

	(void)state;
	o.name = "test-refuse";
	o.admit = t_admit_refuse;
	assert_int_equal(asx_asc_policy_register(&o), 0);
	assert_int_equal(asx_asc_create_by_name(&a, "test-refuse", NULL), 0);
	assert_int_equal(asx_asc_thread_create(&t, rr2_worker, "r", NULL), 0);
	memcpy(before, asx_asc_thread_slot(t), sizeof(before));
	assert_int_equal(asx_asc_thread_put(a, t, NULL), -EBUSY);
	assert_memory_equal(before, asx_asc_thread_slot(t), sizeof(before));
	asx_asc_thread_release(t);
	assert_int_equal(asx_asc_destroy(a), 0);
	assert_int_equal(asx_asc_policy_unregister("test-refuse"), 0);
}

static struct asx_asc *mig_prio;
static int mig_ok;

static void *migrator(void *arg)
{
	struct asx_asc *home = arg;
	struct asx_prio_qos pq = ASX_PRIO_QOS(3);

	for (int i = 0; i < 50; i++) {
		/* to PRIO: our policy's leave must see its own magic */
		if (asx_asc_thread_change(mig_prio, &pq.qos))
			return NULL;
		asx_asc_thread_yield();
		asx_asc_thread_sleep(1000);	/* block: in PRIO, no test-fifo block op */
		if (asx_asc_thread_asc(asx_asc_thread_self()) != mig_prio)
			return NULL;
		/* back: PRIO's admit/leave and ours keep apart */
		if (asx_asc_thread_change(home, NULL))
			return NULL;
		asx_asc_thread_yield();
		asx_asc_thread_sleep(100000);	/* block: our block op */
	}
	__atomic_store_n(&mig_ok, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_migration_slot_views(void **state)
{
	struct asx_asc_thread *t[4];
	struct asx_asc *home;

	(void)state;
	n_leave = n_leave_bad = n_block = 0;
	assert_int_equal(asx_asc_policy_register(&t_ops), 0);
	assert_int_equal(asx_asc_create_by_name(&home, "test-fifo", NULL), 0);
	assert_int_equal(asx_asc_create(&mig_prio, &asx_asc_prio, NULL), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_spawn(home, NULL, migrator, home, NULL, &t[i]), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
	assert_int_equal(mig_ok, 1);
	/* 4 threads x 50 migrations out, plus the 4 ends */
	assert_int_equal(n_leave, 4 * 50 + 4);
	assert_int_equal(n_leave_bad, 0);
	/* a sleep whose deadline passed before it blocked does not block
	 * (it happens under TSan): some did */
	assert_true(n_block > 0);
	assert_int_equal(asx_asc_destroy(home), 0);
	assert_int_equal(asx_asc_destroy(mig_prio), 0);
	assert_int_equal(asx_asc_policy_unregister("test-fifo"), 0);
}

/* ---------------------------------------------------------------- stride */

struct share {
	volatile uint64_t work;
	int blocks;			/* sleeps half the time */
	int *stop;
};

static void *share_worker(void *arg)
{
	struct share *s = arg;
	uint64_t n = 0;

	while (!__atomic_load_n(s->stop, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 2000; i++)
			__asm__ volatile("" ::: "memory");
		s->work = ++n;
		asx_asc_thread_yield();
	}
	return NULL;
}

/* 3 threads at 1:2:4 tickets on one VP: the work each does is in
 * proportion (a loose bound: the host is loaded and shared). */
static void test_stride_shares(void **state)
{
	static const uint32_t tickets[3] = { 1, 2, 4 };
	struct share sh[3] = { 0 };
	struct asx_asc_thread *t[3];
	struct asx_asc *a;
	int stop = 0;
	uint64_t sum = 0;
	double err = 0;

	(void)state;
	assert_int_equal(asx_asc_create(&a, &asx_asc_stride, NULL), 0);
	struct asx_stride_qos bad = ASX_STRIDE_QOS(0);

	assert_int_equal(asx_asc_thread_spawn(a, &bad.qos, share_worker, &sh[0], NULL, &t[0]),
			 -EINVAL);
	for (int i = 0; i < 3; i++) {
		struct asx_stride_qos q = ASX_STRIDE_QOS(tickets[i]);

		sh[i].stop = &stop;
		assert_int_equal(asx_asc_thread_spawn(a, &q.qos, share_worker, &sh[i], NULL, &t[i]),
				 0);
	}
	asx_asc_thread_sleep(400 * 1000 * 1000ULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(asx_asc_thread_join(t[i], NULL), 0);
		sum += sh[i].work;
	}
	assert_true(sum > 0);
	for (int i = 0; i < 3; i++) {
		double want = tickets[i] / 7.0, got = (double)sh[i].work / (double)sum;
		double e = got > want ? (got - want) / want : (want - got) / want;

		if (e > err)
			err = e;
	}
	fprintf(stderr, "stride: work %llu %llu %llu, max relative share error %.3f\n",
		(unsigned long long)sh[0].work, (unsigned long long)sh[1].work,
		(unsigned long long)sh[2].work, err);
	assert_true(err < 0.25);
	assert_int_equal(asx_asc_destroy(a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_register_rules),
		cmocka_unit_test(test_rr2_order),
		cmocka_unit_test(test_admit_refused_restores_slot),
		cmocka_unit_test(test_migration_slot_views),
		cmocka_unit_test(test_stride_shares),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
