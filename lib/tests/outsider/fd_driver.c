// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The descriptor driver (Documentation/kstream.rst, asx_fd_driver()):
 *  1. two Streams joined over a socketpair, B's head unread, a writer
 *     blocked in asx_stream_put(A) by flow control: shutting B down and
 *     closing it returns (it used to deadlock: the blocked put held up the
 *     grace period the close waits for);
 *  2. the far end going away (a socket peer that stops reading, a pipe
 *     whose reader closes) neither kills the process with SIGPIPE nor
 *     brings more than one ASX_MSG_HANGUP; what is put afterwards is
 *     dropped and counted;
 *  3. the frame as documented (8 bytes: be32 length, type, band, be16
 *     control length), and a control part longer than ASX_FD_CTL_MAX
 *     (65536 bytes) refused at put time with -EMSGSIZE, nothing sent.
 * The process does nothing about SIGPIPE: the documentation says it need not.
 */
#include <signal.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <asx/kstream.h>
#include <asx/stream.h>
#include "outsider.h"

#define SEC ASX_NSEC_PER_SEC

/* what the program is doing, for the watchdog's message */
static const char *volatile stage = "start";

static void on_alarm(int sig)
{
	static const char pre[] = "fd_driver: watchdog: hung in: ";

	(void)sig;
	if (write(2, pre, sizeof(pre) - 1) < 0 || write(2, stage, strlen(stage)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(3);
	_exit(2);
}

static void nap(int ms)
{
	poll(NULL, 0, ms);
}

static struct asx_stream *open_fd_stream(int rfd, int wfd, struct asx_module **drvp)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	struct asx_stream *s;

	CHECK0(asx_fd_driver(&o.driver, "wire", rfd, wfd, ASX_DRIVER_OWN));
	CHECK0(asx_stream_open(&s, &o));
	if (drvp)
		*drvp = o.driver;
	return s;
}

static struct asx_msg *mk(unsigned int type, size_t len, unsigned char fill)
{
	struct asx_msg *m = asx_msg_alloc(len ? len : 64, type);

	CHECK(m);
	CHECK(asx_msg_space(m) >= len);
	memset(asx_msg_wr(m), fill, len);
	CHECK0(asx_msg_commit(m, len));
	return m;
}

/* The next message at @s's head within @ns, or NULL after -ETIMEDOUT. */
static struct asx_msg *get_within(struct asx_stream *s, uint64_t ns)
{
	struct asx_msg *m = NULL;
	struct timespec dl;
	int r = asx_stream_get(s, &m, 0, asx_deadline(&dl, ns));

	if (r == -ETIMEDOUT)
		return NULL;
	CHECK0(r);
	return m;
}

static void read_full(int fd, void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		CHECK(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

static void write_full(int fd, const void *buf, size_t len)
{
	CHECK(write(fd, buf, len) == (ssize_t)len);
}

/* ------------------------------------------------------------ 1. close */

struct writer {
	struct asx_stream *s;
	long puts;		/* messages put (atomic) */
	int stop;		/* set by main (atomic) */
	int last;		/* the put that ended the loop */
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;

	while (!__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE)) {
		struct asx_msg *m = mk(ASX_MSG_DATA, 4096, 'w');
		struct timespec dl;
		int r = asx_stream_put(w->s, m, 0, asx_deadline(&dl, 60 * SEC));

		if (r) {
			asx_msg_free_chain(m);
			w->last = r;
			break;
		}
		__atomic_fetch_add(&w->puts, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void close_while_writer_blocked(void)
{
	struct writer w = { 0 };
	struct asx_stream *a, *b;
	struct asx_module *da;
	struct asx_driver_stats st;
	struct asx_msg *m;
	pthread_t t;
	long seen = -1;
	int still = 0, r;
	int sv[2];

	stage = "1: fill A until its writer blocks";
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	a = open_fd_stream(sv[0], sv[0], &da);
	b = open_fd_stream(sv[1], sv[1], NULL);
	w.s = a;
	CHECK(pthread_create(&t, NULL, writer_main, &w) == 0);
	/*
	 * Blocked: B's head holds messages (its reader thread waits on it),
	 * A's driver has waited for the socket, and no put has returned for
	 * 300 ms.  On a very slow host a writer merely descheduled would pass
	 * too: the close must return either way.
	 */
	for (int i = 0; i < 1000 && still < 15; i++) {
		long now = __atomic_load_n(&w.puts, __ATOMIC_ACQUIRE);

		nap(20);
		CHECK0(asx_driver_stats(da, &st));
		if (now == seen && st.down_waits > 0 &&
		    asx_msgq_bytes(asx_stream_head_queue(b)) > 0)
			still++;
		else
			still = 0;
		seen = now;
	}
	CHECK(still >= 15);			/* flow control stopped the writer */
	printf("fd_driver: writer blocked after %ld puts of 4 KB, B's head holds %zu bytes\n",
	       seen, asx_msgq_bytes(asx_stream_head_queue(b)));

	stage = "1: asx_stream_shutdown(B) + asx_stream_close(B) while A's writer is blocked";
	alarm(20);
	asx_stream_shutdown(b);
	asx_stream_close(b);			/* closes sv[1] too (ASX_DRIVER_OWN) */
	alarm(60);

	/* A's far end is gone: one HANGUP comes up A (no data was sent to A) */
	stage = "1: HANGUP up A after B closed";
	m = get_within(a, 20 * SEC);
	CHECK(m && m->type == ASX_MSG_HANGUP);
	asx_msg_free_chain(m);

	stage = "1: stop A's writer and close A";
	__atomic_store_n(&w.stop, 1, __ATOMIC_RELEASE);
	asx_stream_shutdown(a);
	CHECK(pthread_join(t, NULL) == 0);
	r = w.last;
	CHECK(r == 0 || r == -ESHUTDOWN);
	asx_stream_close(a);
	puts("fd_driver: closing B while A's writer was blocked returned");
}

/* ------------------------------------------------------------ 2. peer gone */

/*
 * @s's far end has just stopped taking bytes: one put makes the write
 * thread meet EPIPE; exactly one HANGUP comes up; later puts are dropped
 * and counted.  Then @close_up ends the other direction (end of file):
 * still no second HANGUP.
 */
static void one_hangup(struct asx_stream *s, struct asx_module *drv, int close_up, const char *what)
{
	struct asx_driver_stats st;
	struct asx_msg *m;

	CHECK0(asx_stream_put(s, mk(ASX_MSG_DATA, 100, 'x'), 0, NULL));
	m = get_within(s, 20 * SEC);
	CHECK(m && m->type == ASX_MSG_HANGUP);
	asx_msg_free_chain(m);
	for (int i = 0; i < 5; i++)
		CHECK0(asx_stream_put(s, mk(ASX_MSG_DATA, 100, 'y'), 0, NULL));
	CHECK(get_within(s, SEC / 4) == NULL);		/* no second HANGUP */
	close(close_up);				/* end of file on the read side */
	CHECK(get_within(s, SEC / 4) == NULL);		/* still one */
	CHECK0(asx_driver_stats(drv, &st));
	CHECK(st.drops >= 5);				/* the later puts, at least */
	printf("fd_driver: %s peer gone: one HANGUP, process alive, %llu dropped\n", what,
	       (unsigned long long)st.drops);
}

static void peer_goes_away(void)
{
	struct asx_module *drv;
	struct asx_stream *s;
	int sv[2], in[2], out[2];

	/* a socket peer that shuts its reading side: the write gets EPIPE */
	stage = "2: socket peer stops reading";
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	s = open_fd_stream(sv[0], sv[0], &drv);
	CHECK(shutdown(sv[1], SHUT_RD) == 0);
	one_hangup(s, drv, sv[1], "socket");
	asx_stream_close(s);

	/* two pipes; the reader of the down pipe closes: EPIPE (and SIGPIPE) */
	stage = "2: pipe reader closes";
	CHECK(pipe(in) == 0 && pipe(out) == 0);
	s = open_fd_stream(in[0], out[1], &drv);
	close(out[0]);
	one_hangup(s, drv, in[1], "pipe");
	asx_stream_close(s);
}

/* ------------------------------------------------------------ 3. frame */

static void frame_and_bounds(void)
{
	unsigned char h[8], body[16];
	static unsigned char ctl[65536];
	struct asx_stream *s;
	struct asx_msg *m, *d;
	size_t len;
	int sv[2], r;

	stage = "3: frames";
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	s = open_fd_stream(sv[0], sv[0], NULL);

	/* down: DATA "hello" in band 3 */
	m = mk(ASX_MSG_DATA, 0, 0);
	CHECK0(asx_msg_append(m, "hello", 5));
	m->band = 3;
	CHECK0(asx_stream_put(s, m, 0, NULL));
	read_full(sv[1], h, 8);
	CHECK(h[0] == 0 && h[1] == 0 && h[2] == 0 && h[3] == 5);
	CHECK(h[4] == ASX_MSG_DATA && h[5] == 3 && h[6] == 0 && h[7] == 0);
	read_full(sv[1], body, 5);
	CHECK(memcmp(body, "hello", 5) == 0);

	/* up: PROTO, 3 bytes of control and 2 of data */
	write_full(sv[1], "\0\0\0\5\1\7\0\3abcde", 13);
	m = get_within(s, 20 * SEC);
	CHECK(m && m->type == ASX_MSG_PROTO && m->band == 7);
	CHECK(asx_msg_block_len(m) == 3 && memcmp(asx_msg_rd(m), "abc", 3) == 0);
	CHECK(m->cont && m->cont->type == ASX_MSG_DATA && asx_msg_block_len(m->cont) == 2 &&
	      memcmp(asx_msg_rd(m->cont), "de", 2) == 0 && !m->cont->cont);
	asx_msg_free_chain(m);

	/* a control part of 65536 bytes: no frame carries it, refused when put */
	stage = "3: oversized control part";
	m = mk(ASX_MSG_PROTO, sizeof(ctl), 'c');
	d = mk(ASX_MSG_DATA, 10, 'd');
	asx_msg_link(m, d);
	r = asx_stream_put(s, m, 0, NULL);
	if (r != -EMSGSIZE)
		fprintf(stderr, "fd_driver: a 65536-byte control part: put = %d, not -EMSGSIZE\n", r);
	CHECK(r == -EMSGSIZE);
	CHECK(asx_msg_length(m) == sizeof(ctl) + 10);	/* still ours, whole */
	/* 65535 bytes fit: the next frame on the wire is that one, whole */
	CHECK0(asx_msg_consume(m, 1));
	CHECK0(asx_stream_put(s, m, 0, NULL));
	read_full(sv[1], h, 8);
	len = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
	CHECK(len == 65535 + 10);
	CHECK(h[4] == ASX_MSG_PROTO && h[5] == 0 && h[6] == 0xff && h[7] == 0xff);
	read_full(sv[1], ctl, 65535);
	for (size_t i = 0; i < 65535; i++)
		CHECK(ctl[i] == 'c');
	read_full(sv[1], body, 10);
	CHECK(memcmp(body, "dddddddddd", 10) == 0);
	asx_stream_close(s);
	close(sv[1]);
	puts("fd_driver: frames as documented; a 65536-byte control part refused with -EMSGSIZE");
}

/* No argument: every part; "1", "2" or "3": that part alone. */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "123";

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(60);
	if (strchr(only, '3'))
		frame_and_bounds();
	if (strchr(only, '2'))
		peer_goes_away();
	if (strchr(only, '1'))
		close_while_writer_blocked();
	puts("fd_driver: ok");
	return 0;
}
