/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel ASX Streams API: messages, queues and module registration,
 * exported (GPL) so other kernel modules can add ASX modules.
 * Documentation/kmod-modules.rst explains how to use it.
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_API_H
#define _ASX_API_H

#include <linux/asx.h>
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

/* Message types. Types from ASX_M_HIPRI up are high priority. */
enum asx_mtype {
	ASX_M_DATA	= 0x00,	/* user data */
	ASX_M_PROTO	= 0x01,	/* control part of a normal message */
	ASX_M_IOCTL	= 0x02,	/* STR ioctl on its way down: struct asx_iocblk */
	ASX_M_CTL	= 0x03,	/* between modules */
	ASX_M_PASSFP	= 0x04,	/* I_SENDFD's file, Stream head to Stream head only */
	ASX_M_HIPRI	= 0x80,
	ASX_M_PCPROTO	= 0x80,	/* control part of a high-priority message */
	ASX_M_FLUSH	= 0x81,	/* one byte: ASX_FLUSHR/W/BAND; a second: the band */
	ASX_M_IOCACK	= 0x82,	/* positive answer to M_IOCTL */
	ASX_M_IOCNAK	= 0x83,	/* negative answer to M_IOCTL */
	ASX_M_ERROR	= 0x84,	/* one byte: errno; the Stream fails */
	ASX_M_HANGUP	= 0x85,	/* the other end went away */
	ASX_M_COPYIN	= 0x86,	/* transparent ioctl, up: copy in (struct asx_copyreq) */
	ASX_M_COPYOUT	= 0x87,	/* transparent ioctl, up: copy out the cont chain */
	ASX_M_IOCDATA	= 0x88,	/* transparent ioctl, down: struct asx_copyresp, data */
};

/* A refcounted data buffer, shared by the messages that dup it. */
struct asx_dblk {
	refcount_t ref;
	u32 size;
	unsigned char *base;
};

/*
 * A message block. A message is a chain of blocks through @cont; the first
 * block's type and band are the message's.
 */
struct asx_msg {
	struct list_head list;
	struct asx_msg *cont;
	struct asx_dblk *db;
	unsigned char *rptr;
	unsigned char *wptr;
	u8 type;
	u8 band;
};

/*
 * The first block of M_IOCTL, M_IOCACK and M_IOCNAK; data follows in @cont.
 * A transparent ioctl (an ioctl(2) request the Stream head does not know) has
 * @count ASX_TRANSPARENT and the caller's argument, a u64, in @cont
 * (asx_ioc_arg()); Documentation/kmod-modules.rst, "Transparent ioctls".
 */
struct asx_iocblk {
	u32 cmd;
	u32 id;
	u32 count;	/* bytes of data in the cont chain, or ASX_TRANSPARENT */
	int error;	/* IOCNAK: positive errno */
	int rval;	/* IOCACK: returned in asx_strioctl.rval, or by ioctl(2) */
	u32 flag;	/* ASX_IOC_ILP32 */
};

#define ASX_TRANSPARENT	0xffffffffU	/* asx_iocblk.count of a transparent ioctl */
#define ASX_IOC_ILP32	0x1		/* flag: the caller is a 32-bit (compat) task */

/* The first block of M_COPYIN and M_COPYOUT (asx_mcopyin(), asx_mcopyout()). */
struct asx_copyreq {
	u32 cmd;
	u32 id;
	u32 size;	/* bytes to copy */
	u32 flag;	/* as asx_iocblk.flag */
	u64 addr;	/* the caller's address */
	void *private;	/* the module's, given back in asx_copyresp.private */
};

/* The first block of M_IOCDATA: the result of one copy; copied-in data in @cont. */
struct asx_copyresp {
	u32 cmd;
	u32 id;
	int rval;	/* 0, or the positive errno that ended the ioctl */
	u32 flag;
	u64 unused;
	void *private;
};

/* The room of the first block of every ioctl message: each of the three fits. */
#define ASX_IOC_BLKSZ	max3(sizeof(struct asx_iocblk), sizeof(struct asx_copyreq), \
			     sizeof(struct asx_copyresp))

struct asx_queue;
struct asx_qband;

/*
 * The procedures of one side of a module. @put is required. @enable is
 * optional: what asx_qenable(), and so back-enabling, does instead of
 * scheduling @srv; for a queue with no service procedure that still wants to
 * hear when the queue ahead has room again (the Stream head's write side).
 * Back-enabling stops at the nearest queue behind that has @srv or @enable.
 */
struct asx_qinit {
	void (*put)(struct asx_queue *q, struct asx_msg *mp);
	void (*srv)(struct asx_queue *q);
	void (*enable)(struct asx_queue *q);
};

/*
 * A queue: one side of a module. @next and @prev are walked under RCU; the
 * message list and counters are under @lock.
 */
struct asx_queue {
	spinlock_t lock;	/* the message list, counters and flags */
	struct list_head msgs;
	size_t count;
	u32 nmsgs;
	u32 nhipri;		/* high-priority messages among @nmsgs */
	u32 nzero;		/* messages of no data bytes among @nmsgs */
	u32 flags;
	size_t hiwat;
	size_t lowat;
	struct asx_queue __rcu *next;
	struct asx_queue __rcu *prev;
	const struct asx_qinit *qi;
	struct asx_queue *other;
	struct asx_stream *st;
	void *priv;
	const char *name;
	struct work_struct srv_work;
	u64 puts;
	u64 srv_runs;
	u64 enqueued;
	u64 fc_stops;
	u64 fc_starts;
	atomic64_t drops;
	/* Bands 1..@nband (queue.c): NULL until a band > 0 is queued or given marks. */
	struct asx_qband *qb;
	size_t bload;		/* what the messages counted in @qb hold */
	unsigned long benabled;	/* who back-enabled this queue: ASX_BENAB_* bits */
	u8 nband;
	u8 side;
};

/**
 * struct asx_modinfo - an ASX module, registered by name
 * @name:      the name ASX_IOC_PUSH looks for (< ASX_NAME_MAX bytes)
 * @owner:     THIS_MODULE; held while an instance is pushed
 * @rinit:     read side procedures
 * @winit:     write side procedures
 * @priv_size: bytes of private data per instance (q->priv, zeroed)
 * @open:      optional, called on push in process context; non-zero fails it
 * @close:     optional, called on pop or close, after the queues are quiet
 * @hiwat:     queue water marks, 0 for ASX_DEF_HIWAT/ASX_DEF_LOWAT
 * @lowat:     see @hiwat
 * @list:      registry use
 *
 * put procedures run in the caller's context under rcu_read_lock(): they must
 * not sleep (use GFP_ATOMIC). Service procedures run in a workqueue.
 */
struct asx_modinfo {
	const char *name;
	struct module *owner;
	struct asx_qinit rinit;
	struct asx_qinit winit;
	size_t priv_size;
	int (*open)(struct asx_queue *rq, struct asx_queue *wq);
	void (*close)(struct asx_queue *rq, struct asx_queue *wq);
	size_t hiwat;
	size_t lowat;
	struct list_head list;
};

int asx_register_module(struct asx_modinfo *mi);
void asx_unregister_module(struct asx_modinfo *mi);

/**
 * struct asx_drvinfo - an ASX driver (a Stream's tail), registered by name
 * @name:      the name ASX_IOC_SETDRV and autopush look for (< ASX_NAME_MAX
 *             bytes), in one namespace with the built-in loop, null, mux and
 *             pipe
 * @owner:     THIS_MODULE; held while a Stream has the driver
 * @rinit:     read side procedures; a NULL put passes messages up
 * @winit:     write side procedures; put is required. The write queue's next
 *             is the read queue (as the loop driver's): asx_putnext() on it
 *             sends a message up through @rinit's put, asx_qreply() past it
 * @priv_size: bytes of private data per Stream (q->priv of both queues, zeroed)
 * @open:      optional, called when a Stream gets the driver (SETDRV), in
 *             process context, before any put; non-zero fails the SETDRV
 * @close:     optional, called when the Stream is freed, after its queues
 *             are quiet and empty
 * @hiwat:     the driver queues' water marks, 0 for ASX_DEF_HIWAT/ASX_DEF_LOWAT
 * @lowat:     see @hiwat
 * @reg:       registry use
 *
 * The rules of struct asx_modinfo's procedures hold for these.
 */
struct asx_drvinfo {
	const char *name;
	struct module *owner;
	struct asx_qinit rinit;
	struct asx_qinit winit;
	size_t priv_size;
	int (*open)(struct asx_queue *rq, struct asx_queue *wq);
	void (*close)(struct asx_queue *rq, struct asx_queue *wq);
	size_t hiwat;
	size_t lowat;
	void *reg;
};

int asx_register_driver(struct asx_drvinfo *di);
int asx_unregister_driver(struct asx_drvinfo *di);

/* Messages */
struct asx_msg *asx_allocb(size_t size, gfp_t gfp);
void asx_freeb(struct asx_msg *mp);
void asx_freemsg(struct asx_msg *mp);
struct asx_msg *asx_dupb(struct asx_msg *mp, gfp_t gfp);
struct asx_msg *asx_dupmsg(struct asx_msg *mp, gfp_t gfp);
struct asx_msg *asx_copymsg(struct asx_msg *mp, gfp_t gfp);
size_t asx_msgdsize(const struct asx_msg *mp);
size_t asx_msg_copy_out(const struct asx_msg *mp, size_t off, void *buf, size_t len);
void asx_msg_adj(struct asx_msg *mp, size_t len);
struct asx_msg *asx_ctlmsg(u8 type, const void *data, size_t len, gfp_t gfp);

static inline size_t asx_blen(const struct asx_msg *mp)
{
	return mp->wptr - mp->rptr;
}

static inline bool asx_hipri(const struct asx_msg *mp)
{
	return mp->type >= ASX_M_HIPRI;
}

/* Queues */
void asx_put(struct asx_queue *q, struct asx_msg *mp);
void asx_putnext(struct asx_queue *q, struct asx_msg *mp);
void asx_qreply(struct asx_queue *q, struct asx_msg *mp);
bool asx_canput(struct asx_queue *q);
bool asx_canputnext(struct asx_queue *q);
bool asx_bcanput(struct asx_queue *q, u8 band);
bool asx_bcanputnext(struct asx_queue *q, u8 band);
void asx_putq(struct asx_queue *q, struct asx_msg *mp);
void asx_putbq(struct asx_queue *q, struct asx_msg *mp);
struct asx_msg *asx_getq(struct asx_queue *q);
void asx_qenable(struct asx_queue *q);
bool asx_queue_idle(struct asx_queue *q);
void asx_flushq(struct asx_queue *q, bool band_only, u8 band);
void asx_flush_msg(struct asx_queue *q, struct asx_msg *mp);
void asx_iocack(struct asx_queue *q, struct asx_msg *mp, int rval, struct asx_msg *data);
void asx_iocnak(struct asx_queue *q, struct asx_msg *mp, int error);
/* A driver's M_FLUSH: flushes its write queue, turns FLUSHR up the read side. */
void asx_drv_flush(struct asx_queue *q, struct asx_msg *mp);

/* Transparent ioctls (tioctl.c): the steps of a module's exchange with the head */
void asx_mcopyin(struct asx_queue *q, struct asx_msg *mp, void *priv, u64 addr, u32 size);
void asx_mcopyout(struct asx_queue *q, struct asx_msg *mp, void *priv, u64 addr,
		  struct asx_msg *data);

static inline bool asx_ioc_transparent(const struct asx_msg *mp)
{
	return mp->type == ASX_M_IOCTL && asx_blen(mp) >= sizeof(struct asx_iocblk) &&
	       ((const struct asx_iocblk *)mp->rptr)->count == ASX_TRANSPARENT;
}

/* The caller's argument of the transparent M_IOCTL @mp: an address or a value. */
static inline u64 asx_ioc_arg(const struct asx_msg *mp)
{
	u64 arg = 0;

	asx_msg_copy_out(mp->cont, 0, &arg, sizeof(arg));
	return arg;
}

#endif /* _ASX_API_H */
