#!/usr/bin/env bash
# e2e/k8s/deploy.sh (root): deploy/ applied for real on the single-node
# cluster of e2e/k8s/cluster.sh, and the seed's checks against a sandbox
# pod, one row per check; ends with "N passed, N failed".
#
#  1. The image deploy/Dockerfile describes, from the static binary (make
#     static), imported into containerd; the node born tainted.
#  2. `kubectl apply -k` of deploy/ through e2e/k8s/overlay/ (the node's CNI
#     dirs, no pulls; then the test world's entry): the shipped entry is
#     refused; the installer merges the entry after the bridge, removes the
#     taint, the agent goes Ready through its probes.
#  3. The seed's sandbox pod (e2e/k8s/sandbox.yaml) and its checks: layer one
#     (an exec in an empty network namespace: `unshare -n`, then nsenter into
#     the container) fails fast; layer two (`kubectl exec -c sidecar -- curl
#     -m 3 http://169.254.169.254/`) is refused; storage (by name, learned by
#     the agent) and the grant reach their listeners, a forbidden host does
#     not; the kubelet's probes pass (allowNode); the gateway reaches :8080, a
#     stranger does not; a pod of another namespace is untouched; `verify`,
#     run as the README says, passes; `kubectl delete pod` leaves nothing.
#     Per-session grants (issue 25, deploygrants.sh and deployapi.sh): a
#     warm pod with the readiness gate, grants annotated and withdrawn (a
#     live connection cut), refused outside the envelope, drift (not Ready
#     until repaired), kube-apiserver stopped (nothing widens) and back
#     (caught up).
#  4. The uninstall path of deploy/README.md: the node as before.
#  5. The control: the same checks with the plugin out of the chain connect.
#  6. deploy/helm/: renders what the kustomizations render; installed and
#     uninstalled in this cluster (deployhelm.sh).
#
#   sudo e2e/k8s/deploy.sh              # after make static (make e2e-k8s does both)
#   K8S_BIN=DIR NG_STATIC=FILE KEEP=1 e2e/k8s/deploy.sh
# Checks given to t_check as `eval '...'` are single-quoted on purpose (they
# expand when the row runs); `timed VAR` sets VAR_rc, VAR_ms, VAR_out.
# shellcheck disable=SC2016,SC2154,SC2034
set -u
export LC_ALL=C

HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=e2e/lib/assert.sh
. "$HERE/../lib/assert.sh"
# shellcheck source=e2e/k8s/cluster.sh
. "$HERE/cluster.sh"
# shellcheck source=e2e/k8s/deployfns.sh
. "$HERE/deployfns.sh"
# shellcheck source=e2e/k8s/deployhelm.sh
. "$HERE/deployhelm.sh"
# shellcheck source=e2e/k8s/deploygrants.sh
. "$HERE/deploygrants.sh"
# shellcheck source=e2e/k8s/deployapi.sh
. "$HERE/deployapi.sh"
T_PASS=0
T_FAIL=0
T_START=$(kc_ms)
NG_STATIC=${NG_STATIC:-$KC_ROOT/build/static/boxxkite-netguard}
DP_TAINT=netguard.boxxkite.io/not-ready
SB=boxxkite-sandboxes
OV=$HERE/overlay
GRANT='{"netguard.boxxkite.io/egress":"tcp://10.30.0.5:443"}'

need() {
	local missing="" c
	[ "$(id -u)" = 0 ] || missing=" root"
	for c in containerd ctr runc nsenter unshare ip nft socat dnsmasq busybox openssl curl ldd iptables \
		"${CC:-cc}" "$DP_PY"; do
		command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	[ -x "$NG_STATIC" ] || missing="$missing $NG_STATIC(make static)"
	[ -z "$missing" ] || { echo "missing:$missing"; return 1; }
}
t_check "prerequisites: root, containerd, CNI plugins, curl, the static binary (make e2e-k8s builds it)" need
[ "$T_FAIL" = 0 ] || { t_summary; exit 1; }

# --- the machine, before: nothing here may change it ---------------------------
root_netns() { { ip -o addr; ip -o route; nft list ruleset; } 2>&1 | sha256sum; }
# The machine's own CNI dirs: the installer, the agent and the kubelet must
# never write there (the overlay points them elsewhere).
machine_dirs() {
	local d
	for d in /etc/cni/net.d /opt/cni/bin; do
		if [ -e "$d" ]; then find "$d" -maxdepth 1 -printf '%p %s %m %T@\n' | sort; else echo "$d absent"; fi
	done | sha256sum
}
# The plugin's default stateDir and log on the machine are not compared
# whole: other suites write there (a config that does not parse falls back
# to the default stateDir, in whatever mount namespace the plugin runs),
# and on a shared machine they run now. What shows that ours never reach
# them: the node's /run and /var/log are tmpfs of its own (checked while
# the cluster is up), and nothing written there since the start names a
# pod of this cluster (its records and decision lines name the pod).
node_tmpfs_own() {
	local d
	for d in /run /var/log; do
		if [ "$(stat -c %d "$(nodef "$d")")" = "$(stat -c %d "$d")" ] || [ "$(stat -f -c %T "$(nodef "$d")")" != tmpfs ]; then
			echo "the node's $d is not a tmpfs of its own" && return 1
		fi
	done
}
ours_on_machine() {
	find /run/boxxkite-netguard /var/log/boxxkite-netguard.log -type f -newer "$W_TMP/start" \
		-exec grep -l -e boxxkite-sandboxes -e '"outsider"' {} + 2>/dev/null | grep .
}
ROOT_BEFORE=$(root_netns)
DIRS_BEFORE=$(machine_dirs)

kc_init || exit 1
W_TMP=$(mktemp -d /tmp/ngk-deploy.XXXXXX)
touch "$W_TMP/start"
# l1_stop: the layer-one exec (the child first: nsenter does not pass the
# signal on).
l1_stop() {
	[ -n "${L1_PID:-}" ] || return 0
	kc_stop_pid "$(l1_child)"
	kc_stop_pid "$L1_PID"
	L1_PID=
}
dp_exit() {
	l1_stop
	dp_grants_stop
	kc_down
	rm -rf "$W_TMP"
}
interrupted() {
	dp_exit
	t_bad
	_row "interrupted ($1): cluster removed" "" FAIL
	t_summary
}
trap 'dp_exit >&"$KC_OUT" 2>&1' EXIT
trap 'interrupted SIGINT >&"$KC_OUT" 2>&1; exit 130' INT
trap 'interrupted SIGTERM >&"$KC_OUT" 2>&1; exit 143' TERM
kc_say "e2e-k8s deploy: id $KC_ID, temp $KC_T"

K8S_BIN=${K8S_BIN:-$("$HERE/build.sh")} || { t_check_not "binaries built (e2e/k8s/build.sh)" true; t_summary; exit 1; }

# The images the rendered manifests name: ours is built from the Dockerfile,
# the others (kubectl, pause) are names for the cluster's one image.
# normalise REF: as the CRI resolves a short name (docker.io/library/...).
normalise() {
	case $1 in
	*/*) case ${1%%/*} in *.* | *:* | localhost) echo "$1" ;; *) echo "docker.io/$1" ;; esac ;;
	*) echo "docker.io/library/$1" ;;
	esac
}
for o in install uninstall; do "$K8S_BIN/kubectl" kustomize "$OV/$o" 2>/dev/null; done >"$W_TMP/rendered.yaml"
OUR_IMAGE="" OTHER_IMAGES=""
for ref in $(sed -n 's/^[ -]*image: *//p' "$W_TMP/rendered.yaml" | tr -d '"' | sort -u); do
	case ${ref%:*} in
	*boxxkite-netguard) OUR_IMAGE=$(normalise "$ref") ;;
	*) OTHER_IMAGES="$OTHER_IMAGES $(normalise "$ref")" ;;
	esac
done
t_check "the overlays render; they name our image ($OUR_IMAGE) and${OTHER_IMAGES}" test -n "$OUR_IMAGE"

if KC_NODE_TAINT=$DP_TAINT:NoSchedule KC_NETNS_UNDER_STATE=false KC_IMAGE_TAGS=$OTHER_IMAGES kc_up; then
	t_check "cluster up, node born with the $DP_TAINT taint: Ready in $KC_READY_MS ms" has "$DP_TAINT" node_taints
else
	t_check_not "cluster up (failed at: ${KC_FAILED:-?})" true
	kc_dead_logs
	t_summary
	exit 1
fi
t_check "the node's /run and /var/log are tmpfs of its own (the plugin's stateDir and log, the agent's: never the machine's)" \
	node_tmpfs_own
t_check "the image deploy/Dockerfile describes (FROM scratch + the static binary), imported as $OUR_IMAGE" \
	kc_image_dockerfile "$KC_ROOT/deploy/Dockerfile" "$OUR_IMAGE"

# --- before the installer ---------------------------------------------------------
PRIMARY=$KC_NETD/10-bridge.conflist
cp -p "$PRIMARY" "$W_TMP/primary.before"
ls -A "$KC_CNI_BIN" >"$W_TMP/bin.before"
node_tables >"$W_TMP/tables.before"
same_inode() { [ "$(stat -c %d:%i "$1")" = "$(stat -c %d:%i "$2")" ]; }
t_check "the node sees the cluster's CNI dirs at $KC_NODE_NETD and $KC_NODE_CNI_BIN (the overlay's hostPaths)" \
	eval 'same_inode "$(nodef "$KC_NODE_NETD")" "$KC_NETD" && same_inode "$(nodef "$KC_NODE_CNI_BIN")" "$KC_CNI_BIN"'

sed "s|@IMAGE@|$KC_IMAGE|" "$HERE/sandbox.yaml" >"$W_TMP/sandbox.yaml"
sed "s|@IMAGE@|$KC_IMAGE|" "$HERE/outsider.yaml" >"$W_TMP/outsider.yaml"
k apply -f "$W_TMP/sandbox.yaml" >/dev/null
unschedulable() { pod_field "$SB" sandbox '{.status.conditions[?(@.type=="PodScheduled")].reason}' | grep -qx Unschedulable; }
t_check "a sandbox pod created before the installer stays Pending (Unschedulable: the taint)" \
	eval 'kc_wait 30 unschedulable && pod_phase_is "$SB" sandbox Pending'

# deploy/network-policy.yaml: refused by the apiserver as shipped (its
# CHANGEME storage CIDR), accepted once filled in; the bridge ignores it.
t_check_not "deploy/network-policy.yaml as shipped is refused by the apiserver (the CHANGEME CIDR)" \
	k apply --dry-run=server -f "$KC_ROOT/deploy/network-policy.yaml"
sed 's|cidr: CHANGEME-storage-cidr|cidr: 10.20.0.0/16|' "$KC_ROOT/deploy/network-policy.yaml" >"$W_TMP/np.yaml"
t_check "deploy/network-policy.yaml with the storage CIDR filled in: applied" k apply -f "$W_TMP/np.yaml"
t_check "deploy/network-policy-permissive-optin.yaml: accepted by the apiserver (server dry run; opt-in only)" \
	k apply --dry-run=server -f "$KC_ROOT/deploy/network-policy-permissive-optin.yaml"

# --- the installer ------------------------------------------------------------------
ds_pod() { k -n boxxkite-netguard get pods -l app.kubernetes.io/name=boxxkite-netguard -o 'jsonpath={.items[0].metadata.name}' 2>/dev/null; }
install_refused() { k -n boxxkite-netguard logs "$(ds_pod)" -c install 2>/dev/null | grep -q CHANGEME; }
t_check "apply -k e2e/k8s/overlay/node (deploy/ on the test node, the shipped entry)" k apply -k "$OV/node"
t_check "the shipped entry is refused by the init step (CHANGEME in its log)" kc_wait 90 install_refused
t_check "... nothing written: the primary's conflist unchanged, no binary, the node still tainted" \
	eval 'cmp "$PRIMARY" "$W_TMP/primary.before" && [ ! -e "$KC_CNI_BIN/boxxkite-netguard" ] && node_taints | grep -qw "$DP_TAINT"'

t0=$(kc_ms)
k apply -k "$OV/install" >/dev/null 2>&1
# The pod mounts the ConfigMap as it is when it starts: a new pod now.
k -n boxxkite-netguard delete pod "$(ds_pod)" --wait=false >/dev/null 2>&1
t_check "apply -k e2e/k8s/overlay/install (the test world's entry): DaemonSet rolled out, every container Ready" \
	k -n boxxkite-netguard rollout status ds/boxxkite-netguard --timeout=180s
kc_say "installer ready $(($(kc_ms) - t0)) ms after the apply"
DSP=$(ds_pod)
t_check "the conflist: the entry merged after the primary (bridge portmap boxxkite-netguard)" \
	has "bridge portmap boxxkite-netguard" conflist_plugins "$PRIMARY"
t_check "the primary's bytes saved for uninstall (.boxxkite-netguard.10-bridge.conflist.orig)" \
	cmp "$KC_NETD/.boxxkite-netguard.10-bridge.conflist.orig" "$W_TMP/primary.before"
t_check "the binary in the node's CNI bin dir is the image's (the static build)" cmp "$KC_CNI_BIN/boxxkite-netguard" "$NG_STATIC"
t_check "the installer removed the taint" kc_wait 30 untainted
agent_ready() { [ "$(pod_field boxxkite-netguard "$DSP" '{.status.containerStatuses[?(@.name=="agent")].ready}')" = true ]; }
t_check "the agent container is Ready through its readinessProbe (/readyz), not restarted" \
	eval 'agent_ready && [ "$(pod_field boxxkite-netguard "$DSP" "{.status.containerStatuses[?(@.name==\"agent\")].restartCount}")" = 0 ]'
t_check "/readyz on the node's 127.0.0.1:9617: binary, conflist, agent" \
	has "agent" kc_in "$KC_NODE" curl -sf -m 3 http://127.0.0.1:9617/readyz

# --- the seed's sandbox ---------------------------------------------------------------
k apply -f "$W_TMP/outsider.yaml" >/dev/null
t0=$(kc_ms)
t_check "the early sandbox pod starts once the taint is gone; Ready (its sidecar's probes)" kc_wait 120 pod_ready "$SB" sandbox
kc_say "sandbox Ready $(($(kc_ms) - t0)) ms after the installer"
t_check "decision log: ADD enforced $SB/sandbox" logged ADD enforced "$SB" sandbox
SB_IP=$(pod_field "$SB" sandbox '{.status.podIP}')
SB_PAUSE=$(pause_pid "$SB" sandbox)
t_check "the pod's namespace holds the tables (inet and netdev boxxkite_netguard)" \
	eval 'pod_tables "$SB_PAUSE" | grep -q "inet boxxkite_netguard" && pod_tables "$SB_PAUSE" | grep -q "netdev boxxkite_netguard"'

# Layer one, as the seed's build_k8s_exec_command runs an exec: a new, empty
# network namespace (unshare -n), then into the sandbox container's mount,
# pid, ipc and uts namespaces as its user (nsenter): no interface but a
# loopback that is down, so the connect fails at once.
SBC_PID=$(container_pid "$SB" sandbox sandbox)
layer1() { kc_in "$KC_NODE" unshare -n -- nsenter -t "$SBC_PID" -m -p -i -u -S 65534 -G 65534 -- "$@"; }
timed l1 layer1 curl -m 3 -sSv http://169.254.169.254/
t_check "layer one: curl -m 3 169.254.169.254 from an exec in an empty netns: unreachable in ${l1_ms} ms" \
	failed_fast l1 2000 "Network is unreachable"
# Layer two: the pod's own namespace, the seed's second check, verbatim.
timed base kx "$SB" sandbox sidecar true
timed l2 kx "$SB" sandbox sidecar curl -m 3 -sSv http://169.254.169.254/
t_check "layer two: kubectl exec -c sidecar -- curl -m 3 http://169.254.169.254/: refused in $l2_ms ms (exec alone $base_ms)" \
	refused_fast l2 $((base_ms + 2000))
timed l2s kx "$SB" sandbox sandbox curl -m 3 -sSv http://169.254.169.254/
t_check "... and from the sandbox container: refused in $l2s_ms ms" refused_fast l2s $((base_ms + 2000))
t_check "storage by name (storage.test:443, learned from the pod's DNS answer by the agent): reached" \
	has storage-ok kx "$SB" sandbox sandbox curl -m 5 -sS http://storage.test:443/
t_check "the grant of the pod's annotation (tcp://10.30.0.5:443): reached" \
	has storage-ok kx "$SB" sandbox sidecar curl -m 5 -sS http://10.30.0.5:443/
timed fb kx "$SB" sandbox sandbox curl -m 3 -sSv http://10.20.0.5:80/
t_check "a forbidden destination (10.20.0.5:80, a listener there): refused in $fb_ms ms" refused_fast fb $((base_ms + 2000))
t_check "the kubelet's probes pass from the node (10.244.0.1, not in ingress.sources: allowNode): Ready, 0 restarts" \
	eval 'pod_ready "$SB" sandbox && [ "$(pod_field "$SB" sandbox "{.status.containerStatuses[?(@.name==\"sidecar\")].restartCount}")" = 0 ]'
t_check "the gateway (192.168.251.2, in ingress.sources) reaches the sidecar $SB_IP:8080" \
	has sidecar-ok kc_in "$KC_STOR" curl -m 5 -sS "http://$SB_IP:8080/"
kc_wait 60 pod_ready default outsider >/dev/null
t_check_not "a stranger (a pod outside ingress.sources) does not reach the sidecar :8080 (dropped: curl times out)" \
	kx default outsider main curl -m 3 -sS "http://$SB_IP:8080/"

# A pod of a namespace the entry does not select: untouched.
OUT_PAUSE=$(pause_pid default outsider)
t_check "an unselected pod (default/outsider): ADD logged skipped, no table in its namespace" \
	eval 'logged ADD skipped default outsider && ! pod_tables "$OUT_PAUSE" | grep -q table'
t_check "... it reaches the metadata server (no policy is its own choice)" \
	has metadata-ok kx default outsider main curl -m 3 -sS http://169.254.169.254/

# verify, as the README's "Verifying a live pod" runs it on a node: the
# pause pid from the runtime, the layer-one exec's pid; here --config names
# the test node's conf dir and --annotations the pod's grant.
# The exec execs every step (nsenter, unshare, nsenter): $! is the last
# nsenter, which forks the process it runs into the container's pid ns.
(exec nsenter --net="/run/netns/$KC_NODE" -- unshare -n -- nsenter -t "$SBC_PID" -m -p -i -u -S 65534 -G 65534 -- sleep 120) &
L1_PID=$!
l1_child() { awk '{ print $1 }' "/proc/$L1_PID/task/$L1_PID/children" 2>/dev/null; }
l1_started() { local c; c=$(l1_child) && [ -n "$c" ] && [ "$(readlink "/proc/$c/exe")" != "$(readlink "/proc/$L1_PID/exe")" ]; }
kc_wait 10 l1_started >/dev/null
node_sh "$KC_NODE_CNI_BIN/boxxkite-netguard" verify --pid "$SB_PAUSE" --sandbox-pid "$SB_PAUSE" \
	--process "$(l1_child)" --config "$KC_NODE_NETD" --annotations "$GRANT" --json >"$W_TMP/verify.json" 2>&1
# verify_rows KNOWN...: every row PASS (or INFO), but the rows named KNOWN.
verify_rows() {
	"$DP_PY" - "$W_TMP/verify.json" "$@" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
bad = [r for r in rows if r["verdict"] not in ("PASS", "INFO") and r["check"] not in sys.argv[2:]]
# The rows that fail first, whole: a failing row's output is cut at 20 lines.
for r in bad + [r for r in rows if r not in bad]:
    print(f'{r["check"]:40} {r["verdict"]:8} {r.get("detail", "")}'[:160 if r not in bad else 2000])
need = {"layer 1: exec namespace", "layer 2: no process can bypass it", "layer 2: table present"}
missing = need - {r["check"] for r in rows}
if missing:
    print("missing rows:", ", ".join(sorted(missing)))
sys.exit(1 if bad or missing else 0)
PY
}
# The table comment keeps 127 bytes, and a runtime's 64-character container
# id leaves 15 for the pod: verify names the pod from its record in the
# state dir (the attachment in the comment is whole), so every row passes.
t_check "verify --pid PAUSE --sandbox-pid PAUSE --process EXEC (README): every row PASS" verify_rows
l1_stop

# --- per-session grants, the API down and back (issue 25: deploygrants.sh, deployapi.sh) ---------
dp_grants_rows

# --- kubectl delete pod: DEL leaves nothing ---------------------------------------------
REC=$(record_of "$SB" sandbox)
t_check "the pod's record in the state dir ($DP_STATE/pods/)" test -n "$REC"
HOST_TABLE=$(record_get "$REC" '[t["table"] for t in r["tables"] if t["netns"] == "node"][0]' 2>/dev/null)
NETNS=$(record_get "$REC" 'r["pod"]["netns"]' 2>/dev/null)
PEER=$(kc_in "$KC_NODE" ip -o link | awk -F': ' -v i="$(record_get "$REC" 'r["link"]["peerIfindex"]' 2>/dev/null)" '$1 == i { print $2 }' | cut -d@ -f1)
t_check "its host-side table ($HOST_TABLE) in the node's namespace, on its veth ${PEER:-?}" \
	eval 'node_tables | grep -qF "$HOST_TABLE" && bridge_ports | grep -qx "$PEER"'
t_check "kubectl delete pod $SB/sandbox" k -n "$SB" delete pod sandbox --wait=true --timeout=60s
t_check "decision log: DEL for $SB/sandbox" logged DEL - "$SB" sandbox
t_check "... the host-side table is gone from the node's namespace" eval '! node_tables | grep -qF "$HOST_TABLE"'
t_check "... the pod record is gone from the state dir" test ! -e "$REC"
t_check "... no IPAM lease for $SB_IP, no veth ($PEER), the pod's netns unmounted" \
	eval '! ipam_leases | grep -qx "$SB_IP" && ! bridge_ports | grep -qx "$PEER" && [ ! -e "$(nodef "$NETNS")" ]'

# --- the uninstall path (deploy/README.md "Removing it") ---------------------------------
# The node drained of its pods first: a pod ADDed while the plugin was in
# the chain and deleted after the uninstall gets no DEL from it.
k delete -f "$W_TMP/outsider.yaml" --wait=true --timeout=60s >/dev/null 2>&1
state_pods() { ls -A "$(nodef "$DP_STATE")/pods" 2>/dev/null; }
t_check "kubectl delete ds boxxkite-netguard (stop re-merging first)" \
	k -n boxxkite-netguard delete ds boxxkite-netguard --wait=true --timeout=60s
t_check "apply -k e2e/k8s/overlay/uninstall: the uninstall DaemonSet done on the node" \
	eval 'k apply -k "$OV/uninstall" && k -n boxxkite-netguard rollout status ds/boxxkite-netguard-uninstall --timeout=120s'
t_check "the node as before: the primary's conflist byte for byte, the bin dir as it was, no side file" \
	eval 'cmp "$PRIMARY" "$W_TMP/primary.before" && diff <(ls -A "$KC_CNI_BIN") "$W_TMP/bin.before" && diff <(ls -A "$KC_NETD") <(echo 10-bridge.conflist)'
t_check "... no table of ours in the node's namespace, no pod record in the state dir" \
	eval 'diff <(node_tables) "$W_TMP/tables.before" && [ -z "$(state_pods)" ] || { state_pods; false; }'
# (The installer's DaemonSet is gone already: the README's last step says
# --ignore-not-found.)
ns_gone() { ! k get namespace boxxkite-netguard >/dev/null 2>&1; }
t_check "delete -k overlay/uninstall && delete -k overlay/install --ignore-not-found: the namespace gone" \
	eval 'k delete -k "$OV/uninstall" && k delete -k "$OV/install" --ignore-not-found && kc_wait 90 ns_gone'

# --- the control: the plugin out of the chain, the same checks connect ---------------------
k apply -f "$W_TMP/sandbox.yaml" -f "$W_TMP/outsider.yaml" >/dev/null
kc_wait 90 pod_ready "$SB" sandbox >/dev/null
kc_wait 60 pod_ready default outsider >/dev/null
SB_IP=$(pod_field "$SB" sandbox '{.status.podIP}')
SBC_PID=$(container_pid "$SB" sandbox sandbox)
t_check "control: a new sandbox pod, Ready, not seen by the plugin (no table in its namespace)" \
	eval '! pod_tables "$(pause_pid "$SB" sandbox)" | grep -q table'
t_check "control: kubectl exec -c sidecar -- curl 169.254.169.254 connects (metadata-ok; the NetworkPolicy is ignored)" \
	has metadata-ok kx "$SB" sandbox sidecar curl -m 3 -sS http://169.254.169.254/
t_check "control: the forbidden destination 10.20.0.5:80 connects" \
	has storage-80 kx "$SB" sandbox sandbox curl -m 3 -sS http://10.20.0.5:80/
t_check "control: the stranger reaches the sidecar :8080" \
	has sidecar-ok kx default outsider main curl -m 3 -sS "http://$SB_IP:8080/"
layer1_podnet() { kc_in "$KC_NODE" nsenter -t "$SBC_PID" -n -m -p -i -u -S 65534 -G 65534 -- "$@"; }
t_check "control: the layer-one exec without unshare -n (into the pod's netns) connects" \
	has metadata-ok layer1_podnet curl -m 3 -sS http://169.254.169.254/
timed l1 layer1 curl -m 3 -sSv http://169.254.169.254/
t_check "layer one, without the plugin too: unreachable in ${l1_ms} ms (the empty netns, not the plugin)" \
	failed_fast l1 2000 "Network is unreachable"
k delete -f "$W_TMP/sandbox.yaml" -f "$W_TMP/outsider.yaml" --wait=true --timeout=60s >/dev/null 2>&1

# --- deploy/helm/ --------------------------------------------------------------------------
dp_helm_rows

gw=$(kc_gw_packets)
t_check "no packet left the world (no pull, no probe): the node's default gateway saw ${gw:-?} IPv4 packets" \
	test "${gw:-x}" = 0

# --- down, and nothing left --------------------------------------------------------------------
t0=$(kc_ms)
kc_down
t_check "cluster down in $(($(kc_ms) - t0)) ms: no namespace, cgroup, process, mount or temp dir left" kc_leftovers
t_check "the machine's network namespace unchanged (addresses, routes, nftables ruleset)" \
	test "$(root_netns)" = "$ROOT_BEFORE"
t_check "the machine's /etc/cni/net.d and /opt/cni/bin untouched" test "$(machine_dirs)" = "$DIRS_BEFORE"
t_check_not "... and nothing in its /run/boxxkite-netguard or plugin log names a pod of this cluster" ours_on_machine
kc_say "wall time $(($(kc_ms) - T_START)) ms"
t_summary
