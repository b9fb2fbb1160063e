#!/usr/bin/env bash
# e2e/install.sh: `boxxkite-netguard install / install --watch / uninstall`
# with the real binary against a temporary conf dir and bin dir, playing the
# primary CNI the way kindnetd, Cilium and a bridge .conf behave: rewriting
# its conflist (atomically and in place), writing a new file that sorts
# first, a single-plugin .conf, another writer undoing our merge again and
# again. Ends with "N passed, N failed"; exit status non-zero on failure.
#
# It touches nothing but a directory made by mktemp: every command gets
# --conf-dir and --bin-dir explicitly, so the machine's /etc/cni/net.d and
# /opt/cni/bin are never read or written. No root needed (as root it also
# checks that the installer needs no capability: the DaemonSet drops all).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NG=${NG_BIN:-$REPO/build/boxxkite-netguard}
FIX=$REPO/test/unit/install/fixtures/conflists
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=$(command -v /usr/bin/python3 || command -v python3)
export LC_ALL=C # the runtimes sort file names bytewise; so do we here

[[ -x $NG ]] || { echo "install.sh: $NG not built (run make)" >&2 && exit 1; }

T=$(mktemp -d /tmp/ng-install-e2e.XXXXXX)
CONF=$T/net.d BIN=$T/bin
mkdir -m 0755 "$CONF" "$BIN"
WPID=
cleanup() {
	[[ -n $WPID ]] && kill "$WPID" 2>/dev/null && wait "$WPID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASS=0 FAIL=0
ok() { PASS=$((PASS + 1)) && printf '  ok    %s\n' "$1"; }
bad() {
	FAIL=$((FAIL + 1))
	printf '  FAIL  %s\n' "$1"
	[[ -z ${2:-} ]] || printf '%s\n' "$2" | sed 's/^/        /'
}
# check LABEL CMD...: one row.
check() {
	local label=$1
	shift
	if "$@" >/dev/null 2>"$T/check.err"; then ok "$label"; else bad "$label" "$(head -c 400 "$T/check.err")"; fi
}
# within SECONDS CMD...: polls every 50 ms; prints nothing.
within() {
	local end=$((SECONDS + $1))
	shift
	until "$@" 2>/dev/null; do
		((SECONDS < end)) || return 1
		sleep 0.05
	done
}

# log_has FILE LEVEL TEXT: every line of FILE (the installer's stderr) is one
# JSON object of the one log schema (e2e/lib/logschema.py), and one of them
# has LEVEL and TEXT in its msg.
log_has() {
	"$PY" "$E2E_DIR/lib/logschema.py" installer "$1" >/dev/null || { "$PY" "$E2E_DIR/lib/logschema.py" installer "$1"; return 1; }
	"$PY" - "$@" <<'PY'
import json, re, sys
path, level, text = sys.argv[1:4]
hit = False
for n, line in enumerate(open(path), 1):
    o = json.loads(line)
    assert list(o)[:6] == ["ts", "level", "msg", "plugin", "component", "event"], "line %d: %s" % (n, line)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["ts"]), line
    assert o["level"] in ("info", "warn", "error") and o["plugin"] == "boxxkite-netguard", line
    assert o["component"] == "installer" and o["msg"], line
    hit = hit or (o["level"] == level and text in o["msg"])
assert hit, "no %s line saying %r in %s" % (level, text, path)
PY
}

# Every call names the temp dirs: the defaults (/etc/cni/net.d, /opt/cni/bin) are never used.
ng_install() { "$NG" install --conf-dir "$CONF" --bin-dir "$BIN" "$@"; }
ng_uninstall() { "$NG" uninstall --conf-dir "$CONF" --bin-dir "$BIN" "$@"; }

# The primary writing its file: atomically (temp + rename, as kindnetd and
# most agents do) or in place (truncate + write, as a careless one does).
write_atomic() { cp "$2" "$CONF/.primary.tmp" && mv -f "$CONF/.primary.tmp" "$CONF/$1"; }
write_in_place() { cat "$2" >"$CONF/$1"; }

# JSON facts, with the stdlib only.
ours_last() { # FILE: exactly one entry of ours, and it is last
	"$PY" - "$1" <<-'EOF'
	import json, sys
	p = json.load(open(sys.argv[1]))["plugins"]
	ours = [i for i, x in enumerate(p) if x.get("type") == "boxxkite-netguard"]
	sys.exit(0 if ours == [len(p) - 1] else 1)
	EOF
}
no_entry() { # FILE: no entry of ours
	"$PY" -c 'import json,sys; p=json.load(open(sys.argv[1])).get("plugins",[]); sys.exit(any(x.get("type")=="boxxkite-netguard" for x in p))' "$1"
}
primary_kept() { # MERGED ORIGINAL: the merged list minus our entry equals the original
	"$PY" - "$1" "$2" <<-'EOF'
	import json, sys
	m, o = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
	m["plugins"] = [x for x in m["plugins"] if x.get("type") != "boxxkite-netguard"]
	sys.exit(0 if m == o and list(m) == list(o) else 1)
	EOF
}
no_drop() { ours_last "$1" && ! grep -q '"denyAction": "drop"' "$1"; }
first_conf() { find "$CONF" -maxdepth 1 -type f \( -name '*.conf' -o -name '*.conflist' -o -name '*.json' \) -printf '%f\n' | sort | head -n1; }
is_first() { [[ $(first_conf) == "$1" ]]; }
no_stray_files() { ! find "$CONF" "$BIN" -name '*.tmp' | grep -q .; }
gone() { [[ ! -e $1 && ! -L $1 ]]; }
mode_is() { [[ $(stat -c %a "$2") == "$1" ]]; }
same_inode() { [[ $(stat -c %i "$2") == "$1" ]]; }
# exited CODE ERRFILE TEXT: the last command's status and message
exited() { [[ $1 == "$2" ]] && grep -q -- "$4" "$3"; }
only_files() { # DIR NAME...: exactly these entries, dotfiles included
	local d=$1
	shift
	[[ $(find "$d" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort | tr '\n' ' ') == "$* " ]]
}
start_watch() {
	: >"$T/watch.log"
	# The binary itself in the background (not a function, which would be a
	# subshell): $! must be the watcher, for the signal to reach it.
	"$NG" install --conf-dir "$CONF" --bin-dir "$BIN" --entry "$E" --watch 2>>"$T/watch.log" &
	WPID=$!
	within 5 grep -q "watching" "$T/watch.log"
}
stop_watch() {
	local rc=0
	kill -TERM "$WPID"
	wait "$WPID" || rc=$?
	WPID=
	return "$rc"
}
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }

mkdir "$T/entry"
E=$T/entry/netguard.json # its own directory, like a mounted ConfigMap
cp "$FIX/entry.json" "$E"
cp "$FIX/10-kindnet.conflist" "$T/kindnet.orig"
cp "$FIX/05-cilium.conflist" "$T/cilium.orig"
write_atomic 10-kindnet.conflist "$T/kindnet.orig"
echo '{"cniVersion":"0.3.1","name":"lo","type":"loopback"}' >"$CONF/99-loopback.conf"

echo "--- one-shot install"
check "install exits 0" ng_install --entry "$E"
check "binary installed, mode 0755" mode_is 755 "$BIN/boxxkite-netguard"
check "...identical to the build" cmp -s "$BIN/boxxkite-netguard" "$NG"
check "entry merged once, last" ours_last "$CONF/10-kindnet.conflist"
check "the primary's plugins and keys kept, in order" primary_kept "$CONF/10-kindnet.conflist" "$T/kindnet.orig"
check "file mode 0644 kept" mode_is 644 "$CONF/10-kindnet.conflist"
ino=$(stat -c %i "$CONF/10-kindnet.conflist")
check "second install exits 0" ng_install --entry "$E"
check "second install did not rewrite the file" same_inode "$ino" "$CONF/10-kindnet.conflist"
write_atomic 10-kindnet.conflist "$T/kindnet.orig"
ng_install --entry "$E" --dry-run >"$T/dry.out" 2>/dev/null
check "--dry-run prints the merged file" grep -q '"type": "boxxkite-netguard"' "$T/dry.out"
check "...and writes nothing" no_entry "$CONF/10-kindnet.conflist"
ng_install --entry "$E" 2>/dev/null
sha=$(sha256sum <"$CONF/10-kindnet.conflist")
"$PY" -c 'import json,sys; e=json.load(open(sys.argv[1])); e["egress"]["allow"]=["0.0.0.0/0:443"]; json.dump(e,open(sys.argv[2],"w"))' \
	"$E" "$T/bad.json"
rc=0 && ng_install --entry "$T/bad.json" 2>"$T/bad.err" || rc=$?
check "an entry the plugin refuses: exit 1, message names it" \
	exited "$rc" 1 "$T/bad.err" "0.0.0.0/0 would match every address"
check "...and the conflist is untouched" test "$(sha256sum <"$CONF/10-kindnet.conflist")" = "$sha"

echo "--- watch: the primary rewrites its conflist"
if start_watch; then ok "watcher started"; else bad "watcher started" "$(cat "$T/watch.log")"; fi
t0=$(date +%s%N)
write_atomic 10-kindnet.conflist "$T/kindnet.orig"
if within 5 ours_last "$CONF/10-kindnet.conflist"; then
	ok "atomic rewrite by the primary: entry back in $(ms_since "$t0") ms"
else bad "atomic rewrite by the primary: entry back" "$(tail -3 "$T/watch.log")"; fi
t0=$(date +%s%N)
write_in_place 10-kindnet.conflist "$T/kindnet.orig"
if within 5 ours_last "$CONF/10-kindnet.conflist"; then
	ok "in-place rewrite by the primary: entry back in $(ms_since "$t0") ms"
else bad "in-place rewrite by the primary: entry back" "$(tail -3 "$T/watch.log")"; fi
# A ConfigMap edit: kubelet swaps the file in by a rename in its directory.
edit_entry() { "$PY" -c "$2" "$FIX/entry.json" "$T/entry/.new" && mv -f "$T/entry/.new" "$E" && : "$1"; }
edit_entry "deny by drop" 'import json,sys; e=json.load(open(sys.argv[1])); e["denyAction"]="drop"; json.dump(e,open(sys.argv[2],"w"))'
check "an entry edit reaches the conflist" within 5 grep -q '"denyAction": "drop"' "$CONF/10-kindnet.conflist"
edit_entry "refused" 'import json,sys; e=json.load(open(sys.argv[1])); e["egress"]["allow"]=["0.0.0.0/0:443"]; json.dump(e,open(sys.argv[2],"w"))'
check "an edit the plugin refuses is logged, the entry accepted before kept" \
	within 5 grep -q "0.0.0.0/0 would match every address.*keeping the entry accepted before" "$T/watch.log"
check "...as a JSON line of level error" log_has "$T/watch.log" error "keeping the entry accepted before"
write_atomic 10-kindnet.conflist "$T/kindnet.orig"
check "...and the primary's next rewrite gets the entry accepted before" \
	within 5 grep -q '"denyAction": "drop"' "$CONF/10-kindnet.conflist"
cp "$FIX/entry.json" "$T/entry/.new" && mv -f "$T/entry/.new" "$E"
check "the original entry back" within 5 no_drop "$CONF/10-kindnet.conflist"
check "entry edits are not taken for a fight" test "$(grep -c fighting "$T/watch.log")" = 0
check "SIGTERM: the watcher exits 0" stop_watch
check "...and leaves the entry in place" ours_last "$CONF/10-kindnet.conflist"

echo "--- watch: a new primary sorts first; a single-plugin .conf"
start_watch || bad "watcher restarted" "$(cat "$T/watch.log")"
write_atomic 05-cilium.conflist "$T/cilium.orig"
check "new first file 05-cilium.conflist gets the entry" within 5 ours_last "$CONF/05-cilium.conflist"
cp "$FIX/10-bridge.conf" "$T/bridge.conf"
write_atomic 01-bridge.conf "$T/bridge.conf"
check "a .conf first in line: a generated conflist sorts before it" \
	within 5 is_first 01-bridge-boxxkite-netguard.conflist
check "...holding the .conf's plugin and our entry, last" ours_last "$CONF/01-bridge-boxxkite-netguard.conflist"
check "...and the .conf itself untouched" cmp -s "$CONF/01-bridge.conf" "$T/bridge.conf"
rm "$CONF/01-bridge.conf"
check "the .conf removed: the generated copy goes too" \
	within 5 gone "$CONF/01-bridge-boxxkite-netguard.conflist"
check "05-cilium.conflist is first again" is_first 05-cilium.conflist
check "...and holds the entry" ours_last "$CONF/05-cilium.conflist"
check "no fight reported for ordinary changes" test "$(grep -c fighting "$T/watch.log")" = 0
check "SIGTERM: exits 0" stop_watch

echo "--- watch: another writer keeps undoing the merge"
start_watch || bad "watcher restarted" "$(cat "$T/watch.log")"
undone=0
for _ in 1 2 3 4 5 6; do
	write_atomic 05-cilium.conflist "$T/cilium.orig"
	# The 6th re-merge waits out the back-off (2 s).
	within 10 ours_last "$CONF/05-cilium.conflist" && undone=$((undone + 1))
done
check "re-merged after each of 6 rewrites" test "$undone" = 6
check "loud log line: fighting another writer" \
	grep -q "fighting another writer: 05-cilium.conflist rewritten 5 times in" "$T/watch.log"
grep "fighting" "$T/watch.log" | head -n1 | sed 's/^/        /'
check "log lines are JSON (ts, level, msg...); the fight is level warn" \
	log_has "$T/watch.log" warn "fighting another writer: 05-cilium.conflist"
check "SIGTERM: exits 0" stop_watch

echo "--- uninstall"
# The primary's own version of 05-cilium.conflist is the last it wrote.
check "uninstall exits 0" ng_uninstall
check "10-kindnet.conflist restored byte for byte" cmp -s "$CONF/10-kindnet.conflist" "$T/kindnet.orig"
check "05-cilium.conflist restored byte for byte" cmp -s "$CONF/05-cilium.conflist" "$T/cilium.orig"
check "binary removed" test ! -e "$BIN/boxxkite-netguard"
check "no side file, generated file or temp file left" \
	only_files "$CONF" 05-cilium.conflist 10-kindnet.conflist 99-loopback.conf
check "uninstall again: nothing to do, exit 0" ng_uninstall
check "no temp file left anywhere" no_stray_files

echo "--- refusals and waiting"
ln -s "$T/kindnet.orig" "$CONF/00-link.conflist"
rc=0 && ng_install --entry "$E" 2>"$T/err" || rc=$?
check "a symlinked primary is refused (exit 1)" exited "$rc" 1 "$T/err" "00-link.conflist is a symlink"
check "...said as a JSON line of level error" log_has "$T/err" error "install failed: "
rm "$CONF/00-link.conflist"
ln -s "$CONF" "$T/net.d-link"
rc=0 && "$NG" install --conf-dir "$T/net.d-link" --bin-dir "$BIN" --entry "$E" 2>"$T/err" || rc=$?
check "a symlinked conf dir is refused (exit 1)" exited "$rc" 1 "$T/err" "net.d-link is a symlink"
mkdir -m 0755 "$T/empty"
rc=0 && "$NG" install --conf-dir "$T/empty" --bin-dir "$BIN" --entry "$E" 2>"$T/err" || rc=$?
check "no network config and no --wait: exit 1" exited "$rc" 1 "$T/err" "no network config"
(sleep 1 && cp "$T/kindnet.orig" "$T/empty/.w" && mv "$T/empty/.w" "$T/empty/10-kindnet.conflist") &
check "--wait 10: installs once the primary writes its config" \
	"$NG" install --conf-dir "$T/empty" --bin-dir "$BIN" --entry "$E" --wait 10
wait
check "...into it" ours_last "$T/empty/10-kindnet.conflist"

if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null; then
	echo "--- no capabilities (as the DaemonSet runs it: root, capabilities dropped)"
	check "install with every capability dropped" \
		setpriv --inh-caps=-all --bounding-set=-all -- "$NG" install --conf-dir "$CONF" --bin-dir "$BIN" --entry "$E"
	check "uninstall with every capability dropped" \
		setpriv --inh-caps=-all --bounding-set=-all -- "$NG" uninstall --conf-dir "$CONF" --bin-dir "$BIN"
fi

printf '%d passed, %d failed\n' "$PASS" "$FAIL"
[[ -z ${E2E_SUMMARY_FILE:-} ]] || printf '%d passed, %d failed\n' "$PASS" "$FAIL" >"$E2E_SUMMARY_FILE"
((FAIL == 0))
