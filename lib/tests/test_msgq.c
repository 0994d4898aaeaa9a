// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_msgq.c - the message queue: ordering, flow control with
 * hysteresis, blocking / non-blocking / timed calls, deactivate, pulse,
 * notification, and a 4 x 4 producer/consumer stress test.
 *
 * Helper threads never call cmocka's assert_* (it longjmps); they record
 * what they saw and the main thread asserts.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/msgq.h>
#include <asx/sync.h>

static struct asx_msg *mk(size_t len, unsigned int type, uint8_t band, uint32_t tag)
{
	struct asx_msg *m = asx_msg_alloc(len < 4 ? 4 : len, type);

	assert_non_null(m);
	m->band = band;
	memset(asx_msg_wr(m), 0, asx_msg_space(m));
	memcpy(asx_msg_wr(m), &tag, sizeof(tag));
	assert_int_equal(asx_msg_commit(m, len), 0);
	return m;
}

static uint32_t tag_of(const struct asx_msg *m)
{
	uint32_t t;

	memcpy(&t, asx_msg_rd(m), sizeof(t));
	return t;
}

static uint32_t get_tag(struct asx_msgq *q)
{
	struct asx_msg *m = NULL;
	uint32_t t;

	assert_int_equal(asx_msgq_dequeue(q, &m, ASX_MSGQ_NOWAIT, NULL), 0);
	t = tag_of(m);
	asx_msg_free_chain(m);
	return t;
}

/* Poll (up to 5 s) until @fn(q) reaches @want. */
static void wait_stat(struct asx_msgq *q, size_t off, uint64_t want)
{
	struct asx_msgq_stats st;
	int i;

	for (i = 0; i < 5000; i++) {
		asx_msgq_stats(q, &st);
		if (*(uint64_t *)((char *)&st + off) >= want)
			return;
		usleep(1000);
	}
	fail_msg("statistic at offset %zu never reached %llu", off, (unsigned long long)want);
}

#define WAIT_STAT(q, field, n) wait_stat(q, offsetof(struct asx_msgq_stats, field), n)

static void test_create_and_water_marks(void **state)
{
	struct asx_msgq *q;

	(void)state;
	q = (struct asx_msgq *)&q;	/* left alone on failure */
	assert_int_equal(asx_msgq_create(&q, 0, 10), -EINVAL);
	assert_int_equal(asx_msgq_create(&q, 10, 11), -EINVAL);
	assert_ptr_equal(q, (struct asx_msgq *)&q);
	assert_int_equal(asx_msgq_create(NULL, 0, 0), -EINVAL);
	assert_int_equal(asx_msgq_create(&q, 0, 0), 0);
	assert_non_null(q);
	assert_int_equal(asx_msgq_hiwat(q), ASX_MSGQ_DEFAULT_HIWAT);
	assert_int_equal(asx_msgq_lowat(q), ASX_MSGQ_DEFAULT_LOWAT);
	assert_int_equal(asx_msgq_set_water(q, 0, 0), -EINVAL);
	assert_int_equal(asx_msgq_set_water(q, 10, 20), -EINVAL);
	assert_int_equal(asx_msgq_set_water(q, 1000, 500), 0);
	assert_int_equal(asx_msgq_set_lowat(q, 1001), -EINVAL);
	assert_int_equal(asx_msgq_set_hiwat(q, 499), -EINVAL);
	assert_int_equal(asx_msgq_set_hiwat(q, 2000), 0);
	assert_int_equal(asx_msgq_set_lowat(q, 100), 0);
	assert_int_equal(asx_msgq_hiwat(q), 2000);
	assert_int_equal(asx_msgq_lowat(q), 100);
	assert_true(asx_msgq_is_empty(q));
	assert_false(asx_msgq_is_full(q));
	assert_true(asx_msgq_is_active(q));
	asx_msgq_destroy(q);
}

static void test_invalid_args(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	struct asx_msg *m = mk(4, ASX_MSG_DATA, 0, 1);
	struct timespec bad = { .tv_sec = 0, .tv_nsec = 2000000000L };

	(void)state;
	assert_int_equal(asx_msgq_enqueue(q, NULL, 0, NULL), -EINVAL);
	assert_int_equal(asx_msgq_enqueue(q, m, 0x100, NULL), -EINVAL);
	assert_int_equal(asx_msgq_enqueue(q, m, ASX_MSGQ_HEAD | ASX_MSGQ_TAIL, NULL), -EINVAL);
	assert_int_equal(asx_msgq_enqueue(q, m, 0, &bad), -EINVAL);
	assert_int_equal(asx_msgq_dequeue(q, NULL, 0, NULL), -EINVAL);
	assert_int_equal(asx_msgq_dequeue(q, &m, ASX_MSGQ_HEAD, NULL), -EINVAL);
	assert_int_equal(asx_msgq_count(q), 0);
	asx_msg_free(m);
	asx_msgq_destroy(q);
}

static void test_fifo_counts(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 1 << 20, 1 << 10), 0);
	struct asx_msg *m = mk(10, ASX_MSG_DATA, 0, 0), *p;
	uint32_t i;

	(void)state;
	asx_msg_link(m, mk(20, ASX_MSG_DATA, 0, 0));	/* a 2-block chain: 30 bytes */
	assert_int_equal(asx_msgq_enqueue(q, m, 0, NULL), 0);
	for (i = 1; i <= 5; i++)
		assert_int_equal(asx_msgq_enqueue(q, mk(100, ASX_MSG_DATA, 0, i), 0, NULL), 0);
	assert_int_equal(asx_msgq_count(q), 6);
	assert_int_equal(asx_msgq_bytes(q), 530);
	assert_int_equal(asx_msgq_peek(q, &p), 0);
	assert_ptr_equal(p, m);
	assert_int_equal(get_tag(q), 0);
	assert_int_equal(asx_msgq_bytes(q), 500);
	for (i = 1; i <= 5; i++)
		assert_int_equal(get_tag(q), i);
	assert_true(asx_msgq_is_empty(q));
	assert_int_equal(asx_msgq_bytes(q), 0);
	assert_int_equal(asx_msgq_peek(q, &p), -EWOULDBLOCK);
	asx_msgq_destroy(q);
}

static void test_priority_order(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 1 << 20, 1 << 10), 0);

	(void)state;
	/* tag = expected dequeue position */
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 0, 8), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 3, 5), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_PCPROTO, 0, 1), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 0, 9), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_PROTO, 3, 6), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 9, 4), 0, NULL), 0);
	/* hipri ignore their band and stay FIFO among themselves */
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_HANGUP, 0, 2), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_PCUSER, 200, 3), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 1, 7), 0, NULL), 0);
	/* TAIL: exactly at the tail whatever the band */
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 250, 10), ASX_MSGQ_TAIL, NULL), 0);
	/* HEAD: exactly at the head, even ahead of high-priority messages */
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 0, 0), ASX_MSGQ_HEAD, NULL), 0);
	for (uint32_t i = 0; i <= 10; i++)
		assert_int_equal(get_tag(q), i);
	assert_true(asx_msgq_is_empty(q));

	/* a hipri after the queue drained of hipri goes to the head again */
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 0, 1), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_ERROR, 0, 0), 0, NULL), 0);
	assert_int_equal(get_tag(q), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_FLUSH, 0, 0), 0, NULL), 0);
	assert_int_equal(get_tag(q), 0);
	assert_int_equal(get_tag(q), 1);
	asx_msgq_destroy(q);
}

struct freecount {
	int calls;
};

static void count_free(void *buf, void *arg)
{
	__atomic_fetch_add(&((struct freecount *)arg)->calls, 1, __ATOMIC_RELAXED);
	free(buf);
}

static struct asx_msg *mk_wrapped(size_t len, uint8_t band, unsigned int type,
				  struct freecount *fc)
{
	struct asx_msg *m = asx_msg_wrap(calloc(1, len), len, count_free, fc);

	assert_non_null(m);
	m->type = (uint8_t)type;
	m->band = band;
	return m;
}

static void test_flush(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 1 << 20, 1 << 10), 0);
	struct freecount fc = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 6; i++)
		assert_int_equal(asx_msgq_enqueue(q, mk_wrapped(10, (uint8_t)(i % 3), ASX_MSG_DATA, &fc),
						  0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk_wrapped(10, 1, ASX_MSG_PCPROTO, &fc), 0, NULL), 0);
	assert_int_equal(asx_msgq_flush_band(q, 1), 2);	/* the hipri of "band 1" stays */
	assert_int_equal(fc.calls, 2);
	assert_int_equal(asx_msgq_count(q), 5);
	assert_int_equal(asx_msgq_bytes(q), 50);
	assert_int_equal(asx_msgq_flush_band(q, 7), 0);
	assert_int_equal(asx_msgq_flush(q), 5);
	assert_int_equal(fc.calls, 7);
	assert_int_equal(asx_msgq_count(q), 0);
	assert_int_equal(asx_msgq_bytes(q), 0);
	assert_int_equal(asx_msgq_flush(q), 0);

	/* the queue still works after a flush, in priority order */
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_DATA, 0, 1), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(8, ASX_MSG_PCPROTO, 0, 0), 0, NULL), 0);
	assert_int_equal(get_tag(q), 0);
	/* destroy frees what is left (LeakSanitizer) */
	assert_int_equal(asx_msgq_enqueue(q, mk_wrapped(10, 0, ASX_MSG_DATA, &fc), 0, NULL), 0);
	asx_msgq_destroy(q);
	assert_int_equal(fc.calls, 8);
}

static void test_nonblocking_both_directions(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	struct asx_msg *m = NULL, *extra;

	(void)state;
	assert_int_equal(asx_msgq_dequeue(q, &m, ASX_MSGQ_NOWAIT, NULL), -EWOULDBLOCK);
	assert_null(m);
	assert_int_equal(asx_msgq_enqueue(q, mk(60, ASX_MSG_DATA, 0, 1), ASX_MSGQ_NOWAIT, NULL), 0);
	assert_false(asx_msgq_is_full(q));
	assert_int_equal(asx_msgq_enqueue(q, mk(60, ASX_MSG_DATA, 0, 2), ASX_MSGQ_NOWAIT, NULL), 0);
	assert_true(asx_msgq_is_full(q));		/* 120 >= 100 */
	extra = mk(1, ASX_MSG_DATA, 0, 3);
	assert_int_equal(asx_msgq_enqueue(q, extra, ASX_MSGQ_NOWAIT, NULL), -EWOULDBLOCK);
	assert_int_equal(asx_msgq_count(q), 2);
	assert_int_equal(tag_of(extra), 3);		/* still ours, untouched */
	asx_msg_free(extra);
	asx_msgq_destroy(q);
}

static void test_timeouts(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	struct asx_msg *m = NULL, *extra;
	struct timespec dl;
	uint64_t t0, el;

	(void)state;
	t0 = asx_now_ns();
	assert_int_equal(asx_msgq_dequeue(q, &m, 0, asx_deadline(&dl, 50000000)), -ETIMEDOUT);
	el = asx_now_ns() - t0;
	assert_true(el >= 50000000);
	assert_null(m);

	assert_int_equal(asx_msgq_enqueue(q, mk(100, ASX_MSG_DATA, 0, 1), 0, NULL), 0);
	extra = mk(10, ASX_MSG_DATA, 0, 2);
	t0 = asx_now_ns();
	assert_int_equal(asx_msgq_enqueue(q, extra, 0, asx_deadline(&dl, 30000000)), -ETIMEDOUT);
	el = asx_now_ns() - t0;
	assert_true(el >= 30000000);
	assert_int_equal(asx_msgq_count(q), 1);
	asx_msg_free(extra);

	/* a deadline already past: no wait, -ETIMEDOUT */
	assert_int_equal(asx_msgq_enqueue(q, mk(10, ASX_MSG_DATA, 0, 2), ASX_MSGQ_FORCE, NULL), 0);
	asx_msgq_flush(q);
	dl.tv_sec = 0;
	dl.tv_nsec = 0;
	assert_int_equal(asx_msgq_dequeue(q, &m, 0, &dl), -ETIMEDOUT);
	asx_msgq_destroy(q);
}

/* A timed dequeue that is satisfied before its deadline returns the message. */
struct delayed {
	struct asx_msgq *q;
	useconds_t us;
};

static void *put_later(void *arg)
{
	struct delayed *d = arg;
	struct asx_msg *m = asx_msg_alloc(4, ASX_MSG_DATA);

	usleep(d->us);
	asx_msg_append(m, "late", 4);
	if (asx_msgq_enqueue(d->q, m, 0, NULL))
		asx_msg_free(m);
	return NULL;
}

/*
 * With the lock statistics on, a consumer's wait on an empty queue and a
 * producer's on a full one each count as a wait, for as long as they
 * lasted (asx-bench arch reads LP's Task queue waits there); off, nothing.
 */
static void test_waits_in_lockstat(void **state)
{
	struct asx_msgq *q = NULL;
	struct asx_lockstat ls;
	struct asx_msg *m = NULL, *extra;
	struct timespec dl;

	(void)state;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	asx_lockstat_reset();
	assert_int_equal(asx_msgq_dequeue(q, &m, 0, asx_deadline(&dl, 1000000)), -ETIMEDOUT);
	asx_lockstat_read(&ls);
	assert_int_equal(ls.waits, 0);
	asx_lockstat_enable(true);
	assert_int_equal(asx_msgq_dequeue(q, &m, 0, asx_deadline(&dl, 20000000)), -ETIMEDOUT);
	assert_int_equal(asx_msgq_enqueue(q, mk(100, ASX_MSG_DATA, 0, 1), 0, NULL), 0);
	extra = mk(10, ASX_MSG_DATA, 0, 2);
	assert_int_equal(asx_msgq_enqueue(q, extra, 0, asx_deadline(&dl, 20000000)), -ETIMEDOUT);
	/* a message there: no wait */
	assert_int_equal(asx_msgq_dequeue(q, &m, 0, NULL), 0);
	asx_lockstat_enable(false);
	asx_lockstat_read(&ls);
	assert_int_equal(ls.waits, 2);
	assert_true(ls.wait_ns >= 40000000);
	asx_msg_free_chain(m);
	asx_msg_free_chain(extra);
	asx_msgq_destroy(q);
	asx_lockstat_reset();
}

static void test_timed_wait_satisfied(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	struct delayed d = { q, 20000 };
	struct asx_msg *m = NULL;
	struct timespec dl;
	pthread_t t;

	(void)state;
	pthread_create(&t, NULL, put_later, &d);
	assert_int_equal(asx_msgq_dequeue(q, &m, 0, asx_deadline(&dl, 5000000000ULL)), 0);
	assert_memory_equal(asx_msg_rd(m), "late", 4);
	asx_msg_free(m);
	pthread_join(t, NULL);
	asx_msgq_destroy(q);
}

struct waiter {
	struct asx_msgq *q;
	int producer;
	int ret;
	struct asx_msg *m;	/* message to put, or the one got */
	int done;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	int r;

	if (w->producer) {
		r = asx_msgq_enqueue(w->q, w->m, 0, NULL);
		if (!r)
			w->m = NULL;
	} else {
		r = asx_msgq_dequeue(w->q, &w->m, 0, NULL);
	}
	w->ret = r;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

#define NW 3

static void test_deactivate_wakes_producers_and_consumers(void **state)
{
	struct asx_msgq *empty = NULL, *full = NULL;
	assert_int_equal(asx_msgq_create(&empty, 100, 50), 0);
	assert_int_equal(asx_msgq_create(&full, 100, 50), 0);
	struct waiter w[2 * NW];
	pthread_t t[2 * NW];
	struct asx_msg *m;
	int i;

	(void)state;
	assert_int_equal(asx_msgq_enqueue(full, mk(100, ASX_MSG_DATA, 0, 0), 0, NULL), 0);
	for (i = 0; i < 2 * NW; i++) {
		w[i] = (struct waiter){ .q = i < NW ? empty : full, .producer = i >= NW };
		if (w[i].producer)
			w[i].m = mk(10, ASX_MSG_DATA, 0, (uint32_t)i);
		pthread_create(&t[i], NULL, waiter_main, &w[i]);
	}
	/* all of them found the queue empty / full and are waiting, most asleep */
	WAIT_STAT(empty, empty_waits, NW);
	WAIT_STAT(full, full_waits, NW);
	WAIT_STAT(empty, sleeps, NW);
	WAIT_STAT(full, sleeps, NW);
	for (i = 0; i < 2 * NW; i++)
		assert_int_equal(__atomic_load_n(&w[i].done, __ATOMIC_ACQUIRE), 0);

	asx_msgq_deactivate(empty);
	asx_msgq_deactivate(full);
	for (i = 0; i < 2 * NW; i++) {
		pthread_join(t[i], NULL);
		assert_int_equal(w[i].ret, -ESHUTDOWN);
		if (w[i].producer) {
			assert_non_null(w[i].m);	/* not consumed: still the caller's */
			asx_msg_free(w[i].m);
		}
	}
	/* later calls fail too, messages stay */
	m = mk(1, ASX_MSG_PCPROTO, 0, 9);
	assert_int_equal(asx_msgq_enqueue(full, m, ASX_MSGQ_NOWAIT, NULL), -ESHUTDOWN);
	assert_int_equal(asx_msgq_dequeue(full, &m, 0, NULL), -ESHUTDOWN);
	assert_int_equal(asx_msgq_peek(full, &m), -ESHUTDOWN);
	assert_int_equal(asx_msgq_count(full), 1);
	assert_false(asx_msgq_is_active(full));

	asx_msgq_activate(full);
	assert_int_equal(asx_msgq_enqueue(full, m, ASX_MSGQ_NOWAIT, NULL), 0);
	assert_int_equal(get_tag(full), 9);
	assert_int_equal(get_tag(full), 0);
	asx_msgq_destroy(empty);
	asx_msgq_destroy(full);
}

static void test_pulse(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	struct waiter w = { .q = q };
	pthread_t t;

	(void)state;
	pthread_create(&t, NULL, waiter_main, &w);
	WAIT_STAT(q, sleeps, 1);
	asx_msgq_pulse(q);
	pthread_join(t, NULL);
	assert_int_equal(w.ret, -EINTR);
	assert_true(asx_msgq_is_active(q));

	/* a waiter that starts after the pulse is not affected */
	w = (struct waiter){ .q = q };
	pthread_create(&t, NULL, waiter_main, &w);
	WAIT_STAT(q, sleeps, 2);
	assert_int_equal(asx_msgq_enqueue(q, mk(4, ASX_MSG_DATA, 0, 42), 0, NULL), 0);
	pthread_join(t, NULL);
	assert_int_equal(w.ret, 0);
	assert_int_equal(tag_of(w.m), 42);
	asx_msg_free(w.m);
	asx_msgq_destroy(q);
}

/*
 * hiwat 4000, lowat 2000, 1000-byte messages: the producer blocks at 4000
 * and stays blocked at 3000 and 2000 (not below lowat); at 1000 it goes.
 */
static void test_water_mark_hysteresis(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 4000, 2000), 0);
	struct waiter w = { .q = q, .producer = 1 };
	pthread_t t;
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(asx_msgq_enqueue(q, mk(1000, ASX_MSG_DATA, 0, (uint32_t)i),
						  ASX_MSGQ_NOWAIT, NULL), 0);
		assert_false(asx_msgq_is_full(q));
	}
	assert_int_equal(asx_msgq_enqueue(q, mk(1000, ASX_MSG_DATA, 0, 3), ASX_MSGQ_NOWAIT, NULL), 0);
	assert_true(asx_msgq_is_full(q));

	w.m = mk(1000, ASX_MSG_DATA, 0, 4);
	pthread_create(&t, NULL, waiter_main, &w);
	WAIT_STAT(q, sleeps, 1);

	assert_int_equal(get_tag(q), 0);	/* 3000: between the marks */
	usleep(50000);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	assert_true(asx_msgq_is_full(q));
	assert_int_equal(get_tag(q), 1);	/* 2000: at lowat, not below */
	usleep(50000);
	assert_int_equal(__atomic_load_n(&w.done, __ATOMIC_ACQUIRE), 0);
	assert_true(asx_msgq_is_full(q));
	/* a NOWAIT producer sees the same state */
	{
		struct asx_msg *m = mk(1, ASX_MSG_DATA, 0, 99);

		assert_int_equal(asx_msgq_enqueue(q, m, ASX_MSGQ_NOWAIT, NULL), -EWOULDBLOCK);
		asx_msg_free(m);
	}
	assert_int_equal(get_tag(q), 2);	/* 1000: below lowat, producer goes */
	pthread_join(t, NULL);
	assert_int_equal(w.ret, 0);
	assert_int_equal(asx_msgq_bytes(q), 2000);
	assert_false(asx_msgq_is_full(q));
	assert_int_equal(get_tag(q), 3);
	assert_int_equal(get_tag(q), 4);
	asx_msgq_destroy(q);
}

/* Raising the marks above the count lifts flow control and wakes producers. */
static void test_set_water_wakes(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	struct waiter w = { .q = q, .producer = 1 };
	pthread_t t;

	(void)state;
	assert_int_equal(asx_msgq_enqueue(q, mk(100, ASX_MSG_DATA, 0, 0), 0, NULL), 0);
	w.m = mk(10, ASX_MSG_DATA, 0, 1);
	pthread_create(&t, NULL, waiter_main, &w);
	WAIT_STAT(q, sleeps, 1);
	assert_int_equal(asx_msgq_set_water(q, 1000, 500), 0);
	pthread_join(t, NULL);
	assert_int_equal(w.ret, 0);
	assert_int_equal(asx_msgq_count(q), 2);
	/* lowering hiwat below the count makes it full at once */
	assert_int_equal(asx_msgq_set_water(q, 50, 10), 0);
	assert_true(asx_msgq_is_full(q));
	asx_msgq_destroy(q);
}

static void test_hipri_bypasses_flow_control(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	static const unsigned int types[] = { ASX_MSG_PCPROTO, ASX_MSG_FLUSH, ASX_MSG_IOCACK,
					      ASX_MSG_IOCNAK, ASX_MSG_ERROR, ASX_MSG_HANGUP,
					      ASX_MSG_PCUSER };
	struct asx_msg *m;
	size_t i;

	(void)state;
	assert_int_equal(asx_msgq_enqueue(q, mk(200, ASX_MSG_DATA, 0, 100), 0, NULL), 0);
	assert_true(asx_msgq_is_full(q));
	m = mk(10, ASX_MSG_PROTO, 0, 1);
	assert_int_equal(asx_msgq_enqueue(q, m, ASX_MSGQ_NOWAIT, NULL), -EWOULDBLOCK);
	asx_msg_free(m);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		assert_int_equal(asx_msgq_enqueue(q, mk(50, types[i], 0, (uint32_t)i),
						  ASX_MSGQ_NOWAIT, NULL), 0);
	/* FORCE: a normal message put back at the head despite flow control */
	assert_int_equal(asx_msgq_enqueue(q, mk(10, ASX_MSG_DATA, 0, 1000),
					  ASX_MSGQ_NOWAIT | ASX_MSGQ_FORCE | ASX_MSGQ_HEAD, NULL), 0);
	assert_int_equal(asx_msgq_bytes(q), 200 + 50 * i + 10);
	assert_int_equal(get_tag(q), 1000);
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		assert_int_equal(get_tag(q), i);
	assert_int_equal(get_tag(q), 100);
	asx_msgq_destroy(q);
}

/*
 * Issue 27: high-priority messages skip flow control, so a queue nobody
 * reads took any number of them.  A queue holds at most its bound of them
 * (default 16, as asx.ko); past it an enqueue fails with -ENOBUFS, is
 * counted, and the caller keeps the message.  FORCE (a put back) is not
 * refused; normal messages are not affected; a slot comes back when one
 * is taken or flushed.
 */
static void test_hipri_bound(void **state)
{
	struct asx_msgq *q = NULL;
	struct asx_msgq_stats st;
	struct asx_msg *m;
	uint32_t i;

	(void)state;
	assert_int_equal(asx_msgq_create(&q, 0, 0), 0);
	assert_int_equal(asx_msgq_hipri_max(q), ASX_MSGQ_DEFAULT_HIPRI_MAX);
	assert_int_equal(ASX_MSGQ_DEFAULT_HIPRI_MAX, 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(asx_msgq_enqueue(q, mk(60, i % 2 ? ASX_MSG_PCPROTO : ASX_MSG_PCUSER,
							0, i), 0, NULL), 0);
	for (i = 0; i < 3; i++) {
		m = mk(60, ASX_MSG_PCPROTO, 0, 100 + i);
		assert_int_equal(asx_msgq_enqueue(q, m, ASX_MSGQ_NOWAIT, NULL), -ENOBUFS);
		assert_int_equal(asx_msgq_enqueue(q, m, 0, NULL), -ENOBUFS);	/* never waits */
		asx_msg_free(m);
	}
	assert_int_equal(asx_msgq_enqueue(q, mk(10, ASX_MSG_DATA, 0, 200), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(10, ASX_MSG_FLUSH, 0, 300),
					  ASX_MSGQ_FORCE | ASX_MSGQ_HEAD, NULL), 0);
	asx_msgq_stats(q, &st);
	assert_int_equal(st.hipri_refused, 6);
	assert_int_equal(asx_msgq_count(q), 18);
	/* 17 queued now (FORCE counts): two must go before one more fits */
	assert_int_equal(get_tag(q), 300);
	m = mk(10, ASX_MSG_PCPROTO, 0, 400);
	assert_int_equal(asx_msgq_enqueue(q, m, 0, NULL), -ENOBUFS);
	asx_msg_free(m);
	/* a HANGUP is never refused, even past the bound: it is how a Stream
	 * learns that its peer went away (a driver's only one) */
	assert_int_equal(asx_msgq_enqueue(q, mk(10, ASX_MSG_HANGUP, 0, 400), 0, NULL), 0);
	assert_int_equal(get_tag(q), 0);
	/* a type changed while queued does not confuse the count */
	assert_int_equal(asx_msgq_peek(q, &m), 0);
	m->type = ASX_MSG_DATA;
	assert_int_equal(asx_msgq_flush(q), 17);
	for (i = 0; i < 16; i++)
		assert_int_equal(asx_msgq_enqueue(q, mk(1, ASX_MSG_IOCACK, 0, i), 0, NULL), 0);
	m = mk(1, ASX_MSG_IOCACK, 0, 16);
	assert_int_equal(asx_msgq_enqueue(q, m, 0, NULL), -ENOBUFS);
	/* a larger bound takes effect at once; 0 is refused */
	assert_int_equal(asx_msgq_set_hipri_max(q, 0), -EINVAL);
	assert_int_equal(asx_msgq_set_hipri_max(q, 1000), 0);
	assert_int_equal(asx_msgq_enqueue(q, m, 0, NULL), 0);
	for (i = 17; i < 1000; i++)
		assert_int_equal(asx_msgq_enqueue(q, mk(1, ASX_MSG_IOCACK, 0, i), 0, NULL), 0);
	m = mk(1, ASX_MSG_IOCACK, 0, 1000);
	assert_int_equal(asx_msgq_enqueue(q, m, 0, NULL), -ENOBUFS);
	asx_msg_free(m);
	for (i = 0; i < 1000; i++)
		assert_int_equal(get_tag(q), i);
	asx_msgq_stats(q, &st);
	assert_int_equal(st.hipri_refused, 9);
	asx_msgq_destroy(q);
}

struct notify_state {
	struct asx_msgq *q;
	int calls;
	int bad;
};

static void on_enqueue(struct asx_msgq *q, void *arg)
{
	struct notify_state *ns = arg;
	struct asx_msgq_stats st;

	/* takes the queue lock: would deadlock if called under it */
	asx_msgq_stats(q, &st);
	if (q != ns->q)
		__atomic_fetch_add(&ns->bad, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&ns->calls, 1, __ATOMIC_RELAXED);
}

static void test_notify_hook(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 100, 50), 0);
	struct notify_state ns = { .q = q };
	struct asx_msg *m;
	int i;

	(void)state;
	asx_msgq_set_notify(q, on_enqueue, &ns);
	for (i = 0; i < 10; i++)
		assert_int_equal(asx_msgq_enqueue(q, mk(10, ASX_MSG_DATA, 0, (uint32_t)i), 0, NULL), 0);
	assert_true(asx_msgq_is_full(q));
	m = mk(5, ASX_MSG_DATA, 0, 10);
	assert_int_equal(asx_msgq_enqueue(q, m, ASX_MSGQ_NOWAIT, NULL), -EWOULDBLOCK);	/* no call */
	asx_msg_free(m);
	assert_int_equal(asx_msgq_enqueue(q, mk(5, ASX_MSG_PCPROTO, 0, 11), 0, NULL), 0);
	assert_int_equal(ns.calls, 11);
	asx_msgq_set_notify(q, NULL, NULL);
	asx_msgq_flush(q);
	assert_int_equal(asx_msgq_enqueue(q, mk(5, ASX_MSG_DATA, 0, 12), 0, NULL), 0);
	assert_int_equal(ns.calls, 11);
	assert_int_equal(ns.bad, 0);
	asx_msgq_destroy(q);
}

/*
 * set_notify must not return while a producer is still inside the hook it
 * replaced (the hook's argument may be freed right after); called from
 * inside the hook it must not wait for itself.
 */
struct slow_hook {
	int entered;		/* atomics: the producer is inside the hook */
	int finished;
	int resets;
};

static void slow_hook_fn(struct asx_msgq *q, void *arg)
{
	struct slow_hook *h = arg;

	(void)q;
	__atomic_store_n(&h->entered, 1, __ATOMIC_RELEASE);
	usleep(100 * 1000);
	__atomic_store_n(&h->finished, 1, __ATOMIC_RELEASE);
}

static void *slow_producer(void *arg)
{
	struct asx_msgq *q = arg;

	if (asx_msgq_enqueue(q, mk(4, ASX_MSG_DATA, 0, 1), 0, NULL))
		abort();
	return NULL;
}

static void self_reset_hook(struct asx_msgq *q, void *arg)
{
	struct slow_hook *h = arg;

	h->resets++;
	asx_msgq_set_notify(q, NULL, NULL);	/* must not deadlock on itself */
}

static void test_set_notify_waits_for_running_hook(void **state)
{
	struct asx_msgq *q = NULL;
	assert_int_equal(asx_msgq_create(&q, 1000, 100), 0);
	struct slow_hook h = { 0 };
	pthread_t t;

	(void)state;
	asx_msgq_set_notify(q, slow_hook_fn, &h);
	assert_int_equal(pthread_create(&t, NULL, slow_producer, q), 0);
	while (!__atomic_load_n(&h.entered, __ATOMIC_ACQUIRE))
		usleep(1000);
	asx_msgq_set_notify(q, NULL, NULL);
	assert_int_equal(__atomic_load_n(&h.finished, __ATOMIC_ACQUIRE), 1);
	assert_int_equal(pthread_join(t, NULL), 0);

	asx_msgq_set_notify(q, self_reset_hook, &h);
	assert_int_equal(asx_msgq_enqueue(q, mk(4, ASX_MSG_DATA, 0, 2), 0, NULL), 0);
	assert_int_equal(asx_msgq_enqueue(q, mk(4, ASX_MSG_DATA, 0, 3), 0, NULL), 0);
	assert_int_equal(h.resets, 1);
	asx_msgq_flush(q);
	asx_msgq_destroy(q);
}

/* ---------------------------------------------------------------- stress */

#define NPROD 4
#define NCONS 4
/* Full size under TSan too: it runs in a few seconds there. */
#define PER_PROD 100000u
#define S_HIWAT 8192u
#define S_LOWAT 2048u
#define S_MAXLEN 512u
#define STOP_TYPE (ASX_MSG_USER + 1)

struct stress {
	struct asx_msgq *q;
	uint64_t *seen[NPROD];		/* bitmap per producer */
	uint64_t notified;
	uint64_t over_bound;		/* byte count seen above hiwat + one message */
	uint64_t dups, out_of_order, bad, enq_fail;
	uint64_t got[NCONS];
};

struct stress_arg {
	struct stress *s;
	uint32_t id;
};

static void stress_check_bytes(struct stress *s)
{
	if (asx_msgq_bytes(s->q) >= S_HIWAT + S_MAXLEN)
		__atomic_fetch_add(&s->over_bound, 1, __ATOMIC_RELAXED);
}

static void stress_notify(struct asx_msgq *q, void *arg)
{
	struct stress *s = arg;

	__atomic_fetch_add(&s->notified, 1, __ATOMIC_RELAXED);
	stress_check_bytes(s);
}

static void *stress_producer(void *arg)
{
	struct stress_arg *a = arg;
	struct stress *s = a->s;
	uint32_t seq, hdr[2];
	uint64_t rnd = 0x9e3779b97f4a7c15ULL * (a->id + 1);
	struct asx_msg *m;
	size_t len;

	for (seq = 0; seq < PER_PROD; seq++) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		len = sizeof(hdr) + rnd % (S_MAXLEN - sizeof(hdr) + 1);
		m = asx_msg_alloc(len, ASX_MSG_DATA);
		hdr[0] = a->id;
		hdr[1] = seq;
		asx_msg_append(m, hdr, sizeof(hdr));
		asx_msg_commit(m, len - sizeof(hdr));
		if (asx_msgq_enqueue(s->q, m, 0, NULL)) {
			__atomic_fetch_add(&s->enq_fail, 1, __ATOMIC_RELAXED);
			asx_msg_free(m);
		}
		stress_check_bytes(s);
	}
	return NULL;
}

static void *stress_consumer(void *arg)
{
	struct stress_arg *a = arg;
	struct stress *s = a->s;
	int64_t last[NPROD];
	struct asx_msg *m;
	uint32_t hdr[2];
	uint64_t bit;
	int i;

	for (i = 0; i < NPROD; i++)
		last[i] = -1;
	for (;;) {
		if (asx_msgq_dequeue(s->q, &m, 0, NULL)) {
			__atomic_fetch_add(&s->bad, 1, __ATOMIC_RELAXED);
			break;
		}
		stress_check_bytes(s);
		if (m->type == STOP_TYPE) {
			asx_msg_free(m);
			break;
		}
		if (asx_msg_read(m, 0, hdr, sizeof(hdr)) != sizeof(hdr) || hdr[0] >= NPROD ||
		    hdr[1] >= PER_PROD) {
			__atomic_fetch_add(&s->bad, 1, __ATOMIC_RELAXED);
			asx_msg_free(m);
			continue;
		}
		if ((int64_t)hdr[1] <= last[hdr[0]])
			__atomic_fetch_add(&s->out_of_order, 1, __ATOMIC_RELAXED);
		last[hdr[0]] = hdr[1];
		bit = 1ULL << (hdr[1] % 64);
		if (__atomic_fetch_or(&s->seen[hdr[0]][hdr[1] / 64], bit, __ATOMIC_RELAXED) & bit)
			__atomic_fetch_add(&s->dups, 1, __ATOMIC_RELAXED);
		s->got[a->id]++;
		asx_msg_free(m);
	}
	return NULL;
}

static void test_stress_4x4(void **state)
{
	struct stress s = { 0 };
	struct stress_arg pa[NPROD], ca[NCONS];
	pthread_t pt[NPROD], ct[NCONS];
	struct asx_msgq_stats st;
	uint64_t total = 0, missing = 0;
	uint32_t i, j;

	(void)state;
	assert_int_equal(asx_msgq_create(&s.q, S_HIWAT, S_LOWAT), 0);
	assert_non_null(s.q);
	asx_msgq_set_notify(s.q, stress_notify, &s);
	for (i = 0; i < NPROD; i++)
		s.seen[i] = calloc((PER_PROD + 63) / 64, sizeof(uint64_t));
	for (i = 0; i < NCONS; i++) {
		ca[i] = (struct stress_arg){ &s, i };
		assert_int_equal(pthread_create(&ct[i], NULL, stress_consumer, &ca[i]), 0);
	}
	for (i = 0; i < NPROD; i++) {
		pa[i] = (struct stress_arg){ &s, i };
		assert_int_equal(pthread_create(&pt[i], NULL, stress_producer, &pa[i]), 0);
	}
	for (i = 0; i < NPROD; i++)
		pthread_join(pt[i], NULL);
	/* one stop marker per consumer, behind every data message (same band: FIFO) */
	for (i = 0; i < NCONS; i++)
		assert_int_equal(asx_msgq_enqueue(s.q, asx_msg_alloc(0, STOP_TYPE), 0, NULL), 0);
	for (i = 0; i < NCONS; i++)
		pthread_join(ct[i], NULL);

	for (i = 0; i < NCONS; i++)
		total += s.got[i];
	for (i = 0; i < NPROD; i++) {
		for (j = 0; j < PER_PROD; j++)
			if (!(s.seen[i][j / 64] & (1ULL << (j % 64))))
				missing++;
		free(s.seen[i]);
	}
	asx_msgq_stats(s.q, &st);
	print_message("stress: %u msgs, peak %llu bytes (bound %u), %llu full waits, "
		      "%llu empty waits, %llu sleeps\n", NPROD * PER_PROD,
		      (unsigned long long)st.peak_bytes, S_HIWAT + S_MAXLEN,
		      (unsigned long long)st.full_waits, (unsigned long long)st.empty_waits,
		      (unsigned long long)st.sleeps);
	assert_int_equal(s.enq_fail, 0);
	assert_int_equal(s.bad, 0);
	assert_int_equal(s.dups, 0);
	assert_int_equal(missing, 0);
	assert_int_equal(s.out_of_order, 0);
	assert_int_equal(total, (uint64_t)NPROD * PER_PROD);
	assert_int_equal(s.notified, (uint64_t)NPROD * PER_PROD + NCONS);
	assert_int_equal(st.enqueued, (uint64_t)NPROD * PER_PROD + NCONS);
	assert_int_equal(st.dequeued, st.enqueued);
	/* checked under the lock at every enqueue, and sampled by every thread */
	assert_true(st.peak_bytes < S_HIWAT + S_MAXLEN);
	assert_int_equal(s.over_bound, 0);
	assert_true(st.full_waits > 0);		/* flow control was exercised */
	assert_true(asx_msgq_is_empty(s.q));
	asx_msgq_destroy(s.q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_and_water_marks),
		cmocka_unit_test(test_invalid_args),
		cmocka_unit_test(test_fifo_counts),
		cmocka_unit_test(test_priority_order),
		cmocka_unit_test(test_flush),
		cmocka_unit_test(test_nonblocking_both_directions),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_timed_wait_satisfied),
		cmocka_unit_test(test_waits_in_lockstat),
		cmocka_unit_test(test_deactivate_wakes_producers_and_consumers),
		cmocka_unit_test(test_pulse),
		cmocka_unit_test(test_water_mark_hysteresis),
		cmocka_unit_test(test_set_water_wakes),
		cmocka_unit_test(test_hipri_bypasses_flow_control),
		cmocka_unit_test(test_hipri_bound),
		cmocka_unit_test(test_notify_hook),
		cmocka_unit_test(test_set_notify_waits_for_running_hook),
		cmocka_unit_test(test_stress_4x4),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
