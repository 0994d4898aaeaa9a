// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_msgq.c - `asx-bench msgq`: one producer thread hands 4 KB messages
 * to one consumer thread through a queue with water marks.
 *
 * Contenders, measured in the same run, alternating which goes first:
 *   asx      struct asx_msgq (64 KB high / 16 KB low water mark)
 *   pthread  a linked list under a pthread mutex with two pthread
 *            condition variables and the same water-mark rule: the
 *            producer waits while the queue is full (>= high water) and
 *            the consumer lets it go once the bytes drop below low water.
 *
 * Both allocate every message with asx_msg_alloc() in the producer and
 * free it with asx_msg_free() in the consumer, so allocation costs the
 * same on both sides.  The producer writes a sequence number into each
 * message and the consumer checks it, so a lost or reordered message
 * aborts the run.  Context switches are the process's voluntary plus
 * involuntary switches (getrusage) over the run, per message.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <asx/msgq.h>
#include "bench.h"

#define HIWAT (64 * 1024)
#define LOWAT (16 * 1024)

/* ---------------------------------------------------------------- baseline */

struct pq {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	struct asx_msg *head, *tail;	/* linked through the message's queue link */
	size_t bytes;
	int full;
};

static void pq_init(struct pq *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
}

static void pq_destroy(struct pq *q)
{
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
}

static void pq_put(struct pq *q, struct asx_msg *m)
{
	pthread_mutex_lock(&q->lock);
	while (q->full)
		pthread_cond_wait(&q->not_full, &q->lock);
	m->cont = NULL;		/* single-block messages: cont links the list */
	if (q->tail)
		q->tail->cont = m;
	else
		q->head = m;
	q->tail = m;
	q->bytes += asx_msg_length(m);
	if (q->bytes >= HIWAT)
		q->full = 1;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

static struct asx_msg *pq_get(struct pq *q)
{
	struct asx_msg *m;

	pthread_mutex_lock(&q->lock);
	while (!q->head)
		pthread_cond_wait(&q->not_empty, &q->lock);
	m = q->head;
	q->head = m->cont;
	m->cont = NULL;		/* before asx_msg_length(), which follows cont */
	if (!q->head)
		q->tail = NULL;
	q->bytes -= asx_msg_length(m);
	if (q->full && (q->bytes < LOWAT || !q->bytes)) {
		q->full = 0;
		pthread_cond_broadcast(&q->not_full);
	}
	pthread_mutex_unlock(&q->lock);
	return m;
}

/* ---------------------------------------------------------------- harness */

struct run {
	int asx;
	struct asx_msgq *aq;
	struct pq pq;
	uint64_t n;
	size_t size;
	int err;
};

static void *producer(void *arg)
{
	struct run *r = arg;
	struct asx_msg *m;
	uint64_t i;

	for (i = 0; i < r->n; i++) {
		m = asx_msg_alloc(r->size, ASX_MSG_DATA);
		if (!m) {
			r->err = -ENOMEM;
			return NULL;
		}
		memcpy(asx_msg_wr(m), &i, sizeof(i));
		asx_msg_commit(m, r->size);
		if (r->asx) {
			if (asx_msgq_enqueue(r->aq, m, 0, NULL)) {
				r->err = -EIO;
				asx_msg_free(m);
				return NULL;
			}
		} else {
			pq_put(&r->pq, m);
		}
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct run *r = arg;
	struct asx_msg *m;
	uint64_t i, v;

	for (i = 0; i < r->n; i++) {
		if (r->asx) {
			if (asx_msgq_dequeue(r->aq, &m, 0, NULL)) {
				r->err = -EIO;
				return NULL;
			}
		} else {
			m = pq_get(&r->pq);
		}
		memcpy(&v, asx_msg_rd(m), sizeof(v));
		if (v != i)
			r->err = -EPROTO;
		asx_msg_free(m);
	}
	return NULL;
}

static long csw(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

/* One run of one contender: messages/s, and context switches per message. */
static int run_one(int asx, uint64_t n, size_t size, double *rate, double *cs)
{
	struct run r = { .asx = asx, .n = n, .size = size };
	pthread_t pt, ct;
	uint64_t t0, t1;
	long c0, c1;

	if (asx) {
		int err = asx_msgq_create(&r.aq, HIWAT, LOWAT);

		if (err)
			return err;
	} else {
		pq_init(&r.pq);
	}
	c0 = csw();
	t0 = bench_now_ns();
	if (pthread_create(&ct, NULL, consumer, &r))
		return -EAGAIN;
	if (pthread_create(&pt, NULL, producer, &r))
		return -EAGAIN;
	pthread_join(pt, NULL);
	pthread_join(ct, NULL);
	t1 = bench_now_ns();
	c1 = csw();
	if (asx)
		asx_msgq_destroy(r.aq);
	else
		pq_destroy(&r.pq);
	if (r.err)
		return r.err;
	*rate = (double)n * 1e9 / (double)(t1 - t0);
	*cs = (double)(c1 - c0) / (double)n;
	return 0;
}

static int bench_msgq(struct bench_ctx *ctx, int argc, char **argv)
{
	uint64_t n = ctx->quick ? 20000 : 200000;
	size_t size = 4096;
	double *ar, *pr, *ac, *pc, am, pm;
	char b1[32], b2[32];
	int opt, i, ret = 0;

	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 's':
			size = strtoull(optarg, NULL, 0);
			break;
		default:
			return -EINVAL;
		}
	}
	if (!n || size < sizeof(uint64_t))
		return -EINVAL;

	ar = calloc((size_t)ctx->runs, sizeof(double));
	pr = calloc((size_t)ctx->runs, sizeof(double));
	ac = calloc((size_t)ctx->runs, sizeof(double));
	pc = calloc((size_t)ctx->runs, sizeof(double));
	if (!ar || !pr || !ac || !pc) {
		ret = -ENOMEM;
		goto out;
	}
	bench_say(ctx, "msgq: %llu messages of %zu bytes, 1 producer -> 1 consumer, "
		  "water marks %d/%d bytes, %d runs\n",
		  (unsigned long long)n, size, HIWAT, LOWAT, ctx->runs);
	bench_say(ctx, "%4s %14s %14s %10s %10s\n", "run", "asx msg/s", "pthread msg/s",
		  "asx cs/msg", "pth cs/msg");
	for (i = 0; i < ctx->runs; i++) {
		/* alternate who goes first so drift hits both alike */
		int first = i & 1;

		ret = run_one(first, n, size, first ? &ar[i] : &pr[i], first ? &ac[i] : &pc[i]);
		if (!ret)
			ret = run_one(!first, n, size, first ? &pr[i] : &ar[i],
				      first ? &pc[i] : &ac[i]);
		if (ret)
			goto out;
		bench_say(ctx, "%4d %14s %14s %10.3f %10.3f\n", i + 1,
			  bench_si(b1, sizeof(b1), ar[i]), bench_si(b2, sizeof(b2), pr[i]),
			  ac[i], pc[i]);
	}
	am = bench_median(ar, (size_t)ctx->runs);
	pm = bench_median(pr, (size_t)ctx->runs);
	bench_say(ctx, "median %12s %14s %10.3f %10.3f   ratio %.2f\n",
		  bench_si(b1, sizeof(b1), am), bench_si(b2, sizeof(b2), pm),
		  bench_median(ac, (size_t)ctx->runs), bench_median(pc, (size_t)ctx->runs),
		  am / pm);
#define PUT(k, i, m, v, r, u) bench_record(ctx, &(struct bench_rec){			\
		.key = k, .impl = i, .metric = m, .value = v, .runs = r,		\
		.nruns = (r) ? (size_t)ctx->runs : 0, .unit = u, .size = size, .threads = 2 })
	PUT("msgq_asx_msgs_per_s", "asx", "msgs_per_s", am, ar, "msg/s");
	PUT("msgq_pthread_msgs_per_s", "pthread", "msgs_per_s", pm, pr, "msg/s");
	PUT("msgq_ratio_vs_pthread", "asx", "over_pthread", am / pm, NULL, "x");
	PUT("msgq_asx_csw_per_msg", "asx", "csw_per_msg", bench_median(ac, (size_t)ctx->runs), ac,
	    "switches/msg");
	PUT("msgq_pthread_csw_per_msg", "pthread", "csw_per_msg",
	    bench_median(pc, (size_t)ctx->runs), pc, "switches/msg");
#undef PUT
out:
	free(ar);
	free(pr);
	free(ac);
	free(pc);
	return ret;
}

BENCH_COMMAND(msgq, "msgq", "4 KB messages producer -> consumer: asx_msgq vs pthread mutex+cond",
	      "[-n MESSAGES] [-s BYTES]", bench_msgq)
