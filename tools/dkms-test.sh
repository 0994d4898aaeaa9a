#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-test.sh - asx.ko built the DKMS way, against the installed headers.
#
# Usage: tools/dkms-test.sh [KERNEL_VERSION]
#
# Puts the module's sources in /usr/src/asx-VERSION (make dkms-src), then
# `dkms add` and `dkms build` for KERNEL_VERSION (default: the kernel the test
# VM boots), checks the built asx.ko's vermagic, and removes everything it
# added (dkms remove, the source tree), also when it fails. It does not
# install the module. Needs root and dkms (tools/setup.sh installs it).
# Prints "dkms: ok" or "dkms: FAIL: why"; exit 0 or 1.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
fail() { echo "dkms: FAIL: $*"; exit 1; }

command -v dkms >/dev/null || fail "no dkms (run tools/setup.sh)"
[ "$(id -u)" = 0 ] || fail "needs root (dkms writes /usr/src and /var/lib/dkms)"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
[ -n "$ver" ] || fail "no PACKAGE_VERSION in dkms.conf"
kver=${1:-$(tools/vm/asx-vm --kver)} || fail "no kernel with headers"
[ -d "/lib/modules/$kver/build" ] || fail "no headers for $kver (/lib/modules/$kver/build)"

cleanup() {
	dkms remove -m asx -v "$ver" --all >/dev/null 2>&1
	rm -rf "/usr/src/asx-$ver"
}
cleanup	# what an interrupted run left
trap cleanup EXIT

log=$(mktemp)
make -s dkms-src >"$log" 2>&1 || { cat "$log"; fail "make dkms-src"; }
dkms add -m asx -v "$ver" >"$log" 2>&1 || { cat "$log"; fail "dkms add"; }
if ! dkms build -m asx -v "$ver" -k "$kver" >"$log" 2>&1; then
	cat "$log"
	cat "/var/lib/dkms/asx/$ver/build/make.log" 2>/dev/null | tail -n 30
	fail "dkms build for $kver"
fi
ko=$(find "/var/lib/dkms/asx/$ver/$kver" -name 'asx.ko*' | head -n 1)
[ -n "$ko" ] || fail "dkms build left no asx.ko under /var/lib/dkms/asx/$ver/$kver"
magic=$(modinfo -F vermagic "$ko")
case "$magic" in
"$kver "*) ;;
*) fail "$ko has vermagic '$magic', not $kver" ;;
esac
dkms status -m asx -v "$ver" | grep -q "$kver.*built" ||
	fail "dkms status does not say built: $(dkms status -m asx -v "$ver")"
rm -f "$log"
echo "dkms: ok (asx/$ver built for $kver: $ko)"
