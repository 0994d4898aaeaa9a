#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# deb-test.sh - the Debian packages: built, lintian-clean, usable.
#
# Usage: tools/deb-test.sh [OUTDIR]
#
#   1. copies the tree's files (tracked and new, not ignored) to a scratch
#      directory and builds the binary packages there with
#      dpkg-buildpackage -us -uc -b (debian/): libasx0, libasx-dev,
#      asx-tools, asx-dkms;
#   2. runs lintian on them: any error fails;
#   3. unpacks libasx0, libasx-dev and asx-tools into a scratch root and
#      compiles and runs a program against the -dev package with pkg-config
#      alone (PKG_CONFIG_SYSROOT_DIR);
#   4. runs asx-lockstat from the unpacked /usr/sbin (-h), and checks with
#      its own module that the packaged libasx carries the USDT probes;
#   5. checks that asx-dkms holds the module's sources and dkms.conf.
#
# The .deb files are left in OUTDIR (default build/deb). Prints TAP (one
# "ok N - ..." or "not ok N - ..." line per check; tools/lib/tap.sh) ending
# with "# deb: N passed, N failed"; exit 0 if none failed.
#
#        tools/deb-test.sh --install [OUTDIR]
#
# In a throw-away root (the test VM: `tools/check.sh bcc` runs it there),
# installs the packages of OUTDIR with dpkg -i (dkms autoinstall off: the
# build is the dkms stage's, on the host) and checks asx-dkms's sources are
# registered with dkms; then compiles a program with the installed
# pkg-config and headers alone and traces it with the installed
# /usr/sbin/asx-lockstat, which must see its mutex's acquisitions.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top" || exit 2
install=0
if [ "${1:-}" = --install ]; then
	install=1
	shift
fi
out=${1:-build/deb}
. tools/lib/tap.sh
echo "TAP version 13"
ok() { tap_ok "$*"; }
bad() { tap_not_ok "$*"; }
finish() {
	tap_end deb
	exit
}

if [ "$install" = 1 ]; then
	[ "$(id -u)" = 0 ] || { bad "--install needs root"; finish; }
	debs=$(ls "$out"/libasx0_*.deb "$out"/libasx-dev_*.deb "$out"/asx-tools_*.deb \
		"$out"/asx-dkms_*.deb 2>/dev/null)
	[ "$(wc -w <<<"$debs")" = 4 ] || { bad "no packages in $out (run tools/deb-test.sh)"; finish; }
	log=$(mktemp)
	# Building asx.ko in an emulated guest takes many minutes: the postinst
	# only registers the sources here (the dkms stage builds them on the
	# host, from the same dkms.conf). This root is thrown away.
	mkdir -p /etc/dkms && touch /etc/dkms/no-autoinstall
	# shellcheck disable=SC2086
	if dpkg -i $debs >"$log" 2>&1; then
		ok "dpkg -i libasx0 libasx-dev asx-tools asx-dkms"
	else
		tail -n 30 "$log"
		bad "dpkg -i"
	fi
	if [ -r /usr/src/asx-0.1.0/dkms.conf ] && dkms add asx/0.1.0 >>"$log" 2>&1 &&
	   dkms status asx 2>/dev/null | grep -q 'added'; then
		ok "asx-dkms's sources registered with dkms"
	else
		tail -n 20 "$log"
		bad "asx-dkms: sources not registered with dkms: $(dkms status asx 2>&1)"
	fi
	dir=$(mktemp -d)
	cat >"$dir/app.c" <<'PROG'
#include <asx/sync.h>
#include <stdio.h>

int main(void)
{
	static struct asx_mutex m = ASX_MUTEX_INITIALIZER;
	char line[8];
	int i;

	printf("%p\n", (void *)&m);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < 1000; i++) {
		asx_mutex_lock(&m);
		asx_mutex_unlock(&m);
	}
	return 0;
}
PROG
	if cc -o "$dir/app" "$dir/app.c" $(pkg-config --cflags --libs libasx); then
		ok "a program built with the installed pkg-config and headers"
	else
		bad "a program built with the installed pkg-config and headers"
	fi
	coproc APP { exec "$dir/app"; }
	read -r addr <&"${APP[0]}"
	/usr/sbin/asx-lockstat -p "$APP_PID" -j -k mutex >"$dir/ls.out" 2>"$dir/ls.err" &
	tool=$!
	for i in $(seq 240); do grep -q Tracing "$dir/ls.err" && break; sleep 1; done
	echo go >&"${APP[1]}"
	wait "$APP_PID"
	wait "$tool"
	if /usr/bin/python3 -c 'import json, sys
rows = json.loads(open(sys.argv[1]).read().splitlines()[-1])["locks"]
sys.exit(0 if any(r["lock"] == sys.argv[2] and r["acq"] == 1000 for r in rows) else 1)' \
		"$dir/ls.out" "$addr"; then
		ok "the installed asx-lockstat saw the program's 1000 acquisitions"
	else
		cat "$dir/ls.err" "$dir/ls.out" | tail -n 20
		bad "the installed asx-lockstat on the program"
	fi
	rm -rf "$dir" "$log"
	finish
fi

for t in dpkg-buildpackage lintian dh_dkms fakeroot pkg-config; do
	command -v "$t" >/dev/null || { bad "no $t (run tools/setup.sh)"; finish; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/asx-deb.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/asx" "$out"
git ls-files -co --exclude-standard | grep -v '^build/' |
	tar -cf - -T - | tar -xf - -C "$scratch/asx" || { bad "copy the tree"; finish; }

if (cd "$scratch/asx" && dpkg-buildpackage -us -uc -b) >"$scratch/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b"
else
	tail -n 40 "$scratch/build.log"
	bad "dpkg-buildpackage -us -uc -b"
	finish
fi
rm -f "$out"/*.deb
cp "$scratch"/*.deb "$out"/
for p in libasx0 libasx-dev asx-tools asx-dkms; do
	ls "$scratch"/${p}_*.deb >/dev/null 2>&1 && ok "package $p built" || bad "no package $p"
done

# lintian refuses to run as root only with a warning; errors fail
if lintian --fail-on error "$scratch"/*.changes >"$scratch/lintian.log" 2>&1; then
	ok "lintian: no errors"
else
	grep -E '^[EW]:' "$scratch/lintian.log"
	bad "lintian reports errors"
fi

root=$scratch/root
for p in libasx0 libasx-dev asx-tools asx-dkms; do
	dpkg -x "$scratch"/${p}_*.deb "$root" || bad "dpkg -x $p"
done
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=$root/usr/lib/$multiarch
cat >"$scratch/app.c" <<'PROG'
#include <asx/sync.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	struct asx_mutex m = ASX_MUTEX_INITIALIZER;

	asx_mutex_lock(&m);
	asx_mutex_unlock(&m);
	printf("libasx %s\n", asx_version());
	return strcmp(asx_version(), "0.0.0") ? 0 : 1;
}
PROG
if flags=$(PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$libdir/pkgconfig \
	   pkg-config --cflags --libs libasx) &&
   cc -o "$scratch/app" "$scratch/app.c" $flags &&
   LD_LIBRARY_PATH=$libdir "$scratch/app" | grep -q '^libasx [0-9]'; then
	ok "a program built against libasx-dev (pkg-config) runs"
else
	bad "a program built against libasx-dev (pkg-config: '${flags:-}')"
fi
if "$root/usr/sbin/asx-lockstat" -h | grep -q 'examples:'; then
	ok "asx-lockstat runs from the packaged /usr/sbin"
else
	bad "asx-lockstat -h from the packaged /usr/sbin"
fi
if /usr/bin/python3 -c 'import sys
sys.path.insert(0, sys.argv[1])
import asxbcc
n = asxbcc.usdt_probes(sys.argv[2])
sys.exit(0 if "mutex_acquired" in n else 1)' "$root/usr/lib/asx/bcc" "$libdir/libasx.so.0"; then
	ok "the packaged libasx.so.0 carries the USDT probes"
else
	bad "the packaged libasx.so.0 has no USDT probes (built without <sys/sdt.h>?)"
fi
# its postinst has dkms build the module (dh_dkms: debian/asx-dkms.dkms)
if dpkg-deb -I "$scratch"/asx-dkms_*.deb postinst 2>/dev/null | grep -q 'dkms'; then
	ok "asx-dkms's postinst runs dkms"
else
	bad "asx-dkms has no postinst running dkms (is debian/asx-dkms.dkms missing?)"
fi
src=$(ls -d "$root"/usr/src/asx-* 2>/dev/null)
if [ -n "$src" ] && [ -r "$src/dkms.conf" ] && [ -r "$src/kmod/Kbuild" ]; then
	ok "asx-dkms holds dkms.conf and the module's sources"
else
	bad "asx-dkms lacks dkms.conf or kmod/"
fi
finish
