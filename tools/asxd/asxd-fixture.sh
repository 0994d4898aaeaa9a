# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# asxd-fixture.sh - what the asxd test scripts (test-asxd*.sh) share.
# Source it, then call
#
#   asxd_fixture PROG FILE...
#
# which fails the script (exit 2, "PROG: FILE not built") unless every FILE
# exists, makes a temporary directory $dir and names in it $sock (asxd's
# control socket), $conf (its svc.conf) and $log (its output).  At exit the
# asxd whose pid the script keeps in $pid is killed and $dir removed.

asxd_fixture_cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	rm -rf "$dir"
}

asxd_fixture() {
	local prog=$1 f
	shift
	for f in "$@"; do
		[ -e "$f" ] || { echo "$prog: $f not built (make tools)" >&2; exit 2; }
	done
	dir=$(mktemp -d) || exit 2
	pid=
	trap asxd_fixture_cleanup EXIT
	sock=$dir/asxd.sock
	conf=$dir/svc.conf
	log=$dir/asxd.log
}

# SIGTERM to the asxd of $pid, waited for (25 s at most): one TAP check
# that it exits 0 (under ASan that includes no leak).
asxd_sigterm_check() {
	local rc
	kill -TERM "$pid"
	timeout 25 tail --pid="$pid" -f /dev/null
	wait "$pid"
	rc=$?
	pid=
	tap_expect "SIGTERM stops asxd with status 0" 0 '' -- test "$rc" = 0
}

# The plan and the summary line "# TAG: N passed, N failed"; the status.
asxd_tap_end() {
	echo "1..$tap_n"
	echo "# $1: $((tap_n - tap_fails)) passed, $tap_fails failed"
	[ "$tap_fails" = 0 ]
}
