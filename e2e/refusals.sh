#!/usr/bin/env bash
# refusals: every configuration and annotation refusal of the guide, through
# the runtime-exact chain (loopback, bridge + host-local, then our plugin with
# the refused entry, as libcni runs them). For each: the chain's ADD fails
# with our error (the CNI code, a message naming the key or the entry), the
# decision log says "refused", the pod's namespace holds no table (nor does
# any other namespace of the world), and the runtime's DEL of the failed pod
# still succeeds (a DEL must never strand a pod on a config problem).
#   code 7   0.0.0.0/0, ::/0, prefixes shorter than minPrefixV4/V6, CHANGEME,
#            allow entries and DNS servers covering a metadata address,
#            unknown keys, malformed values;
#   code 100 annotation grants outside egress.envelope (naming the entry);
#   code 101 unknown or malformed netguard.boxxkite.io/ annotations;
#   code 102 the opt-in annotation where opt-in is off.
# And a refused re-ADD leaves the table already in place exactly as it was.
# Ends with "N passed, N failed"; exit status non-zero on failure.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "refusals.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
# No traffic is probed here: the pods need no loopback network.
export POD_NO_LOOPBACK=1

N=0
# _refused CODE TEXT OUT: the chain's output OUT is our error with CODE and
# TEXT in its msg; pod r$N has no table; nothing anywhere has one; the
# decision log says refused (error for 11); DEL through the chain succeeds.
_refused() {
	local code=$1 text=$2 out=$3 p=r$N why
	why=$(chain_error_is "$code" "$text" "$out" 2>&1) || { echo "$why" && return 1; }
	if pod_has_table "$p"; then echo "the pod has a table" && return 1; fi
	[[ -z $(world_tables) ]] || { echo "tables in: $(world_tables)" && return 1; }
	# The decision log line: in logFile, or on stderr (where the runtime
	# keeps it) when the config itself could not be read. A name that did
	# not resolve is an "error" (try again), not a refusal.
	local decision=refused
	((code != 11)) || decision=error
	if ! log_has "$p" ADD "$decision" "$text" >/dev/null 2>&1 &&
		! grep -q '"decision":"'"$decision"'"' "$W_TMP/$p.stderr"; then
		echo "no \"$decision\" decision line, neither in logFile nor on stderr"
		return 1
	fi
	pod_del "$p" >/dev/null || { echo "DEL of the refused pod failed" && return 1; }
	pod_netns_rm "$p"
}

# refuse LABEL CODE TEXT PYCODE [ANNOTATIONS [K8S_NS]]: one case, one row.
# PYCODE edits our entry `e` (and the conflist `c`) of a copy of the world's
# conflist; "-" keeps it as it is. The cases are independent (a pod and a
# conflist each), so up to LANES run at once; `flush` waits for them and
# prints their rows in order.
LANES=${NG_REFUSAL_LANES:-3}
RUNNING=() ROWS=()
# On a signal, the cases in flight stop before the world goes.
stop_cases() {
	local p
	for p in "${RUNNING[@]}"; do kill_tree "$p"; done
	for p in "${RUNNING[@]}"; do wait "$p" 2>/dev/null; done
	world_down
	world_sweep
}
trap 'stop_cases; _on_signal 130' INT
trap 'stop_cases; _on_signal 143' TERM
refuse() {
	N=$((N + 1))
	(
		# shellcheck disable=SC2030 # the case's own counts, summed by flush
		T_PASS=0 T_FAIL=0
		_refuse_case "$@"
		echo "$T_PASS $T_FAIL" >"$W_TMP/r$N.counts"
	) >"$W_TMP/r$N.row" 2>&1 &
	RUNNING+=("$!")
	ROWS+=("$N")
	if ((${#RUNNING[@]} >= LANES)); then
		wait "${RUNNING[0]}" || true
		RUNNING=("${RUNNING[@]:1}")
	fi
}
flush() {
	local pid n p f
	for pid in "${RUNNING[@]}"; do wait "$pid" || true; done
	RUNNING=()
	for n in "${ROWS[@]}"; do
		cat "$W_TMP/r$n.row"
		read -r p f <"$W_TMP/r$n.counts" 2>/dev/null || { p=0 f=1 && echo "case r$n: no verdict"; }
		# shellcheck disable=SC2031 # this shell's counters, not the subshell's
		T_PASS=$((T_PASS + p)) T_FAIL=$((T_FAIL + f))
	done
	ROWS=()
}
_refuse_case() {
	local label=$1 code=$2 text=$3 code_py=$4 annot=${5:-'{}'} ns=${6:-$ENFORCED_NS} conf out rc=0 why
	[[ $code_py == - ]] && code_py=''
	conf=$(conf_variant "r$N" "$code_py")
	out=$(POD_CONFLIST=$conf pod_add "r$N" "$ns" "$annot" 2>"$W_TMP/r$N.stderr") || rc=$?
	if ((rc == 0)); then
		t_row "$label" "ADD succeeded" 1 "$out"
		POD_CONFLIST=$conf pod_del "r$N" >/dev/null || true
		return 0
	fi
	if why=$(POD_CONFLIST=$conf _refused "$code" "$text" "$out" 2>&1); then
		t_row "$label" "code $code, nothing applied" 0
	else
		t_row "$label" "" 1 "$why"
	fi
}

A='e["egress"]["allow"]'
echo "== configuration refusals (code 7)"
refuse "allow 0.0.0.0/0:443" 7 "egress.allow[0]" "$A = [\"0.0.0.0/0:443\"]"
refuse "allow [::/0]:443" 7 "egress.allow[0]" "$A = [\"[::/0]:443\"]"
refuse "envelope 0.0.0.0/0:443" 7 "egress.envelope[0]" 'e["egress"]["envelope"] = ["0.0.0.0/0:443"]'
refuse "ingress.sources ::/0" 7 "ingress.sources[1]" 'e["ingress"]["sources"] = ["10.99.0.0/24", "::/0"]'
refuse "allow 10.0.0.0/7 (< minPrefixV4 8)" 7 "shorter than the minimum /8" "$A = [\"10.0.0.0/7:443\"]"
refuse "allow [fd00::/16] (< minPrefixV6 32)" 7 "shorter than the minimum /32" "$A = [\"[fd00::/16]:443\"]"
refuse "minPrefixV4 24, allow 10.20.0.0/16" 7 "shorter than the minimum /24" \
	"e['egress']['minPrefixV4'] = 24; $A = [\"10.20.0.0/16:443\"]"
refuse "minPrefixV6 64, envelope /48" 7 "egress.envelope[0]" \
	'e["egress"]["minPrefixV6"] = 64; e["egress"]["envelope"] = ["[fd00:20::/48]:443"]'
refuse "CHANGEME in dns.servers" 7 "CHANGEME" 'e["dns"]["servers"] = ["CHANGEME"]'
refuse "CHANGEME in an allow entry" 7 "CHANGEME" "$A = [\"storage.CHANGEME.example:443\"]"
refuse "CHANGEME in a key" 7 "CHANGEME" 'e["ingress"]["CHANGEME"] = 1'
refuse "allow 169.254.169.254:80" 7 "metadata address 169.254.169.254" "$A = [\"169.254.169.254:80\"]"
refuse "allow 169.254.0.0/16:80 (covers metadata)" 7 "metadata address" "$A = [\"169.254.0.0/16:80\"]"
refuse "allow 100.64.0.0/10:443 (Alibaba's)" 7 "100.100.100.200" "$A = [\"100.64.0.0/10:443\"]"
refuse "allow [fd00:ec2::/64]:80" 7 "fd00:ec2::254" "$A = [\"[fd00:ec2::/64]:80\"]"
refuse "allow [::ffff:169.254.169.254]:80" 7 "metadata address" "$A = [\"[::ffff:169.254.169.254]:80\"]"
refuse "allow [64:ff9b::/96]:80 (NAT64 metadata)" 7 "metadata address" "$A = [\"[64:ff9b::/96]:80\"]"
refuse "dns.servers 169.254.169.254" 7 "dns.servers[0]" 'e["dns"]["servers"] = ["169.254.169.254"]'
refuse "allow covering a metadata.extra address" 7 "10.20.1.5" 'e["metadata"] = {"extra": ["10.20.1.5"]}'
refuse "unknown top-level key egres" 7 "egres" 'e["egres"] = e.pop("egress")'
refuse "unknown key egress.alow" 7 "alow" 'e["egress"]["alow"] = e["egress"].pop("allow")'
refuse "unknown key ingress.port" 7 "port" 'e["ingress"]["port"] = 8080'
refuse "unknown key enforce.namespace" 7 "namespace" 'e["enforce"]["namespace"] = "sandboxes"'
refuse "denyAction deny" 7 "denyAction" 'e["denyAction"] = "deny"'
refuse "ingress.ports [\"8080\"] (a string)" 7 "ingress.ports[0]" 'e["ingress"]["ports"] = ["8080"]'
refuse "allow 10.20.1.5 (no port)" 7 "port is required" "$A = [\"10.20.1.5\"]"
refuse "allow 10.1.2.3/8:443 (host bits)" 7 "egress.allow[0]" "$A = [\"10.1.2.3/8:443\"]"
refuse "allow *.world.test:443 (wildcard in allow)" 7 "egress.allow[0]" "$A = [\"*.world.test:443\"]"
refuse "envelope *.test:443 (one-label suffix)" 7 "egress.envelope[0]" 'e["egress"]["envelope"] = ["*.test:443"]'
refuse "allow ftp://10.20.1.5:443" 7 "protocol" "$A = [\"ftp://10.20.1.5:443\"]"
refuse "allow entry 42 (not a string)" 7 "egress.allow[0]" "$A = [42]"
refuse "allow not an array" 7 "egress.allow" "$A = \"10.20.1.5:443\""
refuse "allow 10.0.0:443 (mistyped address)" 7 "egress.allow[0]" "$A = [\"10.0.0:443\"]"
refuse "enforce.namespaces [\"Bad_NS\"]" 7 "enforce.namespaces[0]" 'e["enforce"]["namespaces"] = ["Bad_NS"]'
refuse "enforce selecting no pod" 7 "selects no pod" 'e["enforce"] = {"namespaces": [], "optInAnnotation": False}'
refuse "optInAnnotation without the capability" 7 "capabilities" 'del e["capabilities"]'
refuse "minPrefixV4 0" 7 "egress.minPrefixV4" 'e["egress"]["minPrefixV4"] = 0'
refuse "minPrefixV6 129" 7 "egress.minPrefixV6" 'e["egress"]["minPrefixV6"] = 129'
refuse "minNameTTL 10" 7 "egress.minNameTTL" 'e["egress"]["minNameTTL"] = 10'
refuse "logFile relative" 7 "logFile" 'e["logFile"] = "netguard.log"'
refuse "dns.servers not-an-ip" 7 "dns.servers[0]" 'e["dns"]["servers"] = ["not-an-ip"]'
refuse "metadata.extra a CIDR" 7 "metadata.extra[0]" 'e["metadata"] = {"extra": ["10.99.0.0/24"]}'
refuse "ingress.ports without sources" 7 "ingress.sources" 'del e["ingress"]["sources"]'
refuse "log true (an object or false)" 7 "log: must be an object" 'e["log"] = True'
refuse "log.nflogGroup 65053 (the observer's)" 7 "log.nflogGroup" 'e["log"] = {"nflogGroup": 65053}'
refuse "allowNode \"yes\" (not a bool)" 7 "ingress.allowNode" 'e["ingress"]["allowNode"] = "yes"'
refuse "allow name that does not resolve: 11 (retry)" 11 "nothere.world.test" "$A = [\"nothere.world.test:443\"]"
refuse "allow name resolving to metadata" 7 "$MD4 (an address of $IMDS_NAME): covers the cloud metadata" \
	"$A = [\"$IMDS_NAME:80\"]"

flush
# README "Decision log": pod_namespace and pod_name come from CNI_ARGS; a
# refused config must not make the line anonymous (r1: allow 0.0.0.0/0).
refusal_names_pod() {
	local l
	l=$(grep -h '"decision":"refused"' "$W_TMP/r1.stderr" "$W_TMP/netguard.log" 2>/dev/null | grep '"container_id":"'"$(_pod_var r1 id)"'"')
	[[ $l == *'"pod_namespace":"sandboxes"'* && $l == *'"pod_name":"r1"'* ]] || { echo "the line: $l" && return 1; }
}
t_check "config refusal: its log line names the pod" refusal_names_pod

echo "== annotation grants outside the envelope (code 100)"
g() { echo "{\"netguard.boxxkite.io/egress\": \"$1\"}"; }
refuse "grant 10.20.1.7:8443 (port outside)" 100 '"10.20.1.7:8443"' - "$(g 10.20.1.7:8443)"
refuse "grant 192.0.2.1:443 (address outside)" 100 '"192.0.2.1:443"' - "$(g 192.0.2.1:443)"
refuse "grant udp://10.20.1.7:443 (protocol)" 100 '"udp://10.20.1.7:443"' - "$(g udp://10.20.1.7:443)"
refuse "grant [fd00:21::1]:443 (v6 outside)" 100 '"[fd00:21::1]:443"' - "$(g '[fd00:21::1]:443')"
refuse "grant 10.20.1.0/24:443-444 (range outside)" 100 '"10.20.1.0/24:443-444"' - "$(g 10.20.1.0/24:443-444)"
refuse "grant evil.example.com:443 (name)" 100 '"evil.example.com:443"' - "$(g evil.example.com:443)"
refuse "grant world.test:443 (the suffix itself)" 100 '"world.test:443"' - "$(g world.test:443)"
refuse "grant storage.world.testx:443" 100 '"storage.world.testx:443"' - "$(g storage.world.testx:443)"
refuse "grant 169.254.169.254:443 (metadata)" 100 "metadata address" - "$(g 169.254.169.254:443)"
refuse "grant name resolving to metadata" 100 "$MD4 (an address of $IMDS_NAME)" - "$(g "$IMDS_NAME:443")"
refuse "grant 10.0.0.0/7:443 (prefix floor)" 100 "shorter than the minimum" - "$(g 10.0.0.0/7:443)"
refuse "good grant + bad grant: whole ADD refused" 100 '"192.0.2.1:443"' - "$(g '10.20.1.7:443, 192.0.2.1:443')"
refuse "grant with empty envelope" 100 "egress.envelope is empty" 'e["egress"]["envelope"] = []' "$(g 10.20.1.7:443)"

flush
echo "== annotations (codes 101, 102)"
refuse "unknown annotation netguard.boxxkite.io/egres" 101 "netguard.boxxkite.io/egres" - \
	'{"netguard.boxxkite.io/egres": "10.20.1.7:443"}'
refuse "unknown netguard annotation, pod not enforced" 101 "netguard.boxxkite.io/mode" - \
	'{"netguard.boxxkite.io/mode": "strict"}' default
refuse "enforce \"yes\"" 101 "netguard.boxxkite.io/enforce" - '{"netguard.boxxkite.io/enforce": "yes"}'
refuse "egress annotation 10.20.1.7 (no port)" 101 "port is required" - "$(g 10.20.1.7)"
refuse "egress annotation with an empty entry" 101 "entry 2 is empty" - "$(g '10.20.1.7:443,,10.20.1.8:443')"
refuse "egress annotation not a string" 101 "must be a string" - '{"netguard.boxxkite.io/egress": 443}'
refuse "egress annotation CHANGEME" 101 "CHANGEME" - "$(g CHANGEME:443)"
refuse "annotations not an object" 101 "must be an object" - '["netguard.boxxkite.io/enforce"]'
refuse "opt-in annotation where opt-in is off" 102 "enforce.optInAnnotation is false" \
	'e["enforce"]["optInAnnotation"] = False' '{"netguard.boxxkite.io/enforce": "true"}' default

flush
echo "== a refused re-ADD leaves the table in place as it was"
pod_add keep >/dev/null
nft_s() { pod_exec keep nft -s list table inet boxxkite_netguard; }
nft_s >"$W_TMP/keep.before"
re_add_refused() {
	local rc=0
	ng_stdin keep '' 's["runtimeConfig"] = {"io.kubernetes.cri.pod-annotations": {"netguard.boxxkite.io/egress": "192.0.2.1:443"}}' >"$W_TMP/keep.json"
	ng_pod_call ADD keep "$W_TMP/keep.json" || rc=$?
	ng_error_is 100 '"192.0.2.1:443"' "$rc" || return
	nft_s | diff "$W_TMP/keep.before" - && pod_check keep
}
t_check "re-ADD with a bad grant: 100, table unchanged" re_add_refused
t_check "DEL keep" pod_del keep
t_check "no table left anywhere in the world" test -z "$(world_tables)"

t_summary
