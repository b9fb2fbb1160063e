#!/usr/bin/env bash
# test/manifests/check.sh [BINARY]: the manifests test of `make test`.
#
# 1. check.py on deploy/ as shipped: must pass (with BINARY, default
#    build/boxxkite-netguard, it also runs the ConfigMap's entry through the
#    plugin's own validation).
# 2. The checker checked: copies of deploy/ with one thing broken each,
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

T=$(mktemp -d /tmp/ng-manifests.XXXXXX)
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0 N=0

echo "--- deploy/ as shipped"
if "$PY" "$HERE/check.py" "$REPO/deploy" "$BIN" | tee "$T/shipped.out" | sed 's/^/  /'; then
	PASS=$((PASS + 1))
else
	FAIL=$((FAIL + 1))
	echo "  FAIL  deploy/ does not pass its checks"
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
p = 'daemonset.yaml'
s = open(p).read()
s = s.replace('path: /healthz', 'path: /readyz')
open(p, 'w').write(s)
PY"
mutant "readiness probe on another port than --listen" "readinessProbe is /readyz on its --listen" \
	'sed -i "s|--listen=127.0.0.1:9617|--listen=127.0.0.1:9618|" daemonset.yaml'
mutant "rolling update with a surge pod (two agents, one lock)" "no surge" \
	'sed -i "s|maxSurge: 0|maxSurge: 1|" daemonset.yaml'
mutant "agent /readyz looks at a CNI bin dir that is not mounted" "agent --cni-bin-dir" \
	'sed -i "s|--cni-bin-dir=/host/opt/cni/bin|--cni-bin-dir=/opt/cni/bin|" daemonset.yaml'
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
	'sed -i "s|^  - daemonset.yaml$|  - daemonset.yaml\n  - network-policy-permissive-optin.yaml|" kustomization.yaml'
mutant "permissive policy without its opt-in label" "AND an opt-in label" \
	'sed -i "/netguard.boxxkite.io\/egress: permissive/d" network-policy-permissive-optin.yaml'
mutant "DaemonSet not tolerating every taint" "tolerates every taint" \
	'sed -i "s|^        - operator: Exists$|        - key: node.kubernetes.io/not-ready\n          operator: Exists|" daemonset.yaml'
mutant "DaemonSet writing where it does not mount" "are the mounted host dirs" \
	'sed -i "s|--conf-dir=/host/etc/cni/net.d|--conf-dir=/etc/cni/net.d|" daemonset.yaml'
mutant "a YAML anchor (outside the subset the checker reads)" "unsupported YAML construct" \
	'sed -i "s|^      priorityClassName: system-node-critical$|      priorityClassName: \&p system-node-critical|" daemonset.yaml'

printf '%d passed, %d failed\n' "$PASS" "$FAIL"
((FAIL == 0))
