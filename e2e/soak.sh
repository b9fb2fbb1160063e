#!/usr/bin/env bash
# soak: the agent as a data plane under everything at once (issue 23 item 5).
# SOAK_PODS resident enforced pods in learn mode (and two resolve-mode
# reference pods), each resolving and connecting every SOAK_PERIOD_MS
# (build/dnsload: a thread per pod inside the pod's namespace, a name pool
# longer than minNameTTL so that nearly every answer is a fresh commit);
# then, while they go on:
#   - a slow HTTP client (a byte every 20 ms) and a never-reading one on the
#     agent's --listen; a pod flooding answers (SOAK_FLOOD queries/s to a
#     resolver of its own, dnsmasq's synth-domain: every answer a new
#     address); a pod holding SOAK_CT conntrack entries (UDP to 127.x.y.z)
#     with learned addresses due for keep-alive;
#   - SOAK_CYCLES ADD/DEL cycles (SOAK_PAR at a time) through the real plugin
#     and cnirun.py, each churn pod asking one name right after its ADD;
#   - drift injected (nft, from the test) into 10 resident pods, the agent
#     running with --repair; two agent restarts (SIGTERM, then SIGKILL).
# Rows: every connect right after an answer succeeds (no answer reaches a pod
# before its addresses are committed); a learned address stays open for its
# lifetime; no resident's answer lost outside the restarts; every churn
# ADD/DEL succeeds (outside the restarts); the agent's fds and RSS back at
# their baseline; no table, record, ready file, host-side table or namespace
# left for a deleted pod; no drift event but the injected ones; every
# injected drift noticed and repaired, learned addresses back with it.
# Figures: added latency per answer p50/p99/max for the residents, quiet,
# beside the abusers, under churn, after.
# `make soak`: 200 pods, 1000 cycles (about 20 minutes); `make e2e` (make
# test): the defaults below, about a minute and a half; E2E_QUICK (make
# asan) smaller still. Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "soak.sh: needs root (network namespaces)" >&2 && exit 1; }
PODS=${SOAK_PODS:-20} CYCLES=${SOAK_CYCLES:-40} PAR=${SOAK_PAR:-4}
CT=${SOAK_CT:-200000} FLOOD=${SOAK_FLOOD:-2000} PERIOD=${SOAK_PERIOD_MS:-1500}
QUIET_S=${SOAK_QUIET_S:-15} ABUSE_S=${SOAK_ABUSE_S:-15} AFTER_S=${SOAK_AFTER_S:-10}
# Which abusers run (for finding which one hurts): http flood ct.
ABUSERS=" ${SOAK_ABUSERS-http flood ct} "
if [[ -n ${E2E_QUICK:-} ]]; then
	PODS=${SOAK_PODS:-10} CYCLES=${SOAK_CYCLES:-20}
	QUIET_S=${SOAK_QUIET_S:-10} ABUSE_S=${SOAK_ABUSE_S:-10} AFTER_S=${SOAK_AFTER_S:-5}
fi
NAMES=24 # > minNameTTL (30 s) / PERIOD: a name comes round after its element expired
PORT=7443
DRIFTS=$((PODS < 10 ? PODS : 10))
DNSLOAD=${DNSLOAD:-$REPO_DIR/build/dnsload}
[[ -x $DNSLOAD ]] || { echo "soak.sh: no $DNSLOAD (make build/dnsload)" >&2 && exit 1; }
((PODS <= 200)) || { echo "soak.sh: at most 200 resident pods (the world's /24)" >&2 && exit 1; }
echo "   info: $PODS pods, $CYCLES cycles x $PAR, $CT conntrack entries, $FLOOD queries/s flood"

world_up "${E2E_PREFIX:-ngs-}"
# On any exit the jobs in flight stop first (a churn worker would create a
# pod namespace after world_down read its list), then the world goes, then
# anything named after it that a cut-off job still made.
JOBS=()
stop_jobs() {
	local - p
	set +e # a killed job's wait fails: the cleanup must go on to the end
	for p in "${JOBS[@]}"; do _ours "$p" && kill_tree "$p"; done
	for p in "${JOBS[@]}"; do wait "$p" 2>/dev/null; done
	world_down
	world_sweep
}
trap stop_jobs EXIT
trap 'stop_jobs; _on_signal 130' INT
trap 'stop_jobs; _on_signal 143' TERM
STATE=$W_TMP/state RES=$W_TMP/results EV=$W_TMP/events CHURN=$W_TMP/churn
: >"$RES" && : >"$EV" && : >"$CHURN" && mkdir -p "$W_TMP/churnlog"
now_ms() { date +%s%3N; }
event() { echo "$*" >>"$EV"; }

# ---- the world's extras: names, the flood's resolver, a sink on :7443 ------------
{
	for ((p = 0; p < PODS; p++)); do learn_hosts "n%d.p$p.soak.world.test" $((20 + p)) "$NAMES"; done
	learn_hosts n%d.ref.soak.world.test 225 "$NAMES"
	learn_hosts n%d.ct.soak.world.test 226 "$NAMES"
	learn_hosts n%d.churn.soak.world.test 230 250
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
DNSF=10.96.0.12
ip -n "$W_ID-dns" addr add "$DNSF/24" dev eth0
_spawn "$W_ID-dns" dnsmasq-flood dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
	--no-poll --user=root --group=root --bind-interfaces --listen-address="$DNSF" --local-ttl=1 \
	--pid-file="$W_TMP/dnsmasq-flood.pid" --synth-domain=flood.world.test,10.22.0.0,10.22.255.255
_spawn "$W_ID-storage" sink "$DNSLOAD" sink "$PORT"
LEARN=$(learn_conf learn 'e["egress"]["minNameTTL"] = 30
e["egress"]["allow"] += ["*.soak.world.test:'$PORT'"]')
FLOODC=$(learn_conf flood 'e["dns"]["servers"].append("'$DNSF'")
e["egress"]["allow"] += ["*.flood.world.test:'$PORT'"]')
REF=$(conf_variant ref 'e["dns"]["servers"].append("'"$DNSL"'")
e["egress"]["allow"] += ["10.21.0.0/16:'$PORT'"]')
export POD_CONFLIST=$LEARN POD_NO_LOOPBACK=1
served() { within 5000 node_exec "$NPROBE" udp-dns "$1" "$2" 500; }
t_check "the flood resolver synthesizes addresses (10-22-1-2.flood.world.test)" served "$DNSF" 10-22-1-2.flood.world.test
t_check "the sink accepts on :$PORT" within 5000 node_exec "$NPROBE" tcp 10.21.230.1 "$PORT" 500

AGENT_FLAGS=(--repair --check-interval 10)
agent_start "${AGENT_FLAGS[@]}"
t_check "agent serves (--repair, CHECK every 10 s)" agent_ready 10000
agent_fds() { find "/proc/$AGENT_PID/fd" -mindepth 1 -maxdepth 1 | wc -l; }
agent_rss() { awk '/VmRSS/{print $2}' "/proc/$AGENT_PID/status"; }
agent_cpu() { awk '{print $14 + $15}' "/proc/$AGENT_PID/stat"; } # clock ticks

# ---- residents -------------------------------------------------------------------
add_batch() { # CONFLIST NAME... (10 at a time; the output in $W_TMP/add-NAME)
	local conf=$1 pids=() n
	shift
	for n in "$@"; do
		POD_CONFLIST=$conf pod_add "$n" >"$W_TMP/add-$n" 2>&1 &
		pids+=("$!") && JOBS+=("$!")
		if ((${#pids[@]} == 10)); then wait "${pids[@]}" || true && pids=(); fi
	done
	((${#pids[@]} == 0)) || wait "${pids[@]}" || true
}
add_retry() { # CONFLIST NAME: ADD, and as a runtime does, DEL and ADD again (3 tries)
	local i
	for i in 1 2 3; do
		POD_CONFLIST=$1 pod_add "$2" >"$W_TMP/add-$2" 2>&1 && return 0
		echo "   info: ADD of $2 failed (try $i): $(head -c 200 "$W_TMP/add-$2")"
		POD_CONFLIST=$1 pod_del "$2" >/dev/null 2>&1 || true
	done
	return 1
}
RESIDENTS=()
for ((p = 0; p < PODS; p++)); do RESIDENTS+=("p$p"); done
t0=$(now_ms)
add_batch "$LEARN" "${RESIDENTS[@]}"
add_batch "$REF" ref0 ref1
ok=0
for n in "${RESIDENTS[@]}" ref0 ref1; do [[ -s $W_TMP/pods/$n/result ]] && ok=$((ok + 1)); done
t_row "$PODS resident pods (learn) and 2 reference pods added" "$ok in $(($(now_ms) - t0)) ms" \
	"$((ok == PODS + 2 ? 0 : 1))" "$(for n in "${RESIDENTS[@]}"; do [[ -s $W_TMP/pods/$n/result ]] || cat "$W_TMP/add-$n"; done | head -5)"

specs=()
for ((p = 0; p < PODS; p++)); do specs+=("$(pod_netns_path "p$p")@p$p@n%d.p$p.soak.world.test"); done
for r in ref0 ref1; do specs+=("$(pod_netns_path $r)@$r@n%d.ref.soak.world.test"); done
bg_start "$DNSLOAD" client --server "$DNSL" --port "$PORT" --names "$NAMES" --period-ms "$PERIOD" \
	--tries 5 --out "$RES" "${specs[@]}"
CLIENTS=$BG_PID
TRIES_MS=5000 # 5 tries of 1 s: a query is lost when 5 s pass without an answer (glibc: 5 s a try)

# ---- phase 1: quiet ------------------------------------------------------------------
t0=$(now_ms) cpu0=$(agent_cpu)
sleep "$QUIET_S"
t1=$(now_ms)
event phase quiet "$t0" "$t1"
cpu_quiet=$(($(agent_cpu) - cpu0))
BASE_FDS=$(agent_fds) BASE_RSS=$(agent_rss)
echo "   info: baseline: agent fds $BASE_FDS, RSS $BASE_RSS KiB ($PODS pods + 2 references, learning)"

# ---- phase 2: the abusers --------------------------------------------------------------
t0=$(now_ms) cpu0=$(agent_cpu)
ABUSER_PIDS=()
on() { [[ $ABUSERS == *" $1 "* ]]; }
if on flood; then
	add_retry "$FLOODC" flood
	t_check "the flood pod added" test -s "$W_TMP/pods/flood/result"
	bg_start "$DNSLOAD" flood --server "$DNSF" --rate "$FLOOD" "$(pod_netns_path flood)" >"$W_TMP/flood.out"
	ABUSER_PIDS+=("$BG_PID")
fi
if on ct; then
	# The conntrack pod: its UDP entries live an hour, in its own namespace;
	# it learns too (a client of its own), so that an address of its is always
	# due for keep-alive and the agent's sweep looks at its flows every second.
	add_retry "$LEARN" ct
	t_check "the conntrack pod added" test -s "$W_TMP/pods/ct/result"
	pod_exec ct sysctl -qw net.netfilter.nf_conntrack_udp_timeout=3600
	pod_exec ct "$PY" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"x", ("127.%d.%d.%d" % (1 + i // 65536, i // 256 % 256, i % 256), 9))
' "$CT"
	n=$(pod_exec ct cat /proc/sys/net/netfilter/nf_conntrack_count)
	t_row "the conntrack pod holds $CT entries" "$n" "$((n >= CT ? 0 : 1))"
	bg_start "$DNSLOAD" client --server "$DNSL" --port "$PORT" --names "$NAMES" --period-ms "$PERIOD" \
		--out "$RES" "$(pod_netns_path ct)@ct@n%d.ct.soak.world.test"
	ABUSER_PIDS+=("$BG_PID")
fi
# The HTTP clients last: on an agent whose loop they can hold, the abuser
# pods' own ADDs would fail.
if on http; then
	bg_start nsenter --net="$(_ns_path "$W_NODE")" "$PY" "$E2E_DIR/soakhttp.py" slow 127.0.0.1 9617 >"$W_TMP/http-slow.out"
	ABUSER_PIDS+=("$BG_PID")
	bg_start nsenter --net="$(_ns_path "$W_NODE")" "$PY" "$E2E_DIR/soakhttp.py" noread 127.0.0.1 9617 >"$W_TMP/http-noread.out"
	ABUSER_PIDS+=("$BG_PID")
fi
sleep "$ABUSE_S"
t1=$(now_ms)
event phase abusers "$t0" "$t1"
cpu_abuse=$(($(agent_cpu) - cpu0))

# ---- phase 3: churn, drift, restarts (the abusers go on) ---------------------------------
churn_cycle() { # NAME INDEX: one ADD, one answer and connect, one DEL; a line to $CHURN
	local name=$1 i=$2 t0 add=0 del=0 left
	t0=$(now_ms)
	pod_add "$name" >"$W_TMP/churnlog/$name.add" 2>&1 || add=$?
	if ((add == 0)); then
		"$DNSLOAD" client --server "$DNSL" --port "$PORT" --count 1 --period-ms 1 --first $((i % 250)) --out "$RES" \
			"$(pod_netns_path "$name")@$name@n%d.churn.soak.world.test" || true
	fi
	pod_del "$name" >"$W_TMP/churnlog/$name.del" 2>&1 || del=$?
	left=$({ pod_exec "$name" nft list tables 2>/dev/null || true; } | grep -c . || true)
	ip netns delete "$(pod_ns "$name")" 2>/dev/null || true
	echo "$name $t0 $(now_ms) $add $del $left" >>"$CHURN"
}
churn_worker() { # W: cycles W, W+PAR, ... (a background job: nothing in it may end it early)
	local i
	set +e
	for ((i = $1; i < CYCLES; i += PAR)); do churn_cycle "c$1-$i" "$i"; done
}
churned() { wc -l <"$CHURN"; }
CHURNERS=()
wait_churned() { # N: until N cycles are done, or no churn worker is left
	local p alive
	while (($(churned) < $1)); do
		alive=0
		for p in "${CHURNERS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		((alive)) || return 0
		sleep 0.2
	done
}

# Drift, from the test: what a process with NET_ADMIN in the pod (or on the
# node) could do. One kind each, in turn, on resident pods p0..p9.
learned_left() { # POD: "ADDRESS SECONDS-LEFT" of its learned addresses with 10 s or more left
	pod_exec "$1" nft list set inet boxxkite_netguard names_v4 2>/dev/null |
		grep -oE '[0-9.]+ \. tcp \. [0-9]+ timeout [0-9a-z]+ expires [0-9]+s' |
		awk '$NF + 0 >= 10 {print $1, $NF + 0}' | sort -u -k1,1
}
learned_now() { learned_left "$1" | cut -d' ' -f1; } # POD: those addresses, one per line
inject() { # POD KIND
	local e
	case $2 in
	0) pod_exec "$1" nft delete table inet boxxkite_netguard ;;
	1) pod_exec "$1" nft flush chain inet boxxkite_netguard egress ;;
	2) pod_exec "$1" nft add rule inet boxxkite_netguard egress accept ;;
	3) # a learned element deleted; none learned (its answers stalled): one planted
		e=$(learned_now "$1" | head -1)
		if [[ -n $e ]]; then
			pod_exec "$1" nft delete element inet boxxkite_netguard names_v4 "{ $e . tcp . $PORT }"
		else
			pod_exec "$1" nft add element inet boxxkite_netguard names_v4 "{ $FORBID4 . tcp . 443 timeout 1h }"
		fi
		;;
	4) node_exec nft delete table netdev "$(pod_host_table "$1")" ;;
	esac
}
after_inject() { # L0 POD: the agent log after line L0 for POD: "noticed repaired" (yes/no each):
	# a repair counts only after the drift the injection caused (a repair the
	# agent did for another reason may come first)
	tail -n +"$(($1 + 1))" "$W_TMP/log/agent.log" | grep -F "\"pod_namespace\":\"$ENFORCED_NS\",\"pod_name\":\"$2\"" |
		awk '/"event":"drift(_check)?"/ {d = 1} d && /"event":"repaired"/ {r = 1} END {print (d ? "yes" : "no"), (r ? "yes" : "no")}'
}
# A learned element deleted while no agent runs is gone for good: the
# kernel's sets are all the agent knows of what it learned (a deleted table
# comes back from the node side's, a changed rule from the record; an
# element has neither). So that kind is injected, and its repair awaited,
# while an agent serves: the injector and the restarts take turns (a lock
# directory) for it.
excl() { until mkdir "$W_TMP/excl.lock" 2>/dev/null; do sleep 0.1; done; }
unexcl() { rmdir "$W_TMP/excl.lock" 2>/dev/null || true; }
injector() { # writes "POD KIND noticed repaired check learned_back" lines to $W_TMP/drift
	local k pod kind l0 t0 t1 tb ta noticed repaired check back before miss want e left a
	set +e
	for ((k = 0; k < DRIFTS; k++)); do
		wait_churned $(((k + 1) * CYCLES / (DRIFTS + 2)))
		pod=p$k kind=$((k % 5))
		((kind != 3)) || excl
		tb=$(now_ms)
		before=$(learned_left "$pod")
		l0=$(wc -l <"$W_TMP/log/agent.log")
		t0=$(now_ms)
		inject "$pod" "$kind" || { unexcl && echo "$pod $kind inject-failed - - -" >>"$W_TMP/drift" && continue; }
		noticed=no repaired=no check=no back=-
		for _ in $(seq 600); do # 30 s
			read -r noticed repaired < <(after_inject "$l0" "$pod")
			[[ $repaired == yes ]] && break
			sleep 0.05
		done
		t1=$(now_ms)
		((kind != 3)) || unexcl
		if [[ $repaired == yes ]]; then
			# The first look after the repair: what the pod had learned
			# before the injection must be there, not waiting for a relearn:
			# each address that by its own expiry still has 3 s at the look
			# (nft itself took 15-30 s to inject on a loaded node of 200
			# pods, its cache read restarting while the agent commits: an
			# address with 10 s left before may have expired by the repair).
			# (tb before the first listing, ta after the second: the
			# time between them is never underestimated)
			miss=0 want=0
			a=$(pod_exec "$pod" nft list set inet boxxkite_netguard names_v4 2>/dev/null || true)
			ta=$(now_ms)
			while read -r e left; do
				if [[ -z $e ]] || ((left * 1000 - (ta - tb) < 3000)); then continue; fi
				want=$((want + 1))
				grep -qF "$e . tcp . $PORT" <<<"$a" || miss=$((miss + 1))
			done <<<"$before"
			back="$miss-of-$want-missing"
		fi
		for _ in $(seq 40); do pod_check "$pod" >/dev/null 2>&1 && check=yes && break; sleep 0.5; done
		echo "tamper $pod $t0 $t1" >>"$EV"
		echo "$pod $kind $noticed $repaired $check $back" >>"$W_TMP/drift"
	done
}

healthz() { # /healthz answers 200 within 2 s
	node_exec "$PY" -c 'import urllib.request,sys; sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:9617/healthz", timeout=2).status == 200 else 1)'
}
gone() { ! kill -0 "$1" 2>/dev/null || [[ $(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) == Z ]]; }
restart_agent() { # SIGNAL: the agent stopped so (KILL after 30 s: the kubelet's grace), started again
	local sig=$1 t0 t1 t2 rc=0 src=0
	excl
	t0=$(now_ms)
	kill -"$sig" "$AGENT_PID"
	within 30000 gone "$AGENT_PID" >/dev/null 2>&1 || { src=1 && kill -KILL "$AGENT_PID"; }
	wait "$AGENT_PID" 2>/dev/null || true
	t1=$(now_ms)
	[[ $sig == KILL ]] || t_row "agent stops within 30 s of SIGTERM (the kubelet's grace period)" "$((t1 - t0)) ms" "$src"
	agent_start "${AGENT_FLAGS[@]}"
	within 20000 healthz >/dev/null 2>&1 || rc=1
	t2=$(now_ms)
	unexcl
	event restart "$t0" "$t2"
	t_row "agent restarted after SIG$sig, serving within 20 s" "$((t2 - t1)) ms" "$rc"
}

t0=$(now_ms)
: >"$W_TMP/drift"
for ((w = 0; w < PAR; w++)); do
	churn_worker "$w" &
	CHURNERS+=("$!") && JOBS+=("$!")
	_track_pid "$!"
done
injector &
INJECTOR=$!
JOBS+=("$INJECTOR")
_track_pid "$INJECTOR"
wait_churned $((CYCLES / 4))
restart_agent TERM
wait_churned $((CYCLES / 2))
restart_agent KILL
wait "${CHURNERS[@]}" || true
t1=$(now_ms)
event phase churn "$t0" "$t1"
echo "   info: $CYCLES cycles in $(((t1 - t0) / 1000)) s"
wait "$INJECTOR" || true

# ---- the abusers go; after ---------------------------------------------------------------
for pid in "${ABUSER_PIDS[@]}"; do bg_stop "$pid"; done
for n in flood ct; do
	[[ -s $W_TMP/pods/$n/result ]] || continue
	pod_del "$n" >"$W_TMP/del-$n" 2>&1 || cat "$W_TMP/del-$n"
	ip netns delete "$(pod_ns $n)"
done
t0=$(now_ms)
sleep "$AFTER_S"
event phase after "$t0" "$(now_ms)"
bg_stop "$CLIENTS"

# ---- rows ----------------------------------------------------------------------------------
declare -A N T D
"$PY" "$E2E_DIR/soakstat.py" "$RES" "$CHURN" "$EV" "$PERIOD" "$TRIES_MS" 30000 >"$W_TMP/stat" || true
while read -r key bad total detail; do
	[[ $key == figures ]] && break
	N[$key]=$bad T[$key]=$total D[$key]=$detail
done <"$W_TMP/stat"
stat_row() { # KEY LABEL
	t_row "$2" "${N[$1]:-?} of ${T[$1]:-?}" "$([[ ${N[$1]:-1} == 0 && ${T[$1]:-0} -gt 0 ]] && echo 0 || echo 1)" "${D[$1]:-}"
}
stat_row connect_after_answer "every connect right after an answer succeeds (failures)"
stat_row reconnect_previous "the previous answer's address still open (failures)"
stat_row lost_outside_restarts "no resident's query lost outside the restarts"
stat_row churn_cni "every churn ADD and DEL succeeds (outside restarts)"
echo "   info: churn cycles excused (overlapping a restart): ${N[churn_excused]:-?}; churn pods answered: ${N[churn_answers]:-?}"
stat_row churn_tables_left "no table left in a pod's namespace after its DEL"

fds_back() { (($(agent_fds) <= BASE_FDS + 2)); }
rc=0 && within 30000 fds_back || rc=1
t_row "agent fds back to the baseline (+2)" "$(agent_fds) (baseline $BASE_FDS)" "$rc" \
	"$(find "/proc/$AGENT_PID/fd" -mindepth 1 -maxdepth 1 -printf '%l\n' | sed 's/:\[.*//' | sort | uniq -c)"
rss=$(agent_rss) tol=$((BASE_RSS / 4 > 8192 ? BASE_RSS / 4 : 8192))
if readelf -d "$NG_BIN" | grep -q 'NEEDED.*libasan'; then
	# AddressSanitizer keeps what is freed in its quarantine (256 MiB):
	# the RSS is its, not the agent's (make e2e's plain build has the row).
	echo "   info: agent RSS $rss KiB (baseline $BASE_RSS): not compared under AddressSanitizer"
else
	t_row "agent RSS back to the baseline (+max(8 MiB, 25%))" "$rss KiB (baseline $BASE_RSS)" \
		"$((rss <= BASE_RSS + tol ? 0 : 1))"
fi

declare -A KEEP
for n in "${RESIDENTS[@]}" ref0 ref1; do KEEP[$(_pod_var "$n" id)]=1; done
strays() { # DIR: entries not of a resident or reference pod (a refused ADD's
	# record is kept on purpose, NG_REFUSED_KEEP_S: counted apart)
	local f
	for f in "$1"/*; do
		[[ -e $f && $f != *.refused.json ]] || continue
		f=${f##*/} && [[ -n ${KEEP[${f%%@*}]:-} ]] || echo "$f"
	done
}
host_strays() {
	node_exec nft list tables | sed -n 's/^table netdev ngh\.\([0-9a-f]*\)\..*/\1/p' |
		while read -r id; do [[ -n ${KEEP[$id]:-} ]] || echo "ngh.$id"; done
}
none_left() { # CMD...: prints nothing (shows what it printed otherwise)
	local out
	out=$("$@")
	[[ -z $out ]] || { echo "$out" | head -10 && return 1; }
}
t_check "no decision record left for a deleted pod" within 20000 none_left strays "$STATE/pods"
echo "   info: refused ADDs' records (kept on purpose): $(find "$STATE/pods" -name '*.refused.json' | wc -l)"
t_check "no ready file left for a deleted pod" within 20000 none_left strays "$STATE/ready"
t_check "no host-side table left for a deleted pod" within 20000 none_left host_strays
veths() { node_exec ip -o link show type veth 2>/dev/null | grep -vc ' p-' || true; } # (a peer in a namespace being torn down: ip complains)
veths_are() { (($(veths) == PODS + 2)); }
rc=0 && within 30000 veths_are || rc=1
t_row "no namespace kept alive by a socket (node veths)" "$(veths), want $((PODS + 2))" "$rc"

drift_pods=$(grep -E '"event":"drift(_check)?"' "$W_TMP/log/agent.log" | grep -o '"pod_name":"[^"]*"' | sort | uniq -c || true)
injected=" $(for ((k = 0; k < DRIFTS; k++)); do printf '"pod_name":"p%d" ' "$k"; done)"
false_drift=$(while read -r c p; do [[ -z $p || $injected == *" $p "* ]] || echo "$c $p"; done <<<"$drift_pods")
t_row "no drift event but the injected ones" "$(grep -c . <<<"$false_drift" || true) other pods" \
	"$([[ -z $false_drift ]] && echo 0 || echo 1)" "$false_drift"
rep_pods=$(grep '"event":"repaired"' "$W_TMP/log/agent.log" | grep -o '"pod_name":"[^"]*"' | sort | uniq -c || true)
false_rep=$(while read -r c p; do [[ -z $p || $injected == *" $p "* ]] || echo "$c $p"; done <<<"$rep_pods")
t_row "no repair but of the injected pods" "$(grep -c . <<<"$false_rep" || true) other pods" \
	"$([[ -z $false_rep ]] && echo 0 || echo 1)" "$false_rep"
cnt() { awk -v f="$1" -v w="$2" '$f == w' "$W_TMP/drift" | wc -l; }
t_row "every injected drift noticed (drift event)" "$(cnt 3 yes) of $DRIFTS" "$(($(cnt 3 yes) == DRIFTS ? 0 : 1))" "$(cat "$W_TMP/drift")"
t_row "every injected drift repaired (logged within 30 s)" "$(cnt 4 yes) of $DRIFTS" "$(($(cnt 4 yes) == DRIFTS ? 0 : 1))"
t_row "... and CHECK passes after each repair" "$(cnt 5 yes) of $DRIFTS" "$(($(cnt 5 yes) == DRIFTS ? 0 : 1))"
miss=$(awk '$6 != "-" {split($6, a, "-"); s += a[1]} END {print s + 0}' "$W_TMP/drift")
t_row "learned addresses there at the first look after each repair" "$miss missing" "$((miss == 0 ? 0 : 1))" \
	"$(awk '$6 !~ /^0-/' "$W_TMP/drift")"
t_check "the agent's log is JSON lines" "$PY" -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$W_TMP/log/agent.log"

# ---- figures ---------------------------------------------------------------------------------
echo "   figures (residents' added latency per answer: its latency less the reference pods' median):"
sed -n '/^figures$/,$p' "$W_TMP/stat" | tail -n +2
hz=$(getconf CLK_TCK)
echo "   agent CPU: quiet $((cpu_quiet * 1000 / hz)) ms in ${QUIET_S} s; beside the abusers $((cpu_abuse * 1000 / hz)) ms in ${ABUSE_S} s"
echo "   abusers:$ABUSERS| flood: $(cat "$W_TMP/flood.out" 2>/dev/null); http slow: $(cat "$W_TMP/http-slow.out" 2>/dev/null); noread: $(cat "$W_TMP/http-noread.out" 2>/dev/null)"
echo "   agent log: $(grep -c '"level":"error"' "$W_TMP/log/agent.log" || true) error lines; events by count:"
grep -o '"event":"[a-z_]*"' "$W_TMP/log/agent.log" | sort | uniq -c | sort -rn | head -12 | sed 's/^/     /'
[[ -z ${E2E_KEEP_LOGS:-} ]] || cp -r "$RES" "$CHURN" "$EV" "$W_TMP/drift" "$STATE" "$E2E_KEEP_LOGS/" 2>/dev/null || true
t_summary
