#!/usr/bin/env bash
# e2e/k8s/run.sh (root): `make e2e-k8s`. The smoke test (smoke.sh: the
# cluster itself) and the deploy test (deploy.sh: deploy/ applied for real,
# the seed's checks), each on a cluster of its own, one after the other;
# then one line per script with its wall time, the rows that failed, and the
# total as a plain "N passed, N failed" (the last line).
#
#   sudo e2e/k8s/run.sh        # given the binaries (make k8s-build) and make static
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1

SUMMARY=$(mktemp /tmp/ngk-summary.XXXXXX)
ROWS=$(mktemp /tmp/ngk-rows.XXXXXX)
trap 'rm -f "$SUMMARY" "$ROWS"' EXIT
CHILD='' STOP=''
# A signal stops the run: passed on to the running script (its traps take
# its cluster down), and no other starts.
trap 'STOP=1; [[ -n $CHILD ]] && kill -TERM "$CHILD" 2>/dev/null' INT TERM

results=() failed_rows=() pass=0 fail=0 bad=0
for s in e2e/k8s/smoke.sh e2e/k8s/deploy.sh; do
	[[ -z $STOP ]] || break
	echo "--- $s"
	: >"$SUMMARY"
	: >"$ROWS"
	t0=$(date +%s)
	# A hung script gets TERM (its cleanup runs) after 20 minutes.
	E2E_SUMMARY_FILE=$SUMMARY E2E_RESULTS_FILE=$ROWS timeout --foreground -k 30 1200 bash "$s" &
	CHILD=$!
	while :; do
		wait "$CHILD" && rc=0 || rc=$?
		kill -0 "$CHILD" 2>/dev/null || break
	done
	CHILD=''
	line=$(cat "$SUMMARY")
	read -r p _ f _ <<<"$line"
	if [[ $p =~ ^[0-9]+$ && $f =~ ^[0-9]+$ ]]; then
		pass=$((pass + p)) fail=$((fail + f))
	else
		line="no summary (the script stopped early)" && fail=$((fail + 1))
	fi
	((rc == 0)) || bad=$((bad + 1))
	results+=("$(printf '%-20s %-24s %5d s  %s' "$s" "$line" $(($(date +%s) - t0)) "$( ((rc == 0)) && echo ok || echo "FAILED (exit $rc)")")")
	while IFS=$'\t' read -r v label; do
		[[ $v != FAIL ]] || failed_rows+=("$s: $label")
	done <"$ROWS"
done

echo "--- e2e-k8s summary"
printf '%s\n' "${results[@]}"
for r in "${failed_rows[@]}"; do echo "failed row: $r"; done
[[ -z $STOP ]] || echo "e2e-k8s: INTERRUPTED"
printf '%d passed, %d failed\n' "$pass" "$fail"
[[ -z $STOP ]] && ((bad == 0 && fail == 0 && pass > 0))
