#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - build the debug kernel of `make check-debug`, once.
#
# Usage: tools/vm/debug-kernel.sh [--kernel 6.1|6.12|6.12-rt] [options]
#
# Builds one of Debian's kernel sources with x86_64's defconfig and the
# fragments below merged over it, in this order (a later line wins):
#     6.1       tools/vm/debug.config
#     6.12      tools/vm/debug.config tools/vm/debug-6.12.config
#     6.12-rt   tools/vm/debug.config tools/vm/debug-6.12.config
#               tools/vm/debug-rt.config
# debug.config has what every flavour shares: KASAN, lockdep,
# DEBUG_ATOMIC_SLEEP, PROVE_RCU, kmemleak, ... (see the fragment);
# debug-6.12.config what 6.12 names differently; debug-rt.config turns on
# PREEMPT_RT. 6.1 is built from linux-source-6.1 (the version the test VM
# boots), 6.12 and 6.12-rt from linux-source-6.12. It builds bzImage and
# runs modules_prepare, so asx.ko can be built against the tree:
#     tools/vm/kmod-build.sh DIR/linux OUT
#
# Everything lives outside the clone, in
#     CACHE/debug-kernel-VERSION[-rt]/      (CACHE: /var/cache/asx)
# VERSION is the source package's. Each kernel is built once per machine: a
# second run finds it (DIR/done names the hash of the fragments and compiler
# it was built with) and returns at once. A changed fragment (another hash)
# rewrites the config and rebuilds in the same tree, where kbuild recompiles
# only what the changed options touch. Runs at the same time wait for each
# other. A tree takes 2 to 3 GB; rm -rf DIR starts afresh.
#
# The last line of the output is DIR; the kernel is DIR/linux/arch/x86/boot/bzImage
# and the build tree for asx.ko is DIR/linux.
#
# Building needs flex, bison and libelf's headers. When the host lacks them
# they are fetched as Debian packages (apt-get download) and unpacked under
# CACHE/hosttools, not installed.
#
# Options:
#   --kernel K      6.1 (the default, or ASX_DEBUG_KERNEL), 6.12 or 6.12-rt
#   --cache DIR     the cache (default /var/cache/asx, or ASX_DEBUG_CACHE)
#   -j N            make's jobs (default: the number of CPUs); make runs under
#                   nice -n 19
#   --config-only   extract and write DIR/linux/.config, then stop
#   --check         print DIR and exit 0 if the kernel is built, else exit 1
#   --rebuild       build again even if DIR says it is done
#   -h, --help      this text
#
# Exit status: 0 done, 1 the build failed (the end of its log is printed;
# the whole log is DIR/build.log), 2 bad usage or a missing prerequisite.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
prog=debug-kernel.sh
flavour=${ASX_DEBUG_KERNEL:-6.1}
cache=${ASX_DEBUG_CACHE:-/var/cache/asx}
jobs=$(nproc 2>/dev/null || echo 2)
config_only=0
check_only=0
rebuild=0

usage() {
	sed -n '3,/^set -euo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

die() {
	echo "$prog: $*" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) usage; exit 0 ;;
	--kernel) [ $# -ge 2 ] || die "--kernel needs 6.1, 6.12 or 6.12-rt"; flavour=$2; shift ;;
	--kernel=*) flavour=${1#*=} ;;
	--cache) [ $# -ge 2 ] || die "--cache needs DIR"; cache=$2; shift ;;
	--cache=*) cache=${1#*=} ;;
	-j) [ $# -ge 2 ] || die "-j needs N"; jobs=$2; shift ;;
	-j*) jobs=${1#-j} ;;
	--config-only) config_only=1 ;;
	--check) check_only=1 ;;
	--rebuild) rebuild=1 ;;
	*) die "unknown argument '$1' (try --help)" ;;
	esac
	shift
done
case "$jobs" in ''|*[!0-9]*|0) die "-j wants a positive number" ;; esac

fragments=("$top/tools/vm/debug.config")
suffix=
case "$flavour" in
6.1) ;;
6.12) fragments+=("$top/tools/vm/debug-6.12.config") ;;
6.12-rt) fragments+=("$top/tools/vm/debug-6.12.config" "$top/tools/vm/debug-rt.config")
	suffix=-rt ;;
*) die "--kernel: '$flavour' is none of 6.1, 6.12, 6.12-rt" ;;
esac
srcpkg=linux-source-${flavour%-rt}
tarball=${ASX_DEBUG_TARBALL:-/usr/src/$srcpkg.tar.xz}
for f in "${fragments[@]}"; do
	[ -r "$f" ] || die "$f missing"
done
[ -r "$tarball" ] || die "$tarball not found; install Debian's $srcpkg" \
	"(apt-get install $srcpkg; Debian 12 has linux-source-6.12 in bookworm-security)"

# The key: the source package's version (else the tarball's size and date),
# the fragment and the compiler.
srcver=$(dpkg-query -W -f '${Version}' "$srcpkg" 2>/dev/null) ||
	srcver=$(stat -c '%s-%Y' "$tarball")
hash=$({ cat "${fragments[@]}"; echo "$srcver"; gcc --version | head -n 1; } |
	sha256sum | cut -c1-12)
dir="$cache/debug-kernel-$srcver$suffix"
tree="$dir/linux"
bzimage="$tree/arch/x86/boot/bzImage"

# DIR/done: "HASH RELEASE built in Ns on DATE"
built() {
	[ -f "$bzimage" ] && [ "$(cut -d' ' -f1 "$dir/done" 2>/dev/null)" = "$hash" ]
}
# asx.ko resolves its symbols against Module.symvers (see the build below):
# vmlinux.symvers, copied again whenever vmlinux was linked again. Also run
# for a tree built already, which an older version of this script left stale.
symvers() {
	[ ! -s "$tree/Module.symvers" ] || [ "$tree/vmlinux.symvers" -nt "$tree/Module.symvers" ] ||
		return 0
	cp "$tree/vmlinux.symvers" "$tree/Module.symvers" && return 0
	echo "$prog: FAIL: no vmlinux.symvers in $tree" >&2
	return 1
}
if [ "$check_only" = 1 ]; then
	built || exit 1
	echo "$dir"
	exit 0
fi
if [ "$rebuild" = 0 ] && [ "$config_only" = 0 ] && built; then
	echo "$prog: built already ($(cut -d' ' -f2- "$dir/done"))" >&2
	symvers || exit 1
	echo "$dir"
	exit 0
fi

mkdir -p "$dir" || die "cannot create $dir (set --cache or ASX_DEBUG_CACHE)"
# One build at a time per cache entry; a second caller waits, then finds it.
exec 9> "$dir/lock"
if ! flock -n 9; then
	echo "$prog: another build of $dir runs; waiting for it" >&2
	flock 9
	if [ "$rebuild" = 0 ] && [ "$config_only" = 0 ] && built; then
		echo "$dir"
		exit 0
	fi
fi

# ------------------------------------------------------------ host tools
for t in make gcc bc perl openssl sha256sum flock xz; do
	command -v "$t" >/dev/null || die "'$t' not found; install it (tools/setup.sh)"
done
[ -f /usr/include/openssl/ssl.h ] || die "OpenSSL headers missing: apt-get install libssl-dev"
[ -f /usr/include/zlib.h ] || die "zlib headers missing: apt-get install zlib1g-dev"

# flex, bison (Kconfig's parser) and libelf's headers (objtool): the host's,
# else Debian's packages unpacked under $cache/hosttools.
hosttools="$cache/hosttools"
need_pkgs=()
command -v flex >/dev/null || need_pkgs+=(flex)
command -v bison >/dev/null || need_pkgs+=(bison)
command -v m4 >/dev/null || need_pkgs+=(m4)
[ -f /usr/include/gelf.h ] || need_pkgs+=(libelf-dev)
if [ ${#need_pkgs[@]} -gt 0 ]; then
	if [ ! -f "$hosttools/done" ] || [ "$(cat "$hosttools/done")" != "${need_pkgs[*]}" ]; then
		[ -e /usr/lib/x86_64-linux-gnu/libelf.so.1 ] ||
			die "libelf1 missing: apt-get install libelf-dev"
		echo "$prog: the host lacks ${need_pkgs[*]}; unpacking Debian's packages" \
			"under $hosttools (not installing them)" >&2
		rm -rf "$hosttools"
		mkdir -p "$hosttools/debs"
		(cd "$hosttools/debs" && apt-get download "${need_pkgs[@]}") >&2 ||
			die "apt-get download ${need_pkgs[*]} failed; install them:" \
				"apt-get install flex bison libelf-dev"
		for d in "$hosttools"/debs/*.deb; do
			dpkg -x "$d" "$hosttools/root" || die "dpkg -x $d failed"
		done
		# the link points into the package's own libelf1, which the host has
		if [ -e "$hosttools/root/usr/lib/x86_64-linux-gnu/libelf.so" ] ||
		   [ -L "$hosttools/root/usr/lib/x86_64-linux-gnu/libelf.so" ]; then
			ln -sf /usr/lib/x86_64-linux-gnu/libelf.so.1 \
				"$hosttools/root/usr/lib/x86_64-linux-gnu/libelf.so"
		fi
		echo "${need_pkgs[*]}" > "$hosttools/done"
	fi
	r="$hosttools/root"
	export PATH="$r/usr/bin:$PATH"
	export BISON_PKGDATADIR="$r/usr/share/bison"
	export M4="$(command -v m4)"
	# searched after the kernel's own include paths; only libelf's headers
	export C_INCLUDE_PATH="$r/usr/include${C_INCLUDE_PATH:+:$C_INCLUDE_PATH}"
	export LIBRARY_PATH="$r/usr/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}"
fi

# ------------------------------------------------------------ source
start=$SECONDS
log="$dir/build.log"
rm -f "$dir/done"
if [ ! -f "$dir/extracted" ]; then
	echo "$prog: extracting $tarball into $tree" >&2
	rm -rf "$tree" "$dir/x"
	mkdir -p "$dir/x"
	tar -xJf "$tarball" -C "$dir/x" || die "cannot extract $tarball"
	src=$(find "$dir/x" -mindepth 1 -maxdepth 1 -type d | head -n 1)
	[ -f "$src/Makefile" ] || die "$tarball has no kernel tree"
	mv "$src" "$tree"
	rmdir "$dir/x"
	touch "$dir/extracted"
fi

# ------------------------------------------------------------ config
kmake() {
	nice -n 19 make -C "$tree" -j"$jobs" "$@"
}
names=$(for f in "${fragments[@]}"; do basename "$f"; done | paste -sd' ' -)
: > "$log"
echo "$prog: writing the config of $flavour (defconfig + $names)" >&2
{
	kmake defconfig &&
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$tree" "$tree/.config" "${fragments[@]}" &&
	kmake olddefconfig
} >> "$log" 2>&1 || {
	tail -n 40 "$log" >&2
	echo "$prog: FAIL: the config could not be written (log: $log)" >&2
	exit 1
}
rm -f "$dir"/debug*.config
cp "${fragments[@]}" "$dir/"

# Every line of the fragments must have taken, the last one of an option
# counting (as in merge_config.sh). Fatal: the checkers and what asx.ko needs
# (fatal_re), and every line of the version's and the RT fragment, which
# exist for what they set; the rest of debug.config (a trimmed driver, ...)
# is only warned about. An option that the source does not have at all is
# an error, unless a later fragment declares it gone ("# gone: CONFIG_X"),
# so that an option renamed or removed upstream is never skipped silently.
fatal_re='^CONFIG_(KASAN|KASAN_GENERIC|KASAN_INLINE|PROVE_LOCKING|DEBUG_ATOMIC_SLEEP|PROVE_RCU|DEBUG_KMEMLEAK|SLUB_DEBUG|DEBUG_LIST|MODULES|MODULE_UNLOAD|KVM|MEMCG|USERFAULTFD|VIRTIO_PCI|9P_FS|VIRTIO_FS|OVERLAY_FS|DEVTMPFS|DEBUG_FS|FTRACE)$'
declare -A known=() want=() from=() gone=()
while read -r sym; do
	known[CONFIG_$sym]=1
done < <(find "$tree" -name 'Kconfig*' ! -path '*/Documentation/*' -exec \
	sed -nE 's/^[[:space:]]*(menu)?config[[:space:]]+([A-Za-z0-9_]+).*/\2/p' {} + | sort -u)
order=()
for f in "${fragments[@]}"; do
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*) opt=${line%%=*}; val=${line#*=} ;;
		"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}; val=n ;;
		"# gone: CONFIG_"*) opt=${line#\# gone: }; gone[${opt%% *}]=$(basename "$f")
			continue ;;
		*) continue ;;
		esac
		[ -n "${want[$opt]+set}" ] || order+=("$opt")
		want[$opt]=$val
		from[$opt]=$f
	done < "$f"
done
bad=0
for opt in "${order[@]}"; do
	src=$(basename "${from[$opt]}")
	if [ -n "${gone[$opt]+set}" ]; then
		if [ -n "${known[$opt]+set}" ]; then
			echo "$prog: ERROR: ${gone[$opt]} says $opt is gone, yet $srcpkg has it" >&2
			bad=1
		else
			echo "$prog: note: $opt is gone in $srcpkg (${gone[$opt]})" >&2
		fi
		continue
	fi
	if [ -z "${known[$opt]+set}" ]; then
		echo "$prog: ERROR: $opt ($src) is no option of $srcpkg; drop it, or declare" \
			"it '# gone: $opt' in that version's fragment" >&2
		bad=1
		continue
	fi
	have=$(grep -E "^$opt=" "$tree/.config" | head -n 1 | cut -d= -f2- || true)
	w=${want[$opt]}
	[ "$w" = n ] && w=
	[ "$have" = "$w" ] && continue
	if [[ "$opt" =~ $fatal_re ]] || [ "$src" != debug.config ]; then
		echo "$prog: ERROR: $opt is '${have:-unset}', $src wants '${w:-n}'" >&2
		bad=1
	elif [ -z "$w" ]; then
		echo "$prog: note: $opt stays '$have' (selected by something else)" >&2
	else
		echo "$prog: note: $opt is '${have:-unset}' ($src: '$w')" >&2
	fi
done
if ! grep -q '^CONFIG_PREEMPT_NOTIFIERS=y' "$tree/.config"; then
	echo "$prog: ERROR: CONFIG_PREEMPT_NOTIFIERS is off (asx.ko's sa.c needs it)" >&2
	bad=1
fi
[ "$bad" = 0 ] || { echo "$prog: FAIL: fix the fragments ($names)" >&2; exit 1; }

if [ "$config_only" = 1 ]; then
	echo "$prog: config written: $tree/.config" >&2
	echo "$dir"
	exit 0
fi

# ------------------------------------------------------------ build
echo "$prog: building bzImage and modules_prepare with -j$jobs (log: $log);" \
	"the first build takes long (Documentation/testing.rst)" >&2
if ! { kmake bzImage && kmake modules_prepare; } >> "$log" 2>&1; then
	tail -n 60 "$log" >&2
	echo "$prog: FAIL: the kernel build failed after $((SECONDS - start))s (log: $log)" >&2
	exit 1
fi
# asx.ko resolves its symbols against Module.symvers. Linking vmlinux writes
# vmlinux.symvers; Module.symvers (vmlinux.symvers and the in-tree modules'
# symbols) comes only with `make modules`, and no in-tree module is built
# here. So it is vmlinux.symvers, copied again whenever vmlinux was linked
# again: a rebuild with a changed fragment (CONFIG_USER_NS turns
# from_kuid_munged from an inline into an export) otherwise left asx.ko
# resolving against the old kernel's symbols.
symvers || exit 1
release=$(make -s -C "$tree" kernelrelease 2>/dev/null)
took=$((SECONDS - start))
echo "$hash $release built in ${took}s on $(date -u +%Y-%m-%dT%H:%MZ)" > "$dir/done"
echo "$prog: $release built in $((took / 60))m$((took % 60))s: $bzimage" >&2
echo "$dir"
