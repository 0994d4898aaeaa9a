#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# outsider-vm.sh - the newcomer programs that need asx.ko, built like a
# user's and run in the test VM (`tools/check.sh kmod` runs both halves).
#
#   tools/outsider-vm.sh build DIR   (host) `make install DESTDIR=DIR/stage
#                                    PREFIX=/usr`, then each
#                                    lib/tests/outsider/vm/*.c compiled with
#                                    only `pkg-config --cflags --libs libasx`
#                                    (PKG_CONFIG_PATH and PKG_CONFIG_SYSROOT_DIR
#                                    pointing into the staged tree) into DIR/bin
#   tools/outsider-vm.sh run DIR [--programs-only]
#                                    (guest, as root, asx.ko loaded) each
#                                    program of DIR/bin against the staged
#                                    libasx, then (unless --programs-only)
#                                    tools/asxctl/test-asxctl.sh with the
#                                    staged asxctl
#   (both)                           tools/xsi-ports/test.sh likewise: the
#                                    ported STREAMS programs built against
#                                    the staged install, run as root and
#                                    as nobody
#
# Each prints TAP (tools/lib/tap.sh): a test point per program, the asxctl
# script's own TAP as a subtest; the last line is "# outsider-vm: N passed,
# N failed" (a program that finds no /dev/asx exits 4 and fails: nothing
# skipped counts as a pass).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
dir=${2:-}
if [ -z "$dir" ] || { [ "$mode" != build ] && [ "$mode" != run ]; }; then
	sed -n '3,26p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
stage=$dir/stage
. "$top/tools/lib/tap.sh"
echo "TAP version 13"
ok() { tap_ok "$1"; }
bad() { tap_not_ok "$1"; }

if [ "$mode" = build ]; then
	rm -rf "$stage" "$dir/bin"
	mkdir -p "$dir/bin"
	if ! make -s -C "$top" install DESTDIR="$stage" PREFIX=/usr >"$dir/install.log" 2>&1; then
		sed 's/^/# /' "$dir/install.log"
		bad "make install DESTDIR=$stage PREFIX=/usr"
	else
		export PKG_CONFIG_PATH=$stage/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$stage
		read -r -a cflags <<<"$(pkg-config --cflags libasx)"
		read -r -a libs <<<"$(pkg-config --libs libasx)"
		for src in "$top"/lib/tests/outsider/vm/*.c; do
			name=$(basename "$src" .c)
			if ${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
				-pthread "${cflags[@]}" -o "$dir/bin/$name" "$src" "${libs[@]}" \
				>"$dir/$name.log" 2>&1; then
				ok "build outsider/vm/$name.c against the staged libasx"
			else
				sed 's/^/# /' "$dir/$name.log"
				bad "build outsider/vm/$name.c"
			fi
		done
		# the ported STREAMS programs (tools/xsi-ports), the same way
		tap_subtest "build tools/xsi-ports" "$top/tools/xsi-ports/test.sh" build "$dir/xsi-ports"
	fi
	tap_end outsider-vm
	exit
fi

export LD_LIBRARY_PATH=$stage/usr/lib
for bin in "$dir"/bin/*; do
	name=$(basename "$bin")
	echo "# outsider/vm/$name"
	t0=$SECONDS
	# its output as TAP comments
	timeout -k 5 300 "$bin" 2>&1 | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	echo "# outsider/vm/$name: exit $rc after $((SECONDS - t0)) s"
	if [ $rc -eq 0 ]; then ok "outsider/vm/$name"; else bad "outsider/vm/$name (exit $rc)"; fi
done
[ -n "${bin:-}" ] && [ -e "$bin" ] || bad "no program in $dir/bin (tools/outsider-vm.sh build $dir)"
tap_subtest "tools/xsi-ports as root and nobody" "$top/tools/xsi-ports/test.sh" run "$dir/xsi-ports"
if [ "${3:-}" = --programs-only ]; then
	tap_end outsider-vm
	exit
fi
tap_subtest "asxctl (tools/asxctl/test-asxctl.sh)" \
	"$top/tools/asxctl/test-asxctl.sh" "$stage/usr/bin/asxctl"
tap_end outsider-vm
