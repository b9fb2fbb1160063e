#!/usr/bin/env bash
# packet: packet sockets against the guard (rawPacketGuard). A process with
# CAP_NET_RAW (every container by default) writes whole Ethernet frames to
# the pod's interface through an AF_PACKET socket; those frames never pass
# the inet hooks of the policy table. The netdev egress table must hold them
# to the same destinations:
#   - hand-made frames to allowed destinations arrive (the sender and the
#     sniffers work), to a forbidden host or the metadata endpoint they do
#     not, also with PACKET_QDISC_BYPASS, over IPv6, in a VLAN tag, or when
#     the frame says IPv4 while the socket tells the kernel it is IPv6;
#   - ARP leaves only as the stack sends it: a request or reply from the
#     pod's own address, short (no spoofed sender, no payload, no other op);
#   - replies from the ingress port to a gateway source pass, a bare SYN
#     from that port (a new connection) does not, nor one to the node;
#   - AF_XDP (copy mode) skips the guard's hook: the host-side table holds
#     and counts those frames;
#   - with rawPacketGuard false the same frame reaches the forbidden host
#     (the hole is real, and this test can fail);
#   - CHECK sees the guard deleted or changed, a re-ADD repairs it, a
#     replace without the guard removes it, DEL removes it;
#   - ADD naming an interface the namespace lacks fails (since 6.16 the
#     kernel would hook a chain to a device that does not exist).
# Sniffers (AF_PACKET, in the destination namespaces) report which marked
# frames arrived. Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "packet.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
RAW=$E2E_DIR/rawframe.py
T=boxxkite_netguard

t_check "ADD p1 (guard on by default)" pod_add p1
t_check "table netdev: egress chain on the pod's eth0" \
	sh -c "nsenter --net='$(pod_netns_path p1)' nft list chain netdev $T egress | grep -q 'hook egress device \"eth0\"'"
t_check "CHECK passes with the guard" pod_check p1

# ---- sniffers in the destinations -------------------------------------------
SEEN=$W_TMP/raw-seen
: >"$SEEN"
sniff "$W_ID-storage" eth0
sniff "$W_ID-forbidden" eth0
sniff "$W_ID-gateway" eth0
sniff "$W_ID-metadata" eth0
sniff "$W_NODE" ngbr0
GW_MAC=$(node_exec ip -o link show dev ngbr0 | sed -n 's|.*link/ether \([0-9a-f:]*\).*|\1|p')

# raw POD ARGS...: one frame from POD to the node's bridge (the gateway),
# from the pod's own address, marked with $MARK (set by next_mark).
raw() {
	local pod=$1 v=4 src
	shift
	[[ $* == *--dst\ *:* ]] && v=6
	src=$(pod_ip "$pod" "$v")
	pod_exec "$pod" "$PY" "$RAW" send --ifname eth0 --dst-mac "$GW_MAC" --src "$src" --marker "$MARK" "$@"
}
# raw_denied POD: the guard's counter; 0 when there is no guard (a broken
# plugin must fail the rows, not stop the script).
raw_denied() {
	local n
	n=$(pod_exec "$1" nft list counter netdev "$T" raw_denied 2>/dev/null | sed -n 's/.*packets \([0-9]*\).*/\1/p') || true
	echo "${n:-0}"
}
# What the sender saw: the egress hook's drop fails the send with ENOBUFS.
said() { [[ $1 == *"No buffer space"* ]] && echo "send: ENOBUFS" || echo "${1:0:30}"; }
# passes LABEL POD ARGS...: the frame arrives. blocked LABEL POD ARGS...: it
# does not, and the guard counted it (COUNTER=host_denied: the host side).
passes() {
	local label=$1 pod=$2 out rc=0
	shift 2
	next_mark
	out=$(raw "$pod" "$@" 2>&1)
	arrived || rc=1
	t_row "$label" "$(said "$out")" "$rc" "$out"
}
blocked() {
	local label=$1 pod=$2 out before after ok=0 counter=${COUNTER:-raw_denied}
	shift 2
	before=$($counter "$pod")
	next_mark
	out=$(raw "$pod" "$@" 2>&1)
	arrived && ok=1
	after=$($counter "$pod")
	((after > before)) || ok=1
	t_row "$label" "$(said "$out"); $counter $before -> $after" $ok "arrived: $(grep -cx "$MARK" "$SEEN"); $out"
}

echo "== frames from a packet socket, guard on"
passes "raw TCP SYN to storage $STORE4:443 arrives" p1 --dst "$STORE4" --proto tcp --dport 443
passes "raw TCP SYN to [$STORE6]:443 arrives" p1 --dst "$STORE6" --proto tcp --dport 443
blocked "raw UDP to forbidden $FORBID4:9999: held" p1 --dst "$FORBID4"
blocked "  the same, PACKET_QDISC_BYPASS: held" p1 --dst "$FORBID4" --bypass
blocked "raw UDP to [$FORBID6]:9999: held" p1 --dst "$FORBID6"
blocked "raw TCP to forbidden $FORBID4:443: held" p1 --dst "$FORBID4" --proto tcp --dport 443
blocked "raw UDP to metadata $MD4:80: held" p1 --dst "$MD4" --dport 80
blocked "VLAN-tagged frame to storage: held" p1 --dst "$STORE4" --proto tcp --dport 443 --vlan 7
blocked "IPv4 frame, socket says IPv6: held" p1 --dst "$STORE4" --proto tcp --dport 443 \
	--skb-protocol 86dd
passes "SYN-ACK 8080 -> gateway $GW4 arrives" p1 --dst "$GW4" --proto tcp --sport 8080 \
	--dport 40000 --flags SA
blocked "bare SYN 8080 -> gateway $GW4:22: held" p1 --dst "$GW4" --proto tcp --sport 8080 --dport 22
blocked "bare SYN to the node $POD_GW4:10250: held" p1 --dst "$POD_GW4" --proto tcp --dport 10250
passes "ACK (a probe reply) to the node arrives" p1 --dst "$POD_GW4" --proto tcp --sport 8080 \
	--dport 40000 --flags A
passes "ARP request from the pod's own address arrives" p1 --dst "$POD_GW4" --arp 1
blocked "ARP reply claiming the gateway's address: held" p1 --src "$POD_GW4" --dst "$POD_GW4" --arp 2
blocked "ARP carrying 200 more bytes: held" p1 --dst "$POD_GW4" --arp 1 --pad 200
blocked "ARP operation 3: held" p1 --dst "$POD_GW4" --arp 3
echo "== beyond the guard: AF_XDP, and the README's advice (drop NET_RAW)"
XSKTX=${XSKTX:-$REPO_DIR/build/xsktx}
# frame_to FILE POD ARGS...: the frame raw() would send, into FILE.
frame_to() {
	local f=$1 pod=$2
	shift 2
	pod_exec "$pod" "$PY" "$RAW" send --ifname eth0 --dst-mac "$GW_MAC" --src "$(pod_ip "$pod" 4)" \
		--marker "$MARK" --stdout "$@" >"$f"
}
FRAME=$W_TMP/xdp-frame
# The kernel's AF_XDP copy-mode transmit (__dev_direct_xmit) skips the
# netdev egress hook the guard sits on: the pod's own namespace cannot hold
# these frames. The host-side table (node namespace, ingress of the veth
# peer) does: the frame must not arrive, and host_denied counts it.
xdp_held() { # POD ARGS...: an AF_XDP frame that must be held on the host side
	local pod=$1 before after out ok=0
	shift
	before=$(host_denied "$pod")
	next_mark
	frame_to "$FRAME" "$pod" "$@"
	out=$(pod_exec "$pod" "$XSKTX" eth0 <"$FRAME" 2>&1) || true
	arrived && ok=1
	after=$(host_denied "$pod")
	((after > before)) || ok=1
	t_row "AF_XDP frame to ${*: -1}: held on the host side" "$out; host_denied $before -> $after" $ok \
		"arrived: $(grep -cx "$MARK" "$SEEN")"
}
xdp_held p1 --dst "$FORBID4"
xdp_held p1 --dst "$MD4"
# without_net_raw POD CMD...: CMD in the pod with CAP_NET_RAW gone from
# every set (what securityContext.capabilities.drop: [NET_RAW] gives).
without_net_raw() {
	local pod=$1
	shift
	pod_exec "$pod" setpriv --inh-caps=-net_raw --bounding-set=-net_raw -- "$@"
}
refused_without_net_raw() { # CMD...: the socket is refused (EPERM), nothing arrives
	local out
	out=$("$@" 2>&1) || true
	if arrived; then echo "arrived: $out" && return 1; fi
	[[ $out == *"Operation not permitted"* ]] || { echo "$out" && return 1; }
}
next_mark
frame_to "$FRAME" p1 --dst "$FORBID4"
# shellcheck disable=SC2016 # expanded by that sh, from its arguments
t_check "without NET_RAW: AF_XDP socket refused" refused_without_net_raw \
	without_net_raw p1 sh -c '"$1" eth0 <"$2"' _ "$XSKTX" "$FRAME"
next_mark
t_check "without NET_RAW: packet socket refused" refused_without_net_raw \
	without_net_raw p1 "$PY" "$RAW" send --ifname eth0 --dst-mac "$GW_MAC" --src "$(pod_ip p1 4)" \
	--marker "$MARK" --dst "$FORBID4"
expect "the pod's own stack still reaches storage" connected 1000 pod:p1 -- tcp "$STORE4" 443 2000
expect "  and over IPv6" connected 1000 pod:p1 -- tcp "$STORE6" 443 2000

echo "== rawPacketGuard false: the hole it closes (and the host side's)"
NOGUARD=$(conf_variant noguard 'e["rawPacketGuard"] = False; e["hostMirror"] = "off"')
POD_CONFLIST=$NOGUARD t_check "ADD p2 without the guard or the host side" pod_add p2
t_check_not "  no netdev table" pod_exec p2 nft list table netdev "$T"
passes "  raw UDP to forbidden $FORBID4 arrives" p2 --dst "$FORBID4"
POD_CONFLIST=$NOGUARD t_check "  CHECK passes (no guard wanted, none there)" pod_check p2
NOGUARD_HOST=$(conf_variant noguard-host 'e["rawPacketGuard"] = False')
POD_CONFLIST=$NOGUARD_HOST t_check "ADD p3 without the guard, host side on" pod_add p3
COUNTER=host_denied blocked "  raw UDP to forbidden $FORBID4: held on the host side" p3 --dst "$FORBID4"
# ARP as a packet socket may pad it (60 bytes on the wire) leaves; 62 bytes
# is refused on the host side, whose ingress hook sees the frame without its
# Ethernet header (a limit of 64 there would have passed 77 bytes).
passes "  ARP of 60 bytes on the wire arrives through the host side" p3 --dst "$POD_GW4" --arp 1 --frame-len 60
COUNTER=host_denied blocked "  ARP of 62 bytes on the wire: held on the host side" p3 --dst "$POD_GW4" --arp 1 --frame-len 62
POD_CONFLIST=$NOGUARD_HOST t_check "  DEL p3" pod_del p3

echo "== the guard under CHECK, replace and DEL"
repaired() { direct ADD "$1" && pod_check "$1"; }
pod_exec p1 nft delete table netdev "$T"
t_check "guard deleted by hand: CHECK fails naming it" check_fails p1 "table netdev boxxkite_netguard is missing"
t_check "  re-ADD repairs it" repaired p1
pod_exec p1 nft insert rule netdev "$T" egress accept
t_check "accept rule added to the guard: CHECK fails" check_fails p1 "table netdev: ruleset differs"
t_check "  re-ADD repairs it" repaired p1
pod_exec p1 nft add table netdev "$T" '{ flags dormant; }'
t_check "guard made dormant: CHECK fails" check_fails p1 "table netdev"
t_check "  re-ADD repairs it" repaired p1
POD_CONFLIST=$NOGUARD t_check "ADD again without the guard (a replace)" direct ADD p1
t_check_not "  netdev table gone" pod_exec p1 nft list table netdev "$T"
t_check "  inet table still there" pod_has_table p1
t_check "ADD with the guard again: CHECK passes" repaired p1
missing_if() { # ADD naming an interface the namespace lacks: code 112, nothing changed
	local in=$W_TMP/pods/p1/stdin.json vars rc=0
	ng_stdin p1 >"$in" || return
	mapfile -t vars < <(ng_pod_env p1 | sed 's/^CNI_IFNAME=.*/CNI_IFNAME=eth9/')
	ng_call ADD "$in" "${vars[@]}" || rc=$?
	ng_error_is 112 "interface eth9 (CNI_IFNAME) is not in the pod's network namespace" "$rc"
}
t_check "ADD naming a missing interface: code 112 (the guard would hook nothing)" missing_if
t_check "  the tables in place are untouched: CHECK passes" pod_check p1
t_check "DEL" pod_del p1
t_check_not "  netdev table gone" pod_exec p1 nft list table netdev "$T"
t_check_not "  inet table gone" pod_has_table p1
t_check "DEL p2" pod_del p2

t_summary
