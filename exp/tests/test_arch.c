// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_arch.c - the threading architectures of exp/arch/arch.c
 * (the study's runner, outside libasx): Layer, Connectional, Message and
 * Functional Parallelism (and LP with several threads per layer), each on
 * pthreads and on ASC user threads, over TCP-lite and UDP-lite, with and
 * without the XDR presentation layer.
 *
 * Every run verifies at the app: every message sent arrives exactly once,
 * byte for byte (the generator's pattern, the connection's ports), and
 * in order per connection (over UDP-lite too, except under MP); no Module
 * counted a drop.  LP and FP run on the Streams' own service threads
 * (asx_task_activate), of each thread kind: pthreads, ASC user threads,
 * and ASC with scheduler activations (where asx.ko is loaded: the test VM;
 * skipped, not passed, elsewhere).  Then
 * the measurement plumbing: context switches, ASC user-level switches,
 * lock and wait statistics are counted where they must be.
 *
 * Work is small (a few hundred messages a run) and every run has a
 * deadline (arch's own: it gives up with -ETIMEDOUT instead of hanging);
 * an alarm() watchdog kills the whole test if something hangs anyway.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/asc.h>
#include <asx/map.h>
#include <asx/sync.h>

#include "arch/arch.h"
#include "proto/proto.h"
#include <pthread.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SLOW 4
#else
#define SLOW 1
#endif
#define TIMEOUT_NS (60ULL * SLOW * 1000000000ULL)
#define WATCHDOG_S (300 * SLOW)

/* Run @c (verify on, a deadline) and check every message arrived once, intact, in order. */
static struct exp_arch_result run_cfg(struct exp_arch_cfg c)
{
	enum exp_arch a = c.arch;
	const char *sched = c.sa ? "_asc-sa" : c.asc ? "_asc" : "";
	bool xdr = c.xdr;
	uint8_t proto = c.proto;
	unsigned int pes = c.pes, nconn = c.nconn;
	struct exp_arch_result r;
	uint64_t want = c.count / nconn * nconn;

	c.payload = 1024;
	c.verify = true;
	c.timeout_ns = TIMEOUT_NS;
	assert_int_equal(exp_arch_run(&c, &r), 0);
	if (r.msgs != want || r.bad || r.dups || r.missing || r.out_of_order || r.drops ||
	    r.failed)
		print_message("%s%s %s%s pes %u conns %u: %llu of %llu, bad %llu dups %llu "
			      "missing %llu ooo %llu drops %llu failed %llu\n",
			      exp_arch_name(a), sched,
			      proto == EXP_PROTO_IP_TCP ? "tcp" : "udp", xdr ? "_xdr" : "", pes,
			      nconn, (unsigned long long)r.msgs, (unsigned long long)want,
			      (unsigned long long)r.bad, (unsigned long long)r.dups,
			      (unsigned long long)r.missing, (unsigned long long)r.out_of_order,
			      (unsigned long long)r.drops, (unsigned long long)r.failed);
	assert_int_equal(r.msgs, want);
	assert_int_equal(r.bytes, want * 1024);
	assert_int_equal(r.bad, 0);
	assert_int_equal(r.dups, 0);
	assert_int_equal(r.missing, 0);
	assert_int_equal(r.out_of_order, 0);
	assert_int_equal(r.drops, 0);
	assert_int_equal(r.failed, 0);
	assert_true(r.mbps > 0);
	assert_int_equal(r.warmup, c.warmup / nconn * nconn);
	return r;
}

static struct exp_arch_result run(enum exp_arch a, bool asc, uint8_t proto,
				  bool xdr, unsigned int pes, unsigned int nconn,
				  enum asx_map_lock lock, uint64_t count)
{
	return run_cfg((struct exp_arch_cfg){
		.arch = a, .asc = asc, .proto = proto, .xdr = xdr, .pes = pes, .nconn = nconn,
		.lock = lock, .count = count,
	});
}

/* One thread kind of every combination of one architecture: transport, XDR, PEs. */
static void all_sched(enum exp_arch a, bool asc, bool sa)
{
	for (int tcp = 0; tcp < 2; tcp++) {
		uint8_t p = tcp ? EXP_PROTO_IP_TCP : EXP_PROTO_IP_UDP;
		static const struct {
			bool xdr;
			unsigned int pes, nconn;
			enum asx_map_lock lock;
			uint64_t count;
		} pts[] = {
			{ false, 1, 3, ASX_MAP_MUTEX, 300 },
			{ true, 2, 4, ASX_MAP_RWLOCK, 400 },
			/* oversubscribed: more threads than CPUs (XDR over TCP) */
			{ false, 6, 5, ASX_MAP_RCU, 500 },
		};

		for (size_t i = 0; i < sizeof(pts) / sizeof(pts[0]); i++)
			run_cfg((struct exp_arch_cfg){
				.arch = a, .asc = asc, .sa = sa, .proto = p,
				.xdr = pts[i].xdr || (i == 2 && tcp), .pes = pts[i].pes,
				.nconn = pts[i].nconn, .lock = pts[i].lock,
				.count = pts[i].count });
	}
}

/* Every combination of one architecture: thread kind, transport, XDR, PEs. */
static void all_of(enum exp_arch a)
{
	all_sched(a, false, false);
	all_sched(a, true, false);
}

static void test_lp(void **state)
{
	(void)state;
	all_of(EXP_ARCH_LP);
}

/*
 * LP and FP with their service threads on an ASC with scheduler
 * activations: asx.ko's, so only where it is loaded (skipped elsewhere).
 */
static void test_sa(void **state)
{
	struct asx_asc *asc;
	ASX_OPTS(struct asx_asc_opts, o, .activations = ASX_ASC_ACT_ON);

	(void)state;
	if (asx_asc_create(&asc, &asx_asc_prio, &o))
		skip();
	asx_asc_destroy(asc);
	all_sched(EXP_ARCH_LP, true, true);
	all_sched(EXP_ARCH_FP, true, true);
}

static void test_cp(void **state)
{
	(void)state;
	all_of(EXP_ARCH_CP);
}

static void test_mp(void **state)
{
	(void)state;
	all_of(EXP_ARCH_MP);
}

static void test_fp(void **state)
{
	struct exp_arch_result r;

	(void)state;
	all_of(EXP_ARCH_FP);
	/* a thread per task and the driver: DLP, IP, checksum, transport,
	 * (XDR,) delivery */
	r = run(EXP_ARCH_FP, false, EXP_PROTO_IP_TCP, false, 2, 3, ASX_MAP_MUTEX, 300);
	assert_int_equal(r.threads, 6);
	assert_int_equal(r.layer_threads, 0);
	r = run(EXP_ARCH_FP, true, EXP_PROTO_IP_UDP, true, 2, 3, ASX_MAP_MUTEX, 300);
	assert_int_equal(r.threads, 7);
}

/* LP with several threads per layer: a lane per share of the connections. */
static void test_lp_layer_threads(void **state)
{
	(void)state;
	for (int asc = 0; asc < 2; asc++) {
		for (int tcp = 0; tcp < 2; tcp++) {
			uint8_t p = tcp ? EXP_PROTO_IP_TCP : EXP_PROTO_IP_UDP;
			struct exp_arch_result r;

			/* 3 lanes of 4 layers with XDR, and the driver */
			r = run_cfg((struct exp_arch_cfg){
				.arch = EXP_ARCH_LP, .asc = asc, .proto = p, .xdr = true,
				.pes = 4, .nconn = 7, .lock = ASX_MAP_RWLOCK, .count = 700,
				.layer_threads = 3 });
			assert_int_equal(r.layer_threads, 3);
			assert_int_equal(r.threads, 1 + 4 * 3);
			/* no more lanes than connections */
			r = run_cfg((struct exp_arch_cfg){
				.arch = EXP_ARCH_LP, .asc = asc, .proto = p, .pes = 2,
				.nconn = 2, .lock = ASX_MAP_MUTEX, .count = 400,
				.layer_threads = 5 });
			assert_int_equal(r.layer_threads, 2);
			assert_int_equal(r.threads, 1 + 3 * 2);
		}
	}
	/* one lane is LP as it was */
	assert_int_equal(run(EXP_ARCH_LP, false, EXP_PROTO_IP_TCP, false, 2, 4,
			     ASX_MAP_MUTEX, 200).layer_threads, 1);
}

/*
 * The warm-up: its messages go through (verified like the rest) but are
 * not counted in msgs, bytes or the time, and the counters start after
 * them.
 */
static void test_warmup(void **state)
{
	static const enum exp_arch archs[] = { EXP_ARCH_LP, EXP_ARCH_CP, EXP_ARCH_MP,
					       EXP_ARCH_FP };
	struct exp_arch_result r;

	(void)state;
	for (size_t i = 0; i < sizeof(archs) / sizeof(archs[0]); i++) {
		for (int asc = 0; asc < 2; asc++) {
			r = run_cfg((struct exp_arch_cfg){
				.arch = archs[i], .asc = asc, .proto = EXP_PROTO_IP_TCP,
				.xdr = asc, .pes = 2, .nconn = 3, .lock = ASX_MAP_MUTEX,
				.count = 300, .warmup = 200 });
			assert_int_equal(r.warmup, 198);	/* a multiple of 3 */
			assert_int_equal(r.msgs, 300);
			/* a TCP segment takes its TCB lock once; the warm-up's
			 * are not counted (LP's and FP's lower layers run ahead
			 * of the app by up to a window, and MP delivers a
			 * reordered segment in the hold of the one that filled
			 * the gap, so only bounds here) */
			assert_true(r.holds > 0);
			assert_true(r.holds < 300 + 198);
		}
	}
	/* one CP thread: each timed segment is one hold, counted; of the
	 * warm-up only the last one's (the mark is taken inside it) */
	r = run_cfg((struct exp_arch_cfg){ .arch = EXP_ARCH_CP, .proto = EXP_PROTO_IP_TCP,
					   .pes = 1, .nconn = 2, .count = 300, .warmup = 100 });
	assert_int_equal(r.warmup, 100);
	assert_int_equal(r.holds, 301);
	/* a warm-up longer than the timed part */
	r = run_cfg((struct exp_arch_cfg){ .arch = EXP_ARCH_MP, .proto = EXP_PROTO_IP_UDP,
					   .pes = 3, .nconn = 1, .count = 50, .warmup = 500 });
	assert_int_equal(r.msgs, 50);
	assert_int_equal(r.bytes, 50 * 1024);
}

/* MP over one connection: every thread on the same TCB, the reorder buffer busy. */
static void test_mp_one_conn(void **state)
{
	(void)state;
	run(EXP_ARCH_MP, false, EXP_PROTO_IP_TCP, false, 8, 1, ASX_MAP_NONE, 2000);
	run(EXP_ARCH_MP, true, EXP_PROTO_IP_TCP, true, 8, 1, ASX_MAP_MUTEX, 2000);
}

/* The measurements are counted where they must be. */
static void test_measurements(void **state)
{
	struct exp_arch_result r;

	(void)state;
	/* LP hands every message over between threads: its layer threads
	 * wait, and they sleep (voluntary switches) */
	r = run(EXP_ARCH_LP, false, EXP_PROTO_IP_TCP, false, 2, 2, ASX_MAP_MUTEX, 2000);
	assert_int_equal(r.threads, 4);
	assert_true(r.cpus >= 1);
	assert_true(r.waits > 0);
	assert_true(r.wait_ns > 0);
	assert_true(r.vcsw > 0);
	assert_int_equal(r.uswitch, 0);
	assert_true(r.ns > 0);
	/* every segment took its connection block's lock, and held it */
	assert_true(r.holds >= 2000);
	assert_true(r.hold_ns > 0);
	/* on ASC the layer threads switch at user level */
	r = run(EXP_ARCH_LP, true, EXP_PROTO_IP_TCP, true, 1, 2, ASX_MAP_MUTEX, 1000);
	assert_int_equal(r.threads, 5);
	assert_int_equal(r.cpus, 1);
	assert_true(r.uswitch > 0);
	assert_true(r.waits > 0);
	/* MP: one connection, four threads, one TCB lock: contended */
	{
		uint64_t contended = 0;

		for (int i = 0; i < 10 * SLOW && !contended; i++) {
			r = run(EXP_ARCH_MP, false, EXP_PROTO_IP_TCP, false, 4, 1,
				ASX_MAP_MUTEX, 4000);
			contended = r.lock_contended;
			if (contended)
				assert_true(r.lock_ns > 0);
		}
		assert_true(contended > 0);
	}
	/* CP: as many threads as connections up to the PEs */
	r = run(EXP_ARCH_CP, false, EXP_PROTO_IP_UDP, false, 4, 2, ASX_MAP_MUTEX, 200);
	assert_int_equal(r.threads, 2);
	assert_int_equal(r.holds, 0);	/* UDP-lite has no connection blocks */
	r = run(EXP_ARCH_CP, false, EXP_PROTO_IP_UDP, false, 2, 8, ASX_MAP_MUTEX, 200);
	assert_int_equal(r.threads, 2);
}

static void test_bad_cfg(void **state)
{
	struct exp_arch_cfg c = { .arch = EXP_ARCH_MP, .proto = 99, .count = 10 };
	struct exp_arch_result r;

	(void)state;
	assert_int_equal(exp_arch_run(&c, &r), -EINVAL);
	c.proto = EXP_PROTO_IP_UDP;
	c.xdr = true;
	c.payload = 1022;
	assert_int_equal(exp_arch_run(&c, &r), -EINVAL);
	c.payload = 4;
	c.xdr = false;
	assert_int_equal(exp_arch_run(&c, &r), -EINVAL);
	assert_int_equal(exp_arch_run(NULL, &r), -EINVAL);
	assert_string_equal(exp_arch_name(EXP_ARCH_CP), "cp");
	assert_string_equal(exp_arch_name(EXP_ARCH_FP), "fp");
	c.payload = 1024;
	c.layer_threads = 65;
	assert_int_equal(exp_arch_run(&c, &r), -EINVAL);
	c.layer_threads = 0;
	c.arch = (enum exp_arch)(EXP_ARCH_FP + 1);
	assert_int_equal(exp_arch_run(&c, &r), -EINVAL);
	assert_true(exp_arch_ncpu() >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_cfg),
		cmocka_unit_test(test_lp),
		cmocka_unit_test(test_sa),
		cmocka_unit_test(test_cp),
		cmocka_unit_test(test_mp),
		cmocka_unit_test(test_mp_one_conn),
		cmocka_unit_test(test_fp),
		cmocka_unit_test(test_lp_layer_threads),
		cmocka_unit_test(test_warmup),
		cmocka_unit_test(test_measurements),
	};

	alarm(WATCHDOG_S);	/* a hang fails (SIGALRM) instead of blocking CI */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
