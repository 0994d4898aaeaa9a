#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-cli.sh - what every bcc tool says when it cannot trace: -h, not root,
# no probes in the library, no such process, a bad option; and that it has
# an example file. Run as root.
#
# Usage: tools/bcc/tests/test-cli.sh TOOLS_BCC_DIR
# TAP output, ending "# bcc: N passed, N failed".
set -uo pipefail

dir=${1:?usage: test-cli.sh TOOLS_BCC_DIR}
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/nobody.sh"
# nobody runs copies: the tree may be in a directory nobody cannot enter
nobody_dir=$(mktemp -d)
trap 'rm -rf "$nobody_dir"' EXIT
chmod 755 "$nobody_dir"
echo "TAP version 13"
nobody_stage "$nobody_dir/bcc" "$dir"/asx-* "$dir"/asxbcc.py || exit 1
passed=0
failed=0
n=0

# expect NAME WANT_RC WANT_TEXT CMD...: CMD exits WANT_RC, its output has WANT_TEXT
expect() {
	local name=$1 want_rc=$2 want=$3 out rc
	shift 3
	n=$((n + 1))
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq "$want_rc" ] && grep -qF -- "$want" <<<"$out"; then
		echo "ok $n - $name"
		passed=$((passed + 1))
	else
		echo "not ok $n - $name: exit $rc (want $want_rc), output lacks '$want':"
		sed 's/^/#   /' <<<"$out" | tail -n 5
		failed=$((failed + 1))
	fi
}

for t in "$dir"/asx-*; do
	case "$t" in *.txt) continue ;; esac
	name=$(basename "$t")
	expect "$name -h" 0 "examples:" "$t" -h
	expect "$name as nobody" 1 "must be run as root" nobody_run "$nobody_dir/bcc/$name"
	# the tools of libasx's probes take -l
	if "$t" -h | grep -q -- '--lib'; then
		expect "$name on a program without probes" 1 "has no USDT probes" \
			"$t" --lib /bin/true
	fi
	expect "$name -p of no process" 1 "no process 999999999" "$t" -p 999999999
	expect "$name with a bad interval" 2 "must be positive" "$t" 0
	# (its man page is checked by tools/check.sh's install stage)
	expect "$name has an example file" 0 "" test -s "$dir/${name}_example.txt"
done
echo "1..$n"
echo "# bcc: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
