// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * proto/tcp.c - TCP-lite: connection-oriented transport over a real
 * 20-byte TCP header (ports, sequence and acknowledgement numbers, flags,
 * window, RFC 1071 checksum of header and payload; no pseudo-header, no
 * options).
 *
 * Connection control blocks (TCBs) are found through an asx_map keyed by
 * (local port, remote port) with the lock strategy of the configuration;
 * a TCB is reference counted so that no map lock is held while a segment
 * is processed, and each TCB has its own mutex (the papers' per-connection
 * serialisation in MP_TCP::put).
 *
 * Going down: the message's address picks the TCB; the segment gets the
 * next sequence number and piggybacks the acknowledgement.  Coming up:
 * checksum, then under the TCB's lock: acknowledgement processing, the
 * receive window, in-order delivery with a reorder buffer of
 * cfg.reorder segments (default EXP_PROTO_TCP_REORDER; or drop-and-count), and a pure ACK
 * every ack_every in-order segments, sent back down after the lock is
 * dropped.  Delivery up happens under the TCB's lock, so segments of one
 * connection reach the head in order whatever the threads.
 *
 * Not in TCP-lite: handshake (exp_proto_tcp_open creates an established
 * connection), retransmission (the simulated network does not lose),
 * congestion control.  The sender records the peer's window and counts
 * segments sent beyond it (wnd_over) but does not hold them back.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <asx/modules.h>
#include <asx/sync.h>

#include "proto/proto.h"

struct held {
	uint32_t seq, len;
	struct asx_msg *m;		/* the segment, TCP header at rd */
};

struct tcb {
	struct exp_proto_addr a;
	uint32_t refs;			/* atomic: the map's + users' */
	struct tcb *next;		/* tcp->conns, under tcp->conn_lock */
	struct asx_mutex lock;
	uint32_t snd_nxt, snd_una, snd_wnd, rcv_nxt;
	unsigned int since_ack, nheld;
	uint32_t held_bytes;
	uint64_t delivered;
	struct held hold[];		/* cfg.reorder slots */
};

struct tcp {
	struct exp_proto_common c;
	struct exp_proto_tcp_cfg cfg;
	struct asx_map *map;
	struct asx_mutex conn_lock;	/* conns */
	struct tcb *conns;
};

static void key_of(unsigned char key[4], struct exp_proto_addr a)
{
	exp_proto_put_addr(key, a);
}

static int tcb_ref(void *value, void *arg)
{
	struct tcb *tcb = value;

	__atomic_fetch_add(&tcb->refs, 1, __ATOMIC_RELAXED);
	*(struct tcb **)arg = tcb;
	return 0;
}

static struct tcb *tcb_get(struct tcp *tcp, struct exp_proto_addr a)
{
	unsigned char key[4];
	struct tcb *tcb = NULL;

	key_of(key, a);
	if (asx_map_find_apply(tcp->map, key, tcb_ref, &tcb))
		return NULL;
	return tcb;
}

static void tcb_put(struct tcb *tcb)
{
	if (__atomic_sub_fetch(&tcb->refs, 1, __ATOMIC_ACQ_REL))
		return;
	for (unsigned int i = 0; i < tcb->nheld; i++)
		asx_msg_free_chain(tcb->hold[i].m);
	asx_mutex_destroy(&tcb->lock);
	free(tcb);
}

/* The TCB lock, its hold time counted when lock statistics are on. */
static inline uint64_t tcb_lock(struct tcb *tcb)
{
	asx_mutex_lock(&tcb->lock);
	return asx_lockstat_begin();
}

static inline void tcb_unlock(struct tcb *tcb, uint64_t t0)
{
	asx_lockstat_end(ASX_LOCKSTAT_HOLD, t0);
	asx_mutex_unlock(&tcb->lock);
}

static uint16_t rcv_win(const struct tcp *tcp, const struct tcb *tcb)
{
	uint32_t w = tcp->cfg.rcv_wnd - tcb->held_bytes;

	return (uint16_t)(w > 65535 ? 65535 : w);
}

/* The TCP checksum over the whole segment at *@m's rd, stored in place. */
static void seal(struct asx_msg *m)
{
	uint16_t ck = asx_msg_cksum(m);

	memcpy(m->rd + 16, &ck, 2);
}

/* ---------------------------------------------------------------- write side */

static int tcp_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct tcp *tcp = (struct tcp *)exp_proto_of(t);
	unsigned char hdr[EXP_PROTO_TCP_HLEN];
	struct exp_proto_tcp h = { 0 };
	struct exp_proto_addr a;
	struct asx_msg *orig = m;
	const unsigned char *p;
	struct tcb *tcb;
	uint64_t held;
	uint32_t plen;
	bool inplace;
	size_t len;
	int r;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len < EXP_PROTO_ADDR_LEN)
		return EXP_PROTO_COUNT(&tcp->c, short_drop, 1), -EINVAL;
	if (len - EXP_PROTO_ADDR_LEN > 65535 - EXP_PROTO_TCP_HLEN - EXP_PROTO_IP_HLEN)
		return -EMSGSIZE;
	plen = (uint32_t)(len - EXP_PROTO_ADDR_LEN);
	p = exp_proto_pull(m, EXP_PROTO_ADDR_LEN);
	if (!p)
		return -ENOMEM;
	a = exp_proto_get_addr(p);
	tcb = tcb_get(tcp, a);
	if (!tcb) {
		EXP_PROTO_COUNT(&tcp->c, no_conn, 1);
		return -ENOTCONN;
	}

	held = tcb_lock(tcb);
	h.seq = tcb->snd_nxt;
	tcb->snd_nxt += plen;
	h.ack = tcb->rcv_nxt;
	h.win = rcv_win(tcp, tcb);
	if (tcb->snd_nxt - tcb->snd_una > tcb->snd_wnd)
		EXP_PROTO_COUNT(&tcp->c, wnd_over, 1);
	tcb->since_ack = 0;		/* this segment carries the ACK */
	tcb_unlock(tcb, held);

	h.sport = a.lport;
	h.dport = a.rport;
	h.flags = EXP_PROTO_TCP_ACK | EXP_PROTO_TCP_PSH;
	exp_proto_tcp_put(hdr, &h);
	m->rd += EXP_PROTO_ADDR_LEN;
	r = exp_proto_push_hdr(&m, hdr, sizeof(hdr));
	if (r) {
		m->rd -= EXP_PROTO_ADDR_LEN;
		goto unsend;
	}
	seal(m);
	inplace = m == orig;
	r = asx_task_put_next(t, m, dl);
	if (r) {
		exp_proto_pop_hdr(&m, orig, sizeof(hdr));
		m->rd -= EXP_PROTO_ADDR_LEN;
		if (inplace)
			exp_proto_put_addr(m->rd, a);
		goto unsend;
	}
	tcb_put(tcb);
	EXP_PROTO_COUNT(&tcp->c, down, 1);
	EXP_PROTO_COUNT(&tcp->c, down_bytes, plen);
	return 0;

unsend:
	/* Give the sequence numbers back if nothing was sent after them
	 * (otherwise they stay a gap: TCP-lite does not retransmit). */
	asx_mutex_lock(&tcb->lock);
	if (tcb->snd_nxt == h.seq + plen)
		tcb->snd_nxt = h.seq;
	asx_mutex_unlock(&tcb->lock);
	tcb_put(tcb);
	return r;
}

/* ---------------------------------------------------------------- read side */

/* Turn the segment's header into the receiver's address and pass it up. */
static int deliver(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	unsigned char hdr[EXP_PROTO_TCP_HLEN], addr[EXP_PROTO_ADDR_LEN];
	struct asx_msg *orig = m;
	int r;

	memcpy(hdr, m->rd, sizeof(hdr));
	exp_proto_put_addr(addr, (struct exp_proto_addr){
		(uint16_t)(hdr[2] << 8 | hdr[3]), (uint16_t)(hdr[0] << 8 | hdr[1]) });
	r = exp_proto_replace_hdr(&m, sizeof(hdr), addr, sizeof(addr));
	if (r)
		return r;
	r = asx_task_put_next(t, m, dl);
	if (r)
		exp_proto_restore_hdr(&m, orig, sizeof(hdr), hdr, sizeof(addr));
	return r;
}

/*
 * A pure ACK, sent down from the read side.  It never waits: a read side
 * blocked on the write side can deadlock a loop (the write side may be
 * waiting for the read side to drain), and ACKs are cumulative, so a
 * skipped one is covered by the next.
 */
static void send_ack(struct asx_task *t, struct tcp *tcp, struct exp_proto_addr a,
		     uint32_t seq, uint32_t ack, uint16_t win)
{
	struct exp_proto_tcp h = {
		.sport = a.lport, .dport = a.rport, .seq = seq, .ack = ack, .win = win,
		.flags = EXP_PROTO_TCP_ACK,
	};
	struct asx_msg *m = asx_msg_alloc(EXP_PROTO_HEADROOM + EXP_PROTO_TCP_HLEN,
					  ASX_MSG_DATA);

	if (!m) {
		EXP_PROTO_COUNT(&tcp->c, nomem, 1);
		return;
	}
	asx_msg_reserve(m, EXP_PROTO_HEADROOM);
	exp_proto_tcp_put(m->wr, &h);
	asx_msg_commit(m, EXP_PROTO_TCP_HLEN);
	seal(m);
	if (asx_task_reply(t, m, ASX_DEADLINE_NOW)) {
		asx_msg_free(m);
		EXP_PROTO_COUNT(&tcp->c, acks_skipped, 1);
		return;
	}
	EXP_PROTO_COUNT(&tcp->c, acks_sent, 1);
}

static int tcp_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct tcp *tcp = (struct tcp *)exp_proto_of(t);
	struct exp_proto_tcp h;
	struct exp_proto_addr a;
	uint32_t plen, off, ack = 0, snd = 0;
	uint16_t win = 0;
	const unsigned char *p;
	bool need_ack = false;
	unsigned int n = 0;
	struct tcb *tcb;
	uint64_t held;
	size_t len;
	int r = 0;

	if (m->type != ASX_MSG_DATA)
		return asx_task_put_next(t, m, dl);
	len = asx_msg_length(m);
	if (len < EXP_PROTO_TCP_HLEN)
		return EXP_PROTO_DROP(&tcp->c, short_drop, m);
	if (len > 65535)
		return EXP_PROTO_DROP(&tcp->c, bad_len, m);
	p = exp_proto_pull(m, EXP_PROTO_TCP_HLEN);
	if (!p)
		return EXP_PROTO_DROP(&tcp->c, nomem, m);
	if (p[12] >> 4 != 5)
		return EXP_PROTO_DROP(&tcp->c, bad_len, m);
	if (!tcp->cfg.rx_cksum_done && asx_msg_cksum(m) != 0)
		return EXP_PROTO_DROP(&tcp->c, bad_cksum, m);
	exp_proto_tcp_parse(p, &h);
	plen = (uint32_t)(len - EXP_PROTO_TCP_HLEN);
	a = (struct exp_proto_addr){ h.dport, h.sport };
	tcb = tcb_get(tcp, a);
	if (!tcb)
		return EXP_PROTO_DROP(&tcp->c, no_conn, m);

	held = tcb_lock(tcb);
	if (h.flags & EXP_PROTO_TCP_ACK) {
		uint32_t acked = h.ack - tcb->snd_una;

		if (acked && acked <= tcb->snd_nxt - tcb->snd_una)
			tcb->snd_una = h.ack;
		if (h.ack == tcb->snd_una)
			tcb->snd_wnd = h.win;
	}
	if (plen == 0) {		/* a pure ACK */
		tcb_unlock(tcb, held);
		tcb_put(tcb);
		asx_msg_free_chain(m);
		EXP_PROTO_COUNT(&tcp->c, acks_rcvd, 1);
		return 0;
	}
	off = h.seq - tcb->rcv_nxt;
	if ((int32_t)(h.seq + plen - tcb->rcv_nxt) <= 0 || (int32_t)off < 0) {
		EXP_PROTO_COUNT(&tcp->c, dup, 1);
		goto drop;
	}
	if (off + plen > tcp->cfg.rcv_wnd) {
		EXP_PROTO_COUNT(&tcp->c, out_of_window, 1);
		goto drop;
	}
	if (off) {			/* ahead of a gap: hold it, or drop it */
		if (tcp->cfg.no_reorder || tcb->nheld == tcp->cfg.reorder) {
			EXP_PROTO_COUNT(&tcp->c, ooo_drop, 1);
			goto drop;
		}
		for (unsigned int i = 0; i < tcb->nheld; i++) {
			if (tcb->hold[i].seq == h.seq) {
				EXP_PROTO_COUNT(&tcp->c, dup, 1);
				goto drop;
			}
		}
		tcb->hold[tcb->nheld++] = (struct held){ h.seq, plen, m };
		tcb->held_bytes += plen;
		EXP_PROTO_COUNT(&tcp->c, ooo_held, 1);
		goto out;
	}

	r = deliver(t, m, dl);
	if (r)
		goto out;		/* still the caller's, nothing changed */
	tcb->rcv_nxt += plen;
	EXP_PROTO_COUNT(&tcp->c, up_bytes, plen);
	n = 1;
	/* the reorder buffer: deliver what now follows, drop what is now old */
	for (unsigned int i = 0; i < tcb->nheld;) {
		struct held hd = tcb->hold[i];

		if (hd.seq != tcb->rcv_nxt && (int32_t)(hd.seq + hd.len - tcb->rcv_nxt) > 0) {
			i++;
			continue;
		}
		if (hd.seq == tcb->rcv_nxt && deliver(t, hd.m, dl))
			break;		/* stays held; the next in-order segment retries */
		if (hd.seq == tcb->rcv_nxt) {
			tcb->rcv_nxt += hd.len;
			EXP_PROTO_COUNT(&tcp->c, up_bytes, hd.len);
			n++;
		} else {
			asx_msg_free_chain(hd.m);
			EXP_PROTO_COUNT(&tcp->c, dup, 1);
		}
		tcb->held_bytes -= hd.len;
		tcb->hold[i] = tcb->hold[--tcb->nheld];
		i = 0;			/* the moved one may be next */
	}
	tcb->delivered += n;
	EXP_PROTO_COUNT(&tcp->c, up, n);
	tcb->since_ack += n;
	if (tcp->cfg.ack_every && tcb->since_ack >= tcp->cfg.ack_every) {
		tcb->since_ack = 0;
		need_ack = true;
		ack = tcb->rcv_nxt;
		snd = tcb->snd_nxt;
		win = rcv_win(tcp, tcb);
	}
	goto out;

drop:
	asx_msg_free_chain(m);
out:
	tcb_unlock(tcb, held);
	if (need_ack)
		send_ack(t, tcp, a, snd, ack, win);
	tcb_put(tcb);
	return r;
}

/* ---------------------------------------------------------------- connections */

int exp_proto_tcp_open(struct asx_module *mod, struct exp_proto_addr a, uint32_t iss,
		       uint32_t irs)
{
	struct tcp *tcp;
	unsigned char key[4];
	struct tcb *tcb;
	int r;

	tcp = exp_proto_arg(mod, EXP_PROTO_TCP);
	if (!tcp)
		return -EINVAL;
	tcb = calloc(1, sizeof(*tcb) + tcp->cfg.reorder * sizeof(tcb->hold[0]));
	if (!tcb)
		return -ENOMEM;
	tcb->a = a;
	tcb->refs = 1;
	asx_mutex_init(&tcb->lock);
	tcb->snd_nxt = tcb->snd_una = iss;
	tcb->snd_wnd = tcp->cfg.rcv_wnd;	/* until the peer says otherwise */
	tcb->rcv_nxt = irs;
	key_of(key, a);
	asx_mutex_lock(&tcp->conn_lock);
	r = asx_map_bind(tcp->map, key, tcb);
	if (r == 0) {
		tcb->next = tcp->conns;
		tcp->conns = tcb;
	}
	asx_mutex_unlock(&tcp->conn_lock);
	if (r) {
		asx_mutex_destroy(&tcb->lock);
		free(tcb);
	}
	return r;
}

int exp_proto_tcp_close(struct asx_module *mod, struct exp_proto_addr a)
{
	struct tcp *tcp;
	unsigned char key[4];
	void *v;
	int r;

	tcp = exp_proto_arg(mod, EXP_PROTO_TCP);
	if (!tcp)
		return -EINVAL;
	key_of(key, a);
	asx_mutex_lock(&tcp->conn_lock);
	r = asx_map_unbind(tcp->map, key, &v);
	if (r == 0) {
		for (struct tcb **pp = &tcp->conns; *pp; pp = &(*pp)->next) {
			if (*pp == v) {
				*pp = (*pp)->next;
				break;
			}
		}
	}
	asx_mutex_unlock(&tcp->conn_lock);
	if (r)
		return r;
	asx_map_synchronize(tcp->map);	/* no tcb_ref() in flight */
	tcb_put(v);
	return 0;
}

int exp_proto_tcp_info(struct asx_module *mod, struct exp_proto_addr a,
		       struct exp_proto_tcb_info *info)
{
	struct tcp *tcp;
	struct tcb *tcb;

	tcp = exp_proto_arg(mod, EXP_PROTO_TCP);
	if (!tcp || !info)
		return -EINVAL;
	tcb = tcb_get(tcp, a);
	if (!tcb)
		return -ENOENT;
	asx_mutex_lock(&tcb->lock);
	*info = (struct exp_proto_tcb_info){
		.snd_nxt = tcb->snd_nxt, .snd_una = tcb->snd_una, .snd_wnd = tcb->snd_wnd,
		.rcv_nxt = tcb->rcv_nxt, .held = tcb->nheld, .delivered = tcb->delivered,
	};
	asx_mutex_unlock(&tcb->lock);
	tcb_put(tcb);
	return 0;
}

static const struct asx_task_ops tcp_wr = { .open = exp_proto_open, .put = tcp_wr_put };
static const struct asx_task_ops tcp_rd = { .open = exp_proto_open, .put = tcp_rd_put };

static void tcp_free(void *arg)
{
	struct tcp *tcp = arg;
	unsigned char key[4];

	while (tcp->conns) {
		struct tcb *tcb = tcp->conns;

		tcp->conns = tcb->next;
		key_of(key, tcb->a);
		asx_map_unbind(tcp->map, key, NULL);
		tcb_put(tcb);
	}
	asx_map_destroy(tcp->map);
	asx_mutex_destroy(&tcp->conn_lock);
	free(tcp);
}

int exp_proto_tcp_create(struct asx_module **out, const char *name,
			 const struct exp_proto_tcp_cfg *cfg)
{
	struct tcp *tcp;
	int r;

	if (!cfg)
		return -EINVAL;
	tcp = calloc(1, sizeof(*tcp));
	if (!tcp)
		return -ENOMEM;
	tcp->c.magic = EXP_PROTO_MAGIC;
	tcp->c.kind = EXP_PROTO_TCP;
	tcp->c.svc_threads = cfg->svc_threads;
	tcp->cfg = *cfg;
	if (!tcp->cfg.rcv_wnd)
		tcp->cfg.rcv_wnd = 65535;
	if (!tcp->cfg.reorder)
		tcp->cfg.reorder = EXP_PROTO_TCP_REORDER;
	if (tcp->cfg.reorder > EXP_PROTO_TCP_REORDER_MAX) {
		free(tcp);
		return -EINVAL;
	}
	asx_mutex_init(&tcp->conn_lock);
	r = asx_map_create(&tcp->map, cfg->lock, EXP_PROTO_ADDR_LEN);
	if (r) {
		free(tcp);
		return r;
	}
	r = exp_proto_module_new(out, NULL, name, &tcp_wr, &tcp_rd, tcp, tcp_free);
	if (r)
		tcp_free(tcp);
	return r;
}
