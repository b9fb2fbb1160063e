#!/usr/bin/env bash
# e2e/k8s/smoke.sh (root): the single-node cluster of e2e/k8s/cluster.sh,
# up and down, and what the later tests rely on, one row per check: the
# node Ready, a pod Running with an IP, kubectl exec and logs, httpGet
# probes, cluster DNS through the kube-dns Service, the kubernetes Service
# from a pod and from a hostNetwork DaemonSet pod (a ServiceAccount token,
# in-cluster kubectl), the fake peers, pod deletion (CNI DEL), and nothing
# left on the machine afterwards. Ends with "N passed, N failed".
#
#   sudo e2e/k8s/smoke.sh            # builds the binaries first if needed
#   K8S_BIN=DIR KEEP=1 e2e/k8s/smoke.sh   # given binaries; keep the logs
set -u
export LC_ALL=C

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/lib/assert.sh
. "$HERE/../lib/assert.sh"
# shellcheck source=e2e/k8s/cluster.sh
. "$HERE/cluster.sh"
T_PASS=0
T_FAIL=0
T_START=$(kc_ms)

# --- preconditions -------------------------------------------------------------

need() {
	local missing="" c
	[ "$(id -u)" = 0 ] || missing=" root"
	for c in containerd containerd-shim-runc-v2 ctr runc nsenter unshare ip ss nft socat dnsmasq busybox openssl \
		curl iptables "${CC:-cc}" flock; do
		command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	for c in bridge host-local loopback portmap; do [ -x "/usr/lib/cni/$c" ] || missing="$missing /usr/lib/cni/$c"; done
	[ -z "$missing" ] || { echo "missing:$missing"; return 1; }
}
t_check "prerequisites: root, containerd, runc, CNI plugins, dnsmasq, openssl... (make e2e-k8s installs them)" need
[ "$T_FAIL" = 0 ] || { t_summary; exit 1; }

# --- the cluster ---------------------------------------------------------------

# The machine's own network namespace, before and after: addresses, routes
# and the whole nftables ruleset (iptables-nft's tables included).
root_netns() { { ip -o addr; ip -o route; ip -o -6 route; nft list ruleset; } 2>&1 | sha256sum; }
ROOT_BEFORE=$(root_netns)
# The global sysctls a kubelet would set (node.sh covers them for it).
machine_sysctls() {
	cat /proc/sys/vm/overcommit_memory /proc/sys/vm/panic_on_oom /proc/sys/kernel/panic \
		/proc/sys/kernel/panic_on_oops /proc/sys/kernel/keys/root_maxkeys /proc/sys/kernel/keys/root_maxbytes | paste -sd' '
}
SYSCTL_BEFORE=$(machine_sysctls)

kc_init || exit 1
W_TMP=$(mktemp -d /tmp/ngk-smoke.XXXXXX) # t_check's scratch: outlives kc_down's rm
smoke_exit() {
	kc_down
	rm -rf "$W_TMP"
}
interrupted() {
	smoke_exit
	t_bad
	_row "interrupted ($1): cluster removed" "" FAIL
	t_summary
}
# (KC_OUT: the script's stdout, whatever the interrupted command's was.)
trap 'smoke_exit >&"$KC_OUT" 2>&1' EXIT
trap 'interrupted SIGINT >&"$KC_OUT" 2>&1; exit 130' INT
trap 'interrupted SIGTERM >&"$KC_OUT" 2>&1; exit 143' TERM
kc_say "e2e-k8s smoke: id $KC_ID, temp $KC_T"

t0=$(kc_ms)
if K8S_BIN=${K8S_BIN:-$("$HERE/build.sh")}; then
	build_ms=$(($(kc_ms) - t0))
	v=$("$K8S_BIN/kubelet" --version 2>/dev/null)
	t_check "binaries: ${v#Kubernetes } in $K8S_BIN ($build_ms ms)" test -x "$K8S_BIN/kubelet"
else
	t_check_not "binaries built (e2e/k8s/build.sh)" true
	t_summary
	exit 1
fi

if kc_up; then
	t_check "cluster up in the node's namespace: node $KC_NODE_NAME Ready in $KC_READY_MS ms, pods in $KC_UP_MS ms" true
	UP=1
else
	t_check_not "cluster up (failed at: ${KC_FAILED:-?})" true
	kc_dead_logs
	UP=
fi

# --- checks ----------------------------------------------------------------------

k() { kc_kubectl "$@"; }
# pod_field POD JSONPATH
pod_field() { k get pod "$1" -o "jsonpath=$2" 2>/dev/null; }
pod_running() { [ "$(pod_field "$1" '{.status.phase}')" = Running ]; }
pod_ready() { [ "$(pod_field "$1" '{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
xc() { k exec "$1" -- "${@:2}"; } # exec in POD
has() {                           # has WORD CMD...: CMD's output holds WORD
	local out w=$1
	shift
	out=$("$@" 2>&1)
	case $out in *"$w"*) return 0 ;; esac
	echo "$out"
	return 1
}
ds_pod() { k get pods -l app=hostnet -o 'jsonpath={.items[0].metadata.name}' 2>/dev/null; }
ds_running() { pod_running "$(ds_pod)"; }
bridge_ports() { kc_in "$KC_NODE" ip -o link show master cni0 2>/dev/null | wc -l; }
ipam_leases() { find "$KC_IPAM" -type f -name '10.*' 2>/dev/null | wc -l; }
service_rules() {
	if [ "${KC_PROXY_MODE:-iptables}" = nftables ]; then
		kc_in "$KC_NODE" nft list table ip kube-proxy | grep -F "$KC_API_SVC_IP" | grep -q 'default/kubernetes/tcp/https'
	else
		kc_in "$KC_NODE" iptables-save -t nat | grep -F -- "-d $KC_API_SVC_IP/32" | grep -q 'default/kubernetes:https'
	fi
}
# Pod network namespaces are mounts of the node's mount namespace, never
# of the machine's (no cni-* in its /run/netns).
pod_netns_inside() {
	grep -q ' nsfs ' "/proc/$KC_HOLDER/mountinfo" || { echo "no nsfs mount in the node's mount namespace"; return 1; }
	! compgen -G '/run/netns/cni-*'
}
no_pods() { [ -z "$(k get pods -o name 2>/dev/null)" ]; }

# The control plane listens in the node's namespace: the apiserver and the
# kubelet on the node IP, the rest on its loopback; no process of ours has
# a socket in the machine's namespace.
node_listens() {
	local s a
	s=$(kc_in "$KC_NODE" ss -Hltn)
	for a in "$KC_NODE_IP:6443" "$KC_NODE_IP:10250" 127.0.0.1:2379 127.0.0.1:10257 127.0.0.1:10259 \
		127.0.0.1:10248 127.0.0.1:10256; do
		grep -qF " $a " <<<"$s" || { echo "$s"; echo "nothing listens on $a"; return 1; }
	done
}
none_in_root() {
	local ours p bad=
	ours=$(kc_our_pids)
	for p in $(ss -Hantup | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
		grep -qx "$p" <<<"$ours" && bad="$bad $p"
	done
	[ -z "$bad" ] || { ss -Hantup | grep -E "pid=(${bad// /|})[,)]" ; return 1; }
}

if [ -n "$UP" ]; then
	t_check "apiserver, etcd, kubelet, controllers, kube-proxy listen in the node's namespace" node_listens
	t_check "no process of the cluster has a socket in the machine's namespace" none_in_root
	t_check "kube-proxy (${KC_PROXY_MODE:-iptables}): the kubernetes Service $KC_API_SVC_IP:443 has its rules in the node" \
		kc_wait 30 service_rules
	sed "s|@IMAGE@|$KC_IMAGE|" "$HERE/smoke.yaml" >"$W_TMP/smoke.yaml"
	t_check "workloads applied (busybox, web, hostnet DaemonSet)" k apply -f "$W_TMP/smoke.yaml"

	t0=$(kc_ms)
	kc_wait 90 pod_running busybox >/dev/null
	ip=$(pod_field busybox '{.status.podIP}')
	t_check "busybox pod Running with an IP from the bridge ($ip, $(($(kc_ms) - t0)) ms)" \
		has 10.244.0. echo "$ip"
	t_check "the pod's netns is mounted in the node's mount namespace, not the machine's" pod_netns_inside
	t_check "kubectl exec into the pod" has exec-ok xc busybox echo exec-ok
	t_check "kubectl logs shows what the pod printed" has hello-from-busybox k logs busybox
	t_check "pod resolv.conf names the cluster DNS $KC_DNS_SVC_IP" has "nameserver $KC_DNS_SVC_IP" \
		xc busybox cat /etc/resolv.conf
	t_check "cluster DNS: storage.test via the kube-dns Service -> dnsmasq ($KC_STOR_IP)" \
		has "Address: $KC_STOR_IP" xc busybox nslookup storage.test
	t_check "pod connects to the kubernetes Service $KC_API_SVC_IP:443 (kube-proxy DNAT)" \
		xc busybox nc -w 3 "$KC_API_SVC_IP" 443 </dev/null
	t_check "pod's ServiceAccount token reaches the apiserver (in-cluster kubectl auth whoami)" \
		has system:serviceaccount:default:default xc busybox kubectl auth whoami -o 'jsonpath={.status.userInfo.username}'
	t_check "pod reaches the fake metadata server $KC_META_IP:80 (no policy yet: the control)" \
		has metadata-ok xc busybox nc -w 3 "$KC_META_IP" 80
	t_check "pod reaches storage $KC_STOR_IP:443" has storage-ok xc busybox nc -w 3 "$KC_STOR_IP" 443

	t0=$(kc_ms)
	kc_wait 90 pod_ready web >/dev/null
	t_check "httpGet readiness probe on :8080 makes web Ready ($(($(kc_ms) - t0)) ms after busybox)" pod_ready web
	t_check "liveness probe passing: web not restarted" \
		test "$(pod_field web '{.status.containerStatuses[0].restartCount}')" = 0

	kc_wait 90 ds_running >/dev/null
	dp=$(ds_pod)
	t_check "hostNetwork DaemonSet pod ${dp:-?} Running with the node IP" \
		has "$KC_NODE_IP" pod_field "${dp:-none}" '{.status.podIP}'
	t_check "hostNetwork pod resolves through the cluster DNS (ClusterFirstWithHostNet)" \
		has "Address: $KC_STOR_IP" xc "${dp:-none}" nslookup storage.test
	t_check "hostNetwork pod's ServiceAccount reaches the apiserver via $KC_API_SVC_IP" \
		has system:serviceaccount:default:default xc "${dp:-none}" kubectl auth whoami -o 'jsonpath={.status.userInfo.username}'

	gw=$(kc_gw_packets)
	t_check "no packet left the world: the node's default gateway (a dead end) saw ${gw:-?} IPv4 packets" \
		test "${gw:-x}" = 0
	t_check "workloads deleted (each pod's CNI DEL ran)" \
		k delete -f "$W_TMP/smoke.yaml" --wait=true --timeout=60s
	kc_wait 60 no_pods >/dev/null
	t_check "no veth left on cni0, no IPAM lease left" test "$(bridge_ports)/$(ipam_leases)" = 0/0
fi

# --- down, and nothing left -------------------------------------------------------

t0=$(kc_ms)
kc_down
t_check "cluster down in $(($(kc_ms) - t0)) ms: no namespace, cgroup, process, mount or temp dir left" kc_leftovers
t_check "the machine's network namespace unchanged (addresses, routes, nftables ruleset)" \
	test "$(root_netns)" = "$ROOT_BEFORE"
t_check "the machine's kernel settings unchanged (vm.overcommit_memory, kernel.panic...: $SYSCTL_BEFORE)" \
	test "$(machine_sysctls)" = "$SYSCTL_BEFORE"
kc_say "wall time $(($(kc_ms) - T_START)) ms"
t_summary
