#!/usr/bin/env bash
# bench/livepolicy.sh: how long a change of the platform's entry takes to
# reach every running pod (issue 21 item 1), in a test world of network
# namespaces (e2e/lib.sh), the agent in its node namespace following its
# own conf dir: from the conflist written (renamed into place, as the
# installer writes it; this script's clock just before the rename) to the
# agent's line that the last pod of the network runs the new generation
# (its "ts"), at 50 and at 200 running learning pods, LIVE_ROUNDS changes
# each (the allowlist, alternately one entry more and one less), and the
# agent's own part (from the change seen to the last pod re-planned).
# Writes test/bench/results-livepolicy.md. Not a pass/fail test: issue
# 21's target is 5 s for 200 pods.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=e2e/lib.sh
source e2e/lib.sh

[[ $(id -u) -eq 0 ]] || { echo "bench/livepolicy.sh: needs root" >&2 && exit 1; }
world_up ngb-live-
ROUNDS=${LIVE_ROUNDS:-5} SIZES=${LIVE_SIZES:-"50 200"}
OUT=${LIVE_OUT:-test/bench/results-livepolicy.md}
LIVE_DIR=$W_TMP/live.d
mkdir -p "$LIVE_DIR"
echo "10.21.0.1 keep.world.test" >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
entry() { # NAME EXTRA: our entry, learn mode, one allow entry more when EXTRA
	learn_conf "$1" '
e["egress"]["allow"] = ["10.20.1.5:443", "keep.world.test:443"]'"${2:+
e[\"egress\"][\"allow\"].append(\"10.20.1.7:443\")}"
}
A=$(entry bench-a '')
B=$(entry bench-b more)
install_conf() { # FILE: renamed into place; prints this clock's ms just before
	cp "$1" "$LIVE_DIR/.10-ngbench.tmp"
	echo $(($(date +%s%N) / 1000000))
	mv "$LIVE_DIR/.10-ngbench.tmp" "$LIVE_DIR/10-ngbench.conflist"
}
install_conf "$A" >/dev/null
export POD_CONFLIST=$LIVE_DIR/10-ngbench.conflist
bg_start nsenter --net="$(_ns_path "$W_NODE")" "$NG_BIN" agent --state-dir "$W_TMP/state" \
	--cni-conf-dir "$LIVE_DIR" --listen 127.0.0.1:9617 2>>"$W_TMP/log/agent.log"
agent_ready 5000
# applied GEN: the agent's line for generation GEN: "<unix ms> <seconds since seen>"
applied() {
	"$PY" - "$W_TMP/log/agent.log" "$1" <<'PY'
import datetime, json, re, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("event") == "policy_applied" and o["msg"].startswith("generation %s:" % sys.argv[2]):
        t = datetime.datetime.strptime(o["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
        print(int(t.timestamp() * 1000), re.search(r"([0-9.]+) s after", o["msg"]).group(1))
        sys.exit(0)
sys.exit(1)
PY
}
stats() { # numbers...: "median (min-max)"
	printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
		printf "%.0f (%.0f-%.0f)", m, v[1], v[NR]}'
}

gen=1 n=0
declare -A ROW
for size in $SIZES; do
	while ((n < size)); do
		pids=()
		for ((q = n; q < n + 10 && q < size; q++)); do
			POD_NO_LOOPBACK=1 pod_add "b$q" >/dev/null 2>&1 &
			pids+=("$!")
		done
		wait "${pids[@]}" || true
		n=$q
	done
	ok=$(find "$W_TMP/state/pods" -name '*.json' ! -name '*.refused.json' | wc -l)
	walls=() agents=()
	for ((r = 0; r < ROUNDS; r++)); do
		gen=$((gen + 1))
		if ((gen % 2)); then f=$A; else f=$B; fi
		t0=$(install_conf "$f")
		for _ in $(seq 600); do applied "$gen" >/dev/null && break; sleep 0.1; done
		read -r t1 s <<<"$(applied "$gen" || echo "$t0 0")"
		walls+=("$((t1 - t0))")
		agents+=("$(awk -v s="$s" 'BEGIN{printf "%.0f", s * 1000}')")
	done
	ROW[$size]="| $size ($ok recorded) | $(stats "${walls[@]}") | $(stats "${agents[@]}") | ${walls[*]} |"
done
{
	echo "# Live policy benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) CPUs)"
	echo
	echo "Rerun: \`sudo test/bench/livepolicy.sh\` (part of \`make bench\`; \`LIVE_ROUNDS\`, \`LIVE_SIZES\`)."
	echo "Running learning pods (egress.names \"learn\", the agent serving each), one allowlist entry"
	echo "added or removed per round. \"write to last pod\": from this script's clock just before the"
	echo "conflist is renamed into the agent's conf dir to the agent's log line that every enforced pod of"
	echo "the network runs the new generation (both sides applied, record rewritten, flows cut). \"agent\":"
	echo "the agent's own figure, from the change seen to that line. Milliseconds, median (min-max) over"
	echo "$ROUNDS changes; issue 21's target: 5 s for 200 pods."
	echo "Load average when it ended (the machine is shared): $(cut -d' ' -f1-3 /proc/loadavg)."
	echo
	echo "| pods | write to last pod (ms) | agent (ms) | each round (ms) |"
	echo "|---|---|---|---|"
	for size in $SIZES; do echo "${ROW[$size]}"; done
} | tee "$OUT"
t_summary >/dev/null || true
