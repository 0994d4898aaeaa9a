#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# install-test.sh PREFIX - use an installed libasx the way a user would:
# only PREFIX/include and `pkg-config ... libasx` (PKG_CONFIG_PATH set to
# PREFIX/lib/pkgconfig), nothing from lib/src.  Used by `make check`
# (stage "install") after `make install PREFIX=...`.
#
#   headers     every <asx/X.h> as the only line of a file, compiled with
#               -std=gnu11, -std=c11 and -std=c17 (-Wall -Wextra -Werror
#               -pedantic, no -D), and once more after <stdio.h> in c11 mode
#               (the feature macros are settled by then); all of them together
#               with <linux/asx.h>
#   user        a small program linked the two documented ways (shared; libasx
#               static with the C library shared) and run
#   outsider    lib/tests/outsider/*.c, one per API area: compiled with
#               -std=c17 -pedantic and with -std=gnu11, run, exit 0 expected
#   doc         every C example of README.md and Documentation/*.rst that is a
#               complete program (or is marked to be checked): compiled as
#               written, run unless marked compile-only
#               (lib/tests/outsider/doc-examples.py has the conventions)
#   asc-policy  examples/asc-policy/ built with its own Makefile (pkg-config)
#               and run: a user ASC policy that checks its own schedule
#
# TAP (tools/lib/tap.sh): "ok N - NAME" or "not ok N - NAME" a check (with
# the compiler's or the program's output as comments); the last lines are
# the plan and "# install-test: N passed, N failed".
# Exit status 0 only when nothing failed.
set -uo pipefail

prefix=$(cd "$1" && pwd)
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
warn=(-Wall -Wextra -Werror)
# callbacks take arguments they need not use: the project's own -Wno-unused-parameter
prog_warn=(-Wall -Wextra -Werror -Wno-unused-parameter)
run_timeout=${INSTALL_TEST_TIMEOUT:-60}

. "$top/tools/lib/tap.sh"
echo "TAP version 13"
ok() { tap_ok "$1"; }
bad() {
	tap_not_ok "$1"
	[ -s "$tmp/out" ] && sed 's/^/#     /' "$tmp/out" | head -n 20
	return 0
}

if ! cflags=$(pkg-config --cflags libasx) || ! libs=$(pkg-config --libs libasx) ||
   ! static_libs=$(pkg-config --static --libs libasx); then
	bad "pkg-config finds libasx under $PKG_CONFIG_PATH"
	tap_end install-test
	exit 1
fi
read -r -a cflags <<<"$cflags"
read -r -a libs <<<"$libs"
read -r -a static_libs <<<"$static_libs"
echo "# install-test: cc ${cflags[*]} ... ${libs[*]}"

# ---------------------------------------------------------------- headers
: >"$tmp/all.h"
for h in "$prefix"/include/asx/*.h; do
	h=asx/$(basename "$h")
	echo "#include <$h>" >"$tmp/one.c"
	printf '#include <stdio.h>\n#include <%s>\n' "$h" >"$tmp/after.c"
	for std in gnu11 c11 c17; do
		if $cc -std=$std "${warn[@]}" -pedantic "${cflags[@]}" -fsyntax-only \
			"$tmp/one.c" >"$tmp/out" 2>&1; then
			ok "header <$h> alone, -std=$std"
		else
			bad "header <$h> alone, -std=$std"
		fi
	done
	if $cc -std=c11 "${warn[@]}" -pedantic "${cflags[@]}" -fsyntax-only \
		"$tmp/after.c" >"$tmp/out" 2>&1; then
		ok "header <$h> after <stdio.h>, -std=c11"
	else
		bad "header <$h> after <stdio.h>, -std=c11"
	fi
	echo "#include <$h>" >>"$tmp/all.h"
done
{
	echo '#include <linux/asx.h>'
	cat "$tmp/all.h"
	echo 'int main(void) { return 0; }'
} >"$tmp/all.c"
if $cc -std=c11 "${warn[@]}" -pedantic "${cflags[@]}" -fsyntax-only "$tmp/all.c" \
	>"$tmp/out" 2>&1; then
	ok "every header together, with <linux/asx.h>"
else
	bad "every header together, with <linux/asx.h>"
fi

# ---------------------------------------------------------------- user program
cat >"$tmp/user.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <linux/asx.h>
#include <asx/sync.h>

int main(void)
{
	struct asx_mutex m = ASX_MUTEX_INITIALIZER;
	int r;

	{
		ASX_GUARD(&m);
		r = asx_mutex_trylock(&m);	/* held by the guard */
	}
	if (r != -EBUSY || asx_mutex_trylock(&m) != 0)
		return 1;
	asx_mutex_unlock(&m);
	printf("libasx %s, uapi ioctl %#lx\n", asx_version(), (unsigned long)ASX_IOC_VERSION);
	return strcmp(asx_version(), "0.1.0") != 0;
}
C
# the shared library, as README.md and Documentation/building.rst show it
if $cc "${warn[@]}" -o "$tmp/user" "$tmp/user.c" "${cflags[@]}" "${libs[@]}" \
	>"$tmp/out" 2>&1 &&
   readelf -d "$tmp/user" | grep -q 'NEEDED.*libasx\.so\.0' &&
   "$tmp/user" >"$tmp/out" 2>&1; then
	ok "user program, shared libasx"
else
	bad "user program, shared libasx (built, linked to libasx.so.0, ran)"
fi
# the static recipe of Documentation/building.rst: libasx (and liburcu) static
if $cc "${warn[@]}" -o "$tmp/user-static" "$tmp/user.c" "${cflags[@]}" \
	-Wl,-Bstatic "${static_libs[@]}" -Wl,-Bdynamic >"$tmp/out" 2>&1 &&
   ! readelf -d "$tmp/user-static" | grep -q 'NEEDED.*libasx' &&
   env -u LD_LIBRARY_PATH "$tmp/user-static" >"$tmp/out" 2>&1; then
	ok "user program, static libasx"
else
	bad "user program, static libasx (no libasx.so NEEDED, runs without LD_LIBRARY_PATH)"
fi

# Documentation/ipc.rst: a call on the wrong socket role is an error with
# -Werror=incompatible-pointer-types alone (with plain cc, GCC 12 only warns);
# ASX_SOCK() on a non-socket is an error with no flag at all.
cat >"$tmp/misuse.c" <<'C'
#include <asx/sock.h>
int f(struct asx_sock_connector *c);
int f(struct asx_sock_connector *c) { return (int)asx_sock_stream_send(c, "x", 1, NULL); }
C
cat >"$tmp/misuse2.c" <<'C'
#include <asx/pipe.h>
#include <asx/sock.h>
int f(struct asx_pipe_writer *w);
int f(struct asx_pipe_writer *w) { return asx_sock_set_sndbuf(ASX_SOCK(w), 1); }
C
# the same files with the right type compile: the rejection is the type check
sed 's/asx_sock_connector/asx_sock_stream/g' "$tmp/misuse.c" >"$tmp/control.c"
sed 's/asx_pipe_writer/asx_sock_stream/g' "$tmp/misuse2.c" >"$tmp/control2.c"
if $cc -Werror=incompatible-pointer-types "${cflags[@]}" -c -o "$tmp/control.o" \
	"$tmp/control.c" >"$tmp/out" 2>&1 &&
   $cc "${cflags[@]}" -c -o "$tmp/control2.o" "$tmp/control2.c" >"$tmp/out" 2>&1 &&
   ! $cc -Werror=incompatible-pointer-types "${cflags[@]}" -c -o "$tmp/misuse.o" \
	"$tmp/misuse.c" >"$tmp/out" 2>&1 &&
   ! $cc "${cflags[@]}" -c -o "$tmp/misuse2.o" "$tmp/misuse2.c" >"$tmp/out" 2>&1; then
	ok "wrong socket role rejected (-Werror=incompatible-pointer-types; ASX_SOCK always)"
else
	bad "a wrong socket role compiled where Documentation/ipc.rst says it does not"
fi

# ---------------------------------------------------------------- programs
# build_run NAME SRC MODE [CFLAGS...]: MODE run | link | object
build_run() {
	local name=$1 src=$2 mode=$3 bin
	shift 3
	bin=$tmp/bin/$(basename "$src" .c)
	mkdir -p "$tmp/bin"
	case "$mode" in
	object)
		if $cc "$@" "${prog_warn[@]}" -Wno-unused-function "${cflags[@]}" -c -o "$bin.o" "$src" \
			>"$tmp/out" 2>&1; then
			ok "$name (compiles)"
		else
			bad "$name does not compile"
		fi
		return
		;;
	esac
	if ! $cc "$@" "${prog_warn[@]}" -pthread "${cflags[@]}" -o "$bin" "$src" "${libs[@]}" \
		>"$tmp/out" 2>&1; then
		bad "$name does not build"
		return
	fi
	if [ "$mode" = link ]; then
		ok "$name (builds; not run)"
		return
	fi
	(cd "$tmp" && timeout -k 5 "$run_timeout" "$bin") >"$tmp/out" 2>&1
	local rc=$?
	if [ $rc -eq 0 ]; then
		ok "$name (ran)"
	else
		echo "    exit status $rc" >>"$tmp/out"
		bad "$name"
	fi
}

for src in "$top"/lib/tests/outsider/*.c; do
	name=outsider/$(basename "$src")
	if ! $cc -std=c17 -pedantic "${prog_warn[@]}" "${cflags[@]}" -fsyntax-only "$src" \
		>"$tmp/out" 2>&1; then
		bad "$name does not compile with -std=c17 -pedantic"
		continue
	fi
	build_run "$name" "$src" run -std=gnu11
done

# ---------------------------------------------------------------- documentation
if ! (cd "$top" && /usr/bin/env python3 lib/tests/outsider/doc-examples.py "$tmp/doc" \
	README.md Documentation/*.rst) >"$tmp/doc.list" 2>"$tmp/out"; then
	bad "doc-examples.py: bad check directives"
fi
while read -r mode src where; do
	build_run "example $where" "$src" "$mode"
done <"$tmp/doc.list"


# ---------------------------------------------------------------- examples/asc-policy
# a user ASC policy (two-level round robin, issue 32) built by its own Makefile
# through pkg-config alone, then run: it checks that it scheduled as promised
rm -f "$tmp/out"
cp -r "$top/examples/asc-policy" "$tmp/asc-policy" && rm -f "$tmp/asc-policy/asc-policy"
if make -s -C "$tmp/asc-policy" CC="$cc" asc-policy >"$tmp/out" 2>&1 &&
   (cd "$tmp/asc-policy" && timeout -k 5 "$run_timeout" ./asc-policy) >>"$tmp/out" 2>&1; then
	ok "examples/asc-policy: a user policy on <asx/asc_policy.h> (built with pkg-config, ran)"
else
	bad "examples/asc-policy: a user policy on <asx/asc_policy.h>"
fi

tap_end install-test
