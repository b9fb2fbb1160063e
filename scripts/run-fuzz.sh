#!/usr/bin/env bash
# Runs each libFuzzer target for a bounded time on a scratch copy of its
# seed corpus (test/fuzz/corpus/NAME, left untouched), and prints per target
# the executions, coverage and crashes. Exit status: non-zero on any crash.
#
#   scripts/run-fuzz.sh SECONDS build/fuzz/fuzz_config ...
#   RUNS=10000000 scripts/run-fuzz.sh 0 ...   (a fixed number of executions instead)
set -uo pipefail

seconds=$1
shift
work=$(mktemp -d /tmp/ng-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
failed=0

printf '%-20s %12s %8s %8s %s\n' TARGET EXECS COV FEATURES RESULT
for bin in "$@"; do
	name=${bin##*/fuzz_}
	corpus="$work/$name"
	mkdir -p "$corpus" "$work/crash-$name"
	cp -r "test/fuzz/corpus/$name/." "$corpus/" 2>/dev/null || true
	limit=(-max_total_time="$seconds")
	[ -n "${RUNS:-}" ] && limit=(-runs="$RUNS")
	"$bin" "${limit[@]}" -max_len=4096 -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$work/crash-$name/" -print_final_stats=1 "$corpus" >"$work/$name.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$name.log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$work/$name.log" | tail -1 | cut -d' ' -f2)
	ft=$(grep -o 'ft: [0-9]*' "$work/$name.log" | tail -1 | cut -d' ' -f2)
	crashes=$(find "$work/crash-$name" -type f | wc -l)
	if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
		failed=1
		printf '%-20s %12s %8s %8s %s\n' "$name" "${execs:-?}" "${cov:-?}" "${ft:-?}" "CRASH (exit $rc)"
		grep -A30 'ERROR\|runtime error\|deadly signal' "$work/$name.log" | head -40
		for c in "$work/crash-$name"/*; do
			[ -f "$c" ] && { echo "input ($c):"; od -c "$c" | head -10; }
		done
	else
		printf '%-20s %12s %8s %8s %s\n' "$name" "${execs:-?}" "${cov:-?}" "${ft:-?}" "ok, 0 crashes"
	fi
done
exit $failed
