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
	struct ttcp_xfer x = { 0 };
	double secs;
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
	ttcp_pattern(buf, c.buflen);
	fprintf(stderr, "ttcp-%c: buflen=%zu, nbuf=%ld, port=%d  %s", tag, c.buflen, c.nbuf,
		c.port, c.udp ? "udp" : "tcp");
	if (c.transmit)
		fprintf(stderr, "  -> %s", c.host);
	fprintf(stderr, "  impl=%s\n", ops->name);

	if (c.udp)
		r = ops->udp_open(&c, &conn);
	else if (c.transmit)
		r = ttcp_connect_retry(ops, &c, &conn);
	else
		r = ops->tcp_accept(&c, &conn);
	if (r)
		goto out;

	x.buflen = c.buflen;
	x.nbuf = c.nbuf;
	x.udp = c.udp;
	if (c.transmit)
		r = ttcp_transmit(ops, &conn, buf, &x);
	else
		r = ttcp_receive(ops, &conn, buf, &x);
	ops->close(&conn);
	if (r)
		goto out;

	secs = ttcp_seconds(&x);
	fprintf(stderr, "ttcp-%c: %llu bytes in %.6f real seconds = %.2f %s/sec +++\n", tag,
		(unsigned long long)x.bytes, secs, in_unit((double)x.bytes / secs, fmt),
		unit_name(fmt));
	if (conn.truncated)
		fprintf(stderr, "ttcp-%c: %llu datagrams longer than -l %zu, truncated to it\n", tag,
			(unsigned long long)conn.truncated, c.buflen);
	if (verbose) {
		fprintf(stderr, "ttcp-%c: %llu I/O calls, msec/call = %.4f, calls/sec = %.2f\n", tag,
			(unsigned long long)x.calls, x.calls ? secs * 1e3 / (double)x.calls : 0.0,
			(double)x.calls / secs);
		fprintf(stderr, "ttcp-%c: %.3fuser %.3fsys %.3freal %.0f%%\n", tag, x.user_s,
			x.sys_s, secs, 100.0 * (x.user_s + x.sys_s) / secs);
	}
	if (json)
		printf("{\"tool\": \"asx-ttcp\", \"role\": \"%s\", \"impl\": \"%s\", "
		       "\"proto\": \"%s\", \"buflen\": %zu, \"nbuf\": %ld, \"sockbuf\": %d, "
		       "\"nodelay\": %s, \"bytes\": %llu, \"calls\": %llu, \"seconds\": %.6f, "
		       "\"bytes_per_sec\": %.1f, \"mbit_per_sec\": %.3f, \"user_s\": %.3f, "
		       "\"sys_s\": %.3f, \"truncated\": %llu}\n",
		       c.transmit ? "transmit" : "receive", ops->name, c.udp ? "udp" : "tcp",
		       c.buflen, c.nbuf, c.sockbuf, c.nodelay ? "true" : "false",
		       (unsigned long long)x.bytes, (unsigned long long)x.calls, secs,
		       (double)x.bytes / secs, (double)x.bytes * 8 / secs / 1e6, x.user_s, x.sys_s,
		       (unsigned long long)conn.truncated);
out:
	free(buf);
	return r ? 1 : 0;
}
