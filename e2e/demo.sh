#!/usr/bin/env bash
# demo: what `sudo make demo` shows. Builds the namespace world (prefix
# ngd-), chains boxxkite-netguard after bridge + host-local for one pod in an
# enforced namespace, and probes every promise of the policy with real
# traffic: one row per check, each with what happened, how fast, and a
# verdict. Then the ruleset, the decision log line, DEL, and the cleanup.
# Exit status is non-zero when any check fails.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

section() { printf '\n== %s\n' "$1"; }

[[ $(id -u) -eq 0 ]] || { echo "demo: needs root (network namespaces): sudo make demo" >&2 && exit 1; }

world_up ngd-
# Probes that must not connect wait this long before calling it a drop.
DROP_MS=300

section "world: node namespace $W_NODE (bridge ngbr0, routes), peers: dns metadata storage forbidden gateway stranger"
pod_add web "$ENFORCED_NS" >/dev/null
pod_listen web 8080 # the sidecar port (ingress.ports)
pod_listen web 9090 # listening, but not an ingress port: must stay closed
IP4=$(pod_ip web 4) IP6=$(pod_ip web 6)
add_us=$(grep '"verb":"ADD"' "$W_TMP/netguard.log" | tail -1 | sed -n 's/.*"duration_us":\([0-9]*\).*/\1/p')
echo "pod web in namespace $ENFORCED_NS: $IP4 $IP6 (netguard ADD took $((add_us / 1000)).$(((add_us % 1000) / 100)) ms)"

section "egress from the pod"
expect "metadata $MD4:80" refused 1000 pod:web -- tcp "$MD4" 80 2000
expect "metadata [$MD6]:80" refused 1000 pod:web -- tcp "$MD6" 80 2000
expect "metadata [::ffff:$MD4]:80 (v4-mapped)" refused 1000 pod:web -- tcp "::ffff:$MD4" 80 2000
expect "DNS udp $DNS4 $STORE_NAME" "answered:$STORE_NAME4" - pod:web -- udp-dns "$DNS4" "$STORE_NAME" 2000
expect "DNS tcp [$DNS6] $STORE_NAME" "answered:$STORE_NAME4" - pod:web -- tcp-dns "$DNS6" "$STORE_NAME" 2000
expect "storage $STORE4:443 (IP entry)" connected - pod:web -- tcp "$STORE4" 443 2000
expect "storage [$STORE6]:443 (IP entry)" connected - pod:web -- tcp "$STORE6" 443 2000
expect "storage $STORE_NAME4:443 ($STORE_NAME)" connected - pod:web -- tcp "$STORE_NAME4" 443 2000
expect "storage [$STORE_NAME6]:443 ($STORE_NAME)" connected - pod:web -- tcp "$STORE_NAME6" 443 2000
expect "storage $STORE4:8443 (port not allowed)" refused 1000 pod:web -- tcp "$STORE4" 8443 2000
expect "forbidden $FORBID4:443" refused 1000 pod:web -- tcp "$FORBID4" 443 2000
expect "forbidden [$FORBID6]:443" refused 1000 pod:web -- tcp "$FORBID6" 443 2000

# A process with NET_RAW writes a whole frame through a packet socket: it
# never passes the inet table; the netdev guard holds it (the send fails
# with ENOBUFS and the guard's counter counts it).
# shellcheck disable=SC2317 # run through t_check
raw_held() {
	local before after out
	before=$(pod_exec web nft list counter netdev boxxkite_netguard raw_denied | sed -n 's/.*packets \([0-9]*\).*/\1/p')
	out=$(pod_exec web "$PY" "$E2E_DIR/rawframe.py" send --ifname eth0 --dst-mac ff:ff:ff:ff:ff:ff \
		--src "$IP4" --dst "$FORBID4" --proto tcp --dport 443 --marker NGRAW-demo)
	after=$(pod_exec web nft list counter netdev boxxkite_netguard raw_denied | sed -n 's/.*packets \([0-9]*\).*/\1/p')
	echo "$out; raw_denied $before -> $after"
	[[ $out == *"No buffer space"* ]] && ((after == before + 1))
}
t_check "packet socket: a hand-made frame to $FORBID4:443 held by the guard" raw_held

section "ingress to the pod"
expect "gateway $GW4 -> :8080 (ingress.sources)" connected - peer:gateway -- tcp "$IP4" 8080 2000
expect "gateway [$GW6] -> :8080" connected - peer:gateway -- tcp "$IP6" 8080 2000
expect "gateway $GW4 -> :9090 (not ingress.ports)" timeout - peer:gateway -- tcp "$IP4" 9090 "$DROP_MS"
expect "stranger $STRANGER4 -> :8080" timeout - peer:stranger -- tcp "$IP4" 8080 "$DROP_MS"
expect "stranger [$STRANGER6] -> :8080" timeout - peer:stranger -- tcp "$IP6" 8080 "$DROP_MS"
expect "node $POD_GW4 (kubelet probe) -> :8080" connected - node -- tcp "$IP4" 8080 2000

# The same world without netguard: proves the listeners behind the refusals
# above are real, so each "refused" was the pod's firewall.
section "control: pod 'plain' in namespace default (not selected: passed through)"
pod_add plain default >/dev/null
pod_listen plain 8080
expect "metadata $MD4:80" connected - pod:plain -- tcp "$MD4" 80 2000
expect "storage $STORE4:8443" connected - pod:plain -- tcp "$STORE4" 8443 2000
expect "stranger $STRANGER4 -> :8080" connected - peer:stranger -- tcp "$(pod_ip plain 4)" 8080 2000
t_check_not "no netguard table in the control pod" pod_has_table plain

section "ruleset in pod web (nft list table inet boxxkite_netguard)"
pod_exec web nft list table inet boxxkite_netguard
section "packet-socket guard in pod web (nft list chain netdev boxxkite_netguard egress, raw_v4)"
pod_exec web nft list chain netdev boxxkite_netguard egress
pod_exec web nft list chain netdev boxxkite_netguard raw_v4

section "decision log ($W_TMP/netguard.log)"
grep '"verb":"ADD"' "$W_TMP/netguard.log"

# egress.names "learn": the node agent learns a pod's DNS names from the
# pod's own answers, and lets each answer through only once its addresses
# are in every table.
section "the node agent: a name learned from the pod's own answer"
printf '10.21.0.7 files.learn.test\n' >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
LEARN=$(learn_conf learn 'e["egress"]["allow"].append("*.learn.test:443")')
agent_start
t_check "agent serving (inside the node namespace, state dir in $W_TMP)" agent_ready 3000
POD_CONFLIST=$LEARN pod_add app "$ENFORCED_NS" >/dev/null
expect "before the answer: 10.21.0.7:443 refused" refused 1000 pod:app -- tcp 10.21.0.7 443 2000
expect "answer: udp $DNSL files.learn.test" "answered:10.21.0.7" - pod:app -- udp-dns "$DNSL" files.learn.test 2000
echo "set element (inet and packet-socket guard, committed before the answer was let through):"
pod_exec app nft list set inet boxxkite_netguard names_v4 | grep -A1 elements
pod_exec app nft list set netdev boxxkite_netguard names_v4 | grep -A1 elements
expect "connect 10.21.0.7:443 (files.learn.test)" connected - pod:app -- tcp 10.21.0.7 443 2000
expect "same address, port 8443: refused" refused 1000 pod:app -- tcp 10.21.0.7 8443 2000
echo "agent log:"
grep -E '"event":"(serving|pod_added)"' "$W_TMP/log/agent.log" | tail -2
export POD_CONFLIST=$LEARN
t_check "DEL app (the agent closes its sockets)" pod_del app
unset POD_CONFLIST

section "CHECK, DEL"
t_check "CHECK: ruleset matches the policy" pod_check web
t_check "DEL" pod_del web
t_check_not "table inet boxxkite_netguard gone from pod web" pod_has_table web
t_check_not "table netdev boxxkite_netguard gone too" pod_exec web nft list table netdev boxxkite_netguard

section "result"
rc=0
t_summary || rc=$?
world_down
echo "cleaned up: namespaces, processes and $W_ID temp dir removed"
exit "$rc"
