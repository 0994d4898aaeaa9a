// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Streams (Documentation/streams.rst): a user Module over the stock
 * framer, cksum and counter Modules on a loop-back Stream, message-based
 * and then task-based; many messages from several threads arrive intact,
 * each thread's in order; push, insert, remove and pop while it runs.
 */
#include <string.h>
#include <pthread.h>
#include <asx/modules.h>
#include <asx/stream.h>
#include "outsider.h"

#define WRITERS 3
#define PER 500

struct seen { long up; };

static int tag_wr_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	if (m->type == ASX_MSG_DATA && m->wr > m->rd)
		m->rd[0] ^= 0x20;				/* flip the case of the first byte */
	return asx_task_put_next(t, m, dl);
}

static int tag_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct seen *s = asx_module_arg(asx_task_module(t));

	__atomic_fetch_add(&s->up, 1, __ATOMIC_RELAXED);
	return asx_task_put_next(t, m, dl);
}

static const struct asx_task_ops tag_wr = { .put = tag_wr_put };
static const struct asx_task_ops tag_rd = { .put = tag_rd_put };

static struct asx_stream *s;

static void *writer(void *arg)
{
	unsigned int id = (unsigned int)(size_t)arg;

	for (unsigned int i = 0; i < PER; i++) {
		struct asx_msg *m = asx_msg_alloc(16, ASX_MSG_DATA);
		unsigned int v[3] = { 'a', id, i };

		CHECK(m);
		CHECK0(asx_msg_append(m, v, sizeof(v)));
		CHECK0(asx_stream_put(s, m, 0, NULL));
	}
	return NULL;
}

int main(void)
{
	struct seen seen = { 0 };
	struct asx_module *tag, *count, *mod;
	struct asx_counter c;
	struct asx_msg *m;
	unsigned int next[WRITERS] = { 0 };
	char names[8][ASX_MODULE_NAME_MAX];
	pthread_t t[WRITERS];
	struct timespec dl;

	watchdog(60);
	CHECK0(asx_stream_open(&s, NULL));			/* loop-back tail */
	CHECK0(asx_mod_framer(&mod, "framer"));
	CHECK0(asx_stream_push(s, mod, 0, NULL));
	CHECK0(asx_mod_cksum(&mod, "cksum"));
	CHECK0(asx_stream_push(s, mod, 0, NULL));
	CHECK0(asx_mod_counter(&count, "count"));
	CHECK0(asx_stream_push(s, count, 0, NULL));
	CHECK0(asx_module_create(&tag, "tag", &tag_wr, &tag_rd, &seen));
	CHECK0(asx_stream_push(s, tag, 0, NULL));

	/* message-based: "hello" goes down, comes back "Hello" */
	m = asx_msg_alloc(64, ASX_MSG_DATA);
	CHECK(m);
	CHECK0(asx_msg_append(m, "hello", 5));
	CHECK0(asx_stream_put(s, m, 0, NULL));
	CHECK0(asx_stream_get(s, &m, 0, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC)));
	/* the Modules below may hand back a chain (a header's block, emptied): make it one */
	CHECK0(asx_msg_pullup(m, asx_msg_length(m)));
	CHECK(asx_msg_block_len(m) == 5 && memcmp(asx_msg_rd(m), "Hello", 5) == 0);
	asx_msg_free_chain(m);

	/* task-based, one service thread per side: order per writer kept */
	CHECK0(asx_task_activate(asx_module_wr(tag), 1));
	CHECK0(asx_task_activate(asx_module_rd(tag), 1));
	for (size_t i = 0; i < WRITERS; i++)
		CHECK(pthread_create(&t[i], NULL, writer, (void *)i) == 0);
	for (int n = 0; n < WRITERS * PER; n++) {
		unsigned int v[3];

		CHECK0(asx_stream_get(s, &m, 0, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC)));
		CHECK(asx_msg_length(m) == sizeof(v));
		CHECK0(asx_msg_pullup(m, sizeof(v)));
		memcpy(v, asx_msg_rd(m), sizeof(v));
		CHECK(v[0] == ('a' ^ 0x20) && v[1] < WRITERS && v[2] == next[v[1]]);
		next[v[1]]++;
		asx_msg_free_chain(m);
	}
	for (size_t i = 0; i < WRITERS; i++)
		CHECK(pthread_join(t[i], NULL) == 0);
	CHECK(seen.up == 1 + WRITERS * PER);
	CHECK0(asx_mod_counter_read(count, &c));
	CHECK(c.wr_msgs == 1 + WRITERS * PER && c.rd_msgs == c.wr_msgs);

	/* reconfiguration */
	CHECK0(asx_mod_pass(&mod, "pass"));
	CHECK0(asx_stream_insert(s, "count", mod, 0, NULL));
	CHECK(asx_stream_list(s, names, 8) >= 5);
	CHECK0(asx_stream_remove(s, "pass"));
	CHECK(asx_stream_remove(s, "pass") == -ENOENT);
	CHECK0(asx_stream_pop(s));				/* "tag": drained, closed, freed */
	CHECK(asx_mod_errors(count) == 0);
	asx_stream_close(s);
	puts("stream: ok");
	return 0;
}
