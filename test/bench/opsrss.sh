#!/usr/bin/env bash
# bench/opsrss.sh: what the agent's ops thread (drift watch, metrics) holds
# per enforced pod: one real pod namespace in a throw-away node namespace,
# its pod record copied N-1 times (each copy is watched: two sockets,
# the compiled policy, its view), the agent's RSS before and after. Prints
# figures; not a pass/fail test. Root; everything in namespaces it makes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[[ $(id -u) -eq 0 ]] || { echo "bench/opsrss.sh: needs root" >&2 && exit 1; }
BIN=${NG_BIN:-$PWD/build/boxxkite-netguard} N=${N:-1000}
T=$(mktemp -d /tmp/ngrss.XXXX); NODE=ngrss-node-$$; POD=ngrss-pod-$$; APID=''
cleanup() {
	[[ -n $APID ]] && kill "$APID" 2>/dev/null && wait "$APID" 2>/dev/null
	ip netns del "$POD" 2>/dev/null
	ip netns del "$NODE" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ip netns add "$NODE"
ip netns add "$POD"
ip -n "$POD" link set lo up
ip -n "$POD" link add eth0 type veth peer name eth0p
mkdir -p "$T/state"
cat >"$T/c.json" <<JSON
{"cniVersion":"1.0.0","name":"vg","type":"boxxkite-netguard","stateDir":"$T/state","capabilities":{"io.kubernetes.cri.pod-annotations":true},
 "enforce":{"namespaces":["sandboxes"],"optInAnnotation":true},"dns":{"servers":["10.96.0.10"]},
 "egress":{"names":"resolve","allow":["10.20.0.0/16:443"],"envelope":["10.0.0.0/8:443"]},"hostMirror":"off",
 "ingress":{"ports":[8080],"sources":["10.244.0.0/16"],"allowNode":true},
 "prevResult":{"cniVersion":"1.0.0","ips":[{"address":"10.244.1.5/24","gateway":"10.244.1.1"}]}}
JSON
nsenter --net="/run/netns/$NODE" env CNI_COMMAND=ADD CNI_CONTAINERID=c0 CNI_IFNAME=eth0 CNI_NETNS="/run/netns/$POD" \
	CNI_ARGS="K8S_POD_NAMESPACE=sandboxes;K8S_POD_NAME=p0" "$BIN" <"$T/c.json" >/dev/null 2>&1
nsenter --net="/run/netns/$NODE" "$BIN" agent --state-dir "$T/state" --listen 127.0.0.1:9617 2>"$T/agent.log" &
APID=$!
sleep 1.5
r0=$(awk '/VmRSS/{print $2}' "/proc/$APID/status")
/usr/bin/python3 - "$T/state/pods/c0@eth0.json" "$N" <<'PY'
import json, os, sys
src, n = sys.argv[1], int(sys.argv[2])
r = json.load(open(src)); d = os.path.dirname(src)
for i in range(1, n):
    r["pod"]["containerId"] = "c%d" % i; r["key"] = "c%d@eth0" % i; r["pod"]["name"] = "p%d" % i
    tmp = os.path.join(d, ".t%d" % i); json.dump(r, open(tmp, "w")); os.rename(tmp, os.path.join(d, r["key"] + ".json"))
PY
sleep 8
r1=$(awk '/VmRSS/{print $2}' "/proc/$APID/status")
fds=$(find "/proc/$APID/fd" -mindepth 1 -maxdepth 1 | wc -l)
echo "agent RSS: $r0 KiB with 1 watched pod, $r1 KiB with $N (fds $fds); per pod $(( (r1 - r0) / (N - 1) )) KiB"
echo "pods watched: $(grep -c '"event":"pod_watched"' "$T/agent.log" || true)"
