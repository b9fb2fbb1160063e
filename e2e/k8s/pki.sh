# shellcheck shell=bash
# e2e/k8s/pki.sh: the cluster's certificates and kubeconfigs, made with
# openssl for each run (sourced by e2e/k8s/cluster.sh; its variables).
#
# One CA signs everything: the apiserver's serving certificate (the node IP,
# the kubernetes Service IP and its DNS names as SANs: in-cluster clients
# verify them), and one client certificate per component, whose CN and O
# are the user and group the apiserver's RBAC and Node authorizer expect.
# The kubelet's own serving certificate is self-signed by the kubelet (the
# apiserver is not told to verify it). ServiceAccount tokens are signed
# with their own key pair. EC P-256 keys: generated in milliseconds.
# Valid for two days: a test cluster lives minutes.

_kc_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# _kc_cert NAME SUBJECT EXTENDED-KEY-USAGE [SAN]: $KC_PKI/NAME.{key,crt}.
_kc_cert() {
	local name=$1 subj=$2 eku=$3 san=${4:-} d=$KC_PKI
	_kc_key "$d/$name.key" &&
		openssl req -new -key "$d/$name.key" -subj "$subj" -out "$d/$name.csr" 2>/dev/null &&
		{
			echo "basicConstraints=critical,CA:FALSE"
			echo "keyUsage=critical,digitalSignature,keyEncipherment"
			echo "extendedKeyUsage=$eku"
			[ -z "$san" ] || echo "subjectAltName=$san"
		} >"$d/$name.ext" &&
		openssl x509 -req -in "$d/$name.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" \
			-set_serial "0x$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')" -days 2 \
			-extfile "$d/$name.ext" -out "$d/$name.crt" 2>/dev/null &&
		rm -f "$d/$name.csr" "$d/$name.ext"
}

# _kc_kubeconfig NAME: $KC_PKI/NAME.kubeconfig, for the user in NAME.crt.
_kc_kubeconfig() {
	cat >"$KC_PKI/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: ngk
  cluster:
    server: https://$KC_NODE_IP:6443
    certificate-authority: $KC_PKI/ca.crt
users:
- name: $1
  user:
    client-certificate: $KC_PKI/$1.crt
    client-key: $KC_PKI/$1.key
contexts:
- name: ngk
  context:
    cluster: ngk
    user: $1
current-context: ngk
EOF
}

kc_pki() {
	local d=$KC_PKI n
	mkdir -p "$d" && chmod 700 "$d" || return 1
	_kc_key "$d/ca.key" &&
		openssl req -x509 -new -key "$d/ca.key" -subj "/CN=ngk-ca-$KC_ID" -days 2 \
			-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
			-out "$d/ca.crt" 2>/dev/null || return 1
	_kc_cert apiserver "/CN=kube-apiserver" serverAuth \
		"IP:$KC_NODE_IP,IP:$KC_API_SVC_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost" ||
		return 1
	# The apiserver's client certificate towards the kubelet (exec, logs):
	# system:masters passes the kubelet's webhook authorization.
	_kc_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth || return 1
	_kc_cert admin "/O=system:masters/CN=kubernetes-admin" clientAuth || return 1
	_kc_cert controller-manager "/CN=system:kube-controller-manager" clientAuth || return 1
	_kc_cert scheduler "/CN=system:kube-scheduler" clientAuth || return 1
	_kc_cert kube-proxy "/CN=system:kube-proxy" clientAuth || return 1
	_kc_cert kubelet "/O=system:nodes/CN=system:node:$KC_NODE_NAME" clientAuth || return 1
	for n in admin controller-manager scheduler kube-proxy kubelet; do _kc_kubeconfig "$n" || return 1; done
	_kc_key "$d/sa.key" && openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
}
