#!/usr/bin/env bash
# make valgrind: the plugin under memcheck on every verb and its error paths.
# A case passes when valgrind reports 0 errors and 0 bytes definitely lost
# (--errors-for-leak-kinds=definite makes a definite leak an error) and the
# plugin exits as expected. As root, ADD/CHECK/DEL/verify/stats also run
# against a real pod namespace the script creates (and removes), and the node
# agent runs under memcheck too, in a node namespace of the script's own,
# serving a learn-mode pod through ADD, CHECK, status and DEL until SIGTERM.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

BIN=${NG_BIN:-build/boxxkite-netguard}
tmp=$(mktemp -d /tmp/ng-valgrind.XXXXXX)
netns="" nodens="" agent_pid=""
passed=0 failed=0
cleanup() {
	[ -n "$agent_pid" ] && kill -KILL "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	[ -n "$netns" ] && ip netns del "$netns" 2>/dev/null
	[ -n "$nodens" ] && ip netns del "$nodens" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

VG=(valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite
	--show-leak-kinds=definite --track-origins=yes)

# conf [extra json members]: the plugin entry on stdin, with prevResult;
# NAMES: egress.names ("resolve" unless said; "learn" needs the agent, and
# adds a name entry for it to serve).
conf() {
	cat <<JSON
{"cniVersion":"1.0.0","name":"vg","type":"boxxkite-netguard",
 "capabilities":{"io.kubernetes.cri.pod-annotations":true},"logFile":"$tmp/log",
 "enforce":{"namespaces":["sandboxes"],"optInAnnotation":true},
 "dns":{"servers":["10.96.0.10"]},
 "egress":{"allow":["10.20.0.0/16:443","udp://[fd00:20::/64]:53"${NAMES:+,\"storage.vg.test:443\"}],
           "envelope":["10.0.0.0/8:443"],"names":"${NAMES:-resolve}"},
 "ingress":{"ports":[8080],"sources":["10.244.0.0/16"],"allowNode":true},
 "log":{"nflogGroup":5},"hostMirror":"off"${1:-},
 "prevResult":{"cniVersion":"1.0.0","ips":[{"address":"10.244.1.5/24","gateway":"10.244.1.1"}]}}
JSON
}

# (hostMirror "off": the pod namespace here has its veth peer inside it, no
# per-pod device on the node; the host side is tested in e2e/hostside.sh.)
# case NAME EXPECTED_STATUS VERB NETNS STDIN-FILE [ARGS...]; with IN_NS set,
# the plugin itself runs in that (scratch) namespace.
run() {
	local name=$1 want=$2 verb=$3 ns=$4 input=$5 rc wrap=()
	shift 5
	[ -n "${IN_NS:-}" ] && wrap=(ip netns exec "$IN_NS")
	if [ "$verb" = cli ]; then
		"${VG[@]}" "$BIN" "$@" <"$input" >"$tmp/out" 2>"$tmp/err"
	else
		"${wrap[@]}" env CNI_COMMAND="$verb" CNI_CONTAINERID=vg0123456789 CNI_IFNAME=eth0 CNI_NETNS="$ns" \
			CNI_ARGS="IgnoreUnknown=1;K8S_POD_NAMESPACE=${K8S_NS:-sandboxes};K8S_POD_NAME=vg" \
			"${VG[@]}" "$BIN" <"$input" >"$tmp/out" 2>"$tmp/err"
	fi
	rc=$?
	if [ $rc -eq 99 ] || [ $rc -ne "$want" ]; then
		failed=$((failed + 1))
		printf '%-50s FAIL (exit %d, want %d)\n' "$name" "$rc" "$want"
		grep -v '^{"ts"' "$tmp/err" | head -30
	else
		passed=$((passed + 1))
		printf '%-50s ok\n' "$name"
	fi
}

conf >"$tmp/good"
conf ',"egres":{}' >"$tmp/unknown"
printf '{"cniVersion":' >"$tmp/truncated"
printf '{"cniVersion":"1.0.0"}' >"$tmp/version"
: >"$tmp/empty"
sed 's/"prevResult".*//; s/,$//' "$tmp/good" | head -c -1 >"$tmp/noprev"
echo '}' >>"$tmp/noprev"
conf ',"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"netguard.boxxkite.io/egress":"11.0.0.1:443"}}' >"$tmp/outside"
conf ',"runtimeConfig":{"io.kubernetes.cri.pod-annotations":{"netguard.boxxkite.io/egres":"x"}}' >"$tmp/badann"
touch "$tmp/notns"

run "VERSION" 0 VERSION "" "$tmp/version"
run "VERSION, empty stdin" 0 VERSION "" "$tmp/empty"
run "ADD, truncated JSON (6)" 1 ADD /x "$tmp/truncated"
run "ADD, unknown key (7)" 1 ADD /x "$tmp/unknown"
run "ADD, no prevResult (7)" 1 ADD /x "$tmp/noprev"
run "ADD, grant outside the envelope (100)" 1 ADD /x "$tmp/outside"
run "ADD, unknown annotation (101)" 1 ADD /x "$tmp/badann"
run "ADD, netns is a regular file (112)" 1 ADD "$tmp/notns" "$tmp/good"
# The plugin's own namespace: as root, only ever a scratch one (a regression
# must not firewall the machine); without root nothing can be written anyway.
[ "$(id -u)" -eq 0 ] || run "ADD, netns is the node's own (4)" 1 ADD /proc/self/ns/net "$tmp/good"
K8S_NS=default run "ADD, pod not selected (skipped)" 0 ADD /x "$tmp/good"
run "DEL, empty CNI_NETNS" 0 DEL "" "$tmp/truncated"
run "DEL, netns gone" 0 DEL /nonexistent "$tmp/good"
run "CHECK, netns not a namespace" 1 CHECK "$tmp/notns" "$tmp/good"
run "STATUS" 0 STATUS "" "$tmp/good"
run "STATUS, invalid config" 1 STATUS "" "$tmp/unknown"
run "GC" 0 GC "" "$tmp/good"
run "help" 0 cli "" "$tmp/empty" help
run "verify, bad option" 2 cli "" "$tmp/empty" verify --pid 12x

if [ "$(id -u)" -eq 0 ]; then
	netns=ngvg-$$-$RANDOM
	ip netns add "$netns"
	ip -n "$netns" link set lo up
	# The pod's interface (CNI_IFNAME): the packet-socket guard hooks it.
	ip -n "$netns" link add eth0 type veth peer name eth0p
	p=/run/netns/$netns
	IN_NS=$netns run "ADD, netns is the node's own (4)" 1 ADD /proc/self/ns/net "$tmp/good"
	run "ADD, enforced pod" 0 ADD "$p" "$tmp/good"
	run "ADD again (replace)" 0 ADD "$p" "$tmp/good"
	run "CHECK" 0 CHECK "$p" "$tmp/good"
	# The operating hand-off (decision record, invocation line) and the
	# node's status read back from it and the kernel.
	mkdir -p "$tmp/state"
	conf ",\"stateDir\":\"$tmp/state\"" >"$tmp/state.json"
	run "ADD, stateDir (decision record)" 0 ADD "$p" "$tmp/state.json"
	run "status (no agent: the kernel, now)" 0 cli "" "$tmp/empty" status --state-dir "$tmp/state"
	run "status --json" 0 cli "" "$tmp/empty" status --json --state-dir "$tmp/state"
	ip netns exec "$netns" nft add chain inet boxxkite_netguard extra
	run "CHECK, tampered (111)" 1 CHECK "$p" "$tmp/good"
	run "stats" 0 cli "" "$tmp/empty" stats --netns "$p"
	run "stats --prometheus" 0 cli "" "$tmp/empty" stats --netns "$p" --prometheus
	run "verify (fails: tampered, no routes)" 1 cli "" "$tmp/empty" verify --netns "$p" --config "$tmp/good" --timeout 200
	run "DEL" 0 DEL "$p" "$tmp/good"
	run "DEL again" 0 DEL "$p" "$tmp/good"

	# The node agent under memcheck: its own node namespace (nothing of it
	# in the machine's), its state dir in the temp dir; the plugin runs
	# there too. A learn-mode pod through ADD (a runtime's retries: the
	# agent is many times slower under valgrind than its 3 s pickup
	# bound), CHECK, status from the agent's view, DEL; then SIGTERM, and
	# the agent must exit 0 with no error and no definite leak.
	nodens=ngvgn-$$-$RANDOM
	ip netns add "$nodens"
	ip -n "$nodens" link set lo up
	mkdir -p "$tmp/astate"
	NAMES=learn conf ",\"stateDir\":\"$tmp/astate\"" >"$tmp/learn.json"
	ip netns exec "$nodens" "${VG[@]}" --log-file="$tmp/agent.vg" "$BIN" agent --state-dir "$tmp/astate" \
		--listen 127.0.0.1:9617 2>"$tmp/agent.err" &
	agent_pid=$!
	for _ in $(seq 600); do # a correctness bound (60 s): valgrind's start on a loaded machine
		[ -e "$tmp/astate/agent.lock" ] && ip netns exec "$nodens" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9617' 2>/dev/null && break
		kill -0 "$agent_pid" 2>/dev/null || break
		sleep 0.1
	done
	for try in 1 2 3 4 5; do
		IN_NS=$nodens run "ADD, learn mode, the agent under memcheck (try $try)" 0 ADD "$p" "$tmp/learn.json"
		grep -q '"code":11' "$tmp/out" || break
		failed=$((failed - 1)) # code 11 is "try again": a runtime retries
	done
	IN_NS=$nodens run "CHECK, learn mode" 0 CHECK "$p" "$tmp/learn.json"
	run "status, from the agent" 0 cli "" "$tmp/empty" status --state-dir "$tmp/astate"
	IN_NS=$nodens run "DEL, learn mode" 0 DEL "$p" "$tmp/learn.json"
	kill -TERM "$agent_pid" 2>/dev/null
	rc=0
	wait "$agent_pid" || rc=$?
	agent_pid=""
	# --error-exitcode: any memcheck error or definite leak exits 99.
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		printf '%-50s ok\n' "agent: SIGTERM, exit 0, no error, no definite leak"
	else
		failed=$((failed + 1))
		printf '%-50s FAIL (exit %d)\n' "agent: SIGTERM, exit 0, no error, no definite leak" "$rc"
		head -40 "$tmp/agent.vg" "$tmp/agent.err"
	fi
else
	echo "valgrind: the netns cases are SKIPPED (need root)"
fi

echo "valgrind: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
