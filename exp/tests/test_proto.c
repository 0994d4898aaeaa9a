// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_proto.c - the protocol Modules of exp/proto (outside libasx).
 *
 * Unit tests per Module (headers, checksums, sequence numbers and
 * acknowledgements, the receive window, the reorder buffer, the packet
 * filter, bad frames counted and dropped), end-to-end Streams
 * NIC <- DLP <- IP <- TCP-lite / UDP-lite <- head with N connections, and
 * a stress case with several threads over each map lock strategy.
 *
 * Frames are injected from below by the NIC driver's producer thread
 * (a prepared set, or the built-in generator).  Nothing here depends on
 * timing: every wait has a generous deadline and a lost message fails
 * the test at that deadline instead of hanging it.  Helper threads never
 * call cmocka's assert_*; they record, the main thread checks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <pthread.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/map.h>
#include <asx/modules.h>
#include <asx/stream.h>

#include "proto/proto.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SLOW 4
#else
#define SLOW 1
#endif
#define DEADLINE_NS (30ULL * SLOW * 1000000000ULL)	/* "lost" */

static const uint8_t MAC_A[6] = { 2, 0, 0, 0, 0, 0xa };
static const uint8_t MAC_B[6] = { 2, 0, 0, 0, 0, 0xb };
#define IP_A 0x0a000001u
#define IP_B 0x0a000002u

/* ---------------------------------------------------------------- helpers */

/* A DATA message from the application: address, then the pattern (conn, k). */
static struct asx_msg *app_msg(struct exp_proto_addr a, size_t len, uint32_t conn, uint32_t k)
{
	struct asx_msg *m = asx_msg_alloc(EXP_PROTO_HEADROOM + EXP_PROTO_ADDR_LEN + len,
					  ASX_MSG_DATA);

	assert_non_null(m);
	assert_int_equal(asx_msg_reserve(m, EXP_PROTO_HEADROOM), 0);
	exp_proto_put_addr(m->wr, a);
	asx_msg_commit(m, EXP_PROTO_ADDR_LEN);
	exp_proto_gen_fill(m->wr, len, conn, k);
	asx_msg_commit(m, len);
	return m;
}

/* What reached the head: its address and pattern (false if the bytes are wrong). */
static bool app_parse(struct asx_msg *m, struct exp_proto_addr *a, size_t *len, uint32_t *conn,
		      uint32_t *k)
{
	size_t n = asx_msg_length(m);

	if (n < EXP_PROTO_ADDR_LEN + 8 || asx_msg_pullup(m, n))
		return false;
	*a = exp_proto_get_addr(m->rd);
	*len = n - EXP_PROTO_ADDR_LEN;
	return exp_proto_gen_check(m->rd + EXP_PROTO_ADDR_LEN, *len, conn, k);
}

static struct asx_msg *raw(const void *b, size_t len)
{
	struct asx_msg *m = asx_msg_alloc(len, ASX_MSG_DATA);

	assert_non_null(m);
	assert_int_equal(asx_msg_append(m, b, len), 0);
	return m;
}

/* A prepared set of frames for the NIC's producer (copies are sent). */
struct prepared {
	struct asx_msg *f[32];
	unsigned int n;
	bool shared;	/* send duplicates (sharing the data), not copies */
};

static int prepared_gen(void *arg, uint64_t i, struct asx_msg **mp)
{
	struct prepared *p = arg;

	if (i >= p->n)
		return -ENODATA;
	*mp = p->shared ? asx_msg_dup(p->f[i]) : asx_msg_copy(p->f[i]);
	return *mp ? 0 : -ENOMEM;
}

static void prepared_add(struct prepared *p, struct asx_msg *m)
{
	assert_true(p->n < 32);
	p->f[p->n++] = m;
}

static void prepared_free(struct prepared *p)
{
	for (unsigned int i = 0; i < p->n; i++)
		asx_msg_free_chain(p->f[i]);
	p->n = 0;
}

/*
 * A Stream with a NIC driver and @mods pushed bottom first (mods[0] just
 * above the NIC).
 */
static struct asx_stream *stack_open(struct asx_module *nic, struct asx_module **mods, int n)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER, .driver = nic);
	struct asx_stream *s;

	assert_int_equal(asx_stream_open(&s, &o), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(asx_stream_push(s, mods[i], 0, NULL), 0);
	return s;
}

static struct asx_module *mk_nic(enum exp_proto_nic_mode mode, exp_proto_gen_fn *gen, void *arg)
{
	struct exp_proto_nic_cfg c = { .mode = mode, .gen = gen, .gen_arg = arg };
	struct asx_module *m;

	assert_int_equal(exp_proto_nic_create(&m, "nic", &c), 0);
	return m;
}

static struct asx_module *mk_dlp(const uint8_t *mac, const uint8_t *peer, int thr)
{
	struct exp_proto_dlp_cfg c = { .svc_threads = thr };
	struct asx_module *m;

	memcpy(c.mac, mac, 6);
	memcpy(c.peer, peer, 6);
	assert_int_equal(exp_proto_dlp_create(&m, "dlp", &c), 0);
	return m;
}

static struct asx_module *mk_ip(uint32_t local, uint32_t peer, uint8_t proto, int thr)
{
	struct exp_proto_ip_cfg c = { .local = local, .peer = peer, .proto = proto,
				       .svc_threads = thr };
	struct asx_module *m;

	assert_int_equal(exp_proto_ip_create(&m, "ip", &c), 0);
	return m;
}

static struct asx_module *mk_udp(int thr)
{
	struct exp_proto_udp_cfg c = { .svc_threads = thr };
	struct asx_module *m;

	assert_int_equal(exp_proto_udp_create(&m, "udp", &c), 0);
	return m;
}

static struct asx_module *mk_tcp(enum asx_map_lock lock, uint32_t wnd, unsigned int ack_every,
				 bool no_reorder, int thr)
{
	struct exp_proto_tcp_cfg c = { .lock = lock, .rcv_wnd = wnd, .ack_every = ack_every,
					.no_reorder = no_reorder, .svc_threads = thr };
	struct asx_module *m;

	assert_int_equal(exp_proto_tcp_create(&m, "tcp", &c), 0);
	return m;
}

static struct exp_proto_stats stats(struct asx_module *m)
{
	struct exp_proto_stats s;

	assert_int_equal(exp_proto_stats(m, &s), 0);
	return s;
}

/* Run the NIC's producer over everything it has and wait for it. */
static void nic_run(struct asx_module *nic, uint64_t count)
{
	struct timespec ts;

	assert_int_equal(exp_proto_nic_start(nic, count), 0);
	assert_int_equal(exp_proto_nic_wait(nic, asx_deadline(&ts, DEADLINE_NS)), 0);
	exp_proto_nic_stop(nic);
}

/* Wait (politely) until @fn(@arg) holds; false at the deadline. */
static bool wait_for(bool (*fn)(void *arg), void *arg)
{
	uint64_t end = asx_now_ns() + DEADLINE_NS;

	while (!fn(arg)) {
		if (asx_now_ns() > end)
			return false;
		usleep(1000);
	}
	return true;
}

static struct asx_msg *get(struct asx_stream *s)
{
	struct asx_msg *m = NULL;
	struct timespec ts;

	assert_int_equal(asx_stream_get(s, &m, 0, asx_deadline(&ts, DEADLINE_NS)), 0);
	return m;
}

static void assert_empty(struct asx_stream *s)
{
	struct asx_msg *m = NULL;

	assert_int_equal(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL), -EWOULDBLOCK);
}

/* Frame builders for injection. */
static size_t eth_ip(unsigned char *b, const uint8_t *dst, uint32_t src_ip, uint32_t dst_ip,
		     uint8_t proto, size_t tlen)
{
	struct exp_proto_ip ih = { .ttl = 64, .proto = proto, .src = src_ip, .dst = dst_ip,
				    .len = (uint16_t)(EXP_PROTO_IP_HLEN + tlen) };

	exp_proto_eth_put(b, dst, MAC_B, EXP_PROTO_ETH_IP);
	exp_proto_ip_put(b + EXP_PROTO_ETH_HLEN, &ih);
	return EXP_PROTO_ETH_HLEN + EXP_PROTO_IP_HLEN;
}

/* A TCP segment (header + pattern payload) into @b; returns its length. */
static size_t tcp_seg(unsigned char *b, uint16_t sport, uint16_t dport, uint32_t seq,
		      uint32_t ack, uint8_t flags, size_t plen, uint32_t conn, uint32_t k)
{
	struct exp_proto_tcp h = { .sport = sport, .dport = dport, .seq = seq, .ack = ack,
				    .flags = flags, .win = 65535 };
	uint16_t ck;

	exp_proto_tcp_put(b, &h);
	if (plen)
		exp_proto_gen_fill(b + EXP_PROTO_TCP_HLEN, plen, conn, k);
	ck = asx_inet_cksum(b, EXP_PROTO_TCP_HLEN + plen);
	memcpy(b + 16, &ck, 2);
	return EXP_PROTO_TCP_HLEN + plen;
}

/* ---------------------------------------------------------------- headers */

static void test_constructor_wrapper(void **state)
{
	struct asx_module *m;

	(void)state;
	assert_int_equal(exp_proto_module_new(&m, "pass", "p", NULL, NULL, NULL, NULL), 0);
	assert_string_equal(asx_module_name(m), "p");
	asx_module_destroy(m);
	assert_int_equal(exp_proto_module_new(&m, "nosuch", "p", NULL, NULL, NULL, NULL),
			 -EINVAL);
	assert_null(m);
	assert_int_equal(exp_proto_module_new(&m, NULL, NULL, NULL, NULL, NULL, NULL), -EINVAL);
	/* a non-proto Module has no proto statistics */
	assert_int_equal(exp_proto_module_new(&m, "counter", "c", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(exp_proto_stats(m, &(struct exp_proto_stats){ 0 }), -EINVAL);
	assert_int_equal(exp_proto_tcp_open(m, (struct exp_proto_addr){ 1, 2 }, 0, 0), -EINVAL);
	asx_module_destroy(m);
}

static void test_ip_header(void **state)
{
	/* a well-known IPv4 header and its RFC 1071 checksum (0xb861) */
	static const unsigned char want[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	struct exp_proto_ip h = { .len = 0x73, .ttl = 0x40, .proto = 0x11,
				   .src = 0xc0a80001, .dst = 0xc0a800c7 }, g;
	unsigned char b[20];

	(void)state;
	exp_proto_ip_put(b, &h);
	assert_memory_equal(b, want, 20);
	assert_int_equal(exp_proto_ip_parse(b, 0x73, &g), 0);
	assert_int_equal(g.len, 0x73);
	assert_int_equal(g.proto, 0x11);
	assert_int_equal(g.src, 0xc0a80001);
	assert_int_equal(g.dst, 0xc0a800c7);
	assert_int_equal(exp_proto_ip_parse(b, 0x72, &g), -EMSGSIZE);	/* length > frame */
	assert_int_equal(exp_proto_ip_parse(b, 19, &g), -EMSGSIZE);
	b[0] = 0x65;
	assert_int_equal(exp_proto_ip_parse(b, 0x73, &g), -EPROTO);	/* version 6 */
	b[0] = 0x46;
	assert_int_equal(exp_proto_ip_parse(b, 0x73, &g), -EPROTO);	/* options */
	b[0] = 0x45;
	b[6] = 0x20;
	assert_int_equal(exp_proto_ip_parse(b, 0x73, &g), -EPROTO);	/* a fragment */
	b[6] = 0x40;
	b[15] ^= 1;
	assert_int_equal(exp_proto_ip_parse(b, 0x73, &g), -EBADMSG);
	b[15] ^= 1;
	assert_int_equal(exp_proto_ip_parse(b, 0x73, &g), 0);
}

static void test_tcp_header(void **state)
{
	struct exp_proto_tcp h = { .sport = 80, .dport = 4242, .seq = 0xdeadbeef,
				    .ack = 0x01020304, .flags = EXP_PROTO_TCP_ACK, .win = 1234 }, g;
	unsigned char b[20];

	(void)state;
	exp_proto_tcp_put(b, &h);
	assert_int_equal(b[0] << 8 | b[1], 80);
	assert_int_equal(b[12], 0x50);
	exp_proto_tcp_parse(b, &g);
	assert_int_equal(g.sport, 80);
	assert_int_equal(g.dport, 4242);
	assert_int_equal(g.seq, 0xdeadbeef);
	assert_int_equal(g.ack, 0x01020304);
	assert_int_equal(g.flags, EXP_PROTO_TCP_ACK);
	assert_int_equal(g.win, 1234);
}

static void test_pattern(void **state)
{
	unsigned char b[300];
	uint32_t c, k;

	(void)state;
	exp_proto_gen_fill(b, sizeof(b), 7, 99);
	assert_true(exp_proto_gen_check(b, sizeof(b), &c, &k));
	assert_int_equal(c, 7);
	assert_int_equal(k, 99);
	b[200] ^= 0x10;
	assert_false(exp_proto_gen_check(b, sizeof(b), &c, &k));
	assert_false(exp_proto_gen_check(b, 7, &c, &k));
}

/* ---------------------------------------------------------------- DLP */

static void test_dlp(void **state)
{
	static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct prepared p = { .n = 0 };
	struct asx_module *nic, *dlp, *mods[1];
	struct exp_proto_stats st;
	unsigned char b[64];
	struct asx_stream *s;
	struct asx_msg *m;

	(void)state;
	/* going down and turned around: to ourselves, then to another station */
	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = dlp = mk_dlp(MAC_A, MAC_A, 0);
	s = stack_open(nic, mods, 1);
	assert_int_equal(asx_stream_put(s, raw("hello, link", 11), 0, NULL), 0);
	m = get(s);
	assert_int_equal(asx_msg_length(m), 11);
	assert_int_equal(asx_msg_pullup(m, 11), 0);
	assert_memory_equal(m->rd, "hello, link", 11);
	asx_msg_free_chain(m);
	st = stats(nic);
	assert_int_equal(st.tx_frames, 1);
	assert_int_equal(st.tx_bytes, 11 + EXP_PROTO_ETH_HLEN);
	asx_stream_close(s);

	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = dlp = mk_dlp(MAC_A, MAC_B, 0);
	s = stack_open(nic, mods, 1);
	assert_int_equal(asx_stream_put(s, raw("not for me", 10), 0, NULL), 0);
	assert_empty(s);
	st = stats(dlp);
	assert_int_equal(st.down, 1);
	assert_int_equal(st.not_mine, 1);
	assert_int_equal(st.up, 0);
	asx_stream_close(s);

	/* frames from the wire: good, broadcast, not ours, not IP, short */
	exp_proto_eth_put(b, MAC_A, MAC_B, EXP_PROTO_ETH_IP);
	memcpy(b + 14, "payload-1", 9);
	prepared_add(&p, raw(b, 23));
	exp_proto_eth_put(b, bc, MAC_B, EXP_PROTO_ETH_IP);
	memcpy(b + 14, "payload-2", 9);
	prepared_add(&p, raw(b, 23));
	exp_proto_eth_put(b, MAC_B, MAC_A, EXP_PROTO_ETH_IP);
	prepared_add(&p, raw(b, 23));
	exp_proto_eth_put(b, MAC_A, MAC_B, 0x0806);
	prepared_add(&p, raw(b, 23));
	prepared_add(&p, raw(b, 13));
	prepared_add(&p, raw(b, 0));
	nic = mk_nic(EXP_PROTO_NIC_SINK, prepared_gen, &p);
	mods[0] = dlp = mk_dlp(MAC_A, MAC_B, 0);
	s = stack_open(nic, mods, 1);
	nic_run(nic, p.n);
	for (int i = 1; i <= 2; i++) {
		char want[24];

		snprintf(want, sizeof(want), "payload-%d", i);
		m = get(s);
		assert_int_equal(asx_msg_length(m), 9);
		assert_int_equal(asx_msg_pullup(m, 9), 0);
		assert_memory_equal(m->rd, want, 9);
		asx_msg_free_chain(m);
	}
	assert_empty(s);
	st = stats(dlp);
	assert_int_equal(st.up, 2);
	assert_int_equal(st.up_bytes, 18);
	assert_int_equal(st.not_mine, 1);
	assert_int_equal(st.bad_version, 1);
	assert_int_equal(st.short_drop, 2);
	assert_int_equal(stats(nic).rx_frames, p.n);
	asx_stream_close(s);
	prepared_free(&p);
}

/* ---------------------------------------------------------------- IP */

static size_t ip_pkt(unsigned char *b, uint32_t src, uint32_t dst, uint8_t proto, size_t plen)
{
	struct exp_proto_ip ih = { .ttl = 64, .proto = proto, .src = src, .dst = dst,
				    .len = (uint16_t)(EXP_PROTO_IP_HLEN + plen) };

	exp_proto_ip_put(b, &ih);
	exp_proto_gen_fill(b + EXP_PROTO_IP_HLEN, plen, 1, (uint32_t)plen);
	return EXP_PROTO_IP_HLEN + plen;
}

static void test_ip(void **state)
{
	struct prepared p = { .n = 0 };
	struct asx_module *nic, *ip, *mods[1];
	struct exp_proto_stats st;
	unsigned char b[256];
	struct asx_stream *s;
	struct asx_msg *m;
	uint32_t c, k;
	size_t n;

	(void)state;
	/* down and back: to ourselves, then to a peer */
	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = ip = mk_ip(IP_A, IP_A, EXP_PROTO_IP_UDP, 0);
	s = stack_open(nic, mods, 1);
	exp_proto_gen_fill(b, 100, 3, 4);
	assert_int_equal(asx_stream_put(s, raw(b, 100), 0, NULL), 0);
	m = get(s);
	assert_int_equal(asx_msg_length(m), 100);
	assert_int_equal(asx_msg_pullup(m, 100), 0);
	assert_true(exp_proto_gen_check(m->rd, 100, &c, &k));
	asx_msg_free_chain(m);
	assert_int_equal(stats(nic).tx_bytes, 100 + EXP_PROTO_IP_HLEN);
	asx_stream_close(s);

	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = ip = mk_ip(IP_A, IP_B, EXP_PROTO_IP_UDP, 0);
	s = stack_open(nic, mods, 1);
	assert_int_equal(asx_stream_put(s, raw(b, 100), 0, NULL), 0);
	assert_empty(s);
	assert_int_equal(stats(ip).not_mine, 1);
	asx_stream_close(s);

	/* packets from below */
	n = ip_pkt(b, IP_B, IP_A, EXP_PROTO_IP_UDP, 40);		/* good */
	prepared_add(&p, raw(b, n));
	n = ip_pkt(b, IP_B, IP_A, EXP_PROTO_IP_UDP, 41);		/* good, padded */
	prepared_add(&p, raw(b, n + 9));
	n = ip_pkt(b, IP_B, IP_A, EXP_PROTO_IP_UDP, 40);		/* bad checksum */
	b[12] ^= 0x80;
	prepared_add(&p, raw(b, n));
	n = ip_pkt(b, IP_B, IP_A, EXP_PROTO_IP_UDP, 40);		/* length > packet */
	prepared_add(&p, raw(b, n - 1));
	n = ip_pkt(b, IP_B, IP_A, EXP_PROTO_IP_UDP, 40);		/* IPv6 */
	b[0] = 0x60;
	prepared_add(&p, raw(b, n));
	n = ip_pkt(b, IP_B, IP_B, EXP_PROTO_IP_UDP, 40);		/* not to us */
	prepared_add(&p, raw(b, n));
	n = ip_pkt(b, IP_B, IP_A, EXP_PROTO_IP_TCP, 40);		/* not our protocol */
	prepared_add(&p, raw(b, n));
	prepared_add(&p, raw(b, 19));					/* short */
	nic = mk_nic(EXP_PROTO_NIC_SINK, prepared_gen, &p);
	mods[0] = ip = mk_ip(IP_A, IP_B, EXP_PROTO_IP_UDP, 0);
	s = stack_open(nic, mods, 1);
	nic_run(nic, p.n);
	for (size_t len = 40; len <= 41; len++) {
		m = get(s);
		assert_int_equal(asx_msg_length(m), len);
		assert_int_equal(asx_msg_pullup(m, len), 0);
		assert_true(exp_proto_gen_check(m->rd, len, &c, &k));
		assert_int_equal(k, len);
		asx_msg_free_chain(m);
	}
	assert_empty(s);
	st = stats(ip);
	assert_int_equal(st.up, 2);
	assert_int_equal(st.bad_cksum, 1);
	assert_int_equal(st.bad_len, 1);
	assert_int_equal(st.bad_version, 1);
	assert_int_equal(st.not_mine, 2);
	assert_int_equal(st.short_drop, 1);
	assert_int_equal(exp_proto_drops(&st), 6);
	asx_stream_close(s);
	prepared_free(&p);
}

/* ---------------------------------------------------------------- UDP */

static size_t udp_dgram(unsigned char *b, uint16_t sport, uint16_t dport, size_t plen,
			size_t ulen)
{
	uint16_t ck;

	exp_proto_udp_put(b, sport, dport, (uint16_t)ulen);
	exp_proto_gen_fill(b + 8, plen, 2, (uint32_t)plen);
	ck = asx_inet_cksum(b, 8 + plen);
	memcpy(b + 6, &ck, 2);
	return 8 + plen;
}

/*
 * Seven datagrams from port 7 to 8: three good (30, 31 bytes padded, 32
 * without a checksum), then a bad checksum, a length past the datagram,
 * a length below the header and one too short for a header.
 */
static void udp_bad_set(struct prepared *p)
{
	unsigned char b[256];
	size_t n;

	n = udp_dgram(b, 7, 8, 30, 38);				/* good */
	prepared_add(p, raw(b, n));
	n = udp_dgram(b, 7, 8, 31, 39);				/* good, padded */
	prepared_add(p, raw(b, n + 5));
	n = udp_dgram(b, 7, 8, 32, 40);				/* no checksum */
	b[6] = b[7] = 0;
	prepared_add(p, raw(b, n));
	n = udp_dgram(b, 7, 8, 30, 38);				/* bad checksum */
	b[20] ^= 1;
	prepared_add(p, raw(b, n));
	n = udp_dgram(b, 7, 8, 30, 39);				/* length > datagram */
	prepared_add(p, raw(b, n));
	n = udp_dgram(b, 7, 8, 30, 7);				/* length < header */
	prepared_add(p, raw(b, n));
	prepared_add(p, raw(b, 7));				/* short */
}

/* The three good datagrams of udp_bad_set at the head, and nothing else. */
static void expect_udp_set(struct asx_stream *s)
{
	struct exp_proto_addr got;
	struct asx_msg *m;
	uint32_t c, k;
	size_t len;

	for (size_t l = 30; l <= 32; l++) {
		m = get(s);
		assert_true(app_parse(m, &got, &len, &c, &k));
		assert_int_equal(got.lport, 8);
		assert_int_equal(got.rport, 7);
		assert_int_equal(len, l);
		assert_int_equal(k, l);
		asx_msg_free_chain(m);
	}
	assert_empty(s);
}

static void test_udp(void **state)
{
	struct exp_proto_addr a = { 1000, 2000 }, got;
	struct prepared p = { .n = 0 };
	struct asx_module *nic, *udp, *mods[1];
	struct exp_proto_stats st;
	unsigned char b[256];
	struct asx_stream *s;
	struct asx_msg *m;
	uint32_t c, k;
	size_t n, len;

	(void)state;
	/* down and back up: the receiver's address is the sender's reversed */
	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = udp = mk_udp(0);
	s = stack_open(nic, mods, 1);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(asx_stream_put(s, app_msg(a, 50 + i, 9, i), 0, NULL), 0);
	for (uint32_t i = 0; i < 4; i++) {
		m = get(s);
		assert_true(app_parse(m, &got, &len, &c, &k));
		assert_int_equal(got.lport, 2000);
		assert_int_equal(got.rport, 1000);
		assert_int_equal(len, 50 + i);
		assert_int_equal(c, 9);
		assert_int_equal(k, i);
		asx_msg_free_chain(m);
	}
	m = raw("ab", 2);					/* no address: refused */
	assert_int_equal(asx_stream_put(s, m, 0, NULL), -EINVAL);
	asx_msg_free_chain(m);
	assert_empty(s);
	st = stats(udp);
	assert_int_equal(st.down, 4);
	assert_int_equal(st.up, 4);
	assert_int_equal(st.short_drop, 1);
	assert_int_equal(stats(nic).tx_bytes, 4 * 8 + 50 + 51 + 52 + 53);
	asx_stream_close(s);

	/* datagrams from below */
	udp_bad_set(&p);
	{	/* frames whose data others share must not be written to */
		n = udp_dgram(b, 7, 8, 30, 38);
		p.shared = true;
	}
	nic = mk_nic(EXP_PROTO_NIC_SINK, prepared_gen, &p);
	mods[0] = udp = mk_udp(0);
	s = stack_open(nic, mods, 1);
	nic_run(nic, p.n);
	assert_memory_equal(p.f[0]->rd, b, n);	/* the first datagram, untouched */
	expect_udp_set(s);
	st = stats(udp);
	assert_int_equal(st.up, 3);
	assert_int_equal(st.bad_cksum, 1);
	assert_int_equal(st.bad_len, 2);
	assert_int_equal(st.short_drop, 1);
	asx_stream_close(s);
	prepared_free(&p);
}

/*
 * The transport checksum as a Module of its own (FP's checksum task):
 * below UDP-lite and TCP-lite configured with rx_cksum_done it drops and
 * counts what they would have; they no longer check.
 */
static void test_cksum_task(void **state)
{
	struct prepared p = { .n = 0 }, q = { .n = 0 };
	struct asx_module *nic, *ck, *tp, *mods[2];
	struct exp_proto_udp_cfg uc = { .rx_cksum_done = true };
	struct exp_proto_tcp_cfg tc = { .lock = ASX_MAP_MUTEX, .rcv_wnd = 4096,
					 .rx_cksum_done = true };
	struct exp_proto_stats st;
	unsigned char b[256];
	struct asx_stream *s;
	struct asx_msg *m;
	size_t n;

	(void)state;
	assert_int_equal(exp_proto_cksum_create(&ck, "ck", 99), -EINVAL);
	udp_bad_set(&p);
	nic = mk_nic(EXP_PROTO_NIC_SINK, prepared_gen, &p);
	assert_int_equal(exp_proto_cksum_create(&ck, "ck", EXP_PROTO_IP_UDP), 0);
	assert_int_equal(exp_proto_udp_create(&tp, "udp", &uc), 0);
	mods[0] = ck;
	mods[1] = tp;
	s = stack_open(nic, mods, 2);
	nic_run(nic, p.n);
	expect_udp_set(s);
	st = stats(ck);
	assert_int_equal(st.up, 3);
	assert_int_equal(st.bad_cksum, 1);
	assert_int_equal(st.bad_len, 2);
	assert_int_equal(st.short_drop, 1);
	st = stats(tp);
	assert_int_equal(st.up, 3);
	assert_int_equal(st.bad_cksum + st.bad_len + st.short_drop, 0);
	asx_stream_close(s);
	prepared_free(&p);

	/* TCP: the bad segment stops at the checksum task; without it,
	 * TCP-lite with rx_cksum_done takes the segment as it is */
	for (int with = 1; with >= 0; with--) {
		n = tcp_seg(b, 9000, 80, 1000, 0, EXP_PROTO_TCP_PSH, 100, 5, 0);
		b[40] ^= 4;
		prepared_add(&q, raw(b, n));			/* bad checksum */
		n = tcp_seg(b, 9000, 80, 1000, 0, EXP_PROTO_TCP_PSH, 100, 5, 0);
		prepared_add(&q, raw(b, n));			/* good */
		nic = mk_nic(EXP_PROTO_NIC_SINK, prepared_gen, &q);
		assert_int_equal(exp_proto_tcp_create(&tp, "tcp", &tc), 0);
		if (with)
			assert_int_equal(exp_proto_cksum_create(&ck, "ck", EXP_PROTO_IP_TCP), 0);
		mods[0] = with ? ck : tp;
		mods[1] = tp;
		s = stack_open(nic, mods, with ? 2 : 1);
		assert_int_equal(exp_proto_tcp_open(tp, (struct exp_proto_addr){ 80, 9000 }, 7,
						    1000), 0);
		nic_run(nic, q.n);
		m = get(s);
		asx_msg_free_chain(m);
		assert_empty(s);
		st = stats(tp);
		assert_int_equal(st.up, 1);
		assert_int_equal(st.bad_cksum, 0);
		assert_int_equal(st.dup, with ? 0 : 1);	/* the good one came second */
		if (with)
			assert_int_equal(stats(ck).bad_cksum, 1);
		asx_stream_close(s);
		prepared_free(&q);
	}
}

/* ---------------------------------------------------------------- TCP */

static struct exp_proto_tcb_info info(struct asx_module *tcp, uint16_t l, uint16_t r)
{
	struct exp_proto_tcb_info i;

	assert_int_equal(exp_proto_tcp_info(tcp, (struct exp_proto_addr){ l, r }, &i), 0);
	return i;
}

static void expect_app(struct asx_stream *s, uint16_t lport, uint16_t rport, size_t len,
		       uint32_t conn, uint32_t k)
{
	struct exp_proto_addr got;
	struct asx_msg *m = get(s);
	uint32_t c, kk;
	size_t l;

	assert_true(app_parse(m, &got, &l, &c, &kk));
	assert_int_equal(got.lport, lport);
	assert_int_equal(got.rport, rport);
	assert_int_equal(l, len);
	assert_int_equal(c, conn);
	assert_int_equal(kk, k);
	asx_msg_free_chain(m);
}

/* Both ends of a connection in one TCP Module over a loop: seq, ack, info. */
static void test_tcp_loop(void **state)
{
	struct exp_proto_addr a = { 1000, 2000 }, b = { 2000, 1000 };
	struct asx_module *nic, *tcp, *mods[1];
	struct exp_proto_tcb_info ia, ib;
	struct exp_proto_stats st;
	struct asx_stream *s;
	struct asx_msg *m;

	(void)state;
	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = tcp = mk_tcp(ASX_MAP_MUTEX, 0, 1, false, 0);
	s = stack_open(nic, mods, 1);
	assert_int_equal(exp_proto_tcp_open(tcp, a, 100, 500), 0);
	assert_int_equal(exp_proto_tcp_open(tcp, b, 500, 100), 0);
	assert_int_equal(exp_proto_tcp_open(tcp, b, 1, 1), -EEXIST);

	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(asx_stream_put(s, app_msg(a, 10 * (i + 1), 1, i), 0, NULL), 0);
	for (uint32_t i = 0; i < 3; i++)
		expect_app(s, 2000, 1000, 10 * (i + 1), 1, i);
	ia = info(tcp, 1000, 2000);
	ib = info(tcp, 2000, 1000);
	assert_int_equal(ia.snd_nxt, 160);
	assert_int_equal(ia.snd_una, 160);	/* every segment acknowledged */
	assert_int_equal(ia.snd_wnd, 65535);
	assert_int_equal(ib.rcv_nxt, 160);
	assert_int_equal(ib.delivered, 3);
	st = stats(tcp);
	assert_int_equal(st.down, 3);
	assert_int_equal(st.up, 3);
	assert_int_equal(st.up_bytes, 60);
	assert_int_equal(st.acks_sent, 3);
	assert_int_equal(st.acks_rcvd, 3);
	assert_int_equal(exp_proto_drops(&st), 0);

	/* the other way */
	assert_int_equal(asx_stream_put(s, app_msg(b, 33, 2, 0), 0, NULL), 0);
	expect_app(s, 1000, 2000, 33, 2, 0);
	assert_int_equal(info(tcp, 1000, 2000).rcv_nxt, 533);
	assert_int_equal(info(tcp, 2000, 1000).snd_una, 533);

	/* no connection: refused, the message is still ours */
	m = app_msg((struct exp_proto_addr){ 1, 2 }, 10, 0, 0);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), -ENOTCONN);
	assert_int_equal(exp_proto_get_addr(m->rd).lport, 1);
	asx_msg_free_chain(m);
	m = raw("abc", 3);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), -EINVAL);
	asx_msg_free_chain(m);
	assert_int_equal(stats(tcp).short_drop, 1);
	assert_int_equal(exp_proto_tcp_close(tcp, a), 0);
	assert_int_equal(exp_proto_tcp_close(tcp, a), -ENOENT);
	m = app_msg(a, 10, 0, 0);
	assert_int_equal(asx_stream_put(s, m, 0, NULL), -ENOTCONN);
	asx_msg_free_chain(m);
	/* a segment for a closed connection is dropped at the receiver */
	assert_int_equal(asx_stream_put(s, app_msg(b, 10, 0, 0), 0, NULL), 0);
	assert_empty(s);
	st = stats(tcp);
	assert_int_equal(st.no_conn, 3);
	asx_stream_close(s);	/* frees b's TCB */
}

/* Acknowledgements piggybacked on data, the peer's window, wnd_over. */
static void test_tcp_window(void **state)
{
	struct exp_proto_addr a = { 1, 2 }, b = { 2, 1 };
	struct asx_module *nic, *tcp, *mods[1];
	struct exp_proto_tcb_info ia;
	struct asx_stream *s;

	(void)state;
	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = tcp = mk_tcp(ASX_MAP_RWLOCK, 1000, 0, false, 0);	/* no pure ACKs */
	s = stack_open(nic, mods, 1);
	assert_int_equal(exp_proto_tcp_open(tcp, a, 0, 0), 0);
	assert_int_equal(exp_proto_tcp_open(tcp, b, 0, 0), 0);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(asx_stream_put(s, app_msg(a, 400, 0, i), 0, NULL), 0);
	for (uint32_t i = 0; i < 3; i++)
		expect_app(s, 2, 1, 400, 0, i);
	ia = info(tcp, 1, 2);
	assert_int_equal(ia.snd_nxt, 1200);
	assert_int_equal(ia.snd_una, 0);		/* nothing acknowledged yet */
	assert_int_equal(stats(tcp).wnd_over, 1);	/* the third went past 1000 */
	assert_int_equal(stats(tcp).acks_sent, 0);
	/* data from b carries the acknowledgement and b's window */
	assert_int_equal(asx_stream_put(s, app_msg(b, 8, 0, 9), 0, NULL), 0);
	expect_app(s, 1, 2, 8, 0, 9);
	ia = info(tcp, 1, 2);
	assert_int_equal(ia.snd_una, 1200);
	assert_int_equal(ia.snd_wnd, 1000);
	assert_int_equal(ia.rcv_nxt, 8);
	asx_stream_close(s);
}

/* Segments from below: reorder buffer, duplicates, window, bad segments. */
static void test_tcp_reorder(void **state)
{
	struct prepared p = { .n = 0 };
	struct asx_module *nic, *tcp, *mods[1];
	struct exp_proto_stats st;
	unsigned char b[256];
	struct asx_stream *s;
	size_t n;

	(void)state;
	n = tcp_seg(b, 9000, 80, 1200, 0, EXP_PROTO_TCP_PSH, 100, 5, 2);
	prepared_add(&p, raw(b, n));
	n = tcp_seg(b, 9000, 80, 1100, 0, EXP_PROTO_TCP_PSH, 100, 5, 1);
	prepared_add(&p, raw(b, n));
	prepared_add(&p, raw(b, n));					/* held twice: dup */
	n = tcp_seg(b, 9000, 80, 1000, 0, EXP_PROTO_TCP_PSH, 100, 5, 0);
	prepared_add(&p, raw(b, n));					/* releases 1, 2 */
	prepared_add(&p, raw(b, n));					/* old: dup */
	n = tcp_seg(b, 9000, 80, 1300 + 4000, 0, EXP_PROTO_TCP_PSH, 100, 5, 9);
	prepared_add(&p, raw(b, n));					/* past the window */
	n = tcp_seg(b, 9000, 80, 1300, 0, EXP_PROTO_TCP_PSH, 100, 5, 3);
	b[40] ^= 4;
	prepared_add(&p, raw(b, n));					/* bad checksum */
	n = tcp_seg(b, 9000, 81, 1300, 0, EXP_PROTO_TCP_PSH, 100, 5, 3);
	prepared_add(&p, raw(b, n));					/* no connection */
	prepared_add(&p, raw(b, 19));					/* short */
	n = tcp_seg(b, 9000, 80, 1300, 0, EXP_PROTO_TCP_PSH, 0, 0, 0);
	b[12] = 0x60;							/* options */
	b[16] = b[17] = 0;
	{
		uint16_t ck = asx_inet_cksum(b, n);

		memcpy(b + 16, &ck, 2);
	}
	prepared_add(&p, raw(b, n));
	n = tcp_seg(b, 9000, 80, 1300, 0, EXP_PROTO_TCP_PSH, 100, 5, 3);
	prepared_add(&p, raw(b, n));					/* in order */

	p.shared = true;	/* delivered segments must not be written to */
	nic = mk_nic(EXP_PROTO_NIC_SINK, prepared_gen, &p);
	mods[0] = tcp = mk_tcp(ASX_MAP_RCU, 4096, 1, false, 0);
	s = stack_open(nic, mods, 1);
	assert_int_equal(exp_proto_tcp_open(tcp, (struct exp_proto_addr){ 80, 9000 }, 7, 1000),
			 0);
	nic_run(nic, p.n);
	for (uint32_t k = 0; k < 4; k++)
		expect_app(s, 80, 9000, 100, 5, k);
	assert_empty(s);
	st = stats(tcp);
	assert_int_equal(st.up, 4);
	assert_int_equal(st.ooo_held, 2);
	assert_int_equal(st.dup, 2);
	assert_int_equal(st.out_of_window, 1);
	assert_int_equal(st.bad_cksum, 1);
	assert_int_equal(st.no_conn, 1);
	assert_int_equal(st.short_drop, 1);
	assert_int_equal(st.bad_len, 1);
	assert_int_equal(st.ooo_drop, 0);
	assert_int_equal(st.acks_sent, 2);		/* one per in-order run */
	assert_int_equal(stats(nic).tx_frames, 2);	/* the ACKs went down */
	assert_int_equal(info(tcp, 80, 9000).rcv_nxt, 1400);
	assert_int_equal(info(tcp, 80, 9000).held, 0);
	n = tcp_seg(b, 9000, 80, 1200, 0, EXP_PROTO_TCP_PSH, 100, 5, 2);
	assert_memory_equal(p.f[0]->rd, b, n);
	asx_stream_close(s);
	prepared_free(&p);
}

/* A full reorder buffer, and drop-and-count instead of reordering. */
static void test_tcp_reorder_full(void **state)
{
	struct prepared p = { .n = 0 };
	struct asx_module *nic, *tcp, *mods[1];
	unsigned char b[128];
	struct asx_stream *s;
	size_t n;

	(void)state;
	for (uint32_t k = 1; k <= EXP_PROTO_TCP_REORDER + 1; k++) {
		n = tcp_seg(b, 1, 2, 10 * k, 0, EXP_PROTO_TCP_PSH, 10, 0, k);
		prepared_add(&p, raw(b, n));
	}
	n = tcp_seg(b, 1, 2, 0, 0, EXP_PROTO_TCP_PSH, 10, 0, 0);
	prepared_add(&p, raw(b, n));

	for (int mode = 0; mode < 2; mode++) {
		struct exp_proto_stats st;

		nic = mk_nic(EXP_PROTO_NIC_SINK, prepared_gen, &p);
		mods[0] = tcp = mk_tcp(ASX_MAP_NONE, 0, 0, mode == 1, 0);
		s = stack_open(nic, mods, 1);
		assert_int_equal(exp_proto_tcp_open(tcp, (struct exp_proto_addr){ 2, 1 }, 0, 0),
				 0);
		nic_run(nic, p.n);
		if (mode == 0) {	/* 8 held, the 9th dropped; then 0..8 in order */
			for (uint32_t k = 0; k <= EXP_PROTO_TCP_REORDER; k++)
				expect_app(s, 2, 1, 10, 0, k);
		} else {		/* only the in-order one */
			expect_app(s, 2, 1, 10, 0, 0);
		}
		assert_empty(s);
		st = stats(tcp);
		assert_int_equal(st.ooo_held, mode == 0 ? EXP_PROTO_TCP_REORDER : 0);
		assert_int_equal(st.ooo_drop, mode == 0 ? 1 : EXP_PROTO_TCP_REORDER + 1);
		asx_stream_close(s);
	}
	prepared_free(&p);
}

/* The reorder buffer's size is a parameter: 16 slots hold 16 segments ahead. */
static void test_tcp_reorder_param(void **state)
{
	enum { SLOTS = 16 };
	struct exp_proto_tcp_cfg c = { .lock = ASX_MAP_NONE, .reorder = SLOTS };
	struct prepared p = { .n = 0 };
	struct asx_module *nic, *tcp, *mods[1];
	struct exp_proto_stats st;
	unsigned char b[128];
	struct asx_stream *s;
	size_t n;

	(void)state;
	c.reorder = EXP_PROTO_TCP_REORDER_MAX + 1;
	assert_int_equal(exp_proto_tcp_create(&tcp, "tcp", &c), -EINVAL);
	c.reorder = SLOTS;
	for (uint32_t k = SLOTS; k >= 1; k--) {		/* the worst order: backwards */
		n = tcp_seg(b, 1, 2, 10 * k, 0, EXP_PROTO_TCP_PSH, 10, 0, k);
		prepared_add(&p, raw(b, n));
	}
	n = tcp_seg(b, 1, 2, 0, 0, EXP_PROTO_TCP_PSH, 10, 0, 0);
	prepared_add(&p, raw(b, n));
	nic = mk_nic(EXP_PROTO_NIC_SINK, prepared_gen, &p);
	assert_int_equal(exp_proto_tcp_create(&tcp, "tcp", &c), 0);
	mods[0] = tcp;
	s = stack_open(nic, mods, 1);
	assert_int_equal(exp_proto_tcp_open(tcp, (struct exp_proto_addr){ 2, 1 }, 0, 0), 0);
	nic_run(nic, p.n);
	for (uint32_t k = 0; k <= SLOTS; k++)
		expect_app(s, 2, 1, 10, 0, k);
	assert_empty(s);
	st = stats(tcp);
	assert_int_equal(st.ooo_held, SLOTS);
	assert_int_equal(st.ooo_drop, 0);
	asx_stream_close(s);
	prepared_free(&p);
}

/* ---------------------------------------------------------------- demux */

static void test_demux(void **state)
{
	struct exp_proto_gen g = { .mac = { 1 }, .peer_mac = { 2 }, .ip = IP_A, .peer_ip = IP_B,
				    .lport0 = 100, .rport0 = 200, .nconn = 4, .payload = 64 };
	unsigned char b[128], key[4];
	struct asx_msg *m, *copy;
	uint32_t conn;

	(void)state;
	for (int proto = 0; proto < 2; proto++) {
		g.proto = proto ? EXP_PROTO_IP_TCP : EXP_PROTO_IP_UDP;
		assert_int_equal(exp_proto_gen_init(&g), 0);
		for (uint64_t i = 0; i < 8; i++) {
			assert_int_equal(exp_proto_gen_frame(&g, i, &m), 0);
			copy = asx_msg_copy(m);
			assert_int_equal(exp_proto_demux(m, &conn), 0);
			assert_int_equal(conn, (100 + i % 4) << 16 | (200 + i % 4));
			assert_int_equal(exp_proto_demux_key(m, key, NULL), 0);
			assert_int_equal(exp_proto_get_addr(key).lport, 100 + i % 4);
			assert_int_equal(exp_proto_get_addr(key).rport, 200 + i % 4);
			assert_int_equal(asx_msg_length(m), asx_msg_length(copy));
			assert_memory_equal(m->rd, copy->rd, asx_msg_length(m));
			asx_msg_free_chain(copy);
			asx_msg_free_chain(m);
		}
		exp_proto_gen_fini(&g);
	}
	/* not for the filter: short, not IP, IPv6, ICMP */
	memset(b, 0, sizeof(b));
	eth_ip(b, MAC_A, IP_B, IP_A, EXP_PROTO_IP_UDP, 8);
	m = raw(b, 37);
	assert_int_equal(exp_proto_demux(m, &conn), -EPROTO);
	asx_msg_free_chain(m);
	m = raw(b, 38);
	assert_int_equal(exp_proto_demux(m, &conn), 0);
	asx_msg_free_chain(m);
	b[12] = 0x86;
	b[13] = 0xdd;
	m = raw(b, 64);
	assert_int_equal(exp_proto_demux(m, &conn), -EPROTO);
	asx_msg_free_chain(m);
	eth_ip(b, MAC_A, IP_B, IP_A, 1, 8);
	m = raw(b, 64);
	assert_int_equal(exp_proto_demux(m, &conn), -EPROTO);
	asx_msg_free_chain(m);
	eth_ip(b, MAC_A, IP_B, IP_A, EXP_PROTO_IP_TCP, 8);
	b[14] = 0x65;
	m = raw(b, 64);
	assert_int_equal(exp_proto_demux(m, &conn), -EPROTO);
	asx_msg_free_chain(m);
	/* across a chain cut anywhere */
	eth_ip(b, MAC_A, IP_B, IP_A, EXP_PROTO_IP_TCP, 8);
	b[34] = 0x12;
	b[35] = 0x34;
	b[36] = 0x56;
	b[37] = 0x78;
	m = raw(b, 21);
	asx_msg_link(m, raw(b + 21, 17));
	assert_int_equal(exp_proto_demux(m, &conn), 0);
	assert_int_equal(conn, 0x56781234);
	asx_msg_free_chain(m);
}

/* ---------------------------------------------------------------- end to end */

#define E2E_CONNS 8
#define SPORT0 1000	/* connection c: (SPORT0 + c) sends to (DPORT0 + c) */
#define DPORT0 2000

static size_t e2e_len(uint32_t k)
{
	return 8 + (k * 37u) % 1400u;
}

struct writer {
	pthread_t th;
	struct asx_stream *s;
	unsigned int first, step, nconn;	/* connections first, first+step, ... */
	uint32_t msgs;				/* per connection */
	int err;				/* first failure */
	uint32_t sent;
	uint32_t done;				/* atomic: finished */
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct timespec ts;

	for (uint32_t k = 0; k < w->msgs && !w->err; k++) {
		for (unsigned int c = w->first; c < w->nconn && !w->err; c += w->step) {
			struct exp_proto_addr a = { (uint16_t)(SPORT0 + c), (uint16_t)(DPORT0 + c) };
			size_t len = e2e_len(k);
			struct asx_msg *m = asx_msg_alloc(EXP_PROTO_HEADROOM + 4 + len,
							  ASX_MSG_DATA);
			int r;

			if (!m) {
				w->err = -ENOMEM;
				break;
			}
			asx_msg_reserve(m, EXP_PROTO_HEADROOM);
			exp_proto_put_addr(m->wr, a);
			asx_msg_commit(m, 4);
			exp_proto_gen_fill(m->wr, len, c, k);
			asx_msg_commit(m, len);
			r = asx_stream_put(w->s, m, 0, asx_deadline(&ts, DEADLINE_NS));
			if (r) {
				asx_msg_free_chain(m);
				w->err = r;
			} else {
				w->sent++;
			}
		}
	}
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct counted {
	struct asx_module **mods;
	uint64_t total;
};

static bool all_counted(void *arg)
{
	struct counted *c = arg;
	struct exp_proto_stats st;

	for (int i = 0; i < 3; i++) {
		exp_proto_stats(c->mods[i], &st);
		if (st.up < c->total)
			return false;
	}
	return true;
}

/*
 * NIC(loop) <- DLP <- IP <- TCP or UDP <- head, @nw writers over
 * E2E_CONNS connections, @thr service threads per side in every layer
 * (0: message-based).  Every message comes back exactly once, byte for
 * byte; per connection in order (with one service thread per layer or
 * none, UDP keeps the order too).
 */
static void e2e_loop(uint8_t proto, enum asx_map_lock lock, unsigned int nw, int thr,
		     uint32_t msgs)
{
	struct asx_module *nic, *mods[3];
	uint32_t next[E2E_CONNS] = { 0 };
	struct writer w[4];
	struct asx_stream *s;
	uint64_t total = (uint64_t)msgs * E2E_CONNS;

	assert_true(nw <= 4);
	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = mk_dlp(MAC_A, MAC_A, thr);
	mods[1] = mk_ip(IP_A, IP_A, proto, thr);
	mods[2] = proto == EXP_PROTO_IP_TCP ? mk_tcp(lock, 0, 2, false, thr) : mk_udp(thr);
	s = stack_open(nic, mods, 3);
	if (proto == EXP_PROTO_IP_TCP) {
		for (uint16_t c = 0; c < E2E_CONNS; c++) {
			assert_int_equal(exp_proto_tcp_open(mods[2], (struct exp_proto_addr){
				SPORT0 + c, DPORT0 + c }, 1000u * c, 7), 0);
			assert_int_equal(exp_proto_tcp_open(mods[2], (struct exp_proto_addr){
				DPORT0 + c, SPORT0 + c }, 7, 1000u * c), 0);
		}
	}
	for (unsigned int i = 0; i < nw; i++) {
		w[i] = (struct writer){ .s = s, .first = i, .step = nw, .nconn = E2E_CONNS,
					.msgs = msgs };
		assert_int_equal(pthread_create(&w[i].th, NULL, writer_main, &w[i]), 0);
	}
	for (uint64_t i = 0; i < total; i++) {
		struct exp_proto_addr a;
		struct asx_msg *m = get(s);
		uint32_t c, k;
		size_t len;

		assert_true(app_parse(m, &a, &len, &c, &k));
		assert_true(c < E2E_CONNS);
		assert_int_equal(a.lport, DPORT0 + c);
		assert_int_equal(a.rport, SPORT0 + c);
		assert_int_equal(k, next[c]);		/* once, in order */
		assert_int_equal(len, e2e_len(k));
		next[c]++;
		asx_msg_free_chain(m);
	}
	for (unsigned int i = 0; i < nw; i++) {
		pthread_join(w[i].th, NULL);
		assert_int_equal(w[i].err, 0);
	}
	assert_empty(s);
	/* a layer counts a message once the put above it returned: the
	 * counters may lag what the head has, for a while */
	{
		struct counted c = { mods, total };

		assert_true(wait_for(all_counted, &c));
	}
	for (int i = 0; i < 3; i++) {
		struct exp_proto_stats st = stats(mods[i]);

		assert_int_equal(exp_proto_drops(&st), 0);
		if (i < 2)
			assert_true(st.up >= total);	/* + the ACKs */
		else
			assert_int_equal(st.up, total);
	}
	if (proto == EXP_PROTO_IP_TCP) {
		struct exp_proto_stats st = stats(mods[2]);

		/* a pure ACK every 2 segments, or piggybacked, or skipped */
		assert_true(st.acks_rcvd <= st.acks_sent);
		assert_true(st.acks_sent + st.acks_skipped > 0);
		for (uint16_t c = 0; c < E2E_CONNS; c++) {
			struct exp_proto_tcb_info ri = info(mods[2], DPORT0 + c, SPORT0 + c);
			struct exp_proto_tcb_info si = info(mods[2], SPORT0 + c, DPORT0 + c);

			assert_int_equal(ri.delivered, msgs);
			assert_int_equal(ri.rcv_nxt, si.snd_nxt);
			assert_int_equal(ri.held, 0);
			assert_true(si.snd_nxt - si.snd_una <= si.snd_nxt - 1000u * c);
		}
	}
	asx_stream_close(s);
}

static void test_e2e_tcp_mp(void **state)
{
	(void)state;
	e2e_loop(EXP_PROTO_IP_TCP, ASX_MAP_MUTEX, 1, 0, 400);
	e2e_loop(EXP_PROTO_IP_TCP, ASX_MAP_RCU, 4, 0, 400);
}

static void test_e2e_tcp_lp(void **state)
{
	(void)state;
	e2e_loop(EXP_PROTO_IP_TCP, ASX_MAP_NONE, 2, 1, 300);
}

static void test_e2e_udp(void **state)
{
	(void)state;
	e2e_loop(EXP_PROTO_IP_UDP, ASX_MAP_NONE, 2, 0, 400);
	e2e_loop(EXP_PROTO_IP_UDP, ASX_MAP_NONE, 2, 1, 300);
}

/*
 * Frames from the NIC's producer (the built-in generator) up
 * NIC(sink) <- DLP <- IP <- TCP/UDP <- head; the TCP ACKs go down to the
 * NIC, which counts them.
 */
#define E2E_NIC_FRAMES 1000	/* NCONN * PER below */

static bool acks_out(void *arg)
{
	struct asx_module **m = arg;	/* nic, then tcp */
	struct exp_proto_stats a, b;

	exp_proto_stats(m[-1], &a);
	exp_proto_stats(m[2], &b);
	/* one ACK per segment (ack_every 1), sent or skipped, and every one
	 * sent has reached the NIC */
	return b.acks_sent + b.acks_skipped == E2E_NIC_FRAMES && a.tx_frames == b.acks_sent;
}

static void e2e_nic(uint8_t proto, int thr)
{
	enum { NCONN = 5, PER = E2E_NIC_FRAMES / NCONN };
	struct exp_proto_gen g = { .proto = proto, .ip = IP_A, .peer_ip = IP_B,
				    .lport0 = 7000, .rport0 = 9000, .nconn = NCONN,
				    .payload = 300, .iss = 0xfffff000u };
	struct asx_module *all[4], **mods = all + 1, *nic;
	uint32_t next[NCONN] = { 0 };
	struct exp_proto_stats st;
	struct asx_stream *s;
	struct timespec ts;

	memcpy(g.mac, MAC_A, 6);
	memcpy(g.peer_mac, MAC_B, 6);
	assert_int_equal(exp_proto_gen_init(&g), 0);
	all[0] = nic = mk_nic(EXP_PROTO_NIC_SINK, exp_proto_gen_frame, &g);
	mods[0] = mk_dlp(MAC_A, MAC_B, thr);
	mods[1] = mk_ip(IP_A, IP_B, proto, thr);
	mods[2] = proto == EXP_PROTO_IP_TCP ? mk_tcp(ASX_MAP_RWLOCK, 0, 1, false, thr)
					     : mk_udp(thr);
	s = stack_open(nic, mods, 3);
	if (proto == EXP_PROTO_IP_TCP)		/* sequence numbers wrap around */
		for (uint16_t c = 0; c < NCONN; c++)
			assert_int_equal(exp_proto_tcp_open(mods[2], (struct exp_proto_addr){
				7000 + c, 9000 + c }, 1, g.iss), 0);
	assert_int_equal(exp_proto_nic_start(nic, NCONN * PER), 0);
	assert_int_equal(exp_proto_nic_start(nic, 1), -EBUSY);
	for (int i = 0; i < NCONN * PER; i++) {
		struct exp_proto_addr a;
		struct asx_msg *m = get(s);
		uint32_t c, k;
		size_t len;

		assert_true(app_parse(m, &a, &len, &c, &k));
		assert_true(c < NCONN);
		assert_int_equal(a.lport, 7000 + c);
		assert_int_equal(a.rport, 9000 + c);
		assert_int_equal(len, 300);
		assert_int_equal(k, next[c]);
		next[c]++;
		asx_msg_free_chain(m);
	}
	assert_int_equal(exp_proto_nic_wait(nic, asx_deadline(&ts, DEADLINE_NS)), 0);
	assert_int_equal(exp_proto_nic_stop(nic), NCONN * PER);
	assert_empty(s);
	st = stats(nic);
	assert_int_equal(st.rx_frames, NCONN * PER);
	assert_int_equal(st.rx_fail, 0);
	for (int i = 0; i < 3; i++) {
		struct exp_proto_stats ms = stats(mods[i]);

		assert_int_equal(exp_proto_drops(&ms), 0);
	}
	if (proto == EXP_PROTO_IP_TCP) {
		struct exp_proto_stats ts2 = stats(mods[2]);

		/* task-based: the last ACKs may still be on their way down */
		assert_true(wait_for(acks_out, mods));
		ts2 = stats(mods[2]);
		assert_int_equal(ts2.acks_sent + ts2.acks_skipped, NCONN * PER);
		assert_int_equal(stats(nic).tx_frames, ts2.acks_sent);
		assert_int_equal(info(mods[2], 7000, 9000).rcv_nxt, g.iss + 300u * PER);
	} else {
		assert_int_equal(st.tx_frames, 0);
	}
	asx_stream_close(s);
	exp_proto_gen_fini(&g);
}

static void test_e2e_nic_tcp(void **state)
{
	(void)state;
	e2e_nic(EXP_PROTO_IP_TCP, 0);
	e2e_nic(EXP_PROTO_IP_TCP, 1);
}

static void test_e2e_nic_udp(void **state)
{
	(void)state;
	e2e_nic(EXP_PROTO_IP_UDP, 0);
	e2e_nic(EXP_PROTO_IP_UDP, 1);
}

/* The producer stops on request even when nobody reads (flow control). */
static void test_nic_stop(void **state)
{
	struct exp_proto_gen g = { .proto = EXP_PROTO_IP_UDP, .ip = IP_A, .peer_ip = IP_B,
				    .lport0 = 1, .rport0 = 2, .nconn = 3, .payload = 1000 };
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER, .head_hiwat = 16384,
		 .head_lowat = 4096);
	struct asx_module *nic, *udp;
	struct exp_proto_stats st;
	struct asx_stream *s;
	struct asx_msg *m;
	uint64_t n, got = 0;

	(void)state;
	memcpy(g.mac, MAC_A, 6);
	assert_int_equal(exp_proto_gen_init(&g), 0);
	nic = mk_nic(EXP_PROTO_NIC_SINK, exp_proto_gen_frame, &g);
	o.driver = nic;
	assert_int_equal(asx_stream_open(&s, &o), 0);
	assert_int_equal(asx_stream_push(s, mk_dlp(MAC_A, MAC_B, 0), 0, NULL), 0);
	assert_int_equal(asx_stream_push(s, mk_ip(IP_A, IP_B, EXP_PROTO_IP_UDP, 0), 0, NULL), 0);
	udp = mk_udp(0);
	assert_int_equal(asx_stream_push(s, udp, 0, NULL), 0);
	assert_int_equal(exp_proto_nic_start(nic, 0), 0);	/* until stopped */
	m = get(s);	/* it runs */
	asx_msg_free_chain(m);
	got++;
	n = exp_proto_nic_stop(nic);
	while (asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL) == 0) {
		asx_msg_free_chain(m);
		got++;
	}
	assert_int_equal(got, n);
	st = stats(nic);
	assert_int_equal(st.rx_frames, n);
	assert_int_equal(stats(udp).up, n);
	asx_stream_close(s);
	exp_proto_gen_fini(&g);
}

/* ---------------------------------------------------------------- stress */

/*
 * Several threads over each map lock strategy: NIC(loop) <- DLP <- IP
 * <- TCP <- head, with IP message-based (nothing may be lost) and with two
 * service threads per side (segments overtake each other, so the reorder
 * buffer works and overflows).  Four writers own
 * two connections each; a fifth thread opens and closes other connections
 * and sends on them (not with ASX_MAP_NONE: that strategy allows finds
 * only while the stream runs).  Invariants, checked at the end by the
 * main thread, which also reads:
 *  - per connection, messages arrive in order, each at most once, byte
 *    for byte;
 *  - delivered + dropped out of order or past the window + still held ==
 *    sent (TCP-lite does not retransmit: after one segment is dropped the
 *    rest of its connection waits behind the gap and is dropped too);
 *  - nothing else is dropped (no checksum, length, duplicate drops);
 *  - snd_una never passes snd_nxt.
 */
#define ST_W 4
#define ST_CONNS (2 * ST_W)
#define CHURN_PORT 30000
#define CHURN_MAX (4000 / SLOW)

struct churn {
	pthread_t th;
	struct asx_stream *s;
	struct asx_module *tcp;
	uint32_t stop;		/* atomic */
	int err;
	uint64_t cycles;	/* atomic */
};

static void *churn_main(void *arg)
{
	struct churn *ch = arg;
	struct timespec ts;

	/* bounded: with an unfair lock it could otherwise starve the writers */
	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE) && !ch->err &&
	       __atomic_load_n(&ch->cycles, __ATOMIC_RELAXED) < CHURN_MAX) {
		uint16_t p = (uint16_t)(CHURN_PORT +
					__atomic_load_n(&ch->cycles, __ATOMIC_RELAXED) % 16);
		struct exp_proto_addr a = { p, (uint16_t)(p + 100) }, b = { a.rport, a.lport };
		struct asx_msg *m;
		int r;

		if (exp_proto_tcp_open(ch->tcp, a, 0, 0) || exp_proto_tcp_open(ch->tcp, b, 0, 0)) {
			ch->err = -EEXIST;
			break;
		}
		m = asx_msg_alloc(EXP_PROTO_HEADROOM + 4 + 64, ASX_MSG_DATA);
		if (!m) {
			ch->err = -ENOMEM;
			break;
		}
		asx_msg_reserve(m, EXP_PROTO_HEADROOM);
		exp_proto_put_addr(m->wr, a);
		asx_msg_commit(m, 4);
		exp_proto_gen_fill(m->wr, 64, 0xffff, 0);
		asx_msg_commit(m, 64);
		r = asx_stream_put(ch->s, m, 0, asx_deadline(&ts, DEADLINE_NS));
		if (r) {
			asx_msg_free_chain(m);
			ch->err = r;
		}
		/* close while the segment may still be on its way: no_conn then */
		if (exp_proto_tcp_close(ch->tcp, a) || exp_proto_tcp_close(ch->tcp, b))
			ch->err = -ENOENT;
		__atomic_add_fetch(&ch->cycles, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void stress(enum asx_map_lock lock, int ip_thr)
{
	uint32_t msgs = 1500 / SLOW;
	struct asx_module *nic, *mods[3];
	uint32_t next[ST_CONNS] = { 0 };
	uint64_t delivered[ST_CONNS] = { 0 }, sent = 0, got = 0, churned = 0;
	struct churn ch = { .err = 0 };
	struct exp_proto_stats st;
	struct writer w[ST_W];
	struct asx_stream *s;
	bool done = false;
	uint64_t end;

	nic = mk_nic(EXP_PROTO_NIC_LOOP, NULL, NULL);
	mods[0] = mk_dlp(MAC_A, MAC_A, 0);
	mods[1] = mk_ip(IP_A, IP_A, EXP_PROTO_IP_TCP, ip_thr);
	mods[2] = mk_tcp(lock, 0, 4, false, 0);
	s = stack_open(nic, mods, 3);
	for (uint16_t c = 0; c < ST_CONNS; c++) {
		assert_int_equal(exp_proto_tcp_open(mods[2], (struct exp_proto_addr){
			SPORT0 + c, DPORT0 + c }, 0, 0), 0);
		assert_int_equal(exp_proto_tcp_open(mods[2], (struct exp_proto_addr){
			DPORT0 + c, SPORT0 + c }, 0, 0), 0);
	}
	for (unsigned int i = 0; i < ST_W; i++) {
		w[i] = (struct writer){ .s = s, .first = i, .step = ST_W, .nconn = ST_CONNS,
					.msgs = msgs };
		assert_int_equal(pthread_create(&w[i].th, NULL, writer_main, &w[i]), 0);
	}
	if (lock != ASX_MAP_NONE) {
		ch.s = s;
		ch.tcp = mods[2];
		assert_int_equal(pthread_create(&ch.th, NULL, churn_main, &ch), 0);
	}

	/* read until everything is accounted for, or the deadline: lost */
	end = asx_now_ns() + DEADLINE_NS;
	while (!done) {
		struct exp_proto_addr a;
		struct asx_msg *m = NULL;
		struct timespec ts;
		uint32_t c, k;
		size_t len;
		int r;

		r = asx_stream_get(s, &m, 0, asx_deadline(&ts, 50 * 1000 * 1000));
		if (r == 0) {
			assert_true(app_parse(m, &a, &len, &c, &k));
			asx_msg_free_chain(m);
			if (c == 0xffff) {		/* the churn thread's */
				churned++;
				continue;
			}
			assert_true(c < ST_CONNS);
			assert_int_equal(a.lport, DPORT0 + c);
			assert_int_equal(len, e2e_len(k));
			assert_true(k >= next[c]);	/* in order, at most once */
			next[c] = k + 1;
			delivered[c]++;
			got++;
			continue;
		}
		assert_int_equal(r, -ETIMEDOUT);
		if (sent == 0) {
			bool writing = false;

			for (unsigned int i = 0; i < ST_W; i++)
				writing |= !__atomic_load_n(&w[i].done, __ATOMIC_ACQUIRE);
			if (writing && asx_now_ns() < end)
				continue;
			for (unsigned int i = 0; i < ST_W; i++) {
				pthread_join(w[i].th, NULL);
				assert_int_equal(w[i].err, 0);
				sent += w[i].sent;
			}
			assert_int_equal(sent, (uint64_t)msgs * ST_CONNS);
		}
		/* delivered + dropped out of order + held == sent? */
		st = stats(mods[2]);
		{
			uint64_t held = 0;

			for (uint16_t i = 0; i < ST_CONNS; i++)
				held += info(mods[2], DPORT0 + i, SPORT0 + i).held;
			if (got + st.ooo_drop + st.out_of_window + held >= sent)
				done = true;
			if (!done && asx_now_ns() >= end)
				print_message("stuck: sent %" PRIu64 " got %" PRIu64 " ooo_drop %"
					      PRIu64 " held %" PRIu64 " no_conn %" PRIu64
					      " drops %" PRIu64 "\n", sent, got, st.ooo_drop, held,
					      st.no_conn, exp_proto_drops(&st));
		}
		assert_true(done || asx_now_ns() < end);
	}
	if (lock != ASX_MAP_NONE) {
		/* on a loaded host the writers may be done before the churn thread
		 * ran at all: let it finish one cycle before it is stopped */
		end = asx_now_ns() + DEADLINE_NS;
		while (!__atomic_load_n(&ch.cycles, __ATOMIC_ACQUIRE) &&
		       asx_now_ns() < end)
			usleep(1000);
		__atomic_store_n(&ch.stop, 1, __ATOMIC_RELEASE);
		pthread_join(ch.th, NULL);
		assert_int_equal(ch.err, 0);
		assert_true(ch.cycles > 0);
	}
	/* drain what the churn thread still has in flight */
	{
		struct asx_msg *m;
		struct timespec ts;

		while (asx_stream_get(s, &m, 0, asx_deadline(&ts, 100 * 1000 * 1000)) == 0) {
			uint32_t c, k;
			struct exp_proto_addr a;
			size_t len;

			assert_true(app_parse(m, &a, &len, &c, &k));
			assert_int_equal(c, 0xffff);
			churned++;
			asx_msg_free_chain(m);
		}
	}
	st = stats(mods[2]);
	{
		uint64_t held = 0;

		for (uint16_t i = 0; i < ST_CONNS; i++) {
			struct exp_proto_tcb_info ri = info(mods[2], DPORT0 + i, SPORT0 + i);
			struct exp_proto_tcb_info si = info(mods[2], SPORT0 + i, DPORT0 + i);

			held += ri.held;
			assert_int_equal(ri.delivered, delivered[i]);
			assert_true(si.snd_nxt - si.snd_una <= si.snd_nxt);
		}
		assert_int_equal(got + st.ooo_drop + st.out_of_window + held, sent);
	}
	assert_int_equal(st.bad_cksum + st.bad_len + st.short_drop + st.nomem, 0);
	/* only the churn thread's segments may find no connection, or arrive
	 * at a new incarnation of theirs after its own segment (dup) */
	assert_true(churned + st.no_conn + st.dup <= ch.cycles);
	if (ip_thr == 0)	/* nothing overtakes: nothing is lost */
		assert_int_equal(got, sent);
	for (int i = 0; i < 2; i++) {
		struct exp_proto_stats ms = stats(mods[i]);

		assert_int_equal(exp_proto_drops(&ms), 0);
	}
	print_message("stress %s, IP threads %d: %" PRIu64 " sent, %" PRIu64 " delivered, %" PRIu64
		      " held, %" PRIu64 " dropped out of order, %" PRIu64 " past the window, %"
		      PRIu64 " churn cycles\n", asx_map_lock_name(lock), ip_thr, sent, got, st.ooo_held,
		      st.ooo_drop, st.out_of_window, ch.cycles);
	asx_stream_close(s);
}

static void test_stress_none(void **state)
{
	(void)state;
	stress(ASX_MAP_NONE, 0);
	stress(ASX_MAP_NONE, 2);
}

static void test_stress_mutex(void **state)
{
	(void)state;
	stress(ASX_MAP_MUTEX, 0);
	stress(ASX_MAP_MUTEX, 2);
}

static void test_stress_rwlock(void **state)
{
	(void)state;
	stress(ASX_MAP_RWLOCK, 0);
	stress(ASX_MAP_RWLOCK, 2);
}

static void test_stress_rcu(void **state)
{
	(void)state;
	stress(ASX_MAP_RCU, 0);
	stress(ASX_MAP_RCU, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constructor_wrapper),
		cmocka_unit_test(test_ip_header),
		cmocka_unit_test(test_tcp_header),
		cmocka_unit_test(test_pattern),
		cmocka_unit_test(test_dlp),
		cmocka_unit_test(test_ip),
		cmocka_unit_test(test_udp),
		cmocka_unit_test(test_cksum_task),
		cmocka_unit_test(test_tcp_loop),
		cmocka_unit_test(test_tcp_window),
		cmocka_unit_test(test_tcp_reorder),
		cmocka_unit_test(test_tcp_reorder_full),
		cmocka_unit_test(test_tcp_reorder_param),
		cmocka_unit_test(test_demux),
		cmocka_unit_test(test_e2e_tcp_mp),
		cmocka_unit_test(test_e2e_tcp_lp),
		cmocka_unit_test(test_e2e_udp),
		cmocka_unit_test(test_e2e_nic_tcp),
		cmocka_unit_test(test_e2e_nic_udp),
		cmocka_unit_test(test_nic_stop),
		cmocka_unit_test(test_stress_none),
		cmocka_unit_test(test_stress_mutex),
		cmocka_unit_test(test_stress_rwlock),
		cmocka_unit_test(test_stress_rcu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
