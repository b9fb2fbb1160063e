#!/usr/bin/env bash
# hostile: abusive inputs through the real binary, with the environment and
# stdin a runtime would give it (run on the node, i.e. in the world's node
# namespace): truncated, empty and oversized JSON (and the 4 MiB boundary),
# deep nesting, huge annotation values, too many grants, non-UTF-8 bytes, NUL
# and lone surrogates, duplicate keys, a CNI_NETNS that is a regular file, a
# directory, a missing path, another kind of namespace, a symlink to the
# root namespace (/proc/1/ns/net) and the node's own namespace (refused with
# code 4; its ruleset is compared before and after, and a decoy table there
# survives ADD and DEL), ports 0 and 65536, reversed ranges, broken
# environment. Each must end as the spec says an error ends: exit status 1
# (never a signal), stdout exactly the one error object with the expected
# code and a message naming the problem, and no table anywhere in the world.
# Ends with "N passed, N failed"; exit status non-zero on failure.
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $(id -u) -eq 0 ]] || { echo "hostile.sh: needs root (network namespaces)" >&2 && exit 1; }
world_up "${E2E_PREFIX:-nge-}"
H=$W_TMP/h
mkdir -p "$H"

# Pod h has a real network (bridge + host-local only) and no table: the
# hostile calls below play our plugin's turn in its chain.
BRIDGE_ONLY=$(conf_variant bridge-only 'c["plugins"] = c["plugins"][:1]')
POD_CONFLIST=$BRIDGE_ONLY pod_add h >/dev/null
ng_stdin h >"$H/base.json"
mapfile -t HENV < <(ng_pod_env h)

# Every stdin, made in one go. Each file is what the runtime would send,
# with one thing wrong.
"$PY" - "$H" <<'EOF'
import json, os, sys
d = sys.argv[1]
base_raw = open(os.path.join(d, "base.json"), "rb").read().strip()
base = json.loads(base_raw)
MiB = 1024 * 1024

def put(name, data):
    if isinstance(data, dict):
        data = json.dumps(data).encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)

def variant(**kv):
    s = json.loads(base_raw)
    for k, v in kv.items():
        s[k] = v
    return s

def ann(a):
    return variant(runtimeConfig={"io.kubernetes.cri.pod-annotations": a})

def egress(**kv):
    s = json.loads(base_raw)
    s["egress"] = dict(s["egress"], **kv)
    return s

put("empty", b"")
put("trunc-1", base_raw[:1])
put("trunc-half", base_raw[: len(base_raw) // 2])
put("trunc-last", base_raw[:-1])
put("array", b"[]")
put("null", b"null")
put("number", b"42")
put("garbage", b"\x00\x01\x02 not json")
# Sizes: the limit is 4 MiB of stdin. A valid config padded with trailing
# blanks to exactly 4 MiB is read; one byte more is refused.
put("size-limit", base_raw + b" " * (4 * MiB - len(base_raw)))
put("size-over", base_raw + b" " * (4 * MiB + 1 - len(base_raw)))
put("oversized", variant(args={"pad": "x" * (5 * MiB)}))
put("deep-args", base_raw[:-1] + b', "args": ' + b"[" * 100000 + b"]" * 100000 + b"}")
put("deep-ann", base_raw[:-1] + b', "runtimeConfig": {"io.kubernetes.cri.pod-annotations": '
    + b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"}}")
put("ann-huge-egress", ann({"netguard.boxxkite.io/egress": ",".join(["10.20.1.7:443"] * 50000)}))
put("ann-huge-enforce", ann({"netguard.boxxkite.io/enforce": "t" * (1 * MiB)}))
put("ann-257-grants", ann({"netguard.boxxkite.io/egress": ",".join(["10.20.1.7:443"] * 257)}))
put("ann-huge-foreign", ann({"kubectl.kubernetes.io/last-applied-configuration": "y" * (2 * MiB)}))
put("ann-long-entry", ann({"netguard.boxxkite.io/egress": "a" * 3000 + ".world.test:443"}))
# Not UTF-8: a raw 0xff in a value, an overlong "/" in a key, a lone
# surrogate escape, an escaped NUL.
put("utf8-ff", base_raw.replace(b'"name": "', b'"name": "\xff\xfe', 1))
put("utf8-overlong", base_raw[:-1] + b', "runtimeConfig": {"io.kubernetes.cri.pod-annotations": '
    b'{"netguard.boxxkite.io\xc0\xafegress": "10.20.1.7:443"}}}')
put("utf8-surrogate", base_raw[:-1] + b', "args": {"x": "\\ud800"}}')
put("nul-escape", base_raw[:-1] + b', "args": {"x": "a\\u0000b"}}')
# Duplicate keys: at the top, inside prevResult, inside the annotations.
put("dup-top", base_raw[:-1] + b', "egress": {"allow": ["0.0.0.0/1:443"]}}')
put("dup-prev", base_raw.replace(b'"prevResult": {', b'"prevResult": {"ips": [], ', 1))
put("dup-ann", base_raw[:-1] + b', "runtimeConfig": {"io.kubernetes.cri.pod-annotations": '
    b'{"netguard.boxxkite.io/enforce": "true", "netguard.boxxkite.io/enforce": "false"}}}')
put("version-999", variant(cniVersion="9.9.9"))
put("version-020", variant(cniVersion="0.2.0"))
put("version-number", variant(cniVersion=100))
no_prev = json.loads(base_raw)
del no_prev["prevResult"]
put("no-prev", no_prev)
put("prev-ips-string", variant(prevResult=dict(base["prevResult"], ips="10.244.1.9/24")))
put("prev-array", variant(prevResult=[]))
# Ports and ranges.
put("port-0", egress(allow=["10.20.1.5:0"]))
put("port-65536", egress(allow=["10.20.1.5:65536"]))
put("port-huge", egress(allow=["10.20.1.5:99999999999999999999"]))
put("port-negative", egress(allow=["10.20.1.5:-1"]))
put("port-junk", egress(allow=["10.20.1.5:443x"]))
put("range-reversed", egress(allow=["10.20.1.5:500-400"]))
put("range-three", egress(allow=["10.20.1.5:1-2-3"]))
put("env-range-reversed", egress(envelope=["10.0.0.0/8:9000-8000"]))
s = json.loads(base_raw)
s["ingress"] = dict(s["ingress"], ports=[0])
put("ingress-port-0", s)
s = json.loads(base_raw)
s["ingress"] = dict(s["ingress"], ports=[65536])
put("ingress-port-65536", s)
put("ann-port-0", ann({"netguard.boxxkite.io/egress": "10.20.1.7:0"}))
put("ann-port-65536", ann({"netguard.boxxkite.io/egress": "10.20.1.7:65536"}))
put("ann-range-reversed", ann({"netguard.boxxkite.io/egress": "10.20.1.7:444-443"}))
EOF

# ---- helpers -------------------------------------------------------------------
# _env OVERRIDE...: pod h's CNI_* variables with VAR=VALUE overrides applied
# (VAR= empties one), one per line.
_env() {
	local v o
	for v in "${HENV[@]}"; do
		for o in "$@"; do [[ ${o%%=*} == "${v%%=*}" ]] && continue 2; done
		echo "$v"
	done
	for o in "$@"; do echo "$o"; done
}

# hostile LABEL CODE TEXT STDIN [VAR=VALUE...]: ADD (or CNI_COMMAND=...)
# with that stdin and environment: the spec's error, code CODE, TEXT in the
# message, and no table anywhere in the world.
hostile() {
	local label=$1 code=$2 text=$3 in=$4 rc=0 why vars
	shift 4
	[[ $in == /* ]] || in=$H/$in
	mapfile -t vars < <(_env "$@")
	ng_call ADD "$in" "${vars[@]}" || rc=$?
	if ! why=$(ng_error_is "$code" "$text" "$rc" 2>&1); then
		t_row "$label" "exit $rc" 1 "$why"
	elif [[ -n $(world_tables) ]]; then
		t_row "$label" "table left" 1 "tables in: $(world_tables)"
	else
		t_row "$label" "code $code, exit 1" 0
	fi
}

# succeeds LABEL STDIN: ADD works (a table appears), then DEL removes it.
succeeds() {
	local label=$1 in=$H/$2 rc=0 vars
	mapfile -t vars < <(_env)
	ng_call ADD "$in" "${vars[@]}" || rc=$?
	if ((rc != 0)) || ! pod_has_table h; then
		t_row "$label" "exit $rc" 1 "$(head -c 400 "$W_TMP/ng.out")"
		return 0
	fi
	ng_call DEL "$in" "${vars[@]}" || rc=$?
	if ((rc != 0)) || pod_has_table h; then
		t_row "$label" "DEL exit $rc" 1 "$(head -c 400 "$W_TMP/ng.out")"
	else
		t_row "$label" "ADD + DEL ok" 0
	fi
}

echo "== malformed stdin (code 6)"
hostile "empty stdin" 6 "not valid JSON" empty
hostile "truncated after 1 byte" 6 "not valid JSON" trunc-1
hostile "truncated at half" 6 "not valid JSON" trunc-half
hostile "truncated by the last byte" 6 "not valid JSON" trunc-last
hostile "stdin a JSON array" 6 "must be a JSON object" array
hostile "stdin null" 6 "network configuration" null
hostile "stdin a number" 6 "network configuration" number
hostile "stdin binary garbage" 6 "not valid JSON" garbage
succeeds "stdin of exactly 4 MiB is read" size-limit
hostile "stdin of 4 MiB + 1 byte" 6 "larger than 4194304 bytes" size-over
hostile "stdin of 5 MiB (oversized args)" 6 "larger than 4194304 bytes" oversized
hostile "nesting 100000 deep in args" 6 "not valid JSON" deep-args
hostile "nesting 5000 deep in annotations" 6 "not valid JSON" deep-ann
hostile "raw 0xff 0xfe in a string" 6 "not valid JSON" utf8-ff
hostile "overlong UTF-8 in an annotation key" 6 "not valid JSON" utf8-overlong
hostile "lone surrogate \\ud800" 6 "not valid JSON" utf8-surrogate
hostile "escaped NUL \\u0000" 6 "not valid JSON" nul-escape
hostile "duplicate key at the top (egress)" 6 "duplicate" dup-top
hostile "duplicate key inside prevResult" 6 "duplicate" dup-prev
hostile "duplicate annotation key" 6 "duplicate" dup-ann

echo "== huge and malformed values"
hostile "egress annotation of 700 KB" 101 "longer than 16384 bytes" ann-huge-egress
hostile "enforce annotation of 1 MiB" 101 "longer than 16384 bytes" ann-huge-enforce
hostile "257 grants" 101 "more than 256 entries" ann-257-grants
hostile "grant entry of 3000 characters" 101 "longer than" ann-long-entry
succeeds "2 MiB annotation not ours: ignored, ADD works" ann-huge-foreign
hostile "cniVersion 9.9.9" 1 "9.9.9" version-999
hostile "cniVersion 0.2.0" 1 "0.2.0" version-020
hostile "cniVersion a number" 7 "cniVersion" version-number
hostile "no prevResult" 7 "prevResult is required" no-prev
hostile "prevResult.ips a string" 7 "prevResult" prev-ips-string
hostile "prevResult an array" 7 "prevResult" prev-array

echo "== ports and ranges"
hostile "allow port 0" 7 "port out of range" port-0
hostile "allow port 65536" 7 "port out of range" port-65536
hostile "allow port 99999999999999999999" 7 "port out of range" port-huge
hostile "allow port -1" 7 "egress.allow[0]" port-negative
hostile "allow port 443x" 7 "egress.allow[0]" port-junk
hostile "allow range 500-400 (reversed)" 7 "reversed" range-reversed
hostile "allow range 1-2-3" 7 "egress.allow[0]" range-three
hostile "envelope range 9000-8000 (reversed)" 7 "reversed" env-range-reversed
hostile "ingress.ports [0]" 7 "ingress.ports[0]" ingress-port-0
hostile "ingress.ports [65536]" 7 "ingress.ports[0]" ingress-port-65536
hostile "grant port 0" 101 "port out of range" ann-port-0
hostile "grant port 65536" 101 "port out of range" ann-port-65536
hostile "grant range 444-443 (reversed)" 101 "reversed" ann-range-reversed

echo "== environment"
# CNI_COMMAND empty or unset means "not a CNI call" (the binary's CLI):
# usage on stderr, exit 2, nothing on stdout, nothing applied.
cli_mode() {
	local vars rc=0
	mapfile -t vars < <(_env CNI_COMMAND=)
	ng_call ADD "$H/base.json" "${vars[@]}" || rc=$?
	if ((rc != 2)) || [[ -s $W_TMP/ng.out || -n $(world_tables) ]]; then
		echo "exit $rc" && cat "$W_TMP/ng.out" && return 1
	fi
}
t_check "CNI_COMMAND empty: the CLI, exit 2, stdout empty" cli_mode
hostile "CNI_COMMAND FROB" 4 "not a CNI verb" base.json CNI_COMMAND=FROB
hostile "CNI_CONTAINERID empty" 4 "CNI_CONTAINERID" base.json CNI_CONTAINERID=
hostile "CNI_IFNAME empty" 4 "CNI_IFNAME" base.json CNI_IFNAME=
hostile "CNI_NETNS empty on ADD" 4 "CNI_NETNS" base.json CNI_NETNS=
hostile "CNI_ARGS without =" 4 "CNI_ARGS" base.json CNI_ARGS=K8S_POD_NAMESPACE
hostile "CNI_ARGS of 9000 bytes" 4 "CNI_ARGS" base.json "CNI_ARGS=IgnoreUnknown=1;X=$(printf 'x%.0s' {1..9000})"
sed 's/"cniVersion": "1.0.0"/"cniVersion": "0.3.1"/g' "$H/base.json" >"$H/v031.json"
hostile "CHECK at cniVersion 0.3.1" 1 "CHECK needs cniVersion 0.4.0" v031.json CNI_COMMAND=CHECK

echo "== CNI_NETNS that is not the pod's namespace"
touch "$H/regular-file"
mkdir "$H/a-directory"
ln -s "/run/netns/$W_NODE" "$H/link-node-netns"
hostile "CNI_NETNS a regular file" 112 "is not a network namespace" base.json "CNI_NETNS=$H/regular-file"
hostile "CNI_NETNS a directory" 112 "is not a network namespace" base.json "CNI_NETNS=$H/a-directory"
hostile "CNI_NETNS a missing path" 112 "is not a network namespace" base.json "CNI_NETNS=$H/missing"
hostile "CNI_NETNS a pid namespace" 112 "not a network namespace" base.json CNI_NETNS=/proc/self/ns/pid
hostile "CNI_NETNS the plugin's own namespace" 4 "node's own network namespace" base.json CNI_NETNS=/proc/self/ns/net
hostile "CNI_NETNS /dev/null (a device)" 112 "is not a network namespace" base.json CNI_NETNS=/dev/null
# A FIFO: open() must not wait for a writer (ADD refused at once, DEL done at
# once); the call is killed after 3 s so that a hang shows as a failure.
mkfifo "$H/a-fifo"
fifo_call() { # VERB
	local vars rc=0
	mapfile -t vars < <(_env "CNI_NETNS=$H/a-fifo")
	_in_node timeout -s KILL 3 env -i PATH="$PATH" CNI_COMMAND="$1" "${vars[@]}" "$NG_BIN" \
		<"$H/base.json" >"$W_TMP/ng.out" 2>"$W_TMP/ng.err" || rc=$?
	((rc != 137)) || { echo "$1 hung (blocked opening the FIFO?): killed after 3 s" && return 137; }
	return "$rc"
}
fifo_add() {
	local rc=0
	fifo_call ADD || rc=$?
	((rc != 137)) || return 1
	ng_error_is 112 "not a network namespace" "$rc"
}
fifo_del() { fifo_call DEL || { cat "$W_TMP/ng.out" && return 1; }; }
t_check "CNI_NETNS a FIFO: ADD refused with 112 at once" fifo_add
t_check "CNI_NETNS a FIFO: DEL succeeds at once" fifo_del

# The machine's own namespace is never aimed at (a regression would
# firewall the shared machine): the PID-1 guard is exercised below with a
# decoy PID 1, and the own-namespace guard with the world's node.
# The same guard, where it can be exercised safely whatever the machine: a
# PID namespace whose PID 1 lives in a decoy network namespace of this world
# (with a decoy table of our name in it), the plugin started inside it from
# the node. CNI_NETNS=/proc/1/ns/net there is "PID 1's namespace": refused
# with 4, the decoy untouched.
_netns_add "$W_ID-init"
nsenter --net="/run/netns/$W_ID-init" nft add table inet boxxkite_netguard '{ comment "decoy: PID 1'"'"'s own table"; }'
init_rs_before=$(nsenter --net="/run/netns/$W_ID-init" nft -s list ruleset)
pid1_refused() {
	local vars rc=0
	mapfile -t vars < <(_env CNI_NETNS=/proc/1/ns/net)
	# PID 1 is the bash below (it must not exec the last command: `; exit`).
	# shellcheck disable=SC2016 # for the inner bash
	nsenter --net="/run/netns/$W_ID-init" unshare --pid --fork --mount-proc bash -c '
		mount --bind "$1" /etc/resolv.conf || exit 99
		node=$2 in=$3 bin=$4
		shift 4
		nsenter --net="$node" env -i PATH="$PATH" CNI_COMMAND=ADD "$@" "$bin" <"$in"
		exit $?' bash "$W_TMP/resolv.conf" "/run/netns/$W_NODE" "$H/base.json" "$NG_BIN" "${vars[@]}" \
		>"$W_TMP/ng.out" 2>"$W_TMP/ng.err" || rc=$?
	ng_error_is 4 "node's own network namespace" "$rc" || return
	[[ $(nsenter --net="/run/netns/$W_ID-init" nft -s list ruleset) == "$init_rs_before" ]] ||
		{ echo "PID 1's namespace changed" && return 1; }
}
t_check "CNI_NETNS=/proc/1/ns/net, PID 1 in a decoy: code 4" pid1_refused
nsenter --net="/run/netns/$W_ID-init" nft delete table inet boxxkite_netguard

# The world's node namespace (where the plugin runs), directly and by a
# symlink, with a decoy table of our name in it: ADD refused, DEL succeeds,
# and the decoy is still there, unchanged.
node_exec nft add table inet boxxkite_netguard '{ comment "decoy: the node'"'"'s own table"; }'
node_exec nft add chain inet boxxkite_netguard decoy
node_rs_before=$(node_exec nft -s list ruleset)
node_unchanged() { [[ $(node_exec nft -s list ruleset) == "$node_rs_before" ]] || { node_exec nft -s list ruleset && return 1; }; }
node_refused() {
	local vars rc=0
	mapfile -t vars < <(_env "CNI_NETNS=$1")
	ng_call ADD "$H/base.json" "${vars[@]}" || rc=$?
	ng_error_is 4 "node's own network namespace" "$rc" && node_unchanged
}
node_del() {
	local vars
	mapfile -t vars < <(_env "CNI_NETNS=$1")
	ng_call DEL "$H/base.json" "${vars[@]}" && node_unchanged
}
node_check() {
	local vars rc=0
	mapfile -t vars < <(_env "CNI_NETNS=$1" CNI_COMMAND=CHECK)
	ng_call CHECK "$H/base.json" "${vars[@]}" || rc=$?
	ng_error_is 4 "node's own network namespace" "$rc" && node_unchanged
}
t_check "CNI_NETNS the node's netns: code 4, node untouched" node_refused "/run/netns/$W_NODE"
t_check "CNI_NETNS -> node's netns: code 4, node untouched" node_refused "$H/link-node-netns"
t_check "DEL on the node's netns: ok, decoy table kept" node_del "$H/link-node-netns"
t_check "CHECK on the node's netns: code 4" node_check "$H/link-node-netns"
node_exec nft delete table inet boxxkite_netguard

echo "== DEL stays calm"
del_on() {
	local vars
	mapfile -t vars < <(_env "CNI_NETNS=$1")
	ng_call DEL "$H/base.json" "${vars[@]}" || { cat "$W_TMP/ng.out" && return 1; }
	[[ ! -s $W_TMP/ng.out ]] || { echo "stdout: $(cat "$W_TMP/ng.out")" && return 1; }
}
t_check "DEL with CNI_NETNS a regular file: ok" del_on "$H/regular-file"
t_check "DEL with CNI_NETNS a directory: ok" del_on "$H/a-directory"
t_check "DEL with CNI_NETNS missing: ok" del_on "$H/missing"
del_truncated() {
	local vars
	mapfile -t vars < <(_env)
	ng_call DEL "$H/trunc-half" "${vars[@]}"
}
t_check "DEL with truncated stdin: ok (best effort)" del_truncated

t_check "pod h: still no table" test -z "$(world_tables)"
t_check "no plugin process left in the node" test -z "$(ip netns pids "$W_NODE")"
POD_CONFLIST=$BRIDGE_ONLY pod_del h >/dev/null

t_summary
