#!/usr/bin/env bash
# bench/observer.sh: what the node-side observer costs (issue 19 item 2):
# the added latency per answer, p50/p99, UDP and TCP, with the observer
# (this tree: the host side copies queries and answers to NFLOG, the agent
# reads them and matches each answer before the node side learns it)
# against without it (the tree before the observer came: the node side
# learned whatever the pod's queue showed), in one test world, the two
# alternating (ROUNDS rounds, medians of the rounds), each answer a name
# the pod had not asked before; and the observer's memory per pod.
#   NG_BIN_BEFORE   the binary without the observer (default: built from the
#                   commit before plugin/agent/observer.c was added)
# Prints figures and writes test/bench/results-observer.md. Not a pass/fail test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=e2e/lib.sh
source e2e/lib.sh

[[ $(id -u) -eq 0 ]] || { echo "bench/observer.sh: needs root" >&2 && exit 1; }
AFTER=$NG_BIN
DNSLAT=${DNSLAT:-$PWD/build/bench/dnslat}
SIZES=$PWD/build/bench/observer-sizes
mkdir -p "$(dirname "$DNSLAT")"
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$DNSLAT" test/bench/dnslat.c
# The observer's fixed memory per pod, from its own headers.
printf '#include <stdio.h>\n#include "agent/observer.h"\nint main(void){printf("%%zu %%zu %%zu\\n", sizeof(struct ng_podseen), sizeof(struct ng_seen_query), NG_SEEN_BYTES);return 0;}\n' |
	${CC:-cc} -std=gnu11 -D_GNU_SOURCE -Iplugin -x c -o "$SIZES" -
read -r podseen qsize seen_bytes < <("$SIZES")

BEFORE_REV=''
if [[ -z ${NG_BIN_BEFORE:-} ]]; then
	first=$(git log --format=%H --diff-filter=A -- plugin/agent/observer.c | tail -1)
	BEFORE_REV=$(git rev-parse --short "$first^")
	src=$(mktemp -d /tmp/ngb-before.XXXXXX)
	git archive "$BEFORE_REV" | tar -x -C "$src"
	make -C "$src" --no-print-directory -j2 build/boxxkite-netguard >"$src/build.log" 2>&1
	NG_BIN_BEFORE=$src/build/boxxkite-netguard
fi
world_up ngb-obs-
N_LAT=${N_LAT:-1000} ROUNDS=${ROUNDS:-2}
OUT=test/bench/results-observer.md
{
	for r in $(seq 0 $((ROUNDS - 1))); do
		learn_hosts "u%d.a$r.world.test" $((r * 40)) "$N_LAT"
		learn_hosts "t%d.a$r.world.test" $((r * 40 + 10)) "$N_LAT"
		learn_hosts "u%d.b$r.world.test" $((r * 40 + 20)) "$N_LAT"
		learn_hosts "t%d.b$r.world.test" $((r * 40 + 30)) "$N_LAT"
	done
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
LEARN=$(learn_conf learn 'e["egress"]["allow"] += ["*.world.test:443"]')
field() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p"; }
median() { sort -n | awk '{a[NR]=$1} END{print NR ? a[int((NR+1)/2)] : 0}'; }

# One phase: the binary (plugin and agent) $2, a fresh learn pod, N_LAT new
# names over UDP and over TCP; results into $W_TMP/res.$1.
phase() {
	local tag=$1 bin=$2 names=$3 proto
	ln -sf "$bin" "$W_TMP/bin/boxxkite-netguard"
	NG_BIN=$bin agent_start
	agent_ready 3000
	POD_NO_LOOPBACK=1 POD_CONFLIST=$LEARN pod_add "p$tag" >/dev/null
	for proto in udp tcp; do
		pod_exec "p$tag" "$DNSLAT" "$DNSL" "$proto" "$N_LAT" "${proto:0:1}%d.$names.world.test" >>"$W_TMP/res.$tag.$proto"
	done
	POD_NO_LOOPBACK=1 POD_CONFLIST=$LEARN pod_del "p$tag" >/dev/null
	bg_stop "$AGENT_PID"
}
# Alternating, and each round in the other order: neither side always
# runs second on a warmed (or more loaded) machine.
for r in $(seq 0 $((ROUNDS - 1))); do
	if ((r % 2 == 0)); then
		phase "on$r" "$AFTER" "a$r"
		phase "off$r" "$NG_BIN_BEFORE" "b$r"
	else
		phase "off$r" "$NG_BIN_BEFORE" "b$r"
		phase "on$r" "$AFTER" "a$r"
	fi
done
ln -sf "$AFTER" "$W_TMP/bin/boxxkite-netguard"

stat() { # on|off udp|tcp p50_us|p99_us: the median over the rounds
	cat "$W_TMP"/res."$1"*."$2" | field "$3" | median
}
{
	echo "# Node-side observer benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) CPUs)"
	echo
	echo "Rerun: \`sudo test/bench/observer.sh\` (part of \`make bench\`). A learn-mode pod on a bridge port"
	echo "asks $N_LAT names it never asked before per row (UDP, then TCP: a fresh connection per query),"
	echo "latency from its own socket; with the observer (this tree) and without it (the plugin and agent"
	echo "of ${BEFORE_REV:-$NG_BIN_BEFORE}, before the observer), alternating, $ROUNDS rounds, medians of the rounds."
	echo
	echo "| | observer on p50 | off p50 | added p50 | on p99 | off p99 | added p99 |"
	echo "|---|---|---|---|---|---|---|"
	for proto in udp tcp; do
		on50=$(stat on "$proto" p50_us) off50=$(stat off "$proto" p50_us)
		on99=$(stat on "$proto" p99_us) off99=$(stat off "$proto" p99_us)
		awk -v p="$proto" -v a="$on50" -v b="$off50" -v c="$on99" -v d="$off99" \
			'BEGIN{printf "| %s | %.1f us | %.1f us | %+.1f us | %.1f us | %.1f us | %+.1f us |\n", p, a, b, a - b, c, d, c - d}'
	done
	echo
	echo "Memory per pod for the observer: $podseen bytes fixed (its outstanding-query table:"
	echo "NG_SEEN_QUERIES x $qsize bytes; the kept-answer slots; two TCP flow tables), plus the kept"
	echo "answers' bytes (at most $seen_bytes, each at most NG_SEEN_ANSWER_MS old: a pod's answers of the"
	echo "last seconds, typically well under 8 KiB), plus observed DNS-over-TCP streams from the agent-wide"
	echo "budget; and a second tracker (what the node side holds), 40 bytes per learned element."
	echo
	echo "Raw rows:"
	echo
	for f in "$W_TMP"/res.*; do echo "- ${f##*/res.}: $(tr '\n' ' ' <"$f")"; done
} | tee "$OUT"
