#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-gdb.sh PREFIX - the gdb commands of libasx (tools/gdb/libasx-gdb.py)
# against an installed tree (make install PREFIX=...), in TAP.
#
# Builds tools/gdb/parked.c against PREFIX's libasx with pkg-config, runs it
# under gdb in batch mode with gdb's auto-load pointed at PREFIX's
# share/gdb/auto-load (so the script is found by the name make install gave
# it, next to nothing else), stops while two user threads are parked and
# checks: the commands were auto-loaded; `asx ascs` shows the ASC, its
# policy and its VP; `asx threads` each thread's name, state and entry;
# `asx bt` the parked threads' frames down to the functions they parked
# in; the registers after `asx bt` are the ones before, and the program
# then runs to its end; a thread that does not exist is refused with a
# message, and so is a command without its argument.
set -uo pipefail

prefix=$(cd "$1" && pwd)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tools/lib/tap.sh"
echo "TAP version 13"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
if ! command -v gdb >/dev/null; then
	tap_not_ok "gdb is installed (tools/setup.sh installs it)"
	tap_end test-gdb
	exit 1
fi
# shellcheck disable=SC2046
if ${CC:-cc} -std=gnu11 -g -O1 -Wall -Wextra -Werror -o "$tmp/parked" "$top/tools/gdb/parked.c" \
	$(pkg-config --cflags libasx) $(pkg-config --libs libasx) -Wl,-rpath,"$prefix/lib" \
	>"$tmp/cc.log" 2>&1; then
	tap_ok "parked.c builds against the installed libasx"
else
	sed 's/^/#     /' "$tmp/cc.log"
	tap_not_ok "parked.c builds against the installed libasx"
	tap_end test-gdb
	exit 1
fi
script=$(find "$prefix/share/gdb/auto-load" -name 'libasx.so.*-gdb.py' 2>/dev/null | head -n 1)
so=$(readlink -f "$prefix/lib/libasx.so")
if [ -n "$script" ] && [ "$script" = "$prefix/share/gdb/auto-load$so-gdb.py" ]; then
	tap_ok "make install put the script at auto-load/<the library's real path>-gdb.py"
else
	tap_not_ok "make install put the script at auto-load$so-gdb.py (found: ${script:-none})"
fi

# the watchdog: a hang fails the test instead of the run
timeout "${GDB_TEST_TIMEOUT:-120}" gdb -nx -batch \
	-iex "set auto-load scripts-directory $prefix/share/gdb/auto-load" \
	-iex "set auto-load safe-path $prefix" \
	-ex "set pagination off" \
	-ex "break asx_gdb_ready" -ex run \
	-ex "echo @@ASCS\n" -ex "asx ascs" \
	-ex "echo @@THREADS\n" -ex "asx threads" \
	-ex "echo @@BTA\n" -ex "asx bt sleeper-a" \
	-ex "echo @@BTB\n" -ex "asx bt sleeper-b full" \
	-ex "echo @@REGS\n" -ex "info registers rip rsp rbp rbx r12 r13 r14 r15" \
	-ex "echo @@NOSUCH\n" -ex "asx bt no-such-thread" \
	-ex "echo @@USAGE\n" -ex "asx bt" \
	-ex "echo @@END\n" -ex continue \
	"$tmp/parked" >"$tmp/out" 2>&1
rc=$?
# the registers at the breakpoint, before any asx command ran: a second run
# would differ in addresses, so compare with what `info registers` printed
# at the same stop before `asx bt`
timeout "${GDB_TEST_TIMEOUT:-120}" gdb -nx -batch \
	-iex "set auto-load scripts-directory $prefix/share/gdb/auto-load" \
	-iex "set auto-load safe-path $prefix" \
	-ex "set pagination off" -ex "set disable-randomization on" \
	-ex "break asx_gdb_ready" -ex run \
	-ex "echo @@BEFORE\n" -ex "info registers rip rsp rbp rbx r12 r13 r14 r15" \
	-ex "echo @@MID\n" -ex "asx bt sleeper-a" -ex "asx bt sleeper-b" \
	-ex "echo @@AFTER\n" -ex "info registers rip rsp rbp rbx r12 r13 r14 r15" \
	-ex "echo @@END\n" -ex continue \
	"$tmp/parked" >"$tmp/out2" 2>&1
rc2=$?
part() {	# part FILE NAME: the lines between @@NAME and the next @@
	awk -v n="@@$2" '$0 == n { on = 1; next } /^@@/ { on = 0 } on' "$1"
}
check() {	# check NAME TEXT PATTERN...: every extended regexp matches TEXT
	local name=$1 text=$2 p
	shift 2
	for p in "$@"; do
		if ! grep -Eq -- "$p" <<<"$text"; then
			tap_not_ok "$name (no match for /$p/)"
			sed 's/^/#     /' <<<"$text" | head -n 20
			return
		fi
	done
	tap_ok "$name"
}
if [ "$rc" -eq 0 ] && grep -q 'parked: done' "$tmp/out"; then
	tap_ok "gdb ran the program to its end after the asx commands"
else
	tap_not_ok "gdb ran the program to its end after the asx commands (exit $rc)"
	sed 's/^/#     /' "$tmp/out" | tail -n 30
fi
check "asx ascs: the ASC, its policy, its VP" "$(part "$tmp/out" ASCS)" \
	'^ASC gdbasc \(0x[0-9a-f]+\): policy prio, 3 threads, 1 VPs$' '^  VP LWP [0-9]+ '
check "asx threads: name, state and entry of each" "$(part "$tmp/out" THREADS)" \
	"^0x[0-9a-f]+ 'sleeper-a' T_BLOCKED fn sleeper_a asc gdbasc$" \
	"^0x[0-9a-f]+ 'sleeper-b' T_BLOCKED fn sleeper_b asc gdbasc$" \
	"^0x[0-9a-f]+ 'waker' T_[A-Z]+ fn waker asc gdbasc"
check "asx bt: a thread parked in a condition wait" "$(part "$tmp/out" BTA)" \
	"^user thread 0x[0-9a-f]+ 'sleeper-a':" 'in asx__wait ' 'asx_asc_cond_(timed)?wait' \
	'in parked_in_cond ' \
	'in sleeper_a '
check "asx bt full: a thread parked on a semaphore, with its locals" "$(part "$tmp/out" BTB)" \
	'in asx__wait ' 'in parked_in_sem ' 'in sleeper_b ' 'self = 0x'
check "asx bt: an unknown thread is refused" "$(part "$tmp/out" NOSUCH)" \
	'asx bt: no user thread no-such-thread \(asx threads lists them\)'
check "asx bt: usage" "$(part "$tmp/out" USAGE)" 'usage: asx bt THREAD \[full\]'
before=$(part "$tmp/out2" BEFORE)
after=$(part "$tmp/out2" AFTER)
if [ "$rc2" -eq 0 ] && [ -n "$before" ] && [ "$before" = "$after" ] &&
   grep -q 'parked: done' "$tmp/out2"; then
	tap_ok "asx bt leaves the selected thread's registers as they were"
else
	tap_not_ok "asx bt leaves the selected thread's registers as they were (exit $rc2)"
	diff <(echo "$before") <(echo "$after") | sed 's/^/#     /' | head -n 20
fi
tap_end test-gdb
