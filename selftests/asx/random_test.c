// SPDX-License-Identifier: GPL-2.0
/*
 * random_test.c - random and hostile use of /dev/asx.
 *
 * random_operations: 100,000 random operations from 4 threads on a shared
 * pool of Streams: ioctls with random numbers, sizes and contents, putmsg,
 * getmsg, read, write, poll, push, pop, pipe, new muxes over Streams of the
 * pool, link, unlink, named muxes and persistent links (I_PLINK, I_PUNLINK:
 * the test undoes them before it counts), transparent ioctls (tioc_op()),
 * close. Afterwards every Stream, module instance and message must be gone
 * (/proc/asx/objects), the sanity phase (sanity()) must pass as root and as
 * nobody, and the VM runner checks the kernel log stays clean.
 *
 * hostile_user_in_a_memory_cgroup: the same operations and worse, from 6
 * threads as nobody in a memory cgroup with memory.max 32M, for
 * ASX_HOSTILE_SECONDS (default 20): every real ioctl with sizes around its
 * struct's (short, one over, tails with a non-zero byte, huge) and bad
 * pointers (NULL, kernel, unmapped, read-only, a struct that runs into an
 * unmapped page, also inside PUTMSG, LIST, STR and SA_WAIT arguments),
 * floods (the largest water marks a user may set, high-priority and empty
 * messages), activation groups made, joined, waited on and closed under
 * their members, and the close, link, unlink and pipe races of the pool. The
 * cgroup must account what the module holds (its memory.peak reaches the
 * limit), every OOM kill in the guest must be the cgroup's own, and
 * afterwards every object is freed, the cgroup's memory comes back and the
 * module still works (the VM runner then unloads it). After every worker
 * process the Streams are back to their baseline and the sanity phase
 * passes. A worker killed by the cgroup's OOM killer is replaced until the
 * time is up. For a longer run raise ASX_TEST_TIMEOUT with it, to at least
 * ASX_HOSTILE_SECONDS + 180 (a slow guest gets one more run, of up to 60 s
 * and whatever a longer ASX_TEST_TIMEOUT leaves, that ends once the cgroup
 * has filled to half its limit).
 *
 * ASX_RANDOM_SEED=N repeats a run's sequences of operations (the threads'
 * interleaving is not repeatable). ASX_RANDOM_AFTER_RUN=CMD runs the shell
 * command CMD right after every hostile worker process exits, before the
 * test waits for its Streams to be freed (selftests/asx/hostile_repro.sh
 * checks the module there as a newcomer would); CMD failing fails the test.
 */
#include <dirent.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "asx_util.h"
#include "cgroup_util.h"
#include "asx_harness.h"
#include "ko_util.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#define NTHREADS	4
#define HOSTILE_THREADS	6	/* worker 0 exhausts memory, the others fuzz */
#define NOPS		100000
#define NSLOTS		16
#define NGSLOTS		4
#define SCRATCH		(256 * 1024)
#define HOSTILE_CG_MB	32
#define HOSTILE_HALF	((long)HOSTILE_CG_MB * 1024 * 1024 / 2)	/* bytes the cgroup must reach */
#define HOSTILE_SECS	20

static int slots[NSLOTS];
static int gslots[NGSLOTS];	/* activation groups (hostile mode) */
static unsigned char *badmem;	/* a read-only page, a writable one, an unmapped one */
static long page;
static const char *const names[] = {
	"pass", "count", "frame", "csum", "hold", "nosuch", "", "loop", "null", "mux",
};

enum { OP_OPEN, OP_CLOSE, OP_PUSH, OP_POP, OP_WRITE, OP_READ, OP_PUTMSG, OP_GETMSG,
	OP_POLL, OP_FLUSH, OP_SETWM, OP_STR, OP_SETDRV, OP_LINK, OP_PIPE, OP_IOCTL, OP_XSI,
	OP_PLINK, OP_TIOC, NOPKINDS };

static const char *const op_names[NOPKINDS] = {
	"open", "close", "push", "pop", "write", "read", "putmsg", "getmsg", "poll", "flush",
	"setwm", "str", "setdrv", "link", "pipe", "ioctl", "xsi",
	"plink", "tioc",
};

/* Hostile mode only. */
enum { OP_BADIOCTL = NOPKINDS, OP_FLOOD, OP_SA, NALLKINDS };

static const char *const hostile_names[] = { "badioctl", "flood", "sa" };

struct worker {
	unsigned int seed;
	unsigned char *scratch;
	bool hostile;
	uint64_t deadline_ns;
	long ok[NALLKINDS];
	long total[NALLKINDS];
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * A hostile run ends at its workers' deadline, or (an extra run on a slow
 * guest) once worker 0 has seen the cgroup fill to half its limit.
 */
static int run_stop;

static bool run_over(const struct worker *w)
{
	return __atomic_load_n(&run_stop, __ATOMIC_RELAXED) || mono_ns() >= w->deadline_ns;
}

/*
 * The hostile run's calls of every worker process, the OOM-killed ones
 * too: a shared mapping the test makes before it forks them (else NULL).
 */
static struct {
	long ok[NALLKINDS];
	long total[NALLKINDS];
} *all_calls;

static void count(struct worker *w, int kind, int ret)
{
	w->total[kind]++;
	if (ret >= 0)
		w->ok[kind]++;
	if (all_calls) {
		__atomic_fetch_add(&all_calls->total[kind], 1, __ATOMIC_RELAXED);
		if (ret >= 0)
			__atomic_fetch_add(&all_calls->ok[kind], 1, __ATOMIC_RELAXED);
	}
}

static unsigned int rnd(struct worker *w, unsigned int n)
{
	return n ? (unsigned int)rand_r(&w->seed) % n : 0;
}

static int pick(struct worker *w)
{
	return __atomic_load_n(&slots[rnd(w, NSLOTS)], __ATOMIC_RELAXED);
}

static void install_in(struct worker *w, int *pool, unsigned int n, int fd)
{
	int old;

	if (fd < 0)
		return;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	old = __atomic_exchange_n(&pool[rnd(w, n)], fd, __ATOMIC_SEQ_CST);
	if (old >= 0)
		close(old);
}

static void install(struct worker *w, int fd)
{
	install_in(w, slots, NSLOTS, fd);
}

static void random_bytes(struct worker *w, void *p, size_t n)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = rnd(w, 256);
}

/* A random ioctl whose user pointers, if any, point at the scratch buffer. */
static void random_ioctl(struct worker *w, int fd)
{
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	union {
		unsigned char raw[256];
		struct asx_list l;
		struct asx_strmsg sm;
		struct asx_strioctl si;
		struct asx_pipe p;
		struct asx_link lk;
	} u;
	unsigned int nr = rnd(w, 0x18), dir;
	unsigned long cmd;
	int ret;

	random_bytes(w, &u, sizeof(u));
	/* Mostly plausible: small sizes, zero reserved fields. */
	if (rnd(w, 4)) {
		memset(u.raw + 4, 0, sizeof(u.raw) - 4);
		random_bytes(w, u.raw + 4, rnd(w, 24));
	}
	u.l.size = rnd(w, 3) ? rnd(w, 200) : (unsigned int)rand_r(&w->seed);
	switch (nr) {
	case 0x03:
		u.l.names = (uintptr_t)w->scratch;
		u.l.count %= 32;
		break;
	case 0x04: case 0x05: case 0x06:
		u.sm.ctl.buf = (uintptr_t)w->scratch;
		u.sm.data.buf = (uintptr_t)w->scratch + SCRATCH / 2;
		u.sm.ctl.maxlen %= SCRATCH / 2;
		u.sm.data.maxlen %= SCRATCH / 2;
		if (u.sm.ctl.len > 0)
			u.sm.ctl.len %= 5000;
		if (u.sm.data.len > 0)
			u.sm.data.len %= 70000;
		break;
	case 0x10:
		u.si.data = (uintptr_t)w->scratch;
		u.si.len %= 5000;
		u.si.timeout_ms = rnd(w, 100);
		break;
	case 0x11:
		u.lk.fd = pick(w);
		break;
	case 0x13:
		u.p.flags |= ASX_PIPE_NONBLOCK;
		break;
	}
	dir = rnd(w, 8) ? (nr == 0x00 || nr == 0x03 || nr == 0x05 || nr == 0x06 ||
			   nr == 0x09 || nr == 0x0b || nr == 0x0c || nr == 0x0d || nr == 0x0f ||
			   nr == 0x10 || nr == 0x11 || nr == 0x13 ?
			   _IOC_READ | _IOC_WRITE : _IOC_WRITE) : dirs[rnd(w, 4)];
	cmd = _IOC(dir, ASX_IOC_MAGIC, nr, rnd(w, 64));
	ret = ioctl(fd, cmd, &u);
	if (!ret && nr == 0x13 && u.p.fd > 2)
		install(w, u.p.fd);
	count(w, OP_IOCTL, ret);
}

static void *bad_ptr(struct worker *w, size_t len);

/* A descriptor I_SENDFD may send (not a Stream): /dev/null, opened once. */
static int xsi_plain_fd(void)
{
	static int fd = -1;
	int nfd;

	if (__atomic_load_n(&fd, __ATOMIC_ACQUIRE) < 0) {
		nfd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nfd >= 0 && !__atomic_compare_exchange_n(&fd, &(int){ -1 }, nfd, false,
							     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			close(nfd);
	}
	return __atomic_load_n(&fd, __ATOMIC_ACQUIRE);
}

/*
 * A random XSI request (streamio(7), 'S' << 8 | n): mostly plausible
 * arguments (names, the scratch buffer, ints in range, an I_STR that waits
 * one second at most), one in sixteen a pointer the kernel must refuse.
 * I_SETSIG registers for signals: the workers ignore SIGPOLL and SIGURG.
 */
static void xsi_op(struct worker *w, int fd)
{
	static const unsigned int nrs[] = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23,
		28, 29, 30, 31, 32, 33, 34, 99,
	};
	union {
		unsigned char raw[64];
		struct asx_xsi_strioctl si;
		struct asx_xsi_strpeek sp;
		struct asx_xsi_str_list sl;
		struct asx_xsi_bandinfo bi;
		struct asx_xsi_strfdinsert fi;
	} u;
	unsigned int nr = nrs[rnd(w, sizeof(nrs) / sizeof(nrs[0]))];
	unsigned long arg;
	int ret;

	random_bytes(w, &u, sizeof(u));
	switch (nr) {
	case 2: case 11:	/* I_PUSH, I_FIND */
		arg = (uintptr_t)names[rnd(w, 10)];
		break;
	case 1: case 4: case 7: case 10: case 20: case 30: case 33:	/* out: an int, a name */
		arg = (uintptr_t)w->scratch;
		break;
	case 8:
		u.si.ic_timout = 1;
		u.si.ic_len = rnd(w, 4) ? (int)rnd(w, 200) : (int)rand_r(&w->seed) - RAND_MAX / 2;
		u.si.ic_dp = (uintptr_t)w->scratch;
		arg = (uintptr_t)&u;
		break;
	case 15:
		u.sp.ctlbuf.buf = (uintptr_t)w->scratch;
		u.sp.ctlbuf.maxlen = (int)rnd(w, 300) - 1;
		u.sp.databuf.buf = (uintptr_t)w->scratch + SCRATCH / 2;
		u.sp.databuf.maxlen = (int)rnd(w, 5000) - 1;
		u.sp.flags = rnd(w, 3);
		arg = (uintptr_t)&u;
		break;
	case 21:
		u.sl.sl_nmods = (int)rnd(w, 24) - 2;
		u.sl.sl_modlist = (uintptr_t)w->scratch;
		arg = rnd(w, 4) ? (uintptr_t)&u : 0;
		break;
	case 28:
		u.bi.bi_flag = rnd(w, 5);
		arg = (uintptr_t)&u;
		break;
	case 12:
		arg = (unsigned long)pick(w);
		break;
	case 9:
		arg = rnd(w, 0x400);
		break;
	case 16:	/* I_FDINSERT: mostly plausible offsets, another Stream or not */
		u.fi.ctlbuf.buf = (uintptr_t)w->scratch;
		u.fi.ctlbuf.len = (int)rnd(w, 40) - 1;
		u.fi.databuf.buf = (uintptr_t)w->scratch + SCRATCH / 2;
		u.fi.databuf.len = (int)rnd(w, 300) - 1;
		u.fi.flags = rnd(w, 3);
		u.fi.fildes = rnd(w, 8) ? pick(w) : (int)rnd(w, 300) - 2;
		u.fi.offset = (int)rnd(w, 44) - 4;
		arg = (uintptr_t)&u;
		break;
	case 32:	/* I_SETCLTIME: short (a close may wait that long), or refused */
		*(int *)w->scratch = (int)rnd(w, 60) - 5;
		arg = (uintptr_t)w->scratch;
		break;
	case 14:	/* I_RECVFD: a descriptor received is closed below */
		arg = (uintptr_t)w->scratch;
		break;
	case 17:	/* I_SENDFD: a Stream (refused), or a file that may travel */
		arg = (unsigned long)(rnd(w, 2) ? pick(w) : xsi_plain_fd());
		break;
	default:
		arg = (unsigned long)(long)((int)rnd(w, 300) - 2);
		break;
	}
	if (!rnd(w, 16))
		arg = (uintptr_t)bad_ptr(w, sizeof(u));
	ret = ioctl(fd, ASX_XSI_SID | nr, arg);
	if (!ret && nr == 14 && arg == (uintptr_t)w->scratch)
		close(((struct asx_xsi_strrecvfd *)w->scratch)->fd);
	count(w, OP_XSI, ret);
}

/*
 * A pointer the kernel must refuse for an argument of @len bytes: NULL, a
 * kernel address, a non-canonical one, an unmapped page, a read-only page
 * (a copy-out faults) or the last bytes of a writable page before an
 * unmapped one (the copy starts and faults part-way).
 */
static void *bad_ptr(struct worker *w, size_t len)
{
	switch (rnd(w, 6)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)0xffffffff81000000ull;
	case 2:
		return (void *)(uintptr_t)0x8000000000000000ull;
	case 3:
		return badmem + 2 * page;
	case 4:
		return badmem;
	default:
		return badmem + 2 * page - 1 - rnd(w, len > 1 ? (unsigned int)len - 1 : 1);
	}
}

static void on_tioc_timer(int sig)
{
	(void)sig;
}

/*
 * Transparent ioctls: "tioc" pushed now and then, its requests with random
 * lengths (some over ASX_MAX_TCOPY), keys and pointers (bad ones too), NAKs
 * and requests no module takes. Not on a Stream with "hold" (listed as the
 * call starts), which would hold it; a timer of this thread's interrupts
 * each after 1 or 2 ms (to cut exchanges short, and for a hold pushed since).
 */
static void tioc_op(struct worker *w, int fd)
{
	static __thread timer_t timer;
	static __thread bool have_timer;
	struct itimerspec its = { .it_value.tv_nsec = (1 + rnd(w, 2)) * 1000000L };
	struct asx_tioc_vec v = { .key = rnd(w, 256) };
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGUSR2 };
	struct sigaction sa = { .sa_handler = on_tioc_timer };
	static const struct itimerspec off;
	char names[ASX_MAX_DEPTH][ASX_NAME_MAX];
	unsigned long req;
	void *arg = &v;
	int ret, i, n;

	if (!have_timer) {
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR2, &sa, NULL);	/* no SA_RESTART: EINTR */
		sev._sigev_un._tid = gettid();
		if (timer_create(CLOCK_MONOTONIC, &sev, &timer))
			return;
		have_timer = true;
	}
	if (!rnd(w, 8)) {
		count(w, OP_TIOC, asx_push(fd, "tioc"));
		return;
	}
	n = asx_list(fd, names, ASX_MAX_DEPTH, NULL);
	for (i = 0; i < n; i++)
		if (!strcmp(names[i], "hold"))
			return;
	v.buf = rnd(w, 8) ? (uintptr_t)w->scratch : (uintptr_t)bad_ptr(w, 64);
	v.len = rnd(w, 16) ? rnd(w, 300) : rnd(w, 2 * ASX_MAX_TCOPY);
	switch (rnd(w, 8)) {
	case 0:
		req = ASX_TIOC_NAK;
		arg = (void *)(uintptr_t)rnd(w, 200);
		break;
	case 1:	/* a request of another type: what no module takes */
		req = _IOC(rnd(w, 4), rnd(w, 256), rnd(w, 256), rnd(w, 64));
		if (_IOC_TYPE(req) == ASX_IOC_MAGIC || _IOC_TYPE(req) == 'S')
			req = _IO(ASX_TIOC_MAGIC + 1, _IOC_NR(req));
		break;
	case 2:
		arg = bad_ptr(w, sizeof(v));
		/* fall through */
	default:
		req = ASX_TIOC_XFORM;
	}
	timer_settime(timer, 0, &its, NULL);
	ret = ioctl(fd, req, arg);
	timer_settime(timer, 0, &off, NULL);
	count(w, OP_TIOC, ret);
}

/* Every ioctl with the size of its first published struct. */
static const struct {
	unsigned long cmd;
	unsigned int size;
	bool group;		/* made for a group descriptor */
} real_ioctls[] = {
	{ ASX_IOC_VERSION, ASX_VERSION_SIZE_VER0, false }, { ASX_IOC_PUSH, ASX_MODNAME_SIZE_VER0, false },
	{ ASX_IOC_POP, ASX_MODNAME_SIZE_VER0, false }, { ASX_IOC_LIST, ASX_LIST_SIZE_VER0, false },
	{ ASX_IOC_PUTMSG, ASX_STRMSG_SIZE_VER0, false }, { ASX_IOC_GETMSG, ASX_STRMSG_SIZE_VER0, false },
	{ ASX_IOC_PEEK, ASX_STRMSG_SIZE_VER0, false }, { ASX_IOC_FLUSH, ASX_FLUSH_SIZE_VER0, false },
	{ ASX_IOC_SRDOPT, ASX_OPT_SIZE_VER0, false }, { ASX_IOC_GRDOPT, ASX_OPT_SIZE_VER0, false },
	{ ASX_IOC_SWROPT, ASX_OPT_SIZE_VER0, false }, { ASX_IOC_GWROPT, ASX_OPT_SIZE_VER0, false },
	{ ASX_IOC_NREAD, ASX_NREAD_SIZE_VER0, false }, { ASX_IOC_GETWM, ASX_WM_SIZE_VER0, false },
	{ ASX_IOC_SETWM, ASX_WM_SIZE_VER0, false }, { ASX_IOC_QSTATS, ASX_QSTATS_SIZE_VER0, false },
	{ ASX_IOC_STR, ASX_STRIOCTL_SIZE_VER0, false }, { ASX_IOC_LINK, ASX_LINK_SIZE_VER0, false },
	{ ASX_IOC_UNLINK, ASX_LINK_SIZE_VER0, false }, { ASX_IOC_PIPE, ASX_PIPE_SIZE_VER0, false },
	{ ASX_IOC_SETDRV, ASX_MODNAME_SIZE_VER0, false }, { ASX_IOC_SA_CREATE, ASX_SA_CREATE_SIZE_VER0, false },
	{ ASX_IOC_SA_JOIN, ASX_SA_JOIN_SIZE_VER0, true },
	{ ASX_IOC_SA_LEAVE, ASX_SA_JOIN_SIZE_VER0, true },
	{ ASX_IOC_SA_WAIT, ASX_SA_WAIT_SIZE_VER0, true },
	{ ASX_IOC_SA_INFO, ASX_SA_INFO_SIZE_VER0, true },
	{ ASX_IOC_SA_POST, ASX_SA_POST_SIZE_VER0, true },
};

/*
 * A real ioctl with a size around its struct's and, half the time, a bad
 * pointer for the struct or for a buffer it points to.
 */
static void bad_ioctl(struct worker *w)
{
	union {
		unsigned char raw[512];
		struct asx_list l;
		struct asx_strmsg sm;
		struct asx_strioctl si;
		struct asx_sa_create c;
		struct asx_sa_wait sw;
		struct asx_pipe p;
	} u;
	unsigned int k = rnd(w, ARRAY_SIZE(real_ioctls));
	unsigned int size = real_ioctls[k].size, len;
	unsigned long cmd = real_ioctls[k].cmd;
	bool group = real_ioctls[k].group ^ !rnd(w, 8);
	void *arg = &u, *ubuf = w->scratch;
	int fd, ret;

	memset(&u, 0, sizeof(u));
	if (!rnd(w, 4))
		random_bytes(w, &u, sizeof(u));
	switch (rnd(w, 8)) {
	case 0:
		size -= 1;
		break;
	case 1:
		size += 1;
		break;
	case 2:
		size += 8;
		u.raw[real_ioctls[k].size] = 1 + rnd(w, 255);
		break;
	case 3:
		size = rnd(w, 2) ? 0 : 4;
		break;
	case 4:
		size = rnd(w, 2) ? 0xffffffffu : 4096;
		break;
	}
	u.l.size = size;
	if (!rnd(w, 3))
		ubuf = bad_ptr(w, 4096);
	/* Buffers the struct points to; no wait longer than 1 ms. */
	switch (_IOC_NR(cmd)) {
	case 0x03:
		u.l.names = (uintptr_t)ubuf;
		u.l.count = rnd(w, 40);
		break;
	case 0x04: case 0x05: case 0x06:
		u.sm.ctl.buf = (uintptr_t)ubuf;
		u.sm.data.buf = (uintptr_t)(rnd(w, 2) ? ubuf : w->scratch + SCRATCH / 2);
		u.sm.ctl.maxlen = rnd(w, 600);
		u.sm.data.maxlen = rnd(w, 70000);
		u.sm.ctl.len = (int)rnd(w, 600) - 1;
		u.sm.data.len = (int)rnd(w, 70000) - 1;
		break;
	case 0x10:
		u.si.data = (uintptr_t)ubuf;
		u.si.len = rnd(w, 5000);
		u.si.timeout_ms = rnd(w, 2);
		break;
	case 0x13:
		u.p.flags = ASX_PIPE_NONBLOCK | ASX_PIPE_CLOEXEC;
		break;
	case 0x20:
		u.c.flags = ASX_SA_CLOEXEC;
		u.c.max_vps = rnd(w, 70);
		u.c.ring_size = rnd(w, 8) ? 1u << (6 + rnd(w, 9)) : rnd(w, 20000);
		break;
	case 0x23:
		u.sw.events = (uintptr_t)ubuf;
		u.sw.max = rnd(w, 70);
		u.sw.deadline_ns = rnd(w, 2) ? 0 : mono_ns() + 1000000;
		break;
	}
	if (rnd(w, 2)) {
		/* The struct itself where the kernel cannot read or write it all. */
		len = size < sizeof(u) ? size : sizeof(u);
		arg = bad_ptr(w, len ? len : 1);
		if ((unsigned char *)arg > badmem + page && (unsigned char *)arg < badmem + 2 * page)
			memcpy(arg, &u, badmem + 2 * page - (unsigned char *)arg);
	}
	fd = group ? __atomic_load_n(&gslots[rnd(w, NGSLOTS)], __ATOMIC_RELAXED) : pick(w);
	if (fd < 0)
		return;
	ret = ioctl(fd, cmd, arg);
	if (!ret && arg == &u && _IOC_NR(cmd) == 0x13 && u.p.fd > 2)
		install(w, u.p.fd);
	if (!ret && arg == &u && _IOC_NR(cmd) == 0x20 && u.c.fd > 2)
		install_in(w, gslots, NGSLOTS, u.c.fd);
	count(w, OP_BADIOCTL, ret);
}

/* What a user may make one Stream hold: fill it until flow control says no. */
static void flood(struct worker *w, int fd)
{
	static const char data[4000];
	int i, ret = 0;

	switch (rnd(w, 3)) {
	case 0:
		ret = asx_fill_stream(fd, 400) > 0 ? 0 : -1;
		break;
	case 1:
		for (i = 0; i < 2 * ASX_MAX_HIPRI_QUEUED && !ret; i++)
			ret = asx_putmsg(fd, &i, sizeof(i), data, sizeof(data), ASX_MSG_HIPRI, 0);
		break;
	default:
		asx_opt(fd, ASX_IOC_SWROPT, ASX_SNDZERO);
		/* 20,000 calls: on a slow guest (a debug kernel) they end with the worker */
		for (i = 0; i < 20000 && (ret = write(fd, "", 0)) == 0; i++)
			if (!(i & 63) && run_over(w))
				break;
		break;
	}
	count(w, OP_FLOOD, ret);
}

/* Activation groups: made, joined, left, waited on, posted to and closed. */
static void sa_op(struct worker *w)
{
	int g = __atomic_load_n(&gslots[rnd(w, NGSLOTS)], __ATOMIC_RELAXED), ret = -1, dev;
	struct asx_sa_join j = { .size = sizeof(j) };

	switch (rnd(w, 6)) {
	case 0: {
		struct asx_sa_create c = { .size = sizeof(c), .flags = ASX_SA_CLOEXEC,
					   .max_vps = 1 + rnd(w, 64),
					   .ring_size = 1u << (6 + rnd(w, 9)) };

		dev = pick(w);
		ret = dev >= 0 ? ioctl(dev, ASX_IOC_SA_CREATE, &c) : -1;
		if (!ret)
			install_in(w, gslots, NGSLOTS, c.fd);
		break;
	}
	case 1:
		ret = ioctl(g, ASX_IOC_SA_JOIN, &j);
		break;
	case 2:
		ret = ioctl(g, ASX_IOC_SA_LEAVE, &j);
		break;
	case 3: {
		struct asx_sa_wait sw = { .size = sizeof(sw), .events = (uintptr_t)w->scratch,
					  .max = 1 + rnd(w, 64) };

		sw.deadline_ns = rnd(w, 2) ? 0 : mono_ns() + 1000000;
		ret = ioctl(g, ASX_IOC_SA_WAIT, &sw);
		break;
	}
	case 4: {
		struct asx_sa_post p = { .size = sizeof(p), .arg = rnd(w, 1000) };

		ret = ioctl(g, ASX_IOC_SA_POST, &p);
		break;
	}
	default:
		g = __atomic_exchange_n(&gslots[rnd(w, NGSLOTS)], -1, __ATOMIC_SEQ_CST);
		if (g >= 0)
			ret = close(g);
		break;
	}
	count(w, OP_SA, ret);
}

/*
 * Named muxes and persistent links: a Stream of one of a few units made and
 * put in the pool, I_PLINK of a Stream of the pool under one of the pool's,
 * I_PUNLINK of a small id or all.  The links outlive the run's Streams:
 * punlink_all() undoes them before the objects are counted.
 */
#define FUZZ_UNIT0	240
#define FUZZ_UNITS	4

static void plink_op(struct worker *w, int fd)
{
	char name[ASX_NAME_MAX];
	int u;

	switch (rnd(w, 4)) {
	case 0:
		u = asx_open(O_NONBLOCK);
		snprintf(name, sizeof(name), "mux.%d", FUZZ_UNIT0 + (int)rnd(w, FUZZ_UNITS));
		count(w, OP_PLINK, u < 0 ? -1 : asx_setdrv(u, name));
		install(w, u);
		break;
	case 1:
		count(w, OP_PLINK, ioctl(fd, ASX_I_PLINK, pick(w)));
		break;
	case 2:
		count(w, OP_PLINK, ioctl(fd, ASX_I_PUNLINK,
					 rnd(w, 4) ? (int)rnd(w, 40) : ASX_XSI_MUXID_ALL));
		break;
	default:	/* a Stream of the pool, fresh or not, made one of a unit */
		snprintf(name, sizeof(name), "mux.%d", FUZZ_UNIT0 + (int)rnd(w, FUZZ_UNITS));
		count(w, OP_PLINK, asx_setdrv(fd, name));
		break;
	}
}

/* Undoes every persistent link the fuzzers made (as root, whoever made them): 0 or -1. */
static int punlink_all(void)
{
	char name[ASX_NAME_MAX];
	int i, u, ret = 0;

	for (i = 0; i < FUZZ_UNITS; i++) {
		u = asx_open(0);
		snprintf(name, sizeof(name), "mux.%d", FUZZ_UNIT0 + i);
		if (u < 0 || asx_setdrv(u, name) || ioctl(u, ASX_I_PUNLINK, ASX_XSI_MUXID_ALL))
			ret = -1;
		if (u >= 0)
			close(u);
	}
	return ret;
}

/*
 * A new mux over Streams of the pool (most are fresh loops, so most links
 * take), put in the pool: the links, unlinks and closes race with it.
 */
static void mux_op(struct worker *w)
{
	struct asx_link lk = { .size = sizeof(lk) };
	int u = asx_open(O_NONBLOCK), i, n = 1 + rnd(w, 3);

	count(w, OP_LINK, u < 0 ? -1 : asx_setdrv(u, "mux"));
	if (u < 0)
		return;
	for (i = 0; i < n; i++) {
		lk.fd = pick(w);
		lk.id = 0;
		count(w, OP_LINK, lk.fd < 0 ? -1 : ioctl(u, ASX_IOC_LINK, &lk));
	}
	install(w, u);
}

/* A band's water marks (ASX_FEAT_QBAND): set or read, bands past 255 refused. */
static void band_wm_op(struct worker *w, int fd)
{
	struct asx_wm wm = { .size = sizeof(wm), .level = rnd(w, 4), .side = rnd(w, 2),
			     .band = rnd(w, 8) ? 1 + rnd(w, 8) : rnd(w, 300) };

	if (rnd(w, 4)) {
		wm.hiwat = 1 + rnd(w, 70000);
		wm.lowat = rnd(w, 20000);
		count(w, OP_SETWM, ioctl(fd, ASX_IOC_SETWM, &wm));
	} else {
		count(w, OP_SETWM, ioctl(fd, ASX_IOC_GETWM, &wm));
	}
}

static void one_op(struct worker *w)
{
	unsigned char *buf = w->scratch;
	unsigned int op = rnd(w, w->hostile ? 130 : 100), n;
	struct asx_strmsg sm;
	int fd = pick(w), old;

	if (op >= 100) {
		if (op < 112)
			bad_ioctl(w);
		else if (op < 118 && fd >= 0)
			flood(w, fd);
		else if (op >= 118)
			sa_op(w);
		return;
	}
	if (op < 2) {
		fd = asx_open(O_NONBLOCK);
		count(w, OP_OPEN, fd);
		install(w, fd);
		return;
	}
	if (op < 4) {
		old = __atomic_exchange_n(&slots[rnd(w, NSLOTS)], -1, __ATOMIC_SEQ_CST);
		if (old >= 0)
			count(w, OP_CLOSE, close(old));
		return;
	}
	if (fd < 0)
		return;
	if (op < 6) {
		count(w, OP_PUSH, asx_push(fd, names[rnd(w, 5)]));
	} else if (op < 8) {
		count(w, OP_POP, asx_pop(fd, rnd(w, 2) ? NULL : names[rnd(w, 5)]));
	} else if (op < 20) {
		n = rnd(w, 4) ? rnd(w, 300) : rnd(w, 40000);
		random_bytes(w, buf, n < 64 ? n : 64);
		count(w, OP_WRITE, write(fd, buf, n));
	} else if (op < 32) {
		count(w, OP_READ, read(fd, buf, rnd(w, 2) ? rnd(w, 100) : SCRATCH));
	} else if (op < 40) {
		count(w, OP_PUTMSG, asx_putmsg(fd, buf, (int)rnd(w, 200) - 1, buf + 1000,
					       (int)rnd(w, 3000) - 1, rnd(w, 10) ? 0 : ASX_MSG_HIPRI,
					       rnd(w, 3) ? 0 : rnd(w, 300)));
	} else if (op < 48) {
		count(w, OP_GETMSG, asx_getmsg(fd, rnd(w, 4) ? ASX_IOC_GETMSG : ASX_IOC_PEEK, &sm,
					       buf, rnd(w, 300), buf + 1000, rnd(w, 5000),
					       rnd(w, 4), rnd(w, 3) ? 0 : rnd(w, 4)));
	} else if (op < 52) {
		count(w, OP_POLL, asx_poll1(fd, POLLIN | POLLOUT | POLLPRI | POLLWRBAND, 0));
	} else if (op < 56) {
		count(w, OP_FLUSH, asx_flush(fd, rnd(w, 8), rnd(w, 3) ? 0 : rnd(w, 3)));
	} else if (op < 58) {
		count(w, OP_SETWM, asx_setwm(fd, rnd(w, 4), rnd(w, 2), 1 + rnd(w, 70000),
					     rnd(w, 20000)));
	} else if (op < 60) {
		band_wm_op(w, fd);
	} else if (op < 63) {
		count(w, OP_STR, asx_str(fd, rnd(w, 2) ? ASX_STR_HOLD_RELEASE : ASX_STR_HOLD_HOLD,
					 NULL, 0, 0, NULL));
	} else if (op < 65) {
		/* sometimes the driver of kmod/test/asx_upper.ko, if loaded */
		count(w, OP_SETDRV, asx_setdrv(fd, rnd(w, 6) ? names[5 + rnd(w, 5)] : "upper"));
	} else if (op < 67) {
		struct asx_link lk = { .size = sizeof(lk) };

		if (!rnd(w, 3)) {
			mux_op(w);
		} else if (rnd(w, 2)) {
			lk.fd = pick(w);
			count(w, OP_LINK, ioctl(fd, ASX_IOC_LINK, &lk));
		} else {
			lk.id = rnd(w, 4) ? rnd(w, 8) : ASX_MUX_ALL;
			count(w, OP_LINK, ioctl(fd, ASX_IOC_UNLINK, &lk));
		}
	} else if (op < 68) {
		fd = asx_pipe(fd, ASX_PIPE_NONBLOCK | ASX_PIPE_CLOEXEC);
		count(w, OP_PIPE, fd);
		install(w, fd);
	} else if (op < 76) {
		xsi_op(w, fd);
	} else if (op < 78) {
		plink_op(w, fd);
	} else if (op < 80) {
		tioc_op(w, fd);
	} else {
		random_ioctl(w, fd);
	}
}

static void *worker_fn(void *p)
{
	struct worker *w = p;
	int i;

	for (i = 0; w->hostile || i < NOPS / NTHREADS; i++) {
		if (w->hostile && !(i & 63) && run_over(w))
			break;
		one_op(w);
	}
	return NULL;
}

static const char *hostile_cg;
static bool until_half;		/* this run may end once the cgroup filled to half */

/*
 * Worker 0 of a hostile run: Streams filled to the largest water mark a
 * user may set, until the cgroup is near its limit (or says no); then it
 * closes half of them and goes on. The other workers run under that
 * pressure, and now and then take the cgroup over its limit.
 */
static void *exhaust_fn(void *p)
{
	const long near = (long)HOSTILE_CG_MB * 1024 * 1024 * 3 / 4;
	struct worker *w = p;
	int fds[256], n = 0, i, fd, maxn = 0, halvings = 0, err = 0, nerr = 0;
	long cur, maxcur = 0, bytes = 0, got;
	uint64_t t0 = mono_ns();
	bool full;

	while (!run_over(w)) {
		fd = n < 256 ? asx_open(O_NONBLOCK) : -1;
		full = fd < 0;
		if (fd >= 0) {
			fds[n++] = fd;
			got = asx_fill_stream(fd, 1000);
			bytes += got > 0 ? got : 0;
			full = errno != EAGAIN;
		}
		if (full) {
			err = fd < 0 && n == 256 ? 0 : errno;
			nerr++;
		}
		maxn = n > maxn ? n : maxn;
		count(w, OP_FLOOD, full ? -1 : 0);
		cur = read_key(hostile_cg, "memory.current", NULL);
		maxcur = cur > maxcur ? cur : maxcur;
		if (until_half && read_key(hostile_cg, "memory.peak", NULL) >= HOSTILE_HALF)
			__atomic_store_n(&run_stop, 1, __ATOMIC_RELAXED);
		if (full || cur > near) {
			for (i = n / 2; i < n; i++)
				close(fds[i]);
			n /= 2;
			halvings++;
			asx_msleep(rnd(w, 20));
		}
	}
	/* what filled the cgroup, or why it did not */
	fprintf(stderr, "#   worker 0: %.1f s, %ld KB written, up to %d Streams held, "
		"memory.current up to %ld KB, %d halvings, %d refusals (last: %s)\n",
		(double)(mono_ns() - t0) / 1e9, bytes / 1024, maxn, maxcur / 1024, halvings,
		nerr, nerr ? (err ? strerror(err) : "256 Streams") : "none");
	return NULL;
}

/*
 * The sanity phase after a run: what any program does first still works,
 * as @uid (-1: the caller's) in a child of its own. A loop and a pipe end
 * to end, a fresh Stream made a mux with a fresh lower linked under it and
 * a message down to the lower and back up. Returns 0, or 1 + the number of
 * the step that failed (its errno and the step are printed).
 */
static int sanity_steps(void)
{
	struct asx_mux_hdr hdr = { 0 }, got = { 0 };
	struct asx_link lk = { .size = sizeof(lk) };
	char buf[32], drv[ASX_NAME_MAX] = "";
	struct asx_strmsg sm;
	int a, b, u, l, step = 0;

#define STEP(cond) do {								\
		step++;								\
		if (!(cond)) {							\
			fprintf(stderr, "# sanity step %d (line %d) failed: %s\n",	\
				step, __LINE__, strerror(errno));		\
			return step;						\
		}								\
	} while (0)
	/* a loop: what goes down comes back up */
	STEP((a = asx_open(0)) >= 0);
	STEP(write(a, "loop", 4) == 4);
	memset(buf, 0, sizeof(buf));
	STEP(read(a, buf, sizeof(buf)) == 4 && !memcmp(buf, "loop", 4));
	/* a pipe: each end's writes come up the other's */
	STEP((b = asx_pipe(a, 0)) >= 0);
	STEP(write(a, "ab", 2) == 2 && write(b, "ba", 2) == 2);
	memset(buf, 0, sizeof(buf));
	STEP(read(b, buf, sizeof(buf)) == 2 && !memcmp(buf, "ab", 2));
	STEP(read(a, buf, sizeof(buf)) == 2 && !memcmp(buf, "ba", 2));
	close(a);
	close(b);
	/* a mux over a loop lower: down with the lower's id, back up tagged with it */
	STEP((u = asx_open(0)) >= 0 && (l = asx_open(0)) >= 0);
	STEP(asx_setdrv(u, "mux") == 0);
	STEP(asx_list(u, NULL, 0, drv) == 0 && !strcmp(drv, "mux"));
	lk.fd = l;
	STEP(ioctl(u, ASX_IOC_LINK, &lk) == 0);
	hdr.id = lk.id;
	STEP(asx_putmsg(u, &hdr, sizeof(hdr), "mux", 3, 0, 0) == 0);
	memset(buf, 0, sizeof(buf));
	STEP(asx_poll1(u, POLLIN, 5000) > 0);
	STEP(asx_getmsg(u, ASX_IOC_GETMSG, &sm, &got, sizeof(got), buf, sizeof(buf), 0, 0) == 0);
	STEP(sm.ctl.len == sizeof(got) && got.id == lk.id && sm.data.len == 3 &&
	     !memcmp(buf, "mux", 3));
	/* unlinked, the lower is a loop again */
	lk.fd = 0;
	STEP(ioctl(u, ASX_IOC_UNLINK, &lk) == 0);
	STEP(write(l, "l", 1) == 1 && read(l, buf, 1) == 1 && buf[0] == 'l');
	close(u);
	close(l);
#undef STEP
	return 0;
}

static int sanity(uid_t uid)
{
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		alarm(30);
		if (uid != (uid_t)-1 && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(100);
		_exit(sanity_steps());
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

static long settle(const char *what, long want)
{
	long v = -1;
	int i;

	for (i = 0; i < 100; i++) {
		v = asx_objects(what);
		if (v == want)
			break;
		asx_msleep(20);
	}
	return v;
}

/*
 * Loads kmod/test/asx_upper.ko, whose driver "upper" SETDRV then picks at
 * times (drvreg_test tests it): 1 if this run loaded it. Without it (not
 * built, not root) the run goes on over the built-in drivers.
 */
static int load_upper(void)
{
	if (asx_ko_load("asx_upper.ko", "")) {
		fprintf(stderr, "# asx_upper.ko not loaded (%s): no registered driver\n",
			strerror(errno));
		return 0;
	}
	return 1;
}

TEST(random_operations)
{
	static const char *const objs[] = { "streams", "modules", "msgs", "dblks" };
	struct worker w[NTHREADS];
	pthread_t t[NTHREADS];
	unsigned int seed;
	long before[4], ok[NOPKINDS] = { 0 }, total[NOPKINDS] = { 0 };
	int i, k, upper;

	signal(SIGPIPE, SIG_IGN);
	signal(SIGPOLL, SIG_IGN);	/* I_SETSIG */
	signal(SIGURG, SIG_IGN);
	seed = getenv("ASX_RANDOM_SEED") ? atoi(getenv("ASX_RANDOM_SEED")) : time(NULL);
	TH_LOG("seed %u (ASX_RANDOM_SEED=%u repeats this run)", seed, seed);
	ASSERT_EQ(asx_quiesce(), 0) TH_LOG("earlier Streams never freed");
	for (i = 0; i < 4; i++) {
		before[i] = asx_objects(objs[i]);
		ASSERT_GE(before[i], 0) TH_LOG("%s: %s", ASX_OBJECTS, strerror(errno));
	}
	upper = load_upper();
	for (i = 0; i < NSLOTS; i++)
		slots[i] = asx_open(O_NONBLOCK);
	for (i = 0; i < NTHREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = seed + i;
		w[i].scratch = malloc(SCRATCH + 4096);
		ASSERT_TRUE(w[i].scratch != NULL);
		ASSERT_EQ(pthread_create(&t[i], NULL, worker_fn, &w[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		for (k = 0; k < NOPKINDS; k++) {
			ok[k] += w[i].ok[k];
			total[k] += w[i].total[k];
		}
		free(w[i].scratch);
	}
	for (i = 0; i < NSLOTS; i++)
		if (slots[i] >= 0)
			close(slots[i]);
	/* Pipe ends that lost their slot to a racing install are closed here. */
	for (i = 3; i < 1024; i++)
		close(i);
	for (k = 0; k < NOPKINDS; k++)
		TH_LOG("%-7s %6ld calls, %6ld succeeded", op_names[k], total[k], ok[k]);
	EXPECT_EQ(punlink_all(), 0) TH_LOG("undoing the persistent links");
	EXPECT_EQ(asx_quiesce(), 0);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(settle(objs[i], before[i]), before[i]) TH_LOG("live %s", objs[i]);
	}
	EXPECT_EQ(sanity(-1), 0) TH_LOG("the module works after the run (as root)");
	EXPECT_EQ(sanity(65534), 0) TH_LOG("the module works after the run (as nobody)");
	EXPECT_EQ(settle("streams", before[0]), before[0]) TH_LOG("live streams after the sanity phase");
	if (upper)
		EXPECT_EQ(asx_ko_unload_settled("asx_upper"), 0)
			TH_LOG("asx_upper still held: %s", strerror(errno));
}

/*
 * As nobody in @cg: the hostile workers until @deadline (or, @half, until
 * the cgroup has filled to half its limit); exits 0.
 */
static void hostile_child(const char *cg, unsigned int seed, uint64_t deadline, bool half)
{
	struct worker w[HOSTILE_THREADS];
	pthread_t t[HOSTILE_THREADS];
	int i;

	if (cg_enter(cg))
		_exit(20);
	if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
		_exit(21);
	hostile_cg = cg;
	until_half = half;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGPOLL, SIG_IGN);	/* I_SETSIG */
	signal(SIGURG, SIG_IGN);
	for (i = 0; i < NSLOTS; i++)
		slots[i] = asx_open(O_NONBLOCK);
	for (i = 0; i < NGSLOTS; i++)
		gslots[i] = -1;
	for (i = 0; i < HOSTILE_THREADS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].seed = seed + i;
		w[i].hostile = true;
		w[i].deadline_ns = deadline;
		w[i].scratch = malloc(SCRATCH + 4096);
		if (!w[i].scratch || pthread_create(&t[i], NULL, i ? worker_fn : exhaust_fn, &w[i]))
			_exit(22);
	}
	for (i = 0; i < HOSTILE_THREADS; i++)
		pthread_join(t[i], NULL);
	/* the test prints the calls of all the workers (all_calls) */
	_exit(0);
}

/* Waits (up to 10 s) for the cgroup's memory.current to drop to @max bytes. */
static long settle_cg_memory(const char *cg, long max)
{
	long v = -1;
	int i;

	for (i = 0; i < 100; i++) {
		v = read_key(cg, "memory.current", NULL);
		if (v >= 0 && v <= max)
			break;
		asx_msleep(100);
	}
	return v;
}

/*
 * Where @pid's threads are in the kernel (/proc/PID/task/TID/stack, root
 * only; else their wchan): for a worker the watchdog is about to kill.
 */
static void show_stacks(struct __test_metadata *_metadata, pid_t pid)
{
	char path[96], line[256];
	struct dirent *de;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stack", (int)pid, de->d_name);
		f = fopen(path, "re");
		if (!f) {
			snprintf(path, sizeof(path), "/proc/%d/task/%.16s/wchan", (int)pid,
				 de->d_name);
			f = fopen(path, "re");
		}
		TH_LOG("worker %d thread %s, in the kernel at:", (int)pid, de->d_name);
		while (f && fgets(line, sizeof(line), f)) {
			line[strcspn(line, "\n")] = 0;
			TH_LOG("  %s", line);
		}
		if (f)
			fclose(f);
	}
	closedir(d);
}
/* the extra 60 s: more runs, on a slow guest, until the cgroup has filled */
TEST_TIMEOUT(hostile_user_in_a_memory_cgroup, HOSTILE_SECS + 60 + 160)
{
	static const char *const objs[] = { "streams", "modules", "msgs", "dblks" };
	const char *env = getenv("ASX_HOSTILE_SECONDS");
	unsigned int secs = env ? (unsigned int)atoi(env) : HOSTILE_SECS;
	long before[4], base_members, ooms0, peak, cg_ooms, sys_ooms, cur, d, maxd = 0;
	int status = 0, i, k, fd, runs = 0, extra_runs = 0, killed = 0, stuck = 0, slack;
	bool extra;
	long calls = 0;
	int timeout = _metadata->timeout;	/* ASX_TEST_TIMEOUT's, if longer */
	char cg[128], max[32], buf[16];
	uint64_t end, wend, now, extra_ns;
	unsigned int seed;
	pid_t pid;

	ASSERT_GT(secs, 0) TH_LOG("ASX_HOSTILE_SECONDS");
	ASSERT_LE(secs + 180, (unsigned int)timeout)
		TH_LOG("ASX_HOSTILE_SECONDS=%u needs ASX_TEST_TIMEOUT=%u or more", secs,
		       secs + 180);
	seed = getenv("ASX_RANDOM_SEED") ? atoi(getenv("ASX_RANDOM_SEED")) : time(NULL);
	TH_LOG("seed %u (ASX_RANDOM_SEED=%u repeats it), %u s", seed, seed, secs);
	page = sysconf(_SC_PAGESIZE);
	badmem = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(badmem != MAP_FAILED);
	ASSERT_EQ(mprotect(badmem, page, PROT_READ), 0);
	ASSERT_EQ(mprotect(badmem + 2 * page, page, PROT_NONE), 0);

	ASSERT_EQ(asx_quiesce(), 0) TH_LOG("earlier Streams never freed");
	for (i = 0; i < 4; i++)
		before[i] = asx_objects(objs[i]);
	base_members = asx_kmembers();
	ooms0 = read_key("/proc", "vmstat", "oom_kill");
	ASSERT_GE(ooms0, 0) TH_LOG("/proc/vmstat");
	ASSERT_EQ(cg_setup(), 0) TH_LOG("cgroup v2: %s", strerror(errno));
	snprintf(cg, sizeof(cg), "%s/asx-hostile.%d", cg_root, getpid());
	ASSERT_EQ(mkdir(cg, 0755), 0) TH_LOG("%s: %s (memory controller?)", cg, strerror(errno));
	snprintf(max, sizeof(max), "%dM", HOSTILE_CG_MB);
	ASSERT_EQ(write_file(cg, "memory.max", max), 0) TH_LOG("memory.max: %s", strerror(errno));
	write_file(cg, "memory.swap.max", "0");

	all_calls = mmap(NULL, sizeof(*all_calls), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(all_calls != MAP_FAILED);
	/*
	 * Workers killed by the cgroup's OOM killer are replaced until the end.
	 * A slow guest (the PREEMPT_RT debug kernel makes some 56 calls a
	 * second) may not have filled half the cgroup by then: one more run
	 * follows, which ends as soon as worker 0 sees the cgroup filled to
	 * half (each run starts empty: runs of a few seconds never got there),
	 * 60 s at most, plus what ASX_TEST_TIMEOUT gives beyond
	 * ASX_HOSTILE_SECONDS + 220 (make check-debug sets it higher), so that
	 * the check of what was charged below does not depend on the
	 * machine's speed.
	 */
	slack = timeout > (int)secs + 220 ? timeout - (int)secs - 220 : 0;
	extra_ns = (60ull + (unsigned int)slack) * 1000000000ull;
	end = mono_ns() + secs * 1000000000ull;
	while (!stuck) {
		now = mono_ns();
		wend = end;
		extra = false;
		if (now + 1000000000ull >= end) {
			if (now + 1000000000ull >= end + extra_ns ||
			    read_key(cg, "memory.peak", NULL) >= HOSTILE_HALF)
				break;
			wend = end + extra_ns;
			extra = true;
		}
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid)
			hostile_child(cg, seed + 1000 * runs, wend, extra);
		runs++;
		extra_runs += extra;
		while (waitpid(pid, &status, WNOHANG) == 0) {
			d = asx_objects("dblks");
			maxd = d > maxd ? d : maxd;
			asx_msleep(100);
			/* A watchdog: no call may keep a worker past its end. */
			if (mono_ns() > wend + 60000000000ull && !stuck) {
				stuck = 1;
				show_stacks(_metadata, pid);
				kill(pid, SIGKILL);
			}
		}
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
			killed++;
		} else {
			EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
				TH_LOG("worker %d: status %#x", runs, status);
		}
		if (getenv("ASX_RANDOM_AFTER_RUN"))
			EXPECT_EQ(system(getenv("ASX_RANDOM_AFTER_RUN")), 0)
				TH_LOG("ASX_RANDOM_AFTER_RUN after run %d", runs);
		/* After every run: its Streams are freed, and a new user still gets work done. */
		EXPECT_EQ(punlink_all(), 0) TH_LOG("undoing run %d's persistent links", runs);
		EXPECT_EQ(asx_quiesce(), 0) TH_LOG("run %d", runs);
		EXPECT_EQ(settle("streams", before[0]), before[0])
			TH_LOG("live streams after run %d", runs);
		EXPECT_EQ(sanity(65534), 0) TH_LOG("sanity as nobody after run %d", runs);
		EXPECT_EQ(sanity(-1), 0) TH_LOG("sanity as root after run %d", runs);
	}
	EXPECT_EQ(stuck, 0) TH_LOG("a worker was still in the kernel 60 s after its end");
	peak = read_key(cg, "memory.peak", NULL);
	cg_ooms = read_key(cg, "memory.events", "oom_kill");
	sys_ooms = read_key("/proc", "vmstat", "oom_kill") - ooms0;
	for (k = 0; k < NALLKINDS; k++) {
		TH_LOG("%-8s %8ld calls, %8ld succeeded",
		       k < NOPKINDS ? op_names[k] : hostile_names[k - NOPKINDS],
		       all_calls->total[k], all_calls->ok[k]);
		calls += all_calls->total[k];
	}
	TH_LOG("%ld calls in %u s by %d workers (%d after the %u s, until the cgroup filled), "
	       "%d OOM-killed in the cgroup (%ld kills)",
	       calls, secs, runs, extra_runs, secs, killed, cg_ooms);
	/* the fuzzer fuzzed: even the debug kernel runs dozens of calls a second */
	EXPECT_GE(calls, 10L * secs) TH_LOG("calls made by the workers");
	TH_LOG("memory.peak %ld KB (memory.max %d MB); at most %ld data blocks held",
	       peak / 1024, HOSTILE_CG_MB, maxd);
	EXPECT_GE(peak, HOSTILE_HALF)
		TH_LOG("what the module held was charged to the cgroup");
	EXPECT_EQ(sys_ooms, cg_ooms) TH_LOG("every OOM kill in the guest was the cgroup's own");
	EXPECT_LE(killed, cg_ooms) TH_LOG("a worker was killed by someone else");

	/* Everything the workers made is gone, the cgroup's memory with it. */
	EXPECT_EQ(asx_quiesce(), 0);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(settle(objs[i], before[i]), before[i]) TH_LOG("live %s", objs[i]);
	}
	EXPECT_EQ(asx_settle_kmembers(base_members), base_members) TH_LOG("activation members");
	cur = settle_cg_memory(cg, 2 << 20);
	EXPECT_LE(cur, 2 << 20) TH_LOG("memory.current after the workers are gone");
	EXPECT_EQ(rmdir(cg), 0) TH_LOG("%s: %s", cg, strerror(errno));
	cg_teardown();

	/* And the module still works. */
	fd = asx_open(0);
	ASSERT_GE(fd, 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(asx_push(fd, "pass"), 0) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(write(fd, "still here", 10), 10);
	memset(buf, 0, sizeof(buf));
	EXPECT_EQ(read(fd, buf, sizeof(buf)), 10);
	EXPECT_EQ(strcmp(buf, "still here"), 0) TH_LOG("read back: %s", buf);
	close(fd);
	munmap(badmem, 3 * page);
	munmap(all_calls, sizeof(*all_calls));
	all_calls = NULL;
}

TEST_HARNESS_MAIN
