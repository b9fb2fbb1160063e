#!/usr/bin/env bash
# Makes sure the Debian packages the build and the tests need are present.
# As root it installs what is missing (one apt-get run); otherwise it names
# what is missing and fails, so `make test` never half-runs.
#
#   scripts/deps.sh                build + unit-test packages
#   scripts/deps.sh --e2e --cri    also the netns e2e / containerd CRI e2e
#                                  packages; --manifests, --static, --lint, --fuzz,
#                                  --valgrind for those targets (only
#                                  installed as root)
#
# A package listed as NAME:COMMAND is also satisfied by COMMAND on the
# PATH: Debian's kubernetes-client ships /usr/bin/kubectl, which a kubectl
# from another source may already own (dpkg would refuse to overwrite it).
set -euo pipefail

# libcurl4-openssl-dev: the agent's client of the Kubernetes API (TLS by
# OpenSSL; libssl-dev comes with it).
build_pkgs=(gcc make pkg-config libc6-dev libjansson-dev libnftnl-dev libmnl-dev libcurl4-openssl-dev libcmocka-dev python3)
# e2e and demo: namespaces, the reference CNI plugins, fake DNS, listeners,
# nft to show the ruleset, python3 to play libcni.
# promtool (Debian's prometheus package) is the authority on the
# Prometheus text format that `stats --prometheus` prints; the values are
# read back with the Prometheus project's Python parser; the node agent's
# /metrics scrape passes it too (e2e/ops.sh, test/unit/agent/test_metrics.c).
# iptables: a hostile pod's own NFQUEUE rule (e2e/agent.sh; this kernel's nft
# has no queue expression, only the xt target).
# openssl: e2e/grants.sh's test CA for its fake Kubernetes API.
# e2e/dnsquery.sh: crafted queries (python3-dnspython), a static musl
# getaddrinfo client (musl-tools; test/tools/gaimusl.c), glibc's getent.
e2e_pkgs=(openssl iproute2 nftables containernetworking-plugins dnsmasq-base socat util-linux procps python3 prometheus python3-prometheus-client iptables python3-dnspython musl-tools)
# test/manifests: YAML (python3-yaml), the Kubernetes API's field names
# (python3-kubernetes models), kustomize (kubectl kustomize).
manifests_pkgs=(python3 python3-yaml python3-kubernetes kubernetes-client:kubectl)
cri_pkgs=(containerd runc python3-grpcio busybox-static)
# make static: libmnl.a and libcurl.a from Debian's source packages
# (deploy/libmnl-static.sh, deploy/libcurl-static.sh).
static_pkgs=(dpkg-dev debian-archive-keyring file)
# iwyu: include-what-you-use, the unused-include check (scripts/iwyu.sh).
lint_pkgs=(clang-format clang-tidy cppcheck shellcheck iwyu)
fuzz_pkgs=(clang libclang-rt-14-dev)
check_pkgs=(valgrind)
bench_pkgs=(iperf3 time iptables valgrind linux-perf)

want=("${build_pkgs[@]}")
if [ "$(id -u)" -eq 0 ]; then
	for arg in "$@"; do
		case "$arg" in
		--e2e) want+=("${e2e_pkgs[@]}") ;;
		--cri) want+=("${cri_pkgs[@]}") ;;
		--manifests) want+=("${manifests_pkgs[@]}") ;;
		--static) want+=("${static_pkgs[@]}") ;;
		--lint) want+=("${lint_pkgs[@]}") ;;
		--fuzz) want+=("${fuzz_pkgs[@]}") ;;
		--valgrind) want+=("${check_pkgs[@]}") ;;
		--bench) want+=("${bench_pkgs[@]}") ;;
		*) echo "deps.sh: unknown option $arg" >&2; exit 2 ;;
		esac
	done
fi

missing=()
for w in "${want[@]}"; do
	p=${w%%:*}
	[[ $w == *:* ]] && command -v "${w#*:}" >/dev/null && continue
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "missing Debian packages: ${missing[*]}" >&2
	echo "install them (sudo apt-get install ${missing[*]}) or run this target with sudo" >&2
	exit 1
fi
echo "installing Debian packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
