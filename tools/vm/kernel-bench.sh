#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kernel-bench.sh - asx.ko's benchmarks on several kernels of the matrix, side by side.
#
# Usage: tools/vm/kernel-bench.sh [--rounds N] [--quick | --full] [--timeout SECS] [NAME...]
#
# Runs, in the test VM of each kernel NAME of the matrix (default: 6.12 and
# 6.12-rt; see tools/vm/asx-vm --kernels), with asx.ko built for it
# (tools/vm/kmod-build.sh into build/kmod/VER):
#     asx-bench --runs 3 --json sa-latency
#     asx-bench --runs 3 --json capsule-block --activations --rounds 5000
#     asx-bench --runs 3 --json kstream -m 64
#     asx-bench --runs 3 --json sa-preempt (5 runs at least: its own minimum)
# (smaller than the commands' defaults: a guest under TCG on a shared 2-CPU
# host is slow, and each kernel runs all four in turn)
# in --tcg multi (these want two CPUs running at once: Documentation/testing.rst),
# with vCPU 1 offline while asx.ko patches kernel code (see below).
# The kernels take turns, N rounds (default 2), so that a change in the host's
# load falls on each alike. Prints, per figure, the median over the rounds for
# each kernel and the ratio of each to the first kernel; keeps every round's
# JSON in build/kernel-bench/NAME-ROUND.json: one object of typed records
# (Documentation/benchmarks.rst, "Records") whose context is the guest's,
# with "commands" (the four run) and "vm" (the kernel's matrix NAME and
# release, qemu's TCG mode and the guest's vCPUs) added.
#
#   --quick   asx-bench --quick (smoke test of this script)
#   --full    the four commands' own default workloads, --runs 5
#   --timeout SECS  give up on a guest after SECS seconds (asx-vm --timeout;
#             default 2400): a guest that timed out counts as one that died
#
# Needs build/bin/asx-bench (make tools). Exit 1 if a run fails.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=kernel-bench.sh
cd "$top" || exit 2
rounds=2
timeout=2400
quick=()
names=()
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) sed -n '3,/^set -uo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
	--rounds) [ $# -ge 2 ] || { echo "$prog: --rounds needs N" >&2; exit 2; }
		rounds=$2; shift ;;
	--quick) quick=(--quick) ;;
	--full) quick=(--full) ;;
	--timeout) [ $# -ge 2 ] || { echo "$prog: --timeout needs SECS" >&2; exit 2; }
		timeout=$2; shift ;;
	-*) echo "$prog: unknown option '$1' (try --help)" >&2; exit 2 ;;
	*) names+=("$1") ;;
	esac
	shift
done
case "$rounds" in ''|*[!0-9]*|0) echo "$prog: --rounds wants a positive number" >&2; exit 2 ;; esac
case "$timeout" in ''|*[!0-9]*|0) echo "$prog: --timeout wants a positive number" >&2; exit 2 ;; esac
[ ${#names[@]} -gt 0 ] || names=(6.12 6.12-rt)
[ -x build/bin/asx-bench ] || { echo "$prog: build/bin/asx-bench not built (make tools)" >&2; exit 1; }

all=$(tools/vm/asx-vm --kernels "${names[@]}") || exit 1
declare -A ver
while read -r n v; do
	ver[$n]=$v
	tools/vm/kmod-build.sh "/lib/modules/$v/build" "build/kmod/$v" || exit 1
done <<<"$all"

# run_on NAME: the four benchmarks in NAME's guest, their JSON on stdout.
# The first activation group turns the preempt-notifier static key on, rmmod
# turns it off: code patching that can crash a guest under --tcg multi while
# both vCPUs run (Documentation/testing.rst, "Text patching under
# multi-threaded TCG"). Both happen with vCPU 1 offline: a warm-up run
# before, and after the benchmarks.
run_on() {
	local n=$1

	ASX_VM_KVER=${ver[$n]} tools/vm/asx-vm --tcg multi --timeout "$timeout" \
		--kmod "build/kmod/${ver[$n]}/kmod" -- sh -c "cpu1=/sys/devices/system/cpu/cpu1/online
		echo 0 > \$cpu1 && build/bin/asx-bench --quick --runs 1 sa-latency >/dev/null &&
		echo 1 > \$cpu1 || exit 1
		$bench sa-latency && $bench capsule-block --activations $cb_args &&
		$bench kstream $ks_args &&
		$bench sa-preempt
		rc=\$?; echo 0 > \$cpu1; exit \$rc"
}

out=build/kernel-bench
mkdir -p "$out"
bench="build/bin/asx-bench --json"
if [ "${quick[*]}" = --quick ]; then
	bench+=" --quick"; cb_args=; ks_args=
elif [ "${quick[*]}" = --full ]; then
	bench+=" --runs 5"; cb_args=; ks_args=
else
	bench+=" --runs 3"; cb_args="--rounds 5000"; ks_args="-m 64"
fi
for ((r = 1; r <= rounds; r++)); do
	for n in "${names[@]}"; do
		echo "$prog: round $r of $rounds on $n (${ver[$n]})" >&2
		# four JSON objects, merged below. A guest can die patching its own code at boot too under --tcg
		# multi (an int3 Oops before the command ran: asx-vm's exit 125):
		# such a run is tried again, twice at most.
		for try in 1 2 3; do
			run_on "$n" > "$out/$n-$r.raw"
			rc=$?
			[ "$rc" = 125 ] && [ "$try" -lt 3 ] || break
			echo "$prog: the $n guest died (exit 125); trying again" >&2
		done
		if [ "$rc" != 0 ]; then
			echo "$prog: FAIL: the benchmarks failed on $n (see above)" >&2
			exit 1
		fi
	done
done

vers=()
for n in "${names[@]}"; do vers+=("${ver[$n]}"); done
/usr/bin/python3 - "$out" "$rounds" "${#names[@]}" "${names[@]}" "${vers[@]}" <<'PY'
import json, statistics, sys
out, rounds, nk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
names, vers = sys.argv[4:4 + nk], sys.argv[4 + nk:]
figs = {}
for n, v in zip(names, vers):
    for r in range(1, rounds + 1):
        # one asx-bench object per command: the first's context, every
        # record, and the flat view made again from the records
        merged = {"context": None, "records": []}
        cmds, durations = [], []
        dec = json.JSONDecoder()
        text = open(f"{out}/{n}-{r}.raw").read()
        i = 0
        while True:
            while i < len(text) and text[i].isspace():
                i += 1
            if i >= len(text):
                break
            obj, i = dec.raw_decode(text, i)
            merged["context"] = merged["context"] or dict(obj["context"])
            merged["records"] += obj["records"]
            cmds.append(obj["context"].get("command"))
            durations += obj["context"].get("durations") or []
        # where the records come from: the guest's context, and the VM
        merged["context"].update(
            command=" ".join(str(c) for c in cmds), commands=cmds, durations=durations,
            seconds=sum(d.get("seconds", 0) for d in durations),
            vm={"kernel": n, "release": v, "emulation": "qemu TCG", "tcg": "multi",
                "vcpus": merged["context"].get("cpus")})
        merged.update((x["key"], x["value"]) for x in merged["records"])
        with open(f"{out}/{n}-{r}.json", "w") as f:
            json.dump(merged, f, indent=1)
        for x in merged["records"]:
            if isinstance(x["value"], (int, float)):
                figs.setdefault(x["key"], {}).setdefault(n, []).append(float(x["value"]))
w = max(len(k) for k in figs) if figs else 10
print(f"{'figure':<{w}}  " + "  ".join(f"{n:>12}" for n in names) +
      "  " + "  ".join(f"{n + '/' + names[0]:>16}" for n in names[1:]))
for k in sorted(figs):
    med = [statistics.median(figs[k][n]) if n in figs[k] else None for n in names]
    cells = "  ".join(f"{m:>12.4g}" if m is not None else f"{'-':>12}" for m in med)
    ratios = "  ".join(f"{m / med[0]:>16.3f}" if m is not None and med[0] else f"{'-':>16}"
                       for m in med[1:])
    print(f"{k:<{w}}  {cells}  {ratios}")
PY
