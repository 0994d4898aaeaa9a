# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# layers-common.sh - what tools/kmod-layers.sh and tools/lib-layers.sh
# share; sourced, not run.  The sourcing script sets layers_tool (its
# name, for messages) and fills the associative array edges (header ->
# the headers it includes, space-separated) before include_circles.

faults=0
checked=0

fault() {
	printf '%s: %s\n' "$layers_tool" "$*" >&2
	faults=$((faults + 1))
}

# Include circles among the headers of edges: depth-first, a header met
# again while still on the path closes a circle.
declare -A edges
declare -A layers_state	# "" unseen, 1 on the path, 2 done
layers_path=()
layers_visit() {
	local h=$1 n i circle
	layers_state[$h]=1
	layers_path+=("$h")
	for n in ${edges[$h]:-}; do
		if [ "${layers_state[$n]:-}" = 1 ]; then
			circle=
			for ((i = 0; i < ${#layers_path[@]}; i++)); do
				[ -n "$circle" ] || [ "${layers_path[$i]}" = "$n" ] || continue
				circle+="${layers_path[$i]} -> "
			done
			fault "include circle: $circle$n"
		elif [ -z "${layers_state[$n]:-}" ]; then
			layers_visit "$n"
		fi
	done
	unset 'layers_path[${#layers_path[@]}-1]'
	layers_state[$h]=2
}
include_circles() {
	local h
	for h in "${!edges[@]}"; do
		[ -n "${layers_state[$h]:-}" ] || layers_visit "$h"
	done
}
