#!/usr/bin/env bash
# dataplane: nothing a client of --listen or another pod does keeps a
# pod's DNS answers or an ADD's pickup waiting (issue 23). A pod "good"
# resolves in learn mode, one name at a time, each answer waited for up to
# 2 s (a correctness bound: the agent of 0.2 held answers 5-8 s here), while
#   - HTTP clients abuse --listen: slow (a byte every 20 ms), silent, never
#     reading (a 1 KiB receive buffer), flooding /metrics; learn-mode ADDs
#     run meanwhile; the agent closes each at its deadline, refuses past its
#     bound, and says so in /metrics;
#   - a pod floods its own answers (thousands a second): its turns are
#     bounded (queue_budget_hits_total), its neighbour's answers all come;
#   - a pod holds 200,000 conntrack entries (UDP to 127.x.y.z) and a live
#     connection across its address's expiry: the keep-alive finds that one
#     flow (filtered lookups, off the main loop) and the connection lives.
# Also what --listen answers: GET and HEAD only (405 with Allow), the
# Prometheus text format 0.0.4 for /metrics, a query ignored, 404.
# Latencies are figures of test/bench/dataplane.sh, never rows here.
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "dataplane.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
LOAD=$E2E_DIR/dpload.py
L=127.0.0.1:9617
{
	learn_hosts g%d.dp.world.test 0 3000
	learn_hosts f%d.dp.world.test 20 2000
	echo "10.21.30.1 live.dp.world.test"
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
POD_CONFLIST=$(learn_conf dp '
e["egress"]["minNameTTL"] = 30
e["egress"]["allow"] += ["*.dp.world.test:443", "live.dp.world.test:9443"]
')
export POD_CONFLIST

in_node() { node_exec "$PY" "$LOAD" "$@"; }
in_pod() { local p=$1; shift; pod_exec "$p" "$PY" "$LOAD" "$@"; }
# resolve POD COUNT FIRST: the dns line for g<FIRST..>.dp.world.test
resolve() { in_pod "$1" dns "$DNSL" "$2" g%d.dp.world.test "$3"; }
all_came() { [[ $1 == "answered $2 lost 0 "* ]] && echo 0 || echo 1; }
scrape() { node_exec curl -s --max-time 5 "http://$L/metrics"; }
# metric NAME LABEL_TEXT: the sum of NAME's samples whose labels hold TEXT
metric() { scrape | grep "^boxxkite_netguard_$1{" | grep -F -- "$2" | awk '{s += $NF} END {print s + 0}'; }
metric_at_least() { (($(metric "$1" "$2") >= $3)); }
probe() { in_node http-probe "$L" "$1" "$2"; }
wait_pids() { local p; for p in "$@"; do wait "$p" || true; done; }

agent_start
t_check "agent serves (/healthz)" agent_ready 3000
for p in good flood ct; do t_check "ADD $p in learn mode" pod_add "$p"; done

# ---- what --listen answers ------------------------------------------------------
out=$(probe GET /metrics)
t_row "GET /metrics: 200, the Prometheus text format 0.0.4" "$out" \
	"$([[ $out == "status 200 type text/plain;version=0.0.4;charset=utf-8 "* ]] && echo 0 || echo 1)"
out=$(probe HEAD /metrics)
t_row "HEAD /metrics: 200, the length, no body" "$out" \
	"$([[ $out == "status 200 "*" body 0" && $out != *" length 0 "* ]] && echo 0 || echo 1)"
out=$(probe GET '/metrics?name[]=x&y=1')
t_row "a query is ignored" "$out" "$([[ $out == "status 200 type text/plain;version=0.0.4"* ]] && echo 0 || echo 1)"
out=$(probe POST /metrics)
t_row "POST: 405 with Allow: GET, HEAD" "$out" "$([[ $out == "status 405 "*" allow GET,HEAD "* ]] && echo 0 || echo 1)"
out=$(probe GET /healthz)
t_row "/healthz: 200, plain text" "$out" "$([[ $out == "status 200 type text/plain;charset=utf-8 "* ]] && echo 0 || echo 1)"
out=$(probe GET /nothing)
t_row "an unknown path: 404" "$out" "$([[ $out == "status 404 "* ]] && echo 0 || echo 1)"
scrape >"$W_TMP/scrape.txt"
t_check "the scrape passes promtool check metrics" promtool check metrics <"$W_TMP/scrape.txt"

# ---- abusive HTTP clients ---------------------------------------------------------
out=$(resolve good 200 0)
t_row "alone: 200 answers, every one within 2 s" "$out" "$(all_came "$out" 200)"
pids=()
for i in 1 2 3 4; do
	in_node http-slow "$L" 15 >"$W_TMP/slow$i.out" &
	pids+=("$!")
done
in_node http-silent "$L" 15 12 >"$W_TMP/silent.out" &
pids+=("$!")
in_node http-noread "$L" 15 4 >"$W_TMP/noread.out" &
pids+=("$!")
in_node http-flood "$L" 15 >"$W_TMP/flood.out" &
pids+=("$!")
for p in "${pids[@]}"; do _track_pid "$p"; done
sleep 1
out=$(resolve good 1000 200)
t_row "beside slow, silent, never-reading and flooding HTTP clients: 1000 answers, every one within 2 s" \
	"$out" "$(all_came "$out" 1000)"
for i in 1 2 3 4 5; do t_check "  ADD a$i in learn mode meanwhile (picked up)" pod_add "a$i"; done
wait_pids "${pids[@]}"
out=$(cat "$W_TMP/slow1.out")
ms=$(sed -n 's/.*closed_after_ms \([0-9]*\).*/\1/p' <<<"$out")
t_row "a slow client is closed at its deadline (3 s; at most 6 s here)" "$out" \
	"$([[ -n $ms ]] && ((ms >= 2500 && ms <= 6000)) && echo 0 || echo 1)"
t_row "  the flooding client was answered meanwhile" "$(cat "$W_TMP/flood.out")" \
	"$([[ $(cat "$W_TMP/flood.out") =~ answered\ [1-9] ]] && echo 0 || echo 1)"
t_check "  /metrics counts the deadline's closes" within 3000 metric_at_least agent_http_connections_total 'result="timeout"' 1
t_check "  ... and the connections refused past the bound (16)" metric_at_least agent_http_connections_total 'result="refused"' 1
t_check "  ... and the 405" metric_at_least agent_http_connections_total 'result="bad_method"' 1
t_check "the agent serves /healthz after them" agent_ready 2000

# ---- a pod flooding its own answers ------------------------------------------------
# 5000 queries a second: thousands of answers to hold, within what the
# world's one dnsmasq serves beside the other pod (past that the resolver,
# shared and no part of the agent, drops the neighbour's queries too;
# test/bench/dataplane.sh floods without a cap).
in_pod flood dns-flood "$DNSL" 8 f%d.dp.world.test 2000 5000 >"$W_TMP/dnsflood.out" &
fp=$!
_track_pid "$fp"
sleep 1
out=$(resolve good 1000 1200)
t_row "beside a pod flooding answers: 1000 answers, every one within 2 s" "$out" "$(all_came "$out" 1000)"
wait_pids "$fp"
out=$(cat "$W_TMP/dnsflood.out")
sent=$(sed -n 's/^sent \([0-9]*\).*/\1/p' <<<"$out")
t_row "  the flood: thousands of queries a second (8 s)" "$out" "$([[ -n $sent ]] && ((sent >= 16000)) && echo 0 || echo 1)"
t_row "  the agent dropped none of the neighbour's answers" "$(metric pod_dns_dropped_total 'pod_name="good"')" \
	"$(($(metric pod_dns_dropped_total 'pod_name="good"') == 0 ? 0 : 1))"
t_check "  its turns hit the per-turn budget (queue_budget_hits_total)" \
	within 3000 metric_at_least pod_queue_budget_hits_total 'pod_name="flood"' 1

# ---- 200,000 conntrack entries -----------------------------------------------------
pod_exec ct sysctl -qw net.netfilter.nf_conntrack_udp_timeout=600
in_pod ct ctfill 200000
n=$(pod_exec ct sysctl -n net.netfilter.nf_conntrack_count)
t_row "a pod holds 200,000 conntrack entries (UDP to 127.x.y.z)" "$n" "$((n >= 200000 ? 0 : 1))"
# live.dp.world.test lives 30 s (minNameTTL); the connection lasts 40 s
# and is only alive after 30 s if the keep-alive found its flow among them.
pod_exec ct "$PY" "$E2E_DIR/dnsrace.py" "$DNSL" udp 1 live.dp.world.test 9443 --hold 40 >"$W_TMP/live.out" &
lp=$!
_track_pid "$lp"
sleep 16 # the address is due (15 s before its expiry): lookups run
out=$(resolve good 1000 2200)
t_row "beside it, its address due: 1000 answers, every one within 2 s" "$out" "$(all_came "$out" 1000)"
wait_pids "$lp"
out=$(cat "$W_TMP/live.out")
t_row "  its live connection passed data across the expiry (40 s)" "$out" \
	"$([[ $out == "echoes 40 of 40" ]] && echo 0 || echo 1)"
t_check "  kept alive (pod_kept_alive_total)" within 3000 metric_at_least pod_kept_alive_total 'pod_name="ct"' 1
for p in good flood ct a1 a2 a3 a4 a5; do t_check "DEL $p" pod_del "$p"; done
t_summary
