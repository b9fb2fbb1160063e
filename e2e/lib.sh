# shellcheck shell=bash
# e2e/lib.sh: the network-namespace test world. Source it, then:
#
#   world_up PREFIX          build the world (namespaces named PREFIX<id>-*)
#   pod_add NAME [K8S_NS] [ANNOTATIONS_JSON] [CNI_VERSION]
#   pod_ns_as_runtime NAME   (before pod_add) the namespace with DAD on, as a runtime's
#   pod_check NAME / pod_del NAME [--no-netns]
#   pod_exec NAME CMD... / peer_exec PEER CMD... / node_exec CMD...
#   pod_listen NAME PORT     a sidecar listener inside the pod
#   pod_netns_path NAME / pod_default_route NAME / bg_start CMD... / bg_stop PID
#   world_public FILE        a copy a process without privileges can read
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
# The machine's own state dir is never written by a test (see the script):
# the sourcing script runs again under it, once.
[[ -n ${NG_STATE_SHADOWED:-} ]] || exec "$REPO_DIR/scripts/shadow-state.sh" /bin/bash "$0" "$@"
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

W_ID='' W_TMP='' W_PUB='' W_NODE='' _NS_INODES=''
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
	[[ $W_PUB == /tmp/"$W_ID".* ]] && rm -rf "$W_PUB"
	[[ $W_TMP == /tmp/"$W_ID".* ]] && rm -rf "$W_TMP"
	W_TMP='' W_PUB=''
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
	local target
	# 30 s each: a correctness bound (a service starting on a loaded
	# machine), not a speed; a working world answers in milliseconds.
	for target in "tcp $MD4 80" "tcp $MD6 80" "tcp $STORE4 443" "tcp $STORE6 8443" \
		"tcp $FORBID4 443" "udp-dns $DNS4 $STORE_NAME" "tcp-dns $DNS6 $STORE_NAME"; do
		# shellcheck disable=SC2086 # target is a word list on purpose
		poll 30000 node_exec "$NPROBE" $target 200 ||
			{ echo "world_up: service not answering: $target" >&2 && return 1; }
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
	W_PUB=$(mktemp -d "/tmp/$W_ID.pub.XXXXXX")
	chmod 0755 "$W_PUB"
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

# world_public FILE: prints the path of a copy of FILE that any user can
# read (and run, if FILE is executable), in a 0755 directory of the world's
# own. A process that drops to uid 65534 cannot open a file of the clone
# when the clone lives under a directory only root may enter (/root, a
# 0700 mktemp -d): such a process gets the copy, never the original.
world_public() {
	local f=${1:?world_public FILE} mode=0644
	[[ -x $f ]] && mode=0755
	install -m "$mode" "$f" "$W_PUB/${f##*/}" && echo "$W_PUB/${f##*/}"
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

# pod_ns_as_runtime NAME: NAME's namespace made as a container runtime makes
# one, before pod_add: duplicate address detection on (the world's own
# namespaces turn it off, for speed), so the pod's link comes up as a real
# pod's does (link-local address tentative for a second or two, the
# kernel's MLD reports from :: meanwhile).
pod_ns_as_runtime() {
	local ns
	ns=$(pod_ns "${1:?pod_ns_as_runtime NAME}")
	_netns_add "$ns"
	_ns_sysctl "$ns" net.ipv6.conf.all.accept_dad=1
	_ns_sysctl "$ns" net.ipv6.conf.default.accept_dad=1
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
	poll 30000 pod_exec "$1" "$NPROBE" tcp ::1 "$2" 200 && return 0
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


# The rest of the library, by topic (e2e/lib/ holds no test script).
# shellcheck source=e2e/lib/frames.sh
source "$E2E_DIR/lib/frames.sh"
# shellcheck source=e2e/lib/agent.sh
source "$E2E_DIR/lib/agent.sh"
# shellcheck source=e2e/lib/assert.sh
source "$E2E_DIR/lib/assert.sh"
# shellcheck source=e2e/lib/calls.sh
source "$E2E_DIR/lib/calls.sh"
