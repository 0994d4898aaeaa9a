// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * svc.conf input that used to wedge the reader (Documentation/svc.rst,
 * "Errors" and "Bounds"), through asx_svc_check_file() (what `asxd -t`
 * does) and asx_svc_apply_file():
 *  1. a file that includes a FIFO, and a FIFO as the top file: an error
 *     with file:line:column ("not a regular file") at once, no hang;
 *  2. the include bomb (5 small files, each including the next 64 times:
 *     16.7 million reads) stops at the 1025th include, quickly; 1024
 *     includes are fine; includes nest 16 levels, not 17;
 *  3. a file at the 1 MiB limit (~75,000 directives) parses in well under
 *     a second (bounded here at 10 s for a loaded host), one byte more is
 *     an error at 1:1, and so is a missing file.
 * The files are made in the current directory, named after the process.
 */
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <asx/svc.h>
#include "outsider.h"

static const char *volatile stage = "start";
static char names[64][64];
static int nnames;

static void on_alarm(int sig)
{
	static const char pre[] = "svc_bounds: watchdog: hung in: ";

	(void)sig;
	for (int i = 0; i < nnames; i++)
		unlink(names[i]);
	if (write(2, pre, sizeof(pre) - 1) < 0 || write(2, stage, strlen(stage)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(3);
	_exit(2);
}

/* "svcb-PID-@tag": a file name of this run (removed at exit) */
static const char *fname(const char *tag)
{
	for (int i = 0; i < nnames; i++)
		if (strstr(names[i], tag) && !strcmp(strstr(names[i], tag), tag))
			return names[i];
	CHECK(nnames < 64);
	snprintf(names[nnames], sizeof(names[0]), "svcb-%ld-%s", (long)getpid(), tag);
	return names[nnames++];
}

static void cleanup(void)
{
	for (int i = 0; i < nnames; i++)
		remove(names[i]);
}

static FILE *create(const char *name)
{
	FILE *f = fopen(name, "w");

	CHECK(f);
	return f;
}

static void done(FILE *f)
{
	CHECK(!ferror(f) && fclose(f) == 0);
}

static double secs(uint64_t t0)
{
	return (double)(asx_now_ns() - t0) / 1e9;
}

/* asx_svc_check_file(@path) fails with an error starting @pre and containing @has */
static void check_fails(const char *path, const char *pre, const char *has, const char *what)
{
	char err[512] = "";
	int r = asx_svc_check_file(path, err, sizeof(err));

	if (r >= 0 || strncmp(err, pre, strlen(pre)) || !strstr(err, has))
		fprintf(stderr, "svc_bounds: %s: %d \"%s\", expected an error \"%s...%s...\"\n",
			what, r, err, pre, has);
	CHECK(r < 0 && !strncmp(err, pre, strlen(pre)) && strstr(err, has));
	printf("svc_bounds: %s: %s\n", what, err);
}

static void fifo(void)
{
	const char *top = fname("fifo.conf"), *p = fname("p.fifo");
	struct asx_svc_repo *repo;
	char pre[128], err[512] = "";
	FILE *f;

	stage = "1: a file including a FIFO";
	CHECK(mkfifo(p, 0600) == 0);
	f = create(top);
	fprintf(f, "# a FIFO nobody writes\ninclude \"%s\"\n", p);
	done(f);
	alarm(20);
	snprintf(pre, sizeof(pre), "%s:2:1: ", top);
	check_fails(top, pre, "not a regular file", "a file including a FIFO");

	stage = "1: apply a file including a FIFO";
	CHECK0(asx_svc_repo_create(&repo));
	CHECK(asx_svc_apply_file(repo, top, 0, err, sizeof(err)) < 0);
	CHECK(!strncmp(err, pre, strlen(pre)) && strstr(err, "not a regular file"));
	asx_svc_repo_destroy(repo);

	stage = "1: a FIFO as the top file";
	snprintf(pre, sizeof(pre), "%s:1:1: ", p);
	check_fails(p, pre, "not a regular file", "a FIFO as the top file");
	alarm(60);
}

static void includes(void)
{
	char tag[32], pre[128];
	uint64_t t0;
	FILE *f;

	/* the bomb: bomb0 includes bomb1 64 times, ..., bomb3 includes bomb4 */
	stage = "2: the include bomb";
	for (int i = 0; i < 5; i++) {
		snprintf(tag, sizeof(tag), "bomb%d.conf", i);
		f = create(fname(tag));
		if (i == 4) {
			fputs("# the leaf\n", f);
		} else {
			snprintf(tag, sizeof(tag), "bomb%d.conf", i + 1);
			for (int j = 0; j < 64; j++)
				fprintf(f, "include \"%s\"\n", fname(tag));
		}
		done(f);
	}
	alarm(20);
	t0 = asx_now_ns();
	snprintf(pre, sizeof(pre), "%s:47:1: ", fname("bomb3.conf"));	/* as svc.rst shows */
	check_fails(fname("bomb0.conf"), pre, "more than 1024 includes", "the include bomb");
	printf("svc_bounds: the include bomb refused in %.3f s\n", secs(t0));
	CHECK(secs(t0) < 10);

	/* 1024 includes of one file are fine, 1025 are not */
	stage = "2: 1024 and 1025 includes";
	f = create(fname("many.conf"));
	for (int j = 0; j < 1024; j++)
		fprintf(f, "include \"%s\"\n", fname("bomb4.conf"));
	done(f);
	CHECK0(asx_svc_check_file(fname("many.conf"), NULL, 0));
	f = fopen(fname("many.conf"), "a");
	CHECK(f);
	fprintf(f, "include \"%s\"\n", fname("bomb4.conf"));
	done(f);
	snprintf(pre, sizeof(pre), "%s:1025:1: ", fname("many.conf"));
	check_fails(fname("many.conf"), pre, "more than 1024 includes", "1025 includes");

	/* a chain: nest0 includes nest1 ... includes nestN; nest16 is 16 below the top */
	stage = "2: include depth";
	for (int i = 0; i <= 17; i++) {
		snprintf(tag, sizeof(tag), "nest%d.conf", i);
		f = create(fname(tag));
		snprintf(tag, sizeof(tag), "nest%d.conf", i + 1);
		if (i < 16)
			fprintf(f, "include \"%s\"\n", fname(tag));
		else
			fputs("# the deepest\n", f);
		done(f);
	}
	if (asx_svc_check_file(fname("nest0.conf"), pre, sizeof(pre)))
		fprintf(stderr, "svc_bounds: a chain of 16 includes: %s\n", pre);
	CHECK0(asx_svc_check_file(fname("nest0.conf"), NULL, 0));
	f = create(fname("nest16.conf"));			/* now 17 deep */
	fprintf(f, "include \"%s\"\n", fname("nest17.conf"));
	done(f);
	snprintf(pre, sizeof(pre), "%s:1:1: ", fname("nest16.conf"));
	check_fails(fname("nest0.conf"), pre, "", "a chain of 17 includes");
	alarm(60);
}

static void big(void)
{
	const char *path = fname("big.conf");
	char pre[128];
	long n = 0, bytes = 0;
	uint64_t t0;
	double t;
	FILE *f;

	/* "static sNNNNN\n": 14 bytes a directive, every name its own; a comment fills up */
	stage = "3: a 1 MiB file";
	f = create(path);
	while (bytes + 14 <= 1048576) {
		fprintf(f, "static s%05ld\n", n++);
		bytes += 14;
	}
	for (; bytes < 1048576; bytes++)
		fputc(bytes + 1 == 1048576 ? '\n' : '#', f);
	done(f);
	CHECK(bytes == 1048576);
	alarm(30);
	t0 = asx_now_ns();
	CHECK0(asx_svc_check_file(path, NULL, 0));
	t = secs(t0);
	printf("svc_bounds: %ld directives in 1 MiB checked in %.3f s\n", n, t);
	CHECK(t < 10);

	/* one more line and the file is too large */
	f = fopen(path, "a");
	CHECK(f);
	fputs("s\n", f);					/* 1 MiB + 2 bytes */
	done(f);
	snprintf(pre, sizeof(pre), "%s:1:1: ", path);
	check_fails(path, pre, "1048578 bytes", "a file past 1 MiB");
	snprintf(pre, sizeof(pre), "%s:1:1: ", fname("missing.conf"));
	check_fails(fname("missing.conf"), pre, "No such file", "a missing file");
	alarm(60);
}

/* No argument: every part; "1", "2", "3" (or several): those parts alone. */
int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : "123";

	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	atexit(cleanup);
	alarm(60);
	if (strchr(only, '1'))
		fifo();
	if (strchr(only, '2'))
		includes();
	if (strchr(only, '3'))
		big();
	puts("svc_bounds: ok");
	return 0;
}
