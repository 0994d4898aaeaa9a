#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-kernel-browser.sh - the report's kernel half, and the report in a browser.
#
# The kernel half (asx-report --kernel, tools/demo.sh --kernel-only) from
# kernel-sample.json beside this script (no VM is booted here): the
# results-kernel.json of a real `tools/demo.sh --quick --kernel-only` run
# in the test VM on Debian's 6.1 kernel:
# its three figures drawn beside the papers' words, every kernel key on the
# page, the guest's kernel and the TCG VM said; a record set missing (no
# kstream records) and a VM that did not run (a context with "failed", no
# records) said on the page; a default report (no --kernel) says in one
# line how to get the kernel half; a kernel file missing or not records
# refused; demo.sh --kernel-only on a kernel that is not installed exits 1
# and leaves a report and a results-kernel.json that say why.
#
# Then the pages in headless Chromium (browser-check.py): the report of a
# quick real run (asx-bench --quick --runs 1 arch), with and without the
# kernel half, must render with every image decoded and a screenshot that
# is not blank; the same report with one image's PNG corrupted, with one
# truncated, and a page with nothing on it must fail the check.
#
# Usage: tools/report/test-kernel-browser.sh [BUILD_DIR]   (default build)
# TAP output; the last line is "# kernel-browser-test: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=$(cd "${1:-$top/build}" && pwd)
here=$top/tools/report
bench=$b/bin/asx-bench
report=$here/asx-report
check=$here/check-html.py
browser=$here/browser-check.py
edit=$here/edit-records.py
sample=$here/kernel-sample.json
py=/usr/bin/python3
. "$top/tools/lib/tap-expect.sh"

[ -x "$bench" ] || { echo "test-kernel-browser.sh: $bench not built (make tools)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "TAP version 13"

nimg() { grep -o '<img ' "$1" | wc -l; }

tap_expect "asx-bench --quick --runs 1 arch" 0 -- \
	"$bench" --quick --runs 1 --json-file "$dir/results.json" arch
tap_expect "the default report (no kernel half)" 0 -- \
	"$py" "$report" "$dir/results.json" -o "$dir/user.html"
tap_expect "... says in one line how to get the kernel half" 0 \
	'id="kernel"' 'is not in this report: `make demo-kernel`' -- cat "$dir/user.html"
n=$(nimg "$dir/user.html")

# the sample: three figures more, every kernel key, the VM said
tap_expect "the report with the kernel half" 0 -- \
	"$py" "$report" "$dir/results.json" --kernel "$sample" -o "$dir/kernel.html"
tap_expect "kernel half: well formed, every kernel key, $((n + 3)) valid PNGs" 0 'ok \(' -- \
	"$py" "$check" "$dir/kernel.html" "$sample" --images $((n + 3))
tap_expect "... and every key of the user half still" 0 'ok \(' -- \
	"$py" "$check" "$dir/kernel.html" "$dir/results.json"
tap_expect "... the guest's kernel, the TCG VM, the papers' words beside the plots" 0 \
	'The kernel half: asx\.ko in the test VM' '6\.1\.0-[0-9]+-amd64 \(6\.1 of the matrix\)' \
	'qemu TCG --tcg multi' 'Kernel Streams against a pipe' 'weightless' \
	'Scheduler activations: a VP blocks' 'timely notification' \
	'Whole-capsule blocking with activations' 'User 2' \
	'over the pipe' 'the activation takes [0-9.]+x the hand-off' \
	'Prio2 over prio1, synchronising: [0-9.]+x' -- cat "$dir/kernel.html"

# a record set missing: said, the other two drawn
"$py" "$edit" "$dir/no-kstream.json" "$sample" --keep 'r["bench"] != "kstream"'
tap_expect "kernel half without kstream records" 0 -- \
	"$py" "$report" "$dir/results.json" --kernel "$dir/no-kstream.json" -o "$dir/nok.html"
tap_expect "... says kstream was not measured, draws the other two" 0 'ok \(' -- \
	"$py" "$check" "$dir/nok.html" "$dir/no-kstream.json" --images $((n + 2))
tap_expect "... in words" 0 'Not measured in this run \(no kstream records' -- \
	cat "$dir/nok.html"

# the VM did not run: said, nothing drawn, still a report
cat >"$dir/failed.json" <<'EOF'
{"context": {"failed": "tools/vm/kernel-bench.sh exited 1: asx-vm: the guest crashed",
 "vm": {"kernel": "6.1"}}, "records": []}
EOF
tap_expect "kernel half of a VM that did not run" 0 -- \
	"$py" "$report" "$dir/results.json" --kernel "$dir/failed.json" -o "$dir/failed.html"
tap_expect "... says so, and why; no kernel figure drawn" 0 \
	'The kernel half did not run: no kernel records\. tools/vm/kernel-bench\.sh exited 1: asx-vm: the guest crashed' \
	'Not measured in this run \(no sa-latency records' -- cat "$dir/failed.html"
tap_expect "... well formed, $n images" 0 'ok \(' -- \
	"$py" "$check" "$dir/failed.html" "$dir/failed.json" --images "$n"

tap_expect "a kernel file that is missing: exit 1" 1 'cannot read .*none\.json' -- \
	"$py" "$report" "$dir/results.json" --kernel "$dir/none.json" -o "$dir/x.html"
"$py" "$edit" "$dir/nounit.json" "$sample" --drop unit
tap_expect "a kernel file that is not records: exit 1" 1 "no field 'unit'" -- \
	"$py" "$report" "$dir/results.json" --kernel "$dir/nounit.json" -o "$dir/x.html"
tap_expect "no report left behind by a failure" 0 -- test ! -e "$dir/x.html"

# demo.sh's kernel half on a kernel that is not there: exit 1, and says so
cp "$dir/results.json" "$dir/demo-results.json"
mkdir "$dir/demo" && cp "$dir/results.json" "$dir/demo/results.json"
tap_expect "demo.sh --kernel-only on a kernel not installed: exit 1" 1 \
	'the kernel half failed' "no kernel 'nosuch'" -- \
	"$top/tools/demo.sh" --kernel-only --vm-kernel nosuch --out "$dir/demo"
tap_expect "... its results-kernel.json says why, with no records" 0 \
	'"failed": "tools/vm/kernel-bench.sh exited 1: asx-vm: no kernel' '"records": \[\]' -- \
	cat "$dir/demo/results-kernel.json"
tap_expect "... and so does its report, made with the user half" 0 \
	'The kernel half did not run' 'arch_nproc' -- cat "$dir/demo/report.html"

# in the browser
tap_expect "browser: the default report renders, every image decoded" 0 \
	"ok \\($n images decoded; screenshot 1200 x 1600" -- "$py" "$browser" "$dir/user.html"
tap_expect "browser: the report with the kernel half" 0 \
	"ok \\($((n + 3)) images decoded" -- "$py" "$browser" "$dir/kernel.html"
# image 2's PNG: 800 bytes of its IDAT overwritten (its header, so its
# size, intact); image 3's cut in half
"$py" - "$dir/kernel.html" "$dir/corrupt.html" "$dir/truncated.html" <<'PY'
import re, sys
page = open(sys.argv[1]).read()
uris = [m.span(1) for m in re.finditer(r'src="data:image/png;base64,([^"]*)"', page)]
a, z = uris[1]
open(sys.argv[2], "w").write(page[:a + 400] + "A" * 800 + page[a + 1200:])
a, z = uris[2]
open(sys.argv[3], "w").write(page[:a + (z - a) // 2] + page[z:])
PY
tap_expect "browser: a corrupt PNG fails the check" 1 'image 2 did not decode' -- \
	"$py" "$browser" "$dir/corrupt.html"
tap_expect "browser: a truncated PNG fails the check" 1 'image 3 did not decode' -- \
	"$py" "$browser" "$dir/truncated.html"
printf '<!DOCTYPE html>\n<html><head><title>x</title></head><body></body></html>\n' \
	>"$dir/blank.html"
tap_expect "browser: a blank page fails the check" 1 'the screenshot is blank' -- \
	"$py" "$browser" "$dir/blank.html"

echo "1..$tap_n"
echo "# kernel-browser-test: $((tap_n - tap_fails)) passed, $tap_fails failed"
[ "$tap_fails" = 0 ]
