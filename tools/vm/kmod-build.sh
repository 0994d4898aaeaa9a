#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kmod-build.sh - build asx.ko and asx_rot13.ko for one kernel, out of the tree.
#
# Usage: tools/vm/kmod-build.sh [--werror] KDIR DIR
#
# Copies kmod/, uapi/ and the top Kbuild into DIR (mtimes kept, and only the
# files that changed: kbuild rebuilds only what changed, since an
# out-of-tree build writes its objects beside the sources) and builds the
# modules there against the kernel build tree KDIR, so that kmod/ keeps the
# default kernel's build and each kernel of the matrix has its own:
# DIR/kmod/asx.ko, DIR/kmod/test/asx_rot13.ko (tools/vm/asx-vm --kmod DIR/kmod).
# The build's output goes to DIR/build.log.
#
#   --werror   compiler warnings are errors (ASX_WERROR=y, kmod/Kbuild), and
#              any other "warning:" line of the build (modpost's) fails it too
#
# Exit 0 when built; 1 with the log's end and a line naming the kernel when not.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=kmod-build.sh
werror=0

case "${1:-}" in
-h|--help) sed -n '3,/^set -uo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
--werror) werror=1; shift ;;
esac
[ $# -eq 2 ] || { echo "$prog: usage: $prog [--werror] KDIR DIR (try --help)" >&2; exit 2; }
kdir=$1
out=$2
kver=$kdir
[ -d "$kdir" ] || { echo "$prog: FAIL: no kernel build tree at $kdir" >&2; exit 1; }

mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
new=$out/src.new
rm -rf "$new"
mkdir -p "$new"
(cd "$top" && cp -p Kbuild "$new/" &&
	find kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \) \
		! -name '*.mod.c' -exec cp -p --parents {} "$new/" \;) || {
	echo "$prog: FAIL: cannot copy kmod/ and uapi/ into $out" >&2
	exit 1
}
# replace only the files that differ, drop the ones gone from the tree
(cd "$new" && find . -type f) | while read -r f; do
	cmp -s "$new/$f" "$out/$f" && continue
	mkdir -p "$(dirname "$out/$f")"
	cp -p "$new/$f" "$out/$f"
done
(cd "$out" && find kmod uapi -type f \( -name '*.[ch]' -o -name Kbuild -o -name Makefile \)) |
	while read -r f; do
		case "$f" in *.mod.c) continue ;; esac
		[ -e "$new/$f" ] || rm -f "$out/$f"
	done
rm -rf "$new"

args=(-C "$kdir" M="$out" modules)
[ "$werror" = 1 ] && args+=(ASX_WERROR=y)
if ! make -j"${JOBS:-$(nproc)}" "${args[@]}" > "$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	echo "$prog: FAIL: asx.ko does not build for $kver (log: $out/build.log)" >&2
	exit 1
fi
if [ "$werror" = 1 ] && grep -qi 'warning:' "$out/build.log"; then
	grep -i 'warning:' "$out/build.log" >&2
	echo "$prog: FAIL: asx.ko builds for $kver with warnings (log: $out/build.log)" >&2
	exit 1
fi
exit 0
