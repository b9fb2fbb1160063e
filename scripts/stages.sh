#!/usr/bin/env bash
# stages.sh: `make test`. Runs stages (make targets, with their arguments)
# and ends with one line per stage and its wall time: the tail of a CI log
# says where the time went and which stage failed.
#
#   scripts/stages.sh STAGE... [--lane STAGE...]...
#   STAGE = TARGET[:VAR=VALUE...]
#
# The stages before the first --lane run first, in order (the builds every
# lane shares: two makes must never build the same file at once). Each
# --lane is then a list run in order, beside the other lanes: most stages
# wait on namespaces, timers and the kernel, not the CPU, so on 2 cores
# four lanes take about the time of the longest. A lane stops at its first
# failing stage; the others finish. A lane's output is printed whole when
# it ends (never interleaved with another's), then the table.
#
# The suite passes on a loaded machine by design (every deadline is a
# correctness bound); the lanes are each other's load.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

MAKE=${MAKE:-make}
T=$(mktemp -d /tmp/ng-stages.XXXXXX)
LANE_PIDS=()
# shellcheck disable=SC2317 # called from the EXIT trap
stop_lanes() {
	local p
	for p in "${LANE_PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap 'stop_lanes; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM

# run_lane NAME STAGE...: the stages in order; one table row each into
# $T/NAME.rows; exit status of the first that fails (0 when none does).
run_lane() {
	local name=$1 stage t0 rc=0 parts
	shift
	for stage in "$@"; do
		IFS=: read -r -a parts <<<"$stage"
		t0=$(date +%s)
		"$MAKE" --no-print-directory "${parts[@]}"
		rc=$?
		printf '  %-16s %5d s  %-6s %s\n' "${parts[0]}" $(($(date +%s) - t0)) "$name" \
			"$([[ $rc == 0 ]] && echo ok || echo "FAILED ($rc)")" >>"$T/$name.rows"
		((rc == 0)) || return "$rc"
	done
	return 0
}

# The arguments: the serial stages, then the lanes.
serial=() lanes=() cur=-1
for a in "$@"; do
	if [[ $a == --lane ]]; then
		cur=$((cur + 1))
		lanes[cur]=''
	elif ((cur < 0)); then
		serial+=("$a")
	else
		lanes[cur]+="$a "
	fi
done

t_all=$(date +%s) rc=0
: >"$T/first.rows"
if ((${#serial[@]})); then
	run_lane first "${serial[@]}" || rc=$?
fi
if ((rc == 0)); then
	for ((k = 0; k < ${#lanes[@]}; k++)); do
		: >"$T/lane$((k + 1)).rows"
		# shellcheck disable=SC2086 # a lane's stages, split on purpose
		setsid bash -c "$(declare -f run_lane); T=$T MAKE=$MAKE run_lane lane$((k + 1)) \"\$@\"; echo \$? >$T/lane$((k + 1)).rc" \
			_ ${lanes[k]} >"$T/lane$((k + 1)).log" 2>&1 &
		LANE_PIDS+=("$!")
	done
	# Each lane's output as it ends, in the order they end (its exit status
	# in a file: a lane killed from outside has none, and fails).
	left=${#LANE_PIDS[@]}
	declare -A done_lane=()
	while ((left > 0)); do
		sleep 1
		for ((k = 0; k < ${#LANE_PIDS[@]}; k++)); do
			[[ -z ${done_lane[$k]:-} ]] || continue
			kill -0 "${LANE_PIDS[k]}" 2>/dev/null && continue
			lrc=$(cat "$T/lane$((k + 1)).rc" 2>/dev/null)
			[[ -n $lrc ]] || lrc=1
			done_lane[$k]=1
			left=$((left - 1))
			echo "=== lane$((k + 1)) (${lanes[k]% }): $([[ $lrc == 0 ]] && echo ok || echo "FAILED ($lrc)")"
			cat "$T/lane$((k + 1)).log"
			echo "=== lane$((k + 1)) ends"
			((lrc == 0)) || rc=$lrc
		done
	done
	LANE_PIDS=()
fi
echo "--- make test: stages"
cat "$T"/first.rows "$T"/lane*.rows 2>/dev/null
echo "  total            $(($(date +%s) - t_all)) s"
exit "$rc"
