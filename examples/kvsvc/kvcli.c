// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kvcli.c - a client of kvsvc: sends each REQUEST argument, or each line
 * of its standard input if there is none, and prints the reply line.
 *
 *	kvcli [-a ADDRESS] [REQUEST...]
 *	kvcli "SET greeting hello world" "GET greeting"
 *
 * Exit status 0, or 1 if it cannot connect or the server closes first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <asx/sock.h>

struct reader {
	struct asx_sock_stream *s;
	size_t off, len;
	char buf[4096];
};

/* Copy one reply line to stdout: 0, or -1 if the server closed first. */
static int print_reply(struct reader *r)
{
	for (;;) {
		char *start, *nl;
		size_t take;

		if (r->off == r->len) {
			ssize_t n = asx_sock_stream_recv(r->s, r->buf, sizeof(r->buf), NULL);

			if (n <= 0)
				return -1;
			r->off = 0;
			r->len = (size_t)n;
		}
		start = r->buf + r->off;
		nl = memchr(start, '\n', r->len - r->off);
		take = nl ? (size_t)(nl - start) + 1 : r->len - r->off;
		fwrite(start, 1, take, stdout);
		r->off += take;
		if (nl)
			return 0;
	}
}

static int request(struct reader *r, const char *line)
{
	size_t n = strlen(line);

	if (asx_sock_stream_send_n(r->s, line, n, NULL, NULL) != (ssize_t)n ||
	    asx_sock_stream_send_n(r->s, "\n", 1, NULL, NULL) != 1 || print_reply(r)) {
		fprintf(stderr, "kvcli: the server closed the connection\n");
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *at = "127.0.0.1:7070", *why = NULL;
	struct asx_sock_connector con;
	struct asx_sock_stream s;
	struct reader r = { .s = &s };
	struct asx_addr a;
	struct timespec dl;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int i = 1, err;

	if (argc > 2 && !strcmp(argv[1], "-a")) {
		at = argv[2];
		i = 3;
	}
	if (asx_addr_parse(&a, at, &why)) {
		fprintf(stderr, "kvcli: %s: %s\n", at, why ? why : "not an address");
		return 1;
	}
	err = asx_sock_connector_init(&con, NULL);
	if (!err)
		err = asx_sock_connector_connect(&con, &s, &a, asx_deadline(&dl, 5 * ASX_NSEC_PER_SEC));
	if (err) {
		fprintf(stderr, "kvcli: cannot connect to %s: %s\n", at, strerror(-err));
		return 1;
	}
	if (i < argc) {
		for (; i < argc && !err; i++)
			err = request(&r, argv[i]);
	} else {
		while (!err && (n = getline(&line, &cap, stdin)) > 0) {
			if (line[n - 1] == '\n')
				line[n - 1] = '\0';
			err = request(&r, line);
		}
		free(line);
	}
	asx_sock_stream_close(&s);
	return err ? 1 : 0;
}
