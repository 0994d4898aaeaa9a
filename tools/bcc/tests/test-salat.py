#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""test-salat.py - asx-salat against asx-bench sa-latency (asx.ko loaded).

Usage: test-salat.py ASX_BENCH

Runs asx-salat -j -H, then asx-bench sa-latency --json (one VP blocking in
read() again and again, a spare taking over each time), stops the tool and
checks its row for the bench's activation group:

  - blocks: at least the bench's rounds; unblocks within 2 of the blocks
    (every block ends with the VP running again);
  - upcalls: at least half the blocks (one upcall may tell several);
  - the median block-to-upcall latency (the log2 histogram's median slot)
    within a factor of 4 of the bench's own median, block to spare running,
    which spans it (the syscall's entry and the return to user space
    besides);
  - wake-up-to-run latencies timed for most unblocks.

Prints TAP (bcctest.report), ending "# bcc: N passed, N failed".
"""

import json
import os
import signal
import subprocess
import sys

import bcctest

HERE = os.path.dirname(os.path.realpath(__file__))
TOOL = os.path.join(HERE, "..", "asx-salat")


def median_slot(slots):
    total = sum(slots.values())
    seen = 0
    for s in sorted(slots, key=int):
        seen += slots[s]
        if 2 * seen >= total:
            return int(s)
    return None


def run(bench):
    tool = bcctest.start_tool([TOOL, "-j", "-H"], "/tmp/asx-salat-test.err")
    b = subprocess.run([bench, "sa-latency", "--json", "--quick"], capture_output=True,
                       text=True, timeout=600)
    tool.send_signal(signal.SIGINT)
    out, _ = tool.communicate(timeout=120)
    med = (json.loads(b.stdout) if b.returncode == 0 else {}).get("sa_block_to_spare_ns")
    if not med:
        raise bcctest.Fail("asx-bench sa-latency gave no figure: %s %s" % (b.stdout, b.stderr))
    final = bcctest.last_json(out)
    rows = sorted(final["groups"], key=lambda r: r["blocks"], reverse=True)
    if not rows:
        return ["no group at all"]
    errs = []
    r = rows[0]
    ms = median_slot(final.get("histograms_ns_log2", {}).get("upcall", {}))
    lo, hi = ((1 << ms) >> 1, (1 << ms) - 1) if ms else (0, 0)
    print("#   group %d: blocks %d upcalls %d unblocks %d, block-to-upcall avg %s ns, "
          "median in %d..%d ns; rerun avg %s ns; bench median %d ns"
          % (r["group"], r["blocks"], r["upcalls"], r["unblocks"], r["upcall_avg"], lo, hi,
             r["rerun_avg"], med))
    if r["blocks"] < 100:
        errs.append("only %d blocks" % r["blocks"])
    if abs(r["unblocks"] - r["blocks"]) > 2:
        errs.append("unblocks %d, blocks %d" % (r["unblocks"], r["blocks"]))
    if r["upcalls"] < r["blocks"] // 2:
        errs.append("upcalls %d for %d blocks" % (r["upcalls"], r["blocks"]))
    if not ms or hi < med / 4 or lo > med * 4:
        errs.append("block-to-upcall median %d..%d ns, bench %d ns" % (lo, hi, med))
    if r["rerun_n"] < r["unblocks"] // 2:
        errs.append("wake-up to run timed %d times of %d" % (r["rerun_n"], r["unblocks"]))
    return errs


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    return bcctest.report([bcctest.check("asx-salat vs asx-bench sa-latency", run,
                                         sys.argv[1])])


if __name__ == "__main__":
    sys.exit(main())
