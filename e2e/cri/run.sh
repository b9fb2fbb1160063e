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
AGENT_PID=
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

# The world and the containerd under test (setup, probes, checks), by
# topic in their own file: e2e/cri/world.sh.
# shellcheck source=e2e/cri/world.sh
. "$HERE/world.sh"


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
start_agent || fatal "the node agent serves in the node namespace" "$(tail -n 5 "$T/agent.log" 2>/dev/null)"
ok "the node agent serves in the node namespace (containerd's mount namespace)"

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
# The agent let go of every pod: no record, no ready file, no error logged
# (the refused ADD's record stays on purpose, for status, until it ages out).
agent_clean() {
	local left
	left=$(find "$T/agent-state/pods" "$T/agent-state/ready" -type f ! -name '*.refused.json' 2>/dev/null)
	[ -z "$left" ] || { echo "left: $left"; return 1; }
	! grep '"level":"error"' "$T/agent.log"
}
check "the agent: no enforced pod's record or ready file left, no error logged" agent_clean

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
