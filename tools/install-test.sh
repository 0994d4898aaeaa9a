#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#
# install-test.sh PREFIX - build a program against an installed libasx the
# way a user would, with `cc $(pkg-config --cflags --libs libasx)`, and run
# it.  Used by `make check` (stage "install") after `make install`.
set -euo pipefail
prefix=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every installed public header, each on its own first (self-contained)
# and all together with the uapi header (no clashing names).
for h in "$prefix"/include/asx/*.h; do
	echo "#include <asx/$(basename "$h")>" > "$tmp/one.c"
	cc -std=gnu11 -Wall -Wextra -Werror -I"$prefix/include" -fsyntax-only "$tmp/one.c" ||
		{ echo "install-test: <asx/$(basename "$h")> does not compile on its own" >&2; exit 1; }
	echo "#include <asx/$(basename "$h")>" >> "$tmp/all.h"
done
{
	echo '#include <linux/asx.h>'
	cat "$tmp/all.h"
} > "$tmp/headers.h"

cat > "$tmp/user.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "headers.h"

int main(void)
{
	struct asx_mutex m = ASX_MUTEX_INITIALIZER;
	int r;

	{
		ASX_GUARD(&m);
		r = asx_mutex_trylock(&m);	/* held by the guard */
	}
	if (r != -16 /* -EBUSY */ || asx_mutex_trylock(&m) != 0)
		return 1;
	asx_mutex_unlock(&m);
	printf("libasx %s, uapi ioctl %#lx\n", asx_version(), (unsigned long)ASX_IOC_VERSION);
	return strcmp(asx_version(), "0.1.0") != 0;
}
C
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs libasx)
echo "install-test: cc $flags"
# shellcheck disable=SC2086
cc -std=gnu11 -Wall -Wextra -Werror -I"$tmp" -o "$tmp/user" "$tmp/user.c" $flags
# the shared library must be the one picked (no static fallback)
readelf -d "$tmp/user" | grep -q 'NEEDED.*libasx.so.0'
LD_LIBRARY_PATH="$prefix/lib" "$tmp/user"
# and the static library links on its own too
# shellcheck disable=SC2086
cc -std=gnu11 -I"$tmp" -o "$tmp/user-static" "$tmp/user.c" $(pkg-config --cflags libasx) \
	"$prefix/lib/libasx.a" $(pkg-config --static --libs-only-l libasx | sed 's/-lasx//')
"$tmp/user-static" >/dev/null
echo "install-test: ok"
