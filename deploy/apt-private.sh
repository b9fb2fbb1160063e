# shellcheck shell=bash
# deploy/apt-private.sh: sourced by deploy/lib*-static.sh. private_apt TYPE
# SUITE makes an apt state under $work/apt whose only sources are this
# machine's own entries for its release ($codename), as TYPE (deb, deb-src)
# for SUITE, and sets APT to the apt-get options that select it: the
# machine's apt configuration, lists and package database are never
# touched, and apt checks every file against the signed archive index as
# for any package. Needs $work, $codename and say().
# shellcheck disable=SC2154 # $work and $codename are the sourcing script's
list='' parts=''
eval "$(apt-config shell list Dir::Etc::sourcelist/f parts Dir::Etc::sourceparts/d)"

# private_apt TYPE SUITE: an apt state in $work/apt whose only sources are
# the machine's entries for its own release (not -updates, -security), as
# TYPE (deb, deb-src) for SUITE; sets APT to the options that select it.
private_apt() {
	local type=$1 suite=$2 a=$work/apt f n=0
	rm -rf "$a" && mkdir -p "$a/parts" "$a/lists/partial" "$a/cache/archives/partial"
	for f in "$parts"*.sources; do
		[[ -f $f ]] || continue
		n=$((n + 1))
		awk -v rel="$codename" -v type="$type" -v suite="$suite" '
			function flush() {
				if (uris != "" && (" " suites " ") ~ (" " rel " "))
					printf "Types: %s\nURIs: %s\nSuites: %s\nComponents: main\n%s\n", type, uris, suite, signed
				uris = suites = signed = ""
			}
			/^[[:space:]]*$/ { flush(); next }
			/^URIs:/ { uris = $0; sub(/^URIs:[[:space:]]*/, "", uris) }
			/^Suites:/ { suites = $0; sub(/^Suites:[[:space:]]*/, "", suites) }
			/^Signed-By:/ { signed = $0 }
			END { flush() }' "$f" >"$a/parts/$n.sources"
	done
	for f in "$list" "$parts"*.list; do
		[[ -f $f ]] || continue
		n=$((n + 1))
		awk -v rel="$codename" -v type="$type" -v suite="$suite" \
			'$1 == "deb" && $0 !~ /\[/ && $3 == rel { print type, $2, suite, "main" }' "$f" >"$a/parts/$n.list"
	done
	grep -qs . "$a"/parts/* || { say "this machine's apt has no entry for $codename" && return 1; }
	APT=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$a/parts"
		-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache"
		-o "Debug::NoLocking=1" -o "APT::Sandbox::User=root" -qq)
	apt-get "${APT[@]}" update
}

