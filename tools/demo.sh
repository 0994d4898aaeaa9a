#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# demo.sh - the main job (`make demo`): run the experiment suite on the
# embedded default (libasx alone; asx.ko is not needed) and keep the figures.
#
# Usage: tools/demo.sh [--runs N] [--quick]
#
# Output: tables on stdout; build/demo/results.json (one JSON object of
# figures), build/demo/results.csv (command,key,value,unit).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
runs=5
quick=()
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=$2; shift 2 ;;
	--quick) quick=(--quick); shift ;;
	-h|--help) sed -n '3,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done

out=build/demo
mkdir -p "$out"
rm -f "$out/results.csv"
bench=build/bin/asx-bench

echo "ASX demo: libasx $("$bench" --version | sed 's/.*libasx \(.*\))/\1/'), $(nproc) CPUs, $(uname -r)"
echo "Every figure is a median of $runs runs; each baseline runs in the same process."
echo
"$bench" --runs "$runs" "${quick[@]}" --csv "$out/results.csv" \
	--json-file "$out/results.json" all
echo
echo "Figures: $out/results.json and $out/results.csv"
