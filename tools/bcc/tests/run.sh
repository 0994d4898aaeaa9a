#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# run.sh - the bcc tools' tests, as root where bcc works against the running
# kernel (the test VM: `tools/check.sh bcc`).
#
# Usage: tools/bcc/tests/run.sh BUILD_BCC_DIR
#
# BUILD_BCC_DIR holds the workloads (`make bcc-tests`: build/bcc). Each test
# prints a TAP document, nested here as a subtest (tools/lib/tap.sh) under
# one test point of its own; this script ends with "# bcc total: N passed,
# N failed". A test that cannot run (no bcc, not root) fails.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${1:?usage: run.sh BUILD_BCC_DIR}
bin=$dir/../bin	# asx-bench, for the activation tool
. "$here/../../lib/tap.sh"
echo "TAP version 13"
run() { tap_subtest "$@"; }

if ! /usr/bin/python3 -c 'import bcc' 2>/dev/null; then
	tap_not_ok "no bcc in /usr/bin/python3 (python3-bpfcc; tools/setup.sh installs it)"
	tap_end "bcc total"
	exit 1
fi
run asx-lockstat "$here/test-lockstat.py" "$dir/lockload"
run asx-ctxsw "$here/test-ctxsw.py" "$dir/ctxload"
run asx-qlat "$here/test-qlat.py" "$dir/qload"
run asx-salat "$here/test-salat.py" "$bin/asx-bench"
run symbols "$here/test-symbols.py" "$dir/lockload"
run newcomer "$here/test-newcomer.py" "$dir/newcomer"
run cli "$here/test-cli.sh" "$here/.."
run usdt "$here/test-usdt.py" "$dir/../lib/libasx.so.0" /bin/true
tap_end "bcc total"
