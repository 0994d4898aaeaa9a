#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""test-qlat.py - asx-qlat against messages that wait a known time.

Usage: test-qlat.py QLOAD [--no-kernel]

Runs QLOAD (tools/bcc/tests/qload.c) under asx-qlat -p -j -H: ROUNDS
messages of 100 bytes, each waiting WAIT_US in an asx_msgq, then in a
user-space Stream's head read queue, then (unless --no-kernel) in a
/dev/asx Stream's head read queue. For each queue the tool's row must have
exactly ROUNDS messages in and out and 100 bytes each, the Stream's queue
named "head/r", no water-mark stops, and a residence total within 15 % of
the workload's own clock (after the put, before the get) plus 300 us per
message for the probes in the emulated VM.

Prints TAP (bcctest.report), ending "# bcc: N passed, N failed".
"""

import os
import sys

import bcctest

HERE = os.path.dirname(os.path.realpath(__file__))
TOOL = os.path.join(HERE, "..", "asx-qlat")
ROUNDS, WAIT_US, SLACK_US = 100, 2000, 300


def check(name, row, want_sum, errs):
    if not row:
        errs.append("%s: no row" % name)
        return
    print("#   %s: %s in %d out %d bytes %d res %d ns (workload %d ns) full %s"
          % (name, row["name"], row["enqueued"], row["dequeued"], row["bytes_in"],
             row["residence_total"], want_sum, row["full_waits"]))
    if row["enqueued"] != ROUNDS or row["dequeued"] != ROUNDS:
        errs.append("%s: in %d out %d, want %d" % (name, row["enqueued"], row["dequeued"],
                                                   ROUNDS))
    if row["bytes_in"] != 100 * ROUNDS or row["bytes_out"] != 100 * ROUNDS:
        errs.append("%s: bytes in %d out %d, want %d" % (name, row["bytes_in"],
                                                         row["bytes_out"], 100 * ROUNDS))
    if row["full_waits"]:
        errs.append("%s: %d water-mark stops, want 0" % (name, row["full_waits"]))
    if abs(row["residence_total"] - want_sum) > 0.15 * want_sum + ROUNDS * SLACK_US * 1000:
        errs.append(bcctest.TIMING + "%s: residence %d ns, workload %d ns"
                    % (name, row["residence_total"], want_sum))


def run(load, kernel):
    want, final = bcctest.run_traced(
        [load, str(ROUNDS), str(WAIT_US)] + (["kernel"] if kernel else []),
        lambda pid: [TOOL, "-p", str(pid), "-j", "-H", "-n", "1000"] + ([] if kernel else ["-U"]),
        "/tmp/asx-qlat-test.err")
    errs = []
    rows = final["queues"]
    msgq = [r for r in rows if r["kind"] == "msgq" and r["queue"] == want["msgq"]]
    stream = [r for r in rows if r["kind"] == "stream" and r["name"] == "head/r"]
    check("msgq", msgq[0] if msgq else None, want["msgq_sum"], errs)
    check("user Stream", stream[0] if len(stream) == 1 else None, want["stream_sum"], errs)
    if kernel:
        ks = [r for r in rows if r["kind"] == "kernel" and r["enqueued"] == ROUNDS
              and r["name"].endswith("/r")]
        check("kernel Stream", ks[0] if len(ks) == 1 else None, want["kernel_sum"], errs)
    if not final.get("histograms_ns_log2", {}).get("user"):
        errs.append("no residence histogram with -H")
    return errs


def main():
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    kernel = "--no-kernel" not in sys.argv
    return bcctest.report([bcctest.check("asx-qlat", run, sys.argv[1], kernel)])


if __name__ == "__main__":
    sys.exit(main())
