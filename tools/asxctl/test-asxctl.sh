#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-asxctl.sh - asxctl driven from a shell as a user does, written from
# Documentation/asxctl.rst and asxctl(8) alone: every command's output and
# exit status, the errors for wrong input, --help; and `asxctl svc` against
# a socket nobody serves and one whose server never answers.  Needs asx.ko
# loaded and root (the test VM: tools/outsider-vm.sh run).  Every command
# runs under a timeout, so a hang is a failure, not a stuck check.
#
# Usage: tools/asxctl/test-asxctl.sh [ASXCTL]   (default build/bin/asxctl)
# TAP (tools/lib/tap.sh); the last line is "# asxctl-test: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ctl=${1:-$top/build/bin/asxctl}
tmp=$(mktemp -d)
srv=
cleanup() {
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	exec 9>&- 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
. "$top/tools/lib/tap.sh"
echo "TAP version 13"

# run [-t SECONDS] ARGS...: asxctl ARGS into $tmp/out, $tmp/err; status in rc
rc=0
run() {
	local t=30
	if [ "${1:-}" = -t ]; then t=$2; shift 2; fi
	timeout -k 2 "$t" "$ctl" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
# expect WHAT STATUS [STDOUT-RE [STDERR-RE]]: the last run's status and output
expect() {
	local what=$1 want=$2 o=${3:-} e=${4:-} why=
	[ "$rc" -eq "$want" ] || why="exit $rc, want $want"
	[ -z "$o" ] || grep -Eq -- "$o" "$tmp/out" || why="$why; stdout lacks /$o/"
	[ -z "$e" ] || grep -Eq -- "$e" "$tmp/err" || why="$why; stderr lacks /$e/"
	if [ -z "$why" ]; then
		tap_ok "$what"
	else
		tap_not_ok "$what: ${why#; }"
		sed 's/^/#   out: /' "$tmp/out" | head -n 12
		sed 's/^/#   err: /' "$tmp/err" | head -n 6
	fi
}
objects() { sed -n "s/^$1 //p" /proc/asx/objects; }

if [ ! -x "$ctl" ] || [ ! -e /dev/asx ]; then
	tap_not_ok "needs $ctl and asx.ko loaded (/dev/asx)"
	tap_end asxctl-test
	exit 1
fi
base=$(objects streams)

# ---------------------------------------------------------------- usage
run --help
expect "--help: usage on stdout, exit 0" 0 '^usage: asxctl streams'
run -h
expect "-h as --help" 0 '^usage: asxctl'
run
expect "no command: usage error" 2 '' 'usage: asxctl'
run bogus
expect "an unknown command names the commands" 2 '' "unknown command 'bogus'.*streams"
run stats --json
expect "an argument to stats is refused" 2 '' 'takes no arguments'
run streams extra
expect "an argument to streams is refused" 2 '' 'takes no arguments'

# ---------------------------------------------------------------- the read-only commands
run version
# the ABI version the header of this tree says (uapi/linux/asx.h)
abi_major=$(awk '$2 == "ASX_VERSION_MAJOR" { print $3 }' "$top/uapi/linux/asx.h")
abi_minor=$(awk '$2 == "ASX_VERSION_MINOR" { print $3 }' "$top/uapi/linux/asx.h")
expect "version" 0 "^ASX ABI $abi_major\\.$abi_minor\\.[0-9]+ features 0x[0-9a-f]+ max_depth 16 max_write 16384\$"
run --version
expect "--version as version" 0 '^ASX ABI '
run -V
expect "-V as version" 0 '^ASX ABI '
run modules
expect "modules: the built-in modules" 0 '^module count '
for m in pass frame csum hold; do
	grep -q "^module $m " "$tmp/out" || { rc=99; }
done
expect "modules: pass, frame, csum, hold listed" 0
grep -Eq 'loop' "$tmp/out" && grep -Eq 'mux' "$tmp/out" && grep -Eq 'null' "$tmp/out"
rc=$?
expect "modules: the drivers loop, null, mux listed" 0

# a Stream held by this shell: fd 9 open on /dev/asx
exec 9<>/dev/asx
run streams
expect "streams shows a Stream the shell holds" 0 "^stream [0-9]+ pid $$ "
grep -Eq '^ *q 0 r head ' "$tmp/out"
rc=$?
expect "streams: the head's queue lines" 0
run stats
expect "stats: object counts first" 0 "^streams $((base + 1))$"
grep -Eq "pid $$ .* +0 +0 +0 +0 +0 +0$" "$tmp/out"
rc=$?
expect "stats: one summed line for the held Stream, all zero" 0
exec 9>&-

# ---------------------------------------------------------------- push and pop
run push -n 3 count frame
expect "push -n 3 count frame: chain, top first" 0 '^head -> frame -> count -> loop$'
expect "push: 3 messages round the loop" 0 '^3 message\(s\) sent round the loop$'
grep -Eq '^ +1 +r frame ' "$tmp/out" && grep -Eq '^ +2 +w count ' "$tmp/out" &&
	! grep -q 'came back changed' "$tmp/out"
rc=$?
expect "push: every queue's statistics, nothing changed" 0
# head read queue: 3 puts (the messages came up)
awk '$1 == 0 && $2 == "r" && $3 == "head" && $8 == 3 { f = 1 } END { exit !f }' "$tmp/out"
rc=$?
expect "push: the head read queue counted the 3 messages" 0
run push -n 50 csum pass
expect "push -n 50 csum pass" 0 '^50 message\(s\) sent round the loop$'
run push
expect "push without a module: usage error" 2 '' 'usage'
run push no-such-module
expect "push of an unknown module: exit 1, says which" 1 '' 'push no-such-module: No such file'
run push -n abc pass
expect "push -n abc: a usage error, not 0 messages" 2 '' 'abc'
run push -n 5x pass
expect "push -n 5x: a usage error" 2 '' '5x'
run push -n -1 pass
expect "push -n -1: a usage error" 2 '' '-1'
# hold keeps every message: it never comes back, and asxctl must say so
run -t 60 push -n 2 hold
expect "push hold: a message that does not come back is reported, exit 1" 1 \
	'' 'did not come back'
run pop count pass frame
expect "pop: the chain after each pop" 0 '^popped: head -> pass -> count -> loop$'
expect "pop: down to the driver" 0 '^popped: head -> loop$'
[ "$(grep -c '^popped:' "$tmp/out")" -eq 3 ]
rc=$?
expect "pop: three pops for three modules" 0
run pop
expect "pop without a module: usage error" 2 '' 'usage'
run pop no-such-module
expect "pop of an unknown module: exit 1" 1 '' 'no-such-module'
run pop -h
expect "pop -h: usage, exit 0 (as push -h)" 0 '^usage: asxctl'

# ---------------------------------------------------------------- autopush
run autopush null
expect "autopush null: no list yet" 0 '^null: no autopush list$'
run autopush null count pass
expect "autopush null count pass: set" 0
run autopush null
expect "autopush null: the list, first to last" 0 '^null: count pass$'
grep -qx 'autopush null count pass' /proc/asx/modules
rc=$?
expect "autopush: /proc/asx/modules lists it" 0
run autopush null count no-such-module
expect "autopush of an unknown module: exit 1, says why" 1 '' 'not registered'
run autopush no-such-driver pass
expect "autopush of an unknown driver: exit 1" 1 '' 'no-such-driver'
run autopush -d null
expect "autopush -d null: deleted" 0
run autopush null
expect "autopush -d: the list is gone" 0 '^null: no autopush list$'
run autopush -d null
expect "autopush -d of no list: exit 1" 1 '' 'No such file'
run autopush
expect "autopush without a driver: usage error" 2 '' 'usage'
run autopush null a b c d e f g h i
expect "autopush of 9 modules: usage error, says the limit" 2 '' 'at most 8'

# nothing left behind by any of the above (the kernel frees after a grace period)
for _ in $(seq 100); do
	[ "$(objects streams)" -eq "$base" ] && break
	sleep 0.1
done
[ "$(objects streams)" -eq "$base" ]
rc=$?
expect "no Stream left behind ($(objects streams), started with $base)" 0

# ---------------------------------------------------------------- svc, without asxd
run svc -s "$tmp/nobody.sock" list
expect "svc: no asxd at the socket: exit 3" 3 '' 'cannot reach asxd'
run svc bogus
expect "svc: an unknown command: exit 2" 2 '' "unknown command 'bogus'"
run svc suspend
expect "svc suspend without a name: exit 2" 2 '' 'which service'
run svc list extra
expect "svc list extra: exit 2" 2 '' "unexpected argument 'extra'"
run svc -s
expect "svc -s without a socket: exit 2, says so" 2 '' '-s needs an argument'
run svc --help
expect "svc --help" 0 '^usage: asxctl svc'
# a server that accepts and never answers: asxctl must give up, not hang
python3 - "$tmp/mute.sock" <<'EOF' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(4)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
EOF
srv=$!
for _ in $(seq 50); do [ -S "$tmp/mute.sock" ] && break; sleep 0.1; done
t0=$SECONDS
run -t 60 svc -s "$tmp/mute.sock" -t 2 list
expect "svc -t 2: an asxd that never answers: exit 3 in bounded time ($((SECONDS - t0)) s)" 3 \
	'' 'no answer from asxd .* within 2 s'
run svc -t 0 list
expect "svc -t 0: a usage error" 2 '' "-t takes seconds"
run svc -t
expect "svc -t without seconds: a usage error" 2 '' "-t needs an argument"
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
srv=

tap_end asxctl-test
