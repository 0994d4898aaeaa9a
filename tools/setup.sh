#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# setup.sh - install what building and testing ASX needs on Debian 12.
#
# Usage: tools/setup.sh [--check] [--quiet]
#
#   --check   only report what is missing; exit 1 if anything is
#   --quiet   print nothing when everything is already present
#
# Idempotent: packages already installed are not touched, and the
# virtme-ng venv (.venv/ at the top of the tree) is only created once.
# Nothing is downloaded except Debian packages and PyPI packages.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv="$top/.venv"
VNG_VERSION=${VNG_VERSION:-1.42}

check=0
quiet=0
for a in "$@"; do
	case "$a" in
	--check) check=1 ;;
	--quiet) quiet=1 ;;
	-h|--help) sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "setup.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
	esac
done

say() { [ "$quiet" = 1 ] || echo "setup: $*"; }

pkgs=(
	build-essential gcc clang make pkg-config git
	libcmocka-dev liburcu-dev systemtap-sdt-dev libtirpc-dev
	# asx-bench ace's baseline: ACE 7 (tools/bench/ace/, Documentation/benchmarks.rst)
	libace-dev
	linux-headers-amd64 linux-image-amd64 kmod
	# the tested kernel matrix (Documentation/kmod.rst, "Kernels"): Debian 12's
	# 6.1 above, and the 6.12 and 6.12 PREEMPT_RT kernels Debian ships for it
	# (bookworm-security and -backports; the kernel of Debian 13 too)
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	linux-image-6.12-rt-amd64 linux-headers-6.12-rt-amd64
	qemu-system-x86 busybox-static
	python3 python3-venv python3-pip python3-bpfcc bpfcc-tools bpftrace python3-matplotlib
	valgrind linux-source-6.1 xz-utils iproute2 libclang-rt-14-dev dkms man-db
	debhelper dh-dkms dpkg-dev fakeroot lintian
	# the layout gate: abidw/abidiff (tools/layout-check.py)
	abigail-tools
	# the pages of Documentation/ parsed in the style stage (tools/doc-check.py)
	python3-docutils
	# the report opened in a headless browser (tools/report/browser-check.py)
	chromium
	# libasx's gdb commands tested in batch mode (tools/gdb/test-gdb.sh)
	gdb
)

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done

need_venv=0
[ -x "$venv/bin/vng" ] || need_venv=1

if [ "$check" = 1 ]; then
	rc=0
	if [ ${#missing[@]} -gt 0 ]; then
		echo "setup: missing Debian packages: ${missing[*]}"; rc=1
	fi
	if [ "$need_venv" = 1 ]; then
		echo "setup: missing virtme-ng venv at $venv"; rc=1
	fi
	exit $rc
fi

if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "setup: need root to install: ${missing[*]}" >&2
		exit 1
	fi
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	stamp=/var/lib/apt/periodic/asx-update-stamp
	if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +360 2>/dev/null)" ]; then
		apt-get update -q
		mkdir -p "$(dirname "$stamp")" && touch "$stamp"
	fi
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "$need_venv" = 1 ]; then
	say "creating virtme-ng venv in $venv"
	# Debian's python: the venv must not depend on a pyenv shim.
	/usr/bin/python3 -m venv "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check "virtme-ng==$VNG_VERSION"
fi

say "all set"
