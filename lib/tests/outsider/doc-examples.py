#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""doc-examples.py OUTDIR FILE... - extract the C examples of README.md and
Documentation/*.rst that tools/install-test.sh compiles against the
installed library.

Which blocks are checked, and how:

* A C code block (``.. code-block:: c`` or a ``::`` literal block in .rst,
  a ```c fence in .md) that defines main() is a complete program: it is
  compiled, linked and run, and must exit 0 within the time limit.
* An rst comment before a block changes that: it applies to the next
  code block after it (for a ``::`` literal block, put it before the
  paragraph that ends in ``::``).  In Markdown the HTML comment
  ``<!-- check: ... -->`` does the same for the next fence:

  ``.. check: compile-only``
      a complete program that must not be run (a server, a program
      that waits for a signal): compiled and linked only.
  ``.. check: object [HEADER...]``
      a translation unit without main() (functions, declarations, a
      synopsis of prototypes): compiled with -c after
      ``#include <HEADER>`` for each HEADER given (e.g. asx/sync.h), so a
      synopsis is checked against the real prototypes.  Unused static
      functions are allowed there (-Wno-unused-function).
  ``.. check: skip``
      a block that defines main() but is deliberately not a program.
  ``.. check: excerpt PATH``
      lines of the tree's file PATH (tools/doc-check.py checks they are):
      not compiled here; the file is built where it lives (examples/kvsvc
      by tools/test-kvsvc.sh).

* Any other block (a fragment) is not checked.

Every block is compiled as written, against the installed headers only,
with -Wall -Wextra -Werror -Wno-unused-parameter (callbacks need not use
every argument) and the compiler's default -std, as in
``cc app.c $(pkg-config --cflags --libs libasx)``.

For each checked block this writes OUTDIR/<file>-<line>.c and prints
"<mode> <path> <source>:<line>" on stdout, mode one of run, link, object.
"""
import os
import re
import sys

MAIN = re.compile(r'^\s*int\s+main\s*\(', re.M)


def indent(s):
    return len(s) - len(s.lstrip(' '))


def rst_blocks(lines):
    """(line, directive, text) for each code-ish block of an .rst file."""
    pending = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r'^\s*\.\. check:\s*(.*?)\s*$', line)
        if m:
            pending = m.group(1)
            i += 1
            continue
        code = re.match(r'^\s*\.\. code-block::\s*(\S+)', line)
        literal = (not code and line.rstrip().endswith('::') and
                   not line.lstrip().startswith('..'))
        if not code and not literal:
            i += 1
            continue
        lang = code.group(1) if code else 'c?'
        base = indent(line)
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or
                                  lines[j].lstrip().startswith(':') and code):
            j += 1
        if j >= len(lines) or indent(lines[j]) <= base:
            i += 1
            continue
        body_indent = indent(lines[j])
        k = j
        body = []
        while k < len(lines) and (not lines[k].strip() or indent(lines[k]) >= body_indent):
            body.append(lines[k][body_indent:])
            k += 1
        if lang in ('c', 'c?'):
            yield j + 1, pending, '\n'.join(body).rstrip() + '\n'
        pending = None
        i = k


def md_blocks(lines):
    pending = None
    i = 0
    while i < len(lines):
        m = re.match(r'^\s*<!--\s*check:\s*(.*?)\s*-->', lines[i])
        if m:
            pending = m.group(1)
            i += 1
            continue
        f = re.match(r'^\s*```\s*(\S*)', lines[i])
        if f:
            lang = f.group(1)
            k = i + 1
            body = []
            while k < len(lines) and not re.match(r'^\s*```', lines[k]):
                body.append(lines[k])
                k += 1
            if lang == 'c':
                yield i + 2, pending, '\n'.join(body) + '\n'
            pending = None
            i = k + 1
            continue
        i += 1


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    bad = 0
    for path in sys.argv[2:]:
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
        gen = md_blocks(lines) if path.endswith('.md') else rst_blocks(lines)
        for line, directive, text in gen:
            words = (directive or '').split()
            mode = words[0] if words else None
            if mode is None:
                if not MAIN.search(text):
                    continue
                mode = 'run'
            elif mode == 'compile-only':
                mode = 'link'
            elif mode in ('skip', 'excerpt'):
                continue
            elif mode != 'object':
                print('%s:%d: unknown check directive "%s"' % (path, line, directive),
                      file=sys.stderr)
                bad += 1
                continue
            # errors point at the documentation's own lines
            text = '#line %d "%s"\n' % (line, path) + text
            if mode == 'object':
                text = ''.join('#include <%s>\n' % h for h in words[1:]) + text
            elif not MAIN.search(text):
                print('%s:%d: "%s" on a block without main()' % (path, line, directive),
                      file=sys.stderr)
                bad += 1
                continue
            name = '%s-%d.c' % (os.path.basename(path).rsplit('.', 1)[0], line)
            dst = os.path.join(out, name)
            with open(dst, 'w', encoding='utf-8') as f:
                f.write(text)
            print(mode, dst, '%s:%d' % (path, line))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
