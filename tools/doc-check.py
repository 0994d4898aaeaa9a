#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""doc-check.py - every page of Documentation/ parses as reStructuredText
with no warning or error (a malformed table, a title underline too short, a
definition with no body, a bad indent), and every :doc: role names a page
that exists.

Excerpts: a code block after the comment ".. check: excerpt PATH" (PATH
from the top of the tree) must be PATH's own lines, tabs expanded to 8
columns, and the excerpts of one file on one page must follow each other in
the file and together show all of it (only blank lines between them left
out): so a page that walks through an example file (tutorial.rst) shows the
file as it is, whole.  lib/tests/outsider/doc-examples.py does not compile
those blocks; the file is built where it lives.

Usage: tools/doc-check.py [FILE.rst ...]   (default: Documentation/*.rst)
       tools/doc-check.py --self-test

Docutils alone (Debian's python3-docutils; tools/setup.sh installs it): the
Sphinx roles and directives the pages use (:doc:, :ref:, toctree) are
registered here, :doc: checking its target.  Code blocks are not
highlighted, so a missing Pygments lexer is no error.  Prints one line per
problem, "FILE:LINE: message", then "doc-check: N pages, N problems"; exit
0 when there are none, 1 otherwise, 2 on a usage error.
"""
import glob
import io
import os
import re
import sys
import tempfile

try:
    import docutils.core
    import docutils.nodes
    from docutils.parsers.rst import Directive, directives, roles
except ImportError:
    print("doc-check: needs docutils (Debian: python3-docutils; tools/setup.sh)",
          file=sys.stderr)
    sys.exit(2)

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
problems = []
current = {"dir": "."}


def doc_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """:doc:`page` or :doc:`title <page>`: the page must exist."""
    target = text.split("<")[-1].rstrip(">").strip() if "<" in text else text.strip()
    path = os.path.join(current["dir"], target + ".rst")
    msgs = []
    if not os.path.exists(path):
        msg = inliner.reporter.error(":doc: names no page: %s (%s)" % (target, path),
                                     line=lineno)
        msgs.append(msg)
    return [docutils.nodes.literal(rawtext, text)], msgs


def plain_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    return [docutils.nodes.literal(rawtext, text)], []


class Toctree(Directive):
    has_content = True
    option_spec = {"maxdepth": directives.unchanged, "caption": directives.unchanged,
                   "hidden": directives.flag, "numbered": directives.unchanged}

    def run(self):
        for entry in self.content:
            entry = entry.strip()
            if entry and not os.path.exists(os.path.join(current["dir"], entry + ".rst")):
                problems.append("%s: toctree names no page: %s" % (current["file"], entry))
        return []


roles.register_local_role("doc", doc_role)
for r in ("ref", "manpage", "command", "file", "program", "option", "envvar"):
    roles.register_local_role(r, plain_role)
directives.register_directive("toctree", Toctree)


EXCERPT = re.compile(r"^\s*\.\. check:\s*excerpt\s+(\S+)\s*$")


def excerpt_blocks(lines):
    """(line, PATH, block lines) for each code block after ".. check: excerpt PATH"."""
    i = 0
    while i < len(lines):
        m = EXCERPT.match(lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and not (re.match(r"^\s*\.\. code-block::", lines[i]) or
                                      (lines[i].rstrip().endswith("::") and
                                       not lines[i].lstrip().startswith(".."))):
            i += 1
        base = len(lines[i]) - len(lines[i].lstrip()) if i < len(lines) else 0
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j].lstrip().startswith(":")):
            j += 1
        if j >= len(lines) or len(lines[j]) - len(lines[j].lstrip()) <= base:
            yield i + 1, m.group(1), None
            continue
        ind = len(lines[j]) - len(lines[j].lstrip())
        k = j
        while k < len(lines) and (not lines[k].strip() or
                                  len(lines[k]) - len(lines[k].lstrip()) >= ind):
            k += 1
        body = [ln[ind:] for ln in lines[j:k]]
        while body and not body[-1].strip():
            body.pop()
        yield j + 1, m.group(1), body
        i = k


def check_excerpts(path, lines):
    """Each excerpt is its file's lines, in order; together they are the file."""
    pos = {}
    for line, name, body in excerpt_blocks(lines):
        where = "%s:%d" % (path, line)
        if body is None:
            problems.append("%s: (ERROR/3) no code block after '.. check: excerpt %s'" % (where, name))
            continue
        try:
            with open(os.path.join(TOP, name), encoding="utf-8") as f:
                src = [ln.rstrip("\n").expandtabs(8).rstrip() for ln in f]
        except OSError as e:
            problems.append("%s: (ERROR/3) excerpt of %s: %s" % (where, name, e.strerror))
            continue
        at, want = pos.get(name, (0, src))
        body = [ln.rstrip() for ln in body]
        n = len(body)
        found = next((k for k in range(at, len(src) - n + 1) if src[k:k + n] == body), None)
        if found is None:
            first = next((k for k, ln in enumerate(body) if ln not in src[at:]), 0)
            problems.append("%s: (ERROR/3) not the next lines of %s: the block's line %d, %r, "
                            "is not there after line %d" % (where, name, first + 1, body[first], at))
            continue
        skipped = [k + 1 for k in range(at, found) if src[k].strip()]
        if skipped:
            problems.append("%s: (ERROR/3) the excerpts of %s leave out its lines %d-%d" %
                            (where, name, skipped[0], skipped[-1]))
        pos[name] = (found + n, src)
    for name, (at, src) in pos.items():
        rest = [k + 1 for k in range(at, len(src)) if src[k].strip()]
        if rest:
            problems.append("%s: (ERROR/3) the excerpts of %s leave out its lines %d-%d (the end)" %
                            (path, name, rest[0], rest[-1]))


def check(path):
    current["dir"] = os.path.dirname(os.path.abspath(path))
    current["file"] = path
    err = io.StringIO()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    check_excerpts(path, text.split("\n"))
    docutils.core.publish_doctree(
        text, source_path=path,
        settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": err,
                            "syntax_highlight": "none"})
    for line in err.getvalue().splitlines():
        # a report's first line is "FILE:LINE: (LEVEL/N) message"; the lines
        # after it quote the source
        if "(WARNING/" in line or "(ERROR/" in line or "(SEVERE/" in line:
            problems.append(line)


def self_test():
    """A malformed table, a short underline and a :doc: to nowhere must each
    be found; a good page must pass."""
    cases = {
        "good": ("Title\n=====\n\nSee :doc:`other`.\n\n=====  ====\na      b\n=====  ====\n", 0),
        "table": ("Title\n=====\n\n=====  ====\nlonger-than-col b\n=====  ====\n", 1),
        "underline": ("A long title\n====\n\ntext\n", 1),
        "doc": ("Title\n=====\n\nSee :doc:`nowhere`.\n", 1),
    }
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "other.rst"), "w") as f:
            f.write("Other\n=====\n")
        # excerpts of ex.c (tabs in the file, spaces on the page)
        ex = os.path.join(d, "ex.c")
        with open(ex, "w") as f:
            f.write("int f(void)\n{\n\treturn 1;\n}\n\nint g;\n")

        def page(*blocks):
            return "Title\n=====\n\n" + "".join(
                ".. check: excerpt %s\n\n.. code-block:: c\n\n%s\ntext\n\n" % (
                    ex, "".join("   %s\n" % ln for ln in b)) for b in blocks)
        fn = ["int f(void)", "{", "        return 1;", "}"]
        cases.update({
            "excerpt-whole": (page(fn, ["int g;"]), 0),
            "excerpt-changed": (page(fn[:2] + ["        return 2;", "}"], ["int g;"]), 1),
            "excerpt-gap": (page(fn[:2], ["int g;"]), 1),
            "excerpt-end": (page(fn), 1),
            "excerpt-order": (page(["int g;"], fn), 1),
        })
        for name, (text, want) in cases.items():
            p = os.path.join(d, name + ".rst")
            with open(p, "w") as f:
                f.write(text)
            del problems[:]
            check(p)
            got = 1 if problems else 0
            if got != want:
                print("doc-check: self-test: %s: %s" % (
                    name, "found nothing" if want else "flagged: %s" % problems))
                bad += 1
    del problems[:]
    print("doc-check: self-test: %d of %d cases as wanted" % (len(cases) - bad, len(cases)))
    return 1 if bad else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if any(a.startswith("-") for a in argv[1:]):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    files = argv[1:] or sorted(glob.glob(os.path.join(TOP, "Documentation", "*.rst")))
    if not files:
        print("doc-check: no pages", file=sys.stderr)
        return 2
    for f in files:
        check(f)
    for p in problems:
        print(p)
    print("doc-check: %d pages, %d problems" % (len(files), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
