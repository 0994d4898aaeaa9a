// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * arch/arch.c - Layer, Connectional, Message and Functional Parallelism
 * over the proto Modules, on pthreads or ASC user threads (arch/arch.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <arpa/inet.h>

#include <asx/asc.h>
#include <asx/modules.h>
#include <asx/stream.h>
#include <asx/sync.h>
#include <asx/xdr.h>

#include "arch/arch.h"
#include "proto/proto.h"

#define LPORT0 5000
#define RPORT0 6000
#define TICK_NS (50 * 1000 * 1000ULL)	/* waits re-check the abort flag */

static const uint8_t MAC_US[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t MAC_PEER[6] = { 2, 0, 0, 0, 0, 2 };
#define IP_US 0x0a000001u
#define IP_PEER 0x0a000002u

/* The presentation layer's record: one XDR unsigned int. */
struct word {
	uint32_t w;
};
ASX_XDR_RECORD_STATIC(word_rec, struct word, ASX_XDR_FIELD(struct word, w, ASX_XDR_UINT));

/* ---------------------------------------------------------------- waits */

struct sem {
	bool asc;
	struct asx_sem p;
	struct asx_asc_sem a;
};

struct run;
static bool aborted(struct run *r);

static void sem_init(struct sem *s, bool asc, unsigned int v)
{
	s->asc = asc;
	if (asc)
		asx_asc_sem_init(&s->a, v);
	else
		asx_sem_init(&s->p, v);
}

static void sem_fini(struct sem *s)
{
	if (!s->asc)
		asx_sem_destroy(&s->p);
}

static void sem_post(struct sem *s)
{
	if (s->asc)
		asx_asc_sem_post(&s->a);
	else
		(void)asx_sem_post(&s->p);
}

/* 0, or -ECANCELED when the run was aborted.  The wait is counted. */
static int sem_wait(struct run *r, struct sem *s)
{
	struct timespec ts;
	uint64_t t0;
	int e;

	if ((s->asc ? asx_asc_sem_trywait(&s->a) : asx_sem_trywait(&s->p)) == 0)
		return 0;
	t0 = asx_lockstat_begin();
	for (;;) {
		asx_deadline(&ts, TICK_NS);
		e = s->asc ? asx_asc_sem_timedwait(&s->a, &ts) : asx_sem_timedwait(&s->p, &ts);
		if (e == 0)
			break;
		if (aborted(r))
			return -ECANCELED;
	}
	asx_lockstat_end(ASX_LOCKSTAT_WAIT, t0);
	return 0;
}

/* ---------------------------------------------------------------- LP's lanes */

/*
 * LP and FP are Streams' own task-based mode: each layer's (FP: task's)
 * read-side Task gets one service thread with asx_task_activate(), on
 * the thread kind the Stream was opened with (asx_stream_opts.asc: its
 * ASC, or pthreads).  The driver hands each frame to the NIC's read side,
 * whose put_next queues it on DLP's Task; each service thread takes the
 * next message off its queue and runs its layer's put, which queues it on
 * the next layer's Task.  Flow control is the window of credits (the
 * queues' water marks hold a window, so put_next never waits on them).
 *
 * A lane is one Stream (001 section 4.3.2: a stack of layer threads per
 * cluster of connections): connection c goes up lane c % nlanes, whose
 * TCP-lite holds only its connections.  CP and MP use lane 0.
 */
struct lane {
	struct asx_stream *s;
	struct asx_module *nic, *dlp, *ip, *ck, *tp, *xdr, *app;
};

/* ---------------------------------------------------------------- the run */

/* What was counted when timing started (after the warm-up). */
struct mark {
	uint64_t t0, u0;
	struct rusage s0;
	struct asx_lockstat ls0;
};

struct worker {
	struct run *run;
	unsigned int idx;
	pthread_t th;
	struct asx_asc_thread *at;
	bool started;
};

struct run {
	struct exp_arch_cfg cfg;
	unsigned int cpus;
	cpu_set_t cpuset;
	uint64_t per;			/* messages per connection */
	uint64_t total;
	struct exp_proto_gen gen;
	struct lane *lanes;		/* LP: nlanes, else one */
	unsigned int nlanes, nlayers;	/* LP, FP: service threads per lane */
	struct asx_asc *asc;
	struct asx_prio_qos qos;	/* the ASC threads' (the Streams' too) */
	bool credits_on;
	struct sem credits;		/* LP, MP: the window */
	uint64_t lane_drops;		/* counted by the Modules of closed lanes */
	uint64_t settled;		/* atomic: LP, FP: messages delivered, refused or bad */
	uint64_t warm;			/* warm-up messages (all connections) */
	struct mark mark;		/* taken by the app at the warm-up's end */
	uint64_t next;			/* atomic: MP's next frame */
	unsigned int nthreads;		/* CP threads */
	/* the app's books */
	uint64_t delivered, bytes, bad, dups, ooo, failed;	/* atomic */
	uint64_t *next_k;		/* TCP: per connection, under its TCB lock */
	uint8_t *seen;			/* verify: per message, atomic */
	/* completion */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int finished;
	bool done;			/* LP, FP: the last message settled */
	int abort;			/* atomic */
};

static bool aborted(struct run *r)
{
	return __atomic_load_n(&r->abort, __ATOMIC_RELAXED) != 0;
}

/*
 * A message left the stack (delivered, bad, or refused): its credit back.
 * LP and FP have no thread of their own at the top: the last message
 * settled ends the run as a worker's end would.
 */
static void credit_return(struct run *r)
{
	if (!r->credits_on)
		return;
	sem_post(&r->credits);
	if (r->nlayers && __atomic_add_fetch(&r->settled, 1, __ATOMIC_RELAXED) == r->total) {
		pthread_mutex_lock(&r->lock);
		r->done = true;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
}

/* The start of the timed part: now. */
static void take_mark(struct run *r)
{
	getrusage(RUSAGE_SELF, &r->mark.s0);
	asx_lockstat_read(&r->mark.ls0);
	if (r->asc)
		r->mark.u0 = asx_asc_switches(r->asc);
	r->mark.t0 = asx_now_ns();
}

/* Frame @k of connection @c up the stream from @from (the NIC's read Task or a hand-off). */
static void put_up(struct run *r, struct asx_task *from, struct asx_msg *m)
{
	if (asx_task_put_next(from, m, NULL)) {
		asx_msg_free_chain(m);
		__atomic_fetch_add(&r->failed, 1, __ATOMIC_RELAXED);
		credit_return(r);
	}
}

static struct asx_msg *frame(struct run *r, unsigned int c, uint64_t k)
{
	struct asx_msg *m = NULL;

	if (exp_proto_gen_frame_ck(&r->gen, c, k, &m)) {
		__atomic_fetch_add(&r->failed, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	return m;
}

/* ---------------------------------------------------------------- the app */

static bool app_check(struct run *r, struct asx_msg *m, uint32_t *c, uint32_t *k)
{
	size_t n = asx_msg_length(m), plen;
	unsigned char *buf;
	struct exp_proto_addr a;
	bool ok;

	if (n < EXP_PROTO_ADDR_LEN + 8 || asx_msg_pullup(m, n))
		return false;
	if (r->cfg.xdr) {	/* native words: back to the bytes that were sent */
		const uint32_t *w = (const uint32_t *)(void *)m->rd;

		if (n % 4)
			return false;
		buf = malloc(n);
		if (!buf)
			return false;
		for (size_t i = 0; i < n / 4; i++) {
			uint32_t be = htonl(w[i]);

			memcpy(buf + 4 * i, &be, 4);
		}
	} else {
		buf = m->rd;
	}
	a = exp_proto_get_addr(buf);
	plen = n - EXP_PROTO_ADDR_LEN;
	ok = plen == r->cfg.payload &&
	     exp_proto_gen_check(buf + EXP_PROTO_ADDR_LEN, plen, c, k) &&
	     *c < r->cfg.nconn && *k < r->per && a.lport == LPORT0 + *c && a.rport == RPORT0 + *c;
	if (buf != m->rd)
		free(buf);
	return ok;
}

static int app_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct run *r = asx_module_arg(asx_task_module(t));
	size_t n = asx_msg_length(m);

	(void)dl;
	if (m->type != ASX_MSG_DATA) {		/* an XDR decode error */
		__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		asx_msg_free_chain(m);
		credit_return(r);
		return 0;
	}
	if (r->cfg.verify) {
		uint32_t c, k;

		if (!app_check(r, m, &c, &k)) {
			__atomic_fetch_add(&r->bad, 1, __ATOMIC_RELAXED);
		} else {
			if (__atomic_exchange_n(&r->seen[k * r->cfg.nconn + c], 1,
						__ATOMIC_RELAXED))
				__atomic_fetch_add(&r->dups, 1, __ATOMIC_RELAXED);
			if (r->cfg.proto == EXP_PROTO_IP_TCP || r->cfg.arch != EXP_ARCH_MP) {
				/* one connection's deliveries are serialised
				 * and in order (TCB lock, or its one thread
				 * per layer in LP and FP, per connection in
				 * CP); UDP-lite under MP may reorder */
				if (r->next_k[c] != k)
					__atomic_fetch_add(&r->ooo, 1, __ATOMIC_RELAXED);
				r->next_k[c] = (uint64_t)k + 1;
			}
		}
	}
	__atomic_fetch_add(&r->bytes, n - EXP_PROTO_ADDR_LEN, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&r->delivered, 1, __ATOMIC_RELAXED) == r->warm && r->warm)
		take_mark(r);	/* the warm-up is over */
	asx_msg_free_chain(m);
	credit_return(r);
	return 0;
}

static const struct asx_task_ops app_rd = { .put = app_rd_put };

static void no_dtor(void *arg)
{
	(void)arg;
}

/* ---------------------------------------------------------------- threads */

static void worker_done(struct run *r)
{
	pthread_mutex_lock(&r->lock);
	r->finished++;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* LP, FP: the driver makes every frame, in order, as the window allows. */
static void lp_driver(struct run *r)
{
	for (uint64_t i = 0; i < r->total; i++) {
		unsigned int c = (unsigned int)(i % r->cfg.nconn);
		struct asx_msg *m;

		if (sem_wait(r, &r->credits))
			break;
		m = frame(r, c, i / r->cfg.nconn);
		if (!m) {
			credit_return(r);
			continue;
		}
		put_up(r, asx_module_rd(r->lanes[c % r->nlanes].nic), m);
	}
}

static void cp_escort(struct run *r, unsigned int t)
{
	unsigned int nt = r->nthreads;

	for (uint64_t k = 0; k < r->per && !aborted(r); k++) {
		for (unsigned int c = t; c < r->cfg.nconn; c += nt) {
			struct asx_msg *m = frame(r, c, k);
			uint32_t id;

			if (!m)
				continue;
			/* eager demultiplexing: the packet filter picks the
			 * connection (and so the thread) at the driver */
			if (exp_proto_demux(m, &id) ||
			    id != ((uint32_t)(LPORT0 + c) << 16 | (uint32_t)(RPORT0 + c))) {
				asx_msg_free_chain(m);
				__atomic_fetch_add(&r->failed, 1, __ATOMIC_RELAXED);
				continue;
			}
			put_up(r, asx_module_rd(r->lanes[0].nic), m);
		}
	}
}

static void mp_escort(struct run *r)
{
	for (;;) {
		struct asx_msg *m;
		uint64_t i;

		if (sem_wait(r, &r->credits))
			break;
		i = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
		if (i >= r->total) {
			credit_return(r);
			break;
		}
		m = frame(r, (unsigned int)(i % r->cfg.nconn), i / r->cfg.nconn);
		if (!m) {
			credit_return(r);
			continue;
		}
		put_up(r, asx_module_rd(r->lanes[0].nic), m);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;

	switch (r->cfg.arch) {
	case EXP_ARCH_LP:
	case EXP_ARCH_FP:
		lp_driver(r);
		break;
	case EXP_ARCH_CP:
		cp_escort(r, w->idx);
		break;
	case EXP_ARCH_MP:
		mp_escort(r);
		break;
	}
	worker_done(r);
	return NULL;
}

static int spawn(struct run *r, struct worker *w)
{
	if (r->cfg.asc) {
		return asx_asc_thread_spawn(r->asc, &r->qos.qos, worker_main, w, NULL, &w->at);
	} else {
		pthread_attr_t at;
		int e;

		pthread_attr_init(&at);
		pthread_attr_setaffinity_np(&at, sizeof(r->cpuset), &r->cpuset);
		e = pthread_create(&w->th, &at, worker_main, w);
		pthread_attr_destroy(&at);
		return -e;
	}
}

static void join(struct run *r, struct worker *w)
{
	if (r->cfg.asc)
		asx_asc_thread_join(w->at, NULL);
	else
		pthread_join(w->th, NULL);
}

/* ---------------------------------------------------------------- set-up */

const char *exp_arch_name(enum exp_arch a)
{
	static const char *const names[] = {
		[EXP_ARCH_LP] = "lp", [EXP_ARCH_CP] = "cp", [EXP_ARCH_MP] = "mp",
		[EXP_ARCH_FP] = "fp",
	};

	return (unsigned int)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}

static unsigned int allowed(cpu_set_t *set)
{
	if (sched_getaffinity(0, sizeof(*set), set)) {
		CPU_ZERO(set);
		CPU_SET(0, set);
	}
	return (unsigned int)CPU_COUNT(set);
}

unsigned int exp_arch_ncpu(void)
{
	cpu_set_t set;

	return allowed(&set);
}

/* The first @n CPUs of the process's mask into r->cpuset. */
static void pick_cpus(struct run *r, unsigned int n)
{
	cpu_set_t all;
	unsigned int got = 0;

	allowed(&all);
	CPU_ZERO(&r->cpuset);
	for (int c = 0; c < CPU_SETSIZE && got < n; c++) {
		if (CPU_ISSET(c, &all)) {
			CPU_SET(c, &r->cpuset);
			got++;
		}
	}
}

static int push(struct lane *l, struct asx_module *mod)
{
	int e = asx_stream_push(l->s, mod, 0, NULL);

	if (e)
		asx_module_destroy(mod);
	return e;
}

/*
 * LP, FP: @mod (just pushed) is a layer (task) of its own: a service
 * thread on its read side, of the Stream's thread kind, and water marks
 * that hold the window, so that only the credits hold the driver back.
 */
static int layer(struct run *r, struct asx_module *mod)
{
	struct asx_task *t = asx_module_rd(mod);
	size_t hi = ((size_t)r->cfg.window + 2) * (r->cfg.payload + 256);
	int e = asx_task_set_water(t, hi, hi / 2);

	return e ? e : asx_task_activate(t, 1);
}

/* Push @mod on lane @l and, when @task, make it a layer. */
static int push_layer(struct run *r, struct lane *l, struct asx_module *mod, bool task)
{
	int e = push(l, mod);

	return e || !task ? e : layer(r, mod);
}

/*
 * Lane @li's Stream: NIC <- DLP <- IP [<- cksum] <- TCP/UDP [<- XDR] <- app,
 * with LP's layers (DLP, IP, transport, XDR: the app runs in the top
 * layer's thread) or FP's tasks (each of those, the checksum and the app)
 * activated; CP and MP activate none.
 */
static int build(struct run *r, unsigned int li)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	struct exp_proto_nic_cfg nc = { .mode = EXP_PROTO_NIC_SINK };
	struct exp_proto_dlp_cfg dc = { .svc_threads = 0 };
	struct exp_proto_ip_cfg ic = { .local = IP_US, .peer = IP_PEER, .proto = r->cfg.proto };
	struct lane *l = &r->lanes[li];
	bool lp = r->nlayers > 0;
	bool fp = r->cfg.arch == EXP_ARCH_FP;
	int e;

	memcpy(dc.mac, MAC_US, 6);
	memcpy(dc.peer, MAC_PEER, 6);
	e = exp_proto_nic_create(&l->nic, "nic", &nc);
	if (e)
		return e;
	o.driver = l->nic;
	if (r->asc) {	/* the threading model: one parameter of the Stream */
		o.asc = r->asc;
		o.asc_qos = &r->qos.qos;
	}
	e = asx_stream_open(&l->s, &o);
	if (e) {
		asx_module_destroy(l->nic);
		return e;
	}
	e = exp_proto_dlp_create(&l->dlp, "dlp", &dc);
	if (!e)
		e = push_layer(r, l, l->dlp, lp);
	if (!e)
		e = exp_proto_ip_create(&l->ip, "ip", &ic);
	if (!e)
		e = push_layer(r, l, l->ip, lp);
	if (!e && fp)
		e = exp_proto_cksum_create(&l->ck, "cksum", r->cfg.proto);
	if (!e && fp)
		e = push_layer(r, l, l->ck, true);
	if (e)
		return e;
	if (r->cfg.proto == EXP_PROTO_IP_TCP) {
		unsigned int w = r->cfg.window;
		struct exp_proto_tcp_cfg tc = {
			.lock = r->cfg.lock, .rcv_wnd = 1u << 30, .rx_cksum_done = fp,
			.reorder = w + 8 > EXP_PROTO_TCP_REORDER_MAX ? EXP_PROTO_TCP_REORDER_MAX
								       : w + 8,
		};

		e = exp_proto_tcp_create(&l->tp, "tcp", &tc);
	} else {
		struct exp_proto_udp_cfg uc = { .rx_cksum_done = fp };

		e = exp_proto_udp_create(&l->tp, "udp", &uc);
	}
	if (!e)
		e = push_layer(r, l, l->tp, lp);
	if (e)
		return e;
	if (r->cfg.proto == EXP_PROTO_IP_TCP) {
		/* the lane's connections */
		for (unsigned int c = li; c < r->cfg.nconn && !e; c += r->nlanes)
			e = exp_proto_tcp_open(l->tp, (struct exp_proto_addr){
				(uint16_t)(LPORT0 + c), (uint16_t)(RPORT0 + c) }, 1, r->gen.iss);
		if (e)
			return e;
	}
	if (r->cfg.xdr) {
		e = asx_mod_xdr(&l->xdr, "xdr", &word_rec, NULL);
		if (!e)
			e = push_layer(r, l, l->xdr, lp);
		if (e)
			return e;
	}
	/* FP: delivery, a task of its own */
	e = exp_proto_module_new(&l->app, NULL, "app", NULL, &app_rd, r, no_dtor);
	if (!e)
		e = push_layer(r, l, l->app, fp);
	return e;
}

static uint64_t proto_drops(struct asx_module *m)
{
	struct exp_proto_stats st;

	if (!m || exp_proto_stats(m, &st))
		return 0;
	return exp_proto_drops(&st);
}

static uint64_t drops_of(struct lane *l)
{
	return proto_drops(l->dlp) + proto_drops(l->ip) + proto_drops(l->ck) + proto_drops(l->tp);
}

/* Close lane @l's Stream (once): its service threads return. */
static void stop_lane(struct run *r, struct lane *l)
{
	if (!l->s)
		return;
	/* the Modules' counters stay for drops(): closed, they are freed */
	r->lane_drops += drops_of(l);
	asx_stream_close(l->s);
	*l = (struct lane){ 0 };
}

static uint64_t drops(struct run *r)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < r->nlanes; i++)
		n += drops_of(&r->lanes[i]);
	return n + r->lane_drops;
}

/*
 * LP, FP: every message the driver made has left the stack (the app's
 * last one ends the wait at once; one dropped on the way within a tick),
 * or the run was aborted.
 */
static bool drained(struct run *r)
{
	return r->done || aborted(r) ||
	       __atomic_load_n(&r->settled, __ATOMIC_RELAXED) + drops(r) >= r->total;
}

/*
 * Every lane's Stream.  Pthread service threads are started by this
 * thread and take its CPUs: the run's, for the while.
 */
static int build_all(struct run *r)
{
	cpu_set_t mine;
	bool pin = !r->cfg.asc && r->nlayers &&
		   !pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) &&
		   !pthread_setaffinity_np(pthread_self(), sizeof(r->cpuset), &r->cpuset);
	int e = 0;

	for (unsigned int i = 0; i < r->nlanes && !e; i++)
		e = build(r, i);
	if (pin)
		(void)pthread_setaffinity_np(pthread_self(), sizeof(mine), &mine);
	return e;
}

static void run_fini(struct run *r)
{
	/* the service threads stop, what an aborted run left queued is freed */
	for (unsigned int i = 0; r->lanes && i < r->nlanes; i++)
		stop_lane(r, &r->lanes[i]);
	free(r->lanes);
	if (r->credits_on)
		sem_fini(&r->credits);
	if (r->asc)
		asx_asc_destroy(r->asc);
	exp_proto_gen_fini(&r->gen);
	free(r->next_k);
	free(r->seen);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
}

/*
 * The process's switches @all less the calling thread's @mine: the
 * calling thread's are counted over the whole run, the process's from the
 * mark (after the warm-up), so the difference may go below 0: clamped.
 */
static uint64_t diff_csw(uint64_t all, uint64_t mine)
{
	return all > mine ? all - mine : 0;
}

int exp_arch_run(const struct exp_arch_cfg *cfg,
		 struct exp_arch_result *res)
{
	struct run *r;
	struct worker *w = NULL;
	struct rusage s1, m0, m1;
	struct asx_lockstat ls;
	uint64_t t1, deadline, warm_per;
	unsigned int nw = 0, ncpu;
	int e = 0;

	if (!cfg || !res || cfg->arch > EXP_ARCH_FP ||
	    (cfg->proto != EXP_PROTO_IP_TCP && cfg->proto != EXP_PROTO_IP_UDP))
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->cfg = *cfg;
	if (!r->cfg.pes)
		r->cfg.pes = 1;
	if (!r->cfg.nconn)
		r->cfg.nconn = 1;
	if (!r->cfg.payload)
		r->cfg.payload = 4096;
	if (!r->cfg.window)
		r->cfg.window = 128;
	if (!r->cfg.timeout_ns)
		r->cfg.timeout_ns = 120ull * 1000000000ull;
	if (r->cfg.payload < 8 || r->cfg.payload > 60000 || r->cfg.nconn > 4096 ||
	    (r->cfg.xdr && r->cfg.payload % 4) || r->cfg.pes > 1024 ||
	    r->cfg.layer_threads > 64) {
		free(r);
		return -EINVAL;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->per = r->cfg.count / r->cfg.nconn;
	if (!r->per)
		r->per = 1;
	warm_per = r->cfg.warmup / r->cfg.nconn;
	r->warm = warm_per * r->cfg.nconn;
	r->per += warm_per;		/* a connection's frames: warm-up, then timed */
	r->total = r->per * r->cfg.nconn;
	ncpu = exp_arch_ncpu();
	r->cpus = r->cfg.pes < ncpu ? r->cfg.pes : ncpu;
	pick_cpus(r, r->cpus);

	r->gen = (struct exp_proto_gen){
		.proto = r->cfg.proto, .ip = IP_US, .peer_ip = IP_PEER, .lport0 = LPORT0,
		.rport0 = RPORT0, .nconn = r->cfg.nconn, .payload = r->cfg.payload,
		.iss = 0xffff0000u,	/* sequence numbers wrap around */
	};
	memcpy(r->gen.mac, MAC_US, 6);
	memcpy(r->gen.peer_mac, MAC_PEER, 6);
	e = exp_proto_gen_init(&r->gen);
	if (e)
		goto out;
	r->next_k = calloc(r->cfg.nconn, sizeof(*r->next_k));
	if (r->cfg.verify)
		r->seen = calloc(r->total, 1);
	if (!r->next_k || (r->cfg.verify && !r->seen)) {
		e = -ENOMEM;
		goto out;
	}
	r->qos = (struct asx_prio_qos)ASX_PRIO_QOS(5);
	if (r->cfg.asc) {
		ASX_OPTS(struct asx_asc_opts, ao, .name = "arch", .nvps = r->cpus,
			 .semantic = ASX_ASC_NONPREEMPTIVE,
			 .activations = r->cfg.sa ? ASX_ASC_ACT_ON : ASX_ASC_ACT_OFF);

		e = asx_asc_create(&r->asc, &asx_asc_prio, &ao);
		if (e)
			goto out;
	}
	r->credits_on = r->cfg.arch != EXP_ARCH_CP;
	if (r->credits_on)
		sem_init(&r->credits, r->cfg.asc, r->cfg.window);
	switch (r->cfg.arch) {
	case EXP_ARCH_LP:
	case EXP_ARCH_FP:
		/* LP: DLP, IP, transport (+ XDR) with the app; FP: DLP, IP,
		 * transport checksum, transport (+ XDR), delivery */
		r->nlayers = (r->cfg.arch == EXP_ARCH_LP ? 3 : 5) + (r->cfg.xdr ? 1 : 0);
		r->nlanes = 1;
		if (r->cfg.arch == EXP_ARCH_LP && r->cfg.layer_threads > 1)
			r->nlanes = r->cfg.layer_threads < r->cfg.nconn ? r->cfg.layer_threads
									: r->cfg.nconn;
		nw = 1;		/* the driver */
		break;
	case EXP_ARCH_CP:
		nw = r->nthreads = r->cfg.pes < r->cfg.nconn ? r->cfg.pes : r->cfg.nconn;
		break;
	case EXP_ARCH_MP:
		nw = r->cfg.pes;
		break;
	}
	if (!r->nlanes)
		r->nlanes = 1;
	r->lanes = calloc(r->nlanes, sizeof(*r->lanes));
	if (!r->lanes) {
		e = -ENOMEM;
		goto out;
	}
	e = build_all(r);
	if (e)
		goto out;
	w = calloc(nw, sizeof(*w));
	if (!w) {
		e = -ENOMEM;
		goto out;
	}

	asx_lockstat_reset();
	asx_lockstat_enable(true);
	getrusage(RUSAGE_THREAD, &m0);
	if (!r->warm)
		take_mark(r);
	for (unsigned int i = 0; i < nw; i++) {
		w[i].run = r;
		w[i].idx = i;
		e = spawn(r, &w[i]);
		if (e) {
			__atomic_store_n(&r->abort, 1, __ATOMIC_RELAXED);
			break;
		}
		w[i].started = true;
	}
	deadline = asx_now_ns() + r->cfg.timeout_ns;
	pthread_mutex_lock(&r->lock);
	for (;;) {
		unsigned int want = 0;
		struct timespec ts;

		for (unsigned int i = 0; i < nw; i++)
			want += w[i].started;
		if (r->finished >= want && (!r->nlayers || drained(r)))
			break;
		if (asx_now_ns() >= deadline) {
			__atomic_store_n(&r->abort, 1, __ATOMIC_RELAXED);
			if (!e)
				e = -ETIMEDOUT;
			/* the threads see it within a tick */
			deadline = UINT64_MAX;
		}
		clock_gettime(CLOCK_REALTIME, &ts);	/* the condition's clock */
		ts.tv_nsec += (long)TICK_NS;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_nsec -= 1000000000L;
			ts.tv_sec++;
		}
		pthread_cond_timedwait(&r->cond, &r->lock, &ts);
	}
	pthread_mutex_unlock(&r->lock);
	for (unsigned int i = 0; i < nw; i++)
		if (w[i].started)
			join(r, &w[i]);
	t1 = asx_now_ns();
	/* LP, FP: the top layer's thread may still be inside the hold whose
	 * delivery was the last; its Stream's service threads stop first
	 * (a few switches more, against a run's thousands) */
	for (unsigned int i = 0; r->nlayers && i < r->nlanes; i++)
		stop_lane(r, &r->lanes[i]);
	getrusage(RUSAGE_SELF, &s1);
	getrusage(RUSAGE_THREAD, &m1);
	asx_lockstat_enable(false);
	asx_lockstat_read(&ls);
	if (!r->mark.t0)	/* the warm-up did not end (aborted): nothing timed */
		take_mark(r);
	if (r->asc)
		res->uswitch = asx_asc_switches(r->asc) - r->mark.u0;

	res->threads = nw + r->nlayers * r->nlanes;
	res->cpus = r->cpus;
	res->layer_threads = r->cfg.arch == EXP_ARCH_LP ? r->nlanes : 0;
	res->msgs = __atomic_load_n(&r->delivered, __ATOMIC_RELAXED);
	res->bytes = __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
	/* the warm-up's messages are all the payload's size (checked with verify) */
	res->warmup = res->msgs < r->warm ? res->msgs : r->warm;
	res->msgs -= res->warmup;
	res->bytes = res->bytes > res->warmup * r->cfg.payload ?
		     res->bytes - res->warmup * r->cfg.payload : 0;
	res->ns = t1 > r->mark.t0 ? t1 - r->mark.t0 : 0;
	res->mbps = res->ns ? (double)res->bytes * 8.0 * 1000.0 / (double)res->ns : 0;
	res->vcsw = diff_csw((uint64_t)(s1.ru_nvcsw - r->mark.s0.ru_nvcsw),
			     (uint64_t)(m1.ru_nvcsw - m0.ru_nvcsw));
	res->icsw = diff_csw((uint64_t)(s1.ru_nivcsw - r->mark.s0.ru_nivcsw),
			     (uint64_t)(m1.ru_nivcsw - m0.ru_nivcsw));
	res->lock_contended = ls.contended - r->mark.ls0.contended;
	res->lock_ns = ls.acquire_ns - r->mark.ls0.acquire_ns;
	res->waits = ls.waits - r->mark.ls0.waits;
	res->wait_ns = ls.wait_ns - r->mark.ls0.wait_ns;
	res->holds = ls.holds - r->mark.ls0.holds;
	res->hold_ns = ls.hold_ns - r->mark.ls0.hold_ns;
	res->failed = r->failed;
	res->drops = drops(r);
	res->bad = r->bad;
	res->dups = r->dups;
	res->out_of_order = r->ooo;
	if (r->cfg.verify) {
		for (uint64_t i = 0; i < r->total; i++)
			res->missing += !r->seen[i];
	} else {
		uint64_t all = res->msgs + res->warmup;

		res->missing = r->total > all ? r->total - all : 0;
	}
out:
	run_fini(r);
	free(w);
	free(r);
	return e;
}
