# shellcheck shell=bash
# e2e/lib/assert.sh: counters, rows, probes and the summary line: sourced by e2e/lib.sh (see its header); not a test script.

# ---- assertions ---------------------------------------------------------------

t_ok() { T_PASS=$((T_PASS + 1)); }
t_bad() { T_FAIL=$((T_FAIL + 1)); }

# t_check DESC CMD...: passes when CMD succeeds. CMD runs in this shell (so
# pod_add and friends keep their state); its output is shown on failure.
t_check() { _t_run 0 "$@"; }
# t_check_not DESC CMD...: passes when CMD fails.
t_check_not() { _t_run 1 "$@"; }

_t_run() {
	local want_fail=$1 desc=$2 rc=0 out=${W_TMP:-/tmp}/t_check.out
	shift 2
	"$@" >"$out" 2>&1 || rc=$?
	if (((rc != 0) == want_fail)); then
		t_ok
		_row "$desc" "" PASS
		_t_record PASS "$desc"
	else
		t_bad
		_row "$desc" "" FAIL
		_t_record FAIL "$desc"
		sed 's/^/    | /' "$out" | head -20 || true # (a long output: SIGPIPE, not an exit)
	fi
	rm -f "$out"
	return 0
}

# poll MS CMD...: CMD succeeds within MS milliseconds (tried every 20 ms,
# quietly). The library's own waits use it: a test script may define a
# `within` of its own (e2e/ops.sh, e2e/observability.sh, e2e/install.sh do).
poll() {
	local ms=$1 t0
	shift
	t0=$(date +%s%N)
	until "$@" >/dev/null 2>&1; do
		(($(date +%s%N) - t0 < ms * 1000000)) || return 1
		sleep 0.02
	done
}

# within MS CMD...: CMD succeeds within MS milliseconds (tried every 50 ms,
# and once more at the end). For what the agent or the kernel does on its
# own schedule: a fixed sleep is either slow or, on a loaded machine, flaky.
within() {
	local ms=$1 t0
	shift
	t0=$(date +%s%N)
	while (($(date +%s%N) - t0 < ms * 1000000)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	"$@"
}

# Without a middle column a long label may use its width (same layout).
_row() {
	if [[ -z $2 ]]; then
		printf '%-79s %s\n' "$1" "$3"
	else
		printf '%-48s %-30s %s\n' "$1" "$2" "$3"
	fi
}

# E2E_RESULTS_FILE (set by scripts/mutants.sh): one "PASS|FAIL<TAB>label"
# line per test, so that a caller can tell which named tests failed.
_t_record() { [[ -z ${E2E_RESULTS_FILE:-} ]] || printf '%s\t%s\n' "$1" "$2" >>"$E2E_RESULTS_FILE"; }

# expect LABEL WANT MAX_MS WHERE -- NPROBE-ARGS...
#   WANT    probe verdict (connected, refused, timeout, answered, ...),
#           optionally WANT:TEXT that must appear in the probe's line
#   MAX_MS  upper bound on the elapsed time, or - for none
#   WHERE   pod:NAME, peer:NAME or node
# Prints one aligned row: label, what happened, PASS/FAIL.
expect() {
	local label=$1 want=$2 max=$3 where=$4 line kind ms text verdict=PASS
	shift 4
	[[ $1 == -- ]] && shift
	case $where in
	# A failed probe is an answer, not an error: never let set -e see it.
	pod:*) line=$(pod_exec "${where#pod:}" "$NPROBE" "$@" 2>&1) || true ;;
	peer:*) line=$(peer_exec "${where#peer:}" "$NPROBE" "$@" 2>&1) || true ;;
	node) line=$(node_exec "$NPROBE" "$@" 2>&1) || true ;;
	*) echo "expect: bad WHERE $where" >&2 && return 2 ;;
	esac
	line=${line%%$'\n'*}
	read -r kind ms _ <<<"$line"
	if [[ $kind == answered ]]; then
		read -r _ _ ms text <<<"$line"
		text="answered ${text:-nothing}"
	else
		text=$kind
	fi
	case $kind in
	timeout) text="$text after $(printf '%.0f' "$ms") ms" ;;
	connected | refused | unreachable | denied | answered) text="$text in $(printf '%.2f' "$ms") ms" ;;
	*) text=$line ;;
	esac
	[[ $kind == "${want%%:*}" ]] || verdict=FAIL
	[[ $want != *:* || $line == *"${want#*:}"* ]] || verdict=FAIL
	if [[ $max != - && $verdict == PASS ]] && ! awk -v a="$ms" -v b="$max" 'BEGIN{exit !(a <= b)}'; then
		verdict=FAIL
	fi
	if [[ $verdict == PASS ]]; then t_ok; else t_bad; fi
	_row "$label" "$text" "$verdict"
	_t_record "$verdict" "$label"
	[[ $verdict == PASS ]] || echo "    probe said: $line (wanted $want, max $max ms)"
	return 0
}

# t_summary: the one line every e2e script ends with; non-zero on failure.
# E2E_SUMMARY_FILE (set by scripts/run-e2e.sh) gets the same line.
t_summary() {
	printf '%d passed, %d failed\n' "$T_PASS" "$T_FAIL"
	[[ -z ${E2E_SUMMARY_FILE:-} ]] || printf '%d passed, %d failed\n' "$T_PASS" "$T_FAIL" >"$E2E_SUMMARY_FILE"
	((T_FAIL == 0 && T_PASS > 0))
}

