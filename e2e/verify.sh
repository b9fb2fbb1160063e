#!/usr/bin/env bash
# verify: `boxxkite-netguard verify` against live pods of the namespace world
# (issue 5, part 1). It must pass on an enforced pod and fail, naming why,
# after tampering (a rule added by hand, the table deleted, the metadata rule
# replaced or removed), on a pod that is not enforced, and wherever a metadata
# address answers; `--process` must tell an exec with a namespace of its own
# (layer one) from one sharing the pod's or the node's. Every probe verify
# sends stays in namespaces the world created: the denied probe targets the
# world's forbidden peer, and nothing routes out of the world.
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "verify.sh: needs root (network namespaces)" >&2 && exit 1; }

section() { printf '\n== %s\n' "$1"; }
info() { printf '   info: %s\n' "$*"; }
# shellcheck source=e2e/lib/verify.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/verify.sh"

# rule_handle POD PATTERN: the handle of the egress rule whose text matches.
rule_handle() {
	pod_exec "$1" nft -a list chain inet boxxkite_netguard egress | grep -- "$2" | sed -n 's/.*# handle \([0-9]*\)$/\1/p' | head -1
}

# wait_comm PID NAME [NOT_NETNS]: until PID runs NAME (nsenter and unshare
# exec it), and, when given, its namespace is no longer NOT_NETNS (the file
# of the namespace it was started in).
wait_comm() {
	local pid=$1 name=$2 not=${3:-} want_ns=''
	[[ -n $not ]] && want_ns=$(stat -L -c %i "$not")
	for _ in {1..100}; do
		if [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]]; then
			[[ -z $not ]] && return 0
			[[ $(stat -L -c %i "/proc/$pid/ns/net") != "$want_ns" ]] && return 0
		fi
		sleep 0.02
	done
	echo "process $pid never became $name" >&2
	return 1
}

START=$(date +%s%N)
world_up ngv-
CONF=$W_TMP/net.d/pod-network.conflist
GRANT='{"netguard.boxxkite.io/egress":"10.20.1.0/24:443"}'
DENIED=$FORBID4:443 # a peer of the world that listens: only the pod's table refuses it
MD_ROWS='re:metadata .*'

# ---------------------------------------------------------------------------
section "enforced pod 'web' with a grant, only the CNI's routes (no default route)"
t_check "ADD web (sandboxes, grant $GRANT)" pod_add web "$ENFORCED_NS" "$GRANT"
t_check "CHECK passes on web" pod_check web
WEB=$(pod_netns_path web)
run_verify bare --netns "$WEB" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED"
# ADD takes the node's address from prevResult's gateways; verify reads the
# gateways of the namespace's routes. The world's pods have routes to its
# private ranges via the gateway, and no default route: CHECK passes, so
# verify must too.
t_check "verify: rules match policy without a default route (as CHECK)" \
	vrow bare "layer 2: rules match policy" PASS

# ---------------------------------------------------------------------------
# Default routes (as most primary CNIs give a pod) so that every metadata
# address has a route and meets the table: without one, connect() fails with
# ENETUNREACH before netfilter sees the packet, and verify can only say
# "unreachable".
section "verify passes on the enforced pod (default routes, as most CNIs give)"
pod_default_route web
run_verify pass --netns "$WEB" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED"
t_check "exit status 0" rc_is pass 0
t_check "--json parses, ok=true, pod sandboxes/web" \
	vexpr pass 'd["ok"] is True and d["pod"] == "sandboxes/web" and d["netns"] == "'"$WEB"'"'
t_check "configuration row names the conflist" vrow pass configuration INFO "$CONF"
t_check "layer 2: table present PASS" vrow pass "layer 2: table present" PASS "pod sandboxes/web"
t_check "layer 2: rules match policy PASS (with the grant)" vrow pass "layer 2: rules match policy" PASS identical "$CONF"
t_check "layer 2: host side PASS: on the pod's own peer, identical" \
	vrow pass "layer 2: host side present, matches, on the pod's device" PASS "on $(pod_host_dev web) (ifindex" identical
t_check "every metadata row PASS: refused, metadata_denied moved" \
	vrow pass "$MD_ROWS" PASS refused "metadata_denied +1: by netguard"
t_check "metadata rows: all 10 built-in addresses and the v4-mapped/NAT64 forms" \
	vexpr pass 'sum(r["check"].startswith("metadata ") for r in rows) >= 20'
t_check "metadata rows: each refusal in < 500 ms" \
	vexpr pass 'all(r["ms"] < 500 for r in rows if r["check"].startswith("metadata "))'
for dns in "$DNS4" "[$DNS6]"; do
	for proto in udp tcp; do
		a=${dns#[} && a=${a%]}
		t_check "dns $a ($proto) PASS" vrow pass "dns $a ($proto)" PASS answered
	done
done
t_check "exactly 4 dns rows (2 resolvers x udp/tcp)" vexpr pass 'sum(r["check"].startswith("dns ") for r in rows) == 4'
t_check "denied probe $DENIED PASS (refused)" vrow pass "egress to $DENIED" PASS refused
t_check "deny counters row reports the three categories" \
	vrow pass "deny counters" INFO metadata_denied egress_denied ingress_denied
t_check "no row FAIL, AMBIGUOUS or SKIP" vexpr pass 'all(r["verdict"] in ("PASS", "INFO") for r in rows)'
VERIFY_MS=$(cat "$W_TMP/pass.ms")
MD_MAX=$("$PY" -c 'import json,sys; print("%.3f" % max(r["ms"] for r in json.load(open(sys.argv[1]))["rows"] if r["check"].startswith("metadata ")))' "$W_TMP/pass.json")
info "verify took $VERIFY_MS ms; slowest metadata refusal $MD_MAX ms"

# The text form people read: aligned columns, a verdict line, same status.
text_ok() {
	local out rc=0
	out=$(node_exec "$NG_BIN" verify --netns "$WEB" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED") || rc=$?
	echo "$out"
	((rc == 0)) || return 1
	grep -Eq '^CHECK +VERDICT +DETAIL$' <<<"$out" || return 1
	grep -Eq '^layer 2: table present +PASS +table inet boxxkite_netguard' <<<"$out" || return 1
	[[ $(tail -1 <<<"$out") == "all checks passed" ]]
}
t_check "text output: header, aligned rows, 'all checks passed', exit 0" text_ok

# Without --annotations the grant is not part of the policy: the table holds
# an allow element the config alone does not compile to.
run_verify noann --netns "$WEB" --config "$CONF" --denied-probe "$DENIED"
t_check "without --annotations: exit 1" rc_is noann 1
t_check "...rules match policy FAIL naming the allow_v4 element" \
	vrow noann "layer 2: rules match policy" FAIL "set allow_v4 element"

# ---------------------------------------------------------------------------
section "layer one: --process"
bg_start nsenter --net="$WEB" unshare -n sleep 30
P_EXEC=$BG_PID
# As a sandbox should run: without NET_RAW and NET_ADMIN (see "capabilities").
bg_start nsenter --net="$WEB" setpriv --inh-caps=-net_raw,-net_admin --bounding-set=-net_raw,-net_admin -- sleep 30
P_POD=$BG_PID
bg_start nsenter --net="$(_ns_path "$W_NODE")" sleep 30
P_NODE=$BG_PID
bg_start sleep 30
P_ROOT=$BG_PID
wait_comm "$P_EXEC" sleep "$WEB"
wait_comm "$P_POD" sleep
wait_comm "$P_NODE" sleep
wait_comm "$P_ROOT" sleep

run_verify l1exec --netns "$WEB" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED" --process "$P_EXEC"
t_check "exec with its own empty namespace: exit 0" rc_is l1exec 0
t_check "...layer 1: exec namespace PASS (only lo)" \
	vrow l1exec "layer 1: exec namespace" PASS "of its own" "only lo (down)"
run_verify l1pod --netns "$WEB" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED" --process "$P_POD"
t_check "process in the pod's namespace: exit 1" rc_is l1pod 1
t_check "...layer 1 FAIL: shares the pod's network namespace" \
	vrow l1pod "layer 1: exec namespace" FAIL "shares the pod's network namespace"
run_verify l1node --netns "$WEB" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED" --process "$P_NODE"
t_check "process in the world's node namespace: exit 1" rc_is l1node 1
# (verify runs in the world's node namespace, as on a node: that process
# shares verify's own namespace.)
t_check "...layer 1 FAIL: it runs in the node's namespace" \
	vrow l1node "layer 1: exec namespace" FAIL "runs in the node's network namespace"
run_verify l1root --netns "$WEB" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED" --process "$P_ROOT"
t_check "process in the machine's own namespace: exit 1" rc_is l1root 1
# "the node's network namespace" when /proc/1/ns/net is readable; where it
# is not (some sandboxes), verify falls back to listing what it can use.
t_check "...layer 1 FAIL: the node's namespace (or its interfaces)" \
	vexpr l1root 'any(r["check"] == "layer 1: exec namespace" and r["verdict"] == "FAIL" and ("node\x27s network namespace" in r["detail"] or "can use" in r["detail"]) for r in rows)'
# --pid: the target found from a process in the pod, as on a node.
run_verify bypid --pid "$P_POD" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED"
t_check "--pid (a process in the pod): exit 0, pod sandboxes/web" \
	vexpr bypid 'd["ok"] is True and d["pod"] == "sandboxes/web" and d["netns"] == "/proc/'"$P_POD"'/ns/net"'
t_check "...capabilities row PASS: 1 process, none can use NET_RAW or NET_ADMIN" \
	vrow bypid "layer 2: no process can bypass it" PASS "1 process in the namespace"
for p in "$P_EXEC" "$P_NODE" "$P_ROOT"; do bg_stop "$p"; done

# ---------------------------------------------------------------------------
section "capabilities: who in the pod's namespace could get around the ruleset"
# caps_case OUT: verify against web, as on a node.
caps_case() { run_verify "$1" --netns "$WEB" --config "$CONF" --annotations "$GRANT" --denied-probe "$DENIED"; }
CAPS="layer 2: no process can bypass it"
bg_start nsenter --net="$WEB" sleep 30 # root with the runtime's default capabilities, and more
P_RAW=$BG_PID
wait_comm "$P_RAW" sleep
caps_case capraw
t_check "a root process with NET_RAW and NET_ADMIN: exit 1" rc_is capraw 1
t_check "...FAIL naming it, both capabilities and why" \
	vrow capraw "$CAPS" FAIL "$P_RAW (sleep: NET_RAW, NET_ADMIN)" AF_XDP "delete the tables" "!$P_POD"
bg_stop "$P_RAW"
bg_start nsenter --net="$WEB" setpriv --reuid 65534 --regid 65534 --clear-groups --bounding-set=-net_admin -- sleep 30
P_USER=$BG_PID
wait_comm "$P_USER" sleep
caps_case capuser
t_check "a non-root process, NET_RAW still in its bounding set, no_new_privs off: exit 1" rc_is capuser 1
t_check "...AMBIGUOUS: could gain NET_RAW by exec" \
	vrow capuser "$CAPS" AMBIGUOUS "$P_USER (sleep: NET_RAW)" setuid allowPrivilegeEscalation
bg_stop "$P_USER"
bg_start nsenter --net="$WEB" setpriv --reuid 65534 --regid 65534 --clear-groups --no-new-privs -- sleep 30
P_NNP=$BG_PID
wait_comm "$P_NNP" sleep
caps_case capnnp
t_check "the same with no_new_privs (allowPrivilegeEscalation: false): PASS, 2 processes" \
	vrow capnnp "$CAPS" PASS "2 processes"
bg_stop "$P_NNP"
bg_stop "$P_POD"
# The infra container holds the namespace and runs no pod code (containerd
# gives it the default capabilities). Only the pid the runtime names with
# --sandbox-pid is not counted; a process is never exempt for being the
# oldest or for calling itself pause (issue 13).
t_check "ADD capp" pod_add capp
CAPP=$(pod_netns_path capp)
cp "$(command -v sleep)" "$W_TMP/pause"
start_pause() { bg_start nsenter --net="$CAPP" "$W_TMP/pause" 30 && wait_comm "$BG_PID" pause; }
start_pause
P_PAUSE=$BG_PID
run_verify cappause --netns "$CAPP" --config "$CONF" --denied-probe "$DENIED"
t_check "the oldest process, named pause, with NET_RAW, no --sandbox-pid: counted (FAIL, how to exempt)" \
	vrow cappause "$CAPS" FAIL "$P_PAUSE (pause: NET_RAW" "unless --sandbox-pid names it"
run_verify capsb --netns "$CAPP" --config "$CONF" --denied-probe "$DENIED" --sandbox-pid "$P_PAUSE"
t_check "--sandbox-pid $P_PAUSE: not counted (PASS, named)" \
	vrow capsb "$CAPS" PASS "0 processes" "not counted: $P_PAUSE (pause, --sandbox-pid"
start_pause
P_FAKE=$BG_PID
run_verify capfake --netns "$CAPP" --config "$CONF" --denied-probe "$DENIED" --sandbox-pid "$P_PAUSE"
t_check "another process named pause with NET_RAW: FAIL naming it" \
	vrow capfake "$CAPS" FAIL "$P_FAKE (pause: NET_RAW" "not counted: $P_PAUSE"
run_verify capother --netns "$CAPP" --config "$CONF" --denied-probe "$DENIED" --sandbox-pid 1
t_check "--sandbox-pid of a process outside the namespace exempts nothing" \
	vrow capother "$CAPS" FAIL "$P_PAUSE (pause: NET_RAW" "--sandbox-pid 1 is not in this namespace"
bg_stop "$P_FAKE"
bg_stop "$P_PAUSE"
t_check "DEL capp" pod_del capp

# ---------------------------------------------------------------------------
section "tampering: a rule inserted by hand (metadata accepted before anything)"
t_check "ADD ins" pod_add ins
pod_default_route ins
pod_exec ins nft insert rule inet boxxkite_netguard egress ip daddr "$MD4" accept
# With the packet-socket guard still there, the wire stays shut: the
# metadata connect leaves the policy table and dies at the netdev hook.
run_verify insg --netns "$(pod_netns_path ins)" --config "$CONF" --denied-probe "$DENIED" --timeout 300
t_check "guard intact: metadata $MD4:80 not CONNECTED (dropped on the wire)" \
	vrow insg "metadata $MD4:80" AMBIGUOUS "no answer"
t_check "...rules match policy FAIL naming the unexpected rule" \
	vrow insg "layer 2: rules match policy" FAIL "unexpected rule at position 1 of chain egress:"
# An attacker able to edit the table can remove the guard as well; the
# host-side table (node namespace) still holds the frame.
pod_exec ins nft delete table netdev boxxkite_netguard
run_verify insh --netns "$(pod_netns_path ins)" --config "$CONF" --denied-probe "$DENIED" --timeout 300
t_check "guard gone, host side intact: metadata $MD4:80 not CONNECTED" \
	vrow insh "metadata $MD4:80" AMBIGUOUS "no answer"
t_check "...host side row PASS (on the pod's device, identical)" \
	vrow insh "layer 2: host side present, matches, on the pod's device" PASS "identical"
# And with the host side gone too (root on the node), the hole is open.
node_exec nft delete table netdev "$(pod_host_table ins)"
run_verify ins --netns "$(pod_netns_path ins)" --config "$CONF" --denied-probe "$DENIED"
t_check "...host side row FAIL naming it missing" \
	vrow ins "layer 2: host side present, matches, on the pod's device" FAIL "missing from the node's"
t_check "--json ok=false" vexpr ins 'd["ok"] is False'
t_check "...exit status 1" rc_is ins 1
t_check "...table present still PASS" vrow ins "layer 2: table present" PASS
t_check "...rules match policy FAIL naming the unexpected rule" \
	vrow ins "layer 2: rules match policy" FAIL "unexpected rule at position 1 of chain egress:" "accept"
t_check "...metadata $MD4:80 FAIL (CONNECTED) or AMBIGUOUS" \
	vrow ins "metadata $MD4:80" "FAIL|AMBIGUOUS"
t_check "...metadata $MD4:80 says CONNECTED (the listener answers)" vrow ins "metadata $MD4:80" FAIL CONNECTED
t_check "...metadata [::ffff:$MD4]:80 FAIL CONNECTED" vrow ins "metadata [::ffff:$MD4]:80" FAIL CONNECTED
t_check "...metadata [$MD6]:80 still PASS" vrow ins "metadata [$MD6]:80" PASS refused
t_check_not "...CHECK fails too" pod_check ins

section "an enforced pod whose metadata rule was replaced by an accept"
t_check "ADD mdacc" pod_add mdacc
pod_default_route mdacc
h=$(rule_handle mdacc '@metadata_v4')
t_check "metadata_v4 rule found (handle $h)" test -n "$h"
pod_exec mdacc nft replace rule inet boxxkite_netguard egress handle "$h" ip daddr "$MD4" accept
pod_exec mdacc nft delete table netdev boxxkite_netguard
node_exec nft delete table netdev "$(pod_host_table mdacc)"
run_verify mdacc --netns "$(pod_netns_path mdacc)" --config "$CONF" --denied-probe "$DENIED"
t_check "exit 1" rc_is mdacc 1
t_check "...metadata $MD4:80 FAIL: CONNECTED" vrow mdacc "metadata $MD4:80" FAIL CONNECTED
t_check "...metadata [::ffff:$MD4]:80 FAIL: CONNECTED" vrow mdacc "metadata [::ffff:$MD4]:80" FAIL CONNECTED
# (position 11: loopback, the two source checks, ND and MLD from ::, the
# source routes, established, invalid, then metadata)
t_check "...rules match policy FAIL naming the replacing rule (position 11)" \
	vrow mdacc "layer 2: rules match policy" FAIL "(2 differences)" "unexpected rule at position 11 of chain egress:" accept

section "an enforced pod whose metadata rule was removed (the default deny still refuses)"
t_check "ADD mdrm" pod_add mdrm
pod_default_route mdrm
h=$(rule_handle mdrm '@metadata_v4')
pod_exec mdrm nft delete rule inet boxxkite_netguard egress handle "$h"
run_verify mdrm --netns "$(pod_netns_path mdrm)" --config "$CONF" --denied-probe "$DENIED"
t_check "exit 1" rc_is mdrm 1
t_check "...rules match policy FAIL naming the missing metadata_v4 rule" \
	vrow mdrm "layer 2: rules match policy" FAIL "missing rule 11 of chain egress" metadata_v4
t_check "...metadata $MD4:80 still PASS (refused by the default deny)" vrow mdrm "metadata $MD4:80" PASS refused
t_check "...metadata [$MD6]:80 PASS, by the metadata counter" \
	vrow mdrm "metadata [$MD6]:80" PASS refused "metadata_denied +1"

# ---------------------------------------------------------------------------
# These two answer nothing for some metadata addresses (the world has no
# listener there): a short timeout keeps their AMBIGUOUS rows cheap. They run
# side by side.
section "tampering: the table deleted; and a pod that is not enforced"
t_check "ADD gone" pod_add gone
pod_exec gone nft delete table inet boxxkite_netguard
pod_exec gone nft delete table netdev boxxkite_netguard
node_exec nft delete table netdev "$(pod_host_table gone)"
t_check "ADD plain (namespace default: not selected)" pod_add plain default
# verify_bg OUT ARGS...: run_verify in the background (the binary itself is
# the tracked child, so a signal's cleanup stops it); verify_wait OUT PID.
verify_bg() {
	local out=$W_TMP/$1
	shift
	date +%s%N >"$out.t0"
	bg_start nsenter --net="$(_ns_path "$W_NODE")" "$NG_BIN" verify --json "$@" >"$out.json" 2>"$out.err"
}
verify_wait() {
	local out=$W_TMP/$1 rc=0
	wait "$2" || rc=$?
	echo "$rc" >"$out.rc"
	echo $((($(date +%s%N) - $(cat "$out.t0")) / 1000000)) >"$out.ms"
}
verify_bg gone --netns "$(pod_netns_path gone)" --config "$CONF" --denied-probe "$DENIED" --timeout 300
P1=$BG_PID
verify_bg plain --netns "$(pod_netns_path plain)" --config "$CONF" --denied-probe "$DENIED" --timeout 300
P2=$BG_PID
verify_wait gone "$P1"
verify_wait plain "$P2"
info "verify of a pod without a table took $(cat "$W_TMP/gone.ms") ms (--timeout 300)"

t_check "table deleted: exit 1" rc_is gone 1
t_check "...layer 2: table present FAIL" vrow gone "layer 2: table present" FAIL "no table inet boxxkite_netguard"
t_check "...no rules-match PASS" vexpr gone 'not any(r["check"] == "layer 2: rules match policy" and r["verdict"] == "PASS" for r in rows)'
t_check "...metadata $MD4:80 FAIL: CONNECTED" vrow gone "metadata $MD4:80" FAIL CONNECTED
t_check "...denied probe FAIL: it connected" vrow gone "egress to $DENIED" FAIL connected

t_check "unenforced pod: --json ok=false" vexpr plain 'd["ok"] is False'
t_check "...exit status 1" rc_is plain 1
t_check "...layer 2: table present FAIL" vrow plain "layer 2: table present" FAIL "not protected by netguard"
t_check "...metadata $MD4:80 FAIL: CONNECTED" vrow plain "metadata $MD4:80" FAIL CONNECTED
t_check "...metadata [$MD6]:80 FAIL: CONNECTED" vrow plain "metadata [$MD6]:80" FAIL CONNECTED
t_check "...metadata [::ffff:$MD4]:80 FAIL: CONNECTED" vrow plain "metadata [::ffff:$MD4]:80" FAIL CONNECTED
t_check "...no metadata row PASS by netguard" \
	vexpr plain 'not any("metadata_denied" in r["detail"] for r in rows if r["check"].startswith("metadata "))'
t_check "...denied probe FAIL: it connected" vrow plain "egress to $DENIED" FAIL connected
t_check "...deny counters SKIP (no table)" vrow plain "deny counters" SKIP

# ---------------------------------------------------------------------------
section "usage errors"
# verify runs in the world's node namespace here, so that even a broken
# own-namespace check could only ever probe inside the world.
usage_rc() {
	local rc=0
	node_exec "$NG_BIN" verify "$@" >/dev/null 2>&1 || rc=$?
	[[ $rc == 2 ]] || { echo "exit $rc, wanted 2" && return 1; }
}
bg_start nsenter --net="$(_ns_path "$W_NODE")" sleep 30
P_ONNODE=$BG_PID
wait_comm "$P_ONNODE" sleep
t_check "no target: exit 2" usage_rc
t_check "--netns and --pid both: exit 2" usage_rc --netns "$WEB" --pid "$P_ONNODE"
t_check "--netns not a namespace: exit 2" usage_rc --netns "$CONF"
# The node's own namespace (the one verify runs in) is not a pod: refused
# before any probe.
t_check "--pid of a process on the node itself: exit 2" usage_rc --pid "$P_ONNODE"
bg_stop "$P_ONNODE"

t_check "nothing of ours left in the pods' processes" test -z "$(ip netns pids "$(pod_ns web)")"
info "wall time so far $((($(date +%s%N) - START) / 1000000)) ms"
t_summary
