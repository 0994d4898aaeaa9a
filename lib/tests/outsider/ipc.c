// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * IPC SAP (Documentation/ipc.rst): a TCP echo over loopback (acceptor on
 * an ephemeral port, connector with a deadline, send_n/recv_n), the
 * shared calls through ASX_SOCK(), address text both ways with its
 * error reason, descriptor passing over an SPIPE, a typed pipe.
 */
#include <string.h>
#include <pthread.h>
#include <asx/pipe.h>
#include <asx/sock.h>
#include "outsider.h"

#define LEN 100000

static struct asx_sock_acceptor acc;

static void *echo(void *arg)
{
	struct asx_sock_stream s;
	struct timespec dl;
	char buf[4096];
	ssize_t n;

	CHECK0(asx_sock_acceptor_accept(&acc, &s, NULL, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC)));
	while ((n = asx_sock_stream_recv(&s, buf, sizeof(buf), NULL)) > 0)
		CHECK(asx_sock_stream_send_n(&s, buf, (size_t)n, NULL, NULL) == n);
	CHECK(n == 0);
	CHECK0(asx_sock_stream_close(&s));
	return NULL;
}

int main(void)
{
	static char out[LEN], in[LEN];
	ASX_OPTS(struct asx_sock_opts, o, .flags = ASX_SOCK_REUSEADDR | ASX_SOCK_NODELAY);
	struct asx_sock_connector con;
	struct asx_sock_stream s;
	struct asx_lsock_stream a, b;
	struct asx_pipe_reader pr;
	struct asx_pipe_writer pw;
	struct asx_addr addr, bound;
	char text[ASX_ADDR_STRLEN];
	const char *why = NULL;
	struct timespec dl;
	pthread_t t;
	int fd;

	watchdog(60);
	/* addresses */
	CHECK(asx_addr_parse(&addr, "::1:80", &why) == -EINVAL && why && *why);
	CHECK0(asx_addr_parse(&addr, "127.0.0.1:0", &why));
	CHECK(asx_addr_format(&addr, text, sizeof(text)) > 0 && strcmp(text, "127.0.0.1:0") == 0);

	/* TCP echo */
	CHECK0(asx_sock_acceptor_open(&acc, &addr, &o));
	CHECK(asx_handle(&acc) >= 0);
	CHECK0(asx_sock_local_addr(ASX_SOCK(&acc), &bound));
	CHECK(asx_addr_port(&bound) > 0);
	CHECK(pthread_create(&t, NULL, echo, NULL) == 0);
	CHECK0(asx_sock_connector_init(&con, NULL));
	CHECK0(asx_sock_connector_connect(&con, &s, &bound, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC)));
	for (size_t i = 0; i < LEN; i++)
		out[i] = (char)(i * 7 + 3);
	CHECK(asx_sock_stream_send_n(&s, out, LEN, &dl, NULL) == LEN);
	CHECK0(asx_sock_stream_close_writer(&s));
	CHECK(asx_sock_stream_recv_n(&s, in, LEN, &dl, NULL) == LEN);
	CHECK(memcmp(in, out, LEN) == 0);
	CHECK(asx_sock_stream_recv(&s, in, 1, &dl) == 0);	/* the echo closed */
	CHECK(pthread_join(t, NULL) == 0);
	CHECK0(asx_sock_stream_close(&s));
	CHECK0(asx_sock_acceptor_close(&acc));

	/* an SPIPE passes a descriptor: the pipe's write end */
	CHECK0(asx_pipe_open(&pr, &pw));
	CHECK0(asx_lsock_stream_pair(&a, &b));
	CHECK0(asx_lsock_stream_send_handle(&a, asx_pipe_writer_handle(&pw), NULL));
	fd = asx_lsock_stream_recv_handle(&b, asx_deadline(&dl, 20 * ASX_NSEC_PER_SEC));
	CHECK(fd >= 0);
	CHECK(write(fd, "xyz", 3) == 3);			/* the same pipe */
	CHECK(asx_pipe_read_n(&pr, in, 3, &dl, NULL) == 3 && memcmp(in, "xyz", 3) == 0);
	close(fd);
	CHECK(asx_pipe_write(&pw, "q", 1, NULL) == 1);
	CHECK0(asx_pipe_writer_close(&pw));
	CHECK(asx_pipe_read(&pr, in, sizeof(in), NULL) == 1);
	CHECK(asx_pipe_read(&pr, in, sizeof(in), NULL) == 0);	/* every writer gone */
	CHECK0(asx_pipe_reader_close(&pr));
	CHECK0(asx_lsock_stream_close(&a));
	CHECK(asx_lsock_stream_recv_handle(&b, NULL) == -ECONNRESET);
	CHECK0(asx_lsock_stream_close(&b));
	puts("ipc: ok");
	return 0;
}
