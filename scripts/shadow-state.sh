#!/usr/bin/env bash
# shadow-state.sh CMD...: runs CMD so that nothing it runs can write into
# the machine's own state dir. A test feeds the plugin configurations that do
# not parse (so name no stateDir of the test's), and the plugin then records
# the refusal where a node's agent would read it: /run/boxxkite-netguard.
# On a machine where that directory exists (a node running the real agent,
# or one where a demo ran), CMD runs as root in a private mount namespace
# with an empty tmpfs over it; elsewhere (CI's fresh machine) nothing can be
# written there anyway and CMD runs as it is. Used by e2e/lib.sh (every e2e
# script re-runs itself under it) and scripts/run-unit.sh.
set -euo pipefail
dir=/run/boxxkite-netguard
if [[ -n ${NG_STATE_SHADOWED:-} || $(id -u) -ne 0 || ! -d $dir ]]; then
	export NG_STATE_SHADOWED=1
	exec "$@"
fi
export NG_STATE_SHADOWED=1
# shellcheck disable=SC2016 # expanded by the inner shell, in the new namespace
exec unshare --mount --propagation private -- /bin/sh -c \
	'mount -t tmpfs -o mode=0755,size=64m ng-test-shadow "$0" && exec "$@"' "$dir" "$@"
