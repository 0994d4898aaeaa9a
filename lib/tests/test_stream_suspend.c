// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_stream_suspend.c - suspending and resuming one Module of a running
 * Stream: it holds what comes to it (both sides, message- and task-based),
 * with flow control, and lets it go in order on resume; a Module suspended
 * before its push starts suspended; removing or replacing a suspended
 * Module passes what it held through it; a reconfiguration elsewhere does
 * not wait for the resume; and a stress run of writers while Modules are
 * suspended, resumed and replaced: every message once, in order per
 * writer.
 *
 * Helper threads never call cmocka's assert_* (it longjmps); they record
 * what they saw and the main thread asserts.  alarm() is the watchdog: a
 * test that hangs is killed (and fails) instead of hanging the suite.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/modules.h>
#include <asx/stream.h>

#include "srcseq.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SLOW 5
#else
#define SLOW 1
#endif

static struct asx_msg *mk(uint32_t src, uint32_t seq, size_t len)
{
	return srcseq_make(src, seq, len, ASX_MSG_DATA);
}

#define ids srcseq_ids

static const struct timespec *in_ms(struct timespec *ts, unsigned int ms)
{
	return asx_deadline(ts, (uint64_t)ms * 1000000ULL * SLOW);
}

/* Put @n messages of source 0 from @first on, without waiting. */
static void put_n(struct asx_stream *s, uint32_t first, uint32_t n)
{
	for (uint32_t i = first; i < first + n; i++)
		assert_int_equal(asx_stream_put(s, mk(0, i, 16), 0, NULL), 0);
}

/* Take @n messages of source 0 from @first on, in order. */
static void get_n(struct asx_stream *s, uint32_t first, uint32_t n)
{
	struct timespec ts;

	for (uint32_t i = first; i < first + n; i++) {
		struct asx_msg *m;
		uint32_t src, seq;

		assert_int_equal(asx_stream_get(s, &m, 0, in_ms(&ts, 10000)), 0);
		ids(m, &src, &seq);
		asx_msg_free_chain(m);
		assert_int_equal(src, 0);
		assert_int_equal(seq, i);
	}
}

static void assert_none(struct asx_stream *s)
{
	struct asx_msg *m;

	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
}

/* A Module that counts what goes through its put, each side. */
static uint64_t tally_wr, tally_rd;

static int tally_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	__atomic_add_fetch(asx_task_is_wr(t) ? &tally_wr : &tally_rd, 1, __ATOMIC_RELAXED);
	return asx_task_put_next(t, m, dl);
}

static const struct asx_task_ops tally_ops = { .put = tally_put };

static struct asx_module *tally(const char *name)
{
	struct asx_module *mod;

	assert_int_equal(asx_module_create(&mod, name, &tally_ops, &tally_ops, NULL), 0);
	return mod;
}

static void reset_tally(void)
{
	__atomic_store_n(&tally_wr, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tally_rd, 0, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- holding */

static void run_holds(bool task_based)
{
	struct asx_stream *s;
	struct asx_module *c, *p;
	struct asx_counter cnt;

	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_counter(&c, "c"), 0);
	assert_int_equal(asx_mod_pass(&p, "p"), 0);
	assert_int_equal(asx_stream_push(s, c, 0, NULL), 0);
	assert_int_equal(asx_stream_push(s, p, 0, NULL), 0);
	if (task_based) {
		assert_int_equal(asx_task_activate(asx_module_wr(c), 1), 0);
		assert_int_equal(asx_task_activate(asx_module_rd(c), 1), 0);
	}
	assert_false(asx_module_suspended(c));
	assert_int_equal(asx_stream_suspend(s, "c"), 0);
	assert_int_equal(asx_stream_suspend(s, "c"), 0);	/* already: no error */
	assert_true(asx_module_suspended(c));
	assert_false(asx_module_suspended(p));
	put_n(s, 0, 50);
	usleep(20000);
	assert_none(s);
	assert_int_equal(asx_mod_counter_read(c, &cnt), 0);
	assert_int_equal(cnt.wr_msgs, 0);
	assert_int_equal(asx_stream_resume(s, "c"), 0);
	assert_false(asx_module_suspended(c));
	get_n(s, 0, 50);
	assert_int_equal(asx_mod_counter_read(c, &cnt), 0);
	assert_int_equal(cnt.wr_msgs, 50);
	assert_int_equal(cnt.rd_msgs, 50);

	/* the read side holds too: suspended while messages are below it */
	assert_int_equal(asx_module_suspend(c), 0);
	put_n(s, 50, 10);
	usleep(20000);
	assert_none(s);
	assert_int_equal(asx_module_resume(c), 0);
	get_n(s, 50, 10);
	assert_none(s);
	asx_stream_close(s);
}

static void test_holds_message_based(void **state)
{
	(void)state;
	run_holds(false);
}

static void test_holds_task_based(void **state)
{
	(void)state;
	run_holds(true);
}

static void test_errors(void **state)
{
	struct asx_stream *s;
	struct asx_module *p;

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_pass(&p, "p"), 0);
	assert_int_equal(asx_stream_push(s, p, 0, NULL), 0);
	assert_int_equal(asx_stream_suspend(s, "head"), -ENOENT);
	assert_int_equal(asx_stream_suspend(s, "nope"), -ENOENT);
	assert_int_equal(asx_stream_resume(s, "nope"), -ENOENT);
	assert_int_equal(asx_module_suspend(asx_stream_head(s)), -EINVAL);
	assert_int_equal(asx_module_suspend(asx_stream_tail(s)), -EINVAL);
	assert_int_equal(asx_stream_suspend(NULL, "p"), -EINVAL);
	assert_int_equal(asx_stream_suspend(s, NULL), -EINVAL);
	assert_int_equal(asx_module_suspend(NULL), -EINVAL);
	assert_false(asx_module_suspended(NULL));
	assert_int_equal(asx_stream_resume(s, "p"), 0);	/* not suspended: nothing to do */
	asx_stream_close(s);
}

/* ---------------------------------------------------------------- flow control */

struct blocked_writer {
	struct asx_stream *s;
	uint32_t first, n;
	int err, done;			/* done: atomic */
};

static void *blocked_main(void *arg)
{
	struct blocked_writer *w = arg;

	for (uint32_t i = w->first; i < w->first + w->n && !w->err; i++) {
		struct asx_msg *m = mk(0, i, 1024);

		w->err = asx_stream_put(w->s, m, 0, NULL);
		if (w->err)
			asx_msg_free_chain(m);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_flow_control(void **state)
{
	struct blocked_writer w;
	struct asx_stream *s;
	struct asx_module *c;
	struct timespec ts;
	pthread_t th;
	uint32_t k = 0;
	int r;

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_counter(&c, "c"), 0);
	assert_int_equal(asx_task_set_water(asx_module_wr(c), 4096, 1024), 0);
	assert_int_equal(asx_module_suspend(c), 0);	/* before the push */
	assert_int_equal(asx_stream_push(s, c, 0, NULL), 0);
	assert_true(asx_module_suspended(c));
	/* without waiting, the queue takes up to its high water mark */
	for (;;) {
		struct asx_msg *m = mk(0, k, 1024);

		r = asx_stream_put(s, m, ASX_STREAM_NOWAIT, NULL);
		if (r) {
			asx_msg_free_chain(m);
			break;
		}
		k++;
		assert_true(k < 100);
	}
	assert_int_equal(r, -EWOULDBLOCK);
	assert_true(k >= 4 && k <= 5);
	/* with a deadline, a put waits for it */
	{
		struct asx_msg *m = mk(0, k, 1024);

		assert_int_equal(asx_stream_put(s, m, 0, asx_deadline(&ts, 30000000)), -ETIMEDOUT);
		asx_msg_free_chain(m);
	}
	/* a writer without one blocks until the resume */
	w = (struct blocked_writer){ .s = s, .first = k, .n = 100 };
	assert_int_equal(pthread_create(&th, NULL, blocked_main, &w), 0);
	usleep(50000);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	assert_none(s);
	assert_int_equal(asx_stream_resume(s, "c"), 0);
	get_n(s, 0, k + 100);
	pthread_join(th, NULL);
	assert_int_equal(w.err, 0);
	assert_none(s);
	asx_stream_close(s);
}

/* ---------------------------------------------------------------- reconfiguration */

/* A Stream with a suspended tally Module "t" holding messages 0..@n-1. */
static struct asx_stream *suspended_tally(uint32_t n)
{
	struct asx_stream *s;

	reset_tally();
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_stream_push(s, tally("t"), 0, NULL), 0);
	assert_int_equal(asx_stream_suspend(s, "t"), 0);
	put_n(s, 0, n);
	return s;
}

static void test_remove_suspended_passes_through(void **state)
{
	struct asx_stream *s;

	(void)state;
	s = suspended_tally(20);
	usleep(10000);
	assert_none(s);
	assert_int_equal(asx_stream_remove(s, "t"), 0);
	get_n(s, 0, 20);
	/* each went down through it; the loop's way back up did not */
	assert_int_equal(__atomic_load_n(&tally_wr, __ATOMIC_RELAXED), 20);
	assert_none(s);
	asx_stream_close(s);
}

static void test_replace_suspended(void **state)
{
	struct asx_stream *s;
	struct asx_module *np;

	(void)state;
	s = suspended_tally(20);
	assert_int_equal(asx_mod_pass(&np, "t"), 0);
	assert_int_equal(asx_stream_replace(s, "t", np, 0, NULL), 0);
	assert_false(asx_module_suspended(np));
	get_n(s, 0, 20);
	assert_int_equal(__atomic_load_n(&tally_wr, __ATOMIC_RELAXED), 20);
	put_n(s, 20, 5);
	get_n(s, 20, 5);
	assert_int_equal(__atomic_load_n(&tally_wr, __ATOMIC_RELAXED), 20);

	/* a replacement suspended before the replace starts suspended */
	{
		struct asx_module *t2 = tally("t");

		assert_int_equal(asx_module_suspend(t2), 0);
		assert_int_equal(asx_stream_replace(s, "t", t2, 0, NULL), 0);
		assert_true(asx_module_suspended(t2));
		put_n(s, 25, 5);
		usleep(10000);
		assert_none(s);
		assert_int_equal(asx_stream_resume(s, "t"), 0);
		get_n(s, 25, 5);
	}
	asx_stream_close(s);
}

/*
 * A writer blocked on a suspended Module's full queue waits inside its
 * read-side section; a replace elsewhere in the Stream must not wait for
 * the resume to get its grace period.
 */
static void test_reconfigure_while_blocked(void **state)
{
	struct blocked_writer w;
	struct asx_stream *s;
	struct asx_module *b, *a, *a2;
	pthread_t th;

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_counter(&b, "b"), 0);
	assert_int_equal(asx_mod_pass(&a, "a"), 0);
	assert_int_equal(asx_task_set_water(asx_module_wr(b), 4096, 1024), 0);
	assert_int_equal(asx_stream_push(s, b, 0, NULL), 0);
	assert_int_equal(asx_stream_push(s, a, 0, NULL), 0);
	assert_int_equal(asx_stream_suspend(s, "b"), 0);
	w = (struct blocked_writer){ .s = s, .first = 0, .n = 40 };
	assert_int_equal(pthread_create(&th, NULL, blocked_main, &w), 0);
	usleep(50000);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	assert_int_equal(asx_mod_pass(&a2, "a"), 0);
	assert_int_equal(asx_stream_replace(s, "a", a2, 0, NULL), 0);	/* alarm() if it hangs */
	assert_int_equal(asx_stream_insert(s, "b", tally("t"), 0, NULL), 0);
	assert_int_equal(asx_stream_resume(s, "b"), 0);
	get_n(s, 0, 40);
	pthread_join(th, NULL);
	assert_int_equal(w.err, 0);
	asx_stream_close(s);
}

/* ---------------------------------------------------------------- stress */

#define NW 4

struct sw {
	struct asx_stream *s;
	uint32_t src, min;
	uint32_t n;			/* atomic: written so far */
	int err, done;			/* done: atomic */
	const int *stop;		/* atomic: write no more once set (and min written) */
};

static void *sw_main(void *arg)
{
	struct sw *w = arg;
	uint32_t i;

	for (i = 0; i < w->min || !__atomic_load_n(w->stop, __ATOMIC_ACQUIRE); i++) {
		struct asx_msg *m = mk(w->src, i, 16 + i % 200);
		int r = asx_stream_put(w->s, m, 0, NULL);

		if (r) {
			asx_msg_free_chain(m);
			w->err = r;
			break;
		}
		__atomic_store_n(&w->n, i + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Reads source 0's numbered messages until told how many there are. */
struct sr {
	struct asx_stream *s;
	uint32_t next, bad;
	uint32_t total;			/* atomic: valid once stop is set */
	int stop;			/* atomic */
};

static void *sr_main(void *arg)
{
	struct sr *r = arg;
	uint64_t idle_since = asx_now_ns();
	struct timespec ts;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE) ||
	       r->next + r->bad < __atomic_load_n(&r->total, __ATOMIC_ACQUIRE)) {
		struct asx_msg *m;
		uint32_t src, seq;

		if (asx_stream_get(r->s, &m, 0, in_ms(&ts, 100))) {
			if (asx_now_ns() - idle_since > 30000000000ULL * SLOW)
				break;	/* stuck: the count check fails */
			continue;
		}
		idle_since = asx_now_ns();
		ids(m, &src, &seq);
		asx_msg_free_chain(m);
		if (src == 0 && seq == r->next)
			r->next++;
		else
			r->bad++;
	}
	return NULL;
}

/*
 * A writer goes on while a message-based Module is suspended, holds
 * messages and is then removed (or popped): what it held must come out
 * before anything newer.  Before the fix the newer messages went round it
 * at once, and the thousands it held came after them.
 */
static void test_remove_suspended_keeps_order(void **state)
{
	const int rounds = 8;
	struct asx_module *b, *t;
	struct asx_stream *s;
	struct sr rd;
	struct sw w;
	pthread_t tw, tr;
	int stop = 0;

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_pass(&b, "b"), 0);
	assert_int_equal(asx_stream_push(s, b, 0, NULL), 0);
	rd = (struct sr){ .s = s };
	w = (struct sw){ .s = s, .src = 0, .min = 1000, .stop = &stop };
	assert_int_equal(pthread_create(&tr, NULL, sr_main, &rd), 0);
	assert_int_equal(pthread_create(&tw, NULL, sw_main, &w), 0);
	for (int i = 0; i < rounds; i++) {
		assert_int_equal(asx_mod_pass(&t, "t"), 0);
		assert_int_equal(asx_stream_push(s, t, 0, NULL), 0);
		usleep(5000);
		assert_int_equal(asx_stream_suspend(s, "t"), 0);
		usleep(20000);		/* it fills up to its high-water mark */
		if (i % 2)
			assert_int_equal(asx_stream_pop(s), 0);
		else
			assert_int_equal(asx_stream_remove(s, "t"), 0);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(tw, NULL);
	assert_int_equal(w.err, 0);
	__atomic_store_n(&rd.total, w.n, __ATOMIC_RELEASE);
	__atomic_store_n(&rd.stop, 1, __ATOMIC_RELEASE);
	pthread_join(tr, NULL);
	print_message("%u messages over %d removals of a suspended Module, %u out of order\n",
		      w.n, rounds, rd.bad);
	assert_int_equal(rd.bad, 0);
	assert_int_equal(rd.next, w.n);
	assert_none(s);
	asx_stream_close(s);
}

struct toggler {
	struct asx_stream *s;
	unsigned int rounds, seed;
	int err;
	unsigned int done;		/* atomic */
	int stop;			/* atomic: the toggler is through */
};

static void *toggler_main(void *arg)
{
	static const char *const names[] = { "p1", "c", "p2" };
	struct toggler *t = arg;
	unsigned int i;

	for (i = 0; i < t->rounds && !t->err; i++) {
		const char *name = names[i % 3];
		struct asx_module *mod;

		t->err = asx_stream_suspend(t->s, name);
		if (!t->err)
			usleep(rand_r(&t->seed) % 300);
		if (!t->err && i % 7 == 0) {
			/* replace a suspended one: what it held goes through it */
			t->err = asx_mod_pass(&mod, name);
			if (!t->err && rand_r(&t->seed) % 2)
				t->err = asx_module_suspend(mod);	/* starts suspended */
			if (!t->err)
				t->err = asx_stream_replace(t->s, name, mod, 0, NULL);
			if (t->err)
				asx_module_destroy(mod);
		}
		if (!t->err)
			t->err = asx_stream_resume(t->s, name);
		if (!t->err)
			usleep(rand_r(&t->seed) % 300);
		__atomic_store_n(&t->done, i + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The most memory this process has used, MB. */
#define MAX_RSS_MB 1024
static long max_rss_mb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : ru.ru_maxrss / 1024;
}

static bool writers_done(const struct sw *w, uint64_t *total)
{
	*total = 0;
	for (int i = 0; i < NW; i++) {
		if (!__atomic_load_n(&w[i].done, __ATOMIC_ACQUIRE))
			return false;
		*total += w[i].n;
	}
	return true;
}

/*
 * Four writers put numbered messages of varied lengths while a toggler
 * suspends, resumes and replaces (suspended) Modules 1,000 times: a
 * message-based pass at the top, a counter with a service thread per
 * side, a pass above the loop-back tail.
 */
static void test_stress(void **state)
{
	const unsigned int rounds = 1000 / SLOW;
	struct asx_module *p1, *c, *p2;
	struct asx_stream *s;
	struct sw w[NW];
	struct toggler tg;
	pthread_t th[NW], tt;
	uint32_t next[NW] = { 0 };
	uint64_t got = 0, bad = 0, total = 0;
	struct timespec ts;
	uint64_t idle_since = asx_now_ns();

	(void)state;
	assert_int_equal(asx_stream_open(&s, NULL), 0);
	assert_int_equal(asx_mod_pass(&p2, "p2"), 0);
	assert_int_equal(asx_mod_counter(&c, "c"), 0);
	assert_int_equal(asx_mod_pass(&p1, "p1"), 0);
	assert_int_equal(asx_stream_push(s, p2, 0, NULL), 0);
	assert_int_equal(asx_stream_push(s, c, 0, NULL), 0);
	assert_int_equal(asx_stream_push(s, p1, 0, NULL), 0);
	assert_int_equal(asx_task_activate(asx_module_wr(c), 1), 0);
	assert_int_equal(asx_task_activate(asx_module_rd(c), 1), 0);
	tg = (struct toggler){ .s = s, .rounds = rounds, .seed = 42 };
	for (int i = 0; i < NW; i++) {
		w[i] = (struct sw){ .s = s, .src = (uint32_t)i, .min = 20000 / SLOW,
				    .stop = &tg.stop };
		assert_int_equal(pthread_create(&th[i], NULL, sw_main, &w[i]), 0);
	}
	assert_int_equal(pthread_create(&tt, NULL, toggler_main, &tg), 0);
	while (!writers_done(w, &total) || got < total) {
		struct asx_msg *m;
		uint32_t src, seq;

		if (asx_stream_get(s, &m, 0, in_ms(&ts, 100))) {
			/* nothing for 30 s (x SLOW): stuck, not slow */
			if (asx_now_ns() - idle_since > 30000000000ULL * SLOW)
				break;
			continue;
		}
		idle_since = asx_now_ns();
		/* held messages are bounded by flow control: a queue that
		 * grows without bound fails here, not in the OOM killer */
		if (got % 65536 == 0 && max_rss_mb() > MAX_RSS_MB) {
			print_message("memory: %ld MB after %llu messages\n", max_rss_mb(),
				      (unsigned long long)got);
			asx_msg_free_chain(m);
			break;
		}
		ids(m, &src, &seq);
		if (src >= NW || seq != next[src] || asx_msg_length(m) != 16 + seq % 200) {
			if (!bad++)
				print_message("first bad: src %u seq %u, expected %u (round %u)\n", src,
					      seq, src < NW ? next[src] : 0,
					      __atomic_load_n(&tg.done, __ATOMIC_RELAXED));
		} else {
			next[src]++;
		}
		asx_msg_free_chain(m);
		got++;
	}
	pthread_join(tt, NULL);
	for (int i = 0; i < NW; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(w[i].err, 0);
		assert_int_equal(next[i], w[i].n);	/* each once, in order */
	}
	assert_int_equal(tg.err, 0);
	print_message("suspend stress: %llu messages, %u suspend/resume rounds\n",
		      (unsigned long long)got, tg.done);
	assert_int_equal(tg.done, rounds);
	assert_int_equal(got, total);
	assert_int_equal(bad, 0);
	assert_true(max_rss_mb() <= MAX_RSS_MB);
	assert_none(s);
	asx_stream_close(s);
}

static int watchdog(void **state)
{
	(void)state;
	alarm(120 * SLOW);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_holds_message_based, watchdog),
		cmocka_unit_test_setup(test_holds_task_based, watchdog),
		cmocka_unit_test_setup(test_errors, watchdog),
		cmocka_unit_test_setup(test_flow_control, watchdog),
		cmocka_unit_test_setup(test_remove_suspended_passes_through, watchdog),
		cmocka_unit_test_setup(test_replace_suspended, watchdog),
		cmocka_unit_test_setup(test_reconfigure_while_blocked, watchdog),
		cmocka_unit_test_setup(test_remove_suspended_keeps_order, watchdog),
		cmocka_unit_test_setup(test_stress, watchdog),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
