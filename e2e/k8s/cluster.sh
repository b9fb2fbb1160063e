# shellcheck shell=bash
# e2e/k8s/cluster.sh: a single-node Kubernetes cluster, built from source
# (e2e/k8s/build.sh), entirely inside network namespaces made here. Sourced,
# not run (root):
#
#   . e2e/k8s/cluster.sh
#   kc_init              # names, temp dir, traps (EXIT INT TERM -> kc_down)
#   kc_up                # returns once pods can run: the node Ready
#                        # (KC_READY_MS after the start), the default
#                        # ServiceAccount there (KC_UP_MS)
#   kc_kubectl get pods -A
#   kc_down              # also run by the traps; KC_LEFTOVER lists what stayed
#
# The parts, one job each: net.sh (namespaces, fake DNS/metadata/storage),
# pki.sh (openssl CA, certificates, kubeconfigs), node.sh (the node's mount
# namespace, cgroup parent, CNI, containerd, kubelet), control.sh (etcd,
# apiserver, controller manager, scheduler, kube-proxy, kube-dns), images.sh
# (the pods' image). Inputs, all optional:
#
#   K8S_BIN=DIR         the binaries (default: whatever build.sh prints)
#   KC_NODE_NAME=NAME   the node's name (default ngk-node)
#   KC_PROXY_MODE=MODE  kube-proxy's mode, iptables (default) or nftables
#   KC_NETNS_UNDER_STATE=false  pod netns under /run/netns (node.sh)
#   KC_NODE_TAINT=KEY[=VALUE]:EFFECT  the node registers with this taint
#   KC_IMAGE_TAGS=REFS  more names for the pods' image
#   KEEP=1              keep the temp dir (logs, configs) after kc_down
#
# Nothing is put in the machine's network namespace, the one default route
# ends at a dead end inside the world, every Kubernetes listener is in the
# node's namespace, and kc_down ends every process by PID (never by name)
# and removes every namespace, mount and cgroup, also after a failure.

KC_HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KC_ROOT=$(cd "$KC_HERE/../.." && pwd)
# shellcheck source=e2e/k8s/net.sh
. "$KC_HERE/net.sh"
# shellcheck source=e2e/k8s/pki.sh
. "$KC_HERE/pki.sh"
# shellcheck source=e2e/k8s/node.sh
. "$KC_HERE/node.sh"
# shellcheck source=e2e/k8s/control.sh
. "$KC_HERE/control.sh"
# shellcheck source=e2e/k8s/images.sh
. "$KC_HERE/images.sh"
# shellcheck source=e2e/k8s/down.sh
. "$KC_HERE/down.sh"

kc_say() { printf '# %s\n' "$*"; }
kc_alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
kc_ms() { echo $(($(date +%s%N) / 1000000)); }

# kc_stop_pid PID: TERM, up to 10 s, then KILL.
kc_stop_pid() {
	local _
	kc_alive "$1" || return 0
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 100); do
		kc_alive "$1" || return 0
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	sleep 0.1
}

# kc_wait SECONDS CMD...: CMD succeeds within SECONDS (tried every 0.2 s);
# fails at once when a process kc_spawn started has exited.
kc_wait() {
	local end=$(($(date +%s) + $1)) i
	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		for i in "${!KC_PIDS[@]}"; do
			kc_alive "${KC_PIDS[$i]}" || { echo "${KC_NAMES[$i]} exited (log: $KC_LOGS/${KC_NAMES[$i]}.log)"; return 1; }
		done
		[ "$(date +%s)" -lt "$end" ] || { echo "timed out: $*"; return 1; }
		sleep 0.2
	done
}

# kc_kubectl ARGS...: the cluster's kubectl as cluster admin, run in the
# node's network namespace (the only place the apiserver can be reached).
kc_kubectl() {
	${KC_EXEC:+exec} nsenter --net="/run/netns/$KC_NODE" -- "$KC_BIN/kubectl" --kubeconfig="$KC_PKI/admin.kubeconfig" \
		--cache-dir="$KC_T/kube-cache" --request-timeout="${KC_KUBECTL_TIMEOUT:-30s}" "$@"
}
# kc_kubectl_bg IN OUT ARGS...: kc_kubectl in the background, reading IN
# (a file or a FIFO), writing OUT; exec'd all the way down, so that
# KC_KUBECTL_PID is kubectl's own PID (stopped by it; kc_down's sweep by
# namespace catches it too). A watch (-w) also ends after
# KC_KUBECTL_TIMEOUT.
kc_kubectl_bg() {
	local in=$1 out=$2
	shift 2
	(KC_EXEC=1 kc_kubectl "$@") <"$in" >"$out" 2>&1 &
	# shellcheck disable=SC2034 # for the caller
	KC_KUBECTL_PID=$!
}

kc_init() {
	KC_ID=${KC_ID:-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')}
	KC_P=ngk-$KC_ID
	KC_NODE=$KC_P-node KC_DNS=$KC_P-dns KC_META=$KC_P-meta KC_STOR=$KC_P-stor KC_GW=$KC_P-gw
	KC_NSES=("$KC_NODE" "$KC_DNS" "$KC_META" "$KC_STOR" "$KC_GW")
	KC_CG=$KC_P # the kubelet's cgroupRoot: every pod cgroup is under it
	KC_NODE_NAME=${KC_NODE_NAME:-ngk-node}
	KC_IMAGE=localhost/boxxkite-netguard/k8s-test:1
	KC_T=$(mktemp -d "/tmp/$KC_P.XXXXXX") || return 1
	KC_PKI=$KC_T/pki KC_LOGS=$KC_T/logs KC_SOCK=$KC_T/containerd.sock
	KC_NETD=$KC_T/net.d KC_CNI_BIN=$KC_T/cni-bin KC_IPAM=$KC_T/ipam
	# The same two CNI dirs as the node's processes see them at fixed names
	# (node.sh, kc_mounts_up): where e2e/k8s/overlay/ points the hostPaths.
	KC_NODE_NETD=/run/ngk/cni/net.d KC_NODE_CNI_BIN=/run/ngk/cni/bin
	mkdir -p "$KC_LOGS" "$KC_T/sysctl" "$KC_NETD" "$KC_CNI_BIN" || return 1
	KC_PIDS=() KC_NAMES=() KC_BG=() KC_HOLDER="" KC_MNT="" KC_MNT_FD="" KC_LEFTOVER="" KC_DOWN_DONE=""
	# A trap runs inside whatever command it interrupts, with that command's
	# redirections: its words go to the stdout kc_init was called with.
	exec {KC_OUT}>&1
	trap 'kc_down >&"$KC_OUT" 2>&1' EXIT
	trap 'kc_down >&"$KC_OUT" 2>&1; echo "interrupted (SIGINT)" >&"$KC_OUT"; exit 130' INT
	trap 'kc_down >&"$KC_OUT" 2>&1; echo "interrupted (SIGTERM)" >&"$KC_OUT"; exit 143' TERM
}

# _kc_step NAME CMD...: one step of kc_up, timed; on failure says which,
# with the step's own words. CMD runs in this shell (not in $(...)): the
# PIDs and fds it records must outlive it.
_kc_step() {
	local name=$1 t0 out=$KC_T/step.out
	shift
	t0=$(kc_ms)
	if "$@" >"$out" 2>&1; then
		kc_say "$name: $(($(kc_ms) - t0)) ms"
		return 0
	fi
	# shellcheck disable=SC2034 # for the caller: which step failed
	KC_FAILED="$name"
	kc_say "$name: FAILED after $(($(kc_ms) - t0)) ms"
	tail -n 5 "$out" | sed 's/^/#   /'
	return 1
}

# kc_dead_logs: the last lines of the log of each spawned process that has
# exited (after a failed kc_up: usually the reason).
kc_dead_logs() {
	local i
	for i in "${!KC_PIDS[@]}"; do
		kc_alive "${KC_PIDS[$i]}" && continue
		echo "    == ${KC_NAMES[$i]} exited; the end of its log:"
		tail -n 10 "$KC_LOGS/${KC_NAMES[$i]}.log" | cut -c1-300 | sed 's/^/    | /'
	done
}

_kc_node_registered() { kc_kubectl get node "$KC_NODE_NAME" >/dev/null 2>&1; }
_kc_node_ready() {
	[ "$(kc_kubectl get node "$KC_NODE_NAME" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
_kc_sa_ready() { kc_kubectl -n default get serviceaccount default >/dev/null 2>&1; }

# kc_up: the whole cluster, in dependency order; what can start while the
# apiserver boots (CNI, containerd, the image) does.
kc_up() {
	local t0
	t0=$(kc_ms)
	if [ -z "${K8S_BIN:-}" ]; then K8S_BIN=$("$KC_HERE/build.sh") || return 1; fi
	KC_BIN=$K8S_BIN
	_kc_step "network namespaces and fake peers" kc_net_up &&
		_kc_step "certificates (openssl)" kc_pki &&
		_kc_step "cgroup parent /$KC_CG" kc_cgroups_up &&
		_kc_step "node mount namespace" kc_mounts_up &&
		_kc_step "etcd" kc_etcd_up &&
		_kc_step "kube-apiserver started" kc_apiserver_start &&
		_kc_step "CNI conflist and bin dir" kc_cni_up &&
		_kc_step "containerd (CRI)" kc_containerd_up &&
		_kc_step "image imported" kc_image_up &&
		_kc_step "kube-apiserver ready" kc_wait 90 _kc_api_ok &&
		_kc_step "controller-manager and scheduler" kc_controllers_up &&
		_kc_step "kube-dns Service" kc_dns_service &&
		_kc_step "kubelet" kc_kubelet_up &&
		_kc_step "node registered" kc_wait 60 _kc_node_registered &&
		_kc_step "kube-proxy" kc_proxy_up &&
		_kc_step "node Ready" kc_wait 120 _kc_node_ready || return 1
	# shellcheck disable=SC2034 # for the caller: start to node Ready
	KC_READY_MS=$(($(kc_ms) - t0))
	# Pods can be made once the controller manager has made the namespace's
	# ServiceAccount (and published kube-root-ca.crt).
	_kc_step "default ServiceAccount" kc_wait 60 _kc_sa_ready || return 1
	# shellcheck disable=SC2034 # for the caller: start to ready for pods
	KC_UP_MS=$(($(kc_ms) - t0))
}

# kc_our_pids: every process this cluster started, directly or not: in the
# node's mount namespace (daemons, shims), in one of our network
# namespaces (servers, hostNetwork pods), or in a cgroup under ours (pods).
# Matched by namespace inode and cgroup path, never by name; an inode is
# only trusted while its namespace is pinned (our fd, a /run/netns name).
kc_our_pids() {
	local n pat=()
	[ -z "$KC_MNT_FD" ] || pat+=(-o -name mnt -lname "mnt:\\[${KC_MNT//[^0-9]/}\\]")
	for n in "${KC_NSES[@]}"; do
		[ -e "/run/netns/$n" ] && pat+=(-o -name net -lname "net:\\[$(stat -L -c %i "/run/netns/$n")\\]")
	done
	{
		find /proc/[0-9]*/ns -maxdepth 1 \( -false "${pat[@]}" \) 2>/dev/null
		grep -l ":/$KC_CG/" /proc/[0-9]*/cgroup 2>/dev/null
	} | cut -d/ -f3 | grep -vx "$$" | sort -un
}
