// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_ipc.c - IPC SAP: addresses, echo over every transport, short
 * writes, scatter/gather, descriptor passing, deadlines.
 *
 * Traffic stays on loopback.  The multicast/broadcast and connector
 * timeout tests are in test_ipc_netns.c (they need root for namespaces).
 * Helper threads never call CMocka asserts; they report through a status
 * the test thread checks after joining them.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/addr.h>
#include <asx/pipe.h>
#include <asx/sock.h>

#define MS 1000000ULL

static struct timespec *in_ms(struct timespec *ts, unsigned ms)
{
	return asx_deadline(ts, ms * MS);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 7 + seed) % 251);
}

/* ------------------------------------------------------------ addresses */

static void check_roundtrip(const char *in, const char *out, int family)
{
	struct asx_addr a, b;
	char buf[ASX_ADDR_STRLEN];
	const char *why = "unset";

	assert_int_equal(asx_addr_parse(&a, in, &why), 0);
	assert_null(why);
	assert_int_equal(asx_addr_family(&a), family);
	assert_true(asx_addr_format(&a, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, out);
	assert_int_equal(asx_addr_parse(&b, buf, NULL), 0);
	assert_true(asx_addr_equal(&a, &b));
}

static void test_addr_parse_print(void **state)
{
	struct asx_addr a;
	char small[8];

	(void)state;
	check_roundtrip("127.0.0.1:80", "127.0.0.1:80", AF_INET);
	check_roundtrip("*:8080", "0.0.0.0:8080", AF_INET);
	check_roundtrip(":0", "0.0.0.0:0", AF_INET);
	check_roundtrip("[::1]:65535", "[::1]:65535", AF_INET6);
	check_roundtrip("[2001:db8::5]:7", "[2001:db8::5]:7", AF_INET6);
	check_roundtrip("[fe80::1%1]:7", "[fe80::1%lo]:7", AF_INET6);
	check_roundtrip("/tmp/asx.sock", "/tmp/asx.sock", AF_UNIX);
	check_roundtrip("./rel.sock", "./rel.sock", AF_UNIX);
	check_roundtrip("@asx-abstract", "@asx-abstract", AF_UNIX);

	assert_int_equal(asx_addr_parse(&a, "10.1.2.3:4567", NULL), 0);
	assert_int_equal(asx_addr_port(&a), 4567);
	assert_int_equal(asx_addr_set_port(&a, 99), 0);
	assert_int_equal(asx_addr_port(&a), 99);
	assert_int_equal(asx_addr_format(&a, small, sizeof(small)), -ENOSPC);
	assert_int_equal(asx_addr_parse(&a, "@x", NULL), 0);
	assert_true(asx_addr_is_abstract(&a));
	assert_int_equal(asx_addr_port(&a), -EAFNOSUPPORT);

	/* an abstract name with unprintable bytes prints escaped */
	assert_int_equal(asx_addr_abstract(&a, "a\0b\n", 4), 0);
	{
		char buf[ASX_ADDR_STRLEN];

		assert_int_equal(asx_addr_format(&a, buf, sizeof(buf)), 11);
		assert_string_equal(buf, "@a\\x00b\\x0a");
	}
}

static void test_addr_bad_input(void **state)
{
	static const struct { const char *s; const char *needle; } bad[] = {
		{ "", "empty" },
		{ "127.0.0.1", "missing ':port'" },
		{ "127.0.0.1:", "missing port" },
		{ "127.0.0.1:http", "decimal" },
		{ "127.0.0.1:65536", "range" },
		{ "127.0.0.1:123456", "range" },
		{ "127.0.0.1:-1", "decimal" },
		{ "127.0.0.1: 80", "decimal" },
		{ "256.0.0.1:80", "IPv4" },
		{ "1.2.3:80", "IPv4" },
		{ "localhost:80", "asx_addr_resolve" },
		{ "::1:80", "brackets" },
		{ "[::1]80", "':port'" },
		{ "[::1:80", "']'" },
		{ "[]:80", "empty IPv6" },
		{ "[::g]:80", "IPv6" },
		{ "[127.0.0.1]:80", "IPv6" },
		{ "[fe80::1%]:80", "scope" },
		{ "[fe80::1%nosuchif0]:80", "interface" },
		{ "@", "abstract" },
	};
	struct asx_addr a;
	char longpath[200];
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		assert_int_equal(asx_addr_parse(&a, bad[i].s, &why), -EINVAL);
		assert_non_null(why);
		if (!strstr(why, bad[i].needle))
			fail_msg("'%s': reason '%s' lacks '%s'", bad[i].s, why, bad[i].needle);
		assert_int_equal(asx_addr_family(&a), AF_UNSPEC);
	}
	assert_int_equal(asx_addr_parse(&a, NULL, NULL), -EINVAL);
	memset(longpath, 'x', sizeof(longpath) - 1);
	longpath[0] = '/';
	longpath[sizeof(longpath) - 1] = '\0';
	why = NULL;
	assert_int_equal(asx_addr_parse(&a, longpath, &why), -ENAMETOOLONG);
	assert_non_null(why);
	longpath[0] = '@';
	assert_int_equal(asx_addr_parse(&a, longpath, NULL), -ENAMETOOLONG);
	assert_int_equal(asx_addr_unix(&a, ""), -EINVAL);
}

static void test_addr_resolve(void **state)
{
	struct asx_addr a;
	const char *why = NULL;
	char buf[ASX_ADDR_STRLEN];

	(void)state;
	assert_int_equal(asx_addr_resolve(&a, "localhost:7", AF_INET, &why), 0);
	assert_int_equal(asx_addr_format(&a, buf, sizeof(buf)), (int)strlen("127.0.0.1:7"));
	assert_string_equal(buf, "127.0.0.1:7");
	assert_int_equal(asx_addr_resolve(&a, "[::1]:9", AF_UNSPEC, &why), 0);
	assert_int_equal(asx_addr_family(&a), AF_INET6);
	assert_int_equal(asx_addr_resolve(&a, "127.0.0.1:9", AF_UNSPEC, NULL), 0);
	assert_int_equal(asx_addr_port(&a), 9);
	assert_int_equal(asx_addr_resolve(&a, "@abs", AF_UNSPEC, NULL), 0);
	assert_true(asx_addr_is_abstract(&a));
	why = NULL;
	assert_int_equal(asx_addr_resolve(&a, "localhost", AF_UNSPEC, &why), -EINVAL);
	assert_non_null(why);
	why = NULL;
	assert_int_equal(asx_addr_resolve(&a, "localhost:1", 12345, &why), -EINVAL);
	assert_non_null(why);
	/* .invalid never resolves (RFC 6761); /etc/hosts answers without the network */
	why = NULL;
	assert_true(asx_addr_resolve(&a, "no-such-host.invalid:1", AF_INET, &why) < 0);
	assert_non_null(why);
}

/* ------------------------------------------------------------ stream echo */

struct echo_srv {
	struct asx_sock_acceptor *acc;
	int conns;			/* connections to serve */
	int status;			/* 0 ok, else a negative errno or line */
	size_t echoed;
};

/* Accept @conns streams one after the other and echo each until EOF. */
static void *echo_thread(void *arg)
{
	struct echo_srv *e = arg;
	struct timespec dl;
	char buf[8192];
	int i;

	for (i = 0; i < e->conns; i++) {
		struct asx_sock_stream s;
		ssize_t n;
		int r;

		r = asx_sock_acceptor_accept(e->acc, &s, NULL, in_ms(&dl, 10000));
		if (r) {
			e->status = r;
			return NULL;
		}
		for (;;) {
			n = asx_sock_stream_recv(&s, buf, sizeof(buf), in_ms(&dl, 10000));
			if (n <= 0)
				break;
			if (asx_sock_stream_send_n(&s, buf, (size_t)n, NULL, NULL) != n) {
				n = -EIO;
				break;
			}
			e->echoed += (size_t)n;
		}
		asx_sock_stream_close(&s);
		if (n < 0) {
			e->status = (int)n;
			return NULL;
		}
	}
	return NULL;
}

/* Send a pattern through @s and read it back, in pieces and as a vector. */
static void echo_roundtrip(struct asx_sock_stream *s, size_t len)
{
	unsigned char *out = malloc(len), *in = calloc(1, len);
	struct timespec dl;
	size_t done = 123;

	assert_non_null(out);
	assert_non_null(in);
	fill(out, len, (unsigned)len);
	assert_int_equal(asx_sock_stream_send_n(s, out, len, in_ms(&dl, 10000), &done),
			 (ssize_t)len);
	assert_int_equal(done, len);
	assert_int_equal(asx_sock_stream_recv_n(s, in, len, in_ms(&dl, 10000), &done),
			 (ssize_t)len);
	assert_int_equal(done, len);
	assert_memory_equal(in, out, len);
	free(in);
	free(out);
}

static void stream_echo(const char *where)
{
	struct asx_sock_acceptor acc;
	struct asx_sock_connector con;
	struct asx_sock_stream s;
	struct asx_addr a, peer, local;
	struct echo_srv e = { .acc = &acc, .conns = 2 };
	struct timespec dl;
	pthread_t t;
	char buf[16];
	ASX_OPTS(struct asx_sock_opts, o, .flags = ASX_SOCK_REUSEADDR | ASX_SOCK_NODELAY);

	assert_int_equal(asx_addr_parse(&a, where, NULL), 0);
	assert_int_equal(asx_sock_acceptor_open(&acc, &a, &o), 0);
	assert_true(asx_handle(&acc) >= 0);
	assert_true(fcntl(asx_handle(&acc), F_GETFD) & FD_CLOEXEC);
	assert_int_equal(asx_sock_local_addr(ASX_SOCK(&acc), &local), 0);
	assert_int_equal(pthread_create(&t, NULL, echo_thread, &e), 0);

	/* blocking connect */
	assert_int_equal(asx_sock_connector_init(&con, &o), 0);
	assert_int_equal(asx_sock_connector_connect(&con, &s, &local, NULL), 0);
	assert_true(fcntl(asx_handle(&s), F_GETFD) & FD_CLOEXEC);
	assert_false(fcntl(asx_handle(&s), F_GETFL) & O_NONBLOCK);
	assert_int_equal(asx_sock_stream_peer_addr(&s, &peer), 0);
	assert_true(asx_addr_equal(&peer, &local));
	echo_roundtrip(&s, 1);
	echo_roundtrip(&s, 100000);
	assert_int_equal(asx_sock_stream_close_writer(&s), 0);
	assert_int_equal(asx_sock_stream_recv(&s, buf, sizeof(buf), in_ms(&dl, 5000)), 0);
	assert_int_equal(asx_sock_stream_close(&s), 0);
	assert_int_equal(asx_handle(&s), -1);
	assert_int_equal(asx_sock_stream_close(&s), 0);	/* twice is harmless */

	/* connect with a deadline: blocking handle afterwards */
	assert_int_equal(asx_sock_connector_connect(&con, &s, &local, in_ms(&dl, 5000)), 0);
	assert_false(fcntl(asx_handle(&s), F_GETFL) & O_NONBLOCK);
	echo_roundtrip(&s, 70000);
	assert_int_equal(asx_sock_stream_close(&s), 0);

	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(e.status, 0);
	assert_int_equal(e.echoed, 1 + 100000 + 70000);
	assert_int_equal(asx_sock_acceptor_close(&acc), 0);
}

static void test_echo_tcp4(void **state) { (void)state; stream_echo("127.0.0.1:0"); }
static void test_echo_tcp6(void **state) { (void)state; stream_echo("[::1]:0"); }

static void test_echo_unix_path(void **state)
{
	char path[64];
	struct stat st;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/asx-test-%d.sock", (int)getpid());
	unlink(path);
	stream_echo(path);
	/* the acceptor removed its path on close */
	assert_int_equal(stat(path, &st), -1);
}

static void test_echo_unix_abstract(void **state)
{
	char name[64];

	(void)state;
	snprintf(name, sizeof(name), "@asx-test-%d", (int)getpid());
	stream_echo(name);
}

/* ------------------------------------------------------------ options */

static void test_options(void **state)
{
	struct asx_sock_acceptor acc;
	struct asx_sock_connector con;
	struct asx_sock_stream s;
	struct asx_addr a;
	struct {
		struct asx_sock_opts o;
		char future[8];
	} big;
	ASX_OPTS(struct asx_sock_opts, o, .sndbuf = 65536, .rcvbuf = 32768);
	ASX_OPTS(struct asx_sock_opts, badflags, .flags = 0x8000);

	(void)state;
	assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
	assert_int_equal(asx_sock_acceptor_open(&acc, &a, &o), 0);
	assert_true(asx_sock_sndbuf(ASX_SOCK(&acc)) >= 65536);
	assert_true(asx_sock_rcvbuf(ASX_SOCK(&acc)) >= 32768);
	assert_int_equal(asx_sock_set_sndbuf(ASX_SOCK(&acc), 16384), 0);
	assert_int_equal(asx_sock_sndbuf(ASX_SOCK(&acc)), 32768);	/* Linux doubles */
	assert_int_equal(asx_sock_set_reuseaddr(ASX_SOCK(&acc), true), 0);
	assert_int_equal(asx_sock_set_sndbuf(ASX_SOCK(&acc), -1), -EINVAL);
	assert_int_equal(asx_sock_local_addr(ASX_SOCK(&acc), &a), 0);
	assert_int_equal(asx_sock_connector_init(&con, NULL), 0);
	assert_int_equal(asx_sock_connector_connect(&con, &s, &a, NULL), 0);
	assert_int_equal(asx_sock_stream_set_nodelay(&s, true), 0);
	asx_sock_stream_close(&s);
	asx_sock_acceptor_close(&acc);

	/* options structs: unknown flags, future fields, bad sizes */
	assert_int_equal(asx_sock_acceptor_open(&acc, &a, &badflags), -EINVAL);
	assert_int_equal(asx_handle(&acc), -1);
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	assert_int_equal(asx_sock_connector_init(&con, &big.o), 0);
	big.future[3] = 1;
	assert_int_equal(asx_sock_connector_init(&con, &big.o), -E2BIG);
	big.o.sz = 1;
	assert_int_equal(asx_sock_connector_init(&con, &big.o), -EINVAL);
	/* older, shorter struct: the missing fields read as zero */
	big.o.sz = offsetof(struct asx_sock_opts, rcvbuf);
	big.o.sndbuf = 8192;
	assert_int_equal(asx_sock_connector_init(&con, &big.o), 0);
	assert_int_equal(asx_sock_connector_connect(&con, &s, NULL, NULL), -EINVAL);

	/* nodelay is TCP only */
	{
		struct asx_lsock_stream x, y;

		assert_int_equal(asx_lsock_stream_pair(&x, &y), 0);
		assert_int_equal(asx_sock_stream_set_nodelay(&x.stream, true), -EOPNOTSUPP);
		asx_lsock_stream_close(&x);
		asx_lsock_stream_close(&y);
	}
}

/* ------------------------------------------------------------ deadlines */

static void test_deadlines(void **state)
{
	struct asx_sock_acceptor acc;
	struct asx_sock_connector con;
	struct asx_sock_stream s, srv;
	struct asx_addr a;
	struct timespec dl;
	uint64_t t0;
	char buf[4];

	(void)state;
	assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
	assert_int_equal(asx_sock_acceptor_open(&acc, &a, NULL), 0);
	assert_int_equal(asx_sock_local_addr(ASX_SOCK(&acc), &a), 0);

	t0 = asx_now_ns();
	assert_int_equal(asx_sock_acceptor_accept(&acc, &srv, NULL, in_ms(&dl, 50)), -ETIMEDOUT);
	assert_true(asx_now_ns() - t0 >= 50 * MS);
	assert_int_equal(asx_handle(&srv), -1);

	assert_int_equal(asx_sock_connector_init(&con, NULL), 0);
	assert_int_equal(asx_sock_connector_connect(&con, &s, &a, in_ms(&dl, 2000)), 0);
	assert_int_equal(asx_sock_acceptor_accept(&acc, &srv, NULL, in_ms(&dl, 2000)), 0);
	t0 = asx_now_ns();
	assert_int_equal(asx_sock_stream_recv(&s, buf, sizeof(buf), in_ms(&dl, 30)), -ETIMEDOUT);
	assert_true(asx_now_ns() - t0 >= 30 * MS);
	assert_int_equal(asx_sock_stream_recv_n(&s, buf, sizeof(buf), asx_deadline(&dl, 0), NULL),
			 -ETIMEDOUT);
	/* partial data then a deadline: done says how far it got */
	{
		size_t done = 99;

		assert_int_equal(asx_sock_stream_send(&srv, "ab", 2, NULL), 2);
		assert_int_equal(asx_sock_stream_recv_n(&s, buf, 4, in_ms(&dl, 50), &done),
				 -ETIMEDOUT);
		assert_int_equal(done, 2);
	}
	/* peer gone: recv_n reports EOF with what it got, send gives EPIPE not SIGPIPE */
	assert_int_equal(asx_sock_stream_send(&srv, "c", 1, NULL), 1);
	asx_sock_stream_close(&srv);
	assert_int_equal(asx_sock_stream_recv_n(&s, buf, 4, in_ms(&dl, 2000), NULL), 1);
	{
		ssize_t r = 0;
		int i;

		for (i = 0; i < 100 && r >= 0; i++)
			r = asx_sock_stream_send(&s, buf, 4, NULL);
		assert_true(r == -EPIPE || r == -ECONNRESET);
	}
	asx_sock_stream_close(&s);

	/* refused: nothing listens on the port any more */
	asx_sock_acceptor_close(&acc);
	assert_int_equal(asx_sock_connector_connect(&con, &s, &a, in_ms(&dl, 2000)),
			 -ECONNREFUSED);
	assert_int_equal(asx_handle(&s), -1);
	assert_int_equal(asx_sock_connector_connect(&con, &s, &a, NULL), -ECONNREFUSED);
}

static void test_connector_split(void **state)
{
	struct asx_sock_acceptor acc;
	struct asx_sock_connector con;
	struct asx_sock_stream s, srv;
	struct asx_addr a;
	struct timespec dl;
	int r;

	(void)state;
	assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
	assert_int_equal(asx_sock_acceptor_open(&acc, &a, NULL), 0);
	assert_int_equal(asx_sock_local_addr(ASX_SOCK(&acc), &a), 0);
	assert_int_equal(asx_sock_connector_init(&con, NULL), 0);
	r = asx_sock_connector_start(&con, &s, &a);
	assert_true(r == 0 || r == -EINPROGRESS);
	if (r == -EINPROGRESS)
		assert_int_equal(asx_sock_connector_complete(&con, &s, in_ms(&dl, 2000)), 0);
	assert_false(fcntl(asx_handle(&s), F_GETFL) & O_NONBLOCK);
	assert_int_equal(asx_sock_acceptor_accept(&acc, &srv, NULL, in_ms(&dl, 2000)), 0);
	assert_int_equal(asx_sock_stream_send_n(&s, "xyz", 3, NULL, NULL), 3);
	{
		char b[3];

		assert_int_equal(asx_sock_stream_recv_n(&srv, b, 3, NULL, NULL), 3);
		assert_memory_equal(b, "xyz", 3);
	}
	asx_sock_stream_close(&s);
	asx_sock_stream_close(&srv);
	asx_sock_acceptor_close(&acc);
}

/* ------------------------------------------------------------ short writes */

struct slow_reader {
	struct asx_sock_stream *s;
	unsigned char *buf;
	size_t len, got;
	int status;
};

/* Read in small pieces with pauses so the sender keeps hitting a full buffer. */
static void *slow_reader_thread(void *arg)
{
	struct slow_reader *r = arg;
	struct timespec nap = { 0, 100000 }, dl;
	ssize_t n;

	while (r->got < r->len) {
		size_t want = r->len - r->got < 3000 ? r->len - r->got : 3000;

		n = asx_sock_stream_recv(r->s, r->buf + r->got, want, in_ms(&dl, 10000));
		if (n <= 0) {
			r->status = n ? (int)n : -EPIPE;
			return NULL;
		}
		r->got += (size_t)n;
		if ((r->got / 3000) % 4 == 0)
			nanosleep(&nap, NULL);
	}
	return NULL;
}

static void short_writes(bool with_deadline)
{
	enum { LEN = 1 << 20 };
	struct asx_sock_acceptor acc;
	struct asx_sock_connector con;
	struct asx_sock_stream s, srv;
	struct asx_addr a;
	struct timespec dl;
	struct slow_reader rd = { .len = LEN };
	unsigned char *out = malloc(LEN);
	pthread_t t;
	size_t done = 0;
	ASX_OPTS(struct asx_sock_opts, small, .sndbuf = 4096, .rcvbuf = 4096);

	assert_non_null(out);
	rd.buf = calloc(1, LEN);
	assert_non_null(rd.buf);
	fill(out, LEN, 3);
	assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
	assert_int_equal(asx_sock_acceptor_open(&acc, &a, &small), 0);
	assert_int_equal(asx_sock_local_addr(ASX_SOCK(&acc), &a), 0);
	assert_int_equal(asx_sock_connector_init(&con, &small), 0);
	assert_int_equal(asx_sock_connector_connect(&con, &s, &a, NULL), 0);
	assert_true(asx_sock_sndbuf(ASX_SOCK(&s)) <= 8192);
	assert_int_equal(asx_sock_acceptor_accept(&acc, &srv, NULL, in_ms(&dl, 2000)), 0);
	rd.s = &srv;
	assert_int_equal(pthread_create(&t, NULL, slow_reader_thread, &rd), 0);
	assert_int_equal(asx_sock_stream_send_n(&s, out, LEN,
						with_deadline ? in_ms(&dl, 20000) : NULL, &done),
			 LEN);
	assert_int_equal(done, LEN);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(rd.status, 0);
	assert_int_equal(rd.got, LEN);
	assert_memory_equal(rd.buf, out, LEN);
	asx_sock_stream_close(&s);
	asx_sock_stream_close(&srv);
	asx_sock_acceptor_close(&acc);
	free(rd.buf);
	free(out);
}

static void test_short_writes_blocking(void **state) { (void)state; short_writes(false); }
static void test_short_writes_deadline(void **state) { (void)state; short_writes(true); }

/* ------------------------------------------------------------ scatter/gather */

static void test_sendv_recvv(void **state)
{
	enum { NV = 70 };		/* more than the library's internal window */
	struct asx_lsock_stream a, b;
	struct iovec out[NV], out_copy[NV], in[NV], in_copy[NV];
	static unsigned char src[NV * 37], dst[NV * 37];
	struct timespec dl;
	size_t total = 0, off = 0, done = 0;
	int i;

	(void)state;
	fill(src, sizeof(src), 11);
	/* uneven pieces, some empty; the receive side is cut differently */
	for (i = 0; i < NV; i++) {
		size_t n = (i % 5 == 0) ? 0 : (size_t)(i % 37) + 1;

		out[i].iov_base = src + off;
		out[i].iov_len = n;
		off += n;
	}
	total = off;
	for (i = 0, off = 0; i < NV; i++) {
		size_t n = total / NV + (i < (int)(total % NV) ? 1 : 0);

		in[i].iov_base = dst + off;
		in[i].iov_len = n;
		off += n;
	}
	assert_int_equal(off, total);
	memcpy(out_copy, out, sizeof(out));
	memcpy(in_copy, in, sizeof(in));

	assert_int_equal(asx_lsock_stream_pair(&a, &b), 0);
	assert_int_equal(asx_sock_stream_sendv_n(&a.stream, out, NV, in_ms(&dl, 5000), &done),
			 (ssize_t)total);
	assert_int_equal(done, total);
	assert_int_equal(asx_sock_stream_recvv_n(&b.stream, in, NV, in_ms(&dl, 5000), &done),
			 (ssize_t)total);
	assert_int_equal(done, total);
	assert_memory_equal(out, out_copy, sizeof(out));
	assert_memory_equal(in, in_copy, sizeof(in));
	assert_memory_equal(dst, src, total);

	/* one-shot forms and a bad count */
	assert_int_equal(asx_sock_stream_sendv(&a.stream, out + 1, 2, NULL),
			 (ssize_t)(out[1].iov_len + out[2].iov_len));
	assert_int_equal(asx_sock_stream_recvv(&b.stream, in, 1, in_ms(&dl, 1000)),
			 (ssize_t)(out[1].iov_len + out[2].iov_len));
	assert_int_equal(asx_sock_stream_sendv_n(&a.stream, out, -1, NULL, &done), -EINVAL);
	assert_int_equal(done, 0);
	asx_lsock_stream_close(&a);
	asx_lsock_stream_close(&b);
}

/* sendv_n while the peer reads slowly through a tiny buffer: many short writes. */
static void test_sendv_short_writes(void **state)
{
	enum { NV = 9, PIECE = 50000 };
	struct asx_lsock_stream a, b;
	struct iovec iov[NV], copy[NV];
	unsigned char *src = malloc(NV * PIECE);
	struct slow_reader rd = { .len = NV * PIECE };
	pthread_t t;
	size_t done;
	int i;

	(void)state;
	assert_non_null(src);
	rd.buf = calloc(1, NV * PIECE);
	assert_non_null(rd.buf);
	fill(src, NV * PIECE, 5);
	for (i = 0; i < NV; i++) {
		iov[i].iov_base = src + (size_t)i * PIECE;
		iov[i].iov_len = PIECE;
	}
	memcpy(copy, iov, sizeof(iov));
	assert_int_equal(asx_lsock_stream_pair(&a, &b), 0);
	assert_int_equal(asx_sock_set_sndbuf(ASX_SOCK(&a), 2048), 0);
	rd.s = &b.stream;
	assert_int_equal(pthread_create(&t, NULL, slow_reader_thread, &rd), 0);
	assert_int_equal(asx_sock_stream_sendv_n(&a.stream, iov, NV, NULL, &done), NV * PIECE);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(rd.status, 0);
	assert_memory_equal(iov, copy, sizeof(iov));
	assert_memory_equal(rd.buf, src, NV * PIECE);
	asx_lsock_stream_close(&a);
	asx_lsock_stream_close(&b);
	free(rd.buf);
	free(src);
}

/* ------------------------------------------------------------ datagrams */

static void dgram_echo(const char *where)
{
	struct asx_sock_dgram x, y;
	struct asx_sock_cdgram c;
	struct asx_addr a, ya, from;
	struct timespec dl;
	char buf[64];
	struct iovec iov[2] = { { "hel", 3 }, { "lo", 2 } };

	assert_int_equal(asx_addr_parse(&a, where, NULL), 0);
	assert_int_equal(asx_sock_dgram_open(&x, &a, NULL), 0);
	assert_int_equal(asx_sock_dgram_open(&y, &a, NULL), 0);
	assert_int_equal(asx_sock_local_addr(ASX_SOCK(&y), &ya), 0);
	assert_true(fcntl(asx_handle(&x), F_GETFD) & FD_CLOEXEC);

	assert_int_equal(asx_sock_dgram_sendv(&x, iov, 2, &ya, NULL), 5);
	assert_int_equal(asx_sock_dgram_recv(&y, buf, sizeof(buf), &from, in_ms(&dl, 2000)), 5);
	assert_memory_equal(buf, "hello", 5);
	/* echo it back to the sender's address */
	assert_int_equal(asx_sock_dgram_send(&y, buf, 5, &from, NULL), 5);
	assert_int_equal(asx_sock_dgram_recv(&x, buf, sizeof(buf), NULL, in_ms(&dl, 2000)), 5);
	/* truncation is reported */
	assert_int_equal(asx_sock_dgram_send(&x, "0123456789", 10, &ya, NULL), 10);
	assert_int_equal(asx_sock_dgram_recv(&y, buf, 4, NULL, in_ms(&dl, 2000)), -EMSGSIZE);
	assert_int_equal(asx_sock_dgram_recv(&y, buf, 4, NULL, in_ms(&dl, 20)), -ETIMEDOUT);

	/* connected datagram towards y */
	assert_int_equal(asx_sock_cdgram_open(&c, &ya, NULL), 0);
	assert_int_equal(asx_sock_cdgram_send(&c, "ping", 4, NULL), 4);
	assert_int_equal(asx_sock_dgram_recv(&y, buf, sizeof(buf), &from, in_ms(&dl, 2000)), 4);
	assert_int_equal(asx_sock_dgram_send(&y, "pong", 4, &from, NULL), 4);
	assert_int_equal(asx_sock_cdgram_recv(&c, buf, sizeof(buf), in_ms(&dl, 2000)), 4);
	assert_memory_equal(buf, "pong", 4);
	/* a stranger's datagram does not reach a connected socket */
	{
		struct asx_addr ca;

		assert_int_equal(asx_sock_local_addr(ASX_SOCK(&c), &ca), 0);
		assert_int_equal(asx_sock_dgram_send(&x, "nope", 4, &ca, NULL), 4);
		assert_int_equal(asx_sock_cdgram_recv(&c, buf, sizeof(buf), in_ms(&dl, 30)),
				 -ETIMEDOUT);
	}
	asx_sock_cdgram_close(&c);
	asx_sock_dgram_close(&x);
	asx_sock_dgram_close(&y);
}

static void test_echo_udp4(void **state) { (void)state; dgram_echo("127.0.0.1:0"); }
static void test_echo_udp6(void **state) { (void)state; dgram_echo("[::1]:0"); }

static void test_cdgram_refused(void **state)
{
	struct asx_sock_dgram x;
	struct asx_sock_cdgram c;
	struct asx_addr a;
	struct timespec dl;
	char buf[8];
	ssize_t r;

	(void)state;
	assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
	assert_int_equal(asx_sock_dgram_open(&x, &a, NULL), 0);
	assert_int_equal(asx_sock_local_addr(ASX_SOCK(&x), &a), 0);
	asx_sock_dgram_close(&x);	/* now nobody has that port */
	assert_int_equal(asx_sock_cdgram_open(&c, &a, NULL), 0);
	assert_int_equal(asx_sock_cdgram_send(&c, "x", 1, NULL), 1);
	r = asx_sock_cdgram_recv(&c, buf, sizeof(buf), in_ms(&dl, 2000));
	assert_int_equal(r, -ECONNREFUSED);
	asx_sock_cdgram_close(&c);
}

static void test_echo_unix_dgram(void **state)
{
	char name[64];
	struct asx_lsock_dgram x, y;
	struct asx_addr ax, ay, from;
	struct timespec dl;
	char buf[16];

	(void)state;
	snprintf(name, sizeof(name), "@asx-dg-x-%d", (int)getpid());
	assert_int_equal(asx_addr_parse(&ax, name, NULL), 0);
	snprintf(name, sizeof(name), "@asx-dg-y-%d", (int)getpid());
	assert_int_equal(asx_addr_parse(&ay, name, NULL), 0);
	assert_int_equal(asx_lsock_dgram_open(&x, &ax, NULL), 0);
	assert_int_equal(asx_lsock_dgram_open(&y, &ay, NULL), 0);
	assert_int_equal(asx_sock_dgram_send(&x.dgram, "abc", 3, &ay, NULL), 3);
	assert_int_equal(asx_sock_dgram_recv(&y.dgram, buf, sizeof(buf), &from,
					     in_ms(&dl, 2000)), 3);
	assert_true(asx_addr_equal(&from, &ax));
	assert_int_equal(asx_sock_dgram_send(&y.dgram, "de", 2, &from, NULL), 2);
	assert_int_equal(asx_sock_dgram_recv(&x.dgram, buf, sizeof(buf), NULL,
					     in_ms(&dl, 2000)), 2);
	assert_memory_equal(buf, "de", 2);
	/* UNIX datagram sockets only for LSOCK */
	{
		struct asx_addr in4;
		struct asx_lsock_dgram z;

		assert_int_equal(asx_addr_parse(&in4, "127.0.0.1:0", NULL), 0);
		assert_int_equal(asx_lsock_dgram_open(&z, &in4, NULL), -EAFNOSUPPORT);
	}
	asx_lsock_dgram_close(&x);
	asx_lsock_dgram_close(&y);
}

/* ------------------------------------------------------------ descriptor passing */

/* Pass the write end of a pipe; writing through the received copy reaches the reader. */
static void pass_pipe_end(struct asx_lsock_stream *tx, struct asx_lsock_stream *rx)
{
	struct asx_pipe_reader r;
	struct asx_pipe_writer w;
	struct timespec dl;
	char buf[16];
	int fd;

	assert_int_equal(asx_pipe_open(&r, &w), 0);
	assert_int_equal(asx_lsock_stream_send_handle(tx, asx_pipe_writer_handle(&w),
						      in_ms(&dl, 2000)), 0);
	asx_pipe_writer_close(&w);	/* only the passed copy remains */
	fd = asx_lsock_stream_recv_handle(rx, in_ms(&dl, 2000));
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fd, "passed", 6), 6);
	close(fd);
	assert_int_equal(asx_pipe_read_n(&r, buf, sizeof(buf), in_ms(&dl, 2000), NULL), 6);
	assert_memory_equal(buf, "passed", 6);	/* then EOF: no other writer left */
	asx_pipe_reader_close(&r);
}

static void test_pass_handle_spipe(void **state)
{
	struct asx_lsock_stream a, b;
	struct timespec dl;

	(void)state;
	assert_int_equal(asx_lsock_stream_pair(&a, &b), 0);
	pass_pipe_end(&a, &b);
	pass_pipe_end(&b, &a);
	/* ordinary data still flows, and a data byte is not a descriptor */
	assert_int_equal(asx_sock_stream_send_n(&a.stream, "z", 1, NULL, NULL), 1);
	assert_int_equal(asx_lsock_stream_recv_handle(&b, in_ms(&dl, 2000)), -EBADMSG);
	assert_int_equal(asx_lsock_stream_send_handle(&a, -1, NULL), -EBADF);
	assert_int_equal(asx_lsock_stream_recv_handle(&b, in_ms(&dl, 20)), -ETIMEDOUT);
	asx_lsock_stream_close(&a);
	assert_int_equal(asx_lsock_stream_recv_handle(&b, in_ms(&dl, 2000)), -ECONNRESET);
	asx_lsock_stream_close(&b);
}

/* Open descriptors of this process (/proc/self/fd), or -1. */
static int open_fds(void)
{
	char path[64];
	int fd, n = 0;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (access(path, F_OK) == 0)
			n++;
	}
	return n;
}

/* Send @n descriptors (all @fd) in one SCM_RIGHTS message with one byte. */
static void send_rights(int sock, int fd, int n)
{
	static union {
		char buf[CMSG_SPACE(sizeof(int) * 253)];
		struct cmsghdr align;
	} ctl;
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n) };
	struct cmsghdr *cm;
	int i;

	memset(&ctl, 0, sizeof(ctl));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
	for (i = 0; i < n; i++)
		memcpy(CMSG_DATA(cm) + (size_t)i * sizeof(int), &fd, sizeof(int));
	assert_int_equal(sendmsg(sock, &mh, MSG_NOSIGNAL), 1);
}

/*
 * Issue 27: a message carrying several descriptors gives the first and
 * closes the others, for any number the kernel passes (SCM_MAX_FD, 253);
 * before, 16 or more were refused with -EBADMSG.  No descriptor may leak
 * either way, and the one returned is the one sent.
 */
static void test_recv_handle_many_rights(void **state)
{
	static const int counts[] = { 1, 2, 8, 9, 15, 16, 64, 253 };
	struct asx_lsock_stream a, b;
	struct stat want, got;
	struct timespec dl;
	int p[2], fd, before, after;
	size_t i;

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(fstat(p[0], &want), 0);
	assert_int_equal(asx_lsock_stream_pair(&a, &b), 0);
	before = open_fds();
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		send_rights(asx_handle(&a), p[0], counts[i]);
		fd = asx_lsock_stream_recv_handle(&b, in_ms(&dl, 2000));
		print_message("%d descriptors in one message: recv_handle %d, %d open (%d before)\n",
			      counts[i], fd, open_fds() - (fd >= 0), before);
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &got), 0);
		assert_int_equal(got.st_ino, want.st_ino);
		assert_int_equal(got.st_dev, want.st_dev);
		assert_int_equal(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
		close(fd);
		after = open_fds();
		assert_int_equal(after, before);
	}
	asx_lsock_stream_close(&a);
	asx_lsock_stream_close(&b);
	close(p[0]);
	close(p[1]);
}

/* As documented: on a non-blocking socket without a deadline, _n does not wait. */
static void test_n_nonblocking_no_deadline(void **state)
{
	struct asx_lsock_stream a, b;
	struct timespec dl;
	char buf[16];
	size_t done = 99;

	(void)state;
	assert_int_equal(asx_lsock_stream_pair(&a, &b), 0);
	assert_int_equal(fcntl(asx_handle(&b), F_SETFL, fcntl(asx_handle(&b), F_GETFL) | O_NONBLOCK),
			 0);
	assert_int_equal(asx_sock_stream_send_n(&a.stream, "abc", 3, NULL, NULL), 3);
	assert_int_equal(asx_sock_stream_recv_n(&b.stream, buf, 10, NULL, &done), -EAGAIN);
	assert_int_equal(done, 3);
	assert_memory_equal(buf, "abc", 3);
	/* with a deadline it waits for the rest */
	assert_int_equal(asx_sock_stream_send_n(&a.stream, "defghij", 7, NULL, NULL), 7);
	assert_int_equal(asx_sock_stream_recv_n(&b.stream, buf, 7, in_ms(&dl, 2000), &done), 7);
	assert_int_equal(asx_sock_stream_recv_n(&b.stream, buf, 1, in_ms(&dl, 20), &done),
			 -ETIMEDOUT);
	assert_int_equal(done, 0);
	asx_lsock_stream_close(&a);
	asx_lsock_stream_close(&b);
}

static void test_pass_handle_lsock_acceptor(void **state)
{
	struct asx_lsock_acceptor acc;
	struct asx_lsock_connector con;
	struct asx_lsock_stream c, s;
	struct asx_addr a;
	struct timespec dl;
	char name[64];

	(void)state;
	snprintf(name, sizeof(name), "@asx-lsock-%d", (int)getpid());
	assert_int_equal(asx_addr_parse(&a, name, NULL), 0);
	assert_int_equal(asx_lsock_acceptor_open(&acc, &a, NULL), 0);
	assert_int_equal(asx_lsock_connector_init(&con, NULL), 0);
	assert_int_equal(asx_lsock_connector_connect(&con, &c, &a, in_ms(&dl, 2000)), 0);
	assert_int_equal(asx_lsock_acceptor_accept(&acc, &s, NULL, in_ms(&dl, 2000)), 0);
	pass_pipe_end(&c, &s);
	/* echo over the lsock stream with the inherited stream calls */
	assert_int_equal(asx_sock_stream_send_n(&s.stream, "echo", 4, NULL, NULL), 4);
	{
		char b[4];

		assert_int_equal(asx_sock_stream_recv_n(&c.stream, b, 4, NULL, NULL), 4);
		assert_memory_equal(b, "echo", 4);
	}
	asx_lsock_stream_close(&c);
	asx_lsock_stream_close(&s);
	asx_lsock_acceptor_close(&acc);
	/* LSOCK refuses INET addresses */
	assert_int_equal(asx_addr_parse(&a, "127.0.0.1:0", NULL), 0);
	assert_int_equal(asx_lsock_acceptor_open(&acc, &a, NULL), -EAFNOSUPPORT);
	assert_int_equal(asx_lsock_connector_connect(&con, &c, &a, NULL), -EAFNOSUPPORT);
}

static void test_pass_handle_dgram(void **state)
{
	struct asx_lsock_dgram a, b;
	struct asx_lsock_stream p, q;
	struct timespec dl;
	char buf[8];
	int fd;

	(void)state;
	assert_int_equal(asx_lsock_dgram_pair(&a, &b), 0);
	/* pass one end of a socket pair; the received copy talks to the other end */
	assert_int_equal(asx_lsock_stream_pair(&p, &q), 0);
	assert_int_equal(asx_lsock_dgram_send_handle(&a, asx_handle(&p), NULL, NULL), 0);
	asx_lsock_stream_close(&p);
	fd = asx_lsock_dgram_recv_handle(&b, NULL, in_ms(&dl, 2000));
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fd, "hi", 2), 2);
	assert_int_equal(asx_sock_stream_recv_n(&q.stream, buf, 2, in_ms(&dl, 2000), NULL), 2);
	assert_memory_equal(buf, "hi", 2);
	close(fd);
	asx_lsock_stream_close(&q);
	asx_lsock_dgram_close(&a);
	asx_lsock_dgram_close(&b);
}

/* ------------------------------------------------------------ pipes and FIFOs */

struct fifo_writer {
	const char *path;
	int status;
};

static void *fifo_writer_thread(void *arg)
{
	struct fifo_writer *f = arg;
	struct asx_pipe_writer w;
	struct timespec dl;
	int r;

	r = asx_fifo_open_writer(&w, f->path, in_ms(&dl, 5000));
	if (r) {
		f->status = r;
		return NULL;
	}
	if (asx_pipe_write_n(&w, "through the fifo", 16, NULL, NULL) != 16)
		f->status = -EIO;
	asx_pipe_writer_close(&w);
	return NULL;
}

static void test_pipe_fifo(void **state)
{
	struct asx_pipe_reader r;
	struct asx_pipe_writer w;
	struct fifo_writer fw;
	struct timespec dl;
	pthread_t t;
	char path[64], buf[32];

	(void)state;
	/* pipe: typed ends, EOF, EPIPE without SIGPIPE, timeouts */
	assert_int_equal(asx_pipe_open(&r, &w), 0);
	assert_true(fcntl(asx_pipe_reader_handle(&r), F_GETFD) & FD_CLOEXEC);
	assert_int_equal(asx_pipe_read(&r, buf, sizeof(buf), in_ms(&dl, 20)), -ETIMEDOUT);
	assert_int_equal(asx_pipe_write_n(&w, "abc", 3, NULL, NULL), 3);
	assert_int_equal(asx_pipe_read(&r, buf, sizeof(buf), NULL), 3);
	asx_pipe_reader_close(&r);
	assert_int_equal(asx_pipe_write(&w, "x", 1, NULL), -EPIPE);
	asx_pipe_writer_close(&w);

	/* FIFO */
	snprintf(path, sizeof(path), "/tmp/asx-fifo-%d", (int)getpid());
	unlink(path);
	assert_int_equal(asx_fifo_make(path, 0600), 0);
	assert_int_equal(asx_fifo_make(path, 0600), 0);	/* already a FIFO: fine */
	assert_int_equal(asx_fifo_open_writer(&w, path, in_ms(&dl, 30)), -ETIMEDOUT);
	assert_int_equal(asx_fifo_open_reader(&r, path), 0);
	fw.path = path;
	fw.status = 0;
	assert_int_equal(pthread_create(&t, NULL, fifo_writer_thread, &fw), 0);
	assert_int_equal(asx_pipe_read_n(&r, buf, 16, in_ms(&dl, 5000), NULL), 16);
	assert_memory_equal(buf, "through the fifo", 16);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(fw.status, 0);
	asx_pipe_reader_close(&r);
	unlink(path);
	/* a regular file is not a FIFO */
	{
		int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);

		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(asx_fifo_make(path, 0600), -EEXIST);
		unlink(path);
	}
}

/* ------------------------------------------------------------ raw handle */

static void test_handle_escape_hatch(void **state)
{
	struct asx_lsock_stream a, b;
	struct asx_sock_stream adopted;
	char buf[4];

	(void)state;
	assert_int_equal(asx_lsock_stream_pair(&a, &b), 0);
	/* get_handle: use a system call the wrappers do not offer */
	assert_int_equal(send(asx_handle(&a), "raw", 3, 0), 3);
	/* set_handle: adopt a descriptor opened elsewhere */
	asx_sock_set_handle(ASX_SOCK(&adopted), dup(asx_handle(&b)));
	assert_int_equal(asx_sock_stream_recv_n(&adopted, buf, 3, NULL, NULL), 3);
	assert_memory_equal(buf, "raw", 3);
	asx_sock_stream_close(&adopted);
	asx_lsock_stream_close(&a);
	asx_lsock_stream_close(&b);
}

/*
 * A deadline bounds a pipe write larger than the pipe can hold: write_n
 * returns -ETIMEDOUT around the deadline, having moved what fitted, and
 * does not wait for the (late) reader.
 */
struct late_reader {
	struct asx_pipe_reader *r;
};

static void *drain_late(void *arg)
{
	struct late_reader *lr = arg;
	char buf[65536];

	usleep(3000 * 1000);
	while (asx_pipe_read(lr->r, buf, sizeof(buf), NULL) > 0)
		;
	return NULL;
}

static void test_pipe_write_deadline_large(void **state)
{
	struct asx_pipe_reader r;
	struct asx_pipe_writer w;
	struct late_reader lr = { &r };
	size_t len = 1 << 20, done = 0;
	struct timespec dl;
	uint64_t t0, ms;
	pthread_t t;
	char *big;

	(void)state;
	big = calloc(1, len);
	assert_non_null(big);
	assert_int_equal(asx_pipe_open(&r, &w), 0);
	assert_int_equal(pthread_create(&t, NULL, drain_late, &lr), 0);
	t0 = asx_now_ns();
	assert_int_equal(asx_pipe_write_n(&w, big, len, asx_deadline(&dl, 200 * 1000000ull),
					  &done), -ETIMEDOUT);
	ms = (asx_now_ns() - t0) / 1000000;
	assert_true(ms >= 190);
	assert_true(ms < 2000);		/* the reader only starts after 3 s */
	assert_true(done > 0 && done < len);
	asx_pipe_writer_close(&w);
	assert_int_equal(pthread_join(t, NULL), 0);
	asx_pipe_reader_close(&r);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_write_deadline_large),
		cmocka_unit_test(test_addr_parse_print),
		cmocka_unit_test(test_addr_bad_input),
		cmocka_unit_test(test_addr_resolve),
		cmocka_unit_test(test_echo_tcp4),
		cmocka_unit_test(test_echo_tcp6),
		cmocka_unit_test(test_echo_unix_path),
		cmocka_unit_test(test_echo_unix_abstract),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_deadlines),
		cmocka_unit_test(test_connector_split),
		cmocka_unit_test(test_short_writes_blocking),
		cmocka_unit_test(test_short_writes_deadline),
		cmocka_unit_test(test_sendv_recvv),
		cmocka_unit_test(test_sendv_short_writes),
		cmocka_unit_test(test_echo_udp4),
		cmocka_unit_test(test_echo_udp6),
		cmocka_unit_test(test_cdgram_refused),
		cmocka_unit_test(test_echo_unix_dgram),
		cmocka_unit_test(test_pass_handle_spipe),
		cmocka_unit_test(test_recv_handle_many_rights),
		cmocka_unit_test(test_n_nonblocking_no_deadline),
		cmocka_unit_test(test_pass_handle_lsock_acceptor),
		cmocka_unit_test(test_pass_handle_dgram),
		cmocka_unit_test(test_pipe_fifo),
		cmocka_unit_test(test_handle_escape_hatch),
	};

	return cmocka_run_group_tests_name("ipc", tests, NULL, NULL);
}
