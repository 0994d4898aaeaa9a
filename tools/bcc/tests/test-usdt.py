#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""test-usdt.py - asxbcc.usdt_probes(), bcc's USDT enumeration, against
readelf's reading of the same notes, and its errors.

Usage: test-usdt.py LIBASX_SO PROGRAM_WITHOUT_PROBES

Every probe of provider asx that `readelf -n` lists in LIBASX_SO, with
its arguments, and no other; a missing file, a file that is not ELF and
a program without probes refused with the messages the tools print.
Needs bcc (python3-bpfcc), not root.  Prints TAP (bcctest.report),
ending "# bcc: N passed, N failed".
"""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import asxbcc  # noqa: E402
import bcctest  # noqa: E402


def readelf_probes(path, provider="asx"):
    """{name: arguments} of @provider's probes as readelf -n prints them
    (the fewest arguments over a probe's locations)."""
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    probes, prov, name = {}, None, None
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("Provider:"):
            prov, name = line.split(None, 1)[1], None
        elif line.startswith("Name:"):
            name = line.split(None, 1)[1]
            if prov == provider:
                probes.setdefault(name, None)
        elif line.startswith("Arguments:") and prov == provider and name:
            n = len(line.split()[1:])
            probes[name] = n if probes[name] is None else min(n, probes[name])
    return {k: v or 0 for k, v in probes.items()}


def same_as_readelf(lib):
    want, got = readelf_probes(lib), asxbcc.usdt_probes(lib)
    print("#   %s: readelf %d probes, bcc %d" % (lib, len(want), len(got)))
    if not want:
        return ["readelf lists no asx probe in %s: built without <sys/sdt.h>?" % lib]
    errs = []
    for n in sorted(set(want) | set(got)):
        if want.get(n) != got.get(n):
            errs.append("%s: readelf %s, bcc %s" % (n, want.get(n), got.get(n)))
    return errs


def refused(path, wanted, check=False):
    """The ToolError usdt_probes (check_probes when @check) raises for
    @path must hold @wanted."""
    try:
        if check:
            asxbcc.check_probes(path, ["mutex_acquired"])
        else:
            asxbcc.usdt_probes(path)
    except asxbcc.ToolError as e:
        return [] if wanted in str(e) else ["said '%s', not '%s'" % (e, wanted)]
    return ["%s accepted" % path]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lib, noprobes = sys.argv[1], sys.argv[2]
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as text:
        text.write("not an ELF file\n")
        text.flush()
        return bcctest.report([
            bcctest.check("usdt_probes: the probes readelf lists", same_as_readelf, lib),
            bcctest.check("usdt_probes: a program without probes has none",
                          lambda: [] if asxbcc.usdt_probes(noprobes) == {} else
                          ["probes found in %s" % noprobes]),
            bcctest.check("check_probes: no probes refused", refused, noprobes,
                          "has no USDT probes", True),
            bcctest.check("usdt_probes: a missing file refused", refused,
                          "/nonexistent/libasx.so.0", "cannot read /nonexistent/libasx.so.0"),
            bcctest.check("usdt_probes: not an ELF file refused", refused, text.name,
                          "is not a 64-bit little-endian ELF file"),
        ])


if __name__ == "__main__":
    sys.exit(main())
