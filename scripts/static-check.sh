#!/usr/bin/env bash
# scripts/static-check.sh BINARY: `make static-check`, part of `make test`.
# The static binary (`make static`, what the DaemonSet image carries) is
# static, and does its job without any library of the machine: with an
# empty environment and no loader it prints its version and runs the
# installer's dry run against a temp conf dir. Ends with "N passed, N failed".
set -euo pipefail
BIN=${1:?usage: static-check.sh BINARY}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T=$(mktemp -d /tmp/ng-static.XXXXXX)
trap 'rm -rf "$T"' EXIT
PASS=0 FAIL=0
check() {
	local label=$1
	shift
	if "$@" >"$T/out" 2>&1; then
		PASS=$((PASS + 1)) && printf '  ok    %s\n' "$label"
	else
		FAIL=$((FAIL + 1)) && printf '  FAIL  %s\n' "$label" && sed 's/^/        /' "$T/out" | head -n 10
	fi
}
static_elf() { file -L "$BIN" | grep -q 'static-pie linked\|statically linked'; }
no_needed() { ! readelf -d "$BIN" | grep -q NEEDED; }
mkdir -m 0755 "$T/conf" "$T/bin"
echo '{"cniVersion":"0.3.1","name":"kindnet","plugins":[{"type":"ptp"}]}' >"$T/conf/10-kindnet.conflist"
dry_run() {
	env -i "$BIN" install --dry-run --entry "$REPO/conf/boxxkite-netguard.json" --conf-dir "$T/conf" \
		--bin-dir "$T/bin" | grep -q '"type": "boxxkite-netguard"'
}
echo "--- $BIN"
check "statically linked" static_elf
check "needs no shared library (no NEEDED entry)" no_needed
check "version, with an empty environment" env -i "$BIN" version
check "install --dry-run merges the entry" dry_run
printf '%d passed, %d failed\n' "$PASS" "$FAIL"
((FAIL == 0))
