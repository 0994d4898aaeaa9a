// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * bench_ttcp.c - `asx-bench ttcp`: 002's experiment.  Unidirectional bulk
 * TCP transfer, ttcp style, with plain C socket calls (api c) against the
 * libasx IPC SAP wrappers (api asx), for buffer sizes 1 B to 128 KB and
 * socket queues (SO_SNDBUF/SO_RCVBUF) of 8 and 64 KB, over loopback and
 * over a veth pair between two network namespaces.
 *
 * The bytes move through asx-ttcp's own code (tools/ttcp: the two back
 * ends and xfer.c's loops), so the bench and the tool measure one path.
 * Each transfer runs a receiver and a transmitter thread; for the netns
 * panel each thread first enters its namespace (setns), which the command
 * makes with ip(8) and removes on exit.  Without root the panel is not
 * measured and one line says why.  The figure is the receiver's rate
 * (Mbit/s, 10^6 bits), medians of --runs; the two apis alternate within
 * a run so a change of load hits both.  Records: bench "ttcp", api, net,
 * sockbuf (asked) with sndbuf_got/rcvbuf_got (what getsockopt said, which
 * Linux doubles), size (the buffer), metric mbps; per point the derived
 * ratio wrapper_over_c (asx over c), and its medians per net and overall.
 *
 * --quick checks every byte: the transmitter stamps each byte with a hash
 * of its stream offset and the receiver checks them in order, the byte
 * count and an FNV-1a sum of both ends; any difference, or a short
 * transfer, fails the command.  A watchdog (SIGALRM) fails a transfer
 * that hangs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netinet/in.h>

#include "bench.h"
#include "../ttcp/ttcp.h"

extern char **environ;

static const size_t all_sizes[] = {
	1, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072,
};
static const size_t quick_sizes[] = { 1, 4096, 131072 };
static const unsigned int sockbufs[] = { 8192, 65536 };
#define NSIZES (sizeof(all_sizes) / sizeof(all_sizes[0]))
#define NSB 2
enum { NET_LO, NET_NS, NNET };
enum { API_C, API_ASX, NAPI };
static const char *const net_name[NNET] = { "loopback", "netns" };
static const char *const net_key[NNET] = { "lo", "netns" };
static const char *const api_name[NAPI] = { "c", "asx" };

#define DEFAULT_BYTES	(4u << 20)	/* per point; --full: 64 MB */
#define DEFAULT_MAXBUF	32768		/* buffers per point at most, but --full */
#define QUICK_BYTES	(256u << 10)
#define QUICK_MAXBUF	4096
#define NS_RX_ADDR	"10.233.0.2"

/* ------------------------------------------------------------- namespaces */

static char ip_path[64];
static char ns_name[2][32];	/* transmitter's, receiver's; "" until made */
static int ns_fd[2] = { -1, -1 };

static int run_ip(char *const argv[])
{
	pid_t pid;
	int st;

	if (posix_spawn(&pid, ip_path, NULL, NULL, argv, environ))
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* Async-signal-safe (fork, execve, waitpid): also run by the watchdog. */
static void ns_remove(void)
{
	for (int i = 0; i < 2; i++) {
		char *argv[] = { "ip", "netns", "del", ns_name[i], NULL };
		pid_t pid;

		if (ns_fd[i] >= 0)
			close(ns_fd[i]);
		ns_fd[i] = -1;
		if (!ns_name[i][0])
			continue;
		pid = fork();
		if (pid == 0) {
			execve(ip_path, argv, environ);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		ns_name[i][0] = '\0';
	}
}

/*
 * Two namespaces joined by a veth pair, the receiver's end NS_RX_ADDR.
 * 0, or -1 with @why saying why not (nothing is left behind).
 */
static int ns_make(const char **why)
{
	static const char *const ips[] = { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" };
	char va[16], vb[16], path[96];
	unsigned int pid = (unsigned int)getpid();
	size_t i;

	if (geteuid()) {
		*why = "needs root (network namespaces and a veth pair)";
		return -1;
	}
	for (i = 0; i < sizeof(ips) / sizeof(ips[0]) && !ip_path[0]; i++)
		if (!access(ips[i], X_OK))
			snprintf(ip_path, sizeof(ip_path), "%s", ips[i]);
	if (!ip_path[0]) {
		*why = "ip(8) of iproute2 is not installed";
		return -1;
	}
	snprintf(ns_name[0], sizeof(ns_name[0]), "asxbtA%u", pid);
	snprintf(ns_name[1], sizeof(ns_name[1]), "asxbtB%u", pid);
	snprintf(va, sizeof(va), "vA%u", pid % 1000000000u);
	snprintf(vb, sizeof(vb), "vB%u", pid % 1000000000u);
	{
		char *cmds[][12] = {
			{ "ip", "netns", "add", ns_name[0], NULL },
			{ "ip", "netns", "add", ns_name[1], NULL },
			{ "ip", "-n", ns_name[0], "link", "add", va, "type", "veth", "peer",
			  "name", vb, NULL },
			{ "ip", "-n", ns_name[0], "link", "set", vb, "netns", ns_name[1], NULL },
			{ "ip", "-n", ns_name[0], "addr", "add", "10.233.0.1/24", "dev", va, NULL },
			{ "ip", "-n", ns_name[1], "addr", "add", NS_RX_ADDR "/24", "dev", vb, NULL },
			{ "ip", "-n", ns_name[0], "link", "set", va, "up", NULL },
			{ "ip", "-n", ns_name[1], "link", "set", vb, "up", NULL },
			{ "ip", "-n", ns_name[0], "link", "set", "lo", "up", NULL },
			{ "ip", "-n", ns_name[1], "link", "set", "lo", "up", NULL },
		};

		for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
			if (run_ip(cmds[i])) {
				if (i < 2)
					ns_name[i][0] = '\0';
				*why = "ip(8) could not make the namespaces and the veth pair";
				ns_remove();
				return -1;
			}
		}
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "/run/netns/%s", ns_name[i]);
		ns_fd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (ns_fd[i] < 0) {
			*why = "the namespaces ip(8) made cannot be opened in /run/netns";
			ns_remove();
			return -1;
		}
	}
	return 0;
}

/* --------------------------------------------------------------- watchdog */

static void watchdog(int sig)
{
	static const char msg[] = "asx-bench ttcp: a transfer did not finish in time "
				  "(watchdog); failing\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	ns_remove();
	_exit(1);
}

/* Interrupted: remove the namespaces, then die of the signal as asked. */
static void interrupted(int sig)
{
	ns_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---------------------------------------------------------------- transfer */

struct side {
	const struct ttcp_ops *ops;
	struct ttcp_conf conf;
	struct ttcp_xfer x;
	unsigned char *buf;
	int nsfd;		/* the namespace to enter, or -1 */
	int r;
	int got;		/* SO_SNDBUF (transmitter) / SO_RCVBUF (receiver) */
};

static void *side_run(void *arg)
{
	struct side *s = arg;
	struct ttcp_conn conn = { .fd = -1 };
	socklen_t len = sizeof(s->got);
	int fd;

	if (s->nsfd >= 0 && setns(s->nsfd, CLONE_NEWNET)) {
		s->r = -errno;
		return NULL;
	}
	if (s->conf.transmit)
		s->r = ttcp_connect_retry(s->ops, &s->conf, &conn);
	else
		s->r = s->ops->tcp_accept(&s->conf, &conn);
	if (!s->r) {
		fd = s->ops->handle(&conn);
		if (fd < 0 || getsockopt(fd, SOL_SOCKET, s->conf.transmit ? SO_SNDBUF : SO_RCVBUF,
					 &s->got, &len))
			s->got = 0;
		if (s->conf.transmit)
			s->r = ttcp_transmit(s->ops, &conn, s->buf, &s->x);
		else
			s->r = ttcp_receive(s->ops, &conn, s->buf, &s->x);
	}
	s->ops->close(&conn);
	return NULL;
}

/* A port nothing listens on now (loopback runs share the host's ports). */
static int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &len))
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

struct point {
	double mbps;
	int sndbuf_got, rcvbuf_got;
};

struct plan {
	bool verify;
	int inject;		/* TTCP_INJECT_*: the transmitter's deliberate fault */
	uint64_t bytes;		/* per point */
	long maxbuf;		/* buffers per point at most, 0: no limit */
};

static long nbuf_of(const struct plan *p, size_t size)
{
	long n = (long)(p->bytes / size);

	if (n < 1)
		n = 1;
	if (p->maxbuf && n > p->maxbuf)
		n = p->maxbuf;
	return n;
}

/* One transfer of @size-byte buffers; 0 with @pt filled, or negative. */
static int transfer(const struct plan *p, int net, int api, unsigned int sockbuf, size_t size,
		    struct point *pt)
{
	const struct ttcp_ops *ops = api == API_C ? &ttcp_raw_ops : &ttcp_asx_ops;
	struct side tx = { .ops = ops, .nsfd = -1 }, rx = { .ops = ops, .nsfd = -1 };
	long nbuf = nbuf_of(p, size);
	uint64_t want = (uint64_t)nbuf * size;
	pthread_t tt, rt;
	unsigned int limit;
	int port, attempt, r = 0;

	tx.buf = malloc(size);
	rx.buf = malloc(size);
	if (!tx.buf || !rx.buf) {
		free(tx.buf);
		free(rx.buf);
		return -ENOMEM;
	}
	ttcp_pattern(tx.buf, size);
	/* generous: 60 s, 1 MB/s and 50 us a call on a loaded host */
	limit = 60 + (unsigned int)(want / 1000000 + (uint64_t)nbuf / 20000);
	for (attempt = 0; attempt < 5; attempt++) {
		port = net == NET_NS ? 5001 : free_port();
		if (port < 0) {
			r = -EADDRNOTAVAIL;
			break;
		}
		for (int i = 0; i < 2; i++) {
			struct side *s = i ? &rx : &tx;

			memset(&s->conf, 0, sizeof(s->conf));
			memset(&s->x, 0, sizeof(s->x));
			s->conf.transmit = !i;
			s->conf.sockbuf = (int)sockbuf;
			s->conf.port = port;
			s->conf.buflen = size;
			s->conf.nbuf = nbuf;
			s->conf.host = net == NET_NS ? NS_RX_ADDR : "127.0.0.1";
			s->conf.accept_timeout_ms = 30000;
			s->x.buflen = size;
			s->x.nbuf = nbuf;
			s->x.verify = p->verify;
			s->x.inject = i ? TTCP_INJECT_NONE : p->inject;
			s->nsfd = net == NET_NS ? ns_fd[i] : -1;
			s->r = 0;
			s->got = 0;
		}
		alarm(limit);
		if (pthread_create(&rt, NULL, side_run, &rx)) {
			r = -EAGAIN;
			break;
		}
		if (pthread_create(&tt, NULL, side_run, &tx)) {
			/* the receiver gives up after its accept timeout */
			pthread_join(rt, NULL);
			r = -EAGAIN;
			break;
		}
		pthread_join(tt, NULL);
		pthread_join(rt, NULL);
		alarm(0);
		r = rx.r ? rx.r : tx.r;
		/* another program took the port between the probe and the bind */
		if (r != -EADDRINUSE || net == NET_NS)
			break;
	}
	free(tx.buf);
	free(rx.buf);
	if (r)
		return r;
	if (rx.x.bytes != want || tx.x.bytes != want) {
		fprintf(stderr, "asx-bench ttcp: %s %s sockbuf %u size %zu: short transfer, "
			"%llu of %llu bytes sent, %llu received\n", api_name[api], net_name[net],
			sockbuf, size, (unsigned long long)tx.x.bytes, (unsigned long long)want,
			(unsigned long long)rx.x.bytes);
		return -EIO;
	}
	if (p->verify && (rx.x.bad_at != UINT64_MAX || rx.x.sum != tx.x.sum)) {
		if (rx.x.bad_at != UINT64_MAX)
			fprintf(stderr, "asx-bench ttcp: %s %s sockbuf %u size %zu: byte %llu "
				"arrived wrong (lost, repeated or out of order)\n", api_name[api],
				net_name[net], sockbuf, size, (unsigned long long)rx.x.bad_at);
		else
			fprintf(stderr, "asx-bench ttcp: %s %s sockbuf %u size %zu: checksum "
				"%016llx received, %016llx sent\n", api_name[api], net_name[net],
				sockbuf, size, (unsigned long long)rx.x.sum,
				(unsigned long long)tx.x.sum);
		return -EIO;
	}
	pt->mbps = (double)rx.x.bytes * 8 / ttcp_seconds(&rx.x) / 1e6;
	pt->sndbuf_got = tx.got;
	pt->rcvbuf_got = rx.got;
	return 0;
}

/* ------------------------------------------------------------------ records */

static const char *size_label(char *buf, size_t len, size_t size)
{
	if (size >= 1024 && size % 1024 == 0)
		snprintf(buf, len, "%zuk", size / 1024);
	else
		snprintf(buf, len, "%zu", size);
	return buf;
}

/* The measured points: [net][sockbuf][size][api][run] */
struct sweep {
	const size_t *sizes;
	size_t nsizes;
	int runs;
	bool net_on[NNET];
	struct point *pts;
};

static struct point *at(const struct sweep *w, int net, int sb, size_t si, int api, int run)
{
	size_t i = ((((size_t)net * NSB + (size_t)sb) * w->nsizes + si) * NAPI + (size_t)api) *
		   (size_t)w->runs + (size_t)run;

	return &w->pts[i];
}

static void record_point(struct bench_ctx *ctx, const struct sweep *w, int net, int sb,
			 size_t si, double *mbps_c, double *mbps_asx)
{
	double v[NAPI][1000], ratio_runs[1000], med[NAPI];
	char key[128], lab[24];
	int api, run;

	size_label(lab, sizeof(lab), w->sizes[si]);
	for (api = 0; api < NAPI; api++) {
		struct point *last = at(w, net, sb, si, api, w->runs - 1);
		double sorted[1000];

		for (run = 0; run < w->runs; run++)
			sorted[run] = v[api][run] = at(w, net, sb, si, api, run)->mbps;
		med[api] = bench_median(sorted, (size_t)w->runs);
		snprintf(key, sizeof(key), "ttcp_%s_%s_sb%uk_%s_mbps", api_name[api], net_key[net],
			 sockbufs[sb] / 1024, lab);
		bench_record(ctx, &(struct bench_rec){
			.key = key, .metric = "mbps", .unit = "Mbit/s", .value = med[api],
			.runs = v[api], .nruns = (size_t)w->runs, .proto = "tcp",
			.size = w->sizes[si], .api = api_name[api], .net = net_name[net],
			.sockbuf = sockbufs[sb], .sndbuf_got = (unsigned int)last->sndbuf_got,
			.rcvbuf_got = (unsigned int)last->rcvbuf_got });
	}
	for (run = 0; run < w->runs; run++)
		ratio_runs[run] = v[API_C][run] > 0 ? v[API_ASX][run] / v[API_C][run] : 0;
	snprintf(key, sizeof(key), "ttcp_%s_sb%uk_%s_wrapper_over_c", net_key[net],
		 sockbufs[sb] / 1024, lab);
	bench_record(ctx, &(struct bench_rec){
		.key = key, .metric = "wrapper_over_c", .unit = "x",
		.value = med[API_C] > 0 ? med[API_ASX] / med[API_C] : 0, .runs = ratio_runs,
		.nruns = (size_t)w->runs, .proto = "tcp", .size = w->sizes[si],
		.net = net_name[net], .sockbuf = sockbufs[sb] });
	*mbps_c = med[API_C];
	*mbps_asx = med[API_ASX];
}

/* Records and the table of one net; its ratios appended to @ratios. */
static void report_net(struct bench_ctx *ctx, const struct sweep *w, int net, double *ratios,
		       size_t *nratios)
{
	double c[NSB], a[NSB], mine[NSB * NSIZES];
	size_t n = 0, si;
	char lab[24];
	int sb;

	bench_say(ctx, "\n%s (Mbit/s, medians of %d run(s)):\n%8s", net_name[net], w->runs,
		  "buffer");
	for (sb = 0; sb < NSB; sb++)
		bench_say(ctx, "   %2uK queue: %9s %9s %6s", sockbufs[sb] / 1024, "C", "asx",
			  "asx/C");
	bench_say(ctx, "\n");
	for (si = 0; si < w->nsizes; si++) {
		bench_say(ctx, "%8s", size_label(lab, sizeof(lab), w->sizes[si]));
		for (sb = 0; sb < NSB; sb++) {
			record_point(ctx, w, net, sb, si, &c[sb], &a[sb]);
			mine[n] = c[sb] > 0 ? a[sb] / c[sb] : 0;
			ratios[(*nratios)++] = mine[n++];
			bench_say(ctx, "              %9.1f %9.1f %6.3f", c[sb], a[sb],
				  c[sb] > 0 ? a[sb] / c[sb] : 0.0);
		}
		bench_say(ctx, "\n");
	}
	{
		char key[64];
		double m = bench_median(mine, n);

		snprintf(key, sizeof(key), "ttcp_%s_wrapper_over_c", net_key[net]);
		bench_record(ctx, &(struct bench_rec){
			.key = key, .metric = "wrapper_over_c", .unit = "x", .value = m,
			.proto = "tcp", .net = net_name[net] });
		bench_say(ctx, "%s: wrappers over C sockets, median over the points: %.3f\n",
			  net_name[net], m);
	}
}

static const char usage_text[] =
	"[--net loopback|netns|both] [--bytes N] [--inject short|flip]\n"
	"\n"
	"  --net WHICH  loopback, netns (a veth pair between two namespaces; root)\n"
	"               or both (default; netns is skipped with a line why without root)\n"
	"  --bytes N    bytes per point (default 4 MB, at most 32768 buffers a point;\n"
	"               --full: 64 MB and no limit, as the paper; --quick: 256 KB,\n"
	"               at most 4096 buffers, and every byte checked)\n"
	"  --inject F   the checks' own test: the transmitter counts its last buffer\n"
	"               without sending it (short) or flips a bit of the middle one\n"
	"               (flip); the command must then fail";

static int bench_ttcp(struct bench_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "net", required_argument, NULL, 'n' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "inject", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan p = { .bytes = DEFAULT_BYTES, .maxbuf = DEFAULT_MAXBUF };
	struct sweep w = { .sizes = all_sizes, .nsizes = NSIZES, .runs = ctx->runs,
			   .net_on = { true, true } };
	struct sigaction sa = { .sa_handler = watchdog };
	double ratios[NNET * NSB * NSIZES];
	size_t nratios = 0, npts;
	const char *why = NULL;
	uint64_t t;
	char *end;
	int opt, inject = TTCP_INJECT_NONE, r = 0;

	if (ctx->quick) {
		p = (struct plan){ .verify = true, .bytes = QUICK_BYTES, .maxbuf = QUICK_MAXBUF };
		w.sizes = quick_sizes;
		w.nsizes = sizeof(quick_sizes) / sizeof(quick_sizes[0]);
	} else if (ctx->full) {
		p = (struct plan){ .bytes = 64u << 20 };
	}
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (strcmp(optarg, "both")) {
				w.net_on[NET_LO] = !strcmp(optarg, "loopback");
				w.net_on[NET_NS] = !strcmp(optarg, "netns");
				if (!w.net_on[NET_LO] && !w.net_on[NET_NS])
					return -EINVAL;
			}
			break;
		case 'b':
			errno = 0;
			p.bytes = strtoull(optarg, &end, 10);
			if (errno || *end || !p.bytes || p.bytes > (1ull << 40))
				return -EINVAL;
			break;
		case 'i':
			if (!strcmp(optarg, "short"))
				inject = TTCP_INJECT_SHORT;
			else if (!strcmp(optarg, "flip"))
				inject = TTCP_INJECT_FLIP;
			else
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	p.inject = inject;
	if (optind != argc)
		return -EINVAL;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = interrupted;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (w.net_on[NET_NS] && ns_make(&why)) {
		fprintf(stderr, "asx-bench ttcp: the netns panel is not measured: %s\n", why);
		w.net_on[NET_NS] = false;
	}
	if (!w.net_on[NET_LO] && !w.net_on[NET_NS]) {
		ns_remove();
		return 0;	/* nothing measurable: no records, said why */
	}
	npts = (size_t)NNET * NSB * w.nsizes * NAPI * (size_t)w.runs;
	w.pts = calloc(npts, sizeof(*w.pts));
	if (!w.pts) {
		ns_remove();
		return -ENOMEM;
	}
	bench_say(ctx, "ttcp: unidirectional TCP, C sockets against the libasx wrappers; "
		  "%llu bytes a point%s (at most %ld buffers)%s\n", (unsigned long long)p.bytes,
		  ctx->full ? " (the paper's 64 MB)" : "", p.maxbuf ? p.maxbuf : 0,
		  p.verify ? "; every byte checked" : "");
	t = bench_now_ns();
	for (int run = 0; run < w.runs && !r; run++) {
		for (int net = 0; net < NNET && !r; net++) {
			if (!w.net_on[net])
				continue;
			for (int sb = 0; sb < NSB && !r; sb++) {
				for (size_t si = 0; si < w.nsizes && !r; si++) {
					/* alternate which api goes first */
					for (int k = 0; k < NAPI && !r; k++) {
						int api = (k + run) % NAPI;

						r = transfer(&p, net, api, sockbufs[sb], w.sizes[si],
							     at(&w, net, sb, si, api, run));
					}
				}
			}
		}
	}
	bench_phase(ctx, "transfers", (bench_now_ns() - t) / 1e9);
	ns_remove();
	signal(SIGINT, SIG_DFL);	/* `all` goes on to other commands */
	signal(SIGTERM, SIG_DFL);
	if (!r) {
		for (int net = 0; net < NNET; net++)
			if (w.net_on[net])
				report_net(ctx, &w, net, ratios, &nratios);
		bench_record(ctx, &(struct bench_rec){
			.key = "ttcp_wrapper_over_c", .metric = "wrapper_over_c", .unit = "x",
			.value = bench_median(ratios, nratios), .proto = "tcp" });
		bench_say(ctx, "wrappers over C sockets, median over every point: %.3f\n",
			  bench_median(ratios, nratios));
	}
	free(w.pts);
	return r;
}

BENCH_COMMAND(ttcp, "ttcp",
	      "002's ttcp: C sockets vs the IPC SAP wrappers, 1 B-128 KB buffers, 8/64 KB "
	      "queues, loopback and netns",
	      usage_text, bench_ttcp)
