// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asxd - run the services of a svc.conf (asxd(8), Documentation/svc.rst).
 *
 * The main thread polls a signalfd (SIGHUP reloads, SIGTERM and SIGINT
 * stop) and the control socket, whose clients (`asxctl svc`) are served
 * one at a time, each given at most two seconds to send its request.  What
 * may take long -- the first load, a reload, the final teardown, all of
 * which run services' init and fini -- runs on a worker thread, so the
 * loop never waits on a service: a request that needs the repository while
 * a job runs waits up to BUSY_WAIT for it, then is answered "busy" (EBUSY)
 * with how long the job has run; a job that runs long is logged every
 * REPORT_EVERY; and SIGTERM ends asxd within --stop-timeout whatever a
 * service does (the services are then not finalised, and it exits 1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <asx/stream.h>
#include <asx/svc.h>

#include "svcproto.h"
#include "svcstream.h"

#ifndef ASXD_DEFAULT_CONFIG
#define ASXD_DEFAULT_CONFIG "/etc/asx/svc.conf"
#endif

static const char *config = ASXD_DEFAULT_CONFIG;
static bool verbose;
static double stop_timeout = 10;	/* s: SIGTERM ends asxd within this */

#define BUSY_WAIT	1.0	/* s a request waits for a running job */
#define REPORT_EVERY	5.0	/* s between reports of a long job */
#define PARKED_MAX	16	/* requests waiting for a job; more are "busy" at once */

static void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("asxd: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: asxd [-f FILE] [-s SOCKET] [-T SECONDS] [-v]\n"
		"       asxd -t [-f FILE]\n"
		"\n"
		"Runs the services of a svc.conf in the foreground until SIGTERM or SIGINT;\n"
		"SIGHUP (or `asxctl svc reload`) reloads the file as a transaction: if any\n"
		"step fails, the running configuration stays as it was.\n"
		"\n"
		"Options:\n"
		"  -f, --config FILE   the configuration (default %s)\n"
		"  -s, --socket PATH   the control socket (default $RUNTIME_DIRECTORY/asxd.sock,\n"
		"                      else /run/asx/asxd.sock for root, else\n"
		"                      $XDG_RUNTIME_DIR/asxd.sock)\n"
		"  -t, --test          a dry run: parse the file and plan it as a first load\n"
		"                      would, without loading or starting anything (0: good)\n"
		"  -T, --stop-timeout SECONDS\n"
		"                      SIGTERM ends asxd within this even if a service's init\n"
		"                      or fini hangs (default 10)\n"
		"  -v, --verbose       log each control request\n"
		"  -h, --help          this help\n"
		"  -V, --version       print the libasx version\n"
		"\n"
		"Examples:\n"
		"  asxd -f ./svc.conf -s /tmp/asxd.sock &\n"
		"  asxctl svc -s /tmp/asxd.sock list\n"
		"  asxd -t -f /etc/asx/svc.conf\n",
		ASXD_DEFAULT_CONFIG);
}

/* The default socket path into @buf; NULL (with a message) if there is none. */
static const char *default_socket(char *buf, size_t n)
{
	const char *d = svcp_server_dir();

	if (!d) {
		logmsg("no control socket path: give -s PATH (neither RUNTIME_DIRECTORY nor XDG_RUNTIME_DIR is set)");
		return NULL;
	}
	if (svcp_socket_in(buf, n, d)) {
		logmsg("the socket path %s/" SVCP_SOCKET_NAME " is too long", d);
		return NULL;
	}
	if (!strcmp(d, SVCP_SYSTEM_DIR))
		(void)mkdir(d, 0755);
	return buf;
}

/* systemd's readiness protocol, without libsystemd: one datagram. */
static void notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	socklen_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(a.sun_path))
		return;
	memcpy(a.sun_path, path, strlen(path));
	if (path[0] == '@')
		a.sun_path[0] = '\0';	/* abstract */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&a, len) < 0)
		logmsg("cannot notify systemd (%s): %s", path, strerror(errno));
	close(fd);
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		logmsg("socket path too long: %s", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		logmsg("socket: %s", strerror(errno));
		return -1;
	}
	/* a stale socket of a dead asxd is replaced; a live one is not */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode)) {
		int live = svcp_connect(path, 0);

		if (live >= 0) {
			logmsg("%s: another asxd is listening there", path);
			close(live);
			close(fd);
			return -1;
		}
		unlink(path);
	}
	{
		/* 0600: only the owner (and root) may connect */
		mode_t old = umask(0177);
		int r = bind(fd, (struct sockaddr *)&a, sizeof(a));

		umask(old);
		if (r || listen(fd, 16)) {
			logmsg("%s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void reply(int fd, const char *s)
{
	svcp_write_all(fd, s, strlen(s));
}

/* The answer's status line, "ASX-SVC 1 STATUS", in @buf; its length. */
static size_t status_line(char *buf, size_t n, const char *status)
{
	return (size_t)snprintf(buf, n, "%s %d %s", SVCP_MAGIC, SVCP_VERSION, status);
}

static void reply_error(int fd, int err, const char *msg)
{
	char line[SVCP_LINE_MAX + 64], st[32];
	size_t len;

	snprintf(st, sizeof(st), "error %d ", err);
	len = status_line(line, sizeof(line), st);

	if (svcp_escape(line, sizeof(line) - 1, &len, msg))
		len = strlen(line);
	line[len++] = '\n';
	line[len] = '\0';
	reply(fd, line);
}

static void do_list(int fd, struct asx_svc_repo *repo)
{
	struct asx_svc_info *in = NULL;
	int n = asx_svc_list(repo, NULL, 0), got;
	char hdr[32];

	in = calloc((size_t)n + 1, sizeof(*in));
	if (!in) {
		reply_error(fd, ENOMEM, "out of memory");
		return;
	}
	got = asx_svc_list(repo, in, (size_t)n + 1);
	if (got > n + 1)
		got = n + 1;	/* (one thread: cannot grow meanwhile) */
	status_line(hdr, sizeof(hdr), "ok\n");
	reply(fd, hdr);
	for (int i = 0; i < got; i++) {
		struct asx_stream *s;
		/* a Stream of svc.conf has no library: "=" tells it from a linked-in service */
		bool stream = !asx_svc_stream(repo, in[i].name, &s);
		const char *f[6] = {
			in[i].name, in[i].state == ASX_SVC_ACTIVE ? "active" : "suspended",
			stream ? "=" : in[i].library ? in[i].library : "-", in[i].factory,
			in[i].args, in[i].desc,
		};
		char line[4096];
		size_t len = 0;

		for (int k = 0; k < 6; k++) {
			if (k)
				line[len++] = '\t';
			if (svcp_escape(line, sizeof(line) - 2, &len, f[k])) {
				/* no silent cut: the line says it was long */
				len = (size_t)snprintf(line, sizeof(line), "%s\t?\t-\t-\t-\t(too long to list)",
						       in[i].name);
				break;
			}
		}
		line[len++] = '\n';
		line[len] = '\0';
		reply(fd, line);
	}
	reply(fd, ".\n");
	free(in);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void reply_ok(int fd)
{
	char ok[32];

	status_line(ok, sizeof(ok), "ok\n.\n");
	reply(fd, ok);
}

/*
 * The job on the worker thread: the first load, a reload, or the final
 * teardown.  Only it touches the repository while it runs.
 */
enum job_kind { JOB_NONE, JOB_LOAD, JOB_RELOAD, JOB_STOP };

static const char *const job_name[] = {
	[JOB_LOAD] = "the first load", [JOB_RELOAD] = "a reload", [JOB_STOP] = "the teardown",
};

static struct {
	enum job_kind kind;
	pthread_t thread;
	int done;		/* eventfd: the worker says it finished */
	double started, reported;
	int r;
	char err[512];
	struct asx_svc_repo *repo;
	int waiters[PARKED_MAX];	/* clients of `reload` waiting for its answer */
	int nwaiters;
} job = { .done = -1 };

static void *worker(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	if (job.kind == JOB_STOP) {
		asx_svc_repo_destroy(job.repo);
		job.r = 0;
	} else {
		job.r = asx_svc_apply_file(job.repo, config, ASX_SVC_RELOAD, job.err,
					   sizeof(job.err));
	}
	if (write(job.done, &one, sizeof(one)) != sizeof(one))
		abort();	/* (an eventfd's counter cannot overflow from one write) */
	return NULL;
}

static int job_start(enum job_kind kind)
{
	int r;

	job.kind = kind;
	job.started = job.reported = now();
	job.err[0] = '\0';
	if (kind == JOB_RELOAD)
		notify("RELOADING=1");
	r = pthread_create(&job.thread, NULL, worker, NULL);
	if (r) {
		logmsg("cannot start a worker thread: %s", strerror(r));
		job.kind = JOB_NONE;
	}
	return -r;
}

/* The job finished: join it; its kind, and job.r / job.err, tell how it went. */
static enum job_kind job_end(void)
{
	enum job_kind kind = job.kind;
	uint64_t n;

	if (read(job.done, &n, sizeof(n)) != sizeof(n))
		return JOB_NONE;
	pthread_join(job.thread, NULL);
	job.kind = JOB_NONE;
	if (kind == JOB_RELOAD) {
		if (job.r)
			logmsg("reload of %s failed, the running configuration stays: %s", config,
			       job.err);
		else
			logmsg("reloaded %s: %d service(s)", config, asx_svc_list(job.repo, NULL, 0));
		notify("READY=1");
		for (int i = 0; i < job.nwaiters; i++) {
			if (job.r)
				reply_error(job.waiters[i], -job.r, job.err);
			else
				reply_ok(job.waiters[i]);
			close(job.waiters[i]);
		}
		job.nwaiters = 0;
	}
	return kind;
}

/* A request waiting for the job to end (list, suspend, resume, remove). */
struct parked {
	int fd;
	char cmd[16], name[ASX_SVC_NAME_MAX + ASX_MODULE_NAME_MAX + 1];
	uid_t uid;
	double deadline;
};

static struct parked parked[PARKED_MAX];
static int nparked;

static void say_busy(int fd)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "busy: %s of %s has been running for %.1f s; try again later",
		 job_name[job.kind], config, now() - job.started);
	reply_error(fd, EBUSY, msg);
}

/* Why @cmd of @name (a service, or STREAM/MODULE) failed with @r, in words. */
static const char *why(struct asx_svc_repo *repo, const char *cmd, const char *name, int r)
{
	static char buf[256];
	const char *slash = strchr(name, '/');
	const char *done = !strcmp(cmd, "suspend") ? "suspended" : "resumed";
	struct asx_stream *s;
	char stream[ASX_SVC_NAME_MAX];
	int kind;

	if (!slash) {
		if (r == -ENOENT)
			return "no such service";
		if (r == -EOPNOTSUPP && !asx_svc_stream(repo, name, &s)) {
			snprintf(buf, sizeof(buf),
				 "a Stream cannot be %s as a whole: %s one of its modules (%s/MODULE)",
				 done, cmd, name);
			return buf;
		}
		if (r == -EOPNOTSUPP) {
			snprintf(buf, sizeof(buf), "the service has no %s operation", cmd);
			return buf;
		}
		return strerror(-r);
	}
	snprintf(stream, sizeof(stream), "%.*s", (int)(slash - name), name);
	kind = asx_svc_stream(repo, stream, &s);
	if (!strcmp(cmd, "remove"))
		snprintf(buf, sizeof(buf),
			 "a module is not removed by name: reload a file whose stream '%s' lacks it",
			 stream);
	else if (kind == -ENOENT)
		snprintf(buf, sizeof(buf), "no stream '%s'", stream);
	else if (kind == -EMEDIUMTYPE)
		snprintf(buf, sizeof(buf), "'%s' is a service, not a stream", stream);
	else if (r == -ENOENT)
		snprintf(buf, sizeof(buf), "stream '%s' has no module '%s'", stream, slash + 1);
	else if (r == -EOPNOTSUPP)
		snprintf(buf, sizeof(buf),
			 "'%s' is an asx.ko module; only user-space modules can be %s", slash + 1,
			 done);
	else
		return strerror(-r);
	return buf;
}

/* Answer @cmd (list, suspend, resume, remove) now: no job runs. */
static void answer(int fd, struct asx_svc_repo *repo, const char *cmd, const char *name, uid_t uid)
{
	int r;

	if (!strcmp(cmd, "list")) {
		do_list(fd, repo);
		return;
	}
	r = !strcmp(cmd, "suspend") ? asx_svc_suspend(repo, name) :
	    !strcmp(cmd, "resume") ? asx_svc_resume(repo, name) : asx_svc_remove(repo, name);
	if (r) {
		char msg[400];	/* cmd, name (at most 96) and why() (at most 255) */

		snprintf(msg, sizeof(msg), "%s %s: %s", cmd, name, why(repo, cmd, name, r));
		reply_error(fd, -r, msg);
	} else {
		logmsg("%s %s (asked by uid %u)", cmd, name, (unsigned int)uid);
		reply_ok(fd);
	}
}

static bool reload_pending;		/* by SIGHUP or a client, while a job ran */
static int next_waiters[PARKED_MAX];	/* clients of that reload */
static int nnext;

/* Read one client's request and answer it, or park it until the job ends. */
static void serve(int lfd, struct asx_svc_repo *repo)
{
	struct timeval tv = { .tv_sec = 2 };
	/* a service, or STREAM/MODULE */
	char line[SVCP_LINE_MAX + 1], cmd[16] = "", name[SVCP_LINE_MAX + 1] = "";
	char extra[2];
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	size_t len = 0;
	int fd, ver = 0, n;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		char msg[96];

		snprintf(msg, sizeof(msg), "permission denied: uid %u may not control this asxd",
			 (unsigned int)cred.uid);
		logmsg("refused a client: %s", msg);
		reply_error(fd, EPERM, msg);
		close(fd);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (len < SVCP_LINE_MAX) {
		ssize_t got = recv(fd, line + len, SVCP_LINE_MAX - len, 0);

		if (got <= 0)
			break;
		len += (size_t)got;
		if (memchr(line, '\n', len))
			break;
	}
	line[len] = '\0';
	if (!memchr(line, '\n', len)) {
		reply_error(fd, EPROTO, len >= SVCP_LINE_MAX ? "request line too long" :
			    "no complete request line within 2 s");
		close(fd);
		return;
	}
	*strchr(line, '\n') = '\0';
	_Static_assert(SVCP_LINE_MAX == 512, "the widths below");
	n = sscanf(line, SVCP_MAGIC " %d %15s %512s %1s", &ver, cmd, name, extra);
	if (verbose)
		logmsg("request from uid %u: %s", (unsigned int)cred.uid, line);
	if (n >= 2 && ver == SVCP_VERSION_STREAM) {	/* put/get a Stream's messages */
		svcd_stream_request(fd, repo, line, job.kind != JOB_NONE);
	} else if (n < 2 || ver != SVCP_VERSION) {
		reply_error(fd, EPROTO, n < 2 ? "not an ASX-SVC request" :
			    "unsupported protocol version (this asxd speaks 1, and 2 for put/get)");
	} else if (!strcmp(cmd, "reload") && n == 2) {
		if (job.kind == JOB_NONE) {
			job.waiters[0] = fd;
			job.nwaiters = 1;
			if (!job_start(JOB_RELOAD))
				return;		/* answered when it ends */
			job.nwaiters = 0;
			reply_error(fd, EAGAIN, "cannot start a reload (no thread)");
		} else if (nnext < PARKED_MAX) {
			/* after the running job: the file may have changed since it began */
			reload_pending = true;
			next_waiters[nnext++] = fd;
			return;
		} else {
			say_busy(fd);
		}
	} else if (n == 3 && svcp_name_bad(name)) {
		char msg[SVCP_LINE_MAX + 96];

		snprintf(msg, sizeof(msg), "'%s' cannot be a service name: %s", name,
			 svcp_name_bad(name));
		reply_error(fd, EINVAL, msg);
	} else if ((!strcmp(cmd, "list") && n == 2) ||
		   ((!strcmp(cmd, "suspend") || !strcmp(cmd, "resume") || !strcmp(cmd, "remove")) &&
		    n == 3)) {
		if (job.kind == JOB_NONE) {
			answer(fd, repo, cmd, name, cred.uid);
		} else if (nparked < PARKED_MAX) {
			struct parked *pk = &parked[nparked++];

			pk->fd = fd;
			strcpy(pk->cmd, cmd);
			strcpy(pk->name, name);
			pk->uid = cred.uid;
			pk->deadline = now() + BUSY_WAIT;
			return;		/* answered when the job ends, or "busy" */
		} else {
			say_busy(fd);
		}
	} else {
		reply_error(fd, EINVAL,
			    "unknown request: list, reload, or suspend/resume/remove NAME");
	}
	close(fd);
}

/* Answer the parked requests: all (@all, the job ended) or those past their deadline. */
static void unpark(struct asx_svc_repo *repo, bool all, bool stopping)
{
	double t = now();
	int k = 0;

	for (int i = 0; i < nparked; i++) {
		struct parked *pk = &parked[i];

		if (!all && t < pk->deadline) {
			parked[k++] = *pk;
			continue;
		}
		if (stopping)
			reply_error(pk->fd, ESHUTDOWN, "asxd is stopping");
		else if (job.kind == JOB_NONE)
			answer(pk->fd, repo, pk->cmd, pk->name, pk->uid);
		else
			say_busy(pk->fd);
		close(pk->fd);
	}
	nparked = k;
}

/* SIGTERM's bound passed, or a second signal came: end now, services as they are. */
static void __attribute__((noreturn)) stop_now(const char *sock, const char *why)
{
	logmsg("%s: exiting without finalising the services", why);
	notify("STOPPING=1");
	if (sock)
		unlink(sock);
	_exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "socket", required_argument, NULL, 's' },
		{ "test", no_argument, NULL, 't' },
		{ "stop-timeout", required_argument, NULL, 'T' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char sockbuf[256], err[512];
	const char *sock = NULL;
	struct asx_svc_repo *repo;
	bool test = false, stopping = false, loading = true;
	double stop_by = 0;
	sigset_t sigs;
	int c, sfd, lfd, r;

	while ((c = getopt_long(argc, argv, "f:s:tT:vhV", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'T':
			stop_timeout = strtod(optarg, &end);
			if (*end || end == optarg || !(stop_timeout > 0 && stop_timeout <= 3600)) {
				fprintf(stderr, "asxd: --stop-timeout wants seconds, more than 0 and at most 3600\n");
				return 2;
			}
			break;
		case 'f': config = optarg; break;
		case 's': sock = optarg; break;
		case 't': test = true; break;
		case 'v': verbose = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("asxd (libasx %s)\n", asx_version()); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "asxd: unexpected argument '%s' (asxd --help)\n", argv[optind]);
		return 2;
	}
	if (test) {
		/* a dry run against what a first load meets: an empty repository */
		if (asx_svc_repo_create(&repo)) {
			fprintf(stderr, "asxd: out of memory\n");
			return 1;
		}
		r = asx_svc_check(repo, config, ASX_SVC_RELOAD, err, sizeof(err));
		asx_svc_repo_destroy(repo);
		if (r) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		printf("%s: ok (parsed and planned; nothing was loaded or started)\n", config);
		return 0;
	}
	if (!sock && !(sock = default_socket(sockbuf, sizeof(sockbuf))))
		return 1;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	/* before any thread: the worker inherits the mask, the signals come to sfd */
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	job.done = eventfd(0, EFD_CLOEXEC);
	if (sfd < 0 || job.done < 0 || asx_svc_repo_create(&repo)) {
		logmsg("cannot start: %s", strerror(errno));
		return 1;
	}
	job.repo = repo;
	/*
	 * The socket first: a second asxd on it stops here, before it starts
	 * (and finalises) every service for nothing.  Clients that connect
	 * meanwhile wait in the backlog until the services run.
	 */
	lfd = listen_on(sock);
	if (lfd < 0) {
		asx_svc_repo_destroy(repo);
		return 1;
	}
	if (job_start(JOB_LOAD)) {
		close(lfd);
		unlink(sock);
		asx_svc_repo_destroy(repo);
		return 1;
	}
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = sfd, .events = POLLIN }, { .fd = job.done, .events = POLLIN },
			/* not during the first load: clients wait in the backlog */
			{ .fd = stopping || loading ? -1 : lfd, .events = POLLIN },
		};
		double t = now(), wake = job.kind != JOB_NONE ? job.reported + REPORT_EVERY : -1;
		int timeout;

		for (int i = 0; i < nparked; i++)
			if (wake < 0 || parked[i].deadline < wake)
				wake = parked[i].deadline;
		if (stopping && (wake < 0 || stop_by < wake))
			wake = stop_by;
		timeout = wake < 0 ? -1 : wake <= t ? 0 : (int)((wake - t) * 1000) + 1;
		if (poll(p, 3, timeout) < 0) {
			if (errno == EINTR)
				continue;
			logmsg("poll: %s", strerror(errno));
			stop_now(stopping ? NULL : sock, "poll failed");
		}
		t = now();
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGHUP && !stopping) {
					if (job.kind == JOB_NONE)
						job_start(JOB_RELOAD);
					else
						reload_pending = true;
				} else if (si.ssi_signo != SIGHUP && stopping) {
					stop_now(NULL, "a second signal while stopping");
				} else if (si.ssi_signo != SIGHUP) {
					logmsg("%s: stopping", strsignal((int)si.ssi_signo));
					notify("STOPPING=1");
					stopping = true;
					stop_by = t + stop_timeout;
					/* new clients get no answer: the socket goes now */
					close(lfd);
					unlink(sock);
					unpark(repo, true, true);
					for (int i = 0; i < nnext; i++) {
						reply_error(next_waiters[i], ESHUTDOWN, "asxd is stopping");
						close(next_waiters[i]);
					}
					nnext = 0;
					reload_pending = false;
					if (job.kind != JOB_NONE)
						logmsg("waiting up to %g s for %s to end", stop_timeout,
						       job_name[job.kind]);
					else if (job_start(JOB_STOP))
						stop_now(NULL, "no thread for the teardown");
				}
			}
		}
		if (p[1].revents & POLLIN) {
			enum job_kind done = job_end();

			if (done == JOB_STOP)
				break;
			if (done == JOB_LOAD) {
				loading = false;
				if (job.r) {
					logmsg("%s", job.err);
					if (!stopping) {
						close(lfd);
						unlink(sock);
					}
					/* nothing runs: a failed load leaves the repository empty */
					asx_svc_repo_destroy(repo);
					close(sfd);
					return 1;
				}
				if (!stopping) {
					logmsg("running %s: %d service(s); control socket %s", config,
					       asx_svc_list(repo, NULL, 0), sock);
					notify("READY=1");
				}
			}
			if (stopping) {
				if (job_start(JOB_STOP))
					stop_now(NULL, "no thread for the teardown");
			} else {
				unpark(repo, true, false);
				if (reload_pending) {
					reload_pending = false;
					memcpy(job.waiters, next_waiters, sizeof(next_waiters));
					job.nwaiters = nnext;
					nnext = 0;
					job_start(JOB_RELOAD);
				}
			}
		}
		if (job.kind != JOB_NONE && t >= job.reported + REPORT_EVERY) {
			job.reported = t;
			logmsg("%s of %s still running after %.0f s%s", job_name[job.kind], config,
			       t - job.started,
			       stopping ? "" : " (control requests meanwhile are answered 'busy')");
		}
		if (stopping && t >= stop_by && job.kind != JOB_NONE) {
			char why[96];

			snprintf(why, sizeof(why), "%s still running %g s after the signal",
				 job_name[job.kind], stop_timeout);
			stop_now(NULL, why);
		}
		if (!stopping && (p[2].revents & POLLIN))
			serve(lfd, repo);
		unpark(repo, false, false);
	}
	close(job.done);
	close(sfd);
	logmsg("stopped");
	return 0;
}
