#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""asxrecords - read and check the records asx-bench writes (--json).

asx-bench writes one JSON object: "context" (the machine and the run),
"records" (one object per measurement, its dimensions as fields) and the
flat view derived from them (each record's "key": its value).  The format
is in Documentation/benchmarks.rst, "Records".  asx-report imports this
module; tools/check.sh and tools/report/test-report.sh run it:

  asxrecords.py check RESULTS.json [--require KEY...] [--finite]

prints "ok (N records, N commands)" or one line per problem and exits 1
(2 for a usage error).  --require: these flat keys must be there;
--finite: every value must be a finite number >= 0.
"""
import argparse
import json
import math
import re
import sys

# in every record, null where a dimension does not apply
CORE = ("bench", "arch", "sched", "proto", "xdr", "pes", "metric", "value", "unit",
        "runs", "key")
# written only where they apply
OPTIONAL = ("experiment", "impl", "lock", "conns", "threads", "size", "layer_threads")
DIMENSIONS = ("bench", "experiment", "arch", "sched", "proto", "xdr", "pes", "conns",
              "threads", "size", "lock", "impl", "metric", "layer_threads")
# lock: a connection map's strategy, or the kind of lock time (mutex, cond)
CHOICES = {"arch": ("lp", "cp", "mp", "fp"), "sched": ("pthread", "asc"),
           "proto": ("tcp", "udp"), "lock": ("none", "mutex", "rwlock", "rcu", "cond")}
# 002's ttcp: api and net name what was measured, sockbuf the queues asked
# for; sndbuf_got and rcvbuf_got are what getsockopt then said (no dimension)
OPTIONAL += ("api", "net", "sockbuf", "sndbuf_got", "rcvbuf_got")
DIMENSIONS += ("api", "net", "sockbuf")
CHOICES.update({"api": ("c", "asx"), "net": ("loopback", "netns")})
# benchmarks.rst's table of units; "x" is a ratio
UNITS = ("Mbit/s", "MB/s", "GB/s", "msg/s", "ops/s", "yields/s", "1/s", "ns", "us", "s",
         "ns/msg", "switches/msg", "switches/op", "msgs", "CPUs", "x")
NAME_RE = re.compile(r"^[a-z0-9_]+$")
VIEW = ("context", "records")


class InputError(Exception):
    pass


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def check_record(i, r):
    """The problems of record @i alone."""
    where = "record %d" % i
    if not isinstance(r, dict):
        return ["%s: not an object" % where]
    if isinstance(r.get("key"), str):
        where += " (%s)" % r["key"]
    bad = ["%s: no field '%s'" % (where, f) for f in CORE if f not in r]
    bad += ["%s: unknown field '%s'" % (where, f) for f in r
            if f not in CORE and f not in OPTIONAL]

    def want(field, ok, what, nullable=True):
        if field not in r or (nullable and r[field] is None):
            return
        if not ok(r[field]):
            bad.append("%s: %s is %r, not %s" % (where, field, r[field], what))

    def name(v):
        return isinstance(v, str) and bool(NAME_RE.match(v))

    want("bench", lambda v: isinstance(v, str) and v != "", "a command's name", False)
    want("metric", name, "a name of [a-z0-9_]", False)
    want("key", name, "a name of [a-z0-9_]", False)
    want("unit", lambda v: v in UNITS, "one of benchmarks.rst's units", False)
    want("value", lambda v: _number(v) and math.isfinite(v), "a number or null")
    want("runs", lambda v: isinstance(v, list) and v != [] and
         all(x is None or _number(x) for x in v), "a list of numbers or null")
    want("xdr", lambda v: isinstance(v, bool), "true, false or null")
    for f, choices in CHOICES.items():
        want(f, lambda v, c=choices: v in c, "one of %s" % ", ".join(choices))
    for f in ("pes", "conns", "threads", "size", "layer_threads"):
        want(f, _count, "a count > 0")
    for f in ("sockbuf", "sndbuf_got", "rcvbuf_got"):
        want(f, _count, "a count > 0")
    for f in ("experiment", "impl"):
        want(f, name, "a name of [a-z0-9_]")
    if "proto" in r and "xdr" in r and (r["proto"] is None) != (r["xdr"] is None):
        bad.append("%s: xdr is set exactly when proto is (%r, %r)"
                   % (where, r["proto"], r["xdr"]))
    return bad


def dims(r):
    return tuple(r.get(f) for f in DIMENSIONS)


def check(doc):
    """Every problem of asx-bench's JSON object @doc, as lines."""
    if not isinstance(doc, dict):
        return ["expected one JSON object, found %s" % type(doc).__name__]
    bad = []
    if not isinstance(doc.get("context"), dict):
        bad.append("no \"context\" object")
    recs = doc.get("records")
    if not isinstance(recs, list):
        return bad + ["no \"records\" list"]
    keys, seen, units = {}, {}, {}
    for i, r in enumerate(recs):
        p = check_record(i, r)
        bad += p
        if p:
            continue
        k = r["key"]
        if k in keys:
            bad.append("record %d (%s): the key of record %d again" % (i, k, keys[k]))
        keys.setdefault(k, i)
        d = dims(r)
        if d in seen:
            bad.append("record %d (%s): the same measurement as record %d (%s)"
                       % (i, k, seen[d], recs[seen[d]]["key"]))
        seen.setdefault(d, i)
        units.setdefault((r["bench"], r["metric"]), {}).setdefault(r["unit"], []).append(i)
        if k in VIEW:
            bad.append("record %d: key %s is a name the object uses" % (i, k))
        elif k not in doc:
            bad.append("record %d (%s): not in the flat view" % (i, k))
        elif doc[k] != r["value"] and not (
                _number(doc[k]) and _number(r["value"]) and
                math.isclose(doc[k], r["value"], rel_tol=1e-9)):
            bad.append("record %d (%s): value %r, flat view %r" % (i, k, r["value"], doc[k]))
    # a metric of a command has one unit: the one most of its records have
    for (bench, metric), by in units.items():
        if len(by) < 2:
            continue
        usual = max(by, key=lambda u: len(by[u]))
        for u, idx in by.items():
            bad += ["record %d (%s): unit %s, but %s %s is in %s in %d other records"
                    % (i, recs[i]["key"], u, bench, metric, usual, len(by[usual]))
                    for i in idx if u != usual]
    extra = [k for k in doc if k not in VIEW and k not in keys]
    bad += ["flat key %s has no record" % k for k in extra]
    return bad


def read(path):
    """The JSON object at @path, unchecked; InputError if it is not
    readable or not JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputError("cannot read %s: %s" % (path, e.strerror or e))
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise InputError("%s is not valid JSON: %s" % (path, e))
    return doc


def load(path):
    """(context, records) of the asx-bench JSON at @path; InputError if it
    is not readable, not JSON or not what asx-bench writes."""
    doc = read(path)
    bad = check(doc)
    if bad:
        more = " (and %d more)" % (len(bad) - 3) if len(bad) > 3 else ""
        raise InputError("%s: %s%s" % (path, "; ".join(bad[:3]), more))
    return doc["context"], doc["records"]


def flat(records):
    """The flat view: key -> value."""
    return {r["key"]: r["value"] for r in records}


def select(records, **want):
    """The records whose fields have the values given (a tuple: any of them)."""
    out = []
    for r in records:
        for f, v in want.items():
            got = r.get(f)
            if isinstance(v, tuple) and got not in v or not isinstance(v, tuple) and got != v:
                break
        else:
            out.append(r)
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog="asxrecords.py",
                                 description="Check the records of asx-bench's JSON.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="check RESULTS.json")
    c.add_argument("results")
    c.add_argument("--require", nargs="+", default=[], metavar="KEY")
    c.add_argument("--finite", action="store_true")
    a = ap.parse_args(argv)
    try:
        doc = read(a.results)
    except InputError as e:
        print("asxrecords: %s" % e)
        return 1
    bad = check(doc)
    recs = doc.get("records") if not bad else []
    view = flat(recs)
    bad += ["missing key %s" % k for k in a.require if k not in view]
    if a.finite:
        bad += ["%s is %r, not a finite number >= 0" % (k, v) for k, v in view.items()
                if v is None or v < 0]
    for line in bad:
        print("asxrecords: %s" % line)
    if bad:
        return 1
    print("ok (%d records, %d commands)" % (len(recs), len({r["bench"] for r in recs})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
