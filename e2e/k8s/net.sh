# shellcheck shell=bash
# shellcheck disable=SC2034 # the addresses are used by the other parts and the tests
# e2e/k8s/net.sh: the cluster's network namespaces and the fake peers around
# the node (sourced by e2e/k8s/cluster.sh, whose variables it uses).
#
#   $KC_NODE  the node: every Kubernetes process, containerd, the pods' bridge
#             cni0 (10.244.0.0/24, made by the bridge plugin), the node IP
#             192.168.249.1 (on its lo), routes to the peers below
#   $KC_DNS   dnsmasq on 192.168.252.2:53, the backend of the kube-dns
#             Service (10.96.0.10), as CoreDNS would be
#   $KC_META  a fake cloud metadata server, 169.254.169.254:80
#   $KC_STOR  storage: 10.20.0.5 and 10.30.0.5, :443 and :80; 10.30.0.6:443
#             an echo server (a connection that stays open until cut)
#   $KC_GW    the node's default gateway, where the world ends: it forwards
#             nothing and has no default route, so a packet for anywhere
#             else dies there (ICMP unreachable). A node needs a default
#             route: a hostNetwork client's connect to a Service IP is
#             routed before kube-proxy's OUTPUT DNAT rewrites it.
#
# Each peer is a veth pair to the node with a route back to the pod range
# and the node IP; the only default route is the node's, to $KC_GW: a
# packet addressed beyond the world never leaves it (and is counted there,
# kc_gw_packets). Nothing is put in the machine's own namespace.

KC_NODE_IP=192.168.249.1
KC_POD_CIDR=10.244.0.0/24
KC_POD_GW=10.244.0.1
KC_CLUSTER_CIDR=10.244.0.0/16
KC_SVC_CIDR=10.96.0.0/16
KC_API_SVC_IP=10.96.0.1
KC_DNS_SVC_IP=10.96.0.10
KC_DNS_IP=192.168.252.2
KC_META_IP=169.254.169.254
KC_STOR_IP=10.20.0.5
KC_STOR_GRANT_IP=10.30.0.5
KC_STOR_ECHO_IP=10.30.0.6

# kc_in NS CMD...: CMD in network namespace NS (nsenter, not `ip netns exec`,
# which remounts /sys and hides the cgroup tree).
kc_in() {
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" -- "$@"
}

# _kc_peer NS IFACE NODE-ADDR PEER-ADDR EXTRA-ADDR...: a veth between the
# node and NS on a /30, the extra addresses on the peer's side routed to it.
_kc_peer() {
	local ns=$1 ifc=$2 here=$3 there=$4 a
	shift 4
	ip -n "$KC_NODE" link add "$ifc" type veth peer name eth0 netns "$ns" &&
		ip -n "$KC_NODE" addr add "$here/30" dev "$ifc" &&
		ip -n "$KC_NODE" link set "$ifc" up &&
		ip -n "$ns" addr add "$there/30" dev eth0 &&
		ip -n "$ns" link set eth0 up &&
		ip -n "$ns" route add "$KC_CLUSTER_CIDR" via "$here" &&
		ip -n "$ns" route add "$KC_NODE_IP/32" via "$here" || return 1
	for a in "$@"; do
		ip -n "$ns" addr add "$a/32" dev eth0 &&
			ip -n "$KC_NODE" route add "$a/32" via "$there" || return 1
	done
}

# _kc_serve NS NAME CMD...: a server in NS, in the background, by PID.
# `ip netns exec` execs CMD, so $! is the server's own PID.
_kc_serve() {
	local ns=$1 name=$2
	shift 2
	ip netns exec "$ns" "$@" >>"$KC_LOGS/$name.log" 2>&1 &
	KC_BG+=($!)
}

# _kc_http MARKER: the shell command of one HTTP answer (socat SYSTEM:).
_kc_http() { echo "cat $KC_T/http/$1; timeout 1 cat >/dev/null; exit 0"; }

kc_net_up() {
	local ns
	for ns in "${KC_NSES[@]}"; do
		ip netns add "$ns" && ip -n "$ns" link set lo up || return 1
	done
	# The node IP on the node's loopback: local to every process of the node,
	# routed to by the peers; this kernel has no dummy device (no modules).
	ip -n "$KC_NODE" addr add "$KC_NODE_IP/32" dev lo || return 1
	_kc_peer "$KC_DNS" vdns 192.168.252.1 "$KC_DNS_IP" || return 1
	_kc_peer "$KC_META" vmeta 192.168.250.1 192.168.250.2 "$KC_META_IP" || return 1
	_kc_peer "$KC_STOR" vstor 192.168.251.1 192.168.251.2 "$KC_STOR_IP" "$KC_STOR_GRANT_IP" "$KC_STOR_ECHO_IP" ||
		return 1
	_kc_peer "$KC_GW" vgw 192.168.253.1 192.168.253.2 &&
		ip -n "$KC_NODE" route add default via 192.168.253.2 &&
		kc_in "$KC_GW" sysctl -qw net.ipv4.ip_forward=0 || return 1
	# It counts what it is sent: a test can show that nothing in the world
	# addressed a packet to the outside (kc_gw_packets).
	kc_in "$KC_GW" nft -f - <<'EOF' || return 1
table ip dead_end {
	chain seen {
		type filter hook prerouting priority 0; policy accept;
		counter
	}
}
EOF
	kc_in "$KC_NODE" sysctl -qw net.ipv4.ip_forward=1 || return 1

	# DNS: the cluster's names the tests use, nothing upstream, no files.
	_kc_serve "$KC_DNS" dnsmasq dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--no-resolv --no-hosts --no-poll --user=root --group=root \
		--bind-interfaces --listen-address="$KC_DNS_IP" --pid-file="$KC_T/dnsmasq.pid" \
		--log-facility="$KC_LOGS/dnsmasq-queries.log" --log-queries \
		--host-record="kubernetes.default.svc.cluster.local,$KC_API_SVC_IP" \
		--host-record="storage.test,$KC_STOR_IP" --host-record="granted.test,$KC_STOR_GRANT_IP" \
		--host-record="metadata.google.internal,$KC_META_IP"
	# HTTP/1.0 answers, so that curl and nc both read the marker word. The
	# answer is written at once (nc sends nothing), then what the client
	# sends is read for up to a second: a server that exits before the
	# request arrives makes socat fail writing it (EPIPE) and close before
	# the answer is out, and curl reads "Empty reply" (27 of 60 here).
	local l=reuseaddr,fork w
	mkdir -p "$KC_T/http" || return 1
	for w in metadata-ok storage-ok storage-80; do
		printf 'HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s\n' $((${#w} + 1)) "$w" >"$KC_T/http/$w"
	done
	_kc_serve "$KC_META" metadata socat "TCP-LISTEN:80,bind=$KC_META_IP,$l" SYSTEM:"$(_kc_http metadata-ok)"
	# :443 by address: the echo server has 10.30.0.6:443 (a listener on
	# the wildcard address would take its connections).
	_kc_serve "$KC_STOR" storage socat "TCP-LISTEN:443,bind=$KC_STOR_IP,$l" SYSTEM:"$(_kc_http storage-ok)"
	_kc_serve "$KC_STOR" storage socat "TCP-LISTEN:443,bind=$KC_STOR_GRANT_IP,$l" SYSTEM:"$(_kc_http storage-ok)"
	_kc_serve "$KC_STOR" echo socat "TCP-LISTEN:443,bind=$KC_STOR_ECHO_IP,$l" EXEC:cat
	_kc_serve "$KC_STOR" storage socat "TCP-LISTEN:80,$l" SYSTEM:"$(_kc_http storage-80)"
	kc_peers_answer
}

# kc_node_get HOST PORT: what a plain TCP client on the node reads (it
# sends nothing and half-closes at once: the server need not wait).
kc_node_get() { kc_in "$KC_NODE" socat -T 2 - "TCP:$1:$2,connect-timeout=2" </dev/null 2>/dev/null; }

# kc_node_echo: what the echo server sends back of a line from the node.
kc_node_echo() { echo echo-ok | kc_in "$KC_NODE" socat -T 2 - "TCP:$KC_STOR_ECHO_IP:443,connect-timeout=2" 2>/dev/null; }

# kc_peers_answer: every fake peer answers from the node, within 60 s (a
# correctness bound: they answer in ms on an idle machine).
kc_peers_answer() {
	local t0=$SECONDS
	while ((SECONDS - t0 < 60)); do
		case "$(kc_node_get "$KC_META_IP" 80)$(kc_node_get "$KC_STOR_IP" 443)$(kc_node_echo)" in
		*metadata-ok*storage-ok*echo-ok*) kc_in "$KC_NODE" busybox nslookup storage.test "$KC_DNS_IP" 2>/dev/null |
			grep -q "^Address: $KC_STOR_IP\$" && return 0 ;;
		esac
		sleep 0.1
	done
	return 1
}

# kc_gw_packets: how many IPv4 packets reached the dead-end gateway.
kc_gw_packets() { kc_in "$KC_GW" nft list chain ip dead_end seen | sed -n 's/.*counter packets \([0-9]*\).*/\1/p'; }

kc_net_down() {
	local ns
	for ns in "${KC_NSES[@]}"; do
		[ -e "/run/netns/$ns" ] && ip netns del "$ns" 2>/dev/null
	done
	return 0
}
