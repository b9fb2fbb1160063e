#!/usr/bin/env bash
# test/manifests/check.sh [BINARY]: the manifests test of `make test`.
#
# 1. check.py on deploy/ as shipped: must pass (with BINARY, default
#    build/boxxkite-netguard, it also runs the ConfigMap's entry through the
#    plugin's own validation), and on the sandbox example
#    (e2e/k8s/sandbox.yaml, the pod e2e-k8s runs: Pod Security restricted).
# 2. Every kustomization rendered with `kubectl kustomize` (Debian's
#    kubernetes-client or any later kubectl): deploy/, deploy/uninstall/,
#    and each overlay of deploy/overlays/ (install + uninstall), whose
#    DaemonSets must mount the host dirs the vendor documents (the table
#    below, kept apart from the overlays on purpose), and the test overlays
#    of e2e/k8s/overlay/ (the test node's dirs, which only its own mount
#    namespace has).
# 2b. deploy/helm/ renders what the kustomizations render (helm.sh), when a
#    helm binary is there (HELM, or e2e/k8s/build.sh's cached set: make
#    k8s-build); e2e-k8s always runs it.
# 3. The checker checked: copies of deploy/ with one thing broken each,
#    made the way a careless edit would make them; check.py must fail on
#    every one, naming the fault. A checker that passes everything would
#    pass step 1 too, so step 1 alone proves nothing.
# Ends with "N passed, N failed"; exit status 1 on any failure.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
BIN=${1:-$REPO/build/boxxkite-netguard}
PY=$(command -v /usr/bin/python3 || command -v python3 || true)
[[ -n $PY ]] || { echo "manifests: python3 is needed (apt-get install python3)" >&2 && exit 1; }
[[ -x $BIN ]] || { echo "manifests: $BIN not built (run make)" >&2 && exit 1; }
KUBECTL=${KUBECTL:-$(command -v kubectl || true)}
[[ -n $KUBECTL ]] || { echo "manifests: kubectl is needed (apt-get install kubernetes-client)" >&2 && exit 1; }

T=$(mktemp -d /tmp/ng-manifests.XXXXXX)
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0 N=0

SANDBOX=$REPO/e2e/k8s/sandbox.yaml
echo "--- deploy/ as shipped, and the sandbox example"
if "$PY" "$HERE/check.py" "$REPO/deploy" "$BIN" --sandbox "$SANDBOX" | tee "$T/shipped.out" | sed 's/^/  /'; then
	PASS=$((PASS + 1))
else
	FAIL=$((FAIL + 1))
	echo "  FAIL  deploy/ does not pass its checks"
fi

# The host dirs per platform, from the vendors' own documents (the
# overlays' comments cite them): NAME CONF-DIR BIN-DIR.
PLATFORMS=(
	". /etc/cni/net.d /opt/cni/bin"
	"overlays/gke /etc/cni/net.d /home/kubernetes/bin"
	"overlays/k3s /var/lib/rancher/k3s/agent/etc/cni/net.d /var/lib/rancher/k3s/data/cni"
	# Not platforms but choices, on the usual dirs: the agent's /metrics on
	# the node's IP; no agent at all (a fourth word: check.py --no-agent).
	"overlays/metrics /etc/cni/net.d /opt/cni/bin"
	"overlays/resolve-only /etc/cni/net.d /opt/cni/bin no-agent"
)
# rendered DIR NAME CONF BIN [UNINSTALL-DIR] [no-agent]: kubectl kustomize
# DIR and DIR's uninstall counterpart (DIR/uninstall unless given), then
# check.py --rendered on both; prints check.py's output.
rendered() {
	local d=$1 name=$2 conf=$3 bin=$4 un=${5:-$1/uninstall} opt=()
	[[ ${6:-} == no-agent ]] && opt=(--no-agent)
	[[ $d == */. || $d == . ]] && un=$(dirname "$d")/uninstall
	"$KUBECTL" kustomize "$d" >"$T/$name.yaml" 2>"$T/$name.err" || { cat "$T/$name.err" && return 1; }
	"$KUBECTL" kustomize "$un" >"$T/$name-uninstall.yaml" 2>"$T/$name.err" || { cat "$T/$name.err" && return 1; }
	"$PY" "$HERE/check.py" --rendered "$T/$name.yaml" --rendered "$T/$name-uninstall.yaml" \
		--host-conf "$conf" --host-bin "$bin" "${opt[@]}"
}

echo "--- each kustomization rendered (kubectl $("$KUBECTL" version --client 2>/dev/null | grep -o "v1\.[0-9.]*" | head -n 1))"
for p in "${PLATFORMS[@]}"; do
	read -r dir conf bin opt <<<"$p"
	name=$(tr / - <<<"${dir#overlays/}")
	[[ $name == . ]] && name=default
	if out=$(rendered "$REPO/deploy/$dir" "$name" "$conf" "$bin" "" "$opt" 2>&1); then
		PASS=$((PASS + 1))
		printf '  ok    deploy/%s renders; its DaemonSets mount %s and %s\n' "${dir#.}" "$conf" "$bin"
	else
		FAIL=$((FAIL + 1))
		printf '  FAIL  deploy/%s\n' "${dir#.}"
		grep -v '^  ok' <<<"$out" | sed 's/^/        /'
	fi
done
# e2e/k8s/overlay/: deploy/ and deploy/uninstall/ on the test node.
E2E_OV=$REPO/e2e/k8s/overlay
if out=$(rendered "$E2E_OV/install" e2e /run/ngk/cni/net.d /run/ngk/cni/bin "$E2E_OV/uninstall" 2>&1) &&
	out2=$(rendered "$E2E_OV/node" e2e-node /run/ngk/cni/net.d /run/ngk/cni/bin "$E2E_OV/uninstall" 2>&1); then
	PASS=$((PASS + 1))
	printf '  ok    e2e/k8s/overlay/{node,install,uninstall} render; their DaemonSets mount the test node'"'"'s dirs\n'
else
	FAIL=$((FAIL + 1))
	printf '  FAIL  e2e/k8s/overlay/\n'
	printf '%s\n' "${out:-}" "${out2:-}" | grep -v '^  ok' | sed 's/^/        /'
fi
# Every overlay has its row above (a new one without a row is untested).
for d in "$REPO"/deploy/overlays/*/; do
	o=overlays/$(basename "$d")
	if printf '%s\n' "${PLATFORMS[@]}" | grep -q "^$o "; then continue; fi
	FAIL=$((FAIL + 1))
	printf '  FAIL  deploy/%s has no row in PLATFORMS (check.sh)\n' "$o"
done

HELM=${HELM:-}
if [[ -z $HELM ]] && k8s=$("$REPO/e2e/k8s/build.sh" --check 2>/dev/null); then HELM=$k8s/helm; fi
if [[ -n $HELM && -x $HELM ]]; then
	if "$HERE/helm.sh" "$HELM" "$KUBECTL" | sed 's/^/  /'; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); fi
else
	echo "--- deploy/helm/: not compared here, no helm (make k8s-build builds it; make e2e-k8s always compares)"
fi

# mutant NAME EXPECTED-TEXT EDIT...: copies deploy/ to $T/NAME, runs EDIT
# there (a shell command, with $D the copy), and expects check.py to fail
# saying EXPECTED-TEXT.
mutant() {
	local name=$1 want=$2 edit=$3 D out rc=0
	N=$((N + 1)) && D=$T/mutant-$N
	cp -r "$REPO/deploy" "$D"
	if ! D=$D bash -c "set -e; cd \"\$D\"; $edit"; then
		FAIL=$((FAIL + 1))
		printf '  FAIL  the edit for "%s" did not apply\n' "$name"
		return
	fi
	out=$("$PY" "$HERE/check.py" "$D" 2>&1) || rc=$?
	if ((rc == 1)) && grep -qF -- "$want" <<<"$out"; then
		PASS=$((PASS + 1))
		printf '  ok    refused: %s\n' "$name"
	else
		FAIL=$((FAIL + 1))
		printf '  FAIL  not refused: %s (exit %d; wanted "%s")\n' "$name" "$rc" "$want"
		grep FAIL <<<"$out" | sed 's/^/        /' || true
	fi
}

echo "--- the checker refuses broken copies"
mutant "agent liveness on /readyz (restarts an agent waiting for the installer)" "livenessProbe is /healthz" \
	"python3 - <<'PY'
import re
p = 'base/daemonset.yaml'
s = open(p).read()
s = s.replace('path: /healthz', 'path: /readyz')
open(p, 'w').write(s)
PY"
mutant "readiness probe on another port than --listen" "readinessProbe is /readyz on its --listen" \
	'sed -i "s|--listen=127.0.0.1:9617|--listen=127.0.0.1:9618|" base/daemonset.yaml'
mutant "rolling update with a surge pod (two agents, one lock)" "no surge" \
	'sed -i "s|maxSurge: 0|maxSurge: 1|" base/daemonset.yaml'
mutant "agent /readyz looks at a CNI bin dir that is not mounted" "agent --cni-bin-dir" \
	'sed -i "s|--cni-bin-dir=/host/opt/cni/bin|--cni-bin-dir=/opt/cni/bin|" base/daemonset.yaml'
mutant "the agent's role reads secrets too" "pods get/list/watch, pods/status patch, events create, nothing more" \
	'sed -i "0,/      - pods\$/s//      - pods\n      - secrets/" base/rbac.yaml'
mutant "the agent's role may patch pods, not only their status" "nothing more" \
	'sed -i "s|      - pods/status|      - pods|" base/rbac.yaml'
mutant "the agent without its node's name" "NODE_NAME is spec.nodeName" \
	"python3 - <<'PY'
p = 'base/daemonset.yaml'
s = open(p).read()
i = s.index('name: agent')
s = s[:i] + s[i:].replace('fieldPath: spec.nodeName', 'fieldPath: metadata.name', 1)
open(p, 'w').write(s)
PY"
mutant "default policy allows 0.0.0.0/0" "allows 0.0.0.0/0" \
	'sed -i "s|cidr: CHANGEME-storage-cidr|cidr: 0.0.0.0/0|" network-policy.yaml'
mutant "default policy allows ::/0 (quoted)" "allows ::/0" \
	"sed -i 's|cidr: CHANGEME-storage-cidr|cidr: \"::/0\"|' network-policy.yaml"
mutant "default policy allows everything, spelt 0.0.0.0/00" "allows 0.0.0.0/00" \
	'sed -i "s|cidr: CHANGEME-storage-cidr|cidr: 0.0.0.0/00|" network-policy.yaml'
# The DNS rule loses its `to`, keeping its ports: "port 53 to anywhere".
mutant "an egress rule without peers (every address)" "has no \`to\`" \
	'awk "/^    - to:\$/ && !done {skip=1; next}
	     skip && /^      ports:\$/ {print \"    - ports:\"; skip=0; done=1; next}
	     !skip {print}" network-policy.yaml >np && mv np network-policy.yaml && ! grep -q k8s-app:.kube-dns network-policy.yaml'
mutant "both policies in one file" "one NetworkPolicy per file" \
	'{ echo "---"; cat network-policy-permissive-optin.yaml; } >>network-policy.yaml && rm network-policy-permissive-optin.yaml'
mutant "both policies in one new file" "one NetworkPolicy per file" \
	'cat network-policy.yaml > all.yaml && echo --- >> all.yaml && cat network-policy-permissive-optin.yaml >> all.yaml'
mutant "selector app: sandboxes" "podSelector is exactly app: sandbox" \
	'sed -i "0,/app: sandbox$/s//app: sandboxes/" network-policy.yaml'
mutant "selector widened with matchExpressions" "podSelector is exactly app: sandbox" \
	'sed -i "s|^  podSelector:$|  podSelector:\n    matchExpressions: []|" network-policy.yaml'
mutant "only one policy type" "both policy types" \
	'sed -i "/^    - Egress$/d" network-policy.yaml'
mutant "storage placeholder filled with a default" "CHANGEME placeholder" \
	'sed -i "s|cidr: CHANGEME-storage-cidr|cidr: 10.0.0.0/8|" network-policy.yaml'
mutant "permissive policy in the kustomization" "not applied with the installer" \
	'sed -i "s|^  - base/daemonset.yaml$|  - base/daemonset.yaml\n  - network-policy-permissive-optin.yaml|" kustomization.yaml'
mutant "permissive policy without its opt-in label" "AND an opt-in label" \
	'sed -i "/netguard.boxxkite.io\/egress: permissive/d" network-policy-permissive-optin.yaml'
mutant "DaemonSet not tolerating every taint" "tolerates every taint" \
	'sed -i "s|^        - operator: Exists$|        - key: node.kubernetes.io/not-ready\n          operator: Exists|" base/daemonset.yaml'
mutant "DaemonSet writing where it does not mount" "are the mounted host dirs" \
	'sed -i "s|--conf-dir=/host/etc/cni/net.d|--conf-dir=/etc/cni/net.d|" base/daemonset.yaml'
mutant "a misspelt field (toleration:)" "no such field in V1PodSpec (did you mean tolerations?)" \
	'sed -i "s|^      tolerations:$|      toleration:|" base/daemonset.yaml'
mutant "a field at the wrong level (hostNetwork under a container)" "no such field in V1Container" \
	'sed -i "0,/^          imagePullPolicy: IfNotPresent$/s//          imagePullPolicy: IfNotPresent\n          hostNetwork: true/" base/daemonset.yaml'
mutant "a boolean written as a string" "wants bool, has str" \
	'sed -i "s|^      hostNetwork: true$|      hostNetwork: \"true\"|" uninstall/daemonset.yaml'
mutant "a misspelt field in an overlay patch" "no such field in V1HostPathVolumeSource" \
	'sed -i "s|^            path: /home/kubernetes/bin$|            paht: /home/kubernetes/bin|" overlays/gke/host-dirs.yaml'
mutant "a key given twice" "duplicate key" \
	'sed -i "s|^      hostNetwork: true$|      hostNetwork: true\n      hostNetwork: false|" base/daemonset.yaml'
mutant "a README example with a misspelt field" "no such field" \
	'sed -i "s|^  allowPrivilegeEscalation: false$|  allowPrivilegeEscalaton: false|" README.md'
mutant "install DaemonSet on every OS" "kubernetes.io/os: linux" \
	'sed -i "/^        kubernetes.io\/os: linux$/d" base/daemonset.yaml'
mutant "uninstall DaemonSet on every OS" "kubernetes.io/os: linux" \
	'sed -i "/^        kubernetes.io\/os: linux$/d" uninstall/daemonset.yaml'
mutant "uninstall kustomization with another image" "set the same boxxkite-netguard image" \
	'sed -i "s|^    newTag: .*$|    newTag: 0.0.9|" uninstall/kustomization.yaml'
mutant "the agent without the API token (its pod watch)" "agent: mounts the token (the agent's pod watch)" \
	'sed -i "/^            # The agent watches its node.s pods/,+4d" base/daemonset.yaml'
mutant "every container given a token" "automountServiceAccountToken: false" \
	'sed -i "s|^      automountServiceAccountToken: false$|      automountServiceAccountToken: true|" base/daemonset.yaml'
mutant "the agent without a startupProbe" "agent startupProbe is /healthz" \
	'sed -i "s|^          startupProbe:$|          startupProbeX:|; /^          startupProbeX:$/,/^            failureThreshold: 60$/d" base/daemonset.yaml'
mutant "a 1 s liveness timeout" "agent livenessProbe allows a loaded node" \
	'sed -i "/^          livenessProbe:$/,/^            failureThreshold: 3$/{/timeoutSeconds/d}" base/daemonset.yaml'
mutant "the node policy matching another ServiceAccount" "the policy matches the installer" \
	'sed -i "s|system:serviceaccount:boxxkite-netguard:boxxkite-netguard|system:serviceaccount:kube-system:other|" base/rbac.yaml'
mutant "the node policy only warning" "the binding enforces it (Deny)" \
	'sed -i "s|^    - Deny$|    - Warn|" base/rbac.yaml'
mutant "a misspelt field in the admission policy" "no such field" \
	'sed -i "s|^  validationActions:$|  validationAction:|" base/rbac.yaml'
mutant "base kustomization missing a file deploy/ has" "exactly base/kustomization.yaml" \
	'sed -i "/^  - rbac.yaml$/d" base/kustomization.yaml'

# overlay_mutant NAME EXPECTED-TEXT EDIT: as mutant, but the broken copy is
# rendered with kubectl kustomize and checked as step 2 checks it.
overlay_mutant() {
	local name=$1 want=$2 edit=$3 D out rc=0
	N=$((N + 1)) && D=$T/mutant-$N
	cp -r "$REPO/deploy" "$D"
	if ! D=$D bash -c "set -e; cd \"\$D\"; $edit"; then
		FAIL=$((FAIL + 1)) && printf '  FAIL  the edit for "%s" did not apply\n' "$name" && return
	fi
	out=$(bad=0
		for p in "${PLATFORMS[@]}"; do
			read -r dir conf bin opt <<<"$p"
			rendered "$D/$dir" "m$N-$(tr / - <<<"$dir")" "$conf" "$bin" "" "$opt" || bad=1
		done 2>&1
		exit $bad) || rc=$?
	if ((rc != 0)) && grep -qF -- "$want" <<<"$out"; then
		PASS=$((PASS + 1)) && printf '  ok    refused: %s\n' "$name"
	else
		FAIL=$((FAIL + 1)) && printf '  FAIL  not refused: %s (exit %d; wanted "%s")\n' "$name" "$rc" "$want"
	fi
}
echo "--- ... and broken overlays"
overlay_mutant "k3s overlay patching a volume that does not exist" "/var/lib/rancher/k3s/data/cni" \
	'sed -i "s|^        - name: cni-bin$|        - name: cni-binaries|" overlays/k3s/host-dirs.yaml'
overlay_mutant "gke uninstall left at /opt/cni/bin" "/home/kubernetes/bin" \
	'sed -i "s|/home/kubernetes/bin|/opt/cni/bin|" overlays/gke/uninstall/host-dirs.yaml'
overlay_mutant "metrics overlay whose probes still ask 127.0.0.1" "readinessProbe is /readyz on its --listen address" \
	'sed -i "0,/^              host: null$/s//              host: 127.0.0.1/; s|^          startupProbe:$|          readinessProbeX:|" overlays/metrics/agent-on-node-ip.yaml; sed -i "0,/^          readinessProbe:$/{/^          readinessProbe:$/{N;N;d}}" overlays/metrics/agent-on-node-ip.yaml; sed -i "s|^          readinessProbeX:$|          readinessProbe:|" overlays/metrics/agent-on-node-ip.yaml'
overlay_mutant "metrics overlay with HOST_IP from the pod's own IP field" "HOST_IP is the node's IP" \
	'sed -i "s|fieldPath: status.hostIP|fieldPath: metadata.name|" overlays/metrics/agent-on-node-ip.yaml'
# shellcheck disable=SC2016 # $patch is YAML's, for sed
overlay_mutant "resolve-only overlay keeping the agent" "no agent container" \
	'sed -i "/^        - name: agent$/,/^          \$patch: delete$/d" overlays/resolve-only/no-agent.yaml'
overlay_mutant "the install DaemonSet renamed (the overlays patch nothing)" "renders DaemonSet boxxkite-netguard" \
	'sed -i "0,/^  name: boxxkite-netguard$/s//  name: netguard/" base/daemonset.yaml'

# The sandbox example, broken the ways that matter.
sandbox_mutant() {
	local name=$1 want=$2 edit=$3 out rc=0
	N=$((N + 1))
	sed "$edit" "$SANDBOX" >"$T/sandbox-$N.yaml"
	if cmp -s "$SANDBOX" "$T/sandbox-$N.yaml"; then
		FAIL=$((FAIL + 1)) && printf '  FAIL  the edit for "%s" did not apply\n' "$name" && return
	fi
	out=$("$PY" "$HERE/check.py" "$REPO/deploy" --sandbox "$T/sandbox-$N.yaml" 2>&1) || rc=$?
	if ((rc == 1)) && grep -qF -- "$want" <<<"$out"; then
		PASS=$((PASS + 1)) && printf '  ok    refused: %s\n' "$name"
	else
		FAIL=$((FAIL + 1)) && printf '  FAIL  not refused: %s (exit %d; wanted "%s")\n' "$name" "$rc" "$want"
	fi
}
echo "--- ... and a broken sandbox example"
sandbox_mutant "sandbox keeping NET_RAW" "capabilities.drop lacks ALL" '0,/drop: \["ALL"\]/s//drop: ["NET_ADMIN"]/'
sandbox_mutant "sandbox namespace without Pod Security restricted" "pod-security.kubernetes.io/enforce is baseline" \
	's|enforce: restricted|enforce: baseline|'
sandbox_mutant "sandbox running as root" "runAsNonRoot is not true" 's|runAsNonRoot: true|runAsNonRoot: false|'

printf '%d passed, %d failed\n' "$PASS" "$FAIL"
((FAIL == 0))
