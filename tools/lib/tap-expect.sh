# SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1 OR BSD-2-Clause
#
# tap-expect.sh - one TAP check of a command's exit status and output, for
# the test scripts that test ASX's own test runners (tools/vm/selftest.sh,
# selftests/asx/run_all_selftest.sh).  Source it, then call:
#
#   tap_expect NAME WANT_RC [WANT_REGEX...] -- COMMAND [ARG...]
#
# Runs COMMAND (stdout and stderr together) and prints "ok N NAME" when it
# exits WANT_RC and its output matches every extended WANT_REGEX; otherwise
# "not ok N NAME # why" and the last $tap_tail (default 20) lines of the
# output as TAP comments.  Counts in tap_n and tap_fails.

tap_n=0
tap_fails=0
tap_tail=${tap_tail:-20}

tap_expect() {
	local name=$1 want=$2 out rc w wants=() why=
	shift 2
	while [ "$1" != -- ]; do
		wants+=("$1")
		shift
	done
	shift
	tap_n=$((tap_n + 1))
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" != "$want" ]; then
		why="exit $rc, wanted $want"
	else
		for w in "${wants[@]}"; do
			grep -qE -- "$w" <<<"$out" && continue
			why="output lacks /$w/"
			break
		done
	fi
	if [ -n "$why" ]; then
		# a '#' in the name would start a directive: TAP escapes it
		echo "not ok $tap_n ${name//#/\\#} # $why"
		printf '%s\n' "$out" | tail -n "$tap_tail" | sed 's/^/# /'
		tap_fails=$((tap_fails + 1))
		return 1
	fi
	echo "ok $tap_n ${name//#/\\#} # exit $rc"
}
