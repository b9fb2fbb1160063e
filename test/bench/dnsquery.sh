#!/usr/bin/env bash
# bench/dnsquery.sh: what checking a pod's DNS queries costs (issue 20), in a
# test world of network namespaces (e2e/lib.sh), the agent in its node
# namespace:
#   - per query, p50/p99, UDP and TCP: a listed name in a pod whose queries
#     are checked (dns.queries "listed": judged, remembered, let go; its
#     answer matched and released), the same with "any" (remembered only),
#     and a pod in "resolve" mode (no queue at all); an unlisted name (the
#     agent's own answer);
#   - per whole lookup (glibc getaddrinfo, Kubernetes' resolv.conf: ndots:5,
#     three cluster search domains and a node domain, so four candidates
#     before the name itself, A and AAAA each): "listed" (the candidates
#     outside *.svc.cluster.local answered by the agent) against "any" (all
#     sent to the resolver, which answers NXDOMAIN as CoreDNS would).
# Every name is one the resolver answers at once from its own data (dnsmasq,
# --local), so the differences are the agent's. Writes
# test/bench/results-dnsquery.md. Not a pass/fail test.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=e2e/lib.sh
source e2e/lib.sh

[[ $(id -u) -eq 0 ]] || { echo "bench/dnsquery.sh: needs root" >&2 && exit 1; }
DNSLAT=${DNSLAT:-$PWD/build/bench/dnslat} GAILOOP=${GAILOOP:-$PWD/build/bench/gailoop}
mkdir -p "$(dirname "$DNSLAT")"
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$DNSLAT" test/bench/dnslat.c
${CC:-cc} -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$GAILOOP" test/bench/gailoop.c
world_up ngb-dnsq-
N=${N_LAT:-2000} NL=${N_LOOKUP:-500}
OUT=test/bench/results-dnsquery.md
{
	learn_hosts u%d.q.world.test 0 "$N"
	learn_hosts t%d.q.world.test 10 "$N"
	learn_hosts r%d.q.world.test 20 "$N"
	echo "10.21.40.1 app.world.test"
} >"$W_TMP/learn.hosts"
learn_world "$W_TMP/learn.hosts"
# The learn resolver answers NXDOMAIN for the rest of these domains at once.
ip -n "$W_ID-dns" addr add 10.96.0.12/24 dev eth0
_spawn "$W_ID-dns" dnsmasq-b dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
	--no-poll --user=root --group=root --bind-interfaces --listen-address=10.96.0.12 \
	--pid-file="$W_TMP/dnsmasq-b.pid" --local-ttl=1 --addn-hosts="$W_TMP/learn.hosts" \
	--local=/test/ --local=/cluster.local/ --local=/internal/ --local=/example/
sleep 0.5
conf() {
	conf_variant "$1" '
e["dns"]["servers"] = ["10.96.0.12"]
e["egress"]["names"] = "learn"
e["egress"]["allow"] = ["*.q.world.test:443", "app.world.test:443"]
'"$2"
}
LISTED=$(conf listed 'e["dns"]["alwaysAllowed"] = ["*.svc.cluster.local"]')
ANY=$(conf any 'e["dns"]["queries"] = "any"')
REF=$(conf_variant ref 'e["dns"]["servers"] = ["10.96.0.12"]')
printf 'search sandboxes.svc.cluster.local svc.cluster.local cluster.local node.internal\nnameserver 10.96.0.12\noptions ndots:5\n' \
	>"$W_TMP/resolv-k8s.conf"
lat() { pod_exec "$1" "$DNSLAT" 10.96.0.12 "$2" "$N" "$3"; }
# shellcheck disable=SC2016 # $1 and $@ belong to the inner sh
look() { pod_exec "$1" unshare --mount --propagation private sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' \
	sh "$W_TMP/resolv-k8s.conf" "$GAILOOP" "$NL" app.world.test; }

agent_start
agent_ready 3000
POD_CONFLIST=$LISTED pod_add listed >/dev/null
POD_CONFLIST=$ANY pod_add any >/dev/null
POD_CONFLIST=$REF pod_add ref >/dev/null

declare -A R
for proto in udp tcp; do
	c=${proto:0:1}
	# Each pod asks the same names: the first round teaches (a commit per
	# answer in learn mode), so time the second.
	for p in listed any; do lat "$p" "$proto" "$c%d.q.world.test" >/dev/null; done
	R[$proto.listed]=$(lat listed "$proto" "$c%d.q.world.test")
	R[$proto.any]=$(lat any "$proto" "$c%d.q.world.test")
	R[$proto.ref]=$(lat ref "$proto" "$c%d.q.world.test")
	R[$proto.refused]=$(lat listed "$proto" "x%d.unlisted.example")
done
look listed >/dev/null
R[look.listed]=$(look listed)
R[look.any]=$(look any)
R[look.ref]=$(look ref)

field() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p"; }
d() { # A B FIELD: A - B in ms
	awk -v a="$(field "$3" <<<"$1")" -v b="$(field "$3" <<<"$2")" 'BEGIN{printf "%.3f", (a - b) / 1000}'
}
{
	echo "# DNS query check benchmark ($(date -u +%Y-%m-%dT%H:%MZ), $(uname -r), $(nproc) CPUs)"
	echo
	echo "Rerun: \`sudo test/bench/dnsquery.sh\` (part of \`make bench\`). From a pod's own socket, one query at a"
	echo "time, $N per row (\`test/bench/dnslat.c\`: a fresh TCP connection per query, the connect not timed),"
	echo "names the pod asked once before (the answer matched and released, nothing new to commit)."
	echo "\"listed\": dns.queries \"listed\" (judged, remembered, let go); \"any\": remembered only; \"resolve\":"
	echo "a pod in resolve mode, nothing queued either way. \"refused\": an unlisted name, answered by the agent."
	echo
	echo "| per query | listed | any | resolve (no agent) | refused | listed - resolve p50 / p99 | listed - any p50 / p99 |"
	echo "|---|---|---|---|---|---|---|"
	for proto in udp tcp; do
		echo "| $proto | ${R[$proto.listed]} | ${R[$proto.any]} | ${R[$proto.ref]} | ${R[$proto.refused]} |" \
			"$(d "${R[$proto.listed]}" "${R[$proto.ref]}" p50_us) / $(d "${R[$proto.listed]}" "${R[$proto.ref]}" p99_us) ms |" \
			"$(d "${R[$proto.listed]}" "${R[$proto.any]}" p50_us) / $(d "${R[$proto.listed]}" "${R[$proto.any]}" p99_us) ms |"
	done
	echo
	echo "Whole lookups (\`test/bench/gailoop.c\`: glibc getaddrinfo of app.world.test, $NL times, Kubernetes'"
	echo "resolv.conf: four search candidates, A and AAAA each, before the name; with alwaysAllowed"
	echo "*.svc.cluster.local the first two candidates still go to the resolver, the other two are answered by"
	echo "the agent; with \"any\" and in resolve mode all go):"
	echo
	echo "| per lookup | listed | any | resolve (no agent) | listed - any p50 / p99 | listed - resolve p50 / p99 |"
	echo "|---|---|---|---|---|---|"
	echo "| glibc | ${R[look.listed]} | ${R[look.any]} | ${R[look.ref]} |" \
		"$(d "${R[look.listed]}" "${R[look.any]}" p50_us) / $(d "${R[look.listed]}" "${R[look.any]}" p99_us) ms |" \
		"$(d "${R[look.listed]}" "${R[look.ref]}" p50_us) / $(d "${R[look.listed]}" "${R[look.ref]}" p99_us) ms |"
} | tee "$OUT"
t_summary >/dev/null || true
