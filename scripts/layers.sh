#!/usr/bin/env bash
# layers.sh: the layer rule of plugin/ (README "Layout"), checked on every
# `#include "..."` of every source and header. A folder may include only the
# folders listed for it; the pure layers (policy, nft) never reach the code
# that talks to the kernel or runs on the node, so they stay unit-testable
# without root and the agent can reuse them. Exit 1 and one line per
# offending include; 0 when the tree keeps the rule.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

# folder -> the folders its files may include (itself always allowed).
declare -A may=(
	[base]=""
	[spec]="base"
	[policy]="base spec"
	[nft]="base spec policy"
	[kernel]="base spec policy nft"
	[state]="base spec policy nft"
	[cni]="base spec policy nft kernel state"
	[node]="base spec policy nft kernel state"
	[install]="base spec policy state"
	[agent]="base spec policy nft kernel state node"
)

bad=0
for f in plugin/*/*.[ch]; do
	layer=${f#plugin/}
	layer=${layer%%/*}
	if [[ -z ${may[$layer]+x} ]]; then
		echo "$f: folder '$layer' is not a known layer (add it to scripts/layers.sh)"
		bad=1
		continue
	fi
	while IFS= read -r inc; do
		[[ $inc == */* ]] || { echo "$f: #include \"$inc\" names no layer folder"; bad=1; continue; }
		dir=${inc%%/*}
		[[ $dir == "$layer" ]] && continue
		ok=0
		for allowed in ${may[$layer]}; do
			if [[ $allowed == "$dir" || $allowed == "$inc" ]]; then ok=1; fi
		done
		if ((!ok)); then
			echo "$f: includes $inc, but $layer/ may include only: ${may[$layer]:-nothing else}"
			bad=1
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
exit "$bad"
