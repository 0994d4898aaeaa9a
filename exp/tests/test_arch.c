// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_arch.c - the threading architectures of lib/src/proto/arch.c
 * (internal API): Layer, Connectional and Message Parallelism, each on
 * pthreads and on ASC user threads, over TCP-lite and UDP-lite, with and
 * without the XDR presentation layer.
 *
 * Every run verifies at the app: every message sent arrives exactly once,
 * byte for byte (the generator's pattern, the connection's ports), and
 * over TCP-lite in order per connection; no Module counted a drop.  Then
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

#include <asx/map.h>
#include <asx/sync.h>

#include "proto/arch.h"
#include "proto/proto.h"
#include "sync/lockstat.h"
#include <pthread.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SLOW 4
#else
#define SLOW 1
#endif
#define TIMEOUT_NS (60ULL * SLOW * 1000000000ULL)
#define WATCHDOG_S (300 * SLOW)

static struct asx__proto_arch_result run(enum asx__proto_arch a, bool asc, uint8_t proto,
					 bool xdr, unsigned int pes, unsigned int nconn,
					 enum asx_map_lock lock, uint64_t count)
{
	struct asx__proto_arch_cfg c = {
		.arch = a, .asc = asc, .proto = proto, .xdr = xdr, .pes = pes, .nconn = nconn,
		.lock = lock, .payload = 1024, .count = count, .verify = true,
		.timeout_ns = TIMEOUT_NS,
	};
	struct asx__proto_arch_result r;
	uint64_t want = count / nconn * nconn;

	assert_int_equal(asx__proto_arch_run(&c, &r), 0);
	if (r.msgs != want || r.bad || r.dups || r.missing || r.out_of_order || r.drops ||
	    r.failed)
		print_message("%s%s %s%s pes %u conns %u: %llu of %llu, bad %llu dups %llu "
			      "missing %llu ooo %llu drops %llu failed %llu\n",
			      asx__proto_arch_name(a), asc ? "_asc" : "",
			      proto == ASX__PROTO_IP_TCP ? "tcp" : "udp", xdr ? "_xdr" : "", pes,
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
	return r;
}

/* Every combination of one architecture: thread kind, transport, XDR, PEs. */
static void all_of(enum asx__proto_arch a)
{
	for (int asc = 0; asc < 2; asc++) {
		for (int tcp = 0; tcp < 2; tcp++) {
			uint8_t p = tcp ? ASX__PROTO_IP_TCP : ASX__PROTO_IP_UDP;

			run(a, asc, p, false, 1, 3, ASX_MAP_MUTEX, 300);
			run(a, asc, p, true, 2, 4, ASX_MAP_RWLOCK, 400);
			/* oversubscribed: more threads than CPUs */
			run(a, asc, p, tcp, 6, 5, ASX_MAP_RCU, 500);
		}
	}
}

static void test_lp(void **state)
{
	(void)state;
	all_of(ASX__ARCH_LP);
}

static void test_cp(void **state)
{
	(void)state;
	all_of(ASX__ARCH_CP);
}

static void test_mp(void **state)
{
	(void)state;
	all_of(ASX__ARCH_MP);
}

/* MP over one connection: every thread on the same TCB, the reorder buffer busy. */
static void test_mp_one_conn(void **state)
{
	(void)state;
	run(ASX__ARCH_MP, false, ASX__PROTO_IP_TCP, false, 8, 1, ASX_MAP_NONE, 2000);
	run(ASX__ARCH_MP, true, ASX__PROTO_IP_TCP, true, 8, 1, ASX_MAP_MUTEX, 2000);
}

/* The measurements are counted where they must be. */
static void test_measurements(void **state)
{
	struct asx__proto_arch_result r;

	(void)state;
	/* LP hands every message over between threads: its layer threads
	 * wait, and they sleep (voluntary switches) */
	r = run(ASX__ARCH_LP, false, ASX__PROTO_IP_TCP, false, 2, 2, ASX_MAP_MUTEX, 2000);
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
	r = run(ASX__ARCH_LP, true, ASX__PROTO_IP_TCP, true, 1, 2, ASX_MAP_MUTEX, 1000);
	assert_int_equal(r.threads, 5);
	assert_int_equal(r.cpus, 1);
	assert_true(r.uswitch > 0);
	assert_true(r.waits > 0);
	/* MP: one connection, four threads, one TCB lock: contended */
	{
		uint64_t contended = 0;

		for (int i = 0; i < 10 * SLOW && !contended; i++) {
			r = run(ASX__ARCH_MP, false, ASX__PROTO_IP_TCP, false, 4, 1,
				ASX_MAP_MUTEX, 4000);
			contended = r.lock_contended;
			if (contended)
				assert_true(r.lock_ns > 0);
		}
		assert_true(contended > 0);
	}
	/* CP: as many threads as connections up to the PEs */
	r = run(ASX__ARCH_CP, false, ASX__PROTO_IP_UDP, false, 4, 2, ASX_MAP_MUTEX, 200);
	assert_int_equal(r.threads, 2);
	assert_int_equal(r.holds, 0);	/* UDP-lite has no connection blocks */
	r = run(ASX__ARCH_CP, false, ASX__PROTO_IP_UDP, false, 2, 8, ASX_MAP_MUTEX, 200);
	assert_int_equal(r.threads, 2);
}

/* The opt-in lock statistics themselves: a holder that sleeps, known waits. */
struct held {
	struct asx_mutex m;
	struct asx_rwlock rw;
	struct asx_cond c;
	int flag;
};

static void *contend_mutex(void *arg)
{
	struct held *h = arg;

	asx_mutex_lock(&h->m);
	asx_mutex_unlock(&h->m);
	asx_rwlock_rdlock(&h->rw);
	asx_rwlock_unlock(&h->rw);
	asx_mutex_lock(&h->m);
	h->flag = 1;
	asx_cond_signal(&h->c);
	asx_mutex_unlock(&h->m);
	return NULL;
}

static void test_lockstat(void **state)
{
	struct asx__lockstat ls;
	struct held h;
	pthread_t th;

	(void)state;
	asx_mutex_init(&h.m);
	asx_rwlock_init(&h.rw);
	asx_cond_init(&h.c);
	h.flag = 0;
	/* off: nothing is counted */
	asx__lockstat_enable(false);
	asx__lockstat_reset();
	asx_mutex_lock(&h.m);
	assert_int_equal(pthread_create(&th, NULL, contend_mutex, &h), 0);
	usleep(20000);
	asx_mutex_unlock(&h.m);
	assert_int_equal(pthread_join(th, NULL), 0);
	asx__lockstat_read(&ls);
	assert_int_equal(ls.contended, 0);
	assert_int_equal(ls.waits, 0);

	/* on: the mutex and the rwlock are held 20 ms while the thread
	 * wants them, and the main thread waits on the condition; the 20 ms
	 * on the mutex start once the thread sleeps on it (word 2: a slow
	 * start on a loaded host must not find it free) */
	h.flag = 0;
	asx__lockstat_enable(true);
	asx_mutex_lock(&h.m);
	asx_rwlock_wrlock(&h.rw);
	assert_int_equal(pthread_create(&th, NULL, contend_mutex, &h), 0);
	for (int i = 0; __atomic_load_n(&h.m.word, __ATOMIC_RELAXED) != 2; i++) {
		assert_true(i < 60000);		/* a minute */
		usleep(1000);
	}
	usleep(20000);
	asx_mutex_unlock(&h.m);
	usleep(20000);
	asx_rwlock_unlock(&h.rw);
	asx_mutex_lock(&h.m);
	while (!h.flag)
		asx_cond_wait(&h.c, &h.m);
	asx_mutex_unlock(&h.m);
	assert_int_equal(pthread_join(th, NULL), 0);
	asx__lockstat_enable(false);
	asx__lockstat_read(&ls);
	assert_true(ls.contended >= 1);
	assert_true(ls.acquire_ns >= 10000000ull);
	if (ls.waits)
		assert_true(ls.wait_ns > 0);
	asx__lockstat_reset();
	asx__lockstat_read(&ls);
	assert_int_equal(ls.contended + ls.acquire_ns + ls.waits + ls.wait_ns, 0);
	asx_cond_destroy(&h.c);
	asx_rwlock_destroy(&h.rw);
	asx_mutex_destroy(&h.m);
}

static void test_bad_cfg(void **state)
{
	struct asx__proto_arch_cfg c = { .arch = ASX__ARCH_MP, .proto = 99, .count = 10 };
	struct asx__proto_arch_result r;

	(void)state;
	assert_int_equal(asx__proto_arch_run(&c, &r), -EINVAL);
	c.proto = ASX__PROTO_IP_UDP;
	c.xdr = true;
	c.payload = 1022;
	assert_int_equal(asx__proto_arch_run(&c, &r), -EINVAL);
	c.payload = 4;
	c.xdr = false;
	assert_int_equal(asx__proto_arch_run(&c, &r), -EINVAL);
	assert_int_equal(asx__proto_arch_run(NULL, &r), -EINVAL);
	assert_string_equal(asx__proto_arch_name(ASX__ARCH_CP), "cp");
	assert_true(asx__proto_arch_ncpu() >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_cfg),
		cmocka_unit_test(test_lockstat),
		cmocka_unit_test(test_lp),
		cmocka_unit_test(test_cp),
		cmocka_unit_test(test_mp),
		cmocka_unit_test(test_mp_one_conn),
		cmocka_unit_test(test_measurements),
	};

	alarm(WATCHDOG_S);	/* a hang fails (SIGALRM) instead of blocking CI */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
