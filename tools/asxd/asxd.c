// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asxd - run the services of a svc.conf (asxd(8), Documentation/svc.rst).
 *
 * The main thread runs the repository's Reactor (asx_svc_repo_reactor()):
 * its handlers are the signals (SIGHUP reloads, SIGTERM and SIGINT stop),
 * the control socket and each client (`asxctl svc`) while its request is
 * read (at most two seconds, a timer each: a slow client holds up no
 * other and no service), a worker's "done" eventfd and a timer for
 * deadlines; the reactive services' handles
 * are on the same Reactor, so their callbacks run on this thread too.  What
 * may take long -- the first load, a reload, the final teardown, all of
 * which run services' init and fini -- runs on a worker thread, so the
 * loop never waits on a service's init or fini: a request that needs the
 * repository while a job runs waits up to BUSY_WAIT for it, then is
 * answered "busy" (EBUSY) with how long the job has run; a job that runs
 * long is logged every REPORT_EVERY; and SIGTERM ends asxd within
 * --stop-timeout whatever a service does (the services are then not
 * finalised, and it exits 1).  With systemd's socket activation
 * (LISTEN_FDS), the control socket is the one systemd passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <asx/reactor.h>
#include <asx/stream.h>
#include <asx/svc.h>

#include "svcasc.h"
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
#define ANSWER_TIMEOUT_S 2	/* s a send of an answer may wait for its client to read */

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
		"                      $XDG_RUNTIME_DIR/asxd.sock); started by a systemd\n"
		"                      socket unit (LISTEN_FDS), the socket systemd passed\n"
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
	/* after a timeout the descriptor is shut down: later lines fail with EPIPE */
	if (svcp_write_all(fd, s, strlen(s)) == -EAGAIN)
		logmsg("a control client read nothing of its answer for %d s: answer cut",
		       ANSWER_TIMEOUT_S);
}

/*
 * Answers are written blocking (small, and to a peer that asked), each
 * send at most ANSWER_TIMEOUT_S: a client that asks and never reads holds
 * the loop, and every reactive service, that long and no longer.
 */
static void answer_blocking(int fd)
{
	struct timeval tv = { .tv_sec = ANSWER_TIMEOUT_S };

	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
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

/* The teardown: every service removed, the last started first. */
static void remove_all(struct asx_svc_repo *repo)
{
	int n = asx_svc_list(repo, NULL, 0);
	struct asx_svc_info *in = calloc((size_t)n + 1, sizeof(*in));

	if (!in)
		return;		/* (then asx_svc_repo_destroy() does it, on the main thread) */
	n = asx_svc_list(repo, in, (size_t)n + 1);
	while (n-- > 0)
		(void)asx_svc_remove(repo, in[n].name);
	free(in);
}

static void *worker(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	if (job.kind == JOB_STOP) {
		/* the repository (and its Reactor) is destroyed by main, after its loop */
		remove_all(job.repo);
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

/*
 * Answer one client's request (@line, @len bytes as read, its first line
 * complete unless it is too long or the client gave up), or park it until
 * the job ends.
 */
static void request(int fd, char *line, size_t len, uid_t uid, struct asx_svc_repo *repo)
{
	/* a service, or STREAM/MODULE */
	char cmd[16] = "", name[SVCP_LINE_MAX + 1] = "";
	char extra[2];
	int ver = 0, n;

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
		logmsg("request from uid %u: %s", (unsigned int)uid, line);
	if (n >= 2 && ver == SVCP_VERSION_STREAM) {	/* put/get a Stream's messages */
		svcd_stream_request(fd, repo, line, job.kind != JOB_NONE);
	} else if (n >= 2 && ver == SVCP_VERSION_ASC) {	/* the ASCs, their VPs and threads */
		svcd_asc_request(fd, line);
	} else if (n < 2 || ver != SVCP_VERSION) {
		reply_error(fd, EPROTO, n < 2 ? "not an ASX-SVC request" :
			    "unsupported protocol version (this asxd speaks 1, 2 for put/get and 3 for asc)");
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
			answer(fd, repo, cmd, name, uid);
		} else if (nparked < PARKED_MAX) {
			struct parked *pk = &parked[nparked++];

			pk->fd = fd;
			strcpy(pk->cmd, cmd);
			strcpy(pk->name, name);
			pk->uid = uid;
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

/*
 * systemd's socket activation (sd_listen_fds(3)), without libsystemd:
 * LISTEN_PID is ours and LISTEN_FDS says how many descriptors from 3 on
 * are listening sockets.  The control socket is the one LISTEN_FDNAMES
 * names "control", else the only AF_UNIX stream socket; the others are
 * closed (services listen on their own addresses), each said in the log.
 * The variables are removed, so that no child sees them.  The descriptor,
 * -1 if not activated, -2 (said) if activated without a usable one.
 */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *nfds = getenv("LISTEN_FDS");
	char names[1024] = "", *save = NULL, *name;
	long n, want = -1;
	char *end;

	if (!pid || !nfds)
		return -1;
	errno = 0;
	if (strtol(pid, &end, 10) != (long)getpid() || *end || errno)
		return -1;	/* meant for another process */
	n = strtol(nfds, &end, 10);
	if (*end || n < 1 || n > 64) {
		logmsg("LISTEN_FDS=%s: not a count of descriptors (1-64)", nfds);
		return -2;
	}
	if (getenv("LISTEN_FDNAMES"))
		snprintf(names, sizeof(names), "%s", getenv("LISTEN_FDNAMES"));
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	name = strtok_r(names, ":", &save);
	for (long i = 0; i < n; i++, name = name ? strtok_r(NULL, ":", &save) : NULL) {
		int fd = 3 + (int)i, dom = 0, type = 0, acc = 0;
		socklen_t l = sizeof(int);

		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &l);
		l = sizeof(int);
		getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
		l = sizeof(int);
		getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l);
		bool fits = dom == AF_UNIX && type == SOCK_STREAM && acc;

		if (want < 0 && fits && (name ? !strcmp(name, "control") : n == 1))
			want = fd;
		else if (want < 0 && fits && !name && n > 1 && !getenv("LISTEN_FDNAMES"))
			want = fd;	/* unnamed: the first AF_UNIX stream socket */
		else {
			logmsg("socket activation: descriptor %d (%s) is not the control socket; closed",
			       fd, name ? name : "unnamed");
			close(fd);
		}
	}
	if (want < 0)
		logmsg("socket activation: no listening AF_UNIX stream socket (named \"control\" if named) among LISTEN_FDS=%ld",
		       n);
	return want < 0 ? -2 : (int)want;
}

/* The main loop's state (all of it touched on the main thread only). */
static struct {
	struct asx_reactor *rx;
	struct asx_svc_repo *repo;
	const char *sock;		/* the path, unlinked at the end if ours */
	bool own_sock;			/* made by asxd, not passed by systemd */
	int lfd;
	bool stopping, ctl_on;
	double stop_by;
	int64_t tick;			/* the deadline timer, or 0 */
	int status;			/* asxd's exit status */
} m = { .lfd = -1 };

static struct asx_event_handler sig_eh, done_eh, ctl_eh, tick_eh;

/*
 * A control client whose request line is being read: its descriptor and a
 * 2-s timer on the loop, so that a slow client holds up neither the other
 * clients nor the reactive services.
 */
struct client {
	struct asx_event_handler eh;
	int fd;				/* -1 once handed on (answered, parked) */
	uid_t uid;
	size_t len;
	char line[SVCP_LINE_MAX + 1];
};

static struct client *container_of_client(struct asx_event_handler *eh)
{
	return (struct client *)(void *)((char *)eh - offsetof(struct client, eh));
}

static void client_done(struct client *c)
{
	int fd = c->fd;

	c->fd = -1;
	(void)asx_reactor_remove_handler(m.rx, &c->eh);	/* its descriptor and timer */
	answer_blocking(fd);
	request(fd, c->line, c->len, c->uid, m.repo);
}

static int client_input(struct asx_event_handler *eh, int fd)
{
	struct client *c = container_of_client(eh);
	ssize_t got = recv(fd, c->line + c->len, SVCP_LINE_MAX - c->len, 0);

	if (got < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (got > 0)
		c->len += (size_t)got;
	c->line[c->len] = '\0';
	if (got <= 0 || c->len >= SVCP_LINE_MAX || memchr(c->line, '\n', c->len))
		client_done(c);
	return 0;
}

static int client_timeout(struct asx_event_handler *eh, const struct timespec *ts, void *arg)
{
	(void)ts;
	(void)arg;
	client_done(container_of_client(eh));	/* no full line: request() says so */
	return 0;
}

static int client_close(struct asx_event_handler *eh, int fd, unsigned int mask)
{
	struct client *c = container_of_client(eh);

	(void)fd;
	(void)mask;
	if (c->fd >= 0) {	/* asxd stops with the request unread */
		close(c->fd);
		c->fd = -1;
	}
	asx_event_handler_put(&c->eh);
	return 0;
}

static void client_release(struct asx_event_handler *eh)
{
	free(container_of_client(eh));
}

static const struct asx_event_handler_ops client_ops = {
	.handle_input = client_input, .handle_timeout = client_timeout,
	.handle_close = client_close, .release = client_release,
};

/* Accept one client: refused by uid at once, else its request read on the loop. */
static void serve(int lfd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct client *c;
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		char msg[96];

		snprintf(msg, sizeof(msg), "permission denied: uid %u may not control this asxd",
			 (unsigned int)cred.uid);
		logmsg("refused a client: %s", msg);
		answer_blocking(fd);
		reply_error(fd, EPERM, msg);
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	asx_event_handler_init(&c->eh, &client_ops);
	c->fd = fd;
	c->uid = cred.uid;
	if (asx_reactor_register_fd(m.rx, fd, &c->eh, ASX_EV_READ) ||
	    asx_reactor_schedule_timer(m.rx, &c->eh, NULL, 2000000000ull, 0) < 0) {
		/* (handle_close closes it if it was registered) */
		if (asx_reactor_remove_handler(m.rx, &c->eh)) {
			close(fd);
			asx_event_handler_put(&c->eh);
		}
	}
}

static void close_socket(void)
{
	if (m.ctl_on)
		(void)asx_reactor_remove_fd(m.rx, m.lfd, ASX_EV_READ);
	m.ctl_on = false;
	if (m.lfd >= 0)
		close(m.lfd);
	m.lfd = -1;
	if (m.own_sock)
		unlink(m.sock);
}

static void start_stop(void)
{
	if (job_start(JOB_STOP))
		stop_now(NULL, "no thread for the teardown");
}

static int on_signal(struct asx_event_handler *eh, int signo, const struct signalfd_siginfo *si)
{
	(void)eh;
	(void)si;
	if (signo == SIGHUP && !m.stopping) {
		if (job.kind == JOB_NONE)
			job_start(JOB_RELOAD);
		else
			reload_pending = true;
	} else if (signo != SIGHUP && m.stopping) {
		stop_now(NULL, "a second signal while stopping");
	} else if (signo != SIGHUP) {
		logmsg("%s: stopping", strsignal(signo));
		notify("STOPPING=1");
		m.stopping = true;
		m.stop_by = now() + stop_timeout;
		/* new clients get no answer: the socket goes now */
		close_socket();
		unpark(m.repo, true, true);
		for (int i = 0; i < nnext; i++) {
			reply_error(next_waiters[i], ESHUTDOWN, "asxd is stopping");
			close(next_waiters[i]);
		}
		nnext = 0;
		reload_pending = false;
		if (job.kind != JOB_NONE)
			logmsg("waiting up to %g s for %s to end", stop_timeout, job_name[job.kind]);
		else
			start_stop();
	}
	return 0;
}

static int on_control(struct asx_event_handler *eh, int fd)
{
	(void)eh;
	if (!m.stopping)
		serve(fd);
	return 0;
}

static int on_done(struct asx_event_handler *eh, int fd)
{
	enum job_kind done = job_end();

	(void)eh;
	(void)fd;
	if (done == JOB_STOP) {
		asx_reactor_end_loop(m.rx);
		return 0;
	}
	if (done == JOB_LOAD) {
		if (job.r) {
			logmsg("%s", job.err);
			/* nothing runs: a failed load leaves the repository empty */
			if (!m.stopping)
				close_socket();
			m.status = 1;
			asx_reactor_end_loop(m.rx);
			return 0;
		}
		if (!m.stopping) {
			/* clients waited in the backlog during the first load */
			if (asx_reactor_register_fd(m.rx, m.lfd, &ctl_eh, ASX_EV_READ))
				stop_now(m.own_sock ? m.sock : NULL, "cannot watch the control socket");
			m.ctl_on = true;
			logmsg("running %s: %d service(s); control socket %s", config,
			       asx_svc_list(m.repo, NULL, 0), m.sock);
			notify("READY=1");
		}
	}
	if (m.stopping) {
		start_stop();
	} else {
		unpark(m.repo, true, false);
		if (reload_pending) {
			reload_pending = false;
			memcpy(job.waiters, next_waiters, sizeof(next_waiters));
			job.nwaiters = nnext;
			nnext = 0;
			job_start(JOB_RELOAD);
		}
	}
	return 0;
}

/* The deadlines: a long job's report, SIGTERM's bound, parked requests' waits. */
static int on_tick(struct asx_event_handler *eh, const struct timespec *ts, void *arg)
{
	double t = now();

	(void)eh;
	(void)ts;
	(void)arg;
	m.tick = 0;
	if (job.kind != JOB_NONE && t >= job.reported + REPORT_EVERY) {
		job.reported = t;
		logmsg("%s of %s still running after %.0f s%s", job_name[job.kind], config,
		       t - job.started,
		       m.stopping ? "" : " (control requests meanwhile are answered 'busy')");
	}
	if (m.stopping && t >= m.stop_by && job.kind != JOB_NONE) {
		char why[96];

		snprintf(why, sizeof(why), "%s still running %g s after the signal",
			 job_name[job.kind], stop_timeout);
		stop_now(NULL, why);
	}
	unpark(m.repo, false, false);
	return 0;
}

/* Arm the deadline timer for the earliest deadline (after every event of the loop). */
static void rearm(void)
{
	double t = now(), wake = job.kind != JOB_NONE ? job.reported + REPORT_EVERY : -1;

	for (int i = 0; i < nparked; i++)
		if (wake < 0 || parked[i].deadline < wake)
			wake = parked[i].deadline;
	if (m.stopping && (wake < 0 || m.stop_by < wake))
		wake = m.stop_by;
	if (m.tick)
		(void)asx_reactor_cancel_timer(m.rx, m.tick, NULL);
	m.tick = 0;
	if (wake >= 0) {
		int64_t id = asx_reactor_schedule_timer(m.rx, &tick_eh, NULL,
							wake <= t ? 0 : (uint64_t)((wake - t) * 1e9) + 1000000,
							0);

		if (id < 0)
			stop_now(m.stopping || !m.own_sock ? NULL : m.sock, "cannot arm a timer");
		m.tick = id;
	}
}

static int on_signal_r(struct asx_event_handler *eh, int signo, const struct signalfd_siginfo *si)
{
	on_signal(eh, signo, si);
	rearm();
	return 0;
}

static int on_control_r(struct asx_event_handler *eh, int fd)
{
	on_control(eh, fd);
	rearm();
	return 0;
}

static int on_done_r(struct asx_event_handler *eh, int fd)
{
	on_done(eh, fd);
	rearm();
	return 0;
}

static int on_tick_r(struct asx_event_handler *eh, const struct timespec *ts, void *arg)
{
	on_tick(eh, ts, arg);
	rearm();
	return 0;
}

static const struct asx_event_handler_ops sig_ops = { .handle_signal = on_signal_r };
static const struct asx_event_handler_ops ctl_ops = { .handle_input = on_control_r };
static const struct asx_event_handler_ops done_ops = { .handle_input = on_done_r };
static const struct asx_event_handler_ops tick_ops = { .handle_timeout = on_tick_r };

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
	static const int signals[] = { SIGHUP, SIGTERM, SIGINT };
	char sockbuf[256], err[512];
	const char *sock = NULL;
	struct asx_svc_repo *repo;
	bool test = false;
	sigset_t sigs;
	int c, r;

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
	m.lfd = activated_socket();
	if (m.lfd == -2)
		return 1;
	if (m.lfd >= 0) {
		struct sockaddr_un a;
		socklen_t al = sizeof(a);

		/* systemd made it and removes it: only its name, for the log */
		if (!getsockname(m.lfd, (struct sockaddr *)&a, &al) && al > offsetof(struct sockaddr_un, sun_path) &&
		    a.sun_path[0])
			snprintf(sockbuf, sizeof(sockbuf), "%.*s (from systemd)",
				 (int)(al - offsetof(struct sockaddr_un, sun_path)), a.sun_path);
		else
			snprintf(sockbuf, sizeof(sockbuf), "descriptor %d (from systemd)", m.lfd);
		sock = sockbuf;
	} else if (!sock && !(sock = default_socket(sockbuf, sizeof(sockbuf)))) {
		return 1;
	}
	m.sock = sock;
	sigemptyset(&sigs);
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		sigaddset(&sigs, signals[i]);
	/* before any thread: the worker inherits the mask, the signals come to the Reactor */
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	job.done = eventfd(0, EFD_CLOEXEC);
	if (job.done < 0 || asx_svc_repo_create(&repo) || asx_svc_repo_reactor(repo, &m.rx)) {
		logmsg("cannot start: %s", strerror(errno));
		return 1;
	}
	job.repo = m.repo = repo;
	asx_event_handler_init(&sig_eh, &sig_ops);
	asx_event_handler_init(&ctl_eh, &ctl_ops);
	asx_event_handler_init(&done_eh, &done_ops);
	asx_event_handler_init(&tick_eh, &tick_ops);
	r = asx_reactor_register_fd(m.rx, job.done, &done_eh, ASX_EV_READ);
	for (size_t i = 0; !r && i < sizeof(signals) / sizeof(signals[0]); i++)
		r = asx_reactor_register_signal(m.rx, signals[i], &sig_eh);
	if (r) {
		logmsg("cannot start: %s", strerror(-r));
		asx_svc_repo_destroy(repo);
		return 1;
	}
	/*
	 * The socket first: a second asxd on it stops here, before it starts
	 * (and finalises) every service for nothing.  Clients that connect
	 * meanwhile wait in the backlog until the services run.
	 */
	if (m.lfd < 0) {
		m.lfd = listen_on(sock);
		m.own_sock = true;
	}
	if (m.lfd < 0) {
		asx_svc_repo_destroy(repo);
		return 1;
	}
	if (job_start(JOB_LOAD)) {
		close_socket();
		asx_svc_repo_destroy(repo);
		return 1;
	}
	rearm();
	r = asx_reactor_run(m.rx);
	if (r) {
		logmsg("the event loop failed: %s", strerror(-r));
		stop_now(m.stopping ? NULL : m.sock, "the event loop failed");
	}
	if (m.tick)
		(void)asx_reactor_cancel_timer(m.rx, m.tick, NULL);
	close_socket();
	asx_svc_repo_destroy(repo);	/* its Reactor with it: our handlers' last registrations */
	close(job.done);
	if (!m.status)
		logmsg("stopped");
	return m.status;
}
