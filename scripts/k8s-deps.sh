#!/usr/bin/env bash
# scripts/k8s-deps.sh: what `make e2e-k8s` needs on a fresh Debian 12, as
# root: the CRI e2e's packages (scripts/deps.sh --e2e --cri: containerd,
# runc, the CNI plugins, dnsmasq, socat, busybox-static, iptables...), then
# openssl (the cluster's certificates), curl (the components' health
# ports; the pods' curl, with its libraries), python3-yaml (the Helm chart
# compared with the kustomizations), and a Go new enough for the pinned
# go.mod files (the Kubernetes binaries and Helm are built from source by
# e2e/k8s/build.sh). Debian's golang is too old; this project's machines
# have Go at /usr/local/go.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/deps.sh --e2e --cri

extra=(openssl curl python3-yaml)
missing=()
for p in "${extra[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "missing Debian packages: ${missing[*]} (sudo apt-get install ${missing[*]})" >&2
		exit 1
	fi
	echo "installing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

go=$(command -v go || echo /usr/local/go/bin/go)
want=$(awk '$1 == "go" { print $2; exit }' e2e/k8s/module/go.mod)
if ! [ -x "$go" ]; then
	echo "e2e-k8s needs Go >= $want (on PATH or at /usr/local/go) to build Kubernetes" >&2
	exit 1
fi
have=$("$go" env GOVERSION)
have=${have#go}
if [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -n 1)" != "$want" ]; then
	echo "e2e-k8s needs Go >= $want; $go is $have" >&2
	exit 1
fi
