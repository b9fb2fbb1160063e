#!/usr/bin/env bash
# agent: the node agent learns each pod's DNS-name destinations from the
# pod's own answers (egress.names "learn", issue 14), race-free and fail
# closed. The agent runs inside the test world's node namespace (nsenter),
# its state dir in the test's temp dir, killed by PID. A second resolver
# (dnsmasq on the DNS host, 10.96.0.11) answers the learn names from a hosts
# file with a 1 s TTL, so every address lives minNameTTL = 30 s:
#   - the first connect right after an answer, 1000 of 1000, UDP and TCP;
#   - an unlearned name stays refused; wildcards by whole labels; a CNAME
#     chain; a metadata answer is never learned;
#   - expiry of an unused address; a live connection keeps its address
#     through the inet table and the stateless packet-socket guard;
#   - agent stopped: answers dropped (fail closed), learned addresses keep
#     working, STATUS fails, ADD fails with 11; SIGKILL while holding an
#     answer, restart: serving within 1 s, nothing learned lost;
#   - 100 pods x 20 names; DEL releases everything (no socket keeps a
#     namespace alive).
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "agent.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
RACE=$E2E_DIR/dnsrace.py
DNSL=10.96.0.11 # the learn resolver
STATE=$W_TMP/state
AGENT_PID=''

# ---- the world's extras -------------------------------------------------------
# Learned addresses: any of 10.21.0.0/16 is the storage host's (a local
# route), so one listener on :443 answers every learned name; :9443 echoes.
ip -n "$W_ID-dns" addr add "$DNSL/24" dev eth0
ip -n "$W_ID-storage" route add local 10.21.0.0/16 dev lo
ip -n "$W_NODE" route add 10.21.0.0/16 via "$STORE4"
_spawn "$W_ID-storage" echo9443 socat TCP4-LISTEN:9443,reuseaddr,fork PIPE
{
	for i in $(seq 0 999); do echo "10.21.$((i / 250)).$((i % 250 + 1)) u$i.race.world.test"; done
	for i in $(seq 0 999); do echo "10.21.$((4 + i / 250)).$((i % 250 + 1)) t$i.race.world.test"; done
	echo "10.21.10.1 race.world.test"    # the wildcard's own suffix: not covered
	echo "10.21.10.2 other.example.test" # no entry at all
	echo "10.21.10.3 blob.cdn.test"      # a CNAME's target (files.world.test)
	echo "10.21.10.4 exp.world.test"     # learned, then left to expire
	echo "10.21.10.5 live.world.test"    # learned, kept alive by a connection
	echo "10.21.10.6 late.world.test"    # asked while the agent is away
	echo "169.254.169.254 md.race.world.test"
	for p in $(seq 0 99); do
		for n in $(seq 0 19); do echo "10.21.$((20 + p)).$((n + 1)) h$n.p$p.world.test"; done
	done
} >"$W_TMP/learn.hosts"
_spawn "$W_ID-dns" dnsmasq-learn dnsmasq --keep-in-foreground --conf-file=/dev/null \
	--no-resolv --no-hosts --no-poll --user=root --group=root --bind-interfaces \
	--listen-address="$DNSL" --pid-file="$W_TMP/dnsmasq-learn.pid" --local-ttl=1 \
	--addn-hosts="$W_TMP/learn.hosts" --cname=files.world.test,blob.cdn.test
for i in {1..40}; do
	node_exec "$NPROBE" udp-dns "$DNSL" u0.race.world.test 200 >/dev/null && break
	((i < 40)) || { echo "agent.sh: learn resolver not answering" >&2 && exit 1; }
	sleep 0.05
done

LEARN=$(conf_variant learn '
e["stateDir"] = sys.argv[0] if False else e["stateDir"]
e["dns"]["servers"].append("10.96.0.11")
e["egress"]["names"] = "learn"
e["egress"]["minNameTTL"] = 30
e["egress"]["allow"] += ["*.race.world.test:443", "files.world.test:443", "exp.world.test:443",
                         "live.world.test:9443", "late.world.test:443"]
e["egress"]["envelope"].append("*.p0.world.test:443")
')
export POD_CONFLIST=$LEARN

agent_start() {
	bg_start nsenter --net="$(_ns_path "$W_NODE")" "$NG_BIN" agent --state-dir "$STATE" \
		--listen 127.0.0.1:9617 2>>"$W_TMP/log/agent.log"
	AGENT_PID=$BG_PID
}
agent_ready() { # waits up to $1 ms for /readyz
	local i
	for ((i = 0; i < $1 / 10; i++)); do
		node_exec "$PY" -c 'import urllib.request,sys; sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:9617/readyz", timeout=0.2).status == 200 else 1)' 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}
race() { pod_exec "$1" "$PY" "$RACE" "${@:2}"; }
set_has() { pod_exec "$1" nft list set "$2" boxxkite_netguard "$3" 2>/dev/null | grep -q "$4"; }

# ---- learning -----------------------------------------------------------------
agent_start
t_check "agent serves (/readyz) in the node's namespace" agent_ready 2000
t_check "ADD in learn mode (the agent picks the pod up)" pod_add web
t_check "the agent bound the pod's queue (ready file)" test -s "$STATE/ready/$(_pod_var web id)@eth0"
t_check "table has the dns_answers chain (queue to the agent)" \
	sh -c "nsenter --net=$(pod_netns_path web) nft list chain inet boxxkite_netguard dns_answers | grep -q 'queue'"
expect "before any answer: 10.21.0.1:443 refused" refused 1000 pod:web -- tcp 10.21.0.1 443 2000

out=$(race web "$DNSL" udp 1000 'u{}.race.world.test' 443)
t_row "UDP: first connect after each answer, 1000 of 1000" "$out" "$([[ $out == *"connects 1000 "* ]] && echo 0 || echo 1)"
out=$(race web "$DNSL" tcp 1000 't{}.race.world.test' 443)
t_row "TCP: first connect after each answer, 1000 of 1000" "$out" "$([[ $out == *"connects 1000 "* ]] && echo 0 || echo 1)"

t_summary
