#!/usr/bin/env bash
# e2e/cli.sh: the command line as a new user meets it on a node (issue 15,
# "CLI and docs"): every command's --help describes that command, the
# node-side commands name the option the user gave (--netns, --pid) in their
# errors, never the CNI_NETNS of the plugin's own protocol, a process that
# does not exist is called that, and deploy/README.md's dry-run example runs
# as written. Touches nothing but a temp dir; creates no namespace. Ends with
# "N passed, N failed".
set -euo pipefail
# shellcheck source=e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ -x $NG_BIN ]] || { echo "cli.sh: $NG_BIN not built (run make)" >&2 && exit 1; }
W_TMP=$(mktemp -d /tmp/ng-cli.XXXXXX)
trap 'rm -rf "$W_TMP"' EXIT
section() { printf '\n== %s\n' "$1"; }

# ran CMD...: runs the binary, keeping stdout+stderr in $W_TMP/out and the
# exit status in RC.
ran() {
	RC=0
	"$NG_BIN" "$@" >"$W_TMP/out" 2>&1 || RC=$?
	cat "$W_TMP/out"
}
says() { grep -qF -- "$1" "$W_TMP/out"; }

# ---------------------------------------------------------------------------
section "every command's --help describes that command"
help_of() { # CMD MIN_LINES OPTION...: usage line of CMD, MIN_LINES lines, each OPTION explained
	local cmd=$1 min=$2 opt
	shift 2
	ran "$cmd" --help >/dev/null
	((RC == 0)) || { echo "exit $RC" && return 1; }
	head -n1 "$W_TMP/out" | grep -q "^usage: boxxkite-netguard $cmd " || { head -n1 "$W_TMP/out" && return 1; }
	(($(wc -l <"$W_TMP/out") >= min)) || { echo "only $(wc -l <"$W_TMP/out") lines" && return 1; }
	says "Exit status" || { echo "no exit status" && return 1; }
	for opt in "$@"; do
		grep -Eq "^ +$opt( |$)" "$W_TMP/out" || { echo "option $opt not explained" && return 1; }
	done
	# Another command's usage is not this command's help.
	! grep -v "^usage: boxxkite-netguard $cmd " "$W_TMP/out" | grep -q '^usage: '
}
t_check "install --help: install's usage, options, exit status" \
	help_of install 10 --entry --conf-dir --bin-dir --binary --watch --wait --dry-run
t_check "uninstall --help: uninstall's own" help_of uninstall 6 --conf-dir --bin-dir --dry-run
# shellcheck disable=SC2016 # $1 belongs to the inner bash
t_check "...and not install's options" bash -c '! "$1" uninstall --help | grep -q -- "--entry"' _ "$NG_BIN"
t_check "stats --help: more than a usage line" help_of stats 8 --netns --pid --prometheus
t_check "status --help: more than a usage line" help_of status 8 --json --state-dir --names
t_check "logs --help: more than a usage line" help_of logs 8 --netns --pid --group --duration --count
t_check "observe --help: more than a usage line" \
	help_of observe 12 --pod --category --json --since --follow --count --duration --state-dir
# shellcheck disable=SC2016
t_check "help lists every command and points to COMMAND --help" bash -c '
	out=$("$1" help) && for c in version verify stats logs observe install uninstall; do
		grep -q "^  $c " <<<"$out" || exit 1
	done && grep -q "COMMAND --help" <<<"$out"' _ "$NG_BIN"

# ---------------------------------------------------------------------------
section "errors name --netns/--pid, and say what is wrong"
# A PID that is surely free: one that just exited (and 999999, as a user
# would type it, when it is free too).
sleep 0 &
DEAD=$!
wait "$DEAD"
PIDS=("$DEAD")
[[ -e /proc/999999 ]] || PIDS+=(999999)
: >"$W_TMP/regular-file"
no_cni_netns() { ! says CNI_NETNS || { echo "mentions CNI_NETNS" && return 1; }; }
# target_error CMD WANT ARGS...: exit 2, the message WANT, no CNI_NETNS.
target_error() {
	local cmd=$1 want=$2 extra=()
	shift 2
	[[ $cmd == logs ]] && extra=(--group 7)
	ran "$cmd" "${extra[@]}" "$@"
	((RC == 2)) && says "boxxkite-netguard $cmd: $want" && no_cni_netns
}
for cmd in stats logs observe verify; do
	for pid in "${PIDS[@]}"; do
		t_check "$cmd --pid $pid: no such process" target_error "$cmd" "--pid $pid: no such process" --pid "$pid"
	done
	t_check "$cmd --netns MISSING: no such file" \
		target_error "$cmd" "--netns $W_TMP/missing: No such file" --netns "$W_TMP/missing"
	t_check "$cmd --netns a regular file: not a network namespace" \
		target_error "$cmd" "--netns $W_TMP/regular-file: not a network namespace" --netns "$W_TMP/regular-file"
	t_check "$cmd --netns a pid namespace: not a network namespace" \
		target_error "$cmd" "--netns /proc/self/ns/pid: " --netns /proc/self/ns/pid
	t_check "$cmd --netns and --pid together: exactly one" \
		target_error "$cmd" "give exactly one of --netns PATH and --pid PID" --netns /x --pid 1
done

# ---------------------------------------------------------------------------
section "status without a state dir: nothing was recorded here"
no_state_dir() { # exit 0 as --help says, JSON with no pod, and says why
	ran status --json --state-dir "$W_TMP/no-such-dir" >/dev/null
	((RC == 0)) || { echo "exit $RC" && return 1; }
	"$PY" -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["pods"]==[] and s["exit"]==0 and "no state dir" in s["source"], s' "$W_TMP/out"
}
t_check "status --json, no state dir: exit 0, a JSON view without pods" no_state_dir
no_state_table() {
	RC=0
	"$NG_BIN" status --state-dir "$W_TMP/no-such-dir" >"$W_TMP/out" 2>"$W_TMP/err" || RC=$?
	((RC == 0)) && grep -q '^agent: not running' "$W_TMP/out" && grep -q '^pods: 0: ' "$W_TMP/out" &&
		grep -q 'no state dir' "$W_TMP/err"
}
t_check "status, no state dir: exit 0, the header, the reason on stderr" no_state_table

# ---------------------------------------------------------------------------
section "deploy/README.md: the dry-run example runs as written"
# The README's sh block holding `install --dry-run`, run in a temp dir that
# has what the example names: netguard.json (an entry the plugin accepts)
# and ./copy-of-net.d (a node's config).
readme_example() {
	local bin_override=${1:-} cmd
	cmd=$(awk '/^ *```sh$/{b=1; next} /^ *```$/{b=0} b && /install --dry-run/ {sub(/^ +/, ""); print}' \
		"$REPO_DIR/deploy/README.md")
	[[ -n $cmd ]] || { echo "no install --dry-run line in an sh block of deploy/README.md" && return 1; }
	# (the example's last option is --bin-dir)
	[[ -z $bin_override ]] || cmd="${cmd%%--bin-dir *}--bin-dir $bin_override"
	rm -rf "$W_TMP/ex" && mkdir -m 0755 "$W_TMP/ex" "$W_TMP/ex/copy-of-net.d" "$W_TMP/ex/bin"
	cp "$REPO_DIR/conf/boxxkite-netguard.json" "$W_TMP/ex/netguard.json"
	echo '{"cniVersion":"0.3.1","name":"kindnet","plugins":[{"type":"ptp"}]}' >"$W_TMP/ex/copy-of-net.d/10-kindnet.conflist"
	ln -s "$NG_BIN" "$W_TMP/ex/bin/boxxkite-netguard"
	echo "$cmd"
	[[ -z $bin_override || $cmd == *"--bin-dir $bin_override" ]] || return 2
	(cd "$W_TMP/ex" && PATH=$W_TMP/ex/bin:$PATH bash -euc "$cmd") &&
		grep -q '"type": "ptp"' <<<"$(cd "$W_TMP/ex" && PATH=$W_TMP/ex/bin:$PATH bash -euc "$cmd" 2>/dev/null)"
}
t_check "the example exits 0 and prints the merged conflist" readme_example
old_example() { # the example as it was: refused, for the reason the README now gives
	! readme_example /tmp >"$W_TMP/old.out" 2>&1 && grep -q "/tmp is writable by every user" "$W_TMP/old.out"
}
t_check "...which the old example (--bin-dir /tmp) is not: refused as world-writable" old_example

t_summary
