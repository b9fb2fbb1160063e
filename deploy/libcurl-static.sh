#!/usr/bin/env bash
# deploy/libcurl-static.sh OUT: puts a static libcurl.a at OUT, for `make
# static` (the node agent's client of the Kubernetes API: agent/kapi.h).
#
# Debian 12's libcurl4-openssl-dev ships a libcurl.a, but it needs static
# archives Debian does not ship (GSSAPI/Kerberos, LDAP, librtmp, libssh2,
# libpsl, nghttp2): it cannot link into a static binary. So libcurl is built
# from Debian's own source package of the installed libcurl4-openssl-dev
# (the headers we compile against, with Debian's patches), `apt-get source`
# through a private apt state (deploy/apt-private.sh), configured for what
# the agent uses and nothing else: HTTP(S) over OpenSSL (Debian's
# libssl.a/libcrypto.a), no other protocol, no compression, no IDN, no
# proxy-side auth libraries, no .netrc, no default CA path (the agent always names
# the ServiceAccount's CA). Needs: apt, dpkg-dev (dpkg-source), gcc, make,
# libssl-dev.
set -euo pipefail

out=${1:?usage: libcurl-static.sh OUT}
dir=$(cd "$(dirname "$out")" && pwd)
out=$dir/$(basename "$out") # absolute: the build below runs elsewhere
say() { echo "libcurl-static.sh: $*" >&2; }
for tool in apt-get apt-config dpkg-source dpkg-query make; do
	command -v "$tool" >/dev/null || { say "needs $tool (apt-get install dpkg-dev make)" && exit 1; }
done
version=$(dpkg-query -W -f='${source:Version}' libcurl4-openssl-dev 2>/dev/null) ||
	{ say "libcurl4-openssl-dev is not installed" && exit 1; }
# shellcheck disable=SC1091 # the machine's own
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n $codename ]] || { say "no VERSION_CODENAME in /etc/os-release" && exit 1; }

work=$dir/libcurl-build
rm -rf "$work"
trap 'rm -rf "$work"' EXIT
# shellcheck source=deploy/apt-private.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-private.sh"

src=$work/src
mkdir -p "$src"
say "building Debian's curl $version from its source package (HTTP(S) over OpenSSL only)"
private_apt deb-src "$codename" || exit 1
(cd "$src" && apt-get "${APT[@]}" source --download-only "curl=$version" >/dev/null 2>&1) ||
	{ say "the archive serves no curl $version source" && exit 1; }
dsc=$(find "$src" -maxdepth 1 -name 'curl_*.dsc' | head -n1)
[[ -n $dsc ]] || { say "no curl .dsc downloaded" && exit 1; }
(cd "$src" && dpkg-source --no-check -x "$dsc" tree >/dev/null)
cd "$src/tree"
./configure --quiet --enable-static --disable-shared --with-openssl --without-zlib --without-brotli \
	--without-zstd --without-libpsl --without-libidn2 --without-nghttp2 --without-nghttp3 --without-ngtcp2 \
	--without-libssh2 --without-libssh --without-librtmp --without-gssapi --without-libgsasl \
	--disable-ldap --disable-ldaps --disable-rtsp --disable-dict --disable-telnet --disable-tftp \
	--disable-pop3 --disable-imap --disable-smb --disable-smtp --disable-gopher --disable-mqtt \
	--disable-ftp --disable-file --disable-manual --disable-ntlm --disable-alt-svc --disable-hsts \
	--disable-unix-sockets --disable-cookies --disable-netrc --without-ca-bundle --without-ca-path --without-ca-fallback \
	--disable-threaded-resolver --disable-ares CC="${CC:-cc}" CFLAGS="-O2 -fPIE" >/dev/null
make --quiet -C lib >/dev/null
cp lib/.libs/libcurl.a "$out"
