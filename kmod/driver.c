// SPDX-License-Identifier: GPL-2.0
/*
 * ASX drivers, the tail of a Stream: what the drivers share, the list SETDRV
 * chooses from, and SETDRV itself. One file per driver: loop.c, null.c,
 * pipe.c, mux.c; drvreg.c, those other kernel modules register.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"

#include <linux/seq_file.h>
#include <linux/string.h>

/* Read side of every driver but mux: pass up. */
void asx_drv_rput(struct asx_queue *q, struct asx_msg *mp)
{
	asx_putnext(q, mp);
}

/* A driver's answer to M_FLUSH: flush its write queue, turn FLUSHR upwards. */
void asx_drv_flush(struct asx_queue *q, struct asx_msg *mp)
{
	u8 flags = asx_drv_flush_flags(mp);

	if (flags & ASX_FLUSHW)
		asx_flushq(q, flags & ASX_FLUSHBAND, asx_blen(mp) > 1 ? mp->rptr[1] : 0);
	if (flags & ASX_FLUSHR) {
		mp->rptr[0] = flags & ~ASX_FLUSHW;
		asx_qreply(q, mp);
	} else {
		asx_freemsg(mp);
	}
}
EXPORT_SYMBOL_GPL(asx_drv_flush);

/* Sends the queued messages on while the queue ahead takes them. */
void asx_drv_forward_srv(struct asx_queue *q)
{
	struct asx_msg *mp;

	while ((mp = asx_getq(q))) {
		if (!asx_hipri(mp) && !asx_bcanputnext(q, mp->band)) {
			asx_putbq(q, mp);
			break;
		}
		asx_putnext(q, mp);
	}
}

/*
 * A fresh Stream: still the loop it was opened as, neither a pipe end nor in
 * a mux. Only a fresh Stream is given another driver or made a pipe end.
 */
bool asx_drv_fresh(struct asx_stream *st)
{
	lockdep_assert_held(&st->cfg);
	return st->drv == &asx_drv_loop && !rcu_access_pointer(st->peer) &&
	       !asx_stream_in_mux(st);
}

static const struct asx_driver *const asx_drivers[] = {
	&asx_drv_loop, &asx_drv_null, &asx_drv_mux,
};

static const struct asx_driver *find_builtin(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(asx_drivers); i++) {
		if (!strcmp(asx_drivers[i]->name, name))
			return asx_drivers[i];
	}
	return NULL;
}

/* A name of asx.ko's own drivers, pipe ends' included: not for registering. */
bool asx_builtin_driver(const char *name)
{
	return find_builtin(name) || !strcmp(name, asx_drv_pipe.name);
}

/*
 * The drivers SETDRV can choose (pipe ends are made by ASX_IOC_PIPE): the
 * built-in ones and the registered ones; a registered one comes pinned,
 * released with asx_put_driver() unless a Stream keeps it.
 */
const struct asx_driver *asx_find_driver(const char *name)
{
	const struct asx_driver *drv = find_builtin(name);

	return drv ? drv : asx_drvreg_get(name);
}

void asx_put_driver(const struct asx_driver *drv)
{
	if (drv->release)
		asx_drvreg_put(drv);
}

/* What autopush may name: a driver SETDRV chooses, or pipe ends. */
bool asx_driver_known(const char *name)
{
	return asx_builtin_driver(name) || asx_drvreg_known(name);
}

/*
 * SETDRV: switches a fresh Stream, with no module and nothing queued, to @drv.
 * A registered driver's open hook runs first; on success the Stream holds
 * the pin asx_find_driver() took, else the caller releases it.
 */
int asx_drv_set(struct asx_stream *st, const struct asx_driver *drv)
{
	int ret = 0;

	mutex_lock(&st->cfg);
	if (!asx_drv_fresh(st) || READ_ONCE(st->dwq.nmsgs) || st->depth)
		ret = -EBUSY;
	else if (drv != st->drv && drv->open)
		ret = drv->open(drv, st);
	if (!ret && drv != st->drv)
		asx_stream_set_driver(st, drv);
	mutex_unlock(&st->cfg);
	return ret;
}

void asx_drivers_show(struct seq_file *m)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(asx_drivers); i++)
		seq_printf(m, "driver %s\n", asx_drivers[i]->name);
	asx_drvreg_show(m);
}
