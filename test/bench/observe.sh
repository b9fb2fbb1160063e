#!/usr/bin/env bash
# bench/observe.sh: what the flow log costs (issue 21 item 3): the log
# chains in the ruleset (rules, ADD wall time, the per-packet cost of a
# refusal: one pod's refused sends per second with the default logging
# against "log": false, ROUNDS alternating rounds), and the agent reading
# every pod's group: its CPU per refusal logged during a flood of a pod
# logging 100,000/s with no reader, with a reader following the stream,
# and with a reader that stopped reading; a DNS answer's latency (p50/p99)
# to another pod during each, against quiet.
# Prints figures and writes test/bench/results-observe.md. Not a pass/fail test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=e2e/lib.sh
source e2e/lib.sh

[[ $(id -u) -eq 0 ]] || { echo "bench/observe.sh: needs root" >&2 && exit 1; }
mkdir -p build/bench
FLOODB=$PWD/build/bench/refuseflood DNSLAT=$PWD/build/bench/dnslat
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$FLOODB" test/bench/refuseflood.c
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$DNSLAT" test/bench/dnslat.c
ROUNDS=${ROUNDS:-3} N_ADD=${N_ADD:-20} FLOOD_S=${FLOOD_S:-3} N_LAT=${N_LAT:-300}
OUT=test/bench/results-observe.md
world_up ngb-obs-
median() { sort -n | awk '{a[NR]=$1} END{print NR ? a[int((NR+1)/2)] : 0}'; }
now_ns() { date +%s%N; }

# ---- the ruleset: log chains on (the default) and off ----------------------
ON=$(conf_variant on '')
OFF=$(conf_variant off 'e["log"] = False')
POD_NO_LOOPBACK=1 POD_CONFLIST=$ON pod_add on >/dev/null
POD_NO_LOOPBACK=1 POD_CONFLIST=$OFF pod_add off >/dev/null
rules() { pod_exec "$1" nft -a list ruleset | grep -c '# handle' || true; }
R_ON=$(rules on) R_OFF=$(rules off)
# ADD again (a retried ADD replaces the tables): our plugin alone, its wall time.
add_ms() {
	local t0
	ng_stdin "$1" >"$W_TMP/$1.stdin" 2>/dev/null
	t0=$(now_ns)
	POD_CONFLIST=$2 ng_pod_call ADD "$1" "$W_TMP/$1.stdin" >/dev/null 2>&1 || true
	echo $((($(now_ns) - t0) / 1000))
}
: >"$W_TMP/add.on" && : >"$W_TMP/add.off"
for i in $(seq "$N_ADD"); do
	if ((i % 2)); then
		POD_CONFLIST=$ON add_ms on "$ON" >>"$W_TMP/add.on"
		POD_CONFLIST=$OFF add_ms off "$OFF" >>"$W_TMP/add.off"
	else
		POD_CONFLIST=$OFF add_ms off "$OFF" >>"$W_TMP/add.off"
		POD_CONFLIST=$ON add_ms on "$ON" >>"$W_TMP/add.on"
	fi
done
ADD_ON=$(median <"$W_TMP/add.on") ADD_OFF=$(median <"$W_TMP/add.off")
# Refused sends per second, each pod in turn, rounds alternating.
: >"$W_TMP/pps.on" && : >"$W_TMP/pps.off"
for r in $(seq "$ROUNDS"); do
	for p in $( ((r % 2)) && echo on off || echo off on); do
		pod_exec "$p" "$FLOODB" "$FORBID4" 9999 "$FLOOD_S" | awk '{print $4}' >>"$W_TMP/pps.$p"
	done
done
PPS_ON=$(median <"$W_TMP/pps.on") PPS_OFF=$(median <"$W_TMP/pps.off")
POD_CONFLIST=$ON pod_del on >/dev/null 2>&1 || true
POD_CONFLIST=$OFF pod_del off >/dev/null 2>&1 || true

# ---- the agent reading: CPU per event, an answer's latency ------------------
learn_hosts "u%d.q.world.test" 0 $((N_LAT * 5)) >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
LEARN=$(learn_conf learn 'e["egress"]["allow"] += ["*.q.world.test:443"]')
LOUD=$(learn_conf loud 'e["log"] = {"ratePerSecond": 100000, "burst": 100000}')
QUIETC=$(learn_conf quiet 'e["log"] = False')
agent_start
agent_ready 30000
POD_NO_LOOPBACK=1 POD_CONFLIST=$LEARN pod_add q >/dev/null
POD_NO_LOOPBACK=1 POD_CONFLIST=$LOUD pod_add loud >/dev/null
POD_NO_LOOPBACK=1 POD_CONFLIST=$QUIETC pod_add silent >/dev/null
STATE=$W_TMP/state
cpu_ticks() { awk '{print $14 + $15}' "/proc/$AGENT_PID/stat"; }
HZ=$(getconf CLK_TCK)
# phase TAG READER [POD]: a flood of FLOOD_S s from POD (loud) with READER
# running (none, follow, stalled), a DNS latency run from q meanwhile.
phase() {
	local tag=$1 reader=$2 src=${3:-loud} c0 c1 rp='' sent lat
	case $reader in
	follow) bg_start "$NG_BIN" observe --state-dir "$STATE" --follow --json >/dev/null 2>&1 && rp=$BG_PID ;;
	stalled)
		bg_start "$PY" -c 'import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"{\"op\":\"observe\",\"follow\":true}\n"); time.sleep(3600)' "$STATE/agent.sock"
		rp=$BG_PID
		;;
	esac
	sleep 0.5
	c0=$(cpu_ticks)
	pod_exec "$src" "$FLOODB" "$FORBID4" 9998 "$FLOOD_S" >"$W_TMP/flood.$tag" &
	local fp=$!
	lat=$(pod_exec q "$DNSLAT" "$DNSL" udp "$N_LAT" "u%d.q.world.test" $((${tag#r} * N_LAT)))
	wait "$fp" || true
	sleep 0.5
	c1=$(cpu_ticks)
	[[ -n $rp ]] && bg_stop "$rp"
	sent=$(awk '{print $2}' "$W_TMP/flood.$tag")
	[[ $src == loud ]] || reader="none, \"log\": false (the flood alone)"
	echo "$reader|$sent $(((c1 - c0) * 1000 / HZ)) $(sed -n 's/.*p50_us \([0-9]*\).*/\1/p' <<<"$lat") $(sed -n 's/.*p99_us \([0-9]*\).*/\1/p' <<<"$lat")" >>"$W_TMP/agent.res"
}
: >"$W_TMP/agent.res"
QUIET=$(pod_exec q "$DNSLAT" "$DNSL" udp "$N_LAT" "u%d.q.world.test" $((3 * N_LAT)))
phase r4 none silent
phase r0 none
phase r1 follow
phase r2 stalled
bg_stop "$AGENT_PID"

{
	echo "# make bench: the flow log (test/bench/observe.sh)"
	echo
	echo "$(date -u +%Y-%m-%d), $(uname -r), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) at the end. Medians."
	echo
	echo "| the ruleset | log on (default) | \"log\": false |"
	echo "| --- | --- | --- |"
	echo "| rules and chains in the pod's namespace (nft -a list ruleset, handles) | $R_ON | $R_OFF |"
	echo "| ADD of the plugin alone (a retried ADD: both tables replaced), wall ms, median of $N_ADD | $((ADD_ON / 1000)).$(((ADD_ON % 1000) / 100)) | $((ADD_OFF / 1000)).$(((ADD_OFF % 1000) / 100)) |"
	echo "| refused UDP sends per second from one pod (every one refused; median of $ROUNDS x ${FLOOD_S} s) | $PPS_ON | $PPS_OFF |"
	echo
	echo "| the agent during a ${FLOOD_S} s flood (a pod logging 100,000/s) | refused sends | agent CPU ms | CPU us per refusal sent | DNS answer p50 / p99 us (another pod) |"
	echo "| --- | --- | --- | --- | --- |"
	echo "| quiet (no flood) | - | - | - | $(sed -n 's/.*p50_us \([0-9]*\).*/\1/p' <<<"$QUIET") / $(sed -n 's/.*p99_us \([0-9]*\).*/\1/p' <<<"$QUIET") |"
	while IFS='|' read -r reader rest; do
		read -r sent cpu p50 p99 <<<"$rest"
		echo "| reader: $reader | $sent | $cpu | $(awk -v c="$cpu" -v s="$sent" 'BEGIN{printf "%.2f", s ? c * 1000 / s : 0}') | $p50 / $p99 |"
	done <"$W_TMP/agent.res"
	echo
	echo "The flood pod logs at 100,000/s (log.ratePerSecond), so nearly every refusal is an NFLOG message to the"
	echo "agent (what the kernel cannot queue in time is lost, counted, and said in the stream); a pod with the"
	echo "default 10/s costs the agent at most 10 messages a second per table. \"stalled\": a client that asked"
	echo "to follow and never reads (its events are dropped for it, counted)."
} >"$OUT"
cat "$OUT"
