#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run_all.sh - run every built ASX selftest and sum up.
#
# Usage: selftests/asx/run_all.sh DIR
#
# Runs each executable DIR/*_test in turn, passes its TAP output through, and
# reads its closing line "# N passed, N failed, N skipped". Ends with
#
#	selftests: N passed, N failed
#
# (tests summed over all binaries) and exits 1 if any test failed, if a
# binary crashed or printed no closing line, or if a binary skipped every
# test (exit 4: nothing was tested); 2 if DIR holds no tests.
set -uo pipefail

if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'
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
	echo "selftests: 0 passed, 0 failed"
	exit 2
fi

passed=0
failed=0
skipped=0
bad=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT

for b in "${bins[@]}"; do
	name=$(basename "$b")
	echo "# selftests: asx: $name"
	t0=$SECONDS
	"$b" | tee "$out"
	rc=${PIPESTATUS[0]}
	echo "# $name: exit $rc after $((SECONDS - t0)) s"
	line=$(grep -E '^# [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$out" | tail -n1)
	if [ -z "$line" ]; then
		echo "# $name: exit $rc without a closing summary line (crashed?)"
		failed=$((failed + 1))
		bad+=("$name")
		continue
	fi
	read -r p f s < <(sed -E 's/^# ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/' \
		<<<"$line")
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if [ "$rc" -eq 4 ] && [ "$f" -eq 0 ]; then
		echo "# $name: every test skipped: nothing was tested"
		bad+=("$name")
	elif [ "$rc" -ne 0 ]; then
		bad+=("$name")
		# A binary that failed without counting a failed test still fails the run.
		[ "$f" -eq 0 ] && failed=$((failed + 1))
	fi
done

echo "# selftests: $skipped skipped"
echo "selftests: $passed passed, $failed failed"
if [ ${#bad[@]} -gt 0 ]; then
	echo "# failing: ${bad[*]}"
	exit 1
fi
exit 0
