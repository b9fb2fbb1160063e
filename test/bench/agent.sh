#!/usr/bin/env bash
# bench/agent.sh: what the node agent costs (issue 14), in a test world of
# network namespaces (e2e/lib.sh), the agent inside its node namespace:
#   - added latency per answer, p50/p99, UDP and TCP: a learn-mode pod (every
#     answer a new name: parse, match, commit to both tables, ack, verdict)
#     against a resolve-mode pod asking the same resolver (no queue);
#     and an answer that teaches nothing new (no commit);
#   - answers per second for the node with 100 pods asking at once;
#   - the agent's RSS with 100 and with 1000 pods;
#   - what ADD pays for the agent (record write, wait for pickup);
#   - the DNS parser fuzzed for FUZZ_RUNS (default 10 M) executions.
# Prints figures and writes test/bench/results-agent.md. Not a pass/fail test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=e2e/lib.sh
source e2e/lib.sh

[[ $(id -u) -eq 0 ]] || { echo "bench/agent.sh: needs root" >&2 && exit 1; }
DNSLAT=${DNSLAT:-$PWD/build/bench/dnslat}
mkdir -p "$(dirname "$DNSLAT")"
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$DNSLAT" test/bench/dnslat.c
world_up ngb-agent-
N_LAT=${N_LAT:-2000}
OUT=test/bench/results-agent.md
{
	learn_hosts u%d.lat.world.test 0 "$N_LAT"
	learn_hosts t%d.lat.world.test 10 "$N_LAT"
	for p in $(seq 0 99); do learn_hosts "n%d.p$p.world.test" $((30 + p)) 200; done
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
LEARN=$(learn_conf learn 'e["egress"]["allow"] += ["*.world.test:443"]')
REF=$(conf_variant ref 'e["dns"]["servers"].append("10.96.0.11")')
NONAME=$(conf_variant noname 'e["dns"]["servers"].append("10.96.0.11"); e["egress"]["allow"] = ["10.20.1.5:443"]')
rss() { awk '/VmRSS/{print $2}' "/proc/$AGENT_PID/status"; }
median() { sort -n | awk '{a[NR]=$1} END{print NR ? a[int((NR+1)/2)] : 0}'; }
lat() { pod_exec "$1" "$DNSLAT" "$DNSL" "$2" "$3" "$4"; }
field() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p"; }

agent_start
agent_ready 3000
POD_CONFLIST=$LEARN pod_add lat >/dev/null
POD_CONFLIST=$REF pod_add ref >/dev/null
rss0=$(rss)

declare -A R
for proto in udp tcp; do
	c=${proto:0:1}
	R[$proto.learn]=$(lat lat "$proto" "$N_LAT" "$c%d.lat.world.test")
	R[$proto.ref]=$(lat ref "$proto" "$N_LAT" "$c%d.lat.world.test")
	R[$proto.again]=$(lat lat "$proto" "$N_LAT" "$c%d.lat.world.test")
done

# 100 pods asking at once, 200 new names each.
for ((p = 0; p < 100; p += 10)); do
	pids=()
	for ((q = p; q < p + 10; q++)); do POD_NO_LOOPBACK=1 POD_CONFLIST=$LEARN pod_add "m$q" >/dev/null & pids+=("$!"); done
	wait "${pids[@]}"
done
rss100=$(rss)
t0=$(date +%s%N)
pids=()
for ((q = 0; q < 100; q++)); do
	pod_exec "m$q" "$DNSLAT" "$DNSL" udp 200 "n%d.p$q.world.test" >"$W_TMP/m$q.lat" &
	pids+=("$!")
done
wait "${pids[@]}"
el=$((($(date +%s%N) - t0) / 1000000))
answered=$(cat "$W_TMP"/m*.lat | awk '{s += $2} END{print s}')
aps=$((answered * 1000 / (el > 0 ? el : 1)))
rss100l=$(rss)

# 1000 pods: 900 more records (real namespaces, the same entry) beside the
# 100 added through the chain; the agent picks each up as it would.
rec=$(find "$W_TMP/state/pods" -name '*.json' -print -quit) # (head -1 would SIGPIPE find: pipefail)
t0=$(date +%s%N)
for ((q = 100; q < 1000; q++)); do
	ns=$W_ID-pod-x$q
	_netns_add "$ns"
	"$PY" - "$rec" "$W_TMP/state/pods" "$q" "/run/netns/$ns" <<'PYEOF'
import json, os, sys
r = json.load(open(sys.argv[1]))
q, path = sys.argv[3], sys.argv[4]
st = os.stat(path)
p = r["pod"]
p["containerId"] = "x%032d" % int(q)
r["key"] = p["containerId"] + "@eth0"
p["netns"], p["netnsDev"], p["netnsIno"] = path, st.st_dev, st.st_ino
tmp = os.path.join(sys.argv[2], ".x%s.tmp" % q)
json.dump(r, open(tmp, "w"))
os.rename(tmp, os.path.join(sys.argv[2], r["key"] + ".json"))
PYEOF
done
for _ in {1..100}; do
	[[ $(find "$W_TMP/state/ready" -type f | wc -l) -ge 1000 ]] && break
	sleep 0.1
done
ready=$(find "$W_TMP/state/ready" -type f | wc -l)
rss1000=$(rss)

# ADD's cost of the agent, one ADD at a time: learn-mode pods against
# resolve-mode pods without names (the same table but for the queue chain).
: >"$W_TMP/netguard.log"
for i in $(seq 1 20); do
	POD_NO_LOOPBACK=1 POD_CONFLIST=$LEARN pod_add "s$i" >/dev/null
	POD_NO_LOOPBACK=1 POD_CONFLIST=$NONAME pod_add "z$i" >/dev/null
done
rec_us=$(grep -h '"agent_record_us"' "$W_TMP/netguard.log" | sed -n 's/.*"agent_record_us":\([0-9]*\).*/\1/p' | median)
wait_us=$(grep -h '"agent_wait_us"' "$W_TMP/netguard.log" | sed -n 's/.*"agent_wait_us":\([0-9]*\).*/\1/p' | median)
add_l=$(grep -h '"agent_record_us"' "$W_TMP/netguard.log" | sed -n 's/.*"duration_us":\([0-9]*\).*/\1/p' | median)
add_r=$(grep -h '"verb":"ADD"' "$W_TMP/netguard.log" | grep -v agent_record_us | sed -n 's/.*"duration_us":\([0-9]*\).*/\1/p' | median)

fuzz="skipped (FUZZ_RUNS=0)"
if [[ ${FUZZ_RUNS:-10000000} != 0 ]] && command -v clang >/dev/null; then
	make --no-print-directory build/fuzz/fuzz_dns >/dev/null
	fuzz=$(RUNS=${FUZZ_RUNS:-10000000} scripts/run-fuzz.sh 0 build/fuzz/fuzz_dns | tail -1)
fi

add() { # LEARN REF: p50 difference in ms
	awk -v a="$(field p50_us <<<"$1")" -v b="$(field p50_us <<<"$2")" 'BEGIN{printf "%.3f", (a - b) / 1000}'
}
add99() { awk -v a="$(field p99_us <<<"$1")" -v b="$(field p99_us <<<"$2")" 'BEGIN{printf "%.3f", (a - b) / 1000}'; }
{
	echo "# Node agent benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) CPUs)"
	echo
	echo "Rerun: \`sudo test/bench/agent.sh\` (part of \`make bench\`). Latencies from a pod's own socket, $N_LAT"
	echo "answers per row, each a name the pod had not asked before (so each answer is parsed, matched,"
	echo "committed to the inet table and the packet-socket guard in one transaction, acknowledged, then"
	echo "released), against a pod in \"resolve\" mode asking the same resolver (no queue)."
	echo
	echo "| | learn (agent) | resolve (no agent) | again (no new element) | added p50 | added p99 |"
	echo "|---|---|---|---|---|---|"
	for proto in udp tcp; do
		echo "| $proto | ${R[$proto.learn]} | ${R[$proto.ref]} | ${R[$proto.again]} | $(add "${R[$proto.learn]}" "${R[$proto.ref]}") ms | $(add99 "${R[$proto.learn]}" "${R[$proto.ref]}") ms |"
	done
	echo
	echo "- answers per second, 100 pods asking at once (200 new names each): $aps ($answered in $el ms)"
	echo "- agent RSS: $rss0 KiB with 2 pods; $rss100 KiB with 102; $rss100l KiB after learning 20,000 names;"
	echo "  $rss1000 KiB with $ready pods picked up"
	echo "- ADD, 20 one at a time: learn mode $add_l us against $add_r us for the same pod without names"
	echo "  (medians); of it: record write $rec_us us, wait for the agent's pickup $wait_us us (the agent binds"
	echo "  the queue while ADD builds the table). Earlier: 102 pods added 10 at a time."
	echo "- parser fuzzing: $fuzz"
} | tee "$OUT"
