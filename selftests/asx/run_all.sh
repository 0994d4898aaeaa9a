#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run_all.sh - run every built ASX selftest and sum up.
#
# Usage: selftests/asx/run_all.sh DIR
#
# Runs each executable DIR/*_test in turn (kselftest_harness.h programs)
# and prints one TAP document: each program's TAP output and diagnostics
# as a subtest (indented by four spaces, TAP 14), summed up by an "ok N -
# NAME" or "not ok N - NAME" line of its own; it reads each program's
# closing line "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N".
# Ends with
#
#	# selftests: N passed, N failed
#
# (tests summed over all binaries; a skipped test is neither) and exits 1 if
# any test failed, if a binary crashed, exited non-zero or printed no Totals
# line, if it ran fewer tests than it planned, or if it skipped every test
# (exit 4: nothing was tested); 2 if DIR holds no tests.
set -uo pipefail

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'
	[ $# -eq 1 ] && exit 0
	exit 2
fi
dir=$1

shopt -s nullglob
bins=()
for b in "$dir"/*_test; do
	[ -f "$b" ] && [ -x "$b" ] && bins+=("$b")
done
if [ ${#bins[@]} -eq 0 ]; then
	echo "run_all.sh: no executable *_test in '$dir' (run 'make selftests')" >&2
	printf 'TAP version 13\n1..0 # SKIP no tests\n# selftests: 0 passed, 0 failed\n'
	exit 2
fi

passed=0
failed=0
skipped=0
bad=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT

totals_re='^# Totals: pass:([0-9]+) fail:([0-9]+) xfail:([0-9]+) xpass:([0-9]+) skip:([0-9]+) error:([0-9]+)$'

echo "TAP version 13"
echo "1..${#bins[@]}"
n=0
for b in "${bins[@]}"; do
	name=$(basename "$b")
	n=$((n + 1))
	nbad=${#bad[@]}
	echo "# selftests: asx: $name"
	echo "    # Subtest: $name"
	t0=$SECONDS
	# stderr too: kselftest writes its failure and TH_LOG lines there;
	# line by line, so that a guest that dies shows where
	"$b" 2>&1 | tee "$out" | sed -u 's/^/    /'
	rc=${PIPESTATUS[0]}
	echo "# $name: exit $rc after $((SECONDS - t0)) s"
	line=$(grep -E "$totals_re" "$out" | tail -n1)
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$out" | head -n1)
	if [ -z "$line" ] || [ -z "$plan" ]; then
		echo "# $name: exit $rc without a plan or a Totals line (crashed?)"
		failed=$((failed + 1))
		bad+=("$name")
		echo "not ok $n - $name (exit $rc)"
		continue
	fi
	read -r p f xf xp s e < <(sed -E "s/$totals_re/\1 \2 \3 \4 \5 \6/" <<<"$line")
	# an expected failure passes, an unexpected pass or an error fails
	p=$((p + xf))
	f=$((f + xp + e))
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	echo "# $name: $p passed, $f failed, $s skipped"
	if [ $((p + f + s)) -ne "$plan" ]; then
		echo "# $name: ran $((p + f + s)) of $plan tests"
		bad+=("$name")
		[ "$f" -eq 0 ] && failed=$((failed + 1))
	elif [ "$f" -eq 0 ] && [ "$p" -eq 0 ] && [ "$s" -gt 0 ]; then
		# exit 4 (KSFT_SKIP); kselftest_harness.h alone would exit 0
		echo "# $name: every test skipped: nothing was tested"
		bad+=("$name")
	elif [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
		bad+=("$name")
		# A binary that failed without counting a failed test still fails the run.
		[ "$f" -eq 0 ] && failed=$((failed + 1))
	fi
	if [ ${#bad[@]} -eq "$nbad" ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name (exit $rc)"
	fi
done

echo "# selftests: $skipped skipped"
echo "# selftests: $passed passed, $failed failed"
if [ ${#bad[@]} -gt 0 ]; then
	echo "# failing: ${bad[*]}"
	exit 1
fi
exit 0
