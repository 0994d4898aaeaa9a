// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kstream.c - kernel Streams through <asx/kstream.h>, written from
 * Documentation/kstream.rst and kmod.rst alone, built against an installed
 * libasx (tools/outsider-vm.sh) and run where asx.ko is loaded (the test
 * VM).  Every message must come back exactly once and in order, and the
 * counts must agree with /proc/asx and the drivers' statistics:
 *
 *   config   push/pop by position and by name, LIST, errors
 *   loop     PUTMSG/GETMSG through pushed "count": per-band order, HIPRI
 *            first, the count module's and the head queue's statistics
 *   water    SETWM/GETWM: a non-blocking writer stopped (EAGAIN), drained,
 *            resumed; fc_stops counted; the documented errors
 *   pipe     a writer thread and a reader through a pipe pair, then EOF and
 *            EPIPE when one end closes
 *   mux      two lowers linked under a mux, round trips tagged by id, a
 *            linked lower refusing I/O, an unknown id dropped and counted,
 *            unlink giving the lower back
 *   span     a user-space Stream (a counter Module) whose driver is a
 *            kernel loop Stream with "count": writer and reader threads,
 *            driver, user and kernel counters agreeing; and one over a
 *            kernel pipe end: types mapped, HANGUP when the far end closes
 *   objects  /proc/asx/objects back to where it started
 *
 * Exit 0 when everything held, 1 on the first failure, 4 when /dev/asx is
 * missing (it must then not count as a pass: the caller says so).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <asx/kstream.h>
#include <asx/modules.h>
#include <asx/stream.h>

#include "../outsider.h"

#define ERRNO(call, want)						\
	do {								\
		long long r_ = (long long)(call);			\
		if (r_ != (want)) {					\
			fprintf(stderr, "%s:%d: %s = %lld, want %s\n",	\
				__FILE__, __LINE__, #call, r_, #want);	\
			exit(1);					\
		}							\
	} while (0)

/* failures that do not stop the run (the rest still says what it finds) */
static int soft_failures;

struct objects {
	long streams, modules, msgs, dblks;
};

static void read_objects(struct objects *o)
{
	FILE *f = fopen("/proc/asx/objects", "r");

	CHECK(f);
	CHECK(fscanf(f, "streams %ld modules %ld msgs %ld dblks %ld", &o->streams, &o->modules,
		     &o->msgs, &o->dblks) == 4);
	fclose(f);
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* The kernel frees some objects after an RCU grace period: give it 10 s. */
static void objects_back_to(const struct objects *base, const char *when)
{
	struct objects o;
	int i;

	for (i = 0; i < 1000; i++) {
		read_objects(&o);
		if (o.streams == base->streams && o.modules == base->modules &&
		    o.msgs == base->msgs && o.dblks == base->dblks)
			return;
		sleep_ms(10);
	}
	fprintf(stderr, "objects after %s: streams %ld modules %ld msgs %ld dblks %ld, "
		"started with %ld %ld %ld %ld\n", when, o.streams, o.modules, o.msgs, o.dblks,
		base->streams, base->modules, base->msgs, base->dblks);
	exit(1);
}

/* ---------------------------------------------------------------- config */

static void expect_chain(struct asx_kstream *ks, const char *want)
{
	char names[ASX_MAX_DEPTH][ASX_KSTREAM_NAME_MAX], drv[ASX_KSTREAM_NAME_MAX];
	char got[512] = "";
	int n = asx_kstream_list(ks, names, ASX_MAX_DEPTH, drv);

	CHECK(n >= 0);
	for (int i = 0; i < n; i++) {
		strcat(got, names[i]);
		strcat(got, " ");
	}
	strcat(got, drv);
	if (strcmp(got, want)) {
		fprintf(stderr, "chain '%s', want '%s'\n", got, want);
		exit(1);
	}
}

static void config(void)
{
	struct asx_kstream *ks, *mux;
	struct asx_version v;
	char longname[64];
	int i;

	CHECK0(asx_kstream_open(&ks, NULL, 0));
	CHECK0(asx_kstream_version(ks, &v));
	CHECK(v.major == 0 && v.minor >= 3);
	CHECK((v.features & (ASX_FEAT_STREAMS | ASX_FEAT_PIPE | ASX_FEAT_MUX | ASX_FEAT_STR)) ==
	      (ASX_FEAT_STREAMS | ASX_FEAT_PIPE | ASX_FEAT_MUX | ASX_FEAT_STR));
	expect_chain(ks, "loop");
	CHECK0(asx_kstream_push(ks, "count"));
	CHECK0(asx_kstream_push(ks, "pass"));
	CHECK0(asx_kstream_push(ks, "frame"));
	expect_chain(ks, "frame pass count loop");	/* top first */
	CHECK(asx_kstream_list(ks, NULL, 0, NULL) == 3);
	CHECK0(asx_kstream_pop(ks, "pass"));		/* by name, from the middle */
	expect_chain(ks, "frame count loop");
	CHECK0(asx_kstream_pop(ks, NULL));		/* the top */
	expect_chain(ks, "count loop");
	ERRNO(asx_kstream_pop(ks, "pass"), -ENOENT);
	ERRNO(asx_kstream_push(ks, "no-such-module"), -ENOENT);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	ERRNO(asx_kstream_push(ks, longname), -ENAMETOOLONG);
	ERRNO(asx_kstream_set_driver(ks, "mux"), -EBUSY);	/* not fresh */
	CHECK0(asx_kstream_pop(ks, ""));
	ERRNO(asx_kstream_pop(ks, NULL), -EINVAL);		/* nothing left */
	for (i = 0; i < ASX_MAX_DEPTH; i++)
		CHECK0(asx_kstream_push(ks, "pass"));
	ERRNO(asx_kstream_push(ks, "pass"), -ENOSR);
	CHECK(asx_kstream_list(ks, NULL, 0, NULL) == ASX_MAX_DEPTH);
	asx_kstream_close(ks);
	ERRNO(asx_kstream_open(&ks, "no-such-driver", 0), -ENOENT);
	CHECK0(asx_kstream_open(&mux, "mux", 0));
	expect_chain(mux, "mux");
	asx_kstream_close(mux);
}

/* ---------------------------------------------------------------- the other wrappers */

static void put_bytes(struct asx_kstream *ks, const char *ctl, const char *data,
		      unsigned int band)
{
	struct asx_kstream_part c = { (void *)ctl, 0, ctl ? (int32_t)strlen(ctl) : -1 };
	struct asx_kstream_part d = { (void *)data, 0, data ? (int32_t)strlen(data) : -1 };

	CHECK0(asx_kstream_putmsg(ks, ctl ? &c : NULL, data ? &d : NULL, 0, band));
}

static void wrappers(void)
{
	char names[2][ASX_KSTREAM_NAME_MAX], drv[ASX_KSTREAM_NAME_MAX], cb[32], db[32];
	struct asx_kstream_part ctl = { cb, sizeof(cb), 0 }, data = { db, sizeof(db), 0 };
	struct asx_kstream *ks, *other, *att;
	unsigned int flags, band;
	uint32_t msgs;
	int fd, r;

	ERRNO(asx_kstream_open(&ks, NULL, 0x100), -EINVAL);
	CHECK0(asx_kstream_open(&ks, NULL, ASX_KSTREAM_NONBLOCK));
	/* nothing there: EAGAIN; peek 0 */
	flags = ASX_MSG_ANY;
	ERRNO(asx_kstream_getmsg(ks, &ctl, &data, &flags, NULL), -EAGAIN);
	flags = ASX_MSG_ANY;
	ERRNO(asx_kstream_peek(ks, &ctl, &data, &flags, NULL), 0);
	/* LIST with fewer entries than modules: the depth, only @n stored */
	CHECK0(asx_kstream_push(ks, "count"));
	CHECK0(asx_kstream_push(ks, "pass"));
	CHECK0(asx_kstream_push(ks, "csum"));
	memset(names, 0, sizeof(names));
	CHECK(asx_kstream_list(ks, names, 2, drv) == 3);
	CHECK(!strcmp(names[0], "csum") && !strcmp(names[1], "pass") && !strcmp(drv, "loop"));
	CHECK0(asx_kstream_pop(ks, "csum"));
	CHECK0(asx_kstream_pop(ks, "pass"));
	/* PEEK leaves the message; GETMSG then takes it */
	put_bytes(ks, "c1", "d1", 0);
	flags = ASX_MSG_ANY;
	CHECK(asx_kstream_peek(ks, &ctl, &data, &flags, NULL) == 1);
	CHECK(ctl.len == 2 && data.len == 2 && !memcmp(cb, "c1", 2));
	CHECK0(asx_kstream_nread(ks, &msgs, NULL, NULL));
	CHECK(msgs == 1);
	/* a part that does not fit: cut, MORE*, the rest stays at the front */
	put_bytes(ks, NULL, "0123456789", 0);
	flags = ASX_MSG_ANY;
	CHECK(asx_kstream_getmsg(ks, &ctl, &data, &flags, NULL) == 0);	/* c1/d1 */
	data.maxlen = 4;
	flags = ASX_MSG_ANY;
	CHECK(asx_kstream_getmsg(ks, &ctl, &data, &flags, NULL) == ASX_MOREDATA);
	CHECK(ctl.len == -1 && data.len == 4 && !memcmp(db, "0123", 4));
	data.maxlen = sizeof(db);
	flags = ASX_MSG_ANY;
	CHECK(asx_kstream_getmsg(ks, &ctl, &data, &flags, NULL) == 0);
	CHECK(data.len == 6 && !memcmp(db, "456789", 6));
	/* ASX_MSG_BAND: only band >= 2 */
	put_bytes(ks, NULL, "b0", 0);
	put_bytes(ks, NULL, "b1", 1);
	put_bytes(ks, NULL, "b3", 3);
	flags = ASX_MSG_BAND;
	band = 2;
	CHECK(asx_kstream_getmsg(ks, &ctl, &data, &flags, &band) == 0);
	CHECK(band == 3 && data.len == 2 && !memcmp(db, "b3", 2));
	flags = ASX_MSG_BAND;
	band = 2;
	ERRNO(asx_kstream_getmsg(ks, &ctl, &data, &flags, &band), -EAGAIN);
	/* FLUSH of band 1 only, then of everything read-side */
	CHECK0(asx_kstream_flush(ks, ASX_STREAM_FLUSHR | ASX_STREAM_FLUSHBAND, 1));
	CHECK0(asx_kstream_nread(ks, &msgs, NULL, NULL));
	CHECK(msgs == 1);
	CHECK0(asx_kstream_flush(ks, ASX_STREAM_FLUSHRW, 0));
	CHECK0(asx_kstream_nread(ks, &msgs, NULL, NULL));
	CHECK(msgs == 0);
	ERRNO(asx_kstream_flush(ks, 0x80, 0), -EINVAL);
	/* read and write options */
	CHECK(asx_kstream_get_rdopt(ks) == (ASX_RNORM | ASX_RPROTNORM));
	CHECK0(asx_kstream_set_rdopt(ks, ASX_RMSGN | ASX_RPROTDAT));
	CHECK(asx_kstream_get_rdopt(ks) == (ASX_RMSGN | ASX_RPROTDAT));
	CHECK(asx_kstream_get_wropt(ks) == 0);
	CHECK0(asx_kstream_set_wropt(ks, ASX_SNDZERO));
	CHECK(asx_kstream_get_wropt(ks) == ASX_SNDZERO);
	fd = asx_kstream_fd(ks);
	CHECK(write(fd, "", 0) == 0);
	CHECK0(asx_kstream_nread(ks, &msgs, NULL, NULL));
	CHECK(msgs == 1);			/* the zero-length message */
	CHECK(read(fd, db, sizeof(db)) == 0);
	put_bytes(ks, "P", "data", 0);		/* RPROTDAT: control part as data */
	CHECK(read(fd, db, sizeof(db)) == 5 && !memcmp(db, "Pdata", 5));
	/* STR: the count module answers; with nobody to answer, EINVAL */
	{
		struct asx_count_stats cs;

		CHECK(asx_kstream_str(ks, ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), 0) ==
		      sizeof(cs));
		ERRNO(asx_kstream_str(ks, 0x12345678, NULL, 0, 0, 0), -EINVAL);
	}
	/* hold keeps STR commands too: ETIME after the timeout */
	CHECK0(asx_kstream_push(ks, "hold"));
	ERRNO(asx_kstream_str(ks, ASX_STR_COUNT_GET, db, 0, sizeof(db), 200), -ETIME);
	CHECK0(asx_kstream_str(ks, ASX_STR_HOLD_RELEASE, NULL, 0, 0, 0));
	/* kmod.rst: PIPE needs the loop driver (modules may be there); once a
	 * pipe end, never again */
	ERRNO(asx_kstream_pipe(ks, &other, 0x100), -EINVAL);
	CHECK0(asx_kstream_pipe(ks, &other, ASX_KSTREAM_NONBLOCK));
	{
		struct asx_kstream *again;

		ERRNO(asx_kstream_pipe(ks, &again, 0), -EBUSY);
		ERRNO(asx_kstream_pipe(other, &again, 0), -EBUSY);
		ERRNO(asx_kstream_set_driver(other, "mux"), -EBUSY);
	}
	put_bytes(other, NULL, "across", 0);
	CHECK(read(fd, db, sizeof(db)) == 6 && !memcmp(db, "across", 6));
	asx_kstream_close(other);
	/* attach and detach: the descriptor stays open and usable */
	CHECK0(asx_kstream_attach(&att, fd, false));
	CHECK(asx_kstream_list(att, NULL, 0, NULL) == 2);
	CHECK(asx_kstream_detach(att) == fd);
	ERRNO(asx_kstream_attach(&att, -1, false), -EBADF);
	ERRNO(asx_kstream_detach(NULL), -EINVAL);
	CHECK(asx_kstream_fd(NULL) == -EINVAL);
	r = asx_kstream_list(ks, NULL, 0, NULL);
	CHECK(r == 2);
	asx_kstream_close(ks);
	CHECK0(asx_kstream_open(&ks, NULL, 0));
	ERRNO(asx_kstream_set_driver(ks, "pipe"), -ENOENT);	/* pipes come from PIPE */
	CHECK0(asx_kstream_set_driver(ks, "null"));
	put_bytes(ks, NULL, "gone", 0);				/* a sink */
	CHECK0(asx_kstream_nread(ks, &msgs, NULL, NULL));
	CHECK(msgs == 0);
	asx_kstream_close(ks);
}

/* ---------------------------------------------------------------- loop */

struct rec {
	uint32_t seq;
	uint32_t band;
};

static void put_rec(struct asx_kstream *ks, uint32_t seq, unsigned int band, bool hipri)
{
	struct rec r = { seq, band };
	char pad[100];
	struct asx_kstream_part ctl = { &r, sizeof(r), sizeof(r) };
	struct asx_kstream_part data = { pad, sizeof(pad), (int32_t)(seq % sizeof(pad)) };

	memset(pad, (int)(seq & 0xff), sizeof(pad));
	CHECK0(asx_kstream_putmsg(ks, &ctl, hipri ? NULL : &data, hipri ? ASX_MSG_HIPRI : 0,
				  band));
}

/* Take one message; check its parts; return its record. */
static struct rec get_rec(struct asx_kstream *ks, unsigned int *flags)
{
	struct rec r;
	char pad[200];
	struct asx_kstream_part ctl = { &r, sizeof(r), 0 };
	struct asx_kstream_part data = { pad, sizeof(pad), 0 };
	unsigned int band = 0;
	int more;

	*flags = ASX_MSG_ANY;
	more = asx_kstream_getmsg(ks, &ctl, &data, flags, &band);
	CHECK(more == 0);
	CHECK(ctl.len == (int32_t)sizeof(r));
	CHECK(r.band == band);
	if (*flags == ASX_MSG_HIPRI) {
		CHECK(data.len == -1);
	} else {
		CHECK(*flags == ASX_MSG_BAND);
		CHECK(data.len == (int32_t)(r.seq % 100));
		for (int i = 0; i < data.len; i++)
			CHECK((unsigned char)pad[i] == (r.seq & 0xff));
	}
	return r;
}

static uint64_t data_bytes(uint32_t from, uint32_t to)
{
	uint64_t b = 0;

	for (uint32_t s = from; s < to; s++)
		b += s % 100;
	return b;
}

static void loop(void)
{
	enum { N = 240, HI = 8 };
	struct asx_kstream *ks;
	struct asx_count_stats cs;
	struct asx_qstats qs;
	uint32_t last[3] = { 0, 0, 0 }, lasthi = 0, msgs;
	uint64_t bytes, hibytes = 0;
	unsigned int flags, nhi = 0, seen[3] = { 0, 0, 0 };
	int cur_band = 3, i;

	CHECK0(asx_kstream_open(&ks, NULL, 0));
	CHECK0(asx_kstream_push(ks, "count"));
	/* N normal messages in bands 0..2 and HI high-priority ones, all
	 * queued at the head before any is read (N * 140 bytes < 64 KB) */
	for (i = 1; i <= N; i++) {
		put_rec(ks, (uint32_t)i, (unsigned int)i % 3, false);
		if (i % (N / HI) == 0)
			put_rec(ks, (uint32_t)(N + i), 0, true);
	}
	CHECK0(asx_kstream_nread(ks, &msgs, NULL, &bytes));
	CHECK(msgs == N + HI);
	/* kmod.rst: NREAD counts every byte of a message, its control part
	 * (a struct rec each) and its data part */
	CHECK(bytes == data_bytes(1, N + 1) + (N + HI) * sizeof(struct rec));
	/* HIPRI first in arrival order, then band 2, 1, 0, each in order */
	for (i = 0; i < N + HI; i++) {
		struct rec r = get_rec(ks, &flags);

		if (flags == ASX_MSG_HIPRI) {
			CHECK(cur_band == 3 && r.seq > lasthi);
			lasthi = r.seq;
			nhi++;
			continue;
		}
		CHECK(nhi == HI);
		CHECK(r.band <= 2 && (int)r.band <= cur_band);
		cur_band = (int)r.band;
		CHECK(r.seq % 3 == r.band && r.seq > last[r.band] && r.seq <= N);
		last[r.band] = r.seq;
		seen[r.band]++;
		hibytes += r.seq % 100;
	}
	CHECK(seen[0] == N / 3 && seen[1] == N / 3 && seen[2] == N / 3);
	CHECK(hibytes == data_bytes(1, N + 1));
	CHECK0(asx_kstream_nread(ks, &msgs, NULL, &bytes));
	CHECK(msgs == 0 && bytes == 0);
	/* the kernel count module saw every message both ways */
	memset(&cs, 0, sizeof(cs));
	CHECK(asx_kstream_str(ks, ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), 0) == sizeof(cs));
	CHECK(cs.wmsgs == N + HI && cs.rmsgs == N + HI && cs.rbytes == cs.wbytes);
	/* kmod.rst: the count module counts control and data bytes alike */
	CHECK(cs.wbytes == data_bytes(1, N + 1) + (N + HI) * sizeof(struct rec));
	CHECK0(asx_kstream_qstats(ks, 0, ASX_SIDE_READ, &qs));
	CHECK(!strcmp(qs.name, "head") && qs.enqueued == N + HI && qs.msgs == 0 && qs.count == 0);
	CHECK0(asx_kstream_qstats(ks, 1, ASX_SIDE_WRITE, &qs));
	CHECK(!strcmp(qs.name, "count") && qs.drops == 0);
	CHECK0(asx_kstream_qstats(ks, 2, ASX_SIDE_READ, &qs));
	CHECK(!strcmp(qs.name, "loop"));
	ERRNO(asx_kstream_qstats(ks, 3, ASX_SIDE_READ, &qs), -ENXIO);
	/* library messages through the same Stream: types and bands mapped */
	{
		struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_PROTO), *d;

		CHECK(m);
		CHECK0(asx_msg_append(m, "ctl", 3));
		d = asx_msg_alloc(8, ASX_MSG_DATA);
		CHECK(d);
		CHECK0(asx_msg_append(d, "data", 4));
		m->cont = d;
		m->band = 7;
		CHECK0(asx_kstream_put(ks, m));
		m = asx_msg_alloc(4, ASX_MSG_USER);
		CHECK(m);
		ERRNO(asx_kstream_put(ks, m), -EOPNOTSUPP);	/* still ours */
		asx_msg_free(m);
		CHECK0(asx_kstream_get(ks, &m));
		CHECK(m->type == ASX_MSG_PROTO && m->band == 7 && asx_msg_length(m) == 7);
		asx_msg_free_chain(m);
	}
	asx_kstream_close(ks);
}

/* ---------------------------------------------------------------- water marks */

static void water(void)
{
	enum { SZ = 1024 };
	struct asx_kstream *ks;
	struct asx_qstats qs;
	uint64_t hi, lo;
	char buf[SZ];
	struct asx_kstream_part data = { buf, SZ, SZ };
	struct pollfd pfd;
	int level, side, n = 0, got = 0, r;
	unsigned int flags = ASX_MSG_ANY;

	CHECK0(asx_kstream_open(&ks, NULL, ASX_KSTREAM_NONBLOCK));
	CHECK0(asx_kstream_push(ks, "pass"));
	/* every queue: 4 KB high, 1 KB low */
	for (level = 0; level <= 2; level++)
		for (side = 0; side < 2; side++)
			CHECK0(asx_kstream_set_water(ks, (unsigned int)level, (unsigned int)side,
						     4096, 1024));
	CHECK0(asx_kstream_set_water(ks, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, 4096, 1024));
	CHECK0(asx_kstream_get_water(ks, 2, ASX_SIDE_WRITE, &hi, &lo));
	CHECK(hi == 4096 && lo == 1024);
	CHECK0(asx_kstream_get_water(ks, 0, ASX_SIDE_READ, &hi, &lo));
	CHECK(hi == 4096 && lo == 1024);
	ERRNO(asx_kstream_set_water(ks, 0, ASX_SIDE_READ, 0, 0), -EINVAL);
	ERRNO(asx_kstream_set_water(ks, 0, ASX_SIDE_READ, 100, 200), -EINVAL);
	ERRNO(asx_kstream_set_water(ks, 9, ASX_SIDE_READ, 4096, 1024), -ENXIO);
	ERRNO(asx_kstream_set_water(ks, 0, 2, 4096, 1024), -EINVAL);
	/* fill: a non-blocking writer is stopped, by a bounded amount */
	for (;;) {
		memset(buf, n & 0xff, SZ);
		r = asx_kstream_putmsg(ks, NULL, &data, 0, 0);
		if (r == -EAGAIN)
			break;
		CHECK0(r);
		n++;
		CHECK(n <= 64);
	}
	/* six queues of 4 KB: no more than that went in, nor less than one queue's */
	if (n < 4 || n > 6 * 4 + 6) {
		fprintf(stderr, "water: %d messages of 1 KB before EAGAIN with 4 KB marks\n", n);
		exit(1);
	}
	CHECK0(asx_kstream_qstats(ks, 0, ASX_SIDE_READ, &qs));
	CHECK(qs.fc_stops >= 1 && qs.count >= 4096 && qs.hiwat == 4096);
	pfd.fd = asx_kstream_fd(ks);
	pfd.events = POLLOUT;
	CHECK(poll(&pfd, 1, 0) == 0);		/* not writable while full */
	/* drain: every message back in order, the writer resumes */
	for (;;) {
		struct asx_kstream_part in = { buf, SZ, 0 };

		flags = ASX_MSG_ANY;
		r = asx_kstream_getmsg(ks, NULL, &in, &flags, NULL);
		if (r == -EAGAIN) {
			if (got == n)
				break;
			/* what the lower queues held comes up on the workqueue */
			pfd.events = POLLIN;
			CHECK(poll(&pfd, 1, 5000) == 1);
			continue;
		}
		CHECK(r == 0 && in.len == SZ);
		CHECK((unsigned char)buf[0] == (got & 0xff) &&
		      (unsigned char)buf[SZ - 1] == (got & 0xff));
		got++;
	}
	CHECK(got == n);
	pfd.events = POLLOUT;
	CHECK(poll(&pfd, 1, 5000) == 1 && (pfd.revents & POLLOUT));
	CHECK0(asx_kstream_putmsg(ks, NULL, &data, 0, 0));
	CHECK0(asx_kstream_qstats(ks, 0, ASX_SIDE_READ, &qs));
	CHECK(qs.enqueued >= (uint64_t)n + 1 && qs.drops == 0);
	asx_kstream_close(ks);
}

/* ---------------------------------------------------------------- pipe */

enum { PIPE_N = 3000 };

static void *pipe_writer(void *arg)
{
	struct asx_kstream *a = arg;

	for (uint32_t i = 1; i <= PIPE_N; i++)
		put_rec(a, i, i % 4 == 0 ? 1 : 0, false);
	return NULL;
}

static void pipe_pair(void)
{
	struct asx_kstream *a, *b;
	uint32_t last[2] = { 0, 0 };
	unsigned int flags, n = 0;
	pthread_t t;
	char drv[ASX_KSTREAM_NAME_MAX];

	CHECK0(asx_kstream_pipe_open(&a, &b, 0));
	CHECK(asx_kstream_list(a, NULL, 0, drv) == 0 && !strcmp(drv, "pipe"));
	CHECK0(asx_kstream_push(b, "count"));
	CHECK0(pthread_create(&t, NULL, pipe_writer, a));
	while (n < PIPE_N) {
		struct rec r = get_rec(b, &flags);

		CHECK(r.band <= 1 && r.seq > last[r.band]);	/* per band, in order */
		last[r.band] = r.seq;
		n++;
	}
	CHECK0(pthread_join(t, NULL));
	CHECK(last[0] == PIPE_N - 1 && last[1] == PIPE_N);
	{
		struct asx_count_stats cs;

		CHECK(asx_kstream_str(b, ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), 0) ==
		      sizeof(cs));
		/* bytes: data only as documented, or with the control parts as
		 * asx.ko counts today (the loop section reports that) */
		CHECK(cs.rmsgs == PIPE_N);
		CHECK(cs.rbytes == data_bytes(1, PIPE_N + 1) ||
		      cs.rbytes == data_bytes(1, PIPE_N + 1) + PIPE_N * sizeof(struct rec));
	}
	/* a closes: b reads end of file, and its writes fail with EPIPE */
	asx_kstream_close(a);
	{
		char c[8], d[8];
		struct asx_kstream_part ctl = { c, sizeof(c), 0 }, data = { d, sizeof(d), 0 };

		flags = ASX_MSG_ANY;
		CHECK(asx_kstream_getmsg(b, &ctl, &data, &flags, NULL) == 0);
		CHECK(ctl.len == -1 && data.len == -1);
		data.len = 1;
		ERRNO(asx_kstream_putmsg(b, NULL, &data, 0, 0), -EPIPE);
	}
	asx_kstream_close(b);
}

/* ---------------------------------------------------------------- mux */

static void mux_put(struct asx_kstream *mux, uint32_t id, uint32_t seq)
{
	struct asx_mux_hdr h = { .id = id };
	struct asx_kstream_part ctl = { &h, sizeof(h), sizeof(h) };
	struct asx_kstream_part data = { &seq, sizeof(seq), sizeof(seq) };

	CHECK0(asx_kstream_putmsg(mux, &ctl, &data, 0, 0));
}

static void mux(void)
{
	enum { N = 400 };
	struct asx_kstream *m, *l[2];
	struct asx_qstats qs;
	struct objects o;
	uint32_t id[2], last[2] = { 0, 0 };
	int i, k, cnt[2] = { 0, 0 };
	long streams;

	read_objects(&o);
	streams = o.streams;
	CHECK0(asx_kstream_open(&m, "mux", 0));
	for (k = 0; k < 2; k++) {
		CHECK0(asx_kstream_open(&l[k], NULL, 0));
		CHECK0(asx_kstream_push(l[k], "count"));
		CHECK0(asx_kstream_link(m, l[k], &id[k]));
	}
	CHECK(id[0] != id[1]);
	ERRNO(asx_kstream_link(m, l[0], NULL), -EBUSY);	/* already linked */
	ERRNO(asx_kstream_link(l[1], l[0], NULL), -EINVAL);	/* not a mux */
	read_objects(&o);
	CHECK(o.streams == streams + 3);
	/* a linked Stream takes no I/O of its own */
	{
		uint32_t x = 0;
		struct asx_kstream_part data = { &x, sizeof(x), sizeof(x) };

		ERRNO(asx_kstream_putmsg(l[1], NULL, &data, 0, 0), -EINVAL);
	}
	/* the mux holds the lower: closing our descriptor of l[1] keeps it */
	asx_kstream_close(l[1]);
	l[1] = NULL;
	read_objects(&o);
	CHECK(o.streams == streams + 3);
	/* round trips: down a lower, turned by its loop, up the mux tagged */
	for (i = 1; i <= N; i++) {
		mux_put(m, id[i % 2], (uint32_t)i);
		if (i % 50 == 0 || i == N) {
			for (;;) {
				struct asx_mux_hdr h;
				uint32_t seq;
				struct asx_kstream_part ctl = { &h, sizeof(h), 0 };
				struct asx_kstream_part data = { &seq, sizeof(seq), 0 };
				unsigned int flags = ASX_MSG_ANY;
				uint32_t msgs;

				CHECK0(asx_kstream_nread(m, &msgs, NULL, NULL));
				if (!msgs && cnt[0] + cnt[1] == i)
					break;
				CHECK(asx_kstream_getmsg(m, &ctl, &data, &flags, NULL) == 0);
				CHECK(ctl.len == sizeof(h) && data.len == sizeof(seq));
				k = h.id == id[0] ? 0 : 1;
				CHECK(h.id == id[k] && id[seq % 2] == h.id);
				CHECK(seq > last[k]);
				last[k] = seq;
				cnt[k]++;
			}
		}
	}
	CHECK(cnt[0] == N / 2 && cnt[1] == N / 2);
	/* an unknown id: dropped and counted in the mux write queue */
	mux_put(m, 0x7fffffff, 1);
	/* (the mux's service procedure may drop it after PUTMSG returned) */
	for (i = 0; i < 500; i++) {
		CHECK0(asx_kstream_qstats(m, ASX_LEVEL_DRIVER, ASX_SIDE_WRITE, &qs));
		if (qs.drops)
			break;
		sleep_ms(10);
	}
	if (qs.drops != 1) {
		fprintf(stderr, "mux: %llu drops for one message to an unknown id\n",
			(unsigned long long)qs.drops);
		exit(1);
	}
	/* unlink: l[0] is usable again, a round trip through its own loop */
	CHECK0(asx_kstream_unlink(m, id[0]));
	ERRNO(asx_kstream_unlink(m, id[0]), -ENXIO);
	{
		struct asx_count_stats cs;

		CHECK(asx_kstream_str(l[0], ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), 0) ==
		      sizeof(cs));
		CHECK(cs.wmsgs == N / 2 && cs.rmsgs == N / 2);
	}
	put_rec(l[0], 5, 0, false);
	{
		unsigned int flags;
		struct rec r = get_rec(l[0], &flags);

		CHECK(r.seq == 5);
	}
	asx_kstream_close(l[0]);
	asx_kstream_close(m);		/* unlinks l[1], which then goes */
}

/* ---------------------------------------------------------------- spanning */

enum { SPAN_N = 5000 };

static void *span_writer(void *arg)
{
	struct asx_stream *s = arg;

	for (uint32_t i = 1; i <= SPAN_N; i++) {
		struct asx_msg *m = asx_msg_alloc(32, i % 10 == 0 ? ASX_MSG_PROTO : ASX_MSG_DATA);

		CHECK(m);
		CHECK0(asx_msg_append(m, &i, sizeof(i)));
		CHECK0(asx_stream_put(s, m, 0, NULL));
	}
	return NULL;
}

static struct asx_msg *span_get(struct asx_stream *s)
{
	struct timespec dl;
	struct asx_msg *m;

	CHECK0(asx_stream_get(s, &m, 0, asx_deadline(&dl, 20000000000ULL)));
	return m;
}

static void span(void)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	struct asx_module *drv, *count;
	struct asx_driver_stats st;
	struct asx_count_stats cs;
	struct asx_kstream *ks, *far;
	struct asx_counter c;
	struct asx_stream *s;
	struct asx_msg *m;
	pthread_t t;
	uint32_t i, seq;

	/* user counter over kernel count over loop */
	CHECK0(asx_kstream_open(&ks, NULL, 0));
	CHECK0(asx_kstream_push(ks, "count"));
	CHECK0(asx_kstream_driver(&drv, "span", ks, 0));	/* we keep ks */
	o.driver = drv;
	CHECK0(asx_stream_open(&s, &o));
	CHECK0(asx_mod_counter(&count, "ucount"));
	CHECK0(asx_stream_push(s, count, 0, NULL));
	CHECK0(pthread_create(&t, NULL, span_writer, s));
	for (i = 1; i <= SPAN_N; i++) {
		m = span_get(s);
		CHECK(m->type == (i % 10 == 0 ? ASX_MSG_PROTO : ASX_MSG_DATA));
		CHECK(asx_msg_length(m) == sizeof(seq));
		memcpy(&seq, m->rd, sizeof(seq));
		if (seq != i) {
			fprintf(stderr, "span: message %u came up as %u\n", i, seq);
			exit(1);
		}
		asx_msg_free_chain(m);
	}
	CHECK0(pthread_join(t, NULL));
	CHECK0(asx_driver_stats(drv, &st));
	CHECK0(asx_mod_counter_read(count, &c));
	CHECK(asx_kstream_str(ks, ASX_STR_COUNT_GET, &cs, 0, sizeof(cs), 0) == sizeof(cs));
	if (st.down_msgs != SPAN_N || st.up_msgs != SPAN_N || st.drops || c.wr_msgs != SPAN_N ||
	    c.rd_msgs != SPAN_N || cs.wmsgs != SPAN_N || cs.rmsgs != SPAN_N) {
		fprintf(stderr, "span: driver down %llu up %llu drops %llu, user %llu/%llu, "
			"kernel %llu/%llu; want %d\n", (unsigned long long)st.down_msgs,
			(unsigned long long)st.up_msgs, (unsigned long long)st.drops,
			(unsigned long long)c.wr_msgs, (unsigned long long)c.rd_msgs,
			(unsigned long long)cs.wmsgs, (unsigned long long)cs.rmsgs, SPAN_N);
		exit(1);
	}
	asx_stream_close(s);
	/* not ASX_DRIVER_OWN: the kernel Stream is still ours, and still works */
	put_rec(ks, 77, 0, false);
	{
		unsigned int flags;

		CHECK(get_rec(ks, &flags).seq == 77);
	}
	asx_kstream_close(ks);

	/* over a kernel pipe end: the far end sees kernel messages, and its
	 * close brings a HANGUP up the user Stream */
	CHECK0(asx_kstream_pipe_open(&ks, &far, 0));
	CHECK0(asx_kstream_driver(&drv, NULL, ks, ASX_DRIVER_OWN));
	o.driver = drv;
	CHECK0(asx_stream_open(&s, &o));
	m = asx_msg_alloc(16, ASX_MSG_PCPROTO);
	CHECK(m);
	CHECK0(asx_msg_append(m, "urgent", 6));
	CHECK0(asx_stream_put(s, m, 0, NULL));
	m = asx_msg_alloc(16, ASX_MSG_DATA);
	CHECK(m);
	CHECK0(asx_msg_append(m, "plain", 5));
	m->band = 3;
	CHECK0(asx_stream_put(s, m, 0, NULL));
	{
		char cb[16], db[16];
		struct asx_kstream_part ctl = { cb, sizeof(cb), 0 }, data = { db, sizeof(db), 0 };
		unsigned int flags = ASX_MSG_ANY, band = 0;

		CHECK(asx_kstream_getmsg(far, &ctl, &data, &flags, &band) == 0);
		CHECK(flags == ASX_MSG_HIPRI && ctl.len == 6 && !memcmp(cb, "urgent", 6) &&
		      data.len == -1);
		flags = ASX_MSG_ANY;
		CHECK(asx_kstream_getmsg(far, &ctl, &data, &flags, &band) == 0);
		CHECK(flags == ASX_MSG_BAND && band == 3 && ctl.len == -1 && data.len == 5 &&
		      !memcmp(db, "plain", 5));
		/* and up: PROTO with a control part */
		ctl.len = 2;
		memcpy(cb, "hd", 2);
		data.len = 4;
		memcpy(db, "body", 4);
		CHECK0(asx_kstream_putmsg(far, &ctl, &data, 0, 1));
	}
	m = span_get(s);
	CHECK(m->type == ASX_MSG_PROTO && m->band == 1 && asx_msg_length(m) == 6);
	CHECK(!memcmp(m->rd, "hd", 2));
	asx_msg_free_chain(m);
	asx_kstream_close(far);
	m = span_get(s);
	if (m->type != ASX_MSG_HANGUP) {
		fprintf(stderr, "span: type %u after the far end closed, want HANGUP\n", m->type);
		exit(1);
	}
	asx_msg_free_chain(m);
	asx_stream_close(s);

	/* over a mux: PROTO messages whose first block is the mux header go
	 * down a linked loop Stream and come back up tagged with its id */
	{
		struct asx_kstream *mx, *lower;
		struct asx_mux_hdr h = { 0 };
		uint32_t id;

		CHECK0(asx_kstream_open(&mx, "mux", 0));
		CHECK0(asx_kstream_open(&lower, NULL, 0));
		CHECK0(asx_kstream_link(mx, lower, &id));
		asx_kstream_close(lower);		/* the mux holds it */
		CHECK0(asx_kstream_driver(&drv, "overmux", mx, ASX_DRIVER_OWN));
		o.driver = drv;
		CHECK0(asx_stream_open(&s, &o));
		h.id = id;
		for (i = 1; i <= 200; i++) {
			struct asx_msg *d = asx_msg_alloc(8, ASX_MSG_DATA);

			m = asx_msg_alloc(sizeof(h), ASX_MSG_PROTO);
			CHECK(m && d);
			CHECK0(asx_msg_append(m, &h, sizeof(h)));
			CHECK0(asx_msg_append(d, &i, sizeof(i)));
			m->cont = d;
			CHECK0(asx_stream_put(s, m, 0, NULL));
		}
		for (i = 1; i <= 200; i++) {
			struct asx_mux_hdr got;

			m = span_get(s);
			CHECK(m->type == ASX_MSG_PROTO && asx_msg_length(m) == sizeof(got) + 4);
			CHECK(asx_msg_read(m, 0, &got, sizeof(got)) == sizeof(got));
			CHECK(asx_msg_read(m, sizeof(got), &seq, sizeof(seq)) == sizeof(seq));
			CHECK(got.id == id && seq == i);
			asx_msg_free_chain(m);
		}
		CHECK0(asx_driver_stats(drv, &st));
		CHECK(st.down_msgs == 200 && st.up_msgs == 200 && st.drops == 0);
		asx_stream_close(s);			/* closes the mux, which unlinks */
	}
}

static const struct {
	const char *name;
	void (*run)(void);
} parts[] = {
	{ "config", config }, { "wrappers", wrappers }, { "loop", loop }, { "water", water },
	{ "pipe", pipe_pair }, { "mux", mux }, { "span", span },
};

int main(void)
{
	struct objects base;

	watchdog(240);
	signal(SIGPIPE, SIG_IGN);
	if (access(ASX_KSTREAM_DEV, F_OK)) {
		printf("kstream: no " ASX_KSTREAM_DEV " (asx.ko not loaded): nothing tested\n");
		return 4;
	}
	/* before this program opens anything */
	read_objects(&base);
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		parts[i].run();
		objects_back_to(&base, parts[i].name);
		printf("ok: %s\n", parts[i].name);
	}
	if (soft_failures) {
		printf("kstream: %d check(s) failed (FAIL lines above)\n", soft_failures);
		return 1;
	}
	printf("kstream: all passed\n");
	return 0;
}
