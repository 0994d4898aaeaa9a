// SPDX-License-Identifier: GPL-2.0
/*
 * svc_test.c - Streams over asx.ko from svc.conf (libasx's Service
 * Configurator, Documentation/svc.rst): "stream NAME kernel { kernel ...
 * static ... }" builds a user-space Stream whose driver is a kernel Stream
 * with asx.ko modules pushed, the user-space part is reshaped live while
 * messages flow through both (none lost, duplicated or out of order), and
 * what cannot change while it runs (the kernel part) is refused with the
 * Stream untouched.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <asx/kstream.h>
#include <asx/modules.h>
#include <asx/stream.h>
#include <asx/svc.h>
#include <asx/xdr.h>

#include "asx_harness.h"
#include "../../../tools/asxd/services/codec.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RECONFIGS	40
#define MIN_MSGS	1000
#else
#define RECONFIGS	200
#define MIN_MSGS	5000
#endif

#define NEED_ASX() do {								\
	struct asx_kstream *_ks;						\
	int _r = asx_kstream_open(&_ks, NULL, 0);				\
	if (_r)									\
		SKIP(return, "no /dev/asx: %s", strerror(-_r));			\
	asx_kstream_close(_ks);							\
} while (0)

static int roundtrip(struct asx_stream *s, uint32_t v)
{
	struct asx_msg *m = asx_msg_alloc(16, ASX_MSG_DATA);
	struct timespec ts;
	uint32_t got = ~0u;
	int r;

	if (!m || asx_msg_append(m, &v, 4))
		return -ENOMEM;
	r = asx_stream_put(s, m, 0, NULL);
	if (r) {
		asx_msg_free_chain(m);
		return r;
	}
	r = asx_stream_get(s, &m, 0, asx_deadline(&ts, 30 * ASX_NSEC_PER_SEC));
	if (r)
		return r;
	if (asx_msg_read(m, 0, &got, 4) != 4 || got != v)
		r = -EBADMSG;
	asx_msg_free_chain(m);
	return r;
}

TEST(kernel_stream_from_svc_conf)
{
	struct asx_svc_repo *repo;
	struct asx_svc_info in;
	struct asx_stream *s;
	char err[256];

	NEED_ASX();
	ASSERT_EQ(asx_svc_repo_create(&repo), 0);
	ASSERT_EQ(asx_svc_apply_text(repo, "k.conf",
				     "stream K kernel \"loop\" {\n"
				     "  kernel pass\n"
				     "  kernel count\n"
				     "  static framer\n"
				     "  static counter\n"
				     "}\n", 0, err, sizeof(err)), 0) TH_LOG("%s", err);
	ASSERT_EQ(asx_svc_find(repo, "K", &in), 0);
	EXPECT_STREQ(in.desc,
		     "Stream over asx.ko 'loop', modules bottom first: pass(asx.ko) count(asx.ko) framer counter");
	ASSERT_EQ(asx_svc_stream(repo, "K", &s), 0);
	for (uint32_t i = 0; i < 100; i++) {
		ASSERT_EQ(roundtrip(s, i), 0);
	}
	/* what cannot change while it runs is refused, and the Stream serves on */
	EXPECT_EQ(asx_svc_apply_text(repo, "k.conf",
				     "stream K kernel { kernel pass static framer static counter }",
				     0, err, sizeof(err)), -EOPNOTSUPP);
	EXPECT_STREQ(err, "k.conf:1:1: stream 'K': the kernel Stream below it (its driver or its asx.ko modules) cannot change while it runs: remove the Stream in one reload and add it back in the next");
	EXPECT_EQ(asx_svc_apply_text(repo, "k.conf",
				     "stream K kernel \"null\" { kernel pass kernel count static framer static counter }",
				     0, err, sizeof(err)), -EOPNOTSUPP);
	EXPECT_EQ(roundtrip(s, 1000), 0);
	/* removed in one reload, back in the next, changed */
	ASSERT_EQ(asx_svc_apply_text(repo, "k.conf", "", ASX_SVC_RELOAD, err, sizeof(err)), 0);
	ASSERT_EQ(asx_svc_apply_text(repo, "k.conf", "stream K kernel { kernel count }", 0, err,
				     sizeof(err)), 0) TH_LOG("%s", err);
	ASSERT_EQ(asx_svc_stream(repo, "K", &s), 0);
	EXPECT_EQ(roundtrip(s, 2000), 0);
	/* kernel modules take no parameters (a syntax error); an unknown one is named */
	EXPECT_EQ(asx_svc_apply_text(repo, "k.conf", "stream L kernel { kernel pass \"-x\" }", 0, err,
				     sizeof(err)), -EINVAL);
	EXPECT_STREQ(err, "k.conf:1:31: asx.ko module 'pass' takes no parameters (a kernel Stream's modules are pushed as they are)");
	EXPECT_EQ(asx_svc_apply_text(repo, "k.conf", "stream L kernel { kernel nosuchmod }", 0, err,
				     sizeof(err)), -ENOENT);
	EXPECT_STREQ(err, "k.conf:1:19: stream 'L': cannot push asx.ko module 'nosuchmod': No such file or directory");
	EXPECT_EQ(asx_svc_find(repo, "L", &in), -ENOENT);
	asx_svc_repo_destroy(repo);
}

struct load {
	struct asx_stream *s;
	int reconfigured;	/* atomic: the reconfigurations are done */
	int done;		/* atomic: the writer is done */
	uint32_t sent;		/* atomic */
	uint32_t got, bad;
	int werr, rerr;
};

static void *writer(void *arg)
{
	struct load *l = arg;
	struct timespec ts;

	for (uint32_t i = 0;
	     i < MIN_MSGS || !__atomic_load_n(&l->reconfigured, __ATOMIC_ACQUIRE); i++) {
		struct asx_msg *m = asx_msg_alloc(16, ASX_MSG_DATA);

		if (!m || asx_msg_append(m, &i, 4)) {
			l->werr = -ENOMEM;
			break;
		}
		l->werr = asx_stream_put(l->s, m, 0, asx_deadline(&ts, 60 * ASX_NSEC_PER_SEC));
		if (l->werr) {
			asx_msg_free_chain(m);
			break;
		}
		__atomic_store_n(&l->sent, i + 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&l->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *reader(void *arg)
{
	struct load *l = arg;
	struct timespec ts;

	while (!__atomic_load_n(&l->done, __ATOMIC_ACQUIRE) ||
	       l->got < __atomic_load_n(&l->sent, __ATOMIC_ACQUIRE)) {
		struct asx_msg *m;
		uint32_t v;

		/* a lost message fails here rather than hanging */
		l->rerr = asx_stream_get(l->s, &m, 0, asx_deadline(&ts, 60 * ASX_NSEC_PER_SEC));
		if (l->rerr)
			break;
		if (asx_msg_read(m, 0, &v, 4) != 4 || v != l->got)
			l->bad++;
		l->got++;
		asx_msg_free_chain(m);
	}
	return NULL;
}

TEST_TIMEOUT(reshaped_live_over_the_kernel_stream, 300)
{
	static const char *const shapes[3] = {
		"stream K kernel { kernel pass kernel count static counter \"a\" static relay }",
		"stream K kernel { kernel pass kernel count static counter \"b\" }",
		"stream K kernel { kernel pass kernel count static relay2 static counter \"b\" static relay }",
	};
	struct asx_svc_repo *repo;
	struct load l = { 0 };
	pthread_t w, r;
	char err[256];

	NEED_ASX();
	ASSERT_EQ(asx_svc_repo_create(&repo), 0);
	/*
	 * Modules that leave the bytes alone: one that encodes on the way down
	 * and decodes on the way up (framer, cksum) would see, after a
	 * reshape, messages it never encoded come back up the loop.
	 */
	ASSERT_EQ(asx_svc_register_module(repo, "relay", asx_mod_pass), 0);
	ASSERT_EQ(asx_svc_register_module(repo, "relay2", asx_mod_pass), 0);
	ASSERT_EQ(asx_svc_apply_text(repo, "k.conf", shapes[0], 0, err, sizeof(err)), 0)
		TH_LOG("%s", err);
	ASSERT_EQ(asx_svc_stream(repo, "K", &l.s), 0);
	ASSERT_EQ(pthread_create(&r, NULL, reader, &l), 0);
	ASSERT_EQ(pthread_create(&w, NULL, writer, &l), 0);
	for (int i = 1; i <= RECONFIGS; i++) {
		uint64_t t0;

		/* messages flow between any two reconfigurations, on any host */
		while (__atomic_load_n(&l.sent, __ATOMIC_ACQUIRE) < (uint32_t)i * 20 &&
		       !__atomic_load_n(&l.done, __ATOMIC_ACQUIRE))
			usleep(100);
		t0 = asx_now_ns();

		ASSERT_EQ(asx_svc_apply_text(repo, "k.conf", shapes[i % 3], 0, err, sizeof(err)), 0)
			TH_LOG("reconfiguration %d: %s", i, err);
		if (i % 100 == 0)
			TH_LOG("reconfiguration %d took %llu us, %u messages so far", i,
			       (unsigned long long)((asx_now_ns() - t0) / 1000),
			       __atomic_load_n(&l.sent, __ATOMIC_RELAXED));
	}
	__atomic_store_n(&l.reconfigured, 1, __ATOMIC_RELEASE);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	TH_LOG("%d reconfigurations, %u messages through user and kernel Modules", RECONFIGS,
	       l.got);
	EXPECT_EQ(l.werr, 0);
	EXPECT_EQ(l.rerr, 0);
	EXPECT_EQ(l.bad, 0);
	EXPECT_EQ(l.got, l.sent);
	EXPECT_GE(l.sent, MIN_MSGS);
	asx_svc_repo_destroy(repo);
}

/*
 * The sample svc.conf's KCodec Stream: asx.ko's frame and csum modules
 * below codec.so's XDR Module (tools/asxd/services/codec.c), loaded from
 * the build tree beside this program.  Records go down encoded into the
 * kernel, are framed and checksummed there, turn round in the loop driver,
 * are checked and unframed on the way up and decoded in user space.
 */
/* codec.so takes asx_mod_xdr from this program (linked with -rdynamic) */
__attribute__((used)) static void *const keep_mod_xdr = (void *)&asx_mod_xdr;

TEST(kernel_codec_stream)
{
	enum { N = 200, PER = 4 };
	struct asx_svc_repo *repo;
	struct asx_stream *s;
	char exe[512], conf[1024], err[512];
	struct timespec ts;
	uint32_t want = 0;
	ssize_t n;

	NEED_ASX();
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(n, 0);
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(conf, sizeof(conf),
		 "stream KCodec kernel \"loop\" {\n"
		 "  kernel frame\n"
		 "  kernel csum\n"
		 "  dynamic Xdr Module * %s/../lib/asx/services/codec.so:asx_codec_xdr()\n"
		 "}\n", exe);
	ASSERT_EQ(asx_svc_repo_create(&repo), 0);
	ASSERT_EQ(asx_svc_apply_text(repo, "k.conf", conf, 0, err, sizeof(err)), 0)
		TH_LOG("%s", err);
	ASSERT_EQ(asx_svc_stream(repo, "KCodec", &s), 0);
	for (uint32_t i = 0; i < N; i++) {
		struct asx_codec_rec v[PER];
		struct asx_msg *m = asx_msg_alloc(sizeof(v), ASX_MSG_DATA);

		for (uint32_t k = 0; k < PER; k++)
			codec_fill(&v[k], i * PER + k);
		ASSERT_NE(m, NULL);
		ASSERT_EQ(asx_msg_append(m, v, sizeof(v)), 0);
		ASSERT_EQ(asx_stream_put(s, m, 0, asx_deadline(&ts, 30 * ASX_NSEC_PER_SEC)), 0);
		/* and take back what has come round, so no queue fills */
		while (want < (i + 1) * PER) {
			struct asx_codec_rec g[PER];

			ASSERT_EQ(asx_stream_get(s, &m, 0, asx_deadline(&ts, 30 * ASX_NSEC_PER_SEC)),
				  0);
			ASSERT_EQ(m->type, ASX_MSG_DATA);
			ASSERT_EQ(asx_msg_length(m), sizeof(g));
			ASSERT_EQ(asx_msg_read(m, 0, g, sizeof(g)), sizeof(g));
			asx_msg_free_chain(m);
			for (uint32_t k = 0; k < PER; k++, want++) {
				ASSERT_TRUE(codec_ok(&g[k], want)) TH_LOG("record %u", want);
			}
		}
	}
	EXPECT_EQ(want, N * PER);
	asx_svc_repo_destroy(repo);
}

TEST_HARNESS_MAIN
