#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# abi-check.sh SO MAP - the symbols SO exports and the ones MAP names must
# be the same set.  The map names every symbol (no wildcards), so adding an
# ASX_API function without listing it in a version node, or listing one
# that no longer exists, fails the check (libbpf's rule).
set -euo pipefail
so=$1
map=$2

if sed -n '/global:/,/local:/p' "$map" | grep -q '\*'; then
	echo "abi-check: $map uses a wildcard in a global: list; name each symbol" >&2
	exit 1
fi

exported=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDBRVW]/ {print $3}' |
	   sed 's/@.*//' | grep -v '^LIBASX_' | sort -u)
listed=$(sed -n 's/^[[:space:]]*\(asx_[A-Za-z0-9_]*\);.*/\1/p' "$map" | sort -u)

extra=$(comm -23 <(echo "$exported") <(echo "$listed"))
gone=$(comm -13 <(echo "$exported") <(echo "$listed"))
rc=0
if [ -n "$extra" ]; then
	echo "abi-check: exported but not in $map:" $extra >&2
	rc=1
fi
if [ -n "$gone" ]; then
	echo "abi-check: in $map but not exported:" $gone >&2
	rc=1
fi
[ $rc -ne 0 ] || echo "abi-check: $(echo "$exported" | wc -l) symbols, map and library agree"
exit $rc
