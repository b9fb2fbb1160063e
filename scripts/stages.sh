#!/usr/bin/env bash
# stages.sh: `make test`. Runs each stage (a make target, with its
# arguments) in order, stops at the first that fails, and ends with one line
# per stage and its wall time: the tail of a CI log says where the time went
# and which stage failed.
#
#   scripts/stages.sh TARGET[:VAR=VALUE...] ...
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1

MAKE=${MAKE:-make}
rows=() rc=0 t_all=$(date +%s)
for stage in "$@"; do
	IFS=: read -r -a parts <<<"$stage"
	t0=$(date +%s)
	"$MAKE" --no-print-directory "${parts[@]}"
	rc=$?
	rows+=("$(printf '  %-16s %5d s  %s' "${parts[0]}" $(($(date +%s) - t0)) "$([[ $rc == 0 ]] && echo ok || echo "FAILED ($rc)")")")
	((rc == 0)) || break
done
echo "--- make test: stages"
printf '%s\n' "${rows[@]}"
echo "  total            $(($(date +%s) - t_all)) s"
exit "$rc"
