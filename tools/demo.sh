#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# demo.sh - the main job (`make demo`): run the experiment suite on the
# embedded default (libasx alone; asx.ko is not needed), keep the figures
# and make the report.
#
# Usage: tools/demo.sh [--quick | --full] [--runs N]
#
# Default: every command's default workloads, medians of 3 runs; about
# 5 minutes on 2 CPUs.  --quick: smoke-test workloads (asx-bench --quick).
# --full: the papers' full sweeps (asx-bench --full), medians of 5 runs;
# much longer.  --runs N overrides the number of runs.
#
# Output: tables on stdout, a progress line per command on stderr, and in
# build/demo/: results.json (the run's context, one record per measurement
# and the flat keys derived from them; Documentation/benchmarks.rst,
# "Records"), results.csv (command,key,value,unit, for spreadsheets),
# bench.log (asx-bench's stderr) and report.html (tools/report/asx-report:
# the papers' figures from this run, self-contained; open it in a browser).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
runs=
mode=default
size=()
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) [ $# -ge 2 ] || { echo "demo.sh: --runs needs a number" >&2; exit 2; }
		runs=$2; shift 2 ;;
	--quick) mode=quick; size=(--quick); shift ;;
	--full) mode=full; size=(--full); shift ;;
	-h|--help) sed -n '4,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$runs" ] || { [ "$mode" = full ] && runs=5 || runs=3; }

out=build/demo
mkdir -p "$out"
rm -f "$out/results.csv" "$out/results.json" "$out/meta.json" "$out/bench.log" \
	"$out/report.html"	# meta.json: what older demos wrote
bench=build/bin/asx-bench
version=$("$bench" --version | sed 's/.*libasx \(.*\))/\1/')

echo "ASX demo: libasx $version, $(nproc) CPUs, $(uname -r); $mode workloads"
echo "Every figure is a median of $runs runs; each baseline runs in the same process."
echo
t0=$SECONDS
rc=0
# tables on stdout; stderr (progress, errors) to the terminal and bench.log
{ "$bench" --runs "$runs" "${size[@]}" --csv "$out/results.csv" \
	--json-file "$out/results.json" all 2>&1 1>&3 | tee "$out/bench.log" >&2; } 3>&1 ||
	rc=$?
took=$((SECONDS - t0))

echo
echo "Figures: $out/results.json and $out/results.csv (asx-bench took $took s)"
if [ -s "$out/results.json" ]; then
	report=$(/usr/bin/python3 tools/report/asx-report "$out/results.json") || rc=1
	[ -z "$report" ] || echo "Report: $report"
fi
[ "$rc" -eq 0 ] || echo "demo.sh: asx-bench failed (exit $rc); see $out/bench.log" >&2
exit "$rc"
