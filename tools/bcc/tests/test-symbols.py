#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""test-symbols.py - asxbcc.Symbols names the addresses of exited processes.

Usage: test-symbols.py LOCKLOAD

asx-lockstat -c names each lock's last call site.  The process may exit
between the tool's last look at it and the final table, and the last call
site may be one the tool never named while the process lived (CI saw
"0x55a3d811eb81" for lockload's thread_b).  This starts LOCKLOAD (it waits
for "go"), lets Symbols see it alive once by naming an address in libc,
ends it, and then asks for the names of thread_a and thread_b (in the
executable, never looked up before): both must be named.  An address of a
process never seen alive must stay a number.

Prints TAP (bcctest.report), ending "# bcc: N passed, N failed".
"""

import os
import sys

import bcc

import bcctest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), ".."))
import asxbcc  # noqa: E402


def mappings(pid):
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fl = line.split(None, 5)
            if len(fl) == 6:
                lo, hi = (int(x, 16) for x in fl[0].split("-"))
                out.append((lo, hi, fl[1], int(fl[2], 16), fl[5].strip()))
    return out


def run(load):
    path = os.path.realpath(load)
    funcs = dict(bcc.BPF.get_user_functions_and_addresses(path, "^thread_[ab]$"))
    if set(funcs) != {b"thread_a", b"thread_b"}:
        return ["no thread_a/thread_b in %s: %s" % (path, funcs)]
    wl = bcctest.start_workload([load, "mutex", "1", "0"])
    try:
        maps = mappings(wl.pid)
        base = min(lo - off for lo, _, _, off, p in maps if p == path)
        libc = sorted({p for _, _, _, _, p in maps if "/libc.so" in p})
        if len(libc) != 1:
            return ["not one libc mapped in lockload: %s" % maps]
        lbase = min(lo - off for lo, _, _, off, p in maps if p == libc[0])
        getpid = dict(bcc.BPF.get_user_functions_and_addresses(libc[0], "^getpid$"))
        if b"getpid" not in getpid:
            return ["no getpid in %s" % libc[0]]
        syms = asxbcc.Symbols(bcc.BPF)
        first = syms.name(wl.pid, lbase + getpid[b"getpid"])
    finally:
        wl.kill()
        wl.wait()
    errs = []
    print("#   getpid while alive: %r" % first)
    if first.startswith("0x") or "[libc" not in first:
        errs.append("libc address named %r while alive" % first)
    for fn, vaddr in sorted(funcs.items()):
        fn = fn.decode()
        got = syms.name(wl.pid, base + vaddr + 4)
        print("#   %s+0x4 after exit: %r" % (fn, got))
        if got != "%s+0x4 [%s]" % (fn, os.path.basename(path)):
            errs.append("%s+0x4 named %r after the process exited" % (fn, got))
    never = asxbcc.Symbols(bcc.BPF).name(wl.pid, base + funcs[b"thread_a"])
    if never != "0x%x" % (base + funcs[b"thread_a"]):
        errs.append("an address of a process never seen alive named %r" % never)
    return errs


def main():
    if len(sys.argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    return bcctest.report([bcctest.check("Symbols after exit", run, sys.argv[1])])


if __name__ == "__main__":
    sys.exit(main())
