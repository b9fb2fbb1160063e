# shellcheck shell=bash
# e2e/lib.sh: the network-namespace test world. Source it, then:
#
#   world_up PREFIX          build the world (namespaces named PREFIX<id>-*)
#   pod_add NAME [K8S_NS] [ANNOTATIONS_JSON] [CNI_VERSION]
#   pod_check NAME / pod_del NAME [--no-netns]
#   pod_exec NAME CMD... / peer_exec PEER CMD... / node_exec CMD...
#   pod_listen NAME PORT     a sidecar listener inside the pod
#   pod_netns_path NAME / pod_default_route NAME / bg_start CMD... / bg_stop PID
#   expect LABEL WANT MAX_MS WHERE -- NPROBE-ARGS...   one probe, one row
#   t_ok / t_bad / t_check / t_summary                 counters
#   world_down               (runs by itself on EXIT, INT and TERM)
#
# Everything lives in namespaces created here: the root namespace gets no
# link, address, route or rule, and no route anywhere leads out of the world
# (peers know only the pod ranges; pods only the world's private ranges).
# world_down kills what it started by PID and deletes what it created by
# name, so parallel runs with other prefixes (or the same prefix) never meet.
#
# The services (dnsmasq, socat) are background children of the sourcing
# shell, so that they can be killed and reaped by PID: a test that runs
# things in parallel must `wait PID...`, never a bare `wait` (which would
# wait for the services, forever). world_up sets the EXIT, INT and TERM traps.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$E2E_DIR/.." && pwd)
NG_BIN=${NG_BIN:-$REPO_DIR/build/boxxkite-netguard}
NPROBE=${NPROBE:-$REPO_DIR/build/nprobe}
# Debian's python3, not a user's pyenv shim: cnirun.py needs only the stdlib.
PY=${PY:-$(command -v /usr/bin/python3 || command -v python3)}

# The world's addresses (see e2e/conf/README.md), for the test scripts.
# shellcheck disable=SC2034
POD_NET4=10.244.1.0/24 POD_GW4=10.244.1.1 POD_GW6=fd00:244:1::1
DNS4=10.96.0.10 DNS6=fd00:10:96::a
MD4=169.254.169.254 MD6=fd00:ec2::254
STORE4=10.20.1.5 STORE6=fd00:20::5 STORE_NAME4=10.20.1.6 STORE_NAME6=fd00:20::6
STORE_NAME=storage.world.test STORE_TTL=300
IMDS_NAME=imds.world.test # resolves to the metadata address (MD4)
FORBID4=10.50.0.9 FORBID6=fd00:50::9
GW4=10.99.0.2 GW6=fd00:99::2
STRANGER4=10.98.0.2 STRANGER6=fd00:98::2
ENFORCED_NS=sandboxes

W_ID='' W_TMP='' W_NODE='' _NS_INODES=''
T_PASS=0 T_FAIL=0

# ---- bookkeeping ------------------------------------------------------------

# Every namespace and process is written down BEFORE it exists, so a signal
# at any point leaves world_down a complete list.
_track_ns() { echo "$1" >>"$W_TMP/netns"; }
_track_pid() { echo "$1" >>"$W_TMP/pids"; }

_ns_path() { echo "/run/netns/$1"; }

node_exec() { nsenter --net="$(_ns_path "$W_NODE")" "$@"; }
peer_exec() { local p=$1; shift; nsenter --net="$(_ns_path "$W_ID-$p")" "$@"; }
pod_ns() { echo "$W_ID-pod-$1"; }
pod_exec() { local p=$1; shift; nsenter --net="$(_ns_path "$(pod_ns "$p")")" "$@"; }

# sysctl inside one of our namespaces only (never the machine's).
_ns_sysctl() { nsenter --net="$(_ns_path "$1")" sysctl -qw "$2" >/dev/null; }

# Starts CMD in the background inside namespace NS and records its PID.
# nsenter execs, so $! is the service itself; it is our child, so its PID
# cannot be reused before world_down reaps it. Output goes to the log dir.
_spawn() {
	local ns=$1 name=$2
	shift 2
	nsenter --net="$(_ns_path "$ns")" "$@" </dev/null >>"$W_TMP/log/$name.log" 2>&1 &
	_track_pid "$!"
}

# ---- teardown ---------------------------------------------------------------

# _ours PID: PID is still a live process of this world, not a zombie and not
# a stranger that got the number after bash reaped ours: our direct child,
# or a process inside one of our namespaces (inode list in _NS_INODES).
_ours() {
	local stat st ppid ns
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	read -r st ppid _ <<<"${stat##*) }"
	[[ -n $st && $st != Z ]] || return 1
	[[ $ppid == "$$" ]] && return 0
	ns=$(readlink "/proc/$1/ns/net" 2>/dev/null) || return 1
	ns=${ns#net:[} && ns=${ns%]}
	[[ " $_NS_INODES " == *" $ns "* ]]
}

world_down() {
	local - pid ns i
	set +e # teardown must run to the end whatever fails on the way
	[[ -n ${W_TMP:-} && -d $W_TMP ]] || return 0
	trap '' INT TERM # a second Ctrl-C must not cut the cleanup short
	[[ -n ${E2E_KEEP_LOGS:-} && -d $W_TMP/log ]] && cp -r "$W_TMP/log" "$E2E_KEEP_LOGS"
	local pids=() nss=()
	[[ -f $W_TMP/pids ]] && mapfile -t pids <"$W_TMP/pids"
	[[ -f $W_TMP/netns ]] && mapfile -t nss <"$W_TMP/netns"
	_NS_INODES=
	for ns in "${nss[@]}"; do
		_NS_INODES+=" $(stat -L -c %i "/run/netns/$ns" 2>/dev/null)"
	done

	for pid in "${pids[@]}"; do _ours "$pid" && kill -TERM "$pid" 2>/dev/null; done
	for i in {1..20}; do # up to 1 s for a clean exit, then KILL
		local left=0
		for pid in "${pids[@]}"; do _ours "$pid" && left=1; done
		((left)) || break
		sleep 0.05
	done
	for pid in "${pids[@]}"; do _ours "$pid" && kill -KILL "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
	# Anything else still inside our namespaces (a socat child mid-
	# connection, a probe cut off by the signal) is ours too.
	for ns in "${nss[@]}"; do
		[[ -e /run/netns/$ns ]] || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
	done
	# Pods first, the node last: deleting a namespace destroys its links,
	# and the node holds the bridge and the host side of every veth.
	for ((i = ${#nss[@]} - 1; i >= 0; i--)); do
		[[ -e /run/netns/${nss[i]} ]] && ip netns delete "${nss[i]}" 2>/dev/null
	done
	[[ $W_TMP == /tmp/"$W_ID".* ]] && rm -rf "$W_TMP"
	W_TMP=
}

_on_signal() {
	world_down
	trap - EXIT
	exit "$1"
}

# ---- building the world -----------------------------------------------------

_netns_add() {
	_track_ns "$1"
	ip netns add "$1"
	ip -n "$1" link set lo up
	# No DAD: static test addresses are unique, and waiting ~2 s for them
	# to leave "tentative" would make every run slow.
	_ns_sysctl "$1" net.ipv6.conf.all.accept_dad=0
	_ns_sysctl "$1" net.ipv6.conf.default.accept_dad=0
}

# _peer_add NAME NODE4/LEN NODE6/LEN ADDR/LEN...: a namespace joined to the
# node by a veth. The node side takes the .1 of each subnet; the peer knows
# only the way back to the pods.
_peer_add() {
	local name=$1 node4=$2 node6=$3 a
	shift 3
	local ns=$W_ID-$name link=p-$name
	_netns_add "$ns"
	# Created straight inside the node with the peer end in the peer's
	# namespace: a veth made in the root namespace and moved would exist
	# there for a moment.
	ip -n "$W_NODE" link add "$link" type veth peer name eth0 netns "$ns"
	ip -n "$W_NODE" addr add "$node4" dev "$link"
	ip -n "$W_NODE" addr add "$node6" dev "$link" nodad
	for a in "$@"; do
		if [[ $a == *:* ]]; then
			ip -n "$ns" addr add "$a" dev eth0 nodad
		else
			ip -n "$ns" addr add "$a" dev eth0
		fi
	done
	# Peer end first: the other order left the first peer's IPv6 without
	# neighbour discovery for ~1 s (the carrier event waits in linkwatch).
	ip -n "$ns" link set eth0 up
	ip -n "$W_NODE" link set "$link" up
	ip -n "$ns" route add 10.244.0.0/16 via "${node4%/*}"
	ip -n "$ns" -6 route add fd00:244::/32 via "${node6%/*}"
}

_services_start() {
	# DNS: dnsmasq answers storage.world.test (A + AAAA, with a TTL) and
	# imds.world.test (the metadata address, as a hostile resolver would) over
	# UDP and TCP, and nothing else: no upstream, no /etc/hosts, no config file.
	_spawn "$W_ID-dns" dnsmasq dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--no-resolv --no-hosts --no-poll --user=root --group=root \
		--bind-interfaces --listen-address="$DNS4,$DNS6" \
		--pid-file="$W_TMP/dnsmasq.pid" --log-facility="$W_TMP/log/dnsmasq-queries.log" --log-queries \
		--host-record="$STORE_NAME,$STORE_NAME4,$STORE_NAME6,$STORE_TTL" \
		--host-record="$IMDS_NAME,$MD4"
	# Listeners accept and hang up at once: a probe only needs the connect.
	local l="reuseaddr,fork,backlog=1024" sink=OPEN:/dev/null
	_spawn "$W_ID-metadata" md4 socat "TCP4-LISTEN:80,bind=$MD4,$l" $sink
	_spawn "$W_ID-metadata" md6 socat "TCP6-LISTEN:80,bind=[$MD6],$l" $sink
	# Storage listens on every address; :8443 is there so that "refused"
	# can only come from the pod's firewall, not from an empty port.
	_spawn "$W_ID-storage" store443 socat "TCP6-LISTEN:443,ipv6only=0,$l" $sink
	_spawn "$W_ID-storage" store8443 socat "TCP6-LISTEN:8443,ipv6only=0,$l" $sink
	_spawn "$W_ID-forbidden" forbid443 socat "TCP6-LISTEN:443,ipv6only=0,$l" $sink
}

# Waits (bounded) until every service answers from the node: this also
# proves the plumbing before any pod depends on it.
_services_wait() {
	local target ok
	for target in "tcp $MD4 80" "tcp $MD6 80" "tcp $STORE4 443" "tcp $STORE6 8443" \
		"tcp $FORBID4 443" "udp-dns $DNS4 $STORE_NAME" "tcp-dns $DNS6 $STORE_NAME"; do
		ok=
		for _ in {1..40}; do
			# shellcheck disable=SC2086 # target is a word list on purpose
			if node_exec "$NPROBE" $target 200 >/dev/null; then ok=1 && break; fi
			sleep 0.05
		done
		[[ $ok ]] || { echo "world_up: service not answering: $target" >&2 && return 1; }
	done
}

# world_up PREFIX: builds the node, the peers and their services.
world_up() {
	local prefix=${1:?world_up PREFIX}
	[[ -x $NG_BIN && -x $NPROBE ]] || {
		echo "world_up: build first: make build/boxxkite-netguard build/nprobe" >&2
		return 1
	}
	W_ID=$prefix$(printf '%x%04x' $$ $((RANDOM)))
	W_TMP=$(mktemp -d "/tmp/$W_ID.XXXXXX")
	trap world_down EXIT
	trap '_on_signal 130' INT
	trap '_on_signal 143' TERM
	: >"$W_TMP/netns"
	: >"$W_TMP/pids"
	mkdir -p "$W_TMP/log" "$W_TMP/pods" "$W_TMP/cache" "$W_TMP/net.d" "$W_TMP/bin" "$W_TMP/ipam" "$W_TMP/ipam-ptp"

	# CNI_PATH: the Debian plugins plus ours, like a node's /opt/cni/bin.
	local p
	for p in /usr/lib/cni/*; do ln -s "$p" "$W_TMP/bin/"; done
	ln -sf "$NG_BIN" "$W_TMP/bin/boxxkite-netguard"
	for p in "$E2E_DIR"/conf/*.conflist; do
		sed "s|@TMP@|$W_TMP|g" "$p" >"$W_TMP/net.d/$(basename "$p")"
	done
	# The node's resolver, as the plugin will see it (bind-mounted over
	# /etc/resolv.conf in a private mount namespace; the machine's file is
	# never touched).
	printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$DNS4" >"$W_TMP/resolv.conf"

	W_NODE=$W_ID-node
	_netns_add "$W_NODE"
	_ns_sysctl "$W_NODE" net.ipv4.ip_forward=1
	_ns_sysctl "$W_NODE" net.ipv6.conf.all.forwarding=1

	_peer_add dns 10.96.0.1/24 fd00:10:96::1/64 "$DNS4/24" "$DNS6/64"
	_peer_add metadata 169.254.169.1/24 fd00:ec2::1/64 "$MD4/24" "$MD6/64"
	_peer_add storage 10.20.1.1/24 fd00:20::1/64 "$STORE4/24" "$STORE_NAME4/24" "$STORE6/64" "$STORE_NAME6/64"
	_peer_add forbidden 10.50.0.1/24 fd00:50::1/64 "$FORBID4/24" "$FORBID6/64"
	_peer_add gateway 10.99.0.1/24 fd00:99::1/64 "$GW4/24" "$GW6/64"
	_peer_add stranger 10.98.0.1/24 fd00:98::1/64 "$STRANGER4/24" "$STRANGER6/64"

	_services_start
	_services_wait
}

# ---- pods: the runtime's side -----------------------------------------------

# _cni CNIRUN-ARGS...: cnirun.py inside the node's namespace, with the fake
# DNS as the resolver, exactly where a runtime would run the plugins.
_cni() {
	# shellcheck disable=SC2016 # $1 and $@ belong to the inner sh
	nsenter --net="$(_ns_path "$W_NODE")" unshare --mount --propagation private \
		sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh \
		"$W_TMP/resolv.conf" "$PY" "$E2E_DIR/cnirun.py" "$@" \
		--cache "$W_TMP/cache" --cni-path "$W_TMP/bin"
}

_pod_var() { cat "$W_TMP/pods/$1/$2" 2>/dev/null; }

# The conflist pod_add/pod_del/pod_check use; a test may point POD_CONFLIST
# at another rendered file.
_conflist() { echo "${POD_CONFLIST:-$W_TMP/net.d/pod-network.conflist}"; }

_cni_pod() { # VERB NAME [extra cnirun args]
	local verb=$1 name=$2 d=$W_TMP/pods/$2
	shift 2
	local netns ann=() ver=()
	netns=$(_ns_path "$(pod_ns "$name")")
	[[ -f $d/annotations ]] && ann=(--annotations "$(cat "$d/annotations")")
	[[ -s $d/version ]] && ver=(--cni-version "$(cat "$d/version")")
	_cni "$verb" --conflist "$(_conflist)" --containerid "$(_pod_var "$name" id)" --netns "$netns" \
		--args "$(_pod_var "$name" args)" "${ann[@]}" "${ver[@]}" "$@"
}

# pod_add NAME [K8S_NAMESPACE] [ANNOTATIONS_JSON] [CNI_VERSION]
# Creates the pod's namespace, runs loopback (its own network, as containerd
# does) then the pod conflist. Prints the result JSON, or the failing
# plugin's error JSON and returns non-zero. ANNOTATIONS_JSON defaults to {}
# (containerd always passes the pod's annotations, even none); "none" plays a
# runtime that does not pass the capability at all. POD_NO_LOOPBACK=1 skips
# the loopback network (for pods whose traffic is never probed: faster).
pod_add() {
	local name=${1:?pod_add NAME} k8s_ns=${2:-$ENFORCED_NS} annotations=${3:-"{}"} version=${4:-}
	local d=$W_TMP/pods/$name ns id out rc=0
	ns=$(pod_ns "$name")
	mkdir -p "$d"
	id=$(printf '%s' "$W_ID/$name" | sha256sum | cut -c1-64)
	echo "$id" >"$d/id"
	echo "IgnoreUnknown=1;K8S_POD_NAMESPACE=$k8s_ns;K8S_POD_NAME=$name;K8S_POD_INFRA_CONTAINER_ID=$id" >"$d/args"
	rm -f "$d/annotations"
	[[ $annotations == none ]] || echo "$annotations" >"$d/annotations"
	echo "$version" >"$d/version"
	[[ -e /run/netns/$ns ]] || _netns_add "$ns"

	if [[ -z ${POD_NO_LOOPBACK:-} ]]; then
		_cni ADD --conflist "$W_TMP/net.d/loopback.conflist" --containerid "$id" \
			--netns "$(_ns_path "$ns")" --args "$(cat "$d/args")" >/dev/null || return 1
	fi
	out=$(_cni_pod ADD "$name") || rc=$?
	echo "$out"
	((rc == 0)) || return "$rc"
	echo "$out" >"$d/result"
}

# pod_check NAME: CHECK with the cached result, like libcni.
pod_check() { _cni_pod CHECK "${1:?pod_check NAME}"; }

# pod_del NAME [--no-netns]: DEL in reverse order with the cached result.
# --no-netns plays RemovePodSandbox's second DEL: CNI_NETNS="" and no
# prevResult. POD_NO_LOOPBACK=1: the pod was added without loopback.
pod_del() {
	local name=${1:?pod_del NAME}
	if [[ ${2:-} == --no-netns ]]; then
		local ann=()
		[[ -f $W_TMP/pods/$name/annotations ]] && ann=(--annotations "$(_pod_var "$name" annotations)")
		_cni DEL --conflist "$(_conflist)" --containerid "$(_pod_var "$name" id)" --netns "" \
			--args "$(_pod_var "$name" args)" "${ann[@]}" --no-cache
		return
	fi
	_cni_pod DEL "$name" || return
	[[ -z ${POD_NO_LOOPBACK:-} ]] || return 0
	_cni DEL --conflist "$W_TMP/net.d/loopback.conflist" --containerid "$(_pod_var "$name" id)" \
		--netns "$(_ns_path "$(pod_ns "$name")")" --args "$(_pod_var "$name" args)"
}

# pod_netns_rm NAME: the namespace disappears (as after a node reboot or a
# runtime that removed it before calling DEL).
pod_netns_rm() { ip netns delete "$(pod_ns "$1")"; }

# pod_ip NAME 4|6: the pod's address from its ADD result.
pod_ip() {
	"$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))
want = sys.argv[2]
for ip in r.get("ips", []):
    a = ip["address"].split("/")[0]
    if (":" in a) == (want == "6"):
        print(a)
        break
' "$W_TMP/pods/$1/result" "${2:-4}"
}

# pod_listen NAME PORT: a dual-stack sidecar listener in the pod.
pod_listen() {
	_spawn "$(pod_ns "$1")" "pod-$1-$2" socat "TCP6-LISTEN:$2,ipv6only=0,reuseaddr,fork" OPEN:/dev/null
	for _ in {1..40}; do
		pod_exec "$1" "$NPROBE" tcp ::1 "$2" 200 >/dev/null && return 0
		sleep 0.05
	done
	echo "pod_listen: $1:$2 not listening" >&2
	return 1
}

# layout_conflist bridge|ptp: the conflist of that layout (POD_CONFLIST for
# pod_add/pod_check/pod_del): a bridge port per pod, or a routed veth (ptp).
layout_conflist() {
	case $1 in
	bridge) echo "$W_TMP/net.d/pod-network.conflist" ;;
	ptp) echo "$W_TMP/net.d/pod-network-ptp.conflist" ;;
	*) echo "layout_conflist: no layout $1" >&2 && return 1 ;;
	esac
}

# pod_host_dev NAME: the node's side of the pod's eth0 (its veth peer), by
# the peer ifindex the pod's side names ("eth0@ifN").
pod_host_dev() {
	local idx
	idx=$(pod_exec "$1" ip -o link show dev eth0 | sed -n 's/^[0-9]*: eth0@if\([0-9]*\):.*/\1/p')
	[[ -n $idx ]] || return 1
	node_exec ip -o link show 2>/dev/null | sed -n "s/^$idx: \([^:@]*\)[:@].*/\1/p"
}

# pod_host_table NAME [IFNAME]: the name of pod NAME's host-side table
# (nft/render_host.h: ngh.<container id>.<ifname>; the world's ids are hex).
pod_host_table() { echo "ngh.$(_pod_var "$1" id).${2:-eth0}"; }

# direct VERB POD: our plugin alone, as the chain would call it, on the pod's
# cached result; the output is shown when it fails.
direct() { ng_pod_call "$1" "$2" || { cat "$W_TMP/ng.out" "$W_TMP/ng.err" && return 1; }; }
# check_fails POD TEXT...: CHECK through the chain fails in our plugin with
# code 111 and every TEXT in the message.
check_fails() {
	local out rc=0 msg t
	out=$(pod_check "$1" 2>&1) || rc=$?
	((rc != 0)) || { echo "CHECK passed" && return 1; }
	msg=$(chain_error_is 111 "$2" "$out") || { echo "$msg" && return 1; }
	shift 2
	for t in "$@"; do
		[[ $msg == *"$t"* ]] || { echo "msg does not name '$t': $msg" && return 1; }
	done
}

# ---- marked frames (e2e/rawframe.py) ----------------------------------------
# sniff NETNS IFNAME: a sniffer there appending every marker it sees to
# $SEEN (set it first), waited for until it listens. next_mark: a fresh
# $MARK. arrived: the frame with $MARK reached a sniffer (within 500 ms).
# host_denied POD: the drop counter of pod POD's host-side table (0 when
# there is none: a broken plugin must fail rows, not stop the script).
sniff() {
	bg_start nsenter --net="$(_ns_path "$1")" "$PY" "$E2E_DIR/rawframe.py" sniff --ifname "$2" --out "$SEEN" \
		>"$W_TMP/sniff-$1.out" 2>&1
	for _ in $(seq 100); do
		grep -q ready "$W_TMP/sniff-$1.out" && return 0
		sleep 0.02
	done
	echo "sniffer in $1 did not start" >&2 && return 1
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

# ---- the node agent (egress.names "learn") ----------------------------------
#
#   learn_world HOSTS_FILE   a second resolver (dnsmasq on the DNS host,
#                            $DNSL) answering HOSTS_FILE with a 1 s TTL, and
#                            10.21.0.0/16 all the storage host's (:443 sink,
#                            :9443 echo)
#   learn_hosts FMT OCTET N  N hosts lines: 10.21.(OCTET + i/250).(i%250 + 1), name
#                            printf FMT with i (FMT e.g. u%d.race.world.test)
#   learn_conf NAME PYCODE   conf_variant NAME with the learn resolver in
#                            dns.servers and egress.names "learn", then PYCODE
#   agent_start / agent_ready MS   the agent inside the node's namespace,
#                            state dir $W_TMP/state, /healthz on 127.0.0.1:9617
#                            (/readyz also wants the binary installed and our
#                            entry active: e2e/ops.sh tests it)
# shellcheck disable=SC2034 # used by the scripts that source this file
DNSL=10.96.0.11 AGENT_PID=''
learn_world() {
	ip -n "$W_ID-dns" addr add "$DNSL/24" dev eth0
	ip -n "$W_ID-storage" route add local 10.21.0.0/16 dev lo
	ip -n "$W_NODE" route add 10.21.0.0/16 via "$STORE4"
	_spawn "$W_ID-storage" echo9443 socat TCP4-LISTEN:9443,reuseaddr,fork,backlog=1024 PIPE
	_spawn "$W_ID-dns" dnsmasq-learn dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--no-resolv --no-hosts --no-poll --user=root --group=root --bind-interfaces \
		--listen-address="$DNSL" --pid-file="$W_TMP/dnsmasq-learn.pid" --local-ttl=1 \
		--addn-hosts="$1" --cname=files.world.test,blob.cdn.test
	for _ in {1..40}; do
		node_exec "$NPROBE" udp-dns "$DNSL" "$(awk 'NR==1{print $2}' "$1")" 200 >/dev/null && return 0
		sleep 0.05
	done
	echo "learn_world: the learn resolver is not answering" >&2
	return 1
}
learn_hosts() {
	local i
	for ((i = 0; i < $3; i++)); do
		# shellcheck disable=SC2059 # the format is the caller's on purpose
		printf "10.21.%d.%d $1\n" $(($2 + i / 250)) $((i % 250 + 1)) "$i"
	done
}
learn_conf() {
	conf_variant "$1" '
e["dns"]["servers"].append("'"$DNSL"'")
e["egress"]["names"] = "learn"
'"$2"
}
agent_start() {
	bg_start nsenter --net="$(_ns_path "$W_NODE")" "$NG_BIN" agent --state-dir "$W_TMP/state" \
		--listen 127.0.0.1:9617 2>>"$W_TMP/log/agent.log"
	# shellcheck disable=SC2034 # read by the sourcing script
	AGENT_PID=$BG_PID
}
agent_ready() { # waits up to $1 ms for /healthz (the agent serves)
	local i
	for ((i = 0; i < $1 / 10; i++)); do
		node_exec "$PY" -c 'import urllib.request,sys; sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:9617/healthz", timeout=0.2).status == 200 else 1)' 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

# ---- assertions ---------------------------------------------------------------

t_ok() { T_PASS=$((T_PASS + 1)); }
t_bad() { T_FAIL=$((T_FAIL + 1)); }

# t_check DESC CMD...: passes when CMD succeeds. CMD runs in this shell (so
# pod_add and friends keep their state); its output is shown on failure.
t_check() { _t_run 0 "$@"; }
# t_check_not DESC CMD...: passes when CMD fails.
t_check_not() { _t_run 1 "$@"; }

_t_run() {
	local want_fail=$1 desc=$2 rc=0 out=${W_TMP:-/tmp}/t_check.out
	shift 2
	"$@" >"$out" 2>&1 || rc=$?
	if (((rc != 0) == want_fail)); then
		t_ok
		_row "$desc" "" PASS
		_t_record PASS "$desc"
	else
		t_bad
		_row "$desc" "" FAIL
		_t_record FAIL "$desc"
		sed 's/^/    | /' "$out" | head -20 || true # (a long output: SIGPIPE, not an exit)
	fi
	rm -f "$out"
	return 0
}

# Without a middle column a long label may use its width (same layout).
_row() {
	if [[ -z $2 ]]; then
		printf '%-79s %s\n' "$1" "$3"
	else
		printf '%-48s %-30s %s\n' "$1" "$2" "$3"
	fi
}

# E2E_RESULTS_FILE (set by scripts/mutants.sh): one "PASS|FAIL<TAB>label"
# line per test, so that a caller can tell which named tests failed.
_t_record() { [[ -z ${E2E_RESULTS_FILE:-} ]] || printf '%s\t%s\n' "$1" "$2" >>"$E2E_RESULTS_FILE"; }

# expect LABEL WANT MAX_MS WHERE -- NPROBE-ARGS...
#   WANT    probe verdict (connected, refused, timeout, answered, ...),
#           optionally WANT:TEXT that must appear in the probe's line
#   MAX_MS  upper bound on the elapsed time, or - for none
#   WHERE   pod:NAME, peer:NAME or node
# Prints one aligned row: label, what happened, PASS/FAIL.
expect() {
	local label=$1 want=$2 max=$3 where=$4 line kind ms text verdict=PASS
	shift 4
	[[ $1 == -- ]] && shift
	case $where in
	# A failed probe is an answer, not an error: never let set -e see it.
	pod:*) line=$(pod_exec "${where#pod:}" "$NPROBE" "$@" 2>&1) || true ;;
	peer:*) line=$(peer_exec "${where#peer:}" "$NPROBE" "$@" 2>&1) || true ;;
	node) line=$(node_exec "$NPROBE" "$@" 2>&1) || true ;;
	*) echo "expect: bad WHERE $where" >&2 && return 2 ;;
	esac
	line=${line%%$'\n'*}
	read -r kind ms _ <<<"$line"
	if [[ $kind == answered ]]; then
		read -r _ _ ms text <<<"$line"
		text="answered ${text:-nothing}"
	else
		text=$kind
	fi
	case $kind in
	timeout) text="$text after $(printf '%.0f' "$ms") ms" ;;
	connected | refused | unreachable | denied | answered) text="$text in $(printf '%.2f' "$ms") ms" ;;
	*) text=$line ;;
	esac
	[[ $kind == "${want%%:*}" ]] || verdict=FAIL
	[[ $want != *:* || $line == *"${want#*:}"* ]] || verdict=FAIL
	if [[ $max != - && $verdict == PASS ]] && ! awk -v a="$ms" -v b="$max" 'BEGIN{exit !(a <= b)}'; then
		verdict=FAIL
	fi
	if [[ $verdict == PASS ]]; then t_ok; else t_bad; fi
	_row "$label" "$text" "$verdict"
	_t_record "$verdict" "$label"
	[[ $verdict == PASS ]] || echo "    probe said: $line (wanted $want, max $max ms)"
	return 0
}

# t_summary: the one line every e2e script ends with; non-zero on failure.
# E2E_SUMMARY_FILE (set by scripts/run-e2e.sh) gets the same line.
t_summary() {
	printf '%d passed, %d failed\n' "$T_PASS" "$T_FAIL"
	[[ -z ${E2E_SUMMARY_FILE:-} ]] || printf '%d passed, %d failed\n' "$T_PASS" "$T_FAIL" >"$E2E_SUMMARY_FILE"
	((T_FAIL == 0 && T_PASS > 0))
}

# ---- the suites' helpers: conflist variants, direct calls, assertions -------
#
#   conf_variant NAME PYCODE    a variant of pod-network.conflist; prints its path
#   ng_stdin NAME [VERSION [PYCODE]]   our entry's stdin for pod NAME, as libcni builds it
#   ng_call VERB STDIN [VAR=VALUE...]  the real binary, on the node, env + stdin
#   ng_pod_call VERB NAME [STDIN]      ng_call with pod NAME's CNI_* environment
#   ng_error_is CODE TEXT       the last ng_call failed exactly like the spec says
#   world_tables                namespaces of this world that hold our table
#   t_row LABEL TEXT OK [WHY]   one row from a verdict computed by the caller

# conf_variant NAME PYCODE: renders $W_TMP/net.d/NAME.conflist from the world's
# pod-network.conflist after running PYCODE (python) with `c` bound to the
# conflist and `e` to the boxxkite-netguard entry; prints the path.
conf_variant() {
	local out=$W_TMP/net.d/${1:?conf_variant NAME PYCODE}.conflist
	"$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
e = [p for p in c["plugins"] if p["type"] == "boxxkite-netguard"][0]
exec(sys.argv[3])
with open(sys.argv[2], "w") as f:
    json.dump(c, f, indent=1)
' "$W_TMP/net.d/pod-network.conflist" "$out" "${2:-}" || return
	echo "$out"
}

# ng_stdin NAME [VERSION [PYCODE]]: what libcni writes to our plugin's stdin
# for pod NAME (after pod_add): the boxxkite-netguard entry of $(_conflist),
# "name", "cniVersion" (VERSION, else the pod's, else the conflist's),
# "prevResult" (the pod's cached result, its cniVersion set to the same) and
# "runtimeConfig" (the pod's annotations, when the entry has the capability).
# PYCODE may then edit the dict `s` (e.g. 'del s["prevResult"]').
ng_stdin() {
	local name=${1:?ng_stdin NAME} d=$W_TMP/pods/$1
	"$PY" -c '
import json, os, sys
conflist, result, ann_file, ver_file, version, code = sys.argv[1:7]
c = json.load(open(conflist))
e = [p for p in c["plugins"] if p["type"] == "boxxkite-netguard"][0]
if not version and os.path.exists(ver_file):
    version = open(ver_file).read().strip()
version = version or c["cniVersion"]
s = dict(e, name=c["name"], cniVersion=version)
if os.path.exists(result):
    s["prevResult"] = dict(json.load(open(result)), cniVersion=version)
cap = "io.kubernetes.cri.pod-annotations"
if (e.get("capabilities") or {}).get(cap) and os.path.exists(ann_file):
    s["runtimeConfig"] = {cap: json.loads(open(ann_file).read())}
exec(code)
print(json.dumps(s))
' "$(_conflist)" "$d/result" "$d/annotations" "$d/version" "${2:-}" "${3:-}"
}

# _in_node CMD...: CMD in the node's namespace with the world's resolver,
# where a runtime runs its plugins (as _cni does for cnirun.py).
_in_node() {
	# shellcheck disable=SC2016 # $1 and $@ belong to the inner sh
	nsenter --net="$(_ns_path "$W_NODE")" unshare --mount --propagation private \
		sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$W_TMP/resolv.conf" "$@"
}

# ng_call VERB STDIN_FILE [VAR=VALUE...]: runs the real binary as a runtime
# does: CNI_COMMAND=VERB plus the given variables (and PATH) as its whole
# environment, STDIN_FILE on stdin, inside the node's namespace. stdout goes
# to $W_TMP/ng.out, stderr to $W_TMP/ng.err; returns the exit status
# (128+N when a signal killed it).
ng_call() {
	local verb=$1 in=$2
	shift 2
	_in_node env -i PATH="$PATH" CNI_COMMAND="$verb" "$@" "$NG_BIN" \
		<"$in" >"$W_TMP/ng.out" 2>"$W_TMP/ng.err"
}

# ng_pod_env NAME: pod NAME's CNI_* variables, one VAR=VALUE per line.
ng_pod_env() {
	printf '%s\n' "CNI_CONTAINERID=$(_pod_var "$1" id)" "CNI_NETNS=$(_ns_path "$(pod_ns "$1")")" \
		"CNI_IFNAME=eth0" "CNI_ARGS=$(_pod_var "$1" args)" "CNI_PATH=$W_TMP/bin"
}

# ng_pod_call VERB NAME [STDIN_FILE]: ng_call with pod NAME's environment and
# (by default) ng_stdin NAME.
ng_pod_call() {
	local verb=$1 name=$2 in=${3:-} vars
	if [[ -z $in ]]; then
		in=$W_TMP/pods/$name/stdin.json
		ng_stdin "$name" >"$in" || return
	fi
	mapfile -t vars < <(ng_pod_env "$name")
	ng_call "$verb" "$in" "${vars[@]}"
}

# ng_error_is CODE TEXT [RC]: the last ng_call (exit status RC, default $?)
# ended as the spec says an error ends: exit status 1 (not a signal),
# stdout exactly one line holding the error object, its code CODE and its
# msg containing TEXT. Says what differs otherwise.
ng_error_is() {
	local code=$1 text=$2 rc=${3:-$?}
	if ((rc != 1)); then
		echo "exit status $rc, want 1 (stdout: $(head -c 300 "$W_TMP/ng.out"))"
		head -c 300 "$W_TMP/ng.err"
		return 1
	fi
	"$PY" -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
code, text = int(sys.argv[2]), sys.argv[3]
lines = raw.split(b"\n")
if len(lines) != 2 or lines[1] != b"":
    sys.exit("stdout is not exactly one line: %r" % raw[:300])
try:
    e = json.loads(lines[0])
except ValueError:
    sys.exit("stdout is not JSON: %r" % raw[:300])
if not isinstance(e, dict) or set(e) - {"cniVersion", "code", "msg", "details"}:
    sys.exit("not an error object: %r" % raw[:300])
if e.get("code") != code:
    sys.exit("code %r, want %d: %s" % (e.get("code"), code, e.get("msg")))
if text not in e.get("msg", ""):
    sys.exit("msg %r does not contain %r" % (e.get("msg"), text))
print("code %d: %s" % (code, e["msg"][:200]))
' "$W_TMP/ng.out" "$code" "$text"
}

# world_tables: every namespace of this world holding an inet
# boxxkite_netguard table, one name per line (nothing: none anywhere).
world_tables() {
	local ns
	while read -r ns; do
		[[ -e /run/netns/$ns ]] || continue
		{ nsenter --net="/run/netns/$ns" nft list table inet boxxkite_netguard ||
			nsenter --net="/run/netns/$ns" nft list table netdev boxxkite_netguard; } >/dev/null 2>&1 &&
			echo "$ns"
	done < <(sort -u "$W_TMP/netns")
	return 0
}

# t_row LABEL TEXT OK [WHY]: counts and prints one row for a verdict the
# caller computed (OK = 0 passes); WHY is shown on failure.
t_row() {
	if [[ $3 == 0 ]]; then
		t_ok
		_row "$1" "$2" PASS
		_t_record PASS "$1"
	else
		t_bad
		_row "$1" "$2" FAIL
		_t_record FAIL "$1"
		[[ -z ${4:-} ]] || printf '%s\n' "$4" | sed 's/^/    | /' | head -20 || true
	fi
	return 0
}

# log_has POD VERB DECISION [REASON_TEXT]: the decision log has a line for pod
# POD with that verb and decision (and a reason containing REASON_TEXT);
# prints the line found, or the pod's lines when there is none.
log_has() {
	"$PY" -c '
import json, sys
pod, verb, decision, text = sys.argv[2:6]
mine = []
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        sys.exit("not JSON: %r" % line)
    if o.get("pod_name") != pod:
        continue
    mine.append(line.strip())
    if o.get("verb") == verb and o.get("decision") == decision and text in o.get("reason", ""):
        print(line.strip())
        sys.exit(0)
print("\n".join(mine[-5:]) or "no line for pod %s" % pod)
sys.exit(1)
' "$W_TMP/netguard.log" "$1" "$2" "$3" "${4:-}"
}

# chain_error_is CODE TEXT OUT: OUT (what pod_add/pod_check/pod_del printed)
# is boxxkite-netguard's error object with code CODE and TEXT in its msg.
chain_error_is() {
	"$PY" -c '
import json, sys
code, text, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    e = json.loads(out)
except ValueError:
    sys.exit("output is not JSON: %r" % out[:300])
if not isinstance(e, dict) or e.get("plugin") != "boxxkite-netguard" or "ips" in e:
    sys.exit("did not fail in boxxkite-netguard: %s" % out[:300])
if e.get("code") != code:
    sys.exit("code %r, want %d: %s" % (e.get("code"), code, e.get("msg")))
if text not in e.get("msg", ""):
    sys.exit("msg does not name %r: %s" % (text, e.get("msg")))
print("code %d: %s" % (code, e["msg"]))
' "$1" "$2" "$3"
}

# kill_tree PID: stops PID (so it starts nothing more), TERMs its
# descendants (deepest first) and then PID itself, all by process id. For a
# script's own background jobs, on a signal, before world_down.
kill_tree() {
	local c
	kill -STOP "$1" 2>/dev/null || return 0
	# shellcheck disable=SC2013 # the file is a list of PIDs, words
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do kill_tree "$c"; done
	kill -TERM "$1" 2>/dev/null
	kill -CONT "$1" 2>/dev/null
	return 0
}

# world_sweep: after world_down, deletes any namespace still named after this
# world ($W_ID-*: created by a job that was cut off while world_down ran).
world_sweep() {
	local ns
	[[ -n ${W_ID:-} ]] || return 0
	for ns in $(ip netns list | awk '{print $1}' | grep "^$W_ID-"); do
		ip netns delete "$ns" 2>/dev/null
	done
	return 0
}
