# shellcheck shell=bash
# e2e/k8s/deployfns.sh: what e2e/k8s/deploy.sh asks of the node and its pods
# (sourced after cluster.sh; its variables). Every lookup goes by what the
# runtime and the kernel say (a pod's UID in its cgroup path, a container ID,
# a namespace inode), never by a process name.

DP_PY=/usr/bin/python3
DP_STATE=/run/boxxkite-netguard # the plugin's stateDir, in the node's mount namespace
DP_LOG=/var/log/boxxkite-netguard.log

k() { kc_kubectl "$@"; }
# nodef PATH: PATH as the node's processes see it (its mount namespace:
# /run, /var/lib and /var/log are tmpfs there, the rest is the machine's).
nodef() { echo "/proc/$KC_HOLDER/root$1"; }
# node_sh CMD...: CMD in the node's network and mount namespaces (where
# containerd runs the plugin and the DaemonSet's pods see the host).
node_sh() { nsenter --net="/run/netns/$KC_NODE" --mount="/proc/$KC_HOLDER/ns/mnt" -- env -C / "$@"; }

pod_field() { k -n "$1" get pod "$2" -o "jsonpath=$3" 2>/dev/null; }
pod_phase_is() { [ "$(pod_field "$1" "$2" '{.status.phase}')" = "$3" ]; }
pod_ready() { [ "$(pod_field "$1" "$2" '{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
pod_gone() { ! k -n "$1" get pod "$2" >/dev/null 2>&1; }

# has WORD CMD...: CMD's output holds WORD (else the output is shown).
has() {
	local out w=$1
	shift
	out=$("$@" 2>&1)
	case $out in *"$w"*) return 0 ;; esac
	echo "$out"
	return 1
}

# pause_pid NS POD: the pid of the pod's infra (pause) process, as the README
# finds it with crictl: each sandbox's pid from containerd (e2e/cri/cri.py,
# PodSandboxStatus), the one whose cgroup is the pod's (kubepods/.../pod<UID>).
pause_pid() {
	local uid id pid
	uid=$(pod_field "$1" "$2" '{.metadata.uid}')
	[ -n "$uid" ] || return 1
	for id in $(timeout 20 "$DP_PY" "$KC_ROOT/e2e/cri/cri.py" "$KC_SOCK" lsp 2>/dev/null); do
		pid=$(timeout 20 "$DP_PY" "$KC_ROOT/e2e/cri/cri.py" "$KC_SOCK" pid "$id" 2>/dev/null) || continue
		grep -q "/pod$uid/" "/proc/$pid/cgroup" 2>/dev/null && echo "$pid" && return 0
	done
	return 1
}

# container_pid NS POD CONTAINER: the container's one process (its init),
# from the cgroup the runtime made for its ID.
container_pid() {
	local cid dir procs
	cid=$(k -n "$1" get pod "$2" -o "jsonpath={.status.containerStatuses[?(@.name==\"$3\")].containerID}")
	cid=${cid#*://}
	[ -n "$cid" ] || return 1
	dir=$(find /sys/fs/cgroup/*/"$KC_CG" -type d -name "$cid" 2>/dev/null | head -n 1)
	[ -n "$dir" ] || return 1
	procs=$(cat "$dir/cgroup.procs")
	[ "$(wc -w <<<"$procs")" = 1 ] || { echo "container $3: processes $procs, not one" >&2; return 1; }
	echo "$procs"
}

# timed VAR CMD...: runs CMD, sets VAR_rc, VAR_ms, VAR_out.
timed() {
	local var=$1 t0 rc=0 out
	shift
	t0=$(kc_ms)
	out=$("$@" 2>&1) || rc=$?
	printf -v "${var}_ms" %d $(($(kc_ms) - t0))
	printf -v "${var}_rc" %d "$rc"
	printf -v "${var}_out" %s "$out"
}

# failed_fast VAR MAX_MS WHY: VAR's command (curl -v) failed with curl's
# "could not connect" (7) within MAX_MS, its trace saying WHY ("connect to
# ... failed: Connection refused": the reset of a reject; "Immediate
# connect fail for ...: Network is unreachable": no route, an empty
# namespace). A drop would be exit 28 after curl's own -m.
failed_fast() {
	local rc ms out
	rc=${1}_rc ms=${1}_ms out=${1}_out
	[ "${!rc}" = 7 ] && [ "${!ms}" -lt "$2" ] && grep -q ": $3\$" <<<"${!out}" && return 0
	echo "exit ${!rc} after ${!ms} ms (bound $2 ms, wanted \"$3\"):"
	grep -v '^[<>{}] \|^\* *Trying' <<<"${!out}"
	return 1
}
refused_fast() { failed_fast "$1" "$2" "Connection refused"; }

# kx NS POD CONTAINER CMD...: kubectl exec.
kx() {
	local ns=$1 pod=$2 c=$3
	shift 3
	k -n "$ns" exec "$pod" -c "$c" -- "$@"
}

# record_of NS POD: the plugin's pod record (stateDir/pods/KEY.json) for
# the pod, by the namespace and name it holds; prints its path.
record_of() {
	local f
	for f in "$(nodef "$DP_STATE")"/pods/*.json; do
		[ -e "$f" ] || continue
		"$DP_PY" -c 'import json,sys; p=json.load(open(sys.argv[1]))["pod"]; sys.exit(0 if (p["namespace"],p["name"])==(sys.argv[2],sys.argv[3]) else 1)' \
			"$f" "$1" "$2" 2>/dev/null && echo "$f" && return 0
	done
	return 1
}
# record_get FILE PYEXPR: a field of a record (r is the record).
record_get() { "$DP_PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# logged VERB DECISION NS POD: the decision log has such a line.
logged() {
	"$DP_PY" - "$(nodef "$DP_LOG")" "$@" <<'PY'
import json, sys
path, verb, decision, ns, pod = sys.argv[1:]
for line in open(path):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if (o.get("verb"), o.get("pod_namespace"), o.get("pod_name")) == (verb, ns, pod) and \
            (decision == "-" or o.get("decision") == decision):
        sys.exit(0)
sys.exit(1)
PY
}

# The node's view of our objects: netdev tables in its network namespace
# (the host-side tables, ngh.*), links on the pods' bridge, IPAM leases.
node_tables() { kc_in "$KC_NODE" nft list tables netdev 2>&1; }
bridge_ports() { kc_in "$KC_NODE" ip -o link show master cni0 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1; }
ipam_leases() { find "$KC_IPAM" -type f -name '10.*' -printf '%f\n' 2>/dev/null | sort; }
# A pod's namespace tables, from its infra process.
pod_tables() { nsenter --net="/proc/$1/ns/net" -- nft list tables 2>&1; }

# conflist_plugins FILE: the types of its plugins, in order.
conflist_plugins() { "$DP_PY" -c 'import json,sys; print(" ".join(p["type"] for p in json.load(open(sys.argv[1]))["plugins"]))' "$1"; }

node_taints() { k get node "$KC_NODE_NAME" -o 'jsonpath={.spec.taints[*].key}'; }
untainted() { ! node_taints | grep -qw "$DP_TAINT"; }
