#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# run.sh - the bcc tools' tests, as root where bcc works against the running
# kernel (the test VM: `tools/check.sh bcc`).
#
# Usage: tools/bcc/tests/run.sh BUILD_BCC_DIR
#
# BUILD_BCC_DIR holds the workloads (`make bcc-tests`: build/bcc). Each test
# prints ok/not ok lines and "bcc: N passed, N failed"; this script ends with
# "bcc total: N passed, N failed". A test that cannot run (no bcc, not root) fails.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${1:?usage: run.sh BUILD_BCC_DIR}
bin=$dir/../bin	# asx-bench, for the activation tool
passed=0
failed=0

run() {
	local name=$1 out p f rc
	shift
	out=$(mktemp)
	echo "# $name"
	"$@" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	read -r p f < <(sed -n 's/^bcc: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$out")
	rm -f "$out"
	if [ -z "$p" ]; then
		echo "not ok - $name ended without its summary (exit $rc)"
		failed=$((failed + 1))
		return
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exit $rc"
		failed=$((failed + 1))
	fi
}

if ! /usr/bin/python3 -c 'import bcc' 2>/dev/null; then
	echo "not ok - no bcc in /usr/bin/python3 (python3-bpfcc; tools/setup.sh installs it)"
	echo "bcc total: 0 passed, 1 failed"
	exit 1
fi
run asx-lockstat "$here/test-lockstat.py" "$dir/lockload"
run asx-ctxsw "$here/test-ctxsw.py" "$dir/ctxload"
run asx-qlat "$here/test-qlat.py" "$dir/qload"
run asx-salat "$here/test-salat.py" "$bin/asx-bench"
run symbols "$here/test-symbols.py" "$dir/lockload"
run newcomer "$here/test-newcomer.py" "$dir/newcomer"
run cli "$here/test-cli.sh" "$here/.."
echo "bcc total: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
