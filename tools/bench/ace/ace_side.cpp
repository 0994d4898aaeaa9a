// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ace_side.cpp - the ACE 7 halves of `asx-bench ace` (bench_ace.c runs
 * them alternating with the ASX halves): the same workloads written
 * against ACE_Message_Queue<ACE_MT_SYNCH>, ACE_Stream/ACE_Module/ACE_Task
 * and ACE_Service_Config::process_directive().  Every message carries
 * (producer, sequence number) and the receiving side checks it, as the
 * ASX halves do.
 */
#include <errno.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <ace/ACE.h>
#include <ace/Dev_Poll_Reactor.h>
#include <ace/Event_Handler.h>
#include <ace/Init_ACE.h>
#include <ace/OS_NS_sys_socket.h>
#include <ace/OS_NS_Thread.h>
#include <ace/Reactor.h>
#include <ace/TP_Reactor.h>
#include <ace/Message_Block.h>
#include <ace/Message_Queue_T.h>
#include <ace/Module.h>
#include <ace/Service_Config.h>
#include <ace/Stream.h>
#include <ace/Synch_Traits.h>
#include <ace/Task_T.h>

#include "ace_side.h"

static uint64_t now_ns()
{
	timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct stamp {
	uint64_t producer, seq;
};

int ace_side_init(void)
{
	static bool done;

	if (done)
		return 0;
	if (ACE::init() < 0)
		return -EIO;
	done = true;
	return 0;
}

/* ---------------------------------------------------------------- msgq */

int ace_side_msgq(unsigned int pairs, uint64_t n, size_t size, size_t hiwat, size_t lowat,
		  double *rate)
{
	ACE_Message_Queue<ACE_MT_SYNCH> q(hiwat, lowat);
	std::atomic<int> err(0);
	std::vector<std::thread> th;
	uint64_t per = n / pairs, t0, t1;

	if (!pairs || !per || size < sizeof(stamp))
		return -EINVAL;
	t0 = now_ns();
	for (unsigned int c = 0; c < pairs; c++)
		th.emplace_back([&q, &err, per, pairs] {
			std::vector<uint64_t> next(pairs, 0);

			for (uint64_t i = 0; i < per; i++) {
				ACE_Message_Block *mb;
				stamp s;

				if (q.dequeue_head(mb) < 0) {
					err = -EIO;
					return;
				}
				std::memcpy(&s, mb->rd_ptr(), sizeof(s));
				/* one consumer sees each producer's messages in order */
				if (s.producer >= pairs || s.seq < next[s.producer])
					err = -EPROTO;
				else
					next[s.producer] = s.seq + 1;
				mb->release();
			}
		});
	for (unsigned int p = 0; p < pairs; p++)
		th.emplace_back([&q, &err, per, size, p] {
			for (uint64_t i = 0; i < per; i++) {
				ACE_Message_Block *mb = new ACE_Message_Block(size);
				stamp s = { p, i };

				std::memcpy(mb->wr_ptr(), &s, sizeof(s));
				mb->wr_ptr(size);
				if (q.enqueue_tail(mb) < 0) {
					mb->release();
					err = -EIO;
					return;
				}
			}
		});
	for (auto &t : th)
		t.join();
	t1 = now_ns();
	if (err)
		return err;
	if (!q.is_empty())
		return -EPROTO;	/* a duplicate left over */
	*rate = (double)(per * pairs) * 1e9 / (double)(t1 - t0);
	return 0;
}

/* ---------------------------------------------------------------- stream */

typedef ACE_Task<ACE_MT_SYNCH> task_t;
typedef ACE_Module<ACE_MT_SYNCH> module_t;

/* A pass layer: message-based put_next(), or queue to its one thread. */
class Pass : public task_t {
public:
	explicit Pass(bool task_based) : task_based_(task_based) {}

	int start()
	{
		return task_based_ ? activate(THR_NEW_LWP | THR_JOINABLE, 1) : 0;
	}

	void stop()
	{
		if (!task_based_)
			return;
		putq(new ACE_Message_Block(0, ACE_Message_Block::MB_HANGUP));
		wait();
	}

	int put(ACE_Message_Block *mb, ACE_Time_Value *tv = nullptr) override
	{
		return task_based_ ? putq(mb, tv) : put_next(mb, tv);
	}

	int svc() override
	{
		ACE_Message_Block *mb;

		while (getq(mb) >= 0) {
			if (mb->msg_type() == ACE_Message_Block::MB_HANGUP) {
				mb->release();
				break;
			}
			if (put_next(mb) < 0)
				mb->release();
		}
		return 0;
	}

private:
	bool task_based_;
};

/* The tail: counts and frees what reaches it, checking the order. */
class Sink : public task_t {
public:
	int put(ACE_Message_Block *mb, ACE_Time_Value * = nullptr) override
	{
		stamp s;

		std::memcpy(&s, mb->rd_ptr(), sizeof(s));
		if (s.seq != next_)
			bad_ = true;
		next_ = s.seq + 1;
		mb->release();
		sunk_.fetch_add(1, std::memory_order_release);
		return 0;
	}

	std::atomic<uint64_t> sunk_{0};
	uint64_t next_ = 0;
	bool bad_ = false;
};

int ace_side_stream(int task_based, uint64_t n, size_t size, double *rate)
{
	Sink sink, sink_rd;
	Pass *wr[4], *rd[4];
	module_t *mods[4];
	module_t *tail = new module_t(ACE_TEXT("sink"), &sink, &sink_rd, nullptr,
				      module_t::M_DELETE_NONE);
	ACE_Stream<ACE_MT_SYNCH> *s = new ACE_Stream<ACE_MT_SYNCH>(nullptr, nullptr, tail);
	uint64_t t0, t1;
	int ret = 0;

	if (size < sizeof(stamp))
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		wr[i] = new Pass(task_based);
		rd[i] = new Pass(false);
		mods[i] = new module_t(ACE_TEXT("pass"), wr[i], rd[i], nullptr,
				       module_t::M_DELETE_NONE);
		if (s->push(mods[i]) < 0 || wr[i]->start() < 0)
			ret = -EIO;
	}
	t0 = now_ns();
	for (uint64_t i = 0; i < n && !ret; i++) {
		ACE_Message_Block *mb = new ACE_Message_Block(size);
		stamp st = { 0, i };

		std::memcpy(mb->wr_ptr(), &st, sizeof(st));
		mb->wr_ptr(size);
		if (s->put(mb) < 0) {
			mb->release();
			ret = -EIO;
		}
	}
	while (!ret && sink.sunk_.load(std::memory_order_acquire) < n)
		std::this_thread::yield();
	t1 = now_ns();
	for (int i = 0; i < 4; i++)
		wr[i]->stop();
	s->close();	/* pops and deletes the Modules and the tail, not their Tasks */
	delete s;
	for (int i = 0; i < 4; i++) {
		delete wr[i];
		delete rd[i];
	}
	if (ret)
		return ret;
	if (sink.bad_)
		return -EPROTO;
	*rate = (double)n * 1e9 / (double)(t1 - t0);
	return 0;
}

/* ---------------------------------------------------------------- svc */

int ace_side_svc_cycle(uint64_t n, const char *dynamic, const char *remove, double *us)
{
	static bool opened;
	uint64_t t0, t1;

	if (!opened) {
		ACE_TCHAR prog[] = ACE_TEXT("asx-bench");
		ACE_TCHAR *argv[] = { prog, nullptr };

		if (ACE_Service_Config::open(1, argv, ACE_DEFAULT_LOGGER_KEY, true, true) < 0)
			return -EIO;
		opened = true;
	}
	t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		if (ACE_Service_Config::process_directive(dynamic) != 0)
			return -EIO;
		if (ACE_Service_Config::process_directive(remove) != 0)
			return -EIO;
	}
	t1 = now_ns();
	*us = (double)(t1 - t0) / 1e3 / (double)n;
	return 0;
}

/* ---------------------------------------------------------------- echo */

/* One connection: read what it holds, write it back. */
class Echo_Handler : public ACE_Event_Handler {
public:
	explicit Echo_Handler(ACE_HANDLE h) : h_(h) {}

	ACE_HANDLE get_handle() const override { return h_; }

	int handle_input(ACE_HANDLE) override
	{
		char buf[4096];
		ssize_t n = ACE_OS::recv(h_, buf, sizeof(buf));

		if (n <= 0)
			return -1;
		return ACE::send_n(h_, buf, (size_t)n) == n ? 0 : -1;
	}

	/* the sockets are the caller's: nothing to close */
	int handle_close(ACE_HANDLE, ACE_Reactor_Mask) override { return 0; }

private:
	ACE_HANDLE h_;
};

struct echo_srv {
	ACE_Reactor *reactor;
	std::vector<Echo_Handler *> handlers;
	std::thread thread;
	std::vector<std::thread> pool;	/* the multi-threaded servers' */
};

/* @s's handlers, one a socket, registered with its reactor: 0 or -EIO (stopped). */
static int echo_register(echo_srv *s, const int *sfd, unsigned int nc, void **srv)
{
	for (unsigned int i = 0; i < nc; i++) {
		Echo_Handler *h = new Echo_Handler(sfd[i]);

		s->handlers.push_back(h);
		if (s->reactor->register_handler(h, ACE_Event_Handler::READ_MASK) < 0) {
			*srv = s;
			ace_side_echo_stop(s);
			*srv = nullptr;
			return -EIO;
		}
	}
	return 0;
}

int ace_side_echo_start(const int *sfd, unsigned int nc, void **srv)
{
	echo_srv *s = new echo_srv;

	s->reactor = new ACE_Reactor(new ACE_Dev_Poll_Reactor(), true);
	if (echo_register(s, sfd, nc, srv))
		return -EIO;
	s->thread = std::thread([s] {
		s->reactor->owner(ACE_OS::thr_self());
		s->reactor->run_reactor_event_loop();
	});
	*srv = s;
	return 0;
}

/* @nthreads threads run @impl's event loop (ACE's leader/followers). */
static int echo_start_mt(ACE_Reactor_Impl *impl, const int *sfd, unsigned int nc,
			 unsigned int nthreads, void **srv)
{
	echo_srv *s = new echo_srv;

	s->reactor = new ACE_Reactor(impl, true);
	if (echo_register(s, sfd, nc, srv))
		return -EIO;
	for (unsigned int i = 0; i < nthreads; i++)
		s->pool.emplace_back([s] { s->reactor->run_reactor_event_loop(); });
	*srv = s;
	return 0;
}

int ace_side_echo_tp_start(const int *sfd, unsigned int nc, unsigned int nthreads, void **srv)
{
	return echo_start_mt(new ACE_TP_Reactor(), sfd, nc, nthreads, srv);
}

int ace_side_echo_devpoll_mt_start(const int *sfd, unsigned int nc, unsigned int nthreads,
				   void **srv)
{
	return echo_start_mt(new ACE_Dev_Poll_Reactor(), sfd, nc, nthreads, srv);
}

void ace_side_echo_stop(void *srv)
{
	echo_srv *s = static_cast<echo_srv *>(srv);

	if (s->thread.joinable() || !s->pool.empty())
		s->reactor->end_reactor_event_loop();
	if (s->thread.joinable())
		s->thread.join();
	for (std::thread &t : s->pool)
		t.join();
	s->reactor->close();
	delete s->reactor;
	for (Echo_Handler *h : s->handlers)
		delete h;
	delete s;
}
