# shellcheck shell=bash
# e2e/k8s/control.sh: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler and kube-proxy, each started by kc_spawn in the node's
# namespaces and waited for (sourced by e2e/k8s/cluster.sh; its variables).
#
# Every listener is in the node's network namespace: etcd, the controller
# manager's and scheduler's secure ports and kube-proxy's health ports on
# its loopback; the apiserver on the node IP (the kubelet, kubectl and the
# kubernetes Service's endpoint reach it there).

kc_etcd_up() {
	# --unsafe-no-fsync: a throw-away store; fsync costs seconds per write
	# on a busy shared disk and proves nothing here.
	kc_spawn etcd "$KC_BIN/etcd" --name ngk --data-dir "$KC_T/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster ngk=http://127.0.0.1:2380 --unsafe-no-fsync --log-level warn
	kc_wait 30 _kc_etcd_ok
}
_kc_etcd_ok() { kc_in "$KC_NODE" curl -s -m 2 http://127.0.0.1:2379/health | grep -q '"health":"true"'; }

# kc_apiserver_start: spawned, not waited for (kc_up does other work
# meanwhile); kc_apiserver_up waits too.
kc_apiserver_up() { kc_apiserver_start && kc_wait 90 _kc_api_ok; }
kc_apiserver_start() {
	local p=$KC_PKI
	kc_spawn kube-apiserver "$KC_BIN/kube-apiserver" \
		--advertise-address="$KC_NODE_IP" --bind-address="$KC_NODE_IP" --secure-port=6443 \
		--etcd-servers=http://127.0.0.1:2379 --service-cluster-ip-range="$KC_SVC_CIDR" \
		--client-ca-file="$p/ca.crt" --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" \
		--kubelet-client-certificate="$p/apiserver-kubelet-client.crt" \
		--kubelet-client-key="$p/apiserver-kubelet-client.key" --kubelet-preferred-address-types=InternalIP \
		--service-account-issuer=https://kubernetes.default.svc.cluster.local \
		--service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--allow-privileged=true --profiling=false --cert-dir="$KC_T/apiserver"
}
_kc_api_ok() { [ "$(kc_kubectl get --raw /readyz 2>/dev/null)" = ok ]; }

# kc_apiserver_stop: the apiserver ended by its PID (TERM, as a control
# plane restart ends it; KILL after 10 s). Until kc_apiserver_restart,
# kc_wait fails at once (a spawned process has exited): wait otherwise.
kc_apiserver_stop() {
	local pid
	pid=$(kc_pid_of kube-apiserver) || return 1
	kc_stop_pid "$pid"
	# KILLed, a process of this size takes a moment to exit on a loaded
	# machine (it answered kill -0 100 ms later): it is this shell's child,
	# wait reaps it.
	wait "$pid" 2>/dev/null
	! kc_alive "$pid"
}
# kc_apiserver_restart: started again with the same flags, in the same
# place of KC_PIDS (kc_down stops it in the same order), and waited for.
kc_apiserver_restart() {
	local i last
	for i in "${!KC_NAMES[@]}"; do
		[ "${KC_NAMES[$i]}" = kube-apiserver ] && break
	done
	[ "${KC_NAMES[$i]}" = kube-apiserver ] && ! kc_alive "${KC_PIDS[$i]}" || return 1
	kc_apiserver_start
	last=$((${#KC_PIDS[@]} - 1))
	KC_PIDS[i]=${KC_PIDS[last]}
	unset "KC_PIDS[last]" "KC_NAMES[last]"
	kc_wait 90 _kc_api_ok
}

# The controller manager signs nothing but ServiceAccount tokens and
# publishes kube-root-ca.crt (the CA in-cluster clients trust); leader
# election is off (one instance, and it starts at once).
kc_controllers_up() {
	local p=$KC_PKI
	kc_spawn kube-controller-manager "$KC_BIN/kube-controller-manager" \
		--kubeconfig="$p/controller-manager.kubeconfig" \
		--authentication-kubeconfig="$p/controller-manager.kubeconfig" \
		--authorization-kubeconfig="$p/controller-manager.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false --use-service-account-credentials=true \
		--service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
		--cluster-signing-cert-file="$p/ca.crt" --cluster-signing-key-file="$p/ca.key" \
		--service-cluster-ip-range="$KC_SVC_CIDR" --cluster-cidr="$KC_CLUSTER_CIDR" --allocate-node-cidrs=false \
		--profiling=false
	kc_spawn kube-scheduler "$KC_BIN/kube-scheduler" --kubeconfig="$p/scheduler.kubeconfig" \
		--authentication-kubeconfig="$p/scheduler.kubeconfig" --authorization-kubeconfig="$p/scheduler.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false --profiling=false
	kc_wait 60 _kc_healthz 10257 && kc_wait 60 _kc_healthz 10259
}
_kc_healthz() { [ "$(kc_in "$KC_NODE" curl -sk -m 2 "https://127.0.0.1:$1/healthz")" = ok ]; }

# kube-proxy, iptables mode (what most clusters and kind run): the
# kubernetes Service (10.96.0.1:443 -> the node IP:6443) and kube-dns
# (10.96.0.10:53 -> dnsmasq) for pods and hostNetwork pods alike. It must
# change nothing outside the node's namespace: conntrack sizes and timeouts
# are left alone (0), no route_localnet (localhostNodePorts false).
kc_proxy_up() {
	cat >"$KC_T/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $KC_PKI/kube-proxy.kubeconfig
hostnameOverride: $KC_NODE_NAME
mode: ${KC_PROXY_MODE:-iptables}
clusterCIDR: $KC_CLUSTER_CIDR
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  localhostNodePorts: false
nodePortAddresses: [primary]
EOF
	kc_spawn kube-proxy "$KC_BIN/kube-proxy" --config="$KC_T/kube-proxy.yaml" --v=2
	kc_wait 60 _kc_proxy_ok
}
_kc_proxy_ok() { kc_in "$KC_NODE" curl -sf -m 2 -o /dev/null http://127.0.0.1:10256/healthz; }

# kc_dns_service: kube-dns as a Service without a selector, its one
# endpoint the fake resolver (dnsmasq in $KC_DNS), as CoreDNS would be.
kc_dns_service() {
	kc_kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  clusterIP: $KC_DNS_SVC_IP
  ports:
    - {name: dns, port: 53, protocol: UDP}
    - {name: dns-tcp, port: 53, protocol: TCP}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-fake
  namespace: kube-system
  labels:
    kubernetes.io/service-name: kube-dns
    endpointslice.kubernetes.io/managed-by: boxxkite-netguard-e2e
addressType: IPv4
ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
endpoints:
  - addresses: [$KC_DNS_IP]
    conditions: {ready: true}
EOF
}
