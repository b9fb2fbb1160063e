#!/usr/bin/env bash
# deploy/libmnl-static.sh OUT: puts a static libmnl.a at OUT, for `make
# static`. The static binary is what the DaemonSet copies onto nodes whose
# libc and libraries we do not know, so every library goes in.
#
# libjansson-dev and libnftnl-dev ship their .a on Debian 12, libmnl-dev
# does not (later releases' does). In this order:
#   1. the system's libmnl.a, when there is one;
#   2. libmnl built from Debian's own source package of the installed
#      libmnl-dev (the headers we compile against), with `apt-get source`;
#   3. where the archive serves no sources: the libmnl-dev package of
#      Debian's current `stable`, which ships libmnl.a (libmnl uses nothing
#      of the C library but sockets, malloc and printf, and its ABI has not
#      changed since 1.0, so it links into a Debian 12 build).
# Both fetch from the archive this machine's apt already uses: its entries
# for the machine's own release, read from the apt configuration, are
# copied into a private apt state under OUT's directory (the machine's apt
# configuration, lists and package database are not touched), and apt
# checks every file against the signed archive index as for any package.
# No mirror and no release name is written here.
# Needs: apt, dpkg-dev (dpkg-source), gcc, make.
set -euo pipefail

out=${1:?usage: libmnl-static.sh OUT}
dir=$(cd "$(dirname "$out")" && pwd)
out=$dir/$(basename "$out") # absolute: the build below runs elsewhere

sys=$(${CC:-cc} -print-file-name=libmnl.a)
if [[ $sys == /* && -f $sys ]]; then
	cp "$sys" "$out"
	exit 0
fi
say() { echo "libmnl-static.sh: $*" >&2; }
for tool in apt-get apt-config dpkg-source dpkg-deb dpkg-query make; do
	command -v "$tool" >/dev/null || { say "needs $tool (apt-get install dpkg-dev make)" && exit 1; }
done
version=$(dpkg-query -W -f='${source:Version}' libmnl-dev 2>/dev/null) || { say "libmnl-dev is not installed" && exit 1; }
# shellcheck disable=SC1091 # the machine's own
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n $codename ]] || { say "no VERSION_CODENAME in /etc/os-release" && exit 1; }

work=$dir/libmnl-build
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
# shellcheck source=deploy/apt-private.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-private.sh"

# 2. The source package, built.
from_source() {
	local src=$work/src dsc
	mkdir -p "$src"
	private_apt deb-src "$codename" || return 1
	(cd "$src" && apt-get "${APT[@]}" source --download-only "libmnl=$version" >/dev/null 2>&1) || return 1
	dsc=$(find "$src" -maxdepth 1 -name 'libmnl_*.dsc' | head -n1)
	[[ -n $dsc ]] || return 1
	# apt checked the files against the signed index; dpkg-source checks
	# them against the .dsc and applies Debian's patches.
	(cd "$src" && dpkg-source --no-check -x "$dsc" tree >/dev/null) || return 1
	(cd "$src/tree" && ./configure --quiet --enable-static --disable-shared CC="${CC:-cc}" \
		CFLAGS="-O2 -fPIE" >/dev/null && make --quiet -C src >/dev/null) || return 1
	find "$src/tree" -name libmnl.a | head -n1
}

# 3. The current stable release's libmnl-dev, which ships libmnl.a.
from_stable() {
	local deb=$work/deb
	mkdir -p "$deb"
	private_apt deb stable || return 1
	(cd "$deb" && apt-get "${APT[@]}" download libmnl-dev) || return 1
	dpkg-deb -x "$deb"/libmnl-dev_*.deb "$deb/root" || return 1
	find "$deb/root" -name libmnl.a | head -n1
}

say "no libmnl.a here; building Debian's libmnl $version from its source package"
if ! a=$(from_source) || [[ -z $a ]]; then
	say "the archive serves no libmnl $version source; taking the libmnl.a of stable's libmnl-dev"
	if ! a=$(from_stable) || [[ -z $a ]]; then
		say "no libmnl.a could be had"
		exit 1
	fi
fi
cp "$a" "$out"
