/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX internals, layer 2: queues (queue.c) beyond the exported API: flags,
 * set-up and tear-down, the Stream head's dequeues, the service workqueue.
 * A queue knows nothing above it: what enabling a queue does besides
 * scheduling its service procedure is its asx_qinit's enable hook.
 *
 * Copyright (C) 2026 ASX developers
 */
#ifndef _ASX_QUEUE_H
#define _ASX_QUEUE_H

#include "msg.h"

/* asx_queue.flags, under asx_queue.lock */
#define ASX_QFULL	0x01
#define ASX_QWANTW	0x02
#define ASX_QENAB	0x04
#define ASX_QCLOSING	0x08
#define ASX_QSRVBUSY	0x20	/* its service procedure is running */
#define ASX_QBANDFC	0x40	/* some band > 0 is full or has a writer waiting */

/*
 * Flow control of one band > 0 of a queue (SVR4's qband). A queue holds an
 * array of them for bands 1..nband, made when a band is first queued or
 * given water marks, grown to the highest band used in steps of
 * ASX_QBAND_STEP (at most 255 entries), freed with the queue. Under the
 * queue's lock. Band 0 is the queue's own count and marks.
 */
struct asx_qband {
	size_t load;		/* data bytes, and ASX_EMPTY_MSG_COST per empty message */
	size_t hiwat;		/* 0: the queue's marks */
	size_t lowat;
	u32 flags;		/* ASX_QFULL, ASX_QWANTW, ASX_QBUSED */
};

#define ASX_QBUSED	0x100	/* the band has been written to (POLLWRBAND looks at these) */
#define ASX_QBAND_STEP	8

/* asx_queue.benabled: which flow control back-enabled the queue */
#define ASX_BENAB_BAND0	0
#define ASX_BENAB_BANDS	1

/* Where service procedures run (made and destroyed by main.c). */
extern struct workqueue_struct *asx_wq;

void asx_queue_init(struct asx_queue *q, struct asx_stream *st, const struct asx_qinit *qi,
		    const char *name, u8 side, size_t hiwat, size_t lowat);
void asx_queue_close(struct asx_queue *q);
void asx_queue_purge(struct asx_queue *q);
bool asx_queue_cancel(struct asx_queue *q);
void asx_queue_set_wm(struct asx_queue *q, size_t hiwat, size_t lowat);
int asx_queue_set_bwm(struct asx_queue *q, u8 band, size_t hiwat, size_t lowat);
void asx_queue_get_bwm(struct asx_queue *q, u8 band, size_t *hiwat, size_t *lowat);
bool asx_canputnext_wrband(struct asx_queue *q);
void asx_queue_free_bands(struct asx_queue *q);
bool asx_queue_band_idle(struct asx_queue *q, u8 band);
struct asx_msg *asx_rmvq_first(struct asx_queue *q);
struct asx_msg *asx_rmvq_match(struct asx_queue *q, u32 flags, u8 band);
bool asx_queue_match(struct asx_queue *q, u32 flags, u8 band);
void asx_queue_drained(struct asx_queue *q);

/* asx_queue_idle(), inline for the drivers' put procedures (see queue.c). */
static inline bool __asx_queue_idle(struct asx_queue *q)
{
	u32 n = READ_ONCE(q->nmsgs);

	/*
	 * The service procedure marks itself busy before it takes a message
	 * off, so seeing the queue empty and then not busy means nothing taken
	 * earlier is still on its way.
	 */
	smp_rmb();
	return !n && !(READ_ONCE(q->flags) & ASX_QSRVBUSY);
}

#endif /* _ASX_QUEUE_H */
