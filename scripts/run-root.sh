#!/usr/bin/env bash
# Runs a root-only test suite, or says plainly that it was skipped.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
	echo "${1}: SKIPPED (needs root: run sudo make test)"
	exit 0
fi
exec "$@"
