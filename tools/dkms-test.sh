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
# Prints TAP (tools/lib/tap.sh): one point per step (sources, add, build,
# the module file, its vermagic, dkms status), a step after a failed one is
# not run and not counted, and "# dkms: N passed, N failed" last; exit 0 if
# none failed.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
. tools/lib/tap.sh
echo "TAP version 13"
fail() {
	tap_not_ok "$*"
	tap_end dkms
	exit 1
}

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
# a failed step's output as TAP diagnostics
show() { sed 's/^/# /' "$@"; }
make -s dkms-src >"$log" 2>&1 || { show "$log"; fail "make dkms-src"; }
tap_ok "sources in /usr/src/asx-$ver (make dkms-src)"
dkms add -m asx -v "$ver" >"$log" 2>&1 || { show "$log"; fail "dkms add"; }
tap_ok "dkms add asx/$ver"
if ! dkms build -m asx -v "$ver" -k "$kver" >"$log" 2>&1; then
	show "$log"
	tail -n 30 "/var/lib/dkms/asx/$ver/build/make.log" 2>/dev/null | show
	fail "dkms build for $kver"
fi
tap_ok "dkms build for $kver"
ko=$(find "/var/lib/dkms/asx/$ver/$kver" -name 'asx.ko*' | head -n 1)
[ -n "$ko" ] || fail "dkms build left no asx.ko under /var/lib/dkms/asx/$ver/$kver"
tap_ok "asx.ko built: $ko"
magic=$(modinfo -F vermagic "$ko")
case "$magic" in
"$kver "*) tap_ok "vermagic $kver" ;;
*) fail "$ko has vermagic '$magic', not $kver" ;;
esac
dkms status -m asx -v "$ver" | grep -q "$kver.*built" ||
	fail "dkms status does not say built: $(dkms status -m asx -v "$ver")"
tap_ok "dkms status: built for $kver"
rm -f "$log"
tap_end dkms
