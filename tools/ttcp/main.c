// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asx-ttcp - test TCP/UDP throughput, classic ttcp style, with a choice
 * of plain sockets (--impl=raw) or libasx IPC SAP wrappers (--impl=asx).
 *
 * The options, the data loops, the timing (CLOCK_MONOTONIC wall time and
 * getrusage CPU time, taken around the data transfer only) and the
 * output are this file's; the back end only sets up connections and
 * moves buffers.  Reports go to stderr like the original's; --json adds
 * one JSON object on stdout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "ttcp.h"

static const char usage_text[] =
"usage: asx-ttcp -t [options] host\n"
"       asx-ttcp -r [options]\n"
"\n"
"  -t          transmit to host\n"
"  -r          receive\n"
"  -u          use UDP instead of TCP\n"
"  -l LEN      length of the buffers read or written (default 8192)\n"
"  -n NUM      number of buffers to transmit (default 2048)\n"
"  -b SIZE     socket buffer size, SO_SNDBUF and SO_RCVBUF (default: system)\n"
"  -p PORT     port number (default 5001)\n"
"  -D          TCP_NODELAY: do not buffer TCP writes\n"
"  -f UNIT     rate unit: k,m,g kilo/mega/gigabit, K,M,G kilo/mega/gigabyte (default K)\n"
"  -s          source/sink a pattern (always on; accepted for compatibility)\n"
"  -6          receiver listens on IPv6 [::] instead of 0.0.0.0\n"
"  -v          verbose: also print the I/O call and CPU lines\n"
"  --impl=raw|asx   plain socket calls (default) or the libasx IPC SAP wrappers\n"
"  --json      also print one JSON object with the figures on stdout\n"
"  --timeout=MS     receiver: wait at most MS for a transmitter (default 30000)\n"
"  -h, --help  this text\n"
"\n"
"Start the receiver first; the transmitter retries a refused connection for 3 s.\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(int which)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	if (which == 0)
		return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Classic ttcp units: lower case bits, upper case bytes, powers of 1024. */
static const char *unit_name(char f)
{
	switch (f) {
	case 'k': return "Kbit";
	case 'm': return "Mbit";
	case 'g': return "Gbit";
	case 'K': return "KB";
	case 'M': return "MB";
	default: return "GB";
	}
}

static double in_unit(double bytes, char f)
{
	switch (f) {
	case 'k': return bytes * 8 / 1024;
	case 'm': return bytes * 8 / 1024 / 1024;
	case 'g': return bytes * 8 / 1024 / 1024 / 1024;
	case 'K': return bytes / 1024;
	case 'M': return bytes / 1024 / 1024;
	default: return bytes / 1024 / 1024 / 1024;
	}
}

static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

static void pattern(unsigned char *buf, size_t len)
{
	unsigned char c = 0;

	/* printable bytes, like the original's */
	for (size_t i = 0; i < len; i++) {
		while (c < 040 || c > 0176)
			c++;
		buf[i] = c++;
		if (c > 0176)
			c = 0;
	}
}

static int tcp_connect_retry(const struct ttcp_ops *ops, const struct ttcp_conf *c,
			     struct ttcp_conn *conn)
{
	struct timespec nap = { 0, 20000000 };
	int r, i;

	for (i = 0; i < 150; i++) {
		r = ops->tcp_connect(c, conn);
		if (r != -ECONNREFUSED)
			break;
		ops->close(conn);
		nanosleep(&nap, NULL);
	}
	if (r)
		fprintf(stderr, "asx-ttcp: connect: %s\n", strerror(-r));
	return r;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "impl", required_argument, NULL, 'I' },
		{ "json", no_argument, NULL, 'J' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ttcp_conf c = {
		.port = 5001, .buflen = 8192, .nbuf = 2048, .accept_timeout_ms = 30000,
	};
	const struct ttcp_ops *ops = &ttcp_raw_ops;
	struct ttcp_conn conn = { .fd = -1 };
	bool role_set = false, json = false, verbose = false;
	char fmt = 'K', tag;
	unsigned char *buf;
	double t0, t1, u0, s0, u1, s1, secs;
	uint64_t bytes = 0, calls = 0;
	long v;
	int opt, r = 0;

	while ((opt = getopt_long(argc, argv, "trul:n:b:p:Df:s6vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 't':
		case 'r':
			if (role_set && c.transmit != (opt == 't')) {
				fprintf(stderr, "asx-ttcp: -t and -r exclude each other\n");
				return 2;
			}
			c.transmit = opt == 't';
			role_set = true;
			break;
		case 'u':
			c.udp = true;
			break;
		case 'l':
			if (!parse_long(optarg, 1, 64L << 20, &v)) {
				fprintf(stderr, "asx-ttcp: -l %s: want 1..67108864\n", optarg);
				return 2;
			}
			c.buflen = (size_t)v;
			break;
		case 'n':
			if (!parse_long(optarg, 1, 1L << 40, &v)) {
				fprintf(stderr, "asx-ttcp: -n %s: want a positive count\n", optarg);
				return 2;
			}
			c.nbuf = v;
			break;
		case 'b':
			if (!parse_long(optarg, 1, 1L << 30, &v)) {
				fprintf(stderr, "asx-ttcp: -b %s: want 1..1073741824\n", optarg);
				return 2;
			}
			c.sockbuf = (int)v;
			break;
		case 'p':
			if (!parse_long(optarg, 1, 65535, &v)) {
				fprintf(stderr, "asx-ttcp: -p %s: want 1..65535\n", optarg);
				return 2;
			}
			c.port = (int)v;
			break;
		case 'D':
			c.nodelay = true;
			break;
		case 'f':
			if (strlen(optarg) != 1 || !strchr("kmgKMG", optarg[0])) {
				fprintf(stderr, "asx-ttcp: -f %s: want one of k m g K M G\n", optarg);
				return 2;
			}
			fmt = optarg[0];
			break;
		case 's':
			break;
		case '6':
			c.ipv6 = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'I':
			if (!strcmp(optarg, "raw")) {
				ops = &ttcp_raw_ops;
			} else if (!strcmp(optarg, "asx")) {
				ops = &ttcp_asx_ops;
			} else {
				fprintf(stderr, "asx-ttcp: --impl=%s: want raw or asx\n", optarg);
				return 2;
			}
			break;
		case 'J':
			json = true;
			break;
		case 'T':
			if (!parse_long(optarg, 1, 3600000, &v)) {
				fprintf(stderr, "asx-ttcp: --timeout=%s: want 1..3600000 ms\n", optarg);
				return 2;
			}
			c.accept_timeout_ms = (int)v;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs(usage_text, stderr);
			return 2;
		}
	}
	if (!role_set) {
		fprintf(stderr, "asx-ttcp: one of -t or -r is required\n");
		fputs(usage_text, stderr);
		return 2;
	}
	if (c.transmit) {
		if (optind != argc - 1) {
			fprintf(stderr, "asx-ttcp: -t needs exactly one host argument\n");
			return 2;
		}
		c.host = argv[optind];
	} else if (optind != argc) {
		fprintf(stderr, "asx-ttcp: -r takes no host argument\n");
		return 2;
	}
	if (c.udp && c.buflen <= 4) {
		fprintf(stderr, "asx-ttcp: -u needs -l greater than 4\n");
		return 2;
	}
	tag = c.transmit ? 't' : 'r';
	buf = malloc(c.buflen);
	if (!buf) {
		fprintf(stderr, "asx-ttcp: out of memory for a %zu byte buffer\n", c.buflen);
		return 1;
	}
	pattern(buf, c.buflen);
	fprintf(stderr, "ttcp-%c: buflen=%zu, nbuf=%ld, port=%d  %s", tag, c.buflen, c.nbuf,
		c.port, c.udp ? "udp" : "tcp");
	if (c.transmit)
		fprintf(stderr, "  -> %s", c.host);
	fprintf(stderr, "  impl=%s\n", ops->name);

	if (c.udp)
		r = ops->udp_open(&c, &conn);
	else if (c.transmit)
		r = tcp_connect_retry(ops, &c, &conn);
	else
		r = ops->tcp_accept(&c, &conn);
	if (r)
		goto out;

	u0 = cpu_s(0);
	s0 = cpu_s(1);
	t0 = now_s();
	if (c.transmit) {
		struct timespec gap = { 0, 2000000 };
		ssize_t n;
		long i;

		if (c.udp) {
			nanosleep(&gap, NULL);		/* let the receiver settle */
			ops->send(&conn, buf, 4);	/* start sentinel */
			t0 = now_s();
		}
		for (i = 0; i < c.nbuf; i++) {
			n = ops->send(&conn, buf, c.buflen);
			if (n == -ENOBUFS) {		/* UDP: back off, resend */
				nanosleep(&gap, NULL);
				i--;
				continue;
			}
			if (n != (ssize_t)c.buflen) {
				fprintf(stderr, "asx-ttcp: send: %s\n",
					n < 0 ? strerror((int)-n) : "short write");
				r = n < 0 ? (int)n : -EIO;
				break;
			}
			bytes += (uint64_t)n;
			calls++;
		}
		t1 = now_s();
		if (c.udp) {
			for (i = 0; i < 4; i++) {	/* end sentinels */
				nanosleep(&gap, NULL);
				ops->send(&conn, buf, 4);
			}
		}
	} else {
		bool started = !c.udp;
		ssize_t n;

		for (;;) {
			n = ops->recv(&conn, buf, c.buflen);
			if (n < 0) {
				if (!(c.udp && started && n == -ETIMEDOUT)) {
					fprintf(stderr, "asx-ttcp: recv: %s\n", strerror((int)-n));
					r = (int)n;
				}
				break;
			}
			if (c.udp && n <= 4) {
				if (started)
					break;
				started = true;
				t0 = now_s();
				u0 = cpu_s(0);
				s0 = cpu_s(1);
				continue;
			}
			if (n == 0)
				break;
			bytes += (uint64_t)n;
			calls++;
		}
		t1 = now_s();
	}
	u1 = cpu_s(0);
	s1 = cpu_s(1);
	ops->close(&conn);
	if (r)
		goto out;

	secs = t1 - t0;
	if (secs <= 0)
		secs = 1e-9;
	fprintf(stderr, "ttcp-%c: %llu bytes in %.6f real seconds = %.2f %s/sec +++\n", tag,
		(unsigned long long)bytes, secs, in_unit((double)bytes / secs, fmt),
		unit_name(fmt));
	if (conn.truncated)
		fprintf(stderr, "ttcp-%c: %llu datagrams longer than -l %zu, truncated to it\n", tag,
			(unsigned long long)conn.truncated, c.buflen);
	if (verbose) {
		fprintf(stderr, "ttcp-%c: %llu I/O calls, msec/call = %.4f, calls/sec = %.2f\n", tag,
			(unsigned long long)calls, calls ? secs * 1e3 / (double)calls : 0.0,
			(double)calls / secs);
		fprintf(stderr, "ttcp-%c: %.3fuser %.3fsys %.3freal %.0f%%\n", tag, u1 - u0,
			s1 - s0, secs, 100.0 * ((u1 - u0) + (s1 - s0)) / secs);
	}
	if (json)
		printf("{\"tool\": \"asx-ttcp\", \"role\": \"%s\", \"impl\": \"%s\", "
		       "\"proto\": \"%s\", \"buflen\": %zu, \"nbuf\": %ld, \"sockbuf\": %d, "
		       "\"nodelay\": %s, \"bytes\": %llu, \"calls\": %llu, \"seconds\": %.6f, "
		       "\"bytes_per_sec\": %.1f, \"mbit_per_sec\": %.3f, \"user_s\": %.3f, "
		       "\"sys_s\": %.3f, \"truncated\": %llu}\n",
		       c.transmit ? "transmit" : "receive", ops->name, c.udp ? "udp" : "tcp",
		       c.buflen, c.nbuf, c.sockbuf, c.nodelay ? "true" : "false",
		       (unsigned long long)bytes, (unsigned long long)calls, secs,
		       (double)bytes / secs, (double)bytes * 8 / secs / 1e6, u1 - u0, s1 - s0,
		       (unsigned long long)conn.truncated);
out:
	free(buf);
	return r ? 1 : 0;
}
