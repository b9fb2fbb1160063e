#!/usr/bin/env bash
# nodeside: the node-side table learns only from the node side (issue 19
# items 2 and 3, node side). The agent runs in the world's node namespace;
# pods learn (egress.names "learn") from the learn resolver ($DNSL), whose
# answers are also copied on each pod's host peer to the agent's observer:
#   - the host-side table of a learning pod copies queries (peer ingress) and
#     answers (peer egress) to NFLOG group 65053;
#   - normal resolution teaches both sides; the first connect after each
#     answer succeeds through both, 1000 of 1000 (UDP, bridge port), TCP,
#     and in the routed (ptp) layout;
#   - a pod with NET_ADMIN loops a forged answer from a veth (inside the pod)
#     egress into its own eth0 ingress (tc mirred): its own table may learn
#     the address, the node-side table does not, and the host side refuses
#     the connect;
#   - a non-enforced neighbour on the bridge spoofing the resolver: a guessed
#     port and wrong ID, the right port with a wrong ID while the query is
#     outstanding, and the right port and ID after the query was answered:
#     the node-side table learns none of them;
#   - what the agent counted (/metrics: node_unseen, node_unmatched, and no
#     copy lost).
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "nodeside.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-ngn-}"
RACE=$E2E_DIR/dnsrace.py
FORGE=$E2E_DIR/forgedns.py
SILENT=10.96.0.12 # in dns.servers, on the DNS host, never answers: queries stay outstanding

{
	learn_hosts u%d.race.world.test 0 1000
	learn_hosts t%d.race.world.test 4 300
	learn_hosts r%d.race.world.test 8 300
	echo "10.21.50.1 loop.world.test"
	echo "10.21.50.2 spoof.world.test"
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
ip -n "$W_ID-dns" addr add "$SILENT/24" dev eth0
ip netns exec "$W_ID-dns" nft -f - <<EOF
table inet silent {
	chain input {
		type filter hook input priority 0; policy accept;
		ip daddr $SILENT drop
	}
}
EOF

PYCODE='
e["dns"]["servers"].append("'"$SILENT"'")
e["egress"]["minNameTTL"] = 30
e["egress"]["allow"] += ["*.race.world.test:443", "loop.world.test:443", "spoof.world.test:443"]
'
LEARN=$(learn_conf learn "$PYCODE")
# The same entry in the routed layout.
LEARN_PTP=$W_TMP/net.d/learn-ptp.conflist
"$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
l = json.load(open(sys.argv[2]))
i = [k for k, p in enumerate(c["plugins"]) if p["type"] == "boxxkite-netguard"][0]
c["plugins"][i] = [p for p in l["plugins"] if p["type"] == "boxxkite-netguard"][0]
json.dump(c, open(sys.argv[3], "w"), indent=1)
' "$(layout_conflist ptp)" "$LEARN" "$LEARN_PTP"

race() { pod_exec "$1" "$PY" "$RACE" "${@:2}"; }
host_set() { node_exec nft list set netdev "$(pod_host_table "$1")" "$2" 2>&1; }
pod_set() { pod_exec "$1" nft list set inet boxxkite_netguard "$2" 2>&1; }
node_has() { grep -qw "$2" <<<"$(host_set "$1" names_v4)"; }
pod_has() { grep -qw "$2" <<<"$(pod_set "$1" names_v4)"; }
metric() { # NAME: the agent's node total boxxkite_netguard_agent_NAME (published once a second; "unreadable": the row fails)
	node_exec "$PY" -c '
import sys, urllib.request
t = urllib.request.urlopen("http://127.0.0.1:9617/metrics", timeout=30).read().decode()
print(sum(int(l.split()[-1]) for l in t.splitlines() if l.startswith("boxxkite_netguard_agent_" + sys.argv[1] + " ")))
' "$1" 2>/dev/null || echo "unreadable"
}
grew() { # BEFORE AFTER BY: 0 when both are counts and AFTER >= BEFORE + BY
	[[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && (($2 >= $1 + $3)) && echo 0 || echo 1
}
connects() { [[ $1 == *"connects $2 "* ]] && echo 0 || echo 1; }

# ---- the observer's rules ------------------------------------------------------
agent_start
t_check "agent serves (/healthz) in the node's namespace" agent_ready 2000
export POD_CONFLIST=$LEARN
t_check "ADD in learn mode, bridge port (web)" pod_add web
HT=$(pod_host_table web)
chain=$(node_exec nft list chain netdev "$HT" to_pod 2>&1 || true)
t_row "host side: chain to_pod on the peer's egress copies answers to group 65053" \
	"$(grep -c 'log group 65053' <<<"$chain") copy rules" \
	"$([[ $chain == *"hook egress"* && $(grep -c 'sport @dns_v[46] log group 65053 snaplen 65000 queue-threshold 1' <<<"$chain") == 2 ]] && echo 0 || echo 1)"
raw=$(node_exec nft list chain netdev "$HT" raw_v4 2>&1 || true)
t_row "host side: the DNS rule (after the source checks) copies queries" \
	"$(grep 'dport @dns_v4' <<<"$raw" | head -1 | sed 's/^[[:space:]]*//' | cut -c1-90)" \
	"$([[ $raw == *"dport @dns_v4 log group 65053"* ]] && echo 0 || echo 1)"

# ---- normal resolution: both sides, race-free ------------------------------------
out=$(race web "$DNSL" udp 1000 'u{}.race.world.test' 443)
t_row "UDP, bridge port: first connect after each answer, 1000 of 1000" "$out" "$(connects "$out" 1000)"
n_host=$(host_set web names_v4 | grep -o '10\.21\.[0-3]\.[0-9]*' | sort -u | wc -l)
t_row "the node-side set holds the 1000 addresses" "$n_host addresses" "$([[ $n_host -ge 1000 ]] && echo 0 || echo 1)"
out=$(race web "$DNSL" tcp 300 't{}.race.world.test' 443)
t_row "TCP, bridge port: first connect after each answer, 300 of 300" "$out" "$(connects "$out" 300)"
t_check "the node-side set holds a TCP-learned address (t299)" node_has web 10.21.5.50
export POD_CONFLIST=$LEARN_PTP
t_check "ADD in learn mode, routed (ptp) layout (rt)" pod_add rt
out=$(race rt "$DNSL" udp 300 'r{}.race.world.test' 443)
t_row "UDP, routed layout: first connect after each answer, 300 of 300" "$out" "$(connects "$out" 300)"
t_check "the routed pod's node-side set holds r0" node_has rt 10.21.8.1
export POD_CONFLIST=$LEARN

# ---- a NET_ADMIN pod loops a forged answer into its own ingress ---------------------
unseen0=$(metric node_unseen_total)
pod_exec web ip link add d0 type veth peer name d1
pod_exec web ip link set d1 up
pod_exec web ip link set d0 up
pod_exec web tc qdisc add dev d0 clsact
pod_exec web tc filter add dev d0 egress protocol all u32 match u32 0 0 action mirred ingress redirect dev eth0
out=$(pod_exec web "$PY" "$FORGE" ask "$DNSL" 40053 0x1111 loop.world.test --loop d0 10.21.50.99 2>&1 || true)
if pod_has web 10.21.50.99; then own="learned it (it answered the outstanding query first)"; else own="did not learn it"; fi
# The forged answer reaches the pod's queue. If it answers the pod's
# outstanding query first (agent/outq.h), it teaches the pod's side, not the
# node's, and is dropped there (node_unseen grows, below): an answer the
# node side did not learn from never reaches the pod's socket. If the
# resolver's answer took the query first, it teaches nothing and passes.
t_row "the forged answer (10.21.50.99) never reached the pod's socket having taught it" "$(tr '\n' ' ' <<<"$out")" \
	"$([[ $out != *"answer 4369 10.21.50.99"* || $own != learned* ]] && echo 0 || echo 1)"
echo "  note: the pod's own table $own (it may: the pod rules its own namespace)"
t_check_not "the node-side table did not learn the forged 10.21.50.99" node_has web 10.21.50.99
denied0=$(host_denied web)
line=$(pod_exec web "$NPROBE" tcp 10.21.50.99 443 1500 2>&1 || true)
t_row "connect to the forged address: not connected" "$line" "$([[ $line != connected* ]] && echo 0 || echo 1)"
if [[ $own == learned* ]]; then
	t_row "... the pod's table let it out, the host side refused it (host_denied grew)" \
		"$denied0 -> $(host_denied web)" "$(($(host_denied web) > denied0 ? 0 : 1))"
fi
sleep 1.5
unseen1=$(metric node_unseen_total)
# node_unseen counts answers that taught the pod's side and not the node's;
# the pod's side learns a forgery only if it answers the pod's outstanding
# query before the resolver's answer does (agent/outq.h): either way the
# node side learned nothing (above).
if [[ $own == learned* ]]; then
	t_row "counted: node_unseen_total grew" "$unseen0 -> $unseen1" "$(grew "$unseen0" "$unseen1" 1)"
else
	t_row "the pod's table refused it too: the resolver's answer had taken its query" "$own" \
		"$(pod_has web 10.21.50.99 && echo 1 || echo 0)"
fi
pod_exec web ip link del d0

# ---- a non-enforced neighbour spoofs the resolver -------------------------------------
t_check "ADD of a non-enforced neighbour on the bridge (nb)" pod_add nb default
WEB4=$(pod_ip web 4)
unmatched0=$(metric node_unmatched_total)
# (a) a guessed port and a wrong ID, while a query to the silent resolver is out.
pod_exec web "$PY" "$FORGE" ask "$SILENT" 40060 0x6060 spoof.world.test >/dev/null 2>&1 &
ASK=$!
sleep 0.5
pod_exec nb "$PY" "$FORGE" spoof "$SILENT" "$WEB4" 40061 0x1234 spoof.world.test 10.21.50.97 >/dev/null
# (b) the right port, a wrong ID, the query still outstanding.
pod_exec nb "$PY" "$FORGE" spoof "$SILENT" "$WEB4" 40060 0x1235 spoof.world.test 10.21.50.96 >/dev/null
wait "$ASK" || true
# (c) the right port and ID, after the query was answered (by the real resolver).
pod_exec web "$PY" "$FORGE" ask "$DNSL" 40062 0x6262 spoof.world.test >"$W_TMP/ask-c" 2>&1
pod_exec nb "$PY" "$FORGE" spoof "$DNSL" "$WEB4" 40062 0x6262 spoof.world.test 10.21.50.98 >/dev/null
sleep 1.5
t_check "(c)'s query was really answered (10.21.50.2), and taught the node side" \
	sh -c "grep -q 'answer 25186 10.21.50.2' $W_TMP/ask-c"
t_check "... the node-side set holds the real 10.21.50.2" node_has web 10.21.50.2
t_check_not "guessed port, wrong ID: the node-side table did not learn 10.21.50.97" node_has web 10.21.50.97
t_check_not "right port, wrong ID, query outstanding: not learned (10.21.50.96)" node_has web 10.21.50.96
t_check_not "right port and ID, no query outstanding: not learned (10.21.50.98)" node_has web 10.21.50.98
for a in 10.21.50.96 10.21.50.98; do
	if pod_has web $a; then own="learned it"; else own="did not learn it"; fi
	echo "  note: the pod's own table and $a: $own (its query match is issue 19 item 3's pod-side half)"
done
unmatched1=$(metric node_unmatched_total)
t_row "counted: node_unmatched_total grew by the 3 spoofs" "$unmatched0 -> $unmatched1" \
	"$(grew "$unmatched0" "$unmatched1" 3)"
line=$(pod_exec web "$NPROBE" tcp 10.21.50.98 443 1500 2>&1 || true)
t_row "connect to a spoofed address: not connected" "$line" "$([[ $line != connected* ]] && echo 0 || echo 1)"

# ---- costs ------------------------------------------------------------------------------
t_row "observer: no copy lost (observer_lost_total)" "$(metric observer_lost_total)" \
	"$([[ $(metric observer_lost_total) == 0 ]] && echo 0 || echo 1)"

t_check "DEL web" pod_del web
POD_CONFLIST=$LEARN_PTP t_check "DEL rt" pod_del rt
t_check "DEL nb" pod_del nb
t_check_not "no host-side table left" sh -c "nsenter --net=/run/netns/$W_NODE nft list tables | grep -q ngh."
t_summary
