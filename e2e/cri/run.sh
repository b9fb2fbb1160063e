#!/bin/bash
# containerd CRI end-to-end test (`make e2e-cri`, root).
#
# containerd 1.6 (Debian) is the real CNI client.  It runs inside a network
# namespace that plays the node and inside a private mount namespace with
# tmpfs on /run and /var/lib, so nothing it creates lands on the machine.
# cri.py plays kubelet over the CRI gRPC API.  The conflist is bridge +
# host-local, then boxxkite-netguard with the pod-annotations capability.
#
#   ngc-ID-node   the node: containerd, the bridge ngc0 (10.244.0.0/24), routes
#   ngc-ID-meta   fake metadata server, 169.254.169.254:80
#   ngc-ID-stor   storage peer: 10.20.0.5 (egress.allow) and 10.30.0.5 (granted
#                 per pod by annotation), :443; and :80, which nothing allows
#
# Nothing is put in the root network namespace, no route leads out of these
# namespaces, and every namespace, mount, process and cgroup the test makes is
# removed on exit, also when it fails or is interrupted.  The last line is
# "N passed, N failed".  KEEP=1 keeps the temp dir (logs) for debugging;
# VERBOSE=1 also shows what passing checks saw (probe output and timings).
set -u
export LC_ALL=C

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PLUGIN=${PLUGIN:-$ROOT/build/boxxkite-netguard}
PY=/usr/bin/python3
CRI_PY=$HERE/cri.py

PASS=0
FAIL=0
T0=$(date +%s%N)

say() { printf '%s\n' "$*"; }
ok() { PASS=$((PASS + 1)); say "ok - $1"; }
nok() {
	FAIL=$((FAIL + 1))
	say "not ok - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/    # /' | head -n 20
	return 0
}
# check DESC CMD...: one test case, passed when CMD succeeds.
check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$desc"
		[ -n "${VERBOSE:-}" ] && [ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/    # /' | head -n 20
	else
		nok "$desc" "$out"
	fi
	return 0
}
summary() { say "$PASS passed, $FAIL failed"; }

# --- preconditions --------------------------------------------------------

if [ "$(id -u)" != 0 ]; then
	nok "e2e-cri needs root"
	summary
	exit 1
fi
missing=
for b in containerd containerd-shim-runc-v2 ctr runc nsenter unshare nft socat busybox "${CC:-cc}" ip; do
	command -v "$b" >/dev/null 2>&1 || missing="$missing $b"
done
for p in bridge host-local loopback; do
	[ -x "/usr/lib/cni/$p" ] || missing="$missing /usr/lib/cni/$p"
done
"$PY" -c 'import grpc' 2>/dev/null || missing="$missing python3-grpcio"
[ -x "$PLUGIN" ] || missing="$missing $PLUGIN(run make)"
if [ -n "$missing" ]; then
	nok "e2e-cri prerequisites" "missing:$missing
apt-get install -y containerd runc python3-grpcio busybox-static containernetworking-plugins socat nftables"
	summary
	exit 1
fi

# --- the test world ------------------------------------------------------------

ID=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
NODE=ngc-$ID-node
META=ngc-$ID-meta
STOR=ngc-$ID-stor
CG=ngc-$ID # cgroup parent of every pod: makes leftovers findable
T=$(mktemp -d "/tmp/ngc-$ID.XXXXXX")
SOCK=$T/containerd.sock
LOG=$T/netguard.log
IMAGE=docker.io/library/ngc-pause:$ID
CTRD_PID=
CTRD_MNT=
BG_PIDS=() # servers and netns holders, ended by PID
CTRD_MNT_FD= # pins containerd's mount namespace, so its inode is not reused
LEFTOVER=    # what was still running at the end of cleanup

cri() { "$PY" "$CRI_PY" "$SOCK" "$@"; }

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

# stop_pid PID: TERM, wait up to 5 s, then KILL.
stop_pid() {
	local p=$1
	alive "$p" || return 0
	kill -TERM "$p" 2>/dev/null
	for _ in $(seq 50); do
		alive "$p" || return 0
		sleep 0.1
	done
	kill -KILL "$p" 2>/dev/null
	sleep 0.1
}

# Processes this test started, directly or not: everything in containerd's
# private mount namespace (containerd, shims), in the pods' cgroups (pause,
# containers) or in the network namespaces made here (servers).  Matched by
# namespace inode and cgroup path, listed as PIDs; nothing is matched by name.
# A namespace inode number is reused once the namespace is gone, so it is only
# matched while the namespace is pinned: by an open fd (containerd's mount
# namespace) or by its /run/netns name.
our_pids() {
	local n m pat=()
	if [ -n "$CTRD_MNT_FD" ]; then # mnt:[INODE]; brackets are glob syntax to find
		m=${CTRD_MNT//[^0-9]/}
		pat+=(-o -name mnt -lname "mnt:\\[$m\\]")
	fi
	for n in "$NODE" "$META" "$STOR"; do
		[ -e "/run/netns/$n" ] && pat+=(-o -name net -lname "net:\\[$(stat -L -c %i "/run/netns/$n")\\]")
	done
	{
		find /proc/[0-9]*/ns -maxdepth 1 \( -false "${pat[@]}" \) 2>/dev/null
		grep -l ":/$CG/" /proc/[0-9]*/cgroup 2>/dev/null
	} | cut -d/ -f3 | grep -vx "$$" | sort -un
}

CLEANED=
cleanup() {
	local p id left d ns
	[ -n "$CLEANED" ] && return 0
	CLEANED=1
	set +e
	trap '' INT TERM # a second ^C must not cut the cleanup short
	if alive "$CTRD_PID"; then
		# kubelet's order: pods go before the runtime does.
		for id in $(timeout 20 "$PY" "$CRI_PY" "$SOCK" lsp 2>/dev/null); do
			timeout 60 "$PY" "$CRI_PY" "$SOCK" stopp "$id" >/dev/null 2>&1
			timeout 60 "$PY" "$CRI_PY" "$SOCK" rmp "$id" >/dev/null 2>&1
		done
		stop_pid "$CTRD_PID"
	fi
	for p in "${BG_PIDS[@]}"; do stop_pid "$p"; done
	for _ in $(seq 20); do # a pod's init takes its pid namespace down with it
		left=$(our_pids)
		[ -z "$left" ] && break
		for p in $left; do kill -KILL "$p" 2>/dev/null; done
		sleep 0.25
	done
	LEFTOVER=$(our_pids)
	# Unpinned, containerd's mount namespace goes, and its mounts with it.
	if [ -n "$CTRD_MNT_FD" ]; then
		exec {CTRD_MNT_FD}<&-
		CTRD_MNT_FD=
	fi
	CTRD_MNT=
	# runc removes a container's cgroup; the parent is ours to remove.
	for d in /sys/fs/cgroup/"$CG" /sys/fs/cgroup/*/"$CG"; do
		[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	for ns in "$NODE" "$META" "$STOR"; do
		[ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	if [ -n "${KEEP:-}" ]; then
		say "# kept $T"
	else
		rm -rf "$T"
	fi
}
trap 'cleanup' EXIT
trap 'cleanup; nok "interrupted (SIGINT)"; summary; exit 130' INT
trap 'cleanup; nok "interrupted (SIGTERM)"; summary; exit 143' TERM

fatal() {
	nok "$1" "${2:-}"
	[ -f "$T/containerd.log" ] && grep -E 'level=(error|fatal)|failed to load plugin' "$T/containerd.log" |
		tail -n 10 | sed 's/^/    # containerd: /'
	cleanup
	summary
	exit 1
}

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

# none CMD... PATTERN: CMD's output has no line matching the fixed string.
none() {
	local needle=${*: -1} out
	out=$("${@:1:$#-1}" 2>/dev/null | grep -F -- "$needle")
	[ -z "$out" ] || { echo "$out"; return 1; }
}

# --- run -----------------------------------------------------------------------

say "# e2e-cri: id $ID, temp $T"
setup_net || fatal "test network namespaces set up"
wait_servers || fatal "fake metadata and storage answer from the node namespace"
write_cni || fatal "CNI bin dir and conflist written"
write_containerd_config
build_image || fatal "sandbox image built (static pause + busybox-static)"
start_containerd || fatal "containerd starts in the node namespace"
ok "containerd $(cri version 2>/dev/null | cut -d' ' -f2) serves CRI in namespace $NODE"

check "sandbox image imported with ctr" \
	ctr --address "$SOCK" -n k8s.io images import "$T/image.tar"

BASE=$(world_state)

# 1. An enforced pod (namespace "sandboxes") with an in-envelope grant.
pod_spec "$T/pod-a.json" guarded sandboxes "10.30.0.5:443"
POD_A=$(cri runp "$T/pod-a.json" 2>"$T/err-a")
if [ -n "$POD_A" ]; then ok "RunPodSandbox: enforced pod starts"; else
	nok "RunPodSandbox: enforced pod starts" "$(cat "$T/err-a")"; fi
PID_A=$(cri pid "$POD_A" 2>/dev/null)
NS_A=/proc/${PID_A:-0}/ns/net
check "enforced pod: its netns (via pause pid ${PID_A:-?}) has table inet boxxkite_netguard" table_in "$NS_A"
check "enforced pod: table refuses the metadata address and holds the annotation grant 10.30.0.5" \
	table_holds "$NS_A" 169.254.169.254 10.30.0.5
check "enforced pod: ADD logged as enforced" log_has '"verb":"ADD"' '"decision":"enforced"' '"pod_name":"guarded"'

CID_A=$(cri create "$POD_A" "$T/pod-a.json" probe "$IMAGE" /pause 2>"$T/err-ca") &&
	cri start "$CID_A" 2>>"$T/err-ca"
check "container starts in the enforced pod" test -n "$CID_A" -a ! -s "$T/err-ca"

check "enforced pod: metadata 169.254.169.254:80 refused at once" \
	expect_refused_fast "$CID_A" 169.254.169.254 80 metadata-ok
check "enforced pod: storage 10.20.0.5:443 (egress.allow) reachable" \
	expect_reach "$CID_A" 10.20.0.5 443 storage-ok
check "enforced pod: 10.30.0.5:443 (annotation grant) reachable" \
	expect_reach "$CID_A" 10.30.0.5 443 storage-ok
check "enforced pod: storage 10.20.0.5:80 (not allowed) refused" \
	expect_refused_fast "$CID_A" 10.20.0.5 80 storage-80

# verify's capabilities row against a real runtime: containerd's infra
# process, named by its sandbox pid from the CRI (--sandbox-pid), is not
# counted; the "probe" container, which runs with containerd's default
# capabilities (NET_RAW among them), is.
caps_row() {
	"$PLUGIN" verify --json --pid "$PID_A" --sandbox-pid "$PID_A" --config "$T/net.d/10-ngc.conflist" \
		--timeout 300 >"$T/verify-a.json" 2>&1
	"$PY" - "$T/verify-a.json" "$PID_A" <<'PYEOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
row = [r for r in d["rows"] if r["check"] == "layer 2: no process can bypass it"][0]
print(row["verdict"], row["detail"])
named = re.findall(r"(\d+) \(pause: NET_RAW\)", row["detail"])
ok = row["verdict"] == "FAIL" and "not counted: %s (pause" % sys.argv[2] in row["detail"] and named and sys.argv[2] not in named
sys.exit(0 if ok else 1)
PYEOF
}
check "verify: the infra pause is not counted, the probe container's NET_RAW is (FAIL)" caps_row

# 2. A pod that is not selected (namespace "default", no opt-in) is untouched,
#    and proves the metadata server is reachable in this world at all.
pod_spec "$T/pod-b.json" bystander default
POD_B=$(cri runp "$T/pod-b.json" 2>"$T/err-b")
if [ -n "$POD_B" ]; then ok "RunPodSandbox: unselected pod starts"; else
	nok "RunPodSandbox: unselected pod starts" "$(cat "$T/err-b")"; fi
PID_B=$(cri pid "$POD_B" 2>/dev/null)
NS_B=/proc/${PID_B:-0}/ns/net
check "unselected pod: no table in its netns" no_table_in "$NS_B"
check "unselected pod: ADD logged as skipped" log_has '"verb":"ADD"' '"decision":"skipped"' '"pod_name":"bystander"'
check "unselected pod: metadata server answers it (control)" metadata_answers "$NS_B"

# 3. An annotation outside the envelope fails RunPodSandbox with our message
#    and leaves nothing behind.
BEFORE=$(world_state)
pod_spec "$T/pod-c.json" overreach sandboxes "10.30.0.5:443,192.168.77.7:443"
POD_C=$(cri runp "$T/pod-c.json" 2>"$T/err-c")
check "out-of-envelope pod: RunPodSandbox fails" test -z "$POD_C"
check "out-of-envelope pod: the error names the entry and the envelope" \
	file_has "$T/err-c" '"192.168.77.7:443"' "outside egress.envelope"
check "out-of-envelope pod: refusal logged with code 100" \
	log_has '"verb":"ADD"' '"decision":"refused"' '"code":100' '"pod_name":"overreach"' '192.168.77.7:443'
check "out-of-envelope pod: containerd DELs the chain and our DEL succeeds" \
	log_has '"verb":"DEL"' '"decision":"deleted"' '"pod_name":"overreach"'
AFTER=$(world_state)
check "out-of-envelope pod: no netns, veth, lease, sandbox or process left ($AFTER)" test "$BEFORE" = "$AFTER"

# 4. StopPodSandbox (DEL with netns + prevResult) then RemovePodSandbox (DEL
#    with CNI_NETNS=""): both succeed.  A holder process keeps the pod's netns
#    alive after containerd lets go of it, so the table's removal is observable.
if [ -e "$NS_A" ]; then
	nsenter --net="$NS_A" sleep 600 &
	HOLD_A=$!
	BG_PIDS+=("$HOLD_A")
else
	HOLD_A=
fi
check "StopPodSandbox on the enforced pod succeeds" cri stopp "$POD_A"
check "after Stop: table gone from the pod's (held) netns" no_table_in "/proc/${HOLD_A:-0}/ns/net"
check "after Stop: pod's eth0 is gone" only_lo "/proc/${HOLD_A:-0}/ns/net"
check "after Stop: its veth left the bridge (one port left, the unselected pod's)" \
	test "$(bridge_ports)" = 1
check "RemovePodSandbox on the enforced pod succeeds" cri rmp "$POD_A"
check "two DELs for the enforced pod (Stop, Remove), both succeeded" two_good_dels guarded
[ -n "$HOLD_A" ] && stop_pid "$HOLD_A"

check "StopPodSandbox on the unselected pod succeeds" cri stopp "$POD_B"
check "RemovePodSandbox on the unselected pod succeeds" cri rmp "$POD_B"
END=$(world_state)
check "after both pods are removed: back to the start ($END)" test "$BASE" = "$END"
check "no plugin invocation failed except the out-of-envelope ADD" one_refusal_only

# 5. Teardown, then look for anything left on the machine.
cleanup
check "nothing left: no ngc-$ID network namespaces" none ip netns list "ngc-$ID-"
check "nothing left: no process from containerd's mount namespace or our netns at cleanup's end" \
	test -z "$LEFTOVER"
check "nothing left: no process in the pods' cgroups" none our_pids .
check "nothing left: no cgroup /$CG" none ls -d /sys/fs/cgroup/"$CG" /sys/fs/cgroup/*/"$CG" .
check "nothing left: no mount under the temp dir" none cat /proc/self/mountinfo "$T"
[ -n "${KEEP:-}" ] || check "nothing left: temp dir removed" test ! -e "$T"

T1=$(date +%s%N)
say "# wall time $(((T1 - T0) / 1000000)) ms"
summary
[ "$FAIL" = 0 ]
