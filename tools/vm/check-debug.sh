#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check-debug.sh - the selftests in the debug kernel (`make check-debug`).
#
# Usage: tools/vm/check-debug.sh [--kernel 6.1|6.12|6.12-rt] [CMD [ARGS...]]
#
#   1. builds the debug kernel if it is not built yet (tools/vm/debug-kernel.sh:
#      KASAN, lockdep, DEBUG_ATOMIC_SLEEP, PROVE_RCU, kmemleak, and PREEMPT_RT
#      for 6.12-rt; the first build takes long, later runs find it in the
#      cache). --kernel (or ASX_DEBUG_KERNEL; `make check-debug
#      DEBUG_KERNEL=6.12-rt`) chooses the source and flavour, 6.1 by default.
#   2. builds asx.ko and asx_rot13.ko against it with tools/vm/kmod-build.sh,
#      in build/kmod-debug/ for 6.1 and build/kmod-debug-K/ for the others
#      (kmod/ keeps the Debian kernel's build)
#   3. builds the selftests and the tools (make selftests tools: proc_test
#      runs asxctl)
#   4. boots the debug kernel with those modules (tools/vm/asx-vm --debug)
#      and runs CMD there, by default the whole suite, each test with a
#      300 s timeout (ASX_DEBUG_TEST_TIMEOUT) instead of 30 s:
#          env ASX_TEST_TIMEOUT=300 selftests/asx/run_all.sh build/selftests
#
# Fails (non-zero, asx-vm's exit status) on a failed selftest, on any
# WARNING/BUG/KASAN/lockdep/... line in the guest's kernel log and on a
# kmemleak report of asx's. The guest's whole kernel log is kept in
# build/check-debug.dmesg for 6.1, build/check-debug-K.dmesg for the others
# (and kmemleak's report, when there is one, in the same name + .kmemleak).
#
# Environment: ASX_DEBUG_TIMEOUT (seconds for the VM, default 3600),
# ASX_DEBUG_CACHE (the kernel cache, default /var/cache/asx), JOBS (make's
# jobs for the kernel, default 2).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=check-debug.sh
cd "$top" || exit 2

flavour=${ASX_DEBUG_KERNEL:-6.1}
case "${1:-}" in
-h|--help) sed -n '3,/^set -uo pipefail/p' "$0" | sed '$d' |
	sed 's/^# \{0,1\}//'; exit 0 ;;
--kernel) [ $# -ge 2 ] || { echo "$prog: --kernel needs 6.1, 6.12 or 6.12-rt" >&2; exit 2; }
	flavour=$2; shift 2 ;;
--kernel=*) flavour=${1#*=}; shift ;;
esac
case "$flavour" in
6.1) suffix= ;;
6.12|6.12-rt) suffix=-$flavour ;;
*) echo "$prog: --kernel: '$flavour' is none of 6.1, 6.12, 6.12-rt" >&2; exit 2 ;;
esac
export ASX_DEBUG_KERNEL=$flavour

dir=$(tools/vm/debug-kernel.sh -j"${JOBS:-2}") || {
	echo "$prog: FAIL: no $flavour debug kernel (see above)" >&2
	exit 1
}
kdir=$dir/linux
mirror=build/kmod-debug$suffix

echo "$prog: building asx.ko against $kdir" >&2
tools/vm/kmod-build.sh "$kdir" "$mirror" || {
	echo "$prog: FAIL: asx.ko does not build against the $flavour debug kernel" >&2
	exit 1
}
# the tools too: proc_test runs build/bin/asxctl against the module
make -s selftests tools || { echo "$prog: FAIL: make selftests tools" >&2; exit 1; }

# The debug kernel is several times slower: each test gets 300 s, not 30 s.
[ $# -gt 0 ] || set -- env ASX_TEST_TIMEOUT="${ASX_DEBUG_TEST_TIMEOUT:-300}" \
	selftests/asx/run_all.sh build/selftests
start=$SECONDS
tools/vm/asx-vm --debug --kmod "$mirror/kmod" --timeout "${ASX_DEBUG_TIMEOUT:-3600}" \
	--keep-dmesg "build/check-debug$suffix.dmesg" -- "$@"
rc=$?
echo "$prog: the $flavour debug kernel's run took $((SECONDS - start))s; exit $rc;" \
	"kernel log: build/check-debug$suffix.dmesg" >&2
exit "$rc"
