#!/usr/bin/env bash
# make lint: formatting, static analysis, unused includes and shell checks. Every tool's
# configuration is checked in (.clang-format, .clang-tidy; cppcheck flags
# here). Exit status: non-zero when any tool reports anything.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

failed=0
step() { printf '== %s\n' "$1"; }
result() { if [ "$1" -eq 0 ]; then echo "   clean"; else echo "   FAILED"; failed=1; fi; }

c_files=$(ls plugin/*.c plugin/*/*.[ch] test/unit/*.h test/unit/*/*.c test/fuzz/*.c test/tools/*.c e2e/cri/*.c \
	test/bench/*.c 2>/dev/null)
src_files=$(ls plugin/*.c plugin/*/*.c)
cflags="-std=gnu11 -D_GNU_SOURCE -Iplugin $(pkg-config --cflags jansson libnftnl libmnl)"

step "clang-format (.clang-format)"
# shellcheck disable=SC2086
clang-format --dry-run --Werror $c_files
result $?

step "clang-tidy (.clang-tidy) on plugin/"
# shellcheck disable=SC2086
out=$(clang-tidy -quiet $src_files -- $cflags 2>&1 | grep -E "(warning|error):")
[ -n "$out" ] && echo "$out"
result "$([ -z "$out" ] && echo 0 || echo 1)"

step "cppcheck on plugin/"
# shellcheck disable=SC2086
cppcheck --quiet --error-exitcode=1 --enable=warning,portability,performance --inline-suppr \
	--std=c11 -D_GNU_SOURCE -Iplugin --suppress=missingIncludeSystem $src_files
result $?

step "unused includes (scripts/iwyu.sh: include-what-you-use)"
scripts/iwyu.sh
result $?

step "layers (scripts/layers.sh)"
scripts/layers.sh
result $?

step "one netlink transport (kernel/nl.h)"
# Every netlink socket of ours is opened in plugin/kernel/ and read through
# its transport: the kernel-sender check (ng_nl_recv, ng_nl_recv_kernel)
# and the bounded walk (base/nlwalk.h). libmnl's own socket and read loop
# check neither.
out=$(
	grep -rnE 'mnl_socket_open|socket\((AF|PF)_NETLINK' plugin --include='*.[ch]' | grep -v '^plugin/kernel/' |
		sed 's|$|  <- a netlink socket outside plugin/kernel/: open it with ng_nl_open_proto (kernel/nl.h)|'
	grep -rnE 'mnl_socket_recvfrom|mnl_cb_run' plugin --include='*.[ch]' |
		sed 's|$|  <- a private netlink read loop: read with ng_nl_request, ng_nl_dump or ng_nl_recv (kernel/nl.h)|'
)
[ -n "$out" ] && echo "$out"
result "$([ -z "$out" ] && echo 0 || echo 1)"

step "the docs' tree (scripts/treedoc.py: HACKING.md and README's Layout against the tree)"
/usr/bin/python3 scripts/treedoc.py
result $?

step "the README's ruleset examples (scripts/readme_ruleset.py: against the golden ruleset ADD installs)"
/usr/bin/python3 scripts/readme_ruleset.py
result $?
step "one version (scripts/version.sh --check)"
scripts/version.sh --check
result $?

step "shellcheck"
sh_files=$(ls scripts/*.sh e2e/*.sh e2e/lib/*.sh e2e/cri/*.sh e2e/k8s/*.sh test/manifests/*.sh deploy/*.sh \
	test/bench/*.sh .ci/run 2>/dev/null)
# shellcheck disable=SC2086
shellcheck -x $sh_files
result $?

[ "$failed" -eq 0 ] && echo "lint: clean" || echo "lint: FAILED"
exit "$failed"
