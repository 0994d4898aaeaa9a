#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-asxd.sh - asxd and `asxctl svc` end to end, with the echo service:
# syntax check, start, list, the service answering, suspend holding a
# connection until resume, remove, reload of a changed file (SIGHUP and
# asxctl), a bad file refused with the old configuration still serving,
# a peer of another uid refused, SIGTERM stopping cleanly (exit 0: under
# ASan that includes no leak).  Inputs that once wedged asxd: a FIFO
# included (by -t and by a reload), an include bomb; and a reload that is
# legitimately slow (a service whose init sleeps): asxctl must still answer
# and SIGTERM must end asxd within its --stop-timeout; systemd's socket
# activation (a listening socket as fd 3, LISTEN_FDS/LISTEN_PID).  Every wait is
# bounded, so a wedged asxd fails the checks instead of hanging the run.
# Run as root (the uid check needs nobody).
#
# Usage: tools/asxd/test-asxd.sh [BUILD_DIR]   (default build; build/asan too)
# TAP output; the last line is "# asxd-test: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=$(cd "${1:-$top/build}" && pwd)
asxd=$b/bin/asxd
ctl=$b/bin/asxctl
echo_so=$b/lib/asx/services/echo.so
codec_so=$b/lib/asx/services/codec.so
slow_so=$b/asxd/test/slow.so
. "$top/tools/lib/tap-expect.sh"
. "$top/tools/lib/nobody.sh"

. "$top/tools/asxd/asxd-fixture.sh"
asxd_fixture test-asxd.sh "$asxd" "$ctl" "$echo_so" "$codec_so" "$slow_so"
chmod 755 "$dir"
# two free ports, from the kernel
read -r p1 p2 < <(python3 -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

# (bounded: an asxd that stops answering fails a check, it does not hang the run)
svc() { timeout 20 "$ctl" svc -s "$sock" "$@"; }
# send LINE to PORT, print the answer (within SECONDS, default 5)
ask() {
	python3 - "$1" "$2" "${3:-5}" <<'EOF'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.settimeout(float(sys.argv[3]))
s.sendall(sys.argv[2].encode() + b"\n")
try:
    print(s.recv(100).decode().strip())
except socket.timeout:
    print("(no answer)")
EOF
}
wait_for() {	# wait until the log has TEXT (10 s)
	for _ in $(seq 100); do grep -qF -- "$1" "$log" && return 0; sleep 0.1; done
	return 1
}
write_conf() {
	printf '# test-asxd.sh\ndynamic Echo Service_Object * %s:asx_echo_make() "-a 127.0.0.1:%s"\n%b' \
		"$echo_so" "$1" "${2:-}" > "$conf"
}

echo "TAP version 13"
write_conf "$p1"
tap_expect "asxd -t accepts a good file" 0 ': ok \(parsed and planned' -- "$asxd" -t -f "$conf"
printf 'dynamic Echo Service_Object * %s:asx_echo_make(\n' "$echo_so" > "$dir/bad.conf"
tap_expect "asxd -t names the line and column of an error" 1 \
	"bad.conf:2:1: expected '\\)'" -- "$asxd" -t -f "$dir/bad.conf"
tap_expect "asxd refuses to start on a bad file" 1 "bad.conf:2:1:" -- \
	"$asxd" -f "$dir/bad.conf" -s "$sock"
# -t is a dry run: what the plan finds, without loading anything
printf 'remove Nope\n' > "$dir/dry.conf"
tap_expect "asxd -t plans: a remove of nothing" 1 "dry.conf:1:1: no service 'Nope' to remove" -- \
	"$asxd" -t -f "$dir/dry.conf"
printf 'static Nobody_Registered\n' > "$dir/dry.conf"
tap_expect "asxd -t: a static service asxd does not have" 1 \
	"dry.conf:1:1: static service 'Nobody_Registered': the program registered no factory" -- \
	"$asxd" -t -f "$dir/dry.conf"
printf 'dynamic X Service_Object * ./nothing-here.so:f()\n' > "$dir/dry.conf"
tap_expect "asxd -t: a library that is not there" 1 \
	"dry.conf:1:1: service 'X': cannot load ./nothing-here.so: No such file or directory" -- \
	"$asxd" -t -f "$dir/dry.conf"
printf 'stream S { static framer static nosuch }\n' > "$dir/dry.conf"
tap_expect "asxd -t: an unknown static Module" 1 "dry.conf:1:26: stream 'S': no module 'nosuch'" -- \
	"$asxd" -t -f "$dir/dry.conf"
tap_expect "asxd -t: a missing file, with file:line:column" 1 "none.conf:1:1: No such file or directory" -- \
	"$asxd" -t -f "$dir/none.conf"
# a FIFO, included or as the file itself: refused at once (a blocking open wedged it)
mkfifo "$dir/p.fifo"
printf 'include "p.fifo"\n' > "$dir/fifo.conf"
tap_expect "asxd -t on a file including a FIFO" 1 "fifo.conf:1:1: cannot include 'p.fifo': not a regular file" -- \
	timeout 20 "$asxd" -t -f "$dir/fifo.conf"
tap_expect "asxd -t on a FIFO" 1 "p.fifo:1:1: not a regular file" -- timeout 20 "$asxd" -t -f "$dir/p.fifo"
# the include bomb: 5 files, each including the next 64 times (16.7 M reads unbounded)
for i in 0 1 2 3 4; do
	for _ in $(seq 64); do
		if [ "$i" -lt 4 ]; then echo "include \"bomb$((i + 1)).conf\""; else echo "# leaf"; fi
	done > "$dir/bomb$i.conf"
done
tap_expect "asxd -t on an include bomb stops at the bound" 1 \
	"bomb3.conf:47:1: more than 1024 includes in one configuration" -- \
	timeout 20 "$asxd" -t -f "$dir/bomb0.conf"
tap_expect "asxd --help" 0 'Usage: asxd' -- "$asxd" --help
tap_expect "asxd with a stray argument" 2 "unexpected argument 'x'" -- "$asxd" x

"$asxd" -f "$conf" -s "$sock" >"$log" 2>&1 &
pid=$!
wait_for "control socket" || echo "# asxd did not start: $(cat "$log")"
tap_expect "list shows the service, active, with its info" 0 \
	"^Echo +active .*echo.so:asx_echo_make \"-a 127.0.0.1:$p1\"" \
	"echo on 127.0.0.1:$p1, 0 connection" -- svc list
tap_expect "the service answers" 0 '^one$' -- ask "$p1" one
# a control client that sends nothing holds up neither other clients nor the
# services (the request is read on the loop, with its own 2-s timer)
python3 - "$sock" > "$dir/silent.out" 2>&1 <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect(sys.argv[1])
print(s.recv(200).decode().strip())
EOF
silent=$!
sleep 0.3
tap_expect "while a control client sends nothing, the service answers at once" 0 '^silent$' -- \
	ask "$p1" silent 1.5
tap_expect "... and asxctl is answered at once" 0 '^Echo +active' -- timeout 1.5 "$ctl" svc -s "$sock" list
wait "$silent"
tap_expect "... and the silent client is told after 2 s" 0 'no complete request line within 2 s' -- \
	cat "$dir/silent.out"
# a client that asks for a long answer and reads none of it holds asxd 2 s, not for ever
write_conf "$p1" "$(for i in $(seq 600); do printf 'stream Many%d { static pass }\\n' "$i"; done)"
tap_expect "a reload adds 600 Streams" 0 'reloaded' -- svc reload
python3 - "$sock" > "$dir/deaf.out" 2>&1 <<'EOF2' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"ASX-SVC 1 list\n")
time.sleep(8)          # reads nothing of the answer
print("deaf client done")
EOF2
deaf=$!
sleep 0.5
tap_expect "while a client reads none of a long answer, asxctl is answered within 6 s" 0 \
	'^Many600 +active +stream' -- timeout 6 "$ctl" svc -s "$sock" list
tap_expect "... and asxd says it cut that answer" 0 'read nothing of its answer for 2 s: answer cut' -- \
	cat "$log"
wait "$deaf"
write_conf "$p1"
tap_expect "a reload takes the 600 Streams away" 0 'reloaded' -- svc reload
tap_expect "suspend" 0 '' -- svc suspend Echo
tap_expect "list says suspended" 0 '^Echo +suspended' -- svc list
# a connection made while suspended waits, and is served after resume
python3 - "$p1" > "$dir/held.out" 2>&1 <<'EOF' &
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
s.settimeout(20)
s.sendall(b"held\n")
print(s.recv(100).decode().strip())
EOF
held=$!
tap_expect "a suspended service does not answer" 0 '^\(no answer\)$' -- ask "$p1" two 1
tap_expect "resume" 0 '' -- svc resume Echo
wait "$held"
tap_expect "the connection held while suspended is served after resume" 0 '^held$' -- \
	cat "$dir/held.out"
tap_expect "suspend of an unknown service" 1 'suspend Nope: no such service' -- svc suspend Nope
tap_expect "an unknown command" 2 "unknown command 'bogus'" -- svc bogus

# the example Stream (framer, checksum, codec.so's XDR Module): one Module suspended
write_conf "$p1" "stream Codec { static framer static cksum dynamic Xdr Module * $codec_so:asx_codec_xdr() }\n"
tap_expect "a reload adds the example Stream" 0 'reloaded' -- svc reload
tap_expect "list shows its Modules" 0 '^Codec +active +stream$' 'modules bottom first: framer cksum Xdr$' -- svc list
tap_expect "suspend STREAM/MODULE" 0 '' -- svc suspend Codec/cksum
tap_expect "list shows the Module suspended" 0 'framer cksum\(suspended\) Xdr' -- svc list
tap_expect "suspend of an unknown Module" 1 "suspend Codec/nope: stream 'Codec' has no module 'nope'" -- \
	svc suspend Codec/nope
tap_expect "suspend of a module of no stream" 1 "suspend Nope/x: no stream 'Nope'" -- svc suspend Nope/x
# the longest names each side accepts are the same (svcp_name_bad())
long_stream=$(printf 'S%.0s' $(seq 63))
long_mod=$(printf 'm%.0s' $(seq 31))
tap_expect "asxctl sends the longest STREAM/MODULE (63/31 bytes) and asxd looks it up" 1 \
	"no stream '$long_stream'" -- svc suspend "$long_stream/$long_mod"
tap_expect "asxctl refuses a 64-byte service name" 2 'a service name is at most 63 bytes' -- \
	svc suspend "${long_stream}S"
tap_expect "asxctl refuses a 32-byte module name" 2 "a module's name is at most 31 bytes" -- \
	svc suspend "$long_stream/${long_mod}m"
# asxd checks a request by itself too (another client, the same rule)
raw() {
	python3 - "$sock" "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
out = b""
while True:
    b = s.recv(4096)
    if not b:
        break
    out += b
print(out.decode().strip())
EOF
}
tap_expect "asxd refuses a 100-byte name with why (not a truncated lookup)" 0 \
	"^ASX-SVC 1 error $(python3 -c 'import errno; print(errno.EINVAL)') '.*' cannot be a service name: a service name is at most 63 bytes" -- \
	raw "ASX-SVC 1 suspend $(printf 'x%.0s' $(seq 100))"
tap_expect "suspend of a module of a service" 1 "suspend Echo/x: 'Echo' is a service, not a stream" -- \
	svc suspend Echo/x
tap_expect "remove of a module" 1 "remove Codec/cksum: a module is not removed by name" -- \
	svc remove Codec/cksum
tap_expect "suspend of a whole Stream" 1 "suspend Codec: a Stream cannot be suspended as a whole: suspend one of its modules \\(Codec/MODULE\\)" -- \
	svc suspend Codec
tap_expect "resume STREAM/MODULE" 0 '' -- svc resume Codec/cksum
write_conf "$p1" "stream Codec { static framer static cksum inactive dynamic Xdr Module * $codec_so:asx_codec_xdr() }\n"
tap_expect "a reload that says inactive suspends it" 0 'reloaded' -- svc reload
tap_expect "... in place" 0 'framer cksum\(suspended\) Xdr' -- svc list
write_conf "$p1" "stream Codec { static framer static cksum dynamic Xdr Module * $codec_so:asx_codec_xdr() }\nresume Codec/cksum\nsuspend Codec/Xdr\n"
tap_expect "a reload with suspend/resume STREAM/MODULE directives" 0 'reloaded' -- svc reload
tap_expect "... sets both in place" 0 'framer cksum Xdr\(suspended\)$' -- svc list
write_conf "$p1" "stream Codec { static framer static cksum }\nsuspend Codec/nope\n"
tap_expect "a directive naming no module is refused" 1 ":4:1: cannot suspend 'Codec/nope': stream 'Codec' has no module 'nope'" -- svc reload
tap_expect "... and the Stream runs as it was" 0 'framer cksum Xdr\(suspended\)$' -- svc list
write_conf "$p1"
tap_expect "a reload without it removes the Stream" 0 'reloaded' -- svc reload
tap_expect "... and the service still answers" 0 '^four-a$' -- ask "$p1" four-a

# reload: a changed port, by SIGHUP and by asxctl
write_conf "$p2"
kill -HUP "$pid"
wait_for "reloaded $conf"
tap_expect "SIGHUP reloads: the new port answers" 0 '^three$' -- ask "$p2" three
tap_expect "... and the old one is closed" 1 'refused' -- ask "$p1" x
write_conf "$p1" "static Nobody_Registered\n"
tap_expect "a reload that fails is refused with where and why" 1 \
	"svc.conf:3:1: static service 'Nobody_Registered': the program registered no factory" -- \
	svc reload
tap_expect "... and the old configuration still serves" 0 '^four$' -- ask "$p2" four
write_conf "$p1"
tap_expect "asxctl svc reload" 0 'reloaded' -- svc reload
tap_expect "... serves the file's port" 0 '^five$' -- ask "$p1" five

# a second asxd with the same file while Echo holds its port: refused for
# the socket, before it tries to start Echo a second time
tap_expect "a second asxd on the same socket is refused, services untouched" 1 \
	'another asxd is listening' -- "$asxd" -f "$conf" -s "$sock"
tap_expect "... and the first one still serves" 0 '^six$' -- ask "$p1" six

# another uid: the socket's mode keeps it out; opened up, SO_PEERCRED does.
# nobody runs a copy of asxctl with libasx beside it ($ORIGIN/../lib): the
# build may be in a directory nobody cannot enter (a clone in /root).
tap_expect "the socket's mode is 0600" 0 '^600$' -- stat -c %a "$sock"
nobody_ctl=$dir/nobody/bin/asxctl
nobody_stage "$dir/nobody/bin" "$ctl" && nobody_stage "$dir/nobody/lib" "$b"/lib/libasx.so*
tap_expect "nobody can run a copy of asxctl" 0 'asxctl' -- nobody_run "$nobody_ctl" --help
tap_expect "nobody cannot reach the socket" 3 'cannot reach asxd' -- \
	nobody_run "$nobody_ctl" svc -s "$sock" list
chmod 666 "$sock"
tap_expect "nobody is refused by uid" 1 'permission denied: uid 65534' -- \
	nobody_run "$nobody_ctl" svc -s "$sock" list

# a reload that includes a FIFO is refused; asxd goes on serving
write_conf "$p1" 'include "p.fifo"\n'
kill -HUP "$pid"
tap_expect "a SIGHUP reload including a FIFO is refused, logged" 0 "cannot include 'p.fifo': not a regular file" -- \
	sh -c "for i in \$(seq 100); do grep -q 'p.fifo' '$log' && break; sleep 0.1; done; cat '$log'"
tap_expect "... and asxd still answers" 0 "^Echo +active" -- svc list
write_conf "$p1"

tap_expect "remove" 0 '' -- svc remove Echo
tap_expect "list is empty" 0 '^$' -- svc list
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
tap_expect "SIGTERM stops asxd with status 0 (no leak under ASan)" 0 'stopped' -- \
	sh -c "cat '$log'; exit $rc"
tap_expect "the socket is gone" 0 '' -- test ! -e "$sock"

# systemd's socket activation: the control socket passed as descriptor 3
# (LISTEN_FDS, LISTEN_FDNAMES and LISTEN_PID set as systemd sets them: the
# pid is asxd's own, that of the shell that execs it)
activate() {	# activate SOCKET NAME ASXD-ARGS...: becomes asxd, a listening SOCKET its fd 3
	exec python3 - "$@" <<'EOF'
import os, socket, sys
path, name, args = sys.argv[1], sys.argv[2], sys.argv[3:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
s.listen(16)
os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
env = dict(os.environ, LISTEN_FDS="1", LISTEN_FDNAMES=name)
os.execve("/bin/sh", ["sh", "-c", 'LISTEN_PID=$$ exec "$0" "$@"'] + args, env)
EOF
}
sock3=$dir/activated.sock
log=$dir/activated.log
write_conf "$p1"
activate "$sock3" control "$asxd" -f "$conf" >"$log" 2>&1 &
pid=$!
wait_for "control socket"
tap_expect "socket activation: asxd takes the control socket systemd passed" 0 \
	"control socket $sock3 \\(from systemd\\)" -- cat "$log"
tap_expect "... asxctl reaches it there" 0 '^Echo +active' -- timeout 20 "$ctl" svc -s "$sock3" list
tap_expect "... the service answers" 0 '^seven$' -- ask "$p1" seven
write_conf "$p1" "static Nobody_Registered\n"
tap_expect "... a failed reload: asxctl exits 1 with asxd's reason" 1 \
	"svc.conf:3:1: static service 'Nobody_Registered'" -- timeout 20 "$ctl" svc -s "$sock3" reload
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
tap_expect "... SIGTERM stops it with status 0" 0 'stopped' -- sh -c "cat '$log'; exit $rc"
tap_expect "... and leaves systemd's socket file in place" 0 '' -- test -S "$sock3"
write_conf "$p1"
log=$dir/own.log
LISTEN_PID=1 LISTEN_FDS=1 "$asxd" -f "$conf" -s "$dir/own.sock" >"$log" 2>&1 &
pid=$!
wait_for "control socket"
tap_expect "socket activation meant for another pid is ignored" 0 "control socket $dir/own.sock\$" -- \
	cat "$log"
kill -TERM "$pid"
wait "$pid"
pid=
tap_expect "socket activation without a listening socket is refused" 1 \
	'no listening AF_UNIX stream socket' -- timeout 20 sh -c \
	'LISTEN_FDS=1 LISTEN_FDNAMES=control; export LISTEN_FDS LISTEN_FDNAMES; LISTEN_PID=$$ exec "$0" -f "$1" 3</dev/null' \
	"$asxd" "$conf"

# A legitimately slow reload (Slow's init sleeps 60 s): the socket and the
# signals stay served, and SIGTERM ends asxd within its --stop-timeout.
sock2=$dir/slow.sock
log2=$dir/slow.log
printf 'dynamic Echo Service_Object * %s:asx_echo_make() "-a 127.0.0.1:%s"\n' "$echo_so" "$p2" > "$dir/slow.conf"
"$asxd" -f "$dir/slow.conf" -s "$sock2" -T 3 >"$log2" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -qF "control socket" "$log2" && break; sleep 0.1; done
printf 'dynamic Slow Service_Object * %s:asx_test_slow() "60"\n' "$slow_so" >> "$dir/slow.conf"
kill -HUP "$pid"
sleep 2
tap_expect "during a slow reload asxctl answers at once: busy, and for how long" 1 \
	'busy: a reload of .*slow.conf has been running for [0-9.]+ s' -- \
	timeout 10 "$ctl" svc -s "$sock2" list
tap_expect "... and the running service still serves" 0 '^slow$' -- ask "$p2" slow
t0=$(date +%s.%N)
kill -TERM "$pid"
# the bound is 3 s; 20 s of slack for a loaded machine, far below the 60 s init
timeout 25 tail --pid="$pid" -f /dev/null
waited=$?
wait "$pid"
rc=$?
pid=
took=$(echo "$(date +%s.%N) - $t0" | bc)
echo "# SIGTERM during the slow reload: asxd exited $rc after $took s"
tap_expect "SIGTERM during a slow reload ends asxd within its bound" 0 '' -- test "$waited" = 0
tap_expect "... with status 1, saying the services were not finalised" 0 \
	'still running 3 s after the signal: exiting without finalising the services' -- \
	sh -c "cat '$log2'; exit $((rc == 1 ? 0 : 1))"
tap_expect "... and its socket is gone" 0 '' -- test ! -e "$sock2"

asxd_tap_end asxd-test
