# shellcheck shell=bash
# Checks given to t_check as `eval '...'` are single-quoted on purpose (they
# expand when the row runs); `timed VAR` sets VAR_rc, VAR_ms, VAR_out.
# shellcheck disable=SC2016,SC2154,SC2034
# e2e/k8s/deploygrants.sh: per-session grants in the real cluster (issue
# 25), the rows of e2e/k8s/deploy.sh's part "per-session grants" (sourced
# after deployfns.sh; its variables), with deploy/ installed and its agent
# (--repair) watching the API through its own ServiceAccount and RBAC:
#   - a warm pod that declares the readiness gate, created without grants:
#     never Ready before the condition netguard.boxxkite.io/enforced is
#     True (a kubectl watch from before its creation), the grant's
#     destination refused;
#   - `kubectl annotate` a grant: reached within 2 s; a grant outside the
#     envelope: refused, an Event says why, the pod keeps its grant;
#   - a second grant (the echo server) and a live connection under it
#     (`kubectl exec -i -- curl telnet://`); the annotation removed: both
#     refused within 2 s, the live connection reset at its next send (the
#     agent deleted its conntrack entry), the Event counts the flow cut;
#   - drift (the pod's inet table deleted from the node, as a process with
#     NET_ADMIN in the pod could): the condition False and the pod not
#     Ready, repaired: True and Ready again (the kubectl watch), the Events
#     NetguardDrift and NetguardRepaired listed with kubectl;
#   - the API down and back (deployapi.sh).
# Each deadline is a correctness bound, named in its row with the time taken.

GR_A=$KC_STOR_GRANT_IP # :443, the HTTP listener (storage-ok)
GR_E=$KC_STOR_ECHO_IP  # :443, the echo server; both in the envelope tcp://10.30.0.0/16:443

# warm_pod: the sandbox example renamed `warm`, without its grant, with
# the readiness gate.
warm_pod() {
	"$DP_PY" - "$W_TMP/sandbox.yaml" >"$W_TMP/warm.yaml" <<'PY'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
pod = [d for d in docs if d and d.get("kind") == "Pod"][0]
pod["metadata"]["name"] = "warm"
pod["metadata"]["annotations"] = {}
pod["spec"]["readinessGates"] = [{"conditionType": "netguard.boxxkite.io/enforced"}]
print(yaml.safe_dump(pod))
PY
}
# gated_cond POD: the status of our condition.
gated_cond() { pod_field "$SB" "$1" '{.status.conditions[?(@.type=="netguard.boxxkite.io/enforced")].status}'; }
cond_true() { [ "$(gated_cond "$1")" = True ]; }
# From warm's sandbox container (kubectl exec): the grant's listener reached;
# a connect to IP:443 refused (curl -v names the errno: a reject's reset);
# a line sent through the echo server back.
grant_reach() { kx "$SB" warm sandbox curl -m 2 -sS "http://$GR_A:443/" 2>&1 | grep -q storage-ok; }
refused_at() { kx "$SB" warm sandbox curl -m 2 -sSv "http://$1:443/" 2>&1 | grep -q "Connection refused"; }
grant_refused() { refused_at "$GR_A"; }
echo_reach() { [ "$(kx "$SB" warm sandbox sh -c "echo echo-ok | nc -w 2 $GR_E 443" 2>/dev/null)" = echo-ok ]; }
# within_ms MS CMD...: CMD holds within MS ms (tried every 100 ms); sets
# WITHIN_MS to how long it took.
within_ms() {
	local ms=$1 t0
	shift
	t0=$(kc_ms)
	while :; do
		"$@" >/dev/null 2>&1 && { WITHIN_MS=$(($(kc_ms) - t0)) && return 0; }
		(($(kc_ms) - t0 > ms)) && { WITHIN_MS=$(($(kc_ms) - t0)) && return 1; }
		sleep 0.1
	done
}
# gr_row LABEL RC [WHAT]: one row (assert.sh's counters); WHAT shown on failure.
gr_row() {
	if [ "$2" = 0 ]; then
		t_ok && _row "$1" "" PASS && _t_record PASS "$1"
	else
		t_bad && _row "$1" "" FAIL && _t_record FAIL "$1"
		[ -z "${3:-}" ] || printf '%s\n' "$3" | head -20 | sed 's/^/    | /'
	fi
}
pod_event() { # POD REASON [MESSAGE-REGEX]: kubectl lists such an Event
	k -n "$SB" get events --field-selector "involvedObject.name=$1,reason=$2" -o 'jsonpath={range .items[*]}{.message}{"\n"}{end}' \
		2>/dev/null | grep -q -- "${3:-.}"
}

# The warm pod's conditions as a kubectl watch sees each version of it:
# "VERSION ENFORCED/REASON ready=READY" (kubectl's own output: a change
# that lasted milliseconds is a line too).
GW_FMT='{.metadata.resourceVersion} {.status.conditions[?(@.type=="netguard.boxxkite.io/enforced")].status}/{.status.conditions[?(@.type=="netguard.boxxkite.io/enforced")].reason} ready={.status.conditions[?(@.type=="Ready")].status}{"\n"}'
watch_start() { # FILE
	KC_KUBECTL_TIMEOUT=600s kc_kubectl_bg /dev/null "$1" -n "$SB" get pods --field-selector metadata.name=warm -w \
		-o "jsonpath=$GW_FMT"
	GW_PID=$KC_KUBECTL_PID
}
watch_stop() {
	kc_stop_pid "${GW_PID:-}"
	GW_PID=
}
# watch_saw FILE REGEX...: the watch's lines match the REGEXes in this
# order (one line may match several in a row).
watch_saw() {
	local f=$1
	shift
	"$DP_PY" - "$f" "$@" <<'PY'
import re, sys
want = sys.argv[2:]
for line in open(sys.argv[1]):
    while want and re.search(want[0], line):
        want.pop(0)
sys.exit(1 if want else 0)
PY
}
# ready_only_enforced FILE: every version with Ready True has the condition True.
ready_only_enforced() { grep -q 'ready=True' "$1" && ! grep 'ready=True' "$1" | grep -qv ' True/'; }

# The live connection: kubectl exec -i into warm's sandbox container, curl
# in telnet mode to the echo server (it prints what comes back, and the
# errno when the connection breaks), fed line by line through a FIFO.
live_open() {
	LIVE=$W_TMP/live
	rm -f "$LIVE.in" "$LIVE.out"
	mkfifo "$LIVE.in" || return 1
	KC_KUBECTL_TIMEOUT=0 kc_kubectl_bg "$LIVE.in" "$LIVE.out" -n "$SB" exec -i warm -c sandbox -- \
		curl -sS -N "telnet://$GR_E:443"
	LIVE_PID=$KC_KUBECTL_PID
	exec {LIVE_FD}>"$LIVE.in"
}
# live_send LINE: a write to a FIFO whose reader is gone must not SIGPIPE us.
live_send() { (trap '' PIPE && echo "$1" >&"$LIVE_FD") 2>/dev/null; }
live_says() { grep -q -- "$1" "$LIVE.out" 2>/dev/null; }
live_close() {
	if [ -n "${LIVE_FD:-}" ]; then exec {LIVE_FD}>&-; fi
	LIVE_FD=
	kc_stop_pid "${LIVE_PID:-}"
	LIVE_PID=
}
# dp_grants_stop: what this part may have left running (deploy.sh's exit).
dp_grants_stop() {
	live_close
	watch_stop
}

dp_grants_rows() {
	local t0 exec_ms rc pause
	warm_pod
	watch_start "$W_TMP/warm.watch"
	k apply -f "$W_TMP/warm.yaml" >/dev/null
	t_check "a warm pod with the readiness gate: condition netguard.boxxkite.io/enforced True" kc_wait 90 cond_true warm
	t_check "... and Ready (the gate passed)" kc_wait 60 pod_ready "$SB" warm
	kc_wait 10 grep -q 'True/Enforced ready=True' "$W_TMP/warm.watch" >/dev/null
	t_check "... never Ready before: each version the kubectl watch saw with Ready True has the condition True" \
		ready_only_enforced "$W_TMP/warm.watch"
	watch_stop
	t_check "Event NetguardEnforced listed by kubectl" kc_wait 30 pod_event warm NetguardEnforced
	t_check "no grant yet: tcp://$GR_A:443 refused" grant_refused

	# --- a grant opens; one outside the envelope is refused ------------------------
	t0=$(kc_ms)
	kx "$SB" warm sandbox true >/dev/null 2>&1
	exec_ms=$(($(kc_ms) - t0))
	k -n "$SB" annotate pod warm "netguard.boxxkite.io/egress=tcp://$GR_A:443" >/dev/null
	rc=0 && within_ms $((2000 + exec_ms)) grant_reach || rc=$?
	gr_row "grant open: kubectl annotate tcp://$GR_A:443, reached in $WITHIN_MS ms (bound 2 s + one exec, $exec_ms ms)" "$rc"
	t_check "Event NetguardGrantsUpdated listed by kubectl" kc_wait 30 pod_event warm NetguardGrantsUpdated
	k -n "$SB" annotate pod warm "netguard.boxxkite.io/egress=tcp://$GR_A:8443" --overwrite >/dev/null
	t_check "a grant outside the envelope (:8443): Event NetguardGrantRefused" kc_wait 30 pod_event warm NetguardGrantRefused
	t_check "... the pod keeps its grant" grant_reach

	# --- a live connection under a grant; the grants withdrawn: refused and cut ----
	k -n "$SB" annotate pod warm "netguard.boxxkite.io/egress=tcp://$GR_A:443,tcp://$GR_E:443" --overwrite >/dev/null
	rc=0 && within_ms $((2000 + exec_ms)) echo_reach || rc=$?
	gr_row "a second grant, tcp://$GR_E:443 (an echo server): reached in $WITHIN_MS ms (bound 2 s + one exec)" "$rc"
	live_open
	live_send live-1
	t_check "a live connection under it: kubectl exec -i -c sandbox -- curl telnet://$GR_E:443 echoes a line" \
		kc_wait 30 live_says '^live-1$'
	t0=$(kc_ms)
	k -n "$SB" annotate pod warm netguard.boxxkite.io/egress- >/dev/null
	rc=0 && within_ms $((2000 + exec_ms)) refused_at "$GR_E" || rc=$?
	gr_row "grant close: the annotation removed, tcp://$GR_E:443 refused in $WITHIN_MS ms (bound 2 s + one exec)" "$rc"
	t_check "... and tcp://$GR_A:443 refused" grant_refused
	live_send live-2
	rc=0 && within_ms 5000 live_says 'Connection reset by peer' || rc=$?
	gr_row "... the live connection cut: reset at its next send, $(($(kc_ms) - t0)) ms after the removal (bound 5 s after the send)" \
		"$rc" "$(cat "$LIVE.out" 2>/dev/null)"
	t_check_not "... nothing sent after the withdrawal came back" live_says '^live-2$'
	live_close
	t_check "Event NetguardGrantsUpdated: tcp://$GR_E:443 withdrawn, its live flow cut (conntrack)" \
		kc_wait 30 pod_event warm NetguardGrantsUpdated "withdrawn: .*$GR_E:443.* ([1-9][0-9]* live flow"
	t_check "condition True again, naming no grants" \
		kc_wait 30 eval 'pod_field "$SB" warm "{.status.conditions[?(@.type==\"netguard.boxxkite.io/enforced\")].message}" | grep -q "grants: none$"'

	# --- drift: not Ready until repaired -------------------------------------------
	pause=$(pause_pid "$SB" warm)
	watch_start "$W_TMP/drift.watch"
	kc_wait 30 grep -q 'True/Enforced ready=True' "$W_TMP/drift.watch" >/dev/null
	t0=$(kc_ms)
	t_check "drift: the pod's inet table deleted from the node (nsenter into its netns: what NET_ADMIN in the pod could)" \
		nsenter --net="/proc/$pause/ns/net" -- nft delete table inet boxxkite_netguard
	rc=0 && within_ms 60000 watch_saw "$W_TMP/drift.watch" 'False/Drift' 'ready=False' 'True/Enforced ready=True' || rc=$?
	gr_row "drift: condition False (Drift), the pod not Ready; repaired: True and Ready again in $WITHIN_MS ms (bound 60 s)" \
		"$rc" "$(cat "$W_TMP/drift.watch")"
	watch_stop
	t_check "Events NetguardDrift (naming what differed) and NetguardRepaired listed by kubectl" \
		kc_wait 30 eval 'pod_event warm NetguardDrift "inet boxxkite_netguard is missing" && pod_event warm NetguardRepaired'
	t_check "repaired: the table is back, the metadata server refused again" \
		eval 'pod_tables "$pause" | grep -q "inet boxxkite_netguard" && kx "$SB" warm sandbox curl -m 2 -sSv http://169.254.169.254/ 2>&1 | grep -q "Connection refused"'

	dp_api_rows

	k -n "$SB" get events --field-selector involvedObject.name=warm -o custom-columns=REASON:.reason,MESSAGE:.message \
		--no-headers 2>/dev/null | grep Netguard | cut -c1-150 | sed 's/^/    | /' >&"$KC_OUT" || true
	k delete -f "$W_TMP/warm.yaml" --wait=true --timeout=60s >/dev/null 2>&1
}
