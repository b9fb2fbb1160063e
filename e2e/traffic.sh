#!/usr/bin/env bash
# traffic: every claim of the policy, with real traffic through the
# runtime-exact chain (loopback, then bridge + host-local + boxxkite-netguard,
# env + stdin as libcni builds them). Issue 3 part 1:
#   - every cniVersion: 0.3.0, 0.3.1, 0.4.0, 1.0.0 through the chain (CHECK from
#     0.4.0), 1.1.0 by calling the plugin directly with a synthetic prevResult;
#     the result's shape at each version (ips[].version only below 1.0.0);
#   - metadata refused, and fast, over IPv4, IPv6, ::ffff:169.254.169.254 and
#     the NAT64 form 64:ff9b::a9fe:a9fe (routed to a listener in this world),
#     counted by metadata_denied; refused at once even with denyAction drop;
#   - DNS to the configured resolvers over UDP and TCP; another resolver refused;
#   - allowlisted IP and CIDR on their ports; the same address on another port
#     and other addresses refused; a DNS-name entry resolved through the fake
#     DNS, its address in names_vX and names_vX_ttl;
#   - an annotation grant opens exactly that destination, not a neighbour;
#   - ingress: gateway yes, stranger no, node yes with allowNode, no without;
#   - pods that are not selected are untouched and logged as skipped.
# A control pod in a namespace that is not enforced reaches every listener
# used here, so each "refused" below is the pod's firewall, not an empty port.
# Ends with "N passed, N failed"; exit status non-zero on failure.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "traffic.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
DROP_MS=300 # a probe that must not connect waits this long before "timeout"
NAT64=64:ff9b::a9fe:a9fe
# More storage addresses (the storage listeners bind every address):
GRANT4=10.20.1.7 GRANT6=fd00:20::7       # granted by one pod's annotation
NEIGH4=10.20.1.8 NEIGH6=fd00:20::8       # the grant's neighbour: never granted
CIDR4=10.20.1.17 CIDR6=fd00:20::11       # inside the CIDR allow entries below
OUT4=10.20.1.33 OUT6=fd00:20::21         # outside every allow entry
DNS2_4=$FORBID4 DNS2_6=$FORBID6          # another resolver, on the forbidden host

# ---- the world's extras -------------------------------------------------------
for a in $GRANT4/24 $NEIGH4/24 $CIDR4/24 $OUT4/24; do ip -n "$W_ID-storage" addr add "$a" dev eth0; done
for a in $GRANT6/64 $NEIGH6/64 $CIDR6/64 $OUT6/64; do ip -n "$W_ID-storage" addr add "$a" dev eth0 nodad; done
# NAT64: the metadata host also answers on 64:ff9b::a9fe:a9fe, the node routes
# 64:ff9b::/96 to it, and the pods get the route from host-local (below).
ip -n "$W_ID-metadata" addr add "$NAT64/128" dev eth0 nodad
ip -n "$W_NODE" -6 route add 64:ff9b::/96 via "$MD6"
_spawn "$W_ID-metadata" md64 socat "TCP6-LISTEN:80,bind=[$NAT64],reuseaddr,fork" OPEN:/dev/null
# A second resolver that answers the same name: reachable only from pods that
# are not enforced.
_spawn "$W_ID-forbidden" dnsmasq2 dnsmasq --keep-in-foreground --conf-file=/dev/null \
	--no-resolv --no-hosts --no-poll --user=root --group=root --bind-interfaces \
	--listen-address="$DNS2_4,$DNS2_6" --pid-file="$W_TMP/dnsmasq2.pid" \
	--host-record="$STORE_NAME,$STORE_NAME4,$STORE_NAME6,$STORE_TTL"
for target in "tcp $NAT64 80" "udp-dns $DNS2_4 $STORE_NAME" "tcp-dns $DNS2_6 $STORE_NAME" "tcp $OUT6 443"; do
	for i in {1..40}; do
		# shellcheck disable=SC2086 # a word list on purpose
		node_exec "$NPROBE" $target 200 >/dev/null && break
		((i < 40)) || { echo "traffic.sh: not answering: $target" >&2 && exit 1; }
		sleep 0.05
	done
done

# The conflist of this script: the world's, plus CIDR allow entries and the
# NAT64 route for the pods.
POD_CONFLIST=$(conf_variant traffic '
e["egress"]["allow"] += ["tcp://10.20.1.16/28:443", "[fd00:20::10/124]:443"]
c["plugins"][0]["ipam"]["routes"].append({"dst": "64:ff9b::/96", "gw": "fd00:244:1::1"})')
export POD_CONFLIST

# ---- helpers -------------------------------------------------------------------
set_has() { # POD SET TEXT: the set's listing contains TEXT
	local l
	l=$(pod_exec "$1" nft list set inet boxxkite_netguard "$2") || return 1
	grep -qF -- "$3" <<<"$l" || { echo "$l" && return 1; }
}
counter() { # POD NAME: packets counted
	pod_exec "$1" nft list counter inet boxxkite_netguard "$2" | sed -n 's/.*packets \([0-9]*\).*/\1/p'
}
counter_is() { # POD NAME WANT
	local n
	n=$(counter "$1" "$2")
	[[ $n == "$3" ]] || { echo "$2: $n packets, want $3" && return 1; }
}
ruleset_empty() { # POD: nothing at all in the pod's nftables
	local l
	l=$(pod_exec "$1" nft list ruleset)
	[[ -z $l ]] || { echo "$l" | head -20 && return 1; }
}
# result_shape FILE VERSION: cniVersion is VERSION; ips[].version is there
# below 1.0.0 and gone from 1.0.0 on; interfaces and addresses as bridge gave.
result_shape() {
	"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = sys.argv[2]
old = tuple(map(int, v.split("."))) < (1, 0, 0)
assert r.get("cniVersion") == v, "cniVersion %r, want %s" % (r.get("cniVersion"), v)
ips = r.get("ips") or []
assert len(ips) == 2, "want 2 ips (dual-stack), got %r" % ips
for ip in ips:
    assert ("version" in ip) == old, "ips[].version %s at %s: %r" % ("missing" if old else "present", v, ip)
    if old:
        assert ip["version"] == ("6" if ":" in ip["address"] else "4"), ip
assert any(i.get("sandbox") for i in r.get("interfaces", [])), "no sandbox interface"
print("cniVersion %s, %d ips, version field %s" % (v, len(ips), "present" if old else "absent"))
' "$1" "$2"
}
# same_json A B: two JSON files hold the same value.
same_json() {
	"$PY" -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
if a != b:
    sys.exit("differ:\n%s\n%s" % (json.dumps(a, sort_keys=True), json.dumps(b, sort_keys=True)))
' "$1" "$2"
}
# retry_passthrough POD: our ADD again, directly, on the pod's cached
# result: it must print that result back unchanged.
retry_passthrough() {
	ng_pod_call ADD "$1" || { cat "$W_TMP/ng.out" "$W_TMP/ng.err" && return 1; }
	same_json "$W_TMP/ng.out" "$W_TMP/pods/$1/result"
}
check_fails_version() { # POD: a CHECK below 0.4.0 is refused with code 1
	local rc=0
	ng_pod_call CHECK "$1" || rc=$?
	ng_error_is 1 "CHECK needs cniVersion 0.4.0" "$rc"
}

# ---- every cniVersion through the chain -----------------------------------------
echo "== cniVersion (bridge + host-local + netguard, as libcni runs them)"
for v in 0.3.0 0.3.1 0.4.0 1.0.0; do
	p=v${v//./}
	t_check "$v: ADD through the chain" pod_add "$p" "$ENFORCED_NS" '{}' "$v"
	t_check "$v: result shape" result_shape "$W_TMP/pods/$p/result" "$v"
	t_check "$v: ADD returns prevResult unchanged" retry_passthrough "$p"
	t_check "$v: table present" pod_has_table "$p"
	expect "$v: metadata $MD4:80 refused" refused 1000 "pod:$p" -- tcp "$MD4" 80 2000
	expect "$v: storage $STORE4:443 connects" connected 1000 "pod:$p" -- tcp "$STORE4" 443 2000
	if [[ $v == 0.3.* ]]; then
		t_check "$v: CHECK refused with code 1 (from 0.4.0 only)" check_fails_version "$p"
	else
		t_check "$v: CHECK passes" pod_check "$p"
	fi
	t_check "$v: DEL through the chain" pod_del "$p"
	t_check_not "$v: table gone after DEL" pod_has_table "$p"
done

# 1.1.0: Debian's bridge stops at 1.0.0, so bridge runs at 1.0.0 and our
# plugin is called directly, as libcni would call it in a 1.1.0 list.
BRIDGE_ONLY=$(conf_variant bridge-only 'c["plugins"] = c["plugins"][:1]
c["plugins"][0]["ipam"]["routes"].append({"dst": "64:ff9b::/96", "gw": "fd00:244:1::1"})')
POD_CONFLIST=$BRIDGE_ONLY pod_add v110 "$ENFORCED_NS" '{}' 1.0.0 >/dev/null
ng_stdin v110 1.1.0 >"$W_TMP/v110.json"
verb_110() { ng_pod_call "$1" v110 "$W_TMP/v110.json" || { cat "$W_TMP/ng.out" "$W_TMP/ng.err" && return 1; }; }
add_110() {
	verb_110 ADD || return
	cp "$W_TMP/ng.out" "$W_TMP/v110.result"
	result_shape "$W_TMP/v110.result" 1.1.0 && same_json "$W_TMP/v110.result" <("$PY" -c '
import json, sys; print(json.dumps(json.load(open(sys.argv[1]))["prevResult"]))' "$W_TMP/v110.json")
}
version_110() {
	echo '{"cniVersion":"1.1.0"}' >"$W_TMP/version.json"
	ng_call VERSION "$W_TMP/version.json" || return
	"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
want = ["0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"]
assert r["cniVersion"] == "1.1.0" and r["supportedVersions"] == want, r
print(r)' "$W_TMP/ng.out"
}
t_check "1.1.0: VERSION lists 0.3.0 to 1.1.0" version_110
t_check "1.1.0: ADD (direct, synthetic 1.1.0 prevResult)" add_110
t_check "1.1.0: table present" pod_has_table v110
expect "1.1.0: metadata $MD4:80 refused" refused 1000 pod:v110 -- tcp "$MD4" 80 2000
expect "1.1.0: storage $STORE4:443 connects" connected 1000 pod:v110 -- tcp "$STORE4" 443 2000
t_check "1.1.0: CHECK passes" verb_110 CHECK
t_check "1.1.0: STATUS passes" verb_110 STATUS
t_check "1.1.0: GC passes" verb_110 GC
t_check "1.1.0: DEL" verb_110 DEL
t_check_not "1.1.0: table gone after DEL" pod_has_table v110
POD_CONFLIST=$BRIDGE_ONLY pod_del v110 >/dev/null

# ---- the pods of the rest of this script ----------------------------------------
pod_add web >/dev/null
pod_listen web 8080 # the sidecar port (ingress.ports)
pod_listen web 9090 # listening, but not an ingress port
pod_add plain default >/dev/null # not selected: the control
pod_listen plain 8080
WEB4=$(pod_ip web 4) WEB6=$(pod_ip web 6)

# prevResult in another version than the config's: returned converted.
converted() { # CONFIG_VERSION PREV_VERSION
	ng_stdin web "$1" 'p = s["prevResult"]; p["cniVersion"] = "'"$2"'"
if p["cniVersion"] < "1.0.0":
    for ip in p["ips"]: ip["version"] = "6" if ":" in ip["address"] else "4"' >"$W_TMP/conv.json"
	ng_pod_call ADD web "$W_TMP/conv.json" || { cat "$W_TMP/ng.out" && return 1; }
	result_shape "$W_TMP/ng.out" "$1"
}
t_check "prevResult 1.0.0 under config 0.4.0: converted" converted 0.4.0 1.0.0
t_check "prevResult 0.3.1 under config 1.0.0: converted" converted 1.0.0 0.3.1

echo "== metadata"
expect "metadata $MD4:80 refused" refused 1000 pod:web -- tcp "$MD4" 80 2000
expect "metadata [$MD6]:80 refused" refused 1000 pod:web -- tcp "$MD6" 80 2000
expect "metadata [::ffff:$MD4]:80 refused" refused 1000 pod:web -- tcp "::ffff:$MD4" 80 2000
expect "metadata [$NAT64]:80 (NAT64) refused" refused 1000 pod:web -- tcp "$NAT64" 80 2000
t_check "metadata_denied counted exactly those 4" counter_is web metadata_denied 4
for a in 169.254.169.254 100.100.100.200 168.63.129.16 169.254.0.23 169.254.42.42; do
	t_check "metadata_v4 holds $a" set_has web metadata_v4 "$a"
done
for a in fd00:ec2::254 fd20:ce::254 fd00:42::42 fd00:c1::a9fe:a9fe fe80::a9fe:a9fe "::ffff:$MD4" "$NAT64"; do
	t_check "metadata_v6 holds $a" set_has web metadata_v6 "$a"
done
expect "control: metadata $MD4:80 connects" connected 1000 pod:plain -- tcp "$MD4" 80 2000
expect "control: metadata [$MD6]:80 connects" connected 1000 pod:plain -- tcp "$MD6" 80 2000
expect "control: metadata [::ffff:$MD4]:80 connects" connected 1000 pod:plain -- tcp "::ffff:$MD4" 80 2000
expect "control: metadata [$NAT64]:80 connects" connected 1000 pod:plain -- tcp "$NAT64" 80 2000

echo "== DNS"
expect "DNS udp $DNS4 answers" "answered:$STORE_NAME4" 1000 pod:web -- udp-dns "$DNS4" "$STORE_NAME" 2000
expect "DNS tcp $DNS4 answers" "answered:$STORE_NAME4" 1000 pod:web -- tcp-dns "$DNS4" "$STORE_NAME" 2000
expect "DNS udp [$DNS6] answers" "answered:$STORE_NAME4" 1000 pod:web -- udp-dns "$DNS6" "$STORE_NAME" 2000
expect "DNS tcp [$DNS6] answers" "answered:$STORE_NAME4" 1000 pod:web -- tcp-dns "$DNS6" "$STORE_NAME" 2000
expect "other resolver udp $DNS2_4 denied" denied 1000 pod:web -- udp-dns "$DNS2_4" "$STORE_NAME" 2000
expect "other resolver tcp $DNS2_4 refused" refused 1000 pod:web -- tcp-dns "$DNS2_4" "$STORE_NAME" 2000
expect "other resolver udp [$DNS2_6] denied" denied 1000 pod:web -- udp-dns "$DNS2_6" "$STORE_NAME" 2000
expect "other resolver tcp [$DNS2_6] refused" refused 1000 pod:web -- tcp-dns "$DNS2_6" "$STORE_NAME" 2000
expect "control: other resolver udp $DNS2_4 answers" "answered:$STORE_NAME4" - pod:plain -- udp-dns "$DNS2_4" "$STORE_NAME" 2000
expect "control: other resolver tcp [$DNS2_6] answers" "answered:$STORE_NAME4" - pod:plain -- tcp-dns "$DNS2_6" "$STORE_NAME" 2000

echo "== egress allowlist"
expect "allow IP $STORE4:443 connects" connected 1000 pod:web -- tcp "$STORE4" 443 2000
expect "allow IP [$STORE6]:443 connects" connected 1000 pod:web -- tcp "$STORE6" 443 2000
expect "allow IP, other port $STORE4:8443 refused" refused 1000 pod:web -- tcp "$STORE4" 8443 2000
expect "allow IP, other port [$STORE6]:8443 refused" refused 1000 pod:web -- tcp "$STORE6" 8443 2000
expect "allow CIDR $CIDR4:443 connects" connected 1000 pod:web -- tcp "$CIDR4" 443 2000
expect "allow CIDR [$CIDR6]:443 connects" connected 1000 pod:web -- tcp "$CIDR6" 443 2000
expect "allow CIDR, other port $CIDR4:8443 refused" refused 1000 pod:web -- tcp "$CIDR4" 8443 2000
expect "outside the CIDR $OUT4:443 refused" refused 1000 pod:web -- tcp "$OUT4" 443 2000
expect "outside the CIDR [$OUT6]:443 refused" refused 1000 pod:web -- tcp "$OUT6" 443 2000
expect "forbidden $FORBID4:443 refused" refused 1000 pod:web -- tcp "$FORBID4" 443 2000
expect "forbidden [$FORBID6]:443 refused" refused 1000 pod:web -- tcp "$FORBID6" 443 2000
expect "name $STORE_NAME -> $STORE_NAME4:443 connects" connected 1000 pod:web -- tcp "$STORE_NAME4" 443 2000
expect "name $STORE_NAME -> [$STORE_NAME6]:443 connects" connected 1000 pod:web -- tcp "$STORE_NAME6" 443 2000
expect "name, other port $STORE_NAME4:8443 refused" refused 1000 pod:web -- tcp "$STORE_NAME4" 8443 2000
t_check "names_v4 holds $STORE_NAME4 . tcp . 443" set_has web names_v4 "$STORE_NAME4 . tcp . 443"
t_check "names_v4_ttl holds it, no timeout (resolve: pinned for the pod's life)" set_has web names_v4_ttl "$STORE_NAME4 . tcp . 443 }"
t_check "names_v6 holds $STORE_NAME6 . tcp . 443" set_has web names_v6 "$STORE_NAME6 . tcp . 443"
t_check "names_v6_ttl holds it, no timeout" set_has web names_v6_ttl "$STORE_NAME6 . tcp . 443 }"
t_check "the name was asked of the fake DNS" grep -q "query\[A\] $STORE_NAME" "$W_TMP/log/dnsmasq-queries.log"
expect "control: $OUT4:443 connects" connected - pod:plain -- tcp "$OUT4" 443 2000
expect "control: $STORE4:8443 connects" connected - pod:plain -- tcp "$STORE4" 8443 2000
expect "control: forbidden $FORBID4:443 connects" connected - pod:plain -- tcp "$FORBID4" 443 2000

echo "== annotation grant"
GRANT="{\"netguard.boxxkite.io/egress\": \"$GRANT4:443, [$GRANT6]:443\"}"
t_check "ADD with a grant inside the envelope" pod_add granted "$ENFORCED_NS" "$GRANT"
expect "granted $GRANT4:443 connects" connected 1000 pod:granted -- tcp "$GRANT4" 443 2000
expect "granted [$GRANT6]:443 connects" connected 1000 pod:granted -- tcp "$GRANT6" 443 2000
expect "grant's neighbour $NEIGH4:443 refused" refused 1000 pod:granted -- tcp "$NEIGH4" 443 2000
expect "grant's neighbour [$NEIGH6]:443 refused" refused 1000 pod:granted -- tcp "$NEIGH6" 443 2000
expect "granted address, other port $GRANT4:8443 refused" refused 1000 pod:granted -- tcp "$GRANT4" 8443 2000
expect "metadata still refused in the granted pod" refused 1000 pod:granted -- tcp "$MD4" 80 2000
expect "pod without the grant: $GRANT4:443 refused" refused 1000 pod:web -- tcp "$GRANT4" 443 2000
t_check "allow_v4 of the granted pod holds the grant" set_has granted allow_v4 "$GRANT4 . tcp . 443"
t_check "CHECK passes with the grant" pod_check granted
expect "control: neighbour $NEIGH4:443 connects" connected - pod:plain -- tcp "$NEIGH4" 443 2000
outside_refused() { # a grant outside the envelope: code 100 naming it, no table
	local out rc=0
	out=$(pod_add outside "$ENFORCED_NS" '{"netguard.boxxkite.io/egress": "10.20.1.7:443, 10.20.1.7:8443"}' 2>&1) || rc=$?
	((rc != 0)) || { echo "ADD succeeded" && return 1; }
	chain_error_is 100 '"10.20.1.7:8443"' "$out" || return
	if pod_has_table outside; then echo "a table in the pod" && return 1; fi
	pod_del outside >/dev/null
}
t_check "grant outside the envelope: 100, no table" outside_refused

echo "== ingress"
expect "gateway $GW4 -> :8080 connects" connected 1000 peer:gateway -- tcp "$WEB4" 8080 2000
expect "gateway [$GW6] -> :8080 connects" connected 1000 peer:gateway -- tcp "$WEB6" 8080 2000
expect "gateway $GW4 -> :9090 (not a port) dropped" timeout - peer:gateway -- tcp "$WEB4" 9090 "$DROP_MS"
expect "stranger $STRANGER4 -> :8080 dropped" timeout - peer:stranger -- tcp "$WEB4" 8080 "$DROP_MS"
expect "stranger [$STRANGER6] -> :8080 dropped" timeout - peer:stranger -- tcp "$WEB6" 8080 "$DROP_MS"
expect "node $POD_GW4 (kubelet) -> :8080 connects" connected 1000 node -- tcp "$WEB4" 8080 2000
expect "node [$POD_GW6] (kubelet) -> :8080 connects" connected 1000 node -- tcp "$WEB6" 8080 2000
expect "node $POD_GW4 -> :9090 (any TCP port) connects" connected 1000 node -- tcp "$WEB4" 9090 2000
t_check "ingress_denied counted the drops" test "$(counter web ingress_denied)" -ge 3
expect "control: stranger -> plain :8080 connects" connected - peer:stranger -- tcp "$(pod_ip plain 4)" 8080 2000
POD_CONFLIST=$(conf_variant nonode 'e["ingress"]["allowNode"] = False') pod_add nonode >/dev/null
pod_listen nonode 8080
expect "allowNode false: node -> :8080 dropped" timeout - node -- tcp "$(pod_ip nonode 4)" 8080 "$DROP_MS"
expect "allowNode false: node [v6] -> :8080 dropped" timeout - node -- tcp "$(pod_ip nonode 6)" 8080 "$DROP_MS"
expect "allowNode false: gateway -> :8080 connects" connected 1000 peer:gateway -- tcp "$(pod_ip nonode 4)" 8080 2000

echo "== denyAction drop"
POD_CONFLIST=$(conf_variant drop 'e["denyAction"] = "drop"') pod_add dropper >/dev/null
expect "drop: metadata $MD4:80 still refused at once" refused 1000 pod:dropper -- tcp "$MD4" 80 2000
expect "drop: metadata [$MD6]:80 still refused" refused 1000 pod:dropper -- tcp "$MD6" 80 2000
expect "drop: forbidden $FORBID4:443 dropped" timeout - pod:dropper -- tcp "$FORBID4" 443 "$DROP_MS"
expect "drop: storage $STORE4:443 connects" connected 1000 pod:dropper -- tcp "$STORE4" 443 2000
t_check "drop: metadata_denied counted 2" counter_is dropper metadata_denied 2

echo "== selection"
t_check_not "not selected: no table" pod_has_table plain
t_check "not selected: nft list ruleset empty in its netns" ruleset_empty plain
t_check "not selected: logged as skipped, with the reason" \
	log_has plain ADD skipped "namespace default is not in enforce.namespaces"
t_check "not selected: CHECK passes (no table expected)" pod_check plain
t_check "no annotations passed: skipped, reason says so" pod_add bare default none
t_check "no annotations: logged with that reason" log_has bare ADD skipped "the runtime passed no pod annotations"
t_check_not "no annotations: no table" pod_has_table bare
t_check "opt-in annotation in namespace default: ADD" \
	pod_add optin default '{"netguard.boxxkite.io/enforce": "true"}'
t_check "opt-in: enforced, logged with the reason" log_has optin ADD enforced "opted in by annotation"
expect "opt-in: metadata refused" refused 1000 pod:optin -- tcp "$MD4" 80 2000
t_check "opt-out annotation in an enforced namespace: ADD" \
	pod_add optout "$ENFORCED_NS" '{"netguard.boxxkite.io/enforce": "false"}'
t_check "opt-out: still enforced (annotation ignored)" log_has optout ADD enforced "opt-out annotation is ignored"
expect "opt-out: metadata refused" refused 1000 pod:optout -- tcp "$MD4" 80 2000

echo "== teardown through the chain"
for p in web plain granted nonode dropper bare optin optout; do
	t_check "DEL $p" pod_del "$p"
done
t_check "no table left anywhere in the world" test -z "$(world_tables)"

t_summary
