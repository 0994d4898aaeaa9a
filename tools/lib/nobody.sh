# SPDX-License-Identifier: GPL-2.0 OR LGPL-2.1 OR BSD-2-Clause
#
# nobody.sh - run a program of the tree as an unprivileged user (uid and gid
# 65534, no groups), wherever the tree is. A clone may live in a directory
# that other users cannot enter (root's home is 0700 on Debian, and so are
# the homes adduser makes), so the user could not even start a program there:
# the tests that drop privileges run a copy instead. Source it, then:
#
#   nobody_stage DIR SRC...   copy each SRC (a file, or a directory's
#                             files) into DIR, made readable and, where SRC
#                             was, executable by everyone; DIR and its
#                             parents must let others in (a mktemp -d under
#                             /tmp, chmod 755). Symbolic links are copied as
#                             links. Fails, saying why, when nobody cannot
#                             reach what it copied.
#   nobody_run CMD [ARG...]   CMD as uid/gid 65534 with no groups
#
# Keep a copy's layout where the program finds things by its own place
# (a tool's $ORIGIN/../lib rpath: stage bin/ and lib/ side by side).

nobody_run() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

nobody_stage() {
	local dest=$1 src f
	shift
	mkdir -p "$dest" && chmod 755 "$dest" || return 1
	for src in "$@"; do
		cp -RP "$src" "$dest/" || return 1
	done
	chmod -R a+rX "$dest" || return 1
	for f in "$dest"/*; do
		[ -e "$f" ] || continue
		if ! nobody_run test -r "$f"; then
			echo "nobody.sh: uid 65534 cannot read $f: a directory above it" \
				"keeps others out (put it under a directory with mode 755," \
				"e.g. TMPDIR=/tmp)" >&2
			return 1
		fi
	done
}
