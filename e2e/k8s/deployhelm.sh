# shellcheck shell=bash
# Checks given to t_check as `eval '...'` are single-quoted on purpose (they
# expand when the row runs); `timed VAR` sets VAR_rc, VAR_ms, VAR_out.
# shellcheck disable=SC2016,SC2154,SC2034
# e2e/k8s/deployhelm.sh: deploy/helm/ in the test cluster, the rows of
# e2e/k8s/deploy.sh's last part (sourced after deployfns.sh; its variables):
# the chart renders what the kustomizations render (test/manifests/helm.sh),
# `helm install` with e2e/k8s/helm-values.yaml (the values of the test
# overlay) runs the installer as `kubectl apply -k` did, a sandbox is
# enforced, and removal goes as the README says: `helm upgrade --set
# mode=uninstall` restores the node, `helm uninstall` removes the rest.

# hm ARGS...: the pinned helm (e2e/k8s/build.sh), as cluster admin, in the
# node's namespace; its cache and config in the temp dir.
hm() {
	HELM_CACHE_HOME=$KC_T/helm/cache HELM_CONFIG_HOME=$KC_T/helm/config HELM_DATA_HOME=$KC_T/helm/data \
		nsenter --net="/run/netns/$KC_NODE" -- "$K8S_BIN/helm" --kubeconfig="$KC_PKI/admin.kubeconfig" "$@"
}

dp_helm_rows() {
	local chart=$KC_ROOT/deploy/helm values=$HERE/helm-values.yaml t0 dsp
	t_check "deploy/helm/ renders what the kustomizations render, value for value (test/manifests/helm.sh)" \
		"$KC_ROOT/test/manifests/helm.sh" "$K8S_BIN/helm" "$K8S_BIN/kubectl"
	t_check "helm lint deploy/helm/ (with the test values)" hm lint "$chart" -f "$values"

	t0=$(kc_ms)
	# (helm's --wait takes a DaemonSet of maxUnavailable 1 on one node as
	# ready with no pod ready: the rollout status says when it is.)
	t_check "helm install boxxkite-netguard deploy/helm -f e2e/k8s/helm-values.yaml: DaemonSet rolled out" \
		eval 'hm install boxxkite-netguard "$chart" -f "$values" --wait --timeout 180s &&
			k -n boxxkite-netguard rollout status ds/boxxkite-netguard --timeout=180s'
	kc_say "helm install ready in $(($(kc_ms) - t0)) ms"
	dsp=$(ds_pod)
	t_check "helm: the entry merged after the primary, the binary installed, the taint (re-set, then) removed" \
		eval 'has "bridge portmap boxxkite-netguard" conflist_plugins "$PRIMARY" && cmp "$KC_CNI_BIN/boxxkite-netguard" "$NG_STATIC" && kc_wait 30 untainted'
	t_check "helm: the agent container Ready, /readyz answers on the node" \
		eval '[ "$(pod_field boxxkite-netguard "$dsp" "{.status.containerStatuses[?(@.name==\"agent\")].ready}")" = true ] && kc_in "$KC_NODE" curl -sf -m 3 http://127.0.0.1:9617/readyz >/dev/null'
	k apply -f "$W_TMP/sandbox.yaml" >/dev/null
	kc_wait 90 pod_ready "$SB" sandbox >/dev/null
	timed base kx "$SB" sandbox sidecar true
	timed hl2 kx "$SB" sandbox sidecar curl -m 3 -sSv http://169.254.169.254/
	t_check "helm: a sandbox enforced again: kubectl exec -c sidecar -- curl 169.254.169.254 refused in $hl2_ms ms" \
		refused_fast hl2 $((base_ms + 2000))
	t_check "helm: storage by name reached" has storage-ok kx "$SB" sandbox sandbox curl -m 5 -sS http://storage.test:443/
	k -n "$SB" delete pod sandbox --wait=true --timeout=60s >/dev/null 2>&1

	t_check "helm upgrade --reuse-values --set mode=uninstall --wait: the installer gone, the uninstall DaemonSet done" \
		eval 'hm upgrade boxxkite-netguard "$chart" --reuse-values --set mode=uninstall --wait --timeout 120s &&
			! k -n boxxkite-netguard get ds boxxkite-netguard >/dev/null 2>&1 &&
			k -n boxxkite-netguard rollout status ds/boxxkite-netguard-uninstall --timeout=60s'
	t_check "helm: the node as before (the primary's conflist byte for byte, the bin dir, no side file, no table)" \
		eval 'cmp "$PRIMARY" "$W_TMP/primary.before" && diff <(ls -A "$KC_CNI_BIN") "$W_TMP/bin.before" &&
			diff <(ls -A "$KC_NETD") <(echo 10-bridge.conflist) && diff <(node_tables) "$W_TMP/tables.before"'
	t_check "helm uninstall --wait: the release and its namespace gone" \
		eval 'hm uninstall boxxkite-netguard --wait --timeout 90s && kc_wait 90 ns_gone'
}
