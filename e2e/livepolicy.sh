#!/usr/bin/env bash
# livepolicy: the platform's entry changed under running pods (issue 21 item
# 1, and item 2's audit -> enforce). The agent runs in the world's node
# namespace, following the active conflist of its own conf dir
# ($W_TMP/live.d: the file the "runtime" of this test reads too, written by
# rename into place as the installer writes it); 50 learning pods (20 with
# E2E_QUICK) and a few special ones, traffic checked before, during and
# after each change:
#   - the allowlist: a removed address and a removed name (its learned
#     address) refused, a new name askable and reachable, a learned address
#     both entries allow kept without asking again; a live connection both
#     allow kept, one the new entry does not allow cut;
#   - the envelope: a grant it no longer covers dropped from the pod (the
#     record narrowed, logged, counted), the other grant kept;
#   - the resolvers (another file becoming the active one): the old server
#     refused, the new one answers;
#   - the ingress sources: the old source dropped, the new one admitted;
#   - a broken entry (refused, then not JSON): nothing running changes,
#     /readyz fails naming the error, the log says why;
#   - audit -> enforce without recreating the pods; an opt-in the new entry
#     no longer allows: the pod stays enforced (kept), said so;
#   - races: a pod ADDed with the old file and one with the new file while
#     the re-plan runs end on the new generation; a pod DELed meanwhile is
#     never re-created;
#   - cloud metadata refused throughout; every record, status and /metrics
#     say the generation; CNI CHECK passes against the new policy.
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "livepolicy.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-ngl-}"
STATE=$W_TMP/state LIVE_DIR=$W_TMP/live.d LISTEN=127.0.0.1:9617
ACTIVE=$LIVE_DIR/10-ngtest.conflist
RACE=$E2E_DIR/dnsrace.py
N=${LIVE_PODS:-50}
[[ -z ${E2E_QUICK:-} ]] || N=20
# Correctness bounds, not speeds (the figure is make bench's): every pod
# re-planned within REPLAN_MS of the write on a loaded 2-core machine.
REPLAN_MS=30000
AUDIT_NS=staging OPTIN_NS=elsewhere
mkdir -p "$LIVE_DIR" "$STATE"

# ---- the world's extras: names, listeners -------------------------------------
{
	echo "10.21.0.1 keep.world.test" # allowed by every entry
	echo "10.21.0.2 gone.world.test" # allowed (:8443), then not
	echo "10.21.0.3 new.world.test"  # not allowed, then allowed
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
# The stranger serves :443 (a grant's destination) and takes ingress probes.
_spawn "$W_ID-stranger" stranger443 socat "TCP4-LISTEN:443,bind=$STRANGER4,reuseaddr,fork" OPEN:/dev/null
poll 30000 node_exec "$NPROBE" tcp "$STRANGER4" 443 200

# entry NAME PYCODE: our entry for generation NAME, as a conflist in
# $W_TMP/net.d (not followed until installed).
BASE='
e["egress"]["minNameTTL"] = 300
e["egress"]["allow"] = ["10.20.1.5:443", "[fd00:20::5]:443", "10.21.0.50:9443", "keep.world.test:443",
                        "keep.world.test:9443", "gone.world.test:8443"]
e["egress"]["envelope"] = ["10.0.0.0/8:443", "[fd00:20::/32]:443", "*.world.test:443"]
e["enforce"]["auditNamespaces"] = ["'"$AUDIT_NS"'"]
'
entry() { learn_conf "$1" "$BASE$2"; }
# install FILE [AS]: the installer's write: a temp file renamed into place.
install_conf() {
	local to=$LIVE_DIR/${2:-10-ngtest.conflist}
	cp "$1" "$to.tmp.$$" && mv "$to.tmp.$$" "$to"
	date +%s%N >"$W_TMP/written"
}
G1=$(entry g1 '')
G2=$(entry g2 '
e["egress"]["allow"] = ["10.20.1.5:443", "[fd00:20::5]:443", "keep.world.test:443", "keep.world.test:9443",
                        "new.world.test:443"]')
G3=$(entry g3 '
e["egress"]["allow"] = ["10.20.1.5:443", "[fd00:20::5]:443", "keep.world.test:443", "keep.world.test:9443",
                        "new.world.test:443"]
e["egress"]["envelope"] = ["10.20.0.0/16:443", "10.21.0.0/16:443", "[fd00:20::/32]:443", "*.world.test:443"]')
G4=$(entry g4 '
e["egress"]["allow"] = ["10.20.1.5:443", "[fd00:20::5]:443", "keep.world.test:443", "keep.world.test:9443",
                        "new.world.test:443"]
e["egress"]["envelope"] = ["10.20.0.0/16:443", "10.21.0.0/16:443", "[fd00:20::/32]:443", "*.world.test:443"]
e["dns"]["servers"] = ["'"$DNSL"'"]')
G5=$(entry g5 '
e["egress"]["allow"] = ["10.20.1.5:443", "[fd00:20::5]:443", "keep.world.test:443", "keep.world.test:9443",
                        "new.world.test:443"]
e["egress"]["envelope"] = ["10.20.0.0/16:443", "10.21.0.0/16:443", "[fd00:20::/32]:443", "*.world.test:443"]
e["dns"]["servers"] = ["'"$DNSL"'"]
e["ingress"]["sources"] = ["10.98.0.0/24", "fd00:98::/64"]')
G6=$(entry g6 '
e["egress"]["allow"] = ["10.20.1.5:443", "[fd00:20::5]:443", "keep.world.test:443", "keep.world.test:9443",
                        "new.world.test:443"]
e["egress"]["envelope"] = ["10.20.0.0/16:443", "10.21.0.0/16:443", "[fd00:20::/32]:443", "*.world.test:443"]
e["dns"]["servers"] = ["'"$DNSL"'"]
e["ingress"]["sources"] = ["10.98.0.0/24", "fd00:98::/64"]
e["enforce"]["namespaces"].append("'"$AUDIT_NS"'")
e["enforce"]["auditNamespaces"] = []
e["enforce"]["optInAnnotation"] = False')
BROKEN=$(entry broken '
e["egress"]["allow"].append("0.0.0.0/0:443")')

# ---- helpers ------------------------------------------------------------------
agent_start() {
	# shellcheck disable=SC2016 # $1 and $@ belong to the inner sh
	bg_start nsenter --net="$(_ns_path "$W_NODE")" unshare --mount --propagation slave \
		sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$W_TMP/resolv.conf" \
		"$NG_BIN" agent --state-dir "$STATE" --listen "$LISTEN" --cni-bin-dir "$W_TMP/bin" \
		--cni-conf-dir "$LIVE_DIR" --check-interval 30 "$@" 2>>"$W_TMP/log/agent.log"
	AGENT_PID=$BG_PID
	within 5000 get /healthz
}
get() { agent_http "$LISTEN" "$1"; }
ready_says() { # 200|503 TEXT
	local body rc=0
	body=$(get /readyz) || rc=$?
	[[ ($1 == 200 && $rc == 0) || ($1 == 503 && $rc != 0) ]] || { echo "$body" && return 1; }
	[[ $body == *"$2"* ]] || { echo "$body" && return 1; }
}
# policy_fails TEXT: /readyz is 503 and its policy line fails naming TEXT
policy_fails() {
	local body rc=0
	body=$(get /readyz) || rc=$?
	if ((rc == 0)) || ! grep '^FAIL policy: ' <<<"$body" | grep -F -- "$1" >/dev/null; then
		echo "$body"
		return 1
	fi
}
metric_is() { # NAME VALUE...: each family (no labels) has that value
	local body v
	body=$(get /metrics) || return 1
	while (($# >= 2)); do
		v=$(awk -v m="$1" '$1 == m {print $2}' <<<"$body")
		[[ $v == "$2" ]] || { echo "$1 is ${v:-missing}, not $2" && return 1; }
		shift 2
	done
}
# (no grep -q after a pipe: under pipefail its early exit fails the writer)
logged() { grep "\"event\":\"$1\"" "$W_TMP/log/agent.log" | grep -- "${2:-}" >/dev/null; }
race() { pod_exec "$1" "$PY" "$RACE" "${@:2}"; }
verdict() { pod_exec "$1" "$NPROBE" "${@:2}" 2>&1 | head -1 | awk '{print $1}' || true; }
# on_gen G: every enforced record of the network is of generation G.
on_gen() {
	"$PY" - "$STATE/pods" "$1" <<'PY'
import glob, json, sys
bad = []
for f in glob.glob(sys.argv[1] + "/*.json"):
    if f.endswith(".refused.json"):
        continue
    r = json.load(open(f))
    if r["decision"] == "enforced" and r.get("generation") != int(sys.argv[2]):
        bad.append("%s: %s" % (r["pod"]["name"], r.get("generation")))
if bad:
    sys.exit("%d not on %s: %s" % (len(bad), sys.argv[2], ", ".join(sorted(bad)[:8])))
PY
}
applied() { grep '"event":"policy_applied"' "$W_TMP/log/agent.log" | grep -q "generation $1:"; }
# replanned_row G LABEL: all pods on G within the bound; the time the write took to reach the last.
replanned_row() {
	local t0 out rc=0
	t0=$(cat "$W_TMP/written")
	within "$REPLAN_MS" applied "$1" || rc=$?
	((rc != 0)) || within "$REPLAN_MS" on_gen "$1" >"$W_TMP/ongen.out" 2>&1 || rc=$?
	out="$((($(date +%s%N) - t0) / 1000000)) ms (bound $REPLAN_MS)"
	t_row "$2" "$out" "$rc" "$(cat "$W_TMP/ongen.out" 2>/dev/null; grep -v '"level":"info"' "$W_TMP/log/agent.log" | tail -3)"
}
recorded() { # POD PYEXPR on the record r
	"$PY" -c 'import json,sys; r = json.load(open(sys.argv[1])); sys.exit(0 if ('"$2"') else 1)' \
		"$STATE/pods/$(_pod_var "$1" id)@eth0.json"
}
# hold POD IP PORT TAG: a live connection from POD to an echo, asked later.
hold() {
	bg_start nsenter --net="$(_ns_path "$(pod_ns "$1")")" "$PY" -c '
import os, socket, sys, time
tag = sys.argv[3]
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)
c.sendall(b"a"); assert c.recv(10) == b"a"
open(tag + ".up", "w").close()
n = 0
while not os.path.exists(tag + ".stop"):
    if os.path.exists(tag + ".go.%d" % n):
        try:
            c.settimeout(2); c.sendall(b"b"); d = c.recv(10)
            res = "alive" if d == b"b" else "closed"
        except OSError as e:
            res = "cut: " + (e.strerror or type(e).__name__)
        open(tag + ".res.%d" % n, "w").write(res)
        n += 1
    time.sleep(0.02)
' "$2" "$3" "$W_TMP/$4"
	within 5000 test -e "$W_TMP/$4.up"
}
held() { # TAG N: the connection's answer to the N-th question
	touch "$W_TMP/$1.go.$2"
	within 5000 test -s "$W_TMP/$1.res.$2" >/dev/null 2>&1 || true
	cat "$W_TMP/$1.res.$2" 2>/dev/null || echo "no answer"
}
# during: from three pods, allowed and refused destinations probed in a
# loop until $W_TMP/during.stop: a line per verdict that was not expected.
during_start() {
	rm -f "$W_TMP/during.stop" "$W_TMP/during.bad"
	: >"$W_TMP/during.bad"
	(
		while [[ ! -e $W_TMP/during.stop ]]; do
			for p in p0 p1 aud1; do
				v=$(verdict "$p" tcp "$STORE4" 443 1000)
				[[ $v == connected ]] || echo "$p $STORE4:443 $v" >>"$W_TMP/during.bad"
				v=$(verdict "$p" tcp "$MD4" 80 1000)
				[[ $v == refused ]] || echo "$p $MD4:80 $v" >>"$W_TMP/during.bad"
			done
			v=$(verdict p0 tcp 10.21.0.1 443 1000)
			[[ $v == connected ]] || echo "p0 keep 10.21.0.1:443 $v" >>"$W_TMP/during.bad"
			v=$(verdict p0 tcp "$FORBID4" 443 1000)
			[[ $v == refused ]] || echo "p0 $FORBID4:443 $v" >>"$W_TMP/during.bad"
		done
	) &
	DURING=$!
	_track_pid "$DURING"
}
during_row() { # LABEL
	touch "$W_TMP/during.stop"
	wait "$DURING" 2>/dev/null || true
	t_row "$1" "$(wc -l <"$W_TMP/during.bad") unexpected" "$([[ -s $W_TMP/during.bad ]] && echo 1 || echo 0)" \
		"$(head -5 "$W_TMP/during.bad")"
}
metadata_rows() { # WHEN
	expect "metadata refused ($1, enforced pod)" refused 1000 pod:p2 -- tcp "$MD4" 80 1000
	expect "metadata refused ($1, $AUDIT_NS pod)" refused 1000 pod:aud2 -- tcp "$MD4" 80 1000
}
status_json() { "$NG_BIN" status --json --state-dir "$STATE" 2>/dev/null || true; }
status_mode() { # POD MODE: status --json shows the pod in that mode
	status_json | "$PY" -c '
import json, sys
p = [p for p in json.load(sys.stdin)["pods"] if p["pod"] == sys.argv[1]][0]
sys.exit(0 if p.get("mode") == sys.argv[2] else "%s: %s" % (sys.argv[1], p.get("mode")))' "$1" "$2"
}
status_gen() { # POD GEN: status --json shows the pod on generation GEN
	status_json | "$PY" -c '
import json, sys
s = json.load(sys.stdin)
p = [p for p in s["pods"] if p["pod"] == sys.argv[1]][0]
sys.exit(0 if p.get("policyGeneration") == int(sys.argv[2]) else "%s: %s" % (sys.argv[1], p.get("policyGeneration")))' "$1" "$2"
}

# ---- generation 1 --------------------------------------------------------------
install_conf "$G1"
export POD_CONFLIST=$ACTIVE
t_check "the agent starts, following $LIVE_DIR" agent_start
t_check "readyz: policy generation 1 followed" within 5000 ready_says 200 "ok policy: generation 1"
for ((p = 0; p < N; p += 10)); do
	pids=()
	for ((q = p; q < p + 10 && q < N; q++)); do
		# p0..p2 with loopback: their probes need it (a reject answers through lo)
		if ((q < 3)); then
			pod_add "p$q" >"$W_TMP/p$q.add" 2>&1 &
		else
			POD_NO_LOOPBACK=1 pod_add "p$q" >"$W_TMP/p$q.add" 2>&1 &
		fi
		pids+=("$!")
	done
	wait "${pids[@]}" || true
done
ok=0
for ((q = 0; q < N; q++)); do [[ -s $W_TMP/pods/p$q/result ]] && ok=$((ok + 1)); done
t_row "$N learning pods added on generation 1" "$ok of $N" "$((ok == N ? 0 : 1))"
pod_add aud1 "$AUDIT_NS" >/dev/null
pod_add aud2 "$AUDIT_NS" >/dev/null
pod_add optin "$OPTIN_NS" '{"netguard.boxxkite.io/enforce":"true"}' >/dev/null
pod_add granted sandboxes '{"netguard.boxxkite.io/egress":"10.98.0.2:443,10.20.1.6:443"}' >/dev/null
pod_add dying >/dev/null
for p in p0 aud1; do pod_listen "$p" 8080; done
t_check "ADD stamped every record with generation 1" on_gen 1
t_row "p0 learns keep.world.test (:443 and :9443)" "$(race p0 "$DNSL" udp 1 keep.world.test 443)" 0
out=$(race p0 "$DNSL" udp 1 gone.world.test 8443)
t_row "p0 learns gone.world.test:8443" "$out" "$([[ $out == *"connects 1 "* ]] && echo 0 || echo 1)"
out=$(race p0 "$DNSL" udp 1 new.world.test 443)
t_row "p0 may not ask for new.world.test yet (dns.queries listed)" "$out" "$([[ $out == *"connects 0 "* ]] && echo 0 || echo 1)"
expect "before: p0 reaches 10.21.0.50:9443 (allowed address)" connected 1000 pod:p0 -- tcp 10.21.0.50 9443 1000
expect "before: granted reaches the stranger (its grant)" connected 1000 pod:granted -- tcp "$STRANGER4" 443 1000
expect "before: aud1 (audit) reaches $FORBID4:443" connected 1000 pod:aud1 -- tcp "$FORBID4" 443 1000
expect "before: optin refuses $FORBID4:443" refused 1000 pod:optin -- tcp "$FORBID4" 443 1000
expect "before: the gateway reaches p0:8080 (ingress source)" connected 1000 peer:gateway -- tcp "$(pod_ip p0 4)" 8080 1000
metadata_rows before
hold p0 10.21.0.1 9443 keep   # learned, allowed by every entry
hold p0 10.21.0.50 9443 drop  # an address the next entry removes

# ---- the allowlist, rename into place, with races ------------------------------
cp "$ACTIVE" "$W_TMP/g1-copy.conflist"
during_start
install_conf "$G2"
POD_CONFLIST=$W_TMP/g1-copy.conflist POD_NO_LOOPBACK=1 pod_add lateold >"$W_TMP/lateold.add" 2>&1 &
LATE1=$!
POD_NO_LOOPBACK=1 pod_add latenew >"$W_TMP/latenew.add" 2>&1 &
LATE2=$!
POD_NO_LOOPBACK=1 pod_del dying >/dev/null 2>&1 &
DYING=$!
wait "$LATE1" "$LATE2" "$DYING" || true
replanned_row 2 "allowlist changed: every pod on generation 2"
during_row "during the re-plan: allowed reachable, refused refused, metadata refused"
t_check "a pod ADDed with the old file ends on generation 2" within "$REPLAN_MS" recorded lateold 'r["generation"] == 2'
t_check "a pod ADDed with the new file is on generation 2" recorded latenew 'r["generation"] == 2'
t_check_not "the pod DELed meanwhile has no record" test -e "$STATE/pods/$(_pod_var dying id)@eth0.json"
t_check_not "... and no host-side table" node_exec nft list table netdev "$(pod_host_table dying)"
expect "after: p0 refuses 10.21.0.50:9443 (removed address)" refused 1000 pod:p0 -- tcp 10.21.0.50 9443 1000
expect "after: p0 refuses gone.world.test's 10.21.0.2:8443" refused 1000 pod:p0 -- tcp 10.21.0.2 8443 1000
expect "after: p0 still reaches keep's learned 10.21.0.1:443" connected 1000 pod:p0 -- tcp 10.21.0.1 443 1000
out=$(race p0 "$DNSL" udp 1 new.world.test 443)
t_row "after: p0 may ask for new.world.test and connect" "$out" "$([[ $out == *"connects 1 "* ]] && echo 0 || echo 1)"
out=$(race lateold "$DNSL" udp 1 new.world.test 443)
t_row "after: lateold (ADDed with the old file) too" "$out" "$([[ $out == *"connects 1 "* ]] && echo 0 || echo 1)"
out=$(held keep 0)
t_row "the live connection both entries allow is kept" "$out" "$([[ $out == alive ]] && echo 0 || echo 1)"
out=$(held drop 0)
t_row "the live connection the new entry refuses is cut" "$out" "$([[ $out == cut:* ]] && echo 0 || echo 1)"
t_check "CNI CHECK passes against generation 2 (p5)" pod_check p5
t_check "the log counts the flows cut" logged policy_replanned '[1-9][0-9]* live flow(s) the new policy does not admit cut'
# (the view behind status and /metrics is published at most twice a second)
t_check "status: p0 on generation 2" within 5000 status_gen p0 2
t_check "metrics: generation 2, 0 pods behind" within 5000 metric_is \
	boxxkite_netguard_agent_policy_generation 2 boxxkite_netguard_agent_policy_pods_behind 0
metadata_rows "after the allowlist"

# ---- the envelope: a grant it no longer covers ----------------------------------
during_start
install_conf "$G3"
replanned_row 3 "envelope narrowed: every pod on generation 3"
during_row "during: nothing allowed by both refused, nothing refused let through"
expect "granted: the stranger (outside the new envelope) refused" refused 1000 pod:granted -- tcp "$STRANGER4" 443 1000
t_check "granted: its record keeps only the covered grant" recorded granted \
	'r["conf"]["runtimeConfig"]["io.kubernetes.cri.pod-annotations"]["netguard.boxxkite.io/egress"] == "10.20.1.6:443"'
expect "granted: the covered grant still reaches $STORE_NAME4:443" connected 1000 pod:granted -- tcp "$STORE_NAME4" 443 1000
t_check "the log names the dropped grant" logged grant_dropped '10.98.0.2:443'
t_check "metrics: the grant dropped counted" within 5000 metric_is boxxkite_netguard_agent_policy_grants_dropped_total 1
t_check "CNI CHECK passes for granted against the narrowed record" pod_check granted

# ---- the resolvers: another file becomes the active one ------------------------
during_start
install_conf "$G4" 05-ngtest.conflist
POD_CONFLIST=$LIVE_DIR/05-ngtest.conflist
replanned_row 4 "resolvers changed (05-ngtest.conflist now active): generation 4"
during_row "during: as before"
expect "after: the old resolver $DNS4 refused" denied 1000 pod:p1 -- udp-dns "$DNS4" keep.world.test 1000
out=$(race p1 "$DNSL" udp 1 keep.world.test 443)
t_row "after: the new resolver answers, the pod connects" "$out" "$([[ $out == *"connects 1 "* ]] && echo 0 || echo 1)"
t_check "CNI CHECK passes against generation 4 (p3, the new active file)" pod_check p3
metadata_rows "after the resolvers"

# ---- the ingress sources ----------------------------------------------------------
during_start
install_conf "$G5" 05-ngtest.conflist
replanned_row 5 "ingress sources changed: generation 5"
during_row "during: as before"
expect "after: the gateway (no longer a source) dropped" timeout - peer:gateway -- tcp "$(pod_ip p0 4)" 8080 300
expect "after: the stranger (the new source) reaches p0:8080" connected 1000 peer:stranger -- tcp "$(pod_ip p0 4)" 8080 1000

# ---- a broken entry: nothing running changes -------------------------------------
install_conf "$BROKEN" 05-ngtest.conflist
t_check "refused entry: /readyz's policy line fails naming the error" within 5000 policy_fails "0.0.0.0/0"
t_check "... the log says why" within 5000 logged policy_refused "0.0.0.0/0"
sleep 1 # a view published after the refusal
t_check "... the generation stays" metric_is boxxkite_netguard_agent_policy_generation 5 \
	boxxkite_netguard_agent_policy_valid 0
t_check "... every record stays on generation 5" on_gen 5
expect "... p0 still refuses $FORBID4:443" refused 1000 pod:p0 -- tcp "$FORBID4" 443 1000
expect "... p0 still reaches keep 10.21.0.1:443" connected 1000 pod:p0 -- tcp 10.21.0.1 443 1000
printf '{"cniVersion": "1.0.0", "plugins": [' >"$W_TMP/garbage"
install_conf "$W_TMP/garbage" 05-ngtest.conflist
t_check "not JSON: /readyz's policy line fails naming the file" within 5000 policy_fails "05-ngtest.conflist"
t_check "... every record stays on generation 5" on_gen 5
out=$(held keep 1)
t_row "... the live connection is still alive" "$out" "$([[ $out == alive ]] && echo 0 || echo 1)"
install_conf "$G5" 05-ngtest.conflist
t_check "the valid entry back: /readyz ok, still generation 5" within 5000 ready_says 200 "ok policy: generation 5"
metadata_rows "after the broken entries"

# ---- audit -> enforce without recreation; an opt-in no longer allowed ------------
ino_before=$(stat -L -c %i "$(pod_netns_path aud1)")
expect "aud1 (audit) still reaches $FORBID4:443" connected 1000 pod:aud1 -- tcp "$FORBID4" 443 1000
during_start
install_conf "$G6" 05-ngtest.conflist
replanned_row 6 "$AUDIT_NS moved to enforce.namespaces: generation 6"
during_row "during: as before"
expect "aud1 now refuses $FORBID4:443" refused 1000 pod:aud1 -- tcp "$FORBID4" 443 1000
t_row "aud1 was not recreated (same namespace)" "inode $ino_before" \
	"$([[ $(stat -L -c %i "$(pod_netns_path aud1)") == "$ino_before" ]] && recorded aud1 'not r.get("audit")' && echo 0 || echo 1)"
t_check_not "aud1's table comment no longer says AUDIT" sh -c "nsenter --net=$(pod_netns_path aud1) nft list table inet boxxkite_netguard | grep -q AUDIT"
t_check "aud1: status says mode enforce" within 5000 status_mode aud1 enforce
expect "optin (no longer selectable) still refuses $FORBID4:443" refused 1000 pod:optin -- tcp "$FORBID4" 443 1000
t_check "optin: its record keeps it enforced" recorded optin 'r.get("keep") == "enforce"'
t_check "... the log says it is kept" logged policy_replanned 'kept'
t_check "CNI CHECK passes for optin (kept)" pod_check optin
t_check "CNI CHECK passes for aud1 (enforced now)" pod_check aud1
metadata_rows "after audit -> enforce"
t_check "status table: the GEN column says 6" sh -c "'$NG_BIN' status --state-dir '$STATE' | grep -E 'sandboxes/p3 +enforced +6 '"
out=$(held keep 2)
t_row "the live connection kept across every change" "$out" "$([[ $out == alive ]] && echo 0 || echo 1)"
touch "$W_TMP/keep.stop" "$W_TMP/drop.stop"

# ---- a restarted agent keeps the generation; no drift was seen -------------------
t_check_not "no drift reported for the agent's own re-plans" sh -c "grep -E '\"event\":\"(drift|drift_check)\"' '$W_TMP/log/agent.log'"
replans=$(grep -c '"event":"policy_replanned"' "$W_TMP/log/agent.log" || true)
bg_stop "$AGENT_PID"
t_check "the agent again" agent_start
t_check "it keeps generation 6" within 5000 ready_says 200 "ok policy: generation 6"
t_row "... and re-plans nothing" "$replans re-plans before, $(grep -c '"event":"policy_replanned"' "$W_TMP/log/agent.log" || true) after" \
	"$([[ $(grep -c '"event":"policy_replanned"' "$W_TMP/log/agent.log" || true) == "$replans" ]] && echo 0 || echo 1)"

bg_stop "$AGENT_PID"
"$PY" "$E2E_DIR/lib/logschema.py" agent "$W_TMP/log/agent.log" >/dev/null || t_row "agent log schema" "$("$PY" "$E2E_DIR/lib/logschema.py" agent "$W_TMP/log/agent.log")" 1
t_summary
