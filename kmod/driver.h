/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX internals, layer 4: the drivers at a Stream's tail, one file each
 * (loop.c, null.c, pipe.c, mux.c), and what they share (driver.c).
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_DRIVER_H
#define _ASX_DRIVER_H

#include "stream.h"

struct seq_file;

/* loop.c, null.c, pipe.c, mux.c */
void asx_drv_loop_attach(struct asx_stream *st);
extern const struct asx_driver asx_drv_loop;
extern const struct asx_driver asx_drv_null;
extern const struct asx_driver asx_drv_pipe;
extern const struct asx_driver asx_drv_mux;

/* driver.c: what the drivers share */
void asx_drv_rput(struct asx_queue *q, struct asx_msg *mp);
void asx_drv_forward_srv(struct asx_queue *q);
bool asx_drv_fresh(struct asx_stream *st);
const struct asx_driver *asx_find_driver(const char *name);
void asx_put_driver(const struct asx_driver *drv);
bool asx_driver_known(const char *name);
bool asx_builtin_driver(const char *name);
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
		/* a transparent ioctl no module took: ioctl(2)'s unknown request */
		asx_iocnak(q, mp, asx_ioc_transparent(mp) ? ENOTTY : EINVAL);
		return true;
	}
	return false;
}

/*
 * Passes @mp on if nothing of its band waits here and the queue ahead takes
 * its band, else queues it: a band held up ahead holds up only itself.
 */
static inline void asx_drv_forward(struct asx_queue *q, struct asx_msg *mp)
{
	if (asx_hipri(mp) ||
	    ((__asx_queue_idle(q) || asx_queue_band_idle(q, mp->band)) &&
	     asx_bcanputnext(q, mp->band)))
		asx_putnext(q, mp);
	else
		asx_putq(q, mp);
}

/*
 * drvreg.c: the drivers other kernel modules register (asx_register_driver()).
 * asx_drvreg_get() pins one (owner and users) for a Stream; asx_drvreg_put()
 * (the driver's release hook) lets it go.
 */
const struct asx_driver *asx_drvreg_get(const char *name);
void asx_drvreg_put(const struct asx_driver *drv);
bool asx_drvreg_known(const char *name);
void asx_drvreg_show(struct seq_file *m);

/* pipe.c */
int asx_pipe_connect(struct asx_stream *a, struct asx_stream *b);

/* mux.c */
int asx_mux_link(struct asx_stream *st, struct file *file, u32 *id, bool persist);
int asx_mux_unlink(struct asx_stream *st, u32 id, bool persist);
int asx_mux_unit_number(const char *name);
int asx_mux_unit_may_open(u32 num);
int asx_mux_join(struct asx_stream *st, u32 num);

/*
 * Linked under a mux, or unlinked but not yet given back by the unlinker
 * (mux_file still held): neither linked again, nor piped, nor given another
 * driver until then.
 */
static inline bool asx_stream_in_mux(struct asx_stream *st)
{
	lockdep_assert_held(&st->cfg);
	return rcu_access_pointer(st->upper) || st->mux_file;
}

#endif /* _ASX_DRIVER_H */
