#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-report.sh - asx-report on a small real run and on made-up figures.
#
# A quick asx-bench run (--quick --runs 1 of COMMANDS, default: every
# command) with its CSV, then the same figures plus every key of
# `asx-bench arch` made up by synth-arch.py, then only the TCP sweeps:
# each report must parse with every element closed in order, load
# nothing, hold only valid PNGs, show every key of its JSON, and say "not
# measured in this run" exactly for the figures whose keys are absent
# (check-html.py).  Bad input (no file, not JSON, not an object, a value
# not a number, a broken CSV, a bad option) must exit non-zero with a
# message.
#
# Usage: tools/report/test-report.sh [BUILD_DIR] [COMMAND...]   (default build, all)
# TAP output; the last line is "# report-test: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=$(cd "${1:-$top/build}" && pwd)
[ $# -eq 0 ] || shift
cmds=("$@")
[ ${#cmds[@]} -gt 0 ] || cmds=(all)
bench=$b/bin/asx-bench
report=$top/tools/report/asx-report
check=$top/tools/report/check-html.py
synth=$top/tools/report/synth-arch.py
py=/usr/bin/python3
. "$top/tools/lib/tap-expect.sh"

[ -x "$bench" ] || { echo "test-report.sh: $bench not built (make tools)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "TAP version 13"

# the figures of the papers' plots in asx-report: 9 from asx-bench arch's
# keys, 1 from asx-bench stream's
nfig=10

tap_expect "asx-report --help" 0 'usage: asx-report' 'RESULTS' -- "$py" "$report" --help

# a small real run; with `all`, its stderr has a progress line per command
mkdir "$dir/real"
progress=()
[ "${cmds[*]}" != all ] ||
	progress=('^\[1/[0-9]+\] [a-z-]+ +done in [0-9]+ s, elapsed [0-9]+ s, about [0-9]+ s left$')
tap_expect "asx-bench --quick --runs 1 ${cmds[*]}" 0 "${progress[@]}" -- \
	"$bench" --quick --runs 1 --json-file "$dir/real/results.json" \
	--csv "$dir/real/results.csv" "${cmds[@]}"
tap_expect "report from the real run" 0 "$dir/real/report.html" -- \
	"$py" "$report" "$dir/real/results.json"
read -r real_arch real_stream < <("$py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(k.startswith("arch_") for k in d), int(d.get("mp_gbps") is not None))' \
	"$dir/real/results.json" 2>/dev/null)
n=${real_stream:-0}
if [ "${real_arch:-0}" = 0 ]; then
	# no arch command yet: only the stream figure is drawn (with stream)
	tap_expect "real run: well formed, every key, $((nfig - n)) figures not measured" 0 \
		'ok \(' -- "$py" "$check" "$dir/real/report.html" "$dir/real/results.json" \
		--missing $((nfig - n)) --images "$n"
else
	tap_expect "real run: well formed, every key, valid PNGs" 0 'ok \(' -- \
		"$py" "$check" "$dir/real/report.html" "$dir/real/results.json"
fi

# every arch key, made up, beside the real figures; one figure left null
mkdir "$dir/synth"
cp "$dir/real/results.csv" "$dir/synth/results.csv"
"$py" "$synth" --nproc 2 --merge "$dir/real/results.json" \
	--csv "$dir/synth/results.csv" >"$dir/synth/results.json"
sed -i 's/"arch_mp_tcp_conn16_mbps": [0-9.]*/"arch_mp_tcp_conn16_mbps": null/' \
	"$dir/synth/results.json"
cat >"$dir/synth/meta.json" <<'EOF'
{"cpu": "Test CPU <&> 9000", "nproc": 2, "kernel": "6.1.0-test", "libasx": "0.1.0",
 "date": "2026-01-01T00:00:00Z", "runs": 1, "mode": "quick", "seconds": 12}
EOF
printf '[1/2] arch           done in 100 s, elapsed 100 s, about 5 s left\narch: pe-sweep done in 60.5 s\n' \
	>"$dir/synth/bench.log"
tap_expect "report with every arch key (made up)" 0 -- \
	"$py" "$report" "$dir/synth/results.json" -o "$dir/synth/out.html"
tap_expect "every arch key: well formed, all keys, $((nfig - 1 + n)) valid PNGs" 0 'ok \(' -- \
	"$py" "$check" "$dir/synth/out.html" "$dir/synth/results.json" --missing $((1 - n)) \
	--images $((nfig - 1 + n))
tap_expect "the machine, escaped, and the log's durations" 0 \
	'Test CPU &lt;&amp;&gt; 9000' '6\.1\.0-test' 'arch: pe-sweep' -- cat "$dir/synth/out.html"
tap_expect "the paper's result beside this run's" 0 'about 9 times below CP' \
	'CP over LP, TCP' 'This run' -- cat "$dir/synth/out.html"

# only the TCP sweeps: the TCP throughput and speed-up figures drawn, the
# other 8 not measured
mkdir "$dir/tcp"
"$py" "$synth" --nproc 2 --tcp-only >"$dir/tcp/results.json"
tap_expect "report with only the TCP sweeps" 0 -- \
	"$py" "$report" "$dir/tcp/results.json"
tap_expect "TCP sweeps only: 2 plots, $((nfig - 2)) figures not measured" 0 'ok \(' -- \
	"$py" "$check" "$dir/tcp/report.html" "$dir/tcp/results.json" \
	--missing $((nfig - 2)) --images 2

# an empty object is a (poor) run, not an error
echo '{}' >"$dir/empty.json"
tap_expect "an empty run: every figure not measured" 0 -- \
	"$py" "$report" "$dir/empty.json" -o "$dir/empty.html"
tap_expect "... and the page is well formed" 0 'ok \(' -- \
	"$py" "$check" "$dir/empty.html" "$dir/empty.json" --missing "$nfig" --images 0

# bad input
tap_expect "no such file: exit 1" 1 '^asx-report: cannot read .*nonexistent' -- \
	"$py" "$report" "$dir/nonexistent.json"
printf '{"a": 1,' >"$dir/trunc.json"
tap_expect "truncated JSON: exit 1" 1 'is not valid JSON' -- "$py" "$report" "$dir/trunc.json"
echo '[1, 2]' >"$dir/list.json"
tap_expect "a JSON array: exit 1" 1 'expected one JSON object' -- "$py" "$report" "$dir/list.json"
echo '{"x": "fast"}' >"$dir/str.json"
tap_expect "a value not a number: exit 1" 1 "figure 'x' is not a number" -- \
	"$py" "$report" "$dir/str.json"
echo 'just,two' >"$dir/bad.csv"
tap_expect "a broken CSV: exit 1" 1 'expected command,key,value,unit' -- \
	"$py" "$report" "$dir/empty.json" --csv "$dir/bad.csv" -o "$dir/x.html"
tap_expect "a named CSV that is missing: exit 1" 1 'cannot read' -- \
	"$py" "$report" "$dir/empty.json" --csv "$dir/none.csv" -o "$dir/x.html"
tap_expect "an unknown option: exit 2" 2 'unrecognized arguments' -- \
	"$py" "$report" --bogus
tap_expect "no report left behind by a failure" 0 -- test ! -e "$dir/x.html"

echo "1..$tap_n"
echo "# report-test: $((tap_n - tap_fails)) passed, $tap_fails failed"
[ "$tap_fails" = 0 ]
