// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * uring.c - the Proactor's io_uring back end (Debian's liburing).
 *
 * Each operation is one submission (a connect with a timeout two, linked:
 * CONNECT then LINK_TIMEOUT) whose user_data is the completion handler;
 * its completion moves the handler to the done list.  Cancellation is an
 * ASYNC_CANCEL of that user_data (it reaches timeouts too; a request an
 * io-wq worker runs ends -EINTR, reported -ECANCELED).  Submissions wait
 * in the submission queue and go with the loop's next io_uring_enter, one
 * system call for a batch: another thread queues its entries and wakes
 * the loop with an eventfd the ring always has a read on, so every
 * request belongs to the loop's thread.  When another thread finds the
 * submission queue full, its start or cancel waits on a backlog (in
 * order) that the loop moves into the queue before it next enters the
 * kernel: a request submitted by a thread that then exits may never
 * complete, nor be cancelled (seen on Linux 6.18: a cancelled recv whose
 * completion never came).  The submission queue and the backlog are
 * touched only under p->lock; the completion queue only by the thread in
 * run_once or close.
 */
#ifdef ASX_HAVE_LIBURING
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <liburing.h>

#include "core/compiler.h"
#include "proactor/proactor_impl.h"

#define TAG_IGNORE 0		/* cancels and link timeouts: nothing to do */
#define TAG_WAKE 1		/* the eventfd's read */

/* Why a handler waits on the backlog (pop.backlog). */
enum { BL_NONE, BL_START, BL_CANCEL };

struct ur {
	struct io_uring ring;
	int efd;
	uint64_t evbuf;		/* the eventfd read's buffer, while armed */
	bool wake_armed;
	struct asx__pdone backlog;	/* starts and cancels the queue had no room for */
};

/*
 * Why io_uring cannot be used, two ways: the failed open's sentence and
 * the fallback's.
 */
#define WHY(s) { "io_uring: " s, "io_uring not used, " s "; the Reactor back end (epoll) runs instead" }
static const char *const why_nosys[2] =
	WHY("the kernel has no io_uring (ENOSYS: too old, built without it, or a seccomp filter)");
static const char *const why_perm[2] =
	WHY("io_uring is forbidden (EPERM: sysctl kernel.io_uring_disabled, or a seccomp filter)");
static const char *const why_nomem[2] =
	WHY("io_uring_setup failed with ENOMEM (RLIMIT_MEMLOCK before Linux 5.12, or no memory)");
static const char *const why_other[2] =
	WHY("io_uring_setup failed (see its errno)");
static const char *const why_ops[2] =
	WHY("the kernel lacks an io_uring operation or feature the Proactor uses (needs Linux 5.11)");

/* The sentence for @err: [0] if io_uring was required, [1] for the fallback. */
static const char *uring_why(int err, bool required)
{
	const char *const *w = err == -ENOSYS ? why_nosys : err == -EPERM ? why_perm :
			       err == -ENOMEM ? why_nomem : why_other;

	return w[!required];
}

/*
 * Room for @n entries, the first returned (the caller takes the others
 * with io_uring_get_sqe), or NULL.  Only the loop's thread (or close's)
 * may submit to make room: @may_submit.
 */
static struct io_uring_sqe *get_sqe(struct ur *u, unsigned int n, bool may_submit)
{
	if (io_uring_sq_space_left(&u->ring) < n && may_submit)
		io_uring_submit(&u->ring);
	if (io_uring_sq_space_left(&u->ring) < n)
		return NULL;
	return io_uring_get_sqe(&u->ring);
}

/* The loop's thread (or close's, which owns the ring from then on). */
static bool may_submit(struct asx_proactor *p)
{
	return p->closing || asx__pop_on_loop(p);
}

static void arm_wake(struct ur *u)
{
	struct io_uring_sqe *sqe = get_sqe(u, 1, true);

	if (sqe) {
		io_uring_prep_read(sqe, u->efd, &u->evbuf, sizeof(u->evbuf), 0);
		io_uring_sqe_set_data64(sqe, TAG_WAKE);
		u->wake_armed = true;
	}
}

static bool has_ops(struct io_uring *ring)
{
	static const int ops[] = {
		IORING_OP_ACCEPT, IORING_OP_CONNECT, IORING_OP_READ, IORING_OP_WRITE,
		IORING_OP_READV, IORING_OP_WRITEV, IORING_OP_RECV, IORING_OP_SEND,
		IORING_OP_TIMEOUT, IORING_OP_LINK_TIMEOUT, IORING_OP_ASYNC_CANCEL,
	};
	struct io_uring_probe *pr = io_uring_get_probe_ring(ring);
	bool ok = pr != NULL;

	for (size_t i = 0; ok && i < ASX_ARRAY_SIZE(ops); i++)
		ok = io_uring_opcode_supported(pr, ops[i]);
	io_uring_free_probe(pr);
	return ok;
}

static int ur_open(struct asx_proactor *p, unsigned int entries, const char **why)
{
	/* opts or $ASX_PROACTOR asked for io_uring: open fails rather than falls back */
	bool required = p->uring_required;
	struct io_uring_params prm;
	struct ur *u;
	int ret;

	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	/*
	 * COOP_TASKRUN (Linux 5.19): completions' task work runs when the
	 * loop enters the kernel, not by interrupting it; older kernels
	 * refuse the flag (-EINVAL) and get the ring without it.
	 */
	for (int i = 0; i < 2; i++) {
		memset(&prm, 0, sizeof(prm));
		prm.flags = IORING_SETUP_CQSIZE | (i ? 0 : IORING_SETUP_COOP_TASKRUN);
		prm.cq_entries = entries * 4;
		ret = io_uring_queue_init_params(entries, &u->ring, &prm);
		if (ret != -EINVAL)
			break;
	}
	if (ret < 0) {
		*why = uring_why(ret, required);
		free(u);
		return ret;
	}
	if (!(prm.features & IORING_FEAT_EXT_ARG) || !(prm.features & IORING_FEAT_NODROP) ||
	    !has_ops(&u->ring)) {
		*why = why_ops[!required];
		io_uring_queue_exit(&u->ring);
		free(u);
		return -ENOSYS;
	}
	u->efd = eventfd(0, EFD_CLOEXEC);
	if (u->efd < 0) {
		ret = -errno;
		*why = "io_uring: eventfd failed";
		io_uring_queue_exit(&u->ring);
		free(u);
		return ret;
	}
	arm_wake(u);	/* submitted by the loop's first wait */
	p->be = u;
	*why = "io_uring back end (liburing)";
	return 0;
}

static void ur_close(struct asx_proactor *p)
{
	struct ur *u = p->be;

	io_uring_queue_exit(&u->ring);
	close(u->efd);
	free(u);
}

static void ur_wake(struct asx_proactor *p);

/*
 * Only the loop's thread submits (ur_wait): another thread's entries wait
 * in the queue and it wakes the loop.  A request belongs to the task that
 * submitted it: were a thread that started an operation to exit, the
 * kernel would end the work its io-wq runs for that operation.
 */
static void submit_by_loop(struct asx_proactor *p)
{
	if (!asx__pop_on_loop(p))
		ur_wake(p);
}

static void set_ts(struct pop *o, uint64_t ns)
{
	o->ts[0] = (int64_t)(ns / ASX_NSEC_PER_SEC);
	o->ts[1] = (int64_t)(ns % ASX_NSEC_PER_SEC);
}

/* Put @c's start in the submission queue: 0, -EAGAIN (no room) or -EINVAL. */
static int queue_start(struct ur *u, struct asx_completion *c, bool submit)
{
	struct pop *o = pop_of(c);
	struct io_uring_sqe *sqe;
	unsigned int len = o->len > 0x7ffff000u ? 0x7ffff000u : (unsigned int)o->len;

	sqe = get_sqe(u, o->kind == POP_CONNECT && o->deadline_ns ? 2 : 1, submit);
	if (!sqe)
		return -EAGAIN;
	switch (o->kind) {
	case POP_ACCEPT:
		io_uring_prep_accept(sqe, o->fd, NULL, NULL, SOCK_CLOEXEC);
		break;
	case POP_CONNECT:
		io_uring_prep_connect(sqe, o->fd, o->addr, o->addrlen);
		break;
	case POP_READ:
		io_uring_prep_read(sqe, o->fd, o->buf, len, (uint64_t)-1);
		break;
	case POP_WRITE:
		io_uring_prep_write(sqe, o->fd, o->buf, len, (uint64_t)-1);
		break;
	case POP_READV:
		io_uring_prep_readv(sqe, o->fd, o->buf, (unsigned int)o->len, (uint64_t)-1);
		break;
	case POP_WRITEV:
		io_uring_prep_writev(sqe, o->fd, o->buf, (unsigned int)o->len, (uint64_t)-1);
		break;
	case POP_RECV:
		io_uring_prep_recv(sqe, o->fd, o->buf, len, o->flags);
		break;
	case POP_SEND:
		io_uring_prep_send(sqe, o->fd, o->buf, len, o->flags);
		break;
	case POP_TIMER:
		set_ts(o, o->deadline_ns);
		io_uring_prep_timeout(sqe, (struct __kernel_timespec *)o->ts, 0,
				      IORING_TIMEOUT_ABS);
		break;
	default:
		/* nothing was prepared: give the entry back as a no-op */
		io_uring_prep_nop(sqe);
		io_uring_sqe_set_data64(sqe, TAG_IGNORE);
		return -EINVAL;
	}
	io_uring_sqe_set_data(sqe, c);
	if (o->kind == POP_CONNECT && o->deadline_ns) {
		uint64_t now = asx_now_ns();

		sqe->flags |= IOSQE_IO_LINK;
		set_ts(o, o->deadline_ns > now ? o->deadline_ns - now : 0);
		sqe = io_uring_get_sqe(&u->ring);	/* room for two was made */
		io_uring_prep_link_timeout(sqe, (struct __kernel_timespec *)o->ts, 0);
		io_uring_sqe_set_data64(sqe, TAG_IGNORE);
	}
	return 0;
}

/* Put a cancel of @c in the submission queue: 0 or -EAGAIN (no room). */
static int queue_cancel(struct ur *u, struct asx_completion *c, bool submit)
{
	struct io_uring_sqe *sqe = get_sqe(u, 1, submit);

	if (!sqe)
		return -EAGAIN;
	io_uring_prep_cancel(sqe, c, 0);
	io_uring_sqe_set_data64(sqe, TAG_IGNORE);
	return 0;
}

static void backlog_add(struct ur *u, struct asx_completion *c, uint8_t why)
{
	pop_of(c)->backlog = why;
	asx__pop_append(&u->backlog, c);
}

/* Take @c off the backlog (it is there). */
static void backlog_del(struct ur *u, struct asx_completion *c)
{
	struct asx_completion **pp = &u->backlog.head, *prev = NULL;

	while (*pp != c) {
		prev = *pp;
		pp = &pop_of(*pp)->qnext;
	}
	*pp = pop_of(c)->qnext;
	if (u->backlog.tail == c)
		u->backlog.tail = prev;
	pop_of(c)->qnext = NULL;
	pop_of(c)->backlog = BL_NONE;
}

/*
 * Move the backlog into the submission queue, in order, submitting to
 * make room (the loop's or close's thread), p->lock held.
 */
static void backlog_flush(struct asx_proactor *p, struct ur *u)
{
	struct asx_completion *c;
	int ret;

	while ((c = u->backlog.head)) {
		struct pop *o = pop_of(c);

		ret = o->backlog == BL_START ? queue_start(u, c, true) : queue_cancel(u, c, true);
		if (ret == -EAGAIN)
			return;		/* the kernel has no room yet: after the next wait */
		backlog_del(u, c);
		if (ret)
			asx__pop_done(p, c, ret, NULL);
	}
}

static int ur_start(struct asx_proactor *p, struct asx_completion *c)
{
	struct ur *u = p->be;
	int ret = -EAGAIN;

	/* behind the backlog if there is one: starts keep their order */
	if (!u->backlog.head)
		ret = queue_start(u, c, may_submit(p));
	if (ret == -EAGAIN) {
		backlog_add(u, c, BL_START);
		ret = 0;
	}
	if (!ret)
		submit_by_loop(p);
	return ret;
}

static void ur_cancel(struct asx_proactor *p, struct asx_completion *c)
{
	struct ur *u = p->be;
	struct pop *o = pop_of(c);

	switch (o->backlog) {
	case BL_START:
		/* never submitted: it ends here */
		backlog_del(u, c);
		asx__pop_done(p, c, -ECANCELED, NULL);
		break;
	case BL_CANCEL:
		return;
	default:
		if (u->backlog.head || queue_cancel(u, c, may_submit(p)) == -EAGAIN)
			backlog_add(u, c, BL_CANCEL);
		break;
	}
	submit_by_loop(p);
}

/*
 * Append @c to @l in deadline order (after those due at the same time).
 * Timeouts that expire together post their completions in one batch of
 * task work, in no promised order (LIFO on Linux 6.1): sorting each batch
 * keeps the timers' deadline order.
 */
static void timer_insert(struct asx__pdone *l, struct asx_completion *c)
{
	struct asx_completion **pp = &l->head;
	uint64_t d = pop_of(c)->deadline_ns;

	while (*pp && pop_of(*pp)->deadline_ns <= d)
		pp = &pop_of(*pp)->qnext;
	pop_of(c)->qnext = *pp;
	*pp = c;
	if (!pop_of(c)->qnext)
		l->tail = c;
}

/* Move every completion queue entry's handler to p->done. */
static void reap(struct asx_proactor *p, struct ur *u)
{
	struct asx__pdone timers = { NULL, NULL }, sorted = { NULL, NULL };
	struct asx_completion *c, *next;
	struct io_uring_cqe *cqe;
	unsigned int head, n = 0;

	pthread_mutex_lock(&p->lock);
	io_uring_for_each_cqe(&u->ring, head, cqe) {
		int64_t res = cqe->res;

		c = io_uring_cqe_get_data(cqe);
		n++;
		if (cqe->user_data == TAG_IGNORE)
			continue;
		if (cqe->user_data == TAG_WAKE) {
			atomic_store(&p->wake_pending, false);
			u->wake_armed = false;
			if (!p->closing)
				arm_wake(u);
			continue;
		}
		/* done before its cancel left the backlog: the cancel is moot */
		if (pop_of(c)->backlog)
			backlog_del(u, c);
		switch (pop_of(c)->kind) {
		case POP_TIMER:
			asx__pop_done(p, c, res == -ETIME ? 0 : res, &timers);
			continue;
		case POP_CONNECT:
			/* the link timeout ended it, not a cancel */
			if (res == -ECANCELED && !pop_of(c)->cancelled && pop_of(c)->deadline_ns)
				res = -ETIMEDOUT;
			break;
		default:
			break;
		}
		/* a cancel that reached a request an io-wq worker runs: -EINTR */
		if (res == -EINTR && pop_of(c)->cancelled)
			res = -ECANCELED;
		asx__pop_done(p, c, res, NULL);
	}
	io_uring_cq_advance(&u->ring, n);
	for (c = timers.head; c; c = next) {
		next = pop_of(c)->qnext;
		timer_insert(&sorted, c);
	}
	for (c = sorted.head; c; c = next) {
		next = pop_of(c)->qnext;
		asx__pop_append(&p->done, c);
	}
	pthread_mutex_unlock(&p->lock);
}

static int ur_wait(struct asx_proactor *p, struct ur *u, const struct timespec *deadline)
{
	static const struct timespec zero;
	struct __kernel_timespec ts;
	struct io_uring_cqe *cqe;
	int ret;

	pthread_mutex_lock(&p->lock);
	backlog_flush(p, u);
	if (!u->wake_armed && !p->closing)
		arm_wake(u);
	io_uring_submit(&u->ring);
	/* a cancel that ended a backlogged start: its callback runs now */
	if (p->done.head)
		deadline = &zero;
	pthread_mutex_unlock(&p->lock);
	if (deadline) {
		uint64_t now = asx_now_ns(), d = asx_timespec_ns(deadline);
		uint64_t rel = d > now ? d - now : 0;

		ts.tv_sec = (int64_t)(rel / ASX_NSEC_PER_SEC);
		ts.tv_nsec = (long long)(rel % ASX_NSEC_PER_SEC);
	}
	ret = io_uring_wait_cqes(&u->ring, &cqe, 1, deadline ? &ts : NULL, NULL);
	if (ret == -ETIME || ret == -EINTR)
		ret = 0;
	return ret;
}

static int ur_run_once(struct asx_proactor *p, const struct timespec *deadline)
{
	struct ur *u = p->be;
	int ret, n;

	for (;;) {
		ret = ur_wait(p, u, deadline);
		if (ret < 0)
			return ret;
		reap(p, u);
		n = asx__pop_run_done(p);
		if (n || atomic_load(&p->stop) ||
		    (deadline && asx_now_ns() >= asx_timespec_ns(deadline)))
			return n;
	}
}

static void ur_wake(struct asx_proactor *p)
{
	struct ur *u = p->be;
	uint64_t one = 1;

	if (!atomic_exchange(&p->wake_pending, true))
		while (write(u->efd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
}

static void ur_cancel_all(struct asx_proactor *p)
{
	struct ur *u = p->be;
	struct asx_completion *c, *next;
	unsigned int left;

	pthread_mutex_lock(&p->lock);
	/* a backlogged start ends in ur_cancel, off p->flight */
	for (c = p->flight; c; c = next) {
		next = pop_of(c)->next;
		if (!pop_of(c)->cancelled) {
			pop_of(c)->cancelled = true;
			ur_cancel(p, c);
		}
	}
	pthread_mutex_unlock(&p->lock);
	/* end the eventfd's read too (closing: not armed again), so that
	 * nothing writes u->evbuf after close */
	atomic_store(&p->wake_pending, false);
	ur_wake(p);
	for (;;) {
		asx__pop_run_done(p);
		pthread_mutex_lock(&p->lock);
		left = p->nflight + u->wake_armed;
		pthread_mutex_unlock(&p->lock);
		if (!left)
			break;
		if (ur_wait(p, u, NULL) < 0)
			break;
		reap(p, u);
	}
}

const struct asx__pbackend asx__proactor_uring = {
	.open = ur_open,
	.close = ur_close,
	.start = ur_start,
	.cancel = ur_cancel,
	.run_once = ur_run_once,
	.wake = ur_wake,
	.cancel_all = ur_cancel_all,
};
#endif /* ASX_HAVE_LIBURING */
