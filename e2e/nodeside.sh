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
#     egress into its own eth0 ingress (tc mirred), answering its query to
#     a resolver that never answers, and one as long as the real answer the
#     node saw (which the pod dropped): its own table learns the address, the
#     node-side table does not, and the host side refuses the connect;
#   - a non-enforced neighbour on the bridge spoofing the resolver: a guessed
#     port and wrong ID, the right port with a wrong ID while the query is
#     outstanding, and the right port and ID after the query was answered:
#     neither table learns them; and the last two again with the pod's own
#     matcher fooled (the pod asked with the spoof's ID, or asked again, and
#     dropped that query itself): the node-side table still learns nothing;
#   - what the agent counted (/metrics: node_unseen, node_unmatched, and no
#     copy lost).
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "nodeside.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-ngn-}"
RACE=$E2E_DIR/dnsrace.py
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

# ---- what each forgery below must get past ----------------------------------------
# Every forgery answers a query the pod really sent (e2e/forgedns.py forges
# only once the query left eth0), still outstanding in the pod's own matcher
# (agent/outq.h): the pod's table may learn it (the pod rules its own
# namespace, and a NET_ADMIN pod can make its matcher remember any query:
# below, by dropping its own query or the resolver's answer after the
# agent's queue saw it), and only the node side's check that the row is
# about stands between it and the node-side table (scripts/mutants.sh
# breaks each check and wants its row to fail). Each negative row first
# waits for proof that the agent judged the forgery: the pod's table took
# it, and the node side refused it (node_unseen_total grew) or took it.
D0MAC=02:00:00:00:d0:00
pod_exec web nft -f - <<EOF
table inet own {
	chain pre {
		type filter hook prerouting priority -400; policy accept;
		iifname "eth0" ether saddr != $D0MAC ip saddr $DNSL udp sport 53 udp dport 40054 counter drop
	}
	chain post {
		type filter hook postrouting priority 0; policy accept;
		meta mark 0x6e67 udp dport 53 counter drop
	}
}
EOF
judged() { # ADDR UNSEEN: the pod's table holds ADDR, and the node side refused it (node_unseen_total past UNSEEN) or holds it
	pod_has web "$1" && { node_has web "$1" || [[ $(grew "$2" "$(metric node_unseen_total)" 1) == 0 ]]; }
}
counted() { # NAME BEFORE BY: metric NAME grew by BY from BEFORE
	[[ $(grew "$2" "$(metric "$1")" "$3") == 0 ]]
}
decoys() { # N: the pod's own postrouting rule dropped N of its decoy queries (they passed the agent first)
	[[ $(pod_exec web nft list chain inet own post) == *"counter packets $1 "* ]]
}

# ---- a NET_ADMIN pod loops a forged answer into its own ingress ---------------------
unseen0=$(metric node_unseen_total)
pod_exec web ip link add d0 address "$D0MAC" type veth peer name d1
pod_exec web ip link set d1 up
pod_exec web ip link set d0 up
pod_exec web tc qdisc add dev d0 clsact
pod_exec web tc filter add dev d0 egress protocol all u32 match u32 0 0 action mirred ingress redirect dev eth0
# (1) To the silent resolver's query: the node saw no answer at all.
dropped0=$(metric dns_dropped_total) unseen=$(metric node_unseen_total)
out=$(forge web ask "$SILENT" 40053 0x1111 loop.world.test --loop d0 10.21.50.99)
t_check "the agent judged the looped forgery (10.21.50.99, to the silent resolver's query)" \
	within 30000 judged 10.21.50.99 "$unseen"
echo "  note: the pod's own table learned it (the pod rules its own namespace)"
t_check_not "the node-side table did not learn the forged 10.21.50.99" node_has web 10.21.50.99
# An answer the node side did not learn from is dropped (agent/answer.c):
# it never reaches the pod's socket having taught only the pod's table.
t_row "... nor did the pod's socket get it: the agent dropped it (dns_dropped_total grew)" \
	"$dropped0 -> $(metric dns_dropped_total); $out" \
	"$([[ $(grew "$dropped0" "$(metric dns_dropped_total)" 1) == 0 && $out != *"answer 4369 10.21.50.99"* ]] && echo 0 || echo 1)"
denied0=$(host_denied web)
line=$(pod_exec web "$NPROBE" tcp 10.21.50.99 443 1500 2>&1 || true)
t_row "connect to the forged address: not connected" "$line" "$([[ $line != connected* ]] && echo 0 || echo 1)"
t_row "... the pod's table let it out, the host side refused it (host_denied grew)" \
	"$denied0 -> $(host_denied web)" "$(($(host_denied web) > denied0 ? 0 : 1))"
# (2) The node saw the resolver's real answer cross the host peer; the pod
# dropped it (its own rule, before the agent's queue) and looped in the same
# bytes with another address: as long as the answer the node saw, on its flow.
unseen=$(metric node_unseen_total)
out=$(forge web ask "$DNSL" 40054 0x2222 loop.world.test --seen --loop d0 10.21.50.95)
t_row "the node saw the real answer; the pod dropped it and looped in one as long" "$out" \
	"$([[ $out =~ seen\ ([0-9]+).*looped\ ([0-9]+) && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] && echo 0 || echo 1)"
t_check "the agent judged the looped forgery (10.21.50.95)" within 30000 judged 10.21.50.95 "$unseen"
t_check_not "... nor the forgery as long as the answer the node saw (10.21.50.95)" node_has web 10.21.50.95
pod_exec web ip link del d0

# ---- a non-enforced neighbour spoofs the resolver -------------------------------------
t_check "ADD of a non-enforced neighbour on the bridge (nb)" pod_add nb default
WEB4=$(pod_ip web 4)
unmatched0=$(metric node_unmatched_total)
either_has() { pod_has web "$1" || node_has web "$1"; }
nb_spoof() { forge nb spoof "$@" >/dev/null; }
both_unmatched() { # NODE POD: node_unmatched_total and dns_answers_unmatched_total grew by one from NODE, POD
	counted node_unmatched_total "$1" 1 && counted dns_answers_unmatched_total "$2" 1
}
unmatched_spoof() { # TAG SERVER PORT ID ADDR LABEL: a spoof both matchers refuse; the row LABEL: neither table learned ADDR
	local m u
	m=$(metric node_unmatched_total) u=$(metric dns_answers_unmatched_total)
	nb_spoof "$2" "$WEB4" "$3" "$4" spoof.world.test "$5"
	t_check "($1) the agent and the observer judged it (dns_answers_unmatched_total, node_unmatched_total grew)" \
		within 30000 both_unmatched "$m" "$u"
	t_check_not "$6" either_has "$5"
}
fooled_spoof() { # TAG SERVER PORT ID ADDR LABEL: a spoof the pod's own matcher takes; the row LABEL: the node side did not learn ADDR
	local unseen
	unseen=$(metric node_unseen_total)
	nb_spoof "$2" "$WEB4" "$3" "$4" spoof.world.test "$5"
	t_check "($1) the agent judged it ($5)" within 30000 judged "$5" "$unseen"
	t_check_not "$6" node_has web "$5"
}
# (a) a guessed port and a wrong ID, while a query to the silent resolver is out.
out=$(forge web ask "$SILENT" 40060 0x6060 spoof.world.test)
t_row "the pod's query to the silent resolver left (port 40060, ID 0x6060)" "$out" "$([[ $out == out* ]] && echo 0 || echo 1)"
m=$(metric node_unmatched_total)
nb_spoof "$SILENT" "$WEB4" 40061 0x1234 spoof.world.test 10.21.50.97
t_check "(a) the observer judged the spoof to a guessed port (node_unmatched_total grew)" \
	within 30000 counted node_unmatched_total "$m" 1
t_check_not "guessed port, wrong ID: the node-side table did not learn 10.21.50.97" node_has web 10.21.50.97
# (b) the right port, a wrong ID, the query still outstanding: the pod's
# matcher refuses it, and the node's.
unmatched_spoof b "$SILENT" 40060 0x1235 10.21.50.96 \
	"right port, wrong ID, query outstanding: neither table learned 10.21.50.96"
# (b') the same, the pod having also asked with the spoof's ID (0x1236) and
# dropped that query itself after the agent let it out: its own matcher
# takes the spoof; the node saw only ID 0x6363 asked.
out=$(forge web ask "$SILENT" 40063 0x6363 spoof.world.test --decoy 0x1236)
t_check "the pod's query 0x6363 left, its decoy 0x1236 passed the agent and was dropped by the pod" \
	within 30000 decoys 1
fooled_spoof "b'" "$SILENT" 40063 0x1236 10.21.50.94 \
	"right port, wrong ID for the node's query, the pod's matcher fooled: not learned (10.21.50.94)"
# (c) the right port and ID, after the query was answered (by the real resolver).
out=$(forge web ask "$DNSL" 40062 0x6262 spoof.world.test --answered)
t_row "(c)'s query was really answered (10.21.50.2)" "$out" "$([[ $out == *"answer 25186 10.21.50.2"* ]] && echo 0 || echo 1)"
t_check "... and taught the node side: it holds the real 10.21.50.2" node_has web 10.21.50.2
unmatched_spoof c "$DNSL" 40062 0x6262 10.21.50.98 \
	"right port and ID, no query outstanding: neither table learned 10.21.50.98"
# (c') the same, the pod having asked again (same ID and question) after
# the answer and dropped that query itself: its own matcher has it
# outstanding again; for the node it was answered.
out=$(forge web ask "$DNSL" 40064 0x6464 spoof.world.test --answered --decoy 0x6464)
t_row "(c')'s query was really answered (10.21.50.2), then asked again" "$out" \
	"$([[ $out == *"answer 25700 10.21.50.2"*"decoy 25700"* ]] && echo 0 || echo 1)"
t_check "... the second time passed the agent and was dropped by the pod" within 30000 decoys 2
fooled_spoof "c'" "$DNSL" 40064 0x6464 10.21.50.93 \
	"right port and ID, answered for the node, the pod's matcher fooled: not learned (10.21.50.93)"
t_row "counted: node_unmatched_total grew by the 5 spoofs" "$unmatched0 -> $(metric node_unmatched_total)" \
	"$(grew "$unmatched0" "$(metric node_unmatched_total)" 5)"
t_row "counted: node_unseen_total grew by the 4 forgeries the pod's table took" \
	"$unseen0 -> $(metric node_unseen_total)" "$(grew "$unseen0" "$(metric node_unseen_total)" 4)"
denied0=$(host_denied web)
line=$(pod_exec web "$NPROBE" tcp 10.21.50.93 443 1500 2>&1 || true)
t_row "connect to a spoofed address the pod's table took: not connected" "$line" \
	"$([[ $line != connected* ]] && echo 0 || echo 1)"
t_row "... the host side refused it (host_denied grew)" "$denied0 -> $(host_denied web)" \
	"$(($(host_denied web) > denied0 ? 0 : 1))"
pod_exec web nft delete table inet own

# ---- costs ------------------------------------------------------------------------------
t_row "observer: no copy lost (observer_lost_total)" "$(metric observer_lost_total)" \
	"$([[ $(metric observer_lost_total) == 0 ]] && echo 0 || echo 1)"

t_check "DEL web" pod_del web
POD_CONFLIST=$LEARN_PTP t_check "DEL rt" pod_del rt
t_check "DEL nb" pod_del nb
t_check_not "no host-side table left" sh -c "nsenter --net=/run/netns/$W_NODE nft list tables | grep -q ngh."
t_summary
