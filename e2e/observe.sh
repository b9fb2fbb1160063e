#!/usr/bin/env bash
# observe: the node-wide flow log and what a pod learned (issue 21 items 3
# and 4), with real traffic through the runtime-exact chain:
#   - `observe` on its own (no agent): one pod's namespace, --pod from its
#     record, and `logs` over the same code; what needs the agent says so;
#   - through the agent: a row from a real refused packet for every
#     category and table: metadata, egress, ingress, source (a spoofed
#     source), dns-refused (an unlisted name), would_deny (an audited pod),
#     raw (the packet-socket guard: a frame through AF_PACKET) and host (the
#     node side: a pod that deleted its own tables); every field of the JSON
#     line, the text line; --pod, --category, --json, --since, --follow;
#   - a flood: the stream stays within the table's rate limit, says how
#     many it skipped, and logged + skipped = what the kernel counted; a
#     reader that stops reading is told what it missed and the agent goes
#     on serving DNS answers and other readers meanwhile;
#   - `status --names`: each learned address under its name, with each
#     side's expiry against the kernel's own sets (pod and node), a live
#     connection keeping one alive, the table and --json, the errors.
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "observe.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-ngo-}"
STATE=$W_TMP/state
RATE=5 BURST=10
section() { printf '\n== %s\n' "$1"; }
info() { printf '   info: %s\n' "$*"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

{
	echo "10.21.0.1 api.obs.test"
	echo "10.21.0.2 live.obs.test"
	echo "10.21.0.9 leak.example"
} >"$W_TMP/obs.hosts"
learn_world "$W_TMP/obs.hosts"
LEARN=$(learn_conf obs '
e["egress"]["minNameTTL"] = 30
e["egress"]["allow"] += ["api.obs.test:443", "live.obs.test:9443"]
e["enforce"]["auditNamespaces"] = ["staging"]
e["log"] = {"ratePerSecond": '"$RATE"', "burst": '"$BURST"'}
')
RESOLVE=$(conf_variant resolve 'e["log"] = {"ratePerSecond": '"$RATE"', "burst": '"$BURST"'}')
# The flood that must wrap the agent's ring (4096 events): a pod whose
# tables log everything.
LOUD=$(learn_conf loud 'e["log"] = {"ratePerSecond": 100000, "burst": 100000}')
mkdir -p "$STATE"

ob() { "$NG_BIN" observe --state-dir "$STATE" "$@"; }
# bound POD GROUP: a reader holds GROUP in the pod's namespace.
bound() { pod_exec "$1" cat /proc/net/netfilter/nfnetlink_log | awk -v g="$2" '$1 == g {f = 1} END {exit !f}'; }
# lines FILE PYEXPR [N]: exactly N (default 1) JSON lines of FILE satisfy
# PYEXPR on o (shown when not).
lines() {
	"$PY" - "$@" <<'PY'
import json, sys
path, expr = sys.argv[1], sys.argv[2]
want = int(sys.argv[3]) if len(sys.argv) > 3 else 1
got = []
for l in open(path):
    l = l.strip()
    if not l:
        continue
    o = json.loads(l)
    if eval(expr):
        got.append(o)
print(len(got), "line(s):", json.dumps(got[:3]))
sys.exit(0 if len(got) == want else 1)
PY
}
count_lines() { "$PY" -c '
import json, sys
print(sum(1 for l in open(sys.argv[1]) if l.strip() and eval(sys.argv[2], {"o": json.loads(l)})))' "$1" "$2"; }

# ---------------------------------------------------------------------------
section "on its own: one pod's namespace, no agent"
POD_CONFLIST=$RESOLVE t_check "ADD solo (egress.names resolve)" pod_add solo
SOLO4=$(pod_ip solo 4)
bg_start "$NG_BIN" observe --state-dir "$STATE" --pod sandboxes/solo --follow --json --duration 60 \
	>"$W_TMP/solo.out" 2>"$W_TMP/solo.err"
SOLO_PID=$BG_PID
t_check "observe --pod sandboxes/solo --follow: its group bound in the pod's namespace" poll 30000 bound solo 65054
expect "solo: $FORBID4:443 refused" refused 1000 pod:solo -- tcp "$FORBID4" 443 2000
t_check "a line: egress, table pod, REFUSED by the rule that says so" within 5000 lines "$W_TMP/solo.out" \
	'o["event"] == "refusal" and o["pod_namespace"] == "sandboxes" and o["pod_name"] == "solo" and o["category"] == "egress" and o["table"] == "pod" and o["verdict"] == "refused" and o["dst"] == "'"$FORBID4"'" and o["dport"] == 443 and o["comment"] == "egress not allowed: TCP reset, so connect() fails at once"'
bg_stop "$SOLO_PID"
no_agent() {
	local rc=0
	ob --json >"$W_TMP/na.out" 2>"$W_TMP/na.err" || rc=$?
	cat "$W_TMP/na.err"
	((rc == 2)) && grep -q "no agent serves" "$W_TMP/na.err" && grep -q "agent.sock" "$W_TMP/na.err"
}
t_check "observe without a pod and no agent: exit 2, says the node-wide log is the agent's" no_agent
no_history() {
	local rc=0
	ob --pod sandboxes/solo --json 2>"$W_TMP/nh.err" || rc=$?
	cat "$W_TMP/nh.err"
	((rc == 2)) && grep -q "no history" "$W_TMP/nh.err"
}
t_check "observe --pod without --follow and no agent: exit 2, no history" no_history
logs_same() {
	bg_start "$NG_BIN" logs --netns "$(pod_netns_path solo)" --state-dir "$STATE" --duration 30 >"$W_TMP/logs.out"
	local p=$BG_PID rc=0
	poll 30000 bound solo 65054 || return 1
	pod_exec solo "$NPROBE" tcp "$MD4" 80 1000 >/dev/null || true
	within 10000 lines "$W_TMP/logs.out" 'o["category"] == "metadata" and o["group"] == 65054 and o["prefix"] == "netguard metadata sandboxes/solo: " and o["pod_name"] == "solo" and o["src"] == "'"$SOLO4"'" and o["dst"] == "'"$MD4"'" and o["table"] == "pod" and o["comment"] == "cloud metadata: TCP reset, so connect() fails at once"' || rc=1
	bg_stop "$p"
	return "$rc"
}
t_check "logs --netns (the per-pod view, same code): observe's line + group and prefix" logs_same

# ---------------------------------------------------------------------------
section "through the agent: every category from a real refusal"
agent_start
t_check "agent serves" agent_ready 30000
export POD_CONFLIST=$LEARN
t_check "ADD web (learn)" pod_add web
t_check "ADD aud (learn, staging: audited)" pod_add aud staging
t_check "ADD bare (learn; will delete its own tables)" pod_add bare
WEB4=$(pod_ip web 4) BARE4=$(pod_ip bare 4)
watched() { # N: the agent watches N pods
	ob --json --count 1 --duration 5 2>/dev/null | head -1 | "$PY" -c '
import json, sys
o = json.loads(sys.stdin.readline())
print(o)
sys.exit(0 if o["event"] == "start" and o["watched"] == int(sys.argv[1]) else 1)' "$1"
}
t_check "the agent watches all 4 pods (start line)" within 30000 watched 4
t_check "... and holds each pod's group in its namespace" bound web 65054
bg_start "$NG_BIN" observe --state-dir "$STATE" --follow --json >"$W_TMP/follow.out" 2>"$W_TMP/follow.err"
FOLLOW_PID=$BG_PID
t_check "observe --follow --json: the start line first" within 30000 lines "$W_TMP/follow.out" 'o["event"] == "start"'
T_START=$(now_ms)

expect "web: metadata $MD4:80 refused" refused 1000 pod:web -- tcp "$MD4" 80 2000
expect "web: $FORBID4:443 refused" refused 1000 pod:web -- tcp "$FORBID4" 443 2000
expect "stranger -> web:8080 dropped" timeout - peer:stranger -- tcp "$WEB4" 8080 300
# A source the pod does not own, from a raw socket (IP_HDRINCL).
pod_exec web "$PY" - "$FORBID4" <<'PY' || true
import socket, struct, sys
dst = socket.inet_aton(sys.argv[1])
udp = struct.pack(">HHHH", 40123, 9, 8, 0)
ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 28, 1, 0, 64, 17, 0, socket.inet_aton("10.244.1.250"), dst)
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
try:
    s.sendto(ip + udp, (sys.argv[1], 0))
except OSError:
    pass
PY
out=$(pod_exec web "$PY" "$E2E_DIR/dnsq.py" udp "$DNSL" leak.example)
t_row "web: unlisted name asked: NXDOMAIN from the agent" "$out" "$([[ $out == "leak.example A NXDOMAIN 1 1 "* ]] && echo 0 || echo 1)"
expect "aud (audited): $FORBID4:443 let through" connected 1000 pod:aud -- tcp "$FORBID4" 443 2000
pod_exec web "$PY" "$E2E_DIR/rawframe.py" send --ifname eth0 --dst-mac ff:ff:ff:ff:ff:ff --src "$WEB4" \
	--dst "$FORBID4" --marker NGRAW-observe >/dev/null
# bare deletes its own tables (it could with NET_ADMIN): the node side refuses.
pod_exec bare nft delete table inet boxxkite_netguard
pod_exec bare nft delete table netdev boxxkite_netguard
expect "bare (own tables gone): $FORBID4:443 dropped by the node side" timeout - pod:bare -- tcp "$FORBID4" 443 500

F=$W_TMP/follow.out
pod_is() { echo 'o.get("pod_namespace") == "'"$1"'" and o.get("pod_name") == "'"$2"'"'; }
REF='o["event"] == "refusal"'
t_check "metadata: egress, table pod, refused, tcp $WEB4 -> $MD4:80, the rule's comment" within 10000 lines "$F" \
	"$REF and $(pod_is sandboxes web) and o['category'] == 'metadata' and o['direction'] == 'egress' and o['table'] == 'pod' and o['verdict'] == 'refused' and o['proto'] == 'tcp' and o['src'] == '$WEB4' and o['dst'] == '$MD4' and o['dport'] == 80 and isinstance(o['sport'], int) and o['comment'] == 'cloud metadata: TCP reset, so connect() fails at once'"
t_check "egress: tcp $WEB4 -> $FORBID4:443" within 10000 lines "$F" \
	"$REF and $(pod_is sandboxes web) and o['category'] == 'egress' and o['table'] == 'pod' and o['dst'] == '$FORBID4' and o['dport'] == 443 and o['comment'].startswith('egress not allowed')"
t_check "ingress: direction ingress, $STRANGER4 -> $WEB4:8080, drop" within 10000 lines "$F" \
	"$REF and $(pod_is sandboxes web) and o['category'] == 'ingress' and o['direction'] == 'ingress' and o['src'] == '$STRANGER4' and o['dst'] == '$WEB4' and o['dport'] == 8080 and o['comment'] == 'ingress not allowed: drop'" 1
t_check "source: udp from 10.244.1.250 (not the pod's), drop" within 10000 lines "$F" \
	"$REF and $(pod_is sandboxes web) and o['category'] == 'source' and o['src'] == '10.244.1.250' and o['proto'] == 'udp' and o['comment'] == \"source address not the pod's: drop\""
t_check "dns-refused: udp $WEB4 -> $DNSL:53, the name asked, the agent's answer" within 10000 lines "$F" \
	"$REF and $(pod_is sandboxes web) and o['category'] == 'dns-refused' and o['table'] == 'pod' and o['dst'] == '$DNSL' and o['dport'] == 53 and o['query'] == 'leak.example' and o['qtype'] == 1 and 'NXDOMAIN' in o['comment']"
t_check "would_deny: aud's connect let through, verdict would_deny, AUDIT in the comment" within 10000 lines "$F" \
	"$REF and $(pod_is staging aud) and o['category'] == 'egress' and o['verdict'] == 'would_deny' and o['dst'] == '$FORBID4' and 'AUDIT' in o['comment']" 1
t_check "guard: the packet-socket frame, table guard, category raw" within 10000 lines "$F" \
	"$REF and $(pod_is sandboxes web) and o['table'] == 'guard' and o['category'] == 'raw' and o['dst'] == '$FORBID4' and o['comment'] == 'frame not allowed: drop'"
t_check "node side: bare's connect, table node, category host, tcp -> $FORBID4:443" within 10000 lines "$F" \
	"$REF and $(pod_is sandboxes bare) and o['table'] == 'node' and o['category'] == 'host' and o['src'] == '$BARE4' and o['dst'] == '$FORBID4' and o['dport'] == 443 and o['comment'] == 'frame not allowed: drop'" 1
t_check "every line of --json: the documented fields" "$PY" - "$F" <<'PY'
import json, re, sys
n = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["ts"]), o
    if o["event"] != "refusal":
        continue
    n += 1
    assert set(o) >= {"ts", "event", "seq", "pod_namespace", "pod_name", "direction", "table", "category",
                      "verdict", "comment"}, o
    assert o["direction"] in ("egress", "ingress") and o["table"] in ("pod", "guard", "node"), o
    assert o["verdict"] in ("refused", "would_deny"), o
print(n, "refusal lines, each with its fields")
PY
text_line() {
	ob --pod sandboxes/web --category egress >"$W_TMP/text.out" 2>"$W_TMP/text.err" || return 1
	cat "$W_TMP/text.out" "$W_TMP/text.err"
	grep -Eq "^[0-9-]+T[0-9:.]+Z sandboxes/web egress pod egress REFUSED tcp $WEB4:[0-9]+ -> $FORBID4:443 \(egress not allowed: TCP reset, so connect\(\) fails at once\)$" "$W_TMP/text.out" &&
		grep -q "the agent watches 4 of the node's 4 enforced pods" "$W_TMP/text.err"
}
t_check "text: one line per packet (time pod direction table category verdict proto src -> dst (comment))" text_line

# ---------------------------------------------------------------------------
section "--pod, --category, --since"
ob --json --pod sandboxes/web >"$W_TMP/pod.out"
t_check "--pod sandboxes/web: only web's refusals" lines "$W_TMP/pod.out" "$REF and not ($(pod_is sandboxes web))" 0
t_check "... and all of them (metadata, egress, ingress, source, dns-refused, raw)" "$PY" -c '
import json, sys
cats = {json.loads(l).get("category") for l in open(sys.argv[1])} - {None}
want = {"metadata", "egress", "ingress", "source", "dns-refused", "raw"}
print(sorted(cats))
sys.exit(0 if want <= cats else 1)' "$W_TMP/pod.out"
ob --json --category metadata >"$W_TMP/cat.out"
t_check "--category metadata: metadata lines only" lines "$W_TMP/cat.out" "$REF and o['category'] != 'metadata'" 0
t_check "... and there are some" grep -q '"category":"metadata"' "$W_TMP/cat.out"
ob --json --category would_deny >"$W_TMP/wd.out"
# (aud's IPv6 MLD reports are would_deny too: the refusals issue 22 keeps open)
t_check "--category would_deny: aud's only, its connect among them" lines "$W_TMP/wd.out" "$REF and not ($(pod_is staging aud) and o['verdict'] == 'would_deny')" 0
t_check "... its connect to $FORBID4: one SYN in its own table" lines "$W_TMP/wd.out" "$REF and o['dst'] == '$FORBID4' and o['table'] == 'pod'" 1
# The stateless guard and node side see every packet of the connection.
t_check "... and in the guard's and the node side's (each packet: they keep no state)" "$PY" -c '
import json, sys
t = {json.loads(l).get("table") for l in open(sys.argv[1]) if json.loads(l).get("dst") == sys.argv[2]}
print(sorted(t))
sys.exit(0 if t == {"pod", "guard", "node"} else 1)' "$W_TMP/wd.out" "$FORBID4"
t_check_not "--category sideways: refused (exit 2)" ob --category sideways
sleep 1.5
SINCE_T=$(now_ms)
expect "web: $FORBID4:443 again (after a pause)" refused 1000 pod:web -- tcp "$FORBID4" 443 2000
since_rows() {
	ob --json --since 1s >"$W_TMP/since.out" || return 1
	lines "$W_TMP/since.out" "$REF and o['category'] == 'egress' and o['dst'] == '$FORBID4' and o['table'] == 'pod'" 1
}
t_check "--since 1s: only the refusal after the pause" within 10000 since_rows
ob --json --since 10m >"$W_TMP/since10.out"
t_check "--since 10m: the earlier one too" lines "$W_TMP/since10.out" "$REF and o['category'] == 'egress' and o['dst'] == '$FORBID4' and $(pod_is sandboxes web) and o['table'] == 'pod'" 2
t_check_not "--since 5x: refused" ob --since 5x
t_check "--follow got the later refusal too" within 10000 lines "$F" \
	"$REF and $(pod_is sandboxes web) and o['category'] == 'egress' and o['table'] == 'pod' and o['dst'] == '$FORBID4'" 2
info "the follower's first line came $(($(now_ms) - T_START)) ms before this row (since $SINCE_T)"

# ---------------------------------------------------------------------------
section "a flood: rate-limited in the kernel, the stream says what it skipped"
stat_of() { "$NG_BIN" stats --netns "$(pod_netns_path web)"; }
stat_of >"$W_TMP/s0.json"
FLOOD=3000 F_T0=$(now_ms)
pod_exec web "$PY" - "$FORBID4" "$FLOOD" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 40999))
for _ in range(int(sys.argv[2])):
    try:
        s.sendto(b"x" * 16, (sys.argv[1], 9999))
    except OSError:
        pass
PY
F_WALL=$(($(now_ms) - F_T0))
stat_of >"$W_TMP/s1.json"
D_EGRESS=$("$PY" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); print(b["denied"]["egress"]["packets"]-a["denied"]["egress"]["packets"])' "$W_TMP/s0.json" "$W_TMP/s1.json")
D_SKIP=$("$PY" -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); print(b["log_skipped"]-a["log_skipped"])' "$W_TMP/s0.json" "$W_TMP/s1.json")
t_check "the kernel counted every packet (egress_denied +$D_EGRESS >= $FLOOD)" test "$D_EGRESS" -ge "$FLOOD"
FL='o["event"] == "refusal" and o.get("sport") == 40999'
SK='o["event"] == "skipped" and o["pod_name"] == "web" and o["table"] == "pod"'
skipped_sum() { "$PY" -c '
import json, sys
print(sum(json.loads(l)["skipped"] for l in open(sys.argv[1]) if eval(sys.argv[2], {"o": json.loads(l)})))' "$F" "$SK"; }
settled() { [[ $(skipped_sum) -ge $D_SKIP ]]; }
t_check "the stream says how many the limit held back (skipped lines reach $D_SKIP)" within 15000 settled
N_FL=$(count_lines "$F" "$FL")
MAX_FL=$((BURST + (RATE * F_WALL + 999) / 1000 + 1))
t_check "the flood's lines stay within the table's limit: $N_FL <= $MAX_FL ($F_WALL ms)" test "$N_FL" -le "$MAX_FL" -a "$N_FL" -ge 1
t_check "logged + skipped = counted: $N_FL + $(skipped_sum) = $D_EGRESS" test $((N_FL + $(skipped_sum))) -eq "$D_EGRESS"
t_check "a skipped line: the pod, the table, the count, why" lines "$F" "$SK and o['skipped'] > 0 and 'log.ratePerSecond' in o['why']" "$(count_lines "$F" "$SK")"

section "a reader that stops reading: dropped for it, nobody else waits"
bg_stop "$FOLLOW_PID" # its file would take the loud pod's every line
POD_CONFLIST=$LOUD t_check "ADD loud (log: 100000/s)" pod_add loud
t_check "the agent watches loud" within 30000 watched 5
# A follower that asks and then reads nothing for a while.
cat >"$W_TMP/stalled.py" <<'PY'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"op":"observe","follow":true,"history":false,"since_ms":0}\n')
time.sleep(8)                     # the ring wraps meanwhile
s.settimeout(5)
buf = b""
end = time.time() + 10
while time.time() < end and b'"dropped"' not in buf:
    try:
        d = s.recv(65536)
    except socket.timeout:
        break
    if not d:
        break
    buf += d
open(sys.argv[2], "wb").write(buf)
PY
bg_start "$PY" "$W_TMP/stalled.py" "$STATE/agent.sock" "$W_TMP/stalled.out"
STALLED=$BG_PID
sleep 1
L_T0=$(now_ms)
pod_exec loud "$PY" - "$FORBID4" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
end = time.time() + 4
while time.time() < end:
    try:
        s.sendto(b"y", (sys.argv[1], 9998))
    except OSError:
        pass
PY
LOUDP=$!
_track_pid "$LOUDP"
sleep 1
# Meanwhile: a DNS answer the learner must commit, and another reader.
out=$(pod_exec web "$PY" "$E2E_DIR/dnsrace.py" "$DNSL" udp 1 api.obs.test 443)
t_row "during the flood and the stalled reader: web resolves and connects" "$out" "$([[ $out == "answers 1 connects 1 "* ]] && echo 0 || echo 1)"
other_reader() { ob --json --pod sandboxes/web --category egress --count 1 --duration 10 >/dev/null; }
L_OTHER=$(now_ms)
t_check "... another reader gets its answer" other_reader
info "that reader took $(($(now_ms) - L_OTHER)) ms"
wait "$LOUDP" || true
wait "$STALLED" || true
t_check "the stalled reader, once it reads: told how many events it missed (dropped)" "$PY" -c '
import json, sys
# Complete lines only: the reader stopped as soon as it saw "dropped".
d = [json.loads(l) for l in open(sys.argv[1]).read().split("\n")[:-1] if l.strip()]
drop = [o for o in d if o["event"] == "dropped"]
print(len(d), "lines,", drop[:1])
sys.exit(0 if drop and drop[0]["dropped"] > 0 and "fell behind" in drop[0]["why"] else 1)' "$W_TMP/stalled.out"
info "the loud pod's flood: $(($(now_ms) - L_T0)) ms"
t_check "the agent still serves (/healthz)" agent_ready 5000

# ---------------------------------------------------------------------------
section "status --names: what a pod learned, against the kernel's sets"
out=$(pod_exec web "$PY" "$E2E_DIR/dnsrace.py" "$DNSL" udp 1 api.obs.test 443)
t_row "web resolves api.obs.test and connects" "$out" "$([[ $out == "answers 1 connects 1 "* ]] && echo 0 || echo 1)"
pod_exec web "$PY" "$E2E_DIR/dnsrace.py" "$DNSL" udp 1 live.obs.test 9443 --hold 40 >"$W_TMP/live.out" &
LIVE=$!
_track_pid "$LIVE"
names_json() { "$NG_BIN" status --names sandboxes/web --json --state-dir "$STATE" >"$W_TMP/names.json"; }
# kernel_left TABLE-ARGS ADDR PORT: seconds the kernel's element has left
# ("expires 27s" / "expires 1m2s"), from `nft list set`.
kernel_left() {
	local ns=$1 fam=$2 table=$3 addr=$4 port=$5 line
	line=$(nsenter --net="$ns" nft list set "$fam" "$table" names_v4 | tr ',' '\n' | grep -F "$addr . tcp . $port ") || return 1
	"$PY" -c '
import re, sys
m = re.search(r"expires ((\d+)m)?((\d+)s)?", sys.argv[1])
print(int(m.group(2) or 0) * 60 + int(m.group(4) or 0))' "$line"
}
against_kernel() { # NAME ADDR PORT: the view's row and the kernel's sets agree
	names_json || return 1
	local pod_k node_k
	pod_k=$(kernel_left "$(pod_netns_path web)" inet boxxkite_netguard "$2" "$3") || { echo "not in the pod's set" && return 1; }
	node_k=$(kernel_left "$(_ns_path "$W_NODE")" netdev "$(pod_host_table web)" "$2" "$3") || { echo "not in the node side's set" && return 1; }
	"$PY" - "$W_TMP/names.json" "$1" "$2" "$pod_k" "$node_k" <<'PY'
import json, sys
doc, name, addr, pod_k, node_k = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
pod = doc["pods"][0]
rows = [a for n in pod["names"] if n["name"] == name for a in n["addresses"] if a["address"] == addr]
assert len(rows) == 1, pod
r = rows[0]
print(r, "kernel: pod", pod_k, "node", node_k)
assert r["tables"] == ["pod", "guard", "node"], r
# The agent's view is never later than the kernel's (a second less at most),
# and the two agree within a few seconds (the view is up to a second old).
assert abs(r["podSecondsLeft"] - pod_k) <= 3 and abs(r["nodeSecondsLeft"] - node_k) <= 3, r
assert r["proto"] == "tcp", r
PY
}
t_check "api.obs.test -> 10.21.0.1: pod, guard and node hold it, expiries as the kernel's" within 10000 against_kernel api.obs.test 10.21.0.1 443
t_check "live.obs.test -> 10.21.0.2 (a connection holds it)" within 10000 against_kernel live.obs.test 10.21.0.2 9443
info "waiting for live.obs.test's element to come due (30 s lifetime, 15 s window)"
kept() {
	names_json || return 1
	"$PY" - "$W_TMP/names.json" <<'PY'
import json, sys
pod = json.load(open(sys.argv[1]))["pods"][0]
r = [a for n in pod["names"] if n["name"] == "live.obs.test" for a in n["addresses"]]
print(r)
sys.exit(0 if r and r[0]["keptAlive"] and r[0]["podSecondsLeft"] > 16 else 1)
PY
}
t_check "live.obs.test: kept alive by its live connection (lease renewed)" within 40000 kept
t_check "... and the kernel agrees after the renewal" against_kernel live.obs.test 10.21.0.2 9443
t_check "api.obs.test: not kept alive (no connection)" "$PY" -c '
import json, sys
pod = json.load(open(sys.argv[1]))["pods"][0]
r = [a for n in pod["names"] if n["name"] == "api.obs.test" for a in n["addresses"]]
sys.exit(0 if r and not r[0]["keptAlive"] else 1)' "$W_TMP/names.json"
table_out() {
	"$NG_BIN" status --names --state-dir "$STATE" >"$W_TMP/names.txt" || return 1
	cat "$W_TMP/names.txt"
	grep -q "^sandboxes/web$" "$W_TMP/names.txt" && grep -q "^  api.obs.test tcp/443: 1 address(es)" "$W_TMP/names.txt" &&
		grep -Eq "^    10.21.0.1 +tcp/443 +pod\+guard\+node +pod [0-9]+s node [0-9]+s$" "$W_TMP/names.txt" &&
		grep -Eq "^    10.21.0.2 .*kept alive by a live connection" "$W_TMP/names.txt" &&
		grep -q "^sandboxes/solo: learns no names" "$W_TMP/names.txt"
}
t_check "status --names (every pod): the table" table_out
nosuch() {
	local rc=0
	"$NG_BIN" status --names nosuch/pod --state-dir "$STATE" 2>"$W_TMP/ns.err" || rc=$?
	cat "$W_TMP/ns.err"
	((rc == 1)) && grep -q "no enforced pod nosuch/pod" "$W_TMP/ns.err"
}
t_check "status --names nosuch/pod: exit 1, says so" nosuch
wait "$LIVE" || true
t_row "the live connection lasted across the renewal" "$(cat "$W_TMP/live.out")" \
	"$([[ $(cat "$W_TMP/live.out") == "echoes 40 of 40" ]] && echo 0 || echo 1)"

# ---------------------------------------------------------------------------
section "the agent gone"
bg_start "$NG_BIN" observe --state-dir "$STATE" --follow >/dev/null 2>"$W_TMP/gone.err"
GONE_PID=$BG_PID
t_check "a follower is connected" within 30000 grep -q "the agent watches" "$W_TMP/gone.err"
bg_stop "$AGENT_PID"
gone_rc=0
wait "$GONE_PID" || gone_rc=$?
t_row "... its stream ends with the agent: exit 1, says so" "exit $gone_rc: $(tail -1 "$W_TMP/gone.err")" \
	"$( ((gone_rc == 1)) && grep -q "the agent closed the stream" "$W_TMP/gone.err" && echo 0 || echo 1)"
t_check_not "agent.sock removed with the agent" test -e "$STATE/agent.sock"
nonames() {
	local rc=0
	"$NG_BIN" status --names --state-dir "$STATE" 2>"$W_TMP/nn.err" || rc=$?
	cat "$W_TMP/nn.err"
	((rc == 1)) && grep -q "no agent serves" "$W_TMP/nn.err"
}
t_check "status --names without the agent: exit 1, says the names are the agent's" nonames
for p in web aud bare loud; do pod_del "$p" >/dev/null 2>&1 || true; done
POD_CONFLIST=$RESOLVE pod_del solo >/dev/null || true

t_summary
