# shellcheck shell=bash
# e2e/k8s/node.sh: the node's private mount namespace, its cgroup parent,
# the CNI config, containerd and the kubelet (sourced by e2e/k8s/cluster.sh;
# its variables). GUIDE.md section 5 has the containerd facts this follows.

# kc_mounts_up: one private mount namespace for every process of the node,
# held by a sleeping process. The kubelet and containerd must share it: the
# kubelet mounts the pods' volumes (tmpfs for ServiceAccount tokens) that
# containerd then binds into containers. In it:
#  - the machine's /run/netns copies are dropped (no other test's namespace
#    is pinned by ours, nor our own node's after `ip netns del`);
#  - tmpfs on /run (runc, shims), /var/lib (libcni's cache in /var/lib/cni)
#    and /var/log (the kubelet's /var/log/containers links); /run is made
#    shared, a new peer group inside this namespace only, so that hostPath
#    volumes under it with HostToContainer propagation (/run/netns) see
#    mounts made after the pod started;
#  - the CNI conf and bin dirs ($KC_NETD, $KC_CNI_BIN, in the temp dir) are
#    also bound at fixed names, $KC_NODE_NETD and $KC_NODE_CNI_BIN under
#    /run: what a manifest's hostPath names (e2e/k8s/overlay/), the same
#    every run, and never a directory of the machine;
#  - the six sysctls the kubelet wants are shown to it set. They are global
#    (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops...): a kubelet
#    with protectKernelDefaults false rewrites the machine's, one with true
#    fails unless they match. Each /proc/sys file is covered, here only, by
#    a file holding the value it wants, and the kubelet runs with
#    protectKernelDefaults: true: a mismatch is an error, never a write.
kc_mounts_up() {
	local self
	self=$(readlink /proc/self/ns/mnt)
	# The script is single-quoted: $1 expands inside the new namespace.
	# shellcheck disable=SC2016
	nsenter --net="/run/netns/$KC_NODE" unshare --mount --propagation private -- /bin/sh -c '
		umount -R -l /run/netns 2>/dev/null
		mount -t tmpfs -o mode=0755 ngk-run /run && mount --make-rshared /run &&
		mount -t tmpfs -o mode=0755 ngk-varlib /var/lib &&
		mount -t tmpfs -o mode=0755 ngk-varlog /var/log &&
		mkdir -p /var/lib/cni /var/log/pods /var/log/containers "$2" "$3" || exit 1
		mount --bind "$4" "$2" && mount --bind "$5" "$3" || exit 1
		for kv in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
			kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
			f="$1/sysctl/$(echo "${kv%%=*}" | tr / .)"
			echo "${kv#*=}" >"$f" && mount --bind "$f" "/proc/sys/${kv%%=*}" || exit 1
		done
		exec sleep infinity' sh "$KC_T" "$KC_NODE_NETD" "$KC_NODE_CNI_BIN" "$KC_NETD" "$KC_CNI_BIN" >"$KC_LOGS/mounts.log" 2>&1 &
	KC_HOLDER=$!
	# 120 s: a correctness bound (100 tries of 50 ms ran out after 28 s at
	# a load average of 30: each try forks); the holder is ready in ms.
	local t0=$SECONDS
	while ((SECONDS - t0 < 120)); do
		kc_alive "$KC_HOLDER" || return 1
		# sleep runs once the namespace is complete (after nsenter, unshare, sh)
		case $(readlink "/proc/$KC_HOLDER/exe" 2>/dev/null) in */sleep) ;; *) sleep 0.05 && continue ;; esac
		if KC_MNT=$(readlink "/proc/$KC_HOLDER/ns/mnt" 2>/dev/null) && [ "$KC_MNT" != "$self" ]; then
			# Pinned by an fd: its inode names our processes until cleanup.
			# shellcheck disable=SC2034 # closed by kc_down
			exec {KC_MNT_FD}<"/proc/$KC_HOLDER/ns/mnt" || return 1
			grep -q '^1$' "/proc/$KC_HOLDER/root/proc/sys/kernel/panic_on_oops" 2>/dev/null || return 1
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# kc_spawn NAME CMD...: CMD in the node's network and mount namespaces, in
# the background, its output in $KC_LOGS/NAME.log; nsenter and env exec
# CMD, so the PID recorded is CMD's own. Stopped in reverse order by
# kc_down. The working directory is set inside the namespace (env -C):
# nsenter's --wd is a directory of the old one, unreachable (getcwd fails).
kc_spawn() {
	local name=$1
	shift
	nsenter --net="/run/netns/$KC_NODE" --mount="/proc/$KC_HOLDER/ns/mnt" -- env -C "$KC_T" \
		"$@" >>"$KC_LOGS/$name.log" 2>&1 &
	KC_PIDS+=("$!")
	KC_NAMES+=("$name")
}

# kc_cgroups_up: the parent of every cgroup the kubelet and runc make
# (kubelet's cgroupRoot), in each hierarchy, so that one name finds and
# removes them all. The kubelet refuses a cgroupRoot that does not exist.
kc_cgroups_up() {
	local d
	if [ -e /sys/fs/cgroup/cgroup.procs ]; then # cgroup v2 only (untested here)
		mkdir -p "/sys/fs/cgroup/$KC_CG" || return 1
		sed 's/\([a-z_]*\)/+\1/g' /sys/fs/cgroup/cgroup.subtree_control >"/sys/fs/cgroup/$KC_CG/cgroup.subtree_control"
		return 0
	fi
	for d in /sys/fs/cgroup/*/; do
		d=${d%/}
		[ -L "$d" ] || [ ! -e "$d/cgroup.procs" ] && continue
		mkdir -p "$d/$KC_CG" || return 1
		# A new cpuset has no CPUs or memory nodes until told.
		if [ -e "$d/cpuset.cpus" ]; then
			cat "$d/cpuset.cpus" >"$d/$KC_CG/cpuset.cpus" && cat "$d/cpuset.mems" >"$d/$KC_CG/cpuset.mems" || return 1
		fi
	done
}

kc_cgroups_down() {
	local d _
	for _ in 1 2 3 4 5; do
		for d in "/sys/fs/cgroup/$KC_CG" /sys/fs/cgroup/*/"$KC_CG"; do
			[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
		done
		compgen -G "/sys/fs/cgroup/*/$KC_CG" >/dev/null || [ -d "/sys/fs/cgroup/$KC_CG" ] || return 0
		sleep 0.2
	done
	return 1
}

# kc_cni_up: the primary CNI as a simple cluster would have it: Debian's
# bridge + host-local (+ portmap) in $KC_NETD, one bin dir of symlinks (it
# must hold loopback), the file renamed in complete (net.d is watched).
kc_cni_up() {
	mkdir -p "$KC_CNI_BIN" "$KC_NETD" "$KC_IPAM" || return 1
	ln -sf /usr/lib/cni/* "$KC_CNI_BIN/" || return 1
	cat >"$KC_T/10-bridge.conflist.tmp" <<EOF || return 1
{
  "cniVersion": "1.0.0",
  "name": "ngk",
  "plugins": [
    {
      "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false, "hairpinMode": true,
      "ipam": {
        "type": "host-local", "dataDir": "$KC_IPAM",
        "ranges": [[{"subnet": "$KC_POD_CIDR", "gateway": "$KC_POD_GW"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
	mv "$KC_T/10-bridge.conflist.tmp" "$KC_NETD/10-bridge.conflist"
}

# KC_NETNS_UNDER_STATE=false: pod network namespaces are mounted under
# /run/netns (this namespace's tmpfs, where deploy/ expects them) instead of
# containerd's state dir (the default here, as in the CRI e2e).
kc_containerd_up() {
	cat >"$KC_T/containerd.toml" <<EOF
version = 2
root = "$KC_T/containerd/root"
state = "$KC_T/containerd/state"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "$KC_SOCK"

[plugins."io.containerd.internal.v1.opt"]
  path = "$KC_T/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$KC_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = ${KC_NETNS_UNDER_STATE:-true}
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$KC_CNI_BIN"
    conf_dir = "$KC_NETD"
    max_conf_num = 1
EOF
	kc_spawn containerd containerd --config "$KC_T/containerd.toml"
	kc_wait 30 _kc_cri_ok
}
_kc_cri_ok() { ctr --address "$KC_SOCK" plugins ls 2>/dev/null | grep -Eq 'io\.containerd\.grpc\.v1 +cri .* ok'; }

kc_kubelet_up() {
	mkdir -p "$KC_T/kubelet" "$KC_T/pod-logs" || return 1
	echo "nameserver $KC_DNS_SVC_IP" >"$KC_T/resolv.conf"
	# Eviction: one tiny hard threshold, so every other signal is 0 (off:
	# mergeDefaultEvictionSettings is false); the disk may be nearly full.
	# Image GC off: an image removed here can never be pulled again.
	cat >"$KC_T/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $KC_NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $KC_PKI/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$KC_SOCK
cgroupDriver: cgroupfs
cgroupRoot: /$KC_CG
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
protectKernelDefaults: true
oomScoreAdj: 0
clusterDNS: [$KC_DNS_SVC_IP]
clusterDomain: cluster.local
resolvConf: $KC_T/resolv.conf
podLogsDir: $KC_T/pod-logs
evictionHard: {memory.available: "1Mi"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 30
serializeImagePulls: false
nodeStatusUpdateFrequency: 5s
EOF
	# KC_NODE_TAINT=KEY[=VALUE]:EFFECT: the node is born with it (as a node
	# pool can be, waiting for the project's installer to remove it).
	if [ -n "${KC_NODE_TAINT:-}" ]; then
		local kv=${KC_NODE_TAINT%:*} val=
		[ "$kv" = "${kv#*=}" ] || val=${kv#*=}
		printf 'registerWithTaints:\n  - {key: "%s", value: "%s", effect: "%s"}\n' \
			"${kv%%=*}" "$val" "${KC_NODE_TAINT##*:}" >>"$KC_T/kubelet.yaml"
	fi
	kc_spawn kubelet "$KC_BIN/kubelet" --config="$KC_T/kubelet.yaml" \
		--kubeconfig="$KC_PKI/kubelet.kubeconfig" --root-dir="$KC_T/kubelet" \
		--cert-dir="$KC_T/kubelet/pki" --node-ip="$KC_NODE_IP" --hostname-override="$KC_NODE_NAME" --v=2
	kc_wait 60 _kc_kubelet_ok
}
_kc_kubelet_ok() { [ "$(kc_in "$KC_NODE" curl -s -m 2 http://127.0.0.1:10248/healthz)" = ok ]; }
