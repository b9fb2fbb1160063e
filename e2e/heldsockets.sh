#!/usr/bin/env bash
# heldsockets: verify's "layer 2: no process can bypass it" row against
# processes that hold a packet, raw or AF_XDP socket after dropping every
# privilege (issue 19 item 4). The kernel checks NET_RAW only when such a
# socket is made: a process that opened one and then dropped every
# capability, set no_new_privs and became uid 65534 keeps it, and a packet
# socket keeps reading frames the ingress chain refuses, an AF_XDP socket
# keeps transmitting past the in-pod guard. verify must name each holder
# (pid, name, kind) whatever its capabilities are now: held by an fd, by a
# thread's own fd table, by a mapped ring alone, by an io_uring, from outside
# the pod's namespace, by the --sandbox-pid; a raw socket hidden from
# /proc/net/raw; and the capabilities of every thread, not only the
# leader's. test/tools/sockhold.c makes each case. Ends with "N passed, N
# failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=e2e/lib/verify.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/verify.sh"

[[ $(id -u) -eq 0 ]] || { echo "heldsockets.sh: needs root (network namespaces)" >&2 && exit 1; }

section() { printf '\n== %s\n' "$1"; }
info() { printf '   info: %s\n' "$*"; }

SOCKHOLD=${SOCKHOLD:-$REPO_DIR/build/sockhold}
[[ -x $SOCKHOLD ]] || { echo "heldsockets.sh: no $SOCKHOLD (make build/sockhold)" >&2 && exit 1; }

world_up ngh-
CONF=$W_TMP/net.d/pod-network.conflist
DENIED=$FORBID4:443 # a peer of the world that listens: only the pod's table refuses it
CAPS="layer 2: no process can bypass it"

# The kernel checks NET_RAW only when a packet, raw or AF_XDP socket is made:
# a process that opened one and then dropped every capability, set
# no_new_privs and became uid 65534 keeps it (issue 19 item 4). verify must
# name it whatever its capabilities are now. test/tools/sockhold.c opens the
# socket, drops everything, checks /proc/self/status and says "ready INODE".
section "held sockets: a packet, raw or XDP socket kept after dropping every capability"
t_check "ADD held" pod_add held
HELD=$(pod_netns_path held)
# hold OUT ARGS...: sockhold ARGS in the pod, its "ready" line in
# $W_TMP/OUT.hold; HOLD_PID is the holder (nsenter execs it).
hold() {
	local out=$W_TMP/$1.hold
	shift
	bg_start nsenter --net="$HELD" "$SOCKHOLD" "$@" >"$out" 2>&1
	HOLD_PID=$BG_PID
	local t0=$SECONDS
	while ((SECONDS - t0 < 30)); do # a correctness bound: a start on a loaded machine
		grep -q '^ready ' "$out" && return 0
		kill -0 "$HOLD_PID" 2>/dev/null || break
		sleep 0.02
	done
	echo "sockhold $* never got ready: $(cat "$out")" >&2
	return 1
}
# dropped PID: the kernel says PID has no capability at all, no_new_privs,
# uid and gid 65534: what the capability checks alone would pass.
dropped() {
	local st re
	st=$(cat "/proc/$1/status") || return 1
	for re in '^CapPrm:\s+0+$' '^CapEff:\s+0+$' '^CapBnd:\s+0+$' '^CapAmb:\s+0+$' '^NoNewPrivs:\s+1$' \
		'^Uid:\s+65534\s+65534\s+65534\s+65534$'; do
		grep -Eq "$re" <<<"$st" || { grep -E '^(Cap|NoNewPrivs|Uid)' <<<"$st" && return 1; }
	done
}
never() { cat "$1" && return 1; }
held_case() { run_verify "$1" --netns "$HELD" --config "$CONF" --denied-probe "$DENIED" "${@:2}"; }
# held_row KIND DETAIL ARGS...: sockhold ARGS held in the pod: verify exits 1
# and the row FAILs with "PID (sockhold: DETAIL".
held_row() {
	local kind=$1 detail=$2
	shift 2
	t_check "sockhold $*: ready" hold "h-$kind" "$@"
	local pid=$HOLD_PID
	t_check "held $kind: the holder has no capability, no_new_privs, uid 65534" dropped "$pid"
	held_case "h-$kind"
	t_check "held $kind: exit 1" rc_is "h-$kind" 1
	t_check "held $kind after dropping every capability: FAIL naming its pid" \
		vrow "h-$kind" "$CAPS" FAIL "$pid (sockhold: $detail" "held packet/raw/XDP sockets"
	bg_stop "$pid"
}
held_row packet "packet)" packet eth0
held_row raw "raw protocol 255)" raw
held_row raw6 "raw6 protocol 58)" raw6
# Bound to eth0 with a TX ring, as test/tools/xsktx.c transmits past the
# in-pod guard. Listed by sock_diag where the kernel can
# (CONFIG_XDP_SOCKETS_DIAG), else found by its protocol name.
held_row xdp "xdp" xdp eth0
# The RX ring mapped and the fd closed: only /proc/PID/maps shows it.
held_row ring "packet, mapped)" packet-ring
# connect(AF_UNSPEC) takes a raw socket out of /proc/net/raw; it still sends.
held_row hidden "raw, not listed by the namespace)" raw-hidden
# In the fd table of a thread made without CLONE_FILES (not /proc/PID/fd).
held_row thread "packet, a thread's own fd)" packet-thread
# Registered in an io_uring and closed: only the ring's fdinfo shows it.
# Where the kernel refuses io_uring (kernel.io_uring_disabled, seccomp) a
# process cannot hold a socket that way either: said, not counted.
if hold h-uring-probe packet-uring 2>/dev/null; then
	bg_stop "$HOLD_PID"
	held_row uring "packet, an io_uring's registered file)" packet-uring
elif grep -q 'io_uring unavailable' "$W_TMP/h-uring-probe.hold"; then
	info "$(cat "$W_TMP/h-uring-probe.hold") here: the io_uring rows are not run"
else
	t_check "sockhold packet-uring: ready" never "$W_TMP/h-uring-probe.hold"
fi
# An fd that left the pod: the holder now runs in the node's namespace.
t_check "sockhold --leave (node) packet: ready" hold h-out --leave "$(_ns_path "$W_NODE")" packet eth0
P_OUT=$HOLD_PID
held_case h-out
t_check "held packet by a process outside the pod's namespace: FAIL naming it" \
	vrow h-out "$CAPS" FAIL "$P_OUT (sockhold: packet, outside the pod's namespace)"
bg_stop "$P_OUT"
# The infra container's pid is exempt from the capability check only: a
# socket it holds is named like any other.
t_check "sockhold packet (as the sandbox pid): ready" hold h-sb packet eth0
P_SB=$HOLD_PID
held_case h-sb --sandbox-pid "$P_SB"
t_check "held packet by the --sandbox-pid: FAIL, not exempt" \
	vrow h-sb "$CAPS" FAIL "$P_SB (sockhold: packet, the --sandbox-pid)"
bg_stop "$P_SB"
# Capabilities belong to threads: /proc/PID/status shows the leader's, and a
# capset(2) in one thread leaves the others theirs.
t_check "sockhold caps-thread: ready" hold h-capthr caps-thread
P_CT=$HOLD_PID
t_check "caps-thread: the leader has no capability, no_new_privs, uid 65534" dropped "$P_CT"
held_case h-capthr
t_check "a thread that kept NET_RAW and NET_ADMIN: FAIL naming its process" \
	vrow h-capthr "$CAPS" FAIL "$P_CT (sockhold: NET_RAW, NET_ADMIN)"
bg_stop "$P_CT"
# ICMP "ping" sockets are not raw sockets: nothing to name.
pod_exec held sysctl -qw net.ipv4.ping_group_range="0 2147483647"
t_check "sockhold ping: ready" hold h-ping ping
P_PING=$HOLD_PID
held_case h-ping
t_check "a held ping socket (not raw): PASS" vrow h-ping "$CAPS" PASS "1 process" "no packet, raw or XDP socket held"
bg_stop "$P_PING"
held_case h-none
t_check "no holder left: PASS, 0 processes" vrow h-none "$CAPS" PASS "0 processes" "no packet, raw or XDP socket held"
t_check "no holder left in the pod" test -z "$(ip netns pids "$(pod_ns held)")"
t_check "DEL held" pod_del held

t_summary
