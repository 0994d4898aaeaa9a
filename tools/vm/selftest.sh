#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# selftest.sh - check that tools/vm/asx-vm reports what it must (5 VM boots).
#
# Usage: tools/vm/selftest.sh
#
#   1. `asx-vm -- true` exits 0 (module loads, runs, unloads, log clean)
#   2. `asx-vm -- sh -c 'exit 3'` exits 3 (the command's own status)
#   3. a WARNING: written to the guest's kernel log fails the run (exit 123)
#   4. a command that hangs is stopped at --timeout (exit 125), with the
#      guest's threads and where its vCPUs were
#   5. an OOM kill outside any memory cgroup's limit (the line the kernel
#      writes for one) fails the run (exit 123)
#
# Needs kmod/asx.ko built (make kmod). Exits 0 if all five behave.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vm="$top/tools/vm/asx-vm"
tap_tail=30
. "$top/tools/lib/tap-expect.sh"

echo "TAP version 13"
echo "1..5"
tap_expect "true passes and its output reaches stdout" 0 "asx-vm-selftest-marker" -- "$vm" \
	sh -c 'test -c /dev/asx && echo scratch > /tmp/asx-vm-scratch && echo asx-vm-selftest-marker'
tap_expect "a failing command fails with its status" 3 "command failed with exit status 3" -- "$vm" \
	sh -c 'exit 3'
tap_expect "a WARNING: in the kernel log fails the run" 123 "WARNING: asx-vm self-test" -- "$vm" \
	sh -c 'echo "WARNING: asx-vm self-test" > /dev/kmsg'
tap_expect "a hung command times out with a post-mortem" 125 "did not finish within 90s" \
	"sleep 4711" "sample 3 cpu 1: RIP [0-9a-f]{16} [a-z_]" "blocked tasks and CPU backtraces" -- \
	"$vm" --timeout 90 -- sleep 4711
tap_expect "a system-wide OOM kill fails the run" 123 "constraint=CONSTRAINT_NONE" -- "$vm" \
	sh -c 'echo "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),task=x,pid=1" > /dev/kmsg'

echo "# $((tap_n - tap_fails)) passed, $tap_fails failed, 0 skipped"
[ "$tap_fails" = 0 ]
