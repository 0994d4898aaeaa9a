#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# run_all_selftest.sh - check run_all.sh's counting against known outcomes.
#
# Usage: selftests/asx/run_all_selftest.sh
#
# Builds a few fake test programs on asx_harness.h (kselftest_harness.h from
# build/kselftest/: run `make kselftest-headers` first) in a scratch
# directory, runs run_all.sh over them and checks what it must say: passed
# and failed tests counted, a skipped test neither, a program that skipped
# everything failing the run without passing anything, a crash, a timeout
# and a program that dies mid-run counted as failures, $ASX_TEST_TIMEOUT
# lengthening a test's time. Runs on the host, no module needed. TAP output;
# exits 0 if every check holds.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ksft=$top/build/kselftest
if [ ! -f "$ksft/kselftest_harness.h" ]; then
	echo "run_all_selftest.sh: no $ksft/kselftest_harness.h: run 'make kselftest-headers'" >&2
	exit 2
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# fake NAME: the C body of a test program on stdin, built as $dir/NAME_test
fake() {
	local name=$1
	{ echo '#include <signal.h>'; echo '#include "asx_harness.h"'; cat
	  echo 'TEST_HARNESS_MAIN'; } > "$dir/$name.c"
	${CC:-cc} -std=gnu11 -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$top/selftests/asx" \
		-I"$ksft" -o "$dir/bin/${name}_test" "$dir/$name.c" || exit 2
}
mkdir -p "$dir/bin"

fake pass <<'EOF'
TEST(a) { EXPECT_EQ(1, 1); }
FIXTURE(f) { int x; };
FIXTURE_VARIANT(f) { int want; };
FIXTURE_VARIANT_ADD(f, one) { .want = 1 };
FIXTURE_VARIANT_ADD(f, two) { .want = 1 };
FIXTURE_SETUP(f) { self->x = 1; }
FIXTURE_TEARDOWN(f) { }
TEST_F(f, b) { ASSERT_EQ(self->x, variant->want); }
EOF
fake mixed <<'EOF'
TEST(passes) { EXPECT_TRUE(1); }
TEST(expect_fails) { EXPECT_EQ(1, 2) TH_LOG("a message"); }
TEST(assert_fails) { ASSERT_EQ(1, 2); }
TEST(skips) { SKIP(return, "a reason"); }
TEST(skip_after_a_failure_fails) { EXPECT_EQ(0, 1); SKIP(return, "too late"); }
TEST(crashes) { raise(SIGSEGV); }
TEST_TIMEOUT(times_out, 1) { sleep(30); }
TEST_TIMEOUT(needs_asx_test_timeout, 1) { sleep(2); }
FIXTURE(s) { int x; };
FIXTURE_SETUP(s) { SKIP(return, "setup skips"); }
FIXTURE_TEARDOWN(s) { }
TEST_F(s, body_not_run) { raise(SIGSEGV); }
EOF
fake allskip <<'EOF'
TEST(a) { SKIP(return, "no module"); }
TEST(b) { SKIP(return, "no module"); }
EOF
fake dies <<'EOF'
TEST(a) { EXPECT_TRUE(1); }
TEST(kills_the_harness) { kill(getppid(), SIGKILL); sleep(1); }
TEST(never_run) { EXPECT_TRUE(1); }
EOF

. "$top/tools/lib/tap-expect.sh"

# check NAME WANT_RC WANT_REGEX... -- DIR [ENV=VALUE...]
check() {
	local name=$1 want=$2 wants=() d
	shift 2
	while [ "$1" != -- ]; do
		wants+=("$1")
		shift
	done
	d=$2
	shift 2
	tap_expect "$name" "$want" "${wants[@]}" -- env "$@" "$top/selftests/asx/run_all.sh" "$d"
}

# one program per directory, then all of them together
for p in pass mixed allskip dies; do
	mkdir -p "$dir/$p"
	ln -s "../bin/${p}_test" "$dir/$p/"
done

echo "TAP version 13"
echo "1..8"
check "passing tests and variants count" 0 '^# selftests: 3 passed, 0 failed$' -- "$dir/pass"
check "failures, a crash and a timeout fail; a skip is neither" 1 \
	'^# mixed_test: 1 passed, 6 failed, 2 skipped$' '^# selftests: 1 passed, 6 failed$' \
	'times_out: Test terminated by timeout' -- "$dir/mixed"
check "ASX_TEST_TIMEOUT lengthens a test's time" 1 \
	'^# selftests: 2 passed, 5 failed$' 'ok [0-9]+ global.needs_asx_test_timeout' -- \
	"$dir/mixed" ASX_TEST_TIMEOUT=4
check "a program that skipped every test fails the run, passing nothing" 1 \
	'every test skipped' '^# selftests: 0 passed, 0 failed$' '^# failing: allskip_test$' -- \
	"$dir/allskip"
check "a program that dies mid-run is a failure" 1 'without a plan or a Totals line' \
	'^# selftests: 0 passed, 1 failed$' -- "$dir/dies"
check "the sums over several programs" 1 '^# selftests: 4 passed, 7 failed$' \
	'^# selftests: 4 skipped$' '^# failing: allskip_test dies_test mixed_test$' -- "$dir/bin"
# what tools/check.sh counts in run_all.sh's TAP (tools/lib/tap-count.awk):
# the same, but that a program that skipped everything is a failure, and the
# test a dying program passed before it died is a pass (exit 1: run_all.sh's)
tap_count() { "$top/selftests/asx/run_all.sh" "$1" | awk -f "$top/tools/lib/tap-count.awk"; }
tap_expect "tools/check.sh's TAP count of one program" 1 \
	"^total	1	6	2	1\$" -- tap_count "$dir/mixed"
tap_expect "tools/check.sh's TAP count of several" 1 "^total	5	8	4	1\$" \
	'^fail	allskip_test: every test skipped' '^fail	dies_test: ran 1 of 3 planned' \
	'^fail	mixed_test: not ok [0-9]+ global.crashes' -- tap_count "$dir/bin"

echo "# $((tap_n - tap_fails)) passed, $tap_fails failed, 0 skipped"
[ "$tap_fails" = 0 ]
