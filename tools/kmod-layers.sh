#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# kmod-layers.sh - check that asx.ko's sources include each other one way.
#
# Usage: tools/kmod-layers.sh [DIR]     (DIR: default kmod/ of this tree)
#
# Reads every #include "..." of DIR/*.c, DIR/*.h and DIR/test/*.c and fails
# (exit 1, one line per fault) when
#   - a file has no layer in the table below (a new file must be placed),
#   - a file includes a header of a higher layer than its own,
#   - headers include each other in a circle (also within one layer),
#   - a module (mod_*.c, test/*.c) includes anything of DIR but asx_api.h
#     and compat.h: the built-in modules are built as an out-of-tree module
#     would be (which brings its own compat.h, or none),
#   - a quoted include names no file of DIR (except <uapi> linux/asx.h).
# Documentation/kmod.rst describes the layers; stream.h has the lock order.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-$top/kmod}

case "$dir" in
-h|--help) sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac

# The layers, lowest first. A file may include headers of its own layer or
# below. sa.c (scheduler activations) stands beside the Streams: it needs
# only the tracepoints, uarg.h and sa.h.
declare -A layer=(
	[asx_api.h]=0 [compat.h]=0 [uarg.h]=0 [sa.h]=0
	[msg.h]=1 [msg.c]=1
	[queue.h]=2 [queue.c]=2 [registry.h]=2 [registry.c]=2 [trace.h]=2 [sa.c]=2
	[stream.h]=3 [stream.c]=3 [trace.c]=3 [tioctl.c]=3
	[driver.h]=4 [driver.c]=4 [loop.c]=4 [null.c]=4 [pipe.c]=4 [mux.c]=4
	[drvreg.c]=4
	[main.h]=5 [main.c]=5 [ioctl.c]=5 [xsi.c]=5 [proc.c]=5 [selftest.c]=5
)
names=(api msg queue stream driver main)

layers_tool=kmod-layers
. "$top/tools/layers-common.sh"

# The quoted includes of a file, one per line.
includes() {
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"
}

shopt -s nullglob
files=("$dir"/*.c "$dir"/*.h "$dir"/test/*.c)
[ ${#files[@]} -gt 0 ] || { fault "no sources in $dir"; exit 1; }

for path in "${files[@]}"; do
	rel=${path#"$dir"/}
	case "$rel" in *.mod.c) continue ;; esac	# made by modpost
	checked=$((checked + 1))
	module=
	case "$rel" in mod_*.c|test/*.c) module=1 ;; esac
	if [ -z "$module" ] && [ -z "${layer[$rel]+x}" ]; then
		fault "$rel: no layer; place it in the table of tools/kmod-layers.sh"
		continue
	fi
	while IFS= read -r inc; do
		[ -n "$inc" ] || continue
		[ "$inc" = linux/asx.h ] && continue		# the UAPI
		if [ -n "$module" ]; then
			[ "$inc" = asx_api.h ] || [ "$inc" = compat.h ] ||
				fault "$rel: a module includes \"$inc\"; it may include only" \
					"asx_api.h and compat.h"
			continue
		fi
		if [ ! -f "$dir/$inc" ]; then
			fault "$rel: includes \"$inc\", which is not in $(basename "$dir")/"
			continue
		fi
		if [ -z "${layer[$inc]+x}" ]; then
			fault "$inc: no layer; place it in the table of tools/kmod-layers.sh"
			continue
		fi
		if [ "${layer[$inc]}" -gt "${layer[$rel]}" ]; then
			fault "$rel (layer ${names[${layer[$rel]}]}) includes $inc" \
				"(layer ${names[${layer[$inc]}]}, higher)"
		fi
		case "$rel" in *.h) edges[$rel]+="$inc " ;; esac
	done < <(includes "$path")
done

include_circles

if [ "$faults" -gt 0 ]; then
	echo "kmod-layers: $faults fault(s)" >&2
	exit 1
fi
echo "kmod-layers: $checked files, one-way (msg < queue < stream < driver < main;" \
	"modules see asx_api.h and compat.h alone)"
