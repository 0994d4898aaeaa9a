#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# gen-map.sh [--check] - list the symbols libasx exports (ASX_API) as the
# body of lib/libasx.map's version node.  A maintainer's aid: build with
# a wildcard map, run this, and move new names into the newest node by
# hand.  Internal symbols (asx__*) are never listed.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
so=${1:-$top/build/lib/libasx.so.0}
nm -D --defined-only "$so" | awk '$2 ~ /[TDBRVW]/ {print $3}' | sed 's/@.*//' |
	grep -v '^LIBASX_' | grep -v '^asx__' | sort -u | sed 's/^/\t\t/; s/$/;/'
