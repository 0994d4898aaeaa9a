// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * ace_echo_svc.cpp - the ACE service `asx-bench ace` loads and removes
 * (build/lib/asx/bench/ace_echo_svc.so), doing at init and fini what ASX's
 * echo.so does: init parses "-a HOST:PORT", opens a listening socket and
 * starts one thread; fini stops the thread and closes the socket.
 *
 *	dynamic Echo Service_Object * ace_echo_svc.so:_make_Bench_Echo() "-a 127.0.0.1:0"
 *	remove Echo
 *
 * The thread waits on the Task's queue (fini puts a hangup there); it
 * serves no connection: the benchmark measures the reconfiguration.
 */
#include <cstring>

#include <ace/INET_Addr.h>
#include <ace/Message_Block.h>
#include <ace/SOCK_Acceptor.h>
#include <ace/Service_Object.h>
#include <ace/Synch_Traits.h>
#include <ace/Task_T.h>

class Bench_Echo : public ACE_Task<ACE_MT_SYNCH> {
public:
	int init(int argc, ACE_TCHAR *argv[]) override
	{
		const ACE_TCHAR *where = ACE_TEXT("127.0.0.1:0");
		ACE_INET_Addr addr;

		for (int i = 0; i < argc; i++)
			if (!std::strcmp(argv[i], "-a") && i + 1 < argc)
				where = argv[++i];
		if (addr.set(where) < 0 || acc_.open(addr, 1) < 0)
			return -1;
		if (activate(THR_NEW_LWP | THR_JOINABLE, 1) < 0) {
			acc_.close();
			return -1;
		}
		return 0;
	}

	int fini() override
	{
		putq(new ACE_Message_Block(0, ACE_Message_Block::MB_HANGUP));
		wait();
		acc_.close();
		return 0;
	}

	int svc() override
	{
		ACE_Message_Block *mb;

		while (getq(mb) >= 0) {
			bool hangup = mb->msg_type() == ACE_Message_Block::MB_HANGUP;

			mb->release();
			if (hangup)
				break;
		}
		return 0;
	}

private:
	ACE_SOCK_Acceptor acc_;
};

ACE_FACTORY_DEFINE(ACE_Local_Service, Bench_Echo)
