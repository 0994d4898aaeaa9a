// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_stream_asc.c - the Stream framework on ASC user threads.
 *
 * Each scenario runs on an ASC of exactly one VP (non-preemptive PRIO): a
 * Stream writer under flow control is user thread A, and what drains the
 * Stream is user thread B (or a Task's service threads) on the same VP.
 * A put that waited inside its RCU read-side section blocked the VP, so B
 * never ran: the watchdog (joinwd.h) fails the program instead of hanging.
 * Every message is numbered: the reader checks nothing is lost, duplicated
 * or reordered.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/modules.h>
#include <asx/msg.h>
#include <asx/stream.h>
#include <asx/sync.h>
#include "joinwd.h"
#include "stream/rcu.h"
#include "threadcheck.h"

#define NMSG	200
#define MSGLEN	256
#define HIWAT	(4 * MSGLEN)

#define LD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define ST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

static struct {
	struct asx_stream *s;
	struct asx_msgq *wq;	/* the queue A fills */
	struct asx_sem gate;	/* the Module's service thread waits for B */
	int gate_open;
	int a_full;		/* A met flow control at least once */
	int a_done;
	int b_done;
	uint32_t got;		/* messages B read, in order */
} S;

static struct asx_msg *make(uint32_t seq)
{
	struct asx_msg *m = asx_msg_alloc(MSGLEN, ASX_MSG_DATA);

	if (!m)
		return NULL;
	memset(m->wr, (int)(seq & 0xff), MSGLEN);
	memcpy(m->wr, &seq, sizeof(seq));
	m->wr += MSGLEN;
	return m;
}

/* The sequence number of @m, or -1 when its bytes are not those of make(). */
static long seq_of(struct asx_msg *m)
{
	uint32_t seq;

	if (asx_msg_length(m) != MSGLEN)
		return -1;
	memcpy(&seq, m->rd, sizeof(seq));
	if (m->rd[MSGLEN - 1] != (unsigned char)(seq & 0xff))
		return -1;
	return seq;
}

/* A: write NMSG messages, blocking on flow control. */
static void *writer(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < NMSG; i++) {
		struct asx_msg *m = make(i);

		CHECK(m);
		if (!m)
			break;
		if (asx_msgq_is_full(S.wq))
			ST(S.a_full, 1);
		CHECK(asx_stream_put(S.s, m, 0, NULL) == 0);
	}
	ST(S.a_done, 1);
	return NULL;
}

/* B: read NMSG messages from the head, in order. */
static void *reader(void *arg)
{
	struct asx_msg *m;

	(void)arg;
	while (LD(S.got) < NMSG) {
		CHECK(asx_stream_get(S.s, &m, 0, NULL) == 0);
		CHECK(seq_of(m) == (long)S.got);
		asx_msg_free_chain(m);
		ST(S.got, S.got + 1);
	}
	ST(S.b_done, 1);
	return NULL;
}

/* B, for a sink Stream: let the Module's service thread go, then wait for A. */
static void *opener(void *arg)
{
	(void)arg;
	while (!LD(S.a_full))
		asx_asc_thread_yield();
	CHECK(!LD(S.a_done));
	asx_sem_post(&S.gate);
	ST(S.b_done, 1);
	return NULL;
}

struct pair {
	void *(*fn[2])(void *);
};

static void *drive(void *arg)
{
	struct pair *p = arg;
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[2];
	struct asx_asc *a;

	if (asx_asc_create(&a, &asx_asc_prio, &o))
		return (void *)1;
	for (int i = 0; i < 2; i++)
		if (asx_asc_thread_spawn(a, &q.qos, p->fn[i], NULL, NULL, &t[i]))
			return (void *)2;
	for (int i = 0; i < 2; i++)
		asx_asc_thread_join(t[i], NULL);
	asx_asc_destroy(a);
	return NULL;
}

/* Run @fn(@arg) on a pthread, under the watchdog; A and B must be done. */
static void run_driver(void *(*fn)(void *), void *arg, const char *what)
{
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, fn, arg), 0);
	join_or_die(th, what);
	assert_threads_ok();
	assert_true(LD(S.a_done));
	assert_true(LD(S.b_done));
}

/* Run @first and @second on a one-VP ASC; exit (fail) if they hang. */
static void run_1vp(void *(*first)(void *), void *(*second)(void *), const char *what)
{
	static struct pair p;

	p = (struct pair){ { first, second } };
	run_driver(drive, &p, what);
}

/* Wait (bounded) until the sink tail counted @n messages. */
static void wait_sunk(uint64_t n)
{
	uint64_t end = asx_now_ns() + (uint64_t)JOINWD_S * 1000000000ULL;

	while (asx_stream_sunk(S.s) < n && asx_now_ns() < end)
		usleep(1000);
	assert_int_equal(asx_stream_sunk(S.s), n);
}

static void reset(void)
{
	memset(&S, 0, sizeof(S));
	assert_int_equal(asx_sem_init(&S.gate, 0), 0);
}

/*
 * Loop-back Stream, the head's read queue small: A's put reaches it nested
 * (head write -> loop driver's put -> head read), queues past the high
 * water mark at most once and then waits outside its read section, parked;
 * B reads everything back on the same VP.
 */
static void test_loop_writer_reader_1vp(void **state)
{
	struct asx_stream_opts o = { .sz = sizeof(o), .tail = ASX_STREAM_LOOP,
				     .head_hiwat = HIWAT, .head_lowat = HIWAT / 2 };

	(void)state;
	reset();
	assert_int_equal(asx_stream_open(&S.s, &o), 0);
	S.wq = asx_stream_head_queue(S.s);
	run_1vp(writer, reader, "loop-back writer under flow control");
	assert_int_equal(S.got, NMSG);
	assert_true(asx_msgq_bytes(asx_stream_head_queue(S.s)) == 0);
	asx_stream_close(S.s);
}

/*
 * The Module's put, run by its service thread (the default svc): the first
 * message waits for B's go; each is checked and passed on.
 */
static int gated_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	if (!LD(S.gate_open)) {
		asx_sem_wait(&S.gate);
		ST(S.gate_open, 1);
	}
	CHECK(seq_of(m) == (long)S.got);
	ST(S.got, S.got + 1);
	return asx_task_put_next(t, m, dl);
}

static const struct asx_task_ops gated_ops = { .put = gated_put };

/*
 * A task-based Module with a small queue, its service thread a pthread
 * held until B says go: A's put finds the queue full in the outermost
 * delivery, leaves its read section and parks; B (same VP) must run.
 */
static void test_task_writer_1vp(void **state)
{
	struct asx_stream_opts o = { .sz = sizeof(o), .tail = ASX_STREAM_SINK };
	struct asx_module *mod;

	(void)state;
	reset();
	assert_int_equal(asx_stream_open(&S.s, &o), 0);
	assert_int_equal(asx_module_create(&mod, "gated", &gated_ops, NULL, NULL), 0);
	assert_int_equal(asx_task_set_water(asx_module_wr(mod), HIWAT, HIWAT / 2), 0);
	assert_int_equal(asx_stream_push(S.s, mod, 0, NULL), 0);
	assert_int_equal(asx_task_activate(asx_module_wr(mod), 1), 0);
	S.wq = asx_task_queue(asx_module_wr(mod));
	run_1vp(writer, opener, "writer into a full task-based Module");
	wait_sunk(NMSG);
	asx_stream_close(S.s);
	assert_int_equal(LD(S.got), NMSG);
}

/* ---------------------------------------------------------------- Tasks on ASC threads */

/* A pass-through Task whose write side checks the order it sees. */
static int order_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	uint32_t *next = asx_module_arg(asx_task_module(t));

	if (asx_task_is_wr(t)) {
		CHECK(seq_of(m) == (long)*next);
		(*next)++;
	}
	return asx_task_put_next(t, m, dl);
}

static const struct asx_task_ops order_ops = { .put = order_put };

#define NMOD	4

/*
 * A 4-Module Stream whose write-side Tasks each have one service thread on
 * the same one-VP ASC as the writer (a user thread too): every getq and
 * every full queue parks a user thread; everything reaches the sink tail,
 * in order at every Module.
 */
static void *asc_writer(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < NMSG; i++) {
		struct asx_msg *m = make(i);

		CHECK(m && asx_stream_put(S.s, m, 0, NULL) == 0);
	}
	ST(S.a_done, 1);
	return NULL;
}

static void *asc_drive(void *arg)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_module *mod[NMOD];
	struct asx_asc_thread *w;
	uint32_t next[NMOD] = { 0 };
	struct asx_stream_opts so = { .sz = sizeof(so), .tail = ASX_STREAM_SINK };
	struct asx_asc *a;
	uint64_t end;

	(void)arg;
	if (asx_asc_create(&a, &asx_asc_prio, &o) || asx_stream_open(&S.s, &so))
		return (void *)1;
	for (int i = 0; i < NMOD; i++) {
		char name[16];

		snprintf(name, sizeof(name), "ord%d", i);
		if (asx_module_create(&mod[i], name, &order_ops, NULL, &next[i]) ||
		    asx_task_set_water(asx_module_wr(mod[i]), HIWAT, HIWAT / 2) ||
		    asx_stream_push(S.s, mod[i], 0, NULL) ||
		    asx_task_activate_asc(asx_module_wr(mod[i]), 1, a, &q.qos))
			return (void *)2;
		CHECK(asx_task_threads(asx_module_wr(mod[i])) == 1);
	}
	if (asx_asc_thread_spawn(a, &q.qos, asc_writer, NULL, NULL, &w))
		return (void *)3;
	asx_asc_thread_join(w, NULL);
	end = asx_now_ns() + (uint64_t)JOINWD_S * 1000000000ULL;
	while (asx_stream_sunk(S.s) < NMSG && asx_now_ns() < end)
		usleep(1000);
	CHECK(asx_stream_sunk(S.s) == NMSG);
	asx_stream_close(S.s);		/* joins the service threads (user threads) */
	for (int i = 0; i < NMOD; i++)
		CHECK(next[i] == NMSG);
	ST(S.b_done, 1);
	asx_asc_destroy(a);
	return NULL;
}

static void test_tasks_on_asc_1vp(void **state)
{
	(void)state;
	reset();
	run_driver(asc_drive, NULL, "4 task-based Modules on a one-VP ASC");
}

/* An ASC Task activation refuses a QoS of the wrong schema, starts nothing. */
static void test_activate_asc_bad_qos(void **state)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1 };
	struct asx_stream_opts so = { .sz = sizeof(so), .tail = ASX_STREAM_SINK };
	struct asx_module *mod;
	struct asx_asc *a;

	(void)state;
	assert_int_equal(asx_asc_create(&a, &asx_asc_prio, &o), 0);
	assert_int_equal(asx_stream_open(&S.s, &so), 0);
	assert_int_equal(asx_module_create(&mod, "m", NULL, NULL, NULL), 0);
	assert_int_equal(asx_stream_push(S.s, mod, 0, NULL), 0);
	assert_int_equal(asx_task_activate_asc(asx_module_wr(mod), 1, a, NULL), -EINVAL);
	assert_int_equal(asx_task_threads(asx_module_wr(mod)), 0);
	asx_stream_close(S.s);
	assert_int_equal(asx_asc_destroy(a), 0);
}

/* ---------------------------------------------------------------- mixed stress */

/*
 * Two pthread writers and two ASC user-thread writers (an ASC of 2 VPs)
 * through a loop-back Stream of two task-based Modules, one served by a
 * user thread of the same ASC and one by a pthread, every queue small so
 * that flow control stops writers all the time (outermost and nested);
 * a user thread reads everything back at the head.  Each message carries
 * its writer and number: nothing lost, nothing duplicated, each writer's
 * order kept.
 */
#define MIX_W		4
#define MIX_N		3000

struct mix_writer {
	uint32_t src;
	int err;
};

static void *mix_write(void *arg)
{
	struct mix_writer *w = arg;

	for (uint32_t i = 0; i < MIX_N; i++) {
		struct asx_msg *m = make(w->src << 24 | i);

		if (!m) {
			w->err = -ENOMEM;
			break;
		}
		w->err = asx_stream_put(S.s, m, 0, NULL);
		if (w->err) {
			asx_msg_free_chain(m);
			break;
		}
	}
	return NULL;
}

static void *mix_read(void *arg)
{
	uint32_t *next = arg;
	struct asx_msg *m;

	for (uint32_t got = 0; got < MIX_W * MIX_N; got++) {
		long v;

		if (asx_stream_get(S.s, &m, 0, NULL)) {
			CHECK(0);
			break;
		}
		v = seq_of(m);
		CHECK(v >= 0 && (uint32_t)v >> 24 < MIX_W);
		if (v >= 0 && (uint32_t)v >> 24 < MIX_W) {
			CHECK(((uint32_t)v & 0xffffff) == next[(uint32_t)v >> 24]);
			next[(uint32_t)v >> 24]++;
		}
		asx_msg_free_chain(m);
	}
	ST(S.b_done, 1);
	return NULL;
}

static void *mix_drive(void *arg)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 2, .max_vps = 2,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_stream_opts so = { .sz = sizeof(so), .tail = ASX_STREAM_LOOP,
				      .head_hiwat = HIWAT, .head_lowat = HIWAT / 2 };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct mix_writer w[MIX_W];
	struct asx_asc_thread *ut[MIX_W / 2 + 1];
	pthread_t pt[MIX_W / 2];
	struct asx_module *mod[2];
	uint32_t next[MIX_W] = { 0 };
	struct asx_asc *a;

	(void)arg;
	if (asx_asc_create(&a, &asx_asc_prio, &o) || asx_stream_open(&S.s, &so))
		return (void *)1;
	for (int i = 0; i < 2; i++) {
		if (asx_mod_pass(&mod[i], i ? "on_pthread" : "on_asc") ||
		    asx_task_set_water(asx_module_wr(mod[i]), HIWAT, HIWAT / 2) ||
		    asx_task_set_water(asx_module_rd(mod[i]), HIWAT, HIWAT / 2) ||
		    asx_stream_push(S.s, mod[i], 0, NULL))
			return (void *)2;
		for (int side = 0; side < 2; side++) {
			struct asx_task *t = side ? asx_module_rd(mod[i]) : asx_module_wr(mod[i]);

			if (asx_task_activate_asc(t, 1, i ? NULL : a, i ? NULL : &q.qos))
				return (void *)3;
		}
	}
	if (asx_asc_thread_spawn(a, &q.qos, mix_read, next, NULL, &ut[MIX_W / 2]))
		return (void *)4;
	for (int i = 0; i < MIX_W; i++) {
		w[i] = (struct mix_writer){ .src = (uint32_t)i };
		if (i % 2 ? pthread_create(&pt[i / 2], NULL, mix_write, &w[i]) :
			    asx_asc_thread_spawn(a, &q.qos, mix_write, &w[i], NULL, &ut[i / 2]))
			return (void *)5;
	}
	for (int i = 0; i < MIX_W; i++) {
		if (i % 2)
			pthread_join(pt[i / 2], NULL);
		else
			asx_asc_thread_join(ut[i / 2], NULL);
		CHECK(w[i].err == 0);
	}
	asx_asc_thread_join(ut[MIX_W / 2], NULL);
	for (int i = 0; i < MIX_W; i++)
		CHECK(next[i] == MIX_N);
	ST(S.a_done, 1);
	asx_stream_close(S.s);
	asx_asc_destroy(a);
	return NULL;
}

static void test_mixed_stress(void **state)
{
	(void)state;
	reset();
	run_driver(mix_drive, NULL, "ASC threads and pthreads through one Stream");
}

/* ---------------------------------------------------------------- the rule's check */

/*
 * A queue wait started inside an RCU read-side section breaks the rule
 * (core/rcudepth.h): the debug build (ASX_DEBUG, every SAN= tree) aborts,
 * the plain build counts it and waits as before.  So does a user thread's
 * yield there, which does not switch.  Run in a child: it may abort.
 */
static int in_reader_child(void)
{
	struct asx_msgq *q;
	struct asx_msg *m;
	struct timespec dl;
	unsigned long f0 = asx__rcu_wait_faults;

	if (asx_msgq_create(&q, 1024, 512))
		return 2;
	asx__rcu_read_lock();
	if (asx_msgq_dequeue(q, &m, 0, asx_deadline(&dl, 1000000)) != -ETIMEDOUT)
		return 3;
	asx__rcu_read_unlock();
	asx_msgq_destroy(q);
	return asx__rcu_wait_faults == f0 + 1 ? 0 : 4;
}

static void test_wait_in_reader_checked(void **state)
{
	int st;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit no_core = { 0, 0 };

		(void)setrlimit(RLIMIT_CORE, &no_core);	/* the abort leaves no core file */
		_exit(in_reader_child());
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
#ifdef ASX_DEBUG
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGABRT);
#else
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
#endif
}

/* ---------------------------------------------------------------- no preemption in a section */

/*
 * On a one-VP TIMESLICED ASC (1 ms ticks), user thread A spins 30 ms
 * (program code, preemptible) inside an RCU read-side section: the ticks
 * must not switch it out (the section would then span a switch), so B,
 * runnable all along, does not run until A has left the section; after
 * it, the next tick preempts A and B runs.  The ticks are deferred, not
 * turned into refused yields (which count as faults).
 */
static int ts_b_ran;

/* Spin in the program's own code (preemptible: not libasx, not libc) until @end. */
static void spin_until(uint64_t end, const int *stop)
{
	volatile unsigned long n = 0;

	while (asx_now_ns() < end && !(stop && LD(*stop)))
		for (int i = 0; i < 200000; i++)
			n++;
}

static void *ts_a(void *arg)
{
	unsigned long f0 = LD(asx__rcu_wait_faults);

	(void)arg;
	asx__rcu_read_lock();
	spin_until(asx_now_ns() + 30 * 1000000ULL, NULL);
	CHECK(!LD(ts_b_ran));
	/* deferred, not refused: a refused yield would be a fault */
	CHECK(LD(asx__rcu_wait_faults) == f0);
	asx__rcu_read_unlock();
	/* preempted here by a tick, not yielding */
	spin_until(asx_now_ns() + (uint64_t)JOINWD_S * 1000000000ULL, &ts_b_ran);
	CHECK(LD(ts_b_ran));
	ST(S.a_done, 1);
	return NULL;
}

static void *ts_b(void *arg)
{
	(void)arg;
	ST(ts_b_ran, 1);
	ST(S.b_done, 1);
	return NULL;
}

static void *ts_drive(void *arg)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_TIMESLICED, .timeslice_ns = 1000000 };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *t[2];
	struct asx_asc *a;

	(void)arg;
	if (asx_asc_create(&a, &asx_asc_prio, &o))
		return (void *)1;
	if (asx_asc_thread_spawn(a, &q.qos, ts_a, NULL, NULL, &t[0]))
		return (void *)2;
	usleep(5000);	/* A has the VP */
	if (asx_asc_thread_spawn(a, &q.qos, ts_b, NULL, NULL, &t[1]))
		return (void *)3;
	asx_asc_thread_join(t[1], NULL);
	asx_asc_thread_join(t[0], NULL);
	asx_asc_destroy(a);
	return NULL;
}

static void test_no_preemption_in_reader(void **state)
{
	(void)state;
	reset();
	ts_b_ran = 0;
	run_driver(ts_drive, NULL, "a timesliced user thread inside a read-side section");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_writer_reader_1vp),
		cmocka_unit_test(test_task_writer_1vp),
		cmocka_unit_test(test_tasks_on_asc_1vp),
		cmocka_unit_test(test_activate_asc_bad_qos),
		cmocka_unit_test(test_mixed_stress),
		cmocka_unit_test(test_wait_in_reader_checked),
		cmocka_unit_test(test_no_preemption_in_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
