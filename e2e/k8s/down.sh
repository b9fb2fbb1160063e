# shellcheck shell=bash
# e2e/k8s/down.sh: the cluster's teardown, run by kc_down and the traps of
# kc_init, after a failure as after a pass, and what it checks was left
# (sourced by e2e/k8s/cluster.sh; its variables).

# kc_pid_of NAME: the PID kc_spawn recorded for NAME.
kc_pid_of() {
	local i
	for i in "${!KC_NAMES[@]}"; do
		[ "${KC_NAMES[$i]}" = "$1" ] && echo "${KC_PIDS[$i]}" && return 0
	done
	return 1
}

# Pods go first, as from a drained node: each pod's CNI DEL runs while the
# kubelet, containerd and the apiserver are still there. Controllers first,
# so that nothing makes the pods again.
_kc_drain() {
	kc_alive "$(kc_pid_of kube-apiserver)" && kc_alive "$(kc_pid_of kubelet)" || return 0
	KC_KUBECTL_TIMEOUT=20s kc_kubectl delete daemonsets,deployments,replicasets,statefulsets,jobs \
		--all --all-namespaces --wait=false >/dev/null 2>&1
	KC_KUBECTL_TIMEOUT=60s kc_kubectl delete pods --all --all-namespaces --grace-period=2 \
		--timeout=45s >/dev/null 2>&1
}

# Sandboxes the kubelet did not remove (it had gone, or the drain timed
# out) are stopped and removed over the CRI, in the kubelet's order, with
# the CRI test's client (e2e/cri/cri.py): their CNI DEL runs too.
_kc_cri_sweep() {
	local py=/usr/bin/python3 cri=$KC_ROOT/e2e/cri/cri.py id
	kc_alive "$(kc_pid_of containerd)" && [ -f "$cri" ] || return 0
	for id in $(timeout 20 "$py" "$cri" "$KC_SOCK" lsp 2>/dev/null); do
		timeout 30 "$py" "$cri" "$KC_SOCK" stopp "$id" >/dev/null 2>&1
		timeout 30 "$py" "$cri" "$KC_SOCK" rmp "$id" >/dev/null 2>&1
	done
}

kc_down() {
	local i p left _
	[ -z "${KC_DOWN_DONE:-}" ] && [ -n "${KC_T:-}" ] || return 0
	KC_DOWN_DONE=1
	set +e
	trap '' INT TERM # a second ^C must not cut the cleanup short
	_kc_drain
	kc_stop_pid "$(kc_pid_of kubelet)"
	_kc_cri_sweep
	for ((i = ${#KC_PIDS[@]} - 1; i >= 0; i--)); do kc_stop_pid "${KC_PIDS[$i]}"; done
	for p in "${KC_BG[@]}"; do kc_stop_pid "$p"; done
	kc_stop_pid "$KC_HOLDER"
	# Shims, containers, anything a daemon left: by namespace and cgroup.
	for _ in $(seq 20); do
		left=$(kc_our_pids)
		[ -z "$left" ] && break
		for p in $left; do kill -KILL "$p" 2>/dev/null; done
		sleep 0.25
	done
	KC_LEFTOVER=$(kc_our_pids)
	# Unpinned and empty, the node's mount namespace goes with its mounts.
	if [ -n "$KC_MNT_FD" ]; then
		exec {KC_MNT_FD}<&-
		KC_MNT_FD=
	fi
	kc_cgroups_down
	kc_net_down
	if [ -n "${KEEP:-}" ]; then
		kc_say "kept $KC_T"
	else
		rm -rf "$KC_T"
	fi
	return 0
}

# kc_leftovers: prints whatever of this cluster is still on the machine
# (nothing, after a clean kc_down) and fails if there is any: network
# namespaces, cgroups, processes (by namespace and cgroup at the end of
# kc_down, and any process naming the temp dir now), mounts, the temp dir.
kc_leftovers() {
	local out
	# [n]gk: grep's own command line must not match its pattern.
	out=$(
		# shellcheck disable=SC2153 # KC_P is set by kc_init
		ip netns list | grep "^$KC_P-"
		ls -d "/sys/fs/cgroup/$KC_CG" /sys/fs/cgroup/*/"$KC_CG" 2>/dev/null
		[ -z "$KC_LEFTOVER" ] || echo "processes at the end of kc_down: $KC_LEFTOVER"
		grep -l "/tmp/[n]gk-$KC_ID\\." /proc/[0-9]*/cmdline 2>/dev/null
		grep -F "$KC_T" /proc/self/mountinfo
		[ -n "${KEEP:-}" ] || [ ! -e "$KC_T" ] || echo "$KC_T"
	)
	[ -z "$out" ] || { echo "$out"; return 1; }
}
