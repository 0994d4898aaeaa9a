#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# test-report.sh - asx-bench's records and asx-report, on small real runs.
#
# A quick asx-bench run (--quick --runs 1 of COMMAND, default: every
# command) and a quick `asx-bench arch` (every record the papers' plots
# draw; well under a second): their records must pass asxrecords.py's
# checks, and the reports made of them, of the two merged with one value
# null, of the TCP sweeps alone and of an empty run must parse with every
# element closed in order, load nothing, hold only valid PNGs, show every
# record's key, and say "not measured in this run" exactly for the figures
# whose records are absent (check-html.py).  Bad input (no file, not JSON,
# not asx-bench's object, a record with a field missing, a wrong or
# unknown unit, a measurement or a key twice, a flat view that disagrees
# with its record, a bad option) must exit non-zero with a message, from
# asx-report and from asxrecords.py check alike.
#
# Usage: tools/report/test-report.sh [BUILD_DIR] [COMMAND [ARG...]]   (default build, all)
# TAP output; the last line is "# report-test: N passed, N failed".
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
b=$(cd "${1:-$top/build}" && pwd)
[ $# -eq 0 ] || shift
cmds=("$@")
[ ${#cmds[@]} -gt 0 ] || cmds=(all)
bench=$b/bin/asx-bench
report=$top/tools/report/asx-report
check=$top/tools/report/check-html.py
records=$top/tools/report/asxrecords.py
edit=$top/tools/report/edit-records.py
py=/usr/bin/python3
. "$top/tools/lib/tap-expect.sh"

[ -x "$bench" ] || { echo "test-report.sh: $bench not built (make tools)" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# 003 Figures 7 and 8, 004 Table 1 and Figure 2, the platform costs: from
# quick runs of their commands, each figure plotted from its records alone
# (one image, the paper's words beside it) and "not measured" without them
papers_003_004() {
	local c f want keep
	mkdir "$dir/p34"
	for c in xdr asc-yield 'capsule-block --user' platform; do
		# shellcheck disable=SC2086 # a command and its options
		tap_expect "asx-bench --quick --runs 1 $c" 0 -- \
			"$bench" --quick --runs 1 --json-file "$dir/p34/${c%% *}.json" $c
	done
	"$py" "$edit" "$dir/p34/all.json" "$dir/p34/"{xdr,asc-yield,capsule-block,platform}.json
	tap_expect "003, 004, platform: the records check" 0 '^ok \(' -- \
		"$py" "$records" check "$dir/p34/all.json" --finite --require e2e_raw_mbs_16 \
		e2e_raw_mbs_4096 e2e_ours_mbs_64 e2e_over_raw_256 platform_switch_asc_ns \
		platform_cond_handoff_asx_ns platform_mutex_contended_pthread_ns prio1_sync_s \
		user1_block_s user2_sync_s
	tap_expect "003, 004, platform: all $nfig34 plotted, $((nfig - nfig34)) others not measured" \
		0 'ok \(' -- sh -c '"$1" "$2" "$3" -o "$4" >/dev/null && "$1" "$5" "$4" "$3" \
		--missing "$6" --images "$7"' sh "$py" "$report" "$dir/p34/all.json" \
		"$dir/p34/all.html" "$check" $((nfig - nfig34)) "$nfig34"
	# figure: the records it draws from (a Python test of r), a phrase of
	# the paper's beside it (papers.json)
	for f in \
		'xdr_memory|r["bench"] == "xdr" and r.get("experiment") == "memory"|003 Figure 7' \
		'xdr_e2e|r["bench"] == "xdr" and r.get("experiment") == "e2e"|003 Figure 8' \
		'asc_yield|r["bench"] == "asc-yield"|SunOS kernel pthreads' \
		'capsule_block|r["bench"] == "capsule-block"|User 2' \
		'platform|r["bench"] == "platform"|about 30 us between two LWPs'; do
		IFS='|' read -r c keep want <<<"$f"
		"$py" "$edit" "$dir/p34/only-$c.json" "$dir/p34/all.json" --keep "$keep"
		"$py" "$edit" "$dir/p34/no-$c.json" "$dir/p34/all.json" --keep "not ($keep)"
		tap_expect "$c: plotted from its records alone, beside the paper's" 0 'ok \(' -- \
			sh -c '"$1" "$2" "$3" -o "$4" >/dev/null && grep -q "$7" "$4" &&
			"$1" "$5" "$4" "$3" --missing "$6" --images 1' sh "$py" "$report" \
			"$dir/p34/only-$c.json" "$dir/p34/only-$c.html" "$check" $((nfig - 1)) "$want"
		tap_expect "$c: not measured without its records" 0 'ok \(' -- \
			sh -c '"$1" "$2" "$3" -o "$4" >/dev/null &&
			"$1" "$5" "$4" "$3" --missing "$6" --images "$7"' sh "$py" "$report" \
			"$dir/p34/no-$c.json" "$dir/p34/no-$c.html" "$check" \
			$((nfig - nfig34 + 1)) $((nfig34 - 1))
	done
}

echo "TAP version 13"

# the figures of the papers' plots in asx-report: 11 from asx-bench arch's
# records, 1 from asx-bench stream's, 1 from asx-bench ttcp's
nfig=13
# and 5 of 003 and 004 and the platform costs (papers_003_004 below): 2
# from xdr's records, 1 each from asc-yield's, capsule-block's, platform's
nfig34=5
nfig=$((nfig + nfig34))

tap_expect "asx-report --help" 0 'usage: asx-report' 'RESULTS' -- "$py" "$report" --help

# a small real run; with `all`, its stderr has a progress line per command
mkdir "$dir/real"
progress=()
[ "${cmds[*]}" != all ] ||
	progress=('^\[1/[0-9]+\] [a-z-]+ +done in [0-9]+ s, elapsed [0-9]+ s, about [0-9]+ s left$')
tap_expect "asx-bench --quick --runs 1 ${cmds[*]}" 0 "${progress[@]}" -- \
	"$bench" --quick --runs 1 --json-file "$dir/real/results.json" \
	--csv "$dir/real/results.csv" "${cmds[@]}"
tap_expect "the real run's records check" 0 '^ok \([1-9][0-9]* records' -- \
	"$py" "$records" check "$dir/real/results.json" --finite
tap_expect "asx-bench arch --quick --runs 1" 0 -- \
	"$bench" --quick --runs 1 --json-file "$dir/arch.json" arch
tap_expect "arch's records check, with the flat keys the docs quote" 0 '^ok \(' -- \
	"$py" "$records" check "$dir/arch.json" --require arch_nproc arch_lp_tcp_mbps_pe1 \
	arch_cp_asc_tcp_xdr_mbps_pe2 arch_mp_udp_speedup_pe4 arch_lp_asc_tcp_uswitch_per_msg \
	arch_mp_tcp_lock_ns_per_msg arch_cp_tcp_conn1_mbps arch_mp_tcp_map_rcu_conn16_mbps \
	cp_over_lp_tcp mp_over_lp_tcp_xdr lp_asc_over_lp_pthread ttcp_msg_over_task_udp
arch_full() {
	local d=$dir/wb a=$dir/arch.json
	local wb='r.get("experiment") == "pes" and (r["metric"] in ("vcsw_per_msg", "icsw_per_msg") or r.get("lock") in ("mutex", "cond"))'
	tap_expect "arch: FP, white-box keys at every PE, lock kinds, layers" 0 '^ok \(' -- \
		"$py" "$records" check "$a" --require arch_fp_tcp_mbps_pe1 \
		arch_fp_asc_udp_xdr_speedup_pe1 fp_over_lp_tcp fp_over_lp_tcp_xdr \
		arch_fp_tcp_csw_per_msg arch_lp_tcp_vcsw_per_msg_pe1 arch_cp_tcp_icsw_per_msg_pe1 \
		arch_mp_tcp_lock_mutex_ns_per_msg_pe1 arch_lp_udp_lock_cond_ns_per_msg_pe1 \
		arch_lp_asc_tcp_uswitch_per_msg_pe1
	tap_expect "arch: warm-up in the context, layer_threads 1, 2 and 4" 0 '^1,2,4 0\.1 [1-9]' -- \
		"$py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = sorted(r["layer_threads"] for r in d["records"] if r.get("experiment") == "layers")
s = d["context"]["settings"]
print(",".join(map(str, t)), s["arch_warmup_fraction"], s["arch_warmup"])' "$a"
	tap_expect "report: FP in the throughput figure, the paper's words" 0 \
		'FP TCP: peak' 'FP over LP, TCP' 'Figure 2 names Functional Parallelism' \
		'2 threads per layer [0-9.]+ Mbit/s \([0-9.]+x of one\) <code>arch_lp_tcp_tpl2_mbps_pe' \
		'settings.*arch_warmup' -- cat "$dir/merged/out.html"
	# the curves only (no record at nproc: the bars are missing), then nothing
	mkdir "$d"
	"$py" "$edit" "$d/results.json" "$a" --context '{"cpus": 4096}' --keep "$wb"
	tap_expect "report with the white-box curves only" 0 -- \
		"$py" "$report" "$d/results.json"
	tap_expect "curves: 2 plots (switches, mutex and cond), $((nfig - 2)) not measured" 0 \
		'ok \(' -- "$py" "$check" "$d/report.html" "$d/results.json" \
		--missing $((nfig - 2)) --images 2
	tap_expect "curves: beside Figures 18-22 and 23-27" 0 'Figures 18 \(CP TCP\)' \
		'Figures 23 \(CP TCP\)' 'about 18,000 ms' 'in mutexes and' -- cat "$d/report.html"
	"$py" "$edit" "$d/none.json" "$a" --keep "not ($wb)"
	tap_expect "no curves' records: both curve figures not measured" 0 \
		'Not measured in this run \(no arch records of the PE sweep \(experiment pes\) of metric vcsw' \
		'Not measured in this run \(no arch records of the PE sweep \(experiment pes\) of metric lock_ns_per_msg with lock' \
		-- sh -c '"$1" "$2" "$3" -o "$4" >/dev/null && cat "$4"' _ "$py" "$report" "$d/none.json" \
		"$d/none.html"
}

tap_expect "report from the real run" 0 "$dir/real/report.html" -- \
	"$py" "$report" "$dir/real/results.json"
read -r real_arch real_stream real_ttcp < <("$py" -c 'import json, sys
r = json.load(open(sys.argv[1]))["records"]
print(sum(x["bench"] == "arch" for x in r),
      int(any(x["bench"] == "stream" and x["key"] == "mp_gbps" for x in r)),
      int(any(x["bench"] == "ttcp" and x["metric"] == "mbps" for x in r)))' \
	"$dir/real/results.json" 2>/dev/null)
# n: the figures not of arch's records (stream's, ttcp's) that the run drew
n=$(( ${real_stream:-0} + ${real_ttcp:-0} ))
# the figures of 003, 004 and the platform costs the real run drew
n34=$("$py" -c 'import json, sys
r = json.load(open(sys.argv[1]))["records"]
has = lambda **w: any(all(x.get(f) == v for f, v in w.items()) for x in r)
print(sum((has(bench="xdr", experiment="memory"), has(bench="xdr", experiment="e2e"),
           has(bench="asc-yield", metric="switch_ns"), has(bench="capsule-block"),
           has(bench="platform"))))' "$dir/real/results.json" 2>/dev/null)
n34=${n34:-0}
n=$((n + n34))
if [ "${real_arch:-0}" = 0 ]; then
	# no arch command: only the stream and ttcp figures are drawn (with them)
	tap_expect "real run: well formed, every key, $((nfig - n)) figures not measured" 0 \
		'ok \(' -- "$py" "$check" "$dir/real/report.html" "$dir/real/results.json" \
		--missing $((nfig - n)) --images "$n"
else
	tap_expect "real run: well formed, every key, valid PNGs" 0 'ok \(' -- \
		"$py" "$check" "$dir/real/report.html" "$dir/real/results.json"
fi

# every arch record beside the real run's; one value null; the context's
# words escaped, its durations shown
mkdir "$dir/merged"
tap_expect "merge the real run and arch's, one value null" 0 -- \
	"$py" "$edit" "$dir/merged/results.json" "$dir/real/results.json" "$dir/arch.json" \
	--set 'r["key"] == "arch_mp_tcp_conn16_mbps"' 'value=null' \
	--context '{"cpu": "Test CPU <&> 9000", "kernel": "6.1.0-test",
		    "durations": [{"what": "arch: pe-sweep", "seconds": 60.5}]}'
tap_expect "report with every arch record" 0 -- \
	"$py" "$report" "$dir/merged/results.json" -o "$dir/merged/out.html"
# the figures not of arch's records: stream's, ttcp's and nfig34
tap_expect "every arch record: well formed, all keys, $((nfig - 2 - nfig34 + n)) valid PNGs" 0 \
	'ok \(' -- "$py" "$check" "$dir/merged/out.html" "$dir/merged/results.json" \
	--missing $((2 + nfig34 - n)) --images $((nfig - 2 - nfig34 + n))
tap_expect "the machine, escaped, and the parts' durations" 0 \
	'Test CPU &lt;&amp;&gt; 9000' '6\.1\.0-test' 'arch: pe-sweep' -- cat "$dir/merged/out.html"
tap_expect "the paper's result (papers.json) beside this run's" 0 'about 9 times below CP' \
	'CP over LP, TCP' 'This run' -- cat "$dir/merged/out.html"

# only the TCP sweeps: the TCP throughput and speed-up figures drawn, the
# others not measured
mkdir "$dir/tcp"
"$py" "$edit" "$dir/tcp/results.json" "$dir/arch.json" --keep \
	'r.get("experiment") == "pes" and r["metric"] in ("mbps", "speedup") and r["proto"] == "tcp"'
tap_expect "report with only the TCP sweeps" 0 -- \
	"$py" "$report" "$dir/tcp/results.json"
tap_expect "TCP sweeps only: 2 plots, $((nfig - 2)) figures not measured" 0 'ok \(' -- \
	"$py" "$check" "$dir/tcp/report.html" "$dir/tcp/results.json" \
	--missing $((nfig - 2)) --images 2

# 002's ttcp: absent from arch's run, the figure says so; a ttcp run of
# its own plots it beside the paper's values, and the headline row has it
tap_expect "report from arch's run alone" 0 -- "$py" "$report" "$dir/arch.json" \
	-o "$dir/arch.html"
tap_expect "... the ttcp figure there, not measured" 0 '002: C sockets against the wrappers' \
	'Not measured in this run \(no ttcp records' -- cat "$dir/arch.html"
mkdir "$dir/ttcp"
tap_expect "asx-bench ttcp --quick --runs 1" 0 -- \
	"$bench" --quick --runs 1 --json-file "$dir/ttcp/results.json" ttcp
tap_expect "report from the ttcp run" 0 -- "$py" "$report" "$dir/ttcp/results.json"
tap_expect "ttcp only: its figure plotted, $((nfig - 1)) not measured" 0 'ok \(' -- \
	"$py" "$check" "$dir/ttcp/report.html" "$dir/ttcp/results.json" \
	--missing $((nfig - 1)) --images 1
tap_expect "ttcp: the paper's values and the headline row beside this run's" 0 \
	'No significant penalty|no significant penalty' 'ttcp_wrapper_over_c' \
	'loopback: wrappers over C, median' -- cat "$dir/ttcp/report.html"

# 001 in full: FP in the sweeps, the white-box curves against PEs, LP's
# threads per layer, the warm-up in the context
arch_full
# an empty run is a (poor) run, not an error
echo '{"context": {}, "records": []}' >"$dir/empty.json"
tap_expect "an empty run: every figure not measured" 0 -- \
	"$py" "$report" "$dir/empty.json" -o "$dir/empty.html"
tap_expect "... and the page is well formed" 0 'ok \(' -- \
	"$py" "$check" "$dir/empty.html" "$dir/empty.json" --missing "$nfig" --images 0

papers_003_004

# bad input: asx-report and asxrecords.py check both refuse it
tap_expect "no layers records: the line says so" 0 'no LP run with several threads per layer' \
	-- cat "$dir/empty.html"
bad() {
	local what=$1 file=$2
	shift 2
	tap_expect "$what: asx-report exits 1" 1 "$@" -- \
		"$py" "$report" "$file" -o "$dir/x.html"
	tap_expect "$what: asxrecords.py check exits 1" 1 "$@" -- "$py" "$records" check "$file"
}
bad "no such file" "$dir/nonexistent.json" 'cannot read .*nonexistent'
printf '{"context": {}, "records": [' >"$dir/trunc.json"
bad "truncated JSON" "$dir/trunc.json" 'is not valid JSON'
echo '[1, 2]' >"$dir/list.json"
bad "a JSON array" "$dir/list.json" 'expected one JSON object'
echo '{"arch_nproc": 2, "mp_gbps": 1.5}' >"$dir/flat.json"
bad "the flat object alone (no records)" "$dir/flat.json" 'no "records" list'
a=$dir/arch.json
mp='r["metric"] == "mbps"'
"$py" "$edit" "$dir/str.json" "$a" --set "$mp" 'value="fast"'
bad "a value not a number" "$dir/str.json" 'value is .fast., not a number'
"$py" "$edit" "$dir/nounit.json" "$a" --drop unit
bad "a record without its unit" "$dir/nounit.json" "no field 'unit'"
"$py" "$edit" "$dir/nopes.json" "$a" --drop pes
bad "a record without its pes (null is not absent)" "$dir/nopes.json" "no field 'pes'"
"$py" "$edit" "$dir/wrongunit.json" "$a" --set "$mp" 'unit="MB/s"'
bad "a wrong unit (MB/s among Mbit/s)" "$dir/wrongunit.json" 'unit MB/s, but arch mbps is in Mbit/s in [0-9]+ other'
"$py" "$edit" "$dir/badunit.json" "$a" --set "$mp" 'unit="furlongs/s"'
bad "an unknown unit" "$dir/badunit.json" "unit is 'furlongs/s', not one of"
"$py" "$edit" "$dir/dupm.json" "$a" --dup-measurement
bad "a measurement twice (under two keys)" "$dir/dupm.json" 'the same measurement as record 0'
"$py" "$edit" "$dir/dupk.json" "$a" --dup-key
bad "a key twice" "$dir/dupk.json" 'the key of record 0 again'
"$py" "$edit" "$dir/off.json" "$a" --flat-off
bad "a flat view that disagrees with its record" "$dir/off.json" 'flat view'
"$py" "$edit" "$dir/xdr.json" "$a" --set "$mp" 'proto=null'
bad "xdr set without a proto" "$dir/xdr.json" 'xdr is set exactly when proto is'
# every figure and table of the five papers, each linked to its figures or
# with why none; a coverage list gone stale is refused
ncov=$("$py" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["coverage"]["items"]))' \
	"$top/tools/report/papers.json")
tap_expect "the coverage table: $ncov rows, every figure linked or why none" 0 -- \
	"$py" -c 'import re, sys
h = open(sys.argv[1]).read()
sec = h[h.index("<section id=\"coverage\">"):]
sec = sec[:sec.index("</section>")]
rows = re.findall(r"<tr><td>00[0-4]</td>.*?</tr>", sec)
assert len(rows) == int(sys.argv[2]), len(rows)
ids = set(re.findall(r"id=\"(fig[0-9]+)\"", h))
for r in rows:
    links = re.findall(r"href=\"#(fig[0-9]+)\"", r)
    assert links or "none: " in r or "make demo-kernel" in r, r
    assert all(l in ids for l in links), r' "$dir/real/report.html" "$ncov"
"$py" - "$top/tools/report/papers.json" "$dir/stale.json" "$dir/orphan.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
p["coverage"]["items"][10]["here"] = ["no_such_figure"]
json.dump(p, open(sys.argv[2], "w"))
p = json.load(open(sys.argv[1]))
p["coverage"]["items"] = [c for c in p["coverage"]["items"] if "xdr_e2e" not in (c.get("here") or [])]
json.dump(p, open(sys.argv[3], "w"))
EOF
tap_expect "a coverage entry naming no figure: exit 1" 1 "coverage: .*no figure 'no_such_figure'" -- \
	"$py" "$report" "$dir/real/results.json" --papers "$dir/stale.json" -o "$dir/x.html"
tap_expect "a figure no coverage entry names: exit 1" 1 "figure 'xdr_e2e' is in no coverage entry" -- \
	"$py" "$report" "$dir/real/results.json" --papers "$dir/orphan.json" -o "$dir/x.html"
tap_expect "a papers.json that is missing: exit 1" 1 'cannot read' -- \
	"$py" "$report" "$dir/empty.json" --papers "$dir/none.json" -o "$dir/x.html"
tap_expect "an unknown option: exit 2" 2 'unrecognized arguments' -- \
	"$py" "$report" --bogus
tap_expect "no report left behind by a failure" 0 -- test ! -e "$dir/x.html"

echo "1..$tap_n"
echo "# report-test: $((tap_n - tap_fails)) passed, $tap_fails failed"
[ "$tap_fails" = 0 ]
