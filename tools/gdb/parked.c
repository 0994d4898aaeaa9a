// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * parked.c - the program tools/gdb/test-gdb.sh debugs: an ASC "gdbasc" of
 * one VP whose user threads "sleeper-a" and "sleeper-b" park in known
 * functions (an ASC condition wait, an ASC semaphore wait), then a breakpoint
 * in asx_gdb_ready() on the main pthread while they are parked.  Built
 * against the installed library only (pkg-config libasx).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <asx/asc.h>

static struct asx_asc_mutex m;
static struct asx_asc_cond c;
static struct asx_asc_sem s, done;
static int go, parked;		/* atomic */

/* where gdb stops: both sleepers parked */
__attribute__((noinline)) void asx_gdb_ready(void);
__attribute__((noinline)) void asx_gdb_ready(void)
{
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void parked_in_cond(void)
{
	asx_asc_mutex_lock(&m);
	__atomic_add_fetch(&parked, 1, __ATOMIC_SEQ_CST);
	while (!go)
		asx_asc_cond_wait(&c, &m);
	asx_asc_mutex_unlock(&m);
}

static __attribute__((noinline)) void parked_in_sem(void)
{
	__atomic_add_fetch(&parked, 1, __ATOMIC_SEQ_CST);
	asx_asc_sem_wait(&s);
}

static void *sleeper_a(void *arg)
{
	(void)arg;
	parked_in_cond();
	return NULL;
}

static void *sleeper_b(void *arg)
{
	(void)arg;
	parked_in_sem();
	return NULL;
}

/* runs once the other two parked (one non-preemptive VP) */
static void *waker(void *arg)
{
	(void)arg;
	__atomic_add_fetch(&parked, 1, __ATOMIC_SEQ_CST);
	asx_asc_sem_wait(&done);
	asx_asc_mutex_lock(&m);
	go = 1;
	asx_asc_cond_signal(&c);
	asx_asc_mutex_unlock(&m);
	asx_asc_sem_post(&s);
	return NULL;
}

int main(void)
{
	ASX_OPTS(struct asx_asc_opts, o, .name = "gdbasc", .nvps = 1, .max_vps = 1);
	const struct asx_prio_qos q = ASX_PRIO_QOS(0);
	static const char *const names[3] = { "sleeper-a", "sleeper-b", "waker" };
	asx_asc_thread_fn fns[3] = { sleeper_a, sleeper_b, waker };
	struct asx_asc_thread *t[3];
	struct asx_asc *asc;

	asx_asc_mutex_init(&m);
	asx_asc_cond_init(&c);
	asx_asc_sem_init(&s, 0);
	asx_asc_sem_init(&done, 0);
	if (asx_asc_create(&asc, &asx_asc_prio, &o)) {
		fprintf(stderr, "parked: asx_asc_create failed\n");
		return 1;
	}
	for (int i = 0; i < 3; i++) {
		ASX_OPTS(struct asx_asc_thread_opts, to, .name = names[i]);

		if (asx_asc_thread_spawn(asc, &q.qos, fns[i], NULL, &to, &t[i])) {
			fprintf(stderr, "parked: cannot spawn %s\n", names[i]);
			return 1;
		}
	}
	while (__atomic_load_n(&parked, __ATOMIC_SEQ_CST) < 3)
		usleep(1000);
	asx_gdb_ready();
	asx_asc_sem_post(&done);
	for (int i = 0; i < 3; i++)
		asx_asc_thread_join(t[i], NULL);
	asx_asc_destroy(asc);
	puts("parked: done");
	return 0;
}
