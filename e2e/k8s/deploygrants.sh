# shellcheck shell=bash
# Checks given to t_check as `eval '...'` are single-quoted on purpose (they
# expand when the row runs); `timed VAR` sets VAR_rc, VAR_ms, VAR_out.
# shellcheck disable=SC2016,SC2154,SC2034
# e2e/k8s/deploygrants.sh: per-session grants in the real cluster (issue
# 25), the rows of e2e/k8s/deploy.sh's part "per-session grants" (sourced
# after deployfns.sh; its variables), with deploy/ installed and its agent
# watching the API through its own ServiceAccount and RBAC:
#   - a warm pod that declares the readiness gate, created without grants:
#     the condition netguard.boxxkite.io/enforced True, the pod Ready, the
#     grant's destination refused;
#   - `kubectl annotate` the grant: reached within 2 s; removed: refused
#     within 2 s;
#   - a grant outside the envelope: refused, an Event says why, the pod
#     keeps its grant; the Events listed with kubectl.
# (The live connection cut, the API down and the drift/condition sequence
# are e2e/grants.sh's rows, against a fake API in network namespaces.)

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
# grant_reach / grant_refused: the grant's listener (tcp://10.30.0.5:443) from warm.
grant_reach() { kx "$SB" warm sandbox curl -m 2 -sS http://10.30.0.5:443/ 2>&1 | grep -q storage-ok; }
# (-v: curl's own message says "Couldn't connect"; the verbose line names the errno)
grant_refused() { kx "$SB" warm sandbox curl -m 2 -sSv http://10.30.0.5:443/ 2>&1 | grep -q "Connection refused"; }
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
# gr_row LABEL RC: one row (assert.sh's counters).
gr_row() {
	if [ "$2" = 0 ]; then
		t_ok && _row "$1" "" PASS && _t_record PASS "$1"
	else
		t_bad && _row "$1" "" FAIL && _t_record FAIL "$1"
	fi
}
pod_event() { # POD REASON: kubectl lists the Event
	k -n "$SB" get events --field-selector "involvedObject.name=$1,reason=$2" -o name 2>/dev/null | grep -q .
}

dp_grants_rows() {
	local t0 exec_ms rc
	warm_pod
	k apply -f "$W_TMP/warm.yaml" >/dev/null
	t_check "a warm pod with the readiness gate: condition netguard.boxxkite.io/enforced True" kc_wait 90 cond_true warm
	t_check "... and Ready (the gate passed)" kc_wait 60 pod_ready "$SB" warm
	t_check "Event NetguardEnforced listed by kubectl" kc_wait 30 pod_event warm NetguardEnforced
	t_check "no grant yet: tcp://10.30.0.5:443 refused" grant_refused
	t0=$(kc_ms)
	kx "$SB" warm sandbox true >/dev/null 2>&1
	exec_ms=$(($(kc_ms) - t0))
	k -n "$SB" annotate pod warm netguard.boxxkite.io/egress=tcp://10.30.0.5:443 >/dev/null
	rc=0 && within_ms $((2000 + exec_ms)) grant_reach || rc=$?
	gr_row "kubectl annotate the grant: reached in $WITHIN_MS ms (bound 2 s + one exec, $exec_ms ms)" "$rc"
	t_check "Event NetguardGrantsUpdated listed by kubectl" kc_wait 30 pod_event warm NetguardGrantsUpdated
	k -n "$SB" annotate pod warm netguard.boxxkite.io/egress=tcp://10.30.0.5:8443 --overwrite >/dev/null
	t_check "a grant outside the envelope (:8443): Event NetguardGrantRefused" kc_wait 30 pod_event warm NetguardGrantRefused
	t_check "... the pod keeps its grant" grant_reach
	k -n "$SB" annotate pod warm netguard.boxxkite.io/egress- >/dev/null
	rc=0 && within_ms $((2000 + exec_ms)) grant_refused || rc=$?
	gr_row "the annotation removed: refused in $WITHIN_MS ms (bound 2 s + one exec)" "$rc"
	t_check "condition True again, naming no grants" \
		kc_wait 30 eval 'pod_field "$SB" warm "{.status.conditions[?(@.type==\"netguard.boxxkite.io/enforced\")].message}" | grep -q "grants: none$"'
	k -n "$SB" get events --field-selector involvedObject.name=warm -o custom-columns=REASON:.reason,MESSAGE:.message \
		--no-headers 2>/dev/null | sed 's/^/    | /' | head -10 >&"$KC_OUT" || true
	k delete -f "$W_TMP/warm.yaml" --wait=true --timeout=60s >/dev/null 2>&1
}
