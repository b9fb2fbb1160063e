#!/usr/bin/env bash
# mutants.sh: `make mutants` (root). Proves that the netns e2e suite catches
# a broken plugin: copies the plugin's sources into a temp dir, builds them
# unchanged (the baseline) and with each of a few small source mutations
# (sed), with the Makefile's own flags, then runs the e2e script that should
# notice each mutation against the mutant (NG_BIN) and checks that the named
# tests FAIL there, and PASS with the baseline. One row per mutant:
#
#   mutant: metadata-rule-skipped   killed by: traffic.sh "metadata_denied counted exactly those 4" (4 tests broken)
#
# A mutant that survives (a named test passed against it), a mutation that
# no longer applies to the sources (the code moved: update the sed), a
# build that fails, or a named test failing on the baseline is a failure.
# Ends with "N passed, N failed"; exit status non-zero on failure.
#
#   scripts/mutants.sh [NAME...]    only these mutants
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"

[[ $(id -u) -eq 0 ]] || { echo "mutants: needs root (the e2e scripts use network namespaces)" >&2 && exit 1; }

# mutant NAME FILE SED-SCRIPT E2E-SCRIPT TEST...: the sed must change FILE
# (checked); each TEST is a row label of the e2e script (its
# E2E_RESULTS_FILE) that must fail against the mutant and pass without it.
M_NAME=() M_FILE=() M_SED=() M_SCRIPT=() M_TESTS=()
mutant() {
	M_NAME+=("$1") M_FILE+=("$2") M_SED+=("$3") M_SCRIPT+=("$4")
	shift 4
	local IFS=$'\n'
	M_TESTS+=("$*")
}

# The two metadata rules jump to the ordinary egress refusal: metadata is
# still refused (with reject), but not counted as metadata, and dropped
# silently under denyAction drop.
mutant metadata-rule-skipped plugin/nft/render.c 's/i, f, NG_CHAIN_REFUSE_METADATA);/i, f, NG_CHAIN_REFUSE_EGRESS);/' traffic.sh \
	"metadata_denied counted exactly those 4" "drop: metadata 169.254.169.254:80 still refused at once"
# The egress chain's last rule does not jump to refuse_egress: other egress
# falls to the chain's policy drop, a timeout instead of a reset.
mutant default-deny-skipped plugin/nft/render.c \
	's/ng_rb_verdict(&rb, NFT_JUMP, NG_CHAIN_REFUSE_EGRESS);/ng_rb_verdict(\&rb, NFT_CONTINUE, NULL);/' traffic.sh \
	"forbidden 10.50.0.9:443 refused" "allow IP, other port 10.20.1.5:8443 refused"
# Every grant is "inside" the envelope.
mutant envelope-always-passes plugin/policy/annotations.c 's/if (ng_dest_within(/if (1 || ng_dest_within(/' traffic.sh \
	"grant outside the envelope: 100, no table"
# DEL succeeds without removing the table.
mutant del-does-nothing plugin/kernel/podtables.c 's/^\treturn ng_ruleset_delete(pod, NG_TABLE, err);/\treturn 0;/' traffic.sh \
	"1.0.0: table gone after DEL" "no table left anywhere in the world"
# CHECK never compares.
mutant check-always-succeeds plugin/cni/cni_check.c 's/rc = ng_ruleset_check(&nl, &v->pod.policy, NG_TABLE, NULL, &v->err);/rc = 0;/' \
	faults.sh "table deleted: CHECK fails naming it missing" "rule added: CHECK fails naming it" \
	"names_v4_ttl flushed: CHECK fails"
# The name rules look up the TTL twin only, not the pinned names set (in
# both tables: the rule builder is shared): an element added by hand to
# names_v4_ttl opens traffic.
mutant names-ttl-only plugin/nft/render_objs.c 's/^\t\tng_rb_lookup(&rb, s->name, s->id);/\t\tng_rb_lookup(\&rb, r->also ? r->also->name : s->name, r->also ? r->also->id : s->id);/' \
	faults.sh "names_v4_ttl + 10.50.0.9: still refused" "names_v6_ttl + [fd00:50::9]: still refused"
# The plugin's own namespace is not recognised as the node's (the PID 1
# check stays, so the machine's namespace is never at risk here).
mutant node-netns-accepted plugin/kernel/netns.c 's|same_ns(&st, "/proc/thread-self/ns/net")|0|' hostile.sh \
	"CNI_NETNS the node's netns: code 4, node untouched" "CNI_NETNS the plugin's own namespace"
# Duplicate keys are accepted (the last one wins).
mutant duplicate-keys-accepted plugin/cni/inv.c 's/JSON_REJECT_DUPLICATES/0/' hostile.sh \
	"duplicate key at the top (egress)" "duplicate key inside prevResult" "duplicate annotation key"
# The packet-socket guard is never rendered: frames from packet sockets
# reach whatever they are addressed to.
mutant guard-skipped plugin/nft/render.c 's/if (p->raw_guard \&\&/if (0 \&\&/' packet.sh \
	"raw UDP to forbidden 10.50.0.9:9999: held" "raw UDP to metadata 169.254.169.254:80: held"
# A DNS answer that is a metadata address goes into the name sets.
mutant name-metadata-unchecked plugin/policy/policy.c \
	's/if (ng_check_not_metadata(cfg, &host, "", code, NULL) < 0)/if (0 \&\& ng_check_not_metadata(cfg, \&host, "", code, NULL) < 0)/' \
	refusals.sh \
	"allow name resolving to metadata" "grant name resolving to metadata"
# ARP from any sender address: a packet socket can claim the gateway's.
mutant arp-any-sender plugin/nft/render_raw.c 's/ng_rb_cmp(&rb, NFT_CMP_EQ, pod->a, 4);/(void)pod;/' packet.sh \
	"ARP reply claiming the gateway's address: held"
# The agent lets answers through without committing what they teach: the
# first connect after an answer is refused.
mutant agent-commit-skipped plugin/agent/pod.c 's/if (pend->n == 0 \&\& (!pend_node || pend_node->n == 0))/if (1)/' agent.sh \
	"UDP: first connect after each answer, 1000 of 1000" "TCP: first connect after each answer, 1000 of 1000"
# Answers over loopback are queued: a process with NET_RAW forges one "from"
# the resolver to its own address, answering the pod's query once it is out
# (before that, conntrack calls it no reply and the next rule keeps it from
# the queue). The agent drops it too (not in on the pod's interface, and
# logged): the row that sees the chain's own rule is the one where the
# forgery reaches the pod's socket unqueued, and nothing foreign is logged.
mutant lo-answers-queued plugin/nft/render.c 's/uint32_t lo_if = 1;/uint32_t lo_if = 0x7fffffff;/' agent.sh \
	"... never queued to the agent (delivered past it, nothing foreign logged)"
# The agent reads netlink messages from any sender: a process with NET_ADMIN
# in the pod forges a queue "packet" answering the pod's outstanding query
# (its real answer dropped by the pod) and teaches the pod's table (the node
# side learns only what its observer saw: e2e/nodeside.sh).
mutant foreign-netlink-read plugin/kernel/nl.c 's/if (n < 0 || sender == 0)/if (1)/' agent.sh \
	"... the forged message teaches nothing: 10.50.0.9 not in names_v4"
# The agent reads packets any queue rule handed it: a pod's own NFQUEUE rule
# (output hook) passes it a forged answer to the pod's outstanding query.
mutant queue-origin-unchecked plugin/agent/answer.c 's/if (pk->hook != NF_INET_LOCAL_IN || pk->indev != p->ifindex) {/if (0) {/' \
	agent.sh "... its answer teaches nothing: 10.66.0.66 not in names_v4"
# Issue 19 item 2 (e2e/nodeside.sh): the node side learns only from the
# node side. Each forgery there answers a query outstanding in the pod's own
# matcher (a NET_ADMIN pod can make it remember any query), so that only the
# node side's check stands before the node-side table. The node-side table
# learns every answer the pod's queue shows: a NET_ADMIN pod's looped
# forgery, a neighbour's spoofs.
mutant node-side-unobserved plugin/agent/answer.c 's/if (ng_observer_vouch(c->sh->obs, \&p->nodeseen, c->k, msg, len))/if (ng_observer_vouch(c->sh->obs, \&p->nodeseen, c->k, msg, len) || 1)/' \
	nodeside.sh "the node-side table did not learn the forged 10.21.50.99" \
	"right port and ID, answered for the node, the pod's matcher fooled: not learned (10.21.50.93)"
# A kept answer vouches for any bytes of its length on its flow: the loop's
# forgery (the real answer's bytes, another address: the node saw the real
# one, the pod dropped it) rides on the real one.
mutant seen-bytes-unchecked plugin/agent/nodeseen.c \
	's/ \&\& !memcmp(a->msg, msg, len))/ \&\& msg)/' \
	nodeside.sh "... nor the forgery as long as the answer the node saw (10.21.50.95)"
# The observer matches answers to queries without the DNS ID: a neighbour
# spoofing the resolver on the right port teaches the node side (the pod's
# matcher fooled by a query with the spoof's ID the pod dropped itself).
mutant seen-id-ignored plugin/agent/nodeseen.c 's/if (q->used \&\& flow_eq(\&q->fl, fl) \&\& q->id == m->id \&\& q->qtype == m->qtype \&\&/if (q->used \&\& flow_eq(\&q->fl, fl) \&\& q->qtype == m->qtype \&\&/' \
	nodeside.sh "right port, wrong ID for the node's query, the pod's matcher fooled: not learned (10.21.50.94)"
# An answered query stays outstanding: a second answer with its ID teaches
# (the pod's matcher fooled by the same query again, dropped by the pod).
mutant seen-answered-stays plugin/agent/nodeseen.c 's/^\tq->used = false; \/\* answered/\t(void)q; \/* answered/' \
	nodeside.sh "right port and ID, answered for the node, the pod's matcher fooled: not learned (10.21.50.93)"
# The queue rule carries the bypass flag: with no agent, answers pass unlearned (fail open).
mutant queue-bypass plugin/nft/rulebuild.c 's/.queues_total = 1, .flags = 0}/.queues_total = 1, .flags = NFQ_FLAG_BYPASS}/' \
	agent.sh "agent gone (no listener): an answer is dropped, not passed"

# No IPv4 source check in any table (inet, guard, host side: one builder):
# a raw socket's packet from a stranger's address leaves, and the allowed
# resolver or storage answers the stranger.
mutant source-check-skipped plugin/nft/render_objs.c 's/^\t\trc |= ng_render_lookup_rule(b, \&v4);/\t\t(void)v4;/' hostside.sh \
	"bridge: raw IP socket, source 10.98.0.2 -> storage: nowhere" \
	"ptp: raw IP socket, source 10.98.0.2 -> storage: held" "bridge: packet socket, source 10.98.0.2 -> DNS: held"
# The host-side chain does not match the ifindex it was made for: after its
# pod's veth is gone, it holds the next device of that name (Linux 6.16+
# binds netdev chains by name) to the old pod's MAC and policy.
mutant host-ifindex-unmatched plugin/nft/render_raw.c 's/^\tif (m->ifindex > 0) {/\tif (0) {/' hostside.sh \
	"a new device of the same name: not held by the stale table"
# The host side is never installed: AF_XDP and a pod that flushed its own
# tables reach anything.
mutant host-side-skipped plugin/kernel/podtables.c 's/^\t\t\t     : ng_host_apply(node, p, host_table, err);/\t\t\t     : 0;/' hostside.sh \
	"bridge: AF_XDP frame to forbidden 10.50.0.9: held" "bridge: forbidden 10.50.0.9:443 unreached"
# Issue 13 (e2e/hardening.sh).
# No rule for the IPv6 forms of the IPv4 metadata addresses (both tables).
mutant metadata-forms-skipped plugin/nft/render_guard.c 's/for (int f = 0; f < NG_V6_FORMS; f++) {/for (int f = 0; f < 0; f++) {/' \
	hardening.sh "enforced: [2001:db8:77::5efe:a9fe:a9fe]:81" "metadata_denied counted each form (5)"
# No source-route rule in any table.
mutant source-routes-let-out plugin/nft/render_guard.c \
	's/if (fam \&\& fam != (rules\[i\].fam == NG_V4 ? 4 : 6))/if (fam || 1)/' hardening.sh \
	"unprivileged: routing header via the resolver to fd00:50::9: refused" \
	"packet socket: with a routing header: dropped by the guard"
# MLD reports naming any group: the records' groups not looked up.
mutant mld-any-group plugin/nft/render_mld.c 's/^\tng_rb_lookup(\&rb, set->name, set->id);/\t(void)set;/' hardening.sh \
	"the same report naming ff0e::6e67:6c65:616b:2121: dropped" "a chosen group from ::: dropped"
# Issue 22: an idle pod denies nothing. MLD reports of one record only (as
# before): the kernel's reports of a new pod's two groups are denied.
mutant mld-one-record plugin/nft/render_mld.c 's/if (n < groups)/if (n < 1)/' ops.sh \
	"idle pods (DAD on, as a runtime's; and off), left alone: every deny counter 0 (pod, guard, node side)"
# The host side counts the Ethernet header in meta len, as the guard must
# (but the device pulled it before the ingress hook): it denies them all.
mutant mld-host-link-header plugin/nft/render_raw.c 's/m->hook == NF_NETDEV_INGRESS ? 0 : ETH_HLEN_BYTES/ETH_HLEN_BYTES/' \
	ops.sh "idle pods (DAD on, as a runtime's; and off), left alone: every deny counter 0 (pod, guard, node side)"
mutant mld-host-link-header-hardening plugin/nft/render_raw.c \
	's/m->hook == NF_NETDEV_INGRESS ? 0 : ETH_HLEN_BYTES/ETH_HLEN_BYTES/' hardening.sh \
	"... all three reached the node's bridge, none counted by its host-side table"
# The host side's ARP length as the guard's: its ingress hook sees the frame
# without the Ethernet header, so 14 more bytes of anything pass.
mutant host-arp-length plugin/nft/render_raw.c 's/\tif (m->hook == NF_NETDEV_INGRESS) {$/\tif (0) {/' \
	packet.sh "  ARP of 62 bytes on the wire: held on the host side"
# Reports from :: (the kernel's while its link-local address is tentative)
# refused by the source check.
mutant mld-unspecified-refused plugin/nft/render_objs.c 's/sets\[NG_S_MLD6\].ips->n, true);/0, true);/' hardening.sh \
	"its own group from :: (the kernel's report while its address is tentative): let out"
# The gateways are not pinned.
mutant gateways-not-pinned plugin/cni/cni_add.c 's/if (pin_gateways(v) < 0) {/if (0 \&\& pin_gateways(v) < 0) {/' hardening.sh \
	"enforced: gateway 10.244.1.1 is PERMANENT at the bridge's MAC"
# CHECK takes any range in a name set (as before issue 13).
mutant name-set-ranges-accepted plugin/nft/snapnames.c 's/if (end \&\& memcmp(key, end, alen) != 0) {/if (0) {/' \
	hardening.sh "  CHECK fails: covers more than one address" "  verify: rules match policy FAIL, naming it"
# verify reads capabilities only: a packet, raw or XDP socket kept after
# dropping them passes (issue 19 item 4).
mutant held-sockets-unreported plugin/node/verify_caps.c 's/^\tif (\*socks)$/\tif (0)/' heldsockets.sh \
	"held packet after dropping every capability: FAIL naming its pid" \
	"held xdp after dropping every capability: FAIL naming its pid" \
	"held packet by a process outside the pod's namespace: FAIL naming it"
# A withdrawn grant's live flows are not cut: `ct state established` keeps
# the session's connection open into the next session (issue 25).
# (The one re-plan path's cut: grants and live policy share it.)
mutant grant-flows-kept plugin/agent/replan.c 's/^\t    ng_ct_cut(&p->nl, gone, &rp.pp.policy, &res->cut, &cerr) < 0)$/\t    ((void)gone, 0))/' \
	grants.sh "the live connection is cut (reset)"
# Drift is repaired before Kubernetes hears of it: the condition stays True,
# and a pod with the readiness gate never drops to not Ready (issue 25).
mutant drift-never-unverified plugin/agent/ops.c 's/^\to->env.drift_seen = drift_seen;/\t(void)drift_seen;/' \
	grants.sh "drift with --repair: the API saw the condition False (Drift), then True"
# Issue 19 item 1, issue 23 item 3 (e2e/repair.sh).
# A repair plans with the pod's live link (its MAC and link-local addresses)
# instead of the recorded facts: a NET_ADMIN pod that took its neighbour's
# MAC gets it into its host-side table and captures the neighbour's traffic.
mutant repair-adopts-live-mac plugin/node/podstate.c \
	's/^\treturn ng_recpolicy_build(r, resolve_names, NULL, rp, err);/\t{ struct ng_link_facts lv; if (ng_podstate_link(r, \&lv, err) == 0) ((struct ng_record *)r)->link = lv; }\n&/' \
	repair.sh "the neighbour receives its traffic" "the attacker (the neighbour's MAC) receives none of it" \
	"the host-side table still holds the recorded MAC"
# A repair carries none of the pod's learned elements: its learned names are
# closed until the pod asks again.
mutant repair-without-learned plugin/agent/podlock.c \
	's/} else if ((n = learned_now(l, pod_nl, node_nl, pol, host_table)) < 0) {/} else if ((n = ((void)learned_now, 0)) < 0) {/' \
	repair.sh "... its learned address open throughout (a connect every 20 ms)" "each repair carried the learned element"
mutant repair-without-learned-ops plugin/agent/podlock.c \
	's/} else if ((n = learned_now(l, pod_nl, node_nl, pol, host_table)) < 0) {/} else if ((n = ((void)learned_now, 0)) < 0) {/' \
	ops.sh "... with its learned address in the new table"
# Not in the proof: a CHECK that fails for a pod whose record is gone (its
# DEL under way) reported as drift (opspod.c's `rc != 0 &&
# !ng_opod_recorded`). The ops thread reads the directory's events before
# its CHECKs, so the mutant shows only when a DEL removes the record during
# the very turn that CHECKs its pod: repair.sh's "DEL of every pod at once"
# row caught it on an idle machine and let it survive under a CPU hog. A
# proof row must fail every time; that one is a race the test cannot force.
# Live policy (issue 21, e2e/livepolicy.sh). An entry the plugin refuses is
# followed anyway (a new generation: the pods' re-plans fail one by one
# instead of nothing changing, and /readyz names no error of the entry's).
mutant live-entry-unvalidated plugin/agent/livepolicy.c 's/^\trc = ng_config_parse(e, \&cfg, \&err);/\trc = 0;\n\t(void)ng_config_parse(e, \&cfg, \&err);/' \
	livepolicy.sh "... the generation stays" "refused entry: /readyz's policy line fails naming the error"
# Every grant is kept under a narrower envelope: the pod's plan is refused as
# ADD refuses it, and the pod keeps its old, wider grant.
mutant live-grants-widened plugin/policy/annotations.c 's/^\t\tif (admitted(start, cfg, \&why) == 0) {/\t\tif (admitted(start, cfg, \&why) == 0 || 1) {/' \
	livepolicy.sh "granted: the stranger (outside the new envelope) refused" "granted: its record keeps only the covered grant"
# A running pod the new entry would select less is not kept: the opt-in pod's
# plan fails (ADD would refuse it), or an enforced pod goes to audit.
mutant live-mode-not-kept plugin/state/liveplan.c 's/^\tout->kept = would < runs;/\tout->kept = false;/' \
	livepolicy.sh "optin: its record keeps it enforced"
# DNS queries (issue 20): the egress chain does not queue queries; the
# agent lets an unlisted query go over UDP, or over TCP; an answer to no
# outstanding query teaches (issue 19 item 3).
mutant query-rule-skipped plugin/nft/render.c 's/if (egress \&\& p->learn \&\& render_dns_queries(/if (egress \&\& p->learn \&\& 0 \&\& render_dns_queries(/' \
	dnsquery.sh "egress chain queues queries to the agent" \
	"unlisted (UDP): NXDOMAIN from the agent, same ID and question" \
	"the resolver's log: no unlisted query arrived (UDP, TCP, both families)"
mutant udp-query-unchecked plugin/agent/query.c 's/^\tif (v == NG_DNSQ_OK || !p->policy.queries_listed || audited(p, k, &q, v, false)) {/\tif (1) {/' \
	dnsquery.sh "unlisted (UDP): NXDOMAIN from the agent, same ID and question" \
	"the resolver's log: no unlisted query arrived (UDP, TCP, both families)"
mutant tcp-query-unchecked plugin/agent/query.c 's/^\tif (v == NG_DNSQ_OK || !c->p->policy.queries_listed || audited(c->p, c->k, &q, v, true)) {/\tif (1) {/' \
	dnsquery.sh "TCP unlisted: NXDOMAIN on the stream, then closed" \
	"TCP pipelined listed+unlisted+listed in one segment: NXDOMAIN for the unlisted, closed"
mutant icmp-errors-sent plugin/nft/render.c 's/^\tng_rb_ct_orig_sport(&rb, 53);$/\tng_rb_ct_orig_sport(\&rb, 5353);/' \
	dnsquery.sh "a refused query from a port no socket holds: no ICMP error quoting it leaves"
mutant unmatched-answers-teach plugin/agent/answer.c 's/if (!ng_query_answered(p, c->k, msg, len, room/if (0 \&\& !ng_query_answered(p, c->k, msg, len, room/' \
	dnsquery.sh "a forged answer to no outstanding query (right port and ID) teaches nothing"
# An audited pod's queries refused as an enforced pod's (audit must only
# show what enforcing would refuse, DNS included).
mutant audit-dns-refused plugin/agent/query.c 's/\tif (!p->policy.audit)$/\tif (1)/' \
	dnsquery.sh "audited: unlisted names answered by the resolver (UDP, TCP), listed ones as ever"
# --listen without its per-connection deadline: a slow client holds a
# connection as long as it likes (issue 23 item 1).
mutant http-deadline-skipped plugin/agent/http.c 's/if (c->deadline_ms <= now) {/if (0) {/' dataplane.sh \
	"a slow client is closed at its deadline (3 s; at most 6 s here)" "  /metrics counts the deadline's closes"

want=("$@")
T=$(mktemp -d /tmp/nge-mutants.XXXXXX)
CHILD=''
cleanup() {
	[[ -n $CHILD ]] && kill -TERM "$CHILD" 2>/dev/null && wait "$CHILD" 2>/dev/null
	[[ $T == /tmp/nge-mutants.* ]] && rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

PASS=0 FAIL=0
row() { printf '%-34s %s\n' "$1" "$2"; }

# The pristine sources and the Makefile, as they are in the repository now.
mkdir -p "$T/src"
cp -a plugin Makefile "$T/src/"
# A relative BUILD, so that the dependency files hold relative paths: each
# mutant is a copy of the built baseline whose make rebuilds the one object
# the sed touched (and whatever includes a touched header), then links.
build() { # DIR: builds DIR/build/boxxkite-netguard from DIR's sources
	make -C "$1" --no-print-directory -j2 BUILD=build build/boxxkite-netguard >"$1/build.log" 2>&1
}

verdict() { # RESULTS LABEL: PASS, FAIL or MISSING
	awk -F'\t' -v l="$2" '$2 == l { v = $1 } END { print (v == "" ? "MISSING" : v) }' "$1"
}
# run_script SCRIPT BIN OUT LABEL...: the e2e script against BIN; rows to
# OUT. Shorter loops than CI's (only the named rows matter here), and the
# script is stopped (TERM: its world_down cleans up) once every LABEL has a
# verdict: the rows after them prove nothing about this mutant, and the
# whole proof must fit make test's time.
run_script() {
	local out=$3 l left
	: >"$out"
	E2E_PREFIX=nge- E2E_RESULTS_FILE=$out NG_BIN=$2 NG_KILL_ITERS=20 NG_CONC_PODS=5 E2E_QUICK=1 \
		setsid timeout -k 20 600 bash "e2e/$1" >"$out.log" 2>&1 &
	CHILD=$!
	shift 3
	while kill -0 "$CHILD" 2>/dev/null; do
		left=0
		for l in "$@"; do [[ $(verdict "$out" "$l") != MISSING ]] || left=1; done
		if ((left == 0)); then
			kill -TERM "$CHILD" 2>/dev/null
			break
		fi
		sleep 0.5
	done
	wait "$CHILD" || true
	CHILD=''
}

cp -a "$T/src" "$T/base"
if ! build "$T/base"; then
	tail -20 "$T/base/build.log"
	echo "mutants: the unmutated sources do not build"
	exit 1
fi

# Every label a script is named for, by the mutants asked for: its baseline
# run stops once all have a verdict.
declare -A BASE_DONE=() SCRIPT_LABELS=()
for ((k = 0; k < ${#M_NAME[@]}; k++)); do
	if ((${#want[@]})) && [[ " ${want[*]} " != *" ${M_NAME[k]} "* ]]; then continue; fi
	SCRIPT_LABELS[${M_SCRIPT[k]}]+="${M_TESTS[k]}"$'\n'
done
for ((k = 0; k < ${#M_NAME[@]}; k++)); do
	name=${M_NAME[k]} file=${M_FILE[k]} sedx=${M_SED[k]} script=${M_SCRIPT[k]}
	if ((${#want[@]})) && [[ " ${want[*]} " != *" $name "* ]]; then continue; fi
	mapfile -t labels <<<"${M_TESTS[k]}"

	# The baseline must pass every named test (run once per script).
	if [[ -z ${BASE_DONE[$script]:-} ]]; then
		mapfile -t all <<<"${SCRIPT_LABELS[$script]%$'\n'}"
		run_script "$script" "$T/base/build/boxxkite-netguard" "$T/base.$script" "${all[@]}"
		BASE_DONE[$script]=1
	fi
	bad=()
	for l in "${labels[@]}"; do
		[[ $(verdict "$T/base.$script" "$l") == PASS ]] || bad+=("$l: $(verdict "$T/base.$script" "$l") on the baseline")
	done

	d=$T/m-$name
	cp -a "$T/base" "$d"
	sed -i -e "$sedx" "$d/$file"
	if cmp -s "$T/src/$file" "$d/$file"; then
		bad+=("the mutation no longer applies to $file: update its sed")
	elif ! build "$d"; then
		bad+=("the mutant does not build: $(grep -m1 -E 'error' "$d/build.log")")
	elif cmp -s "$T/base/build/boxxkite-netguard" "$d/build/boxxkite-netguard"; then
		bad+=("the mutant's binary is the baseline's: make did not rebuild $file")
	fi
	if ((${#bad[@]} == 0)); then
		run_script "$script" "$d/build/boxxkite-netguard" "$d/results" "${labels[@]}"
		killed=() survived=()
		for l in "${labels[@]}"; do
			case $(verdict "$d/results" "$l") in
			FAIL) killed+=("$l") ;;
			*) survived+=("$l ($(verdict "$d/results" "$l"))") ;;
			esac
		done
		# Tests the mutant broke: failing against it, passing on the baseline.
		total=$(awk -F'\t' 'NR == FNR { if ($1 == "PASS") ok[$2] = 1; next } $1 == "FAIL" && ok[$2] { n++ }
			END { print n + 0 }' "$T/base.$script" "$d/results")
		if ((${#survived[@]})); then
			bad+=("survived: these passed against the mutant: ${survived[*]}")
		else
			PASS=$((PASS + 1))
			row "mutant: $name" "killed by: $script \"${killed[0]}\" ($total tests broken)"
		fi
	fi
	if ((${#bad[@]})); then
		FAIL=$((FAIL + 1))
		row "mutant: $name" "FAILED"
		printf '    | %s\n' "${bad[@]}"
	fi
	rm -rf "$d"
done

printf '%d passed, %d failed\n' "$PASS" "$FAIL"
((FAIL == 0 && PASS > 0))
