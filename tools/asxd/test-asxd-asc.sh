#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-asxd-asc.sh - `asxctl asc` against asxd (protocol version 3): an
# svc.conf that loads an ASC policy from a shared object ("dynamic fifo
# ASC_Policy", test_svc_policy's svc_policy.so) and makes two ASC Streams,
# one on it and one on PRIO, each with a Module of two service threads
# (asxd/test/ascwork.so); asxctl asc lists both ASCs with their policy,
# VPs and threads; removing the policy is refused while its Stream runs,
# allowed after; older requests still answered as before; SIGTERM stops
# asxd cleanly (exit 0: under ASan, no leak).  Every wait is bounded.
#
# Usage: tools/asxd/test-asxd-asc.sh [BUILD_DIR]   (default build; build/asan too)
# TAP output; the last line is "# asxd-asc-test: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=$(cd "${1:-$top/build}" && pwd)
asxd=$b/bin/asxd
ctl=$b/bin/asxctl
work=$b/asxd/test/ascwork.so
pol=$b/asxd/test/svc_policy.so
. "$top/tools/lib/tap-expect.sh"

. "$top/tools/asxd/asxd-fixture.sh"
asxd_fixture test-asxd-asc.sh "$asxd" "$ctl" "$work" "$pol"
ctl_svc() { timeout 20 "$ctl" svc -s "$sock" "$@"; }
ctl_asc() { timeout 20 "$ctl" asc -s "$sock" "$@"; }
# one raw request line; the answer's first line
raw() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.recv(4096).decode().split("\n")[0])' "$sock" "$1"
}

cat > "$conf" <<EOF
dynamic fifo ASC_Policy * $pol:make_fifo()
stream Work asc 2 policy fifo { dynamic w Module * $work:asx_test_worker() }
stream Prio asc 1 { dynamic w Module * $work:asx_test_worker() }
EOF
echo "TAP version 13"
tap_expect "asxd -t checks the ASC_Policy line without loading it" 0 ': ok' -- \
	"$asxd" -t -f "$conf"
printf 'dynamic p ASC_Policy * %s/none.so:make_fifo()\n' "$dir" > "$dir/bad.conf"
tap_expect "... and names a policy whose library is missing" 1 \
	"bad.conf:1:1: policy 'p': cannot load $dir/none.so: No such file or directory" -- \
	"$asxd" -t -f "$dir/bad.conf"
"$asxd" -f "$conf" -s "$sock" >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -qF "control socket" "$log" && break; sleep 0.1; done

tap_expect "asxctl svc list shows the policy" 0 \
	"^fifo +active +$pol:make_fifo" "ASC policy 'fifo'" -- ctl_svc list
# the service threads start when their Stream opens; on a loaded host, a moment later
for _ in $(seq 100); do
	ctl_asc | grep -q "^ASC Work: policy fifo, 2 VPs, 2 threads" && break
	sleep 0.1
done
tap_expect "asxctl asc: each ASC with its policy, its VPs and threads" 0 \
	'^ASC Work: policy fifo, 2 VPs, 2 threads$' \
	'^ASC Prio: policy prio, 1 VP, 2 threads$' \
	'^  VP [0-9]+ +(running|idle|blocked)' \
	'^  thread 0x[0-9a-f]+ +(new|ready|running|blocked)' -- ctl_asc
out=$(ctl_asc)
nvp=$(grep -c '^  VP ' <<<"$out")
nth=$(grep -c '^  thread ' <<<"$out")
tap_expect "... 3 VP lines and 4 thread lines in all" 0 '' -- test "$nvp/$nth" = 3/4
tap_expect "removing the policy while its Stream runs: refused" 1 \
	"remove fifo: .*busy" -- ctl_svc remove fifo
tap_expect "... so it stays" 0 "^fifo +active" -- ctl_svc list
cat > "$conf" <<EOF
dynamic fifo ASC_Policy * $pol:make_fifo()
stream Prio asc 1 { dynamic w Module * $work:asx_test_worker() }
EOF
tap_expect "a reload without its Stream" 0 'reloaded' -- ctl_svc reload
out=$(ctl_asc)
tap_expect "... and asxctl asc lists the other ASC only" 0 '^ASC Prio: policy prio' -- \
	echo "$out"
tap_expect "... not the removed one" 1 '' -- grep -q '^ASC Work' <<<"$out"
tap_expect "the policy, unused: removed" 0 '' -- ctl_svc remove fifo
tap_expect "asxctl asc takes no argument" 2 'unexpected argument' -- ctl_asc extra
tap_expect "a version-3 request other than asc: refused" 0 \
	'^ASX-SVC 3 error 22 unknown request of version 3: asc$' -- raw "ASX-SVC 3 list"
tap_expect "a version-4 request: refused, naming the versions" 0 \
	'unsupported protocol version \(this asxd speaks 1, 2 for put/get and 3 for asc\)' -- \
	raw "ASX-SVC 4 asc"
tap_expect "version 1 answers as before" 0 '^Prio +active +stream' -- ctl_svc list
asxd_sigterm_check
asxd_tap_end asxd-asc-test
