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
