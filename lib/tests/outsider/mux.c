// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Multiplexor (Documentation/streams.rst, <asx/mux.h>): two upper streams
 * keyed by a message's first byte over one loop-back lower stream; what
 * one upper sends comes up the upper its key names; a key with no stream
 * is counted unroutable; with each lock strategy of the map.
 */
#include <string.h>
#include <asx/map.h>
#include <asx/mux.h>
#include "outsider.h"

static int key_of(const struct asx_msg *m, void *key, void *arg)
{
	if (asx_msg_length(m) < 1)
		return -EINVAL;
	*(unsigned char *)key = m->rd[0];		/* our messages are one block */
	return 0;
}

static void send(struct asx_stream *s, const char *text)
{
	struct asx_msg *m = asx_msg_alloc(16, ASX_MSG_DATA);

	CHECK(m);
	CHECK0(asx_msg_append(m, text, strlen(text)));
	CHECK0(asx_stream_put(s, m, 0, NULL));
}

static void expect(struct asx_stream *s, const char *text)
{
	struct asx_msg *m;
	struct timespec dl;

	CHECK0(asx_stream_get(s, &m, 0, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC)));
	CHECK0(asx_msg_pullup(m, asx_msg_length(m)));
	CHECK(asx_msg_block_len(m) == strlen(text) && memcmp(m->rd, text, strlen(text)) == 0);
	asx_msg_free_chain(m);
}

static void run(enum asx_map_lock lock)
{
	struct asx_stream *a, *b, *lower;
	struct asx_mux_stats st;
	struct asx_mux *mux;
	struct asx_msg *m;
	void *found;

	CHECK0(asx_mux_create(&mux, lock, 1, key_of, NULL));
	CHECK0(asx_mux_open_upper(mux, "A", NULL, &a));
	CHECK0(asx_mux_open_upper(mux, "B", NULL, &b));
	CHECK(asx_mux_open_upper(mux, "A", NULL, &lower) == -EEXIST);
	CHECK0(asx_stream_open(&lower, NULL));		/* loop-back: down comes up */
	CHECK0(asx_mux_link(mux, lower, NULL));		/* the default route down */
	CHECK(asx_map_count(asx_mux_upper_map(mux)) == 2);
	/* the value is the mux's own record of the upper stream, not the stream */
	CHECK0(asx_map_find(asx_mux_upper_map(mux), "B", &found));
	CHECK(asx_map_find(asx_mux_upper_map(mux), "Z", &found) == -ENOENT);

	send(a, "B from a");
	send(b, "A from b");
	send(a, "A to self");
	send(a, "Z nobody");
	expect(b, "B from a");
	expect(a, "A from b");
	expect(a, "A to self");
	CHECK(asx_stream_get(a, &m, ASX_MSGQ_NOWAIT, NULL) == -EWOULDBLOCK);
	asx_mux_stats(mux, &st);
	CHECK(st.down == 4 && st.up == 3 && st.unroutable == 1);

	CHECK0(asx_mux_close_upper(mux, b));
	send(a, "B gone");
	asx_mux_stats(mux, &st);
	CHECK(st.unroutable == 2);
	CHECK0(asx_mux_unlink(mux, lower));
	asx_stream_close(lower);
	asx_mux_destroy(mux);
}

int main(void)
{
	watchdog(60);
	run(ASX_MAP_MUTEX);
	run(ASX_MAP_RWLOCK);
	run(ASX_MAP_RCU);
	puts("mux: ok");
	return 0;
}
