#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
"""synth-arch.py - made-up figures for every key `asx-bench arch` reports.

Usage: synth-arch.py [--nproc N] [--tcp-only] [--merge RESULTS.json] [--csv CSV]

Prints one JSON object (asx-bench's flat form) holding every key of the
threading-architecture experiment, with plausible invented values (CP
above MP above LP), for testing asx-report before or without a real
run: throughput and speed-up at 1..N PEs and 2N, 4N; the white-box
figures per message at N; the connection and map-lock sweeps; the
ratios; the ttcp pair.  --tcp-only leaves out UDP and everything but the
TCP sweeps.  --merge adds the figures of a real run; --csv also writes
the invented keys as asx-bench's CSV rows (command "arch") to CSV.
THE VALUES ARE NOT MEASUREMENTS.
"""
import argparse
import json
import sys


def keys(nproc, tcp_only):
    pes = sorted(set(range(1, nproc + 1)) | {2 * nproc, 4 * nproc})
    peak = {"cp": 370.0, "mp": 130.0, "lp": 40.0}
    d = {}
    for arch in ("lp", "cp", "mp"):
        for asc in ("", "_asc"):
            for proto in (("tcp",) if tcp_only else ("tcp", "udp")):
                for xdr in ("", "_xdr"):
                    base = (peak[arch] * (0.3 if xdr else 1) * (1.2 if proto == "udp" else 1)
                            * (1.1 if asc else 1))
                    cfg = "arch_%s%s_%s%s" % (arch, asc, proto, xdr)
                    for pe in pes:
                        eff = min(pe, nproc) ** (0.9 if arch != "lp" else 0.4)
                        if pe > nproc:
                            eff *= 0.97 if arch != "lp" else 0.8
                        d["%s_mbps_pe%d" % (cfg, pe)] = round(base / nproc * eff, 3)
                        d["%s_speedup_pe%d" % (cfg, pe)] = round(eff, 3)
                    if tcp_only:
                        continue
                    v = {"lp": 2.1, "cp": 0.01, "mp": 0.05}[arch]
                    d[cfg + "_vcsw_per_msg"] = v
                    d[cfg + "_icsw_per_msg"] = round(v / 10 + 0.002, 4)
                    d[cfg + "_csw_per_msg"] = round(v * 1.1 + 0.002, 4)
                    if asc:
                        d[cfg + "_uswitch_per_msg"] = round(v * 3, 3)
                    d[cfg + "_lock_ns_per_msg"] = {"lp": 9000.0, "cp": 35.0, "mp": 300.0}[arch]
    if tcp_only:
        return d
    conns = [1, 2, 4, 8, 16]
    for c in conns:
        d["arch_cp_tcp_conn%d_mbps" % c] = round(40.0 * min(c, nproc), 3)
        d["arch_mp_tcp_conn%d_mbps" % c] = round(60.0 * (1 + 0.1 * min(c, nproc)), 3)
        for i, lock in enumerate(("none", "mutex", "rwlock", "rcu")):
            d["arch_mp_tcp_map_%s_conn%d_mbps" % (lock, c)] = round(
                60.0 * (1 + 0.05 * i) * (1 + 0.1 * min(c, nproc)), 3)
    d.update({"cp_over_lp_tcp": 6.5, "mp_over_lp_tcp": 2.4, "cp_over_lp_tcp_xdr": 2.1,
              "mp_over_lp_tcp_xdr": 1.9, "lp_asc_over_lp_pthread": 1.6,
              "ttcp_task_tcp_mbps": 900.0, "ttcp_msg_tcp_mbps": 1500.0,
              "ttcp_task_udp_mbps": 800.0, "ttcp_msg_udp_mbps": 1700.0,
              "ttcp_msg_over_task_tcp": 1.667, "ttcp_msg_over_task_udp": 2.125,
              "arch_nproc": nproc})
    return d


def unit(k):
    if k.endswith("_mbps") or "_mbps_pe" in k:
        return "Mbit/s"
    if k.endswith("_lock_ns_per_msg"):
        return "ns/msg"
    if k.endswith("_per_msg"):
        return "/msg"
    return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--tcp-only", action="store_true")
    ap.add_argument("--merge")
    ap.add_argument("--csv")
    a = ap.parse_args()
    d = {}
    if a.merge:
        with open(a.merge, encoding="utf-8") as f:
            d.update(json.load(f))
    synth = keys(a.nproc, a.tcp_only)
    d.update(synth)
    if a.csv:
        with open(a.csv, "a", encoding="utf-8") as f:
            for k, v in synth.items():
                f.write("arch,%s,%g,%s\n" % (k, v, unit(k)))
    json.dump(d, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
