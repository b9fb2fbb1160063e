# shellcheck shell=bash
# e2e/lib/calls.sh: conflist variants, direct plugin calls, error and log assertions, world sweeps: sourced by e2e/lib.sh (see its header); not a test script.

# ---- the suites' helpers: conflist variants, direct calls, assertions -------
#
#   conf_variant NAME PYCODE    a variant of pod-network.conflist; prints its path
#   ng_stdin NAME [VERSION [PYCODE]]   our entry's stdin for pod NAME, as libcni builds it
#   ng_call VERB STDIN [VAR=VALUE...]  the real binary, on the node, env + stdin
#   ng_pod_call VERB NAME [STDIN]      ng_call with pod NAME's CNI_* environment
#   ng_error_is CODE TEXT       the last ng_call failed exactly like the spec says
#   world_tables                namespaces of this world that hold our table
#   t_row LABEL TEXT OK [WHY]   one row from a verdict computed by the caller

# conf_variant NAME PYCODE: renders $W_TMP/net.d/NAME.conflist from the world's
# pod-network.conflist after running PYCODE (python) with `c` bound to the
# conflist and `e` to the boxxkite-netguard entry; prints the path.
conf_variant() {
	local out=$W_TMP/net.d/${1:?conf_variant NAME PYCODE}.conflist
	"$PY" -c '
import json, sys
c = json.load(open(sys.argv[1]))
e = [p for p in c["plugins"] if p["type"] == "boxxkite-netguard"][0]
exec(sys.argv[3])
with open(sys.argv[2], "w") as f:
    json.dump(c, f, indent=1)
' "$W_TMP/net.d/pod-network.conflist" "$out" "${2:-}" || return
	echo "$out"
}

# ng_stdin NAME [VERSION [PYCODE]]: what libcni writes to our plugin's stdin
# for pod NAME (after pod_add): the boxxkite-netguard entry of $(_conflist),
# "name", "cniVersion" (VERSION, else the pod's, else the conflist's),
# "prevResult" (the pod's cached result, its cniVersion set to the same) and
# "runtimeConfig" (the pod's annotations, when the entry has the capability).
# PYCODE may then edit the dict `s` (e.g. 'del s["prevResult"]').
ng_stdin() {
	local name=${1:?ng_stdin NAME} d=$W_TMP/pods/$1
	"$PY" -c '
import json, os, sys
conflist, result, ann_file, ver_file, version, code = sys.argv[1:7]
c = json.load(open(conflist))
e = [p for p in c["plugins"] if p["type"] == "boxxkite-netguard"][0]
if not version and os.path.exists(ver_file):
    version = open(ver_file).read().strip()
version = version or c["cniVersion"]
s = dict(e, name=c["name"], cniVersion=version)
if os.path.exists(result):
    s["prevResult"] = dict(json.load(open(result)), cniVersion=version)
cap = "io.kubernetes.cri.pod-annotations"
if (e.get("capabilities") or {}).get(cap) and os.path.exists(ann_file):
    s["runtimeConfig"] = {cap: json.loads(open(ann_file).read())}
exec(code)
print(json.dumps(s))
' "$(_conflist)" "$d/result" "$d/annotations" "$d/version" "${2:-}" "${3:-}"
}

# _in_node CMD...: CMD in the node's namespace with the world's resolver,
# where a runtime runs its plugins (as _cni does for cnirun.py).
_in_node() {
	# shellcheck disable=SC2016 # $1 and $@ belong to the inner sh
	nsenter --net="$(_ns_path "$W_NODE")" unshare --mount --propagation private \
		sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' sh "$W_TMP/resolv.conf" "$@"
}

# ng_call VERB STDIN_FILE [VAR=VALUE...]: runs the real binary as a runtime
# does: CNI_COMMAND=VERB plus the given variables (and PATH) as its whole
# environment, STDIN_FILE on stdin, inside the node's namespace. stdout goes
# to $W_TMP/ng.out, stderr to $W_TMP/ng.err; returns the exit status
# (128+N when a signal killed it).
ng_call() {
	local verb=$1 in=$2
	shift 2
	_in_node env -i PATH="$PATH" CNI_COMMAND="$verb" "$@" "$NG_BIN" \
		<"$in" >"$W_TMP/ng.out" 2>"$W_TMP/ng.err"
}

# ng_pod_env NAME: pod NAME's CNI_* variables, one VAR=VALUE per line.
ng_pod_env() {
	printf '%s\n' "CNI_CONTAINERID=$(_pod_var "$1" id)" "CNI_NETNS=$(_ns_path "$(pod_ns "$1")")" \
		"CNI_IFNAME=eth0" "CNI_ARGS=$(_pod_var "$1" args)" "CNI_PATH=$W_TMP/bin"
}

# ng_pod_call VERB NAME [STDIN_FILE]: ng_call with pod NAME's environment and
# (by default) ng_stdin NAME.
ng_pod_call() {
	local verb=$1 name=$2 in=${3:-} vars
	if [[ -z $in ]]; then
		in=$W_TMP/pods/$name/stdin.json
		ng_stdin "$name" >"$in" || return
	fi
	mapfile -t vars < <(ng_pod_env "$name")
	ng_call "$verb" "$in" "${vars[@]}"
}

# ng_error_is CODE TEXT [RC]: the last ng_call (exit status RC, default $?)
# ended as the spec says an error ends: exit status 1 (not a signal),
# stdout exactly one line holding the error object, its code CODE and its
# msg containing TEXT. Says what differs otherwise.
ng_error_is() {
	local code=$1 text=$2 rc=${3:-$?}
	if ((rc != 1)); then
		echo "exit status $rc, want 1 (stdout: $(head -c 300 "$W_TMP/ng.out"))"
		head -c 300 "$W_TMP/ng.err"
		return 1
	fi
	"$PY" -c '
import json, sys
raw = open(sys.argv[1], "rb").read()
code, text = int(sys.argv[2]), sys.argv[3]
lines = raw.split(b"\n")
if len(lines) != 2 or lines[1] != b"":
    sys.exit("stdout is not exactly one line: %r" % raw[:300])
try:
    e = json.loads(lines[0])
except ValueError:
    sys.exit("stdout is not JSON: %r" % raw[:300])
if not isinstance(e, dict) or set(e) - {"cniVersion", "code", "msg", "details"}:
    sys.exit("not an error object: %r" % raw[:300])
if e.get("code") != code:
    sys.exit("code %r, want %d: %s" % (e.get("code"), code, e.get("msg")))
if text not in e.get("msg", ""):
    sys.exit("msg %r does not contain %r" % (e.get("msg"), text))
print("code %d: %s" % (code, e["msg"][:200]))
' "$W_TMP/ng.out" "$code" "$text"
}

# world_tables: every namespace of this world holding an inet
# boxxkite_netguard table, one name per line (nothing: none anywhere).
world_tables() {
	local ns
	while read -r ns; do
		[[ -e /run/netns/$ns ]] || continue
		{ nsenter --net="/run/netns/$ns" nft list table inet boxxkite_netguard ||
			nsenter --net="/run/netns/$ns" nft list table netdev boxxkite_netguard; } >/dev/null 2>&1 &&
			echo "$ns"
	done < <(sort -u "$W_TMP/netns")
	return 0
}

# t_row LABEL TEXT OK [WHY]: counts and prints one row for a verdict the
# caller computed (OK = 0 passes); WHY is shown on failure.
t_row() {
	if [[ $3 == 0 ]]; then
		t_ok
		_row "$1" "$2" PASS
		_t_record PASS "$1"
	else
		t_bad
		_row "$1" "$2" FAIL
		_t_record FAIL "$1"
		[[ -z ${4:-} ]] || printf '%s\n' "$4" | sed 's/^/    | /' | head -20 || true
	fi
	return 0
}

# log_has POD VERB DECISION [REASON_TEXT]: the decision log has a line for pod
# POD with that verb and decision (and a reason containing REASON_TEXT);
# prints the line found, or the pod's lines when there is none.
log_has() {
	"$PY" -c '
import json, sys
pod, verb, decision, text = sys.argv[2:6]
mine = []
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        sys.exit("not JSON: %r" % line)
    if o.get("pod_name") != pod:
        continue
    mine.append(line.strip())
    if o.get("verb") == verb and o.get("decision") == decision and text in o.get("reason", ""):
        print(line.strip())
        sys.exit(0)
print("\n".join(mine[-5:]) or "no line for pod %s" % pod)
sys.exit(1)
' "$W_TMP/netguard.log" "$1" "$2" "$3" "${4:-}"
}

# chain_error_is CODE TEXT OUT: OUT (what pod_add/pod_check/pod_del printed)
# is boxxkite-netguard's error object with code CODE and TEXT in its msg.
chain_error_is() {
	"$PY" -c '
import json, sys
code, text, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
try:
    e = json.loads(out)
except ValueError:
    sys.exit("output is not JSON: %r" % out[:300])
if not isinstance(e, dict) or e.get("plugin") != "boxxkite-netguard" or "ips" in e:
    sys.exit("did not fail in boxxkite-netguard: %s" % out[:300])
if e.get("code") != code:
    sys.exit("code %r, want %d: %s" % (e.get("code"), code, e.get("msg")))
if text not in e.get("msg", ""):
    sys.exit("msg does not name %r: %s" % (text, e.get("msg")))
print("code %d: %s" % (code, e["msg"]))
' "$1" "$2" "$3"
}

# kill_tree PID: stops PID (so it starts nothing more), TERMs its
# descendants (deepest first) and then PID itself, all by process id. For a
# script's own background jobs, on a signal, before world_down.
kill_tree() {
	local c
	kill -STOP "$1" 2>/dev/null || return 0
	# shellcheck disable=SC2013 # the file is a list of PIDs, words
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do kill_tree "$c"; done
	kill -TERM "$1" 2>/dev/null
	kill -CONT "$1" 2>/dev/null
	return 0
}

# world_sweep: after world_down, deletes any namespace still named after this
# world ($W_ID-*: created by a job that was cut off while world_down ran).
world_sweep() {
	local ns
	[[ -n ${W_ID:-} ]] || return 0
	for ns in $(ip netns list | awk '{print $1}' | grep "^$W_ID-"); do
		ip netns delete "$ns" 2>/dev/null
	done
	return 0
}

