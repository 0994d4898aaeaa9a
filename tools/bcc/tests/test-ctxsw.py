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

Prints ok/not ok lines and "bcc: N passed, N failed".
"""

import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.realpath(__file__))
TOOL = os.path.join(HERE, "..", "asx-ctxsw")
SLEEPS, YIELDS, MESSAGES = 200, 5000, 2000


def run(load):
    wl = subprocess.Popen([load, str(SLEEPS), str(YIELDS), str(MESSAGES)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if not wl.stdout.readline().startswith("ready"):
        wl.kill()
        return ["the workload did not start"]
    errf = open("/tmp/asx-ctxsw-test.err", "w+")
    tool = subprocess.Popen([TOOL, "-p", str(wl.pid), "-j", "--per", "msgq"],
                            stdout=subprocess.PIPE, stderr=errf, text=True)
    end = time.monotonic() + 240
    with open(errf.name) as er:
        while time.monotonic() < end and tool.poll() is None:
            if "Tracing" in er.read():
                break
            time.sleep(0.2)
    if tool.poll() is not None:
        wl.kill()
        errf.seek(0)
        return ["the tool did not attach: " + errf.read()[-2000:]]
    wl.stdin.write("go\n")
    wl.stdin.flush()
    out, _ = wl.communicate(timeout=600)
    tout, _ = tool.communicate(timeout=120)
    if wl.returncode:
        return ["workload exit %d" % wl.returncode]
    want = json.loads(out.strip().splitlines()[-1])
    final = json.loads([line for line in tout.splitlines() if line.strip()][-1])
    threads = {t["tid"]: t for t in final["threads"]}
    errs = []
    s = threads.get(want["sleeper_tid"])
    v = threads.get(want["vp_tid"])
    procs = [p for p in final["processes"] if p["pid"] == wl.pid]
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
    errs = run(sys.argv[1])
    if errs:
        print("not ok 1 - asx-ctxsw: " + "; ".join(errs))
        print("bcc: 0 passed, 1 failed")
        return 1
    print("ok 1 - asx-ctxsw")
    print("bcc: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
