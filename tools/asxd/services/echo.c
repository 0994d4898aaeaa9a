// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * echo.c - an example service for asxd: a TCP (or UNIX) echo server on
 * libasx's Acceptor (asx/acceptor.h), built as echo.so (Documentation/svc.rst,
 * Documentation/frameworks.rst).
 *
 *	dynamic Echo Service_Object * /usr/lib/asx/services/echo.so:asx_echo_make() "-a 127.0.0.1:7777"
 *
 * Parameters: -a ADDRESS (any form asx_addr_parse() reads; default
 * 127.0.0.1:7777).  A reactive service: its acceptor and connections are
 * handlers of its Reactor (asx_svc_reactor()), dispatched by asxd's main
 * loop.  Suspended, the repository takes it off that loop: new connections
 * wait in the listen queue and data on open ones waits in their sockets,
 * and both are served, in order, when it resumes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/acceptor.h>
#include <asx/svc.h>

struct echo {
	struct asx_acceptor *acc;
	char where[ASX_ADDR_STRLEN];
};

/* A connection: echo what is readable; end of stream or an error closes. */
static int conn_input(struct asx_svc_handler *h)
{
	char buf[4096];
	ssize_t n = asx_sock_stream_recv(asx_svc_handler_stream(h), buf, sizeof(buf), NULL);

	if (n <= 0 || asx_sock_stream_send_n(asx_svc_handler_stream(h), buf, (size_t)n,
					     NULL, NULL) != n)
		return -1;
	return 0;
}

static void conn_close(struct asx_svc_handler *h, int why)
{
	(void)h;
	(void)why;
}

static void conn_release(struct asx_svc_handler *h)
{
	free(h);
}

static const struct asx_svc_handler_ops conn_ops = {
	.input = conn_input, .close = conn_close, .release = conn_release,
};

static struct asx_svc_handler *conn_make(void *arg)
{
	struct asx_svc_handler *h = malloc(sizeof(*h));

	if (h)
		asx_svc_handler_init(h, &conn_ops, arg);
	return h;
}

static int echo_init(struct asx_svc *svc, int argc, char **argv)
{
	struct echo *e = asx_svc_priv(svc);
	const char *at = "127.0.0.1:7777", *why = NULL;
	struct asx_addr a;
	ASX_OPTS(struct asx_acceptor_opts, o, .strategy.kind = ASX_SVC_REACTIVE, .make = conn_make);
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
	snprintf(e->where, sizeof(e->where), "%s", at);
	r = asx_svc_reactor(svc, &o.strategy.reactor);
	return r ? r : asx_acceptor_create(&e->acc, &a, &o);
}

static void echo_fini(struct asx_svc *svc)
{
	struct echo *e = asx_svc_priv(svc);

	asx_acceptor_destroy(e->acc);
	free(e);
}

static void echo_info(struct asx_svc *svc, char *buf, size_t len)
{
	struct echo *e = asx_svc_priv(svc);
	struct asx_acceptor_stats st;

	asx_acceptor_stats(e->acc, &st);
	snprintf(buf, len, "echo on %s, %lu connection(s) served, %u open", e->where,
		 (unsigned long)st.closed, st.live);
}

static const ASX_OPTS(struct asx_svc_ops, echo_ops, .init = echo_init, .fini = echo_fini,
		      .info = echo_info);

ASX_SVC_FACTORY(asx_echo_make)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	struct echo *e = calloc(1, sizeof(*e));

	(void)name;
	if (!e)
		return -ENOMEM;
	*priv = e;
	*ops = &echo_ops;
	return 0;
}
