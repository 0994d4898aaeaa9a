// SPDX-License-Identifier: GPL-2.0
/*
 * kstream_test.c - libasx's <asx/kstream.h> against asx.ko: the wrappers
 * on real kernel Streams (list, push/pop, putmsg/getmsg with bands and
 * control parts, library messages in and out with their types mapped,
 * water marks, qstats, str, pipes, link/unlink), and the spanning Stream:
 * a user-space Stream with a user-space Module whose driver is a kernel
 * Stream with a kernel module pushed, messages of two types in three bands
 * through it while the reader at the top is slow, checked for loss,
 * duplication, order per band, type and band; the kernel module counted
 * every one; flow control held across the boundary (the writer blocked,
 * the kernel Stream's head queue reached its high water mark, the reader
 * thread waited on the Stream above).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <asx/asc.h>
#include <asx/kstream.h>
#include <asx/modules.h>
#include <asx/stream.h>

#include "asx_harness.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define N_MSGS	1500
#else
#define N_MSGS	6000
#endif
#define NBANDS	3
#define SEQMSG_NBANDS NBANDS
#include "seqmsg.h"	/* lib/tests/: the same messages as test_kstream */
#define SLOW_FIRST 600

#define NEED_ASX(ks) do {							\
	int _r = asx_kstream_open(&(ks), NULL, 0);				\
	if (_r)									\
		SKIP(return, "no /dev/asx: %s", strerror(-_r));			\
} while (0)

/* ---------------------------------------------------------------- wrappers */

TEST(wrappers_configure)
{
	char names[4][ASX_KSTREAM_NAME_MAX], drv[ASX_KSTREAM_NAME_MAX];
	struct asx_kstream *ks;
	uint64_t hi = 0, lo = 0;
	struct asx_version v;
	struct asx_qstats qs;

	NEED_ASX(ks);
	ASSERT_EQ(asx_kstream_version(ks, &v), 0);
	EXPECT_EQ(v.major, ASX_VERSION_MAJOR);
	EXPECT_TRUE(v.features & ASX_FEAT_STREAMS);
	ASSERT_EQ(asx_kstream_push(ks, "pass"), 0);
	ASSERT_EQ(asx_kstream_push(ks, "count"), 0);
	EXPECT_EQ(asx_kstream_push(ks, "no-such-module"), -ENOENT);
	ASSERT_EQ(asx_kstream_list(ks, names, 4, drv), 2);
	EXPECT_STREQ(names[0], "count");
	EXPECT_STREQ(names[1], "pass");
	EXPECT_STREQ(drv, "loop");
	EXPECT_EQ(asx_kstream_list(ks, NULL, 0, NULL), 2);
	ASSERT_EQ(asx_kstream_pop(ks, "pass"), 0) TH_LOG("by name, from below the top");
	ASSERT_EQ(asx_kstream_list(ks, names, 4, NULL), 1);
	EXPECT_STREQ(names[0], "count");
	ASSERT_EQ(asx_kstream_pop(ks, NULL), 0);
	EXPECT_EQ(asx_kstream_list(ks, names, 4, NULL), 0);
	ASSERT_EQ(asx_kstream_push(ks, "pass"), 0);

	ASSERT_EQ(asx_kstream_set_water(ks, 0, ASX_SIDE_READ, 8192, 2048), 0);
	ASSERT_EQ(asx_kstream_get_water(ks, 0, ASX_SIDE_READ, &hi, &lo), 0);
	EXPECT_EQ(hi, 8192);
	EXPECT_EQ(lo, 2048);
	ASSERT_EQ(asx_kstream_qstats(ks, 1, ASX_SIDE_WRITE, &qs), 0);
	EXPECT_STREQ(qs.name, "pass");
	EXPECT_EQ(asx_kstream_qstats(ks, 7, ASX_SIDE_WRITE, &qs), -ENXIO);

	ASSERT_EQ(asx_kstream_set_rdopt(ks, ASX_RMSGN), 0);
	EXPECT_EQ(asx_kstream_get_rdopt(ks), ASX_RMSGN);
	asx_kstream_close(ks);

	ASSERT_EQ(asx_kstream_open(&ks, "null", 0), 0);
	ASSERT_EQ(asx_kstream_list(ks, NULL, 0, drv), 0);
	EXPECT_STREQ(drv, "null");
	asx_kstream_close(ks);
	EXPECT_EQ(asx_kstream_open(&ks, "no-such-driver", 0), -ENOENT);
}

TEST(wrappers_messages)
{
	struct asx_kstream *ks;
	struct asx_count_stats cs;
	char ctl[16], data[16];
	struct asx_kstream_part c = { ctl, sizeof(ctl), -1 }, d = { data, sizeof(data), -1 };
	struct asx_kstream_part pc = { "hdr", 0, 3 }, pd = { "body", 0, 4 };
	unsigned int flags, band;
	uint32_t msgs = 0;
	struct asx_msg *m;

	NEED_ASX(ks);
	ASSERT_EQ(asx_kstream_push(ks, "count"), 0);
	ASSERT_EQ(asx_kstream_putmsg(ks, &pc, &pd, 0, 5), 0);
	ASSERT_EQ(asx_kstream_putmsg(ks, &pc, NULL, ASX_MSG_HIPRI, 0), 0);
	ASSERT_EQ(asx_kstream_nread(ks, &msgs, NULL, NULL), 0);
	EXPECT_EQ(msgs, 2);
	flags = ASX_MSG_ANY;
	band = 0;
	ASSERT_EQ(asx_kstream_peek(ks, &c, &d, &flags, &band), 1);
	flags = ASX_MSG_ANY;
	ASSERT_EQ(asx_kstream_getmsg(ks, &c, &d, &flags, &band), 0);
	EXPECT_EQ(flags, ASX_MSG_HIPRI) TH_LOG("high priority first");
	EXPECT_EQ(c.len, 3);
	EXPECT_EQ(d.len, -1);
	flags = ASX_MSG_ANY;
	ASSERT_EQ(asx_kstream_getmsg(ks, &c, &d, &flags, &band), 0);
	EXPECT_EQ(flags, ASX_MSG_BAND);
	EXPECT_EQ(band, 5);
	EXPECT_EQ(c.len, 3);
	ASSERT_EQ(d.len, 4);
	EXPECT_EQ(memcmp(data, "body", 4), 0);

	/* library messages: types mapped both ways, band kept */
	m = asx_msg_alloc(4, ASX_MSG_PROTO);
	asx_msg_append(m, "ctl!", 4);
	m->cont = asx_msg_alloc(5, ASX_MSG_DATA);
	asx_msg_append(m->cont, "data!", 5);
	m->band = 3;
	ASSERT_EQ(asx_kstream_put(ks, m), 0);
	m = asx_msg_alloc(2, ASX_MSG_PCPROTO);
	asx_msg_append(m, "pc", 2);
	ASSERT_EQ(asx_kstream_put(ks, m), 0);
	m = asx_msg_alloc(2, ASX_MSG_USER);
	EXPECT_EQ(asx_kstream_put(ks, m), -EOPNOTSUPP);
	asx_msg_free(m);
	ASSERT_EQ(asx_kstream_get(ks, &m), 0);
	EXPECT_EQ(m->type, ASX_MSG_PCPROTO);
	EXPECT_EQ(asx_msg_length(m), 2);
	asx_msg_free_chain(m);
	ASSERT_EQ(asx_kstream_get(ks, &m), 0);
	EXPECT_EQ(m->type, ASX_MSG_PROTO);
	EXPECT_EQ(m->band, 3);
	EXPECT_EQ(asx_msg_block_len(m), 4);
	ASSERT_NE(m->cont, NULL);
	EXPECT_EQ(m->cont->type, ASX_MSG_DATA);
	EXPECT_EQ(asx_msg_length(m->cont), 5);
	asx_msg_free_chain(m);

	/* str: the count module's counters */
	ASSERT_EQ(asx_kstream_str(ks, ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), 0),
		  (int)sizeof(cs));
	EXPECT_EQ(cs.wmsgs, 4);
	EXPECT_EQ(cs.rmsgs, 4);
	EXPECT_EQ(asx_kstream_str(ks, 0x12345678, NULL, 0, 0, 0), -EINVAL);
	ASSERT_EQ(asx_kstream_flush(ks, ASX_STREAM_FLUSHRW, 0), 0);
	asx_kstream_close(ks);
}

/* STR through the kernel's struct: the hold module's rval (messages it held). */
TEST(wrappers_strioctl_returns_the_modules_value)
{
	struct asx_kstream_part pd = { "held", 0, 4 };
	char data[8];
	struct asx_kstream_part d = { data, sizeof(data), -1 };
	struct asx_strioctl si;
	unsigned int flags, band = 0;
	struct asx_kstream *ks;
	int i;

	NEED_ASX(ks);
	ASSERT_EQ(asx_kstream_push(ks, "hold"), 0);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(asx_kstream_putmsg(ks, NULL, &pd, 0, 0), 0);
	memset(&si, 0, sizeof(si));
	si.cmd = ASX_STR_HOLD_RELEASE;
	ASSERT_EQ(asx_kstream_strioctl(ks, &si), 0);
	EXPECT_EQ(si.rval, 3) TH_LOG("I_STR returns the module's value");
	EXPECT_EQ(si.len, 0);
	EXPECT_EQ(si.size, sizeof(si));
	for (i = 0; i < 3; i++) {
		flags = ASX_MSG_ANY;
		ASSERT_EQ(asx_kstream_getmsg(ks, NULL, &d, &flags, &band), 0);
		EXPECT_EQ(d.len, 4);
	}
	memset(&si, 0, sizeof(si));
	si.cmd = ASX_STR_HOLD_RELEASE;
	ASSERT_EQ(asx_kstream_strioctl(ks, &si), 0);
	EXPECT_EQ(si.rval, 0) TH_LOG("nothing held the second time");
	si.rval = 1;
	EXPECT_EQ(asx_kstream_strioctl(ks, &si), -EINVAL) TH_LOG("rval must be 0 going in");
	EXPECT_EQ(asx_kstream_strioctl(ks, NULL), -EINVAL);
	asx_kstream_close(ks);
}

struct blocked_get {
	struct asx_kstream *ks;
	volatile int done;
	int ret;
	int32_t len;
};

static void on_usr1(int sig)
{
	(void)sig;
}

static void *get_one(void *arg)
{
	struct blocked_get *g = arg;
	char data[8];
	struct asx_kstream_part d = { data, sizeof(data), -1 };
	unsigned int flags = ASX_MSG_ANY, band = 0;

	g->ret = asx_kstream_getmsg(g->ks, NULL, &d, &flags, &band);
	g->len = d.len;
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Waits up to @ms for @g's getmsg to return. */
static bool get_returned(struct blocked_get *g, int ms)
{
	for (; ms > 0; ms -= 10) {
		if (__atomic_load_n(&g->done, __ATOMIC_ACQUIRE))
			return true;
		usleep(10000);
	}
	return __atomic_load_n(&g->done, __ATOMIC_ACQUIRE);
}

/*
 * A getmsg blocked on an empty Stream and a signal: -EINTR when the handler
 * has no SA_RESTART (the library used to retry, so the call never returned);
 * with SA_RESTART it goes on waiting and takes the message written next.
 */
TEST_TIMEOUT(wrappers_signal_interrupts_a_blocked_getmsg, 120)
{
	struct asx_kstream_part pd = { "wake", 0, 4 };
	struct sigaction sa, old;
	struct blocked_get g;
	pthread_t t;
	int restart;

	for (restart = 0; restart < 2; restart++) {
		memset(&g, 0, sizeof(g));
		NEED_ASX(g.ks);
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sa.sa_flags = restart ? SA_RESTART : 0;
		ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
		ASSERT_EQ(pthread_create(&t, NULL, get_one, &g), 0);
		usleep(200000);	/* into the wait (on a loaded host, maybe not yet: */
		EXPECT_FALSE(get_returned(&g, 0));	/* then it retries, below) */
		ASSERT_EQ(pthread_kill(t, SIGUSR1), 0);
		if (!restart) {
			bool ret = get_returned(&g, 20000);
			int tries;

			/* a signal that came before the thread blocked: send again */
			for (tries = 0; !ret && tries < 5; tries++) {
				pthread_kill(t, SIGUSR1);
				ret = get_returned(&g, 2000);
			}
			EXPECT_TRUE(ret) TH_LOG("getmsg did not return on a signal without SA_RESTART");
			if (!ret)	/* free the thread */
				ASSERT_EQ(asx_kstream_putmsg(g.ks, NULL, &pd, 0, 0), 0);
			pthread_join(t, NULL);
			if (ret)
				EXPECT_EQ(g.ret, -EINTR);
		} else {
			EXPECT_FALSE(get_returned(&g, 300)) TH_LOG("SA_RESTART: still waiting");
			ASSERT_EQ(asx_kstream_putmsg(g.ks, NULL, &pd, 0, 0), 0);
			EXPECT_TRUE(get_returned(&g, 20000));
			pthread_join(t, NULL);
			EXPECT_EQ(g.ret, 0);
			EXPECT_EQ(g.len, 4);
		}
		sigaction(SIGUSR1, &old, NULL);
		asx_kstream_close(g.ks);
	}
}

/*
 * asx_kstream_getmsg and a putmsg under flow control on an ASC user thread
 * park the thread, not its VP: on a one-VP ASC, user thread A waits in the
 * call and user thread B, on the same VP, must run and release it.  Had the
 * ioctl slept in the kernel, B could never run: the join times out instead.
 */
struct uget {
	struct asx_kstream *ks, *b_ks;	/* b_ks: B's Stream (NULL: ks) */
	int a_waiting, a_done, b_released, a_ret, b_ret;
	bool put;		/* A puts under flow control, B reads */
	int len;
};

#define ULD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define UST(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)

static void *uget_a(void *arg)
{
	struct uget *u = arg;
	char data[16];
	struct asx_kstream_part d = { data, sizeof(data), -1 };
	struct asx_kstream_part pd = { "late", 0, 4 };
	unsigned int flags = ASX_MSG_ANY, band = 0;

	UST(u->a_waiting, 1);
	if (u->put)
		u->a_ret = asx_kstream_putmsg(u->ks, NULL, &pd, 0, 0);
	else
		u->a_ret = asx_kstream_getmsg(u->ks, NULL, &d, &flags, &band);
	u->len = d.len;
	UST(u->a_done, 1);
	return NULL;
}

static void *uget_b(void *arg)
{
	struct uget *u = arg;
	struct asx_kstream_part pd = { "wake", 0, 4 };
	char data[16];
	struct asx_kstream_part d = { data, sizeof(data), -1 };
	unsigned int flags = ASX_MSG_ANY, band = 0;

	while (!ULD(u->a_waiting))
		asx_asc_thread_yield();
	for (int i = 0; i < 3; i++)
		asx_asc_thread_yield();
	u->b_released = !ULD(u->a_done);	/* A is parked in the call */
	if (u->put) {
		/* drain below the low water mark: the writer is back-enabled */
		while (!ULD(u->a_done) && !u->b_ret) {
			uint32_t msgs = 0;

			u->b_ret = asx_kstream_nread(u->b_ks, &msgs, NULL, NULL);
			if (!u->b_ret && msgs) {
				flags = ASX_MSG_ANY;
				u->b_ret = asx_kstream_getmsg(u->b_ks, NULL, &d, &flags, &band);
			} else {
				asx_asc_thread_yield();
			}
		}
	} else
		u->b_ret = asx_kstream_putmsg(u->ks, NULL, &pd, 0, 0);
	return NULL;
}

static void *uget_drive(void *arg)
{
	struct asx_asc_opts o = { .sz = sizeof(o), .nvps = 1, .max_vps = 1,
				  .semantic = ASX_ASC_NONPREEMPTIVE };
	struct asx_prio_qos q = ASX_PRIO_QOS(0);
	struct asx_asc_thread *ta, *tb;
	struct asx_asc *a;

	if (asx_asc_create(&a, &asx_asc_prio, &o))
		return (void *)1;
	if (asx_asc_thread_spawn(a, &q.qos, uget_a, arg, NULL, &ta) ||
	    asx_asc_thread_spawn(a, &q.qos, uget_b, arg, NULL, &tb))
		return (void *)2;
	asx_asc_thread_join(ta, NULL);
	asx_asc_thread_join(tb, NULL);
	asx_asc_destroy(a);
	return NULL;
}

static int uget_run(struct uget *u)
{
	struct timespec dl;
	pthread_t th;
	void *ret = NULL;

	if (pthread_create(&th, NULL, uget_drive, u))
		return -1;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	if (pthread_timedjoin_np(th, &ret, &dl))
		return -2;	/* the VP slept in the ioctl: B never ran */
	return ret ? -3 : 0;
}

TEST_TIMEOUT(uthread_getmsg_parks_the_thread, 120)
{
	struct uget u = { 0 };

	NEED_ASX(u.ks);
	ASSERT_EQ(uget_run(&u), 0);
	EXPECT_TRUE(u.b_released);
	EXPECT_EQ(u.b_ret, 0);
	EXPECT_EQ(u.a_ret, 0);
	EXPECT_EQ(u.len, 4);
	asx_kstream_close(u.ks);
}

TEST_TIMEOUT(uthread_putmsg_under_flow_control_parks_the_thread, 120)
{
	struct asx_kstream_part pd = { "fill", 0, 4 };
	struct asx_kstream *other;
	struct uget u = { .put = true };
	int n = 0, fl;

	NEED_ASX(u.ks);
	/* a pipe pair: A writes to one end, B reads the other; the reading
	 * end's head queue full to its high water mark stops the writer */
	ASSERT_EQ(asx_kstream_pipe(u.ks, &other, 0), 0);
	ASSERT_EQ(asx_kstream_set_water(other, 0, ASX_SIDE_READ, 16, 4), 0);
	fl = fcntl(asx_kstream_fd(u.ks), F_GETFL);
	ASSERT_EQ(fcntl(asx_kstream_fd(u.ks), F_SETFL, fl | O_NONBLOCK), 0);
	while (n < 100000 && asx_kstream_putmsg(u.ks, NULL, &pd, 0, 0) == 0)
		n++;
	ASSERT_EQ(fcntl(asx_kstream_fd(u.ks), F_SETFL, fl), 0);
	ASSERT_LT(n, 100000) TH_LOG("the pipe never filled");
	/* B reads from the other end: swap the roles' Streams */
	u.b_ks = other;
	ASSERT_EQ(uget_run(&u), 0);
	EXPECT_TRUE(u.b_released);
	EXPECT_EQ(u.b_ret, 0);
	EXPECT_EQ(u.a_ret, 0);
	asx_kstream_close(other);
	asx_kstream_close(u.ks);
}

TEST(wrappers_pipe_and_mux)
{
	struct asx_kstream *a, *b, *mux, *lower;
	char buf[8];
	uint32_t id = 0;

	NEED_ASX(a);
	asx_kstream_close(a);
	ASSERT_EQ(asx_kstream_pipe_open(&a, &b, 0), 0);
	ASSERT_EQ(write(asx_kstream_fd(a), "to b", 4), 4);
	ASSERT_EQ(read(asx_kstream_fd(b), buf, sizeof(buf)), 4);
	EXPECT_EQ(memcmp(buf, "to b", 4), 0);
	asx_kstream_close(a);
	asx_kstream_close(b);

	ASSERT_EQ(asx_kstream_open(&mux, "mux", 0), 0);
	ASSERT_EQ(asx_kstream_open(&lower, NULL, 0), 0);
	ASSERT_EQ(asx_kstream_link(mux, lower, &id), 0);
	EXPECT_EQ(asx_kstream_link(mux, lower, NULL), -EBUSY);
	ASSERT_EQ(asx_kstream_unlink(mux, id), 0);
	EXPECT_EQ(asx_kstream_unlink(mux, id), -ENXIO);
	asx_kstream_close(lower);
	asx_kstream_close(mux);
}

/* ---------------------------------------------------------------- spanning */

struct run {
	struct asx_stream *s;
	uint64_t blocked;
	int wret, rret;
	uint32_t got, bad, dups, disorder;
	int64_t last[NBANDS];
	unsigned char seen[N_MSGS];
};

static void *writer(void *arg)
{
	struct run *r = arg;
	struct asx_msg *m;
	int ret;

	for (uint32_t seq = 0; seq < N_MSGS; seq++) {
		m = seqmsg_make(seq);
		if (!m) {
			r->wret = -ENOMEM;
			return NULL;
		}
		ret = asx_stream_put(r->s, m, ASX_STREAM_NOWAIT, NULL);
		if (ret == -EWOULDBLOCK) {
			r->blocked++;
			ret = asx_stream_put(r->s, m, 0, NULL);
		}
		if (ret) {
			asx_msg_free_chain(m);
			r->wret = ret;
			return NULL;
		}
	}
	return NULL;
}

static void reader(struct run *r)
{
	struct timespec dl;
	struct asx_msg *m;
	long seq;
	int ret;

	for (int b = 0; b < NBANDS; b++)
		r->last[b] = -1;
	while (r->got + r->bad < N_MSGS) {
		ret = asx_stream_get(r->s, &m, 0, asx_deadline(&dl, 60 * ASX_NSEC_PER_SEC));
		if (ret) {
			r->rret = ret;
			return;
		}
		seq = seqmsg_check(m);
		if (seq < 0 || seq >= N_MSGS) {
			r->bad++;
		} else {
			r->dups += r->seen[seq];
			r->seen[seq] = 1;
			r->disorder += seq <= r->last[seqmsg_band((uint32_t)seq)];
			r->last[seqmsg_band((uint32_t)seq)] = seq;
			r->got++;
		}
		asx_msg_free_chain(m);
		if (r->got < SLOW_FIRST)
			usleep(1000);
	}
}

TEST_TIMEOUT(span_over_kernel_stream, 240)
{
	struct asx_module *drv = NULL, *ucount;
	struct asx_driver_stats st;
	struct asx_count_stats cs;
	struct asx_kstream *ks;
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER, .head_hiwat = 16384,
		 .head_lowat = 4096);
	struct asx_counter uc;
	struct asx_qstats qs;
	struct run *r;
	pthread_t w;

	NEED_ASX(ks);
	r = calloc(1, sizeof(*r));
	ASSERT_NE(r, NULL);
	/* kernel: loop driver, "count" pushed, small queues at the head */
	ASSERT_EQ(asx_kstream_push(ks, "count"), 0);
	ASSERT_EQ(asx_kstream_set_water(ks, 0, ASX_SIDE_READ, 16384, 4096), 0);
	ASSERT_EQ(asx_kstream_driver(&drv, NULL, ks, ASX_DRIVER_OWN), 0);
	o.driver = drv;
	ASSERT_EQ(asx_stream_open(&r->s, &o), 0);
	ASSERT_EQ(asx_task_set_water(asx_module_wr(drv), 16384, 4096), 0);
	/* user space: a counter Module above the kernel's */
	ASSERT_EQ(asx_mod_counter(&ucount, "ucount"), 0);
	ASSERT_EQ(asx_stream_push(r->s, ucount, 0, NULL), 0);

	ASSERT_EQ(pthread_create(&w, NULL, writer, r), 0);
	reader(r);
	pthread_join(w, NULL);

	EXPECT_EQ(r->wret, 0);
	EXPECT_EQ(r->rret, 0);
	EXPECT_EQ(r->bad, 0);
	EXPECT_EQ(r->dups, 0);
	EXPECT_EQ(r->disorder, 0);
	EXPECT_EQ(r->got, N_MSGS);
	/* every message crossed both ways through the kernel module */
	ASSERT_EQ(asx_kstream_str(ks, ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), 0),
		  (int)sizeof(cs));
	EXPECT_EQ(cs.wmsgs, N_MSGS);
	EXPECT_EQ(cs.rmsgs, N_MSGS);
	/* the counter counts once put_next returned: the last may lag the get */
	for (int i = 0; i < 500; i++) {
		ASSERT_EQ(asx_mod_counter_read(ucount, &uc), 0);
		if (uc.rd_msgs == N_MSGS)
			break;
		usleep(10000);
	}
	EXPECT_EQ(uc.wr_msgs, N_MSGS);
	EXPECT_EQ(uc.rd_msgs, N_MSGS);
	/* flow control across the boundary, both ways */
	ASSERT_EQ(asx_driver_stats(drv, &st), 0);
	EXPECT_EQ(st.down_msgs, N_MSGS);
	EXPECT_EQ(st.up_msgs, N_MSGS);
	EXPECT_EQ(st.drops, 0);
	ASSERT_EQ(asx_kstream_qstats(ks, 0, ASX_SIDE_READ, &qs), 0);
	EXPECT_GT(qs.fc_stops, 0) TH_LOG("the kernel Stream's head never filled");
	EXPECT_GT(st.up_waits, 0) TH_LOG("the reader thread never waited on the Stream");
	EXPECT_GT(st.down_waits, 0) TH_LOG("PUTMSG never found the kernel Stream full");
	EXPECT_GT(r->blocked, 0) TH_LOG("the writer never blocked");
	TH_LOG("%d msgs; writer blocked %llu; down waits %llu, up waits %llu; kernel head "
	       "fc_stops %llu", N_MSGS, (unsigned long long)r->blocked,
	       (unsigned long long)st.down_waits, (unsigned long long)st.up_waits,
	       (unsigned long long)qs.fc_stops);
	asx_stream_close(r->s);
	free(r);
}

/* High priority overtakes; a FLUSH flushes the kernel Stream too. */
TEST(span_hipri_and_flush)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	struct asx_module *drv = NULL;
	struct asx_stream *s;
	struct asx_kstream *ks;
	struct timespec dl;
	struct asx_msg *m;
	uint32_t msgs = 1;

	NEED_ASX(ks);
	ASSERT_EQ(asx_kstream_push(ks, "pass"), 0);
	ASSERT_EQ(asx_kstream_driver(&drv, "kern", ks, 0), 0);
	o.driver = drv;
	ASSERT_EQ(asx_stream_open(&s, &o), 0);
	m = asx_msg_alloc(3, ASX_MSG_PCPROTO);
	asx_msg_append(m, "urg", 3);
	ASSERT_EQ(asx_stream_put(s, m, 0, NULL), 0);
	ASSERT_EQ(asx_stream_get(s, &m, 0, asx_deadline(&dl, 10 * ASX_NSEC_PER_SEC)), 0);
	EXPECT_EQ(m->type, ASX_MSG_PCPROTO);
	EXPECT_EQ(asx_msg_length(m), 3);
	asx_msg_free_chain(m);
	/* a message the kernel cannot carry is dropped and counted */
	m = asx_msg_alloc(1, ASX_MSG_USER);
	asx_msg_append(m, "u", 1);
	ASSERT_EQ(asx_stream_put(s, m, 0, NULL), 0);
	ASSERT_EQ(asx_stream_flush(s, ASX_STREAM_FLUSHRW, 0), 0);
	for (int i = 0; i < 100; i++) {
		struct asx_driver_stats st;

		ASSERT_EQ(asx_driver_stats(drv, &st), 0);
		if (st.drops)
			break;
		usleep(10000);
	}
	ASSERT_EQ(asx_kstream_nread(ks, &msgs, NULL, NULL), 0);
	EXPECT_EQ(msgs, 0);
	asx_stream_close(s);
	asx_kstream_close(ks);	/* not the driver's: still ours */
}

TEST_HARNESS_MAIN
