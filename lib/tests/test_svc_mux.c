// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_svc_mux.c - Multiplexors from svc.conf: "mux NAME" and "link NAME
 * STREAM [band N]" (lib/src/svc/link.c).  Routing by band through linked
 * Streams; links changed by a reload, a Stream's link dropped and its head
 * queueing again; a link that fails rolling the whole transaction back
 * (the links made before it undone); a linked Stream that cannot go while
 * the link stays; the mux removed; parse errors with line and column.  An
 * alarm() watchdog fails a test that would hang.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/msg.h>
#include <asx/mux.h>
#include <asx/stream.h>
#include <asx/svc.h>

#include "svc/svc_impl.h"

static void watchdog(int sig)
{
	static const char m[] = "test_svc_mux: watchdog: a test hung\n";

	(void)sig;
	(void)!write(2, m, sizeof(m) - 1);
	_exit(1);
}

static const char base[] = "stream A { static pass }\nstream B { static counter }\n";

static int apply(struct asx_svc_repo *repo, const char *tail, char *err, size_t n)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s%s", base, tail);
	err[0] = '\0';
	return asx_svc_apply_text(repo, "t.conf", text, ASX_SVC_RELOAD, err, n);
}

static void must_apply(struct asx_svc_repo *repo, const char *tail)
{
	char err[512];

	if (apply(repo, tail, err, sizeof(err))) {
		fprintf(stderr, "apply: %s\n", err);
		fail();
	}
}

static struct asx_stream *stream_of(struct asx_svc_repo *repo, const char *name)
{
	struct asx_stream *s = NULL;

	assert_int_equal(asx_svc_stream(repo, name, &s), 0);
	return s;
}

static void put_band(struct asx_stream *s, uint8_t band, const char *text)
{
	struct asx_msg *m = asx_msg_alloc(strlen(text), ASX_MSG_DATA);

	assert_non_null(m);
	memcpy(m->wr, text, strlen(text));
	m->wr += strlen(text);
	m->band = band;
	assert_int_equal(asx_stream_put(s, m, 0, NULL), 0);
}

/* The next message at @s's head within 5 s: its text (static). */
static const char *get_text(struct asx_stream *s)
{
	static char buf[64];
	struct timespec dl;
	struct asx_msg *m;
	int r = asx_stream_get(s, &m, 0, asx_deadline(&dl, 5000000000ull));

	if (r)
		return "(none)";
	snprintf(buf, sizeof(buf), "%.*s", (int)(m->wr - m->rd), (char *)m->rd);
	asx_msg_free_chain(m);
	return buf;
}

static bool nothing_at(struct asx_stream *s)
{
	struct asx_msg *m;
	int r = asx_stream_get(s, &m, ASX_STREAM_NOWAIT, NULL);

	if (!r)
		asx_msg_free_chain(m);
	return r != 0;
}

static void desc_of(struct asx_svc_repo *repo, const char *name, char *out)
{
	struct asx_svc_info in;

	assert_int_equal(asx_svc_find(repo, name, &in), 0);
	strcpy(out, in.desc);
}

static struct asx_mux *mux_of(struct asx_svc_repo *repo, const char *name)
{
	for (struct asx_svc *s = repo->svcs; s; s = s->next)
		if (!strcmp(s->name, name))
			return s->mux;
	return NULL;
}

static void test_route_by_band(void **state)
{
	struct asx_svc_repo *repo;
	struct asx_mux_stats ms;
	char d[256];

	assert_int_equal(asx_svc_repo_create(&repo), 0);
	must_apply(repo, "mux M\nlink M A\nlink M B band 1\n");
	desc_of(repo, "M", d);
	assert_non_null(strstr(d, "links: A(any band) B(band 1)"));
	put_band(stream_of(repo, "M"), 0, "zero");
	assert_string_equal(get_text(stream_of(repo, "M")), "zero");	/* down A, back up */
	put_band(stream_of(repo, "M"), 1, "one");	/* down B; back in band 1: no upper */
	put_band(stream_of(repo, "M"), 7, "seven");	/* down A (default); back in band 7 */
	asx_mux_stats(mux_of(repo, "M"), &ms);
	assert_int_equal(ms.down, 3);
	assert_int_equal(ms.up, 1);
	assert_int_equal(ms.unroutable, 2);
	assert_true(nothing_at(stream_of(repo, "A")));	/* linked: its head goes to the mux */
	asx_svc_repo_destroy(repo);	/* the mux first, then its Streams: nothing linked goes */
}

static void test_relink_and_remove(void **state)
{
	struct asx_svc_repo *repo;
	struct asx_svc_info in;
	char d[256], err[512];

	assert_int_equal(asx_svc_repo_create(&repo), 0);
	must_apply(repo, "mux M\nlink M A\nlink M B band 1\n");
	struct asx_stream *a = stream_of(repo, "A"), *b = stream_of(repo, "B");

	/* a linked Stream cannot go, by name or by a file that keeps the link */
	assert_int_equal(asx_svc_remove(repo, "B"), -EBUSY);
	assert_int_equal(asx_svc_apply_text(repo, "t.conf",
					    "stream A { static pass }\nmux M\nlink M A\nlink M B band 1\n",
					    ASX_SVC_RELOAD, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "t.conf:4:1: mux 'M': cannot link 'B': no stream 'B' (a Stream a mux links cannot be removed while the link stays)");
	/* B's link dropped: B's head queues again, the same Streams run */
	must_apply(repo, "mux M\nlink M A\n");
	desc_of(repo, "M", d);
	assert_non_null(strstr(d, "links: A(any band)"));
	assert_ptr_equal(stream_of(repo, "A"), a);
	assert_ptr_equal(stream_of(repo, "B"), b);
	put_band(b, 0, "b-alone");
	assert_string_equal(get_text(b), "b-alone");
	/* B linked as the default, A for band 2 */
	must_apply(repo, "mux M\nlink M B\nlink M A band 2\n");
	put_band(stream_of(repo, "M"), 0, "via-b");
	assert_string_equal(get_text(stream_of(repo, "M")), "via-b");
	/* the mux removed: both heads queue again */
	must_apply(repo, "");
	assert_int_equal(asx_svc_find(repo, "M", &in), -ENOENT);
	put_band(a, 0, "a-alone");
	assert_string_equal(get_text(a), "a-alone");
	put_band(b, 0, "b-again");
	assert_string_equal(get_text(b), "b-again");
	asx_svc_repo_destroy(repo);
}

/* A link that fails undoes the links made before it, and everything else. */
static void test_failing_link_rolls_back(void **state)
{
	struct asx_svc_repo *repo;
	struct asx_svc_info in;
	char d[256], err[512];

	assert_int_equal(asx_svc_repo_create(&repo), 0);
	must_apply(repo, "mux M\nlink M A\n");
	/* M gets B too; then M2 wants A, which M holds: -EBUSY */
	assert_int_equal(apply(repo,
			       "stream C { static pass }\nmux M\nlink M A\nlink M B band 1\nmux M2\nlink M2 A\n",
			       err, sizeof(err)), -EBUSY);
	assert_string_equal(err, "t.conf:8:1: mux 'M2': cannot link 'A' (any band): Device or resource busy (it is linked under another mux)");
	desc_of(repo, "M", d);
	assert_non_null(strstr(d, "links: A(any band)"));
	assert_null(strstr(d, "B("));
	assert_int_equal(asx_svc_find(repo, "M2", &in), -ENOENT);
	assert_int_equal(asx_svc_find(repo, "C", &in), -ENOENT);
	/* B was linked and unlinked again: its head is its own */
	put_band(stream_of(repo, "B"), 0, "b-free");
	assert_string_equal(get_text(stream_of(repo, "B")), "b-free");
	/* and M still routes through A */
	put_band(stream_of(repo, "M"), 0, "still");
	assert_string_equal(get_text(stream_of(repo, "M")), "still");
	asx_svc_repo_destroy(repo);
}

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CYCLES 40
#else
#define CYCLES 200
#endif

struct flow {
	struct asx_stream *up;
	volatile int stop;		/* (read with __atomic) */
	uint64_t sent, got, dup, back;	/* back: a number lower than one already seen */
	uint8_t *seen;
	size_t cap;
};

static void *writer(void *arg)
{
	struct flow *f = arg;

	while (!__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE) && f->sent < f->cap) {
		struct asx_msg *m = asx_msg_alloc(8, ASX_MSG_DATA);
		uint64_t v = f->sent;

		memcpy(m->wr, &v, 8);
		m->wr += 8;
		if (asx_stream_put(f->up, m, 0, NULL)) {
			asx_msg_free(m);
			break;
		}
		__atomic_store_n(&f->sent, v + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *reader(void *arg)
{
	struct flow *f = arg;
	uint64_t last = 0;
	bool any = false;

	for (;;) {
		struct timespec dl;
		struct asx_msg *m;
		uint64_t v;

		if (asx_stream_get(f->up, &m, 0, asx_deadline(&dl, 200000000ull))) {
			if (__atomic_load_n(&f->stop, __ATOMIC_ACQUIRE) == 2)
				break;
			continue;
		}
		memcpy(&v, m->rd, 8);
		asx_msg_free_chain(m);
		if (v >= f->cap || f->seen[v]++)
			f->dup++;
		if (any && v < last)
			f->back++;
		last = v;
		any = true;
		__atomic_store_n(&f->got, f->got + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Links changed while messages flow: the default route moves between A
 * and B 200 times under a writer and a reader of the mux's Stream.  Every
 * message comes back at most once, in order; one is missing only when it
 * went down while no Stream was linked for its band (counted unroutable):
 * received + unroutable == sent.
 */
static void test_relink_under_load(void **state)
{
	struct asx_svc_repo *repo;
	struct asx_mux_stats ms;
	struct flow f = { .cap = 50u << 20 };
	pthread_t w, r;

	f.seen = calloc(f.cap, 1);
	assert_non_null(f.seen);
	assert_int_equal(asx_svc_repo_create(&repo), 0);
	must_apply(repo, "mux M\nlink M A\n");
	f.up = stream_of(repo, "M");
	assert_int_equal(pthread_create(&r, NULL, reader, &f), 0);
	assert_int_equal(pthread_create(&w, NULL, writer, &f), 0);
	for (int i = 0; i < CYCLES; i++) {
		uint64_t before = __atomic_load_n(&f.got, __ATOMIC_ACQUIRE);

		must_apply(repo, i % 2 ? "mux M\nlink M A\n" : "mux M\nlink M B\n");
		/* messages flow between any two changes */
		for (int k = 0; k < 2000 && __atomic_load_n(&f.got, __ATOMIC_ACQUIRE) == before; k++)
			usleep(1000);
	}
	__atomic_store_n(&f.stop, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	for (int k = 0; k < 1000; k++) {	/* what is in flight comes back (10 s) */
		asx_mux_stats(mux_of(repo, "M"), &ms);
		if (__atomic_load_n(&f.got, __ATOMIC_ACQUIRE) + ms.unroutable >= f.sent)
			break;
		usleep(10000);
	}
	__atomic_store_n(&f.stop, 2, __ATOMIC_RELEASE);
	pthread_join(r, NULL);
	asx_mux_stats(mux_of(repo, "M"), &ms);
	printf("# %d relinks, %llu messages sent, %llu back, %llu unroutable (no route while relinked)\n",
	       CYCLES, (unsigned long long)f.sent, (unsigned long long)f.got,
	       (unsigned long long)ms.unroutable);
	assert_int_equal(f.dup, 0);
	assert_int_equal(f.back, 0);
	assert_int_equal(f.got + ms.unroutable, f.sent);
	assert_true(f.got > 0);
	asx_svc_repo_destroy(repo);
	free(f.seen);
}

static void bad(const char *tail, const char *want)
{
	struct asx_svc_repo *repo;
	char err[512];

	assert_int_equal(asx_svc_repo_create(&repo), 0);
	assert_true(apply(repo, tail, err, sizeof(err)) < 0);
	if (strcmp(err, want)) {
		fprintf(stderr, "got:  %s\nwant: %s\n", err, want);
		fail();
	}
	asx_svc_repo_destroy(repo);
}

static void test_parse_errors(void **state)
{
	bad("link M A\n",
	    "t.conf:3:6: 'link M A': no mux 'M' defined before this line (write 'mux M' first: a mux and its links are one definition)");
	bad("link A B\n",
	    "t.conf:3:6: 'link A B': no mux 'A' defined before this line (write 'mux A' first: a mux and its links are one definition)");
	bad("mux M\nlink M A\nlink M A band 2\n",
	    "t.conf:5:1: 'link M A': 'A' is already linked under mux 'M' (line 4)");
	bad("mux M\nlink M A band 3\nlink M B band 3\n",
	    "t.conf:5:1: 'link M B': band 3 of mux 'M' already goes to 'A' (line 4)");
	bad("mux M\nlink M A\nlink M B\n",
	    "t.conf:5:1: 'link M B': the default route (no band) of mux 'M' already goes to 'A' (line 4)");
	bad("mux M\nlink M A band 256\n",
	    "t.conf:4:15: 'band 256': a band is a number from 0 to 255");
	bad("mux M\nlink M M\n", "t.conf:4:1: 'link M M': a mux cannot be linked under itself");
	bad("mux M\nlink M\n",
	    "t.conf:5:1: expected the name of a stream to link under the mux, found the end of the file");
	bad("mux A\n", "t.conf:3:1: 'A' is already configured at t.conf:1:1");
	bad("mux M\nlink M X\n",
	    "t.conf:4:1: mux 'M': cannot link 'X': no stream 'X' (a Stream a mux links cannot be removed while the link stays)");
	bad("static S\nmux M\nlink M S\n",
	    "t.conf:3:1: static service 'S': the program registered no factory of that name (asx_svc_register())");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_by_band),
		cmocka_unit_test(test_relink_and_remove),
		cmocka_unit_test(test_failing_link_rolls_back),
		cmocka_unit_test(test_relink_under_load),
		cmocka_unit_test(test_parse_errors),
	};

	signal(SIGALRM, watchdog);
	alarm(300);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
