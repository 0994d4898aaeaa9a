#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# exp-out-of-lib.sh SO [ARCHIVE...] - the threading-architecture study
# (exp/: the protocol Modules, the LP/CP/MP runner) is not part of libasx.
# Fails, naming them, if SO or an ARCHIVE holds a symbol of the study:
# exported or local (nm -D and nm), with the prefix it had inside libasx
# (asx__proto_*) or the ones it has in exp/ (exp_proto_*, exp_arch_*).
# Run by the abi stage of tools/check.sh.
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 SO [ARCHIVE...]" >&2; exit 2; }

re='^(asx__proto_|exp_proto_|exp_arch_)'
rc=0
for f in "$@"; do
	if [ ! -f "$f" ]; then
		echo "exp-out-of-lib: $f: not found" >&2
		rc=1
		continue
	fi
	# every symbol: the dynamic table and the full one (local ones too)
	syms=$( { nm -D "$f" 2>/dev/null || true; nm "$f" 2>/dev/null || true; } |
		awk 'NF >= 2 { print $NF }' | sed 's/@.*//' | grep -E "$re" | sort -u || true)
	if [ -n "$syms" ]; then
		echo "exp-out-of-lib: $f holds symbols of the study:" $syms >&2
		rc=1
	fi
done
[ $rc -ne 0 ] || echo "exp-out-of-lib: no symbol of exp/ in $*"
exit $rc
