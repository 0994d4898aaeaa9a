/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * ace_side.h - the ACE 7 halves of `asx-bench ace` (ace_side.cpp, C++
 * against Debian's libace-dev), called from bench_ace.c.  Built and linked
 * only when the Makefile finds ACE (it then defines ASX_BENCH_ACE).
 * Every function returns 0 or a negative errno.
 */
#ifndef ASX_BENCH_ACE_SIDE_H
#define ASX_BENCH_ACE_SIDE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ACE::init() once; 0 or -EIO. */
int ace_side_init(void);

/*
 * @pairs producers -> @pairs consumers through one
 * ACE_Message_Queue<ACE_MT_SYNCH> with water marks @hiwat/@lowat: @n
 * messages of @size bytes in all; *@rate messages/s.  -EPROTO if a
 * message was lost, duplicated or reordered (per producer).
 */
int ace_side_msgq(unsigned int pairs, uint64_t n, size_t size, size_t hiwat, size_t lowat,
		  double *rate);

/*
 * @n messages of @size bytes from one writer down an ACE_Stream of 4 pass
 * Modules into a counting tail: message-based (put() calls put_next()) or
 * @task_based (every writer-side Task has one thread, put() queues); *@rate
 * messages/s.
 */
int ace_side_stream(int task_based, uint64_t n, size_t size, double *rate);

/*
 * @n times: ACE_Service_Config::process_directive() of @dynamic, then of
 * @remove; *@us microseconds per load+remove cycle.
 */
int ace_side_svc_cycle(uint64_t n, const char *dynamic, const char *remove, double *us);

/*
 * An echo server on the connected sockets @sfd[0..@nc): one thread runs an
 * ACE_Reactor over ACE_Dev_Poll_Reactor, one ACE_Event_Handler a socket,
 * echoing inline (bench_echo_served()'s @start and @stop).
 */
int ace_side_echo_start(const int *sfd, unsigned int nc, void **srv);
void ace_side_echo_stop(void *srv);
/*
 * The same with @nthreads threads running the event loop: an ACE_Reactor
 * over ACE_TP_Reactor (select, leader/followers), or over
 * ACE_Dev_Poll_Reactor (epoll, which ACE lets several threads run);
 * stopped with ace_side_echo_stop().
 */
int ace_side_echo_tp_start(const int *sfd, unsigned int nc, unsigned int nthreads, void **srv);
int ace_side_echo_devpoll_mt_start(const int *sfd, unsigned int nc, unsigned int nthreads,
				   void **srv);

#ifdef __cplusplus
}
#endif

#endif /* ASX_BENCH_ACE_SIDE_H */
