# shellcheck shell=bash
# e2e/cri/world.sh: sourced by e2e/cri/run.sh (its variables and helpers):
# the test namespaces, the CNI and containerd configuration, containerd
# itself, and the probes and checks the run makes. Not a test script.

in_node() { ip netns exec "$NODE" "$@"; }

setup_net() {
	local ns
	for ns in "$NODE" "$META" "$STOR"; do ip netns add "$ns" || return 1; done
	for ns in "$NODE" "$META" "$STOR"; do ip -n "$ns" link set lo up || return 1; done
	# node <-> metadata
	ip -n "$NODE" link add vmeta type veth peer name eth0 netns "$META" &&
		ip -n "$NODE" addr add 192.168.250.1/30 dev vmeta &&
		ip -n "$NODE" link set vmeta up &&
		ip -n "$META" addr add 192.168.250.2/30 dev eth0 &&
		ip -n "$META" addr add 169.254.169.254/32 dev eth0 &&
		ip -n "$META" link set eth0 up &&
		ip -n "$META" route add 10.244.0.0/24 via 192.168.250.1 &&
		ip -n "$NODE" route add 169.254.169.254/32 via 192.168.250.2 || return 1
	# node <-> storage
	ip -n "$NODE" link add vstor type veth peer name eth0 netns "$STOR" &&
		ip -n "$NODE" addr add 192.168.251.1/30 dev vstor &&
		ip -n "$NODE" link set vstor up &&
		ip -n "$STOR" addr add 192.168.251.2/30 dev eth0 &&
		ip -n "$STOR" addr add 10.20.0.5/32 dev eth0 &&
		ip -n "$STOR" addr add 10.30.0.5/32 dev eth0 &&
		ip -n "$STOR" link set eth0 up &&
		ip -n "$STOR" route add 10.244.0.0/24 via 192.168.251.1 &&
		ip -n "$NODE" route add 10.20.0.5/32 via 192.168.251.2 &&
		ip -n "$NODE" route add 10.30.0.5/32 via 192.168.251.2 || return 1
	in_node sysctl -qw net.ipv4.ip_forward=1 || return 1
	# `ip netns exec` execs socat, so $! is socat's own PID.
	ip netns exec "$META" socat TCP-LISTEN:80,bind=169.254.169.254,reuseaddr,fork \
		EXEC:"/bin/echo metadata-ok" 2>>"$T/servers.log" &
	BG_PIDS+=($!)
	ip netns exec "$STOR" socat TCP-LISTEN:443,reuseaddr,fork EXEC:"/bin/echo storage-ok" 2>>"$T/servers.log" &
	BG_PIDS+=($!)
	ip netns exec "$STOR" socat TCP-LISTEN:80,reuseaddr,fork EXEC:"/bin/echo storage-80" 2>>"$T/servers.log" &
	BG_PIDS+=($!)
	return 0
}

# node_get HOST PORT: what a plain TCP client in the node namespace reads.
node_get() { in_node socat -T 2 -u "TCP:$1:$2,connect-timeout=2" - 2>/dev/null; }

wait_servers() {
	for _ in $(seq 50); do
		[ "$(node_get 169.254.169.254 80)" = metadata-ok ] &&
			[ "$(node_get 10.20.0.5 443)" = storage-ok ] &&
			[ "$(node_get 10.30.0.5 80)" = storage-80 ] && return 0
		sleep 0.1
	done
	say "fake peers do not answer from the node namespace"
	return 1
}

write_cni() {
	mkdir -p "$T/cni-bin" "$T/net.d" "$T/ipam" || return 1
	ln -s /usr/lib/cni/* "$T/cni-bin/" || return 1
	ln -sf "$PLUGIN" "$T/cni-bin/boxxkite-netguard" || return 1
	cat >"$T/ngc.conflist.tmp" <<EOF || return 1
{
  "cniVersion": "1.0.0",
  "name": "ngc",
  "plugins": [
    {
      "type": "bridge", "bridge": "ngc0", "isGateway": true, "ipMasq": false,
      "ipam": {
        "type": "host-local", "dataDir": "$T/ipam",
        "ranges": [[{"subnet": "10.244.0.0/24", "gateway": "10.244.0.1"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {
      "type": "boxxkite-netguard",
      "capabilities": {"io.kubernetes.cri.pod-annotations": true},
      "logFile": "$LOG",
      "stateDir": "$T/agent-state",
      "enforce": {"namespaces": ["sandboxes"], "optInAnnotation": true},
      "dns": {"servers": ["10.96.0.10"]},
      "egress": {"allow": ["tcp://10.20.0.0/16:443"], "envelope": ["10.0.0.0/8:443"]},
      "ingress": {"ports": [8080], "sources": ["10.244.0.0/16"], "allowNode": true},
      "denyAction": "reject"
    }
  ]
}
EOF
	# net.d is watched: the file appears complete, by rename.
	mv "$T/ngc.conflist.tmp" "$T/net.d/10-ngc.conflist"
}

write_containerd_config() {
	cat >"$T/containerd.toml" <<EOF
version = 2
root = "$T/root"
state = "$T/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "$SOCK"

[plugins."io.containerd.internal.v1.opt"]
  path = "$T/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$T/cni-bin"
    conf_dir = "$T/net.d"
    max_conf_num = 1
EOF
}

build_image() {
	"${CC:-cc}" -static -O2 -o "$T/pause" "$HERE/pause.c" &&
		"$PY" "$HERE/mkimage.py" "$T/image.tar" "ngc-pause:$ID" "$T/pause" "$(command -v busybox)"
}

start_containerd() {
	local self
	self=$(readlink /proc/self/ns/mnt)
	# nsenter, not `ip netns exec` (which remounts /sys and hides the cgroup
	# tree from runc).  In the private mount namespace: drop the copies of
	# /run/netns (other tests' namespaces must not be pinned by ours), then
	# tmpfs on /run (runc, shim sockets) and /var/lib (libcni's cache in
	# /var/lib/cni, which may not exist on the machine). The script is single-
	# quoted on purpose: it expands $1... inside the new mount namespace.
	# shellcheck disable=SC2016
	nsenter --net="/run/netns/$NODE" unshare --mount --propagation private -- /bin/sh -c '
		umount -R -l /run/netns 2>/dev/null
		mount -t tmpfs -o mode=0755 ngc-run /run &&
		mount -t tmpfs -o mode=0755 ngc-varlib /var/lib &&
		mkdir -p /var/lib/cni &&
		exec containerd --config "$1"' sh "$T/containerd.toml" >"$T/containerd.log" 2>&1 &
	CTRD_PID=$!
	for _ in $(seq 100); do
		alive "$CTRD_PID" || return 1
		CTRD_MNT=$(readlink "/proc/$CTRD_PID/ns/mnt" 2>/dev/null)
		[ -n "$CTRD_MNT" ] && [ "$CTRD_MNT" != "$self" ] && break
		CTRD_MNT=
		sleep 0.05
	done
	[ -n "$CTRD_MNT" ] || return 1
	exec {CTRD_MNT_FD}<"/proc/$CTRD_PID/ns/mnt" || return 1
	[ "$(readlink "/proc/$$/fd/$CTRD_MNT_FD")" = "$CTRD_MNT" ] || return 1
	SECONDS=0
	while [ "$SECONDS" -lt 30 ]; do
		alive "$CTRD_PID" || return 1
		if [ -S "$SOCK" ]; then
			cri version >/dev/null 2>"$T/version.err" && return 0
			# serving, but without the CRI plugin: no use waiting
			grep -q UNIMPLEMENTED "$T/version.err" && return 1
		fi
		sleep 0.1
	done
	return 1
}

# start_agent: the node agent (egress.names "learn", the default: every pod's
# DNS queries and answers go through it) in the node's network namespace and
# in containerd's mount namespace, where the pods' netns files are mounted (a
# DaemonSet mounts them with HostToContainer propagation). Its state dir is
# the entry's stateDir, in the temp dir. Waits for /healthz: a correctness
# bound of 30 s, not a timing.
start_agent() {
	mkdir -p "$T/agent-state" || return 1
	nsenter --mount="/proc/$CTRD_PID/ns/mnt" --net="/run/netns/$NODE" \
		"$PLUGIN" agent --state-dir "$T/agent-state" --listen 127.0.0.1:9617 2>"$T/agent.log" &
	AGENT_PID=$!
	BG_PIDS+=("$AGENT_PID")
	SECONDS=0
	while [ "$SECONDS" -lt 30 ]; do
		alive "$AGENT_PID" || return 1
		ip netns exec "$NODE" "$PY" -c 'import urllib.request,sys; sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:9617/healthz", timeout=2).status == 200 else 1)' 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# --- inspection helpers ------------------------------------------------------

# Pod network namespaces containerd holds: nsfs mounts in its mount namespace.
ctrd_netns_mounts() { grep -c ' nsfs ' "/proc/$CTRD_PID/mountinfo"; }
ctrd_netns_files() { find "$T/state" -path '*netns*' -type f 2>/dev/null | wc -l; }
bridge_ports() { in_node ip -o link show master ngc0 2>/dev/null | wc -l; }
ipam_leases() { find "$T/ipam" -type f -name '10.*' 2>/dev/null | wc -l; }
pod_count() { cri lsp | wc -l; }
pod_procs() { grep -l ":/$CG/" /proc/[0-9]*/cgroup 2>/dev/null | wc -l; }
world_state() {
	echo "netns-mounts=$(ctrd_netns_mounts) netns-files=$(ctrd_netns_files) veths=$(bridge_ports)" \
		"leases=$(ipam_leases) sandboxes=$(pod_count) pod-processes=$(pod_procs)"
}

# table_in NETNS-PATH: our table, listed; fails when it is not there.
table_in() {
	[ -e "$1" ] || { echo "no such netns $1"; return 1; }
	nsenter --net="$1" nft list table inet boxxkite_netguard
}
no_table_in() {
	[ -e "$1" ] || { echo "no such netns $1"; return 1; }
	! table_in "$1"
}
# table_holds NETNS-PATH WORD...: the listed table mentions every WORD.
table_holds() {
	local out w
	out=$(table_in "$1") || { echo "$out"; return 1; }
	shift
	for w in "$@"; do
		case $out in *"$w"*) ;; *) echo "$out"; echo "no $w in the table"; return 1 ;; esac
	done
}
# only_lo NETNS-PATH: the bridge plugin's DEL took eth0 away.
only_lo() {
	[ -e "$1" ] || { echo "no such netns $1"; return 1; }
	local links
	links=$(nsenter --net="$1" ip -o link show) || return 1
	[ "$(grep -vc ': lo:' <<<"$links")" = 0 ] || { echo "$links"; return 1; }
}
# log_has WORD...: some line of the plugin's log holds every WORD.
log_has() {
	local line w
	while IFS= read -r line; do
		for w in "$@"; do
			case $line in *"$w"*) ;; *) continue 2 ;; esac
		done
		return 0
	done <"$LOG"
	echo "no log line with: $*"
	tail -n 5 "$LOG" 2>/dev/null
	return 1
}

# two_good_dels POD: the log has exactly two DEL lines for POD, both
# "deleted" (success).
two_good_dels() {
	local dels
	dels=$(grep -F '"verb":"DEL"' "$LOG" | grep -F "\"pod_name\":\"$1\"")
	if [ "$(grep -c . <<<"$dels")" != 2 ] || grep -qvF '"decision":"deleted"' <<<"$dels"; then
		echo "$dels"
		return 1
	fi
}
# Every plugin run ended in a normal decision but the one refused ADD.
one_refusal_only() {
	local bad
	bad=$(grep -vE '"decision":"(enforced|skipped|deleted|verified)"' "$LOG")
	[ "$(grep -c . <<<"$bad")" = 1 ] || { echo "$bad"; return 1; }
}
# file_has FILE WORD...: FILE holds every WORD.
file_has() {
	local f=$1 w
	shift
	for w in "$@"; do grep -qF -- "$w" "$f" || { cat "$f"; return 1; }; done
}
# metadata_answers NETNS-PATH: a plain client there reads the metadata server.
metadata_answers() {
	[ -e "$1" ] || { echo "no such netns $1"; return 1; }
	[ "$(nsenter --net="$1" busybox nc -w 3 169.254.169.254 80 </dev/null)" = metadata-ok ]
}

pod_spec() { # FILE NAME NAMESPACE [EGRESS-ANNOTATION]
	local ann=
	[ -n "${4:-}" ] && ann="\"netguard.boxxkite.io/egress\": \"$4\""
	cat >"$1" <<EOF
{"name": "$2", "namespace": "$3", "uid": "ngc-$ID-$2",
 "annotations": {$ann}, "cgroup_parent": "/$CG"}
EOF
}

# probe CID HOST PORT: "exit=N ms=M" then whatever nc got.
probe() { cri exec "$1" 15 /bin/nc -w 5 "$2" "$3"; }

expect_reach() { # CID HOST PORT WORD
	local out
	out=$(probe "$1" "$2" "$3" 2>&1)
	case $out in exit=0*"$4"*) return 0 ;; esac
	echo "$out"
	return 1
}
expect_refused_fast() { # CID HOST PORT WORD
	local out code ms
	out=$(probe "$1" "$2" "$3" 2>&1) || { echo "$out"; return 1; }
	code=$(sed -n '1s/^exit=\(-\{0,1\}[0-9]*\) .*/\1/p' <<<"$out")
	ms=$(sed -n '1s/.* ms=\([0-9]*\)$/\1/p' <<<"$out")
	echo "$out"
	[ -n "$code" ] && [ "$code" != 0 ] || return 1
	case $out in *"$4"*) return 1 ;; esac
	# A reject is a TCP reset: nc says "refused" at once.  A drop would make
	# nc wait its 5 s; the margin covers ExecSync's own cost on a busy runner.
	case $out in *"Connection refused"*) ;; *) return 1 ;; esac
	[ "${ms:-99999}" -lt 2500 ]
}
