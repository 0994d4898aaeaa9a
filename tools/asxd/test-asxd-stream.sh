#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-asxd-stream.sh - Streams of asxd's svc.conf reached from outside:
# `asxctl stream put/get` through a Stream of pass Modules (protocol
# version 2), its errors (no such Stream, a service, an empty head, the
# head served by an endpoint), an endpoint ("listen ... raw") echoing what
# clients write, and to each client its own bytes, a message asxd puts
# reaching every client, the endpoint gone with its Stream at a reload
# (clients see end of file), SIGTERM stopping cleanly (exit 0: under ASan,
# no leak).  Every wait is bounded.
#
# Usage: tools/asxd/test-asxd-stream.sh [BUILD_DIR]   (default build; build/asan too)
# TAP output; the last line is "# asxd-stream-test: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=$(cd "${1:-$top/build}" && pwd)
asxd=$b/bin/asxd
ctl=$b/bin/asxctl
. "$top/tools/lib/tap-expect.sh"

. "$top/tools/asxd/asxd-fixture.sh"
asxd_fixture test-asxd-stream.sh "$asxd" "$ctl"
ep=$dir/ep.sock
st() { timeout 20 "$ctl" stream -s "$sock" "$@"; }

cat > "$conf" <<EOF
stream Loop { static pass static counter }
stream Net listen "$ep" raw { static pass }
stream Lower { static pass }
mux Router
link Router Lower
EOF
echo "TAP version 13"
tap_expect "asxd -t accepts a Stream with an endpoint" 0 ': ok' -- "$asxd" -t -f "$conf"
"$asxd" -f "$conf" -s "$sock" >"$log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -qF "control socket" "$log" && break; sleep 0.1; done

tap_expect "asxctl svc list shows where the endpoint listens" 0 \
	"listening on $ep \\(raw\\), 0 open" -- timeout 20 "$ctl" svc -s "$sock" list
tap_expect "asxctl svc list calls a mux a mux, a Stream a stream" 0 \
	'^Router +active +mux' '^Lower +active +stream' -- timeout 20 "$ctl" svc -s "$sock" list
tap_expect "put a message down Loop" 0 '' -- st put Loop 'hello, stream'
tap_expect "put bytes that need escaping" 0 '' -- st put Loop "$(printf 'a\tb\\c\001')"
tap_expect "get: the first message back, its bytes" 0 '^hello, stream$' -- st get Loop
out=$(st get Loop | od -An -c | tr -s ' ')
tap_expect "get: the second, byte for byte" 0 '' -- test "$out" = ' a \t b \ c 001 \n'
tap_expect "get on an empty head waits, then says so" 1 \
	'get Loop: no message reached its head in 200 ms' -- st get Loop -w 200
tap_expect "get of a Stream that is not there" 1 'get Nope: no such stream' -- st get Nope
tap_expect "get of a Stream whose endpoint serves its head: refused" 1 \
	'get Net: its endpoint serves its head' -- st get Net
tap_expect "a bad Stream name is refused before sending" 2 "cannot be a Stream's name" -- \
	st put 'a/b' x
# the endpoint: two clients, each gets back its own bytes; what asxd puts goes to both
python3 - "$ep" "$ctl" "$sock" >"$dir/ep.out" 2>&1 <<'EOF'
import socket, subprocess, sys, time
path, ctl, sock = sys.argv[1:4]
cs = []
for i in range(2):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    cs.append(s)
time.sleep(0.3)
def take(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            break
        b += c
    return b
for i, s in enumerate(cs):
    s.sendall(b"client %d says hi" % i)
for i, s in enumerate(cs):
    print("echo", i, take(s, len(b"client 0 says hi")).decode())
subprocess.run([ctl, "stream", "-s", sock, "put", "Net", "to all"], check=True)
for i, s in enumerate(cs):
    print("all", i, take(s, 6).decode())
EOF
tap_expect "endpoint: each client gets its own bytes back" 0 \
	'echo 0 client 0 says hi' 'echo 1 client 1 says hi' -- cat "$dir/ep.out"
tap_expect "endpoint: a message asxd puts goes to every client" 0 'all 0 to all' 'all 1 to all' -- \
	cat "$dir/ep.out"
# a client connected while a reload removes the Stream
python3 - "$ep" >"$dir/eof.out" 2>&1 <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect(sys.argv[1])
try:
    print("eof" if s.recv(10) == b"" else "data")
except OSError as e:
    print("error", e)
EOF
cpid=$!
# until asxd has accepted it (python's start may be slow on a loaded machine)
for _ in $(seq 200); do
	timeout 20 "$ctl" svc -s "$sock" list | grep -q ', 1 open' && break
	sleep 0.1
done
echo 'stream Loop { static pass static counter }' > "$conf"
tap_expect "a reload without the Stream" 0 'reloaded' -- timeout 20 "$ctl" svc -s "$sock" reload
timeout 25 tail --pid="$cpid" -f /dev/null
tap_expect "... closes its clients (end of file)" 0 '^eof$' -- cat "$dir/eof.out"
tap_expect "... and its socket is gone" 0 '' -- test ! -e "$ep"
asxd_sigterm_check
asxd_tap_end asxd-stream-test
