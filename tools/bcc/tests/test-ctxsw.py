#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""test-ctxsw.py - asx-ctxsw against a workload with a known answer.

Usage: test-ctxsw.py CTXLOAD

Runs CTXLOAD (tools/bcc/tests/ctxload.c) under asx-ctxsw -p -j --per msgq
and checks the tool's figures:

  - the sleeping thread's voluntary and involuntary switches: within 3 of
    what the thread read itself with getrusage(RUSAGE_THREAD) (the same
    kernel counters, read a few calls apart), and at least half its sleeps
    (a 50 us sleep may end before the thread is switched out);
  - the VP's user-level switches: at least 2 x YIELDS (two threads
    yielding to each other on one VP) and at most 16 more (starting and
    ending them);
  - the messages: exactly the workload's.

Prints TAP (bcctest.report), ending "# bcc: N passed, N failed".
"""

import os
import sys

import bcctest

HERE = os.path.dirname(os.path.realpath(__file__))
TOOL = os.path.join(HERE, "..", "asx-ctxsw")
SLEEPS, YIELDS, MESSAGES = 200, 5000, 2000


def run(load):
    want, final = bcctest.run_traced(
        [load, str(SLEEPS), str(YIELDS), str(MESSAGES)],
        lambda pid: [TOOL, "-p", str(pid), "-j", "--per", "msgq"], "/tmp/asx-ctxsw-test.err")
    threads = {t["tid"]: t for t in final["threads"]}
    errs = []
    s = threads.get(want["sleeper_tid"])
    v = threads.get(want["vp_tid"])
    procs = [p for p in final["processes"] if p["pid"] == want["pid"]]
    print("#   sleeper: tool %s, getrusage voluntary %d involuntary %d; VP: tool %s; "
          "messages: tool %s" % (s and (s["voluntary"], s["involuntary"]), want["nvcsw"],
                                 want["nivcsw"], v and v["asc"],
                                 procs and procs[0].get("messages")))
    if not s:
        errs.append("no row for the sleeping thread %d" % want["sleeper_tid"])
    else:
        # a short sleep can end before the thread is switched out: not every
        # sleep is a switch, but most are
        if abs(s["voluntary"] - want["nvcsw"]) > 3 or s["voluntary"] < SLEEPS // 2:
            errs.append("voluntary %d, getrusage %d, sleeps %d"
                        % (s["voluntary"], want["nvcsw"], SLEEPS))
        if abs(s["involuntary"] - want["nivcsw"]) > 3:
            errs.append("involuntary %d, getrusage %d" % (s["involuntary"], want["nivcsw"]))
    if not v:
        errs.append("no row for the VP %d" % want["vp_tid"])
    elif not 2 * YIELDS <= v["asc"] <= 2 * YIELDS + 16:
        errs.append("VP user-level switches %d, want %d..%d"
                    % (v["asc"], 2 * YIELDS, 2 * YIELDS + 16))
    if not procs or procs[0].get("messages") != MESSAGES:
        errs.append("messages %s, want %d" % (procs and procs[0].get("messages"), MESSAGES))
    return errs


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    return bcctest.report([bcctest.check("asx-ctxsw", run, sys.argv[1])])


if __name__ == "__main__":
    sys.exit(main())
