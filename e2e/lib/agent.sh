# shellcheck shell=bash
# e2e/lib/agent.sh: the node agent in the world (egress.names "learn"): sourced by e2e/lib.sh (see its header); not a test script.

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
#   forge POD ARGS...        e2e/forgedns.py ARGS in POD (DNS answers the pod
#                            did not get from its resolver), its lines as one
#   agent_start [FLAG...] / agent_ready MS   the agent inside the node's namespace,
#                            state dir $W_TMP/state, /healthz on 127.0.0.1:9617
#                            (/readyz also wants the binary installed and our
#                            entry active: e2e/ops.sh tests it)
# shellcheck disable=SC2034 # used by the scripts that source this file
DNSL=10.96.0.11 AGENT_PID=''
# agent_http ADDR:PORT PATH: the agent's answer (from the node's
# namespace); exit status 0 for 200, 1 otherwise.
agent_http() {
	node_exec "$PY" -c '
import sys, urllib.request, urllib.error
try:
    r = urllib.request.urlopen("http://" + sys.argv[1] + sys.argv[2], timeout=2)
    sys.stdout.write(r.read().decode()); sys.exit(0)
except urllib.error.HTTPError as e:
    sys.stdout.write(e.read().decode()); sys.exit(1)
' "$1" "$2"
}
learn_world() {
	ip -n "$W_ID-dns" addr add "$DNSL/24" dev eth0
	ip -n "$W_ID-storage" route add local 10.21.0.0/16 dev lo
	ip -n "$W_NODE" route add 10.21.0.0/16 via "$STORE4"
	_spawn "$W_ID-storage" echo9443 socat TCP4-LISTEN:9443,reuseaddr,fork,backlog=1024 PIPE
	_spawn "$W_ID-dns" dnsmasq-learn dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--no-resolv --no-hosts --no-poll --user=root --group=root --bind-interfaces \
		--listen-address="$DNSL" --pid-file="$W_TMP/dnsmasq-learn.pid" --local-ttl=1 \
		--addn-hosts="$1" --cname=files.world.test,blob.cdn.test
	poll 30000 node_exec "$NPROBE" udp-dns "$DNSL" "$(awk 'NR==1{print $2}' "$1")" 200 && return 0
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
forge() {
	pod_exec "$1" "$PY" "$E2E_DIR/forgedns.py" "${@:2}" 2>&1 | tr '\n' ' ' || true
}
agent_start() {
	# --cni-conf-dir: none of the world's (no active entry: nothing
	# for live policy to follow; e2e/livepolicy.sh tests that), never the
	# machine's /etc/cni/net.d.
	bg_start nsenter --net="$(_ns_path "$W_NODE")" "$NG_BIN" agent --state-dir "$W_TMP/state" \
		--cni-conf-dir "$W_TMP/agent-conf.d" --listen 127.0.0.1:9617 "$@" 2>>"$W_TMP/log/agent.log"
	# shellcheck disable=SC2034 # read by the sourcing script
	AGENT_PID=$BG_PID
}
agent_ready() { # waits up to $1 ms for /healthz (the agent serves): by the clock, each try
	# given a second (a loaded machine takes longer than 0.2 s to start python and ask)
	local end=$(($(date +%s%N) / 1000000 + $1))
	while (($(date +%s%N) / 1000000 < end)); do
		node_exec "$PY" -c 'import urllib.request,sys; sys.exit(0 if urllib.request.urlopen("http://127.0.0.1:9617/healthz", timeout=1).status == 200 else 1)' 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

