#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""check-html.py - check a report asx-report wrote (for test-report.sh).

Usage: check-html.py REPORT.html RESULTS.json [--missing N] [--images N]

Checks that the page parses with every element closed in order (void
elements aside), that it loads nothing (every src is a data: URI, no
href leaves the page), that every <img> is a PNG whose chunks' CRCs are
right, that the key of every record of RESULTS.json is in the page as a
<code> cell,
and, if asked, the number of figures "not measured in this run" and of
images.  Prints one line per problem; exits 1 if there was one.
"""
import argparse
import base64
import html.parser
import json
import struct
import sys
import zlib

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


class Strict(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.errors = []
        self.images = []
        self.codes = set()
        self.text = []
        self.in_code = 0

    def where(self):
        return "line %d" % self.getpos()[0]

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("src", "href", "data", "srcset"):
            v = a.get(name)
            if v is None:
                continue
            if name == "src" and tag == "img" and v.startswith("data:image/png;base64,"):
                continue
            if name == "href" and v.startswith("#"):
                continue
            self.errors.append("%s: <%s %s=%.60r> loads something" % (self.where(), tag,
                                                                       name, v))
        if tag in ("script", "link", "iframe", "object"):
            self.errors.append("%s: <%s> in a self-contained page" % (self.where(), tag))
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "code":
            self.in_code += 1
            self.cur = []
        if tag not in VOID:
            self.stack.append((tag, self.where()))

    def handle_startendtag(self, tag, attrs):
        if tag not in VOID:
            self.errors.append("%s: <%s/> is not a void element" % (self.where(), tag))
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in VOID:
            self.errors.append("%s: </%s> closes a void element" % (self.where(), tag))
            return
        if not self.stack or self.stack[-1][0] != tag:
            self.errors.append("%s: </%s> does not close the open <%s>" % (
                self.where(), tag, self.stack[-1][0] if self.stack else "(nothing)"))
            return
        self.stack.pop()
        if tag == "code":
            self.in_code -= 1
            self.codes.add("".join(self.cur))

    def handle_data(self, data):
        self.text.append(data)
        if self.in_code:
            self.cur.append(data)


def png_ok(uri):
    """'' if @uri is a data: URI of a well-formed PNG, else why not."""
    prefix = "data:image/png;base64,"
    if not uri.startswith(prefix):
        return "not a PNG data: URI"
    try:
        b = base64.b64decode(uri[len(prefix):], validate=True)
    except ValueError as e:
        return "bad base64: %s" % e
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        return "no PNG signature"
    i, chunks = 8, []
    while i < len(b):
        if i + 12 > len(b):
            return "truncated chunk"
        n, kind = struct.unpack(">I4s", b[i:i + 8])
        body = b[i + 8:i + 8 + n]
        if len(body) != n or i + 12 + n > len(b):
            return "truncated %s chunk" % kind
        crc, = struct.unpack(">I", b[i + 8 + n:i + 12 + n])
        if zlib.crc32(kind + body) != crc:
            return "bad CRC in %s chunk" % kind
        chunks.append(kind)
        i += 12 + n
    if not chunks or chunks[0] != b"IHDR" or chunks[-1] != b"IEND" or b"IDAT" not in chunks:
        return "chunks not IHDR ... IDAT ... IEND"
    w, h = struct.unpack(">II", b[16:24])
    if not w or not h:
        return "empty image"
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("report")
    ap.add_argument("results")
    ap.add_argument("--missing", type=int)
    ap.add_argument("--images", type=int)
    a = ap.parse_args()
    with open(a.report, encoding="utf-8") as f:
        page = f.read()
    with open(a.results, encoding="utf-8") as f:
        keys = [r["key"] for r in json.load(f)["records"]]
    p = Strict()
    p.feed(page)
    p.close()
    errs = list(p.errors)
    if p.stack:
        errs.append("never closed: %s" % ", ".join("<%s> (%s)" % t for t in p.stack))
    if not page.lstrip().lower().startswith("<!doctype html>"):
        errs.append("no <!DOCTYPE html>")
    for n, uri in enumerate(p.images, 1):
        why = png_ok(uri)
        if why:
            errs.append("image %d: %s" % (n, why))
    absent = [k for k in keys if k not in p.codes]
    if absent:
        errs.append("%d keys not in the report: %s" % (len(absent), ", ".join(absent[:10])))
    text = "".join(p.text)
    nmiss = text.count("Not measured in this run")
    if a.missing is not None and nmiss != a.missing:
        errs.append("%d figures not measured, expected %d" % (nmiss, a.missing))
    if a.images is not None and len(p.images) != a.images:
        errs.append("%d images, expected %d" % (len(p.images), a.images))
    for e in errs:
        print("check-html: %s: %s" % (a.report, e))
    if not errs:
        print("check-html: %s: ok (%d images, %d keys, %d not measured)"
              % (a.report, len(p.images), len(keys), nmiss))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
