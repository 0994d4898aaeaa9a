#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# check-debug.sh - the selftests in the debug kernel (`make check-debug`).
#
# Usage: tools/vm/check-debug.sh [CMD [ARGS...]]
#
#   1. builds the debug kernel if it is not built yet (tools/vm/debug-kernel.sh:
#      KASAN, lockdep, DEBUG_ATOMIC_SLEEP, PROVE_RCU, kmemleak; the first
#      build takes long, later runs find it in the cache)
#   2. builds asx.ko and asx_rot13.ko against it, from a copy of kmod/ and
#      uapi/ in build/kmod-debug/ (kmod/ keeps the Debian kernel's build)
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
# build/check-debug.dmesg (and kmemleak's report, when there is one, in
# build/check-debug.dmesg.kmemleak).
#
# Environment: ASX_DEBUG_TIMEOUT (seconds for the VM, default 3600),
# ASX_DEBUG_CACHE (the kernel cache, default /var/cache/asx).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=check-debug.sh
cd "$top" || exit 2

case "${1:-}" in -h|--help) sed -n '3,/^set -uo pipefail/p' "$0" | sed '$d' |
	sed 's/^# \{0,1\}//'; exit 0 ;; esac

dir=$(tools/vm/debug-kernel.sh -j"${JOBS:-2}") || {
	echo "$prog: FAIL: no debug kernel (see above)" >&2
	exit 1
}
kdir=$dir/linux

# A copy of the module sources, mtimes kept so that kbuild rebuilds only what
# changed: an out-of-tree build of 6.1 writes its objects beside the sources.
mirror=build/kmod-debug
mkdir -p "$mirror"
rm -rf "$mirror/src.new"
mkdir -p "$mirror/src.new"
cp -p Kbuild "$mirror/src.new/" &&
	find kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) \
		! -name '*.mod.c' -exec cp -p --parents {} "$mirror/src.new/" \; || {
	echo "$prog: FAIL: cannot copy kmod/ and uapi/ into $mirror" >&2
	exit 1
}
# replace only the files that differ, drop the ones gone from the tree
(cd "$mirror/src.new" && find . -type f) | while read -r f; do
	cmp -s "$mirror/src.new/$f" "$mirror/$f" && continue
	mkdir -p "$(dirname "$mirror/$f")"
	cp -p "$mirror/src.new/$f" "$mirror/$f"
done
(cd "$mirror" && find kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \)) |
	while read -r f; do
		case "$f" in *.mod.c) continue ;; esac
		[ -e "$mirror/src.new/$f" ] || rm -f "$mirror/$f"
	done
rm -rf "$mirror/src.new"

echo "$prog: building asx.ko against $kdir" >&2
make -C "$kdir" M="$top/$mirror" modules > "$mirror/build.log" 2>&1 || {
	cat "$mirror/build.log" >&2
	echo "$prog: FAIL: asx.ko does not build against the debug kernel" >&2
	exit 1
}
# the tools too: proc_test runs build/bin/asxctl against the module
make -s selftests tools || { echo "$prog: FAIL: make selftests tools" >&2; exit 1; }

# The debug kernel is several times slower: each test gets 300 s, not 30 s.
[ $# -gt 0 ] || set -- env ASX_TEST_TIMEOUT="${ASX_DEBUG_TEST_TIMEOUT:-300}" \
	selftests/asx/run_all.sh build/selftests
start=$SECONDS
tools/vm/asx-vm --debug --timeout "${ASX_DEBUG_TIMEOUT:-3600}" \
	--keep-dmesg build/check-debug.dmesg -- "$@"
rc=$?
echo "$prog: the debug kernel's run took $((SECONDS - start))s; exit $rc;" \
	"kernel log: build/check-debug.dmesg" >&2
exit "$rc"
