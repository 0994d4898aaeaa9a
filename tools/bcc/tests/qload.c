// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * qload.c - messages that wait a known time in known queues, for asx-qlat.
 *
 * Usage: qload ROUNDS WAIT_US [kernel]
 *
 * Prints "ready <pid>" and waits for a line on stdin (the tool attaches),
 * then, one after the other, ROUNDS times each: puts a message of 100 bytes
 * into
 *   - an asx_msgq,
 *   - a loop-back user-space Stream (it waits in the head's read queue,
 *     named "head", side r),
 *   - with "kernel", a /dev/asx Stream (loop driver: it waits in the
 *     Stream head's read queue),
 * sleeps WAIT_US microseconds and takes it out. Each message's residence as
 * the workload sees it (from after the put returned to before the get was
 * called) is summed per queue; one JSON line reports the sums, the msgq's
 * address, the rounds and the bytes.
 */
#include <asx/msg.h>
#include <asx/msgq.h>
#include <asx/stream.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SIZE 100

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts))
		;
}

int main(int argc, char **argv)
{
	uint64_t t, msgq_sum = 0, stream_sum = 0, kernel_sum = 0;
	struct asx_stream *s;
	struct asx_msgq *q;
	struct asx_msg *m;
	char line[16], buf[SIZE];
	long rounds, wait_us, i;
	bool kernel;
	int fd = -1;

	if (argc < 3) {
		fprintf(stderr, "usage: %s ROUNDS WAIT_US [kernel]\n", argv[0]);
		return 2;
	}
	rounds = atol(argv[1]);
	wait_us = atol(argv[2]);
	kernel = argc > 3 && !strcmp(argv[3], "kernel");
	if (asx_msgq_create(&q, 1 << 20, 1 << 19) || asx_stream_open(&s, NULL))
		return 1;
	if (kernel) {
		fd = open("/dev/asx", O_RDWR);
		if (fd < 0) {
			perror("qload: /dev/asx");
			return 1;
		}
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 3;
	memset(buf, 'x', sizeof(buf));
	for (i = 0; i < rounds; i++) {
		m = asx_msg_alloc(SIZE, ASX_MSG_DATA);
		if (!m || asx_msg_append(m, buf, SIZE) || asx_msgq_enqueue(q, m, 0, NULL))
			return 4;
		t = asx_now_ns();
		sleep_us(wait_us);
		msgq_sum += asx_now_ns() - t;
		if (asx_msgq_dequeue(q, &m, 0, NULL))
			return 5;
		asx_msg_free(m);
	}
	for (i = 0; i < rounds; i++) {
		m = asx_msg_alloc(SIZE, ASX_MSG_DATA);
		if (!m || asx_msg_append(m, buf, SIZE) || asx_stream_put(s, m, 0, NULL))
			return 6;
		t = asx_now_ns();
		sleep_us(wait_us);
		stream_sum += asx_now_ns() - t;
		if (asx_stream_get(s, &m, 0, NULL))
			return 7;
		asx_msg_free(m);
	}
	for (i = 0; kernel && i < rounds; i++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 8;
		t = asx_now_ns();
		sleep_us(wait_us);
		kernel_sum += asx_now_ns() - t;
		if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 9;
	}
	printf("{\"msgq\": \"%p\", \"rounds\": %ld, \"bytes\": %d, \"msgq_sum\": %" PRIu64
	       ", \"stream_sum\": %" PRIu64 ", \"kernel_sum\": %" PRIu64 "}\n", (void *)q,
	       rounds, SIZE, msgq_sum, stream_sum, kernel_sum);
	asx_stream_close(s);
	asx_msgq_destroy(q);
	if (fd >= 0)
		close(fd);
	return 0;
}
