#!/usr/bin/env bash
# bench/dataplane.sh: the agent as a data plane (issue 23), in a test world
# of network namespaces (e2e/lib.sh), the agent inside its node namespace:
#   - added latency per answer, p50/p99: a learn-mode pod asking new names
#     (parse, match, commit to both tables, ack, verdict) against a
#     resolve-mode pod asking the same resolver (no queue), alone and beside
#     each abuser: slow HTTP clients (a byte every 20 ms), never-reading
#     ones, a pod flooding answers, a pod with 200,000 conntrack entries and
#     64 learned addresses due (keep-alive lookups every sweep), and at 200
#     resident learn-mode pods;
#   - the agent's CPU per 1000 answers, its RSS at 200 pods;
#   - ADD and DEL, the plugin's own time (decision log duration_us) and the
#     agent's pickup, at 0, 100 and 200 enforced pods.
# Prints figures and writes test/bench/results-dataplane.md. Not a pass/fail
# test. Rerun: sudo test/bench/dataplane.sh (part of make bench).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=e2e/lib.sh
source e2e/lib.sh

[[ $(id -u) -eq 0 ]] || { echo "bench/dataplane.sh: needs root" >&2 && exit 1; }
DNSLAT=${DNSLAT:-$PWD/build/bench/dnslat}
mkdir -p "$(dirname "$DNSLAT")"
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$DNSLAT" test/bench/dnslat.c
LOAD=$PWD/e2e/dpload.py
N=${DP_ANSWERS:-2000}     # answers per latency row
ROUNDS=${DP_ADD_ROUNDS:-15} # ADD/DEL pairs per pod count
OUT=${DP_OUT:-test/bench/results-dataplane.md}
L=127.0.0.1:9617
world_up ngb-dp-
{
	learn_hosts q%d.dp.world.test 0 20000
	learn_hosts f%d.dp.world.test 100 2000
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
LEARN=$(learn_conf learn 'e["egress"]["minNameTTL"] = 30; e["egress"]["allow"] += ["*.dp.world.test:443"]')
REF=$(conf_variant ref 'e["dns"]["servers"].append("10.96.0.11")')
in_node() { node_exec "$PY" "$LOAD" "$@"; }
field() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p"; }
median() { sort -n | awk '{a[NR]=$1} END{print NR ? a[int((NR+1)/2)] : 0}'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$AGENT_PID/stat"; }
rss() { awk '/VmRSS/{print $2}' "/proc/$AGENT_PID/status"; }
NEXT=0 # the next unasked name: every row asks names never asked before
declare -A R
# row NAME: the learn pod and the reference pod, N answers each
row() {
	R[$1.learn]=$(pod_exec lat "$DNSLAT" "$DNSL" udp "$N" q%d.dp.world.test "$NEXT")
	R[$1.ref]=$(pod_exec ref "$DNSLAT" "$DNSL" udp "$N" q%d.dp.world.test "$NEXT")
	NEXT=$((NEXT + N))
}

agent_start
agent_ready 3000
POD_CONFLIST=$LEARN pod_add lat >/dev/null
POD_CONFLIST=$REF pod_add ref >/dev/null
POD_CONFLIST=$LEARN pod_add flood >/dev/null
POD_CONFLIST=$LEARN pod_add ct >/dev/null

# ---- alone, and the agent's CPU for it
t0=$(cpu_ticks)
row alone
cpu=$(awk -v t="$(($(cpu_ticks) - t0))" -v hz="$(getconf CLK_TCK)" -v n="$N" 'BEGIN{printf "%.1f", t * 1000 / hz * 1000 / n}')

# ---- slow HTTP clients (4), then never-reading ones (8)
pids=()
for i in 1 2 3 4; do in_node http-slow "$L" 600 >/dev/null & pids+=("$!"); done
for p in "${pids[@]}"; do _track_pid "$p"; done
sleep 1
row slow
for p in "${pids[@]}"; do kill_tree "$p"; done
in_node http-noread "$L" 600 8 >/dev/null &
np=$!
_track_pid "$np"
sleep 1
row noread
kill_tree "$np"

# ---- a pod flooding answers
pod_exec flood "$PY" "$LOAD" dns-flood "$DNSL" 600 f%d.dp.world.test 2000 >"$W_TMP/flood.out" &
fp=$!
_track_pid "$fp"
sleep 1
row flood
kill_tree "$fp"

# ---- 200,000 conntrack entries, 64 of its learned addresses due
pod_exec ct sysctl -qw net.netfilter.nf_conntrack_udp_timeout=600
pod_exec ct "$PY" "$LOAD" ctfill 200000
ctn=$(pod_exec ct sysctl -n net.netfilter.nf_conntrack_count)
pod_exec ct "$DNSLAT" "$DNSL" udp 64 f%d.dp.world.test >/dev/null
sleep 16 # due: 15 s before their 30 s expiry, looked up at every sweep
row conntrack

# ---- 200 resident pods (learn mode), then ADD/DEL at 0/100/200
: >"$W_TMP/netguard.log"
add_del() { # LABEL: ROUNDS ADD+DEL pairs of one learn-mode pod, own times
	local i
	: >"$W_TMP/netguard.log"
	local a0
	a0=$(wc -l <"$W_TMP/log/agent.log")
	for ((i = 0; i < ROUNDS; i++)); do
		POD_NO_LOOPBACK=1 POD_CONFLIST=$LEARN pod_add "s$i" >/dev/null
		POD_CONFLIST=$LEARN pod_del "s$i" >/dev/null
	done
	R[$1.add]=$(grep -h '"verb":"ADD"' "$W_TMP/netguard.log" | sed -n 's/.*"duration_us":\([0-9]*\).*/\1/p' | median)
	R[$1.del]=$(grep -h '"verb":"DEL"' "$W_TMP/netguard.log" | grep '"decision":"deleted"' | sed -n 's/.*"duration_us":\([0-9]*\).*/\1/p' | median)
	R[$1.pick]=$(tail -n +"$((a0 + 1))" "$W_TMP/log/agent.log" | grep '"pod_added"' | sed -n 's/.*picked up in \([0-9]*\) us.*/\1/p' | median)
}
add_del 0
resident() { # FROM TO: pods r<FROM..TO-1>, 10 at a time
	local p q pids
	for ((p = $1; p < $2; p += 10)); do
		pids=()
		for ((q = p; q < p + 10 && q < $2; q++)); do POD_NO_LOOPBACK=1 POD_CONFLIST=$LEARN pod_add "r$q" >/dev/null & pids+=("$!"); done
		wait "${pids[@]}"
	done
}
resident 0 100
add_del 100
resident 100 200
add_del 200
rss200=$(rss)
row pods200

{
	echo "# Data-plane benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
	echo
	echo "Rerun: \`sudo test/bench/dataplane.sh\` (part of \`make bench\`; DP_ANSWERS=$N answers per row,"
	echo "DP_ADD_ROUNDS=$ROUNDS ADD/DEL pairs per pod count). Each row: a learn-mode pod asking $N names it never"
	echo "asked (each parsed, matched, committed to the pod's tables and the node-side one, acknowledged, then"
	echo "released), against a resolve-mode pod asking the same resolver (no queue) right after; added = learn - resolve."
	echo
	echo "| beside | learn (agent) | resolve (no agent) | added p50 | added p99 |"
	echo "|---|---|---|---|---|"
	for k in alone slow noread flood conntrack pods200; do
		case $k in
		alone) lbl="nothing" ;;
		slow) lbl="4 slow HTTP clients (a byte / 20 ms)" ;;
		noread) lbl="8 never-reading HTTP clients" ;;
		flood) lbl="a pod flooding answers ($(cat "$W_TMP/flood.out" 2>/dev/null) in the row's time)" ;;
		conntrack) lbl="a pod with $ctn conntrack entries, 64 addresses due" ;;
		pods200) lbl="200 resident learn-mode pods" ;;
		esac
		l=${R[$k.learn]} r=${R[$k.ref]}
		echo "| $lbl | $l | $r | $(awk -v a="$(field p50_us <<<" $l")" -v b="$(field p50_us <<<" $r")" 'BEGIN{printf "%.3f ms", (a - b) / 1000}') | $(awk -v a="$(field p99_us <<<" $l")" -v b="$(field p99_us <<<" $r")" 'BEGIN{printf "%.3f ms", (a - b) / 1000}') |"
	done
	echo
	echo "- agent CPU per 1000 answers (alone, each a new name): $cpu ms"
	echo "- agent RSS with 200 resident pods (+4): $rss200 KiB"
	echo
	echo "ADD and DEL of a learn-mode pod (hostMirror required: both sides), $ROUNDS pairs each, medians:"
	echo
	echo "| enforced pods on the node | ADD duration_us | DEL duration_us | agent pickup (us) |"
	echo "|---|---|---|---|"
	for k in 0 100 200; do echo "| $k | ${R[$k.add]} | ${R[$k.del]} | ${R[$k.pick]} |"; done
	echo
	echo "ratio 200/0: ADD $(awk -v a="${R[200.add]}" -v b="${R[0.add]}" 'BEGIN{printf "%.2f", b ? a / b : 0}'),"\
		"DEL $(awk -v a="${R[200.del]}" -v b="${R[0.del]}" 'BEGIN{printf "%.2f", b ? a / b : 0}'),"\
		"pickup $(awk -v a="${R[200.pick]}" -v b="${R[0.pick]}" 'BEGIN{printf "%.2f", b ? a / b : 0}')"
} | tee "$OUT"
