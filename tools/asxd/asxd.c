// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * asxd - run the services of a svc.conf (asxd(8), Documentation/svc.rst).
 *
 * One thread: poll() on a signalfd (SIGHUP reloads, SIGTERM and SIGINT
 * stop) and on the control socket, whose clients (`asxctl svc`) are served
 * one at a time, each given at most two seconds to send its request.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <asx/stream.h>
#include <asx/svc.h>

#include "svcproto.h"

#ifndef ASXD_DEFAULT_CONFIG
#define ASXD_DEFAULT_CONFIG "/etc/asx/svc.conf"
#endif

static const char *config = ASXD_DEFAULT_CONFIG;
static bool verbose;

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
		"Usage: asxd [-f FILE] [-s SOCKET] [-v]\n"
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
		"  -t, --test          check the file's syntax and exit (0: good)\n"
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
	const char *d = getenv("RUNTIME_DIRECTORY");	/* systemd's RuntimeDirectory= */

	if (!d && geteuid() == 0)
		d = "/run/asx";
	if (!d)
		d = getenv("XDG_RUNTIME_DIR");
	if (!d) {
		logmsg("no control socket path: give -s PATH (neither RUNTIME_DIRECTORY nor XDG_RUNTIME_DIR is set)");
		return NULL;
	}
	if ((size_t)snprintf(buf, n, "%s/asxd.sock", d) >= n) {
		logmsg("the socket path %s/asxd.sock is too long", d);
		return NULL;
	}
	if (!strcmp(d, "/run/asx"))
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
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			logmsg("%s: another asxd is listening there", path);
			close(fd);
			return -1;
		}
		unlink(path);
		close(fd);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
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
	size_t n = strlen(s);

	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void reply_error(int fd, int err, const char *msg)
{
	char line[SVCP_LINE_MAX + 64];
	size_t len = (size_t)snprintf(line, sizeof(line), "%s %d error %d ", SVCP_MAGIC,
				      SVCP_VERSION, err);

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
	snprintf(hdr, sizeof(hdr), "%s %d ok\n", SVCP_MAGIC, SVCP_VERSION);
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

static void reload(struct asx_svc_repo *repo, int client)
{
	char err[512];
	int r;

	notify("RELOADING=1");
	r = asx_svc_apply_file(repo, config, ASX_SVC_RELOAD, err, sizeof(err));
	if (r)
		logmsg("reload of %s failed, the running configuration stays: %s", config, err);
	else
		logmsg("reloaded %s: %d service(s)", config, asx_svc_list(repo, NULL, 0));
	notify("READY=1");
	if (client < 0)
		return;
	if (r) {
		reply_error(client, -r, err);
	} else {
		char ok[32];

		snprintf(ok, sizeof(ok), "%s %d ok\n.\n", SVCP_MAGIC, SVCP_VERSION);
		reply(client, ok);
	}
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

static void serve(int lfd, struct asx_svc_repo *repo)
{
	struct timeval tv = { .tv_sec = 2 };
	/* a service, or STREAM/MODULE */
	char line[SVCP_LINE_MAX + 1], cmd[16] = "", name[ASX_SVC_NAME_MAX + ASX_MODULE_NAME_MAX + 1] = "";
	char extra[2];
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	size_t len = 0;
	int fd, ver = 0, n, r = 0;

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
	n = sscanf(line, SVCP_MAGIC " %d %15s %96s %1s", &ver, cmd, name, extra);
	if (verbose)
		logmsg("request from uid %u: %s", (unsigned int)cred.uid, line);
	if (n < 2 || ver != SVCP_VERSION) {
		reply_error(fd, EPROTO, n < 2 ? "not an ASX-SVC request" :
			    "unsupported protocol version (this asxd speaks 1)");
	} else if (!strcmp(cmd, "list") && n == 2) {
		do_list(fd, repo);
	} else if (!strcmp(cmd, "reload") && n == 2) {
		reload(repo, fd);
	} else if ((!strcmp(cmd, "suspend") || !strcmp(cmd, "resume") || !strcmp(cmd, "remove")) &&
		   n == 3) {
		r = !strcmp(cmd, "suspend") ? asx_svc_suspend(repo, name) :
		    !strcmp(cmd, "resume") ? asx_svc_resume(repo, name) : asx_svc_remove(repo, name);
		if (r) {
			char msg[400];	/* cmd, name (at most 96) and why() (at most 255) */

			snprintf(msg, sizeof(msg), "%s %s: %s", cmd, name, why(repo, cmd, name, r));
			reply_error(fd, -r, msg);
		} else {
			char ok[32];

			logmsg("%s %s (asked by uid %u)", cmd, name, (unsigned int)cred.uid);
			snprintf(ok, sizeof(ok), "%s %d ok\n.\n", SVCP_MAGIC, SVCP_VERSION);
			reply(fd, ok);
		}
	} else {
		reply_error(fd, EINVAL,
			    "unknown request: list, reload, or suspend/resume/remove NAME");
	}
	close(fd);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "socket", required_argument, NULL, 's' },
		{ "test", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char sockbuf[256], err[512];
	const char *sock = NULL;
	struct asx_svc_repo *repo;
	bool test = false, stop = false;
	sigset_t sigs;
	int c, sfd, lfd, r;

	while ((c = getopt_long(argc, argv, "f:s:tvhV", opts, NULL)) != -1) {
		switch (c) {
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
		r = asx_svc_check_file(config, err, sizeof(err));
		if (r) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		printf("%s: syntax ok\n", config);
		return 0;
	}
	if (!sock && !(sock = default_socket(sockbuf, sizeof(sockbuf))))
		return 1;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0 || asx_svc_repo_create(&repo)) {
		logmsg("cannot start: %s", strerror(errno));
		return 1;
	}
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
	r = asx_svc_apply_file(repo, config, ASX_SVC_RELOAD, err, sizeof(err));
	if (r) {
		logmsg("%s", err);
		close(lfd);
		unlink(sock);
		asx_svc_repo_destroy(repo);
		return 1;
	}
	logmsg("running %s: %d service(s); control socket %s", config,
	       asx_svc_list(repo, NULL, 0), sock);
	notify("READY=1");
	while (!stop) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN }, { .fd = lfd, .events = POLLIN } };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			logmsg("poll: %s", strerror(errno));
			break;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					reload(repo, -1);
				} else {
					logmsg("%s: stopping", strsignal((int)si.ssi_signo));
					stop = true;
				}
			}
		}
		if (!stop && (p[1].revents & POLLIN))
			serve(lfd, repo);
	}
	notify("STOPPING=1");
	close(lfd);
	unlink(sock);
	asx_svc_repo_destroy(repo);
	close(sfd);
	logmsg("stopped");
	return 0;
}
