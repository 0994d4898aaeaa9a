#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""edit-records.py - make test inputs for asx-report from real asx-bench runs.

Usage: edit-records.py OUT.json IN.json... [--keep EXPR] [--set EXPR FIELD=JSON]
                       [--dup-key] [--dup-measurement] [--drop FIELD] [--context JSON]
                       [--flat-off]

Merges the runs IN.json (their records, the first's context), keeps the
records for which the Python expression EXPR over r (the record) is true,
sets FIELD of the first record matching EXPR, and writes the object with
its flat view made again from the records.  The faults the checks must
catch: --drop FIELD takes a field out of the first record, --dup-key adds
a copy of the first record under its own key, --dup-measurement the same
measurement under a new key, --flat-off a flat view that disagrees with
the first record.  For tools/report/test-report.sh.
"""
import argparse
import copy
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--keep")
    ap.add_argument("--set", nargs=2, action="append", default=[], metavar=("EXPR", "F=V"))
    ap.add_argument("--drop")
    ap.add_argument("--dup-key", action="store_true")
    ap.add_argument("--dup-measurement", action="store_true")
    ap.add_argument("--flat-off", action="store_true")
    ap.add_argument("--context")
    a = ap.parse_args()
    docs = [json.load(open(p, encoding="utf-8")) for p in a.inputs]
    ctx = docs[0]["context"]
    recs, seen = [], set()
    for d in docs:
        for r in d["records"]:
            if r["key"] not in seen:
                seen.add(r["key"])
                recs.append(r)
    if a.keep:
        recs = [r for r in recs if eval(a.keep, {}, {"r": r})]
    for expr, fv in a.set:
        f, v = fv.split("=", 1)
        hit = [r for r in recs if eval(expr, {}, {"r": r})]
        if not hit:
            sys.exit("edit-records: no record where %s" % expr)
        hit[0][f] = json.loads(v)
    if a.context:
        ctx = dict(ctx, **json.loads(a.context))
    doc = {"context": ctx, "records": recs}
    doc.update((r["key"], r.get("value")) for r in recs)
    if a.drop:
        del recs[0][a.drop]
    if a.dup_key:
        recs.append(copy.deepcopy(recs[0]))
    if a.dup_measurement:
        twin = copy.deepcopy(recs[0])
        twin["key"] += "_again"
        recs.append(twin)
        doc[twin["key"]] = twin["value"]
    if a.flat_off:
        doc[recs[0]["key"]] = (recs[0]["value"] or 0) * 2 + 1
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
