// SPDX-License-Identifier: GPL-2.0
/*
 * newcomer_check.c - the checks of issue 27's bug 9, written the way a
 * newcomer writes them from <asx/kstream.h> alone, and the hostile member
 * that execs a setuid program. Not a test of the suite: hostile_repro.sh
 * runs it in the VM between hostile runs.
 *
 *   newcomer_check check LABEL
 *	two fresh Streams, SETDRV mux on one, LINK the other under it, a
 *	message down to the lower and back up, /proc/asx/objects against the
 *	two Streams held. Every return value is checked; the failing step and
 *	its errno are printed, with the files of /proc/asx. Exit 0 or the failing step.
 *
 *   newcomer_check exec-member SECS
 *	as nobody: Streams (one a mux with a lower linked, one with messages
 *	queued, one with a module) and two activation groups, all without
 *	close-on-exec; a thread joins each group; then the main thread, a
 *	member too, execs setuid su, which waits SECS seconds for a password
 *	(its stdin is a pipe a sleeper holds) holding all of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <asx/kstream.h>

static const char *label = "";
static int step;

static void dump(const char *path)
{
	char line[512];
	FILE *f = fopen(path, "re");

	if (!f) {
		printf("#   %s: %s\n", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "  q ", 4))
			printf("#   %s: %s", path, line);
	fclose(f);
}

static int fail(const char *what, int err)
{
	printf("CHECK %s uid %d: step %d (%s) FAILED: %s (%d)\n", label, (int)getuid(), step,
	       what, strerror(err < 0 ? -err : err), err);
	dump("/proc/asx/objects");
	dump("/proc/asx/streams");
	fflush(stdout);
	return step;
}

#define CHECK(what, expr) do {					\
		int r_;						\
		step++;						\
		r_ = (expr);					\
		if (r_ < 0)					\
			return fail(what, r_);			\
	} while (0)

static long objects_streams(void)
{
	char key[32];
	long v, n = -1;
	FILE *f = fopen("/proc/asx/objects", "re");

	if (!f)
		return -errno;
	while (fscanf(f, "%31s %ld", key, &v) == 2)
		if (!strcmp(key, "streams"))
			n = v;
	fclose(f);
	return n;
}

static int check(void)
{
	struct asx_kstream *up = NULL, *low = NULL;
	struct asx_mux_hdr hdr = { 0 }, ghdr = { 0 };
	struct asx_kstream_part c = { &hdr, 0, sizeof(hdr) }, d = { "hello", 0, 5 };
	struct asx_kstream_part gc = { &ghdr, sizeof(ghdr), 0 };
	char buf[64] = "", drv[ASX_KSTREAM_NAME_MAX] = "";
	struct asx_kstream_part gd = { buf, sizeof(buf), 0 };
	struct pollfd p;
	unsigned int flags = ASX_MSG_ANY, band = 0;
	uint32_t id = 0;
	long n;

	CHECK("open the upper", asx_kstream_open(&up, NULL, 0));
	CHECK("open the lower", asx_kstream_open(&low, NULL, 0));
	CHECK("SETDRV mux", asx_kstream_set_driver(up, "mux"));
	CHECK("LIST", asx_kstream_list(up, NULL, 0, drv));
	step++;
	if (strcmp(drv, "mux"))
		return fail(drv, -EPROTO);
	CHECK("LINK", asx_kstream_link(up, low, &id));
	hdr.id = id;
	CHECK("PUTMSG down", asx_kstream_putmsg(up, &c, &d, 0, 0));
	p.fd = asx_kstream_fd(up);
	p.events = POLLIN;
	step++;
	if (poll(&p, 1, 5000) != 1)
		return fail("poll for the answer", -ETIMEDOUT);
	CHECK("GETMSG up", asx_kstream_getmsg(up, &gc, &gd, &flags, &band));
	step++;
	if (gc.len != sizeof(ghdr) || ghdr.id != id || gd.len != 5 || memcmp(buf, "hello", 5))
		return fail("the answer", -EBADMSG);
	n = objects_streams();
	if (n != 2) {
		/* not a failure: other users may hold some */
		printf("CHECK %s uid %d: note: /proc/asx/objects counts %ld Streams, 2 held here\n",
		       label, (int)getuid(), n);
		dump("/proc/asx/streams");
	}
	CHECK("UNLINK", asx_kstream_unlink(up, id));
	asx_kstream_close(low);
	asx_kstream_close(up);
	printf("CHECK %s uid %d: ok (streams %ld)\n", label, (int)getuid(), n);
	return 0;
}

static void *joiner(void *arg)
{
	struct asx_sa_join j = { .size = sizeof(j) };

	if (ioctl(*(int *)arg, ASX_IOC_SA_JOIN, &j))
		perror("# SA_JOIN (thread)");
	pause();
	return NULL;
}

static int exec_member(int secs)
{
	struct asx_kstream *up, *low, *full, *mod;
	struct asx_sa_create sc = { .size = sizeof(sc), .max_vps = 4 };
	struct asx_sa_join j = { .size = sizeof(j) };
	struct asx_kstream_part d = { "pinned", 0, 6 };
	int g[2], in[2], i;
	pthread_t t;
	uint32_t id;

	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		return 1;
	/* no close-on-exec: the setuid program holds all of them */
	if (asx_kstream_open(&up, "mux", 0) || asx_kstream_open(&low, NULL, 0) ||
	    asx_kstream_open(&full, NULL, ASX_KSTREAM_NONBLOCK) ||
	    asx_kstream_open(&mod, NULL, 0) || asx_kstream_link(up, low, &id) ||
	    asx_kstream_push(mod, "hold"))
		return 2;
	for (i = 0; i < 100 && !asx_kstream_putmsg(full, NULL, &d, 0, 0); i++)
		;
	for (i = 0; i < 4; i++)
		fcntl(asx_kstream_fd(i ? (i == 1 ? low : i == 2 ? full : mod) : up), F_SETFD, 0);
	for (i = 0; i < 2; i++) {
		sc.fd = 0;
		sc.id = 0;
		if (ioctl(asx_kstream_fd(mod), ASX_IOC_SA_CREATE, &sc))
			return 3;
		g[i] = sc.fd;
		if (pthread_create(&t, NULL, joiner, &g[i]))
			return 4;
	}
	if (ioctl(g[0], ASX_IOC_SA_JOIN, &j))
		return 5;
	usleep(200000);
	/* su waits for a password on a pipe that a sleeper holds for @secs */
	if (pipe(in))
		return 6;
	if (!fork()) {
		close(in[0]);
		sleep(secs);
		_exit(0);
	}
	close(in[1]);
	dup2(in[0], 0);
	execl("/usr/bin/su", "su", "-c", "true", "root", (char *)NULL);
	perror("# exec su");
	return 7;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "check")) {
		label = argv[2];
		return check();
	}
	if (argc == 3 && !strcmp(argv[1], "exec-member"))
		return exec_member(atoi(argv[2]));
	fprintf(stderr, "usage: %s check LABEL | exec-member SECS\n", argv[0]);
	return 64;
}
