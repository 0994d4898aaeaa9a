#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# lib-layers.sh - check that libasx's components and files depend one way.
#
# Usage: tools/lib-layers.sh [--src DIR] [--include DIR] [--objs DIR]
#        tools/lib-layers.sh --self-test
#   --src DIR      the sources (default lib/src of this tree)
#   --include DIR  the public headers, DIR/asx/*.h (default lib/include)
#   --objs DIR     the objects of --src (default build/obj/lib/src: `make lib`)
#   --self-test    run on scratch copies, each with a fault planted: each
#                  must fail, the unchanged copy pass
#
# Fails (exit 1, one line per fault) when
#   - a directory of --src has no layer in the table below, or a file of
#     asc/ or reactor/ has no place in its component's file order,
#   - a file includes a header of another component (quoted, from --src)
#     that is not core/ and not in the list of allowed includes below, or
#     an allowed one that goes up,
#   - a file includes a public header <asx/X.h> of a higher component, or
#     a public header includes a higher one,
#   - a quoted include names no file, or headers include each other in a
#     circle,
#   - within asc/ and reactor/, a file uses an asx__ symbol defined by a
#     file higher in its component's order (read from `nm` of the
#     objects: defined-in and used-by per symbol), but for the calls up
#     still owed, listed below with a reason each (one listed that no
#     longer happens is a fault too); an object missing or older than
#     its source is a fault, never a skip.
# Documentation/architecture.rst describes the layers and the file orders.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=$top/lib/src
inc=$top/lib/include
objs=$top/build/obj/lib/src
objs_given=
self_test=	# only --self-test sets it (not the environment)

while [ $# -gt 0 ]; do
	case "$1" in
	--src) src=$2; shift 2 ;;
	--include) inc=$2; shift 2 ;;
	--objs) objs=$2; objs_given=1; shift 2 ;;
	--self-test) self_test=1; shift ;;
	-h|--help) sed -n '3,/^# Documentation/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "lib-layers: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

# The components, lowest first. A file may include the headers of its own
# component, of core/ and public headers of its own or lower components.
comps=(core sa asc sync msg thread reactor ipc proactor acceptor stream xdr kstream svc)
declare -A layer
for i in "${!comps[@]}"; do layer[${comps[$i]}]=$i; done

# No directory is exempt (lib/src/proto/, the study, moved to exp/: issue 30).
exempt_dirs=()

# The public headers and the component each belongs to.
declare -A public=(
	[common.h]=core [sync.h]=sync [msg.h]=msg [msgq.h]=msg [thread.h]=thread
	[sa.h]=sa [asc.h]=asc [reactor.h]=reactor [addr.h]=ipc [sock.h]=ipc
	[pipe.h]=ipc [stream.h]=stream [map.h]=stream [modules.h]=stream
	[mux.h]=stream [xdr.h]=xdr [kstream.h]=kstream [stropts.h]=kstream [svc.h]=svc
	[acceptor.h]=acceptor [proactor.h]=proactor [asc_policy.h]=asc
)

# The allowed includes of another component's private header, each
# "file header" and why (file may be a pattern: "sync/*.c"). Each must go
# down, and each must still be used: the gate checks both.
allowed=(
	"asc/upcall.c sa/group.h: reads an activation group's ring and flags on the upcall path"
	"reactor/notify.c msg/msgq_impl.h: hooks a message queue's wake-ups (the Reactor's message-queue notifications)"
	"stream/stream.c msg/msgq_impl.h: a Stream head waits on its queue's internals (closing, wake-ups)"
	"kstream/driver.c stream/stream_impl.h: the spanning drivers are Stream drivers, written against a Stream's internals"
	"kstream/driver.c ipc/ipc.h: a spanning driver over a descriptor uses IPC SAP's descriptor I/O"
	"sync/*.c asc/wait.h: every lock waits through the one wait primitive (a futex, or an ASC user thread parked)"
	"msg/msgq.c asc/wait.h: a message queue's blocking calls wait through the same primitive"
	"stream/stream.c asc/wait.h: a Task's held, marker and pin waits go through the same primitive"
	"thread/thread.c asc/wait.h: the Thread Manager finds its record of a user thread in the thread's slot (asx__uthread_slot)"
	"stream/rcu.c asc/wait.h: a user thread waits for a grace period parked on a word a call_rcu callback completes"
	"ipc/sock.c asc/wait.h: a connect waits out a full UNIX-domain backlog with the sentinel's naps (asx__connect_retry)"
)

# Within asc/ and reactor/, the files lowest first: a file may use only
# symbols of its own file or lower ones. reactor/'s files repeat their
# order in a comment at the top, asc/'s point here; architecture.rst has
# the same lists.
declare -A order=(
	[asc]="switch io preempt stack timerheap sched mode upcall vp sync sentinel wait fls signal thread prio edf direct stride asc bench_raw"
	[reactor]="hmap handler notify timer reactor pool"
)

# Calls up still owed within asc/, "file symbol: why", each to go (issue
# 30). One listed that no longer happens is a fault too: the list shrinks.
owed=()

layers_tool=lib-layers
. "$top/tools/layers-common.sh"

# The includes of a file, "q NAME" (quoted) or "a NAME" (<asx/NAME>), a line.
includes() {
	sed -n -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/q \1/p' \
	       -e 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<asx\/\([^>]*\)>.*/a \1/p' "$1"
}

# Does "$1 $2" match the key (before the colon; its first word may be a
# pattern) of an entry of the list named $3?  Marks the entry used.
declare -A used
listed() {
	local -n list=$3
	local e key
	for e in "${list[@]}"; do
		key=${e%%:*}
		# shellcheck disable=SC2053	# the file part is a pattern
		if [[ $1 == ${key%% *} ]] && [ "$2" = "${key#* }" ]; then
			used[$key]=1
			return 0
		fi
	done
	return 1
}

# A public header <asx/NAME> included by a file of component COMP (or by a
# public header of COMP).
check_public() {	# rel comp name
	local want=${public[$3]:-}
	if [ -z "$want" ]; then
		fault "$1: includes <asx/$3>, which has no component in tools/lib-layers.sh"
	elif [ "${layer[$want]}" -gt "${layer[$2]}" ]; then
		fault "$1 ($2) includes <asx/$3> ($want, higher)"
	fi
}

shopt -s nullglob

check_includes() {
	local path rel comp kind name target tcomp d e
	for d in "$src"/*/; do
		d=$(basename "$d")
		[[ " ${exempt_dirs[*]} " == *" $d "* ]] && continue
		[ -n "${layer[$d]+x}" ] ||
			fault "$d/: no layer; place it in the table of tools/lib-layers.sh"
	done
	for path in "$src"/*/*.c "$src"/*/*.h; do
		rel=${path#"$src"/}
		comp=${rel%%/*}
		[[ " ${exempt_dirs[*]} " == *" $comp "* ]] && continue
		[ -n "${layer[$comp]+x}" ] || continue	# said above
		checked=$((checked + 1))
		while read -r kind name; do
			if [ "$kind" = a ]; then
				check_public "$rel" "$comp" "$name"
				continue
			fi
			if [ -f "$(dirname "$path")/$name" ]; then
				target=$comp/$name
			elif [ -f "$src/$name" ]; then
				target=$name
			else
				fault "$rel: includes \"$name\", which is not in lib/src"
				continue
			fi
			tcomp=${target%%/*}
			case "$rel" in *.h) edges[$rel]+="$target " ;; esac
			[ "$tcomp" = "$comp" ] || [ "$tcomp" = core ] && continue
			if ! listed "$rel" "$target" allowed; then
				fault "$rel includes $target, another component's private header;" \
					"use its public header or list the include, with a reason," \
					"in tools/lib-layers.sh"
			elif [ "${layer[$tcomp]:-99}" -ge "${layer[$comp]}" ]; then
				fault "$rel ($comp) includes $target ($tcomp, not lower)"
			fi
		done < <(includes "$path")
	done
	for e in "${allowed[@]}"; do
		[ -n "${used[${e%%:*}]:-}" ] ||
			fault "${e%%:*}: listed as an allowed include in tools/lib-layers.sh" \
				"but no file includes it: drop it from the list"
	done
	for path in "$inc"/asx/*.h; do
		rel=asx/$(basename "$path")
		comp=${public[${rel#asx/}]:-}
		checked=$((checked + 1))
		if [ -z "$comp" ]; then
			fault "<$rel>: no component; place it in tools/lib-layers.sh"
			continue
		fi
		while read -r kind name; do
			[ "$kind" = a ] && check_public "<$rel>" "$comp" "$name"
		done < <(includes "$path")
	done
}

# Calls within asc/ and reactor/: every asx__ symbol an object defines has
# the rank of its file; an object that uses a symbol of a higher rank calls up.
check_calls() {
	local comp f o c e rank sym user
	for comp in "${!order[@]}"; do
		declare -A rank_of=() def=()
		rank=0
		for f in ${order[$comp]}; do rank_of[$f]=$rank; rank=$((rank + 1)); done
		for c in "$src/$comp"/*.c; do
			f=$(basename "$c" .c)
			o=$objs/$comp/$f.o
			if [ -z "${rank_of[$f]+x}" ]; then
				fault "$comp/$f.c: no place in the file order of $comp in tools/lib-layers.sh"
			elif [ ! -f "$o" ]; then
				fault "$comp/$f.c: no object $o (make lib, or --objs DIR)"
			elif [ -z "$objs_given" ] && [ "$c" -nt "$o" ]; then
				fault "$comp/$f.c: $o is older than its source (make lib)"
			fi
		done
		for f in ${order[$comp]}; do
			o=$objs/$comp/$f.o
			[ -f "$o" ] || continue
			while read -r sym; do def[$sym]=$f; done < <(
				nm --defined-only "$o" | awk '$3 ~ /^asx__/ && $2 ~ /[A-Z]/ { print $3 }')
		done
		for f in ${order[$comp]}; do
			o=$objs/$comp/$f.o
			[ -f "$o" ] || continue
			while read -r sym; do
				user=${def[$sym]:-}
				[ -n "$user" ] || continue
				if [ "${rank_of[$user]}" -gt "${rank_of[$f]}" ]; then
					listed "$comp/$f.c" "$sym" owed && continue
					fault "$comp/$f.c calls up: $sym of $comp/$user.c" \
						"(order: ${order[$comp]// / < })"
				fi
			done < <(nm --undefined-only "$o" | awk '$2 ~ /^asx__/ { print $2 }')
			checked=$((checked + 1))
		done
		unset rank_of def
	done
	for e in "${owed[@]}"; do
		[ -n "${used[${e%%:*}]:-}" ] ||
			fault "${e%%:*}: listed as owed in tools/lib-layers.sh but no" \
				"longer called up: drop it from the list"
	done
}

# errno: only core/errno.o reaches glibc's __errno_location(); every other
# object reads errno through asx__errno_location() (lib/src/core/errno.h:
# a user thread that parks may resume on another VP, with another errno).
check_errno() {
	local o
	while read -r o; do
		[ "${o#"$objs"/}" = core/errno.o ] && continue
		if nm --undefined-only "$o" | awk '$2 == "__errno_location" { f = 1 } END { exit !f }'; then
			fault "${o#"$objs"/}: reads errno through __errno_location() (built without" \
				"-include core/errno.h? see lib/src/core/errno.h)"
		fi
	done < <(find "$objs" -name '*.o' | sort)
}

# Run this script on scratch copies, each with one fault planted; each must
# fail, and the unchanged copy must pass.
self_test() {
	local tmp rc bad=0 out
	tmp=$(mktemp -d) || exit 2
	trap 'rm -rf "$tmp"' EXIT
	cp -r "$src" "$tmp/src" && cp -r "$inc" "$tmp/include" && cp -r "$objs" "$tmp/objs" ||
		{ echo "lib-layers: self-test: cannot copy (make lib first)" >&2; exit 1; }
	# self_test= : a self_test in the environment must not make every
	# run a self-test of its own (each copying the tree, without end)
	run() { self_test= "$0" --src "$tmp/src" --include "$tmp/include" --objs "$tmp/objs" >"$tmp/out" 2>&1; }
	expect() {	# 0|1 what
		run; rc=$?
		if [ "$rc" -ne "$1" ]; then
			echo "lib-layers: self-test: $2: exit $rc, wanted $1" >&2
			sed 's/^/  /' "$tmp/out" >&2
			bad=1
		else
			out=$(grep -m1 -v '^lib-layers: [0-9]* fault' "$tmp/out")
			echo "lib-layers: self-test: $2: exit $rc as wanted${out:+ ($out)}"
		fi
	}
	expect 0 "the tree as it is"
	printf '#include "stream/stream_impl.h"\n' >>"$tmp/src/msg/msg.c"
	expect 1 "msg/msg.c including a higher component's private header"
	cp "$src/msg/msg.c" "$tmp/src/msg/msg.c"
	printf '#include <asx/svc.h>\n' >>"$tmp/src/sync/mutex.c"
	expect 1 "sync/mutex.c including a higher public header"
	cp "$src/sync/mutex.c" "$tmp/src/sync/mutex.c"
	sed -i '/#include "ipc\/ipc.h"/d' "$tmp/src/kstream/driver.c"
	expect 1 "an allowed include (kstream/driver.c ipc/ipc.h) no file makes"
	cp "$src/kstream/driver.c" "$tmp/src/kstream/driver.c"
	printf '#include "asc/sched_impl.h"\n' >>"$tmp/src/asc/asc_impl.h"
	expect 1 "asc/asc_impl.h and asc/sched_impl.h including each other"
	cp "$src/asc/asc_impl.h" "$tmp/src/asc/asc_impl.h"
	printf 'int asx__vp_spawn(void);\nint f(void) { return asx__vp_spawn(); }\n' >"$tmp/up.c"
	cc -c -o "$tmp/objs/asc/switch.o" "$tmp/up.c" ||
		{ echo "lib-layers: self-test: cannot compile" >&2; exit 1; }
	expect 1 "asc/switch.o calling asc/vp.c's asx__vp_spawn"
	cp "$objs/asc/switch.o" "$tmp/objs/asc/switch.o"
	printf 'void asx__rx_wake(void);\nvoid f(void) { asx__rx_wake(); }\n' >"$tmp/up.c"
	cc -c -o "$tmp/objs/reactor/hmap.o" "$tmp/up.c" ||
		{ echo "lib-layers: self-test: cannot compile" >&2; exit 1; }
	expect 1 "reactor/hmap.o calling reactor/notify.c's asx__rx_wake"
	cp "$objs/reactor/hmap.o" "$tmp/objs/reactor/hmap.o"
	printf '#include <errno.h>\nint f(void) { return errno; }\n' >"$tmp/up.c"
	cc -c -o "$tmp/objs/ipc/io.o" "$tmp/up.c" ||
		{ echo "lib-layers: self-test: cannot compile" >&2; exit 1; }
	expect 1 "ipc/io.o reading errno through __errno_location()"
	[ "$bad" = 0 ] || { echo "lib-layers: self-test failed" >&2; exit 1; }
	echo "lib-layers: self-test: 8 cases as wanted"
	exit 0
}

[ -z "${self_test:-}" ] || self_test

[ -d "$src" ] || { fault "no sources in $src"; exit 1; }
check_includes
include_circles
check_calls
check_errno

if [ "$faults" -gt 0 ]; then
	echo "lib-layers: $faults fault(s)" >&2
	exit 1
fi
up=${comps[*]}
echo "lib-layers: $checked files and objects one-way (${up// / < };" \
	"${#allowed[@]} allowed includes; asc/ and reactor/ files call down," \
	"${#owed[@]} calls up owed)"
