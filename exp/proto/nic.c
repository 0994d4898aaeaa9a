// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * proto/nic.c - the simulated network interface (a Stream driver), the
 * built-in frame generator and the eager demultiplexer (a packet filter
 * on raw frames).
 *
 * The driver's producer thread puts frames up the Stream from its read
 * Task: message-based Modules above run in that thread, task-based ones
 * take the frames off their queues.  Flow control stops it like any
 * writer; it retries with short deadlines so that a stop is seen.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <asx/modules.h>
#include <asx/sync.h>

#include "proto/proto.h"

#define RETRY_NS (20 * 1000 * 1000ULL)	/* producer's put deadline, then re-check stop */

struct nic {
	struct exp_proto_common c;
	struct exp_proto_nic_cfg cfg;
	struct asx_module *mod;
	struct asx_mutex lock;		/* running, finished */
	struct asx_cond done;
	pthread_t th;
	bool running;			/* a thread to join */
	bool finished;			/* it returned */
	uint32_t stop;			/* atomic */
	uint64_t count;
	uint64_t delivered;		/* atomic */
};

/* ---------------------------------------------------------------- the driver */

static int nic_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct nic *n = (struct nic *)exp_proto_of(t);
	size_t len = asx_msg_length(m);
	int r;

	if (m->type == ASX_MSG_FLUSH) {
		if (asx_msg_block_len(m) && (m->rd[0] & ASX_STREAM_FLUSHR))
			return asx_task_reply(t, m, dl);
		asx_msg_free_chain(m);
		return 0;
	}
	if (n->cfg.mode == EXP_PROTO_NIC_LOOP) {
		r = asx_task_reply(t, m, dl);
		if (r)
			return r;
	} else {
		asx_msg_free_chain(m);
	}
	EXP_PROTO_COUNT(&n->c, tx_frames, 1);
	EXP_PROTO_COUNT(&n->c, tx_bytes, len);
	return 0;
}

static void *producer(void *arg)
{
	struct nic *n = arg;
	struct asx_task *rd = asx_module_rd(n->mod);
	struct timespec ts;

	for (uint64_t i = 0; !n->count || i < n->count; i++) {
		struct asx_msg *m;
		size_t len;
		int r;

		if (__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE))
			break;
		if (n->cfg.gen(n->cfg.gen_arg, i, &m))
			break;
		len = asx_msg_length(m);
		do {
			r = asx_task_put_next(rd, m, asx_deadline(&ts, RETRY_NS));
		} while (r == -ETIMEDOUT && !__atomic_load_n(&n->stop, __ATOMIC_ACQUIRE));
		if (r) {
			asx_msg_free_chain(m);
			EXP_PROTO_COUNT(&n->c, rx_fail, 1);
			if (r != -ETIMEDOUT && r != -ENOMEM)
				break;	/* -ESHUTDOWN, -EPIPE: the stream is going */
			continue;
		}
		EXP_PROTO_COUNT(&n->c, rx_frames, 1);
		EXP_PROTO_COUNT(&n->c, rx_bytes, len);
		__atomic_fetch_add(&n->delivered, 1, __ATOMIC_RELAXED);
	}
	asx_mutex_lock(&n->lock);
	n->finished = true;
	asx_cond_broadcast(&n->done);
	asx_mutex_unlock(&n->lock);
	return NULL;
}

int exp_proto_nic_start(struct asx_module *mod, uint64_t count)
{
	struct nic *n = exp_proto_arg(mod, EXP_PROTO_NIC);
	int r;

	if (!n)
		return -EINVAL;
	asx_mutex_lock(&n->lock);
	if (n->running) {
		asx_mutex_unlock(&n->lock);
		return -EBUSY;
	}
	n->count = count;
	n->finished = false;
	__atomic_store_n(&n->stop, 0, __ATOMIC_RELEASE);
	r = -pthread_create(&n->th, NULL, producer, n);
	n->running = r == 0;
	asx_mutex_unlock(&n->lock);
	return r;
}

static uint64_t nic_stop(struct nic *n)
{
	bool join;

	__atomic_store_n(&n->stop, 1, __ATOMIC_RELEASE);
	asx_mutex_lock(&n->lock);
	join = n->running;
	n->running = false;
	asx_mutex_unlock(&n->lock);
	if (join)
		pthread_join(n->th, NULL);
	return __atomic_load_n(&n->delivered, __ATOMIC_RELAXED);
}

uint64_t exp_proto_nic_stop(struct asx_module *mod)
{
	struct nic *n = exp_proto_arg(mod, EXP_PROTO_NIC);

	return n ? nic_stop(n) : 0;
}

int exp_proto_nic_wait(struct asx_module *mod, const struct timespec *deadline)
{
	struct nic *n = exp_proto_arg(mod, EXP_PROTO_NIC);
	int r = 0;

	if (!n)
		return -EINVAL;
	asx_mutex_lock(&n->lock);
	while (n->running && !n->finished && r == 0)
		r = asx_cond_timedwait(&n->done, &n->lock, deadline);
	if (n->running && !n->finished)
		r = -ETIMEDOUT;
	else
		r = 0;
	asx_mutex_unlock(&n->lock);
	return r;
}

static void nic_free(void *arg)
{
	struct nic *n = arg;

	nic_stop(n);
	asx_cond_destroy(&n->done);
	asx_mutex_destroy(&n->lock);
	free(n);
}

static int no_frames(void *arg, uint64_t i, struct asx_msg **mp)
{
	(void)arg;
	(void)i;
	(void)mp;
	return -ENODATA;
}

static const struct asx_task_ops nic_wr = { .put = nic_wr_put };

int exp_proto_nic_create(struct asx_module **out, const char *name,
			 const struct exp_proto_nic_cfg *cfg)
{
	struct nic *n = calloc(1, sizeof(*n));
	int r;

	if (!n)
		return -ENOMEM;
	n->c.magic = EXP_PROTO_MAGIC;
	n->c.kind = EXP_PROTO_NIC;
	if (cfg)
		n->cfg = *cfg;
	if (!n->cfg.gen)
		n->cfg.gen = no_frames;
	asx_mutex_init(&n->lock);
	asx_cond_init(&n->done);
	r = exp_proto_module_new(out, NULL, name, &nic_wr, NULL, n, nic_free);
	if (r) {
		asx_cond_destroy(&n->done);
		asx_mutex_destroy(&n->lock);
		free(n);
		return r;
	}
	n->mod = *out;
	return 0;
}

/* ---------------------------------------------------------------- the generator */

static void be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t rd32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned char pattern(uint32_t conn, uint32_t k, size_t j)
{
	return (unsigned char)(conn * 31u + k * 7u + j * 13u + (j >> 8));
}

void exp_proto_gen_fill(void *buf, size_t len, uint32_t conn, uint32_t k)
{
	unsigned char *b = buf;

	be32(b, conn);
	be32(b + 4, k);
	for (size_t j = 8; j < len; j++)
		b[j] = pattern(conn, k, j);
}

bool exp_proto_gen_check(const void *buf, size_t len, uint32_t *conn, uint32_t *k)
{
	const unsigned char *b = buf;

	if (len < 8)
		return false;
	*conn = rd32(b);
	*k = rd32(b + 4);
	for (size_t j = 8; j < len; j++)
		if (b[j] != pattern(*conn, *k, j))
			return false;
	return true;
}

int exp_proto_gen_init(struct exp_proto_gen *g)
{
	if (!g->nconn || g->payload < 8 || g->payload > 60000 ||
	    (g->proto != EXP_PROTO_IP_TCP && g->proto != EXP_PROTO_IP_UDP))
		return -EINVAL;
	g->seq = calloc(g->nconn, sizeof(*g->seq));
	g->k = calloc(g->nconn, sizeof(*g->k));
	if (!g->seq || !g->k) {
		exp_proto_gen_fini(g);
		return -ENOMEM;
	}
	for (unsigned int c = 0; c < g->nconn; c++)
		g->seq[c] = g->iss;
	return 0;
}

void exp_proto_gen_fini(struct exp_proto_gen *g)
{
	free(g->seq);
	free(g->k);
	g->seq = NULL;
	g->k = NULL;
}

int exp_proto_gen_frame_ck(const struct exp_proto_gen *g, unsigned int c, uint64_t k,
			   struct asx_msg **mp)
{
	size_t th = g->proto == EXP_PROTO_IP_TCP ? EXP_PROTO_TCP_HLEN : EXP_PROTO_UDP_HLEN;
	size_t len = EXP_PROTO_ETH_HLEN + EXP_PROTO_IP_HLEN + th + g->payload;
	struct exp_proto_ip ih = {
		.ttl = 64, .proto = g->proto, .id = (uint16_t)(k * g->nconn + c),
		.len = (uint16_t)(EXP_PROTO_IP_HLEN + th + g->payload),
		.src = g->peer_ip, .dst = g->ip,
	};
	uint16_t sport = (uint16_t)(g->rport0 + c), dport = (uint16_t)(g->lport0 + c), ck;
	struct asx_msg *m;
	unsigned char *b, *tp;

	if (c >= g->nconn)
		return -EINVAL;
	m = asx_msg_alloc(len, ASX_MSG_DATA);
	if (!m)
		return -ENOMEM;
	b = m->wr;
	exp_proto_eth_put(b, g->mac, g->peer_mac, EXP_PROTO_ETH_IP);
	exp_proto_ip_put(b + EXP_PROTO_ETH_HLEN, &ih);
	tp = b + EXP_PROTO_ETH_HLEN + EXP_PROTO_IP_HLEN;
	exp_proto_gen_fill(tp + th, g->payload, c, (uint32_t)k);
	if (g->proto == EXP_PROTO_IP_TCP) {
		struct exp_proto_tcp h = {
			.sport = sport, .dport = dport,
			.seq = g->iss + (uint32_t)(k * g->payload), .win = 65535,
			.flags = EXP_PROTO_TCP_PSH,
		};

		exp_proto_tcp_put(tp, &h);
		ck = asx_inet_cksum(tp, th + g->payload);
		memcpy(tp + 16, &ck, 2);
	} else {
		exp_proto_udp_put(tp, sport, dport, (uint16_t)(th + g->payload));
		ck = asx_inet_cksum(tp, th + g->payload);
		if (ck == 0)
			ck = 0xffff;
		memcpy(tp + 6, &ck, 2);
	}
	asx_msg_commit(m, len);
	*mp = m;
	return 0;
}

int exp_proto_gen_frame(void *arg, uint64_t i, struct asx_msg **mp)
{
	struct exp_proto_gen *g = arg;
	unsigned int c = (unsigned int)(i % g->nconn);
	int r = exp_proto_gen_frame_ck(g, c, g->k[c], mp);

	if (r == 0) {
		g->k[c]++;
		g->seq[c] += (uint32_t)g->payload;
	}
	return r;
}

/* ---------------------------------------------------------------- the packet filter */

int exp_proto_demux(const struct asx_msg *frame, uint32_t *conn)
{
	enum { OFF_IP = EXP_PROTO_ETH_HLEN, OFF_T = OFF_IP + EXP_PROTO_IP_HLEN };
	unsigned char b[OFF_T + 4];

	if (asx_msg_read(frame, 0, b, sizeof(b)) != sizeof(b))
		return -EPROTO;
	if (b[12] != EXP_PROTO_ETH_IP >> 8 || b[13] != (EXP_PROTO_ETH_IP & 0xff) ||
	    b[OFF_IP] != 0x45 ||
	    (b[OFF_IP + 9] != EXP_PROTO_IP_TCP && b[OFF_IP + 9] != EXP_PROTO_IP_UDP))
		return -EPROTO;
	/* the receiver's view: (destination port, source port) */
	*conn = (uint32_t)(b[OFF_T + 2] << 8 | b[OFF_T + 3]) << 16 |
		(uint32_t)(b[OFF_T] << 8 | b[OFF_T + 1]);
	return 0;
}

int exp_proto_demux_key(const struct asx_msg *m, void *key, void *arg)
{
	uint32_t conn;
	int r;

	(void)arg;
	r = exp_proto_demux(m, &conn);
	if (r)
		return r;
	exp_proto_put_addr(key, (struct exp_proto_addr){ (uint16_t)(conn >> 16),
							   (uint16_t)conn });
	return 0;
}
