# shellcheck shell=bash
# e2e/lib/verify.sh: running `boxxkite-netguard verify` and reading its JSON,
# for e2e/verify.sh and e2e/heldsockets.sh (sourced after e2e/lib.sh); not
# a test script.

# run_verify OUT ARGS...: verify --json ARGS, the JSON in OUT.json, the exit
# status in OUT.rc, the wall time in ms in OUT.ms. Never fails by itself.
run_verify() {
	local out=$W_TMP/$1 t0 rc=0
	shift
	t0=$(date +%s%N)
	# In the node's namespace, as on a node: the host-side row looks for the
	# pod's peer there.
	node_exec "$NG_BIN" verify --json "$@" >"$out.json" 2>"$out.err" || rc=$?
	echo "$rc" >"$out.rc"
	echo $((($(date +%s%N) - t0) / 1000000)) >"$out.ms"
}

# rc_is OUT N: verify exited N.
rc_is() {
	local got
	got=$(cat "$W_TMP/$1.rc")
	[[ $got == "$2" ]] || { echo "exit status $got, wanted $2" && cat "$W_TMP/$1.err" && return 1; }
}

# vrow OUT CHECK VERDICTS [TEXT...]: the rows named CHECK (exact, or re:REGEX)
# exist, and each has a verdict in VERDICTS (PASS, FAIL|AMBIGUOUS, ...) and
# every TEXT in its detail (!TEXT: not in it).
VROW_PY='
import json, re, sys
d = json.load(open(sys.argv[1]))
check, verdicts, texts = sys.argv[2], sys.argv[3].split("|"), sys.argv[4:]
if check.startswith("re:"):
    rows = [r for r in d["rows"] if re.fullmatch(check[3:], r["check"])]
else:
    rows = [r for r in d["rows"] if r["check"] == check]
if not rows:
    print("no row %r among: %s" % (check, ", ".join(r["check"] for r in d["rows"])))
    sys.exit(1)
bad = 0
for r in rows:
    ok = r["verdict"] in verdicts
    for t in texts:
        ok &= (t[1:] not in r["detail"]) if t.startswith("!") else (t in r["detail"])
    bad += not ok
    print("%s %-40s %-9s %s" % ("ok " if ok else "BAD", r["check"], r["verdict"], r["detail"]))
sys.exit(1 if bad else 0)
'
vrow() { "$PY" -c "$VROW_PY" "$W_TMP/$1.json" "${@:2}"; }

# vexpr OUT PYTHON-EXPR: EXPR is true of d, the parsed JSON (rows: d["rows"]).
vexpr() {
	"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
if not eval(sys.argv[2]):
    print("false: " + sys.argv[2])
    print(json.dumps(d, indent=1)[:3000])
    sys.exit(1)
' "$W_TMP/$1.json" "$2"
}

