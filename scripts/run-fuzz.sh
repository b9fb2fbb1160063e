#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time on a scratch copy of its
# seed corpus (test/fuzz/corpus/NAME, left untouched), and prints per target
# the executions, wall time, rate, coverage and crashes. Exit status: non-zero
# on any crash.
#
#   scripts/run-fuzz.sh SECONDS build/fuzz/fuzz_config ...
#   RUNS=10000000 scripts/run-fuzz.sh 0 ...   (a fixed number of executions instead)
#   JOBS=2        targets run side by side (default 1)
#   KEEP=DIR      crash inputs and logs are copied to DIR (make fuzz-deep)
set -uo pipefail

seconds=$1
shift
work=$(mktemp -d /tmp/ng-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
jobs=${JOBS:-1}

# One target: fuzz, then write its result line to $work/NAME.row.
run_one() {
	local bin=$1 name corpus limit rc execs cov ft crashes t0 t1 secs rate result
	name=${bin##*/fuzz_}
	corpus="$work/$name"
	mkdir -p "$corpus" "$work/crash-$name"
	cp -r "test/fuzz/corpus/$name/." "$corpus/" 2>/dev/null || true
	limit=(-max_total_time="$seconds")
	[ -n "${RUNS:-}" ] && limit=(-runs="$RUNS")
	t0=$(date +%s)
	"$bin" "${limit[@]}" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$work/crash-$name/" -print_final_stats=1 "$corpus" >"$work/$name.log" 2>&1
	rc=$?
	t1=$(date +%s)
	secs=$((t1 - t0))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log" | tail -1)
	rate=$(( ${execs:-0} / (secs > 0 ? secs : 1) ))
	cov=$(grep -o 'cov: [0-9]*' "$work/$name.log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$work/$name.log" | tail -1 | cut -d' ' -f2)
	crashes=$(find "$work/crash-$name" -type f | wc -l)
	result="ok, 0 crashes"
	if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
		result="CRASH (exit $rc)"
		{
			grep -A30 'ERROR\|runtime error\|deadly signal' "$work/$name.log" | head -40
			for c in "$work/crash-$name"/*; do
				[ -f "$c" ] && { echo "input ($c):"; od -c "$c" | head -10; }
			done
		} >"$work/$name.detail"
	fi
	if [ -n "${KEEP:-}" ]; then
		mkdir -p "$KEEP"
		cp "$work/$name.log" "$KEEP/$name.log"
		[ "$crashes" -ne 0 ] && cp -r "$work/crash-$name" "$KEEP/"
	fi
	printf '%-14s %12s %7ss %9s/s %6s %8s %s\n' "$name" "${execs:-?}" "$secs" "$rate" \
		"${cov:-?}" "${ft:-?}" "$result" >"$work/$name.row"
}

running=0
for bin in "$@"; do
	run_one "$bin" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

failed=0
printf '%-14s %12s %8s %11s %6s %8s %s\n' TARGET EXECS WALL RATE COV FEATURES RESULT
for bin in "$@"; do
	name=${bin##*/fuzz_}
	cat "$work/$name.row"
	if [ -f "$work/$name.detail" ]; then
		failed=1
		cat "$work/$name.detail"
	fi
done
exit $failed
