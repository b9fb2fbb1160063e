#!/usr/bin/env bash
# e2e/k8s/build.sh: builds the pinned Kubernetes release (and its etcd), and
# the pinned Helm, from source through the Go module proxy, once, and prints
# the directory that holds the binaries (the last line of stdout; progress
# goes to stderr):
#
#   BIN=$(e2e/k8s/build.sh)   ->  /var/cache/boxxkite-netguard/k8s/v1.33.13/bin
#
# The release is whatever e2e/k8s/module/go.mod requires, Helm whatever
# e2e/k8s/module-helm/go.mod requires (a module of its own: it needs newer
# k8s.io libraries than the cluster's release): those files and their go.sum
# are the pin, committed. -mod=readonly means the build never adds
# or changes a requirement or a checksum: every module zip the proxy serves
# is checked against go.sum, and a module go.sum lacks is an error, not a
# lookup. (go.sum itself was written by `go mod tidy` with the default
# GOSUMDB, sum.golang.org, reached through the proxy: see README.md here.)
#
# The binaries live outside the clone, keyed by version, with a stamp that
# names what built them (both go.mod and go.sum, this script, the Go version): a
# complete set with a matching stamp is reused at once; anything else is
# rebuilt. GOMODCACHE and GOCACHE live under the same root, so a rebuild
# (another version, a new Go) only compiles what changed.
#
#   build.sh --check  builds nothing: prints the directory and exits 0 when a
#                     complete set is cached, exits 3 otherwise (for a
#                     suite that runs the cluster only when it is cheap)
#   K8S_CACHE=DIR    the cache root (default /var/cache/boxxkite-netguard)
#   GO=PATH          the go command (default: go on PATH, else /usr/local/go)
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
MOD=$HERE/module
HELM_MOD=$HERE/module-helm
CACHE=${K8S_CACHE:-/var/cache/boxxkite-netguard}
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}

# The commands, by import path; the binary is named after the last element
# (etcd's package is go.etcd.io/etcd/server/v3, so it is named explicitly).
K8S_CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
ETCD_PKG=go.etcd.io/etcd/server/v3

say() { printf 'k8s-build: %s\n' "$*" >&2; }

# modver MODULE: the version go.mod requires (the pin has one place).
# modver MODULE [GO.MOD]
modver() {
	awk -v m="$1" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "${2:-$MOD/go.mod}"
}
K8S_VERSION=$(modver k8s.io/kubernetes)
ETCD_VERSION=$(modver "$ETCD_PKG")
HELM_PKG=helm.sh/helm/v3
HELM_VERSION=$(modver "$HELM_PKG" "$HELM_MOD/go.mod")
if [ -z "$K8S_VERSION" ] || [ -z "$ETCD_VERSION" ]; then say "no pin in $MOD/go.mod"; exit 1; fi
case $HELM_VERSION in v3.*) ;; *) say "no Helm v3 pin in $HELM_MOD/go.mod"; exit 1 ;; esac

OUT=$CACHE/k8s/$K8S_VERSION
BIN=$OUT/bin

[ -x "$GO" ] || { say "no go command (set GO=, or install Go at /usr/local/go)"; exit 1; }

# Only the pinned inputs: no workspace, no toolchain switch (a go.mod
# 'toolchain' line must not fetch another Go), checksums always checked
# (nothing exempted by GONOSUMDB/GOPRIVATE/GOINSECURE), static binaries.
export GOMODCACHE=$CACHE/go/mod GOCACHE=$CACHE/go/build
export GOFLAGS="-mod=readonly -trimpath -buildvcs=false" GOWORK=off GOTOOLCHAIN=local
unset GONOSUMDB GOPRIVATE GOINSECURE GONOPROXY
[ "${GOSUMDB:-off}" != off ] || export GOSUMDB=sum.golang.org
export CGO_ENABLED=0

# stamp: what the cached set was built from. Any change to the pin, to this
# script or to the Go version rebuilds (from the warm Go cache: seconds).
stamp() {
	{
		"$GO" version
		sha256sum "$MOD/go.mod" "$MOD/go.sum" "$HELM_MOD/go.mod" "$HELM_MOD/go.sum" "$HERE/build.sh" | cut -d' ' -f1
	} 2>/dev/null
}
complete() {
	local b
	for b in "${K8S_CMDS[@]}" etcd helm; do [ -x "$BIN/$b" ] || return 1; done
	[ "$(cat "$BIN/.stamp" 2>/dev/null)" = "$(stamp)" ]
}

if complete; then
	say "cached: $BIN"
	echo "$BIN"
	exit 0
fi
if [ "${1:-}" = --check ]; then
	say "not built yet: $BIN (e2e/k8s/build.sh builds it)"
	exit 3
fi

mkdir -p "$OUT" "$CACHE/go"
# One build at a time per version: a second caller waits, then finds the set.
exec {LOCK}>"$OUT/.lock"
flock "$LOCK"
if complete; then
	say "cached: $BIN (built while waiting)"
	echo "$BIN"
	exit 0
fi

# What `kubectl version` and the node's kubeletVersion show, as the release
# build stamps them (hack/lib/version.sh); an unstamped build says v0.0.0.
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
vflags=
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	vflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done

T0=$(date +%s)
cd "$MOD"
say "Kubernetes $K8S_VERSION, etcd $ETCD_VERSION, Helm $HELM_VERSION, $("$GO" version | cut -d' ' -f3), $(nproc) cores"
say "downloading modules (checked against go.sum) into $GOMODCACHE"
for m in "$MOD" "$HELM_MOD"; do
	(cd "$m" && "$GO" mod download && "$GO" mod verify >&2) || exit 1
done
T1=$(date +%s)

tmp=$(mktemp -d "$OUT/bin.new.XXXXXX")
chmod 0755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
pkgs=()
for c in "${K8S_CMDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
say "compiling ${K8S_CMDS[*]}"
# -s -w: no symbol table or DWARF (as a release build); stack traces stay.
"$GO" build -ldflags "-s -w$vflags" -o "$tmp/" "${pkgs[@]}"
say "compiling etcd"
"$GO" build -ldflags "-s -w" -o "$tmp/etcd" "$ETCD_PKG"
# Helm as its release build stamps it (its Makefile): the version, and the
# Kubernetes version its client libraries are (what `helm template` assumes
# of a cluster it does not ask).
say "compiling helm"
cgo=$(cd "$HELM_MOD" && "$GO" list -m -f '{{.Version}}' k8s.io/client-go) || exit 1
cgo=${cgo#v0.}
hflags="-X $HELM_PKG/internal/version.version=$HELM_VERSION -X $HELM_PKG/internal/version.metadata="
for p in pkg/lint/rules pkg/chartutil; do
	hflags+=" -X $HELM_PKG/$p.k8sVersionMajor=1 -X $HELM_PKG/$p.k8sVersionMinor=${cgo%%.*}"
done
(cd "$HELM_MOD" && "$GO" build -ldflags "-s -w $hflags" -o "$tmp/helm" "$HELM_PKG/cmd/helm") || exit 1
stamp >"$tmp/.stamp"
T2=$(date +%s)

# The set appears whole, by rename, or not at all.
rm -rf "$BIN.old"
[ ! -e "$BIN" ] || mv "$BIN" "$BIN.old"
mv "$tmp" "$BIN"
rm -rf "$BIN.old"
trap - EXIT
say "built in $((T2 - T0)) s (modules $((T1 - T0)) s, compile $((T2 - T1)) s):" \
	"$(du -sh "$BIN" | cut -f1) of binaries; module zips in the cache: $(du -sh "$GOMODCACHE/cache/download" | cut -f1)"
echo "$BIN"
