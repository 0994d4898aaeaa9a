#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""test-newcomer.py - asx-lockstat, asx-qlat and asx-ctxsw together on one
program of a newcomer's (tools/bcc/tests/newcomer.c), written from
Documentation/bcc.rst and the man pages, with the answers it knows.

Usage: test-newcomer.py NEWCOMER

The three tools attach to one run at once (`-p PID -j`, bcc compiling each
once: the cheapest in the emulated VM) and end with it; asx-qlat prints a
table every second (`-T 1`), the others one at the end. Checked:

  - asx-lockstat: the program's asx_mutex row: acquisitions and contended
    acquisitions exactly (2 x ROUNDS, ROUNDS);
  - asx-qlat: the program's asx_msgq rows summed over every interval's
    table: messages in and out and bytes in and out exactly (nothing lost
    between two tables), at least one wait on a full queue; tables before
    the last not final, the last final;
  - asx-ctxsw: the sleeping thread's voluntary switches within 3 of its own
    getrusage(RUSAGE_THREAD) and at least half its sleeps; the process's
    messages through asx_msgq (--per msgq) exactly.

Prints TAP (bcctest.report), ending "# bcc: N passed, N failed".
"""

import json
import os
import sys

import bcctest

HERE = os.path.dirname(os.path.realpath(__file__))
TOOLS = os.path.join(HERE, "..")
ROUNDS, MESSAGES, SLEEPS = 20, 4000, 50


def run(prog):
    wl = bcctest.start_workload([prog, str(ROUNDS), str(MESSAGES), str(SLEEPS)])
    tools = {}
    try:
        for name, extra in (("asx-lockstat", []), ("asx-qlat", ["-T", "1"]),
                            ("asx-ctxsw", ["--per", "msgq"])):
            tools[name] = bcctest.start_tool(
                [os.path.join(TOOLS, name), "-p", str(wl.pid), "-j"] + extra,
                "/tmp/asx-newcomer-%s.err" % name)
    except bcctest.Fail:
        wl.kill()
        for t in tools.values():
            t.kill()
        raise
    wl.stdin.write("go\n")
    wl.stdin.flush()
    out, _ = wl.communicate(timeout=600)
    if wl.returncode:
        raise bcctest.Fail("the program exited %d" % wl.returncode)
    want = bcctest.last_json(out)
    got = {}
    for name, t in tools.items():
        tout, _ = t.communicate(timeout=120)
        try:
            got[name] = bcctest.last_json(tout)
        except bcctest.Fail as e:
            raise bcctest.Fail("%s (exit %s): %s" % (name, t.returncode, e))
        got[name]["all"] = [json.loads(line) for line in tout.splitlines() if line.strip()]
    return want, got


def check_lockstat(want, final):
    rows = [r for r in final["locks"] if r["lock"] == want["mutex"] and r["kind"] == "mutex"]
    print("#   asx-lockstat: %s; the program: acq %d cont %d"
          % (rows and {k: rows[0][k] for k in ("acq", "cont", "wait_n")}, want["acq"],
             want["cont"]))
    if len(rows) != 1:
        return ["%d rows for the mutex %s" % (len(rows), want["mutex"])]
    errs = []
    if rows[0]["acq"] != want["acq"]:
        errs.append("acquisitions %d, want %d" % (rows[0]["acq"], want["acq"]))
    if rows[0]["cont"] != want["cont"]:
        errs.append("contended %d, want %d" % (rows[0]["cont"], want["cont"]))
    return errs


def check_qlat(want, final):
    tables = final["all"]
    rows = [r for t in tables for r in t["queues"] if r["queue"] == want["msgq"]]
    errs = []
    if [t["final"] for t in tables] != [False] * (len(tables) - 1) + [True]:
        errs.append("final flags %s" % [t["final"] for t in tables])
    if not rows:
        return errs + ["no row for the queue %s" % want["msgq"]]
    if any(r["kind"] != "msgq" for r in rows):
        errs.append("kinds %s" % sorted(set(r["kind"] for r in rows)))
    r = {k: sum(x[k] for x in rows) for k in ("enqueued", "dequeued", "bytes_in",
                                              "bytes_out", "full_waits")}
    print("#   asx-qlat: %d tables, %d with the queue, summed %s; the program: %d messages, "
          "%d bytes" % (len(tables), len(rows), r, want["messages"], want["bytes"]))
    for k, v in (("enqueued", want["messages"]), ("dequeued", want["messages"]),
                 ("bytes_in", want["bytes"]), ("bytes_out", want["bytes"])):
        if r[k] != v:
            errs.append("%s %s, want %d" % (k, r[k], v))
    if not r["full_waits"]:
        errs.append("no wait on a full queue (high water 4 messages, slower consumer)")
    return errs


def check_ctxsw(want, final):
    threads = {t["tid"]: t for t in final["threads"]}
    s = threads.get(want["sleeper_tid"])
    procs = [p for p in final["processes"] if p["pid"] == want["pid"]]
    print("#   asx-ctxsw: sleeper %s, getrusage %d/%d; messages %s"
          % (s and (s["voluntary"], s["involuntary"]), want["nvcsw"], want["nivcsw"],
             procs and procs[0].get("messages")))
    errs = []
    if not s:
        errs.append("no row for the sleeping thread %d" % want["sleeper_tid"])
    elif abs(s["voluntary"] - want["nvcsw"]) > 3 or s["voluntary"] < want["sleeps"] // 2:
        errs.append("voluntary %d, getrusage %d, sleeps %d"
                    % (s["voluntary"], want["nvcsw"], want["sleeps"]))
    if not procs or procs[0].get("messages") != want["messages"]:
        errs.append("messages %s, want %d" % (procs and procs[0].get("messages"),
                                              want["messages"]))
    return errs


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    try:
        want, got = run(sys.argv[1])
    except bcctest.Fail as e:
        return bcctest.report([("newcomer: the three tools on one run", [str(e)])])
    return bcctest.report([
        ("asx-lockstat on a program of one's own", check_lockstat(want, got["asx-lockstat"])),
        ("asx-qlat on a program of one's own", check_qlat(want, got["asx-qlat"])),
        ("asx-ctxsw on a program of one's own", check_ctxsw(want, got["asx-ctxsw"])),
    ])


if __name__ == "__main__":
    sys.exit(main())
