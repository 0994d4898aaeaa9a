#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-kvsvc.sh PREFIX - the tutorial's example, examples/kvsvc, the way
# Documentation/tutorial.rst tells a user to run it: built with its own
# Makefile against the libasx installed in PREFIX (pkg-config only), its
# svc.conf checked with asxd -t, then run under the installed asxd as an
# unprivileged user (uid 65534: the tree may be in a directory only root
# enters, so what asxd needs is copied to a temporary directory), and
# driven: the protocol (SET/GET/DEL/KEYS/QUIT and its errors, with kvcli),
# many concurrent clients each writing and reading back its own keys
# (every value back once as written, nothing lost: tools/kvsvc-drive.py),
# suspend/resume with a connection open (its request held, answered on
# resume; a connection made meanwhile served too), remove with a request
# held by a suspend (the connection closed, the port refused), reload (the
# service back; a changed port), SIGTERM with a connection open (asxd
# exits 0 and says it stopped).  Used by `make check`'s install stage.
#
# KVSVC_CFLAGS (e.g. "-O1 -g -fsanitize=thread") builds the example with
# those flags, for a sanitised install (make SAN=asan install PREFIX=...)
# whose asxd then loads it (check.sh's install stage runs it so under ASan).
#
# Every wait is bounded; the whole run takes ~10 s on a quiet 2-CPU host
# and is given KVSVC_TEST_TIMEOUT seconds (default 120) by its caller.
# TAP; the last line is "# kvsvc-test: N passed, N failed".
set -uo pipefail

prefix=$(cd "$1" && pwd)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
clients=${KVSVC_CLIENTS:-64}
keys=${KVSVC_KEYS:-500}
. "$top/tools/lib/tap-expect.sh"
. "$top/tools/lib/nobody.sh"

dir=$(mktemp -d /tmp/kvsvc-test.XXXXXX)
chmod 755 "$dir"
pid=
bg=()
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT
drive() { timeout 60 /usr/bin/python3 "$top/tools/kvsvc-drive.py" "$@"; }

echo "TAP version 13"
# the example as a user has it: a copy of the directory, built with its Makefile
cp -R "$top/examples/kvsvc" "$dir/kvsvc"
tap_expect "the example builds with its Makefile, pkg-config pointed at the installed tree" 0 '' -- \
	env PKG_CONFIG_PATH="$prefix/lib/pkgconfig" ${KVSVC_CFLAGS:+CFLAGS="$KVSVC_CFLAGS"} \
	make -C "$dir/kvsvc"
tap_expect "... and says so when pkg-config finds no libasx" 2 'pkg-config finds no libasx' -- \
	env PKG_CONFIG_PATH=/nonexistent PKG_CONFIG_LIBDIR=/nonexistent make -C "$dir/kvsvc"
ex=$dir/kvsvc
cli=$ex/kvcli
for f in "$ex/kvsvc.so" "$cli"; do
	[ -e "$f" ] || { echo "Bail out! $f was not built"; exit 1; }
done
tap_expect "kvsvc.so takes libasx from asxd (no libasx NEEDED)" 1 '' -- \
	sh -c "readelf -d '$ex/kvsvc.so' | grep -q 'NEEDED.*libasx'"
tap_expect "asxd -t accepts the example's svc.conf as shipped" 0 ': ok \(parsed and planned' -- \
	sh -c "cd '$ex' && '$prefix/sbin/asxd' -t -f svc.conf"

# asxd, asxctl and libasx where uid 65534 reaches them ($ORIGIN/../lib)
nobody_stage "$dir/usr/sbin" "$prefix/sbin/asxd" &&
	nobody_stage "$dir/usr/bin" "$prefix/bin/asxctl" &&
	nobody_stage "$dir/usr/lib" "$prefix"/lib/libasx.so* ||
	{ echo "Bail out! cannot stage asxd for uid 65534"; exit 1; }
mkdir "$dir/run" && chown 65534:65534 "$dir/run"
sock=$dir/run/asxd.sock
log=$dir/run/asxd.log
svc() { timeout 20 "$dir/usr/bin/asxctl" svc -s "$sock" "$@"; }
wait_for() {	# until the log has TEXT (20 s), or asxd is gone
	for _ in $(seq 200); do
		grep -qF -- "$1" "$log" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# A free port below the kernel's ephemeral range (32768 up on Debian), which
# connect() never takes on its own: the load test's clients cannot take it
free_port() {
	python3 -c 'import random, socket
while True:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randrange(10000, 32768)))
        break
    except OSError:
        s.close()
print(s.getsockname()[1])'
}
# the shipped file with a free port; another test may take the port before
# asxd binds it: then another port
for attempt in 1 2 3; do
	p1=$(free_port)
	sed "s/127\.0\.0\.1:7070/127.0.0.1:$p1/" "$ex/svc.conf" > "$ex/test.conf"
	(cd "$ex" && exec setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$dir/usr/sbin/asxd" -f test.conf -s "$sock") >"$log" 2>&1 &
	pid=$!
	wait_for "control socket" && break
	echo "# asxd did not start (attempt $attempt): $(cat "$log")"
	grep -q 'Address already in use' "$log" || break
	kill "$pid" 2>/dev/null
	wait "$pid"
	pid=
done
if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
	echo "Bail out! asxd did not start"
	exit 1
fi
tap_expect "asxd runs it as uid 65534; list shows it active with its info" 0 \
	"^Kv +active +\./kvsvc\.so:kv_make \"-a 127\.0\.0\.1:$p1 -m 100000\"" \
	"kv on 127\.0\.0\.1:$p1, 0 key\(s\), 0 connection\(s\) open" -- svc list
tap_expect "... as uid 65534" 0 '^65534$' -- stat -c %u "$sock"

# the protocol, with the example's client
kv() { timeout 20 "$cli" -a "127.0.0.1:$p1" "$@"; }
tap_expect "SET, GET, KEYS, DEL with kvcli" 0 \
	'^OK$' '^VALUE hello, world$' '^KEYS 2 ' '^NOTFOUND$' -- \
	kv "SET greeting hello, world" "GET greeting" "SET other 1" KEYS "DEL other" "GET other"
tap_expect "commands in any case; a second SET replaces" 0 '^VALUE two$' -- \
	kv "set k one" "Set k two" "get k"
tap_expect "bad requests get ERR and the connection goes on" 0 \
	'^ERR usage: SET KEY VALUE' '^ERR key longer than 64 bytes' '^ERR empty line' '^VALUE two$' -- \
	kv "SET k" "GET a b" "FROB" "GET $(printf 'k%.0s' $(seq 65))" "" "GET k"
tap_expect "QUIT: BYE, then the server closes" 1 '^BYE$' 'the server closed the connection' -- \
	kv QUIT "GET k"
tap_expect "a line over 1024 bytes: ERR, closed" 0 '^ERR line longer than 1024 bytes$' '^\(closed\)$' -- \
	drive ask "$p1" 10 "SET long $(printf 'x%.0s' $(seq 1100))" "GET k"
tap_expect "CRLF lines (telnet, nc -C)" 0 '^VALUE two$' -- drive ask "$p1" 10 $'GET k\r'

# many clients at once
drive load "$p1" "$clients" "$keys" >"$dir/load.out" 2>&1
rc=$?
sed -n '1s/^/# /p' "$dir/load.out"
tap_expect "$clients concurrent clients x $keys keys: every value read back once as written, nothing lost" 0 \
	"; 0 errors$" -- sh -c "cat '$dir/load.out'; exit $rc"
tap_expect "info counts the keys left" 0 "kv on 127\.0\.0\.1:$p1, $((clients * (keys / 2) + 2)) key\(s\)" -- svc list

# suspend with a connection open: its request waits, and is answered on resume
rm -f "$dir/go"
drive session "$p1" "$dir/go" "GET k" "GET greeting" >"$dir/held.out" 2>&1 &
bg+=($!)
for _ in $(seq 100); do grep -qs VALUE "$dir/held.out" && break; sleep 0.1; done
tap_expect "suspend" 0 '' -- svc suspend Kv
tap_expect "list says suspended" 0 '^Kv +suspended' -- svc list
touch "$dir/go"
tap_expect "a new connection gets no answer while suspended" 0 '^\(no answer\)$' -- \
	drive ask "$p1" 1 "GET k"
tap_expect "... nor the request of the connection that was open" 0 '^VALUE two$' -- cat "$dir/held.out"
tap_expect "... (held: no second line)" 0 '^1$' -- grep -c . "$dir/held.out"
tap_expect "resume" 0 '' -- svc resume Kv
wait "${bg[-1]}"
tap_expect "the held request is answered after resume, nothing lost" 0 '^VALUE hello, world after [0-9.]+ s$' -- \
	cat "$dir/held.out"
tap_expect "the store is as it was" 0 '^VALUE two$' -- kv "GET k"

# remove while a request is held by a suspend: the connection is closed
rm -f "$dir/go"
drive session "$p1" "$dir/go" "GET k" "GET greeting" >"$dir/rm.out" 2>&1 &
bg+=($!)
for _ in $(seq 100); do grep -qs VALUE "$dir/rm.out" && break; sleep 0.1; done
svc suspend Kv >/dev/null
touch "$dir/go"
sleep 0.5
if ! tap_expect "remove, with a request held by a suspend" 0 '' -- svc remove Kv; then
	# kv_fini did not return: asxd runs a remove on its main thread, so it
	# answers nothing more; what follows would only time out
	echo "Bail out! asxd did not finish removing Kv in 20 s"
	exit 1
fi
wait "${bg[-1]}"
tap_expect "... closes that connection" 0 '^\(closed\) after' -- cat "$dir/rm.out"
tap_expect "... and the port" 1 'refused' -- kv KEYS
tap_expect "list is empty" 0 '^$' -- svc list

# reload: the file defines it, so it comes back (with an empty store)
tap_expect "reload brings it back" 0 'reloaded' -- svc reload
tap_expect "... serving, its store new" 0 '^KEYS 0$' -- kv KEYS
p2=$(free_port)
sed -i "s/127\.0\.0\.1:$p1/127.0.0.1:$p2/" "$ex/test.conf"
reloads=$(grep -c 'reloaded test.conf' "$log")
kill -HUP "$pid"
for _ in $(seq 200); do
	[ "$(grep -c 'reloaded test.conf' "$log")" -gt "$reloads" ] && break
	sleep 0.1
done
tap_expect "SIGHUP with a changed port: the new port serves" 0 '^OK$' -- \
	timeout 20 "$cli" -a "127.0.0.1:$p2" "SET moved yes"
tap_expect "... and the old one is closed" 1 'refused' -- kv KEYS

# SIGTERM with a connection open
drive ask "$p2" 30 "GET moved" "GET moved" >/dev/null 2>&1 &
bg+=($!)
kill -TERM "$pid"
if timeout 30 tail --pid="$pid" -f /dev/null; then
	wait "$pid"
	rc=$?
else
	echo "# asxd still runs 30 s after SIGTERM: killed"
	kill -9 "$pid"
	wait "$pid"
	rc=124
fi
pid=
tap_expect "SIGTERM with a client connected: asxd exits 0" 0 'asxd: stopped' -- \
	sh -c "cat '$log'; exit $rc"
tap_expect "asxd logged no error" 1 '' -- grep -iE 'error|fail|leak|sanitizer' "$log"

echo "1..$tap_n"
echo "# kvsvc-test: $((tap_n - tap_fails)) passed, $tap_fails failed"
[ "$tap_fails" = 0 ]
