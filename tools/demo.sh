#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# demo.sh - the main job (`make demo`): run the experiment suite on the
# embedded default (libasx alone; asx.ko is not needed), keep the figures
# and make the report.
#
# Usage: tools/demo.sh [--quick | --full] [--runs N] [--kernel | --kernel-only]
#                      [--vm-kernel NAME] [--out DIR]
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
#
# The kernel half (`make demo-kernel`): --kernel also runs asx-bench
# sa-latency, capsule-block --activations and kstream in the test VM
# (tools/vm/kernel-bench.sh --rounds 1: asx.ko built for the VM's kernel,
# qemu TCG), --kernel-only runs only those and remakes the report with the
# results.json already there (a report of the kernel half alone if there is
# none).  --vm-kernel NAME: the kernel of the matrix booted (6.1, the
# default; 6.12, 6.12-rt).  Writes results-kernel.json (their records; its
# context says the kernel and the VM) and kernel.log, and report.html has
# the kernel figures.  When the VM run fails, results-kernel.json holds no
# records and a context saying why, the report says so and demo.sh exits 1.
# --quick and --full size the kernel half too (Documentation/experiments.rst).
# --out DIR: write into DIR instead of build/demo.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
runs=
mode=default
size=()
kernel=no
vm_kernel=6.1
out=build/demo
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) [ $# -ge 2 ] || { echo "demo.sh: --runs needs a number" >&2; exit 2; }
		runs=$2; shift 2 ;;
	--quick) mode=quick; size=(--quick); shift ;;
	--full) mode=full; size=(--full); shift ;;
	--kernel) kernel=also; shift ;;
	--kernel-only) kernel=only; shift ;;
	--vm-kernel|--out) [ $# -ge 2 ] || { echo "demo.sh: $1 needs a value" >&2; exit 2; }
		[ "$1" = --out ] && out=$2 || vm_kernel=$2; shift 2 ;;
	-h|--help) sed -n '4,/^set -euo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "demo.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$runs" ] || { [ "$mode" = full ] && runs=5 || runs=3; }

# kernel_half: the three commands in the test VM, their records in
# results-kernel.json (or a context saying why there are none), and the
# report remade with them.  Returns 1 if the VM run or the report failed.
kernel_half() {
	local k=$out/results-kernel.json log=$out/kernel.log ksize=() rc=0 t=$SECONDS
	local user=$out/results.json empty= report why
	# a guest that hangs fails the half after this long (each of up to 3 tries)
	case "$mode" in
	quick) ksize=(--quick --timeout 600) ;;
	full) ksize=(--full --timeout 2400) ;;
	*) ksize=(--timeout 1200) ;;
	esac
	echo "Kernel half: asx-bench sa-latency, capsule-block --activations and kstream" \
		"in the test VM ($vm_kernel, qemu TCG); $mode workloads"
	rm -f "$k"
	tools/vm/kernel-bench.sh --rounds 1 "${ksize[@]}" "$vm_kernel" 2>&1 |
		tee "$log" || rc=$?
	[ "$rc" -ne 0 ] || [ -s "build/kernel-bench/$vm_kernel-1.json" ] || rc=1
	if [ "$rc" -eq 0 ]; then
		cp "build/kernel-bench/$vm_kernel-1.json" "$k"
		echo "Kernel figures: $k (the VM run took $((SECONDS - t)) s)"
	else
		why=$(grep -E 'FAIL|asx-vm:|kmod-build.sh:' "$log" | tail -n 1) || true
		/usr/bin/python3 -c 'import json, sys
json.dump({"context": {"failed": sys.argv[1], "vm": {"kernel": sys.argv[2]}},
	   "records": []}, open(sys.argv[3], "w"), indent=1)' \
			"tools/vm/kernel-bench.sh exited $rc: ${why:-see $log}" "$vm_kernel" "$k"
		echo "demo.sh: the kernel half failed (exit $rc; $log): ${why:-}" >&2
	fi
	if [ ! -s "$user" ]; then
		echo "demo.sh: no $user (make demo): the report has the kernel half alone" >&2
		empty=$(mktemp)
		echo '{"context": {}, "records": []}' >"$empty"
		user=$empty
	fi
	report=$(/usr/bin/python3 tools/report/asx-report "$user" --kernel "$k" \
		-o "$out/report.html") || rc=1
	[ -z "$empty" ] || rm -f "$empty"
	[ -z "$report" ] || echo "Report: $report"
	[ "$rc" -eq 0 ]
}

mkdir -p "$out"
[ "$kernel" = only ] && { kernel_half; exit; }
rm -f "$out/results.csv" "$out/results.json" "$out/meta.json" "$out/bench.log" \
	"$out/report.html"	# meta.json: what older demos wrote
# the kernel half of an earlier run no longer matches the report: --kernel remakes it
rm -f "$out/results-kernel.json" "$out/kernel.log"
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
if [ "$kernel" = also ]; then
	[ "$rc" -eq 0 ] || echo "demo.sh: asx-bench failed (exit $rc); see $out/bench.log" >&2
	kernel_half || rc=1
	exit "$rc"
fi
if [ -s "$out/results.json" ]; then
	report=$(/usr/bin/python3 tools/report/asx-report "$out/results.json") || rc=1
	[ -z "$report" ] || echo "Report: $report"
fi
[ "$rc" -eq 0 ] || echo "demo.sh: asx-bench failed (exit $rc); see $out/bench.log" >&2
exit "$rc"
