#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# compare.sh - asx-ttcp with plain sockets (raw) and with the libasx IPC SAP
# wrappers (asx), side by side: over loopback and between two network
# namespaces joined by a veth pair.
#
# USAGE: tools/ttcp/compare.sh [--json] [--quick] [--runs N] [--no-netns]
#                              [--ttcp PATH] [-l LEN] [-n NUM]
#
# Runs are interleaved (raw, asx, raw, asx, ...) so a change in machine load
# hits both alike; each figure is the receiver's rate (it stops its clock at
# end of stream, so nothing still queued in socket buffers is counted).
# Prints a table of every run, the medians and the ratio asx/raw; --json
# prints {"loopback_ratio": R, "netns_ratio": R, ...} instead (medians of
# --runs runs, default 5).  The papers' claim, and the target: both >= 0.98.
#
# The namespaces exist only while the script runs (trap on EXIT):
#
#   asxttA<pid>                        asxttB<pid>
#   vA<pid> 10.232.0.1/24  <-- veth -->  vB<pid> 10.232.0.2/24   (receiver)
#
# Traffic goes only over loopback and that veth.  Needs root for the
# namespaces; --no-netns measures loopback only.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ttcp=$top/build/bin/asx-ttcp
runs=5
json=0
quick=0
netns=1
len=65536
nbuf=

usage() { sed -n '4,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
	case "$1" in
	--json) json=1 ;;
	--quick) quick=1 ;;
	--no-netns) netns=0 ;;
	--runs) runs=$2; shift ;;
	--ttcp) ttcp=$2; shift ;;
	-l) len=$2; shift ;;
	-n) nbuf=$2; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "compare.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
	shift
done
case "$runs" in ''|*[!0-9]*|0) echo "compare.sh: --runs wants a positive number" >&2; exit 2 ;; esac
# about 0.5 s per run on loopback here; --quick about a quarter of that
[ -n "$nbuf" ] || nbuf=$(( quick ? 3000 : 12000 ))
[ -x "$ttcp" ] || { echo "compare.sh: $ttcp not built (make tools)" >&2; exit 1; }

tmp=$(mktemp -d)
ns_a=asxttA$$
ns_b=asxttB$$
ns_made=0
cleanup() {
	if [ "$ns_made" = 1 ]; then
		ip netns del "$ns_a" 2>/dev/null || true
		ip netns del "$ns_b" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

setup_netns() {
	if [ "$(id -u)" != 0 ]; then
		echo "compare.sh: the namespace runs need root (or pass --no-netns)" >&2
		exit 1
	fi
	command -v ip >/dev/null || { echo "compare.sh: iproute2 (ip) is missing" >&2; exit 1; }
	ns_made=1
	ip netns add "$ns_a"
	ip netns add "$ns_b"
	ip -n "$ns_a" link add "vA$$" type veth peer name "vB$$" netns "$ns_b"
	ip -n "$ns_a" addr add 10.232.0.1/24 dev "vA$$"
	ip -n "$ns_b" addr add 10.232.0.2/24 dev "vB$$"
	ip -n "$ns_a" link set lo up
	ip -n "$ns_b" link set lo up
	ip -n "$ns_a" link set "vA$$" up
	ip -n "$ns_b" link set "vB$$" up
}

port=5801
# one_run PATH IMPL -> prints the receiver's bytes/s
one_run() {
	local path=$1 impl=$2 rx=() tx=() host=127.0.0.1 rxpid bps
	if [ "$path" = netns ]; then
		rx=(ip netns exec "$ns_b")
		tx=(ip netns exec "$ns_a")
		host=10.232.0.2
	fi
	port=$(( port + 1 ))
	"${rx[@]}" timeout 120 "$ttcp" -r -p "$port" -l "$len" --impl="$impl" --json \
		--timeout=20000 >"$tmp/rx.json" 2>"$tmp/rx.err" &
	rxpid=$!
	if ! "${tx[@]}" timeout 120 "$ttcp" -t -p "$port" -l "$len" -n "$nbuf" --impl="$impl" \
		"$host" 2>"$tmp/tx.err" >/dev/null; then
		cat "$tmp/tx.err" >&2
		kill "$rxpid" 2>/dev/null || true
		wait "$rxpid" 2>/dev/null || true
		echo "compare.sh: $path/$impl transmitter failed" >&2
		exit 1
	fi
	if ! wait "$rxpid"; then
		cat "$tmp/rx.err" >&2
		echo "compare.sh: $path/$impl receiver failed" >&2
		exit 1
	fi
	bps=$(sed -n 's/.*"bytes_per_sec": \([0-9.]*\).*/\1/p' "$tmp/rx.json")
	[ -n "$bps" ] || { echo "compare.sh: no figure from the receiver" >&2; exit 1; }
	echo "$bps"
}

median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
	if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -A res
measure() {
	local path=$1 i
	res[$path,raw]=
	res[$path,asx]=
	# warm-up run each (page cache, TCP memory), not counted
	one_run "$path" raw >/dev/null
	one_run "$path" asx >/dev/null
	for ((i = 0; i < runs; i++)); do
		if (( i % 2 == 0 )); then
			res[$path,raw]+=" $(one_run "$path" raw)"
			res[$path,asx]+=" $(one_run "$path" asx)"
		else
			res[$path,asx]+=" $(one_run "$path" asx)"
			res[$path,raw]+=" $(one_run "$path" raw)"
		fi
	done
	# shellcheck disable=SC2086
	res[$path,raw_med]=$(median ${res[$path,raw]})
	# shellcheck disable=SC2086
	res[$path,asx_med]=$(median ${res[$path,asx]})
	res[$path,ratio]=$(awk -v a="${res[$path,asx_med]}" -v r="${res[$path,raw_med]}" \
		'BEGIN { printf "%.4f", a / r }')
}

paths=(loopback)
measure loopback
if [ "$netns" = 1 ]; then
	setup_netns
	paths+=(netns)
	measure netns
fi

if [ "$json" = 1 ]; then
	printf '{"loopback_ratio": %s, "netns_ratio": %s, "runs": %d, "buflen": %d, "nbuf": %d' \
		"${res[loopback,ratio]}" "${res[netns,ratio]:-null}" "$runs" "$len" "$nbuf"
	for p in "${paths[@]}"; do
		printf ', "%s_raw_MBps": %.1f, "%s_asx_MBps": %.1f' \
			"$p" "$(awk -v v="${res[$p,raw_med]}" 'BEGIN { print v / 1e6 }')" \
			"$p" "$(awk -v v="${res[$p,asx_med]}" 'BEGIN { print v / 1e6 }')"
	done
	printf '}\n'
	exit 0
fi

printf 'asx-ttcp, TCP, -l %d -n %d (%d MB per run), %d interleaved runs each; MB/s at the receiver\n\n' \
	"$len" "$nbuf" $(( len * nbuf / 1000000 )) "$runs"
printf '%-9s %-4s' path impl
for ((i = 1; i <= runs; i++)); do printf ' %8s' "run$i"; done
printf ' %8s\n' median
for p in "${paths[@]}"; do
	for impl in raw asx; do
		printf '%-9s %-4s' "$p" "$impl"
		# shellcheck disable=SC2086
		for v in ${res[$p,$impl]}; do printf ' %8.0f' "$(awk -v v="$v" 'BEGIN { print v / 1e6 }')"; done
		printf ' %8.0f\n' "$(awk -v v="${res[$p,${impl}_med]}" 'BEGIN { print v / 1e6 }')"
	done
done
echo
for p in "${paths[@]}"; do
	printf '%-9s ratio asx/raw (medians) = %s   (target >= 0.98)\n' "$p" "${res[$p,ratio]}"
done
