/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX internals: the Stream, its head and drivers, the registry and the
 * live-object counters.
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_STREAM_H
#define _ASX_STREAM_H

#include "asx_api.h"

#include <linux/fs.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/wait.h>

/* asx_queue.flags */
#define ASX_QFULL	0x01
#define ASX_QWANTW	0x02
#define ASX_QENAB	0x04
#define ASX_QCLOSING	0x08
#define ASX_QSRVBUSY	0x20	/* its service procedure is running */

/* asx_stream.flags bits */
enum {
	ASX_ST_HANGUP,
	ASX_ST_ERROR,
	ASX_ST_CLOSING,
};

/*
 * A driver: the tail of a Stream. Both hooks are optional. @attach joins the
 * driver's queues when a Stream gets the driver (the loop turns its write
 * queue up its read queue). @detach is called at the last close, before the
 * queues stop: it cuts the Stream from the others the driver joined it to.
 */
struct asx_driver {
	const char *name;
	struct asx_qinit rinit;
	struct asx_qinit winit;
	void (*attach)(struct asx_stream *st);
	void (*detach)(struct asx_stream *st);
};

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

	u32 ropt;
	u32 wopt;

	/* STR: one outstanding ioctl, its answer under hrq.lock. */
	u32 ioc_id;
	u32 ioc_wait;
	struct asx_msg *ioc_resp;

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

	struct list_head all;
	struct rcu_work free_work;
};

/* Live objects, for /proc/asx/objects and the leak tests. */
extern atomic_long_t asx_nr_streams;
long asx_nr_msgs(void);
long asx_nr_dblks(void);
struct asx_budget;
struct asx_budget *asx_budget_get(kuid_t uid);
int asx_msg_charge(struct asx_budget *b, struct asx_msg *mp);
extern atomic_long_t asx_nr_minst;

extern struct workqueue_struct *asx_wq;
extern const struct file_operations asx_fops;
extern struct mutex asx_streams_lock;
extern struct list_head asx_streams;

/* msg.c */
int asx_msg_init(void);
void asx_msg_exit(void);
void asx_freemsg_list(struct list_head *list);

/* queue.c */
void asx_queue_init(struct asx_queue *q, struct asx_stream *st, const struct asx_qinit *qi,
		    const char *name, u8 side, size_t hiwat, size_t lowat);
void asx_queue_close(struct asx_queue *q);
void asx_queue_purge(struct asx_queue *q);
void asx_queue_set_wm(struct asx_queue *q, size_t hiwat, size_t lowat);
struct asx_msg *asx_rmvq_first(struct asx_queue *q);
struct asx_msg *asx_rmvq_match(struct asx_queue *q, u32 flags, u8 band);
bool asx_queue_match(struct asx_queue *q, u32 flags, u8 band);
void asx_queue_drained(struct asx_queue *q);

/* registry.c */
int asx_registry_init(void);
void asx_registry_exit(void);
struct asx_modinfo *asx_find_module(const char *name);
void asx_put_module(struct asx_modinfo *mi);
void asx_registry_show(struct seq_file *m);

/* driver.c: what the drivers share */
void asx_drv_rput(struct asx_queue *q, struct asx_msg *mp);
void asx_drv_flush(struct asx_queue *q, struct asx_msg *mp);
void asx_drv_forward_srv(struct asx_queue *q);
bool asx_drv_fresh(struct asx_stream *st);
const struct asx_driver *asx_find_driver(const char *name);
int asx_drv_set(struct asx_stream *st, const struct asx_driver *drv);
void asx_drivers_show(struct seq_file *m);

static inline u8 asx_drv_flush_flags(const struct asx_msg *mp)
{
	return asx_blen(mp) ? mp->rptr[0] : 0;
}

/* What every driver does with FLUSH and IOCTL; true when it took @mp. */
static inline bool asx_drv_ctl(struct asx_queue *q, struct asx_msg *mp)
{
	switch (mp->type) {
	case ASX_M_FLUSH:
		asx_drv_flush(q, mp);
		return true;
	case ASX_M_IOCTL:
		asx_iocnak(q, mp, EINVAL);
		return true;
	}
	return false;
}

/* Passes @mp on if nothing waits here and the queue ahead takes it, else queues it. */
static inline void asx_drv_forward(struct asx_queue *q, struct asx_msg *mp)
{
	if (asx_hipri(mp) || (asx_queue_idle(q) && asx_canputnext(q)))
		asx_putnext(q, mp);
	else
		asx_putq(q, mp);
}

/* loop.c, null.c, pipe.c, mux.c */
extern const struct asx_driver asx_drv_loop;
extern const struct asx_driver asx_drv_null;
extern const struct asx_driver asx_drv_pipe;
extern const struct asx_driver asx_drv_mux;

/* stream.c: the Stream head and life cycle */
struct asx_stream *asx_stream_new(const struct asx_driver *drv);
void asx_stream_set_driver(struct asx_stream *st, const struct asx_driver *drv);
void asx_stream_destroy(struct asx_stream *st);
int asx_stream_push(struct asx_stream *st, const char *name);
int asx_stream_pop(struct asx_stream *st, const char *name);
ssize_t asx_stream_read(struct file *file, char __user *buf, size_t count, loff_t *ppos);
ssize_t asx_stream_write(struct file *file, const char __user *buf, size_t count,
			 loff_t *ppos);
__poll_t asx_stream_poll(struct file *file, poll_table *wait);
int asx_head_wait_writable(struct asx_stream *st, bool nonblock);
int asx_head_wait_readable(struct asx_stream *st, bool nonblock);
void asx_head_hangup(struct asx_stream *st);
extern const struct asx_qinit asx_head_rinit;
extern const struct asx_qinit asx_head_winit;
void asx_head_rput(struct asx_queue *q, struct asx_msg *mp);
void asx_head_wput(struct asx_queue *q, struct asx_msg *mp);
void asx_head_wenable(struct asx_queue *q);
struct asx_queue *asx_stream_queue(struct asx_stream *st, u32 level, u32 side);

static inline bool asx_stream_linked(struct asx_stream *st)
{
	return rcu_access_pointer(st->upper);
}

/*
 * Linked under a mux, or unlinked but not yet given back by the unlinker
 * (mux_file still held): neither linked again, nor piped, nor given another
 * driver until then. Under st->cfg.
 */
static inline bool asx_stream_in_mux(struct asx_stream *st)
{
	return rcu_access_pointer(st->upper) || st->mux_file;
}

/* ioctl.c */
long asx_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* mux.c */
int asx_mux_link(struct asx_stream *st, struct file *file, u32 *id);
int asx_mux_unlink(struct asx_stream *st, u32 id);

/* pipe.c */
int asx_pipe_connect(struct asx_stream *a, struct asx_stream *b);

/* selftest.c: boot-time self-tests, only in a debug build (ASX_DEBUG, see Kbuild) */
#ifdef ASX_DEBUG
int asx_selftest(void);
#else
static inline int asx_selftest(void)
{
	return 0;
}
#endif

/* proc.c */
int asx_proc_init(void);
void asx_proc_exit(void);

/* mod_*.c */
extern struct asx_modinfo asx_mod_pass;
extern struct asx_modinfo asx_mod_count;
extern struct asx_modinfo asx_mod_frame;
extern struct asx_modinfo asx_mod_csum;
extern struct asx_modinfo asx_mod_hold;

#endif /* _ASX_STREAM_H */
