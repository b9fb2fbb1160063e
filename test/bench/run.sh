#!/usr/bin/env bash
# make bench: builds the benchmark's helpers and runs test/bench/bench.py as
# root. Everything happens in network namespaces named ngb-<random>-*; this
# script's trap removes any of them that are left (and the processes inside),
# also when the Python driver is killed. Settings: see test/bench/README.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

[[ $(id -u) -eq 0 ]] || { echo "bench: needs root (network namespaces): sudo make bench" >&2 && exit 1; }

# Debian packages the benchmark needs beyond the e2e set (scripts/deps.sh --e2e).
bench_pkgs=(iperf3 time iptables valgrind linux-perf iproute2 nftables containernetworking-plugins util-linux python3)
missing=()
for p in "${bench_pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "bench: installing Debian packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

BUILD=${BUILD:-build}
[[ -x $BUILD/boxxkite-netguard ]] || { echo "bench: $BUILD/boxxkite-netguard missing: run make first" >&2 && exit 1; }
mkdir -p "$BUILD/bench"
CFLAGS_BENCH=(-std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
# shellcheck disable=SC2046 # pkg-config prints several words on purpose
${CC:-cc} "${CFLAGS_BENCH[@]}" -o "$BUILD/bench/floor" test/bench/floor.c $(pkg-config --cflags --libs libnftnl libmnl)
${CC:-cc} "${CFLAGS_BENCH[@]}" -o "$BUILD/bench/benchexec" test/bench/benchexec.c
${CC:-cc} "${CFLAGS_BENCH[@]}" -o "$BUILD/bench/connrate" test/bench/connrate.c

BENCH_ID=ngb-$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
export BENCH_ID BENCH_TOOLS=$PWD/$BUILD/bench NG_BIN=$PWD/$BUILD/boxxkite-netguard NG_STATIC_BIN=$PWD/$BUILD/static/boxxkite-netguard

# The machine's own namespace must come out as it went in (informational:
# other people's work could change it too, but never this run).
root_state() { { ip -o link; ip -o addr; ip route; ip -6 route; nft list ruleset; } 2>/dev/null | sed -E 's/ (valid|preferred)_lft [^ ]+//g' | sha256sum; }

# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
	local ns pid left
	trap '' INT TERM
	for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^${BENCH_ID}-" || true); do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
		ip netns delete "$ns" 2>/dev/null || true
	done
	rm -rf /tmp/"${BENCH_ID}".* 2>/dev/null || true
	left=$(ip netns list 2>/dev/null | grep -c -E "^${BENCH_ID}-" || true)
	echo "bench: cleanup done: ${left} namespaces of ${BENCH_ID} left"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

before=$(root_state)
rc=0
/usr/bin/python3 -B test/bench/bench.py || rc=$?
after=$(root_state)
[[ $before == "$after" ]] || echo "bench: WARNING: the root namespace's links/addresses/routes/ruleset changed during the run (not by this benchmark's design; check)" >&2
exit "$rc"
