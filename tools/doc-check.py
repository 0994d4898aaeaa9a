#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""doc-check.py - every page of Documentation/ parses as reStructuredText
with no warning or error (a malformed table, a title underline too short, a
definition with no body, a bad indent), and every :doc: role names a page
that exists.

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


def check(path):
    current["dir"] = os.path.dirname(os.path.abspath(path))
    current["file"] = path
    err = io.StringIO()
    with open(path, encoding="utf-8") as f:
        text = f.read()
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
