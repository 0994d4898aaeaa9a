// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * test_ipc_netns.c - IPC SAP tests that need network namespaces (root):
 * multicast and broadcast, and a connector timing out against an address
 * that silently drops packets.
 *
 * Multicast and broadcast run in a thread that unshare()s a fresh network
 * namespace holding nothing but its own loopback, so not one datagram can
 * leave the machine.  The connector test builds two namespaces joined by
 * a veth pair (removed again in the teardown):
 *
 *   asxA<pid>                          asxB<pid>
 *   asxa<pid> 10.231.0.1/24 <-veth-> asxb<pid> 10.231.0.2/24 (blackholed)
 *                                              10.231.0.3/24 (answers)
 *
 * "ip rule add from 10.231.0.2 blackhole" in B discards everything B
 * would send from .2, so a SYN to .2 is never answered (no SYN-ACK, no
 * RST) while .3 answers with a RST: the path works, and the timeout is
 * the connector's.  Without root these tests fail and say why.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <asx/addr.h>
#include <asx/sock.h>

#define MS 1000000ULL

/* A job runs in its own thread inside a namespace and reports a message. */
struct ns_job {
	const char *netns;		/* NULL: a fresh, private namespace */
	void (*fn)(struct ns_job *);
	char err[512];
};

#define JOB_CHECK(j, cond)						\
	do {								\
		if (!(cond)) {						\
			snprintf((j)->err, sizeof((j)->err), "%s:%d: %s",	\
				 __FILE__, __LINE__, #cond);		\
			return;						\
		}							\
	} while (0)

static struct timespec *in_ms(struct timespec *ts, unsigned ms)
{
	return asx_deadline(ts, ms * MS);
}

static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		r = -errno;
	} else {
		ifr.ifr_flags |= IFF_UP | IFF_MULTICAST;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			r = -errno;
	}
	close(fd);
	return r;
}

static void *job_thread(void *arg)
{
	struct ns_job *j = arg;
	char path[128];
	int fd, r;

	if (j->netns) {
		snprintf(path, sizeof(path), "/run/netns/%s", j->netns);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNET)) {
			snprintf(j->err, sizeof(j->err), "cannot enter netns %s: %s", j->netns,
				 strerror(errno));
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		close(fd);
	} else if (unshare(CLONE_NEWNET)) {
		snprintf(j->err, sizeof(j->err),
			 "unshare(CLONE_NEWNET) failed: %s (these tests need root)", strerror(errno));
		return NULL;
	}
	r = lo_up();
	if (r) {
		snprintf(j->err, sizeof(j->err), "cannot bring lo up: %s", strerror(-r));
		return NULL;
	}
	j->fn(j);
	return NULL;
}

static void run_job(const char *netns, void (*fn)(struct ns_job *))
{
	struct ns_job j = { .netns = netns, .fn = fn };
	pthread_t t;

	if (geteuid() != 0)
		fail_msg("network namespace tests need root (CI runs as root); euid is %d",
			 (int)geteuid());
	assert_int_equal(pthread_create(&t, NULL, job_thread, &j), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	if (j.err[0])
		fail_msg("%s", j.err);
}

/* ------------------------------------------------------------ multicast */

static void mcast_job(struct ns_job *j, const char *group_s)
{
	struct asx_sock_mcast rx, tx;
	struct asx_addr group, from, notmc;
	struct timespec dl;
	char buf[64];
	ssize_t n;

	JOB_CHECK(j, asx_addr_parse(&group, group_s, NULL) == 0);
	JOB_CHECK(j, asx_sock_mcast_open(&rx, &group, "lo", NULL) == 0);
	JOB_CHECK(j, asx_sock_mcast_open(&tx, &group, "lo", NULL) == 0);
	/* hops 0: the datagrams are looped back on this host and go no further */
	JOB_CHECK(j, asx_sock_mcast_set_hops(&tx, 0) == 0);
	JOB_CHECK(j, asx_sock_mcast_set_loop(&tx, true) == 0);
	JOB_CHECK(j, asx_sock_mcast_join(&rx, &group, NULL) == 0);
	JOB_CHECK(j, asx_sock_mcast_join(&rx, &group, "no-such-if0") == -ENODEV);

	JOB_CHECK(j, asx_sock_mcast_send(&tx, "to the group", 12, &group, NULL) == 12);
	n = asx_sock_mcast_recv(&rx, buf, sizeof(buf), &from, in_ms(&dl, 2000));
	JOB_CHECK(j, n == 12);
	JOB_CHECK(j, memcmp(buf, "to the group", 12) == 0);
	JOB_CHECK(j, asx_addr_family(&from) == asx_addr_family(&group));

	/* after leaving, nothing arrives */
	JOB_CHECK(j, asx_sock_mcast_leave(&rx, &group, NULL) == 0);
	while (asx_sock_mcast_recv(&rx, buf, sizeof(buf), NULL, in_ms(&dl, 0)) > 0)
		;
	JOB_CHECK(j, asx_sock_mcast_send(&tx, "nobody", 6, &group, NULL) == 6);
	JOB_CHECK(j, asx_sock_mcast_recv(&rx, buf, sizeof(buf), NULL, in_ms(&dl, 100)) ==
		  -ETIMEDOUT);

	/* a unicast address is not a group */
	JOB_CHECK(j, asx_addr_parse(&notmc, "127.0.0.1:1", NULL) == 0);
	JOB_CHECK(j, asx_sock_mcast_join(&rx, &notmc, NULL) == -EINVAL);
	JOB_CHECK(j, asx_sock_mcast_send(&tx, "x", 1, &notmc, NULL) == -EINVAL);
	{
		struct asx_sock_mcast bad;

		JOB_CHECK(j, asx_sock_mcast_open(&bad, &notmc, NULL, NULL) == -EINVAL);
		JOB_CHECK(j, asx_sock_mcast_open(&bad, &group, "no-such-if0", NULL) == -ENODEV);
	}
	asx_sock_mcast_close(&rx);
	asx_sock_mcast_close(&tx);
}

static void mcast4_job(struct ns_job *j) { mcast_job(j, "239.255.42.1:4242"); }

static void test_mcast_ipv4_loopback(void **state) { (void)state; run_job(NULL, mcast4_job); }

static char ns_a[32], ns_b[32];
static int veth_pid;

static int enter_netns(const char *name)
{
	char path[128];
	int fd, r = 0;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		r = -errno;
	close(fd);
	return r;
}

/*
 * Multicast between the namespaces: the receiver joins on B's end of the
 * veth, the sender in A sends out of A's end with one hop.
 */
static void mcast_veth_job(struct ns_job *j, const char *group_s)
{
	struct asx_sock_mcast rx, tx;
	struct asx_addr group, from;
	struct timespec dl;
	char ifa[IF_NAMESIZE], ifb[IF_NAMESIZE], buf[32];
	ssize_t n = 0;
	int i;

	snprintf(ifa, sizeof(ifa), "asxa%d", veth_pid);
	snprintf(ifb, sizeof(ifb), "asxb%d", veth_pid);
	JOB_CHECK(j, asx_addr_parse(&group, group_s, NULL) == 0);
	JOB_CHECK(j, enter_netns(ns_b) == 0);
	JOB_CHECK(j, asx_sock_mcast_open(&rx, &group, ifb, NULL) == 0);
	JOB_CHECK(j, asx_sock_mcast_join(&rx, &group, NULL) == 0);
	JOB_CHECK(j, enter_netns(ns_a) == 0);
	JOB_CHECK(j, asx_sock_mcast_open(&tx, &group, ifa, NULL) == 0);
	JOB_CHECK(j, asx_sock_mcast_set_loop(&tx, false) == 0);
	/*
	 * A fresh veth needs a moment before IPv6 can send from it (link-local
	 * address, duplicate address detection): retry for up to 3 s.
	 */
	for (i = 0; i < 30; i++) {
		n = asx_sock_mcast_send(&tx, "across", 6, &group, NULL);
		if (n == 6)
			n = asx_sock_mcast_recv(&rx, buf, sizeof(buf), &from, in_ms(&dl, 100));
		else
			nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
		if (n == 6)
			break;
	}
	if (n != 6) {
		snprintf(j->err, sizeof(j->err), "%s: no datagram across the veth: %zd (%s)",
			 group_s, n, strerror((int)-n));
		return;
	}
	JOB_CHECK(j, memcmp(buf, "across", 6) == 0);
	/* loop off: the sender does not hear itself */
	JOB_CHECK(j, asx_sock_mcast_recv(&tx, buf, sizeof(buf), NULL, in_ms(&dl, 50)) ==
		  -ETIMEDOUT);
	JOB_CHECK(j, asx_sock_mcast_leave(&rx, &group, NULL) == 0);
	JOB_CHECK(j, asx_sock_mcast_leave(&rx, &group, NULL) < 0);
	asx_sock_mcast_close(&rx);
	asx_sock_mcast_close(&tx);
}

static void mcast4_veth_job(struct ns_job *j) { mcast_veth_job(j, "239.255.42.2:4245"); }
static void mcast6_veth_job(struct ns_job *j) { mcast_veth_job(j, "[ff02::4242]:4246"); }

static void test_mcast_ipv4_netns(void **state)
{
	(void)state;
	if (!ns_a[0])
		fail_msg("network namespaces could not be created (need root and iproute2)");
	run_job(ns_a, mcast4_veth_job);
}

static void test_mcast_ipv6_netns(void **state)
{
	(void)state;
	if (!ns_a[0])
		fail_msg("network namespaces could not be created (need root and iproute2)");
	run_job(ns_a, mcast6_veth_job);
}

/* ------------------------------------------------------------ broadcast */

static void bcast_job(struct ns_job *j)
{
	struct asx_sock_bcast rx, tx;
	struct asx_sock_dgram plain;
	struct asx_addr any, local, bc, from;
	struct timespec dl;
	char buf[32];

	JOB_CHECK(j, asx_addr_parse(&any, "*:4244", NULL) == 0);
	JOB_CHECK(j, asx_addr_parse(&local, "127.0.0.1:0", NULL) == 0);
	JOB_CHECK(j, asx_addr_parse(&bc, "127.255.255.255:4244", NULL) == 0);
	JOB_CHECK(j, asx_sock_bcast_open(&rx, &any, NULL) == 0);
	JOB_CHECK(j, asx_sock_bcast_open(&tx, &local, NULL) == 0);
	JOB_CHECK(j, asx_sock_bcast_send(&tx, "to all", 6, &bc, NULL) == 6);
	JOB_CHECK(j, asx_sock_bcast_recv(&rx, buf, sizeof(buf), &from, in_ms(&dl, 2000)) == 6);
	JOB_CHECK(j, memcmp(buf, "to all", 6) == 0);
	/* a plain datagram socket may not broadcast (no SO_BROADCAST) */
	JOB_CHECK(j, asx_sock_dgram_open(&plain, &local, NULL) == 0);
	JOB_CHECK(j, asx_sock_dgram_send(&plain, "no", 2, &bc, NULL) == -EACCES);
	{
		struct asx_addr v6;
		struct asx_sock_bcast b6;

		JOB_CHECK(j, asx_addr_parse(&v6, "[::1]:0", NULL) == 0);
		JOB_CHECK(j, asx_sock_bcast_open(&b6, &v6, NULL) == -EAFNOSUPPORT);
	}
	asx_sock_dgram_close(&plain);
	asx_sock_bcast_close(&rx);
	asx_sock_bcast_close(&tx);
}

static void test_bcast(void **state) { (void)state; run_job(NULL, bcast_job); }

/* ------------------------------------------------------------ connector timeout */

/* Run a shell command; on failure put its output in @msg. */
static int sh(char *msg, size_t len, const char *fmt, ...)
{
	char cmd[512], out[512];
	va_list ap;
	FILE *p;
	size_t n = 0;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	p = popen(cmd, "r");
	if (!p) {
		snprintf(msg, len, "popen(%s): %s", cmd, strerror(errno));
		return -1;
	}
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	if (st != 0)
		snprintf(msg, len, "'%s' failed (status %d): %s", cmd, st, out);
	return st == 0 ? 0 : -1;
}

static int netns_teardown(void **state)
{
	char msg[64];

	(void)state;
	if (ns_a[0])
		sh(msg, sizeof(msg), "ip netns del %s", ns_a);
	if (ns_b[0])
		sh(msg, sizeof(msg), "ip netns del %s", ns_b);
	ns_a[0] = ns_b[0] = '\0';
	return 0;
}

static int netns_setup(void **state)
{
	static const char *const steps[] = {
		"ip netns add %1$s",
		"ip netns add %2$s",
		"ip -n %1$s link add asxa%3$d type veth peer name asxb%3$d netns %2$s",
		"ip -n %1$s addr add 10.231.0.1/24 dev asxa%3$d",
		"ip -n %1$s link set asxa%3$d up",
		"ip -n %2$s addr add 10.231.0.2/24 dev asxb%3$d",
		"ip -n %2$s addr add 10.231.0.3/24 dev asxb%3$d",
		"ip -n %2$s link set asxb%3$d up",
		"ip -n %2$s link set lo up",
		"ip -n %1$s link set lo up",
		"ip -n %2$s rule add from 10.231.0.2 blackhole pref 100",
	};
	static char msg[1024];
	int pid = (int)getpid() % 1000000;
	size_t i;

	(void)state;
	veth_pid = pid;
	snprintf(ns_a, sizeof(ns_a), "asxA%d", pid);
	snprintf(ns_b, sizeof(ns_b), "asxB%d", pid);
	if (geteuid() != 0) {
		fprintf(stderr, "test_ipc_netns: needs root to create network namespaces\n");
		ns_a[0] = ns_b[0] = '\0';
		return 0;	/* the test itself fails with the reason */
	}
	netns_teardown(state);	/* leftovers of an earlier, killed run with our pid */
	snprintf(ns_a, sizeof(ns_a), "asxA%d", pid);
	snprintf(ns_b, sizeof(ns_b), "asxB%d", pid);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), steps[i], ns_a, ns_b, pid);
		if (sh(msg, sizeof(msg), "%s", cmd)) {
			fprintf(stderr, "test_ipc_netns: namespace setup failed: %s\n", msg);
			netns_teardown(state);
			return -1;
		}
	}
	return 0;
}

static void connect_timeout_job(struct ns_job *j)
{
	struct asx_sock_connector con;
	struct asx_sock_stream s;
	struct asx_addr drop, live;
	struct timespec dl;
	uint64_t t0, el;
	int r;

	JOB_CHECK(j, asx_addr_parse(&drop, "10.231.0.2:9", NULL) == 0);
	JOB_CHECK(j, asx_addr_parse(&live, "10.231.0.3:9", NULL) == 0);
	JOB_CHECK(j, asx_sock_connector_init(&con, NULL) == 0);

	/* the path works: .3 refuses at once */
	r = asx_sock_connector_connect(&con, &s, &live, in_ms(&dl, 3000));
	if (r != -ECONNREFUSED) {
		snprintf(j->err, sizeof(j->err), "connect to the live address gave %d (%s), "
			 "expected -ECONNREFUSED", r, strerror(-r));
		return;
	}

	/* .2 drops the SYN: the deadline ends the wait */
	t0 = asx_now_ns();
	r = asx_sock_connector_connect(&con, &s, &drop, in_ms(&dl, 300));
	el = asx_now_ns() - t0;
	if (r != -ETIMEDOUT) {
		snprintf(j->err, sizeof(j->err), "connect to the dropping address gave %d (%s)",
			 r, strerror(-r));
		return;
	}
	JOB_CHECK(j, asx_handle(&s) == -1);
	JOB_CHECK(j, el >= 300 * MS);
	JOB_CHECK(j, el < 2000 * MS);

	/* split form: start, look without waiting, wait a little, give up */
	r = asx_sock_connector_start(&con, &s, &drop);
	JOB_CHECK(j, r == -EINPROGRESS);
	JOB_CHECK(j, asx_sock_connector_complete(&con, &s, NULL) == -ETIMEDOUT);
	JOB_CHECK(j, asx_handle(&s) >= 0);
	JOB_CHECK(j, asx_sock_connector_complete(&con, &s, in_ms(&dl, 100)) == -ETIMEDOUT);
	JOB_CHECK(j, asx_sock_stream_close(&s) == 0);
}

static void test_connector_timeout(void **state)
{
	(void)state;
	if (!ns_a[0])
		fail_msg("network namespaces could not be created (need root and iproute2)");
	run_job(ns_a, connect_timeout_job);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mcast_ipv4_loopback),
		cmocka_unit_test(test_bcast),
		cmocka_unit_test(test_connector_timeout),
		cmocka_unit_test(test_mcast_ipv4_netns),
		cmocka_unit_test(test_mcast_ipv6_netns),
	};

	return cmocka_run_group_tests_name("ipc_netns", tests, netns_setup, netns_teardown);
}
