/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * arch/arch.h - the threading architectures of the paper's study
 * (001, sections 3-5) over the proto Modules (exp/, outside libasx:
 * public API only; asx-bench and exp/tests link build/exp/libasx-exp.a).
 *
 * The receive path of one host: frames made by the simulated NIC (the
 * built-in generator: real Ethernet/IP/TCP-or-UDP headers, checksums,
 * a byte pattern payload) go up
 *
 *   NIC <- DLP <- IP-lite <- TCP-lite or UDP-lite [<- XDR] <- app
 *
 * where "app" is a Module that consumes what reaches it (and, with
 * verify, checks every byte, exactly-once delivery and, for TCP-lite,
 * per-connection order).  The architectures:
 *
 *   LP  Layer Parallelism (task-based): one thread per layer, Streams'
 *       own task-based mode.  A driver thread makes the frames and hands
 *       them to the NIC's read side; the DLP, IP, transport and (with XDR)
 *       presentation Modules' read-side Tasks each have a service thread
 *       (asx_task_activate) and so a queue, which put_next fills; flow
 *       control is a window of credits the driver waits for, returned by
 *       the app (the queues' water marks hold the window).  The app runs
 *       in the top layer's thread.
 *       With layer_threads n > 1 (001 section 4.3.2: a cluster of
 *       connections per stack of layer threads) there are min(n, nconn)
 *       lanes, each a Stream of its own with a thread per layer: lane
 *       c % lanes carries connection c (its TCP-lite holds those
 *       connections), so a connection's messages keep one thread per
 *       layer and their order.
 *   CP  Connectional Parallelism (message-based): min(pes, nconn)
 *       threads, connection c escorted by thread c % threads from the
 *       driver (frame made, demultiplexed eagerly with the packet
 *       filter exp_proto_demux) through every layer's put to the app.
 *   MP  Message Parallelism (message-based): pes threads at the driver,
 *       each taking the next frame of the whole stream (any connection)
 *       and escorting it up.  TCP-lite keeps per-connection order with
 *       its connection-block lock and reorder buffer; the window of
 *       credits bounds the segments of a connection in flight, and the
 *       reorder buffer is sized to it, so nothing is dropped.
 *   FP  Functional Parallelism (task-based, 001 Figure 2): a thread per
 *       protocol task rather than per layer, messages passed between
 *       the tasks' Task queues as in LP: link (DLP), network (IP header and
 *       checksum), transport checksum (exp_proto_cksum_create),
 *       transport protocol (TCP-lite: acknowledgement, sequencing and
 *       reassembly under the TCB lock; UDP-lite: ports), presentation
 *       (XDR, with xdr) and delivery (demultiplexing to the app), each
 *       its own thread: 5 task threads, 6 with XDR, and the driver.
 *
 * Warm-up (001 section 4.4: 10,000 messages before the timed 20,000):
 * cfg.warmup messages go through the stack first, on the same threads;
 * the clock, the context switches, the ASC switches and the lock
 * statistics start when the app has received the last of them, and
 * msgs, bytes and mbps count only what follows.
 *
 * Threads are pthreads (pinned to the first min(pes, ncpu) CPUs the
 * process may use) or, with asc, user threads of an ASC (PRIO policy,
 * non-preemptive) over min(pes, ncpu) VPs; with sa too, that ASC uses
 * asx.ko's scheduler activations (asx_asc_create fails without them).
 * The kind is one parameter of the Streams (asx_stream_opts.asc): LP's
 * and FP's service threads are the Streams', of that kind; the driver and
 * CP's and MP's threads are the runner's.  The runner's own waits (the
 * credits) are on a semaphore of the thread kind: asx_sem for pthreads,
 * asx_asc_sem for user threads; a Task queue's wait parks a user thread
 * at user level (Documentation/asc.rst, "Calling libasx from user
 * threads").
 */
#ifndef EXP_ARCH_ARCH_H
#define EXP_ARCH_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <asx/map.h>

enum exp_arch { EXP_ARCH_LP, EXP_ARCH_CP, EXP_ARCH_MP, EXP_ARCH_FP };

struct exp_arch_cfg {
	enum exp_arch arch;
	bool asc;			/* ASC user threads, else pthreads */
	bool sa;			/* asc with scheduler activations (asx.ko) */
	uint8_t proto;			/* EXP_PROTO_IP_TCP or _UDP */
	bool xdr;			/* the presentation layer (asx_mod_xdr) */
	unsigned int pes;		/* processing elements (0: 1): CPUs or VPs
					 * min(pes, ncpu); CP, MP threads */
	unsigned int nconn;		/* connections (0: 1) */
	enum asx_map_lock lock;		/* TCP-lite's connection map */
	size_t payload;			/* bytes per message (0: 4096; 8..60000,
					 * a multiple of 4 with xdr) */
	uint64_t count;			/* messages (rounded down to a multiple
					 * of nconn, at least nconn) */
	uint64_t warmup;		/* messages before timing starts (rounded down
					 * to a multiple of nconn; 0: none) */
	unsigned int layer_threads;	/* LP: threads per layer (0: 1; at most
					 * 64, and nconn are used) */
	unsigned int window;		/* LP, FP, MP: messages in flight (0: 128) */
	bool verify;			/* check every message at the app */
	uint64_t timeout_ns;		/* give up after (0: 120 s): -ETIMEDOUT */
};

struct exp_arch_result {
	unsigned int threads, cpus;	/* workers; CPUs or VPs */
	unsigned int layer_threads;	/* LP: threads per layer used, else 0 */
	uint64_t warmup;		/* warm-up messages delivered (not in msgs) */
	uint64_t msgs, bytes;		/* payload delivered to the app, timed */
	uint64_t ns;			/* wall time of the run */
	double mbps;			/* payload Mbit/s */
	uint64_t vcsw, icsw;		/* context switches of the process's
					 * threads while timed (getrusage), less
					 * the calling thread's over the run */
	uint64_t uswitch;		/* ASC: user-level switches */
	uint64_t lock_contended, lock_ns; /* mutex: contended acquisitions
					 * (asx_mutex, asx_rwlock), their wait */
	uint64_t waits, wait_ns;	/* condition: asx_cond waits, Task queue
					 * waits (asx_msgq) and the credits'
					 * semaphore waits */
	uint64_t holds, hold_ns;	/* TCP-lite connection-block critical sections */
	uint64_t drops;			/* counted by the Modules (should be 0) */
	uint64_t failed;		/* puts refused */
	/* verify */
	uint64_t bad, dups, out_of_order, missing;
};

const char *exp_arch_name(enum exp_arch a);
/* CPUs this process may run on (its affinity mask). */
unsigned int exp_arch_ncpu(void);
/*
 * Build the stack, run @cfg->count messages through it, measure, tear it
 * down.  0 and *@res (then, with verify, bad, dups, out_of_order and
 * missing say what went wrong, if anything), -EINVAL, -ENOMEM,
 * -ETIMEDOUT (res filled with what was done).
 */
int exp_arch_run(const struct exp_arch_cfg *cfg,
		 struct exp_arch_result *res);

#endif /* EXP_ARCH_ARCH_H */
