#!/usr/bin/env bash
# faults: what a runtime, an operator or an attacker in the pod can do to the
# plugin's state, with the real binary (issue 3 part 2):
#   - DEL twice; DEL with CNI_NETNS="" and no prevResult; DEL after the netns
#     was deleted; DEL after the config became invalid (still removes the table);
#   - CHECK after the table was deleted, a rule added or deleted by hand, the
#     egress policy flipped, an element added by hand to names_v4_ttl ("not
#     resolved at ADD"), names_v4_ttl flushed ("missing before its expiry");
#     each time a re-ADD repairs the table and CHECK passes again;
#   - a hand-added names_v4_ttl/names_v6_ttl element opens nothing (the rule
#     also needs the constant names set, which cannot be extended);
#   - ADD retried converges to one identical table (nft -j, minus handles,
#     counters and expiry);
#   - a node resolver that drops AAAA queries: the names of one ADD share a
#     10 s budget, then code 11 and no table;
#   - ADD killed with SIGKILL at random points (NG_KILL_ITERS, default 100):
#     the pod holds the complete table (CHECK passes) or none, never a part;
#     the retry then succeeds.
# Ends with "N passed, N failed"; exit status non-zero on failure.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "faults.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
KILL_ITERS=${NG_KILL_ITERS:-100}
T="inet boxxkite_netguard"

# ---- helpers -------------------------------------------------------------------
# direct VERB POD: our plugin alone, as the chain would call it, on the pod's
# cached result; the output is shown when it fails.
direct() { ng_pod_call "$1" "$2" || { cat "$W_TMP/ng.out" "$W_TMP/ng.err" && return 1; }; }
# check_fails POD TEXT...: CHECK through the chain fails in our plugin with
# code 111 and every TEXT in the message.
check_fails() {
	local out rc=0 msg t
	out=$(pod_check "$1" 2>&1) || rc=$?
	((rc != 0)) || { echo "CHECK passed" && return 1; }
	msg=$(chain_error_is 111 "$2" "$out") || { echo "$msg" && return 1; }
	shift 2
	for t in "$@"; do
		[[ $msg == *"$t"* ]] || { echo "msg does not name '$t': $msg" && return 1; }
	done
}
# check_names_elem POD TEXT: CHECK fails (111), its msg names TEXT (a set
# element in nft's syntax), neither msg nor details holds a hex key, and
# details does not repeat the difference msg already names.
check_names_elem() {
	local out rc=0
	out=$(pod_check "$1" 2>&1) || rc=$?
	((rc != 0)) || { echo "CHECK passed" && return 1; }
	"$PY" - "$2" "$out" <<'PY'
import json, re, sys
text, e = sys.argv[1], json.loads(sys.argv[2])
msg, details = e.get("msg", ""), e.get("details", "")
print("msg:", msg, "\ndetails:", details)
assert e.get("code") == 111, e
assert text in msg, "msg does not name %r" % text
assert not re.search(r"[0-9a-f]{16}", msg + details), "a hex key"
first = msg.split(": ", 1)[1] if "first: " not in msg else msg.split("first: ", 1)[1]
assert first not in details, "details repeats %r" % first
PY
}
# repaired POD: a re-ADD (our plugin, as a runtime's retry) makes CHECK pass.
repaired() { direct ADD "$1" && pod_check "$1"; }
# table_json POD: the table as nft -j prints it, minus what changes by itself
# or on every replace: handles, counter values, expiry, the "until" comments
# of name elements (ADD time + TTL).
table_json() {
	pod_exec "$1" nft -j list table "$T" | "$PY" -c '
import json, sys
def clean(o):
    if isinstance(o, dict):
        return {k: (clean(v) if k != "counter" or not isinstance(v, dict) or "packets" not in v else {})
                for k, v in o.items()
                if k not in ("handle", "expires", "packets", "bytes")
                and not (k == "comment" and isinstance(v, str) and v.startswith("until "))}
    if isinstance(o, list):
        return [clean(x) for x in o]
    return o
print(json.dumps(clean(json.load(sys.stdin)), indent=1, sort_keys=True))'
}
one_table() { # POD: exactly our table and its guard in the pod
	local l
	l=$(pod_exec "$1" nft list tables)
	[[ $l == "table $T"$'\n'"table netdev boxxkite_netguard" ]] || { echo "tables: $l" && return 1; }
}

# ---- DEL ---------------------------------------------------------------------------
echo "== DEL"
pod_add d1 >/dev/null
t_check "DEL" pod_del d1
t_check_not "table gone" pod_has_table d1
t_check "DEL again (no cached result: no prevResult)" pod_del d1
t_check "DEL with CNI_NETNS=\"\" and no prevResult" pod_del d1 --no-netns
t_check "  logged: no CNI_NETNS" log_has d1 DEL deleted "no CNI_NETNS"
pod_add d2 >/dev/null
t_check "direct DEL (with prevResult)" direct DEL d2
t_check "direct DEL twice" direct DEL d2
t_check_not "d2: table gone" pod_has_table d2
pod_del d2 >/dev/null
pod_add d3 >/dev/null
pod_netns_rm d3
t_check "DEL after the netns was deleted" pod_del d3
t_check "  logged: namespace already gone" log_has d3 DEL deleted "already gone"
pod_add d4 >/dev/null
BAD=$(conf_variant bad-config 'e["egress"]["alow"] = ["1.2.3.4:443"]')
del_bad_config() { POD_CONFLIST=$BAD pod_del d4 2>"$W_TMP/d4.err"; }
t_check "DEL with an invalid config succeeds" del_bad_config
t_check_not "  and removed the table anyway" pod_has_table d4
# With the config unreadable, the line goes to stderr (the runtime's log).
t_check "  logged the config error" grep -q '"verb":"DEL","decision":"deleted".*"config_error":"egress.alow' \
	"$W_TMP/d4.err" "$W_TMP/netguard.log"

# ---- CHECK after tampering ------------------------------------------------------
echo "== CHECK after tampering, and the re-ADD that repairs"
pod_add c1 >/dev/null
t_check "CHECK passes on a fresh pod" pod_check c1
pod_exec c1 nft delete table "$T"
t_check "table deleted: CHECK fails naming it missing" check_fails c1 "is missing"
t_check "  table deleted: re-ADD repairs it" repaired c1
pod_exec c1 nft add rule "$T" egress ip daddr "$FORBID4" accept
# (0x0900320a: 10.50.0.9 as the rule's comparison holds it)
t_check "rule added: CHECK fails naming it" check_fails c1 "unexpected rule" "chain egress" "0x0900320a"
t_check "  rule added: re-ADD repairs it" repaired c1
h=$(pod_exec c1 nft -a list chain "$T" egress | sed -n 's/.*@metadata_v4 jump refuse_metadata.*# handle \([0-9]*\)/\1/p')
pod_exec c1 nft delete rule "$T" egress handle "$h"
t_check "metadata rule deleted: CHECK fails naming it" check_fails c1 "missing rule" "chain egress" \
	"cloud metadata (IPv4)"
t_check "  metadata rule deleted: re-ADD repairs it" repaired c1
pod_exec c1 nft chain "$T" egress '{ policy accept; }'
t_check "egress policy set to accept: CHECK fails" check_fails c1 "chain egress"
t_check "  egress policy set to accept: re-ADD repairs it" repaired c1
pod_exec c1 nft add element "$T" names_v4_ttl "{ $FORBID4 . tcp . 443 timeout 1h }"
t_check "names_v4_ttl + element: CHECK fails" check_fails c1 "not resolved at ADD"
t_check "  ...naming it $FORBID4 . tcp . 443, not a hex key" check_names_elem c1 "element $FORBID4 . tcp . 443 "
t_check "  names_v4_ttl + element: re-ADD repairs it" repaired c1
pod_exec c1 nft flush set "$T" names_v4_ttl
t_check "names_v4_ttl flushed: CHECK fails" check_fails c1 "missing before its expiry"
t_check "  names_v4_ttl flushed: re-ADD repairs it" repaired c1
# allow_v4 is a constant set (the kernel refuses to change it in place):
# the table of another config's ADD stands in for a swapped element.
OTHER=$(conf_variant other-allow 'e["egress"]["allow"][0] = "10.30.1.0/24:443"')
other_add() { POD_CONFLIST=$OTHER direct ADD c1; }
t_check "allow_v4 with another element (another config's ADD)" other_add
t_check "  CHECK names both elements in nft syntax, the first once" \
	check_names_elem c1 "set allow_v4 element 10.20.1.5 . tcp . 443 flags"
t_check "  allow_v4 swapped: re-ADD repairs it" repaired c1

pod_add plain default >/dev/null
pod_exec plain nft add table "$T"
t_check "not enforced, table added by hand: CHECK fails" check_fails plain "present but the pod is not enforced"
pod_exec plain nft delete table "$T"
t_check "not enforced, no table: CHECK passes" pod_check plain
pod_del plain >/dev/null

echo "== a hand-added name element opens nothing"
expect "before: forbidden $FORBID4:443 refused" refused 1000 pod:c1 -- tcp "$FORBID4" 443 2000
pod_exec c1 nft add element "$T" names_v4_ttl "{ $FORBID4 . tcp . 443 timeout 1h }"
pod_exec c1 nft add element "$T" names_v6_ttl "{ $FORBID6 . tcp . 443 timeout 1h }"
expect "names_v4_ttl + $FORBID4: still refused" refused 1000 pod:c1 -- tcp "$FORBID4" 443 2000
expect "names_v6_ttl + [$FORBID6]: still refused" refused 1000 pod:c1 -- tcp "$FORBID6" 443 2000
# refused_as_constant SET: adding an element fails because the set is
# constant (EBUSY), not for any other reason (a typo, a missing table).
refused_as_constant() {
	local out
	if out=$(pod_exec c1 nft add element "$T" "$1" "{ $FORBID4 . tcp . 443 }" 2>&1); then
		echo "the element was added" && return 1
	fi
	[[ $out == *"Device or resource busy"* ]] || { echo "$out" && return 1; }
}
t_check "names_v4 (pinned) cannot be extended (EBUSY)" refused_as_constant names_v4
t_check "allow_v4 (constant) cannot be extended (EBUSY)" refused_as_constant allow_v4
expect "the real name element still works" connected 1000 pod:c1 -- tcp "$STORE_NAME4" 443 2000

# ---- ADD retried -----------------------------------------------------------------
echo "== ADD retried converges"
pod_add r1 >/dev/null
table_json r1 >"$W_TMP/r1.first"
converges() {
	local i
	for i in 1 2 3; do direct ADD r1 || return; done
	table_json r1 | diff -u "$W_TMP/r1.first" - && one_table r1 && pod_check r1
}
t_check "ADD x3 more: one identical table, CHECK passes" converges
tampered_converges() {
	pod_exec r1 nft add chain "$T" extra
	pod_exec r1 nft add rule "$T" ingress tcp dport 22 accept
	direct ADD r1 && table_json r1 | diff -u "$W_TMP/r1.first" - && one_table r1 && pod_check r1
}
t_check "ADD over a tampered table: identical again" tampered_converges
readd_after_del() { direct DEL r1 && direct ADD r1 && table_json r1 | diff -u "$W_TMP/r1.first" - && pod_check r1; }
t_check "DEL then ADD: identical again" readd_after_del

# ---- a DNS server that drops AAAA queries --------------------------------------------
# Some resolvers answer A and silently drop AAAA. The node's resolver here
# is a socket in the node's namespace that does exactly that, and the pod
# names six names (the config's storage name and five granted ones): each
# succeeds on its A record after the AAAA query's timeouts (2 tries of 2 s),
# so without a bound ADD would hold pod start for 24 s (256 names: 17
# minutes). With the 10 s budget for all names of one ADD (the timeouts
# shrink to fit what is left), ADD fails with code 11 naming the budget
# after 10 s and about 1 s more at most, and no table is left in the pod.
echo "== DNS that drops AAAA queries"
pod_add dn1 >/dev/null
echo '{"netguard.boxxkite.io/egress":"a.world.test:443,b.world.test:443,c.world.test:443,d.world.test:443,e.world.test:443"}' \
	>"$W_TMP/pods/dn1/annotations"
pod_exec dn1 nft delete table "$T"
pod_exec dn1 nft delete table netdev boxxkite_netguard
cp "$W_TMP/resolv.conf" "$W_TMP/resolv.conf.real"
printf 'nameserver 10.96.0.1\n' >"$W_TMP/resolv.conf"
bg_start nsenter --net="$(_ns_path "$W_NODE")" "$PY" -c '
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.96.0.1", 53))
while True:
    q, peer = s.recvfrom(512)
    end = q.index(b"\0", 12) + 5        # the question: name, type, class
    if struct.unpack("!H", q[end - 4:end - 2])[0] != 1:
        continue                        # not A: never answered
    a = struct.pack("!HHHIH4s", 0xC00C, 1, 1, 300, 4, socket.inet_aton("10.20.1.7"))
    s.sendto(q[:2] + b"\x81\x80\0\x01\0\x01\0\0\0\0" + q[12:end] + a, peer)' \
	>"$W_TMP/log/dns-no-aaaa.log" 2>&1
DROP_AAAA_PID=$BG_PID
sleep 0.3
slow_dns() {
	local rc=0 t0
	t0=$(date +%s%N)
	ng_pod_call ADD dn1 || rc=$?
	DNS_MS=$((($(date +%s%N) - t0) / 1000000))
	ng_error_is 11 "ran out of its 10000 ms budget" "$rc" || return
	((DNS_MS >= 10000 && DNS_MS < 11500)) || { echo "took $DNS_MS ms, want 10-11.5 s" && return 1; }
	[[ -z $(pod_exec dn1 nft list tables) ]] || { echo "a table was left" && return 1; }
}
DNS_MS=0 rc=0
slow_dns >"$W_TMP/slow_dns.out" 2>&1 || rc=$?
t_row "DNS drops AAAA, 6 names: code 11 after the 10 s budget, no table" "ADD failed after $DNS_MS ms" $rc \
	"$(cat "$W_TMP/slow_dns.out")"
bg_stop "$DROP_AAAA_PID"
mv "$W_TMP/resolv.conf.real" "$W_TMP/resolv.conf"
rm -f "$W_TMP/pods/dn1/annotations"

# ---- SIGKILL at random points ------------------------------------------------------
echo "== ADD killed with SIGKILL at random points ($KILL_ITERS times)"
pod_add k1 >/dev/null
ng_stdin k1 >"$W_TMP/k1.json"
mapfile -t KENV < <(ng_pod_env k1)
# The reference: the complete ruleset, without the "until" comments of name
# elements (ADD time + TTL, so they move with each ADD).
norm() { sed -E 's/ comment "until [^"]*"//'; }
pod_exec k1 nft -s list ruleset | norm >"$W_TMP/k1.full"
# The loop runs in one shell inside the node's namespace (with the world's
# resolver), so that `timeout` starts right before the plugin and the random
# delay covers its whole run: from before it reads stdin to after its
# commit. Each round: half the time from no table, half over a complete one;
# ADD under `timeout -s KILL <random delay>`; then the state must be no
# table or the complete one (nft -s ruleset identical to the reference, and
# CHECK passes); then a plain retry (ADD, CHECK) must succeed.
cat >"$W_TMP/killloop.sh" <<'EOF'
set -u
iters=$1 bin=$2 in=$3 netns=$4 full=$5
shift 5
nsx() { nsenter --net="$netns" "$@"; }
# The span of the random delays: twice the wall time of a whole ADD here
# (timeout + env + the plugin; about 5-15 ms with the normal build, more
# under ASan), so that the kills fall all along the run and after its end.
span=0
for _ in 1 2 3; do
	t0=$(date +%s%N)
	timeout -s KILL 5 env -i PATH="$PATH" CNI_COMMAND=ADD "$@" "$bin" <"$in" >/dev/null 2>&1 || exit 1
	t=$((($(date +%s%N) - t0) / 1000))
	((t > span)) && span=$t
done
span=$((2 * span))
echo "span $span"
norm() { sed -E 's/ comment "until [^"]*"//'; }
for ((i = 1; i <= iters; i++)); do
	from=replace
	if ((RANDOM % 2)); then
		nsx nft delete table inet boxxkite_netguard 2>/dev/null
		nsx nft delete table netdev boxxkite_netguard 2>/dev/null
		from=scratch
	fi
	# Skewed towards 0 (span * u^2): the part before the commit is short
	# (the commit itself runs inside one sendmsg, which a signal does not
	# cut), so it gets more of the rounds; a third land after the end.
	r=$RANDOM
	us=$((span * r * r / (32767 * 32767)))
	d=$(printf '%d.%06d' $((us / 1000000)) $((us % 1000000)))
	timeout -s KILL "$d" env -i PATH="$PATH" CNI_COMMAND=ADD "$@" "$bin" <"$in" >/dev/null 2>&1
	rc=$?
	rs=$(nsx nft -s list ruleset | norm)
	if [[ -z $rs ]]; then
		state=none
	elif [[ $rs == "$(cat "$full")" ]]; then
		if env -i PATH="$PATH" CNI_COMMAND=CHECK "$@" "$bin" <"$in" >/dev/null 2>&1; then state=complete; else state=check-failed; fi
	else
		state=partial
		printf '%s\n' "$rs" >"$full.partial.$i"
	fi
	env -i PATH="$PATH" CNI_COMMAND=ADD "$@" "$bin" <"$in" >/dev/null 2>&1 &&
		env -i PATH="$PATH" CNI_COMMAND=CHECK "$@" "$bin" <"$in" >/dev/null 2>&1
	retry=$?
	echo "$i $from $us $rc $state $retry"
done
EOF
start=$(date +%s%N)
_in_node bash "$W_TMP/killloop.sh" "$KILL_ITERS" "$NG_BIN" "$W_TMP/k1.json" \
	"$(_ns_path "$(pod_ns k1)")" "$W_TMP/k1.full" "${KENV[@]}" >"$W_TMP/kill.log" 2>"$W_TMP/kill.err" || true
kill_ms=$((($(date +%s%N) - start) / 1000000))
span_us=$(sed -n 's/^span //p' "$W_TMP/kill.log")
sed -i '/^span /d' "$W_TMP/kill.log"
read -r rounds killed finished none complete bad noretry < <(awk '
	{ n++; if ($4 == 137) k++; else if ($4 == 0) f++
	  if ($5 == "none") z++; else if ($5 == "complete") c++; else b++
	  if ($6 != 0) r++ }
	END { print n+0, k+0, f+0, z+0, c+0, b+0, r+0 }' "$W_TMP/kill.log")
t_row "SIGKILL: $rounds rounds ran" "delays 0-$((${span_us:-0} / 1000)) ms, $kill_ms ms" "$((rounds == KILL_ITERS ? 0 : 1))" "$(tail -n 5 "$W_TMP/kill.log" "$W_TMP/kill.err")"
t_row "SIGKILL: the kills landed and missed" "$killed killed, $finished done" \
	"$((killed > 0 && finished > 0 && killed + finished == rounds ? 0 : 1))" "$(awk '$4 != 0 && $4 != 137' "$W_TMP/kill.log" | head)"
t_row "SIGKILL: complete table or none, never partial" "$complete complete, $none none" \
	"$((bad == 0 && rounds > 0 ? 0 : 1))" "$(awk '$5 != "none" && $5 != "complete"' "$W_TMP/kill.log" | head; cat "$W_TMP"/k1.full.partial.* 2>/dev/null | head -30)"
# From scratch, both outcomes must have been seen: no table (a kill landed
# before the commit) and the complete table (the ADD got that far).
t_row "SIGKILL: both outcomes seen from scratch" "" \
	"$(awk '$2 == "scratch" && $5 == "none" { a = 1 } $2 == "scratch" && $5 == "complete" { c = 1 } END { print (a && c) ? 0 : 1 }' "$W_TMP/kill.log")" \
	"$(head -20 "$W_TMP/kill.log")"
t_row "SIGKILL: every retry succeeded (ADD + CHECK)" "$((rounds - noretry)) of $rounds" "$((noretry == 0 ? 0 : 1))" \
	"$(awk '$6 != 0' "$W_TMP/kill.log" | head)"
[[ -z ${NG_KILL_DEBUG:-} ]] || sort -k3 -n "$W_TMP/kill.log" >"$NG_KILL_DEBUG"
t_check "SIGKILL: CHECK through the chain after it all" pod_check k1
t_check "SIGKILL: no plugin process left in the node" test -z "$(ip netns pids "$W_NODE")"

echo "== teardown"
for p in c1 r1 k1; do t_check "DEL $p" pod_del "$p"; done
t_check "no table left anywhere in the world" test -z "$(world_tables)"

t_summary
