#!/usr/bin/env bash
# audit: enforce.auditNamespaces (issue 21 item 2), with real traffic through
# the runtime-exact chain (bridge + host-local + boxxkite-netguard):
#   - a pod in an audit namespace gets the full ruleset, but what it would
#     refuse (egress, ingress, a packet socket's frame, the host side) is let
#     through and counted in *_would_deny counters, never in *_denied;
#   - cloud metadata is refused in audit too (socket and packet socket), and
#     counted as denied;
#   - audit is never silent: the decision log ("mode": "audit"), the table
#     comment ("AUDIT"), CHECK (the audit policy is what it checks against),
#     verify (a FAIL row "audit: not enforcing"), status, stats;
#   - a pod in both lists, or one that opts in by annotation, is enforced.
# A control pod (not selected) reaches every listener used here, so each
# "connects" below is the audit table letting it through.
# Ends with "N passed, N failed"; exit status non-zero on failure.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=e2e/lib/verify.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/verify.sh"

section() { printf '\n== %s\n' "$1"; }
info() { printf '   info: %s\n' "$*"; }

[[ $(id -u) -eq 0 ]] || { echo "audit.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nga-}"
DROP_MS=300 # a probe that must not connect waits this long before "timeout"
AUDIT_NS=staging BOTH_NS=both

POD_CONFLIST=$(conf_variant audit '
e["enforce"]["namespaces"].append("'"$BOTH_NS"'")
e["enforce"]["auditNamespaces"] = ["'"$AUDIT_NS"'", "'"$BOTH_NS"'"]')
export POD_CONFLIST
CONF=$POD_CONFLIST
LOG=$W_TMP/netguard.log
# A node with an agent installed has the state dir: ADD records every pod there.
mkdir -p "$W_TMP/state"

counter() { # POD FAMILY TABLE NAME: packets counted
	pod_exec "$1" nft list counter "$2" "$3" "$4" | sed -n 's/.*packets \([0-9]*\).*/\1/p'
}
inet_counter() { counter "$1" inet boxxkite_netguard "$2"; }
has_counter() { pod_exec "$1" nft list counter inet boxxkite_netguard "$2" >/dev/null 2>&1; }
grew() { # POD NAME BEFORE: the counter is above BEFORE
	local n
	n=$(inet_counter "$1" "$2")
	((n > $3)) || { echo "$2: $n packets, not above $3" && return 1; }
}
# log_mode POD MODE: the pod's ADD line in the decision log says mode MODE.
log_mode() {
	"$PY" -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
add = [l for l in lines if l.get("verb") == "ADD" and l.get("pod_name") == sys.argv[2]
       and l.get("decision") == "enforced"]
assert add, "no enforced ADD line for %s" % sys.argv[2]
assert add[-1].get("mode") == sys.argv[3], add[-1]
print(add[-1]["mode"], "-", add[-1]["reason"])' "$LOG" "$1" "$2"
}
comment_has() { # POD TEXT: the table comment contains TEXT
	local l
	l=$(pod_exec "$1" nft list table inet boxxkite_netguard | grep -m1 comment)
	grep -qF -- "$2" <<<"$l" || { echo "$l" && return 1; }
}

section "a pod in an audit namespace"
t_check "ADD aud ($AUDIT_NS)" pod_add aud "$AUDIT_NS" '{}'
t_check "ADD enf ($ENFORCED_NS)" pod_add enf "$ENFORCED_NS" '{}'
t_check "ADD both (in enforce.namespaces and enforce.auditNamespaces)" pod_add both "$BOTH_NS" '{}'
t_check "ADD optin ($AUDIT_NS, opts in by annotation)" pod_add optin "$AUDIT_NS" \
	'{"netguard.boxxkite.io/enforce":"true"}'
pod_add plain default >/dev/null # not selected: the control
for p in aud enf plain; do pod_listen "$p" 9090; done
t_check "decision log: aud mode audit" log_mode aud audit
t_check "decision log: enf mode enforce" log_mode enf enforce
t_check "decision log: both mode enforce (enforce.namespaces wins)" log_mode both enforce
t_check "decision log: optin mode enforce (the pod asked)" log_mode optin enforce
t_check "aud: table comment says AUDIT" comment_has aud "AUDIT"
t_check_not "enf: table comment does not" comment_has enf "AUDIT"
t_check "aud: CHECK passes (the audit policy is what it checks)" pod_check aud
t_check "aud: counters egress_would_deny, ingress_would_deny, source_would_deny" \
	eval 'has_counter aud egress_would_deny && has_counter aud ingress_would_deny && has_counter aud source_would_deny'
t_check_not "aud: no egress_denied counter (nothing is denied there)" has_counter aud egress_denied

section "let through and counted"
E0=$(inet_counter aud egress_would_deny)
expect "aud: $FORBID4:443 (not allowed) connects" connected 1000 pod:aud -- tcp "$FORBID4" 443 2000
expect "aud: [$FORBID6]:443 connects" connected 1000 pod:aud -- tcp "$FORBID6" 443 2000
t_check "aud: egress_would_deny counted them" grew aud egress_would_deny "$E0"
expect "enf: $FORBID4:443 refused (same policy, enforced)" refused 1000 pod:enf -- tcp "$FORBID4" 443 2000
expect "both: $FORBID4:443 refused" refused 1000 pod:both -- tcp "$FORBID4" 443 2000
expect "optin: $FORBID4:443 refused" refused 1000 pod:optin -- tcp "$FORBID4" 443 2000
expect "control: plain reaches $FORBID4:443" connected 1000 pod:plain -- tcp "$FORBID4" 443 2000
I0=$(inet_counter aud ingress_would_deny)
expect "aud: stranger -> :9090 (not an ingress port) connects" connected 1000 peer:stranger -- tcp "$(pod_ip aud 4)" 9090 2000
t_check "aud: ingress_would_deny counted it" grew aud ingress_would_deny "$I0"
expect "enf: stranger -> :9090 dropped" timeout - peer:stranger -- tcp "$(pod_ip enf 4)" 9090 "$DROP_MS"
expect "aud: allowed storage $STORE4:443 connects" connected 1000 pod:aud -- tcp "$STORE4" 443 2000

section "cloud metadata: refused in audit too"
M0=$(inet_counter aud metadata_denied)
expect "aud: metadata $MD4:80 refused" refused 1000 pod:aud -- tcp "$MD4" 80 2000
expect "aud: metadata [$MD6]:80 refused" refused 1000 pod:aud -- tcp "$MD6" 80 2000
t_check "aud: metadata_denied counted them" grew aud metadata_denied "$M0"
# A packet socket bypasses the inet table: the guard keeps a metadata chain
# that still drops (its rules: test/unit/nft/test_render.c test_audit).
t_check "aud: the guard has refuse_raw_metadata and raw_would_deny" \
	eval 'pod_exec aud nft list chain netdev boxxkite_netguard refuse_raw_metadata >/dev/null &&
	pod_exec aud nft list counter netdev boxxkite_netguard raw_would_deny >/dev/null'

section "never silent: verify, status, stats"
run_verify aud --netns "$(pod_netns_path aud)" --config "$CONF" --annotations '{}' --denied-probe "$FORBID4:443"
t_check "verify aud: row 'audit: not enforcing' FAILs" vrow aud "audit: not enforcing" FAIL "auditNamespaces"
t_check_not "verify aud: does not exit 0" rc_is aud 0
run_verify enf --netns "$(pod_netns_path enf)" --config "$CONF" --annotations '{}' --denied-probe "$FORBID4:443"
t_check_not "verify enf: no audit row" vrow enf "audit: not enforcing" FAIL
status_audit() {
	local out
	out=$("$NG_BIN" status --state-dir "$W_TMP/state" 2>&1) || true
	if ! grep -q "in AUDIT" <<<"$out" || ! grep -qE "$AUDIT_NS/aud +AUDIT" <<<"$out"; then
		echo "$out" && return 1
	fi
	# Its exit status says whether CHECK could run (no agent here): not this row's business.
	"$NG_BIN" status --json --state-dir "$W_TMP/state" >"$W_TMP/status.json" || true
	"$PY" - "$W_TMP/status.json" <<<'
import json, sys
pods = {p["pod"]: p for p in json.load(open(sys.argv[1]))["pods"]}
assert pods["aud"].get("mode") == "audit", pods["aud"]
assert pods["enf"].get("mode") == "enforce", pods["enf"]
print("status --json: aud audit, enf enforce")'
}
t_check "status: aud shown as AUDIT (table and --json)" status_audit
stats_would() {
	"$NG_BIN" stats --netns "$(pod_netns_path aud)" | "$PY" -c '
import json, sys
s = json.load(sys.stdin)
assert s["would_deny"]["egress"]["packets"] > 0, s
assert "egress" not in s["denied"], s
print(s["would_deny"])'
}
t_check "stats aud: would_deny.egress > 0, no denied.egress" stats_would

section "DEL"
for p in aud enf both optin plain; do t_check "DEL $p" pod_del "$p"; done
t_check "no table left anywhere in the world" test -z "$(world_tables)"

t_summary
