#!/usr/bin/env bash
# hardening: what a hostile review found (issue 13), against the real binary
# in the test world:
#   - large transactions are all or nothing: ADD with a prevResult of 1,200
#     IPv4 addresses, and with an allowlist of 60,000 entries, succeeds and
#     CHECK passes; above the documented limits ADD is refused with code 7
#     before anything is sent (no table anywhere);
#   - the IPv4 metadata address in IPv6 forms with free bits (NAT64
#     local-use, 6to4, Teredo, ISATAP), routed to a listener in this world:
#     refused at once, counted by metadata_denied, even inside an allowed /64;
#   - source routes: an IPv6 routing header (IPV6_RTHDR type 4, no capability
#     needed) or an IPv4 LSRR (IP_OPTIONS, needs NET_RAW) whose first hop is
#     the allowed resolver is refused; the same with a packet socket (the guard);
#   - multicast: an unprivileged process joining IPv6 groups with chosen
#     bytes (and an IPv4 group) in an enforced pod: no MLD or IGMP report
#     naming them reaches the node's bridge (a pod that is not enforced shows
#     the path is real); reports in the kernel's exact layout for the pod's
#     own solicited-node groups pass through every table to the node's
#     bridge (one group, both in one report, from :: as while the address is
#     tentative), none naming another group or of another record type does;
#   - neighbours: a pod that is not enforced, with NET_RAW, sends ARP replies
#     claiming the gateway's address: an enforced pod's gateway entries (IPv4
#     and IPv6) are PERMANENT with the bridge's MAC and do not move (a pod
#     that is not enforced shows the poisoning works);
#   - name sets: the plugin's own tables rewritten (test/tools/ngwiden.c, as a
#     process with NET_ADMIN can) with 0.0.0.0/0 . tcp . 443 in the name sets:
#     CHECK fails (111) and verify's "rules match policy" fails, naming it.
# Ends with "N passed, N failed"; exit status non-zero on failure.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "hardening.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
# srcroute.py runs as uid 65534 below: it gets the world's public copy.
SR=$(world_public "$E2E_DIR/srcroute.py")

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
# The chain's ADD with the world's conflist, then ours alone with the big one.
pod_add big3 >/dev/null
ng_pod_call DEL big3
POD_CONFLIST=$(allow_n 60000) ng_stdin big3 >"$W_TMP/big3.json"
t0=$(date +%s%N)
t_check "ADD, egress.allow with 60,000 entries" direct ADD big3 "$W_TMP/big3.json"
echo "    ($((($(date +%s%N) - t0) / 1000000)) ms)"
t_check "  CHECK passes" direct CHECK big3 "$W_TMP/big3.json"
t_check "  DEL" direct DEL big3 "$W_TMP/big3.json"
pod_add big4 >/dev/null
ng_pod_call DEL big4
POD_CONFLIST=$(allow_n 100001) ng_stdin big4 >"$W_TMP/big4.json"
ng_pod_call ADD big4 "$W_TMP/big4.json" && rc=0 || rc=$?
t_check "ADD, egress.allow with 100,001 entries: code 7, limit named" ng_error_is 7 "more than 100000" "$rc"
t_check "  nothing sent: no table" no_table big4
unset POD_NO_LOOPBACK

# ---- metadata in IPv6 forms -----------------------------------------------------
echo "== metadata in IPv6 forms"
# Each form of 169.254.169.254, held by the metadata host, routed there by
# the node and by the pods' host-local routes (a NAT64 or relay would take
# them to the IPv4 endpoint; here the endpoint answers them itself).
FORMS="64:ff9b:1::a9fe:a9fe 64:ff9b:1:a9fe:a9:fe00:: 2002:a9fe:a9fe::1 2001:0:4136:e378:8000:63bf:5601:5601 2001:db8:77::5efe:a9fe:a9fe"
BENIGN6=2001:db8:77::5 # same /64 as the ISATAP form, which the pod may reach
for a in $FORMS $BENIGN6; do
	ip -n "$W_ID-metadata" addr add "$a/128" dev eth0 nodad
	ip -n "$W_NODE" -6 route add "$a/128" via "$MD6"
done
_spawn "$W_ID-metadata" md81 socat TCP6-LISTEN:81,ipv6only=0,reuseaddr,fork OPEN:/dev/null
routes=$(for a in $FORMS $BENIGN6; do printf '{"dst": "%s/128", "gw": "%s"},' "$a" "$POD_GW6"; done)
POD_CONFLIST=$(conf_variant forms 'c["plugins"][0]["ipam"]["routes"] += ['"$routes"']
e["egress"]["allow"] += ["[2001:db8:77::/64]:81"]')
export POD_CONFLIST
for i in {1..40}; do node_exec "$NPROBE" tcp "$BENIGN6" 81 200 >/dev/null && break; sleep 0.05; done
pod_add free default >/dev/null # not enforced: the forms really lead somewhere
pod_add md >/dev/null
for a in $FORMS; do
	expect "not enforced: [$a]:81" connected 1000 pod:free -- tcp "$a" 81 1000
done
expect "enforced: [$BENIGN6]:81 (allowed /64)" connected 1000 pod:md -- tcp "$BENIGN6" 81 1000
for a in $FORMS; do
	expect "enforced: [$a]:81" refused 200 pod:md -- tcp "$a" 81 1000
done
md_count() { pod_exec md nft list counter inet boxxkite_netguard metadata_denied | sed -n 's/.*packets \([0-9]*\).*/\1/p'; }
t_check "metadata_denied counted each form (5)" test "$(md_count)" = 5
t_check "CHECK passes" pod_check md
pod_del md >/dev/null
pod_del free >/dev/null
unset POD_CONFLIST

# ---- source routes -------------------------------------------------------------
echo "== source routes"
pod_add sr >/dev/null
nobody() { pod_exec sr setpriv --reuid=65534 --regid=65534 --clear-groups --bounding-set=-all \
	"$PY" "$SR" "$@"; }
is() { local got; got=$("${@:2}"); [[ $got == "$1"* ]] || { echo "got: $got" && return 1; }; }
t_check "unprivileged: UDP to the resolver $DNS4:53 is sent" is sent nobody send 4 "$DNS4" 53
# IP_OPTIONS with a source route needs CAP_NET_RAW (which containers hold by
# default): as the pod's root.
t_check "NET_RAW: LSRR via the resolver to $FORBID4: refused" \
	is "send failed: Operation not permitted" pod_exec sr "$PY" "$SR" send 4 "$FORBID4" 53 "$DNS4"
t_check "unprivileged: UDP to the resolver [$DNS6]:53 is sent" is sent nobody send 6 "$DNS6" 53
t_check "unprivileged: routing header via the resolver to $FORBID6: refused" \
	is "send failed: Operation not permitted" nobody send 6 "$FORBID6" 53 "$DNS6"
GW_MAC=$(node_exec ip -o link show dev ngbr0 | sed -n 's|.*link/ether \([0-9a-f:]*\).*|\1|p')
raw() { pod_exec sr "$PY" "$E2E_DIR/rawframe.py" send --ifname eth0 --dst-mac "$GW_MAC" --marker NGRAW-sr \
	--dport 53 "$@"; }
t_check "packet socket: UDP to the resolver is let out" is sent raw --src "$(pod_ip sr 4)" --dst "$DNS4"
t_check "packet socket: with an LSRR option: dropped by the guard" is "send failed" \
	raw --src "$(pod_ip sr 4)" --dst "$DNS4" --source-route "$FORBID4"
t_check "packet socket: IPv6 to the resolver is let out" is sent raw --src "$(pod_ip sr 6)" --dst "$DNS6"
t_check "packet socket: with a routing header: dropped by the guard" is "send failed" \
	raw --src "$(pod_ip sr 6)" --dst "$DNS6" --source-route "$FORBID6"
pod_del sr >/dev/null

# ---- multicast -------------------------------------------------------------------
echo "== multicast (MLD, IGMP)"
MC_SEEN=$W_TMP/mc-seen
: >"$MC_SEEN"
bg_start nsenter --net="$(_ns_path "$W_NODE")" "$PY" "$E2E_DIR/rawframe.py" mcsniff --ifname ngbr0 --out "$MC_SEEN" \
	>"$W_TMP/mc-sniff.out" 2>&1
poll 30000 grep -q ready "$W_TMP/mc-sniff.out" || echo "the multicast sniffer did not start" >&2
pod_add mc >/dev/null
pod_add mcfree default >/dev/null
mac_of() { pod_exec "$1" ip -o link show dev eth0 | sed -n 's|.*link/ether \([0-9a-f:]*\).*|\1|p'; }
CHOSEN6="ff0e::6e67:6c65:616b:2121 ff02::1:ffab:cdef ff05::1:3"
CHOSEN4=239.78.71.33
JOINS=()
join_all() { # POD: an unprivileged process joins every chosen group (PIDs in JOINS)
	local g
	for g in $CHOSEN6 $CHOSEN4; do
		pod_exec "$1" setpriv --reuid=65534 --regid=65534 --clear-groups --bounding-set=-all \
			"$PY" "$SR" join "$g" eth0 >/dev/null &
		JOINS+=("$!")
		_track_pid "$!"
	done
}
join_all mcfree
join_all mc
for p in "${JOINS[@]}"; do wait "$p" 2>/dev/null || true; done
seen_from() { grep "^$(mac_of "$1") " "$MC_SEEN" || true; }
leaks() { # POD: the chosen groups its reports named
	local g out=''
	for g in $CHOSEN6 $CHOSEN4; do
		seen_from "$1" | grep -qw -- "$g" && out+="$g "
	done
	echo "$out"
}
# The pod that is not enforced is the control: both pods joined at the same
# time, so once its reports of every chosen group are on the node's bridge,
# the enforced pod's would be too, had they left it (10 s: a correctness
# bound, not a speed).
# shellcheck disable=SC2086 # the lists are word lists on purpose
control_seen() { [[ $(leaks mcfree | wc -w) -eq $(echo $CHOSEN6 $CHOSEN4 | wc -w) ]]; }
poll 10000 control_seen || true
leak_real() { [[ -n $(leaks mcfree) ]] || { echo "mcfree $(mac_of mcfree), seen:" && cat "$MC_SEEN" && return 1; }; }
t_check "not enforced: its reports name the chosen groups (the leak is real)" leak_real
t_check "enforced: no report names a chosen group" sh -c "[ -z '$(leaks mc)' ] || { echo 'leaked: $(leaks mc)'; exit 1; }"
t_check "not enforced: its IGMP report names $CHOSEN4" sh -c "grep -q '^$(mac_of mcfree) igmp $CHOSEN4' '$MC_SEEN'"
t_check "enforced: no IGMP report at all" sh -c "! grep -q '^$(mac_of mc) igmp' '$MC_SEEN'"
IP6=$(pod_ip mc 6)
OWN=$("$PY" -c 'import ipaddress,sys; a=ipaddress.ip_address(sys.argv[1]).packed; print(ipaddress.ip_address(bytes.fromhex("ff0200000000000000000001ff") + a[13:]))' "$IP6")
LL=$(pod_exec mc ip -6 -o addr show dev eth0 scope link | awk '{print $4}' | cut -d/ -f1)
OWNL=$("$PY" -c 'import ipaddress,sys; a=ipaddress.ip_address(sys.argv[1]).packed; print(ipaddress.ip_address(bytes.fromhex("ff0200000000000000000001ff") + a[13:]))' "$LL")
mld() { pod_exec mc "$PY" "$E2E_DIR/rawframe.py" mld --ifname eth0 --src "$LL" "$@"; }
# seen_on_bridge GROUP: how many of mc's report records the node's bridge
# saw naming GROUP (the kernel's own reports of mc came long before).
seen_on_bridge() { grep -c "^$(mac_of mc) mld $1\$" "$MC_SEEN" || true; }
SEEN_OWN=$(seen_on_bridge "$OWN") SEEN_OWNL=$(seen_on_bridge "$OWNL") HOST_MC=$(host_denied mc)
t_check "kernel-layout report for its own group $OWN: let out" is sent mld "$OWN"
t_check "both its groups in one report ($OWNL, $OWN: the kernel joins them together): let out" \
	is sent mld "$OWNL" "$OWN"
t_check "its own group from :: (the kernel's report while its address is tentative): let out" \
	is sent mld --src :: "$OWN"
# The node side lets the same out: each reached the node's bridge, and the
# host-side table (meta len there has no Ethernet header) counted none.
bridge_has_them() {
	local own ownl
	own=$(seen_on_bridge "$OWN") ownl=$(seen_on_bridge "$OWNL")
	((own - SEEN_OWN == 3 && ownl - SEEN_OWNL == 1 && $(host_denied mc) == HOST_MC)) ||
		{ echo "bridge saw $((own - SEEN_OWN)) x $OWN, $((ownl - SEEN_OWNL)) x $OWNL; host_denied $HOST_MC -> $(host_denied mc)" && return 1; }
}
# (2 s: a correctness bound for the sniffer's write)
t_check "... all three reached the node's bridge, none counted by its host-side table" within 2000 bridge_has_them
t_check "the same report naming ff0e::6e67:6c65:616b:2121: dropped" is "send failed" mld ff0e::6e67:6c65:616b:2121
t_check "its own group and a chosen one in one report: dropped" is "send failed" mld "$OWN" ff02::1:ffab:cdef
t_check "a chosen group from ::: dropped" is "send failed" mld --src :: ff0e::6e67:6c65:616b:2121
t_check "its own group as ALLOW_NEW_SOURCES (a type the kernel never writes for it): dropped" \
	is "send failed" mld --type 5 "$OWN"
t_check "three records for its two groups (more than the kernel writes): dropped" \
	is "send failed" mld "$OWN" "$OWNL" "$OWN"
pod_del mc >/dev/null
pod_del mcfree >/dev/null

# ---- neighbours: ARP poisoning ----------------------------------------------------
echo "== neighbours (ARP poisoning)"
pod_add victim >/dev/null
pod_add bystander default >/dev/null
pod_add attacker default >/dev/null
BR_MAC=$(node_exec ip -o link show dev ngbr0 | sed -n 's|.*link/ether \([0-9a-f:]*\).*|\1|p')
ATT_MAC=$(mac_of attacker)
neigh_of() { pod_exec "$1" ip "-$2" neigh show "$3" dev eth0; }
for p in victim bystander; do pod_exec "$p" "$NPROBE" tcp "$POD_GW4" 9 200 >/dev/null || true; done
poison() { # POD: an ARP reply "the gateway is at the attacker's MAC", to POD's MAC
	pod_exec attacker "$PY" "$E2E_DIR/rawframe.py" send --ifname eth0 --dst-mac "$(mac_of "$1")" \
		--src "$POD_GW4" --dst "$(pod_ip "$1" 4)" --arp 2 --marker NGRAW-arp >/dev/null
}
# Rounds of replies to both, past the ARP locktime (1 s) each time, until
# the bystander's entry moved (a reply within the locktime of the last update is ignored).
for _ in 1 2 3 4 5 6; do
	sleep 1.1
	poison bystander
	poison victim
	[[ $(neigh_of bystander 4 "$POD_GW4") == *"$ATT_MAC"* ]] && break
done
has() { local got; got=$("${@:2}"); [[ $got == *"$1"* ]] || { echo "got: $got" && return 1; }; }
t_check "not enforced: its gateway entry now names the attacker ($ATT_MAC)" has "$ATT_MAC" neigh_of bystander 4 "$POD_GW4"
t_check "enforced: gateway $POD_GW4 is PERMANENT at the bridge's MAC" has "lladdr $BR_MAC PERMANENT" neigh_of victim 4 "$POD_GW4"
t_check "enforced: gateway $POD_GW6 is PERMANENT at the bridge's MAC" has "lladdr $BR_MAC PERMANENT" neigh_of victim 6 "$POD_GW6"
t_check "  logged: pinned_gateways 2" sh -c "grep '\"pod_name\":\"victim\"' '$W_TMP/netguard.log' | grep -q '\"pinned_gateways\":2'"
for p in victim bystander attacker; do pod_del "$p" >/dev/null; done

# ---- name sets hold single addresses ------------------------------------------------
echo "== name sets (CHECK and verify)"
NGWIDEN=${NGWIDEN:-$REPO_DIR/build/ngwiden}
pod_add nm >/dev/null
ng_stdin nm >"$W_TMP/nm.json"
# The plugin's own tables for this pod, to the byte, but for one name-set
# element covering every address: what a process with NET_ADMIN can write.
widen() {
	node_exec "$NGWIDEN" "$(pod_netns_path nm)" eth0 "$ENFORCED_NS" nm "$(_pod_var nm id)" <"$W_TMP/nm.json" |
		grep -qx rewritten
}
t_check "tables rewritten: names_v4 holds 0.0.0.0/0 . tcp . 443 (and names_v6 ::/0)" widen
t_check "  the kernel holds it" sh -c "nsenter --net='$(pod_netns_path nm)' nft list set inet boxxkite_netguard names_v4 | grep -q '0.0.0.0/0 . tcp . 443'"
nm_check() {
	local out rc=0
	out=$(pod_check nm 2>&1) || rc=$?
	((rc != 0)) || { echo "CHECK passed" && return 1; }
	chain_error_is 111 "covers more than one address" "$out"
}
t_check "  CHECK fails: covers more than one address" nm_check
nm_verify() {
	local out rc=0
	out=$("$NG_BIN" verify --netns "$(pod_netns_path nm)" --config "$W_TMP/net.d/pod-network.conflist" 2>&1) || rc=$?
	if ((rc == 0)) || [[ $out != *"rules match policy"*FAIL*"covers more than one address"* ]]; then
		echo "rc $rc: $out" | head -20
		return 1
	fi
}
t_check "  verify: rules match policy FAIL, naming it" nm_verify
pod_del nm >/dev/null

t_summary
