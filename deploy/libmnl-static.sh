#!/usr/bin/env bash
# deploy/libmnl-static.sh OUT: puts a static libmnl.a at OUT, for `make
# static`. The static binary is what the DaemonSet copies onto nodes whose
# libc and libraries we do not know, so every library goes in.
#
# libjansson-dev and libnftnl-dev ship their .a on Debian 12, libmnl-dev
# does not (Debian 13's does). So: the system's libmnl.a when there is one;
# otherwise Debian 13's libmnl-dev package, fetched with apt-get into a
# private apt state under OUT's directory (the machine's apt configuration
# and package database are not touched) and checked by apt as usual
# against the Debian archive keyring. libmnl uses nothing of the C library
# but sockets, malloc and printf, so an archive built on Debian 13 links
# into a Debian 12 static binary.
set -euo pipefail

out=${1:?usage: libmnl-static.sh OUT}
dir=$(cd "$(dirname "$out")" && pwd)

sys=$(${CC:-cc} -print-file-name=libmnl.a)
if [[ $sys == /* && -f $sys ]]; then
	cp "$sys" "$out"
	exit 0
fi

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -f $keyring ]] || { echo "libmnl-static.sh: no $keyring (install debian-archive-keyring)" >&2 && exit 1; }
apt_dir=$dir/apt
rm -rf "$apt_dir"
mkdir -p "$apt_dir/parts" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/deb"
cat >"$apt_dir/parts/trixie.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: $keyring
EOF
opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/parts"
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
	-o "Debug::NoLocking=1" -o "APT::Sandbox::User=root" -qq)
echo "libmnl-static.sh: no libmnl.a here; fetching Debian 13's libmnl-dev" >&2
apt-get "${opts[@]}" update
(cd "$apt_dir/deb" && apt-get "${opts[@]}" download libmnl-dev)
dpkg-deb -x "$apt_dir"/deb/libmnl-dev_*.deb "$apt_dir/root"
a=$(find "$apt_dir/root" -name libmnl.a | head -n1)
[[ -n $a ]] || { echo "libmnl-static.sh: the package holds no libmnl.a" >&2 && exit 1; }
cp "$a" "$out"
rm -rf "$apt_dir"
