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
STATE=$W_TMP/state

# ---- the world's extras -------------------------------------------------------
{
	learn_hosts u%d.race.world.test 0 1000
	learn_hosts t%d.race.world.test 4 1000
	echo "10.21.10.1 race.world.test"    # the wildcard's own suffix: not covered
	echo "10.21.10.2 other.example.test" # no entry at all
	echo "10.21.10.3 blob.cdn.test"      # a CNAME's target (files.world.test)
	echo "10.21.10.4 exp.world.test"     # learned, then left to expire
	echo "10.21.10.5 live.world.test"    # learned, kept alive by a connection
	echo "10.21.10.6 late.world.test"    # asked while the agent is away
	echo "10.21.10.7 pin.world.test"     # "resolve" mode: pinned at ADD, then moved
	echo "169.254.169.254 md.race.world.test"
	for p in $(seq 0 99); do learn_hosts "h%d.p$p.world.test" $((20 + p)) 20; done
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"

LEARN=$(learn_conf learn '
e["egress"]["minNameTTL"] = 30
e["egress"]["allow"] += ["*.race.world.test:443", "files.world.test:443", "exp.world.test:443",
                         "live.world.test:9443", "late.world.test:443"]
e["egress"]["envelope"].append("*.p0.world.test:443")
')
export POD_CONFLIST=$LEARN

race() { pod_exec "$1" "$PY" "$RACE" "${@:2}"; }
set_has() { # POD FAMILY SET TEXT: the set's listing holds TEXT (shown if not)
	local out
	out=$(pod_exec "$1" nft list set "$2" boxxkite_netguard "$3" 2>&1)
	grep -q "$4" <<<"$out" || { echo "$out" | head -30 && return 1; }
}

# ---- learning -----------------------------------------------------------------
agent_start
t_check "agent serves (/healthz) in the node's namespace" agent_ready 2000
t_check "ADD in learn mode (the agent picks the pod up)" pod_add web
t_check "the agent bound the pod's queue (ready file)" test -s "$STATE/ready/$(_pod_var web id)@eth0"
t_check "table has the dns_answers chain (queue to the agent)" \
	sh -c "nsenter --net=$(pod_netns_path web) nft list chain inet boxxkite_netguard dns_answers | grep -q 'queue'"
expect "before any answer: 10.21.0.1:443 refused" refused 1000 pod:web -- tcp 10.21.0.1 443 2000

out=$(race web "$DNSL" udp 1000 'u{}.race.world.test' 443)
t_row "UDP: first connect after each answer, 1000 of 1000" "$out" "$([[ $out == *"connects 1000 "* ]] && echo 0 || echo 1)"
out=$(race web "$DNSL" tcp 1000 't{}.race.world.test' 443)
t_row "TCP: first connect after each answer, 1000 of 1000" "$out" "$([[ $out == *"connects 1000 "* ]] && echo 0 || echo 1)"

# Names: one query, then the connect, each asked with the resolver the
# pod would use.
ask_connect() { # POD NAME PORT: prints the race line for one name
	race "$1" "$DNSL" udp 1 "$2" "$3"
}
learned() { [[ $(ask_connect "$@") == *"connects 1 "* ]]; }
t_check "CNAME: files.world.test -> blob.cdn.test learned for its entry" learned web files.world.test 443
out=$(ask_connect web race.world.test 443)
# Not listed, so not asked (dns.queries "listed": NXDOMAIN from the agent);
# nor reachable at the address the resolver would give.
t_row "wildcard *.race.world.test does not cover race.world.test itself" "$out" \
	"$([[ $out == *"answers 1 connects 0 refused 1 "* || $out == *"answers 0 connects 0 refused 0 timeouts 0 noanswer 1 "* ]] && echo 0 || echo 1)"
expect "... race.world.test's address stays refused" refused 1000 pod:web -- tcp 10.21.10.1 443 2000
expect "unlearned other.example.test (asked) stays refused" refused 1000 pod:web -- tcp 10.21.10.2 443 2000
t_check_not "other.example.test is not in names_v4" set_has web inet names_v4 10.21.10.2
expect "a learned address on another port is refused" refused 1000 pod:web -- tcp 10.21.0.1 8443 2000
t_check "answer naming the metadata address: asked" ask_connect web md.race.world.test 80
t_check "... never learned: counted by the agent" \
	sh -c "grep -q '\"event\":\"metadata_refused\"' $W_TMP/log/agent.log"
t_check_not "... and not in names_v4" set_has web inet names_v4 169.254.169.254
t_check "learned addresses in the packet-socket guard's set too" set_has web netdev names_v4 "10.21.10.3 . tcp . 443"
t_check "CHECK passes with learned elements" pod_check web

# Forgeries from inside the pod. Each answers a real query of the pod
# (e2e/forgedns.py: sent from port 40000 or 40001, forged only once the
# query left eth0), whose real answer the pod drops itself before the
# agent's queue (it holds NET_ADMIN, as the forger of a queue message or a
# queue rule does): the query stays outstanding in the pod's matcher
# (agent/outq.h) and conntrack calls the forgery a reply. Only the check
# each row is about stands between the forgery and learning
# (scripts/mutants.sh breaks each and wants its row to fail), and each
# negative row first waits for proof that the forgery was judged.
pod_exec web nft -f - <<EOF
table inet own {
	chain pre {
		type filter hook prerouting priority -400; policy accept;
		iifname "eth0" ip saddr $DNSL udp sport 53 udp dport { 40000, 40001 } drop
	}
}
EOF

# A forged answer over loopback: a process with NET_RAW (granted by default)
# writes a UDP packet "from" the resolver's port 53 to the pod's own address,
# naming a covered name with the forbidden host's address. It must teach
# nothing: only answers the pod's interface brought in, in reply to its own
# query, reach the agent. Two layers: the chain never queues loopback (iif
# lo), and the agent drops (and logs) a packet that did not come in on the
# pod's interface. The first is seen here: the forgery went past the
# queue to the pod's socket (the agent would have dropped it), and nothing
# foreign was logged.
out=$(forge web self "$DNSL" 40000 0x1234 spoof.race.world.test "$FORBID4")
t_row "forged answer over loopback (raw socket, from $DNSL:53): sent" "$out" "$([[ $out == *forged* ]] && echo 0 || echo 1)"
t_row "... never queued to the agent (delivered past it, nothing foreign logged)" "$out" \
	"$([[ $out == *"delivered $FORBID4"* ]] && ! grep -q queue_foreign "$W_TMP/log/agent.log" && echo 0 || echo 1)"
t_check_not "... teaches nothing: $FORBID4 not in names_v4" set_has web inet names_v4 "$FORBID4"
t_check_not "... nor in the guard's set" set_has web netdev names_v4 "$FORBID4"
expect "... and $FORBID4:443 stays refused" refused 1000 pod:web -- tcp "$FORBID4" 443 2000

# A process with NET_ADMIN in the pod's namespace can send netlink messages
# to any socket there, the agent's queue socket among them: a forged queue
# "packet" (an answer teaching $FORBID4 for a covered name) must be read as
# nobody's, not learned into the pod's sets nor the node-side table. It
# answers the pod's outstanding query: only the kernel-sender check
# (kernel/nl.c) stands before it. "synced": a later query's answer came
# through the same queue, so the forgery was read first.
out=$(forge web nfq "$DNSL" 40001 0x4321 forged.race.world.test "$FORBID4")
t_row "forged queue message (NET_ADMIN in the pod, to the agent's sockets): sent" "$out" \
	"$([[ $out == *"sent to "*synced* && $out != *"sent to 0 "* ]] && echo 0 || echo 1)"
t_check_not "... the forged message teaches nothing: $FORBID4 not in names_v4" set_has web inet names_v4 "$FORBID4"
t_check_not "... nor in the node-side table" sh -c \
	"nsenter --net=$(_ns_path "$W_NODE") nft list table netdev $(pod_host_table web) | grep -q '$FORBID4'"
t_check "... and the agent still serves" agent_ready 2000

# NET_ADMIN in the pod: a queue rule of its own (output hook) hands the
# agent a forged answer the pod wrote itself (to its outstanding query);
# only packets our chains queued (input on the pod's interface; output out
# on it) are read. "synced" as above.
EVIL=(OUTPUT -s "$DNSL" -p udp --sport 53 -j NFQUEUE --queue-num 5353)
t_check "pod's own NFQUEUE rule (output hook)" pod_exec web iptables-nft -t raw -I "${EVIL[@]}"
out=$(forge web self "$DNSL" 40000 0x1234 spoof.race.world.test 10.66.0.66 --sync)
t_row "... and a forged answer through it: sent, then judged" "$out" "$([[ $out == *forged*synced* ]] && echo 0 || echo 1)"
pod_exec web iptables-nft -t raw -D "${EVIL[@]}" || true
pod_exec web nft delete table inet own || true
t_check_not "... its answer teaches nothing: 10.66.0.66 not in names_v4" set_has web inet names_v4 10.66.0.66
t_check_not "... nor the node-side table" sh -c \
	"nsenter --net=$(_ns_path "$W_NODE") nft list table netdev $(pod_host_table web) | grep -q 10.66.0.66"
t_check "... and the agent logged it (queue_foreign, hook 3 = output)" \
	sh -c "grep '\"event\":\"queue_foreign\"' '$W_TMP/log/agent.log' | grep -q 'hook 3'"

# ---- lifetimes ----------------------------------------------------------------
# minNameTTL 30 s: exp.world.test is learned and left alone; live.world.test
# carries a connection (an echo every second) across its expiry.
# E2E_QUICK (the mutation proof, the ASan pass) skips this 42 s soak: it
# proves lifetimes, not memory safety or what a mutant breaks.
if [[ -z ${E2E_QUICK:-} ]]; then
	t_check "exp.world.test learned" learned web exp.world.test 443
	race web "$DNSL" udp 1 live.world.test 9443 --hold 42 >"$W_TMP/live.out" &
	LIVE=$!
	_track_pid "$LIVE"
	sleep 1
	t_check "exp.world.test: element carries a timeout of 30 s" set_has web inet names_v4 "10.21.10.4 . tcp . 443 timeout 30s"
	sleep 5
	t_check "a later answer refreshes (never shortens) the lifetime" learned web exp.world.test 443
	sleep 30
	t_check_not "36 s later, exp.world.test expired from the inet set" set_has web inet names_v4 10.21.10.4
	t_check_not "... and from the guard's" set_has web netdev names_v4 10.21.10.4
	expect "... and a new connect is refused" refused 1000 pod:web -- tcp 10.21.10.4 443 2000
	t_check "live.world.test kept in the guard's set by its connection" set_has web netdev names_v4 10.21.10.5
	wait "$LIVE" || true
	out=$(cat "$W_TMP/live.out")
	t_row "the live connection passed data across the expiry (42 s)" "$out" "$([[ $out == "echoes 42 of 42" ]] && echo 0 || echo 1)"
else
	echo "   info: lifetimes skipped (E2E_QUICK)"
fi

# ---- fail closed, restart ---------------------------------------------------
t_check "STATUS succeeds while the agent serves" ng_call STATUS "$(ng_stdin web >"$W_TMP/st.json" && echo "$W_TMP/st.json")"
t_check "u5.race.world.test (re)learned" learned web u5.race.world.test 443
kill -STOP "$AGENT_PID"
out=$(ask_connect web other.example.test 443)
t_row "agent stopped: an answer is held, not delivered" "$out" "$([[ $out == *"noanswer 1 "* ]] && echo 0 || echo 1)"
expect "agent stopped: a learned address still connects" connected 1000 pod:web -- tcp 10.21.0.6 443 2000
# An answer held by the stopped agent, then SIGKILL: the client's retries
# must be served by the next agent.
race web "$DNSL" udp 1 late.world.test 443 --retries 8 >"$W_TMP/late.out" &
LATE=$!
_track_pid "$LATE"
sleep 0.3
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null || true
rc=0 && ng_call STATUS "$W_TMP/st.json" || rc=$?
t_check "agent gone: STATUS fails with 50" ng_error_is 50 "no boxxkite-netguard agent serves" "$rc"
expect "agent gone: a learned address still connects" connected 1000 pod:web -- tcp 10.21.0.6 443 2000
out=$(ask_connect web other.example.test 443)
t_row "agent gone (no listener): an answer is dropped, not passed" "$out" "$([[ $out == *"noanswer 1 "* ]] && echo 0 || echo 1)"
t0=$(date +%s%N)
# From here on every pod is CHECKed every 2 s, and drift repaired: the
# 100 pods' ADDs and DELs below must never read as drift (a DEL under way
# removes the record first), nor be "repaired" back.
agent_start --check-interval 2 --repair
agent_ready 3000 || true
ms=$((($(date +%s%N) - t0) / 1000000))
# (ADD waits NG_AGENT_PICKUP_MS, 3 s, for an agent: the bound that matters)
t_row "restarted agent serves within 3 s" "${ms} ms" "$((ms <= 3000 ? 0 : 1))"
wait "$LATE" || true
out=$(cat "$W_TMP/late.out")
t_row "the held answer's retry is served by the new agent, then connects" "$out" \
	"$([[ $out == *"connects 1 "* ]] && echo 0 || echo 1)"
t_check "the new agent rediscovered the pod with what it had learned" \
	sh -c "grep '\"event\":\"pod_added\"' $W_TMP/log/agent.log | tail -1 | grep -vq ', 0 addresses still learned'"
t_check "after restart a known address is refreshed, not lost" learned web u5.race.world.test 443

# ---- "resolve" mode: pinned for the pod's life, CHECK reports drift ------------
PIN=$(learn_conf pin '
e["egress"]["names"] = "resolve"
e["egress"]["allow"] = ["pin.world.test:443"]
')
cp "$W_TMP/resolv.conf" "$W_TMP/resolv.conf.orig"
printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$DNSL" >"$W_TMP/resolv.conf"
POD_CONFLIST=$PIN t_check "resolve mode: ADD resolves pin.world.test (no agent involved)" pod_add pin
t_check "... pinned without a timeout, the name in its comment" \
	set_has pin inet names_v4 'pin.world.test'
rc=0 && POD_CONFLIST=$PIN pod_check pin >/dev/null 2>&1 || rc=$?
t_row "... CHECK passes while the name still answers it" "exit $rc" "$rc"
sed -i 's/^10.21.10.7 pin.world.test/10.21.10.8 pin.world.test/' "$W_TMP/learn.hosts"
kill -HUP "$(cat "$W_TMP/dnsmasq-learn.pid")"
sleep 0.3
out=$(POD_CONFLIST=$PIN pod_check pin 2>&1) || true
t_check "the name moved: CHECK fails naming it" chain_error_is 111 "pin.world.test no longer answers 10.21.10.7" "$out"
expect "... and the pinned address stays allowed for the pod's life" connected 1000 pod:pin -- tcp 10.21.10.7 443 2000
POD_CONFLIST=$PIN pod_del pin >/dev/null
cp "$W_TMP/resolv.conf.orig" "$W_TMP/resolv.conf"

# ---- lifecycle: no agent, 100 pods x 20 names, DEL ---------------------------
agent_fds() { find "/proc/$AGENT_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
host_veth() { # the node-side veth of a pod, from its ADD result
	"$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))
print([i["name"] for i in r["interfaces"] if "sandbox" not in i and i["name"].startswith("veth")][0])' \
		"$W_TMP/pods/$1/result"
}
kill -STOP "$AGENT_PID"
out=$(pod_add nope 2>&1) || true
t_check "ADD while no agent serves fails with 11 (after 3 s)" chain_error_is 11 "did not pick the pod up" "$out"
t_check_not "... and leaves no record" test -e "$STATE/pods/$(_pod_var nope id)@eth0.json"
kill -CONT "$AGENT_PID"
# The base without a keep-alive lookup in flight (its two fds come and go).
base=$(agent_fds)
for _ in {1..50}; do
	n=$(agent_fds)
	((n < base)) && base=$n
	sleep 0.02
done
N=100
[[ -z ${E2E_QUICK:-} ]] || N=20 # fewer pods for the quick passes
for ((p = 0; p < N; p += 10)); do
	pids=()
	for ((q = p; q < p + 10; q++)); do
		g=$(for n in $(seq 0 19); do printf 'h%d.p%d.world.test:443,' "$n" "$q"; done)
		POD_NO_LOOPBACK=1 pod_add "m$q" sandboxes "{\"netguard.boxxkite.io/egress\":\"${g%,}\"}" >"$W_TMP/m$q.add" 2>&1 &
		pids+=("$!")
	done
	wait "${pids[@]}" || true
done
ok=0
for ((q = 0; q < N; q++)); do [[ -s $W_TMP/pods/m$q/result ]] && ok=$((ok + 1)); done
t_row "100 pods added, each with 20 granted names" "$ok of $N" "$((ok == N ? 0 : 1))"
t0=$(date +%s%N)
bad=0
for ((q = 0; q < N; q++)); do
	# Two tries per query, as a client's resolver retries (glibc: 2
	# attempts of 5 s): on a loaded machine an answer may come late; the
	# row is about the connect after it.
	out=$(race "m$q" "$DNSL" udp 20 "h{}.p$q.world.test" 443 --retries 2)
	[[ $out == *"connects 20 "* ]] || { bad=$((bad + 1)) && echo "    m$q: $out"; }
done
ms=$((($(date +%s%N) - t0) / 1000000))
t_row "100 x 20 names: every first connect after its answer" "$((N * 20)) in $ms ms, $bad pods failing" "$((bad == 0 ? 0 : 1))"
out=$(race m1 "$DNSL" udp 1 h0.p0.world.test 443)
# m0's name is not m1's to ask (dns.queries "listed": the agent answers
# NXDOMAIN, nothing reaches the resolver); whatever m1 is told, m0's
# address stays closed to it.
t_row "a pod never learns another pod's name (m1 asks m0's)" "$out" "$([[ $out == *"refused 1 "* || $out == *"answers 0 connects 0 refused 0 timeouts 0 noanswer 1 "* ]] && echo 0 || echo 1)"
expect "... and m0's learned address stays closed to m1" refused 1000 pod:m1 -- tcp 10.21.20.1 443 1000
# Per pod: the learner's queue and netfilter sockets and its two raw
# sockets (the answers to refused queries: kernel/rawsend.h), the ops
# thread's event and query sockets (drift watch, metrics: agent/ops.h), and
# the flow thread's NFLOG reader and netfilter socket (the pod's refusals
# and its tables' log_skipped: agent/flow.h).
# The ops thread takes pods on from their decision records on its own
# schedule (inotify, then a scan): give it up to 5 s on a loaded machine.
# The keep-alive thread (agent/keepalive.h) holds two more while a lookup
# runs (a pod's namespace and a netfilter socket in it): SLACK.
fds_are() { # WANT [SLACK]: the agent holds WANT fds (at most SLACK more)
	local n
	n=$(agent_fds)
	((n >= $1 && n <= $1 + ${2:-0})) && return 0
	echo "the agent holds $(agent_fds) fds, not $1 (base $base, $N pods):"
	find "/proc/$AGENT_PID/fd" -mindepth 1 -maxdepth 1 -printf '%l\n' | sed 's/:\[.*//' | sort | uniq -c
	grep -v '"level":"info"' "$W_TMP/log/agent.log" | tail -5
	return 1
}
t_check "the agent holds eight sockets per pod" within 10000 fds_are $((base + 8 * N)) 2
for ((p = 0; p < N; p += 10)); do
	pids=()
	for ((q = p; q < p + 10; q++)); do POD_NO_LOOPBACK=1 pod_del "m$q" >/dev/null 2>&1 & pids+=("$!"); done
	wait "${pids[@]}" || true
done
t_check "after DEL of the 100: the agent's sockets are closed" within 10000 fds_are "$base"
t_check "... no record and no ready file left for them" \
	sh -c "! ls $STATE/pods $STATE/ready | grep -v '^$(_pod_var web id)' | grep -v '[.]refused[.]json\$' | grep -q @"
veth=$(host_veth web)
t_check "web: host veth $veth there" ip -n "$W_NODE" link show "$veth"
pod_netns_rm web
t_check "namespace removed without DEL: the agent lets go (logged)" \
	within 10000 grep -q 'its network namespace is gone' "$W_TMP/log/agent.log"
veth_gone() { ! ip -n "$W_NODE" link show "$1"; }
# The kernel frees a namespace (and its veth pair) in a work queue once the
# last socket in it is closed: not at once.
t_check "... so the namespace and its veth are gone" within 10000 veth_gone "$veth"
t_check "DEL afterwards succeeds and removes the record" pod_del web
t_check_not "... record gone" test -e "$STATE/pods/$(_pod_var web id)@eth0.json"
# Nothing here tampers with a table: every drift event would be false (a
# DEL's own deletions, a busy node's interrupted reads), and every pod's
# policy must plan (the ops thread's namespace is its own, not the
# learner's of the moment).
no_false_alarms() {
	! grep -E '"level":"error"|"event":"(drift(_check)?|repaired)"' "$W_TMP/log/agent.log" | head -5 | grep .
}
t_check "no drift reported, nothing repaired, every policy planned (nothing was tampered with)" no_false_alarms
t_check "the agent's log is JSON lines" "$PY" -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$W_TMP/log/agent.log"

t_summary
