#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""test-lockstat.py - asx-lockstat against workloads with a known answer.

Usage: test-lockstat.py LOCKLOAD [KIND...]
       test-lockstat.py LOCKLOAD --overhead

For each kind, runs LOCKLOAD (tools/bcc/tests/lockload.c, linked with the
libasx.so under test) and asx-lockstat -p on it, and checks the tool's row
for the workload's object against what the workload measured itself:

  - acquisitions: exactly the workload's count (the tool sees every
    release, every wake-up);
  - contended: at least half the rounds, at most all of them (B may
    come late, once in a while, and find the object free);
  - wait and hold totals: within 15 % of the workload's own, plus a slack
    per event for the probes' own cost (SLACK_US, 300 us in the TCG VM);
    a kind whose only misses are these totals is measured once more (a
    loaded host slows the probes), and the second run decides.

Prints TAP, a test point per kind, ending "# bcc: N passed, N failed".

With --overhead instead of kinds, measures what the tool costs: lockload's
uncontended lock/unlock loop, median of 5 runs, without and with the tool
attached (and with -c), and prints them and the cost per pair (two USDT
probes fire per pair; -c adds a uprobe at asx_mutex_lock's entry).
"""

import json
import os
import re
import sys

import bcctest

HERE = os.path.dirname(os.path.realpath(__file__))
TOOL = os.path.join(HERE, "..", "asx-lockstat")
ROUNDS = int(os.environ.get("LOCKSTAT_ROUNDS", "100"))
HOLD_US = int(os.environ.get("LOCKSTAT_HOLD_US", "2000"))
SLACK_US = int(os.environ.get("LOCKSTAT_SLACK_US", "300"))
BENCH_ROUNDS = int(os.environ.get("LOCKSTAT_BENCH_ROUNDS", "200000"))
# "mutex+c": mutex with -c, whose row must name the workload's call site
KINDS = ["mutex", "rdlock", "wrlock", "asc_mutex", "cond", "sem", "barrier", "mutex+c"]
# kinds whose every round B contends; barrier arrivals count both threads
ACQ_PER_ROUND = {"mutex": 2, "rdlock": 1, "wrlock": 2, "asc_mutex": 2, "cond": 1, "sem": 1,
                 "barrier": 2}
HOLDS = {"mutex", "wrlock", "asc_mutex", "rdlock"}


def near(got, want, events):
    return abs(got - want) <= 0.15 * want + events * SLACK_US * 1000


def run_kind(load, name):
    kind, _, opt = name.partition("+")
    extra = ["-" + opt] if opt else []
    want, final = bcctest.run_traced(
        [load, kind, str(ROUNDS), str(HOLD_US)],
        lambda pid: [TOOL, "-p", str(pid), "-j", "-k", kind, "-n", "1000"] + extra,
        "/tmp/asx-lockstat-test.err")
    rows = [r for r in final["locks"] if r["lock"] == want["object"] and r["kind"] == kind]
    if len(rows) != 1:
        return ["%d rows for %s %s in %s" % (len(rows), kind, want["object"], final["locks"])]
    r = rows[0]
    print("#   %s: tool acq %d cont %d wait %d ns hold %s ns; workload acq %d wait %d ns "
          "hold %d ns" % (kind, r["acq"], r["cont"], r["wait_total"], r["hold_total"],
                          want["acquisitions"], want["wait_sum"], want["hold_sum"]))
    errs = []
    if opt == "c" and not re.match(r"thread_[ab]\+0x[0-9a-f]+ \[lockload\]$", r["caller"] or ""):
        errs.append("caller %r, want thread_a or thread_b in lockload" % r["caller"])
    if opt != "c" and r["caller"] is not None:
        errs.append("a caller (%r) without -c" % r["caller"])
    # the workload counts its own (a late B may skip a cond wait)
    if r["acq"] != want["acquisitions"]:
        errs.append("acq %d, workload %d" % (r["acq"], want["acquisitions"]))
    if want["acquisitions"] < 0.5 * ACQ_PER_ROUND[kind] * ROUNDS:
        errs.append("the workload made %d acquisitions, want about %d"
                    % (want["acquisitions"], ACQ_PER_ROUND[kind] * ROUNDS))
    if not 0.5 * ROUNDS <= r["cont"] <= ROUNDS:
        errs.append("cont %d, want 0.5-1 x %d" % (r["cont"], ROUNDS))
    if not near(r["wait_total"], want["wait_sum"], ROUNDS):
        errs.append(bcctest.TIMING + "wait_total %d ns, workload %d ns"
                    % (r["wait_total"], want["wait_sum"]))
    if kind in HOLDS:
        if r["hold_n"] + r["untimed"] != r["acq"] or r["untimed"] > ROUNDS // 20:
            errs.append("holds timed %d, untimed %d of %d" % (r["hold_n"], r["untimed"], r["acq"]))
        if not near(r["hold_total"], want["hold_sum"], r["acq"]):
            errs.append(bcctest.TIMING + "hold_total %d ns, workload %d ns"
                        % (r["hold_total"], want["hold_sum"]))
    return errs


def bench(load, attach, extra=()):
    wl = bcctest.start_workload([load, "bench", str(BENCH_ROUNDS), "0"])
    tool = None
    if attach:
        try:
            tool = bcctest.start_tool([TOOL, "-p", str(wl.pid), "-j"] + list(extra),
                                      "/tmp/asx-lockstat-bench.err")
        except bcctest.Fail:
            wl.kill()
            raise
    wl.stdin.write("go\n")
    wl.stdin.flush()
    out, _ = wl.communicate()
    if tool:
        tool.communicate()
    return json.loads(out)["ns_per_pair"]


def overhead(load):
    runs = 5
    base = sorted(bench(load, False) for _ in range(runs))[runs // 2]
    traced = sorted(bench(load, True) for _ in range(runs))[runs // 2]
    callers = sorted(bench(load, True, ["-c"]) for _ in range(runs))[runs // 2]
    print("asx-lockstat overhead: uncontended asx_mutex lock+unlock, median of %d runs of %d"
          % (runs, BENCH_ROUNDS))
    print("  without the tool        %10.1f ns/pair" % base)
    print("  with the tool           %10.1f ns/pair: +%.1f ns (two USDT probes)"
          % (traced, traced - base))
    print("  with the tool -c        %10.1f ns/pair: +%.1f ns (two USDT probes, a uprobe)"
          % (callers, callers - base))
    return 0


def main():
    if len(sys.argv) >= 3 and sys.argv[2] == "--overhead":
        return overhead(sys.argv[1])
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    return bcctest.report([bcctest.check("asx-lockstat " + kind, run_kind, sys.argv[1], kind)
                           for kind in sys.argv[2:] or KINDS])


if __name__ == "__main__":
    sys.exit(main())
