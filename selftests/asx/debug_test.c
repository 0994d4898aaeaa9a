// SPDX-License-Identifier: GPL-2.0
/*
 * debug_test.c - paths that only a debug kernel (make check-debug: lockdep,
 * DEBUG_ATOMIC_SLEEP, PROVE_RCU, KASAN) can judge. Each test checks the
 * data as any selftest does, so it passes or fails the same on any kernel;
 * what it is for is the kernel log of the debug kernel, which tools/vm/asx-vm
 * fails on.
 *
 *   frame_twice: "frame" pushed twice on one Stream, frames both ways. The
 *     lower frame's rput holds its lock while it passes a frame up into the
 *     upper one, which takes its own lock: two locks of one lockdep class,
 *     nested (lockdep: "possible recursive locking").
 *   vmalloc_block_through_frame, vmalloc_block_flushed: a 64 KB data block
 *     that kvmalloc() had to take from vmalloc() is freed by frame's rput
 *     (under its spinlock, in a put procedure: RCU read side) or by a flush.
 *     vfree() may sleep ("BUG: sleeping function called from invalid
 *     context", or PROVE_RCU's "suspicious RCU usage"). kvmalloc() tries
 *     kmalloc() first and falls back to vmalloc() only when that fails, so
 *     the test fails the next order-4 page allocation of its own task with
 *     fail_page_alloc (CONFIG_FAIL_PAGE_ALLOC, debugfs): skipped on a kernel
 *     without it, such as Debian's.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mount.h>

#include "asx_util.h"
#include "asx_harness.h"

#define FAIL_DIR	"/sys/kernel/debug/fail_page_alloc"
/* PUTMSG's biggest data part: kmalloc_large() of order 4 */
#define BIG		ASX_MAX_DATA
#define BIG_ORDER	"4"

FIXTURE(frame) {
	int a;
	int b;
	bool inject;
};

FIXTURE_SETUP(frame)
{
	self->b = -1;
	self->inject = false;
	self->a = asx_open(0);
	ASSERT_GE(self->a, 0) TH_LOG("open %s: %s", ASX_DEV, strerror(errno));
	self->b = asx_pipe(self->a, ASX_PIPE_CLOEXEC);
	ASSERT_GE(self->b, 0) TH_LOG("ASX_IOC_PIPE: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
}

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static long read_long(const char *path)
{
	char buf[32] = "";
	long v = -1000;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1000;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		v = strtol(buf, NULL, 10);
	close(fd);
	return v;
}

/*
 * Arms fail_page_alloc to fail one page allocation of order >= 4 made by a
 * task with make-it-fail set. False if the kernel has no fail_page_alloc.
 */
static bool arm_one_failure(void)
{
	static const char *const set[][2] = {
		{ "probability", "0" },	/* off while we set it up */
		{ "task-filter", "Y" },
		{ "ignore-gfp-wait", "N" },
		{ "ignore-gfp-highmem", "N" },
		{ "min-order", BIG_ORDER },
		{ "interval", "1" },
		{ "space", "0" },
		{ "verbose", "0" },
		{ "times", "1" },
		{ "probability", "100" },
	};
	char path[128];
	unsigned int i;

	if (access(FAIL_DIR, F_OK))
		mount("none", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(FAIL_DIR, F_OK))
		return false;
	for (i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", FAIL_DIR, set[i][0]);
		if (write_str(path, set[i][1]))
			return false;
	}
	return true;
}

static void disarm(void)
{
	write_str("/proc/self/make-it-fail", "0");
	write_str(FAIL_DIR "/probability", "0");
	write_str(FAIL_DIR "/times", "0");
}

FIXTURE_TEARDOWN(frame)
{
	if (self->inject)
		disarm();
	close(self->a);
	if (self->b >= 0)
		close(self->b);
}

static void put_be32(unsigned char *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

TEST_F(frame, frame_twice)
{
	unsigned char raw[256], buf[256], msg[64];
	unsigned int i, n, off, cut;

	ASSERT_EQ(asx_push(self->a, "frame"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_push(self->a, "frame"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_opt(self->a, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	for (i = 0; i < 32; i++) {
		n = 1 + i % 40;
		memset(msg, 'a' + i % 26, n);
		/* down: the upper frame's header, then the lower's around both */
		ASSERT_EQ(write(self->a, msg, n), (ssize_t)n) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(read(self->b, raw, sizeof(raw)), (ssize_t)(n + 8))
			TH_LOG("message %u", i);
		put_be32(buf, n + 4);
		put_be32(buf + 4, n);
		memcpy(buf + 8, msg, n);
		EXPECT_EQ(memcmp(raw, buf, n + 8), 0) TH_LOG("message %u down", i);

		/* up: the same bytes cut at an odd place come out whole */
		off = n + 8;
		cut = 1 + (i * 7) % (off - 1);
		ASSERT_EQ(write(self->b, buf, cut), (ssize_t)cut);
		ASSERT_EQ(write(self->b, buf + cut, off - cut), (ssize_t)(off - cut));
		ASSERT_EQ(read(self->a, raw, sizeof(raw)), (ssize_t)n) TH_LOG("message %u up", i);
		EXPECT_EQ(memcmp(raw, msg, n), 0) TH_LOG("message %u up", i);
	}
}

/*
 * b sends a with PUTMSG one 64 KB data block, which kvmalloc() gets from
 * vmalloc(): the next order-4 allocation of this task fails. Returns the
 * payload it framed (BIG - 4 bytes after a frame header) for the caller to
 * compare.
 */
static unsigned char *send_vmalloc_block(struct __test_metadata *_metadata,
					 FIXTURE_DATA(frame) *self)
{
	unsigned char *data = malloc(BIG);
	unsigned int i;
	int rc;

	ASSERT_TRUE(data != NULL);
	put_be32(data, BIG - 4);
	for (i = 4; i < BIG; i++)
		data[i] = (unsigned char)(i * 31 + 7);
	if (!arm_one_failure()) {
		free(data);
		SKIP(return NULL, "no " FAIL_DIR " (CONFIG_FAIL_PAGE_ALLOC)");
	}
	self->inject = true;
	ASSERT_EQ(write_str("/proc/self/make-it-fail", "1"), 0) TH_LOG("%s", strerror(errno));
	rc = asx_putmsg(self->b, NULL, -1, data, BIG, 0, 0);
	write_str("/proc/self/make-it-fail", "0");
	ASSERT_EQ(rc, 0) TH_LOG("PUTMSG of %d bytes: %s", BIG, strerror(errno));
	/* the injected failure was spent: the block is vmalloc()ed */
	ASSERT_EQ(read_long(FAIL_DIR "/times"), 0)
		TH_LOG("no order-" BIG_ORDER " allocation failed");
	disarm();
	self->inject = false;
	return data;
}

TEST_F(frame, vmalloc_block_through_frame)
{
	unsigned char *data, *buf;

	ASSERT_EQ(asx_push(self->a, "frame"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_opt(self->a, ASX_IOC_SRDOPT, ASX_RMSGN), 0);
	buf = malloc(BIG);
	ASSERT_TRUE(buf != NULL);
	data = send_vmalloc_block(_metadata, self);
	if (!data) {
		free(buf);
		return;
	}
	/* frame copies the frame out and frees the block under its lock */
	EXPECT_EQ(read(self->a, buf, BIG), BIG - 4) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(memcmp(buf, data + 4, BIG - 4), 0);
	free(data);
	free(buf);
}

TEST_F(frame, vmalloc_block_flushed)
{
	struct asx_nread nr;
	unsigned char *data;

	data = send_vmalloc_block(_metadata, self);
	if (!data)
		return;
	ASSERT_EQ(asx_nread(self->a, &nr), 0);
	EXPECT_EQ(nr.msgs, 1);
	/* from b: the pipe turns FLUSHW around into a's read side */
	ASSERT_EQ(asx_flush(self->b, ASX_FLUSHW, 0), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_nread(self->a, &nr), 0);
	EXPECT_EQ(nr.msgs, 0) TH_LOG("the block was flushed");
	free(data);
}

TEST_HARNESS_MAIN
