# shellcheck shell=bash
# e2e/lib/frames.sh: marked frames (e2e/rawframe.py), sniffers, node-side views, background processes: sourced by e2e/lib.sh (see its header); not a test script.

# ---- marked frames (e2e/rawframe.py) ----------------------------------------
# sniff NETNS IFNAME: a sniffer there appending every marker it sees to
# $SEEN (set it first), waited for until it listens. next_mark: a fresh
# $MARK. arrived: the frame with $MARK reached a sniffer (within 500 ms).
# host_denied POD: the drop counter of pod POD's host-side table (0 when
# there is none: a broken plugin must fail rows, not stop the script).
sniff() {
	bg_start nsenter --net="$(_ns_path "$1")" "$PY" "$E2E_DIR/rawframe.py" sniff --ifname "$2" --out "$SEEN" \
		>"$W_TMP/sniff-$1.out" 2>&1
	# 30 s: a correctness bound (python's start on a loaded machine), not a speed.
	poll 30000 grep -q ready "$W_TMP/sniff-$1.out" ||
		{ echo "sniffer in $1 did not start" >&2 && return 1; }
}
MARK_N=0
next_mark() { MARK_N=$((MARK_N + 1)) && MARK=NGRAW-$MARK_N-$RANDOM; }
arrived() {
	for _ in $(seq 25); do
		grep -qx "$MARK" "$SEEN" && return 0
		sleep 0.02
	done
	return 1
}
host_denied() {
	local n
	n=$(node_exec nft list counter netdev "$(pod_host_table "$1")" host_denied 2>/dev/null |
		sed -n 's/.*packets \([0-9]*\).*/\1/p') || true
	echo "${n:-0}"
}

# node_ruleset: the node namespace's whole ruleset, counters zeroed, for
# before/after comparisons.
node_ruleset() { node_exec nft -s list ruleset; }

# pod_has_table NAME: is our table in the pod's namespace?
pod_has_table() { pod_exec "$1" nft list table inet boxxkite_netguard >/dev/null 2>&1; }

# pod_netns_path NAME: the pod's namespace file (what CNI_NETNS names).
pod_netns_path() { _ns_path "$(pod_ns "$1")"; }

# pod_default_route NAME: default routes via the pod's gateways, as most
# primary CNIs give a pod (the world's conflists give only its private
# ranges). The node has no uplink, so nothing leaves the world: traffic to an
# address no namespace of ours holds ends at the node.
pod_default_route() {
	ip -n "$(pod_ns "$1")" route add default via "$POD_GW4"
	ip -n "$(pod_ns "$1")" -6 route add default via "$POD_GW6"
}

# bg_start CMD...: CMD in the background, recorded for world_down; its PID is
# left in BG_PID (a $(...) would make it a grandchild, not ours to wait for).
# Output goes to the caller's redirections. Wrap CMD in nsenter (which execs)
# to run it inside a namespace. bg_stop PID: TERM, then reap it.
bg_start() {
	"$@" &
	BG_PID=$!
	_track_pid "$BG_PID"
}
bg_stop() {
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# The plugin's decision log (JSON lines).
netguard_log() { cat "$W_TMP/netguard.log" 2>/dev/null; }

