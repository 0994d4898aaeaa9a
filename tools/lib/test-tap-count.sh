#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1 OR BSD-2-Clause
#
# test-tap-count.sh - tools/lib/tap-count.awk, the parser tools/check.sh
# counts every runner's TAP with, on the outputs it must judge: a runner
# that stops half way or plans nothing must not look green, a skip is
# neither a pass nor a failure, a program that exits non-zero with every
# test passed fails once, a failure inside a subtest is not counted twice.
# TAP output (tools/lib/tap-expect.sh); exit 0 if every check holds.
#
# Usage: tools/lib/test-tap-count.sh
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/tap-expect.sh"
. "$here/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count NAME WANT_TOTAL [WANT_FAIL_REGEX...] <<< TAP: tap-count.awk on the
# TAP, whose last line must be "total P F S DOCS" as in WANT_TOTAL
count() {
	local name=$1 want=$2 w res=()
	shift 2
	cat >"$tmp/in"
	for w in "$@"; do
		res+=("^fail	.*$w")
	done
	tap_expect "$name" 0 "^total	${want// /	}\$" "${res[@]}" -- \
		awk -f "$here/tap-count.awk" "$tmp/in"
}

echo "TAP version 13"

count "CMocka's TAP: passes counted, a skip is neither" "2 0 1 1" <<'EOF'
1..3
ok 1 - test_a
# a diagnostic
ok 2 - test_b
ok 3 # SKIP test_c
[  PASSED  ] 2 test(s).
EOF
count "CMocka 1.1's skip ('not ok # SKIP') is neither; its abort cuts the plan" "1 2 1 1" \
	'not ok 2 - t_bad$' 'ran 3 of 5 planned' <<'EOF'
1..5
ok 1 - t_ok
not ok 2 - t_bad
# 0x1 != 0x2
# cm.c:8: error: Failure!
not ok 3 # SKIP t_skip
EOF
count "a failed test is a failure, named" "1 1 0 1" 'not ok 2 - test_b' <<'EOF'
1..2
ok 1 - test_a
not ok 2 - test_b
# Failure!
EOF
count "a runner that stops half way fails" "1 1 0 1" 'ran 1 of 3 planned tests' <<'EOF'
TAP version 13
1..3
ok 1 - first
EOF
count "no plan at all fails" "1 1 0 1" 'no plan' <<'EOF'
ok 1 - first
EOF
count "the plan at the end" "2 0 0 1" <<'EOF'
TAP version 13
ok 1 - a
ok 2 - b
1..2
# report-test: 2 passed, 0 failed
EOF
count "more tests than planned fail" "2 1 0 1" 'ran 2 of 1' <<'EOF'
1..1
ok 1 - a
ok 2 - b
EOF
count "every test skipped: nothing was tested" "0 1 2 1" 'nothing was tested' <<'EOF'
1..2
ok 1 # SKIP no module
ok 2 # SKIP no module
EOF
count "an empty plan: nothing was tested" "0 1 0 1" 'nothing was tested' <<'EOF'
1..0 # SKIP no tests
EOF
count "TODO and XFAIL are not failures, XPASS is one" "2 1 1 1" 'XPASS' <<'EOF'
1..4
not ok 1 - later # TODO not yet
ok 2 # XFAIL known
ok 3 - fine
ok 4 # XPASS fixed?
EOF
count "subtests: the leaves count; exit 1 with all passed fails once" "4 1 0 1" \
	'not ok 1 - one \(exit 1\)' <<'EOF'
TAP version 13
1..2
    # Subtest: one
    TAP version 13
    1..2
    ok 1 a
    ok 2 b
not ok 1 - one (exit 1)
    # Subtest: two
    TAP version 13
    1..2
    ok 1 a
    ok 2 b
ok 2 - two
EOF
count "subtests: a failure inside is counted once" "1 1 0 1" 'two: not ok 2 b' <<'EOF'
TAP version 13
1..1
    # Subtest: two
    1..2
    ok 1 a
    not ok 2 b
not ok 1 - two (exit 1)
EOF
count "a subtest that dies, and its runner with it" "1 2 0 1" 'ran 1 of 3' 'ran 1 of 2' <<'EOF'
TAP version 13
1..2
    # Subtest: dies
    TAP version 13
    1..3
    ok 1 a
EOF
count "Bail out! fails its document; the runner goes on" "2 1 0 1" 'Bail out! no device' <<'EOF'
TAP version 13
1..2
    TAP version 13
    1..3
    ok 1 a
    Bail out! no device
not ok 1 - first (exit 1)
    TAP version 13
    1..1
    ok 1 z
ok 2 - second
EOF
count "a '#' escaped in a name is no directive" "1 0 0 1" <<'EOF'
1..1
ok 1 - not a \# SKIP
EOF
count "documents one after the other are counted apart" "3 0 0 3" <<'EOF'
TAP version 13
1..1
ok 1 - a
TAP version 13
ok 1 - b
1..1
Linux version 6.1.0 (a kernel's console)
ok: not a test point
TAP version 13
1..1
ok 1 - c
EOF
count "a subtest with no summary point still counts" "2 0 0 2" <<'EOF'
TAP version 13
1..1
    # Subtest: x
    TAP version 13
    1..1
    ok 1 a
ok 1 - x
TAP version 13
1..1
ok 1 - y
EOF

# tap.sh's tap_subtest: a program's TAP nested under one point of its own
sub_ok() { printf 'TAP version 13\n1..2\nok 1 - a\nok 2 - b\n'; }
sub_exit() { printf '1..1\nok 1 - a\n'; return 3; }
nest() {
	tap_n=0 tap_fails=0
	echo "TAP version 13"
	tap_subtest ok sub_ok
	tap_subtest exits sub_exit
	tap_end nest
}
(nest) >"$tmp/nest" 2>&1
tap_expect "tap_subtest: its leaves and its exit status" 0 '^total	3	1	0	1$' \
	'^fail	not ok 2 - exits \(exit 3\)$' -- awk -f "$here/tap-count.awk" "$tmp/nest"
tap_expect "tap_end: the same sums" 0 '^# nest: 3 passed, 1 failed$' -- cat "$tmp/nest"

# a name with a '#' in it passes as a pass, not as a directive
esc() {
	tap_n=0 tap_fails=0
	echo "TAP version 13"
	tap_expect "one # SKIP in a name" 0 -- true
	tap_ok "and a # TODO in another"
	echo "1..$tap_n"
}
(esc) >"$tmp/esc" 2>&1
tap_expect "tap_expect and tap_ok escape a '#' in a name" 0 '^total	2	0	0	1$' -- \
	awk -f "$here/tap-count.awk" "$tmp/esc"

echo "1..$tap_n"
echo "# test-tap-count: $((tap_n - tap_fails)) passed, $tap_fails failed"
[ "$tap_fails" = 0 ]
