#!/usr/bin/env bash
# test/manifests/helm.sh HELM KUBECTL: deploy/helm/ renders, for the same
# values, the objects the kustomizations render (helmdiff.py), one row per
# pair; ends with "N passed, N failed". Run by check.sh (make manifests)
# when a helm binary is there, and by e2e/k8s/deploy.sh, which always has
# one (e2e/k8s/build.sh builds the pinned Helm).
#
#   default values                    deploy/
#   cni dirs of GKE, of k3s           deploy/overlays/gke/, deploy/overlays/k3s/
#   mode=uninstall                    deploy/ without its DaemonSet + deploy/uninstall/
#   e2e/k8s/helm-values.yaml          e2e/k8s/overlay/install/ (and its uninstall)
#   a broken copy of the chart        must differ (the comparison can fail)
#   misspelt values, an unknown mode  refused (values.schema.json, the template)
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
HELM=$1 KUBECTL=$2
PY=/usr/bin/python3
T=$(mktemp -d /tmp/ng-helm.XXXXXX)
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0 N=0
# What `helm template` assumes of the cluster it does not ask: a release the
# chart's kubeVersion admits, whatever client libraries this helm has.
KV=--kube-version=1.33.0

# compare HELM-ARGS -- KUSTOMIZE-DIR... [--without KIND/NAME]: helmdiff.py's
# words on stdout; fails when the two differ (or one does not render).
compare() {
	local hargs=() kdirs=() wo=() f=() d
	while [ "$1" != -- ]; do hargs+=("$1") && shift; done
	shift
	while [ $# -gt 0 ]; do
		case $1 in --without) wo+=(--without "$2") && shift 2 ;; *) kdirs+=("$1") && shift ;; esac
	done
	N=$((N + 1))
	"$HELM" template boxxkite-netguard "${CHART:-$REPO/deploy/helm}" "$KV" "${hargs[@]}" >"$T/h$N.yaml" 2>"$T/err" ||
		{ echo "helm template: $(cat "$T/err")" && return 1; }
	for d in "${kdirs[@]}"; do
		f+=("$T/k$N-${#f[@]}.yaml")
		"$KUBECTL" kustomize "$d" >"${f[-1]}" 2>"$T/err" || { echo "kubectl kustomize $d: $(cat "$T/err")" && return 1; }
	done
	"$PY" "$HERE/helmdiff.py" "$T/h$N.yaml" "${f[@]}" "${wo[@]}"
}
# pair LABEL HELM-ARGS -- KUSTOMIZE-DIR...: a row, passing when they agree.
pair() {
	local label=$1 out
	shift
	if out=$(compare "$@" 2>&1); then
		PASS=$((PASS + 1)) && printf '  ok    %s: %s\n' "$label" "$out"
	else
		FAIL=$((FAIL + 1)) && printf '  FAIL  %s\n' "$label" && printf '%s\n' "$out" | sed 's/^/        /'
	fi
}

D=$REPO/deploy E=$REPO/e2e/k8s
echo "--- deploy/helm/ against the kustomizations ($("$HELM" version --short 2>/dev/null))"
pair "default values = deploy/" -- "$D"
pair "GKE's CNI dirs = deploy/overlays/gke/" --set cni.binDir=/home/kubernetes/bin -- "$D/overlays/gke"
pair "k3s's CNI dirs = deploy/overlays/k3s/" --set cni.confDir=/var/lib/rancher/k3s/agent/etc/cni/net.d \
	--set cni.binDir=/var/lib/rancher/k3s/data/cni -- "$D/overlays/k3s"
pair "agent.metricsOnNodeIP = deploy/overlays/metrics/" --set agent.metricsOnNodeIP=true -- "$D/overlays/metrics"
pair "agent.enabled=false = deploy/overlays/resolve-only/" --set agent.enabled=false -- "$D/overlays/resolve-only"
pair "mode=uninstall = deploy/ less its DaemonSet, + deploy/uninstall/" --set mode=uninstall -- \
	"$D" "$D/uninstall" --without DaemonSet/boxxkite-netguard
pair "e2e/k8s/helm-values.yaml = e2e/k8s/overlay/install/" -f "$E/helm-values.yaml" -- "$E/overlay/install"
pair "... with mode=uninstall = overlay/install/ less its DaemonSet, + overlay/uninstall/" \
	-f "$E/helm-values.yaml" --set mode=uninstall -- "$E/overlay/install" "$E/overlay/uninstall" \
	--without DaemonSet/boxxkite-netguard

# The comparison can fail: a copy of the chart whose agent may surge.
cp -r "$D/helm" "$T/chart"
sed -i 's/maxSurge: 0/maxSurge: 1/' "$T/chart/templates/daemonset.yaml"
if out=$(CHART=$T/chart compare -- "$D" 2>&1); then
	FAIL=$((FAIL + 1)) && echo "  FAIL  a broken copy of the chart (maxSurge: 1) renders the same as deploy/"
elif grep -q 'maxSurge: chart 1, kustomization 0' <<<"$out"; then
	PASS=$((PASS + 1)) && echo "  ok    refused: a broken copy of the chart (maxSurge: 1 differs from deploy/)"
else
	FAIL=$((FAIL + 1)) && echo "  FAIL  a broken copy of the chart: not the difference expected" && printf '%s\n' "$out" | sed 's/^/        /'
fi
# refused LABEL WANT HELM-ARGS...: helm template fails, saying WANT.
refused() {
	local label=$1 want=$2
	shift 2
	if "$HELM" template x "${CHART:-$D/helm}" "$KV" "$@" >/dev/null 2>"$T/err"; then
		FAIL=$((FAIL + 1)) && echo "  FAIL  $label: renders"
	elif grep -qF -- "$want" "$T/err"; then
		PASS=$((PASS + 1)) && echo "  ok    refused: $label ($want)"
	else
		FAIL=$((FAIL + 1)) && echo "  FAIL  $label: not the refusal expected: $(cat "$T/err")"
	fi
}
refused "a misspelt value (cni.confdir: the schema)" "additional properties 'confdir' not allowed" --set cni.confdir=/x
refused "mode=remove (the schema)" "value must be one of 'install', 'uninstall'" --set mode=remove
# Without the schema, the template itself refuses an unknown mode.
rm "$T/chart/values.schema.json"
CHART=$T/chart refused "mode=remove without the schema (the template)" "mode must be install or uninstall" --set mode=remove
printf '%d passed, %d failed\n' "$PASS" "$FAIL"
((FAIL == 0))
