#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-layout-check.sh - the layout gate (tools/layout-check.py: abidw and
# abidiff against lib/libasx.abi.xml) on copies of the public headers: an
# unchanged copy passes; a member that moves, two members that swap places
# (same size), a member whose type grows, a new public struct fail it and
# abidiff says what changed; --update makes a new baseline that then passes.
# TAP output (tools/lib/tap-expect.sh); exit 0 if every check holds.
#
# Usage: tools/test-layout-check.sh
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$top/tools/lib/tap-expect.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check=("$top/tools/layout-check.py" --baseline "$top/lib/libasx.abi.xml")

# copy NAME: a fresh copy of the public headers in $tmp/NAME
copy() {
	rm -rf "${tmp:?}/$1"
	mkdir -p "$tmp/$1/lib"
	cp -r "$top/lib/include" "$tmp/$1/lib/"
	cp -r "$top/uapi" "$tmp/$1/"
}

# edit NAME HEADER SED_SCRIPT: a copy with one header changed (the change must take)
edit() {
	copy "$1"
	cp "$tmp/$1/lib/include/asx/$2" "$tmp/orig.h"
	sed -i "$3" "$tmp/$1/lib/include/asx/$2"
	if cmp -s "$tmp/orig.h" "$tmp/$1/lib/include/asx/$2"; then
		echo "Bail out! test-layout-check.sh: '$3' does not change $2 any more"
		exit 1
	fi
}

echo "TAP version 13"
copy same
tap_expect "the headers as committed pass" 0 'as in lib/libasx.abi.xml' -- \
	"${check[@]}" --top "$tmp/same"

edit moved addr.h 's/^\tsocklen_t len;.*/&\n\tint asx_test_pad[2];/'
# abidiff names the struct as a change of its own or inside the first
# public struct that points at it, whichever it reports
tap_expect "a member that moves fails, abidiff names it" 1 "(struct asx_addr' changed|type 'struct asx_addr' at addr.h)" \
	"'int asx_test_pad\\[2\\]', at offset 32" 'offset changed from 64 to 128' \
	'run tools/layout-check.py --update' -- "${check[@]}" --top "$tmp/moved"

edit swapped asc.h 's/^\tunsigned int count, arrived;/\tunsigned int arrived, count;/'
tap_expect "two members that swap places fail (same size)" 1 \
	"struct asx_asc_barrier' changed" "'unsigned int count' offset changed from 32 to 64" -- \
	"${check[@]}" --top "$tmp/swapped"

edit grown msg.h 's/^\tuint8_t band;/\tuint16_t band;/'
tap_expect "a member whose type grows fails" 1 "struct asx_msg' changed" \
	"type of 'uint8_t band' changed" -- "${check[@]}" --top "$tmp/grown"

edit added asc.h 's/^struct asx_asc_barrier {/struct asx_test_new { int a; };\n&/'
tap_expect "a new public struct fails until the baseline has it" 1 \
	"'struct asx_test_new'" -- "${check[@]}" --top "$tmp/added"

tap_expect "--update writes a baseline of the changed headers" 0 'wrote .*new.abi.xml' -- \
	"$top/tools/layout-check.py" --top "$tmp/added" --baseline "$tmp/new.abi.xml" --update
tap_expect "... which they then pass" 0 'as in .*new.abi.xml' -- \
	"$top/tools/layout-check.py" --top "$tmp/added" --baseline "$tmp/new.abi.xml"

echo "1..$tap_n"
echo "# test-layout-check: $((tap_n - tap_fails)) passed, $tap_fails failed"
[ "$tap_fails" = 0 ]
