// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asxctl - look at ASX kernel Streams.
 *
 * USAGE: asxctl streams | stats | modules | version
 *        asxctl push [-n MSGS] MODULE...
 *        asxctl pop MODULE...
 *        asxctl autopush DRIVER [MODULE...] | -d DRIVER
 *
 * streams  every live Stream of /dev/asx with its queues (/proc/asx/streams)
 * stats    live object counts and, per Stream, bytes queued and flow-control
 *          events summed over its queues
 * modules  the registered modules and the drivers
 * version  the ABI version and features of the loaded asx.ko
 * push     open a Stream, push MODULEs (first = lowest), send MSGS messages
 *          round the loop, show the Stream's queues, close it
 * pop      open a Stream, push MODULEs, then pop them one by one, listing the
 *          Stream after each pop
 * autopush show DRIVER's autopush list, set it to MODULEs (first = lowest;
 *          root), or delete it (-d, root)
 *
 * Documentation/asxctl.rst has examples. Exit status: 0, 1 on an error (a
 * message of push that does not come back within 10 s included), 2 on a
 * usage error, 3 when svc cannot reach asxd or it does not answer in time.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asx/kstream.h>

#include "asxctl.h"

#define PROC	"/proc/asx"

static void usage(FILE *f)
{
	fputs("usage: asxctl streams | stats | modules | version\n"
	      "       asxctl push [-n MSGS] MODULE...\n"
	      "       asxctl pop MODULE...\n"
	      "       asxctl autopush DRIVER [MODULE...] | -d DRIVER\n"
	      "       asxctl svc [-s SOCKET] [-t SECONDS] list | reload | suspend NAME | resume NAME |\n"
	      "                  remove NAME\n"
	      "       asxctl stream [-s SOCKET] [-t SECONDS] put NAME DATA | get NAME [-w MS]\n"
	      "       asxctl asc [-s SOCKET] [-t SECONDS]\n", f);
}

static int cat(const char *name)
{
	char path[64], buf[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), PROC "/%s", name);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "asxctl: %s: %s (is asx.ko loaded?)\n", path, strerror(errno));
		return 1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return 0;
}

/* Sums each Stream's queue lines of /proc/asx/streams. */
static int stats(void)
{
	unsigned long long count = 0, stops = 0, starts = 0, drops = 0, puts = 0, v[9];
	char line[512], head[512] = "", name[64], side;
	unsigned int level, msgs = 0, m;
	int have = 0;
	FILE *f;

	if (cat("objects"))
		return 1;
	f = fopen(PROC "/streams", "r");
	if (!f) {
		perror("asxctl: " PROC "/streams");
		return 1;
	}
	printf("%-60s %8s %6s %10s %8s %8s %6s\n", "stream", "bytes", "msgs", "puts",
	       "fc_stop", "fc_start", "drops");
	for (;;) {
		char *ok = fgets(line, sizeof(line), f);

		if ((!ok || !strncmp(line, "stream ", 7)) && have) {
			printf("%-60.60s %8llu %6u %10llu %8llu %8llu %6llu\n", head, count, msgs,
			       puts, stops, starts, drops);
			count = stops = starts = drops = puts = 0;
			msgs = 0;
		}
		if (!ok)
			break;
		if (!strncmp(line, "stream ", 7)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(head, sizeof(head), "%s", line + 7);
			have = 1;
		} else if (sscanf(line, " q %u %c %63s count %llu msgs %u hiwat %llu lowat %llu "
				  "puts %llu srv %llu enq %llu fc_stop %llu fc_start %llu "
				  "drops %llu", &level, &side, name, &v[0], &m, &v[1], &v[2],
				  &v[3], &v[4], &v[5], &v[6], &v[7], &v[8]) == 13) {
			count += v[0];
			msgs += m;
			puts += v[3];
			stops += v[6];
			starts += v[7];
			drops += v[8];
		}
	}
	fclose(f);
	return 0;
}

static struct asx_kstream *open_asx(void)
{
	struct asx_kstream *ks;
	int r = asx_kstream_open(&ks, NULL, 0);

	if (r) {
		fprintf(stderr, "asxctl: /dev/asx: %s (is asx.ko loaded?)\n", strerror(-r));
		return NULL;
	}
	return ks;
}

static int version(void)
{
	struct asx_kstream *ks = open_asx();
	struct asx_version v;
	int r;

	if (!ks)
		return 1;
	r = asx_kstream_version(ks, &v);
	asx_kstream_close(ks);
	if (r) {
		fprintf(stderr, "asxctl: ASX_IOC_VERSION: %s\n", strerror(-r));
		return 1;
	}
	printf("ASX ABI %u.%u.%u features %#llx max_depth %u max_write %u\n", v.major, v.minor,
	       v.patch, (unsigned long long)v.features, v.max_depth, v.max_write);
	return 0;
}

static int list(struct asx_kstream *ks)
{
	char names[ASX_MAX_DEPTH][ASX_KSTREAM_NAME_MAX], driver[ASX_KSTREAM_NAME_MAX];
	int i, n = asx_kstream_list(ks, names, ASX_MAX_DEPTH, driver);

	if (n < 0) {
		fprintf(stderr, "asxctl: ASX_IOC_LIST: %s\n", strerror(-n));
		return 1;
	}
	printf("head");
	for (i = 0; i < n && i < ASX_MAX_DEPTH; i++)
		printf(" -> %s", names[i]);
	printf(" -> %s\n", driver);
	return 0;
}

static int show_queues(struct asx_kstream *ks)
{
	struct asx_qstats qs;
	unsigned int level, side;
	int r;

	printf("%5s %4s %-8s %8s %5s %8s %8s %8s %6s %7s %8s %6s\n", "level", "side", "name",
	       "bytes", "msgs", "hiwat", "lowat", "puts", "srv", "fc_stop", "fc_start",
	       "drops");
	for (level = 0;; level++) {
		for (side = 0; side < 2; side++) {
			r = asx_kstream_qstats(ks, level, side, &qs);
			if (r)
				return r == -ENXIO ? 0 : 1;
			printf("%5u %4s %-8s %8llu %5llu %8llu %8llu %8llu %6llu %7llu %8llu %6llu\n",
			       level, side ? "w" : "r", qs.name, (unsigned long long)qs.count,
			       (unsigned long long)qs.msgs, (unsigned long long)qs.hiwat,
			       (unsigned long long)qs.lowat, (unsigned long long)qs.puts,
			       (unsigned long long)qs.srv_runs, (unsigned long long)qs.fc_stops,
			       (unsigned long long)qs.fc_starts, (unsigned long long)qs.drops);
		}
	}
}

/* How long `push` waits for each message to come back round the loop. */
#define BACK_TIMEOUT_MS	10000

/* read() once @fd is readable: bytes, -1 (errno), -2 nothing within BACK_TIMEOUT_MS. */
static ssize_t read_back(int fd, void *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, BACK_TIMEOUT_MS);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (r == 0)
		return -2;
	return read(fd, buf, len);
}

/* Push argv[from..argc-1]; 0, or 1 after saying why. */
static int push_all(struct asx_kstream *ks, int from, int argc, char **argv)
{
	for (int i = from; i < argc; i++) {
		int r = asx_kstream_push(ks, argv[i]);

		if (r) {
			fprintf(stderr, "asxctl: push %s: %s\n", argv[i], strerror(-r));
			return 1;
		}
	}
	return 0;
}

static int push(int argc, char **argv)
{
	char buf[64], got[64];
	long n = 1, i;
	struct asx_kstream *ks;
	int opt, fd, ret = 0;

	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		switch (opt) {
		case 'n': {
			char *end;

			errno = 0;
			n = strtol(optarg, &end, 0);
			if (errno || end == optarg || *end || n < 0) {
				fprintf(stderr, "asxctl push: -n takes a count of messages, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc || n < 0) {
		usage(stderr);
		return 2;
	}
	ks = open_asx();
	if (!ks)
		return 1;
	if (push_all(ks, optind, argc, argv)) {
		asx_kstream_close(ks);
		return 1;
	}
	fd = asx_kstream_fd(ks);
	list(ks);
	for (i = 0; i < n && !ret; i++) {
		int len = snprintf(buf, sizeof(buf), "asxctl message %ld", i);
		ssize_t r;

		if (write(fd, buf, len) != len) {
			fprintf(stderr, "asxctl: write: %s\n", strerror(errno));
			ret = 1;
			break;
		}
		r = read_back(fd, got, sizeof(got));
		if (r == -2) {
			fprintf(stderr, "asxctl: message %ld did not come back within %d s "
				"(a module holds it?)\n", i, BACK_TIMEOUT_MS / 1000);
			ret = 1;
		} else if (r < 0) {
			fprintf(stderr, "asxctl: read: %s\n", strerror(errno));
			ret = 1;
		} else if (r != len || memcmp(buf, got, len)) {
			printf("message %ld came back changed: %zd bytes\n", i, r);
		}
	}
	printf("%ld message(s) sent round the loop\n", i);
	if (show_queues(ks))
		ret = 1;
	asx_kstream_close(ks);
	return ret;
}

static int pop(int argc, char **argv)
{
	struct asx_kstream *ks;
	int r, ret = 0;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	ks = open_asx();
	if (!ks)
		return 1;
	if (push_all(ks, 1, argc, argv)) {
		asx_kstream_close(ks);
		return 1;
	}
	list(ks);
	for (;;) {
		r = asx_kstream_pop(ks, NULL);
		if (r) {
			if (r != -EINVAL) {
				fprintf(stderr, "asxctl: pop: %s\n", strerror(-r));
				ret = 1;
			}
			break;
		}
		printf("popped: ");
		list(ks);
	}
	asx_kstream_close(ks);
	return ret;
}

/* autopush DRIVER: show; DRIVER MODULE...: set; -d DRIVER: delete. */
static int autopush(int argc, char **argv)
{
	struct asx_autopush ap;
	struct asx_kstream *ks;
	const char *drv;
	int i, r, del;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	del = argc > 1 && !strcmp(argv[1], "-d");
	if (argc < 2 || (del && argc != 3) || argc - 2 > ASX_AUTOPUSH_MAX) {
		if (argc - 2 > ASX_AUTOPUSH_MAX)
			fprintf(stderr, "asxctl autopush: at most %d modules\n", ASX_AUTOPUSH_MAX);
		usage(stderr);
		return 2;
	}
	drv = argv[del ? 2 : 1];
	memset(&ap, 0, sizeof(ap));
	ap.cmd = del ? ASX_AP_CLEAR : argc > 2 ? ASX_AP_SET : ASX_AP_GET;
	if (strlen(drv) >= sizeof(ap.driver)) {
		fprintf(stderr, "asxctl autopush: no driver '%s'\n", drv);
		return 1;
	}
	strcpy(ap.driver, drv);
	for (i = 2; !del && i < argc; i++) {
		if (strlen(argv[i]) >= ASX_NAME_MAX) {
			fprintf(stderr, "asxctl autopush: no module '%s'\n", argv[i]);
			return 1;
		}
		strcpy(ap.modules[ap.count++], argv[i]);
	}
	ks = open_asx();
	if (!ks)
		return 1;
	r = asx_kstream_autopush(ks, &ap);
	asx_kstream_close(ks);
	if (r == -ENOENT && ap.cmd == ASX_AP_GET) {
		printf("%s: no autopush list\n", drv);
		return 0;
	}
	if (r) {
		fprintf(stderr, "asxctl autopush %s: %s%s\n", drv, strerror(-r),
			r == -EPERM ? " (setting or deleting a list needs CAP_SYS_ADMIN)" :
			r == -ENOENT ? " (no such driver, or a module is not registered: "
				       "asxctl modules)" : "");
		return 1;
	}
	if (ap.cmd == ASX_AP_GET) {
		printf("%s:", drv);
		for (i = 0; i < (int)ap.count; i++)
			printf(" %s", ap.modules[i]);
		printf("\n");
	}
	return 0;
}

/* streams, stats, modules and version take no arguments: say so, do not ignore them */
static int no_args(int argc, char **argv)
{
	if (argc <= 2)
		return 0;
	fprintf(stderr, "asxctl %s: takes no arguments, not '%s' (asxctl --help)\n",
		argv[1], argv[2]);
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version"))
		cmd = "version";
	if (!strcmp(cmd, "streams") || !strcmp(cmd, "modules") || !strcmp(cmd, "stats") ||
	    !strcmp(cmd, "version")) {
		if (no_args(argc, argv))
			return 2;
		if (!strcmp(cmd, "stats"))
			return stats();
		if (!strcmp(cmd, "version"))
			return version();
		return cat(cmd);
	}
	if (!strcmp(cmd, "push"))
		return push(argc - 1, argv + 1);
	if (!strcmp(cmd, "pop"))
		return pop(argc - 1, argv + 1);
	if (!strcmp(cmd, "autopush"))
		return autopush(argc - 1, argv + 1);
	if (!strcmp(cmd, "svc"))
		return asxctl_svc(argc - 1, argv + 1);
	if (!strcmp(cmd, "stream"))
		return asxctl_stream(argc - 1, argv + 1);
	if (!strcmp(cmd, "asc"))
		return asxctl_asc(argc - 1, argv + 1);
	fprintf(stderr, "asxctl: unknown command '%s' (commands: streams, stats, modules, "
		"version, push, pop, autopush, svc, stream, asc; asxctl --help)\n", cmd);
	return 2;
}
