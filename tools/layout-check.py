#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""layout-check.py - libasx's public types against the committed lib/libasx.abi.xml.

Usage: tools/layout-check.py [--update] [--cc CC] [--baseline FILE] [--top DIR]

Compiles a probe that includes every public header (lib/include/asx/*.h,
and uapi/linux/asx.h through them) with -g into a shared object, has
libabigail's abidw write its ABI (every type, reachable from a function
or not: --load-all-types; those of the public headers kept) as XML, and
compares that with the committed baseline using abidiff
--non-reachable-types: a struct or union that changed size, a member
that moved, grew, appeared or went, a changed enumerator or typedef
fails the check the way a changed symbol fails tools/abi-check.sh: an
application compiled against the old header would read the wrong bytes.
abidiff's report says what changed.  When the change is meant (a new
struct, a new opaque type, SONAME bump), regenerate the baseline with
--update and say so in the commit.  The symbols themselves are
tools/abi-check.sh's (lib/libasx.map).

--top DIR takes the headers from DIR's lib/include and uapi instead of
this tree's (tools/test-layout-check.sh checks a changed copy).  The
probe is compiled with cc (GCC), not $CC: the baseline is GCC's.
Needs abidw and abidiff (Debian: abigail-tools; tools/setup.sh).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

# abidiff's exit status: bit 0 an error, bit 1 a usage error, bit 2 an ABI
# change, bit 3 an incompatible one
ABIDIFF_ERROR = 3


def probe(cc, top, tmp):
    """The probe shared object of @top's public headers; returns its path."""
    hdrs = sorted(h for h in os.listdir(os.path.join(top, 'lib/include/asx')) if h.endswith('.h'))
    src, so = os.path.join(tmp, 'probe.c'), os.path.join(tmp, 'probe.so')
    with open(src, 'w') as f:
        f.write(''.join('#include <asx/%s>\n' % h for h in hdrs))
        f.write('int asx_layout_probe;\n')
    # paths relative to the tree: the baseline is the same in every clone
    subprocess.run([cc, '-std=gnu11', '-D_GNU_SOURCE', '-I', os.path.join(top, 'lib/include'),
                    '-I', os.path.join(top, 'uapi'), '-g', '-O0', '-fPIC', '-shared',
                    '-fno-eliminate-unused-debug-types', '-fdebug-prefix-map=%s=.' % top,
                    '-fdebug-prefix-map=%s=.' % tmp, src, '-o', so], check=True)
    return so


def abidw(so, top, out):
    subprocess.run(['abidw', '--load-all-types', '--drop-private-types',
                    '--headers-dir', os.path.join(top, 'lib/include/asx'),
                    '--headers-dir', os.path.join(top, 'uapi/linux'),
                    '--no-corpus-path', '--no-comp-dir-path', '--short-locs',
                    '--type-id-style', 'hash', '--out-file', out, so], check=True)


def public_types(xml):
    """The complete asx_* structs and unions the XML describes."""
    names = set()
    with open(xml, encoding='utf-8') as f:
        for m in re.finditer(r"<(class|union)-decl name='(asx_\w+)'([^>]*)>", f.read()):
            if "is-declaration-only='yes'" not in m.group(3):
                names.add('%s %s' % ('struct' if m.group(1) == 'class' else 'union', m.group(2)))
    return names


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--update', action='store_true', help='rewrite the baseline')
    # not $CC: the baseline is GCC's description of the headers (clang's
    # debug information leaves out some types the headers declare)
    ap.add_argument('--cc', default='cc', help='the compiler of the probe (default cc)')
    ap.add_argument('--baseline', default=os.path.join(here, 'lib/libasx.abi.xml'))
    ap.add_argument('--top', default=here, help='the tree whose headers to check')
    a = ap.parse_args()
    top = os.path.abspath(a.top)
    for tool in ('abidw', 'abidiff'):
        if not shutil.which(tool):
            print('layout-check: no %s (Debian: abigail-tools; run tools/setup.sh)' % tool,
                  file=sys.stderr)
            return 1
    rel = os.path.relpath(a.baseline, here)
    with tempfile.TemporaryDirectory() as tmp:
        new = os.path.join(tmp, 'libasx.abi.xml')
        abidw(probe(a.cc, top, tmp), top, new)
        n = len(public_types(new))
        if not n:
            print('layout-check: no asx_* struct found in the probe', file=sys.stderr)
            return 1
        if a.update:
            shutil.copyfile(new, a.baseline)
            print('layout-check: wrote %s (%d public structs and unions)' % (rel, n))
            return 0
        if not os.path.exists(a.baseline):
            print('layout-check: %s missing: run tools/layout-check.py --update' % rel,
                  file=sys.stderr)
            return 1
        r = subprocess.run(['abidiff', '--non-reachable-types', '--no-added-syms',
                            a.baseline, new], capture_output=True, text=True)
    if r.returncode & ABIDIFF_ERROR:
        print(r.stdout + r.stderr, end='', file=sys.stderr)
        print('layout-check: abidiff failed (exit %d)' % r.returncode, file=sys.stderr)
        return 1
    if r.returncode:
        print(r.stdout, end='', file=sys.stderr)
        print('layout-check: the public types differ from %s (abidiff above): an ABI change '
              'for programs built against the old headers.  If it is meant, run '
              'tools/layout-check.py --update and commit the file.' % rel, file=sys.stderr)
        return 1
    print('layout-check: %d public structs and unions, as in %s (abidiff)' % (n, rel))
    return 0


if __name__ == '__main__':
    sys.exit(main())
