#!/usr/bin/env bash
# smoke: the shortest proof that the plugin works in a real chain. One pod in
# an enforced namespace: ADD -> table present -> metadata refused at once
# (reject, not a silent drop) while allowed storage still connects ->
# CHECK -> DEL -> table gone. Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

world_up "${E2E_PREFIX:-nge-}"

t_check "ADD (loopback, bridge+host-local, netguard)" pod_add web
t_check "table inet boxxkite_netguard present" pod_has_table web
# A 2 s probe timeout so that a drop shows as "timeout", never as a pass.
expect "metadata $MD4:80 refused in < 1 s" refused 1000 pod:web -- tcp "$MD4" 80 2000
expect "storage $STORE4:443 still connects" connected 1000 pod:web -- tcp "$STORE4" 443 2000
t_check "decision log says enforced" grep -q '"verb":"ADD","decision":"enforced"' "$W_TMP/netguard.log"
t_check "CHECK passes" pod_check web
t_check "DEL succeeds" pod_del web
t_check_not "table gone after DEL" pod_has_table web

t_summary
