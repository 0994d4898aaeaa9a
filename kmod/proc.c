// SPDX-License-Identifier: GPL-2.0
/*
 * ASX observability: /proc/asx/streams (the reader's live Streams and their queues),
 * /proc/asx/objects (live object counts) and /proc/asx/modules.
 *
 * Copyright (C) 2026 ASX developers
 */

#include "driver.h"
#include "main.h"
#include "registry.h"

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

static struct proc_dir_entry *asx_proc_dir;

static void show_queue(struct seq_file *m, u32 level, struct asx_queue *q)
{
	size_t count, hiwat, lowat;
	u64 srv, enq, stops, starts;
	u32 nmsgs, flags;

	spin_lock(&q->lock);
	count = q->count;
	nmsgs = q->nmsgs;
	hiwat = q->hiwat;
	lowat = q->lowat;
	flags = q->flags;
	srv = q->srv_runs;
	enq = q->enqueued;
	stops = q->fc_stops;
	starts = q->fc_starts;
	spin_unlock(&q->lock);
	seq_printf(m, "  q %u %c %-8s count %zu msgs %u hiwat %zu lowat %zu puts %lld srv %llu enq %llu fc_stop %llu fc_start %llu drops %lld%s\n",
		   level, q->side ? 'w' : 'r', q->name, count, nmsgs, hiwat, lowat,
		   (long long)READ_ONCE(q->puts), srv, enq, stops, starts,
		   (long long)atomic64_read(&q->drops), flags & ASX_QFULL ? " full" : "");
}

/*
 * /proc/asx/streams walks the list with a seq iterator: each read() formats
 * as many Streams as fill its buffer, each once, under asx_streams_lock for
 * that read only. A reader sees its own Streams (those opened by its
 * effective uid when it opened the file); CAP_SYS_ADMIN sees every one. The
 * opener's name is escaped, so no process name can forge a line.
 */
static void *streams_start(struct seq_file *m, loff_t *pos)
	__acquires(&asx_streams_lock)
{
	mutex_lock(&asx_streams_lock);
	return seq_list_start(&asx_streams, *pos);
}

static void *streams_next(struct seq_file *m, void *v, loff_t *pos)
{
	return seq_list_next(v, &asx_streams, pos);
}

static void streams_stop(struct seq_file *m, void *v)
	__releases(&asx_streams_lock)
{
	mutex_unlock(&asx_streams_lock);
}

static bool stream_visible(struct seq_file *m, const struct asx_stream *st)
{
	return uid_eq(st->uid, m->file->f_cred->euid) ||
	       file_ns_capable(m->file, &init_user_ns, CAP_SYS_ADMIN);
}

static int streams_show(struct seq_file *m, void *v)
{
	struct asx_stream *st = list_entry(v, struct asx_stream, all);
	struct asx_minst *mi;
	u32 level;

	lockdep_assert_held(&asx_streams_lock);
	if (!stream_visible(m, st))
		return SEQ_SKIP;
	mutex_lock(&st->cfg);
	seq_printf(m, "stream %llu pid %d comm ", st->id, st->pid);
	seq_escape(m, st->comm, " \t\n\\");
	seq_printf(m, " driver %s depth %u modules", st->drv->name, st->depth);
	list_for_each_entry(mi, &st->mods, node)
		seq_printf(m, " %s", mi->mi->name);
	seq_printf(m, "%s%s%s\n",
		   test_bit(ASX_ST_HANGUP, &st->flags) ? " hangup" : "",
		   test_bit(ASX_ST_ERROR, &st->flags) ? " error" : "",
		   rcu_access_pointer(st->upper) ? " linked" : "");
	show_queue(m, 0, &st->hrq);
	show_queue(m, 0, &st->hwq);
	level = 1;
	list_for_each_entry(mi, &st->mods, node) {
		show_queue(m, level, &mi->rq);
		show_queue(m, level, &mi->wq);
		level++;
	}
	show_queue(m, level, &st->drq);
	show_queue(m, level, &st->dwq);
	mutex_unlock(&st->cfg);
	return 0;
}

static const struct seq_operations streams_sops = {
	.start	= streams_start,
	.next	= streams_next,
	.stop	= streams_stop,
	.show	= streams_show,
};

static int objects_show(struct seq_file *m, void *v)
{
	seq_printf(m, "streams %ld\nmodules %ld\nmsgs %ld\ndblks %ld\n",
		   atomic_long_read(&asx_nr_streams), atomic_long_read(&asx_nr_minst),
		   asx_nr_msgs(), asx_nr_dblks());
	return 0;
}

static int modules_show(struct seq_file *m, void *v)
{
	asx_registry_show(m);
	asx_drivers_show(m);
	return 0;
}

int asx_proc_init(void)
{
	asx_proc_dir = proc_mkdir("asx", NULL);
	if (!asx_proc_dir)
		return -ENOMEM;
	if (!proc_create_seq("streams", 0444, asx_proc_dir, &streams_sops) ||
	    !proc_create_single("objects", 0444, asx_proc_dir, objects_show) ||
	    !proc_create_single("modules", 0444, asx_proc_dir, modules_show)) {
		proc_remove(asx_proc_dir);
		return -ENOMEM;
	}
	return 0;
}

void asx_proc_exit(void)
{
	proc_remove(asx_proc_dir);
}
