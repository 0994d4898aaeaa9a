/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * proto/proto.h - protocol stacks as Stream Modules (exp/proto).
 *
 * The Modules of the threading-architecture experiment (issue 17):
 *
 *   head          the application: DATA messages that start with a 4-byte
 *                 address, struct exp_proto_addr (local port, remote port)
 *   "tcp"/"udp"   TCP-lite / UDP-lite transport
 *   "ip"          IP-lite network layer (a real 20-byte IPv4 header)
 *   "dlp"         data link (a 14-byte Ethernet header)
 *   "nic"         the simulated network interface: a driver tail whose own
 *                 producer thread feeds frames up at full speed, and which
 *                 counts and frees (or turns around) frames going down
 *
 * Every Module has a put on both sides and runs message-based; with
 * svc_threads > 0 in its configuration its open() activates both Tasks
 * (task-based, the default svc calls put).  Only DATA messages are
 * processed; other types pass through.  Coming up, bad frames are counted
 * in the Module's struct exp_proto_stats and freed (put returns 0): a bad
 * frame never reaches the next layer and never fails a put.  Going down, a
 * message that cannot be sent (no address: -EINVAL and short_drop
 * counted, no connection: -ENOTCONN and no_conn counted, too long:
 * -EMSGSIZE, -ENOMEM) is refused and stays the caller's, unchanged, as
 * does one the layer below refused (flow control: -ETIMEDOUT ...).
 *
 * Not part of libasx: written against its public headers, built into
 * build/exp/libasx-exp.a, which the tests and asx-bench link with the
 * shared libasx.  Documentation/experiments.rst describes the formats.
 */
#ifndef EXP_PROTO_PROTO_H
#define EXP_PROTO_PROTO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <asx/map.h>
#include <asx/msg.h>
#include <asx/stream.h>

/* ---------------------------------------------------------------- formats */

#define EXP_PROTO_ETH_HLEN	14
#define EXP_PROTO_ETH_IP	0x0800	/* ethertype */
#define EXP_PROTO_IP_HLEN	20
#define EXP_PROTO_IP_TCP	6	/* IP protocol numbers */
#define EXP_PROTO_IP_UDP	17
#define EXP_PROTO_UDP_HLEN	8
#define EXP_PROTO_TCP_HLEN	20
#define EXP_PROTO_ADDR_LEN	4	/* struct exp_proto_addr on the wire */
/* Headroom a message written at the head should reserve for all headers. */
#define EXP_PROTO_HEADROOM	(EXP_PROTO_ETH_HLEN + EXP_PROTO_IP_HLEN + EXP_PROTO_TCP_HLEN)

/* TCP-lite flags (the TCP header's flag byte) */
#define EXP_PROTO_TCP_FIN	0x01
#define EXP_PROTO_TCP_SYN	0x02
#define EXP_PROTO_TCP_PSH	0x08
#define EXP_PROTO_TCP_ACK	0x10

/*
 * The address in front of every DATA message above the transport layer:
 * going down, the sender's local and the peer's port; coming up, the
 * receiver's local port (the segment's destination) and the sender's.
 * Big-endian on the wire, host order here.
 */
struct exp_proto_addr {
	uint16_t lport, rport;
};

/* Host order views of the headers (the wire is big-endian). */
struct exp_proto_ip {
	uint8_t tos, ttl, proto;
	uint16_t len, id;		/* total length (header + payload) */
	uint32_t src, dst;
};
struct exp_proto_tcp {
	uint16_t sport, dport, win;
	uint32_t seq, ack;
	uint8_t flags;
};

/* Encode/decode.  put_* write exactly the header's length into @p. */
void exp_proto_put_addr(void *p, struct exp_proto_addr a);
struct exp_proto_addr exp_proto_get_addr(const void *p);
void exp_proto_eth_put(void *p, const uint8_t dst[6], const uint8_t src[6], uint16_t type);
/* IP header with its RFC 1071 checksum filled in. */
void exp_proto_ip_put(void *p, const struct exp_proto_ip *h);
/* 0, -EPROTO (version/IHL), -EMSGSIZE (length field), -EBADMSG (checksum).
 * @avail: bytes in the packet (header included) as received. */
int exp_proto_ip_parse(const void *p, size_t avail, struct exp_proto_ip *h);
/* UDP header, checksum 0 (the caller sums header + payload then stores it). */
void exp_proto_udp_put(void *p, uint16_t sport, uint16_t dport, uint16_t len);
void exp_proto_tcp_put(void *p, const struct exp_proto_tcp *h);
void exp_proto_tcp_parse(const void *p, struct exp_proto_tcp *h);

/* ---------------------------------------------------------------- messages */

/* Prepend @len bytes (headroom if unshared, else a chained block, reserving
 * room for lower headers).  0 or -ENOMEM (message unchanged). */
int exp_proto_push_hdr(struct asx_msg **mp, const void *hdr, size_t len);
struct exp_proto_common;

/* Undo push_hdr: *@mp back to @orig (what it was before the push). */
void exp_proto_pop_hdr(struct asx_msg **mp, struct asx_msg *orig, size_t len);
/*
 * Prepend @hdr (@hlen bytes) to @m and pass it down from @t; counted in
 * @c (@len payload bytes) once taken.  On refusal @m is as it was, the
 * caller's again, and the error is returned.
 */
int exp_proto_send(struct asx_task *t, struct exp_proto_common *c, struct asx_msg *m,
		   const void *hdr, size_t hlen, size_t len, const struct timespec *dl);
/*
 * Replace the first @hlen bytes (contiguous in the first block) with @nlen
 * <= @hlen bytes of @nh, in place unless the data is shared.  0 or -ENOMEM
 * (unchanged).  restore_hdr undoes it, given the old bytes @saved.
 */
int exp_proto_replace_hdr(struct asx_msg **mp, size_t hlen, const void *nh, size_t nlen);
void exp_proto_restore_hdr(struct asx_msg **mp, struct asx_msg *orig, size_t hlen,
			   const void *saved, size_t nlen);
/* Make the first @len bytes contiguous and return them, or NULL (too short, ENOMEM). */
unsigned char *exp_proto_pull(struct asx_msg *m, size_t len);
/* Cut the chain to @len bytes (len <= asx_msg_length). */
void exp_proto_trim(struct asx_msg *m, size_t len);

/* ---------------------------------------------------------------- statistics */

/* One struct for every Module; each counts what applies to it (atomics). */
struct exp_proto_stats {
	uint64_t down, up;		/* DATA messages passed on, each way */
	uint64_t down_bytes, up_bytes;	/* their payload bytes at this layer */
	uint64_t short_drop;		/* too short for the header */
	uint64_t bad_version;		/* IP version/IHL, DLP ethertype */
	uint64_t bad_len;		/* length field disagrees with the frame */
	uint64_t bad_cksum;
	uint64_t not_mine;		/* address/protocol/port not ours */
	uint64_t no_conn;		/* TCP: no connection for the ports */
	uint64_t nomem;			/* dropped for lack of memory */
	uint64_t dup;			/* TCP: already received */
	uint64_t ooo_held;		/* TCP: held in the reorder buffer */
	uint64_t ooo_drop;		/* TCP: out of order, reorder buffer full */
	uint64_t out_of_window;		/* TCP: beyond the receive window */
	uint64_t acks_sent, acks_rcvd;	/* TCP: pure ACK segments */
	uint64_t acks_skipped;		/* TCP: not sent: the layer below was full */
	uint64_t wnd_over;		/* TCP: sent beyond the peer's window */
	uint64_t tx_frames, tx_bytes;	/* NIC: frames taken going down */
	uint64_t rx_frames, rx_bytes;	/* NIC: frames produced going up */
	uint64_t rx_fail;		/* NIC: frames the stream refused */
};

/* 0, or -EINVAL if @mod is not a proto Module. */
int exp_proto_stats(struct asx_module *mod, struct exp_proto_stats *out);
/* Sum of every drop counter (short .. ooo_drop, out_of_window). */
uint64_t exp_proto_drops(const struct exp_proto_stats *s);

/* ---------------------------------------------------------------- Modules */

/*
 * The one place that creates Modules (asx_module_create and the asx_mod_*
 * constructors): @stock NULL makes a Module of @wr/@rd/@arg (freed with
 * @dtor(arg)); otherwise one of the stock Modules "pass", "counter",
 * "loopback", "cksum", "framer" named @name.  0 and *@out, -EINVAL, -ENOMEM.
 * On failure @dtor is not called.
 */
int exp_proto_module_new(struct asx_module **out, const char *stock, const char *name,
			 const struct asx_task_ops *wr, const struct asx_task_ops *rd,
			 void *arg, void (*dtor)(void *arg));

/* DLP: a station address; accepts frames to it or to broadcast. */
struct exp_proto_dlp_cfg {
	uint8_t mac[6];			/* ours (source going down) */
	uint8_t peer[6];		/* destination going down */
	int svc_threads;
};
int exp_proto_dlp_create(struct asx_module **out, const char *name,
			 const struct exp_proto_dlp_cfg *cfg);

/* IP-lite: one local and one peer address, one transport protocol. */
struct exp_proto_ip_cfg {
	uint32_t local, peer;		/* host order */
	uint8_t proto;			/* EXP_PROTO_IP_TCP or _UDP */
	uint8_t ttl;			/* 0: 64 */
	int svc_threads;
};
int exp_proto_ip_create(struct asx_module **out, const char *name,
			const struct exp_proto_ip_cfg *cfg);

/* UDP-lite: connectionless; ports from the message's address. */
struct exp_proto_udp_cfg {
	bool no_cksum;			/* send 0 (no checksum); a 0 received is not checked */
	bool rx_cksum_done;		/* coming up, length and checksum were checked
					 * below (exp_proto_cksum_create) */
	int svc_threads;
};
int exp_proto_udp_create(struct asx_module **out, const char *name,
			 const struct exp_proto_udp_cfg *cfg);

/* TCP-lite: connection control blocks in an asx_map with @lock. */
#define EXP_PROTO_TCP_REORDER 8	/* default reorder buffer slots per connection */
#define EXP_PROTO_TCP_REORDER_MAX 4096
struct exp_proto_tcp_cfg {
	enum asx_map_lock lock;
	uint32_t rcv_wnd;		/* receive window in bytes (0: 65535) */
	unsigned int ack_every;		/* a pure ACK every n in-order segments (0: never) */
	bool no_reorder;		/* drop-and-count out-of-order segments */
	bool rx_cksum_done;		/* coming up, the checksum was checked below
					 * (exp_proto_cksum_create) */
	unsigned int reorder;		/* reorder buffer slots per connection (0: 8,
					 * at most EXP_PROTO_TCP_REORDER_MAX); a
					 * stack with T threads in front of TCP-lite
					 * needs at least the segments of one
					 * connection in flight among them */
	int svc_threads;
};
int exp_proto_tcp_create(struct asx_module **out, const char *name,
			 const struct exp_proto_tcp_cfg *cfg);
/*
 * Open connection (@a.lport, @a.rport) as if its handshake were done:
 * first sequence number to send @iss, first expected @irs.  0, -EEXIST,
 * -ENOMEM, -EINVAL.  Any thread, any time (the map's lock strategy
 * must allow it: not ASX_MAP_NONE while the stream runs).
 */
int exp_proto_tcp_open(struct asx_module *tcp, struct exp_proto_addr a,
		       uint32_t iss, uint32_t irs);
/* Close it: unbound, freed once no thread uses it.  0, -ENOENT. */
int exp_proto_tcp_close(struct asx_module *tcp, struct exp_proto_addr a);
/* A connection's state (a snapshot). */
struct exp_proto_tcb_info {
	uint32_t snd_nxt, snd_una, snd_wnd, rcv_nxt;
	unsigned int held;		/* segments in the reorder buffer */
	uint64_t delivered;		/* segments passed up */
};
int exp_proto_tcp_info(struct asx_module *tcp, struct exp_proto_addr a,
		       struct exp_proto_tcb_info *info);

/*
 * The transport checksum as a Module of its own, below TCP-lite or
 * UDP-lite (@proto) configured with rx_cksum_done: Functional
 * Parallelism's checksum task.  Coming up it checks the segment's
 * checksum (UDP: the length field and, unless 0, the checksum) and drops
 * and counts bad ones; going down it passes messages on.  0, -EINVAL,
 * -ENOMEM.
 */
int exp_proto_cksum_create(struct asx_module **out, const char *name, uint8_t proto);

/*
 * NIC: a driver for ASX_STREAM_DRIVER.  Going down it counts frames and
 * frees them (EXP_PROTO_NIC_SINK) or turns them back up
 * (EXP_PROTO_NIC_LOOP).  Going up, exp_proto_nic_start() runs a producer
 * thread that puts @count frames made by @gen (NULL: the built-in
 * generator below) up the Stream at full speed.
 */
enum exp_proto_nic_mode { EXP_PROTO_NIC_SINK = 0, EXP_PROTO_NIC_LOOP };
/* Make frame number @i; 0 and *@mp, or a negative errno (the producer stops). */
typedef int exp_proto_gen_fn(void *arg, uint64_t i, struct asx_msg **mp);
struct exp_proto_nic_cfg {
	enum exp_proto_nic_mode mode;
	exp_proto_gen_fn *gen;
	void *gen_arg;
};
int exp_proto_nic_create(struct asx_module **out, const char *name,
			 const struct exp_proto_nic_cfg *cfg);
/* Start the producer: @count frames (0: until stopped).  0, -EBUSY, errno. */
int exp_proto_nic_start(struct asx_module *nic, uint64_t count);
/* Stop the producer and wait for it; returns the frames it delivered. */
uint64_t exp_proto_nic_stop(struct asx_module *nic);
/* Wait until the producer finished @count frames (or stopped) or @deadline: 0, -ETIMEDOUT. */
int exp_proto_nic_wait(struct asx_module *nic, const struct timespec *deadline);

/*
 * The built-in generator: frames from a peer (peer MAC/IP) to us over
 * @nconn connections, round-robin, @payload bytes each.  Connection c
 * (0-based) is our port lport0 + c and the peer's rport0 + c.  The payload
 * of frame i on connection c is exp_proto_gen_fill(c, k) where k counts
 * that connection's frames (so the receiver can check every byte); TCP
 * segments carry sequence numbers from @iss, one per connection.  The
 * generator is the producer's alone (one thread).
 */
struct exp_proto_gen {
	uint8_t proto;			/* EXP_PROTO_IP_TCP or _UDP */
	uint8_t mac[6], peer_mac[6];	/* ours (destination), the peer's */
	uint32_t ip, peer_ip;
	uint16_t lport0, rport0;
	unsigned int nconn;
	size_t payload;			/* >= 8 */
	uint32_t iss;
	/* private: */
	uint32_t *seq;
	uint64_t *k;
};
int exp_proto_gen_init(struct exp_proto_gen *g);
void exp_proto_gen_fini(struct exp_proto_gen *g);
exp_proto_gen_fn exp_proto_gen_frame;
/*
 * Frame number @k of connection @c, without the generator's state: what
 * exp_proto_gen_frame makes as that connection's @k-th frame (sequence
 * number iss + k * payload).  Any number of threads may call it at once
 * (@g initialised, read only).  0 and *@mp, -EINVAL, -ENOMEM.
 */
int exp_proto_gen_frame_ck(const struct exp_proto_gen *g, unsigned int c, uint64_t k,
			   struct asx_msg **mp);
/* Payload bytes: an 8-byte header (connection, index) then a pattern. */
void exp_proto_gen_fill(void *buf, size_t len, uint32_t conn, uint32_t k);
/* Check a payload filled so; returns true and (*conn, *k) when every byte matches. */
bool exp_proto_gen_check(const void *buf, size_t len, uint32_t *conn, uint32_t *k);

/*
 * Eager demultiplexing (a packet filter on the raw frame, before any
 * layer ran): the connection id of a DLP/IP/TCP-or-UDP frame, that is
 * (destination port << 16 | source port), the receiver's
 * struct exp_proto_addr.  0, or -EPROTO (not IPv4 TCP/UDP, too short).
 * Reads the frame without changing it.
 */
int exp_proto_demux(const struct asx_msg *frame, uint32_t *conn);
/* The same as an asx_mux_key_fn (4-byte key: lport, rport big-endian). */
int exp_proto_demux_key(const struct asx_msg *m, void *key, void *arg);

/* ---------------------------------------------------------------- shared by the proto sources */

#define EXP_PROTO_MAGIC 0x50524f54u
/* First member of every proto Module's argument. */
enum exp_proto_kind { EXP_PROTO_DLP = 1, EXP_PROTO_IP, EXP_PROTO_UDP, EXP_PROTO_TCP,
		       EXP_PROTO_NIC, EXP_PROTO_CKSUM };
struct exp_proto_common {
	uint32_t magic;
	enum exp_proto_kind kind;
	int svc_threads;
	struct exp_proto_stats st;	/* atomic fields */
};
#define EXP_PROTO_COUNT(c, field, n) \
	__atomic_fetch_add(&(c)->st.field, (n), __ATOMIC_RELAXED)
/* The common part of a proto Task's Module argument. */
static inline struct exp_proto_common *exp_proto_of(struct asx_task *t)
{
	return asx_module_arg(asx_task_module(t));
}
/* @mod's argument if it is a proto Module of @kind, else NULL. */
void *exp_proto_arg(struct asx_module *mod, enum exp_proto_kind kind);
/* A Task open() that activates svc_threads service threads. */
int exp_proto_open(struct asx_task *t, int argc, char **argv);
/* Drop @m, counting it in @field; returns 0 (the put took it). */
#define EXP_PROTO_DROP(c, field, m) \
	(EXP_PROTO_COUNT(c, field, 1), asx_msg_free_chain(m), 0)

#endif /* EXP_PROTO_PROTO_H */
