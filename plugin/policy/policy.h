/* The policy as plain data: what the ruleset will contain, computed from
 * config + annotations + prevResult (+ DNS answers) with no I/O. The ruleset
 * skeleton (chains, rule order) is fixed in render.c; the policy supplies
 * the contents of its sets and the deny action, so a reviewer reads one
 * structure and the same code serves ADD, CHECK and tests. */
#ifndef NG_POLICY_H
#define NG_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "base/addr.h"
#include "policy/annotations.h"
#include "policy/config.h"
#include "spec/podref.h"
#include "spec/prevresult.h"
#include "base/vec.h"

/* One set element: an address range and a second-dimension range (a port,
 * or an ICMPv6 type for the neighbour-discovery set), with a protocol where
 * the set has one. Inclusive ranges. */
struct ng_elem {
	struct ng_ip lo, hi;
	uint8_t proto; /* NG_PROTO_TCP/UDP, or 0 for sets without a protocol */
	uint16_t p_lo, p_hi;
	uint32_t timeout; /* seconds, 0 = no timeout */
	/* "resolve" mode: the name the address was resolved from (points into
	 * the config or annotations), kept in the element's comment so CHECK
	 * can ask whether the name still answers it. */
	const char *dns_name;
};

typedef NG_VEC(struct ng_elem) ng_elem_vec;
typedef NG_VEC(struct ng_ip) ng_ip_vec;

/* Index 0 is IPv4, 1 is IPv6. */
#define NG_FAM_IDX(fam) ((fam) == NG_V4 ? 0 : 1)

/* A DNS-name entry (allow entry or grant) whose addresses the agent learns
 * from the pod's own answers (egress.names "learn"). */
struct ng_name_entry {
	char name[NG_NAME_MAX + 1]; /* lowercase, no trailing dot; the suffix for a wildcard */
	bool wildcard;              /* `*.name`: one or more whole labels before it */
	uint8_t proto;
	uint16_t p_lo, p_hi;
};
typedef NG_VEC(struct ng_name_entry) ng_name_entry_vec;

#define NG_LOG_PREFIX_MAX 64

/* What the kernel says about the pod's link (kernel/peer.c reads it at ADD
 * and CHECK): the pod's MAC and link-local addresses, and the per-pod device
 * on the node's side, when there is one (a veth whose peer is the pod's
 * interface; macvlan, ipvlan and SR-IOV VFs have none). */
#define NG_LINK_LOCAL_MAX 8
struct ng_link_facts {
	uint8_t mac[6];
	bool have_mac;
	struct ng_ip link_local[NG_LINK_LOCAL_MAX];
	size_t n_link_local;
	char peer[16]; /* "": no per-pod host device */
	int peer_ifindex;
	int ifindex; /* the pod's interface, in the pod's namespace */
};

struct ng_policy {
	enum ng_deny_action deny;
	/* enforce.auditNamespaces: every refuse chain but cloud metadata's
	 * counts into a *_would_deny counter, logs "would_deny" and accepts;
	 * the table comment says "audit" (nft/render_objs.c). */
	bool audit;
	char comment[128]; /* table comment: who this table is for */
	char pod[128];     /* "namespace/name", for log prefixes */
	bool nflog;        /* log denied packets to NFLOG */
	uint16_t nflog_group;
	unsigned log_rate, log_burst;
	/* The packet-socket guard (rawPacketGuard): a netdev egress table on
	 * the pod's interface `ifname` mirroring the egress sets. */
	bool raw_guard;
	char ifname[16];
	ng_ip_vec metadata[2]; /* refused first */
	/* Every IPv6 form with free bits (policy/metadata.h) of every IPv4
	 * metadata address, free bits zero: refused as `ip6 daddr & mask`. */
	ng_ip_vec metadata6_embedded;
	ng_elem_vec dns[2];     /* addr . proto . 53 */
	ng_elem_vec allow[2];   /* egress.allow + grants (addresses), disjoint */
	ng_elem_vec names[2];   /* resolved names, with timeouts, disjoint */
	time_t names_at;        /* when they were resolved (wall clock), for expiry comments */
	ng_elem_vec nd6;        /* ip6 daddr . icmpv6 type, egress ND */
	ng_ip_vec mld6;         /* the groups an MLDv2 report may name (solicited-node, the pod's) */
	ng_elem_vec ingress[2]; /* saddr . dport (proto 0) */
	ng_ip_vec node[2];      /* gateways, when ingress.allowNode */
	ng_ip_vec pod4;         /* the pod's IPv4 addresses: the only ARP senders the guard lets out */
	/* The only source addresses the pod's packets may carry: its own
	 * (prevResult) and, once ng_policy_link has run, its link-local ones.
	 * `::` is allowed only for neighbour discovery and MLD (DAD). */
	ng_ip_vec source[2];
	/* The attachment (CNI_CONTAINERID, CNI_IFNAME) and network (conflist
	 * "name") the tables are for: recorded in them, so DEL and GC remove
	 * only their own. */
	char container_id[256];
	char network[256];
	/* The host-side table (hostMirror): in the node's namespace, on the
	 * ingress of `host_dev` (the pod link's peer), matching its ifindex
	 * and the pod's MAC. */
	bool host;
	char host_dev[16];
	int host_ifindex;
	uint8_t mac[6];
	char host_comment[128];
	/* What a name element may look like (proto and ports of every name
	 * entry), so CHECK can bound the dynamic name sets it cannot recompute. */
	ng_elem_vec name_ports;
	/* egress.names "learn": the name sets start empty and the agent fills
	 * them from the pod's DNS answers, which the table queues to it. */
	bool learn;
	uint32_t min_name_ttl;
	ng_name_entry_vec name_entries;
	/* The name entries' (proto, port range)s cut into disjoint pieces:
	 * each piece lies wholly inside or wholly outside every entry, so a
	 * learned address becomes one element per piece of its entry and two
	 * entries never add overlapping elements. Single ports go to the hash
	 * set names_vX, ranges to the interval set names_vX_ranges. */
	ng_elem_vec name_pieces;
	/* What the agent learned, carried into a rebuilt table ([ranged][family
	 * index]; e.timeout: the seconds each has left): a repair or re-plan of
	 * a running pod renders them into the learned sets in the same
	 * transaction as the tables, so no learned name is ever closed. Empty at
	 * ADD and in every CHECK (which does not compare learned contents). */
	ng_elem_vec learned[2][2];
	/* ... and what the node-side table had learned (only answers the node
	 * saw: agent/nodeseen.h), rendered into the host side's learned sets. */
	ng_elem_vec learned_node[2][2];
	/* dns.queries "listed" (policy/dnsquery.h): the pod may ask only for
	 * the names its name entries or dns_always (dns.alwaysAllowed: name
	 * and wildcard, no ports) match; a refused query is answered with
	 * refused_rcode. */
	bool queries_listed;
	uint8_t refused_rcode;
	ng_name_entry_vec dns_always;
};

/* The lifetime of a learned address: max(TTL, minNameTTL), capped at
 * NG_LEARN_TTL_CAP (or minNameTTL when that is larger): a resolver that
 * hands out week-long TTLs must not keep an address open for a week. */
#define NG_LEARN_TTL_CAP 86400
uint32_t ng_learn_lifetime(const struct ng_policy *p, uint32_t ttl);

/* (policy/learn.c) Is `ip` one of the metadata addresses the policy refuses (the same list
 * as the config checks), or any IPv6 form of an IPv4 one (free bits and
 * all: 6to4, Teredo, NAT64 local prefixes, ISATAP)? */
bool ng_policy_is_metadata(const struct ng_policy *p, const struct ng_ip *ip);

typedef NG_VEC(struct ng_resolved_name) ng_resolved;

/* Compiles the policy. `resolved` may be NULL (CHECK): the name sets are
 * then left empty, as their contents are time-dependent. Every name entry
 * must have an answer in `resolved` otherwise (code 11). */
int ng_policy_compile(const struct ng_config *cfg, const struct ng_annotations *ann,
		      const struct ng_prev *prev, const ng_resolved *resolved, const struct ng_podref *pod,
		      struct ng_policy *out, struct ng_err *err);

/* Adds what the kernel said about the pod's link: its link-local addresses
 * become allowed sources; with `host` (hostMirror in use), the host-side
 * table is planned on f->peer. 0, or -1 with err. */
int ng_policy_link(struct ng_policy *p, const struct ng_link_facts *f, bool host, struct ng_err *err);
void ng_policy_free(struct ng_policy *p);

/* Lists every distinct DNS name the policy needs (allow entries and
 * grants), for the resolver. Strings point into cfg/ann. */
typedef NG_VEC(const char *) ng_name_list;
int ng_policy_names(const struct ng_config *cfg, const struct ng_annotations *ann, ng_name_list *out);

void ng_resolved_free(ng_resolved *r);

#endif
