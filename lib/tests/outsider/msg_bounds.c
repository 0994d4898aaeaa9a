// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What messages may hold on to (Documentation/messages.rst, the cache;
 * streams.rst, the high-priority bound), with the default settings a
 * production program has (the message cache on):
 *  1. 2,000 messages of 60,000 bytes, allocated, written and freed, leave
 *     resident memory (/proc/self/statm) near where it was: the cache is
 *     bounded (1 MiB per thread, 8 MiB in the depot) and trimmed back to
 *     the system; the same when another thread allocated them and exited;
 *  2. a Stream head whose reader has stopped holds 16 high-priority
 *     messages (ASX_MSGQ_DEFAULT_HIPRI_MAX); the rest get -ENOBUFS, still
 *     the caller's, and asx_msgq_stats() counts them; a HANGUP still gets
 *     through past the bound;
 *  3. the same at a descriptor-driven Stream's head: a peer sends 20
 *     PCPROTO frames and goes away; the reader, back, finds 16 of them and
 *     then the HANGUP; the driver counts the 4 refused as dropped.
 */
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <asx/kstream.h>
#include <asx/msg.h>
#include <asx/stream.h>
#include "outsider.h"

#define N 2000
#define SIZE 60000
#define MB (1024.0 * 1024.0)

static struct asx_msg *msgs[N];

static double resident_mb(void)
{
	long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");

	CHECK(f);
	CHECK(fscanf(f, "%ld %ld", &size, &resident) == 2);
	fclose(f);
	return (double)resident * (double)sysconf(_SC_PAGESIZE) / MB;
}

static void alloc_all(void)
{
	for (int i = 0; i < N; i++) {
		struct asx_msg *m = asx_msg_alloc(SIZE, ASX_MSG_DATA);

		CHECK(m && asx_msg_space(m) >= SIZE);
		memset(asx_msg_wr(m), i & 0xff, SIZE);		/* resident, every page */
		CHECK0(asx_msg_commit(m, SIZE));
		msgs[i] = m;
	}
}

static void free_all(void)
{
	for (int i = 0; i < N; i++)
		asx_msg_free(msgs[i]);
}

static void *alloc_thread(void *arg)
{
	(void)arg;
	alloc_all();
	return NULL;				/* exits: its cache goes to the depot */
}

static void memory(void)
{
	double base, peak, after;
	pthread_t t;

	/* one thread allocates and frees */
	base = resident_mb();
	alloc_all();
	peak = resident_mb();
	free_all();
	after = resident_mb();
	printf("msg_bounds: %d x %d bytes: resident %.1f MB, %.1f MB with them, %.1f MB after "
	       "they were freed\n", N, SIZE, base, peak, after);
	CHECK(peak - base > 100);			/* they were resident */
	if (after - base > 20)
		fprintf(stderr, "msg_bounds: %.1f MB stay resident after the free\n", after - base);
	CHECK(after - base <= 20);

	/* another thread allocates them and exits; this one frees them */
	CHECK(pthread_create(&t, NULL, alloc_thread, NULL) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	peak = resident_mb();
	free_all();
	after = resident_mb();
	printf("msg_bounds: the same from another thread: %.1f MB with them, %.1f MB after\n",
	       peak, after);
	CHECK(peak - base > 100);
	if (after - base > 20)
		fprintf(stderr, "msg_bounds: %.1f MB stay resident after the free\n", after - base);
	CHECK(after - base <= 20);
}

static struct asx_msg *pc(unsigned int type, int tag)
{
	struct asx_msg *m = asx_msg_alloc(64, type);

	CHECK(m);
	CHECK0(asx_msg_append(m, &tag, sizeof(tag)));
	return m;
}

static void head_bound(void)
{
	struct asx_msgq_stats st;
	struct asx_stream *s;
	struct asx_msg *m;
	int accepted = 0, refused = 0, r;

	CHECK0(asx_stream_open(&s, NULL));		/* loop-back, defaults; nobody reads */
	for (int i = 0; i < N; i++) {
		m = pc(ASX_MSG_PCPROTO, i);
		r = asx_stream_put(s, m, 0, NULL);
		if (r == 0) {
			accepted++;
			continue;
		}
		CHECK(r == -ENOBUFS);
		CHECK(m->type == ASX_MSG_PCPROTO && asx_msg_length(m) == sizeof(int));
		asx_msg_free_chain(m);			/* still ours */
		refused++;
	}
	asx_msgq_stats(asx_stream_head_queue(s), &st);
	printf("msg_bounds: %d PCPROTO at a stalled head: %d accepted, %d refused (stats %llu)\n",
	       N, accepted, refused, (unsigned long long)st.hipri_refused);
	CHECK(accepted == ASX_MSGQ_DEFAULT_HIPRI_MAX && refused == N - accepted);
	CHECK(st.hipri_refused == (uint64_t)refused);
	/* normal messages are not counted against it; a HANGUP passes the bound */
	CHECK0(asx_stream_put(s, pc(ASX_MSG_DATA, -1), 0, NULL));
	CHECK0(asx_stream_put(s, pc(ASX_MSG_HANGUP, -2), 0, NULL));
	for (int i = 0; i < accepted; i++) {
		int tag;

		CHECK0(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL));
		CHECK(m->type == ASX_MSG_PCPROTO && asx_msg_read(m, 0, &tag, sizeof(tag)) == sizeof(tag));
		CHECK(tag == i);				/* the first ones, in order */
		asx_msg_free_chain(m);
	}
	CHECK0(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL));
	CHECK(m->type == ASX_MSG_HANGUP);		/* high priority: before the DATA */
	asx_msg_free_chain(m);
	CHECK0(asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL));
	CHECK(m->type == ASX_MSG_DATA);
	asx_msg_free_chain(m);
	asx_stream_close(s);
}

static void driver_hangup_past_bound(void)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	/* a PCPROTO frame: be32 length 1, type, band 0, be16 control length 1, a byte */
	unsigned char frame[9] = { 0, 0, 0, 1, ASX_MSG_PCPROTO, 0, 0, 1, 'p' };
	struct asx_driver_stats ds;
	struct asx_msgq *head;
	struct asx_stream *s;
	struct asx_msg *m;
	size_t count = 0;
	int sv[2], stable = 0, pcs = 0, hangups = 0;

	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK0(asx_fd_driver(&o.driver, "wire", sv[0], sv[0], ASX_DRIVER_OWN));
	CHECK0(asx_stream_open(&s, &o));
	for (int i = 0; i < 20; i++)
		CHECK(write(sv[1], frame, sizeof(frame)) == (ssize_t)sizeof(frame));
	close(sv[1]);					/* the peer goes away */
	/* wait until the head stops changing (at most 20 s), then read it all */
	head = asx_stream_head_queue(s);
	for (int i = 0; i < 2000 && stable < 10; i++) {
		size_t c = asx_msgq_count(head);

		poll(NULL, 0, 10);
		stable = c == count && c > 16 ? stable + 1 : 0;
		count = c;
	}
	while (asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL) == 0) {
		if (m->type == ASX_MSG_PCPROTO)
			pcs += !hangups;
		else if (m->type == ASX_MSG_HANGUP)
			hangups++;
		asx_msg_free_chain(m);
	}
	CHECK0(asx_driver_stats(o.driver, &ds));
	printf("msg_bounds: 20 PCPROTO frames, then the peer left: %d PCPROTO up, %d HANGUP, "
	       "%llu dropped\n", pcs, hangups, (unsigned long long)ds.drops);
	CHECK(pcs == ASX_MSGQ_DEFAULT_HIPRI_MAX && hangups == 1);
	CHECK(ds.drops == 20 - ASX_MSGQ_DEFAULT_HIPRI_MAX);	/* refused above: not retried */
	asx_stream_close(s);
}

/* No argument: every part; "1", "2", "3" (or several): those parts alone. */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "123";

	setvbuf(stdout, NULL, _IOLBF, 0);
	watchdog(60);
	if (strchr(only, '1'))
		memory();
	if (strchr(only, '2'))
		head_bound();
	if (strchr(only, '3'))
		driver_hangup_past_bound();
	puts("msg_bounds: ok");
	return 0;
}
