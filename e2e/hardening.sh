#!/usr/bin/env bash
# hardening: what a hostile review found (issue 13), against the real binary
# in the test world:
#   - large transactions are all or nothing: ADD with a prevResult of 1,200
#     IPv4 addresses, and with an allowlist of 60,000 entries, succeeds and
#     CHECK passes; above the documented limits ADD is refused with code 7
#     before anything is sent (no table anywhere);
# Ends with "N passed, N failed"; exit status non-zero on failure.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "hardening.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"

# direct VERB POD FILE: our plugin alone with stdin FILE; output shown on failure.
direct() { ng_pod_call "$1" "$2" "$3" || { head -c 600 "$W_TMP/ng.out" "$W_TMP/ng.err" && return 1; }; }
no_table() { ! pod_has_table "$1" || { echo "pod $1 has a table" && return 1; }; }

# ---- large transactions ----------------------------------------------------------
echo "== large transactions"
export POD_NO_LOOPBACK=1
pod_add big1 >/dev/null
# 1,200 IPv4 addresses in prevResult (each one an ARP rule in the guard).
many_ips() { # N: prevResult with the pod's address and N-1 more
	echo 'ips = s["prevResult"]["ips"]
s["prevResult"]["ips"] = ips + [dict(ips[0], address="10.244.%d.%d/16" % (2 + i // 250, 1 + i % 250))
                              for i in range('"$(($1 - 1))"')]'
}
ng_stdin big1 "" "$(many_ips 1200)" >"$W_TMP/big1.json"
t_check "ADD, prevResult with 1,200 IPv4 addresses" direct ADD big1 "$W_TMP/big1.json"
t_check "  CHECK passes" direct CHECK big1 "$W_TMP/big1.json"
t_check "  ADD again (replace) succeeds" direct ADD big1 "$W_TMP/big1.json"
t_check "  DEL" direct DEL big1 "$W_TMP/big1.json"
t_check "  no table left" no_table big1

pod_add big2 >/dev/null
ng_pod_call DEL big2 # the chain's ADD made a table; start from none
ng_stdin big2 "" "$(many_ips 4097)" >"$W_TMP/big2.json"
ng_pod_call ADD big2 "$W_TMP/big2.json" && rc=0 || rc=$?
t_check "ADD, prevResult with 4,097 addresses: code 7, limit named" ng_error_is 7 "more than 4096" "$rc"
t_check "  nothing sent: no table" no_table big2

allow_n() { # N: the conflist with N more egress.allow entries (every other host of 10.100.0.0/14: no two adjacent, so none merge)
	conf_variant "allow$1" 'e["egress"]["allow"] += ["tcp://10.%d.%d.%d:443" % (100 + 2 * i // 65536, 2 * i // 256 % 256, 2 * i % 256) for i in range('"$1"')]'
}
POD_CONFLIST=$(allow_n 60000)
pod_add big3 >/dev/null
ng_stdin big3 >"$W_TMP/big3.json"
t0=$(date +%s%N)
t_check "ADD, egress.allow with 60,000 entries" direct ADD big3 "$W_TMP/big3.json"
echo "    ($((($(date +%s%N) - t0) / 1000000)) ms)"
t_check "  CHECK passes" direct CHECK big3 "$W_TMP/big3.json"
t_check "  DEL" direct DEL big3 "$W_TMP/big3.json"
POD_CONFLIST=$(allow_n 100001)
pod_add big4 >/dev/null || true
ng_stdin big4 >"$W_TMP/big4.json"
ng_pod_call ADD big4 "$W_TMP/big4.json" && rc=0 || rc=$?
t_check "ADD, egress.allow with 100,001 entries: code 7, limit named" ng_error_is 7 "more than 100000" "$rc"
t_check "  nothing sent: no table" no_table big4
unset POD_CONFLIST POD_NO_LOOPBACK

t_summary
