#!/usr/bin/env bash
# Runs each cmocka unit-test binary given as an argument, shows its output,
# and ends with one summary line. Exit status: non-zero if any binary failed.
set -uo pipefail
# Run as root (sudo make test), the CNI verbs' tests must not write into the
# machine's own state dir.
[[ -n ${NG_STATE_SHADOWED:-} ]] || exec "$(dirname "$0")/shadow-state.sh" "$0" "$@"

failed=0 passed=0 failed_bins=()
for t in "$@"; do
	echo "== ${t##*/}"
	if "$t" 2>&1; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		failed_bins+=("${t##*/}")
	fi
done
echo "unit: $passed passed, $failed failed${failed_bins:+ (${failed_bins[*]})}"
[ "$failed" -eq 0 ]
