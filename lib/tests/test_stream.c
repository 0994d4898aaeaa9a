// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_stream.c - Streams: head/tail basics, the 4-module stream run
 * message-based and task-based (1,000,000 messages, per-source order),
 * flow control with water marks, high-priority and flush semantics,
 * putting a message back (ungetq) and asking ahead (canput_next),
 * reconfiguration semantics, the reusable modules, and writers waiting
 * on flow control giving way to another Stream's close (issue 27).
 *
 * Helper threads never call cmocka's assert_* (it longjmps); they record
 * what they saw and the main thread asserts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>
#include <urcu/urcu-memb.h>

#include <asx/modules.h>
#include <asx/stream.h>
#include <asx/sync.h>

#include "joinwd.h"
#include "srcseq.h"

/* The full run; sanitizers are 5-20x slower on 2 shared cores. */
#if defined(__SANITIZE_THREAD__)
#define BIG_N 20000
#elif defined(__SANITIZE_ADDRESS__)
#define BIG_N 100000
#else
#define BIG_N 1000000
#endif

#define ASX_ARRAY_SIZE_T(a) (sizeof(a) / sizeof((a)[0]))
#define mk srcseq_make
#define ids srcseq_ids

static const struct timespec *in_ms(struct timespec *ts, unsigned int ms)
{
	return asx_deadline(ts, (uint64_t)ms * 1000000ULL);
}

/* ---------------------------------------------------------------- basics */

static void test_loop_basics(void **state)
{
	struct asx_stream *s;
	struct asx_msg *m;
	struct timespec ts;
	uint32_t src, seq;
	char names[4][ASX_MODULE_NAME_MAX];

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_stream_list(s, names, 4), 2);
	assert_string_equal(names[0], "head");
	assert_string_equal(names[1], "loop");
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 20)), -ETIMEDOUT);
	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(asx_stream_put(s, mk(7, i, 8, i == 5 ? ASX_MSG_PROTO : ASX_MSG_DATA),
						0, NULL), 0);
	for (uint32_t i = 0; i < 10; i++) {
		assert_int_equal(asx_stream_get(s, &m, 0, NULL), 0);
		ids(m, &src, &seq);
		assert_int_equal(src, 7);
		assert_int_equal(seq, i);
		assert_int_equal(m->type, i == 5 ? ASX_MSG_PROTO : ASX_MSG_DATA);
		asx_msg_free_chain(m);
	}
	assert_int_equal(asx_stream_put(s, NULL, 0, NULL), -EINVAL);
	/* messages left in the stream are freed by close (ASan checks) */
	assert_int_equal(asx_stream_put(s, mk(1, 1, 100, ASX_MSG_DATA), 0, NULL), 0);
	asx_stream_close(s);
}

/*
 * The counter counts a message before passing it on: the Module below it
 * (here "peek", which reads the counter from its put) and a reader at the
 * head find it counted.  Regression: it counted after the put returned,
 * so a reader that had every message could read one short (the
 * task-based run of four Modules below, under TSan, one run in 1,200).
 * One the next Module refuses is not counted.
 */
struct peek {
	struct asx_module *counter;
	uint64_t seen, behind;
};

static int peek_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct peek *p = asx_module_arg(asx_task_module(t));
	struct asx_counter c;

	if (asx_msg_length(m) == 3)
		return -EPROTO;		/* refused: the caller keeps it */
	asx_mod_counter_read(p->counter, &c);
	if (c.wr_msgs != ++p->seen)
		p->behind++;
	return asx_task_put_next(t, m, dl);
}

static const struct asx_task_ops peek_wr_ops = { .put = peek_put };

static void test_counter_counts_before_passing_on(void **state)
{
	struct asx_stream *s;
	struct asx_module *cnt, *pk;
	struct peek p = { 0 };
	struct asx_counter c;
	struct asx_msg *m;
	struct timespec ts;

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&pk, "peek", &peek_wr_ops, NULL, &p), 0);
	assert_int_equal(asx_stream_push(s, pk, 0, NULL), 0);
	assert_int_equal(asx_mod_counter(&cnt, "counter"), 0);
	assert_int_equal(asx_stream_push(s, cnt, 0, NULL), 0);
	p.counter = cnt;
	for (uint32_t i = 0; i < 10; i++) {
		assert_int_equal(asx_stream_put(s, mk(1, i, 16, ASX_MSG_DATA), 0, NULL), 0);
		assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 5000)), 0);
		asx_msg_free_chain(m);
		assert_int_equal(asx_mod_counter_read(cnt, &c), 0);
		assert_int_equal(c.rd_msgs, i + 1);
	}
	assert_int_equal(p.behind, 0);
	m = asx_msg_alloc(3, ASX_MSG_DATA);
	asx_msg_append(m, "abc", 3);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), -EPROTO);
	asx_msg_free_chain(m);
	assert_int_equal(asx_mod_counter_read(cnt, &c), 0);
	assert_int_equal(c.wr_msgs, 10);
	assert_int_equal(c.wr_bytes, 160);
	asx_stream_close(s);
}

static void test_sink_and_opts(void **state)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_SINK);
	struct asx_stream *s;
	struct asx_msg *m;
	struct { struct asx_stream_opts o; uint64_t extra; } big;

	(void)state;
	assert_int_equal(asx_stream_open(&s, &o), 0);
	for (int i = 0; i < 100; i++)
		assert_int_equal(asx_stream_put(s, mk(1, (uint32_t)i, 64, ASX_MSG_DATA), 0, NULL), 0);
	assert_int_equal(asx_stream_sunk(s), 100);
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	asx_stream_close(s);

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	assert_int_equal(asx_stream_open(&s, &big.o), 0);
	asx_stream_close(s);
	big.extra = 1;
	assert_int_equal(asx_stream_open(&s, &big.o), -E2BIG);
	o.tail = ASX_STREAM_DRIVER;	/* without a driver */
	assert_int_equal(asx_stream_open(&s, &o), -EINVAL);
}

/* ---------------------------------------------------------------- reconfiguration semantics */

struct life {
	int opened, closed, fail_open;
	unsigned int close_flags;
};

static int life_open(struct asx_task *t, int argc, char **argv)
{
	struct life *l = asx_module_arg(asx_task_module(t));

	if (l->fail_open && !asx_task_is_wr(t))
		return -EPROTO;
	assert_int_equal(argc, 1);
	assert_string_equal(argv[0], "arg");
	l->opened++;
	return 0;
}

static void life_close(struct asx_task *t, unsigned int flags)
{
	struct life *l = asx_module_arg(asx_task_module(t));

	l->closed++;
	l->close_flags = flags;
}

static const struct asx_task_ops life_ops = { .open = life_open, .close = life_close };

static void test_reconfigure(void **state)
{
	char *argv[] = { "arg", NULL };
	struct life la = { 0 }, lb = { 0 }, lc = { 0 }, ld = { .fail_open = 1 };
	struct asx_module *a, *b, *c, *d, *dup;
	struct asx_stream *s;
	char n[8][ASX_MODULE_NAME_MAX];
	struct asx_msg *m;

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&a, "a", &life_ops, &life_ops, &la), 0);
	assert_int_equal(asx_module_create(&b, "b", &life_ops, &life_ops, &lb), 0);
	assert_int_equal(asx_module_create(&c, "c", &life_ops, &life_ops, &lc), 0);
	assert_int_equal(asx_module_create(&d, "d", &life_ops, &life_ops, &ld), 0);
	assert_int_equal(asx_module_create(&dup, "a", NULL, NULL, NULL), 0);
	{
		struct asx_module *bad = NULL;

		assert_int_equal(asx_module_create(&bad, "", NULL, NULL, NULL), -EINVAL);
		assert_int_equal(asx_module_create(&bad, "0123456789012345678901234567890123",
						   NULL, NULL, NULL), -EINVAL);
		assert_int_equal(asx_mod_pass(&bad, NULL), -EINVAL);
		assert_int_equal(asx_mod_framer(NULL, "f"), -EINVAL);
		assert_null(bad);
	}
	assert_int_equal(asx_stream_push(s, a, 1, argv), 0);
	assert_int_equal(la.opened, 2);
	assert_int_equal(asx_stream_push(s, dup, 1, argv), -EEXIST);
	assert_int_equal(asx_stream_insert(s, "a", b, 1, argv), 0);	/* head a b loop */
	assert_int_equal(asx_stream_insert(s, "nope", c, 1, argv), -ENOENT);
	assert_int_equal(asx_stream_insert(s, "loop", c, 1, argv), -ENOENT);
	assert_int_equal(asx_stream_push(s, d, 1, argv), -EPROTO);
	assert_int_equal(ld.opened, 1);		/* wr opened, rd failed ... */
	assert_int_equal(ld.closed, 1);		/* ... so wr was closed again */
	asx_module_destroy(d);			/* still ours */
	assert_int_equal(asx_stream_list(s, n, 8), 4);
	assert_string_equal(n[1], "a");
	assert_string_equal(n[2], "b");
	assert_int_equal(asx_stream_replace(s, "b", c, 1, argv), 0);	/* head a c loop */
	assert_int_equal(lb.closed, 2);
	assert_int_equal(lb.close_flags, ASX_TASK_CLOSE_REMOVED);
	assert_int_equal(asx_stream_list(s, n, 8), 4);
	assert_string_equal(n[2], "c");
	/* messages still flow */
	assert_int_equal(asx_stream_put(s, mk(1, 2, 8, ASX_MSG_DATA), 0, NULL), 0);
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);
	asx_msg_free_chain(m);
	assert_int_equal(asx_stream_remove(s, "head"), -ENOENT);
	assert_int_equal(asx_stream_remove(s, "loop"), -ENOENT);
	assert_int_equal(asx_stream_remove(s, "zz"), -ENOENT);
	assert_int_equal(asx_stream_pop(s), 0);	/* a */
	assert_int_equal(la.closed, 2);
	assert_int_equal(asx_stream_list(s, n, 8), 3);
	assert_string_equal(n[1], "c");
	asx_stream_close(s);
	assert_int_equal(lc.closed, 2);
	assert_int_equal(lc.close_flags, ASX_TASK_CLOSE_STREAM);
	asx_module_destroy(dup);
}

/* ---------------------------------------------------------------- 4 modules, 1M messages */

struct writer {
	struct asx_stream *s;
	uint32_t src, n;
	size_t len;		/* 0: 16 bytes */
	int err;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	for (uint32_t i = 0; i < w->n; i++) {
		struct asx_msg *m = mk(w->src, i, w->len ? w->len : 16, ASX_MSG_DATA);
		int r = asx_stream_put(w->s, m, 0, NULL);

		if (r) {
			asx_msg_free_chain(m);
			w->err = r;
			return NULL;
		}
	}
	return NULL;
}

static void run_four(bool task_based)
{
	enum { NW = 2 };
	struct asx_module *mods[4];
	struct asx_stream *s;
	struct writer w[NW];
	pthread_t th[NW];
	uint32_t next[NW] = { 0 };
	uint64_t bad_order = 0, bad_src = 0, got = 0;
	struct asx_counter c;
	struct timespec ts;

	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_counter(&mods[0], "counter"), 0);
	assert_int_equal(asx_mod_framer(&mods[1], "framer"), 0);
	assert_int_equal(asx_mod_cksum(&mods[2], "cksum"), 0);
	assert_int_equal(asx_mod_pass(&mods[3], "pass"), 0);
	for (int i = 3; i >= 0; i--) {
		assert_non_null(mods[i]);
		assert_int_equal(asx_stream_push(s, mods[i], 0, NULL), 0);
		if (task_based) {
			assert_int_equal(asx_task_activate(asx_module_wr(mods[i]), 1), 0);
			assert_int_equal(asx_task_activate(asx_module_rd(mods[i]), 1), 0);
			assert_int_equal(asx_task_threads(asx_module_rd(mods[i])), 1);
		}
	}
	for (int i = 0; i < NW; i++) {
		w[i] = (struct writer){ .s = s, .src = (uint32_t)i, .n = BIG_N / NW };
		assert_int_equal(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
	}
	while (got < BIG_N) {
		struct asx_msg *m;
		uint32_t src, seq;

		if (asx_stream_get(s, &m, 0, in_ms(&ts, 20000))) {
			/* where the rest is: every queue on the way */
			print_message("  %llu of %d messages after 20 s; queued:", (unsigned long long)got,
				      BIG_N);
			for (int i = 0; i < 4; i++) {
				struct asx_msgq_stats qw, qr;

				asx_msgq_stats(asx_task_queue(asx_module_wr(mods[i])), &qw);
				asx_msgq_stats(asx_task_queue(asx_module_rd(mods[i])), &qr);
				print_message(" %s wr %zu (in %llu out %llu) rd %zu (in %llu out %llu);",
					      asx_module_name(mods[i]),
					      asx_msgq_count(asx_task_queue(asx_module_wr(mods[i]))),
					      (unsigned long long)qw.enqueued,
					      (unsigned long long)qw.dequeued,
					      asx_msgq_count(asx_task_queue(asx_module_rd(mods[i]))),
					      (unsigned long long)qr.enqueued,
					      (unsigned long long)qr.dequeued);
			}
			print_message(" head %zu; next expected %u/%u\n",
				      asx_msgq_count(asx_stream_head_queue(s)), next[0], next[1]);
			break;
		}
		if (asx_msg_length(m) != 16) {
			bad_src++;
		} else {
			ids(m, &src, &seq);
			if (src >= NW)
				bad_src++;
			else if (seq != next[src]++)
				bad_order++;
		}
		asx_msg_free_chain(m);
		got++;
	}
	for (int i = 0; i < NW; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].err, 0);
	}
	assert_int_equal(got, BIG_N);
	assert_int_equal(bad_src, 0);
	assert_int_equal(bad_order, 0);
	for (int i = 0; i < NW; i++)
		assert_int_equal(next[i], BIG_N / NW);
	assert_int_equal(asx_mod_counter_read(mods[0], &c), 0);
	assert_int_equal(c.wr_msgs, BIG_N);
	assert_int_equal(c.rd_msgs, BIG_N);
	assert_int_equal(c.wr_bytes, 16ull * BIG_N);
	assert_int_equal(asx_mod_errors(mods[1]), 0);
	assert_int_equal(asx_mod_errors(mods[2]), 0);
	assert_int_equal(asx_mod_counter_read(mods[1], &c), -EINVAL);
	{
		struct asx_msg *m;

		assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	}
	asx_stream_close(s);
}

static void test_four_message_based(void **state)
{
	(void)state;
	run_four(false);
}

static void test_four_task_based(void **state)
{
	(void)state;
	run_four(true);
}

/* ---------------------------------------------------------------- flow control */

#define FC_HI 8192
#define FC_LO 2048
#define FC_MSG 1024

/* A slow layer: 100 us per message, in its own service thread. */
static int slow_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	usleep(100);
	return asx_task_put_next(t, m, dl);
}

static int slow_open(struct asx_task *t, int argc, char **argv)
{
	int r = asx_task_set_water(t, FC_HI, FC_LO);

	return r ? r : asx_task_activate(t, 1);
}

static const struct asx_task_ops slow_rd_ops = { .open = slow_open, .put = slow_put };

/*
 * Below "slow": samples its queue around each hand-over to it.  The
 * hand-over is nested (in the loop's put, in the writer's), so a full
 * queue takes the message past its high water mark and the writer owes a
 * wait for room, which it pays outside its read section once this put has
 * returned: "held" here.
 */
struct watch {
	struct asx_msgq *q;
	uint64_t puts, blocked, bad_resume, max_bytes;
	bool held_prev;		/* atomic: the last hand-over was held (one writer) */
};

static int watch_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct watch *w = asx_module_arg(asx_task_module(t));
	uint64_t b;
	int r;

	/* with one writer: held last time, it went on only below low water */
	b = asx_msgq_bytes(w->q);
	if (__atomic_load_n(&w->held_prev, __ATOMIC_RELAXED) && b > FC_LO + FC_MSG)
		__atomic_fetch_add(&w->bad_resume, 1, __ATOMIC_RELAXED);
	r = asx_task_put_next(t, m, dl);
	b = asx_msgq_bytes(w->q);
	__atomic_fetch_add(&w->puts, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&w->held_prev, b > FC_HI, __ATOMIC_RELAXED);
	if (b > FC_HI)
		__atomic_fetch_add(&w->blocked, 1, __ATOMIC_RELAXED);
	if (b > __atomic_load_n(&w->max_bytes, __ATOMIC_RELAXED))
		__atomic_store_n(&w->max_bytes, b, __ATOMIC_RELAXED);
	return r;
}

static const struct asx_task_ops watch_rd_ops = { .put = watch_put };

struct fc_reader {
	struct asx_stream *s;
	uint32_t want;
	uint32_t got;
};

static void *fc_reader_main(void *arg)
{
	struct fc_reader *rd = arg;
	struct timespec ts;
	struct asx_msg *m;

	while (rd->got < rd->want && asx_stream_get(rd->s, &m, 0, in_ms(&ts, 20000)) == 0) {
		asx_msg_free_chain(m);
		rd->got++;
	}
	return NULL;
}

static void run_flow(int nwriters, uint32_t per)
{
	struct asx_module *slow, *wm;
	struct watch w = { 0 };
	struct asx_stream *s;
	struct writer wr[4];
	pthread_t th[4], rt;
	struct fc_reader rd;
	struct asx_msgq_stats st;

	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&slow, "slow", NULL, &slow_rd_ops, NULL), 0);
	assert_int_equal(asx_module_create(&wm, "watch", NULL, &watch_rd_ops, &w), 0);
	assert_int_equal(asx_stream_push(s, wm, 0, NULL), 0);
	assert_int_equal(asx_stream_push(s, slow, 0, NULL), 0);	/* head slow watch loop */
	w.q = asx_task_queue(asx_module_rd(slow));
	rd = (struct fc_reader){ .s = s, .want = per * (uint32_t)nwriters };
	assert_int_equal(pthread_create(&rt, NULL, fc_reader_main, &rd), 0);
	for (int i = 0; i < nwriters; i++) {
		wr[i] = (struct writer){ .s = s, .src = (uint32_t)i, .n = per, .len = FC_MSG };
		assert_int_equal(pthread_create(&th[i], NULL, writer_main, &wr[i]), 0);
	}
	for (int i = 0; i < nwriters; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(wr[i].err, 0);
	}
	pthread_join(rt, NULL);
	assert_int_equal(rd.got, rd.want);
	asx_msgq_stats(w.q, &st);
	/* writers were held back at high water ... */
	assert_true(st.full_waits > 0);
	assert_true(w.blocked > 0);
	/* ... the depth never passed high water plus one message a writer ... */
	assert_true(st.peak_bytes <= FC_HI + (uint64_t)nwriters * FC_MSG);
	assert_true(w.max_bytes <= FC_HI + (uint64_t)nwriters * FC_MSG);
	if (nwriters == 1)	/* ... and a blocked writer resumed only below low water */
		assert_int_equal(w.bad_resume, 0);
	asx_stream_close(s);
}

static void test_flow_control(void **state)
{
	(void)state;
	run_flow(1, 300);
	run_flow(4, 100);
}

/* ---------------------------------------------------------------- high priority, flush */

struct gate {
	struct asx_sem sem;
};

static int gate_svc(struct asx_task *t)
{
	struct gate *g = asx_module_arg(asx_task_module(t));
	struct asx_msg *m;
	int r;

	asx_sem_wait(&g->sem);
	while ((r = asx_task_getq(t, &m, NULL)) == 0)
		if (asx_task_put_next(t, m, NULL))
			asx_msg_free_chain(m);
	return r == -ESHUTDOWN ? 0 : r;
}

static int gate_open(struct asx_task *t, int argc, char **argv)
{
	int r = asx_task_set_water(t, 100, 50);

	return r ? r : asx_task_activate(t, 1);
}

static const struct asx_task_ops gate_wr_ops = { .open = gate_open, .svc = gate_svc };

/* ---------------------------------------------------------------- grace periods while writers wait */

#define GP_N		2000
#define GP_CLOSES	3

struct gp_writer {
	struct asx_stream *s;
	uint32_t refused;	/* atomic: NOWAIT puts refused by flow control */
	int ret;
};

static void *gp_writer_main(void *arg)
{
	struct gp_writer *w = arg;
	struct asx_msg *m;
	int r;

	for (uint32_t seq = 0; seq < GP_N; seq++) {
		m = asx_msg_alloc(64, ASX_MSG_DATA);
		if (!m) {
			w->ret = -ENOMEM;
			return NULL;
		}
		memset(m->wr, 0, 64);
		memcpy(m->wr, &seq, 4);
		m->wr += 64;
		r = asx_stream_put(w->s, m, ASX_STREAM_NOWAIT, NULL);
		if (r == -EWOULDBLOCK) {
			__atomic_fetch_add(&w->refused, 1, __ATOMIC_RELEASE);
			r = asx_stream_put(w->s, m, 0, NULL);	/* no deadline */
		}
		if (r) {
			asx_msg_free_chain(m);
			w->ret = r;
			return NULL;
		}
	}
	return NULL;
}

static void *gp_closer_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < GP_CLOSES; i++) {
		ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_LOOP);
		struct asx_stream *s;

		if (asx_stream_open(&s, &o))
			return (void *)1;
		asx_stream_close(s);	/* waits for grace periods */
	}
	return NULL;
}

/*
 * Grace periods the application waits for itself, through liburcu-memb
 * (whose reader registry libasx shares): libasx does not hear of them, so
 * only a writer that waits outside every read-side section lets them end.
 */
static void *gp_app_main(void *arg)
{
	(void)arg;
	for (int i = 0; i < GP_CLOSES; i++)
		urcu_memb_synchronize_rcu();
	return NULL;
}

enum gp_where {
	GP_SVC_QUEUE,	/* a task-based Module's full queue, from the outermost put */
	GP_HEAD_NESTED,	/* the head's full queue, from inside the loop's put */
	GP_HEAD_SVC,	/* the head's full queue, from a service thread's put_next */
	GP_HEAD_NESTED_APP,	/* GP_HEAD_NESTED, the application's grace periods */
};

/*
 * A writer waits on flow control where @where says, while another thread
 * opens and closes other Streams (each close waits for grace periods):
 * the closes return, and once the queue drains every message arrives,
 * once, in order.
 */
static void gp_run(enum gp_where where)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_LOOP,
		 .head_hiwat = where == GP_SVC_QUEUE ? 0 : 1024,
		 .head_lowat = where == GP_SVC_QUEUE ? 0 : 512);
	struct gp_writer w = { 0 };
	struct asx_module *mod = NULL;
	struct gate *g = NULL;
	struct timespec dl;
	struct asx_msg *m;
	pthread_t wt, ct;
	uint64_t t0;
	uint32_t seq;

	assert_int_equal(asx_stream_open(&w.s, &o), 0);
	if (where != GP_HEAD_NESTED && where != GP_HEAD_NESTED_APP) {
		g = calloc(1, sizeof(*g));
		assert_non_null(g);
		asx_sem_init(&g->sem, where == GP_HEAD_SVC ? 1 : 0);
		assert_int_equal(asx_module_create(&mod, "gate",
						   where == GP_SVC_QUEUE ? &gate_wr_ops : NULL,
						   where == GP_HEAD_SVC ? &gate_wr_ops : NULL, g), 0);
		assert_int_equal(asx_stream_push(w.s, mod, 0, NULL), 0);
	}
	assert_int_equal(pthread_create(&wt, NULL, gp_writer_main, &w), 0);
	for (int ms = 0; !__atomic_load_n(&w.refused, __ATOMIC_ACQUIRE); ms++) {
		if (ms > JOINWD_S * 1000)
			fail_msg("the writer never met flow control");
		usleep(1000);
	}
	usleep(100 * 1000);	/* it waits inside its put by now */
	t0 = asx_now_ns();
	assert_int_equal(pthread_create(&ct, NULL, where == GP_HEAD_NESTED_APP ? gp_app_main
									  : gp_closer_main, NULL), 0);
	join_or_die(ct, where == GP_HEAD_NESTED_APP ? "the application's synchronize_rcu()"
						    : "asx_stream_close() of another Stream");
	print_message("# %d %s: %.1f ms; head queue %zu bytes (high water mark %zu)\n",
		      GP_CLOSES, where == GP_HEAD_NESTED_APP ? "grace periods of the application"
				: "opens and closes of another Stream",
		      (asx_now_ns() - t0) / 1e6,
		      asx_msgq_bytes(asx_stream_head_queue(w.s)),
		      asx_msgq_hiwat(asx_stream_head_queue(w.s)));
	if (where == GP_SVC_QUEUE)
		asx_sem_post(&g->sem);
	for (seq = 0; seq < GP_N; seq++) {
		uint32_t got;

		assert_int_equal(asx_stream_get(w.s, &m, 0, asx_deadline(&dl, 30 * ASX_NSEC_PER_SEC)), 0);
		memcpy(&got, m->rd, 4);
		asx_msg_free_chain(m);
		assert_int_equal(got, seq);	/* nothing lost, duplicated or reordered */
	}
	join_or_die(wt, "the writer");
	assert_int_equal(w.ret, 0);
	assert_int_equal(asx_stream_get(w.s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	asx_stream_close(w.s);
	if (g) {
		asx_sem_destroy(&g->sem);
		free(g);
	}
}

static void test_gp_while_svc_queue_full(void **state)
{
	(void)state;
	gp_run(GP_SVC_QUEUE);
}

static void test_gp_while_head_full_nested(void **state)
{
	(void)state;
	gp_run(GP_HEAD_NESTED);
}

/*
 * A plain pthread nested in a put() that finds the next queue full waits
 * outside its read-side section, as a user thread does: a grace period
 * libasx does not know of (the application's own) still ends.  Before,
 * such a pthread waited inside the section, and that grace period waited
 * for the queue to drain, which here waits for it: the watchdog fired.
 */
static void test_gp_app_while_head_full_nested(void **state)
{
	(void)state;
	gp_run(GP_HEAD_NESTED_APP);
}

static void test_gp_while_head_full_from_svc(void **state)
{
	(void)state;
	gp_run(GP_HEAD_SVC);
}

static void test_hipri_and_flush(void **state)
{
	struct asx_stream *s;
	struct asx_module *g;
	struct gate gt;
	struct asx_msg *m;
	struct timespec ts;
	uint32_t src, seq;

	(void)state;
	assert_int_equal(asx_sem_init(&gt.sem, 0), 0);
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&g, "gate", &gate_wr_ops, NULL, &gt), 0);
	assert_int_equal(asx_stream_push(s, g, 0, NULL), 0);
	/* normal messages fill the gate's queue to high water, then wait */
	for (uint32_t i = 0; i < 3; i++)	/* 40, 80, 120 bytes: full */
		assert_int_equal(asx_stream_put(s, mk(1, i, 40, ASX_MSG_DATA), 0, NULL), 0);
	m = mk(1, 99, 40, ASX_MSG_DATA);
	assert_int_equal(asx_stream_put(s, m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	assert_int_equal(asx_stream_put(s, m, 0, in_ms(&ts, 10)), -ETIMEDOUT);
	asx_msg_free_chain(m);
	/* a high-priority message is not held back and overtakes them */
	assert_int_equal(asx_stream_put(s, mk(2, 0, 40, ASX_MSG_PCPROTO), ASX_STREAM_NOWAIT, NULL), 0);
	asx_sem_post(&gt.sem);
	assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 5000)), 0);
	assert_int_equal(m->type, ASX_MSG_PCPROTO);
	asx_msg_free_chain(m);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 5000)), 0);
		ids(m, &src, &seq);
		assert_int_equal(seq, i);
		asx_msg_free_chain(m);
	}
	asx_stream_close(s);

	/* flush: clears the head's queue and the queues on the way */
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&g, "gate", &gate_wr_ops, NULL, &gt), 0);
	assert_int_equal(asx_stream_push(s, g, 0, NULL), 0);
	asx_sem_post(&gt.sem);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(asx_stream_put(s, mk(1, i, 8, ASX_MSG_DATA), 0, NULL), 0);
	while (asx_msgq_count(asx_stream_head_queue(s)) < 3)
		usleep(1000);
	asx_stream_close(s);

	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&g, "gate", &gate_wr_ops, NULL, &gt), 0);
	assert_int_equal(asx_stream_push(s, g, 0, NULL), 0);
	/* gate closed: 2 messages sit in its queue; 1 control message went
	 * up to the head before (by putting on the read side directly) */
	m = mk(3, 0, 8, ASX_MSG_PROTO);
	assert_int_equal(asx_task_put_next(asx_module_rd(asx_stream_tail(s)), m, NULL), 0);
	assert_int_equal(asx_msgq_count(asx_stream_head_queue(s)), 1);
	for (uint32_t i = 0; i < 2; i++)
		assert_int_equal(asx_stream_put(s, mk(1, i, 8, ASX_MSG_DATA), 0, NULL), 0);
	assert_int_equal(asx_msgq_count(asx_task_queue(asx_module_wr(g))), 2);
	assert_int_equal(asx_stream_flush(s, 0, 0), -EINVAL);
	assert_int_equal(asx_stream_flush(s, ASX_STREAM_FLUSHRW, 0), 0);
	assert_int_equal(asx_msgq_count(asx_stream_head_queue(s)), 0);
	/* only the FLUSH itself is left in the gate's queue */
	assert_int_equal(asx_msgq_count(asx_task_queue(asx_module_wr(g))), 1);
	asx_sem_post(&gt.sem);
	/* nothing of the flushed data arrives; the FLUSH is consumed */
	assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 100)), -ETIMEDOUT);
	assert_int_equal(asx_stream_put(s, mk(1, 42, 8, ASX_MSG_DATA), 0, NULL), 0);
	assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 5000)), 0);
	ids(m, &src, &seq);
	assert_int_equal(seq, 42);
	asx_msg_free_chain(m);
	asx_stream_close(s);
	asx_sem_destroy(&gt.sem);
}

/*
 * A put that waits on a full Task queue for longer than the slices it
 * waits in (it looks every 10 ms whether the Module was suspended) counts
 * one full wait in the queue's statistics and the msgq_block_full probe,
 * not one a slice.
 */
struct putter {
	struct asx_stream *s;
	int r;
};

static void *putter_main(void *arg)
{
	struct putter *p = arg;

	p->r = asx_stream_put(p->s, mk(1, 3, 40, ASX_MSG_DATA), 0, NULL);
	return NULL;
}

static void test_long_full_wait_counts_once(void **state)
{
	struct asx_stream *s;
	struct asx_module *g;
	struct asx_msgq_stats st;
	struct putter p;
	struct gate gt;
	struct asx_msg *m;
	struct timespec ts;
	uint32_t src, seq;
	pthread_t th;

	(void)state;
	assert_int_equal(asx_sem_init(&gt.sem, 0), 0);
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&g, "gate", &gate_wr_ops, NULL, &gt), 0);
	assert_int_equal(asx_stream_push(s, g, 0, NULL), 0);
	for (uint32_t i = 0; i < 3; i++)	/* 120 bytes: full */
		assert_int_equal(asx_stream_put(s, mk(1, i, 40, ASX_MSG_DATA), 0, NULL), 0);
	p = (struct putter){ .s = s };
	assert_int_equal(pthread_create(&th, NULL, putter_main, &p), 0);
	do {
		usleep(1000);
		asx_msgq_stats(asx_task_queue(asx_module_wr(g)), &st);
	} while (!st.full_waits);
	usleep(60000);		/* six slices and more */
	asx_msgq_stats(asx_task_queue(asx_module_wr(g)), &st);
	/* let it go before judging: a put left blocked would hold up RCU */
	asx_sem_post(&gt.sem);
	pthread_join(th, NULL);
	print_message("  a put blocked 60 ms: %llu full wait(s)\n",
		      (unsigned long long)st.full_waits);
	assert_int_equal(st.full_waits, 1);
	assert_int_equal(p.r, 0);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 5000)), 0);
		ids(m, &src, &seq);
		assert_int_equal(seq, i);
		asx_msg_free_chain(m);
	}
	asx_msgq_stats(asx_task_queue(asx_module_wr(g)), &st);
	assert_int_equal(st.full_waits, 1);
	asx_stream_close(s);
}

/* ---------------------------------------------------------------- ungetq, canput_next */

/* A Module without threads whose write-side queue the test uses directly. */
static struct asx_task *queue_task(struct asx_stream **sp)
{
	struct asx_module *mod;

	assert_int_equal(asx_stream_open(sp, NULL), 0);
	assert_int_equal(asx_module_create(&mod, "q", NULL, NULL, NULL), 0);
	assert_non_null(mod);
	assert_int_equal(asx_stream_push(*sp, mod, 0, NULL), 0);
	return asx_module_wr(mod);
}

static uint32_t seq_of(const struct asx_msg *m)
{
	uint32_t src, seq;

	ids(m, &src, &seq);
	return seq;
}

static void test_task_ungetq_order(void **state)
{
	struct asx_stream *s;
	struct asx_task *t;
	struct asx_msgq *q;
	struct asx_msg *a, *b, *h, *m;

	(void)state;
	t = queue_task(&s);
	q = asx_task_queue(t);
	a = mk(1, 1, 24, ASX_MSG_DATA);
	b = mk(1, 2, 40, ASX_MSG_DATA);
	assert_int_equal(asx_task_putq(t, a, NULL), 0);
	assert_int_equal(asx_task_putq(t, b, NULL), 0);
	assert_int_equal(asx_task_getq(t, &m, ASX_DEADLINE_NOW), 0);
	assert_ptr_equal(m, a);
	assert_int_equal(asx_msgq_bytes(q), 40);
	/* put back: at the head, ahead of b, and its bytes count again */
	assert_int_equal(asx_task_ungetq(t, a), 0);
	assert_int_equal(asx_msgq_count(q), 2);
	assert_int_equal(asx_msgq_bytes(q), 24 + 40);
	assert_int_equal(asx_task_getq(t, &m, ASX_DEADLINE_NOW), 0);
	assert_ptr_equal(m, a);
	assert_int_equal(seq_of(m), 1);
	assert_int_equal(asx_msgq_bytes(q), 40);
	/* and again, twice in a row: still first */
	assert_int_equal(asx_task_ungetq(t, a), 0);
	assert_int_equal(asx_task_getq(t, &m, ASX_DEADLINE_NOW), 0);
	assert_ptr_equal(m, a);
	assert_int_equal(asx_task_getq(t, &m, ASX_DEADLINE_NOW), 0);
	assert_ptr_equal(m, b);
	assert_true(asx_msgq_is_empty(q));
	assert_int_equal(asx_msgq_bytes(q), 0);

	/* the head exactly, ahead of a high-priority message too */
	h = mk(2, 0, 16, ASX_MSG_PCPROTO);
	assert_int_equal(asx_task_putq(t, h, NULL), 0);
	assert_int_equal(asx_task_ungetq(t, a), 0);
	assert_int_equal(asx_msgq_bytes(q), 16 + 24);
	assert_int_equal(asx_task_getq(t, &m, ASX_DEADLINE_NOW), 0);
	assert_ptr_equal(m, a);
	assert_int_equal(asx_task_getq(t, &m, ASX_DEADLINE_NOW), 0);
	assert_ptr_equal(m, h);
	asx_msg_free_chain(h);

	/* bad arguments: the message is still ours */
	assert_int_equal(asx_task_ungetq(NULL, a), -EINVAL);
	assert_int_equal(asx_task_ungetq(t, NULL), -EINVAL);
	assert_true(asx_msgq_is_empty(q));
	/* one left queued for close to free */
	assert_int_equal(asx_task_putq(t, b, NULL), 0);
	asx_msg_free_chain(a);
	asx_stream_close(s);
}

struct ungetq_call {
	struct asx_task *t;
	struct asx_msg *m;
	struct asx_sem done;
	int r;
};

static void *ungetq_main(void *arg)
{
	struct ungetq_call *c = arg;

	c->r = asx_task_ungetq(c->t, c->m);
	asx_sem_post(&c->done);
	return NULL;
}

static void test_task_ungetq_full_queue(void **state)
{
	struct ungetq_call c;
	struct asx_stream *s;
	struct asx_task *t;
	struct asx_msgq *q;
	struct asx_msg *x, *m;
	struct timespec ts;
	pthread_t th;
	int waited;

	(void)state;
	t = queue_task(&s);
	q = asx_task_queue(t);
	assert_int_equal(asx_task_set_water(t, 100, 50), 0);
	for (uint32_t i = 0; i < 3; i++)	/* 40, 80, 120 bytes: full */
		assert_int_equal(asx_task_putq(t, mk(1, i, 40, ASX_MSG_DATA), NULL), 0);
	assert_true(asx_msgq_is_full(q));
	x = mk(1, 99, 40, ASX_MSG_DATA);
	assert_int_equal(asx_task_putq(t, x, in_ms(&ts, 10)), -ETIMEDOUT);
	assert_int_equal(asx_msgq_count(q), 3);

	/* ungetq on the full queue returns at once; in a helper thread so
	 * that one that waits fails the test instead of hanging it */
	c = (struct ungetq_call){ .t = t, .m = x, .r = 1 };
	assert_int_equal(asx_sem_init(&c.done, 0), 0);
	assert_int_equal(pthread_create(&th, NULL, ungetq_main, &c), 0);
	waited = asx_sem_timedwait(&c.done, in_ms(&ts, 5000));
	if (waited)
		asx_stream_shutdown(s);	/* it waits: wake it (-ESHUTDOWN) */
	pthread_join(th, NULL);
	asx_sem_destroy(&c.done);
	if (c.r)
		asx_msg_free_chain(x);
	assert_int_equal(waited, 0);
	assert_int_equal(c.r, 0);
	assert_int_equal(asx_msgq_count(q), 4);
	assert_int_equal(asx_msgq_bytes(q), 160);
	assert_true(asx_msgq_is_full(q));
	assert_int_equal(asx_task_getq(t, &m, ASX_DEADLINE_NOW), 0);
	assert_ptr_equal(m, x);
	assert_int_equal(asx_msgq_bytes(q), 120);

	/* once the queues are shut down it does not take the message */
	asx_stream_shutdown(s);
	assert_int_equal(asx_task_ungetq(t, x), -ESHUTDOWN);
	assert_int_equal(asx_msgq_count(q), 3);
	assert_int_equal(asx_msgq_bytes(q), 120);
	asx_msg_free_chain(x);
	asx_stream_close(s);
}

/*
 * A service routine that puts each message back and takes it again (the
 * head of the queue must be that message, whatever else is queued), and
 * tries ungetq once more after getq said -ESHUTDOWN.
 */
struct putback {
	struct asx_sem gate;
	int rounds, mismatches, errors;
	int late_r;
};

static int putback_svc(struct asx_task *t)
{
	struct putback *pb = asx_module_arg(asx_task_module(t));
	struct asx_msg *m, *again, *spare;
	int r;

	asx_sem_wait(&pb->gate);
	while ((r = asx_task_getq(t, &m, NULL)) == 0) {
		pb->rounds++;
		if (asx_task_ungetq(t, m)) {
			pb->errors++;
			asx_msg_free_chain(m);
			continue;
		}
		if (asx_task_getq(t, &again, NULL)) {
			pb->errors++;
			break;
		}
		if (again != m)
			pb->mismatches++;
		if (asx_task_put_next(t, again, NULL))
			asx_msg_free_chain(again);
	}
	if (r != -ESHUTDOWN)
		return r;
	/* the Task is being removed: nothing may go on its queue any more */
	spare = mk(9, 9, 8, ASX_MSG_DATA);
	pb->late_r = asx_task_ungetq(t, spare);
	if (pb->late_r)
		asx_msg_free_chain(spare);
	return 0;
}

static int putback_open(struct asx_task *t, int argc, char **argv)
{
	return asx_task_activate(t, 1);
}

static const struct asx_task_ops putback_wr_ops = { .open = putback_open, .svc = putback_svc };

static void test_task_ungetq_in_svc(void **state)
{
	struct putback pb = { .late_r = 1 };
	struct asx_stream *s;
	struct asx_module *mod;
	struct asx_msg *m;
	struct timespec ts;

	(void)state;
	assert_int_equal(asx_sem_init(&pb.gate, 0), 0);
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&mod, "putback", &putback_wr_ops, NULL, &pb), 0);
	assert_int_equal(asx_stream_push(s, mod, 0, NULL), 0);
	/* queued while the service thread is held: several behind the first */
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(asx_stream_put(s, mk(1, i, 8, ASX_MSG_DATA), 0, NULL), 0);
	assert_int_equal(asx_msgq_count(asx_task_queue(asx_module_wr(mod))), 4);
	asx_sem_post(&pb.gate);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 5000)), 0);
		assert_int_equal(seq_of(m), i);
		asx_msg_free_chain(m);
	}
	/* removal waits for the service thread, which saw -ESHUTDOWN */
	assert_int_equal(asx_stream_remove(s, "putback"), 0);
	assert_int_equal(pb.rounds, 4);
	assert_int_equal(pb.mismatches, 0);
	assert_int_equal(pb.errors, 0);
	assert_int_equal(pb.late_r, -ESHUTDOWN);
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	asx_stream_close(s);
	asx_sem_destroy(&pb.gate);
}

/*
 * head -> "mb" (message-based) -> "gate" (task-based, held) -> loop: the
 * answer is the gate's queue, looked for through "mb" (whose own queue
 * is kept full and must not matter).
 */
static void test_task_canput_next(void **state)
{
	struct asx_module *mb, *g;
	struct asx_task *hw, *mbw, *gw;
	struct asx_stream *s;
	struct asx_msg *m;
	struct timespec ts;
	struct gate gt;

	(void)state;
	assert_false(asx_task_canput_next(NULL));
	assert_int_equal(asx_sem_init(&gt.sem, 0), 0);
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_module_create(&g, "gate", &gate_wr_ops, NULL, &gt), 0);	/* 100/50 */
	assert_int_equal(asx_stream_push(s, g, 0, NULL), 0);
	assert_int_equal(asx_module_create(&mb, "mb", NULL, NULL, NULL), 0);
	assert_int_equal(asx_stream_push(s, mb, 0, NULL), 0);
	hw = asx_module_wr(asx_stream_head(s));
	mbw = asx_module_wr(mb);
	gw = asx_module_wr(g);
	assert_int_equal(asx_task_set_water(mbw, 100, 50), 0);
	for (uint32_t i = 0; i < 3; i++)	/* never read: close frees them */
		assert_int_equal(asx_task_putq(mbw, mk(5, i, 40, ASX_MSG_DATA), NULL), 0);
	assert_true(asx_msgq_is_full(asx_task_queue(mbw)));

	assert_true(asx_task_canput_next(hw));
	assert_true(asx_task_canput_next(mbw));
	/* fill the gate's queue to high water */
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(asx_stream_put(s, mk(1, i, 40, ASX_MSG_DATA), 0, NULL), 0);
	assert_int_equal(asx_msgq_count(asx_task_queue(gw)), 3);
	assert_false(asx_task_canput_next(hw));
	assert_false(asx_task_canput_next(mbw));
	/* the gate's own next (the loop tail) is not full */
	assert_true(asx_task_canput_next(gw));
	/* nested (mb's put): queued past the high water mark, the wait for
	 * room owed and paid outside the read section, up to the deadline */
	assert_int_equal(asx_task_put_next(hw, mk(1, 99, 40, ASX_MSG_DATA), in_ms(&ts, 10)), 0);
	assert_int_equal(asx_msgq_count(asx_task_queue(gw)), 4);

	/* drain by hand (the service thread is held): 120 and 80 bytes are
	 * still above low water, so still full; 40 is below */
	assert_int_equal(asx_task_getq(gw, &m, ASX_DEADLINE_NOW), 0);
	asx_msg_free_chain(m);
	assert_int_equal(asx_task_getq(gw, &m, ASX_DEADLINE_NOW), 0);
	asx_msg_free_chain(m);
	assert_false(asx_task_canput_next(hw));
	assert_false(asx_task_canput_next(mbw));
	assert_int_equal(asx_task_getq(gw, &m, ASX_DEADLINE_NOW), 0);
	asx_msg_free_chain(m);
	assert_true(asx_task_canput_next(hw));
	assert_true(asx_task_canput_next(mbw));
	assert_int_equal(asx_stream_put(s, mk(1, 3, 40, ASX_MSG_DATA), ASX_STREAM_NOWAIT, NULL), 0);
	assert_true(asx_task_canput_next(hw));	/* 80 bytes, not full */

	asx_sem_post(&gt.sem);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 5000)), 0);
		assert_int_equal(seq_of(m), i ? 3 : 99);
		asx_msg_free_chain(m);
	}
	asx_stream_close(s);
	asx_sem_destroy(&gt.sem);
}

/*
 * Issue 27: against a reader that does not read, 2,000 high-priority
 * messages of 60 KB were all taken (120 MB held).  The head's read queue
 * holds 16 by default, or what asx_stream_opts.head_hipri_max says; the
 * rest get -ENOBUFS (the caller keeps them), counted in the queue's
 * statistics.  What was taken comes out exactly once, in order.
 */
static void hipri_flood(size_t max, uint32_t want)
{
	ASX_OPTS(struct asx_stream_opts, o, .head_hipri_max = max);
	struct asx_msgq_stats st;
	struct asx_stream *s;
	struct asx_msg *m;
	uint32_t i, ok = 0, refused = 0, src, seq;
	int r;

	assert_int_equal(asx_stream_open(&s, &o), 0);
	for (i = 0; i < 2000; i++) {
		m = mk(1, i, 60000, ASX_MSG_PCPROTO);
		r = asx_stream_put(s, m, ASX_STREAM_NOWAIT, NULL);
		if (r == 0) {
			ok++;
		} else {
			assert_int_equal(r, -ENOBUFS);
			assert_int_equal(m->type, ASX_MSG_PCPROTO);	/* still ours */
			asx_msg_free_chain(m);
			refused++;
		}
	}
	asx_msgq_stats(asx_stream_head_queue(s), &st);
	print_message("head_hipri_max %zu: %u taken, %u refused (stats %llu)\n", max, ok,
		      refused, (unsigned long long)st.hipri_refused);
	assert_int_equal(ok, want);
	assert_int_equal(refused, 2000 - want);
	assert_int_equal(st.hipri_refused, 2000 - want);
	for (i = 0; i < want; i++) {
		assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);
		assert_int_equal(m->type, ASX_MSG_PCPROTO);
		ids(m, &src, &seq);
		assert_int_equal(seq, i);
		asx_msg_free_chain(m);
	}
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	/* room again */
	assert_int_equal(asx_stream_put(s, mk(1, 0, 10, ASX_MSG_PCPROTO), 0, NULL), 0);
	asx_stream_close(s);
}

static void test_hipri_bounded_at_head(void **state)
{
	(void)state;
	hipri_flood(0, ASX_MSGQ_DEFAULT_HIPRI_MAX);
	hipri_flood(100, 100);
}

/*
 * No task-based Module: the last Task decides.  Going up, that is the
 * head's read queue, which fills while nobody reads the stream.
 */
static void test_task_canput_next_last_task(void **state)
{
	ASX_OPTS(struct asx_stream_opts, o, .head_hiwat = 100, .head_lowat = 50);
	struct asx_task *lr, *mbr;
	struct asx_module *mb;
	struct asx_stream *s;
	struct asx_msg *m;
	struct timespec ts;

	(void)state;
	assert_int_equal(asx_stream_open(&s, &o), 0);
	assert_int_equal(asx_module_create(&mb, "mb", NULL, NULL, NULL), 0);
	assert_int_equal(asx_stream_push(s, mb, 0, NULL), 0);	/* head mb loop */
	lr = asx_module_rd(asx_stream_tail(s));
	mbr = asx_module_rd(mb);
	assert_true(asx_task_canput_next(lr));
	assert_true(asx_task_canput_next(mbr));
	for (uint32_t i = 0; i < 3; i++)	/* 120 bytes at the head */
		assert_int_equal(asx_stream_put(s, mk(1, i, 40, ASX_MSG_DATA), 0, NULL), 0);
	assert_true(asx_msgq_is_full(asx_stream_head_queue(s)));
	assert_false(asx_task_canput_next(lr));
	assert_false(asx_task_canput_next(mbr));
	/* nested (mb's put): past the mark, the wait owed (see above) */
	assert_int_equal(asx_task_put_next(lr, mk(1, 99, 40, ASX_MSG_DATA), in_ms(&ts, 10)), 0);
	assert_int_equal(asx_msgq_count(asx_stream_head_queue(s)), 4);

	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);	/* 120 */
	asx_msg_free_chain(m);
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);	/* 80 */
	asx_msg_free_chain(m);
	assert_false(asx_task_canput_next(lr));
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);	/* 40 */
	asx_msg_free_chain(m);
	assert_true(asx_task_canput_next(lr));
	assert_true(asx_task_canput_next(mbr));
	m = mk(1, 3, 40, ASX_MSG_DATA);
	assert_int_equal(asx_task_put_next(lr, m, ASX_DEADLINE_NOW), 0);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);
		assert_int_equal(seq_of(m), i ? 3 : 99);
		asx_msg_free_chain(m);
	}
	asx_stream_close(s);
}

/* ---------------------------------------------------------------- modules */

static void test_inet_cksum(void **state)
{
	static const unsigned char rfc[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	unsigned char buf[1001], b[2];
	uint16_t c, c2;
	struct asx_msg *m, *p;
	size_t cuts[] = { 1, 3, 4, 7, 100, 301, 585 };

	(void)state;
	/* RFC 1071 section 3: sum 0xddf2, checksum 0x220d on the wire */
	c = asx_inet_cksum(rfc, sizeof(rfc));
	memcpy(b, &c, 2);
	assert_int_equal(b[0], 0x22);
	assert_int_equal(b[1], 0x0d);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	for (size_t n = 0; n <= sizeof(buf); n += 37) {
		c = asx_inet_cksum(buf, n);
		/* a buffer that carries its checksum sums to zero */
		unsigned char *with = malloc(n + 2);

		memcpy(with, &c, 2);
		memcpy(with + 2, buf, n);
		assert_int_equal(asx_inet_cksum(with, n + 2), 0);
		free(with);
	}
	/* a chain cut at odd and even places sums like the flat buffer */
	c = asx_inet_cksum(buf, sizeof(buf));
	m = NULL;
	for (size_t i = 0, at = 0; i <= ASX_ARRAY_SIZE_T(cuts); i++) {
		size_t end = i < ASX_ARRAY_SIZE_T(cuts) ? cuts[i] : sizeof(buf);

		p = asx_msg_alloc(end - at, ASX_MSG_DATA);
		asx_msg_append(p, buf + at, end - at);
		if (m)
			asx_msg_link(m, p);
		else
			m = p;
		at = end;
	}
	c2 = asx_msg_cksum(m);
	assert_int_equal(c, c2);
	asx_msg_free_chain(m);
}

/* A driver tail fed by the test: byte-stream chunks come up the read side. */
static void test_deframer_reassembly(void **state)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	struct asx_module *drv, *fr;
	struct asx_stream *s;
	unsigned char wire[20000];
	size_t wl = 0, at = 0;
	uint32_t seed = 12345;
	struct asx_msg *m;

	(void)state;
	assert_int_equal(asx_module_create(&drv, "wire", NULL, NULL, NULL), 0);
	o.driver = drv;
	assert_int_equal(asx_stream_open(&s, &o), 0);
	assert_int_equal(asx_mod_framer(&fr, "framer"), 0);
	assert_int_equal(asx_stream_push(s, fr, 0, NULL), 0);
	/* 50 frames of 0..400 bytes, each byte = frame number */
	for (int f = 0; f < 50; f++) {
		uint32_t len = (uint32_t)(f * 8 % 401);

		wire[wl++] = (unsigned char)(len >> 24);
		wire[wl++] = (unsigned char)(len >> 16);
		wire[wl++] = (unsigned char)(len >> 8);
		wire[wl++] = (unsigned char)len;
		memset(wire + wl, f, len);
		wl += len;
	}
	while (at < wl) {
		size_t n;

		seed = seed * 1103515245 + 12345;
		n = 1 + (seed >> 16) % 300;
		if (n > wl - at)
			n = wl - at;
		m = asx_msg_alloc(n, ASX_MSG_DATA);
		asx_msg_append(m, wire + at, n);
		at += n;
		assert_int_equal(asx_task_put_next(asx_module_rd(drv), m, NULL), 0);
	}
	for (int f = 0; f < 50; f++) {
		size_t len = (size_t)(f * 8 % 401);
		unsigned char *flat;

		assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);
		assert_int_equal(asx_msg_length(m), len);
		flat = malloc(len + 1);
		asx_msg_read(m, 0, flat, len);
		for (size_t i = 0; i < len; i++)
			assert_int_equal(flat[i], f);
		free(flat);
		asx_msg_free_chain(m);
	}
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	assert_int_equal(asx_mod_errors(fr), 0);
	/* the write side frames: through a checksum and back on a loop stream */
	asx_stream_close(s);
}

static void test_framer_cksum_no_headroom(void **state)
{
	struct asx_stream *s;
	struct asx_module *ck, *fr;
	struct asx_msg *m;
	unsigned char data[333];

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_cksum(&ck, "cksum"), 0);
	assert_int_equal(asx_stream_push(s, ck, 0, NULL), 0);
	assert_int_equal(asx_mod_framer(&fr, "framer"), 0);
	assert_int_equal(asx_stream_push(s, fr, 0, NULL), 0);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i ^ 0x5a);
	/* no headroom: both layers chain a header block in front */
	m = asx_msg_alloc(sizeof(data), ASX_MSG_DATA);
	asx_msg_append(m, data, sizeof(data));
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), 0);
	assert_int_equal(asx_msg_length(m), sizeof(data));
	{
		unsigned char back[sizeof(data)];

		asx_msg_read(m, 0, back, sizeof(back));
		assert_memory_equal(back, data, sizeof(data));
	}
	asx_msg_free_chain(m);
	/* a corrupted message coming up is dropped and counted */
	m = asx_msg_alloc(10, ASX_MSG_DATA);
	asx_msg_append(m, "\x01\x02\x00\x00\x00\x04" "abcd", 10);
	assert_int_equal(asx_task_put_next(asx_module_rd(asx_stream_tail(s)), m, NULL), 0);
	assert_int_equal(asx_mod_errors(ck), 1);
	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
	asx_stream_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_basics),
		cmocka_unit_test(test_sink_and_opts),
		cmocka_unit_test(test_counter_counts_before_passing_on),
		cmocka_unit_test(test_reconfigure),
		cmocka_unit_test(test_inet_cksum),
		cmocka_unit_test(test_deframer_reassembly),
		cmocka_unit_test(test_framer_cksum_no_headroom),
		cmocka_unit_test(test_hipri_and_flush),
		cmocka_unit_test(test_task_ungetq_order),
		cmocka_unit_test(test_task_ungetq_full_queue),
		cmocka_unit_test(test_task_ungetq_in_svc),
		cmocka_unit_test(test_task_canput_next),
		cmocka_unit_test(test_task_canput_next_last_task),
		cmocka_unit_test(test_hipri_bounded_at_head),
		cmocka_unit_test(test_flow_control),
		cmocka_unit_test(test_long_full_wait_counts_once),
		cmocka_unit_test(test_four_message_based),
		cmocka_unit_test(test_four_task_based),
		cmocka_unit_test(test_gp_while_svc_queue_full),
		cmocka_unit_test(test_gp_while_head_full_nested),
		cmocka_unit_test(test_gp_app_while_head_full_nested),
		cmocka_unit_test(test_gp_while_head_full_from_svc),
	};

	if (getenv("ASX_TEST_FILTER"))	/* e.g. ASX_TEST_FILTER='test_gp*' */
		cmocka_set_test_filter(getenv("ASX_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
