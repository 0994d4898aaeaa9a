/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX internals, layer 3: the Stream, its head and its life cycle
 * (stream.c), and what a driver is.
 *
 * The layers of asx.ko, each file including only headers of its own layer
 * or below (tools/kmod-layers.sh checks, Documentation/kmod.rst explains):
 *
 *   asx_api.h  the exported API          mod_*.c, test/ see only this
 *   msg.h      1 message blocks          msg.c
 *   queue.h    2 queues                  queue.c   (registry.h: registry.c)
 *   stream.h   3 Streams, the head       stream.c, trace.c
 *   driver.h   4 drivers                 driver.c, loop.c, null.c, pipe.c, mux.c
 *   main.h     5 the device and ioctls   main.c, ioctl.c, proc.c, selftest.c
 *
 * Lock order, written in the code only here: a lock is taken only under
 * those before it on its line, or under none.
 *
 *   asx_streams_lock (stream.c) > st->cfg
 *   asx_mux_lock (mux.c) > an upper's st->cfg > its lower's (SINGLE_DEPTH_NESTING)
 *   st->cfg > asx_pipe_lock (pipe.c)
 *   st->cfg, st->rlock or st->ioclock (never two of them) > q->lock, of one queue
 *   asx_sa_lock (sa.c) > a group's raw lock (also taken under the run-queue lock)
 *
 * Leaves, under which nothing is taken: q->lock, asx_registry_lock, asx_drvreg_lock,
 * budgets_lock and deferred_lock (msg.c), a group's raw lock. Put procedures
 * run under rcu_read_lock() and take only q->lock (and their module's own
 * locks); service procedures run in asx_wq, which st->cfg holders wait for
 * (cancel_work_sync()), so they never take st->cfg.
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_STREAM_H
#define _ASX_STREAM_H

#include "queue.h"

#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/wait.h>

/* asx_stream.flags bits */
enum {
	ASX_ST_HANGUP,
	ASX_ST_ERROR,
	ASX_ST_CLOSING,
};

/*
 * A driver: the tail of a Stream (driver.h lists them). Both hooks are
 * optional. @attach joins the driver's queues when a Stream gets the driver
 * (the loop turns its write queue up its read queue). @detach is called at
 * the last close, before the queues stop: it cuts the Stream from the others
 * the driver joined it to. A registered driver's (drvreg.c) @open runs when a
 * Stream is given it (SETDRV, under st->cfg, before @attach; non-zero fails
 * the SETDRV) and @release when the Stream is freed, its queues quiet.
 */
struct asx_driver {
	const char *name;
	struct asx_qinit rinit;
	struct asx_qinit winit;
	void (*attach)(struct asx_stream *st);
	void (*detach)(struct asx_stream *st);
	int (*open)(const struct asx_driver *drv, struct asx_stream *st);
	void (*release)(struct asx_stream *st);
};

struct asx_mux_unit;

/* A module pushed on a Stream. */
struct asx_minst {
	struct list_head node;
	struct asx_modinfo *mi;
	struct asx_queue rq;
	struct asx_queue wq;
	unsigned long priv[];
};

struct asx_stream {
	u64 id;
	pid_t pid;
	kuid_t uid;		/* the opener's effective uid */
	struct asx_budget *budget;	/* its budget: what write, PUTMSG, STR make */
	char comm[TASK_COMM_LEN];
	unsigned long flags;
	int error;

	/* Serialises push/pop/link/setdrv/pipe: the writers of the chain. */
	struct mutex cfg;
	struct mutex rlock;	/* serialises readers (read, GETMSG, PEEK) */
	struct mutex ioclock;	/* one STR at a time */
	wait_queue_head_t rwait;
	wait_queue_head_t wwait;
	wait_queue_head_t iocwait;

	struct asx_queue hrq;
	struct asx_queue hwq;
	struct asx_queue drq;
	struct asx_queue dwq;
	const struct asx_driver *drv;
	struct list_head mods;		/* top first, under cfg */
	u32 depth;
	u32 ap_depth;		/* the modules autopush pushed, until a PUSH or POP (cfg) */

	u32 ropt;
	u32 wopt;
	u32 cltime_ms;		/* I_SETCLTIME: how long the last close drains */

	/* STR: one outstanding ioctl, its answer under hrq.lock. */
	u32 ioc_id;
	u32 ioc_wait;
	struct asx_msg *ioc_resp;
	bool ioc_tr;		/* the ioctl is transparent: M_COPYIN/OUT taken too */

	/* XSI I_SETSIG: processes to signal (struct asx_sigreg), their events or'ed */
	spinlock_t sig_lock;
	struct list_head sigs;
	u32 sig_events;

	/* Pipe: the other end, under asx_pipe_lock and RCU. */
	struct asx_stream __rcu *peer;

	/* Mux: lowers of this upper (under cfg, RCU for lookup); upper of a lower. */
	struct list_head lowers;
	u32 mux_next_id;
	struct asx_stream __rcu *upper;
	struct file *mux_file;
	kuid_t mux_uid;		/* who linked it: charged for it until unlinked */
	struct list_head mux_node;
	u32 mux_id;
	/*
	 * Named mux (mux.c): the unit an upper opened ("mux.N") and its place
	 * among the unit's uppers; the unit a lower is persistently linked
	 * under (I_PLINK). Under asx_mux_lock, RCU for readers.
	 */
	struct asx_mux_unit __rcu *mux_unit;
	struct list_head mux_unode;
	struct asx_mux_unit __rcu *plink_unit;

	struct list_head all;
	struct rcu_work free_work;
};

/* Live Streams and pushed modules, for /proc/asx/objects and the leak tests. */
extern atomic_long_t asx_nr_streams;
extern atomic_long_t asx_nr_minst;

/* Every open Stream, for /proc/asx/streams. */
extern struct mutex asx_streams_lock;
extern struct list_head asx_streams;

struct asx_stream *asx_stream_new(const struct asx_driver *drv);
void asx_stream_set_driver(struct asx_stream *st, const struct asx_driver *drv);
void asx_stream_destroy(struct asx_stream *st);
int asx_stream_push(struct asx_stream *st, const char *name);
int asx_stream_pop(struct asx_stream *st, const char *name);
u32 asx_stream_names(struct asx_stream *st, char *names, u32 max, char *driver);
int asx_stream_autopush(struct asx_stream *st, const char *drv);
int asx_stream_unautopush(struct asx_stream *st);
struct asx_queue *asx_stream_queue(struct asx_stream *st, u32 level, u32 side);

/* The head: the file operations, and its procedures (a mux lower's build on them) */
ssize_t asx_stream_read(struct file *file, char __user *buf, size_t count, loff_t *ppos);
ssize_t asx_stream_write(struct file *file, const char __user *buf, size_t count,
			 loff_t *ppos);
__poll_t asx_stream_poll(struct file *file, poll_table *wait);
int asx_head_wait_writable(struct asx_stream *st, u8 band, bool nonblock, bool sigpipe);
/* XSI I_SETSIG/I_GETSIG for the calling process (ASX_XSI_S_* events) */
int asx_stream_setsig(struct asx_stream *st, u32 events);
int asx_stream_getsig(struct asx_stream *st, u32 *events);
int asx_head_wait_readable(struct asx_stream *st, bool nonblock);
int asx_head_lock_readable(struct asx_stream *st, bool nonblock);
void asx_head_hangup(struct asx_stream *st);
extern const struct asx_qinit asx_head_rinit;
extern const struct asx_qinit asx_head_winit;
void asx_head_rput(struct asx_queue *q, struct asx_msg *mp);
void asx_head_wput(struct asx_queue *q, struct asx_msg *mp);
void asx_head_wenable(struct asx_queue *q);
void asx_head_putfp(struct asx_stream *st, struct asx_msg *mp);
void asx_stream_drain(struct asx_stream *st);

/* tioctl.c: transparent ioctls (M_COPYIN/M_COPYOUT/M_IOCDATA) */
bool asx_tioc_cmd(unsigned int cmd);
long asx_tioctl(struct asx_stream *st, unsigned int cmd, unsigned long arg);
bool asx_tioc_takes(struct asx_stream *st, const struct asx_msg *mp);
void asx_tioc_refuse(struct asx_stream *st, struct asx_msg *mp, int err);

/*
 * Linked under a mux (a persistent link also while no Stream has its named
 * mux open): its head refuses read, write and the Stream ioctls.
 */
static inline bool asx_stream_linked(struct asx_stream *st)
{
	return rcu_access_pointer(st->upper) || rcu_access_pointer(st->plink_unit);
}

#endif /* _ASX_STREAM_H */
