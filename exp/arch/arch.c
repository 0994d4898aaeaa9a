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

/* ---------------------------------------------------------------- LP's layer queues */

/*
 * The seam for Streams' own task-based mode: LP has its own layer threads
 * and queues only because a Stream Task's service thread
 * (asx_task_activate) cannot be an ASC user thread (arch/arch.h).  Once
 * libasx can run a Task's service procedure on an ASC (a public
 * Task-on-ASC call), LP becomes asx_task_activate() on each layer's Task
 * with that ASC: struct stage, stage_push/stage_pop, the hand-off Module
 * (handoff_rd, push_handoff) and lp_layer() go; the driver, the credits
 * and the app stay.
 */

/* One consumer (the layer's thread), one producer (the layer below's). */
struct stage {
	struct run *run;
	struct asx_task *from;		/* its layer is the next above this Task */
	struct asx_msg **ring;
	uint64_t mask;
	uint64_t head, tail;		/* atomic: consumer's, producer's */
	struct sem items;
	struct stage *next;		/* the layer above, or NULL */
};

static void stage_push(struct stage *st, struct asx_msg *m)
{
	uint64_t t = __atomic_load_n(&st->tail, __ATOMIC_RELAXED);

	/* never full: the window bounds what is in flight (ring >= window + 2) */
	__atomic_store_n(&st->ring[t & st->mask], m, __ATOMIC_RELAXED);
	__atomic_store_n(&st->tail, t + 1, __ATOMIC_RELEASE);
	sem_post(&st->items);
}

static struct asx_msg *stage_pop(struct stage *st)
{
	uint64_t h = __atomic_load_n(&st->head, __ATOMIC_RELAXED);
	struct asx_msg *m;

	(void)__atomic_load_n(&st->tail, __ATOMIC_ACQUIRE);
	m = __atomic_load_n(&st->ring[h & st->mask], __ATOMIC_RELAXED);
	__atomic_store_n(&st->head, h + 1, __ATOMIC_RELAXED);
	return m;
}

/*
 * A hand-off Module's argument: the layer (or, in FP, the task) it feeds,
 * and where the local port of the message's connection is in what it is
 * handed (LP with lanes: the lane is the connection's).
 */
struct handoff {
	struct run *run;
	unsigned int layer;
	size_t port_off;
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
	struct asx_stream *s;
	struct asx_module *nic, *dlp, *ip, *ck, *tp, *xdr, *app;
	struct asx_asc *asc;
	bool credits_on;
	struct sem credits;		/* LP, MP: the window */
	struct stage *stages;		/* LP, FP: layer l's lane j at l * nlanes + j */
	unsigned int nstages, nlayers, nlanes;
	struct handoff *handoffs;	/* one per layer */
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
	int abort;			/* atomic */
};

static bool aborted(struct run *r)
{
	return __atomic_load_n(&r->abort, __ATOMIC_RELAXED) != 0;
}

static void credit_return(struct run *r)
{
	if (r->credits_on)
		sem_post(&r->credits);
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
			if (r->cfg.proto == EXP_PROTO_IP_TCP) {
				/* one connection's deliveries are serialised
				 * (TCB lock, or its one thread per layer in
				 * LP and FP) */
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

/* The lane of connection @c (the one of local port @port). */
static unsigned int lane_of_port(const struct run *r, unsigned int port)
{
	return port >= LPORT0 ? (port - LPORT0) % r->nlanes : 0;
}

/* The lane of the connection of @m as the layer of @h receives it. */
static unsigned int lane_of(const struct run *r, const struct handoff *h, struct asx_msg *m)
{
	const unsigned char *p;

	if (r->nlanes == 1)
		return 0;
	p = exp_proto_pull(m, h->port_off + 2);
	return p ? lane_of_port(r, (unsigned int)(p[h->port_off] << 8 | p[h->port_off + 1])) : 0;
}

/* LP, FP: a hand-off between two layers (tasks): the message goes on the
 * queue of the one above, its connection's lane. */
static int handoff_rd_put(struct asx_task *t, struct asx_msg *m, const struct timespec *dl)
{
	struct handoff *h = asx_module_arg(asx_task_module(t));
	struct run *r = h->run;

	(void)dl;
	stage_push(&r->stages[h->layer * r->nlanes + lane_of(r, h, m)], m);
	return 0;
}

static const struct asx_task_ops handoff_rd = { .put = handoff_rd_put };

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
		stage_push(&r->stages[c % r->nlanes], m);
	}
	for (unsigned int j = 0; j < r->nlanes; j++)
		stage_push(&r->stages[j], NULL);	/* the end */
}

/* LP: a layer's thread. */
static void lp_layer(struct run *r, struct stage *st)
{
	for (;;) {
		struct asx_msg *m;

		if (sem_wait(r, &st->items))
			return;
		m = stage_pop(st);
		if (!m)
			break;
		put_up(r, st->from, m);
	}
	if (st->next)
		stage_push(st->next, NULL);
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
			put_up(r, asx_module_rd(r->nic), m);
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
		put_up(r, asx_module_rd(r->nic), m);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;

	switch (r->cfg.arch) {
	case EXP_ARCH_LP:
	case EXP_ARCH_FP:
		if (w->idx == 0)
			lp_driver(r);
		else
			lp_layer(r, &r->stages[w->idx - 1]);
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
		struct asx_prio_qos q = ASX_PRIO_QOS(5);

		return asx_asc_thread_spawn(r->asc, &q.qos, worker_main, w, NULL, &w->at);
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

/* Layer (task) @l's threads put what they take from their queues up from @from. */
static void set_from(struct run *r, unsigned int l, struct asx_task *from)
{
	for (unsigned int j = 0; j < r->nlanes; j++)
		r->stages[l * r->nlanes + j].from = from;
}

static int push(struct run *r, struct asx_module *mod)
{
	int e = asx_stream_push(r->s, mod, 0, NULL);

	if (e)
		asx_module_destroy(mod);
	return e;
}

/*
 * A hand-off above the Module just pushed, to layer (task) @l's queues;
 * the local port is at @port_off in what it is handed.
 */
static int push_handoff(struct run *r, unsigned int l, size_t port_off)
{
	struct handoff *ho = &r->handoffs[l];
	struct asx_module *h;
	char name[16];
	int e;

	*ho = (struct handoff){ .run = r, .layer = l, .port_off = port_off };
	snprintf(name, sizeof(name), "handoff%u", l);
	e = exp_proto_module_new(&h, NULL, name, NULL, &handoff_rd, ho, no_dtor);
	if (e)
		return e;
	e = push(r, h);
	if (e)
		return e;
	set_from(r, l, asx_module_rd(h));
	return 0;
}

static int build(struct run *r)
{
	ASX_OPTS(struct asx_stream_opts, o, .tail = ASX_STREAM_DRIVER);
	struct exp_proto_nic_cfg nc = { .mode = EXP_PROTO_NIC_SINK };
	struct exp_proto_dlp_cfg dc = { .svc_threads = 0 };
	struct exp_proto_ip_cfg ic = { .local = IP_US, .peer = IP_PEER, .proto = r->cfg.proto };
	/* LP: a hand-off between layers; FP: also between the tasks of one */
	bool lp = r->cfg.arch == EXP_ARCH_LP || r->cfg.arch == EXP_ARCH_FP;
	bool fp = r->cfg.arch == EXP_ARCH_FP;
	unsigned int si = 0;
	int e;

	memcpy(dc.mac, MAC_US, 6);
	memcpy(dc.peer, MAC_PEER, 6);
	e = exp_proto_nic_create(&r->nic, "nic", &nc);
	if (e)
		return e;
	o.driver = r->nic;
	e = asx_stream_open(&r->s, &o);
	if (e) {
		asx_module_destroy(r->nic);
		return e;
	}
	if (lp)
		set_from(r, si++, asx_module_rd(r->nic));
	e = exp_proto_dlp_create(&r->dlp, "dlp", &dc);
	if (!e)
		e = push(r, r->dlp);
	if (!e && lp)	/* the IP packet: the transport's destination port */
		e = push_handoff(r, si++, EXP_PROTO_IP_HLEN + 2);
	if (!e)
		e = exp_proto_ip_create(&r->ip, "ip", &ic);
	if (!e)
		e = push(r, r->ip);
	if (!e && lp)
		e = push_handoff(r, si++, 2);
	if (!e && fp)
		e = exp_proto_cksum_create(&r->ck, "cksum", r->cfg.proto);
	if (!e && fp)
		e = push(r, r->ck);
	if (!e && fp)
		e = push_handoff(r, si++, 2);
	if (e)
		return e;
	if (r->cfg.proto == EXP_PROTO_IP_TCP) {
		unsigned int w = r->cfg.window;
		struct exp_proto_tcp_cfg tc = {
			.lock = r->cfg.lock, .rcv_wnd = 1u << 30, .rx_cksum_done = fp,
			.reorder = w + 8 > EXP_PROTO_TCP_REORDER_MAX ? EXP_PROTO_TCP_REORDER_MAX
								       : w + 8,
		};

		e = exp_proto_tcp_create(&r->tp, "tcp", &tc);
	} else {
		struct exp_proto_udp_cfg uc = { .rx_cksum_done = fp };

		e = exp_proto_udp_create(&r->tp, "udp", &uc);
	}
	if (!e)
		e = push(r, r->tp);
	if (e)
		return e;
	if (r->cfg.proto == EXP_PROTO_IP_TCP) {
		for (unsigned int c = 0; c < r->cfg.nconn && !e; c++)
			e = exp_proto_tcp_open(r->tp, (struct exp_proto_addr){
				(uint16_t)(LPORT0 + c), (uint16_t)(RPORT0 + c) }, 1, r->gen.iss);
		if (e)
			return e;
	}
	if (r->cfg.xdr) {
		if (lp)	/* the receiver's address: the local port first */
			e = push_handoff(r, si++, 0);
		if (!e)
			e = asx_mod_xdr(&r->xdr, "xdr", &word_rec, NULL);
		if (!e)
			e = push(r, r->xdr);
		if (e)
			return e;
	}
	if (fp)	/* delivery, a task of its own (one lane: port_off unused) */
		e = push_handoff(r, si++, 0);
	if (e)
		return e;
	e = exp_proto_module_new(&r->app, NULL, "app", NULL, &app_rd, r, no_dtor);
	if (!e)
		e = push(r, r->app);
	return e;
}

static uint64_t proto_drops(struct asx_module *m)
{
	struct exp_proto_stats st;

	if (!m || exp_proto_stats(m, &st))
		return 0;
	return exp_proto_drops(&st);
}

static void run_fini(struct run *r)
{
	if (r->s)
		asx_stream_close(r->s);
	for (unsigned int i = 0; i < r->nstages; i++) {
		struct stage *st = &r->stages[i];

		/* what an aborted run left queued */
		while (st->ring && __atomic_load_n(&st->head, __ATOMIC_RELAXED) !=
				   __atomic_load_n(&st->tail, __ATOMIC_RELAXED))
			asx_msg_free_chain(stage_pop(st));
		free(st->ring);
		sem_fini(&st->items);
	}
	free(r->stages);
	free(r->handoffs);
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
	if (r->cfg.asc) {
		ASX_OPTS(struct asx_asc_opts, ao, .name = "arch", .nvps = r->cpus,
			 .semantic = ASX_ASC_NONPREEMPTIVE);

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
		r->nstages = r->nlayers * r->nlanes;
		r->stages = calloc(r->nstages, sizeof(*r->stages));
		r->handoffs = calloc(r->nlayers, sizeof(*r->handoffs));
		if (!r->stages || !r->handoffs) {
			r->nstages = 0;
			e = -ENOMEM;
			goto out;
		}
		for (unsigned int i = 0; i < r->nstages; i++) {
			struct stage *st = &r->stages[i];
			uint64_t cap = 4;

			while (cap < (uint64_t)r->cfg.window + 2)
				cap <<= 1;
			st->run = r;
			st->mask = cap - 1;
			/* the same lane of the layer above */
			st->next = i + r->nlanes < r->nstages ? &r->stages[i + r->nlanes] : NULL;
			sem_init(&st->items, r->cfg.asc, 0);
			st->ring = calloc(cap, sizeof(*st->ring));
			if (!st->ring) {
				e = -ENOMEM;
				goto out;
			}
		}
		nw = 1 + r->nstages;
		break;
	case EXP_ARCH_CP:
		nw = r->nthreads = r->cfg.pes < r->cfg.nconn ? r->cfg.pes : r->cfg.nconn;
		break;
	case EXP_ARCH_MP:
		nw = r->cfg.pes;
		break;
	}
	e = build(r);
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
		if (r->finished >= want)
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
	getrusage(RUSAGE_SELF, &s1);
	getrusage(RUSAGE_THREAD, &m1);
	asx_lockstat_enable(false);
	asx_lockstat_read(&ls);
	if (!r->mark.t0)	/* the warm-up did not end (aborted): nothing timed */
		take_mark(r);
	if (r->asc)
		res->uswitch = asx_asc_switches(r->asc) - r->mark.u0;

	res->threads = nw;
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
	res->drops = proto_drops(r->dlp) + proto_drops(r->ip) + proto_drops(r->ck) +
		     proto_drops(r->tp);
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
