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
	# the Proactor's io_uring back end (lib/src/proactor, Documentation/reactor.rst)
	liburing-dev
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
	# libasx cross-built for aarch64 and its tests under qemu-user (make
	# check-aarch64); the :arm64 ones need dpkg's arm64 architecture (below);
	# gdb-multiarch debugs a guest through qemu-aarch64-static -g PORT
	gcc-aarch64-linux-gnu qemu-user-static gdb-multiarch
	libc6:arm64 libcmocka-dev:arm64 liburcu-dev:arm64 systemtap-sdt-dev:arm64 libtirpc-dev:arm64
)

# one line per installed architecture of a package (libcmocka-dev is there
# for amd64 and arm64): a name without :ARCH wants the native one (or all)
native=$(dpkg --print-architecture)
missing=()
for p in "${pkgs[@]}"; do
	want="$native|all"
	[ "${p#*:}" = "$p" ] || want=${p#*:}
	dpkg-query -W -f='${Architecture} ${Status}\n' "$p" 2>/dev/null |
		grep -Eqx "($want) install ok installed" || missing+=("$p")
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
	# a foreign architecture's packages: add it once, then refresh the lists
	if printf '%s\n' "${missing[@]}" | grep -q ':arm64$' &&
	   ! dpkg --print-foreign-architectures | grep -qx arm64; then
		say "adding dpkg architecture arm64"
		dpkg --add-architecture arm64
		rm -f "$stamp"
	fi
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
