#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# svc-calls.sh - check that the files of lib/src/svc call each other one way.
#
# Usage: tools/svc-calls.sh [-v] [DIR]     (DIR: default lib/src/svc of this tree)
#        tools/svc-calls.sh --self-test  (the checker on made-up files: two
#                                        that call each other, a circle of
#                                        three, and a one-way chain)
#
# Compiles every DIR/*.c alone (gcc -c, the library's include paths) into a
# scratch directory and reads the objects with nm: file A calls file B when
# A uses (nm -u) a symbol that B defines (a function or data, asx__svc_* or
# any other).  Fails (exit 1, the circle named) when the files call each
# other in a circle, two files calling each other included.  Otherwise
# prints the order it found, lowest first (-v: and every edge).  The order
# the files keep is in Documentation/svc.rst ("The files of lib/src/svc")
# and at the top of each file.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
verbose=0
case "${1:-}" in
-h|--help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
-v) verbose=1; shift ;;
--self-test)
	t=$(mktemp -d) || exit 2
	trap 'rm -rf "$t"' EXIT
	mkdir "$t/pair" "$t/three" "$t/chain"
	# file F defining f(), calling each of the functions named after it
	mk() {
		local d=$1 f=$2 g body=
		shift 2
		for g in "$@"; do body="$body int $g(void); r += $g();"; done
		printf 'int %s(void);\nint %s(void) { int r = 0;%s return r; }\n' \
			"$f" "$f" "$body" >"$d/$f.c"
	}
	mk "$t/pair" a b; mk "$t/pair" b a; mk "$t/pair" c a
	mk "$t/three" a b; mk "$t/three" b c; mk "$t/three" c a
	mk "$t/chain" a; mk "$t/chain" b a; mk "$t/chain" c a b
	bad=0
	"$0" "$t/pair" 2>"$t/err" && bad=1
	grep -q 'a.c and b.c call each other: b / a' "$t/err" || bad=1
	"$0" "$t/three" 2>/dev/null && bad=1
	"$0" "$t/chain" | grep -q 'lowest first: a.c b.c c.c' || bad=1
	[ "$bad" = 0 ] && echo "svc-calls: self-test passed" && exit 0
	echo "svc-calls: self-test FAILED" >&2
	exit 1 ;;
esac
dir=${1:-$top/lib/src/svc}
cc=${CC:-gcc}

shopt -s nullglob
srcs=("$dir"/*.c)
[ ${#srcs[@]} -gt 0 ] || { echo "svc-calls: no sources in $dir" >&2; exit 2; }

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

for src in "${srcs[@]}"; do
	f=$(basename "$src" .c)
	# DIR's own headers first ("svc/x.h" from DIR/..), then the tree's
	if ! "$cc" -std=gnu11 -O0 -D_GNU_SOURCE -I"$dir/.." -I"$top/lib/include" -I"$top/uapi" \
		-I"$top/lib/src" -fPIC -c "$src" -o "$tmp/$f.o"; then
		echo "svc-calls: cannot compile $src" >&2
		exit 2
	fi
	nm --defined-only -g "$tmp/$f.o" | awk -v f="$f" 'NF == 3 { print $3, f }' >>"$tmp/defs"
	nm -u "$tmp/$f.o" | awk -v f="$f" '{ print $NF, f }' >>"$tmp/uses"
done
touch "$tmp/defs" "$tmp/uses"

# "CALLER CALLEE SYMBOL" for every symbol one file uses and another defines
sort -k1,1 "$tmp/defs" >"$tmp/defs.s"
sort -k1,1 "$tmp/uses" >"$tmp/uses.s"
join "$tmp/uses.s" "$tmp/defs.s" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u >"$tmp/calls"

if [ "$verbose" = 1 ]; then
	awk '{ printf "svc-calls: %s.c -> %s.c (%s)\n", $1, $2, $3 }' "$tmp/calls"
fi

# tsort wants "before after" pairs: the callee comes first. Every file is a
# node, called or not.
{
	for src in "${srcs[@]}"; do f=$(basename "$src" .c); echo "$f $f"; done
	awk '{ print $2, $1 }' "$tmp/calls" | sort -u
} >"$tmp/pairs"
if ! tsort "$tmp/pairs" >"$tmp/order" 2>"$tmp/loop"; then
	echo "svc-calls: the files of $dir call each other in a circle:" >&2
	sed -n 's/^tsort: //p' "$tmp/loop" | grep -v 'input contains a loop' |
		sed 's/^/svc-calls:   /' >&2
	# each pair that calls both ways, named with the symbols
	awk '{ k = $1 " " $2; s[k] = s[k] (s[k] ? ", " : "") $3 }
	     END { for (k in s) { split(k, a, " "); r = a[2] " " a[1];
		   if ((r in s) && a[1] < a[2])
			printf "svc-calls: %s.c and %s.c call each other: %s / %s\n",
			       a[1], a[2], s[k], s[r] } }' "$tmp/calls" >&2
	exit 1
fi
echo "svc-calls: $(wc -l <"$tmp/calls") calls between ${#srcs[@]} files, one way;" \
	"lowest first: $(sed 's/$/.c/' "$tmp/order" | tr '\n' ' ')"
