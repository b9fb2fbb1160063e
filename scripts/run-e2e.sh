#!/usr/bin/env bash
# run-e2e.sh: `make e2e`. Runs every e2e/*.sh test script (not lib.sh, not
# demo.sh) one after the other, each in its own namespace world, and prints
# one summary line per script. Needs root; without it the e2e tests are
# skipped (exit 0) so that `make test` still runs the unit tests for anyone.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $(id -u) -ne 0 ]]; then
	echo "e2e: SKIPPED (needs root: run sudo make test)"
	exit 0
fi

# Everything the world needs; a missing piece is a failure, not a skip: a
# root run that silently tested nothing would read as green.
missing=()
for tool in ip nsenter unshare mount sysctl socat dnsmasq nft timeout awk sha256sum promtool iptables-nft; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
for p in /usr/lib/cni/loopback /usr/lib/cni/bridge /usr/lib/cni/host-local /usr/bin/python3 \
	"${NG_BIN:-build/boxxkite-netguard}" "${NPROBE:-build/nprobe}" "${XSKTX:-build/xsktx}"; do
	[[ -x $p ]] || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "e2e: FAILED: missing ${missing[*]} (run: make deps; make)" >&2
	exit 1
fi

scripts=()
for s in e2e/*.sh; do
	case ${s##*/} in lib.sh | demo.sh) continue ;; esac
	scripts+=("$s")
done

CHILD='' STOP=''
# The processes the running script's session still has (zombies not
# counted: they hold nothing and wait to be reaped), into `left`, after
# giving them up to a second to go (a process SIGKILLed by the fault tests
# may take a moment).
live() { pgrep -s "$CHILD" -r R,S,D,T,t,I 2>/dev/null || true; }
settle() {
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		[[ -z $(live) ]] && break
		sleep 0.1
	done
	mapfile -t left < <(live)
}
# A signal stops the run: pass it on to the running script as TERM (its
# world_down trap cleans up), wait for it, and start no other.
trap 'STOP=1; [[ -n $CHILD ]] && kill -TERM "$CHILD" 2>/dev/null' INT TERM

# The machine's own state dir: the scripts run with it shadowed when it
# exists (scripts/shadow-state.sh); when it does not, none may create it (a
# learn-mode ADD whose config names no stateDir of the test's would).
STATE_BEFORE=$([[ -e /run/boxxkite-netguard ]] && echo there || echo absent)
SUMMARY=$(mktemp /tmp/nge-summary.XXXXXX)
ROWS=$(mktemp /tmp/nge-rows.XXXXXX)
RESULTS=()
# The rows that failed, by script: repeated under the summary, since a CI log
# is often read from its tail only.
FAILED_ROWS=()
failed=0
for s in "${scripts[@]}"; do
	[[ -z $STOP ]] || break
	echo "--- $s"
	: >"$SUMMARY"
	: >"$ROWS"
	start=$(date +%s%N)
	# Backgrounded so the trap above can run while it works; a session of
	# its own (setsid execs: a background job is no group leader) so that
	# whatever it leaves running can be found afterwards; a hung script gets
	# TERM (so its cleanup runs) after 10 minutes.
	E2E_PREFIX=nge- E2E_SUMMARY_FILE=$SUMMARY E2E_RESULTS_FILE=$ROWS setsid timeout --foreground -k 20 600 bash "$s" &
	CHILD=$!
	rc=0
	while :; do
		wait "$CHILD" && rc=0 || rc=$?
		kill -0 "$CHILD" 2>/dev/null || break
	done
	# A test that leaves processes behind fails: they would hold our stdout
	# (hanging `make test | tail`) and outlive the namespaces they test.
	settle
	if ((${#left[@]})); then
		echo "e2e: $s left processes behind, stopping them:"
		ps -o pid=,args= -p "$(IFS=,; echo "${left[*]}")" | cut -c1-160 | sed 's/^/    /'
		kill -TERM "${left[@]}" 2>/dev/null || true
		sleep 1
		settle
		((${#left[@]} == 0)) || kill -KILL "${left[@]}" 2>/dev/null || true
		((rc != 0)) || rc=1
	fi
	CHILD=''
	ms=$((($(date +%s%N) - start) / 1000000))
	line=$(cat "$SUMMARY")
	[[ -n $line ]] || line="no summary (the script stopped early)"
	if ((rc == 0)); then verdict=ok; else verdict="FAILED (exit $rc)" && failed=$((failed + 1)); fi
	RESULTS+=("$(printf '%-24s %-26s %6d ms  %s' "$s" "$line" "$ms" "$verdict")")
	while IFS=$'\t' read -r v label; do
		if [[ $v == FAIL ]]; then FAILED_ROWS+=("$s: $label"); fi
	done <"$ROWS"
done
rm -f "$SUMMARY" "$ROWS"

echo "--- e2e summary"
for r in "${RESULTS[@]}"; do echo "$r"; done
for r in "${FAILED_ROWS[@]}"; do echo "failed row: $r"; done
if [[ -n $STOP ]]; then
	echo "e2e: INTERRUPTED"
	exit 130
fi
if [[ $STATE_BEFORE == absent && -e /run/boxxkite-netguard ]]; then
	echo "e2e: FAILED: the suite made the machine's /run/boxxkite-netguard (a test's plugin or agent used the default stateDir):"
	find /run/boxxkite-netguard | head -20
	failed=$((failed + 1))
fi
((failed == 0)) || { echo "e2e: $failed script(s) FAILED" && exit 1; }
echo "e2e: all ${#RESULTS[@]} script(s) passed"
