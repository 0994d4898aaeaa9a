#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test.sh - the ported STREAMS programs of tools/xsi-ports,
# built like a user's and run against asx.ko with answers checked (what each
# reproduces: its file's header; Documentation/xsi.rst, "Ported programs").
#
#   tools/xsi-ports/test.sh build DIR  (host) compile open, opend, strconf
#                                      and strchg into DIR/bin with only
#                                      `pkg-config --cflags --libs libasx`
#                                      (PKG_CONFIG_PATH/PKG_CONFIG_SYSROOT_DIR
#                                      name the install; tools/outsider-vm.sh
#                                      sets them to its staged one)
#   tools/xsi-ports/test.sh run DIR    (guest, as root, asx.ko loaded) each
#                                      program's checks as root and as nobody
#
# Each prints one TAP document (tools/lib/tap.sh); a wrong answer, a missing
# /dev/asx or a missing program fails: nothing is skipped.
set -uo pipefail

self=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")
top=$(cd "$(dirname "$self")/../.." && pwd)

# ---------------------------------------------------------------- checks
# (run as the user under test, from "run"; each prints why it fails)

die() { echo "$*" >&2; exit 1; }
# same WHAT GOT WANT
same() { [ "$2" = "$3" ] || die "$1: got '$(echo "$2" | tr '\n' ' ')', want '$(echo "$3" | tr '\n' ' ')'"; }

# The open server: files come back whole through the passed descriptor, one
# server process serving every request; its errors come back as text.
check_open() {
	local bin=$1 tmp=$2 out err rc
	cd "$bin" || die "no $bin"
	out=$(mktemp -p "$tmp") err=$(mktemp -p "$tmp")
	printf '%s\n' "$tmp/text" "$tmp/binary" "$tmp/empty" "$tmp/text" | ./open >"$out" 2>"$err"
	rc=$?
	[ $rc -eq 0 ] || die "open: exit $rc: $(cat "$err")"
	[ ! -s "$err" ] || die "open: error output: $(cat "$err")"
	cat "$tmp/text" "$tmp/binary" "$tmp/empty" "$tmp/text" | cmp -s - "$out" ||
		die "open: what came through the descriptors differs from the files"
	printf '%s\n' "$tmp/none" "$tmp/text" | ./open >"$out" 2>"$err"
	rc=$?
	[ $rc -eq 1 ] || die "open of a missing file: exit $rc, want 1"
	same "the server's error text" "$(cat "$err")" \
		"can't open $tmp/none: No such file or directory"
	cmp -s "$tmp/text" "$out" || die "open: the file after a failed request differs"
	if [ "$(id -u)" != 0 ]; then
		printf '%s\n' "$tmp/secret" | ./open >"$out" 2>"$err"
		rc=$?
		[ $rc -eq 1 ] && [ ! -s "$out" ] || die "open of root's 0600 file as $(id -un): exit $rc"
		same "the server's error text" "$(cat "$err")" \
			"can't open $tmp/secret: Permission denied"
	fi
	# the server saw its client's end close and exited
	for _ in $(seq 100); do
		pgrep -u "$(id -u)" -x opend >/dev/null || return 0
		sleep 0.1
	done
	die "opend still running 10 s after its client exited"
}

# strconf and strchg on one Stream, standard input of each (the shell
# opens it): the listing is exactly the pushed modules, topmost first.
check_strconf() {
	local bin=$1 tmp=$2 rc
	# (a character device: "<>" would make a file where there is none)
	[ -c /dev/asx ] || die "no /dev/asx (is asx.ko loaded?)"
	exec 3<>/dev/asx || die "cannot open /dev/asx"
	same "strconf on a new Stream" "$("$bin/strconf" <&3)" "loop"
	"$bin/strchg" -h count,pass <&3 || die "strchg -h count,pass: exit $?"
	same "strconf after -h count,pass" "$("$bin/strconf" <&3)" $'pass\ncount\nloop'
	same "strconf -t" "$("$bin/strconf" -t <&3)" "pass"
	same "strconf -m count" "$("$bin/strconf" -m count <&3; echo "rc $?")" $'yes\nrc 0'
	same "strconf -m csum" "$("$bin/strconf" -m csum <&3; echo "rc $?")" $'no\nrc 2'
	"$bin/strchg" -h csum,frame <&3 || die "strchg -h csum,frame: exit $?"
	same "after -h csum,frame" "$("$bin/strconf" <&3)" $'frame\ncsum\npass\ncount\nloop'
	"$bin/strchg" -p -u pass <&3 || die "strchg -p -u pass: exit $?"
	same "after -p -u pass" "$("$bin/strconf" <&3)" $'pass\ncount\nloop'
	"$bin/strchg" -p <&3 || die "strchg -p: exit $?"
	same "after -p" "$("$bin/strconf" <&3)" $'count\nloop'
	printf 'frame\ncsum\ncount\n' >"$tmp/conf.$$"
	"$bin/strchg" -f "$tmp/conf.$$" <&3 || die "strchg -f (frame csum count): exit $?"
	same "after -f frame,csum,count" "$("$bin/strconf" <&3)" $'frame\ncsum\ncount\nloop'
	printf 'pass\n' >"$tmp/conf.$$"
	"$bin/strchg" -f "$tmp/conf.$$" <&3 || die "strchg -f (pass): exit $?"
	same "after -f pass" "$("$bin/strconf" <&3)" $'pass\nloop'
	"$bin/strchg" -h nosuchmod <&3 2>/dev/null
	rc=$?
	[ $rc -eq 1 ] || die "strchg -h nosuchmod: exit $rc, want 1"
	"$bin/strchg" -p -u hold <&3 2>/dev/null
	rc=$?
	[ $rc -eq 1 ] || die "strchg -p -u hold (not there): exit $rc, want 1"
	same "after the failures" "$("$bin/strconf" <&3)" $'pass\nloop'
	"$bin/strchg" -h hold,count <&3 || die "strchg -h hold,count: exit $?"
	"$bin/strchg" -p -a <&3 || die "strchg -p -a: exit $?"
	same "after -p -a" "$("$bin/strconf" <&3)" "loop"
	same "strconf -t with no module" "$("$bin/strconf" -t <&3)" ""
	"$bin/strconf" </dev/null 2>/dev/null
	rc=$?
	[ $rc -eq 1 ] || die "strconf on /dev/null: exit $rc, want 1"
	exec 3<&-
	rm -f "$tmp/conf.$$"
}

case ${1:-} in
_check)	# _check NAME BIN TMP: one check, as whoever runs it
	"check_$2" "$3" "$4"
	exit ;;
build|run) ;;
*)	sed -n '3,17p' "$self" | sed 's/^# \{0,1\}//'
	exit 2 ;;
esac
mode=$1
dir=${2:?DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
. "$top/tools/lib/tap.sh"
echo "TAP version 13"

if [ "$mode" = build ]; then
	rm -rf "$dir/bin"
	mkdir -p "$dir/bin"
	read -r -a cflags <<<"$(pkg-config --cflags libasx)"
	read -r -a libs <<<"$(pkg-config --libs libasx)"
	for prog in "open fdpipe" "opend fdpipe" strconf strchg; do
		read -r name extra <<<"$prog"
		srcs=("$top/tools/xsi-ports/$name.c")
		[ -n "$extra" ] && srcs+=("$top/tools/xsi-ports/$extra.c")
		if ${CC:-cc} -std=gnu11 -Wall -Wextra -Werror "${cflags[@]}" \
			-o "$dir/bin/$name" "${srcs[@]}" "${libs[@]}" >"$dir/$name.log" 2>&1; then
			tap_ok "build xsi-ports/$name against the installed libasx"
		else
			sed 's/^/# /' "$dir/$name.log"
			tap_not_ok "build xsi-ports/$name"
		fi
	done
	tap_end xsi-ports
	exit
fi

# run: the files the open server sends, readable by nobody but the secret
tmp=$(mktemp -d /tmp/xsi-ports.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 1777 "$tmp"	# each user writes its own output there
printf 'The open server, Stevens 1992, section 15.5\nline two\n' >"$tmp/text"
head -c 200000 /dev/urandom >"$tmp/binary"
: >"$tmp/empty"
echo "root's only" >"$tmp/secret"
chmod 644 "$tmp/text" "$tmp/binary" "$tmp/empty"
chmod 600 "$tmp/secret"
# the script and the programs as nobody may reach them: the tree may be
# in a directory other users cannot enter (root's home is 0700)
mkdir "$tmp/run"
cp "$self" "$tmp/run/test.sh"
cp -r "$dir/bin" "$tmp/run/bin"
chmod -R a+rX "$tmp/run"
for check in open strconf; do
	for who in root nobody; do
		if [ $who = root ]; then
			as=()
		else
			as=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
		fi
		t0=$SECONDS
		out=$("${as[@]}" bash "$tmp/run/test.sh" _check "$check" "$tmp/run/bin" "$tmp" 2>&1)
		rc=$?
		echo "# $check as $who: $((SECONDS - t0)) s"
		if [ $rc -eq 0 ]; then
			tap_ok "xsi-ports $check as $who"
		else
			echo "$out" | sed 's/^/# /'
			tap_not_ok "xsi-ports $check as $who"
		fi
	done
done
tap_end xsi-ports
