#!/usr/bin/env bash
# hostside: the host-side table (hostMirror), in the bridge AND the routed
# (ptp) layout. The pod's own tables live in its namespace, where a process
# holding CAP_NET_ADMIN deletes them and an AF_XDP socket skips them; the
# host-side table sits in the node's namespace on the ingress of the pod
# link's veth peer, out of the pod's reach. For each layout:
#   - ADD puts it on the pod's own peer (found over netlink, not from
#     prevResult), matching that device's ifindex; CHECK compares both sides;
#   - the pod flushes its whole ruleset (NET_ADMIN): DNS and the allowlist
#     still work over normal sockets, forbidden and metadata stay unreached;
#     frames from a packet socket and from AF_XDP (xsktx) to them are held
#     and counted (host_denied); CHECK names the missing side, re-ADD repairs;
#   - spoofed sources (raw IP socket, packet socket, foreign MAC) reach
#     nobody, with the pod's tables intact and with them flushed;
#   - DEL and a second DEL (no netns, no prevResult) leave the node's
#     ruleset exactly as it was before ADD.
# Then, bridge layout: a DEL for a foreign container id keeps both sides; a
# namespace gone without DEL leaves the host table, a new device of the same
# name is not held by it (the ifindex match) and the next ADD removes it; GC
# removes the tables of attachments not in cni.dev/valid-attachments;
# hostMirror "required" refuses a macvlan pod (code 103, naming eth0) and
# leaves nothing, "auto" enforces in the pod and logs why not on the node,
# "off" has no host table; 50 pods added concurrently each get their own,
# and DEL of all of them leaves the node's ruleset as before.
# Sniffers (AF_PACKET, in the destinations) report which marked frames
# arrived. Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "hostside.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
RAW=$E2E_DIR/rawframe.py
XSKTX=${XSKTX:-$REPO_DIR/build/xsktx}

SEEN=$W_TMP/raw-seen
: >"$SEEN"
for p in storage forbidden metadata dns stranger; do sniff "$W_ID-$p" eth0; done

# gw_mac POD: the MAC the pod's frames go to: the bridge's, or (ptp) the
# veth peer's own.
gw_mac() {
	local dev
	dev=$(pod_host_dev "$1")
	node_exec ip -o link show dev "$dev" | grep -q " master ngbr0 " && dev=ngbr0
	node_exec ip -o link show dev "$dev" | sed -n 's|.*link/ether \([0-9a-f:]*\).*|\1|p'
}
# send POD WAY ARGS...: one marked frame or packet from POD. WAY: packet
# (AF_PACKET), ip (raw IP socket), xdp (AF_XDP, copy mode).
send() {
	local pod=$1 way=$2 v=4 src
	shift 2
	[[ $* == *--dst\ *:* ]] && v=6
	src=$(pod_ip "$pod" "$v")
	local args=(send --ifname eth0 --dst-mac "$(gw_mac "$pod")" --src "$src" --marker "$MARK")
	case $way in
	packet) pod_exec "$pod" "$PY" "$RAW" "${args[@]}" "$@" ;;
	ip) pod_exec "$pod" "$PY" "$RAW" "${args[@]}" --ip-socket "$@" ;;
	xdp)
		pod_exec "$pod" "$PY" "$RAW" "${args[@]}" --stdout "$@" >"$W_TMP/xdp-frame"
		pod_exec "$pod" "$XSKTX" eth0 <"$W_TMP/xdp-frame"
		;;
	esac
}
# passes LABEL POD WAY ARGS...: arrives. held LABEL POD WAY ARGS...: does not
# arrive, and the host side counted it. unreached LABEL POD WAY ARGS...:
# does not arrive (whichever table stopped it).
passes() {
	local label=$1 pod=$2 out rc=0
	shift 2
	next_mark
	out=$(send "$pod" "$@" 2>&1) || true
	arrived || rc=1
	t_row "$label" "${out:0:30}" "$rc" "$out"
}
held() {
	local label=$1 pod=$2 out before after ok=0
	shift 2
	before=$(host_denied "$pod")
	next_mark
	out=$(send "$pod" "$@" 2>&1) || true
	arrived && ok=1
	after=$(host_denied "$pod")
	((after > before)) || ok=1
	t_row "$label" "host_denied $before -> $after" $ok "arrived: $(grep -cx "$MARK" "$SEEN"); $out"
}
unreached() {
	local label=$1 pod=$2 out ok=0
	shift 2
	next_mark
	out=$(send "$pod" "$@" 2>&1) || true
	arrived && ok=1
	t_row "$label" "${out:0:30}" $ok "arrived; $out"
}
counter_of() { # POD FAMILY TABLE COUNTER
	pod_exec "$1" nft list counter "$2" "$3" "$4" 2>/dev/null | sed -n 's/.*packets \([0-9]*\).*/\1/p'
}
same_ruleset() { # FILE: the node's ruleset now is exactly FILE
	diff -u "$1" <(node_ruleset)
}
host_table_on() { # POD: the host table is bound to the pod's own peer and ifindex
	local t dev idx
	t=$(node_exec nft list table netdev "$(pod_host_table "$1")") || return 1
	dev=$(pod_host_dev "$1") && idx=$(node_exec ip -o link show dev "$dev" 2>/dev/null | cut -d: -f1)
	[[ $t == *"hook ingress device \"$dev\""* ]] || { echo "not on $dev: $t" | head -5 && return 1; }
	[[ $t == *"not ifindex $idx:"* ]] || { echo "no ifindex $idx match" && return 1; }
	echo "on $dev (ifindex $idx)"
}

# ---- both layouts -----------------------------------------------------------
layout() {
	local L=$1 pod=h-$1 before
	export POD_CONFLIST
	POD_CONFLIST=$(layout_conflist "$L")
	echo "== $L layout"
	before=$W_TMP/ruleset-$L.before
	node_ruleset >"$before"
	t_check "$L: ADD" pod_add "$pod"
	t_check "$L: host table on the pod's own veth peer, its ifindex matched" host_table_on "$pod"
	t_check "$L: CHECK passes (both sides)" pod_check "$pod"

	echo "-- $L: spoofed sources, the pod's tables intact"
	local sd
	sd=$(counter_of "$pod" inet boxxkite_netguard source_denied)
	unreached "$L: raw IP socket, source $STRANGER4 -> storage: nowhere" "$pod" ip --src "$STRANGER4" \
		--dst "$STORE4" --proto tcp --dport 443
	t_row "$L:   counted in source_denied (inet table)" "$sd -> $(counter_of "$pod" inet boxxkite_netguard source_denied)" \
		"$(($(counter_of "$pod" inet boxxkite_netguard source_denied) > sd ? 0 : 1))"
	unreached "$L: raw IP socket, source $STRANGER6 -> DNS: nowhere" "$pod" ip --src "$STRANGER6" \
		--dst "$DNS6" --dport 53
	unreached "$L: packet socket, source $STRANGER4 -> DNS: nowhere" "$pod" packet --src "$STRANGER4" \
		--dst "$DNS4" --dport 53
	passes "$L: packet socket, own source -> storage arrives" "$pod" packet --dst "$STORE4" --proto tcp --dport 443

	echo "-- $L: NET_ADMIN in the pod flushes its whole ruleset"
	pod_exec "$pod" nft flush ruleset
	t_check_not "$L: the pod's tables are gone" pod_has_table "$pod"
	expect "$L: storage $STORE4:443 still connects" connected 1000 "pod:$pod" -- tcp "$STORE4" 443 2000
	expect "$L: storage [$STORE6]:443 still connects" connected 1000 "pod:$pod" -- tcp "$STORE6" 443 2000
	expect "$L: DNS still answers" answered 1000 "pod:$pod" -- udp-dns "$DNS4" "$STORE_NAME" 2000
	expect "$L: forbidden $FORBID4:443 unreached" timeout - "pod:$pod" -- tcp "$FORBID4" 443 600
	expect "$L: forbidden [$FORBID6]:443 unreached" timeout - "pod:$pod" -- tcp "$FORBID6" 443 600
	expect "$L: metadata $MD4:80 unreached" timeout - "pod:$pod" -- tcp "$MD4" 80 600
	expect "$L: storage, other port $STORE4:8443 unreached" timeout - "pod:$pod" -- tcp "$STORE4" 8443 600
	held "$L: packet socket to forbidden $FORBID4: held" "$pod" packet --dst "$FORBID4"
	held "$L: packet socket to metadata $MD4:80: held" "$pod" packet --dst "$MD4" --dport 80
	passes "$L: AF_XDP frame to storage arrives (the sender works)" "$pod" xdp --dst "$STORE4" --proto tcp --dport 443
	held "$L: AF_XDP frame to forbidden $FORBID4: held" "$pod" xdp --dst "$FORBID4"
	held "$L: AF_XDP frame to metadata $MD4:80: held" "$pod" xdp --dst "$MD4" --dport 80
	held "$L: raw IP socket, source $STRANGER4 -> storage: held" "$pod" ip --src "$STRANGER4" \
		--dst "$STORE4" --proto tcp --dport 443
	held "$L: packet socket, source $STRANGER4 -> DNS: held" "$pod" packet --src "$STRANGER4" --dst "$DNS4" --dport 53
	held "$L: packet socket, source [$STRANGER6] -> DNS: held" "$pod" packet --src "$STRANGER6" --dst "$DNS6" --dport 53
	held "$L: AF_XDP, source $STRANGER4 -> storage: held" "$pod" xdp --src "$STRANGER4" --dst "$STORE4" \
		--proto tcp --dport 443
	held "$L: another pod's MAC -> storage: held" "$pod" packet --src-mac 02:00:00:00:00:99 --dst "$STORE4" \
		--proto tcp --dport 443
	t_check "$L: CHECK fails naming the pod's missing table" check_fails "$pod" "is missing from the pod's network namespace"
	t_check "$L: re-ADD repairs it" direct ADD "$pod"
	t_check "$L:   CHECK passes" pod_check "$pod"

	echo "-- $L: the host side tampered with"
	node_exec nft flush chain netdev "$(pod_host_table "$pod")" raw_v4 || true
	t_check "$L: host chain flushed: CHECK fails naming the node's table" check_fails "$pod" "table netdev"
	node_exec nft delete table netdev "$(pod_host_table "$pod")" || true
	t_check "$L: host table deleted: CHECK fails naming it missing" check_fails "$pod" "is missing from the node's network namespace"
	t_check "$L:   re-ADD repairs it" direct ADD "$pod"
	t_check "$L:   CHECK passes" pod_check "$pod"

	t_check "$L: DEL" pod_del "$pod"
	t_check "$L:   node ruleset exactly as before ADD" same_ruleset "$before"
	t_check "$L: second DEL (no netns, no prevResult)" pod_del "$pod" --no-netns
	t_check "$L:   node ruleset still as before" same_ruleset "$before"
	unset POD_CONFLIST
}
layout bridge
layout ptp

echo "== ownership, stale devices, GC (bridge)"
BEFORE=$W_TMP/ruleset.before
node_ruleset >"$BEFORE"
t_check "ADD o1" pod_add o1
foreign_del() { # a DEL for another container id, same netns and ifname
	local vars
	ng_stdin o1 >"$W_TMP/o1.json"
	mapfile -t vars < <(ng_pod_env o1 | sed 's/^CNI_CONTAINERID=.*/CNI_CONTAINERID=0000feedfacefeedface/')
	ng_call DEL "$W_TMP/o1.json" "${vars[@]}"
}
t_check "DEL for a foreign container id succeeds" foreign_del
t_check "  the pod's tables stay" pod_has_table o1
t_check "  the host table stays" node_exec nft list table netdev "$(pod_host_table o1)"
t_check "  CHECK still passes" pod_check o1

# The namespace goes without a DEL: the veth goes with it, the host table
# stays (Linux 6.16+ keeps a netdev chain whose device is gone).
DEV=$(pod_host_dev o1)
pod_netns_rm o1
# The kernel destroys the namespace's devices (and the veth's node end) in
# its one namespace-cleanup work queue, later: on a machine where others
# tear down namespaces too, the node end outlived the namespace by more than
# 30 s and the intruder below could not take its name ("File exists"). What
# the queue will do, done now if it has not: the stale table's device is
# gone either way.
gone_dev() { ! node_exec ip link show dev "$DEV" >/dev/null 2>&1; }
poll 5000 gone_dev || node_exec ip link del "$DEV" 2>/dev/null || true
t_check "netns gone without DEL: host table left" node_exec nft list table netdev "$(pod_host_table o1)"
# A new device of the same name (what a primary plugin naming veths after
# the pod, like Calico, would make for the next pod), not ours.
_netns_add "$W_ID-intruder"
ip -n "$W_NODE" link add "$DEV" type veth peer name eth0 netns "$W_ID-intruder"
ip -n "$W_NODE" link set "$DEV" master ngbr0 up
ip -n "$W_ID-intruder" addr add 10.244.1.250/24 dev eth0
ip -n "$W_ID-intruder" link set eth0 up
ip -n "$W_ID-intruder" route add 10.0.0.0/8 via "$POD_GW4"
expect "a new device of the same name: not held by the stale table" connected 2000 peer:intruder -- tcp "$STORE4" 8443 2000
gc() { # CONTAINER-ID...: GC with these (ifname eth0) as the valid attachments
	local in=$W_TMP/gc.json ids
	ids=$(printf '%s\n' "$@" | "$PY" -c 'import json,sys; print(json.dumps([{"containerID": l.strip(), "ifname": "eth0"} for l in sys.stdin if l.strip()]))')
	ng_stdin o2 "" "del s['prevResult']; s['cni.dev/valid-attachments'] = $ids" >"$in"
	ng_call GC "$in" CNI_PATH="$W_TMP/bin"
}
# ADD reads nothing of the node but its own table (its cost does not grow
# with the node's pods): the stale table is GC's to remove.
t_check "ADD o2 beside the stale table" pod_add o2
t_check "  o1's stale host table left to GC" node_exec nft list table netdev "$(pod_host_table o1)"
expect "  the new device still not held by it" connected 2000 peer:intruder -- tcp "$STORE4" 8443 2000
t_check "GC with o2 valid: succeeds" gc "$(_pod_var o2 id)"
t_check_not "  o1's host table gone (its device is not its own)" node_exec nft list table netdev "$(pod_host_table o1)"
t_check "  o2's host table kept" node_exec nft list table netdev "$(pod_host_table o2)"
t_check "  o1's DEL (second DEL form) succeeds" pod_del o1 --no-netns
ip -n "$W_NODE" link del "$DEV"

t_check "ADD o3" pod_add o3
t_check "GC with o2 valid (o3 not): succeeds" gc "$(_pod_var o2 id)"
t_check "  o2's host table kept" node_exec nft list table netdev "$(pod_host_table o2)"
t_check_not "  o3's host table removed" node_exec nft list table netdev "$(pod_host_table o3)"
t_check "  o3's DEL succeeds" pod_del o3
t_check "GC with nothing valid" gc
t_check "  DEL o2" pod_del o2
t_check "  node ruleset exactly as before" same_ruleset "$BEFORE"

echo "== hostMirror: macvlan has no per-pod host device"
ip -n "$W_NODE" link add ngmv0 type veth peer name ngmv1
ip -n "$W_NODE" link set ngmv0 up
macvlan() { # NAME MODE: a macvlan + host-local variant with hostMirror MODE
	conf_variant "$1" "
c['plugins'][0] = {'type': 'macvlan', 'master': 'ngmv0', 'mode': 'bridge',
  'ipam': {'type': 'host-local', 'dataDir': '$W_TMP/ipam-mv', 'ranges': [[{'subnet': '10.244.3.0/24'}]]}}
if '$2': e['hostMirror'] = '$2'"
}
MV_REQ=$(macvlan mv-required "") MV_AUTO=$(macvlan mv-auto auto)
out=$(POD_CONFLIST=$MV_REQ pod_add m1 2>&1) || true
t_check "required (the default): ADD fails with code 103 naming eth0" chain_error_is 103 "interface eth0 has no per-pod device" "$out"
t_check_not "  no table left in the pod" pod_has_table m1
t_check "  the node's ruleset untouched" same_ruleset "$BEFORE"
POD_CONFLIST=$MV_REQ pod_del m1 >/dev/null 2>&1 || true
POD_CONFLIST=$MV_AUTO t_check "auto: ADD succeeds" pod_add m2
t_check "  the pod's tables are there" pod_has_table m2
t_check "  the decision log says why there is no host side" log_has m2 ADD enforced
t_check "  ... naming macvlan" sh -c "grep '\"pod_name\":\"m2\"' '$W_TMP/netguard.log' | grep -q 'macvlan device, not a veth'"
t_check "  node ruleset untouched" same_ruleset "$BEFORE"
POD_CONFLIST=$MV_AUTO t_check "  CHECK passes" pod_check m2
POD_CONFLIST=$MV_AUTO t_check "  DEL" pod_del m2
OFF=$(conf_variant off 'e["hostMirror"] = "off"')
POD_CONFLIST=$OFF t_check "off (bridge): ADD" pod_add m3
t_check "  no host table" same_ruleset "$BEFORE"
POD_CONFLIST=$OFF t_check "  CHECK passes" pod_check m3
POD_CONFLIST=$OFF t_check "  DEL" pod_del m3
t_check "required, then ADD again with \"off\" (config changed)" pod_add m4
POD_CONFLIST=$OFF t_check "  the re-ADD succeeds" direct ADD m4
t_check "  and removed this attachment's host table" same_ruleset "$BEFORE"
POD_CONFLIST=$OFF t_check "  DEL" pod_del m4
ip -n "$W_NODE" link del ngmv0

echo "== 50 pods at once"
export POD_NO_LOOPBACK=1
all50() { # VERB: pod_add or pod_del of c1..c50 at once; FAILS: how many failed
	local pids=() p i
	for i in $(seq 1 50); do
		"$1" "c$i" >"$W_TMP/$1-c$i.out" 2>&1 &
		pids+=($!)
	done
	FAILS=0
	for p in "${pids[@]}"; do wait "$p" || FAILS=$((FAILS + 1)); done
}
all50 pod_add
t_row "50 concurrent ADDs succeed" "$FAILS failed" "$FAILS" "$(cat "$W_TMP"/pod_add-c*.out | grep -v '"ips"' | head -5)"
tables=$(node_exec nft list tables netdev | grep -c ' ngh\.' || true)
devs=$(for i in $(seq 1 50); do node_exec nft list table netdev "$(pod_host_table "c$i")" 2>/dev/null |
	sed -n 's/.*hook ingress device "\([^"]*\)".*/\1/p'; done | sort -u | wc -l)
t_row "  50 host tables, each on its own device" "$tables tables, $devs devices" \
	"$((tables == 50 && devs == 50 ? 0 : 1))"
all50 pod_del
t_row "50 concurrent DELs succeed" "$FAILS failed" "$FAILS" "$(cat "$W_TMP"/pod_del-c*.out | head -5)"
t_check "  node ruleset exactly as before" same_ruleset "$BEFORE"

t_summary
