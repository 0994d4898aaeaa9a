# SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1 OR BSD-2-Clause
#
# tap.sh - TAP from the shell test scripts (Documentation/testing.rst, "One
# protocol").  Source it, then:
#
#   tap_ok NAME...          "ok N - NAME"
#   tap_not_ok NAME...      "not ok N - NAME"
#   tap_subtest NAME CMD... runs CMD (a TAP runner itself): its output
#                           indented by four spaces under "# Subtest: NAME",
#                           then "ok N - NAME" when it exited 0 and
#                           tools/lib/tap-count.awk counts no failure in it,
#                           else "not ok N - NAME (exit RC)"; its counts are
#                           added to tap_sub_passed and tap_sub_failed
#   tap_end WHO             the plan "1..N" and "# WHO: N passed, N failed"
#                           (N: the points, or a subtest's leaves); returns
#                           0 when nothing failed
#
# Print "TAP version 13" first.  tap_n and tap_fails count the points, as
# tap-expect.sh's tap_expect does (they may be used together).

tap_n=${tap_n:-0}
tap_fails=${tap_fails:-0}
tap_sub_passed=0
tap_sub_failed=0
tap_sub_ok=0
tap_sub_not_ok=0
tap_lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# a '#' in a name would start a directive ("# SKIP"): TAP escapes it
tap_name() {
	local s="$*"
	printf '%s' "${s//#/\\#}"
}

tap_ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $(tap_name "$@")"
}

tap_not_ok() {
	tap_n=$((tap_n + 1))
	tap_fails=$((tap_fails + 1))
	echo "not ok $tap_n - $(tap_name "$@")"
}

tap_subtest() {
	local name=$1 out rc kind p f
	shift
	out=$(mktemp)
	echo "    # Subtest: $name"
	# line by line: a guest that dies leaves what ran on its console
	"$@" 2>&1 | tee "$out" | sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	read -r kind p f _ < <(awk -f "$tap_lib/tap-count.awk" "$out" | tail -n 1)
	rm -f "$out"
	tap_sub_passed=$((tap_sub_passed + p))
	if [ "$rc" -eq 0 ] && [ "$f" -eq 0 ]; then
		tap_sub_ok=$((tap_sub_ok + 1))
		tap_ok "$name"
		return 0
	fi
	# a program that failed without a failed test still fails once
	[ "$f" -gt 0 ] || f=1
	tap_sub_failed=$((tap_sub_failed + f))
	tap_sub_not_ok=$((tap_sub_not_ok + 1))
	tap_not_ok "$name (exit $rc)"
	return 1
}

tap_end() {
	# the leaves, as tools/check.sh counts them
	local p=$((tap_n - tap_fails - tap_sub_ok + tap_sub_passed))
	local f=$((tap_fails - tap_sub_not_ok + tap_sub_failed))
	echo "1..$tap_n"
	echo "# $1: $p passed, $f failed"
	[ "$tap_fails" -eq 0 ]
}
