// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * kvsvc.c - a key-value store served over TCP, one request per line, as a
 * service asxd loads from svc.conf (Documentation/tutorial.rst walks
 * through this file).
 *
 *	SET KEY VALUE	store VALUE (the rest of the line) under KEY: OK
 *	GET KEY		VALUE ... or NOTFOUND
 *	DEL KEY		OK or NOTFOUND
 *	KEYS		KEYS N KEY...  (every key, on one line)
 *	QUIT		BYE, and the server closes the connection
 *
 * A key is 1 to 64 bytes without blanks; a request line at most 1024
 * bytes.  Every reply is one line; a bad request gets "ERR why".
 * Parameters: -a ADDRESS (default 127.0.0.1:7070), -m MAX_KEYS (default
 * 100000).  Suspended, it answers nothing: requests wait, unanswered, and
 * new connections wait in the listen queue, until it is resumed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <asx/acceptor.h>
#include <asx/svc.h>
#include <asx/sync.h>

#define KEY_MAX 64
#define LINE_MAX_LEN 1024
#define NBUCKETS 4096

/* ---------------------------------------------------------------- the store */

struct entry {
	struct entry *next;
	char *value;
	char key[];		/* then the value: one allocation */
};

struct kv {
	struct asx_rwlock lock;		/* the table: GET and KEYS read, SET and DEL write */
	struct entry *bucket[NBUCKETS];
	size_t count, max;

	struct asx_mutex state_lock;	/* suspended and stopping */
	struct asx_cond state_changed;
	int suspended, stopping;

	struct asx_acceptor *acc;
	char where[ASX_ADDR_STRLEN];
};

static struct entry **slot(struct kv *kv, const char *key)
{
	unsigned int h = 2166136261u;	/* FNV-1a */
	struct entry **e;

	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	for (e = &kv->bucket[h % NBUCKETS]; *e; e = &(*e)->next)
		if (!strcmp((*e)->key, key))
			break;
	return e;	/* the entry's link, or the NULL at the chain's end */
}

static const char *kv_set(struct kv *kv, const char *key, const char *value)
{
	size_t klen = strlen(key) + 1, vlen = strlen(value) + 1;
	struct entry *n = malloc(sizeof(*n) + klen + vlen), **e;

	if (!n)
		return "ERR out of memory";
	memcpy(n->key, key, klen);
	n->value = n->key + klen;
	memcpy(n->value, value, vlen);
	asx_rwlock_wrlock(&kv->lock);
	e = slot(kv, key);
	if (*e) {			/* replace: the new entry takes the old one's place */
		n->next = (*e)->next;
		free(*e);
	} else if (kv->count < kv->max) {
		n->next = NULL;
		kv->count++;
	} else {
		asx_rwlock_unlock(&kv->lock);
		free(n);
		return "ERR store full";
	}
	*e = n;
	asx_rwlock_unlock(&kv->lock);
	return "OK";
}

static const char *kv_del(struct kv *kv, const char *key)
{
	struct entry **e, *old;

	asx_rwlock_wrlock(&kv->lock);
	e = slot(kv, key);
	old = *e;
	if (old) {
		*e = old->next;
		kv->count--;
	}
	asx_rwlock_unlock(&kv->lock);
	free(old);
	return old ? "OK" : "NOTFOUND";
}

/*
 * GET and KEYS build their reply under the read lock and send it after:
 * a client that does not read its replies must not hold the store.
 */
static char *kv_get(struct kv *kv, const char *key)
{
	struct entry *e;
	char *reply;

	asx_rwlock_rdlock(&kv->lock);
	e = *slot(kv, key);
	if (!e)
		reply = strdup("NOTFOUND");
	else if ((reply = malloc(strlen(e->value) + 7)))
		sprintf(reply, "VALUE %s", e->value);
	asx_rwlock_unlock(&kv->lock);
	return reply;
}

static char *kv_keys(struct kv *kv)
{
	char *reply, *p;

	asx_rwlock_rdlock(&kv->lock);
	reply = malloc(32 + kv->count * (KEY_MAX + 1));
	if (reply) {
		p = reply + sprintf(reply, "KEYS %zu", kv->count);
		for (size_t i = 0; i < NBUCKETS; i++)
			for (struct entry *e = kv->bucket[i]; e; e = e->next)
				p += sprintf(p, " %s", e->key);
	}
	asx_rwlock_unlock(&kv->lock);
	return reply;
}

/* ---------------------------------------------------------------- a connection */

struct conn {
	struct asx_svc_handler h;	/* first: the framework hands us &c->h */
	struct kv *kv;
	size_t len;			/* bytes of an unfinished line in buf */
	char buf[LINE_MAX_LEN + 1];
};

static int send_line(struct asx_svc_handler *h, const char *line)
{
	struct asx_sock_stream *s = asx_svc_handler_stream(h);
	size_t n = strlen(line);

	if (asx_sock_stream_send_n(s, line, n, NULL, NULL) != (ssize_t)n ||
	    asx_sock_stream_send_n(s, "\n", 1, NULL, NULL) != 1)
		return -1;
	return 0;
}

/* Serve one request line: 0 to go on, -1 to close the connection. */
static int serve(struct conn *c, char *line)
{
	char *save, *cmd = strtok_r(line, " ", &save), *key = strtok_r(NULL, " ", &save);
	char *rest = strtok_r(NULL, "", &save), *reply;
	int r;

	if (!cmd)
		return send_line(&c->h, "ERR empty line");
	if (key && strlen(key) > KEY_MAX)
		return send_line(&c->h, "ERR key longer than 64 bytes");
	if (!strcasecmp(cmd, "SET") && key && rest)
		return send_line(&c->h, kv_set(c->kv, key, rest));
	if (!strcasecmp(cmd, "DEL") && key && !rest)
		return send_line(&c->h, kv_del(c->kv, key));
	if (!strcasecmp(cmd, "GET") && key && !rest)
		reply = kv_get(c->kv, key);
	else if (!strcasecmp(cmd, "KEYS") && !key)
		reply = kv_keys(c->kv);
	else if (!strcasecmp(cmd, "QUIT") && !key) {
		send_line(&c->h, "BYE");
		return -1;
	} else
		return send_line(&c->h, "ERR usage: SET KEY VALUE | GET KEY | DEL KEY | KEYS | QUIT");
	r = send_line(&c->h, reply ? reply : "ERR out of memory");
	free(reply);
	return r;
}

/* Wait while the service is suspended: 0, or -1 when it is stopping. */
static int wait_active(struct kv *kv)
{
	int stopping;

	asx_mutex_lock(&kv->state_lock);
	while (kv->suspended && !kv->stopping)
		asx_cond_wait(&kv->state_changed, &kv->state_lock);
	stopping = kv->stopping;
	asx_mutex_unlock(&kv->state_lock);
	return stopping ? -1 : 0;
}

/* The stream is readable: read what is there, serve each whole line. */
static int conn_input(struct asx_svc_handler *h)
{
	struct conn *c = (struct conn *)h;
	char *line, *nl;
	ssize_t n;

	if (wait_active(c->kv))
		return -1;
	n = asx_sock_stream_recv(asx_svc_handler_stream(h), c->buf + c->len,
				 LINE_MAX_LEN - c->len, NULL);
	if (n <= 0)
		return -1;		/* end of stream or an error: close */
	c->len += (size_t)n;
	c->buf[c->len] = '\0';
	for (line = c->buf; (nl = strchr(line, '\n')); line = nl + 1) {
		*nl = '\0';
		if (nl > line && nl[-1] == '\r')
			nl[-1] = '\0';	/* telnet and nc -C send CRLF */
		if (serve(c, line))
			return -1;
	}
	c->len -= (size_t)(line - c->buf);
	memmove(c->buf, line, c->len);
	if (c->len == LINE_MAX_LEN) {
		send_line(h, "ERR line longer than 1024 bytes");
		return -1;
	}
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

/* The acceptor's factory: a new connection object for each client. */
static struct asx_svc_handler *conn_make(void *arg)
{
	struct conn *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	c->kv = arg;
	c->len = 0;
	asx_svc_handler_init(&c->h, &conn_ops, NULL);
	return &c->h;
}

/* ---------------------------------------------------------------- the service */

static int kv_init(struct asx_svc *svc, int argc, char **argv)
{
	struct kv *kv = asx_svc_priv(svc);
	const char *at = "127.0.0.1:7070", *why = NULL;
	struct asx_addr a;
	char *end;
	ASX_OPTS(struct asx_acceptor_opts, o, .strategy.kind = ASX_SVC_THREAD,
		 .make = conn_make, .arg = kv);

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-a") && i + 1 < argc) {
			at = argv[++i];
		} else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
			kv->max = strtoul(argv[++i], &end, 10);
			if (*end || !kv->max) {
				fprintf(stderr, "%s: -m wants a count above 0\n", argv[0]);
				return -EINVAL;
			}
		} else {
			fprintf(stderr, "%s: unknown parameter '%s' (-a ADDRESS, -m MAX_KEYS)\n",
				argv[0], argv[i]);
			return -EINVAL;
		}
	}
	if (asx_addr_parse(&a, at, &why)) {
		fprintf(stderr, "%s: %s: %s\n", argv[0], at, why ? why : "not an address");
		return -EINVAL;
	}
	snprintf(kv->where, sizeof(kv->where), "%s", at);
	return asx_acceptor_create(&kv->acc, &a, &o);
}

/* Called also when init failed half way: kv->acc may be NULL. */
static void kv_fini(struct asx_svc *svc)
{
	struct kv *kv = asx_svc_priv(svc);

	asx_mutex_lock(&kv->state_lock);	/* wake the connections held by a suspend */
	kv->stopping = 1;
	asx_cond_broadcast(&kv->state_changed);
	asx_mutex_unlock(&kv->state_lock);
	if (kv->acc)
		asx_acceptor_destroy(kv->acc);	/* closes every connection, waits for them */
	for (size_t i = 0; i < NBUCKETS; i++)
		for (struct entry *e = kv->bucket[i], *next; e; e = next) {
			next = e->next;
			free(e);
		}
	asx_cond_destroy(&kv->state_changed);
	asx_mutex_destroy(&kv->state_lock);
	asx_rwlock_destroy(&kv->lock);
	free(kv);
}

static int set_suspended(struct kv *kv, int on)
{
	asx_mutex_lock(&kv->state_lock);
	kv->suspended = on;
	asx_cond_broadcast(&kv->state_changed);
	asx_mutex_unlock(&kv->state_lock);
	return on ? asx_acceptor_suspend(kv->acc) : asx_acceptor_resume(kv->acc);
}

static int kv_suspend(struct asx_svc *svc)
{
	return set_suspended(asx_svc_priv(svc), 1);
}

static int kv_resume(struct asx_svc *svc)
{
	return set_suspended(asx_svc_priv(svc), 0);
}

static void kv_info(struct asx_svc *svc, char *buf, size_t len)
{
	struct kv *kv = asx_svc_priv(svc);
	struct asx_acceptor_stats st;
	size_t keys;

	asx_acceptor_stats(kv->acc, &st);
	asx_rwlock_rdlock(&kv->lock);
	keys = kv->count;
	asx_rwlock_unlock(&kv->lock);
	snprintf(buf, len, "kv on %s, %zu key(s), %u connection(s) open", kv->where, keys,
		 st.live);
}

static const ASX_OPTS(struct asx_svc_ops, kv_ops, .init = kv_init, .fini = kv_fini,
		      .suspend = kv_suspend, .resume = kv_resume, .info = kv_info);

/* What svc.conf names: "dynamic Kv Service_Object * ./kvsvc.so:kv_make() ..." */
ASX_SVC_FACTORY(kv_make)(const char *name, const struct asx_svc_ops **ops, void **priv)
{
	struct kv *kv = calloc(1, sizeof(*kv));

	(void)name;
	if (!kv)
		return -ENOMEM;
	asx_rwlock_init(&kv->lock);
	asx_mutex_init(&kv->state_lock);
	asx_cond_init(&kv->state_changed);
	kv->max = 100000;
	*ops = &kv_ops;
	*priv = kv;
	return 0;
}
