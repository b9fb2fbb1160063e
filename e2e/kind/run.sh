#!/usr/bin/env bash
# e2e/kind/run.sh (make e2e-kind): boxxkite-netguard on a real Kubernetes
# cluster, installed the way deploy/ installs it. Needs Docker (a running
# engine), kind and kubectl; see e2e/kind/README.md.
#
#  1. kind cluster without its default CNI; on every node a plain ptp +
#     host-local conflist (a primary that ignores NetworkPolicy) and routes
#     between the nodes' pod ranges. The worker is born tainted
#     netguard.boxxkite.io/not-ready.
#  2. A sandbox pod created BEFORE the plugin is installed must stay
#     Pending (the taint keeps it off the node).
#  3. Build the image (make image), load it, `kubectl apply -k` an overlay
#     of deploy/ (the image, a test entry); the installer merges the entry
#     and removes the taint; the sandbox pod starts, now protected.
#  4. The seed's checks: an exec in the sandbox container and one in the
#     sidecar (kubectl exec -c sidecar) both fail to reach 169.254.169.254
#     at once; DNS and the allowed storage work; the annotation grant works;
#     an envelope address not granted is refused.
#  5. The primary rewrites its conflist (as kindnetd does on start): the
#     installer puts the entry back.
#  6. Delete the pod: the plugin's log shows DEL ran for it.
#  7. Uninstall (`kubectl apply -k`, deploy/uninstall/): the node's conflist is the primary's
#     again, byte for byte; the binary is gone.
#  8. Delete the cluster (KEEP_CLUSTER=1 keeps it for a look).
# Ends with "N passed, N failed"; exit status non-zero on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CLUSTER=${KIND_CLUSTER:-ng-e2e}
CTX=kind-$CLUSTER
VERSION=$(sed -n 's/^#define NG_VERSION "\(.*\)"/\1/p' "$REPO/plugin/base/version.h")
IMAGE=${IMAGE:-boxxkite-netguard:$VERSION}
BUSYBOX=busybox:1.36
KUBECTL_IMAGE=registry.k8s.io/kubectl:v1.31.0
PAUSE_IMAGE=registry.k8s.io/pause:3.10
TAINT=netguard.boxxkite.io/not-ready
PRIMARY=10-ptp.conflist

PASS=0 FAIL=0
T=$(mktemp -d /tmp/ng-kind.XXXXXX)
CREATED=

ok() { PASS=$((PASS + 1)) && printf '  ok    %s\n' "$1"; }
bad() {
	FAIL=$((FAIL + 1))
	printf '  FAIL  %s\n' "$1"
	[[ -z ${2:-} ]] || printf '%s\n' "$2" | sed 's/^/        /'
}
die() { echo "e2e-kind: $*" >&2 && exit 1; }
k() { timeout 120 kubectl --context "$CTX" "$@"; }
node_sh() { local n=$1 && shift && timeout 60 docker exec -i "$n" sh -c "$*"; }
# until_true SECONDS CMD...: polls every second.
until_true() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || return 1
		sleep 1
	done
}

diagnostics() {
	echo "--- diagnostics (last lines)"
	k get nodes -o wide 2>&1 | tail -n 5 || true
	k get pods -A -o wide 2>&1 | tail -n 30 || true
	k -n boxxkite-netguard logs ds/boxxkite-netguard --all-containers --tail=30 2>&1 || true
	for n in $(kind get nodes --name "$CLUSTER" 2>/dev/null); do
		echo "--- $n: /etc/cni/net.d and the plugin log"
		node_sh "$n" 'ls -la /etc/cni/net.d; tail -n 5 /var/log/boxxkite-netguard.log' 2>&1 || true
	done
}

cleanup() {
	local rc=$?
	set +e
	((rc == 0 && FAIL == 0)) || [[ -z $CREATED ]] || diagnostics
	if [[ -n $CREATED && -z ${KEEP_CLUSTER:-} ]]; then
		kind delete cluster --name "$CLUSTER" >/dev/null 2>&1
	elif [[ -n $CREATED ]]; then
		echo "kept cluster $CLUSTER (kind delete cluster --name $CLUSTER)"
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- 0. preflight ------------------------------------------------------------
for tool in docker kind kubectl make timeout; do
	command -v "$tool" >/dev/null || die "needs $tool (this test runs only where Docker, kind and kubectl are installed)"
done
timeout 30 docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"
kind get clusters 2>/dev/null | grep -qx "$CLUSTER" && die "a kind cluster named $CLUSTER exists already (set KIND_CLUSTER)"

echo "--- build"
make -C "$REPO" --no-print-directory all image IMAGE="$IMAGE"
# The test entry must pass the plugin's own validation before any cluster exists.
mkdir -m 0755 "$T/conf" "$T/bin"
echo '{"cniVersion":"0.3.1","name":"ptp","plugins":[{"type":"ptp"}]}' >"$T/conf/$PRIMARY"
"$REPO/build/boxxkite-netguard" install --dry-run --entry "$HERE/entry.json" \
	--conf-dir "$T/conf" --bin-dir "$T/bin" >/dev/null || die "e2e/kind/entry.json is refused by the plugin"
for img in "$BUSYBOX" "$KUBECTL_IMAGE" "$PAUSE_IMAGE"; do
	docker image inspect "$img" >/dev/null 2>&1 || timeout 300 docker pull -q "$img" >/dev/null
done

# ---- 1. cluster with a primary that ignores NetworkPolicy --------------------
echo "--- cluster"
CREATED=1
timeout 600 kind create cluster --name "$CLUSTER" --config "$HERE/cluster.yaml" --wait 0s
mapfile -t NODES < <(kind get nodes --name "$CLUSTER")
WORKER=$CLUSTER-worker
for n in "${NODES[@]}"; do
	node_sh "$n" 'test -x /opt/cni/bin/ptp && test -x /opt/cni/bin/host-local' ||
		die "node $n has no ptp/host-local plugin in /opt/cni/bin"
done
# Each node: its podCIDR to ptp, and a route to every other node's podCIDR.
for n in "${NODES[@]}"; do
	cidr=$(k get node "$n" -o jsonpath='{.spec.podCIDR}')
	[[ -n $cidr ]] || die "node $n has no podCIDR"
	cat >"$T/$n.conflist" <<-EOF
	{
	  "cniVersion": "0.3.1",
	  "name": "ptp-primary",
	  "plugins": [
	    {
	      "type": "ptp",
	      "ipMasq": true,
	      "mtu": 1500,
	      "ipam": {
	        "type": "host-local",
	        "dataDir": "/run/cni-ipam-state",
	        "routes": [{ "dst": "0.0.0.0/0" }],
	        "ranges": [[{ "subnet": "$cidr" }]]
	      }
	    }
	  ]
	}
	EOF
	# Written aside and renamed in: containerd watches net.d.
	node_sh "$n" "mkdir -p /etc/cni/net.d && cat >/etc/cni/net.d/.primary.tmp && mv /etc/cni/net.d/.primary.tmp /etc/cni/net.d/$PRIMARY" <"$T/$n.conflist"
	for m in "${NODES[@]}"; do
		[[ $m == "$n" ]] && continue
		mcidr=$(k get node "$m" -o jsonpath='{.spec.podCIDR}')
		mip=$(k get node "$m" -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
		node_sh "$n" "ip route replace $mcidr via $mip"
	done
done
if k wait --for=condition=Ready node --all --timeout=180s >/dev/null; then ok "nodes Ready with the ptp primary"; else bad "nodes Ready"; exit 1; fi
if k get node "$WORKER" -o jsonpath='{.spec.taints[*].key}' | grep -qw "$TAINT"; then
	ok "worker born with the $TAINT taint"
else bad "worker born with the $TAINT taint"; fi
for img in "$IMAGE" "$BUSYBOX" "$KUBECTL_IMAGE" "$PAUSE_IMAGE"; do
	timeout 300 kind load docker-image "$img" --name "$CLUSTER" >/dev/null
done

# ---- 2. a pod created before the plugin is installed -------------------------
echo "--- before the installer"
sed "s/WORKER/$WORKER/g" "$HERE/sandbox.yaml" | k apply -f - >/dev/null
sleep 10
phase=$(k -n boxxkite-sandboxes get pod sandbox -o jsonpath='{.status.phase}')
if [[ $phase == Pending ]] && k -n boxxkite-sandboxes get pod sandbox -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}' | grep -q Unschedulable; then
	ok "sandbox pod created early stays Pending (taint: not ready until installed)"
else bad "sandbox pod created early stays Pending" "phase: $phase"; fi

# ---- 3. install with deploy/ -------------------------------------------------
echo "--- install (deploy/)"
if k kustomize "$REPO/deploy" >/dev/null; then ok "deploy/ kustomization builds"; else bad "deploy/ kustomization builds"; fi
# As a platform team would: an overlay of its own over deploy/ that sets
# the image it pushed and replaces the shipped entry (CHANGEME placeholders,
# refused on purpose) with this cluster's, applied with `kubectl apply -k`.
cp -r "$REPO/deploy" "$T/deploy"
mkdir "$T/overlay" "$T/overlay-uninstall"
image_block() {
	printf 'images:\n  - name: boxxkite-netguard\n    newName: %s\n    newTag: %s\n' "${IMAGE%:*}" "${IMAGE##*:}"
}
{
	printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n'
	printf 'resources:\n  - ../deploy\npatches:\n  - path: entry.yaml\n'
	image_block
} >"$T/overlay/kustomization.yaml"
{
	printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: boxxkite-netguard-entry\n'
	printf '  namespace: boxxkite-netguard\ndata:\n  netguard.json: |\n'
	sed 's/^/    /' "$HERE/entry.json"
} >"$T/overlay/entry.yaml"
{
	printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n'
	printf 'resources:\n  - ../deploy/uninstall\n'
	image_block
} >"$T/overlay-uninstall/kustomization.yaml"
k apply -k "$T/overlay" >/dev/null
if k -n boxxkite-netguard rollout status ds/boxxkite-netguard --timeout=300s >/dev/null; then
	ok "installer DaemonSet ready on every node"
else bad "installer DaemonSet ready"; fi
if until_true 60 bash -c "! kubectl --context '$CTX' get node '$WORKER' -o jsonpath='{.spec.taints[*].key}' | grep -qw '$TAINT'"; then
	ok "the installer removed the taint"
else bad "the installer removed the taint"; fi
if node_sh "$WORKER" "grep -q boxxkite-netguard /etc/cni/net.d/$PRIMARY && test -x /opt/cni/bin/boxxkite-netguard"; then
	ok "worker: entry merged into $PRIMARY, binary in /opt/cni/bin"
else bad "worker: entry merged, binary installed"; fi
sed "s/WORKER/$WORKER/g" "$HERE/workloads.yaml" | k apply -f - >/dev/null
if k wait --for=condition=Ready -n boxxkite-sandboxes pod/sandbox --timeout=180s >/dev/null &&
	k wait --for=condition=Ready -n boxxkite-storage pod/storage --timeout=180s >/dev/null; then
	ok "sandbox pod started once installed"
else bad "sandbox and storage pods Ready"; fi
if node_sh "$WORKER" 'grep "\"verb\":\"ADD\"" /var/log/boxxkite-netguard.log' | grep '"pod_name":"sandbox"' | grep -q '"decision":"enforced"'; then
	ok "plugin log: ADD enforced for the sandbox pod"
else bad "plugin log: ADD enforced for the sandbox pod"; fi

# ---- 4. the seed's checks ----------------------------------------------------
echo "--- the sandbox"
# sb_exec CONTAINER CMD...: in the sandbox pod; output and status kept.
sb_exec() {
	local c=$1
	shift
	timeout 30 kubectl --context "$CTX" -n boxxkite-sandboxes exec sandbox -c "$c" -- "$@" 2>&1
}
ms_now() { date +%s%3N; }
baseline_start=$(ms_now)
sb_exec sandbox true >/dev/null
baseline=$(($(ms_now) - baseline_start))
for c in sandbox sidecar; do
	start=$(ms_now)
	out=$(sb_exec "$c" wget -q -T 5 -O- http://169.254.169.254/latest/meta-data/) && rc=0 || rc=$?
	took=$(($(ms_now) - start))
	# wget waits 5 s for a dropped packet; a refused connect returns at once
	# (the time includes kubectl exec itself: about $baseline ms here).
	if ((rc != 0)) && grep -qi refused <<<"$out" && ((took < baseline + 2000)); then
		ok "$c container: 169.254.169.254 refused in $took ms (kubectl exec alone: $baseline ms)"
	else bad "$c container: 169.254.169.254 refused fast" "exit $rc after $took ms: $out"; fi
done
if out=$(sb_exec sandbox nslookup kubernetes.default.svc.cluster.local 10.96.0.10) &&
	grep -Eq '^Address:?[[:space:]]+10\.96\.0\.1$' <<<"$out"; then
	ok "DNS to the cluster resolver works"
else bad "DNS to the cluster resolver works" "$out"; fi
if out=$(sb_exec sandbox wget -q -T 5 -O- http://10.96.100.100/) && [[ $out == storage-ok ]]; then
	ok "allowed storage (egress.allow) works"
else bad "allowed storage (egress.allow) works" "$out"; fi
if out=$(sb_exec sidecar wget -q -T 5 -O- http://10.96.100.101/) && [[ $out == storage-ok ]]; then
	ok "storage granted by the pod's egress annotation works (from the sidecar)"
else bad "storage granted by the annotation works" "$out"; fi
out=$(sb_exec sandbox wget -q -T 5 -O- http://10.96.100.102/) && rc=0 || rc=$?
if ((rc != 0)) && grep -qi refused <<<"$out"; then
	ok "envelope address not granted to this pod: refused"
else bad "envelope address not granted: refused" "exit $rc: $out"; fi
out=$(timeout 30 kubectl --context "$CTX" -n boxxkite-storage exec storage -- \
	wget -q -T 5 -O- "http://$(k -n boxxkite-sandboxes get pod sandbox -o jsonpath='{.status.podIP}'):8080/" 2>&1) && rc=0 || rc=$?
if ((rc == 0)) && [[ $out == sidecar-ok ]]; then
	ok "the sidecar port (8080) is reachable from ingress.sources"
else bad "the sidecar port reachable from ingress.sources" "exit $rc: $out"; fi

# ---- 5. the primary rewrites its config --------------------------------------
echo "--- the primary rewrites its conflist"
node_sh "$WORKER" "cat >/etc/cni/net.d/.primary.tmp && mv /etc/cni/net.d/.primary.tmp /etc/cni/net.d/$PRIMARY" <"$T/$WORKER.conflist"
if until_true 30 node_sh "$WORKER" "grep -q boxxkite-netguard /etc/cni/net.d/$PRIMARY"; then
	ok "the installer put the entry back"
else bad "the installer put the entry back"; fi

# ---- 6. DEL ------------------------------------------------------------------
echo "--- delete the pod"
k -n boxxkite-sandboxes delete pod sandbox --wait --timeout=120s >/dev/null
if until_true 60 bash -c "docker exec '$WORKER' grep '\"verb\":\"DEL\"' /var/log/boxxkite-netguard.log | grep -q '\"pod_name\":\"sandbox\"'"; then
	ok "plugin log: DEL ran for the sandbox pod"
else bad "plugin log: DEL ran for the sandbox pod"; fi

# ---- 7. uninstall --------------------------------------------------------------
echo "--- uninstall (deploy/uninstall/)"
k -n boxxkite-netguard delete ds boxxkite-netguard --wait --timeout=120s >/dev/null
k apply -k "$T/overlay-uninstall" >/dev/null
if k -n boxxkite-netguard rollout status ds/boxxkite-netguard-uninstall --timeout=300s >/dev/null; then
	ok "uninstall DaemonSet done on every node"
else bad "uninstall DaemonSet done"; fi
node_sh "$WORKER" "cat /etc/cni/net.d/$PRIMARY" >"$T/after.conflist" || true
if cmp -s "$T/after.conflist" "$T/$WORKER.conflist"; then
	ok "worker: $PRIMARY is the primary's file again, byte for byte"
else bad "worker: $PRIMARY restored" "$(diff "$T/$WORKER.conflist" "$T/after.conflist" | head -n 10)"; fi
if node_sh "$WORKER" 'test ! -e /opt/cni/bin/boxxkite-netguard && ! ls -A /etc/cni/net.d | grep -q boxxkite'; then
	ok "worker: binary and installer files removed"
else bad "worker: binary and installer files removed"; fi
k delete -k "$T/overlay-uninstall" --wait=false >/dev/null
k delete -k "$T/overlay" --wait=false >/dev/null

printf '%d passed, %d failed\n' "$PASS" "$FAIL"
((FAIL == 0))
