#!/usr/bin/env bash
# concurrency: many pods at once, the way a node starts a burst of sandboxes.
#   - NG_CONC_PODS (default 50) pods ADDed concurrently through the whole
#     chain (loopback, bridge + host-local + netguard): no error, distinct
#     addresses, every table right (CHECK each, concurrently), every pod
#     refusing metadata and reaching storage, one intact decision-log line
#     per call;
#   - then all DELed concurrently: no error, and nothing leaked: no table,
#     no veth on the bridge, no host-local lease, no process in the world's
#     namespaces, no namespace beyond the world's own once the runtime
#     removed the pods';
#   - 10 concurrent ADDs racing on one pod converge to one table and its
#     packet-socket guard (CHECK).
# Ends with "N passed, N failed"; exit status non-zero on failure.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "concurrency.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
N=${NG_CONC_PODS:-50}
C=$W_TMP/conc
mkdir -p "$C"
# On a signal, the jobs in flight stop first (so that none creates a pod
# namespace after world_down has read its list), then the world goes.
JOBS=()
stop_jobs() {
	local p
	for p in "${JOBS[@]}"; do kill_tree "$p"; done
	for p in "${JOBS[@]}"; do wait "$p" 2>/dev/null; done
	world_down
	world_sweep
}
trap 'stop_jobs; _on_signal 130' INT
trap 'stop_jobs; _on_signal 143' TERM

# ---- helpers -------------------------------------------------------------------
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
# all_pods VERB: runs `pod_VERB cI` for every pod at once (each in its own
# background job, waited for by PID: the world's services are children of
# this shell too); the exit status of each goes to $C/cI.VERB.rc.
all_pods() {
	local verb=$1 i pids=()
	for ((i = 1; i <= N; i++)); do
		{
			rc=0
			"pod_$verb" "c$i" >"$C/c$i.$verb.out" 2>&1 || rc=$?
			echo "$rc" >"$C/c$i.$verb.rc"
		} &
		pids+=("$!")
	done
	JOBS=("${pids[@]}")
	wait "${pids[@]}"
	JOBS=()
}
# failures VERB: the pods whose VERB failed, with their output.
failures() {
	local i
	for ((i = 1; i <= N; i++)); do
		[[ $(cat "$C/c$i.$1.rc" 2>/dev/null) == 0 ]] || echo "c$i: $(head -c 300 "$C/c$i.$1.out")"
	done
}
veths_on_bridge() { node_exec ip -o link show master ngbr0 2>/dev/null | wc -l; }
leases() { find "$W_TMP/ipam" -type f ! -name 'last_reserved_ip.*' ! -name lock | sort; }
world_procs() { # processes inside any namespace of this world but the services'
	local ns
	while read -r ns; do
		case $ns in *-dns | *-metadata | *-storage | *-forbidden | *-gateway | *-stranger) continue ;; esac
		[[ -e /run/netns/$ns ]] && ip netns pids "$ns"
	done < <(sort -u "$W_TMP/netns")
	return 0
}
our_netns() { ip netns list | awk '{print $1}' | grep -c "^$W_ID-" || true; }
log_lines() { # VERB DECISION: intact log lines of this verb and decision for pods c*
	"$PY" -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    o = json.loads(line)  # a torn or interleaved line fails here
    if o.get("verb") == sys.argv[2] and o.get("decision") == sys.argv[3] and o.get("pod_name", "").startswith("c"):
        n += 1
print(n)' "$W_TMP/netguard.log" "$1" "$2"
}
probe_all() { # WANT ARGS...: every pod's probe gives WANT; prints the others
	local want=$1 i out
	shift
	for ((i = 1; i <= N; i++)); do
		out=$(pod_exec "c$i" "$NPROBE" "$@" 2>&1) || true
		[[ $out == "$want "* ]] || echo "c$i: $out"
	done
}

# A node that already runs pods: the bridge exists (as it would), then it
# is empty again. What the world holds now is the baseline for leaks.
pod_add w0 >/dev/null
pod_del w0 >/dev/null
pod_netns_rm w0
base_netns=$(our_netns)
base_veths=$(veths_on_bridge)

echo "== $N pods ADDed concurrently"
start=$(date +%s%N)
all_pods add
add_ms=$(ms_since "$start")
bad=$(failures add)
t_row "$N concurrent ADDs: no error" "$add_ms ms" "$([[ -z $bad ]] && echo 0 || echo 1)" "$bad"
for ((i = 1; i <= N; i++)); do
	[[ -s $W_TMP/pods/c$i/result ]] && echo "$(pod_ip "c$i" 4) $(pod_ip "c$i" 6)"
done >"$C/ips"
t_row "distinct addresses for all $N (v4 and v6)" "" \
	"$([[ $(awk '{print $1}' "$C/ips" | sort -u | wc -l) == "$N" && $(awk '{print $2}' "$C/ips" | sort -u | wc -l) == "$N" ]] && echo 0 || echo 1)" \
	"$(sort "$C/ips" | uniq -d)"
t_row "$N veths on the bridge" "$(veths_on_bridge)" "$([[ $(veths_on_bridge) == $((base_veths + N)) ]] && echo 0 || echo 1)"
missing=$(for ((i = 1; i <= N; i++)); do pod_has_table "c$i" || echo "c$i"; done)
t_row "every pod has the table" "" "$([[ -z $missing ]] && echo 0 || echo 1)" "$missing"
start=$(date +%s%N)
all_pods check
bad=$(failures check)
t_row "$N concurrent CHECKs: every table right" "$(ms_since "$start") ms" "$([[ -z $bad ]] && echo 0 || echo 1)" "$bad"
n=$(log_lines ADD enforced 2>&1) || true
t_row "decision log: $N intact ADD lines" "$n" "$([[ $n == "$N" ]] && echo 0 || echo 1)" "$n"
bad=$(probe_all refused tcp "$MD4" 80 2000)
t_row "metadata refused in all $N pods" "" "$([[ -z $bad ]] && echo 0 || echo 1)" "$bad"
bad=$(probe_all connected tcp "$STORE4" 443 2000)
t_row "storage reachable from all $N pods" "" "$([[ -z $bad ]] && echo 0 || echo 1)" "$bad"
bad=$(probe_all refused tcp "$FORBID4" 443 2000)
t_row "forbidden refused in all $N pods" "" "$([[ -z $bad ]] && echo 0 || echo 1)" "$bad"

echo "== all DELed concurrently"
start=$(date +%s%N)
all_pods del
del_ms=$(ms_since "$start")
bad=$(failures del)
t_row "$N concurrent DELs: no error" "$del_ms ms" "$([[ -z $bad ]] && echo 0 || echo 1)" "$bad"
left=$(for ((i = 1; i <= N; i++)); do if pod_has_table "c$i"; then echo "c$i"; fi; done)
t_row "no table left in any pod" "" "$([[ -z $left ]] && echo 0 || echo 1)" "$left"
n=$(log_lines DEL deleted 2>&1) || true
t_row "decision log: $N intact DEL lines" "$n" "$([[ $n == "$N" ]] && echo 0 || echo 1)" "$n"
t_row "no veth left on the bridge" "$(veths_on_bridge)" "$([[ $(veths_on_bridge) == "$base_veths" ]] && echo 0 || echo 1)" \
	"$(node_exec ip -o link show master ngbr0)"
t_row "no host-local lease left" "" "$([[ -z $(leases) ]] && echo 0 || echo 1)" "$(leases)"
t_row "no process left in the node or the pods" "" "$([[ -z $(world_procs) ]] && echo 0 || echo 1)" \
	"$(world_procs | xargs -r ps -o pid=,args= -p 2>/dev/null)"
# The runtime removes the pods' namespaces after DEL.
for ((i = 1; i <= N; i++)); do pod_netns_rm "c$i"; done
t_row "no namespace left beyond the world's" "$(our_netns)" "$([[ $(our_netns) == "$base_netns" ]] && echo 0 || echo 1)" \
	"$(ip netns list | grep "^$W_ID-pod-" || true)"

echo "== 10 concurrent ADDs racing on one pod"
pod_add race >/dev/null
ng_stdin race >"$C/race.json"
race() {
	local i pids=() rc=0 vars
	mapfile -t vars < <(ng_pod_env race)
	for i in {1..10}; do
		_in_node env -i PATH="$PATH" CNI_COMMAND=ADD "${vars[@]}" "$NG_BIN" <"$C/race.json" >"$C/race.$i.out" 2>&1 &
		pids+=("$!")
	done
	JOBS=("${pids[@]}")
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	JOBS=()
	((rc == 0)) || { cat "$C"/race.*.out && return 1; }
	[[ $(pod_exec race nft list tables) == $'table inet boxxkite_netguard\ntable netdev boxxkite_netguard' ]] ||
		{ pod_exec race nft list tables && return 1; }
	pod_check race
}
t_check "all 10 succeed, one table, CHECK passes" race
t_check "DEL race" pod_del race
t_check "no table left anywhere in the world" test -z "$(world_tables)"

t_summary
