/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ASX tracepoints: asx:asx_put, asx:asx_srv, asx:asx_fc_stop, asx:asx_fc_start,
 * asx:asx_enqueue and asx:asx_dequeue (a message in and out of a queue, both
 * under its lock: asx-qlat times residence from them), and the activation
 * ones asx:sa_block, asx:sa_unblock, asx:sa_preempt, asx:sa_resume (under
 * the run-queue lock or with preemption off) and asx:sa_upcall.
 *
 * Copyright (C) 2026 ASX developers
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM asx

#if !defined(_ASX_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _ASX_TRACE_H

#include "asx_api.h"
#include "compat.h"

#include <linux/tracepoint.h>

TRACE_EVENT(asx_put,
	TP_PROTO(const struct asx_queue *q, const struct asx_msg *mp),
	TP_ARGS(q, mp),
	TP_STRUCT__entry(
		__field(u64, stream)
		__string(name, q->name)
		__field(u8, side)
		__field(u8, type)
		__field(u8, band)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->stream = q->st ? q->st->id : 0;
		asx_assign_str(name, q->name);
		__entry->side = q->side;
		__entry->type = mp->type;
		__entry->band = mp->band;
		__entry->len = asx_msgdsize(mp);
	),
	TP_printk("stream=%llu queue=%s/%c type=%#x band=%u len=%u",
		  __entry->stream, __get_str(name), __entry->side ? 'w' : 'r',
		  __entry->type, __entry->band, __entry->len)
);

/* msg and queue identify a message and its queue while it is queued */
DECLARE_EVENT_CLASS(asx_msgq_class,
	TP_PROTO(const struct asx_queue *q, const struct asx_msg *mp),
	TP_ARGS(q, mp),
	TP_STRUCT__entry(
		__field(const void *, queue)
		__field(const void *, msg)
		__field(u64, stream)
		__string(name, q->name)
		__field(u8, side)
		__field(u32, len)
		__field(u32, nmsgs)
	),
	TP_fast_assign(
		__entry->queue = q;
		__entry->msg = mp;
		__entry->stream = q->st ? q->st->id : 0;
		asx_assign_str(name, q->name);
		__entry->side = q->side;
		__entry->len = asx_msgdsize(mp);
		__entry->nmsgs = q->nmsgs;
	),
	TP_printk("stream=%llu queue=%s/%c msg=%p len=%u msgs=%u",
		  __entry->stream, __get_str(name), __entry->side ? 'w' : 'r',
		  __entry->msg, __entry->len, __entry->nmsgs)
);

DEFINE_EVENT(asx_msgq_class, asx_enqueue,
	TP_PROTO(const struct asx_queue *q, const struct asx_msg *mp),
	TP_ARGS(q, mp)
);

DEFINE_EVENT(asx_msgq_class, asx_dequeue,
	TP_PROTO(const struct asx_queue *q, const struct asx_msg *mp),
	TP_ARGS(q, mp)
);

DECLARE_EVENT_CLASS(asx_queue_class,
	TP_PROTO(const struct asx_queue *q),
	TP_ARGS(q),
	TP_STRUCT__entry(
		__field(const void *, queue)
		__field(u64, stream)
		__string(name, q->name)
		__field(u8, side)
		__field(u64, count)
		__field(u32, nmsgs)
	),
	TP_fast_assign(
		__entry->queue = q;
		__entry->stream = q->st ? q->st->id : 0;
		asx_assign_str(name, q->name);
		__entry->side = q->side;
		__entry->count = q->count;
		__entry->nmsgs = q->nmsgs;
	),
	TP_printk("stream=%llu queue=%s/%c count=%llu msgs=%u",
		  __entry->stream, __get_str(name), __entry->side ? 'w' : 'r',
		  __entry->count, __entry->nmsgs)
);

DEFINE_EVENT(asx_queue_class, asx_srv,
	TP_PROTO(const struct asx_queue *q),
	TP_ARGS(q)
);

DEFINE_EVENT(asx_queue_class, asx_fc_stop,
	TP_PROTO(const struct asx_queue *q),
	TP_ARGS(q)
);

DEFINE_EVENT(asx_queue_class, asx_fc_start,
	TP_PROTO(const struct asx_queue *q),
	TP_ARGS(q)
);

DECLARE_EVENT_CLASS(asx_sa_class,
	TP_PROTO(u64 group, u32 vp, u32 tid),
	TP_ARGS(group, vp, tid),
	TP_STRUCT__entry(
		__field(u64, group)
		__field(u32, vp)
		__field(u32, tid)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->vp = vp;
		__entry->tid = tid;
	),
	TP_printk("group=%llu vp=%u tid=%u", __entry->group, __entry->vp, __entry->tid)
);

DEFINE_EVENT(asx_sa_class, sa_block,
	TP_PROTO(u64 group, u32 vp, u32 tid),
	TP_ARGS(group, vp, tid)
);

DEFINE_EVENT(asx_sa_class, sa_unblock,
	TP_PROTO(u64 group, u32 vp, u32 tid),
	TP_ARGS(group, vp, tid)
);

DEFINE_EVENT(asx_sa_class, sa_preempt,
	TP_PROTO(u64 group, u32 vp, u32 tid),
	TP_ARGS(group, vp, tid)
);

DEFINE_EVENT(asx_sa_class, sa_resume,
	TP_PROTO(u64 group, u32 vp, u32 tid),
	TP_ARGS(group, vp, tid)
);

TRACE_EVENT(sa_upcall,
	TP_PROTO(u64 group, u32 events, u32 tid),
	TP_ARGS(group, events, tid),
	TP_STRUCT__entry(
		__field(u64, group)
		__field(u32, events)
		__field(u32, tid)
	),
	TP_fast_assign(
		__entry->group = group;
		__entry->events = events;
		__entry->tid = tid;
	),
	TP_printk("group=%llu events=%u tid=%u", __entry->group, __entry->events, __entry->tid)
);

#endif /* _ASX_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
