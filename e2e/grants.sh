#!/usr/bin/env bash
# grants: per-session grants that follow the pod's annotation in the
# Kubernetes API, and what the API sees of the protection (issue 25), against
# a small fake API (e2e/lib/fakekube.py) over TLS with a certificate of the
# test's own CA (openssl), in the test world's node namespace; the agent
# there too, pointed at it (--kube-api/--kube-ca/--kube-token/--node-name):
#   - a warm pod without grants: the stranger's :443 refused; its grant
#     annotated in the API: reachable within 2 s, the record follows, CNI
#     CHECK passes against it;
#   - a live connection; the annotation removed: refused within 2 s and the
#     live connection cut (conntrack);
#   - a grant outside the envelope: refused, the pod keeps its grant, an
#     Event and the log say why; annotations that are not strings: kept;
#   - Events (NetguardEnforced, NetguardGrantsUpdated, NetguardGrantRefused,
#     NetguardDrift, NetguardRepaired), the condition
#     netguard.boxxkite.io/enforced True once verified, False on drift (no
#     --repair), True again after a repair; with --repair False then True;
#   - the API down: nothing changes, /readyz and /metrics say stale; back
#     (a restarted API: 410 Gone, a new list): the change made meanwhile is
#     applied; the token rotated: the agent reads the new one.
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "grants.sh: needs root (network namespaces)" >&2 && exit 1; }
command -v openssl >/dev/null || { echo "grants.sh: openssl missing (make deps)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-ngg-}"
STATE=$W_TMP/state KUBE=$W_TMP/kube
mkdir -p "$KUBE"
API=127.0.0.1:16443 LISTEN=127.0.0.1:9617 NODE=node-1
AGENT_PID='' API_PID=''
STRANGER_PORT=443

# ---- the test's CA, the API's certificate, the token -----------------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=ngtest-ca -keyout "$KUBE/ca.key" \
	-out "$KUBE/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout "$KUBE/api.key" -out "$KUBE/api.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$KUBE/ext"
openssl x509 -req -in "$KUBE/api.csr" -CA "$KUBE/ca.crt" -CAkey "$KUBE/ca.key" -CAcreateserial -days 1 \
	-extfile "$KUBE/ext" -out "$KUBE/api.crt" 2>/dev/null
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KUBE/token"
cp "$KUBE/token" "$KUBE/agent-token" # the agent's copy (its projected token file)

api_start() {
	bg_start nsenter --net="$(_ns_path "$W_NODE")" "$PY" "$E2E_DIR/lib/fakekube.py" --listen "$API" --cert "$KUBE/api.crt" \
		--key "$KUBE/api.key" --token-file "$KUBE/token" --state "$KUBE/state.json" --node "$NODE" \
		2>>"$W_TMP/log/fakekube.log"
	API_PID=$BG_PID
	within 5000 kube GET /_test/state >/dev/null
}
api_stop() { bg_stop "$API_PID"; API_PID=''; }
# kube METHOD PATH [JSON]: the fake API's answer (TLS, the test CA).
kube() {
	node_exec "$PY" -c '
import json, ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[4])
data = sys.argv[3].encode() if sys.argv[3] else None
req = urllib.request.Request("https://'"$API"'" + sys.argv[2], data=data, method=sys.argv[1])
req.add_header("Content-Type", "application/json")
sys.stdout.write(urllib.request.urlopen(req, timeout=3, context=ctx).read().decode())
' "$1" "$2" "${3:-}" "$KUBE/ca.crt"
}
# annotate POD JSON-ANNOTATIONS [gate]: the pod as the API holds it.
annotate() {
	kube POST /_test/pod "{\"namespace\":\"$ENFORCED_NS\",\"name\":\"$1\",\"annotations\":$2${3:+,\"gate\":true}}" >/dev/null
}
agent_start() { # [flags]
	# With the world's resolver, as the plugin has it, exec'd all the way
	# down so that $BG_PID is the agent itself (as e2e/ops.sh).
	# shellcheck disable=SC2016 # $1 and $@ belong to the inner sh
	bg_start nsenter --net="$(_ns_path "$W_NODE")" unshare --mount --propagation slave \
		sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$W_TMP/resolv.conf" \
		"$NG_BIN" agent --state-dir "$STATE" --cni-conf-dir "$W_TMP/agent-conf.d" --listen "$LISTEN" --check-interval 30 \
		--kube-api "https://$API" --kube-ca "$KUBE/ca.crt" --kube-token "$KUBE/agent-token" \
		--node-name "$NODE" "$@" 2>>"$W_TMP/log/agent.log"
	AGENT_PID=$BG_PID
	within 5000 get /healthz
}
agent_stop() { bg_stop "$AGENT_PID"; AGENT_PID=''; }
get() { agent_http "$LISTEN" "$1"; }
readyz_says() { local b; b=$(get /readyz) || true; [[ $b == *"$1"* ]]; }
# state_has PYTHON-EXPR: true in the fake API's state `s`.
state_has() {
	kube GET /_test/state | "$PY" -c 'import json, sys; s = json.load(sys.stdin); sys.exit(0 if ('"$1"') else 1)'
}
event_seen() { # POD REASON
	state_has "any(e['reason'] == '$2' and e['involvedObject']['name'] == '$1' for e in s['events'])"
}
cond_is() { # POD True|False
	state_has "[c['status'] for c in s['pods']['$ENFORCED_NS/$1']['status']['conditions'] if c['type'] == 'netguard.boxxkite.io/enforced'] == ['$2']"
}
cond_says() { # POD TEXT: the condition is True and its message holds TEXT
	state_has "[c['message'] for c in s['pods']['$ENFORCED_NS/$1']['status']['conditions'] if c['type'] == 'netguard.boxxkite.io/enforced' and c['status'] == 'True' and c['message'].endswith('$2')] != []"
}
# (the probe's exit status says nothing here: its verdict line does)
probe() { pod_exec "$1" "$NPROBE" tcp "$2" "$3" 1000 2>&1 || true; }
reach() { [[ $(probe "$@") == connected* ]]; }
refused() { [[ $(probe "$@") == refused* ]]; }
# timed LABEL MS CMD...: one row with how long CMD took to hold.
timed() {
	local label=$1 ms=$2 t0 t1 rc=0
	shift 2
	t0=$(date +%s%N)
	within "$ms" "$@" >/dev/null 2>&1 || rc=$?
	t1=$(date +%s%N)
	t_row "$label" "$(((t1 - t0) / 1000000)) ms (bound $ms)" "$rc"
}
logged() { grep "\"event\":\"$1\"" "$W_TMP/log/agent.log" | grep -q "${2:-}"; }
recorded_egress() { "$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["conf"]["runtimeConfig"]["io.kubernetes.cri.pod-annotations"].get("netguard.boxxkite.io/egress", "(none)"))
' "$STATE/pods/$(_pod_var "$1" id)@eth0.json"; }

# The stranger serves an echo on :443 (a live connection to cut later).
bg_start nsenter --net="$(_ns_path "$W_ID-stranger")" "$PY" -c '
import socket, threading
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("'"$STRANGER4"'", '"$STRANGER_PORT"')); s.listen(16)
def echo(c):
    while True:
        d = c.recv(100)
        if not d: return
        c.sendall(d)
while True:
    c, _ = s.accept(); threading.Thread(target=echo, args=(c,), daemon=True).start()
'
within 5000 node_exec "$NPROBE" tcp "$STRANGER4" "$STRANGER_PORT" 200 >/dev/null

t_check "the fake API serves (TLS, the test CA)" api_start
t_check "the agent starts, watching the fake API" agent_start
timed "readyz: the watch is current" 5000 readyz_says "ok kube: the watch"
# Warm pods, as a pool makes them: created without the session's grants.
pod_add warm >/dev/null
pod_add other >/dev/null
annotate warm '{}' gate
annotate other '{"netguard.boxxkite.io/egress":"10.98.0.2:443"}'
t_check "the warm pod without grants: the stranger refused" refused warm "$STRANGER4" "$STRANGER_PORT"
timed "condition enforced True once verified (readiness gate)" 5000 cond_is warm True
timed "Event NetguardEnforced on the pod" 5000 event_seen warm NetguardEnforced

# ---- a grant opens, the record follows -------------------------------------------
annotate warm '{"netguard.boxxkite.io/egress":"10.98.0.2:443"}'
timed "granted in the API: reachable within 2 s" 2000 reach warm "$STRANGER4" "$STRANGER_PORT"
t_row "the record holds the new grant" "$(recorded_egress warm)" "$([[ $(recorded_egress warm) == 10.98.0.2:443 ]] && echo 0 || echo 1)"
t_check "CNI CHECK passes against the recorded grants" pod_check warm
timed "Event NetguardGrantsUpdated" 5000 event_seen warm NetguardGrantsUpdated
timed "condition True, naming the grants in force" 5000 cond_says warm "grants: 10.98.0.2:443"
t_check "the grant change went through False (GrantsChanging)" state_has "any(p['pod'] == '$ENFORCED_NS/warm' and p['reason'] == 'GrantsChanging' for p in s['patches'])"
timed "the other pod's grant from the first list applies" 3000 reach other "$STRANGER4" "$STRANGER_PORT"

# ---- a live connection, the grant withdrawn ---------------------------------------
LIVE=$W_TMP/live
bg_start nsenter --net="$(_ns_path "$(pod_ns warm)")" "$PY" -c '
import os, socket, sys, time
c = socket.create_connection(("'"$STRANGER4"'", '"$STRANGER_PORT"'), timeout=2)
c.sendall(b"a"); assert c.recv(10) == b"a"
open(sys.argv[1] + ".up", "w").close()
while not os.path.exists(sys.argv[1] + ".go"): time.sleep(0.02)
try:
    c.settimeout(2); c.sendall(b"b"); d = c.recv(10)
    res = "alive" if d == b"b" else "closed"
except OSError as e:
    res = "cut: " + (e.strerror or type(e).__name__)
open(sys.argv[1], "w").write(res)
' "$LIVE"
LIVE_PID=$BG_PID
within 5000 test -e "$LIVE.up" || true
annotate warm '{}'
timed "withdrawn in the API: refused within 2 s" 2000 refused warm "$STRANGER4" "$STRANGER_PORT"
touch "$LIVE.go"
wait "$LIVE_PID" 2>/dev/null || true
out=$(cat "$LIVE" 2>/dev/null || echo "no result")
# Reset at once by the pod's own table (its flow is new to conntrack now);
# without the conntrack cut the host-side table alone would drop it (a
# timeout), and a pod without a host mirror would keep it open.
t_row "the live connection is cut (reset)" "$out" "$([[ $out == "cut: Connection reset by peer" ]] && echo 0 || echo 1)"
t_check "the log counts the flows cut" logged grants_updated "withdrawn: 10.98.0.2:443 ([1-9][0-9]* live flow"
t_row "the record follows the removal" "$(recorded_egress warm)" "$([[ $(recorded_egress warm) == "(none)" ]] && echo 0 || echo 1)"
t_check "the other pod keeps its grant" reach other "$STRANGER4" "$STRANGER_PORT"
timed "condition True, naming no grants (the pod is clean)" 5000 cond_says warm "grants: none"

# ---- refused and unreadable --------------------------------------------------------
annotate warm '{"netguard.boxxkite.io/egress":"10.98.0.2:443"}'
within 2000 reach warm "$STRANGER4" "$STRANGER_PORT" || true
annotate warm '{"netguard.boxxkite.io/egress":"10.98.0.2:8443"}'
timed "a grant outside the envelope: Event NetguardGrantRefused" 5000 event_seen warm NetguardGrantRefused
t_check "the log says why (code 100)" logged grant_refused "code 100"
t_check "the pod keeps its current grant" reach warm "$STRANGER4" "$STRANGER_PORT"
t_row "the record keeps it too" "$(recorded_egress warm)" "$([[ $(recorded_egress warm) == 10.98.0.2:443 ]] && echo 0 || echo 1)"
annotate warm '{"netguard.boxxkite.io/egress":["10.98.0.2:443"],"x":1}'
timed "annotations that are not strings: logged, kept" 5000 logged grant_unreadable
t_check "... and the pod keeps its grant" reach warm "$STRANGER4" "$STRANGER_PORT"

# ---- the API down, back ---------------------------------------------------------
api_stop
timed "API down: readyz says the watch is stale" 15000 readyz_says "FAIL kube: the watch is stale"
m=$(get /metrics | grep '^netguard_agent_kube_watch_up ' || true)
t_row "metrics: watch_up 0" "$m" "$([[ $m == *" 0" ]] && echo 0 || echo 1)"
t_check "API down: the last applied grant stays" reach warm "$STRANGER4" "$STRANGER_PORT"
t_check "API down: nothing widens (forbidden refused)" refused warm "$FORBID4" 443
# The change made while the agent could not see it: a restarted API (its
# versions past the old ones, its history empty: the agent's watch gets 410).
"$PY" - "$KUBE/state.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["pods"]["sandboxes/warm"]["metadata"]["annotations"] = {}
json.dump(s, open(sys.argv[1], "w"))
PY
t_check "the API back" api_start
timed "back: caught up (the withdrawal applied, refused)" 40000 refused warm "$STRANGER4" "$STRANGER_PORT"
timed "readyz: current again" 10000 readyz_says "ok kube: the watch"
t_check "the agent listed again after 410 Gone" logged kube_relist "410 Gone"

# ---- the token rotated -------------------------------------------------------------
n=$(kube GET /_test/state | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["unauthorized"])')
t_row "every request so far carried the token" "unauthorized: $n" "$([[ $n == 0 ]] && echo 0 || echo 1)"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KUBE/token.new"
mv "$KUBE/token.new" "$KUBE/token"
cp "$KUBE/token" "$KUBE/agent-token.new" && mv "$KUBE/agent-token.new" "$KUBE/agent-token"
annotate warm '{"netguard.boxxkite.io/egress":"10.98.0.2:443"}'
timed "token rotated: the next change still applies" 35000 reach warm "$STRANGER4" "$STRANGER_PORT"

# ---- drift: condition False without repair, True after -----------------------------
pod_exec warm nft delete table inet boxxkite_netguard
timed "drift: condition False (not repaired)" 5000 cond_is warm False
timed "Event NetguardDrift" 5000 event_seen warm NetguardDrift
agent_stop
t_check "the agent again, with --repair" agent_start --repair
timed "repaired: condition True again" 10000 cond_is warm True
t_check "after the restart the recorded grant holds" reach warm "$STRANGER4" "$STRANGER_PORT"
# With --repair the drift is undone within milliseconds: the API still sees
# the condition False (reason Drift) first, then True (agent/kpost.h: a
# False not sent yet is never folded into the True behind it).
np=$(kube GET /_test/state | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["patches"]))')
pod_exec warm nft delete table inet boxxkite_netguard
timed "drift with --repair: the API saw the condition False (Drift), then True" 30000 state_has \
	"(lambda l: ('False', 'Drift') in l and ('True', 'Enforced') in l[l.index(('False', 'Drift')):])([(p['status'], p['reason']) for p in s['patches'][$np:] if p['pod'] == '$ENFORCED_NS/warm'])"
timed "Event NetguardRepaired" 5000 event_seen warm NetguardRepaired
t_check "... the pod's table is back" pod_exec warm nft list table inet boxxkite_netguard

# ---- nothing leaks into the events ----------------------------------------------
tok=$(cat "$KUBE/token")
t_check_not "no event or log line carries the token" grep -rqF "$tok" "$KUBE/state.json" "$W_TMP/log/agent.log"

agent_stop
api_stop
pod_del warm >/dev/null || true
pod_del other >/dev/null || true
t_summary
