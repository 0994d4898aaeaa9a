// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * echo.c - an example service for asxd: a TCP (or UNIX) echo server over
 * libasx's IPC SAP, built as echo.so (Documentation/svc.rst).
 *
 *	dynamic Echo Service_Object * /usr/lib/asx/services/echo.so:asx_echo_make() "-a 127.0.0.1:7777"
 *
 * Parameters: -a ADDRESS (any form asx_addr_parse() reads; default
 * 127.0.0.1:7777).  One thread serves one connection at a time.  Suspended,
 * it stops accepting: new connections wait in the listen queue, and are
 * served, not dropped, when it resumes.
 */
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <asx/addr.h>
#include <asx/sock.h>
#include <asx/svc.h>

struct echo {
	struct asx_sock_acceptor acc;
	bool open;
	char where[ASX_ADDR_STRLEN];
	int wake;			/* eventfd: fini or resume */
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	bool stop, suspended;
	unsigned long served;
};

/* Echo one connection until its peer closes it, or fini. */
static void serve(struct echo *e, struct asx_sock_stream *s)
{
	char buf[4096];

	for (;;) {
		struct pollfd p[2] = { { .fd = asx_handle(s), .events = POLLIN },
				       { .fd = e->wake, .events = POLLIN } };
		ssize_t n;

		if (poll(p, 2, -1) < 0 || (p[1].revents & POLLIN))
			break;
		n = asx_sock_stream_recv(s, buf, sizeof(buf), NULL);
		if (n <= 0 || asx_sock_stream_send_n(s, buf, (size_t)n, NULL, NULL) != n)
			break;
	}
}

static void *echo_main(void *arg)
{
	struct echo *e = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = asx_handle(&e->acc), .events = POLLIN },
				       { .fd = e->wake, .events = POLLIN } };
		struct asx_sock_stream s;
		bool stop, suspended;
		uint64_t v;

		pthread_mutex_lock(&e->lock);
		stop = e->stop;
		suspended = e->suspended;
		pthread_mutex_unlock(&e->lock);
		if (stop)
			break;
		/* suspended: wait for the wake-up only; connections queue up */
		if (poll(suspended ? &p[1] : p, suspended ? 1 : 2, -1) < 0)
			continue;
		if (p[1].revents & POLLIN) {
			pthread_mutex_lock(&e->lock);
			if (!e->stop && read(e->wake, &v, sizeof(v)) < 0)
				v = 0;
			pthread_mutex_unlock(&e->lock);
			continue;
		}
		if (!suspended && (p[0].revents & POLLIN) &&
		    asx_sock_acceptor_accept(&e->acc, &s, NULL, ASX_DEADLINE_NOW) == 0) {
			serve(e, &s);
			asx_sock_stream_close(&s);
			pthread_mutex_lock(&e->lock);
			e->served++;
			pthread_mutex_unlock(&e->lock);
		}
	}
	return NULL;
}

static void poke(struct echo *e)
{
	uint64_t one = 1;

	if (write(e->wake, &one, sizeof(one)) < 0)
		perror("echo: eventfd");
}

static int echo_init(struct asx_svc *svc, int argc, char **argv)
{
	struct echo *e = asx_svc_priv(svc);
	const char *at = "127.0.0.1:7777", *why = NULL;
	struct asx_addr a;
	ASX_OPTS(struct asx_sock_opts, o, .flags = ASX_SOCK_REUSEADDR);
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-a") && i + 1 < argc) {
			at = argv[++i];
		} else {
			fprintf(stderr, "echo: unknown parameter '%s' (-a ADDRESS)\n", argv[i]);
			return -EINVAL;
		}
	}
	if (asx_addr_parse(&a, at, &why)) {
		fprintf(stderr, "echo: %s: %s\n", at, why ? why : "not an address");
		return -EINVAL;
	}
	r = asx_sock_acceptor_open(&e->acc, &a, &o);
	if (r)
		return r;
	e->open = true;
	snprintf(e->where, sizeof(e->where), "%s", at);
	e->wake = eventfd(0, EFD_CLOEXEC);
	if (e->wake < 0)
		return -errno;
	r = pthread_create(&e->thread, NULL, echo_main, e);
	if (r)
		return -r;
	e->running = true;
	return 0;
}

static void echo_fini(struct asx_svc *svc)
{
	struct echo *e = asx_svc_priv(svc);

	if (e->running) {
		pthread_mutex_lock(&e->lock);
		e->stop = true;
		pthread_mutex_unlock(&e->lock);
		poke(e);
		pthread_join(e->thread, NULL);
	}
	if (e->wake >= 0)
		close(e->wake);
	if (e->open)
		asx_sock_acceptor_close(&e->acc);
	pthread_mutex_destroy(&e->lock);
	free(e);
}

static int echo_suspend(struct asx_svc *svc)
{
	struct echo *e = asx_svc_priv(svc);

	pthread_mutex_lock(&e->lock);
	e->suspended = true;
	pthread_mutex_unlock(&e->lock);
	poke(e);
	return 0;
}

static int echo_resume(struct asx_svc *svc)
{
	struct echo *e = asx_svc_priv(svc);

	pthread_mutex_lock(&e->lock);
	e->suspended = false;
	pthread_mutex_unlock(&e->lock);
	poke(e);
	return 0;
}

static void echo_info(struct asx_svc *svc, char *buf, size_t len)
{
	struct echo *e = asx_svc_priv(svc);
	unsigned long n;

	pthread_mutex_lock(&e->lock);
	n = e->served;
	pthread_mutex_unlock(&e->lock);
	snprintf(buf, len, "echo on %s, %lu connection(s) served", e->where, n);
}

static const ASX_OPTS(struct asx_svc_ops, echo_ops, .init = echo_init, .fini = echo_fini,
		      .suspend = echo_suspend, .resume = echo_resume, .info = echo_info);

ASX_SVC_FACTORY(asx_echo_make)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	struct echo *e = calloc(1, sizeof(*e));

	(void)name;
	if (!e)
		return -ENOMEM;
	e->wake = -1;
	pthread_mutex_init(&e->lock, NULL);
	*priv = e;
	*ops = &echo_ops;
	return 0;
}
