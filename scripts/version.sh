#!/usr/bin/env bash
# version.sh: the release version has one source, NG_VERSION in
# plugin/base/version.h (the binary's --version, every table's comment, the
# agent's build_info and status; the Makefile's IMAGE tag reads it too).
# The files that cannot include a C header carry a copy; this script keeps
# them in step:
#   scripts/version.sh            print the version
#   scripts/version.sh --check    exit 1, naming each file whose copy differs (make lint)
#   scripts/version.sh --set X.Y.Z  write X.Y.Z to version.h and every copy
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

HDR=plugin/base/version.h
current() { sed -n 's/^#define NG_VERSION "\(.*\)"$/\1/p' "$HDR"; }

# FILE|a sed -E pattern: group 2 is the version, 1 and 3 what stands around
# it (every line the pattern matches must hold the version).
# shellcheck disable=SC2016 # the backquotes are markdown's
COPIES=(
	'deploy/kustomization.yaml|^(    newTag: )([0-9][^ ]*)()$'
	'deploy/base/kustomization.yaml|^(    newTag: )([0-9][^ ]*)()$'
	'deploy/uninstall/kustomization.yaml|^(    newTag: )([0-9][^ ]*)()$'
	'deploy/base/daemonset.yaml|^( +image: boxxkite-netguard:)([0-9][^ ]*)()$'
	'deploy/uninstall/daemonset.yaml|^( +image: boxxkite-netguard:)([0-9][^ ]*)()$'
	'deploy/helm/Chart.yaml|^(version: )([0-9][^ ]*)()$'
	'deploy/helm/Chart.yaml|^(appVersion: ")([0-9][^"]*)(")$'
	'deploy/helm/values.yaml|^(  tag: )([0-9][^ ]*)()$'
	'deploy/README.md|^(\| `image.repository`, `.tag`, `.pullPolicy` \| `boxxkite-netguard`, `)([0-9][^`]*)(`)'
	'README.md|^(	comment "boxxkite-netguard )([0-9][^:]*)(:)'
	'e2e/k8s/README.md|^(.*boxxkite-netguard:)([0-9]+\.[0-9]+\.[0-9]+)(.*)$'
)

v=$(current)
[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "version.sh: no NG_VERSION \"X.Y.Z\" in $HDR" >&2 && exit 2; }
case ${1:-} in
'') echo "$v" ;;
--check)
	bad=0
	for c in "${COPIES[@]}"; do
		f=${c%%|*} re=${c#*|}
		found=$(sed -En "s/$re.*/\\2/p" "$f")
		if [[ -z $found ]]; then
			echo "$f: no line matches $re" && bad=1
		elif grep -qv "^$v$" <<<"$found"; then
			echo "$f: $(grep -v "^$v$" <<<"$found" | head -1), not $v ($HDR)" && bad=1
		fi
	done
	((bad == 0)) && echo "version $v: every copy agrees"
	exit "$bad"
	;;
--set)
	new=${2:?--set X.Y.Z}
	[[ $new =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "version.sh: $new is not X.Y.Z" >&2 && exit 2; }
	sed -i "s/^#define NG_VERSION \".*\"$/#define NG_VERSION \"$new\"/" "$HDR"
	for c in "${COPIES[@]}"; do
		f=${c%%|*} re=${c#*|}
		sed -Ei "s/$re/\\1$new\\3/" "$f"
	done
	;;
*) echo "usage: scripts/version.sh [--check | --set X.Y.Z]" >&2 && exit 2 ;;
esac
