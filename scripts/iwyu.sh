#!/usr/bin/env bash
# iwyu.sh (run by make lint): no unused include in plugin/ or test/.
# include-what-you-use reads every source as the compiler does and says,
# per file, which includes it "should remove": a header none of whose
# declarations or macros the file uses. Any such line fails; what iwyu would
# add is not checked (an include that arrives through another header is
# allowed). Where iwyu cannot know a header is needed, the include says so
# on its line (`// IWYU pragma: keep`, e.g. the headers cmocka.h requires
# before it), and scripts/iwyu.imp maps headers it resolves wrongly.
#
#   scripts/iwyu.sh [FILE...]     default: every C file of plugin/ and test/
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

command -v include-what-you-use >/dev/null || {
	echo "iwyu: include-what-you-use is missing (scripts/deps.sh --lint installs Debian's iwyu)" >&2
	exit 2
}

if (($#)); then
	files=("$@")
else
	# Every .c; a header only when no .c of its name exists (iwyu checks a
	# source's own header, x.h for x.c, with the source).
	files=()
	for f in plugin/*.c plugin/*/*.[ch] test/unit/*.h test/unit/*/*.[ch] test/fuzz/*.c test/tools/*.c \
		test/bench/*.c e2e/cri/*.c; do
		[[ -e $f ]] || continue
		[[ $f == *.h && -e ${f%.h}.c ]] && continue
		files+=("$f")
	done
fi

# shellcheck disable=SC2207 # pkg-config prints words on purpose
cflags=(-std=gnu11 -D_GNU_SOURCE -Iplugin -Itest/unit $(pkg-config --cflags jansson libnftnl libmnl))
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# iwyu's exit status says nothing useful (0.18 exits non-zero for every
# file it has a suggestion for): the verdict is read from its report.
printf '%s\n' "${files[@]}" |
	xargs -P "$(nproc)" -I{} include-what-you-use "${cflags[@]}" -Xiwyu --no_fwd_decls \
		-Xiwyu --mapping_file=scripts/iwyu.imp -Xiwyu --no_comments {} >"$out" 2>&1

# A file without a verdict (it did not compile, iwyu stopped) fails too.
errors=$(grep -E '(error|Assertion failed|FATAL ERROR)' "$out")
for f in "${files[@]}"; do
	grep -qFx -e "($f has correct #includes/fwd-decls)" -e "$f should remove these lines:" "$out" ||
		errors+=$'\n'"$f: no verdict from include-what-you-use"
done
errors=${errors#$'\n'}
# "FILE should remove these lines:" then "- #include <x.h>  // lines N-N"
# until a blank line; the file named on each line.
removals=$(awk '/ should remove these lines:$/ { f = $1; on = 1; next }
	/^$/ { on = 0 }
	on && /^- / { sub(/^- /, ""); print f ": " $0 "  <- unused: remove it" }' "$out" | sort -u)
[[ -n $errors ]] && echo "$errors"
[[ -n $removals ]] && echo "$removals"
n=${#files[@]}
if [[ -z $errors && -z $removals ]]; then
	echo "iwyu: $n files, no unused include"
	exit 0
fi
echo "iwyu: $(printf '%s\n%s\n' "$removals" "$errors" | grep -c .) finding(s) in $n files"
exit 1
