#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# check.sh - run ASX's tests (what `make check` calls).
#
# Usage: tools/check.sh [STAGE...]
#
# Stages (default: all, in this order):
#   lib-plain   CMocka suite (lib/tests, exp/tests), optimised build (build/tests)
#   lib-asan    CMocka suite under ASan + UBSan          (build/asan/tests)
#   lib-tsan    CMocka suite under ThreadSanitizer       (build/tsan/tests)
#   leak        leak checks with the message-block cache on, as in production:
#               CMocka suite under ASan + LSan, valgrind memcheck on a quick subset
#   mustfail    lib/tests/mustfail/*.c must NOT compile (and must with -DASX_MUSTFAIL_CONTROL)
#   fuzz        every libFuzzer target replays its committed corpus under ASan + UBSan
#   abi         libasx.so exports: SONAME, only asx_* symbols, all versioned;
#               the API conventions (tools/api-check.py); every public type
#               against the abidw baseline lib/libasx.abi.xml with abidiff
#               (tools/layout-check.py), and that gate's own test
#               nothing of exp/ (the study) in libasx (tools/exp-out-of-lib.sh)
#   tools       asx-bench smoke run (--quick), JSON well formed, keys present;
#               the TAP parser's own test (tools/lib/test-tap-count.sh);
#               the demo's report generator (tools/report/test-report.sh);
#               its kernel half and the report in headless Chromium
#               (tools/report/test-kernel-browser.sh);
#               asxd and asxctl svc end to end (tools/asxd/test-asxd.sh), plain and ASan;
#               asxctl stream and Stream endpoints (tools/asxd/test-asxd-stream.sh)
#               asxctl asc and ASC policies from svc.conf (tools/asxd/test-asxd-asc.sh)
#   install     make install into a scratch prefix; against it, with pkg-config only:
#               each header alone (gnu11/c11/c17), lib/tests/outsider/*.c, the docs' examples
#               every installed command has a man page; every man page renders cleanly
#               the tutorial's example (examples/kvsvc) built against it and run
#               under the installed asxd (tools/test-kvsvc.sh), plain and ASan
#   style       Documentation/ parses (tools/doc-check.py); checkpatch.pl --no-tree on
#               kmod/ and uapi/; asx.ko's includes one-way
#               (tools/kmod-layers.sh: no circle, no layer including a higher one);
#               libasx's components and the files of asc/ and reactor/ one-way
#               (tools/lib-layers.sh, on a fresh `make lib`), and its self-test
#               lib/src/svc's files call each other one way (tools/svc-calls.sh)
#   dkms        asx.ko built through dkms (dkms.conf) against the installed headers
#               of each kernel of the matrix
#   deb         the Debian packages (debian/): built, lintian, a program against
#               libasx-dev, asx-lockstat from asx-tools (tools/deb-test.sh)
#   kmod        on each kernel of the matrix (6.1, 6.12, 6.12-rt; ASX_KERNELS="NAME..."
#               for some): asx.ko built with warnings as errors, the selftests in the
#               test VM booting that kernel (tools/vm/asx-vm), the libasx ones
#               (selftests/asx/lib) also under ASan+UBSan and TSan, the newcomer
#               programs built against a staged install (tools/outsider-vm.sh:
#               lib/tests/outsider/vm, tools/asxctl/test-asxctl.sh); the runners' own
#               tests (tools/vm/selftest.sh, selftests/asx/run_all_selftest.sh)
#   bcc         the bcc tools (tools/bcc) in the test VM, each against a workload
#               with a known answer (tools/bcc/tests/run.sh); then the Debian
#               packages installed there, asx.ko built by asx-dkms, the installed
#               asx-lockstat run on a program built against libasx-dev
#
# Not in the default list (run by name: `make check-aarch64`):
#   aarch64     libasx and its tests cross-built for aarch64 (build/aarch64), the ASC
#               suites and their neighbours run under qemu-user (qemu-aarch64-static)
#
# Every stage that cannot run fails the check and says why: nothing is
# skipped silently.  Every test runner prints TAP, counted here by one
# parser (tools/lib/tap-count.awk; Documentation/testing.rst, "One
# protocol"): a missing or short plan fails.  The last line is "check: N
# passed, N failed", where N counts test points (CMocka tests, selftests,
# the scripts' checks) and stage-level checks.
# Environment: CHECK_JOBS (make -j, default nproc), V=1, ASX_KERNELS (kmod, dkms).
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
jobs=${CHECK_JOBS:-$(nproc)}
all_stages=(lib-plain lib-asan lib-tsan leak mustfail fuzz abi tools install style dkms deb kmod bcc)
stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=("${all_stages[@]}")

passed=0
failed=0
failures=()
log=$top/build/check
mkdir -p "$log"

note() { printf '\n==> %s\n' "$*"; }
pass() { passed=$((passed + ${1:-1})); }
fail() {
	failed=$((failed + ${2:-1}))
	failures+=("$1")
	printf 'check: FAILED: %s\n' "$1" >&2
}

# tap_tally STAGE LOG RC [DOCS]: count LOG's TAP (tools/lib/tap-count.awk,
# the one parser): a pass per test point that passed, a failure per one
# that failed, per document whose plan was not kept (a runner that died
# half way) and per document that tested nothing; one more for an exit
# status RC that is not 0 with no failure counted.  Returns 1 instead of
# that when LOG holds other than DOCS top-level documents (default 1; the
# caller then counts a failure and says why).
tap_tally() {
	local stage=$1 out=$2 rc=$3 want=${4:-1} kind a d docs=0 before=$failed
	while IFS=$'\t' read -r kind a _ _ d; do
		case "$kind" in
		fail) fail "$stage: $a" ;;
		total) pass "$a"; docs=$d ;;
		esac
	done < <(awk -f "$top/tools/lib/tap-count.awk" "$out")
	[ "$docs" -eq "$want" ] || return 1
	[ "$rc" -eq 0 ] || [ "$failed" -ne "$before" ] ||
		fail "$stage: exit $rc with no failure counted (log $out)"
	return 0
}

# Run one CMocka binary (under the command in wrap, if any) with CMocka's
# TAP output; add its counts (tap_tally).  A binary that dies mid-run
# leaves its plan short: a failure beside any failed test; one that exits
# non-zero with every test passed (a sanitizer's report at exit) is one.
wrap=()
# what every sanitised CMocka run gets: leaks found, the first report fatal
asan_opts=detect_leaks=1:abort_on_error=0:halt_on_error=1
ubsan_opts=print_stacktrace=1:halt_on_error=1
run_cmocka() {
	local bin=$1 name out
	name=$(basename "$bin")
	out=$log/$2-$name.log
	CMOCKA_MESSAGE_OUTPUT=TAP timeout --foreground 600 "${wrap[@]}" "$bin" >"$out" 2>&1
	local rc=$?
	cat "$out"
	tap_tally "$2 $name" "$out" "$rc" ||
		fail "$2 $name: no TAP document (exit $rc, log $out)"
}

stage_lib() {
	local kind=$1 san dir bin tsan_supp=
	# liburcu is not built with TSan; its known-benign internals are listed here
	[ -f lib/tests/tsan.supp ] && tsan_supp=":suppressions=$top/lib/tests/tsan.supp"
	case "$kind" in
	plain) san= ; dir=build/tests ;;
	asan) san=asan; dir=build/asan/tests ;;
	tsan) san=tsan; dir=build/tsan/tests ;;
	esac
	note "libasx tests ($kind)"
	if ! make -s -j"$jobs" SAN=$san tests; then
		fail "lib-$kind: build"
		return
	fi
	local bins=("$dir"/test_*) src
	if [ ! -x "${bins[0]}" ]; then
		fail "lib-$kind: no test binaries in $dir"
		return
	fi
	# every suite's source, libasx's and the study's (exp/tests), has its
	# binary here: a suite moved out of the Makefile's reach fails, it
	# does not silently stop running
	for src in lib/tests/test_*.c exp/tests/test_*.c; do
		[ -x "$dir/$(basename "$src" .c)" ] ||
			fail "lib-$kind: $src was not built into $dir"
	done
	for bin in "${bins[@]}"; do
		case "$kind" in
		asan)
			ASAN_OPTIONS=$asan_opts UBSAN_OPTIONS=$ubsan_opts \
				run_cmocka "$bin" "lib-$kind" ;;
		tsan)
			TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1$tsan_supp" \
				run_cmocka "$bin" "lib-$kind" ;;
		*) run_cmocka "$bin" "lib-$kind" ;;
		esac
	done
}

# The message-block cache is off by default under ASan (its quarantine
# then catches use-after-free best); ASX_MSG_CACHE=1 turns it on, so the
# blocks parked in thread caches and the depot are leak-checked too.
# valgrind (slow) runs the quick plain binaries, with the production
# defaults.  Not under valgrind: test_asc (user-thread stacks valgrind is
# not told about: false reports, then it runs out of segments),
# test_reactor (measures heap use with mallinfo, which valgrind's
# allocator does not fill in), and the slow suites (stream, stream_dyn,
# mux: 15-90 s each under valgrind; svc: 150 s, its writers run until
# 1,000 reconfigurations are done).  --fair-sched=yes: valgrind runs one
# thread at a time, and its default lock hands the CPU back to the thread
# that just let it go, so a thread that never blocks (test_sync's hog
# readers) kept the main thread out of pthread_create() for minutes: one
# run of test_sync took 4 s, another over 600 s.  With the fair lock, 4 to
# 8 s, beside two CPU hogs.
leak_vg_tests=(test_msg test_msgq test_map test_sa test_ipc test_ipc_netns test_sync test_thread test_svc_conf
	       test_xdr test_xdr_module)
stage_leak() {
	local bin name vg=(valgrind -q --fair-sched=yes --leak-check=full
			   --errors-for-leak-kinds=definite --error-exitcode=97)
	note "leak checks, message cache on (LSan: whole suite; valgrind: ${leak_vg_tests[*]})"
	if ! make -s -j"$jobs" SAN=asan tests || ! make -s -j"$jobs" tests; then
		fail "leak: build"
		return
	fi
	for bin in build/asan/tests/test_*; do
		ASX_MSG_CACHE=1 ASAN_OPTIONS=$asan_opts UBSAN_OPTIONS=$ubsan_opts \
			run_cmocka "$bin" leak-lsan
	done
	if ! command -v valgrind >/dev/null; then
		fail "leak: valgrind is not installed"
		return
	fi
	wrap=("${vg[@]}")
	for name in "${leak_vg_tests[@]}"; do
		ASX_MSG_CACHE=1 run_cmocka "build/tests/$name" leak-valgrind
	done
	wrap=()
}

stage_mustfail() {
	local f cflags="-std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Ilib/include -Iuapi"
	note "must-not-compile programs"
	shopt -s nullglob
	local srcs=(lib/tests/mustfail/*.c)
	shopt -u nullglob
	if [ ${#srcs[@]} -eq 0 ]; then
		echo "(none yet)"
		return
	fi
	for f in "${srcs[@]}"; do
		# shellcheck disable=SC2086
		if ! ${CC:-cc} $cflags -DASX_MUSTFAIL_CONTROL -fsyntax-only "$f"; then
			fail "mustfail: $f does not compile even in its correct form"
			continue
		fi
		# shellcheck disable=SC2086
		if ${CC:-cc} $cflags -fsyntax-only "$f" 2>"$log/mustfail.err"; then
			fail "mustfail: $f compiled, but the misuse must be rejected"
		else
			echo "ok: $f rejected: $(grep -m1 'error:' "$log/mustfail.err" | sed 's/^[^ ]* //')"
			pass
		fi
	done
}

stage_fuzz() {
	local t name corpus
	note "fuzz corpus replay"
	shopt -s nullglob
	local srcs=(lib/fuzz/fuzz_*.c)
	shopt -u nullglob
	if [ ${#srcs[@]} -eq 0 ]; then
		echo "(no fuzz targets yet)"
		return
	fi
	make -s -j"$jobs" fuzz-replay || { fail "fuzz: build"; return; }
	for t in "${srcs[@]}"; do
		name=$(basename "$t" .c)
		name=${name#fuzz_}
		corpus=lib/fuzz/corpus/$name
		if [ ! -d "$corpus" ]; then
			fail "fuzz: no corpus at $corpus"
			continue
		fi
		if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		   "build/fuzz/replay_$name" "$corpus"; then
			pass
		else
			fail "fuzz: replay of $corpus"
		fi
	done
}

stage_abi() {
	local so=build/lib/libasx.so.0 soname bad unversioned n
	note "libasx ABI"
	make -s -j"$jobs" lib || { fail "abi: build"; return; }
	soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	if [ "$soname" = libasx.so.0 ]; then pass; else fail "abi: SONAME is '$soname'"; fi
	# every exported function/object must be asx_* and carry a version
	bad=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDBRVW]/ {print $3}' |
	      sed 's/@.*//' | grep -v '^asx_' | grep -v '^LIBASX_' || true)
	if [ -z "$bad" ]; then pass; else fail "abi: non-asx symbols exported: $bad"; fi
	unversioned=$(nm -D --defined-only --with-symbol-versions "$so" 2>/dev/null |
		      awk '$2 ~ /[TDBR]/ && $3 !~ /@/ {print $3}' || true)
	if [ -z "$unversioned" ]; then pass; else fail "abi: unversioned: $unversioned"; fi
	n=$(nm -D --defined-only "$so" | grep -c ' T asx_' || true)
	echo "libasx.so.0: SONAME $soname, $n exported functions"
	# the map lists each symbol by name: nothing exported that it does not name
	if ! tools/abi-check.sh "$so" lib/libasx.map; then
		fail "abi: lib/libasx.map and the exported symbols disagree"
	else
		pass
	fi
	# the API conventions: size-first *_opts, int f(T **out) constructors, asx__ internals
	if tools/api-check.py --static build/lib/libasx.a --shared "$so"; then
		pass
	else
		fail "abi: API conventions (tools/api-check.py)"
	fi
	# the threading-architecture study lives in exp/, not in libasx: none of
	# its symbols, exported or local, in the shared or the static library
	if tools/exp-out-of-lib.sh "$so" build/lib/libasx.a; then
		pass
	else
		fail "abi: the study (exp/) is compiled into libasx"
	fi
	# every public type (struct sizes, member offsets, ...) against the
	# committed abidw baseline, compared by abidiff
	if tools/layout-check.py; then
		pass
	else
		fail "abi: public types changed (tools/layout-check.py; abidiff's report above)"
	fi
	# the gate fails a moved member: checked on changed copies of the headers
	tools/test-layout-check.sh 2>&1 | tee "$log/layout-test.log"
	tap_tally "abi test-layout-check" "$log/layout-test.log" "${PIPESTATUS[0]}" ||
		fail "abi: tools/test-layout-check.sh printed no TAP"
}

# ttcp_pair PORT IMPL PATTERN WHAT RARGS TARGS: an asx-ttcp receiver
# (RARGS) and transmitter (TARGS) over loopback; passes when both exit 0
# and the receiver's output matches PATTERN (grep -E).
ttcp_pair() {
	local port=$1 impl=$2 pattern=$3 what=$4 rpid
	# shellcheck disable=SC2086
	build/bin/asx-ttcp -r $5 -p "$port" --impl="$impl" --timeout=20000 \
		>"$log/ttcp-r.log" 2>&1 &
	rpid=$!
	sleep 0.5	# UDP: the receiver binds before the first datagram
	# shellcheck disable=SC2086
	if build/bin/asx-ttcp -t $6 -p "$port" --impl="$impl" 127.0.0.1 \
		>"$log/ttcp-t.log" 2>&1 && wait $rpid &&
	   grep -Eq "$pattern" "$log/ttcp-r.log"; then
		pass
	else
		cat "$log/ttcp-t.log" "$log/ttcp-r.log"
		fail "tools: asx-ttcp $what"
		kill $rpid 2>/dev/null
	fi
}

# asx-bench ttcp --quick: every byte checked (count, order, checksum) for
# both apis; the netns panel too where root can make it, else one line why
# and no netns records.  The checks' own test: a short transfer and a
# flipped bit must each fail the command, naming what went wrong.
stage_tools_ttcp() {
	local j=$log/ttcp.json e=$log/ttcp.err want
	note "asx-bench ttcp --quick (002: C sockets against the wrappers)"
	if ! timeout 300 build/bin/asx-bench ttcp --quick --runs 1 --json >"$j" 2>"$e"; then
		cat "$e"
		fail "tools: asx-bench ttcp --quick"
		return
	fi
	want="ttcp_c_lo_sb8k_1_mbps ttcp_asx_lo_sb64k_128k_mbps ttcp_lo_sb8k_4k_wrapper_over_c"
	want+=" ttcp_lo_wrapper_over_c ttcp_wrapper_over_c"
	if [ "$(id -u)" = 0 ] && ! grep -q 'netns panel is not measured' "$e"; then
		want+=" ttcp_c_netns_sb8k_1_mbps ttcp_asx_netns_sb64k_128k_mbps ttcp_netns_wrapper_over_c"
	elif ! grep -q 'netns panel is not measured: ' "$e" || grep -q '"net": "netns"' "$j"; then
		fail "tools: asx-bench ttcp without the netns panel: want one line why, no netns records"
	fi
	# shellcheck disable=SC2086
	if /usr/bin/python3 tools/report/asxrecords.py check "$j" --finite --require $want \
		>/dev/null; then pass; else fail "tools: asx-bench ttcp's records"; fi
	# each throughput record keeps the queues asked for and what getsockopt
	# said of them (Linux gives at least what was asked)
	if /usr/bin/python3 -c 'import json, sys
r = [x for x in json.load(open(sys.argv[1]))["records"] if x["metric"] == "mbps"]
assert r and all(x["sockbuf"] in (8192, 65536) and x["sndbuf_got"] >= x["sockbuf"] and
                 x["rcvbuf_got"] >= x["sockbuf"] for x in r)' "$j"; then
		pass
	else
		fail "tools: asx-bench ttcp: sockbuf, sndbuf_got, rcvbuf_got in every mbps record"
	fi
	local inj msg
	for inj in short:'short transfer, [0-9]* of [0-9]* bytes sent, [0-9]* received' \
		   flip:'byte [0-9]* arrived wrong'; do
		msg=$(timeout 300 build/bin/asx-bench ttcp --quick --runs 1 --net loopback \
			--inject "${inj%%:*}" 2>&1 >/dev/null)
		if [ $? = 1 ] && grep -q "${inj#*:}" <<<"$msg"; then
			pass
		else
			fail "tools: asx-bench ttcp --inject ${inj%%:*} not caught: $msg"
		fi
	done
}

# papers_003_004_records RESULTS: the records of asx-bench platform,
# asc-yield, capsule-block, svc and xdr's end to end carry the dimension
# fields the report filters on (benchmarks.rst, "Records"), in their units
papers_003_004_records() {
	local bad
	bad=$(/usr/bin/python3 - "$1" <<'PY'
import json, sys
recs = json.load(open(sys.argv[1]))["records"]
want = {  # bench: (fields every record has, units allowed)
    "platform": (("experiment", "sched", "impl", "pes", "threads"), ("ns", "x")),
    "asc-yield": (("sched", "impl", "pes", "threads"), ("ns", "x")),
    "capsule-block": (("experiment", "pes", "threads"), ("s", "x")),
    "svc": ((), ("msg/s", "x", "1/s", "msgs", "us", "s")),
    }
need = {"platform": 14, "asc-yield": 9, "capsule-block": 15, "svc": 10}
bad, seen = [], {}
for r in recs:
    b = r["bench"]
    if b == "xdr" and r.get("experiment") == "e2e":
        seen["e2e"] = seen.get("e2e", 0) + 1
        if r.get("impl") not in ("ours", "tirpc", "raw") or not r.get("size"):
            bad.append("%s: impl/size" % r["key"])
    if b not in want:
        continue
    seen[b] = seen.get(b, 0) + 1
    fields, units = want[b]
    bad += ["%s: no %s" % (r["key"], f) for f in fields if r.get(f) is None]
    if r["unit"] not in units:
        bad.append("%s: unit %s" % (r["key"], r["unit"]))
    if b == "capsule-block" and r.get("sched") is None and \
            r.get("impl") not in ("user1", "user2"):
        bad.append("%s: no sched" % r["key"])
    if b == "svc" and r["metric"] == r["key"]:
        bad.append("%s: only a metric name" % r["key"])
for b, n in need.items():
    if seen.get(b, 0) < n:
        bad.append("%s: %d records, want >= %d" % (b, seen.get(b, 0), n))
if seen.get("e2e", 0) < 25:
    bad.append("xdr e2e: %d records, want 25 (5 sizes x ours, tirpc, raw, 2 ratios)"
               % seen.get("e2e", 0))
print("\n".join(bad))
PY
)
	if [ -z "$bad" ]; then
		pass
	else
		fail "tools: records of platform, asc-yield, capsule-block, svc, xdr e2e: $bad"
	fi
}

# the report's kernel half (from a recorded VM run) and the report in
# headless Chromium (tools/report/test-kernel-browser.sh)
tools_kernel_browser() {
	local t=$log/kernel-browser-test.log
	note "the kernel half of the report; the report in a browser (tools/report/test-kernel-browser.sh)"
	tools/report/test-kernel-browser.sh build 2>&1 | tee "$t"
	tap_tally "tools kernel-browser-test" "$t" "${PIPESTATUS[0]}" ||
		fail "tools: tools/report/test-kernel-browser.sh printed no TAP"
}

# asx-bench ace (issue 29): with ACE in the build, a --quick run whose
# records check and carry every key of the comparison; the skipped path
# (ASX_BENCH_NO_ACE=1, as a build without ACE takes it) one line, exit 0,
# no record.  A build without ACE fails here unless NO_ACE=1 asked for it:
# tools/setup.sh installs libace-dev, and a skip is never a pass.
stage_tools_ace() {
	local j=$log/ace.json e=$log/ace.err line shape keys=()
	note "asx-bench ace --quick (ASX vs ACE 7)"
	line=$(ASX_BENCH_NO_ACE=1 build/bin/asx-bench ace 2>&1)
	if [ $? -eq 0 ] && [ "$(printf '%s\n' "$line" | wc -l)" -eq 1 ] &&
	   [[ $line == 'ace: skipped: '* ]] &&
	   ASX_BENCH_NO_ACE=1 build/bin/asx-bench ace --json 2>/dev/null |
	   python3 -c 'import json, sys; assert json.load(sys.stdin)["records"] == []'; then
		pass
	else
		fail "tools: asx-bench ace without ACE (want one line, exit 0, no record): $line"
	fi
	# grep reads to the end: with pipefail, -q's early exit fails nm (SIGPIPE)
	if ! nm build/bin/asx-bench | grep ace_side_msgq >/dev/null; then
		if [ -n "${NO_ACE:-}" ]; then
			note "asx-bench ace: built without ACE (NO_ACE=1): the comparison not run"
		else
			fail "tools: asx-bench was built without ACE (libace-dev missing: tools/setup.sh)"
		fi
		return
	fi
	if ! timeout 600 build/bin/asx-bench ace --quick --runs 2 --json >"$j" 2>"$e"; then
		cat "$e"
		fail "tools: asx-bench ace --quick"
		return
	fi
	for shape in 1to1_64 1to1_4k 2to2_64 2to2_4k; do
		keys+=("msgq_over_ace_$shape" "msgq_over_ace_${shape}_min")
	done
	keys+=(stream_over_ace_msg stream_over_ace_msg_min stream_over_ace_task
	       stream_over_ace_task_min svc_cycle_over_ace svc_cycle_over_ace_min
	       echo_over_ace echo_over_ace_min echo_p99_over_ace echo_p99_over_ace_min)
	keys+=(echo_tp_over_ace_tp echo_tp_over_ace_tp_min echo_tp_p99_over_ace_tp
	       echo_tp_over_ace_devpoll echo_tp_p99_over_ace_devpoll)
	if /usr/bin/python3 tools/report/asxrecords.py check "$j" --finite --require "${keys[@]}"; then
		pass
	else
		fail "tools: asx-bench ace --quick's records (log $j)"
	fi
}

stage_tools() {
	local out=$log/bench.json
	note "asx-bench smoke run"
	make -s -j"$jobs" tools || { fail "tools: build"; return; }
	if ! build/bin/asx-bench --help >/dev/null; then fail "tools: asx-bench --help"; return; fi
	if build/bin/asx-bench no-such-bench >/dev/null 2>&1; then
		fail "tools: unknown command accepted"
	else
		pass
	fi
	# asxctl: a natural spelling works or says what is wrong in one line
	local a b c
	a=$(build/bin/asxctl stats --json 2>&1)
	b=$(build/bin/asxctl --version 2>&1)
	c=$(build/bin/asxctl bogus 2>&1)
	if [[ $a == *'takes no arguments'* && $b != *'unknown command'* &&
	      $c == *'commands: streams'* ]]; then
		pass
	else
		fail "tools: asxctl's command line (stats --json, --version, an unknown command)"
	fi
	# a command's own short option is its own: echo -c N is N connections,
	# not --csv N (which used to write a file named N)
	local ed
	ed=$(mktemp -d) || { fail "tools: mktemp"; return; }
	if (cd "$ed" && timeout 120 "$top/build/bin/asx-bench" echo -c 3 -t 50 --runs 1 --json) |
	   /usr/bin/python3 -c 'import json, sys
r = json.load(sys.stdin)["records"]
assert r and all(x.get("conns") == 3 for x in r if "conns" in x), r' &&
	   [ -z "$(ls -A "$ed")" ]; then
		pass
	else
		fail "tools: asx-bench echo -c 3 (want 3 connections, no CSV file)"
	fi
	rm -rf "$ed"
	# the main job needs no asx.ko: with no kernel to build it for, make
	# demo's module step says why in one line and lets the suite run
	local d
	d=$(make -s demo-kmod KDIR=/nonexistent 2>&1)
	if [ $? -eq 0 ] && [ "$(printf '%s\n' "$d" | wc -l)" -eq 1 ] &&
	   [[ $d == 'demo: asx.ko left out'*'/nonexistent'* ]]; then
		pass
	else
		fail "tools: make demo-kmod with no kernel tree (want one line and exit 0): $d"
	fi
	# global options after the command, as users write them
	if build/bin/asx-bench xdr --quick --runs=1 --json 2>/dev/null |
	   python3 -c 'import json, sys; assert json.load(sys.stdin)["records"]' 2>/dev/null; then
		pass
	else
		fail "tools: asx-bench COMMAND --quick --runs=1 --json"
	fi
	# asx-ttcp: one transfer over loopback with each implementation; and
	# -u datagrams longer than the receiver's -l are cut and counted, as
	# classic ttcp reads them, with either implementation
	local impl port=$((20000 + RANDOM % 20000))
	for impl in raw asx; do
		ttcp_pair $port $impl '524288 bytes' "--impl=$impl loopback transfer" \
			"-n 64" "-n 64"
		ttcp_pair $((port + 1)) $impl 'ttcp-r: [1-9][0-9]* datagrams longer than -l 1000' \
			"-u --impl=$impl truncates a longer datagram and counts it" \
			"-u -l 1000" "-u -l 3000 -n 32"
		port=$((port + 2))
	done
	stage_tools_ttcp
	stage_tools_ace
	if ! build/bin/asx-bench --quick --runs 1 --json all >"$out"; then
		fail "tools: asx-bench --quick all failed"
		return
	fi
	# its records: every field there and typed, a known unit and one per
	# metric, no measurement or key twice, the flat view agreeing; and the
	# flat keys that README.md and benchmarks.rst quote, finite and >= 0
	if /usr/bin/python3 tools/report/asxrecords.py check "$out" --finite --require \
		msgq_ratio_vs_pthread mutex_ratio_vs_pthread over_tirpc_16 over_tirpc_4096 \
		over_memcpy_4096 mp_gbps lp_gbps touch_once_gbps mp_over_limit prio_1vp_ns \
		prio_extra_ns raw_switch_ns pthread_cond_ns pthread_yield_ns prio2_block_s \
		prio2_sync_s prio2_over_prio1_sync svc_throughput_ratio svc_lost svc_pause_p99_us \
		arch_nproc cp_over_lp_tcp arch_cp_tcp_mbps_pe1
	then pass; else fail "tools: asx-bench JSON"; fi
	papers_003_004_records "$out"
	# the keys of asc-sync and echo (issue 28: libasx on ASC user threads)
	if /usr/bin/python3 tools/report/asxrecords.py check "$out" --finite --require \
		msgq_asc_over_pthread mutex_asc_over_pthread mutex_uncontended_ratio_vs_pthread \
		echo_pool_asc_rt_per_s echo_pool_asc_p99_us echo_pool_asc_over_reactor
	then pass; else fail "tools: asx-bench JSON, the asc-sync and echo keys"; fi
	# fiber-local storage against pthread_getspecific (issue 32)
	if /usr/bin/python3 tools/report/asxrecords.py check "$out" --finite --require \
		fls_get_ns fls_get_pthread_ns pthread_getspecific_ns tls_get_ns \
		fls_get_over_pthread_getspecific
	then pass; else fail "tools: asx-bench JSON, the fls keys"; fi
	# STRIDE's proportional share (issue 32)
	if /usr/bin/python3 tools/report/asxrecords.py check "$out" --finite --require \
		stride_share_error stride_share_error_blocking stride_blocker_share
	then pass; else fail "tools: asx-bench JSON, the stride keys"; fi
	# the one TAP parser this script counts with, on outputs of known count
	note "the TAP parser (tools/lib/test-tap-count.sh)"
	local t=$log/tap-count-test.log
	tools/lib/test-tap-count.sh 2>&1 | tee "$t"
	tap_tally "tools test-tap-count" "$t" "${PIPESTATUS[0]}" ||
		fail "tools: tools/lib/test-tap-count.sh printed no TAP"
	# the demo's report: asx-report on quick real runs; broken records refused
	note "asx-report (tools/report/test-report.sh)"
	local b
	t=$log/report-test.log
	tools/report/test-report.sh build 2>&1 | tee "$t"
	tap_tally "tools report-test" "$t" "${PIPESTATUS[0]}" ||
		fail "tools: tools/report/test-report.sh printed no TAP"
	tools_kernel_browser
	# asxd and `asxctl svc` end to end, plain and under ASan (a leak at exit fails it)
	note "asxd and asxctl svc (plain, ASan)"
	make -s -j"$jobs" SAN=asan lib tools || { fail "tools: ASan build"; return; }
	tools_asxd_script test-asxd.sh asxd-test
	note "asxd Streams from outside: asxctl stream, endpoints (plain, ASan)"
	tools_asxd_script test-asxd-stream.sh asxd-stream-test
	note "asxctl asc and svc.conf's ASC_Policy (plain, ASan)"
	tools_asxd_script test-asxd-asc.sh asxd-asc-test
}

# One of tools/asxd/test-asxd*.sh (SCRIPT, its TAP named TAG), on the plain
# build and under ASan (a leak at asxd's exit fails it): test-asxd.sh (asxd
# and `asxctl svc` end to end), test-asxd-stream.sh (asxctl stream, Stream
# endpoints), test-asxd-asc.sh (asxctl asc, svc.conf's ASC_Policy).
tools_asxd_script() {
	local script=$1 tag=$2 b t
	for b in build build/asan; do
		t=$log/${tag%-test}-${b//\//-}.log
		ASAN_OPTIONS=$asan_opts UBSAN_OPTIONS=$ubsan_opts \
			tools/asxd/$script "$b" 2>&1 | tee "$t"
		tap_tally "tools $tag $b" "$t" "${PIPESTATUS[0]}" ||
			fail "tools: tools/asxd/$script $b printed no TAP"
	done
}

# The tutorial's example (examples/kvsvc), built with its own Makefile against
# the install in $1/usr and run under the installed asxd; then the same with
# ASan+UBSan: the example built with them, loaded by an ASan asxd (installed
# in $1/asan; a leak at asxd's exit fails it).
install_kvsvc() {
	local tmp=$1 rc
	note "examples/kvsvc against the install (tools/test-kvsvc.sh), plain and ASan"
	timeout -k 5 "${KVSVC_TEST_TIMEOUT:-120}" tools/test-kvsvc.sh "$tmp/usr" 2>&1 |
		tee "$log/test-kvsvc.log"
	rc=${PIPESTATUS[0]}
	tap_tally "install test-kvsvc" "$log/test-kvsvc.log" "$rc" ||
		fail "install: tools/test-kvsvc.sh printed no TAP (exit $rc)"
	if ! make -s -j"$jobs" SAN=asan install PREFIX="$tmp/asan" >"$log/install-asan.log" 2>&1; then
		cat "$log/install-asan.log"
		fail "install: make SAN=asan install"
		return
	fi
	make -s SAN=asan lib >/dev/null 2>&1	# build/asan's libasx.pc for its own prefix again
	ASAN_OPTIONS=$asan_opts UBSAN_OPTIONS=$ubsan_opts \
		KVSVC_CFLAGS="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
		timeout -k 5 "${KVSVC_TEST_TIMEOUT:-120}" tools/test-kvsvc.sh "$tmp/asan" 2>&1 |
		tee "$log/test-kvsvc-asan.log"
	rc=${PIPESTATUS[0]}
	tap_tally "install test-kvsvc asan" "$log/test-kvsvc-asan.log" "$rc" ||
		fail "install: tools/test-kvsvc.sh under ASan printed no TAP (exit $rc)"
}

stage_install() {
	local tmp rc p f
	note "install + pkg-config"
	tmp=$(mktemp -d "$top/build/install-test.XXXXXX")
	if ! make -s -j"$jobs" install PREFIX="$tmp/usr" >"$log/install.log" 2>&1; then
		cat "$log/install.log"
		fail "install: make install"
		return
	fi
	for f in lib/libasx.so.0 lib/libasx.so lib/libasx.a lib/pkgconfig/libasx.pc \
		 include/asx/common.h include/linux/asx.h bin/asx-bench; do
		[ -e "$tmp/usr/$f" ] || { fail "install: $f not installed"; rm -rf "$tmp"; return; }
	done
	pass
	# DESTDIR staging must not leak the staging dir into the .pc file
	if make -s install DESTDIR="$tmp/stage" PREFIX=/opt/asx >/dev/null 2>&1 &&
	   grep -q '^prefix=/opt/asx$' "$tmp/stage/opt/asx/lib/pkgconfig/libasx.pc"; then
		pass
	else
		fail "install: DESTDIR staging"
	fi
	# every command installed has a man page, and every man page renders
	# without a warning and has a NAME line (what man -k and whatis read):
	# the pages of the staged install, whose paths (PREFIX /opt/asx) are a
	# user's, not the scratch prefix's, as long as the clone's path
	local cmd page bad=0
	for cmd in "$tmp"/usr/bin/* "$tmp"/usr/sbin/*; do
		[ -e "$cmd" ] || continue
		cmd=$(basename "$cmd")
		ls "$tmp"/usr/share/man/man[18]/"$cmd".[18] >/dev/null 2>&1 ||
			{ fail "install: no man page for $cmd"; bad=1; }
	done
	for page in "$tmp"/stage/opt/asx/share/man/man*/*; do
		if [ -n "$(man --warnings -l "$page" 2>&1 >/dev/null)" ] ||
		   ! lexgrog "$page" >/dev/null 2>&1; then
			man --warnings -l "$page" 2>&1 >/dev/null | head -n 5
			fail "install: man page $(basename "$page") has warnings or no NAME"
			bad=1
		fi
	done
	[ "$bad" = 1 ] || pass
	make -s lib >/dev/null 2>&1	# restore build/lib/libasx.pc for the default prefix
	# headers alone in each -std, the outsider programs, the documentation's
	# examples: each an "ok:" or "FAIL:" line, counted one by one
	tools/install-test.sh "$tmp/usr" 2>&1 | tee "$log/install-test.log"
	rc=${PIPESTATUS[0]}
	tap_tally "install install-test" "$log/install-test.log" "$rc" ||
		fail "install: tools/install-test.sh printed no TAP (exit $rc)"
	install_kvsvc "$tmp"
	# the gdb commands, auto-loaded from where make install put them
	note "gdb: asx ascs / threads / bt (tools/gdb/test-gdb.sh)"
	tools/gdb/test-gdb.sh "$tmp/usr" 2>&1 | tee "$log/test-gdb.log"
	rc=${PIPESTATUS[0]}
	tap_tally "install test-gdb" "$log/test-gdb.log" "$rc" ||
		fail "install: tools/gdb/test-gdb.sh printed no TAP (exit $rc)"
	rm -rf "$tmp"
}

stage_style() {
	note "Documentation/: every page parses, every :doc: names a page (tools/doc-check.py)"
	if /usr/bin/python3 tools/doc-check.py --self-test; then pass; else fail "style: doc-check's self-test"; fi
	if /usr/bin/python3 tools/doc-check.py; then pass; else fail "style: Documentation/ (see above)"; fi
	note "checkpatch"
	if tools/checkpatch.sh; then pass; else fail "style: checkpatch"; fi
	note "asx.ko layers (one-way includes)"
	if tools/kmod-layers.sh; then pass; else fail "style: kmod layers"; fi
	note "libasx layers (includes one-way, no call up in asc/ and reactor/)"
	if ! make -s -j"$jobs" lib >/dev/null; then
		fail "style: make lib (for tools/lib-layers.sh)"
	elif tools/lib-layers.sh; then
		pass
	else
		fail "style: lib layers"
	fi
	note "libasx layers: the gate fails on planted faults"
	if tools/lib-layers.sh --self-test; then pass; else fail "style: lib-layers self-test"; fi
	note "lib/src/svc's calls (one way, no circle)"
	if tools/svc-calls.sh --self-test; then pass; else fail "style: svc-calls.sh's self-test"; fi
	if tools/svc-calls.sh; then pass; else fail "style: svc calls"; fi
}

stage_dkms() {
	local kernels name ver
	kernels=$(matrix_kernels) || { fail "dkms: the kernel matrix (see above)"; return; }
	while read -r name ver; do
		note "asx.ko through dkms for $name ($ver)"
		tools/dkms-test.sh "$ver" 2>&1 | tee "$log/dkms-$name.log"
		tap_tally "dkms[$name]" "$log/dkms-$name.log" "${PIPESTATUS[0]}" ||
			fail "dkms[$name]: tools/dkms-test.sh printed no TAP"
	done <<<"$kernels"
}

stage_deb() {
	local out=$log/deb.log
	note "Debian packages"
	tools/deb-test.sh 2>&1 | tee "$out"
	tap_tally deb "$out" "${PIPESTATUS[0]}" ||
		fail "deb: tools/deb-test.sh printed no TAP"
}

# The kernels of the tested matrix to run on, "NAME VER" a line: all of
# them, or those named in ASX_KERNELS (make check-kernels KERNELS=...). A
# kernel of the matrix that is not installed fails the stage: nothing is
# skipped silently.
matrix_kernels() {
	# shellcheck disable=SC2086 # a list of names
	tools/vm/asx-vm --kernels ${ASX_KERNELS:-6.1 6.12 6.12-rt}
}

stage_kmod() {
	local out rc kernels name ver
	note "asx.ko in the test VM"
	if ! make -s kmod ASX_WERROR=y || ! make -s selftests || ! make -s SAN=asan selftests ||
	   ! make -s SAN=tsan selftests
	then
		fail "kmod: build"
		return
	fi
	# the libasx selftests (selftests/asx/lib) again under ASan+UBSan and TSan
	rm -rf build/selftests-san
	mkdir -p build/selftests-san
	for t in selftests/asx/lib/*_test.c; do
		t=$(basename "$t" .c)
		ln -s "../asan/selftests/$t" "build/selftests-san/asan_$t"
		ln -s "../tsan/selftests/$t" "build/selftests-san/tsan_$t"
	done
	# the newcomer programs (lib/tests/outsider/vm, asxctl), built like a
	# user's against a staged install; each kernel's guest runs them
	tools/outsider-vm.sh build build/outsider-vm 2>&1 | tee "$log/outsider-vm-build.log"
	tap_tally "kmod outsider-vm build" "$log/outsider-vm-build.log" "${PIPESTATUS[0]}" ||
		fail "kmod: tools/outsider-vm.sh build printed no TAP"
	tools/vm/selftest.sh 2>&1 | tee "$log/vm-selftest.log"
	tap_tally "kmod VM runner self-test" "$log/vm-selftest.log" "${PIPESTATUS[0]}" ||
		fail "kmod: tools/vm/selftest.sh printed no TAP"
	selftests/asx/run_all_selftest.sh 2>&1 | tee "$log/run_all-selftest.log"
	tap_tally "kmod run_all.sh self-test" "$log/run_all-selftest.log" "${PIPESTATUS[0]}" ||
		fail "kmod: selftests/asx/run_all_selftest.sh printed no TAP"
	kernels=$(matrix_kernels) || { fail "kmod: the kernel matrix (see above)"; return; }
	# asxctl's script is user space: the first kernel's guest runs it (~80 s
	# under TCG), the others the kernel programs only
	local only=
	while read -r name ver; do
		kmod_on "$name" "$ver" $only
		only=--programs-only
	done <<<"$kernels"
}

# kmod_on NAME VER [--programs-only]: asx.ko built for VER (warnings are errors), and both
# selftest sets in a VM that boots it. Each kernel's run is about 3 minutes
# on an idle 2-CPU host (Documentation/testing.rst); a hung guest should not
# hold CI for asx-vm's default 900 s.
kmod_on() {
	local name=$1 ver=$2 only=${3:-} out=$log/selftests-$1.log rc bin test
	note "asx.ko on $name ($ver)"
	if ! tools/vm/kmod-build.sh --werror "/lib/modules/$ver/build" "build/kmod/$ver"; then
		fail "kmod[$name]: asx.ko does not build for $ver"
		return
	fi
	ASX_VM_KVER=$ver tools/vm/asx-vm --kmod "build/kmod/$ver/kmod" --timeout 600 \
		--keep-dmesg "$log/dmesg-$name.txt" -- sh -c \
		'selftests/asx/run_all.sh build/selftests; a=$?;
		selftests/asx/run_all.sh build/selftests-san; b=$?;
		tools/outsider-vm.sh run build/outsider-vm '"$only"'; c=$?;
		[ $a -eq 0 ] && [ $b -eq 0 ] && [ $c -eq 0 ]' \
		2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	# three TAP documents: the two selftest sets (run_all.sh: a subtest per
	# program) and the outsider programs (outsider-vm.sh)
	if ! tap_tally "kmod[$name]" "$out" "$rc" 3; then
		# CI may show only the end of the output: say here where it stopped.
		bin=$(sed -n 's/^# selftests: asx: //p' "$out" | tail -n 1)
		# kselftest_harness.h's "#  RUN           FIXTURE.TEST ..."
		test=$(sed -n 's/^ *#  RUN  *\(.*\) \.\.\.$/\1/p' "$out" | tail -n 1)
		fail "kmod[$name]: the VM did not run both selftest sets (exit $rc; last started:
    ${bin:-no selftest binary} ${test:+/ $test}; see above)"
	fi
}

stage_bcc() {
	local out=$log/bcc.log rc
	note "the bcc tools in the test VM"
	if ! make -s lib tools kmod bcc-tests; then
		fail "bcc: build"
		return
	fi
	# the packages, to install in the guest (the deb stage leaves them)
	if ! ls build/deb/asx-tools_*.deb >/dev/null 2>&1 && ! tools/deb-test.sh >/dev/null; then
		fail "bcc: cannot build the packages (tools/deb-test.sh)"
		return
	fi
	# bcc compiles each tool's BPF program in the guest: slow under TCG;
	# then the packages are installed there, and the installed tool runs
	tools/vm/asx-vm --timeout 1500 -- sh -c 'tools/bcc/tests/run.sh build/bcc; a=$?;
		tools/deb-test.sh --install build/deb; b=$?; [ $a -eq 0 ] && [ $b -eq 0 ]' \
		2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	tap_tally bcc "$out" "$rc" 2 ||
		fail "bcc: the VM did not run the tools' tests (exit $rc; see above)"
}

# The aarch64 stage: the hand-written context switch and the ASC's
# lock-free paths on a weakly ordered machine, emulated by qemu-user.  The
# binaries run with the host's arm64 multiarch libraries (libc6:arm64,
# libcmocka0:arm64, ...: tools/setup.sh) and QEMU_LD_PREFIX unset:
# QEMU_LD_PREFIX=/usr/aarch64-linux-gnu mixes the cross toolchain's ld.so
# (libc6-arm64-cross) with the multiarch libc.so.6 of another glibc build,
# and the program hangs before main's first call returns.  test_*
# binaries not listed need what qemu-user lacks or a kernel (asx.ko).
aarch64_tests=(test_asc test_asc_stress test_asc_wake test_wait test_wait_stress test_fls test_sync
	       test_thread test_xdr test_svc)
stage_aarch64() {
	local t cross=(O=build/aarch64 CC=aarch64-linux-gnu-gcc CROSS_COMPILE=aarch64-linux-gnu-)
	note "libasx on aarch64 (cross build, qemu-user)"
	for t in aarch64-linux-gnu-gcc qemu-aarch64-static; do
		command -v "$t" >/dev/null ||
			{ fail "aarch64: $t missing (tools/setup.sh installs it)"; return; }
	done
	if [ ! -e /lib/ld-linux-aarch64.so.1 ]; then
		fail "aarch64: no arm64 libc6 (tools/setup.sh installs it)"
		return
	fi
	if ! make -s -j"$jobs" "${cross[@]}" lib tests; then
		fail "aarch64: cross build"
		return
	fi
	# KILL: a hung guest may leave SIGTERM to a handler that never runs
	wrap=(timeout -s KILL 540 env -u QEMU_LD_PREFIX qemu-aarch64-static)
	for t in "${aarch64_tests[@]}"; do
		if [ -x "build/aarch64/tests/$t" ]; then
			run_cmocka "build/aarch64/tests/$t" aarch64
		else
			fail "aarch64: build/aarch64/tests/$t was not built"
		fi
	done
	wrap=()
}

start=$(date +%s)
for s in "${stages[@]}"; do
	case "$s" in
	lib-plain|lib-asan|lib-tsan) stage_lib "${s#lib-}" ;;
	leak) stage_leak ;;
	mustfail) stage_mustfail ;;
	fuzz) stage_fuzz ;;
	abi) stage_abi ;;
	tools) stage_tools ;;
	install) stage_install ;;
	style) stage_style ;;
	dkms) stage_dkms ;;
	deb) stage_deb ;;
	kmod) stage_kmod ;;
	bcc) stage_bcc ;;
	aarch64) stage_aarch64 ;;
	*) echo "check.sh: unknown stage '$s' (stages: ${all_stages[*]})" >&2; exit 2 ;;
	esac
done

echo
echo "check: stages ${stages[*]} in $(( $(date +%s) - start )) s"
for f in "${failures[@]}"; do echo "  failed: $f"; done
echo "check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
