# shellcheck shell=bash
# Checks given to t_check as `eval '...'` are single-quoted on purpose (they
# expand when the row runs).
# shellcheck disable=SC2016,SC2154
# e2e/k8s/deployapi.sh: the API is not trusted to widen by accident (issue
# 25), the rows of deploygrants.sh's part "the API down and back" (sourced
# after it; its helpers), on the warm pod with one grant applied:
#   - kube-apiserver stopped by its PID (e2e/k8s/control.sh): the agent's
#     /readyz says the watch is stale, /metrics netguard_agent_kube_watch_up
#     0; nothing widens: a new grant cannot be written, its destination and
#     a forbidden one stay refused; the grant applied last stays;
#   - started again with the same flags: the change written right after it
#     answers (the old grant withdrawn, a new one granted) is applied within
#     a bound the row names, /readyz and /metrics current again, the agent
#     container Ready again.
# While the API is down nothing goes through kubectl exec (the API carries
# it): the checks enter warm's sandbox container from the node (nsenter
# into its namespaces, as the seed's layer-one exec does, as its user).

# agent_get PATH: the agent's HTTP endpoint on the node's loopback.
agent_get() { kc_in "$KC_NODE" curl -sS -m 3 "http://127.0.0.1:9617$1"; }
readyz_says() { agent_get /readyz 2>/dev/null | grep -q -- "$1"; }
watch_up_is() { agent_get /metrics 2>/dev/null | grep -qx "netguard_agent_kube_watch_up $1"; }
# in_warm CMD...: CMD in warm's sandbox container (WARM_PID), from the node.
in_warm() { kc_in "$KC_NODE" nsenter -t "$WARM_PID" -n -m -p -i -u -S 65534 -G 65534 -- "$@"; }
direct_refused() { in_warm curl -m 2 -sSv "http://$1:$2/" 2>&1 | grep -q "Connection refused"; }
direct_reach() { in_warm curl -m 2 -sS "http://$GR_A:443/" 2>&1 | grep -q storage-ok; }
direct_echo() { [ "$(echo echo-ok | in_warm nc -w 2 "$GR_E" 443 2>/dev/null)" = echo-ok ]; }
caught_up() { direct_refused "$GR_A" 443 && direct_echo; }

dp_api_rows() {
	local rc t0
	k -n "$SB" annotate pod warm "netguard.boxxkite.io/egress=tcp://$GR_A:443" --overwrite >/dev/null
	t_check "before: the grant tcp://$GR_A:443 applied (the last one the agent reads before the API goes)" \
		kc_wait 30 grant_reach
	WARM_PID=$(container_pid "$SB" warm sandbox)
	t_check "before: the agent's /readyz says the watch is current" readyz_says "ok kube: the watch"

	t0=$(kc_ms)
	t_check "kube-apiserver stopped by its PID (TERM; KILL after 10 s)" kc_apiserver_stop
	kc_say "kube-apiserver stopped in $(($(kc_ms) - t0)) ms"
	rc=0 && within_ms 30000 readyz_says "FAIL kube: the watch is stale" || rc=$?
	gr_row "API down: /readyz says the watch is stale, $WITHIN_MS ms after the stop (bound 30 s; stale after 5 s)" \
		"$rc" "$(agent_get /readyz 2>&1)"
	t_check "API down: /metrics netguard_agent_kube_watch_up 0" watch_up_is 0
	t_check "API down: a new grant cannot be written (kubectl annotate tcp://$GR_E:443: the connection is refused)" \
		has "was refused" eval 'KC_KUBECTL_TIMEOUT=5s k -n "$SB" annotate pod warm "netguard.boxxkite.io/egress=tcp://$GR_E:443" --overwrite'
	t_check "API down: nothing widens: the new grant's destination tcp://$GR_E:443 stays refused" direct_refused "$GR_E" 443
	t_check "API down: ... a forbidden destination (10.20.0.5:80) stays refused" direct_refused "$KC_STOR_IP" 80
	t_check "API down: the last applied grant (tcp://$GR_A:443) stays" direct_reach

	t0=$(kc_ms)
	t_check "kube-apiserver started again with the same flags: ready" kc_apiserver_restart
	kc_say "kube-apiserver ready $(($(kc_ms) - t0)) ms after the start"
	# The session's change, written as soon as the API takes it.
	k -n "$SB" annotate pod warm "netguard.boxxkite.io/egress=tcp://$GR_E:443" --overwrite >/dev/null
	rc=0 && within_ms 120000 caught_up || rc=$?
	# The agent reaches the API through the kubernetes Service: the apiserver
	# took its endpoint away when it stopped, kube-proxy restores it once its
	# own watch is back (client-go backoff: up to 30 s, jittered), and the
	# agent retries on its backoff (1 s doubling to 30 s, README).
	gr_row "catch-up: the change written after the restart (tcp://$GR_A:443 withdrawn, tcp://$GR_E:443 granted) applied in $WITHIN_MS ms (bound 120 s: kube-proxy's and the agent's reconnect backoffs)" \
		"$rc"
	t_check "API back: /readyz current again, /metrics netguard_agent_kube_watch_up 1" \
		kc_wait 30 eval 'readyz_says "ok kube: the watch" && watch_up_is 1'
	t_check "API back: the agent container Ready again (its /readyz probe)" kc_wait 60 agent_ready
	t_check "Event NetguardGrantsUpdated for the change listed by kubectl" \
		kc_wait 30 pod_event warm NetguardGrantsUpdated "grants now: tcp://$GR_E:443; withdrawn: tcp://$GR_A:443"
}
