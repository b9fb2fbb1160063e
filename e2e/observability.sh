#!/usr/bin/env bash
# observability: what the ruleset denied, seen from the node (issue 5,
# part 2), on live pods of the namespace world:
#   - `stats` JSON and Prometheus text (checked by `promtool check metrics`,
#     read back with python3-prometheus-client): the counters move by at least what the test denied,
#     per category, and carry the pod's labels;
#   - NFLOG (a conflist with log.nflogGroup): `logs` prints one JSON line per
#     logged packet naming category, pod, addresses and ports; under a flood
#     the lines stay within the table's rate limit while the counter counts
#     every packet, and what was not logged is counted in log_skipped;
#     logging is on by default (group 65054), off with "log": false;
#   - the decision log: one JSON line per CNI call, with the documented
#     fields, for enforced, skipped, refused, verified, differs and deleted.
# Every denied packet targets a namespace of the world. Ends with
# "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "observability.sh: needs root (network namespaces)" >&2 && exit 1; }

section() { printf '\n== %s\n' "$1"; }
info() { printf '   info: %s\n' "$*"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Every CNI call that reaches netguard goes through ng, so that the decision
# log can be held to exactly one line per call.
NG_CALLS=0
ng() {
	NG_CALLS=$((NG_CALLS + 1))
	"$@"
}

# stats_json OUT ARGS...: `stats ARGS` into OUT.json (OUT.rc, OUT.err).
stats_to() {
	local out=$W_TMP/$1 rc=0
	shift
	"$NG_BIN" stats "$@" >"$out.json" 2>"$out.err" || rc=$?
	echo "$rc" >"$out.rc"
}
# jq-like reads without jq: jget OUT PYTHON-EXPR on d.
jget() { "$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$W_TMP/$1.json" "$2"; }
# jtrue OUT PYTHON-EXPR: EXPR holds of d (shows d when not).
jtrue() {
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
if not eval(sys.argv[2]):
    print("false: " + sys.argv[2])
    print(json.dumps(d, indent=1)[:2500])
    sys.exit(1)
' "$W_TMP/$1.json" "$2"
}
ge() { (($1 >= $2)) || { echo "$1 < $2" && return 1; }; }

START_MS=$(now_ms)
world_up ngv-
LOGCONF=$W_TMP/net.d/pod-network-nflog.conflist
GROUP=42 RATE=5 BURST=10 # as in e2e/conf/pod-network-nflog.conflist

# ---------------------------------------------------------------------------
section "stats: deny counters as JSON"
t_check "ADD web (enforced)" ng pod_add web
WEB=$(pod_netns_path web)
IP4=$(pod_ip web 4)
stats_to s0 --netns "$WEB"
t_check "stats --netns: exit 0" test "$(cat "$W_TMP/s0.rc")" = 0
t_check "JSON: netns, pod_namespace, pod_name" \
	jtrue s0 'd["netns"] == "'"$WEB"'" and d["pod_namespace"] == "sandboxes" and d["pod_name"] == "web"'
t_check "JSON: denied.{metadata,egress,ingress,source,raw}.{packets,bytes} integers" \
	jtrue s0 'sorted(d["denied"]) == ["egress", "ingress", "metadata", "raw", "source"] and all(sorted(v) == ["bytes", "packets"] and all(type(x) is int and x >= 0 for x in v.values()) for v in d["denied"].values())'

N=5
for ((i = 0; i < N; i++)); do
	pod_exec web "$NPROBE" tcp "$MD4" 80 1000 >/dev/null || true
	pod_exec web "$NPROBE" tcp "$FORBID4" 443 1000 >/dev/null || true
done
stats_to s1 --netns "$WEB"
for cat in metadata egress; do
	b=$(jget s0 'd["denied"]["'$cat'"]["packets"]') a=$(jget s1 'd["denied"]["'$cat'"]["packets"]')
	t_check "$N denied connects: $cat packets +$N or more ($b -> $a)" ge $((a - b)) $N
	b=$(jget s0 'd["denied"]["'$cat'"]["bytes"]') a=$(jget s1 'd["denied"]["'$cat'"]["bytes"]')
	t_check "...$cat bytes grew by at least $N SYNs ($b -> $a)" ge $((a - b)) $((N * 40))
done
expect "stranger $STRANGER4 -> web:8080 dropped" timeout - peer:stranger -- tcp "$IP4" 8080 300
stats_to s2 --netns "$WEB"
b=$(jget s1 'd["denied"]["ingress"]["packets"]') a=$(jget s2 'd["denied"]["ingress"]["packets"]')
t_check "the stranger's attempt: ingress packets +1 or more ($b -> $a)" ge $((a - b)) 1
# A frame written through a packet socket, to a forbidden host: the
# netdev guard's counter.
pod_exec web "$PY" "$E2E_DIR/rawframe.py" send --ifname eth0 --dst-mac ff:ff:ff:ff:ff:ff --src "$IP4" \
	--dst "$FORBID4" --marker NGRAW-stats >/dev/null
stats_to s3 --netns "$WEB"
b=$(jget s2 'd["denied"]["raw"]["packets"]') a=$(jget s3 'd["denied"]["raw"]["packets"]')
t_check "a packet-socket frame to $FORBID4: raw packets +1 ($b -> $a)" ge $((a - b)) 1

# --pid, as on a node: a process in the pod.
bg_start nsenter --net="$WEB" sleep 30
P_POD=$BG_PID
poll 30000 grep -qx sleep "/proc/$P_POD/comm" || true # a correctness bound: its start
stats_to spid --pid "$P_POD"
t_check "stats --pid (a process in the pod): same pod" \
	jtrue spid 'd["netns"] == "/proc/'"$P_POD"'/ns/net" and d["pod_name"] == "web"'
bg_stop "$P_POD"

# ---------------------------------------------------------------------------
section "stats --prometheus: the text exposition format, by promtool"
# promtool_ok FILE: `promtool check metrics` (Debian's prometheus package,
# the format's own checker) accepts FILE: exit 0, no finding printed (it
# also lints: HELP present, counter names ending in _total...).
promtool_ok() {
	local out rc=0
	out=$(promtool check metrics <"$1" 2>&1) || rc=$?
	if ((rc != 0)) || [[ -n $out ]]; then
		echo "promtool (exit $rc): $out"
		return 1
	fi
}
prom_check() { # NETNS_PATH: promtool accepts it, and it carries what the JSON says
	local ns=$1
	"$NG_BIN" stats --netns "$ns" >"$W_TMP/pj.json" || return 1
	"$NG_BIN" stats --netns "$ns" --prometheus >"$W_TMP/prom.txt" || return 1
	promtool_ok "$W_TMP/prom.txt" || return 1
	# The values, read back with the Prometheus project's own Python parser
	# (Debian python3-prometheus-client).
	"$PY" - "$W_TMP/prom.txt" "$W_TMP/pj.json" "$ns" <<'PY'
import json, sys
from prometheus_client.parser import text_string_to_metric_families
fams_in = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
j, ns = json.load(open(sys.argv[2])), sys.argv[3]
fams = {"boxxkite_netguard_denied_packets": "packets", "boxxkite_netguard_denied_bytes": "bytes"}
bad = []
for fam, field in fams.items():
    f = fams_in.get(fam)
    if f is None or f.type != "counter" or not f.documentation:
        bad.append("%s: %s" % (fam, "missing" if f is None else "type %s, help %r" % (f.type, f.documentation)))
        continue
    got = {}
    for s in f.samples:
        if s.name != fam + "_total":
            bad.append("sample %s in %s" % (s.name, fam))
            continue
        l = s.labels
        # the agent's labels (README "/metrics"), never a netns path
        if set(l) != {"pod_namespace", "pod_name", "sandbox_id", "table", "side", "category"}:
            bad.append("labels %s" % sorted(l))
        if (l.get("pod_namespace"), l.get("pod_name"), l.get("side")) != (j["pod_namespace"], j["pod_name"], "pod"):
            bad.append("labels %s" % l)
        if l.get("table") != ("netdev" if l.get("category") == "raw" else "inet") or len(l.get("sandbox_id", "")) != 12:
            bad.append("labels %s" % l)
        got[l.get("category")] = s.value
    want = {c: float(v[field]) for c, v in j["denied"].items()}
    if got != want:
        bad.append("%s: %s, JSON says %s" % (fam, got, want))
extra = set(fams_in) - set(fams)
if extra:
    bad.append("unexpected families %s" % extra)
print("\n".join(bad) or "ok: %d families" % len(fams_in))
sys.exit(1 if bad else 0)
PY
}
t_check "promtool accepts it; counter families, labels and values as the JSON" prom_check "$WEB"
# A netns path with a quote and a backslash: read as any other, no path in a label.
ODD=$W_TMP/odd\"ns\\name
ln -s "$WEB" "$ODD"
t_check "a netns path with \" and \\: the same series, no path in any label" prom_check "$ODD"
# The checker is the authority, and strict: what it must refuse.
promtool_refuses() { # TEXT (printf format)
	# shellcheck disable=SC2059 # the format is the test's input
	printf "$1" >"$W_TMP/bad.txt"
	! promtool_ok "$W_TMP/bad.txt" >/dev/null
}
t_check "promtool refuses a bad label escape" promtool_refuses '# HELP x_total h\n# TYPE x_total counter\nx_total{a="\\q"} 1\n'
t_check "...a value that is not a number" promtool_refuses '# HELP x_total h\n# TYPE x_total counter\nx_total one\n'
t_check "...a missing final newline" promtool_refuses '# HELP x_total h\n# TYPE x_total counter\nx_total 1'
t_check "...a family without HELP" promtool_refuses '# TYPE x_total counter\nx_total 1\n'
both_pods() { # two pods' output concatenated is not one scrape (the node agent's /metrics is)
	cat "$W_TMP/prom.txt" "$W_TMP/prom.txt" >"$W_TMP/two.txt"
	! promtool_ok "$W_TMP/two.txt" >/dev/null
}
t_check "...two pods' stats --prometheus concatenated (a second HELP)" both_pods

t_check "ADD plain (namespace default: not selected)" ng pod_add plain default
no_table_stats() {
	local out rc=0
	out=$("$NG_BIN" stats --netns "$(pod_netns_path plain)" 2>"$W_TMP/nt.err") || rc=$?
	cat "$W_TMP/nt.err"
	[[ $rc == 1 && -z $out ]] && grep -q "no boxxkite-netguard table" "$W_TMP/nt.err"
}
t_check "stats on the unenforced pod: exit 1, says no table" no_table_stats

# ---------------------------------------------------------------------------
section "NFLOG: log.nflogGroup $GROUP, ratePerSecond $RATE, burst $BURST"
# pod_add and pod_del of lg use the nflog conflist.
lg_cni() { POD_CONFLIST=$LOGCONF ng "$@"; }
t_check "ADD lg with the nflog conflist" lg_cni pod_add lg
LG=$(pod_netns_path lg)
LG4=$(pod_ip lg 4) LG6=$(pod_ip lg 6)
table_of() { pod_exec "$1" nft list table inet boxxkite_netguard; }
log_rules() {
	local t
	t=$(table_of lg)
	for c in metadata egress ingress source; do
		if ! grep -q "chain log_$c {" <<<"$t" || ! grep -q "jump log_$c" <<<"$t"; then
			echo "no log chain for $c" && return 1
		fi
		grep -q "log prefix \"netguard $c sandboxes/lg: \" group $GROUP" <<<"$t" ||
			{ echo "no log rule for $c" && return 1; }
	done
	[[ $(grep -c 'limit name "log_limit" counter name "log_skipped" return' <<<"$t") == 4 ]] ||
		{ echo "not 4 rules returning over the limit" && return 1; }
}
t_check "a log chain per refuse chain, prefix naming category and pod, group $GROUP" log_rules
one_limit() {
	local t
	t=$(table_of lg)
	if [[ $(grep -c "limit log_limit {" <<<"$t") != 1 ]] ||
		! grep -q "rate over $RATE/second burst $BURST packets" <<<"$t" ||
		! grep -q "counter log_skipped {" <<<"$t"; then
		echo "$t" | grep -A3 -E "limit|log_skipped"
		return 1
	fi
}
t_check "one limit for the whole table: rate over $RATE/second burst $BURST, and log_skipped" one_limit
t_check "no log key (pod web): refusals logged to group 65054, the default" \
	grep -q 'log prefix "netguard egress sandboxes/web: " group 65054' <(table_of web)
NOLOG=$(conf_variant nolog 'e["log"] = False')
POD_CONFLIST=$NOLOG ng pod_add quiet >/dev/null
no_log() {
	local t
	t=$(table_of quiet)
	! grep -qE "log prefix|log_limit|log_skipped|chain log_" <<<"$t" || { echo "$t" | grep -E "log" && return 1; }
}
t_check '"log": false (pod quiet): no log chain, limit or counter' no_log
POD_CONFLIST=$NOLOG ng pod_del quiet >/dev/null

# The reader binds the group in the pod's namespace (NFLOG delivers there).
# nfnetlink_log sends its queue to the reader after up to 1 s: the reader is
# stopped (TERM) once nothing is queued any more. --duration is a backstop.
bg_start "$NG_BIN" logs --netns "$LG" --group "$GROUP" --duration 30 >"$W_TMP/nflog.out" 2>"$W_TMP/nflog.err"
LOGS_PID=$BG_PID
LOGS_T0=$(now_ms)
# /proc/net/netfilter/nfnetlink_log (per namespace): group portid qlen ...
bound() { pod_exec lg cat /proc/net/netfilter/nfnetlink_log 2>/dev/null | awk -v g="$GROUP" '$1 == g {f = 1} END {exit !f}'; }
wait_bound() { poll 30000 bound; } # a correctness bound: the reader's start
# Messages queued in the kernel for the group, not yet sent to the reader.
queued() { pod_exec lg cat /proc/net/netfilter/nfnetlink_log 2>/dev/null | awk -v g="$GROUP" '$1 == g {print $3}'; }
wait_bound
t_check "logs: group $GROUP bound in the pod's namespace" bound

# Denied attempts with known source ports, so each log line can be matched.
pod_exec lg "$PY" - "$FORBID4" "$FORBID6" "$MD4" >"$W_TMP/denied.out" 2>&1 <<'PY' || true
import socket, sys
for fam, dst, port, sport in ((socket.AF_INET, sys.argv[1], 443, 40443), (socket.AF_INET6, sys.argv[2], 443, 40446),
                              (socket.AF_INET, sys.argv[3], 80, 40080)):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", sport))
    s.settimeout(1)
    try:
        s.connect((dst, port))
        print(dst, "connected")
    except OSError as e:
        print(dst, type(e).__name__)
    s.close()
PY
peer_exec stranger "$PY" - "$LG4" >>"$W_TMP/denied.out" 2>&1 <<'PY' || true
import socket, sys
s = socket.socket()
s.bind(("0.0.0.0", 40808))
s.settimeout(0.3)
try:
    s.connect((sys.argv[1], 8080))
    print("ingress connected")
except OSError as e:
    print("ingress", type(e).__name__)
PY
t_check "denied connects refused (egress v4/v6, metadata), ingress dropped" \
	test "$(tr '\n' ' ' <"$W_TMP/denied.out")" = "$FORBID4 ConnectionRefusedError $FORBID6 ConnectionRefusedError $MD4 ConnectionRefusedError ingress TimeoutError "

# The flood: 2000 UDP datagrams as fast as the pod can send them; each send
# fails at once with EPERM (rejected in the output hook).
stats_to f0 --netns "$LG"
FLOOD=2000
flood() { # SPORT COUNT INTERVAL_S: prints "sent errors elapsed_s"
	pod_exec lg "$PY" - "$FORBID4" "$@" <<'PY'
import errno, socket, sys, time
dst, sport, n, gap = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", sport))
eperm = 0
t0 = time.monotonic()
for i in range(n):
    try:
        s.sendto(b"x" * 32, (dst, 9999))
    except PermissionError:
        eperm += 1
    if gap:
        time.sleep(gap)
print(n, eperm, "%.4f" % (time.monotonic() - t0))
PY
}
f_t0=$(now_ms)
read -r _ F_EPERM F_EL < <(flood 40999 "$FLOOD" 0)
F_WALL=$(($(now_ms) - f_t0))
stats_to f1 --netns "$LG"
b=$(jget f0 'd["denied"]["egress"]["packets"]') a=$(jget f1 'd["denied"]["egress"]["packets"]')
t_check "flood: every one of $FLOOD sends failed with EPERM ($F_EPERM)" test "$F_EPERM" = "$FLOOD"
t_check "flood: egress_denied counted every packet (+$((a - b)))" ge $((a - b)) "$FLOOD"
F_DENIED=$((a - b))
F_SKIPPED=$(($(jget f1 'd["log_skipped"]') - $(jget f0 'd["log_skipped"]')))
# Then a trickle of 1 s at 200/s: the limiter refills at RATE per second.
t_t0=$(now_ms)
read -r _ _ T_EL < <(flood 40998 200 0.005)
T_WALL=$(($(now_ms) - t_t0))

for _ in {1..150}; do
	[[ $(queued) == 0 ]] && break
	sleep 0.02
done
sleep 0.2 # the reader prints what it received
kill -TERM "$LOGS_PID"
wait "$LOGS_PID" && LOGS_RC=0 || LOGS_RC=$?
LOGS_MS=$(($(now_ms) - LOGS_T0))
# shellcheck disable=SC2016
t_check "logs: exit 0 on TERM, nothing on stderr" \
	bash -c '[[ $1 == 0 && ! -s $2 ]] || { cat "$2"; exit 1; }' _ "$LOGS_RC" "$W_TMP/nflog.err"

# lines SPORT PROTO: the log lines of one attempt, as JSON (one per line).
LOGQ_PY='
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
want = json.loads(sys.argv[2])
hits = [l for l in lines if all(l.get(k) == v for k, v in want.items())]
'
log_line() { # JSON-OF-WANTED-FIELDS: exactly one such line
	"$PY" -c "$LOGQ_PY"'
print(len(hits), "line(s) with", want)
sys.exit(0 if len(hits) == 1 else 1)' "$W_TMP/nflog.out" "$1" || { head -5 "$W_TMP/nflog.out" && return 1; }
}
log_count() { "$PY" -c "$LOGQ_PY"'
print(len(hits))' "$W_TMP/nflog.out" "$1"; }
well_formed() {
	"$PY" - "$W_TMP/nflog.out" "$GROUP" <<'PY'
import json, re, sys
n = 0
for l in open(sys.argv[1]):
    o = json.loads(l)
    if o["event"] != "refusal":  # the table's limit held some back: said so, no packet
        assert o["event"] == "skipped" and o["skipped"] > 0, o
        continue
    n += 1
    assert set(o) >= {"ts", "group", "prefix", "src", "dst", "proto"}, o
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["ts"]), o
    assert o["group"] == int(sys.argv[2]), o
    assert re.fullmatch(r"netguard (metadata|egress|ingress) sandboxes/lg: ", o["prefix"]), o
print(n, "refusal lines, all JSON with ts/group/prefix/src/dst/proto")
PY
}
t_check "every refusal line: JSON, ts, group $GROUP, prefix naming category and pod" well_formed
t_check "logs: a skipped line says how many the table's limit held back" "$PY" -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])]
s = [o for o in s if o["event"] == "skipped"]
print(s[:2])
sys.exit(0 if s and all(o["table"] == "pod" and "log.ratePerSecond" in o["why"] for o in s) else 1)' "$W_TMP/nflog.out"
t_check "egress tcp $LG4:40443 -> $FORBID4:443" log_line \
	'{"prefix":"netguard egress sandboxes/lg: ","src":"'"$LG4"'","dst":"'"$FORBID4"'","proto":"tcp","sport":40443,"dport":443}'
t_check "egress tcp [$LG6]:40446 -> [$FORBID6]:443" log_line \
	'{"prefix":"netguard egress sandboxes/lg: ","src":"'"$LG6"'","dst":"'"$FORBID6"'","proto":"tcp","sport":40446,"dport":443}'
t_check "metadata tcp $LG4:40080 -> $MD4:80" log_line \
	'{"prefix":"netguard metadata sandboxes/lg: ","src":"'"$LG4"'","dst":"'"$MD4"'","proto":"tcp","sport":40080,"dport":80}'
t_check "ingress tcp $STRANGER4:40808 -> $LG4:8080" log_line \
	'{"prefix":"netguard ingress sandboxes/lg: ","src":"'"$STRANGER4"'","dst":"'"$LG4"'","proto":"tcp","sport":40808,"dport":8080}'

within() { # N MIN MAX
	(($1 >= $2 && $1 <= $3)) || { echo "$1 not in [$2, $3]" && return 1; }
}
UDP='{"prefix":"netguard egress sandboxes/lg: ","src":"'"$LG4"'","dst":"'"$FORBID4"'","proto":"udp","dport":9999'
N_FLOOD=$(log_count "$UDP"',"sport":40999}')
N_TRICKLE=$(log_count "$UDP"',"sport":40998}')
N_ALL=$(grep -c '"event":"refusal"' "$W_TMP/nflog.out")
# At most BURST + RATE x elapsed (+1 for rounding); the bucket never holds
# more than BURST. Elapsed: the sender's wall time, an over-estimate.
max_f=$((BURST + (RATE * F_WALL + 999) / 1000 + 1))
t_check "flood of $FLOOD: $N_FLOOD lines, within 1..$max_f (${F_WALL} ms)" within "$N_FLOOD" 1 "$max_f"
# One limit object evaluated once per packet: what it let through was
# logged, the rest counted in log_skipped, exactly (the kernel's arithmetic).
t_check "flood: egress_denied +$F_DENIED = $N_FLOOD logged + $F_SKIPPED in log_skipped" \
	test "$F_DENIED" = $((N_FLOOD + F_SKIPPED))
max_t=$((BURST + (RATE * T_WALL + 999) / 1000 + 1))
min_t=$("$PY" -c "import math; print(max(1, math.floor($RATE * $T_EL) - 2))")
t_check "trickle of 200 over ${T_EL}s: $N_TRICKLE lines, within $min_t..$max_t" within "$N_TRICKLE" "$min_t" "$max_t"
max_all=$((BURST + (RATE * LOGS_MS + 999) / 1000 + 1))
t_check "all $N_ALL lines of the ${LOGS_MS} ms window <= $max_all" within "$N_ALL" 1 "$max_all"
info "flood: $FLOOD packets in ${F_EL}s (sender) -> $N_FLOOD log lines; trickle: 200 in ${T_EL}s -> $N_TRICKLE; window total $N_ALL"

second_reader() {
	local rc=0
	bg_start "$NG_BIN" logs --netns "$LG" --group "$GROUP" --duration 2 >/dev/null 2>&1
	local first=$BG_PID
	wait_bound
	"$NG_BIN" logs --netns "$LG" --group "$GROUP" --duration 0.2 >/dev/null 2>"$W_TMP/second.err" || rc=$?
	bg_stop "$first"
	cat "$W_TMP/second.err"
	((rc == 1)) && grep -q "another reader" "$W_TMP/second.err"
}
t_check "a second reader of the group: exit 1, says another reader has it" second_reader

# A packet denied well inside a --duration window must be printed before the
# window ends (the kernel queues log messages up to 1 s unless told not to).
# The table's one limiter has refilled since the flood (the rows between
# take seconds, at RATE/s): it logs this one.
short_window() {
	local rc=0 n
	bg_start "$NG_BIN" logs --netns "$LG" --group "$GROUP" --duration 1 >"$W_TMP/short.out" 2>&1
	local p=$BG_PID
	wait_bound || return 1
	pod_exec lg "$NPROBE" tcp "$MD4" 80 500 || true
	wait "$p" || rc=$?
	n=$(grep -c '"dst":"'"$MD4"'"' "$W_TMP/short.out") || true
	echo "exit $rc, $n line(s) for the connect"
	((rc == 0 && n == 1))
}
t_check "logs --duration 1: a packet denied at ~0.1 s is printed" short_window

# ---------------------------------------------------------------------------
section "decision log: one JSON line per CNI call"
t_check_not "ADD bad (grant outside the envelope) is refused" \
	ng pod_add bad "$ENFORCED_NS" '{"netguard.boxxkite.io/egress":"10.50.0.9:22"}'
t_check_not "...and leaves no table" pod_has_table bad
t_check "CHECK web passes" ng pod_check web
# Concurrent calls: O_APPEND writes, so the lines must not interleave.
pids=()
for _ in 1 2 3 4 5 6; do
	NG_CALLS=$((NG_CALLS + 1))
	pod_check web >/dev/null 2>&1 &
	pids+=("$!")
done
conc_ok=1
for p in "${pids[@]}"; do wait "$p" || conc_ok=0; done
t_check "6 concurrent CHECKs of web pass" test "$conc_ok" = 1
pod_exec web nft insert rule inet boxxkite_netguard egress ip daddr "$MD4" accept
t_check_not "CHECK web after a rule added by hand fails" ng pod_check web
t_check "DEL plain" ng pod_del plain
t_check "DEL lg" lg_cni pod_del lg
t_check "DEL bad" ng pod_del bad
t_check "DEL web" ng pod_del web
t_check "second DEL of web (no netns, no prevResult)" ng pod_del web --no-netns

dlog() { # [VERB DECISION POD [CODE]]: every line valid; with args, one such line exists
	"$PY" - "$W_TMP/netguard.log" "$W_TMP/pods" "$NG_CALLS" "$START_MS" "$@" <<'PY'
import datetime, json, os, re, sys
log, pods, calls, start_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
want = sys.argv[5:]
lines = open(log).read().split("\n")
assert lines[-1] == "", "the log does not end with a newline"
objs = []
DECISIONS = {"enforced", "skipped", "refused", "error", "deleted", "verified", "differs", "ready", "collected"}
ERRORS = {"refused", "error", "differs"}
now = datetime.datetime.now(datetime.timezone.utc).timestamp()
for n, l in enumerate(lines[:-1], 1):
    o = json.loads(l)
    where = "line %d: %s" % (n, l)
    assert o["plugin"] == "boxxkite-netguard", where
    assert list(o)[:6] == ["ts", "level", "msg", "plugin", "component", "event"], "structured-log head: " + where
    assert (o["component"], o["event"]) == ("plugin", "decision"), where
    assert o["level"] == ("error" if "code" in o else "info"), where
    assert o["msg"].startswith("%s %s" % (o["verb"], o["decision"])) and o["reason"] in o["msg"], where
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["ts"]), where
    ts = datetime.datetime.strptime(o["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc).timestamp()
    assert start_ms / 1000 - 1 <= ts <= now + 1, "ts outside the test's run: " + where
    assert o["verb"] in ("ADD", "DEL", "CHECK", "STATUS", "GC"), where
    assert o["decision"] in DECISIONS, where
    assert isinstance(o["reason"], str) and o["reason"], where
    for k in ("pod_namespace", "pod_name"):
        assert isinstance(o[k], str) and o[k], where
    pod = o["pod_name"]
    assert o["container_id"] == open(os.path.join(pods, pod, "id")).read().strip(), where
    assert type(o["duration_us"]) is int and 0 <= o["duration_us"] < 10_000_000, where
    assert ("code" in o) == (o["decision"] in ERRORS), "code iff an error: " + where
    if "code" in o:
        assert type(o["code"]) is int, where
    if "netns" in o:
        assert o["netns"].endswith("-pod-" + pod), where
    if o["verb"] == "ADD" and o["decision"] == "enforced":
        assert type(o["allow_elements"]) is int and type(o["name_elements"]) is int, where
    objs.append(o)
assert len(objs) == calls, "%d lines for %d calls" % (len(objs), calls)
if want:
    verb, decision, pod = want[:3]
    hits = [o for o in objs if (o["verb"], o["decision"], o["pod_name"]) == (verb, decision, pod)
            and (len(want) < 4 or o.get("code") == int(want[3]))]
    for o in hits[:2]:
        print(json.dumps(o)[:300])
    assert hits, "no %s line" % " ".join(want)
else:
    print("%d lines, one per call, all with the documented fields" % len(objs))
PY
}
t_check "every line has the documented fields; one line per call" dlog
t_check "every line of the decision log is of the one log schema (e2e/lib/logschema.py)" \
	"$PY" "$E2E_DIR/lib/logschema.py" plugin "$W_TMP/netguard.log"
t_check "ADD enforced web (with allow/name element counts)" dlog ADD enforced web
t_check "ADD enforced lg" dlog ADD enforced lg
t_check "ADD skipped plain" dlog ADD skipped plain
t_check "ADD refused bad, code 100" dlog ADD refused bad 100
t_check "CHECK verified web" dlog CHECK verified web
t_check "CHECK differs web, code 111" dlog CHECK differs web 111
t_check "DEL deleted plain" dlog DEL deleted plain
t_check "DEL deleted web" dlog DEL deleted web
t_check "DEL deleted bad" dlog DEL deleted bad
no_netns_del() { # the second DEL of web has no netns field (CNI_NETNS was empty)
	"$PY" -c '
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])][-1]
print(json.dumps(o))
sys.exit(0 if (o["verb"], o["decision"], o["pod_name"]) == ("DEL", "deleted", "web") and "netns" not in o else 1)
' "$W_TMP/netguard.log"
}
t_check "last line: DEL deleted web without netns" no_netns_del
t_check "skipped: the reason says why" grep -q '"decision":"skipped","reason":"namespace default is not in enforce.namespaces' "$W_TMP/netguard.log"

info "wall time $(($(now_ms) - START_MS)) ms"
t_summary
